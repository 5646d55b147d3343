/**
 * `locks-audit` as a function: discover the project, lint every module with the plugin, pair across modules,
 * optionally keep only what a diff touches, and format. The CLI (cli.ts) is a thin shell around `runAudit`.
 */
import { resolve } from "node:path";
import { discoverProject, AuditError } from "./discover.js";
import { lintModules, type ConfigName } from "./lint.js";
import { pairAcrossModules, type AuditResult } from "./pair.js";
import { changedLines, filterByDiff } from "./diff.js";
import { formatText } from "./formats/text.js";
import { formatJson } from "./formats/json.js";
import { formatMarkdown } from "./formats/markdown.js";
import { formatSarif } from "./formats/sarif.js";
import { progressBar } from "./progress.js";

export { AuditError };
export type { AuditResult };
export type Format = "text" | "json" | "sarif" | "markdown";
export const FORMATS: readonly Format[] = ["text", "json", "sarif", "markdown"];

export interface AuditOptions {
  readonly cwd?: string;
  readonly project?: string;
  readonly paths?: readonly string[];
  readonly format?: Format;
  readonly diff?: string;
  readonly config?: ConfigName;
  readonly settings?: Record<string, unknown>;
  readonly progress?: boolean;
  /** Parse every module, also those `mayHoldLocks` rules out (for measurements and the equivalence test). */
  readonly parseAll?: boolean;
  /** Build a TypeScript program so receivers' types sharpen what syntax cannot tell (slower: about a `tsc`). */
  readonly types?: boolean;
}

export function format(result: AuditResult, name: Format): string {
  switch (name) {
    case "json": return formatJson(result);
    case "sarif": return formatSarif(result);
    case "markdown": return formatMarkdown(result);
    default: return formatText(result);
  }
}

/** Runs the audit. `exitCode`: 0 nothing unanswered, 1 findings remain. Usage and project errors throw `AuditError` (exit 2). */
export async function runAudit(options: AuditOptions = {}): Promise<{ result: AuditResult; output: string; exitCode: 0 | 1 }> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const project = discoverProject({ cwd, ...(options.project !== undefined ? { project: options.project } : {}) });
  // Read `--diff` before linting: a bad ref should fail fast.
  const changed = options.diff !== undefined ? changedLines(project.root, options.diff) : undefined;
  const bar = options.progress === false ? { tick() {}, end() {} } : progressBar(project.modules.length);
  const linted = await lintModules(project.root, project.modules, {
    config: options.config ?? "recommended",
    ...(options.settings ? { settings: options.settings } : {}),
    progress: (n) => bar.tick(n),
    skipLockFree: !options.parseAll,
    ...(options.types ? { program: project.createProgram() } : {}),
  });
  bar.end();
  let result = pairAcrossModules(project, linted);
  if (options.paths && options.paths.length > 0) {
    const wanted = options.paths.map((p) => resolve(cwd, p));
    const inside = (file: string) => {
      const abs = resolve(project.root, file);
      return wanted.some((w) => abs === w || abs.startsWith(`${w}/`));
    };
    for (const w of wanted) {
      if (!project.modules.some((m) => m.path === w || m.path.startsWith(`${w}/`))) throw new AuditError(`${w} is not a module of the project (or holds none)`);
    }
    result = {
      ...result,
      locks: result.locks.filter((l) => inside(l.file)),
      findings: result.findings.filter((f) => inside(f.file)),
      answered: result.answered.filter((f) => inside(f.file)),
    };
  }
  if (changed) result = filterByDiff(result, changed);
  return { result, output: format(result, options.format ?? "text"), exitCode: result.findings.length > 0 ? 1 : 0 };
}
