/**
 * Raw SQL → the lock model. Parses statement text with node-sql-parser (PostgreSQL grammar, then MySQL) and
 * translates the AST into what recognizers return: an UPDATE/INSERT/DELETE becomes a write (table, filter,
 * assignments, conflict handling), a SELECT a read. Client syntax (which call holds the text, where its parameters
 * come from) stays in `src/recognizers/sql.ts`; this module only sees text and a way to resolve parameters.
 *
 * The parser is loaded on first use (most files hold no SQL), and results are cached per text. Constructs the
 * PostgreSQL grammar lacks but that do not change which rows a statement touches (`FOR UPDATE SKIP LOCKED`,
 * `::type` casts) are blanked out before parsing, keeping every offset. Nothing here throws: an unreadable
 * statement is no access, and an unreadable part of a filter is `opaque`.
 */
import { createRequire } from "node:module";
import type { AssignedValue, CompareOp, Condition, Node, StaticValue } from "../model/accesses.js";
import { SWAPPED } from "../model/conditions.js";

// ---------------------------------------------------------------------------------------------------------------
// Lexing: mask strings, quoted identifiers and comments (same length), so regexes only see SQL code.

/** Stands in for a masked character inside a string or quoted identifier. */
const MASK = "\u0001";
/** Text put inside a SQL string in place of a value only known at run time (`'${name}'` in a plain template). */
export const HOLE_SENTINEL = "__sql_hole__";

export type LexState = "code" | "single" | "double" | "backtick" | "line" | "block" | "dollar";

/**
 * Masks `text`: contents of strings and quoted identifiers become MASK (their delimiters stay), comments become
 * spaces. Returns the masked text and the state at its end (inside a string, a comment…).
 */
export function maskSql(text: string): { masked: string; state: LexState } {
  let out = "";
  let state: LexState = "code";
  let dollarTag = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    switch (state) {
      case "code":
        if (c === "-" && next === "-") {
          state = "line";
          out += "  ";
          i += 2;
          continue;
        }
        if (c === "/" && next === "*") {
          state = "block";
          out += "  ";
          i += 2;
          continue;
        }
        if (c === "'") state = "single";
        else if (c === '"') state = "double";
        else if (c === "`") state = "backtick";
        else if (c === "$") {
          const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i));
          if (m) {
            state = "dollar";
            dollarTag = m[0];
            out += m[0];
            i += m[0].length;
            continue;
          }
        }
        out += c;
        break;
      case "single":
      case "double":
      case "backtick": {
        const quote = state === "single" ? "'" : state === "double" ? '"' : "`";
        if (c === quote) {
          if (next === quote) {
            out += MASK + MASK;
            i += 2;
            continue;
          }
          state = "code";
          out += c;
        } else out += c === "\n" ? "\n" : MASK;
        break;
      }
      case "line":
        if (c === "\n") {
          state = "code";
          out += "\n";
        } else out += " ";
        break;
      case "block":
        if (c === "*" && next === "/") {
          state = "code";
          out += "  ";
          i += 2;
          continue;
        }
        out += c === "\n" ? "\n" : " ";
        break;
      case "dollar":
        if (text.startsWith(dollarTag, i)) {
          state = "code";
          out += dollarTag;
          i += dollarTag.length;
          continue;
        }
        out += c === "\n" ? "\n" : MASK;
        break;
    }
    i++;
  }
  return { masked: out, state };
}

const STATEMENT_START = /^\s*(?:update|insert|delete|select|with)\b/i;

/** The (masked) text starts, after comments and whitespace, with a statement this module reads. */
export function startsWithStatement(masked: string): boolean {
  return STATEMENT_START.test(masked);
}

/** Positional `?` placeholders (mysql2, knex) in masked text; `??` (knex identifiers) and `?|` / `?&` are not. */
export function questionMarks(masked: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < masked.length; i++) {
    if (masked[i] !== "?") continue;
    const before = masked[i - 1];
    const after = masked[i + 1];
    if (before === "?" || after === "?" || after === "|" || after === "&") continue;
    out.push(i);
  }
  return out;
}

const IDENT = `(?:"${MASK}*"|[A-Za-z_][A-Za-z0-9_$]*)`;
/** `::type`, `::schema."Type"`, `::varchar(20)`, `::text[]`, `::timestamp with time zone`. */
const CAST = new RegExp(
  `::\\s*${IDENT}(?:\\s*\\.\\s*${IDENT})?(?:\\s*\\(\\s*\\d+(?:\\s*,\\s*\\d+)?\\s*\\))?(?:\\s+with(?:out)?\\s+time\\s+zone)?(?:\\s*\\[\\s*\\])*`,
  "gi",
);
/** Row-locking clauses: they decide who waits, not which rows match. */
const LOCKING = new RegExp(
  `\\bfor\\s+(?:no\\s+key\\s+update|update|key\\s+share|share)(?:\\s+of\\s+${IDENT}(?:\\s*\\.\\s*${IDENT})?(?:\\s*,\\s*${IDENT}(?:\\s*\\.\\s*${IDENT})?)*)?(?:\\s+(?:nowait|skip\\s+locked))?`,
  "gi",
);

/**
 * Whether a statement locks the rows it selects for writing until its transaction ends (`FOR UPDATE`,
 * `FOR NO KEY UPDATE`; not the share locks). `masked`: the text with literals masked.
 */
export function locksRowsForWrite(masked: string): boolean {
  LOCKING.lastIndex = 0;
  for (let m = LOCKING.exec(masked); m; m = LOCKING.exec(masked)) if (/update/i.test(m[0])) return true;
  return false;
}

/** Blanks (with spaces, keeping offsets) what the grammars reject but rows do not depend on: locking clauses, casts. */
export function blankUnsupported(text: string, masked: string): string {
  const ranges: [number, number][] = [];
  for (const re of [LOCKING, CAST]) {
    re.lastIndex = 0;
    for (let m = re.exec(masked); m; m = re.exec(masked)) ranges.push([m.index, m.index + m[0].length]);
  }
  if (ranges.length === 0) return text;
  const chars = text.split("");
  for (const [a, b] of ranges) for (let i = a; i < b; i++) chars[i] = chars[i] === "\n" ? "\n" : " ";
  return chars.join("");
}

/** Offset of the first `WHERE` at parenthesis depth 0 in masked text (the statement's own filter), or -1. */
export function topLevelWhere(masked: string): number {
  let depth = 0;
  for (let i = 0; i < masked.length; i++) {
    const c = masked[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (
      depth === 0 &&
      (c === "w" || c === "W") &&
      /^where\b/i.test(masked.slice(i, i + 6)) &&
      !/[A-Za-z0-9_$]/.test(masked[i - 1] ?? " ")
    ) {
      return i;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------------------------
// Parsing, cached per text.

interface SqlParser {
  astify(sql: string, options?: { database?: string }): unknown;
}

const requireFrom = createRequire(import.meta.url);
/** Per-dialect builds (a fraction of the load time of the all-dialects entry), each loaded on first use. */
const BUILDS = { postgresql: "node-sql-parser/build/postgresql.js", mysql: "node-sql-parser/build/mysql.js" } as const;
const parsers: { postgresql?: SqlParser; mysql?: SqlParser } = {};

function parserFor(dialect: Dialect): SqlParser {
  let parser = parsers[dialect];
  if (!parser) {
    const build = requireFrom(BUILDS[dialect]) as { Parser: new () => SqlParser };
    parser = parsers[dialect] = new build.Parser();
  }
  return parser;
}

export type Dialect = "postgresql" | "mysql";
export interface ParsedSql {
  readonly ast: Ast;
  readonly dialect: Dialect;
}

const MAX_CACHE = 2000;
const cache = new Map<string, ParsedSql | null>();

/**
 * A statement whose table is a slot, a value known only at run time (`UPDATE ${table} SET …`, `FROM ${schema}.jobs`):
 * neither grammar reads a parameter where a table name goes, and it names no model to pair, so it is not parsed at
 * all. On real code these were most of the failed parses, each paid twice (PostgreSQL, then MySQL).
 */
const SLOT_TABLE = /\b(?:from|update|into|join)\s+\(?\s*:__p\d/i;

/**
 * Parses one statement: PostgreSQL first, then MySQL (MySQL first when the text uses backticks or `?`
 * placeholders). Several statements (`BEGIN; UPDATE …; COMMIT`) count only when exactly one reads or writes rows.
 */
export function parseSql(text: string, mysqlFirst: boolean): ParsedSql | undefined {
  const key = (mysqlFirst ? "m" : "p") + text;
  const hit = cache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  let result: ParsedSql | null = null;
  if (SLOT_TABLE.test(maskSql(text).masked)) {
    cache.set(key, null);
    return undefined;
  }
  const order: Dialect[] = mysqlFirst ? ["mysql", "postgresql"] : ["postgresql", "mysql"];
  for (const dialect of order) {
    let ast: unknown;
    try {
      ast = parserFor(dialect).astify(text, { database: dialect });
    } catch {
      continue;
    }
    const statements = (Array.isArray(ast) ? ast : [ast]).filter(
      (s): s is Ast => isAst(s) && ["update", "insert", "delete", "select"].includes(String(s["type"])),
    );
    result = statements.length === 1 ? { ast: statements[0]!, dialect } : null;
    break;
  }
  if (cache.size >= MAX_CACHE) cache.clear();
  cache.set(key, result);
  return result ?? undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// AST helpers. node-sql-parser's AST differs a little between dialects and versions: read it defensively.

export type Ast = { readonly [key: string]: unknown };

function isAst(x: unknown): x is Ast {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
function child(x: Ast | undefined, key: string): Ast | undefined {
  const v = x?.[key];
  return isAst(v) ? v : undefined;
}
function list(x: unknown): Ast[] {
  return Array.isArray(x) ? x.filter(isAst) : [];
}
function text(x: unknown): string | undefined {
  return typeof x === "string" ? x : undefined;
}

/** `now`, `CURRENT_TIMESTAMP`, `pg_catalog.now`. */
function functionName(e: Ast): string | undefined {
  const name = e["name"];
  if (typeof name === "string") return name.toLowerCase();
  const parts = list(child(e, "name")?.["name"]).map((p) => text(p["value"]));
  const last = parts[parts.length - 1];
  return last?.toLowerCase();
}

function functionArgs(e: Ast): Ast[] {
  const args = e["args"];
  if (Array.isArray(args)) return list(args);
  return list(child(e, "args")?.["value"]);
}

interface ColumnRef {
  readonly table?: string;
  readonly column: string;
}

function columnRef(e: Ast | undefined): ColumnRef | undefined {
  if (!e || e["type"] !== "column_ref") return undefined;
  let c = e["column"];
  if (isAst(c)) c = child(c, "expr")?.["value"];
  if (typeof c !== "string" || c === "*") return undefined;
  const table = text(e["table"]);
  return table ? { table, column: c } : { column: c };
}

/** A table reference `{ db, table, as }`: the name without schema or quotes. */
function tableName(t: Ast | undefined): string | undefined {
  const name = t && text(t["table"]);
  return name && name.length > 0 ? name : undefined;
}

/** A subquery node: `(SELECT …)` is `{ ast }`, `IN (SELECT …)` an expr_list holding one. */
function subquery(e: Ast | undefined): Ast | undefined {
  if (!e) return undefined;
  const direct = child(e, "ast");
  if (direct) return direct["type"] === "select" ? direct : undefined;
  if (e["type"] === "expr_list") {
    const items = list(e["value"]);
    if (items.length === 1) return subquery(items[0]);
  }
  return undefined;
}

const CLOCK_FUNCTIONS = new Set([
  "now",
  "current_timestamp",
  "localtimestamp",
  "current_date",
  "current_time",
  "localtime",
  "clock_timestamp",
  "statement_timestamp",
  "transaction_timestamp",
  "utc_timestamp",
  "sysdate",
  "getdate",
  "getutcdate",
  "sysdatetime",
]);
const CLOCK_SHIFT_FUNCTIONS = new Set(["date_sub", "date_add", "subdate", "adddate", "timezone", "timestampadd"]);

/** A clock reading, possibly shifted: `now()`, `CURRENT_TIMESTAMP`, `now() - interval '15 minutes'`, `DATE_SUB(NOW(), …)`. */
export function isClock(e: Ast | undefined, depth = 0): boolean {
  if (!e || depth > 6) return false;
  switch (e["type"]) {
    case "function": {
      const name = functionName(e) ?? "";
      if (CLOCK_FUNCTIONS.has(name)) return true;
      return CLOCK_SHIFT_FUNCTIONS.has(name) && functionArgs(e).some((a) => isClock(a, depth + 1));
    }
    case "column_ref": {
      const c = columnRef(e);
      return c !== undefined && c.table === undefined && CLOCK_FUNCTIONS.has(c.column.toLowerCase());
    }
    case "binary_expr": {
      // `now() - interval '5 minutes'` is a clock reading; `now() - updated_at` is an elapsed time.
      const op = text(e["operator"]);
      if (op !== "+" && op !== "-") return false;
      const left = child(e, "left");
      const right = child(e, "right");
      if (hasColumn(left) || hasColumn(right)) return false;
      return isClock(left, depth + 1) || (op === "+" && isClock(right, depth + 1));
    }
    case "cast":
      return isClock(child(e, "expr"), depth + 1);
    default:
      return false;
  }
}

/** The expression reads a column of some row (clock keywords parsed as columns do not count). */
function hasColumn(e: unknown, depth = 0): boolean {
  if (depth > 8) return false;
  if (Array.isArray(e)) return e.some((x) => hasColumn(x, depth + 1));
  if (!isAst(e)) return false;
  if (e["type"] === "column_ref") {
    const c = columnRef(e);
    return c !== undefined && !(c.table === undefined && CLOCK_FUNCTIONS.has(c.column.toLowerCase()));
  }
  return Object.values(e).some((v) => typeof v === "object" && v !== null && hasColumn(v, depth + 1));
}

// ---------------------------------------------------------------------------------------------------------------
// Values and parameters.

/** A parameter as the statement writes it: `$2` (positional), `:__p3` (a slot the recognizer made), `:name`. */
export type ParamRef =
  | { readonly kind: "positional"; readonly index: number }
  | { readonly kind: "slot"; readonly index: number }
  | { readonly kind: "named"; readonly name: string };

/** What a recognizer knows of a parameter: its static value, or that it reads the clock, and the JS node that gives it. */
export interface ParamValue {
  readonly value?: StaticValue;
  readonly now?: boolean;
  readonly node?: Node;
}

export type ParamResolver = (ref: ParamRef) => ParamValue | undefined;

const SLOT_NAME = /^__p(\d+)$/;

function paramRef(e: Ast): ParamRef | undefined {
  if (e["type"] === "var" && e["prefix"] === "$" && typeof e["name"] === "number")
    return { kind: "positional", index: e["name"] };
  if (e["type"] === "param" && typeof e["value"] === "string") {
    const m = SLOT_NAME.exec(e["value"]);
    return m ? { kind: "slot", index: Number(m[1]) } : { kind: "named", name: e["value"] };
  }
  return undefined;
}

type Value =
  | { readonly kind: "static"; readonly value: StaticValue; readonly literal: boolean; readonly node?: Node }
  | { readonly kind: "now" }
  | { readonly kind: "unknown"; readonly param: boolean; readonly node?: Node };

const STRING_TYPES = new Set([
  "single_quote_string",
  "string",
  "double_quote_string",
  "natural_string",
  "regex_string",
]);

function valueOf(e: Ast | undefined, ctx: Context): Value {
  if (!e) return { kind: "unknown", param: false };
  const type = text(e["type"]);
  if (type && STRING_TYPES.has(type) && typeof e["value"] === "string") {
    if (e["value"].includes(HOLE_SENTINEL)) return { kind: "unknown", param: true };
    return { kind: "static", value: { value: e["value"] }, literal: true };
  }
  if (type === "number") {
    const n = typeof e["value"] === "number" ? e["value"] : Number(e["value"]);
    return Number.isFinite(n)
      ? { kind: "static", value: { value: n }, literal: true }
      : { kind: "unknown", param: false };
  }
  if (type === "bool" || type === "boolean")
    return { kind: "static", value: { value: Boolean(e["value"]) }, literal: true };
  if (type === "null") return { kind: "static", value: { value: null }, literal: true };
  if (type === "cast") return valueOf(child(e, "expr"), ctx);
  const ref = paramRef(e);
  if (ref) {
    const p = ctx.resolve(ref);
    if (p?.now) return { kind: "now" };
    if (p?.value) return { kind: "static", value: p.value, literal: false, ...(p.node ? { node: p.node } : {}) };
    return { kind: "unknown", param: true, ...(p?.node ? { node: p.node } : {}) };
  }
  if (isClock(e)) return { kind: "now" };
  return { kind: "unknown", param: false };
}

function staticValues(exprs: readonly Ast[], ctx: Context): StaticValue[] | undefined {
  const out: StaticValue[] = [];
  for (const x of exprs) {
    const v = valueOf(x, ctx);
    if (v.kind !== "static") return undefined;
    out.push(v.value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Filters.

interface Context {
  readonly resolve: ParamResolver;
  /** Where predicates point: the call or tagged template. */
  readonly node: Node;
  /** CTEs of the statement, by lower-case name. */
  readonly ctes: ReadonlyMap<string, Ast>;
  readonly dialect: Dialect;
}

interface Scope {
  /** Lower-case target table name, for "same table" tests. */
  readonly target: string;
  /** Lower-case qualifiers that mean the target row (its name, its alias). */
  readonly self: ReadonlySet<string>;
  /** Lower-case qualifiers of FROM items that are row pickers over the target (a CTE or subquery selecting from it). */
  readonly pickers: ReadonlyMap<string, Ast>;
  readonly depth: number;
}

const MAX_DEPTH = 4;
const TRUE: Condition = { kind: "and", items: [] };

const OPERATORS: Record<string, CompareOp> = {
  "=": "eq",
  "==": "eq",
  "<>": "ne",
  "!=": "ne",
  "<": "lt",
  "<=": "lte",
  ">": "gt",
  ">=": "gte",
  IN: "in",
  "NOT IN": "notIn",
  IS: "eq",
  "IS NOT": "ne",
};
const RANGE = new Set<CompareOp>(["lt", "lte", "gt", "gte"]);

function pred(field: string, op: CompareOp, values: readonly StaticValue[] | undefined, ctx: Context): Condition {
  return { kind: "pred", field, op, values, node: ctx.node };
}

function opaque(ctx: Context): Condition {
  return { kind: "opaque", node: ctx.node };
}

/**
 * The column an operand is about, and whether comparing it flips the direction:
 * `col`, `col + interval …`, `COALESCE(col, …)` compare like `col`; `now() - col` (elapsed time),
 * `EXTRACT(EPOCH FROM now() - col)`, `TIMESTAMPDIFF(SECOND, col, NOW())` compare in the opposite direction
 * (`now() - updated_at > interval '5 minutes'` is `updated_at < now() - interval '5 minutes'`).
 */
function operand(e: Ast | undefined, depth = 0): { col: ColumnRef; mirror: boolean } | undefined {
  if (!e || depth > 4) return undefined;
  if (isClock(e)) return undefined;
  const col = columnRef(e);
  if (col) return { col, mirror: false };
  const type = e["type"];
  if (type === "cast") return operand(child(e, "expr"), depth + 1);
  if (type === "binary_expr") {
    const op = text(e["operator"]);
    const left = child(e, "left");
    const right = child(e, "right");
    // A JSON document's member (`(metadata->>'claimedAt')::timestamptz`): the member is the field compared.
    if (
      (op === "->>" || op === "->") &&
      columnRef(left) &&
      typeof right?.["value"] === "string" &&
      /string$/.test(String(right["type"]))
    ) {
      return { col: { column: right["value"] as string }, mirror: false };
    }
    if (op === "-" && isClock(left)) {
      const inner = operand(right, depth + 1);
      return inner && { col: inner.col, mirror: !inner.mirror };
    }
    if (
      (op === "+" || op === "-") &&
      right &&
      (right["type"] === "interval" || paramRef(right) || right["type"] === "number")
    ) {
      return operand(left, depth + 1);
    }
    return undefined;
  }
  if (type === "extract") {
    const inner = operand(child(child(e, "args"), "source"), depth + 1);
    return inner?.mirror ? inner : undefined;
  }
  if (type === "function") {
    const name = functionName(e);
    const args = functionArgs(e);
    if (name === "coalesce" || name === "ifnull") return args[0] ? operand(args[0], depth + 1) : undefined;
    if (name === "date_add" || name === "adddate" || name === "date_sub" || name === "subdate")
      return args[0] ? operand(args[0], depth + 1) : undefined;
    if (name === "timestampdiff" && args.length === 3 && isClock(args[2])) {
      const inner = operand(args[1], depth + 1);
      return inner && !inner.mirror ? { col: inner.col, mirror: true } : undefined;
    }
    if ((name === "datediff" || name === "age") && args.length === 2 && isClock(args[0])) {
      const inner = operand(args[1], depth + 1);
      return inner && !inner.mirror ? { col: inner.col, mirror: true } : undefined;
    }
    if (name === "age" && args.length === 1) {
      const inner = operand(args[0], depth + 1);
      return inner && !inner.mirror ? { col: inner.col, mirror: true } : undefined;
    }
  }
  return undefined;
}

type Side = "self" | "foreign" | { readonly picker: Ast };

function sideOf(col: ColumnRef, scope: Scope): Side {
  if (col.table === undefined) return "self";
  const q = col.table.toLowerCase();
  if (scope.self.has(q)) return "self";
  const picker = scope.pickers.get(q);
  return picker ? { picker } : "foreign";
}

/** Lower-case name of the target column a SELECT returns as `name` (`id`, `j.id AS id`, `*`), or undefined. */
function selectedColumn(sel: Ast, name: string): string | undefined {
  if (sel["columns"] === "*") return name.toLowerCase();
  for (const c of list(sel["columns"])) {
    const expr = child(c, "expr");
    if (
      expr?.["type"] === "column_ref" &&
      (expr["column"] === "*" || child(child(expr, "column"), "expr")?.["value"] === "*")
    ) {
      return name.toLowerCase();
    }
    const ref = columnRef(expr);
    const alias = text(c["as"]) ?? ref?.column;
    if (ref && alias?.toLowerCase() === name.toLowerCase()) return ref.column.toLowerCase();
  }
  return undefined;
}

/**
 * The rows of the target a SELECT picks, when it selects from the target itself (directly or through a CTE over
 * it): its WHERE, read as a filter on the target. Undefined when it picks from another table.
 */
function pickedRows(sel: Ast, scope: Scope, ctx: Context): Condition | undefined {
  if (scope.depth >= MAX_DEPTH) return undefined;
  const from = list(sel["from"]);
  if (from.length !== 1) return undefined;
  const source = from[0]!;
  const name = tableName(source);
  if (!name) return undefined;
  const alias = text(source["as"]);
  const self = new Set([name.toLowerCase(), ...(alias ? [alias.toLowerCase()] : [])]);
  const inner: Scope = { target: scope.target, self, pickers: new Map(), depth: scope.depth + 1 };
  const where = child(sel, "where");
  const own = where ? condition(where, inner, ctx) : TRUE;
  const cte = ctx.ctes.get(name.toLowerCase());
  if (cte && cte["type"] === "select") {
    const rows = pickedRows(cte, inner, ctx);
    return rows && { kind: "and", items: [rows, own] };
  }
  return name.toLowerCase() === scope.target ? own : undefined;
}

/** `id = (SELECT id FROM same_table WHERE …)`, `id IN (SELECT …)`: the subquery's filter, when it picks target rows by that column. */
function subqueryCondition(col: ColumnRef, sel: Ast, scope: Scope, ctx: Context): Condition | undefined {
  const columns = list(sel["columns"]);
  const selected = columns.length === 1 ? columnRef(child(columns[0], "expr"))?.column : undefined;
  if (selected?.toLowerCase() !== col.column.toLowerCase()) return undefined;
  return pickedRows(sel, scope, ctx);
}

function comparison(e: Ast, scope: Scope, ctx: Context): Condition {
  const operator = (text(e["operator"]) ?? "").toUpperCase();
  const left = child(e, "left");
  const right = child(e, "right");
  let op: CompareOp | undefined = OPERATORS[operator];
  if (operator === "BETWEEN" || operator === "NOT BETWEEN" || /LIKE|SIMILAR|REGEXP|~/.test(operator)) op = "other";
  if (op === undefined) return opaque(ctx);

  // A subquery on the right: same-table row pickers put their filter in place of the comparison.
  const sel = subquery(right);
  if (sel) {
    const lo = columnRef(left);
    if (!lo || sideOf(lo, scope) !== "self") return opaque(ctx);
    if (op === "eq" || op === "in") {
      const rows = subqueryCondition(lo, sel, scope, ctx);
      if (rows) return rows;
      return pred(lo.column, op, undefined, ctx);
    }
    if (op === "notIn" || op === "ne") return pred(lo.column, op, undefined, ctx);
    return opaque(ctx);
  }

  const lo = operand(left);
  const ro = operand(right);
  if (lo && ro) return columnComparison(lo, ro, op, scope, ctx);
  const side = lo ?? ro;
  if (!side) return opaque(ctx);
  const valueExpr = lo ? right : left;
  let effective = lo ? op : SWAPPED[op];
  if (side.mirror) effective = SWAPPED[effective];
  const where = sideOf(side.col, scope);
  if (where !== "self" && !RANGE.has(effective)) return opaque(ctx);
  const field = side.col.column;
  if (side.mirror && !RANGE.has(effective)) return pred(field, "other", undefined, ctx);

  if (operator === "IS" || operator === "IS NOT") {
    const v = valueOf(valueExpr, ctx);
    return v.kind === "static" ? pred(field, effective, [v.value], ctx) : pred(field, "other", undefined, ctx);
  }
  if (effective === "in" || effective === "notIn") {
    return pred(
      field,
      effective,
      valueExpr?.["type"] === "expr_list" ? staticValues(list(valueExpr["value"]), ctx) : undefined,
      ctx,
    );
  }
  if (effective === "other") return pred(field, "other", undefined, ctx);
  // `= ANY(ARRAY['a', 'b'])`, `<> ALL($1)`
  if (valueExpr?.["type"] === "function" && (effective === "eq" || effective === "ne")) {
    const name = functionName(valueExpr);
    if (name === "any" || name === "some" || name === "all") {
      const setOp: CompareOp =
        effective === "eq" ? (name === "all" ? "other" : "in") : name === "all" ? "notIn" : "other";
      const arg = functionArgs(valueExpr)[0];
      const items = arg?.["type"] === "array" ? list(child(arg, "expr_list")?.["value"]) : undefined;
      return pred(field, setOp, items && setOp !== "other" ? staticValues(items, ctx) : undefined, ctx);
    }
  }
  const v = valueOf(valueExpr, ctx);
  return pred(field, effective, v.kind === "static" ? [v.value] : undefined, ctx);
}

/** Both sides name columns: `jobs.id = next.id` (a join with a row picker or another table), `attempts < max_attempts`. */
function columnComparison(
  lo: { col: ColumnRef; mirror: boolean },
  ro: { col: ColumnRef; mirror: boolean },
  op: CompareOp,
  scope: Scope,
  ctx: Context,
): Condition {
  const ls = sideOf(lo.col, scope);
  const rs = sideOf(ro.col, scope);
  if (lo.mirror || ro.mirror) return opaque(ctx);
  for (const [mine, theirs, theirSide] of [
    [lo.col, ro.col, rs],
    [ro.col, lo.col, ls],
  ] as const) {
    if (sideOf(mine, scope) !== "self" || theirSide === "self") continue;
    if (op !== "eq") return opaque(ctx);
    if (
      typeof theirSide === "object" &&
      selectedColumn(theirSide.picker, theirs.column) === mine.column.toLowerCase()
    ) {
      const rows = pickedRows(theirSide.picker, scope, ctx);
      if (rows) return rows;
    }
    // Joined on a value from another table: a run-time value that names rows.
    return pred(mine.column, "eq", undefined, ctx);
  }
  if (ls === "self" && rs === "self") return pred(lo.col.column, "other", undefined, ctx);
  return opaque(ctx);
}

function condition(e: Ast | undefined, scope: Scope, ctx: Context): Condition {
  if (!e) return TRUE;
  const type = e["type"];
  if (type === "binary_expr") {
    const operator = (text(e["operator"]) ?? "").toUpperCase();
    if (operator === "AND" || operator === "&&") {
      return {
        kind: "and",
        items: [condition(child(e, "left"), scope, ctx), condition(child(e, "right"), scope, ctx)],
      };
    }
    // `||` is OR in MySQL, string concatenation in PostgreSQL.
    if (operator === "OR" || (operator === "||" && ctx.dialect === "mysql")) {
      return { kind: "or", items: [condition(child(e, "left"), scope, ctx), condition(child(e, "right"), scope, ctx)] };
    }
    if (operator === "XOR") return opaque(ctx);
    return comparison(e, scope, ctx);
  }
  if (type === "unary_expr" && (text(e["operator"]) ?? "").toUpperCase() === "NOT") {
    return { kind: "not", item: condition(child(e, "expr"), scope, ctx) };
  }
  if (type === "function" && functionName(e) === "not") {
    const args = functionArgs(e);
    return args.length === 1 ? { kind: "not", item: condition(args[0], scope, ctx) } : opaque(ctx);
  }
  if (type === "bool" || type === "boolean") return e["value"] ? TRUE : { kind: "or", items: [] };
  if (type === "expr_list") {
    const items = list(e["value"]);
    return items.length === 1 ? condition(items[0], scope, ctx) : opaque(ctx);
  }
  return opaque(ctx);
}

// ---------------------------------------------------------------------------------------------------------------
// Statements.

export interface SqlAssignment {
  readonly field: string;
  readonly value: AssignedValue;
  /** For a literal: the SQL text that wrote it (`'running'`), so the recognizer can point at it in the source. */
  readonly literal?: string;
  /** For a parameter: the JS expression that gives it. */
  readonly node?: Node;
}

export interface SqlStatement {
  readonly access: "write" | "read";
  /** For writes. */
  readonly effect?: "update" | "insert" | "delete";
  readonly model: string;
  readonly filter: Condition;
  readonly assignments: readonly SqlAssignment[];
  readonly onConflict?: "ignore" | "update";
  /** The statement has a WHERE whose top is not an OR: a predicate can be prepended with `… AND`. */
  readonly extendable: boolean;
  readonly dialect: Dialect;
}

function sqlLiteral(v: StaticValue): string {
  if (typeof v.value === "string") return `'${v.value.replace(/'/g, "''")}'`;
  return v.value === null ? "NULL" : String(v.value).toUpperCase();
}

function assigned(e: Ast | undefined, ctx: Context): Omit<SqlAssignment, "field"> {
  const v = valueOf(e, ctx);
  if (v.kind === "now") return { value: { kind: "now" } };
  if (v.kind === "static") {
    return {
      value: { kind: "static", value: v.value },
      ...(v.literal ? { literal: sqlLiteral(v.value) } : {}),
      ...(v.node ? { node: v.node } : {}),
    };
  }
  // A parameter whose value is known only at run time: the JS expression that gives it (`$2` of `[key, holder]`).
  return { value: { kind: "other" }, ...(v.kind === "unknown" && v.node ? { node: v.node } : {}) };
}

/** `SET a = 1, t.b = now()`: the target's fields (MySQL multi-table updates may set other tables' columns too). */
function setList(
  items: readonly Ast[],
  scope: Scope,
  ctx: Context,
  inserted?: ReadonlyMap<string, Omit<SqlAssignment, "field">>,
): SqlAssignment[] {
  const out: SqlAssignment[] = [];
  for (const item of items) {
    let column = item["column"];
    if (isAst(column)) column = child(column, "expr")?.["value"];
    if (typeof column !== "string") continue;
    const table = text(item["table"]);
    if (table && !scope.self.has(table.toLowerCase())) continue;
    const valueExpr = child(item, "value");
    // `EXCLUDED.col` (PostgreSQL) and `VALUES(col)` (MySQL) stand for the value the insert proposed.
    const proposed = inserted && proposedColumn(valueExpr);
    const fromInsert = proposed !== undefined ? inserted?.get(proposed.toLowerCase()) : undefined;
    out.push({ field: column, ...(fromInsert ?? assigned(valueExpr, ctx)) });
  }
  return out;
}

function proposedColumn(e: Ast | undefined): string | undefined {
  const ref = columnRef(e);
  if (ref?.table?.toLowerCase() === "excluded") return ref.column;
  if (e?.["type"] === "function" && functionName(e) === "values") return columnRef(functionArgs(e)[0])?.column;
  return undefined;
}

function scopeFor(target: Ast, from: readonly Ast[], ctx: Context): Scope {
  const name = tableName(target)!;
  const alias = text(target["as"]);
  const pickers = new Map<string, Ast>();
  for (const f of from) {
    const q = (text(f["as"]) ?? tableName(f))?.toLowerCase();
    if (!q) continue;
    const sub = child(child(f, "expr"), "ast");
    const fromName = tableName(f);
    const picker = sub ?? (fromName ? ctx.ctes.get(fromName.toLowerCase()) : undefined);
    if (picker && picker["type"] === "select") pickers.set(q, picker);
  }
  return {
    target: name.toLowerCase(),
    self: new Set([name.toLowerCase(), ...(alias ? [alias.toLowerCase()] : [])]),
    pickers,
    depth: 0,
  };
}

function extendable(where: Ast | undefined): boolean {
  if (!where) return false;
  const op = (text(where["operator"]) ?? "").toUpperCase();
  return !(where["type"] === "binary_expr" && (op === "OR" || op === "||" || op === "XOR") && !where["parentheses"]);
}

function ctesOf(ast: Ast): Map<string, Ast> {
  const out = new Map<string, Ast>();
  for (const w of list(ast["with"])) {
    const name = text(child(w, "name")?.["value"]) ?? text(w["name"]);
    const stmtNode = child(w, "stmt");
    const stmt = child(stmtNode, "ast") ?? stmtNode;
    if (name && stmt) out.set(name.toLowerCase(), stmt);
  }
  return out;
}

function translateUpdate(ast: Ast, ctx: Context, dialect: Dialect): SqlStatement | undefined {
  const tables = list(ast["table"]);
  const target = tables[0];
  const model = tableName(target);
  if (!target || !model || child(target, "expr")) return undefined;
  const scope = scopeFor(target, [...list(ast["from"]), ...tables.slice(1)], ctx);
  const where = child(ast, "where");
  return {
    access: "write",
    effect: "update",
    model,
    filter: condition(where, scope, ctx),
    assignments: setList(list(ast["set"]), scope, ctx),
    extendable: extendable(where),
    dialect,
  };
}

function translateDelete(ast: Ast, ctx: Context, dialect: Dialect): SqlStatement | undefined {
  const from = list(ast["from"]);
  const target = from[0] ?? list(ast["table"])[0];
  const model = tableName(target);
  if (!target || !model) return undefined;
  const scope = scopeFor(target, from.slice(1), ctx);
  const where = child(ast, "where");
  return {
    access: "write",
    effect: "delete",
    model,
    filter: condition(where, scope, ctx),
    assignments: [],
    extendable: extendable(where),
    dialect,
  };
}

function insertedRow(ast: Ast, ctx: Context): Map<string, Omit<SqlAssignment, "field">> {
  const columns = (Array.isArray(ast["columns"]) ? ast["columns"] : []).map((c: unknown) =>
    typeof c === "string" ? c : isAst(c) ? (text(c["value"]) ?? columnRef(c)?.column) : undefined,
  );
  const values = ast["values"];
  let rows: Ast[][] = [];
  if (Array.isArray(values)) rows = list(values).map((r) => list(r["value"]));
  else if (isAst(values) && values["type"] === "values") rows = list(values["values"]).map((r) => list(r["value"]));
  else if (isAst(values) && values["type"] === "select")
    rows = [list(values["columns"]).map((c) => child(c, "expr") ?? c)];
  const out = new Map<string, Omit<SqlAssignment, "field">>();
  columns.forEach((column, i) => {
    if (!column) return;
    const candidates = rows.map((r) => assigned(r[i], ctx));
    const first = candidates[0];
    if (!first) return;
    // Several rows: a value counts only when every row writes the same.
    const same = candidates.every(
      (c) =>
        c.value.kind === first.value.kind &&
        (c.value.kind !== "static" ||
          (first.value.kind === "static" && c.value.value.value === first.value.value.value)),
    );
    out.set(column, same ? first : { value: { kind: "other" } });
  });
  return out;
}

function translateInsert(ast: Ast, ctx: Context, dialect: Dialect): SqlStatement | undefined {
  const target = list(ast["table"])[0];
  const model = tableName(target);
  if (!target || !model) return undefined;
  const scope = scopeFor(target, [], ctx);
  const row = insertedRow(ast, ctx);
  const byField = new Map<string, SqlAssignment>();
  for (const [field, a] of row) byField.set(field.toLowerCase(), { field, ...a });
  let onConflict: "ignore" | "update" | undefined;
  let filter: Condition = TRUE;
  const action = child(child(ast, "conflict"), "action");
  const actionExpr = child(action, "expr");
  const lowered = new Map([...row].map(([k, v]) => [k.toLowerCase(), v]));
  if (actionExpr?.["type"] === "update") {
    onConflict = "update";
    const where = child(actionExpr, "where");
    filter = condition(where, scope, ctx);
    for (const a of setList(list(actionExpr["set"]), scope, ctx, lowered)) byField.set(a.field.toLowerCase(), a);
  } else if (actionExpr && /nothing/i.test(String(actionExpr["value"] ?? ""))) {
    onConflict = "ignore";
  }
  if (/ignore/i.test(String(ast["prefix"] ?? ""))) onConflict = "ignore";
  const duplicate = child(ast, "on_duplicate_update");
  if (duplicate) {
    onConflict = "update";
    for (const a of setList(list(duplicate["set"]), scope, ctx, lowered)) byField.set(a.field.toLowerCase(), a);
  }
  return {
    access: "write",
    effect: "insert",
    model,
    filter,
    assignments: [...byField.values()],
    ...(onConflict ? { onConflict } : {}),
    extendable: false,
    dialect,
  };
}

const LOCK_FUNCTION = /advisory|^get_lock$|^release_lock$|^is_free_lock$|^is_used_lock$/;

function mentionsLockFunction(e: unknown, depth = 0): boolean {
  if (depth > 8) return false;
  if (Array.isArray(e)) return e.some((x) => mentionsLockFunction(x, depth + 1));
  if (!isAst(e)) return false;
  if (e["type"] === "function" && LOCK_FUNCTION.test(functionName(e) ?? "")) return true;
  return Object.values(e).some((v) => typeof v === "object" && v !== null && mentionsLockFunction(v, depth + 1));
}

function translateSelect(ast: Ast, ctx: Context, dialect: Dialect): SqlStatement | undefined {
  // Advisory locks (`SELECT pg_advisory_lock($1)`, `GET_LOCK(…)`) are another kind of lock: not row reads.
  if (mentionsLockFunction(ast["columns"])) return undefined;
  const from = list(ast["from"]);
  const source = from[0];
  const name = tableName(source);
  if (!source || !name) return undefined;
  // `WITH claimed AS (UPDATE … RETURNING *) SELECT * FROM claimed`: the write is the statement.
  const cte = ctx.ctes.get(name.toLowerCase());
  if (cte) return cte["type"] === "select" ? undefined : translateStatement(cte, ctx, dialect);
  const where = child(ast, "where");
  if (!where) return undefined;
  const scope = scopeFor(source, from.slice(1), ctx);
  return {
    access: "read",
    model: name,
    filter: condition(where, scope, ctx),
    assignments: [],
    extendable: false,
    dialect,
  };
}

function translateStatement(ast: Ast, ctx: Context, dialect: Dialect): SqlStatement | undefined {
  switch (ast["type"]) {
    case "update":
      return translateUpdate(ast, ctx, dialect);
    case "delete":
      return translateDelete(ast, ctx, dialect);
    case "insert":
      return translateInsert(ast, ctx, dialect);
    case "select":
      return translateSelect(ast, ctx, dialect);
    default:
      return undefined;
  }
}

/** The statement as a write or read of one table; undefined when it is neither or its shape is unexpected. */
export function translateSql(parsed: ParsedSql, resolve: ParamResolver, node: Node): SqlStatement | undefined {
  try {
    const ctx: Context = { resolve, node, ctes: ctesOf(parsed.ast), dialect: parsed.dialect };
    return translateStatement(parsed.ast, ctx, parsed.dialect);
  } catch {
    return undefined;
  }
}

const FRAGMENT_TABLE = "__builder_fragment";

/**
 * A WHERE fragment as query builders take it (`"job.status = :status AND job.updatedAt < NOW() - INTERVAL '5
 * minutes'"`), read by the same parser as whole statements: as the WHERE of a SELECT from the builder's table,
 * under `alias` when the builder names one. Named parameters (`:status`) reach `resolve`; a qualifier other than
 * the alias names another (joined) table. Undefined when the fragment does not parse.
 */
export function translateWhere(
  fragment: string,
  resolve: ParamResolver,
  node: Node,
  alias?: string,
): Condition | undefined {
  if (!/\S/.test(fragment)) return undefined;
  const as = alias && /^[A-Za-z_][A-Za-z0-9_]*$/.test(alias) ? ` AS ${alias}` : "";
  const parsed = parseSql(`SELECT * FROM ${FRAGMENT_TABLE}${as} WHERE ${fragment}`, false);
  if (!parsed) return undefined;
  const statement = translateSql(parsed, resolve, node);
  return statement?.access === "read" && statement.model === FRAGMENT_TABLE ? statement.filter : undefined;
}
