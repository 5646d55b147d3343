/** Message data shared by the rules: every message names the lock (model, field, value) and where it is taken. */
import type { FileLockOp, StaleJudgement } from "../core/model/lock-files.js";
import type { KvOp, Node } from "../core/model/accesses.js";
import type { Check, Claim, LockKey } from "../core/model/claims.js";
import { formatValue } from "../core/model/names.js";

export function lockData(lock: LockKey): { model: string; field: string; value: string } {
  return { model: lock.model, field: lock.field, value: formatValue(lock.value) };
}

export function claimData(claim: Claim): { model: string; field: string; value: string; claimLine: string } {
  return { ...lockData(claim.lock), claimLine: String(claim.write.node.loc.start.line) };
}

/** Where a check-then-act made its check, in words, and the line. */
export function checkData(check: Check): { checkedWhere: string; checkLine: string } {
  return {
    checkedWhere: check.kind === "if" ? "in JavaScript" : "with a separate read",
    checkLine: String(check.node.loc.start.line),
  };
}

/**
 * How a message names a command made through a helper (`KvOp.via`): `` (through `releaseLock`, line 10) ``, or with
 * the helper's module when another module holds it. Empty for a command written at the call.
 */
export function throughHelper(op: KvOp): string {
  const via = op.via;
  if (!via) return "";
  const where = via.file ? `${via.file}, line ${via.line}` : `line ${via.line}`;
  return ` (through \`${via.helper}\`, ${where})`;
}

/** `; so do the calls at lines 234 and 253`: the other calls of the same helper, inside its parenthesis. */
export function alsoAt(lines: readonly number[] | undefined): string {
  if (!lines || lines.length === 0) return "";
  const list =
    lines.length === 1 ? `line ${lines[0]}` : `lines ${lines.slice(0, -1).join(", ")} and ${lines[lines.length - 1]}`;
  return `; so do the calls at ${list}`;
}

/**
 * Where a finding about a write's own filter goes: the write, or for a write a module helper makes at a call
 * (`this.updateStatus(id, "done")`) the helper's own write, whose filter every call shares: one finding, not one per
 * call (src/core/summaries/state-helpers.ts). A recovery made through a helper is `conditional-recovery`'s to report
 * at its call, in the sweep: the helper's other calls recover nothing.
 */
export function filterSite(write: { readonly node: Node; readonly madeBy?: Node }): Node {
  return write.madeBy ?? write.node;
}

/** How a message names a lock-file call: `` `openSync` ``, or `` a call of `writeLockFile` (its `writeFileSync`, line 195) ``. */
export function fileCall(op: FileLockOp): string {
  return op.via ? `call of \`${op.via}\` (its \`${op.name}\`, line ${op.viaLine})` : `\`${op.name}\``;
}

/** How a message names what a stale judgement reads. */
export function staleBasis(by: StaleJudgement["by"]): string {
  switch (by) {
    case "mtime":
      return "its age by the file's mtime";
    case "stored-time":
      return "its age by the time written into it";
    case "pid":
      return "whether the process it names still runs";
    case "unreadable":
      return "whether it can be read";
  }
}
