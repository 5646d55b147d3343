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
 *   project's SQL parser as the WHERE of a SELECT from the builder's alias (`translateWhere`, core/languages/sql.ts),
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
import { appendProperty } from "../core/reading/edits.js";
import { namedTypeOf } from "../core/reading/named-types.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, AssignedValue, CompareOp, Condition, Node, StateAccess, StateRead, StateWrite, StaticValue, TextEdit } from "../core/model/model.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { normalizeName } from "../core/model/settings.js";
import { maskSql, translateWhere, type ParamResolver } from "../core/languages/sql.js";
import { isFunction, unitOf } from "../core/reading/units.js";
import { evaluate, findProperty, findVariable, getConstInit, isClockReading, isSqlNow, keyName, objectLiteral, staticList, unwrap } from "../core/reading/values.js";

const STORE = "typeorm";
const OPTION_READS = new Set(["findOne", "findOneOrFail", "find", "findAndCount", "count", "exist", "exists"]);
const BY_READS = new Set(["findOneBy", "findOneByOrFail", "findBy", "findAndCountBy", "countBy", "existsBy"]);
const BUILDER_READS = new Set([
  "getOne", "getOneOrFail", "getMany", "getManyAndCount", "getCount", "getExists", "getRawOne", "getRawMany",
]);
const WRITE_METHODS = new Set(["update", "save", "execute"]);

const TYPEORM_MODULE = /^(?:typeorm|@nestjs\/typeorm)(?:\/|$)/;
const FOREIGN_MODULE = /^(?:sequelize|sequelize-typescript|@nestjs\/sequelize|mongoose|@nestjs\/mongoose|mongodb|@typegoose\/typegoose|objection|@mikro-orm\/[\w-]+)$/;
/** Keys of Sequelize and Mongo option bags: a second argument holding one is not a TypeORM partial entity. */
const OPTION_KEYS = new Set([
  "where", "transaction", "returning", "individualHooks", "session", "runValidators", "arrayFilters", "upsert",
  "multi", "sideEffects", "silent", "overwrite", "timestamps", "new",
]);
/** Keys of Sequelize and Mongo find options that TypeORM does not have. */
const FOREIGN_FIND_KEYS = new Set(["attributes", "include", "raw", "paranoid", "nest", "group", "having", "limit", "offset", "lean", "projection", "sort", "session"]);
const WRITE_LOCKS = /^(?:pessimistic_write|pessimistic_write_or_fail|pessimistic_partial_write|for_no_key_update)$/;
const MANAGER_NAME = /^(?:manager|em|entityManager|transactionalEntityManager|transactionManager|txManager|trxManager|tx|trx)$|EntityManager$/;
/** Receiver names that are clients or services, never an entity's repository. */
const NOT_A_REPO = /^(?:db|database|client|prisma|knex|pool|sequelize|mongoose|redis|conn|connection|dataSource|orm|sql|qb|api|http|axios|app|req|res|ctx|cache|store|queue|bus|emitter|map|set|state|this)$|(?:Service|Client|Api|Cache|Store|Queue|Gateway|Controller|Helper|Utils?|Map|Set)$/i;
const FIND_OPERATORS = new Set([
  "Not", "In", "Any", "Equal", "LessThan", "LessThanOrEqual", "MoreThan", "MoreThanOrEqual", "IsNull", "Between",
  "Like", "ILike", "Raw", "And", "Or", "ArrayContains", "ArrayContainedBy", "ArrayOverlap", "JsonContains",
]);
const COERCIONS = new Set(["Number", "String", "BigInt", "parseInt"]);
const JOIN_METHODS = /^(?:left|inner)Join/;

// ---- small AST helpers ----

function methodName(call: TSESTree.CallExpression): string | undefined {
  const callee = unwrap(call.callee);
  if (callee.type === "Identifier") return callee.name;
  if (callee.type === "MemberExpression") return keyName(callee.property, callee.computed);
  return undefined;
}

const objectArgument = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

const property = findProperty;

function keysOf(object: TSESTree.ObjectExpression): string[] {
  return object.properties.flatMap((p) => (p.type === "Property" ? [keyName(p.key, p.computed) ?? ""] : []));
}

/** The static elements of an array (literal or `const`), or undefined when any is known only at run time. */
const listOf = (ctx: RecognizerContext, node: Node | undefined) => staticList(ctx.sourceCode, node);

/** The entity a call names as its target: `Job`, `"job"`, `entities.Job`. */
function entityName(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const n = unwrap(node);
  if (n.type === "Identifier") return n.name;
  if (n.type === "Literal" && typeof n.value === "string" && n.value) return n.value;
  if (n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier") return n.property.name;
  return undefined;
}

/** An entity class or name as the first argument of an EntityManager method (`Job`, `"job"`), not an entity value. */
function isEntityTarget(node: Node | undefined): boolean {
  if (!node) return false;
  const n = unwrap(node);
  if (n.type === "Literal") return typeof n.value === "string";
  if (n.type === "Identifier") return /^[A-Z]/.test(n.name);
  return n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier" && /^[A-Z]/.test(n.property.name);
}

function sameModel(a: string, b: string): boolean {
  const norm = (s: string) => {
    const n = normalizeName(s);
    return n.length > 3 && n.endsWith("s") && !n.endsWith("ss") ? n.slice(0, -1) : n;
  };
  return norm(a) === norm(b);
}

const opaque = (node: Node): Condition => ({ kind: "opaque", node });
const and = (items: Condition[]): Condition => (items.length === 1 ? items[0]! : { kind: "and", items });
const or = (items: Condition[]): Condition => (items.length === 1 ? items[0]! : { kind: "or", items });
const pred = (field: string, op: CompareOp, values: readonly StaticValue[] | undefined, node: Node): Condition =>
  ({ kind: "pred", field, op, values, node });

// ---- what the file is ----

interface Flavor {
  /** The file imports from `typeorm` or `@nestjs/typeorm`. */
  readonly typeorm: boolean;
  /** The file imports another ORM or driver with the same method names. */
  readonly foreign: boolean;
  /** Classes declared here that extend `BaseEntity` (active record). */
  readonly baseEntities: ReadonlySet<string>;
  /** Local names of TypeORM exports (`Not` → `Not`, or `typeorm.Not` for a namespace import). */
  readonly imports: ReadonlyMap<string, string>;
}

function requireSource(node: Node | null | undefined): string | undefined {
  let n = node && unwrap(node);
  if (n?.type === "AwaitExpression") n = unwrap(n.argument);
  if (n?.type === "CallExpression" && n.callee.type === "Identifier" && n.callee.name === "require") {
    const arg = n.arguments[0];
    return arg?.type === "Literal" && typeof arg.value === "string" ? arg.value : undefined;
  }
  if (n?.type === "ImportExpression" && n.source.type === "Literal" && typeof n.source.value === "string") return n.source.value;
  return undefined;
}

function flavorOf(ctx: RecognizerContext): Flavor {
  const cached = ctx.scratch.get("typeorm:flavor") as Flavor | undefined;
  if (cached) return cached;
  let typeorm = false;
  let foreign = false;
  const baseEntities = new Set<string>();
  const imports = new Map<string, string>();
  const visit = (source: string): boolean => {
    if (TYPEORM_MODULE.test(source)) return (typeorm = true);
    if (FOREIGN_MODULE.test(source)) foreign = true;
    return false;
  };
  for (const stmt of ctx.sourceCode.ast.body) {
    if (stmt.type === "ImportDeclaration") {
      if (!visit(String(stmt.source.value))) continue;
      for (const s of stmt.specifiers) {
        if (s.type === "ImportSpecifier") imports.set(keyName(s.imported, false) ?? s.local.name, s.local.name);
        else if (s.type === "ImportNamespaceSpecifier") imports.set("*", s.local.name);
      }
      continue;
    }
    if (stmt.type === "VariableDeclaration") {
      for (const d of stmt.declarations) {
        const source = requireSource(d.init);
        if (source === undefined || !visit(source)) continue;
        if (d.id.type === "Identifier") imports.set("*", d.id.name);
        else if (d.id.type === "ObjectPattern") {
          for (const p of d.id.properties) {
            if (p.type === "Property" && p.value.type === "Identifier") imports.set(keyName(p.key, p.computed) ?? p.value.name, p.value.name);
          }
        }
      }
      continue;
    }
    const decl = stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration" ? stmt.declaration : stmt;
    if (decl?.type === "ClassDeclaration" && decl.id && decl.superClass?.type === "Identifier" && decl.superClass.name === "BaseEntity") {
      baseEntities.add(decl.id.name);
    }
  }
  const flavor: Flavor = { typeorm, foreign, baseEntities, imports };
  ctx.scratch.set("typeorm:flavor", flavor);
  return flavor;
}

/** How to write a TypeORM export in this file (`Not`, `typeorm.Not`), or undefined when it is not in scope. */
function exportRef(ctx: RecognizerContext, name: string): string | undefined {
  const flavor = flavorOf(ctx);
  const local = flavor.imports.get(name);
  if (local) return local;
  const ns = flavor.imports.get("*");
  if (ns) return `${ns}.${name}`;
  const global = ctx.sourceCode.scopeManager?.globalScope;
  if (global?.through.some((r) => r.identifier.name === name)) return name;
  return undefined;
}

// ---- receivers ----

type Target =
  | { readonly kind: "repo"; readonly model: string; readonly strong: boolean }
  | { readonly kind: "manager" }
  | { readonly kind: "foreign" };

const MANAGER: Target = { kind: "manager" };
const FOREIGN: Target = { kind: "foreign" };

function typeName(node: Node | undefined): { name: string; arg?: string } | undefined {
  if (node?.type !== "TSTypeReference") return undefined;
  const t = node.typeName;
  const name = t.type === "Identifier" ? t.name : t.type === "TSQualifiedName" ? t.right.name : undefined;
  if (!name) return undefined;
  const first = node.typeArguments?.params[0];
  const arg = first?.type === "TSTypeReference" ? typeName(first)?.name : undefined;
  // A type parameter (`Repository<T>`, `Repository<TEntity>`) names no entity.
  return arg && !/^(?:[A-Z]|T[A-Z]\w*)$/.test(arg) ? { name, arg } : { name };
}

/** What a declared type says: `Repository<Job>`, `EntityManager`, a Mongoose `Model<Job>`. */
function fromType(annotation: TSESTree.TSTypeAnnotation | undefined): Target | undefined {
  const t = typeName(annotation?.typeAnnotation);
  if (!t) return undefined;
  if ((t.name === "Repository" || t.name === "TreeRepository") && t.arg) return { kind: "repo", model: t.arg, strong: true };
  if (t.name === "EntityManager") return MANAGER;
  if (/^(?:MongoRepository|Model|ModelStatic|ModelCtor|Collection)$/.test(t.name)) return FOREIGN;
  return undefined;
}

/** What a decorator says: `@InjectRepository(Job)`, `@InjectEntityManager()`, `@InjectModel(Job.name)`. */
function fromDecorators(decorators: readonly TSESTree.Decorator[] | undefined): Target | undefined {
  for (const d of decorators ?? []) {
    const e = unwrap(d.expression);
    if (e.type !== "CallExpression" || e.callee.type !== "Identifier") continue;
    if (e.callee.name === "InjectRepository") {
      const model = entityName(e.arguments[0]);
      if (model) return { kind: "repo", model, strong: true };
    }
    if (e.callee.name === "InjectEntityManager") return MANAGER;
    if (e.callee.name === "InjectModel" || e.callee.name === "InjectConnection") return FOREIGN;
  }
  return undefined;
}

function byName(name: string): Target | undefined {
  if (MANAGER_NAME.test(name)) return MANAGER;
  if (/[a-z]Model$/.test(name)) return FOREIGN;
  const m = /^(.+?)(?:Repository|Repo)$/.exec(name);
  if (m) return { kind: "repo", model: m[1]!, strong: true };
  if (/^(?:repository|repo)$/i.test(name) || NOT_A_REPO.test(name)) return undefined;
  return { kind: "repo", model: name, strong: false };
}

/** `this.name` inside a class: a decorated or typed property, a constructor parameter property, or `this.name = …`. */
function classMember(ctx: RecognizerContext, from: Node, name: string, depth: number): Target | undefined {
  let p = from.parent;
  while (p && p.type !== "ClassBody") p = p.parent;
  if (!p) return undefined;
  for (const el of p.body) {
    if (el.type === "PropertyDefinition" && keyName(el.key, el.computed) === name) {
      const t = fromDecorators(el.decorators) ?? fromType(el.typeAnnotation) ?? (el.value ? resolveTarget(ctx, el.value, depth + 1) : undefined);
      if (t) return t;
    }
    if (el.type !== "MethodDefinition" || el.kind !== "constructor") continue;
    for (const param of el.value.params) {
      if (param.type !== "TSParameterProperty") continue;
      const id = param.parameter.type === "AssignmentPattern" ? param.parameter.left : param.parameter;
      if (id.type !== "Identifier" || id.name !== name) continue;
      const t = fromDecorators(param.decorators) ?? fromType(id.typeAnnotation);
      if (t) return t;
    }
    for (const stmt of el.value.body?.body ?? []) {
      if (stmt.type !== "ExpressionStatement" || stmt.expression.type !== "AssignmentExpression") continue;
      const left = stmt.expression.left;
      if (left.type === "MemberExpression" && left.object.type === "ThisExpression" && keyName(left.property, left.computed) === name) {
        const t = resolveTarget(ctx, stmt.expression.right, depth + 1);
        if (t) return t;
      }
    }
  }
  return undefined;
}

/** The function `fn` is a callback of `transaction(…)` (TypeORM passes it the transaction's EntityManager). */
function isTransactionCallback(fn: Node): boolean {
  const parent = fn.parent;
  return parent?.type === "CallExpression" && parent.arguments.includes(fn as TSESTree.CallExpressionArgument) && methodName(parent) === "transaction";
}

/** `this` in a custom repository (`class JobRepository extends Repository<Job>`) or in a `BaseEntity` class. */
function thisTarget(node: Node): Target | undefined {
  let p = node.parent;
  while (p && p.type !== "ClassBody") {
    // `this` in a plain function is not the class instance
    if (p.type === "FunctionDeclaration" || p.type === "FunctionExpression") {
      if (p.parent?.type !== "MethodDefinition" && p.parent?.type !== "PropertyDefinition") return undefined;
    }
    p = p.parent;
  }
  const cls = p?.parent;
  if (!cls || (cls.type !== "ClassDeclaration" && cls.type !== "ClassExpression") || cls.superClass?.type !== "Identifier") return undefined;
  const base = cls.superClass.name;
  if (base === "BaseEntity" && cls.id) return { kind: "repo", model: cls.id.name, strong: true };
  if (base !== "Repository" && base !== "TreeRepository") return undefined;
  const arg = cls.superTypeArguments?.params[0];
  const model = arg?.type === "TSTypeReference" ? typeName(arg)?.name : undefined;
  return model ? { kind: "repo", model, strong: true } : undefined;
}

/**
 * What a receiver is: a repository of some entity, an EntityManager, or another library's object. Read from the
 * syntax; where that finds nothing or only guesses from a name, the receiver's type sharpens it when the parser has
 * a program (`Repository<Job>` through an alias or a wrapper's property).
 */
function resolveTarget(ctx: RecognizerContext, node: Node, depth = 0): Target | undefined {
  const t = resolveSyntax(ctx, node, depth);
  if (t && (t.kind !== "repo" || t.strong)) return t;
  const typed = namedTypeOf(ctx.sourceCode, unwrap(node));
  if (typed && (typed.name === "Repository" || typed.name === "TreeRepository") && typed.args[0]) return { kind: "repo", model: typed.args[0], strong: true };
  if (typed?.name === "EntityManager") return MANAGER;
  return t;
}

function resolveSyntax(ctx: RecognizerContext, node: Node, depth: number): Target | undefined {
  if (depth > 5) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "AwaitExpression":
      return resolveTarget(ctx, n.argument, depth + 1);
    case "ThisExpression":
      return thisTarget(n);
    case "CallExpression": {
      const method = methodName(n);
      if (method === "getRepository" || method === "getTreeRepository") {
        const model = entityName(n.arguments[0]);
        return model ? { kind: "repo", model, strong: true } : undefined;
      }
      if (method === "withRepository" && n.arguments[0]) return resolveTarget(ctx, n.arguments[0], depth + 1);
      if (method === "getCustomRepository") {
        const name = entityName(n.arguments[0]);
        const t = name ? byName(name) : undefined;
        return t?.kind === "repo" ? { ...t, strong: true } : undefined;
      }
      if (method === "getManager" || method === "createEntityManager") return MANAGER;
      return undefined;
    }
    case "MemberExpression": {
      const name = keyName(n.property, n.computed);
      if (!name) return undefined;
      if (name === "manager") return MANAGER;
      if (unwrap(n.object).type === "ThisExpression") {
        const member = classMember(ctx, n, name, depth);
        if (member) return member;
      }
      return byName(name);
    }
    case "Identifier": {
      const variable = findVariable(ctx.sourceCode, n);
      const def = variable?.defs[0];
      if (def?.type === "Variable" && def.node.id.type === "Identifier") {
        const t = fromType(def.node.id.typeAnnotation);
        if (t) return t;
        if (def.node.init) {
          const init = unwrap(def.node.init);
          const resolved = resolveTarget(ctx, init, depth + 1);
          if (resolved) return resolved;
          // A value computed by some other call (a loaded entity, a query result) is not a repository.
          if (init.type === "CallExpression" || init.type === "AwaitExpression" || init.type === "NewExpression") return undefined;
        }
      } else if (def?.type === "Parameter") {
        if (def.name.type === "Identifier") {
          const t = fromType(def.name.typeAnnotation);
          if (t) return t;
        }
        if (isTransactionCallback(def.node)) return MANAGER;
      } else if (def?.type === "ClassName") {
        return flavorOf(ctx).baseEntities.has(n.name) ? { kind: "repo", model: n.name, strong: true } : { kind: "repo", model: n.name, strong: false };
      }
      return byName(n.name);
    }
    default:
      return undefined;
  }
}

// ---- find-options criteria ----

/** Parse state: whether a find operator was seen (evidence that the call is TypeORM), or a Mongo/Sequelize key. */
interface Seen {
  operator: boolean;
  foreign: boolean;
}

function isFromImport(ctx: RecognizerContext, id: TSESTree.Identifier): boolean {
  const variable = findVariable(ctx.sourceCode, id);
  if (!variable) return true; // a global in a snippet
  return variable.defs.every((d) => d.type === "ImportBinding" || (d.type === "Variable" && requireSource(d.node.init) !== undefined));
}

/** The find operator a call is (`Not`, `LessThan`, `typeorm.In`), or undefined for any other call. */
function findOperator(ctx: RecognizerContext, call: TSESTree.CallExpression): string | undefined {
  const c = unwrap(call.callee);
  if (c.type === "Identifier") return FIND_OPERATORS.has(c.name) && isFromImport(ctx, c) ? c.name : undefined;
  if (c.type === "MemberExpression" && !c.computed && c.property.type === "Identifier" && FIND_OPERATORS.has(c.property.name)) {
    const o = unwrap(c.object);
    return o.type === "Identifier" && isFromImport(ctx, o) ? c.property.name : undefined;
  }
  return undefined;
}

function valuesOf(ctx: RecognizerContext, node: Node | undefined): StaticValue[] | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return v ? [v] : undefined;
}

/** One find operator applied to `field` (`Not(In([…]))`, `LessThan(cutoff)`, `IsNull()`). */
function parseOperator(ctx: RecognizerContext, seen: Seen, op: string, field: string, call: TSESTree.CallExpression, at: Node): Condition {
  seen.operator = true;
  const [a0, a1] = call.arguments;
  const operand = (node: Node | undefined): Condition => {
    const inner = node && unwrap(node);
    if (inner?.type === "CallExpression") {
      const innerOp = findOperator(ctx, inner);
      if (innerOp) return parseOperator(ctx, seen, innerOp, field, inner, at);
    }
    return opaque(at);
  };
  switch (op) {
    case "Not": {
      const inner = a0 && unwrap(a0);
      if (!inner || inner.type === "SpreadElement") return opaque(at);
      if (inner.type === "CallExpression" && findOperator(ctx, inner)) return { kind: "not", item: operand(inner) };
      if (inner.type === "Literal" && inner.value === null) return opaque(at);
      return pred(field, "ne", valuesOf(ctx, inner), at);
    }
    case "Equal":
      return pred(field, "eq", valuesOf(ctx, a0), at);
    case "In":
    case "Any":
      return pred(field, "in", listOf(ctx, a0), at);
    case "LessThan":
      return pred(field, "lt", valuesOf(ctx, a0), at);
    case "LessThanOrEqual":
      return pred(field, "lte", valuesOf(ctx, a0), at);
    case "MoreThan":
      return pred(field, "gt", valuesOf(ctx, a0), at);
    case "MoreThanOrEqual":
      return pred(field, "gte", valuesOf(ctx, a0), at);
    case "IsNull":
      return pred(field, "eq", [{ value: null }], at);
    case "Between":
      return and([pred(field, "gte", valuesOf(ctx, a0), at), pred(field, "lte", valuesOf(ctx, a1), at)]);
    case "And":
      return and(call.arguments.map((a) => operand(a)));
    case "Or":
      return or(call.arguments.map((a) => operand(a)));
    case "Raw":
      return parseRaw(ctx, field, call, at);
    default:
      return pred(field, "other", undefined, at);
  }
}

/** `Raw((alias) => \`${alias} < NOW() - INTERVAL '5 minutes'\`, params)`: the SQL with the column for the alias. */
function parseRaw(ctx: RecognizerContext, field: string, call: TSESTree.CallExpression, at: Node): Condition {
  const fn = call.arguments[0] && unwrap(call.arguments[0]);
  if (!fn || (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression")) return opaque(at);
  const param = fn.params[0];
  if (fn.params.length !== 1 || param?.type !== "Identifier") return opaque(at);
  let body: Node | undefined = fn.body;
  if (body.type === "BlockStatement") {
    const only = body.body.length === 1 ? body.body[0] : undefined;
    body = only?.type === "ReturnStatement" && only.argument ? only.argument : undefined;
  }
  body = body && unwrap(body);
  if (body?.type !== "TemplateLiteral") return opaque(at);
  // `Raw((alias) => \`${alias} < NOW() - INTERVAL '5 minutes'\`)`: the alias is the column the operator is on.
  let text = "";
  for (let i = 0; i < body.quasis.length; i++) {
    text += body.quasis[i]!.value.cooked ?? "";
    const expr = body.expressions[i];
    if (!expr) continue;
    if (expr.type !== "Identifier" || expr.name !== param.name) return opaque(at);
    text += field;
  }
  const fragment = fragmentText(ctx, text, paramLookup(ctx, [call.arguments[1]]));
  return translateWhere(fragment.text, fragment.resolve, at) ?? opaque(at);
}

/** One property of a where object: a value (`status: X`, `id`), a find operator, or a nested relation/embedded object. */
function parseFieldValue(ctx: RecognizerContext, seen: Seen, field: string, valueNode: Node, at: Node): Condition | undefined {
  const v = unwrap(valueNode);
  if (v.type === "Identifier" && v.name === "undefined") return undefined; // TypeORM skips undefined properties
  if (v.type === "Literal" && v.value === null) return opaque(at); // null handling depends on the TypeORM version
  if (v.type === "CallExpression") {
    const op = findOperator(ctx, v);
    if (op) return parseOperator(ctx, seen, op, field, v, at);
    if (v.callee.type === "Identifier" && COERCIONS.has(v.callee.name)) return pred(field, "eq", undefined, at);
    return opaque(at);
  }
  if (v.type === "ObjectExpression") return parseCriteriaObject(ctx, seen, v, `${field}.`);
  if (v.type === "ArrayExpression" || isFunction(v)) return opaque(at);
  if (isClockReading(v)) return pred(field, "eq", undefined, at);
  return pred(field, "eq", valuesOf(ctx, v), at);
}

function parseCriteriaObject(ctx: RecognizerContext, seen: Seen, obj: TSESTree.ObjectExpression, prefix = ""): Condition {
  const items: Condition[] = [];
  for (const p of obj.properties) {
    if (p.type !== "Property") {
      items.push(opaque(p));
      continue;
    }
    const key = keyName(p.key, p.computed);
    if (key === undefined) {
      items.push(opaque(p));
      continue;
    }
    if (key.startsWith("$")) seen.foreign = true;
    const c = parseFieldValue(ctx, seen, prefix + key, p.value, p);
    if (c) items.push(c);
  }
  return { kind: "and", items };
}

/** A `where` of find options or of a `…By` read: an object, or an array of objects (any of them). */
function parseWhere(ctx: RecognizerContext, seen: Seen, node: Node): Condition {
  const n = unwrap(node);
  if (n.type === "ArrayExpression") {
    return or(n.elements.map((el) => {
      const obj = el && el.type !== "SpreadElement" ? objectArgument(ctx, el) : undefined;
      return obj ? parseCriteriaObject(ctx, seen, obj) : opaque(el ?? n);
    }));
  }
  const obj = objectArgument(ctx, n);
  return obj ? parseCriteriaObject(ctx, seen, obj) : opaque(n);
}

const ID_NAME = /(?:^|[a-z_])(?:id|Id|ID|uuid|Uuid|key|Key)$/;
const IDS_NAME = /(?:^|[a-z_])(?:ids|Ids|IDs|IDS)$/;

function expressionName(node: Node): string | undefined {
  if (node.type === "Identifier") return node.name;
  if (node.type === "MemberExpression") return keyName(node.property, node.computed);
  return undefined;
}

/**
 * The criteria of `update(criteria, partial)`: a where object (or an array of them), an id, or an array of ids. An id
 * names one row (`id` = a run-time value, even when written as a literal); an expression that is neither is opaque.
 */
function parseCriteria(ctx: RecognizerContext, seen: Seen, node: Node): Condition {
  const n = unwrap(node);
  if (n.type === "ObjectExpression") return parseCriteriaObject(ctx, seen, n);
  if (n.type === "ArrayExpression") {
    if (n.elements.length > 0 && n.elements.every((el) => el && el.type !== "SpreadElement" && objectArgument(ctx, el))) return parseWhere(ctx, seen, n);
    return pred("id", "in", undefined, n);
  }
  if (n.type === "Literal" || n.type === "TemplateLiteral" || n.type === "UnaryExpression") return pred("id", "eq", undefined, n);
  if (n.type === "CallExpression" && n.callee.type === "Identifier" && COERCIONS.has(n.callee.name)) return pred("id", "eq", undefined, n);
  if (n.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, n);
    const target = init && unwrap(init);
    if (target?.type === "ObjectExpression") return parseCriteriaObject(ctx, seen, target);
    if (target?.type === "ArrayExpression") return parseCriteria(ctx, seen, target);
  }
  const name = expressionName(n);
  if (name && IDS_NAME.test(name)) return pred("id", "in", undefined, n);
  if (name && ID_NAME.test(name)) return pred("id", "eq", undefined, n);
  return opaque(n);
}

// ---- SQL where strings: a small tokenizer and a recursive-descent parser ----

/**
 * How a query-builder fragment's parameters resolve: `:status` to the JS value given for it (in the clause's
 * parameter object, `setParameters`, `setParameter`), and `:...ids` of a static list to its elements.
 */
function fragmentText(ctx: RecognizerContext, text: string, params: (name: string) => Node | undefined): { text: string; resolve: ParamResolver } {
  const elements = new Map<string, StaticValue>();
  const expanded = text.replace(/:\.\.\.([A-Za-z_]\w*)/g, (_, name: string) => {
    const values = listOf(ctx, params(name));
    if (!values || values.length === 0) return `:${name}`;
    return values.map((v, i) => {
      elements.set(`${name}__${i}`, v);
      return `:${name}__${i}`;
    }).join(", ");
  });
  const resolve: ParamResolver = (ref) => {
    if (ref.kind !== "named") return undefined;
    const element = elements.get(ref.name);
    if (element) return { value: element };
    const node = params(ref.name);
    if (!node) return undefined;
    const value = evaluate(ctx.sourceCode, node);
    return value ? { value, node } : { node };
  };
  return { text: expanded, resolve };
}

/** An OR outside any parenthesis (strings and quoted names masked): TypeORM does not wrap a clause's text. */
function topLevelOr(text: string): boolean {
  const masked = maskSql(text).masked;
  let depth = 0;
  for (let i = 0; i < masked.length; i++) {
    const c = masked[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (depth === 0 && /^or\b/i.test(masked.slice(i, i + 3)) && (i === 0 || /\W/.test(masked[i - 1]!))) return true;
  }
  return false;
}

/** The qualifier a fragment's columns use (`job` in `job.status`), when the builder names no alias. */
function qualifierOf(text: string): string | undefined {
  return /(?:^|[^\w$."'])"?([A-Za-z_]\w*)"?\s*\.\s*"?[A-Za-z_]/.exec(text)?.[1];
}

/** A lookup of named parameters over parameter objects (the first that has the name wins). */
function paramLookup(ctx: RecognizerContext, nodes: readonly (Node | undefined)[]): (name: string) => Node | undefined {
  const objects = nodes.map((n) => (n && n.type !== "SpreadElement" ? objectArgument(ctx, n) : undefined));
  return (name) => {
    for (const o of objects) {
      const p = o && property(o, name);
      if (p) return p.value;
    }
    return undefined;
  };
}

// ---- query builder chains ----

interface Link {
  readonly name: string;
  readonly call: TSESTree.CallExpression;
}

/** The calls of a method chain ending in `call`, innermost first, and the expression the chain starts on. */
function chainOf(call: TSESTree.CallExpression): { links: Link[]; base: Node } | undefined {
  const links: Link[] = [];
  let n: Node = call;
  for (let i = 0; i < 40; i++) {
    const c = unwrap(n);
    if (c.type !== "CallExpression") return { links: links.reverse(), base: c };
    const callee = unwrap(c.callee);
    if (callee.type !== "MemberExpression") return undefined;
    const name = keyName(callee.property, callee.computed);
    if (!name) return undefined;
    links.push({ name, call: c });
    n = callee.object;
  }
  return undefined;
}

const WHERE_LINKS = /^(?:where|andWhere|orWhere|whereInIds|andWhereInIds|orWhereInIds|whereExists|andWhereExists|orWhereExists)$/;

interface Builder {
  readonly links: readonly Link[];
  /** Index of the `createQueryBuilder` link. */
  readonly root: number;
  readonly receiver: Node;
  readonly model: string | undefined;
  readonly mainAlias: string | undefined;
}

function builderOf(ctx: RecognizerContext, call: TSESTree.CallExpression): Builder | undefined {
  const chain = chainOf(call);
  if (!chain) return undefined;
  const root = chain.links.findIndex((l) => l.name === "createQueryBuilder");
  if (root < 0) return undefined;
  const rootCall = chain.links[root]!.call;
  const receiver = unwrap((unwrap(rootCall.callee) as TSESTree.MemberExpression).object);
  const target = resolveTarget(ctx, receiver);
  if (target?.kind === "foreign") return undefined;
  const after = chain.links.slice(root + 1);
  const [a0, a1] = rootCall.arguments;
  const text = (n: Node | undefined) => (n && n.type === "Literal" && typeof n.value === "string" ? n.value : undefined);
  let model: string | undefined;
  let mainAlias: string | undefined;
  if (target?.kind === "repo") {
    model = target.model;
    mainAlias = text(a0);
  } else if (rootCall.arguments.length >= 2) {
    model = entityName(a0);
    mainAlias = text(a1);
  }
  for (const l of after) {
    const first = l.call.arguments[0];
    if ((l.name === "update" || l.name === "from") && first && unwrap(first).type !== "ObjectExpression") {
      model = entityName(first) ?? model;
      if (l.name === "from") mainAlias = text(l.call.arguments[1]) ?? mainAlias;
    }
  }
  return { links: chain.links, root, receiver, model, mainAlias };
}

/** The filter of a builder: its where clauses joined as TypeORM joins them (as text, AND/OR without brackets). */
function builderFilter(ctx: RecognizerContext, b: Builder): { filter: Condition; seen: Seen } {
  const seen: Seen = { operator: false, foreign: false };
  const links = b.links.slice(b.root + 1);
  const chainParams: (Node | undefined)[] = [];
  for (const l of links) {
    if (l.name === "setParameters" || l.name === "where" || l.name === "andWhere" || l.name === "orWhere") {
      chainParams.push(l.name === "setParameters" ? l.call.arguments[0] : l.call.arguments[1]);
    }
  }
  const setParameter = (name: string): Node | undefined => {
    for (const l of links) {
      const [k, v] = l.call.arguments;
      if (l.name === "setParameter" && k?.type === "Literal" && k.value === name && v && v.type !== "SpreadElement") return v;
    }
    return undefined;
  };
  const hasJoins = links.some((l) => JOIN_METHODS.test(l.name));
  const params = (name: string): Node | undefined => paramLookup(ctx, chainParams)(name) ?? setParameter(name);

  // Each clause is read on its own (its predicates point at its own argument), then joined as TypeORM joins them.
  type Clause = { conn: "and" | "or"; cond: Condition; topOr: boolean };
  let clauses: Clause[] = [];
  let alias = b.mainAlias;
  for (const l of links) {
    if (!WHERE_LINKS.test(l.name)) continue;
    const conn = l.name.startsWith("or") ? "or" : "and";
    if (l.name === "where" || l.name === "whereInIds" || l.name === "whereExists") clauses = [];
    const arg = l.call.arguments[0];
    const at: Node = arg ?? l.call;
    const push = (cond: Condition, topOr = false) => clauses.push({ conn, cond, topOr });
    if (/InIds$/.test(l.name)) {
      const ids = arg && unwrap(arg);
      push(pred("id", ids?.type === "ArrayExpression" || (ids && IDS_NAME.test(expressionName(ids) ?? "")) ? "in" : "eq", undefined, at));
      continue;
    }
    if (/Exists$/.test(l.name) || !arg || arg.type === "SpreadElement") {
      push(opaque(at));
      continue;
    }
    const value = unwrap(arg);
    let textValue: string | undefined;
    if (value.type === "Literal" && typeof value.value === "string") textValue = value.value;
    else if (value.type === "TemplateLiteral" && value.expressions.length === 0) textValue = value.quasis.map((q) => q.value.cooked ?? "").join("");
    else if (value.type === "Identifier") {
      const v = evaluate(ctx.sourceCode, value);
      if (typeof v?.value === "string") textValue = v.value;
    }
    if (textValue === undefined) {
      const isObject = value.type === "ObjectExpression" || value.type === "ArrayExpression" || objectArgument(ctx, value) !== undefined;
      push(isObject ? parseWhere(ctx, seen, value) : opaque(at));
      continue;
    }
    if (!/\S/.test(textValue)) {
      push(opaque(at));
      continue;
    }
    // Without joins every qualifier is the builder's own table; with joins only its alias is.
    if (!hasJoins) alias ??= qualifierOf(textValue);
    const fragment = fragmentText(ctx, textValue, (name) => paramLookup(ctx, [l.call.arguments[1]])(name) ?? params(name));
    const cond = translateWhere(fragment.text, fragment.resolve, at, alias);
    if (!cond) return { filter: opaque(at), seen };
    push(cond, topLevelOr(textValue));
  }
  if (clauses.length === 0) return { filter: { kind: "and", items: [] }, seen };
  // `where("a OR b").andWhere("c")` is `a OR (b AND c)` by default and `(a OR b) AND c` with isolateWhereStatements.
  if (clauses.length > 1 && clauses.some((c) => c.topOr)) return { filter: opaque(b.links[b.root + 1]?.call ?? b.links[b.root]!.call), seen };
  // AND binds tighter than OR: `where(a).orWhere(b).andWhere(c)` is `a OR (b AND c)`.
  const groups: Condition[][] = [[]];
  for (const c of clauses) {
    if (c.conn === "or" && groups.at(-1)!.length > 0) groups.push([]);
    groups.at(-1)!.push(c.cond);
  }
  return { filter: or(groups.map((g) => and(g))), seen };
}

// ---- assignments ----

function rawSqlValue(fn: Node): string | undefined {
  if (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression") return undefined;
  let body: Node | undefined = fn.body;
  if (body.type === "BlockStatement") {
    const only = body.body.length === 1 ? body.body[0] : undefined;
    body = only?.type === "ReturnStatement" && only.argument ? only.argument : undefined;
  }
  body = body && unwrap(body);
  if (body?.type === "Literal" && typeof body.value === "string") return body.value;
  if (body?.type === "TemplateLiteral" && body.expressions.length === 0) return body.quasis.map((q) => q.value.cooked ?? "").join("");
  return undefined;
}

function assignedValue(ctx: RecognizerContext, node: Node): AssignedValue {
  const n = unwrap(node);
  if (isClockReading(n)) return { kind: "now" };
  if (n.type === "ArrowFunctionExpression" || n.type === "FunctionExpression") {
    const sql = rawSqlValue(n);
    return sql !== undefined && isSqlNow(sql) ? { kind: "now" } : { kind: "other" };
  }
  const v = evaluate(ctx.sourceCode, n);
  return v ? { kind: "static", value: v } : { kind: "other" };
}

/** `{ status: X, startedAt: new Date(), lease: { owner } }`: one assignment per field, embedded ones as `lease.owner`. */
function parsePartial(ctx: RecognizerContext, obj: TSESTree.ObjectExpression, prefix = ""): Assignment[] {
  const out: Assignment[] = [];
  for (const p of obj.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    if (key === undefined) continue;
    const value = unwrap(p.value);
    if (value.type === "ObjectExpression") out.push(...parsePartial(ctx, value, `${prefix}${key}.`));
    else out.push({ field: prefix + key, value: assignedValue(ctx, value), node: p, valueNode: p.value });
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
function criteriaEdit(ctx: RecognizerContext, criteria: Node, field: string, op: "eq" | "ne", valueText: string): TextEdit | undefined {
  const text = predicateText(ctx, field, op, valueText);
  if (!text) return undefined;
  const n = unwrap(criteria);
  if (n.type === "ObjectExpression") {
    return property(n, field) || n.properties.some((p) => p.type !== "Property") ? undefined : insertProperty(ctx, n, text);
  }
  const idText = ctx.sourceCode.getText(criteria);
  const id = n.type === "Identifier" && n.name === "id" ? "id" : `id: ${idText}`;
  return { range: [criteria.range[0], criteria.range[1]], text: `{ ${id}, ${text} }` };
}

/** Adds `.andWhere("field <> :field", { field: X })` after the builder's last where clause (or `.where(…)` after `.set`). */
function builderEdit(ctx: RecognizerContext, b: Builder, field: string, op: "eq" | "ne", valueText: string): TextEdit | undefined {
  const links = b.links.slice(b.root + 1);
  if (!/^[A-Za-z_]\w*$/.test(field) || links.some((l) => /^orWhere/.test(l.name))) return undefined;
  const paramUsed = new RegExp(`:(?:\\.\\.\\.)?${field}\\b`);
  for (const l of links) {
    if (!WHERE_LINKS.test(l.name) && l.name !== "setParameter" && l.name !== "setParameters") continue;
    const [first, second] = l.call.arguments;
    // `.where("a OR b").andWhere(c)` is `a OR (b AND c)`: an added condition would not guard every row.
    if (first && (paramUsed.test(ctx.sourceCode.getText(first)) || (WHERE_LINKS.test(l.name) && /\bOR\b/i.test(ctx.sourceCode.getText(first))))) return undefined;
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

// ---- reads held under a pessimistic write lock ----

interface LockedRead {
  readonly node: Node;
  readonly model: string;
  readonly filter: Condition;
  readonly unit: TSESTree.FunctionLike | null;
}

function lockedReads(ctx: RecognizerContext): LockedRead[] {
  return (ctx.scratch.get("typeorm:locked") as LockedRead[] | undefined) ?? [];
}

/** The filter of a write, with what earlier locked reads of the same model in the same function still guarantee. */
function underLocks(ctx: RecognizerContext, node: Node, model: string, filter: Condition): Condition {
  const unit = unitOf(node);
  const held = lockedReads(ctx).filter((r) => r.unit === unit && r.node.range[1] <= node.range[0] && sameModel(r.model, model));
  if (held.length === 0) return filter;
  return { kind: "and", items: [filter, ...held.flatMap((r) => [r.filter, opaque(r.node)])] };
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
  if (seen.foreign || (!strong && !flavor.typeorm && !seen.operator && !flavor.baseEntities.has(model))) return undefined;
  return { read: { access: "read", store: STORE, model, operation: method, filter, node: call }, locked };
}

/** `createQueryBuilder(…)….where(…).getMany()`, and `.execute()` of a select. */
function recognizeBuilderRead(ctx: RecognizerContext, call: TSESTree.CallExpression, method: string): ReadResult | undefined {
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
  if (seen.foreign || (!strong && !flavor.typeorm && !seen.operator && !flavor.baseEntities.has(model))) return undefined;
  const criteria = unwrap(criteriaNode);
  const editable = criteria.type === "ObjectExpression" || (filter.kind === "pred" && filter.op === "eq" && filter.node === criteria);
  return {
    access: "write",
    store: STORE,
    model,
    operation: "update",
    filter: underLocks(ctx, call, model, filter),
    assignments: parsePartial(ctx, partial),
    node: call,
    ...(editable ? { addPredicate: (field, op, valueText) => criteriaEdit(ctx, criteriaNode, field, op, valueText) } : {}),
  };
}

/** `createQueryBuilder()….update(Job).set({…}).where(…).execute()`, recognised at `.execute()`. */
function recognizeBuilderUpdate(ctx: RecognizerContext, call: TSESTree.CallExpression, b: Builder): StateWrite | undefined {
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
    filter: underLocks(ctx, call, b.model, filter),
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
    if (parent.type === "BlockStatement" || parent.type === "Program" || parent.type === "StaticBlock") return { stmt: child, body: parent.body };
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
    const value: AssignedValue = e.operator === "=" ? assignedValue(ctx, e.right) : { kind: "other" };
    return [{ field, value, node: e, valueNode: e.right }];
  }
  if (e.type === "UpdateExpression" && e.argument.type === "MemberExpression" && isEntity(e.argument.object)) {
    const field = keyName(e.argument.property, e.argument.computed);
    return field ? [{ field, value: { kind: "other" }, node: e, valueNode: e }] : undefined;
  }
  if (e.type === "CallExpression" && e.arguments.length === 2 && e.arguments[0] && isEntity(e.arguments[0])) {
    const callee = unwrap(e.callee);
    const isAssign = callee.type === "MemberExpression" && unwrap(callee.object).type === "Identifier" &&
      (unwrap(callee.object) as TSESTree.Identifier).name === "Object" && keyName(callee.property, callee.computed) === "assign";
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
  return init.type === "CallExpression" && methodName(init) === "create";
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
    return { access: "write", store: STORE, model, operation: "save", filter: underLocks(ctx, call, model, filter), assignments, node: call };
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
    filter: underLocks(ctx, call, model, filter),
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
  methods: new Set([...WRITE_METHODS, ...OPTION_READS, ...BY_READS, ...BUILDER_READS]),
  prepare(calls, ctx) {
    const locked: LockedRead[] = [];
    for (const call of calls) {
      const method = methodName(call);
      if (!method || !(OPTION_READS.has(method) || BUILDER_READS.has(method) || method === "execute")) continue;
      try {
        const r = recognizeAny(ctx, call);
        if (r && "locked" in r && r.locked) locked.push({ node: call, model: r.read.model, filter: r.read.filter, unit: unitOf(call) });
      } catch {
        // an unexpected shape is not a locked read
      }
    }
    ctx.scratch.set("typeorm:locked", locked);
    return [];
  },
  recognize(call, ctx) {
    try {
      const r = recognizeAny(ctx, call);
      if (!r || !("locked" in r)) return r;
      // A locked read's filter lives on in the writes that follow it (see `underLocks`); as a read of its own it
      // would be a second stale scan of the same rows.
      return r.locked ? { ...r.read, filter: opaque(call) } : r.read;
    } catch {
      return undefined; // an unexpected shape is not ours
    }
  },
};
