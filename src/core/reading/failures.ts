/**
 * How code treats a write that fails: an insert whose duplicate-key error is caught is an insert under a unique
 * key, and the duplicate means "someone holds it" (a lock row taken like `ON CONFLICT DO NOTHING`). Each store
 * names its duplicate differently: PostgreSQL `23505` (`unique_violation`, a `…_pkey` constraint), MySQL
 * `ER_DUP_ENTRY`, SQLite `SQLITE_CONSTRAINT` / "UNIQUE constraint failed", Sequelize `UniqueConstraintError`,
 * Prisma `P2002`, MongoDB `11000` / `E11000`.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, StateAccess } from "../model/accesses.js";
import { hasLockWord } from "../model/settings.js";
import { normalizeModel } from "../model/names.js";
import { enclosingFunction } from "./units.js";
import { findVariable, keyName } from "./values.js";
import { walk } from "./walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The duplicate-key errors of the SQL databases and their clients. */
export const SQL_DUPLICATE =
  /\b23505\b|unique_violation|ER_DUP_ENTRY|ER_DUP_KEY|SQLITE_CONSTRAINT|UNIQUE constraint|UniqueConstraintError|duplicate key|Duplicate entry|_pkey\b/i;

/**
 * A duplicate-key error (`pattern`) caught around the write `node`: a `try` whose `catch` names it, a
 * `.catch(…)` or `.then(ok, …)` handler on its promise that does, or, one level up, every call of the function
 * declaration it is made in awaited inside such a `try` (`async function insert() { await locks.insertOne(…) }`
 * called as `try { await insert() } catch (e) { if (e.code === 11000) … }`).
 */
export function catchesDuplicate(sourceCode: SourceCode, node: Node, pattern: RegExp, depth = 0): boolean {
  const names = (n: Node) => pattern.test(sourceCode.getText(n));
  let child: Node = node;
  let parent: Node | undefined = node.parent;
  // `insert(…).catch((e) => …)`, `create(…).then(() => true).catch((e) => …)`, `.then(ok, (e) => …)`; a builder's
  // later links pass the error on (`insert(row).returning("id")`).
  while (parent?.type === "MemberExpression" && parent.object === child && parent.parent?.type === "CallExpression") {
    const link = keyName(parent.property, parent.computed);
    const handler =
      link === "catch" ? parent.parent.arguments[0] : link === "then" ? parent.parent.arguments[1] : undefined;
    if (handler && names(handler)) return true;
    child = parent.parent;
    parent = child.parent;
  }
  while (parent) {
    if (
      parent.type === "FunctionDeclaration" ||
      parent.type === "FunctionExpression" ||
      parent.type === "ArrowFunctionExpression"
    ) {
      return depth === 0 && parent.type === "FunctionDeclaration" && callersCatch(sourceCode, parent, pattern);
    }
    if (parent.type === "TryStatement" && child === parent.block && parent.handler && names(parent.handler))
      return true;
    child = parent;
    parent = parent.parent;
  }
  return false;
}

/** Every call of `fn` is awaited inside a `try` that catches the duplicate (one level). */
function callersCatch(sourceCode: SourceCode, fn: TSESTree.FunctionDeclaration, pattern: RegExp): boolean {
  if (!fn.id) return false;
  const variable = findVariable(sourceCode, fn.id);
  const calls = (variable?.references ?? [])
    .map((r) => r.identifier.parent)
    .filter(
      (p): p is TSESTree.CallExpression =>
        p?.type === "CallExpression" && p.callee.type === "Identifier" && p.callee.name === fn.id!.name,
    );
  if (calls.length === 0 || calls.length !== (variable?.references.length ?? 0)) return false;
  return calls.every((c) => c.parent?.type === "AwaitExpression" && catchesDuplicate(sourceCode, c, pattern, 1));
}

/**
 * Inserts into a table named like a lock whose failure ends the attempt (`try { await db.jobLock.create(…);
 * return true } catch { return false }`), in whichever store: each row is taken under a unique key, as if the code
 * caught the duplicate by name. Asked once of every recognizer's inserts (the inventory), so no store needs its own
 * copy. An insert made after a lookup of the same table in the same function is left as it is: the lookup is how
 * that code tells a held lock, and whether a unique key backs the create is the schema's to say
 * (`findCheckedInsert`, the audit).
 */
export function markLockInserts(sourceCode: SourceCode, accesses: StateAccess[]): void {
  for (let i = 0; i < accesses.length; i++) {
    const a = accesses[i]!;
    if (a.access !== "write" || a.effect !== "insert" || a.onConflict !== undefined || !hasLockWord(a.model)) continue;
    const fn = enclosingFunction(a.node);
    const model = normalizeModel(a.model);
    const lookedUp = accesses.some(
      (r) =>
        r.access === "read" &&
        r.node.range[0] < a.node.range[0] &&
        normalizeModel(r.model) === model &&
        enclosingFunction(r.node) === fn,
    );
    if (!lookedUp && failureEndsAttempt(sourceCode, a.node)) accesses[i] = { ...a, onConflict: "error" };
  }
}

/**
 * The code gives up when the write fails, whatever the error: a `try` around it whose `catch` returns, a
 * `.catch(() => false)` on its promise, or a wrapper that hands the error back (`const r = await attempt(() =>
 * insert(…)); if (isError(r)) return;`). On a lock table that is how a taken lock reads: the insert failed because
 * the row is there. Only asked of inserts into tables named like a lock.
 */
export function failureEndsAttempt(sourceCode: SourceCode, node: Node): boolean {
  let child: Node = node;
  let parent: Node | undefined = node.parent;
  while (parent?.type === "MemberExpression" && parent.object === child && parent.parent?.type === "CallExpression") {
    const link = keyName(parent.property, parent.computed);
    const handler = link === "catch" ? parent.parent.arguments[0] : undefined;
    if (handler && givesUp(handler as Node)) return true;
    child = parent.parent;
    parent = child.parent;
  }
  if (parent?.type === "AwaitExpression") {
    child = parent;
    parent = parent.parent;
  }
  // `() => insert(…)` or `() => { return insert(…); }` handed to a wrapper whose result is tested for an error.
  const arrow =
    parent?.type === "ArrowFunctionExpression" && parent.body === child
      ? parent
      : parent?.type === "ReturnStatement" &&
          parent.parent?.type === "BlockStatement" &&
          parent.parent.body.length === 1 &&
          parent.parent.parent?.type === "ArrowFunctionExpression"
        ? parent.parent.parent
        : undefined;
  if (arrow) return wrapperTestedForError(sourceCode, arrow);
  for (; parent; child = parent, parent = parent.parent) {
    if (
      parent.type === "FunctionDeclaration" ||
      parent.type === "FunctionExpression" ||
      parent.type === "ArrowFunctionExpression"
    )
      return false;
    if (parent.type === "TryStatement" && child === parent.block && parent.handler)
      return returnsIn(parent.handler.body);
  }
  return false;
}

/** A handler that gives a value back instead of rethrowing: `() => false`, `(e) => { log(e); return null; }`. */
function givesUp(handler: Node): boolean {
  if (handler.type !== "ArrowFunctionExpression" && handler.type !== "FunctionExpression") return false;
  if (handler.body.type !== "BlockStatement")
    return handler.body.type === "Literal" || (handler.body.type === "Identifier" && handler.body.name === "undefined");
  return returnsIn(handler.body);
}

/** The block ends in a `return` (not a `throw`). */
function returnsIn(block: TSESTree.BlockStatement): boolean {
  const last = block.body[block.body.length - 1];
  return last?.type === "ReturnStatement";
}

/** `const r = await wrap(() => …); if (isError(r)) return;` (or `r instanceof Error`): the wrapper returns the error. */
function wrapperTestedForError(sourceCode: SourceCode, arrow: TSESTree.ArrowFunctionExpression): boolean {
  const call: Node | undefined = arrow.parent;
  if (call?.type !== "CallExpression" || !call.arguments.includes(arrow)) return false;
  let top: Node = call;
  if (top.parent?.type === "AwaitExpression") top = top.parent;
  const decl = top.parent;
  if (decl?.type !== "VariableDeclarator" || decl.init !== top || decl.id.type !== "Identifier") return false;
  const variable = findVariable(sourceCode, decl.id);
  return (variable?.references ?? []).some((ref) => {
    const use = ref.identifier.parent;
    const test =
      use?.type === "CallExpression" &&
      /(?:^|\.)isError$/.test(calleeName(use.callee)) &&
      use.arguments[0] === ref.identifier
        ? use
        : use?.type === "BinaryExpression" && use.operator === "instanceof" && use.left === ref.identifier
          ? use
          : undefined;
    const statement = test?.parent;
    return (
      statement?.type === "IfStatement" &&
      statement.test === test &&
      (statement.consequent.type === "ReturnStatement" ||
        (statement.consequent.type === "BlockStatement" && returnsIn(statement.consequent)))
    );
  });
}

function calleeName(callee: Node): string {
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression")
    return `${calleeName(callee.object)}.${keyName(callee.property, callee.computed) ?? ""}`;
  return "";
}

/**
 * A write whose failure comes back as a value (`const { error } = await supabase.from("locks").insert(row)`, a
 * `Result`'s `error`), and code that leaves when it is set (`if (error) return false;`): `duplicate` when the test or
 * its branch names the duplicate-key error (`error.code === "23505"`), `any` when it leaves on any error, undefined
 * when the error is not read that way.
 */
export function errorResultEndsAttempt(sourceCode: SourceCode, node: Node): "duplicate" | "any" | undefined {
  let child: Node = node;
  let parent: Node | undefined = node.parent;
  if (parent?.type === "AwaitExpression") {
    child = parent;
    parent = parent.parent;
  }
  if (parent?.type !== "VariableDeclarator" || parent.init !== child) return undefined;
  const declaration = parent.parent;
  const block = declaration?.parent;
  if (declaration?.type !== "VariableDeclaration" || (block?.type !== "BlockStatement" && block?.type !== "Program"))
    return undefined;
  // `{ error }`, `{ error: insertError }`: the name the error is held in; `res`: read as `res.error`.
  let tested: (test: Node) => boolean;
  if (parent.id.type === "ObjectPattern") {
    const prop = parent.id.properties.find(
      (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === "error",
    );
    const name = prop?.value.type === "Identifier" ? prop.value.name : undefined;
    if (!name) return undefined;
    tested = (test) => mentions(test, (n) => n.type === "Identifier" && n.name === name);
  } else if (parent.id.type === "Identifier") {
    const name = parent.id.name;
    tested = (test) =>
      mentions(
        test,
        (n) =>
          n.type === "MemberExpression" &&
          n.object.type === "Identifier" &&
          n.object.name === name &&
          keyName(n.property, n.computed) === "error",
      );
  } else return undefined;
  const after = (block.body as Node[]).slice((block.body as Node[]).indexOf(declaration) + 1);
  for (const statement of after) {
    if (statement.type !== "IfStatement" || !tested(statement.test)) continue;
    if (!exitsNow(statement.consequent)) continue;
    const text = sourceCode.getText(statement.test) + sourceCode.getText(statement.consequent);
    return SQL_DUPLICATE.test(text) ? "duplicate" : "any";
  }
  return undefined;
}

/** The statement leaves its function or loop at once: a `return`, a `throw`, or a block ending in one. */
function exitsNow(statement: Node): boolean {
  if (statement.type === "ReturnStatement" || statement.type === "ThrowStatement") return true;
  if (statement.type !== "BlockStatement") return false;
  const last = statement.body[statement.body.length - 1];
  return last?.type === "ReturnStatement" || last?.type === "ThrowStatement";
}

/** Whether `node` or a node below it satisfies `test`. */
function mentions(node: Node, test: (n: Node) => boolean): boolean {
  let found = false;
  walk(node, (n) => {
    if (found || test(n)) found = true;
    return !found;
  });
  return found;
}
