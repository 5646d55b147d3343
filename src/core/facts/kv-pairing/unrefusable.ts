/** Key-value locks taken by a write that cannot be refused (`KvFacts.unrefusable`). */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvOp, Node } from "../../model/accesses.js";
import type { UnrefusableLock } from "../../model/kv-locks.js";
import { namesALock } from "../../model/settings.js";
import { calleeName, exits } from "../../reading/ast.js";
import { enclosingFunction, functionName, isFunction } from "../../reading/units.js";
import { isMethodCall } from "../../reading/function-bindings.js";
import { findVariable, unwrap } from "../../reading/values.js";
import { walk } from "../../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** `!x`, `x === null`, `x == null`, `x === false`, `x !== "OK"`: a test that the write was refused. */
function testsRefusal(test: Node, value: (n: Node) => boolean): boolean {
  const t = unwrap(test);
  if (t.type === "UnaryExpression" && t.operator === "!") return value(t.argument);
  if (t.type === "BinaryExpression") {
    const other = value(t.left) ? unwrap(t.right) : value(t.right) ? unwrap(t.left) : undefined;
    if (!other || other.type !== "Literal") return false;
    if (t.operator === "!==" || t.operator === "!=") return other.value === "OK" || other.value === 1;
    if (t.operator === "===" || t.operator === "==")
      return other.value === null || other.value === false || other.value === 0;
  }
  return false;
}

/** The nearest `if` whose test holds `node` and whose consequent leaves. */
function refusalIf(node: Node, value: (n: Node) => boolean): TSESTree.IfStatement | undefined {
  for (let c: Node = node, p = node.parent; p && !isFunction(p); c = p, p = p.parent) {
    if (p.type === "IfStatement" && p.test === c)
      return testsRefusal(p.test, value) && exits(p.consequent) ? p : undefined;
  }
  return undefined;
}

/**
 * A key named as a lock (`oauth:lock`, `LOCK_KEY`), or written by a function named as one (`acquireLock`), by a command
 * that never refuses (SET without NX, SETEX, PSETEX), whose result the code then tests as if it could be refused
 * (`const lock = await redis.setex(LOCK_KEY, 5, "1"); if (!lock) return …`) or hands its caller as the answer
 * (`return acquired === "OK"`), and which the module deletes again: a lock that lets every caller in (blind-15
 * B15a13, blind-23 B23b05).
 */
export function findUnrefusableLocks(sourceCode: SourceCode, ops: readonly KvOp[]): UnrefusableLock[] {
  const out: UnrefusableLock[] = [];
  for (const op of ops) {
    const unawaited = unawaitedAcquire(sourceCode, op);
    if (unawaited) {
      out.push(unawaited);
      continue;
    }
    if (op.command !== "set" || op.nx || op.via) continue;
    // The key says it is a lock's, or the function writing it does (`acquireLock(key)` writing `lockKey`).
    const writer = enclosingFunction(op.node);
    const writerName = writer ? functionName(writer) : undefined;
    if (
      !namesALock(op.key.text.replace(/[{}*]/g, "")) &&
      !(op.key.name && namesALock(op.key.name)) &&
      !(writerName && namesALock(writerName))
    )
      continue;
    if (!ops.some((o) => o.command === "del" && o.client === op.client && o.key.text === op.key.text)) continue;
    const call = unwrap(op.node);
    const result = call.parent?.type === "AwaitExpression" ? call.parent : call;
    const test =
      refusalTestOf(sourceCode, result) ?? (surelyUnrefusable(call) ? returnedOutcome(sourceCode, result) : undefined);
    if (test) out.push({ op, command: (calleeName(call as TSESTree.CallExpression) ?? "set").toUpperCase(), test });
  }
  return out;
}

/**
 * The test that reads a write's result as a refusal, around the result itself (`if (!(await redis.setex(…)))`) or
 * through the variable it is kept in (`const lock = …; if (!lock) return`).
 */
function refusalTestOf(sourceCode: SourceCode, result: Node): TSESTree.IfStatement | undefined {
  const test = refusalIf(result, (n) => {
    const u = unwrap(n);
    return u === result || u === unwrap(result);
  });
  if (test || result.parent?.type !== "VariableDeclarator" || result.parent.id.type !== "Identifier") return test;
  const variable = findVariable(sourceCode, result.parent.id);
  const isVar = (n: Node) => {
    const u = unwrap(n);
    return u.type === "Identifier" && findVariable(sourceCode, u) === variable;
  };
  for (const ref of variable?.references ?? []) {
    if (ref.isWrite()) continue;
    const found = refusalIf(ref.identifier, isVar);
    if (found) return found;
  }
  return undefined;
}

/**
 * A write whose arguments say it cannot refuse: SETEX or PSETEX, or a SET of a key and a value and nothing more. A SET
 * with arguments the model does not read (a wrapper's `set(key, "1", ttl, true)`) may take NX among them.
 */
function surelyUnrefusable(call: Node): boolean {
  if (call.type !== "CallExpression") return false;
  const name = (calleeName(call) ?? "").toLowerCase();
  if (name === "setex" || name === "psetex") return true;
  return name === "set" && call.arguments.length === 2;
}

/**
 * The `return` that hands the write's result to the caller as the answer to "was it taken?" (`const acquired = await
 * redis.setex(key, ttl, "1"); return acquired === "OK"`, `return !!ok`, `return Boolean(ok)`, `return ok`): the
 * caller's test of it is the test of a refusal the write can never give (blind-23 B23b05).
 */
function returnedOutcome(sourceCode: SourceCode, result: Node): TSESTree.ReturnStatement | undefined {
  const isResult = (n: Node): boolean => {
    const u = unwrap(n);
    if (u === unwrap(result)) return true;
    if (
      u.type !== "Identifier" ||
      result.parent?.type !== "VariableDeclarator" ||
      result.parent.id.type !== "Identifier"
    )
      return false;
    return findVariable(sourceCode, u) === findVariable(sourceCode, result.parent.id);
  };
  const answers = (n: Node): boolean => {
    const u = unwrap(n);
    if (isResult(u)) return true;
    if (u.type === "UnaryExpression" && u.operator === "!") {
      const inner = unwrap(u.argument);
      return inner.type === "UnaryExpression" && inner.operator === "!" && isResult(inner.argument);
    }
    if (u.type === "CallExpression" && u.callee.type === "Identifier" && u.callee.name === "Boolean")
      return u.arguments.length === 1 && isResult(u.arguments[0] as Node);
    if (u.type === "BinaryExpression" && (u.operator === "===" || u.operator === "==")) {
      const other = isResult(u.left) ? unwrap(u.right) : isResult(u.right as Node) ? unwrap(u.left as Node) : undefined;
      return other?.type === "Literal" && (other.value === "OK" || other.value === 1 || other.value === true);
    }
    return false;
  };
  const fn = enclosingFunction(result);
  if (!fn) return undefined;
  let found: TSESTree.ReturnStatement | undefined;
  walk(fn.body as Node, (n) => {
    if (found || (n !== fn.body && isFunction(n))) return false;
    if (n.type === "ReturnStatement" && n.argument && answers(n.argument)) found = n;
    return !found;
  });
  return found;
}

/** `.then(…)`, `.catch(…)`, `.finally(…)` on the call: its outcome is read when it settles. */
function settledLater(call: Node): boolean {
  const p = call.parent;
  return p?.type === "MemberExpression" && p.object === call && isMethodCall(p.parent, ["then", "catch", "finally"]);
}

/**
 * A set-if-absent whose answer is read from the call itself, not awaited (`const acquire = client.set(key, token, {
 * NX: true, PX: 2000 }); if (!acquire) …`): the clients this model reads answer with a promise (node-redis and
 * ioredis without a callback), and a promise is always truthy, so the test never finds the lock taken and every
 * caller goes on as its holder (blind-16 B16b02). Only a call that is neither awaited nor settled later, is handed
 * no callback, and whose value a refusal test reads: the same test on an awaited call is the try-acquire it means.
 */
function unawaitedAcquire(sourceCode: SourceCode, op: KvOp): UnrefusableLock | undefined {
  if (!op.nx || (op.command !== "set" && op.command !== "setnx") || op.via || op.batch) return undefined;
  const call = unwrap(op.node);
  if (call.type !== "CallExpression" || call.parent?.type === "AwaitExpression" || settledLater(call)) return undefined;
  if (call.arguments.some((a) => isFunction(a as Node))) return undefined;
  // In an async function: its author awaits what it needs, and this answer was meant to be awaited too.
  const fn = enclosingFunction(call);
  if (!fn?.async) return undefined;
  // Awaited later (`const p = client.set(…); const ok = await p`): the answer is read from the promise.
  const holder =
    call.parent?.type === "VariableDeclarator" && call.parent.id.type === "Identifier" ? call.parent.id : undefined;
  const variable = holder && findVariable(sourceCode, holder);
  if (variable?.references.some((r) => r.identifier.parent?.type === "AwaitExpression")) return undefined;
  const test = refusalTestOf(sourceCode, call);
  if (!test) return undefined;
  return { op, command: op.command === "setnx" ? "SETNX" : "SET NX", test, unawaited: true };
}
