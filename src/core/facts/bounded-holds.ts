/**
 * Bounded holds: a claim whose work the holder cuts off itself, by an abort timer shorter than the age at which any
 * recovery of the claim judges it stale (`setTimeout(() => controller.abort(), 45_000)` beside a sweep of rows
 * older than two minutes). Such a holder is finished or dead before its row can be taken from it, so:
 * - judging age by the start time is sound (Q2): no live holder is that old;
 * - its later writes need no fence (Q3): nobody can hold the row after it while it still writes.
 * Both numbers must be read from the code (literals and consts, `Date.now() - N`); unknown stays unknown, and a
 * claim taken over in its own filter (a lease) is not read here.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { Claim, Recovery } from "../model/claims.js";
import { evaluateNumber, getConstInit, unwrap } from "../reading/values.js";
import { readsClockNow } from "../reading/clock.js";
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
 * The longest abort timer the claim's function sets after the claim, in milliseconds: `setTimeout(() => c.abort(), T)`
 * or `AbortSignal.timeout(T)`. Undefined when there is none, or one whose length is not known.
 */
export function holdBoundMs(sourceCode: SourceCode, claim: Claim): number | undefined {
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

/** `Date.now() - N` (or `new Date().getTime() - N`), through consts: N, the age in milliseconds. */
function agoMs(sourceCode: SourceCode, node: Node, depth = 0): number | undefined {
  if (depth > 3) return undefined;
  let found: number | undefined;
  walk(node, (n) => {
    if (found !== undefined) return false;
    if (n.type === "BinaryExpression" && n.operator === "-") {
      if (readsClockNow(sourceCode, n.left as Node)) {
        found = evaluateNumber(sourceCode, n.right);
        return false;
      }
    }
    if (n.type === "Identifier") {
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") {
        const v = agoMs(sourceCode, init, depth + 1);
        if (v !== undefined) found = v;
      }
    }
    return true;
  });
  return found;
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

/** The claim's holder aborts its work before every recovery of the claim in the module can judge it stale. */
export function boundedBelowRecovery(sourceCode: SourceCode, claim: Claim, recoveries: readonly Recovery[]): boolean {
  if (claim.takeover.length > 0 || recoveries.length === 0) return false;
  const bound = holdBoundMs(sourceCode, claim);
  if (bound === undefined) return false;
  return recoveries.every((r) => {
    const age = recoveryAgeMs(sourceCode, r);
    return age !== undefined && bound < age;
  });
}
