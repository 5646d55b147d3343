/**
 * Lease renewals and what happens when they fail (Q2: a heartbeat must stop the work when renewal fails).
 *
 * A *renewal* is a command that pushes a held lock's expiry forward:
 * - a Redis EXPIRE/PEXPIRE (or a SET … PX without NX) of a key the module locks with NX, other than the EXPIRE that
 *   gives a SETNX its TTL right after the acquire (that one is `require-lock-ttl`'s); or a compare-and-expire script;
 * - a lock library's `extend`/`refresh` (Redlock, redis-semaphore), a redis-semaphore lock's `onLockLost` handler,
 *   and Redlock's `using(resources, ttl, async (signal) => …)`, whose automatic extension aborts `signal`;
 * - a database heartbeat: a write by row identity that moves a progress-time field (`heartbeatAt`, `leaseExpiresAt`)
 *   and no lifecycle field, on a model the module claims, run from a timer or from a function named like a heartbeat.
 *
 * Each renewal is then followed, through the AST (parent pointers) and calls within the module, to where its failure
 * lands. A renewal fails in one of two ways: its promise rejects (a lost Redis connection; Redlock's `extend`, Prisma's
 * `update` when no row matches), or it resolves a value that says so (EXPIRE's 0, a count of 0). The failure must
 * reach an *abort*: `controller.abort()`, `process.exit`, a flag the work reads, `reject` of a promise, a throw that
 * propagates into the work (not one thrown in a timer callback, where it reaches nobody), or a call to a module
 * function that does one of these. Where the answer depends on code the module does not show, the renewal is
 * `unknown` and nobody reports it.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type {
  Claim,
  FailureHandling,
  KvFacts,
  KvOp,
  LibraryLockOp,
  Node,
  Renewal,
  StateWrite,
} from "../model/model.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { identityFields, toBranches, type Branch } from "../model/conditions.js";
import { describeKey, keyShape, sameKey } from "../reading/keys.js";
import { comparedGet } from "./kv-pairing/value-checks.js";
import type { ModuleShape } from "../model/model.js";
import { normalizeModel, sameValue } from "../model/names.js";
import { calleeName, contains, exits, walk } from "../reading/ast.js";
import { classOf, enclosingFunction, functionName, isFunction } from "../reading/units.js";
import { findVariable, getConstInit, keyName, unwrap } from "../reading/values.js";
import { isExported } from "../reading/exports.js";

/**
 * A `try` whose `catch` ends by returning a plain value (`return false`, `return null`) in a helper of other modules
 * that returns on success too: a renewal helper that tells its caller whether the lease was extended.
 */
/** A plain value given back: `return false`, `return null`, `return undefined`. */
function returnsPlainValue(stmt: Node | null | undefined): boolean {
  const last = stmt?.type === "BlockStatement" ? stmt.body.at(-1) : stmt;
  const value = last?.type === "ReturnStatement" && last.argument ? unwrap(last.argument) : undefined;
  return (
    value !== undefined && (value.type === "Literal" || (value.type === "Identifier" && value.name === "undefined"))
  );
}

/**
 * An exported helper whose callers are all in other modules: what it returns is their business. A helper the
 * module calls itself is judged at that call (`void renewLease(name)` drops the answer).
 */
function helperOfOtherModules(
  sourceCode: Readonly<TSESLint.SourceCode>,
  fn: TSESTree.FunctionLike | undefined,
): boolean {
  if (!fn || !isExported(sourceCode.ast, fn)) return false;
  const name = functionName(fn);
  if (name === undefined) return false;
  let called = false;
  walk(sourceCode.ast, (n) => {
    if (called) return false;
    if (n.type === "CallExpression") {
      const callee = unwrap(n.callee);
      const named =
        callee.type === "Identifier"
          ? callee.name
          : callee.type === "MemberExpression" && !callee.computed && callee.property.type === "Identifier"
            ? callee.property.name
            : undefined;
      if (named === name) called = true;
    }
    return true;
  });
  return !called;
}

/** `if (result.matchedCount > 0) { return true } else { return false }` in such a helper: its caller decides. */
function answersCallerWith(sourceCode: Readonly<TSESLint.SourceCode>, test: TSESTree.IfStatement): boolean {
  if (!returnsPlainValue(test.consequent) || !returnsPlainValue(test.alternate)) return false;
  return helperOfOtherModules(sourceCode, enclosingFunction(test));
}

function answersCaller(sourceCode: Readonly<TSESLint.SourceCode>, tryStmt: TSESTree.TryStatement): boolean {
  if (!returnsPlainValue(tryStmt.handler?.body)) return false;
  const fn = enclosingFunction(tryStmt);
  if (!fn || !helperOfOtherModules(sourceCode, fn)) return false;
  let returnsOnSuccess = false;
  walk(tryStmt.block, (n) => {
    if (n.type === "ReturnStatement" && n.argument) returnsOnSuccess = true;
    return !isFunction(n);
  });
  return returnsOnSuccess;
}

type SourceCode = Readonly<TSESLint.SourceCode>;
/** A function with a body (units.ts's `isFunction` types also admit bodiless TS declarations). */
type Fn = TSESTree.ArrowFunctionExpression | TSESTree.FunctionDeclaration | TSESTree.FunctionExpression;

function isFn(node: Node | undefined): node is Fn {
  return node !== undefined && isFunction(node);
}

function enclosingFn(node: Node): Fn | undefined {
  return enclosingFunction(node) as Fn | undefined;
}

const TIMERS = new Set(["setInterval", "setTimeout", "setImmediate"]);
/** NestJS schedule decorators: the decorated method runs on a timer. */
const TIMER_DECORATORS = new Set(["Interval", "Timeout", "Cron"]);
/** Functions named like a lease renewal: `heartbeat`, `renewLease`, `extendLock`, `keepAlive`, `touchJob`. */
const RENEWAL_NAME = /heart_?beat|\bbeat\b|^beat|renew|extend|keep_?alive|refresh|touch|^ping/i;
/** Unresolved callees that hand the failure to whoever can stop the work: `onLockLost(err)`, `this.cancel()`, `child.kill()`. */
const DELEGATE_NAME = /lost|abort|cancel|kill|terminate/i;
/** Assignments that reset timer handles, not flags. */
const HANDLE_NAME = /timer|interval|timeout|handle/i;
const RELEASE_NAME = /release|unlock|relinquish|free/i;
const LOG_NAME = /^(log|error|warn|warning|info|debug|trace|fatal|report|captureException|captureError)$/;
const MAX_DEPTH = 8;

function isTimerCall(node: Node | undefined): node is TSESTree.CallExpression {
  return node?.type === "CallExpression" && TIMERS.has(calleeName(node) ?? "");
}

function isMethodCall(node: Node | undefined, names: readonly string[]): node is TSESTree.CallExpression {
  return (
    node?.type === "CallExpression" &&
    unwrap(node.callee).type === "MemberExpression" &&
    names.includes(calleeName(node) ?? "")
  );
}

/** `x` in `x.then(…)`: the call the member is the callee of, when `node` is its object. */
function chainCallOf(node: Node): TSESTree.CallExpression | undefined {
  const member = node.parent;
  if (member?.type !== "MemberExpression" || member.object !== node) return undefined;
  const call = member.parent;
  return call?.type === "CallExpression" && call.callee === member ? call : undefined;
}

/** Climbs through wrappers that do not change a value: `x!`, `x as T`, `(x)`, `a?.b`. */
function outer(node: Node): Node {
  let n = node;
  while (
    n.parent &&
    (n.parent.type === "TSAsExpression" ||
      n.parent.type === "TSNonNullExpression" ||
      n.parent.type === "TSSatisfiesExpression" ||
      n.parent.type === "TSTypeAssertion" ||
      n.parent.type === "ChainExpression")
  )
    n = n.parent;
  return n;
}

function isLoop(node: Node): boolean {
  return (
    node.type === "ForStatement" ||
    node.type === "ForOfStatement" ||
    node.type === "ForInStatement" ||
    node.type === "WhileStatement" ||
    node.type === "DoWhileStatement"
  );
}

/** The value a function hands back, for `.catch(() => 0)`: an expression body or a `return x`. */
function returnsValue(fn: Fn): boolean {
  if (fn.body.type !== "BlockStatement") {
    const b = unwrap(fn.body);
    return (
      !(b.type === "Identifier" && b.name === "undefined") && !(b.type === "UnaryExpression" && b.operator === "void")
    );
  }
  let found = false;
  walk(fn.body, (n) => {
    if (n !== fn.body && isFn(n)) return false;
    if (n.type === "ReturnStatement" && n.argument) found = true;
    return undefined;
  });
  return found;
}

/** Two paths a failure can take: a finding on either is a finding; otherwise `stops` if either path is known to stop. */
const worse = (a: FailureHandling, b: FailureHandling): FailureHandling =>
  isFinding(a) ? a : isFinding(b) ? b : a.kind === "stops" ? a : b;

export function isFinding(h: FailureHandling): boolean {
  return h.kind !== "stops" && h.kind !== "unknown";
}

/** The module: its functions by name, the calls, and the lazily built index of member reads (for flags). */
class Flow {
  private readonly byName = new Map<string, Fn[]>();
  private memberReads: Map<string, Node[]> | undefined;
  private readonly fnFate = new Map<string, Map<Fn, FailureHandling>>();
  private readonly resolved = new Map<Node, Fn | undefined>();
  private readonly uses = new Map<
    Fn,
    { calls: TSESTree.CallExpression[]; timers: TSESTree.CallExpression[]; other: boolean }
  >();
  private depth = 0;

  constructor(
    readonly sourceCode: SourceCode,
    readonly shape: ModuleShape,
  ) {
    for (const fn of shape.functions) {
      const name = functionName(fn);
      if (name === undefined || !isFn(fn)) continue;
      this.byName.set(name, [...(this.byName.get(name) ?? []), fn]);
    }
  }

  /** The module function a callee or reference names: a binding in scope, or `this.name` in the same class. */
  resolve(ref: Node): Fn | undefined {
    if (this.resolved.has(ref)) return this.resolved.get(ref);
    const fn = this.resolveUncached(ref);
    this.resolved.set(ref, fn);
    return fn;
  }

  private resolveUncached(ref: Node): Fn | undefined {
    let r = unwrap(ref);
    // `this.refresh.bind(this)`
    if (r.type === "CallExpression" && calleeName(r) === "bind" && r.callee.type === "MemberExpression")
      r = unwrap(r.callee.object);
    if (isFn(r)) return r;
    if (r.type === "Identifier") {
      const def = findVariable(this.sourceCode, r)?.defs[0];
      if (def?.type === "FunctionName" && def.node.type === "FunctionDeclaration") return def.node;
      if (def?.type === "Variable") {
        const init = getConstInit(this.sourceCode, r);
        const fn = init && unwrap(init);
        if (fn && isFn(fn)) return fn;
      }
      return undefined;
    }
    if (r.type === "MemberExpression" && unwrap(r.object).type === "ThisExpression") {
      const name = keyName(r.property, r.computed);
      const cls = classOf(r);
      return (this.byName.get(name ?? "") ?? []).find((fn) => cls !== undefined && classOf(fn) === cls);
    }
    return undefined;
  }

  /** Calls of `fn` and references that hand it to a timer, within the module. */
  private usesOf(fn: Fn): { calls: TSESTree.CallExpression[]; timers: TSESTree.CallExpression[]; other: boolean } {
    const cached = this.uses.get(fn);
    if (cached) return cached;
    const calls: TSESTree.CallExpression[] = [];
    const timers: TSESTree.CallExpression[] = [];
    let other = false;
    for (const call of this.shape.calls) {
      if (this.resolve(call.callee) === fn) calls.push(call);
      for (const arg of call.arguments) {
        if (arg.type === "SpreadElement" || isFn(arg) || this.resolve(arg) !== fn) continue;
        if (isTimerCall(call) && call.arguments[0] === arg) timers.push(call);
        else if (isMethodCall(call, ["then", "catch", "finally"]))
          calls.push(call); // `.then(renew)`: its fate is the chain's
        else other = true;
      }
    }
    const result = { calls, timers, other };
    this.uses.set(fn, result);
    return result;
  }

  /** A method decorated `@Interval(…)`/`@Cron(…)`: run by a scheduler that only logs its errors. */
  private decoratedTimer(fn: Fn): Node | undefined {
    const p = fn.parent;
    if (p?.type !== "MethodDefinition" && p?.type !== "PropertyDefinition") return undefined;
    return p.decorators?.find((d) => {
      const e = unwrap(d.expression);
      const name = e.type === "CallExpression" ? calleeName(e) : e.type === "Identifier" ? e.name : undefined;
      return TIMER_DECORATORS.has(name ?? "");
    });
  }

  /**
   * Where a failure leaving `fn` lands: a promise it returns (`promise`), or an error thrown in its body (`throw`),
   * which an async function turns into a rejection and a plain one throws at its caller.
   */
  functionFate(fn: Fn, how: "promise" | "throw"): FailureHandling {
    const key = how === "throw" && !fn.async ? "sync" : "promise";
    let byFn = this.fnFate.get(key);
    if (!byFn) this.fnFate.set(key, (byFn = new Map()));
    const cached = byFn.get(fn);
    if (cached) return cached;
    byFn.set(fn, { kind: "unknown" }); // recursion guard
    const fate = this.computeFunctionFate(fn, key === "sync");
    byFn.set(fn, fate);
    return fate;
  }

  private computeFunctionFate(fn: Fn, sync: boolean): FailureHandling {
    const decorator = this.decoratedTimer(fn);
    if (decorator) return { kind: "escapes-timer", at: fn, timer: decorator };
    const p = fn.parent;
    // `(async () => { … })()`: the call is the promise.
    if (p?.type === "CallExpression" && p.callee === fn) return sync ? this.rejectionFate(p) : this.promiseFate(p);
    if (p?.type === "CallExpression" && p.arguments.includes(fn as TSESTree.Expression)) {
      if (isTimerCall(p) && p.arguments[0] === fn) return { kind: "escapes-timer", at: fn, timer: p };
      if (isMethodCall(p, ["then", "catch", "finally"])) return this.promiseFate(p);
      return { kind: "unknown" };
    }
    if (p?.type === "NewExpression" && p.arguments[0] === fn && calleeName(p) === "Promise") return this.promiseFate(p);
    if (functionName(fn) === undefined) return { kind: "unknown" };
    const uses = this.usesOf(fn);
    let fate: FailureHandling = { kind: "unknown" };
    for (const timer of uses.timers) fate = worse(fate, { kind: "escapes-timer", at: timer.arguments[0]!, timer });
    for (const call of uses.calls) {
      if (isFinding(fate)) break;
      const direct = this.resolve(call.callee) === fn;
      fate = worse(fate, direct && sync ? this.rejectionFate(call) : this.promiseFate(call));
    }
    return fate;
  }

  /** Where the rejection of the promise `expr` evaluates to lands. */
  promiseFate(expr: Node): FailureHandling {
    if (++this.depth > MAX_DEPTH * 4) {
      this.depth--;
      return { kind: "unknown" };
    }
    try {
      return this.computePromiseFate(outer(expr));
    } finally {
      this.depth--;
    }
  }

  private computePromiseFate(n: Node): FailureHandling {
    const p = n.parent;
    if (!p) return { kind: "unknown" };
    if (p.type === "AwaitExpression") return this.rejectionFate(p);
    const chain = chainCallOf(n);
    if (chain) {
      const method = calleeName(chain);
      if (chain.arguments.some((arg) => arg.type === "SpreadElement")) return { kind: "unknown" };
      if (method === "catch") return this.handlerFate(chain.arguments[0], chain);
      if (method === "then")
        return chain.arguments.length >= 2 ? this.handlerFate(chain.arguments[1], chain) : this.promiseFate(chain);
      if (method === "finally") return this.promiseFate(chain);
      return { kind: "unknown" };
    }
    if (p.type === "ExpressionStatement" || (p.type === "UnaryExpression" && p.operator === "void"))
      return { kind: "not-awaited", at: n };
    if (p.type === "ReturnStatement") {
      const fn = enclosingFn(p);
      return fn ? this.functionFate(fn, "promise") : { kind: "unknown" };
    }
    if (isFn(p) && p.body === n) {
      // `setInterval(() => lock.extend(ttl), …)`: handed to the timer, which drops it.
      if (p.parent && isTimerCall(p.parent) && p.parent.arguments[0] === p) return { kind: "not-awaited", at: n };
      return this.functionFate(p, "promise");
    }
    if (p.type === "ConditionalExpression" && p.test !== n) return this.promiseFate(p);
    if (p.type === "LogicalExpression" && p.right === n) return this.promiseFate(p);
    if (p.type === "SequenceExpression" && p.expressions[p.expressions.length - 1] === n) return this.promiseFate(p);
    if (p.type === "ArrayExpression") {
      const all = outer(p).parent;
      if (
        all?.type === "CallExpression" &&
        all.arguments[0] === outer(p) &&
        ["all", "race", "any"].includes(calleeName(all) ?? "")
      ) {
        return this.promiseFate(all);
      }
    }
    return { kind: "unknown" };
  }

  /** A `.catch(h)` or `.then(_, h)` handler: stops the work, rethrows into `chain`, turns the failure into a checked value, or swallows it. */
  private handlerFate(handler: Node | undefined, chain: TSESTree.CallExpression): FailureHandling {
    if (!handler || handler.type === "SpreadElement") return { kind: "unknown" };
    const h = unwrap(handler);
    if (this.isReject(h)) return { kind: "stops" }; // `.then(onValue, reject)` inside a `new Promise` executor
    const fn = isFn(h) ? h : this.resolve(h);
    if (!fn) {
      // `.catch(console.error)`, `.catch(logger.warn)`: logs and swallows.
      const name = h.type === "MemberExpression" ? keyName(h.property, h.computed) : undefined;
      return name && LOG_NAME.test(name) ? { kind: "swallowed", at: h } : { kind: "unknown" };
    }
    const inside = this.reachesAbort([fn.body], undefined);
    if (inside.kind === "stops") return inside;
    if (isFinding(inside) && inside.kind !== "swallowed") return inside; // a rethrow that itself goes nowhere
    // `.catch(() => false)`: the failure becomes a value; it stops the work if that value is checked.
    if (returnsValue(fn)) {
      const value = this.valueFate(chain);
      if (value.kind === "stops" || value.kind === "unknown" || value.kind === "no-abort") return value;
    }
    return { kind: "swallowed", at: isFn(h) ? h : handler };
  }

  /**
   * Where a throw or rejection raised at `node` lands: a `catch` on the way (which must stop the work), or the
   * function's caller. `site` re-roots a called helper's throws at the call being followed.
   */
  rejectionFate(node: Node, site?: { fn: Fn; call: Node }): FailureHandling {
    if (++this.depth > MAX_DEPTH * 4) {
      this.depth--;
      return { kind: "unknown" };
    }
    try {
      let child = node;
      for (let p = node.parent; p; child = p, p = p.parent) {
        if (p.type === "TryStatement" && p.block === child && p.handler) {
          const inside = this.reachesAbort([p.handler.body], site);
          if (inside.kind === "stops" || inside.kind === "unknown") return inside;
          // `extendLock()` exported, `catch { return false }`: the failure is the helper's answer to its caller,
          // which decides whether the work stops; this module cannot see that caller.
          if (inside.kind === "swallowed" && answersCaller(this.sourceCode, p)) return { kind: "unknown" };
          return inside.kind === "swallowed" ? { kind: "swallowed", at: p.handler } : inside;
        }
        if (isFn(p)) {
          if (site && p === site.fn) return p.async ? this.promiseFate(site.call) : this.rejectionFate(site.call);
          return this.functionFate(p, "throw");
        }
      }
      return { kind: "unknown" };
    } finally {
      this.depth--;
    }
  }

  /** Member expressions read (not assigned) anywhere in the module, by property name. */
  private reads(): Map<string, Node[]> {
    if (this.memberReads) return this.memberReads;
    const out = new Map<string, Node[]>();
    walk(this.sourceCode.ast, (n) => {
      if (n.type !== "MemberExpression") return;
      const name = keyName(n.property, n.computed);
      if (name === undefined) return;
      const p = n.parent;
      if (p?.type === "AssignmentExpression" && p.left === n && p.operator === "=") return;
      out.set(name, [...(out.get(name) ?? []), n]);
    });
    return (this.memberReads = out);
  }

  /** `lost = true`, `this.aborted = true`: a flag, when something outside `region` reads it. */
  private setsFlag(assign: TSESTree.AssignmentExpression, region: readonly Node[]): boolean {
    if (assign.operator !== "=") return false;
    const value = unwrap(assign.right);
    if (
      (value.type === "Literal" && value.value === null) ||
      (value.type === "Identifier" && value.name === "undefined")
    )
      return false;
    const left = unwrap(assign.left);
    const outside = (n: Node) => !region.some((r) => contains(r, n));
    if (left.type === "Identifier") {
      if (HANDLE_NAME.test(left.name)) return false;
      const variable = findVariable(this.sourceCode, left);
      return variable?.references.some((r) => r.isRead() && outside(r.identifier)) ?? false;
    }
    if (left.type === "MemberExpression") {
      const name = keyName(left.property, left.computed);
      if (name === undefined || HANDLE_NAME.test(name)) return false;
      return (this.reads().get(name) ?? []).some(outside);
    }
    return false;
  }

  /** A `reject` parameter of a `new Promise((resolve, reject) => …)` executor. */
  private isReject(callee: Node): boolean {
    const c = unwrap(callee);
    if (c.type !== "Identifier") return false;
    const def = findVariable(this.sourceCode, c)?.defs[0];
    if (def?.type !== "Parameter") return false;
    const fn = def.node;
    const executor = fn.parent;
    return fn.params[1] === def.name && executor?.type === "NewExpression" && calleeName(executor) === "Promise";
  }

  /** `return`/`break` inside a loop of the work (not of a timer callback) ends the loop that holds the renewal. */
  private endsWorkLoop(stmt: Node): boolean {
    for (let p = stmt.parent; p; p = p.parent) {
      if (isFn(p)) return false;
      if (isLoop(p)) {
        for (let q = p.parent; q; q = q.parent) {
          if (isFn(q)) return !(q.parent && isTimerCall(q.parent)) && this.decoratedTimer(q) === undefined;
        }
        return true;
      }
    }
    return false;
  }

  /**
   * Whether code in `region` stops the work: an abort, `process.exit`, a flag read elsewhere, `reject(…)`, a throw that
   * lands in the work, a return out of the work loop, or a module function that does one of these.
   */
  reachesAbort(
    region: readonly Node[],
    site: { fn: Fn; call: Node } | undefined,
    seen = new Set<Fn>(),
  ): FailureHandling {
    let result: FailureHandling = { kind: "swallowed", at: region[0]! };
    const visit = (n: Node): boolean | void => {
      if (result.kind === "stops") return false;
      if (n.type === "CallExpression" || n.type === "NewExpression") {
        const name = calleeName(n);
        const callee = unwrap(n.callee);
        if (
          callee.type === "MemberExpression" &&
          unwrap(callee.object).type === "Identifier" &&
          (unwrap(callee.object) as TSESTree.Identifier).name === "process" &&
          ["exit", "kill", "abort"].includes(name ?? "")
        ) {
          result = { kind: "stops" };
          return false;
        }
        if (n.type === "CallExpression" && callee.type === "MemberExpression" && name === "abort") {
          result = { kind: "stops" };
          return false;
        }
        if (n.type === "CallExpression" && this.isReject(n.callee)) {
          result = { kind: "stops" };
          return false;
        }
        const fn = n.type === "CallExpression" ? this.resolve(n.callee) : undefined;
        if (fn && !seen.has(fn) && seen.size < MAX_DEPTH) {
          seen.add(fn);
          const inner = this.reachesAbort([fn.body], { fn, call: n }, seen);
          if (inner.kind === "stops") {
            result = inner;
            return false;
          }
          if (isFinding(inner) && inner.kind !== "swallowed") result = inner;
        } else if (!fn && n.type === "CallExpression" && name && DELEGATE_NAME.test(name)) {
          result = { kind: "stops" };
          return false;
        }
      }
      if (n.type === "AssignmentExpression" && this.setsFlag(n, region)) {
        result = { kind: "stops" };
        return false;
      }
      if (n.type === "ThrowStatement") {
        const fate = this.rejectionFate(n, site);
        if (fate.kind === "stops" || fate.kind === "unknown") {
          result = { kind: "stops" };
          return false;
        }
        if (fate.kind !== "swallowed") result = fate;
      }
      if ((n.type === "ReturnStatement" || n.type === "BreakStatement") && this.endsWorkLoop(n)) {
        result = { kind: "stops" };
        return false;
      }
      return undefined;
    };
    for (const r of region) walk(r, visit);
    return result;
  }

  /**
   * Where the resolved value at `node` goes: read by a test whose branches stop the work (`stops`), read by a test
   * that does not (`no-abort`), never read (`result-ignored`), or handed somewhere we cannot follow (`unknown`).
   */
  valueFate(node: Node, depth = 0): FailureHandling {
    if (depth > MAX_DEPTH) return { kind: "unknown" };
    const n = outer(node);
    const p = n.parent;
    if (!p) return { kind: "unknown" };
    switch (p.type) {
      case "ExpressionStatement":
        return { kind: "result-ignored", at: n };
      case "UnaryExpression":
        return p.operator === "void" ? { kind: "result-ignored", at: n } : this.valueFate(p, depth + 1);
      case "AwaitExpression":
      case "BinaryExpression":
        return this.valueFate(p, depth + 1);
      case "MemberExpression":
        return p.object === n ? this.valueFate(p, depth + 1) : { kind: "unknown" };
      case "IfStatement":
      case "ConditionalExpression": {
        if (p.test !== n)
          return p.type === "ConditionalExpression" ? this.valueFate(p, depth + 1) : { kind: "unknown" };
        const region: Node[] = [p.consequent, ...(p.alternate ? [p.alternate] : [])];
        // `if (ok) return; …` / `if (!ok) { log(); return; } …`: what follows runs on one side of the test too.
        if (p.type === "IfStatement" && (exits(p.consequent) || (p.alternate && exits(p.alternate)))) {
          const block = p.parent;
          if (block?.type === "BlockStatement") region.push(...block.body.slice(block.body.indexOf(p) + 1));
        }
        const fate = this.reachesAbort(region, undefined);
        if (fate.kind !== "stops" && p.type === "IfStatement" && answersCallerWith(this.sourceCode, p))
          return { kind: "unknown" };
        return fate.kind === "stops" ? fate : { kind: "no-abort", at: p.test };
      }
      case "LogicalExpression": {
        if (p.left === n) {
          // `ok || controller.abort()`
          const fate = this.reachesAbort([p.right], undefined);
          if (fate.kind === "stops") return fate;
        }
        return this.valueFate(p, depth + 1);
      }
      case "WhileStatement":
      case "DoWhileStatement":
      case "ForStatement":
        return { kind: "stops" }; // `while (await lock.extend())`: the loop ends when renewal fails
      case "VariableDeclarator":
        return p.init === n ? this.bindingFate(p.id, depth) : { kind: "unknown" };
      case "AssignmentExpression":
        return p.right === n && p.operator === "=" && unwrap(p.left).type === "Identifier"
          ? this.bindingFate(p.left, depth)
          : { kind: "unknown" };
      case "ReturnStatement": {
        const fn = enclosingFn(p);
        return fn ? this.returnedValueFate(fn, depth) : { kind: "unknown" };
      }
      default:
        if (isFn(p) && p.body === n) return this.returnedValueFate(p, depth);
        return { kind: "unknown" };
    }
  }

  /** A value bound to a name (or a destructuring pattern): where its reads go. */
  private bindingFate(id: Node, depth: number): FailureHandling {
    const ids: TSESTree.Identifier[] = [];
    walk(id, (n) => {
      if (n.type === "TSTypeAnnotation") return false;
      if (n.type === "Identifier" && !(n.parent?.type === "Property" && n.parent.key === n && !n.parent.shorthand))
        ids.push(n);
      if (n.type === "AssignmentPattern") {
        walk(n.left, (m) => void (m.type === "Identifier" && ids.push(m)));
        return false;
      }
      return undefined;
    });
    let fate: FailureHandling | undefined;
    for (const ident of ids) {
      const variable = findVariable(this.sourceCode, ident);
      for (const ref of variable?.references ?? []) {
        if (!ref.isRead()) continue;
        const f = this.valueFate(ref.identifier, depth + 1);
        if (f.kind === "stops" || f.kind === "unknown") return f;
        fate = fate && fate.kind === "no-abort" ? fate : f;
      }
    }
    return fate ?? { kind: "result-ignored", at: id };
  }

  /** A function returns the value: each caller decides (`if (!(await renew()))`). */
  private returnedValueFate(fn: Fn, depth: number): FailureHandling {
    const p = fn.parent;
    if (p?.type === "CallExpression" && isMethodCall(p, ["then"]) && p.arguments[0] === fn)
      return this.valueFate(p, depth + 1);
    if (p?.type === "CallExpression" && isTimerCall(p) && p.arguments[0] === fn)
      return { kind: "result-ignored", at: fn };
    if (functionName(fn) === undefined) return { kind: "unknown" };
    const uses = this.usesOf(fn);
    if (uses.other || (uses.calls.length === 0 && uses.timers.length === 0)) return { kind: "unknown" };
    let fate: FailureHandling | undefined;
    for (const timer of uses.timers) fate = { kind: "result-ignored", at: timer.arguments[0]! };
    for (const call of uses.calls) {
      if (this.resolve(call.callee) !== fn) return { kind: "unknown" }; // `.then(renew)`
      const f = this.resolvedValueFate(call, depth + 1);
      if (f.kind === "stops" || f.kind === "unknown") return f;
      fate = fate && fate.kind === "no-abort" ? fate : f;
    }
    return fate ?? { kind: "unknown" };
  }

  /** The value a promise-returning call resolves: after `await`, or in `.then(cb)`. */
  resolvedValueFate(call: Node, depth = 0): FailureHandling {
    const n = outer(call);
    if (n.parent?.type === "AwaitExpression") return this.valueFate(n.parent, depth);
    const chain = chainCallOf(n);
    if (chain && calleeName(chain) === "then") {
      const cb = chain.arguments[0] && unwrap(chain.arguments[0]);
      if (!cb || !isFn(cb)) return { kind: "unknown" };
      const param = cb.params[0];
      return param ? this.bindingFate(param, depth) : { kind: "result-ignored", at: cb };
    }
    if (chain && ["catch", "finally"].includes(calleeName(chain) ?? ""))
      return this.resolvedValueFate(chain, depth + 1);
    const p = n.parent;
    if (p?.type === "ExpressionStatement" || (p?.type === "UnaryExpression" && p.operator === "void"))
      return { kind: "result-ignored", at: n };
    if (p?.type === "ReturnStatement" || (p && isFn(p) && p.body === n)) {
      const fn = p.type === "ReturnStatement" ? enclosingFn(p) : (p as Fn);
      return fn ? this.returnedValueFate(fn, depth + 1) : { kind: "unknown" };
    }
    return { kind: "unknown" };
  }

  /** The renewal runs from a timer: lexically inside a timer callback, or in a function such a callback calls. */
  timerDriven(node: Node, seen = new Set<Fn>()): boolean {
    for (let p = node.parent; p; p = p.parent) {
      if (!isFn(p)) continue;
      if (p.parent && isTimerCall(p.parent) && p.parent.arguments[0] === p) return true;
      if (this.decoratedTimer(p)) return true;
      if (functionName(p) !== undefined) {
        if (seen.has(p) || seen.size > MAX_DEPTH) return false;
        seen.add(p);
        const uses = this.usesOf(p);
        return uses.timers.length > 0 || uses.calls.some((c) => this.timerDriven(c, seen));
      }
    }
    return false;
  }
}

// ---- recognising renewals ----

function commandLoc(call: Node): TSESTree.SourceLocation {
  if (call.type === "CallExpression") {
    const callee = unwrap(call.callee);
    if (callee.type === "MemberExpression") return { start: callee.property.loc.start, end: call.loc.end };
  }
  return call.loc;
}

/** An EXPIRE right after the NX acquire, in the same function and not in a loop of its own: the acquire's TTL. */
function isAcquireTtl(op: KvOp, acquire: KvOp): boolean {
  const fn = enclosingFn(op.node);
  if (fn !== enclosingFn(acquire.node) || op.node.range[0] < acquire.node.range[1]) return false;
  for (let p = op.node.parent; p && p !== fn; p = p.parent) if (isLoop(p) && !contains(p, acquire.node)) return false;
  return true;
}

const LIBRARY_NAME: Record<LibraryLockOp["library"], string> = {
  redlock: "Redlock",
  "redis-semaphore": "redis-semaphore",
  "in-process": "in-process",
};
const EXPIRE_NAME: Record<string, string> = { EX: "EXPIRE", PX: "PEXPIRE", EXAT: "EXPIREAT", PXAT: "PEXPIREAT" };

function redisRenewals(flow: Flow, kv: KvFacts, vocabulary: ResolvedVocabulary): Renewal[] {
  const out: Renewal[] = [];
  const gets = new Map<Node, KvOp>();
  for (const o of kv.ops) if (o.command === "get") gets.set(o.node, o);
  const takeovers = new Set(kv.takeovers.map((t) => t.op));
  const watched = kv.ops.filter((o) => o.command === "watch");
  for (const op of kv.ops) {
    const isExpire = op.command === "expire";
    const isScript = op.command === "script" && op.script === "compare-and-expire";
    const watchedBatch = op.batch !== undefined && watched.some((w) => sameKey(w.key, op.key));
    // A SET after a GET compare is a take-over (owner-checked-release's), unless WATCH makes the pair atomic.
    const isSet = op.command === "set" && !op.nx && op.ttl === "present" && (!takeovers.has(op) || watchedBatch);
    if (!isExpire && !isScript && !isSet) continue;
    const paired = kv.locks.filter(
      (l) => l.lockLike && l.acquire !== op && l.acquire.client === op.client && sameKey(l.acquire.key, op.key),
    );
    const lock = paired[0];
    if (!lock || paired.some((l) => l.expire === op || (isExpire && isAcquireTtl(op, l.acquire)))) continue;
    // Without a TTL in the acquire, an EXPIRE elsewhere is the acquire's TTL set late (require-lock-ttl's finding).
    if (isExpire && paired.every((l) => l.ttl === "absent")) continue;
    // An expiry set on the way out (`release() { pexpire(key, 1) }`) ends the lock, it does not renew it.
    if (RELEASE_NAME.test(namedUnit(op.node) ?? "")) continue;
    // A plain SET of the lock key renews only when it runs as one: from a timer or a renewal function.
    if (isSet && !flow.timerDriven(op.node) && !RENEWAL_NAME.test(namedUnit(op.node) ?? "")) continue;
    const owned = isScript || (isSet && watchedBatch);
    const command = isScript
      ? "compare-and-expire script"
      : isSet
        ? "SET … PX"
        : (EXPIRE_NAME[op.expiry?.unit ?? "EX"] ?? "EXPIRE");
    const get = owned ? undefined : comparedGet(flow.sourceCode, op, gets, vocabulary);
    out.push({
      ...(get ? { comparedGet: get.node } : {}),
      via: "redis",
      node: op.node,
      loc: op.loc,
      command,
      lock: `the lock ${describeKey(op.key)}`,
      acquire: lock.acquire.node,
      owned,
      signal: isSet ? "rejection" : "value",
      handling: owned ? handlingOf(flow, op.node, isSet ? "rejection" : "value") : { kind: "unknown" },
    });
  }
  return out;
}

function namedUnit(node: Node): string | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (isFn(p)) {
      const name = functionName(p);
      if (name !== undefined) return name;
    }
  }
  return undefined;
}

/** How a renewal's failure is handled: its promise's fate, and for value-signalled renewals also its result's. */
function handlingOf(flow: Flow, call: Node, signal: "value" | "rejection"): FailureHandling {
  const promise = flow.promiseFate(call);
  // Dropped or swallowed outright is the first thing to fix; then an unread or unheeded result; then a rejection
  // that leaves a timer.
  if (promise.kind === "not-awaited" || promise.kind === "swallowed") return promise;
  if (signal === "value") {
    const value = flow.resolvedValueFate(call);
    if (value.kind === "result-ignored" || value.kind === "no-abort") return value;
  }
  return promise;
}

/** The library acquire whose lock `receiver` holds (`const lock = await redlock.acquire(…)`; `lock = await lock.extend(…)`). */
function libraryAcquireOf(
  sourceCode: SourceCode,
  receiver: Node,
  acquires: readonly LibraryLockOp[],
): LibraryLockOp | undefined {
  const r = unwrap(receiver);
  if (r.type !== "Identifier") return undefined;
  const variable = findVariable(sourceCode, r);
  for (const ref of variable?.references ?? []) {
    let value = ref.writeExpr && unwrap(ref.writeExpr);
    if (value?.type === "AwaitExpression") value = unwrap(value.argument);
    const acquire = value && acquires.find((a) => a.node === value);
    if (acquire) return acquire;
  }
  return undefined;
}

function libraryRenewals(flow: Flow, sourceCode: SourceCode, ops: readonly LibraryLockOp[]): Renewal[] {
  const out: Renewal[] = [];
  const acquires = ops.filter((o) => o.op === "acquire");
  for (const op of ops) {
    const call = op.node;
    if (call.type !== "CallExpression") continue;
    const callee = unwrap(call.callee);
    const receiver = callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
    if (op.op === "extend") {
      // `redlock.extend(lock, ttl)` (v5) or `lock.extend(ttl)`.
      const target =
        op.library === "redlock" && call.arguments.length >= 2 && call.arguments[0]?.type !== "SpreadElement"
          ? call.arguments[0]
          : receiver;
      const acquire = target && libraryAcquireOf(sourceCode, target, acquires);
      out.push({
        via: "library",
        node: call,
        loc: commandLoc(call),
        command: `${calleeName(call)}()`,
        lock: `the ${LIBRARY_NAME[op.library]} lock${target ? ` \`${sourceCode.getText(target)}\`` : ""}`,
        ...(acquire ? { acquire: acquire.node } : {}),
        owned: true,
        signal: "rejection",
        handling: handlingOf(flow, call, "rejection"),
      });
    } else if (op.op === "using" && op.library === "redlock") {
      const using = usingRenewal(sourceCode, call);
      if (using) out.push(using);
    } else if (op.op === "acquire" && op.library === "redis-semaphore" && receiver) {
      const lost = onLockLostRenewal(flow, sourceCode, op, receiver);
      if (lost) out.push(lost);
    }
  }
  return out;
}

/** Redlock `using(resources, ttl, [settings,] async (signal) => …)`: the callback must look at its signal. */
function usingRenewal(sourceCode: SourceCode, call: TSESTree.CallExpression): Renewal | undefined {
  const last = call.arguments[call.arguments.length - 1];
  const cb = last && unwrap(last);
  if (!cb || !isFn(cb) || call.arguments.length < 3) return undefined;
  // Synchronous work (no await, no promise handed back) cannot outlive its lease between two ticks of the extension
  // timer, and could not check a signal anyway.
  let awaits = cb.body.type !== "BlockStatement" && unwrap(cb.body).type === "CallExpression";
  walk(cb.body, (n) => {
    if (n !== cb.body && isFn(n)) return false;
    if (n.type === "AwaitExpression" || (n.type === "ForOfStatement" && n.await) || n.type === "YieldExpression")
      awaits = true;
    if (n.type === "ReturnStatement" && n.argument && unwrap(n.argument).type === "CallExpression") awaits = true;
    return undefined;
  });
  if (!awaits) return undefined;
  const resources = call.arguments[0] && unwrap(call.arguments[0]);
  const first = resources?.type === "ArrayExpression" ? resources.elements[0] : resources;
  const lock =
    first && first.type !== "SpreadElement" ? `the lock ${describeKey(keyShape(sourceCode, first))}` : "the lock";
  const base = {
    via: "using" as const,
    node: call,
    loc: commandLoc(call),
    command: "using()",
    lock,
    acquire: call,
    owned: true,
    signal: "rejection" as const,
  };
  const param = cb.params[0];
  if (!param) return { ...base, handling: { kind: "signal-ignored", at: cb } };
  if (param.type !== "Identifier") return { ...base, handling: { kind: "unknown" } };
  const variable = sourceCode.getDeclaredVariables(cb).find((v) => v.name === param.name);
  const used = variable?.references.some((r) => r.isRead()) ?? true;
  return { ...base, handling: used ? { kind: "stops" } : { kind: "signal-ignored", at: param, signal: param.name } };
}

/** redis-semaphore refreshes on its own timer and calls `onLockLost` when a refresh fails: that handler must stop the work. */
function onLockLostRenewal(flow: Flow, sourceCode: SourceCode, op: LibraryLockOp, receiver: Node): Renewal | undefined {
  if (receiver.type !== "Identifier") return undefined;
  let created = getConstInit(sourceCode, receiver);
  created = created && unwrap(created);
  if (created?.type !== "NewExpression") return undefined;
  const options = created.arguments[2] && unwrap(created.arguments[2]);
  if (options?.type !== "ObjectExpression") return undefined;
  const prop = options.properties.find(
    (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === "onLockLost",
  );
  if (!prop) return undefined;
  const handler = unwrap(prop.value);
  const fn = isFn(handler) ? handler : flow.resolve(handler);
  if (!fn) return undefined;
  // The library's default handler throws from its timer, which ends the process: a handler that throws keeps that.
  let throws = false;
  walk(fn.body, (n) => {
    if (n !== fn.body && isFn(n)) return false;
    if (n.type === "ThrowStatement") throws = true;
    return undefined;
  });
  const inside = throws ? { kind: "stops" as const } : flow.reachesAbort([fn.body], undefined);
  const keyNode = created.arguments[1];
  const key = `the redis-semaphore lock${keyNode && keyNode.type !== "SpreadElement" ? ` ${describeKey(keyShape(sourceCode, keyNode))}` : ""}`;
  return {
    via: "library",
    node: op.node,
    loc: prop.loc,
    command: "onLockLost",
    lock: key,
    acquire: op.node,
    owned: true,
    signal: "rejection",
    handling: inside.kind === "stops" ? inside : { kind: "swallowed", at: prop },
  };
}

/**
 * A heartbeat's filter branch matches only while this holder still has the row: it names the owner (`lockedBy`,
 * `workerId`, whether the value is a parameter or a module constant), or pins the claimed status (on any lifecycle
 * field: a raw-SQL claim of `"Job_Status"` and a Prisma heartbeat on `status` are one column), or cannot be read.
 */
function fenced(branch: Branch, claim: Claim, vocabulary: ResolvedVocabulary): boolean {
  return branch.some((a) => {
    if ("opaque" in a) return true;
    if (a.op !== "eq" && a.op !== "in") return false;
    if (vocabulary.isOwnerField(a.pred.field)) return true;
    return (
      !claim.insert &&
      vocabulary.isStateField(a.pred.field) &&
      (a.pred.values ?? []).some((v) => sameValue(v, claim.lock.value))
    );
  });
}

/** Prisma's `update` throws when no row matches; every other client reports a count. */
function failureSignal(write: StateWrite): "value" | "rejection" {
  return write.store === "prisma" && (write.operation === "update" || write.operation === "upsert")
    ? "rejection"
    : "value";
}

function databaseRenewals(
  flow: Flow,
  facts: {
    readonly writes: readonly StateWrite[];
    readonly claims: readonly Claim[];
    readonly releases?: readonly StateWrite[];
  },
  vocabulary: ResolvedVocabulary,
): Renewal[] {
  if (facts.claims.length === 0) return [];
  const out: Renewal[] = [];
  // A lock row's release clears its lease (`lockedUntil = now()`): it ends the hold, it does not renew it.
  const claimWrites = new Set([...facts.claims.map((c) => c.write), ...(facts.releases ?? [])]);
  for (const write of facts.writes) {
    if ((write.effect ?? "update") !== "update" || claimWrites.has(write)) continue;
    const progress = write.assignments.find(
      (a) => a.value.kind !== "static" && vocabulary.isProgressTimeField(a.field),
    );
    if (!progress || write.assignments.some((a) => vocabulary.isStateField(a.field) || vocabulary.isFlagField(a.field)))
      continue;
    const branches = toBranches(write.filter);
    if (branches.length === 0 || !branches.every((b) => identityFields(b).length > 0)) continue;
    const claim =
      facts.claims.find((c) => !c.insert && normalizeModel(c.lock.model) === normalizeModel(write.model)) ??
      facts.claims.find((c) => normalizeModel(c.lock.model) === normalizeModel(write.model));
    if (!claim) continue;
    if (!flow.timerDriven(write.node) && !RENEWAL_NAME.test(namedUnit(write.node) ?? "")) continue;
    const owned = branches.every((b) => fenced(b, claim, vocabulary));
    const signal = failureSignal(write);
    const fields = [...new Set(branches.flatMap((b) => identityFields(b)))];
    out.push({
      via: "database",
      node: write.node,
      loc: commandLoc(write.node),
      command: `the ${progress.field} update`,
      lock: `the claimed ${write.model} row`,
      acquire: claim.write.node,
      owned,
      signal,
      rowFilter: fields.join(" and "),
      handling: owned ? handlingOf(flow, callOf(write.node), signal) : { kind: "unknown" },
    });
  }
  return out;
}

/** The outermost call of a builder chain (`db.update(t).set(…).where(…)`): the promise the code awaits. */
function callOf(node: Node): Node {
  let n = outer(node);
  for (;;) {
    const chain = chainCallOf(n);
    if (!chain || ["then", "catch", "finally"].includes(calleeName(chain) ?? "")) return n;
    n = outer(chain);
  }
}

/** Every renewal in the module, with how its failure is handled. */
export function buildRenewals(
  sourceCode: SourceCode,
  facts: {
    readonly kv: KvFacts;
    readonly writes: readonly StateWrite[];
    readonly claims: readonly Claim[];
    /** Writes that release a lock row (pairing.ts): not renewals. */
    readonly releases?: readonly StateWrite[];
  },
  shape: ModuleShape,
  vocabulary: ResolvedVocabulary,
): Renewal[] {
  const hasKv = facts.kv.locks.length > 0;
  const hasLibrary = facts.kv.libraryLocks.some((l) => l.op !== "release" && l.library !== "in-process");
  if (!hasKv && !hasLibrary && facts.claims.length === 0) return [];
  const flow = new Flow(sourceCode, shape);
  return [
    ...(hasKv ? redisRenewals(flow, facts.kv, vocabulary) : []),
    ...(hasLibrary
      ? libraryRenewals(
          flow,
          sourceCode,
          facts.kv.libraryLocks.filter((l) => l.library !== "in-process"),
        )
      : []),
    ...databaseRenewals(flow, facts, vocabulary),
  ];
}
