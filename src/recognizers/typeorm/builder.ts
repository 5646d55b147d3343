/** TypeORM recognizer: query-builder chains (`createQueryBuilder().update().set().where()`), their filter and model. */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { translateWhere } from "../../core/languages/sql/statements.js";
import { evaluate, keyName, unwrap } from "../../core/reading/values.js";
import { JOIN_METHODS, and, entityName, objectArgument, opaque, or, pred } from "./shared.js";
import { resolveTarget } from "./targets.js";
import { IDS_NAME, Seen, fragmentText, paramLookup, parseWhere, qualifierOf, topLevelOr } from "./criteria.js";
import { expressionName } from "../../core/reading/ast.js";

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

export const WHERE_LINKS =
  /^(?:where|andWhere|orWhere|whereInIds|andWhereInIds|orWhereInIds|whereExists|andWhereExists|orWhereExists)$/;

export interface Builder {
  readonly links: readonly Link[];
  /** Index of the `createQueryBuilder` link. */
  readonly root: number;
  readonly receiver: Node;
  readonly model: string | undefined;
  readonly mainAlias: string | undefined;
}

export function builderOf(ctx: RecognizerContext, call: TSESTree.CallExpression): Builder | undefined {
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
  const text = (n: Node | undefined) =>
    n && n.type === "Literal" && typeof n.value === "string" ? n.value : undefined;
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
export function builderFilter(ctx: RecognizerContext, b: Builder): { filter: Condition; seen: Seen } {
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
      if (l.name === "setParameter" && k?.type === "Literal" && k.value === name && v && v.type !== "SpreadElement")
        return v;
    }
    return undefined;
  };
  const hasJoins = links.some((l) => JOIN_METHODS.test(l.name));
  const chainLookup = paramLookup(ctx, chainParams);
  const params = (name: string): Node | undefined => chainLookup(name) ?? setParameter(name);

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
      push(
        pred(
          "id",
          ids?.type === "ArrayExpression" || (ids && IDS_NAME.test(expressionName(ids) ?? "")) ? "in" : "eq",
          undefined,
          at,
        ),
      );
      continue;
    }
    if (/Exists$/.test(l.name) || !arg || arg.type === "SpreadElement") {
      push(opaque(at));
      continue;
    }
    const value = unwrap(arg);
    let textValue: string | undefined;
    if (value.type === "Literal" && typeof value.value === "string") textValue = value.value;
    else if (value.type === "TemplateLiteral" && value.expressions.length === 0)
      textValue = value.quasis.map((q) => q.value.cooked ?? "").join("");
    else if (value.type === "Identifier") {
      const v = evaluate(ctx.sourceCode, value);
      if (typeof v?.value === "string") textValue = v.value;
    }
    if (textValue === undefined) {
      const isObject =
        value.type === "ObjectExpression" ||
        value.type === "ArrayExpression" ||
        objectArgument(ctx, value) !== undefined;
      push(isObject ? parseWhere(ctx, seen, value) : opaque(at));
      continue;
    }
    if (!/\S/.test(textValue)) {
      push(opaque(at));
      continue;
    }
    // Without joins every qualifier is the builder's own table; with joins only its alias is.
    if (!hasJoins) alias ??= qualifierOf(textValue);
    const own = paramLookup(ctx, [l.call.arguments[1]]);
    const fragment = fragmentText(ctx, textValue, (name) => own(name) ?? params(name));
    const cond = translateWhere(fragment.text, fragment.resolve, at, alias);
    if (!cond) return { filter: opaque(at), seen };
    push(cond, topLevelOr(textValue));
  }
  if (clauses.length === 0) return { filter: { kind: "and", items: [] }, seen };
  // `where("a OR b").andWhere("c")` is `a OR (b AND c)` by default and `(a OR b) AND c` with isolateWhereStatements.
  if (clauses.length > 1 && clauses.some((c) => c.topOr))
    return { filter: opaque(b.links[b.root + 1]?.call ?? b.links[b.root]!.call), seen };
  // AND binds tighter than OR: `where(a).orWhere(b).andWhere(c)` is `a OR (b AND c)`.
  const groups: Condition[][] = [[]];
  for (const c of clauses) {
    if (c.conn === "or" && groups.at(-1)!.length > 0) groups.push([]);
    groups.at(-1)!.push(c.cond);
  }
  return { filter: or(groups.map((g) => and(g))), seen };
}
