/**
 * Raw SQL → the lock model. Parses statement text with node-sql-parser (PostgreSQL grammar, then MySQL) and
 * translates the AST into what recognizers return: an UPDATE/INSERT/DELETE becomes a write (table, filter,
 * assignments, conflict handling), a SELECT a read. Client syntax (which call holds the text, where its parameters
 * come from) stays in `src/recognizers/sql/`; this module only sees text and a way to resolve parameters.
 *
 * The parser is loaded on first use (most files hold no SQL), and results are cached per text. Constructs the
 * PostgreSQL grammar lacks but that do not change which rows a statement touches (`FOR UPDATE SKIP LOCKED`,
 * `::type` casts) are blanked out before parsing, keeping every offset. Nothing here throws: an unreadable
 * statement is no access, and an unreadable part of a filter is `opaque`.
 *
 * This file parses, cached per text. The rest is in `sql/`: `lexing.ts` (masking, and what is read from masked text
 * without a parser), `ast.ts` (reading node-sql-parser's AST), `values.ts` (literals, clock readings, parameters),
 * `filters.ts` (a WHERE as a `Condition`) and `statements.ts` (a parsed statement as a write or a read).
 */
import { createRequire } from "node:module";
import { maskSql } from "./sql/lexing.js";
import { isAst } from "./sql/ast.js";
import type { Ast } from "./sql/ast.js";

/** Text put inside a SQL string in place of a value only known at run time (`'${name}'` in a plain template). */
export const HOLE_SENTINEL = "__sql_hole__";

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
