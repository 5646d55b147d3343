/**
 * Function summaries: what a module's functions do to locks, in terms of their parameters, so that a call of one
 * *is* that operation where it is called. Real services write the lock once (`acquireLock(name, ttlMs)`,
 * `releaseLock(name)`, a `RedisLock` class, `this.unlock(key)`) and call it from many places; without summaries the
 * facts see the helper's own command, out of context, and nothing at the call site.
 *
 * A summary lists the helper's key-value effects (an NX acquire, a release, an EXPIRE) with the parts that come
 * from the call: the key (a parameter, or text around one: `` `lock:${name}` ``), the TTL, the stored value, the
 * client. A call of the helper gets one *instance* per effect: a `KvOp` at the call, the call's arguments read in
 * place of the parameters, and `via` naming the helper and its own op. The facts pair instances like any other
 * op (facts/kv-pairing/), so a caller that acquires through one helper and releases through another holds a lock
 * whose paths `release-in-finally` walks. An instance's TTL is the helper's verdict: what an omitted or zero TTL
 * argument does depends on the client (ioredis refuses `PX undefined`, an options object may drop it), so the
 * call's argument is not read for it.
 *
 * Unknown stays unknown: a call that cannot be resolved to one function of this module (dynamic dispatch, a
 * parameter, another module), a recursive call, a spread argument the effect needs, or a helper that acquires and
 * releases the same key itself (a scoped `withLock(key, fn)`: its own paths are analysed where it is written)
 * gives no instance. Helpers of other modules are the audit's (src/audit/).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KeyShape, KvOp, Node, StateAccess } from "../model/accesses.js";
import type { KeyPart, ParamRef } from "../model/helper-summaries.js";
import type { ModuleShape } from "../model/lock-facts.js";
import { keyShape, sameKey } from "../reading/keys.js";
import { calledFunction } from "../reading/calls.js";
import { classOf, functionName, isFunction, unitOf } from "../reading/units.js";
import { evaluate, findVariable, getConstInit, keyName, objectLiteral, unwrap } from "../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Fn = TSESTree.FunctionLike;

/** One key-value op of a helper, in terms of its parameters. */
export interface KvEffect {
  /** The helper's own op. */
  readonly op: KvOp;
  /** The key, when a parameter is part of it; undefined when the key is fixed (the op's own shape holds). */
  readonly key?: readonly KeyPart[];
  readonly client?: ParamRef;
  /** The key and client as constructor parameters the method reads from fields (for importers of the class). */
  readonly fieldKey?: readonly KeyPart[];
  readonly fieldClient?: ParamRef;
  readonly value?: ParamRef;
  /** Made through the lock handle the function returns: the method of the returned object (`release`). */
  readonly handle?: string;
}

export interface FunctionSummary {
  readonly fn: Fn;
  readonly effects: readonly KvEffect[];
}

const MAX_DEPTH = 4;
/** Commands a helper's caller makes through it: acquires, releases, expiries, constant markers. Reads are not effects. */
const EFFECT_COMMANDS = new Set(["set", "setnx", "del", "script", "expire"]);

function isDeleting(op: KvOp): boolean {
  return (
    op.command === "del" || (op.command === "script" && (op.script === "compare-and-delete" || op.script === "delete"))
  );
}

function isAcquire(op: KvOp): boolean {
  return op.nx && (op.command === "set" || op.command === "setnx");
}

/** The parameter of `fn` an identifier names, if it names one. */
function paramRef(sourceCode: SourceCode, fn: Fn, id: TSESTree.Identifier): ParamRef | undefined {
  const def = findVariable(sourceCode, id)?.defs[0];
  if (def?.type !== "Parameter" || def.node !== fn) return undefined;
  for (const [index, param] of fn.params.entries()) {
    const p = param.type === "TSParameterProperty" ? param.parameter : param;
    const target = p.type === "AssignmentPattern" ? p.left : p;
    if (target.type === "Identifier" && target.name === id.name) {
      return {
        index,
        ...(p.type === "AssignmentPattern" ? { hasDefault: true } : {}),
        ...(target.optional ? { optional: true } : {}),
      };
    }
    if (target.type === "ObjectPattern") {
      for (const prop of target.properties) {
        if (prop.type !== "Property") continue;
        const value = prop.value.type === "AssignmentPattern" ? prop.value.left : prop.value;
        const name = keyName(prop.key, prop.computed);
        if (value.type === "Identifier" && value.name === id.name && name !== undefined) {
          return { index, prop: name, ...(prop.value.type === "AssignmentPattern" ? { hasDefault: true } : {}) };
        }
      }
    }
  }
  return undefined;
}

/** The parameter an expression is, directly or through a const of the helper (`const ttl = opts.ttl`). */
function asParam(sourceCode: SourceCode, fn: Fn, node: Node | undefined, depth = 0): ParamRef | undefined {
  if (!node || depth > MAX_DEPTH) return undefined;
  const n = unwrap(node);
  if (n.type === "Identifier") {
    const ref = paramRef(sourceCode, fn, n);
    if (ref) return ref;
    const init = getConstInit(sourceCode, n);
    return init ? asParam(sourceCode, fn, init, depth + 1) : undefined;
  }
  // `options.ttl` of a parameter `options`
  if (
    n.type === "MemberExpression" &&
    !n.computed &&
    n.property.type === "Identifier" &&
    unwrap(n.object).type === "Identifier"
  ) {
    const base = paramRef(sourceCode, fn, unwrap(n.object) as TSESTree.Identifier);
    if (base && base.prop === undefined) return { index: base.index, prop: n.property.name };
  }
  return undefined;
}

/**
 * The constructor parameter a field of the method's class is set from: `this._key` with `constructor(redis, key)
 * { this._key = key }`, or a TypeScript parameter property (`constructor(private key: string)`).
 */
export function ctorParam(sourceCode: SourceCode, fn: Fn, node: Node): ParamRef | undefined {
  const n = unwrap(node);
  if (n.type !== "MemberExpression" || unwrap(n.object).type !== "ThisExpression") return undefined;
  const field = keyName(n.property, n.computed);
  const body = classOf(fn);
  const ctor = body?.body.find(
    (m): m is TSESTree.MethodDefinition => m.type === "MethodDefinition" && m.kind === "constructor",
  );
  if (!field || !ctor) return undefined;
  for (const [index, p] of ctor.value.params.entries()) {
    if (p.type !== "TSParameterProperty") continue;
    const target = p.parameter.type === "AssignmentPattern" ? p.parameter.left : p.parameter;
    if (target.type === "Identifier" && target.name === field) return { index, ctor: true };
  }
  let found: ParamRef | undefined;
  let writes = 0;
  for (const s of ctor.value.body?.body ?? []) {
    if (s.type !== "ExpressionStatement" || s.expression.type !== "AssignmentExpression") continue;
    const { left, right } = s.expression;
    if (
      left.type !== "MemberExpression" ||
      unwrap(left.object).type !== "ThisExpression" ||
      keyName(left.property, left.computed) !== field
    )
      continue;
    writes++;
    const r = unwrap(right);
    if (r.type === "Identifier") {
      const ref = paramRef(sourceCode, ctor.value, r);
      if (ref) found = { ...ref, ctor: true };
    }
  }
  // A field the methods reassign is not the constructor's any more.
  return writes === 1 ? found : undefined;
}

/** The key as parts, parameters kept as references; undefined when no parameter is part of it. */
function keyParts(sourceCode: SourceCode, fn: Fn, node: Node, fields = false): KeyPart[] | undefined {
  let usesParam = false;
  const walk = (expr: Node, depth: number): KeyPart[] => {
    const n = unwrap(expr);
    const value = evaluate(sourceCode, n);
    if (value && !value.symbolic && (typeof value.value === "string" || typeof value.value === "number"))
      return [{ text: String(value.value) }];
    if (depth > MAX_DEPTH) return [{ any: true }];
    const param = asParam(sourceCode, fn, n) ?? (fields ? ctorParam(sourceCode, fn, n) : undefined);
    if (param) {
      usesParam = true;
      return [{ param }];
    }
    if (n.type === "TemplateLiteral") {
      const out: KeyPart[] = [];
      n.quasis.forEach((q, i) => {
        if (q.value.cooked) out.push({ text: q.value.cooked });
        const e = n.expressions[i];
        if (e) out.push(...walk(e, depth + 1));
      });
      return out;
    }
    if (n.type === "BinaryExpression" && n.operator === "+")
      return [...walk(n.left, depth + 1), ...walk(n.right, depth + 1)];
    if (n.type === "Identifier") {
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") return walk(init, depth + 1);
    }
    return [{ any: true }];
  };
  const parts = walk(node, 0);
  return usesParam ? parts : undefined;
}

function effectOf(sourceCode: SourceCode, fn: Fn, op: KvOp): KvEffect {
  const key = keyParts(sourceCode, fn, op.keyNode);
  // For importers only: a key or client held in a field the constructor set (`new Lock(redis, key).obtainLock()`).
  const fieldKey = key ? undefined : keyParts(sourceCode, fn, op.keyNode, true);
  // The client a helper is handed (`helper(redis, key)`, `helper({ redis, lockKey })`): its receiver is a parameter.
  const callee = op.node.type === "CallExpression" ? unwrap(op.node.callee) : undefined;
  const receiver = callee?.type === "MemberExpression" ? unwrap(callee.object) : undefined;
  const client =
    receiver?.type === "Identifier" && receiver.name === op.client ? asParam(sourceCode, fn, receiver) : undefined;
  const fieldClient = receiver?.type === "MemberExpression" ? ctorParam(sourceCode, fn, receiver) : undefined;
  const value = asParam(sourceCode, fn, op.valueNode) ?? encodedParam(sourceCode, fn, op.valueNode);
  return {
    op,
    ...(key ? { key } : {}),
    ...(client ? { client } : {}),
    ...(fieldKey ? { fieldKey } : {}),
    ...(fieldClient ? { fieldClient } : {}),
    ...(value ? { value } : {}),
  };
}

/**
 * A value the helper stores as an encoding of a parameter (`const v = this.serialize(value)`, `JSON.stringify(value)`,
 * `String(value)`): one call of one argument. A constant handed in is stored as a constant.
 */
function encodedParam(sourceCode: SourceCode, fn: Fn, node: Node | undefined): ParamRef | undefined {
  if (!node) return undefined;
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    if (!init || init.type === "TSEnumDeclaration") return undefined;
    n = unwrap(init);
  }
  if (n.type !== "CallExpression" || n.arguments.length !== 1 || n.arguments[0]!.type === "SpreadElement")
    return undefined;
  return asParam(sourceCode, fn, n.arguments[0]);
}

function sameParts(a: readonly KeyPart[] | undefined, b: readonly KeyPart[] | undefined, ops: [KvOp, KvOp]): boolean {
  if (!a || !b) return !a && !b && ops[0].key.text === ops[1].key.text;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A lock handle's method: a function that is a property of an object literal a named function returns
 * (`return { acquired: true, release: async () => { … } }`, or an arrow's object body). The caller keeps the object
 * and calls the method later (`lock.release()`); what it does is the returning function's, in terms of its
 * parameters (the key it was called with).
 */
function handleOf(fn: Fn): { factory: Fn; method: string } | undefined {
  // A method that takes arguments (`acquire: (key) => …`) is the object's own helper, not a handle of one lock.
  if (fn.params.length > 0) return undefined;
  const prop = fn.parent;
  if (prop?.type !== "Property" || prop.value !== fn || prop.parent.type !== "ObjectExpression") return undefined;
  const method = keyName(prop.key, prop.computed);
  const object = prop.parent;
  const returned = object.parent;
  let factory: Node | undefined;
  // The named function that hands it back, also from inside its own `.then` callback (`return set(…).then((ok) =>
  // ({ release: … }))`).
  if (returned?.type === "ReturnStatement") factory = unitOf(returned) ?? undefined;
  else if (returned && isFunction(returned) && returned.body === object)
    factory = functionName(returned) !== undefined ? returned : (unitOf(returned) ?? undefined);
  if (!method || !factory || !isFunction(factory) || functionName(factory) === undefined) return undefined;
  return { factory, method };
}

/**
 * The calls of a handle's method after `call` returned the handle: `const lock = await acquireLock(…)` then
 * `lock.release()`, `const { release } = await acquireLock(…)` then `release()`, or the parameter of a `.then`
 * callback on the call. A handle kept in anything but a
 * variable of its own (passed on, stored in a field) is not followed.
 */
export function handleCalls(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  method: string,
): TSESTree.CallExpression[] {
  let up: Node | undefined = call.parent;
  while (up && (up.type === "AwaitExpression" || up.type === "TSAsExpression" || up.type === "TSNonNullExpression"))
    up = up.parent;
  // `acquireLock(…).then((lock) => { … lock.release() })`: the handle is the callback's parameter.
  let holder: TSESTree.Node | undefined;
  if (up?.type === "VariableDeclarator" && up.init !== null) holder = up.id;
  else if (
    up?.type === "MemberExpression" &&
    up.object === call &&
    keyName(up.property, up.computed) === "then" &&
    up.parent.type === "CallExpression" &&
    up.parent.callee === up
  ) {
    const cb = up.parent.arguments[0];
    if (cb && isFunction(cb)) holder = cb.params[0];
  }
  if (!holder) return [];
  const out: TSESTree.CallExpression[] = [];
  const callsOf = (id: TSESTree.Identifier, member: boolean) => {
    const variable = findVariable(sourceCode, id);
    for (const ref of variable?.references ?? []) {
      const at = ref.identifier.parent;
      if (
        member &&
        at?.type === "MemberExpression" &&
        at.object === ref.identifier &&
        keyName(at.property, at.computed) === method &&
        at.parent.type === "CallExpression" &&
        at.parent.callee === at
      )
        out.push(at.parent);
      if (!member && at?.type === "CallExpression" && at.callee === ref.identifier) out.push(at);
    }
  };
  if (holder.type === "Identifier") callsOf(holder, true);
  else if (holder.type === "ObjectPattern") {
    for (const p of holder.properties) {
      if (p.type === "Property" && keyName(p.key, p.computed) === method && p.value.type === "Identifier")
        callsOf(p.value, false);
    }
  }
  return out;
}

/**
 * The summaries of the module's named functions that make key-value ops a caller can be said to make: every
 * effect of a function, except an acquire and a release of the same key the function makes itself (it holds the
 * lock around its own work). Instances made inside a function (it calls another helper) are its effects too.
 */
export function summarize(sourceCode: SourceCode, ops: readonly KvOp[]): Map<Fn, FunctionSummary> {
  const byFn = new Map<Fn, { op: KvOp; handle?: string }[]>();
  for (const op of ops) {
    // A plain SET is an effect only when it stores a constant (a "done" marker written over a claim); a helper that
    // caches a value it computes makes no lock op its caller could be said to make.
    if (
      !EFFECT_COMMANDS.has(op.command) ||
      (op.command === "set" && !op.nx && op.constantValue === undefined) ||
      (op.command === "script" && !isDeleting(op) && op.script !== "compare-and-expire")
    )
      continue;
    const unit = unitOf(op.node);
    if (!unit) continue;
    // An op of a handle's method is the returning function's, made when the caller calls the method.
    const handle = functionName(unit) === undefined || unit.parent?.type === "Property" ? handleOf(unit) : undefined;
    const fn = handle?.factory ?? unit;
    if (functionName(fn) === undefined) continue;
    byFn.set(fn, [...(byFn.get(fn) ?? []), { op, ...(handle ? { handle: handle.method } : {}) }]);
  }
  const out = new Map<Fn, FunctionSummary>();
  for (const [fn, fnOps] of byFn) {
    const effects = fnOps.map(({ op, handle }): KvEffect => ({
      ...effectOf(sourceCode, fn, op),
      ...(handle ? { handle } : {}),
    }));
    // A helper that takes and frees the same key itself is a scoped lock: the caller holds nothing after it returns.
    // A release through the handle it returns is the caller's to make.
    const scoped = (e: KvEffect) =>
      !e.handle &&
      effects.some(
        (o) =>
          o !== e &&
          !o.handle &&
          (isAcquire(e.op) ? isDeleting(o.op) : isDeleting(e.op) && isAcquire(o.op)) &&
          o.op.client === e.op.client &&
          (sameParts(o.key, e.key, [o.op, e.op]) || sameKey(o.op.key, e.op.key)),
      );
    const kept = effects.filter((e) => !scoped(e));
    if (kept.length > 0) out.set(fn, { fn, effects: kept });
  }
  return out;
}

/** The argument a parameter receives at a call; `null` when the call leaves it out, undefined when it cannot be read. */
export function argumentFor(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  ref: ParamRef,
): Node | null | undefined {
  let args: readonly TSESTree.CallExpressionArgument[] = call.arguments;
  if (ref.ctor) {
    // The receiver's constructor call: `const lock = new Lock(redis, key); lock.obtainLock()`.
    const callee = unwrap(call.callee);
    const object = callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
    const init = object?.type === "Identifier" ? getConstInit(sourceCode, object) : object;
    const made = init && unwrap(init);
    if (made?.type !== "NewExpression") return undefined;
    args = made.arguments;
  }
  const before = args.slice(0, ref.index + 1);
  if (before.some((a) => a.type === "SpreadElement")) return undefined;
  const arg = args[ref.index];
  if (!arg) return null;
  if (ref.prop === undefined) return arg;
  const object = objectLiteral(sourceCode, arg);
  if (!object) return undefined;
  if (object.properties.some((p) => p.type === "SpreadElement")) return undefined;
  const prop = object.properties.find(
    (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === ref.prop,
  );
  return prop ? (prop.value as Node) : null;
}

function escapeGlob(text: string): string {
  return text.replace(/\*/g, "\\*");
}

/** The key at a call: the helper's parts with the arguments' shapes in place of its parameters. */
export function shapeFromParts(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  parts: readonly KeyPart[],
): { key: KeyShape; keyNode: Node } | undefined {
  // A key that is just a parameter: the argument's own shape (so `acquire(key)` and `release(key)` of one caller pair).
  if (parts.length === 1 && "param" in parts[0]!) {
    const arg = argumentFor(sourceCode, call, parts[0].param);
    if (!arg) return undefined;
    return { key: keyShape(sourceCode, arg), keyNode: arg };
  }
  let text = "";
  let keyNode: Node = call;
  for (const part of parts) {
    if ("text" in part) text += escapeGlob(part.text);
    else if ("any" in part) text += "*";
    else {
      const arg = argumentFor(sourceCode, call, part.param);
      if (!arg) return undefined;
      const shape = keyShape(sourceCode, arg);
      text += shape.opaque ? "*" : shape.text;
      if (keyNode === call) keyNode = arg;
    }
  }
  if (!/[^*]/.test(text.replace(/\\\*/g, ""))) return undefined;
  return { key: { text, exact: !/(?<!\\)\*/.test(text) }, keyNode };
}

function instanceKey(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  effect: KvEffect,
): { key: KeyShape; keyNode: Node } | undefined {
  return effect.key ? shapeFromParts(sourceCode, call, effect.key) : { key: effect.op.key, keyNode: call };
}

/** How messages name a helper at its call: the callee as written (`releaseLock`, `this.locks.release`). */
export function describeCallee(sourceCode: SourceCode, call: TSESTree.CallExpression): string {
  return sourceCode.getText(call.callee).replace(/\s+/g, "");
}

/** A client handed to a helper, named as the recognizers name clients (`redis`, `this.redis` both `redis`). */
export function clientText(sourceCode: SourceCode, arg: Node): string {
  return sourceCode
    .getText(arg)
    .replace(/\s+/g, "")
    .replace(/^this\./, "");
}

/**
 * The helper's effect as an op: the arguments read from `call`, the op placed at `at` (the call itself, or the call
 * of the handle's method that makes it).
 */
function instance(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  effect: KvEffect,
  at: TSESTree.CallExpression = call,
): KvOp | undefined {
  const { op } = effect;
  const key = instanceKey(sourceCode, call, effect);
  if (!key) return undefined;
  let client = op.client;
  if (effect.client) {
    const arg = argumentFor(sourceCode, call, effect.client);
    if (!arg) return undefined;
    client = clientText(sourceCode, arg);
  }
  let valueNode = op.valueNode;
  let constantValue = op.constantValue;
  if (effect.value) {
    const arg = argumentFor(sourceCode, call, effect.value);
    if (arg === undefined) return undefined;
    valueNode = arg ?? undefined;
    constantValue = arg ? evaluate(sourceCode, arg) : undefined;
  }
  // The helper's op at the call: no batch or edits of its own (its text is the helper's, not the call's).
  return {
    access: "kv",
    store: op.store,
    dialect: op.dialect,
    command: op.command,
    nx: op.nx,
    ttl: op.ttl,
    client,
    key: key.key,
    keyNode: key.keyNode,
    node: at,
    loc: at.loc,
    ...(op.script ? { script: op.script } : {}),
    ...(op.expiry ? { expiry: op.expiry } : {}),
    ...(op.ttlNode ? { ttlNode: op.ttlNode } : {}),
    ...(valueNode ? { valueNode } : {}),
    ...(constantValue ? { constantValue } : {}),
    via: { helper: describeCallee(sourceCode, at), template: op, line: op.loc.start.line },
  };
}

/**
 * The calls of a module's helpers as ops, and the summaries of its functions (for its importers,
 * exported-helpers.ts).
 */
export interface HelperView {
  readonly instances: readonly KvOp[];
  readonly summaries: ReadonlyMap<Fn, FunctionSummary>;
}

const NO_HELPERS: HelperView = { instances: [], summaries: new Map() };

/**
 * The key-value ops the module's calls of its own helpers make, at the calls, with `imported` (the calls of helpers
 * of other modules). Helpers calling helpers are followed (an instance inside a helper is one of its effects),
 * recursion is not.
 */
export function helperInstances(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  shape: ModuleShape,
  imported: readonly KvOp[] = [],
): HelperView {
  const direct = accesses.filter((a): a is KvOp => a.access === "kv");
  if (direct.length === 0 && imported.length === 0) return NO_HELPERS;
  // Calls of imported helpers (imported-helpers.ts) are ops like the module's own: a local wrapper of one is a helper
  // too.
  const out: KvOp[] = [...imported];
  let known = [...direct, ...imported];
  const done = new Map<TSESTree.CallExpression, Set<KvOp>>();
  const callees = new Map<TSESTree.CallExpression, Fn | undefined>();
  const callee = (call: TSESTree.CallExpression) => {
    if (!callees.has(call)) callees.set(call, calledFunction(sourceCode, call));
    return callees.get(call);
  };
  let summaries = summarize(sourceCode, known);
  // Each round instantiates the summaries of the ops known so far; instances inside helpers feed the next round.
  for (let round = 0; round < MAX_DEPTH && summaries.size > 0; round++) {
    const fresh: KvOp[] = [];
    for (const call of shape.calls) {
      const fn = callee(call);
      const summary = fn && summaries.get(fn);
      if (!summary) continue;
      // Recursion: a call inside the helper itself says nothing new.
      let inside = false;
      for (let p: Node | undefined = call.parent; p && !inside; p = p.parent) inside = p === fn;
      if (inside) continue;
      const instantiated = done.get(call) ?? new Set<KvOp>();
      done.set(call, instantiated);
      for (const effect of summary.effects) {
        if (instantiated.has(effect.op)) continue;
        instantiated.add(effect.op);
        const at = effect.handle ? handleCalls(sourceCode, call, effect.handle) : [call];
        for (const c of at) {
          const made = instance(sourceCode, call, effect, c);
          if (made) fresh.push(made);
        }
      }
    }
    if (fresh.length === 0) break;
    out.push(...fresh);
    known = [...known, ...fresh];
    summaries = summarize(sourceCode, known);
  }
  return { instances: out, summaries };
}
