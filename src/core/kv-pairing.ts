/**
 * Classify and pair key-value ops, by key shape: an NX acquire (`SET … NX`, `SETNX`) is a lock; an EXPIRE of
 * the same key gives it a TTL after the fact (sent together only inside one MULTI/pipeline); a DEL, UNLINK or
 * deleting script of the same key is its release, owner-checked or not; a plain SET of the same key after a JS
 * check of its value is a take-over.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KvFacts, KvLock, KvOp, KvRelease, KvTakeover, LibraryLockOp, Node, StateAccess } from "./model.js";
import type { ResolvedVocabulary } from "./settings.js";
import { guardsOf } from "./guards.js";
import { sameKey } from "./keys.js";
import { functionName, unitOf } from "./units.js";
import { getConstInit, unwrap } from "./values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

const LOCK_WORDS = /lock|mutex|semaphore|leader|lease|owner|claim|singleton|busy|running|processing|in_?progress|cron|exclusive/i;
const MARKER_WORDS = /idempot|dedup|cache|rate|throttle|limit|seen|session|counter|visited/i;

function looksLikeLock(op: KvOp): boolean {
  const unit = unitOf(op.node);
  const text = [op.key.text, op.key.name ?? "", unit ? functionName(unit) ?? "" : ""].join(" ");
  return LOCK_WORDS.test(text) && !MARKER_WORDS.test(op.key.text + (op.key.name ?? ""));
}

/** The GET (of the same key) whose result a JS check on the way to `op` compares. */
function comparedGet(sourceCode: SourceCode, op: KvOp, gets: Map<Node, KvOp>, vocabulary: ResolvedVocabulary): KvOp | undefined {
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    let found: KvOp | undefined;
    const visit = (n: Node): void => {
      if (found) return;
      const u = unwrap(n);
      const direct = gets.get(u.type === "AwaitExpression" ? unwrap(u.argument) : u);
      if (direct && sameKey(direct.key, op.key)) found = direct;
      if (u.type === "Identifier") {
        let init = getConstInit(sourceCode, u);
        if (init) {
          init = unwrap(init);
          if (init.type === "AwaitExpression") init = unwrap(init.argument);
          const get = gets.get(init);
          if (get && sameKey(get.key, op.key)) found = get;
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
  const locks: KvLock[] = acquires.map((acquire) => {
    const released = deletes.some((d) => sameKey(d.key, acquire.key));
    const lockLike = released || looksLikeLock(acquire);
    if (acquire.ttl !== "absent") return { acquire, ttl: acquire.ttl, lockLike };
    const expire = ops.find((o) => o.command === "expire" && sameKey(o.key, acquire.key) && o.node.range[1] > acquire.node.range[1]);
    if (!expire) return { acquire, ttl: "absent", lockLike };
    const together = expire.batch !== undefined && expire.batch === acquire.batch;
    return { acquire, ttl: together ? "present" : "separate", expire, lockLike };
  });

  const lockFor = (op: KvOp) => locks.find((l) => l.acquire !== op && sameKey(l.acquire.key, op.key));
  const gets = new Map<Node, KvOp>();
  for (const o of ops) if (o.command === "get") gets.set(o.node, o);
  const watched = ops.filter((o) => o.command === "watch");

  const releases: KvRelease[] = [];
  for (const op of deletes) {
    const lock = lockFor(op);
    if (!lock || MARKER_WORDS.test(lock.acquire.key.text + (lock.acquire.key.name ?? ""))) continue;
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
