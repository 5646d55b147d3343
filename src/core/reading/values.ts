/**
 * Static evaluation: what value an expression has without running it. Handles literals, template literals without
 * expressions, `const` bindings, TS enums, `as const` objects, and enum members of unknown origin (a Prisma enum
 * imported from `@prisma/client`, whose values equal their keys).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, StaticValue } from "../model/accesses.js";
import { walk } from "./walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Scope = TSESLint.Scope.Scope;
type Variable = TSESLint.Scope.Variable;
type Reference = TSESLint.Scope.Reference;

const MAX_DEPTH = 6;

/** Removes TypeScript wrappers and parentheses that do not change a value: `x as const`, `x!`, `<T>x`, `x satisfies T`. */
export function unwrap(node: Node): Node {
  let n = node;
  for (;;) {
    switch (n.type) {
      case "TSAsExpression":
      case "TSSatisfiesExpression":
      case "TSNonNullExpression":
      case "TSTypeAssertion":
        n = n.expression;
        break;
      case "ChainExpression":
        n = n.expression;
        break;
      default:
        return n;
    }
  }
}

export function findVariable(sourceCode: SourceCode, node: TSESTree.Identifier): Variable | undefined {
  let scope: Scope | null = sourceCode.getScope(node);
  const name = node.name;
  while (scope) {
    const found = scope.set.get(name);
    if (found) return found;
    scope = scope.upper;
  }
  return undefined;
}

/** The variable `name` names where `at` is (the innermost binding of that name in reach there). */
export function variableAt(sourceCode: SourceCode, name: string, at: Node): Variable | undefined {
  for (let scope: Scope | null = sourceCode.getScope(at); scope; scope = scope.upper) {
    const found = scope.set.get(name);
    if (found) return found;
  }
  return undefined;
}

/** The one expression a `const` (or never-reassigned `let`) binding holds, if it has one. */
export function getConstInit(sourceCode: SourceCode, id: TSESTree.Identifier): Node | undefined {
  const variable = findVariable(sourceCode, id);
  const def = variable?.defs[0];
  if (!variable || !def || variable.defs.length !== 1) return undefined;
  if (def.type === "Variable") {
    const decl = def.node;
    if (decl.id.type !== "Identifier") return undefined;
    const writes = variable.references.filter((r) => r.isWrite());
    if (decl.init) return def.parent.kind !== "const" && writes.length !== 1 ? undefined : decl.init;
    return onlyAssignedValue(writes);
  }
  if (def.type === "TSEnumName") return def.node;
  return undefined;
}

function fromLiteral(node: TSESTree.Literal): StaticValue | undefined {
  const v = node.value;
  if (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
    if ("regex" in node || "bigint" in node) return undefined;
    return { value: v };
  }
  return undefined;
}

function propertyName(member: TSESTree.MemberExpression, sourceCode: SourceCode, depth: number): string | undefined {
  if (!member.computed && member.property.type === "Identifier") return member.property.name;
  if (member.computed) {
    const v = evaluate(sourceCode, member.property, depth + 1);
    if (v && typeof v.value === "string") return v.value;
  }
  return undefined;
}

/** Key of an object property or enum member, when static. */
export function keyName(key: Node, computed: boolean): string | undefined {
  if (!computed && key.type === "Identifier") return key.name;
  if (key.type === "Literal" && (typeof key.value === "string" || typeof key.value === "number"))
    return String(key.value);
  return undefined;
}

function enumMemberValue(
  sourceCode: SourceCode,
  decl: TSESTree.TSEnumDeclaration,
  name: string,
  depth: number,
): StaticValue | undefined {
  const members = decl.body?.members ?? (decl as unknown as { members: TSESTree.TSEnumMember[] }).members;
  let next = 0;
  for (const m of members) {
    const key = keyName(m.id, false);
    let value: StaticValue | undefined;
    if (m.initializer) value = evaluate(sourceCode, m.initializer, depth + 1);
    else value = { value: next };
    if (value && typeof value.value === "number") next = value.value + 1;
    if (key === name) return value;
  }
  return undefined;
}

function objectPropertyValue(
  sourceCode: SourceCode,
  object: TSESTree.ObjectExpression,
  name: string,
  depth: number,
): StaticValue | undefined {
  for (let i = object.properties.length - 1; i >= 0; i--) {
    const p = object.properties[i]!;
    if (p.type !== "Property") return undefined; // a spread may override anything before it
    if (keyName(p.key, p.computed) === name) return evaluate(sourceCode, p.value, depth + 1);
  }
  return undefined;
}

function evaluateMember(
  sourceCode: SourceCode,
  node: TSESTree.MemberExpression,
  depth: number,
): StaticValue | undefined {
  const name = propertyName(node, sourceCode, depth);
  if (name === undefined) return undefined;
  const object = unwrap(node.object);
  let imported = false;
  if (object.type === "Identifier") {
    const init = getConstInit(sourceCode, object);
    if (init) {
      const target = unwrap(init);
      if (target.type === "TSEnumDeclaration") return enumMemberValue(sourceCode, target, name, depth);
      if (target.type === "ObjectExpression") return objectPropertyValue(sourceCode, target, name, depth);
      // `const statusEnum = require("../constants/status-enum")`: a CommonJS import of another module's constants.
      if (!isRequire(target)) return undefined;
      imported = true;
    } else {
      const variable = findVariable(sourceCode, object);
      // Bound locally to something we cannot read (a parameter, a mutable variable): no value.
      if (variable && variable.defs.some((d) => d.type !== "ImportBinding")) return undefined;
      imported = variable !== undefined && variable.defs.length > 0;
    }
  } else if (object.type !== "MemberExpression") {
    return undefined;
  }
  // An imported or global enum-like namespace (`JobStatus.GENERATING`, `Prisma.$Enums.Status.RUNNING`), or a
  // constant of an imported module named like one (`statusEnum.INPROGRESS`): Prisma enums and most string enums use
  // the key as the value, and a value known by its name compares equal wherever the module names it.
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return undefined;
  if (/^[A-Z$]/.test(rootName(object) ?? "")) return { value: name, symbolic: true };
  if (imported && /^[A-Z][A-Z0-9_]+$/.test(name)) return { value: name, symbolic: true };
  return undefined;
}

/** `require("…")`, or a member of it (`require("./status").JobStatus`). */
function isRequire(node: Node): boolean {
  let n = unwrap(node);
  while (n.type === "MemberExpression") n = unwrap(n.object);
  return (
    n.type === "CallExpression" &&
    n.callee.type === "Identifier" &&
    n.callee.name === "require" &&
    n.arguments.length === 1 &&
    n.arguments[0]!.type === "Literal" &&
    typeof n.arguments[0]!.value === "string"
  );
}

function rootName(node: Node): string | undefined {
  let n = unwrap(node);
  while (n.type === "MemberExpression") n = unwrap(n.object);
  if (n.type === "Identifier") {
    // the enum's own name is the last segment before the key; accept an uppercase namespace anywhere on the path
    return n.name;
  }
  return undefined;
}

/** The static value of an expression, or undefined when it cannot be known without running the code. */
export function evaluate(sourceCode: SourceCode, node: Node, depth = 0): StaticValue | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "Literal":
      return fromLiteral(n);
    case "TemplateLiteral":
      return n.expressions.length === 0 ? { value: n.quasis.map((q) => q.value.cooked ?? "").join("") } : undefined;
    case "Identifier": {
      if (n.name === "undefined") return undefined;
      const init = getConstInit(sourceCode, n);
      return init && init.type !== "TSEnumDeclaration" ? evaluate(sourceCode, init, depth + 1) : undefined;
    }
    case "MemberExpression":
      return evaluateMember(sourceCode, n, depth);
    case "UnaryExpression":
      if (n.operator === "!") {
        const v = evaluate(sourceCode, n.argument, depth + 1);
        return v ? { value: !v.value } : undefined;
      }
      if (n.operator === "-") {
        const v = evaluate(sourceCode, n.argument, depth + 1);
        return v && typeof v.value === "number" ? { value: -v.value } : undefined;
      }
      return undefined;
    case "NewExpression": {
      // `new Date(0)`: a fixed instant, its epoch milliseconds (a lease cleared to the epoch).
      const [first] = n.arguments;
      const fixed =
        n.callee.type === "Identifier" &&
        n.callee.name === "Date" &&
        n.arguments.length === 1 &&
        first?.type === "Literal" &&
        typeof first.value === "number";
      return fixed ? { value: first.value as number } : undefined;
    }
    default:
      return undefined;
  }
}

/** An array literal, inline or held in a `const`. */
export function arrayLiteral(sourceCode: SourceCode, node: Node): TSESTree.ArrayExpression | undefined {
  const n = unwrap(node);
  if (n.type === "ArrayExpression") return n;
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    const target = init && unwrap(init);
    if (target?.type === "ArrayExpression") return target;
  }
  return undefined;
}

/** An object literal, inline or held by a `const` (`const where = { … }; update({ where })`). */
export function objectLiteral(
  sourceCode: SourceCode,
  node: Node | undefined,
  depth = 0,
): TSESTree.ObjectExpression | undefined {
  if (!node || node.type === "SpreadElement" || depth > 2) return undefined;
  const n = unwrap(node);
  if (n.type === "ObjectExpression") return n;
  // `buildLockFilter(id)`: a function of the module that builds the object in its one expression or `return`. Its
  // parameters stay names, read as values known at run time (`_id: id` names a row).
  if (n.type === "CallExpression" && n.callee.type === "Identifier") {
    const built = returnedExpression(sourceCode, n.callee);
    return built && objectLiteral(sourceCode, built, depth + 1);
  }
  const held = definitionOf(sourceCode, n);
  const target = held && unwrap(held);
  return target?.type === "ObjectExpression" ? target : undefined;
}

/**
 * The one value a module function gives back: an arrow's expression body, or a body of consts and one `return`
 * (`const isLockValid = (at) => Date.now() - at < TTL`, `function buildLockFilter(id) { return { _id: id } }`), where
 * `if`s that return a constant early may come first (`if (!task.started_at) return true;` before `return startedAt <
 * cutoff`: the verdict is the last return's whenever it is not settled at once). Anything longer is unknown.
 */
export function returnedExpression(sourceCode: SourceCode, callee: TSESTree.Identifier): Node | undefined {
  const variable = findVariable(sourceCode, callee);
  const def = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  let fn: Node | undefined;
  if (def?.type === "FunctionName") fn = def.node;
  else if (def?.type === "Variable" && def.parent.kind === "const" && def.node.init) fn = unwrap(def.node.init);
  if (
    !fn ||
    (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression" && fn.type !== "FunctionDeclaration")
  )
    return undefined;
  const body = fn.body;
  if (!body) return undefined;
  if (body.type !== "BlockStatement") return body;
  const rest = body.body.filter((st) => st.type !== "VariableDeclaration");
  const last = rest[rest.length - 1];
  if (!last || last.type !== "ReturnStatement" || !last.argument) return undefined;
  // `if (…) return true;` (or in a block of its own): settled before the verdict, with a constant.
  const earlyConstant = (st: TSESTree.Statement) => {
    if (st.type !== "IfStatement" || st.alternate) return false;
    const c =
      st.consequent.type === "BlockStatement" && st.consequent.body.length === 1
        ? st.consequent.body[0]!
        : st.consequent;
    return c.type === "ReturnStatement" && c.argument?.type === "Literal";
  };
  return rest.slice(0, -1).every(earlyConstant) ? last.argument : undefined;
}

/**
 * Where a binding made by destructuring reads its value: the object and the property (`const { key: pubKey } =
 * req.body` reads `req.body` . `key`). Only a flat pattern of a `const` (or a `let` never written again) with a static
 * key; a default value, a nested pattern or a rest element is not one plain read.
 */
export function destructuredFrom(
  sourceCode: SourceCode,
  id: TSESTree.Identifier,
): { object: Node; property: string } | undefined {
  const variable = findVariable(sourceCode, id);
  const def = variable?.defs[0];
  if (!variable || !def || variable.defs.length !== 1 || def.type !== "Variable") return undefined;
  const decl = def.node;
  if (decl.id.type !== "ObjectPattern" || !decl.init) return undefined;
  if (def.parent.kind !== "const" && variable.references.filter((r) => r.isWrite()).length !== 1) return undefined;
  const prop = def.name.parent;
  if (prop?.type !== "Property" || prop.parent !== decl.id || prop.value !== def.name) return undefined;
  const property = keyName(prop.key, prop.computed);
  return property === undefined ? undefined : { object: decl.init, property };
}

/**
 * The value a `let` declared without one is given by its only write, when that write is a plain `x = value`
 * statement (`let value; try { value = await redis.get(k) } catch {}`): every later read sees that value or nothing.
 * A second write, a compound one (`x += 1`), a write in a loop header or by destructuring is not one value.
 */
function onlyAssignedValue(writes: Reference[]): Node | undefined {
  if (writes.length !== 1) return undefined;
  const target = writes[0]!.identifier as Node;
  const assignment = target.parent;
  if (assignment?.type !== "AssignmentExpression" || assignment.operator !== "=" || assignment.left !== target)
    return undefined;
  const statement = assignment.parent;
  if (statement?.type !== "ExpressionStatement") return undefined;
  // Only a write every later statement of the declaring block runs after (or after whose `try` failed): none under
  // an `if`, a loop, a `switch` or a nested function, where a read could see the binding unassigned.
  const declaring = (writes[0]!.resolved?.defs[0]?.parent as Node | undefined)?.parent;
  for (let at: Node | undefined = statement.parent; at && at !== declaring; at = at.parent) {
    if (at.type !== "BlockStatement" && at.type !== "TryStatement") return undefined;
  }
  return assignment.right;
}

/**
 * The expression a `let` or `var` holds where `use` reads it, when one write reaches it for sure: the last write
 * before it in the function, made by a plain `=` (or the declaration's initializer) in a statement of a block that
 * holds `use` too, with no write of the variable anywhere between them (`let lock = await Lock.findOne(q); if (!lock)
 * { lock = new Lock(q); await lock.save(); }`: the save's `lock` is the new document). Undefined where a branch, a
 * loop or a nested function may have written it since, or where nothing reaches it before.
 */
export function reachingDefinition(sourceCode: SourceCode, use: TSESTree.Identifier): Node | undefined {
  const variable = findVariable(sourceCode, use);
  if (!variable || variable.defs.length !== 1 || variable.defs[0]!.type !== "Variable") return undefined;
  const before = variable.references.filter(
    (r) =>
      r.isWrite() && r.identifier.range[1] <= use.range[0] && r.from.variableScope === variable.scope.variableScope,
  );
  const last = before[before.length - 1];
  if (!last) return undefined;
  // A write made in a nested function may run at any time.
  if (variable.references.some((r) => r.isWrite() && r.from.variableScope !== variable.scope.variableScope))
    return undefined;
  const target = last.identifier as Node;
  const parent = target.parent;
  let value: Node | undefined;
  let statement: Node | undefined;
  if (parent?.type === "VariableDeclarator" && parent.id === target && parent.init) {
    value = parent.init;
    statement = parent.parent;
  } else if (parent?.type === "AssignmentExpression" && parent.operator === "=" && parent.left === target) {
    value = parent.right;
    statement = parent.parent?.type === "ExpressionStatement" ? parent.parent : undefined;
  }
  if (!value || !statement) return undefined;
  // The statement's block holds the use: every way to the use from the write stays after it.
  const block = statement.parent;
  if (!block || (block.type !== "BlockStatement" && block.type !== "Program")) return undefined;
  if (!(block.range[0] <= use.range[0] && use.range[1] <= block.range[1])) return undefined;
  // No loop between the block and the use, where a later iteration's write would come before the use.
  for (let n: Node | undefined = use.parent; n && n !== block; n = n.parent) {
    if (/^(For|ForIn|ForOf|While|DoWhile)Statement$/.test(n.type)) return undefined;
  }
  return value;
}

/**
 * The one expression a name or a field holds where it is read, when exactly one reaches it: a `const` binding's
 * initializer (or a `let` assigned once), or a field of the class (`this.filter`) that the class sets exactly once
 * (its declaration's initializer, or one assignment in a method, typically the constructor).
 */
export function definitionOf(sourceCode: SourceCode, node: Node): Node | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    return init && init.type !== "TSEnumDeclaration" ? init : undefined;
  }
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression") return onlyFieldValue(n);
  return undefined;
}

/** The value a class gives `this.<name>` when it gives it exactly one: a field initializer or a single assignment. */
function onlyFieldValue(member: TSESTree.MemberExpression): Node | undefined {
  const name = memberKey(member.property, member.computed);
  let body: Node | undefined = member.parent;
  while (body && body.type !== "ClassBody") body = body.parent;
  if (!body || name === undefined) return undefined;
  const values: Node[] = [];
  walk(body, (n) => {
    if (values.length > 1) return false;
    if (n.type === "PropertyDefinition" && memberKey(n.key, n.computed) === name && n.value && !n.static)
      values.push(n.value);
    if (
      n.type === "AssignmentExpression" &&
      n.left.type === "MemberExpression" &&
      n.left.object.type === "ThisExpression" &&
      memberKey(n.left.property, n.left.computed) === name
    )
      values.push(n.operator === "=" ? n.right : n);
  });
  return values.length === 1 && values[0]!.type !== "AssignmentExpression" ? values[0] : undefined;
}

/** The property of an object literal with a static key `name` (the first one). */
export function findProperty(object: TSESTree.ObjectExpression, name: string): TSESTree.Property | undefined {
  for (const p of object.properties) {
    if (p.type === "Property" && keyName(p.key, p.computed) === name) return p;
  }
  return undefined;
}

const ARRAY_MUTATORS = new Set(["push", "unshift", "splice", "pop", "shift", "fill", "copyWithin"]);

/**
 * How the array a name holds is changed in place: not at all, only by `push` (it only grows), or otherwise
 * (`ids[i] = id`, `ids.length = 0`, `splice`).
 */
function arrayChanges(sourceCode: SourceCode, id: TSESTree.Identifier): "none" | "pushes" | "other" {
  const variable = findVariable(sourceCode, id);
  if (!variable) return "none";
  let out: "none" | "pushes" | "other" = "none";
  for (const ref of variable.references) {
    const parent = ref.identifier.parent;
    if (parent?.type !== "MemberExpression" || parent.object !== ref.identifier) continue;
    const call = parent.parent;
    const name = keyName(parent.property, parent.computed);
    if (call?.type === "CallExpression" && call.callee === parent && name === "push") out = "pushes";
    else if (
      (call?.type === "CallExpression" && call.callee === parent && name !== undefined && ARRAY_MUTATORS.has(name)) ||
      (call?.type === "AssignmentExpression" && call.left === parent)
    )
      return "other";
  }
  return out;
}

/** Whether the array a name holds is changed in place anywhere: `ids.push(id)`, `ids[i] = id`, `ids.length = 0`. */
function arrayMutated(sourceCode: SourceCode, id: TSESTree.Identifier): boolean {
  return arrayChanges(sourceCode, id) !== "none";
}

/**
 * The terms of a filter list ANDed together (`const and = [{ processing: { equals: false } }]; …; and.push(more)`;
 * `where: { and }`), inline or held by a `const`: its own elements, and whether code adds more in place. Pushing more
 * AND terms only narrows what the list matches; any other change in place (`splice`, an index written) may widen
 * it, so the list is then unknown (undefined), as is a list built from spreads.
 */
export function andTerms(
  sourceCode: SourceCode,
  node: Node | undefined,
): { terms: readonly Node[]; grows: boolean } | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  let n = unwrap(node);
  let grows = false;
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    const changes = arrayChanges(sourceCode, n);
    if (!init || init.type === "TSEnumDeclaration" || changes === "other") return undefined;
    grows = changes === "pushes";
    n = unwrap(init);
  }
  if (n.type !== "ArrayExpression" || n.elements.some((e) => !e || e.type === "SpreadElement")) return undefined;
  return { terms: n.elements as Node[], grows };
}

/** The static elements of an array, inline or held by a `const`; undefined when any is known only at run time. */
export function staticList(sourceCode: SourceCode, node: Node | undefined): StaticValue[] | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    // `const ids = []; rows.forEach((r) => ids.push(r.id))`: a const binding, but not a const list.
    if (arrayMutated(sourceCode, n)) return undefined;
    if (init && init.type !== "TSEnumDeclaration") n = unwrap(init);
  }
  if (n.type !== "ArrayExpression") return undefined;
  const out: StaticValue[] = [];
  for (const el of n.elements) {
    const v = el && el.type !== "SpreadElement" ? evaluate(sourceCode, el) : undefined;
    if (!v) return undefined;
    out.push(v);
  }
  return out;
}

/**
 * For a parameter of `x.then((param) => …)`, the call `x` whose result it receives (a GET, a row read); also for
 * a name destructured from that parameter (`x.then(([row]) => …)`).
 */
export function thenParameterOf(sourceCode: SourceCode, id: TSESTree.Identifier): Node | undefined {
  const def = findVariable(sourceCode, id)?.defs[0];
  if (def?.type !== "Parameter") return undefined;
  const fn = def.node;
  const first = fn.params[0];
  if (!first || def.name.range[0] < first.range[0] || def.name.range[1] > first.range[1]) return undefined;
  const call = fn.parent;
  if (call?.type !== "CallExpression" || call.arguments[0] !== fn || call.callee.type !== "MemberExpression")
    return undefined;
  const method = call.callee.property;
  if (call.callee.computed || method.type !== "Identifier" || method.name !== "then") return undefined;
  return unwrap(call.callee.object);
}

/**
 * The call whose value a node-style callback's second parameter receives: `value` in `redis.get(key, function (err,
 * value) { … })`, the callback being the call's last argument.
 */
export function callbackValueOf(sourceCode: SourceCode, id: TSESTree.Identifier): TSESTree.CallExpression | undefined {
  const def = findVariable(sourceCode, id)?.defs[0];
  if (def?.type !== "Parameter") return undefined;
  const fn = def.node;
  if (fn.type !== "FunctionExpression" && fn.type !== "ArrowFunctionExpression") return undefined;
  if (fn.params[1] !== def.name) return undefined;
  const arg = boundCallback(fn);
  const call = arg.parent;
  return call?.type === "CallExpression" && call.arguments[call.arguments.length - 1] === arg ? call : undefined;
}

/** `fn.bind(receiver)`: the function and the receiver it is bound to. */
function bindOf(node: Node): { fn: Node; receiver: Node } | undefined {
  const n = unwrap(node);
  if (n.type !== "CallExpression" || n.arguments.length !== 1) return undefined;
  const callee = unwrap(n.callee);
  if (callee.type !== "MemberExpression" || keyName(callee.property, callee.computed) !== "bind") return undefined;
  const receiver = n.arguments[0]!;
  return receiver.type === "SpreadElement" ? undefined : { fn: callee.object, receiver };
}

/** `promisify(fn)` or `util.promisify(fn)`: the function it wraps. */
function promisified(node: Node): Node | undefined {
  const n = unwrap(node);
  if (n.type !== "CallExpression" || n.arguments.length !== 1 || n.arguments[0]!.type === "SpreadElement")
    return undefined;
  const callee = unwrap(n.callee);
  const name =
    callee.type === "Identifier"
      ? callee.name
      : callee.type === "MemberExpression"
        ? keyName(callee.property, callee.computed)
        : undefined;
  return name === "promisify" ? n.arguments[0] : undefined;
}

/**
 * The method a name holds when it holds one bound to its own receiver, so that `f(args)` sends what `x.m(args)`
 * sends: `const f = x.m.bind(x)`, `promisify(x.m).bind(x)`, `promisify(x.m.bind(x))` (node's `util.promisify` calls
 * the method with a callback on the receiver it was bound to). The member expression `x.m` is returned; a method
 * bound to another receiver, or taken off its object without one (`const { m } = x`), is not the receiver's call.
 */
export function boundMethod(
  sourceCode: SourceCode,
  callee: TSESTree.Identifier,
): TSESTree.MemberExpression | undefined {
  const init = getConstInit(sourceCode, callee);
  if (!init || init.type === "TSEnumDeclaration") return undefined;
  const bound = bindOf(init);
  // promisify(x.m).bind(x), or x.m.bind(x)
  const fn = bound ? (promisified(bound.fn) ?? bound.fn) : undefined;
  // promisify(x.m.bind(x))
  const inner = !bound ? bindOf(promisified(init) ?? init) : undefined;
  const member = unwrap(fn ?? inner?.fn ?? init);
  const receiver = bound?.receiver ?? inner?.receiver;
  if (member.type !== "MemberExpression" || !receiver) return undefined;
  return sourceCode.getText(unwrap(member.object)) === sourceCode.getText(unwrap(receiver)) ? member : undefined;
}

/** A callback as it is passed: the function itself, or its `.bind(this)` (`function (err, id) { … }.bind(this)`). */
export function boundCallback(fn: TSESTree.FunctionLike): Node {
  const member = fn.parent;
  if (
    member?.type === "MemberExpression" &&
    member.object === fn &&
    keyName(member.property, member.computed) === "bind" &&
    member.parent.type === "CallExpression" &&
    member.parent.callee === member
  )
    return member.parent;
  return fn;
}

/**
 * The static values an expression can take when it chooses between them: `ok ? "COMPLETED" : "FAILED"` (nested
 * too). Undefined when any branch is not static.
 */
export function staticChoices(sourceCode: SourceCode, node: Node, depth = 0): StaticValue[] | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier" && depth === 0) return letChoices(sourceCode, n) ?? parameterChoices(sourceCode, n);
  if (n.type !== "ConditionalExpression" || depth > 3) return undefined;
  const out: StaticValue[] = [];
  for (const branch of [n.consequent, n.alternate]) {
    const b = unwrap(branch);
    const nested = b.type === "ConditionalExpression" ? staticChoices(sourceCode, b, depth + 1) : undefined;
    const v = nested ? undefined : evaluate(sourceCode, b);
    if (nested) out.push(...nested);
    else if (v) out.push(v);
    else return undefined;
  }
  return out;
}

/**
 * The values a parameter can hold by its declared type: a union of literals (`status: "done" | "failed"`), written
 * there or in a type alias of the module (`type Outcome = "done" | "failed"`), for a parameter never assigned.
 */
function parameterChoices(sourceCode: SourceCode, id: TSESTree.Identifier): StaticValue[] | undefined {
  const variable = findVariable(sourceCode, id);
  const def = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  if (!variable || def?.type !== "Parameter" || def.name.type !== "Identifier") return undefined;
  if (variable.references.some((r) => r.isWrite())) return undefined;
  const annotation = (def.name as TSESTree.Identifier).typeAnnotation?.typeAnnotation;
  return annotation ? literalUnion(sourceCode, annotation, 0) : undefined;
}

function literalUnion(sourceCode: SourceCode, type: TSESTree.TypeNode, depth: number): StaticValue[] | undefined {
  if (depth > 3) return undefined;
  if (type.type === "TSLiteralType") {
    const literal = type.literal;
    return literal.type === "Literal" && (typeof literal.value === "string" || typeof literal.value === "number")
      ? [{ value: literal.value }]
      : undefined;
  }
  if (type.type === "TSUnionType") {
    const out: StaticValue[] = [];
    for (const member of type.types) {
      const values = literalUnion(sourceCode, member, depth + 1);
      if (!values) return undefined;
      out.push(...values);
    }
    return out;
  }
  if (type.type === "TSTypeReference" && type.typeName.type === "Identifier" && !type.typeArguments) {
    const alias = findVariable(sourceCode, type.typeName)?.defs[0]?.node;
    return alias?.type === "TSTypeAliasDeclaration"
      ? literalUnion(sourceCode, alias.typeAnnotation, depth + 1)
      : undefined;
  }
  return undefined;
}

/**
 * The values a `let` can hold where every value given to it is static: its initialiser and each plain assignment
 * (`let outcome = "failed"; if (ok) outcome = "posted";`), or a choice among static ones. Undefined when any write
 * is something else (a call, a compound assignment, a loop or destructuring target), or for a `const` (`evaluate`).
 */
function letChoices(sourceCode: SourceCode, id: TSESTree.Identifier): StaticValue[] | undefined {
  const variable = findVariable(sourceCode, id);
  const def = variable?.defs.length === 1 ? variable.defs[0] : undefined;
  if (!variable || def?.type !== "Variable" || def.parent.kind === "const") return undefined;
  const out: StaticValue[] = [];
  const writes = variable.references.filter((r) => r.isWrite());
  if (writes.length === 0) return undefined;
  for (const ref of writes) {
    const parent = ref.identifier.parent;
    const plain =
      (parent?.type === "VariableDeclarator" && parent.id === ref.identifier) ||
      (parent?.type === "AssignmentExpression" && parent.operator === "=" && parent.left === ref.identifier);
    if (!plain || !ref.writeExpr) return undefined;
    const value = staticChoices(sourceCode, ref.writeExpr, 1) ?? single(evaluate(sourceCode, ref.writeExpr));
    if (!value) return undefined;
    out.push(...value);
  }
  return out;
}

function single(value: StaticValue | undefined): StaticValue[] | undefined {
  return value ? [value] : undefined;
}

/**
 * The static number an expression computes, for durations: literals, `const`s, `+ - * /` of those, and the
 * constants `Number.MAX_SAFE_INTEGER`, `Number.MAX_VALUE`, `Infinity` (`90 * 24 * 60 * 60`, `TTL_SECONDS`).
 */
export function evaluateNumber(sourceCode: SourceCode, node: Node, depth = 0): number | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "Literal":
      return typeof n.value === "number" ? n.value : undefined;
    case "Identifier": {
      if (n.name === "Infinity") return Infinity;
      const init = getConstInit(sourceCode, n);
      return init && init.type !== "TSEnumDeclaration" ? evaluateNumber(sourceCode, init, depth + 1) : undefined;
    }
    case "MemberExpression": {
      const object = unwrap(n.object);
      const key = keyName(n.property, n.computed);
      if (object.type === "Identifier" && object.name === "Number" && key === "MAX_SAFE_INTEGER")
        return Number.MAX_SAFE_INTEGER;
      if (object.type === "Identifier" && object.name === "Number" && key === "MAX_VALUE") return Number.MAX_VALUE;
      const v = evaluate(sourceCode, n, depth + 1);
      return typeof v?.value === "number" && !v.symbolic ? v.value : undefined;
    }
    case "UnaryExpression": {
      const v =
        n.operator === "-" || n.operator === "+" ? evaluateNumber(sourceCode, n.argument, depth + 1) : undefined;
      return v === undefined ? undefined : n.operator === "-" ? -v : v;
    }
    case "BinaryExpression": {
      if (n.left.type === "PrivateIdentifier") return undefined;
      const a = evaluateNumber(sourceCode, n.left, depth + 1);
      const b = a === undefined ? undefined : evaluateNumber(sourceCode, n.right, depth + 1);
      if (a === undefined || b === undefined) return undefined;
      switch (n.operator) {
        case "+":
          return a + b;
        case "-":
          return a - b;
        case "*":
          return a * b;
        case "/":
          return b === 0 ? undefined : a / b;
        default:
          return undefined;
      }
    }
    default:
      return undefined;
  }
}

/** A member's name, `#name` for a private one: what a class property of that name is keyed by. */
function memberKey(key: Node, computed: boolean): string | undefined {
  return key.type === "PrivateIdentifier" ? `#${key.name}` : keyName(key, computed);
}

/** What a `this.field` (or `this.#field`) was initialised with: the class property, or `this.field = …` in the constructor. */
export function fieldInit(member: TSESTree.MemberExpression): Node | undefined {
  const name = memberKey(member.property, member.computed);
  let body: TSESTree.ClassBody | undefined;
  for (let p: Node | undefined = member.parent; p; p = p.parent) {
    if (p.type === "ClassBody") {
      body = p;
      break;
    }
  }
  if (!body || name === undefined) return undefined;
  for (const el of body.body) {
    if (el.type === "PropertyDefinition" && memberKey(el.key, el.computed) === name && el.value) return el.value;
    if (el.type === "MethodDefinition" && el.kind === "constructor") {
      for (const s of el.value.body?.body ?? []) {
        if (s.type !== "ExpressionStatement" || s.expression.type !== "AssignmentExpression") continue;
        const left = s.expression.left;
        if (
          left.type === "MemberExpression" &&
          left.object.type === "ThisExpression" &&
          memberKey(left.property, left.computed) === name
        ) {
          return s.expression.right;
        }
      }
    }
  }
  return undefined;
}

/**
 * The identifier a call's result is stored in: `const job = await Job.findOneAndUpdate(…)`, through `as`, `!`, a
 * member or a chained call (`(await q).rows`, `q.catch(…)`), or the first element of `const [row] = …`.
 */
export function resultBinding(node: Node): TSESTree.Identifier | undefined {
  let child: Node = node;
  let p = node.parent;
  while (
    p &&
    (p.type === "AwaitExpression" ||
      p.type === "TSAsExpression" ||
      p.type === "TSNonNullExpression" ||
      (p.type === "MemberExpression" && p.object === child) ||
      (p.type === "CallExpression" && p.callee === child))
  ) {
    child = p;
    p = p.parent;
  }
  if (p?.type !== "VariableDeclarator" || p.init !== child) return undefined;
  if (p.id.type === "Identifier") return p.id;
  if (p.id.type === "ArrayPattern" && p.id.elements[0]?.type === "Identifier") return p.id.elements[0];
  // `const { data: jobs, error } = await supabase.from("jobs").select()`, `const { rows } = await pool.query(…)`: the
  // rows a result object carries.
  if (p.id.type === "ObjectPattern")
    for (const prop of p.id.properties)
      if (
        prop.type === "Property" &&
        !prop.computed &&
        prop.key.type === "Identifier" &&
        ROWS_KEY.test(prop.key.name) &&
        prop.value.type === "Identifier"
      )
        return prop.value;
  return undefined;
}

/** The property of a query's result object that holds its rows: Supabase's `data`, pg's `rows`. */
const ROWS_KEY = /^(?:data|rows)$/;

const ITERATING = new Set(["forEach", "map", "flatMap", "filter", "some", "every", "find", "reduce"]);

/** Array methods whose result holds some of the list's own rows: `filter`, `slice`, a sort. */
const SUBSET = new Set(["filter", "slice", "sort", "toSorted", "toReversed", "reverse"]);

/** The list an expression takes a part of (`stuck.filter(…)`, `rows.slice(0, 10)`), or undefined. */
function subsetOf(e: Node | undefined): Node | undefined {
  const u = e && unwrap(e);
  if (u?.type !== "CallExpression" || u.callee.type !== "MemberExpression" || u.callee.computed) return undefined;
  const name = u.callee.property.type === "Identifier" ? u.callee.property.name : undefined;
  return name && SUBSET.has(name) ? (u.callee.object as Node) : undefined;
}

/** The list an iteration runs over: `jobs`, `jobs ?? []`, or the list a const takes part of (`stuck.filter(…)`). */
function listIn(sourceCode: SourceCode, e: Node | undefined, depth = 0): TSESTree.Identifier | undefined {
  const u = e && unwrap(e);
  // `for (const job of jobs ?? [])`: the list, or nothing.
  if (u?.type === "LogicalExpression" && (u.operator === "??" || u.operator === "||"))
    return listIn(sourceCode, u.left, depth);
  // A part of another list, or the list again under another name, in a const (`const retriable =
  // stuck.filter(…)`, `const rows = stale as Row[]`): its rows are that list's.
  const init = u?.type === "Identifier" && depth < 3 ? getConstInit(sourceCode, u) : undefined;
  const part = init && (subsetOf(init) ?? (unwrap(init).type === "Identifier" ? unwrap(init) : undefined));
  if (part) return listIn(sourceCode, part, depth + 1);
  return u?.type === "Identifier" ? u : undefined;
}

/** The list whose rows' keys a `.map` gives (`jobs.map((j) => j.id)`), or undefined for any other mapping. */
function idsOf(call: TSESTree.CallExpression): Node | undefined {
  const callee = call.callee;
  if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier") return undefined;
  if (callee.property.name !== "map") return undefined;
  const fn = call.arguments[0];
  if (fn?.type !== "ArrowFunctionExpression" || fn.params[0]?.type !== "Identifier") return undefined;
  const param = fn.params[0].name;
  const body = fn.body.type === "BlockStatement" ? undefined : unwrap(fn.body as Node);
  return body?.type === "MemberExpression" &&
    !body.computed &&
    body.property.type === "Identifier" &&
    /^_?id$/i.test(body.property.name) &&
    body.object.type === "Identifier" &&
    body.object.name === param
    ? (callee.object as Node)
    : undefined;
}

/**
 * The read result a row value was taken from, where the code shows it: the identifier a loop or an array callback
 * iterates (`for (const link of stuckLinks)`, `stuckLinks.forEach((link) => …)`, `stuckLinks[0]`) for a value rooted at
 * the loop's or the callback's variable (`link.id`). Undefined where nothing shows it: unknown, not "none".
 */
export function iterationSource(sourceCode: SourceCode, node: Node): TSESTree.Identifier | undefined {
  let n = unwrap(node);
  if (n.type === "Property") n = unwrap(n.value as Node);
  // `failed.map((j) => j.id)` handed whole (`.in("id", …)`): the ids of that list's rows.
  if (n.type === "CallExpression") {
    const ids = idsOf(n);
    return ids && listIn(sourceCode, ids);
  }
  while (n.type === "MemberExpression") {
    if (n.computed && unwrap(n.object).type === "Identifier") {
      const list = unwrap(n.object) as TSESTree.Identifier;
      const v = findVariable(sourceCode, list);
      if (v && v.defs.length === 1 && v.defs[0]!.type === "Variable") return list;
    }
    n = unwrap(n.object);
  }
  if (n.type !== "Identifier") return undefined;
  const def = findVariable(sourceCode, n)?.defs[0];
  if (!def) return undefined;
  const iterated = (e: Node | undefined) => listIn(sourceCode, e);
  if (def.type === "Variable") {
    const decl = def.parent;
    const loop = decl?.parent;
    if (loop?.type === "ForOfStatement" && loop.left === decl) return iterated(loop.right);
    return undefined;
  }
  if (def.type === "Parameter") {
    const fn = def.node;
    const call = fn.parent;
    if (
      call?.type === "CallExpression" &&
      call.arguments[0] === fn &&
      call.callee.type === "MemberExpression" &&
      !call.callee.computed &&
      call.callee.property.type === "Identifier" &&
      ITERATING.has(call.callee.property.name) &&
      fn.params[0]?.type === "Identifier" &&
      fn.params[0].name === n.name
    )
      return iterated(call.callee.object);
  }
  return undefined;
}

/**
 * A value drawn fresh for each call, itself or as the `const` it is read from: a random or unique id
 * (`randomUUID()`, `nanoid()`, `cuid()`, `ulid()`, `Math.random()`, `new ObjectId()` with no argument). No other
 * caller holds it, so a row written with it is this call's own.
 */
export function drawnFresh(sourceCode: SourceCode, node: Node): boolean {
  const u = unwrap(node);
  const init = u.type === "Identifier" ? getConstInit(sourceCode, u) : u;
  if (init === undefined || init.type === "TSEnumDeclaration") return false;
  const n = unwrap(init);
  if (n.type === "NewExpression" && n.arguments.length === 0 && calleeText(n) === "ObjectId") return true;
  return /\b(?:random\w*|randomUUID|uuid\w*|nanoid|cuid2?|ulid|createId)\s*\(/i.test(sourceCode.getText(n));
}

function calleeText(n: TSESTree.NewExpression): string | undefined {
  const c = unwrap(n.callee as Node);
  if (c.type === "Identifier") return c.name;
  return c.type === "MemberExpression" && !c.computed && c.property.type === "Identifier" ? c.property.name : undefined;
}

/**
 * The variables holding the value of `node` or a value computed from it, within the module: `const snap = await
 * ref.get()`, then `const data = snap.data()`, `const owner = data?.by`, `const ok = rows.length > 0`. Followed through
 * members, calls on it, awaits, operators and TypeScript wrappers to a `const`/`let` declaration; at most `limit`.
 */
export function valuesFrom(sourceCode: SourceCode, node: Node, limit = 12): Set<Variable> {
  const held = new Set<Variable>();
  const from = (start: Node): Variable | undefined => {
    let n = start;
    for (;;) {
      const p: Node | undefined = n.parent;
      if (!p) return undefined;
      const through =
        p.type === "AwaitExpression" ||
        p.type === "ChainExpression" ||
        p.type === "TSAsExpression" ||
        p.type === "TSNonNullExpression" ||
        p.type === "BinaryExpression" ||
        p.type === "LogicalExpression" ||
        p.type === "UnaryExpression" ||
        (p.type === "MemberExpression" && p.object === n) ||
        (p.type === "CallExpression" && p.callee === n);
      if (through) {
        n = p;
        continue;
      }
      if (p.type !== "VariableDeclarator" || p.init !== n || p.id.type !== "Identifier") return undefined;
      return findVariable(sourceCode, p.id);
    }
  };
  const first = from(node);
  if (!first) return held;
  const queue = [first];
  held.add(first);
  while (queue.length > 0 && held.size < limit) {
    for (const ref of queue.shift()!.references) {
      if (!ref.isRead()) continue;
      const v = from(ref.identifier);
      if (v && !held.has(v)) {
        held.add(v);
        queue.push(v);
      }
    }
  }
  return held;
}
