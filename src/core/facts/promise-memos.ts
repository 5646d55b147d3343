/**
 * Promise memos (Q1, in-process): a slot that outlives the call (a module `let`, a property of `global` or of a
 * module object, an instance field) filled with a promise when it is empty, and handed to every later caller
 * (`if (!clientPromise) clientPromise = client.connect(); return clientPromise;`). The slot is a one-key in-flight
 * table that is never emptied: fine while the promise resolves, since the result is what every caller wants. When
 * it rejects, the rejection is what every later caller gets, and nothing tries again until the process restarts.
 * A memo is reported only where the model sees all of that: the slot tested empty and filled in one turn with a
 * promise made then (not awaited in the assignment), the slot handed out after, and no other write of the slot in
 * the module (a reset in a `.catch`, a `finally`, a `close()` is a write) and no rejection handler chained on the
 * promise stored.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { PromiseMemo } from "../model/held-locks.js";
import { walk } from "../reading/walk.js";
import { findVariable, unwrap } from "../reading/values.js";
import { enclosingFunction as enclosingFunctionLike, isFunction } from "../reading/units.js";
import { contains, exits, methodOf } from "../reading/ast.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Fn = TSESTree.FunctionDeclaration | TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression;

/** A slot's text: `name`, `obj.prop`, `this.prop`, `globalThis._p` (a chain of plain names), else undefined. */
function slotText(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") return n.name;
  if (n.type === "ThisExpression") return "this";
  if (n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier") {
    const object = slotText(n.object);
    return object === undefined ? undefined : `${object}.${n.property.name}`;
  }
  return undefined;
}

/** The plain name a slot starts from, where it is a name (`cached` of `cached.promise`). */
function rootName(node: Node): TSESTree.Identifier | undefined {
  let n = unwrap(node);
  while (n.type === "MemberExpression") n = unwrap(n.object);
  return n.type === "Identifier" ? n : undefined;
}

function enclosingFunction(node: Node): Fn | undefined {
  return enclosingFunctionLike(node) as Fn | undefined;
}

/** `!slot`, `slot == null`, `slot === undefined`, `typeof slot === "undefined"`: the slot is empty. */
function testsEmpty(test: Node, slot: string): boolean {
  const t = unwrap(test);
  if (t.type === "UnaryExpression" && t.operator === "!") return slotText(t.argument) === slot;
  if (t.type === "BinaryExpression" && (t.operator === "==" || t.operator === "===")) {
    const empty = (n: Node) => {
      const u = unwrap(n);
      return (
        (u.type === "Literal" && u.value === null) ||
        (u.type === "Identifier" && u.name === "undefined") ||
        (u.type === "UnaryExpression" && u.operator === "void")
      );
    };
    const typeofUndefined = (a: Node, b: Node) => {
      const u = unwrap(a);
      const v = unwrap(b);
      return (
        u.type === "UnaryExpression" &&
        u.operator === "typeof" &&
        slotText(u.argument) === slot &&
        v.type === "Literal" &&
        v.value === "undefined"
      );
    };
    return (
      (slotText(t.left) === slot && empty(t.right)) ||
      (slotText(t.right) === slot && empty(t.left)) ||
      typeofUndefined(t.left, t.right) ||
      typeofUndefined(t.right, t.left)
    );
  }
  return false;
}

/** `slot` as a plain truthiness test (`if (slot) return slot;`). */
function testsFull(test: Node, slot: string): boolean {
  return slotText(test) === slot;
}

/** The statement that holds `node` directly in a block or a program. */
function statementOf(node: Node): TSESTree.Statement | undefined {
  let child: Node = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    if (p.type === "BlockStatement" || p.type === "Program") return child as TSESTree.Statement;
    if (isFunction(p)) return undefined;
  }
  return undefined;
}

/**
 * The assignment fills the slot only when it is empty: `slot ??= …`, `slot ||= …`, inside `if (!slot)` (its
 * consequent), or after `if (slot) return …;` in the same block.
 */
function fillsWhenEmpty(assignment: TSESTree.AssignmentExpression, slot: string): boolean {
  if (assignment.operator === "??=" || assignment.operator === "||=") return true;
  if (assignment.operator !== "=") return false;
  // `slot = slot || make()`, `slot = slot ?? make()`: the long form of `||=`.
  if (keptOr(assignment, slot)) return true;
  const statement = statementOf(assignment);
  if (!statement) return false;
  // Inside the consequent of an emptiness test (the statement itself, or a statement of its block).
  const parent = statement.parent;
  const guard =
    parent?.type === "IfStatement"
      ? parent
      : parent?.type === "BlockStatement" && parent.parent?.type === "IfStatement"
        ? parent.parent
        : undefined;
  if (guard && contains(guard.consequent, statement) && testsEmpty(guard.test, slot)) return true;
  // After `if (slot) return slot;` in the same block.
  if (parent?.type === "BlockStatement" || parent?.type === "Program") {
    const list = parent.body as readonly Node[];
    const i = list.indexOf(statement);
    for (let j = i - 1; j >= 0; j--) {
      const s = list[j]!;
      if (s.type === "IfStatement" && testsFull(s.test, slot) && exits(s.consequent)) return true;
    }
  }
  return false;
}

/** The value made when the slot is empty: `make()` of `slot = slot || make()`, else the whole right side. */
function keptOr(assignment: TSESTree.AssignmentExpression, slot: string): Node | undefined {
  const right = unwrap(assignment.right);
  return right.type === "LogicalExpression" &&
    (right.operator === "||" || right.operator === "??") &&
    slotText(right.left) === slot
    ? right.right
    : undefined;
}

function madeValue(assignment: TSESTree.AssignmentExpression, slot: string): Node {
  return keptOr(assignment, slot) ?? assignment.right;
}

/** The methods of a promise chain from its end back to its start: `connect().then(f).finally(g)` gives `finally`, `then`. */
function chainCalls(node: Node): TSESTree.CallExpression[] {
  const out: TSESTree.CallExpression[] = [];
  let n = unwrap(node);
  while (n.type === "CallExpression") {
    out.push(n);
    const callee = unwrap(n.callee);
    if (callee.type !== "MemberExpression") break;
    n = unwrap(callee.object);
  }
  return out;
}

/** The value stored is a promise made by this assignment, with no rejection handler chained on it. */
function promiseStored(sourceCode: SourceCode, value: Node): { evident: boolean; handled: boolean } | undefined {
  const v = unwrap(value);
  if (v.type === "AwaitExpression") return undefined;
  if (v.type === "NewExpression")
    return v.callee.type === "Identifier" && v.callee.name === "Promise"
      ? { evident: true, handled: false }
      : undefined;
  if (v.type !== "CallExpression") return undefined;
  const calls = chainCalls(v);
  const methods = calls.map((c) => methodOf(c)?.name);
  const handled = methods.some((m, i) => m === "catch" || (m === "then" && calls[i]!.arguments.length > 1));
  const evident =
    methods.some((m) => m === "then" || m === "finally" || m === "catch") ||
    calleeIsAsync(sourceCode, calls[calls.length - 1]!);
  return { evident, handled };
}

/** The call runs an async function the module declares, or an async function expression called in place. */
function calleeIsAsync(sourceCode: SourceCode, call: TSESTree.CallExpression): boolean {
  const callee = unwrap(call.callee);
  if (isFunction(callee)) return (callee as Fn).async;
  if (callee.type !== "Identifier") return false;
  const def = findVariable(sourceCode, callee)?.defs[0];
  if (!def) return false;
  if (def.node.type === "FunctionDeclaration") return def.node.async;
  if (def.node.type === "VariableDeclarator" && def.node.init && isFunction(def.node.init))
    return (def.node.init as Fn).async;
  return false;
}

/** Names that say the slot holds a promise: `clientPromise`, `initPromise`, `pending`, `inflight`, `ready`. */
const PROMISE_NAME = /promise|pending|in_?flight|loading|connecting|initiali[sz]ing|ready$|^p$/i;

/** The slot is awaited or chained on, or named or typed as a promise, somewhere in the module. */
function usedAsPromise(sourceCode: SourceCode, slot: string, uses: readonly Node[]): boolean {
  if (PROMISE_NAME.test(slot.split(".").pop()!)) return true;
  for (const use of uses) {
    const p = use.parent;
    if (p?.type === "AwaitExpression") return true;
    if (p?.type === "MemberExpression" && p.object === use && slotText(p.property) === "then") return true;
  }
  return (
    /Promise</.test(sourceCode.text) &&
    new RegExp(`\\b${escape(slot.split(".").pop()!)}\\??\\s*:\\s*Promise<`).test(sourceCode.text)
  );
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** After the fill, the same function hands the slot out: returns it, awaits it, or chains on it. */
function handedOut(fn: Fn | undefined, fill: Node, uses: readonly Node[]): boolean {
  return uses.some((use) => {
    if (use.range[0] <= fill.range[1] || enclosingFunction(use) !== fn) return false;
    const p = use.parent;
    return (
      p?.type === "ReturnStatement" ||
      p?.type === "AwaitExpression" ||
      (p?.type === "MemberExpression" && p.object === use) ||
      (fn?.type === "ArrowFunctionExpression" && fn.body === use)
    );
  });
}

/**
 * The slot lives as long as the process: a variable of the module, a property of `global`/`globalThis`, or a property
 * of an object a module variable holds (`cached.promise`, `cached = global._mongoose`). A variable of an enclosing
 * function lives as long as that call or the closure it returns, and an instance field as long as its object, which
 * may be one per request: unknown, so quiet.
 */
function livesWithProcess(sourceCode: SourceCode, target: Node): boolean {
  const root = rootName(target);
  if (!root) return false;
  if (root.name === "global" || root.name === "globalThis") return unwrap(target).type === "MemberExpression";
  const variable = findVariable(sourceCode, root);
  const def = variable?.defs[0];
  if (!variable || !def || def.type !== "Variable") return false;
  if (unwrap(target).type === "Identifier" && def.parent?.kind === "const") return false;
  return variable.scope.type === "module" || variable.scope.type === "global";
}

/**
 * What ends with the memo's work, where a kept rejection hands no later caller a wedged service: a teardown (`closing
 * ??= close()`, `shutdownPromise`, `disposeOnce()`), named by the slot or by the function that fills it.
 */
const TEARDOWN =
  /clos|shut|stop|dispos|destroy|disconnect|quit|terminat|clean|teardown|flush|deactivat|exit|abort|cancel/i;
/** `end` as a word of the name (`end`, `onEnd`, `end_session`), not its letters inside one (`pending`, `backend`). */
const END_WORD = /(^|_)end($|[A-Z_])|End($|[A-Z_])/;

function tearsDown(name: string): boolean {
  return TEARDOWN.test(name) || END_WORD.test(name);
}

/**
 * What every later request of a service depends on: a connection, a client, a pool, an initialisation (`connect()`,
 * `createClient()`, `db.initialize()`, `clientPromise`). A memo of anything else (a token, a lookup, a loaded
 * library) may be meant to be kept, and a caller can live without it: unknown, so quiet.
 */
const RESOURCE =
  /connect|client|(^|[a-z_])db($|[A-Z_])|database|pool|redis|mongo|prisma|sequelize|knex|init|setup|bootstrap|session|producer|consumer|broker|channel|launch|spawn/i;

/** The names a promise chain calls: `mongoose.connect(…).then(…)` gives `connect`, `then`; `createClient()` gives it. */
function chainNames(value: Node): string[] {
  const out: string[] = [];
  for (const call of chainCalls(value)) {
    const callee = unwrap(call.callee);
    if (callee.type === "Identifier") out.push(callee.name);
    else if (callee.type === "MemberExpression" && !callee.computed && callee.property.type === "Identifier")
      out.push(callee.property.name);
  }
  return out;
}

/** A module of a test run or a one-shot script: its process ends with its work. */
export function runsOnce(filename: string): boolean {
  return /(^|[/\\])(tests?|__tests__|spec|e2e|scripts?|tools?|bin|cli)[/\\]|\.(test|spec|e2e)\.[cm]?[jt]sx?$|test-?setup|setup-?tests/i.test(
    filename,
  );
}

/** Code that runs in a browser page, which a reload starts over: it names the page's globals or says so. */
function runsInPage(sourceCode: SourceCode): boolean {
  return /^\s*["']use client["']|\b(?:window|document|navigator|localStorage|sessionStorage)\s*\./m.test(
    sourceCode.text,
  );
}

/** The promise loads a module (`import("pdfjs-dist")`): a failed import fails again however often it is retried. */
function importsModule(value: Node): boolean {
  const calls = chainCalls(value);
  const first = calls.length > 0 ? unwrap(calls[calls.length - 1]!.callee) : unwrap(value);
  const start = first.type === "MemberExpression" ? unwrap(first.object) : first;
  return start.type === "ImportExpression" || unwrap(value).type === "ImportExpression";
}

/** The name a function is called by: its own, or the variable, property or method it is assigned to. */
function functionName(fn: Fn): string {
  if (fn.type !== "ArrowFunctionExpression" && fn.id) return fn.id.name;
  const p = fn.parent;
  if (p?.type === "VariableDeclarator" && p.id.type === "Identifier") return p.id.name;
  if ((p?.type === "Property" || p?.type === "MethodDefinition") && p.key.type === "Identifier") return p.key.name;
  if (p?.type === "AssignmentExpression") return slotText(p.left) ?? "";
  return "";
}

/** `process.exit(…)` somewhere under `node`. */
function exitsProcess(node: Node): boolean {
  let found = false;
  walk(node, (n) => {
    if (n.type === "CallExpression" && n.callee.type === "MemberExpression" && slotText(n.callee) === "process.exit")
      found = true;
    return !found;
  });
  return found;
}

/**
 * A rejection of the slot's promise ends the process (`try { await initPromise } catch { process.exit(1) }`, or
 * `.catch(() => process.exit(1))` on it): no later caller is left to be handed it.
 */
function rejectionEndsProcess(uses: readonly Node[]): boolean {
  return uses.some((use) => {
    const p = use.parent;
    if (p?.type === "MemberExpression" && p.object === use && slotText(p.property) === "catch") {
      const call = p.parent;
      return call?.type === "CallExpression" && call.arguments.some(exitsProcess);
    }
    if (p?.type !== "AwaitExpression") return false;
    for (let n: Node | undefined = p; n && !isFunction(n); n = n.parent) {
      const t: Node | undefined = n.parent;
      if (t?.type === "TryStatement" && t.block === n && t.handler && exitsProcess(t.handler.body)) return true;
    }
    return false;
  });
}

export function buildPromiseMemos(sourceCode: SourceCode, filename: string): PromiseMemo[] {
  const writes = new Map<string, TSESTree.AssignmentExpression[]>();
  const uses = new Map<string, Node[]>();
  const deleted = new Set<string>();
  walk(sourceCode.ast, (n) => {
    if (n.type === "AssignmentExpression") {
      const slot = slotText(n.left);
      if (slot !== undefined) writes.set(slot, [...(writes.get(slot) ?? []), n]);
    } else if (n.type === "UnaryExpression" && n.operator === "delete") {
      const slot = slotText(n.argument);
      if (slot !== undefined) deleted.add(slot);
    } else if (n.type === "Identifier" || n.type === "MemberExpression") {
      const parent = n.parent;
      // Only the outermost name of a chain is a use of that chain's text.
      if (parent?.type === "MemberExpression" && parent.object === n) {
        const slot = slotText(n);
        if (slot !== undefined) uses.set(slot, [...(uses.get(slot) ?? []), n]);
        return;
      }
      const slot = slotText(n);
      if (slot !== undefined) uses.set(slot, [...(uses.get(slot) ?? []), n]);
    }
    return;
  });
  const out: PromiseMemo[] = [];
  if (runsInPage(sourceCode) || runsOnce(filename)) return out;
  for (const [slot, assignments] of writes) {
    if (deleted.has(slot) || slot === "this" || slot.startsWith("module.") || slot.startsWith("exports.")) continue;
    const fills = assignments.filter((a) => fillsWhenEmpty(a, slot));
    // Every write of the slot is a fill: anything else (a reset in a `.catch`, a `close()`) empties it.
    if (fills.length === 0 || fills.length !== assignments.length) continue;
    const slotUses = uses.get(slot) ?? [];
    for (const fill of fills) {
      const made = madeValue(fill, slot);
      const stored = promiseStored(sourceCode, made);
      if (!stored || stored.handled) continue;
      if (!stored.evident && !usedAsPromise(sourceCode, slot, slotUses)) continue;
      const fn = enclosingFunction(fill);
      if (!fn || !livesWithProcess(sourceCode, fill.left) || importsModule(made)) continue;
      if (tearsDown(slot.split(".").pop()!) || tearsDown(functionName(fn))) continue;
      if (!RESOURCE.test(slot.split(".").pop()!) && !chainNames(made).some((n) => RESOURCE.test(n))) continue;
      if (rejectionEndsProcess(slotUses)) continue;
      const direct = fill.parent?.type === "ReturnStatement" || fill.parent?.type === "AwaitExpression";
      if (!direct && !handedOut(fn, fill, slotUses)) continue;
      out.push({ slot, fill, value: made });
      break;
    }
  }
  return out;
}
