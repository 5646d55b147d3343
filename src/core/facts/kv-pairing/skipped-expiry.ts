/**
 * A lock taken by SETNX (or SET NX) whose expiry a later EXPIRE gives it: the ways out of the acquiring function, once
 * the lock is held, that pass neither that EXPIRE nor a release of the key (`if (!reserved) return null;` before the
 * EXPIRE). No crash is needed there: the function leaves the key set forever on an ordinary path.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvOp, Node } from "../../model/accesses.js";
import { contains } from "../../reading/ast.js";
import { enclosingFunction, isFunction, statementList } from "../../reading/units.js";
import { walk } from "../../reading/walk.js";
import { heldRegion } from "../held-locks/held-region.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * The first `return` or `throw` in the region where `acquire` is held that leaves with none of `passes` made before it
 * on its way (an earlier statement of a block around it), and hands nothing of the key to its caller.
 */
export function exitSkipping(
  sourceCode: SourceCode,
  acquire: KvOp,
  passes: readonly Node[],
): TSESTree.ReturnStatement | TSESTree.ThrowStatement | undefined {
  const fn = enclosingFunction(acquire.node);
  const region = heldRegion(sourceCode, acquire.node);
  if (!fn?.body || !region) return undefined;
  const keyName = acquire.key.name;
  let found: TSESTree.ReturnStatement | TSESTree.ThrowStatement | undefined;
  walk(fn.body, (n) => {
    if (found || (n !== fn.body && isFunction(n))) return false;
    if (n.type !== "ReturnStatement" && n.type !== "ThrowStatement") return undefined;
    if (n.range[0] < region.start || n.range[1] > region.end || n.range[0] < acquire.node.range[1]) return false;
    // `return key` (or a handle made of it) hands the lock to the caller, who may expire or release it.
    const argument = n.argument;
    if (n.type === "ReturnStatement" && argument && keyName !== undefined) {
      let handsKey = false;
      walk(argument, (m) => void (m.type === "Identifier" && m.name === keyName && (handsKey = true)));
      if (handsKey) return false;
    }
    if (!passedBefore(n, fn, passes)) found = n;
    return false;
  });
  return found;
}

/** One of `passes` lies in a statement that runs before `exit` in a block around it, within `fn`. */
function passedBefore(exit: Node, fn: Node, passes: readonly Node[]): boolean {
  let child: Node = exit;
  for (let p = exit.parent; p && p !== fn; child = p, p = p.parent) {
    // A `finally` around the way out runs on it.
    if (
      p.type === "TryStatement" &&
      child !== p.finalizer &&
      p.finalizer &&
      passes.some((x) => contains(p.finalizer!, x))
    )
      return true;
    const list = statementList(p);
    if (!list) continue;
    const at = list.indexOf(child);
    for (let i = 0; i < at; i++) if (passes.some((x) => contains(list[i]!, x) && always(list[i]!, x))) return true;
  }
  return false;
}

/** `inner` runs whenever `statement` does: no branch, loop body, `catch` or short-circuit lies between them. */
function always(statement: Node, inner: Node): boolean {
  let child: Node = inner;
  for (let p = inner.parent; p && child !== statement; child = p, p = p.parent) {
    if (isFunction(p)) return false;
    if (p.type === "IfStatement" && child !== p.test) return false;
    if (p.type === "ConditionalExpression" && child !== p.test) return false;
    if (p.type === "LogicalExpression" && child === p.right) return false;
    if (p.type === "SwitchCase" || p.type === "CatchClause") return false;
    if (
      (p.type === "ForStatement" ||
        p.type === "ForInStatement" ||
        p.type === "ForOfStatement" ||
        p.type === "WhileStatement") &&
      child === p.body
    )
      return false;
  }
  return true;
}
