/**
 * Statements: a parsed UPDATE, DELETE, INSERT or SELECT as a write or read of one table (filter, assignments,
 * conflict handling), and a query builder's WHERE fragment read as a filter by the same parser.
 */
import type { AssignedValue, Condition, Node, StaticValue } from "../../model/accesses.js";
import { parseSql } from "../sql.js";
import type { Dialect, ParsedSql } from "../sql.js";
import { child, columnRef, functionArgs, functionName, isAst, list, tableName, text } from "./ast.js";
import type { Ast } from "./ast.js";
import { bareClock, valueOf } from "./values.js";
import type { Context, ParamResolver } from "./values.js";
import { TRUE, condition } from "./filters.js";
import type { Scope } from "./filters.js";

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

/**
 * `CASE WHEN … THEN 'failed' ELSE 'pending' END`: the fixed values a CASE picks from, when every branch, the ELSE
 * included, is one (a CASE without an ELSE may keep nothing: NULL).
 */
function caseChoices(e: Ast | undefined, ctx: Context): StaticValue[] | undefined {
  if (!e || e["type"] !== "case" || !Array.isArray(e["args"])) return undefined;
  const branches = e["args"] as Ast[];
  if (!branches.some((b) => b["type"] === "else")) return undefined;
  const out: StaticValue[] = [];
  for (const b of branches) {
    const v = valueOf(child(b, "result"), ctx);
    if (v.kind !== "static") return undefined;
    out.push(v.value);
  }
  return out;
}

function assigned(e: Ast | undefined, ctx: Context): Omit<SqlAssignment, "field"> {
  const v = valueOf(e, ctx);
  if (v.kind === "now") return { value: { kind: "now", ...(e && bareClock(e) ? { bare: true } : {}) } };
  if (v.kind === "static") {
    return {
      value: { kind: "static", value: v.value },
      ...(v.literal ? { literal: sqlLiteral(v.value) } : {}),
      ...(v.node ? { node: v.node } : {}),
    };
  }
  const choices = caseChoices(e, ctx);
  if (choices) return { value: { kind: "other", choices } };
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
