/** Transaction-level advisory locks sent outside any transaction (`LockFacts.unheldXactLocks`). */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, Node, StateAccess } from "../../model/accesses.js";
import { sessionsShared } from "../../model/accesses.js";
import type { UnheldXactLock } from "../../model/held-locks.js";
import { receiverText } from "../../reading/ast.js";
import { findVariable, unwrap } from "../../reading/values.js";
import { insideTransactionCall, opensTransaction } from "../../reading/units.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The receiver text of a call's callee (`db` of `db.transaction(…)`), or undefined. */
function calleeReceiver(sourceCode: SourceCode, call: TSESTree.CallExpression): string | undefined {
  const callee = unwrap(call.callee);
  return callee.type === "MemberExpression" ? receiverText(sourceCode, callee.object) : undefined;
}

/** The statement's call: the node itself, or the call a tagged template or a statement text is handed to. */
function callOf(node: Node): TSESTree.CallExpression | undefined {
  const n = unwrap(node);
  if (n.type === "CallExpression") return n;
  return n.parent?.type === "CallExpression" ? n.parent : undefined;
}

/** The receiver the statement is sent on is a parameter of its function (`client.$executeRaw` in a helper handed
 * the caller's transaction client): the caller decides which connection, and whether a transaction is open. */
function handedIn(sourceCode: SourceCode, node: Node): boolean {
  const n = unwrap(node);
  const call = callOf(n);
  const callee = call ? unwrap(call.callee) : n.type === "TaggedTemplateExpression" ? unwrap(n.tag) : undefined;
  if (!callee || callee.type !== "MemberExpression") return false;
  let root = unwrap(callee.object);
  while (root.type === "MemberExpression") root = unwrap(root.object);
  if (root.type !== "Identifier") return false;
  return findVariable(sourceCode, root)?.defs[0]?.type === "Parameter";
}

/** Options that name the transaction the statement runs in (`sequelize.query(sql, { transaction })`, knex's). */
function givenTransaction(node: Node): boolean {
  const call = callOf(node);
  return (
    call?.arguments.some(
      (a) =>
        a.type === "ObjectExpression" &&
        a.properties.some(
          (p) =>
            p.type === "Property" &&
            !p.computed &&
            p.key.type === "Identifier" &&
            (p.key.name === "transaction" || p.key.name === "trx"),
        ),
    ) ?? false
  );
}

/** The statement is returned unsent to the caller (`return prisma.$queryRaw…`, run later in `$transaction([…])`). */
function handedOut(node: Node): boolean {
  let n: Node = node;
  while (n.parent && (n.parent.type === "CallExpression" || n.parent.type === "TSAsExpression") && n.parent !== n)
    n = n.parent;
  return n.parent?.type === "ReturnStatement" || n.parent?.type === "ArrowFunctionExpression";
}

/**
 * `pg_advisory_xact_lock` (or its `try` form) sent as a statement of its own, outside any transaction: that
 * statement is its own transaction, so the lock ends as soon as it returns and excludes nothing after it. Known
 * where the statement goes through a pool (each statement autocommits on whichever connection is free), or through a
 * handle the module opens transactions on (`db.transaction(…)` elsewhere: a database handle, not a transaction),
 * outside those transactions. Not where the statement itself opens one (`BEGIN; SELECT pg_advisory_xact_lock…`), nor
 * on a connection checked out or handed in, whose transaction the module may have begun: unknown stays quiet.
 */
export function unheldXactLocks(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  calls: readonly TSESTree.CallExpression[],
): UnheldXactLock[] {
  const opensTransactions = new Set(
    calls
      .filter((c) => opensTransaction(c))
      .map((c) => calleeReceiver(sourceCode, c))
      .filter((r): r is string => r !== undefined),
  );
  const out: UnheldXactLock[] = [];
  for (const a of accesses) {
    if (a.access !== "advisory") continue;
    const op: AdvisoryLockOp = a;
    if (op.fn !== "lock" || op.scope !== "transaction" || op.helper) continue;
    if (op.via === "transaction" || op.via === "connection" || insideTransactionCall(op.node)) continue;
    if (/\b(?:BEGIN|START\s+TRANSACTION)\b/i.test(sourceCode.getText(op.node))) continue;
    if (handedIn(sourceCode, op.node) || givenTransaction(op.node) || handedOut(op.node)) continue;
    if (sessionsShared(op.via) || (op.client !== "" && opensTransactions.has(op.client)))
      out.push({ node: op.node, client: op.client || "the pool", try: op.try });
  }
  return out;
}
