/** AST helpers. node-sql-parser's AST differs a little between dialects and versions: read it defensively. */

export type Ast = { readonly [key: string]: unknown };

export function isAst(x: unknown): x is Ast {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
export function child(x: Ast | undefined, key: string): Ast | undefined {
  const v = x?.[key];
  return isAst(v) ? v : undefined;
}
export function list(x: unknown): Ast[] {
  return Array.isArray(x) ? x.filter(isAst) : [];
}
export function text(x: unknown): string | undefined {
  return typeof x === "string" ? x : undefined;
}

/** `now`, `CURRENT_TIMESTAMP`, `pg_catalog.now`. */
export function functionName(e: Ast): string | undefined {
  const name = e["name"];
  if (typeof name === "string") return name.toLowerCase();
  const parts = list(child(e, "name")?.["name"]).map((p) => text(p["value"]));
  const last = parts[parts.length - 1];
  return last?.toLowerCase();
}

export function functionArgs(e: Ast): Ast[] {
  const args = e["args"];
  if (Array.isArray(args)) return list(args);
  return list(child(e, "args")?.["value"]);
}

export interface ColumnRef {
  readonly table?: string;
  readonly column: string;
}

export function columnRef(e: Ast | undefined): ColumnRef | undefined {
  if (!e || e["type"] !== "column_ref") return undefined;
  let c = e["column"];
  if (isAst(c)) c = child(c, "expr")?.["value"];
  if (typeof c !== "string" || c === "*") return undefined;
  const table = text(e["table"]);
  return table ? { table, column: c } : { column: c };
}

/** A table reference `{ db, table, as }`: the name without schema or quotes. */
export function tableName(t: Ast | undefined): string | undefined {
  const name = t && text(t["table"]);
  return name && name.length > 0 ? name : undefined;
}

/** A subquery node: `(SELECT …)` is `{ ast }`, `IN (SELECT …)` an expr_list holding one. */
export function subquery(e: Ast | undefined): Ast | undefined {
  if (!e) return undefined;
  const direct = child(e, "ast");
  if (direct) return direct["type"] === "select" ? direct : undefined;
  if (e["type"] === "expr_list") {
    const items = list(e["value"]);
    if (items.length === 1) return subquery(items[0]);
  }
  return undefined;
}
