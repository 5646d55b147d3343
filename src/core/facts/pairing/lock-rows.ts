/**
 * Claims of lock rows: a row inserted into a lock table under a unique key (or an upsert that overwrites a row only
 * once its lease has passed), a row of an ordinary table used as a lock under a constant name, and a lock row created
 * after a read found none, in a table whose schema declares no unique key to refuse a second one.
 */
import type { Node, Predicate, StateRead, StateWrite, StaticValue } from "../../model/accesses.js";
import { predicateValue } from "../../model/accesses.js";
import type { Claim, LockKey, TimePredicate } from "../../model/claims.js";
import {
  agePredicates,
  everyBranchPicks,
  excludes,
  identityFields,
  isOpaque,
  pins,
  toBranches,
  type Branch,
} from "../../model/conditions.js";
import { normalizeModel, sameField } from "../../model/names.js";
import { hasLockWord, namesALock, normalizeName } from "../../model/settings.js";
import { enclosingFunction, isFunction, unitOf } from "../../reading/units.js";
import { contains } from "../../reading/ast.js";
import { walk } from "../../reading/walk.js";
import { findVariable, getConstInit, resultBinding, unwrap, valuesFrom } from "../../reading/values.js";
import { checksBetween, Module } from "./module.js";
import { leaseFree } from "./leases.js";

/**
 * A lock row inserted into a lock table under a unique key. `ON CONFLICT DO NOTHING` or a caught duplicate
 * error is a claim; `ON CONFLICT DO UPDATE … WHERE expires_at < now()` is a claim that takes over expired rows.
 */
export function findInsertClaim(mod: Module, write: StateWrite): Claim[] {
  // Lock tables: `locks`, `job_lease`, `mutexes` (not `actor_block`); or, for an upsert, any table whose conflict
  // branch overwrites a row only once its lock's expiry has passed (`scheduled_tasks` where `lockExpiresAt < now`).
  if (write.onConflict === undefined) return [];
  const branches = write.onConflict === "update" ? mod.branchesOf(write) : [];
  const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
  // A branch that finds the row released by a column the write sets (`locked: false` where it writes
  // `locked: true`) takes only a free row: a compare-and-set beside the expiry's take-over (blind-8 CB04).
  const releasedOn = (b: Branch) =>
    write.assignments
      .filter((a) => a.value.kind === "static" && excludes(b, a.field, a.value.value))
      .map((a) => a.field);
  // The columns that find the row free name the lock (`lockExpiresAt < now`, `locked = false`).
  const freeing = branches.flatMap((b, i) => [...ages[i]!.map((t) => t.field), ...releasedOn(b)]);
  const lockColumns =
    ages.some((a) => a.length > 0) &&
    branches.every((b, i) => ages[i]!.length > 0 || releasedOn(b).length > 0) &&
    freeing.some((f) => hasLockWord(f));
  if (!hasLockWord(write.model) && !lockColumns && !undoneOnFailure(mod, write)) return [];
  const lock: LockKey = { model: write.model, field: "row", value: { value: "held" }, valueText: "" };
  const assignment = write.assignments[0] ?? {
    field: "",
    value: { kind: "other" as const },
    node: write.node,
    valueNode: write.node,
  };
  if (write.onConflict !== "update") return [{ kind: "inserted-row", write, lock, assignment, takeover: [] }];
  // An upsert that always overwrites is no lock; one that overwrites only free rows (expired, with no lease, or
  // the caller's own) is a lease.
  const columns = write.assignments.map((a) => a.field).filter((f) => mod.vocabulary.isTimeField(f));
  if (
    branches.length === 0 ||
    ages.every((a) => a.length === 0) ||
    !branches.every((b, i) => leaseFree(mod, b, ages[i]!, columns) || releasedOn(b).length > 0)
  )
    return [];
  return [{ kind: "inserted-row", write, lock, assignment, takeover: ages.flat() }];
}

/**
 * The acquiring function marks the row it inserted finished when its work succeeds and deletes it when the work fails,
 * both by a value it inserted it with (`create({ data: { key: idem.key, response: null } })`, then `update({ where: {
 * key: idem.key }, data: { response } })`, and `catch { deleteMany({ where: { key: idem.key } }) }`): the row is held
 * while the work runs, a lock row whatever its table is called (an idempotency key that doubles as "in progress",
 * blind-12 C12d11). A crash leaves it, as a lock table's.
 */
function undoneOnFailure(mod: Module, write: StateWrite): boolean {
  if (write.onConflict !== "error" && write.onConflict !== "ignore") return false;
  const fn = unitOf(write.node);
  if (!fn) return false;
  const inserted = new Map(write.assignments.map((a) => [normalizeName(a.field), mod.sourceCode.getText(a.valueNode)]));
  const sameRow = (w: StateWrite) =>
    normalizeModel(w.model) === normalizeModel(write.model) &&
    unitOf(w.node) === fn &&
    w.node.range[0] > write.node.range[1] &&
    everyBranchPicks(
      mod.branchesOf(w),
      (pred) => inserted.get(normalizeName(pred.field)) === mod.valueText(predicateValue(pred)),
    );
  const failureBlock = (w: StateWrite): Node | undefined => {
    for (let p = w.node.parent; p && p !== fn; p = p.parent) {
      if (p.type === "CatchClause") return p.body;
      if (p.type === "TryStatement" && p.finalizer && contains(p.finalizer, w.node)) return p.finalizer;
    }
    return undefined;
  };
  // Held while the work runs: marked finished when it succeeds (`update({ where: { key }, data: { response } })`).
  // A row never written again is a marker that the event was seen (a webhook's at-most-once guard), done from the
  // start: not held.
  const finished = mod.writes.some((w) => (w.effect ?? "update") === "update" && sameRow(w) && !failureBlock(w));
  if (!finished) return false;
  return mod.writes.some((w) => {
    if (w.effect !== "delete" || !sameRow(w)) return false;
    const onFailure = failureBlock(w);
    if (!onFailure) return false;
    // A delete the same block follows with an insert of the model replaces the row (delete, then insert again):
    // no undo.
    const block = onFailure;
    if (
      mod.writes.some(
        (o) =>
          o.effect === "insert" &&
          normalizeModel(o.model) === normalizeModel(write.model) &&
          contains(block, o.node) &&
          o.node.range[0] > w.node.range[1],
      )
    )
      return false;
    return true;
  });
}

/**
 * An upsert into a lock table that overwrites the row on its key whatever holds it: no condition on its conflict
 * branch (no expiry, no owner), no claim read from it, in a module that also deletes rows of that table (a release:
 * the table is used as a lock). It never fails, so every caller "takes" the lock (blind-8 CB08).
 */
export function overwritesLock(
  mod: Module,
  write: StateWrite,
  claimed: ReadonlySet<StateWrite>,
  heldBefore: (write: StateWrite) => boolean,
): boolean {
  if (write.effect !== "insert" || write.onConflict !== "update" || claimed.has(write)) return false;
  // A call of a status helper of the module is the helper's write: reported once, there.
  if (write.madeBy !== undefined) return false;
  // No condition beyond the row's key (PostgREST names the row by the values it writes to its conflict columns).
  const rowKey = (atom: Branch[number]) =>
    !("opaque" in atom) && atom.op === "eq" && write.assignments.some((a) => a.node === atom.pred.node);
  if (!hasLockWord(write.model) || !mod.branchesOf(write).every((b) => b.every(rowKey))) return false;
  // Values chosen on the row's state (`holder = IF(expires_at < NOW(), VALUES(holder), holder)`, a CASE): a
  // condition the filter does not show.
  if (
    write.assignments.some((a) => a.value.kind === "other" && a.value.choices !== undefined) ||
    /\bIF\s*\(|\bCASE\s+WHEN\b/i.test(mod.sourceCode.getText(write.node))
  )
    return false;
  // Written while another lock is held (an advisory lock taken before it): a record of the holder, not the lock.
  if (heldBefore(write)) return false;
  // A check before it in the same function (a read of the table) may be what turns callers away: unknown.
  if (
    mod.earlierReads(write.node, write.model).some((r) => enclosingFunction(r.node) === enclosingFunction(write.node))
  )
    return false;
  return mod.writes.some(
    (w) => w !== write && w.effect === "delete" && normalizeModel(w.model) === normalizeModel(write.model),
  );
}

/**
 * The lock name every branch of a filter picks its row by, with its column: a constant (`key = "auto_payout_lock"`),
 * or a template whose fixed text names a lock (`` key: `cron_lock:${jobName}` ``, directly or through a const),
 * then known by its source text (`text`).
 */
function lockName(
  mod: Module,
  branches: readonly Branch[],
): { field: string; value: StaticValue; text?: string } | undefined {
  if (branches.length === 0 || branches.some(isOpaque)) return undefined;
  for (const atom of branches[0]!) {
    if ("opaque" in atom || atom.op !== "eq") continue;
    if (atom.pred.values === undefined) {
      const text = templateName(mod, atom.pred);
      if (text !== undefined && branches.every((b) => picksByText(mod, b, atom.pred.field, text)))
        return { field: atom.pred.field, value: { value: text }, text };
      continue;
    }
    if (atom.pred.values.length !== 1) continue;
    const value = atom.pred.values[0]!;
    if (typeof value.value !== "string" || value.symbolic || !namesALock(value.value)) continue;
    if (branches.every((b) => pins(b, atom.pred.field, value))) return { field: atom.pred.field, value };
  }
  return undefined;
}

/** The source of a template the predicate compares with, when its fixed text before the first hole names a lock. */
function templateName(mod: Module, pred: Predicate): string | undefined {
  let node = unwrap(predicateValue(pred));
  if (node.type === "Property") node = unwrap(node.value as Node);
  if (node.type === "Identifier") {
    const init = getConstInit(mod.sourceCode, node);
    if (!init || init.type === "TSEnumDeclaration") return undefined;
    node = unwrap(init as Node);
  }
  if (node.type !== "TemplateLiteral" || node.expressions.length === 0) return undefined;
  const head = node.quasis[0]!.value.cooked ?? "";
  return namesALock(head) ? mod.sourceCode.getText(node) : undefined;
}

/**
 * The branch picks the keyed lock row by its name: `field` pinned to the constant `value`, or compared with the
 * template whose source is `text` when the name is made at run time.
 */
export function picksLockName(
  mod: Module,
  branch: Branch,
  name: { readonly field: string; readonly value: StaticValue; readonly text?: string | undefined },
): boolean {
  return name.text === undefined
    ? pins(branch, name.field, name.value)
    : picksByText(mod, branch, name.field, name.text);
}

/** The branch compares `field` with the template whose source is `text`. */
function picksByText(mod: Module, branch: Branch, field: string, text: string): boolean {
  return branch.some(
    (a) =>
      !("opaque" in a) &&
      a.op === "eq" &&
      a.pred.values === undefined &&
      sameField(a.pred.field, field) &&
      templateName(mod, a.pred) === text,
  );
}

/**
 * A row of an ordinary table used as a lock under a constant name: `findUnique({ where: { key: "payout_lock" } })`,
 * a JS check of what it holds, then `upsert` of that row. The read and the write are two steps (`check`), so two
 * callers can both take it. When the check judges the stored time (`t > ttlCutoff`), a stale row is taken over.
 */
export function findKeyedLockRow(mod: Module, write: StateWrite): Claim[] {
  if (write.effect === "delete" || write.assignments.length === 0) return [];
  // A write that empties every column it writes (`holderId: FieldValue.delete()`, `locked_until: null`) gives the
  // row up: a release, never a take.
  if (write.assignments.every((a) => a.value.kind === "static" && a.value.value.value === null)) return [];
  const name = lockName(mod, mod.branchesOf(write));
  if (!name) return [];
  const read = mod.earlierReads(write.node, write.model).find((r) => {
    const branches = toBranches(r.filter);
    return branches.length > 0 && branches.every((b) => !isOpaque(b) && picksLockName(mod, b, name));
  });
  if (!read) return [];
  const lock: LockKey = {
    model: write.model,
    field: name.field,
    value: name.value,
    valueText: JSON.stringify(name.value.value),
  };
  // The check between the read and the write: `if (t > ttlCutoff) return { ok: false }` inside `if (existing)`.
  const aging = [...mod.guards(write), ...checksBetween(mod, read.node, write.node)].filter((g) => g.judgesAge);
  const stamp = write.assignments[0]!;
  const takeover: TimePredicate[] =
    aging.length === 0
      ? []
      : aging.flatMap((g) =>
          g.timeFields.length > 0
            ? g.timeFields.map((f) => ({ field: f, node: g.test as Node }))
            : [{ field: stamp.field, node: g.test as Node }],
        );
  // Reached only where the row read holds the caller (`if (data.instanceId === MY_ID)`), and judged no age on the
  // way: the write renews the caller's own lock, not a free one (blind-10 F8d15).
  const renews = aging.length === 0 ? holderTest(mod, read, write) : undefined;
  return [
    {
      kind: "keyed-row",
      write,
      lock,
      assignment: stamp,
      takeover,
      // Under a locking read, or in a transaction that serializes what it read (Firestore's `runTransaction`), the
      // read and the write are one step: no check to race. Nor is there one where the write sets a column only while
      // it still holds what the read found (a compare-and-set: `where: { key, value: cur.value }`).
      ...(write.underLock || setsWhatItRead(mod, write, read)
        ? {}
        : { check: { kind: "read" as const, node: read.node, timeFields: [] } }),
      ...(name.text !== undefined ? { nameText: name.text } : {}),
      ...(renews && !write.underLock ? { heldByCaller: renews } : {}),
    },
  ];
}

/**
 * Every branch of the write's filter compares a column the write sets with the value `read` found in it
 * (`updateMany({ where: { key, value: cur.value }, data: { value: next } })`): a compare-and-set. Of callers that
 * read the same row, the first write changes the column and the others' filters match nothing.
 */
function setsWhatItRead(mod: Module, write: StateWrite, read: StateRead): boolean {
  const found = valuesFrom(mod.sourceCode, read.node);
  if (found.size === 0) return false;
  // The compared value names what the read found (`found.value`, `{ equals: found.value }`), or a const computed
  // from it (`const at = stampOf(found?.value)`): a value of this read, whatever the operator spelling around it.
  const namesRead = (n: Node, depth: number): boolean => {
    let hit = false;
    walk(n, (x) => {
      if (hit || isFunction(x)) return false;
      if (x.type !== "Identifier") return undefined;
      const variable = findVariable(mod.sourceCode, x);
      if (variable && found.has(variable)) hit = true;
      else if (depth === 0) {
        const init = getConstInit(mod.sourceCode, x);
        if (init && init.type !== "TSEnumDeclaration" && namesRead(init, depth + 1)) hit = true;
      }
      return !hit;
    });
    return hit;
  };
  const fromRead = (pred: Predicate) => {
    let v = unwrap(predicateValue(pred));
    if (v.type === "Property") v = unwrap(v.value as Node);
    return namesRead(v, 0);
  };
  const branches = mod.branchesOf(write);
  return (
    branches.length > 0 &&
    branches.every((b) =>
      b.some(
        (a) =>
          !("opaque" in a) &&
          a.op === "eq" &&
          a.pred.values === undefined &&
          write.assignments.some((w) => sameField(w.field, a.pred.field)) &&
          fromRead(a.pred),
      ),
    )
  );
}

/**
 * The test on the way to `write` that lets it by only when a value taken from what `read` found equals one that is
 * not (`currentLeaderId === MY_INSTANCE_ID`, `if (row.owner !== me) return`): the row is held by the caller. A
 * comparison with a literal is a test of the row's state, not of its holder.
 */
function holderTest(mod: Module, read: StateRead, write: StateWrite): Node | undefined {
  const held = valuesFrom(mod.sourceCode, read.node);
  if (held.size === 0) return undefined;
  const fromRead = (n: Node) => {
    let found = false;
    walk(n, (x) => {
      if (x.type !== "Identifier") return;
      const v = findVariable(mod.sourceCode, x);
      if (v && held.has(v)) found = true;
    });
    return found;
  };
  for (const g of mod.guards(write)) {
    const test = unwrap(g.test as Node);
    if (test.type !== "BinaryExpression") continue;
    const equal = test.operator === "===" || test.operator === "==";
    const unequal = test.operator === "!==" || test.operator === "!=";
    if (!(equal && !g.negated) && !(unequal && g.negated)) continue;
    const sides = [unwrap(test.left as Node), unwrap(test.right as Node)];
    if (sides.some((n) => n.type === "Literal" || n.type === "TemplateLiteral")) continue;
    if (sides.filter(fromRead).length === 1) return g.test as Node;
  }
  return undefined;
}

/** The text of the value a predicate or an assignment compares or stores, where its node is a property. */
function valueText(mod: Module, node: Node | undefined): string | undefined {
  return node?.type === "Property" ? mod.sourceCode.getText(node.value) : undefined;
}

/**
 * A lock row created after a read found none, in a table the schema gives no unique key within what the read
 * looked it up by: `findFirst({ where: { transactionId } })`, `if (!found) create({ data: { transactionId, userId } })`
 * where the key is (transactionId, userId). Two callers that both find none both insert and both hold it (Q3).
 * Unknown without a schema (the editor): then no claim. The row is a lock by what the module does with it: a lock
 * word in the table's name, or a delete of the row by those same fields (its release).
 */
export function findCheckedInsert(mod: Module, write: StateWrite): Claim[] {
  if (write.underLock || write.dynamicModel || write.assignments.length === 0) return [];
  const keys = mod.uniqueKeys.get(normalizeModel(write.model));
  if (!keys) return [];
  const fn = enclosingFunction(write.node);
  for (const read of mod.earlierReads(write.node, write.model)) {
    if (enclosingFunction(read.node) !== fn) continue;
    const result = resultBinding(read.runAt ?? read.node);
    const branches = toBranches(read.filter);
    if (!result || branches.length !== 1 || isOpaque(branches[0]!)) continue;
    // The fields the read pins, each stored by the insert with the same value.
    const looked = branches[0]!.filter((a) => !("opaque" in a) && a.op === "eq");
    const fields: string[] = [];
    let same = looked.length > 0;
    for (const atom of looked) {
      if ("opaque" in atom) continue;
      const stored = write.assignments.find((a) => sameField(a.field, atom.pred.field));
      const readText = valueText(mod, atom.pred.node);
      const storedText = stored && valueText(mod, stored.node);
      if (!stored || (readText !== undefined && storedText !== undefined && readText !== storedText)) {
        same = false;
        break;
      }
      fields.push(atom.pred.field);
    }
    if (!same) continue;
    // A unique key within those fields makes the insert exclusive: a second caller's create fails.
    if (keys.some((k) => k.length > 0 && k.every((f) => fields.some((g) => sameField(f, g))))) return [];
    // The insert runs only when the read found no live row: a test of its result on the way.
    const tests = [...mod.guards(write), ...checksBetween(mod, read.node, write.node)];
    // A test that reads the variable itself (its references, not a property of the same name elsewhere).
    const uses = findVariable(mod.sourceCode, result)?.references.map((r) => r.identifier) ?? [];
    if (!tests.some((g) => uses.some((id) => contains(g.test as Node, id)))) continue;
    const released = mod.writes.some(
      (w) =>
        w.effect === "delete" &&
        normalizeModel(w.model) === normalizeModel(write.model) &&
        mod.branchesOf(w).length > 0 &&
        mod.branchesOf(w).every((b) => fields.every((f) => identityFields(b).some((g) => sameField(f, g)))),
    );
    if (!hasLockWord(write.model) && !released) continue;
    // An expired row taken over in JavaScript (`if (new Date(lock.expires_at) > now) return false`, then delete and
    // create): the columns the check judges.
    const takeover: TimePredicate[] = tests
      .filter((g) => g.judgesAge)
      .flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
    const stamp = write.assignments.find((a) => sameField(a.field, fields[0]!)) ?? write.assignments[0]!;
    const lock: LockKey = { model: write.model, field: "row", value: { value: "held" }, valueText: "" };
    return [
      {
        kind: "unenforced-row",
        write,
        lock,
        assignment: stamp,
        takeover,
        check: { kind: "read", node: read.node, timeFields: [] },
        fields,
        keys,
      },
    ];
  }
  return [];
}
