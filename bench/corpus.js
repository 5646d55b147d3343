// The benchmark corpus: the files of the pinned packages listed in bench/corpus.json, as `npm ci` installs them.
// Shared by `npm run bench` (scripts/bench.js) and the zero-crash test (test/robustness/corpus.test.ts).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
export const corpusConfigPath = fileURLToPath(new URL("corpus.json", import.meta.url));
/** The application corpus (issue 17): server packages fetched on demand by bench/app-corpus.js. */
export const appCorpusConfigPath = fileURLToPath(new URL("app-corpus.json", import.meta.url));

/** Where bench/app-corpus.js puts one package of the application corpus: its tarball's `package/` folder. */
export function appCorpusDir(pkg, root = repoRoot) {
  return join(
    root,
    "node_modules",
    ".cache",
    "locks-app-corpus",
    `${pkg.name.replace("/", "+")}@${pkg.version}`,
    "package",
  );
}

const DECLARATION = /\.d\.[cm]?ts$/;

function readJson(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

/** Files under `dir` (or `dir` itself), sorted, never descending into node_modules or an excluded folder. */
function walk(dir, excluded) {
  const stat = statSync(dir);
  if (stat.isFile()) return [dir];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  )) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === "node_modules" || excluded.has(path)) continue;
      out.push(...walk(path, excluded));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

/**
 * Lists a corpus: the library corpus (`bench/corpus.json`, installed by `npm ci`) or the application corpus
 * (`bench/app-corpus.json`, fetched by `node bench/app-corpus.js`). Throws when a package is missing or at another
 * version than the one pinned (the figures would not be comparable).
 * @param {{ limit?: number, root?: string, corpus?: "library" | "application" }} [options] `limit`: an evenly spread
 *   sample of that many files.
 * @returns {Corpus} `files` is the sample (or every file); `filesByPackage` always lists every file.
 */
export function listCorpus(options = {}) {
  const root = options.root ?? repoRoot;
  const application = options.corpus === "application";
  const config = readJson(application ? appCorpusConfigPath : corpusConfigPath);
  const manifest = readJson(join(root, "package.json"));
  const problems = [];
  const packages = [];
  const files = [];
  const filesByPackage = {};
  let skippedLarge = 0;
  let skippedDeclarations = 0;
  for (const pkg of config.packages) {
    const pinned = manifest.devDependencies?.[pkg.name];
    if (!application && pinned !== pkg.version) {
      problems.push(
        `${pkg.name}: bench/corpus.json pins ${pkg.version}, package.json devDependencies has ${pinned ?? "nothing"}`,
      );
    }
    const dir = application ? appCorpusDir(pkg, root) : join(root, "node_modules", ...pkg.name.split("/"));
    const manifestFile = join(dir, "package.json");
    const fix = application ? "run node bench/app-corpus.js" : "run npm ci";
    if (!existsSync(manifestFile)) {
      problems.push(`${pkg.name}: not ${application ? "fetched" : "installed"} (${fix})`);
      continue;
    }
    const installed = readJson(manifestFile).version;
    if (installed !== pkg.version) problems.push(`${pkg.name}: ${installed} installed, ${pkg.version} pinned (${fix})`);
    const extensions = pkg.extensions ?? config.extensions;
    const excluded = new Set((pkg.exclude ?? []).map((e) => join(dir, e)));
    const own = [];
    let bytes = 0;
    for (const include of pkg.include) {
      const start = join(dir, include);
      if (!existsSync(start)) {
        problems.push(`${pkg.name}: ${include} is not in the package`);
        continue;
      }
      for (const file of walk(start, excluded)) {
        if (!extensions.some((ext) => file.endsWith(ext))) continue;
        if (DECLARATION.test(file)) {
          skippedDeclarations++;
          continue;
        }
        const size = statSync(file).size;
        if (size > config.skip.maxBytes) {
          skippedLarge++;
          continue;
        }
        bytes += size;
        own.push(file);
      }
    }
    packages.push({ name: pkg.name, version: pkg.version, files: own.length, bytes });
    filesByPackage[pkg.name] = own;
    files.push(...own);
  }
  if (problems.length > 0)
    throw new Error(
      `The ${application ? "application" : "benchmark"} corpus is not as pinned:\n  ${problems.join("\n  ")}`,
    );
  const total = files.length;
  const limit = options.limit;
  const chosen =
    limit !== undefined && limit < total
      ? Array.from({ length: limit }, (_, i) => files[Math.floor((i * total) / limit)])
      : files;
  return {
    files: chosen,
    total,
    packages,
    filesByPackage,
    skipped: { declarations: skippedDeclarations, large: skippedLarge },
  };
}

/** A corpus path as shown in reports: `node_modules/bullmq/dist/esm/classes/job.js`. */
export function displayPath(file, root = repoRoot) {
  return relative(root, file).split(sep).join("/");
}
