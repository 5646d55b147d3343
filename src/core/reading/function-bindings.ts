/**
 * Which function of the module a callee or a reference is bound to (`FunctionBindings`), by scope: the function a
 * name's binding declares or holds in a `const` (or a variable written once), `this.name` in the same class,
 * `f.bind(this)`, a function written in place; and, for each function, the calls of it and the references that hand it
 * to a timer. A name bound to something else (a parameter, an import, a variable assigned again) reaches no function
 * of the module, whatever it is called. And whether an exported helper is called in its module at all.
 *
 * Bindings, not names: pairing's `CallGraphByName` (src/core/facts/pairing/holding.ts) answers which functions a
 * call may reach by their names alone, for where code runs while a lock is held; the two rules give different answers
 * and are kept apart (see there).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { ModuleShape } from "../model/lock-facts.js";
import { calleeName } from "./ast.js";
import { isExported } from "./exports.js";
import { classOf, enclosingFunction, functionName, isFunction } from "./units.js";
import { findVariable, getConstInit, keyName, unwrap } from "./values.js";
import { walk } from "./walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * An exported helper whose callers are all in other modules: what it returns is their business. A helper the
 * module calls itself is judged at that call (`void renewLease(name)` drops the answer), unless that call hands the
 * answer straight back to its own caller (`extend: (ttl) => extendLock(name, token, ttl)` on the handle an exported
 * acquire returns, `return renewLease(name)`): blind-9 B501.
 */
export function helperOfOtherModules(
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
      if (named === name && !handsBack(n)) called = true;
    }
    return true;
  });
  return !called;
}

/** The call's result is what its function returns: `return f()`, `return await f()`, `() => f()`. */
function handsBack(call: Node): boolean {
  let n: Node = call;
  while (n.parent?.type === "AwaitExpression" || n.parent?.type === "TSAsExpression") n = n.parent;
  const p = n.parent;
  return p?.type === "ReturnStatement" || (p?.type === "ArrowFunctionExpression" && p.body === n);
}

/** A function with a body (units.ts's `isFunction` types also admit bodiless TS declarations). */
export type Fn = TSESTree.ArrowFunctionExpression | TSESTree.FunctionDeclaration | TSESTree.FunctionExpression;

export function isFn(node: Node | undefined): node is Fn {
  return node !== undefined && isFunction(node);
}

export function enclosingFn(node: Node): Fn | undefined {
  return enclosingFunction(node) as Fn | undefined;
}

const TIMERS = new Set(["setInterval", "setTimeout", "setImmediate"]);

export function isTimerCall(node: Node | undefined): node is TSESTree.CallExpression {
  return node?.type === "CallExpression" && TIMERS.has(calleeName(node) ?? "");
}

export function isMethodCall(node: Node | undefined, names: readonly string[]): node is TSESTree.CallExpression {
  return (
    node?.type === "CallExpression" &&
    unwrap(node.callee).type === "MemberExpression" &&
    names.includes(calleeName(node) ?? "")
  );
}

/** The module's functions by binding: which one a callee or reference is bound to, and where each is used. */
export class FunctionBindings {
  private readonly byName = new Map<string, Fn[]>();
  private readonly resolved = new Map<Node, Fn | undefined>();
  private readonly uses = new Map<
    Fn,
    { calls: TSESTree.CallExpression[]; timers: TSESTree.CallExpression[]; other: boolean }
  >();

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
  boundFunction(ref: Node): Fn | undefined {
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
  usesOf(fn: Fn): { calls: TSESTree.CallExpression[]; timers: TSESTree.CallExpression[]; other: boolean } {
    const cached = this.uses.get(fn);
    if (cached) return cached;
    const calls: TSESTree.CallExpression[] = [];
    const timers: TSESTree.CallExpression[] = [];
    let other = false;
    for (const call of this.shape.calls) {
      if (this.boundFunction(call.callee) === fn) calls.push(call);
      for (const arg of call.arguments) {
        if (arg.type === "SpreadElement" || isFn(arg) || this.boundFunction(arg) !== fn) continue;
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
}
