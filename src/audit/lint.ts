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
import { importBindings, type ImportedHelpers } from "../core/summaries/modules.js";
import { heldBindings } from "../core/reading/exports.js";
import type { ExportedHelper } from "../core/model/model.js";
import { relative } from "node:path";
import type { ModuleLintOptions, ProjectLintConfig } from "./project-config.js";
import type { LintCache } from "./cache.js";

export type ConfigName = "recommended" | "strict";

/** ESLint instances kept for modules linted with other modules' helpers or recovered lines (see `eslintFor`). */
const MAX_SPECIFIC_INSTANCES = 8;

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
  },
): Promise<LintedModule[]> {
  const summaries = new Map<string, ModuleSummary>();
  const bindings = new Map<string, ReturnType<typeof importBindings>>();
  // What each module's exports hold of its imports (`export class db { static locks = locks }`): see helperIndex.
  const held = new Map<string, ReturnType<typeof heldBindings>>();
  const collect: Rule.RuleModule = {
    meta: { type: "suggestion", schema: [], docs: { description: "Collect each module's lock summary for locks-audit" } },
    create(context) {
      const filename = context.filename;
      return onLockFacts(context as never, (facts) => {
        summaries.set(filename, summarizeModule(context.sourceCode as never, facts, getVocabulary(context.settings)));
        bindings.set(filename, importBindings(context.sourceCode.ast as never));
        held.set(filename, heldBindings(context.sourceCode.ast as never));
      }) as Rule.RuleListener;
    },
  };
  const parser = await loadTsParser();
  for (const program of options.programs ?? []) sharpenWith(program);
  const programs = options.programs ? { programs: [...options.programs] } : {};
  const instances = new Map<string, ESLint>();
  /** The instance of the first module's options (most modules share it); never dropped. */
  let firstKey: string | undefined;
  const uniqueKeys = options.uniqueKeys && Object.keys(options.uniqueKeys).length > 0 ? options.uniqueKeys : undefined;
  const eslintFor = (own: ModuleLintOptions, helpers?: readonly ImportedHelpers[], recovered?: readonly number[]): ESLint => {
    const key = JSON.stringify([own.unused, own.settings ?? null, helpers ?? null, recovered ?? null]);
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
        // Every module it parses is read whole: a sweeper or a helper module can answer another module's lock.
        { settings: { locksAllModules: true } },
        ...(own.settings ? [{ settings: own.settings }] : []),
        ...(options.settings ? [{ settings: options.settings }] : []),
        ...(helpers ? [{ settings: { locksImportedHelpers: helpers } }] : []),
        ...(recovered ? [{ settings: { locksRecoveredElsewhere: recovered } }] : []),
        ...(uniqueKeys ? [{ settings: { locksUniqueKeys: uniqueKeys } }] : []),
      ],
    });
    // An instance keeps its configuration and the last file it linted: those made for one module's helpers or
    // recovered lines are seldom asked for again, so only a few are kept (without the bound, a 20,000-module
    // project held thousands of them).
    if (helpers || recovered) {
      for (const k of instances.keys()) {
        if (instances.size < MAX_SPECIFIC_INSTANCES + 1) break;
        if (k !== firstKey) instances.delete(k);
      }
    }
    firstKey ??= key;
    instances.set(key, eslint);
    return eslint;
  };
  const cache = options.programs ? undefined : options.cache;
  const lintOne = async (module: SourceModule, helpers?: readonly ImportedHelpers[], recovered?: readonly number[]): Promise<LintedModule | undefined> => {
    const own = options.project ? await options.project.optionsFor(module.path) : { unused: 0 as const };
    // Everything this lint reads, for the cache; the plugin, ESLint and the parser are the cache file's own salt.
    const key = cache?.key([module.path, module.text, options.config, own, options.settings ?? null, helpers ?? null, recovered ?? null, uniqueKeys ?? null]);
    const hit = key !== undefined ? cache!.get(key, module.path) : undefined;
    if (hit) {
      summaries.set(module.path, hit.summary);
      bindings.set(module.path, hit.bindings);
      held.set(module.path, hit.held);
      return { module, result: hit.result, summary: hit.summary };
    }
    let result: ESLint.LintResult | undefined;
    try {
      [result] = await eslintFor(own, helpers, recovered).lintText(withoutEslintEnv(module.text), { filePath: module.path, warnIgnored: false });
    } catch (error) {
      // The one way a rule throws on purpose: settings.locks that are not what the rules accept.
      const message = (error as Error).message.split("\n")[0]!;
      const at = message.indexOf("eslint-plugin-locks: settings.locks");
      if (at >= 0) throw new AuditError(`invalid settings.locks for ${module.rel}: ${message.slice(at)}`);
      throw error;
    }
    if (!result) return undefined;
    const messages = ownMessages(result.messages, own.unused);
    const linted: LintedModule = {
      module,
      result: { ...result, messages, errorCount: messages.filter((m) => m.severity === 2).length, warningCount: messages.filter((m) => m.severity === 1).length },
      summary: summaries.get(module.path) ?? EMPTY,
    };
    if (key !== undefined) cache!.set(key, { result: linted.result, summary: linted.summary, bindings: bindings.get(module.path) ?? [], held: held.get(module.path) ?? [] });
    return linted;
  };
  const out: LintedModule[] = [];
  const helpersGiven = new Map<string, readonly ImportedHelpers[]>();
  for (const module of modules) {
    // A module with no call any recognizer handles gives no rule anything to report: not parsed (mayHoldLocks).
    if (options.skipLockFree !== false && !mayHoldLocks(module.text)) {
      out.push({ module, result: emptyResult(module.path), summary: EMPTY });
      options.progress?.(out.length);
      continue;
    }
    const linted = await lintOne(module);
    if (!linted) continue;
    out.push(linted);
    options.progress?.(out.length);
  }
  if (options.resolveModule) await followHelpers(options.resolveModule);
  if (options.recoveredElsewhere) {
    const index = new Map(out.map((l, i) => [l.module.path, i]));
    for (const [path, lines] of options.recoveredElsewhere(out)) {
      const i = index.get(path);
      if (i === undefined) continue;
      const again = await lintOne(out[i]!.module, helpersGiven.get(path), lines);
      if (again) out[i] = again;
    }
  }
  return out;

  async function followHelpers(resolveModule: (specifier: string, from: string) => string | undefined): Promise<void> {
    // Helpers across modules: a module that imports another's lock helpers is linted again with them, so its calls
    // are the helpers' ops (src/core/summaries/modules.ts). A helper wrapping an imported helper exports the wrapped
    // effects only after its own second lint, hence the rounds.
    const given = new Map<string, string>();
    const texts = new Map(modules.map((m) => [m.path, m.text]));
    for (let round = 0; round < 3; round++) {
      // Most projects export no lock helper at all: nothing to follow.
      if (![...summaries.values()].some((s) => s.helpers && s.helpers.length > 0)) break;
      const exportsOf = helperIndex(summaries, resolveModule, texts, root, (path) => heldImports(path, bindings, held));
      let changed = false;
      // A module left unparsed (no call any recognizer knows) may still call an imported helper (directly or through
      // a barrel re-exporting it): parse it now.
      for (const [i, linted] of out.entries()) {
        if (bindings.has(linted.module.path) || !options.importsOf?.(linted.module.path).some((p) => exportsOf(p).length > 0)) continue;
        const parsed = await lintOne(linted.module);
        if (parsed) out[i] = parsed;
      }
      for (const [i, linted] of out.entries()) {
        const helpers = importedHelpers(linted.module, bindings.get(linted.module.path) ?? [], exportsOf, resolveModule, root);
        const key = JSON.stringify(helpers);
        if (helpers.length === 0 || given.get(linted.module.path) === key) continue;
        given.set(linted.module.path, key);
        helpersGiven.set(linted.module.path, helpers);
        const again = await lintOne(linted.module, helpers);
        if (!again) continue;
        out[i] = again;
        changed = true;
      }
      if (!changed) break;
    }
  }
}

/** The helpers each import binding of a module brings in, from what the modules it resolves to export. */
function importedHelpers(
  module: SourceModule,
  bindings: ReturnType<typeof importBindings>,
  exportsOf: (path: string) => readonly ExportedHelper[],
  resolveModule: (specifier: string, from: string) => string | undefined,
  root: string,
): ImportedHelpers[] {
  const out: ImportedHelpers[] = [];
  for (const b of bindings) {
    const target = resolveModule(b.specifier, module.path);
    if (!target || target === module.path) continue;
    const base = b.imported === "*" ? undefined : b.imported;
    const helpers = exportsOf(target).filter((h) => base === undefined || h.name === base || h.name.startsWith(`${base}.`) || h.name.startsWith(`${base}#`));
    if (helpers.length > 0) out.push({ local: b.local, imported: b.imported, file: relative(root, target), helpers });
  }
  return out;
}

/** The module's exports that hold one of its import bindings: the export's path and the binding. */
function heldImports(
  path: string,
  bindings: ReadonlyMap<string, ReturnType<typeof importBindings>>,
  held: ReadonlyMap<string, ReturnType<typeof heldBindings>>,
): { path: string; specifier: string; imported: string }[] {
  const imports = bindings.get(path) ?? [];
  return (held.get(path) ?? []).flatMap((h) => {
    const b = imports.find((i) => i.local === h.local);
    return b ? [{ path: h.path, specifier: b.specifier, imported: b.imported }] : [];
  });
}

const REEXPORT = /export\s*(\*|\{([^}]*)\})\s*from\s*["']([^"']+)["']/g;

/**
 * The helpers each module exports, memoised for one round: its own, and those it re-exports from others (a barrel:
 * `export * from "./lock"`, `export { RedisLock as Lock } from "./redis-lock"`), read from its text since a barrel
 * makes no call to lint; and those its exports hold (an aggregate: `export class db { static locks = locks }` of an
 * imported `locks` exports `locks.acquire` as `db.locks.acquire`), read from the module once it is parsed.
 */
function helperIndex(
  summaries: ReadonlyMap<string, ModuleSummary>,
  resolveModule: (specifier: string, from: string) => string | undefined,
  texts: ReadonlyMap<string, string>,
  root: string,
  heldOf: (path: string) => readonly { path: string; specifier: string; imported: string }[],
): (path: string) => readonly ExportedHelper[] {
  const memo = new Map<string, readonly ExportedHelper[]>();
  const exportsOf = (path: string, depth: number): readonly ExportedHelper[] => {
    const known = memo.get(path);
    if (known) return known;
    const own = summaries.get(path)?.helpers ?? [];
    const text = texts.get(path);
    if (depth > 3 || !text || (!text.includes("from") && heldOf(path).length === 0)) {
      memo.set(path, own);
      return own;
    }
    memo.set(path, own); // a cycle of barrels ends here
    const out = [...own];
    for (const h of heldOf(path)) {
      const target = resolveModule(h.specifier, path);
      if (!target || target === path) continue;
      const base = h.imported === "*" ? undefined : h.imported;
      for (const theirs of exportsOf(target, depth + 1)) {
        const mine = theirs.file ? theirs : { ...theirs, file: relative(root, target) };
        if (base === undefined) {
          if (!theirs.name.startsWith("default")) out.push({ ...mine, name: `${h.path}.${theirs.name}` });
        } else if (theirs.name === base || theirs.name.startsWith(`${base}.`) || theirs.name.startsWith(`${base}#`)) {
          out.push({ ...mine, name: h.path + theirs.name.slice(base.length) });
        }
      }
    }
    for (const m of text.matchAll(REEXPORT)) {
      const target = resolveModule(m[3]!, path);
      if (!target || target === path) continue;
      const theirs = exportsOf(target, depth + 1).map((h) => (h.file ? h : { ...h, file: relative(root, target) }));
      if (m[1] === "*") {
        out.push(...theirs.filter((h) => !h.name.startsWith("default")));
        continue;
      }
      for (const spec of m[2]!.split(",")) {
        const [from, as] = spec.trim().replace(/^type\s+/, "").split(/\s+as\s+/).map((x) => x.trim());
        if (!from) continue;
        for (const h of theirs) {
          if (h.name === from || h.name.startsWith(`${from}.`) || h.name.startsWith(`${from}#`)) out.push({ ...h, name: (as ?? from) + h.name.slice(from.length) });
        }
      }
    }
    memo.set(path, out);
    return out;
  };
  return (path) => exportsOf(path, 0);
}
