/** TypeORM recognizer: the vocabulary and small AST helpers its parts share. */
import type { TSESTree } from "@typescript-eslint/utils";
import type { CompareOp, Condition, Node, StaticValue } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { normalizeName } from "../../core/model/settings.js";
import { findProperty, keyName, objectLiteral, staticList, unwrap } from "../../core/reading/values.js";

export const STORE = "typeorm";
export const OPTION_READS = new Set(["findOne", "findOneOrFail", "find", "findAndCount", "count", "exist", "exists"]);
export const BY_READS = new Set(["findOneBy", "findOneByOrFail", "findBy", "findAndCountBy", "countBy", "existsBy"]);
export const BUILDER_READS = new Set([
  "getOne",
  "getOneOrFail",
  "getMany",
  "getManyAndCount",
  "getCount",
  "getExists",
  "getRawOne",
  "getRawMany",
]);
export const WRITE_METHODS = new Set(["update", "save", "execute"]);

export const TYPEORM_MODULE = /^(?:typeorm|@nestjs\/typeorm)(?:\/|$)/;
export const FOREIGN_MODULE =
  /^(?:sequelize|sequelize-typescript|@nestjs\/sequelize|mongoose|@nestjs\/mongoose|mongodb|@typegoose\/typegoose|objection|@mikro-orm\/[\w-]+)$/;
/** Keys of Sequelize and Mongo option bags: a second argument holding one is not a TypeORM partial entity. */
export const OPTION_KEYS = new Set([
  "where",
  "transaction",
  "returning",
  "individualHooks",
  "session",
  "runValidators",
  "arrayFilters",
  "upsert",
  "multi",
  "sideEffects",
  "silent",
  "overwrite",
  "timestamps",
  "new",
]);
/** Keys of Sequelize and Mongo find options that TypeORM does not have. */
export const FOREIGN_FIND_KEYS = new Set([
  "attributes",
  "include",
  "raw",
  "paranoid",
  "nest",
  "group",
  "having",
  "limit",
  "offset",
  "lean",
  "projection",
  "sort",
  "session",
]);
export const WRITE_LOCKS =
  /^(?:pessimistic_write|pessimistic_write_or_fail|pessimistic_partial_write|for_no_key_update)$/;
export const MANAGER_NAME =
  /^(?:manager|em|entityManager|transactionalEntityManager|transactionManager|txManager|trxManager|tx|trx)$|EntityManager$/;
/** Receiver names that are clients or services, never an entity's repository. */
export const NOT_A_REPO =
  /^(?:db|database|client|prisma|knex|pool|sequelize|mongoose|redis|conn|connection|dataSource|orm|sql|qb|api|http|axios|app|req|res|ctx|cache|store|queue|bus|emitter|map|set|state|this)$|(?:Service|Client|Api|Cache|Store|Queue|Gateway|Controller|Helper|Utils?|Map|Set)$/i;
export const FIND_OPERATORS = new Set([
  "Not",
  "In",
  "Any",
  "Equal",
  "LessThan",
  "LessThanOrEqual",
  "MoreThan",
  "MoreThanOrEqual",
  "IsNull",
  "Between",
  "Like",
  "ILike",
  "Raw",
  "And",
  "Or",
  "ArrayContains",
  "ArrayContainedBy",
  "ArrayOverlap",
  "JsonContains",
]);
export const COERCIONS = new Set(["Number", "String", "BigInt", "parseInt"]);
export const JOIN_METHODS = /^(?:left|inner)Join/;

// ---- small AST helpers ----

export const objectArgument = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

export const property = findProperty;

export function keysOf(object: TSESTree.ObjectExpression): string[] {
  return object.properties.flatMap((p) => (p.type === "Property" ? [keyName(p.key, p.computed) ?? ""] : []));
}

/** The static elements of an array (literal or `const`), or undefined when any is known only at run time. */
export const listOf = (ctx: RecognizerContext, node: Node | undefined) => staticList(ctx.sourceCode, node);

/** The entity a call names as its target: `Job`, `"job"`, `entities.Job`. */
export function entityName(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const n = unwrap(node);
  if (n.type === "Identifier") return n.name;
  if (n.type === "Literal" && typeof n.value === "string" && n.value) return n.value;
  if (n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier") return n.property.name;
  return undefined;
}

/** An entity class or name as the first argument of an EntityManager method (`Job`, `"job"`), not an entity value. */
export function isEntityTarget(node: Node | undefined): boolean {
  if (!node) return false;
  const n = unwrap(node);
  if (n.type === "Literal") return typeof n.value === "string";
  if (n.type === "Identifier") return /^[A-Z]/.test(n.name);
  return (
    n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier" && /^[A-Z]/.test(n.property.name)
  );
}

export function sameModel(a: string, b: string): boolean {
  const norm = (s: string) => {
    const n = normalizeName(s);
    return n.length > 3 && n.endsWith("s") && !n.endsWith("ss") ? n.slice(0, -1) : n;
  };
  return norm(a) === norm(b);
}

export const opaque = (node: Node): Condition => ({ kind: "opaque", node });
export const and = (items: Condition[]): Condition => (items.length === 1 ? items[0]! : { kind: "and", items });
export const or = (items: Condition[]): Condition => (items.length === 1 ? items[0]! : { kind: "or", items });
export const pred = (
  field: string,
  op: CompareOp,
  values: readonly StaticValue[] | undefined,
  node: Node,
): Condition => ({ kind: "pred", field, op, values, node });
