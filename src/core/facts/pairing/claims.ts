/**
 * Which writes of a module claim a lock: each write is read by the finder of each kind of lock (a lifecycle value or
 * a flag, a lease, a lock row under a constant name, a lease checked in JavaScript). A write whose failure is
 * swallowed guards nothing, and a value the module works off in bulk is a queue state, not a lock.
 */
import type { Node, StateWrite } from "../../model/accesses.js";
import type { Claim } from "../../model/claims.js";
import { isOpaque, pins, toBranches, type Branch } from "../../model/conditions.js";
import { normalizeModel, sameValue, sameField } from "../../model/names.js";
import { enclosingFunction, isFunction } from "../../reading/units.js";
import { keyName, unwrap } from "../../reading/values.js";
import { Module } from "./module.js";
import { findStateClaims } from "./state-claims.js";
import { findKeyedLockRow } from "./lock-rows.js";
import { findCheckedLease, findLeaseClaim } from "./leases.js";
import { holdsRow } from "../../model/claims.js";
import { expressionName } from "../../reading/ast.js";

/**
 * `await prisma.job.update({ where: { id, status: PENDING }, data: { status: PROCESSING } }).catch(() => null);`:
 * a write whose failure is swallowed and whose result nobody reads cannot stop the work that follows, so it guards
 * nothing: bookkeeping of a status, not a claim (another mechanism, a queue's own lock, keeps the work single).
 */
function gatesNothing(node: Node): boolean {
  const member = node.parent;
  if (
    member?.type !== "MemberExpression" ||
    member.object !== node ||
    keyName(member.property, member.computed) !== "catch"
  )
    return false;
  const call = member.parent;
  if (call?.type !== "CallExpression" || call.callee !== member || call.arguments.length !== 1) return false;
  const handler = call.arguments[0]!;
  if (!isFunction(handler)) return false;
  // The handler only logs or gives a value back: anything else (a rethrow, `next(err)`, `process.exit(1)`) may
  // stop the work, and what it does is not known.
  const body = handler.body;
  const swallows =
    body.type !== "BlockStatement"
      ? isLogging(body) || ["Literal", "Identifier", "ObjectExpression", "ArrayExpression"].includes(unwrap(body).type)
      : body.body.every(
          (st) =>
            st.type === "EmptyStatement" ||
            (st.type === "ExpressionStatement" && isLogging(st.expression)) ||
            (st.type === "ReturnStatement" &&
              (!st.argument || ["Literal", "Identifier"].includes(unwrap(st.argument).type))),
        );
  if (!swallows) return false;
  let up: Node | undefined = call.parent;
  if (up?.type === "AwaitExpression") up = up.parent;
  return up?.type === "ExpressionStatement";
}

/** `console.error(err)`, `this.logger.warn(…)`, `Sentry.captureException(err)`: a call that only reports. */
function isLogging(node: Node): boolean {
  const n = unwrap(node);
  if (n.type !== "CallExpression") return false;
  const callee = unwrap(n.callee);
  const name = expressionName(callee);
  return (
    name !== undefined && /^(?:log|info|debug|warn|warning|error|trace|captureException|captureMessage)$/.test(name)
  );
}

export function findClaims(mod: Module, write: StateWrite): Claim[] {
  if (gatesNothing(write.node)) return [];
  const claims = findStateClaims(mod, write);
  // A flag taken over on an age test in JavaScript (`jsTakeover`) is the lease reading's where the write also stamps
  // the time it judges: that reading names the lease by its time, so it comes first.
  const takenInJs = (c: Claim) => c.kind === "status" && c.takeover.length > 0 && c.check !== undefined;
  if (claims.length > 0 && !claims.every(takenInJs)) return claims;
  const lease = findLeaseClaim(mod, write);
  if (lease.length > 0) return lease;
  const keyed = findKeyedLockRow(mod, write);
  if (keyed.length > 0) return keyed;
  const checked = findCheckedLease(mod, write);
  return checked.length > 0 ? checked : claims;
}

/**
 * The module reads every row in the claimed value, whoever put it there (nothing else in the filter), and
 * moves the rows it read off the value by id in the same function: `findMany({ where: { status: DELETING } })`
 * then `deleteMany({ where: { id: { in: ids } } })`. The value is a queue the next run works off, not a lock a
 * holder keeps: a run killed after the flip leaves its rows to the next run. Not a claim (no Q1 to ask).
 */
export function workedOffInBulk(mod: Module, claim: Claim): boolean {
  if (holdsRow(claim) || claim.lock.value.value === true) return false;
  const { field, value } = claim.lock;
  const model = normalizeModel(claim.write.model);
  return mod.reads.some((r) => {
    if (normalizeModel(r.model) !== model) return false;
    const branches = toBranches(r.filter);
    if (branches.length === 0 || branches.some(isOpaque)) return false;
    // Every row in the value: the branch tests nothing else (but rows this run set aside, `id: { notIn: failed }`).
    const onlyTheValue = (b: Branch) =>
      b.every(
        (atom) =>
          !("opaque" in atom) &&
          (sameField(atom.pred.field, field) ||
            (/^_?id$/i.test(atom.pred.field) && atom.op !== "eq" && atom.op !== "in")),
      );
    if (!branches.every((b) => pins(b, field, value) && onlyTheValue(b))) return false;
    const fn = enclosingFunction(r.node);
    return (
      fn !== undefined &&
      mod.writes.some(
        (w) =>
          w !== claim.write &&
          enclosingFunction(w.node) === fn &&
          w.node.range[0] > r.node.range[1] &&
          normalizeModel(w.model) === model &&
          w.effect !== "insert" &&
          (w.effect === "delete" ||
            w.assignments.some(
              (a) => sameField(a.field, field) && a.value.kind === "static" && !sameValue(a.value.value, value),
            )) &&
          mod.branchesOf(w).length > 0 &&
          mod
            .branchesOf(w)
            .every((b) =>
              b.some(
                (atom) =>
                  !("opaque" in atom) && (atom.op === "in" || atom.op === "eq") && /^_?id$/i.test(atom.pred.field),
              ),
            ),
      )
    );
  });
}
