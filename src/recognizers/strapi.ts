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
import type { Assignment, CompareOp, Condition, Node, StateAccess } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { evaluate, findProperty, getConstInit, keyName, objectLiteral, unwrap } from "../core/reading/values.js";
import { comparison, dataAssignments } from "./document-api.js";

const STORE = "strapi";
const READS = new Set(["findMany", "findOne", "findFirst", "count"]);
const UPDATES = new Set(["update", "updateMany"]);
const DELETES = new Set(["delete", "deleteMany"]);
const INSERTS = new Set(["create"]);
const RANGE: Record<string, CompareOp> = { $lt: "lt", $lte: "lte", $gt: "gt", $gte: "gte" };
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

/** `$null: true` / `$notNull: false` is "is null"; the other way round "is not null"; an unknown flag is unknown. */
function nullTest(ctx: RecognizerContext, field: string, value: Node, isNull: boolean, at: Node): Condition {
  const flag = evaluate(ctx.sourceCode, value)?.value;
  if (typeof flag !== "boolean") return { kind: "pred", field, op: "other", values: undefined, node: at };
  return { kind: "pred", field, op: flag === isNull ? "eq" : "ne", values: [{ value: null }], node: at };
}

/** One attribute's filter: a bare value (equal), or an operator object (`{ $lt: cutoff }`, `{ $null: true }`). */
function fieldFilter(ctx: RecognizerContext, field: string, valueNode: Node, at: Node, depth: number): Condition {
  const value = unwrap(valueNode);
  const obj = value.type === "ObjectExpression" ? value : undefined;
  if (!obj) return comparison(ctx, field, "eq", value, at);
  const items: Condition[] = [];
  // A relation named by its related document (`room: { documentId: roomId }`, `{ id }`): the relation holds that
  // document, as `data: { room: roomId }` stores it.
  const only = obj.properties.length === 1 ? obj.properties[0] : undefined;
  const onlyKey = only?.type === "Property" ? keyName(only.key, only.computed) : undefined;
  if (
    only?.type === "Property" &&
    (onlyKey === "documentId" || onlyKey === "id") &&
    unwrap(only.value as Node).type !== "ObjectExpression"
  ) {
    return comparison(ctx, field, "eq", only.value as Node, only);
  }
  for (const p of obj.properties) {
    const op = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
    if (p.type !== "Property" || op === undefined) return { kind: "opaque", node: p };
    // Any other relation or component filter (`room: { name: "x" }`): a match on another content type, not read here.
    if (!op.startsWith("$")) return { kind: "pred", field, op: "other", values: undefined, node: at };
    if (op === "$eq" || op === "$eqi") items.push(comparison(ctx, field, op === "$eq" ? "eq" : "other", p.value, at));
    else if (op === "$ne") items.push(comparison(ctx, field, "ne", p.value, at));
    else if (op === "$in" || op === "$notIn")
      items.push(comparison(ctx, field, op === "$in" ? "in" : "notIn", p.value, at));
    else if (op in RANGE) items.push(comparison(ctx, field, RANGE[op]!, p.value, at));
    else if (op === "$null" || op === "$notNull") items.push(nullTest(ctx, field, p.value, op === "$null", at));
    else if (op === "$not" && depth < 4)
      items.push({ kind: "not", item: fieldFilter(ctx, field, p.value, at, depth + 1) });
    else items.push({ kind: "pred", field, op: "other", values: undefined, node: at }); // $contains, $between, $startsWith…
  }
  return { kind: "and", items };
}

function parseFilters(ctx: RecognizerContext, filters: TSESTree.ObjectExpression, depth = 0): Condition {
  const items: Condition[] = [];
  for (const p of filters.properties) {
    const key = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
    if (p.type !== "Property" || key === undefined || depth > 4) {
      items.push({ kind: "opaque", node: p });
      continue;
    }
    if (key === "$and" || key === "$or") {
      const list = unwrap(p.value);
      if (list.type !== "ArrayExpression") {
        items.push({ kind: "opaque", node: p });
        continue;
      }
      const parts = list.elements.map((el): Condition => {
        const obj = el && el.type !== "SpreadElement" ? objectLiteral(ctx.sourceCode, el) : undefined;
        return obj ? parseFilters(ctx, obj, depth + 1) : { kind: "opaque", node: el ?? list };
      });
      items.push({ kind: key === "$and" ? "and" : "or", items: parts });
    } else if (key === "$not") {
      const obj = objectLiteral(ctx.sourceCode, p.value);
      items.push(obj ? { kind: "not", item: parseFilters(ctx, obj, depth + 1) } : { kind: "opaque", node: p });
    } else if (key.startsWith("$")) items.push({ kind: "opaque", node: p });
    else items.push(fieldFilter(ctx, key, p.value, p, depth));
  }
  return { kind: "and", items };
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
