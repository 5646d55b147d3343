/**
 * Drizzle: query builder chains: the methods of each kind of chain, the links from the root to a call, whether a call
 * is the outermost of its chain, the table a root names, and a Drizzle where argument.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import { methodName } from "../../core/reading/ast.js";

export const UPDATE_CHAIN = new Set(["update", "set", "where", "returning"]);
export const DELETE_CHAIN = new Set(["delete", "where", "returning"]);
export const INSERT_CHAIN = new Set([
  "insert",
  "values",
  "onConflictDoNothing",
  "onConflictDoUpdate",
  "onDuplicateKeyUpdate",
  "returning",
]);
export const SELECT_CHAIN = new Set([
  "select",
  "selectDistinct",
  "selectDistinctOn",
  "from",
  "where",
  "limit",
  "offset",
  "orderBy",
  "for",
  "groupBy",
  "innerJoin",
  "leftJoin",
  "rightJoin",
  "fullJoin",
]);
export const RELATIONAL_READS = new Set(["findFirst", "findMany"]);

export interface Link {
  readonly name: string;
  readonly call: TSESTree.CallExpression;
}

export function receiverOf(call: TSESTree.CallExpression): Node | undefined {
  const callee = unwrap(call.callee);
  return callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
}

/** The method calls of a chain from its root to `call`, and the expression the root is called on. */
export function chainOf(call: TSESTree.CallExpression): { links: Link[]; base: Node } | undefined {
  const links: Link[] = [];
  let current: Node = call;
  for (let i = 0; i < 20; i++) {
    if (current.type !== "CallExpression") break;
    const name = methodName(current);
    if (name === undefined) break; // `getDb().update(jobs)`: the call is the base
    links.unshift({ name, call: current });
    current = receiverOf(current)!;
  }
  return links.length > 0 ? { links, base: current } : undefined;
}

/** No method of `names` is called on `call`'s result: it is the chain's outermost call among them. */
export function isOutermost(call: TSESTree.CallExpression, names: ReadonlySet<string>): boolean {
  let n: Node = call;
  while (n.parent && (n.parent.type === "ChainExpression" || n.parent.type === "TSNonNullExpression")) n = n.parent;
  const p = n.parent;
  if (p?.type !== "MemberExpression" || p.object !== n) return true;
  const name = keyName(p.property, p.computed);
  return !(name !== undefined && names.has(name) && p.parent?.type === "CallExpression" && p.parent.callee === p);
}

/** A table expression: `jobs`, `schema.jobs`, never a string or an object. */
export function tableName(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const n = unwrap(node);
  let name: string | undefined;
  if (n.type === "Identifier") {
    if (n.name === "undefined") return undefined;
    const init = getConstInit(ctx.sourceCode, n);
    if (init && init.type !== "TSEnumDeclaration") {
      const i = unwrap(init);
      // `const TABLE = "jobs"` (a Knex-style table name) or `const data = { … }`: not a Drizzle table.
      if (
        i.type === "Literal" ||
        i.type === "TemplateLiteral" ||
        i.type === "ObjectExpression" ||
        i.type === "ArrayExpression"
      )
        return undefined;
    }
    name = n.name;
  } else if (n.type === "MemberExpression" && !n.computed && n.property.type === "Identifier") {
    const root = unwrap(n.object);
    if (root.type !== "Identifier" && root.type !== "ThisExpression" && root.type !== "MemberExpression")
      return undefined;
    name = n.property.name;
  } else return undefined;
  return name.replace(/Table$/, "") || name;
}

export function argsAre(call: TSESTree.CallExpression, count: number): boolean {
  return call.arguments.length === count && call.arguments.every((a) => a.type !== "SpreadElement");
}

/** A Drizzle where argument: one condition expression, not a Knex object/string/callback or a TypeORM string. */
export function drizzleWhereArg(call: TSESTree.CallExpression): Node | undefined {
  if (!argsAre(call, 1)) return undefined;
  const a = unwrap(call.arguments[0]!);
  if (
    a.type === "Literal" ||
    a.type === "TemplateLiteral" ||
    a.type === "ObjectExpression" ||
    a.type === "ArrayExpression" ||
    a.type === "ArrowFunctionExpression" ||
    a.type === "FunctionExpression"
  )
    return undefined;
  return a;
}
