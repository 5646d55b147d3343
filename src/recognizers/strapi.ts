/**
 * Strapi's data layers, the three ways a Strapi app or plugin writes its content types:
 *
 * - the Entity Service (v4): `strapi.entityService.findMany(uid, { filters })`, `findOne(uid, id)`,
 *   `count(uid, { filters })`, `create(uid, { data })`, `update(uid, id, { data })`, `delete(uid, id)`;
 * - the Query Engine: `strapi.db.query(uid)` (also `strapi.query(uid)`) with `findOne|findMany|count({ where })`,
 *   `create({ data })`, `update|updateMany({ where, data })`, `delete|deleteMany({ where })`;
 * - the Document Service (v5): `strapi.documents(uid)` with `findOne({ documentId })`, `findFirst|findMany|count({
 *   filters })`, `create({ data })`, `update({ documentId, data })`, `delete({ documentId })`.
 *
 * The receiver must be Strapi itself (`strapi`, `this.strapi`, `ctx.strapi`), or a const that holds a query or a
 * document service of it (`const locks = strapi.db.query("api::lock.lock")`). The model is the content type's name,
 * the last part of its uid (`api::cron-lock.cron-lock` is `cron-lock`). Filters use Strapi's operators (`$eq`,
 * `$ne`, `$in`, `$notIn`, `$lt`, `$lte`, `$gt`, `$gte`, `$null`, `$notNull`, `$not`, `$and`, `$or`); a field given a
 * bare value is compared equal, a relation named by its related document's id (`room: { documentId }`) holds that
 * document, and any other relation filter (`room: { name }`) is a match this recognizer does not read.
 * Strapi's `create` never upserts: a create is a plain insert, exclusive only under a unique attribute the schema
 * declares, which the code does not show.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, Condition, Node, StateAccess } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { evaluate, findProperty, getConstInit, keyName, objectLiteral, unwrap } from "../core/reading/values.js";
import { readObjectFilter, type FieldOperator, type ObjectFilterDialect } from "../core/reading/object-filters.js";
import { dataAssignments } from "./document-api.js";

const STORE = "strapi";
const READS = new Set(["findMany", "findOne", "findFirst", "count"]);
const UPDATES = new Set(["update", "updateMany"]);
const DELETES = new Set(["delete", "deleteMany"]);
const INSERTS = new Set(["create"]);
const RANGE: Record<string, FieldOperator> = { $lt: "lt", $lte: "lte", $gt: "gt", $gte: "gte" };
const EMPTY: Condition = { kind: "and", items: [] };

type Layer = "entityService" | "query" | "documents";

/** `strapi`, `this.strapi`, `ctx.strapi`, `{ strapi }` from a plugin's factory. */
function isStrapi(node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "Identifier") return n.name === "strapi";
  return n.type === "MemberExpression" && keyName(n.property, n.computed) === "strapi";
}

/** The model a uid names: the content type after its namespace (`api::cron-lock.cron-lock` -> `cron-lock`). */
function modelOf(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  const uid = node && evaluate(ctx.sourceCode, node)?.value;
  if (typeof uid !== "string" || uid.length === 0) return undefined;
  const name = uid.includes("::") ? uid.slice(uid.lastIndexOf(".") + 1) : uid;
  return name.length > 0 ? name : undefined;
}

/**
 * The layer and model a call's receiver is: `strapi.entityService` (the model is the call's first argument),
 * `strapi.db.query(uid)`, `strapi.query(uid)`, `strapi.documents(uid)`, or a const holding one of the last three.
 */
function receiverOf(ctx: RecognizerContext, node: Node, depth = 0): { layer: Layer; model?: string } | undefined {
  const n = unwrap(node);
  if (n.type === "MemberExpression" && keyName(n.property, n.computed) === "entityService" && isStrapi(n.object))
    return { layer: "entityService" };
  if (n.type === "CallExpression" && n.callee.type === "MemberExpression" && n.arguments.length === 1) {
    const name = keyName(n.callee.property, n.callee.computed);
    const on = unwrap(n.callee.object);
    const model = modelOf(ctx, n.arguments[0]);
    if (!model) return undefined;
    if (name === "documents" && isStrapi(on)) return { layer: "documents", model };
    if (
      name === "query" &&
      (isStrapi(on) ||
        (on.type === "MemberExpression" && keyName(on.property, on.computed) === "db" && isStrapi(on.object)))
    ) {
      return { layer: "query", model };
    }
    return undefined;
  }
  if (n.type === "Identifier" && depth < 2) {
    const init = getConstInit(ctx.sourceCode, n);
    return init && init.type !== "TSEnumDeclaration" ? receiverOf(ctx, init as Node, depth + 1) : undefined;
  }
  return undefined;
}

/**
 * Strapi's filters (`filters` of the Entity and Document Services, `where` of the Query Engine): `$`-operators on
 * each attribute (`{ $lt: cutoff }`, `{ $null: true }`, `{ $not: { $in: [...] } }`), `$and`/`$or` lists and `$not`.
 * An attribute compared with an object of plain keys filters a relation or component (`room: { name: "x" }`): a
 * match not read, except a relation named by its related document (`room: { documentId: roomId }`, `{ id }`), which
 * holds that document, as `data: { room: roomId }` stores it.
 */
const STRAPI_FILTERS: ObjectFilterDialect = {
  combinators: { $and: "and", $or: "or", $not: "not" },
  operators: {
    $eq: "eq",
    $eqi: "other",
    $ne: "ne",
    $in: "in",
    $notIn: "notIn",
    ...RANGE,
    $null: "null",
    $notNull: "notNull",
    $not: "not",
  },
  reserved: (key) => key.startsWith("$"),
  nested: "other",
  mixed: "other",
  bare: "eq",
  objectOperand: "one",
  fieldValue(sourceCode, field, valueNode) {
    const value = unwrap(valueNode);
    const only = value.type === "ObjectExpression" && value.properties.length === 1 ? value.properties[0] : undefined;
    const key = only?.type === "Property" ? keyName(only.key, only.computed) : undefined;
    if (only?.type !== "Property" || (key !== "documentId" && key !== "id")) return undefined;
    const id = only.value as Node;
    if (unwrap(id).type === "ObjectExpression") return undefined;
    const v = evaluate(sourceCode, id);
    return { kind: "and", items: [{ kind: "pred", field, op: "eq", values: v ? [v] : undefined, node: only }] };
  },
};

function parseFilters(ctx: RecognizerContext, filters: TSESTree.ObjectExpression): Condition {
  return readObjectFilter(ctx.sourceCode, STRAPI_FILTERS, filters);
}

/** A filter property of an options object (`filters`, `where`): read, absent (every row), or unreadable. */
function filterIn(
  ctx: RecognizerContext,
  options: TSESTree.ObjectExpression | undefined,
  key: "filters" | "where",
): Condition {
  const prop = options && findProperty(options, key);
  if (!prop) return EMPTY;
  const obj = objectLiteral(ctx.sourceCode, prop.value);
  return obj ? parseFilters(ctx, obj) : { kind: "opaque", node: prop.value };
}

/** A document named by its id (`update(uid, lock.id, …)`, `{ documentId }`). */
function byId(field: string, node: Node): Condition {
  return { kind: "and", items: [{ kind: "pred", field, op: "eq", values: undefined, node }] };
}

/** The `data` of an options object; undefined when it is missing or not an object this file spells out. */
function dataOf(ctx: RecognizerContext, options: TSESTree.ObjectExpression | undefined): Assignment[] | undefined {
  return dataAssignments(ctx, options && findProperty(options, "data")?.value);
}

export const strapiRecognizer: Recognizer = {
  store: STORE,
  methods: new Set([...READS, ...UPDATES, ...DELETES, ...INSERTS]),
  recognize(call, ctx): StateAccess | undefined {
    const callee = unwrap(call.callee);
    if (callee.type !== "MemberExpression") return undefined;
    const operation = keyName(callee.property, callee.computed);
    if (!operation) return undefined;
    const receiver = receiverOf(ctx, callee.object);
    if (!receiver) return undefined;
    const args = call.arguments as readonly Node[];
    const options = (i: number) => objectLiteral(ctx.sourceCode, args[i]);
    const node = call;
    if (receiver.layer === "entityService") {
      // (uid, params) for finds, counts and creates; (uid, id, params) for findOne, update and delete.
      const model = modelOf(ctx, args[0]);
      if (!model) return undefined;
      if (operation === "findMany" || operation === "count")
        return { access: "read", store: STORE, model, operation, filter: filterIn(ctx, options(1), "filters"), node };
      if (operation === "findOne" && args[1])
        return { access: "read", store: STORE, model, operation, filter: byId("id", args[1]), node };
      if (operation === "create") {
        const data = dataOf(ctx, options(1));
        return (
          data && {
            access: "write",
            store: STORE,
            model,
            operation,
            effect: "insert",
            filter: EMPTY,
            assignments: data,
            node,
          }
        );
      }
      if (operation === "update" && args[1]) {
        const data = dataOf(ctx, options(2));
        return (
          data && {
            access: "write",
            store: STORE,
            model,
            operation,
            filter: byId("id", args[1]),
            assignments: data,
            node,
          }
        );
      }
      if (operation === "delete" && args[1])
        return {
          access: "write",
          store: STORE,
          model,
          operation,
          effect: "delete",
          filter: byId("id", args[1]),
          assignments: [],
          node,
        };
      return undefined;
    }
    const model = receiver.model!;
    if (args.length > 1) return undefined;
    const opts = options(0);
    if (args.length === 1 && !opts) return undefined;
    const docs = receiver.layer === "documents";
    // The Document Service names one document by `documentId`; its other calls filter by `filters`.
    const filter = (): Condition | undefined => {
      if (docs && (operation === "findOne" || operation === "update" || operation === "delete")) {
        const id = opts && findProperty(opts, "documentId");
        return id ? byId("documentId", id.value) : undefined;
      }
      return filterIn(ctx, opts, docs ? "filters" : "where");
    };
    if (READS.has(operation)) {
      const f = filter();
      return f && { access: "read", store: STORE, model, operation, filter: f, node };
    }
    if (INSERTS.has(operation)) {
      const data = dataOf(ctx, opts);
      return (
        data && {
          access: "write",
          store: STORE,
          model,
          operation,
          effect: "insert",
          filter: EMPTY,
          assignments: data,
          node,
        }
      );
    }
    if (DELETES.has(operation)) {
      const f = filter();
      return (
        f && { access: "write", store: STORE, model, operation, effect: "delete", filter: f, assignments: [], node }
      );
    }
    if (UPDATES.has(operation)) {
      const f = filter();
      const data = dataOf(ctx, opts);
      return f && data && { access: "write", store: STORE, model, operation, filter: f, assignments: data, node };
    }
    return undefined;
  },
};
