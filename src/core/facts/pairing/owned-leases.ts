/**
 * Leases known by their heartbeat. A module that renews a row's lease only while the row's owner column still names
 * the renewing holder (`update({ lockedAt: now }).where({ id, lockedBy: workerId })`) says three things of that
 * table, wherever its rows are claimed (an RPC, a SQL function, another module): a row has one owner at a time, its
 * lease runs out unless it is renewed, and a row whose lease ran out is taken by another worker (renewing would
 * otherwise be pointless, and the owner check would guard nothing). A write of the module that then clears the owner
 * column (`lockedBy: null`) ends a hold: its release. One that picks its row by identity alone — not by the owner,
 * not by the lease value, not by a state — frees the row whoever holds it now: a holder that stalled past its lease
 * and resumes clears the claim of the worker that took the row over (Q3).
 *
 * Read only where the module shows no claim of the table: where it does, the claim's own pairing judges its releases
 * (`RowRelease`, `HolderWrite`).
 */
import type { StateWrite } from "../../model/accesses.js";
import type { Claim, OwnedLeaseRelease } from "../../model/claims.js";
import type { ResolvedVocabulary } from "../../model/settings.js";
import { identityFields, isOpaque, toBranches } from "../../model/conditions.js";
import { normalizeModel, sameField } from "../../model/names.js";
import { clears } from "./leases.js";
import { enclosingFunction, functionName } from "../../reading/units.js";

/** The stamp of a row's last change, which every write of it may make. */
const MODIFIED = /^(?:updated|modified|changed|last_?updated|last_?modified)(?:_?(?:at|on|time|date))?$/i;

/** The owner column a heartbeat's every filter branch pins to a run-time value, and the lease column it moves. */
function ownedHeartbeat(
  write: StateWrite,
  vocabulary: ResolvedVocabulary,
): { ownerField: string; leaseField: string } | undefined {
  if ((write.effect ?? "update") !== "update" || write.dynamicModel) return undefined;
  // It moves time columns forward with the clock and writes nothing else: not an edit of the row's content that
  // an owner makes (`update({ title, updatedAt }).where({ id, ownerId })` is an authorised edit, not a renewal). One
  // of them is more than the stamp every write of the row makes (`updatedAt`).
  if (write.assignments.some((a) => a.value.kind === "static" || !vocabulary.isTimeField(a.field))) return undefined;
  const lease = write.assignments.find((a) => !clears(a) && !MODIFIED.test(a.field));
  if (!lease) return undefined;
  const branches = toBranches(write.filter);
  if (branches.length === 0 || branches.some(isOpaque)) return undefined;
  let ownerField: string | undefined;
  for (const branch of branches) {
    const fields = identityFields(branch);
    const owner = fields.find((f) => vocabulary.isOwnerField(f));
    // The row by its identity and by its owner: `where id = $1 and locked_by = $2`.
    if (!owner || fields.length < 2) return undefined;
    if (ownerField !== undefined && !sameField(ownerField, owner)) return undefined;
    ownerField = owner;
  }
  return ownerField === undefined ? undefined : { ownerField, leaseField: lease.field };
}

/**
 * A write that ends a hold — it clears the owner column, and with it the lease or the row's state (a document's owner
 * cleared alone is a change of ownership, not a release) — and picks its row by identity, without the owner, a
 * state or the lease.
 */
function unownedRelease(write: StateWrite, ownerField: string, leaseField: string, vocabulary: ResolvedVocabulary) {
  if ((write.effect ?? "update") !== "update" || write.dynamicModel) return false;
  if (!write.assignments.some((a) => sameField(a.field, ownerField) && clears(a))) return false;
  if (
    !write.assignments.some(
      (a) => (sameField(a.field, leaseField) && clears(a, true)) || vocabulary.isStateField(a.field),
    )
  )
    return false;
  const branches = toBranches(write.filter);
  if (branches.length === 0) return false;
  return branches.every((branch) => {
    if (isOpaque(branch) || identityFields(branch).length === 0) return false;
    return branch.every(
      (atom) =>
        "opaque" in atom ||
        (!vocabulary.isOwnerField(atom.pred.field) &&
          !sameField(atom.pred.field, leaseField) &&
          !vocabulary.isStateField(atom.pred.field) &&
          !vocabulary.isFlagField(atom.pred.field)),
    );
  });
}

/** An operator's action on a job, which frees whatever holds it on purpose (`cancelJob`, `forceRelease`, `adminReset`). */
const OPERATOR = /^(?:force|admin|cancel)(?:[A-Z_]|$)/;

function byOperator(write: StateWrite): boolean {
  for (let fn = enclosingFunction(write.node); fn; fn = fn.parent ? enclosingFunction(fn.parent) : undefined) {
    const name = functionName(fn);
    if (name !== undefined) return OPERATOR.test(name);
  }
  return false;
}

/** The module's releases of rows whose lease it renews by owner (see the header), one per release write. */
export function findOwnedLeaseReleases(
  writes: readonly StateWrite[],
  claims: readonly Claim[],
  vocabulary: ResolvedVocabulary,
): OwnedLeaseRelease[] {
  const claimed = new Set(claims.map((c) => normalizeModel(c.lock.model)));
  const out: OwnedLeaseRelease[] = [];
  const taken = new Set<StateWrite>();
  for (const heartbeat of writes) {
    const model = normalizeModel(heartbeat.model);
    if (claimed.has(model)) continue;
    const owned = ownedHeartbeat(heartbeat, vocabulary);
    if (!owned) continue;
    for (const write of writes) {
      if (write === heartbeat || taken.has(write) || normalizeModel(write.model) !== model) continue;
      if (!unownedRelease(write, owned.ownerField, owned.leaseField, vocabulary) || byOperator(write)) continue;
      taken.add(write);
      out.push({ write, heartbeat, ...owned });
    }
  }
  return out;
}
