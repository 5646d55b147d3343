/**
 * TypeORM: repositories, the EntityManager, the query builder and active-record saves.
 *
 * Writes, each recognised at exactly one call:
 * - `repo.update(criteria, partial)`: criteria is a find-options object (`{ id, status: Not(X) }`, with the find
 *   operators `Not`, `In`, `LessThan`, `IsNull`… and `Raw((alias) => …)`), an array of them, an id, or an array of ids.
 *   The repository is `this.jobRepository`, `@InjectRepository(Job) private jobs`, a `Repository<Job>`,
 *   `dataSource.getRepository(Job)`, `manager.withRepository(repo)`, or a `BaseEntity` class (`Job.update(…)`).
 * - `manager.update(Job, criteria, partial)` on an EntityManager (`dataSource.manager`, `queryRunner.manager`, the
 *   callback parameter of `transaction(async (manager) => …)`, an `EntityManager`-typed binding).
 * - A query builder chain rooted in `createQueryBuilder(…)` with `.update(…)`: recognised at its `.execute()` call
 *   only. `.set({…})` gives the assignments; `.where`/`.andWhere`/`.orWhere` give the filter, from an object or from
 *   an SQL fragment (`status = :status`, `id IN (:...ids)`, `updated_at < NOW() - INTERVAL '5 minutes'`) read by the
 *   project's SQL parser as the WHERE of a SELECT from the builder's alias (`translateWhere`, core/languages/sql/statements.ts),
 *   one clause at a time; a fragment that does not parse makes the filter opaque.
 * - Active record: `job.status = X; await repo.save(job)` (or `manager.save(job)`, `job.save()`): an update of the
 *   entity's row (`id` = a run-time value) assigning the `job.field = value` statements directly before the save.
 *
 * Reads: `findOne`/`findOneOrFail`/`find`/`findAndCount`/`count`/`exists({ where })`, the `…By(where)` forms, and
 * query builder reads (`getOne`, `getMany`…). A read holding a pessimistic write lock (`lock: { mode:
 * "pessimistic_write" }`, `.setLock("pessimistic_write")`) keeps its rows as it read them until the transaction ends:
 * a later write of the same model in the same function gets the read's filter and an opaque part (the row lock),
 * and the read itself is kept with an opaque filter (its filter is judged once, in those writes).
 *
 * Not TypeORM: Sequelize `Model.update(values, { where })` (a `where` or an options bag in the second argument),
 * Prisma (one argument), Mongo/Mongoose (`$set`, `_id`-only keys), and any file that imports Sequelize, Mongoose,
 * MongoDB or MikroORM without importing TypeORM. Receivers only known by name (`Job.update`, `this.jobs`) need
 * evidence: an import from `typeorm`, a find operator in the call, or a `BaseEntity` class in the file.
 */
import { appendProperty, importedName, propertyKey } from "../../core/reading/edits.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  AssignedValue,
  Condition,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StateAccess,
  StateRead,
  StateWrite,
  TextEdit,
} from "../../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { isFunction } from "../../core/reading/units.js";
import { evaluate, findVariable, keyName, unwrap } from "../../core/reading/values.js";
import {
  BUILDER_READS,
  BY_READS,
  FOREIGN_FIND_KEYS,
  OPTION_KEYS,
  OPTION_READS,
  STORE,
  WRITE_LOCKS,
  entityName,
  isEntityTarget,
  keysOf,
  objectArgument,
  pred,
  property,
  WRITE_METHODS,
} from "./shared.js";
import { exportRef, flavorOf, resolveTarget, typeName } from "./targets.js";
import { Seen, parseCriteria, parseWhere } from "./criteria.js";
import { Builder, WHERE_LINKS, builderFilter, builderOf } from "./builder.js";
import { assignedValue } from "../../core/reading/assignments.js";
import { calleeName } from "../../core/reading/ast.js";

// ---- assignments ----

/** `{ status: X, startedAt: new Date(), lease: { owner } }`: one assignment per field, embedded ones as `lease.owner`. */
function parsePartial(ctx: RecognizerContext, obj: TSESTree.ObjectExpression, prefix = ""): Assignment[] {
  const out: Assignment[] = [];
  for (const p of obj.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    if (key === undefined) continue;
    const value = unwrap(p.value);
    if (value.type === "ObjectExpression") out.push(...parsePartial(ctx, value, `${prefix}${key}.`));
    else out.push({ field: prefix + key, value: assignedValue(ctx.sourceCode, value), node: p, valueNode: p.value });
  }
  return out;
}

/** A partial entity, not a Sequelize or Mongo options bag or update document. */
function isPartialEntity(obj: TSESTree.ObjectExpression): boolean {
  return keysOf(obj).every((k) => !OPTION_KEYS.has(k) && !k.startsWith("$"));
}

// ---- edits ----

function fieldKey(field: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(field) ? field : JSON.stringify(field);
}

function insertProperty(ctx: RecognizerContext, obj: TSESTree.ObjectExpression, text: string): TextEdit {
  return appendProperty(ctx.sourceCode, obj, text);
}

function predicateText(ctx: RecognizerContext, field: string, op: "eq" | "ne", valueText: string): string | undefined {
  if (field.includes(".")) return undefined;
  if (op === "eq") return `${fieldKey(field)}: ${valueText}`;
  const not = exportRef(ctx, "Not");
  return not ? `${fieldKey(field)}: ${not}(${valueText})` : undefined;
}

/** Adds `field: X` / `field: Not(X)` to an inline criteria object, or turns an id criteria into `{ id, field: … }`. */
function criteriaEdit(
  ctx: RecognizerContext,
  criteria: Node,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  const text = predicateText(ctx, field, op, valueText);
  if (!text) return undefined;
  const n = unwrap(criteria);
  if (n.type === "ObjectExpression") {
    return property(n, field) || n.properties.some((p) => p.type !== "Property")
      ? undefined
      : insertProperty(ctx, n, text);
  }
  const idText = ctx.sourceCode.getText(criteria);
  const id = n.type === "Identifier" && n.name === "id" ? "id" : `id: ${idText}`;
  return { range: [criteria.range[0], criteria.range[1]], text: `{ ${id}, ${text} }` };
}

/** Adds `.andWhere("field <> :field", { field: X })` after the builder's last where clause (or `.where(…)` after `.set`). */
function builderEdit(
  ctx: RecognizerContext,
  b: Builder,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  const links = b.links.slice(b.root + 1);
  if (!/^[A-Za-z_]\w*$/.test(field) || links.some((l) => /^orWhere/.test(l.name))) return undefined;
  const paramUsed = new RegExp(`:(?:\\.\\.\\.)?${field}\\b`);
  for (const l of links) {
    if (!WHERE_LINKS.test(l.name) && l.name !== "setParameter" && l.name !== "setParameters") continue;
    const [first, second] = l.call.arguments;
    // `.where("a OR b").andWhere(c)` is `a OR (b AND c)`: an added condition would not guard every row.
    if (
      first &&
      (paramUsed.test(ctx.sourceCode.getText(first)) ||
        (WHERE_LINKS.test(l.name) && /\bOR\b/i.test(ctx.sourceCode.getText(first))))
    )
      return undefined;
    if (l.name === "setParameter" && first?.type === "Literal" && first.value === field) return undefined;
    const params = objectArgument(ctx, l.name === "setParameters" ? first : second);
    if (params && property(params, field)) return undefined;
  }
  const condition = `"${field} ${op === "eq" ? "=" : "<>"} :${field}", { ${field}: ${valueText} }`;
  const lastWhere = [...links].reverse().find((l) => WHERE_LINKS.test(l.name));
  if (lastWhere) return { range: [lastWhere.call.range[1], lastWhere.call.range[1]], text: `.andWhere(${condition})` };
  const anchor = [...links].reverse().find((l) => l.name === "set" || l.name === "update");
  return anchor && { range: [anchor.call.range[1], anchor.call.range[1]], text: `.where(${condition})` };
}

// ---- the calls ----

interface ReadResult {
  readonly read: StateRead;
  readonly locked: boolean;
}

function isWriteLock(ctx: RecognizerContext, node: Node | undefined): boolean {
  const v = node && node.type !== "SpreadElement" ? evaluate(ctx.sourceCode, node) : undefined;
  return typeof v?.value === "string" && WRITE_LOCKS.test(v.value);
}

/** `repo.findOne({ where })`, `repo.findOneBy(where)`, `manager.findOne(Job, { where })`. */
function recognizeRead(ctx: RecognizerContext, call: TSESTree.CallExpression, method: string): ReadResult | undefined {
  const callee = unwrap(call.callee) as TSESTree.MemberExpression;
  const flavor = flavorOf(ctx);
  const target = resolveTarget(ctx, callee.object);
  let args: readonly Node[] = call.arguments;
  let model: string | undefined;
  let strong = true;
  if (target?.kind === "manager") {
    if (!isEntityTarget(args[0])) return undefined;
    model = entityName(args[0]);
    args = args.slice(1);
  } else if (target?.kind === "repo") {
    model = target.model;
    strong = target.strong;
  }
  if (!model || args.length !== 1) return undefined;
  const seen: Seen = { operator: false, foreign: false };
  let filter: Condition;
  let locked = false;
  if (OPTION_READS.has(method)) {
    const options = objectArgument(ctx, args[0]);
    const where = options && property(options, "where");
    if (!options || !where || keysOf(options).some((k) => FOREIGN_FIND_KEYS.has(k))) return undefined;
    filter = parseWhere(ctx, seen, where.value);
    const lock = property(options, "lock");
    const lockObj = lock && objectArgument(ctx, lock.value);
    const mode = lockObj && property(lockObj, "mode");
    locked = mode !== undefined && isWriteLock(ctx, mode.value);
  } else {
    filter = parseWhere(ctx, seen, args[0]!);
  }
  if (seen.foreign || (!strong && !flavor.typeorm && !seen.operator && !flavor.baseEntities.has(model)))
    return undefined;
  return { read: { access: "read", store: STORE, model, operation: method, filter, node: call }, locked };
}

/** `createQueryBuilder(…)….where(…).getMany()`, and `.execute()` of a select. */
function recognizeBuilderRead(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  method: string,
): ReadResult | undefined {
  const b = builderOf(ctx, call);
  if (!b?.model) return undefined;
  const links = b.links.slice(b.root + 1);
  if (links.some((l) => /^(?:update|delete|softDelete|restore|insert|relation)$/.test(l.name))) return undefined;
  const { filter, seen } = builderFilter(ctx, b);
  if (seen.foreign) return undefined;
  const locked = links.some((l) => l.name === "setLock" && isWriteLock(ctx, l.call.arguments[0]));
  return { read: { access: "read", store: STORE, model: b.model, operation: method, filter, node: call }, locked };
}

/** `repo.update(criteria, partial)`, `manager.update(Job, criteria, partial)`. */
function recognizeUpdate(ctx: RecognizerContext, call: TSESTree.CallExpression): StateWrite | undefined {
  const callee = unwrap(call.callee) as TSESTree.MemberExpression;
  const args = call.arguments;
  if (args.some((a) => a.type === "SpreadElement")) return undefined;
  const flavor = flavorOf(ctx);
  const target = resolveTarget(ctx, callee.object);
  let model: string | undefined;
  let strong = true;
  let criteriaNode: Node;
  let partialNode: Node;
  if (args.length === 3 && target?.kind === "manager" && isEntityTarget(args[0])) {
    model = entityName(args[0]);
    criteriaNode = args[1]!;
    partialNode = args[2]!;
  } else if (args.length === 2 && target?.kind === "repo") {
    model = target.model;
    strong = target.strong;
    criteriaNode = args[0]!;
    partialNode = args[1]!;
  } else return undefined;
  if (!model) return undefined;
  const partial = objectArgument(ctx, partialNode);
  if (!partial || !isPartialEntity(partial)) return undefined;
  const seen: Seen = { operator: false, foreign: false };
  const filter = parseCriteria(ctx, seen, criteriaNode);
  if (seen.foreign || (!strong && !flavor.typeorm && !seen.operator && !flavor.baseEntities.has(model)))
    return undefined;
  const criteria = unwrap(criteriaNode);
  const editable =
    criteria.type === "ObjectExpression" || (filter.kind === "pred" && filter.op === "eq" && filter.node === criteria);
  return {
    access: "write",
    store: STORE,
    model,
    operation: "update",
    filter,
    assignments: parsePartial(ctx, partial),
    node: call,
    ...(editable
      ? { addPredicate: (field, op, valueText) => criteriaEdit(ctx, criteriaNode, field, op, valueText) }
      : {}),
    recoveryWrite: (spec) => recoveryWrite(ctx, callee.object, args.length === 3 ? args[0]! : undefined, spec),
    // `affected` is left undefined by drivers that do not count: only a 0 is "nothing".
    changedNothing: (result) => `${result}.affected === 0`,
  };
}

/**
 * `repo.update({ status: X, updatedAt: LessThan(…) }, { status: Y })` on the claim's own repository (or
 * `manager.update(Job, …)` on its manager), counted by `affected` (undefined for drivers that do not report it, so
 * `?? 0`). `LessThan` is the module's own import, or one added to its `typeorm` import.
 */
function recoveryWrite(
  ctx: RecognizerContext,
  client: Node,
  entity: Node | undefined,
  spec: RecoverySpec,
): RecoveryWrite | undefined {
  const local = exportRef(ctx, "LessThan");
  const lessThan = local ? { ref: local, edits: [] } : importedName(ctx.sourceCode, ["typeorm"], "LessThan");
  if (!lessThan) return undefined;
  const f = propertyKey(spec.field);
  const target = entity ? `${ctx.sourceCode.getText(entity)}, ` : "";
  return {
    call: `${ctx.sourceCode.getText(client)}.update(
  ${target}{ ${f}: ${spec.stuckText}, ${propertyKey(spec.timeField)}: ${lessThan.ref}(new Date(Date.now() - ${spec.threshold})) },
  { ${f}: ${spec.backText} },
)`,
    count: (result) => `${result}.affected ?? 0`,
    edits: lessThan.edits,
    client,
  };
}

/** `createQueryBuilder()….update(Job).set({…}).where(…).execute()`, recognised at `.execute()`. */
function recognizeBuilderUpdate(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  b: Builder,
): StateWrite | undefined {
  if (!b.model) return undefined;
  const links = b.links.slice(b.root + 1);
  const assignments: Assignment[] = [];
  for (const l of links) {
    if (l.name !== "set" && l.name !== "update") continue;
    const values = l.call.arguments.find((a) => objectArgument(ctx, a));
    const obj = values && objectArgument(ctx, values);
    if (obj) assignments.push(...parsePartial(ctx, obj));
  }
  if (assignments.length === 0) return undefined;
  const { filter, seen } = builderFilter(ctx, b);
  if (seen.foreign) return undefined;
  return {
    access: "write",
    store: STORE,
    model: b.model,
    operation: "update",
    filter,
    assignments,
    node: call,
    addPredicate: (field, op, valueText) => builderEdit(ctx, b, field, op, valueText),
  };
}

/** The statement `node` belongs to in its block, without crossing a function. */
function statementOf(node: Node): { stmt: Node; body: readonly Node[] } | undefined {
  let child: Node = node;
  let parent = node.parent;
  while (parent) {
    if (isFunction(parent)) return undefined;
    if (parent.type === "BlockStatement" || parent.type === "Program" || parent.type === "StaticBlock")
      return { stmt: child, body: parent.body };
    if (parent.type === "SwitchCase") return { stmt: child, body: parent.consequent };
    child = parent;
    parent = parent.parent;
  }
  return undefined;
}

/** `job.status = X`, `job.attempts += 1`, `Object.assign(job, { … })` as assignments, or undefined for any other statement. */
function entityAssignments(ctx: RecognizerContext, stmt: Node, name: string): Assignment[] | undefined {
  if (stmt.type !== "ExpressionStatement") return undefined;
  const e = unwrap(stmt.expression);
  const isEntity = (n: Node) => {
    const u = unwrap(n);
    return u.type === "Identifier" && u.name === name;
  };
  if (e.type === "AssignmentExpression" && e.left.type === "MemberExpression" && isEntity(e.left.object)) {
    const field = keyName(e.left.property, e.left.computed);
    if (!field) return undefined;
    const value: AssignedValue = e.operator === "=" ? assignedValue(ctx.sourceCode, e.right) : { kind: "other" };
    return [{ field, value, node: e, valueNode: e.right }];
  }
  if (e.type === "UpdateExpression" && e.argument.type === "MemberExpression" && isEntity(e.argument.object)) {
    const field = keyName(e.argument.property, e.argument.computed);
    return field ? [{ field, value: { kind: "other" }, node: e, valueNode: e }] : undefined;
  }
  if (e.type === "CallExpression" && e.arguments.length === 2 && e.arguments[0] && isEntity(e.arguments[0])) {
    const callee = unwrap(e.callee);
    const isAssign =
      callee.type === "MemberExpression" &&
      unwrap(callee.object).type === "Identifier" &&
      (unwrap(callee.object) as TSESTree.Identifier).name === "Object" &&
      keyName(callee.property, callee.computed) === "assign";
    const obj = isAssign ? objectArgument(ctx, e.arguments[1]) : undefined;
    return obj ? parsePartial(ctx, obj) : undefined;
  }
  return undefined;
}

/** The model an entity variable belongs to: its type, the read it came from, or the loop over such a read. */
function entityModel(ctx: RecognizerContext, id: TSESTree.Identifier, depth = 0): string | undefined {
  if (depth > 3) return undefined;
  const variable = findVariable(ctx.sourceCode, id);
  const def = variable?.defs[0];
  const fromCall = (node: Node | null | undefined): string | undefined => {
    let n = node && unwrap(node);
    if (n?.type === "AwaitExpression") n = unwrap(n.argument);
    if (n?.type === "Identifier") return entityModel(ctx, n, depth + 1);
    if (n?.type !== "CallExpression") return undefined;
    const callee = unwrap(n.callee);
    if (callee.type !== "MemberExpression") return undefined;
    const t = resolveTarget(ctx, callee.object);
    if (t?.kind === "repo") return t.model;
    if (t?.kind === "manager" && isEntityTarget(n.arguments[0])) return entityName(n.arguments[0]);
    return undefined;
  };
  if (def?.type === "Parameter" && def.name.type === "Identifier") {
    const t = typeName(def.name.typeAnnotation?.typeAnnotation);
    if (t && /^[A-Z]/.test(t.name)) return t.name;
  }
  if (def?.type === "Variable" && def.node.id.type === "Identifier") {
    const t = typeName(def.node.id.typeAnnotation?.typeAnnotation);
    if (t && /^[A-Z]/.test(t.name)) return t.name;
    if (def.node.init) return fromCall(def.node.init);
    const loop = def.node.parent?.parent;
    if (loop?.type === "ForOfStatement") return fromCall(loop.right);
  }
  return undefined;
}

/** The variable holds a new entity (`new Job()`, `repo.create(…)`, an object literal): saving it inserts a row. */
function isNewEntity(ctx: RecognizerContext, id: TSESTree.Identifier): boolean {
  const variable = findVariable(ctx.sourceCode, id);
  const def = variable?.defs[0];
  if (def?.type !== "Variable" || !def.node.init) return false;
  let init = unwrap(def.node.init);
  if (init.type === "AwaitExpression") init = unwrap(init.argument);
  if (init.type === "NewExpression" || init.type === "ObjectExpression") return true;
  return init.type === "CallExpression" && calleeName(init) === "create";
}

/** `job.status = X; await repo.save(job)`, `manager.save(Job, job)`, `job.save()`, `repo.save({ id, status: X })`. */
function recognizeSave(ctx: RecognizerContext, call: TSESTree.CallExpression): StateWrite | undefined {
  const callee = unwrap(call.callee) as TSESTree.MemberExpression;
  const args = call.arguments;
  const flavor = flavorOf(ctx);
  let entity: Node | undefined;
  let model: string | undefined;
  if (args.length === 0) {
    // Active record (`BaseEntity`): Mongoose documents and Sequelize instances have the same `save()`.
    if (!flavor.typeorm || flavor.foreign) return undefined;
    entity = callee.object;
  } else {
    const target = resolveTarget(ctx, callee.object);
    if (target?.kind === "repo") {
      if (!target.strong && !flavor.typeorm) return undefined;
      model = target.model;
      entity = args[0];
    } else if (target?.kind === "manager") {
      if (args.length >= 2 && isEntityTarget(args[0])) {
        model = entityName(args[0]);
        entity = args[1];
      } else entity = args[0];
    } else return undefined;
  }
  const e = entity && entity.type !== "SpreadElement" ? unwrap(entity) : undefined;
  if (!e) return undefined;
  if (e.type === "ObjectExpression") {
    // A plain object with its primary key updates that row; without one it inserts.
    const idProp = property(e, "id");
    if (!model || !idProp || !isPartialEntity(e)) return undefined;
    const rest = { ...e, properties: e.properties.filter((p) => p !== idProp) } as TSESTree.ObjectExpression;
    const assignments = parsePartial(ctx, rest);
    if (assignments.length === 0) return undefined;
    const filter = pred("id", "eq", undefined, idProp);
    return { access: "write", store: STORE, model, operation: "save", filter, assignments, node: call };
  }
  if (e.type !== "Identifier" || isNewEntity(ctx, e)) return undefined;
  model ??= entityModel(ctx, e) ?? e.name;
  const at = statementOf(call);
  if (!at) return undefined;
  const byField = new Map<string, Assignment>();
  const index = at.body.indexOf(at.stmt);
  const before: Assignment[][] = [];
  for (let i = index - 1; i >= 0; i--) {
    const got = entityAssignments(ctx, at.body[i]!, e.name);
    if (!got) break;
    before.unshift(got);
  }
  for (const a of before.flat()) byField.set(a.field, a);
  if (byField.size === 0) return undefined;
  const filter = pred("id", "eq", undefined, e);
  return {
    access: "write",
    store: STORE,
    model,
    operation: "save",
    filter,
    assignments: [...byField.values()],
    node: call,
  };
}

function recognizeAny(ctx: RecognizerContext, call: TSESTree.CallExpression): StateAccess | ReadResult | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression") return undefined;
  const method = keyName(callee.property, callee.computed);
  if (!method) return undefined;
  const flavor = flavorOf(ctx);
  if (flavor.foreign && !flavor.typeorm) return undefined;
  if (method === "update") return recognizeUpdate(ctx, call);
  if (method === "save") return recognizeSave(ctx, call);
  if (method === "execute") {
    const b = builderOf(ctx, call);
    if (!b) return undefined;
    const links = b.links.slice(b.root + 1);
    if (links.some((l) => l.name === "update")) return recognizeBuilderUpdate(ctx, call, b);
    return recognizeBuilderRead(ctx, call, method);
  }
  if (BUILDER_READS.has(method)) return recognizeBuilderRead(ctx, call, method);
  if (OPTION_READS.has(method) || BY_READS.has(method)) return recognizeRead(ctx, call, method);
  return undefined;
}

export const typeormRecognizer: Recognizer = {
  store: STORE,
  packages: { own: /^typeorm$/, family: /typeorm/i },
  methods: new Set([...WRITE_METHODS, ...OPTION_READS, ...BY_READS, ...BUILDER_READS]),
  recognize(call, ctx) {
    try {
      const r = recognizeAny(ctx, call);
      if (!r || !("locked" in r)) return r;
      // A pessimistic write lock: the writes after it write under its filter (core/facts, underLockingReads).
      return r.locked ? { ...r.read, locking: true } : r.read;
    } catch {
      return undefined; // an unexpected shape is not ours
    }
  },
};
