/**
 * Bounded holds: a claim whose holder cannot outlive the age at which its row is taken from it. The holder is cut off
 * by an abort timer it sets (`setTimeout(() => controller.abort(), 45_000)`), or by its platform, whose time limit
 * the module exports (`export const maxDuration = 55`: reading/lifetime.ts); the row is taken by every recovery of
 * the claim (a sweep of rows older than two minutes) and every take-over the claim makes in JavaScript (`if
 * (row.busy && Date.now() - row.updatedAt < 60000) return`), each only past an age longer than that. Such a holder is
 * finished or dead before its row can be taken from it, so:
 * - judging age by the start time is sound (Q2): no live holder is that old;
 * - its later writes need no fence (Q3): nobody can hold the row after it while it still writes;
 * - its take-overs never pass the claim from a live holder (`changesHands`).
 * Both numbers must be read from the code (literals and consts, `Date.now() - N`); unknown stays unknown, and a
 * claim taken over in its own filter (a lease) is not read here.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { Claim, Recovery } from "../model/claims.js";
import { evaluateNumber, unwrap } from "../reading/values.js";
import { ageLimitMs, agoMs, holderLifetimeMs } from "../reading/lifetime.js";
import { calleeName } from "../reading/ast.js";
import { unitOf } from "../reading/units.js";
import { walk } from "../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** `() => controller.abort()`: a callback that aborts something. */
function aborts(fn: Node | undefined): boolean {
  if (!fn || (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression")) return false;
  let found = false;
  walk(fn.body, (n) => {
    if (found) return false;
    if (n.type === "CallExpression" && calleeName(n) === "abort") found = true;
    return true;
  });
  return found;
}

/**
 * How long the claim's holder can live, in milliseconds: the module's exported time limit, or the longest abort timer
 * its function sets after the claim, whichever is shorter. Undefined when neither is known.
 */
export function holdBoundMs(sourceCode: SourceCode, claim: Claim): number | undefined {
  const timer = abortTimerMs(sourceCode, claim);
  const lifetime = holderLifetimeMs(sourceCode);
  return timer === undefined ? lifetime : lifetime === undefined ? timer : Math.min(timer, lifetime);
}

/**
 * The longest abort timer the claim's function sets after the claim, in milliseconds: `setTimeout(() => c.abort(), T)`
 * or `AbortSignal.timeout(T)`. Undefined when there is none, or one whose length is not known.
 */
function abortTimerMs(sourceCode: SourceCode, claim: Claim): number | undefined {
  const unit = unitOf(claim.write.node);
  if (!unit?.body) return undefined;
  const after = claim.write.node.range[1];
  let bound: number | undefined;
  let unknown = false;
  walk(unit.body, (n) => {
    if (n.type !== "CallExpression" || n.range[0] < after) return true;
    const name = calleeName(n);
    const callee = unwrap(n.callee);
    const timer =
      name === "setTimeout" && aborts(n.arguments[0] as Node | undefined)
        ? n.arguments[1]
        : name === "timeout" &&
            callee.type === "MemberExpression" &&
            unwrap(callee.object).type === "Identifier" &&
            (unwrap(callee.object) as TSESTree.Identifier).name === "AbortSignal"
          ? n.arguments[0]
          : undefined;
    if (!timer || timer.type === "SpreadElement") return true;
    const ms = evaluateNumber(sourceCode, timer);
    if (ms === undefined) unknown = true;
    else bound = Math.max(bound ?? 0, ms);
    return true;
  });
  return unknown ? undefined : bound;
}

/**
 * Where an age test's threshold is written: a chain's operator (`.lt("started_at", cutoff)`, read at `lt`) compares
 * its call's arguments; an object filter's operator (`{ lt: cutoff }`) or a SQL template holds its own.
 */
function compared(node: Node): readonly Node[] {
  const p = node.parent;
  const call = p?.parent;
  if (p?.type === "MemberExpression" && p.property === node && call?.type === "CallExpression" && call.callee === p)
    return call.arguments;
  return [node];
}

/** The age, in milliseconds, past which the recovery takes a row: read from each of its age tests, the smallest. */
export function recoveryAgeMs(sourceCode: SourceCode, recovery: Recovery): number | undefined {
  const tests = recovery.check ? recovery.check.timeFields : recovery.timePredicates;
  if (tests.length === 0) return undefined;
  let min: number | undefined;
  for (const t of tests) {
    const ms = compared(t.node)
      .map((n) => agoMs(sourceCode, n))
      .find((v) => v !== undefined);
    if (ms === undefined) return undefined;
    min = Math.min(min ?? Infinity, ms);
  }
  return min;
}

/** The age, in milliseconds, past which a take-over the claim judges in JavaScript takes the row, if written so. */
function takeoverAgeMs(sourceCode: SourceCode, test: Node): number | undefined {
  return (
    ageLimitMs(sourceCode, test) ??
    compared(test)
      .map((n) => agoMs(sourceCode, n))
      .find((v) => v !== undefined)
  );
}

/**
 * The claim's holder is stopped before every recovery of the claim in the module, and every take-over the claim
 * makes, can judge it stale.
 */
export function boundedBelowRecovery(sourceCode: SourceCode, claim: Claim, recoveries: readonly Recovery[]): boolean {
  if (claim.takeover.length === 0 && recoveries.length === 0) return false;
  const bound = holdBoundMs(sourceCode, claim);
  if (bound === undefined) return false;
  const ages = [
    ...[...new Set(claim.takeover.map((t) => t.node))].map((test) => takeoverAgeMs(sourceCode, test)),
    ...recoveries.map((r) => recoveryAgeMs(sourceCode, r)),
  ];
  return ages.every((age) => age !== undefined && bound < age);
}
