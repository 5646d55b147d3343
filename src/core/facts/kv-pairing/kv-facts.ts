/**
 * Classify and pair key-value ops, by key shape: an NX acquire (`SET … NX`, `SETNX`) is a lock; an EXPIRE of
 * the same key gives it a TTL after the fact (sent together only inside one MULTI/pipeline); a DEL, UNLINK or
 * deleting script of the same key is its release, owner-checked or not; a plain SET of the same key after a JS
 * check of its value is a take-over.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import { type KvOp, type LibraryLockOp, type Node, type StateAccess, helperOrigin } from "../../model/accesses.js";
import type { KvFacts, KvLock, KvRelease, KvTakeover } from "../../model/kv-locks.js";
import { type ResolvedVocabulary, hasLockWord } from "../../model/settings.js";
import { sameKey } from "../../reading/keys.js";
import { functionName, unitOf } from "../../reading/units.js";
import { evaluate } from "../../reading/values.js";
import { isMarker, sameTarget, namedLikeLock, releasesKey } from "./keys.js";
import {
  checksHolder,
  tokenReadFromKey,
  comparedGet,
  comparedGetIn,
  checkedSet,
  absenceCheckedSet,
} from "./value-checks.js";
import { findSemaphores } from "./semaphores.js";
import { findUnrefusableLocks } from "./unrefusable.js";
import { exitSkipping } from "./skipped-expiry.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** An expiry this long outlasts any work held under a lock (a nightly job's lock of 24 h included). */
const OUTLASTS_WORK_MS = 24 * 60 * 60 * 1000;

/** A lifecycle hook that runs before a stage starts (`beforePerform`, `beforeEnqueue`, `before_run`). */
const BEFORE_HOOK = /^before(?:[A-Z_]|$)/;

/**
 * A key set in one lifecycle hook and deleted in the `before…` hook of a later stage (node-resque's queue lock: set
 * in `beforeEnqueue`, taken over by timestamp when stale, deleted in `beforePerform`) is cleared as the work starts
 * by whoever runs that stage, not by its holder once its work is done: the delete hands the key off, it is no
 * release to ask Q3 of (shared corpus b09). The key is still a lock for its acquire and its take-over. A key held
 * from `beforePerform` to `afterPerform` is released by its holder.
 */
function handedOff(acquire: KvOp, release: KvOp): boolean {
  if (acquire.via || release.via) return false;
  const from = unitOf(acquire.node);
  const to = unitOf(release.node);
  const name = (fn: typeof from) => (fn ? functionName(fn) : undefined) ?? "";
  return (
    from !== to &&
    to?.parent?.type === "MethodDefinition" &&
    /^(?:before|after)[A-Z_]/.test(name(from)) &&
    BEFORE_HOOK.test(name(to))
  );
}

/** A statement inside the `finally` of a try: runs on every path the process survives. */
function inFinally(node: Node): boolean {
  let child: Node = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    if (p.type === "TryStatement" && p.finalizer === child) return true;
    if (
      p.type === "CallExpression" &&
      p.arguments[0] === child &&
      p.callee.type === "MemberExpression" &&
      !p.callee.computed &&
      p.callee.property.type === "Identifier" &&
      p.callee.property.name === "finally"
    )
      return true;
    // `await using _ = defer(async () => del(key))`: a disposer runs when the scope is left, on every path.
    if (
      p.type === "CallExpression" &&
      p.arguments.includes(child as TSESTree.CallExpressionArgument) &&
      (child.type === "ArrowFunctionExpression" || child.type === "FunctionExpression") &&
      p.parent?.type === "VariableDeclarator" &&
      p.parent.init === p &&
      (p.parent.parent.kind === "using" || p.parent.parent.kind === "await using")
    )
      return true;
  }
  return false;
}

/**
 * A GETSET whose old value the code reads (a callback that takes it, or a result that is not thrown away): the
 * old SETNX recipe's safe take-over, where only the caller that swapped out the stale value goes on.
 */
function swapChecked(op: KvOp): boolean {
  if (!op.swap || op.node.type !== "CallExpression") return false;
  const last = op.node.arguments[op.node.arguments.length - 1];
  if (last && (last.type === "FunctionExpression" || last.type === "ArrowFunctionExpression"))
    return last.params.length >= 2;
  let p: Node | undefined = op.node.parent;
  while (p && (p.type === "AwaitExpression" || p.type === "TSAsExpression")) p = p.parent;
  return p !== undefined && p.type !== "ExpressionStatement";
}

const NO_HELPERS = { locks: [], releases: [] } as const;

/**
 * `instances` are the ops the module's calls of its own helpers make (src/core/summaries/): paired like any op, so a
 * caller's acquire and release through helpers make one lock. A flaw an instance shares with the helper's own op (a
 * plain DEL, a missing TTL) is reported once, at the helper; the instance is kept in `viaHelpers` for what only the
 * caller shows. An instance the helper's module cannot judge is reported at the call: a release whose helper
 * pairs with no acquire there (the caller acquires directly), and every call of another module's helper (the audit).
 */
export function buildKvFacts(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  vocabulary: ResolvedVocabulary,
  instances: readonly KvOp[] = [],
): KvFacts {
  const direct = accesses.filter((a): a is KvOp => a.access === "kv");
  const ops = [...direct, ...instances];
  const libraryLocks = accesses.filter((a): a is LibraryLockOp => a.access === "library");
  const nxAcquires = ops.filter((o) => o.nx && (o.command === "set" || o.command === "setnx"));
  const gets = new Map<Node, KvOp>();
  for (const o of direct) if (o.command === "get") gets.set(o.node, o);
  // A set-if-absent written in JavaScript: a plain SET of a key no NX takes, after a check that turns away a holder
  // other than the one it stores (`if (prev && prev !== owner) throw …; await cache.set(key, owner)`).
  // Or one taken where a GET found the key empty, of a key the module releases only after comparing its holder.
  const checked = new Map<KvOp, KvOp>();
  if (gets.size > 0) {
    const dels = direct.filter((o) => o.command === "del" || o.command === "script");
    for (const o of direct) {
      if (o.command !== "set" || o.nx || nxAcquires.some((a) => sameTarget(a, o))) continue;
      const get =
        checkedSet(sourceCode, o, gets, vocabulary) ?? absenceCheckedSet(sourceCode, o, gets, dels, vocabulary);
      if (get) checked.set(o, get);
    }
  }
  const acquires = [...nxAcquires, ...checked.keys()];
  const semaphores = findSemaphores(sourceCode, direct);
  const unrefusable = findUnrefusableLocks(sourceCode, direct);
  if (acquires.length === 0)
    return {
      ops: direct,
      locks: [],
      releases: [],
      takeovers: [],
      libraryLocks,
      viaHelpers: NO_HELPERS,
      semaphores,
      unrefusable,
    };

  const deletes = ops.filter(
    (o) =>
      o.command === "del" || (o.command === "script" && (o.script === "compare-and-delete" || o.script === "delete")),
  );
  const byAcquire = new Map<KvOp, KvLock>();
  // Helpers' own acquires first: an instance's TTL is its helper's (an EXPIRE the helper sends after its SETNX).
  acquires.sort((a, b) => Number(a.via !== undefined) - Number(b.via !== undefined));
  let locks: KvLock[] = acquires.map((acquire) => {
    const released = deletes.filter((d) => releasesKey(sourceCode, d, acquire));
    // Named like a lock, released on every path (finally), or taken over when stale: used as a lock.
    // Through another module's helper, behaviour decides: this module releases the key (a set-if-absent never
    // released after the work is a marker, whatever the helper is called), or names the key like a lock.
    const imported = acquire.via !== undefined && !acquire.via.template;
    const lockLike =
      !isMarker(acquire) &&
      (imported
        ? released.length > 0 || hasLockWord([acquire.key.text, acquire.key.name ?? ""].join(" "))
        : namedLikeLock(acquire) ||
          released.some(
            (d) => namedLikeLock(d) || inFinally(d.node) || checksHolder(sourceCode, d, acquire, gets, vocabulary),
          ) ||
          ops.some(
            (o) =>
              o.command === "set" &&
              !o.nx &&
              o !== acquire &&
              sameTarget(o, acquire) &&
              comparedGet(sourceCode, o, gets, vocabulary),
          ));
    let lock: KvLock;
    const helpers = acquire.via?.template ? byAcquire.get(helperOrigin(acquire)) : undefined;
    if (helpers) lock = { acquire, ttl: helpers.ttl, lockLike, ...(helpers.expire ? { expire: helpers.expire } : {}) };
    else if (acquire.via?.separateExpire) lock = { acquire, ttl: "separate", lockLike };
    else if (acquire.ttl !== "absent") lock = { acquire, ttl: acquire.ttl, lockLike };
    else {
      // The EXPIRE that follows in the same function: another function's EXPIRE does not expire this acquire.
      const unit = unitOf(acquire.node);
      const expire = ops.find(
        (o) =>
          o.command === "expire" &&
          sameTarget(o, acquire) &&
          unitOf(o.node) === unit &&
          o.node.range[1] > acquire.node.range[1],
      );
      if (!expire) lock = { acquire, ttl: "absent", lockLike };
      else {
        const together = expire.batch !== undefined && expire.batch === acquire.batch;
        lock = { acquire, ttl: together ? "present" : "separate", expire, lockLike };
        // A way out, once held, that neither expires nor releases the key: set forever without a crash.
        const skipped = together
          ? undefined
          : exitSkipping(sourceCode, acquire, [expire.node, ...released.map((d) => d.node)]);
        if (skipped) lock = { ...lock, expireSkippedBy: skipped };
      }
    }
    // A TTL of a day or more does not lapse under the work a lock guards: nobody else takes the key meanwhile.
    if (lock.ttl === "present" && (acquire.ttlMs ?? 0) >= OUTLASTS_WORK_MS) lock = { ...lock, outlastsWork: true };
    const checkedBy = checked.get(acquire);
    if (checkedBy) lock = { ...lock, checkedBy };
    // A processed marker written over the claim (`set(key, "done", { ex: week })` after `set(key, "processing", { nx })`).
    const held = acquire.constantValue;
    const endedBy =
      held === undefined
        ? []
        : ops.filter(
            (o) =>
              o.command === "set" &&
              !o.nx &&
              o !== acquire &&
              sameTarget(o, acquire) &&
              o.constantValue !== undefined &&
              o.constantValue.value !== held.value,
          );
    if (endedBy.length > 0) lock = { ...lock, endedBy };
    byAcquire.set(acquire, lock);
    return lock;
  });
  // A helper's acquire is a lock when a caller uses it as one (releases it in a finally), and the other way round.
  const lockLikeRoots = new Set(locks.filter((l) => l.lockLike).map((l) => helperOrigin(l.acquire)));
  locks = locks.map((l) => {
    const root = helperOrigin(l.acquire);
    const lockLike = l.lockLike || lockLikeRoots.has(root);
    const repl = lockLike === l.lockLike ? l : { ...l, lockLike };
    byAcquire.set(l.acquire, repl);
    return repl;
  });

  // The lock a release or take-over belongs to: the one its own function acquires, if any (a caller's acquire
  // through a helper, rather than the helper's own `lock:*`), else the first of the module.
  const lockFor = (op: KvOp) => {
    const matching = locks.filter(
      (l) =>
        l.lockLike &&
        l.acquire !== op &&
        (op.command === "del" || op.command === "script"
          ? releasesKey(sourceCode, op, l.acquire)
          : sameTarget(l.acquire, op)),
    );
    const unit = unitOf(op.node);
    return matching.find((l) => unitOf(l.acquire.node) === unit) ?? matching[0];
  };
  const watched = direct.filter((o) => o.command === "watch");

  /** How an op deletes, read where it is written (an instance is classified as its helper's op). */
  const kindOf = (op: KvOp): { kind: KvRelease["kind"]; get?: KvOp } => {
    const own = helperOrigin(op);
    // A helper of another module: as that module classified it.
    if (own.via) return { kind: own.via.release ?? "plain" };
    if (own.script === "compare-and-delete") {
      // The token is what the key holds right now (`const v = await redis.get(key)`): compared with itself.
      const read = tokenReadFromKey(sourceCode, own, gets);
      return read ? { kind: "self-compared", get: read } : { kind: "owner-checked" };
    }
    // WATCH key; GET; MULTI DEL EXEC is an optimistic owner-checked delete.
    if (own.batch && watched.some((w) => sameKey(w.key, own.key))) return { kind: "owner-checked" };
    const get = own.command === "del" ? comparedGet(sourceCode, own, gets, vocabulary) : undefined;
    return get ? { kind: "get-compare", get } : { kind: "plain" };
  };

  const all: KvRelease[] = [];
  for (const op of deletes) {
    const lock = lockFor(op);
    // A delete by the next stage's `before…` hook hands the key off as the work starts: no holder's release.
    if (!lock || handedOff(lock.acquire, op)) continue;
    let { kind, get } = kindOf(op);
    // The GET the acquire itself was checked against (a release in a closure made after it) checks nothing at the
    // release.
    if (kind === "get-compare" && get && lock.checkedBy === get) ({ kind, get } = { kind: "plain", get: undefined });
    // The owner check compares with what this call hands it: the constant every holder stores checks nobody.
    const shared =
      kind === "owner-checked" &&
      lock.acquire.constantValue !== undefined &&
      (op.constantValue ?? (op.valueNode ? evaluate(sourceCode, op.valueNode) : undefined))?.value ===
        lock.acquire.constantValue.value;
    all.push({ op, lock, kind: shared ? "shared-token" : kind, ...(get ? { get } : {}) });
  }

  // What the helper reports itself: its own acquire is a lock of this module (its TTL is judged there), its own
  // release pairs with an acquire (its owner check is judged there).
  const ownLocks = new Set(locks.filter((l) => !l.acquire.via?.template).map((l) => l.acquire));
  const ownReleases = new Set(all.filter((r) => !r.op.via?.template).map((r) => r.op));
  const shownAtHelper = (op: KvOp, own: ReadonlySet<KvOp>) =>
    op.via?.template !== undefined && own.has(helperOrigin(op));
  const hiddenLock = (l: KvLock) => shownAtHelper(l.acquire, ownLocks);
  const viaHelpers = {
    locks: locks.filter(hiddenLock),
    releases: all.filter((r) => shownAtHelper(r.op, ownReleases)),
  };
  const releases = all.filter((r) => !viaHelpers.releases.includes(r));

  const takeovers: KvTakeover[] = [];
  for (const op of direct) {
    if (op.command !== "set" || op.nx) continue;
    const own = checked.has(op) ? byAcquire.get(op) : undefined;
    if (checked.has(op)) {
      if (own?.lockLike) takeovers.push({ op, lock: own, get: checked.get(op)!, acquire: true });
      continue;
    }
    const lock = lockFor(op);
    if (!lock) continue;
    const compared = comparedGetIn(sourceCode, op, gets, vocabulary);
    if (compared)
      takeovers.push({
        op,
        lock,
        get: compared.get,
        ...(compared.byTime ? { byTime: true } : {}),
        ...(swapChecked(op) ? { swapChecked: true } : {}),
      });
  }
  return {
    ops: direct,
    locks: locks.filter((l) => !hiddenLock(l)),
    releases,
    takeovers,
    libraryLocks,
    viaHelpers,
    semaphores,
    unrefusable,
  };
}
