/**
 * Prisma Client: `<client>.<model>.updateMany|update|updateManyAndReturn|upsert({ where, data })`.
 * The receiver can be `prisma.job`, `this.prisma.job`, `this.db.job`, `tx.job` inside `$transaction`, or a
 * delegate held in a variable (`const { job } = prisma`, `const jobs = prisma.job`). The single-object argument with
 * `where` and `data` (or `update`) is what tells Prisma apart from two-argument `update(criteria, values)` clients.
 */
import { namedTypeOf } from "../core/reading/named-types.js";
import { appendProperty, jsCutoff, propertyKey } from "../core/reading/edits.js";
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
} from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { findProperty, findVariable, keyName, objectLiteral, unwrap } from "../core/reading/values.js";
import { catchesDuplicate } from "../core/reading/failures.js";
import { readObjectFilter, type FieldOperator, type ObjectFilterDialect } from "../core/reading/object-filters.js";
import { assignedValue, objectAssignments } from "../core/reading/assignments.js";

const WRITE_METHODS = new Set(["updateMany", "update", "updateManyAndReturn", "upsert"]);
const INSERT_METHODS = new Set(["create"]);
const DELETE_METHODS = new Set(["deleteMany", "delete"]);
const READ_METHODS = new Set([
  "findFirst",
  "findFirstOrThrow",
  "findUnique",
  "findUniqueOrThrow",
  "findMany",
  "count",
  "exists",
]);
const DELEGATE_SUFFIX = /(?:Repository|Repo|Delegate|Model|Table)$/;
const FILTER_OPERATORS = new Set([
  "equals",
  "not",
  "in",
  "notIn",
  "lt",
  "lte",
  "gt",
  "gte",
  "contains",
  "startsWith",
  "endsWith",
  "mode",
  "search",
  "some",
  "every",
  "none",
  "is",
  "isNot",
  "has",
  "hasEvery",
  "hasSome",
  "isEmpty",
  "path",
  "string_contains",
  "array_contains",
  "isSet",
]);
const WRITE_OPERATORS = new Set(["increment", "decrement", "multiply", "divide", "push", "unset"]);

const objectArgument = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

const property = findProperty;

/** The model a delegate expression stands for: `prisma.job` → `job`; `const { job: jobs } = prisma` → `job`. */
function modelOf(ctx: RecognizerContext, receiver: Node): string | undefined {
  const r = unwrap(receiver);
  // With a program, a delegate's type names its model wherever it is held (`this.repo` set to `prisma.job`).
  const typed = /^(\w+)Delegate$/.exec(namedTypeOf(ctx.sourceCode, r)?.name ?? "");
  if (typed) return typed[1];
  if (r.type === "MemberExpression") {
    const name = keyName(r.property, r.computed);
    if (!name || name.startsWith("$")) return undefined;
    return name.replace(DELEGATE_SUFFIX, "") || name;
  }
  if (r.type === "Identifier") {
    const variable = findVariable(ctx.sourceCode, r);
    const def = variable?.defs[0];
    if (def?.type === "Variable") {
      if (def.node.id.type === "ObjectPattern") {
        for (const p of def.node.id.properties) {
          if (
            p.type === "Property" &&
            unwrap(p.value).type === "Identifier" &&
            (unwrap(p.value) as TSESTree.Identifier).name === r.name
          ) {
            return keyName(p.key, p.computed) ?? r.name;
          }
        }
      }
      const init = def.node.init && unwrap(def.node.init);
      if (init?.type === "MemberExpression") return modelOf(ctx, init);
    }
    return r.name.replace(DELEGATE_SUFFIX, "") || r.name;
  }
  return undefined;
}

/** Prisma's filter operators (`{ not: X }`, `{ lt: cutoff }`, `{ in: [...] }`): those the model reads, the rest not. */
const PRISMA_FILTERS: ObjectFilterDialect = {
  combinators: { AND: "and", OR: "or", NOT: "not" },
  operators: {
    ...Object.fromEntries([...FILTER_OPERATORS].map((op): [string, FieldOperator] => [op, "other"])),
    equals: "eq",
    not: "not",
    in: "in",
    notIn: "notIn",
    lt: "lt",
    lte: "lte",
    gt: "gt",
    gte: "gte",
    mode: "skip",
  },
  // A compound unique key (`id_createdAt: { id, createdAt }`) names one row, like `id: jobId`.
  nested: "row",
  mixed: "each",
  bare: "eq",
  objectOperand: "one",
};

export function parseWhere(ctx: RecognizerContext, where: TSESTree.ObjectExpression): Condition {
  return readObjectFilter(ctx.sourceCode, PRISMA_FILTERS, where);
}

/** What a `data` property stores: its `set`, an update operator (`increment`) as other, or the value itself. */
function dataValue(ctx: RecognizerContext, node: Node): { value: AssignedValue; valueNode: Node } | undefined {
  let n = unwrap(node);
  if (n.type === "ObjectExpression") {
    const set = property(n, "set");
    if (set) n = unwrap(set.value);
    else if (n.properties.some((p) => p.type === "Property" && WRITE_OPERATORS.has(keyName(p.key, p.computed) ?? ""))) {
      return { value: { kind: "other" }, valueNode: n };
    } else return undefined; // a nested relation write: not a field of this model
  }
  return { value: assignedValue(ctx.sourceCode, n), valueNode: n };
}

function parseData(ctx: RecognizerContext, data: TSESTree.ObjectExpression): Assignment[] {
  return objectAssignments(ctx.sourceCode, data, { value: (node) => dataValue(ctx, node) });
}

/** `status: X` or `status: { not: X }`, added as the where object's last property. */
function insertPredicate(
  ctx: RecognizerContext,
  where: TSESTree.ObjectExpression,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  if (property(where, field)) return undefined;
  return appendProperty(
    ctx.sourceCode,
    where,
    `${propertyKey(field)}: ${op === "eq" ? valueText : `{ not: ${valueText} }`}`,
  );
}

/** Prisma's unique-constraint error (P2002), caught around a create: the insert is a claim. */
const PRISMA_DUPLICATE = /P2002|Unique constraint|unique/i;

/** `create({ data })`: an insert; a claim on a lock table when a duplicate-key error is caught as "taken". */
function recognizeCreate(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  receiver: Node,
  operation: string,
  arg: TSESTree.ObjectExpression,
): StateWrite | undefined {
  const dataProp = property(arg, "data");
  const data = dataProp && objectArgument(ctx, dataProp.value);
  const model = data && modelOf(ctx, receiver);
  if (!data || !model) return undefined;
  return {
    access: "write",
    store: "prisma",
    model,
    mappedModel: true,
    operation,
    effect: "insert",
    ...(catchesDuplicate(ctx.sourceCode, call, PRISMA_DUPLICATE) ? { onConflict: "error" as const } : {}),
    filter: { kind: "and", items: [] },
    assignments: parseData(ctx, data),
    node: call,
    staleRowsDelete: (spec) => ({
      call: `${ctx.sourceCode.getText(receiver)}.deleteMany({ where: { ${propertyKey(spec.timeField)}: { lt: ${jsCutoff(spec.threshold)} } } })`,
      count: (result) => `${result}.count`,
      client: receiver,
    }),
  };
}

/** `findFirst({ where })` and its kin: only reads whose where is an object we can read are worth keeping. */
function recognizeRead(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  receiver: Node,
  operation: string,
  whereProp: TSESTree.Property | undefined,
): StateRead | undefined {
  const where = whereProp && objectArgument(ctx, whereProp.value);
  const model = where && modelOf(ctx, receiver);
  if (!where || !model) return undefined;
  return { access: "read", store: "prisma", model, operation, filter: parseWhere(ctx, where), node: call };
}

export const prismaRecognizer: Recognizer = {
  store: "prisma",
  packages: { own: /^(@prisma\/client|\.prisma\/client)$/, family: /prisma/i },
  methods: new Set([...WRITE_METHODS, ...READ_METHODS, ...INSERT_METHODS, ...DELETE_METHODS]),
  recognize(call, ctx): StateAccess | undefined {
    const callee = unwrap(call.callee);
    if (callee.type !== "MemberExpression" || call.arguments.length !== 1) return undefined;
    const operation = keyName(callee.property, callee.computed);
    if (!operation) return undefined;
    const arg = objectArgument(ctx, call.arguments[0]);
    if (!arg) return undefined;
    const whereProp = property(arg, "where");
    if (READ_METHODS.has(operation)) return recognizeRead(ctx, call, callee.object, operation, whereProp);
    if (INSERT_METHODS.has(operation)) return recognizeCreate(ctx, call, callee.object, operation, arg);
    if (DELETE_METHODS.has(operation)) {
      const where = whereProp && objectArgument(ctx, whereProp.value);
      const model = where && modelOf(ctx, callee.object);
      if (!where || !model) return undefined;
      return {
        access: "write",
        store: "prisma",
        model,
        mappedModel: true,
        operation,
        effect: "delete",
        filter: parseWhere(ctx, where),
        assignments: [],
        node: call,
      };
    }
    if (!WRITE_METHODS.has(operation)) return undefined;
    const dataProp = property(arg, operation === "upsert" ? "update" : "data");
    if (!whereProp || !dataProp) return undefined;
    const where = objectArgument(ctx, whereProp.value);
    const data = objectArgument(ctx, dataProp.value);
    if (!data) return undefined;
    const model = modelOf(ctx, callee.object);
    if (!model) return undefined;
    const inlineWhere = unwrap(whereProp.value).type === "ObjectExpression" ? where : undefined;
    return {
      access: "write",
      store: "prisma",
      model,
      mappedModel: true,
      operation,
      filter: where ? parseWhere(ctx, where) : { kind: "opaque", node: whereProp.value },
      assignments: parseData(ctx, data),
      node: call,
      ...(inlineWhere
        ? { addPredicate: (field, op, valueText) => insertPredicate(ctx, inlineWhere, field, op, valueText) }
        : {}),
      ...(operation === "updateMany" || operation === "update"
        ? { recoveryWrite: (spec: RecoverySpec) => recoveryWrite(ctx, callee.object, spec) }
        : {}),
      // `update` throws when its filter matches no row (and `upsert` is read alike); `updateMany` counts.
      ...(operation === "updateMany" ? { changedNothing: (result: string) => `${result}.count === 0` } : {}),
      ...(operation === "update" || operation === "upsert" ? { throwsWhenNothing: true } : {}),
    };
  },
};

/** `prisma.job.updateMany(…)` on the claim's delegate: rows still `stuck` whose progress time is older than the threshold. */
function recoveryWrite(ctx: RecognizerContext, delegate: Node, spec: RecoverySpec): RecoveryWrite {
  const f = propertyKey(spec.field);
  return {
    call: `${ctx.sourceCode.getText(delegate)}.updateMany({
  where: { ${f}: ${spec.stuckText}, ${propertyKey(spec.timeField)}: { lt: new Date(Date.now() - ${spec.threshold}) } },
  data: { ${f}: ${spec.backText} },
})`,
    count: (result) => `${result}.count`,
    client: delegate,
  };
}
