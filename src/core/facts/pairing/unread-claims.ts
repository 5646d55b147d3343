/**
 * A conditional claim whose outcome nothing reads (Q3). The write moves a row to an in-progress value only where no
 * other caller has (`update … set status = 'running' where id = $1 and status = 'pending'`), which is the atomic half
 * of a claim; the other half is to go on only when it changed a row. Where the code keeps no result of it
 * (`await db.jobs.updateMany(…);` then the work), keeps one it never reads, or reads only PostgREST's `error` (which
 * says nothing of a filter that matched no row), the caller whose write matched nothing goes on as the holder beside
 * the one that claimed the row. A write that throws when it changes nothing (Prisma's `update`, a DynamoDB
 * conditional put) refuses by its rejection; a claim under a row lock, or with nothing run after it, is not asked.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import { toBranches } from "../../model/conditions.js";
import { normalizeModel } from "../../model/names.js";
import type { Claim } from "../../model/claims.js";
import type { UnreadClaim } from "../../model/lock-facts.js";
import { enclosingFunction, isFunction } from "../../reading/units.js";
import { exits } from "../../reading/ast.js";
import { findVariable, keyName } from "../../reading/values.js";
import { walk } from "../../reading/walk.js";
import { Module } from "./module.js";

export function findUnreadClaims(mod: Module, claims: readonly Claim[]): UnreadClaim[] {
  const out: UnreadClaim[] = [];
  for (const claim of claims) {
    if (claim.kind !== "status" || claim.check) continue;
    const write = claim.write;
    if (write.throwsWhenNothing || write.underLock) continue;
    // An insert refuses by failing on the key it conflicts on, unless told to do nothing then (ON CONFLICT DO NOTHING).
    if (write.effect === "insert" && write.onConflict !== "ignore") continue;
    const at = write.runAt ?? write.node;
    const then = thenCallback(at);
    const how = then
      ? unreadBy(mod, write.errorSilentWhenNothing === true, then.params[0])
      : unread(mod, write.errorSilentWhenNothing === true, at);
    if (!how || readsBackByToken(mod, claim)) continue;
    const work = then ? workInCallback(mod, then) : workAfter(mod, at);
    if (!work) continue;
    // Rows picked by a list of keys (`id in ids`), not a list of states the claim may take them from.
    const batch = mod.branchesOf(write).some((b) => mod.keyListFields(b).length > 0);
    out.push({ claim, ...how, work, batch });
  }
  return out;
}

/**
 * A read after the claim, in its function, of rows pinned by a column the claim stamps with a value of the caller's
 * (`lockedBy: workerId` written, then `findMany({ where: { …, lockedBy: workerId } })`): the caller goes on with the
 * rows it won, which is reading the outcome.
 */
function readsBackByToken(mod: Module, claim: Claim): boolean {
  const write = claim.write;
  const fn = enclosingFunction(write.node);
  const stamped = write.assignments.filter((a) => a.value.kind === "other");
  if (!fn || stamped.length === 0) return false;
  return mod.reads.some(
    (r) =>
      r.node.range[0] > write.node.range[1] &&
      enclosingFunction(r.node) === fn &&
      normalizeModel(r.model) === normalizeModel(write.model) &&
      toBranches(r.filter).some((b) => b.some((atom) => mod.pinsWritten(atom, stamped))),
  );
}

type Unread = Pick<UnreadClaim, "how" | "binding">;

/**
 * `write.then((result) => …)`: the callback that runs once the write settles, handed its outcome. The `.then` form
 * of `await`: what the callback does with its parameter is what the awaiting code does with the result.
 */
function thenCallback(at: Node): TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression | undefined {
  const member = at.parent;
  if (member?.type !== "MemberExpression" || member.object !== at || member.computed) return undefined;
  if (member.property.type !== "Identifier" || member.property.name !== "then") return undefined;
  const call = member.parent;
  if (call?.type !== "CallExpression" || call.callee !== member) return undefined;
  const cb = call.arguments[0];
  return cb?.type === "ArrowFunctionExpression" || cb?.type === "FunctionExpression" ? cb : undefined;
}

/** How the write's outcome goes unread: not kept, kept and never read, or read only for PostgREST's `error`. */
function unread(mod: Module, errorSilent: boolean, at: Node): Unread | undefined {
  let top: Node = at;
  while (
    top.parent &&
    (top.parent.type === "AwaitExpression" ||
      top.parent.type === "TSAsExpression" ||
      top.parent.type === "TSNonNullExpression" ||
      top.parent.type === "ChainExpression")
  )
    top = top.parent;
  // Not awaited where it stands, the promise goes elsewhere (returned, gathered): whoever gets it may read it.
  if (top === at) return undefined;
  const holder = top.parent;
  if (holder?.type === "ExpressionStatement") return { how: "dropped" };
  if (holder?.type !== "VariableDeclarator" || holder.init !== top) return undefined;
  return unreadBy(mod, errorSilent, holder.id);
}

/**
 * How a binding of the outcome (a declarator's pattern, or a `.then` callback's parameter; absent: not kept) leaves
 * it unread.
 */
function unreadBy(mod: Module, errorSilent: boolean, binding: Node | undefined): Unread | undefined {
  if (!binding) return { how: "dropped" };
  if (binding.type === "Identifier") {
    const variable = findVariable(mod.sourceCode, binding);
    const reads = variable?.references.filter((r) => r.identifier !== binding && r.isRead()) ?? [];
    return variable && reads.length === 0 ? { how: "unused", binding: binding.name } : undefined;
  }
  if (binding.type !== "ObjectPattern" || !errorSilent) return undefined;
  // `const { error } = await supabase.from(t).update(v).eq(…).neq(…)` (`StateWrite.errorSilentWhenNothing`).
  const names = binding.properties.map((p) => (p.type === "Property" ? keyName(p.key, p.computed) : undefined));
  if (!names.every((n) => n === "error")) return undefined;
  return { how: "error-only" };
}

/**
 * The first statement after the write's own, in its block, that runs more code (a call) and is not a test that leaves:
 * the work the claim guards.
 */
function workAfter(mod: Module, at: Node): Node | undefined {
  let statement: Node = at;
  while (statement.parent && statement.parent.type !== "BlockStatement" && statement.parent.type !== "Program") {
    if (isFunction(statement.parent)) return undefined;
    statement = statement.parent;
  }
  const block = statement.parent as TSESTree.BlockStatement | TSESTree.Program | undefined;
  if (!block) return undefined;
  const i = (block.body as readonly Node[]).indexOf(statement);
  const declared = statement.type === "VariableDeclaration" ? statement.declarations.map((d) => d.id) : [];
  return firstWork(mod, (block.body as readonly Node[]).slice(i + 1), declared);
}

/** The work a `.then` callback on the write runs: its first statement that calls (or its expression body). */
function workInCallback(
  mod: Module,
  cb: TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression,
): Node | undefined {
  return firstWork(mod, cb.body.type === "BlockStatement" ? cb.body.body : [cb.body], cb.params);
}

/**
 * The first of the statements that runs more code (a call) and is not a test that leaves or a test of the result
 * (the names `declared` binds): the work the claim guards.
 */
function firstWork(mod: Module, statements: readonly Node[], declared: readonly Node[]): Node | undefined {
  for (const next of statements) {
    // A test that leaves (`if (error) return …`) turns some callers away; the work is what runs past it.
    if (next.type === "IfStatement" && !next.alternate && exits(next.consequent)) continue;
    // A test of what the write gave back (`if (error) console.error(…)`) handles its result; it is no work.
    if (next.type === "IfStatement" && testsResult(mod, next.test, declared)) continue;
    let calls = false;
    walk(next, (n) => {
      if (calls || (n !== next && isFunction(n))) return false;
      if (n.type === "CallExpression" || n.type === "NewExpression") calls = true;
      return !calls;
    });
    if (calls) return next;
  }
  return undefined;
}

/** The test reads a variable that binds the write's result (`const { error } = await …`, `.then(({ error }) => …)`). */
function testsResult(mod: Module, test: Node, bindings: readonly Node[]): boolean {
  if (bindings.length === 0) return false;
  const declared = new Set<unknown>();
  for (const id of bindings)
    walk(id, (n) => {
      if (n.type === "Identifier") {
        const v = findVariable(mod.sourceCode, n);
        if (v) declared.add(v);
      }
    });
  let found = false;
  walk(test, (n) => {
    if (found) return false;
    if (n.type === "Identifier") {
      const v = findVariable(mod.sourceCode, n);
      if (v && declared.has(v)) found = true;
    }
    return !found;
  });
  return found;
}
