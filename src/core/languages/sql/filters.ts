/**
 * Filters: a statement's WHERE as the model's `Condition` on its target table. Same-table row pickers (a subquery or
 * CTE selecting from the target) put their own filter in place of the comparison that uses them.
 */
import type { CompareOp, Condition, Node, StaticValue } from "../../model/accesses.js";
import { SWAPPED } from "../../model/conditions.js";
import { child, columnRef, functionArgs, functionName, list, subquery, tableName, text } from "./ast.js";
import type { Ast, ColumnRef } from "./ast.js";
import { isClock, paramRef, staticValues, valueOf } from "./values.js";
import type { Context } from "./values.js";

export interface Scope {
  /** Lower-case target table name, for "same table" tests. */
  readonly target: string;
  /** Lower-case qualifiers that mean the target row (its name, its alias). */
  readonly self: ReadonlySet<string>;
  /** Lower-case qualifiers of FROM items that are row pickers over the target (a CTE or subquery selecting from it). */
  readonly pickers: ReadonlyMap<string, Ast>;
  readonly depth: number;
}

const MAX_DEPTH = 4;
export const TRUE: Condition = { kind: "and", items: [] };

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

function pred(
  field: string,
  op: CompareOp,
  values: readonly StaticValue[] | undefined,
  ctx: Context,
  value?: Node,
): Condition {
  return { kind: "pred", field, op, values, node: ctx.node, ...(value ? { value } : {}) };
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

/** `ANY(SELECT …)` or `SOME(SELECT …)`: the subquery a quantified comparison picks from. */
function quantifiedSubquery(e: Ast | undefined): Ast | undefined {
  if (e?.["type"] !== "function") return undefined;
  const name = functionName(e);
  if (name !== "any" && name !== "some") return undefined;
  const args = functionArgs(e);
  return args.length === 1 ? subquery(args[0]) : undefined;
}

function comparison(e: Ast, scope: Scope, ctx: Context): Condition {
  const operator = (text(e["operator"]) ?? "").toUpperCase();
  const left = child(e, "left");
  const right = child(e, "right");
  let op: CompareOp | undefined = OPERATORS[operator];
  if (operator === "BETWEEN" || operator === "NOT BETWEEN" || /LIKE|SIMILAR|REGEXP|~/.test(operator)) op = "other";
  if (op === undefined) return opaque(ctx);

  // A subquery on the right: same-table row pickers put their filter in place of the comparison. `= ANY(SELECT …)`
  // and `= SOME(SELECT …)` pick as `IN (SELECT …)` does.
  const quantified = quantifiedSubquery(right);
  if (quantified && op === "eq") op = "in";
  const sel = quantified ?? subquery(right);
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
  // The parameter's JavaScript expression (`$1` bound to `job.id`): where the rows the statement names come from.
  const param = "node" in v ? v.node : undefined;
  return pred(field, effective, v.kind === "static" ? [v.value] : undefined, ctx, param);
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

export function condition(e: Ast | undefined, scope: Scope, ctx: Context): Condition {
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
