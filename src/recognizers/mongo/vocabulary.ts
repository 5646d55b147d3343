/**
 * MongoDB: the store's words (the driver's and Mongoose's method names, query-chain links, option keys, operators)
 * and the small readers of arguments every part uses.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { CompareOp, Condition, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { evaluate, keyName, objectLiteral } from "../../core/reading/values.js";

export const STORE = "mongo";
export const UPDATE_METHODS = new Set(["updateOne", "updateMany", "findOneAndUpdate", "findByIdAndUpdate"]);
/** `collection.update(selector, modifier)`: the legacy driver (2.x) and Meteor collections. */
export const LEGACY_UPDATES = ["update"];
/**
 * `findAndModify`: the shell's and the 1.x/2.x driver's find-and-update, in its options form
 * (`findAndModify({ query, sort, update, new })`, a delete with `remove: true`) or positionally
 * (`findAndModify(query, sort, update, options, callback)`).
 */
export const FIND_AND_MODIFY = "findAndModify";
export const DELETE_METHODS = new Set(["deleteOne", "deleteMany", "findOneAndDelete", "findByIdAndDelete"]);
export const READ_METHODS = new Set(["findOne", "find", "findById", "countDocuments"]);
export const INSERT_METHODS = new Set(["insertOne", "create"]);
/** Methods whose first argument is an id, not a filter. */
export const BY_ID = new Set(["findByIdAndUpdate", "findByIdAndDelete", "findById"]);
/** Query-chain links that return the same query (`Job.findOne(f).lean().exec()`). */
export const CHAIN_LINKS = new Set([
  "exec",
  "lean",
  "session",
  "select",
  "sort",
  "limit",
  "skip",
  "populate",
  "orFail",
  "hint",
  "read",
  "setOptions",
]);
/** Keys of an ORM options bag that is no Mongo filter or document. */
const FOREIGN_KEYS = new Set(["where"]);
const PRISMA_CREATE_KEYS = new Set(["data", "select", "include", "omit"]);
export const SAVE_OPTIONS = new Set([
  "session",
  "validateBeforeSave",
  "validateModifiedOnly",
  "timestamps",
  "safe",
  "w",
  "j",
  "wtimeout",
  "checkKeys",
  "pathsToSave",
]);
/** Built-ins with a `create` of their own (`Object.create(proto)`). */
export const BUILTINS = new Set([
  "Object",
  "Reflect",
  "Promise",
  "Array",
  "Symbol",
  "Map",
  "Set",
  "WeakMap",
  "Proxy",
  "Error",
  "Date",
  "JSON",
  "Math",
  "Intl",
]);
export const RECEIVER_SUFFIX = /(?:Model|Collection|Coll)$/;
export const RANGE_OPS: Record<string, CompareOp> = { $lt: "lt", $lte: "lte", $gt: "gt", $gte: "gte" };
export const OTHER_UPDATE_OPS = new Set([
  "$inc",
  "$mul",
  "$min",
  "$max",
  "$push",
  "$pull",
  "$pullAll",
  "$addToSet",
  "$pop",
  "$rename",
  "$bit",
]);

export const EMPTY: Condition = { kind: "and", items: [] };

export type SourceCode = RecognizerContext["sourceCode"];

// ---- small helpers ----

/** An object literal, inline or held by a `const`. */
export const objectOf = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

export function keysOf(object: TSESTree.ObjectExpression): (string | undefined)[] {
  return object.properties.map((p) => (p.type === "Property" ? keyName(p.key, p.computed) : undefined));
}

/** `{ where }` (Sequelize, TypeORM, Prisma) or `{ data }` (Prisma's create): another client's options bag. */
export function isForeignBag(object: TSESTree.ObjectExpression): boolean {
  const keys = keysOf(object);
  if (keys.some((k) => k !== undefined && FOREIGN_KEYS.has(k))) return true;
  return keys.includes("data") && keys.every((k) => k !== undefined && PRISMA_CREATE_KEYS.has(k));
}

export function stringArg(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return v && typeof v.value === "string" && v.value.length > 0 ? v.value : undefined;
}
