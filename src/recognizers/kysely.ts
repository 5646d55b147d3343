/**
 * Kysely query builders: `db.updateTable('jobs').set({…}).where(…)`, `deleteFrom('jobs')`,
 * `insertInto('locks').values({…}).onConflict((oc) => …)` and `selectFrom('jobs').where(…)`, on any receiver
 * (`db`, `trx` inside `db.transaction().execute(async (trx) => …)`, `this.db`, `ctx.db`). Builders are immutable, so a
 * chain may be split across `const` bindings (`const q = db.updateTable('jobs').set(…); await q.where(…).execute()`).
 *
 * Each query is recognised at its `.execute()`, `.executeTakeFirst()` or `.executeTakeFirstOrThrow()` call; the
 * builders in between are never recognised, so a chain yields one access. Filters: `.where('col', op, value)`,
 * `.where((eb) => eb.or([eb('col', '=', v), …]))` with `eb.and`, `eb.not`, `eb.and({ … })`, destructured
 * `({ or, eb }) => …`, and `eb(…).and(…)`; several `.where` calls are ANDed. Raw `sql` fragments are opaque.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  Condition,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StateAccess,
  TextEdit,
} from "../core/model/accesses.js";
import { propertyKey } from "../core/reading/edits.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { getConstInit, keyName, unwrap } from "../core/reading/values.js";
import { LOCKING_LINKS, fieldOf, objectArgument, staticString, tableScope, type TableScope } from "./knex/chains.js";
import { comparison, operatorOf } from "./knex/filters.js";
import { catchesDuplicate, SQL_DUPLICATE } from "../core/reading/failures.js";
import { assignedValue, objectAssignments } from "../core/reading/assignments.js";
import { chainDown, type Link } from "../core/reading/chains.js";

type Call = TSESTree.CallExpression;
type Fn = TSESTree.ArrowFunctionExpression | TSESTree.FunctionExpression;

const EXECUTE = new Set(["execute", "executeTakeFirst", "executeTakeFirstOrThrow"]);
const ROOTS = new Map<string, "update" | "delete" | "insert" | "read">([
  ["updateTable", "update"],
  ["deleteFrom", "delete"],
  ["insertInto", "insert"],
  ["replaceInto", "insert"],
  ["selectFrom", "read"],
]);
/** Links before the root: `db.withSchema('app').updateTable('jobs')`. */
const LEADING = new Set(["withSchema", "with", "withRecursive", "withPlugin", "withoutPlugins", "withTables"]);
/** Links that do not change which rows a query touches. */
const NEUTRAL = new Set([
  "returning",
  "returningAll",
  "output",
  "outputAll",
  "top",
  "limit",
  "offset",
  "orderBy",
  "groupBy",
  "having",
  "select",
  "selectAll",
  "distinct",
  "distinctOn",
  "innerJoin",
  "leftJoin",
  "rightJoin",
  "fullJoin",
  "crossJoin",
  "innerJoinLateral",
  "leftJoinLateral",
  "from",
  "using",
  "forUpdate",
  "forShare",
  "forNoKeyUpdate",
  "forKeyShare",
  "skipLocked",
  "noWait",
  "modifyEnd",
  "modifyFront",
  "$narrowType",
  "$castTo",
  "$assertType",
  "clearReturning",
  "clearSelect",
  "clearLimit",
  "clearOffset",
  "clearOrderBy",
  "clearGroupBy",
  "columns",
  "defaultValues",
  "as",
]);

/** A value that is SQL rather than data: a `sql` fragment, `eb.ref(…)`, `eb.fn(…)`, a subquery. */
function isSqlValue(node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "TaggedTemplateExpression" || n.type === "FunctionExpression" || n.type === "ArrowFunctionExpression")
    return true;
  if (n.type !== "CallExpression") return false;
  const callee = unwrap(n.callee);
  if (callee.type !== "MemberExpression") return false;
  const name = keyName(callee.property, callee.computed);
  if (name && /^(ref|fn|val|lit|raw|selectFrom|exists|case|cast|jsonPath|table|parens|unary|neg)$/.test(name))
    return true;
  return chainDown(n).links.some((l) => l.name === "selectFrom");
}

/** What a callback returns when its body is one expression: `(eb) => x`, `(eb) => { return x; }`. */
function returned(fn: Fn): Node | undefined {
  if (fn.body.type !== "BlockStatement") return unwrap(fn.body);
  const only = fn.body.body.length === 1 ? fn.body.body[0] : undefined;
  return only?.type === "ReturnStatement" && only.argument ? unwrap(only.argument) : undefined;
}

/** The object a function returns directly: `(eb) => ({ … })`, `(eb) => { return { … }; }`. */
function returnedObject(fn: Fn): TSESTree.ObjectExpression | undefined {
  const n = returned(fn);
  return n?.type === "ObjectExpression" ? n : undefined;
}

/** `.set({ … })`, `.set((eb) => ({ … }))`, `.values({ … })`, `.doUpdateSet({ … })`; undefined when unreadable. */
function rowAssignments(ctx: RecognizerContext, scope: TableScope, arg: Node | undefined): Assignment[] | undefined {
  if (!arg || arg.type === "SpreadElement") return undefined;
  const a = unwrap(arg);
  let object = objectArgument(ctx, a);
  if (!object && (a.type === "ArrowFunctionExpression" || a.type === "FunctionExpression")) object = returnedObject(a);
  if (!object && a.type === "ArrayExpression" && a.elements.length === 1)
    object = objectArgument(ctx, a.elements[0] ?? undefined);
  if (!object) return undefined;
  return objectAssignments(ctx.sourceCode, object, { field: (key) => fieldOf(scope, key) });
}

/** `.set('status', 'running')`, `.set({ … })`, `.set((eb) => ({ … }))`. */
function setAssignments(ctx: RecognizerContext, scope: TableScope, link: Link): Assignment[] {
  const [first, second] = link.args;
  if (link.args.length === 2 && first && second && second.type !== "SpreadElement") {
    const field = staticString(ctx, first) === undefined ? undefined : fieldOf(scope, staticString(ctx, first)!);
    return field ? [{ field, value: assignedValue(ctx.sourceCode, second), node: first, valueNode: second }] : [];
  }
  return rowAssignments(ctx, scope, first) ?? [];
}

function mergeAssignments(base: readonly Assignment[], over: readonly Assignment[]): Assignment[] {
  const fields = new Set(over.map((a) => a.field));
  return [...base.filter((a) => !fields.has(a.field)), ...over];
}

// ---- filters ----

/** Names an expression callback gives the builder and its helpers: `eb`, or `{ eb, or, and, not, cmpr }`. */
interface EbNames {
  readonly eb?: string;
  readonly helpers: ReadonlyMap<string, string>;
}

function ebNames(fn: Fn): EbNames | undefined {
  const param = fn.params[0];
  if (!param) return undefined;
  if (param.type === "Identifier") return { eb: param.name, helpers: new Map() };
  if (param.type !== "ObjectPattern") return undefined;
  const helpers = new Map<string, string>();
  for (const p of param.properties) {
    if (p.type !== "Property" || p.value.type !== "Identifier") continue;
    const key = keyName(p.key, p.computed);
    if (key) helpers.set(p.value.name, key);
  }
  return { helpers };
}

class KyselyReader {
  constructor(
    readonly ctx: RecognizerContext,
    readonly scope: TableScope,
  ) {}

  /** `field op value` from three arguments, located at `at`. */
  compare(args: readonly TSESTree.CallExpressionArgument[], at: Node): Condition {
    if (args.length !== 3) return { kind: "opaque", node: at };
    const column = staticString(this.ctx, args[0]);
    const field = column === undefined ? undefined : fieldOf(this.scope, column);
    return comparison(this.ctx, field, operatorOf(this.ctx, args[1]), args[2], at, isSqlValue);
  }

  /** What helper a callee names inside an expression callback: `eb(…)` → "eb", `eb.or(…)` → "or", `or(…)` → "or". */
  private helper(names: EbNames, callee: Node): string | undefined {
    const c = unwrap(callee);
    if (c.type === "Identifier") return c.name === names.eb ? "eb" : names.helpers.get(c.name);
    if (c.type === "MemberExpression") {
      const object = unwrap(c.object);
      if (object.type === "Identifier" && object.name === names.eb) return keyName(c.property, c.computed);
    }
    return undefined;
  }

  /** An expression built in a `where((eb) => …)` callback. */
  expression(names: EbNames, node: Node): Condition {
    const n = unwrap(node);
    const opaque: Condition = { kind: "opaque", node: n };
    if (n.type !== "CallExpression") return opaque;
    const helper = this.helper(names, n.callee);
    const args = n.arguments;
    switch (helper) {
      case "eb":
      case "cmpr":
      case "cmp":
        return this.compare(args, n);
      case "and":
      case "or": {
        const arg = args[0] && args[0].type !== "SpreadElement" ? unwrap(args[0]) : undefined;
        if (args.length !== 1 || !arg) return opaque;
        if (arg.type === "ArrayExpression") {
          const items = arg.elements.map((el): Condition =>
            el && el.type !== "SpreadElement" ? this.expression(names, el) : { kind: "opaque", node: el ?? arg },
          );
          return { kind: helper, items };
        }
        const object = objectArgument(this.ctx, arg);
        if (!object) return opaque;
        const items = object.properties.map((p): Condition => {
          if (p.type !== "Property") return { kind: "opaque", node: p };
          const key = keyName(p.key, p.computed);
          return comparison(
            this.ctx,
            key === undefined ? undefined : fieldOf(this.scope, key),
            "eq",
            p.value,
            p,
            isSqlValue,
          );
        });
        return { kind: helper, items };
      }
      case "not":
        return args.length === 1 && args[0]!.type !== "SpreadElement"
          ? { kind: "not", item: this.expression(names, args[0]!) }
          : opaque;
      case "between":
      case "betweenSymmetric": {
        const column = staticString(this.ctx, args[0]);
        const field = column === undefined ? undefined : fieldOf(this.scope, column);
        return field ? { kind: "pred", field, op: "other", values: undefined, node: n } : opaque;
      }
      default:
        break;
    }
    // `eb('a', '=', 1).and('b', '=', 2)`, `eb(…).or(eb(…))`
    const callee = unwrap(n.callee);
    if (helper === undefined && callee.type === "MemberExpression") {
      const name = keyName(callee.property, callee.computed);
      if ((name === "and" || name === "or") && unwrap(callee.object).type === "CallExpression") {
        const left = this.expression(names, callee.object);
        const right =
          args.length === 3
            ? this.compare(args, args[0]!)
            : args.length === 1 && args[0]!.type !== "SpreadElement"
              ? this.expression(names, args[0]!)
              : opaque;
        return { kind: name, items: [left, right] };
      }
    }
    return opaque;
  }

  /** One `.where(…)` (and the legacy `.orWhere(…)`): three arguments, or an expression callback. */
  where(link: Link): Condition {
    const args = link.args;
    const at: Node = args[0] ?? link.call;
    if (args.length === 3) return this.compare(args, args[0]!);
    const fn = args.length === 1 && args[0]!.type !== "SpreadElement" ? unwrap(args[0]!) : undefined;
    if (fn && (fn.type === "ArrowFunctionExpression" || fn.type === "FunctionExpression")) {
      const names = ebNames(fn);
      const body = returned(fn);
      if (names && body) return this.expression(names, body);
    }
    return { kind: "opaque", node: at };
  }
}

// ---- recognition ----

/** The links of a chain, following `const` bindings of its base (Kysely builders are immutable). */
function fullChain(ctx: RecognizerContext, call: Call): Link[] {
  const { base, links } = chainDown(call);
  const b = unwrap(base);
  if (b.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, b);
    let target = init && unwrap(init);
    if (target?.type === "AwaitExpression") target = undefined;
    if (target?.type === "CallExpression" && target !== call) {
      const earlier = chainDown(target).links;
      if (earlier.some((l) => ROOTS.has(l.name))) return [...earlier, ...links];
    }
  }
  return links;
}

function kyselyEditor(scope: TableScope, anchor: Call, fields: ReadonlySet<string>) {
  return (field: string, op: "eq" | "ne", valueText: string): TextEdit | undefined => {
    if (fields.has(field)) return undefined;
    const q = scope.quote;
    const at = anchor.range[1];
    return { range: [at, at], text: `.where(${q}${field}${q}, ${q}${op === "eq" ? "=" : "!="}${q}, ${valueText})` };
  };
}

function recognizeKysely(call: Call, ctx: RecognizerContext): StateAccess | undefined {
  const links = fullChain(ctx, call);
  const execute = links[links.length - 1];
  if (!execute || !EXECUTE.has(execute.name) || execute.args.length > 0) return undefined;
  let i = 0;
  while (i < links.length && LEADING.has(links[i]!.name)) i++;
  const rootLink = links[i];
  const kind = rootLink && ROOTS.get(rootLink.name);
  const scope = kind && rootLink.args.length === 1 ? tableScope(ctx, rootLink.args[0]) : undefined;
  if (!rootLink || !kind || !scope) return undefined;
  const reader = new KyselyReader(ctx, scope);
  const body = links.slice(i + 1, -1);

  const clauses: Condition[] = [];
  const orClauses: Condition[][] = [];
  let hasOr = false;
  let lastWhere: Link | undefined;
  let lastSet: Link | undefined;
  const eqFields = new Set<string>();
  let assignments: Assignment[] = [];
  let insertValues: Assignment[] = [];
  let conflict: { onConflict: "ignore" | "update"; filter: Condition; assignments: Assignment[] } | undefined;

  for (const link of body) {
    const name = link.name;
    if (name === "where" || name === "orWhere") {
      const cond = reader.where(link);
      if (name === "orWhere") hasOr = true;
      if (name === "orWhere" && clauses.length > 0) orClauses.push(clauses.splice(0));
      clauses.push(cond);
      if (cond.kind === "pred" && cond.op === "eq") eqFields.add(cond.field);
      lastWhere = link;
    } else if (/^(or)?[wW]here(Ref|Exists|NotExists)$|^\$if$|^\$call$/.test(name)) {
      clauses.push({ kind: "opaque", node: link.call });
      lastWhere = link;
    } else if (name === "clearWhere") {
      clauses.splice(0);
      orClauses.splice(0);
    } else if (name === "set" && kind === "update") {
      assignments = mergeAssignments(assignments, setAssignments(ctx, scope, link));
      lastSet = link;
    } else if (name === "values" && kind === "insert") {
      insertValues = rowAssignments(ctx, scope, link.args[0]) ?? [];
    } else if ((name === "ignore" || name === "orIgnore") && kind === "insert") {
      conflict = { onConflict: "ignore", filter: { kind: "and", items: [] }, assignments: [] };
    } else if (name === "onDuplicateKeyUpdate" && kind === "insert") {
      conflict = {
        onConflict: "update",
        filter: { kind: "and", items: [] },
        assignments: rowAssignments(ctx, scope, link.args[0]) ?? [],
      };
    } else if (name === "onConflict" && kind === "insert") {
      conflict = onConflictOf(ctx, reader, scope, link);
      if (!conflict) return undefined;
    } else if (!NEUTRAL.has(name)) {
      return undefined;
    }
  }
  if (hasOr) orClauses.push(clauses.splice(0));
  const filter: Condition = hasOr
    ? { kind: "or", items: orClauses.map((items): Condition => ({ kind: "and", items })) }
    : { kind: "and", items: clauses };
  const base = { store: "kysely", model: scope.table, operation: execute.name, node: call } as const;

  if (kind === "read") {
    if (!lastWhere) return undefined;
    const locking = body.some((l) => LOCKING_LINKS.has(l.name));
    return { access: "read", ...base, filter, ...(locking ? { locking } : {}) };
  }
  if (kind === "insert") {
    return {
      access: "write",
      ...base,
      effect: "insert",
      ...(conflict
        ? { onConflict: conflict.onConflict }
        : catchesDuplicate(ctx.sourceCode, call, SQL_DUPLICATE)
          ? { onConflict: "error" as const }
          : {}),
      filter: conflict?.filter ?? { kind: "and", items: [] },
      assignments: conflict ? mergeAssignments(insertValues, conflict.assignments) : insertValues,
    };
  }
  const anchor = lastWhere ?? lastSet ?? rootLink;
  const inline = anchor.call.range[0] >= call.range[0] && anchor.call.range[1] <= call.range[1];
  const addPredicate = hasOr || !inline ? undefined : kyselyEditor(scope, anchor.call, eqFields);
  return {
    access: "write",
    ...base,
    ...(kind === "delete" ? { effect: "delete" as const } : {}),
    filter,
    assignments,
    ...(addPredicate ? { addPredicate } : {}),
    ...(kind === "update" && i === 0
      ? { recoveryWrite: (spec: RecoverySpec) => recoveryWrite(ctx, rootLink, spec) }
      : {}),
  };
}

/**
 * `db.updateTable("jobs").set({ status: Y }).where("status", "=", X).where("updated_at", "<", …)` through the claim's
 * own instance and table, run with `executeTakeFirst()`, whose `numUpdatedRows` is a bigint.
 */
function recoveryWrite(ctx: RecognizerContext, root: Link, spec: RecoverySpec): RecoveryWrite | undefined {
  const callee = unwrap(root.call.callee);
  const table = root.args[0];
  if (callee.type !== "MemberExpression" || !table) return undefined;
  const column = (name: string) => JSON.stringify(name);
  return {
    call: `${ctx.sourceCode.getText(callee.object)}.updateTable(${ctx.sourceCode.getText(table)})
  .set({ ${propertyKey(spec.field)}: ${spec.backText} })
  .where(${column(spec.field)}, "=", ${spec.stuckText})
  .where(${column(spec.timeField)}, "<", new Date(Date.now() - ${spec.threshold}))
  .executeTakeFirst()`,
    count: (result) => `Number(${result}.numUpdatedRows)`,
    client: callee.object,
  };
}

/**
 * `.onConflict((oc) => oc.column('name').doNothing())` → ignore;
 * `.onConflict((oc) => oc.columns([…]).doUpdateSet({…}).where(…))` → update when the where-links after it hold.
 */
function onConflictOf(
  ctx: RecognizerContext,
  reader: KyselyReader,
  scope: TableScope,
  link: Link,
): { onConflict: "ignore" | "update"; filter: Condition; assignments: Assignment[] } | undefined {
  const fn = link.args[0] && link.args[0].type !== "SpreadElement" ? unwrap(link.args[0]) : undefined;
  if (!fn || (fn.type !== "ArrowFunctionExpression" && fn.type !== "FunctionExpression")) return undefined;
  const expr = returned(fn);
  if (!expr || expr.type !== "CallExpression") return undefined;
  let mode: "ignore" | "update" | undefined;
  const items: Condition[] = [];
  let assignments: Assignment[] = [];
  for (const l of chainDown(expr).links) {
    if (l.name === "doNothing") mode = "ignore";
    else if (l.name === "doUpdateSet") {
      mode = "update";
      assignments = rowAssignments(ctx, scope, l.args[0]) ?? [];
    } else if (mode === "update" && (l.name === "where" || l.name === "orWhere")) {
      items.push(reader.where(l));
    } else if (mode === "update" && /^(or)?[wW]here/.test(l.name)) {
      items.push({ kind: "opaque", node: l.call });
    }
    // column, columns, constraint, expression and the conflict target's own where come before the action
  }
  if (!mode) return undefined;
  return { onConflict: mode, filter: { kind: "and", items }, assignments };
}

export const kyselyRecognizer: Recognizer = {
  store: "kysely",
  packages: { own: /^kysely$/, family: /kysely/i },
  methods: EXECUTE,
  recognize(call, ctx): StateAccess | undefined {
    try {
      return recognizeKysely(call, ctx);
    } catch {
      return undefined;
    }
  },
};
