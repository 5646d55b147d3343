/**
 * Which files the audit reads, and how they import each other. With a tsconfig (or jsconfig), the TypeScript
 * compiler API reads it as `tsc` would (`include`/`exclude`/`files`, `extends`, `allowJs`) and resolves imports with
 * its `paths`; without one, the directory is walked for JavaScript and TypeScript sources. Imports are read with
 * `ts.preProcessFile` (a scanner, no parse), which is all the import graph needs.
 *
 * The compiler is the `typescript` package that @typescript-eslint/parser loads anyway, not ts-morph's bundled copy:
 * loading a second compiler cost 1.3 s per run, a fifth of `tsc --noEmit` on a 1,200-module project
 * (docs/performance.md), and discovery uses nothing ts-morph adds over the compiler API.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { createRequire } from "node:module";
import type ts from "typescript";

export class AuditError extends Error {}

function loadTypeScript(): typeof ts {
  try {
    return createRequire(import.meta.url)("typescript") as typeof ts;
  } catch {
    throw new AuditError("locks-audit needs the typescript package (the peer of @typescript-eslint/parser): npm install --save-dev typescript @typescript-eslint/parser");
  }
}

const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const DECLARATION = /\.d\.[cm]?ts$/;
const SKIP_DIRS = new Set(["node_modules", "dist", "build", "coverage", ".git", ".next", "out"]);

export interface SourceModule {
  /** Absolute path. */
  readonly path: string;
  /** Project-relative, with forward slashes: how reports name it. */
  readonly rel: string;
  readonly text: string;
}

export interface Project {
  readonly root: string;
  /** The tsconfig/jsconfig read, if any. */
  readonly configFile?: string;
  readonly modules: readonly SourceModule[];
  /** Resolves an import specifier (or a project-relative path) written in `from` to a module of the project. */
  resolveModule(specifier: string, from: string): string | undefined;
  /** Modules `path` imports (resolved, within the project). */
  importsOf(path: string): readonly string[];
  readonly compilerOptions: ts.CompilerOptions;
  /** A TypeScript program of every module, for `--types` (parses and binds the whole project: costs about a `tsc`). */
  createProgram(): ts.Program;
}

function toRel(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

function walk(dir: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") && entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(path, out);
    } else if (entry.isFile() && SOURCE.test(entry.name) && !DECLARATION.test(entry.name)) out.push(path);
  }
}

function readConfig(ts: typeof import("typescript"), configFile: string): { fileNames: string[]; options: ts.CompilerOptions } {
  const read = ts.readConfigFile(configFile, ts.sys.readFile);
  if (read.error) throw new AuditError(`cannot read ${configFile}: ${ts.flattenDiagnosticMessageText(read.error.messageText, "\n")}`);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configFile), undefined, configFile);
  const fatal = parsed.errors.filter((e) => e.code !== 18003); // 18003: no inputs found, reported as "no files" below
  if (fatal.length > 0 && parsed.fileNames.length === 0) {
    throw new AuditError(`cannot use ${configFile}: ${ts.flattenDiagnosticMessageText(fatal[0]!.messageText, "\n")}`);
  }
  return { fileNames: parsed.fileNames.filter((f) => !DECLARATION.test(f)), options: parsed.options };
}

export interface DiscoverOptions {
  /** `--project`: a tsconfig.json (or a folder holding one). */
  readonly project?: string;
  /** Positional paths: audit only these files/folders (the whole project is still read to pair across modules). */
  readonly paths?: readonly string[];
  readonly cwd?: string;
}

/** Finds the project and reads its modules. Throws `AuditError` with a sentence a user can act on. */
export function discoverProject(options: DiscoverOptions = {}): Project {
  const ts = loadTypeScript();
  const cwd = resolve(options.cwd ?? process.cwd());
  let configFile: string | undefined;
  if (options.project !== undefined) {
    const given = resolve(cwd, options.project);
    configFile = existsSync(given) && statSync(given).isDirectory() ? join(given, "tsconfig.json") : given;
    if (!existsSync(configFile)) throw new AuditError(`no tsconfig at ${toRel(cwd, configFile) || configFile}: pass --project with the path of an existing tsconfig.json, or leave it out to read the folder as plain JavaScript`);
  } else {
    configFile = ["tsconfig.json", "jsconfig.json"].map((f) => join(cwd, f)).find((f) => existsSync(f));
  }
  const root = configFile ? dirname(configFile) : cwd;
  let fileNames: string[];
  let compilerOptions: ts.CompilerOptions = { allowJs: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
  if (configFile) {
    const config = readConfig(ts, configFile);
    fileNames = config.fileNames;
    compilerOptions = { ...config.options, allowJs: true };
  } else {
    fileNames = [];
    walk(root, fileNames);
  }
  fileNames = [...new Set(fileNames.map((f) => resolve(f)))].filter((f) => SOURCE.test(f)).sort();
  if (fileNames.length === 0) throw new AuditError(`no JavaScript or TypeScript files found under ${root}${configFile ? ` by ${toRel(cwd, configFile)}` : ""}`);
  const modules: SourceModule[] = fileNames.map((path) => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new AuditError(`cannot read ${toRel(cwd, path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    return { path, rel: toRel(root, path), text };
  });
  const known = new Set(fileNames);
  const byPath = new Map(modules.map((m) => [m.path, m]));
  const host = ts.createCompilerHost(compilerOptions);
  const cache = ts.createModuleResolutionCache(root, (f) => f, compilerOptions);
  const resolveModule = (specifier: string, from: string): string | undefined => {
    // A project-relative or file-relative path, with or without an extension.
    const bases = isAbsolute(specifier) ? [specifier] : [resolve(root, specifier), resolve(dirname(from), specifier)];
    for (const base of bases) {
      const stem = base.slice(0, base.length - extname(base).length);
      for (const candidate of [base, ...[".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"].flatMap((e) => [base + e, stem + e, join(base, `index${e}`)])]) {
        if (known.has(candidate)) return candidate;
      }
    }
    // An import specifier: relative with a .js extension standing for .ts, or a `paths` alias.
    const resolved = ts.resolveModuleName(specifier, from, compilerOptions, host, cache).resolvedModule?.resolvedFileName;
    return resolved && known.has(resolve(resolved)) ? resolve(resolved) : undefined;
  };
  const graph = new Map<string, string[]>();
  const importsOf = (path: string): readonly string[] => {
    let list = graph.get(path);
    if (list) return list;
    const module = byPath.get(path);
    const info = module ? ts.preProcessFile(module.text, true, true) : undefined;
    list = [...new Set((info?.importedFiles ?? []).map((f) => resolveModule(f.fileName, path)).filter((f): f is string => f !== undefined))];
    graph.set(path, list);
    return list;
  };
  const createProgram = () => ts.createProgram({ rootNames: fileNames, options: { ...compilerOptions, noEmit: true }, host });
  return { root, ...(configFile ? { configFile } : {}), modules, resolveModule, importsOf, compilerOptions, createProgram };
}
