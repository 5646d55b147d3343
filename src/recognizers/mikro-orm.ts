/**
 * MikroORM: the EntityManager's native queries and reads, `em.nativeUpdate(Job, where, data)`,
 * `em.nativeDelete(Job, where)`, `em.insert(Job, data)`, `em.find|findOne|count(Job, where)`, and a repository's,
 * `jobRepository.nativeUpdate(where, data)`, `em.getRepository(Job).find(where)`. The entity is the class (or its
 * name) the call is given, or the repository's. Filters are MikroORM's FilterQuery, an object-filter dialect:
 * `$`-operators (`$ne`, `$in`, `$lt`), `$and`/`$or`/`$not`, a list as a field's value meaning IN, and a relation's
 * fields in a nested object (`owner: { id }` is `owner.id`); a bare value where the filter goes is a primary key.
 *
 * The receiver must be named like an EntityManager (`em`, `this.em`, `orm.em`, `entityManager`, `em.fork()`) or a
 * repository (`getRepository(Job)`, `jobRepository`, `this.jobRepo`): `find(Class, filter)` is common elsewhere.
 * The unit of work (`job.status = "RUNNING"; await em.flush()`) is not read here.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, RecoverySpec, RecoveryWrite, StateAccess, StateWrite } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { objectAssignments } from "../core/reading/assignments.js";
import { expressionName, methodOf } from "../core/reading/ast.js";
import { appendProperty, jsCutoff, propertyKey } from "../core/reading/edits.js";
import { catchesDuplicate } from "../core/reading/failures.js";
import { readFilterArgument, type ObjectFilterDialect } from "../core/reading/object-filters.js";
import { evaluate, findProperty, objectLiteral, unwrap } from "../core/reading/values.js";

const STORE = "mikro-orm";
const UPDATES = new Set(["nativeUpdate"]);
const DELETES = new Set(["nativeDelete"]);
const INSERTS = new Set(["insert"]);
const READS = new Set(["find", "findOne", "findOneOrFail", "findAll", "count", "findAndCount"]);
const ENTITY_MANAGER = /^(?:em|entityManager|orm)$/i;
const REPOSITORY = /^(\w+?)(?:Repository|Repo)$/;
/** MikroORM's unique-constraint error, caught around an insert: the insert is a claim. */
const DUPLICATE = /UniqueConstraintViolation|unique|duplicate/i;

/** FilterQuery: MikroORM's operators, Mongo's spelling; the ones the model does not read compare in a way not read. */
const FILTERS: ObjectFilterDialect = {
  combinators: { $and: "and", $or: "or", $not: "not" },
  operators: {
    $eq: "eq",
    $ne: "ne",
    $in: "in",
    $nin: "notIn",
    $lt: "lt",
    $lte: "lte",
    $gt: "gt",
    $gte: "gte",
    $exists: "exists",
    $not: "not",
  },
  reserved: (key) => key.startsWith("$"),
  nested: "path",
  mixed: "each",
  bare: "eq",
  lists: true,
  objectOperand: "one",
};

/** What a call is made on: an EntityManager (the entity is its first argument) or a repository of one entity. */
type Receiver = { readonly kind: "em" } | { readonly kind: "repository"; readonly entity: string };

function receiverOf(ctx: RecognizerContext, node: Node): Receiver | undefined {
  const r = unwrap(node);
  if (r.type === "CallExpression") {
    const m = methodOf(r);
    // `em.fork()`: a fork of an EntityManager is one; `em.getRepository(Job)`: Job's repository.
    if (m?.name === "fork" && receiverOf(ctx, m.member.object)?.kind === "em") return { kind: "em" };
    if (m?.name === "getRepository" && receiverOf(ctx, m.member.object)?.kind === "em") {
      const entity = r.arguments[0] && entityOf(ctx, r.arguments[0] as Node);
      return entity ? { kind: "repository", entity } : undefined;
    }
    return undefined;
  }
  const name = expressionName(r);
  if (name === undefined) return undefined;
  if (ENTITY_MANAGER.test(name)) return { kind: "em" };
  const repository = REPOSITORY.exec(name);
  return repository ? { kind: "repository", entity: repository[1]! } : undefined;
}

/** The entity a call names: a class (`Job`), or its name as a string (`"Job"`). */
function entityOf(ctx: RecognizerContext, node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier" && /^[A-Z]/.test(n.name)) return n.name;
  const v = evaluate(ctx.sourceCode, n);
  return typeof v?.value === "string" && /^[A-Z]\w*$/.test(v.value) ? v.value : undefined;
}

/** A filter argument: a FilterQuery object, or a primary key (`em.nativeDelete(Job, id)`). */
function filterOf(ctx: RecognizerContext, node: Node): Condition {
  const n = unwrap(node);
  if (n.type === "Literal" || n.type === "TemplateLiteral")
    return { kind: "and", items: [{ kind: "pred", field: "id", op: "eq", values: undefined, node: n }] };
  return readFilterArgument(ctx.sourceCode, FILTERS, n);
}

/** `status: X` or `status: { $ne: X }`, as the filter's last property. */
function addPredicate(ctx: RecognizerContext, where: TSESTree.ObjectExpression) {
  return (field: string, op: "eq" | "ne", valueText: string) =>
    findProperty(where, field)
      ? undefined
      : appendProperty(
          ctx.sourceCode,
          where,
          `${propertyKey(field)}: ${op === "eq" ? valueText : `{ $ne: ${valueText} }`}`,
        );
}

/** `em.nativeUpdate(Job, { status: stuck, heartbeatAt: { $lt: cutoff } }, { status: back })`: the count it freed. */
function recoveryWrite(ctx: RecognizerContext, call: TSESTree.CallExpression, spec: RecoverySpec): RecoveryWrite {
  const callee = unwrap(call.callee) as TSESTree.MemberExpression;
  const receiver = ctx.sourceCode.getText(callee.object);
  const entity = call.arguments.length === 3 ? `${ctx.sourceCode.getText(call.arguments[0]!)}, ` : "";
  const f = propertyKey(spec.field);
  return {
    call: `${receiver}.nativeUpdate(${entity}{ ${f}: ${spec.stuckText}, ${propertyKey(spec.timeField)}: { $lt: ${jsCutoff(spec.threshold)} } }, { ${f}: ${spec.backText} })`,
    count: (result) => result,
    client: callee.object,
  };
}

export const mikroOrmRecognizer: Recognizer = {
  store: STORE,
  packages: { own: /^@mikro-orm\/.+$/, family: /mikro-?orm/i },
  methods: new Set([...UPDATES, ...DELETES, ...INSERTS, ...READS]),
  recognize(call, ctx): StateAccess | undefined {
    const m = methodOf(call);
    const receiver = m && receiverOf(ctx, m.member.object);
    if (!m || !receiver) return undefined;
    // An EntityManager's call names the entity first; a repository's is its own entity's.
    const args = call.arguments as Node[];
    const model = receiver.kind === "em" ? args[0] && entityOf(ctx, args[0]) : receiver.entity;
    const rest = receiver.kind === "em" ? args.slice(1) : args;
    if (!model || args.some((a) => a.type === "SpreadElement")) return undefined;
    const operation = m.name;
    const [first, second] = rest;
    // TypeORM's EntityManager shares the method names; its options object (`{ where }`) is not a FilterQuery.
    const options = first && objectLiteral(ctx.sourceCode, first);
    if (options && findProperty(options, "where")) return undefined;
    if (READS.has(operation)) {
      const filter: Condition = first ? filterOf(ctx, first) : { kind: "and", items: [] };
      return { access: "read", store: STORE, model, operation, filter, node: call };
    }
    if (INSERTS.has(operation)) {
      const data = first && objectLiteral(ctx.sourceCode, first);
      if (!data) return undefined;
      return {
        access: "write",
        store: STORE,
        model,
        mappedModel: true,
        operation,
        effect: "insert",
        ...(catchesDuplicate(ctx.sourceCode, call, DUPLICATE) ? { onConflict: "error" as const } : {}),
        filter: { kind: "and", items: [] },
        assignments: objectAssignments(ctx.sourceCode, data),
        node: call,
      };
    }
    if (!first) return undefined;
    const filter = filterOf(ctx, first);
    const where = unwrap(first).type === "ObjectExpression" ? (unwrap(first) as TSESTree.ObjectExpression) : undefined;
    if (DELETES.has(operation))
      return { access: "write", store: STORE, model, operation, effect: "delete", filter, assignments: [], node: call };
    const data = second && objectLiteral(ctx.sourceCode, second);
    if (!UPDATES.has(operation) || !data) return undefined;
    return {
      access: "write",
      store: STORE,
      model,
      mappedModel: true,
      operation,
      filter,
      assignments: objectAssignments(ctx.sourceCode, data),
      node: call,
      ...(where ? { addPredicate: addPredicate(ctx, where) } : {}),
      recoveryWrite: (spec) => recoveryWrite(ctx, call, spec),
      // `nativeUpdate` resolves to the number of rows it changed.
      changedNothing: (result) => `${result} === 0`,
    } satisfies StateWrite;
  },
};
