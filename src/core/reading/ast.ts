/**
 * Small questions about the syntax tree that several parts of the core and the recognizers ask: what a call is
 * called, what a receiver is named, whether a statement always leaves, and a walk that stops where told.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { keyName, unwrap } from "./values.js";

/** The name an expression is known by: `a` in `a`, `b` in `a.b` and `a["b"]`; undefined for anything else. */
export function expressionName(node: Node): string | undefined {
  if (node.type === "Identifier") return node.name;
  if (node.type === "MemberExpression") return keyName(node.property, node.computed);
  return undefined;
}

/** `f` in `f()`, `m` in `x.m()` and `new x.m()`. */
export function calleeName(call: TSESTree.CallExpression | TSESTree.NewExpression): string | undefined {
  return expressionName(unwrap(call.callee));
}

/** The method a call invokes on a receiver (`m` in `x.m()` and `x["m"]()`), with the member; undefined for a plain call. */
export function methodOf(
  call: TSESTree.CallExpression,
): { readonly member: TSESTree.MemberExpression; readonly name: string } | undefined {
  const c = unwrap(call.callee);
  if (c.type !== "MemberExpression") return undefined;
  const name = keyName(c.property, c.computed);
  return name === undefined ? undefined : { member: c, name };
}

/** `m` in `x.m()`; undefined for a plain call `f()` (`calleeName` names both). */
export function methodName(call: TSESTree.CallExpression): string | undefined {
  return methodOf(call)?.name;
}

/** A receiver's source text without `this.` and TS wrappers: `this.mutex` → `mutex`, `pool` → `pool`. */
export function receiverText(sourceCode: Readonly<TSESLint.SourceCode>, node: Node): string {
  const n = unwrap(node);
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression") {
    return keyName(n.property, n.computed) ?? sourceCode.getText(n);
  }
  return sourceCode.getText(n);
}

/** Whether `inner` lies within `outer` (by source range). */
export function contains(outer: Node | null | undefined, inner: Node): boolean {
  return !!outer && outer.range[0] <= inner.range[0] && inner.range[1] <= outer.range[1];
}

/** A statement that always leaves: `return`, `throw`, `continue`, `break`, a block ending in one, an `if` whose branches both do. */
export function exits(node: Node): boolean {
  if (["ReturnStatement", "ThrowStatement", "ContinueStatement", "BreakStatement"].includes(node.type)) return true;
  if (node.type === "BlockStatement") return node.body.length > 0 && exits(node.body[node.body.length - 1]!);
  if (node.type === "IfStatement") return node.alternate !== null && exits(node.consequent) && exits(node.alternate);
  return false;
}

const LOOP = /^(For|ForIn|ForOf|While|DoWhile)Statement$/;
const FUNCTION = /^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/;

/**
 * `statement` always leaves before anything after it that lies in `scope` runs: a `return` or `throw`, a `continue`
 * or `break` of a loop (or `switch`) around `scope` too (the next iteration is another item), a block ending in one,
 * an `if` whose branches both do.
 */
function leavesBefore(statement: Node, scope: Node): boolean {
  switch (statement.type) {
    case "ReturnStatement":
    case "ThrowStatement":
      return true;
    case "ContinueStatement":
    case "BreakStatement":
      for (let p: Node | undefined = statement.parent; p && !FUNCTION.test(p.type); p = p.parent) {
        if (LOOP.test(p.type) || (statement.type === "BreakStatement" && p.type === "SwitchStatement"))
          return contains(p, scope);
      }
      return false;
    case "BlockStatement":
      return statement.body.length > 0 && leavesBefore(statement.body[statement.body.length - 1]!, scope);
    case "IfStatement":
      return (
        statement.alternate !== null &&
        leavesBefore(statement.consequent, scope) &&
        leavesBefore(statement.alternate, scope)
      );
    default:
      return false;
  }
}

/**
 * Whether `later` can run after `first` in one run of their function (one iteration of a loop around both): not
 * when a statement after `first` always leaves first, nor when they sit in the two branches of one `if`.
 * Structural, from the syntax alone; callbacks count as their own functions.
 */
export function runsAfter(first: Node, later: Node): boolean {
  if (later.range[0] < first.range[1]) return false;
  let child: Node = first;
  for (let p = first.parent; p && !FUNCTION.test(child.type); child = p, p = p.parent) {
    const list =
      p.type === "BlockStatement" || p.type === "Program" ? p.body : p.type === "SwitchCase" ? p.consequent : undefined;
    const shared = contains(p, later);
    if (
      p.type === "IfStatement" &&
      shared &&
      contains(p.consequent, first) &&
      p.alternate &&
      contains(p.alternate, later)
    )
      return false;
    for (const s of list ?? []) {
      if (s.range[0] < child.range[1] || (shared && (s.range[0] >= later.range[0] || contains(s, later)))) continue;
      if (leavesBefore(s, later)) return false;
    }
    if (shared) return true;
  }
  return true;
}
