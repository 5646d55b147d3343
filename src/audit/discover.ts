/**
 * Which files the audit reads, and how they import each other.
 *
 * A project is one or more TypeScript configurations ("units") plus the folders no configuration covers:
 * - the root tsconfig (or jsconfig), read as `tsc` reads it (`include`/`exclude`/`files`, `extends`, `allowJs`), and
 *   every project it names in `references`, recursively (a solution-style root with `"files": []` is only its
 *   references);
 * - the workspace packages (npm/yarn `workspaces` in package.json, `pnpm-workspace.yaml`, `lerna.json`): a package
 *   with its own tsconfig is read through it, a package without one is walked;
 * - with no tsconfig at all, the folder is walked for JavaScript and TypeScript sources, skipping the packages
 *   that have a tsconfig of their own.
 * Each module resolves its imports with the compiler options of the unit that lists it (its `paths`, its
 * `baseUrl`), and an import of a workspace package by name (`@org/db`, `@org/db/queue`) resolves to that package's
 * source: its `exports`/`source`/`types`/`main` entry, mapped from the build folder back to the sources when the
 * entry names a build that is not in the repository (`dist/index.js` -> `src/index.ts`). Packages are named by the
 * package.json files of the workspace globs, or, with no workspace declared, by every named package.json found.
 * Imports are read with `ts.preProcessFile` (a scanner, no parse), which is all the import graph needs.
 *
 * The compiler is the `typescript` package that @typescript-eslint/parser loads anyway, not ts-morph's bundled copy:
 * loading a second compiler cost 1.3 s per run, a fifth of `tsc --noEmit` on a 1,200-module project
 * (docs/performance.md), and discovery uses nothing ts-morph adds over the compiler API.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { createRequire } from "node:module";
import type ts from "typescript";
import { globSync } from "tinyglobby";
import { parse as parseYaml } from "yaml";

export class AuditError extends Error {}

function loadTypeScript(): typeof ts {
  try {
    return createRequire(import.meta.url)("typescript") as typeof ts;
  } catch {
    throw new AuditError(
      "locks-audit needs the typescript package (the peer of @typescript-eslint/parser): npm install --save-dev typescript @typescript-eslint/parser",
    );
  }
}

const SOURCE = /\.(?:[cm]?[jt]s|[jt]sx)$/;
const DECLARATION = /\.d\.[cm]?ts$/;
/** Folders no project source lives in: dependencies, builds, coverage (schemas.ts skips them too). */
export const SKIP_DIRS: ReadonlySet<string> = new Set([
  "node_modules",
  "dist",
  "build",
  "coverage",
  ".git",
  ".next",
  "out",
]);
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"];
/** Folders a package's build usually goes to; an entry there that the repository does not hold maps to `src/`. */
const BUILD_DIRS = new Set(["dist", "build", "lib", "out", "esm", "cjs", "es", "types"]);

export interface SourceModule {
  /** Absolute path. */
  readonly path: string;
  /** Project-relative, with forward slashes: how reports name it. */
  readonly rel: string;
  readonly text: string;
}

/** A workspace package: what other packages import it as, and where its sources are. */
export interface WorkspacePackage {
  readonly name: string;
  /** Absolute path of the folder holding its package.json. */
  readonly dir: string;
  /** Project-relative folder, with forward slashes ("" for the root package). */
  readonly rel: string;
}

export interface Project {
  readonly root: string;
  /** The root tsconfig/jsconfig read, if any. */
  readonly configFile?: string;
  /** Every tsconfig read (the root, its references, the workspace packages' own), project-relative. */
  readonly configFiles: readonly string[];
  /** The workspace packages found (declared workspaces, or every named package.json when none is declared). */
  readonly packages: readonly WorkspacePackage[];
  readonly modules: readonly SourceModule[];
  /** Resolves an import specifier (or a project-relative path) written in `from` to a module of the project. */
  resolveModule(specifier: string, from: string): string | undefined;
  /** Modules `path` imports (resolved, within the project). */
  importsOf(path: string): readonly string[];
  /** The compiler options of the root configuration (or the defaults for a walked folder). */
  readonly compilerOptions: ts.CompilerOptions;
  /**
   * TypeScript programs covering every module, one per configuration, for `--types` (parses and binds the whole
   * project: costs about a `tsc`).
   */
  createPrograms(): ts.Program[];
}

function toRel(root: string, path: string): string {
  return relative(root, path).split(sep).join("/");
}

function isInside(dir: string, path: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** Source files under `dir` (not under `skip` folders), and the package.json files met on the way. */
function walk(dir: string, out: { sources: string[]; manifests: string[] }, skip: ReadonlySet<string>): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // a folder that vanished or cannot be listed holds nothing to audit
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!entry.name.startsWith(".") && !SKIP_DIRS.has(entry.name) && !skip.has(path)) walk(path, out, skip);
    } else if (entry.isFile()) {
      if (entry.name === "package.json") out.manifests.push(path);
      else if (SOURCE.test(entry.name) && !DECLARATION.test(entry.name)) out.sources.push(path);
    }
  }
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

/** The workspace globs the root declares (npm/yarn `workspaces`, pnpm-workspace.yaml, lerna.json), or undefined. */
function workspaceGlobs(root: string): string[] | undefined {
  const globs: string[] = [];
  let declared = false;
  const manifest = readJson(join(root, "package.json"));
  const workspaces = manifest?.["workspaces"];
  if (workspaces !== undefined) {
    declared = true;
    globs.push(...strings(workspaces), ...strings((workspaces as { packages?: unknown } | null)?.packages));
  }
  const pnpm = join(root, "pnpm-workspace.yaml");
  if (existsSync(pnpm)) {
    declared = true;
    try {
      globs.push(...strings((parseYaml(readFileSync(pnpm, "utf8")) as { packages?: unknown } | null)?.packages));
    } catch (error) {
      throw new AuditError(`cannot read pnpm-workspace.yaml: ${(error as Error).message.split("\n")[0]}`);
    }
  }
  const lerna = readJson(join(root, "lerna.json"));
  if (lerna) {
    declared = true;
    globs.push(...(lerna["packages"] !== undefined ? strings(lerna["packages"]) : ["packages/*"]));
  }
  return declared ? globs : undefined;
}

interface Manifest {
  readonly dir: string;
  readonly json: Record<string, unknown>;
}

/** The package.json files the workspace globs name, and the folders their negations (`!packages/legacy`) leave out. */
function manifestsOf(root: string, globs: readonly string[]): { manifests: string[]; excluded: string[] } {
  const positive = globs.filter((g) => !g.startsWith("!")).map((g) => `${g.replace(/\/+$/, "")}/package.json`);
  const negated = globs.filter((g) => g.startsWith("!")).map((g) => g.slice(1).replace(/\/+$/, ""));
  const ignore = ["**/node_modules/**", ...negated.flatMap((g) => [`${g}/package.json`, `${g}/**`])];
  const manifests =
    positive.length === 0 ? [] : globSync(positive, { cwd: root, ignore, absolute: true }).map((p) => resolve(p));
  const excluded =
    negated.length === 0
      ? []
      : globSync(negated, { cwd: root, onlyDirectories: true, absolute: true, ignore: ["**/node_modules/**"] }).map(
          (p) => resolve(p),
        );
  return { manifests, excluded };
}

/** One tsconfig read: its files and options. */
interface Unit {
  readonly configFile: string;
  readonly dir: string;
  readonly options: ts.CompilerOptions;
  readonly fileNames: readonly string[];
  readonly references: readonly string[];
}

function readUnit(
  ts: typeof import("typescript"),
  host: ts.ParseConfigHost,
  configFile: string,
  strict: boolean,
): Unit | undefined {
  const read = ts.readConfigFile(configFile, host.readFile);
  if (read.error) {
    if (strict)
      throw new AuditError(
        `cannot read ${configFile}: ${ts.flattenDiagnosticMessageText(read.error.messageText, "\n")}`,
      );
    return undefined;
  }
  const parsed = ts.parseJsonConfigFileContent(read.config, host, dirname(configFile), undefined, configFile);
  const references = (parsed.projectReferences ?? []).map((r) => resolve(ts.resolveProjectReferencePath(r)));
  // 18002/18003: an empty `files` list, no inputs: a solution-style config that is only its references, or a
  // package with nothing to read; "no files at all" is reported for the whole project below.
  const fatal = parsed.errors.filter((e) => e.code !== 18003 && e.code !== 18002);
  if (fatal.length > 0 && parsed.fileNames.length === 0 && references.length === 0) {
    if (strict)
      throw new AuditError(`cannot use ${configFile}: ${ts.flattenDiagnosticMessageText(fatal[0]!.messageText, "\n")}`);
    return undefined;
  }
  return {
    configFile,
    dir: dirname(configFile),
    options: { ...parsed.options, allowJs: true },
    fileNames: parsed.fileNames.filter((f) => SOURCE.test(f) && !DECLARATION.test(f)).map((f) => resolve(f)),
    references,
  };
}

/** The targets an `exports` map gives `key` ("." or "./sub"), every condition's. */
function exportTargets(exportsField: unknown, key: string): string[] {
  const flatten = (value: unknown): string[] => {
    if (typeof value === "string") return [value];
    if (Array.isArray(value)) return value.flatMap(flatten);
    if (value && typeof value === "object") return Object.values(value).flatMap(flatten);
    return [];
  };
  if (typeof exportsField === "string" || Array.isArray(exportsField)) return key === "." ? flatten(exportsField) : [];
  if (!exportsField || typeof exportsField !== "object") return [];
  const map = exportsField as Record<string, unknown>;
  const subpaths = Object.keys(map).filter((k) => k.startsWith("."));
  if (subpaths.length === 0) return key === "." ? flatten(map) : []; // conditions only: the package's main entry
  if (key in map) return flatten(map[key]);
  for (const pattern of subpaths) {
    const star = pattern.indexOf("*");
    if (star < 0) continue;
    const [head, tail] = [pattern.slice(0, star), pattern.slice(star + 1)];
    if (key.startsWith(head) && key.endsWith(tail) && key.length >= head.length + tail.length) {
      const match = key.slice(head.length, key.length - tail.length);
      return flatten(map[pattern]).map((t) => t.split("*").join(match));
    }
  }
  return [];
}

/** Finds the project and reads its modules. Throws `AuditError` with a sentence a user can act on. */
export function discoverProject(options: { readonly project?: string; readonly cwd?: string } = {}): Project {
  const ts = loadTypeScript();
  const cwd = resolve(options.cwd ?? process.cwd());
  let configFile: string | undefined;
  if (options.project !== undefined) {
    const given = resolve(cwd, options.project);
    configFile = existsSync(given) && statSync(given).isDirectory() ? join(given, "tsconfig.json") : given;
    if (!existsSync(configFile))
      throw new AuditError(
        `no tsconfig at ${toRel(cwd, configFile) || configFile}: pass --project with the path of an existing tsconfig.json, or leave it out to read the folder as plain JavaScript`,
      );
  } else {
    configFile = ["tsconfig.json", "jsconfig.json"].map((f) => join(cwd, f)).find((f) => existsSync(f));
  }
  const root = configFile ? dirname(configFile) : cwd;
  const defaults: ts.CompilerOptions = {
    allowJs: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };

  // The workspace packages, and their own configurations. `--project` names one configuration: only its packages'
  // names are read then (to resolve imports by name), not their files.
  const globs = workspaceGlobs(root);
  const walked = { sources: [] as string[], manifests: [] as string[] };
  let manifests: string[];
  let excluded: string[] = [];
  if (globs !== undefined) ({ manifests, excluded } = manifestsOf(root, globs));
  else {
    // No workspace declared: every named package.json under the root names a package (found by the same walk
    // that collects the sources when there is no tsconfig).
    walk(root, walked, new Set());
    manifests = walked.manifests;
  }
  const packageManifests: Manifest[] = [];
  for (const file of [join(root, "package.json"), ...manifests]) {
    const json = readJson(file);
    if (json && !packageManifests.some((m) => m.dir === dirname(file)))
      packageManifests.push({ dir: dirname(file), json });
  }
  const packages: WorkspacePackage[] = packageManifests
    .filter(
      (m): m is Manifest & { json: { name: string } } => typeof m.json["name"] === "string" && m.json["name"] !== "",
    )
    .map((m) => ({ name: m.json["name"] as string, dir: m.dir, rel: toRel(root, m.dir) }));

  // The configurations: the root and its references, recursively, then the packages' own. A config that extends a
  // workspace package by name (`"extends": "@org/tsconfig/base.json"`) is read from the package's folder when
  // node_modules does not link it (a checkout that was not installed).
  const linked = (path: string): string => {
    if (ts.sys.fileExists(path)) return path;
    const marker = `${sep}node_modules${sep}`;
    const at = path.lastIndexOf(marker);
    if (at < 0) return path;
    const rest = path
      .slice(at + marker.length)
      .split(sep)
      .join("/");
    const pkg = packages.find((p) => rest.startsWith(`${p.name}/`));
    return pkg ? join(pkg.dir, rest.slice(pkg.name.length + 1)) : path;
  };
  const host: ts.ParseConfigHost = {
    useCaseSensitiveFileNames: ts.sys.useCaseSensitiveFileNames,
    readDirectory: ts.sys.readDirectory,
    fileExists: (path) => ts.sys.fileExists(linked(path)),
    readFile: (path) => ts.sys.readFile(linked(path)),
  };
  const units: Unit[] = [];
  const seenConfigs = new Set<string>();
  const addUnit = (file: string, strict: boolean) => {
    if (seenConfigs.has(file)) return;
    seenConfigs.add(file);
    const unit = existsSync(file) ? readUnit(ts, host, file, strict) : undefined;
    if (!unit) return;
    units.push(unit);
    for (const ref of unit.references) addUnit(ref, false);
  };
  if (configFile) addUnit(configFile, true);

  if (options.project === undefined) {
    for (const m of packageManifests) {
      if (m.dir === root) continue;
      const own = ["tsconfig.json", "jsconfig.json"].map((f) => join(m.dir, f)).find((f) => existsSync(f));
      if (own) addUnit(own, false);
    }
  }

  // Folders no configuration covers are walked: with no tsconfig and no workspace, the whole folder; with
  // workspaces, the root package's own files and each package that has no tsconfig (a JavaScript package in a
  // TypeScript monorepo), never a folder the workspace globs leave out.
  const covered = new Set(units.flatMap((u) => u.fileNames));
  const unitDirs = units.map((u) => u.dir);
  const uncovered = packageManifests.filter(
    (m) => m.dir !== root && !units.some((u) => u.fileNames.some((f) => isInside(m.dir, f))),
  );
  let extra: string[] = [];
  if (!configFile && globs === undefined) extra = walked.sources.filter((f) => !unitDirs.some((d) => isInside(d, f)));
  else if (options.project === undefined) {
    const packageDirs = packageManifests.filter((m) => m.dir !== root).map((m) => m.dir);
    const skip = new Set([...unitDirs, ...packageDirs, ...excluded]);
    const found = { sources: [] as string[], manifests: [] as string[] };
    if (!configFile) walk(root, found, skip);
    for (const m of uncovered) walk(m.dir, found, new Set([...excluded, ...packageDirs.filter((d) => d !== m.dir)]));
    extra = found.sources;
  }
  const fileNames = [...new Set([...covered, ...extra.map((f) => resolve(f))])]
    .filter((f) => !f.split(sep).includes("node_modules"))
    .sort();
  if (fileNames.length === 0)
    throw new AuditError(
      `no JavaScript or TypeScript files found under ${root}${configFile ? ` by ${toRel(cwd, configFile)}` : ""}`,
    );
  const modules: SourceModule[] = fileNames.map((path) => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new AuditError(
        `cannot read ${toRel(cwd, path)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    return { path, rel: toRel(root, path), text };
  });
  const known = new Set(fileNames);
  const byPath = new Map(modules.map((m) => [m.path, m]));

  // Each module resolves with the options of the configuration that lists it, the deepest one when several do.
  const rootUnit: Unit = units.find((u) => u.configFile === configFile) ?? {
    configFile: join(root, "tsconfig.json"),
    dir: root,
    options: defaults,
    fileNames: extra,
    references: [],
  };
  const owner = new Map<string, Unit>();
  for (const unit of [...units].sort((a, b) => b.dir.length - a.dir.length)) {
    for (const f of unit.fileNames) if (!owner.has(f)) owner.set(f, unit);
  }
  const resolvers = new Map<Unit, { host: ts.CompilerHost; cache: ts.ModuleResolutionCache }>();
  const resolverOf = (unit: Unit) => {
    let r = resolvers.get(unit);
    if (!r) {
      r = {
        host: ts.createCompilerHost(unit.options),
        cache: ts.createModuleResolutionCache(unit.dir, (f) => f, unit.options),
      };
      resolvers.set(unit, r);
    }
    return r;
  };
  const unitOf = (path: string): Unit =>
    owner.get(path) ??
    units.filter((u) => isInside(u.dir, path)).sort((a, b) => b.dir.length - a.dir.length)[0] ??
    rootUnit;

  const findFile = (base: string): string | undefined => {
    const stem = base.slice(0, base.length - extname(base).length);
    for (const candidate of [base, ...EXTENSIONS.flatMap((e) => [base + e, stem + e, join(base, `index${e}`)])]) {
      if (known.has(candidate)) return candidate;
    }
    return undefined;
  };
  const byName = [...packages].sort((a, b) => b.name.length - a.name.length);
  const manifestOf = new Map(packageManifests.map((m) => [m.dir, m.json]));
  /** `@org/db` or `@org/db/queue` to the package's source module. */
  const resolvePackage = (specifier: string): string | undefined => {
    const pkg = byName.find((p) => specifier === p.name || specifier.startsWith(`${p.name}/`));
    if (!pkg) return undefined;
    const json = manifestOf.get(pkg.dir) ?? {};
    const sub = specifier.slice(pkg.name.length + 1);
    const entries = [
      ...exportTargets(json["exports"], sub ? `./${sub}` : "."),
      ...(sub
        ? [sub]
        : [json["source"], json["types"], json["typings"], json["module"], json["main"]].filter(
            (v): v is string => typeof v === "string",
          )),
      sub || "index",
    ];
    const unit = units.find((u) => u.dir === pkg.dir);
    for (const entry of entries) {
      const abs = resolve(pkg.dir, entry.replace(/\.d\.([cm]?)ts$/, ".$1js"));
      const found = findFile(abs);
      if (found) return found;
      // A build that is not in the repository: from its outDir back to its rootDir, or from dist/ (lib/, build/…) to src/.
      const rel = toRel(pkg.dir, abs);
      const mapped: string[] = [];
      if (unit?.options.outDir) {
        const out = toRel(pkg.dir, resolve(unit.options.outDir));
        if (rel.startsWith(`${out}/`))
          mapped.push(
            join(
              unit.options.rootDir ? resolve(unit.options.rootDir) : join(pkg.dir, "src"),
              rel.slice(out.length + 1),
            ),
          );
      }
      const [first, ...rest] = rel.split("/");
      if (first && BUILD_DIRS.has(first) && rest.length > 0)
        mapped.push(join(pkg.dir, "src", ...rest), join(pkg.dir, ...rest));
      for (const m of mapped) {
        const hit = findFile(m);
        if (hit) return hit;
      }
      const inSrc = findFile(join(pkg.dir, "src", entry));
      if (inSrc) return inSrc;
    }
    return undefined;
  };

  // Resolved once per specifier, folder and configuration: the audit asks again for every import of every module, in
  // each round of following helpers, and 20,000 modules import the same few hundred modules.
  const resolved = new Map<string, string | undefined>();
  const resolveModule = (specifier: string, from: string): string | undefined => {
    const key = `${specifier}\0${dirname(from)}\0${unitOf(from).configFile}`;
    if (resolved.has(key)) return resolved.get(key);
    const found = resolveUncached(specifier, from);
    resolved.set(key, found);
    return found;
  };
  const resolveUncached = (specifier: string, from: string): string | undefined => {
    // A project-relative or file-relative path, with or without an extension.
    const bases = isAbsolute(specifier) ? [specifier] : [resolve(root, specifier), resolve(dirname(from), specifier)];
    for (const base of bases) {
      const found = findFile(base);
      if (found) return found;
    }
    // An import specifier: relative with a .js extension standing for .ts, or a `paths` alias of its configuration.
    const unit = unitOf(from);
    const { host, cache } = resolverOf(unit);
    const resolved = ts.resolveModuleName(specifier, from, unit.options, host, cache).resolvedModule?.resolvedFileName;
    if (resolved && known.has(resolve(resolved))) return resolve(resolved);
    // A workspace package imported by its name.
    return specifier.startsWith(".") || isAbsolute(specifier) ? undefined : resolvePackage(specifier);
  };
  const graph = new Map<string, string[]>();
  const importsOf = (path: string): readonly string[] => {
    let list = graph.get(path);
    if (list) return list;
    const module = byPath.get(path);
    const info = module ? ts.preProcessFile(module.text, true, true) : undefined;
    list = [
      ...new Set(
        (info?.importedFiles ?? [])
          .map((f) => resolveModule(f.fileName, path))
          .filter((f): f is string => f !== undefined),
      ),
    ];
    graph.set(path, list);
    return list;
  };
  const createPrograms = () => {
    const groups = new Map<Unit, string[]>();
    for (const f of fileNames) {
      const unit = unitOf(f);
      groups.set(unit, [...(groups.get(unit) ?? []), f]);
    }
    return [...groups].map(([unit, rootNames]) =>
      ts.createProgram({ rootNames, options: { ...unit.options, noEmit: true }, host: resolverOf(unit).host }),
    );
  };
  return {
    root,
    ...(configFile ? { configFile } : {}),
    configFiles: units.map((u) => toRel(root, u.configFile)),
    packages,
    modules,
    resolveModule,
    importsOf,
    compilerOptions: rootUnit.options,
    createPrograms,
  };
}
