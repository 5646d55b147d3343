// Source-to-source transforms on a rendered module, done on its AST (the TypeScript parser and its scope
// manager), so they apply to any layout the renderer produced: consistent renaming, reordering of functions
// or methods, and deleting one function.
import { parseForESLint } from "@typescript-eslint/parser";
import type { TSESTree } from "@typescript-eslint/utils";
import { hasLockWord } from "../../src/core/model/settings.js";

type Node = TSESTree.Node;

function parse(code: string) {
  return parseForESLint(code, { range: true, loc: true, sourceType: "module", ecmaVersion: "latest" });
}

/** Every node's parent (the parser does not set `parent`; ESLint does that during its traversal). */
function parents(
  ast: TSESTree.Program,
  visitorKeys: Readonly<Record<string, readonly string[] | undefined>>,
): Map<Node, Node> {
  const out = new Map<Node, Node>();
  const visit = (node: Node): void => {
    for (const key of visitorKeys[node.type] ?? []) {
      const child = (node as unknown as Record<string, unknown>)[key];
      for (const c of Array.isArray(child) ? child : [child]) {
        if (c && typeof c === "object" && "type" in c) {
          out.set(c as Node, node);
          visit(c as Node);
        }
      }
    }
  };
  visit(ast);
  return out;
}

interface Edit {
  readonly range: readonly [number, number];
  readonly text: string;
}

function applyEdits(code: string, edits: readonly Edit[]): string {
  const unique = new Map<string, Edit>();
  for (const e of edits) unique.set(`${e.range[0]}:${e.range[1]}`, e);
  let out = code;
  for (const e of [...unique.values()].sort((a, b) => b.range[0] - a.range[0])) {
    out = out.slice(0, e.range[0]) + e.text + out.slice(e.range[1]);
  }
  return out;
}

/**
 * Names the plugin reads as signals, which a rename must keep: lock words and verbs (`lockKey`, `acquire`,
 * `releaseLock` make an NX key a lock) and marker words (`idempotencyKey`, `cacheKey` make it not one), as
 * `src/core/facts/kv-pairing/keys.ts` documents. Renaming them changes what the code says, not how it is written.
 */
const MARKER_WORDS = /idempot|dedup|cache|rate|throttle|limit|seen|session|counter|visited|debounce|nonce/i;
export function isSignalName(name: string): boolean {
  return hasLockWord(name, true) || MARKER_WORDS.test(name);
}

/** Names the renamer chooses from (with a number appended): none is a signal, a store word or a model name. */
export const NEUTRAL_WORDS = [
  "alpha",
  "bravo",
  "delta",
  "kilo",
  "oscar",
  "tango",
  "zulu",
  "quill",
  "fern",
  "moss",
  "v",
  "q",
  "z",
] as const;

export interface Renamed {
  readonly code: string;
  /** New name → original name, for mapping findings back. */
  readonly back: ReadonlyMap<string, string>;
}

/**
 * Renames every binding the module declares (functions, classes, enums, parameters, locals, callback parameters,
 * and the methods of its classes with their `this.m` uses), consistently, except imports, enum members,
 * constructor-injected fields (`private readonly prisma`) and signal names. `pick(i)` gives the i-th fresh name's stem.
 */
export function renameIdentifiers(code: string, pick: (i: number) => string): Renamed {
  const { ast, scopeManager, visitorKeys } = parse(code);
  const parent = parents(ast as TSESTree.Program, visitorKeys);
  const taken = new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? []);
  const fresh = new Map<string, string>();
  const back = new Map<string, string>();
  let counter = 0;
  const freshName = (old: string): string => {
    let name = fresh.get(old);
    if (name) return name;
    do name = `${pick(counter)}${++counter}`;
    while (taken.has(name) || isSignalName(name));
    taken.add(name);
    fresh.set(old, name);
    back.set(name, old);
    return name;
  };
  const edits: Edit[] = [];
  const renameAt = (id: TSESTree.Identifier, to: string): void => {
    const p = parent.get(id);
    // `{ id }` (a shorthand property or pattern) keeps its key: `{ id: alpha1 }`.
    const shorthand =
      p?.type === "Property" &&
      p.shorthand &&
      (p.value === id || (p.value.type === "AssignmentPattern" && p.value.left === id));
    // A parameter's range covers its type annotation (`id: string`): replace the name only.
    const start = id.range[0];
    const end = id.range[0] + id.name.length;
    edits.push({ range: [start, end], text: shorthand ? `${id.name}: ${to}` : to });
  };

  for (const scope of scopeManager!.scopes) {
    for (const variable of scope.variables) {
      if (variable.defs.length === 0 || isSignalName(variable.name)) continue;
      // Enum members are read as properties (`Status.Running`), which the scope manager does not link to them.
      if (
        variable.defs.some(
          (d) =>
            d.type === "ImportBinding" ||
            d.type === "TSEnumMemberName" ||
            parent.get(d.name as Node)?.type === "TSParameterProperty",
        )
      )
        continue;
      const to = freshName(variable.name);
      for (const id of variable.identifiers) renameAt(id as TSESTree.Identifier, to);
      for (const ref of variable.references) renameAt(ref.identifier as TSESTree.Identifier, to);
    }
  }

  // Methods: the key of each method definition and every non-computed `this.m` in its class.
  for (const [node] of parent) {
    if (node.type !== "ClassBody") continue;
    const methods = new Set<string>();
    for (const member of node.body) {
      if (
        member.type === "MethodDefinition" &&
        member.kind === "method" &&
        !member.computed &&
        member.key.type === "Identifier" &&
        !isSignalName(member.key.name)
      ) {
        methods.add(member.key.name);
        edits.push({ range: member.key.range, text: freshName(member.key.name) });
      }
    }
    const visit = (n: Node): void => {
      if (
        n.type === "MemberExpression" &&
        !n.computed &&
        n.object.type === "ThisExpression" &&
        n.property.type === "Identifier" &&
        methods.has(n.property.name)
      ) {
        edits.push({ range: n.property.range, text: freshName(n.property.name) });
      }
      for (const key of visitorKeys[n.type] ?? []) {
        const child = (n as unknown as Record<string, unknown>)[key];
        for (const c of Array.isArray(child) ? child : [child])
          if (c && typeof c === "object" && "type" in c) visit(c as Node);
      }
    };
    visit(node);
  }
  return { code: applyEdits(code, edits), back };
}

/**
 * The module's functions as reorderable slots: top-level functions (declared or `const f = () => …`), each class's
 * methods, or the methods of an exported object.
 */
function arrowConst(node: Node): TSESTree.VariableDeclarator | undefined {
  const decl = node.type === "ExportNamedDeclaration" ? node.declaration : node;
  if (decl?.type !== "VariableDeclaration" || decl.declarations.length !== 1) return undefined;
  const d = decl.declarations[0]!;
  return d.init?.type === "ArrowFunctionExpression" || d.init?.type === "FunctionExpression" ? d : undefined;
}

function functionSlots(ast: TSESTree.Program): Node[][] {
  const groups: Node[][] = [];
  const top = ast.body.filter(
    (s) =>
      s.type === "FunctionDeclaration" ||
      (s.type === "ExportNamedDeclaration" && s.declaration?.type === "FunctionDeclaration") ||
      arrowConst(s),
  );
  if (top.length > 0) groups.push(top);
  for (const s of ast.body) {
    const cls =
      s.type === "ClassDeclaration"
        ? s
        : s.type === "ExportNamedDeclaration" && s.declaration?.type === "ClassDeclaration"
          ? s.declaration
          : undefined;
    if (cls) groups.push(cls.body.body.filter((m) => m.type === "MethodDefinition" && m.kind === "method"));
    // `export const service = { async claim() {…}, … }`
    const init = arrowConst(s) ? undefined : objectConst(s);
    if (init) groups.push(init.properties.filter((p) => p.type === "Property" && p.method));
  }
  return groups;
}

function objectConst(node: Node): TSESTree.ObjectExpression | undefined {
  const decl = node.type === "ExportNamedDeclaration" ? node.declaration : node;
  if (decl?.type !== "VariableDeclaration" || decl.declarations.length !== 1) return undefined;
  const init = decl.declarations[0]!.init;
  return init?.type === "ObjectExpression" ? init : undefined;
}

/** Reorders the functions (or methods) of the module: slot i gets the function at `order(n)[i]`. */
export function reorderFunctions(code: string, order: (n: number) => readonly number[]): string {
  const { ast } = parse(code);
  const edits: Edit[] = [];
  for (const slots of functionSlots(ast as TSESTree.Program)) {
    const permutation = order(slots.length);
    slots.forEach((slot, i) => {
      const source = slots[permutation[i]!]!;
      edits.push({ range: slot.range, text: code.slice(source.range[0], source.range[1]) });
    });
  }
  return applyEdits(code, edits);
}

function declaredName(node: Node): string | undefined {
  if (node.type === "ExportNamedDeclaration" && node.declaration?.type === "FunctionDeclaration")
    return node.declaration.id?.name;
  if (node.type === "FunctionDeclaration") return node.id?.name;
  if ((node.type === "MethodDefinition" || node.type === "Property") && node.key.type === "Identifier")
    return node.key.name;
  const arrow = arrowConst(node);
  if (arrow?.id.type === "Identifier") return arrow.id.name;
  return undefined;
}

/** Deletes the function or method called `name`; throws if there is none. */
export function removeFunction(code: string, name: string): string {
  const { ast } = parse(code);
  for (const slots of functionSlots(ast as TSESTree.Program)) {
    const node = slots.find((s) => declaredName(s) === name);
    // An object's method takes its comma with it.
    if (node)
      return applyEdits(code, [
        {
          range: [node.range[0], node.range[1] + (node.type === "Property" && code[node.range[1]] === "," ? 1 : 0)],
          text: "",
        },
      ]);
  }
  throw new Error(`no function ${name} in:\n${code}`);
}
