/**
 * Classify, then pair. Every state write of a module is read against the vocabulary:
 * - a *claim* sets field F to an in-progress value V while its filter excludes V (or a JS check or an earlier
 *   read excluded V on the way to an unconditional write: check-then-act);
 * - a *recovery* moves F off V for rows whose filter pins F = V and judges age (`updatedAt < threshold`);
 *   a recovery that judges age in JS or in an earlier read, or lacks the status or the age predicate, is
 *   still one, with flaws;
 * - a *holder write* moves one claimed row off V from code the claiming function reaches (completion, failure).
 * V is an in-progress status on a lifecycle field, or `true` on a processing flag. Two insert shapes are claims
 * too: a lock row inserted under a unique key (freed only by an age-judged sweeper or take-over), and a row
 * inserted already in progress when the module gates on that state.
 * Pairing is by (model, field, value); model names compare loosely (`job`, `Job`, `jobs`).
 * Key-value locks (Redis) are classified in kv-pairing.ts.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  Check,
  Claim,
  Condition,
  Guard,
  HolderWrite,
  KvOp,
  LockFacts,
  LockKey,
  ModuleShape,
  Node,
  ObjectWrite,
  Recovery,
  RecoveryFlaw,
  RowRelease,
  StaleScan,
  StateAccess,
  StateRead,
  StateWrite,
  StaticValue,
  TimePredicate,
} from "../model/model.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import {
  agePredicates,
  allowedIn,
  excludes,
  identityFields,
  isOpaque,
  ownerPinned,
  pins,
  toBranches,
  type Branch,
} from "../model/conditions.js";
import { describeTest, exitWhenHeld, guardsOf, pathCondition } from "../reading/guards.js";
import { buildHeldEffects, hasTakeoverWrite, type Holding } from "./fencing/held-effects.js";
import { keyDerivedHolders } from "./fencing/key-derived-holders.js";
import { buildKvFacts } from "./kv-pairing/kv-facts.js";
import { buildRenewals } from "./renewals.js";
import { normalizeModel, sameValue } from "../model/names.js";
import { recoveredByDirective } from "../reading/directives.js";
import { isExported } from "../reading/exports.js";
import { HOLE_SENTINEL as HOLE_MODEL } from "../languages/sql.js";
import {
  hasLockWord,
  namesALock,
  normalizeName,
  saysEnded,
  withClockedFields,
  withHeldValues,
} from "../model/settings.js";
import {
  classOf,
  enclosingFunction,
  functionName,
  isFunction,
  serializableTransaction,
  unitOf,
} from "../reading/units.js";
import { contains, runsAfter, walk } from "../reading/ast.js";
import {
  findVariable,
  isClockReading,
  keyName,
  resultBinding,
  staticChoices,
  thenParameterOf,
  unwrap,
} from "../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Unit = TSESTree.FunctionLike | null;

/** Values a recovery or failure path moves a row to: failed, retryable or waiting states. */
const RESET_VALUE =
  /fail|error|pending|queue|wait|time_?out|stale|expire|abandon|retry|idle|ready|new|created|available|interrupt|crash|dead|stuck|unknown|open|todo|scheduled|init|reset|draft/i;
/** Variable names that say nothing about which model a row belongs to. */
const GENERIC_ROW =
  /^(row|record|item|entity|existing|current|found|doc|document|data|result|res|entry|model|obj|object|it|x)$/;

function sameField(a: string, b: string): boolean {
  return normalizeName(a) === normalizeName(b);
}

function isLockValue(value: StaticValue, vocabulary: ResolvedVocabulary, field?: string): boolean {
  return typeof value.value === "string" && vocabulary.isInProgressValue(value.value, field);
}

/** Setting `field` to `value` takes a lock: an in-progress status, or a processing flag set true. */
function isLockAssignment(field: string, value: StaticValue, vocabulary: ResolvedVocabulary): boolean {
  if (value.value === true) return vocabulary.isFlagField(field);
  return isLockValue(value, vocabulary, field) && vocabulary.isStateField(field);
}

/** Moving a row to `target` gives it back: a failed, retryable or waiting status, or a flag cleared. */
function isReset(target: StaticValue, lock: LockKey, vocabulary: ResolvedVocabulary): boolean {
  if (lock.value.value === true) return target.value === false || target.value === null;
  return (
    typeof target.value === "string" && RESET_VALUE.test(target.value) && !isLockValue(target, vocabulary, lock.field)
  );
}

function allBranchesExclude(cond: Condition, field: string, value: StaticValue): boolean {
  const branches = toBranches(cond);
  return branches.length > 0 && branches.every((b) => excludes(b, field, value));
}

// ---- who reaches whom ----

function referencedName(node: Node): { name: string; viaThis: boolean } | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") return { name: n.name, viaThis: false };
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression") {
    const name = keyName(n.property, n.computed);
    return name === undefined ? undefined : { name, viaThis: true };
  }
  return undefined;
}

class CallGraph {
  private readonly byName = new Map<string, TSESTree.FunctionLike[]>();
  private readonly edges = new Map<Unit, { name: string; viaThis: boolean; from: Node }[]>();
  /** The same references by the name they use: `callSites` looks a name up instead of scanning every call. */
  private readonly byReference = new Map<string, { unit: Unit; viaThis: boolean; from: Node }[]>();
  private readonly reachCache = new Map<Unit, Set<Unit>>();
  private readonly siteCache = new Map<Unit, { unit: Unit; after: number; call: Node }[]>();

  constructor(shape: ModuleShape) {
    for (const fn of shape.functions) {
      const name = functionName(fn);
      if (name === undefined) continue;
      const list = this.byName.get(name) ?? [];
      list.push(fn);
      this.byName.set(name, list);
    }
    for (const call of shape.calls) {
      const unit = unitOf(call);
      const refs = this.edges.get(unit) ?? [];
      for (const n of [call.callee, ...call.arguments]) {
        const ref = referencedName(n);
        if (!ref) continue;
        refs.push({ ...ref, from: call });
        const named = this.byReference.get(ref.name) ?? [];
        named.push({ unit, viaThis: ref.viaThis, from: call });
        this.byReference.set(ref.name, named);
      }
      this.edges.set(unit, refs);
    }
  }

  /**
   * Where `target` is called from: each calling unit with the position right after the call, so a caller's
   * writes after `await claimExport(id)` count as the holder's.
   */
  callSites(target: Unit): { unit: Unit; after: number; call: Node }[] {
    if (target === null) return [];
    const cached = this.siteCache.get(target);
    if (cached) return cached;
    const name = functionName(target);
    const out: { unit: Unit; after: number; call: Node }[] = [];
    for (const ref of name === undefined ? [] : (this.byReference.get(name) ?? [])) {
      if (ref.viaThis ? classOf(ref.from) !== classOf(target) : classOf(target) !== undefined) continue;
      out.push({ unit: ref.unit, after: ref.from.range[1], call: ref.from });
    }
    this.siteCache.set(target, out);
    return out;
  }

  /** Units reachable from `start` by calls (and functions passed as arguments), `start` included. */
  reachable(start: Unit): Set<Unit> {
    const cached = this.reachCache.get(start);
    if (cached) return cached;
    const seen = new Set<Unit>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const unit = queue.pop()!;
      for (const ref of this.edges.get(unit) ?? []) {
        // `this.finish()` means the caller's own class; a bare name means a module-level function.
        const cls = ref.viaThis ? classOf(ref.from) : undefined;
        for (const fn of this.byName.get(ref.name) ?? []) {
          if (ref.viaThis ? classOf(fn) !== cls : classOf(fn) !== undefined) continue;
          if (!seen.has(fn)) {
            seen.add(fn);
            queue.push(fn);
          }
        }
      }
    }
    this.reachCache.set(start, seen);
    return seen;
  }
}

// ---- the module being classified ----

/**
 * Flags written as numbers (`locked = 1`, `is_running: 0`, MySQL and SQLite booleans) are booleans: on a flag field,
 * 1 and 0 read as true and false in assignments and filters, so `locked = 1 WHERE locked = 0` is the flag claim.
 * A flag set to the time it was taken (`isLocked: new Date().getTime()`, corpus Cp02) is set: truthy until cleared;
 * not one the module compares as an instant (`locked: { $lte: now }` is a lease, corpus Cm01).
 */
class FlagValues {
  /** Flag-named fields the module compares as instants (`locked: { $lte: now }`): a lease, whatever its name. */
  private readonly timed = new Set<string>();

  constructor(
    private readonly vocabulary: ResolvedVocabulary,
    accesses: readonly StateAccess[],
  ) {
    const visit = (c: Condition): void => {
      if (c.kind === "and" || c.kind === "or") c.items.forEach(visit);
      else if (c.kind === "not") visit(c.item);
      else if (c.kind === "pred" && /^(lt|lte|gt|gte)$/.test(c.op) && vocabulary.isFlagField(c.field))
        this.timed.add(normalizeName(c.field));
    };
    for (const a of accesses) if (a.access === "read" || a.access === "write") visit(a.filter);
  }

  private value(field: string, v: StaticValue): StaticValue {
    return (v.value === 1 || v.value === 0) && this.vocabulary.isFlagField(field) ? { value: v.value === 1 } : v;
  }

  private condition(c: Condition): Condition {
    switch (c.kind) {
      case "and":
      case "or":
        return { kind: c.kind, items: c.items.map((i) => this.condition(i)) };
      case "not":
        return { kind: "not", item: this.condition(c.item) };
      case "pred":
        return c.values ? { ...c, values: c.values.map((v) => this.value(c.field, v)) } : c;
      default:
        return c;
    }
  }

  read(r: StateRead): StateRead {
    return { ...r, filter: this.condition(r.filter) };
  }

  write(w: StateWrite): StateWrite {
    const assignments = w.assignments.map((a) =>
      a.value.kind === "static"
        ? { ...a, value: { kind: "static" as const, value: this.value(a.field, a.value.value) } }
        : a.value.kind === "now" && this.vocabulary.isFlagField(a.field) && !this.timed.has(normalizeName(a.field))
          ? { ...a, value: { kind: "static" as const, value: { value: true } } }
          : a,
    );
    return { ...w, filter: this.condition(w.filter), assignments };
  }
}

/**
 * The value a reassigned variable holds where `use` reads it: the last `x = value` before it in the same function,
 * in a block around it (`currentLock = document[0]; if (currentLock.isLocked) …`). A module-level `let` that
 * several functions set is read where one of them has just set it; an assignment in a branch that may not run,
 * or in another function, says nothing.
 */
function latestAssignment(
  variable: NonNullable<ReturnType<typeof findVariable>>,
  use: TSESTree.Identifier,
): Node | undefined {
  const fn = enclosingFunction(use);
  let best: { at: number; value: Node } | undefined;
  for (const ref of variable.references) {
    if (
      !ref.isWrite() ||
      !ref.writeExpr ||
      ref.identifier.range[1] > use.range[0] ||
      enclosingFunction(ref.identifier) !== fn
    )
      continue;
    const statement = ref.identifier.parent?.type === "AssignmentExpression" ? ref.identifier.parent.parent : undefined;
    const block = statement?.type === "ExpressionStatement" ? statement.parent : undefined;
    if (!block || !contains(block, use)) continue;
    if (!best || ref.identifier.range[0] > best.at) best = { at: ref.identifier.range[0], value: ref.writeExpr };
  }
  return best?.value;
}

/**
 * A write after locking reads of the same model in the same unit (`SELECT … FOR UPDATE`, `.forUpdate()`,
 * `setLock("pessimistic_write")`, `lock: true`): the rows it names are those the reads locked, which nobody can
 * change until the transaction ends, so the reads' filters still hold when it writes. So do plain reads of a
 * SERIALIZABLE transaction for the writes of that transaction (`serializableTransaction`). `UPDATE … WHERE id IN (…)`
 * after `SELECT id … WHERE status = 'PENDING' FOR UPDATE SKIP LOCKED` is one conditional claim, not check-then-act.
 */
function underLockingReads(write: StateWrite, locking: readonly StateRead[]): StateWrite {
  const unit = unitOf(write.node);
  const model = normalizeModel(write.model);
  const tx = serializableTransaction(write.node);
  const held = locking.filter(
    (r) =>
      r.node.range[1] <= write.node.range[0] &&
      normalizeModel(r.model) === model &&
      (r.locking ? unitOf(r.node) === unit : tx !== undefined && serializableTransaction(r.node) === tx),
  );
  if (held.length === 0) return write;
  return { ...write, filter: { kind: "and", items: [write.filter, ...held.map((r) => r.filter)] }, underLock: true };
}

/**
 * Writes of a document known only by its variable's name (`markFailed(event)` then `event.save()`) go to the one
 * model the module names elsewhere whose name contains it or is contained in it (`event` → `MessageEvent`). With
 * none, or two alike (`event` → `MessageEvent` and `AuditEvent`), the name stays as it is: a model of its own
 * that pairs with nothing.
 */
function attributeByName(writes: readonly StateWrite[]): StateWrite[] {
  const known = [...new Set(writes.filter((w) => !w.modelFromName).map((w) => w.model))];
  return writes.map((w) => {
    if (!w.modelFromName) return w;
    const n = normalizeModel(w.model);
    if (n.length < 3) return w;
    const alike = [
      ...new Set(
        known
          .filter((m) => {
            const k = normalizeModel(m);
            return k.includes(n) || n.includes(k);
          })
          .map(normalizeModel),
      ),
    ];
    if (alike.length !== 1) return w;
    return { ...w, model: known.find((m) => normalizeModel(m) === alike[0])! };
  });
}

class Module {
  readonly writes: StateWrite[];
  readonly reads: StateRead[];
  private readonly branches = new Map<StateWrite, Branch[]>();
  private readonly guardCache = new Map<StateWrite, Guard[]>();
  private readonly readByCall = new Map<Node, StateRead>();

  constructor(
    readonly sourceCode: SourceCode,
    accesses: readonly StateAccess[],
    readonly vocabulary: ResolvedVocabulary,
    /** The unique keys of the tables a schema declares (normalised model -> keys); empty where none was read. */
    readonly uniqueKeys: UniqueKeyMap = new Map(),
  ) {
    const flags = new FlagValues(vocabulary, accesses);
    this.reads = accesses.filter((a): a is StateRead => a.access === "read").map((r) => flags.read(r));
    const writes = attributeByName(accesses.filter((a): a is StateWrite => a.access === "write")).map((w) =>
      flags.write(w),
    );
    // Reads in a SERIALIZABLE transaction hold what they read for the writes after them in that transaction.
    const locking = this.reads.filter((r) => r.locking || serializableTransaction(r.node) !== undefined);
    this.writes = locking.length === 0 ? writes : writes.map((w) => underLockingReads(w, locking));
    for (const r of this.reads) this.readByCall.set(r.node, r);
  }

  branchesOf(w: StateWrite): Branch[] {
    let b = this.branches.get(w);
    if (!b) this.branches.set(w, (b = toBranches(w.filter)));
    return b;
  }

  guards(w: StateWrite): Guard[] {
    let g = this.guardCache.get(w);
    if (!g) this.guardCache.set(w, (g = guardsOf(this.sourceCode, w.node, this.vocabulary)));
    return g;
  }

  /**
   * Whether `object` in a JS check (`job.status`) stands for a row of `model`: a variable holding a read of that
   * model, or one named like it (`job`, `delivery` for `webhookDelivery`); a read of another model never does.
   */
  objectIsModel(object: Node, model: string): boolean {
    let o = unwrap(object);
    while (o.type === "MemberExpression") o = unwrap(o.object);
    if (o.type !== "Identifier") return true;
    const read = this.readHeldBy(o, 0);
    if (read) return normalizeModel(read.model) === normalizeModel(model);
    const n = normalizeModel(o.name);
    const m = normalizeModel(model);
    return GENERIC_ROW.test(n) || n.includes(m) || m.includes(n);
  }

  /**
   * The read whose result a variable holds: `const job = await find…` (or a call chained on the read, `.toArray()`),
   * the parameter of `find….then((job) => …)`, a destructured row (`const [job] = await select…`,
   * `const { rows: [job] } = await pool.query(…)`), or a row taken from a result another variable holds
   * (`const job = res.rows[0]`).
   */
  private readHeldBy(id: TSESTree.Identifier, depth: number): StateRead | undefined {
    if (depth > 3) return undefined;
    const variable = findVariable(this.sourceCode, id);
    const def = variable?.defs.length === 1 ? variable.defs[0] : undefined;
    let init: Node | undefined;
    if (
      def?.type === "Variable" &&
      def.node.init &&
      (def.parent.kind === "const" || variable!.references.filter((r) => r.isWrite()).length === 1)
    ) {
      init = def.node.init;
    } else init = thenParameterOf(this.sourceCode, id) ?? (variable ? latestAssignment(variable, id) : undefined);
    if (!init) return undefined;
    let n = unwrap(init);
    if (n.type === "AwaitExpression") n = unwrap(n.argument);
    // The read, or a call chained on it (`find(…).toArray()`, `findOne(…).lean()`).
    for (let c: Node = n; ;) {
      const read = this.readByCall.get(c);
      if (read) return read;
      if (c.type !== "CallExpression" || c.callee.type !== "MemberExpression") break;
      c = unwrap(c.callee.object);
    }
    while (n.type === "MemberExpression") n = unwrap(n.object);
    return n.type === "Identifier" && n.name !== id.name ? this.readHeldBy(n, depth + 1) : undefined;
  }

  /** The condition every JS check on the way to `w` establishes about rows of its model. */
  pathCondition(w: StateWrite): Condition {
    const accepts = (object: Node) => this.objectIsModel(object, w.model);
    return { kind: "and", items: this.guards(w).map((g) => pathCondition(this.sourceCode, g, accepts)) };
  }

  /**
   * Reads of the same model that run before `node` in its function or a function around it (a read outside a
   * `$transaction` or `.then` callback counts; a read in a sibling callback, another test's `it(…)`, does not).
   */
  earlierReads(node: Node, model: string): StateRead[] {
    return this.reads.filter((r) => {
      if (r.node.range[1] > node.range[0] || normalizeModel(r.model) !== normalizeModel(model)) return false;
      const scope = enclosingFunction(r.node);
      return scope === undefined || (scope.range[0] <= node.range[0] && node.range[1] <= scope.range[1]);
    });
  }
}

// ---- classification ----

/**
 * A lock row inserted into a lock table under a unique key. `ON CONFLICT DO NOTHING` or a caught duplicate
 * error is a claim; `ON CONFLICT DO UPDATE … WHERE expires_at < now()` is a claim that takes over expired rows.
 */
function findInsertClaim(mod: Module, write: StateWrite): Claim[] {
  // Lock tables: `locks`, `job_lease`, `mutexes` (not `actor_block`); or, for an upsert, any table whose conflict
  // branch overwrites a row only once its lock's expiry has passed (`scheduled_tasks` where `lockExpiresAt < now`).
  if (write.onConflict === undefined) return [];
  const branches = write.onConflict === "update" ? mod.branchesOf(write) : [];
  const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
  const lockColumns = ages.length > 0 && ages.every((a) => a.length > 0 && a.every((t) => hasLockWord(t.field)));
  if (!hasLockWord(write.model) && !lockColumns) return [];
  const lock: LockKey = { model: write.model, field: "row", value: { value: "held" }, valueText: "" };
  const assignment = write.assignments[0] ?? {
    field: "",
    value: { kind: "other" as const },
    node: write.node,
    valueNode: write.node,
  };
  if (write.onConflict !== "update") return [{ write, lock, assignment, takeover: [], insert: true }];
  // An upsert that always overwrites is no lock; one that overwrites only free rows (expired, with no lease, or
  // the caller's own) is a lease.
  const columns = write.assignments.map((a) => a.field).filter((f) => mod.vocabulary.isTimeField(f));
  if (
    branches.length === 0 ||
    ages.every((a) => a.length === 0) ||
    !branches.every((b, i) => leaseFree(mod, b, ages[i]!, columns))
  )
    return [];
  return [{ write, lock, assignment, takeover: ages.flat(), insert: true }];
}

/**
 * A branch of a lease write finds the lease free: its lease columns judged past (`aged`), absent
 * (`leaseUntil: { $exists: false }`, `IS NULL`), or the caller's own (`OR locks.holder = EXCLUDED.holder`: a holder
 * re-enters).
 */
function leaseFree(mod: Module, branch: Branch, aged: readonly TimePredicate[], columns: readonly string[]): boolean {
  return (
    aged.length > 0 ||
    columns.some((c) => pins(branch, c, { value: null })) ||
    ownerPinned(branch, undefined, mod.vocabulary)
  );
}

/** Columns that say until when a lease holds (`lockedUntil`, `lease_expires_at`): set to the clock, the lease ends now. */
const UNTIL = /until|expir|deadline/i;

/**
 * An assignment that clears a lease column: null, false, a fixed instant (`new Date(0)`), or, for an until-column,
 * the clock itself (`lockedUntil: new Date()`). `locked_at = now()` takes a lease, and a clock reading with
 * arithmetic (`new Date(Date.now() + ttl)`, SQL `now() + interval …`) extends one: neither clears.
 */
function clears(a: Assignment, until = false): boolean {
  if (a.value.kind === "now") return (until || UNTIL.test(a.field)) && isBareClock(a.valueNode);
  return (
    a.value.kind === "static" &&
    (a.value.value.value === null || a.value.value.value === false || typeof a.value.value.value === "number")
  );
}

/** `new Date()` or `Date.now()`: the clock, nothing added (a SQL value's node is its whole query: not bare). */
function isBareClock(node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "NewExpression")
    return n.callee.type === "Identifier" && n.callee.name === "Date" && n.arguments.length === 0;
  return n.type === "CallExpression" && n.arguments.length === 0 && isClockReading(n);
}

/**
 * A lease stamped on a free row: the write sets a lease column L (a timestamp or an owner column) where every
 * branch of its filter finds the lease free (L past, L absent, or this caller's own), at least one by age, in a
 * table or column whose name says "lock" or "lease". `Lock.findOneAndUpdate({ name, leaseUntil: { $lt: now } },
 * { leaseUntil: until }, { upsert: true })`; `UPDATE jobs SET locked_until = $2 WHERE id = $1 AND locked_until <
 * now()`. An expired lease is taken over by the claim itself (Q1); its release must check the owner (Q3).
 */
function findLeaseClaim(mod: Module, write: StateWrite): Claim[] {
  // A table named by a hole (`UPDATE "${table}"`) is unknown: its writes cannot be told apart.
  if (write.effect === "delete" || write.effect === "insert" || write.model === HOLE_MODEL) return [];
  const branches = mod.branchesOf(write);
  if (branches.length === 0 || branches.some(isOpaque)) return [];
  for (const assignment of write.assignments) {
    const field = assignment.field;
    // A timestamp by its name, or by what this write stores in it: a clock reading (`locked: new Date(now + ttl)`).
    const clocked = assignment.value.kind === "now";
    if ((!mod.vocabulary.isTimeField(field) && !clocked) || clears(assignment)) continue;
    if (!hasLockWord(write.model) && !hasLockWord(field) && !write.assignments.some((a) => hasLockWord(a.field)))
      continue;
    const aged = branches.map((b) =>
      mod.vocabulary.isTimeField(field)
        ? agePredicates(b, mod.vocabulary).filter((t) => sameField(t.field, field))
        : comparedBefore(b, field),
    );
    // A lock timestamp stamped only where it is empty, and cleared by the module afterwards: a lock with no
    // expiry of its own (`lockedAt IS NULL` -> `lockedAt = now()`, released by `lockedAt = null`).
    const unexpiring =
      aged.every((a) => a.length === 0) &&
      hasLockWord(field) &&
      branches.every((b) => pins(b, field, { value: null })) &&
      clearedById(mod, write, field);
    if (
      !unexpiring &&
      (aged.every((a) => a.length === 0) || !branches.every((b, i) => leaseFree(mod, b, aged[i]!, [field])))
    )
      continue;
    const lock: LockKey = { model: write.model, field, value: { value: "held" }, valueText: "" };
    // Another write of the table stamps the lease column again (`touch`, a heartbeat): it tells progress, whatever
    // its name says.
    const renewed = mod.writes.some(
      (w) =>
        w !== write &&
        normalizeModel(w.model) === normalizeModel(write.model) &&
        w.assignments.some((a) => sameField(a.field, field) && !clears(a)),
    );
    return [{ write, lock, assignment, takeover: aged.flat(), lease: true, ...(renewed ? { renewed } : {}) }];
  }
  return [];
}

/** Another write of the model clears `field` (null) on rows it names by a key: the lock's release. */
function clearedById(mod: Module, write: StateWrite, field: string): boolean {
  const model = normalizeModel(write.model);
  return mod.writes.some(
    (w) =>
      w !== write &&
      normalizeModel(w.model) === model &&
      w.effect !== "insert" &&
      w.assignments.some(
        (a) => sameField(a.field, field) && a.value.kind === "static" && a.value.value.value === null,
      ) &&
      mod.branchesOf(w).length > 0 &&
      mod.branchesOf(w).every((b) => identityFields(b).length > 0),
  );
}

/** The branch's `field < x` and `field <= x` tests: a column the write stamps with the clock, judged by age. */
function comparedBefore(branch: Branch, field: string): TimePredicate[] {
  const out: TimePredicate[] = [];
  for (const atom of branch) {
    if (!("opaque" in atom) && (atom.op === "lt" || atom.op === "lte") && sameField(atom.pred.field, field))
      out.push({ field, node: atom.pred.node });
  }
  return out;
}

/** The module gates on rows holding `field = value`: it claims that value elsewhere, or reads rows filtered on it. */
function gatesOn(mod: Module, write: StateWrite, field: string, value: StaticValue, claims: readonly Claim[]): boolean {
  const model = normalizeModel(write.model);
  if (
    claims.some(
      (c) =>
        !c.insert &&
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
function findBornClaims(mod: Module, write: StateWrite, claims: readonly Claim[]): Claim[] {
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
    born.push({ write, lock, assignment, takeover: [] });
  }
  return born;
}

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
  const name =
    callee.type === "MemberExpression"
      ? keyName(callee.property, callee.computed)
      : callee.type === "Identifier"
        ? callee.name
        : undefined;
  return (
    name !== undefined && /^(?:log|info|debug|warn|warning|error|trace|captureException|captureMessage)$/.test(name)
  );
}

function findClaims(mod: Module, write: StateWrite): Claim[] {
  if (gatesNothing(write.node)) return [];
  const claims = findStateClaims(mod, write);
  if (claims.length > 0) return claims;
  const lease = findLeaseClaim(mod, write);
  if (lease.length > 0) return lease;
  const keyed = findKeyedLockRow(mod, write);
  return keyed.length > 0 ? keyed : findCheckedLease(mod, write);
}

/**
 * A lease taken after a check in JavaScript: the function reads the row, judges in an `if` whether its lock columns
 * are still fresh (`lockedAt > cutoff`, `isLockValid(lock.updatedAt)`), and then stamps them by id alone
 * (`update({ id, data: { lockedAt: new Date(), lockedBy: me } })`). The read and the write are two steps
 * (`check`): two callers that read the lease expired both take it. It is still a lease (`lease`): the take-over
 * the check judges answers who unlocks a dead holder, and its releases clear the lock columns by id.
 */
function findCheckedLease(mod: Module, write: StateWrite): Claim[] {
  if (write.effect !== undefined && write.effect !== "update") return [];
  if (write.model === HOLE_MODEL) return [];
  const stamp = write.assignments.find((a) => a.value.kind === "now" && hasLockWord(a.field) && !clears(a));
  if (!stamp) return [];
  const branches = mod.branchesOf(write);
  // The row by id and nothing else: a write whose filter tests anything more is a compare-and-set. Under a locking
  // read (or in a SERIALIZABLE transaction) the read's filter is the write's: the take-over is one step, still a lease.
  if (
    !write.underLock &&
    (branches.length === 0 ||
      !branches.every((b) => !isOpaque(b) && b.length > 0 && identityFields(b).length === b.length))
  )
    return [];
  const read = mod
    .earlierReads(write.node, write.model)
    .find((r) => enclosingFunction(r.node) === enclosingFunction(write.node));
  if (!read || isOverride(write.node)) return [];
  const tests = new Set<Node>();
  const aging = [...mod.guards(write), ...checksBetween(mod, read.node, write.node)].filter(
    (g) => g.judgesAge && !tests.has(g.test) && tests.add(g.test),
  );
  if (aging.length === 0) return [];
  const takeover: TimePredicate[] = aging.flatMap((g) =>
    g.timeFields.length > 0
      ? g.timeFields.map((f) => ({ field: f, node: g.test as Node }))
      : [{ field: stamp.field, node: g.test as Node }],
  );
  const lock: LockKey = { model: write.model, field: stamp.field, value: { value: "held" }, valueText: "" };
  // A heartbeat stamps the same column again: its age tells progress. Creating the row is no renewal.
  const renewed = mod.writes.some(
    (w) =>
      w !== write &&
      w.effect !== "insert" &&
      normalizeModel(w.model) === normalizeModel(write.model) &&
      w.assignments.some((a) => sameField(a.field, stamp.field) && a.value.kind === "now" && !clears(a)),
  );
  const check: Check | undefined = write.underLock
    ? undefined
    : { kind: "read", node: read.node, timeFields: takeover };
  return [
    {
      write,
      lock,
      assignment: stamp,
      takeover,
      ...(check ? { check } : {}),
      lease: true,
      ...(renewed ? { renewed } : {}),
    },
  ];
}

const OVERRIDE = /^(?:force|admin)[A-Z_]/;

/** A write in a function named as an operator's override of a lock (`forceUnlockAutoPayout`, `adminReleaseLock`). */
function isOverride(node: Node): boolean {
  for (let fn = enclosingFunction(node); fn; fn = fn.parent ? enclosingFunction(fn.parent) : undefined) {
    const name = functionName(fn);
    if (name !== undefined) return OVERRIDE.test(name);
  }
  return false;
}

/** The `if` tests between a read and a write of the same function, read for age (`describeTest`). */
function checksBetween(mod: Module, from: Node, to: Node): Guard[] {
  const fn = enclosingFunction(to);
  const body = fn?.body;
  if (!fn || !body || enclosingFunction(from) !== fn) return [];
  const out: Guard[] = [];
  walk(body, (n) => {
    if (n !== body && isFunction(n)) return false;
    if (n.type === "IfStatement" && n.range[0] > from.range[1] && n.range[1] < to.range[0]) {
      out.push(describeTest(mod.sourceCode, n.test, false, mod.vocabulary));
    }
    return true;
  });
  return out;
}

/** The constant lock name every branch of a filter picks its row by (`key = "auto_payout_lock"`), with its column. */
function lockName(branches: readonly Branch[]): { field: string; value: StaticValue } | undefined {
  if (branches.length === 0 || branches.some(isOpaque)) return undefined;
  for (const atom of branches[0]!) {
    if ("opaque" in atom || atom.op !== "eq" || atom.pred.values?.length !== 1) continue;
    const value = atom.pred.values[0]!;
    if (typeof value.value !== "string" || value.symbolic || !namesALock(value.value)) continue;
    if (branches.every((b) => pins(b, atom.pred.field, value))) return { field: atom.pred.field, value };
  }
  return undefined;
}

/**
 * A row of an ordinary table used as a lock under a constant name: `findUnique({ where: { key: "payout_lock" } })`,
 * a JS check of what it holds, then `upsert` of that row. The read and the write are two steps (`check`), so two
 * callers can both take it. When the check judges the stored time (`t > ttlCutoff`), a stale row is taken over.
 */
function findKeyedLockRow(mod: Module, write: StateWrite): Claim[] {
  if (write.effect === "delete" || write.assignments.length === 0) return [];
  const name = lockName(mod.branchesOf(write));
  if (!name) return [];
  const read = mod.earlierReads(write.node, write.model).find((r) => {
    const branches = toBranches(r.filter);
    return branches.length > 0 && branches.every((b) => !isOpaque(b) && pins(b, name.field, name.value));
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
  return [
    {
      write,
      lock,
      assignment: stamp,
      takeover,
      check: { kind: "read", node: read.node, timeFields: [] },
      insert: true,
      keyed: true,
    },
  ];
}

/** Normalised model name -> the unique keys its schema declares, each a list of fields. */
export type UniqueKeyMap = ReadonlyMap<string, readonly (readonly string[])[]>;

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
function findCheckedInsert(mod: Module, write: StateWrite): Claim[] {
  if (write.underLock || write.model === HOLE_MODEL || write.assignments.length === 0) return [];
  const keys = mod.uniqueKeys.get(normalizeModel(write.model));
  if (!keys) return [];
  const fn = enclosingFunction(write.node);
  for (const read of mod.earlierReads(write.node, write.model)) {
    if (enclosingFunction(read.node) !== fn) continue;
    const result = resultBinding(read.node);
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
        write,
        lock,
        assignment: stamp,
        takeover,
        check: { kind: "read", node: read.node, timeFields: [] },
        insert: true,
        unenforced: { fields, keys },
      },
    ];
  }
  return [];
}

function findStateClaims(mod: Module, write: StateWrite): Claim[] {
  if (write.effect === "insert")
    return write.onConflict === undefined ? findCheckedInsert(mod, write) : findInsertClaim(mod, write);
  if (write.effect === "delete") return [];
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
      if (excludes(branch, field, value)) excluded = true;
      else {
        const age = agePredicates(branch, mod.vocabulary);
        if (age.length > 0) takeover.push(...age);
        else open = true;
      }
    }
    if (excluded && !open) {
      claims.push({ write, lock, assignment, takeover });
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
      if (takeover) claims.push({ write, lock, assignment, takeover });
      continue;
    }
    // Checked under a row lock (a locking read of the row in the same unit): nobody can change the row in between.
    if (write.underLock || branches.every((b) => ownerPinned(b, field, mod.vocabulary)))
      claims.push({ write, lock, assignment, takeover: [] });
    else claims.push({ write, lock, assignment, takeover: [], check });
  }
  return claims;
}

/**
 * The module's vocabulary with the values it takes rows into under a lease read as in-progress, whatever they are
 * called: a write sets F = V and stamps a field with the clock (`keepAlive: now`), and every branch of its filter
 * either excludes V or takes over rows whose stamp has aged (`$expr: { $lt: ["$keepAlive", cutoff] }`). Taking over
 * by the age of the very stamp the write makes is a lease, so V is held (corpus Ak25: an outbox's ACTIVE events).
 * Held in that field only, as `withValuesHeldAcrossWork`'s.
 */
function withLeasedValues(base: ResolvedVocabulary, accesses: readonly StateAccess[]): ResolvedVocabulary {
  const held = new Set<string>();
  for (const w of accesses) {
    if (w.access !== "write" || w.effect === "insert" || w.effect === "delete") continue;
    const stamped = w.assignments.filter((a) => a.value.kind === "now").map((a) => normalizeName(a.field));
    if (stamped.length === 0) continue;
    let branches: Branch[] | undefined;
    for (const a of w.assignments) {
      const v = a.value.kind === "static" ? a.value.value.value : undefined;
      if (typeof v !== "string" || !base.isStateField(a.field) || base.isInProgressValue(v, a.field) || saysEnded(v))
        continue;
      branches ??= toBranches(w.filter);
      const takesOver = (b: Branch) => agePredicates(b, base).some((t) => stamped.includes(normalizeName(t.field)));
      if (!branches.some(takesOver) || !branches.every((b) => takesOver(b) || excludes(b, a.field, { value: v })))
        continue;
      held.add(`${normalizeName(a.field)}=${normalizeName(v)}`);
    }
  }
  return withHeldInField(base, held);
}

/** `base` with the `field=value` pairs of `held` read as in-progress, in that field only. */
function withHeldInField(base: ResolvedVocabulary, held: ReadonlySet<string>): ResolvedVocabulary {
  if (held.size === 0) return base;
  return {
    ...base,
    isInProgressValue: (value, field) =>
      base.isInProgressValue(value, field) ||
      (field !== undefined && held.has(`${normalizeName(field)}=${normalizeName(value)}`)),
  };
}

/**
 * The module's vocabulary with the values it holds a row in across work read as in-progress, whatever they are
 * called: a write sets F = V only where the row is not V already (every branch of its filter excludes V), and the
 * same function, after awaiting something, moves that row by identity off V again (`refundStatus: "PENDING"` taken
 * from null or FAILED, the refund sent, then PROCESSED or FAILED by id: corpus Ap12). Its holder owns the row until
 * that second write, as a claim's does, even where the name is a waiting one. A value some other access of the
 * module selects rows by (a worker taking them, an admin approving one by id: corpus shared dA10) is a state of the
 * workflow that others act on: it keeps its name's meaning. A value that says the work ended is never held.
 */
function withValuesHeldAcrossWork(base: ResolvedVocabulary, accesses: readonly StateAccess[]): ResolvedVocabulary {
  const writes = accesses.filter((a): a is StateWrite => a.access === "write");
  const byIdentity = (w: StateWrite) => {
    const branches = toBranches(w.filter);
    return branches.length > 0 && branches.every((b) => identityFields(b).length > 0);
  };
  const held = new Set<string>();
  for (const w1 of writes) {
    if (w1.effect === "insert" || w1.effect === "delete") continue;
    let branches: Branch[] | undefined;
    for (const a of w1.assignments) {
      const v = a.value.kind === "static" ? a.value.value.value : undefined;
      if (typeof v !== "string" || !base.isStateField(a.field) || base.isInProgressValue(v, a.field) || saysEnded(v))
        continue;
      // An opaque term ANDed in only narrows; an opaque alternative admits V (`excludes` is false on it).
      branches ??= toBranches(w1.filter);
      if (branches.length === 0 || !branches.every((b) => excludes(b, a.field, { value: v }))) continue;
      const fn = enclosingFunction(w1.node);
      const model = normalizeModel(w1.model);
      const movedOff = writes.some(
        (w2) =>
          w2 !== w1 &&
          enclosingFunction(w2.node) === fn &&
          w2.node.range[0] > w1.node.range[1] &&
          normalizeModel(w2.model) === model &&
          byIdentity(w2) &&
          !beforeAnyWait(w1.node, w2.node) &&
          runsAfter(w1.node, w2.node) &&
          w2.assignments.some(
            (b) => sameField(b.field, a.field) && b.value.kind === "static" && !sameValue(b.value.value, { value: v }),
          ),
      );
      if (!movedOff) continue;
      // Anyone else acting on rows in V (a worker taking them, an admin approving one by id) makes V a state of the
      // workflow, not a hold: only the holder's own later writes may select by it.
      const own = (o: StateAccess) =>
        o.access === "write" && enclosingFunction(o.node) === fn && o.node.range[0] > w1.node.range[1];
      // A sweep that judges age is the hold's recovery (or its stale scan), not someone else's use of V.
      const consumed = accesses.some(
        (o) =>
          o !== w1 &&
          (o.access === "read" || o.access === "write") &&
          !own(o) &&
          normalizeModel(o.model) === model &&
          toBranches(o.filter).some((b) => pins(b, a.field, { value: v }) && agePredicates(b, base).length === 0),
      );
      if (!consumed) held.add(`${normalizeName(a.field)}=${normalizeName(v)}`);
    }
  }
  // Held in that field only: `refundStatus: PENDING` held says nothing of `status: PENDING`.
  return withHeldInField(base, held);
}

/**
 * The module reads every row in the claimed value, whoever put it there (nothing else in the filter), and
 * moves the rows it read off the value by id in the same function: `findMany({ where: { status: DELETING } })`
 * then `deleteMany({ where: { id: { in: ids } } })`. The value is a queue the next run works off, not a lock a
 * holder keeps: a run killed after the flip leaves its rows to the next run. Not a claim (no Q1 to ask).
 */
function workedOffInBulk(mod: Module, claim: Claim): boolean {
  if (claim.insert || claim.lease || claim.lock.value.value === true) return false;
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

/**
 * The branch compares a column with the value read from the row before (`clock: lock.clock`, `version: row.version`):
 * a compare-and-set whatever the column is called. The row's id is no such column (every writer of it knows it).
 */
function comparesValueRead(branch: Branch): boolean {
  return branch.some((atom) => {
    if ("opaque" in atom || atom.op !== "eq" || atom.pred.values || /^_?id$/i.test(atom.pred.field)) return false;
    let n = unwrap(atom.pred.node);
    if (n.type === "Property") n = unwrap(n.value as Node);
    return (
      n.type === "MemberExpression" &&
      !n.computed &&
      n.property.type === "Identifier" &&
      normalizeName(n.property.name) === normalizeName(atom.pred.field) &&
      unwrap(n.object).type === "Identifier"
    );
  });
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
  const read = mod.earlierReads(write.node, write.model).find((r) => {
    const rb = toBranches(r.filter);
    return rb.length > 0 && !rb.some(isOpaque) && rb.every((b) => excludes(b, field, value));
  });
  return read && { kind: "read", node: read.node, timeFields: [] };
}

/**
 * Reads that pick rows stuck in an in-progress value by age: `findMany({ where: { status: RUNNING, startedAt: { lt } } })`;
 * one scan per value when the branches pin different ones (`createdAt < cutoff AND (state = creating OR state = uploading)`).
 */
function findStaleScans(sourceCode: SourceCode, read: StateRead, vocabulary: ResolvedVocabulary): StaleScan[] {
  // A count of stuck rows (a dashboard's, a metric's) returns a number: no row it finds is handed to anyone.
  if (COUNTING.test(read.operation)) return [];
  const branches = toBranches(read.filter);
  if (branches.length === 0 || branches.some(isOpaque)) return [];
  let ages = branches.map((b) => agePredicates(b, vocabulary));
  let js: TimePredicate[] | undefined;
  const out: StaleScan[] = [];
  for (const atom of branches[0]!) {
    if ("opaque" in atom || (atom.op !== "eq" && atom.op !== "in") || !atom.pred.values) continue;
    const field = atom.pred.field;
    if (!atom.pred.values.some((v) => isLockAssignment(field, v, vocabulary))) continue;
    // Every branch must be about this field's lock values: one that is not picks other rows too.
    const perBranch = branches.map((b) => lockValuesPinned(b, field, vocabulary));
    if (perBranch.some((vs) => vs.length === 0)) continue;
    // Age judged in JavaScript over the rows read, for every row (`rows.filter((job) => job.startedAt < cutoff)`):
    // the branches whose query judges none are judged by it. Looked for only in a read of rows held in a lock value.
    if (ages.some((a) => a.length === 0)) {
      js ??= rowsFilteredByAge(sourceCode, read, vocabulary);
      if (js.length === 0) return [];
      const fill = js;
      ages = ages.map((a) => (a.length === 0 ? fill : a));
    }
    const seen = new Set<string>();
    for (const value of perBranch.flat()) {
      const key = String(value.value);
      if (seen.has(key)) continue;
      seen.add(key);
      // Each value is judged by the age tests of the branches that pin it (`claimed` by claimed_at, `running` by
      // attempted_at), the same test once.
      const judged = [
        ...new Set(branches.flatMap((_, i) => (perBranch[i]!.some((v) => String(v.value) === key) ? ages[i]! : []))),
      ];
      out.push({ read, field, value, timePredicates: judged });
    }
    if (out.length > 0) return out;
  }
  return out;
}

/** Reads that return how many rows match, not the rows. */
const COUNTING = /^(count|countDocuments|estimatedDocumentCount|countBy|exists)$/;

/**
 * The age tests JavaScript makes of every row a read returns: the rows (`const jobs = await …`, and arrays made from
 * them with `.map(…)`) handed to `.filter((job) => …)` whose callback keeps a row by an age test of its own fields
 * (`return new Date(job.attempted_at).getTime() < now - timeout`). Each field judged, at its test.
 */
function rowsFilteredByAge(sourceCode: SourceCode, read: StateRead, vocabulary: ResolvedVocabulary): TimePredicate[] {
  const first = resultBinding(read.node);
  if (!first) return [];
  const out: TimePredicate[] = [];
  const arrays = [first];
  for (let i = 0; i < arrays.length && i < 4; i++) {
    const variable = findVariable(sourceCode, arrays[i]!);
    for (const ref of variable?.references ?? []) {
      const member = ref.identifier.parent;
      if (member?.type !== "MemberExpression" || member.object !== ref.identifier) continue;
      const method = keyName(member.property, member.computed);
      const call = member.parent;
      if ((method !== "map" && method !== "filter") || call?.type !== "CallExpression" || call.callee !== member)
        continue;
      const next = resultBinding(call);
      if (method === "map" && next) arrays.push(next);
      if (method !== "filter") continue;
      const callback = call.arguments[0] && unwrap(call.arguments[0]);
      const row = callback && isFunction(callback) ? callback.params[0] : undefined;
      const body = callback && isFunction(callback) ? callback.body : undefined;
      if (!body || row?.type !== "Identifier") continue;
      // What the callback keeps a row by: its returned expressions (and an expression body), not nested functions'.
      const kept: TSESTree.Expression[] = body.type !== "BlockStatement" ? [body as TSESTree.Expression] : [];
      walk(body, (n) => {
        if (n !== body && isFunction(n)) return false;
        if (n.type === "ReturnStatement" && n.argument) kept.push(n.argument);
        return true;
      });
      for (const test of kept) {
        const judged = describeTest(sourceCode, test, false, vocabulary);
        if (!judged.judgesAge) continue;
        for (const field of judged.timeFields) if (readsField(test, row.name, field)) out.push({ field, node: test });
      }
    }
  }
  return out;
}

/** Whether `expr` reads `row.field` (`row.field`, `row["field"]`), the field of the row the callback was handed. */
function readsField(expr: Node, row: string, field: string): boolean {
  let found = false;
  walk(expr, (n) => {
    if (found) return false;
    if (
      n.type === "MemberExpression" &&
      unwrap(n.object).type === "Identifier" &&
      (unwrap(n.object) as TSESTree.Identifier).name === row &&
      keyName(n.property, n.computed) === field
    )
      found = true;
    return !found;
  });
  return found;
}

/** The lock values a branch pins `field` to (`status = RUNNING`, `status IN (RUNNING, CLAIMED)`). */
function lockValuesPinned(branch: Branch, field: string, vocabulary: ResolvedVocabulary): StaticValue[] {
  const out: StaticValue[] = [];
  for (const atom of branch) {
    if (
      "opaque" in atom ||
      !sameField(atom.pred.field, field) ||
      (atom.op !== "eq" && atom.op !== "in") ||
      !atom.pred.values
    )
      continue;
    for (const v of atom.pred.values) if (isLockAssignment(field, v, vocabulary) && pins(branch, field, v)) out.push(v);
  }
  return out;
}

interface Classified {
  recoveries: Recovery[];
  holder: HolderWrite[];
  releases: RowRelease[];
}

/**
 * A write to a lock row's table after the row was taken: a sweep judged by age is its recovery; a delete, or a
 * write that clears the lease, picked by the row's key is a release, owner-checked when every branch also names the
 * holder (an owner or token column) or the lease value the claim stamped (`leaseUntil: lease`).
 */
function classifyLockRow(mod: Module, write: StateWrite, claim: Claim, out: Classified): void {
  const branches = mod.branchesOf(write);
  if (branches.length === 0 || branches.some(isOpaque)) return;
  // A keyed lock row shares its table with other rows (settings): only writes of the row by its name are about it.
  if (claim.keyed && !branches.every((b) => pins(b, claim.lock.field, claim.lock.value))) return;
  const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
  if (ages.every((a) => a.length > 0)) {
    out.recoveries.push({ write, lock: claim.lock, claim, timePredicates: ages.flat(), flaws: [] });
    return;
  }
  // A take-over decided in JavaScript: the way to the delete judges the row's age (`if (lock.when + lock.ttl >=
  // now) return`), and the delete compares a column with the value read (`unique: lock.unique`), so only a taker
  // that saw this very holder removes it (Apostrophe's lock module, shared corpus dC02).
  // The same delete by the row's name alone is a take-over too, but two takers that both judged the row stale both
  // delete, and the second removes the lock the first has just taken (`check-in-js`, conditional-recovery's).
  if (
    write.effect === "delete" &&
    branches.every((b) => comparesValueRead(b) || identityFields(b).length > 0 || claim.keyed === true)
  ) {
    const aging = mod.guards(write).filter((g) => g.judgesAge && g.timeFields.length > 0);
    const timeFields = aging.flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
    if (aging.length > 0 && !isOverride(write.node)) {
      const check: Check = { kind: "if", node: aging[0]!.test, timeFields };
      out.recoveries.push({
        write,
        lock: claim.lock,
        claim,
        timePredicates: timeFields,
        flaws: branches.every(comparesValueRead) ? [] : ["check-in-js"],
        check,
      });
      return;
    }
  }
  // A delete of the row, or a write that clears a lease column the claim stamped (`leaseUntil: new Date(0)`).
  // A lease checked in JavaScript is freed by clearing any lock column it stamped (`locked: false` after
  // `locked: true, locked_at: now`).
  const leaseColumn = (f: string) =>
    claim.lease
      ? sameField(f, claim.lock.field) ||
        (claim.check !== undefined && hasLockWord(f) && claim.write.assignments.some((c) => sameField(c.field, f)))
      : mod.vocabulary.isTimeField(f) && claim.write.assignments.some((c) => sameField(c.field, f));
  // The claim stamps the lease with the clock plus a term and takes it over once that instant passed: the column
  // says until when the lease holds, whatever its name, and setting it to the clock ends the lease.
  const until =
    claim.lease === true && claim.assignment.value.kind === "now" && !isBareClock(claim.assignment.valueNode);
  const releases = write.effect === "delete" || write.assignments.some((a) => leaseColumn(a.field) && clears(a, until));
  // A keyed lock row is picked by its constant name, not by a value known at run time.
  const picked = (b: Branch) => claim.keyed === true || identityFields(b).length > 0;
  if (!releases || !branches.every(picked)) return;
  // An operator's override (`forceUnlock()`, `adminRelease()`) frees whatever holds the row, on purpose.
  if (isOverride(write.node)) return;
  const stamped = (f: string) =>
    mod.vocabulary.isTimeField(f) &&
    claim.write.assignments.some((a) => sameField(a.field, f) && a.value.kind !== "static" && !clears(a));
  // A lock row created per acquisition after a lookup (`unenforced`) and released by a whole unique key of its
  // table beyond what it was looked up by (`documentId`, or (transactionId, userId) where it was looked up by
  // transactionId) names that acquisition's own row: a later holder creates a row of its own.
  const ownRow = (b: Branch) =>
    claim.unenforced !== undefined &&
    claim.unenforced.keys.some(
      (k) =>
        k.length > 0 &&
        !k.every((f) => claim.unenforced!.fields.some((g) => sameField(f, g))) &&
        k.every((f) => identityFields(b).some((g) => sameField(f, g))),
    );
  const ownerChecked = branches.every(
    (b) => ownerPinned(b, undefined, mod.vocabulary) || identityFields(b).some(stamped) || ownRow(b),
  );
  out.releases.push({ write, claim, ownerChecked });
}

/** Where a write judges age outside its filter: a JS check about this lock, or an earlier stale scan of it. */
function ageCheckOf(mod: Module, write: StateWrite, claim: Claim, scans: readonly StaleScan[]): Check | undefined {
  const { field, value } = claim.lock;
  const aging = mod.guards(write).filter((g) => g.judgesAge);
  // The checks together must admit the claimed value: `if (job.status !== "PENDING") return` makes it not about V.
  if (aging.length > 0 && !allBranchesExclude(mod.pathCondition(write), field, value)) {
    const first = aging[0]!;
    const timeFields = aging.flatMap((g) => g.timeFields.map((f) => ({ field: f, node: g.test as Node })));
    return { kind: "if", node: first.test, timeFields };
  }
  const earlier = new Set(mod.earlierReads(write.node, write.model));
  const scan = scans.find((s) => earlier.has(s.read) && sameField(s.field, field) && sameValue(s.value, value));
  return scan && { kind: "read", node: scan.read.node, timeFields: scan.timePredicates };
}

/**
 * `status: ok ? "COMPLETED" : "FAILED"`: a write by id whose every choice moves the row off the claimed value is
 * the holder's (a completion either way). No choice is judged as a reset, so it is never read as a recovery.
 */
function classifyChoice(
  mod: Module,
  write: StateWrite,
  claim: Claim,
  assignment: Assignment,
  branches: readonly Branch[],
  out: Classified,
): void {
  const { field, value } = claim.lock;
  const choices = staticChoices(mod.sourceCode, assignment.valueNode);
  if (!choices || choices.some((c) => sameValue(c, value))) return;
  if (branches.length === 0 || branches.every((b) => excludes(b, field, value))) return;
  if (!branches.every((b) => identityFields(b).some((f) => !sameField(f, field)))) return;
  const fenced =
    branches.every((b) => pins(b, field, value)) ||
    branches.some(isOpaque) ||
    branches.every((b) => ownerPinned(b, undefined, mod.vocabulary));
  out.holder.push({ write, claim, assignment, fenced });
}

function classifyAgainst(
  mod: Module,
  write: StateWrite,
  claim: Claim,
  scans: readonly StaleScan[],
  out: Classified,
): void {
  const { field, value } = claim.lock;
  const branches = mod.branchesOf(write);
  if (write.effect === "insert") return;
  if (claim.insert || claim.lease) return classifyLockRow(mod, write, claim, out);
  if (claim.insert || write.effect === "delete") {
    // Lock rows are freed by a sweeper or take-over judged by age; claimed rows by a delete pinned and judged by age.
    const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
    const timed = branches.length > 0 && ages.every((a) => a.length > 0);
    const applies = claim.insert || branches.every((b) => pins(b, field, value));
    if (timed && applies && !branches.some(isOpaque)) {
      out.recoveries.push({ write, lock: claim.lock, claim, timePredicates: ages.flat(), flaws: [] });
    }
    return;
  }
  const assignment = write.assignments.find((a) => sameField(a.field, field));
  if (!assignment) return;
  if (assignment.value.kind !== "static") return classifyChoice(mod, write, claim, assignment, branches, out);
  if (sameValue(assignment.value.value, value)) return;
  if (branches.length === 0 || branches.every((b) => excludes(b, field, value))) return; // never touches claimed rows
  const opaque = branches.some(isOpaque);
  const pinned = branches.every((b) => pins(b, field, value));
  const ages = branches.map((b) => agePredicates(b, mod.vocabulary));
  const timed = ages.every((a) => a.length > 0);
  const timePredicates = ages.flat();
  const identified = branches.every((b) => identityFields(b).some((f) => !sameField(f, field)));
  const target = assignment.value.value;
  const resets = isReset(target, claim.lock, mod.vocabulary);
  // Code the claim runs after itself (its own deadline, its completion) is the holder's, not a recoverer's.
  const sameUnitAfterClaim =
    unitOf(write.node) === unitOf(claim.write.node) && write.node.range[0] > claim.write.node.range[1];
  const recovery = (flaws: RecoveryFlaw[], check?: Check): void => {
    out.recoveries.push({ write, lock: claim.lock, claim, timePredicates, flaws, ...(check ? { check } : {}) });
  };

  if (pinned && timed) return recovery([]);
  if (timed) {
    if (resets && !opaque) recovery(["missing-status"]);
    return;
  }
  if (resets && !sameUnitAfterClaim) {
    const check = ageCheckOf(mod, write, claim, scans);
    // Age judged in JS, then a compare-and-set on what was read (`status: run.status`, `version: run.version`):
    // the write fails if anything moved in between, so the recovery is race-safe.
    if (check)
      return recovery(
        opaque || branches.every((b) => ownerPinned(b, field, mod.vocabulary)) ? [] : ["check-in-js"],
        check,
      );
  }
  if (identified) {
    const fenced = pinned || opaque || branches.every((b) => ownerPinned(b, undefined, mod.vocabulary));
    out.holder.push({ write, claim, assignment, fenced });
    return;
  }
  if (pinned && resets && !opaque) recovery(["missing-time"]);
}

/**
 * Where code runs while a lock is held, by the module's calls: after the acquire in its own function, in the
 * functions it reaches, and for a helper that takes the lock (`claimExport(id)`, `withLock(key, work)`), in its
 * callers after the call or in the callbacks handed to it.
 */
function holdingIn(shape: ModuleShape): Holding {
  let graph: CallGraph | undefined;
  const named = (name: string) => shape.functions.filter((fn) => functionName(fn) === name);
  return {
    after(acquire, effect) {
      const acquireUnit = unitOf(acquire);
      const effectUnit = unitOf(effect);
      if (effectUnit === acquireUnit) return effect.range[0] > acquire.range[1];
      graph ??= new CallGraph(shape);
      if (graph.reachable(acquireUnit).has(effectUnit)) return true;
      // A claim helper's caller: `if (!(await claimExport(id))) return; …; await finish(id)`, or
      // `await withLock(key, async () => { … })`.
      return graph
        .callSites(acquireUnit)
        .some(
          (site) =>
            (site.unit === effectUnit && (effect.range[0] > site.after || insideCallback(site.call, effect))) ||
            (site.unit !== effectUnit && graph!.reachable(site.unit).has(effectUnit)),
        );
    },
    within(call, effect) {
      if (call.type !== "CallExpression") return false;
      if (insideCallback(call, effect)) return true;
      graph ??= new CallGraph(shape);
      const effectUnit = unitOf(effect);
      return call.arguments.some(
        (arg) => arg.type === "Identifier" && named(arg.name).some((fn) => graph!.reachable(fn).has(effectUnit)),
      );
    },
  };
}

/**
 * A write of the claim's own function that nothing awaited since the claim: `const job = await claim(); if
 * (!handler) { await markFailed(job.id); return; }`. The holder cannot have outlived its claim in between (no other
 * work ran), so there is no newer holder to overwrite. An await anywhere between the two in the source counts, and
 * so does any await of a loop that holds the write and not the claim (a later turn of it runs after that await).
 */
function beforeAnyWait(claim: Node, write: Node): boolean {
  const fn = enclosingFunction(claim);
  if (!fn || enclosingFunction(write) !== fn || write.range[0] < claim.range[1]) return false;
  let loop: Node | undefined;
  for (let p = write.parent; p && p !== fn; p = p.parent) {
    if (/^(For|ForIn|ForOf|While|DoWhile)Statement$/.test(p.type) && !contains(p, claim)) loop = p;
  }
  const from = loop ? Math.min(loop.range[0], claim.range[1]) : claim.range[1];
  const to = loop ? Math.max(loop.range[1], write.range[0]) : write.range[0];
  let waits = false;
  if (!fn.body) return false;
  walk(fn.body, (n) => {
    if (waits || n.range[1] <= from || n.range[0] >= to) return false;
    if (n !== fn && isFunction(n)) return false;
    if (
      (n.type === "AwaitExpression" || n.type === "YieldExpression" || (n.type === "ForOfStatement" && n.await)) &&
      n.range[0] >= from &&
      n.range[1] <= to
    )
      waits = true;
    return undefined;
  });
  return !waits;
}

/** `effect` sits in a function handed to `call` as an argument. */
function insideCallback(call: Node, effect: Node): boolean {
  if (call.type !== "CallExpression") return false;
  return call.arguments.some(
    (arg) => isFunction(arg) && arg.range[0] <= effect.range[0] && effect.range[1] <= arg.range[1],
  );
}

export function buildFacts(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  shape: ModuleShape,
  vocabulary: ResolvedVocabulary,
  /** The key-value ops the module's calls of its own helpers make (src/core/summaries/). */
  helperOps: readonly KvOp[] = [],
  /** The lines of claims the audit found recovered by another module (`settings.locksRecoveredElsewhere`). */
  recoveredElsewhere: ReadonlySet<number> = new Set(),
  /** The unique keys the project's schemas declare (`settings.locksUniqueKeys`, the audit's). */
  uniqueKeys: UniqueKeyMap = new Map(),
): Omit<
  LockFacts,
  "held" | "helpers" | "importedRowReleases" | "importedClaims" | "ignoredAcquireFailures" | "lockTables"
> {
  vocabulary = withLeasedValues(
    withValuesHeldAcrossWork(withHeldValues(withClockedFields(vocabulary, accesses), accesses), accesses),
    accesses,
  );
  const mod = new Module(sourceCode, accesses, vocabulary, uniqueKeys);
  const direct = mod.writes.flatMap((w) => findClaims(mod, w));
  const born = mod.writes
    .filter((w) => w.effect === "insert" && w.onConflict === undefined)
    .flatMap((w) => findBornClaims(mod, w, direct));
  // A value the module itself works off in bulk is a queue state, not a lock (workedOffInBulk).
  const claims = [...direct, ...born].filter((c) => !workedOffInBulk(mod, c));
  // A locking read's judgment goes with the writes made under it (underLockingReads), not a scan of its own.
  const staleScans = mod.reads.filter((r) => !r.locking).flatMap((r) => findStaleScans(sourceCode, r, vocabulary));

  const classified: Classified = { recoveries: [], holder: [], releases: [] };
  if (claims.length > 0) {
    const claimWrites = new Set(claims.map((c) => c.write));
    for (const w of mod.writes) {
      if (claimWrites.has(w)) continue;
      for (const claim of claims) {
        if (normalizeModel(claim.write.model) !== normalizeModel(w.model)) continue;
        classifyAgainst(mod, w, claim, staleScans, classified);
      }
    }
  }

  // Holder writes count only where the claiming code reaches them, and, in the claim's own function, after it; or,
  // in a repository module, in another function of its API: a module that exports the claim (`claimBatch`) and the
  // writes that end it by id (`settleSuccess(id)`) is called by a worker elsewhere that holds the row between them.
  const holding = holdingIn(shape);
  // The exported function a node belongs to, through the callbacks it hands on (`.then(() => …)`).
  const api = (node: Node) => {
    for (let fn = enclosingFunction(node); fn; fn = fn.parent ? enclosingFunction(fn.parent) : undefined) {
      if (isExported(sourceCode.ast, fn)) return fn;
    }
    return undefined;
  };
  const holderWrites = classified.holder
    .filter(
      (h) =>
        holding.after(h.claim.write.node, h.write.node) ||
        (api(h.claim.write.node) !== undefined &&
          api(h.write.node) !== undefined &&
          api(h.write.node) !== api(h.claim.write.node)),
    )
    .map((h) => (beforeAnyWait(h.claim.write.node, h.write.node) ? { ...h, beforeAnyWait: true } : h));

  // An inserted lock row whose table also has a lease take-over (the row is created once, then taken over by an
  // update once its lease has passed): that take-over is the row's way out when its holder dies.
  for (const claim of claims) {
    if (!claim.insert || claim.takeover.length > 0) continue;
    const lease = claims.find(
      (c) =>
        c !== claim && c.takeover.length > 0 && normalizeModel(c.write.model) === normalizeModel(claim.write.model),
    );
    if (lease)
      classified.recoveries.push({
        write: lease.write,
        lock: claim.lock,
        claim,
        timePredicates: lease.takeover,
        flaws: [],
      });
  }

  const byClaim = new Map<Claim, Recovery[]>();
  for (const r of classified.recoveries) {
    const list = byClaim.get(r.claim) ?? [];
    list.push(r);
    byClaim.set(r.claim, list);
  }
  // A repository module's exported finder of stuck rows, read by no write of its own: its caller recovers them.
  const handedOut = (claim: Claim): StateRead | undefined => {
    const { field, value } = claim.lock;
    return mod.reads.find((r) => {
      if (r.locking || normalizeModel(r.model) !== normalizeModel(claim.write.model)) return false;
      // A count or an existence test of stuck rows (a dashboard, a health check) hands no rows to anyone.
      if (/count|exist|aggregate/i.test(r.operation)) return false;
      const fn = api(r.node);
      if (
        !fn ||
        !toBranches(r.filter).some(
          (b) => !isOpaque(b) && pins(b, field, value) && agePredicates(b, vocabulary).length > 0,
        )
      )
        return false;
      return !mod.writes.some((w) => enclosingFunction(w.node) === fn && w.node.range[0] > r.node.range[1]);
    });
  };
  const kv = buildKvFacts(sourceCode, accesses, vocabulary, helperOps);
  let sweeps: Recovery[] | undefined;
  const objects = accesses.filter((a): a is ObjectWrite => a.access === "object");
  /** `field` of `model` is stamped (written with a value, not cleared) by claims only, or by claims and creations. */
  const stampedOnly = (model: string, field: string, orCreated: boolean): boolean => {
    const claimWrites = new Set(claims.map((c) => c.write));
    let stamped = false;
    for (const w of mod.writes) {
      if (
        normalizeModel(w.model) !== normalizeModel(model) ||
        !w.assignments.some((a) => sameField(a.field, field) && !clears(a))
      )
        continue;
      if (!claimWrites.has(w) && !(orCreated && w.effect === "insert")) return false;
      stamped = true;
    }
    return stamped;
  };
  return {
    kv,
    heldEffects: buildHeldEffects({
      sourceCode,
      vocabulary,
      claims,
      holderWrites,
      writes: mod.writes,
      objects,
      kv,
      holding,
    }),
    writes: mod.writes,
    reads: mod.reads,
    staleScans,
    claims,
    recoveries: classified.recoveries,
    holderWrites,
    untakenReleases: holderWrites.flatMap((h) => {
      const exit = exitBeforeClaim(sourceCode, h);
      return exit ? [{ claim: h.claim, release: h.write, exit }] : [];
    }),
    rowReleases: classified.releases,
    keyDerivedHolders: keyDerivedHolders(sourceCode, claims, vocabulary),
    renewals: buildRenewals(
      sourceCode,
      { kv, writes: mod.writes, claims, releases: classified.releases.map((r) => r.write) },
      shape,
      vocabulary,
    ),
    recoveriesOf: (claim) => byClaim.get(claim) ?? [],
    sweeps: () => {
      if (!sweeps) {
        const own = new Set(claims.map((c) => lockKeyText(c.lock)));
        sweeps = buildForeignRecoveries(sourceCode, accesses, vocabulary).filter((r) => !own.has(lockKeyText(r.lock)));
      }
      return sweeps;
    },
    // A reset with no age test takes every in-progress row at once: a boot-time reset (a single instance's holders
    // are dead by then), or a sweep that conditional-recovery reports for taking live work. Neither leaves a live
    // holder a newer one to overwrite until it judges age.
    staleRowsHandedOut: handedOut,
    answeredHere: (claim) =>
      claim.takeover.length > 0 ||
      (byClaim.get(claim) ?? []).length > 0 ||
      handedOut(claim) !== undefined ||
      recoveredByDirective(sourceCode, claim.write.node) !== undefined,
    stampedOnlyByClaims: (model, field) => stampedOnly(model, field, false),
    stampedOnlyAtCreationOrClaim: (model, field) => stampedOnly(model, field, true),
    keptMoving: (model, claim) => keptMoving(mod.writes, claims, vocabulary, model, claim),
    clearedOutsideClaims: (model, field) => {
      const claimWrites = new Set(claims.map((c) => c.write));
      return mod.writes.some(
        (w) =>
          !claimWrites.has(w) &&
          normalizeModel(w.model) === normalizeModel(model) &&
          w.assignments.some((a) => sameField(a.field, field) && clears(a)),
      );
    },
    changesHands: (claim) =>
      claim.takeover.length > 0 ||
      hasTakeoverWrite(claim, mod.writes, vocabulary) ||
      handedOut(claim) !== undefined ||
      (byClaim.get(claim) ?? []).some((r) => !r.flaws.includes("missing-time")) ||
      recoveredElsewhere.has(claim.write.node.loc.start.line) ||
      recoveredByDirective(sourceCode, claim.write.node) !== undefined,
  };
}

/**
 * `try { const lock = await find(…); if (lock.is_running) return; await claim(…); … } finally { await release(…) }`:
 * the way out taken when the row is found held, before the claim, in a `try` whose `finally` holds the holder's
 * write that frees the row. Only a way out under a test of the lock's own field counts (one taken when nobody holds
 * it frees nothing that matters).
 */
function exitBeforeClaim(sourceCode: SourceCode, h: HolderWrite): Node | undefined {
  const { claim, write } = h;
  if (h.assignment.value.kind !== "static" || sameValue(h.assignment.value.value, claim.lock.value)) return undefined;
  for (let t: Node | undefined = write.node.parent; t && !isFunction(t); t = t.parent) {
    if (t.type !== "TryStatement" || !contains(t.finalizer, write.node) || !contains(t.block, claim.write.node))
      continue;
    const exit = exitWhenHeld(sourceCode, t.block, claim.write.node, claim.lock.field);
    if (exit) return exit;
  }
  return undefined;
}

/** A claim's lock as text, models and fields compared loosely: `job\0status\0RUNNING`. */
function lockKeyText(lock: LockKey): string {
  return `${normalizeModel(lock.model)}\0${normalizeName(lock.field)}\0${normalizeName(String(lock.value.value))}`;
}

/**
 * For the project-wide audit (src/audit/): the recoveries this module offers to claims made in *other* modules.
 * Every in-progress value a write's filter pins (`status = RUNNING`) stands for a claim made elsewhere, and the
 * module's writes are classified against it exactly as against a claim of its own; a delete from a lock table
 * stands for a lock row inserted elsewhere. Run only by the audit, never by the rules.
 */
export function buildForeignRecoveries(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  vocabulary: ResolvedVocabulary,
): Recovery[] {
  vocabulary = withLeasedValues(
    withValuesHeldAcrossWork(withHeldValues(withClockedFields(vocabulary, accesses), accesses), accesses),
    accesses,
  );
  const mod = new Module(sourceCode, accesses, vocabulary);
  const program = sourceCode.ast as unknown as Node;
  // A stand-in claim: no write of the module runs after it, in its unit or elsewhere.
  const standIn = (model: string, lock: LockKey, insert: boolean): Claim => {
    const write: StateWrite = {
      access: "write",
      store: "elsewhere",
      model,
      operation: "claim",
      filter: { kind: "and", items: [] },
      assignments: [],
      node: program,
    };
    return {
      write,
      lock,
      assignment: {
        field: lock.field,
        value: { kind: "static", value: lock.value },
        node: program,
        valueNode: program,
      },
      takeover: [],
      ...(insert ? { insert } : {}),
    };
  };
  const standIns = new Map<string, Claim>();
  for (const w of mod.writes) {
    if (w.effect === "delete" && hasLockWord(w.model)) {
      const key = `${normalizeModel(w.model)}\0row`;
      if (!standIns.has(key))
        standIns.set(
          key,
          standIn(w.model, { model: w.model, field: "row", value: { value: "held" }, valueText: "" }, true),
        );
    }
    for (const branch of mod.branchesOf(w)) {
      for (const atom of branch) {
        if ("opaque" in atom || (atom.op !== "eq" && atom.op !== "in") || !atom.pred.values) continue;
        for (const value of atom.pred.values) {
          if (!isLockAssignment(atom.pred.field, value, vocabulary)) continue;
          const key = `${normalizeModel(w.model)}\0${normalizeName(atom.pred.field)}\0${String(value.value)}`;
          if (standIns.has(key)) continue;
          const valueText = typeof value.value === "string" ? JSON.stringify(value.value) : String(value.value);
          standIns.set(key, standIn(w.model, { model: w.model, field: atom.pred.field, value, valueText }, false));
        }
      }
    }
  }
  // A read that picks rows stuck in an in-progress value by age (`find({ status: "in_progress", startedAt: { lt } })`)
  // stands for a claim made elsewhere just as a write's filter does: the writes after it move those rows.
  const scans = mod.reads.filter((r) => !r.locking).flatMap((r) => findStaleScans(sourceCode, r, vocabulary));
  for (const scan of scans) {
    const key = `${normalizeModel(scan.read.model)}\0${normalizeName(scan.field)}\0${String(scan.value.value)}`;
    if (standIns.has(key)) continue;
    const valueText =
      typeof scan.value.value === "string" ? JSON.stringify(scan.value.value) : String(scan.value.value);
    standIns.set(
      key,
      standIn(scan.read.model, { model: scan.read.model, field: scan.field, value: scan.value, valueText }, false),
    );
  }
  if (standIns.size === 0) return [];
  const out: Classified = { recoveries: [], holder: [], releases: [] };
  for (const claim of standIns.values()) {
    for (const w of mod.writes) {
      if (normalizeModel(claim.write.model) === normalizeModel(w.model)) classifyAgainst(mod, w, claim, scans, out);
    }
  }
  // A sweep that judges age in JS on something outside the row (how long it has watched the row, a liveness key)
  // and then writes with the status pinned has no column it could repeat in the filter: a holder that finished in
  // between no longer matches. Only a by-id write, or one that drops the row's own age column, races.
  return out.recoveries.map((r) =>
    r.flaws[0] === "check-in-js" &&
    r.check?.kind === "if" &&
    mod.branchesOf(r.write).every((b) => pins(b, r.lock.field, r.lock.value))
      ? { ...r, flaws: [] }
      : r,
  );
}

/** `LockFacts.keptMoving`: the first heartbeat stamp of the model, by name or, for a claim's rows, by what it does. */
function keptMoving(
  writes: readonly StateWrite[],
  claims: readonly Claim[],
  vocabulary: ResolvedVocabulary,
  model: string,
  claim?: Claim,
): string | undefined {
  const m = normalizeModel(model);
  // A claim takes a lock (a lease stamping its time, this claim's own stamp): it renews nothing already held.
  const claimWrites = new Set(claims.map((c) => c.write));
  for (const w of writes) {
    if (claimWrites.has(w) || normalizeModel(w.model) !== m || (w.effect ?? "update") !== "update") continue;
    if (w.assignments.some((a) => vocabulary.isStateField(a.field) || vocabulary.isFlagField(a.field))) continue;
    const branches = toBranches(w.filter);
    // Not a write of rows in another state (a touch of PENDING rows moves nothing a holder owns).
    if (
      claim &&
      branches.every((b) =>
        b.some(
          (a) =>
            "pred" in a &&
            a.op === "eq" &&
            normalizeName(a.pred.field) === normalizeName(claim.lock.field) &&
            a.pred.values?.length === 1 &&
            !sameValue(a.pred.values[0]!, claim.lock.value),
        ),
      )
    )
      continue;
    // Holds only the claimed rows: every branch names the holder or pins the claimed value on the claimed field.
    // Stricter than renewals' fenced(), which takes any state field holding that value: here the name is not there
    // to vouch for the field (`status: "PENDING"` beside a claim of `refundStatus = PENDING` is another lifecycle).
    const held =
      claim !== undefined &&
      branches.length > 0 &&
      branches.every((b) =>
        b.some(
          (a) =>
            "pred" in a &&
            (a.op === "eq" || a.op === "in") &&
            (vocabulary.isOwnerField(a.pred.field) ||
              (normalizeName(a.pred.field) === normalizeName(claim.lock.field) &&
                (a.pred.values ?? []).some((v) => sameValue(v, claim.lock.value)))),
        ),
      );
    const stamped = w.assignments.find(
      (a) =>
        a.value.kind === "now" &&
        (vocabulary.isProgressTimeField(a.field) || (held && !vocabulary.isStartTimeField(a.field))),
    );
    if (stamped) return stamped.field;
  }
  return undefined;
}
