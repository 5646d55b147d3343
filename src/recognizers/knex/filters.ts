/** Knex recognizer: where-links as a filter (`where`, `whereIn`, `whereNull`, `orWhere`, callbacks as groups, raw SQL). */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { evaluate, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import {
  type CompareOp,
  NEUTRAL,
  TABLE_LINKS,
  type TableScope,
  WHERE_NAME,
  columnField,
  fieldOf,
  knexRoot,
  listOf,
  objectArgument,
  staticString,
  tableScope,
} from "./chains.js";
import { isClockValue } from "../../core/reading/clock.js";
import { methodName } from "../../core/reading/ast.js";
import { type Link, chainDown } from "../../core/reading/chains.js";

// ---- filters ----

type Bool = "and" | "or";
export interface Clause {
  readonly bool: Bool;
  readonly cond: Condition;
  readonly link?: Link;
  /** Fields of a plain top-level predicate (for addPredicate: do not add a second condition on them). */
  readonly fields: readonly string[];
}

/** SQL precedence: `A and B or C and D` is `(A and B) or (C and D)`. */
export function combine(clauses: readonly Clause[]): Condition {
  const groups: Condition[][] = [];
  for (const c of clauses) {
    if (c.bool === "or" && groups.length > 0) groups.push([c.cond]);
    else if (groups.length === 0) groups.push([c.cond]);
    else groups[groups.length - 1]!.push(c.cond);
  }
  if (groups.length <= 1) return { kind: "and", items: groups[0] ?? [] };
  return { kind: "or", items: groups.map((items): Condition => ({ kind: "and", items })) };
}

/** A value that is SQL, not data: `knex.raw(…)`, `knex.ref(…)`, `knex.fn.now()`, a subquery (callback or chain). */
function isSqlValue(ctx: RecognizerContext, node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "FunctionExpression" || n.type === "ArrowFunctionExpression" || n.type === "TaggedTemplateExpression")
    return true;
  if (n.type !== "CallExpression") return false;
  const name = methodName(n);
  if (name === "raw" || name === "ref" || isClockValue(ctx.sourceCode, n)) return true;
  const { base, links } = chainDown(n);
  return knexRoot(ctx, base, links) !== undefined;
}

const OPERATORS: Record<string, CompareOp> = {
  "=": "eq",
  "==": "eq",
  "!=": "ne",
  "<>": "ne",
  "<": "lt",
  "<=": "lte",
  ">": "gt",
  ">=": "gte",
  in: "in",
  "not in": "notIn",
  is: "eq",
  "is not": "ne",
  "is distinct from": "ne",
  "is not distinct from": "eq",
};

export function operatorOf(ctx: RecognizerContext, node: Node | undefined): CompareOp {
  const text = staticString(ctx, node)?.trim().toLowerCase().replace(/\s+/g, " ");
  return (text !== undefined && OPERATORS[text]) || "other";
}

/**
 * `field op value`, at `at`. Equality with a SQL value (raw, subquery) is opaque; an ordering comparison keeps its
 * field (`updated_at < knex.raw("now() - interval '5 minutes'")` judges age) with no static value.
 */
export function comparison(
  ctx: RecognizerContext,
  field: string | undefined,
  op: CompareOp,
  value: Node | undefined,
  at: Node,
  sqlValue: (n: Node) => boolean,
): Condition {
  if (field === undefined || !value || value.type === "SpreadElement") return { kind: "opaque", node: at };
  const v = unwrap(value);
  if (op === "in" || op === "notIn") {
    if (sqlValue(v)) return { kind: "opaque", node: at };
    return { kind: "pred", field, op, values: listOf(ctx, v), node: at };
  }
  if (op === "other") return { kind: "pred", field, op, values: undefined, node: at };
  if (op === "eq" || op === "ne") {
    if (sqlValue(v) || v.type === "ArrayExpression" || v.type === "ObjectExpression")
      return { kind: "opaque", node: at };
  }
  const ev = evaluate(ctx.sourceCode, v);
  return { kind: "pred", field, op, values: ev ? [ev] : undefined, node: at };
}

function negate(cond: Condition): Condition {
  return { kind: "not", item: cond };
}

export class KnexReader {
  constructor(
    readonly ctx: RecognizerContext,
    readonly scope: TableScope,
  ) {}

  /** `where({ a: 1, b })`: each property an equality; `whereNot({ … })` negates each one (as knex does). */
  objectCondition(object: TSESTree.ObjectExpression, not: boolean): { cond: Condition; fields: string[] } {
    const items: Condition[] = [];
    const fields: string[] = [];
    for (const p of object.properties) {
      if (p.type !== "Property") {
        items.push({ kind: "opaque", node: p });
        continue;
      }
      const key = keyName(p.key, p.computed);
      const field = key === undefined ? undefined : fieldOf(this.scope, key);
      const cond = comparison(this.ctx, field, "eq", p.value, p, (n) => isSqlValue(this.ctx, n));
      if (field) fields.push(field);
      items.push(not ? negate(cond) : cond);
    }
    return { cond: { kind: "and", items }, fields };
  }

  /** One where-link (or undefined when the name is not one). */
  whereClause(link: Link): Clause | undefined {
    const m = WHERE_NAME.exec(link.name);
    if (!m) return undefined;
    const bool: Bool = m[1] === "or" ? "or" : "and";
    const not = m[2] !== undefined;
    const suffix = m[3] ?? "";
    const args = link.args;
    const at: Node = args[0] ?? link.call;
    const opaque = (): Clause => ({ bool, cond: { kind: "opaque", node: at }, link, fields: [] });
    const sql = (n: Node) => isSqlValue(this.ctx, n);
    const col = () => columnField(this.ctx, this.scope, args[0]);
    const wrap = (cond: Condition, fields: string[] = []): Clause => ({
      bool,
      cond: not ? negate(cond) : cond,
      link,
      fields: not ? [] : fields,
    });
    switch (suffix) {
      case "": {
        if (args.length === 1) {
          const a = unwrap(args[0]!);
          if (a.type === "FunctionExpression" || a.type === "ArrowFunctionExpression") return wrap(this.group(a));
          const object = objectArgument(this.ctx, a);
          if (!object) return opaque();
          const { cond, fields } = this.objectCondition(object, not);
          return { bool, cond, link, fields: not ? [] : fields };
        }
        const field = col();
        if (args.length === 2) return wrap(comparison(this.ctx, field, "eq", args[1], at, sql), field ? [field] : []);
        if (args.length === 3) {
          const op = operatorOf(this.ctx, args[1]);
          return wrap(comparison(this.ctx, field, op, args[2], at, sql), field && op === "eq" ? [field] : []);
        }
        return opaque();
      }
      case "In": {
        if (args.length !== 2) return opaque();
        const field = col();
        if (!not) {
          const sub = field && this.subquery(field, args[1]!, at);
          if (sub) return { bool, cond: sub, link, fields: [] };
        }
        return { bool, cond: comparison(this.ctx, field, not ? "notIn" : "in", args[1], at, sql), link, fields: [] };
      }
      case "Null": {
        const field = col();
        if (!field) return opaque();
        return {
          bool,
          cond: { kind: "pred", field, op: not ? "ne" : "eq", values: [{ value: null }], node: at },
          link,
          fields: [],
        };
      }
      case "Between":
      case "Like":
      case "ILike": {
        const field = col();
        if (!field) return opaque();
        return wrap({ kind: "pred", field, op: "other", values: undefined, node: at });
      }
      default:
        return opaque();
    }
  }

  /** The links of a grouped callback's body: `this.where(…).orWhere(…)`, `qb.where(…); qb.orWhere(…)`. */
  private callbackLinks(fn: TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression): Link[] | undefined {
    const param = fn.params[0];
    if (param && param.type !== "Identifier") return undefined;
    if (!param && fn.type !== "FunctionExpression") return undefined;
    const body = fn.body;
    const exprs: Node[] = [];
    if (body.type !== "BlockStatement") exprs.push(body);
    else {
      for (const s of body.body) {
        if (s.type === "ExpressionStatement") exprs.push(s.expression);
        else if (s.type === "ReturnStatement" && s.argument) exprs.push(s.argument);
        else return undefined;
      }
    }
    const out: Link[] = [];
    for (const e of exprs) {
      const call = unwrap(e);
      if (call.type !== "CallExpression") return undefined;
      const { base, links } = chainDown(call);
      const b = unwrap(base);
      const viaParam = param?.type === "Identifier" && b.type === "Identifier" && b.name === param.name;
      if (!viaParam && !(fn.type === "FunctionExpression" && b.type === "ThisExpression")) return undefined;
      out.push(...links);
    }
    return out;
  }

  /** A parenthesised group of where-links. */
  group(fn: TSESTree.FunctionExpression | TSESTree.ArrowFunctionExpression): Condition {
    const links = this.callbackLinks(fn);
    if (!links) return { kind: "opaque", node: fn };
    const clauses = this.clauses(links);
    return clauses ? combine(clauses) : { kind: "opaque", node: fn };
  }

  /** Where-links in order; undefined when a link is not one knex offers here. */
  clauses(links: readonly Link[]): Clause[] | undefined {
    let out: Clause[] = [];
    for (const link of links) {
      const clause = this.whereClause(link);
      if (clause) out.push(clause);
      else if (link.name === "modify")
        out.push({ bool: "and", cond: { kind: "opaque", node: link.call }, link, fields: [] });
      else if (link.name === "clearWhere") out = [];
      else if (!NEUTRAL.has(link.name)) return undefined;
    }
    return out;
  }

  /**
   * `whereIn('id', <select id from the same table where …>)` (a callback or a chain, FOR UPDATE SKIP LOCKED and
   * LIMIT allowed): the rows it updates satisfy the subquery's filter.
   */
  subquery(field: string, value: Node, at: Node): Condition | undefined {
    let v = unwrap(value);
    if (v.type === "Identifier") {
      const init = getConstInit(this.ctx.sourceCode, v);
      if (init) v = unwrap(init);
    }
    let scope: TableScope | undefined;
    let links: Link[] | undefined;
    if (v.type === "FunctionExpression" || v.type === "ArrowFunctionExpression") {
      const all = this.callbackLinks(v);
      const i = all?.findIndex((l) => TABLE_LINKS.has(l.name)) ?? -1;
      if (!all || i < 0) return undefined;
      scope = tableScope(this.ctx, all[i]!.args[0]);
      links = all.filter((_, j) => j !== i);
    } else if (v.type === "CallExpression") {
      const chain = chainDown(v);
      const root = knexRoot(this.ctx, chain.base, chain.links);
      if (!root) return undefined;
      scope = root.scope;
      links = chain.links;
    }
    if (!scope || !links || !sameTable(scope.table, this.scope.table)) return undefined;
    const selected = links
      .filter((l) => l.name === "select" || l.name === "column" || l.name === "columns")
      .flatMap((l) => l.args);
    if (selected.length !== 1 || columnField(this.ctx, scope, selected[0]) !== field) return undefined;
    const inner = new KnexReader(this.ctx, scope).clauses(links);
    if (!inner || inner.length === 0) return undefined;
    return { kind: "and", items: [{ kind: "pred", field, op: "in", values: undefined, node: at }, combine(inner)] };
  }
}

function sameTable(a: string, b: string): boolean {
  const n = (s: string) => {
    const x = s.replace(/[-_\s]/g, "").toLowerCase();
    return x.length > 3 && x.endsWith("s") && !x.endsWith("ss") ? x.slice(0, -1) : x;
  };
  return n(a) === n(b);
}
