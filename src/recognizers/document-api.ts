/**
 * What the document APIs of the CMS frameworks (Payload's Local API, Strapi's services) share: a field compared
 * with a value read statically, the values a `data` object stores (dates sent as ISO strings are the clock), and
 * the `data` object itself. Their filters are object-filter dialects (src/core/reading/object-filters.ts).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, AssignedValue, Node } from "../core/model/accesses.js";
import type { RecognizerContext } from "./recognizer.js";
import { evaluate, keyName, objectLiteral, readsClock, unwrap } from "../core/reading/values.js";

/** What a `data` property stores: the clock (`new Date()`, also `new Date().toISOString()`), a static value, or other. */
export function storedValue(ctx: RecognizerContext, node: Node): AssignedValue {
  let n = unwrap(node);
  if (
    n.type === "CallExpression" &&
    n.callee.type === "MemberExpression" &&
    keyName(n.callee.property, n.callee.computed) === "toISOString"
  ) {
    n = unwrap(n.callee.object);
  }
  if (readsClock(ctx.sourceCode, n)) return { kind: "now" };
  const v = evaluate(ctx.sourceCode, n);
  return v ? { kind: "static", value: v } : { kind: "other" };
}

/** The assignments of a `data` object the file spells out; undefined when it is not one. */
export function dataAssignments(ctx: RecognizerContext, node: Node | undefined): Assignment[] | undefined {
  const obj: TSESTree.ObjectExpression | undefined = objectLiteral(ctx.sourceCode, node);
  if (!obj) return undefined;
  const out: Assignment[] = [];
  for (const p of obj.properties) {
    const field = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
    if (p.type === "Property" && field)
      out.push({ field, value: storedValue(ctx, p.value), node: p, valueNode: p.value });
  }
  return out;
}
