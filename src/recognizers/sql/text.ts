/**
 * Raw SQL: gathering a statement's text from the JavaScript that writes it, as pieces of text and holes: string
 * literals, templates (tagged or not), `+` concatenations and the `const`s holding them. In a tagged template a nested
 * `sql` fragment or a raw helper (`Prisma.raw("…")`) is text and any other hole a parameter.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { maskSql, startsWithStatement } from "../../core/languages/sql/lexing.js";
import { andTerms, evaluate, findVariable, getConstInit, keyName, unwrap } from "../../core/reading/values.js";

export const TAGS = new Set(["sql", "SQL", "$executeRaw", "$queryRaw"]);
/** Helpers whose static string argument is SQL text spliced in as is (`Prisma.raw("…")`, `sql.raw("…")`). */
const RAW_HELPERS = new Set(["raw", "unsafe"]);
const MAX_DEPTH = 4;

export type Quote = "'" | '"' | "`";
/** A piece of statement text; `src` is where its characters sit in the file, one for one, when they do. */
type Segment =
  | { readonly text: string; readonly src?: number; readonly quote?: Quote }
  | { readonly hole: Node; readonly interpolated: boolean; readonly symbolic?: boolean };

export interface SqlSource {
  readonly segments: readonly Segment[];
  /** The text was written in the call itself (not in a `const` elsewhere): suggestions may edit it. */
  readonly inline: boolean;
  readonly tagged: boolean;
}

function literalSegment(ctx: RecognizerContext, n: TSESTree.StringLiteral): Segment {
  const raw = n.raw;
  const quote = raw[0] as Quote;
  return raw.slice(1, -1) === n.value ? { text: n.value, src: n.range[0] + 1, quote } : { text: n.value };
}

function quasiSegment(ctx: RecognizerContext, q: TSESTree.TemplateElement): Segment {
  const cooked = q.value.cooked ?? "";
  if (q.value.raw !== cooked) return { text: cooked };
  const source = ctx.sourceCode.text;
  const start = source[q.range[0]] === "`" || source[q.range[0]] === "}" ? q.range[0] + 1 : q.range[0];
  return source.slice(start, start + cooked.length) === cooked
    ? { text: cooked, src: start, quote: "`" }
    : { text: cooked };
}

export function tagName(tag: Node): string | undefined {
  const t = unwrap(tag);
  if (t.type === "Identifier") return t.name;
  if (t.type === "MemberExpression") return keyName(t.property, t.computed);
  return undefined;
}

/**
 * A hole of a tagged template: a nested `sql` fragment (written there or held in a `const`), a list of fragments
 * joined (`Prisma.join(conditions, " AND ")`, `sql.join(parts, sql\` AND \`)`) or a raw helper is text; anything
 * else is a parameter.
 */
function taggedHole(ctx: RecognizerContext, expr: Node, depth: number): Segment[] {
  if (depth > MAX_DEPTH) return [{ hole: expr, interpolated: false }];
  let e = unwrap(expr);
  if (e.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, e);
    const u = init && init.type !== "TSEnumDeclaration" ? unwrap(init) : undefined;
    if (u?.type === "TaggedTemplateExpression" || u?.type === "CallExpression") e = u;
  }
  if (e.type === "TaggedTemplateExpression" && TAGS.has(tagName(e.tag) ?? "")) {
    return templateSegments(ctx, e.quasi, true, depth + 1) ?? [{ hole: expr, interpolated: false }];
  }
  const joined = e.type === "CallExpression" ? joinedFragments(ctx, e, depth) : undefined;
  if (joined) return joined;
  // An optional filter term (`${owner ? Prisma.sql`AND locked_by = ${owner}` : Prisma.empty}`): one more AND term,
  // unknown, as in a plain template.
  if (e.type === "ConditionalExpression") {
    const branches = [e.consequent, e.alternate].map((b) => taggedHole(ctx, b, depth + 1));
    const lead = (segs: Segment[]) => (segs.length === 0 ? "" : "text" in segs[0]! ? segs[0].text : undefined);
    if (branches.every((b) => lead(b) === "" || /^\s*and\s/i.test(lead(b) ?? "")) && branches.some((b) => b.length > 0))
      return [{ text: " AND " }, { hole: expr, interpolated: false }, { text: " " }];
  }
  if (e.type === "CallExpression" && e.arguments.length === 1) {
    const callee = unwrap(e.callee);
    const name = callee.type === "MemberExpression" ? keyName(callee.property, callee.computed) : undefined;
    const arg = e.arguments[0]!;
    const v = name && RAW_HELPERS.has(name) && arg.type !== "SpreadElement" ? evaluate(ctx.sourceCode, arg) : undefined;
    if (v && typeof v.value === "string") return [{ text: v.value }];
  }
  if (e.type === "MemberExpression" && keyName(e.property, e.computed) === "empty") return [];
  return [{ hole: expr, interpolated: false }];
}

/**
 * `Prisma.join(list, sep)` or `sql.join(list, sep)` over a list of fragments written in an array (or a `const`
 * holding one): each fragment's text, with the separator's between (Prisma's default is `", "`). A list that code
 * pushes more onto ends in one more separator and an unknown term (under `" AND "`, a term that only narrows).
 * Undefined when the list or the separator is not known.
 */
function joinedFragments(ctx: RecognizerContext, call: TSESTree.CallExpression, depth: number): Segment[] | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression" || keyName(callee.property, callee.computed) !== "join") return undefined;
  const owner = unwrap(callee.object);
  if (owner.type !== "Identifier" || !/^(?:Prisma|sql|SQL)$/.test(owner.name)) return undefined;
  const [list, sep] = call.arguments;
  const terms = list ? andTerms(ctx.sourceCode, list) : undefined;
  if (!terms || terms.terms.length === 0) return undefined;
  let separator: string | undefined = ", ";
  if (sep && sep.type !== "SpreadElement") {
    const s = unwrap(sep);
    const v = evaluate(ctx.sourceCode, s);
    if (v && typeof v.value === "string") separator = v.value;
    else if (s.type === "TaggedTemplateExpression" && s.quasi.expressions.length === 0)
      separator = s.quasi.quasis[0]?.value.cooked ?? undefined;
    else separator = undefined;
  }
  if (separator === undefined) return undefined;
  const out: Segment[] = [];
  terms.terms.forEach((t, i) => {
    if (i > 0) out.push({ text: separator });
    out.push(...taggedHole(ctx, t, depth + 1));
  });
  if (terms.grows) out.push({ text: separator }, { hole: list!, interpolated: false });
  return out;
}

export function templateSegments(
  ctx: RecognizerContext,
  tpl: TSESTree.TemplateLiteral,
  tagged: boolean,
  depth: number,
): Segment[] | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const out: Segment[] = [];
  tpl.quasis.forEach((q, i) => {
    out.push(quasiSegment(ctx, q));
    const expr = tpl.expressions[i];
    if (!expr) return;
    if (tagged) out.push(...taggedHole(ctx, expr, depth));
    else out.push(...interpolation(ctx, expr));
  });
  return out;
}

/**
 * `${x}` in an untagged template, or `+ x`: a static value is text; anything else is only known at run time. An
 * optional filter term (`${type ? `AND type = '${type}'` : ""}`, written there or held in a const) only narrows what
 * the rest matches: one more AND term, unknown.
 */
function interpolation(ctx: RecognizerContext, expr: Node): Segment[] {
  const v = evaluate(ctx.sourceCode, expr);
  // `${JobStatus.Processing}` of an enum declared elsewhere: a value whose text is unknown, known by its name.
  if (v?.symbolic) return [{ hole: expr, interpolated: true, symbolic: true }];
  if (v) return [{ text: String(v.value) }];
  const joined = joinedStrings(ctx, expr);
  if (joined) return joined;
  // The term may be built beforehand and held in a const (`const typeFilter = types ? `AND …` : ""`).
  const e = unwrap(expr.type === "Identifier" ? (getConstInit(ctx.sourceCode, expr) ?? expr) : expr);
  if (
    e.type === "ConditionalExpression" &&
    [e.consequent, e.alternate].every((b) => optionalAndTerm(ctx, b)) &&
    [e.consequent, e.alternate].some((b) => !isEmptyText(ctx, b))
  ) {
    return [{ text: " AND " }, { hole: expr, interpolated: true }, { text: " " }];
  }
  return [{ hole: expr, interpolated: true }];
}

/**
 * `${parts.join(", ")}` of a list of strings written in an array (or a `const` holding one): its elements' text with
 * the separator between. A list that code pushes more onto ends in one more separator and an unknown item
 * (`SET ${updates.join(", ")}` with `updates.push(\`name = $2\`)`: the columns always set, and more).
 */
function joinedStrings(ctx: RecognizerContext, expr: Node): Segment[] | undefined {
  const call = unwrap(expr);
  if (call.type !== "CallExpression") return undefined;
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression" || keyName(callee.property, callee.computed) !== "join") return undefined;
  const list = andTerms(ctx.sourceCode, callee.object);
  if (!list || list.terms.length === 0) return undefined;
  const sep = call.arguments[0];
  const separator = sep === undefined ? "," : evaluate(ctx.sourceCode, sep)?.value;
  if (typeof separator !== "string") return undefined;
  const texts = list.terms.map((t) => evaluate(ctx.sourceCode, t)?.value);
  if (!texts.every((t): t is string => typeof t === "string")) return undefined;
  const out: Segment[] = [{ text: texts.join(separator) }];
  if (list.grows) out.push({ text: separator }, { hole: expr, interpolated: true });
  return out;
}

function isEmptyText(ctx: RecognizerContext, n: Node): boolean {
  const v = evaluate(ctx.sourceCode, n);
  return v !== undefined && v.value === "";
}

/** Empty text, or text that starts with `AND ` (a template whose first quasi does). */
function optionalAndTerm(ctx: RecognizerContext, n: Node): boolean {
  if (isEmptyText(ctx, n)) return true;
  const u = unwrap(n);
  const first =
    u.type === "TemplateLiteral"
      ? (u.quasis[0]?.value.cooked ?? undefined)
      : u.type === "Literal" && typeof u.value === "string"
        ? u.value
        : undefined;
  return first !== undefined && /^\s*and\s/i.test(first);
}

export function textSegments(ctx: RecognizerContext, node: Node, depth: number): Segment[] | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "Literal":
      return typeof n.value === "string" ? [literalSegment(ctx, n as TSESTree.StringLiteral)] : undefined;
    case "TemplateLiteral":
      return templateSegments(ctx, n, false, depth);
    case "Identifier": {
      const init = getConstInit(ctx.sourceCode, n);
      if (init) return textSegments(ctx, init, depth + 1);
      return grownText(ctx, n, depth);
    }
    case "BinaryExpression": {
      if (n.operator !== "+") return undefined;
      const left = textSegments(ctx, n.left, depth + 1);
      if (!left) return undefined;
      return [...left, ...(textSegments(ctx, n.right, depth + 1) ?? interpolation(ctx, n.right))];
    }
    default:
      return undefined;
  }
}

/** A piece appended to a statement that narrows its filter (` AND type = ?`) or only orders or limits its rows. */
const NARROWING = /^\s*(and\b|order\s+by\b|limit\b|offset\b)/i;

/**
 * A `let` given statement text and then only grown by `+=` with pieces that narrow its filter (`if (type) sql += "
 * AND type = ?"`): the text it starts with, and for each optional AND term one more unknown term, as an optional term
 * in a template is read. An ORDER BY or LIMIT piece changes no filter and is left out. Undefined when the variable is
 * assigned anything else.
 */
function grownText(ctx: RecognizerContext, id: TSESTree.Identifier, depth: number): Segment[] | undefined {
  const variable = findVariable(ctx.sourceCode, id);
  const def = variable?.defs[0];
  if (!variable || variable.defs.length !== 1 || def?.type !== "Variable") return undefined;
  const decl = def.node;
  if (decl.id.type !== "Identifier" || !decl.init) return undefined;
  const base = textSegments(ctx, decl.init, depth + 1);
  if (!base) return undefined;
  const out = [...base];
  for (const ref of variable.references) {
    if (!ref.isWrite() || ref.identifier === decl.id) continue;
    const assign = ref.identifier.parent;
    if (assign?.type !== "AssignmentExpression" || assign.operator !== "+=" || assign.left !== ref.identifier)
      return undefined;
    const piece = textSegments(ctx, assign.right, depth + 1);
    const lead = piece?.[0] && "text" in piece[0] ? piece[0].text : undefined;
    const m = lead === undefined ? null : NARROWING.exec(lead);
    if (!m) return undefined;
    if (/^and$/i.test(m[1]!)) out.push({ text: " AND " }, { hole: assign.right, interpolated: true }, { text: " " });
  }
  return out;
}

/** A quick look before any work: does the text start with a statement keyword (after comments)? */
export function looksLikeStatement(segments: readonly Segment[]): boolean {
  let head = "";
  for (const s of segments) {
    if (!("text" in s)) break;
    head += s.text;
    if (head.length > 200) break;
  }
  return startsWithStatement(maskSql(head).masked);
}
