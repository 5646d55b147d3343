/**
 * Where a promise's rejection, or the value that says it failed, goes (`Flow`): awaited into a `catch`, chained to a
 * handler, swallowed, dropped (not awaited), thrown out of a timer callback where it reaches nobody, read by a test, or
 * handed to code the module does not show. It is followed through the AST (parent pointers) and the module's own
 * functions to an *abort* that stops the work: `controller.abort()`, `process.exit`, a flag read elsewhere, `reject` of
 * a promise, a throw that propagates into the work, or a call to a module function that does one of these.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { FailureHandling } from "../model/renewals.js";
import type { ModuleShape } from "../model/lock-facts.js";
import { calleeName, contains, exits } from "./ast.js";
import { enclosingFunction, functionName, isFunction } from "./units.js";
import { findVariable, keyName, unwrap } from "./values.js";
import {
  enclosingFn,
  FunctionBindings,
  helperOfOtherModules,
  isFn,
  isMethodCall,
  isTimerCall,
  type Fn,
} from "./function-bindings.js";
import { walk } from "./walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** A plain value given back: `return false`, `return null`, `return undefined`. */
function returnsPlainValue(stmt: Node | null | undefined): boolean {
  const last = stmt?.type === "BlockStatement" ? stmt.body.at(-1) : stmt;
  const value = last?.type === "ReturnStatement" && last.argument ? unwrap(last.argument) : undefined;
  return (
    value !== undefined && (value.type === "Literal" || (value.type === "Identifier" && value.name === "undefined"))
  );
}

/** `if (result.matchedCount > 0) { return true } else { return false }` in such a helper: its caller decides. */
function answersCallerWith(sourceCode: Readonly<TSESLint.SourceCode>, test: TSESTree.IfStatement): boolean {
  return answersWith(test) && helperOfOtherModules(sourceCode, enclosingFunction(test));
}

/** `if (…) { return true } else { return false }`: the function's answer is the test's outcome. */
function answersWith(test: TSESTree.IfStatement): boolean {
  return returnsPlainValue(test.consequent) && returnsPlainValue(test.alternate);
}

/** A `try` whose `catch` ends by returning a plain value and whose block returns too: the failure is an answer. */
function answersWithCatch(tryStmt: TSESTree.TryStatement): boolean {
  if (!returnsPlainValue(tryStmt.handler?.body)) return false;
  let returnsOnSuccess = false;
  walk(tryStmt.block, (n) => {
    if (n.type === "ReturnStatement" && n.argument) returnsOnSuccess = true;
    return !isFunction(n);
  });
  return returnsOnSuccess;
}

/**
 * A `try` whose `catch` ends by returning a plain value (`return false`, `return null`) in a helper of other modules
 * that returns on success too: a renewal helper that tells its caller whether the lease was extended.
 */
function answersCaller(sourceCode: Readonly<TSESLint.SourceCode>, tryStmt: TSESTree.TryStatement): boolean {
  const fn = enclosingFunction(tryStmt);
  return fn !== undefined && helperOfOtherModules(sourceCode, fn) && answersWithCatch(tryStmt);
}

/** NestJS schedule decorators: the decorated method runs on a timer. */
const TIMER_DECORATORS = new Set(["Interval", "Timeout", "Cron"]);

/** Unresolved callees that hand the failure to whoever can stop the work: `onLockLost(err)`, `this.cancel()`, `child.kill()`. */
/** A function named for what ends the work (`onLockLost`, `abortRun`, `cancel`, `kill`, `terminate`). */
export const DELEGATE_NAME = /lost|abort|cancel|kill|terminate/i;

/** Assignments that reset timer handles, not flags. */
const HANDLE_NAME = /timer|interval|timeout|handle/i;

/** Methods that only log or report what they are handed (`console.error`, `logger.warn`, `Sentry.captureException`). */
export const LOG_NAME = /^(log|error|warn|warning|info|debug|trace|fatal|report|captureException|captureError)$/;

const MAX_DEPTH = 8;

/** `x` in `x.then(…)`: the call the member is the callee of, when `node` is its object. */
export function chainCallOf(node: Node): TSESTree.CallExpression | undefined {
  const member = node.parent;
  if (member?.type !== "MemberExpression" || member.object !== node) return undefined;
  const call = member.parent;
  return call?.type === "CallExpression" && call.callee === member ? call : undefined;
}

/** The outermost call of a builder chain (`db.update(t).set(…).where(…)`): the promise the code awaits. */
export function chainPromise(node: Node): Node {
  let n = outer(node);
  for (;;) {
    const chain = chainCallOf(n);
    if (!chain || ["then", "catch", "finally"].includes(calleeName(chain) ?? "")) return n;
    n = outer(chain);
  }
}

/** Inside a `try` block (of `fn`) whose `catch` does not rethrow. */
export function caughtIn(node: Node, fn: Node): boolean {
  for (let child: Node = node, p: Node | undefined = node.parent; p && p !== fn; child = p, p = p.parent) {
    if (p.type !== "TryStatement" || p.block !== child || !p.handler) continue;
    let rethrows = false;
    for (const s of p.handler.body.body) if (s.type === "ThrowStatement") rethrows = true;
    if (!rethrows) return true;
  }
  return false;
}

/** Climbs through wrappers that do not change a value: `x!`, `x as T`, `(x)`, `a?.b`. */
export function outer(node: Node): Node {
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

export function isLoop(node: Node): boolean {
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

/** The module: its functions by binding, the calls, and the lazily built index of member reads (for flags). */
export class Flow {
  /** The module function each callee or reference is bound to, and where each function is used. */
  readonly bindings: FunctionBindings;
  private memberReads: Map<string, Node[]> | undefined;
  private readonly fnFate = new Map<string, Map<Fn, FailureHandling>>();
  private depth = 0;

  constructor(
    readonly sourceCode: SourceCode,
    readonly shape: ModuleShape,
  ) {
    this.bindings = new FunctionBindings(sourceCode, shape);
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
    const uses = this.bindings.usesOf(fn);
    let fate: FailureHandling = { kind: "unknown" };
    for (const timer of uses.timers) fate = worse(fate, { kind: "escapes-timer", at: timer.arguments[0]!, timer });
    for (const call of uses.calls) {
      if (isFinding(fate)) break;
      const direct = this.bindings.boundFunction(call.callee) === fn;
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
    const fn = isFn(h) ? h : this.bindings.boundFunction(h);
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
          // The same in a helper this module calls: the answer is followed to those calls (`void renewLease(id)` in a
          // timer drops it).
          const answering = inside.kind === "swallowed" && answersWithCatch(p) ? enclosingFn(p) : undefined;
          if (answering && functionName(answering) !== undefined) return this.returnedValueFate(answering, 1);
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
        const fn = n.type === "CallExpression" ? this.bindings.boundFunction(n.callee) : undefined;
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
        const answering =
          fate.kind !== "stops" && p.type === "IfStatement" && answersWith(p) ? enclosingFn(p) : undefined;
        if (answering && functionName(answering) !== undefined) return this.returnedValueFate(answering, depth + 1);
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
    const uses = this.bindings.usesOf(fn);
    if (uses.other || (uses.calls.length === 0 && uses.timers.length === 0)) return { kind: "unknown" };
    let fate: FailureHandling | undefined;
    for (const timer of uses.timers) fate = { kind: "result-ignored", at: timer.arguments[0]! };
    for (const call of uses.calls) {
      if (this.bindings.boundFunction(call.callee) !== fn) return { kind: "unknown" }; // `.then(renew)`
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
        const uses = this.bindings.usesOf(p);
        return uses.timers.length > 0 || uses.calls.some((c) => this.timerDriven(c, seen));
      }
    }
    return false;
  }
}
