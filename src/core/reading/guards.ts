/**
 * JavaScript checks that guard a write: the enclosing `if` branches and the early exits before it, up to the
 * enclosing function. Read lazily, only for writes a rule may report.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, StaticValue } from "../model/accesses.js";
import type { Guard } from "../model/claims.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { isFunction, functionName } from "./units.js";
import { evaluate, findVariable, getConstInit, returnedExpression, unwrap } from "./values.js";
import { readsClock, readsClockNow } from "./clock.js";
import { walk } from "./walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

const AGE_NAME = /idle|elapsed|stale|time_?out|cutoff|threshold|deadline|(?:^|[a-z_])age(?:$|[A-Z_])/i;
/** Date-library calls that compute "a duration ago": `subtract`, `subMinutes`, `minus({ minutes })`. */
const DURATION_CALL = /^(?:subtract|minus|sub[A-Z]\w*|add[A-Z]\w*|plus)$/;
/** Comparisons of two dates that are age checks only when one side is a duration ago. */
const SCHEDULE_CALL = /^(?:isBefore|isAfter|isSameOrBefore|isSameOrAfter)$/;
const AGE_CALL =
  /stale|expired|timed?_?out|older|isBefore|isAfter|isSameOrBefore|isSameOrAfter|differenceIn|elapsed|\bage\b|overdue|dead|alive|hung|stuck/i;

/** A statement that always leaves the surrounding block: return, throw, continue, break, or a block ending in one. */
function alwaysExits(node: TSESTree.Statement): boolean {
  switch (node.type) {
    case "ReturnStatement":
    case "ThrowStatement":
    case "ContinueStatement":
    case "BreakStatement":
      return true;
    case "BlockStatement": {
      const last = node.body[node.body.length - 1];
      return last !== undefined && alwaysExits(last);
    }
    case "IfStatement":
      return node.alternate !== null && alwaysExits(node.consequent) && alwaysExits(node.alternate);
    default:
      return false;
  }
}

/** The one early exit directly in an `if`'s consequent block (`if (A) { if (B) return; … }`), if any. */
function innerExit(stmt: TSESTree.IfStatement): TSESTree.IfStatement | undefined {
  if (stmt.consequent.type !== "BlockStatement") return undefined;
  const exits = stmt.consequent.body.filter(
    (s): s is TSESTree.IfStatement => s.type === "IfStatement" && s.alternate === null && alwaysExits(s.consequent),
  );
  return exits.length === 1 ? exits[0] : undefined;
}

/** One node per pair of nested tests, so that every reader that keys on a guard's test sees the same one. */
const BOTH = new WeakMap<TSESTree.Expression, TSESTree.Expression>();

/**
 * The test `a && b` of two nested `if`s, read as one: a node made for reading only (its parts keep their own parents;
 * it is never rewritten, and it is located at `b`, the inner test, which the way past it has passed).
 */
function both(a: TSESTree.Expression, b: TSESTree.Expression): TSESTree.Expression {
  let node = BOTH.get(b);
  if (!node) {
    node = {
      type: "LogicalExpression",
      operator: "&&",
      left: a,
      right: b,
      range: [b.range[0], b.range[1]],
      loc: b.loc,
      parent: b.parent,
    } as TSESTree.LogicalExpression;
    BOTH.set(b, node);
  }
  return node;
}

function memberName(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type === "MemberExpression") {
    if (!n.computed && n.property.type === "Identifier") return n.property.name;
    if (n.computed && n.property.type === "Literal" && typeof n.property.value === "string") return n.property.value;
  }
  return undefined;
}

function walkExpression(node: Node, visit: (n: Node) => void, depth = 0): void {
  if (depth > 12) return;
  visit(node);
  for (const key of Object.keys(node) as (keyof typeof node)[]) {
    if (key === "parent") continue;
    const child = node[key] as unknown;
    if (Array.isArray(child)) {
      for (const c of child) if (c && typeof c === "object" && "type" in c) walkExpression(c as Node, visit, depth + 1);
    } else if (child && typeof child === "object" && "type" in child && !isFunction(child as Node)) {
      walkExpression(child as Node, visit, depth + 1);
    }
  }
}

/**
 * What a test says about row fields, as a `Condition` over `object.field` comparisons with static values
 * (`job.status === "RUNNING"`, `["A", "B"].includes(job.status)`); anything else is opaque. `accepts` decides
 * which objects stand for the row being written (a check of `project.status` says nothing about a job).
 */
export function testCondition(sourceCode: SourceCode, test: Node, accepts: (object: Node) => boolean): Condition {
  const n = unwrap(test);
  const opaque: Condition = { kind: "opaque", node: n };
  if (n.type === "LogicalExpression" && n.operator !== "??") {
    const items = [testCondition(sourceCode, n.left, accepts), testCondition(sourceCode, n.right, accepts)];
    return { kind: n.operator === "&&" ? "and" : "or", items };
  }
  if (n.type === "UnaryExpression" && n.operator === "!")
    return { kind: "not", item: testCondition(sourceCode, n.argument, accepts) };
  // `if (doc.isSending)`: the flag is set (truthy, read as true).
  if (n.type === "MemberExpression") {
    const field = memberName(n);
    if (field && accepts(n.object)) return { kind: "pred", field, op: "eq", values: [{ value: true }], node: n };
    return opaque;
  }
  if (n.type === "BinaryExpression" && ["===", "!==", "==", "!="].includes(n.operator)) {
    for (const [side, other] of [
      [n.left, n.right],
      [n.right, n.left],
    ] as const) {
      const s = unwrap(side);
      const field = memberName(s);
      if (!field || s.type !== "MemberExpression" || !accepts(s.object)) continue;
      const value = evaluate(sourceCode, other);
      if (!value) continue;
      const op = n.operator.startsWith("!") ? "ne" : "eq";
      return { kind: "pred", field, op, values: [value], node: n };
    }
    return opaque;
  }
  // `lock.expiresAt < new Date()`, `now > row.lockedUntil`: the field judged against the clock (its instant has
  // passed), as `field < now`. The other way round (`expiresAt > now`: still valid) is not an age test.
  if (n.type === "BinaryExpression" && ["<", "<=", ">", ">="].includes(n.operator)) {
    const before = n.operator === "<" || n.operator === "<=";
    for (const [side, other, passed] of [
      [n.left, n.right, before],
      [n.right, n.left, !before],
    ] as const) {
      const s = unwrap(side as Node);
      const field = memberName(s);
      if (
        !field ||
        s.type !== "MemberExpression" ||
        !accepts(s.object) ||
        !passed ||
        !readsClock(sourceCode, other as Node)
      )
        continue;
      return { kind: "pred", field, op: n.operator.endsWith("=") ? "lte" : "lt", values: undefined, node: n };
    }
    return opaque;
  }
  if (n.type === "CallExpression" && memberName(n.callee) === "includes" && n.arguments[0]) {
    const s = unwrap(n.arguments[0]);
    const field = memberName(s);
    const list = n.callee.type === "MemberExpression" ? unwrap(n.callee.object) : undefined;
    if (field && s.type === "MemberExpression" && accepts(s.object) && list?.type === "ArrayExpression") {
      const values = list.elements.map((el) =>
        el && el.type !== "SpreadElement" ? evaluate(sourceCode, el) : undefined,
      );
      if (values.every((v) => v !== undefined))
        return { kind: "pred", field, op: "in", values: values as StaticValue[], node: n };
    }
  }
  return opaque;
}

/** The condition that holds where the guarded code runs: the test, or its negation past an early exit. */
export function pathCondition(sourceCode: SourceCode, guard: Guard, accepts: (object: Node) => boolean): Condition {
  const c = testCondition(sourceCode, guard.test, accepts);
  return guard.negated ? { kind: "not", item: c } : c;
}

/**
 * `Date.now() - startTime > TIME_BUDGET_MS` with `const startTime = Date.now()`: the time this code has run, measured
 * between two clock readings of its own. It judges no row's age, whatever the variable is called.
 */
function isStopwatch(sourceCode: SourceCode, comparison: TSESTree.BinaryExpression): boolean {
  let found = false;
  walkExpression(comparison, (m) => {
    if (m.type === "BinaryExpression" && m.operator === "-" && m !== comparison) {
      if (readsClockNow(sourceCode, m.left as Node) && readsClockNow(sourceCode, m.right)) found = true;
    }
  });
  return found;
}

/**
 * A name taken apart from a result (`const { data: stale } = await …select()`, `const [stale] = rows`): what a query
 * returned, tested for being there, not a verdict the code reached.
 */
function destructured(sourceCode: SourceCode, n: TSESTree.Identifier): boolean {
  const def = findVariable(sourceCode, n)?.defs[0];
  return def?.type === "Variable" && (def.node.id.type === "ObjectPattern" || def.node.id.type === "ArrayPattern");
}

/** A list whose size is read (`staleJobs.length`, `stuckIds.size`): what its name says of its rows judges nothing. */
function countedList(n: Node): boolean {
  const p = n.parent;
  return (
    p?.type === "MemberExpression" &&
    p.object === n &&
    !p.computed &&
    p.property.type === "Identifier" &&
    (p.property.name === "length" || p.property.name === "size")
  );
}

/** Reads one `if` test for age: which timestamps it judges, if any. */
export function describeTest(
  sourceCode: SourceCode,
  test: TSESTree.Expression,
  negated: boolean,
  vocabulary: ResolvedVocabulary,
  depth = 0,
): Guard {
  const timeFields = new Set<string>();
  let judgesAge = false;
  walkExpression(test, (n) => {
    if (n.type === "BinaryExpression") {
      if (["<", ">", "<=", ">="].includes(n.operator) && !isStopwatch(sourceCode, n)) {
        // Age is a time compared with a *duration* ago: `updatedAt < Date.now() - ttl`, `idleFor > LIMIT`,
        // `updatedAt < cutoff`. A time compared with now alone (`startAt <= now`: due) is a schedule, not age.
        let timed = false;
        let duration = false;
        const visit = (m: Node, followConsts: boolean): void => {
          const name = memberName(m) ?? (m.type === "Identifier" ? m.name : undefined);
          // A method called on a time (`startedAt.toDate()`, `.getTime()`) is no field of the row.
          const called = m.parent?.type === "CallExpression" && m.parent.callee === m;
          if (name && vocabulary.isTimeField(name) && !called) {
            timed = true;
            if (m.type === "MemberExpression") timeFields.add(name);
            // A liveness signal compared at all is an age check (`job.heartbeatAt < since`).
            if (vocabulary.isProgressTimeField(name)) duration = true;
          }
          if (m.type === "Identifier" && AGE_NAME.test(m.name) && !countedList(m)) timed = duration = true;
          if (m.type === "CallExpression" && memberName(m.callee) === "now") timed = true;
          // A field read by name from a document or model instance: `snap.get("startedAt")`, `row.get("lockedAt")`.
          if (m.type === "CallExpression" && memberName(m.callee) === "get" && m.arguments.length === 1) {
            const field = m.arguments[0]!.type === "Literal" ? m.arguments[0]!.value : undefined;
            if (typeof field === "string" && vocabulary.isTimeField(field)) {
              timed = true;
              timeFields.add(field);
              if (vocabulary.isProgressTimeField(field)) duration = true;
            }
          }
          if (m.type === "BinaryExpression" && m.operator === "-") duration = true;
          // An instant plus a term is a deadline (`lock.takenAt + lock.ttlMs >= now`): past it, the row is stale.
          if (
            m.type === "BinaryExpression" &&
            m.operator === "+" &&
            [m.left, m.right].some((side) => {
              const t = memberName(side as Node) ?? (side.type === "Identifier" ? side.name : undefined);
              return t !== undefined && vocabulary.isTimeField(t);
            })
          )
            duration = true;
          if (
            m.type === "CallExpression" &&
            DURATION_CALL.test(memberName(m.callee) ?? (m.callee.type === "Identifier" ? m.callee.name : ""))
          )
            duration = true;
          // `const idleFor = Date.now() - job.updatedAt.getTime(); if (idleFor > LIMIT)`: read the const once.
          if (followConsts && m.type === "Identifier") {
            const init = getConstInit(sourceCode, m);
            if (init && init.type !== "TSEnumDeclaration") walkExpression(init, (k) => visit(k, false));
          }
        };
        walkExpression(n, (m) => visit(m, true));
        if (timed && duration) judgesAge = true;
      }
    }
    if (n.type === "CallExpression") {
      const callee = n.callee.type === "Identifier" ? n.callee.name : memberName(n.callee);
      // isBefore/isAfter judge age only against a time a duration ago (`isBefore(job.updatedAt, subMinutes(now, 30))`).
      let dated = !SCHEDULE_CALL.test(callee ?? "");
      if (!dated)
        walkExpression(n, (m) => {
          if (
            (m.type === "BinaryExpression" && m.operator === "-") ||
            (m.type === "CallExpression" &&
              DURATION_CALL.test(memberName(m.callee) ?? (m.callee.type === "Identifier" ? m.callee.name : "")))
          )
            dated = true;
          if (m.type === "Identifier" && AGE_NAME.test(m.name)) dated = true;
        });
      if (callee && AGE_CALL.test(callee) && dated) {
        judgesAge = true;
        walkExpression(n, (m) => {
          const name = memberName(m);
          if (name && vocabulary.isTimeField(name)) timeFields.add(name);
        });
      }
    }
    // `isLockValid(lock.updatedAt)`: a helper of this module whose one expression judges age on what it is passed.
    if (n.type === "CallExpression" && n.callee.type === "Identifier" && depth < 2) {
      const body = returnedExpression(sourceCode, n.callee);
      const inner = body && describeTest(sourceCode, body as TSESTree.Expression, false, vocabulary, depth + 1);
      if (inner && inner.judgesAge) {
        judgesAge = true;
        for (const arg of n.arguments) {
          const name = memberName(arg as Node);
          if (name && vocabulary.isTimeField(name)) timeFields.add(name);
        }
        // The fields it judges of the row it is handed (`canStart(task)` comparing `task.started_at`).
        if (timeFields.size === 0) for (const f of inner.timeFields) timeFields.add(f);
      }
    }
    // A verdict tested as such (`if (isStale)`, `!expired`), not a list the name describes (`stuckLinks.length`, or
    // `if (stuckCampaigns && …)`, a query's rows tested for being there: blind-11 A9a05).
    if (
      n.type === "Identifier" &&
      AGE_CALL.test(n.name) &&
      /^(is|has)?_?(stale|expired|timedOut|dead|hung|stuck)/i.test(n.name) &&
      !/^(stale|expired|timedOut|dead|hung|stuck)_?[A-Za-z]*[a-z]s$/i.test(n.name) &&
      !countedList(n) &&
      !destructured(sourceCode, n)
    ) {
      judgesAge = true;
    }
    // `const verdict = classifyStaleRun(run, now); if (!verdict) continue;`: the test holds an age check's result.
    if (n.type === "Identifier" && !judgesAge) {
      const init = getConstInit(sourceCode, n);
      const call = init && unwrap(init.type === "AwaitExpression" ? init.argument : init);
      if (call?.type === "CallExpression") {
        const callee = call.callee.type === "Identifier" ? call.callee.name : memberName(call.callee);
        if (callee && AGE_CALL.test(callee)) judgesAge = true;
      }
    }
  });
  return { test, negated, timeFields: [...timeFields], judgesAge };
}

/**
 * The `if` tests a node runs under: enclosing branches and earlier early exits, through anonymous callbacks
 * (`$transaction(async (tx) => …)`, `.then(…)`) up to the named function that owns them.
 */
export function guardsOf(sourceCode: SourceCode, node: Node, vocabulary: ResolvedVocabulary): Guard[] {
  const out: Guard[] = [];
  let child: Node = node;
  let parent = node.parent;
  while (parent && !(isFunction(parent) && functionName(parent) !== undefined)) {
    if (parent.type === "IfStatement" && child !== parent.test) {
      out.push(describeTest(sourceCode, parent.test, child === parent.alternate, vocabulary));
    } else if (parent.type === "ConditionalExpression" && child !== parent.test) {
      out.push(describeTest(sourceCode, parent.test, child === parent.alternate, vocabulary));
    } else if (parent.type === "LogicalExpression" && child === parent.right && parent.operator !== "??") {
      out.push(describeTest(sourceCode, parent.left, parent.operator === "||", vocabulary));
    } else if (parent.type === "BlockStatement" || parent.type === "Program" || parent.type === "SwitchCase") {
      const body: readonly Node[] = parent.type === "SwitchCase" ? parent.consequent : parent.body;
      for (const stmt of body) {
        if (stmt === child) break;
        if (stmt.type === "IfStatement" && stmt.alternate === null && alwaysExits(stmt.consequent)) {
          out.push(describeTest(sourceCode, stmt.test, true, vocabulary));
        } else if (stmt.type === "IfStatement" && stmt.alternate === null) {
          // `if (A) { if (B) return; … }`: the way on past it is not (A and B), a take-over of a stale hold
          // (`if (job.state === "running") { if (age < LIMIT) return; log("taking over"); }`).
          const inner = innerExit(stmt);
          if (inner) out.push(describeTest(sourceCode, both(stmt.test, inner.test), true, vocabulary));
        }
      }
    }
    child = parent;
    parent = parent.parent;
  }
  return out;
}

/**
 * The first `return` or `throw` in `block` before `before` (outside nested functions) under an `if` whose test names
 * `name`: the way out taken when a lock is found held (`if (running) return`, `if (lock.is_running) return`). One
 * taken under another test (nothing to do yet) is not it.
 */
export function exitWhenHeld(sourceCode: SourceCode, block: Node, before: Node, name: string): Node | undefined {
  const named = new RegExp(`(?:^|[^\\w$])${name.replace(/[$.]/g, "\\$&")}(?![\\w$])`);
  const testsLock = (exit: Node) => {
    for (let p = exit.parent; p; p = p.parent) {
      if (p.type === "IfStatement") return named.test(sourceCode.getText(p.test));
      if (isFunction(p) || p.type === "TryStatement") return false;
    }
    return false;
  };
  let exit: Node | undefined;
  walk(block, (n) => {
    if (exit || n.range[0] >= before.range[0]) return false;
    if (n !== block && isFunction(n)) return false;
    if ((n.type === "ReturnStatement" || n.type === "ThrowStatement") && testsLock(n)) {
      exit = n;
      return false;
    }
    return true;
  });
  return exit;
}

/**
 * How a value moves as time passes for a row whose stored times stay put: +1 for the clock read now (and `now - t`),
 * 0 for stored times, durations and constants, undefined where the code does not say (an unknown call).
 */
function trend(sourceCode: SourceCode, node: Node, depth = 0): number | undefined {
  if (depth > 6) return undefined;
  const n = unwrap(node);
  if (readsClockNow(sourceCode, n)) return 1;
  switch (n.type) {
    case "Literal":
    case "MemberExpression":
    case "TemplateLiteral":
      return 0;
    case "Identifier": {
      const init = getConstInit(sourceCode, n);
      return init && init.type !== "TSEnumDeclaration" ? trend(sourceCode, init, depth + 1) : 0;
    }
    case "AwaitExpression":
      return trend(sourceCode, n.argument, depth + 1);
    case "ChainExpression":
      return trend(sourceCode, n.expression, depth + 1);
    case "LogicalExpression": {
      // `startedAt?.getTime() || 0`: a stored time or its default, both still.
      const l = trend(sourceCode, n.left, depth + 1);
      return l !== undefined && l === trend(sourceCode, n.right, depth + 1) ? l : undefined;
    }
    case "UnaryExpression":
      return n.operator === "-" ? neg(trend(sourceCode, n.argument, depth + 1)) : undefined;
    case "BinaryExpression": {
      if (n.left.type === "PrivateIdentifier") return undefined;
      const l = trend(sourceCode, n.left, depth + 1);
      const r = trend(sourceCode, n.right, depth + 1);
      if (l === undefined || r === undefined) return undefined;
      if (n.operator === "+") return l + r;
      if (n.operator === "-") return l - r;
      // Scaled by a constant (`elapsed / 1000`, `mins * 60_000`): the sign stays.
      if ((n.operator === "*" || n.operator === "/") && (l === 0 || r === 0)) return l + r;
      return undefined;
    }
    case "CallExpression":
    case "NewExpression": {
      const callee = unwrap(n.callee);
      const name = callee.type === "Identifier" ? callee.name : memberName(callee);
      const first = n.arguments[0];
      // Conversions and roundings keep what they are handed: `t.getTime()`, `new Date(t)`, `Math.floor(x / 1000)`.
      if (callee.type === "MemberExpression" && name && /^(getTime|valueOf|toMillis|getSeconds)$/.test(name))
        return trend(sourceCode, callee.object, depth + 1);
      if (name && /^(Number|Date|parse|parseInt|parseFloat|floor|round|ceil|trunc)$/.test(name) && first)
        return first.type === "SpreadElement" ? undefined : trend(sourceCode, first, depth + 1);
      return n.arguments.length === 0 && n.type === "NewExpression" ? 1 : undefined;
    }
    default:
      return undefined;
  }
}

const neg = (x: number | undefined) => (x === undefined ? undefined : -x);

/**
 * Whether an age test is true for an old row (`Date.now() - startedAt > LIMIT`, `updatedAt < now - ttl`,
 * `expiresAt <= now`) or for a young one (`elapsed < LIMIT`, `expiresAt > now`): the side that grows as time passes
 * decides. Undefined where the test does not say (an unknown call, a cutoff handed in).
 */
export function oldWhenTrue(sourceCode: SourceCode, test: Node): boolean | undefined {
  const u = unwrap(test);
  if (u.type === "UnaryExpression" && u.operator === "!") {
    const inner = oldWhenTrue(sourceCode, u.argument);
    return inner === undefined ? undefined : !inner;
  }
  if (u.type === "LogicalExpression") {
    const l = oldWhenTrue(sourceCode, u.left);
    const r = oldWhenTrue(sourceCode, u.right);
    return l !== undefined && r !== undefined && l !== r ? undefined : (l ?? r);
  }
  if (u.type !== "BinaryExpression" || !["<", ">", "<=", ">="].includes(u.operator)) return undefined;
  if (u.left.type === "PrivateIdentifier") return undefined;
  const l = trend(sourceCode, u.left);
  const r = trend(sourceCode, u.right);
  if (l === undefined || r === undefined || l === r) return undefined;
  const leftGrows = l > r;
  return u.operator.startsWith(">") ? leftGrows : !leftGrows;
}
