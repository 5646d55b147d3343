/**
 * MongoDB: what an active-record save writes, read from the statements right before `await doc.save()` (`doc.x = v`,
 * `doc.set(…)`, an `if` whose branches only change the document).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, AssignedValue, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { methodOf } from "../../core/reading/ast.js";
import { keyName, unwrap } from "../../core/reading/values.js";
import { assignedValue } from "../../core/reading/assignments.js";
import { objectOf, stringArg } from "./vocabulary.js";
import { parseDocument } from "./updates.js";
import { walk } from "../../core/reading/walk.js";

/** The statement list and index of the statement a call is (`await doc.save();`, `const saved = await doc.save();`). */
export function statementOf(
  call: TSESTree.CallExpression,
): { body: readonly TSESTree.Node[]; index: number } | undefined {
  let node: Node = call;
  let parent = call.parent;
  while (
    parent &&
    (parent.type === "AwaitExpression" ||
      parent.type === "VariableDeclarator" ||
      parent.type === "VariableDeclaration" ||
      parent.type === "ExpressionStatement" ||
      parent.type === "ReturnStatement")
  ) {
    if (parent.type === "VariableDeclarator" && parent.init !== node) return undefined;
    node = parent;
    parent = parent.parent;
    if (node.type === "ExpressionStatement" || node.type === "ReturnStatement" || node.type === "VariableDeclaration")
      break;
  }
  if (!parent) return undefined;
  const body: readonly TSESTree.Node[] | undefined =
    parent.type === "BlockStatement" || parent.type === "Program"
      ? parent.body
      : parent.type === "SwitchCase"
        ? parent.consequent
        : undefined;
  if (!body) return undefined;
  const index = body.indexOf(node);
  return index < 0 ? undefined : { body, index };
}

function isDoc(node: Node, name: string): boolean {
  const n = unwrap(node);
  return n.type === "Identifier" && n.name === name;
}

/** One statement that changes the document: `doc.x = v`, `doc.x += 1`, `doc.x++`, `doc.set("x", v)`, `doc.set({ … })`. */
export function docAssignments(ctx: RecognizerContext, stmt: TSESTree.Node, name: string): Assignment[] | undefined {
  if (stmt.type !== "ExpressionStatement") return undefined;
  const e = unwrap(stmt.expression);
  if (e.type === "AssignmentExpression" && e.left.type === "MemberExpression" && isDoc(e.left.object, name)) {
    const field = keyName(e.left.property, e.left.computed);
    if (field === undefined) return undefined;
    const value: AssignedValue = e.operator === "=" ? assignedValue(ctx.sourceCode, e.right) : { kind: "other" };
    return [{ field, value, node: e.left, valueNode: e.right }];
  }
  if (e.type === "UpdateExpression" && e.argument.type === "MemberExpression" && isDoc(e.argument.object, name)) {
    const field = keyName(e.argument.property, e.argument.computed);
    return field === undefined ? undefined : [{ field, value: { kind: "other" }, node: e.argument, valueNode: e }];
  }
  if (e.type === "CallExpression") {
    const m = methodOf(e);
    if (!m || m.name !== "set" || !isDoc(m.member.object, name)) return undefined;
    const [first, second] = e.arguments;
    if (!first || first.type === "SpreadElement") return undefined;
    const obj = objectOf(ctx, first);
    if (obj && !second) return parseDocument(ctx, obj);
    const field = stringArg(ctx, first);
    if (field === undefined || !second || second.type === "SpreadElement") return undefined;
    return [{ field, value: assignedValue(ctx.sourceCode, second), node: first, valueNode: second }];
  }
  return undefined;
}

/** Whether an identifier called `name` occurs in `node` (a property key or member name is no occurrence). */
export function namesIdentifier(node: Node, name: string): boolean {
  let found = false;
  walk(node, (n) => {
    if (found) return false;
    if (n.type === "MemberExpression" && !n.computed) {
      if (namesIdentifier(n.object, name)) found = true;
      return false;
    }
    if (n.type === "Property" && !n.computed && !n.shorthand) {
      if (namesIdentifier(n.value as Node, name)) found = true;
      return false;
    }
    if (n.type === "Identifier" && n.name === name) found = true;
    return undefined;
  });
  return found;
}

/**
 * `if (doc.attempts < max) doc.nextAt = later; else doc.nextAt = null;`: an `if` whose branches only change the
 * document, besides locals computed on the way (its test only reads). Each field it sets may or may not be written, so its value is not known.
 */
export function conditionalAssignments(
  ctx: RecognizerContext,
  stmt: TSESTree.Node,
  name: string,
): Assignment[] | undefined {
  if (stmt.type !== "IfStatement") return undefined;
  const out: Assignment[] = [];
  const branch = (b: TSESTree.Statement | null): boolean => {
    if (!b) return true;
    const list = b.type === "BlockStatement" ? b.body : [b];
    for (const st of list) {
      // A local computed on the way (`const backoff = 2 ** doc.attempts`) only reads.
      if (st.type === "VariableDeclaration") continue;
      const found = st.type === "IfStatement" ? conditionalAssignments(ctx, st, name) : docAssignments(ctx, st, name);
      if (!found) return false;
      out.push(...found);
    }
    return true;
  };
  if (!branch(stmt.consequent) || !branch(stmt.alternate)) return undefined;
  return out.map((a) => ({ ...a, value: { kind: "other" } }));
}
