/** Library acquires whose failure a `catch` lets through to the work (`LockFacts.ignoredAcquireFailures`). */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, StateAccess } from "../../model/accesses.js";
import type { IgnoredAcquireFailure } from "../../model/held-locks.js";
import { calleeName, contains } from "../../reading/ast.js";
import { isFunction } from "../../reading/units.js";
import { unwrap } from "../../reading/values.js";
import { mentions } from "./held-region.js";
import { walk } from "../../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Library acquires that throw when the lock is held elsewhere, caught by a `catch` that lets the function go on to
 * the work after the `try` (`try { lock = await redlock.acquire([key], ttl) } catch (e) { log(e) }` then the work):
 * every caller does the work, holder or not. Not when the `catch` may leave (a `return`, a `throw`, a `continue`), when the
 * acquire cannot fail by throwing (`tryAcquire`, an in-process mutex that waits), when nothing follows the `try`,
 * or when what follows tests the lock's binding and may leave (`if (!lock) return`).
 */
export function ignoredAcquireFailures(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
): IgnoredAcquireFailure[] {
  const out: IgnoredAcquireFailure[] = [];
  for (const op of accesses) {
    if (op.access !== "library" || op.op !== "acquire" || op.library === "in-process" || op.try) continue;
    const call = op.node as TSESTree.CallExpression;
    if (call.arguments.some((a) => isFunction(a))) continue;
    let tried: TSESTree.TryStatement | undefined;
    for (let n: Node | undefined = call.parent; n && !isFunction(n); n = n.parent) {
      if (n.type === "TryStatement" && contains(n.block, call)) {
        tried = n;
        break;
      }
    }
    const handler = tried?.handler;
    if (!tried || !handler || mayLeave(handler.body)) continue;
    // The work inside the `try`, after the acquire: a failed acquire skips it.
    const inTry = tried.block.body;
    const at = inTry.findIndex((st) => contains(st, call));
    if (
      inTry.slice(at + 1).some((st) => anyNode(st, (n) => n.type === "CallExpression" || n.type === "AwaitExpression"))
    )
      continue;
    const block = tried.parent;
    if (block?.type !== "BlockStatement") continue;
    const after = block.body.slice(block.body.indexOf(tried) + 1);
    if (!after.some((s) => anyNode(s, (n) => n.type === "CallExpression" || n.type === "AwaitExpression"))) continue;
    const binding = lockBinding(call);
    if (binding && after.some((s) => s.type === "IfStatement" && mentions(s.test, new Set([binding])) && mayLeave(s)))
      continue;
    out.push({
      acquire: call,
      handler,
      name: op.keyNode ? sourceCode.getText(op.keyNode) : (op.receiver ?? sourceCode.getText(call.callee)),
    });
  }
  return out;
}

/** The name the acquire's result is stored under: `const lock = await …` or `lock = await …`. */
function lockBinding(call: TSESTree.CallExpression): string | undefined {
  let n: Node = call;
  while (
    n.parent &&
    (n.parent.type === "AwaitExpression" ||
      n.parent.type === "TSAsExpression" ||
      n.parent.type === "TSNonNullExpression")
  )
    n = n.parent;
  const p = n.parent;
  if (p?.type === "VariableDeclarator" && p.id.type === "Identifier") return p.id.name;
  if (p?.type === "AssignmentExpression" && p.left.type === "Identifier") return p.left.name;
  return undefined;
}

/** Whether some node under `node`, outside the functions nested in it, passes `test`. */
function anyNode(node: Node, test: (n: Node) => boolean): boolean {
  let found = false;
  walk(node, (n) => {
    if (found || (n !== node && isFunction(n))) return false;
    if (test(n)) found = true;
    return !found;
  });
  return found;
}

/**
 * Whether code may leave the work after it from here: a `return` or `throw` outside nested functions, a `continue` or
 * `break` (the next turn of a worker's loop), or `process.exit`.
 */
function mayLeave(node: Node): boolean {
  return anyNode(
    node,
    (n) =>
      n.type === "ReturnStatement" ||
      n.type === "ThrowStatement" ||
      n.type === "ContinueStatement" ||
      n.type === "BreakStatement" ||
      (n.type === "CallExpression" &&
        calleeName(n) === "exit" &&
        n.callee.type === "MemberExpression" &&
        unwrap(n.callee.object).type === "Identifier" &&
        (unwrap(n.callee.object) as TSESTree.Identifier).name === "process"),
  );
}
