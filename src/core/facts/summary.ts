/**
 * The seam between the rules and the project-wide audit (src/audit/): a plain, serialisable summary of what one
 * module's lock facts say, lock by lock. The audit gets it from the same ESLint run that produces the rules'
 * findings (a collecting rule calls `summarizeModule` from its `onLockFacts` callback), so the summary and the
 * findings come from one inventory. Nothing here looks at client syntax: it reads `LockFacts` only.
 *
 * Cross-module pairing is by key: a claim's `key` is its (model, field, value), model names compared loosely as
 * `pairing/` does (`job` = `Job` = `jobs`); a lock row's is (table, `row`). A module's `recoveries` are the
 * writes that would recover such a key for a claim made anywhere (`buildForeignRecoveries`).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvReleaseKind, LibraryLockOp, StateAccess } from "../model/accesses.js";
import type { Claim, Recovery } from "../model/claims.js";
import type { KvLock } from "../model/kv-locks.js";
import type { HeldLock } from "../model/held-locks.js";
import type { ExportedHelper, ImportedClaim } from "../model/helper-summaries.js";
import type { LockFacts } from "../model/lock-facts.js";
import { buildForeignRecoveries } from "./pairing/foreign-recoveries.js";
import { claimKey, claimName } from "../model/names.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { recoveredByDirective } from "../reading/directives.js";
import { holdsRow, isLockRow } from "../model/claims.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** 1-based lines and columns, end exclusive, as ESLint reports them. */

/** How the inventory names the path a held lock escapes by. */
const ESCAPE_PATH = {
  return: "on the return",
  end: "when the function ends",
  throw: "on the throw",
  await: "when the await rejects",
} as const;

export interface Span {
  readonly line: number;
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
}

/** Where a question is answered (or why it is not). `file` is set only when another module answers it. */
export interface Answer {
  readonly status: "answered" | "unanswered" | "not-applicable";
  /** In words: "lease take-over in the claim (heartbeatAt)", "no stale recovery", "TTL on the acquire". */
  readonly how: string;
  readonly at?: Span;
  readonly file?: string;
}

export type LockKind = "claim" | "lock-row" | "kv" | "library" | "mutex" | "flag" | "advisory";

export interface LockSummary {
  readonly kind: LockKind;
  /** How the lock is named in reports: `job.status = "GENERATING"`, `lock:job:*`, `this.running`. */
  readonly name: string;
  /** The pairing key across modules (claims and lock rows only). */
  readonly key?: string;
  readonly acquire: Span;
  readonly q1: Answer;
  readonly q2: Answer;
  readonly q3: Answer;
  /** `// locks-recovered-by: <target>` next to the claim. */
  readonly directive?: { readonly target: string; readonly at: Span };
}

/** A write in this module that recovers `key` for a claim made anywhere. */
export interface RecoverySummary {
  readonly key: string;
  readonly name: string;
  readonly at: Span;
  /** The recovery's race flaws (`conditional-recovery`); empty when it is a conditional update. */
  readonly flaws: readonly string[];
  /** The timestamps it judges age by. */
  readonly timeFields: readonly string[];
  /** Judged only by a start time (`progress-based-staleness`). */
  readonly startTimeOnly: boolean;
  /**
   * It deletes the claimed rows (a purge of jobs stuck for months): it answers Q1, but hands no row to a next holder,
   * so a late write of the dead holder's finds none to overwrite and needs no fencing against one.
   */
  readonly removes?: boolean;
}

export interface ModuleSummary {
  readonly locks: readonly LockSummary[];
  readonly recoveries: readonly RecoverySummary[];
  /** The module's exported lock helpers (src/core/summaries/), handed by the audit to the modules importing them. */
  readonly helpers?: readonly ExportedHelper[];
}

export function spanOf(loc: TSESTree.SourceLocation): Span {
  return { line: loc.start.line, column: loc.start.column + 1, endLine: loc.end.line, endColumn: loc.end.column + 1 };
}

function timeFieldsOf(r: Recovery): { field: string }[] {
  return r.check ? [...r.check.timeFields] : [...r.timePredicates];
}

/** Q2 for a set of age judgements: a progress timestamp answers it, a start time alone does not. */
function ageAnswer(fields: readonly { field: string }[], vocabulary: ResolvedVocabulary, at: Span | undefined): Answer {
  const names = [...new Set(fields.map((f) => f.field))];
  if (names.length === 0) return { status: "not-applicable", how: "no age is judged" };
  const startOnly =
    !names.some((f) => vocabulary.isProgressTimeField(f)) && names.some((f) => vocabulary.isStartTimeField(f));
  const where = at ? { at } : {};
  return startOnly
    ? { status: "unanswered", how: `age judged by ${names.join(", ")}, a start time, not the last progress`, ...where }
    : { status: "answered", how: `age judged by ${names.join(", ")}`, ...where };
}

function claimSummary(
  sourceCode: SourceCode,
  claim: Claim,
  facts: LockFacts,
  vocabulary: ResolvedVocabulary,
): LockSummary {
  const acquire = spanOf(claim.write.node.loc);
  const recoveries = facts.recoveriesOf(claim);
  const directive = recoveredByDirective(sourceCode, claim.write.node);
  let q1: Answer;
  let q2: Answer;
  if (claim.takeover.length > 0) {
    q1 = { status: "answered", how: "the claim takes over an expired lease itself", at: acquire };
    q2 = ageAnswer(claim.takeover, vocabulary, spanOf(claim.takeover[0]!.node.loc));
  } else if (recoveries.length > 0) {
    const first = recoveries[0]!;
    q1 = {
      status: "answered",
      how: `stale recovery at line ${first.write.node.loc.start.line}`,
      at: spanOf(first.write.node.loc),
    };
    q2 = ageAnswer(recoveries.flatMap(timeFieldsOf), vocabulary, spanOf(first.write.node.loc));
  } else {
    q1 = {
      status: "unanswered",
      how: isLockRow(claim) ? "no sweeper or take-over of an expired lock row" : "no stale recovery",
    };
    q2 = { status: "not-applicable", how: "no recovery to judge age" };
  }
  let q3: Answer;
  const flawed = recoveries.find((r) => r.flaws.length > 0);
  if (claim.check) {
    q3 = {
      status: "unanswered",
      how: `check-then-act: checked ${claim.check.kind === "if" ? "in JavaScript" : "by a separate read"} at line ${claim.check.node.loc.start.line}`,
      at: spanOf(claim.check.node.loc),
    };
  } else if (flawed) {
    q3 = {
      status: "unanswered",
      how: `recovery at line ${flawed.write.node.loc.start.line} is racy (${flawed.flaws.join(", ")})`,
      at: spanOf(flawed.write.node.loc),
    };
  } else {
    q3 = {
      status: "answered",
      how: isLockRow(claim)
        ? "insert under a unique key"
        : recoveries.length > 0
          ? "conditional claim and conditional recovery"
          : "conditional claim",
    };
  }
  return {
    kind: isLockRow(claim) ? "lock-row" : "claim",
    name: claimName(claim),
    key: claimKey(claim),
    acquire,
    q1,
    q2,
    q3,
    ...(directive ? { directive: { target: directive.target, at: spanOf(directive.comment.loc) } } : {}),
  };
}

function kvSummary(sourceCode: SourceCode, lock: KvLock, facts: LockFacts): LockSummary {
  const acquire = spanOf(lock.acquire.loc);
  const ttl: Record<KvLock["ttl"], Answer> = {
    present: { status: "answered", how: "TTL on the acquire", at: acquire },
    conditional: { status: "unanswered", how: "TTL only on some paths", at: acquire },
    absent: { status: "unanswered", how: "no TTL", at: acquire },
    unknown: { status: "not-applicable", how: "expiry through an option the plugin does not read", at: acquire },
    separate: {
      status: "unanswered",
      how: "TTL set by a separate EXPIRE (not atomic)",
      ...(lock.expire ? { at: spanOf(lock.expire.loc) } : {}),
    },
  };
  const renewals = facts.renewals.filter((r) => r.acquire === lock.acquire.node);
  const badRenewal = renewals.find((r) => !r.owned || (r.handling.kind !== "stops" && r.handling.kind !== "unknown"));
  const q2: Answer =
    renewals.length === 0
      ? { status: "not-applicable", how: "not renewed: the TTL bounds the hold" }
      : badRenewal
        ? {
            status: "unanswered",
            how: `renewal (${badRenewal.command}) ${badRenewal.owned ? "does not stop the work when it fails" : "does not check ownership"}`,
            at: spanOf(badRenewal.loc),
          }
        : {
            status: "answered",
            how: `renewal (${renewals[0]!.command}) stops the work when it fails`,
            at: spanOf(renewals[0]!.loc),
          };
  const releases = facts.kv.releases.filter((r) => r.lock === lock);
  const takeover = facts.kv.takeovers.find((t) => t.lock === lock);
  const unsafe = releases.find((r) => r.kind !== "owner-checked");
  let q3: Answer;
  if (takeover)
    q3 = { status: "unanswered", how: "taken over by a plain SET after a GET", at: spanOf(takeover.op.loc) };
  else if (unsafe) q3 = { status: "unanswered", how: RELEASE_HOW[unsafe.kind], at: spanOf(unsafe.op.loc) };
  else if (lock.acquire.constantValue && releases.length > 0)
    q3 = { status: "unanswered", how: "constant lock value: the release cannot tell its owner", at: acquire };
  else if (releases.length > 0)
    q3 = { status: "answered", how: "owner-checked release", at: spanOf(releases[0]!.op.loc) };
  else q3 = { status: "not-applicable", how: "no release in this module: the lock expires" };
  return {
    kind: "kv",
    name: lock.acquire.key.opaque ? sourceCode.getText(lock.acquire.keyNode) : lock.acquire.key.text,
    acquire,
    q1: ttl[lock.ttl],
    q2,
    q3,
  };
}

/** How an unchecked release of a key-value lock is made, for the inventory's Q3 column. */
const RELEASE_HOW: Record<KvReleaseKind, string> = {
  "owner-checked": "owner-checked release",
  plain: "released by a plain DEL",
  "get-compare": "released by GET, compare in JavaScript, then DEL",
  "self-compared": "compare-and-delete handed the value just read from the key",
  "shared-token": "compare-and-delete handed the constant every holder stores",
};

function librarySummary(sourceCode: SourceCode, op: LibraryLockOp): LockSummary {
  const acquire = spanOf(op.node.loc);
  return {
    kind: "library",
    name: op.keyNode ? sourceCode.getText(op.keyNode) : (op.receiver ?? op.library),
    acquire,
    q1: { status: "answered", how: `${op.library} locks expire (TTL by construction)`, at: acquire },
    q2: { status: "not-applicable", how: "the library renews or expires the lock" },
    q3: { status: "answered", how: `${op.library} releases only its own lock` },
  };
}

function heldSummary(lock: HeldLock): LockSummary {
  const acquire = spanOf(lock.acquire.loc);
  const escape = lock.escapes[0];
  const advisory = lock.advisory;
  let q1: Answer;
  if (advisory?.neverUnlocked)
    q1 = { status: "unanswered", how: "never unlocked: held until the connection closes", at: acquire };
  else if (advisory?.returnedToPool)
    q1 = {
      status: "unanswered",
      how: "connection returned to the pool still holding the lock",
      at: spanOf(advisory.returnedToPool.loc),
    };
  else if (escape)
    q1 = {
      status: "unanswered",
      how: `the release is missed ${ESCAPE_PATH[escape.kind]} at line ${escape.node.loc.start.line}`,
      at: spanOf(escape.node.loc),
    };
  else if (lock.releasedEarly)
    q1 = { status: "unanswered", how: "released before the returned work settles", at: spanOf(lock.releasedEarly.loc) };
  else
    q1 = {
      status: "answered",
      how:
        lock.kind === "advisory"
          ? "unlocked on every path; the session ends with its connection"
          : "released on every path; dies with the process",
      ...(lock.releases[0] ? { at: spanOf(lock.releases[0].loc) } : {}),
    };
  const pooled = advisory?.pooledUnlocks[0];
  const q3: Answer = pooled
    ? { status: "unanswered", how: "unlock sent through a pool, maybe on another connection", at: spanOf(pooled.loc) }
    : { status: "not-applicable", how: "held by one process" };
  return {
    kind: lock.kind as LockKind,
    name: lock.name,
    acquire,
    q1,
    q2: { status: "not-applicable", how: "held by a live process" },
    q3,
  };
}

function recoverySummary(r: Recovery, vocabulary: ResolvedVocabulary): RecoverySummary {
  const fields = timeFieldsOf(r).map((f) => f.field);
  const q2 = ageAnswer(timeFieldsOf(r), vocabulary, undefined);
  return {
    key: claimKey(r.claim),
    name: claimName(r.claim),
    at: spanOf(r.write.node.loc),
    flaws: [...r.flaws],
    timeFields: [...new Set(fields)],
    startTimeOnly: q2.status === "unanswered",
    ...(r.write.effect === "delete" && !holdsRow(r.claim) ? { removes: true } : {}),
  };
}

/**
 * The claims taken through another module's helper that this module does not answer: no recovery of the same key
 * here (its own, or a sweep of claims made elsewhere), no `locks-recovered-by` directive at the call. What is left
 * is `require-stale-recovery`'s at the call, and a lock of this module for the audit to pair by key.
 */
export function unrecoveredImportedClaims(
  sourceCode: SourceCode,
  claims: readonly ImportedClaim[],
  facts: Pick<LockFacts, "recoveries" | "sweeps">,
): ImportedClaim[] {
  if (claims.length === 0) return [];
  const recovered = new Set([...facts.recoveries, ...facts.sweeps()].map((r) => claimKey(r.claim)));
  return claims.filter((c) => !recovered.has(c.effect.key) && !recoveredByDirective(sourceCode, c.call));
}

/** A claim taken through another module's helper, as this module's lock: Q1 open until the audit pairs its key. */
function importedClaimSummary(sourceCode: SourceCode, claim: ImportedClaim): LockSummary {
  const directive = recoveredByDirective(sourceCode, claim.call);
  return {
    kind: "claim",
    name: claim.effect.name,
    key: claim.effect.key,
    acquire: spanOf(claim.call.loc),
    q1: {
      status: "unanswered",
      how: `no stale recovery (claimed through \`${claim.helper}\`, ${claim.file} line ${claim.effect.line})`,
    },
    q2: { status: "not-applicable", how: "no recovery to judge age" },
    q3: { status: "answered", how: `conditional claim, in ${claim.file}` },
    ...(directive ? { directive: { target: directive.target, at: spanOf(directive.comment.loc) } } : {}),
  };
}

/** The module's locks and the recoveries it offers to other modules. Pure; safe to JSON.stringify. */
export function summarizeModule(
  sourceCode: SourceCode,
  facts: LockFacts,
  vocabulary: ResolvedVocabulary,
): ModuleSummary {
  const locks: LockSummary[] = [];
  for (const claim of facts.claims) locks.push(claimSummary(sourceCode, claim, facts, vocabulary));
  for (const claim of facts.importedClaims) locks.push(importedClaimSummary(sourceCode, claim));
  for (const lock of facts.kv.locks) if (lock.lockLike) locks.push(kvSummary(sourceCode, lock, facts));
  for (const op of facts.kv.libraryLocks) {
    if (op.library !== "in-process" && (op.op === "acquire" || op.op === "using"))
      locks.push(librarySummary(sourceCode, op));
  }
  for (const lock of facts.held)
    if (lock.kind === "mutex" || lock.kind === "flag" || lock.kind === "advisory") locks.push(heldSummary(lock));
  locks.sort((a, b) => a.acquire.line - b.acquire.line || a.acquire.column - b.acquire.column);
  const accesses: StateAccess[] = [...facts.writes, ...facts.reads];
  const own = facts.recoveries;
  const foreign = buildForeignRecoveries(sourceCode, accesses, vocabulary);
  const seen = new Set<string>();
  const recoveries: RecoverySummary[] = [];
  for (const r of [...own, ...foreign]) {
    const s = recoverySummary(r, vocabulary);
    const id = `${s.key}@${s.at.line}:${s.at.column}`;
    if (seen.has(id)) continue;
    seen.add(id);
    recoveries.push(s);
  }
  return { locks, recoveries, ...(facts.helpers.length > 0 ? { helpers: facts.helpers } : {}) };
}
