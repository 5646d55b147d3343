// The benchmark corpus: the files of the pinned packages listed in bench/corpus.json, as `npm ci` installs them.
// Shared by `npm run bench` (scripts/bench.js) and the zero-crash test (test/robustness/corpus.test.ts).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
export const corpusConfigPath = fileURLToPath(new URL("corpus.json", import.meta.url));

const DECLARATION = /\.d\.[cm]?ts$/;

function readJson(file) {
  return JSON.parse(readFileSync(file, "utf8"));
}

/** Files under `dir` (or `dir` itself), sorted, never descending into node_modules or an excluded folder. */
function walk(dir, excluded) {
  const stat = statSync(dir);
  if (stat.isFile()) return [dir];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === "node_modules" || excluded.has(path)) continue;
      out.push(...walk(path, excluded));
    } else if (entry.isFile()) out.push(path);
  }
  return out;
}

/**
 * Lists the corpus. Throws when a package is missing or installed at another version than the one pinned (the
 * figures would not be comparable): run `npm ci`.
 * @param {{ limit?: number, root?: string }} [options] `limit`: an evenly spread sample of that many files.
 * @returns {Corpus} `files` is the sample (or every file); `filesByPackage` always lists every file.
 */
export function listCorpus(options = {}) {
  const root = options.root ?? repoRoot;
  const config = readJson(corpusConfigPath);
  const manifest = readJson(join(root, "package.json"));
  const problems = [];
  const packages = [];
  const files = [];
  const filesByPackage = {};
  let skippedLarge = 0;
  let skippedDeclarations = 0;
  for (const pkg of config.packages) {
    const pinned = manifest.devDependencies?.[pkg.name];
    if (pinned !== pkg.version) {
      problems.push(`${pkg.name}: bench/corpus.json pins ${pkg.version}, package.json devDependencies has ${pinned ?? "nothing"}`);
    }
    const dir = join(root, "node_modules", ...pkg.name.split("/"));
    const manifestFile = join(dir, "package.json");
    if (!existsSync(manifestFile)) {
      problems.push(`${pkg.name}: not installed (run npm ci)`);
      continue;
    }
    const installed = readJson(manifestFile).version;
    if (installed !== pkg.version) problems.push(`${pkg.name}: ${installed} installed, ${pkg.version} pinned (run npm ci)`);
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
  if (problems.length > 0) throw new Error(`The benchmark corpus is not as pinned:\n  ${problems.join("\n  ")}`);
  const total = files.length;
  const limit = options.limit;
  const chosen = limit !== undefined && limit < total
    ? Array.from({ length: limit }, (_, i) => files[Math.floor((i * total) / limit)])
    : files;
  return { files: chosen, total, packages, filesByPackage, skipped: { declarations: skippedDeclarations, large: skippedLarge } };
}

/** A corpus path as shown in reports: `node_modules/bullmq/dist/esm/classes/job.js`. */
export function displayPath(file, root = repoRoot) {
  return relative(root, file).split(sep).join("/");
}
