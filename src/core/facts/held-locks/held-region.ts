/**
 * Where holding starts: inside or after the test of a try-acquire's outcome (`heldRegion`), or at the `await` that
 * settles an acquire started without one (`settlingAwait`).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import { exits, expressionName, methodOf } from "../../reading/ast.js";
import { LOG_NAME } from "../../reading/rejection-flow.js";
import { enclosingFunction, isFunction } from "../../reading/units.js";
import { findVariable, keyName, unwrap } from "../../reading/values.js";
import { walk } from "../../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

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

export function mentions(node: Node, names: ReadonlySet<string>): boolean {
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
export function heldRegion(sourceCode: SourceCode, acquire: Node): { start: number; end: number } | undefined {
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
      // Or assign it to a variable declared before (`let acquired = false; try { const r = await set(…NX);
      // acquired = r === "OK"; if (!acquired) return …`).
      if (
        s.type === "ExpressionStatement" &&
        s.expression.type === "AssignmentExpression" &&
        s.expression.operator === "=" &&
        mentions(s.expression.right, names)
      ) {
        boundNames(s.expression.left, names);
        continue;
      }
      // A log line between the acquire and its test (`console.log("result:", result)`) runs either way.
      if (isLogLine(s)) continue;
      break;
    }
  }
  if (!test) return undefined;
  // `if (!locked) { …fallback… }`: the consequent runs without the lock, whether it exits or not. A consequent that
  // exits under a test of success (`if (lockValue) { …work…; return result }`) is where the lock is held.
  // The acquire itself as the test (`if (await redis.setnx(key, token)) { …; return true; }`) is true when it took
  // the lock: held in the consequent, whether or not that returns.
  let tested = unwrap(test.test);
  if (tested.type === "AwaitExpression") tested = unwrap(tested.argument);
  const isAcquire = tested === acquire;
  if (failedTest(test.test) || (exits(test.consequent) && !succeededTest(test.test) && !isAcquire)) {
    const block = statementOf(test);
    const parent = test.parent;
    if (!block || !parent) return undefined;
    if (!exits(test.consequent) && test.alternate)
      return { start: test.alternate.range[0], end: test.alternate.range[1] };
    return { start: test.range[1], end: parent.range[1] };
  }
  return { start: test.consequent.range[0], end: test.consequent.range[1] };
}

/** `console.log(…)`, `logger.info(…)`, `this.logger.warn(…)`: a statement that only logs, not awaited. */
function isLogLine(s: Node): boolean {
  if (s.type !== "ExpressionStatement") return false;
  const e = unwrap(s.expression);
  const m = e.type === "CallExpression" ? methodOf(e) : undefined;
  return (
    m !== undefined &&
    LOG_NAME.test(m.name) &&
    /^(?:console|logger|log|logging)$/i.test(expressionName(unwrap(m.member.object)) ?? "")
  );
}

/** A test that is true when the acquire succeeded: the outcome itself (`locked`, `lock.value`), or compared with success. */
function succeededTest(test: Node): boolean {
  const t = unwrap(test);
  if (t.type === "Identifier" || t.type === "MemberExpression") return true;
  // `result.acquired && result.token`: every part says it succeeded.
  if (t.type === "LogicalExpression" && t.operator === "&&") return succeededTest(t.left) && succeededTest(t.right);
  if (t.type !== "BinaryExpression") return false;
  const other = unwrap(t.right);
  const literal = other.type === "Literal" ? other.value : "?";
  if (t.operator === "===" || t.operator === "==") return literal === "OK" || literal === true || literal === 1;
  if (t.operator === "!==" || t.operator === "!=")
    return literal === null || (other.type === "Identifier" && other.name === "undefined");
  return false;
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
export function queuedBatchExec(
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
export function settlingAwait(
  sourceCode: SourceCode,
  acquire: Node,
  batch?: Node,
): TSESTree.AwaitExpression | undefined {
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
