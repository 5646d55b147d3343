/**
 * Key shapes for key-value locks. A key expression becomes a pattern: static text stays, run-time parts become
 * `*` (`` `lock:${jobId}` `` and `"lock:" + id` both give `lock:*`). A key that is one opaque expression (a
 * parameter, `this.getKey(doc)`) is kept by its source text, so the acquire and the release of the same helper
 * still pair. Shapes match when one glob matches the other, or when both name the same variable.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KeyShape, Node } from "../model/accesses.js";
import { destructuredFrom, evaluate, getConstInit, unwrap } from "./values.js";

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

export function keyShape(sourceCode: SourceCode, node: Node): KeyShape {
  const n = unwrap(node);
  const name = n.type === "Identifier" ? n.name : undefined;
  const text = parts(sourceCode, n, 0);
  if (text !== undefined && text !== "*" && /[^*]/.test(text.replace(/\\\*/g, ""))) {
    return { text, exact: !/(?<!\\)\*/.test(text), ...(name ? { name } : {}) };
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
