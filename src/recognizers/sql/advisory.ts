/**
 * Raw SQL: PostgreSQL's advisory-lock functions (`SELECT pg_try_advisory_lock($1)`) and the JavaScript helpers named
 * after them (`pgTryAdvisoryLock(pool, key)`) as `AdvisoryLockOp`s, with the connection they run on.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { receiverText, expressionName } from "../../core/reading/ast.js";
import type { ParsedSql } from "../../core/languages/sql.js";
import { findVariable, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import { STORE, clientNode } from "./calls.js";
import { declaredType } from "../../core/reading/declared-types.js";
import { TRANSACTION_CALLS } from "../../core/reading/units.js";

const ADVISORY = /^pg_(try_)?advisory_(xact_)?(lock|unlock|unlock_all)(_shared)?$/;
/** MySQL's named locks: session locks too, and GET_LOCK gives up after its timeout (it answers 0), as a try-lock. */
const MYSQL_NAMED = /^(get_lock|release_lock|release_all_locks)$/;

/** What an advisory function does: PostgreSQL's by its name's parts, MySQL's named locks by their names. */
interface AdvisoryFn {
  readonly fn: AdvisoryLockOp["fn"];
  readonly try: boolean;
  readonly scope: AdvisoryLockOp["scope"];
  readonly dialect?: "mysql";
}

function advisoryFn(name: string): AdvisoryFn | undefined {
  const m = ADVISORY.exec(name);
  if (m)
    return {
      fn: m[3] === "lock" ? "lock" : m[3] === "unlock" ? "unlock" : "unlock-all",
      try: m[1] !== undefined,
      scope: m[2] !== undefined ? "transaction" : "session",
    };
  const my = MYSQL_NAMED.exec(name);
  if (!my) return undefined;
  return {
    fn: my[1] === "get_lock" ? "lock" : my[1] === "release_lock" ? "unlock" : "unlock-all",
    try: my[1] === "get_lock",
    scope: "session",
    dialect: "mysql",
  };
}
const PRISMA_RAW = /^\$(query|execute)Raw(Unsafe)?$/;

/** The first advisory-lock function a parsed statement calls, walking the node-sql-parser tree. */
function advisoryFunction(ast: unknown, depth = 0): AdvisoryFn | undefined {
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
    const m = typeof last === "string" ? advisoryFn(last.toLowerCase()) : undefined;
    if (m) return m;
  }
  for (const value of Object.values(o)) {
    const found = advisoryFunction(value, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Client classes by their package, and the connection each runs a query on: a pool hands each query to any of its
 * connections (TypeORM's `DataSource`, `Connection` and `EntityManager` outside a transaction, Sequelize, pg and
 * mysql2 pools); a checked-out client or a query runner keeps one.
 */
const CLIENT_TYPES: Record<string, { readonly packages: readonly string[]; readonly via: AdvisoryLockOp["via"] }> = {
  DataSource: { packages: ["typeorm"], via: "pool" },
  Connection: { packages: ["typeorm"], via: "pool" },
  EntityManager: { packages: ["typeorm"], via: "pool" },
  QueryRunner: { packages: ["typeorm"], via: "connection" },
  Sequelize: { packages: ["sequelize", "sequelize-typescript"], via: "pool" },
  Pool: { packages: ["pg", "mysql2", "mysql2/promise", "@neondatabase/serverless"], via: "pool" },
  PoolClient: { packages: ["pg", "@neondatabase/serverless"], via: "connection" },
  // A Kysely instance hands each query to its dialect's pool; one connection is `db.connection()`'s or a transaction's.
  Kysely: { packages: ["kysely"], via: "pool" },
  Transaction: { packages: ["kysely"], via: "transaction" },
};

/**
 * Names that say which pooled client a binding holds: a Sequelize instance, a TypeORM data source, a knex instance
 * (every knex instance is a pool: a statement on one connection needs `.connection(c)` or a transaction, `trx`).
 */
const POOLED_NAME = /^(?:sequelize|(?:app)?dataSource|knex)$/i;

/** Which connection a client runs statements on: a pool's any, one checked out, a transaction's. */
function connectionOf(ctx: RecognizerContext, client: Node, operation: string): AdvisoryLockOp["via"] {
  const c = unwrap(client);
  // What its declaration says it is: `constructor(private dataSource: DataSource)` with DataSource from typeorm.
  const declared = declaredType(ctx.sourceCode, c);
  const known = declared && CLIENT_TYPES[declared.name];
  if (known && declared.from !== undefined && known.packages.includes(declared.from)) return known.via;
  // `conn.manager` of a TypeORM DataSource or Connection: its EntityManager, which runs on the pool.
  if (c.type === "MemberExpression" && keyName(c.property, c.computed) === "manager") {
    const owner = declaredType(ctx.sourceCode, c.object);
    if (owner && owner.from === "typeorm" && (owner.name === "DataSource" || owner.name === "Connection"))
      return "pool";
  }
  if (c.type === "Identifier") {
    const variable = findVariable(ctx.sourceCode, c);
    const def = variable?.defs[0];
    if (def?.type === "Parameter") {
      const fn = def.node;
      const call = fn.parent;
      if (call?.type === "CallExpression") {
        const callee = unwrap(call.callee);
        const name = expressionName(callee);
        if (name && TRANSACTION_CALLS.has(name)) return "transaction";
      }
    }
    let init = getConstInit(ctx.sourceCode, c);
    if (init) {
      init = unwrap(init);
      if (init.type === "AwaitExpression") init = unwrap(init.argument);
      if (init.type === "NewExpression") {
        const cls = unwrap(init.callee);
        const name = expressionName(cls);
        // Clients that hand each query to a pooled connection: pg, mysql2, Sequelize, TypeORM's DataSource.
        if (name === "Pool" || name === "Sequelize" || name === "DataSource" || name === "Kysely") return "pool";
        if (name === "Client") return "connection";
      }
      if (init.type === "CallExpression") {
        const callee = unwrap(init.callee);
        const name = expressionName(callee);
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
  const name = expressionName(c);
  const last = name?.split(".").pop() ?? "";
  // A declaration naming another class (`source: DataSource` from "./warehouse") outweighs the binding's name.
  const otherClass = declared !== undefined && declared.from !== undefined;
  return name && (/pool$/i.test(name) || (!otherClass && POOLED_NAME.test(last))) ? "pool" : "unknown";
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

export function advisoryOp(
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

/** The op of an advisory function, sent on `client` through `via`. */
function advisory(m: AdvisoryFn, client: string, via: AdvisoryLockOp["via"], node: Node): AdvisoryLockOp {
  return {
    access: "advisory",
    store: STORE,
    fn: m.fn,
    try: m.try,
    scope: m.scope,
    client,
    via,
    node,
    ...(m.dialect ? { dialect: m.dialect } : {}),
  };
}

/** `pgTryAdvisoryLock(prisma, KEY)`: the advisory op its name says, on the client it is handed. */
export function advisoryHelperOp(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  name: string,
): AdvisoryLockOp | undefined {
  // `pgTryAdvisoryXactLock` is pg_try_advisory_xact_lock.
  const m = advisoryFn(name.replace(/(?<=[a-z])(?=[A-Z])/g, "_").toLowerCase());
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

/**
 * `supabase.rpc("pg_try_advisory_lock", { key })`: PostgreSQL's advisory function called by name through PostgREST,
 * which runs each request in a transaction of its own on whichever pooled server connection is free. A session lock
 * so taken stays with that connection after the request, and the unlock, another request, may reach another one.
 */
export function advisoryRpcOp(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  name: string,
): AdvisoryLockOp | undefined {
  const m = advisoryFn(name.toLowerCase());
  if (!m || m.dialect) return undefined;
  const callee = unwrap(call.callee);
  const client = callee.type === "MemberExpression" ? receiverText(ctx.sourceCode, callee.object) : "";
  return advisory(m, client, "request", call);
}
