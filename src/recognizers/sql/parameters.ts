/**
 * Raw SQL: a statement's parameters as the call passes them (`[a, b]`, `{ bind }`, `{ replacements }`, an object of
 * named values) and the value each stands for.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import type { ParamValue } from "../../core/languages/sql/values.js";
import { evaluate, findProperty, getConstInit, objectLiteral, unwrap } from "../../core/reading/values.js";
import { isClockReading } from "../../core/reading/clock.js";

export interface Params {
  /** `$1`…`$n` and positional `?`, in order. */
  readonly positional?: readonly (Node | undefined)[];
  /** The array literal written in the call that holds them (`query(text, [id, worker])`): a suggestion may add one. */
  readonly inlineArray?: TSESTree.ArrayExpression;
  /** `:name` (knex named bindings, Sequelize replacements). */
  readonly named?: TSESTree.ObjectExpression;
}

export const constObject = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

/** The value of an object literal's property `name`. */
export const property = (object: TSESTree.ObjectExpression, name: string): Node | undefined =>
  findProperty(object, name)?.value;

export function paramList(ctx: RecognizerContext, node: Node | undefined): (Node | undefined)[] | undefined {
  if (!node) return undefined;
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, n);
    if (!init) return undefined;
    n = unwrap(init);
  }
  if (n.type !== "ArrayExpression") return undefined;
  const out: (Node | undefined)[] = [];
  for (const el of n.elements) {
    if (el?.type === "SpreadElement") break;
    out.push(el ?? undefined);
  }
  return out;
}

/** `[a, b]`, `{ bind: [...] }`, `{ replacements: [...] | {...} }`, `{ k: v }` for named bindings. */
export function paramsFrom(ctx: RecognizerContext, node: Node | undefined): Params {
  const positional = paramList(ctx, node);
  if (positional) return { positional, ...inlineArray(node) };
  const object = constObject(ctx, node);
  if (!object) return {};
  for (const key of ["bind", "replacements", "values"]) {
    const value = property(object, key);
    if (!value) continue;
    const list = paramList(ctx, value);
    if (list) return { positional: list };
    const named = constObject(ctx, value);
    return named ? { named } : {};
  }
  return { named: object };
}

/** `{ inlineArray }` where `node` is an array literal written in place (not a `const` other statements may share). */
export function inlineArray(node: Node | undefined): Pick<Params, "inlineArray"> {
  const n = node && unwrap(node);
  return n?.type === "ArrayExpression" ? { inlineArray: n } : {};
}

export function paramValue(ctx: RecognizerContext, node: Node | undefined): ParamValue | undefined {
  if (!node) return undefined;
  if (isClockReading(node)) return { now: true, node };
  const value = evaluate(ctx.sourceCode, node);
  return value ? { value, node } : { node };
}
