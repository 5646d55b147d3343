/** Text edits the recognizers offer for suggestions, shared so every store writes them the same way. */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, TextEdit } from "../model/accesses.js";
import { walk } from "./walk.js";

/** `text` (a `key: value` property) added as the last property of an object literal, keeping its comma style. */
export function appendProperty(
  sourceCode: Readonly<TSESLint.SourceCode>,
  object: TSESTree.ObjectExpression,
  text: string,
): TextEdit {
  const last = object.properties[object.properties.length - 1];
  if (!last) return { range: [object.range[0] + 1, object.range[1] - 1], text: ` ${text} ` };
  const after = sourceCode.getTokenAfter(last);
  if (after && after.value === ",") return { range: [after.range[1], after.range[1]], text: ` ${text},` };
  return { range: [last.range[1], last.range[1]], text: `, ${text}` };
}

/** The first node under `node` (itself included) that `test` accepts, depth first. */
export function findBelow(node: Node, test: (n: Node) => boolean): Node | undefined {
  let found: Node | undefined;
  walk(node, (n) => {
    if (found) return false;
    if (test(n)) found = n;
    return found === undefined;
  });
  return found;
}

/** The source text under `node` that names `value`: a literal of it, or a member named by it (`Status.QUEUED`). */
export function valueText(sourceCode: Readonly<TSESLint.SourceCode>, node: Node, value: unknown): string | undefined {
  if (typeof value !== "string" && typeof value !== "boolean") return undefined;
  const found = findBelow(
    node,
    (n) =>
      (n.type === "Literal" && n.value === value) ||
      (n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier" && n.property.name === value),
  );
  return found && sourceCode.getText(found);
}

/** The instant a sweep compares with, as JS: `threshold` milliseconds ago, or now. */
export function jsCutoff(threshold: string | undefined): string {
  return threshold ? `new Date(Date.now() - ${threshold})` : "new Date()";
}

/** A name the module's text does not hold yet (so it binds nothing already): `name`, else `name2`, `name3`… */
export function freeName(sourceCode: Readonly<TSESLint.SourceCode>, name: string): string {
  if (!sourceCode.text.includes(name)) return name;
  for (let i = 2; ; i++) if (!sourceCode.text.includes(`${name}${i}`)) return `${name}${i}`;
}

/** A field name as an object key: bare when it is an identifier, quoted otherwise. */
export function propertyKey(field: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(field) ? field : JSON.stringify(field);
}

/**
 * How this module names `names` exported by one of `modules` (`LessThan` from "typeorm"), for a suggestion that uses
 * them: its own bindings (an import, a namespace, a `require`), else ones an added import gives: specifiers added to
 * the module's value import of that package, or a new import after the last one. Undefined in a CommonJS module
 * without them, and where a name to add is already used for something else.
 */
export function importedNames(
  sourceCode: Readonly<TSESLint.SourceCode>,
  modules: readonly string[],
  names: readonly string[],
): { refs: Map<string, string>; edits: TextEdit[] } | undefined {
  const body = sourceCode.ast.body;
  const from = (source: unknown) => typeof source === "string" && modules.includes(source);
  const refs = new Map<string, string>();
  let named: TSESTree.ImportDeclaration | undefined;
  let namespace: string | undefined;
  for (const stmt of body) {
    if (stmt.type === "ImportDeclaration" && from(stmt.source.value) && stmt.importKind !== "type") {
      for (const s of stmt.specifiers) {
        if (s.type === "ImportNamespaceSpecifier") namespace ??= s.local.name;
        const imported =
          s.type === "ImportSpecifier" && s.importKind !== "type"
            ? s.imported.type === "Identifier"
              ? s.imported.name
              : s.imported.value
            : undefined;
        if (imported !== undefined && names.includes(imported) && !refs.has(imported)) refs.set(imported, s.local.name);
      }
      if (stmt.specifiers.some((s) => s.type === "ImportSpecifier")) named ??= stmt;
    }
    if (stmt.type !== "VariableDeclaration") continue;
    for (const d of stmt.declarations) {
      const init = d.init;
      const required =
        init?.type === "CallExpression" &&
        init.callee.type === "Identifier" &&
        init.callee.name === "require" &&
        init.arguments[0]?.type === "Literal" &&
        from(init.arguments[0].value);
      if (!required) continue;
      if (d.id.type === "Identifier") namespace ??= d.id.name;
      if (d.id.type !== "ObjectPattern") continue;
      for (const p of d.id.properties) {
        if (
          p.type === "Property" &&
          !p.computed &&
          p.key.type === "Identifier" &&
          names.includes(p.key.name) &&
          p.value.type === "Identifier" &&
          !refs.has(p.key.name)
        )
          refs.set(p.key.name, p.value.name);
      }
    }
  }
  const missing = names.filter((n) => !refs.has(n));
  if (namespace) for (const n of missing) refs.set(n, `${namespace}.${n}`);
  if (namespace || missing.length === 0) return { refs, edits: [] };
  if (missing.some((n) => bound(sourceCode, n))) return undefined;
  for (const n of missing) refs.set(n, n);
  if (named) {
    const last = named.specifiers[named.specifiers.length - 1]!;
    return { refs, edits: [{ range: [last.range[1], last.range[1]], text: missing.map((n) => `, ${n}`).join("") }] };
  }
  const imports = body.filter((s) => s.type === "ImportDeclaration");
  const lastImport = imports[imports.length - 1];
  if (!lastImport) return undefined;
  return {
    refs,
    edits: [
      {
        range: [lastImport.range[1], lastImport.range[1]],
        text: `\nimport { ${missing.join(", ")} } from ${JSON.stringify(modules[0])};`,
      },
    ],
  };
}

/** `importedNames` for one name: its reference, and the edits that bring it in. */
export function importedName(
  sourceCode: Readonly<TSESLint.SourceCode>,
  modules: readonly string[],
  name: string,
): { ref: string; edits: TextEdit[] } | undefined {
  const found = importedNames(sourceCode, modules, [name]);
  return found && { ref: found.refs.get(name)!, edits: found.edits };
}

/** `name` is declared in some scope of the module, or read from the global scope: adding a binding of it would clash. */
function bound(sourceCode: Readonly<TSESLint.SourceCode>, name: string): boolean {
  const manager = sourceCode.scopeManager;
  if (!manager) return true;
  return manager.scopes.some((scope) => scope.set.has(name) || scope.through.some((r) => r.identifier.name === name));
}
