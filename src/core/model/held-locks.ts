/**
 * Locks held across work: in-process lock tables (facts/lock-tables.ts), locks whose release must be reached on every
 * path of the acquiring function (facts/held-locks/), lock-library acquires whose failure is ignored, and the
 * effects made while holding a lock, fenced or not (facts/fencing/).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  AdvisoryHelper,
  AdvisoryLockOp,
  Assignment,
  LibraryLockOp,
  Node,
  ObjectWrite,
  StateWrite,
  TableOp,
} from "./accesses.js";
import type { Claim } from "./claims.js";
import type { KvLock } from "./kv-locks.js";

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
  /**
   * The `await` of a wait for the holder found by the test, after which the entry is set without testing again
   * (`if (locks.has(key)) await locks.get(key); locks.set(key, mine)`): every waiter takes the key when it wakes.
   */
  readonly waited?: Node;
  /** The deletes that end a hold, and whether each checks first that the entry is still its holder's. */
  readonly releases: readonly { readonly op: TableOp; readonly ownerChecked: boolean }[];
  /**
   * Every release runs in a listener of a stream's `finish` event (`res.on("finish", () => locks.delete(key))`) and
   * none in one of `close`: an HTTP response, or any writable, emits `finish` only when all of it was written, so a
   * client that disconnects first leaves the entry until the process restarts. The listener's registration.
   */
  readonly releasedOnFinishOnly?: Node;
  /**
   * The entry is a promise of work in flight that a caller who finds it shares (`if (p) return await p`), rather than
   * being turned away: a rejected promise left in the table is what every later caller for the key gets.
   */
  readonly sharesInFlight?: boolean;
}

/** An in-process or session lock, its releases in the acquiring function, and the paths on which they are missed. */
/** `table`: a key's entry in an in-process `Map` or `Set` (`LockTable`), held by the function that set it. */
export type HeldLockKind = "mutex" | "flag" | "table" | "advisory" | "kv" | "library";

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
  readonly releasedUntaken?: {
    readonly exit: Node;
    readonly release: Node;
    /**
     * The await the way out follows, for a flag set only after it (`setAfterAwait`): the flag is not held when the
     * way out is tested, but another caller may have taken it while this one waited.
     */
    readonly afterWait?: Node;
    /** The release is in the `catch` of the `try`, and `exit` is something before the acquire that may throw. */
    readonly inCatch?: boolean;
  };
  /**
   * An in-process flag tested (`if (this.isSyncing) return`) and set only after the function awaited something in
   * between: another call runs while this one waits, passes the same test, and both go on.
   */
  readonly setAfterAwait?: { readonly check: Node; readonly wait: Node };
  /**
   * An in-process flag cleared only in the fulfilment callback (`release`) of a promise chain its function starts
   * (`chain`, the `.then` call), with nothing on the chain that clears it when the promise rejects.
   */
  readonly fulfilOnly?: {
    readonly release: Node;
    readonly chain: Node;
    /** Cleared by a callback handed to this module function, which calls it only after its awaits (`calledAt`). */
    readonly via?: string;
    readonly calledAt?: Node;
  };
  /** A lock table whose entries are promises of work in flight, shared by the callers who find one (`LockTable`). */
  readonly sharesInFlight?: boolean;
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

/**
 * A promise memo (facts/promise-memos.ts): a slot that outlives the call, filled with a promise when empty and handed
 * to every later caller, with no write that empties it again: a rejection is kept for every later caller.
 */
export interface PromiseMemo {
  /** The slot's text: `clientPromise`, `cached.promise`, `this.ready`. */
  readonly slot: string;
  /** The assignment that fills it (`clientPromise = client.connect()`, `p ??= init()`). */
  readonly fill: TSESTree.AssignmentExpression;
  /** The promise stored. */
  readonly value: Node;
}

/**
 * A transaction-level advisory lock sent outside any transaction (facts/held-locks/unheld-xact-locks.ts): its
 * statement is its own transaction, so the lock ends when the statement returns and excludes nothing after it.
 */
export interface UnheldXactLock {
  readonly node: Node;
  /** The client it is sent on, as the code names it (`pool`, `db`, `prisma`). */
  readonly client: string;
  readonly try: boolean;
}

/**
 * A promise chain kept as a queue (facts/promise-chains.ts): each call chained on the link before it with `.then` or
 * `.finally` and kept, with nothing that handles a rejection or drops the chain: one rejection is every later link's.
 */
export interface PoisonedChain {
  /** The link chained on the one before (`chain.finally(fn)`, `queue.then(job)`), where the fix goes. */
  readonly node: Node;
  /** The table or slot the chain is kept in. */
  readonly holder: string;
  /** The first link's method: `then` (later work skipped) or `finally` (run, but the rejection passed on). */
  readonly link: string;
}
