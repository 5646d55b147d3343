/** TypeORM recognizer: find-options criteria (`{ id, status: Not(X) }`, find operators, `Raw`) and SQL fragments. */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, StaticValue } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { maskSql } from "../../core/languages/sql/lexing.js";
import { translateWhere } from "../../core/languages/sql/statements.js";
import type { ParamResolver } from "../../core/languages/sql/values.js";
import { isFunction } from "../../core/reading/units.js";
import { evaluate, findVariable, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import {
  readFilterArgument,
  readObjectFilter,
  type FieldOperator,
  type ObjectFilterDialect,
  type OwnOperator,
} from "../../core/reading/object-filters.js";
import { COERCIONS, FIND_OPERATORS, listOf, objectArgument, opaque, pred, property } from "./shared.js";
import { requireSource } from "./targets.js";
import { isClockReading } from "../../core/reading/clock.js";
import { expressionName } from "../../core/reading/ast.js";

// ---- find-options criteria ----

/** Parse state: whether a find operator was seen (evidence that the call is TypeORM), or a Mongo/Sequelize key. */
export interface Seen {
  operator: boolean;
  foreign: boolean;
}

function isFromImport(ctx: RecognizerContext, id: TSESTree.Identifier): boolean {
  const variable = findVariable(ctx.sourceCode, id);
  if (!variable) return true; // a global in a snippet
  return variable.defs.every(
    (d) => d.type === "ImportBinding" || (d.type === "Variable" && requireSource(d.node.init) !== undefined),
  );
}

/** The find operator a call is (`Not`, `LessThan`, `typeorm.In`), or undefined for any other call. */
function findOperator(ctx: RecognizerContext, call: TSESTree.CallExpression): string | undefined {
  const c = unwrap(call.callee);
  if (c.type === "Identifier") return FIND_OPERATORS.has(c.name) && isFromImport(ctx, c) ? c.name : undefined;
  if (
    c.type === "MemberExpression" &&
    !c.computed &&
    c.property.type === "Identifier" &&
    FIND_OPERATORS.has(c.property.name)
  ) {
    const o = unwrap(c.object);
    return o.type === "Identifier" && isFromImport(ctx, o) ? c.property.name : undefined;
  }
  return undefined;
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

/** What each find operator compares (`Not(In([…]))`, `LessThan(cutoff)`, `IsNull()`); `Raw` is read as SQL. */
const OPERATORS: Readonly<Record<string, Exclude<FieldOperator, OwnOperator>>> = {
  ...Object.fromEntries([...FIND_OPERATORS].map((name): [string, FieldOperator] => [name, "other"])),
  Not: "not",
  Equal: "eq",
  In: "in",
  Any: "in",
  LessThan: "lt",
  LessThanOrEqual: "lte",
  MoreThan: "gt",
  MoreThanOrEqual: "gte",
  IsNull: "null",
  Between: "between",
  And: "and",
  Or: "or",
};

/**
 * TypeORM's find criteria: a value per column (`status: X`, `id`), a find operator called on it (`Not(X)`,
 * `LessThan(cutoff)`; imported from `typeorm`, which is what makes the call TypeORM's: `seen.operator`), an object for
 * a relation's or an embedded entity's columns (`owner: { id }` is `owner.id`), and a list of such objects meaning any
 * of them. An undefined value is skipped, as TypeORM skips it; `null`, a list, a function or another call is read as
 * nothing known; a clock reading or a coercion (`Number(id)`) is a value known only at run time. A `$` key is Mongo's
 * (`seen.foreign`).
 */
function criteriaDialect(ctx: RecognizerContext, seen: Seen): ObjectFilterDialect {
  return {
    combinators: {},
    operators: { ...OPERATORS, Raw: (_sourceCode, field, call, at) => parseRaw(ctx, field, call, at) },
    nested: "path",
    mixed: "each",
    bare: "eq",
    objectOperand: "one",
    topLevelList: true,
    operatorCall(node) {
      const call = unwrap(node);
      const name = call.type === "CallExpression" ? findOperator(ctx, call) : undefined;
      if (name === undefined || call.type !== "CallExpression") return undefined;
      seen.operator = true;
      return { name, call };
    },
    fieldValue(_sourceCode, field, valueNode, at) {
      if (/(?:^|\.)\$/.test(field)) seen.foreign = true;
      const v = unwrap(valueNode);
      if (v.type === "Identifier" && v.name === "undefined") return null; // TypeORM skips undefined properties
      if (v.type === "Literal" && v.value === null) return opaque(at); // null handling depends on the TypeORM version
      if (v.type === "CallExpression") {
        if (findOperator(ctx, v)) {
          // `Not(null)`: null handling depends on the TypeORM version
          const [arg] = v.arguments;
          const callee = unwrap(v.callee);
          const name =
            callee.type === "Identifier" ? callee.name : keyName((callee as TSESTree.MemberExpression).property, false);
          return name === "Not" && arg?.type === "Literal" && arg.value === null ? opaque(at) : undefined;
        }
        if (v.callee.type === "Identifier" && COERCIONS.has(v.callee.name)) return pred(field, "eq", undefined, at);
        return opaque(at);
      }
      if (v.type === "ArrayExpression" || isFunction(v)) return opaque(at);
      if (isClockReading(v)) return pred(field, "eq", undefined, at);
      return undefined;
    },
  };
}

function parseCriteriaObject(ctx: RecognizerContext, seen: Seen, obj: TSESTree.ObjectExpression): Condition {
  return readObjectFilter(ctx.sourceCode, criteriaDialect(ctx, seen), obj);
}

/** A `where` of find options or of a `…By` read: an object, or an array of objects (any of them). */
export function parseWhere(ctx: RecognizerContext, seen: Seen, node: Node): Condition {
  return readFilterArgument(ctx.sourceCode, criteriaDialect(ctx, seen), node);
}

const ID_NAME = /(?:^|[a-z_])(?:id|Id|ID|uuid|Uuid|key|Key)$/;
export const IDS_NAME = /(?:^|[a-z_])(?:ids|Ids|IDs|IDS)$/;

/**
 * The criteria of `update(criteria, partial)`: a where object (or an array of them), an id, or an array of ids. An id
 * names one row (`id` = a run-time value, even when written as a literal); an expression that is neither is opaque.
 */
export function parseCriteria(ctx: RecognizerContext, seen: Seen, node: Node): Condition {
  const n = unwrap(node);
  if (n.type === "ObjectExpression") return parseCriteriaObject(ctx, seen, n);
  if (n.type === "ArrayExpression") {
    if (n.elements.length > 0 && n.elements.every((el) => el && el.type !== "SpreadElement" && objectArgument(ctx, el)))
      return parseWhere(ctx, seen, n);
    return pred("id", "in", undefined, n);
  }
  if (n.type === "Literal" || n.type === "TemplateLiteral" || n.type === "UnaryExpression")
    return pred("id", "eq", undefined, n);
  if (n.type === "CallExpression" && n.callee.type === "Identifier" && COERCIONS.has(n.callee.name))
    return pred("id", "eq", undefined, n);
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

// ---- SQL where fragments: read by the project's SQL parser ----

/**
 * How a query-builder fragment's parameters resolve: `:status` to the JS value given for it (in the clause's
 * parameter object, `setParameters`, `setParameter`), and `:...ids` of a static list to its elements.
 */
export function fragmentText(
  ctx: RecognizerContext,
  text: string,
  params: (name: string) => Node | undefined,
): { text: string; resolve: ParamResolver } {
  const elements = new Map<string, StaticValue>();
  const expanded = text.replace(/:\.\.\.([A-Za-z_]\w*)/g, (_, name: string) => {
    const values = listOf(ctx, params(name));
    if (!values || values.length === 0) return `:${name}`;
    return values
      .map((v, i) => {
        elements.set(`${name}__${i}`, v);
        return `:${name}__${i}`;
      })
      .join(", ");
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
export function topLevelOr(text: string): boolean {
  const masked = maskSql(text).masked;
  let depth = 0;
  for (let i = 0; i < masked.length; i++) {
    const c = masked[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (depth === 0 && /^or\b/i.test(masked.slice(i, i + 3)) && (i === 0 || /\W/.test(masked[i - 1]!)))
      return true;
  }
  return false;
}

/** The qualifier a fragment's columns use (`job` in `job.status`), when the builder names no alias. */
export function qualifierOf(text: string): string | undefined {
  return /(?:^|[^\w$."'])"?([A-Za-z_]\w*)"?\s*\.\s*"?[A-Za-z_]/.exec(text)?.[1];
}

/** A lookup of named parameters over parameter objects (the first that has the name wins). */
export function paramLookup(
  ctx: RecognizerContext,
  nodes: readonly (Node | undefined)[],
): (name: string) => Node | undefined {
  const objects = nodes.map((n) => (n && n.type !== "SpreadElement" ? objectArgument(ctx, n) : undefined));
  return (name) => {
    for (const o of objects) {
      const p = o && property(o, name);
      if (p) return p.value;
    }
    return undefined;
  };
}
