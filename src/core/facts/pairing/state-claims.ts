/**
 * Claims of a lifecycle value or a processing flag: a write that sets an in-progress value where its filter excludes
 * it (or takes rows over by age), the same reached only where a JS check or an earlier read excluded it
 * (check-then-act), a compare-and-set take-over decided in JavaScript, and a row inserted already in progress.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, StateRead, StateWrite, StaticValue } from "../../model/accesses.js";
import { predicateValue } from "../../model/accesses.js";
import type { Check, Claim, Guard, LockKey, TimePredicate } from "../../model/claims.js";
import {
  agePredicates,
  allowedIn,
  everyBranchPicks,
  excludes,
  isOpaque,
  ownerPinned,
  toBranches,
  type Branch,
} from "../../model/conditions.js";
import { oldWhenTrue, pathCondition } from "../../reading/guards.js";
import { normalizeModel, sameValue, sameField } from "../../model/names.js";
import { normalizeName } from "../../model/settings.js";
import { findVariable, getConstInit, iterationSource, keyName, resultBinding, unwrap } from "../../reading/values.js";
import { calledFunction, parameterIndex, returnedValues } from "../../reading/calls.js";
import { enclosingFunction, functionName, isFunction, unitOf } from "../../reading/units.js";
import { walk } from "../../reading/walk.js";
import { contains, exits } from "../../reading/ast.js";
import { isLockAssignment } from "./vocabulary.js";
import { Module } from "./module.js";
import { findCheckedInsert, findInsertClaim } from "./lock-rows.js";
import { comparesValueRead } from "./leases.js";
import { isLockRow } from "../../model/claims.js";

export function allBranchesExclude(cond: Condition, field: string, value: StaticValue): boolean {
  const branches = toBranches(cond);
  return branches.length > 0 && branches.every((b) => excludes(b, field, value));
}

/** The module gates on rows holding `field = value`: it claims that value elsewhere, or reads rows filtered on it. */
function gatesOn(mod: Module, write: StateWrite, field: string, value: StaticValue, claims: readonly Claim[]): boolean {
  const model = normalizeModel(write.model);
  if (
    claims.some(
      (c) =>
        !isLockRow(c) &&
        normalizeModel(c.lock.model) === model &&
        sameField(c.lock.field, field) &&
        sameValue(c.lock.value, value),
    )
  ) {
    return true;
  }
  return mod.reads.some(
    (a) =>
      normalizeModel(a.model) === model &&
      toBranches(a.filter).some((b) =>
        b.some(
          (atom) =>
            !("opaque" in atom) &&
            sameField(atom.pred.field, field) &&
            (atom.pred.values ?? []).some((v) => sameValue(v, value)),
        ),
      ),
  );
}

/**
 * A row inserted already in progress (`insert({ …, status: "PROCESS" })`) is claimed from birth, when the module
 * gates on that state elsewhere (a claim or a read filtering it): if its creator dies, it stays claimed.
 */
export function findBornClaims(mod: Module, write: StateWrite, claims: readonly Claim[]): Claim[] {
  const born: Claim[] = [];
  for (const assignment of write.assignments) {
    if (
      assignment.value.kind !== "static" ||
      !isLockAssignment(assignment.field, assignment.value.value, mod.vocabulary)
    )
      continue;
    const value = assignment.value.value;
    if (!gatesOn(mod, write, assignment.field, value, claims)) continue;
    const lock: LockKey = {
      model: write.model,
      field: assignment.field,
      value,
      valueText: mod.sourceCode.getText(assignment.valueNode),
    };
    born.push({ kind: "status", write, lock, assignment, takeover: [] });
  }
  return born;
}

export function findStateClaims(mod: Module, write: StateWrite): Claim[] {
  if (write.effect === "insert")
    return write.onConflict === undefined ? findCheckedInsert(mod, write) : findInsertClaim(mod, write);
  if (write.effect === "delete") return [];
  // A write that empties the holder's column (`workerId: null`) gives the row up, whatever state it moves it to: no
  // claim names no holder (`RETRYING` with `workerId: null, heartbeatAt: null` is a hand-back; blind-17 A17a14).
  if (emptiesHolder(mod, write)) return [];
  const claims: Claim[] = [];
  const branches = mod.branchesOf(write);
  for (const assignment of write.assignments) {
    if (
      assignment.value.kind !== "static" ||
      !isLockAssignment(assignment.field, assignment.value.value, mod.vocabulary)
    )
      continue;
    const value = assignment.value.value;
    const field = assignment.field;
    const lock: LockKey = { model: write.model, field, value, valueText: mod.sourceCode.getText(assignment.valueNode) };
    let open = false;
    let excluded = false;
    const takeover: TimePredicate[] = [];
    for (const branch of branches) {
      // Rows with a field empty that the claim always fills (an orphan: `isProcessing: true, startedAt: null`) have
      // no holder: taking them is as safe as taking free ones.
      if (excludes(branch, field, value) || findsNoHeldRow(branch, write)) excluded = true;
      else {
        const age = agePredicates(branch, mod.vocabulary);
        if (age.length > 0) takeover.push(...age);
        else open = true;
      }
    }
    if (excluded && !open) {
      claims.push({ kind: "status", write, lock, assignment, takeover });
      continue;
    }
    if (!open || branches.some(isOpaque)) continue;
    // The write admits V. It is a check-then-act claim if the code on the way to it excluded V, unless the
    // write is a compare-and-set on something else (`status: job.status`, `version: job.version`).
    const check = checkBefore(mod, write, field, value);
    if (!check) {
      // A compare-and-set take-over decided in JavaScript: `if (!lock.isLocked || lock.expiresAt < now)` then a
      // write pinned to the value read (`clock: lock.clock`). Every way to it finds the lock free or expired, and
      // only one taker's compare-and-set wins.
      const takeover = casTakeover(mod, write, field, value, branches);
      if (takeover) claims.push({ kind: "status", write, lock, assignment, takeover });
      else {
        // The same take-over with no compare-and-set: `if (meta.syncInProgress) { if (age > STALE) { update by id;
        // return true } return false }`. It takes an expired hold, but two takers that read together both win
        // (blind-10 C8c09:74): a take-over, and a check made apart from the write.
        const taken = jsTakeover(mod, write, field, value, branches);
        if (taken)
          claims.push({ kind: "status", write, lock, assignment, takeover: taken.takeover, check: taken.check });
      }
      continue;
    }
    if (value.value === true && marksOnly(write, check)) continue;
    if (check.kind === "if" && firstTouch(write, check.node)) continue;
    if (writtenBefore(mod, write, field, value)) continue;
    // Checked under a row lock (a locking read of the row in the same unit): nobody can change the row in between.
    if (write.underLock || branches.every((b) => ownerPinned(b, field, mod.vocabulary)))
      claims.push({ kind: "status", write, lock, assignment, takeover: [] });
    else claims.push({ kind: "status", write, lock, assignment, takeover: [], check });
  }
  return claims;
}

/**
 * The holder writing again what it already wrote: an earlier write of the same function that always runs before
 * this one stored the value in the same row (`updateJobStatus(jobId, "processing", 10)`, then `…, 25)` as the work
 * moves on). The first write is the claim; the next ones are its holder's progress, not claims of their own.
 */
function writtenBefore(mod: Module, write: StateWrite, field: string, value: StaticValue): boolean {
  const unit = unitOf(write.node);
  if (!unit) return false;
  const rowOf = (w: StateWrite) => {
    const keys = new Map<string, string>();
    for (const b of mod.branchesOf(w))
      for (const a of b)
        if (!("opaque" in a) && a.op === "eq" && !a.pred.values)
          keys.set(normalizeName(a.pred.field), mod.valueText(predicateValue(a.pred)));
    return keys;
  };
  const row = rowOf(write);
  if (row.size === 0) return false;
  return mod.writes.some((w) => {
    if (w === write || w.node.range[1] > write.node.range[0] || unitOf(w.node) !== unit) return false;
    if (normalizeModel(w.model) !== normalizeModel(write.model) || (w.effect ?? "update") !== "update") return false;
    const stores = w.assignments.some(
      (a) => a.value.kind === "static" && sameField(a.field, field) && sameValue(a.value.value, value),
    );
    if (
      !stores ||
      !everyBranchPicks(mod.branchesOf(w), (p) => row.get(normalizeName(p.field)) === mod.valueText(predicateValue(p)))
    )
      return false;
    // It always runs first: its statement, reached through no branch of an expression, sits in a block that holds
    // this write (a write in an `if`'s branch or after `&&` runs on some ways only).
    let n: Node = w.node;
    while (n.parent && !/Statement$|Declaration$/.test(n.type)) {
      const p = n.parent as Node;
      if ((p.type === "ConditionalExpression" && p.test !== n) || (p.type === "LogicalExpression" && p.right === n))
        return false;
      n = p;
    }
    return n.parent?.type === "BlockStatement" && contains(n.parent as Node, write.node);
  });
}

/**
 * A first touch, not a claim: the check decides only whether this caller writes the value (`if (c.status ===
 * "SCHEDULED") await update({ status: "RUNNING" })`), and the awaited work after the `if` runs for every caller,
 * the one that found the row already there too. Nobody is turned away, so nothing is held: the value marks progress.
 */
function firstTouch(write: StateWrite, test: Node): boolean {
  const ifs = test.parent;
  if (ifs?.type !== "IfStatement" || ifs.test !== test) return false;
  const branch = [ifs.consequent, ifs.alternate].find((b): b is TSESTree.Statement => !!b && contains(b, write.node));
  const other = branch === ifs.consequent ? ifs.alternate : ifs.consequent;
  if (!branch || exits(branch) || (other && exits(other))) return false;
  const block = ifs.parent;
  if (block?.type !== "BlockStatement") return false;
  let awaited = false;
  for (const next of block.body.slice(block.body.indexOf(ifs) + 1)) {
    walk(next, (n) => {
      if (awaited || isFunction(n)) return false;
      if (n.type === "AwaitExpression" || (n.type === "ForOfStatement" && n.await)) awaited = true;
      return !awaited;
    });
    if (awaited) return true;
  }
  return false;
}

/** The write sets an owner or holder column (`lockedBy`, `workerId`) to null. */
function emptiesHolder(mod: Module, write: StateWrite): boolean {
  return write.assignments.some(
    (a) => a.value.kind === "static" && a.value.value.value === null && mod.vocabulary.isOwnerField(a.field),
  );
}

/** The age tests of a compare-and-set write reached only where the lock was free or had expired (see its caller). */
function casTakeover(
  mod: Module,
  write: StateWrite,
  field: string,
  value: StaticValue,
  branches: readonly Branch[],
): TimePredicate[] | undefined {
  const aging = mod.guards(write).filter((g) => g.judgesAge);
  if (
    aging.length === 0 ||
    branches.length === 0 ||
    !branches.every((b) => ownerPinned(b, field, mod.vocabulary) || comparesValueRead(b))
  )
    return undefined;
  const path = toBranches(mod.pathCondition(write));
  if (path.length === 0 || !path.every((b) => excludes(b, field, value) || agePredicates(b, mod.vocabulary).length > 0))
    return undefined;
  const out = aging.flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
  return out.length > 0 ? out : undefined;
}

/**
 * A take-over decided in JavaScript and written without a compare-and-set: the way to the write passes a test in
 * JavaScript that the hold has aged (its old side). Undefined otherwise.
 */
function jsTakeover(
  mod: Module,
  write: StateWrite,
  field: string,
  value: StaticValue,
  branches: readonly Branch[],
): { takeover: TimePredicate[]; check: Check } | undefined {
  // Flags, or a status written as the very value the age test judged stale (`if (s.state === "generating" && age <
  // limit) return; update({ state: "generating" })`: every way to the write finds it not V, or V grown old). A status
  // moved elsewhere on an age test is a recovery's. Not where the write cannot race: made under a row lock, or
  // pinned to the holder or to a value read (a compare-and-set on a version).
  if (write.underLock) return undefined;
  if (value.value !== true) {
    // The age test itself is JavaScript (`Date.now() - s.updatedAt < LIMIT`): a way to the write that does not find
    // V absent is one such a test let through, read from the guards below.
    const path = toBranches(mod.pathCondition(write));
    const excluding = (b: Branch) => excludes(b, field, value);
    const aged = (b: Branch) => agePredicates(b, mod.vocabulary).length > 0 || isOpaque(b);
    if (!path.some(excluding) || !path.every((b) => excluding(b) || aged(b))) return undefined;
  }
  if (branches.some((b) => ownerPinned(b, field, mod.vocabulary) || comparesValueRead(b))) return undefined;
  // The age tests on the way to the write (every way to it passes them: they enclose it or exit before it).
  const aging = mod.guards(write).filter((g) => g.judgesAge && oldWhenTrue(mod.sourceCode, g.test) !== g.negated);
  if (aging.length === 0) return undefined;
  const takeover = aging.flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
  if (takeover.length === 0) return undefined;
  const first = aging[0]!;
  return { takeover, check: { kind: "if", node: first.test, timeFields: takeover } };
}

/** A JS check or an earlier read on the way to `write` that excludes `field = value`. */
function checkBefore(mod: Module, write: StateWrite, field: string, value: StaticValue): Check | undefined {
  const guards = mod.guards(write);
  if (guards.length > 0 && allBranchesExclude(mod.pathCondition(write), field, value)) {
    const accepts = (o: Node) => mod.objectIsModel(o, write.model);
    // The guard that excludes the value (else the first), with its path condition, each computed once.
    let chosen: { guard: Guard; path: Condition } | undefined;
    for (const g of guards) {
      const path = pathCondition(mod.sourceCode, g, accepts);
      if (allBranchesExclude(path, field, value)) {
        chosen = { guard: g, path };
        break;
      }
    }
    const { guard, path } = chosen ?? { guard: guards[0]!, path: pathCondition(mod.sourceCode, guards[0]!, accepts) };
    // The one value the check lets through, where it pins one (`if (job.status !== "QUEUED") return`).
    const allowed = toBranches(path).map((b) => allowedIn(b, field));
    const only = allowed.map((a) => (a !== "any" && "only" in a && a.only.length === 1 ? a.only[0] : undefined));
    const requires =
      only.length > 0 && only.every((v) => v !== undefined && sameValue(v, only[0]!)) && !sameValue(only[0]!, value)
        ? only[0]
        : undefined;
    return { kind: "if", node: guard.test, timeFields: [], ...(requires ? { requires } : {}) };
  }
  const excluding = (r: StateRead) => {
    const rb = toBranches(r.filter);
    return rb.length > 0 && !rb.some(isOpaque) && rb.every((b) => excludes(b, field, value));
  };
  const read = mod.earlierReads(write.node, write.model).find(excluding);
  if (read) return { kind: "read", node: read.node, timeFields: [] };
  const callers = callerReads(mod, write);
  return callers && callers.every(excluding) ? { kind: "read", node: callers[0]!.node, timeFields: [] } : undefined;
}

/**
 * The reads the write's row was found by in the callers of its function: the write names its row by a parameter
 * (`WHERE id = $2` with `job.id`, `processJob(job)`), and every call of that function in the module passes a row of
 * a read of the same model made before the call (`processJob(res.rows[0])`, `for (const job of queued)
 * processJob(job)`). The read and the write are then two steps, as they are in one function. Undefined where any
 * call passes something else, or nothing shows where it came from.
 */
function callerReads(mod: Module, write: StateWrite): StateRead[] | undefined {
  const fn = enclosingFunction(write.node);
  if (!fn || functionName(fn) === undefined) return undefined;
  const index = (() => {
    for (const b of toBranches(write.filter))
      for (const atom of b) {
        if ("opaque" in atom || atom.op !== "eq" || atom.pred.values) continue;
        let n = unwrap(predicateValue(atom.pred));
        if (n.type === "Property") n = unwrap(n.value as Node);
        while (n.type === "MemberExpression") n = unwrap(n.object);
        if (n.type !== "Identifier") continue;
        let def = findVariable(mod.sourceCode, n)?.defs[0];
        // A name destructured from the parameter (`const { id: jobId } = job`) or a const holding one of its
        // fields (`const jobId = job.job_id`) names the parameter's row too.
        if (def?.type === "Variable" && def.node.init && enclosingFunction(def.node) === fn) {
          let init = unwrap(def.node.init as Node);
          const copied = def.node.id.type === "Identifier" && def.parent?.kind === "const";
          if (copied) while (init.type === "MemberExpression" && !init.computed) init = unwrap(init.object);
          if (init.type === "Identifier" && (def.node.id.type === "ObjectPattern" || copied)) {
            n = init;
            def = findVariable(mod.sourceCode, n)?.defs[0];
          }
        }
        if (def?.type !== "Parameter" || def.node !== fn) continue;
        const i = fn.params.findIndex((p) => p.type === "Identifier" && p.name === (n as TSESTree.Identifier).name);
        if (i >= 0) return i;
      }
    return undefined;
  })();
  if (index === undefined) return undefined;
  return rowsPassedTo(mod, fn, index, write.model, 0);
}

/**
 * The reads every call of `fn` in the module takes its argument `index` from, or undefined. An argument that is a
 * parameter of the calling function passes on what that function is handed (`processJob(job)` calling
 * `handleJob(job)`): its own callers are asked in turn, up to three calls deep, and every one must pass a row read.
 */
function rowsPassedTo(
  mod: Module,
  fn: TSESTree.FunctionLike,
  index: number,
  model: string,
  depth: number,
): StateRead[] | undefined {
  const calls = callsOf(mod).get(fn) ?? [];
  const reads: StateRead[] = [];
  for (const call of calls) {
    const arg = call.arguments[index];
    if (!arg || arg.type === "SpreadElement") return undefined;
    const read = rowRead(mod, arg as Node, model);
    if (read) {
      reads.push(read);
      continue;
    }
    const caller = enclosingFunction(call);
    const passed = caller && depth < 2 ? parameterIndex(mod.sourceCode, caller, arg as Node) : undefined;
    const further =
      passed === undefined || caller === fn ? undefined : rowsPassedTo(mod, caller!, passed, model, depth + 1);
    if (!further) return undefined;
    reads.push(...further);
  }
  return calls.length > 0 && reads.length > 0 ? reads : undefined;
}

/**
 * The read a call of a function of the module hands back (`fetchPendingJobs()` returning `data` of its
 * `.select().eq("status", "PENDING")`): every `return` of it gives the rows of one read of `model` made in it, with a
 * fallback for none at most (`data || []`, `data ?? []`, `return []`, `return null`). The call is then that read.
 */
function returnedRead(mod: Module, call: TSESTree.CallExpression, model: string): StateRead | undefined {
  const fn = calledFunction(mod.sourceCode, call);
  let found: StateRead | undefined;
  for (const returned of returnedValues(mod.sourceCode, call)) {
    let value = unwrap(returned);
    if (value.type === "LogicalExpression" && (value.operator === "||" || value.operator === "??")) {
      const fallback = unwrap(value.right);
      if (fallback.type !== "ArrayExpression" || fallback.elements.length > 0) return undefined;
      value = unwrap(value.left);
    }
    // No rows (`return []`, `return null`) hands back nothing read.
    if (
      (value.type === "ArrayExpression" && value.elements.length === 0) ||
      (value.type === "Literal" && value.value === null)
    )
      continue;
    if (value.type !== "Identifier") return undefined;
    const variable = findVariable(mod.sourceCode, value);
    const read = mod.reads.find((r) => {
      if (normalizeModel(r.model) !== normalizeModel(model) || enclosingFunction(r.node) !== fn) return false;
      const bound = resultBinding(r.runAt ?? r.node);
      return bound !== undefined && findVariable(mod.sourceCode, bound) === variable;
    });
    if (!read || (found && found !== read)) return undefined;
    found = read;
  }
  return found;
}

/** The module's calls by the function of the module each runs: one walk per module, made when first asked. */
const callsByModule = new WeakMap<Module, Map<TSESTree.FunctionLike, TSESTree.CallExpression[]>>();
function callsOf(mod: Module): Map<TSESTree.FunctionLike, TSESTree.CallExpression[]> {
  let calls = callsByModule.get(mod);
  if (!calls) {
    const found = new Map<TSESTree.FunctionLike, TSESTree.CallExpression[]>();
    walk(mod.sourceCode.ast as Node, (n) => {
      if (n.type !== "CallExpression") return;
      const fn = calledFunction(mod.sourceCode, n);
      if (fn) found.set(fn, [...(found.get(fn) ?? []), n]);
    });
    calls = found;
    callsByModule.set(mod, calls);
  }
  return calls;
}

/** The read of `model` whose result a value is a row of (`res.rows[0]`, a loop's variable, `const job = rows[0]`). */
function rowRead(mod: Module, value: Node, model: string): StateRead | undefined {
  let n = unwrap(value);
  for (let depth = 0; depth < 3; depth++) {
    const list = iterationSource(mod.sourceCode, n);
    let root: Node = list ?? n;
    while (root.type === "MemberExpression") root = unwrap(root.object);
    if (root.type !== "Identifier") return undefined;
    const variable = findVariable(mod.sourceCode, root);
    const read = mod.earlierReads(value, model).find((r) => {
      const bound = resultBinding(r.runAt ?? r.node);
      return bound !== undefined && findVariable(mod.sourceCode, bound) === variable;
    });
    if (read) return read;
    const init = getConstInit(mod.sourceCode, root);
    if (!init || init.type === "TSEnumDeclaration") return undefined;
    n = unwrap(init);
    // The rows a function of the module returns from its read (`const jobs = await fetchPendingJobs(10)`).
    const call = n.type === "AwaitExpression" ? unwrap(n.argument) : n;
    if (call.type === "CallExpression" && init.range[1] <= value.range[0]) return returnedRead(mod, call, model);
  }
  return undefined;
}

/**
 * The check guards only the mark itself: `if (!quiz.isLocked && now >= match.startTime) { quiz.isLocked = true; await
 * quiz.save(); }` with no `else`, and the code after runs the same whether the mark was made or was there already.
 * Nothing is held across work and nobody is turned away: a flag set once, not a lock (blind-10 C8c03). A check
 * that turns the second caller away (`if (doc.isSending) return;`) or guards work besides the write is a claim, and
 * so is a status moved to a value that says work is under way (a worker elsewhere acts on it).
 */
function marksOnly(write: StateWrite, check: Check): boolean {
  if (check.kind !== "if") return false;
  const test = check.node;
  const branch = test.parent;
  if (branch?.type !== "IfStatement" || branch.test !== test || branch.alternate) return false;
  if (!contains(branch.consequent, write.node)) return false;
  const body = branch.consequent.type === "BlockStatement" ? branch.consequent.body : [branch.consequent];
  return body.every((stmt) => {
    if (stmt.type !== "ExpressionStatement") return false;
    if (contains(stmt, write.node)) return true;
    const e = stmt.expression;
    // The document's fields set before the write that saves them (`quiz.isLocked = true`).
    return e.type === "AssignmentExpression" && e.left.type === "MemberExpression";
  });
}

/**
 * The branch admits only rows where a field is absent (`{ "lease.lease_until": { $exists: false } }`, `locked_at IS
 * NULL`) that the claim sets to a value on every row it takes, directly or inside an object it stores
 * (`lease: { owner, lease_until }`): no row a holder has matches it.
 */
export function findsNoHeldRow(branch: Branch, claim: StateWrite): boolean {
  const stamps = (field: string) =>
    claim.assignments.some((a) => {
      if (a.value.kind === "static" && a.value.value.value === null) return false;
      if (sameField(a.field, field)) return true;
      if (!field.startsWith(`${a.field}.`)) return false;
      let n: Node | undefined = unwrap(a.valueNode);
      for (const key of field.slice(a.field.length + 1).split(".")) {
        if (n?.type !== "ObjectExpression") return false;
        const p: TSESTree.ObjectLiteralElement | undefined = n.properties.find(
          (q) => q.type === "Property" && keyName(q.key, q.computed) === key,
        );
        n = p?.type === "Property" ? unwrap(p.value as Node) : undefined;
      }
      return n !== undefined && !(n.type === "Literal" && n.value === null);
    });
  return branch.some(
    (atom) =>
      !("opaque" in atom) &&
      atom.op === "eq" &&
      atom.pred.values?.length === 1 &&
      atom.pred.values[0]!.value === null &&
      stamps(atom.pred.field),
  );
}
