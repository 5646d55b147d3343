/**
 * JavaScript checks that guard a write: the enclosing `if` branches and the early exits before it, up to the
 * enclosing function. Read lazily, only for writes a rule may report.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Guard, Node, StaticValue } from "./model.js";
import type { ResolvedVocabulary } from "./settings.js";
import { evaluate, getConstInit, unwrap } from "./values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

const AGE_NAME = /idle|elapsed|stale|time_?out|cutoff|deadline|(?:^|[a-z_])age(?:$|[A-Z_])/i;
const AGE_CALL = /stale|expired|timed?_?out|older|isBefore|isAfter|differenceIn|elapsed|\bage\b|overdue|dead|alive|hung|stuck/i;

export function isFunction(node: Node): node is TSESTree.FunctionLike {
  return node.type === "FunctionDeclaration" || node.type === "FunctionExpression" || node.type === "ArrowFunctionExpression";
}

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

/** Reads one `if` test: which fields it compares with static values and which timestamps it judges age by. */
export function describeTest(
  sourceCode: SourceCode,
  test: TSESTree.Expression,
  negated: boolean,
  vocabulary: ResolvedVocabulary,
): Guard {
  const statusFields = new Set<string>();
  const statusChecks: { field: string; value: StaticValue }[] = [];
  const timeFields = new Set<string>();
  let judgesAge = false;
  walkExpression(test, (n) => {
    if (n.type === "BinaryExpression") {
      const l = memberName(n.left);
      const r = memberName(n.right);
      if (["===", "!==", "==", "!="].includes(n.operator)) {
        for (const [side, other] of [[l, n.right], [r, n.left]] as const) {
          const value = side && !vocabulary.isTimeField(side) ? evaluate(sourceCode, other) : undefined;
          if (side && value) {
            statusFields.add(side);
            statusChecks.push({ field: side, value });
          }
        }
      }
      if (["<", ">", "<=", ">="].includes(n.operator)) {
        let timed = false;
        const visit = (m: Node, followConsts: boolean): void => {
          const name = memberName(m) ?? (m.type === "Identifier" ? m.name : undefined);
          if (name && (vocabulary.isTimeField(name) || (m.type === "Identifier" && AGE_NAME.test(name)))) {
            timed = true;
            if (m.type === "MemberExpression") timeFields.add(name);
          }
          if (m.type === "CallExpression" && memberName(m.callee) === "now") timed = true;
          // `const idleFor = Date.now() - job.updatedAt.getTime(); if (idleFor > LIMIT)`: read the const once.
          if (followConsts && m.type === "Identifier") {
            const init = getConstInit(sourceCode, m);
            if (init && init.type !== "TSEnumDeclaration") walkExpression(init, (k) => visit(k, false));
          }
        };
        walkExpression(n, (m) => visit(m, true));
        if (timed) judgesAge = true;
      }
    }
    if (n.type === "CallExpression") {
      const callee = n.callee.type === "Identifier" ? n.callee.name : memberName(n.callee);
      if (callee === "includes" && n.arguments[0]) {
        const f = memberName(n.arguments[0]);
        if (f) {
          statusFields.add(f);
          const list = n.callee.type === "MemberExpression" ? unwrap(n.callee.object) : undefined;
          if (list?.type === "ArrayExpression") {
            for (const el of list.elements) {
              const value = el && el.type !== "SpreadElement" ? evaluate(sourceCode, el) : undefined;
              if (value) statusChecks.push({ field: f, value });
            }
          }
        }
      }
      if (callee && AGE_CALL.test(callee)) {
        judgesAge = true;
        walkExpression(n, (m) => {
          const name = memberName(m);
          if (name && vocabulary.isTimeField(name)) timeFields.add(name);
        });
      }
    }
    if (n.type === "Identifier" && AGE_CALL.test(n.name) && /^(is|has)?_?(stale|expired|timedOut|dead|hung|stuck)/i.test(n.name)) {
      judgesAge = true;
    }
  });
  return { test, negated, statusFields: [...statusFields], statusChecks, timeFields: [...timeFields], judgesAge };
}

/** The `if` tests a node runs under inside its function: enclosing branches and earlier early exits. */
export function guardsOf(sourceCode: SourceCode, node: Node, vocabulary: ResolvedVocabulary): Guard[] {
  const out: Guard[] = [];
  let child: Node = node;
  let parent = node.parent;
  while (parent && !isFunction(parent)) {
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
        }
      }
    }
    child = parent;
    parent = parent.parent;
  }
  return out;
}

/** The function a node sits in, or undefined at module level. */
export function enclosingFunction(node: Node): TSESTree.FunctionLike | undefined {
  let p = node.parent;
  while (p) {
    if (isFunction(p)) return p;
    p = p.parent;
  }
  return undefined;
}
