/**
 * MongoDB Node driver and Mongoose.
 *
 * - Writes: `updateOne|updateMany|findOneAndUpdate(filter, update, options?)` on a collection or a Mongoose model,
 *   `findByIdAndUpdate(id, update)` (the filter names `_id`), a Mongoose document's `doc.updateOne(update)`,
 *   `deleteOne|deleteMany|findOneAndDelete(filter)` and `findByIdAndDelete(id)` (deletes), `insertOne(doc)` and
 *   `Model.create(doc)` (inserts; `onConflict: "error"` when a duplicate-key error, 11000 / `E11000`, is caught around
 *   them), an upsert (`{ upsert: true }`) with that error caught (an insert whose conflict updates under the filter:
 *   a lease taken over when expired), and the active-record `doc.x = v; await doc.save()` (an update of the document's
 *   `_id` whose assignments are the `doc.x = v` statements right before it; an insert when `doc` was built with
 *   `new Model({…})`), and the shell's and old drivers' `findAndModify({ query, update })` /
 *   `findAndModify(query, sort, update)` (a delete with `remove: true`).
 * - Reads: `findOne|find|countDocuments(filter)` and `findById(id)`.
 * - Receivers: `db.collection("jobs")`, a variable holding one, `this.jobs`, a Mongoose model (`Job`,
 *   `mongoose.model("Job")`, `this.jobModel`: a `Model`/`Collection` suffix is dropped; `require("../models/Job")`).
 *
 * What tells Mongo apart from the other clients: two arguments for updates (Prisma's `updateMany({ where, data })`
 * has one), a filter object that is not an ORM options bag (`{ where }` is Sequelize, TypeORM, Prisma), and
 * method names TypeORM and Sequelize do not use (`updateOne`, not `update`). `findOneAndReplace`/`replaceOne`
 * replace whole documents and are not read. Every call is recognised on its own: a query chain
 * (`Job.find(filter).sort(…).lean()`) is recognised at the `find` call, the rest is ignored.
 */
import { appendProperty, jsCutoff, propertyKey } from "../core/reading/edits.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  AssignedValue,
  CompareOp,
  Condition,
  Node,
  StateAccess,
  StateRead,
  StateWrite,
  StaticValue,
  TextEdit,
  RecoverySpec,
  RecoveryWrite,
  StaleRowsSpec,
} from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { SWAPPED } from "../core/model/conditions.js";
import { isFunction } from "../core/reading/units.js";
import { methodOf, walk } from "../core/reading/ast.js";
import { catchesDuplicate } from "../core/reading/failures.js";
import { readObjectFilter, type ObjectFilterDialect } from "../core/reading/object-filters.js";
import {
  evaluate,
  findProperty,
  findVariable,
  getConstInit,
  keyName,
  objectLiteral,
  unwrap,
} from "../core/reading/values.js";
import { assignedValue } from "../core/reading/assignments.js";

const STORE = "mongo";
const UPDATE_METHODS = new Set(["updateOne", "updateMany", "findOneAndUpdate", "findByIdAndUpdate"]);
/** `collection.update(selector, modifier)`: the legacy driver (2.x) and Meteor collections. */
const LEGACY_UPDATES = ["update"];
/**
 * `findAndModify`: the shell's and the 1.x/2.x driver's find-and-update, in its options form
 * (`findAndModify({ query, sort, update, new })`, a delete with `remove: true`) or positionally
 * (`findAndModify(query, sort, update, options, callback)`).
 */
const FIND_AND_MODIFY = "findAndModify";
const DELETE_METHODS = new Set(["deleteOne", "deleteMany", "findOneAndDelete", "findByIdAndDelete"]);
const READ_METHODS = new Set(["findOne", "find", "findById", "countDocuments"]);
const INSERT_METHODS = new Set(["insertOne", "create"]);
/** Methods whose first argument is an id, not a filter. */
const BY_ID = new Set(["findByIdAndUpdate", "findByIdAndDelete", "findById"]);
/** Query-chain links that return the same query (`Job.findOne(f).lean().exec()`). */
const CHAIN_LINKS = new Set([
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
const SAVE_OPTIONS = new Set([
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
const BUILTINS = new Set([
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
const RECEIVER_SUFFIX = /(?:Model|Collection|Coll)$/;
const RANGE_OPS: Record<string, CompareOp> = { $lt: "lt", $lte: "lte", $gt: "gt", $gte: "gte" };
const OTHER_UPDATE_OPS = new Set([
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

const EMPTY: Condition = { kind: "and", items: [] };

type SourceCode = RecognizerContext["sourceCode"];

// ---- small helpers ----

/** An object literal, inline or held by a `const`. */
const objectOf = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

function arrayOf(sourceCode: SourceCode, node: Node): TSESTree.ArrayExpression | undefined {
  const n = unwrap(node);
  if (n.type === "ArrayExpression") return n;
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    const target = init && unwrap(init);
    if (target?.type === "ArrayExpression") return target;
  }
  return undefined;
}

function keysOf(object: TSESTree.ObjectExpression): (string | undefined)[] {
  return object.properties.map((p) => (p.type === "Property" ? keyName(p.key, p.computed) : undefined));
}

/** `{ where }` (Sequelize, TypeORM, Prisma) or `{ data }` (Prisma's create): another client's options bag. */
function isForeignBag(object: TSESTree.ObjectExpression): boolean {
  const keys = keysOf(object);
  if (keys.some((k) => k !== undefined && FOREIGN_KEYS.has(k))) return true;
  return keys.includes("data") && keys.every((k) => k !== undefined && PRISMA_CREATE_KEYS.has(k));
}

function stringArg(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return v && typeof v.value === "string" && v.value.length > 0 ? v.value : undefined;
}

// ---- receivers ----

interface Receiver {
  readonly model: string;
  /** Named or built like a Mongoose model (`Job`, `this.jobModel`, `mongoose.model("Job")`): `create` is an insert. */
  readonly mongooseModel: boolean;
}

/** The collection or model a receiver stands for: `db.collection("jobs")` → `jobs`, `this.jobModel` → `job`. */
function receiverOf(ctx: RecognizerContext, node: Node, depth = 0): Receiver | undefined {
  if (depth > 4) return undefined;
  const r = unwrap(node);
  if (r.type === "CallExpression") {
    const callee = unwrap(r.callee);
    const name =
      callee.type === "Identifier"
        ? callee.name
        : callee.type === "MemberExpression"
          ? keyName(callee.property, callee.computed)
          : undefined;
    const arg = r.arguments[0] ? unwrap(r.arguments[0]) : undefined;
    // `this.model(modelName)` in a schema method or plugin: the model is whichever the name holds, the same one
    // wherever the module writes it with that name.
    const model =
      stringArg(ctx, r.arguments[0]) ?? (name === "model" && arg?.type === "Identifier" ? arg.name : undefined);
    if (!model) return undefined;
    // `require("../models/Export").findOneAndUpdate(…)`: the model module's export, named by its file.
    if (name === "require" && callee.type === "Identifier") {
      const file = /(?:^|\/)([A-Za-z_$][\w$]*)(?:\.[cm]?[jt]s)?$/.exec(model)?.[1];
      const fromModels = /(?:^|\/)models?\//i.test(model);
      return file && (fromModels || /^[A-Z]/.test(file)) ? { model: file, mongooseModel: true } : undefined;
    }
    if (name === "collection" && callee.type === "MemberExpression") return { model, mongooseModel: false };
    if (name === "model") return { model, mongooseModel: true };
    return undefined;
  }
  if (r.type === "MemberExpression") {
    const name = keyName(r.property, r.computed);
    if (!name || name.startsWith("$")) return undefined;
    const object = unwrap(r.object);
    // `self.db` with `self.db = await self.apos.db.collection("aposLocks")` once in the module: that collection.
    // (The module's text must assign such a field at all before its tree is walked for it.)
    const assigned = assignsField(ctx, name)
      ? fieldCollections(ctx).get(`${ctx.sourceCode.getText(object)}.${name}`)
      : undefined;
    if (assigned) return assigned;
    // `prisma.session.deleteMany({})`: a Prisma delegate, whatever the arguments look like.
    const owner =
      object.type === "Identifier"
        ? object.name
        : object.type === "MemberExpression"
          ? keyName(object.property, object.computed)
          : undefined;
    if (owner !== undefined && /prisma$/i.test(owner)) return undefined;
    // `mongoose.models.Job`, `connection.models["Job"]`
    const fromModels = object.type === "MemberExpression" && keyName(object.property, object.computed) === "models";
    const stripped = name.replace(RECEIVER_SUFFIX, "") || name;
    return { model: stripped, mongooseModel: fromModels || /Model$/.test(name) || /^[A-Z]/.test(name) };
  }
  if (r.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, r);
    if (init && init.type !== "TSEnumDeclaration") {
      let target = unwrap(init);
      if (target.type === "AwaitExpression") target = unwrap(target.argument);
      if (target.type === "CallExpression" || target.type === "MemberExpression") {
        const resolved = receiverOf(ctx, target, depth + 1);
        if (resolved) return resolved;
      }
    }
    const stripped = r.name.replace(RECEIVER_SUFFIX, "") || r.name;
    return { model: stripped, mongooseModel: /Model$/.test(r.name) || /^[A-Z]/.test(r.name) };
  }
  return undefined;
}

/** Whether the module's text assigns a field of this name anywhere (`.db = …`), remembered per name. */
function assignsField(ctx: RecognizerContext, name: string): boolean {
  let seen = ctx.scratch.get("mongo:assigned") as Map<string, boolean> | undefined;
  if (!seen) ctx.scratch.set("mongo:assigned", (seen = new Map()));
  let found = seen.get(name);
  if (found === undefined) {
    found = new RegExp(`\\.${name.replace(/\$/g, "\\$")}\\s*=[^=]`).test(ctx.sourceCode.text);
    seen.set(name, found);
  }
  return found;
}

/** The text of a `collection(…)` or `model(…)` call: `.collection("jobs")`, `["model"]<Job>(name)`. */
const COLLECTION_CALL = /(?:collection|model)["'`\]]?\s*[(<]/;

/**
 * The fields the module sets, exactly once, to a collection or model (`this.jobs = db.collection("jobs")`,
 * `self.db = await apos.db.collection("aposLocks")`), by the field's text (`self.db`). A field set twice, or to
 * anything else, is not in the map: its name is all there is.
 */
function fieldCollections(ctx: RecognizerContext): ReadonlyMap<string, Receiver> {
  const cached = ctx.scratch.get("mongo:fields") as Map<string, Receiver> | undefined;
  if (cached) return cached;
  const seen = new Map<string, Receiver | null>();
  // Only a `collection(…)` or `model(…)` call is recorded: a module that makes none is not walked for them.
  if (COLLECTION_CALL.test(ctx.sourceCode.text))
    walk(ctx.sourceCode.ast, (n) => {
      if (n.type !== "AssignmentExpression" || n.operator !== "=" || n.left.type !== "MemberExpression") return;
      const field = keyName(n.left.property, n.left.computed);
      if (!field) return;
      const text = `${ctx.sourceCode.getText(unwrap(n.left.object))}.${field}`;
      let right = unwrap(n.right);
      if (right.type === "AwaitExpression") right = unwrap(right.argument);
      const call = right.type === "CallExpression" ? right : undefined;
      const m = call && methodOf(call);
      const receiver =
        m && (m.name === "collection" || m.name === "model") && call.arguments.length <= 2
          ? receiverOf(ctx, call)
          : undefined;
      seen.set(text, seen.has(text) ? null : (receiver ?? null));
    });
  const out = new Map<string, Receiver>();
  for (const [k, v] of seen) if (v) out.set(k, v);
  ctx.scratch.set("mongo:fields", out);
  return out;
}

/** Strips query-chain links: `Job.findOne(f).lean().exec()` → `Job.findOne(f)`. */
function queryCall(node: Node): TSESTree.CallExpression | undefined {
  let n = unwrap(node);
  if (n.type === "AwaitExpression") n = unwrap(n.argument);
  while (n.type === "CallExpression") {
    const m = methodOf(n);
    if (!m || !CHAIN_LINKS.has(m.name)) return n;
    const inner = unwrap(m.member.object);
    if (inner.type !== "CallExpression") return n;
    n = inner;
  }
  return undefined;
}

interface DocOrigin {
  readonly model: string;
  /** Built with `new Model({…})`: its first save inserts it. */
  readonly created?: TSESTree.ObjectExpression | null;
  /** For `new Model({…})`: the model as the code names it (`Lock`), a client other calls can be made on. */
  readonly modelNode?: Node;
  /** Not traced to a model (a parameter): `model` is only the variable's name. */
  readonly byName?: true;
}

/** Where a Mongoose document comes from: a read of a model, `new Model({…})`, or a loop over a read. */
function docOrigin(ctx: RecognizerContext, id: TSESTree.Identifier): DocOrigin {
  const fallback: DocOrigin = { model: id.name, byName: true };
  const variable = findVariable(ctx.sourceCode, id);
  const def = variable?.defs[0];
  if (!variable || !def || variable.defs.length !== 1 || def.type !== "Variable") return fallback;
  const decl = def.node;
  if (decl.init) {
    const init = getConstInit(ctx.sourceCode, id);
    let target = init && unwrap(init);
    if (target?.type === "AwaitExpression") target = unwrap(target.argument);
    if (target?.type === "NewExpression") {
      const receiver = receiverOf(ctx, target.callee);
      if (receiver?.mongooseModel)
        return { model: receiver.model, created: objectOf(ctx, target.arguments[0]) ?? null, modelNode: target.callee };
      return fallback;
    }
    const call = target && queryCall(target);
    const m = call && methodOf(call);
    if (m && (READ_METHODS.has(m.name) || UPDATE_METHODS.has(m.name))) {
      const receiver = receiverOf(ctx, m.member.object);
      if (receiver) return { model: receiver.model };
    }
    return fallback;
  }
  // `for (const doc of await Job.find(…))`, `for (const doc of docs)` with `const docs = await Job.find(…)`
  const loop = decl.parent?.parent;
  if (loop?.type === "ForOfStatement" && loop.left === decl.parent) {
    let source = unwrap(loop.right);
    if (source.type === "Identifier") {
      const init = getConstInit(ctx.sourceCode, source);
      if (init && init.type !== "TSEnumDeclaration") source = unwrap(init);
    }
    const call = queryCall(source);
    const m = call && methodOf(call);
    if (m && READ_METHODS.has(m.name)) {
      const receiver = receiverOf(ctx, m.member.object);
      if (receiver) return { model: receiver.model };
    }
  }
  return fallback;
}

// ---- filters ----

function isRegex(node: Node): boolean {
  const n = unwrap(node);
  return (
    (n.type === "Literal" && "regex" in n) ||
    (n.type === "NewExpression" && n.callee.type === "Identifier" && n.callee.name === "RegExp")
  );
}

function pred(field: string, op: CompareOp, values: readonly StaticValue[] | undefined, node: Node): Condition {
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
  const args = arrayOf(sourceCode, only.value)?.elements ?? [];
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
function filterOf(ctx: RecognizerContext, node: Node): Condition {
  const obj = objectOf(ctx, node);
  return obj ? parseFilter(ctx, obj) : { kind: "opaque", node };
}

/** `findById(id)`: a filter on `_id`. */
function idFilter(ctx: RecognizerContext, node: Node): Condition {
  return { kind: "and", items: [single(ctx, "_id", "eq", node, node)] };
}

// ---- updates ----

function fieldsOf(
  ctx: RecognizerContext,
  object: TSESTree.ObjectExpression,
  value: (p: TSESTree.Property) => AssignedValue,
  out: Assignment[],
): void {
  for (const p of object.properties) {
    if (p.type !== "Property") continue;
    const field = keyName(p.key, p.computed);
    if (field === undefined) continue;
    out.push({ field, value: value(p), node: p, valueNode: p.value });
  }
}

/**
 * A value of an update pipeline's `$set`: `"$$NOW"` is the clock, another `"$field"` or `"$$var"` string and any
 * expression object are computed by the server (other); a plain value is what it says.
 */
function pipelineValue(ctx: RecognizerContext, node: Node): AssignedValue {
  const v = evaluate(ctx.sourceCode, node);
  if (typeof v?.value === "string" && v.value.startsWith("$"))
    return v.value === "$$NOW" ? { kind: "now" } : { kind: "other" };
  if (unwrap(node).type === "ObjectExpression") return { kind: "other" };
  return assignedValue(ctx.sourceCode, node);
}

/**
 * The fields an update pipeline (`[{ $set: { status: "PENDING", at: "$$NOW" } }, { $unset: "lease" }]`) writes:
 * `$set`/`$addFields` stages, `$unset` of a field or a list of them. Another stage (`$replaceWith`, `$project`)
 * rewrites the document in ways not read: the whole update is then unknown and gives no assignments.
 */
function parsePipelineUpdate(ctx: RecognizerContext, stages: TSESTree.ArrayExpression): Assignment[] {
  const out: Assignment[] = [];
  for (const el of stages.elements) {
    const stage = el && el.type !== "SpreadElement" ? objectOf(ctx, el) : undefined;
    const only = stage?.properties.length === 1 ? stage.properties[0] : undefined;
    const key = only?.type === "Property" ? keyName(only.key, only.computed) : undefined;
    if (!only || only.type !== "Property" || key === undefined) return [];
    if (key === "$set" || key === "$addFields") {
      const fields = objectOf(ctx, only.value);
      if (!fields) return [];
      fieldsOf(ctx, fields, (f) => pipelineValue(ctx, f.value), out);
    } else if (key === "$unset") {
      const list = unwrap(only.value);
      const names = list.type === "ArrayExpression" ? list.elements : [list];
      for (const n of names) {
        const v = n && n.type !== "SpreadElement" ? evaluate(ctx.sourceCode, n) : undefined;
        if (typeof v?.value !== "string") return [];
        out.push({
          field: v.value,
          value: { kind: "static", value: { value: null } },
          node: n as Node,
          valueNode: n as Node,
        });
      }
    } else return [];
  }
  return out;
}

/**
 * The fields an update document sets: `$set` (and top-level fields, which Mongoose casts to `$set`), `$unset`
 * (null), `$currentDate` (now), `$inc` and other operators (other); or an update pipeline's stages.
 */
function parseUpdate(ctx: RecognizerContext, node: Node): Assignment[] {
  const n = unwrap(node);
  if (n.type === "ArrayExpression") return parsePipelineUpdate(ctx, n);
  const update = objectOf(ctx, node);
  if (!update) return [];
  const out: Assignment[] = [];
  for (const p of update.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    if (key === undefined) continue;
    if (!key.startsWith("$")) {
      out.push({ field: key, value: assignedValue(ctx.sourceCode, p.value), node: p, valueNode: p.value });
      continue;
    }
    const fields = objectOf(ctx, p.value);
    if (!fields) continue;
    if (key === "$set") fieldsOf(ctx, fields, (f) => assignedValue(ctx.sourceCode, f.value), out);
    else if (key === "$unset") fieldsOf(ctx, fields, () => ({ kind: "static", value: { value: null } }), out);
    else if (key === "$currentDate") fieldsOf(ctx, fields, () => ({ kind: "now" }), out);
    else if (OTHER_UPDATE_OPS.has(key)) fieldsOf(ctx, fields, () => ({ kind: "other" }), out);
    // $setOnInsert only writes when an upsert inserts: it changes no existing document.
  }
  return out;
}

/** A document to insert: its fields as assignments. */
function parseDocument(ctx: RecognizerContext, doc: TSESTree.ObjectExpression): Assignment[] {
  const out: Assignment[] = [];
  fieldsOf(ctx, doc, (p) => assignedValue(ctx.sourceCode, p.value), out);
  return out;
}

// ---- inserts guarded by a unique key ----

/** MongoDB's duplicate-key error. */
const MONGO_DUPLICATE = /\b11000\b|E11000/;

const catchesDuplicateKey = (ctx: RecognizerContext, call: TSESTree.CallExpression) =>
  catchesDuplicate(ctx.sourceCode, call, MONGO_DUPLICATE);

/**
 * `updateOne({ _id: name, expiresAt: { $lt: now } }, { $set: … }, { upsert: true })` with E11000 caught: the lock
 * document is inserted when absent, taken over when the filter matches (expired), and the duplicate `_id` error
 * says "held" otherwise. An insert whose conflict updates under the filter.
 */
function upsertLock(ctx: RecognizerContext, call: TSESTree.CallExpression): boolean {
  const options = call.arguments[2] && objectOf(ctx, call.arguments[2]);
  const upsert = options?.properties.find(
    (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === "upsert",
  );
  return (
    upsert !== undefined && evaluate(ctx.sourceCode, upsert.value)?.value === true && catchesDuplicateKey(ctx, call)
  );
}

// ---- suggestions ----

function fieldKey(field: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(field) ? field : JSON.stringify(field);
}

function predicateText(field: string, op: "eq" | "ne", valueText: string): string {
  return `${fieldKey(field)}: ${op === "eq" ? valueText : `{ $ne: ${valueText} }`}`;
}

/** `status: X` or `status: { $ne: X }`, added as the filter's last property. */
function insertPredicate(
  ctx: RecognizerContext,
  filter: TSESTree.ObjectExpression,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  if (keysOf(filter).includes(field)) return undefined;
  const text = predicateText(field, op, valueText);
  return appendProperty(ctx.sourceCode, filter, text);
}

/** `findByIdAndUpdate(id, …)` → `findOneAndUpdate({ _id: id, status: … }, …)`. */
function byIdPredicate(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  callee: TSESTree.MemberExpression,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  const id = call.arguments[0];
  if (!id || id.type === "SpreadElement" || call.typeArguments || callee.computed || field === "_id") return undefined;
  const text = `findOneAndUpdate({ _id: ${ctx.sourceCode.getText(id)}, ${predicateText(field, op, valueText)} }`;
  return { range: [callee.property.range[0], id.range[1]], text };
}

// ---- recognition ----

function write(
  model: string,
  operation: string,
  call: TSESTree.CallExpression,
  filter: Condition,
  assignments: Assignment[],
  extra: Partial<
    Pick<
      StateWrite,
      | "effect"
      | "onConflict"
      | "addPredicate"
      | "modelFromName"
      | "recoveryWrite"
      | "changedNothing"
      | "staleRowsDelete"
    >
  > = {},
): StateWrite {
  return { access: "write", store: STORE, model, operation, filter, assignments, node: call, ...extra };
}

/** The statement list and index of the statement a call is (`await doc.save();`, `const saved = await doc.save();`). */
function statementOf(call: TSESTree.CallExpression): { body: readonly TSESTree.Node[]; index: number } | undefined {
  let node: Node = call;
  let parent = call.parent;
  while (
    parent &&
    (parent.type === "AwaitExpression" ||
      parent.type === "VariableDeclarator" ||
      parent.type === "VariableDeclaration" ||
      parent.type === "ExpressionStatement" ||
      parent.type === "ReturnStatement")
  ) {
    if (parent.type === "VariableDeclarator" && parent.init !== node) return undefined;
    node = parent;
    parent = parent.parent;
    if (node.type === "ExpressionStatement" || node.type === "ReturnStatement" || node.type === "VariableDeclaration")
      break;
  }
  if (!parent) return undefined;
  const body: readonly TSESTree.Node[] | undefined =
    parent.type === "BlockStatement" || parent.type === "Program"
      ? parent.body
      : parent.type === "SwitchCase"
        ? parent.consequent
        : undefined;
  if (!body) return undefined;
  const index = body.indexOf(node);
  return index < 0 ? undefined : { body, index };
}

function isDoc(node: Node, name: string): boolean {
  const n = unwrap(node);
  return n.type === "Identifier" && n.name === name;
}

/** One statement that changes the document: `doc.x = v`, `doc.x += 1`, `doc.x++`, `doc.set("x", v)`, `doc.set({ … })`. */
function docAssignments(ctx: RecognizerContext, stmt: TSESTree.Node, name: string): Assignment[] | undefined {
  if (stmt.type !== "ExpressionStatement") return undefined;
  const e = unwrap(stmt.expression);
  if (e.type === "AssignmentExpression" && e.left.type === "MemberExpression" && isDoc(e.left.object, name)) {
    const field = keyName(e.left.property, e.left.computed);
    if (field === undefined) return undefined;
    const value: AssignedValue = e.operator === "=" ? assignedValue(ctx.sourceCode, e.right) : { kind: "other" };
    return [{ field, value, node: e.left, valueNode: e.right }];
  }
  if (e.type === "UpdateExpression" && e.argument.type === "MemberExpression" && isDoc(e.argument.object, name)) {
    const field = keyName(e.argument.property, e.argument.computed);
    return field === undefined ? undefined : [{ field, value: { kind: "other" }, node: e.argument, valueNode: e }];
  }
  if (e.type === "CallExpression") {
    const m = methodOf(e);
    if (!m || m.name !== "set" || !isDoc(m.member.object, name)) return undefined;
    const [first, second] = e.arguments;
    if (!first || first.type === "SpreadElement") return undefined;
    const obj = objectOf(ctx, first);
    if (obj && !second) return parseDocument(ctx, obj);
    const field = stringArg(ctx, first);
    if (field === undefined || !second || second.type === "SpreadElement") return undefined;
    return [{ field, value: assignedValue(ctx.sourceCode, second), node: first, valueNode: second }];
  }
  return undefined;
}

/** Whether an identifier called `name` occurs in `node` (a property key or member name is no occurrence). */
function namesIdentifier(node: Node, name: string): boolean {
  let found = false;
  walk(node, (n) => {
    if (found) return false;
    if (n.type === "MemberExpression" && !n.computed) {
      if (namesIdentifier(n.object, name)) found = true;
      return false;
    }
    if (n.type === "Property" && !n.computed && !n.shorthand) {
      if (namesIdentifier(n.value as Node, name)) found = true;
      return false;
    }
    if (n.type === "Identifier" && n.name === name) found = true;
    return undefined;
  });
  return found;
}

/**
 * `if (doc.attempts < max) doc.nextAt = later; else doc.nextAt = null;`: an `if` whose branches only change the
 * document, besides locals computed on the way (its test only reads). Each field it sets may or may not be written, so its value is not known.
 */
function conditionalAssignments(ctx: RecognizerContext, stmt: TSESTree.Node, name: string): Assignment[] | undefined {
  if (stmt.type !== "IfStatement") return undefined;
  const out: Assignment[] = [];
  const branch = (b: TSESTree.Statement | null): boolean => {
    if (!b) return true;
    const list = b.type === "BlockStatement" ? b.body : [b];
    for (const st of list) {
      // A local computed on the way (`const backoff = 2 ** doc.attempts`) only reads.
      if (st.type === "VariableDeclaration") continue;
      const found = st.type === "IfStatement" ? conditionalAssignments(ctx, st, name) : docAssignments(ctx, st, name);
      if (!found) return false;
      out.push(...found);
    }
    return true;
  };
  if (!branch(stmt.consequent) || !branch(stmt.alternate)) return undefined;
  return out.map((a) => ({ ...a, value: { kind: "other" } }));
}

/** `doc.x = v; …; await doc.save()`: an update of the document's `_id` (or an insert of a `new Model({…})`). */
function recognizeSave(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  callee: TSESTree.MemberExpression,
): StateWrite | undefined {
  const doc = unwrap(callee.object);
  if (doc.type !== "Identifier" || call.arguments.length > 1) return undefined;
  const options = call.arguments[0];
  if (options) {
    const obj = objectOf(ctx, options);
    if (!obj || !keysOf(obj).every((k) => k !== undefined && SAVE_OPTIONS.has(k))) return undefined;
  }
  const origin = docOrigin(ctx, doc);
  const assignments: Assignment[] = [];
  const at = statementOf(call);
  if (at) {
    for (let i = at.index - 1; i >= 0; i--) {
      const stmt = at.body[i]!;
      // A statement that never names the document cannot change it (`const backoff = …`): passed over.
      if (!namesIdentifier(stmt, doc.name)) continue;
      const found = docAssignments(ctx, stmt, doc.name) ?? conditionalAssignments(ctx, stmt, doc.name);
      if (!found) break;
      // Walking backwards: a later assignment of the same field wins.
      for (const a of found.reverse()) if (!assignments.some((b) => b.field === a.field)) assignments.unshift(a);
    }
  }
  if (origin.created !== undefined) {
    const initial = origin.created
      ? parseDocument(ctx, origin.created).filter((a) => !assignments.some((b) => b.field === a.field))
      : [];
    const model = origin.modelNode;
    return write(origin.model, "save", call, EMPTY, [...initial, ...assignments], {
      effect: "insert",
      ...(catchesDuplicateKey(ctx, call) ? { onConflict: "error" as const } : {}),
      ...(model ? { staleRowsDelete: (spec: StaleRowsSpec) => staleRowsDelete(ctx, model, spec) } : {}),
    });
  }
  if (assignments.length === 0) return undefined;
  return write(
    origin.model,
    "save",
    call,
    { kind: "and", items: [pred("_id", "eq", undefined, doc)] },
    assignments,
    origin.byName ? { modelFromName: true } : {},
  );
}

function recognizeRead(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  model: string,
  operation: string,
): StateRead | undefined {
  const first = call.arguments[0];
  if (!first || first.type === "SpreadElement") return undefined;
  let filter: Condition;
  if (BY_ID.has(operation)) filter = idFilter(ctx, first);
  else {
    const obj = objectOf(ctx, first);
    if (!obj || isForeignBag(obj)) return undefined;
    filter = parseFilter(ctx, obj);
  }
  return { access: "read", store: STORE, model, operation, filter, node: call };
}

/**
 * `Job.updateMany(…)` (a Mongoose model, or the driver's collection) on the claim's receiver: documents still
 * `stuck` whose progress time is older than the threshold, given back; the result's `modifiedCount` is how many.
 */
function recoveryWrite(ctx: RecognizerContext, receiver: Node, spec: RecoverySpec): RecoveryWrite {
  const f = propertyKey(spec.field);
  return {
    call: `${ctx.sourceCode.getText(receiver)}.updateMany(
  { ${f}: ${spec.stuckText}, ${propertyKey(spec.timeField)}: { $lt: new Date(Date.now() - ${spec.threshold}) } },
  { $set: { ${f}: ${spec.backText} } },
)`,
    count: (result) => `${result}.modifiedCount`,
    client: receiver,
  };
}

/** `Lock.deleteMany({ expiresAt: { $lt: … } })` on the lock row's model: the documents whose holder died, counted by `deletedCount`. */
function staleRowsDelete(ctx: RecognizerContext, model: Node, spec: StaleRowsSpec): RecoveryWrite {
  return {
    call: `${ctx.sourceCode.getText(model)}.deleteMany({ ${propertyKey(spec.timeField)}: { $lt: ${jsCutoff(spec.threshold)} } })`,
    count: (result) => `${result}.deletedCount`,
    client: model,
  };
}

/**
 * How an update's result says it matched nothing: `matchedCount` (the driver from 4, Mongoose from 6; older ones
 * answer `n`, which never reads as nothing here), or no document from a find-and-modify (Mongoose, the driver from 6).
 */
function changedNothing(operation: string): Pick<StateWrite, "changedNothing"> {
  if (operation === "updateOne" || operation === "updateMany")
    return { changedNothing: (result) => `${result}.matchedCount === 0` };
  if (operation === "findOneAndUpdate") return { changedNothing: (result) => `!${result}` };
  return {};
}

function recognizeFindAndModify(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  model: string,
): StateWrite | undefined {
  const [first, , third] = call.arguments;
  // The options form, with a callback (inline or passed on: `findAndModify({ query, update }, callback)`).
  const inOptions = (o: TSESTree.ObjectExpression | undefined) =>
    o !== undefined && findProperty(o, "query") !== undefined;
  const options =
    call.arguments.length === 1 ||
    (call.arguments.length === 2 && (isFunction(call.arguments[1]!) || inOptions(objectOf(ctx, first))))
      ? objectOf(ctx, first)
      : undefined;
  let query: Node | undefined;
  let update: Node | undefined;
  let remove = false;
  if (options) {
    query = findProperty(options, "query")?.value;
    update = findProperty(options, "update")?.value;
    const removal = findProperty(options, "remove")?.value;
    remove = removal !== undefined && evaluate(ctx.sourceCode, removal)?.value === true;
  } else {
    // Positional: the update must be made of update operators, which only Mongo's takes.
    query = first;
    const modifier = third && objectOf(ctx, third);
    if (!modifier || modifier.properties.length === 0 || !keysOf(modifier).every((k) => k?.startsWith("$")))
      return undefined;
    update = third;
  }
  if (!query) return undefined;
  const filterObject = objectOf(ctx, query);
  if (filterObject && isForeignBag(filterObject)) return undefined;
  if (remove) return write(model, FIND_AND_MODIFY, call, filterOf(ctx, query), [], { effect: "delete" });
  if (!update) return undefined;
  const inline = unwrap(query).type === "ObjectExpression" ? filterObject : undefined;
  return write(model, FIND_AND_MODIFY, call, filterOf(ctx, query), parseUpdate(ctx, update), {
    ...(inline
      ? {
          addPredicate: (field: string, op: "eq" | "ne", valueText: string) =>
            insertPredicate(ctx, inline, field, op, valueText),
        }
      : {}),
  });
}

export const mongoRecognizer: Recognizer = {
  store: STORE,
  packages: { own: /^(mongodb|mongoose|@types\/mongodb|@types\/mongoose)$/, family: /mongo/i },
  methods: new Set([
    ...UPDATE_METHODS,
    ...DELETE_METHODS,
    ...READ_METHODS,
    ...INSERT_METHODS,
    "save",
    ...LEGACY_UPDATES,
    FIND_AND_MODIFY,
  ]),
  recognize(call, ctx): StateAccess | undefined {
    const m = methodOf(call);
    if (!m) return undefined;
    const { member: callee, name: operation } = m;
    if (call.arguments.some((a) => a.type === "SpreadElement")) return undefined;
    if (operation === "save") return recognizeSave(ctx, call, callee);
    const receiver = receiverOf(ctx, callee.object);
    if (!receiver) return undefined;
    const { model } = receiver;
    const [first, second] = call.arguments;

    if (READ_METHODS.has(operation)) return recognizeRead(ctx, call, model, operation);

    // The legacy driver's and Meteor's `update(selector, modifier)`: ours only when the modifier is made of update
    // operators (`$set`, `$unset`, `$inc`), which no other store's `update` takes.
    if (operation === "update") {
      const modifier = second && objectOf(ctx, second);
      if (!first || !modifier || modifier.properties.length === 0 || !keysOf(modifier).every((k) => k?.startsWith("$")))
        return undefined;
      const filterObject = objectOf(ctx, first);
      if (filterObject && isForeignBag(filterObject)) return undefined;
      const inline = unwrap(first).type === "ObjectExpression" ? filterObject : undefined;
      return write(model, operation, call, filterOf(ctx, first), parseUpdate(ctx, second!), {
        ...(inline
          ? {
              addPredicate: (field: string, op: "eq" | "ne", valueText: string) =>
                insertPredicate(ctx, inline, field, op, valueText),
            }
          : {}),
      });
    }

    if (operation === FIND_AND_MODIFY) return recognizeFindAndModify(ctx, call, model);

    if (UPDATE_METHODS.has(operation)) {
      if (!first) return undefined;
      if (!second) {
        // A Mongoose document's own `doc.updateOne(update)`: filtered by its `_id`.
        const doc = unwrap(callee.object);
        if (operation !== "updateOne" || doc.type !== "Identifier" || receiver.mongooseModel) return undefined;
        const update = objectOf(ctx, first);
        if (!update || !keysOf(update).some((k) => k?.startsWith("$"))) return undefined;
        const origin = docOrigin(ctx, doc);
        return write(
          origin.model,
          operation,
          call,
          { kind: "and", items: [pred("_id", "eq", undefined, doc)] },
          parseUpdate(ctx, first),
          origin.byName ? { modelFromName: true } : {},
        );
      }
      const filterObject = objectOf(ctx, first);
      if (filterObject && isForeignBag(filterObject)) return undefined;
      if (operation === "findByIdAndUpdate") {
        return write(model, operation, call, idFilter(ctx, first), parseUpdate(ctx, second), {
          addPredicate: (field, op, valueText) => byIdPredicate(ctx, call, callee, field, op, valueText),
        });
      }
      const inline = unwrap(first).type === "ObjectExpression" ? filterObject : undefined;
      return write(model, operation, call, filterOf(ctx, first), parseUpdate(ctx, second), {
        ...(inline
          ? {
              addPredicate: (field: string, op: "eq" | "ne", valueText: string) =>
                insertPredicate(ctx, inline, field, op, valueText),
            }
          : {}),
        ...(upsertLock(ctx, call)
          ? { effect: "insert" as const, onConflict: "update" as const }
          : {
              recoveryWrite: (spec: RecoverySpec) => recoveryWrite(ctx, callee.object, spec),
              ...changedNothing(operation),
            }),
      });
    }

    if (DELETE_METHODS.has(operation)) {
      if (!first) return undefined;
      if (operation === "findByIdAndDelete")
        return write(model, operation, call, idFilter(ctx, first), [], { effect: "delete" });
      const filterObject = objectOf(ctx, first);
      if (filterObject && isForeignBag(filterObject)) return undefined;
      const inline = unwrap(first).type === "ObjectExpression" ? filterObject : undefined;
      return write(model, operation, call, filterOf(ctx, first), [], {
        effect: "delete",
        ...(inline
          ? {
              addPredicate: (field: string, op: "eq" | "ne", valueText: string) =>
                insertPredicate(ctx, inline, field, op, valueText),
            }
          : {}),
      });
    }

    if (INSERT_METHODS.has(operation)) {
      if (operation === "create" && (!receiver.mongooseModel || BUILTINS.has(receiver.model))) return undefined;
      const doc = objectOf(ctx, first);
      if (!doc || isForeignBag(doc)) return undefined;
      return write(model, operation, call, EMPTY, parseDocument(ctx, doc), {
        effect: "insert",
        ...(catchesDuplicateKey(ctx, call) ? { onConflict: "error" as const } : {}),
        staleRowsDelete: (spec: StaleRowsSpec) => staleRowsDelete(ctx, callee.object, spec),
      });
    }
    return undefined;
  },
};
