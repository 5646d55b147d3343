/**
 * Key shapes for key-value locks. A key expression becomes a pattern: static text stays, run-time parts become
 * `*` (`` `lock:${jobId}` `` and `"lock:" + id` both give `lock:*`). A key that is one opaque expression (a
 * parameter, `this.getKey(doc)`) is kept by its source text, so the acquire and the release of the same helper
 * still pair. Shapes match when one glob matches the other, or when both name the same variable.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KeyShape, Node } from "../model/accesses.js";
import type { TSESTree } from "@typescript-eslint/utils";
import { destructuredFrom, evaluate, findVariable, getConstInit, iterationSource, unwrap } from "./values.js";
import { enclosingFunction } from "./units.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

const MAX_DEPTH = 4;

function parts(sourceCode: SourceCode, node: Node, depth: number): string | undefined {
  const n = unwrap(node);
  const value = evaluate(sourceCode, n);
  // An enum-looking member of unknown origin (`KEYS.PROCESSING.LOCK`) says nothing about the key's text.
  if (value && !value.symbolic && (typeof value.value === "string" || typeof value.value === "number")) {
    return escapeGlob(String(value.value));
  }
  if (depth > MAX_DEPTH) return "*";
  if (n.type === "TemplateLiteral") {
    let out = "";
    n.quasis.forEach((q, i) => {
      out += escapeGlob(q.value.cooked ?? "");
      const expr = n.expressions[i];
      if (expr) out += parts(sourceCode, expr, depth + 1) ?? "*";
    });
    return out;
  }
  if (n.type === "BinaryExpression" && n.operator === "+") {
    return (parts(sourceCode, n.left, depth + 1) ?? "*") + (parts(sourceCode, n.right, depth + 1) ?? "*");
  }
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    if (init && init.type !== "TSEnumDeclaration") return parts(sourceCode, init, depth + 1);
  }
  if (
    n.type === "CallExpression" &&
    n.callee.type === "MemberExpression" &&
    !n.callee.computed &&
    n.callee.property.type === "Identifier" &&
    n.callee.property.name === "join"
  ) {
    return undefined; // [a, b].join(":") and friends: dynamic
  }
  return undefined;
}

function escapeGlob(text: string): string {
  return text.replace(/\*/g, "\\*");
}

/**
 * Where a key held in a local variable was declared, within the function that uses it: two names alike in one
 * function (`for (const key of wanted)` then `for (const key of taken)`) are two variables, not one key.
 */
function localBinding(
  sourceCode: SourceCode,
  n: Node,
): { variable: number; unit: number; collected?: true } | undefined {
  if (n.type !== "Identifier") return undefined;
  const def = findVariable(sourceCode, n)?.defs[0];
  const unit = enclosingFunction(n);
  if (!def || def.type !== "Variable" || !unit) return undefined;
  // A member of a list the function fills with one key variable (`held.push(key)` after taking `key`): that key.
  const pushed = collectedFrom(sourceCode, n);
  if (pushed) {
    const from = localBinding(sourceCode, pushed);
    if (from) return { ...from, collected: true };
  }
  return { variable: def.name.range[0], unit: unit.range[0] };
}

/**
 * The one variable a local list is filled with, for a name that iterates that list (`for (const key of held)` where
 * the only writes of `held` are `held.push(key)`). Undefined where the list is filled any other way.
 */
function collectedFrom(sourceCode: SourceCode, n: TSESTree.Identifier): TSESTree.Identifier | undefined {
  const list = iterationSource(sourceCode, n);
  const variable = list && findVariable(sourceCode, list);
  if (!variable || variable.defs.length !== 1) return undefined;
  const init = getConstInit(sourceCode, list);
  if (
    !init ||
    unwrap(init).type !== "ArrayExpression" ||
    (unwrap(init) as TSESTree.ArrayExpression).elements.length > 0
  )
    return undefined;
  let pushed: TSESTree.Identifier | undefined;
  for (const ref of variable.references) {
    const use = ref.identifier.parent;
    if (ref.init || use === list.parent) continue;
    const call = use?.parent;
    if (
      use?.type === "MemberExpression" &&
      use.object === ref.identifier &&
      !use.computed &&
      use.property.type === "Identifier" &&
      use.property.name === "push" &&
      call?.type === "CallExpression" &&
      call.callee === use &&
      call.arguments.length === 1 &&
      call.arguments[0]!.type === "Identifier" &&
      (!pushed || pushed.name === call.arguments[0]!.name)
    ) {
      pushed = call.arguments[0] as TSESTree.Identifier;
      continue;
    }
    if (
      use?.type === "ForOfStatement" ||
      (use?.type === "MemberExpression" && use.object === ref.identifier && !isWrite(use))
    )
      continue;
    return undefined;
  }
  return pushed;
}

/** `list.length`, `list.map(…)`, `list[0]`: a use that does not change the list (not `push`, `splice`, `list[i] = x`). */
function isWrite(member: TSESTree.MemberExpression): boolean {
  const name = !member.computed && member.property.type === "Identifier" ? member.property.name : undefined;
  if (name && /^(push|unshift|splice|pop|shift|fill|copyWithin|reverse|sort)$/.test(name)) return true;
  const p = member.parent;
  return p?.type === "AssignmentExpression" && p.left === member;
}

export function keyShape(sourceCode: SourceCode, node: Node): KeyShape {
  const n = unwrap(node);
  const name = n.type === "Identifier" ? n.name : undefined;
  const local = localBinding(sourceCode, n);
  const text = parts(sourceCode, n, 0);
  if (text !== undefined && text !== "*" && /[^*]/.test(text.replace(/\\\*/g, ""))) {
    return { text, exact: !/(?<!\\)\*/.test(text), ...(name ? { name } : {}), ...(local ? { local } : {}) };
  }
  // Opaque: keep the expression's text (whitespace folded) so the same helper call pairs with itself. A name
  // destructured from an object is that object's property (`const { key: pubKey } = req.body` is `req.body.key`), so
  // two handlers that take the key from the same place name the same key whatever they call it.
  const from = n.type === "Identifier" ? destructuredFrom(sourceCode, n) : undefined;
  const expression = from ? `${sourceCode.getText(unwrap(from.object))}.${from.property}` : sourceCode.getText(n);
  return {
    text: `{${expression.replace(/\s+/g, "")}}`,
    exact: false,
    opaque: true,
    ...(name ? { name } : {}),
    ...(local ? { local } : {}),
  };
}

function globToRegExp(glob: string): RegExp {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "\\" && glob[i + 1] === "*") {
      re += "\\*";
      i++;
    } else if (c === "*") re += ".*";
    else re += c.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`, "s");
}

/** A pattern with enough literal text to say something (`lock:*`), unlike `*:*`. */
function specific(shape: KeyShape): boolean {
  return shape.text.replace(/\\\*|[*:._\-/|{}]/g, "").length >= 3;
}

/** Two key shapes can name the same key. */
export function sameKey(a: KeyShape, b: KeyShape): boolean {
  if (a.local && b.local && a.local.unit === b.local.unit && a.local.variable !== b.local.variable) return false;
  if (a.name !== undefined && a.name === b.name) return true;
  if (a.opaque || b.opaque) return a.text === b.text;
  if (a.text === b.text) return true;
  if (!specific(a) || !specific(b)) return false;
  return (
    globToRegExp(a.text).test(b.text.replace(/\\\*/g, "*")) || globToRegExp(b.text).test(a.text.replace(/\\\*/g, "*"))
  );
}

/** How a key reads in a message: `"lock:*"`, or the expression for an opaque one (`` `this.key(id)` ``). */
export function describeKey(key: KeyShape): string {
  return key.opaque ? `\`${key.text.slice(1, -1)}\`` : JSON.stringify(key.text.replace(/\\\*/g, "*"));
}
