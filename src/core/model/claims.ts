/**
 * Claims of rows and what answers them (facts/pairing/): the lock a claim takes, the checks made before it, the
 * recoveries, holder writes and stale scans paired with it, and the releases of lock rows.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, Node, StateRead, StateWrite, StaticValue } from "./accesses.js";

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

/** What every claim has: the write that takes the lock, the lock it takes, and how it takes it. */
interface ClaimParts {
  readonly write: StateWrite;
  readonly lock: LockKey;
  readonly assignment: Assignment;
  /** Branches of the filter that let the claim take over a lock whose time predicate says it is stale (a lease). */
  readonly takeover: readonly TimePredicate[];
  /** Set when the claim is check-then-act: the write itself is unconditional and a JS `if` or an earlier read checked. */
  readonly check?: Check;
}

/**
 * A lifecycle field moved to an in-progress value (`status: "RUNNING"` where the filter excludes it), or a processing
 * flag set (`locked: true`, `lock.value` is `true`): the row goes on living, and the claim is undone by moving the field
 * back (a completion, a recovery).
 */
export interface StatusClaim extends ClaimParts {
  readonly kind: "status";
}

/** A lock row inserted under a unique key (`INSERT … ON CONFLICT DO NOTHING` into a lock table): no field is set. */
export interface InsertedRowClaim extends ClaimParts {
  readonly kind: "inserted-row";
}

/**
 * A lock row of an ordinary table picked by a constant lock name (`systemSetting` where `key = "payout_lock"`):
 * `lock.field` is the key column and `lock.value` the name. It is taken after a read of the row (`check`), so
 * releases are the deletes of that row by the same name. A name made at run time from a template whose fixed text
 * names a lock (`` `cron_lock:${jobName}` ``) is `nameText`, the template's source, and picks the row wherever the
 * same template (directly or through a const) is compared with the key column.
 */
export interface KeyedRowClaim extends ClaimParts {
  readonly kind: "keyed-row";
  readonly nameText?: string;
  /**
   * The test that lets the write by only when the row read holds the caller (`data.owner === me`): the write renews
   * the caller's own lock after the read, by name alone, so one taken over in between is renewed for its new holder.
   */
  readonly heldByCaller?: Node;
}

/**
 * A lock row created after a read found none (`findFirst({ where: { transactionId } })`, then `create` with that
 * `transactionId`), in a table whose unique keys the project's schema declares and none of which lies within the
 * fields the read looked the row up by: the insert is not exclusive, so two callers that both found none both
 * create one (`check` is the read). Known only where a schema was read (the audit, src/audit/schemas.ts).
 */
export interface UnenforcedRowClaim extends ClaimParts {
  readonly kind: "unenforced-row";
  /** The fields the read looked the row up by, and the unique keys the schema declares for the table. */
  readonly fields: readonly string[];
  readonly keys: readonly (readonly string[])[];
}

/**
 * A lease stamped on a row whose lease is free (`leaseUntil < now` or absent): `lock.field` is the lease column.
 * Like an inserted lock row it is a *lock row*: released by a delete or by clearing the lease, never moved through a
 * lifecycle.
 */
export interface LeaseClaim extends ClaimParts {
  readonly kind: "lease";
  /** Another write stamps the lease column again (a heartbeat), so its age tells progress, not the start. */
  readonly renewed: boolean;
}

/**
 * A claim, by the kind of lock it takes. Code that must answer for every kind switches on `kind` and ends in
 * `unreachable(claim)`, so a new kind does not compile until each such place says what it means for it.
 */
export type Claim = StatusClaim | InsertedRowClaim | KeyedRowClaim | UnenforcedRowClaim | LeaseClaim;
export type ClaimKind = Claim["kind"];

/** A lock row made by a create or an insert (inserted under a unique key, keyed by a constant name, or unenforced). */
export type LockRowClaim = InsertedRowClaim | KeyedRowClaim | UnenforcedRowClaim;

export function isLockRow(claim: Claim): claim is LockRowClaim {
  const yes = () => true;
  const no = () => false;
  return byKind(claim, { "inserted-row": yes, "keyed-row": yes, "unenforced-row": yes, lease: no, status: no });
}

/** The row is the lock (a lock row or a lease): it is released by a delete or by clearing it, not by a lifecycle move. */
export function holdsRow(claim: Claim): claim is LockRowClaim | LeaseClaim {
  const yes = () => true;
  return byKind(claim, {
    "inserted-row": yes,
    "keyed-row": yes,
    "unenforced-row": yes,
    lease: yes,
    status: () => false,
  });
}

/**
 * The answer for the claim's kind, from a table with one entry per kind: a new kind does not compile until every
 * table says what it means for it (`byKind(claim, { status: …, lease: …, … })`).
 */
export function byKind<T>(
  claim: Claim,
  answers: { readonly [K in ClaimKind]: (claim: Extract<Claim, { readonly kind: K }>) => T },
): T {
  return (answers[claim.kind] as (c: Claim) => T)(claim);
}

/** For the end of an exhaustive switch: a value no case took (a kind added without an answer) does not compile. */
export function unreachable(value: never): never {
  throw new Error(`unhandled case: ${JSON.stringify((value as { kind?: unknown }).kind ?? value)}`);
}

/** A lock row's release by its holder: a delete of the row, or a write that clears its lease, picked by the row's key. */
export interface RowRelease {
  readonly write: StateWrite;
  readonly claim: Claim;
  /** The filter also requires this holder's owner or token column, or the lease it stamped: it frees only its own row. */
  readonly ownerChecked: boolean;
}

/** A release of a row whose lease the module renews by owner, made without naming the owner. */
export interface OwnedLeaseRelease {
  readonly write: StateWrite;
  /** The renewal that shows the lease and its owner column. */
  readonly heartbeat: StateWrite;
  /** The owner column, as the heartbeat's filter names it. */
  readonly ownerField: string;
  /** The lease column the heartbeat moves. */
  readonly leaseField: string;
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

/** A read that looks for rows stuck in an in-progress value by age: where a recovery decides who is dead. */
export interface StaleScan {
  readonly read: StateRead;
  readonly field: string;
  readonly value: StaticValue;
  readonly timePredicates: readonly TimePredicate[];
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
