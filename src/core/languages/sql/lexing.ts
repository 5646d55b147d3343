/**
 * Lexing: mask strings, quoted identifiers and comments (same length), so regexes only see SQL code. What is read
 * from masked text without the parser (a statement's first keyword, `?` placeholders, row-locking clauses, the
 * top-level WHERE), and the blanking of what the grammars reject, are here too.
 */

/** Stands in for a masked character inside a string or quoted identifier. */
const MASK = "\u0001";

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

const STATEMENT_START =
  /^\s*(?:(?:update|insert|delete|select|with)\b|do\s+(?:get_lock|release_lock|release_all_locks)\s*\()/i;

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

/** `ORDER BY … LIMIT n` of an UPDATE or DELETE (MySQL's, SQLite's), up to the `RETURNING` PostgreSQL's adds. */
const WRITE_LIMIT = /\border\s+by\b[^()]*?\blimit\s+[^\s;]+/gi;

/**
 * Blanks (with spaces, keeping offsets) what the grammars reject but the kind of rows touched does not depend on:
 * locking clauses, casts, and the `ORDER BY … LIMIT n` of an UPDATE or DELETE, which neither grammar reads beside a
 * `RETURNING` (it says how many rows, not which).
 */
export function blankUnsupported(text: string, masked: string): string {
  const ranges: [number, number][] = [];
  for (const re of [LOCKING, CAST]) {
    re.lastIndex = 0;
    for (let m = re.exec(masked); m; m = re.exec(masked)) ranges.push([m.index, m.index + m[0].length]);
  }
  if (/^\s*(?:update|delete)\b/i.test(masked) && /\breturning\b/i.test(masked)) {
    WRITE_LIMIT.lastIndex = 0;
    for (let m = WRITE_LIMIT.exec(masked); m; m = WRITE_LIMIT.exec(masked))
      if (depthAt(masked, m.index) === 0) ranges.push([m.index, m.index + m[0].length]);
  }
  if (ranges.length === 0) return text;
  const chars = text.split("");
  for (const [a, b] of ranges) for (let i = a; i < b; i++) chars[i] = chars[i] === "\n" ? "\n" : " ";
  return chars.join("");
}

/** The parenthesis depth at `offset` of masked text. */
function depthAt(masked: string, offset: number): number {
  let depth = 0;
  for (let i = 0; i < offset; i++) {
    if (masked[i] === "(") depth++;
    else if (masked[i] === ")") depth--;
  }
  return depth;
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
