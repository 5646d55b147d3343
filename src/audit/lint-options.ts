/**
 * The ESLint options of one batch of the audit's lint (lint.ts): the plugin's config, a collecting rule that hands
 * each module's summary back as a message, and what the audit gives each module of the batch. Everything a batch
 * needs is in a `LintJob`, a JSON value, so ESLint's worker threads can build the same options from it
 * (lint-worker.ts, loaded by `ESLint.fromOptionsModule`): with `--concurrency`, the rules run in the workers and the
 * summaries must come back in the results, the only thing a worker returns.
 */
import type { ESLint, Linter, Rule } from "eslint";
import plugin from "../index.js";
import { onLockFacts } from "../rule-kit/inventory.js";
import { getVocabulary } from "../core/model/settings.js";
import { summarizeModule, type ModuleSummary } from "../core/facts/summary.js";
import { importBindings, type ImportedHelpers } from "../core/summaries/imported-helpers.js";
import { heldBindings } from "../core/reading/exports.js";
import { withoutEslintEnv } from "./own-findings.js";
import { AuditError } from "./discover.js";

export type ConfigName = "recommended" | "strict";
export type Concurrency = "off" | "auto" | number;

/** What the audit gives one module beyond its text: imported lock helpers, claim lines recovered elsewhere. */
export interface ModuleGiven {
  readonly locksImportedHelpers?: readonly ImportedHelpers[];
  readonly locksRecoveredElsewhere?: readonly number[];
}

export interface LintJob {
  readonly root: string;
  readonly config: ConfigName;
  /** The project's `reportUnusedDisableDirectives` for these modules: 0 off, else reported as warnings. */
  readonly unused: 0 | 1 | 2;
  /** The project's `settings.locks` for these modules, then the audit's `--settings`. */
  readonly ownSettings?: Record<string, unknown>;
  readonly settings?: Record<string, unknown>;
  readonly uniqueKeys?: Readonly<Record<string, readonly (readonly string[])[]>>;
  /** By absolute path: what each module of the batch is given (none for a module not named). */
  readonly files: Readonly<Record<string, ModuleGiven>>;
  readonly concurrency: Concurrency;
}

/** What the collecting rule hands back for one module. */
export interface Collected {
  readonly summary: ModuleSummary;
  readonly bindings: ReturnType<typeof importBindings>;
  readonly held: ReturnType<typeof heldBindings>;
}

/** The collecting rule's id: its one message per module is the module's `Collected`, as JSON. */
export const COLLECT_RULE = "locks-audit/collect";

const collect: Rule.RuleModule = {
  meta: { type: "suggestion", schema: [], docs: { description: "Collect each module's lock summary for locks-audit" } },
  create(context) {
    return onLockFacts(context as never, (facts) => {
      const collected: Collected = {
        summary: summarizeModule(context.sourceCode as never, facts, getVocabulary(context.settings)),
        bindings: importBindings(context.sourceCode.ast as never),
        held: heldBindings(context.sourceCode.ast as never),
      };
      context.report({ loc: { line: 1, column: 0 }, message: JSON.stringify(collected) });
    }) as Rule.RuleListener;
  },
};

/**
 * `/* eslint-env *\/` comments are errors under ESLint 10 and a warning on stderr under ESLint 9; the audit sets no
 * globals, so they are made ordinary comments in the text it lints (own-findings.ts), never in the file.
 */
const text: Linter.Processor = {
  meta: { name: "locks-audit/text" },
  supportsAutofix: true,
  preprocess: (source) => [withoutEslintEnv(source)],
  postprocess: (messages) => messages[0] ?? [],
};

async function loadTsParser(): Promise<Linter.Parser> {
  try {
    const mod = (await import("@typescript-eslint/parser")) as { default?: Linter.Parser } & Linter.Parser;
    return mod.default ?? mod;
  } catch {
    throw new AuditError(
      "locks-audit needs @typescript-eslint/parser to read TypeScript: npm install --save-dev @typescript-eslint/parser",
    );
  }
}

/** The ESLint options for `job`; `programs` (`--types`, never with worker threads) give the parser its ASTs. */
export async function lintOptions(
  job: LintJob,
  programs?: readonly import("typescript").Program[],
): Promise<ESLint.Options> {
  const parser = await loadTsParser();
  const parserPrograms = programs ? { programs: [...programs] } : {};
  const uniqueKeys = job.uniqueKeys && Object.keys(job.uniqueKeys).length > 0 ? job.uniqueKeys : undefined;
  return {
    cwd: job.root,
    overrideConfigFile: true,
    ignore: false,
    errorOnUnmatchedPattern: false,
    concurrency: job.concurrency,
    overrideConfig: [
      {
        files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs}"],
        languageOptions: {
          parser,
          sourceType: "module",
          parserOptions: { ecmaFeatures: { jsx: true }, ...parserPrograms },
        },
        // Unused directives are reported at the project's severity and narrowed to locks/* ones (own-findings.ts):
        // the project's other disable comments name rules this run does not load.
        linterOptions: { reportUnusedDisableDirectives: job.unused === 0 ? "off" : "warn" },
      },
      {
        files: ["**/*.cjs"],
        languageOptions: { parser, sourceType: "commonjs", ...(programs ? { parserOptions: parserPrograms } : {}) },
      },
      { files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}"], processor: text },
      plugin.configs[job.config] as Linter.Config,
      { plugins: { "locks-audit": { rules: { collect } } }, rules: { [COLLECT_RULE]: "error" } },
      // Every module it parses is read whole: a sweeper or a helper module can answer another module's lock.
      { settings: { locksAllModules: true } },
      ...(job.ownSettings ? [{ settings: job.ownSettings }] : []),
      ...(job.settings ? [{ settings: job.settings }] : []),
      { settings: { locksAuditFiles: job.files } },
      ...(uniqueKeys ? [{ settings: { locksUniqueKeys: uniqueKeys } }] : []),
    ],
  };
}

/** The collecting rule's message in `result`, read and taken out; undefined where the module gave none. */
export function takeCollected(result: ESLint.LintResult): Collected | undefined {
  let found: Collected | undefined;
  const keep = (list: Linter.LintMessage[]) =>
    list.filter((m) => {
      if (m.ruleId !== COLLECT_RULE) return true;
      found = JSON.parse(m.message) as Collected;
      return false;
    });
  result.messages = keep(result.messages);
  result.suppressedMessages = keep(
    result.suppressedMessages as Linter.LintMessage[],
  ) as typeof result.suppressedMessages;
  return found;
}
