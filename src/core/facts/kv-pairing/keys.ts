/**
 * Which keys are locks, and which ops are about the same key: a key named like a lock and not like a marker, the same
 * key on the same client, and a delete that releases an acquire of the same key.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import { nameWords } from "../../model/words.js";
import type { KvOp } from "../../model/accesses.js";
import { hasLockWord, namesALock } from "../../model/settings.js";
import { sameKey } from "../../reading/keys.js";
import { functionName, unitOf } from "../../reading/units.js";
import { findVariable, unwrap } from "../../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Words of keys that are markers, not locks, matched as whole words of the key (`rate:ip`, `rateLimit`, `dedupe_key`),
 * never inside another word: `lock:migrate` and `lock:generate` are locks.
 */
const MARKER_WORDS =
  /^(?:idempot\w*|dedup\w*|cache[sd]?|rate|ratelimit\w*|throttle\w*|limit|limits|limiter|seen|sessions?|counters?|visited|debounce\w*|nonces?)$/;

/**
 * The whole words a key is named by (its text, the variable holding it, the helper taking it), split at separators and
 * at camelCase, lowercased: marker words are matched against them whole.
 */
function namingWords(text: string): string[] {
  return nameWords(text, true).map((w) => w.toLowerCase());
}

/**
 * NX is also how idempotency keys, caches, throttles and nonces are written. A key is a lock when it, the
 * variable holding it, or the function acquiring or releasing it is named like one (`lock:*`, `acquireLock`,
 * `unlock`), and it is not named like one of those markers.
 */
export function namedLikeLock(op: KvOp): boolean {
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

export function isMarker(op: KvOp): boolean {
  // A key that ends in a lock word (or opens with a lock namespace) names the lock, whatever it guards:
  // `matrix:preload-cache:lock` is the lock of a cache preload, not a cache entry (corpus Br02).
  if (namesALock(op.key.text) || (op.key.name !== undefined && namesALock(op.key.name))) return false;
  return namingWords(op.key.text + " " + (op.key.name ?? "") + " " + (op.via?.helper ?? "")).some((w) =>
    MARKER_WORDS.test(w),
  );
}

/** The same key on the same client (`redis` and `this.redis` are one; `redis` and a Map are not). */
export function sameTarget(a: KvOp, b: KvOp): boolean {
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
export function releasesKey(sourceCode: SourceCode, del: KvOp, acquire: KvOp): boolean {
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
