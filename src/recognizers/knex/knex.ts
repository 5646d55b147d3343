/**
 * Knex query builder chains: a chain rooted at a table call, `knex('jobs')`, `trx('jobs')`, `db('jobs')`,
 * `this.knex('jobs')`, `knex.table('jobs')`, `knex.from('jobs')`, `knex.select('id').from('jobs')`, followed by
 * where-family links and ending in a write or a read.
 *
 * Where each chain is recognised (exactly once):
 * - `.update(…)`, `.del()`, `.delete()`: at that call (`.returning(…)` or `.then(…)` after it do not matter);
 * - `.insert(…)`: at the insert call, unless `.onConflict(…)` follows; then at its `.ignore()` or `.merge(…)`
 *   (where-links after `.merge()` are the condition of the conflict update);
 * - reads: at the last `.first()` / `.select()` of a chain that has a where-link; the read's node is the
 *   outermost call of the chain (`await knex('jobs').select('id').where(…)` is one read).
 *
 * Where-links combine as the SQL knex writes: `where A where B orWhere C` is `(A and B) or C`; callbacks
 * (`where(function () { this.where(…).orWhere(…) })`, `where((qb) => …)`) are parenthesised groups. A chain
 * with no table call at its root (`repo.update(a, b)`, `map.delete(k)`, `hash.update(s)`) is not knex.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StaleRowsSpec,
  StateAccess,
  TextEdit,
} from "../../core/model/accesses.js";
import { jsCutoff, propertyKey } from "../../core/reading/edits.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { unwrap } from "../../core/reading/values.js";
import {
  type Arg,
  type Call,
  KNOWN,
  LOCKING_LINKS,
  NEUTRAL,
  READS,
  TRAILING,
  type TableScope,
  WHERE_NAME,
  WRITES,
  columnField,
  fieldOf,
  knexRoot,
  objectArgument,
} from "./chains.js";
import { type Clause, KnexReader, combine } from "./filters.js";
import { catchesDuplicate, SQL_DUPLICATE } from "../../core/reading/failures.js";
import { assignedValue, objectAssignments } from "../../core/reading/assignments.js";
import { methodName } from "../../core/reading/ast.js";
import { type Link, chainDown, chainUp } from "../../core/reading/chains.js";

// ---- assignments ----

function scopedAssignments(ctx: RecognizerContext, scope: TableScope, object: TSESTree.ObjectExpression): Assignment[] {
  return objectAssignments(ctx.sourceCode, object, { field: (key) => fieldOf(scope, key) });
}

/** `.insert({…})` or `.insert([{…}])` with one row. */
function insertedRow(ctx: RecognizerContext, arg: Arg | undefined): TSESTree.ObjectExpression | undefined {
  if (!arg || arg.type === "SpreadElement") return undefined;
  const a = unwrap(arg);
  if (a.type === "ArrayExpression")
    return a.elements.length === 1 ? objectArgument(ctx, a.elements[0] ?? undefined) : undefined;
  return objectArgument(ctx, a);
}

/** Later assignments of a field replace earlier ones. */
function mergeAssignments(base: readonly Assignment[], over: readonly Assignment[]): Assignment[] {
  const fields = new Set(over.map((a) => a.field));
  return [...base.filter((a) => !fields.has(a.field)), ...over];
}

// ---- edits ----

function quoteField(scope: TableScope, field: string): string {
  return `${scope.quote}${field.replace(/\\/g, "\\\\").replace(new RegExp(scope.quote, "g"), `\\${scope.quote}`)}${scope.quote}`;
}

/** Appends `.where('status', X)` / `.whereNot('status', X)` after the last top-level where-link (or before `before`). */
function predicateAdder(scope: TableScope, clauses: readonly Clause[], before: Call): StateAccessEdit | undefined {
  if (clauses.some((c) => c.bool === "or")) return undefined;
  const callee = unwrap(before.callee);
  if (callee.type !== "MemberExpression") return undefined;
  const lastWhere = [...clauses].reverse().find((c) => c.link)?.link;
  const at = lastWhere ? lastWhere.call.range[1] : callee.object.range[1];
  return (field, op, valueText) => {
    if (clauses.some((c) => c.fields.includes(field))) return undefined;
    return {
      range: [at, at],
      text: `.${op === "eq" ? "where" : "whereNot"}(${quoteField(scope, field)}, ${valueText})`,
    };
  };
}

type StateAccessEdit = (field: string, op: "eq" | "ne", valueText: string) => TextEdit | undefined;

// ---- recognition ----

function updateAssignments(ctx: RecognizerContext, scope: TableScope, args: readonly Arg[]): Assignment[] | undefined {
  const first = args[0];
  if (!first || first.type === "SpreadElement") return undefined;
  const column = unwrap(first);
  if ((column.type === "Literal" && typeof column.value === "string") || column.type === "TemplateLiteral") {
    // update('status', 'running'[, returning])
    const field = columnField(ctx, scope, column);
    const value = args[1];
    if (!field || !value || value.type === "SpreadElement" || args.length > 3) return undefined;
    return [{ field, value: assignedValue(ctx.sourceCode, value), node: column, valueNode: value }];
  }
  // update({ … }[, returning[, options]]): the second argument is a returning list, never an options object (that
  // is TypeORM's and Sequelize's `update(criteria, values)`)
  const second = args[1] && unwrap(args[1]);
  if (
    args.length > 3 ||
    (second && !(second.type === "Literal" && typeof second.value === "string") && second.type !== "ArrayExpression")
  ) {
    return undefined;
  }
  const object = objectArgument(ctx, first);
  if (object) return scopedAssignments(ctx, scope, object);
  return column.type === "Identifier" || column.type === "MemberExpression" ? [] : undefined;
}

/** `db("jobs")`: the instance called with literal arguments, which another call can repeat to name the same table. */
function namesTableInPlace(table: Node): table is TSESTree.CallExpression & { callee: TSESTree.Identifier } {
  return (
    table.type === "CallExpression" &&
    table.callee.type === "Identifier" &&
    table.arguments.every((a) => a.type === "Literal")
  );
}

/**
 * `db("jobs").where(…).where(time, "<", …).update(…)` on the claim's own table expression, when that is the
 * instance called with literal arguments (`db("jobs")`): the recovery then names the same table through the same
 * instance, and resolves to the number of rows it updated.
 */
function recoveryWrite(ctx: RecognizerContext, table: Node, spec: RecoverySpec): RecoveryWrite | undefined {
  if (!namesTableInPlace(table)) return undefined;
  return {
    call: `${ctx.sourceCode.getText(table)}
  .where(${JSON.stringify(spec.field)}, ${spec.stuckText})
  .where(${JSON.stringify(spec.timeField)}, "<", new Date(Date.now() - ${spec.threshold}))
  .update({ ${propertyKey(spec.field)}: ${spec.backText} })`,
    count: (result) => result,
    client: table.callee,
  };
}

/** `db("locks").where(time, "<", …).del()` on the lock row's own table expression (as `recoveryWrite`), resolving to the count. */
function staleRowsDelete(ctx: RecognizerContext, table: Node, spec: StaleRowsSpec): RecoveryWrite | undefined {
  if (!namesTableInPlace(table)) return undefined;
  return {
    call: `${ctx.sourceCode.getText(table)}.where(${JSON.stringify(spec.timeField)}, "<", ${jsCutoff(spec.threshold)}).del()`,
    count: (result) => result,
    client: table.callee,
  };
}

function recognizeKnex(call: Call, ctx: RecognizerContext): StateAccess | undefined {
  const operation = methodName(call);
  if (!operation) return undefined;
  const down = chainDown(call);
  const up = chainUp(call, KNOWN);
  // What follows the recognised call: knex ends a query there (`.returning()`, `.then()`); a client that filters
  // after `.update()` (Supabase's `.from('jobs').update({…}).eq('id', id)`) is not knex.
  const after = chainUp(call, () => true);
  const trailing = (links: readonly Link[]) => links.every((l) => TRAILING.has(l.name));
  const root = knexRoot(ctx, unwrap(down.base), [...down.links, ...up]);
  if (!root) return undefined;
  // `trx("locks").where({ key }).forUpdate()`, awaited as is (a builder is a query): a select of the rows, locked.
  const lockingRead = LOCKING_LINKS.has(operation) && !down.links.some((l) => READS.has(l.name) || WRITES.has(l.name));
  if (LOCKING_LINKS.has(operation) && !lockingRead) return undefined;
  if (root.start > down.links.length && !READS.has(operation) && !lockingRead) return undefined;
  const before = down.links.slice(root.start, -1);
  const reader = new KnexReader(ctx, root.scope);
  const { scope } = root;
  const base = { store: "knex", model: scope.table, operation } as const;

  if (operation === "update" || operation === "del" || operation === "delete") {
    // Knex also takes where-links after the write: `update({…}).where({ id })`. (Supabase filters with `.eq()`.)
    let wheresAfter = 0;
    while (wheresAfter < after.length && WHERE_NAME.test(after[wheresAfter]!.name)) wheresAfter++;
    const clauses = reader.clauses([...before, ...after.slice(0, wheresAfter)]);
    if (!clauses || !trailing(after.slice(wheresAfter))) return undefined;
    const assignments = operation === "update" ? updateAssignments(ctx, scope, call.arguments) : [];
    if (!assignments) return undefined;
    if (operation !== "update" && call.arguments.length > 1) return undefined;
    const addPredicate = predicateAdder(scope, clauses, call);
    const table = unwrap(down.base);
    return {
      access: "write",
      ...base,
      ...(operation === "update" ? {} : { effect: "delete" as const }),
      filter: combine(clauses),
      assignments,
      node: call,
      ...(addPredicate ? { addPredicate } : {}),
      ...(operation === "update" ? { recoveryWrite: (spec: RecoverySpec) => recoveryWrite(ctx, table, spec) } : {}),
      // Knex resolves an update without `returning` to the count.
      ...(operation === "update" && !after.some((l) => l.name === "returning")
        ? { changedNothing: (result: string) => `${result} === 0` }
        : {}),
    };
  }

  if (operation === "insert") {
    if (up.some((l) => l.name === "onConflict")) return undefined; // recognised at .ignore() / .merge()
    if (
      !trailing(after) ||
      before.some((l) => !NEUTRAL.has(l.name)) ||
      call.arguments.length === 0 ||
      call.arguments.length > 2
    )
      return undefined;
    const row = insertedRow(ctx, call.arguments[0]);
    return {
      access: "write",
      ...base,
      effect: "insert",
      filter: { kind: "and", items: [] },
      // The duplicate-key error caught: taken under a unique key (`try { await knex("locks").insert(…) } catch …`).
      // On a lock table any failure that ends the attempt is the row already there: read for every store
      // (`markLockInserts`, core/reading/failures.ts).
      ...(catchesDuplicate(ctx.sourceCode, call, SQL_DUPLICATE) ? { onConflict: "error" as const } : {}),
      assignments: row ? scopedAssignments(ctx, scope, row) : [],
      node: call,
      staleRowsDelete: (spec) => staleRowsDelete(ctx, unwrap(down.base), spec),
    };
  }

  if (operation === "ignore" || operation === "merge") {
    const links = down.links.slice(root.start);
    const onConflict = links.length - 2;
    const insert = links.findIndex((l) => l.name === "insert");
    if (links[onConflict]?.name !== "onConflict" || insert < 0 || insert > onConflict) return undefined;
    if (links.slice(0, insert).some((l) => !NEUTRAL.has(l.name))) return undefined;
    if (links.slice(insert + 1, onConflict).some((l) => l.name !== "returning")) return undefined;
    const row = insertedRow(ctx, links[insert]!.args[0]);
    const inserted = row ? scopedAssignments(ctx, scope, row) : [];
    if (operation === "ignore") {
      if (call.arguments.length > 0 || !trailing(after)) return undefined;
      return {
        access: "write",
        ...base,
        effect: "insert",
        onConflict: "ignore",
        filter: { kind: "and", items: [] },
        assignments: inserted,
        node: call,
        staleRowsDelete: (spec) => staleRowsDelete(ctx, unwrap(down.base), spec),
      };
    }
    // The row ends up with the inserted values, or on conflict with `merge({…})`'s (merge() and merge([cols])
    // copy inserted values).
    const merged = objectArgument(ctx, call.arguments[0]);
    const assignments = merged ? mergeAssignments(inserted, scopedAssignments(ctx, scope, merged)) : inserted;
    let wheres = 0;
    while (wheres < after.length && WHERE_NAME.test(after[wheres]!.name)) wheres++;
    const clauses = reader.clauses(after.slice(0, wheres));
    if (!clauses || !trailing(after.slice(wheres))) return undefined;
    return {
      access: "write",
      ...base,
      effect: "insert",
      onConflict: "update",
      filter: combine(clauses),
      assignments,
      node: call,
    };
  }

  if (READS.has(operation) || lockingRead) {
    // The last first()/select() of the chain, and only reads: a select inside a write chain is not a read.
    if (up.some((l) => READS.has(l.name) || WRITES.has(l.name) || l.name === "onConflict")) return undefined;
    if (!trailing(after.slice(up.length))) return undefined;
    const links = [...down.links, ...up].slice(root.start);
    if (!links.some((l) => WHERE_NAME.test(l.name))) return undefined;
    const clauses = reader.clauses(links);
    if (!clauses) return undefined;
    const top = up.length > 0 ? up[up.length - 1]!.call : call;
    // `.forUpdate()` / `.forNoKeyUpdate()`: the rows stay locked until the transaction ends.
    const locking = [...down.links, ...up].some((l) => LOCKING_LINKS.has(l.name));
    return { access: "read", ...base, filter: combine(clauses), node: top, ...(locking ? { locking } : {}) };
  }
  return undefined;
}

export const knexRecognizer: Recognizer = {
  store: "knex",
  packages: { own: /^knex$/, family: /knex|objection/i },
  methods: new Set(["update", "del", "delete", "insert", "ignore", "merge", "first", "select", ...LOCKING_LINKS]),
  recognize(call, ctx): StateAccess | undefined {
    try {
      return recognizeKnex(call, ctx);
    } catch {
      return undefined;
    }
  },
};
