/**
 * Raw SQL, whatever the client: the statement text is parsed (see `src/core/sql.ts`) and becomes a write or a read.
 *
 * Where the text comes from:
 * - `X.query(text, params?)`, `X.query({ text, values })` / `{ sql, values }` (pg, mysql2, TypeORM, Sequelize with
 *   `{ bind }` or `{ replacements }`), `X.execute(text, params)` (mysql2);
 * - `X.$executeRawUnsafe(text, ...params)`, `X.$queryRawUnsafe(…)` (Prisma), `knex.raw(text, bindings)`,
 *   `sql.unsafe(text, params)` (postgres.js), `db.prepare(text).run(...params)` (better-sqlite3), and a statement
 *   prepared once into a variable or a field and run elsewhere (`const claim = db.prepare(text)`, `claim.run({ id })`):
 *   made at each run with that run's values, its predicates reported in its text;
 * - tagged templates: `X.$executeRaw\`…\``, `X.$queryRaw\`…\`` (Prisma), `sql\`…\`` (postgres.js, @vercel/postgres,
 *   slonik, Prisma.sql, Drizzle), `SQL\`…\`` (sql-template-strings). Their holes are parameters; a hole that is
 *   itself a `sql` fragment, or `Prisma.raw("…")`, is inlined.
 * The text is a string literal, a template literal (in an untagged template a static hole is inlined, any other is
 * a parameter, or an unknown value inside quotes), a `+` concatenation, or a `const` holding one. Parameters
 * (`$1`, `?`, holes) take the static value of their JS expression when it has one (`["RUNNING", id]`).
 *
 * PostgreSQL advisory-lock functions (`SELECT pg_try_advisory_lock($1)`) become an `AdvisoryLockOp`, with the
 * connection they run on (a pool, a checked-out client, a transaction), for `release-in-finally`.
 *
 * Only text that starts with UPDATE, INSERT, DELETE, SELECT or WITH is parsed, so Drizzle's `sql` fragments
 * (`sql\`now()\``) and other calls named `query`/`execute`/`raw` cost a regex. The access is reported at the call
 * (or the tagged template), and so are its predicates.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  AdvisoryLockOp,
  Assignment,
  Condition,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StaleRowsSpec,
  StateAccess,
  TextEdit,
} from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { isFunction } from "../core/reading/units.js";
import { receiverText } from "../core/reading/ast.js";
import { HOLE_SENTINEL, parseSql, type ParsedSql } from "../core/languages/sql.js";
import {
  blankUnsupported,
  locksRowsForWrite,
  maskSql,
  questionMarks,
  startsWithStatement,
  topLevelWhere,
} from "../core/languages/sql/lexing.js";
import type { ParamRef, ParamValue } from "../core/languages/sql/values.js";
import { translateSql, type SqlAssignment, type SqlStatement } from "../core/languages/sql/statements.js";
import {
  evaluate,
  fieldInit,
  findProperty,
  findVariable,
  getConstInit,
  keyName,
  objectLiteral,
  unwrap,
} from "../core/reading/values.js";
import { normalizeName } from "../core/model/settings.js";
import { catchesDuplicate, failureEndsAttempt, SQL_DUPLICATE } from "../core/reading/failures.js";
import { hasLockWord } from "../core/model/settings.js";
import { isClockReading } from "../core/reading/clock.js";

const STORE = "sql";
/**
 * SQLite's drivers and the adapters written on them (`sqlite`, `sqlite3`, a service's `db_adapter`): `db.run(sql,
 * a, b)`, `db.all(sql, [a])`, `db.get(sql)`. The names are everywhere (`map.get(k)`), so only a first argument
 * whose text opens like a statement counts, as for every method here.
 */
const SQLITE_METHODS = new Set(["run", "all", "get", "each"]);
/**
 * JavaScript helpers named after PostgreSQL's advisory-lock functions (`pgTryAdvisoryLock(pool, key)`,
 * `pgAdvisoryUnlock(pool, key)`): the name says which function the helper sends and at which scope, and the first
 * argument, when it is a client rather than the key, is the connection it runs on.
 */
const ADVISORY_HELPERS: ReadonlySet<string> = new Set(
  ["", "Try"].flatMap((t) =>
    ["", "Xact"].flatMap((x) =>
      ["Lock", "Unlock", "UnlockAll"].flatMap((f) => ["", "Shared"].map((sh) => `pg${t}Advisory${x}${f}${sh}`)),
    ),
  ),
);
const METHODS = new Set([
  "query",
  "execute",
  "$executeRawUnsafe",
  "$queryRawUnsafe",
  "raw",
  "unsafe",
  "prepare",
  ...SQLITE_METHODS,
  ...ADVISORY_HELPERS,
]);
/**
 * A service's own query helper, called as a plain function (`const { query } = require("./db")`, `query(sql,
 * params)`): the SQL text is the evidence, so only a first argument that parses as a statement counts.
 */
const FUNCTIONS = new Set(["query", "execute", ...ADVISORY_HELPERS]);
const TAGS = new Set(["sql", "SQL", "$executeRaw", "$queryRaw"]);
/** Helpers whose static string argument is SQL text spliced in as is (`Prisma.raw("…")`, `sql.raw("…")`). */
const RAW_HELPERS = new Set(["raw", "unsafe"]);
const MAX_DEPTH = 4;

type Quote = "'" | '"' | "`";
/** A piece of statement text; `src` is where its characters sit in the file, one for one, when they do. */
type Segment =
  | { readonly text: string; readonly src?: number; readonly quote?: Quote }
  | { readonly hole: Node; readonly interpolated: boolean; readonly symbolic?: boolean };

interface SqlSource {
  readonly segments: readonly Segment[];
  /** The text was written in the call itself (not in a `const` elsewhere): suggestions may edit it. */
  readonly inline: boolean;
  readonly tagged: boolean;
}

// ---- gathering the text ----

function literalSegment(ctx: RecognizerContext, n: TSESTree.StringLiteral): Segment {
  const raw = n.raw;
  const quote = raw[0] as Quote;
  return raw.slice(1, -1) === n.value ? { text: n.value, src: n.range[0] + 1, quote } : { text: n.value };
}

function quasiSegment(ctx: RecognizerContext, q: TSESTree.TemplateElement): Segment {
  const cooked = q.value.cooked ?? "";
  if (q.value.raw !== cooked) return { text: cooked };
  const source = ctx.sourceCode.text;
  const start = source[q.range[0]] === "`" || source[q.range[0]] === "}" ? q.range[0] + 1 : q.range[0];
  return source.slice(start, start + cooked.length) === cooked
    ? { text: cooked, src: start, quote: "`" }
    : { text: cooked };
}

function tagName(tag: Node): string | undefined {
  const t = unwrap(tag);
  if (t.type === "Identifier") return t.name;
  if (t.type === "MemberExpression") return keyName(t.property, t.computed);
  return undefined;
}

/** A hole of a tagged template: a nested `sql` fragment or a raw helper is text; anything else is a parameter. */
function taggedHole(ctx: RecognizerContext, expr: Node, depth: number): Segment[] {
  const e = unwrap(expr);
  if (e.type === "TaggedTemplateExpression" && TAGS.has(tagName(e.tag) ?? "")) {
    return templateSegments(ctx, e.quasi, true, depth + 1) ?? [{ hole: expr, interpolated: false }];
  }
  if (e.type === "CallExpression" && e.arguments.length === 1) {
    const callee = unwrap(e.callee);
    const name = callee.type === "MemberExpression" ? keyName(callee.property, callee.computed) : undefined;
    const arg = e.arguments[0]!;
    const v = name && RAW_HELPERS.has(name) && arg.type !== "SpreadElement" ? evaluate(ctx.sourceCode, arg) : undefined;
    if (v && typeof v.value === "string") return [{ text: v.value }];
  }
  if (e.type === "MemberExpression" && keyName(e.property, e.computed) === "empty") return [];
  return [{ hole: expr, interpolated: false }];
}

function templateSegments(
  ctx: RecognizerContext,
  tpl: TSESTree.TemplateLiteral,
  tagged: boolean,
  depth: number,
): Segment[] | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const out: Segment[] = [];
  tpl.quasis.forEach((q, i) => {
    out.push(quasiSegment(ctx, q));
    const expr = tpl.expressions[i];
    if (!expr) return;
    if (tagged) out.push(...taggedHole(ctx, expr, depth));
    else out.push(...interpolation(ctx, expr));
  });
  return out;
}

/**
 * `${x}` in an untagged template, or `+ x`: a static value is text; anything else is only known at run time. An
 * optional filter term (`${type ? `AND type = '${type}'` : ""}`) only narrows what the rest matches: one more AND
 * term, unknown.
 */
function interpolation(ctx: RecognizerContext, expr: Node): Segment[] {
  const v = evaluate(ctx.sourceCode, expr);
  // `${JobStatus.Processing}` of an enum declared elsewhere: a value whose text is unknown, known by its name.
  if (v?.symbolic) return [{ hole: expr, interpolated: true, symbolic: true }];
  if (v) return [{ text: String(v.value) }];
  const e = unwrap(expr);
  if (
    e.type === "ConditionalExpression" &&
    [e.consequent, e.alternate].every((b) => optionalAndTerm(ctx, b)) &&
    [e.consequent, e.alternate].some((b) => !isEmptyText(ctx, b))
  ) {
    return [{ text: " AND " }, { hole: expr, interpolated: true }, { text: " " }];
  }
  return [{ hole: expr, interpolated: true }];
}

function isEmptyText(ctx: RecognizerContext, n: Node): boolean {
  const v = evaluate(ctx.sourceCode, n);
  return v !== undefined && v.value === "";
}

/** Empty text, or text that starts with `AND ` (a template whose first quasi does). */
function optionalAndTerm(ctx: RecognizerContext, n: Node): boolean {
  if (isEmptyText(ctx, n)) return true;
  const u = unwrap(n);
  const first =
    u.type === "TemplateLiteral"
      ? (u.quasis[0]?.value.cooked ?? undefined)
      : u.type === "Literal" && typeof u.value === "string"
        ? u.value
        : undefined;
  return first !== undefined && /^\s*and\s/i.test(first);
}

function textSegments(ctx: RecognizerContext, node: Node, depth: number): Segment[] | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "Literal":
      return typeof n.value === "string" ? [literalSegment(ctx, n as TSESTree.StringLiteral)] : undefined;
    case "TemplateLiteral":
      return templateSegments(ctx, n, false, depth);
    case "Identifier": {
      const init = getConstInit(ctx.sourceCode, n);
      return init ? textSegments(ctx, init, depth + 1) : undefined;
    }
    case "BinaryExpression": {
      if (n.operator !== "+") return undefined;
      const left = textSegments(ctx, n.left, depth + 1);
      if (!left) return undefined;
      return [...left, ...(textSegments(ctx, n.right, depth + 1) ?? interpolation(ctx, n.right))];
    }
    default:
      return undefined;
  }
}

/** A quick look before any work: does the text start with a statement keyword (after comments)? */
function looksLikeStatement(segments: readonly Segment[]): boolean {
  let head = "";
  for (const s of segments) {
    if (!("text" in s)) break;
    head += s.text;
    if (head.length > 200) break;
  }
  return startsWithStatement(maskSql(head).masked);
}

// ---- parameters ----

interface Params {
  /** `$1`…`$n` and positional `?`, in order. */
  readonly positional?: readonly (Node | undefined)[];
  /** The array literal written in the call that holds them (`query(text, [id, worker])`): a suggestion may add one. */
  readonly inlineArray?: TSESTree.ArrayExpression;
  /** `:name` (knex named bindings, Sequelize replacements). */
  readonly named?: TSESTree.ObjectExpression;
}

const constObject = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

/** The value of an object literal's property `name`. */
const property = (object: TSESTree.ObjectExpression, name: string): Node | undefined =>
  findProperty(object, name)?.value;

function paramList(ctx: RecognizerContext, node: Node | undefined): (Node | undefined)[] | undefined {
  if (!node) return undefined;
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, n);
    if (!init) return undefined;
    n = unwrap(init);
  }
  if (n.type !== "ArrayExpression") return undefined;
  const out: (Node | undefined)[] = [];
  for (const el of n.elements) {
    if (el?.type === "SpreadElement") break;
    out.push(el ?? undefined);
  }
  return out;
}

/** `[a, b]`, `{ bind: [...] }`, `{ replacements: [...] | {...} }`, `{ k: v }` for named bindings. */
function paramsFrom(ctx: RecognizerContext, node: Node | undefined): Params {
  const positional = paramList(ctx, node);
  if (positional) return { positional, ...inlineArray(node) };
  const object = constObject(ctx, node);
  if (!object) return {};
  for (const key of ["bind", "replacements", "values"]) {
    const value = property(object, key);
    if (!value) continue;
    const list = paramList(ctx, value);
    if (list) return { positional: list };
    const named = constObject(ctx, value);
    return named ? { named } : {};
  }
  return { named: object };
}

/** `{ inlineArray }` where `node` is an array literal written in place (not a `const` other statements may share). */
function inlineArray(node: Node | undefined): Pick<Params, "inlineArray"> {
  const n = node && unwrap(node);
  return n?.type === "ArrayExpression" ? { inlineArray: n } : {};
}

function paramValue(ctx: RecognizerContext, node: Node | undefined): ParamValue | undefined {
  if (!node) return undefined;
  if (isClockReading(node)) return { now: true, node };
  const value = evaluate(ctx.sourceCode, node);
  return value ? { value, node } : { node };
}

// ---- the call shapes ----

interface Found {
  readonly source: SqlSource;
  readonly params: Params;
  /** Where the statement's text is written, when not at the call: a statement prepared once and run here. */
  readonly textAt?: Node;
}

// ---- statements prepared once and run elsewhere ----

/** The methods that run a prepared statement (better-sqlite3, sqlite3, node:sqlite, bun:sqlite). */
const RUNNERS = SQLITE_METHODS;

/**
 * A prepare call whose statement is kept to be run later: `const stmt = db.prepare(…)`, `stmt = …`,
 * `this.stmt = db.prepare(…)`, a class field, an object's property (`{ claim: db.prepare(…) }`).
 */
function isHeld(prepare: TSESTree.CallExpression): boolean {
  const p = prepare.parent;
  if (p?.type === "VariableDeclarator") return p.init === prepare;
  if (p?.type === "AssignmentExpression") return p.right === prepare;
  if (p?.type === "PropertyDefinition") return p.value === prepare;
  return p?.type === "Property" && p.value === prepare;
}

const isPrepare = (n: Node | null | undefined): n is TSESTree.CallExpression => {
  const c = n && unwrap(n);
  return (
    c?.type === "CallExpression" &&
    c.callee.type === "MemberExpression" &&
    keyName(c.callee.property, c.callee.computed) === "prepare"
  );
};

/**
 * The prepare call a runner's receiver holds: a `const` (or a `let` never given another value) initialised with
 * `db.prepare(…)`, or a class field so initialised (`fieldInit`: its property, or `this.x = …` in the constructor).
 */
function preparedFor(ctx: RecognizerContext, receiver: Node): TSESTree.CallExpression | undefined {
  // `.get(`, `.all(` and `.run(` are everywhere (`map.get(k)`, `Promise.all(…)`): look only in files that prepare.
  let prepares = ctx.scratch.get("sql:prepares") as boolean | undefined;
  if (prepares === undefined) ctx.scratch.set("sql:prepares", (prepares = ctx.sourceCode.text.includes(".prepare(")));
  if (!prepares) return undefined;
  const r = unwrap(receiver);
  const init =
    r.type === "Identifier"
      ? getConstInit(ctx.sourceCode, r)
      : r.type === "MemberExpression" && unwrap(r.object).type === "ThisExpression"
        ? fieldInit(r)
        : undefined;
  return isPrepare(init) ? (unwrap(init) as TSESTree.CallExpression) : undefined;
}

/** A runner's arguments as the statement's parameters: one object of named ones, or positional ones. */
function runnerParams(ctx: RecognizerContext, args: readonly TSESTree.CallExpressionArgument[]): Params {
  return args.length === 1 && args[0]!.type !== "SpreadElement" && unwrap(args[0]!).type === "ObjectExpression"
    ? paramsFrom(ctx, args[0])
    : { positional: args.map((a) => (a.type === "SpreadElement" ? undefined : a)) };
}

function fromCall(ctx: RecognizerContext, call: TSESTree.CallExpression, method: string): Found | undefined {
  const callee = unwrap(call.callee);
  // `stmt.run({ id })` of `const stmt = db.prepare("UPDATE …")`: the statement's text, this run's values.
  if (RUNNERS.has(method) && callee.type === "MemberExpression") {
    const prepare = preparedFor(ctx, callee.object);
    if (prepare) {
      const text = prepare.arguments[0];
      if (!text || text.type === "SpreadElement") return undefined;
      const segments = textSegments(ctx, text, 0);
      return segments
        ? {
            source: { segments, inline: false, tagged: false },
            params: runnerParams(ctx, call.arguments),
            textAt: prepare,
          }
        : undefined;
    }
  }
  const [first, second] = call.arguments;
  if (!first || first.type === "SpreadElement") return undefined;
  const argNode = unwrap(first);
  // Cheap shape test before anything else: calls named `query`/`raw` are everywhere, and SQLite's `get`/`all`/`run`
  // far more (`map.get(key)`, `Promise.all(list)`): for those only statement text in place, or a const holding it.
  if (!["Literal", "TemplateLiteral", "Identifier", "BinaryExpression", "ObjectExpression"].includes(argNode.type))
    return undefined;
  if (SQLITE_METHODS.has(method) && !sqliteText(ctx, argNode)) return undefined;
  let textNode: Node = first;
  let params: Params = {};
  const config = method === "query" || method === "execute" ? constObject(ctx, first) : undefined;
  if (config) {
    const t = property(config, "text") ?? property(config, "sql");
    if (!t) return undefined;
    textNode = t;
    params = {
      positional: paramList(ctx, property(config, "values")) ?? [],
      ...inlineArray(property(config, "values")),
    };
    if (second && second.type !== "SpreadElement" && !params.positional?.length) params = paramsFrom(ctx, second);
  } else if (method === "$executeRawUnsafe" || method === "$queryRawUnsafe") {
    params = { positional: call.arguments.slice(1).map((a) => (a.type === "SpreadElement" ? undefined : a)) };
  } else if (method === "prepare") {
    // better-sqlite3: db.prepare(text).run(a, b) / .get(…) / .all(…)
    const parent = call.parent;
    const runner =
      parent?.type === "MemberExpression" && parent.object === call && parent.parent?.type === "CallExpression"
        ? parent.parent
        : undefined;
    // Prepared into a variable or a field: the statement is made at each run (with that run's values), not here;
    // where the runs are not known (a variable given another statement too), nothing is.
    if (!runner && isHeld(call)) return undefined;
    params = runnerParams(ctx, runner?.arguments ?? []);
  } else if (
    SQLITE_METHODS.has(method) &&
    second &&
    second.type !== "SpreadElement" &&
    !["ArrayExpression", "ObjectExpression"].includes(unwrap(second).type)
  ) {
    // Bindings one by one (`db.run(sql, a, b)`), the node-style callback last.
    const args = call.arguments.slice(1);
    params = {
      positional: args
        .filter((a, i) => !(i === args.length - 1 && a.type !== "SpreadElement" && isFunction(unwrap(a))))
        .map((a) => (a.type === "SpreadElement" ? undefined : a)),
    };
  } else if (second && second.type !== "SpreadElement") {
    params = paramsFrom(ctx, second);
  }
  const segments = textSegments(ctx, textNode, 0);
  if (!segments) return undefined;
  const t = unwrap(textNode).type;
  return { source: { segments, inline: t === "Literal" || t === "TemplateLiteral", tagged: false }, params };
}

/** A string or template in place, or a `const` of the module holding one: what a SQLite call's text can be. */
function sqliteText(ctx: RecognizerContext, node: Node): boolean {
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, n);
    if (!init || init.type === "TSEnumDeclaration") return false;
    n = unwrap(init);
  }
  return (
    (n.type === "Literal" && typeof n.value === "string") ||
    n.type === "TemplateLiteral" ||
    n.type === "BinaryExpression"
  );
}

// ---- rendering and parsing ----

interface Rendered {
  /** The text with every hole as `:__pK` (before positional `?` are numbered): what source offsets map into. */
  readonly plain: string;
  readonly masked: string;
  readonly pieces: readonly {
    readonly start: number;
    readonly length: number;
    readonly src: number;
    readonly quote: Quote;
  }[];
  /** What each `:__pK` stands for. */
  readonly slots: readonly (Node | undefined)[];
  /** The text handed to the parser. */
  readonly parseText: string;
  readonly mysqlFirst: boolean;
}

function render(source: SqlSource, params: Params): Rendered {
  let plain = "";
  const pieces: { start: number; length: number; src: number; quote: Quote }[] = [];
  const slots: (Node | undefined)[] = [];
  for (const s of source.segments) {
    if ("text" in s) {
      if (s.src !== undefined && s.quote)
        pieces.push({ start: plain.length, length: s.text.length, src: s.src, quote: s.quote });
      plain += s.text;
      continue;
    }
    if (s.interpolated) {
      const state = maskSql(plain).state;
      // `'${name}'`: a value inside a SQL string, only known at run time.
      if (state === "single" || state === "double" || state === "dollar") {
        plain += HOLE_SENTINEL;
        continue;
      }
      slots.push(s.symbolic ? s.hole : undefined);
    } else {
      slots.push(s.hole);
    }
    plain += `:__p${slots.length - 1}`;
  }
  // SQLite's other named parameters, `@id` and `$id`, are `:id` when the run hands one object of named values.
  if (params.named) {
    const m = maskSql(plain).masked;
    plain = plain.replace(/[@$](?=[A-Za-z_]\w*)/g, (c, at: number) =>
      m[at] === c && !/[\w@$:]/.test(m[at - 1] ?? "") ? ":" : c,
    );
  }
  const masked = maskSql(plain).masked;
  const marks = questionMarks(masked);
  let parseText = plain;
  if (marks.length > 0) {
    let out = "";
    let last = 0;
    marks.forEach((pos, i) => {
      slots.push(params.positional?.[i]);
      out += `${plain.slice(last, pos)}:__p${slots.length - 1}`;
      last = pos + 1;
    });
    parseText = out + plain.slice(last);
  }
  const parseMasked = marks.length > 0 ? maskSql(parseText).masked : masked;
  return {
    plain,
    masked,
    pieces,
    slots,
    parseText: blankUnsupported(parseText, parseMasked),
    mysqlFirst: marks.length > 0 || parseMasked.includes("`"),
  };
}

function resolver(ctx: RecognizerContext, rendered: Rendered, params: Params) {
  return (ref: ParamRef): ParamValue | undefined => {
    if (ref.kind === "slot") return paramValue(ctx, rendered.slots[ref.index]);
    if (ref.kind === "positional") return paramValue(ctx, params.positional?.[ref.index - 1]);
    return params.named ? paramValue(ctx, property(params.named, ref.name)) : undefined;
  };
}

/** Where plain-text offsets [from, to) sit in the file, when one piece holds them one for one. */
function sourceRange(
  rendered: Rendered,
  from: number,
  to: number,
): { range: [number, number]; quote: Quote } | undefined {
  for (const p of rendered.pieces) {
    if (from >= p.start && to <= p.start + p.length)
      return { range: [p.src + (from - p.start), p.src + (to - p.start)], quote: p.quote };
  }
  return undefined;
}

/**
 * The node an assignment's value is read from: the parameter's JS expression, or the SQL literal itself
 * (`'running'`, located in the file), so that `getText` gives text a suggestion can reuse.
 */
function valueNode(ctx: RecognizerContext, rendered: Rendered, a: SqlAssignment, fallback: Node): Node {
  if (a.node) return a.node;
  if (!a.literal) return fallback;
  // Only string literals: `'running'` is valid JS as well, `TRUE` is not.
  if (!a.literal.startsWith("'")) return fallback;
  for (let at = rendered.plain.indexOf(a.literal); at >= 0; at = rendered.plain.indexOf(a.literal, at + 1)) {
    if (rendered.masked[at] !== "'") continue;
    const where = sourceRange(rendered, at, at + a.literal.length);
    if (!where || ctx.sourceCode.text.slice(where.range[0], where.range[1]) !== a.literal) continue;
    const loc = {
      start: ctx.sourceCode.getLocFromIndex(where.range[0]),
      end: ctx.sourceCode.getLocFromIndex(where.range[1]),
    };
    return {
      type: "Literal",
      value: a.literal,
      raw: a.literal,
      range: where.range,
      loc,
      parent: fallback,
    } as unknown as Node;
  }
  return fallback;
}

// ---- suggestions ----

function fieldsOf(c: Condition, out = new Set<string>()): Set<string> {
  if (c.kind === "pred") out.add(normalizeName(c.field));
  else if (c.kind === "and" || c.kind === "or") for (const i of c.items) fieldsOf(i, out);
  else if (c.kind === "not") fieldsOf(c.item, out);
  return out;
}

/** A value's source text as SQL: `"RUNNING"`, `'RUNNING'` → `'RUNNING'`; numbers and booleans as they are. */
function sqlValue(valueText: string, tagged: boolean): string | undefined {
  const t = valueText.trim();
  const quoted = /^(['"`])([^'"`\\$]*)\1$/.exec(t);
  if (quoted) return `'${quoted[2]}'`;
  if (/^-?\d+(?:\.\d+)?$/.test(t) || /^(?:true|false|null)$/i.test(t)) return t.toUpperCase();
  // In a tagged template any JS expression can be a parameter.
  return tagged && !t.includes("`") ? `\${${t}}` : undefined;
}

function escapeFor(quote: Quote, s: string): string {
  if (quote === "`") return s.replace(/\\/g, "\\\\").replace(/`/g, "\\`");
  return s.replace(/\\/g, "\\\\").replace(new RegExp(quote, "g"), `\\${quote}`);
}

/** `WHERE` + ` field = 'value' AND`, written into the statement text in the file. */
function predicateEdit(
  ctx: RecognizerContext,
  rendered: Rendered,
  statement: SqlStatement,
  source: SqlSource,
  params: Params,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  if (fieldsOf(statement.filter).has(normalizeName(field))) return undefined;
  const at = topLevelWhere(rendered.masked);
  if (at < 0) return undefined;
  const where = sourceRange(rendered, at, at + 5);
  if (!where) return undefined;
  const column = /^[a-z_][a-z0-9_]*$/.test(field)
    ? field
    : statement.dialect === "mysql"
      ? `\`${field}\``
      : `"${field}"`;
  const predicate = (value: string) => ` ${escapeFor(where.quote, column)} ${op === "eq" ? "=" : "<>"} ${value} AND`;
  const value = sqlValue(valueText, source.tagged && where.quote === "`");
  if (value)
    return {
      range: [where.range[1], where.range[1]],
      text: predicate(value.startsWith("${") ? value : escapeFor(where.quote, value)),
    };
  // A JS value (`worker`, a token): a parameter of its own, its value added to the call's array of values.
  const added = addedParameter(ctx, rendered, params, at, where.range[1], valueText);
  if (!added || added.at < where.range[1]) return undefined;
  const between = ctx.sourceCode.text.slice(where.range[1], added.at);
  return { range: [where.range[1], added.at], text: `${predicate(added.placeholder)}${between}${added.text}` };
}

/**
 * A new parameter for `valueText`, in the statement's own placeholder style, and where its value goes in the array
 * literal of the call: `$n+1` at the end (node-postgres; the `$k` of a value the array passes already), or a `?`
 * counted among the ones before `whereAt` (mysql2).
 * Only where the array holds every parameter the text numbers, one for one (no spread, no hole, no mix of styles).
 */
function addedParameter(
  ctx: RecognizerContext,
  rendered: Rendered,
  params: Params,
  whereAt: number,
  whereEnd: number,
  valueText: string,
): { placeholder: string; at: number; text: string } | undefined {
  const array = params.inlineArray;
  if (!array || array.elements.some((e) => e === null || e.type === "SpreadElement")) return undefined;
  const elements = array.elements as TSESTree.Expression[];
  const numbered = [...rendered.masked.matchAll(/(?<![\w$])\$(\d+)\b/g)].map((m) => Number(m[1]));
  const marks = questionMarks(rendered.masked);
  if (numbered.length > 0 === marks.length > 0) return undefined;
  let placeholder: string;
  let index: number;
  if (numbered.length > 0) {
    const highest = Math.max(...numbered);
    if (highest !== elements.length) return undefined;
    // A value the call passes already (`worker` as `$3`) is referred to again, not passed twice.
    const passed = elements.findIndex((e) => ctx.sourceCode.getText(e) === valueText);
    if (passed >= 0) return { placeholder: `$${passed + 1}`, at: whereEnd, text: "" };
    placeholder = `$${highest + 1}`;
    index = elements.length;
  } else {
    if (marks.length !== elements.length) return undefined;
    placeholder = "?";
    index = marks.filter((m) => m < whereAt).length;
  }
  if (index < elements.length) return { placeholder, at: elements[index]!.range[0], text: `${valueText}, ` };
  const last = elements[elements.length - 1];
  return last ? { placeholder, at: last.range[1], text: `, ${valueText}` } : undefined;
}

// ---- the recognizer ----

// ---- advisory locks ----

const ADVISORY = /^pg_(try_)?advisory_(xact_)?(lock|unlock|unlock_all)(_shared)?$/;
const PRISMA_RAW = /^\$(query|execute)Raw(Unsafe)?$/;
const TRANSACTION_CALLS = new Set(["$transaction", "transaction", "begin", "withTransaction", "transact"]);

/** The first advisory-lock function a parsed statement calls, walking the node-sql-parser tree. */
function advisoryFunction(ast: unknown, depth = 0): RegExpExecArray | undefined {
  if (!ast || typeof ast !== "object" || depth > 40) return undefined;
  if (Array.isArray(ast)) {
    for (const item of ast) {
      const found = advisoryFunction(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const o = ast as Record<string, unknown>;
  if (o["type"] === "function") {
    const parts = (o["name"] as { name?: { value?: unknown }[] } | undefined)?.name;
    const last = parts?.[parts.length - 1]?.value;
    const m = typeof last === "string" ? ADVISORY.exec(last.toLowerCase()) : null;
    if (m) return m;
  }
  for (const value of Object.values(o)) {
    const found = advisoryFunction(value, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The client a statement is sent on: `client` in `client.query(…)`, `prisma` in `prisma.$queryRaw\`…\``, `db` in `db.execute(sql\`…\`)`. */
function clientNode(node: Node): Node | undefined {
  if (node.type === "CallExpression") {
    const callee = unwrap(node.callee);
    return callee.type === "MemberExpression" ? callee.object : undefined;
  }
  if (node.type === "TaggedTemplateExpression") {
    const tag = unwrap(node.tag);
    if (tag.type === "MemberExpression") return tag.object;
    const parent = node.parent;
    if (parent?.type === "CallExpression" && parent.arguments[0] === node) {
      const callee = unwrap(parent.callee);
      if (callee.type === "MemberExpression") return callee.object;
    }
    return tag;
  }
  return undefined;
}

/** Which connection a client runs statements on: a pool's any, one checked out, a transaction's. */
function connectionOf(ctx: RecognizerContext, client: Node, operation: string): AdvisoryLockOp["via"] {
  const c = unwrap(client);
  if (c.type === "Identifier") {
    const variable = findVariable(ctx.sourceCode, c);
    const def = variable?.defs[0];
    if (def?.type === "Parameter") {
      const fn = def.node;
      const call = fn.parent;
      if (call?.type === "CallExpression") {
        const callee = unwrap(call.callee);
        const name =
          callee.type === "MemberExpression"
            ? keyName(callee.property, callee.computed)
            : callee.type === "Identifier"
              ? callee.name
              : undefined;
        if (name && TRANSACTION_CALLS.has(name)) return "transaction";
      }
    }
    let init = getConstInit(ctx.sourceCode, c);
    if (init) {
      init = unwrap(init);
      if (init.type === "AwaitExpression") init = unwrap(init.argument);
      if (init.type === "NewExpression") {
        const cls = unwrap(init.callee);
        const name =
          cls.type === "Identifier"
            ? cls.name
            : cls.type === "MemberExpression"
              ? keyName(cls.property, cls.computed)
              : undefined;
        // Clients that hand each query to a pooled connection: pg, mysql2, Sequelize, TypeORM's DataSource.
        if (name === "Pool" || name === "Sequelize" || name === "DataSource") return "pool";
        if (name === "Client") return "connection";
      }
      if (init.type === "CallExpression") {
        const callee = unwrap(init.callee);
        const name =
          callee.type === "MemberExpression"
            ? keyName(callee.property, callee.computed)
            : callee.type === "Identifier"
              ? callee.name
              : undefined;
        if (name === "connect" || name === "getConnection" || name === "reserve" || name === "createQueryRunner")
          return "connection";
        // knex(config) and require("knex")(config) are pools.
        if (
          name === "createPool" ||
          name === "knex" ||
          name === "Knex" ||
          (callee.type === "CallExpression" && isRequireOf(callee, "knex"))
        )
          return "pool";
        // drizzle(pool) runs on what it wraps.
        const wrapped = init.arguments[0];
        if (name === "drizzle" && wrapped && wrapped.type !== "SpreadElement")
          return connectionOf(ctx, wrapped, operation);
      }
    }
  }
  // A Prisma client sends each raw query on whichever pooled connection is free.
  if (PRISMA_RAW.test(operation)) return "pool";
  const name =
    c.type === "Identifier" ? c.name : c.type === "MemberExpression" ? keyName(c.property, c.computed) : undefined;
  return name && /pool$/i.test(name) ? "pool" : "unknown";
}

function isRequireOf(call: TSESTree.CallExpression, module: string): boolean {
  const arg = call.arguments[0];
  return (
    call.callee.type === "Identifier" &&
    call.callee.name === "require" &&
    arg?.type === "Literal" &&
    arg.value === module
  );
}

function advisoryOp(
  ctx: RecognizerContext,
  node: Node,
  operation: string,
  parsed: ParsedSql,
): AdvisoryLockOp | undefined {
  const m = advisoryFunction(parsed.ast);
  if (!m) return undefined;
  const client = clientNode(node);
  return advisory(
    m,
    client ? receiverText(ctx.sourceCode, client) : "",
    client ? connectionOf(ctx, client, operation) : "unknown",
    node,
  );
}

/** The op of an advisory function matched by `ADVISORY`, sent on `client` through `via`. */
function advisory(m: RegExpExecArray, client: string, via: AdvisoryLockOp["via"], node: Node): AdvisoryLockOp {
  return {
    access: "advisory",
    store: STORE,
    fn: m[3] === "lock" ? "lock" : m[3] === "unlock" ? "unlock" : "unlock-all",
    try: m[1] !== undefined,
    scope: m[2] !== undefined ? "transaction" : "session",
    client,
    via,
    node,
  };
}

/** `pgTryAdvisoryLock(prisma, KEY)`: the advisory op its name says, on the client it is handed. */
function advisoryHelperOp(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  name: string,
): AdvisoryLockOp | undefined {
  // `pgTryAdvisoryXactLock` is pg_try_advisory_xact_lock.
  const m = ADVISORY.exec(name.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase());
  if (!m) return undefined;
  const first = call.arguments[0];
  // The client comes first (`(db, key)`); a lone key leaves the connection unknown.
  const arg = first && first.type !== "SpreadElement" && call.arguments.length >= 2 ? unwrap(first) : undefined;
  const client = arg && (arg.type === "Identifier" || arg.type === "MemberExpression") ? arg : undefined;
  const text = client ? receiverText(ctx.sourceCode, client) : "";
  // A Prisma client sends each statement on whichever pooled connection is free.
  return advisory(
    m,
    text,
    client ? (/^(this\.)?prisma$/i.test(text) ? "pool" : connectionOf(ctx, client, name)) : "unknown",
    call,
  );
}

function recognizeSource(ctx: RecognizerContext, node: Node, operation: string, found: Found): StateAccess | undefined {
  const { source, params } = found;
  if (!looksLikeStatement(source.segments)) return undefined;
  const rendered = render(source, params);
  if (/advisory_/i.test(rendered.masked)) {
    const parsed = parseSql(rendered.parseText, rendered.mysqlFirst);
    const op = parsed && advisoryOp(ctx, node, operation, parsed);
    if (op) return op;
  }
  // A SELECT without WHERE reads no particular rows (`SELECT pg_advisory_lock($1)`, `SELECT count(*) FROM jobs`).
  if (/^\s*select\b/i.test(rendered.masked) && !/\bwhere\b/i.test(rendered.masked)) return undefined;
  const parsed = parseSql(rendered.parseText, rendered.mysqlFirst);
  if (!parsed) return undefined;
  // A statement prepared elsewhere is made at the run (`node`), and its predicates are in its text (`textAt`).
  const statement = translateSql(parsed, resolver(ctx, rendered, params), found.textAt ?? node);
  if (!statement) return undefined;
  if (statement.access === "read") {
    const locking = locksRowsForWrite(rendered.masked);
    return {
      access: "read",
      store: STORE,
      model: statement.model,
      operation,
      filter: statement.filter,
      node,
      ...(locking ? { locking } : {}),
    };
  }
  const assignments: Assignment[] = statement.assignments.map((a) => ({
    field: a.field,
    value: a.value,
    node,
    valueNode: valueNode(ctx, rendered, a, node),
  }));
  const editable = source.inline && statement.extendable && statement.effect !== "insert";
  return {
    access: "write",
    store: STORE,
    model: statement.model,
    ...(statement.model === HOLE_SENTINEL ? { dynamicModel: true } : {}),
    operation,
    effect: statement.effect ?? "update",
    // An INSERT whose duplicate-key error the code catches is taken under a unique key, like ON CONFLICT DO NOTHING.
    ...(statement.onConflict
      ? { onConflict: statement.onConflict }
      : statement.effect === "insert" &&
          (catchesDuplicate(ctx.sourceCode, node, SQL_DUPLICATE) ||
            (hasLockWord(statement.model) && failureEndsAttempt(ctx.sourceCode, node)))
        ? { onConflict: "error" as const }
        : {}),
    filter: statement.filter,
    assignments,
    node,
    ...(editable
      ? {
          addPredicate: (field, op, valueText) =>
            predicateEdit(ctx, rendered, statement, source, params, field, op, valueText),
        }
      : {}),
    ...(operation === "query" && !rendered.mysqlFirst && statement.effect !== "insert"
      ? { recoveryWrite: (spec: RecoverySpec) => recoveryWrite(ctx, node, statement.model, spec) }
      : {}),
    ...(operation === "query" && !rendered.mysqlFirst && statement.effect === "insert"
      ? { staleRowsDelete: (spec: StaleRowsSpec) => staleRowsDelete(ctx, node, statement.model, spec) }
      : {}),
    // node-postgres's result counts the rows (`rowCount`); other clients' `query` answer rows or tuples, so the
    // module must be seen to import the driver.
    ...(operation === "query" && !source.tagged && !rendered.mysqlFirst && importsPg(ctx)
      ? { changedNothing: (result: string) => `${result}.rowCount === 0` }
      : {}),
  };
}

/** The module imports node-postgres (`import pg from "pg"`, `import { Pool } from "pg"`, `require("pg")`). */
function importsPg(ctx: RecognizerContext): boolean {
  return (
    ctx.sourceCode.ast.body.some(
      (s) => s.type === "ImportDeclaration" && s.source.value === "pg" && s.importKind !== "type",
    ) || /\brequire\(\s*["']pg["']\s*\)/.test(ctx.sourceCode.text)
  );
}

/**
 * An identifier as the module's SQL writes it: quoted where the statement quotes it (`"Task"`, `"updatedAt"`), bare
 * otherwise (PostgreSQL folds a bare name, so `Jobs` written bare stays bare).
 */
function sqlIdentifier(text: string, name: string): string {
  const quoted = `"${name.replace(/"/g, '""')}"`;
  return text.includes(quoted) || text.includes(JSON.stringify(quoted).slice(1, -1)) ? quoted : name;
}

/**
 * node-postgres's `client.query(text, values)` on the claim's client: an UPDATE of the claim's table that gives rows
 * still holding the claimed value back where the progress column is older than the threshold (milliseconds, a
 * parameter), counted by `rowCount`. Values are parameters, so nothing is quoted by hand.
 */
function recoveryWrite(
  ctx: RecognizerContext,
  node: Node,
  table: string,
  spec: RecoverySpec,
): RecoveryWrite | undefined {
  const client = clientNode(node);
  if (!client) return undefined;
  // The statements of the module that name the table and the columns: the claim, and the heartbeat's time column.
  const text = ctx.sourceCode.text;
  const f = sqlIdentifier(text, spec.field);
  const sql = `UPDATE ${sqlIdentifier(text, table)} SET ${f} = $1 WHERE ${f} = $2 AND ${sqlIdentifier(text, spec.timeField)} < now() - $3 * interval '1 millisecond'`;
  return pgQuery(ctx, client, sql, [JSON.stringify(spec.back), JSON.stringify(spec.stuck), spec.threshold]);
}

/**
 * `client.query(text, values)` of node-postgres, as a recovery: the statement and its values (source text), one per
 * line when there are values; counted by `rowCount` (`?? 0`: the driver types it nullable).
 */
function pgQuery(ctx: RecognizerContext, client: Node, sql: string, values: readonly string[]): RecoveryWrite {
  const receiver = ctx.sourceCode.getText(client);
  return {
    call:
      values.length > 0
        ? `${receiver}.query(\n  ${JSON.stringify(sql)},\n  [${values.join(", ")}],\n)`
        : `${receiver}.query(${JSON.stringify(sql)})`,
    count: (result) => `${result}.rowCount ?? 0`,
    client,
  };
}

/**
 * node-postgres's `client.query(text, values)` on the lock row's client: a DELETE of the lock table's rows whose time
 * column is older than the threshold (a parameter, milliseconds), or already past, counted by `rowCount`.
 */
function staleRowsDelete(
  ctx: RecognizerContext,
  node: Node,
  table: string,
  spec: StaleRowsSpec,
): RecoveryWrite | undefined {
  const client = clientNode(node);
  if (!client) return undefined;
  const text = ctx.sourceCode.text;
  const column = sqlIdentifier(text, spec.timeField);
  const sql = `DELETE FROM ${sqlIdentifier(text, table)} WHERE ${column} < now()${spec.threshold ? " - $1 * interval '1 millisecond'" : ""}`;
  return pgQuery(ctx, client, sql, spec.threshold ? [spec.threshold] : []);
}

export const sqlRecognizer: Recognizer = {
  store: STORE,
  methods: METHODS,
  tags: TAGS,
  functions: FUNCTIONS,
  recognize(call, ctx): StateAccess | undefined {
    const callee = unwrap(call.callee);
    const method =
      callee.type === "MemberExpression"
        ? keyName(callee.property, callee.computed)
        : callee.type === "Identifier" && FUNCTIONS.has(callee.name)
          ? callee.name
          : undefined;
    if (!method || !METHODS.has(method)) return undefined;
    if (ADVISORY_HELPERS.has(method)) return advisoryHelperOp(ctx, call, method);
    try {
      const found = fromCall(ctx, call, method);
      return found && recognizeSource(ctx, call, method, found);
    } catch {
      return undefined;
    }
  },
  recognizeTagged(node, ctx): StateAccess | undefined {
    const name = tagName(node.tag);
    if (!name) return undefined;
    try {
      const segments = templateSegments(ctx, node.quasi, true, 0);
      if (!segments) return undefined;
      return recognizeSource(ctx, node, name, { source: { segments, inline: true, tagged: true }, params: {} });
    } catch {
      return undefined;
    }
  },
};
