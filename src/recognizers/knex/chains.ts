/** Knex recognizer: builder chains (the table call at the root and the links after it), and their models. */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import {
  evaluate,
  findProperty,
  findVariable,
  getConstInit,
  keyName,
  objectLiteral,
  staticList,
  unwrap,
} from "../../core/reading/values.js";
import { methodName } from "../../core/reading/ast.js";
import type { Link } from "../../core/reading/chains.js";

export type Call = TSESTree.CallExpression;
export type Arg = TSESTree.CallExpressionArgument;
export type CompareOp = "eq" | "ne" | "in" | "notIn" | "lt" | "lte" | "gt" | "gte" | "other";

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
/** `${schema}.Task`: a table qualified by a schema known only at run time; the table itself is static. */
function schemaQualified(node: Node | undefined): string | undefined {
  const n = node && node.type !== "SpreadElement" ? unwrap(node) : undefined;
  if (n?.type !== "TemplateLiteral" || n.expressions.length === 0) return undefined;
  const quasis = n.quasis.map((q) => q.value.cooked ?? "");
  if (quasis.slice(0, -1).some((q) => q !== "" && q !== ".")) return undefined;
  const tail = /^\.([\w$]+)$/.exec(quasis[quasis.length - 1]!);
  return tail?.[1];
}

export function tableScope(ctx: RecognizerContext, node: Node | undefined): TableScope | undefined {
  const text = staticString(ctx, node) ?? schemaQualified(node);
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

/** The part of the knex API a chain may use: where-links, and links that do not change which rows it touches. */
export const WHERE_NAME = /^(?:(or|and)Where|where)(Not)?([A-Z]\w*)?$/;
export const NEUTRAL = new Set([
  "select",
  "column",
  "columns",
  "distinct",
  "distinctOn",
  "limit",
  "offset",
  "orderBy",
  "orderByRaw",
  "groupBy",
  "groupByRaw",
  "having",
  "havingRaw",
  "forUpdate",
  "forShare",
  "forNoKeyUpdate",
  "forKeyShare",
  "skipLocked",
  "noWait",
  "returning",
  "transacting",
  "timeout",
  "debug",
  "options",
  "connection",
  "queryContext",
  "comment",
  "hintComment",
  "as",
  "join",
  "innerJoin",
  "leftJoin",
  "leftOuterJoin",
  "rightJoin",
  "rightOuterJoin",
  "fullOuterJoin",
  "crossJoin",
  "joinRaw",
  "clearSelect",
  "clearOrder",
  "clearGroup",
  "clearHaving",
  "clearCounters",
  "withSchema",
  "from",
  "table",
  "into",
  "first",
]);
/** Calls that may follow the end of a query. */
export const TRAILING = new Set([
  "returning",
  "then",
  "catch",
  "finally",
  "asCallback",
  "transacting",
  "timeout",
  "debug",
  "options",
  "connection",
  "queryContext",
  "toSQL",
  "toString",
  "toQuery",
  "stream",
  "pipe",
]);
export const WRITES = new Set(["update", "del", "delete", "insert"]);
export const READS = new Set(["first", "select"]);
export const KNOWN = (name: string) =>
  WHERE_NAME.test(name) ||
  NEUTRAL.has(name) ||
  WRITES.has(name) ||
  name === "onConflict" ||
  name === "ignore" ||
  name === "merge" ||
  name === "modify" ||
  name === "clearWhere";
/** Links that may come before the table link: `knex.select('id').from('jobs')`. */
const LEADING = new Set(["select", "column", "columns", "distinct", "withSchema"]);
export const TABLE_LINKS = new Set(["table", "from", "into"]);
/** Builder links that lock the selected rows for writing until the transaction ends (knex and Kysely alike). */
export const LOCKING_LINKS = new Set(["forUpdate", "forNoKeyUpdate"]);
/** A knex instance held in a property: `this.knex('jobs')`, `ctx.db('jobs')`, `this.readDb('jobs')`. */
const INSTANCE_NAME =
  /^(?:\w*(?:knex|Knex|KNEX|db|Db|DB|trx|Trx))$|^(?:tx|transaction|conn|connection|database|pg|mysql|sqlite|qb|queryBuilder|builder|k)$/;
/** Callables taking a string that are not knex: hashes, i18n, repositories, document refs. */
const NOT_KNEX =
  /^(?:require|\$|jQuery|_|t|i18n|gettext|create[A-Z]\w*|get(?:Custom)?Repository|getManager|getConnection|model|collection|doc|ref|child|Symbol|String|Number|Boolean|BigInt|URL|Buffer|fetch|gql|graphql|useQuery|useMutation)$/;
/** Methods whose function arguments are knex builder callbacks: `whereIn('id', function () { this.select… })`. */
const CALLBACK_HOSTS =
  /^(?:(?:or|and)?[wW]here\w*|join|\w+Join|with|withRecursive|union|unionAll|intersect|except|from|select|modify|onConflict|having\w*)$/;

interface Root {
  readonly scope: TableScope;
  /** Index of the first link after the table call. */
  readonly start: number;
}

export /** A function passed to a knex builder method: its `this` / first parameter is a nested builder, not the knex instance. */
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

/**
 * A module's own table helper that takes the knex instance: `const tables = { jobs: (db: Knex) => db("jobs") }`,
 * then `tables.jobs(db).where(…)`, or `function jobsTable(db) { return db("jobs") }`. The table is the helper's
 * static table name, or, when that comes from elsewhere (`db(Jobs.name)`), the helper's own name.
 */
function helperScope(ctx: RecognizerContext, fnNode: Node | undefined, name: string): TableScope | undefined {
  const fn = fnNode && unwrap(fnNode);
  if (
    !fn ||
    (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression" && fn.type !== "FunctionDeclaration")
  )
    return undefined;
  const param = fn.params[0];
  if (fn.params.length !== 1 || param?.type !== "Identifier") return undefined;
  let body: Node | null | undefined = fn.body;
  if (body?.type === "BlockStatement") {
    const only = body.body.length === 1 ? body.body[0] : undefined;
    body = only?.type === "ReturnStatement" ? only.argument : undefined;
  }
  const call = body && unwrap(body);
  if (call?.type !== "CallExpression" || call.arguments.length !== 1) return undefined;
  const callee = unwrap(call.callee);
  const onParam = callee.type === "Identifier" && callee.name === param.name;
  const tableLink =
    callee.type === "MemberExpression" &&
    unwrap(callee.object).type === "Identifier" &&
    (unwrap(callee.object) as TSESTree.Identifier).name === param.name &&
    TABLE_LINKS.has(keyName(callee.property, callee.computed) ?? "");
  if (!onParam && !tableLink) return undefined;
  // A name known only by reference (`db(ScheduledTasks.name)`) is no table name: the helper's own name is.
  const named = evaluate(ctx.sourceCode, call.arguments[0]!);
  return (
    (named?.symbolic ? undefined : tableScope(ctx, call.arguments[0])) ?? {
      table: name,
      prefixes: [name.toLowerCase()],
      quote: "'",
    }
  );
}

function tableHelper(ctx: RecognizerContext, base: Node, link: Link): TableScope | undefined {
  if (link.args.length !== 1 || base.type !== "Identifier") return undefined;
  const init = getConstInit(ctx.sourceCode, base);
  const object = init && init.type !== "TSEnumDeclaration" ? unwrap(init) : undefined;
  if (object?.type !== "ObjectExpression") return undefined;
  const property = findProperty(object, link.name);
  return property && helperScope(ctx, property.value, link.name);
}

export function knexRoot(ctx: RecognizerContext, base: Node, links: readonly Link[]): Root | undefined {
  if (base.type === "CallExpression") {
    const callee = unwrap(base.callee);
    if (
      callee.type === "MemberExpression" &&
      base.arguments.length === 0 &&
      !callee.computed &&
      callee.property.type === "Identifier"
    ) {
      const scope = accessorScope(callee.property.name);
      return scope && { scope, start: 0 };
    }
    // `(trx || knex)("migrations_lock")`: the transaction when there is one, else the instance.
    const either =
      callee.type === "LogicalExpression" &&
      (callee.operator === "||" || callee.operator === "??") &&
      [callee.left, callee.right].every((side) => {
        const s = unwrap(side);
        const name =
          s.type === "Identifier"
            ? s.name
            : s.type === "MemberExpression" && !s.computed && s.property.type === "Identifier"
              ? s.property.name
              : undefined;
        return name !== undefined && (INSTANCE_NAME.test(name) || /^transacting$|^connection$/.test(name));
      });
    if (!either && (callee.type !== "Identifier" || NOT_KNEX.test(callee.name))) return undefined;
    // `jobsTable(db)`: the module's own function returning `db("jobs")`.
    if (callee.type === "Identifier" && base.arguments.length === 1) {
      const def = findVariable(ctx.sourceCode, callee)?.defs[0];
      const fn =
        def?.type === "FunctionName"
          ? def.node
          : def?.type === "Variable" && def.node.id.type === "Identifier" && def.parent?.kind === "const"
            ? def.node.init
            : undefined;
      const helper = fn ? helperScope(ctx, fn as Node, callee.name) : undefined;
      if (helper) return { scope: helper, start: 0 };
    }
    const scope = tableScope(ctx, base.arguments[0]);
    return scope && { scope, start: 0 };
  }
  if (base.type !== "Identifier" && base.type !== "ThisExpression" && base.type !== "MemberExpression")
    return undefined;
  let i = 0;
  while (i < links.length && LEADING.has(links[i]!.name)) i++;
  const link = links[i];
  if (!link) return undefined;
  // `this.table()`, `this.queueTable()`: a repository's accessor for its own table.
  if (i === 0 && link.args.length === 0 && TABLE_ACCESSOR.test(link.name) && base.type !== "Identifier") {
    const scope = accessorScope(link.name);
    return scope && { scope, start: 1 };
  }
  // `tables.scheduledTasks(db)`: the module's helper for the table, handed the instance.
  if (i === 0) {
    const helper = tableHelper(ctx, base, link);
    if (helper) return { scope: helper, start: 1 };
  }
  if (TABLE_LINKS.has(link.name)) {
    // `Array.from(…)`, `Buffer.from(…)`: classes, not knex instances; `this`/`qb` in a where callback: a subquery.
    if (base.type === "Identifier" && /^[A-Z]/.test(base.name)) return undefined;
    if (isNestedBuilder(ctx, base)) return undefined;
  } else if (i !== 0 || !INSTANCE_NAME.test(link.name)) return undefined;
  const scope = tableScope(ctx, link.args[0]);
  return scope && { scope, start: i + 1 };
}
