/**
 * The editor reads the helpers a file imports (issue 35). In `locks-audit` every module is linted and each importer
 * is handed the helpers it imports (src/audit/lint.ts); an editor, a CI lint step or a review bot lints one file at a
 * time, and without this a lock taken or released through `acquireLock()` from `./lock` was invisible there. So, as
 * eslint-plugin-import reads the modules a file imports, the inventory reads the project modules this file imports
 * and calls: it resolves each specifier as TypeScript does (the nearest tsconfig's `paths` and `baseUrl`; relative
 * paths with the usual extensions when TypeScript is not installed), lints the module's text with the same parser
 * and a rule that only builds its lock facts, and keeps its exported helpers (and, for a barrel, those it re-exports)
 * in a memo keyed by path, text and settings. What the helpers do is then instantiated at this file's calls exactly
 * as in the audit (src/core/summaries/imported-helpers.ts and module-helpers.ts are shared), so both name the same
 * helper and report the same lock.
 *
 * Bounds, on purpose: only modules of the project (never `node_modules` or declaration files), only import bindings
 * the file uses, only modules whose text has lock evidence (the same test the rules make, src/core/model/evidence.ts),
 * and one level deep (a helper that wraps a helper of a third module is followed by the audit, not here). ESLint's
 * `--cache` keys a file by its own text: after a change to a helper module alone, a cached importer keeps its old
 * findings until it changes or the cache is dropped (docs/audit.md). `settings.locks.readImports: true`
 * turns the reading on (it is off by default, for its cost).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, resolve, sep } from "node:path";
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { ExportedHelper } from "../core/model/helper-summaries.js";
import { importBindings, type ImportedHelpers } from "../core/summaries/imported-helpers.js";
import { heldImports, helperIndex, importedHelpers, type ProjectModules } from "../core/summaries/module-helpers.js";
import type { heldBindings } from "../core/reading/exports.js";

type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;

/** What reading one module gives: its exported helpers and the bindings its exports hold. */
export interface ModuleReading {
  readonly helpers: readonly ExportedHelper[];
  readonly bindings: ReturnType<typeof importBindings>;
  readonly held: ReturnType<typeof heldBindings>;
}

/** Lints one module's text for its lock facts (the inventory's, which owns the rules); undefined when it holds none. */
export type ReadModule = (path: string, text: string, context: Context) => ModuleReading | undefined;

const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const MEMO_LIMIT = 2000;

/** Memo of `ReadModule` by path, valid while the text and the settings are the same (a pure function of the three). */
const readings = new Map<string, { text: string; key: string; reading: ModuleReading | undefined }>();
/** Memo of a tsconfig's compiler options by its path, valid while its modification time is the same. */
const configs = new Map<string, { mtime: number; config: Config | undefined }>();
/** The lazily required TypeScript module: null when the project does not have it. */
let typescript: typeof import("typescript") | null | undefined;

function loadTypescript(): typeof import("typescript") | null {
  if (typescript !== undefined) return typescript;
  try {
    typescript = createRequire(import.meta.url)("typescript") as typeof import("typescript");
  } catch {
    typescript = null;
  }
  return typescript;
}

/**
 * Whether the editor reads imported modules for this lint: when `settings.locks.readImports` is true, and never
 * inside the audit (it hands them). Off by default: on twelve real services it made the whole lint about 1.7 times
 * slower (docs/audit.md), more than a default may cost.
 */
export function readsImports(settings: Readonly<Record<string, unknown>>): boolean {
  if (settings["locksAuditFiles"] !== undefined || settings["locksNestedRead"] === true) return false;
  const locks = settings["locks"] as Record<string, unknown> | undefined;
  return locks?.["readImports"] === true;
}

/** The helpers this file's import bindings bring in, read from the modules they resolve to. */
export function editorImportedHelpers(
  context: Context,
  program: TSESTree.Program,
  read: ReadModule,
): ImportedHelpers[] {
  const from = context.filename;
  if (!isAbsolute(from) || !existsSync(from)) return [];
  const text = context.sourceCode.text;
  // Only bindings the file uses beyond the import itself.
  const bindings = importBindings(program).filter((b) => {
    const uses = text.match(new RegExp(`(?<![\\w$.])${b.local.replace(/\$/g, "\\$")}(?![\\w$])`, "g"));
    return uses !== null && uses.length > 1;
  });
  if (bindings.length === 0) return [];
  const settingsKey = JSON.stringify([context.settings["locks"] ?? null, parserName(context)]);
  const texts = new Map<string, string | undefined>();
  const textOf = (path: string) => {
    if (!texts.has(path)) texts.set(path, readText(path));
    return texts.get(path);
  };
  const readingOf = (path: string): ModuleReading | undefined => {
    const t = textOf(path);
    if (t === undefined) return undefined;
    const memo = readings.get(path);
    if (memo && memo.text === t && memo.key === settingsKey) return memo.reading;
    const reading = read(path, t, context);
    if (readings.size >= MEMO_LIMIT) readings.delete(readings.keys().next().value!);
    readings.set(path, { text: t, key: settingsKey, reading });
    return reading;
  };
  const project: ProjectModules = {
    root: context.cwd,
    helpersOf: (path) => readingOf(path)?.helpers,
    textOf,
    heldOf: (path) => {
      const r = readingOf(path);
      return r ? heldImports(r.bindings, r.held) : [];
    },
    resolve: (specifier, importer) => resolveModule(specifier, importer),
  };
  return importedHelpers(from, bindings, helperIndex(project), project);
}

function parserName(context: Context): string {
  const parser = (context.languageOptions as { parser?: { meta?: { name?: string } } } | undefined)?.parser;
  return parser?.meta?.name ?? "default";
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** A module of the project the specifier names, resolved as TypeScript resolves it; never a package's file. */
export function resolveModule(specifier: string, from: string): string | undefined {
  const relativeSpecifier = specifier.startsWith(".") || isAbsolute(specifier);
  const ts = loadTypescript();
  let found: string | undefined;
  if (ts) {
    const config = compilerOptions(ts, from);
    // A bare specifier is a package unless the config maps it (`paths`, or a folder under `baseUrl`): packages are
    // never read, so TypeScript is not asked to look for them in node_modules.
    if (!relativeSpecifier && !(config && mapsSpecifier(config.options, specifier))) return undefined;
    const options = config?.options ?? DEFAULT_OPTIONS(ts);
    const resolved = ts.resolveModuleName(specifier, from, options, ts.sys, config?.cache).resolvedModule;
    if (resolved && !resolved.isExternalLibraryImport) found = resolved.resolvedFileName;
  } else if (relativeSpecifier) {
    found = probe(resolve(dirname(from), specifier));
  }
  if (!found || !SOURCE.test(found) || /\.d\.[cm]?ts$/.test(found) || found.split(sep).includes("node_modules"))
    return undefined;
  return resolve(found);
}

const DEFAULT_OPTIONS = (ts: typeof import("typescript")) => ({
  allowJs: true,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
});

/** Whether `paths` or `baseUrl` can turn a bare specifier into a module of the project. */
function mapsSpecifier(options: import("typescript").CompilerOptions, specifier: string): boolean {
  for (const pattern of Object.keys(options.paths ?? {})) {
    const star = pattern.indexOf("*");
    if (star < 0 ? specifier === pattern : specifier.startsWith(pattern.slice(0, star))) return true;
  }
  const baseUrl = options.baseUrl;
  if (!baseUrl) return false;
  const first = specifier.split("/")[0]!;
  return [first, ...EXTENSIONS.map((e) => first + e)].some((name) => existsSync(resolve(baseUrl, name)));
}

interface Config {
  readonly options: import("typescript").CompilerOptions;
  readonly cache: import("typescript").ModuleResolutionCache;
}

/** The compiler options of the nearest tsconfig.json (or jsconfig.json) above `from`, `allowJs` on, and a cache. */
function compilerOptions(ts: typeof import("typescript"), from: string): Config | undefined {
  const file =
    ts.findConfigFile(dirname(from), ts.sys.fileExists, "tsconfig.json") ??
    ts.findConfigFile(dirname(from), ts.sys.fileExists, "jsconfig.json");
  if (!file || file.split(sep).includes("node_modules")) return undefined;
  let mtime: number;
  try {
    mtime = statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  const known = configs.get(file);
  if (known && known.mtime === mtime) return known.config;
  let config: Config | undefined;
  try {
    const read = ts.readConfigFile(file, ts.sys.readFile);
    if (!read.error) {
      const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(file), undefined, file);
      // A config with no module resolution of its own resolves as a bundler would (extensions optional).
      const options = {
        ...parsed.options,
        allowJs: true,
        ...(parsed.options.moduleResolution === undefined ? { moduleResolution: ts.ModuleResolutionKind.Bundler } : {}),
      };
      config = { options, cache: ts.createModuleResolutionCache(dirname(file), (f) => f, options) };
    }
  } catch {
    config = undefined;
  }
  if (configs.size >= MEMO_LIMIT) configs.delete(configs.keys().next().value!);
  configs.set(file, { mtime, config });
  return config;
}

/** `./lock` → `./lock.ts`, `./lock/index.js`; `./lock.js` → `./lock.ts` (TypeScript's ESM convention). */
function probe(base: string): string | undefined {
  const stem = base.replace(/\.[cm]?js$/, "");
  const candidates = [base, ...EXTENSIONS.map((e) => stem + e), ...EXTENSIONS.map((e) => `${base}${sep}index${e}`)];
  for (const c of candidates) {
    try {
      if (statSync(c).isFile()) return c;
    } catch {
      // not this one
    }
  }
  return undefined;
}
