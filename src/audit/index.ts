/**
 * `locks-audit` as a function: discover the project, lint every module with the plugin, pair across modules,
 * optionally keep only what a diff touches, and format. The CLI (cli.ts) is a thin shell around `runAudit`.
 */
import { relative, resolve } from "node:path";
import { discoverProject, AuditError } from "./discover.js";
import { lintModules, type Concurrency, type ConfigName } from "./lint.js";
import { pairAcrossModules, type AuditResult } from "./pair.js";
import { changedLines, filterByDiff } from "./diff.js";
import { formatText } from "./formats/text.js";
import { formatJson } from "./formats/json.js";
import { formatMarkdown } from "./formats/markdown.js";
import { formatSarif } from "./formats/sarif.js";
import { progressBar } from "./progress.js";
import { projectLintConfig } from "./project-config.js";
import { readUniqueKeys } from "./schemas.js";
import { cacheFile, LintCache } from "./cache.js";
import { applyDirectiveFixes, type FixSummary } from "./fix.js";
import { ESLint } from "eslint";
import { createRequire } from "node:module";
import plugin from "../index.js";

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
  /** `settings` that override the project's ESLint config's (`settings.locks`). */
  readonly settings?: Record<string, unknown>;
  /**
   * The project's ESLint config, read for `settings.locks` and `reportUnusedDisableDirectives`: undefined to look
   * it up as ESLint does (from each module's folder up), a path to use that file, false to read none.
   */
  readonly eslintConfig?: string | false;
  /** Exit 1 only when more than this many error findings remain (default 0). */
  readonly maxFindings?: number;
  /** Exit 1 when more than this many warnings remain (default: warnings never fail the audit, as in ESLint). */
  readonly maxWarnings?: number;
  readonly progress?: boolean;
  /** Parse every module, also those `mayHoldLocks` rules out (for measurements and the equivalence test). */
  readonly parseAll?: boolean;
  /** Build a TypeScript program so receivers' types sharpen what syntax cannot tell (slower: about a `tsc`). */
  readonly types?: boolean;
  /** Keep each module's lint between runs (cache.ts); not with `types`. */
  readonly cache?: boolean;
  /** The cache file, or a folder for `.locks-audit-cache` (default: that file in `cwd`). */
  readonly cacheLocation?: string;
  /** ESLint's worker threads: "off" (default), "auto" (ESLint's choice) or a count; not with `types`. */
  readonly concurrency?: Concurrency;
  /**
   * Write `locks-recovered-by` directives at the claims the audit paired with a recovery in another module, and
   * point or remove false ones (fix.ts); the report is then the audit of the fixed files.
   */
  readonly fix?: boolean;
}

/**
 * What `--cache` did: the file, how many module lints it gave (`hits`) or had to run (`misses`; a module that imports
 * lock helpers is linted twice, without and with them), and the modules whose lint ran, relative to the project.
 */
export interface CacheUse {
  readonly file: string;
  readonly hits: number;
  readonly misses: number;
  readonly linted: readonly string[];
}

function parserVersion(): string {
  try {
    return (createRequire(import.meta.url)("@typescript-eslint/parser/package.json") as { version: string }).version;
  } catch {
    return "";
  }
}

export function format(result: AuditResult, name: Format): string {
  switch (name) {
    case "json":
      return formatJson(result);
    case "sarif":
      return formatSarif(result);
    case "markdown":
      return formatMarkdown(result);
    default:
      return formatText(result);
  }
}

/**
 * The exit status a CI step reads: 1 when more error findings remain than `maxFindings` allows (0 by default), or
 * more warnings than `maxWarnings` (unlimited by default); else 0. Findings silenced with a disable comment, and
 * findings another module answers, are not findings.
 */
export function exitCodeOf(
  result: AuditResult,
  options: Pick<AuditOptions, "maxFindings" | "maxWarnings"> = {},
): 0 | 1 {
  const errors = result.findings.filter((f) => f.severity === "error").length;
  const warnings = result.findings.length - errors;
  if (errors > (options.maxFindings ?? 0)) return 1;
  if (options.maxWarnings !== undefined && options.maxWarnings >= 0 && warnings > options.maxWarnings) return 1;
  return 0;
}

/**
 * Runs the audit. `exitCode`: see `exitCodeOf`. Usage and project errors throw `AuditError` (exit 2). `warnings`
 * are sentences for stderr (the project's ESLint config could not be loaded, say).
 */
export async function runAudit(options: AuditOptions = {}): Promise<{
  result: AuditResult;
  output: string;
  exitCode: 0 | 1;
  warnings: string[];
  cache?: CacheUse;
  fixed?: FixSummary;
}> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const project = discoverProject({ cwd, ...(options.project !== undefined ? { project: options.project } : {}) });
  // Read `--diff` before linting: a bad ref should fail fast.
  const changed = options.diff !== undefined ? changedLines(project.root, options.diff) : undefined;
  const bar = options.progress === false ? { tick() {}, end() {} } : progressBar(project.modules.length);
  if (options.cacheLocation !== undefined && !options.cache) throw new AuditError("--cache-location needs --cache");
  if (options.cache && options.types)
    throw new AuditError(
      "--cache cannot be used with --types: a module's lint then reads the types of the whole project",
    );
  if (
    options.types &&
    options.concurrency !== undefined &&
    options.concurrency !== "off" &&
    options.concurrency !== 1
  ) {
    throw new AuditError(
      "--concurrency cannot be used with --types: the TypeScript program cannot be handed to worker threads",
    );
  }
  const cache = options.cache
    ? new LintCache(cacheFile(cwd, options.cacheLocation), [plugin.meta.version, ESLint.version, parserVersion()])
    : undefined;
  const warnings: string[] = [];
  const eslintConfig = projectLintConfig(
    project.root,
    typeof options.eslintConfig === "string" ? resolve(cwd, options.eslintConfig) : options.eslintConfig,
  );
  const linted = await lintModules(project.root, project.modules, {
    config: options.config ?? "recommended",
    ...(options.settings ? { settings: options.settings } : {}),
    project: eslintConfig,
    progress: (n) => bar.tick(n),
    skipLockFree: !options.parseAll,
    resolveModule: (specifier, from) => project.resolveModule(specifier, from),
    importsOf: (path) => project.importsOf(path),
    recoveredElsewhere: (modules) => {
      const recovered = new Map<string, number[]>();
      pairAcrossModules(project, modules, recovered);
      return recovered;
    },
    ...(options.types ? { programs: project.createPrograms() } : {}),
    uniqueKeys: readUniqueKeys(project.root),
    ...(cache ? { cache } : {}),
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    warn: (sentence) => warnings.push(sentence),
  });
  bar.end();
  cache?.save();
  let result = pairAcrossModules(project, linted);
  if (options.paths && options.paths.length > 0) {
    const wanted = options.paths.map((p) => resolve(cwd, p));
    const inside = (file: string) => {
      const abs = resolve(project.root, file);
      return wanted.some((w) => abs === w || abs.startsWith(`${w}/`));
    };
    for (const w of wanted) {
      if (!project.modules.some((m) => m.path === w || m.path.startsWith(`${w}/`)))
        throw new AuditError(`${w} is not a module of the project (or holds none)`);
    }
    result = {
      ...result,
      locks: result.locks.filter((l) => inside(l.file)),
      findings: result.findings.filter((f) => inside(f.file)),
      answered: result.answered.filter((f) => inside(f.file)),
      silenced: result.silenced.filter((f) => inside(f.file)),
    };
  }
  if (changed) result = filterByDiff(result, changed);
  // Only the directives of the locks the report keeps (paths, --diff).
  const kept = new Set(
    result.locks.flatMap((l) => [
      `${l.file}:${l.acquire.line}:${l.acquire.column}`,
      ...(l.directive ? [`${l.file}:${l.directive.at.line}:${l.directive.at.column}`] : []),
    ]),
  );
  result = {
    ...result,
    directives: result.directives.filter((d) => kept.has(`${d.file}:${d.at.line}:${d.at.column}`)),
  };
  if (options.fix) {
    const fixed = await applyDirectiveFixes(project.root, result.directives);
    // The report is that of the fixed project: a false directive removed may uncover a claim nothing recovers.
    const after = fixed.files.length > 0 ? await runAudit({ ...options, fix: false }) : undefined;
    if (after) return { ...after, fixed };
    return { ...finish(result), fixed };
  }
  return finish(result);

  function finish(result: AuditResult) {
    return {
      result,
      output: format(result, options.format ?? "text"),
      exitCode: exitCodeOf(result, options),
      warnings: [...(eslintConfig.warning !== undefined ? [eslintConfig.warning] : []), ...warnings],
      ...(cache
        ? {
            cache: {
              file: cache.file,
              hits: cache.hits,
              misses: cache.misses,
              linted: [...cache.linted].map((p) => relative(project.root, p)).sort(),
            },
          }
        : {}),
    };
  }
}
