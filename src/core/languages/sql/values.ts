/**
 * Values and parameters: literals, clock readings (`now()`, `now() - interval '5 minutes'`) and the parameters a
 * recognizer resolves, and the context a statement is translated in.
 */
import type { Node, StaticValue } from "../../model/accesses.js";
import { HOLE_SENTINEL, parseSql } from "../sql.js";
import type { Dialect } from "../sql.js";
import { child, columnRef, functionArgs, functionName, isAst, text } from "./ast.js";
import type { Ast } from "./ast.js";

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
/** SQLite's date functions read the clock when given `'now'` (`datetime('now')`, `strftime('%s', 'now')`); `unixepoch()` too. */
const SQLITE_DATE_FUNCTIONS = new Set(["datetime", "date", "time", "julianday", "strftime", "unixepoch"]);

/** The clock itself, not shifted: `now()`, `CURRENT_TIMESTAMP`, `datetime('now')` (a cast of one too). */
export function bareClock(e: Ast): boolean {
  if (e["type"] === "cast") {
    const inner = child(e, "expr");
    return inner !== undefined && bareClock(inner);
  }
  if (e["type"] === "binary_expr") return false;
  if (e["type"] === "function" && CLOCK_SHIFT_FUNCTIONS.has(functionName(e) ?? "")) return false;
  return isClock(e);
}

/** A clock reading, possibly shifted: `now()`, `CURRENT_TIMESTAMP`, `now() - interval '15 minutes'`, `DATE_SUB(NOW(), …)`. */
export function isClock(e: Ast | undefined, depth = 0): boolean {
  if (!e || depth > 6) return false;
  switch (e["type"]) {
    case "function": {
      const name = functionName(e) ?? "";
      if (CLOCK_FUNCTIONS.has(name)) return true;
      if (SQLITE_DATE_FUNCTIONS.has(name)) {
        const args = functionArgs(e);
        if (name === "unixepoch" && args.length === 0) return true;
        return args.some((a) => String(a["type"]).endsWith("string") && text(a["value"])?.toLowerCase() === "now");
      }
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

/**
 * SQL text that reads the database's clock and nothing else, as a query builder splices it into a statement
 * (`now()`, `CURRENT_TIMESTAMP`, `now()::timestamptz`, `NOW() - INTERVAL '5 minutes'`, SQLite's `datetime('now')`):
 * read by the same parser and the same `isClock` as whole statements, so a clock is one notion for every store.
 */
export function isSqlClock(sql: string): boolean {
  if (sql.length > 200 || sql.includes(";")) return false;
  const parsed = parseSql(`SELECT ${sql}`, false);
  const columns = parsed?.ast["type"] === "select" ? parsed.ast["columns"] : undefined;
  const only = Array.isArray(columns) && columns.length === 1 ? (columns[0] as Ast) : undefined;
  return isClock(child(only, "expr"));
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

export function paramRef(e: Ast): ParamRef | undefined {
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

export function valueOf(e: Ast | undefined, ctx: Context): Value {
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

export function staticValues(exprs: readonly Ast[], ctx: Context): StaticValue[] | undefined {
  const out: StaticValue[] = [];
  for (const x of exprs) {
    const v = valueOf(x, ctx);
    if (v.kind !== "static") return undefined;
    out.push(v.value);
  }
  return out;
}

/** What a statement is translated with: its parameters, where its predicates point, its CTEs and its dialect. */
export interface Context {
  readonly resolve: ParamResolver;
  /** Where predicates point: the call or tagged template. */
  readonly node: Node;
  /** CTEs of the statement, by lower-case name. */
  readonly ctes: ReadonlyMap<string, Ast>;
  readonly dialect: Dialect;
}
