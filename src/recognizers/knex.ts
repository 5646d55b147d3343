/**
 * Knex query builder chains: a chain rooted at a table call, `knex('jobs')`, `trx('jobs')`, `db('jobs')`,
 * `this.knex('jobs')`, `knex.table('jobs')`, `knex.from('jobs')`, `knex.select('id').from('jobs')`, followed by
 * where-family links and ending in a write or a read.
 *
 * Where each chain is recognised (exactly once):
 * - `.update(…)`, `.del()`, `.delete()`: at that call (`.returning(…)` or `.then(…)` after it do not matter);
 * - `.insert(…)`: at the insert call, unless `.onConflict(…)` follows; then at its `.ignore()` or `.merge(…)`
 *   (where-links after `.merge()` are the condition of the conflict update);
 * - reads: at the last `.first()` / `.select()` of a chain that has a where-link; the read's node is the
 *   outermost call of the chain (`await knex('jobs').select('id').where(…)` is one read).
 *
 * Where-links combine as the SQL knex writes: `where A where B orWhere C` is `(A and B) or C`; callbacks
 * (`where(function () { this.where(…).orWhere(…) })`, `where((qb) => …)`) are parenthesised groups. A chain
 * with no table call at its root (`repo.update(a, b)`, `map.delete(k)`, `hash.update(s)`) is not knex.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, AssignedValue, Condition, Node, StateAccess, TextEdit } from "../core/model/model.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { evaluate, findVariable, getConstInit, isClockReading, isSqlNow, keyName, objectLiteral, staticList, unwrap } from "../core/reading/values.js";

type Call = TSESTree.CallExpression;
type Arg = TSESTree.CallExpressionArgument;
type CompareOp = "eq" | "ne" | "in" | "notIn" | "lt" | "lte" | "gt" | "gte" | "other";

/** One `.name(args)` of a builder chain. */
export interface Link {
  readonly name: string;
  readonly call: Call;
  readonly args: readonly Arg[];
}

/** The calls of a chain from its base outwards up to `call` (included), and the expression the chain starts from. */
export function chainDown(call: Call): { base: Node; links: Link[] } {
  const links: Link[] = [];
  let node: Call = call;
  for (;;) {
    const callee = unwrap(node.callee);
    if (callee.type !== "MemberExpression") return { base: node, links: links.reverse() };
    const name = keyName(callee.property, callee.computed);
    if (name === undefined) return { base: callee, links: [] };
    links.push({ name, call: node, args: node.arguments });
    const object = unwrap(callee.object);
    if (object.type !== "CallExpression") return { base: object, links: links.reverse() };
    node = object;
  }
}

/** The calls made on the result of `call`, innermost first, while `keep` accepts their names. */
export function chainUp(call: Call, keep: (name: string) => boolean): Link[] {
  const links: Link[] = [];
  let node: Node = call;
  for (;;) {
    let parent: Node | undefined = node.parent;
    while (parent && (parent.type === "TSNonNullExpression" || parent.type === "TSAsExpression") && parent.expression === node) {
      node = parent;
      parent = parent.parent;
    }
    if (!parent || parent.type !== "MemberExpression" || parent.object !== node) return links;
    const outer: Node | undefined = parent.parent;
    if (!outer || outer.type !== "CallExpression" || outer.callee !== parent) return links;
    const name = keyName(parent.property, parent.computed);
    if (name === undefined || !keep(name)) return links;
    links.push({ name, call: outer, args: outer.arguments });
    node = outer;
  }
}

/** A static string, or undefined. */
export function staticString(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return v && typeof v.value === "string" ? v.value : undefined;
}

/** The table a chain is about, how its columns may be prefixed, and the quote the file uses. */
export interface TableScope {
  readonly table: string;
  readonly prefixes: readonly string[];
  readonly quote: string;
}

/** `"jobs"`, `"public.jobs"`, `"jobs as j"`: the table, and the names its columns may be prefixed with. */
export function tableScope(ctx: RecognizerContext, node: Node | undefined): TableScope | undefined {
  const text = staticString(ctx, node);
  if (!text) return undefined;
  const m = /^\s*([\w$."]+?)(?:\s+as\s+([\w$"]+))?\s*$/i.exec(text);
  if (!m) return undefined;
  const path = m[1]!.replace(/"/g, "").split(".");
  const table = path[path.length - 1]!;
  if (!table) return undefined;
  const prefixes = [table.toLowerCase()];
  if (m[2]) prefixes.push(m[2].replace(/"/g, "").toLowerCase());
  const raw = node && unwrap(node).type === "Literal" ? ctx.sourceCode.getText(node) : "";
  return { table, prefixes, quote: raw.startsWith('"') ? '"' : "'" };
}

/** `"status"`, `"jobs.status"`, `"j.status"`: the field, or undefined for another table's column or a non-static one. */
export function columnField(ctx: RecognizerContext, scope: TableScope, node: Node | undefined): string | undefined {
  const text = staticString(ctx, node);
  return text === undefined ? undefined : fieldOf(scope, text);
}

/** The field a column name stands for, stripping this table's prefix; undefined for another table's column. */
export function fieldOf(scope: TableScope, column: string): string | undefined {
  const text = column.trim();
  if (!text || !/^[\w$."]+$/.test(text)) return undefined;
  const parts = text.replace(/"/g, "").split(".");
  const field = parts.pop()!;
  if (!field) return undefined;
  if (parts.length > 0 && !scope.prefixes.includes(parts[parts.length - 1]!.toLowerCase())) return undefined;
  return field;
}

export const listOf = (ctx: RecognizerContext, node: Node) => staticList(ctx.sourceCode, node);

export const objectArgument = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

/** Re-exported for Kysely, which shares knex's helpers. */
export { isSqlNow };

/** `knex.fn.now()`, `trx.fn.now(6)`, `knex.raw('now()')`, and the JavaScript clock readings. */
function isKnexClock(ctx: RecognizerContext, node: Node): boolean {
  const n = unwrap(node);
  if (isClockReading(n)) return true;
  if (n.type !== "CallExpression") return false;
  const callee = unwrap(n.callee);
  if (callee.type !== "MemberExpression") return false;
  const name = keyName(callee.property, callee.computed);
  if (name === "now") {
    const object = unwrap(callee.object);
    return object.type === "MemberExpression" && keyName(object.property, object.computed) === "fn";
  }
  if (name === "raw" && n.arguments.length === 1) {
    const text = staticString(ctx, n.arguments[0]);
    return text !== undefined && isSqlNow(text);
  }
  return false;
}

/** The part of the knex API a chain may use: where-links, and links that do not change which rows it touches. */
const WHERE_NAME = /^(?:(or|and)Where|where)(Not)?([A-Z]\w*)?$/;
const NEUTRAL = new Set([
  "select", "column", "columns", "distinct", "distinctOn", "limit", "offset", "orderBy", "orderByRaw", "groupBy",
  "groupByRaw", "having", "havingRaw", "forUpdate", "forShare", "forNoKeyUpdate", "forKeyShare", "skipLocked", "noWait",
  "returning", "transacting", "timeout", "debug", "options", "connection", "queryContext", "comment", "hintComment", "as",
  "join", "innerJoin", "leftJoin", "leftOuterJoin", "rightJoin", "rightOuterJoin", "fullOuterJoin", "crossJoin",
  "joinRaw", "clearSelect", "clearOrder", "clearGroup", "clearHaving", "clearCounters", "withSchema", "from", "table",
  "into", "first",
]);
/** Calls that may follow the end of a query. */
const TRAILING = new Set([
  "returning", "then", "catch", "finally", "asCallback", "transacting", "timeout", "debug", "options", "connection",
  "queryContext", "toSQL", "toString", "toQuery", "stream", "pipe",
]);
const WRITES = new Set(["update", "del", "delete", "insert"]);
const READS = new Set(["first", "select"]);
const KNOWN = (name: string) =>
  WHERE_NAME.test(name) || NEUTRAL.has(name) || WRITES.has(name) || name === "onConflict" || name === "ignore" ||
  name === "merge" || name === "modify" || name === "clearWhere";
/** Links that may come before the table link: `knex.select('id').from('jobs')`. */
const LEADING = new Set(["select", "column", "columns", "distinct", "withSchema"]);
const TABLE_LINKS = new Set(["table", "from", "into"]);
/** A knex instance held in a property: `this.knex('jobs')`, `ctx.db('jobs')`, `this.readDb('jobs')`. */
const INSTANCE_NAME = /^(?:\w*(?:knex|Knex|KNEX|db|Db|DB|trx|Trx))$|^(?:tx|transaction|conn|connection|database|pg|mysql|sqlite|qb|queryBuilder|builder|k)$/;
/** Callables taking a string that are not knex: hashes, i18n, repositories, document refs. */
const NOT_KNEX = /^(?:require|\$|jQuery|_|t|i18n|gettext|create[A-Z]\w*|get(?:Custom)?Repository|getManager|getConnection|model|collection|doc|ref|child|Symbol|String|Number|Boolean|BigInt|URL|Buffer|fetch|gql|graphql|useQuery|useMutation)$/;
/** Methods whose function arguments are knex builder callbacks: `whereIn('id', function () { this.select… })`. */
const CALLBACK_HOSTS = /^(?:(?:or|and)?[wW]here\w*|join|\w+Join|with|withRecursive|union|unionAll|intersect|except|from|select|modify|onConflict|having\w*)$/;

interface Root {
  readonly scope: TableScope;
  /** Index of the first link after the table call. */
  readonly start: number;
}

function methodName(call: Call): string | undefined {
  const callee = unwrap(call.callee);
  return callee.type === "MemberExpression" ? keyName(callee.property, callee.computed) : undefined;
}

/** A function passed to a knex builder method: its `this` / first parameter is a nested builder, not the knex instance. */
function isBuilderCallback(fn: TSESTree.FunctionLike | undefined): boolean {
  const parent = fn?.parent;
  if (!fn || parent?.type !== "CallExpression" || !parent.arguments.includes(fn as TSESTree.Expression)) return false;
  const name = methodName(parent);
  return name !== undefined && CALLBACK_HOSTS.test(name);
}

function isNestedBuilder(ctx: RecognizerContext, base: Node): boolean {
  if (base.type === "ThisExpression") {
    let p: Node | undefined = base.parent;
    while (p && p.type !== "FunctionExpression" && p.type !== "FunctionDeclaration") p = p.parent;
    return isBuilderCallback(p as TSESTree.FunctionLike | undefined);
  }
  if (base.type === "Identifier") {
    const def = findVariable(ctx.sourceCode, base)?.defs[0];
    return def?.type === "Parameter" && isBuilderCallback(def.node as TSESTree.FunctionLike);
  }
  return false;
}

/**
 * A repository's own table accessor, `this.table()` / `this.queueTable()` / `model.jobsQuery()`: a method with no
 * arguments named like a table or query, returning a builder for its table. The model is the name minus
 * `Table`/`Query` (`queueTable` → `queue`), or the name itself (`table`).
 */
const TABLE_ACCESSOR = /^(?:table|query|builder|queryBuilder|\w+Table|\w+Query)$/;

function accessorScope(name: string): TableScope | undefined {
  if (!TABLE_ACCESSOR.test(name)) return undefined;
  const table = name.replace(/(?:Table|Query)$/, "") || name;
  return { table, prefixes: [table.toLowerCase()], quote: "'" };
}

function knexRoot(ctx: RecognizerContext, base: Node, links: readonly Link[]): Root | undefined {
  if (base.type === "CallExpression") {
    const callee = unwrap(base.callee);
    if (callee.type === "MemberExpression" && base.arguments.length === 0 && !callee.computed && callee.property.type === "Identifier") {
      const scope = accessorScope(callee.property.name);
      return scope && { scope, start: 0 };
    }
    if (callee.type !== "Identifier" || NOT_KNEX.test(callee.name)) return undefined;
    const scope = tableScope(ctx, base.arguments[0]);
    return scope && { scope, start: 0 };
  }
  if (base.type !== "Identifier" && base.type !== "ThisExpression" && base.type !== "MemberExpression") return undefined;
  let i = 0;
  while (i < links.length && LEADING.has(links[i]!.name)) i++;
  const link = links[i];
  if (!link) return undefined;
  // `this.table()`, `this.queueTable()`: a repository's accessor for its own table.
  if (i === 0 && link.args.length === 0 && TABLE_ACCESSOR.test(link.name) && base.type !== "Identifier") {
    const scope = accessorScope(link.name);
    return scope && { scope, start: 1 };
  }
  if (TABLE_LINKS.has(link.name)) {
    // `Array.from(…)`, `Buffer.from(…)`: classes, not knex instances; `this`/`qb` in a where callback: a subquery.
    if (base.type === "Identifier" && /^[A-Z]/.test(base.name)) return undefined;
    if (isNestedBuilder(ctx, base)) return undefined;
  } else if (i !== 0 || !INSTANCE_NAME.test(link.name)) return undefined;
  const scope = tableScope(ctx, link.args[0]);
  return scope && { scope, start: i + 1 };
}

// ---- filters ----

type Bool = "and" | "or";
interface Clause {
  readonly bool: Bool;
  readonly cond: Condition;
  readonly link?: Link;
  /** Fields of a plain top-level predicate (for addPredicate: do not add a second condition on them). */
  readonly fields: readonly string[];
}

/** SQL precedence: `A and B or C and D` is `(A and B) or (C and D)`. */
function combine(clauses: readonly Clause[]): Condition {
  const groups: Condition[][] = [];
  for (const c of clauses) {
    if (c.bool === "or" && groups.length > 0) groups.push([c.cond]);
    else if (groups.length === 0) groups.push([c.cond]);
    else groups[groups.length - 1]!.push(c.cond);
  }
  if (groups.length <= 1) return { kind: "and", items: groups[0] ?? [] };
  return { kind: "or", items: groups.map((items): Condition => ({ kind: "and", items })) };
}

/** A value that is SQL, not data: `knex.raw(…)`, `knex.ref(…)`, `knex.fn.now()`, a subquery (callback or chain). */
function isSqlValue(ctx: RecognizerContext, node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "FunctionExpression" || n.type === "ArrowFunctionExpression" || n.type === "TaggedTemplateExpression") return true;
  if (n.type !== "CallExpression") return false;
  const name = methodName(n);
  if (name === "raw" || name === "ref" || isKnexClock(ctx, n)) return true;
  const { base, links } = chainDown(n);
  return knexRoot(ctx, base, links) !== undefined;
}

const OPERATORS: Record<string, CompareOp> = {
  "=": "eq", "==": "eq", "!=": "ne", "<>": "ne", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte", in: "in",
  "not in": "notIn", is: "eq", "is not": "ne", "is distinct from": "ne", "is not distinct from": "eq",
};

export function operatorOf(ctx: RecognizerContext, node: Node | undefined): CompareOp {
  const text = staticString(ctx, node)?.trim().toLowerCase().replace(/\s+/g, " ");
  return (text !== undefined && OPERATORS[text]) || "other";
}

/**
 * `field op value`, at `at`. Equality with a SQL value (raw, subquery) is opaque; an ordering comparison keeps its
 * field (`updated_at < knex.raw("now() - interval '5 minutes'")` judges age) with no static value.
 */
export function comparison(
  ctx: RecognizerContext,
  field: string | undefined,
  op: CompareOp,
  value: Node | undefined,
  at: Node,
  sqlValue: (n: Node) => boolean,
): Condition {
  if (field === undefined || !value || value.type === "SpreadElement") return { kind: "opaque", node: at };
  const v = unwrap(value);
  if (op === "in" || op === "notIn") {
    if (sqlValue(v)) return { kind: "opaque", node: at };
    return { kind: "pred", field, op, values: listOf(ctx, v), node: at };
  }
  if (op === "other") return { kind: "pred", field, op, values: undefined, node: at };
  if (op === "eq" || op === "ne") {
    if (sqlValue(v) || v.type === "ArrayExpression" || v.type === "ObjectExpression") return { kind: "opaque", node: at };
  }
  const ev = evaluate(ctx.sourceCode, v);
  return { kind: "pred", field, op, values: ev ? [ev] : undefined, node: at };
}

function negate(cond: Condition): Condition {
  return { kind: "not", item: cond };
}

class KnexReader {
  constructor(readonly ctx: RecognizerContext, readonly scope: TableScope) {}

  /** `where({ a: 1, b })`: each property an equality; `whereNot({ … })` negates each one (as knex does). */
  objectCondition(object: TSESTree.ObjectExpression, not: boolean): { cond: Condition; fields: string[] } {
    const items: Condition[] = [];
    const fields: string[] = [];
    for (const p of object.properties) {
      if (p.type !== "Property") { items.push({ kind: "opaque", node: p }); continue; }
      const key = keyName(p.key, p.computed);
      const field = key === undefined ? undefined : fieldOf(this.scope, key);
      const cond = comparison(this.ctx, field, "eq", p.value, p, (n) => isSqlValue(this.ctx, n));
      if (field) fields.push(field);
      items.push(not ? negate(cond) : cond);
    }
    return { cond: { kind: "and", items }, fields };
  }

  /** One where-link (or undefined when the name is not one). */
  whereClause(link: Link): Clause | undefined {
    const m = WHERE_NAME.exec(link.name);
    if (!m) return undefined;
    const bool: Bool = m[1] === "or" ? "or" : "and";
    const not = m[2] !== undefined;
    const suffix = m[3] ?? "";
    const args = link.args;
    const at: Node = args[0] ?? link.call;
    const opaque = (): Clause => ({ bool, cond: { kind: "opaque", node: at }, link, fields: [] });
    const sql = (n: Node) => isSqlValue(this.ctx, n);
    const col = () => columnField(this.ctx, this.scope, args[0]);
    const wrap = (cond: Condition, fields: string[] = []): Clause => ({ bool, cond: not ? negate(cond) : cond, link, fields: not ? [] : fields });
    switch (suffix) {
      case "": {
        if (args.length === 1) {
          const a = unwrap(args[0]!);
          if (a.type === "FunctionExpression" || a.type === "ArrowFunctionExpression") return wrap(this.group(a));
          const object = objectArgument(this.ctx, a);
          if (!object) return opaque();
          const { cond, fields } = this.objectCondition(object, not);
          return { bool, cond, link, fields: not ? [] : fields };
        }
        const field = col();
        if (args.length === 2) return wrap(comparison(this.ctx, field, "eq", args[1], at, sql), field ? [field] : []);
        if (args.length === 3) {
          const op = operatorOf(this.ctx, args[1]);
          return wrap(comparison(this.ctx, field, op, args[2], at, sql), field && op === "eq" ? [field] : []);
        }
        return opaque();
      }
      case "In": {
        if (args.length !== 2) return opaque();
        const field = col();
        if (!not) {
          const sub = field && this.subquery(field, args[1]!, at);
          if (sub) return { bool, cond: sub, link, fields: [] };
        }
        return { bool, cond: comparison(this.ctx, field, not ? "notIn" : "in", args[1], at, sql), link, fields: [] };
      }
      case "Null": {
        const field = col();
        if (!field) return opaque();
        return { bool, cond: { kind: "pred", field, op: not ? "ne" : "eq", values: [{ value: null }], node: at }, link, fields: [] };
      }
      case "Between":
      case "Like":
      case "ILike": {
        const field = col();
        if (!field) return opaque();
        return wrap({ kind: "pred", field, op: "other", values: undefined, node: at });
      }
      default:
        return opaque();
    }
  }

  /** The links of a grouped callback's body: `this.where(…).orWhere(…)`, `qb.where(…); qb.orWhere(…)`. */
  private callbackLinks(fn: TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression): Link[] | undefined {
    const param = fn.params[0];
    if (param && param.type !== "Identifier") return undefined;
    if (!param && fn.type !== "FunctionExpression") return undefined;
    const body = fn.body;
    const exprs: Node[] = [];
    if (body.type !== "BlockStatement") exprs.push(body);
    else {
      for (const s of body.body) {
        if (s.type === "ExpressionStatement") exprs.push(s.expression);
        else if (s.type === "ReturnStatement" && s.argument) exprs.push(s.argument);
        else return undefined;
      }
    }
    const out: Link[] = [];
    for (const e of exprs) {
      const call = unwrap(e);
      if (call.type !== "CallExpression") return undefined;
      const { base, links } = chainDown(call);
      const b = unwrap(base);
      const viaParam = param?.type === "Identifier" && b.type === "Identifier" && b.name === param.name;
      if (!viaParam && !(fn.type === "FunctionExpression" && b.type === "ThisExpression")) return undefined;
      out.push(...links);
    }
    return out;
  }

  /** A parenthesised group of where-links. */
  group(fn: TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression): Condition {
    const links = this.callbackLinks(fn);
    if (!links) return { kind: "opaque", node: fn };
    const clauses = this.clauses(links);
    return clauses ? combine(clauses) : { kind: "opaque", node: fn };
  }

  /** Where-links in order; undefined when a link is not one knex offers here. */
  clauses(links: readonly Link[]): Clause[] | undefined {
    let out: Clause[] = [];
    for (const link of links) {
      const clause = this.whereClause(link);
      if (clause) out.push(clause);
      else if (link.name === "modify") out.push({ bool: "and", cond: { kind: "opaque", node: link.call }, link, fields: [] });
      else if (link.name === "clearWhere") out = [];
      else if (!NEUTRAL.has(link.name)) return undefined;
    }
    return out;
  }

  /**
   * `whereIn('id', <select id from the same table where …>)` (a callback or a chain, FOR UPDATE SKIP LOCKED and
   * LIMIT allowed): the rows it updates satisfy the subquery's filter.
   */
  subquery(field: string, value: Node, at: Node): Condition | undefined {
    let v = unwrap(value);
    if (v.type === "Identifier") {
      const init = getConstInit(this.ctx.sourceCode, v);
      if (init) v = unwrap(init);
    }
    let scope: TableScope | undefined;
    let links: Link[] | undefined;
    if (v.type === "FunctionExpression" || v.type === "ArrowFunctionExpression") {
      const all = this.callbackLinks(v);
      const i = all?.findIndex((l) => TABLE_LINKS.has(l.name)) ?? -1;
      if (!all || i < 0) return undefined;
      scope = tableScope(this.ctx, all[i]!.args[0]);
      links = all.filter((_, j) => j !== i);
    } else if (v.type === "CallExpression") {
      const chain = chainDown(v);
      const root = knexRoot(this.ctx, chain.base, chain.links);
      if (!root) return undefined;
      scope = root.scope;
      links = chain.links;
    }
    if (!scope || !links || !sameTable(scope.table, this.scope.table)) return undefined;
    const selected = links.filter((l) => l.name === "select" || l.name === "column" || l.name === "columns").flatMap((l) => l.args);
    if (selected.length !== 1 || columnField(this.ctx, scope, selected[0]) !== field) return undefined;
    const inner = new KnexReader(this.ctx, scope).clauses(links);
    if (!inner || inner.length === 0) return undefined;
    return { kind: "and", items: [{ kind: "pred", field, op: "in", values: undefined, node: at }, combine(inner)] };
  }
}

function sameTable(a: string, b: string): boolean {
  const n = (s: string) => {
    const x = s.replace(/[-_\s]/g, "").toLowerCase();
    return x.length > 3 && x.endsWith("s") && !x.endsWith("ss") ? x.slice(0, -1) : x;
  };
  return n(a) === n(b);
}

// ---- assignments ----

function assignedValue(ctx: RecognizerContext, node: Node): AssignedValue {
  if (isKnexClock(ctx, node)) return { kind: "now" };
  const v = evaluate(ctx.sourceCode, node);
  return v ? { kind: "static", value: v } : { kind: "other" };
}

function objectAssignments(ctx: RecognizerContext, scope: TableScope, object: TSESTree.ObjectExpression): Assignment[] {
  const out: Assignment[] = [];
  for (const p of object.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    const field = key === undefined ? undefined : fieldOf(scope, key);
    if (!field) continue;
    out.push({ field, value: assignedValue(ctx, p.value), node: p, valueNode: p.value });
  }
  return out;
}

/** `.insert({…})` or `.insert([{…}])` with one row. */
function insertedRow(ctx: RecognizerContext, arg: Arg | undefined): TSESTree.ObjectExpression | undefined {
  if (!arg || arg.type === "SpreadElement") return undefined;
  const a = unwrap(arg);
  if (a.type === "ArrayExpression") return a.elements.length === 1 ? objectArgument(ctx, a.elements[0] ?? undefined) : undefined;
  return objectArgument(ctx, a);
}

/** Later assignments of a field replace earlier ones. */
function mergeAssignments(base: readonly Assignment[], over: readonly Assignment[]): Assignment[] {
  const fields = new Set(over.map((a) => a.field));
  return [...base.filter((a) => !fields.has(a.field)), ...over];
}

// ---- edits ----

function quoteField(scope: TableScope, field: string): string {
  return `${scope.quote}${field.replace(/\\/g, "\\\\").replace(new RegExp(scope.quote, "g"), `\\${scope.quote}`)}${scope.quote}`;
}

/** Appends `.where('status', X)` / `.whereNot('status', X)` after the last top-level where-link (or before `before`). */
function predicateAdder(
  scope: TableScope,
  clauses: readonly Clause[],
  before: Call,
): StateAccessEdit | undefined {
  if (clauses.some((c) => c.bool === "or")) return undefined;
  const callee = unwrap(before.callee);
  if (callee.type !== "MemberExpression") return undefined;
  const lastWhere = [...clauses].reverse().find((c) => c.link)?.link;
  const at = lastWhere ? lastWhere.call.range[1] : callee.object.range[1];
  return (field, op, valueText) => {
    if (clauses.some((c) => c.fields.includes(field))) return undefined;
    return { range: [at, at], text: `.${op === "eq" ? "where" : "whereNot"}(${quoteField(scope, field)}, ${valueText})` };
  };
}

type StateAccessEdit = (field: string, op: "eq" | "ne", valueText: string) => TextEdit | undefined;

// ---- recognition ----

function updateAssignments(ctx: RecognizerContext, scope: TableScope, args: readonly Arg[]): Assignment[] | undefined {
  const first = args[0];
  if (!first || first.type === "SpreadElement") return undefined;
  const column = unwrap(first);
  if ((column.type === "Literal" && typeof column.value === "string") || column.type === "TemplateLiteral") {
    // update('status', 'running'[, returning])
    const field = columnField(ctx, scope, column);
    const value = args[1];
    if (!field || !value || value.type === "SpreadElement" || args.length > 3) return undefined;
    return [{ field, value: assignedValue(ctx, value), node: column, valueNode: value }];
  }
  // update({ … }[, returning[, options]]): the second argument is a returning list, never an options object (that
  // is TypeORM's and Sequelize's `update(criteria, values)`)
  const second = args[1] && unwrap(args[1]);
  if (args.length > 3 || (second && !(second.type === "Literal" && typeof second.value === "string") && second.type !== "ArrayExpression")) {
    return undefined;
  }
  const object = objectArgument(ctx, first);
  if (object) return objectAssignments(ctx, scope, object);
  return column.type === "Identifier" || column.type === "MemberExpression" ? [] : undefined;
}

function recognizeKnex(call: Call, ctx: RecognizerContext): StateAccess | undefined {
  const operation = methodName(call);
  if (!operation) return undefined;
  const down = chainDown(call);
  const up = chainUp(call, KNOWN);
  // What follows the recognised call: knex ends a query there (`.returning()`, `.then()`); a client that filters
  // after `.update()` (Supabase's `.from('jobs').update({…}).eq('id', id)`) is not knex.
  const after = chainUp(call, () => true);
  const trailing = (links: readonly Link[]) => links.every((l) => TRAILING.has(l.name));
  const root = knexRoot(ctx, unwrap(down.base), [...down.links, ...up]);
  if (!root) return undefined;
  if (root.start > down.links.length && !READS.has(operation)) return undefined;
  const before = down.links.slice(root.start, -1);
  const reader = new KnexReader(ctx, root.scope);
  const { scope } = root;
  const base = { store: "knex", model: scope.table, operation } as const;

  if (operation === "update" || operation === "del" || operation === "delete") {
    // Knex also takes where-links after the write: `update({…}).where({ id })`. (Supabase filters with `.eq()`.)
    let wheresAfter = 0;
    while (wheresAfter < after.length && WHERE_NAME.test(after[wheresAfter]!.name)) wheresAfter++;
    const clauses = reader.clauses([...before, ...after.slice(0, wheresAfter)]);
    if (!clauses || !trailing(after.slice(wheresAfter))) return undefined;
    const assignments = operation === "update" ? updateAssignments(ctx, scope, call.arguments) : [];
    if (!assignments) return undefined;
    if (operation !== "update" && call.arguments.length > 1) return undefined;
    const addPredicate = predicateAdder(scope, clauses, call);
    return {
      access: "write",
      ...base,
      ...(operation === "update" ? {} : { effect: "delete" as const }),
      filter: combine(clauses),
      assignments,
      node: call,
      ...(addPredicate ? { addPredicate } : {}),
    };
  }

  if (operation === "insert") {
    if (up.some((l) => l.name === "onConflict")) return undefined; // recognised at .ignore() / .merge()
    if (!trailing(after) || before.some((l) => !NEUTRAL.has(l.name)) || call.arguments.length === 0 || call.arguments.length > 2) return undefined;
    const row = insertedRow(ctx, call.arguments[0]);
    return {
      access: "write", ...base, effect: "insert", filter: { kind: "and", items: [] },
      assignments: row ? objectAssignments(ctx, scope, row) : [], node: call,
    };
  }

  if (operation === "ignore" || operation === "merge") {
    const links = down.links.slice(root.start);
    const onConflict = links.length - 2;
    const insert = links.findIndex((l) => l.name === "insert");
    if (links[onConflict]?.name !== "onConflict" || insert < 0 || insert > onConflict) return undefined;
    if (links.slice(0, insert).some((l) => !NEUTRAL.has(l.name))) return undefined;
    if (links.slice(insert + 1, onConflict).some((l) => l.name !== "returning")) return undefined;
    const row = insertedRow(ctx, links[insert]!.args[0]);
    const inserted = row ? objectAssignments(ctx, scope, row) : [];
    if (operation === "ignore") {
      if (call.arguments.length > 0 || !trailing(after)) return undefined;
      return {
        access: "write", ...base, effect: "insert", onConflict: "ignore", filter: { kind: "and", items: [] },
        assignments: inserted, node: call,
      };
    }
    // The row ends up with the inserted values, or on conflict with `merge({…})`'s (merge() and merge([cols])
    // copy inserted values).
    const merged = objectArgument(ctx, call.arguments[0]);
    const assignments = merged ? mergeAssignments(inserted, objectAssignments(ctx, scope, merged)) : inserted;
    let wheres = 0;
    while (wheres < after.length && WHERE_NAME.test(after[wheres]!.name)) wheres++;
    const clauses = reader.clauses(after.slice(0, wheres));
    if (!clauses || !trailing(after.slice(wheres))) return undefined;
    return {
      access: "write", ...base, effect: "insert", onConflict: "update", filter: combine(clauses), assignments, node: call,
    };
  }

  if (READS.has(operation)) {
    // The last first()/select() of the chain, and only reads: a select inside a write chain is not a read.
    if (up.some((l) => READS.has(l.name) || WRITES.has(l.name) || l.name === "onConflict")) return undefined;
    if (!trailing(after.slice(up.length))) return undefined;
    const links = [...down.links, ...up].slice(root.start);
    if (!links.some((l) => WHERE_NAME.test(l.name))) return undefined;
    const clauses = reader.clauses(links);
    if (!clauses) return undefined;
    const top = up.length > 0 ? up[up.length - 1]!.call : call;
    return { access: "read", ...base, filter: combine(clauses), node: top };
  }
  return undefined;
}

export const knexRecognizer: Recognizer = {
  store: "knex",
  methods: new Set(["update", "del", "delete", "insert", "ignore", "merge", "first", "select"]),
  recognize(call, ctx): StateAccess | undefined {
    try {
      return recognizeKnex(call, ctx);
    } catch {
      return undefined;
    }
  },
};
