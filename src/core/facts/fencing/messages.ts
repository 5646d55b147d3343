/** Held effects and their locks in words, for `require-fencing`'s messages and suggestions. */
import type { TSESLint } from "@typescript-eslint/utils";
import type { Node, ObjectWrite } from "../../model/accesses.js";
import type { EffectLock, LockToken } from "../../model/held-locks.js";
import { formatValue } from "../../model/names.js";
import { describeKey, keyShape } from "../../reading/keys.js";
import { findVariable, getConstInit, unwrap } from "../../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The token expression's text when a write elsewhere can name it: the same binding in scope there, or `this.x`. */
export function tokenTextAt(sourceCode: SourceCode, token: LockToken | undefined, at: Node): string | undefined {
  const n = token?.node && unwrap(token.node);
  if (!n) return undefined;
  if (n.type === "Identifier") {
    let scope: TSESLint.Scope.Scope | null = sourceCode.getScope(at);
    while (scope) {
      const v = scope.set.get(n.name);
      if (v) return v === findVariable(sourceCode, n) ? n.name : undefined;
      scope = scope.upper;
    }
    return undefined;
  }
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression" && !n.computed)
    return sourceCode.getText(n);
  return undefined;
}

/** The lock in words: `the claim of export.status = RENDERING`, `the lock "lock:export:*"`, `the Redlock lock on "…"`. */
export function describeEffectLock(sourceCode: SourceCode, lock: EffectLock): { lock: string; acquireLine: string } {
  switch (lock.kind) {
    case "claim": {
      const { model, field, value } = lock.claim.lock;
      return {
        lock: `the claim of ${model}.${field} = ${formatValue(value)}`,
        acquireLine: String(lock.claim.write.node.loc.start.line),
      };
    }
    case "kv":
      return {
        lock: `the lock ${describeKey(lock.lock.acquire.key)}`,
        acquireLine: String(lock.lock.acquire.loc.start.line),
      };
    case "library": {
      const name = lock.op.library === "redlock" ? "Redlock" : "redis-semaphore";
      const key = lock.op.keyNode ? ` on ${describeKey(keyShape(sourceCode, lock.op.keyNode))}` : "";
      return { lock: `the ${name} lock${key}`, acquireLine: String(lock.op.node.loc.start.line) };
    }
  }
}

/** The token in words: `the claim's lockedBy`, ``the lock's token `token` ``, or `a fencing token` when there is none. */
export function describeToken(sourceCode: SourceCode, token: LockToken | undefined): string {
  if (!token) return "a fencing token";
  if (token.field) return `the claim's ${token.field}`;
  return `the lock's token \`${token.node ? sourceCode.getText(token.node) : token.text}\``;
}

/** An object write in words: the operation, the location as written (shortened), the condition its store offers. */
export function describeObjectWrite(
  sourceCode: SourceCode,
  write: ObjectWrite,
): { operation: string; location: string; condition: string } {
  // A key held in a const reads better as what it holds: `projects/${slug}/latest.mp4`, not `key`.
  let shown = write.location && unwrap(write.location);
  const init = shown?.type === "Identifier" ? getConstInit(sourceCode, shown) : undefined;
  if (init && init.type !== "TSEnumDeclaration") shown = unwrap(init);
  const text = shown ? sourceCode.getText(shown).replace(/\s+/g, " ") : "";
  const location = text.length > 60 ? `${text.slice(0, 59)}…` : text;
  return { operation: write.wording.operation, location, condition: write.wording.condition };
}
