/**
 * PostgREST query builders, as supabase-js (and postgrest-js alone) write them: a chain from `from(table)` on any
 * client, a verb (`select`, `insert`, `upsert`, `update`, `delete`), then filters (`eq`, `neq`, `lt`, `is`, `in`,
 * `match`, `not`, `or`, `filter`) and modifiers (`select`, `order`, `limit`, `single`…):
 * `supabase.from("jobs").update({ status: "running" }).eq("id", id).eq("status", "queued")`. The chain is read once,
 * at its outermost call, where findings about it are reported.
 *
 * What tells it apart: a `from` with a static table name followed directly by a PostgREST verb, and nothing after the
 * verb but PostgREST's filters and modifiers (a Knex chain's `where` is not one of them). The filter strings of `or()`
 * and the operators of `not()`/`filter()` are PostgREST's own small grammar (`status.eq.queued,status.is.null`),
 * read here. Errors come back as values (`const { error } = await …insert(row); if (error) return false;`): an
 * insert whose caller leaves on a duplicate key, or on any error when the table is named like a lock, is taken under
 * a unique key. `rpc(name, args)` runs SQL this module does not show, and is not read, but for PostgreSQL's own
 * advisory-lock functions called by name (`rpc("pg_try_advisory_lock", { key })`), whose meaning the name gives.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  CompareOp,
  Condition,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StateAccess,
  StaticValue,
  TextEdit,
} from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { hasLockWord } from "../core/model/settings.js";
import { objectAssignments } from "../core/reading/assignments.js";
import { chainDown, type Link } from "../core/reading/chains.js";
import { jsCutoff } from "../core/reading/edits.js";
import { errorResultEndsAttempt } from "../core/reading/failures.js";
import { evaluate, findProperty, keyName, objectLiteral, staticList, unwrap } from "../core/reading/values.js";
import { advisoryRpcOp } from "./sql/advisory.js";

const STORE = "postgrest";
const VERBS = new Set(["select", "insert", "upsert", "update", "delete"]);
/** The comparisons of PostgREST, by method name (`eq(column, value)`) and by operator string (`status.eq.queued`). */
const COMPARISONS: Readonly<Record<string, CompareOp | "is">> = {
  eq: "eq",
  neq: "ne",
  gt: "gt",
  gte: "gte",
  lt: "lt",
  lte: "lte",
  is: "is",
  in: "in",
};
/** Filters that compare in ways the model does not read (patterns, arrays, ranges, full text). */
const OTHER_FILTERS = new Set([
  "like",
  "ilike",
  "likeAllOf",
  "likeAnyOf",
  "ilikeAllOf",
  "ilikeAnyOf",
  "contains",
  "containedBy",
  "overlaps",
  "rangeGt",
  "rangeGte",
  "rangeLt",
  "rangeLte",
  "rangeAdjacent",
  "textSearch",
  "cs",
  "cd",
  "ov",
  "fts",
  "plfts",
  "phfts",
  "wfts",
  "match",
  "imatch",
]);
const FILTERS = new Set([...Object.keys(COMPARISONS), ...OTHER_FILTERS, "match", "not", "or", "filter"]);
const MODIFIERS = new Set([
  "select",
  "order",
  "limit",
  "range",
  "single",
  "maybeSingle",
  "csv",
  "geojson",
  "explain",
  "returns",
  "overrideTypes",
  "abortSignal",
  "throwOnError",
  "rollback",
]);

const pred = (
  field: string,
  op: CompareOp,
  values: readonly StaticValue[] | undefined,
  node: Node,
  value?: Node,
): Condition => ({
  kind: "pred",
  field,
  op,
  values,
  node,
  ...(value ? { value } : {}),
});

/** A static string argument. */
function text(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return typeof v?.value === "string" ? v.value : undefined;
}

/** A column as the filter names it: `status`, a JSON member `data->>status` as its last key. */
const column = (name: string) => name.replace(/^.*->>?/, "").replace(/^"|"$/g, "");

// ---- PostgREST's filter strings: `or("status.eq.queued,and(attempts.lt.3,status.eq.failed)")` ----

/** A placeholder for a template's hole inside a filter string: a value known only at run time. */
const HOLE = "\u0000";

/**
 * The text of a filter-string argument. A template's hole whose value is known where the module is read (a
 * constant, an enum member: `status.neq.${Status.Running}`) is that value; any other hole is a placeholder.
 */
function filterString(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const n = unwrap(node);
  if (n.type === "TemplateLiteral")
    return n.quasis
      .map((q, i) => {
        const hole = n.expressions[i];
        if (!hole) return q.value.cooked ?? "";
        const v = evaluate(ctx.sourceCode, hole)?.value;
        const known = typeof v === "string" || typeof v === "number" || typeof v === "boolean";
        return (q.value.cooked ?? "") + (known ? String(v) : HOLE);
      })
      .join("");
  return text(ctx, n);
}

/** Splits at the commas outside parentheses. */
function topLevel(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    if (list[i] === "(") depth++;
    else if (list[i] === ")") depth--;
    else if (list[i] === "," && depth === 0) {
      out.push(list.slice(start, i));
      start = i + 1;
    }
  }
  out.push(list.slice(start));
  return out.map((s) => s.trim()).filter(Boolean);
}

/** A value written in a filter string: `null`, `true`, a list `(a,b)`, a string; unknown when it holds a hole. */
function stringValues(raw: string, op: CompareOp | "is"): StaticValue[] | undefined {
  if (raw.includes(HOLE)) return undefined;
  if (op === "in") {
    const inner = /^\((.*)\)$/.exec(raw)?.[1];
    return inner === undefined ? undefined : topLevel(inner).map((v) => ({ value: v.replace(/^"|"$/g, "") }));
  }
  if (raw === "null") return [{ value: null }];
  if (raw === "true" || raw === "false") return [{ value: raw === "true" }];
  return [{ value: raw.replace(/^"|"$/g, "") }];
}

/** One condition of a filter string: `status.eq.queued`, `status.not.in.(a,b)`, `and(…)`, `or(…)`. */
function stringCondition(item: string, at: Node, depth = 0): Condition {
  const group = /^(not\.)?(and|or)\((.*)\)$/.exec(item);
  if (group && depth < 4) {
    const c: Condition = {
      kind: group[2] as "and" | "or",
      items: topLevel(group[3]!).map((i) => stringCondition(i, at, depth + 1)),
    };
    return group[1] ? { kind: "not", item: c } : c;
  }
  const m = /^([^.]+)\.(not\.)?([a-z]+)\.(.*)$/s.exec(item);
  if (!m) return { kind: "opaque", node: at };
  const [, col, not, opName, raw] = m;
  const c = comparison(column(col!), opName!, raw!, at);
  return not ? { kind: "not", item: c } : c;
}

/** `column op value` with PostgREST's operator name and a value in the filter-string syntax. */
function comparison(field: string, opName: string, raw: string, at: Node): Condition {
  const op = COMPARISONS[opName];
  if (!op) return pred(field, "other", undefined, at);
  if (op === "is") return pred(field, "eq", stringValues(raw, op), at);
  return pred(field, op, stringValues(raw, op), at);
}

// ---- the chain ----

/** One filter link as a condition: `eq("status", "queued")`, `is("lockedAt", null)`, `or("…")`. */
function linkCondition(ctx: RecognizerContext, link: Link): Condition {
  // Findings about a filter point at its link (`lt("started_at", cutoff)`), not at the chain's first line.
  const callee = unwrap(link.call.callee);
  const at: Node = callee.type === "MemberExpression" ? callee.property : link.call;
  const [a0, a1, a2] = link.args;
  if (link.name === "or") {
    const s = filterString(ctx, a0);
    return s === undefined
      ? { kind: "opaque", node: at }
      : { kind: "or", items: topLevel(s).map((i) => stringCondition(i, at)) };
  }
  if (link.name === "match") {
    const obj = objectLiteral(ctx.sourceCode, a0);
    if (!obj) return { kind: "opaque", node: at };
    return {
      kind: "and",
      items: obj.properties.map((p): Condition => {
        if (p.type !== "Property") return { kind: "opaque", node: p };
        const key = p.key.type === "Identifier" && !p.computed ? p.key.name : text(ctx, p.key as Node);
        const v = evaluate(ctx.sourceCode, p.value as Node);
        return key === undefined
          ? { kind: "opaque", node: p }
          : pred(column(key), "eq", v ? [v] : undefined, at, p.value as Node);
      }),
    };
  }
  const col = text(ctx, a0);
  if (col === undefined) return { kind: "opaque", node: at };
  const field = column(col);
  if (link.name === "not" || link.name === "filter") {
    const opName = text(ctx, a1);
    if (opName === undefined) return { kind: "opaque", node: at };
    const c = jsComparison(ctx, field, opName, a2, at);
    return link.name === "not" ? { kind: "not", item: c } : c;
  }
  return jsComparison(ctx, field, link.name, a1, at);
}

/** `column op value` with the value a JavaScript expression (a string in the filter syntax for `in` of `not`/`filter`). */
function jsComparison(
  ctx: RecognizerContext,
  field: string,
  opName: string,
  value: Node | undefined,
  at: Node,
): Condition {
  const op = COMPARISONS[opName];
  if (!op || !value || value.type === "SpreadElement") return pred(field, "other", undefined, at);
  if (op === "in") {
    const raw = text(ctx, value);
    if (raw !== undefined) return pred(field, "in", stringValues(raw, "in"), at);
    return pred(field, "in", staticList(ctx.sourceCode, value), at);
  }
  const v = evaluate(ctx.sourceCode, value);
  return pred(field, op === "is" ? "eq" : op, v ? [v] : undefined, at, value);
}

interface Chain {
  readonly client: Node;
  readonly from: Link;
  readonly table: string;
  readonly verb: Link;
  readonly after: readonly Link[];
}

/** The chain `call` ends, when it is PostgREST's and `call` is its outermost link. */
function chainOf(ctx: RecognizerContext, call: TSESTree.CallExpression): Chain | undefined {
  // The outermost call only: a chain continued by another of its links is read at that link.
  const parent = call.parent;
  if (parent?.type === "MemberExpression" && parent.object === call && parent.parent?.type === "CallExpression") {
    const name = parent.property.type === "Identifier" && !parent.computed ? parent.property.name : undefined;
    if (name && (FILTERS.has(name) || MODIFIERS.has(name))) return undefined;
  }
  const { base, links } = chainDown(call);
  const i = links.findIndex((l) => l.name === "from");
  const from = links[i];
  const verb = links[i + 1];
  if (!from || !verb || !VERBS.has(verb.name) || from.args.length !== 1) return undefined;
  const table = text(ctx, from.args[0]);
  if (!table) return undefined;
  const after = links.slice(i + 2);
  if (!after.every((l) => FILTERS.has(l.name) || MODIFIERS.has(l.name))) return undefined;
  const chain = { client: base, from, table, verb, after };
  return isPostgrest(ctx, chain, call) ? chain : undefined;
}

/** Links only PostgREST has (Knex spells filters `where…`, and has no `upsert`, `single`, `maybeSingle`). */
const ONLY_POSTGREST = new Set([...FILTERS, "upsert", "single", "maybeSingle", "csv", "returns", "throwOnError"]);

/**
 * A `from(table)` chain is PostgREST's when something only PostgREST does says so: a link only it has, its result
 * destructured as `{ data, error }`, or a module that imports supabase-js or postgrest-js. Otherwise (`db.from("jobs")
 * .insert(row)`) it may be Knex's, and is left to it.
 */
function isPostgrest(ctx: RecognizerContext, chain: Chain, call: TSESTree.CallExpression): boolean {
  if (ONLY_POSTGREST.has(chain.verb.name) || chain.after.some((l) => ONLY_POSTGREST.has(l.name))) return true;
  const awaited = call.parent?.type === "AwaitExpression" ? call.parent : call;
  const declarator = awaited.parent;
  if (
    declarator?.type === "VariableDeclarator" &&
    declarator.id.type === "ObjectPattern" &&
    declarator.id.properties.some(
      (p) => p.type === "Property" && p.key.type === "Identifier" && (p.key.name === "error" || p.key.name === "data"),
    )
  )
    return true;
  return importsPostgrest(ctx);
}

/** The module imports (or requires) supabase-js or postgrest-js: remembered per file. */
function importsPostgrest(ctx: RecognizerContext): boolean {
  let found = ctx.scratch.get("postgrest:imports") as boolean | undefined;
  if (found === undefined) {
    found = /["'](?:https:\/\/esm\.sh\/|npm:|jsr:)?@supabase\/(?:supabase|postgrest)-js\b/.test(ctx.sourceCode.text);
    ctx.scratch.set("postgrest:imports", found);
  }
  return found;
}

/** The rows the chain's filters pick: every filter ANDed. */
function filterOf(ctx: RecognizerContext, chain: Chain): Condition {
  return { kind: "and", items: chain.after.filter((l) => FILTERS.has(l.name)).map((l) => linkCondition(ctx, l)) };
}

/** The values a write stores: an object, or a one-row list (`insert([{ … }])`). */
function valuesOf(ctx: RecognizerContext, node: Node | undefined): Assignment[] | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const n = unwrap(node);
  const row = n.type === "ArrayExpression" && n.elements.length === 1 ? n.elements[0] : n;
  const obj = row && row.type !== "SpreadElement" ? objectLiteral(ctx.sourceCode, row) : undefined;
  return obj && objectAssignments(ctx.sourceCode, obj);
}

/** A quote the module's chain uses, for the text an edit adds. */
function quoteOf(ctx: RecognizerContext, chain: Chain): string {
  return ctx.sourceCode.getText(chain.from.args[0]!).startsWith("'") ? "'" : '"';
}

/** `.neq("status", X)` or `.eq(…)` right after the verb: a condition the update then requires. */
function addPredicate(ctx: RecognizerContext, chain: Chain) {
  return (field: string, op: "eq" | "ne", valueText: string): TextEdit | undefined => {
    const q = quoteOf(ctx, chain);
    const end = chain.verb.call.range[1];
    return { range: [end, end], text: `.${op === "eq" ? "eq" : "neq"}(${q}${field}${q}, ${valueText})` };
  };
}

/** The whole recovery on the same client: rows still stuck whose progress time is older than the threshold. */
function recoveryWrite(ctx: RecognizerContext, chain: Chain, spec: RecoverySpec): RecoveryWrite {
  const q = quoteOf(ctx, chain);
  const client = ctx.sourceCode.getText(chain.client);
  return {
    call: `${client}.from(${ctx.sourceCode.getText(chain.from.args[0]!)}).update({ ${spec.field}: ${spec.backText} }, { count: ${q}exact${q} }).eq(${q}${spec.field}${q}, ${spec.stuckText}).lt(${q}${spec.timeField}${q}, ${jsCutoff(spec.threshold)}.toISOString())`,
    count: (result) => `${result}.count ?? 0`,
    client: chain.client,
  };
}

/** The function name of `client.rpc("name", args)`, when static. */
function rpcName(ctx: RecognizerContext, call: TSESTree.CallExpression): string | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression" || keyName(callee.property, callee.computed) !== "rpc") return undefined;
  const first = call.arguments[0];
  const name = first && first.type !== "SpreadElement" ? evaluate(ctx.sourceCode, first)?.value : undefined;
  return typeof name === "string" ? name : undefined;
}

export const postgrestRecognizer: Recognizer = {
  store: STORE,
  packages: { own: /^@supabase\/(supabase-js|postgrest-js)$/, family: /supabase|postgrest/i },
  methods: new Set([...VERBS, ...FILTERS, ...MODIFIERS, "rpc"]),
  recognize(call, ctx): StateAccess | undefined {
    const rpc = rpcName(ctx, call);
    if (rpc !== undefined) return advisoryRpcOp(ctx, call, rpc);
    const chain = chainOf(ctx, call);
    if (!chain) return undefined;
    const { verb, table: model } = chain;
    const filter = filterOf(ctx, chain);
    const base = { store: STORE, model, operation: verb.name, node: call };
    if (verb.name === "select") return { access: "read", ...base, filter };
    if (verb.name === "delete") return { access: "write", ...base, effect: "delete", filter, assignments: [] };
    const assignments = valuesOf(ctx, verb.args[0]);
    if (!assignments) return undefined;
    if (verb.name === "update") {
      const counted = objectLiteral(ctx.sourceCode, verb.args[1]);
      const rows = chain.after.some((l) => l.name === "select");
      return {
        access: "write",
        ...base,
        filter,
        assignments,
        // `.single()` turns "no row" into an error; without it the error stays empty when the filter matched nothing.
        ...(chain.after.some((l) => l.name === "single") ? {} : { errorSilentWhenNothing: true }),
        addPredicate: addPredicate(ctx, chain),
        recoveryWrite: (spec) => recoveryWrite(ctx, chain, spec),
        // Errors come back in the result too: a count, or the rows `select()` returns, read only when present.
        ...(counted && findProperty(counted, "count")
          ? { changedNothing: (result: string) => `${result}.count === 0` }
          : rows
            ? { changedNothing: (result: string) => `${result}.data?.length === 0` }
            : {}),
      };
    }
    // insert / upsert: a row under the table's keys. `upsert(…, { ignoreDuplicates: true })` does nothing on a
    // conflict; a plain upsert overwrites the row (no lock); an insert whose error the caller leaves on is taken.
    const options = objectLiteral(ctx.sourceCode, verb.args[1]);
    const ignore =
      options && evaluate(ctx.sourceCode, findProperty(options, "ignoreDuplicates")?.value ?? options)?.value === true;
    const ends = verb.name === "insert" ? errorResultEndsAttempt(ctx.sourceCode, call) : undefined;
    const onConflict =
      verb.name === "upsert"
        ? ignore
          ? "ignore"
          : "update"
        : ends === "duplicate" || (ends === "any" && hasLockWord(model))
          ? "error"
          : undefined;
    // An upsert writes the row its conflict columns name (`{ onConflict: "lock_name" }`): the row by those values.
    const target =
      verb.name === "upsert" && options ? text(ctx, findProperty(options, "onConflict")?.value) : undefined;
    const keys = target?.split(",").map((k) => k.trim());
    const keyed = keys?.map((k) => assignments.find((a) => a.field === k));
    const rowKey: Condition =
      keyed && keyed.length > 0 && keyed.every((a) => a !== undefined)
        ? {
            kind: "and",
            items: keyed.map((a) =>
              pred(a!.field, "eq", a!.value.kind === "static" ? [a!.value.value] : undefined, a!.node),
            ),
          }
        : { kind: "and", items: [] };
    return {
      access: "write",
      ...base,
      effect: "insert",
      ...(onConflict ? { onConflict } : {}),
      filter: rowKey,
      assignments,
    };
  },
};
