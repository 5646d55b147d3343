/**
 * In-process lock tables (`LockTable` in model/held-locks.ts): a `Map` or a `Set` the module keeps, whose entry for a key is set after a
 * test that turns the caller away while the key is present, and deleted when the holder is done.
 *
 * Behaviour decides what is a lock, as for keys and rows: the acquire is a set dominated by a presence test whose
 * branch leaves (`if (locks.has(key)) return`), with no `await` in between (one turn of the event loop, so the test
 * and the set are one step); and the table is deleted from afterwards: by the acquiring function itself after it
 * awaited the work (whatever the names), by a release the table's or the functions' names call a lock (or the
 * functions are named `acquire…`/`release…`), or in the acquiring function's `finally`. A cache filled on a miss uses what it finds and is
 * not turned away; a throttle never deletes after the work. Both stay out.
 *
 * The table dies with its process, so a crash frees it; an error does not. The holder's own deletes are its releases
 * (`tableLocks` in held-locks/candidates.ts hands them to `release-in-finally`, which asks whether every way out of
 * the work passes one). Q3 is asked only once an entry can be freed by age: an old entry
 * deleted or replaced by the next caller (a take-over), a test that treats an expired entry as free, or a timer
 * that deletes it. Then a holder that outlived its entry and deletes by key alone frees the entry of the caller that
 * took over. A delete under any equality test (`if (locks.get(key) === mine)`, `v.holder === guid`) is taken as
 * checking the owner: unknown stays unknown.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, StateAccess, TableOp } from "../model/accesses.js";
import type { LockTable } from "../model/held-locks.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { contains, exits, expressionName } from "../reading/ast.js";
import { guardsOf } from "../reading/guards.js";
import { returnedValues } from "../reading/calls.js";
import { classOf, enclosingFunction, functionName, isFunction } from "../reading/units.js";
import { findVariable, getConstInit, unwrap } from "../reading/values.js";
import { readsClock } from "../reading/clock.js";
import { walk } from "../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Fn = TSESTree.FunctionLike;

/** Names that call a table, or the functions taking and freeing its entries, a lock. */
const LOCK_NAME = /lock|mutex|in_?flight|busy/i;
/** Verbs that name a function taking or ending a hold (`acquireSlot`, `releaseChat`). */
const HOLD_VERB = /^(acquire|release)/i;

/** The clock: a reading, a const holding one, or a call of a module function that returns one (`_now()`). */
function isClock(sourceCode: SourceCode, node: Node, depth = 0): boolean {
  const n = unwrap(node);
  if (readsClock(sourceCode, n)) return true;
  if (depth > 2) return false;
  if (n.type === "CallExpression") return returnedValues(sourceCode, n).some((v) => isClock(sourceCode, v, depth + 1));
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    return init !== undefined && init.type !== "TSEnumDeclaration" && isClock(sourceCode, init, depth + 1);
  }
  return false;
}

/** The identifier a table read is kept in (`const existing = locks.get(key)`). */
function binding(op: TableOp): TSESTree.Identifier | undefined {
  const p = op.node.parent;
  return p?.type === "VariableDeclarator" && p.init === op.node && p.id.type === "Identifier" ? p.id : undefined;
}

/** Whether `test` reads the table: one of `reads` inside it, or the variable one of them is kept in. */
function readsTable(sourceCode: SourceCode, test: Node, reads: readonly TableOp[]): boolean {
  for (const r of reads) {
    if (contains(test, r.node)) return true;
    const id = binding(r);
    const variable = id && findVariable(sourceCode, id);
    if (variable?.references.some((ref) => !ref.isWrite() && contains(test, ref.identifier))) return true;
  }
  return false;
}

/** `test` compares something with the clock (`now - entry.at > TTL`, `held > now`). */
function comparesClock(sourceCode: SourceCode, test: Node): boolean {
  let found = false;
  walk(test, (n) => {
    if (found || isFunction(n)) return false;
    if (n.type === "BinaryExpression" && /^[<>]=?$/.test(n.operator)) {
      const sides: Node[] = [];
      for (const s of [n.left, n.right]) {
        const u = unwrap(s as Node);
        if (u.type === "BinaryExpression" && (u.operator === "-" || u.operator === "+"))
          sides.push(u.left as Node, u.right);
        else sides.push(u);
      }
      if (sides.some((s) => isClock(sourceCode, s))) found = true;
    }
    return true;
  });
  return found;
}

/** The first `await` in `node`, outside nested functions. */
function firstAwait(node: Node): Node | undefined {
  let found: Node | undefined;
  walk(node, (n) => {
    if (found || (n !== node && isFunction(n))) return false;
    if (n.type === "AwaitExpression") found = n;
    return true;
  });
  return found;
}

/**
 * `if (locks.has(key)) { await locks.get(key); } locks.set(key, mine)`: the caller waits for the holder it found and
 * then takes the key without testing it again. When the holder is done, every caller that waited wakes and sets its
 * own entry: two or more hold the key at once. The `await` of the wait, when the set follows such an `if` within one
 * turn of the event loop; a loop that tests again (`while (locks.has(key)) await …`) is a sound wait.
 */
function waitedTest(
  sourceCode: SourceCode,
  set: TableOp,
  reads: readonly TableOp[],
): { test: TSESTree.IfStatement; wait: Node } | undefined {
  const fn = enclosingFunction(set.node);
  if (!fn) return undefined;
  const own = reads.filter((r) => enclosingFunction(r.node) === fn && r.node.range[0] < set.node.range[0]);
  for (const r of own) {
    const stmt = ifOfTest(r.node, fn);
    if (!stmt || stmt.alternate || stmt.range[1] > set.node.range[0] || exits(stmt.consequent)) continue;
    if (unwrap(stmt.test).type === "UnaryExpression") continue;
    const wait = firstAwait(stmt.consequent);
    if (wait && !waitsBetween(fn, stmt.range[1], set.node.range[0])) return { test: stmt, wait };
  }
  return undefined;
}

/** An `await` or `yield` between two points of a function, outside nested functions. */
function waitsBetween(fn: Fn, from: number, to: number): boolean {
  let found = false;
  const body = fn.body;
  if (!body) return false;
  walk(body, (n) => {
    if (found || n.range[1] <= from || n.range[0] >= to) return false;
    if (n !== body && isFunction(n)) return false;
    if ((n.type === "AwaitExpression" || n.type === "YieldExpression") && n.range[0] >= from) found = true;
    return true;
  });
  return found;
}

/** The set stores an object literal with a flag field set to false (`{ attempts, isProcessing: false }`). */
function setsFlagFalse(set: TableOp, vocabulary: ResolvedVocabulary): boolean {
  const value = set.valueNode && unwrap(set.valueNode);
  if (value?.type !== "ObjectExpression") return false;
  return value.properties.some((p) => {
    if (p.type !== "Property" || p.computed || p.key.type !== "Identifier") return false;
    const v = unwrap(p.value as Node);
    return (
      v.type === "Literal" &&
      v.value === false &&
      (vocabulary.isFlagField(p.key.name) || /^(?:is|has)[A-Z]/.test(p.key.name))
    );
  });
}

/** The `if` whose test holds `node`, within `fn`. */
function ifOfTest(node: Node, fn: Fn): TSESTree.IfStatement | undefined {
  for (let p = node.parent; p && p !== fn; p = p.parent) {
    if (p.type === "IfStatement") return contains(p.test, node) ? p : undefined;
    if (isFunction(p)) return undefined;
  }
  return undefined;
}

/**
 * The branch hands back what it found in the table (`return hit.value`, `return inflight.get(key)`): a cache or a
 * join of work in flight, which uses the entry rather than turning the caller away.
 */
function returnsFound(sourceCode: SourceCode, branch: Node, reads: readonly TableOp[]): boolean {
  let found = false;
  walk(branch, (n) => {
    if (found || isFunction(n)) return false;
    if (n.type === "ReturnStatement" && n.argument && readsTable(sourceCode, n.argument, reads)) found = true;
    return true;
  });
  return found;
}

/**
 * The set stores a promise its function then awaits and deletes after (`pending.set(key, work); const r = await work;
 * pending.delete(key)`): an in-flight entry, held for the length of the work. A caller that finds it and returns it
 * (`if (p) return await p`) shares the work in flight rather than reading a cache.
 */
function awaitedThenDeleted(sourceCode: SourceCode, set: TableOp, deletes: readonly TableOp[]): boolean {
  const value = set.valueNode && unwrap(set.valueNode);
  const fn = enclosingFunction(set.node);
  if (value?.type !== "Identifier" || !fn?.body) return false;
  const variable = findVariable(sourceCode, value);
  let awaited: Node | undefined;
  walk(fn.body, (n) => {
    if (awaited || (n !== fn.body && isFunction(n))) return false;
    if (
      n.type === "AwaitExpression" &&
      n.range[0] > set.node.range[1] &&
      unwrap(n.argument).type === "Identifier" &&
      findVariable(sourceCode, unwrap(n.argument) as TSESTree.Identifier) === variable
    )
      awaited = n;
    return true;
  });
  // A delete made only in a `catch` evicts a failure from a cache of results (`catch (e) { cache.delete(key); throw e
  // }`: "don't cache a failed load, let the next call retry"): the entry is kept once the work succeeds, so it is no
  // hold, and a rejection leaves nothing behind.
  return (
    awaited !== undefined &&
    deletes.some((d) => enclosingFunction(d.node) === fn && d.node.range[0] > awaited!.range[1] && !inCatch(d.node, fn))
  );
}

/** `node` sits in a `catch` clause of `fn` (not in a nested function). */
function inCatch(node: Node, fn: Node): boolean {
  for (let p = node.parent; p && p !== fn; p = p.parent) {
    if (p.type === "CatchClause") return true;
    if (isFunction(p)) return false;
  }
  return false;
}

/**
 * The presence test a set is taken after: an `if` before it, in its function, whose test reads the table and whose
 * branch leaves (`if (locks.has(key)) return`), or an `if (!locks.has(key))` the set sits in.
 */
function presenceTest(
  sourceCode: SourceCode,
  set: TableOp,
  reads: readonly TableOp[],
  deletes: readonly TableOp[],
): TSESTree.IfStatement | TSESTree.WhileStatement | undefined {
  const fn = enclosingFunction(set.node);
  if (!fn) return undefined;
  const own = reads.filter((r) => enclosingFunction(r.node) === fn && r.node.range[0] < set.node.range[0]);
  for (const r of own) {
    const use = binding(r);
    const uses: Node[] = [r.node];
    const variable = use && findVariable(sourceCode, use);
    for (const ref of variable?.references ?? []) if (!ref.isWrite()) uses.push(ref.identifier);
    for (const u of uses) {
      const stmt = ifOfTest(u, fn);
      if (!stmt || contains(stmt.test, set.node)) continue;
      const leaves =
        exits(stmt.consequent) &&
        stmt.range[1] <= set.node.range[0] &&
        (!returnsFound(sourceCode, stmt.consequent, own) || awaitedThenDeleted(sourceCode, set, deletes));
      // `if (!locks.has(key)) { … set … }`, or the `else` of `if (locks.has(key)) { … }`.
      const negated =
        (unwrap(stmt.test).type === "UnaryExpression" && contains(stmt.consequent, set.node)) ||
        (unwrap(stmt.test).type !== "UnaryExpression" && contains(stmt.alternate, set.node));
      // No wait between the test and the set on the path that reaches the set: an `await` in the branch that leaves
      // (`if (busy.has(id)) { return await reply("busy") }`) is the turned-away caller's, not the taker's.
      const from = leaves
        ? stmt.consequent.range[1]
        : contains(stmt.alternate, set.node)
          ? stmt.alternate!.range[0]
          : stmt.range[0];
      if (
        (leaves || negated) &&
        !waitsBetween(fn, stmt.test.range[0], stmt.test.range[1]) &&
        !waitsBetween(fn, from, set.node.range[0])
      )
        return stmt;
    }
  }
  return waitLoop(set, own);
}

/**
 * `while (locks.has(key)) await locks.get(key); locks.set(key, mine)`: a wait that tests again after each wake, the
 * set in the same turn as the last test. The loop is the presence test: the caller is held back, not turned away, and
 * takes the key only once it is free.
 */
function waitLoop(set: TableOp, own: readonly TableOp[]): TSESTree.WhileStatement | undefined {
  const fn = enclosingFunction(set.node);
  if (!fn) return undefined;
  for (const r of own) {
    let loop: TSESTree.WhileStatement | undefined;
    for (let p: Node | undefined = r.node.parent; p && p !== fn && !isFunction(p); p = p.parent) {
      if (p.type === "WhileStatement") {
        loop = contains(p.test, r.node) ? p : undefined;
        break;
      }
    }
    if (!loop || loop.range[1] > set.node.range[0] || !firstAwait(loop.body)) continue;
    if (!waitsBetween(fn, loop.range[1], set.node.range[0])) return loop;
  }
  return undefined;
}

function hasEquality(test: Node): boolean {
  let equality = false;
  walk(test, (n) => {
    if (n.type === "BinaryExpression" && /^[!=]==?$/.test(n.operator)) equality = true;
    return !equality && !isFunction(n);
  });
  return equality;
}

/**
 * An `if` with an equality that leaves, nested in a statement before the node in its block (`if (userId) { if
 * (lock.userId !== userId) return false; }` before the delete): the release checks the owner where it is told one
 * (blind-9 BA04). In-process, nothing runs between that test and the delete.
 */
function leavesOnOwnerTest(node: Node): boolean {
  for (let child: Node = node, p = node.parent; p && !isFunction(p); child = p, p = p.parent) {
    if (p.type !== "BlockStatement" && p.type !== "Program") continue;
    for (const stmt of p.body as Node[]) {
      if (stmt.range[0] >= child.range[0]) break;
      let found = false;
      walk(stmt, (n) => {
        if (n.type === "IfStatement" && exits(n.consequent) && hasEquality(n.test)) found = true;
        return !found && !isFunction(n);
      });
      if (found) return true;
    }
  }
  return false;
}

/**
 * The tests of the branches a node sits in, in its own function. Not `guardsOf`'s earlier early exits: an acquire's
 * expiry test (`if (held > now) return false`) is no condition of the release that follows it.
 */
function enclosingTests(node: Node): Node[] {
  const tests: Node[] = [];
  for (let p = node.parent; p && !isFunction(p); p = p.parent) {
    const test =
      p.type === "IfStatement" || p.type === "ConditionalExpression"
        ? p.test
        : p.type === "LogicalExpression"
          ? p.left
          : undefined;
    if (test && !contains(test, node)) tests.push(test);
  }
  return tests;
}

/** In a loop over the table's own entries (`for (const [key, lock] of locks)`): a bulk clear, not a holder's release. */
function inLoopOver(node: Node, table: string, sourceCode: SourceCode): boolean {
  for (let p = node.parent; p && !isFunction(p); p = p.parent) {
    if (p.type !== "ForOfStatement") continue;
    const over = sourceCode.getText(p.right);
    if (over === table || over.startsWith(`${table}.`)) return true;
  }
  return false;
}

function inFinallyOf(node: Node, fn: Fn): boolean {
  for (let p = node.parent; p && p !== fn; p = p.parent) {
    if (p.type === "TryStatement" && p.finalizer && contains(p.finalizer, node)) return true;
  }
  return false;
}

/** A table every call of the module shares: a class field, or a variable declared outside every function. */
function outlivesCalls(sourceCode: SourceCode, op: TableOp): boolean {
  if (op.table.startsWith("this.")) return true;
  const callee = unwrap((op.node as TSESTree.CallExpression).callee);
  const receiver = callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
  if (receiver?.type !== "Identifier") return false;
  const def = findVariable(sourceCode, receiver)?.defs[0];
  return def !== undefined && enclosingFunction(def.node) === undefined;
}

/** `emitter.on("finish", listener)`: the event a function is registered for, and the registration. */
function listenedEvent(fn: Fn | undefined): { event: string; call: TSESTree.CallExpression } | undefined {
  const call = fn?.parent;
  if (call?.type !== "CallExpression" || call.arguments[1] !== fn) return undefined;
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier") return undefined;
  if (!/^(?:on|once|addListener|prependListener|prependOnceListener)$/.test(callee.property.name)) return undefined;
  const event = call.arguments[0];
  return event?.type === "Literal" && typeof event.value === "string" ? { event: event.value, call } : undefined;
}

/**
 * The registration of a `finish` listener on an HTTP response that makes every one of these releases, where no
 * `close` listener makes one (`LockTable.releasedOnFinishOnly`); undefined otherwise, and where any release runs
 * outside a listener.
 */
function finishOnly(releases: readonly Node[]): Node | undefined {
  const events = releases.map((r) => listenedEvent(enclosingFunction(r)));
  if (events.length === 0 || events.some((e) => e === undefined)) return undefined;
  if (events.some((e) => e!.event !== "finish")) return undefined;
  // On an HTTP response (`res`, `reply.raw`, `ctx.res`): what its client does decides whether `finish` comes.
  const name = expressionName(unwrap((events[0]!.call.callee as TSESTree.MemberExpression).object));
  return name !== undefined && /^(?:res|resp|response|reply|raw|outgoing)$/i.test(name) ? events[0]!.call : undefined;
}

/** The `setTimeout(…)` call whose callback `node` runs in, directly (`setTimeout(() => locks.delete(key), ttl)`). */
function timerOf(node: Node): TSESTree.CallExpression | undefined {
  const fn = enclosingFunction(node);
  const call = fn?.parent;
  if (call?.type !== "CallExpression" || call.arguments[0] !== fn) return undefined;
  const callee = unwrap(call.callee);
  return callee.type === "Identifier" && callee.name === "setTimeout" ? call : undefined;
}

function nameOf(fn: Fn | undefined): string {
  return (fn && functionName(fn)) ?? "";
}

export function buildLockTables(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  vocabulary: ResolvedVocabulary,
): LockTable[] {
  const ops = accesses.filter((a): a is TableOp => a.access === "table");
  if (!ops.some((o) => o.op === "set")) return [];
  // One table per receiver text, and per class for fields.
  const groups = new Map<string, TableOp[]>();
  for (const o of ops) {
    const id = `${o.table}@${o.table.startsWith("this.") ? (classOf(o.node)?.range[0] ?? -1) : -1}`;
    groups.set(id, [...(groups.get(id) ?? []), o]);
  }
  const out: LockTable[] = [];
  for (const group of groups.values()) {
    const reads = group.filter((o) => o.op === "has" || o.op === "get");
    const deletes = group.filter((o) => o.op === "delete");
    if (deletes.length === 0) continue;
    // Entries that are records with a flag the module sets false in place (`set(id, { …, isProcessing: false })`):
    // the flag in the record is the hold, and an entry present says nothing of it (blind-13's crash run).
    if (group.some((o) => o.op === "set" && setsFlagFalse(o, vocabulary))) continue;
    for (const acquire of group.filter((o) => o.op === "set")) {
      const turnedAway = presenceTest(sourceCode, acquire, reads, deletes);
      const inFlight = turnedAway?.type === "IfStatement" && returnsFound(sourceCode, turnedAway.consequent, reads);
      const waited = turnedAway ? undefined : waitedTest(sourceCode, acquire, reads);
      const test = turnedAway ?? waited?.test;
      if (!test) continue;
      const fn = enclosingFunction(acquire.node)!;
      const body = fn.body;
      if (!body) continue;
      // How an entry is freed by age.
      let expiry: LockTable["expiry"];
      const freedBy = new Set<Node>();
      const own = reads.filter((r) => enclosingFunction(r.node) === fn && r.node.range[0] < acquire.node.range[0]);
      walk(body, (n) => {
        if (n !== body && isFunction(n)) return false;
        if (n.range[0] >= acquire.node.range[0]) return false;
        if (n.type === "IfStatement" && readsTable(sourceCode, n.test, own) && comparesClock(sourceCode, n.test)) {
          const frees = group.filter(
            (o) => o !== acquire && (o.op === "delete" || o.op === "set") && contains(n.consequent, o.node),
          );
          if (frees.length > 0) {
            expiry ??= { node: n.test, kind: "takeover" };
            for (const f of frees) freedBy.add(f.node);
          } else if (n === test) expiry ??= { node: n.test, kind: "expires" };
        }
        return true;
      });
      // `setTimeout(() => locks.delete(key), ttl)`: made with the entry, or by another function of the module that
      // sets one (an `extend` that restarts the entry's timer). A timer's delete is the entry's expiry, not a holder's
      // release: whether it frees a newer holder's entry depends on the timers the releases cancel, which the
      // holder's own release answers (blind-13 F13d13, and a lock stub in the crash run).
      for (const d of deletes) {
        const timer = timerOf(d.node);
        if (!timer) continue;
        if (!expiry || (expiry.kind === "timer" && !contains(body, expiry.node) && contains(body, timer)))
          expiry = { node: timer, kind: "timer" };
        freedBy.add(d.node);
      }
      // A delete under a test of the clock (`if (lock.expiresAt <= now)`) frees expired entries: a sweep.
      for (const d of deletes) {
        if (freedBy.has(d.node) || !enclosingTests(d.node).some((t) => comparesClock(sourceCode, t))) continue;
        expiry ??= { node: d.node, kind: "sweep" };
        freedBy.add(d.node);
      }
      // Checked as the entry's owner: under an equality test (`if (locks.get(key) === mine)`), or after a guard with
      // one that leaves (`if (entry.owner !== token) return false`). Any equality counts: unknown stays unknown.
      const releases = deletes
        .filter((d) => !freedBy.has(d.node) && !inLoopOver(d.node, d.table, sourceCode))
        .map((op) => ({
          op,
          ownerChecked:
            guardsOf(sourceCode, op.node, vocabulary).some((g) => hasEquality(g.test)) || leavesOnOwnerTest(op.node),
        }));
      if (releases.length === 0) continue;
      const heldName = (name: string) => LOCK_NAME.test(name) || HOLD_VERB.test(name);
      // Held across work, whatever the names: the same function deletes the entry after an `await` that follows the
      // entry's set (`if (running.has(id)) return; running.add(id); await sync(id); running.delete(id)`), on a table
      // that outlives the calls. A cache or a dedupe set keeps its entries; a throttle deletes them by a timer, not
      // after the work; a `visited` set of one traversal (made in the outer call, taken back as a recursion returns)
      // lives no longer than the call.
      const heldAcrossWork =
        outlivesCalls(sourceCode, acquire) &&
        releases.some(
          (r) =>
            enclosingFunction(r.op.node) === fn &&
            r.op.node.range[0] > acquire.node.range[1] &&
            waitsBetween(fn, acquire.node.range[1], r.op.node.range[0]),
        );
      // Or held until an event of the work's own ends: every release in a listener the acquiring function registers
      // after the set (`res.on("finish", () => locks.delete(key))`, a middleware holding the key for its request).
      const heldUntilEvent =
        outlivesCalls(sourceCode, acquire) &&
        releases.every((r) => {
          const listener = listenedEvent(enclosingFunction(r.op.node));
          return (
            listener !== undefined &&
            enclosingFunction(listener.call) === fn &&
            listener.call.range[0] > acquire.node.range[1]
          );
        });
      const named =
        LOCK_NAME.test(acquire.table) ||
        heldName(nameOf(fn)) ||
        heldAcrossWork ||
        heldUntilEvent ||
        releases.some((r) => heldName(nameOf(enclosingFunction(r.op.node))) || inFinallyOf(r.op.node, fn));
      if (!named) continue;
      const onFinish = finishOnly(releases.map((r) => r.op.node));
      out.push({
        table: acquire.table,
        acquire,
        test,
        ...(expiry ? { expiry } : {}),
        ...(waited ? { waited: waited.wait } : {}),
        releases,
        ...(onFinish ? { releasedOnFinishOnly: onFinish } : {}),
        ...(inFlight ? { sharesInFlight: true } : {}),
      });
    }
  }
  return out;
}
