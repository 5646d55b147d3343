/**
 * The module being classified (`Module`): its reads and writes, with flags written as numbers read as booleans
 * (`FlagValues`), writes made under locking reads, and documents attributed to a model by their variable's name; and
 * what its JS checks and earlier reads establish on the way to a write.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  AdvisoryLockOp,
  Condition,
  Node,
  StateAccess,
  StateRead,
  StateWrite,
  StaticValue,
} from "../../model/accesses.js";
import { predicateValue, sessionsShared } from "../../model/accesses.js";
import type { Guard } from "../../model/claims.js";
import { type ResolvedVocabulary, normalizeName } from "../../model/settings.js";
import { identityFields, toBranches, type Branch } from "../../model/conditions.js";
import { describeTest, guardsOf, pathCondition } from "../../reading/guards.js";
import { normalizeModel, sameField } from "../../model/names.js";
import { enclosingFunction, isFunction, serializableTransaction, unitOf } from "../../reading/units.js";
import { contains } from "../../reading/ast.js";
import { returnedValues } from "../../reading/calls.js";
import { findVariable, thenParameterOf, unwrap } from "../../reading/values.js";
import { walk } from "../../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Variable names that say nothing about which model a row belongs to (`row`, `doc`, `result`): a row of any model may
 * be held in one, so a JS check of it may be about the written model.
 */
const ANY_MODEL_ROW_NAMES =
  /^(row|record|item|entity|existing|current|found|doc|document|data|result|res|entry|model|obj|object|it|x)$/;

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
 * A write after an advisory lock taken earlier in its unit on one connection or transaction
 * (`SELECT pg_try_advisory_xact_lock(…)`, then a read and an upsert of the lease row): every caller of that lock
 * runs its read and write one after another, so the read's answer still holds when it writes (blind-9 FF10). A
 * session lock sent through a pool holds nothing for the next query, which may take another connection.
 */
function underAdvisoryLock(
  write: StateWrite,
  advisory: readonly AdvisoryLockOp[],
  rowLocks: readonly StateRead[],
): StateWrite {
  if (write.underLock || (advisory.length === 0 && rowLocks.length === 0)) return write;
  const unit = unitOf(write.node);
  const before = (n: Node) => unitOf(n) === unit && n.range[1] <= write.node.range[0];
  const held = advisory.some((a) => before(a.node)) || rowLocks.some((r) => before(r.node));
  return held ? { ...write, underLock: true } : write;
}

/**
 * A row of another table locked by identity earlier in a transaction (`SELECT id FROM users WHERE id = $1 FOR
 * UPDATE`, then the user's items read and claimed): a mutex, as an advisory lock is. Every caller that takes it runs
 * its reads and writes one after another, so what it read still holds when it writes (blind-15 A15a07).
 */
function rowMutexes(reads: readonly StateRead[]): StateRead[] {
  return reads.filter(
    (r) =>
      r.locking && toBranches(r.filter).every((b) => identityFields(b).length > 0 && !b.some((a) => "opaque" in a)),
  );
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

export class Module {
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
    const advisory = accesses.filter(
      (a): a is AdvisoryLockOp => a.access === "advisory" && a.fn === "lock" && !sessionsShared(a.via),
    );
    const mutexes = rowMutexes(this.reads);
    this.writes = (locking.length === 0 ? writes : writes.map((w) => underLockingReads(w, locking))).map((w) =>
      underAdvisoryLock(w, advisory, mutexes),
    );
    for (const r of this.reads) this.readByCall.set(r.node, r);
  }

  /** The source of the value an assignment or a predicate stands for: a property's value, else the expression. */
  valueText(n: Node): string {
    const u = unwrap(n);
    return this.sourceCode.getText(u.type === "Property" ? (u.value as Node) : u);
  }

  /** The atom compares a column with the very value one of `assignments` writes there (`lockedBy: workerId`). */
  pinsWritten(atom: Branch[number], assignments: readonly Assignment[]): boolean {
    return (
      !("opaque" in atom) &&
      atom.op === "eq" &&
      atom.pred.values === undefined &&
      assignments.some(
        (a) =>
          sameField(a.field, atom.pred.field) &&
          this.valueText(a.valueNode) === this.valueText(predicateValue(atom.pred)),
      )
    );
  }

  /**
   * The columns the branch pins to a list of keys (`id in ids`, `id = ANY($1)`): a list of rows by what names them,
   * not a set of states or flags. `runTime`: only lists known at run time (the ids the caller holds).
   */
  keyListFields(branch: Branch, runTime = false): string[] {
    return branch.flatMap((atom) =>
      !("opaque" in atom) &&
      atom.op === "in" &&
      (!runTime || atom.pred.values === undefined) &&
      !this.vocabulary.isStateField(atom.pred.field) &&
      !this.vocabulary.isFlagField(atom.pred.field)
        ? [atom.pred.field]
        : [],
    );
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
    return ANY_MODEL_ROW_NAMES.test(n) || n.includes(m) || m.includes(n);
  }

  /**
   * The read whose result a variable holds: `const job = await find…` (or a call chained on the read, `.toArray()`),
   * the parameter of `find….then((job) => …)`, a destructured row (`const [job] = await select…`,
   * `const { rows: [job] } = await pool.query(…)`), or a row taken from a result another variable holds
   * (`const job = res.rows[0]`).
   */
  readHeldBy(id: TSESTree.Identifier, depth: number): StateRead | undefined {
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
    // A row a helper of the module reads and hands back (`const existing = await findLock(task)`, where `findLock`
    // returns `res.docs[0] ?? null` of its read): the read the helper made.
    if (n.type === "CallExpression") {
      for (const value of returnedValues(this.sourceCode, n)) {
        let v = unwrap(value);
        if (v.type === "AwaitExpression") v = unwrap(v.argument);
        while (v.type === "LogicalExpression" && (v.operator === "??" || v.operator === "||")) v = unwrap(v.left);
        const direct = this.readByCall.get(v);
        if (direct) return direct;
        while (v.type === "MemberExpression") v = unwrap(v.object);
        const read = v.type === "Identifier" ? this.readHeldBy(v, depth + 1) : undefined;
        if (read) return read;
      }
      return undefined;
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

/** The `if` tests between a read and a write of the same function, read for age (`describeTest`). */
export function checksBetween(mod: Module, from: Node, to: Node): Guard[] {
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

/** Normalised model name -> the unique keys its schema declares, each a list of fields. */
export type UniqueKeyMap = ReadonlyMap<string, readonly (readonly string[])[]>;
