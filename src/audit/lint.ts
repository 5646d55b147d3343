/**
 * Per-module findings and summaries, from one ESLint run with the plugin: the rules report exactly what they report
 * in the editor, and a collecting rule (never reporting) takes each module's `summarizeModule` from the same
 * inventory, through `onLockFacts` (src/core/summary.ts is the seam). ESLint's Node API also gives the standard
 * result objects that formatters read.
 */
import { ESLint, type Linter, type Rule } from "eslint";
import plugin from "../index.js";
import { mayHoldLocks, onLockFacts } from "../rule-kit/inventory.js";
import { getVocabulary } from "../core/model/settings.js";
import { summarizeModule, type ModuleSummary } from "../core/facts/summary.js";
import { sharpenWith } from "../core/reading/named-types.js";
import { AuditError, type SourceModule } from "./discover.js";
import { ownMessages, withoutEslintEnv } from "./own-findings.js";
import type { ModuleLintOptions, ProjectLintConfig } from "./project-config.js";

export type ConfigName = "recommended" | "strict";

export interface LintedModule {
  readonly module: SourceModule;
  /** ESLint's result, its messages narrowed to what the audit owns (own-findings.ts). */
  readonly result: ESLint.LintResult;
  readonly summary: ModuleSummary;
}

async function loadTsParser(): Promise<Linter.Parser> {
  try {
    const mod = (await import("@typescript-eslint/parser")) as { default?: Linter.Parser } & Linter.Parser;
    return mod.default ?? mod;
  } catch {
    throw new AuditError("locks-audit needs @typescript-eslint/parser to read TypeScript: npm install --save-dev @typescript-eslint/parser");
  }
}

const EMPTY: ModuleSummary = { locks: [], recoveries: [] };

function emptyResult(filePath: string): ESLint.LintResult {
  return {
    filePath, messages: [], suppressedMessages: [], errorCount: 0, fatalErrorCount: 0, warningCount: 0,
    fixableErrorCount: 0, fixableWarningCount: 0, usedDeprecatedRules: [],
  };
}

/**
 * Lints `modules` in order, calling `progress` after each. `settings` are flat-config `settings` that override the
 * project's (`settings.locks`); `project` gives each module the project's own `settings.locks` and
 * `reportUnusedDisableDirectives` (project-config.ts). Modules with the same options share one ESLint instance.
 */
export async function lintModules(
  root: string,
  modules: readonly SourceModule[],
  options: {
    config: ConfigName;
    settings?: Record<string, unknown>;
    project?: ProjectLintConfig;
    progress?: (done: number) => void;
    skipLockFree?: boolean;
    /** `--types`: the parser takes its ASTs and types from these programs, so recognizers can read receivers' types. */
    programs?: readonly import("typescript").Program[];
  },
): Promise<LintedModule[]> {
  const summaries = new Map<string, ModuleSummary>();
  const collect: Rule.RuleModule = {
    meta: { type: "suggestion", schema: [], docs: { description: "Collect each module's lock summary for locks-audit" } },
    create(context) {
      const filename = context.filename;
      return onLockFacts(context as never, (facts) => {
        summaries.set(filename, summarizeModule(context.sourceCode as never, facts, getVocabulary(context.settings)));
      }) as Rule.RuleListener;
    },
  };
  const parser = await loadTsParser();
  for (const program of options.programs ?? []) sharpenWith(program);
  const programs = options.programs ? { programs: [...options.programs] } : {};
  const instances = new Map<string, ESLint>();
  const eslintFor = (own: ModuleLintOptions): ESLint => {
    const key = JSON.stringify([own.unused, own.settings ?? null]);
    let eslint = instances.get(key);
    if (eslint) return eslint;
    eslint = new ESLint({
      cwd: root,
      overrideConfigFile: true,
      ignore: false,
      overrideConfig: [
        {
          files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs}"],
          languageOptions: { parser, sourceType: "module", parserOptions: { ecmaFeatures: { jsx: true }, ...programs } },
          // Unused directives are reported at the project's severity and narrowed to locks/* ones (own-findings.ts):
          // the project's other disable comments name rules this run does not load.
          linterOptions: { reportUnusedDisableDirectives: own.unused === 0 ? "off" : "warn" },
        },
        { files: ["**/*.cjs"], languageOptions: { parser, sourceType: "commonjs", ...(options.programs ? { parserOptions: programs } : {}) } },
        plugin.configs[options.config] as Linter.Config,
        { plugins: { "locks-audit": { rules: { collect } } }, rules: { "locks-audit/collect": "error" } },
        ...(own.settings ? [{ settings: own.settings }] : []),
        ...(options.settings ? [{ settings: options.settings }] : []),
      ],
    });
    instances.set(key, eslint);
    return eslint;
  };
  const out: LintedModule[] = [];
  for (const module of modules) {
    // A module with no call any recognizer handles gives no rule anything to report: not parsed (mayHoldLocks).
    if (options.skipLockFree !== false && !mayHoldLocks(module.text)) {
      out.push({ module, result: emptyResult(module.path), summary: EMPTY });
      options.progress?.(out.length);
      continue;
    }
    const own = options.project ? await options.project.optionsFor(module.path) : { unused: 0 as const };
    let result: ESLint.LintResult | undefined;
    try {
      [result] = await eslintFor(own).lintText(withoutEslintEnv(module.text), { filePath: module.path, warnIgnored: false });
    } catch (error) {
      // The one way a rule throws on purpose: settings.locks that are not what the rules accept.
      const message = (error as Error).message.split("\n")[0]!;
      const at = message.indexOf("eslint-plugin-locks: settings.locks");
      if (at >= 0) throw new AuditError(`invalid settings.locks for ${module.rel}: ${message.slice(at)}`);
      throw error;
    }
    if (!result) continue;
    const messages = ownMessages(result.messages, own.unused);
    out.push({
      module,
      result: { ...result, messages, errorCount: messages.filter((m) => m.severity === 2).length, warningCount: messages.filter((m) => m.severity === 1).length },
      summary: summaries.get(module.path) ?? EMPTY,
    });
    options.progress?.(out.length);
  }
  return out;
}
