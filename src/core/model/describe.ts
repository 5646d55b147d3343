/**
 * The model in words, for messages: how a write picks its rows, and a lock row and its release. Shared by the rules
 * and by the summaries that hand a helper's verdict to the modules calling it.
 */
import type { Condition } from "./accesses.js";
import type { Claim, RowRelease } from "./claims.js";
import { identityFields, toBranches } from "./conditions.js";
import { formatValue } from "./names.js";
import { byKind } from "./claims.js";

/** How a write picks its rows, in words: "id", "id and userId", "name" (a constant), or "its filter". */
export function describeRowFilter(filter: Condition): string {
  const fields = new Set<string>();
  const named = new Set<string>();
  for (const branch of toBranches(filter)) {
    for (const f of identityFields(branch)) fields.add(f);
    for (const atom of branch) {
      if ("opaque" in atom) continue;
      // `id IN (…ids of rows read)`: rows named by their keys, as `id = x` names one.
      if (atom.op === "in" && !atom.pred.values) fields.add(atom.pred.field);
      // `name = 'nightly-report'`: a row named by a constant, where nothing names it by a value known at run time.
      if (atom.op === "eq" && atom.pred.values) named.add(atom.pred.field);
    }
  }
  const shown = fields.size > 0 ? fields : named;
  return shown.size > 0 ? [...shown].join(" and ") : "its filter";
}

/** A lock row: `lease on job.lockedUntil`, `lock row "payout" in setting`, `lock row in locks`. */
export function describeRowLock(claim: Claim): string {
  const row = (c: Claim) => `lock row in ${c.lock.model}`;
  return byKind(claim, {
    lease: (c) => `lease on ${c.lock.model}.${c.lock.field}`,
    "keyed-row": (c) => `lock row ${formatValue(c.lock.value)} in ${c.lock.model}`,
    "inserted-row": row,
    "unenforced-row": row,
    status: row,
  });
}

/** A lock row's release: the lock, how the write picks the row, and whether it deletes the row or writes it. */
export function describeRowRelease(release: RowRelease): {
  lock: string;
  filter: string;
  operation: "delete" | "write";
} {
  const { claim, write } = release;
  return {
    lock: describeRowLock(claim),
    filter: claim.kind === "keyed-row" ? `its name (${claim.lock.field})` : describeRowFilter(write.filter),
    operation: write.effect === "delete" ? "delete" : "write",
  };
}
