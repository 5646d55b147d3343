/** Key-value locks taken by a write that cannot be refused (`KvFacts.unrefusable`). */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvOp, Node } from "../../model/accesses.js";
import type { UnrefusableLock } from "../../model/kv-locks.js";
import { namesALock } from "../../model/settings.js";
import { calleeName, exits } from "../../reading/ast.js";
import { isFunction } from "../../reading/units.js";
import { findVariable, unwrap } from "../../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** `!x`, `x === null`, `x == null`, `x === false`, `x !== "OK"`: a test that the write was refused. */
function testsRefusal(test: Node, value: (n: Node) => boolean): boolean {
  const t = unwrap(test);
  if (t.type === "UnaryExpression" && t.operator === "!") return value(t.argument);
  if (t.type === "BinaryExpression") {
    const other = value(t.left) ? unwrap(t.right) : value(t.right) ? unwrap(t.left) : undefined;
    if (!other || other.type !== "Literal") return false;
    if (t.operator === "!==" || t.operator === "!=") return other.value === "OK" || other.value === 1;
    if (t.operator === "===" || t.operator === "==")
      return other.value === null || other.value === false || other.value === 0;
  }
  return false;
}

/** The nearest `if` whose test holds `node` and whose consequent leaves. */
function refusalIf(node: Node, value: (n: Node) => boolean): TSESTree.IfStatement | undefined {
  for (let c: Node = node, p = node.parent; p && !isFunction(p); c = p, p = p.parent) {
    if (p.type === "IfStatement" && p.test === c)
      return testsRefusal(p.test, value) && exits(p.consequent) ? p : undefined;
  }
  return undefined;
}

/**
 * A key named as a lock (`oauth:lock`, `LOCK_KEY`) written by a command that never refuses (SET without NX, SETEX,
 * PSETEX), whose result the code then tests as if it could be refused (`const lock = await redis.setex(LOCK_KEY, 5,
 * "1"); if (!lock) return …`), and which the module deletes again: a lock that lets every caller in (blind-15 B15a13).
 */
export function findUnrefusableLocks(sourceCode: SourceCode, ops: readonly KvOp[]): UnrefusableLock[] {
  const out: UnrefusableLock[] = [];
  for (const op of ops) {
    if (op.command !== "set" || op.nx || op.via) continue;
    if (!namesALock(op.key.text.replace(/[{}*]/g, "")) && !(op.key.name && namesALock(op.key.name))) continue;
    if (!ops.some((o) => o.command === "del" && o.client === op.client && o.key.text === op.key.text)) continue;
    const call = unwrap(op.node);
    const awaited = call.parent?.type === "AwaitExpression" ? call.parent : call;
    const isCall = (n: Node) => {
      const u = unwrap(n);
      return u === call || u === awaited;
    };
    let test = refusalIf(awaited, isCall);
    if (!test && awaited.parent?.type === "VariableDeclarator" && awaited.parent.id.type === "Identifier") {
      const variable = findVariable(sourceCode, awaited.parent.id);
      const isVar = (n: Node) => {
        const u = unwrap(n);
        return u.type === "Identifier" && findVariable(sourceCode, u) === variable;
      };
      for (const ref of variable?.references ?? []) {
        if (ref.isWrite()) continue;
        test = refusalIf(ref.identifier, isVar);
        if (test) break;
      }
    }
    if (test) out.push({ op, command: (calleeName(call as TSESTree.CallExpression) ?? "set").toUpperCase(), test });
  }
  return out;
}
