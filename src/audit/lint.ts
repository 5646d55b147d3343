/**
 * Per-module findings and summaries, from ESLint runs with the plugin: the rules report exactly what they report in
 * the editor, and a collecting rule (lint-options.ts) hands back each module's `summarizeModule` from the same
 * inventory, through `onLockFacts` (src/core/facts/summary.ts is the seam). ESLint's Node API also gives the standard
 * result objects that formatters read.
 *
 * Modules are linted in batches, one configuration per batch: first every module that may hold a lock, then those
 * that import lock helpers (with them), then those whose claims another module recovers (with those lines). What
 * each module is given travels in the batch's settings, by file, so one ESLint instance lints the whole batch, in
 * this thread or (`concurrency`) in ESLint's worker threads.
 */
import { ESLint } from "eslint";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { mayHoldLocks } from "../rule-kit/inventory.js";
import type { ModuleSummary } from "../core/facts/summary.js";
import { sharpenWith } from "../core/reading/named-types.js";
import { AuditError, type SourceModule } from "./discover.js";
import { ownMessages } from "./own-findings.js";
import type { importBindings, ImportedHelpers } from "../core/summaries/imported-helpers.js";
import type { heldBindings } from "../core/reading/exports.js";
import { heldImports, helperIndex, importedHelpers } from "../core/summaries/module-helpers.js";
import type { ModuleLintOptions, ProjectLintConfig } from "./project-config.js";
import type { LintCache } from "./cache.js";
import {
  lintOptions,
  takeCollected,
  type Concurrency,
  type ConfigName,
  type LintJob,
  type ModuleGiven,
} from "./lint-options.js";

export type { ConfigName, Concurrency };

export interface LintedModule {
  readonly module: SourceModule;
  /** ESLint's result, its messages narrowed to what the audit owns (own-findings.ts). */
  readonly result: ESLint.LintResult;
  readonly summary: ModuleSummary;
}

const EMPTY: ModuleSummary = { locks: [], recoveries: [] };

function emptyResult(filePath: string): ESLint.LintResult {
  return {
    filePath,
    messages: [],
    suppressedMessages: [],
    errorCount: 0,
    fatalErrorCount: 0,
    warningCount: 0,
    fixableErrorCount: 0,
    fixableWarningCount: 0,
    usedDeprecatedRules: [],
  };
}

/** One module of a batch and what it is given. */
interface BatchItem {
  readonly module: SourceModule;
  readonly helpers?: readonly ImportedHelpers[];
  readonly recovered?: readonly number[];
}

/**
 * The one way a rule throws on purpose: settings.locks that are not what the rules accept. `rel`: the module, when
 * known; from a worker thread, ESLint's "Occurred while linting <file>" line names it.
 */
function settingsError(error: unknown, root: string, rel?: string): never {
  const full = (error as Error).message;
  const message = full.split("\n")[0]!;
  const at = message.indexOf("eslint-plugin-locks: settings.locks");
  if (at < 0) throw error;
  const file = rel ?? /^Occurred while linting (.+?)(?::\d+)?$/m.exec(full)?.[1];
  throw new AuditError(
    `invalid settings.locks${file !== undefined ? ` for ${rel ?? relative(root, file)}` : ""}: ${message.slice(at)}`,
  );
}

/**
 * Lints `modules`, calling `progress` as they are done. `settings` are flat-config `settings` that override the
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
    /** Resolves an import to a module of the project: given, imported lock helpers are followed across modules. */
    resolveModule?: (specifier: string, from: string) => string | undefined;
    /** The project modules a module imports (to parse a module that only calls imported helpers). */
    importsOf?: (path: string) => readonly string[];
    /**
     * Pairs the linted modules across the project and gives, per module, the lines of its claims recovered in
     * another module (src/audit/pair.ts): those modules are linted once more with them, so Q3 is asked of their
     * holders' writes as when the recovery is in the module.
     */
    recoveredElsewhere?: (linted: readonly LintedModule[]) => ReadonlyMap<string, readonly number[]>;
    /** The unique keys the project's schemas declare (src/audit/schemas.ts), given to every module. */
    uniqueKeys?: Readonly<Record<string, readonly (readonly string[])[]>>;
    /** `--cache` (cache.ts): lints kept from the last run, by everything each lint reads. Not with `programs`. */
    cache?: LintCache;
    /** ESLint's worker threads (its `concurrency` option): "off" (the default), "auto" or a count. Not with `programs`. */
    concurrency?: Concurrency;
    /** A sentence for stderr, said once per run (ESLint's advice on its worker threads). */
    warn?: (sentence: string) => void;
  },
): Promise<LintedModule[]> {
  const summaries = new Map<string, ModuleSummary>();
  const bindings = new Map<string, ReturnType<typeof importBindings>>();
  // What each module's exports hold of its imports (`export class db { static locks = locks }`): see helperIndex.
  const held = new Map<string, ReturnType<typeof heldBindings>>();
  for (const program of options.programs ?? []) sharpenWith(program);
  const concurrency = options.programs ? "off" : (options.concurrency ?? "off");
  const uniqueKeys = options.uniqueKeys && Object.keys(options.uniqueKeys).length > 0 ? options.uniqueKeys : undefined;
  const cache = options.programs ? undefined : options.cache;
  let done = 0;
  const tick = () => options.progress?.(++done);
  // The worker threads read each batch's job from a file (lint-worker.ts).
  const jobs = concurrency === "off" ? undefined : mkdtempSync(join(tmpdir(), "locks-audit-"));
  let batches = 0;
  let poorConcurrency: string | undefined;

  /** Lints one group of modules with the same project options in one ESLint instance; results by path. */
  const run = async (job: LintJob, items: readonly BatchItem[]): Promise<Map<string, ESLint.LintResult>> => {
    const out = new Map<string, ESLint.LintResult>();
    if (jobs === undefined) {
      const eslint = new ESLint(await lintOptions(job, options.programs));
      for (const { module } of items) {
        try {
          const [result] = await eslint.lintText(module.text, { filePath: module.path, warnIgnored: false });
          if (result) out.set(module.path, result);
        } catch (error) {
          settingsError(error, root, module.rel);
        }
      }
      return out;
    }
    const file = join(jobs, `job-${batches++}.json`);
    writeFileSync(file, JSON.stringify(job));
    // ESLint warns, batch by batch, when its threads spent more time starting than linting: said once, at the end.
    const emit = process.emitWarning;
    process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
      const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
      if (type === "ESLintPoorConcurrencyWarning") poorConcurrency ??= String(warning);
      else (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
    }) as typeof process.emitWarning;
    let eslint: ESLint;
    try {
      // The instance keeps the emitter it was made with.
      eslint = await ESLint.fromOptionsModule(
        new URL(`./lint-worker.js?job=${encodeURIComponent(file)}`, import.meta.url),
      );
    } finally {
      process.emitWarning = emit;
    }
    try {
      for (const result of await eslint.lintFiles(items.map((i) => i.module.path))) out.set(result.filePath, result);
    } catch (error) {
      settingsError(error, root);
    }
    return out;
  };

  /** Lints `items` (from the cache where it has them); undefined for a module ESLint gave no result. */
  const lintBatch = async (items: readonly BatchItem[], counted = false): Promise<(LintedModule | undefined)[]> => {
    const out: (LintedModule | undefined)[] = new Array(items.length);
    const groups = new Map<string, { own: ModuleLintOptions; members: { index: number; key: string | undefined }[] }>();
    for (const [index, item] of items.entries()) {
      const { module, helpers, recovered } = item;
      const own = options.project ? await options.project.optionsFor(module.path) : { unused: 0 as const };
      // Everything this lint reads, for the cache; the plugin, ESLint and the parser are the cache file's own salt.
      const key = cache?.key([
        module.path,
        module.text,
        options.config,
        own,
        options.settings ?? null,
        helpers ?? null,
        recovered ?? null,
        uniqueKeys ?? null,
      ]);
      const hit = key !== undefined ? cache!.get(key, module.path) : undefined;
      if (hit) {
        summaries.set(module.path, hit.summary);
        bindings.set(module.path, hit.bindings);
        held.set(module.path, hit.held);
        out[index] = { module, result: hit.result, summary: hit.summary };
        if (counted) tick();
        continue;
      }
      const groupKey = JSON.stringify([own.unused, own.settings ?? null]);
      let group = groups.get(groupKey);
      if (!group) groups.set(groupKey, (group = { own, members: [] }));
      group.members.push({ index, key });
    }
    for (const { own, members } of groups.values()) {
      const files: Record<string, ModuleGiven> = {};
      for (const { index } of members) {
        const { module, helpers, recovered } = items[index]!;
        if (helpers || recovered)
          files[module.path] = {
            ...(helpers ? { locksImportedHelpers: helpers } : {}),
            ...(recovered ? { locksRecoveredElsewhere: recovered } : {}),
          };
      }
      const job: LintJob = {
        root,
        config: options.config,
        unused: own.unused,
        files,
        concurrency,
        ...(own.settings ? { ownSettings: own.settings } : {}),
        ...(options.settings ? { settings: options.settings } : {}),
        ...(uniqueKeys ? { uniqueKeys } : {}),
      };
      const results = await run(
        job,
        members.map((m) => items[m.index]!),
      );
      for (const { index, key } of members) {
        const { module } = items[index]!;
        const result = results.get(module.path);
        if (counted) tick();
        if (!result) continue;
        const collected = takeCollected(result);
        const summary = collected?.summary ?? EMPTY;
        summaries.set(module.path, summary);
        bindings.set(module.path, collected?.bindings ?? []);
        held.set(module.path, collected?.held ?? []);
        const messages = ownMessages(result.messages, own.unused);
        const linted: LintedModule = {
          module,
          result: {
            ...result,
            messages,
            errorCount: messages.filter((m) => m.severity === 2).length,
            warningCount: messages.filter((m) => m.severity === 1).length,
          },
          summary,
        };
        if (key !== undefined)
          cache!.set(key, {
            result: linted.result,
            summary,
            bindings: collected?.bindings ?? [],
            held: collected?.held ?? [],
          });
        out[index] = linted;
      }
    }
    return out;
  };

  try {
    // A module with no call any recognizer handles gives no rule anything to report: not parsed (mayHoldLocks).
    const parsed = modules.map((m) => options.skipLockFree === false || mayHoldLocks(m.text));
    for (const p of parsed) if (!p) tick();
    const first = await lintBatch(
      modules.filter((_, i) => parsed[i]).map((module) => ({ module })),
      true,
    );
    const out: LintedModule[] = [];
    let next = 0;
    for (const [i, module] of modules.entries()) {
      const linted = parsed[i] ? first[next++] : { module, result: emptyResult(module.path), summary: EMPTY };
      if (linted) out.push(linted);
    }
    const helpersGiven = new Map<string, readonly ImportedHelpers[]>();
    if (options.resolveModule) await followHelpers(out, helpersGiven, options.resolveModule);
    if (options.recoveredElsewhere) {
      const index = new Map(out.map((l, i) => [l.module.path, i]));
      const again: { i: number; item: BatchItem }[] = [];
      for (const [path, lines] of options.recoveredElsewhere(out)) {
        const i = index.get(path);
        if (i === undefined) continue;
        const helpers = helpersGiven.get(path);
        again.push({ i, item: { module: out[i]!.module, ...(helpers ? { helpers } : {}), recovered: lines } });
      }
      const linted = await lintBatch(again.map((a) => a.item));
      for (const [k, { i }] of again.entries()) if (linted[k]) out[i] = linted[k];
    }
    return out;
  } finally {
    if (jobs !== undefined) rmSync(jobs, { recursive: true, force: true });
    if (poorConcurrency !== undefined)
      options.warn?.(
        `ESLint's worker threads spent much of their time starting rather than linting ("${poorConcurrency}"): --concurrency off or fewer threads may be faster on this project and machine.`,
      );
  }

  async function followHelpers(
    out: LintedModule[],
    helpersGiven: Map<string, readonly ImportedHelpers[]>,
    resolveModule: (specifier: string, from: string) => string | undefined,
  ): Promise<void> {
    // Helpers across modules: a module that imports another's lock helpers is linted again with them, so its calls
    // are the helpers' ops (src/core/summaries/imported-helpers.ts). A helper wrapping an imported helper exports the
    // wrapped effects only after its own second lint, hence the rounds.
    const given = new Map<string, string>();
    const texts = new Map(modules.map((m) => [m.path, m.text]));
    for (let round = 0; round < 3; round++) {
      // Most projects export no lock helper at all: nothing to follow.
      if (![...summaries.values()].some((s) => s.helpers && s.helpers.length > 0)) break;
      const exportsOf = helperIndex({
        root,
        helpersOf: (path) => summaries.get(path)?.helpers,
        textOf: (path) => texts.get(path),
        heldOf: (path) => heldImports(bindings.get(path) ?? [], held.get(path) ?? []),
        resolve: resolveModule,
      });
      // A module left unparsed (no call any recognizer knows) may still call an imported helper (directly or through
      // a barrel re-exporting it): parse it now.
      const unparsed = [...out.entries()].filter(
        ([, l]) =>
          !bindings.has(l.module.path) && options.importsOf?.(l.module.path).some((p) => exportsOf(p).length > 0),
      );
      const parsedNow = await lintBatch(unparsed.map(([, l]) => ({ module: l.module })));
      for (const [k, [i]] of unparsed.entries()) if (parsedNow[k]) out[i] = parsedNow[k];
      const again: { i: number; item: BatchItem }[] = [];
      for (const [i, linted] of out.entries()) {
        const helpers = importedHelpers(linted.module.path, bindings.get(linted.module.path) ?? [], exportsOf, {
          resolve: resolveModule,
          root,
        });
        const key = JSON.stringify(helpers);
        if (helpers.length === 0 || given.get(linted.module.path) === key) continue;
        given.set(linted.module.path, key);
        helpersGiven.set(linted.module.path, helpers);
        again.push({ i, item: { module: linted.module, helpers } });
      }
      const linted = await lintBatch(again.map((a) => a.item));
      let changed = false;
      for (const [k, { i }] of again.entries()) {
        if (!linted[k]) continue;
        out[i] = linted[k];
        changed = true;
      }
      if (!changed) break;
    }
  }
}
