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
  | { readonly kind: "static"; readonly value: StaticValue }
  | { readonly kind: "now" }
  | { readonly kind: "other" };

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
  readonly filter: Condition;
  readonly assignments: readonly Assignment[];
  /** The whole call: where findings about the write are reported. */
  readonly node: Node;
  readonly addPredicate?: (field: string, op: "eq" | "ne", valueText: string) => TextEdit | undefined;
}

/** A read of persistent state with a filter (`findFirst({ where })`): the "check" half of check-then-act, or a stale scan. */
export interface StateRead {
  readonly access: "read";
  readonly store: string;
  readonly model: string;
  readonly operation: string;
  readonly filter: Condition;
  readonly node: Node;
}

export type StateAccess = StateWrite | StateRead;

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
}

export interface Claim {
  readonly write: StateWrite;
  readonly lock: LockKey;
  readonly assignment: Assignment;
  /** Branches of the filter that let the claim take over a lock whose time predicate says it is stale (a lease). */
  readonly takeover: readonly TimePredicate[];
  /** Set when the claim is check-then-act: the write itself is unconditional and a JS `if` or an earlier read checked. */
  readonly check?: Check;
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
}

/** Everything the rules ask about one module: built once, shared by every rule. */
/** A read that looks for rows stuck in an in-progress value by age: where a recovery decides who is dead. */
export interface StaleScan {
  readonly read: StateRead;
  readonly field: string;
  readonly value: StaticValue;
  readonly timePredicates: readonly TimePredicate[];
}

export interface LockFacts {
  readonly writes: readonly StateWrite[];
  readonly reads: readonly StateRead[];
  readonly staleScans: readonly StaleScan[];
  readonly claims: readonly Claim[];
  readonly recoveries: readonly Recovery[];
  readonly holderWrites: readonly HolderWrite[];
  /** Q1: the recoveries and lease take-overs that answer a claim. */
  recoveriesOf(claim: Claim): readonly Recovery[];
}
