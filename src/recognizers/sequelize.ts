/**
 * Sequelize models and instances.
 *
 * - `Job.update(values, { where, transaction })`: an update; the `where` in the second argument is what makes it
 *   Sequelize (TypeORM's `update(criteria, partial)` and Mongoose's `update(filter, doc)` have none).
 * - `Job.destroy({ where })`: a delete.
 * - `Job.findOne|findAll|findAndCountAll({ where })`, `Job.findAllInBatches({ where }, callback)` and
 *   `Job.findByPk(id)`: reads.
 * - instances: `job.status = "RUNNING"; await job.save()`, `await job.update({ status: "RUNNING" })` and
 *   `await job.destroy()`: writes by the instance's identity (`id` = a run-time value). An object counts as an
 *   instance when it holds a read of a model (`await Job.findByPk(id)`, a `findAll` loop variable), or, in a module
 *   that imports Sequelize, when it is a plain variable or parameter (typed `job: Job` names the model).
 * Where objects: `field: value` (an array is IN, null is IS NULL), operator objects keyed `[Op.ne]` (or
 * `[Sequelize.Op.ne]`, or the legacy `$ne`), and `[Op.and]`/`[Op.or]`/`[Op.not]`. Models are named by the receiver
 * (`Job`, `models.Job`, `this.jobModel` → `job`), or by `sequelize.define("Job", …)`.
 */
import { appendProperty, importedName, propertyKey } from "../core/reading/edits.js";
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
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
import {
  evaluate,
  findProperty,
  findVariable,
  getConstInit,
  keyName,
  objectLiteral,
  unwrap,
} from "../core/reading/values.js";
import { isFunction } from "../core/reading/units.js";
import { readObjectFilter, type FieldOperator, type ObjectFilterDialect } from "../core/reading/object-filters.js";
import { assignedValue, objectAssignments } from "../core/reading/assignments.js";
import { methodName, expressionName } from "../core/reading/ast.js";

const STORE = "sequelize";
/** `findAllInBatches(options, callback)`: a model's batch finder (Outline's), its callback handed the rows in pages. */
const READS = new Set(["findOne", "findAll", "findAndCountAll", "findAllInBatches"]);
const INSTANCE_READS = new Set([
  "findByPk",
  "findOne",
  "findAll",
  "findAndCountAll",
  "findOrCreate",
  "create",
  "build",
  "findCreateFind",
]);
const MODEL_SUFFIX = /(?:Model|Entity)$/;
const NOT_A_MODEL = /(?:Repository|Repo|Manager|manager|repository|repo|Collection|collection|Client|client)$/;
const SEQUELIZE_SOURCES = /^(?:sequelize|sequelize-typescript|@sequelize\/core)$/;
const SEQUELIZE_HELPERS = new Set(["fn", "literal", "col", "where", "cast", "json"]);
/** TypeORM's find operators: a where that uses them is TypeORM's, not ours. */
const TYPEORM_OPERATORS = new Set([
  "Not",
  "In",
  "LessThan",
  "LessThanOrEqual",
  "MoreThan",
  "MoreThanOrEqual",
  "IsNull",
  "Equal",
  "Like",
  "ILike",
  "Between",
  "Any",
  "Raw",
  "ArrayContains",
  "ArrayContainedBy",
  "ArrayOverlap",
  "And",
  "Or",
]);

const OPERATORS: Record<string, FieldOperator> = {
  eq: "eq",
  ne: "ne",
  in: "in",
  notIn: "notIn",
  lt: "lt",
  lte: "lte",
  gt: "gt",
  gte: "gte",
  is: "eq",
  not: "not",
  and: "and",
  or: "or",
  like: "other",
  notLike: "other",
  iLike: "other",
  notILike: "other",
  startsWith: "other",
  endsWith: "other",
  substring: "other",
  between: "other",
  notBetween: "other",
  regexp: "other",
  notRegexp: "other",
  iRegexp: "other",
  notIRegexp: "other",
  overlap: "other",
  contains: "other",
  contained: "other",
  any: "other",
  all: "other",
  match: "other",
  adjacent: "other",
  strictLeft: "other",
  strictRight: "other",
  noExtendLeft: "other",
  noExtendRight: "other",
  col: "other",
  isNot: "other",
};

class NotMine extends Error {}

// ---- small helpers ----

function receiverOf(call: TSESTree.CallExpression): Node | undefined {
  const callee = unwrap(call.callee);
  return callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
}

const objectOf = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

const property = findProperty;

function hasName(ctx: RecognizerContext, at: Node, name: string): boolean {
  let scope: TSESLint.Scope.Scope | null = ctx.sourceCode.getScope(at);
  while (scope) {
    if (scope.set.has(name)) return true;
    scope = scope.upper;
  }
  return false;
}

/** The module imports or requires Sequelize: ambiguous shapes (an instance's `save()`) are then ours. */
function importsSequelize(ctx: RecognizerContext): boolean {
  const cached = ctx.scratch.get("sequelize:imports");
  if (typeof cached === "boolean") return cached;
  let found = false;
  for (const stmt of ctx.sourceCode.ast.body) {
    if (stmt.type === "ImportDeclaration" && SEQUELIZE_SOURCES.test(stmt.source.value)) found = true;
    if (stmt.type === "VariableDeclaration") {
      for (const d of stmt.declarations) {
        const init = d.init && unwrap(d.init);
        const call = init?.type === "MemberExpression" ? unwrap(init.object) : init;
        if (call?.type === "CallExpression" && call.callee.type === "Identifier" && call.callee.name === "require") {
          const arg = call.arguments[0];
          if (arg?.type === "Literal" && typeof arg.value === "string" && SEQUELIZE_SOURCES.test(arg.value))
            found = true;
        }
      }
    }
  }
  ctx.scratch.set("sequelize:imports", found);
  return found;
}

// ---- models ----

function stripSuffix(name: string): string {
  return name.replace(MODEL_SUFFIX, "") || name;
}

/** `sequelize.define("Job", …)` or `sequelize.model("Job")`: the model name it gives. */
function definedName(node: Node | undefined): string | undefined {
  const n = node && unwrap(node);
  if (n?.type !== "CallExpression") return undefined;
  const name = methodName(n);
  const arg = n.arguments[0];
  if ((name === "define" || name === "model") && arg?.type === "Literal" && typeof arg.value === "string")
    return arg.value;
  return undefined;
}

/** The model a static call is made on: `Job`, `models.Job`, `this.jobModel`, `sequelize.models.Job`. */
function modelOf(ctx: RecognizerContext, receiver: Node | undefined): string | undefined {
  if (!receiver) return undefined;
  let r = unwrap(receiver);
  // `FileOperation.unscoped().findAll(…)`, `Job.scope("active").update(…)`: the same model, another default scope.
  while (r.type === "CallExpression" && /^(?:unscoped|scope|schema)$/.test(methodName(r) ?? "")) {
    const inner = receiverOf(r);
    if (!inner) return undefined;
    r = inner;
  }
  if (r.type === "Identifier") {
    if (NOT_A_MODEL.test(r.name)) return undefined;
    const init = getConstInit(ctx.sourceCode, r);
    const defined = definedName(init);
    if (defined) return defined;
    return stripSuffix(r.name);
  }
  if (r.type === "MemberExpression") {
    const name = keyName(r.property, r.computed);
    if (!name || NOT_A_MODEL.test(name)) return undefined;
    return stripSuffix(name);
  }
  const defined = definedName(r);
  return defined;
}

// ---- where ----

/** The operator a key names: `[Op.ne]`, `[Sequelize.Op.ne]`, `$ne`; undefined for a field. */
function operatorKey(p: TSESTree.Property): string | undefined {
  if (p.computed) {
    const k = unwrap(p.key);
    if (k.type !== "MemberExpression" || k.computed || k.property.type !== "Identifier") return undefined;
    const o = unwrap(k.object);
    const isOp =
      (o.type === "Identifier" && o.name === "Op") ||
      (o.type === "MemberExpression" && !o.computed && o.property.type === "Identifier" && o.property.name === "Op");
    return isOp ? (k.property.name in OPERATORS ? k.property.name : "?") : undefined;
  }
  const name = keyName(p.key, false);
  if (name?.startsWith("$") && !name.endsWith("$") && name.slice(1) in OPERATORS) return name.slice(1);
  return undefined;
}

/** `sequelize.fn(…)`, `Sequelize.literal(…)`, `fn(…)`: a SQL expression; TypeORM's `Not(…)` throws NotMine. */
function helperCall(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type !== "CallExpression") return undefined;
  const c = unwrap(n.callee);
  const name = expressionName(c);
  if (c.type === "Identifier" && name && TYPEORM_OPERATORS.has(name)) throw new NotMine();
  return name && SEQUELIZE_HELPERS.has(name) ? name : undefined;
}

/**
 * Sequelize's where: operators as `[Op.x]` keys (or `$x` strings), `and`/`or`/`not` at any level, a list as a field's
 * value meaning IN, an object with no operator a JSON path or an association (a match not read), and values made by
 * the SQL helpers (`fn`, `literal`, `col`) compared in a way not read. A TypeORM find operator in the where makes the
 * call TypeORM's (`NotMine`).
 */
const SEQUELIZE_FILTERS: ObjectFilterDialect = {
  combinators: { and: "and", or: "or", not: "not" },
  operators: { ...OPERATORS, "?": "other" },
  operatorKey,
  nested: "other",
  mixed: "each-opaque",
  bare: "eq",
  lists: true,
  objectOperand: "each",
  computed: (node) => helperCall(node) !== undefined,
};

function parseWhere(ctx: RecognizerContext, where: TSESTree.ObjectExpression): Condition {
  return readObjectFilter(ctx.sourceCode, SEQUELIZE_FILTERS, where);
}

// ---- values ----

/** What a value stores; a TypeORM find operator in it (`Not(…)`) makes the call TypeORM's (`helperCall` throws). */
function storedValue(ctx: RecognizerContext, node: Node): AssignedValue {
  helperCall(node);
  return assignedValue(ctx.sourceCode, node);
}

function parseValues(ctx: RecognizerContext, object: TSESTree.ObjectExpression): Assignment[] {
  return objectAssignments(ctx.sourceCode, object, {
    value: (node) => ({ value: storedValue(ctx, node), valueNode: node }),
  });
}

// ---- suggestions ----

/** `field: value` or `field: { [Op.ne]: value }`, as the where object's last property. */
function insertPredicate(
  ctx: RecognizerContext,
  where: TSESTree.ObjectExpression,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  if (property(where, field)) return undefined;
  let condition = valueText;
  if (op === "ne") {
    const opName = hasName(ctx, where, "Op") ? "Op" : hasName(ctx, where, "Sequelize") ? "Sequelize.Op" : undefined;
    if (!opName) return undefined;
    condition = `{ [${opName}.ne]: ${valueText} }`;
  }
  return appendProperty(ctx.sourceCode, where, `${propertyKey(field)}: ${condition}`);
}

// ---- instances ----

/** The read a variable holds (`const job = await Job.findByPk(id)`, `for (const job of await Job.findAll(…))`). */
function readOrigin(ctx: RecognizerContext, init: Node | null | undefined): { model: string } | "other" | undefined {
  if (!init) return undefined;
  let n = unwrap(init);
  if (n.type === "AwaitExpression") n = unwrap(n.argument);
  if (n.type === "Identifier") {
    const inner = getConstInit(ctx.sourceCode, n);
    return inner && inner.type !== "TSEnumDeclaration" ? readOrigin(ctx, inner) : undefined;
  }
  if (n.type !== "CallExpression") return undefined;
  const name = methodName(n);
  if (!name || !INSTANCE_READS.has(name)) return "other";
  // Mongoose has findOne, find and create too: only a where option, a Sequelize-only method, or an import says which
  const options = READS.has(name) ? objectOf(ctx, n.arguments[0]) : undefined;
  if (READS.has(name) && !(options && property(options, "where"))) return "other";
  if (name === "create" && !importsSequelize(ctx)) return "other";
  const model = modelOf(ctx, receiverOf(n));
  return model ? { model } : "other";
}

/** The model an instance expression belongs to, or undefined when it is not (known to be) a Sequelize instance. */
function instanceModel(ctx: RecognizerContext, receiver: Node | undefined): string | undefined {
  if (!receiver) return undefined;
  const r = unwrap(receiver);
  let name: string | undefined;
  if (r.type === "Identifier") name = r.name;
  else if (r.type === "MemberExpression" && unwrap(r.object).type === "ThisExpression")
    name = keyName(r.property, r.computed);
  if (!name || !/^[a-z_$]/.test(name) || NOT_A_MODEL.test(name)) return undefined;
  if (r.type === "Identifier") {
    const variable = findVariable(ctx.sourceCode, r);
    const def = variable?.defs[0];
    if (def?.type === "Variable") {
      const decl = def.node;
      let origin = readOrigin(ctx, decl.init);
      // `for (const job of jobs)` over a `findAll`
      const loop = decl.parent?.parent;
      if (!decl.init && loop?.type === "ForOfStatement") origin = readOrigin(ctx, loop.right);
      if (typeof origin === "object") return origin.model;
      if (origin === "other") {
        // a builder that is not awaited (`knex("jobs").where(…)`) is never an instance
        const init = decl.init && unwrap(decl.init);
        if (!init || init.type !== "AwaitExpression" || !importsSequelize(ctx)) return undefined;
        return name;
      }
    }
    if (def?.type === "Parameter") {
      const ann = def.name.typeAnnotation?.typeAnnotation;
      if (importsSequelize(ctx) && ann?.type === "TSTypeReference" && ann.typeName.type === "Identifier")
        return ann.typeName.name;
    }
  }
  return importsSequelize(ctx) ? name : undefined;
}

function sameObject(ctx: RecognizerContext, a: Node, b: Node): boolean {
  return ctx.sourceCode.getText(unwrap(a)) === ctx.sourceCode.getText(unwrap(b));
}

/** The statement `node` is part of (not across a function), and the list it sits in. */
function statementOf(node: Node): { stmt: Node; body: readonly Node[] } | undefined {
  let n: Node = node;
  while (!/(?:Statement|Declaration)$/.test(n.type)) {
    const p = n.parent;
    if (!p || p.type === "ArrowFunctionExpression" || p.type === "FunctionExpression") return undefined;
    n = p;
  }
  const p = n.parent;
  if (p?.type === "BlockStatement" || p?.type === "Program") return { stmt: n, body: p.body };
  if (p?.type === "SwitchCase") return { stmt: n, body: p.consequent };
  return undefined;
}

/** `inst.save()`, `inst.reload()`, `inst.update(…)` in a statement: an earlier round trip of the same instance. */
function isRoundTrip(ctx: RecognizerContext, stmt: Node, receiver: Node): boolean {
  let found = false;
  const visit = (n: Node | null | undefined, depth: number): void => {
    if (!n || found || depth > 6) return;
    const u = unwrap(n);
    if (u.type === "CallExpression") {
      const name = methodName(u);
      const r = receiverOf(u);
      if (name && ["save", "reload", "update", "destroy"].includes(name) && r && sameObject(ctx, r, receiver))
        found = true;
      visit(u.callee, depth + 1);
    } else if (u.type === "AwaitExpression") visit(u.argument, depth + 1);
    else if (u.type === "MemberExpression") visit(u.object, depth + 1);
  };
  if (stmt.type === "ExpressionStatement") visit(stmt.expression, 0);
  if (stmt.type === "VariableDeclaration") for (const d of stmt.declarations) visit(d.init, 0);
  return found;
}

/** `job.status = "RUNNING"` and `job.set({ … })` statements before `job.save()`, back to the previous round trip. */
function pendingChanges(ctx: RecognizerContext, call: TSESTree.CallExpression, receiver: Node): Assignment[] {
  const where = statementOf(call);
  if (!where) return [];
  const out: Assignment[] = [];
  const seen = new Set<string>();
  const add = (a: Assignment) => {
    if (seen.has(a.field)) return;
    seen.add(a.field);
    out.push(a);
  };
  const index = where.body.indexOf(where.stmt);
  for (let i = index - 1; i >= 0; i--) {
    const stmt = where.body[i]!;
    if (isRoundTrip(ctx, stmt, receiver)) break;
    if (stmt.type !== "ExpressionStatement") continue;
    const e = unwrap(stmt.expression);
    if (
      e.type === "AssignmentExpression" &&
      e.operator === "=" &&
      e.left.type === "MemberExpression" &&
      sameObject(ctx, e.left.object, receiver)
    ) {
      const field = keyName(e.left.property, e.left.computed);
      if (field !== undefined) add({ field, value: storedValue(ctx, e.right), node: e.left, valueNode: e.right });
    } else if (e.type === "CallExpression" && methodName(e) === "set" && sameObject(ctx, receiverOf(e)!, receiver)) {
      const [a, b] = e.arguments;
      const obj = objectOf(ctx, a);
      if (obj) for (const x of parseValues(ctx, obj).reverse()) add(x);
      else if (a?.type === "Literal" && typeof a.value === "string" && b && b.type !== "SpreadElement") {
        add({ field: a.value, value: storedValue(ctx, b), node: e, valueNode: b });
      }
    }
  }
  return out.reverse();
}

function identityFilter(receiver: Node): Condition {
  return { kind: "and", items: [{ kind: "pred", field: "id", op: "eq", values: undefined, node: receiver }] };
}

function recognizeInstance(
  call: TSESTree.CallExpression,
  ctx: RecognizerContext,
  operation: string,
): StateWrite | undefined {
  const receiver = receiverOf(call);
  if (!receiver || call.arguments.some((a) => a.type === "SpreadElement")) return undefined;
  const options = operation === "update" ? call.arguments[1] : call.arguments[0];
  if (
    options &&
    unwrap(options).type === "ObjectExpression" &&
    property(unwrap(options) as TSESTree.ObjectExpression, "where")
  )
    return undefined;
  if (operation === "update" && (call.arguments.length < 1 || call.arguments.length > 2)) return undefined;
  if (operation !== "update" && call.arguments.length > 1) return undefined;
  let assignments: Assignment[];
  if (operation === "update") {
    const values = objectOf(ctx, call.arguments[0]);
    if (!values || property(values, "where") || property(values, "data")) return undefined; // Prisma's shape

    assignments = parseValues(ctx, values);
  } else if (operation === "save") {
    assignments = pendingChanges(ctx, call, receiver);
    if (assignments.length === 0) return undefined;
  } else assignments = [];
  const model = instanceModel(ctx, receiver);
  if (!model) return undefined;
  return {
    access: "write",
    store: STORE,
    model,
    mappedModel: true,
    operation,
    effect: operation === "destroy" ? "delete" : "update",
    filter: identityFilter(receiver),
    assignments,
    node: call,
  };
}

// ---- static calls ----

function recognizeStatic(
  call: TSESTree.CallExpression,
  ctx: RecognizerContext,
  operation: string,
): StateAccess | undefined {
  const receiver = receiverOf(call);
  if (operation === "findByPk") {
    const [id] = call.arguments;
    if (!id || id.type === "SpreadElement" || call.arguments.length > 2) return undefined;
    const r = receiver && unwrap(receiver);
    // a model is a class or a defined model, named with a capital or held in a member (`models.job`)
    if (!r || (r.type === "Identifier" && !/^[A-Z]/.test(r.name) && !definedName(getConstInit(ctx.sourceCode, r))))
      return undefined;
    const model = modelOf(ctx, receiver);
    if (!model) return undefined;
    const v = helperCall(id) ? undefined : evaluate(ctx.sourceCode, id);
    const filter: Condition = {
      kind: "and",
      items: [
        { kind: "pred", field: "id", op: helperCall(id) ? "other" : "eq", values: v ? [v] : undefined, node: id },
      ],
    };
    return { access: "read", store: STORE, model, operation, filter, node: call } satisfies StateRead;
  }
  const optionsIndex = operation === "update" ? 1 : 0;
  const batches = operation === "findAllInBatches" && call.arguments.length === 2 && isFunction(call.arguments[1]!);
  if (call.arguments.length !== optionsIndex + 1 && !batches) return undefined;
  const options = objectOf(ctx, call.arguments[optionsIndex]);
  const whereProp = options && property(options, "where");
  if (!whereProp) return undefined;
  const model = modelOf(ctx, receiver);
  if (!model) return undefined;
  const whereValue = unwrap(whereProp.value);
  if (whereValue.type === "ArrayExpression" || whereValue.type === "Literal") return undefined; // TypeORM's OR arrays
  const where = objectOf(ctx, whereValue);
  const filter: Condition = where ? parseWhere(ctx, where) : { kind: "opaque", node: whereValue };
  if (READS.has(operation)) return { access: "read", store: STORE, model, operation, filter, node: call };
  const inline = whereValue.type === "ObjectExpression" ? whereValue : undefined;
  const addPredicate = inline
    ? {
        addPredicate: (field: string, op: "eq" | "ne", valueText: string) =>
          insertPredicate(ctx, inline, field, op, valueText),
      }
    : {};
  if (operation === "destroy") {
    return {
      access: "write",
      store: STORE,
      model,
      mappedModel: true,
      operation,
      effect: "delete",
      filter,
      assignments: [],
      node: call,
      ...addPredicate,
    };
  }
  const valuesArg = call.arguments[0]!;
  const values = objectOf(ctx, valuesArg);
  if (!values && unwrap(valuesArg).type !== "Identifier") return undefined;
  return {
    access: "write",
    store: STORE,
    model,
    mappedModel: true,
    operation,
    effect: "update",
    filter,
    assignments: values ? parseValues(ctx, values) : [],
    node: call,
    ...addPredicate,
    recoveryWrite: (spec) => recoveryWrite(ctx, receiver!, spec),
    // `Model.update` resolves to `[count]` (`[count, rows]` with `returning`).
    ...(operation === "update" ? { changedNothing: (result: string) => `${result}[0] === 0` } : {}),
  };
}

/**
 * `Job.update({ status: Y }, { where: { status: X, updatedAt: { [Op.lt]: … } } })` on the claim's own model, which
 * resolves to `[affectedCount]`. `Op` is the module's own, or one added to its `sequelize` import.
 */
function recoveryWrite(ctx: RecognizerContext, model: Node, spec: RecoverySpec): RecoveryWrite | undefined {
  const op = importedName(ctx.sourceCode, ["sequelize", "@sequelize/core"], "Op");
  if (!op) return undefined;
  const f = propertyKey(spec.field);
  return {
    call: `${ctx.sourceCode.getText(model)}.update(
  { ${f}: ${spec.backText} },
  { where: { ${f}: ${spec.stuckText}, ${propertyKey(spec.timeField)}: { [${op.ref}.lt]: new Date(Date.now() - ${spec.threshold}) } } },
)`,
    count: (result) => `${result}[0]`,
    edits: op.edits,
    client: model,
  };
}

export const sequelizeRecognizer: Recognizer = {
  store: STORE,
  packages: { own: /^(sequelize|sequelize-typescript)$/, family: /sequelize/i },
  methods: new Set(["update", "destroy", "save", "findByPk", ...READS]),
  recognize(call, ctx): StateAccess | undefined {
    try {
      const operation = methodName(call);
      if (!operation) return undefined;
      if (operation === "save") return recognizeInstance(call, ctx, operation);
      const staticAccess = recognizeStatic(call, ctx, operation);
      if (staticAccess) return staticAccess;
      if (operation === "update" || operation === "destroy") return recognizeInstance(call, ctx, operation);
      return undefined;
    } catch {
      return undefined; // NotMine (a TypeORM where), or a shape we did not expect
    }
  },
};
