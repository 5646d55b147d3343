/**
 * What a module's exported helpers do, as plain data that travels between modules (src/core/summaries/: the audit
 * hands it to the modules that import the helpers), and the calls of imported helpers an importer's facts hold.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, KeyShape, KvCommand, KvDialect, KvOp, KvReleaseKind, StaticValue } from "./accesses.js";
import type { KvLock } from "./kv-locks.js";

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
  /** The store and client dialect of the helper's own op: a call of the helper is an op of that store. */
  readonly store: string;
  readonly dialect: KvDialect;
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
  /**
   * Its renewals of a lease it holds by owner (`extendJobLock(id, token)`: an update of `expiresAt` where `lockToken`
   * is the caller's) whose failure its module leaves to the caller, as the function's result or its rejection: a
   * caller's heartbeat is then judged at its call (`heartbeat-abort`).
   */
  readonly renews?: readonly RenewalEffect[];
}

/** A renewal a helper makes and hands its outcome back to the caller for (`ExportedHelper.renews`). */
export interface RenewalEffect {
  /** The command and the lock in words, as the helper's module describes them (`the expiresAt update`). */
  readonly command: string;
  readonly lock: string;
  /** How a lost lease shows to the caller: a value the helper returns (a count, `false`), or a rejection only. */
  readonly signal: "value" | "rejection";
  readonly line: number;
}

/** A call of another module's renewal helper (`ExportedHelper.renews`): the renewal, made where the call is. */
export interface ImportedRenewal {
  readonly call: TSESTree.CallExpression;
  readonly helper: string;
  readonly file: string;
  readonly effect: RenewalEffect;
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
  /** The store of the helper's own op (the SQL client's). */
  readonly store: string;
  readonly fn: AdvisoryLockOp["fn"];
  readonly try: boolean;
  /** The client as the helper's module names it (`db`). */
  readonly client: string;
  readonly line: number;
}
