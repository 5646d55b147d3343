/**
 * The module's other writes read against each claim: a recovery (with its flaws), a holder write, or a lock row's
 * release.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, Node, StateRead, StateWrite, StaticValue } from "../../model/accesses.js";
import { predicateValue } from "../../model/accesses.js";
import type { Check, Claim, HolderWrite, Recovery, RecoveryFlaw, RowRelease, StaleScan } from "../../model/claims.js";
import {
  agePredicates,
  allowedIn,
  excludes,
  identityFields,
  ownerColumns,
  isOpaque,
  ownerPinned,
  pins,
  toBranches,
  type Atom,
  type Branch,
} from "../../model/conditions.js";
import { normalizeModel, sameValue, sameField } from "../../model/names.js";
import { hasLockWord, type ResolvedVocabulary } from "../../model/settings.js";
import { enclosingFunction, isFunction, unitOf } from "../../reading/units.js";
import { oldWhenTrue } from "../../reading/guards.js";
import { transactionHandle } from "../../reading/calls.js";
import { walk } from "../../reading/walk.js";
import {
  findVariable,
  getConstInit,
  drawnFresh as drawnFreshValue,
  iterationSource,
  keyName,
  resultBinding,
  staticChoices,
  unwrap,
} from "../../reading/values.js";
import { isReset } from "./vocabulary.js";
import { picksLockName } from "./lock-rows.js";
import { Module } from "./module.js";
import { allBranchesExclude, findsNoHeldRow } from "./state-claims.js";
import { comparesValueRead, isOverride, clears, isBareClock, holderColumns, namesClaimedRow } from "./leases.js";
import { holdsRow, isLockRow } from "../../model/claims.js";

export interface Classified {
  recoveries: Recovery[];
  holder: HolderWrite[];
  releases: RowRelease[];
}

/**
 * A delete of a lock row judged stale, by the id of the very row it read (`delete({ where: { id: lock.id } })`), where
 * each holding is a row of its own (inserted when the lock is taken) and nothing renews a row once it has expired (the
 * module stamps the lock's time only when it inserts, or on the young side of an age test: the holder extending its
 * own live lock). The row judged expired stays expired, and a successor's lock is another row with another id: two
 * takers that both judged it stale delete it once between them, and never a lock taken since (blind-11 C9b09, a
 * person's edit lock).
 */
function deletesJudgedHolding(mod: Module, write: StateWrite, claim: Claim): boolean {
  if (claim.kind !== "inserted-row" && claim.kind !== "unenforced-row") return false;
  const model = normalizeModel(write.model);
  const namesReadRow = (b: Branch) =>
    b.some((atom) => {
      if ("opaque" in atom || atom.op !== "eq" || atom.pred.values || !/^_?id$/i.test(atom.pred.field)) return false;
      let v = unwrap(predicateValue(atom.pred));
      if (v.type === "Property") v = unwrap(v.value as Node);
      if (v.type !== "MemberExpression" || v.computed || unwrap(v.object).type !== "Identifier") return false;
      const read = mod.readHeldBy(unwrap(v.object) as TSESTree.Identifier, 0);
      return read !== undefined && normalizeModel(read.model) === model;
    });
  if (!mod.branchesOf(write).every(namesReadRow)) return false;
  const young = (w: StateWrite) =>
    mod.guards(w).some((g) => {
      const old = oldWhenTrue(mod.sourceCode, g.test);
      return g.judgesAge && old !== undefined && old === g.negated;
    });
  return mod.writes.every(
    (w) =>
      w.effect === "insert" ||
      w.effect === "delete" ||
      normalizeModel(w.model) !== model ||
      !w.assignments.some((a) => mod.vocabulary.isTimeField(a.field) && a.value.kind !== "static") ||
      young(w),
  );
}

/**
 * A write to a lock row's table after the row was taken: a sweep judged by age is its recovery; a delete, or a
 * write that clears the lease, picked by the row's key is a release, owner-checked when every branch also names the
 * holder (an owner or token column) or the lease value the claim stamped (`leaseUntil: lease`).
 */
function classifyLockRow(mod: Module, write: StateWrite, claim: Claim, out: Classified): void {
  const all = mod.branchesOf(write);
  if (all.length === 0) return;
  if (all.some(isOpaque)) {
    takeOverAmongOthers(mod, write, claim, all, out);
    return;
  }
  // Branches that find only rows no holder has (`locked: false` where the lock row is inserted `locked: true`).
  const branches = all.filter((b) => reachesClaimedRows(b, claim, mod.vocabulary));
  if (branches.length === 0) return;
  // A keyed lock row shares its table with other rows (settings): only writes of the row by its name are about it.
  if (
    claim.kind === "keyed-row" &&
    !branches.every((b) =>
      picksLockName(mod, b, { field: claim.lock.field, value: claim.lock.value, text: claim.nameText }),
    )
  )
    return;
  const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
  if (ages.every((a) => a.length > 0)) {
    out.recoveries.push({ write, lock: claim.lock, claim, timePredicates: ages.flat(), flaws: [] });
    return;
  }
  if (takeOverAmongOthers(mod, write, claim, all, out)) return;
  // A take-over decided in JavaScript: the way to the delete judges the row's age (`if (lock.when + lock.ttl >=
  // now) return`), and the delete compares a column with the value read (`unique: lock.unique`), so only a taker
  // that saw this very holder removes it (Apostrophe's lock module, shared corpus dC02).
  // The same delete by the row's name alone is a take-over too, but two takers that both judged the row stale both
  // delete, and the second removes the lock the first has just taken (`check-in-js`, conditional-recovery's).
  // In the claim's own function after the claim, only a test made after the claim judges the row someone else holds
  // (`if (error) { … if (expiresAt < now) delete }`, blind-3 Cv15); one made before it judged the row the claim then
  // took, and the delete is the holder's release (`finally { delete … }`, blind-9 C213:37).
  const afterClaim =
    enclosingFunction(write.node) === enclosingFunction(claim.write.node) &&
    write.node.range[0] > claim.write.node.range[1];
  if (
    write.effect === "delete" &&
    branches.every(
      (b) =>
        comparesValueRead(b) ||
        identityFields(b).length > 0 ||
        claim.kind === "keyed-row" ||
        (holdsRow(claim) && namesClaimedRow(b, claim)),
    )
  ) {
    const aging = mod
      .guards(write)
      .filter(
        (g) => g.judgesAge && g.timeFields.length > 0 && (!afterClaim || g.test.range[0] > claim.write.node.range[1]),
      );
    const timeFields = aging.flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
    if (aging.length > 0 && !isOverride(write.node)) {
      const check: Check = { kind: "if", node: aging[0]!.test, timeFields };
      out.recoveries.push({
        write,
        lock: claim.lock,
        claim,
        timePredicates: timeFields,
        flaws: branches.every(comparesValueRead) || deletesJudgedHolding(mod, write, claim) ? [] : ["check-in-js"],
        check,
      });
      return;
    }
  }
  // A delete of the row, or a write that clears a lease column the claim stamped (`leaseUntil: new Date(0)`).
  // A lease checked in JavaScript is freed by clearing any lock column it stamped (`locked: false` after
  // `locked: true, locked_at: now`).
  const leaseColumn = (f: string) =>
    claim.kind === "lease"
      ? sameField(f, claim.lock.field) ||
        (claim.check !== undefined && hasLockWord(f) && claim.write.assignments.some((c) => sameField(c.field, f)))
      : mod.vocabulary.isTimeField(f) && claim.write.assignments.some((c) => sameField(c.field, f));
  // The claim stamps the lease with the clock plus a term and takes it over once that instant passed: the column
  // says until when the lease holds, whatever its name, and setting it to the clock ends the lease.
  const until =
    claim.kind === "lease" && claim.assignment.value.kind === "now" && !bareClock(mod, claim.assignment.valueNode);
  // A time the lease's claim clears and this write stamps with the clock (`released_at: null` when taken,
  // `released_at: now()` when done): the lock's end, recorded rather than erased.
  const endStamp = (a: (typeof write.assignments)[number]) =>
    claim.kind === "lease" &&
    a.value.kind === "now" &&
    mod.vocabulary.isTimeField(a.field) &&
    claim.write.assignments.some((c) => sameField(c.field, a.field) && c.value.kind === "static" && clears(c));
  // A lock row taken over where a column it stamps has passed (`ON CONFLICT … WHERE locks.locked_until < now()`):
  // that column says until when the row holds, so setting it to the clock ends the hold.
  const untilColumn = (f: string) =>
    claim.write.effect === "insert" &&
    toBranches(claim.write.filter).some((b) =>
      b.some((atom) => "pred" in atom && (atom.op === "lt" || atom.op === "lte") && sameField(atom.pred.field, f)),
    );
  // A write that moves the lease column on with the clock (`expiresAt: new Date(Date.now() + ttl)`) renews the lease,
  // whatever else it stamps (`refreshedAt: new Date()` where the claim wrote `refreshedAt: null`): no end stamp then.
  const renews = write.assignments.some(
    (a) => leaseColumn(a.field) && a.value.kind === "now" && !clears(a, until || untilColumn(a.field)),
  );
  const releases =
    write.effect === "delete" ||
    write.assignments.some(
      (a) => (leaseColumn(a.field) && clears(a, until || untilColumn(a.field))) || (!renews && endStamp(a)),
    );
  // A keyed lock row is picked by its constant name, not by a value known at run time; so is a lock row the claim
  // inserts under a constant it names it by (`insert({ job: JOB_NAME })`, deleted `where job = JOB_NAME`).
  const picked = (b: Branch) =>
    claim.kind === "keyed-row" || identityFields(b).length > 0 || (holdsRow(claim) && namesClaimedRow(b, claim));
  if (!releases || !branches.every(picked)) return;
  // An operator's override (`forceUnlock()`, `adminRelease()`) frees whatever holds the row, on purpose.
  if (isOverride(write.node)) return;
  if (purgesMany(mod, write, claim, branches) || purgesOwn(mod, write, claim, branches)) return;
  const stamped = (f: string) =>
    mod.vocabulary.isTimeField(f) &&
    claim.write.assignments.some((a) => sameField(a.field, f) && a.value.kind !== "static" && !clears(a));
  // A lock row created per acquisition after a lookup (`unenforced`) and released by a whole unique key of its
  // table beyond what it was looked up by (`documentId`, or (transactionId, userId) where it was looked up by
  // transactionId) names that acquisition's own row: a later holder creates a row of its own.
  const ownRow = (b: Branch) =>
    claim.kind === "unenforced-row" &&
    claim.keys.some(
      (k) =>
        k.length > 0 &&
        !k.every((f) => claim.fields.some((g) => sameField(f, g))) &&
        k.every((f) => identityFields(b).some((g) => sameField(f, g))),
    );
  // A column the acquire fills with a value of its own (`acquiredBy: processId`, `holder: randomUUID()`), whatever
  // its name: a release pinned to it (beside the lock's key) frees only the row this acquisition wrote. A constant
  // (`locked_by: "cron"`), a time (`stamped` above) or the lock's key again (`holder: lockId` beside `id: lockId`) is
  // the same for every caller of that lock, so no owner.
  const acquirerOwns = (b: Branch) => {
    const pinned = identityFields(b);
    const picks = toBranches(claim.write.filter).flatMap((cb) =>
      cb.flatMap((atom) => ("opaque" in atom || atom.op !== "eq" || atom.pred.values ? [] : [atom.pred])),
    );
    // The value the acquire gives a pinned column: what it writes there, or what its filter picks it by.
    const given = (f: string) => [
      ...claim.write.assignments.filter((k) => sameField(k.field, f)).map((k) => mod.sourceCode.getText(k.valueNode)),
      ...picks.filter((p) => sameField(p.field, f)).map((p) => mod.valueText(p.node)),
    ];
    // The acquire's filter names its row by columns it does not write (`resourceId, lockType` of an upsert), not by a
    // conflict test of what it writes (`holder = EXCLUDED.holder`).
    const picksRow =
      picks.length > 0 && picks.every((p) => !claim.write.assignments.some((k) => sameField(k.field, p.field)));
    // A member of a document the acquire stores in a column (`value: { acquiredAt, ownershipToken }`, released
    // `where value->>ownershipToken = token`), drawn fresh for this acquisition: no other holder's row carries it.
    const inDocument = claim.write.assignments.some((a) => {
      const doc = unwrap(a.valueNode);
      return (
        doc.type === "ObjectExpression" &&
        doc.properties.some((p) => {
          if (p.type !== "Property") return false;
          const name = keyName(p.key as Node, p.computed);
          const value = p.value as Node;
          return (
            name !== undefined && pinned.some((f) => sameField(f, name)) && madePerCall(value) && drawnFresh(value)
          );
        })
      );
    });
    if (inDocument) return true;
    return claim.write.assignments.some((a) => {
      if (!pinned.some((f) => sameField(f, a.field))) return false;
      if (a.value.kind !== "other" || sameField(a.field, claim.lock.field) || mod.vocabulary.isTimeField(a.field))
        return false;
      if (picks.some((p) => sameField(p.field, a.field)) || !madePerCall(a.valueNode)) return false;
      const key = pinned.filter((f) => !sameField(f, a.field)).flatMap(given);
      // Pinned to that column alone: owned when the acquire picks its row by other columns (`userId` written on
      // the row found by `resourceId, lockType`: a release by `userId` frees only this user's rows, blind-9 C601),
      // or when the value is drawn fresh for this acquisition (`id: lockId` with `lockId` made from `Math.random()`
      // or a UUID): no other holder's row carries it (blind-8 CB07).
      if (key.length === 0) return picksRow || drawnFresh(a.valueNode);
      return !key.includes(mod.sourceCode.getText(a.valueNode));
    });
  };
  // Made by the acquiring call (a local or a parameter), not once per process: a module-level `INSTANCE_ID` is
  // shared by every overlapping run of the process, so it tells none of them apart.
  const madePerCall = (n: Node) => {
    const u = unwrap(n);
    if (u.type !== "Identifier") return false;
    const scope = findVariable(mod.sourceCode, u)?.scope.type;
    return scope !== undefined && scope !== "module" && scope !== "global";
  };
  const drawnFresh = (n: Node) => unwrap(n).type === "Identifier" && drawnFreshValue(mod.sourceCode, n);
  // An owner column by name, unless it is the key the acquire's insert is unique on: a lock item keyed `lockId`
  // is named by it, so a release by `lockId` alone frees whoever holds the lock now.
  const conflictKey = claim.write.conflictKey ?? [];
  const ownerNamed = (b: Branch) =>
    ownerColumns(b, mod.vocabulary).some((f) => !conflictKey.some((k) => sameField(k, f)));
  // A column the claim stamps with the caller's identity and compares with it (its re-entry), pinned here to a
  // run-time value: this holder's row.
  const holders = holderColumns(mod.sourceCode, claim.write);
  const holderPinned = (b: Branch) => identityFields(b).some((f) => holders.some((h) => sameField(h, f)));
  const ownerChecked = branches.every(
    (b) => ownerNamed(b) || identityFields(b).some(stamped) || ownRow(b) || acquirerOwns(b) || holderPinned(b),
  );
  out.releases.push({ write, claim, ownerChecked });
}

/**
 * The read of the same model whose result the write's row identity is taken from, where the code shows it: a loop
 * or an array callback over that read's result (`iterationSource`). Undefined where nothing shows it.
 */
function sourceRead(mod: Module, write: StateWrite): StateRead | undefined {
  for (const b of toBranches(write.filter)) {
    for (const atom of b) {
      if ("opaque" in atom || atom.op !== "eq" || atom.pred.values) continue;
      const list = iterationSource(mod.sourceCode, predicateValue(atom.pred));
      const variable = list && findVariable(mod.sourceCode, list);
      if (!variable) continue;
      const read = mod.earlierReads(write.node, write.model).find((r) => {
        const bound = resultBinding(r.runAt ?? r.node);
        return bound !== undefined && findVariable(mod.sourceCode, bound) === variable;
      });
      if (read) return read;
    }
  }
  return undefined;
}

/** Where a write judges age outside its filter: a JS check about this lock, or an earlier stale scan of it. */
function ageCheckOf(mod: Module, write: StateWrite, claim: Claim, scans: readonly StaleScan[]): Check | undefined {
  const { field, value } = claim.lock;
  // A write in the branch the age test takes for a young row (`if (elapsed > LIMIT) … else { write }`) is no
  // recovery of it: the row is fresh there (blind-8 Bh08:60).
  const aging = mod.guards(write).filter((g) => g.judgesAge && oldWhenTrue(mod.sourceCode, g.test) !== g.negated);
  // The checks together must admit the claimed value: `if (job.status !== "PENDING") return` makes it not about V.
  if (aging.length > 0 && !allBranchesExclude(mod.pathCondition(write), field, value)) {
    const first = aging[0]!;
    const timeFields = aging.flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
    return { kind: "if", node: first.test, timeFields };
  }
  const earlier = new Set(mod.earlierReads(write.node, write.model));
  // Rows the write names by a value taken from another read's result (`for (const link of oldPendingLinks)`) are
  // not the scan's, whichever read came first.
  const sources = toBranches(write.filter).flatMap((b) =>
    b.flatMap((atom) => ("opaque" in atom || atom.op !== "eq" || atom.pred.values ? [] : [predicateValue(atom.pred)])),
  );
  const fromOther = (read: Node) =>
    sources.some((n) => {
      const list = n && iterationSource(mod.sourceCode, n);
      const bound = resultBinding(read);
      return (
        list !== undefined &&
        bound !== undefined &&
        findVariable(mod.sourceCode, list) !== findVariable(mod.sourceCode, bound)
      );
    });
  // Rows named by a value bound inside a function the scan is not in (a job processor's `job.data.videoId`, defined
  // after a sweep in the same handler) are that function's input, not the scan's rows (blind-9 A102:123).
  const rootOf = (n: Node): Node => {
    const u = unwrap(n);
    if (u.type === "Property") return rootOf(u.value as Node);
    return u.type === "MemberExpression" ? rootOf(u.object) : u;
  };
  const boundApart = (read: Node) =>
    sources.length > 0 &&
    sources.every((n) => {
      // An array callback or loop over the scan's own result names the scan's rows, wherever it is bound.
      const list = iterationSource(mod.sourceCode, n);
      const bound = resultBinding(read);
      if (list && bound && findVariable(mod.sourceCode, list) === findVariable(mod.sourceCode, bound)) return false;
      const root = rootOf(n);
      const block =
        root.type === "Identifier" ? findVariable(mod.sourceCode, root)?.scope.variableScope.block : undefined;
      if (
        block === undefined ||
        !isFunction(block) ||
        (block.range[0] <= read.range[0] && read.range[1] <= block.range[1])
      )
        return false;
      // A callback handed to the read's own result (`db.queue.find(…).forEach(function (job) { … })`) iterates its rows.
      const call = block.parent;
      return !(
        call?.type === "CallExpression" &&
        call.callee.type === "MemberExpression" &&
        call.callee.object.range[0] <= read.range[0] &&
        read.range[1] <= call.callee.object.range[1]
      );
    });
  const scan = scans.find(
    (s) =>
      earlier.has(s.read) &&
      sameField(s.field, field) &&
      sameValue(s.value, value) &&
      !fromOther(s.read.runAt ?? s.read.node) &&
      !boundApart(s.read.runAt ?? s.read.node),
  );
  return scan && { kind: "read", node: scan.read.node, timeFields: scan.timePredicates };
}

/**
 * `status: ok ? "COMPLETED" : "IN_REVIEW"` (or SQL's `CASE … THEN 'done' ELSE 'archived' END`): a write by id whose
 * every choice moves the row off the claimed value, none of them a reset, is the holder's (a completion either
 * way), never a recovery. Choices of which one resets the lock (`"FAILED"`) are read by `classifyAgainst` as a
 * static reset is: the holder's by id, or a recovery where the code judged the row's age first.
 */
function classifyChoice(
  mod: Module,
  write: StateWrite,
  claim: Claim,
  assignment: Assignment,
  branches: readonly Branch[],
  out: Classified,
): void {
  const { field, value } = claim.lock;
  const choices =
    (assignment.value.kind === "other" ? assignment.value.choices : undefined) ??
    staticChoices(mod.sourceCode, assignment.valueNode);
  // A state known only at run time (`status: data.status`) written with the owner column the claim stamps cleared
  // (`workerId: null`): whatever the state, the write ends the hold, the holder's release (blind-13 F13f13).
  if (!choices && !clearsClaimOwner(write, claim, mod.vocabulary)) return;
  if (choices && choices.some((c) => sameValue(c, value))) return;
  if (branches.length === 0 || branches.every((b) => excludes(b, field, value))) return;
  if (!branches.every((b) => identityFields(b).some((f) => !sameField(f, field)))) return;
  const fenced =
    branches.every((b) => pins(b, field, value)) ||
    branches.some(isOpaque) ||
    branches.every((b) => ownerPinned(b, undefined, mod.vocabulary)) ||
    checkedUnderLock(mod, write) ||
    inClaimsTransaction(mod, write, claim);
  out.holder.push({ write, claim, assignment, fenced });
}

/**
 * The time `timeField` is written by the claim and by no write that leaves the row in the claimed state (a holder's
 * progress: `updateMany({ where: { id }, data: { nextAttemptAt } })`): whatever it is called, it says when the claim
 * was taken, and a live holder never moves it, as a start stamp. Writes that move the row off the claimed state
 * (completion, failure, a recovery) may stamp it again.
 */
function stampedOnlyByClaim(mod: Module, claim: Claim, timeField: string): boolean {
  const { field, value } = claim.lock;
  const model = normalizeModel(claim.write.model);
  if (!claim.write.assignments.some((a) => sameField(a.field, timeField))) return false;
  return !mod.writes.some(
    (w) =>
      w !== claim.write &&
      normalizeModel(w.model) === model &&
      w.assignments.some((a) => sameField(a.field, timeField)) &&
      !w.assignments.some(
        (a) => sameField(a.field, field) && !(a.value.kind === "static" && sameValue(a.value.value, value)),
      ),
  );
}

/** The write clears (`clears`: null, false) an owner column that the claim's write fills with a run-time value. */
function clearsClaimOwner(write: StateWrite, claim: Claim, vocabulary: ResolvedVocabulary): boolean {
  return write.assignments.some(
    (a) =>
      vocabulary.isOwnerField(a.field) &&
      clears(a) &&
      claim.write.assignments.some((c) => sameField(c.field, a.field) && c.value.kind !== "static"),
  );
}

/**
 * A branch that needs a field empty which the claim always fills (`"lockedAt" IS NULL` beside a claim stamping
 * `"lockedAt" = now()`: rows left from before the stamp existed) matches no row the claim took, so it says nothing
 * about the claim's holders: `status = 'RUNNING' AND ("lockedAt" IS NULL OR "lockedAt" < $cutoff)` is judged by its
 * age branch alone.
 */
/** The clock itself, nothing added: in place, or a const holding it (`const now = Date.now()`; `{ ts: now }`). */
function bareClock(mod: Module, node: Node): boolean {
  let n = unwrap(node);
  if (n.type === "Property") n = unwrap(n.value as Node);
  if (n.type === "Identifier") {
    const init = getConstInit(mod.sourceCode, n);
    if (init && init.type !== "TSEnumDeclaration") n = unwrap(init);
  }
  return isBareClock(n);
}

/**
 * A write made under a locking read of its row (`SELECT … FOR UPDATE` earlier in its transaction) on a way a test of
 * what that read returned decides (`if (row.is_running && !expired) return`): whoever writes saw the row as it is, and
 * nobody can move it before the transaction ends, so the write is as conditional as a compare-and-set.
 */
function checkedUnderLock(mod: Module, write: StateWrite): boolean {
  if (!write.underLock) return false;
  const unit = unitOf(write.node);
  // The rows of the locking reads, and of any read made after one of the written table in the unit: nobody moves the
  // locked row before the transaction ends (`SELECT … FOR UPDATE` of the item, then `findFirst({ where: { id, claimId } })`; blind-15 A15a07).
  const firstLock = Math.min(
    ...mod.reads
      .filter((r) => r.locking && unitOf(r.node) === unit && normalizeModel(r.model) === normalizeModel(write.model))
      .map((r) => r.node.range[0]),
  );
  const rows = mod.reads
    .filter(
      (r) =>
        (r.locking || r.node.range[0] > firstLock) && unitOf(r.node) === unit && r.node.range[1] <= write.node.range[0],
    )
    .map((r) => resultBinding(r.runAt ?? r.node))
    .filter((b): b is TSESTree.Identifier => b !== undefined)
    .map((b) => findVariable(mod.sourceCode, b))
    .filter((v) => v !== undefined);
  if (rows.length === 0) return false;
  return mod.guards(write).some((g) => readsVariables(mod, g.test as Node, new Set(rows), 2));
}

/**
 * A holder's write sent after the claim, in the same run of the same function, through the same transaction handle
 * (`tx.job.updateMany(…)` claims, then `tx.job.update(…)` fails the row it read empty): the claim's write keeps the
 * row locked to every other transaction until this one commits, so no recovery or new claim can come between them
 * (blind-23 D23d10).
 */
function inClaimsTransaction(mod: Module, write: StateWrite, claim: Claim): boolean {
  if (write.node.range[0] < claim.write.node.range[1]) return false;
  if (enclosingFunction(write.node) !== enclosingFunction(claim.write.node)) return false;
  const handle = transactionHandle(mod.sourceCode, write.node);
  return handle !== undefined && handle === transactionHandle(mod.sourceCode, claim.write.node);
}

/** `node` reads one of `variables`, directly or through the initial value of a const it reads (to `depth` consts). */
function readsVariables(mod: Module, node: Node, variables: ReadonlySet<unknown>, depth: number): boolean {
  let found = false;
  walk(node, (n) => {
    if (found) return false;
    if (n.type !== "Identifier") return true;
    const v = findVariable(mod.sourceCode, n);
    if (!v) return true;
    if (variables.has(v)) found = true;
    else if (depth > 0) {
      const init = getConstInit(mod.sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration" && readsVariables(mod, init, variables, depth - 1)) found = true;
    }
    return !found;
  });
  return found;
}

/**
 * An atom comparing a field with one static value (`status = 'done'`) that `test` accepts against the claim's
 * assignment of that field.
 */
function meetsClaim(a: Atom, claim: Claim, test: (s: Assignment, value: StaticValue) => boolean): boolean {
  if (!("pred" in a) || a.op !== "eq" || a.pred.values?.length !== 1) return false;
  const value = a.pred.values[0]!;
  return claim.write.assignments.some((s) => sameField(s.field, a.pred.field) && test(s, value));
}

/**
 * A conditional write of a lock row some of whose alternatives are unknown or of an operator not read (`$or: [{ owner
 * }, { expiresAt: { $lte: now } }, { expiresAt: { $not: { $type: "date" } } }]`): when every known alternative that
 * can find a held row is judged by age or is the caller's own row (re-entry), the write takes over expired locks, and
 * the module answers Q1 (blind-14 C14c08). What the unknown alternatives add is not judged.
 */
function takeOverAmongOthers(
  mod: Module,
  write: StateWrite,
  claim: Claim,
  all: readonly Branch[],
  out: Classified,
): boolean {
  if (write.effect === "delete") return false;
  const unknown = (b: Branch) => isOpaque(b) || b.some((a) => "pred" in a && a.op === "other");
  const known = all.filter((b) => !unknown(b) && reachesClaimedRows(b, claim, mod.vocabulary));
  const aged = known.filter((b) => agePredicates(b, mod.vocabulary).length > 0);
  if (aged.length === 0) return false;
  if (!known.every((b) => aged.includes(b) || ownerPinned(b, undefined, mod.vocabulary))) return false;
  const timePredicates = aged.flatMap((b) => agePredicates(b, mod.vocabulary));
  out.recoveries.push({ write, lock: claim.lock, claim, timePredicates, flaws: [] });
  return true;
}

function reachesClaimedRows(branch: Branch, claim: Claim, vocabulary: ResolvedVocabulary): boolean {
  return !branch.some((a) =>
    meetsClaim(a, claim, (s, value) =>
      value.value === null
        ? s.value.kind === "now" || (s.value.kind === "static" && s.value.value.value !== null)
        : // A lock row inserted with its flag set (`locked: true`) is held while the flag is: rows found with
          // another value (`locked: false`, a cleanup of finished rows) are none a holder has (blind-12 C12c10).
          isLockRow(claim) &&
          vocabulary.isFlagField(s.field) &&
          s.value.kind === "static" &&
          !sameValue(s.value.value, value),
    ),
  );
}

export function classifyAgainst(
  mod: Module,
  write: StateWrite,
  claim: Claim,
  scans: readonly StaleScan[],
  out: Classified,
): void {
  const { field, value } = claim.lock;
  const branches = mod.branchesOf(write).filter((b) => reachesClaimedRows(b, claim, mod.vocabulary));
  if (write.effect === "insert") return;
  if (holdsRow(claim)) return classifyLockRow(mod, write, claim, out);
  if (isLockRow(claim) || write.effect === "delete") {
    // Lock rows are freed by a sweeper or take-over judged by age; claimed rows by a delete pinned and judged by age.
    const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
    const timed = branches.length > 0 && ages.every((a) => a.length > 0);
    const applies = isLockRow(claim) || branches.every((b) => pins(b, field, value));
    if (timed && applies && !branches.some(isOpaque)) {
      out.recoveries.push({ write, lock: claim.lock, claim, timePredicates: ages.flat(), flaws: [] });
    }
    return;
  }
  const assignment = write.assignments.find((a) => sameField(a.field, field));
  if (!assignment) return;
  // A value chosen among fixed ones (`ok ? "posted" : "failed"`, a `let` given one of them on each path) moves the
  // row like a static one when a choice resets the lock and none holds it (blind-9 A406's stuck posts, failed or
  // posted).
  const targets: readonly StaticValue[] | undefined =
    assignment.value.kind === "static"
      ? [assignment.value.value]
      : ((assignment.value.kind === "other" ? assignment.value.choices : undefined) ??
        staticChoices(mod.sourceCode, assignment.valueNode));
  if (
    assignment.value.kind !== "static" &&
    (!targets ||
      targets.some((t) => sameValue(t, value)) ||
      !targets.some((t) => isReset(t, claim.lock, mod.vocabulary)))
  )
    return classifyChoice(mod, write, claim, assignment, branches, out);
  if (!targets || targets.some((t) => sameValue(t, value))) return;
  if (branches.length === 0 || branches.every((b) => excludes(b, field, value))) return; // never touches claimed rows
  const opaque = branches.some(isOpaque);
  const pinned = branches.every((b) => pins(b, field, value));
  const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
  // A branch for rows without a field the claim always stamps (`lease.lease_until` absent, where the claim sets
  // `lease: { lease_until }`) finds no row a holder has: it needs no age test (blind-10 F8b05).
  const timed = ages.every((a, i) => a.length > 0 || findsNoHeldRow(branches[i]!, claim.write));
  const timePredicates = ages.flat();
  // Rows named by their key: one (`id = $1`), or a list the caller holds (`id = ANY($1)`, `id IN (…)` of a run-time
  // list: the rows it claimed, handed back at shut-down), not a state or a flag.
  const identified = branches.every((b) =>
    [...identityFields(b), ...mod.keyListFields(b, true)].some((f) => !sameField(f, field)),
  );
  const resets = targets.some((t) => isReset(t, claim.lock, mod.vocabulary));
  // Code the claim runs after itself (its own deadline, its completion) is the holder's, not a recoverer's.
  const sameUnitAfterClaim =
    unitOf(write.node) === unitOf(claim.write.node) && write.node.range[0] > claim.write.node.range[1];
  const recovery = (flaws: RecoveryFlaw[], check?: Check): void => {
    out.recoveries.push({ write, lock: claim.lock, claim, timePredicates, flaws, ...(check ? { check } : {}) });
  };

  if (pinned && timed) return recovery([]);
  if (timed) {
    if (resets && !opaque) recovery(["missing-status"]);
    return;
  }
  // Rows named by a value taken from a read that found them in another state (`for (const link of oldPending)`,
  // read where status = PENDING) are not the claimed rows: no holder's write, and no recovery of them whatever age
  // the code judges on the way (a post read as `processing` failed when its media expired, where the claim holds
  // `posting`: blind-9 A406).
  const source = sourceRead(mod, write);
  const sourceBranches = source ? toBranches(source.filter) : [];
  if (sourceBranches.length > 0 && sourceBranches.every((b) => excludes(b, field, value))) return;
  if (resets && !sameUnitAfterClaim) {
    const check = ageCheckOf(mod, write, claim, scans);
    // Age judged in JS, then a compare-and-set on what was read (`status: run.status`, `version: run.version`):
    // the write fails if anything moved in between, so the recovery is race-safe.
    // Nor when the write pins the claimed state and the age was judged by the claim's start stamp: a holder that
    // finishes moves the state and its row no longer matches, and a live one never moves the time judged, so the
    // reading made before the write is still true at it (a repair script's `updateMany({ where: { id, status:
    // "running" } })` after picking runs by `startedAt`). Judged by a time the holder moves, its progress between
    // the read and the write is lost.
    // The claimed state re-checked in JavaScript on a row read under a lock of it (`SELECT … FOR UPDATE`, then `if
    // (row.status !== "sending") return`) pins it as the filter would: nobody moves the row before the transaction
    // ends (blind-23 D23d10).
    const pinnedUnderLock =
      pinned ||
      (checkedUnderLock(mod, write) && toBranches(mod.pathCondition(write)).every((b) => pins(b, field, value)));
    const startJudged =
      pinnedUnderLock &&
      check !== undefined &&
      check.timeFields.length > 0 &&
      check.timeFields.every(
        (t) =>
          (mod.vocabulary.isStartTimeField(t.field) && !mod.vocabulary.isProgressTimeField(t.field)) ||
          stampedOnlyByClaim(mod, claim, t.field),
      );
    if (check)
      return recovery(
        opaque || startJudged || branches.every((b) => ownerPinned(b, field, mod.vocabulary)) ? [] : ["check-in-js"],
        check,
      );
  }
  // Nor are rows the code on the way found in another state (`if (item.status !== "FAILED") return null;` before a
  // retry): the write never runs on a claimed row (blind-8 Ah06:1005). Not in the claim's own function after it: a
  // test made there before the claim saw the row before the claim moved it.
  if (!sameUnitAfterClaim && allBranchesExclude(mod.pathCondition(write), field, value)) return;
  if (takesFreeRows(mod, write, claim)) return;
  if (identified) {
    const fenced =
      pinned ||
      opaque ||
      branches.every((b) => ownerPinned(b, undefined, mod.vocabulary)) ||
      checkedUnderLock(mod, write) ||
      inClaimsTransaction(mod, write, claim);
    out.holder.push({ write, claim, assignment, fenced });
    return;
  }
  if (pinned && resets && !opaque) recovery(["missing-time"]);
}

/**
 * The write takes rows in the state the claim takes them from: a branch of its filter finds only rows the claim's
 * filter also finds free (`status = 'pending'`, where the claim takes pending rows), so it competes with the claim
 * for unheld rows (a second claim that acknowledges in one step, straight to `done`). Whatever its other branches
 * find, it is no holder's write: a holder writes the rows it holds (blind-21 A21a15).
 */
function takesFreeRows(mod: Module, write: StateWrite, claim: Claim): boolean {
  const { field, value } = claim.lock;
  const free = mod.branchesOf(claim.write);
  return mod.branchesOf(write).some((b) => {
    const allowed = allowedIn(b, field);
    return (
      allowed !== "any" &&
      "only" in allowed &&
      allowed.only.length > 0 &&
      allowed.only.every((v) => !sameValue(v, value) && free.some((c) => pins(c, field, v)))
    );
  });
}

/**
 * A write of many rows pinned by nothing but the process's identity, a value of the module or the instance that the
 * lock rows are stamped with in a column of their own (`deleteMany({ instance_id: this.instanceId })` where the rows
 * are written `instance_id: this.instanceId`), at a process's start or end: every lock that identity holds, whatever
 * its name. A clean-up of the process's own rows, not one holder giving one lock back; no row of another holder
 * matches it, so no owner is asked of it (blind-18 C18c01). The lock's key, a time or a state pinned beside it make it
 * a release, asked as one.
 */
function purgesOwn(mod: Module, write: StateWrite, claim: Claim, branches: readonly Branch[]): boolean {
  if (!/many$|all$/i.test(write.operation)) return false;
  // What the module's writes of the lock's rows stamp: the claim's own, and the insert that made a row a renewal
  // re-stamps (`create({ name, instance_id: this.instanceId })`, then `lock.last_heartbeat = now; lock.save()`).
  const model = normalizeModel(claim.write.model);
  // Not the lock's key: what the claim names its row by, the key its insert conflicts on, a primary key.
  const keyed = [
    claim.lock.field,
    ...(claim.write.conflictKey ?? []),
    ...toBranches(claim.write.filter).flatMap((b) => identityFields(b)),
  ];
  const isKey = (f: string) => /^_?id$/i.test(f) || keyed.some((k) => sameField(k, f));
  // The process's identity: a value of the module (`PROCESS_ID`) or of the instance (`this.instanceId`), not one the
  // acquiring call is handed or makes (a lock's name, a parameter, a local).
  const processWide = (n: Node) => {
    const u = unwrap(n);
    if (u.type === "MemberExpression") return unwrap(u.object).type === "ThisExpression";
    const scope = u.type === "Identifier" ? findVariable(mod.sourceCode, u)?.scope.type : undefined;
    return scope === "module" || scope === "global";
  };
  const identity = [claim.write, ...mod.writes.filter((w) => normalizeModel(w.model) === model)]
    .flatMap((w) => w.assignments)
    .filter(
      (a) =>
        a.value.kind === "other" &&
        processWide(a.valueNode) &&
        !isKey(a.field) &&
        !mod.vocabulary.isTimeField(a.field) &&
        !mod.vocabulary.isStateField(a.field),
    );
  return (
    identity.length > 0 &&
    branches.length > 0 &&
    branches.every((b) => b.length > 0 && b.every((atom) => mod.pinsWritten(atom, identity)))
  );
}

/**
 * A write of many rows (`deleteMany`, `updateMany`) that picks them by part of the lock's key — the claim names its
 * row by (grantCode, grantVersion, sbi), the write by (sbi, grantCode) — frees every lock that shares that part, held
 * or not: a clean-up when what the locks guard goes away (every version of an application deleted), not a holder
 * giving its own lock back, so no owner is asked of it (blind-16 C16c14). The key is the claim's filter's columns
 * pinned to a value, less its owner, time and state columns; a write of one row by part of it is a release that
 * names the lock too loosely, and stays one.
 */
function purgesMany(mod: Module, write: StateWrite, claim: Claim, branches: readonly Branch[]): boolean {
  if (!/many$|all$/i.test(write.operation)) return false;
  const keyColumn = (f: string) =>
    !mod.vocabulary.isTimeField(f) &&
    !mod.vocabulary.isStateField(f) &&
    !mod.vocabulary.isFlagField(f) &&
    !sameField(f, claim.lock.field);
  // The claim's row by what every branch of its filter pins (an owner tested in one branch only, its re-entry, is
  // not part of it), or by the key its insert conflicts on; an insert's columns say nothing of which are its key.
  const claimBranches = toBranches(claim.write.filter);
  if (claimBranches.some(isOpaque)) return false;
  const pinnedBy = claimBranches.map((b) => identityFields(b));
  const common = (pinnedBy[0] ?? []).filter((f) => pinnedBy.every((p) => p.some((g) => sameField(f, g))));
  const key = (common.length > 0 ? common : (claim.write.conflictKey ?? [])).filter(keyColumn);
  if (key.length < 2) return false;
  return branches.every((b) => {
    const pinned = identityFields(b);
    return (
      pinned.length > 0 &&
      // A primary key names one row whatever else the claim's filter pins.
      !pinned.some((f) => /^_?id$/i.test(f)) &&
      pinned.every((f) => key.some((k) => sameField(k, f))) &&
      key.some((k) => !pinned.some((f) => sameField(f, k)))
    );
  });
}
