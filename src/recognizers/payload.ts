/**
 * Payload CMS's Local API: `payload.find|findByID|count({ collection, where })`, `payload.update({ collection, id |
 * where, data })`, `payload.create({ collection, data })`, `payload.delete({ collection, id | where })`, and the
 * database adapter under it, `payload.db.find|findOne|updateOne|updateMany|deleteOne|deleteMany({ collection, where,
 * data })`, and the adapter's `payload.db.updateJobs({ data, where })` on the jobs collection (`payload-jobs`).
 * Plugins and apps built on Payload keep their job queues and lock flags in collections and write them through this
 * API, not through an ORM. A `where`'s `and` may be a const list that code pushes more terms into: they only narrow.
 *
 * The model is the collection's slug (`"ai-sync-queue"`). Filters use Payload's operators (`equals`, `not_equals`,
 * `in`, `not_in`, `exists`, `less_than`, `less_than_equal`, `greater_than`, `greater_than_equal`) joined by `and` /
 * `or` lists. The receiver must be called `payload` (`payload`, `req.payload`, `this.payload`) or be its `db`:
 * an object argument with a `collection` key is common elsewhere.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, StateAccess } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { evaluate, findProperty, keyName, objectLiteral, unwrap } from "../core/reading/values.js";
import { readObjectFilter, type FieldOperator, type ObjectFilterDialect } from "../core/reading/object-filters.js";
import { dataAssignments } from "./document-api.js";

const STORE = "payload";
const READS = new Set(["find", "findByID", "count", "findOne"]);
const UPDATES = new Set(["update", "updateOne", "updateMany", "findOneAndUpdate", "updateJobs"]);
/** Payload's jobs queue keeps its jobs in this collection; `payload.db.updateJobs` writes it without naming it. */
const JOBS_COLLECTION = "payload-jobs";
const DELETES = new Set(["delete", "deleteOne", "deleteMany"]);
const INSERTS = new Set(["create"]);
const COMPARE: Record<string, FieldOperator> = {
  equals: "eq",
  not_equals: "ne",
  in: "in",
  not_in: "notIn",
  less_than: "lt",
  less_than_equal: "lte",
  greater_than: "gt",
  greater_than_equal: "gte",
};

/** `payload`, `req.payload`, `this.payload`, `ctx.payload`; with `db`: the adapter (`payload.db`). */
function isPayload(node: Node): { db: boolean } | undefined {
  const n = unwrap(node);
  const named = (x: Node) => {
    const u = unwrap(x);
    if (u.type === "Identifier") return /^payload$/i.test(u.name);
    return u.type === "MemberExpression" && /^payload$/i.test(keyName(u.property, u.computed) ?? "");
  };
  if (named(n)) return { db: false };
  if (n.type === "MemberExpression" && keyName(n.property, n.computed) === "db" && named(n.object)) return { db: true };
  return undefined;
}

/**
 * Payload's where: every field is an object of operators (`status: { equals: "pending" }`, `lockedUntil: { less_than:
 * now }`, `token: { exists: false }`), joined by `and` / `or` lists; a bare value is no Payload filter, and an operator
 * the table does not list (`like`, `contains`, `near`) compares in a way not read.
 */
const PAYLOAD_FILTERS: ObjectFilterDialect = {
  combinators: { and: "and", or: "or" },
  operators: { ...COMPARE, exists: "exists" },
  nested: "other",
  mixed: "each",
  bare: "opaque",
  objectOperand: "one",
};

function parseWhere(ctx: RecognizerContext, where: TSESTree.ObjectExpression): Condition {
  return readObjectFilter(ctx.sourceCode, PAYLOAD_FILTERS, where);
}

/** The rows a call names: its `where`, or its `id` (a document by id). */
function filterOf(ctx: RecognizerContext, arg: TSESTree.ObjectExpression): Condition | undefined {
  const id = findProperty(arg, "id");
  if (id) return { kind: "and", items: [{ kind: "pred", field: "id", op: "eq", values: undefined, node: id }] };
  const whereProp = findProperty(arg, "where");
  if (!whereProp) return undefined;
  const where = objectLiteral(ctx.sourceCode, whereProp.value);
  return where ? parseWhere(ctx, where) : { kind: "opaque", node: whereProp.value };
}

export const payloadRecognizer: Recognizer = {
  store: STORE,
  methods: new Set([...READS, ...UPDATES, ...DELETES, ...INSERTS]),
  recognize(call, ctx): StateAccess | undefined {
    const callee = unwrap(call.callee);
    if (callee.type !== "MemberExpression" || call.arguments.length !== 1) return undefined;
    const operation = keyName(callee.property, callee.computed);
    if (!operation || !isPayload(callee.object)) return undefined;
    const arg = objectLiteral(ctx.sourceCode, call.arguments[0]);
    const slug = arg && findProperty(arg, "collection");
    const model =
      operation === "updateJobs"
        ? isPayload(callee.object)?.db
          ? JOBS_COLLECTION
          : undefined
        : slug && evaluate(ctx.sourceCode, slug.value)?.value;
    if (!arg || typeof model !== "string") return undefined;
    if (READS.has(operation)) {
      // No `where` and no `id`: every document of the collection (`payload.find({ collection, limit })`).
      const filter = filterOf(ctx, arg) ?? { kind: "and", items: [] };
      return { access: "read", store: STORE, model, operation, filter, node: call };
    }
    if (INSERTS.has(operation)) {
      const assignments = dataAssignments(ctx, findProperty(arg, "data")?.value);
      if (!assignments) return undefined;
      return {
        access: "write",
        store: STORE,
        model,
        operation,
        effect: "insert",
        filter: { kind: "and", items: [] },
        assignments,
        node: call,
      };
    }
    const filter = filterOf(ctx, arg);
    if (!filter) return undefined;
    if (DELETES.has(operation))
      return { access: "write", store: STORE, model, operation, effect: "delete", filter, assignments: [], node: call };
    if (!UPDATES.has(operation)) return undefined;
    const assignments = dataAssignments(ctx, findProperty(arg, "data")?.value);
    if (!assignments) return undefined;
    return { access: "write", store: STORE, model, operation, filter, assignments, node: call };
  },
};
