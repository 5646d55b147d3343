/**
 * Raw SQL, whatever the client: the statement text is parsed (see `src/core/languages/sql.ts`) and becomes a write or
 * a read.
 *
 * Where the text comes from:
 * - `X.query(text, params?)`, `X.query({ text, values })` / `{ sql, values }` (pg, mysql2, TypeORM, Sequelize with
 *   `{ bind }` or `{ replacements }`), `X.execute(text, params)` (mysql2);
 * - `X.$executeRawUnsafe(text, ...params)`, `X.$queryRawUnsafe(…)` (Prisma), `knex.raw(text, bindings)`,
 *   `sql.unsafe(text, params)` (postgres.js), `db.prepare(text).run(...params)` (better-sqlite3), and a statement
 *   prepared once into a variable or a field and run elsewhere (`const claim = db.prepare(text)`, `claim.run({ id })`):
 *   made at each run with that run's values, its predicates reported in its text;
 * - tagged templates: `X.$executeRaw\`…\``, `X.$queryRaw\`…\`` (Prisma), `sql\`…\`` (postgres.js, @vercel/postgres,
 *   slonik, Prisma.sql, Drizzle), `SQL\`…\`` (sql-template-strings). Their holes are parameters; a hole that is
 *   itself a `sql` fragment, or `Prisma.raw("…")`, is inlined.
 * The text is a string literal, a template literal (in an untagged template a static hole is inlined, any other is
 * a parameter, or an unknown value inside quotes), a `+` concatenation, or a `const` holding one. Parameters
 * (`$1`, `?`, holes) take the static value of their JS expression when it has one (`["RUNNING", id]`).
 *
 * PostgreSQL advisory-lock functions (`SELECT pg_try_advisory_lock($1)`) become an `AdvisoryLockOp`, with the
 * connection they run on (a pool, a checked-out client, a transaction), for `release-in-finally`.
 *
 * Only text that starts with UPDATE, INSERT, DELETE, SELECT or WITH is parsed, so Drizzle's `sql` fragments
 * (`sql\`now()\``) and other calls named `query`/`execute`/`raw` cost a regex. The access is reported at the call
 * (or the tagged template), and so are its predicates.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  Assignment,
  Condition,
  Node,
  RecoverySpec,
  RecoveryWrite,
  StaleRowsSpec,
  StateAccess,
  StateWrite,
  TextEdit,
} from "../../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { parseSql } from "../../core/languages/sql.js";
import {
  locksRowsForWrite,
  maskSql,
  questionMarks,
  startsWithStatement,
  topLevelWhere,
} from "../../core/languages/sql/lexing.js";
import { translateSql, type SqlStatement } from "../../core/languages/sql/statements.js";
import { findVariable, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import { enclosingFunction } from "../../core/reading/units.js";
import { normalizeName } from "../../core/model/settings.js";
import { catchesDuplicate, SQL_DUPLICATE } from "../../core/reading/failures.js";
import { TAGS, type Quote, type SqlSource, tagName, templateSegments, looksLikeStatement } from "./text.js";
import type { Params } from "./parameters.js";
import { STORE, ADVISORY_HELPERS, METHODS, FUNCTIONS, type Found, fromCall, clientNode } from "./calls.js";
import { type Rendered, render, resolver, sourceRange, valueNode } from "./rendering.js";
import { advisoryOp, advisoryHelperOp } from "./advisory.js";
import { HOLE_SENTINEL } from "../../core/languages/sql.js";

function recognizeSource(ctx: RecognizerContext, node: Node, operation: string, found: Found): StateAccess | undefined {
  const { source, params } = found;
  if (!looksLikeStatement(source.segments)) return undefined;
  const rendered = render(source, params);
  if (/advisory_|\b(?:get_lock|release_lock|release_all_locks)\s*\(/i.test(rendered.masked)) {
    // MySQL's `DO RELEASE_LOCK(?)` evaluates its expressions as a SELECT would, without a result the grammar reads.
    const text = rendered.parseText.replace(/^(\s*)DO\s/i, "$1SELECT ");
    const parsed = parseSql(text, rendered.mysqlFirst || text !== rendered.parseText);
    const op = parsed && advisoryOp(ctx, node, operation, parsed);
    if (op) return op;
  }
  // A SELECT without WHERE reads no particular rows (`SELECT pg_advisory_lock($1)`, `SELECT count(*) FROM jobs`).
  if (/^\s*select\b/i.test(rendered.masked) && !/\bwhere\b/i.test(rendered.masked)) return undefined;
  let parsed = parseSql(rendered.parseText, rendered.mysqlFirst);
  // A SET list built at run time (`SET ${updates.join(", ")} WHERE id = $1`): the rest of the statement is read, and
  // which columns it moves is unknown (`setsUnknown`).
  const unknownSet = parsed ? undefined : withUnknownSet(rendered.parseText);
  if (!parsed && unknownSet) parsed = parseSql(unknownSet, rendered.mysqlFirst);
  if (!parsed) return undefined;
  // A statement prepared elsewhere is made at the run (`node`), and its predicates are in its text (`textAt`).
  const statement = translateSql(parsed, resolver(ctx, rendered, params), found.textAt ?? node);
  if (!statement) return undefined;
  if (statement.access === "read") {
    const locking = locksRowsForWrite(rendered.masked) || inWriteTransaction(ctx, node);
    return {
      access: "read",
      store: STORE,
      model: statement.model,
      operation,
      filter: statement.filter,
      node,
      ...(locking ? { locking } : {}),
    };
  }
  const assignments: Assignment[] = statement.assignments
    .filter((a) => !a.field.startsWith(UNKNOWN_SET))
    .map((a) => ({
      field: a.field,
      value: a.value,
      node,
      valueNode: valueNode(ctx, rendered, a, node),
    }));
  const editable = !unknownSet && source.inline && statement.extendable && statement.effect !== "insert";
  return {
    access: "write",
    store: STORE,
    model: statement.model,
    ...(statement.model === HOLE_SENTINEL ? { dynamicModel: true } : {}),
    operation,
    effect: statement.effect ?? "update",
    // An INSERT whose duplicate-key error the code catches is taken under a unique key, like ON CONFLICT DO NOTHING.
    ...(statement.onConflict
      ? { onConflict: statement.onConflict }
      : statement.effect === "insert" && catchesDuplicate(ctx.sourceCode, node, SQL_DUPLICATE)
        ? { onConflict: "error" as const }
        : {}),
    filter: statement.filter,
    assignments,
    ...(unknownSet ? { setsUnknown: true } : {}),
    ...(/\bskip\s+locked\b/i.test(rendered.masked) ? { skipsLocked: true } : {}),
    node,
    ...(editable
      ? {
          addPredicate: (field, op, valueText) =>
            predicateEdit(ctx, rendered, statement, source, params, field, op, valueText),
        }
      : {}),
    ...(operation === "query" && !rendered.mysqlFirst && statement.effect !== "insert"
      ? { recoveryWrite: (spec: RecoverySpec) => recoveryWrite(ctx, node, statement.model, spec) }
      : {}),
    ...(operation === "query" && !rendered.mysqlFirst && statement.effect === "insert"
      ? { staleRowsDelete: (spec: StaleRowsSpec) => staleRowsDelete(ctx, node, statement.model, spec) }
      : {}),
    // node-postgres's result counts the rows (`rowCount`); other clients' `query` answer rows or tuples, so the
    // module must be seen to import the driver.
    ...(operation === "query" && !source.tagged && !rendered.mysqlFirst && importsPg(ctx)
      ? { changedNothing: (result: string) => `${result}.rowCount === 0` }
      : {}),
  };
}

/** The column a SET item built at run time stands in as, for the parser: dropped from what the write assigns. */
const UNKNOWN_SET = "__set_at_run_time_";

/**
 * The text with each item of an UPDATE's SET list that is a hole of its own (`SET ${sets}`, `SET status = $1,
 * ${more}`) written as an assignment the parser reads (`__set_at_run_time_0 = NULL`); undefined when it has none.
 */
function withUnknownSet(text: string): string | undefined {
  const masked = maskSql(text).masked;
  const set = /\bset\b/i.exec(masked);
  if (!set || !/^\s*update\b/i.test(masked)) return undefined;
  const start = set.index + set[0].length;
  const tail = /\b(where|returning|from)\b/i.exec(masked.slice(start));
  const end = tail ? start + tail.index : masked.length;
  let out = "";
  let changed = false;
  let depth = 0;
  let itemStart = start;
  const items: [number, number][] = [];
  for (let i = start; i <= end; i++) {
    const c = masked[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    if (i === end || (c === "," && depth === 0)) {
      items.push([itemStart, i]);
      itemStart = i + 1;
    }
  }
  let last = 0;
  for (const [from, to] of items) {
    const item = text.slice(from, to);
    const hole = /^(\s*):__p(\d+)(\s*)$/.exec(item);
    if (!hole) continue;
    out += `${text.slice(last, from)}${hole[1]}${UNKNOWN_SET}${hole[2]} = NULL${hole[3]}`;
    last = to;
    changed = true;
  }
  return changed ? out + text.slice(last) : undefined;
}

/** The module imports node-postgres (`import pg from "pg"`, `import { Pool } from "pg"`, `require("pg")`). */
function importsPg(ctx: RecognizerContext): boolean {
  return (
    ctx.sourceCode.ast.body.some(
      (s) => s.type === "ImportDeclaration" && s.source.value === "pg" && s.importKind !== "type",
    ) || /\brequire\(\s*["']pg["']\s*\)/.test(ctx.sourceCode.text)
  );
}

// ---- suggestions ----

function fieldsOf(c: Condition, out = new Set<string>()): Set<string> {
  if (c.kind === "pred") out.add(normalizeName(c.field));
  else if (c.kind === "and" || c.kind === "or") for (const i of c.items) fieldsOf(i, out);
  else if (c.kind === "not") fieldsOf(c.item, out);
  return out;
}

/** A value's source text as SQL: `"RUNNING"`, `'RUNNING'` → `'RUNNING'`; numbers and booleans as they are. */
function sqlValue(valueText: string, tagged: boolean): string | undefined {
  const t = valueText.trim();
  const quoted = /^(['"`])([^'"`\\$]*)\1$/.exec(t);
  if (quoted) return `'${quoted[2]}'`;
  if (/^-?\d+(?:\.\d+)?$/.test(t) || /^(?:true|false|null)$/i.test(t)) return t.toUpperCase();
  // In a tagged template any JS expression can be a parameter.
  return tagged && !t.includes("`") ? `\${${t}}` : undefined;
}

function escapeFor(quote: Quote, s: string): string {
  if (quote === "`") return s.replace(/\\/g, "\\\\").replace(/`/g, "\\`");
  return s.replace(/\\/g, "\\\\").replace(new RegExp(quote, "g"), `\\${quote}`);
}

/** `WHERE` + ` field = 'value' AND`, written into the statement text in the file. */
function predicateEdit(
  ctx: RecognizerContext,
  rendered: Rendered,
  statement: SqlStatement,
  source: SqlSource,
  params: Params,
  field: string,
  op: "eq" | "ne",
  valueText: string,
): TextEdit | undefined {
  if (fieldsOf(statement.filter).has(normalizeName(field))) return undefined;
  const at = topLevelWhere(rendered.masked);
  if (at < 0) return undefined;
  const where = sourceRange(rendered, at, at + 5);
  if (!where) return undefined;
  const column = /^[a-z_][a-z0-9_]*$/.test(field)
    ? field
    : statement.dialect === "mysql"
      ? `\`${field}\``
      : `"${field}"`;
  const predicate = (value: string) => ` ${escapeFor(where.quote, column)} ${op === "eq" ? "=" : "<>"} ${value} AND`;
  const value = sqlValue(valueText, source.tagged && where.quote === "`");
  if (value)
    return {
      range: [where.range[1], where.range[1]],
      text: predicate(value.startsWith("${") ? value : escapeFor(where.quote, value)),
    };
  // A JS value (`worker`, a token): a parameter of its own, its value added to the call's array of values.
  const added = addedParameter(ctx, rendered, params, at, where.range[1], valueText);
  if (!added || added.at < where.range[1]) return undefined;
  const between = ctx.sourceCode.text.slice(where.range[1], added.at);
  return { range: [where.range[1], added.at], text: `${predicate(added.placeholder)}${between}${added.text}` };
}

/**
 * A new parameter for `valueText`, in the statement's own placeholder style, and where its value goes in the array
 * literal of the call: `$n+1` at the end (node-postgres; the `$k` of a value the array passes already), or a `?`
 * counted among the ones before `whereAt` (mysql2).
 * Only where the array holds every parameter the text numbers, one for one (no spread, no hole, no mix of styles).
 */
function addedParameter(
  ctx: RecognizerContext,
  rendered: Rendered,
  params: Params,
  whereAt: number,
  whereEnd: number,
  valueText: string,
): { placeholder: string; at: number; text: string } | undefined {
  const array = params.inlineArray;
  if (!array || array.elements.some((e) => e === null || e.type === "SpreadElement")) return undefined;
  const elements = array.elements as TSESTree.Expression[];
  const numbered = [...rendered.masked.matchAll(/(?<![\w$])\$(\d+)\b/g)].map((m) => Number(m[1]));
  const marks = questionMarks(rendered.masked);
  if (numbered.length > 0 === marks.length > 0) return undefined;
  let placeholder: string;
  let index: number;
  if (numbered.length > 0) {
    const highest = Math.max(...numbered);
    if (highest !== elements.length) return undefined;
    // A value the call passes already (`worker` as `$3`) is referred to again, not passed twice.
    const passed = elements.findIndex((e) => ctx.sourceCode.getText(e) === valueText);
    if (passed >= 0) return { placeholder: `$${passed + 1}`, at: whereEnd, text: "" };
    placeholder = `$${highest + 1}`;
    index = elements.length;
  } else {
    if (marks.length !== elements.length) return undefined;
    placeholder = "?";
    index = marks.filter((m) => m < whereAt).length;
  }
  if (index < elements.length) return { placeholder, at: elements[index]!.range[0], text: `${valueText}, ` };
  const last = elements[elements.length - 1];
  return last ? { placeholder, at: last.range[1], text: `, ${valueText}` } : undefined;
}

/**
 * An identifier as the module's SQL writes it: quoted where the statement quotes it (`"Task"`, `"updatedAt"`), bare
 * otherwise (PostgreSQL folds a bare name, so `Jobs` written bare stays bare).
 */
function sqlIdentifier(text: string, name: string): string {
  const quoted = `"${name.replace(/"/g, '""')}"`;
  return text.includes(quoted) || text.includes(JSON.stringify(quoted).slice(1, -1)) ? quoted : name;
}

/**
 * node-postgres's `client.query(text, values)` on the claim's client: an UPDATE of the claim's table that gives rows
 * still holding the claimed value back where the progress column is older than the threshold (milliseconds, a
 * parameter), counted by `rowCount`. Values are parameters, so nothing is quoted by hand.
 */
function recoveryWrite(
  ctx: RecognizerContext,
  node: Node,
  table: string,
  spec: RecoverySpec,
): RecoveryWrite | undefined {
  const client = clientNode(node);
  if (!client) return undefined;
  // The statements of the module that name the table and the columns: the claim, and the heartbeat's time column.
  const text = ctx.sourceCode.text;
  const f = sqlIdentifier(text, spec.field);
  const sql = `UPDATE ${sqlIdentifier(text, table)} SET ${f} = $1 WHERE ${f} = $2 AND ${sqlIdentifier(text, spec.timeField)} < now() - $3 * interval '1 millisecond'`;
  return pgQuery(ctx, client, sql, [JSON.stringify(spec.back), JSON.stringify(spec.stuck), spec.threshold]);
}

/**
 * `client.query(text, values)` of node-postgres, as a recovery: the statement and its values (source text), one per
 * line when there are values; counted by `rowCount` (`?? 0`: the driver types it nullable).
 */
function pgQuery(ctx: RecognizerContext, client: Node, sql: string, values: readonly string[]): RecoveryWrite {
  const receiver = ctx.sourceCode.getText(client);
  return {
    call:
      values.length > 0
        ? `${receiver}.query(\n  ${JSON.stringify(sql)},\n  [${values.join(", ")}],\n)`
        : `${receiver}.query(${JSON.stringify(sql)})`,
    count: (result) => `${result}.rowCount ?? 0`,
    client,
  };
}

/**
 * node-postgres's `client.query(text, values)` on the lock row's client: a DELETE of the lock table's rows whose time
 * column is older than the threshold (a parameter, milliseconds), or already past, counted by `rowCount`.
 */
function staleRowsDelete(
  ctx: RecognizerContext,
  node: Node,
  table: string,
  spec: StaleRowsSpec,
): RecoveryWrite | undefined {
  const client = clientNode(node);
  if (!client) return undefined;
  const text = ctx.sourceCode.text;
  const column = sqlIdentifier(text, spec.timeField);
  const sql = `DELETE FROM ${sqlIdentifier(text, table)} WHERE ${column} < now()${spec.threshold ? " - $1 * interval '1 millisecond'" : ""}`;
  return pgQuery(ctx, client, sql, spec.threshold ? [spec.threshold] : []);
}

// ---- the recognizer ----

/**
 * The statement is sent on a transaction opened for writing (`const tx = await client.transaction("write")`, libSQL's
 * `BEGIN IMMEDIATE`): SQLite lets one writer at a time, so what it reads cannot change before it commits.
 */
function inWriteTransaction(ctx: RecognizerContext, node: Node): boolean {
  const client = clientNode(node);
  const c = client && unwrap(client);
  if (c?.type !== "Identifier") return false;
  const init = getConstInit(ctx.sourceCode, c);
  let open = init && init.type !== "TSEnumDeclaration" ? unwrap(init) : undefined;
  if (open?.type === "AwaitExpression") open = unwrap(open.argument);
  if (open?.type !== "CallExpression") return false;
  const callee = unwrap(open.callee);
  const mode = open.arguments[0];
  return (
    callee.type === "MemberExpression" &&
    keyName(callee.property, callee.computed) === "transaction" &&
    mode?.type === "Literal" &&
    (mode.value === "write" || mode.value === "immediate" || mode.value === "exclusive")
  );
}

/**
 * A statement whose text is a constant imported from another module of the project (`sql.raw(REAP_SQL).execute(db)`,
 * `pool.query(CLAIM_SQL, [id])`): it may claim, recover or release, and this module cannot tell which. A write of
 * unknown table and effect (`unread`), so that nothing here is judged missing on the strength of what it cannot read.
 */
function importedStatement(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  method: string,
): StateWrite | undefined {
  if (!["query", "execute", "raw", "unsafe", "$executeRawUnsafe", "$queryRawUnsafe"].includes(method)) return undefined;
  const first = call.arguments[0];
  const text = first && first.type !== "SpreadElement" ? unwrap(first) : undefined;
  if (text?.type !== "Identifier") return undefined;
  const def = findVariable(ctx.sourceCode, text)?.defs[0];
  if (def?.type !== "ImportBinding") return undefined;
  const from = def.parent.type === "ImportDeclaration" ? String(def.parent.source.value) : "";
  if (!from.startsWith(".") && !from.startsWith("@/") && !from.startsWith("~/")) return undefined;
  return {
    access: "write",
    store: STORE,
    model: text.name,
    operation: method,
    dynamicModel: true,
    unread: true,
    filter: { kind: "opaque", node: text },
    assignments: [],
    node: call,
  };
}

/**
 * The one call of a statement runner (`$queryRaw`, `query`, `execute`…) given the const a tagged template is held in,
 * when that is the const's only use.
 */
function runOf(
  ctx: RecognizerContext,
  template: TSESTree.TaggedTemplateExpression,
): TSESTree.CallExpression | undefined {
  const decl = template.parent;
  if (decl?.type !== "VariableDeclarator" || decl.init !== template || decl.id.type !== "Identifier") return undefined;
  const variable = findVariable(ctx.sourceCode, decl.id);
  if (!variable || variable.defs.length !== 1) return undefined;
  const uses = variable.references.filter((r) => r.identifier !== decl.id);
  const runs = uses.flatMap((r) => {
    const call = r.identifier.parent;
    if (call?.type !== "CallExpression" || call.arguments[0] !== r.identifier) return [];
    const callee = unwrap(call.callee);
    const method = callee.type === "MemberExpression" ? keyName(callee.property, callee.computed) : undefined;
    return method && (METHODS.has(method) || TAGS.has(method)) ? [call] : [];
  });
  return runs.length === 1 && uses.length === 1 ? runs[0] : undefined;
}

/** The statement text a const of the call's own function holds, when this call is its one use. */
function heldText(ctx: RecognizerContext, call: TSESTree.CallExpression): Node | undefined {
  const arg = call.arguments[0];
  if (!arg || arg.type !== "Identifier") return undefined;
  const variable = findVariable(ctx.sourceCode, arg);
  const def = variable?.defs[0];
  if (!variable || variable.defs.length !== 1 || def?.type !== "Variable" || def.parent.kind !== "const")
    return undefined;
  const init = def.node.init && unwrap(def.node.init);
  if (!init || (init.type !== "TemplateLiteral" && init.type !== "Literal")) return undefined;
  if (variable.references.filter((r) => r.identifier !== def.name).length !== 1) return undefined;
  return enclosingFunction(def.node) === enclosingFunction(call) && enclosingFunction(call) ? init : undefined;
}

export const sqlRecognizer: Recognizer = {
  store: STORE,
  methods: METHODS,
  tags: TAGS,
  functions: FUNCTIONS,
  recognize(call, ctx): StateAccess | undefined {
    const callee = unwrap(call.callee);
    const method =
      callee.type === "MemberExpression"
        ? keyName(callee.property, callee.computed)
        : callee.type === "Identifier" && FUNCTIONS.has(callee.name)
          ? callee.name
          : undefined;
    if (!method || !METHODS.has(method)) return undefined;
    if (ADVISORY_HELPERS.has(method)) return advisoryHelperOp(ctx, call, method);
    try {
      const found = fromCall(ctx, call, method);
      if (!found) return importedStatement(ctx, call, method);
      const access = recognizeSource(ctx, call, method, found);
      // Written into a const of the same function and run by this one call (`const raw = \`WITH … UPDATE …\`;
      // await prisma.$queryRawUnsafe(raw)`): findings go to the text, where its predicates are, as for a tagged
      // statement held in a const; its result and its rejection still land at the call.
      const text = heldText(ctx, call);
      if (text && (access?.access === "write" || access?.access === "read"))
        return { ...access, node: text, runAt: call };
      return access;
    } catch {
      return undefined;
    }
  },
  taggedByContent(node): boolean {
    const first = node.quasi.quasis[0]?.value.cooked;
    return first !== undefined && first !== null && startsWithStatement(maskSql(first).masked);
  },
  recognizeTagged(node, ctx): StateAccess | undefined {
    const name = tagName(node.tag);
    if (!name) return undefined;
    try {
      const segments = templateSegments(ctx, node.quasi, true, 0);
      if (!segments) return undefined;
      const access = recognizeSource(ctx, node, name, { source: { segments, inline: true, tagged: true }, params: {} });
      // Held in a const and run by one call (`const q = Prisma.sql\`…\`; const n = await db.$executeRaw(q)`): its
      // result and its rejection land at that call. Findings stay at the text, where its predicates are.
      if (access?.access !== "read" && access?.access !== "write") return access;
      const run = runOf(ctx, node);
      return run ? { ...access, runAt: run } : access;
    } catch {
      return undefined;
    }
  },
};
