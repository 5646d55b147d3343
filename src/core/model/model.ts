/**
 * The lock model: every recognizer turns client syntax into these shapes, and every rule reads only these.
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
}

/** A filter: the store's WHERE, normalised. `opaque` stands for a part no recognizer could read (a spread, a helper call). */
export type Condition =
  | { readonly kind: "and"; readonly items: readonly Condition[] }
  | { readonly kind: "or"; readonly items: readonly Condition[] }
  | { readonly kind: "not"; readonly item: Condition }
  | Predicate
  | { readonly kind: "opaque"; readonly node: Node };

/** What a write stores in one field. `now` is a clock reading (`new Date()`), `other` an increment or unknown expression. */
export type AssignedValue =
  { readonly kind: "static"; readonly value: StaticValue } | { readonly kind: "now" } | { readonly kind: "other" };

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
  /** Made after a locking read of the same model in the same unit: the rows it names are held (facts/pairing.ts). */
  readonly underLock?: boolean;
  /**
   * `model` is only the name of the variable holding the document (`event.save()` on a parameter `event`): the
   * module attributes the write to the one model of its own named like it (`MessageEvent`), or leaves it unknown.
   */
  readonly modelFromName?: boolean;
  readonly filter: Condition;
  readonly assignments: readonly Assignment[];
  /** The whole call: where findings about the write are reported. */
  readonly node: Node;
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

/** A parameter of a helper: its position, and for a destructured options object the property (`{ lockTtl }`). */
export interface ParamRef {
  readonly index: number;
  readonly prop?: string;
  /** The parameter has a default (`ttl = 30_000`): an omitted argument still gives a value. */
  readonly hasDefault?: boolean;
  /** Declared optional (`ttl?: number`): an omitted argument is undefined. */
  readonly optional?: boolean;
  /**
   * A parameter of the class's constructor that the method reads from a field (`this._lock_key`, set from
   * `constructor(redis, lock_key)`): the call's receiver supplies it, from its `new Lock(redis, key)`.
   */
  readonly ctor?: boolean;
}

/** A piece of a key as a helper builds it: literal text, a parameter's value, or a part nobody can read statically. */
export type KeyPart = { readonly text: string } | { readonly param: ParamRef } | { readonly any: true };

/**
 * What a call of an exported helper does to a key-value lock, as plain data (the audit hands it to the modules that
 * import the helper): the command, the key and TTL in terms of the parameters, and the verdicts the helper's own
 * module reached (its TTL, how its delete checks the owner, whether the key is used as a lock).
 */
export interface HelperEffect {
  readonly command: KvCommand;
  readonly nx: boolean;
  readonly script?: KvOp["script"];
  /** The key: parts with parameters, or the helper's own shape when no parameter is part of it. */
  readonly key: readonly KeyPart[] | { readonly fixed: KeyShape };
  /** The client the helper sends on, as the helper's module names it, or the parameter that passes it in. */
  readonly client: string | { readonly param: ParamRef };
  /** For an acquire: its TTL as the helper's module judged it. */
  readonly ttl?: KvLock["ttl"];
  readonly value?: ParamRef;
  readonly constantValue?: StaticValue;
  /** For a delete: owner-checked, plain, or GET-compare-DEL. */
  readonly release?: KvReleaseKind;
  /**
   * Made through the handle the helper returns, not by its call: the method of the returned object (`release` of
   * `{ acquired: true, release: async () => … }`) the caller calls later (`lock.release()`).
   */
  readonly handle?: string;
  readonly line: number;
}

/**
 * An exported helper's summary. `name` is how an importer reaches it: `acquireLock` (a function),
 * `RedisLock.acquire` (a static method), `RedisLock#acquire` (an instance method), `default` (a default export).
 */
export interface ExportedHelper {
  readonly name: string;
  readonly effects: readonly HelperEffect[];
  /**
   * Its session advisory locks and unlocks on the module's pool (`db.$queryRaw\`SELECT pg_try_advisory_lock(…)\``
   * in `tryAdvisoryLock(id)`): the pool is the module's own, so every caller's lock is a pool's lock.
   */
  readonly advisory?: readonly AdvisoryHelperEffect[];
  /** The module that defines it, when another one re-exports it (a barrel); relative to the project. */
  readonly file?: string;
  /**
   * Its releases of lock rows that change hands while held, made by the row's key alone (`clearLease(id)` unsetting
   * a lease by `_id`): a function whose every state write is such a release is that release wherever it is called.
   */
  readonly rowReleases?: readonly RowReleaseEffect[];
  /**
   * Its claims that nothing in its module recovers (`require-stale-recovery` there): a function whose every state
   * write is such a claim (`claimNextPending()`) takes that lock wherever it is called.
   */
  readonly claims?: readonly ClaimEffect[];
  /**
   * The claims and lock rows (by `claimKey`) it moves off their held value or frees by identity (`markProcessed(id)`,
   * `clearLease(id)`): a caller that makes such a call after taking the lock through the module holds it across
   * its work, so the module's verdicts on the take and the release are that caller's too.
   */
  readonly frees?: readonly string[];
}

/** A claim with no recovery in the helper's module, as plain data for the modules that call the helper. */
export interface ClaimEffect {
  /** The lock in words: `outbox.status = "processing"`, `locks (lock row)`, `job.lockedUntil (lease)`. */
  readonly name: string;
  /** Q1 is answered in the helper's module (a take-over, a recovery): the call takes the lock, nothing to report. */
  readonly answered: boolean;
  /** The pairing key across modules (`summary.ts`'s `lockKey`): a recovery of it anywhere answers the claim. */
  readonly key: string;
  /** What nothing moves back: the claimed value (`"processing"`), or how the lock row or lease stays taken. */
  readonly stuck: string;
  readonly line: number;
  /**
   * The helper's parameter that picks the row (`acquireLock(name)`: `{ name, locked: false }`): calls with different
   * arguments take different locks, each its own finding.
   */
  readonly rowParam?: number;
}

/** A call of another module's claim helper: the helper's unrecovered claim, taken where the call is. */
export interface ImportedClaim {
  /** The first call of the helper; the calls after it share its one finding (`alsoAt`, their lines). */
  readonly call: TSESTree.CallExpression;
  readonly alsoAt: readonly number[];
  readonly helper: string;
  readonly file: string;
  readonly effect: ClaimEffect;
  /** The row the calls take, when the helper picks it by a static argument (`acquireLock("resetDailyTasks")`). */
  readonly row?: string;
}

/**
 * An unchecked release of a lock row, as the helper's module judged it (`owner-checked-release`'s `rowRelease`
 * there): plain data for the modules that call the helper. The lock in words, how the write picks the row, and
 * where the helper's write and the lock's acquire are, in the helper's module.
 */
export interface RowReleaseEffect {
  /** The lock row's pairing key (`claimKey` of its claim). */
  readonly key: string;
  /** `lease on MessageEvent.lockUntil`, `lock row in scheduledTasks`, `lock row "payout" in setting`. */
  readonly lock: string;
  /** The fields the write picks the row by (`_id`, `taskName`), in words. */
  readonly filter: string;
  readonly operation: "delete" | "write";
  readonly line: number;
  readonly acquireLine: number;
}

/** A call of another module's lock-row release helper: the helper's unchecked release, made where the call is. */
export interface ImportedRowRelease {
  /** The first call of the helper; the calls after it share its one finding (`alsoAt`, their lines). */
  readonly call: TSESTree.CallExpression;
  readonly alsoAt: readonly number[];
  /** The helper as the call names it (`clearLease`, `queue.release`). */
  readonly helper: string;
  /** The helper's module, relative to the project. */
  readonly file: string;
  readonly effect: RowReleaseEffect;
}

export interface AdvisoryHelperEffect {
  readonly fn: AdvisoryLockOp["fn"];
  readonly try: boolean;
  /** The client as the helper's module names it (`db`). */
  readonly client: string;
  readonly line: number;
}

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
   * Which connection runs it: a `pool` (every query may take another connection), one checked-out or dedicated
   * `connection`, a `transaction`'s connection, or `unknown`.
   */
  readonly via: "pool" | "connection" | "transaction" | "unknown";
  readonly node: Node;
  /** Made through an exported helper of another module (`tryAdvisoryLock(id)`): `node` is the call of it. */
  readonly helper?: AdvisoryHelper;
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
  /** A local temporary file (`os.tmpdir()`, `/tmp/…`): scratch space, not an effect anyone else sees. */
  readonly temporary?: boolean;
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

export type StateAccess = StateWrite | StateRead | KvOp | LibraryLockOp | AdvisoryLockOp | ObjectWrite | TableOp;

/** A comparison of a timestamp with a threshold that means "older than" (`updatedAt < threshold`). */
export interface TimePredicate {
  readonly field: string;
  readonly node: Node;
}

/** A condition checked in JavaScript before a write (`if (job.status !== "PENDING") return;`). */
export interface Guard {
  readonly test: TSESTree.Expression;
  /** True when the write runs only if `test` is false (early exit, else branch). */
  readonly negated: boolean;
  /** Timestamp fields the test judges age by; empty when it judges no age. */
  readonly timeFields: readonly string[];
  readonly judgesAge: boolean;
}

/** The lock a claim takes: which row field is set to which in-progress value. */
export interface LockKey {
  readonly model: string;
  readonly field: string;
  readonly value: StaticValue;
  /** Source text of the value as the claim writes it (`"GENERATING"`, `JobStatus.GENERATING`). */
  readonly valueText: string;
}

/** A check made outside a write, in a JS `if` or in an earlier read: the "check" of check-then-act. */
export interface Check {
  readonly kind: "if" | "read";
  readonly node: Node;
  /** Timestamps the check judges age by (for recoveries). */
  readonly timeFields: readonly { readonly field: string; readonly node: Node }[];
  /**
   * For a claim's `if`: the one value of the claimed field the check lets through, where it pins one
   * (`if (job.status !== "QUEUED") return` lets only QUEUED by). A write made conditional on it repeats the check
   * exactly; one that only excludes the claimed value also takes a row that finished meanwhile.
   */
  readonly requires?: StaticValue;
}

export interface Claim {
  readonly write: StateWrite;
  readonly lock: LockKey;
  readonly assignment: Assignment;
  /** Branches of the filter that let the claim take over a lock whose time predicate says it is stale (a lease). */
  readonly takeover: readonly TimePredicate[];
  /** Set when the claim is check-then-act: the write itself is unconditional and a JS `if` or an earlier read checked. */
  readonly check?: Check;
  /** A lock row inserted under a unique key (`INSERT … ON CONFLICT DO NOTHING` into a lock table): no field is set. */
  readonly insert?: boolean;
  /**
   * A lease stamped on a row whose lease is free (`leaseUntil < now` or absent): `lock.field` is the lease column.
   * Like an inserted lock row it is a *lock row*: released by a delete or by clearing the lease, never moved
   * through a lifecycle.
   */
  readonly lease?: boolean;
  /** For a lease: another write stamps the lease column again (a heartbeat), so its age tells progress, not the start. */
  readonly renewed?: boolean;
  /**
   * A lock row of an ordinary table picked by a constant lock name (`systemSetting` where `key = "payout_lock"`):
   * `lock.field` is the key column and `lock.value` the name. It is taken after a read of the row (`check`), so
   * releases are the deletes of that row by the same name.
   */
  readonly keyed?: boolean;
  /**
   * A lock row created after a read found none (`findFirst({ where: { transactionId } })`, then `create` with that
   * `transactionId`), in a table whose unique keys the project's schema declares and none of which lies within the
   * fields the read looked the row up by: the insert is not exclusive, so two callers that both found none both
   * create one (`check` is the read). Known only where a schema was read (the audit, src/audit/schemas.ts).
   */
  readonly unenforced?: { readonly fields: readonly string[]; readonly keys: readonly (readonly string[])[] };
}

/** A lock row's release by its holder: a delete of the row, or a write that clears its lease, picked by the row's key. */
export interface RowRelease {
  readonly write: StateWrite;
  readonly claim: Claim;
  /** The filter also requires this holder's owner or token column, or the lease it stamped: it frees only its own row. */
  readonly ownerChecked: boolean;
}

export type RecoveryFlaw = "check-in-js" | "missing-status" | "missing-time";

export interface Recovery {
  readonly write: StateWrite;
  readonly lock: LockKey;
  readonly claim: Claim;
  readonly timePredicates: readonly TimePredicate[];
  /** The check that judged staleness (a JS `if`, an earlier read), when the write did not. */
  readonly check?: Check;
  readonly flaws: readonly RecoveryFlaw[];
}

/** A write by the claim's holder that moves the locked field off the claimed value (completion, failure). */
export interface HolderWrite {
  readonly write: StateWrite;
  readonly claim: Claim;
  readonly assignment: Assignment;
  /** Whether the filter still requires the claim to be held (claimed value, owner or token column). */
  readonly fenced: boolean;
  /**
   * Written in the claim's own function before anything is awaited since the claim (`if (!handler) { await
   * fail(job.id); return; }`): the holder cannot have outlived its claim yet, so no newer holder can be overwritten.
   * Still a holder write for every other question (a `finally` that releases a row never taken).
   */
  readonly beforeAnyWait?: boolean;
}

/** A row release reached without the claim: `exit` leaves the `try` before the claim, `release` runs in its `finally`. */
export interface UntakenRelease {
  readonly claim: Claim;
  readonly release: StateWrite;
  readonly exit: Node;
}

/** Everything the rules ask about one module: built once, shared by every rule. */
/** A read that looks for rows stuck in an in-progress value by age: where a recovery decides who is dead. */
export interface StaleScan {
  readonly read: StateRead;
  readonly field: string;
  readonly value: StaticValue;
  readonly timePredicates: readonly TimePredicate[];
}

/** A key-value lock: an NX acquire, how it expires, and how it is released. */
export interface KvLock {
  readonly acquire: KvOp;
  /** `absent` and `conditional` come from the acquire; `separate` is SETNX/SET NX then EXPIRE in another round trip. */
  readonly ttl: TtlPresence | "separate";
  /** The EXPIRE that gives the key its TTL after the fact, when there is one. */
  readonly expire?: KvOp;
  /** The key looks like a lock, or this module releases it: it is not a one-shot marker. */
  readonly lockLike: boolean;
  /**
   * Its expiry is a day or more (`EX 90 * 24 * 3600`): it does not lapse while its holder works, so no other holder
   * takes the key meanwhile and a release by key alone frees nobody else's lock (Q3 is moot; a wedge, if any, is Q1).
   */
  readonly outlastsWork?: boolean;
  /**
   * Taken by a plain SET after a JS check of a GET of the key that turns away any other holder: a set-if-absent in
   * two round trips, which two callers can both pass.
   */
  readonly checkedBy?: KvOp;
  /**
   * Plain SETs of the key that replace the lock's constant value with another one (`"processing"` by `"done"`, a
   * processed marker that outlives the claim): the hold ends there, as at a release, though nothing is deleted.
   */
  readonly endedBy?: readonly KvOp[];
}

/**
 * `self-compared`: a compare-and-delete whose token is the value just read from the key itself (`const v = await
 * redis.get(key); eval(CAD, 1, key, v)`): the comparison always matches, so it checks no owner. `shared-token`: a
 * compare-and-delete handed the one constant every holder of the lock stores (`acquire(KEY, "true")` …
 * `release(KEY, "true")`): it matches whoever holds the key now.
 */
export type KvReleaseKind = "owner-checked" | "plain" | "get-compare" | "self-compared" | "shared-token";

export interface KvRelease {
  readonly op: KvOp;
  readonly lock: KvLock;
  readonly kind: KvReleaseKind;
  /** For `get-compare`: the GET whose result the JS compares; for `self-compared`, the GET the token comes from. */
  readonly get?: KvOp;
}

/** A plain SET over a held lock key after a JS check of its current value: two takers both win. */
export interface KvTakeover {
  readonly op: KvOp;
  readonly lock: KvLock;
  readonly get?: KvOp;
  /**
   * The check compares the value read with the clock: the lock's value is an expiry instant (the old SETNX recipe),
   * and a stale lock is taken over once it has passed. That take-over answers Q1 for the lock (a holder that died
   * before its EXPIRE is taken over all the same); its GET-then-SET race stays a Q3 finding.
   */
  readonly byTime?: boolean;
  /** The SET is the lock's own acquire, checked in JS (`KvLock.checkedBy`): two acquirers race, not a take-over. */
  readonly acquire?: boolean;
  /** A GETSET whose replaced value the code reads: of two takers only the one that swapped out the stale value goes on. */
  readonly swapChecked?: boolean;
}

export interface KvFacts {
  readonly ops: readonly KvOp[];
  readonly locks: readonly KvLock[];
  readonly releases: readonly KvRelease[];
  readonly takeovers: readonly KvTakeover[];
  readonly libraryLocks: readonly LibraryLockOp[];
  /**
   * Locks and releases made through a helper of this module (`KvOp.via`) whose flaw, if any, is the helper's own and
   * is reported there once (`locks`, `releases`): the callers' view, for what only a caller shows (the paths a held
   * lock escapes by, the effects made while holding it).
   */
  readonly viaHelpers: { readonly locks: readonly KvLock[]; readonly releases: readonly KvRelease[] };
  /** Counting semaphores: slots taken by INCR against a bound and given back by DECR. */
  readonly semaphores: readonly KvSemaphore[];
}

/**
 * A counting semaphore kept in one counter: a slot is taken by an INCR whose result is compared with a bound
 * (`if (await redis.incr(key) > max) …`), and given back by a DECR of the same key in another function. The
 * counter does not know who holds a slot: a holder that dies never gives its slot back unless the key expires.
 * A rate limiter counts too, but never gives anything back (no DECR elsewhere): it is no semaphore.
 */
export interface KvSemaphore {
  readonly acquire: KvOp;
  readonly releases: readonly KvOp[];
  /** An EXPIRE of the counter anywhere in the module: the counter resets, so dead holders' slots come back. */
  readonly expire?: KvOp;
}

/**
 * An in-process lock table: an entry set after a test that turns the caller away while the key is present
 * (`if (locks.has(key)) return; locks.set(key, { at: now })`), and deleted when its holder is done. It dies with its
 * process, so Q1 does not arise. Q3 does once an entry can be freed by age (an old entry taken over, an expiry the
 * test reads, a timer that deletes it): a holder that outlives it and then deletes by key alone frees the entry of
 * whoever took over.
 */
export interface LockTable {
  readonly table: string;
  readonly acquire: TableOp;
  /** The test of the key's presence that the acquire is taken after. */
  readonly test: Node;
  /**
   * How an entry is freed by age, when it is: taken over by the next caller, treated as free once expired, deleted by
   * a timer, or by a sweep of expired entries.
   */
  readonly expiry?: { readonly node: Node; readonly kind: "takeover" | "expires" | "timer" | "sweep" };
  /** The deletes that end a hold, and whether each checks first that the entry is still its holder's. */
  readonly releases: readonly { readonly op: TableOp; readonly ownerChecked: boolean }[];
}

/** An in-process or session lock, its releases in the acquiring function, and the paths on which they are missed. */
export type HeldLockKind = "mutex" | "flag" | "advisory" | "kv" | "library";

/** A way out of the acquiring function that does not pass a release. */
export interface PathEscape {
  /** `return` (or falling off the end), an explicit `throw`, or an `await` whose rejection nothing catches. */
  readonly kind: "return" | "end" | "throw" | "await";
  readonly node: Node;
}

export interface HeldLock {
  readonly kind: HeldLockKind;
  /** How messages name it: `this.running`, `mutex`, `pg_advisory_lock`, the key's text. */
  readonly name: string;
  readonly acquire: Node;
  /** Releases in the acquiring function (unlock calls, `running = false`, ending the session's connection). */
  readonly releases: readonly Node[];
  /** A TTL bounds how long a missed release holds it (Redis, Redlock, redis-semaphore). */
  readonly ttl: boolean;
  readonly escapes: readonly PathEscape[];
  /** `return work()` inside the `try` whose `finally` releases: the release runs before the returned promise settles. */
  readonly releasedEarly?: Node;
  /**
   * `try { if (running) return; running = true; … } finally { running = false }`: a way out of the `try` before the
   * lock is taken, through a `finally` that releases it, so a caller that never took the lock frees the one who did.
   */
  readonly releasedUntaken?: { readonly exit: Node; readonly release: Node };
  /** Advisory locks: how lock and unlock reach the database. */
  readonly advisory?: {
    readonly via: AdvisoryLockOp["via"];
    /** Unlocks sent through a pool, where they may run on another connection. */
    readonly pooledUnlocks: readonly Node[];
    /** No unlock and no closed connection anywhere in the module. */
    readonly neverUnlocked: boolean;
    /** The connection goes back to the pool (`client.release()`) with the lock still held. */
    readonly returnedToPool?: Node;
    /** Taken through a helper of another module, which sends it on that module's pool. */
    readonly helper?: AdvisoryHelper;
  };
}

/**
 * A lock library's acquire that throws when the lock is held elsewhere (Redlock's `acquire`/`lock`, redis-semaphore's
 * `acquire`), awaited in a `try` whose `catch` neither returns nor throws, with work after the `try` that does not
 * test whether the lock was taken: the work runs in every caller, the lock excludes nobody.
 */
export interface IgnoredAcquireFailure {
  readonly acquire: Node;
  readonly handler: TSESTree.CatchClause;
  /** The lock's resource as the code writes it (`\`job:${id}\``), or the library's receiver. */
  readonly name: string;
}

/** A lock that effects are made under: a database claim, a key-value lock, or a lock library's lock. */
export type EffectLock =
  | { readonly kind: "claim"; readonly claim: Claim }
  | { readonly kind: "kv"; readonly lock: KvLock }
  | { readonly kind: "library"; readonly op: LibraryLockOp };

/** What a lock hands its holder to pass on to its effects: an owner or token column the claim stamps, a lock value. */
export interface LockToken {
  /** The column a claim stamps (`lockedBy`, `fencingToken`, `version`); none for key-value and library locks. */
  readonly field?: string;
  /** The expression holding the token (`workerId`, `token`, `lock.value`), when the holder has one to pass on. */
  readonly node?: Node;
  /** How messages name it: the expression's text, or the column. */
  readonly text: string;
}

/**
 * An effect made while holding a lock, and whether a late holder (one that resumed after its lock lapsed) is
 * refused or harmless. `kind` says what was read:
 * - `takeover-row`: a write to the claimed row by a claim that stamps a token and can take over a stale lease;
 *   only the token tells the holders apart, the claimed status does not (the new holder has the same one);
 * - `result-row`: a write of results onto the claimed row (not the claimed field) by a claim that stamps a token;
 * - `object`: an object-storage or file write;
 * - `kv-row`: a write of a state field to the row a key-value or library lock is keyed by.
 */
export interface HeldEffect {
  readonly kind: "takeover-row" | "result-row" | "object" | "kv-row";
  readonly lock: EffectLock;
  readonly write: StateWrite | ObjectWrite;
  /** The token the effect should carry, when the lock yields one. */
  readonly token?: LockToken;
  /** For row writes: the assignment reported (the field moved, or the first result field). */
  readonly assignment?: Assignment;
  /** Refused or harmless when late: conditioned on the token, keyed by the job, conditional, or temporary. */
  readonly fenced: boolean;
}

/** A lock row whose owner column is written with a value made only from what its key is made of. */
export interface KeyDerivedHolder {
  readonly claim: Claim;
  /** The owner column and the assignment that writes it. */
  readonly owner: Assignment;
  /** The column that names the lock (`lock_key`), and the assignment or filter value that gives it. */
  readonly keyField: string;
  /** The variables both are made of (`userId`), for the message. */
  readonly sources: readonly string[];
}

export interface LockFacts {
  readonly kv: KvFacts;
  /** Locks whose release must be reached on every path of the acquiring function. */
  readonly held: readonly HeldLock[];
  /** In-process lock tables (a `Map` of entries per key) and their releases: Q3 once entries expire. */
  readonly lockTables: readonly LockTable[];
  /** Q3: library acquires whose failure is caught and the guarded work run anyway. */
  readonly ignoredAcquireFailures: readonly IgnoredAcquireFailure[];
  /** Effects made while holding a lock, fenced or not (`require-fencing`). */
  readonly heldEffects: readonly HeldEffect[];
  readonly writes: readonly StateWrite[];
  readonly reads: readonly StateRead[];
  readonly staleScans: readonly StaleScan[];
  readonly claims: readonly Claim[];
  readonly recoveries: readonly Recovery[];
  readonly holderWrites: readonly HolderWrite[];
  /**
   * Q3: holder writes that free the claim from a `finally` whose `try` also holds a way out taken when the row is
   * found held (`if (lock.is_running) return;` before the claim): a caller that never claimed frees the holder's row.
   */
  readonly untakenReleases: readonly UntakenRelease[];
  /** Q3: the releases of lock rows (inserted under a unique key, or leased), owner-checked or not. */
  readonly rowReleases: readonly RowRelease[];
  /**
   * Q3: lock rows and leases taken where the row is free or already the caller's own (`OR holder =
   * EXCLUDED.holder`), whose holder is made from the lock's own key (`lock_key = 'lock:' || user`, `holder = user`):
   * every caller of the key writes the same holder, so each is "the holder" and the lock lets them all in.
   */
  readonly keyDerivedHolders: readonly KeyDerivedHolder[];
  /** Q2: lease renewals (EXPIRE of a held key, library extends, heartbeat writes) and where their failure lands (renewals.ts). */
  readonly renewals: readonly Renewal[];
  /** The module's exported lock helpers, for the modules that import them (src/core/summaries/, the audit). */
  readonly helpers: readonly ExportedHelper[];
  /** Q3: calls of imported helpers that release a lock row by its key alone (the audit only: `locksImportedHelpers`). */
  readonly importedRowReleases: readonly ImportedRowRelease[];
  /** Q1: calls of imported helpers that take a claim nothing recovers (the audit only: `locksImportedHelpers`). */
  readonly importedClaims: readonly ImportedClaim[];
  /** Q1: the recoveries and lease take-overs that answer a claim. */
  recoveriesOf(claim: Claim): readonly Recovery[];
  /**
   * A sweeper's recoveries of claims this module does not make (a cron job, a `resetStale` of a queue module): their
   * `claim` is a stand-in for the claim made elsewhere. Computed when first asked.
   */
  sweeps(): readonly Recovery[];
  /**
   * Q1 answered by the module's callers: an exported read that picks the claim's rows stuck by age
   * (`staleJobs()` returning `state = claimed AND claimed_at < cutoff`), with no write of the module after it. A
   * repository module hands its stale rows to whoever moves them back; the audit follows that caller.
   */
  staleRowsHandedOut(claim: Claim): StateRead | undefined;
  /**
   * Q1 answered in this module: the claim takes over expired leases itself, a recovery of the module frees it,
   * the module hands its stuck rows to a caller (`staleRowsHandedOut`), or a `locks-recovered-by` directive names
   * the module that does (the audit checks it). What is left is `require-stale-recovery`'s.
   */
  answeredHere(claim: Claim): boolean;
  /**
   * Whether the claim can pass to another holder while its holder still works: it takes over stale leases itself
   * (in the claim, or by a separate write that re-stamps the owner of stale rows),
   * a recovery in this module judges age and frees it, a `locks-recovered-by` directive names the module that does,
   * or the audit paired it with such a recovery elsewhere. Only then can a late holder's write or release land on a
   * newer holder's row (Q3: `require-fencing`, `owner-checked-release` on rows); until then Q1 is the finding.
   */
  changesHands(claim: Claim): boolean;
  /**
   * Q2: the module stamps `field` of the model only in its claims (`lock_expires_at = now() + interval '5 minutes'`
   * when a job is claimed) and in no other write: no heartbeat renews it, so whatever its name, it says when
   * the work started, not whether it still progresses.
   */
  stampedOnlyByClaims(model: string, field: string): boolean;
  /**
   * `field` is written when a row of the model is created (an INSERT, a `create`) or claimed, and by no other write
   * (`next_run_at`, set when a job is queued, rewritten by no claim and no heartbeat): it says when the row was made
   * or due, not whether its holder still works.
   */
  stampedOnlyAtCreationOrClaim(model: string, field: string): boolean;
  /**
   * A write of the model that is not a claim clears `field` (`lock_expires_at = NULL` when a job completes or fails):
   * the module keeps the column's whole lifecycle, so a stamp only its claims make is one nothing renews.
   */
  clearedOutsideClaims(model: string, field: string): boolean;
  /**
   * Q2: the timestamp the module keeps moving for rows of the model while their holder works: a field a write of
   * the model stamps with the clock while it leaves the state where it is (a heartbeat), other than the claim's own
   * write. With `claim`, what the code does outweighs the name: a write whose filter holds only the claimed rows
   * (it pins the claimed value, or the owner) is a heartbeat whatever its field is called (`lastBatchAt`), a field
   * named as a start time excepted; a touch of rows in another state is none. Without one, the field must be named
   * as progress (`progressTimeFields`).
   */
  keptMoving(model: string, claim?: Claim): string | undefined;
}

/** The calls and functions of a module, collected once by the inventory for the facts that walk them. */
export interface ModuleShape {
  readonly calls: readonly TSESTree.CallExpression[];
  readonly functions: readonly TSESTree.FunctionLike[];
}

// Renewals: a lease or lock extended while its holder works (built by facts/renewals.ts).
/** Where a renewal's failure ends up. `stops` and `unknown` are not findings; every other kind is. */
export type FailureHandling =
  | { readonly kind: "stops" }
  | { readonly kind: "unknown" }
  /** The promise is dropped (`void renew()`, a bare call, an arrow returning it to `setInterval`). */
  | { readonly kind: "not-awaited"; readonly at: Node }
  /** The rejection leaves a timer callback (`timer` is the `setInterval`/`setTimeout` call). */
  | { readonly kind: "escapes-timer"; readonly at: Node; readonly timer: Node }
  /** The renewal resolves its failure as a value (0, a count of 0) that nobody reads. */
  | { readonly kind: "result-ignored"; readonly at: Node }
  /** The result is tested (`at`), but no branch of the test stops the work. */
  | { readonly kind: "no-abort"; readonly at: Node }
  /** A `catch`, `.catch()` or `onLockLost` handler (`at`) takes the failure and does not stop the work. */
  | { readonly kind: "swallowed"; readonly at: Node }
  /** Redlock `using()`: the callback takes no signal, or never reads it. */
  | { readonly kind: "signal-ignored"; readonly at: Node; readonly signal?: string };

export type RenewalVia = "redis" | "library" | "using" | "database";

export interface Renewal {
  readonly via: RenewalVia;
  /** The renewing call (or, for redis-semaphore's `onLockLost`, the acquire). */
  readonly node: Node;
  /** Where findings point: the command and its arguments. */
  readonly loc: TSESTree.SourceLocation;
  /** The command in words: `PEXPIRE`, `SET … PX`, `the compare-and-expire script`, `extend()`, `the heartbeatAt update`. */
  readonly command: string;
  /** The lock in words, as a noun phrase: `the lock "lock:job:*"`, `the claimed jobs row`, `the Redlock lock \`lock\``. */
  readonly lock: string;
  /** Where the lock is taken (the NX acquire, the claim, the library acquire), when the module shows it. */
  readonly acquire?: Node;
  /** The renewal extends only while this holder still owns the lock (compare-and-expire, a fenced heartbeat, a library). */
  readonly owned: boolean;
  /** How failure shows: a rejection only, or also a value (EXPIRE's 0, a count of 0). */
  readonly signal: "value" | "rejection";
  /** For an unowned Redis renewal made after a GET of the key compared in JavaScript: that GET (a check, but not atomic). */
  readonly comparedGet?: Node;
  /** For an unfenced database heartbeat: the fields it picks its row by. */
  readonly rowFilter?: string;
  readonly handling: FailureHandling;
}
