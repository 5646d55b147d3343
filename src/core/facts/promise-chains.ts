/**
 * Promise chains kept as a queue (Q1, in-process): work serialised per key by chaining each call on the link before it
 * and keeping the new link (`const c = (store.get(key) ?? Promise.resolve()).finally(fn); store.set(key, c)`, or
 * `queue = queue.then(job)`). `.then(fn)` skips `fn` when the link before rejected, and `.finally(fn)` runs it but
 * passes the rejection on: either way one rejection is every later link's result, and while the chain is kept (no
 * entry deleted, the slot written only this way) every later call fails with the old error until the process
 * restarts. A chain that handles rejections (`.catch`, a `.then` with a rejection handler) starts each link clean.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { PoisonedChain } from "../model/held-locks.js";
import { walk } from "../reading/walk.js";
import { findVariable, getConstInit, unwrap } from "../reading/values.js";
import { isFunction } from "../reading/units.js";
import { runsOnce } from "./promise-memos.js";
import { methodOf } from "../reading/ast.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The links of a promise chain from its end back to its root: `a.then(f).finally(g)` gives `finally`, `then`, and `a`. */
function links(node: Node): { calls: TSESTree.CallExpression[]; root: Node } {
  const calls: TSESTree.CallExpression[] = [];
  let n = unwrap(node);
  while (n.type === "CallExpression") {
    const m = methodOf(n);
    if (!m || !["then", "finally", "catch"].includes(m.name)) break;
    calls.push(n);
    n = unwrap(m.member.object);
  }
  return { calls, root: n };
}

function method(call: TSESTree.CallExpression): string {
  return methodOf(call)?.name ?? "";
}

/**
 * The links of a chain followed back through the consts it is built in (`const next = queue.then(run); queue =
 * next.then(() => {})` gives both links, rooted at `queue`): each const that holds a chain of its own is part of it.
 */
function chainThroughConsts(sourceCode: SourceCode, node: Node): { calls: TSESTree.CallExpression[]; root: Node } {
  const calls: TSESTree.CallExpression[] = [];
  let n = resolved(sourceCode, node);
  for (let depth = 0; ; depth++) {
    const part = links(n);
    calls.push(...part.calls);
    const next = resolved(sourceCode, part.root);
    if (depth === 3 || next === part.root || links(next).calls.length === 0) return { calls, root: part.root };
    n = next;
  }
}

/** `x ?? Promise.resolve()`, `x || Promise.resolve()`: the link before, or a settled start. */
function orStart(node: Node): Node {
  const n = unwrap(node);
  return n.type === "LogicalExpression" && (n.operator === "??" || n.operator === "||") ? unwrap(n.left) : n;
}

/** The expression a const holds, else the node. */
function resolved(sourceCode: SourceCode, node: Node): Node {
  const n = unwrap(node);
  if (n.type !== "Identifier") return n;
  const init = getConstInit(sourceCode, n);
  return init && init.type !== "TSEnumDeclaration" ? unwrap(init) : n;
}

/** `T.get(K)`: the table's text and the key's, where `node` is one. */
function tableGet(sourceCode: SourceCode, node: Node): { table: string; key: string } | undefined {
  const n = unwrap(node);
  if (n.type !== "CallExpression" || n.arguments.length !== 1) return undefined;
  const m = methodOf(n);
  if (m?.name !== "get") return undefined;
  return { table: sourceCode.getText(m.member.object), key: sourceCode.getText(n.arguments[0]!) };
}

/**
 * The chain is kept where it lives with the process: a module variable, or a property of one (a module `Map`).
 * One kept in a function's variable or an instance field lives as long as that call or object: unknown, so quiet.
 */
function livesWithProcess(sourceCode: SourceCode, node: Node): boolean {
  let n = unwrap(node);
  while (n.type === "MemberExpression") n = unwrap(n.object);
  if (n.type !== "Identifier") return false;
  const variable = findVariable(sourceCode, n);
  return variable !== undefined && (variable.scope.type === "module" || variable.scope.type === "global");
}

/**
 * A link's work cannot reject: its function catches everything it does (`async () => { try { … } catch (e) { log(e) }
 * }`, a `catch` that does not throw), or its promise ends in a `.catch(…)`.
 */
function cannotReject(sourceCode: SourceCode, call: TSESTree.CallExpression): boolean {
  const fn = call.arguments[0];
  if (!fn || !isFunction(fn as Node)) return false;
  const f = fn as TSESTree.ArrowFunctionExpression | TSESTree.FunctionExpression;
  // Nothing that can throw at all: `() => {}`, `() => undefined`, the tail advanced past a link (`q = next.then(() =>
  // {})`).
  if (!f.async && harmless(f.body)) return true;
  if (f.body.type !== "BlockStatement") {
    // A promise made with a resolve function only (`new Promise((resolve) => { release = resolve })`): a mutex's
    // hand-over, which settles one way.
    if (resolveOnly(resolved(sourceCode, f.body))) return true;
    const { calls } = links(f.body);
    return calls.length > 0 && calls.some((c) => method(c) === "catch");
  }
  const body = f.body.body;
  const last = body[body.length - 1];
  if (last?.type !== "TryStatement" || !last.handler) return false;
  // Before the `try`, only what cannot throw: early ways out and logging (`if (stopped) return;`, `console.log(…)`).
  if (!body.slice(0, -1).every(harmless)) return false;
  let rethrows = false;
  walk(last.handler.body, (n) => {
    if (rethrows || (n !== last.handler!.body && isFunction(n))) return false;
    if (n.type === "ThrowStatement") rethrows = true;
    return true;
  });
  return !rethrows && (!last.finalizer || last.finalizer.body.length === 0);
}

/** `new Promise((resolve) => …)`: an executor that takes no reject function cannot make it reject but by throwing. */
function resolveOnly(node: Node): boolean {
  const n = unwrap(node);
  if (n.type !== "NewExpression" || n.callee.type !== "Identifier" || n.callee.name !== "Promise") return false;
  const executor = n.arguments[0];
  return (
    executor !== undefined &&
    isFunction(executor as Node) &&
    (executor as TSESTree.ArrowFunctionExpression).params.length <= 1
  );
}

/** No call but logging, no await, no throw: a statement that cannot make the link reject. */
function harmless(statement: Node): boolean {
  let ok = true;
  walk(statement, (n) => {
    if (!ok || isFunction(n)) return false;
    if (n.type === "AwaitExpression" || n.type === "ThrowStatement" || n.type === "NewExpression") ok = false;
    if (n.type === "CallExpression") {
      const callee = unwrap(n.callee);
      const logs =
        callee.type === "MemberExpression" &&
        unwrap(callee.object).type === "Identifier" &&
        (unwrap(callee.object) as TSESTree.Identifier).name === "console";
      if (!logs) ok = false;
    }
    return ok;
  });
  return ok;
}

export function buildPoisonedChains(sourceCode: SourceCode, filename: string): PoisonedChain[] {
  const out: PoisonedChain[] = [];
  // A test run or a one-shot script: its process ends with its work.
  if (runsOnce(filename)) return out;
  // One walk: the deletes and writes the chains are checked against, and the candidate keeps.
  const deletes = new Set<string>();
  const writes = new Map<string, number>();
  const sets: TSESTree.CallExpression[] = [];
  const assignments: TSESTree.AssignmentExpression[] = [];
  walk(sourceCode.ast, (n) => {
    if (n.type === "CallExpression") {
      const m = methodOf(n);
      if (m?.name === "delete" || m?.name === "clear") deletes.add(sourceCode.getText(m.member.object));
      else if (m?.name === "set" && n.arguments.length === 2) sets.push(n);
    } else if (n.type === "AssignmentExpression") {
      const text = sourceCode.getText(n.left);
      writes.set(text, (writes.get(text) ?? 0) + 1);
      if (n.operator === "=") assignments.push(n);
    }
  });
  const poisoned = (calls: readonly TSESTree.CallExpression[]) =>
    calls.length > 0 && !calls.some(handlesRejection) && !calls.every((c) => cannotReject(sourceCode, c));
  // `store.set(key, chain)`: the chain extends the entry `store.get(key)`.
  for (const n of sets) {
    const object = methodOf(n)!.member.object;
    const table = sourceCode.getText(object);
    if (deletes.has(table) || !livesWithProcess(sourceCode, object)) continue;
    const { calls, root } = chainThroughConsts(sourceCode, n.arguments[1] as Node);
    if (!poisoned(calls)) continue;
    const before = tableGet(sourceCode, orStart(resolved(sourceCode, root)));
    if (!before || before.table !== table || before.key !== sourceCode.getText(n.arguments[0] as Node)) continue;
    out.push({ node: calls[0]!, holder: table, link: method(calls[0]!) });
  }
  // `queue = queue.then(job)`: the slot written only this way.
  for (const n of assignments) {
    const slot = sourceCode.getText(n.left);
    if (writes.get(slot) !== 1 || !livesWithProcess(sourceCode, n.left)) continue;
    const { calls, root } = chainThroughConsts(sourceCode, n.right);
    if (!poisoned(calls) || sourceCode.getText(orStart(root)) !== slot) continue;
    out.push({ node: calls[0]!, holder: slot, link: method(calls[0]!) });
  }
  return out;
}

/** `.catch(…)`, or `.then(ok, onRejected)`: the link handles a rejection. */
function handlesRejection(call: TSESTree.CallExpression): boolean {
  const m = method(call);
  return m === "catch" || (m === "then" && call.arguments.length > 1);
}
