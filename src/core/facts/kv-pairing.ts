/**
 * Classify and pair key-value ops, by key shape: an NX acquire (`SET … NX`, `SETNX`) is a lock; an EXPIRE of
 * the same key gives it a TTL after the fact (sent together only inside one MULTI/pipeline); a DEL, UNLINK or
 * deleting script of the same key is its release, owner-checked or not; a plain SET of the same key after a JS
 * check of its value is a take-over.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvOp, LibraryLockOp, Node, StateAccess } from "../model/accesses.js";
import type { KvFacts, KvLock, KvRelease, KvSemaphore, KvTakeover } from "../model/kv-locks.js";
import { helperOrigin } from "../model/accesses.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { hasLockWord, namesALock } from "../model/settings.js";
import { callbackArguments, returnedValues } from "../reading/calls.js";
import { guardsOf } from "../reading/guards.js";
import { sameKey } from "../reading/keys.js";
import { functionName, unitOf } from "../reading/units.js";

/** An expiry this long outlasts any work held under a lock (a nightly job's lock of 24 h included). */
const OUTLASTS_WORK_MS = 24 * 60 * 60 * 1000;
import {
  callbackValueOf,
  evaluate,
  fieldInit,
  findVariable,
  getConstInit,
  thenParameterOf,
  unwrap,
} from "../reading/values.js";
import { isClockReading, readsClock } from "../reading/clock.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Words of keys that are markers, not locks, matched as whole words of the key (`rate:ip`, `rateLimit`, `dedupe_key`),
 * never inside another word: `lock:migrate` and `lock:generate` are locks.
 */
const MARKER_WORDS =
  /^(?:idempot\w*|dedup\w*|cache[sd]?|rate|ratelimit\w*|throttle\w*|limit|limits|limiter|seen|sessions?|counters?|visited|debounce\w*|nonces?)$/;

function keyWords(text: string): string[] {
  return text
    .split(/[^A-Za-z]+|(?<=[a-z])(?=[A-Z])/)
    .filter((w) => w.length > 0)
    .map((w) => w.toLowerCase());
}

/**
 * NX is also how idempotency keys, caches, throttles and nonces are written. A key is a lock when it, the
 * variable holding it, or the function acquiring or releasing it is named like one (`lock:*`, `acquireLock`,
 * `unlock`), and it is not named like one of those markers.
 */
function namedLikeLock(op: KvOp): boolean {
  const unit = unitOf(op.node);
  // A method of a class named like a lock (`PayLock#take`) says lock as its name does.
  const owner =
    unit?.parent?.type === "MethodDefinition" && unit.parent.parent.parent.type === "ClassDeclaration"
      ? unit.parent.parent.parent.id?.name
      : undefined;
  return (
    hasLockWord([op.key.text, op.key.name ?? ""].join(" ")) ||
    hasLockWord(unit ? (functionName(unit) ?? "") : "", true) ||
    hasLockWord(owner ?? "", true) ||
    hasLockWord(op.via?.helper.replace(/^.*\./, "") ?? "", true)
  );
}

function isMarker(op: KvOp): boolean {
  // A key that ends in a lock word (or opens with a lock namespace) names the lock, whatever it guards:
  // `matrix:preload-cache:lock` is the lock of a cache preload, not a cache entry (corpus Br02).
  if (namesALock(op.key.text) || (op.key.name !== undefined && namesALock(op.key.name))) return false;
  return keyWords(op.key.text + " " + (op.key.name ?? "") + " " + (op.via?.helper ?? "")).some((w) =>
    MARKER_WORDS.test(w),
  );
}

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

/**
 * Counting semaphores (`KvSemaphore`): an INCR whose result a comparison bounds (`const n = await redis.incr(key);
 * if (n > max) …`, or the call itself in the test), given back by a DECR of the same key in another function (the
 * release; a DECR in the acquiring function is the roll-back of a refused slot).
 */
function findSemaphores(sourceCode: SourceCode, ops: readonly KvOp[]): KvSemaphore[] {
  const out: KvSemaphore[] = [];
  for (const acquire of ops) {
    if (acquire.command !== "incr" || !bounded(sourceCode, acquire.node)) continue;
    const unit = unitOf(acquire.node);
    // The counter itself, not a key its pattern overlaps (`lock:*` is not `lock:*:count`).
    const counter = (o: KvOp) => o.client === acquire.client && o.key.text === acquire.key.text;
    const releases = ops.filter((o) => o.command === "decr" && counter(o) && unitOf(o.node) !== unit);
    if (releases.length === 0) continue;
    const expire = ops.find((o) => o.command === "expire" && counter(o));
    out.push({ acquire, releases, ...(expire ? { expire } : {}) });
  }
  return out;
}

/** The value of a call is compared with a bound: in a relational test itself, or through the const that holds it. */
function bounded(sourceCode: SourceCode, call: Node): boolean {
  let n: Node = call;
  if (n.parent?.type === "AwaitExpression") n = n.parent;
  const relational = (p: Node | undefined) =>
    p?.type === "BinaryExpression" && ["<", "<=", ">", ">="].includes(p.operator);
  if (relational(n.parent)) return true;
  const decl = n.parent;
  if (decl?.type !== "VariableDeclarator" || decl.init !== n || decl.id.type !== "Identifier") return false;
  const variable = findVariable(sourceCode, decl.id);
  return (variable?.references ?? []).some((r) => !r.isWrite() && relational(r.identifier.parent));
}

/** The same key on the same client (`redis` and `this.redis` are one; `redis` and a Map are not). */
function sameTarget(a: KvOp, b: KvOp): boolean {
  return a.client === b.client && sameKey(a.key, b.key);
}

/** The key is exactly a parameter of the function the op is written in (`del(key)` in `deleteKey(key)`). */
function keyIsParameter(sourceCode: SourceCode, op: KvOp): boolean {
  const n = unwrap(op.keyNode);
  if (n.type !== "Identifier") return false;
  const def = findVariable(sourceCode, n)?.defs[0];
  return def?.type === "Parameter" && def.node === unitOf(op.node);
}

/**
 * A delete releases an acquire of the same key shape, except where both keys are only their own functions'
 * parameters (`acquire(key)` and a generic `deleteKey(key)` of one service): the shapes are two unrelated values,
 * and the delete is the lock's release only when its function is named like one (`releaseLock(key)`, `unlock`).
 */
function releasesKey(sourceCode: SourceCode, del: KvOp, acquire: KvOp): boolean {
  if (!sameTarget(del, acquire)) return false;
  const unit = unitOf(del.node);
  if (
    del.via ||
    acquire.via ||
    unit === unitOf(acquire.node) ||
    !keyIsParameter(sourceCode, del) ||
    !keyIsParameter(sourceCode, acquire)
  )
    return true;
  return hasLockWord(unit ? (functionName(unit) ?? "") : "", true);
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

/** The GET whose result an expression is: the call awaited in place, or a const holding it. */
function getRead(sourceCode: SourceCode, node: Node, gets: Map<Node, KvOp>): KvOp | undefined {
  let u = unwrap(node);
  if (u.type === "Identifier") {
    const init = getConstInit(sourceCode, u);
    if (!init || init.type === "TSEnumDeclaration") return undefined;
    u = unwrap(init);
  }
  if (u.type === "AwaitExpression") u = unwrap(u.argument);
  return gets.get(u);
}

/** The GET of the same key, on the same client, whose result a compare-and-delete is handed as its token. */
function tokenReadFromKey(sourceCode: SourceCode, op: KvOp, gets: Map<Node, KvOp>): KvOp | undefined {
  const token = op.valueNode && unwrap(op.valueNode);
  if (token?.type !== "Identifier") return undefined;
  const get = getRead(sourceCode, token, gets);
  return get && sameTarget(get, op) ? get : undefined;
}

/** The GET (of the same key) whose result a JS check on the way to `op` compares. */
export function comparedGet(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): KvOp | undefined {
  return comparedGetIn(sourceCode, op, gets, vocabulary)?.get;
}

/**
 * The GET whose value a JS check on the way to `op` compares, followed through the consts derived from it
 * (`parseInt(v)`, `Number(v)`, `v ? parseInt(v) : 0`); `byTime` when the check also reads the clock (`now <= until`,
 * through consts too): the value is an instant, and the check asks whether it has passed.
 */
function comparedGetIn(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
  stored?: string,
): { get: KvOp; byTime: boolean; withStored: boolean } | undefined {
  let first: { get: KvOp; byTime: boolean; withStored: boolean } | undefined;
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    let found: KvOp | undefined;
    let byTime = false;
    // `stored`: the text of the value the acquire stores; a test that compares something with it (`id === this.id`).
    let withStored = false;
    const seen = new Set<Node>();
    const visit = (n: Node): void => {
      if (seen.has(n)) return;
      seen.add(n);
      const u = unwrap(n);
      if (
        stored !== undefined &&
        u.type === "BinaryExpression" &&
        /^[!=]==?$/.test(u.operator) &&
        u.left.type !== "PrivateIdentifier" &&
        (sourceCode.getText(unwrap(u.left)) === stored || sourceCode.getText(unwrap(u.right)) === stored)
      )
        withStored = true;
      if (isClockReading(u)) byTime = true;
      const direct = gets.get(u.type === "AwaitExpression" ? unwrap(u.argument) : u);
      if (direct && sameTarget(direct, op)) found = direct;
      // A check through a helper of the module: `if (await this.isLeader())` with `return current === this.id`.
      if (u.type === "CallExpression" && !direct) for (const r of returnedValues(sourceCode, u)) visit(r);
      if (u.type === "Identifier") {
        // this.isLeader(function (err, isLeader) { if (isLeader) … }) with `done(null, id === this.id)` in it
        for (const a of callbackArguments(sourceCode, u)) visit(a);
        // redis.get(key).then((value) => { if (value === token) … })
        const param = thenParameterOf(sourceCode, u);
        const viaThen = param && gets.get(param);
        if (viaThen && sameTarget(viaThen, op)) found = viaThen;
        // redis.get(key, function (err, value) { if (now < parseInt(value)) return; … })
        const called = callbackValueOf(sourceCode, u);
        const viaCallback = called && gets.get(called);
        if (viaCallback && sameTarget(viaCallback, op)) found = viaCallback;
        let init = getConstInit(sourceCode, u);
        if (init) {
          init = unwrap(init);
          if (init.type === "AwaitExpression") init = unwrap(init.argument);
          const get = gets.get(init);
          if (get && sameTarget(get, op)) found = get;
          // A const derived from the value (`parseInt(v)`, `v ? Number(v) : 0`) or from the clock.
          else if (init.type !== "CallExpression" || isDerivation(init)) visit(init);
          else if (readsClock(sourceCode, init)) byTime = true;
        }
      }
      for (const key of [
        "left",
        "right",
        "argument",
        "test",
        "consequent",
        "alternate",
        "expressions",
        "arguments",
        "object",
        "callee",
      ] as const) {
        const child = (u as unknown as Record<string, unknown>)[key];
        if (Array.isArray(child)) child.forEach((c) => c && typeof c === "object" && visit(c as Node));
        else if (child && typeof child === "object" && "type" in child) visit(child as Node);
      }
    };
    visit(guard.test);
    // Every test on the way counts: `if (!value) return; if (now < parseInt(value)) return;` judges the instant in
    // the second.
    if (found && (!first || found === first.get))
      first = {
        get: found,
        byTime: (first?.byTime ?? false) || byTime,
        withStored: (first?.withStored ?? false) || withStored,
      };
  }
  return first;
}

/**
 * A release that checks who holds the key is a lock's release (only a lock has an owner): the value read from the key
 * compared first with the very value the acquire stored (`if (id === this.id) del`, also inside a helper of the module
 * the test calls), or a compare-and-delete script handed that value. A script or a test that compares the value with
 * anything else (a `pending:` prefix, a state) checks a state, not a holder.
 */
function checksHolder(
  sourceCode: SourceCode,
  del: KvOp,
  acquire: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): boolean {
  const stored =
    acquire.valueNode && !acquire.constantValue ? sourceCode.getText(unwrap(acquire.valueNode)) : undefined;
  if (stored === undefined) return false;
  if (del.command === "script")
    return (
      del.script === "compare-and-delete" &&
      del.valueNode !== undefined &&
      sourceCode.getText(unwrap(del.valueNode)) === stored
    );
  return comparedGetIn(sourceCode, del, gets, vocabulary, stored)?.withStored === true;
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

/** A call that only converts or rounds its argument: `parseInt(v)`, `Number(v)`, `Math.round(t / 1000)`, `d.getTime()`. */
function isDerivation(call: Node): boolean {
  if (call.type !== "CallExpression") return false;
  const c = unwrap(call.callee);
  if (c.type === "Identifier") return /^(parseInt|parseFloat|Number)$/.test(c.name);
  if (c.type !== "MemberExpression" || c.computed || c.property.type !== "Identifier") return false;
  const o = unwrap(c.object);
  if (o.type === "Identifier" && (o.name === "Math" || o.name === "Number")) return true;
  return /^(getTime|valueOf)$/.test(c.property.name);
}

const NO_HELPERS = { locks: [], releases: [] } as const;

const COLLECTIONS = /^(Map|WeakMap|Set|WeakSet|URLSearchParams|Headers|FormData)$/;

/** The receiver is a JavaScript collection the module builds (`const seen = new Map()`, `private byId = new Map()`). */
function builtInCollection(sourceCode: SourceCode, call: Node): boolean {
  if (call.type !== "CallExpression") return false;
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression") return false;
  const receiver = unwrap(callee.object);
  let init: Node | undefined;
  if (receiver.type === "Identifier") {
    const found = getConstInit(sourceCode, receiver);
    init = found && found.type !== "TSEnumDeclaration" ? found : undefined;
  } else if (receiver.type === "MemberExpression" && unwrap(receiver.object).type === "ThisExpression") {
    init = fieldInit(receiver);
  }
  const n = init && unwrap(init);
  return n?.type === "NewExpression" && n.callee.type === "Identifier" && COLLECTIONS.test(n.callee.name);
}

/**
 * The GET a plain SET is checked against as an acquire: a test before it compares the key's value (or a const
 * derived from it) with the very value the SET stores, and turns the caller away on a mismatch. A cache filled on
 * a miss (`if (cached) return cached`) compares nothing with what it stores, and is not one.
 */
function checkedSet(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): KvOp | undefined {
  if (builtInCollection(sourceCode, op.node)) return undefined;
  const value = op.valueNode && unwrap(op.valueNode);
  if (!value || (value.type !== "Identifier" && value.type !== "MemberExpression")) return undefined;
  const stored = sourceCode.getText(value);
  const get = comparedGet(sourceCode, op, gets, vocabulary);
  if (!get) return undefined;
  const readsGet = (side: Node): boolean => getRead(sourceCode, side, gets) === get;
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    let compares = false;
    const visit = (n: Node): void => {
      const u = unwrap(n);
      if (
        u.type === "BinaryExpression" &&
        /^[!=]==?$/.test(u.operator) &&
        u.left.type !== "PrivateIdentifier" &&
        ((sourceCode.getText(unwrap(u.left)) === stored && readsGet(u.right)) ||
          (sourceCode.getText(unwrap(u.right)) === stored && readsGet(u.left)))
      )
        compares = true;
      if (u.type === "LogicalExpression") {
        visit(u.left);
        visit(u.right);
      }
      if (u.type === "UnaryExpression") visit(u.argument);
    };
    visit(guard.test);
    if (compares) return get;
  }
  return undefined;
}

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
  const checked = new Map<KvOp, KvOp>();
  if (gets.size > 0) {
    for (const o of direct) {
      if (o.command !== "set" || o.nx || nxAcquires.some((a) => sameTarget(a, o))) continue;
      const get = checkedSet(sourceCode, o, gets, vocabulary);
      if (get) checked.set(o, get);
    }
  }
  const acquires = [...nxAcquires, ...checked.keys()];
  const semaphores = findSemaphores(sourceCode, direct);
  if (acquires.length === 0)
    return { ops: direct, locks: [], releases: [], takeovers: [], libraryLocks, viaHelpers: NO_HELPERS, semaphores };

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
  };
}
