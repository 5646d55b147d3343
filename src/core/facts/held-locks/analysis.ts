/**
 * Held locks: locks that nothing frees while the process lives but their own release (an in-process mutex, a
 * boolean guard, a PostgreSQL session advisory lock), or that stay taken until a TTL runs out (a Redis lock, a
 * Redlock lease) when the release is skipped. For each, the releases in the acquiring function and the ways out
 * of that function that miss them (see code-paths.ts).
 *
 * A lock is analysed only where the acquiring function also releases it: a lock handed to a callback, returned,
 * or released by another method is the other code's business, and a flag set but never reset in the same
 * function is an "initialised once" marker, not a guard.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, LibraryLockOp, Node, StateAccess } from "../../model/accesses.js";
import type { KvFacts } from "../../model/kv-locks.js";
import type { HeldLock, LockTable, PathEscape } from "../../model/held-locks.js";
import type { ModuleShape } from "../../model/lock-facts.js";
import type { PathRecorder } from "../../reading/code-paths.js";
import { calleeName, contains } from "../../reading/ast.js";
import {
  classOf,
  enclosingFunction,
  functionName,
  isFunction,
  servesOneInvocationAtATime,
  unitOf,
} from "../../reading/units.js";
import { getConstInit, keyName, unwrap } from "../../reading/values.js";
import { isExported } from "../../reading/exports.js";
import { exitWhenHeld } from "../../reading/guards.js";
import {
  inProcessLocks,
  flagLocks,
  type FlagWrite,
  tableLocks,
  resultDeclarator,
  type Candidate,
  advisoryLocks,
  kvLocks,
  within,
} from "./candidates.js";
import { heldRegion, queuedBatchExec, settlingAwait } from "./held-region.js";
import { walk } from "../../reading/walk.js";
import { caughtIn } from "../../reading/rejection-flow.js";

type Variable = TSESLint.Scope.Variable;

type SourceCode = Readonly<TSESLint.SourceCode>;

const NEVER_REJECTS = /^(sleep|delay|wait|setTimeout|setImmediate|allSettled)$/;

/** A rejected `await` here is caught, or released by a `finally`, before it leaves the function. */
function awaitHandled(
  node: TSESTree.AwaitExpression,
  releases: ReadonlySet<Node>,
  protocol: readonly Node[] = [],
): boolean {
  const arg = unwrap(node.argument);
  if (protocol.includes(arg)) return true;
  if (arg.type === "CallExpression") {
    const name = calleeName(arg);
    if (name === "catch" || (name === "then" && arg.arguments.length >= 2)) return true;
    if (name && NEVER_REJECTS.test(name)) return true;
  }
  const fn = enclosingFunction(node);
  for (let child: Node = node, p: Node | undefined = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "TryStatement" || p.block !== child) continue;
    if (p.handler) return true;
    if (
      p.finalizer &&
      [...releases].some((r) => r.range[0] >= p.finalizer!.range[0] && r.range[1] <= p.finalizer!.range[1])
    )
      return true;
  }
  return false;
}

/**
 * The `catch` a rejected await lands in, when a `try` around it has one and no `finally` of it releases on the way
 * (awaitHandled's order: the nearest `try` with a handler).
 */
function catchingClause(node: Node, releases: ReadonlySet<Node>): TSESTree.CatchClause | undefined {
  const fn = enclosingFunction(node);
  for (let child: Node = node, p: Node | undefined = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "TryStatement" || p.block !== child) continue;
    const finalizer = p.finalizer;
    if (finalizer && [...releases].some((r) => within(r, finalizer))) return undefined;
    if (p.handler) return p.handler;
  }
  return undefined;
}

/**
 * The `catch` of a `try` whose block is the statement that acquires, followed by nothing or by `try`s whose `finally`
 * releases (`try { await sem.acquire(t) } catch {…}`, `try { const lock = await redlock.acquire(…); try { … } finally {
 * await lock.release() } } catch { return fallback() }`): it runs when the acquire is refused, or after a `finally`
 * released, and holds nothing either way.
 */
function refusedCatch(acquire: Node, releases: ReadonlySet<Node>): TSESTree.CatchClause | undefined {
  if (acquire.type !== "CallExpression") return undefined;
  let statement: Node = acquire;
  while (statement.parent && !/Statement$|Declaration$/.test(statement.type)) statement = statement.parent;
  const block = statement.parent;
  const tryStatement = block?.parent;
  if (block?.type !== "BlockStatement" || tryStatement?.type !== "TryStatement" || tryStatement.block !== block)
    return undefined;
  const after = block.body.slice(block.body.indexOf(statement as TSESTree.Statement) + 1);
  const covered = (st: TSESTree.Statement) =>
    st.type === "TryStatement" && st.finalizer !== null && [...releases].some((r) => within(r, st.finalizer!));
  return block.body[0] === statement && after.every(covered) ? (tryStatement.handler ?? undefined) : undefined;
}

/** Whether a call returns a promise, by what the module shows: an async function, `.then`, or awaited elsewhere. */
function returnsPromise(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  shape: ModuleShape,
  awaitedElsewhere: boolean,
): boolean {
  const name = calleeName(call);
  if (!name) return false;
  if (name === "then" || name === "catch" || name === "finally") return true;
  const declared = shape.functions.some(
    (f) =>
      f.async &&
      ((f.type === "FunctionDeclaration" && f.id?.name === name) ||
        (f.parent?.type === "VariableDeclarator" && f.parent.id.type === "Identifier" && f.parent.id.name === name) ||
        (f.parent?.type === "MethodDefinition" && keyName(f.parent.key, f.parent.computed) === name)),
  );
  if (declared) return true;
  // A call awaited elsewhere returns a promise too; for a boolean guard that is not evidence enough that the
  // returned call is the guarded work (`return sender.send(result)` after it).
  if (!awaitedElsewhere) return false;
  return shape.calls.some(
    (c) =>
      c !== call &&
      c.parent?.type === "AwaitExpression" &&
      calleeName(c) === name &&
      sourceCode.getText(c.callee) === sourceCode.getText(call.callee),
  );
}

/** `return work()` in the `try` whose `finally` releases: the release runs as soon as the promise is returned. */
function releasedEarly(sourceCode: SourceCode, c: Candidate, shape: ModuleShape): Node | undefined {
  const fn = enclosingFunction(c.acquire);
  if (!fn?.async) return undefined;
  for (const r of c.releases) {
    let tryStatement: TSESTree.TryStatement | undefined;
    for (let child: Node = r, p = r.parent; p && p !== fn; child = p, p = p.parent) {
      if (p.type === "TryStatement" && p.finalizer === child) {
        tryStatement = p;
        break;
      }
    }
    if (!tryStatement || tryStatement.block.range[1] < c.acquire.range[0]) continue;
    let found: Node | undefined;
    walk(tryStatement.block, (n) => {
      if (found || isFunction(n)) return false;
      if (n.type === "ReturnStatement" && n.argument) {
        const arg = unwrap(n.argument);
        if (
          (arg.type === "CallExpression" &&
            returnsPromise(sourceCode, arg, shape, c.kind !== "flag" && c.kind !== "table")) ||
          (arg.type === "NewExpression" && arg.callee.type === "Identifier" && arg.callee.name === "Promise")
        )
          found = n;
      }
      return true;
    });
    if (found) return found;
  }
  return undefined;
}

/** `process.exit(…)` / `process.abort()` somewhere in the handler: the process ends there. */
function endsProcess(sourceCode: SourceCode, handler: Node | null | undefined): boolean {
  return !!handler && /\bprocess\s*\.\s*(?:exit|abort)\s*\(/.test(sourceCode.getText(handler));
}

/**
 * The function holding `node` is called only where a rejection ends the process: `.catch((e) => process.exit(1))`,
 * or awaited in a `try` whose `catch` exits (its own recursive calls aside). A call of it that is passed on, or
 * handled otherwise, keeps the process alive.
 */
function diesOnRejection(sourceCode: SourceCode, node: Node, shape: ModuleShape): boolean {
  const fn = unitOf(node);
  const name = fn ? functionName(fn) : undefined;
  // Another module may call an exported function, and handle its rejection otherwise.
  if (!fn || !name || isExported(sourceCode.ast, fn)) return false;
  const calls = shape.calls.filter(
    (c) => unwrap(c.callee).type === "Identifier" && calleeName(c) === name && !within(c, fn),
  );
  if (calls.length === 0) return false;
  return calls.every((call) => {
    const parent = call.parent;
    if (
      parent?.type === "MemberExpression" &&
      parent.object === call &&
      keyName(parent.property, parent.computed) === "catch" &&
      parent.parent?.type === "CallExpression"
    )
      return endsProcess(sourceCode, parent.parent.arguments[0]);
    if (parent?.type !== "AwaitExpression") return false;
    for (let p: Node | undefined = parent.parent, child: Node = parent; p && !isFunction(p); child = p, p = p.parent) {
      if (p.type === "TryStatement" && p.block === child) return endsProcess(sourceCode, p.handler);
    }
    return false;
  });
}

/**
 * Module functions that cannot reject: every await in them is caught (or awaits another such function), and they
 * throw nothing outside a `try` that catches. `await this.sendWithRetry()` whose body catches everything does not
 * skip a release.
 */
class Rejections {
  private readonly memo = new Map<TSESTree.FunctionLike, boolean>();
  constructor(private readonly shape: ModuleShape) {}

  /** The awaited call goes to a function of this module that cannot reject, or gathers only such calls. */
  never(node: TSESTree.AwaitExpression, depth = 0): boolean {
    return this.neverCall(unwrap(node.argument), depth);
  }

  /**
   * `Promise.allSettled(…)` never rejects; `Promise.all([a(), b()])` and `Promise.all(items.map((x) => a(x)))` do only
   * when one of the calls they gather does (blind-12 E12a07: each job's function catches its own failure).
   */
  private neverCall(arg: Node, depth: number): boolean {
    if (arg.type !== "CallExpression" || depth > 3) return false;
    const callee = unwrap(arg.callee);
    const onPromise =
      callee.type === "MemberExpression" &&
      unwrap(callee.object).type === "Identifier" &&
      (unwrap(callee.object) as TSESTree.Identifier).name === "Promise";
    if (onPromise && calleeName(arg) === "allSettled") return true;
    if (onPromise && calleeName(arg) === "all") {
      const list = arg.arguments[0] ? unwrap(arg.arguments[0] as Node) : undefined;
      if (list?.type === "ArrayExpression")
        return list.elements.every(
          (e) => e !== null && e.type !== "SpreadElement" && this.neverCall(unwrap(e), depth + 1),
        );
      if (list?.type !== "CallExpression" || calleeName(list) !== "map") return false;
      const cb = list.arguments[0] ? unwrap(list.arguments[0] as Node) : undefined;
      if (cb?.type !== "ArrowFunctionExpression" || cb.body.type === "BlockStatement") return false;
      const made = unwrap(cb.body.type === "AwaitExpression" ? cb.body.argument : cb.body);
      return this.neverCall(made, depth + 1);
    }
    const fn = this.onlyFunctionNamedBy(arg);
    return fn !== undefined && this.cannotReject(fn, depth);
  }

  /**
   * The one function of the module declared under the name `call` uses (`name()`: a function declaration or a
   * variable; `this.name()`: a method of the caller's class), by name, not binding; none when two share it.
   */
  private onlyFunctionNamedBy(call: TSESTree.CallExpression): TSESTree.FunctionLike | undefined {
    const callee = unwrap(call.callee);
    const viaThis = callee.type === "MemberExpression" && unwrap(callee.object).type === "ThisExpression";
    if (callee.type !== "Identifier" && !viaThis) return undefined;
    const name = calleeName(call);
    const candidates = this.shape.functions.filter((f) => {
      const p = f.parent;
      if (viaThis)
        return p?.type === "MethodDefinition" && keyName(p.key, p.computed) === name && classOf(f) === classOf(call);
      return (
        (f.type === "FunctionDeclaration" && f.id?.name === name) ||
        (p?.type === "VariableDeclarator" && p.id.type === "Identifier" && p.id.name === name)
      );
    });
    return candidates.length === 1 ? candidates[0] : undefined;
  }

  private cannotReject(fn: TSESTree.FunctionLike, depth: number): boolean {
    const cached = this.memo.get(fn);
    if (cached !== undefined) return cached;
    this.memo.set(fn, false);
    const body = fn.body;
    if (!body) return false;
    let ok = body.type === "BlockStatement";
    walk(body, (n) => {
      if (!ok) return false;
      if (n !== body && isFunction(n)) return false;
      if (n.type === "AwaitExpression" && !caughtIn(n, fn) && !this.never(n, depth + 1)) ok = false;
      if (n.type === "ThrowStatement" && !caughtIn(n, fn)) ok = false;
      return true;
    });
    this.memo.set(fn, ok);
    return ok;
  }
}

/**
 * `try` statements whose `finally` releases and that the acquire is in or before: once a path enters one, the
 * `finally` runs on every way out, so the lock counts as released there. A release the `finally` makes only under a
 * condition (`if (!timedOut) await client.end()`) is the author's decision, not a forgotten path.
 */
function coveringTries(c: Candidate): TSESTree.TryStatement[] {
  const fn = enclosingFunction(c.acquire);
  const out: TSESTree.TryStatement[] = [];
  for (const r of c.releases) {
    for (let child: Node = r, p: Node | undefined = r.parent; p && p !== fn; child = p, p = p.parent) {
      if (
        p.type === "TryStatement" &&
        p.finalizer === child &&
        (within(c.acquire, p.block) || p.range[0] > c.acquire.range[1])
      ) {
        out.push(p);
      }
    }
  }
  return out;
}

/**
 * A `return` or `throw` in the block of a `try` whose `finally` releases the lock, before the acquire in that block:
 * whoever leaves there never took the lock, and its `finally` frees whoever holds it. Only locks any caller can free
 * (an in-process flag, a mutex): a key or row released by key is owner-checked-release's, an advisory unlock of a
 * lock this session does not hold does nothing.
 */
function releasedUntaken(
  sourceCode: SourceCode,
  c: Candidate,
  tries: readonly TSESTree.TryStatement[],
): HeldLock["releasedUntaken"] {
  // A key released by key alone, too (`try { if (!(await acquireLock(k))) return; … } finally { await releaseLock(k) }`
  // with a plain DEL): the caller that lost the race deletes the winner's key at once. A compare-and-delete with this
  // caller's token deletes nothing of anyone else's.
  const kv = c.kind === "kv" && c.uncheckedRelease === true;
  if (c.kind !== "flag" && c.kind !== "table" && c.kind !== "mutex" && !kv) return undefined;
  // The way out must be the one taken when the lock is held (`if (running) return`, `if (mutex.isLocked()) return`):
  // one taken before the check, when nobody holds it, releases nothing that matters. For a key, the test of what its
  // try-acquire returned (`if (!acquired) return`).
  const stored = kv ? resultDeclarator(c.acquire)?.id : undefined;
  // A try-acquire tested where it is made (`if (!(await redis.set(key, v, "PX", ttl, "NX"))) throw …`) or kept in a
  // variable first.
  const inline = kv && !stored ? inlineTest(c.acquire) : undefined;
  if (kv && stored?.type !== "Identifier" && !inline) return undefined;
  const name = kv && stored ? (stored as TSESTree.Identifier).name : c.name.replace(/^this\./, "");
  for (const t of tries) {
    if (!within(c.acquire, t.block) || !t.finalizer) continue;
    // A key taken from the list of keys this caller took (`for (const key of held)`) frees only what it holds.
    const release = c.releases.find((r) => within(r, t.finalizer) && !c.collectedReleases?.includes(r));
    if (!release) continue;
    const exit = inline
      ? within(inline, t.block)
        ? exitOf(inline)
        : undefined
      : kv
        ? exitWhenNotTaken(sourceCode, t.block, c.acquire, name)
        : exitWhenHeld(sourceCode, t.block, c.acquire, name);
    if (exit) return { exit, release };
    const late = !kv && !inline ? exitAfterWait(t.block, c) : undefined;
    if (late) return { exit: late, release, afterWait: c.setAfterAwait!.wait };
  }
  return undefined;
}

/**
 * A key released by key alone in the `catch` of the `try` that takes it, with work before the acquire in that `try`
 * that may throw (`try { const body = schema.parse(req.body); if (!(await acquireLock(key))) …; … } catch (e) {
 * await releaseLock(key); … }`): a caller whose input fails to parse never took the lock, and its `catch` deletes the
 * one another request holds (blind-15 B15b10). Not for a release the `catch` makes under a test (`if (acquired)`),
 * nor where nothing before the acquire can throw.
 */
function releasedInCatchUntaken(c: Candidate): HeldLock["releasedUntaken"] {
  if (c.kind !== "kv" || c.uncheckedRelease !== true) return undefined;
  const fn = enclosingFunction(c.acquire);
  for (const release of c.releases) {
    let handler: TSESTree.CatchClause | undefined;
    let conditional = false;
    for (let p: Node | undefined = release.parent; p && p !== fn; p = p.parent) {
      if (p.type === "IfStatement" || p.type === "ConditionalExpression" || p.type === "LogicalExpression")
        conditional = true;
      if (p.type === "CatchClause") {
        handler = p;
        break;
      }
    }
    const t = handler?.parent;
    if (!handler || conditional || t?.type !== "TryStatement" || !within(c.acquire, t.block)) continue;
    for (const statement of t.block.body) {
      if (within(c.acquire, statement)) break;
      let thrower: Node | undefined;
      walk(statement, (n) => {
        if (thrower || isFunction(n)) return false;
        if (n.type === "CallExpression" || n.type === "ThrowStatement" || n.type === "AwaitExpression") thrower = n;
        return true;
      });
      if (thrower) return { exit: thrower, release, inCatch: true };
    }
  }
  return undefined;
}

/**
 * The way out sits under a test that a variable is unset (`if (!acquired) throw …`, `if (acquired === false)`) which
 * the held region sets true and nothing sets false again after it: on the path that holds the lock, the test fails.
 */
function whenNotMarked(exit: Node, region: { start: number; end: number }): boolean {
  let test: Node | undefined;
  for (let child: Node = exit, p = exit.parent; p && !isFunction(p); child = p, p = p.parent) {
    if (p.type === "IfStatement" && p.consequent === child) {
      test = p.test;
      break;
    }
  }
  const t = test && unwrap(test);
  const name =
    t?.type === "UnaryExpression" && t.operator === "!" && unwrap(t.argument).type === "Identifier"
      ? (unwrap(t.argument) as TSESTree.Identifier).name
      : t?.type === "BinaryExpression" &&
          t.operator === "===" &&
          t.left.type === "Identifier" &&
          t.right.type === "Literal" &&
          t.right.value === false
        ? t.left.name
        : undefined;
  if (!name) return false;
  const fn = enclosingFunction(exit);
  let markedInRegion = false;
  let clearedAfter = false;
  if (fn)
    walk(fn.body ?? fn, (n) => {
      if (n !== fn.body && isFunction(n)) return false;
      if (
        n.type === "AssignmentExpression" &&
        n.operator === "=" &&
        n.left.type === "Identifier" &&
        n.left.name === name &&
        n.right.type === "Literal"
      ) {
        if (n.right.value === true && n.range[0] >= region.start && n.range[1] <= region.end) markedInRegion = true;
        if (n.right.value === false && n.range[0] > region.end && n.range[0] < exit.range[0]) clearedAfter = true;
      }
      return true;
    });
  return markedInRegion && !clearedAfter;
}

/**
 * The `return` gives the caller something that makes one of `releases` (a function defined in the acquiring
 * function): the returned expression holds it, directly or through the consts it names (`const handle = { release:
 * async () => { … unlock … } }` then `return { acquired: true, handle }`).
 */
function handsOver(sourceCode: SourceCode, exit: Node, releases: readonly Node[]): boolean {
  if (exit.type !== "ReturnStatement" || !exit.argument) return false;
  const seen = new Set<Node>();
  const holds = (n: Node, depth: number): boolean => {
    if (depth > 3 || seen.has(n)) return false;
    seen.add(n);
    if (releases.some((r) => contains(n, r))) return true;
    let found = false;
    walk(n, (m) => {
      if (found) return false;
      if (m.type === "Identifier") {
        const init = getConstInit(sourceCode, m);
        if (init && init.type !== "TSEnumDeclaration" && holds(init as Node, depth + 1)) found = true;
      }
      return true;
    });
    return found;
  };
  return holds(exit.argument, 0);
}

/** The `return` gives the caller `variable`, itself or in an object or array it returns. */
function returnsVariable(exit: Node, variable: Variable): boolean {
  if (exit.type !== "ReturnStatement" || !exit.argument) return false;
  const ids = new Set(variable.references.map((r) => r.identifier as Node));
  let found = false;
  walk(exit.argument, (m) => {
    if (found || isFunction(m)) return false;
    if (m.type === "Identifier" && ids.has(m)) found = true;
    return !found;
  });
  return found;
}

/**
 * A flag tested, then awaited past, then set (`HeldLock.setAfterAwait`): a `return` or `throw` in the `try` block
 * after that await and before the set leaves without taking the flag, at a time another caller that passed the same
 * test may hold it (`if (busy) return; try { if (!(await needed())) return; busy = true; … } finally { busy = false }`,
 * blind-11 E9e06). Its `finally` frees that caller's flag.
 */
function exitAfterWait(block: Node, c: Candidate): Node | undefined {
  const wait = c.setAfterAwait?.wait;
  if (!wait) return undefined;
  let exit: Node | undefined;
  walk(block, (n) => {
    if (exit || n.range[0] >= c.acquire.range[0]) return false;
    if (n !== block && isFunction(n)) return false;
    if ((n.type === "ReturnStatement" || n.type === "ThrowStatement") && n.range[0] > wait.range[1]) {
      exit = n;
      return false;
    }
    return true;
  });
  return exit;
}

/**
 * The `return`/`throw` after a try-acquire that leaves when it failed: `if (!acquired) return;`, `if (got !== "OK")
 * throw …`, in `block` and outside nested functions.
 */
function exitWhenNotTaken(sourceCode: SourceCode, block: Node, acquire: Node, name: string): Node | undefined {
  const id = name.replace(/[$]/g, "\\$&");
  const failed = new RegExp(
    `^(?:!\\s*\\(?\\s*${id}\\b|${id}\\s*={2,3}\\s*(?:null|false|0|undefined)\\b|${id}\\s*!={1,2}\\s*(?:"OK"|'OK'|1|true)\\b)`,
  );
  let found: Node | undefined;
  walk(block, (n) => {
    if (found || (n !== block && isFunction(n))) return false;
    if (n.type === "IfStatement" && n.range[0] > acquire.range[1] && failed.test(sourceCode.getText(n.test).trim())) {
      const c = n.consequent;
      const exit =
        c.type === "ReturnStatement" || c.type === "ThrowStatement"
          ? c
          : c.type === "BlockStatement"
            ? c.body.find((st) => st.type === "ReturnStatement" || st.type === "ThrowStatement")
            : undefined;
      if (exit) found = exit;
    }
    return undefined;
  });
  return found;
}

/** The `return` or `throw` an `if` takes at once: its consequent, or the first statement of its block that is one. */
function exitOf(stmt: TSESTree.IfStatement): Node | undefined {
  const c = stmt.consequent;
  if (c.type === "ReturnStatement" || c.type === "ThrowStatement") return c;
  return c.type === "BlockStatement"
    ? c.body.find((st) => st.type === "ReturnStatement" || st.type === "ThrowStatement")
    : undefined;
}

/**
 * The `if` that tests a try-acquire where it is made and is taken when it failed: `if (!(await acquire))`,
 * `if ((await acquire) !== "OK")`, `if ((await acquire) === null)`.
 */
function inlineTest(acquire: Node): TSESTree.IfStatement | undefined {
  let n: Node = acquire;
  while (n.parent && (n.parent.type === "AwaitExpression" || n.parent.type === "TSAsExpression")) n = n.parent;
  const p = n.parent;
  const failed =
    (p?.type === "UnaryExpression" && p.operator === "!") ||
    (p?.type === "BinaryExpression" &&
      ((/^!==?$/.test(p.operator) && isLiteralIn(p.left === n ? p.right : p.left, ["OK", 1, true])) ||
        (/^===?$/.test(p.operator) && isLiteralIn(p.left === n ? p.right : p.left, [null, false, 0]))));
  const stmt = failed ? p!.parent : undefined;
  return stmt?.type === "IfStatement" && stmt.test === p && exitOf(stmt) ? stmt : undefined;
}

function isLiteralIn(node: Node, values: readonly (string | number | boolean | null)[]): boolean {
  const u = unwrap(node);
  return u.type === "Literal" && values.includes(u.value as string | number | boolean | null);
}

/** The variable an acquire's result is kept in: `const lock = await acquire(…)`, `lockValue = await acquire(…)`. */
function resultName(acquire: Node): string | undefined {
  const declarator = resultDeclarator(acquire);
  if (declarator) return declarator.id.type === "Identifier" ? declarator.id.name : undefined;
  let p = acquire.parent;
  if (p?.type === "AwaitExpression") p = p.parent;
  return p?.type === "AssignmentExpression" && p.operator === "=" && p.left.type === "Identifier"
    ? p.left.name
    : undefined;
}

/** An earlier statement of a block around `node` is `if (held) { …release… }` (or `held != null`, `held !== null`). */
function afterReleaseWhenTaken(sourceCode: SourceCode, node: Node, held: string, releases: ReadonlySet<Node>): boolean {
  const taken = new RegExp(`^${held.replace(/[$]/g, "\\$&")}(?:\\s*!==?\\s*(?:null|undefined))?$`);
  for (let child: Node = node, p = node.parent; p && !isFunction(p); child = p, p = p.parent) {
    if (p.type !== "BlockStatement") continue;
    for (const st of p.body) {
      if (st.range[0] >= child.range[0]) break;
      if (
        st.type === "IfStatement" &&
        !st.alternate &&
        taken.test(sourceCode.getText(st.test).trim()) &&
        [...releases].some((r) => within(r, st.consequent))
      )
        return true;
    }
  }
  return false;
}

function analyse(
  sourceCode: SourceCode,
  c: Candidate,
  paths: PathRecorder,
  shape: ModuleShape,
  rejections: Rejections,
): HeldLock {
  const releases = new Set(c.releases);
  const tries = coveringTries(c);
  const isRelease = (n: Node) =>
    releases.has(n) || tries.some((t) => within(n, t.block) || within(n, t.handler) || within(n, t.finalizer));
  let escapes: PathEscape[] = [];
  if (!c.skipPaths && paths.has(c.acquire)) {
    const base = (a: TSESTree.AwaitExpression) => awaitHandled(a, releases, c.protocol) || rejections.never(a);
    // A rejected await caught by a `catch` that ESLint forks to from before the acquire (the `try`'s first node that
    // can throw came earlier: `try { log(); busy = true; await send(); busy = false } catch { log(e) }`): the path
    // through that `catch` is walked from its own first node, and must pass a release too (blind-9 E505).
    const viaCatch: PathEscape[] = [];
    const walked = new Set<Node>();
    const handled = (a: TSESTree.AwaitExpression) => {
      const handler = catchingClause(a, releases);
      if (handler && !walked.has(handler)) {
        walked.add(handler);
        const first = paths.firstIn(c.acquire, handler.body.range[0], handler.body.range[1]);
        if (first) viaCatch.push(...paths.escapes(first, isRelease, base, true).escapes);
      }
      return base(a);
    };
    // Queued on a batch, the acquire's outcome is the batch's result: where it is tested is where holding starts.
    const region = c.try
      ? heldRegion(sourceCode, queuedBatchExec(sourceCode, c.acquire, c.batch) ?? c.acquire)
      : undefined;
    const settled = region ? undefined : settlingAwait(sourceCode, c.acquire, c.batch);
    const from = settled && paths.has(settled) ? settled : c.acquire;
    const start = region ? paths.firstIn(c.acquire, region.start, region.end) : from;
    // A `try` around the acquire alone (`try { await sem.acquire(timeout) } catch { return busy }`): its `catch` runs
    // when the acquire is refused, which holds nothing.
    const refused = refusedCatch(c.acquire, releases);
    const found = start
      ? paths.escapes(start, isRelease, handled, region !== undefined && start !== c.acquire, refused)
      : undefined;
    // A flag "reset" that no path from the set reaches (`else isFinished = false`) is state, not a release.
    if (found && (found.reachesRelease || (c.kind !== "flag" && c.kind !== "table")))
      escapes = [
        ...found.escapes,
        ...viaCatch.filter((v) => !found.escapes.some((e) => e.kind === v.kind && e.node === v.node)),
      ];
    // A path that falls off the end after a covering `try` went through its `finally`.
    if (tries.length > 0) escapes = escapes.filter((e) => e.kind !== "end");
    // A flag set and left in one uninterrupted run is a state kept on purpose; only a `throw` leaves it by mistake.
    if (c.keptInOneRun) escapes = escapes.filter((e) => e.kind !== "end" && e.kind !== "return");
    // `return { acquired: true, handle }` where `handle` holds a function that unlocks: the caller holds it now.
    if (c.nestedReleases && c.nestedReleases.length > 0)
      escapes = escapes.filter((e) => !(e.kind === "return" && handsOver(sourceCode, e.node, c.nestedReleases!)));
    // `return client`: the connection that holds the session lock goes to the caller, and the lock with it.
    if (c.heldBy) escapes = escapes.filter((e) => !(e.kind === "return" && returnsVariable(e.node, c.heldBy!)));
    // `return held`: the caller learns whether the lock was taken, and holds it from there (an `acquire()` beside a
    // `release()`; blind-17 D17d07).
    if (c.outcome)
      escapes = escapes.filter(
        (e) => !(e.kind === "return" && [...c.outcome!].some((v) => returnsVariable(e.node, v))),
      );
    // `catch (e) { if (lockValue) await release(key, lockValue); throw e }`: the way past the release is taken only
    // when the acquire's result is empty, that is when nothing was taken.
    const held = resultName(c.acquire);
    if (held) escapes = escapes.filter((e) => !afterReleaseWhenTaken(sourceCode, e.node, held, releases));
    // `if (result.acquired) { acquired = true; break }` … `if (!acquired) throw …`: the way out under a test that the
    // held region's own mark is unset is taken only when the lock was never won (blind-10 B8b11).
    if (region) escapes = escapes.filter((e) => !whenNotMarked(e.node, region));
    // An in-process guard of a function whose every caller ends the process when it rejects
    // (`run().catch(() => process.exit(1))`): the guard dies with the process, so a rejection wedges nothing.
    if (
      (c.kind === "flag" || c.kind === "table" || c.kind === "mutex") &&
      escapes.some((e) => e.kind === "await" || e.kind === "throw") &&
      diesOnRejection(sourceCode, c.acquire, shape)
    ) {
      escapes = escapes.filter((e) => e.kind !== "await" && e.kind !== "throw");
    }
  }
  const early = c.skipPaths ? undefined : releasedEarly(sourceCode, c, shape);
  const untaken = releasedUntaken(sourceCode, c, tries) ?? releasedInCatchUntaken(c);
  return {
    kind: c.kind,
    name: c.name,
    acquire: c.acquire,
    releases: c.releases,
    ttl: c.ttl,
    escapes,
    ...(early ? { releasedEarly: early } : {}),
    ...(untaken ? { releasedUntaken: untaken } : {}),
    ...(c.setAfterAwait ? { setAfterAwait: c.setAfterAwait } : {}),
    ...(c.fulfilOnly ? { fulfilOnly: c.fulfilOnly } : {}),
    ...(c.sharesInFlight ? { sharesInFlight: true } : {}),
    ...(c.advisory ? { advisory: c.advisory } : {}),
  };
}

export function buildHeldLocks(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  kv: KvFacts,
  shape: ModuleShape,
  flags: readonly FlagWrite[],
  paths: PathRecorder,
  tables: readonly LockTable[] = [],
): HeldLock[] {
  const library = accesses.filter((a): a is LibraryLockOp => a.access === "library");
  const advisory = accesses.filter((a): a is AdvisoryLockOp => a.access === "advisory");
  const candidates = [
    ...inProcessLocks(sourceCode, library),
    ...kvLocks(kv),
    ...advisoryLocks(sourceCode, advisory, shape),
    ...flagLocks(sourceCode, flags, shape.calls),
    ...tableLocks(tables),
  ];
  const rejections = new Rejections(shape);
  const held = candidates.map((c) => analyse(sourceCode, c, paths, shape, rejections));
  // A Lambda function's process serves one invocation at a time: two calls never race on its in-process locks, so
  // neither a guard set after an await nor a `finally` that frees a guard the call never took can hand it to another
  // (blind-11 E9e02). A guard left set after a failure still stays set for the next invocation.
  if (!servesOneInvocationAtATime(sourceCode.ast as TSESTree.Program)) return held;
  return held.map((h) => {
    if (h.kind !== "flag" && h.kind !== "table" && h.kind !== "mutex") return h;
    const rest: { -readonly [K in keyof HeldLock]: HeldLock[K] } = { ...h };
    delete rest.releasedUntaken;
    delete rest.setAfterAwait;
    return rest;
  });
}
