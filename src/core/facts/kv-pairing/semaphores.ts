/** Counting semaphores kept in a key-value store: an INCR bounded by a comparison, given back by a DECR. */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KvOp, Node } from "../../model/accesses.js";
import type { KvSemaphore } from "../../model/kv-locks.js";
import { unitOf } from "../../reading/units.js";
import { findVariable } from "../../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Counting semaphores (`KvSemaphore`): an INCR whose result a comparison bounds (`const n = await redis.incr(key);
 * if (n > max) …`, or the call itself in the test), given back by a DECR of the same key in another function (the
 * release; a DECR in the acquiring function is the roll-back of a refused slot).
 */
export function findSemaphores(sourceCode: SourceCode, ops: readonly KvOp[]): KvSemaphore[] {
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
