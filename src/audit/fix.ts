/**
 * `locks-audit --fix` (issue 18): writes `// locks-recovered-by: <module>` above each claim the audit paired with a
 * stale recovery in another module, so the editor's require-stale-recovery accepts the claim as the audit does; points
 * a false directive at the module that does recover the claim, or removes it where none does. Edits go through
 * ts-morph, the project's library for code changes across a project, loaded only here so a plain audit never pays
 * for it; only the comments change, every other byte of a file stays as it was.
 */
import { dirname, join, relative, sep } from "node:path";
import { AuditError } from "./discover.js";
import type { DirectiveFix } from "./pair.js";

export interface FixSummary {
  /** Project-relative files changed, sorted. */
  readonly files: readonly string[];
  readonly added: number;
  readonly pointed: number;
  readonly removed: number;
}

type TsMorph = typeof import("ts-morph");

async function loadTsMorph(): Promise<TsMorph> {
  try {
    return await import("ts-morph");
  } catch {
    throw new AuditError("locks-audit --fix needs ts-morph to edit the files: npm install --save-dev ts-morph");
  }
}

/** The directive's target as the module names it: a path relative to the module (`./sweeper.ts`, `../cron/reap.ts`). */
function targetFrom(file: string, target: string): string {
  const rel = relative(dirname(file), target).split(sep).join("/");
  return rel.startsWith(".") ? rel : `./${rel}`;
}

const DIRECTIVE = /(locks-recovered-by:\s*)(\S+?)([.,;]*)(\s|\*\/|$)/;

export async function applyDirectiveFixes(root: string, fixes: readonly DirectiveFix[]): Promise<FixSummary> {
  if (fixes.length === 0) return { files: [], added: 0, pointed: 0, removed: 0 };
  const { Project, Node } = await loadTsMorph();
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    skipLoadingLibFiles: true,
    compilerOptions: { allowJs: true },
  });
  const byFile = new Map<string, DirectiveFix[]>();
  for (const f of fixes) byFile.set(f.file, [...(byFile.get(f.file) ?? []), f]);
  let added = 0,
    pointed = 0,
    removed = 0;
  const files: string[] = [];
  for (const [file, list] of byFile) {
    const source = project.addSourceFileAtPath(join(root, file));
    const text = source.getFullText();
    const lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);
    const pos = (line: number, column: number) => (lineStarts[line - 1] ?? text.length) + column - 1;
    const edits: { start: number; end: number; text: string }[] = [];
    for (const fix of list) {
      const at = pos(fix.at.line, fix.at.column);
      if (fix.action === "add") {
        // Above the claim's statement (`const claimed = await …`), where the rule reads a directive, at its indent.
        const node = source.getDescendantAtPos(at);
        const statement = node && (Node.isStatement(node) ? node : node.getFirstAncestor((n) => Node.isStatement(n)));
        if (!statement) continue;
        const start = statement.getStart();
        const lineStart = text.lastIndexOf("\n", start - 1) + 1;
        const indent = /^[ \t]*/.exec(text.slice(lineStart, start))![0];
        edits.push({ start, end: start, text: `// locks-recovered-by: ${targetFrom(file, fix.target!)}\n${indent}` });
        added++;
        continue;
      }
      // The directive's comment starts at `at` and ends where the summary's span ends.
      const end = pos(fix.at.endLine, fix.at.endColumn);
      const comment = text.slice(at, end);
      if (fix.action === "point") {
        const m = DIRECTIVE.exec(comment);
        if (!m) continue;
        const from = at + m.index + m[1]!.length;
        edits.push({ start: from, end: from + m[2]!.length, text: targetFrom(file, fix.target!) });
        pointed++;
        continue;
      }
      // Remove: the comment's whole lines when nothing else is on them, else the comment and the space before it.
      const lineStart = text.lastIndexOf("\n", at - 1) + 1;
      const lineEnd = text.indexOf("\n", end);
      const before = text.slice(lineStart, at);
      const after = text.slice(end, lineEnd < 0 ? text.length : lineEnd);
      if (/^[ \t]*$/.test(before) && /^[ \t]*$/.test(after))
        edits.push({ start: lineStart, end: lineEnd < 0 ? text.length : lineEnd + 1, text: "" });
      else edits.push({ start: at - /[ \t]*$/.exec(before)![0].length, end, text: "" });
      removed++;
    }
    if (edits.length === 0) continue;
    // From the end, so earlier positions stay where they were.
    for (const e of edits.sort((a, b) => b.start - a.start)) source.replaceText([e.start, e.end], e.text);
    await source.save();
    files.push(file);
  }
  return { files: files.sort(), added, pointed, removed };
}
