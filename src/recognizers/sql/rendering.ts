/**
 * Raw SQL: the gathered text rendered for the parser (every hole and positional `?` a named parameter), the resolver
 * of those parameters, and the way back from the rendered text to where its characters sit in the file.
 */
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { HOLE_SENTINEL } from "../../core/languages/sql.js";
import { blankUnsupported, maskSql, questionMarks } from "../../core/languages/sql/lexing.js";
import type { ParamRef, ParamValue } from "../../core/languages/sql/values.js";
import type { SqlAssignment } from "../../core/languages/sql/statements.js";
import type { Quote, SqlSource } from "./text.js";
import { type Params, property, paramValue } from "./parameters.js";

export interface Rendered {
  /** The text with every hole as `:__pK` (before positional `?` are numbered): what source offsets map into. */
  readonly plain: string;
  readonly masked: string;
  readonly pieces: readonly {
    readonly start: number;
    readonly length: number;
    readonly src: number;
    readonly quote: Quote;
  }[];
  /** What each `:__pK` stands for. */
  readonly slots: readonly (Node | undefined)[];
  /** The text handed to the parser. */
  readonly parseText: string;
  readonly mysqlFirst: boolean;
}

export function render(source: SqlSource, params: Params): Rendered {
  let plain = "";
  const pieces: { start: number; length: number; src: number; quote: Quote }[] = [];
  const slots: (Node | undefined)[] = [];
  for (const s of source.segments) {
    if ("text" in s) {
      if (s.src !== undefined && s.quote)
        pieces.push({ start: plain.length, length: s.text.length, src: s.src, quote: s.quote });
      plain += s.text;
      continue;
    }
    if (s.interpolated) {
      const state = maskSql(plain).state;
      // `'${name}'`: a value inside a SQL string, only known at run time.
      if (state === "single" || state === "double" || state === "dollar") {
        plain += HOLE_SENTINEL;
        continue;
      }
      slots.push(s.symbolic ? s.hole : undefined);
    } else {
      slots.push(s.hole);
    }
    plain += `:__p${slots.length - 1}`;
  }
  // SQLite's other named parameters, `@id` and `$id`, are `:id` when the run hands one object of named values.
  if (params.named) {
    const m = maskSql(plain).masked;
    plain = plain.replace(/[@$](?=[A-Za-z_]\w*)/g, (c, at: number) =>
      m[at] === c && !/[\w@$:]/.test(m[at - 1] ?? "") ? ":" : c,
    );
  }
  const masked = maskSql(plain).masked;
  const marks = questionMarks(masked);
  let parseText = plain;
  if (marks.length > 0) {
    let out = "";
    let last = 0;
    marks.forEach((pos, i) => {
      slots.push(params.positional?.[i]);
      out += `${plain.slice(last, pos)}:__p${slots.length - 1}`;
      last = pos + 1;
    });
    parseText = out + plain.slice(last);
  }
  const parseMasked = marks.length > 0 ? maskSql(parseText).masked : masked;
  return {
    plain,
    masked,
    pieces,
    slots,
    parseText: blankUnsupported(parseText, parseMasked),
    mysqlFirst: marks.length > 0 || parseMasked.includes("`"),
  };
}

export function resolver(ctx: RecognizerContext, rendered: Rendered, params: Params) {
  return (ref: ParamRef): ParamValue | undefined => {
    if (ref.kind === "slot") return paramValue(ctx, rendered.slots[ref.index]);
    if (ref.kind === "positional") return paramValue(ctx, params.positional?.[ref.index - 1]);
    return params.named ? paramValue(ctx, property(params.named, ref.name)) : undefined;
  };
}

/** Where plain-text offsets [from, to) sit in the file, when one piece holds them one for one. */
export function sourceRange(
  rendered: Rendered,
  from: number,
  to: number,
): { range: [number, number]; quote: Quote } | undefined {
  for (const p of rendered.pieces) {
    if (from >= p.start && to <= p.start + p.length)
      return { range: [p.src + (from - p.start), p.src + (to - p.start)], quote: p.quote };
  }
  return undefined;
}

/**
 * The node an assignment's value is read from: the parameter's JS expression, or the SQL literal itself
 * (`'running'`, located in the file), so that `getText` gives text a suggestion can reuse.
 */
export function valueNode(ctx: RecognizerContext, rendered: Rendered, a: SqlAssignment, fallback: Node): Node {
  if (a.node) return a.node;
  if (!a.literal) return fallback;
  // Only string literals: `'running'` is valid JS as well, `TRUE` is not.
  if (!a.literal.startsWith("'")) return fallback;
  for (let at = rendered.plain.indexOf(a.literal); at >= 0; at = rendered.plain.indexOf(a.literal, at + 1)) {
    if (rendered.masked[at] !== "'") continue;
    const where = sourceRange(rendered, at, at + a.literal.length);
    if (!where || ctx.sourceCode.text.slice(where.range[0], where.range[1]) !== a.literal) continue;
    const loc = {
      start: ctx.sourceCode.getLocFromIndex(where.range[0]),
      end: ctx.sourceCode.getLocFromIndex(where.range[1]),
    };
    return {
      type: "Literal",
      value: a.literal,
      raw: a.literal,
      range: where.range,
      loc,
      parent: fallback,
    } as unknown as Node;
  }
  return fallback;
}
