/** Renewals: a lease or lock extended while its holder works (built by facts/renewals.ts). */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "./accesses.js";

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
  /**
   * Made through another module's helper (`extendJobLock(…)`, `ExportedHelper.renews`): the helper in words, with its
   * module and line (`` `extendJobLock` in queue/client.ts, line 668 ``). The call is the renewal here.
   */
  readonly through?: string;
  /** For an unfenced database heartbeat: the fields it picks its row by. */
  readonly rowFilter?: string;
  readonly handling: FailureHandling;
}
