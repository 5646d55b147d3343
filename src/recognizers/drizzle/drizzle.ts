/**
 * Drizzle ORM query builder chains.
 *
 * - update: `db.update(jobs).set({ … }).where(cond)[.returning()]`, recognised at the outermost call of the chain
 *   among update/set/where/returning (so a chain yields one write). The root must be `X.update(table)` with exactly
 *   one non-string argument and be followed by `.set(`: Knex (`knex("jobs").where(…).update({…})`), Kysely
 *   (`updateTable`) and TypeORM's query builder (`.where("id = :id", …)`) never match.
 * - delete: `db.delete(jobs).where(cond)`, at the outermost of delete/where/returning.
 * - insert: `db.insert(locks).values({…})` with `.onConflictDoNothing()` (ignore), `.onConflictDoUpdate({ set,
 *   setWhere })` (update; its where is the take-over condition) or MySQL's `.onDuplicateKeyUpdate({ set })`, at the
 *   outermost of insert/values/onConflict…/returning.
 * - read: `db.select().from(jobs).where(cond)`, at the outermost of select/from/where/limit/offset/orderBy/for/joins;
 *   and the relational API `db.query.jobs.findFirst|findMany({ where })`, with a condition or a
 *   `(jobs, { eq }) => …` callback.
 * Conditions are the operator functions of `drizzle-orm` (`eq`, `ne`, `lt`, `inArray`, `isNull`, `and`, `or`, `not`…)
 * imported by name, through a namespace (`drizzle.eq`), or destructured in a relational `where` callback; columns are
 * `table.column` (the field is the property name). `sql` fragments are opaque, except `sql\`now()\`` as a value.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  Condition,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StateAccess,
  StateRead,
  StateWrite,
  TextEdit,
} from "../../core/model/accesses.js";
import { importedNames, propertyKey } from "../../core/reading/edits.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { evaluate, findProperty, findVariable, keyName, objectLiteral, unwrap } from "../../core/reading/values.js";
import { catchesDuplicate, SQL_DUPLICATE } from "../../core/reading/failures.js";
import { objectAssignments } from "../../core/reading/assignments.js";
import { methodName } from "../../core/reading/ast.js";
import {
  UPDATE_CHAIN,
  DELETE_CHAIN,
  INSERT_CHAIN,
  SELECT_CHAIN,
  RELATIONAL_READS,
  type Link,
  receiverOf,
  chainOf,
  isOutermost,
  tableName,
  argsAre,
  drizzleWhereArg,
} from "./chains.js";
import { OPERATORS, NO_SCOPE, operatorOf, spelling, type ConditionEnv, parseCondition } from "./conditions.js";

const STORE = "drizzle";

// ---- assignments ----

const objectOf = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

function parseSet(ctx: RecognizerContext, object: TSESTree.ObjectExpression): Assignment[] {
  return objectAssignments(ctx.sourceCode, object);
}

const property = findProperty;

// ---- suggestions ----

/**
 * Adds `eq(table.field, value)` (or `ne`) to a where: appended to an inline `and(…)`, or the condition wrapped in
 * `and(cond, …)`; for a chain without where, `.where(…)` after `anchor`. Only with operators the file imports.
 */
function predicateEdit(
  ctx: RecognizerContext,
  env: ConditionEnv,
  tableText: string,
  where: Node | undefined,
  anchor: Node,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  const fn = spelling(ctx, op);
  if (!fn || !/^[A-Za-z_$][\w$]*$/.test(field)) return undefined;
  const pred = `${fn}(${tableText}.${field}, ${valueText})`;
  if (!where) return { range: [anchor.range[1], anchor.range[1]], text: `.where(${pred})` };
  const w = unwrap(where);
  if (w.type === "CallExpression" && operatorOf(ctx, env.scope, w.callee) === "and" && w.arguments.length > 0) {
    const last = w.arguments[w.arguments.length - 1]!;
    const after = ctx.sourceCode.getTokenAfter(last);
    if (after && after.value === ",") return { range: [after.range[1], after.range[1]], text: ` ${pred},` };
    return { range: [last.range[1], last.range[1]], text: `, ${pred}` };
  }
  if (w.type !== "CallExpression" || !operatorOf(ctx, env.scope, w.callee)) return undefined;
  const and = spelling(ctx, "and");
  if (!and) return undefined;
  return { range: [where.range[0], where.range[1]], text: `${and}(${ctx.sourceCode.getText(where)}, ${pred})` };
}

// ---- the recovery suggestion ----

/** What the module reads off an awaited write's result to count its rows (`const { rowCount } = await db.update(…)`). */
const COUNTS = new Set(["rowCount", "rowsAffected", "changes", "count"]);

function countRead(ctx: RecognizerContext, call: Node): string | undefined {
  const awaited = call.parent?.type === "AwaitExpression" ? call.parent : undefined;
  const declarator =
    awaited?.parent?.type === "VariableDeclarator" && awaited.parent.init === awaited ? awaited.parent : undefined;
  if (!declarator) return undefined;
  if (declarator.id.type === "ObjectPattern") {
    for (const p of declarator.id.properties) {
      const key = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
      if (key && COUNTS.has(key)) return key;
    }
    return undefined;
  }
  if (declarator.id.type !== "Identifier") return undefined;
  for (const ref of findVariable(ctx.sourceCode, declarator.id)?.references ?? []) {
    const m = ref.identifier.parent;
    const key =
      m?.type === "MemberExpression" && m.object === ref.identifier ? keyName(m.property, m.computed) : undefined;
    if (key && COUNTS.has(key)) return key;
  }
  return undefined;
}

/**
 * `db.update(jobs).set({ status: Y }).where(and(eq(jobs.status, X), lt(jobs.updatedAt, …)))` through the claim's own
 * instance and table, counted the way the module counts the claim: the rows of the same `.returning(…)`, or the count
 * it reads off the result (`rowCount`, `changes`…), which depends on the driver. Nothing where the module shows
 * neither. `and`, `eq` and `lt` are the module's own, or added to its `drizzle-orm` import.
 */
function recoveryWrite(
  ctx: RecognizerContext,
  root: TSESTree.CallExpression,
  tableText: string,
  returning: TSESTree.CallExpression | undefined,
  claim: Node,
  spec: RecoverySpec,
): RecoveryWrite | undefined {
  const callee = unwrap(root.callee);
  if (callee.type !== "MemberExpression" || ![spec.field, spec.timeField].every((f) => /^[A-Za-z_$][\w$]*$/.test(f)))
    return undefined;
  const read = returning ? undefined : countRead(ctx, claim);
  if (!returning && !read) return undefined;
  const own = new Map(["and", "eq", "lt"].map((n) => [n, spelling(ctx, n)]));
  const missing = [...own].filter(([, ref]) => !ref).map(([n]) => n);
  const added = importedNames(ctx.sourceCode, ["drizzle-orm"], missing);
  if (!added) return undefined;
  const ref = (n: string) => own.get(n) ?? added.refs.get(n)!;
  const returningText = returning
    ? `.returning(${returning.arguments.map((a) => ctx.sourceCode.getText(a)).join(", ")})`
    : "";
  return {
    call: `${ctx.sourceCode.getText(callee.object)}
  .update(${tableText})
  .set({ ${propertyKey(spec.field)}: ${spec.backText} })
  .where(${ref("and")}(${ref("eq")}(${tableText}.${spec.field}, ${spec.stuckText}), ${ref("lt")}(${tableText}.${spec.timeField}, new Date(Date.now() - ${spec.threshold}))))${returningText ? `\n  ${returningText}` : ""}`,
    count: (result) =>
      returning ? `${result}.length` : read === "rowCount" ? `${result}.rowCount ?? 0` : `${result}.${read}`,
    edits: added.edits,
    client: callee.object,
  };
}

// ---- recognition ----

function tablesIn(links: readonly Link[]): Set<string> {
  const out = new Set<string>();
  for (const l of links) {
    if (["update", "delete", "insert", "from", "innerJoin", "leftJoin", "rightJoin", "fullJoin"].includes(l.name)) {
      const a = l.call.arguments[0] ? unwrap(l.call.arguments[0]) : undefined;
      if (a?.type === "Identifier") out.add(a.name);
      else if (a?.type === "MemberExpression") {
        const name = keyName(a.property, a.computed);
        if (name) out.add(name);
      }
    }
  }
  return out;
}

function recognizeWrite(call: TSESTree.CallExpression, ctx: RecognizerContext, links: Link[]): StateWrite | undefined {
  const root = links[0]!;
  const kind = root.name;
  const chainNames = kind === "update" ? UPDATE_CHAIN : kind === "delete" ? DELETE_CHAIN : INSERT_CHAIN;
  if (!links.every((l) => chainNames.has(l.name)) || !isOutermost(call, chainNames)) return undefined;
  if (!argsAre(root.call, 1)) return undefined;
  const model = tableName(ctx, root.call.arguments[0]);
  if (!model) return undefined;
  const second = links[1];
  const expected = kind === "update" ? "set" : kind === "delete" ? "where" : "values";
  if (second?.name !== expected) return undefined;
  const env: ConditionEnv = { ctx, scope: NO_SCOPE, tables: tablesIn(links) };
  const tableText = ctx.sourceCode.getText(root.call.arguments[0]!);
  const byName = (name: string) => links.filter((l) => l.name === name);
  const wheres = byName("where");
  if (wheres.length > 1 || byName(expected).length > 1) return undefined;
  const whereCall = wheres[0];
  const whereArg = whereCall ? drizzleWhereArg(whereCall.call) : undefined;
  if (whereCall && !whereArg) return undefined;
  const filter: Condition = whereArg ? parseCondition(env, whereArg) : { kind: "and", items: [] };

  if (kind === "update") {
    const setCall = second.call;
    if (!argsAre(setCall, 1)) return undefined;
    const set = objectOf(ctx, setCall.arguments[0]);
    if (!set && unwrap(setCall.arguments[0]!).type !== "Identifier") return undefined;
    const returning = byName("returning")[0];
    return {
      access: "write",
      store: STORE,
      model,
      operation: "update",
      effect: "update",
      filter,
      assignments: set ? parseSet(ctx, set) : [],
      node: call,
      addPredicate: (field, op, valueText) =>
        predicateEdit(ctx, env, tableText, whereArg, setCall, field, op, valueText),
      recoveryWrite: (spec) => recoveryWrite(ctx, root.call, tableText, returning?.call, call, spec),
    };
  }
  if (kind === "delete") {
    return {
      access: "write",
      store: STORE,
      model,
      operation: "delete",
      effect: "delete",
      filter,
      assignments: [],
      node: call,
      addPredicate: (field, op, valueText) =>
        predicateEdit(ctx, env, tableText, whereArg, second.call, field, op, valueText),
    };
  }
  // insert
  if (!argsAre(second.call, 1)) return undefined;
  const values = objectOf(ctx, second.call.arguments[0]);
  const assignments = values ? parseSet(ctx, values) : [];
  const doNothing = byName("onConflictDoNothing")[0];
  const doUpdate = byName("onConflictDoUpdate")[0] ?? byName("onDuplicateKeyUpdate")[0];
  if (doUpdate) {
    const config = argsAre(doUpdate.call, 1) ? objectOf(ctx, doUpdate.call.arguments[0]) : undefined;
    if (!config) return undefined;
    const set = property(config, "set");
    const setObject = set ? objectOf(ctx, set.value) : undefined;
    const updated = setObject ? parseSet(ctx, setObject) : [];
    const names = new Set(updated.map((a) => a.field));
    const condition = property(config, "setWhere") ?? property(config, "where");
    const conditionNode = condition && unwrap(condition.value);
    return {
      access: "write",
      store: STORE,
      model,
      operation: doUpdate.name,
      effect: "insert",
      onConflict: "update",
      filter: conditionNode ? parseCondition(env, conditionNode) : { kind: "and", items: [] },
      assignments: [...assignments.filter((a) => !names.has(a.field)), ...updated],
      node: call,
    };
  }
  return {
    access: "write",
    store: STORE,
    model,
    operation: doNothing ? "onConflictDoNothing" : "insert",
    effect: "insert",
    ...(doNothing
      ? { onConflict: "ignore" as const }
      : catchesDuplicate(env.ctx.sourceCode, call, SQL_DUPLICATE)
        ? { onConflict: "error" as const }
        : {}),
    filter: { kind: "and", items: [] },
    assignments,
    node: call,
  };
}

function recognizeSelect(call: TSESTree.CallExpression, ctx: RecognizerContext, links: Link[]): StateRead | undefined {
  if (!links.every((l) => SELECT_CHAIN.has(l.name)) || !isOutermost(call, SELECT_CHAIN)) return undefined;
  const root = links[0]!;
  if (!root.name.startsWith("select") || root.call.arguments.some((a) => unwrap(a).type !== "ObjectExpression"))
    return undefined;
  const from = links.filter((l) => l.name === "from");
  const wheres = links.filter((l) => l.name === "where");
  if (from.length !== 1 || links[1] !== from[0] || wheres.length !== 1 || !argsAre(from[0]!.call, 1)) return undefined;
  const model = tableName(ctx, from[0]!.call.arguments[0]);
  const whereArg = drizzleWhereArg(wheres[0]!.call);
  if (!model || !whereArg) return undefined;
  const env: ConditionEnv = { ctx, scope: NO_SCOPE, tables: tablesIn(links) };
  // `.for("update")` / `.for("no key update", { skipLocked: true })`: the rows stay locked for writing until the
  // transaction ends (not the share modes).
  const locking = links.some((l) => {
    if (l.name !== "for") return false;
    const mode = l.call.arguments[0];
    const v = mode && mode.type !== "SpreadElement" ? evaluate(ctx.sourceCode, mode) : undefined;
    return typeof v?.value === "string" && /update/i.test(v.value);
  });
  return {
    access: "read",
    store: STORE,
    model,
    operation: "select",
    filter: parseCondition(env, whereArg),
    node: call,
    ...(locking ? { locking } : {}),
  };
}

/** `db.query.jobs.findFirst({ where: eq(jobs.status, "x") })` or `{ where: (jobs, { eq }) => eq(jobs.status, "x") }`. */
function recognizeRelational(
  call: TSESTree.CallExpression,
  ctx: RecognizerContext,
  operation: string,
): StateRead | undefined {
  const receiver = receiverOf(call);
  if (receiver?.type !== "MemberExpression" || !argsAre(call, 1)) return undefined;
  const model = keyName(receiver.property, receiver.computed);
  const query = unwrap(receiver.object);
  if (!model || query.type !== "MemberExpression" || keyName(query.property, query.computed) !== "query")
    return undefined;
  const config = objectOf(ctx, call.arguments[0]);
  const where = config && property(config, "where");
  if (!where) return undefined;
  const value = unwrap(where.value);
  if (value.type === "ArrowFunctionExpression" || value.type === "FunctionExpression") {
    const [table, ops] = value.params;
    const aliases = new Set<string>();
    if (table?.type === "Identifier") aliases.add(table.name);
    const locals = new Map<string, string>();
    if (ops?.type === "ObjectPattern") {
      for (const p of ops.properties) {
        if (p.type !== "Property") continue;
        const name = keyName(p.key, p.computed);
        const local = unwrap(p.value);
        if (name && OPERATORS.has(name) && local.type === "Identifier") locals.set(local.name, name);
      }
    }
    let body: Node = value.body;
    if (body.type === "BlockStatement") {
      const ret = body.body.length === 1 && body.body[0]!.type === "ReturnStatement" ? body.body[0]!.argument : null;
      if (!ret)
        return { access: "read", store: STORE, model, operation, filter: { kind: "opaque", node: value }, node: call };
      body = ret;
    }
    const env: ConditionEnv = { ctx, scope: { locals }, tables: new Set([...aliases, model]) };
    return { access: "read", store: STORE, model, operation, filter: parseCondition(env, body), node: call };
  }
  if (value.type === "ObjectExpression") return undefined; // relational queries v2 use objects: not read here
  const env: ConditionEnv = { ctx, scope: NO_SCOPE, tables: new Set([model]) };
  return { access: "read", store: STORE, model, operation, filter: parseCondition(env, value), node: call };
}

export const drizzleRecognizer: Recognizer = {
  store: STORE,
  packages: { own: /^drizzle-orm$/, family: /drizzle/i },
  methods: new Set([...UPDATE_CHAIN, ...DELETE_CHAIN, ...INSERT_CHAIN, ...SELECT_CHAIN, ...RELATIONAL_READS]),
  recognize(call, ctx): StateAccess | undefined {
    try {
      const name = methodName(call);
      if (name === undefined) return undefined;
      if (RELATIONAL_READS.has(name)) return recognizeRelational(call, ctx, name);
      const chain = chainOf(call);
      if (!chain) return undefined;
      const root = chain.links[0]!.name;
      if (root === "update" || root === "delete" || root === "insert") return recognizeWrite(call, ctx, chain.links);
      if (root.startsWith("select")) return recognizeSelect(call, ctx, chain.links);
      return undefined;
    } catch {
      return undefined;
    }
  },
};
