/**
 * Raw SQL: gathering a statement's text from the JavaScript that writes it, as pieces of text and holes: string
 * literals, templates (tagged or not), `+` concatenations and the `const`s holding them. In a tagged template a nested
 * `sql` fragment or a raw helper (`Prisma.raw("…")`) is text and any other hole a parameter.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { maskSql, startsWithStatement } from "../../core/languages/sql/lexing.js";
import { evaluate, getConstInit, keyName, unwrap } from "../../core/reading/values.js";

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

/** A hole of a tagged template: a nested `sql` fragment or a raw helper is text; anything else is a parameter. */
function taggedHole(ctx: RecognizerContext, expr: Node, depth: number): Segment[] {
  const e = unwrap(expr);
  if (e.type === "TaggedTemplateExpression" && TAGS.has(tagName(e.tag) ?? "")) {
    return templateSegments(ctx, e.quasi, true, depth + 1) ?? [{ hole: expr, interpolated: false }];
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
      return init ? textSegments(ctx, init, depth + 1) : undefined;
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
