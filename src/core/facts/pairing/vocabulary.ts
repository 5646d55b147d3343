/**
 * What the values a module writes mean for its locks: an in-progress value, or a flag set true, takes a lock; a
 * failed, retryable or waiting value gives it back. And the module's vocabulary widened with the values it holds rows
 * in under a lease or across work, whatever they are called.
 */
import type { StateAccess, StateWrite, StaticValue } from "../../model/accesses.js";
import type { LockKey } from "../../model/claims.js";
import { type ResolvedVocabulary, hasLockWord, normalizeName, saysEnded } from "../../model/settings.js";
import {
  agePredicates,
  allowedIn,
  excludes,
  identityFields,
  pins,
  toBranches,
  type Branch,
} from "../../model/conditions.js";
import { normalizeModel, sameValue, sameField } from "../../model/names.js";
import { enclosingFunction } from "../../reading/units.js";
import { runsAfter } from "../../reading/ast.js";
import { beforeAnyWait } from "./holding.js";

/** Values a recovery or failure path moves a row to: failed, retryable or waiting states. */
const RESET_VALUE =
  /fail|error|pending|queue|wait|time_?out|stale|expire|abandon|retry|idle|ready|new|created|available|interrupt|crash|dead|stuck|unknown|open|todo|scheduled|init|reset|draft/i;

function isLockValue(value: StaticValue, vocabulary: ResolvedVocabulary, field?: string): boolean {
  return typeof value.value === "string" && vocabulary.isInProgressValue(value.value, field);
}

/** Setting `field` to `value` takes a lock: an in-progress status, or a processing flag set true. */
export function isLockAssignment(field: string, value: StaticValue, vocabulary: ResolvedVocabulary): boolean {
  if (value.value === true) return vocabulary.isFlagField(field);
  return isLockValue(value, vocabulary, field) && vocabulary.isStateField(field);
}

/** Moving a row to `target` gives it back: a failed, retryable or waiting status, or a flag cleared. */
export function isReset(target: StaticValue, lock: LockKey, vocabulary: ResolvedVocabulary): boolean {
  if (lock.value.value === true) return target.value === false || target.value === null;
  return (
    typeof target.value === "string" && RESET_VALUE.test(target.value) && !isLockValue(target, vocabulary, lock.field)
  );
}

/**
 * The module's vocabulary with the values it takes rows into under a lease read as in-progress, whatever they are
 * called: a write sets F = V and stamps a field with the clock (`keepAlive: now`), and every branch of its filter
 * either excludes V or takes over rows whose stamp has aged (`$expr: { $lt: ["$keepAlive", cutoff] }`). Taking over
 * by the age of the very stamp the write makes is a lease, so V is held (corpus Ak25: an outbox's ACTIVE events).
 * Held in that field only, as `withValuesHeldAcrossWork`'s.
 */
export function withLeasedValues(base: ResolvedVocabulary, accesses: readonly StateAccess[]): ResolvedVocabulary {
  const held = new Set<string>();
  for (const w of accesses) {
    if (w.access !== "write" || w.effect === "insert" || w.effect === "delete") continue;
    const stamped = w.assignments.filter((a) => a.value.kind === "now").map((a) => normalizeName(a.field));
    if (stamped.length === 0) continue;
    let branches: Branch[] | undefined;
    for (const a of w.assignments) {
      const v = a.value.kind === "static" ? a.value.value.value : undefined;
      if (typeof v !== "string" || !base.isStateField(a.field) || base.isInProgressValue(v, a.field) || saysEnded(v))
        continue;
      branches ??= toBranches(w.filter);
      // Rows found in an in-progress value and aged are a stale recovery's (`status = 'queued' WHERE status =
      // 'processing' AND updated_at < …`): the value they go back to is where work waits, not a lease.
      const fromInProgress = (b: Branch) => {
        const allowed = allowedIn(b, a.field);
        return (
          allowed !== "any" &&
          "only" in allowed &&
          allowed.only.some((o) => typeof o.value === "string" && base.isInProgressValue(o.value, a.field))
        );
      };
      if (branches.some(fromInProgress)) continue;
      const takesOver = (b: Branch) => agePredicates(b, base).some((t) => stamped.includes(normalizeName(t.field)));
      if (!branches.some(takesOver) || !branches.every((b) => takesOver(b) || excludes(b, a.field, { value: v })))
        continue;
      held.add(`${normalizeName(a.field)}=${normalizeName(v)}`);
    }
  }
  return withHeldInField(base, held);
}

/**
 * The module's vocabulary with the values its reads judge stuck by a lock's stamp read as in-progress, whatever they
 * are called: a read that pins F = V and picks rows whose lock stamp has aged (`{ status: "active", lockedAt: { lt:
 * cutoff } }`) says that a row in V has a holder, stamped when it took it, which may have died. The stamp's name
 * says so (a lock word: `lockedAt`, `locked_at`, `lock_time`); an age of `updatedAt` or `createdAt` says nothing of
 * a holder, and an expiry (`lease_expires_at < now`) is a lease the module lets lapse, read as one elsewhere. Held in
 * that field only. A value that says the work ended is never held.
 */
/** A stamp of when a lock was taken, not of when it ends. */
const LOCK_STAMP = /lock/i;
const EXPIRY = /until|expir|deadline|ttl/i;

export function withStampJudgedValues(base: ResolvedVocabulary, accesses: readonly StateAccess[]): ResolvedVocabulary {
  const held = new Set<string>();
  for (const r of accesses) {
    if (r.access !== "read") continue;
    for (const b of toBranches(r.filter)) {
      if (
        !agePredicates(b, base).some((t) => LOCK_STAMP.test(t.field) && !EXPIRY.test(t.field) && hasLockWord(t.field))
      )
        continue;
      for (const atom of b) {
        if ("opaque" in atom || atom.op !== "eq" || !atom.pred.values || !base.isStateField(atom.pred.field)) continue;
        for (const v of atom.pred.values)
          if (typeof v.value === "string" && !saysEnded(v.value))
            held.add(`${normalizeName(atom.pred.field)}=${normalizeName(v.value)}`);
      }
    }
  }
  return withHeldInField(base, held);
}

/**
 * The module's vocabulary with its qualified processing flags: a boolean field a write of the module sets true only
 * where it is not true already (every branch of its filter excludes true: `{ isProcessingVideo: { $ne: true } }`),
 * when either its name says so (a flag word and more: `isProcessingVideo`, `syncingContacts`, `lockedForExport`;
 * blind-8 CC01) or the same function, after awaiting work, sets it back on the same row by identity (`isUpdating`
 * taken where false, the item rebuilt, then cleared by key): that compare-and-set held across work is a flag's claim
 * whatever the field is called, as `withValuesHeldAcrossWork` reads a status. The bare words stay the vocabulary's,
 * and a field no write takes that way keeps its name's meaning (a one-way `isPaid` set where false is no flag).
 */
export function withQualifiedFlags(base: ResolvedVocabulary, accesses: readonly StateAccess[]): ResolvedVocabulary {
  const writes = accesses.filter((a): a is StateWrite => a.access === "write");
  const flags = new Set<string>();
  for (const w of writes) {
    if (w.effect === "insert" || w.effect === "delete") continue;
    for (const a of w.assignments) {
      if (a.value.kind !== "static" || a.value.value.value !== true || base.isFlagField(a.field)) continue;
      const branches = toBranches(w.filter);
      if (branches.length === 0 || !branches.every((b) => excludes(b, a.field, { value: true }))) continue;
      const name = normalizeName(a.field).replace(/^(?:is|has)/, "");
      const named = base.raw.flagFields.some((f) => name.startsWith(normalizeName(f).replace(/^is/, "")));
      if (named || movedOffAfterWork(w, a.field, { value: true }, writes)) flags.add(normalizeName(a.field));
    }
  }
  if (flags.size === 0) return base;
  return { ...base, isFlagField: (field) => base.isFlagField(field) || flags.has(normalizeName(field)) };
}

/**
 * A later write of the same function, after `w1` has awaited something, moves the row by identity in the same model
 * off `value` of `field` to another static value: the holder's own release of what `w1` took.
 */
function movedOffAfterWork(w1: StateWrite, field: string, value: StaticValue, writes: readonly StateWrite[]): boolean {
  const fn = enclosingFunction(w1.node);
  const model = normalizeModel(w1.model);
  const byIdentity = (w: StateWrite) => {
    const branches = toBranches(w.filter);
    return branches.length > 0 && branches.every((b) => identityFields(b).length > 0);
  };
  return writes.some(
    (w2) =>
      w2 !== w1 &&
      enclosingFunction(w2.node) === fn &&
      w2.node.range[0] > w1.node.range[1] &&
      normalizeModel(w2.model) === model &&
      byIdentity(w2) &&
      !beforeAnyWait(w1.node, w2.node) &&
      runsAfter(w1.node, w2.node) &&
      w2.assignments.some(
        (b) => sameField(b.field, field) && b.value.kind === "static" && !sameValue(b.value.value, value),
      ),
  );
}

/** The branch admits only in-progress values of `field` (`status = 'processing'`, `status IN ('running', …)`). */
function onlyInProgress(branch: Branch, field: string, base: ResolvedVocabulary): boolean {
  const allowed = allowedIn(branch, field);
  return (
    allowed !== "any" &&
    "only" in allowed &&
    allowed.only.length > 0 &&
    allowed.only.every((o) => typeof o.value === "string" && base.isInProgressValue(o.value, field))
  );
}

/**
 * The module's vocabulary with the values its claims take rows from read as free, whatever they are called: a write
 * sets F = V (in progress) only on rows whose F is one of a few listed values, none of them V and at least one a
 * waiting state (`status: { in: ["pending", "retrying"] }` moved to `sending`; a recovery lists held values only). Every value
 * in that list is where rows wait for the claim, so RETRYING there is a queue state, not a hold, and a write moving a
 * row back to it (a stale `sending` row set to `retrying`) gives the row back instead of claiming it (blind-23
 * D23d10). A value the module also claims itself (a write that sets it where its filter excludes it) keeps its
 * meaning. In that field only.
 */
export function withClaimSources(base: ResolvedVocabulary, accesses: readonly StateAccess[]): ResolvedVocabulary {
  const writes = accesses.filter((a): a is StateWrite => a.access === "write" && a.effect !== "insert");
  const key = (field: string, value: string) => `${normalizeName(field)}=${normalizeName(value)}`;
  const free = new Set<string>();
  const claimed = new Set<string>();
  for (const w of writes) {
    if (w.effect === "delete") continue;
    let branches: Branch[] | undefined;
    for (const a of w.assignments) {
      const v = a.value.kind === "static" ? a.value.value.value : undefined;
      if (typeof v !== "string" || !base.isStateField(a.field) || !base.isInProgressValue(v, a.field)) continue;
      branches ??= toBranches(w.filter);
      if (branches.length === 0 || !branches.every((b) => excludes(b, a.field, { value: v }))) continue;
      claimed.add(key(a.field, v));
      const sources: string[] = [];
      let listed = true;
      for (const b of branches) {
        const allowed = allowedIn(b, a.field);
        if (allowed === "any" || !("only" in allowed)) listed = false;
        else for (const o of allowed.only) if (typeof o.value === "string") sources.push(o.value);
      }
      if (!listed || !sources.some((o) => !base.isInProgressValue(o, a.field))) continue;
      for (const o of sources) if (base.isInProgressValue(o, a.field)) free.add(key(a.field, o));
    }
  }
  for (const k of claimed) free.delete(k);
  if (free.size === 0) return base;
  return {
    ...base,
    isInProgressValue: (value, field) =>
      base.isInProgressValue(value, field) && (field === undefined || !free.has(key(field, value))),
  };
}

/** `base` with the `field=value` pairs of `held` read as in-progress, in that field only. */
function withHeldInField(base: ResolvedVocabulary, held: ReadonlySet<string>): ResolvedVocabulary {
  if (held.size === 0) return base;
  return {
    ...base,
    isInProgressValue: (value, field) =>
      base.isInProgressValue(value, field) ||
      (field !== undefined && held.has(`${normalizeName(field)}=${normalizeName(value)}`)),
  };
}

/**
 * The module's vocabulary with the values it holds a row in across work read as in-progress, whatever they are
 * called: a write sets F = V only where the row is not V already (every branch of its filter excludes V), and the
 * same function, after awaiting something, moves that row by identity off V again (`refundStatus: "PENDING"` taken
 * from null or FAILED, the refund sent, then PROCESSED or FAILED by id: corpus Ap12). Its holder owns the row until
 * that second write, as a claim's does, even where the name is a waiting one. A value some other access of the
 * module selects rows by (a worker taking them, an admin approving one by id: corpus shared dA10) is a state of the
 * workflow that others act on: it keeps its name's meaning. A value that says the work ended is never held.
 */
export function withValuesHeldAcrossWork(
  base: ResolvedVocabulary,
  accesses: readonly StateAccess[],
): ResolvedVocabulary {
  const writes = accesses.filter((a): a is StateWrite => a.access === "write");
  const held = new Set<string>();
  for (const w1 of writes) {
    if (w1.effect === "insert" || w1.effect === "delete") continue;
    let branches: Branch[] | undefined;
    for (const a of w1.assignments) {
      const v = a.value.kind === "static" ? a.value.value.value : undefined;
      if (typeof v !== "string" || !base.isStateField(a.field) || base.isInProgressValue(v, a.field) || saysEnded(v))
        continue;
      // An opaque term ANDed in only narrows; an opaque alternative admits V (`excludes` is false on it).
      branches ??= toBranches(w1.filter);
      if (branches.length === 0 || !branches.every((b) => excludes(b, a.field, { value: v }))) continue;
      // Rows taken only from an in-progress value (`status = 'publishing'` moved to `partial` once its lease lapsed)
      // are handed back, not held: V is where work waits for its next holder (blind-9 F407).
      if (branches.every((b) => onlyInProgress(b, a.field, base))) continue;
      if (!movedOffAfterWork(w1, a.field, { value: v }, writes)) continue;
      const fn = enclosingFunction(w1.node);
      const model = normalizeModel(w1.model);
      // Anyone else acting on rows in V (a worker taking them, an admin approving one by id) makes V a state of the
      // workflow, not a hold: only the holder's own later writes may select by it.
      const own = (o: StateAccess) =>
        o.access === "write" && enclosingFunction(o.node) === fn && o.node.range[0] > w1.node.range[1];
      // A sweep that judges age is the hold's recovery (or its stale scan), not someone else's use of V.
      const consumed = accesses.some(
        (o) =>
          o !== w1 &&
          (o.access === "read" || o.access === "write") &&
          !own(o) &&
          normalizeModel(o.model) === model &&
          toBranches(o.filter).some((b) => pins(b, a.field, { value: v }) && agePredicates(b, base).length === 0),
      );
      if (!consumed) held.add(`${normalizeName(a.field)}=${normalizeName(v)}`);
    }
  }
  // Held in that field only: `refundStatus: PENDING` held says nothing of `status: PENDING`.
  return withHeldInField(base, held);
}
