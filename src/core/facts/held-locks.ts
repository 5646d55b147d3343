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
import type { AdvisoryLockOp, LibraryLockOp, Node, StateAccess } from "../model/accesses.js";
import type { KvFacts } from "../model/kv-locks.js";
import type { IgnoredAcquireFailure, HeldLock, HeldLockKind, PathEscape } from "../model/held-locks.js";
import type { PathRecorder } from "../reading/code-paths.js";
import type { ModuleShape } from "../model/lock-facts.js";
import { calleeName, contains, exits, receiverText, walk } from "../reading/ast.js";
import { classOf, enclosingFunction, functionName, isFunction, unitOf } from "../reading/units.js";
import { findVariable, keyName, unwrap } from "../reading/values.js";
import { isExported } from "../reading/exports.js";
import { exitWhenHeld } from "../reading/guards.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Variable = TSESLint.Scope.Variable;

interface Candidate {
  readonly kind: HeldLockKind;
  readonly name: string;
  readonly acquire: Node;
  readonly releases: readonly Node[];
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
}

function calleeObject(call: Node): Node | undefined {
  if (call.type !== "CallExpression") return undefined;
  const callee = unwrap(call.callee);
  return callee.type === "MemberExpression" ? callee.object : undefined;
}

const sameFunction = (a: Node, b: Node) => enclosingFunction(a) === enclosingFunction(b);

/** The variable declarator an acquire's result is stored in: `const release = await mutex.acquire()`. */
function resultDeclarator(acquire: Node): TSESTree.VariableDeclarator | undefined {
  let p = acquire.parent;
  if (p?.type === "AwaitExpression") p = p.parent;
  while (p && (p.type === "TSAsExpression" || p.type === "TSNonNullExpression")) p = p.parent;
  return p?.type === "VariableDeclarator" ? p : undefined;
}

/** Names a statement binds (`const { rows: [{ locked }] } = …` binds `locked`). */
function boundNames(pattern: Node | null | undefined, out: Set<string>): void {
  if (!pattern) return;
  switch (pattern.type) {
    case "Identifier":
      out.add(pattern.name);
      break;
    case "ArrayPattern":
      for (const el of pattern.elements) boundNames(el, out);
      break;
    case "ObjectPattern":
      for (const p of pattern.properties) boundNames(p.type === "Property" ? p.value : p.argument, out);
      break;
    case "AssignmentPattern":
      boundNames(pattern.left, out);
      break;
    case "RestElement":
      boundNames(pattern.argument, out);
      break;
    default:
      break;
  }
}

function mentions(node: Node, names: ReadonlySet<string>): boolean {
  let found = false;
  walk(node, (n) => {
    if (found) return false;
    if (n.type === "Identifier" && names.has(n.name)) found = true;
    return !isFunction(n);
  });
  return found;
}

/** The statement (a direct child of a block, a switch case or the program) that holds `node`. */
function statementOf(node: Node): { statement: Node; list: readonly Node[] } | undefined {
  let child: Node = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    if (isFunction(p)) return undefined;
    if (p.type === "BlockStatement" || p.type === "Program" || p.type === "StaticBlock")
      return { statement: child, list: p.body };
    if (p.type === "SwitchCase") return { statement: child, list: p.consequent };
  }
  return undefined;
}

/**
 * Where a try-acquire starts holding. `if (!locked) return; …` holds after the `if`; `if (await tryLock()) { … }`
 * holds in the consequent. Returns the range and, when found, the `if` that tests the outcome.
 */
function heldRegion(sourceCode: SourceCode, acquire: Node): { start: number; end: number } | undefined {
  // The acquire inside the test: `if (!(await mutex.tryAcquire())) return;`
  let child: Node = acquire;
  let test: TSESTree.IfStatement | undefined;
  for (let p = acquire.parent; p && !isFunction(p); child = p, p = p.parent) {
    if (p.type === "IfStatement" && p.test === child) {
      test = p;
      break;
    }
    if (p.type.endsWith("Statement") || p.type === "VariableDeclaration") break;
  }
  const names = new Set<string>();
  const where = statementOf(test ?? acquire);
  if (!where) return undefined;
  if (!test) {
    const { statement, list } = where;
    if (statement.type === "VariableDeclaration") for (const d of statement.declarations) boundNames(d.id, names);
    if (statement.type === "ExpressionStatement" && statement.expression.type === "AssignmentExpression") {
      boundNames(statement.expression.left, names);
    }
    if (names.size === 0) return undefined;
    // `try { locked = await acquire(); } catch { return; }  if (locked) …`: the test follows the `try`.
    let rest = list.slice(list.indexOf(statement) + 1);
    const block = statement.parent;
    if (
      rest.length === 0 &&
      block?.type === "BlockStatement" &&
      block.parent?.type === "TryStatement" &&
      block.parent.block === block &&
      (!block.parent.handler || exits(block.parent.handler.body)) &&
      !block.parent.finalizer
    ) {
      const after = statementOf(block.parent);
      if (after) rest = after.list.slice(after.list.indexOf(after.statement) + 1);
    }
    // Look past statements that derive from the outcome (`const got = rows[0].locked;`) to the `if` that tests it.
    for (let i = 0; i < rest.length; i++) {
      const s = rest[i]!;
      if (s.type === "IfStatement" && mentions(s.test, names)) {
        test = s;
        break;
      }
      if (s.type === "VariableDeclaration" && s.declarations.some((d) => d.init && mentions(d.init, names))) {
        for (const d of s.declarations) boundNames(d.id, names);
        continue;
      }
      break;
    }
  }
  if (!test) return undefined;
  // `if (!locked) { …fallback… }`: the consequent runs without the lock, whether it exits or not.
  if (exits(test.consequent) || failedTest(test.test)) {
    const block = statementOf(test);
    const parent = test.parent;
    if (!block || !parent) return undefined;
    if (!exits(test.consequent) && test.alternate)
      return { start: test.alternate.range[0], end: test.alternate.range[1] };
    return { start: test.range[1], end: parent.range[1] };
  }
  return { start: test.consequent.range[0], end: test.consequent.range[1] };
}

/** A test that is true when the acquire failed: `!locked`, `locked === null`, `ok !== "OK"`. */
function failedTest(test: Node): boolean {
  const t = unwrap(test);
  if (t.type === "UnaryExpression" && t.operator === "!") return true;
  if (t.type !== "BinaryExpression") return false;
  const other = unwrap(t.right);
  const literal =
    other.type === "Literal"
      ? other.value
      : other.type === "Identifier" && other.name === "undefined"
        ? undefined
        : "?";
  if (t.operator === "===" || t.operator === "==")
    return literal === null || literal === false || literal === undefined || literal === 0;
  if (t.operator === "!==" || t.operator === "!=") return literal === "OK" || literal === true || literal === 1;
  return false;
}

// ---- the kinds of held lock ----

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

function inProcessLocks(sourceCode: SourceCode, ops: readonly LibraryLockOp[]): Candidate[] {
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

function kvLocks(kv: KvFacts): Candidate[] {
  const out: Candidate[] = [];
  const allReleases = [...kv.releases, ...kv.viaHelpers.releases];
  for (const lock of [...kv.locks, ...kv.viaHelpers.locks]) {
    if (!lock.lockLike) continue;
    const own = allReleases.filter((r) => r.lock === lock && sameFunction(r.op.node, lock.acquire.node));
    // A marker written over the lock ends the hold on its path, as a release does (it deletes nothing: not a release).
    const ended = (lock.endedBy ?? []).filter((o) => sameFunction(o.node, lock.acquire.node)).map((o) => o.node);
    const releases = [...own.map((r) => r.op.node), ...ended];
    if (own.length === 0) continue;
    out.push({
      kind: "kv",
      name: lock.acquire.key.opaque ? lock.acquire.key.text.slice(1, -1) : lock.acquire.key.text,
      acquire: lock.acquire.node,
      releases,
      ttl: lock.ttl === "present" || lock.ttl === "separate" || lock.ttl === "unknown",
      try: true,
      ...(lock.expire ? { protocol: [lock.expire.node] } : {}),
      ...(own.every((r) => r.kind !== "owner-checked") ? { uncheckedRelease: true } : {}),
      ...(lock.acquire.batch ? { batch: lock.acquire.batch } : {}),
    });
  }
  return out;
}

const CLOSE = new Set(["end", "destroy", "close"]);

function advisoryLocks(sourceCode: SourceCode, ops: readonly AdvisoryLockOp[], shape: ModuleShape): Candidate[] {
  const out: Candidate[] = [];
  const onClient = (call: TSESTree.CallExpression, client: string) => {
    const object = calleeObject(call);
    return object !== undefined && receiverText(sourceCode, object) === client;
  };
  for (const op of ops) {
    if (op.fn !== "lock" || op.scope !== "session") continue;
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
    const pooledUnlocks = op.via === "pool" ? unlocks.filter((u) => u.via === "pool").map((u) => u.node) : [];
    const releases = [...unlocks.map((u) => u.node), ...closes].filter((r) => sameFunction(r, op.node));
    const advisory: HeldLock["advisory"] = {
      via: op.via,
      pooledUnlocks,
      neverUnlocked,
      ...(neverUnlocked && returns[0] ? { returnedToPool: returns[0] } : {}),
      ...(op.helper ? { helper: op.helper } : {}),
    };
    out.push({
      kind: "advisory",
      name: op.try ? "pg_try_advisory_lock" : "pg_advisory_lock",
      acquire: op.node,
      releases,
      ttl: false,
      try: op.try,
      advisory,
      skipPaths:
        op.via === "pool" ||
        (neverUnlocked && (op.via === "transaction" || returns.length > 0)) ||
        releases.length === 0,
    });
  }
  return out;
}

/** The variable (or `this` field name) a guard assignment targets. */
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
  return undefined;
}

/** `if (running) return;` before the assignment, or the assignment inside `if (!running) { … }`. */
function isGuarded(
  sourceCode: SourceCode,
  assignment: TSESTree.AssignmentExpression,
  target: { key: Variable | string },
): boolean {
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
    if (p.type === "IfStatement" && p.consequent === child && reads(p.test)) return true;
    const list = p.type === "BlockStatement" || p.type === "Program" ? p.body : undefined;
    if (!list) continue;
    for (const s of list) {
      if (s.range[0] >= child.range[0]) break;
      if (s.type === "IfStatement" && reads(s.test) && exits(s.consequent)) return true;
    }
  }
  return false;
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

function flagLocks(
  sourceCode: SourceCode,
  flags: readonly TSESTree.AssignmentExpression[],
  calls: readonly TSESTree.CallExpression[],
): Candidate[] {
  const out: Candidate[] = [];
  for (const a of flags) {
    if ((a.right as TSESTree.BooleanLiteral).value !== true) continue;
    const target = flagTarget(sourceCode, a.left);
    if (!target) continue;
    // A flag declared inside the function (or a block of it) guards nothing across calls.
    const fn = enclosingFunction(a);
    if (typeof target.key !== "string" && fn && within(target.key.defs[0]!.node, fn)) continue;
    const resets = flags.filter(
      (r) => (r.right as TSESTree.BooleanLiteral).value === false && flagTarget(sourceCode, r.left)?.key === target.key,
    );
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
    if (releases.length === 0 || !isGuarded(sourceCode, a, target)) continue;
    // Reset only when the work fails (`catch { this.initializing = false; throw … }`): a flag kept on success is
    // "started once, retried after a failure", not a lock held for the length of the work.
    if (releases.every((r) => inCatch(r, fn))) continue;
    out.push({ kind: "flag", name: target.text, acquire: a, releases, ttl: false, try: false });
  }
  return out;
}

// ---- paths ----

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
          (arg.type === "CallExpression" && returnsPromise(sourceCode, arg, shape, c.kind !== "flag")) ||
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

/**
 * Module functions that cannot reject: every await in them is caught (or awaits another such function), and they
 * throw nothing outside a `try` that catches. `await this.sendWithRetry()` whose body catches everything does not
 * skip a release.
 */
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

class Rejections {
  private readonly memo = new Map<TSESTree.FunctionLike, boolean>();
  constructor(private readonly shape: ModuleShape) {}

  /** The awaited call goes to a function of this module that cannot reject. */
  never(node: TSESTree.AwaitExpression, depth = 0): boolean {
    const arg = unwrap(node.argument);
    if (arg.type !== "CallExpression" || depth > 3) return false;
    const fn = this.resolve(arg);
    return fn !== undefined && this.cannotReject(fn, depth);
  }

  private resolve(call: TSESTree.CallExpression): TSESTree.FunctionLike | undefined {
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
      if (n.type === "AwaitExpression" && !caught(n, fn) && !this.never(n, depth + 1)) ok = false;
      if (n.type === "ThrowStatement" && !caught(n, fn)) ok = false;
      return true;
    });
    this.memo.set(fn, ok);
    return ok;
  }
}

/** Inside a `catch` clause of `fn`. */
function inCatch(node: Node, fn: Node | undefined): boolean {
  for (let p = node.parent; p && p !== fn; p = p.parent) if (p.type === "CatchClause") return true;
  return false;
}

/** Inside a `try` block (of `fn`) whose `catch` does not rethrow. */
function caught(node: Node, fn: Node): boolean {
  for (let child: Node = node, p: Node | undefined = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "TryStatement" || p.block !== child || !p.handler) continue;
    let rethrows = false;
    for (const s of p.handler.body.body) if (s.type === "ThrowStatement") rethrows = true;
    if (!rethrows) return true;
  }
  return false;
}

const within = (n: Node, outer: Node | null | undefined) => contains(outer, n);

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
  if (c.kind !== "flag" && c.kind !== "mutex" && !kv) return undefined;
  // The way out must be the one taken when the lock is held (`if (running) return`, `if (mutex.isLocked()) return`):
  // one taken before the check, when nobody holds it, releases nothing that matters. For a key, the test of what its
  // try-acquire returned (`if (!acquired) return`).
  const stored = kv ? resultDeclarator(c.acquire)?.id : undefined;
  if (kv && stored?.type !== "Identifier") return undefined;
  const name = kv ? (stored as TSESTree.Identifier).name : c.name.replace(/^this\./, "");
  for (const t of tries) {
    if (!within(c.acquire, t.block) || !t.finalizer) continue;
    const release = c.releases.find((r) => within(r, t.finalizer));
    if (!release) continue;
    const exit = kv
      ? exitWhenNotTaken(sourceCode, t.block, c.acquire, name)
      : exitWhenHeld(sourceCode, t.block, c.acquire, name);
    if (exit) return { exit, release };
  }
  return undefined;
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

/** `Promise.race(…)`, `Promise.all(…)`: a call that settles with the promises it is given. */
function promiseCombinator(n: Node): n is TSESTree.CallExpression {
  if (n.type !== "CallExpression") return false;
  const c = unwrap(n.callee);
  return (
    c.type === "MemberExpression" &&
    unwrap(c.object).type === "Identifier" &&
    (unwrap(c.object) as TSESTree.Identifier).name === "Promise" &&
    /^(race|all|any)$/.test(keyName(c.property, c.computed) ?? "")
  );
}

/**
 * An acquire queued on a MULTI or pipeline held in a const (`const tx = redis.multi(); tx.setnx(key, token); …;
 * const ok = await tx.exec()`): the command runs, and its result is known, when the batch is executed, at the
 * first await of that const's `exec()` after the acquire. `batch` is the `multi()` call the recognizer found.
 */
function queuedBatchExec(
  sourceCode: SourceCode,
  acquire: Node,
  batch: Node | undefined,
): TSESTree.AwaitExpression | undefined {
  const declarator = batch?.parent;
  if (declarator?.type !== "VariableDeclarator" || declarator.init !== batch || declarator.id.type !== "Identifier")
    return undefined;
  const fn = enclosingFunction(acquire);
  for (const ref of findVariable(sourceCode, declarator.id)?.references ?? []) {
    const r = ref.identifier as Node;
    const member = r.parent;
    if (
      r.range[0] < acquire.range[1] ||
      member?.type !== "MemberExpression" ||
      member.object !== r ||
      keyName(member.property, member.computed) !== "exec"
    )
      continue;
    const call = member.parent;
    let p = call?.type === "CallExpression" && call.callee === member ? call.parent : undefined;
    while (p && (p.type === "TSAsExpression" || p.type === "TSNonNullExpression")) p = p.parent;
    if (p?.type === "AwaitExpression" && enclosingFunction(p) === fn) return p;
  }
  return undefined;
}

/**
 * The `await` that settles an acquire started without one: `promises.push(acquire()); await Promise.race(promises)`,
 * `await Promise.all([acquire(), …])`, `const p = acquire(); …; await p`. The lock is taken when that await
 * resumes; a rejection of it is the acquire's own failure, not a way out while holding.
 */
function settlingAwait(sourceCode: SourceCode, acquire: Node, batch?: Node): TSESTree.AwaitExpression | undefined {
  if (acquire.type !== "CallExpression") return undefined;
  const fn = enclosingFunction(acquire);
  const awaited = (n: Node | undefined): TSESTree.AwaitExpression | undefined => {
    let p = n?.parent;
    while (p && (p.type === "TSAsExpression" || p.type === "TSNonNullExpression")) p = p.parent;
    return p?.type === "AwaitExpression" && enclosingFunction(p) === fn ? p : undefined;
  };
  /** The awaits in this function of a const array or promise variable, after the acquire. */
  const awaitsOf = (id: TSESTree.Identifier, viaCombinator: boolean): TSESTree.AwaitExpression | undefined => {
    const variable = findVariable(sourceCode, id);
    if (
      !variable ||
      variable.defs[0]?.node.type !== "VariableDeclarator" ||
      variable.defs[0].node.parent?.kind !== "const"
    )
      return undefined;
    for (const ref of variable.references) {
      const r = ref.identifier as Node;
      if (r.range[0] < acquire.range[1]) continue;
      const at = viaCombinator
        ? r.parent && promiseCombinator(r.parent) && r.parent.arguments[0] === r
          ? awaited(r.parent)
          : undefined
        : awaited(r);
      if (at) return at;
    }
    return undefined;
  };
  const parent = acquire.parent;
  if (!parent || parent.type === "AwaitExpression") return undefined;
  const queued = queuedBatchExec(sourceCode, acquire, batch);
  if (queued) return queued;
  if (
    parent.type === "ArrayExpression" &&
    parent.parent &&
    promiseCombinator(parent.parent) &&
    parent.parent.arguments[0] === parent
  )
    return awaited(parent.parent);
  if (parent.type === "CallExpression" && parent.arguments.includes(acquire as TSESTree.CallExpression)) {
    const callee = unwrap(parent.callee);
    if (
      callee.type === "MemberExpression" &&
      keyName(callee.property, callee.computed) === "push" &&
      unwrap(callee.object).type === "Identifier"
    ) {
      return awaitsOf(unwrap(callee.object) as TSESTree.Identifier, true);
    }
  }
  if (parent.type === "VariableDeclarator" && parent.init === acquire && parent.id.type === "Identifier")
    return awaitsOf(parent.id, false);
  return undefined;
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
    const handled = (a: TSESTree.AwaitExpression) => awaitHandled(a, releases, c.protocol) || rejections.never(a);
    // Queued on a batch, the acquire's outcome is the batch's result: where it is tested is where holding starts.
    const region = c.try
      ? heldRegion(sourceCode, queuedBatchExec(sourceCode, c.acquire, c.batch) ?? c.acquire)
      : undefined;
    const settled = region ? undefined : settlingAwait(sourceCode, c.acquire, c.batch);
    const from = settled && paths.has(settled) ? settled : c.acquire;
    const start = region ? paths.firstIn(c.acquire, region.start, region.end) : from;
    const found = start
      ? paths.escapes(start, isRelease, handled, region !== undefined && start !== c.acquire)
      : undefined;
    // A flag "reset" that no path from the set reaches (`else isFinished = false`) is state, not a release.
    if (found && (found.reachesRelease || c.kind !== "flag")) escapes = found.escapes;
    // A path that falls off the end after a covering `try` went through its `finally`.
    if (tries.length > 0) escapes = escapes.filter((e) => e.kind !== "end");
    // An in-process guard of a function whose every caller ends the process when it rejects
    // (`run().catch(() => process.exit(1))`): the guard dies with the process, so a rejection wedges nothing.
    if (
      (c.kind === "flag" || c.kind === "mutex") &&
      escapes.some((e) => e.kind === "await" || e.kind === "throw") &&
      diesOnRejection(sourceCode, c.acquire, shape)
    ) {
      escapes = escapes.filter((e) => e.kind !== "await" && e.kind !== "throw");
    }
  }
  const early = c.skipPaths ? undefined : releasedEarly(sourceCode, c, shape);
  const untaken = releasedUntaken(sourceCode, c, tries);
  return {
    kind: c.kind,
    name: c.name,
    acquire: c.acquire,
    releases: c.releases,
    ttl: c.ttl,
    escapes,
    ...(early ? { releasedEarly: early } : {}),
    ...(untaken ? { releasedUntaken: untaken } : {}),
    ...(c.advisory ? { advisory: c.advisory } : {}),
  };
}

export function buildHeldLocks(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  kv: KvFacts,
  shape: ModuleShape,
  flags: readonly TSESTree.AssignmentExpression[],
  paths: PathRecorder,
): HeldLock[] {
  const library = accesses.filter((a): a is LibraryLockOp => a.access === "library");
  const advisory = accesses.filter((a): a is AdvisoryLockOp => a.access === "advisory");
  const candidates = [
    ...inProcessLocks(sourceCode, library),
    ...kvLocks(kv),
    ...advisoryLocks(sourceCode, advisory, shape),
    ...flagLocks(sourceCode, flags, shape.calls),
  ];
  const rejections = new Rejections(shape);
  return candidates.map((c) => analyse(sourceCode, c, paths, shape, rejections));
}

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
