/**
 * Which function of the module a call runs, when the module shows exactly one: the reading the function summaries
 * (src/core/summaries/) instantiate helpers by, and the facts follow a check through (a guard that calls the module's
 * own `isLeader()`).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { classOf, isFunction, opensTransaction } from "./units.js";
import { isExported } from "./exports.js";
import { boundCallback, findVariable, keyName, objectLiteral, unwrap } from "./values.js";
import { walk } from "./walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Fn = TSESTree.FunctionLike;
type Variable = NonNullable<ReturnType<typeof findVariable>>;

/** The function a call runs, when the module shows exactly one: `fn()`, `this.method()`, `Class.method()`, `obj.method()`. */
export function calledFunction(sourceCode: SourceCode, call: TSESTree.CallExpression): Fn | undefined {
  const callee = unwrap(call.callee);
  const fromInit = (init: Node | null | undefined): Fn | undefined => {
    const i = init ? unwrap(init) : undefined;
    return i && isFunction(i) ? i : undefined;
  };
  if (callee.type === "Identifier") {
    const def = findVariable(sourceCode, callee)?.defs[0];
    if (def?.type === "FunctionName") return def.node as Fn;
    if (def?.type === "Variable" && def.parent.kind === "const") return fromInit(def.node.init);
    return undefined;
  }
  if (callee.type !== "MemberExpression") return undefined;
  const name = keyName(callee.property, callee.computed);
  if (name === undefined) return undefined;
  const object = unwrap(callee.object);
  const member = (body: TSESTree.ClassBody | undefined, isStatic: boolean): Fn | undefined => {
    for (const m of body?.body ?? []) {
      if (
        (m.type === "MethodDefinition" || m.type === "PropertyDefinition") &&
        m.static === isStatic &&
        m.key &&
        keyName(m.key, m.computed) === name &&
        !(m.type === "MethodDefinition" && m.kind === "constructor")
      ) {
        return fromInit(m.value);
      }
    }
    return undefined;
  };
  if (object.type === "ThisExpression") {
    // `this` is the function that binds it: a class's method, or an object literal's (arrows keep the outer `this`).
    let fn: Node | undefined = call.parent;
    while (fn && !(fn.type === "FunctionExpression" || fn.type === "FunctionDeclaration" || fn.type === "ClassBody"))
      fn = fn.parent;
    // An arrow class field (`run = async () => this.lock()`): `this` is the instance.
    if (fn?.type === "ClassBody") return member(fn, false);
    const holder = fn?.parent;
    if (holder?.type === "MethodDefinition" || holder?.type === "PropertyDefinition")
      return member(classOf(holder), holder.static);
    // `Leader.prototype.stop = function () { this.isLeader(…) }`: the method assigned to the same prototype.
    const proto = holder?.type === "AssignmentExpression" ? prototypeOf(holder.left) : undefined;
    if (proto) return prototypeMethod(sourceCode, proto, name);
    if (holder?.type === "Property" && holder.parent.type === "ObjectExpression") {
      const prop = holder.parent.properties.find(
        (q): q is TSESTree.Property => q.type === "Property" && keyName(q.key, q.computed) === name,
      );
      return fromInit(prop?.value);
    }
    return undefined;
  }
  if (object.type !== "Identifier") return undefined;
  const def = findVariable(sourceCode, object)?.defs[0];
  if (def?.type === "ClassName") return member((def.node as TSESTree.ClassDeclaration).body, true);
  if (def?.type !== "Variable" || def.parent.kind !== "const" || !def.node.init) return undefined;
  const init = unwrap(def.node.init);
  // `const lock = new RedisLock(…)` of a class this module declares
  if (init.type === "NewExpression" && init.callee.type === "Identifier") {
    const cls = findVariable(sourceCode, init.callee)?.defs[0];
    return cls?.type === "ClassName" ? member((cls.node as TSESTree.ClassDeclaration).body, false) : undefined;
  }
  // `export const locks = { acquire(name) { … } }`
  const object2 = objectLiteral(sourceCode, init);
  const prop = object2?.properties.find(
    (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === name,
  );
  return fromInit(prop?.value);
}

/** The index of the parameter of `fn` a value is (`status`, or `status` with a default), or undefined. */
export function parameterIndex(sourceCode: SourceCode, fn: TSESTree.FunctionLike, node: Node): number | undefined {
  let n = unwrap(node);
  if (n.type === "Property") n = unwrap(n.value as Node);
  if (n.type !== "Identifier") return undefined;
  const def = findVariable(sourceCode, n)?.defs[0];
  if (def?.type !== "Parameter" || def.node !== fn) return undefined;
  const i = fn.params.findIndex((p) => {
    const id = p.type === "AssignmentPattern" ? p.left : p;
    return id.type === "Identifier" && id.name === n.name;
  });
  return i >= 0 ? i : undefined;
}

/** What a call of a module function gives back: the arguments of its own `return`s (an arrow's expression body). */
export function returnedValues(sourceCode: SourceCode, call: TSESTree.CallExpression): Node[] {
  const body = calledFunction(sourceCode, call)?.body;
  if (!body) return [];
  if (body.type !== "BlockStatement") return [body];
  const out: Node[] = [];
  walk(body, (n) => {
    if (n !== body && isFunction(n)) return false;
    if (n.type === "ReturnStatement" && n.argument) out.push(n.argument);
    return true;
  });
  return out;
}

/**
 * What a module function hands the callback a parameter belongs to: for `isLeader` in `this.isLeader(function (err,
 * isLeader) { … })`, the second argument of every call of `isLeader(done)`'s `done` (`done(null, id === this.id)`).
 */
export function callbackArguments(sourceCode: SourceCode, id: TSESTree.Identifier): Node[] {
  const def = findVariable(sourceCode, id)?.defs[0];
  if (def?.type !== "Parameter" || !isFunction(def.node)) return [];
  const cb = def.node;
  const index = cb.params.indexOf(def.name as TSESTree.Parameter);
  const arg = boundCallback(cb);
  const call = arg.parent;
  if (index < 0 || call?.type !== "CallExpression" || call.callee === arg) return [];
  const position = call.arguments.indexOf(arg as TSESTree.CallExpressionArgument);
  const fn = position >= 0 ? calledFunction(sourceCode, call) : undefined;
  const param = fn?.params[position];
  if (!fn?.body || param?.type !== "Identifier") return [];
  const out: Node[] = [];
  walk(fn.body, (n) => {
    if (
      n.type === "CallExpression" &&
      n.callee.type === "Identifier" &&
      n.callee.name === param.name &&
      n.arguments[index]
    )
      out.push(n.arguments[index]!);
    return true;
  });
  return out;
}

/**
 * The call whose result a parameter receives through an error-first callback: for `stat` in `fs.stat(p, (err, stat)
 * => …)` or `client.get(key, function (err, holder) { … })`, that call. Node's callback convention hands the
 * outcome as the second argument, after the error; the callback must be the call's last argument and its first
 * parameter named like an error.
 */
export function callbackResultOf(sourceCode: SourceCode, id: TSESTree.Identifier): TSESTree.CallExpression | undefined {
  const def = findVariable(sourceCode, id)?.defs[0];
  if (def?.type !== "Parameter" || !isFunction(def.node)) return undefined;
  const cb = def.node;
  const first = cb.params[0];
  if (cb.params[1] !== def.name || first?.type !== "Identifier" || !ERROR_PARAM.test(first.name)) return undefined;
  const arg = boundCallback(cb);
  const call = arg.parent;
  if (call?.type !== "CallExpression" || call.arguments[call.arguments.length - 1] !== arg) return undefined;
  return call;
}

const ERROR_PARAM = /^(?:err|error|e|er|_?err\w*|_)$/;

/** `err` in `(err, stat) => …` or `function (err) { … }`: the error a callback is handed first, by Node's convention. */
export function isErrorParameter(sourceCode: SourceCode, node: Node): boolean {
  const id = unwrap(node);
  if (id.type !== "Identifier" || !ERROR_PARAM.test(id.name) || id.name === "_") return false;
  const def = findVariable(sourceCode, id)?.defs[0];
  return def?.type === "Parameter" && isFunction(def.node) && def.node.params[0] === def.name;
}

/** The constructor named in `Leader.prototype.stop` (an assignment's target), or undefined. */
function prototypeOf(target: Node): string | undefined {
  const t = unwrap(target);
  if (t.type !== "MemberExpression") return undefined;
  const proto = unwrap(t.object);
  if (proto.type !== "MemberExpression" || keyName(proto.property, proto.computed) !== "prototype") return undefined;
  const ctor = unwrap(proto.object);
  return ctor.type === "Identifier" ? ctor.name : undefined;
}

/** The function assigned at module level to `<ctor>.prototype.<name>`, when exactly one is. */
function prototypeMethod(sourceCode: SourceCode, ctor: string, name: string): Fn | undefined {
  const found: Fn[] = [];
  for (const st of (sourceCode.ast as TSESTree.Program).body) {
    if (
      st.type !== "ExpressionStatement" ||
      st.expression.type !== "AssignmentExpression" ||
      st.expression.operator !== "="
    )
      continue;
    const { left, right } = st.expression;
    const value = unwrap(right);
    if (
      left.type === "MemberExpression" &&
      prototypeOf(left) === ctor &&
      keyName(left.property, left.computed) === name &&
      isFunction(value)
    )
      found.push(value);
  }
  return found.length === 1 ? found[0] : undefined;
}

/**
 * The transaction handle a statement is sent through, when the module shows it is one: the root of the call's
 * receiver (`tx` of `tx.job.update(…)`) is the parameter of a transaction's callback (`$transaction(async (tx) =>
 * …)`), or a parameter of a function of the module, not exported, that every call of it in the module hands such a
 * parameter (`claimInTransaction(tx, input)`). Two statements of one run of a function sent through the same handle share one
 * transaction, and a row the first wrote stays locked to others until it commits.
 */
export function transactionHandle(sourceCode: SourceCode, call: Node): Variable | undefined {
  let root = unwrap(call);
  while (root.type === "CallExpression" || root.type === "MemberExpression" || root.type === "TaggedTemplateExpression")
    root = unwrap(
      root.type === "CallExpression" ? root.callee : root.type === "MemberExpression" ? root.object : root.tag,
    );
  if (root.type !== "Identifier") return undefined;
  const variable = findVariable(sourceCode, root);
  return variable && carriesTransaction(sourceCode, variable, 1) ? variable : undefined;
}

function carriesTransaction(sourceCode: SourceCode, variable: Variable, depth: number): boolean {
  const def = variable.defs[0];
  if (variable.defs.length !== 1 || def?.type !== "Parameter") return false;
  const fn = def.node as Fn;
  const index = fn.params.findIndex((p) => p.type === "Identifier" && p.name === variable.name);
  if (index < 0) return false;
  const call = fn.parent;
  if (call?.type === "CallExpression" && call.arguments.includes(fn as TSESTree.CallExpressionArgument)) {
    return index === 0 && opensTransaction(call);
  }
  // Called from other modules too, with whatever they hand it: unknown.
  if (depth === 0 || isExported(sourceCode.ast as TSESTree.Program, fn)) return false;
  const id =
    fn.type === "FunctionDeclaration"
      ? fn.id
      : fn.parent?.type === "VariableDeclarator" && fn.parent.id.type === "Identifier"
        ? fn.parent.id
        : undefined;
  const named = id ? findVariable(sourceCode, id) : undefined;
  const calls = (named?.references ?? [])
    .map((r) => r.identifier.parent)
    .filter((c): c is TSESTree.CallExpression => c?.type === "CallExpression" && c.callee !== undefined);
  if (calls.length === 0 || calls.length !== (named?.references.length ?? 0)) return false;
  return calls.every((c) => {
    const arg = c.arguments[index];
    const v = arg && arg.type === "Identifier" ? findVariable(sourceCode, arg) : undefined;
    return v !== undefined && carriesTransaction(sourceCode, v, depth - 1);
  });
}
