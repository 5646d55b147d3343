/**
 * What a module exports, read from its top-level statements (ESM and CommonJS): the names an importer reaches each
 * function by. The summaries stage hands exported helpers on with these names; the facts read which functions are
 * a module's API (a repository module's exported claim and the exported writes that end it).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/model.js";
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
    if (d.type === "VariableDeclaration") for (const v of d.declarations) if (v.id.type === "Identifier") add(v.id.name, as ?? v.id.name);
    if (d.type === "Identifier") add(d.name, as ?? d.name);
  };
  for (const s of program.body) {
    if (s.type === "ExportNamedDeclaration") {
      declared(s.declaration);
      if (!s.source) for (const sp of s.specifiers) if (sp.local.type === "Identifier") add(sp.local.name, keyName(sp.exported, false) ?? sp.local.name);
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
            if (p.type === "Property" && unwrap(p.value as Node).type === "Identifier") add((unwrap(p.value as Node) as TSESTree.Identifier).name, keyName(p.key, p.computed) ?? "");
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
  if ((p?.type === "MethodDefinition" || p?.type === "PropertyDefinition") && p.parent.parent.type === "ClassDeclaration") {
    const cls = p.parent.parent.id?.name;
    const names = cls ? exports.get(cls) ?? [] : [];
    return names.map((n) => `${n}${p.static ? "." : "#"}${own}`);
  }
  // `export const locks = { acquire() {} }`
  if (p?.type === "Property" && p.parent.type === "ObjectExpression" && p.parent.parent.type === "VariableDeclarator" &&
    p.parent.parent.id.type === "Identifier") {
    return (exports.get(p.parent.parent.id.name) ?? []).map((n) => `${n}.${own}`);
  }
  // exports.acquire = async () => … / module.exports.acquire = function () { … }
  if (p?.type === "AssignmentExpression" && p.right === fn && commonJsExportName(p.left) !== undefined) return [own];
  // module.exports = { acquire() {} } / module.exports = { acquire: async () => … }
  if (p?.type === "Property" && p.parent.type === "ObjectExpression" && p.parent.parent.type === "AssignmentExpression" &&
    p.parent.parent.left.type === "MemberExpression" && memberText(p.parent.parent.left) === "module.exports") {
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
