/**
 * An ESLint formatter for reviewdog's rdjson (Reviewdog Diagnostic Format, JSON), carrying each message's first
 * suggestion (or its fix) as a suggested change, which the stock rdjson converters drop. Use it as
 *   eslint . --format "$(node -p "require.resolve('eslint-plugin-locks/rdjson')")" | reviewdog -f=rdjson -reporter=github-pr-review
 * Positions are 1-based; columns count UTF-8 bytes, as rdjson specifies; a suggestion's range ends exclusive.
 */
import { readFileSync } from "node:fs";
import { relative, sep } from "node:path";
import type { ESLint, Linter } from "eslint";

interface Position {
  line: number;
  column: number;
}
interface Range {
  start: Position;
  end?: Position;
}
export interface RdjsonDiagnostic {
  message: string;
  location: { path: string; range: Range };
  severity: "ERROR" | "WARNING" | "INFO";
  code?: { value: string; url?: string };
  suggestions?: { range: Range; text: string }[];
}
export interface RdjsonResult {
  source: { name: string; url?: string };
  diagnostics: RdjsonDiagnostic[];
}

/** Offset → position, with the column in UTF-8 bytes. */
function positionAt(text: string, lineStarts: number[], offset: number): Position {
  let lo = 0;
  let hi = lineStarts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lineStarts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: Buffer.byteLength(text.slice(lineStarts[lo]!, offset), "utf8") + 1 };
}

/** ESLint's 1-based UTF-16 column → rdjson's 1-based UTF-8 byte column. */
function byteColumn(lines: string[], line: number, column: number): number {
  const text = lines[line - 1];
  return text === undefined ? column : Buffer.byteLength(text.slice(0, column - 1), "utf8") + 1;
}

function sourceOf(result: ESLint.LintResult): string | undefined {
  if (result.source !== undefined) return result.source;
  try {
    return readFileSync(result.filePath, "utf8");
  } catch {
    return undefined;
  }
}

export function toRdjson(
  results: readonly ESLint.LintResult[],
  cwd: string,
  rulesMeta: Record<string, { docs?: { url?: string } }> = {},
): RdjsonResult {
  const diagnostics: RdjsonDiagnostic[] = [];
  for (const result of results) {
    if (result.messages.length === 0) continue;
    const path = relative(cwd, result.filePath).split(sep).join("/");
    const text = sourceOf(result) ?? "";
    const lines = text.split(/\r?\n|\r/);
    const lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
    for (const m of result.messages as Linter.LintMessage[]) {
      const start = { line: m.line || 1, column: byteColumn(lines, m.line || 1, m.column || 1) };
      const range: Range = m.endLine
        ? { start, end: { line: m.endLine, column: byteColumn(lines, m.endLine, m.endColumn ?? 1) } }
        : { start };
      const edit = m.suggestions?.[0]?.fix ?? m.fix;
      const url = m.ruleId ? rulesMeta[m.ruleId]?.docs?.url : undefined;
      diagnostics.push({
        message: m.message,
        location: { path, range },
        severity: m.severity === 2 ? "ERROR" : "WARNING",
        ...(m.ruleId ? { code: { value: m.ruleId, ...(url ? { url } : {}) } } : {}),
        ...(edit
          ? {
              suggestions: [
                {
                  range: {
                    start: positionAt(text, lineStarts, edit.range[0]),
                    end: positionAt(text, lineStarts, edit.range[1]),
                  },
                  text: edit.text,
                },
              ],
            }
          : {}),
      });
    }
  }
  return { source: { name: "eslint", url: "https://eslint.org" }, diagnostics };
}

/** The formatter ESLint loads: `(results, context) => string`. */
export default function rdjson(results: ESLint.LintResult[], context?: ESLint.LintResultData): string {
  return JSON.stringify(
    toRdjson(
      results,
      context?.cwd ?? process.cwd(),
      (context?.rulesMeta ?? {}) as Record<string, { docs?: { url?: string } }>,
    ),
  );
}
