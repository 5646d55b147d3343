/**
 * Key-value locks, paired from key-value ops by key (facts/kv-pairing/): NX acquires and how they expire, their
 * releases and take-overs, and counting semaphores.
 */
import type { KvOp, KvReleaseKind, LibraryLockOp, Node, TtlPresence } from "./accesses.js";

/** A key-value lock: an NX acquire, how it expires, and how it is released. */
export interface KvLock {
  readonly acquire: KvOp;
  /** `absent` and `conditional` come from the acquire; `separate` is SETNX/SET NX then EXPIRE in another round trip. */
  readonly ttl: TtlPresence | "separate";
  /** The EXPIRE that gives the key its TTL after the fact, when there is one. */
  readonly expire?: KvOp;
  /**
   * For a `separate` expiry: a `return` or `throw` that leaves the acquiring function, the lock held, before the
   * EXPIRE and any release of the key (`if (!reserved) return null;`): the key stays set forever, no crash needed.
   */
  readonly expireSkippedBy?: Node;
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
  /** Locks taken by a write that never refuses, tested as if it could (Q3: they let every caller in). */
  readonly unrefusable: readonly UnrefusableLock[];
}

/**
 * A lock key written without NX (`SETEX lock 5 1`) whose result is tested as a try-acquire's would be, or a SET NX whose
 * promise is tested in place of its answer.
 */
export interface UnrefusableLock {
  readonly op: KvOp;
  /** The client's command, as called (`SETEX`, `SET`). */
  readonly command: string;
  /** The test that treats the write as refusable. */
  readonly test: Node;
  /**
   * The write refuses (SET NX), but the test reads the promise of it, not its answer: it was not awaited, and a
   * promise is always truthy.
   */
  readonly unawaited?: boolean;
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
