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
import { appendProperty, jsCutoff, propertyKey } from "../../core/reading/edits.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  Condition,
  Node,
  StateAccess,
  StateRead,
  StateWrite,
  TextEdit,
  RecoverySpec,
  RecoveryWrite,
  StaleRowsSpec,
} from "../../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { isFunction } from "../../core/reading/units.js";
import { methodOf } from "../../core/reading/ast.js";
import { catchesDuplicate } from "../../core/reading/failures.js";
import { readsTimeAhead } from "../../core/reading/clock.js";
import { evaluate, findProperty, keyName, unwrap } from "../../core/reading/values.js";
import {
  STORE,
  UPDATE_METHODS,
  LEGACY_UPDATES,
  FIND_AND_MODIFY,
  DELETE_METHODS,
  READ_METHODS,
  INSERT_METHODS,
  BY_ID,
  SAVE_OPTIONS,
  BUILTINS,
  EMPTY,
  objectOf,
  keysOf,
  isForeignBag,
} from "./vocabulary.js";
import { receiverOf, docOrigin } from "./receivers.js";
import { pred, parseFilter, filterOf, idFilter } from "./filters.js";
import { parseUpdate, parseDocument } from "./updates.js";
import { statementOf, namesIdentifier, docAssignments, conditionalAssignments } from "./saves.js";

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
      const stored = parseDocument(ctx, doc);
      const timed = stored.filter((a) => readsTimeAhead(ctx.sourceCode, a.valueNode)).map((a) => a.field);
      const ahead = timed.length > 0 && ttlMayApply(ctx.sourceCode.text) ? timed : [];
      return write(model, operation, call, EMPTY, stored, {
        effect: "insert",
        // A TTL index may delete the document once that time has passed (storeExpiry, ttlMayApply).
        ...(ahead.length > 0 ? { storeExpiry: ahead } : {}),
        ...(catchesDuplicateKey(ctx, call) ? { onConflict: "error" as const } : {}),
        staleRowsDelete: (spec: StaleRowsSpec) => staleRowsDelete(ctx, callee.object, spec),
      });
    }
    return undefined;
  },
};

/**
 * Whether a TTL index may delete this module's documents by a time they hold: one is declared here
 * (`expireAfterSeconds`, a schema path's `expires`), or the collection's schema and indexes are not here at all. A
 * module that defines its schema (`new Schema({ … })`) and declares no TTL shows there is none.
 */
function ttlMayApply(text: string): boolean {
  if (/expireAfterSeconds|\bexpires\s*:/.test(text)) return true;
  return !/\bnew\s+(?:mongoose\.)?Schema\s*[(<]/.test(text);
}
