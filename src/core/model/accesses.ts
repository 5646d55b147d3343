/**
 * The accesses recognizers produce: every recognizer turns client syntax into these shapes (a write or read of rows
 * with its filter and assignments, a key-value command, a lock library's or an advisory lock's call, an
 * object-storage write, a lock table's call), and the summaries and facts are built from them. An op made through a
 * helper names it (`KvVia`, `AdvisoryHelper`) here too, since a helper's op and its call's op refer to each other.
 * See docs/architecture.md for how they fit together.
 */
import type { TSESTree } from "@typescript-eslint/utils";

export type Node = TSESTree.Node;

/** A statically known value: a literal, a const, an enum member. `symbolic` marks an enum member whose value is taken from its key. */
export interface StaticValue {
  readonly value: string | number | boolean | null;
  readonly symbolic?: boolean;
}

export type CompareOp = "eq" | "ne" | "in" | "notIn" | "lt" | "lte" | "gt" | "gte" | "other";

/** One predicate of a filter on one field. `values` is undefined when the compared expression is not static (`id: jobId`). */
export interface Predicate {
  readonly kind: "pred";
  readonly field: string;
  readonly op: CompareOp;
  readonly values: readonly StaticValue[] | undefined;
  readonly node: Node;
  /**
   * The JavaScript expression the field is compared with, where `node` is not it: a PostgREST link's argument
   * (`eq("id", job.id)`, whose `node` is the link for findings to point at), a SQL statement's parameter. Where rows
   * a write names come from is read from it (`predicateValue`).
   */
  readonly value?: Node;
}

/** The expression a predicate compares its field with: its `value`, else its node (an object filter's property). */
export function predicateValue(pred: Predicate): Node {
  return pred.value ?? pred.node;
}

/** A filter: the store's WHERE, normalised. `opaque` stands for a part no recognizer could read (a spread, a helper call). */
export type Condition =
  | { readonly kind: "and"; readonly items: readonly Condition[] }
  | { readonly kind: "or"; readonly items: readonly Condition[] }
  | { readonly kind: "not"; readonly item: Condition }
  | Predicate
  | { readonly kind: "opaque"; readonly node: Node };

/**
 * What a write stores in one field. `now` is a clock reading (`new Date()`), `other` an increment or unknown
 * expression; `choices`, when the expression picks one of fixed values by a condition the code cannot know (SQL
 * `CASE WHEN … THEN 'failed' ELSE 'pending' END`).
 */
export type AssignedValue =
  | { readonly kind: "static"; readonly value: StaticValue }
  | {
      readonly kind: "now";
      /**
       * The clock itself, nothing added or taken (SQL `now()`, not `now() + interval '5 minutes'`), where the value's
       * node cannot show it (a SQL value's node is its whole statement). JavaScript's is read from its node.
       */
      readonly bare?: boolean;
    }
  | { readonly kind: "other"; readonly choices?: readonly StaticValue[] };

export interface Assignment {
  readonly field: string;
  readonly value: AssignedValue;
  /** The property (or equivalent) that assigns the field. */
  readonly node: Node;
  /** The source node of the value, for messages and suggestions. */
  readonly valueNode: Node;
}

/** A text insertion a suggestion can apply. */
export interface TextEdit {
  readonly range: readonly [number, number];
  readonly text: string;
}

/**
 * A write to persistent state, whatever the client: Prisma `updateMany`, a Knex chain, a raw SQL UPDATE.
 * `addPredicate` is the recognizer's way to write a condition into this write's filter in its own syntax, so
 * that rules can offer suggestions without knowing the client.
 */
export interface StateWrite {
  readonly access: "write";
  readonly store: string;
  /** The model or table as written (`job`, `Job`, `jobs`). */
  readonly model: string;
  readonly operation: string;
  /**
   * What the write does: change the rows its filter matches (the default), add a row, or remove matching rows.
   * An insert's `filter` is empty, or, for an upsert that updates on conflict, the condition of that update
   * (`ON CONFLICT (name) DO UPDATE … WHERE locks.expires_at < now()` is a take-over judged by age).
   */
  readonly effect?: "update" | "insert" | "delete";
  /**
   * For an insert guarded by a unique key: what a conflict does. `ignore`: nothing is written
   * (`ON CONFLICT DO NOTHING`, `.onConflict().ignore()`, a caught duplicate-key error); `update`: the conflicting
   * row is updated (`filter` says when); `error`: the insert throws and the caller treats that as "taken".
   */
  readonly onConflict?: "ignore" | "update" | "error";
  /**
   * For an insert guarded by a unique key, that key's fields where the code names them (DynamoDB's
   * `attribute_not_exists(lockId)`): what names the lock, whatever the field is called, and so never its owner.
   */
  readonly conflictKey?: readonly string[];
  /**
   * For an insert into a store that can delete documents itself once a time they hold has passed (a MongoDB TTL
   * index, DynamoDB's time to live): the fields the write sets to a time ahead of now (`deleteAt: new Date(Date.now()
   * + 180_000)`). Whether the store is told to is in its index or table settings, not in the code: a lock row with
   * one may well expire, so nobody says it never does.
   */
  readonly storeExpiry?: readonly string[];
  /** Made after a locking read of the same model in the same unit: the rows it names are held (facts/pairing/). */
  readonly underLock?: boolean;
  /**
   * The write takes only rows no other transaction holds locked (`… FOR UPDATE SKIP LOCKED` in its row picker): a
   * holder that keeps its row locked while it works is never taken by it.
   */
  readonly skipsLocked?: boolean;
  /**
   * `model` is only the name of the variable holding the document (`event.save()` on a parameter `event`): the
   * module attributes the write to the one model of its own named like it (`MessageEvent`), or leaves it unknown.
   */
  readonly modelFromName?: boolean;
  /**
   * `model` is a client's name for an entity (Prisma's `prisma.job`, a Sequelize or MikroORM model), which a schema
   * may map to a table of another name (`@@map("cw_jobs")`, `tableName`): beside a raw statement's table, the names
   * alone cannot tell whether the two are one table (`namedApart`).
   */
  readonly mappedModel?: boolean;
  /** The table is known only at run time (`UPDATE "${table}" …`): `model` names no table, so no lock is read into it. */
  readonly dynamicModel?: boolean;
  /**
   * The statement's text is not in this module (a constant imported from another): what it writes is unknown. Its
   * module's claims are not judged unrecovered on the strength of what it cannot read (src/recognizers/sql/sql.ts).
   */
  readonly unread?: boolean;
  /**
   * Besides `assignments`, the write sets columns only known at run time (a SET list built by the code: `SET
   * ${updates.join(", ")}`): any column of its model may be among them.
   */
  readonly setsUnknown?: boolean;
  readonly filter: Condition;
  readonly assignments: readonly Assignment[];
  /** The whole call: where findings about the write are reported. */
  readonly node: Node;
  /**
   * Where the statement runs when that is not `node`: a statement written into a const (`const q = Prisma.sql\`…\``)
   * and handed to one call (`const n = await db.$executeRaw(q)`). Its result and its rejection land there.
   */
  readonly runAt?: Node;
  /**
   * Set on a write a module helper makes with the values a call passes (`this.updateStatus(id, "processing")`): the
   * helper's own write. `node` is then the call (src/core/summaries/state-helpers.ts).
   */
  readonly madeBy?: Node;
  readonly addPredicate?: (field: string, op: "eq" | "ne", valueText: string) => TextEdit | undefined;
  /**
   * The recognizer's way to write the stale recovery of a claim made by this write, in its own syntax and on the
   * same client (require-stale-recovery's suggestion, src/rule-kit/recovery.ts): one conditional write of the claim's
   * model that moves `field` from the claimed value back where `timeField` is older than the `threshold` constant.
   */
  readonly recoveryWrite?: (spec: RecoverySpec) => RecoveryWrite | undefined;
  /**
   * For an insert of a lock row: the recognizer's way to write the sweep that removes the rows whose holder died, in
   * its own syntax and on the same client (require-stale-recovery's suggestion for a lock row): one delete of the
   * rows whose `timeField` is older than the `threshold` constant, or, for an expiry, already past.
   */
  readonly staleRowsDelete?: (spec: StaleRowsSpec) => RecoveryWrite | undefined;
  /**
   * How the code tells, from this write's awaited result held in `result`, that it changed no row:
   * `result.rowCount === 0` (node-postgres), `result.count === 0` (Prisma's `updateMany`), `!result` (a
   * find-and-modify's document). Written so that a result of another shape (an older driver's) never reads as
   * "nothing", since the code then leaves as if the claim were lost. Known only where the store's result says it
   * (atomic-claim's suggestion makes a claim conditional and leaves when it lost); absent where the write throws
   * instead (Prisma's `update`) or its result depends on the driver.
   */
  readonly changedNothing?: (result: string) => string;
  /**
   * The write throws when it changes no row (Prisma's `update`, which needs its row): a renewal made with it fails by
   * rejecting, not by a count of 0 (facts/renewals.ts).
   */
  readonly throwsWhenNothing?: boolean;
  /**
   * The write hands its failure back as a value (`const { error } = await …`) that stays empty when the filter matched
   * no row (PostgREST's update without `.single()`): a test of that error alone says nothing of whether it changed one.
   */
  readonly errorSilentWhenNothing?: boolean;
}

/** What a stale recovery writes: values and names as source text, ready to paste. */
export interface RecoverySpec {
  readonly field: string;
  /** The claimed value and the value to give back, as values (for stores that take them as parameters). */
  readonly stuck: string | boolean;
  readonly back: string | boolean;
  /** The claimed value (`"RUNNING"`, `JobStatus.RUNNING`). */
  readonly stuckText: string;
  /** The value the row had before the claim, which the recovery gives back. */
  readonly backText: string;
  /** The progress timestamp the module writes for the model (`updatedAt`, `heartbeatAt`). */
  readonly timeField: string;
  /** The name of the constant holding the threshold, in milliseconds. */
  readonly threshold: string;
}

/** What a lock-row sweep deletes: rows whose `timeField` is older than `threshold` (a constant's name, milliseconds), or, without one, already past (the field is an expiry). */
export interface StaleRowsSpec {
  readonly timeField: string;
  readonly threshold?: string;
}

/** A recovery write: the call to await, how to read from its result how many rows it freed, and its client. */
export interface RecoveryWrite {
  readonly call: string;
  /** How many rows it freed, read from the awaited result's name: `result.count`, `Number(result.numUpdatedRows)`. */
  readonly count: (result: string) => string;
  /** Edits the call needs elsewhere in the module: an import of the operator it uses (`LessThan`, `Op`). */
  readonly edits?: readonly TextEdit[];
  /** The client the call is made on (`prisma`, `this.prisma`): the recovery must be placed where it is in scope. */
  readonly client: Node;
}

/** A read of persistent state with a filter (`findFirst({ where })`): the "check" half of check-then-act, or a stale scan. */
export interface StateRead {
  readonly access: "read";
  readonly store: string;
  readonly model: string;
  readonly operation: string;
  readonly filter: Condition;
  readonly node: Node;
  /** Where the statement runs when that is not `node` (`StateWrite.runAt`): where its rows are bound. */
  readonly runAt?: Node;
  /**
   * The read locks the rows it returns until its transaction ends (`FOR UPDATE`, `FOR NO KEY UPDATE`, a
   * pessimistic write lock): writes of the same model after it in the same unit write under its filter.
   */
  readonly locking?: boolean;
}

/** A key pattern: `lock:*` for `` `lock:${id}` ``; `opaque` keys are kept as their source text (`{this.key(doc)}`). */
export interface KeyShape {
  readonly text: string;
  readonly exact: boolean;
  readonly opaque?: boolean;
  /** The variable the key was held in, if any: the same name in acquire and release pairs them. */
  readonly name?: string;
  /**
   * A local variable's declaration and the function using it: the same name declared twice in one function is two
   * keys. `collected`: the key is a member of a list filled with that variable once it was taken (`held.push(key)`).
   */
  readonly local?: { readonly variable: number; readonly unit: number; readonly collected?: true };
}

/** `incr` and `decr` count (INCR/INCRBY, DECR/DECRBY): a counter compared with a bound is a semaphore. */
export type KvCommand = "set" | "setnx" | "expire" | "del" | "get" | "script" | "watch" | "incr" | "decr";
/**
 * Whether a SET gives its key an expiry: on every path, on some, none, or unknown (an option object with a key no
 * client defines, `{ ttlSec, nx: true }` to an app's own wrapper, or a spread nothing resolves).
 */
export type TtlPresence = "present" | "conditional" | "absent" | "unknown";
/** How the client spells options: ioredis tokens (`"PX", ms, "NX"`), node-redis objects (`{ NX: true, PX }`), Upstash (`{ nx, px }`). */
export type KvDialect = "ioredis" | "node-redis" | "upstash";

/** Client-specific edits a recognizer offers for a key-value op, so rules can suggest fixes without knowing the client. */
export interface KvEdits {
  /** Adds an expiry to this `SET … NX` (`unit` is EX or PX). */
  addTtl?(ttlText: string, unit: "EX" | "PX"): TextEdit | undefined;
  /** Rewrites this `SETNX key value` as `SET key value NX` with the expiry. */
  toSetWithTtl?(ttlText: string, unit: "EX" | "PX" | "EXAT" | "PXAT"): TextEdit | undefined;
  /** Rewrites this `DEL key` as an owner-checked delete of `tokenText`. */
  toOwnerCheckedDelete?(tokenText: string, how: "script" | "delex"): TextEdit | undefined;
}

/** One key-value command (Redis and compatible stores), normalised. */
export interface KvOp {
  readonly access: "kv";
  readonly store: string;
  /** The client expression the command is sent on (`redis`, `this.pub`, `getRedis()`), without `this.` and batches. */
  readonly client: string;
  readonly dialect: KvDialect;
  readonly command: KvCommand;
  readonly key: KeyShape;
  readonly keyNode: Node;
  /** The call. */
  readonly node: Node;
  /** Where findings about it point: the command and its arguments (`.del(key)` in a chain), not the whole chain. */
  readonly loc: TSESTree.SourceLocation;
  /** SET with NX, or SETNX: only succeeds if the key is absent. */
  readonly nx: boolean;
  /** For SET/SETNX: whether the key gets an expiry. */
  readonly ttl: TtlPresence;
  readonly valueNode?: Node;
  /** The stored value when it is a constant (`"1"`, `true`): such a lock cannot tell its owner. */
  readonly constantValue?: StaticValue;
  /** For SET: the expression of its expiry, when one option gives it (`"PX", ttlMs` or `{ PX: ttlMs }`). */
  readonly ttlNode?: Node;
  /** For SET: the relative expiry in milliseconds, when it is a static number. */
  readonly ttlMs?: number;
  /** Set when this op is a call of a function that makes it (a lock helper, a wrapper method): the call site's view. */
  readonly via?: KvVia;
  /** For EXPIRE-family commands: the expiry expression and its unit. */
  readonly expiry?: { readonly node: Node; readonly unit: "EX" | "PX" | "EXAT" | "PXAT" };
  /**
   * For scripts: what the Lua does to the key. A `set-if-absent` script is a SET … NX (`command: "set"`) whose value
   * and expiry are the ARGVs the call passes.
   */
  readonly script?: "compare-and-delete" | "compare-and-expire" | "delete" | "set-if-absent" | "other";
  /** GETSET: a SET that returns the value it replaced. */
  readonly swap?: boolean;
  /** The MULTI/pipeline this command is queued in: its commands are sent together. */
  readonly batch?: Node;
  readonly edits?: KvEdits;
}

/**
 * How a key-value release checks whose lock it frees (`KvRelease.kind`; a helper's release, seen at its calls).
 * `self-compared`: a compare-and-delete whose token is the value just read from the key itself (`const v = await
 * redis.get(key); eval(CAD, 1, key, v)`): the comparison always matches, so it checks no owner. `shared-token`: a
 * compare-and-delete handed the one constant every holder of the lock stores (`acquire(KEY, "true")` …
 * `release(KEY, "true")`): it matches whoever holds the key now.
 */
export type KvReleaseKind = "owner-checked" | "plain" | "get-compare" | "self-compared" | "shared-token";

/**
 * How a call of a helper makes a key-value op (src/core/summaries/): the helper's own op, seen at the call site with
 * the call's arguments in place of the helper's parameters.
 */
export interface KvVia {
  /** The helper as the call names it: `releaseLock`, `this.unlock`, `RedisLock.release`. */
  readonly helper: string;
  /** The helper's own op, when this module holds the helper: the instance is classified as that op is. */
  readonly template?: KvOp;
  /** The line of the helper's op (in `file` when another module holds the helper). */
  readonly line: number;
  readonly file?: string;
  /** For a release the helper makes in another module: how that module's op deletes (owner-checked or not). */
  readonly release?: KvReleaseKind;
  /** For an acquire in another module: that module gives it its TTL by a separate EXPIRE. */
  readonly separateExpire?: boolean;
}

/** The helper's own op an instance stands for, through helpers calling helpers (itself for an op written in place). */
export function helperOrigin(op: KvOp): KvOp {
  let o = op;
  for (let i = 0; i < 8 && o.via?.template; i++) o = o.via.template;
  return o;
}

/**
 * A lock taken through a lock library. Redlock and redis-semaphore hold it in Redis (TTL and owner check by
 * construction); `in-process` is a mutex or semaphore in the process's memory (async-mutex, await-lock,
 * async-sema), which nothing but its own release frees.
 */
export interface LibraryLockOp {
  readonly access: "library";
  readonly library: "redlock" | "redis-semaphore" | "in-process";
  readonly op: "acquire" | "release" | "extend" | "using";
  readonly node: Node;
  /** The lock object's source text (`mutex`, `this.mutex`), to pair an acquire with a release on it. */
  readonly receiver?: string;
  /** An acquire that may fail without throwing (`tryAcquire` resolving `false`). */
  readonly try?: boolean;
  /** For acquire and using: the resource (Redlock's key list, the semaphore's key), for messages and job keys. */
  readonly keyNode?: Node;
  /** For Redlock's acquire and using: the lock's duration in milliseconds, when it is a static number. */
  readonly ttlMs?: number;
}

/**
 * A PostgreSQL advisory-lock function called in SQL text (`SELECT pg_try_advisory_lock($1)`). A session lock
 * stays held by the connection until unlocked or the connection closes; a transaction lock (`_xact_`) ends with
 * the transaction.
 */
export interface AdvisoryLockOp {
  readonly access: "advisory";
  readonly store: string;
  readonly fn: "lock" | "unlock" | "unlock-all";
  readonly try: boolean;
  readonly scope: "session" | "transaction";
  /** The client expression the SQL is sent on (`client`, `this.pool`, `prisma`), without `this.`. */
  readonly client: string;
  /**
   * Which connection runs it: a `pool` (every query may take another connection), a `request` to a server that runs
   * each request on whichever of its own pooled connections is free (PostgREST's `rpc`), one checked-out or dedicated
   * `connection`, a `transaction`'s connection, or `unknown`.
   */
  readonly via: "pool" | "request" | "connection" | "transaction" | "unknown";
  readonly node: Node;
  /** Made through an exported helper of another module (`tryAdvisoryLock(id)`): `node` is the call of it. */
  readonly helper?: AdvisoryHelper;
  /** MySQL's named locks (`GET_LOCK`, `RELEASE_LOCK`); PostgreSQL's advisory functions where absent. */
  readonly dialect?: "mysql";
}

/**
 * Whether two statements of one caller sent `via` this may run on different sessions: a pool's, or a server's behind
 * each request. A session lock taken so stays with whichever session ran it, and the unlock may reach another.
 */
export function sessionsShared(via: AdvisoryLockOp["via"]): boolean {
  return via === "pool" || via === "request";
}

/** Where a helper's advisory op lives: the helper as the call names it, its module and the op's line. */
export interface AdvisoryHelper {
  readonly name: string;
  readonly file: string;
  readonly line: number;
  /** The pool as that module names it (`db`). */
  readonly pool: string;
}

/**
 * A write to object storage or a file (S3, Google Cloud Storage, Azure Blob, the file system): an effect outside
 * the database that a late lock holder can still make.
 */
export interface ObjectWrite {
  readonly access: "object";
  readonly store: "s3" | "gcs" | "azure-blob" | "fs";
  /** The operation as the client names it, for messages: `PutObject`, `save`, `writeFile`. */
  readonly operation: string;
  /** The object key or file path expression, when the call names one. */
  readonly location: Node | undefined;
  /**
   * The store refuses the write when the object exists or changed: S3 `IfNoneMatch`/`IfMatch`, GCS
   * `ifGenerationMatch`, Azure `conditions`, fs `flag: "wx"`.
   */
  readonly conditional: boolean;
  /** How messages name the write (`S3 PutObject`, `writeFile call`) and the condition its store offers (`IfMatch`). */
  readonly wording: { readonly operation: string; readonly condition: string };
  /** A local temporary file (`os.tmpdir()`, `/tmp/…`): scratch space, not an effect anyone else sees. */
  readonly temporary?: boolean;
  /**
   * A whole file of this machine's disk written in one call (`writeFile`, not a stream): the content a lock file
   * can be created with (src/core/facts/lock-files.ts).
   */
  readonly wholeFile?: boolean;
  readonly node: Node;
}

/**
 * A call on a `Map` that outlives the call (a module-level `const locks = new Map()`, a class field, a factory's
 * closure): an in-process table whose entries can be locks, one per key (src/recognizers/lock-table.ts).
 */
export interface TableOp {
  readonly access: "table";
  readonly store: "in-process";
  /** The table as the code names it (`locks`, `this.locks`): calls naming the same text share one table. */
  readonly table: string;
  readonly op: "get" | "has" | "set" | "delete";
  readonly node: TSESTree.CallExpression;
  readonly keyNode?: Node;
  readonly valueNode?: Node;
}

/**
 * A file-system call on a path that a lock file can be (src/recognizers/lock-files.ts): opened (exclusively with an
 * `x` flag), tested for existence, stat'ed, read, appended to, removed or touched. Plain writes (`writeFile`) are
 * `ObjectWrite`s of the `fs` store; the lock-file facts read both (src/core/facts/lock-files.ts).
 */
export interface FileOp {
  readonly access: "file";
  readonly store: "file";
  readonly op: "open" | "exists" | "stat" | "read" | "append" | "remove" | "touch" | "rename";
  /** For `open`: an exclusive create (`wx`, `ax`): it fails when the file exists. */
  readonly exclusive: boolean;
  /** For `open`: the flag creates or truncates the file (`w`, `a`, `wx`); a read-only open creates nothing. */
  readonly creates: boolean;
  /** The function as the code calls it, for messages: `openSync`, `unlink`. */
  readonly name: string;
  readonly path: Node;
  readonly node: TSESTree.CallExpression;
}

export type StateAccess =
  StateWrite | StateRead | KvOp | LibraryLockOp | AdvisoryLockOp | ObjectWrite | TableOp | FileOp;
