/**
 * How long a holder can live, when the module says so, and how old a hold must be before it is taken from its holder:
 * together they tell whether a lock can change hands while its holder still works (facts/bounded-holds.ts).
 *
 * A serverless route that exports its time limit (`export const maxDuration = 55`, Next.js route segment config; or
 * `export const config = { maxDuration: 55 }`, the pages router's) is stopped by its platform after that many seconds:
 * whatever it holds, it holds no longer. A take-over that waits longer than that never meets a live holder.
 */
import type { SourceCode } from "@typescript-eslint/utils/ts-eslint";
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { readsClockNow } from "./clock.js";
import { evaluateNumber, findProperty, getConstInit, unwrap } from "./values.js";
import { walk } from "./walk.js";

/** The module's exported time limit, in milliseconds, or undefined. */
export function holderLifetimeMs(sourceCode: SourceCode): number | undefined {
  for (const stmt of sourceCode.ast.body) {
    if (stmt.type !== "ExportNamedDeclaration" || stmt.declaration?.type !== "VariableDeclaration") continue;
    for (const d of stmt.declaration.declarations) {
      if (d.id.type !== "Identifier" || !d.init) continue;
      let limit: Node | undefined;
      if (d.id.name === "maxDuration") limit = d.init;
      else if (d.id.name === "config" && unwrap(d.init).type === "ObjectExpression")
        limit = findProperty(unwrap(d.init) as TSESTree.ObjectExpression, "maxDuration")?.value;
      const seconds = limit ? evaluateNumber(sourceCode, limit) : undefined;
      if (seconds !== undefined && seconds > 0) return seconds * 1000;
    }
  }
  return undefined;
}

/**
 * The age limit, in milliseconds, that a test in JavaScript compares a hold's age with: `age < 60000` where `age` is
 * `Date.now() - <time>` (directly or through a const), or `Date.now() - <time> > LIMIT_MS`. Undefined for any other
 * shape: a limit in other units, a cutoff computed elsewhere, or more than one limit.
 */
export function ageLimitMs(sourceCode: SourceCode, test: Node): number | undefined {
  const limits: number[] = [];
  const visit = (node: Node): void => {
    const n = unwrap(node);
    if (n.type === "LogicalExpression") {
      visit(n.left);
      visit(n.right);
      return;
    }
    if (n.type === "UnaryExpression" && n.operator === "!") {
      visit(n.argument);
      return;
    }
    if (n.type !== "BinaryExpression" || !["<", "<=", ">", ">="].includes(n.operator)) return;
    if (n.left.type === "PrivateIdentifier") return;
    for (const [age, limit] of [
      [n.left, n.right],
      [n.right, n.left],
    ] as const) {
      const ms = evaluateNumber(sourceCode, limit);
      if (ms !== undefined && isAgeInMs(sourceCode, age)) limits.push(ms);
    }
  };
  visit(test);
  return limits.length === 1 ? limits[0] : undefined;
}

/** `Date.now() - x`, or a const holding it: an age in milliseconds (no division, no other unit). */
function isAgeInMs(sourceCode: SourceCode, node: Node): boolean {
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    if (!init || init.type === "TSEnumDeclaration") return false;
    n = unwrap(init);
  }
  return n.type === "BinaryExpression" && n.operator === "-" && readsClockNow(sourceCode, n.left as Node);
}

/** `Date.now() - N` (or `new Date().getTime() - N`), through consts: N, the age of a cutoff in milliseconds. */
export function agoMs(sourceCode: SourceCode, node: Node, depth = 0): number | undefined {
  if (depth > 3) return undefined;
  let found: number | undefined;
  walk(node, (n) => {
    if (found !== undefined) return false;
    if (n.type === "BinaryExpression" && n.operator === "-") {
      if (readsClockNow(sourceCode, n.left as Node)) {
        found = evaluateNumber(sourceCode, n.right);
        return false;
      }
    }
    if (n.type === "Identifier") {
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") {
        const v = agoMs(sourceCode, init, depth + 1);
        if (v !== undefined) found = v;
      }
    }
    return true;
  });
  return found;
}
