/**
 * Drizzle: conditions written with `drizzle-orm`'s operator functions (imported by name, through a namespace, or
 * destructured in a relational `where` callback) as a `Condition`, and how the file spells an operator it imports.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { CompareOp, Condition, Node } from "../../core/model/accesses.js";
import { SWAPPED } from "../../core/model/conditions.js";
import type { RecognizerContext } from "../recognizer.js";
import { evaluate, findVariable, getConstInit, keyName, staticList, unwrap } from "../../core/reading/values.js";
import { isSqlTemplate } from "../../core/reading/clock.js";

const COMPARE: Record<string, CompareOp> = { eq: "eq", ne: "ne", lt: "lt", lte: "lte", gt: "gt", gte: "gte" };
/** `a < col` is `col > a`. */
/** Column operators we do not model: a predicate on the column, op `other`. */
const OTHER_COLUMN_OPS = new Set([
  "like",
  "ilike",
  "notLike",
  "notIlike",
  "between",
  "notBetween",
  "arrayContains",
  "arrayContained",
  "arrayOverlaps",
]);
export const OPERATORS = new Set([
  ...Object.keys(COMPARE),
  "inArray",
  "notInArray",
  "isNull",
  "isNotNull",
  "and",
  "or",
  "not",
  ...OTHER_COLUMN_OPS,
]);

// ---- operators in scope ----

interface OperatorScope {
  /** Local identifier → drizzle operator name. */
  readonly locals: ReadonlyMap<string, string>;
}

export const NO_SCOPE: OperatorScope = { locals: new Map() };

function isDrizzleSource(source: string): boolean {
  return source === "drizzle-orm" || source.startsWith("drizzle-orm/");
}

/** The drizzle operator an identifier names: imported from `drizzle-orm`, or bound by a relational callback. */
export function operatorOf(ctx: RecognizerContext, scope: OperatorScope, callee: Node): string | undefined {
  const c = unwrap(callee);
  if (c.type === "Identifier") {
    const local = scope.locals.get(c.name);
    if (local !== undefined) return local;
    const variable = findVariable(ctx.sourceCode, c);
    const def = variable?.defs[0];
    if (def?.type !== "ImportBinding" || def.node.type !== "ImportSpecifier") return undefined;
    const decl = def.node.parent as TSESTree.ImportDeclaration;
    if (!isDrizzleSource(decl.source.value)) return undefined;
    const imported = def.node.imported.type === "Identifier" ? def.node.imported.name : def.node.imported.value;
    return OPERATORS.has(imported) ? imported : undefined;
  }
  if (c.type === "MemberExpression") {
    const name = keyName(c.property, c.computed);
    const object = unwrap(c.object);
    if (!name || !OPERATORS.has(name) || object.type !== "Identifier") return undefined;
    if (object.name === "drizzle") return name;
    const def = findVariable(ctx.sourceCode, object)?.defs[0];
    if (
      def?.type === "ImportBinding" &&
      def.node.type === "ImportNamespaceSpecifier" &&
      isDrizzleSource((def.node.parent as TSESTree.ImportDeclaration).source.value)
    )
      return name;
  }
  return undefined;
}

/** How the file spells a drizzle operator for an inserted condition: its import's local name, or `ns.name`. */
export function spelling(ctx: RecognizerContext, name: string): string | undefined {
  for (const stmt of ctx.sourceCode.ast.body) {
    if (stmt.type !== "ImportDeclaration" || !isDrizzleSource(stmt.source.value) || stmt.importKind === "type")
      continue;
    for (const s of stmt.specifiers) {
      if (s.type === "ImportNamespaceSpecifier") return `${s.local.name}.${name}`;
      if (s.type === "ImportSpecifier" && s.importKind !== "type") {
        const imported = s.imported.type === "Identifier" ? s.imported.name : s.imported.value;
        if (imported === name) return s.local.name;
      }
    }
  }
  return undefined;
}

// ---- conditions ----

/** `jobs.status` → `status`: a non-computed property of a plain object expression (not a call result). */
function columnField(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type !== "MemberExpression") return undefined;
  const object = unwrap(n.object);
  if (object.type !== "Identifier" && object.type !== "MemberExpression" && object.type !== "ThisExpression")
    return undefined;
  return keyName(n.property, n.computed);
}

/** The table identifier a column belongs to (`jobs` in `jobs.status`, `schema.jobs` → `jobs`). */
function columnTable(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type !== "MemberExpression") return undefined;
  const o = unwrap(n.object);
  if (o.type === "Identifier") return o.name;
  if (o.type === "MemberExpression") return keyName(o.property, o.computed);
  return undefined;
}

function isColumnOf(node: Node, tables: ReadonlySet<string>): boolean {
  const t = columnTable(node);
  return t !== undefined && tables.has(t);
}

const staticValues = (ctx: RecognizerContext, node: Node) => staticList(ctx.sourceCode, node);

export interface ConditionEnv {
  readonly ctx: RecognizerContext;
  readonly scope: OperatorScope;
  /** Table names whose columns the statement compares (to tell `eq(jobs.id, job.id)` column from value). */
  readonly tables: ReadonlySet<string>;
}

/** A binary comparison: the column side, normalised so that the column reads on the left. */
function comparison(env: ConditionEnv, op: CompareOp, call: TSESTree.CallExpression): Condition {
  const [a, b] = call.arguments;
  const opaque: Condition = { kind: "opaque", node: call };
  if (!a || !b || a.type === "SpreadElement" || b.type === "SpreadElement") return opaque;
  let column: Node,
    value: Node,
    normalized = op;
  if (isColumnOf(a, env.tables) || (!isColumnOf(b, env.tables) && columnField(a) !== undefined)) {
    column = a;
    value = b;
  } else if (columnField(b) !== undefined) {
    column = b;
    value = a;
    normalized = SWAPPED[op];
  } else return opaque;
  const field = columnField(column);
  if (field === undefined) return opaque; // `jobs[key]`: a column chosen at run time
  // `eq(jobs.status, sql\`…\`)` compares with SQL we do not read: not a run-time value that names rows
  if (isSqlTemplate(unwrap(value)) && (op === "eq" || op === "ne"))
    return { kind: "pred", field, op: "other", values: undefined, node: call };
  const v = evaluate(env.ctx.sourceCode, value);
  // The compared expression is the model's to read (`eq(locks.takenAt, row.takenAt)`: a value the code read).
  return { kind: "pred", field, op: normalized, values: v ? [v] : undefined, node: call, value };
}

export function parseCondition(env: ConditionEnv, node: Node, depth = 0): Condition {
  const n = unwrap(node);
  const opaque: Condition = { kind: "opaque", node: n };
  if (depth > 12) return opaque;
  if (n.type === "Identifier") {
    const init = getConstInit(env.ctx.sourceCode, n);
    return init && init.type !== "TSEnumDeclaration" ? parseCondition(env, init, depth + 1) : opaque;
  }
  if (n.type !== "CallExpression") return opaque;
  const op = operatorOf(env.ctx, env.scope, n.callee);
  if (!op) return opaque;
  if (op === "and" || op === "or") {
    // and()/or() skip undefined arguments
    const args = n.arguments.filter((a) => !(a.type === "Identifier" && a.name === "undefined"));
    const items = args.map((a): Condition =>
      a.type === "SpreadElement" ? { kind: "opaque", node: a } : parseCondition(env, a, depth + 1),
    );
    return { kind: op, items };
  }
  if (op === "not") {
    const [a] = n.arguments;
    return a && a.type !== "SpreadElement" && n.arguments.length === 1
      ? { kind: "not", item: parseCondition(env, a, depth + 1) }
      : opaque;
  }
  const compare = COMPARE[op];
  if (compare) return comparison(env, compare, n);
  const [col, list] = n.arguments;
  const field = col && col.type !== "SpreadElement" ? columnField(col) : undefined;
  if (field === undefined) return opaque;
  if (op === "isNull" || op === "isNotNull")
    return { kind: "pred", field, op: op === "isNull" ? "eq" : "ne", values: [{ value: null }], node: n };
  if (op === "inArray" || op === "notInArray") {
    const values = list && list.type !== "SpreadElement" ? staticValues(env.ctx, list) : undefined;
    return { kind: "pred", field, op: op === "inArray" ? "in" : "notIn", values, node: n };
  }
  return { kind: "pred", field, op: "other", values: undefined, node: n };
}
