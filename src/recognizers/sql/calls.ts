/**
 * Raw SQL: the calls that send a statement (the store's methods and plain functions), where a call's text and
 * parameters are (`query(text, values)`, `{ text, values }`, Prisma's unsafe raw calls, SQLite's bindings one by one,
 * a statement prepared once and run elsewhere), and the client a statement is sent on.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { isFunction } from "../../core/reading/units.js";
import { fieldInit, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import { type SqlSource, textSegments } from "./text.js";
import { type Params, constObject, property, paramList, paramsFrom, inlineArray } from "./parameters.js";

export const STORE = "sql";
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
export const ADVISORY_HELPERS: ReadonlySet<string> = new Set(
  ["", "Try"].flatMap((t) =>
    ["", "Xact"].flatMap((x) =>
      ["Lock", "Unlock", "UnlockAll"].flatMap((f) => ["", "Shared"].map((sh) => `pg${t}Advisory${x}${f}${sh}`)),
    ),
  ),
);
export const METHODS = new Set([
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
export const FUNCTIONS = new Set(["query", "execute", ...ADVISORY_HELPERS]);

// ---- the call shapes ----

export interface Found {
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

export function fromCall(ctx: RecognizerContext, call: TSESTree.CallExpression, method: string): Found | undefined {
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

/** The client a statement is sent on: `client` in `client.query(…)`, `prisma` in `prisma.$queryRaw\`…\``, `db` in `db.execute(sql\`…\`)`. */
export function clientNode(node: Node): Node | undefined {
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
    // Kysely's raw fragment runs on what it is handed: sql`SELECT …`.execute(db).
    const member = parent?.type === "MemberExpression" && parent.object === node ? parent : undefined;
    const run = member?.parent;
    if (
      member &&
      run?.type === "CallExpression" &&
      run.callee === member &&
      keyName(member.property, member.computed) === "execute" &&
      run.arguments.length === 1 &&
      run.arguments[0]!.type !== "SpreadElement"
    )
      return run.arguments[0];
    return tag;
  }
  return undefined;
}
