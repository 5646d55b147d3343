/**
 * Claims of leases: a lease column stamped on a free row (past, absent or the caller's own), or stamped by id after a
 * JS check judged the lease expired; what clears a lease column; and an operator's override, which frees a lock on
 * purpose.
 */
import type { Assignment, Node, StateRead, StateWrite, StaticValue } from "../../model/accesses.js";
import { predicateValue } from "../../model/accesses.js";
import type { Check, Claim, Guard, LockKey, TimePredicate } from "../../model/claims.js";
import {
  agePredicates,
  identityFields,
  isOpaque,
  ownerPinned,
  pins,
  toBranches,
  type Branch,
} from "../../model/conditions.js";
import { normalizeModel, sameField, sameValue } from "../../model/names.js";
import { hasLockWord, normalizeName } from "../../model/settings.js";
import { enclosingFunction, functionName } from "../../reading/units.js";
import { findVariable, getConstInit, resultBinding, unwrap } from "../../reading/values.js";
import { contains } from "../../reading/ast.js";
import { checksBetween, Module } from "./module.js";
import { isClockReading } from "../../reading/clock.js";
import { oldWhenTrue } from "../../reading/guards.js";
import { walk } from "../../reading/walk.js";

/**
 * A branch of a lease write finds the lease free: its lease columns judged past (`aged`), absent
 * (`leaseUntil: { $exists: false }`, `IS NULL`), or the caller's own (`OR locks.holder = EXCLUDED.holder`: a holder
 * re-enters).
 */
export function leaseFree(
  mod: Module,
  branch: Branch,
  aged: readonly TimePredicate[],
  columns: readonly string[],
): boolean {
  return (
    aged.length > 0 ||
    columns.some((c) => pins(branch, c, { value: null })) ||
    ownerPinned(branch, undefined, mod.vocabulary)
  );
}

/** Columns that say until when a lease holds (`lockedUntil`, `lease_expires_at`): set to the clock, the lease ends now. */
const UNTIL = /until|expir|deadline/i;

/**
 * An assignment that clears a lease column: null, false, a fixed instant (`new Date(0)`), or, for an until-column,
 * the clock itself (`lockedUntil: new Date()`). `locked_at = now()` takes a lease, and a clock reading with
 * arithmetic (`new Date(Date.now() + ttl)`, SQL `now() + interval …`) extends one: neither clears.
 */
export function clears(a: Assignment, until = false): boolean {
  if (a.value.kind === "now")
    return (until || UNTIL.test(a.field)) && (a.value.bare === true || isBareClock(a.valueNode));
  if (a.value.kind === "other") return pastInstant(a.valueNode);
  return (
    a.value.kind === "static" &&
    (a.value.value.value === null || a.value.value.value === false || typeof a.value.value.value === "number")
  );
}

/**
 * A date written as a constant that has already passed (`new Date(0)`, `new Date("1970-01-01").toISOString()`,
 * `new Date(0).getTime()`): every lease stamped with it is over, as with null (blind-8 Ci08). A constant still to
 * come (`new Date("2999-01-01")`) holds the lock instead: not a clear.
 */
function pastInstant(node: Node): boolean {
  let n = unwrap(node);
  if (
    n.type === "CallExpression" &&
    n.arguments.length === 0 &&
    n.callee.type === "MemberExpression" &&
    n.callee.property.type === "Identifier" &&
    /^(?:toISOString|toJSON|getTime|valueOf)$/.test(n.callee.property.name)
  )
    n = unwrap(n.callee.object);
  if (n.type !== "NewExpression" || n.callee.type !== "Identifier" || n.callee.name !== "Date") return false;
  const [arg, ...rest] = n.arguments;
  if (arg?.type !== "Literal" || rest.length > 0) return false;
  if (typeof arg.value !== "number" && typeof arg.value !== "string") return false;
  const t = new Date(arg.value).getTime();
  return Number.isFinite(t) && t < Date.now();
}

/**
 * A value made from the clock: `Date.now() + LOCK_TTL_MS`, `new Date(Date.now() + ttl)`, or through consts that read
 * it (`nowTs + ttlMs` after `const nowTs = Date.now()`, blind-8 Aj03; `lockedUntil` after `const lockedUntil = new
 * Date(Date.now() + ttlMs).toISOString()`, blind-9 C213).
 */
function readsClockIn(sourceCode: Module["sourceCode"], node: Node, depth = 0): boolean {
  let found = false;
  walk(node, (n) => {
    if (isClockReading(n)) found = true;
    else if (n.type === "Identifier" && depth < 2) {
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration" && readsClockIn(sourceCode, init as Node, depth + 1)) found = true;
    }
    return !found;
  });
  return found;
}

/**
 * A value made from the clock whichever way the code goes: not `attempts >= 5 ? new Date(Date.now() + t) : null`, an
 * account's lock-out escalated after failures (blind-8 CC05), which stamps an instant only on some paths.
 */
function alwaysFromClock(sourceCode: Module["sourceCode"], node: Node, depth = 0): boolean {
  const n = unwrap(node);
  if (n.type === "Identifier" && depth < 2) {
    const init = getConstInit(sourceCode, n);
    return (
      init !== undefined && init.type !== "TSEnumDeclaration" && alwaysFromClock(sourceCode, init as Node, depth + 1)
    );
  }
  if (n.type === "ConditionalExpression")
    return alwaysFromClock(sourceCode, n.consequent, depth) && alwaysFromClock(sourceCode, n.alternate, depth);
  if (n.type === "LogicalExpression") return false;
  return readsClockIn(sourceCode, n, depth);
}

/** `new Date()` or `Date.now()`: the clock, nothing added (a SQL value's node is its whole query: not bare). */
export function isBareClock(node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "NewExpression")
    return n.callee.type === "Identifier" && n.callee.name === "Date" && n.arguments.length === 0;
  return n.type === "CallExpression" && n.arguments.length === 0 && isClockReading(n);
}

/**
 * A lease stamped on a free row: the write sets a lease column L (a timestamp or an owner column) where every
 * branch of its filter finds the lease free (L past, L absent, or this caller's own), at least one by age, in a
 * table or column whose name says "lock" or "lease". `Lock.findOneAndUpdate({ name, leaseUntil: { $lt: now } },
 * { leaseUntil: until }, { upsert: true })`; `UPDATE jobs SET locked_until = $2 WHERE id = $1 AND locked_until <
 * now()`. An expired lease is taken over by the claim itself (Q1); its release must check the owner (Q3).
 */
export function findLeaseClaim(mod: Module, write: StateWrite): Claim[] {
  // A table named by a hole (`UPDATE "${table}"`) is unknown: its writes cannot be told apart.
  if (write.effect === "delete" || write.effect === "insert" || write.dynamicModel) return [];
  const branches = mod.branchesOf(write);
  if (branches.length === 0 || branches.some(isOpaque)) return [];
  for (const assignment of write.assignments) {
    const field = assignment.field;
    // A timestamp by its name, or by what this write stores in it: a clock reading (`locked: new Date(now + ttl)`).
    const clocked = assignment.value.kind === "now";
    if ((!mod.vocabulary.isTimeField(field) && !clocked) || clears(assignment)) continue;
    if (!hasLockWord(write.model) && !hasLockWord(field) && !write.assignments.some((a) => hasLockWord(a.field)))
      continue;
    const aged = branches.map((b) =>
      mod.vocabulary.isTimeField(field)
        ? agePredicates(b, mod.vocabulary).filter((t) => sameField(t.field, field))
        : comparedBefore(b, field),
    );
    // A lock timestamp stamped only where it is empty, and cleared by the module afterwards: a lock with no
    // expiry of its own (`lockedAt IS NULL` -> `lockedAt = now()`, released by `lockedAt = null`).
    const unexpiring =
      aged.every((a) => a.length === 0) &&
      hasLockWord(field) &&
      branches.every((b) => pins(b, field, { value: null })) &&
      clearedById(mod, write, field);
    // The write's own holder column, by what it does: a column it stamps with a value it also compares that column
    // with (`{ _id, $or: [{ holderId }, …] }` with `$set: { holderId }`): that branch is the caller's own lease, and
    // the branch finding the column absent a free one.
    const own = holderColumns(mod.sourceCode, write);
    const free = (b: Branch, i: number) =>
      leaseFree(mod, b, aged[i]!, [field, ...own]) || own.some((c) => pinsOwnValue(mod, b, write, c));
    if (!unexpiring && (aged.every((a) => a.length === 0) || !branches.every(free))) continue;
    const lock: LockKey = { model: write.model, field, value: { value: "held" }, valueText: "" };
    // Another write of the table stamps the lease column again (`touch`, a heartbeat): it tells progress, whatever
    // its name says.
    const renewed = mod.writes.some(
      (w) =>
        w !== write &&
        normalizeModel(w.model) === normalizeModel(write.model) &&
        w.assignments.some((a) => sameField(a.field, field) && !clears(a)),
    );
    return [{ kind: "lease", write, lock, assignment, takeover: aged.flat(), renewed }];
  }
  return [];
}

/**
 * The branch names the lock row by the constant the claim gave its key: the value its insert stored
 * (`deleteOne({ _id: "cron_job" })` after `insertOne({ _id: "cron_job", … })`), or the value every branch of its filter
 * picks the row by (`updateOne({ _id: KEY, $or: […] }, …, { upsert: true })`). That very row, as an id known at run
 * time would name it.
 */
export function namesClaimedRow(branch: Branch, claim: Claim): boolean {
  const picked = (field: string, value: StaticValue) =>
    (claim.write.effect === "insert" &&
      claim.write.assignments.some(
        (s) => sameField(s.field, field) && s.value.kind === "static" && sameValue(s.value.value, value),
      )) ||
    // A key the claim only picks by, never writes (`_id`, a lock name): not a state it moves the row from.
    ((typeof value.value === "string" || typeof value.value === "number") &&
      !claim.write.assignments.some((s) => sameField(s.field, field)) &&
      toBranches(claim.write.filter).every((b) => pins(b, field, value)));
  return branch.some(
    (a) => "pred" in a && a.op === "eq" && a.pred.values?.length === 1 && picked(a.pred.field, a.pred.values[0]!),
  );
}

/** The variable an assignment's or a predicate's value is (`{ holderId }`, `holderId: holderId`), if it is one. */
function valueVariable(sourceCode: Module["sourceCode"], node: Node): unknown {
  let n = unwrap(node);
  if (n.type === "Property") n = unwrap(n.value as Node);
  return n.type === "Identifier" ? findVariable(sourceCode, n) : undefined;
}

/**
 * The holder columns of a write, by what it does whatever their names: columns it stamps with a run-time variable
 * that one alternative of its own filter compares that column with (`{ _id, $or: [{ instance }, …] }` with `$set: {
 * instance }`), the caller's identity, which a later write pinned to that column names as this holder's.
 */
export function holderColumns(sourceCode: Module["sourceCode"], write: StateWrite): string[] {
  const out: string[] = [];
  const branches = toBranches(write.filter);
  for (const a of write.assignments) {
    if (a.value.kind !== "other") continue;
    const v = valueVariable(sourceCode, a.valueNode);
    // Compared in some alternatives only (the caller's re-entry), not in all: one pinned in every branch is the row's
    // key (`{ name, $or: […] }` with `$set: { name }`), the same for every caller of that lock.
    const pinned = v ? branches.filter((b) => pinsVariable(sourceCode, b, a.field, v)).length : 0;
    if (pinned > 0 && pinned < branches.length) out.push(a.field);
  }
  return out;
}

function pinsVariable(sourceCode: Module["sourceCode"], branch: Branch, field: string, variable: unknown): boolean {
  return branch.some(
    (atom) =>
      !("opaque" in atom) &&
      atom.op === "eq" &&
      !atom.pred.values &&
      sameField(atom.pred.field, field) &&
      valueVariable(sourceCode, predicateValue(atom.pred)) === variable,
  );
}

/** The branch compares `field` with the very variable the write stamps it with: the caller's own row. */
function pinsOwnValue(mod: Module, branch: Branch, write: StateWrite, field: string): boolean {
  const a = write.assignments.find((x) => sameField(x.field, field));
  const v = a && valueVariable(mod.sourceCode, a.valueNode);
  return v !== undefined && pinsVariable(mod.sourceCode, branch, field, v);
}

/** Another write of the model clears `field` (null) on rows it names by a key: the lock's release. */
function clearedById(mod: Module, write: StateWrite, field: string): boolean {
  const model = normalizeModel(write.model);
  return mod.writes.some(
    (w) =>
      w !== write &&
      normalizeModel(w.model) === model &&
      w.effect !== "insert" &&
      w.assignments.some(
        (a) => sameField(a.field, field) && a.value.kind === "static" && a.value.value.value === null,
      ) &&
      mod.branchesOf(w).length > 0 &&
      mod.branchesOf(w).every((b) => identityFields(b).length > 0),
  );
}

/** The branch's `field < x` and `field <= x` tests: a column the write stamps with the clock, judged by age. */
function comparedBefore(branch: Branch, field: string): TimePredicate[] {
  const out: TimePredicate[] = [];
  for (const atom of branch) {
    if (!("opaque" in atom) && (atom.op === "lt" || atom.op === "lte") && sameField(atom.pred.field, field))
      out.push({ field, node: atom.pred.node });
  }
  return out;
}

/**
 * A lease taken after a check in JavaScript: the function reads the row, judges in an `if` whether its lock columns
 * are still fresh (`lockedAt > cutoff`, `isLockValid(lock.updatedAt)`), and then stamps them by id alone
 * (`update({ id, data: { lockedAt: new Date(), lockedBy: me } })`). The read and the write are two steps
 * (`check`): two callers that read the lease expired both take it. It is still a lease (`lease`): the take-over
 * the check judges answers who unlocks a dead holder, and its releases clear the lock columns by id.
 */
export function findCheckedLease(mod: Module, write: StateWrite): Claim[] {
  // An update, or an upsert: it writes the row its key names whatever the row holds.
  const upsert = write.effect === "insert" && write.onConflict === "update";
  if (write.effect !== undefined && write.effect !== "update" && !upsert) return [];
  if (write.dynamicModel) return [];
  // The lock column names the lock (`lockedAt`), or the table does and the column is a time (`jobLock.expiresAt`).
  const lockTable = hasLockWord(write.model);
  // Stamped from the clock: the clock itself (`lockedAt: new Date()`) or an instant made from it (`lockedUntil:
  // new Date(Date.now() + ttl)`).
  const stamps = write.assignments.filter(
    (a) =>
      (a.value.kind === "now" || (a.value.kind === "other" && alwaysFromClock(mod.sourceCode, a.valueNode))) &&
      (hasLockWord(a.field) || (lockTable && mod.vocabulary.isTimeField(a.field))) &&
      !clears(a),
  );
  if (stamps.length === 0) return [];
  const read = mod
    .earlierReads(write.node, write.model)
    .find((r) => enclosingFunction(r.node) === enclosingFunction(write.node));
  if (!read || isOverride(write.node)) return [];
  // An upsert that names no conflict columns writes the row of its primary key: the row the check read when it
  // writes every value the read picked that row by (`.eq("job_name", jobName)` then `upsert({ job_name: jobName,
  // … })`, blind-9 C213).
  const keyOfRead = (): Branch[] => {
    const picks = toBranches(read.filter);
    const written = (atom: Branch[number]) =>
      !("opaque" in atom) &&
      atom.op === "eq" &&
      write.assignments.some(
        (a) =>
          sameField(a.field, atom.pred.field) &&
          mod.sourceCode.getText(a.valueNode) === mod.valueText(predicateValue(atom.pred)),
      );
    return picks.length === 1 && picks[0]!.length > 0 && picks[0]!.every(written) ? picks : [];
  };
  const own = mod.branchesOf(write);
  const branches = upsert && own.every((b) => b.length === 0) ? keyOfRead() : own;
  // A column the read picked its one row by, compared with the same constant (`job = JOB_NAME` in both), that says
  // no state: the lock's name, a key like an id (blind-11's first sight showed it).
  const readPicks = toBranches(read.filter);
  const namesTheRow = (atom: Branch[number]) =>
    !("opaque" in atom) &&
    atom.op === "eq" &&
    atom.pred.values?.length === 1 &&
    !mod.vocabulary.isStateField(atom.pred.field) &&
    !mod.vocabulary.isFlagField(atom.pred.field) &&
    readPicks.length === 1 &&
    readPicks[0]!.some(
      (r) =>
        !("opaque" in r) &&
        r.op === "eq" &&
        sameField(r.pred.field, atom.pred.field) &&
        r.pred.values?.length === 1 &&
        r.pred.values[0]!.value === atom.pred.values![0]!.value,
    );
  // The row by its key and nothing else: a write whose filter tests anything more is a compare-and-set. Under a
  // locking read (or in a SERIALIZABLE transaction) the read's filter is the write's: the take-over is one step,
  // still a lease.
  const keyOnly = (b: Branch) =>
    !isOpaque(b) && b.length > 0 && b.every((atom) => identityFields([atom]).length === 1 || namesTheRow(atom));
  if (!write.underLock && (branches.length === 0 || !branches.every(keyOnly))) return [];
  // A column of the holder or a version pinned beside the id (`version: run.version`) is a compare-and-set on what
  // the check read: the second of two callers that read the same row matches nothing, so the take-over is one step,
  // still a lease (blind-9 F407).
  const compareAndSet = branches.every((b) => ownerPinned(b, undefined, mod.vocabulary) || comparesValueRead(b));
  const tests = new Set<Node>();
  // Only a write reached on the old side of a test that encloses it takes a lease over: on its young side (`if
  // (lock.expiresAt < now) … else if (lock.userId === me) extend`) the lease is live, and a write there renews it.
  // The tests between the read and the write (`checksBetween`) say no side: they count as they are.
  const between = [
    ...mod.guards(write).filter((g) => oldWhenTrue(mod.sourceCode, g.test) !== g.negated),
    ...checksBetween(mod, read.node, write.node),
  ];
  const aging = between.filter((g) => g.judgesAge && !tests.has(g.test) && tests.add(g.test));
  // Or the read asks only for a live lease (`lockedAt: { $gt: new Date(Date.now() - ttl) }`, `expires_at > now()`)
  // and a test of what it found turns callers away: the same check, made by the query (blind-9 C601).
  const liveRead = aging.length === 0 ? readsLiveLease(mod, read, stamps, between) : [];
  if (aging.length === 0 && liveRead.length === 0) return [];
  // The column the check judges, when the write stamps it (`expiresAt`, not the `startedAt` beside it). A write that
  // stamps none of the columns the check judged takes nothing over: `released_at: now` after a check of
  // `acquired_at` is the lock's release.
  const judged = new Set([
    ...aging.flatMap((g) => g.timeFields.map(normalizeName)),
    ...liveRead.map((t) => normalizeName(t.field)),
  ]);
  const judgedStamp = stamps.find((a) => judged.has(normalizeName(a.field)));
  // Or the judged column restamped from the clock (`expiresAt: nowTs + ttl`): the lease is that column.
  const restamped = write.assignments.find(
    (a) => judged.has(normalizeName(a.field)) && readsClockIn(mod.sourceCode, a.valueNode),
  );
  if (judged.size > 0 && !judgedStamp && !restamped) return [];
  const stamp = judgedStamp ?? restamped ?? stamps[0]!;
  const takeover: TimePredicate[] = [
    ...aging.flatMap((g) =>
      g.timeFields.length > 0
        ? g.timeFields.map((f) => ({ field: f, node: g.test as Node }))
        : [{ field: stamp.field, node: g.test as Node }],
    ),
    ...liveRead,
  ];
  const lock: LockKey = { model: write.model, field: stamp.field, value: { value: "held" }, valueText: "" };
  // A heartbeat stamps the same column again: its age tells progress. Creating the row is no renewal.
  const renewed = mod.writes.some(
    (w) =>
      w !== write &&
      w.effect !== "insert" &&
      normalizeModel(w.model) === normalizeModel(write.model) &&
      w.assignments.some(
        (a) =>
          sameField(a.field, stamp.field) &&
          (a.value.kind === "now" || readsClockIn(mod.sourceCode, a.valueNode)) &&
          !clears(a),
      ),
  );
  const check: Check | undefined =
    write.underLock || compareAndSet ? undefined : { kind: "read", node: read.node, timeFields: takeover };
  return [
    {
      kind: "lease",
      write,
      lock,
      assignment: stamp,
      takeover,
      ...(check ? { check } : {}),
      renewed,
    },
  ];
}

/**
 * The read's filter picks only rows whose lease column, one the write stamps, is still live by the clock (`lockedAt >
 * now - ttl`, `expiresAt > now`) in every branch, and a test between the read and the write looks at what it found:
 * a stale row is then not found, and the write takes it over. The lease tests, as the take-over.
 */
function readsLiveLease(
  mod: Module,
  read: StateRead,
  stamps: readonly Assignment[],
  between: readonly Guard[],
): TimePredicate[] {
  const branches = toBranches(read.filter);
  if (branches.length === 0 || branches.some(isOpaque)) return [];
  const live = branches.map((b) =>
    b.flatMap((atom) =>
      !("opaque" in atom) &&
      (atom.op === "gt" || atom.op === "gte") &&
      stamps.some((a) => sameField(a.field, atom.pred.field)) &&
      readsClockIn(mod.sourceCode, predicateValue(atom.pred))
        ? [{ field: atom.pred.field, node: atom.pred.node }]
        : [],
    ),
  );
  if (live.some((l) => l.length === 0)) return [];
  const result = resultBinding(read.runAt ?? read.node);
  const uses = (result && findVariable(mod.sourceCode, result)?.references.map((r) => r.identifier)) ?? [];
  if (!between.some((g) => uses.some((id) => contains(g.test, id)))) return [];
  return live.flat();
}

const OVERRIDE = /^(?:force|admin|emergency)[A-Z_]/;

/** A write in a function named as an operator's override of a lock (`forceUnlockAutoPayout`, `adminReleaseLock`, `emergencyCleanupLocks`). */
export function isOverride(node: Node): boolean {
  for (let fn = enclosingFunction(node); fn; fn = fn.parent ? enclosingFunction(fn.parent) : undefined) {
    const name = functionName(fn);
    if (name !== undefined) return OVERRIDE.test(name);
  }
  return false;
}

/**
 * The branch compares a column with the value read from the row before (`clock: lock.clock`, `version: row.version`):
 * a compare-and-set whatever the column is called. The row's id is no such column (every writer of it knows it).
 */
export function comparesValueRead(branch: Branch): boolean {
  return branch.some((atom) => {
    if ("opaque" in atom || atom.op !== "eq" || atom.pred.values || /^_?id$/i.test(atom.pred.field)) return false;
    let n = unwrap(predicateValue(atom.pred));
    if (n.type === "Property") n = unwrap(n.value as Node);
    return (
      n.type === "MemberExpression" &&
      !n.computed &&
      n.property.type === "Identifier" &&
      normalizeName(n.property.name) === normalizeName(atom.pred.field) &&
      unwrap(n.object).type === "Identifier"
    );
  });
}
