/**
 * The facts of one module that every rule reads (`LockFacts`), built once by the rule kit, and the module's calls
 * and functions the facts walk.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node, StateRead, StateWrite } from "./accesses.js";
import type {
  Claim,
  HolderWrite,
  KeyDerivedHolder,
  OwnedLeaseRelease,
  Recovery,
  RowRelease,
  StaleScan,
  UntakenRelease,
} from "./claims.js";
import type { KvFacts } from "./kv-locks.js";
import type {
  HeldEffect,
  HeldLock,
  IgnoredAcquireFailure,
  LockTable,
  PoisonedChain,
  PromiseMemo,
  UnheldXactLock,
} from "./held-locks.js";
import type { ExportedHelper, ImportedClaim, ImportedRowRelease } from "./helper-summaries.js";
import type { Renewal } from "./renewals.js";
import type { FileLock } from "./lock-files.js";

/** Everything the rules ask about one module: built once, shared by every rule. */
export interface LockFacts {
  readonly kv: KvFacts;
  /** Locks whose release must be reached on every path of the acquiring function. */
  readonly held: readonly HeldLock[];
  /** In-process lock tables (a `Map` of entries per key) and their releases: Q3 once entries expire. */
  readonly lockTables: readonly LockTable[];
  /** Promises kept for every later caller with nothing that empties the slot when one rejects (Q1, in-process). */
  readonly promiseMemos: readonly PromiseMemo[];
  /** Promise chains kept as queues, which one rejection poisons for every later call (Q1, in-process). */
  readonly poisonedChains: readonly PoisonedChain[];
  /** Lock files (an exclusive create, or a write after a check) and how they are broken and released. */
  readonly files: readonly FileLock[];
  /** Q3: library acquires whose failure is caught and the guarded work run anyway. */
  readonly ignoredAcquireFailures: readonly IgnoredAcquireFailure[];
  /** Q3: transaction-level advisory locks sent outside any transaction, which exclude nothing. */
  readonly unheldXactLocks: readonly UnheldXactLock[];
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
   * Q3: releases of rows whose lease the module renews only while the owner column names the holder, where the
   * module shows no claim of the table (the claim is an RPC, a SQL function, another module's): the write clears the
   * owner by the row's identity alone (facts/pairing/owned-leases.ts).
   */
  readonly ownedLeaseReleases: readonly OwnedLeaseRelease[];
  /**
   * Q3: lock rows and leases taken where the row is free or already the caller's own (`OR holder =
   * EXCLUDED.holder`), whose holder is made from the lock's own key (`lock_key = 'lock:' || user`, `holder = user`):
   * every caller of the key writes the same holder, so each is "the holder" and the lock lets them all in.
   */
  readonly keyDerivedHolders: readonly KeyDerivedHolder[];
  /**
   * Q3: lock rows taken by an upsert that overwrites the row on its key whatever holds it (`ON CONFLICT (name) DO
   * UPDATE` with no condition, PostgREST's `upsert(row, { onConflict })`), in a lock table the module also deletes
   * from: the write never fails, so it excludes nobody.
   */
  readonly overwritingLocks: readonly StateWrite[];
  /**
   * Q3: conditional writes used as a lock that change nothing their filter tests: a row in an in-progress state
   * only stamped with the clock, its result deciding whether the caller goes on (pairing/stamp-only-claims.ts).
   */
  readonly stampOnlyClaims: readonly StampOnlyClaim[];
  /** Q3: conditional claims whose outcome nothing reads, so the caller that lost goes on too (unread-claims.ts). */
  readonly unreadClaims: readonly UnreadClaim[];
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
   * as progress (`progressTimeFields`). A progress write that stamps the claim's own stamp again keeps that moving
   * too. With `field`: that field, where a write keeps it moving.
   */
  keptMoving(model: string, claim?: Claim, field?: string): string | undefined;
  /**
   * The claim's holder cuts its own work off (an abort timer) before any recovery of the claim in the module judges
   * it stale: a start-time age test is then sound, and a late write impossible (facts/bounded-holds.ts).
   */
  boundedBelowRecovery(claim: Claim): boolean;
  /**
   * The holder keeps the claimed row locked while it works (a locking read of it by identity in a transaction of the
   * claiming function, after the claim), and every recovery of the claim skips locked rows: a recovery never takes
   * the row of a live holder, whatever age it judges, and the holder's writes made under that lock are its own.
   */
  heldUnderRowLock(claim: Claim): boolean;
}

/** The calls and functions of a module, collected once by the inventory for the facts that walk them. */
export interface ModuleShape {
  readonly calls: readonly TSESTree.CallExpression[];
  readonly functions: readonly TSESTree.FunctionLike[];
}

/** A conditional claim whose outcome nothing reads, with work run after it (unread-claims.ts). */
export interface UnreadClaim {
  readonly claim: Claim;
  /** The result is not kept, kept in `binding` and never read, or read only for PostgREST's `error`. */
  readonly how: "dropped" | "unused" | "error-only";
  readonly binding?: string;
  /** The first statement after it that runs more code. */
  readonly work: Node;
  /** The write picks a set of rows (`id in ids`): what the caller won is which of them, not whether. */
  readonly batch: boolean;
}

/** A write taken as a lock that only stamps a time on a row it leaves in `field` = `value` (stamp-only-claims.ts). */
export interface StampOnlyClaim {
  readonly write: StateWrite;
  readonly field: string;
  readonly value: string;
  /** The columns it stamps with the clock. */
  readonly stamped: readonly string[];
  /** The test of its result that turns the caller away when it returned nothing. */
  readonly check: Node;
}
