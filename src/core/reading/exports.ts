/**
 * What a module exports, read from its top-level statements (ESM and CommonJS): the names an importer reaches each
 * function by. The summaries stage hands exported helpers on with these names; the facts read which functions are
 * a module's API (a repository module's exported claim and the exported writes that end it).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { commonJsExportName, functionName, isFunction } from "./units.js";
import { keyName, unwrap } from "./values.js";

type Fn = TSESTree.FunctionLike;

/** Export names of the module's top-level declarations: `local -> exported` (ESM and CommonJS). */
export function exportNames(program: TSESTree.Program): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (local: string, exported: string) => out.set(local, [...(out.get(local) ?? []), exported]);
  const declared = (d: Node | null | undefined, as?: string) => {
    if (!d) return;
    if ((d.type === "FunctionDeclaration" || d.type === "ClassDeclaration") && d.id) add(d.id.name, as ?? d.id.name);
    if (d.type === "VariableDeclaration")
      for (const v of d.declarations) if (v.id.type === "Identifier") add(v.id.name, as ?? v.id.name);
    if (d.type === "Identifier") add(d.name, as ?? d.name);
  };
  for (const s of program.body) {
    if (s.type === "ExportNamedDeclaration") {
      declared(s.declaration);
      if (!s.source)
        for (const sp of s.specifiers)
          if (sp.local.type === "Identifier") add(sp.local.name, keyName(sp.exported, false) ?? sp.local.name);
    }
    if (s.type === "ExportDefaultDeclaration") declared(s.declaration as Node, "default");
    // module.exports = { a, b } / module.exports = X / exports.a = a / module.exports.a = a
    if (s.type === "ExpressionStatement" && s.expression.type === "AssignmentExpression") {
      const { left, right } = s.expression;
      const text = left.type === "MemberExpression" ? memberText(left) : undefined;
      if (text === "module.exports") {
        const r = unwrap(right);
        if (r.type === "ObjectExpression") {
          for (const p of r.properties) {
            if (p.type === "Property" && unwrap(p.value as Node).type === "Identifier")
              add((unwrap(p.value as Node) as TSESTree.Identifier).name, keyName(p.key, p.computed) ?? "");
          }
        } else declared(r, "default");
      } else if (text && /^(module\.)?exports\.[\w$]+$/.test(text) && unwrap(right).type === "Identifier") {
        add((unwrap(right) as TSESTree.Identifier).name, text.replace(/^(module\.)?exports\./, ""));
      } else if (isFunction(unwrap(right))) {
        // exports.clearLease = async (id) => …: the function is known by that name in the module too (functionName).
        const name = commonJsExportName(left);
        if (name !== undefined) add(name, name);
      }
    }
  }
  return out;
}

export function memberText(m: TSESTree.MemberExpression): string | undefined {
  const o = unwrap(m.object);
  const base = o.type === "Identifier" ? o.name : o.type === "MemberExpression" ? memberText(o) : undefined;
  const name = keyName(m.property, m.computed);
  return base && name ? `${base}.${name}` : undefined;
}

/** The names an importer reaches a function by: `fn`, `Class.m`, `Class#m`, `obj.m`, each under every export name. */
export function reachNames(fn: Fn, exports: Map<string, string[]>): string[] {
  const own = functionName(fn);
  if (own === undefined) return [];
  const p = fn.parent;
  if (fn.type === "FunctionDeclaration" || p?.type === "VariableDeclarator") return exports.get(own) ?? [];
  if (
    (p?.type === "MethodDefinition" || p?.type === "PropertyDefinition") &&
    p.parent.parent.type === "ClassDeclaration"
  ) {
    const cls = p.parent.parent.id?.name;
    const names = cls ? (exports.get(cls) ?? []) : [];
    return names.map((n) => `${n}${p.static ? "." : "#"}${own}`);
  }
  // `export const locks = { acquire() {} }`
  if (
    p?.type === "Property" &&
    p.parent.type === "ObjectExpression" &&
    p.parent.parent.type === "VariableDeclarator" &&
    p.parent.parent.id.type === "Identifier"
  ) {
    return (exports.get(p.parent.parent.id.name) ?? []).map((n) => `${n}.${own}`);
  }
  // exports.acquire = async () => … / module.exports.acquire = function () { … }
  if (p?.type === "AssignmentExpression" && p.right === fn && commonJsExportName(p.left) !== undefined) return [own];
  // module.exports = { acquire() {} } / module.exports = { acquire: async () => … }
  if (
    p?.type === "Property" &&
    p.parent.type === "ObjectExpression" &&
    p.parent.parent.type === "AssignmentExpression" &&
    p.parent.parent.left.type === "MemberExpression" &&
    memberText(p.parent.parent.left) === "module.exports"
  ) {
    return [own];
  }
  return [];
}

const exportsByProgram = new WeakMap<TSESTree.Program, Map<string, string[]>>();

/** Whether an importer can reach `fn` (an exported function, or a method of an exported class or object). */
export function isExported(program: TSESTree.Program, fn: Fn): boolean {
  let exports = exportsByProgram.get(program);
  if (!exports) {
    exports = exportNames(program);
    exportsByProgram.set(program, exports);
  }
  return exports.size > 0 && reachNames(fn, exports).length > 0;
}

/**
 * Exports that hold a module-level binding rather than declare a function: `export { locks }` of an imported
 * `locks`, a class's static field (`export class db { static locks = locks }`) or an exported object's property
 * (`export const db = { locks, users }`). Each is `{ path, local }`: an importer reaching `db.locks.acquire` reaches
 * `local.acquire`. The audit keeps those whose local is an import binding, so an aggregate re-exports its helpers.
 */
export function heldBindings(program: TSESTree.Program): { path: string; local: string }[] {
  const exports = exportNames(program);
  if (exports.size === 0) return [];
  const out: { path: string; local: string }[] = [];
  const declared = new Set<string>();
  const holding = (name: string, members: readonly { key: string; value: string }[]) => {
    for (const e of exports.get(name) ?? [])
      for (const m of members) out.push({ path: `${e}.${m.key}`, local: m.value });
  };
  const objectMembers = (o: TSESTree.ObjectExpression) =>
    o.properties.flatMap((p) => {
      if (p.type !== "Property" || p.kind !== "init") return [];
      const key = keyName(p.key, p.computed);
      const value = unwrap(p.value as Node);
      return key !== undefined && value.type === "Identifier" ? [{ key, value: value.name }] : [];
    });
  const classMembers = (c: TSESTree.ClassDeclaration | TSESTree.ClassExpression) =>
    c.body.body.flatMap((m) => {
      if (m.type !== "PropertyDefinition" || !m.static || !m.value) return [];
      const key = keyName(m.key, m.computed);
      const value = unwrap(m.value);
      return key !== undefined && value.type === "Identifier" ? [{ key, value: value.name }] : [];
    });
  const statements = program.body.map((s) =>
    (s.type === "ExportNamedDeclaration" || s.type === "ExportDefaultDeclaration") && s.declaration
      ? (s.declaration as Node)
      : s,
  );
  for (const s of statements) {
    if (s.type === "ClassDeclaration" && s.id) {
      declared.add(s.id.name);
      holding(s.id.name, classMembers(s));
    } else if (s.type === "FunctionDeclaration" && s.id) declared.add(s.id.name);
    else if (s.type === "VariableDeclaration") {
      for (const d of s.declarations) {
        if (d.id.type !== "Identifier") continue;
        declared.add(d.id.name);
        const init = d.init && unwrap(d.init);
        if (init?.type === "ObjectExpression") holding(d.id.name, objectMembers(init));
        else if (init?.type === "ClassExpression") holding(d.id.name, classMembers(init));
      }
    }
  }
  // `export default { locks }` / `export default class { static locks = locks }`
  for (const s of program.body) {
    if (s.type !== "ExportDefaultDeclaration") continue;
    const d = unwrap(s.declaration as Node);
    const members =
      d.type === "ObjectExpression"
        ? objectMembers(d)
        : (d.type === "ClassDeclaration" && !d.id) || d.type === "ClassExpression"
          ? classMembers(d)
          : [];
    for (const m of members) out.push({ path: `default.${m.key}`, local: m.value });
  }
  // `export { locks }`, `export { locks as lockHelpers }`, `module.exports = { locks }` of a binding not declared here.
  for (const [local, names] of exports) if (!declared.has(local)) for (const e of names) out.push({ path: e, local });
  return out;
}
