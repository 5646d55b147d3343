/**
 * MongoDB: query filters as a `Condition` (the query operators as an object-filter dialect, `$expr` comparisons of a
 * field path with a value) and the `_id` filter of the by-id methods.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { CompareOp, Condition, Node, StaticValue } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { SWAPPED } from "../../core/model/conditions.js";
import { readObjectFilter, type ObjectFilterDialect } from "../../core/reading/object-filters.js";
import { evaluate, keyName, objectLiteral, unwrap, arrayLiteral } from "../../core/reading/values.js";
import { RANGE_OPS, type SourceCode, objectOf } from "./vocabulary.js";

function isRegex(node: Node): boolean {
  const n = unwrap(node);
  return (
    (n.type === "Literal" && "regex" in n) ||
    (n.type === "NewExpression" && n.callee.type === "Identifier" && n.callee.name === "RegExp")
  );
}

export function pred(field: string, op: CompareOp, values: readonly StaticValue[] | undefined, node: Node): Condition {
  return { kind: "pred", field, op, values, node };
}

function single(ctx: RecognizerContext, field: string, op: CompareOp, value: Node, at: Node): Condition {
  if (isRegex(value)) return pred(field, "other", undefined, at);
  const v = evaluate(ctx.sourceCode, value);
  return pred(field, op, v ? [v] : undefined, at);
}

/** One field's filter: a value (`status: "queued"`), or an operator document (`{ $ne: "processing" }`, `{ $lt: cutoff }`). */
/**
 * MongoDB's query operators: a field's value (`status: "queued"`), or an operator document (`{ $ne: "processing" }`,
 * `{ $lt: cutoff }`, `{ $exists: false }`, which matches documents without the field, as `null` does). An embedded
 * document compared whole (`lease: { owner, until }`) is a match not read; so is any `$` operator the table does not
 * list (`$regex`, `$elemMatch`, `$size`). Filter-level `$` keys other than `$and`/`$or`/`$nor` are not read
 * (`$where`, `$text`, `$jsonSchema`), but for `$expr`.
 */
const MONGO_FILTERS: ObjectFilterDialect = {
  combinators: { $and: "and", $or: "or", $nor: "nor" },
  operators: {
    $eq: "eq",
    $ne: "ne",
    $in: "in",
    $nin: "notIn",
    ...RANGE_OPS,
    $not: "not",
    $exists: "exists",
    $options: "skip",
  },
  reserved: (key) => key.startsWith("$"),
  ignored: new Set(["$comment"]),
  special: { $expr: (sourceCode, value, at) => parseExpr(sourceCode, value, at) },
  computed: isRegex,
  nested: "other",
  mixed: "other",
  bare: "eq",
  objectOperand: "one",
};

export function parseFilter(ctx: RecognizerContext, filter: TSESTree.ObjectExpression): Condition {
  return readObjectFilter(ctx.sourceCode, MONGO_FILTERS, filter);
}

const EXPR_OPS: Record<string, CompareOp> = { ...RANGE_OPS, $eq: "eq", $ne: "ne" };

/**
 * An aggregation expression in a filter's `$expr`: a comparison of a field path with a value
 * (`{ $lt: ["$keepAlive", { $subtract: [now, ttl] }] }`, either side), and `$and`/`$or` of such. The value is read
 * when it is static; a computed one (an age threshold) leaves it unknown, which is enough to judge age. Anything
 * else is opaque.
 */
function parseExpr(sourceCode: SourceCode, node: Node, at: Node, depth = 0): Condition {
  const obj = objectLiteral(sourceCode, node);
  const only = obj?.properties.length === 1 ? obj.properties[0] : undefined;
  if (depth > 4 || only?.type !== "Property") return { kind: "opaque", node };
  const op = keyName(only.key, only.computed);
  const args = arrayLiteral(sourceCode, only.value)?.elements ?? [];
  if ((op === "$and" || op === "$or") && args.length > 0) {
    const items = args.map((a): Condition =>
      a && a.type !== "SpreadElement" ? parseExpr(sourceCode, a, at, depth + 1) : { kind: "opaque", node },
    );
    return { kind: op === "$and" ? "and" : "or", items };
  }
  const compare = op ? EXPR_OPS[op] : undefined;
  const [a, b] = args;
  if (!compare || args.length !== 2 || !a || !b || a.type === "SpreadElement" || b.type === "SpreadElement")
    return { kind: "opaque", node };
  const path = (n: Node) => {
    const v = unwrap(n);
    return v.type === "Literal" && typeof v.value === "string" && /^\$[^$]/.test(v.value)
      ? v.value.slice(1)
      : undefined;
  };
  const [field, value, cmp] =
    path(a) !== undefined ? [path(a)!, b, compare] : path(b) !== undefined ? [path(b)!, a, SWAPPED[compare]] : [];
  if (field === undefined || path(value!) !== undefined) return { kind: "opaque", node };
  const v = evaluate(sourceCode, value!);
  return pred(field, cmp!, v ? [v] : undefined, at);
}

/** A filter argument: an object we can read, or opaque (a variable, a helper's result). */
export function filterOf(ctx: RecognizerContext, node: Node): Condition {
  const obj = objectOf(ctx, node);
  return obj ? parseFilter(ctx, obj) : { kind: "opaque", node };
}

/** `findById(id)`: a filter on `_id`. */
export function idFilter(ctx: RecognizerContext, node: Node): Condition {
  return { kind: "and", items: [single(ctx, "_id", "eq", node, node)] };
}
