/**
 * The kinds of held lock (`Candidate`): in-process mutexes and lock libraries, key-value locks, PostgreSQL session
 * advisory locks and boolean guards, each with the releases its acquiring function makes.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, LibraryLockOp, Node } from "../../model/accesses.js";
import { sessionsShared } from "../../model/accesses.js";
import type { KvFacts } from "../../model/kv-locks.js";
import type { HeldLock, HeldLockKind, LockTable } from "../../model/held-locks.js";
import type { ModuleShape } from "../../model/lock-facts.js";
import { calleeName, contains, exits, receiverText, runsAfter } from "../../reading/ast.js";
import { classOf, enclosingFunction, isFunction } from "../../reading/units.js";
import { findVariable, keyName, resultBinding, unwrap } from "../../reading/values.js";
import { calledFunction } from "../../reading/calls.js";
import { walk } from "../../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Variable = TSESLint.Scope.Variable;

export interface Candidate {
  readonly kind: HeldLockKind;
  readonly name: string;
  readonly acquire: Node;
  readonly releases: readonly Node[];
  /** Releases of keys taken from a list the holder filled only once each key was taken (`held.push(key)`). */
  readonly collectedReleases?: readonly Node[];
  readonly ttl: boolean;
  /** The acquire may fail without throwing: the paths where it failed hold nothing. */
  readonly try: boolean;
  readonly advisory?: HeldLock["advisory"];
  /** Skip the path analysis (the lock has a finding of its own that the paths would only repeat). */
  readonly skipPaths?: boolean;
  /** Calls that belong to taking the lock (the EXPIRE after a SETNX): `require-lock-ttl` reports their failure. */
  readonly protocol?: readonly Node[];
  /** A key-value lock whose releases here check no owner: a release by a caller that never took it frees the holder's. */
  readonly uncheckedRelease?: boolean;
  /** The MULTI or pipeline the acquire is queued on (`KvOp.batch`, resolved by the recognizer). */
  readonly batch?: Node;
  /** An in-process flag set only after an await that follows its test (`HeldLock.setAfterAwait`). */
  readonly setAfterAwait?: { readonly check: Node; readonly wait: Node };
  /**
   * Releases made in functions the acquiring function defines (`handle.release = async () => { unlock; end }`): a
   * `return` that hands such a function to the caller hands the lock over with it, and is no way out holding it.
   */
  readonly nestedReleases?: readonly Node[];
  /** An in-process flag cleared only when a promise chain the function starts fulfils (`HeldLock.fulfilOnly`). */
  readonly fulfilOnly?: HeldLock["fulfilOnly"];
  /**
   * The local variable holding what keeps the lock (a session advisory lock's connection): a `return` that gives it
   * to the caller hands the lock over with it (`return client`, `return { client, lockId }`).
   */
  readonly heldBy?: Variable;
  /**
   * The variables holding a try-acquire's outcome (`held = result.rows[0]?.acquired === true`): a `return` that gives
   * it to the caller (`return held`) says whether the lock was taken, and hands the lock over with it.
   */
  readonly outcome?: ReadonlySet<Variable>;
  /**
   * An in-process flag whose code runs on, from the set, without giving up the thread (no `await` after it): no other
   * call can find it set in between, so a way out that leaves it set keeps a state on purpose (a parser's `inString`, a
   * `paused` switch cleared when a later check says so), not a lock left held. Only a `throw` leaves it set by mistake.
   */
  readonly keptInOneRun?: boolean;
  /** A lock table whose entries are promises of work in flight, shared by the callers who find one. */
  readonly sharesInFlight?: boolean;
}

function calleeObject(call: Node): Node | undefined {
  if (call.type !== "CallExpression") return undefined;
  const callee = unwrap(call.callee);
  return callee.type === "MemberExpression" ? callee.object : undefined;
}

const sameFunction = (a: Node, b: Node) => enclosingFunction(a) === enclosingFunction(b);

/** The variable declarator an acquire's result is stored in: `const release = await mutex.acquire()`. */
export function resultDeclarator(acquire: Node): TSESTree.VariableDeclarator | undefined {
  let p = acquire.parent;
  if (p?.type === "AwaitExpression") p = p.parent;
  while (p && (p.type === "TSAsExpression" || p.type === "TSNonNullExpression")) p = p.parent;
  return p?.type === "VariableDeclarator" ? p : undefined;
}

/** Calls of the release function an acquire resolved to; undefined when the function is handed on. */
function releaseFunctionCalls(sourceCode: SourceCode, declarator: TSESTree.VariableDeclarator): Node[] | undefined {
  let id: Node | null = declarator.id;
  // async-mutex's Semaphore resolves `[value, release]`.
  if (id.type === "ArrayPattern") id = id.elements[1] ?? null;
  if (id?.type !== "Identifier") return undefined;
  const variable = findVariable(sourceCode, id);
  if (!variable) return undefined;
  const calls: Node[] = [];
  for (const ref of variable.references) {
    if (ref.init || ref.identifier === id) continue;
    const parent = ref.identifier.parent;
    if (parent?.type === "CallExpression" && parent.callee === ref.identifier) calls.push(parent);
    else return undefined;
  }
  return calls;
}

export function inProcessLocks(sourceCode: SourceCode, ops: readonly LibraryLockOp[]): Candidate[] {
  const out: Candidate[] = [];
  for (const op of ops) {
    if (op.op !== "acquire") continue;
    const call = op.node as TSESTree.CallExpression;
    // `lock.acquire(key, async () => …)` (async-lock): the library releases.
    if (call.arguments.some((a) => isFunction(a))) continue;
    const declarator = resultDeclarator(call);
    const ttl = op.library !== "in-process";
    // An in-process acquire may resolve to its release function; a Redlock acquire resolves to the lock object.
    const fromBinding = declarator && !ttl ? releaseFunctionCalls(sourceCode, declarator) : [];
    if (fromBinding === undefined) continue;
    const receiver = op.receiver ?? "";
    const viaReceiver = ops
      .filter((r) => r.op === "release" && r.library === op.library && r.receiver === receiver)
      .map((r) => r.node);
    // A Redlock lock's own release: `lock.release()`, `redlock.release(lock)`, v4 `lock.unlock()`.
    const lockVar = declarator?.id.type === "Identifier" ? declarator.id.name : undefined;
    const viaLock =
      lockVar && ttl
        ? ops
            .filter((r) => r.op === "release" && (r.receiver === lockVar || firstArgName(r.node) === lockVar))
            .map((r) => r.node)
        : [];
    const releases = [...fromBinding, ...viaReceiver, ...viaLock].filter((r) => sameFunction(r, call));
    if (releases.length === 0) continue;
    out.push({
      kind: ttl ? "library" : "mutex",
      name: receiver || sourceCode.getText(call.callee),
      acquire: call,
      releases,
      ttl,
      try: op.try === true,
    });
  }
  return out;
}

function firstArgName(node: Node): string | undefined {
  if (node.type !== "CallExpression") return undefined;
  const a = node.arguments[0];
  return a && unwrap(a).type === "Identifier" ? (unwrap(a) as TSESTree.Identifier).name : undefined;
}

export function kvLocks(kv: KvFacts): Candidate[] {
  const out: Candidate[] = [];
  const allReleases = [...kv.releases, ...kv.viaHelpers.releases];
  for (const lock of [...kv.locks, ...kv.viaHelpers.locks]) {
    if (!lock.lockLike) continue;
    const own = allReleases.filter((r) => r.lock === lock && sameFunction(r.op.node, lock.acquire.node));
    // A marker written over the lock ends the hold on its path, as a release does (it deletes nothing: not a release).
    const ended = (lock.endedBy ?? []).filter((o) => sameFunction(o.node, lock.acquire.node)).map((o) => o.node);
    const releases = [...own.map((r) => r.op.node), ...ended];
    if (own.length === 0) continue;
    // A key with an expiry freed only in branches that leave early (`if (claim.via !== "redis") { await
    // claim.release(); return skipped }`) and kept on the way that does the work: a mark held until it expires (a
    // day's dedupe key), not a lock its holder forgot (blind-9 B602). Unknown either way: not a hold to release.
    const fn = enclosingFunction(lock.acquire.node);
    if (lock.ttl === "present" && releases.every((r) => inLeavingBranch(r, fn))) continue;
    out.push({
      kind: "kv",
      name: lock.acquire.key.opaque ? lock.acquire.key.text.slice(1, -1) : lock.acquire.key.text,
      acquire: lock.acquire.node,
      releases,
      ttl: lock.ttl === "present" || lock.ttl === "separate" || lock.ttl === "unknown",
      try: true,
      ...(lock.expire ? { protocol: [lock.expire.node] } : {}),
      // A GET-compare-DEL is a race of its own (owner-checked-release says so), but a caller that never took the
      // key reads another's token there and deletes nothing (blind-9 B307).
      ...(own.every((r) => r.kind !== "owner-checked" && r.kind !== "get-compare") ? { uncheckedRelease: true } : {}),
      ...(lock.acquire.batch ? { batch: lock.acquire.batch } : {}),
      collectedReleases: own.filter((r) => r.op.key.local?.collected).map((r) => r.op.node),
    });
  }
  return out;
}

const CLOSE = new Set(["end", "destroy", "close"]);
/** Closing a pool (or an ORM's client) ends every connection it holds, and their session locks with them. */
const POOL_CLOSE = new Set(["end", "destroy", "close", "$disconnect", "disconnect"]);

/** `node` sits in the `finally` of a `try` that `fn` holds (directly, not in a nested function). */
function inFinallyOf(node: TSESTree.Node, fn: TSESTree.Node | undefined): boolean {
  for (let p = node.parent, child: TSESTree.Node = node; p && p !== fn; child = p, p = p.parent) {
    if (p.type === "TryStatement" && p.finalizer === child) return true;
    if (p.type.startsWith("Function") || p.type === "ArrowFunctionExpression") return false;
  }
  return false;
}

/**
 * The variables of the acquiring function that hold the outcome of the try-acquire `acquire`: its result, and values
 * computed from it in declarations and assignments (`held = result.rows[0]?.acquired === true`), two steps at most.
 */
function outcomeVariables(sourceCode: SourceCode, acquire: Node): Set<Variable> {
  const outcome = new Set<Variable>();
  const result = resultBinding(acquire);
  const fn = enclosingFunction(acquire);
  const first = result && findVariable(sourceCode, result);
  if (!fn || !first) return outcome;
  outcome.add(first);
  const mentions = (n: Node | null | undefined) => {
    let found = false;
    if (n)
      walk(n, (m) => {
        if (found || m.type !== "Identifier") return;
        const v = findVariable(sourceCode, m);
        if (v && outcome.has(v)) found = true;
      });
    return found;
  };
  for (let round = 0; round < 2; round++)
    walk(fn, (n) => {
      const target =
        n.type === "VariableDeclarator" && n.id.type === "Identifier" && mentions(n.init)
          ? n.id
          : n.type === "AssignmentExpression" && n.operator === "=" && n.left.type === "Identifier" && mentions(n.right)
            ? n.left
            : undefined;
      const v = target && findVariable(sourceCode, target);
      if (v) outcome.add(v);
    });
  return outcome;
}

/** The `if` statements after `acquire` that test that it was refused: `if (!held)`, `held` one of `outcome`. */
function refusedTests(sourceCode: SourceCode, acquire: Node, outcome: ReadonlySet<Variable>): TSESTree.IfStatement[] {
  const fn = enclosingFunction(acquire);
  const out: TSESTree.IfStatement[] = [];
  if (!fn || outcome.size === 0) return out;
  walk(fn, (n) => {
    if (n.type !== "IfStatement" || n.range[0] < acquire.range[1]) return;
    const t = unwrap(n.test);
    const arg = t.type === "UnaryExpression" && t.operator === "!" ? unwrap(t.argument) : undefined;
    const v = arg?.type === "Identifier" ? findVariable(sourceCode, arg) : undefined;
    if (v && outcome.has(v)) out.push(n);
  });
  return out;
}

/** `node` runs only in the consequent of one of `tests`. */
function underRefusal(node: Node, tests: readonly TSESTree.IfStatement[]): boolean {
  return tests.some((t) => contains(t.consequent, node));
}

export function advisoryLocks(sourceCode: SourceCode, ops: readonly AdvisoryLockOp[], shape: ModuleShape): Candidate[] {
  const out: Candidate[] = [];
  const onClient = (call: TSESTree.CallExpression, client: string) => {
    const object = calleeObject(call);
    return object !== undefined && receiverText(sourceCode, object) === client;
  };
  for (const op of ops) {
    if (op.fn !== "lock" || op.scope !== "session") continue;
    // A pool the lock's function closes in its `finally` (`finally { await prisma.$disconnect() }`, a one-shot
    // program's): every connection of it ends there, and the session locks on them, whichever the unlock reached.
    const owner0 = enclosingFunction(op.node);
    if (
      sessionsShared(op.via) &&
      shape.calls.some((c) => onClient(c, op.client) && POOL_CLOSE.has(calleeName(c) ?? "") && inFinallyOf(c, owner0))
    )
      continue;
    const unlocks = ops.filter((u) => u.fn !== "lock" && u.client === op.client);
    // Ending the session ends its locks: `client.end()`, `client.release(true)` (pg destroys it), `destroy()`.
    const closes = shape.calls.filter(
      (c) =>
        onClient(c, op.client) &&
        (CLOSE.has(calleeName(c) ?? "") || (calleeName(c) === "release" && c.arguments.length > 0)),
    );
    const returns = shape.calls.filter(
      (c) => onClient(c, op.client) && calleeName(c) === "release" && c.arguments.length === 0,
    );
    const neverUnlocked = unlocks.length === 0 && closes.length === 0;
    const owner = enclosingFunction(op.node);
    // The unlocks that answer this lock: those of its own function (or nested in it); where it has none (an
    // `acquire()` beside a `release()`), those of functions that take no lock of their own on the client. A module
    // with three `withLock` variants has three unlocks, each its own lock's, not nine.
    const pooled = unlocks.filter((u) => sessionsShared(u.via));
    const inOwn = pooled.filter(
      (u) => sameFunction(u.node, op.node) || (owner !== undefined && contains(owner, u.node)),
    );
    const lockFree = pooled.filter(
      (u) => !ops.some((l) => l.fn === "lock" && l.client === op.client && sameFunction(l.node, u.node)),
    );
    const pooledUnlocks = sessionsShared(op.via) ? (inOwn.length > 0 ? inOwn : lockFree).map((u) => u.node) : [];
    // A close on the way taken when the lock was refused (`if (!held) await client.end()`) ends an attempt that holds
    // nothing: no release of the lock, which a function like this hands to its caller (`return held`).
    const outcome = op.try ? outcomeVariables(sourceCode, op.node) : new Set<Variable>();
    const refused = refusedTests(sourceCode, op.node, outcome);
    const releases = [...unlocks.map((u) => u.node), ...closes].filter(
      (r) => sameFunction(r, op.node) && !underRefusal(r, refused),
    );
    const nestedReleases = [...unlocks.map((u) => u.node), ...closes].filter(
      (r) => !sameFunction(r, op.node) && owner !== undefined && contains(owner, r),
    );
    const advisory: HeldLock["advisory"] = {
      via: op.via,
      pooledUnlocks,
      neverUnlocked,
      ...(neverUnlocked && returns[0] ? { returnedToPool: returns[0] } : {}),
      ...(op.helper ? { helper: op.helper } : {}),
    };
    // The connection in a local variable (`const client = new Client(…)`): returning it returns its session's lock.
    const clientNode = calleeObject(op.node);
    const clientId = clientNode && unwrap(clientNode);
    const heldBy = clientId?.type === "Identifier" ? findVariable(sourceCode, clientId) : undefined;
    out.push({
      kind: "advisory",
      name: op.dialect === "mysql" ? "GET_LOCK" : op.try ? "pg_try_advisory_lock" : "pg_advisory_lock",
      ...(heldBy && heldBy.defs[0]?.type === "Variable" ? { heldBy } : {}),
      acquire: op.node,
      releases,
      ttl: false,
      try: op.try,
      advisory,
      ...(nestedReleases.length > 0 ? { nestedReleases } : {}),
      ...(outcome.size > 0 ? { outcome } : {}),
      skipPaths:
        sessionsShared(op.via) ||
        (neverUnlocked && (op.via === "transaction" || returns.length > 0)) ||
        releases.length === 0,
    });
  }
  return out;
}

/**
 * The variable (or `this` field name) a guard assignment targets, or a slot of an object, an array or a record kept
 * beyond the call (`runningJobs[index]`, `inFlight[userId]`, `state.busy`, `this.locks[key]`): a flag kept per key.
 * Such a slot is one guard by its base and the text of its key, so `locks[id] = true` and `delete locks[id]` in one
 * function are the same flag. Its base lives at module level or in a field of `this`: a table declared in an
 * enclosing function (a traversal's `visited`) is the state of one call and guards nothing across calls.
 */
function flagTarget(sourceCode: SourceCode, node: Node): { key: Variable | string; text: string } | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") {
    const variable = findVariable(sourceCode, n);
    const def = variable?.defs[0];
    if (!variable || !def || def.type !== "Variable" || def.parent.kind === "const") return undefined;
    return { key: variable, text: n.name };
  }
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression" && !n.computed) {
    const name = keyName(n.property, n.computed);
    return name ? { key: `this.${name}`, text: `this.${name}` } : undefined;
  }
  if (n.type === "MemberExpression" && n.property.type !== "PrivateIdentifier") {
    const base = lastingBase(sourceCode, n.object);
    if (!base) return undefined;
    const key = n.computed ? sourceCode.getText(n.property).replace(/\s+/g, "") : n.property.name;
    const text = `${base.text}${n.computed ? `[${key}]` : `.${key}`}`;
    return { key: `${base.key}${n.computed ? `[${key}]` : `.${key}`}`, text };
  }
  return undefined;
}

/**
 * The base of a flag slot, when it outlives the call: a module-level variable, a class (its static field,
 * `FetchTask.isLocked`, one for every instance) or a field of `this`, by identity.
 */
function lastingBase(sourceCode: SourceCode, node: Node): { key: string; text: string } | undefined {
  const n = unwrap(node);
  if (n.type === "MemberExpression" && !n.computed && unwrap(n.object).type === "ThisExpression") {
    const name = keyName(n.property, n.computed);
    return name ? { key: `this.${name}`, text: `this.${name}` } : undefined;
  }
  if (n.type !== "Identifier") return undefined;
  const variable = findVariable(sourceCode, n);
  const def = variable?.defs[0];
  if (!variable || variable.defs.length !== 1 || (def?.type !== "Variable" && def?.type !== "ClassName"))
    return undefined;
  if (variable.scope.type !== "module" && variable.scope.type !== "global" && variable.scope.type !== "class")
    return undefined;
  return { key: `${n.name}@${def.node.range[0]}`, text: n.name };
}

/**
 * The test of the flag the function passes on its way to setting it, and an `await` of the function between that test
 * and the set (not in a nested function): the event loop runs other calls there, which pass the same test. Undefined
 * when the set follows its test with no await between, which JavaScript runs without interruption. The flag must be
 * held past the set: the function awaits after it, or (`heldPast`) a callback it hands on after the set clears it.
 */
function setAfterAwait(
  sourceCode: SourceCode,
  assignment: TSESTree.AssignmentExpression,
  target: { key: Variable | string },
  heldPast = false,
): { check: Node; wait: Node } | undefined {
  const test = flagTest(sourceCode, assignment, target);
  const fn = enclosingFunction(assignment);
  if (!test || !fn) return undefined;
  let wait: Node | undefined;
  walk(fn.body as Node, (n) => {
    if (wait || (n !== fn.body && isFunction(n))) return false;
    if (
      (n.type === "AwaitExpression" || (n.type === "ForOfStatement" && n.await)) &&
      n.range[0] > test.range[1] &&
      n.range[1] <= assignment.range[0] &&
      !inLeavingBranchOf(n, assignment, fn)
    )
      wait = n;
    return true;
  });
  return wait && (heldPast || awaitsAfter(assignment, fn)) ? { check: test, wait } : undefined;
}

/**
 * The function awaits something after `node` on its way on (the statements after it in each enclosing block, up to a
 * `return` or `throw`): the flag is held across work. A flag set last, as the mark that the awaited step before it was
 * done once (`if (!this.queued) { await redis.rpush(…); this.queued = true; return … }`), holds nothing.
 */
function awaitsAfter(node: Node, fn: TSESTree.FunctionLike | undefined, yields = false): boolean {
  for (let child: Node = node, p = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "BlockStatement" && p.type !== "Program") continue;
    for (const st of p.body.slice(p.body.indexOf(child as TSESTree.Statement) + 1)) {
      let found = false;
      walk(st, (n) => {
        if (found || isFunction(n)) return false;
        if (n.type === "AwaitExpression" || (n.type === "ForOfStatement" && n.await)) found = true;
        if (yields && n.type === "YieldExpression") found = true;
        return !found;
      });
      if (found) return true;
      if (st.type === "ReturnStatement" || st.type === "ThrowStatement") return false;
    }
  }
  return false;
}

/**
 * The code that runs on from `node` can give up the thread: it awaits, or yields to a generator's caller, which resumes
 * it later (`awaitsAfter`). A top-level set (`fn` undefined) is read over the module's statements.
 */
function waitsAfter(node: Node, fn: TSESTree.FunctionLike | undefined): boolean {
  return awaitsAfter(node, fn, fn?.generator === true);
}

/**
 * `node` sits in a branch that does not lead to `target` and leaves the function (`if (running) { await notify();
 * return; }`): the way that turns the caller away, not a way to the set.
 */
function inLeavingBranchOf(node: Node, target: Node, fn: Node): boolean {
  for (let child: Node = node, p = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "IfStatement" || p.test === child || contains(child, target)) continue;
    if (exits(child)) return true;
  }
  return false;
}

/**
 * `if (running) return;` before the assignment, or the assignment inside `if (!running) { … }`, or in the `else` of
 * `if (running) { … }` (the branch taken when the flag is found clear, whatever the other branch does: waits, queues).
 * Returns that test, the nearest one.
 */
function flagTest(
  sourceCode: SourceCode,
  assignment: TSESTree.AssignmentExpression,
  target: { key: Variable | string },
): Node | undefined {
  const fn = enclosingFunction(assignment);
  const reads = (test: Node): boolean => {
    let found = false;
    walk(test, (n) => {
      if (found || isFunction(n)) return false;
      if (n.type === "Identifier" || n.type === "MemberExpression") {
        const t = flagTarget(sourceCode, n);
        if (t && t.key === target.key) {
          found = true;
          return false;
        }
      }
      return true;
    });
    return found;
  };
  for (let child: Node = assignment, p: Node | undefined = assignment.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type === "IfStatement" && (p.consequent === child || p.alternate === child) && reads(p.test)) return p.test;
    const list = p.type === "BlockStatement" || p.type === "Program" ? p.body : undefined;
    if (!list) continue;
    let found: Node | undefined;
    for (const s of list) {
      if (s.range[0] >= child.range[0]) break;
      if (s.type === "IfStatement" && reads(s.test) && exits(s.consequent)) found = s.test;
    }
    if (found) return found;
  }
  return undefined;
}

/** The set is reached only past a test of the flag (`flagTest`). */
function isGuarded(
  sourceCode: SourceCode,
  assignment: TSESTree.AssignmentExpression,
  target: { key: Variable | string },
): boolean {
  return flagTest(sourceCode, assignment, target) !== undefined;
}

/** Whether `call` calls `fn`: `this.name()` for a method of the caller's class, `name()` for a module function. */
function callsFunction(sourceCode: SourceCode, call: TSESTree.CallExpression, fn: TSESTree.FunctionLike): boolean {
  const callee = unwrap(call.callee);
  const p = fn.parent;
  if (callee.type === "MemberExpression" && unwrap(callee.object).type === "ThisExpression") {
    return (
      p?.type === "MethodDefinition" &&
      keyName(p.key, p.computed) === keyName(callee.property, callee.computed) &&
      classOf(fn) === classOf(call)
    );
  }
  if (callee.type !== "Identifier") return false;
  return (
    (fn.type === "FunctionDeclaration" && fn.id?.name === callee.name) ||
    (p?.type === "VariableDeclarator" && p.id.type === "Identifier" && p.id.name === callee.name)
  );
}

/** What a flag write clears: the target of `x = false`, or the slot of `delete locks[key]`. */
function clearedBy(r: FlagWrite): Node | undefined {
  if (r.type === "UnaryExpression") return r.argument;
  return (r.right as TSESTree.BooleanLiteral).value === false ? r.left : undefined;
}

/** The writes a guard is made of: booleans assigned, and deletes of a slot (`delete inFlight[id]`). */
export type FlagWrite = TSESTree.AssignmentExpression | TSESTree.UnaryExpression;

export function flagLocks(
  sourceCode: SourceCode,
  flags: readonly FlagWrite[],
  calls: readonly TSESTree.CallExpression[],
): Candidate[] {
  const out: Candidate[] = [];
  for (const a of flags) {
    if (a.type !== "AssignmentExpression" || (a.right as TSESTree.BooleanLiteral).value !== true) continue;
    const target = flagTarget(sourceCode, a.left);
    if (!target) continue;
    // A flag declared inside the function (or a block of it) guards nothing across calls.
    const fn = enclosingFunction(a);
    if (typeof target.key !== "string" && fn && within(target.key.defs[0]!.node, fn)) continue;
    const resets = flags.filter((r) => {
      const cleared = clearedBy(r);
      return cleared !== undefined && flagTarget(sourceCode, cleared)?.key === target.key;
    });
    if (resets.length === 0) continue;
    const releases: Node[] = resets.filter((r) => sameFunction(r, a) && r.range[0] > a.range[0]);
    // Resets made by a helper this function calls: `this.finish()` that sets `this.busy = false`.
    const helpers = new Set(
      resets.map((r) => enclosingFunction(r)).filter((f): f is TSESTree.FunctionLike => !!f && f !== fn),
    );
    if (helpers.size > 0)
      for (const call of calls) {
        if (!sameFunction(call, a) || call.range[0] < a.range[1]) continue;
        if ([...helpers].some((h) => callsFunction(sourceCode, call, h))) releases.push(call);
      }
    // Resets in the callbacks of a promise chain this function starts after the set, made however the chain settles
    // (`await crawl().finally(() => { busy = false })`): the chain is the release, where it stands in the function.
    for (const chain of settledChains(sourceCode, a, resets, target.key))
      if (!releases.includes(chain)) releases.push(chain);
    // Resets in a callback this function hands to a call after the set, other than a promise chain's handler (a
    // timer, an event listener, a node-style callback: `setTimeout(() => { delete busy[id] }, 30_000)`,
    // `worker.on("exit", () => { syncing = false })`): the hold passes to that callback where the call stands, and
    // only the ways from the set to the call are this function's to answer (blind-21 E21e12, E21e13).
    // One the function follows with a release of its own on the same way (`process.on("exit", () => { busy =
    // false })` before the work and `busy = false` after it) is a contingency, not where the hold ends.
    // A release in a `catch` after it runs only when the work fails, which says nothing of the way on.
    const registered = registeredClears(sourceCode, a, resets, target.key).filter(
      (call) => !releases.some((r) => sameFunction(r, a) && !inCatch(r, fn) && runsAfter(call, r)),
    );
    for (const call of registered) if (!releases.includes(call)) releases.push(call);
    if (releases.length === 0) {
      // Cleared only in a `.then` callback of a chain this function starts after the set (`this.pending = true;
      // return call().then(() => { this.pending = false; })`): on a rejection nothing clears it (blind-12 E12e02).
      const fulfilOnly = clearedOnFulfilOnly(sourceCode, a, resets, target.key);
      if (fulfilOnly && isGuarded(sourceCode, a, target)) {
        out.push({
          kind: "flag",
          name: target.text,
          acquire: a,
          releases: [],
          ttl: false,
          try: false,
          skipPaths: true,
          fulfilOnly,
        });
        continue;
      }
      // Handed to work the function defers (`setImmediate(() => run())`, `Meteor.defer(…)`), whose own function
      // clears it: the flag is held by that work, past this function's paths, which say nothing of it. Only its
      // test-then-set is this function's to answer (blind-12 E12c07).
      const handedOff = calls.filter(
        (call) =>
          fn !== undefined &&
          contains(fn, call) &&
          !sameFunction(call, a) &&
          call.range[0] > a.range[1] &&
          [...helpers].some((h) => callsFunction(sourceCode, call, h)),
      );
      const late = handedOff.length > 0 ? setAfterAwait(sourceCode, a, target) : undefined;
      if (late)
        out.push({
          kind: "flag",
          name: target.text,
          acquire: a,
          releases: handedOff,
          ttl: false,
          try: false,
          skipPaths: true,
          setAfterAwait: late,
        });
      continue;
    }
    if (!isGuarded(sourceCode, a, target)) continue;
    // Reset only when the work fails (`catch { this.initializing = false; throw … }`): a flag kept on success is
    // "started once, retried after a failure", not a lock held for the length of the work.
    // Likewise when every reset of the function sits in a branch that gives up (`else { busy = false; cb(err);
    // return; }`): on success the hold is handed on (a stream's callback, another method clears it), and the
    // function's way out without a reset is not a missed release.
    if (releases.every((r) => inCatch(r, fn) || inGivingUpBranch(r, fn))) continue;
    const late = setAfterAwait(sourceCode, a, target, registered.length > 0);
    out.push({
      kind: "flag",
      name: target.text,
      acquire: a,
      releases,
      ttl: false,
      try: false,
      ...(late ? { setAfterAwait: late } : {}),
      ...(waitsAfter(a, fn) ? {} : { keptInOneRun: true }),
    });
  }
  return out;
}

/** Every link of the promise chain `link` belongs to, inward and outward: `a().catch(…).then(ok).finally(…)`. */
function chainLinks(link: TSESTree.CallExpression): TSESTree.CallExpression[] {
  const links: TSESTree.CallExpression[] = [];
  for (let c: Node = link; c.type === "CallExpression" && c.callee.type === "MemberExpression";) {
    links.push(c);
    c = unwrap(c.callee.object);
  }
  for (let c: Node = link; ;) {
    const member: Node | undefined = c.parent;
    const call: Node | undefined = member?.parent;
    if (member?.type !== "MemberExpression" || call?.type !== "CallExpression" || call.callee !== member) break;
    links.push(call);
    c = call;
  }
  return links;
}

/** The handlers a chain's link runs on fulfilment and on rejection (`.then(ok, failed)`, `.catch`, `.finally`). */
function linkHandlers(link: TSESTree.CallExpression): { onFulfil?: Node; onReject?: Node } {
  const [first, second] = link.arguments as Node[];
  switch (calleeName(link)) {
    case "then":
      return { onFulfil: first, onReject: second };
    case "catch":
      return { onReject: first };
    case "finally":
      return { onFulfil: first, onReject: first };
    default:
      return {};
  }
}

/** Whether a callback holds a reset of the flag `key` among `resets`. */
function clearsIn(sourceCode: SourceCode, resets: readonly FlagWrite[], key: unknown) {
  return (cb: Node | undefined): boolean =>
    cb !== undefined &&
    resets.some((r) => {
      const cleared = clearedBy(r);
      return contains(cb, r) && cleared !== undefined && flagTarget(sourceCode, cleared)?.key === key;
    });
}

/**
 * Whether the chain clears on a rejection: a rejection handler clears it, or one absorbs the rejection (it neither
 * throws nor rejects: `.catch(() => undefined)`) and a fulfilment handler of a later link clears it, which then runs
 * however the earlier links settled.
 */
function clearsOnRejection(links: readonly TSESTree.CallExpression[], clears: (cb: Node | undefined) => boolean) {
  let absorbed = false;
  for (const link of [...links].sort((a, b) => a.range[1] - b.range[1])) {
    const { onFulfil, onReject } = linkHandlers(link);
    if (clears(onReject) || (absorbed && clears(onFulfil))) return true;
    if (onReject && isFunction(onReject) && !rethrows(onReject)) absorbed = true;
  }
  return false;
}

/** A handler that can hand the rejection on: a `throw`, or a `Promise.reject(…)`, anywhere in its own body. */
function rethrows(handler: TSESTree.FunctionLike): boolean {
  let found = false;
  walk(handler.body as Node, (n) => {
    if (found || (n !== handler.body && isFunction(n))) return false;
    if (n.type === "ThrowStatement") found = true;
    if (n.type === "CallExpression" && calleeName(n) === "reject") found = true;
    return !found;
  });
  return found;
}

/**
 * The calls `set`'s function makes after it that hand on a callback holding a reset of the flag, other than the links
 * of a promise chain (`then`, `catch`, `finally`, which `settledChains` and `clearedOnFulfilOnly` read by how the chain
 * settles) and calls of the module's own functions (read by what the function does with the callback).
 */
function registeredClears(
  sourceCode: SourceCode,
  set: TSESTree.AssignmentExpression,
  resets: readonly FlagWrite[],
  key: unknown,
): Node[] {
  const fn = enclosingFunction(set);
  const clears = clearsIn(sourceCode, resets, key);
  const out: Node[] = [];
  for (const reset of resets) {
    const cb = enclosingFunction(reset);
    const call = cb?.parent;
    if ((call?.type !== "CallExpression" && call?.type !== "NewExpression") || !call.arguments.includes(cb as never))
      continue;
    // A function of this module calls it back when its own code says (`successCallback` reads that).
    if (
      call.type === "CallExpression" &&
      (CHAIN_LINKS.has(calleeName(call) ?? "") || calledFunction(sourceCode, call) !== undefined)
    )
      continue;
    if (enclosingFunction(call) !== fn || call.range[0] < set.range[1] || !clears(cb)) continue;
    if (!out.includes(call)) out.push(call);
  }
  return out;
}

const CHAIN_LINKS = new Set(["then", "catch", "finally"]);

/**
 * The outermost calls of the promise chains that `set`'s function starts after it and that clear the flag however
 * they settle: a `.finally` callback, or a fulfilment and a rejection handler that both reset it.
 */
function settledChains(
  sourceCode: SourceCode,
  set: TSESTree.AssignmentExpression,
  resets: readonly FlagWrite[],
  key: unknown,
): TSESTree.CallExpression[] {
  const fn = enclosingFunction(set);
  const clears = clearsIn(sourceCode, resets, key);
  const out: TSESTree.CallExpression[] = [];
  for (const reset of resets) {
    const link = enclosingFunction(reset)?.parent;
    if (link?.type !== "CallExpression" || !link.arguments.includes(enclosingFunction(reset) as never)) continue;
    if (enclosingFunction(link) !== fn || link.range[0] < set.range[1]) continue;
    const links = chainLinks(link);
    const handlers = links.map(linkHandlers);
    if (!handlers.some((h) => clears(h.onFulfil)) || !clearsOnRejection(links, clears)) continue;
    const outermost = links.reduce((a, b) => (b.range[1] - b.range[0] > a.range[1] - a.range[0] ? b : a));
    if (!out.includes(outermost)) out.push(outermost);
  }
  return out;
}

/**
 * The reset of a flag set by `set` made only in a fulfilment callback, `.then(cb)`, of a promise chain that `set`'s
 * function starts after it, when no link of that chain clears the flag on a rejection (`.then(ok, failed)`,
 * `.catch(cb)`, `.finally(cb)`): the flag stays set once the promise rejects.
 */
function clearedOnFulfilOnly(
  sourceCode: SourceCode,
  set: TSESTree.AssignmentExpression,
  resets: readonly FlagWrite[],
  key: unknown,
): HeldLock["fulfilOnly"] {
  const fn = enclosingFunction(set);
  const clears = clearsIn(sourceCode, resets, key);
  for (const reset of resets) {
    const cb = enclosingFunction(reset);
    const link = cb?.parent;
    if (link?.type !== "CallExpression" || calleeName(link) !== "then" || link.arguments[0] !== cb) continue;
    if (enclosingFunction(link) !== fn || link.range[0] < set.range[1]) continue;
    const onRejection = clearsOnRejection(chainLinks(link), clears);
    if (!onRejection) return { release: reset, chain: link };
  }
  // Only where the callback holds every reset of the guard in the module: one cleared elsewhere too (a stop, a
  // restart) is a state the module moves by other ways as well.
  const own = resets.filter((r) => {
    const cleared = clearedBy(r);
    return cleared !== undefined && flagTarget(sourceCode, cleared)?.key === key;
  });
  for (const reset of own) {
    const cb = enclosingFunction(reset);
    if (!cb || !own.every((r) => contains(cb, r))) continue;
    const via = successCallback(sourceCode, reset, fn, set);
    if (via) return via;
  }
  return undefined;
}

/**
 * A reset in a callback handed to a function of the module (`runService(() => { running = false })`) that calls it
 * only on its way to success: after an await, outside any `catch` or `finally`, and nowhere else. When an await
 * before the call rejects, the callback never runs (blind-15 E15e13).
 */
function successCallback(
  sourceCode: SourceCode,
  reset: FlagWrite,
  fn: Node | undefined,
  set: TSESTree.AssignmentExpression,
): HeldLock["fulfilOnly"] {
  const cb = enclosingFunction(reset);
  const call = cb?.parent;
  if (!cb || call?.type !== "CallExpression" || !call.arguments.includes(cb as TSESTree.CallExpressionArgument))
    return undefined;
  if (enclosingFunction(call) !== fn || call.range[0] < set.range[1]) return undefined;
  const callee = unwrap(call.callee);
  if (callee.type !== "Identifier") return undefined;
  const def = findVariable(sourceCode, callee)?.defs[0];
  const target =
    def?.node.type === "FunctionDeclaration"
      ? def.node
      : def?.node.type === "VariableDeclarator" && def.node.init && isFunction(def.node.init)
        ? (def.node.init as TSESTree.ArrowFunctionExpression | TSESTree.FunctionExpression)
        : undefined;
  if (!target?.async) return undefined;
  const param = target.params[call.arguments.indexOf(cb as TSESTree.CallExpressionArgument)];
  if (param?.type !== "Identifier") return undefined;
  const uses = findVariable(sourceCode, param)?.references.map((r) => r.identifier) ?? [];
  const calls = uses.filter((u) => u.parent?.type === "CallExpression" && u.parent.callee === u);
  // Called, and only as a call (not handed on, not kept), never from a `catch` or a `finally`.
  if (calls.length === 0 || calls.length !== uses.length) return undefined;
  const guarded = (n: Node) => {
    for (let c: Node = n, p = n.parent; p && p !== target; c = p, p = p.parent)
      if ((p.type === "TryStatement" && p.finalizer === c) || p.type === "CatchClause") return true;
    return false;
  };
  if (calls.some((c) => guarded(c) || enclosingFunction(c) !== target)) return undefined;
  let waited = false;
  walk(target.body, (n) => {
    if (waited || (n !== target.body && isFunction(n))) return false;
    if (n.type === "AwaitExpression" && calls.every((c) => n.range[1] <= c.range[0])) waited = true;
    return true;
  });
  return waited ? { release: reset, chain: call, via: callee.name, calledAt: calls[0]!.parent! } : undefined;
}

/**
 * In a nested block of `fn` that fails and leaves after it (`{ busy = false; cb(new Error("bad")); return; }`,
 * `{ busy = false; throw err; }`): the rest of the block throws, or makes an error and returns.
 */
function inGivingUpBranch(node: Node, fn: Node | undefined): boolean {
  const rest = restOfBranch(node, fn);
  if (!rest) return false;
  if (rest.some((s) => s.type === "ThrowStatement")) return true;
  return rest.some((s) => s.type === "ReturnStatement") && rest.some(makesError);
}

/**
 * In a nested block of `fn` that leaves after it (`{ await release(); log(…); return empty; }`): a branch that gives
 * up, not the function's own way through.
 */
function inLeavingBranch(node: Node, fn: Node | undefined): boolean {
  return (restOfBranch(node, fn) ?? []).some((st) => st.type === "ReturnStatement" || st.type === "ThrowStatement");
}

/** The statements after `node` in the innermost nested block of `fn` around it; none at the function's own level. */
function restOfBranch(node: Node, fn: Node | undefined): Node[] | undefined {
  let child: Node = node;
  for (let p = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "BlockStatement") continue;
    if (p.parent === fn || isFunction(p.parent as Node)) return undefined;
    // A `try`'s block is the way the work goes, not a branch beside it: look at what holds the `try`.
    if (p.parent?.type === "TryStatement" && p.parent.block === p) continue;
    return p.body.slice(p.body.indexOf(child as TSESTree.Statement) + 1);
  }
  return undefined;
}

/** The statement makes an error (`new Error(…)`, `new ValidationError(…)`) outside any nested function. */
function makesError(statement: Node): boolean {
  let found = false;
  walk(statement, (n) => {
    if (found || isFunction(n)) return false;
    if (n.type === "NewExpression" && n.callee.type === "Identifier" && /Error$/.test(n.callee.name)) found = true;
    return !found;
  });
  return found;
}

/** Inside a `catch` clause of `fn`. */
function inCatch(node: Node, fn: Node | undefined): boolean {
  for (let p = node.parent; p && p !== fn; p = p.parent) if (p.type === "CatchClause") return true;
  return false;
}

export const within = (n: Node, outer: Node | null | undefined) => contains(outer, n);

/**
 * A key's entry in an in-process lock table, held by the function that set it: its releases are that function's own
 * deletes after the set. One deleted only by another function (a `release(key)` the caller must remember) is not
 * followed here; the table's Q3 findings still see it.
 */
export function tableLocks(tables: readonly LockTable[]): Candidate[] {
  const out: Candidate[] = [];
  for (const t of tables) {
    const acquire = t.acquire.node;
    const releases = t.releases
      .map((r) => r.op.node)
      .filter((n) => sameFunction(n, acquire) && n.range[0] > acquire.range[1]);
    if (releases.length === 0) continue;
    out.push({
      kind: "table",
      name: t.table,
      acquire,
      releases,
      ttl: false,
      try: false,
      ...(t.sharesInFlight ? { sharesInFlight: true } : {}),
    });
  }
  return out;
}
