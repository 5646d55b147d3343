/**
 * Classify and pair key-value ops, by key shape: an NX acquire (`SET … NX`, `SETNX`) is a lock; an EXPIRE of
 * the same key gives it a TTL after the fact (sent together only inside one MULTI/pipeline); a DEL, UNLINK or
 * deleting script of the same key is its release, owner-checked or not; a plain SET of the same key after a JS
 * check of its value is a take-over.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KvFacts, KvLock, KvOp, KvRelease, KvTakeover, LibraryLockOp, Node, StateAccess } from "../model/model.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { hasLockWord } from "../model/settings.js";
import { guardsOf } from "../reading/guards.js";
import { sameKey } from "../reading/keys.js";
import { functionName, unitOf } from "../reading/units.js";
import { getConstInit, thenParameterOf, unwrap } from "../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

const MARKER_WORDS = /idempot|dedup|cache|rate|throttle|limit|seen|session|counter|visited|debounce|nonce/i;

/**
 * NX is also how idempotency keys, caches, throttles and nonces are written. A key is a lock when it, the
 * variable holding it, or the function acquiring or releasing it is named like one (`lock:*`, `acquireLock`,
 * `unlock`), and it is not named like one of those markers.
 */
function namedLikeLock(op: KvOp): boolean {
  const unit = unitOf(op.node);
  return hasLockWord([op.key.text, op.key.name ?? ""].join(" ")) || hasLockWord(unit ? functionName(unit) ?? "" : "", true);
}

function isMarker(op: KvOp): boolean {
  return MARKER_WORDS.test(op.key.text + " " + (op.key.name ?? ""));
}

/** The same key on the same client (`redis` and `this.redis` are one; `redis` and a Map are not). */
function sameTarget(a: KvOp, b: KvOp): boolean {
  return a.client === b.client && sameKey(a.key, b.key);
}

/** A statement inside the `finally` of a try: runs on every path the process survives. */
function inFinally(node: Node): boolean {
  let child: Node = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    if (p.type === "TryStatement" && p.finalizer === child) return true;
    if (p.type === "CallExpression" && p.arguments[0] === child && p.callee.type === "MemberExpression" &&
      !p.callee.computed && p.callee.property.type === "Identifier" && p.callee.property.name === "finally") return true;
  }
  return false;
}

/** The GET (of the same key) whose result a JS check on the way to `op` compares. */
export function comparedGet(sourceCode: SourceCode, op: KvOp, gets: Map<Node, KvOp>, vocabulary: ResolvedVocabulary): KvOp | undefined {
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    let found: KvOp | undefined;
    const visit = (n: Node): void => {
      if (found) return;
      const u = unwrap(n);
      const direct = gets.get(u.type === "AwaitExpression" ? unwrap(u.argument) : u);
      if (direct && sameTarget(direct, op)) found = direct;
      if (u.type === "Identifier") {
        // redis.get(key).then((value) => { if (value === token) … })
        const param = thenParameterOf(sourceCode, u);
        const viaThen = param && gets.get(param);
        if (viaThen && sameTarget(viaThen, op)) found = viaThen;
        let init = getConstInit(sourceCode, u);
        if (init) {
          init = unwrap(init);
          if (init.type === "AwaitExpression") init = unwrap(init.argument);
          const get = gets.get(init);
          if (get && sameTarget(get, op)) found = get;
        }
      }
      for (const key of ["left", "right", "argument", "test", "expressions", "arguments", "object"] as const) {
        const child = (u as unknown as Record<string, unknown>)[key];
        if (Array.isArray(child)) child.forEach((c) => c && typeof c === "object" && visit(c as Node));
        else if (child && typeof child === "object" && "type" in child) visit(child as Node);
      }
    };
    visit(guard.test);
    if (found) return found;
  }
  return undefined;
}

export function buildKvFacts(sourceCode: SourceCode, accesses: readonly StateAccess[], vocabulary: ResolvedVocabulary): KvFacts {
  const ops = accesses.filter((a): a is KvOp => a.access === "kv");
  const libraryLocks = accesses.filter((a): a is LibraryLockOp => a.access === "library");
  const acquires = ops.filter((o) => o.nx && (o.command === "set" || o.command === "setnx"));
  if (acquires.length === 0) return { ops, locks: [], releases: [], takeovers: [], libraryLocks };

  const deletes = ops.filter((o) => o.command === "del" || (o.command === "script" && (o.script === "compare-and-delete" || o.script === "delete")));
  const gets = new Map<Node, KvOp>();
  for (const o of ops) if (o.command === "get") gets.set(o.node, o);
  const locks: KvLock[] = acquires.map((acquire) => {
    const released = deletes.filter((d) => sameTarget(d, acquire));
    // Named like a lock, released on every path (finally), or taken over when stale: used as a lock.
    const lockLike = !isMarker(acquire) && (
      namedLikeLock(acquire) || released.some((d) => namedLikeLock(d) || inFinally(d.node)) ||
      ops.some((o) => o.command === "set" && !o.nx && sameTarget(o, acquire) && comparedGet(sourceCode, o, gets, vocabulary)));
    if (acquire.ttl !== "absent") return { acquire, ttl: acquire.ttl, lockLike };
    // The EXPIRE that follows in the same function: another function's EXPIRE does not expire this acquire.
    const unit = unitOf(acquire.node);
    const expire = ops.find((o) => o.command === "expire" && sameTarget(o, acquire) && unitOf(o.node) === unit &&
      o.node.range[1] > acquire.node.range[1]);
    if (!expire) return { acquire, ttl: "absent", lockLike };
    const together = expire.batch !== undefined && expire.batch === acquire.batch;
    return { acquire, ttl: together ? "present" : "separate", expire, lockLike };
  });

  const lockFor = (op: KvOp) => locks.find((l) => l.lockLike && l.acquire !== op && sameTarget(l.acquire, op));
  const watched = ops.filter((o) => o.command === "watch");

  const releases: KvRelease[] = [];
  for (const op of deletes) {
    const lock = lockFor(op);
    if (!lock) continue;
    if (op.script === "compare-and-delete") {
      releases.push({ op, lock, kind: "owner-checked" });
      continue;
    }
    // WATCH key; GET; MULTI DEL EXEC is an optimistic owner-checked delete.
    if (op.batch && watched.some((w) => sameKey(w.key, op.key))) {
      releases.push({ op, lock, kind: "owner-checked" });
      continue;
    }
    const get = op.command === "del" ? comparedGet(sourceCode, op, gets, vocabulary) : undefined;
    releases.push(get ? { op, lock, kind: "get-compare", get } : { op, lock, kind: "plain" });
  }

  const takeovers: KvTakeover[] = [];
  for (const op of ops) {
    if (op.command !== "set" || op.nx) continue;
    const lock = lockFor(op);
    if (!lock) continue;
    const get = comparedGet(sourceCode, op, gets, vocabulary);
    if (get) takeovers.push({ op, lock, get });
  }
  return { ops, locks, releases, takeovers, libraryLocks };
}
