/**
 * Per-module findings and summaries, from one ESLint run with the plugin: the rules report exactly what they report
 * in the editor, and a collecting rule (never reporting) takes each module's `summarizeModule` from the same
 * inventory, through `onLockFacts` (src/core/summary.ts is the seam). ESLint's Node API also gives the standard
 * result objects that formatters read.
 */
import { ESLint, type Linter, type Rule } from "eslint";
import plugin from "../index.js";
import { mayHoldLocks, onLockFacts } from "../core/inventory.js";
import { getVocabulary } from "../core/settings.js";
import { summarizeModule, type ModuleSummary } from "../core/summary.js";
import { sharpenWith } from "../core/named-types.js";
import { AuditError, type SourceModule } from "./discover.js";

export type ConfigName = "recommended" | "strict";

export interface LintedModule {
  readonly module: SourceModule;
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

/** Lints `modules` in order, calling `progress` after each; `settings` are the flat config's `settings` (`settings.locks`). */
export async function lintModules(
  root: string,
  modules: readonly SourceModule[],
  options: {
    config: ConfigName;
    settings?: Record<string, unknown>;
    progress?: (done: number) => void;
    skipLockFree?: boolean;
    /** `--types`: the parser takes its ASTs and types from this program, so recognizers can read receivers' types. */
    program?: import("typescript").Program;
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
  if (options.program) sharpenWith(options.program);
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    ignore: false,
    overrideConfig: [
      {
        files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs}"],
        languageOptions: {
          parser, sourceType: "module",
          parserOptions: { ecmaFeatures: { jsx: true }, ...(options.program ? { programs: [options.program] } : {}) },
        },
        // The project's disable comments name its own rules, which this run does not load.
        linterOptions: { reportUnusedDisableDirectives: "off" },
      },
      { files: ["**/*.cjs"], languageOptions: { parser, sourceType: "commonjs", ...(options.program ? { parserOptions: { programs: [options.program] } } : {}) } },
      plugin.configs[options.config] as Linter.Config,
      { plugins: { "locks-audit": { rules: { collect } } }, rules: { "locks-audit/collect": "error" } },
      ...(options.settings ? [{ settings: options.settings }] : []),
    ],
  });
  const out: LintedModule[] = [];
  for (const module of modules) {
    // A module with no call any recognizer handles gives no rule anything to report: not parsed (mayHoldLocks).
    if (options.skipLockFree !== false && !mayHoldLocks(module.text)) {
      out.push({ module, result: emptyResult(module.path), summary: EMPTY });
      options.progress?.(out.length);
      continue;
    }
    const [result] = await eslint.lintText(module.text, { filePath: module.path, warnIgnored: false });
    if (!result) continue;
    out.push({ module, result, summary: summaries.get(module.path) ?? EMPTY });
    options.progress?.(out.length);
  }
  return out;
}

