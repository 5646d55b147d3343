/**
 * Classify, then pair. Every state write of a module is read against the vocabulary:
 * - a *claim* sets field F to an in-progress value V while its filter excludes V (or a JS check or an earlier
 *   read excluded V on the way to an unconditional write: check-then-act);
 * - a *recovery* moves F off V for rows whose filter pins F = V and judges age (`updatedAt < threshold`);
 *   a recovery that judges age in JS or in an earlier read, or lacks the status or the age predicate, is
 *   still one, with flaws;
 * - a *holder write* moves one claimed row off V from code the claiming function reaches (completion, failure).
 * V is an in-progress status on a lifecycle field, or `true` on a processing flag. Two insert shapes are claims
 * too: a lock row inserted under a unique key (freed only by an age-judged sweeper or take-over), and a row
 * inserted already in progress when the module gates on that state.
 * Pairing is by (model, field, value); model names compare loosely (`job`, `Job`, `jobs`).
 * Key-value locks (Redis) are classified in ../kv-pairing/.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KvOp, Node, ObjectWrite, StateAccess, StateRead, StateWrite } from "../../model/accesses.js";
import type { Claim, HolderWrite, Recovery } from "../../model/claims.js";
import type { LockFacts, ModuleShape } from "../../model/lock-facts.js";
import { type ResolvedVocabulary, normalizeName, withClockedFields, withHeldValues } from "../../model/settings.js";
import { agePredicates, excludes, identityFields, isOpaque, pins, toBranches } from "../../model/conditions.js";
import { exitWhenHeld } from "../../reading/guards.js";
import { boundedBelowRecovery } from "../bounded-holds.js";
import { buildHeldEffects, hasTakeoverWrite } from "../fencing/held-effects.js";
import { keyDerivedHolders } from "../fencing/key-derived-holders.js";
import { buildKvFacts } from "../kv-pairing/kv-facts.js";
import { buildRenewals } from "../renewals.js";
import { namedApart, normalizeModel, sameValue, sameField } from "../../model/names.js";
import { recoveredByDirective } from "../../reading/directives.js";
import { isExported } from "../../reading/exports.js";
import { enclosingFunction, insideTransactionCall, isFunction, unitOf } from "../../reading/units.js";
import { contains } from "../../reading/ast.js";
import {
  withClaimSources,
  withQualifiedFlags,
  withValuesHeldAcrossWork,
  withLeasedValues,
  withStampJudgedValues,
} from "./vocabulary.js";
import { type UniqueKeyMap, Module } from "./module.js";
import { beforeAnyWait, holdingIn } from "./holding.js";
import { workedOffInBulk, findClaims } from "./claims.js";
import { findBornClaims } from "./state-claims.js";
import { clears } from "./leases.js";
import { findOwnedLeaseReleases } from "./owned-leases.js";
import { findStaleScans } from "./stale-scans.js";
import { overwritesLock } from "./lock-rows.js";
import { findStampOnlyClaims } from "./stamp-only-claims.js";
import { findUnreadClaims } from "./unread-claims.js";
import { type Classified, classifyAgainst } from "./classification.js";
import { buildForeignRecoveries, lockKeyText } from "./foreign-recoveries.js";
import { holdsRow, isLockRow } from "../../model/claims.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

export function buildFacts(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  shape: ModuleShape,
  vocabulary: ResolvedVocabulary,
  /** The key-value ops the module's calls of its own helpers make (src/core/summaries/). */
  helperOps: readonly KvOp[] = [],
  /** The lines of claims the audit found recovered by another module (`settings.locksRecoveredElsewhere`). */
  recoveredElsewhere: ReadonlySet<number> = new Set(),
  /** The unique keys the project's schemas declare (`settings.locksUniqueKeys`, the audit's). */
  uniqueKeys: UniqueKeyMap = new Map(),
): Omit<
  LockFacts,
  | "held"
  | "helpers"
  | "importedRowReleases"
  | "importedClaims"
  | "ignoredAcquireFailures"
  | "unheldXactLocks"
  | "lockTables"
  | "promiseMemos"
  | "poisonedChains"
  | "files"
> {
  vocabulary = withStampJudgedValues(
    withLeasedValues(
      withValuesHeldAcrossWork(
        withHeldValues(
          withClockedFields(withClaimSources(withQualifiedFlags(vocabulary, accesses), accesses), accesses),
          accesses,
        ),
        accesses,
      ),
      accesses,
    ),
    accesses,
  );
  const mod = new Module(sourceCode, accesses, vocabulary, uniqueKeys);
  const unreadStatements = accesses.some((a) => a.access === "write" && a.unread === true);
  const direct = mod.writes.flatMap((w) => findClaims(mod, w));
  // Rows inserted already in progress: plain inserts, and inserts under a unique key whose duplicate turns the caller
  // away (`create({ data: { …, status: "IN_PROGRESS" } })` with P2002 caught) that are no lock row of their own.
  const claimed = new Set(direct.map((c) => c.write));
  const born = mod.writes
    .filter(
      (w) =>
        w.effect === "insert" &&
        (w.onConflict === undefined || w.onConflict === "error" || w.onConflict === "ignore") &&
        !claimed.has(w),
    )
    .flatMap((w) => findBornClaims(mod, w, direct));
  // A value the module itself works off in bulk is a queue state, not a lock (workedOffInBulk).
  const claims = [...direct, ...born].filter((c) => !workedOffInBulk(mod, c));
  // A locking read's judgment goes with the writes made under it (underLockingReads), not a scan of its own.
  const staleScans = mod.reads.filter((r) => !r.locking).flatMap((r) => findStaleScans(sourceCode, r, vocabulary));

  const classified: Classified = { recoveries: [], holder: [], releases: [] };
  if (claims.length > 0) {
    const claimWrites = new Set(claims.map((c) => c.write));
    for (const w of mod.writes) {
      if (claimWrites.has(w)) continue;
      for (const claim of claims) {
        if (normalizeModel(claim.write.model) !== normalizeModel(w.model)) continue;
        classifyAgainst(mod, w, claim, staleScans, classified);
      }
    }
  }

  // Holder writes count only where the claiming code reaches them, and, in the claim's own function, after it; or,
  // in a repository module, in another function of its API: a module that exports the claim (`claimBatch`) and the
  // writes that end it by id (`settleSuccess(id)`) is called by a worker elsewhere that holds the row between them.
  const holding = holdingIn(shape);
  // The exported function a node belongs to, through the callbacks it hands on (`.then(() => …)`).
  const api = (node: Node) => {
    for (let fn = enclosingFunction(node); fn; fn = fn.parent ? enclosingFunction(fn.parent) : undefined) {
      if (isExported(sourceCode.ast, fn)) return fn;
    }
    return undefined;
  };
  const holderWrites = classified.holder
    .filter(
      (h) =>
        holding.after(h.claim.write.node, h.write.node) ||
        (api(h.claim.write.node) !== undefined &&
          api(h.write.node) !== undefined &&
          api(h.write.node) !== api(h.claim.write.node)),
    )
    .map((h) => (beforeAnyWait(h.claim.write.node, h.write.node) ? { ...h, beforeAnyWait: true } : h));

  // An inserted lock row whose table also has a lease take-over (the row is created once, then taken over by an
  // update once its lease has passed): that take-over is the row's way out when its holder dies.
  for (const claim of claims) {
    if (!isLockRow(claim) || claim.takeover.length > 0) continue;
    const lease = claims.find(
      (c) =>
        c !== claim && c.takeover.length > 0 && normalizeModel(c.write.model) === normalizeModel(claim.write.model),
    );
    if (lease)
      classified.recoveries.push({
        write: lease.write,
        lock: claim.lock,
        claim,
        timePredicates: lease.takeover,
        flaws: [],
      });
  }

  const byClaim = new Map<Claim, Recovery[]>();
  for (const r of classified.recoveries) {
    const list = byClaim.get(r.claim) ?? [];
    list.push(r);
    byClaim.set(r.claim, list);
  }
  // A claim whose holder keeps its row locked while it works, and whose every recovery skips locked rows: liveness
  // is the lock, not an age (blind-24 D24d10: `SELECT … FOR UPDATE` in the worker's transaction, a reset `WHERE id =
  // ANY(SELECT … FOR UPDATE SKIP LOCKED)`).
  const rowLocksOf = (claim: Claim): StateRead[] => {
    const recoveries = byClaim.get(claim) ?? [];
    if (recoveries.length === 0 || !recoveries.every((r) => r.write.skipsLocked === true)) return [];
    const unit = unitOf(claim.write.node);
    return mod.reads.filter(
      (r) =>
        r.locking === true &&
        normalizeModel(r.model) === normalizeModel(claim.write.model) &&
        unitOf(r.node) === unit &&
        r.node.range[0] > claim.write.node.range[1] &&
        insideTransactionCall(r.node) &&
        toBranches(r.filter).length > 0 &&
        toBranches(r.filter).every((b) => identityFields(b).length > 0),
    );
  };
  const heldUnderRowLock = (claim: Claim): boolean => rowLocksOf(claim).length > 0;
  // A holder's write made after that lock, in the transaction's callback that took it, is made while it holds.
  const fencedHolders = holderWrites.map((h) =>
    !h.fenced &&
    rowLocksOf(h.claim).some(
      (r) => enclosingFunction(r.node) === enclosingFunction(h.write.node) && r.node.range[1] <= h.write.node.range[0],
    )
      ? { ...h, fenced: true }
      : h,
  );
  // A repository module's exported finder of stuck rows, read by no write of its own: its caller recovers them.
  // The claim stamps a lease column that a lease of the module takes over once it has lapsed (`status: "running",
  // leaseExpiresAt` inserted; an expired run resumed by a version-checked write of a new lease): a dead holder's row
  // is taken by the next caller (blind-9 F407).
  const leaseTakenOver = (claim: Claim): boolean =>
    claims.some(
      (c) =>
        c !== claim &&
        c.takeover.length > 0 &&
        normalizeModel(c.write.model) === normalizeModel(claim.write.model) &&
        (c.kind === "lease"
          ? claim.write.assignments.some((a) => sameField(a.field, c.lock.field) && !clears(a))
          : // Another write takes the same hold over once it has aged (`if (age > STALE) take it`): a dead
            // holder's flag is taken over there, whichever write set it (blind-10 C8c09).
            sameField(c.lock.field, claim.lock.field) && sameValue(c.lock.value, claim.lock.value)),
    );
  const handedOut = (claim: Claim): StateRead | undefined => {
    const { field, value } = claim.lock;
    return mod.reads.find((r) => {
      if (r.locking || normalizeModel(r.model) !== normalizeModel(claim.write.model)) return false;
      // A count or an existence test of stuck rows (a dashboard, a health check) hands no rows to anyone.
      if (/count|exist|aggregate/i.test(r.operation)) return false;
      const fn = api(r.node);
      if (
        !fn ||
        !toBranches(r.filter).some(
          (b) => !isOpaque(b) && pins(b, field, value) && agePredicates(b, vocabulary).length > 0,
        )
      )
        return false;
      return !mod.writes.some((w) => enclosingFunction(w.node) === fn && w.node.range[0] > r.node.range[1]);
    });
  };
  const kv = buildKvFacts(sourceCode, accesses, vocabulary, helperOps);
  let sweeps: Recovery[] | undefined;
  const objects = accesses.filter((a): a is ObjectWrite => a.access === "object");
  /** `field` of `model` is stamped (written with a value, not cleared) by claims only, or by claims and creations. */
  const stampedOnly = (model: string, field: string, orCreated: boolean): boolean => {
    const claimWrites = new Set(claims.map((c) => c.write));
    const ownClaims = claims.filter((c) => normalizeModel(c.write.model) === normalizeModel(model));
    let stamped = false;
    for (const w of mod.writes) {
      // A write of these rows whose SET list is built at run time may stamp it too: unknown, not "only the claims".
      if (w.setsUnknown && !claimWrites.has(w) && normalizeModel(w.model) === normalizeModel(model)) return false;
      if (!w.assignments.some((a) => sameField(a.field, field) && !clears(a))) continue;
      // Stamped by a write of a model named apart (Prisma's `job` beside a raw `cw_jobs`): perhaps these rows, so
      // "only the claims stamp it" is unknown (blind-10 D8d04).
      if (normalizeModel(w.model) !== normalizeModel(model)) {
        if (!claimWrites.has(w) && ownClaims.some((c) => namedApart(w, c.write))) return false;
        continue;
      }
      if (!claimWrites.has(w) && !(orCreated && w.effect === "insert")) return false;
      stamped = true;
    }
    return stamped;
  };
  // A lock taken earlier in the write's function: an advisory lock, a key-value lock, or a claim of the module.
  const heldBefore = (w: StateWrite): boolean => {
    const fn = enclosingFunction(w.node);
    const before = (n: Node) => enclosingFunction(n) === fn && n.range[1] <= w.node.range[0];
    return (
      accesses.some((a) => a.access === "advisory" && a.fn === "lock" && before(a.node)) ||
      kv.locks.some((l) => before(l.acquire.node)) ||
      claims.some((c) => c.write !== w && before(c.write.node))
    );
  };
  return {
    kv,
    heldEffects: buildHeldEffects({
      sourceCode,
      vocabulary,
      claims,
      holderWrites: fencedHolders,
      writes: mod.writes,
      objects,
      kv,
      holding,
    }),
    writes: mod.writes,
    reads: mod.reads,
    staleScans,
    claims,
    recoveries: classified.recoveries,
    holderWrites: fencedHolders,
    untakenReleases: fencedHolders.flatMap((h) => {
      const exit = exitBeforeClaim(sourceCode, h);
      return exit ? [{ claim: h.claim, release: h.write, exit }] : [];
    }),
    rowReleases: classified.releases,
    ownedLeaseReleases: findOwnedLeaseReleases(mod.writes, claims, vocabulary),
    keyDerivedHolders: keyDerivedHolders(sourceCode, claims, vocabulary),
    stampOnlyClaims: findStampOnlyClaims(mod),
    unreadClaims: findUnreadClaims(mod, claims),
    overwritingLocks: ((claimed) => mod.writes.filter((w) => overwritesLock(mod, w, claimed, heldBefore)))(
      new Set(claims.map((c) => c.write)),
    ),
    renewals: buildRenewals(
      sourceCode,
      { kv, writes: mod.writes, claims, releases: classified.releases.map((r) => r.write) },
      shape,
      vocabulary,
    ),
    recoveriesOf: (claim) => byClaim.get(claim) ?? [],
    sweeps: () => {
      if (!sweeps) {
        // Locks this module claims itself, a lease or lock row standing for its table's rows (`cron_locks` row =
        // held); and writes its own claims already account for (a holder's release is no sweep: blind-9 C213:37).
        const own = new Set(
          claims.flatMap((c) => [
            lockKeyText(c.lock),
            ...(holdsRow(c) ? [lockKeyText({ ...c.lock, field: "row", value: { value: "held" } })] : []),
          ]),
        );
        const accounted = new Set<Node>(
          [...classified.releases, ...classified.holder, ...classified.recoveries].map((x) => x.write.node),
        );
        sweeps = buildForeignRecoveries(sourceCode, accesses, vocabulary).filter(
          (r) => !own.has(lockKeyText(r.lock)) && !accounted.has(r.write.node),
        );
      }
      return sweeps;
    },
    // A reset with no age test takes every in-progress row at once: a boot-time reset (a single instance's holders
    // are dead by then), or a sweep that conditional-recovery reports for taking live work. Neither leaves a live
    // holder a newer one to overwrite until it judges age.
    staleRowsHandedOut: handedOut,
    answeredHere: (claim) =>
      // A statement this module sends but cannot read (its text imported) may be the recovery: unknown, not "none".
      unreadStatements ||
      claim.takeover.length > 0 ||
      (byClaim.get(claim) ?? []).length > 0 ||
      handedOut(claim) !== undefined ||
      leaseTakenOver(claim) ||
      // A lock row the store itself may delete once its time has passed: unknown, not "never" (blind-10 C8c05).
      (isLockRow(claim) && (claim.write.storeExpiry?.length ?? 0) > 0) ||
      recoveredByDirective(sourceCode, claim.write.node) !== undefined,
    stampedOnlyByClaims: (model, field) => stampedOnly(model, field, false),
    stampedOnlyAtCreationOrClaim: (model, field) => stampedOnly(model, field, true),
    keptMoving: (model, claim, field) => keptMoving(mod.writes, claims, vocabulary, model, claim, field),
    boundedBelowRecovery: (claim) => boundedBelowRecovery(sourceCode, claim, byClaim.get(claim) ?? []),
    heldUnderRowLock,
    clearedOutsideClaims: (model, field) => {
      const claimWrites = new Set(claims.map((c) => c.write));
      return mod.writes.some(
        (w) =>
          !claimWrites.has(w) &&
          normalizeModel(w.model) === normalizeModel(model) &&
          w.assignments.some((a) => sameField(a.field, field) && clears(a)),
      );
    },
    changesHands: (claim) =>
      !rowPerRun(claim, claims) &&
      // A take-over that waits longer than any holder can live never meets a live one (bounded-holds.ts).
      ((claim.takeover.length > 0 && !boundedBelowRecovery(sourceCode, claim, byClaim.get(claim) ?? [])) ||
        hasTakeoverWrite(claim, mod.writes, vocabulary) ||
        handedOut(claim) !== undefined ||
        (byClaim.get(claim) ?? []).some((r) => !r.flaws.includes("missing-time") && handsBack(r, claims)) ||
        recoveredElsewhere.has(claim.write.node.loc.start.line) ||
        recoveredByDirective(sourceCode, claim.write.node) !== undefined),
  };
}

/**
 * A recovery hands its rows to a next holder when it moves them to a value some claim of the module takes rows from
 * (`SENDING` back to `PENDING`), or to a value it does not name. One that ends them (`SENDING` to `FAILED`, a
 * state no claim of the module takes from) frees the dead holder's row for nobody: a holder judged dead that was
 * alive can only overwrite that end with its own outcome, never a newer holder's work (blind-8 AD07, Bh08). One that
 * deletes the rows ends them too, unless they are lock rows, whose deletion frees the lock (blind-11 A9a01).
 */
function handsBack(r: Recovery, claims: readonly Claim[]): boolean {
  // A purge of stuck rows gives them to nobody; a stale lock row deleted frees the lock for the next taker.
  if (r.write.effect === "delete") return holdsRow(r.claim);
  const moved = r.write.assignments.find((a) => sameField(a.field, r.lock.field));
  if (!moved || moved.value.kind !== "static") return true;
  const to = moved.value.value;
  return claims.some(
    (c) =>
      normalizeModel(c.write.model) === normalizeModel(r.write.model) &&
      sameField(c.lock.field, r.lock.field) &&
      toBranches(c.write.filter).some((b) => !excludes(b, c.lock.field, to)),
  );
}

/**
 * A claim that inserts a row of its own for each run (`insert({ job_name, status: "running" })`) where no claim of the
 * module takes an existing row of that model: a recovered row is never taken again, every later run writes its own.
 * Such a row never changes hands, so its holder's late write can only touch its own record.
 */
function rowPerRun(claim: Claim, claims: readonly Claim[]): boolean {
  return (
    claim.kind === "status" &&
    claim.write.effect === "insert" &&
    !claims.some(
      (c) =>
        c.write.effect !== "insert" &&
        normalizeModel(c.write.model) === normalizeModel(claim.write.model) &&
        sameField(c.lock.field, claim.lock.field),
    )
  );
}

/**
 * `try { const lock = await find(…); if (lock.is_running) return; await claim(…); … } finally { await release(…) }`:
 * the way out taken when the row is found held, before the claim, in a `try` whose `finally` holds the holder's
 * write that frees the row. Only a way out under a test of the lock's own field counts (one taken when nobody holds
 * it frees nothing that matters).
 */
function exitBeforeClaim(sourceCode: SourceCode, h: HolderWrite): Node | undefined {
  const { claim, write } = h;
  if (h.assignment.value.kind !== "static" || sameValue(h.assignment.value.value, claim.lock.value)) return undefined;
  for (let t: Node | undefined = write.node.parent; t && !isFunction(t); t = t.parent) {
    if (t.type !== "TryStatement" || !contains(t.finalizer, write.node) || !contains(t.block, claim.write.node))
      continue;
    const exit = exitWhenHeld(sourceCode, t.block, claim.write.node, claim.lock.field);
    if (exit) return exit;
  }
  return undefined;
}

/**
 * `LockFacts.keptMoving`: the first heartbeat stamp of the model (or `field`, when it is one), by name or, for a
 * claim's rows, by what it does.
 */
function keptMoving(
  writes: readonly StateWrite[],
  claims: readonly Claim[],
  vocabulary: ResolvedVocabulary,
  model: string,
  claim?: Claim,
  field?: string,
): string | undefined {
  const m = normalizeModel(model);
  // A claim takes a lock (a lease stamping its time, this claim's own stamp): it renews nothing already held.
  const claimWrites = new Set(claims.map((c) => c.write));
  // A field named like a start time (`lockedAt`) that the claim stamps and a write of the held rows stamps again
  // is renewed, whatever its name: a heartbeat. A start time stamped once after the claim (`startedAt` when the
  // work begins) is not, since the claim never wrote it.
  const renewsClaimStamp = (field: string) =>
    claim !== undefined && claim.write.assignments.some((c) => c.value.kind === "now" && sameField(c.field, field));
  // A write of a model named apart from the claim's (Prisma's `job` beside a raw UPDATE of `cw_jobs`) that stamps
  // the claim's own stamp again may renew the same rows: whether it does is unknown, so it is not "nothing".
  const sameRows = (w: StateWrite) =>
    normalizeModel(w.model) === m ||
    (claim !== undefined &&
      namedApart(w, claim.write) &&
      w.assignments.some((a) => a.value.kind === "now" && renewsClaimStamp(a.field)));
  for (const w of writes) {
    if (claimWrites.has(w) || !sameRows(w) || (w.effect ?? "update") !== "update") continue;
    if (w.assignments.some((a) => vocabulary.isStateField(a.field) || vocabulary.isFlagField(a.field))) continue;
    const branches = toBranches(w.filter);
    // Not a write of rows in another state (a touch of PENDING rows moves nothing a holder owns).
    if (
      claim &&
      branches.every((b) =>
        b.some(
          (a) =>
            "pred" in a &&
            a.op === "eq" &&
            normalizeName(a.pred.field) === normalizeName(claim.lock.field) &&
            a.pred.values?.length === 1 &&
            !sameValue(a.pred.values[0]!, claim.lock.value),
        ),
      )
    )
      continue;
    // Holds only the claimed rows: every branch names the holder or pins the claimed value on the claimed field.
    // Stricter than renewals' fenced(), which takes any state field holding that value: here the name is not there
    // to vouch for the field (`status: "PENDING"` beside a claim of `refundStatus = PENDING` is another lifecycle).
    const held =
      claim !== undefined &&
      branches.length > 0 &&
      branches.every((b) =>
        b.some(
          (a) =>
            "pred" in a &&
            (a.op === "eq" || a.op === "in") &&
            (vocabulary.isOwnerField(a.pred.field) ||
              (normalizeName(a.pred.field) === normalizeName(claim.lock.field) &&
                (a.pred.values ?? []).some((v) => sameValue(v, claim.lock.value)))),
        ),
      );
    // A progress write (it stamps a progress time) that stamps the claim's own stamp again keeps that moving too
    // (`SET updated_at = NOW(), locked_at = NOW() WHERE id = $1` beside a claim that stamps locked_at).
    const progressWrite = w.assignments.some((a) => a.value.kind === "now" && vocabulary.isProgressTimeField(a.field));
    const stamped = w.assignments.find(
      (a) =>
        a.value.kind === "now" &&
        (field === undefined || sameField(a.field, field)) &&
        (vocabulary.isProgressTimeField(a.field) ||
          (held && (!vocabulary.isStartTimeField(a.field) || renewsClaimStamp(a.field))) ||
          // With no claim to compare (a sweep of claims made elsewhere), the field asked about moving with progress.
          (progressWrite && (renewsClaimStamp(a.field) || (claim === undefined && field !== undefined)))),
    );
    if (stamped) return stamped.field;
  }
  return undefined;
}
