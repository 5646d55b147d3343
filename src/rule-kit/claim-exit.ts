/**
 * atomic-claim's suggestion, whole (issue 18): a check-then-act claim made conditional must also tell its caller it
 * lost, or the second caller that passed the check does the work anyway (the write changed nothing, and the code
 * goes on). The way out is the one the module already wrote for "not claimable": the check's own `return` or
 * `throw`, taken again when the write changed no row. The write's result is read as its store says
 * (`StateWrite.changedNothing`).
 *
 * Offered only where every part is plain:
 * - the check is an `if` on the claimed field whose whole consequent is one `return` or `throw` (no `else`);
 * - the claim comes after it in the same function, as a statement of its own (`await …;`), its result unread, and
 *   outside any `try` there: a `catch` would swallow the `throw` and the code after it go on (marking the job
 *   finished while the winner works), and a `finally` would run the holder's cleanup for a lock it never held;
 * - the store says how its result reads "nothing changed" (Prisma's `update` throws instead: no exit is needed).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, TextEdit } from "../core/model/accesses.js";
import type { Claim } from "../core/model/claims.js";
import { freeName } from "../core/reading/edits.js";
import { contains } from "../core/reading/ast.js";
import { enclosingFunction } from "../core/reading/units.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

export interface ClaimExit {
  /** Edits that bind the write's result and leave when it changed nothing. */
  readonly edits: readonly TextEdit[];
  /** The way out, as the check writes it (`return "busy"`), for the suggestion's text. */
  readonly exit: string;
}

/** The one `return` or `throw` an `if` runs, alone or as its block's only statement. */
function soleExit(statement: TSESTree.Statement): TSESTree.ReturnStatement | TSESTree.ThrowStatement | undefined {
  const only =
    statement.type === "BlockStatement" ? (statement.body.length === 1 ? statement.body[0] : undefined) : statement;
  return only && (only.type === "ReturnStatement" || only.type === "ThrowStatement") ? only : undefined;
}

export function claimExit(sourceCode: SourceCode, claim: Claim): ClaimExit | undefined {
  const check = claim.check;
  const changedNothing = claim.write.changedNothing;
  if (check?.kind !== "if" || !changedNothing) return undefined;
  const test = check.node;
  const ifStatement = test.parent;
  if (ifStatement?.type !== "IfStatement" || ifStatement.test !== test || ifStatement.alternate) return undefined;
  // The test reads the claimed field (`job.status !== "PENDING"`), not some other guard on the way.
  if (!sourceCode.getText(test).includes(claim.lock.field)) return undefined;
  const exit = soleExit(ifStatement.consequent);
  if (!exit) return undefined;
  const write = claim.write.runAt ?? claim.write.node;
  const fn = enclosingFunction(write);
  if (
    !fn ||
    enclosingFunction(ifStatement) !== fn ||
    contains(ifStatement, write) ||
    ifStatement.range[1] > write.range[0]
  )
    return undefined;
  for (let n: Node | undefined = write.parent; n && n !== fn; n = n.parent)
    if (n.type === "TryStatement" && contains(n.block, write)) return undefined;
  // `await claim(…);`: the result is not read, so binding it changes nothing else.
  const awaited: Node | undefined = write.parent;
  const statement = awaited?.type === "AwaitExpression" ? awaited.parent : undefined;
  if (statement?.type !== "ExpressionStatement" || statement.expression !== awaited) return undefined;
  const name = freeName(sourceCode, "claimed");
  const indent = /^\s*/.exec(sourceCode.lines[statement.loc.start.line - 1] ?? "")![0];
  const exitText = sourceCode.getText(exit);
  return {
    edits: [
      { range: [statement.range[0], statement.range[0]], text: `const ${name} = ` },
      { range: [statement.range[1], statement.range[1]], text: `\n${indent}if (${changedNothing(name)}) ${exitText}` },
    ],
    exit: exitText.replace(/;$/, ""),
  };
}
