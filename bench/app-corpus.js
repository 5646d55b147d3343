// The application corpus, fetched on demand: `node bench/app-corpus.js` (also called by `npm run bench -- --corpus
// application` and the zero-crash test). Each package of bench/app-corpus.json is downloaded as its npm tarball
// (`npm pack`, which installs no dependency: only the package's own files are linted), checked against the integrity
// recorded there, and unpacked into node_modules/.cache/locks-app-corpus/. A package already unpacked at its pinned
// version is not fetched again. Needs the npm registry, like `npm ci`.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { appCorpusConfigPath, appCorpusDir, repoRoot } from "./corpus.js";

/** The tarball's integrity as npm records it: `sha512-` and the base64 digest. */
function integrityOf(file) {
  return `sha512-${createHash("sha512").update(readFileSync(file)).digest("base64")}`;
}

/**
 * Fetches every package of the application corpus that is not yet unpacked at its pinned version.
 * @param {{ root?: string, log?: (line: string) => void }} [options]
 * @returns {{ fetched: string[], present: string[] }} the packages fetched now and those already there.
 */
export function fetchAppCorpus(options = {}) {
  const root = options.root ?? repoRoot;
  const log = options.log ?? (() => {});
  const config = JSON.parse(readFileSync(appCorpusConfigPath, "utf8"));
  const fetched = [];
  const present = [];
  for (const pkg of config.packages) {
    const dir = appCorpusDir(pkg, root);
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).version === pkg.version) {
      present.push(pkg.name);
      continue;
    }
    const parent = dirname(dir);
    mkdirSync(dirname(parent), { recursive: true });
    const tmp = mkdtempSync(join(dirname(parent), ".fetch-"));
    try {
      log(`fetching ${pkg.name}@${pkg.version}`);
      const out = execFileSync(
        "npm",
        ["pack", `${pkg.name}@${pkg.version}`, "--pack-destination", tmp, "--json", "--silent"],
        {
          cwd: tmp,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const [packed] = JSON.parse(out);
      const tarball = join(tmp, packed.filename);
      const integrity = integrityOf(tarball);
      if (integrity !== pkg.integrity) {
        throw new Error(
          `${pkg.name}@${pkg.version}: the tarball's integrity is ${integrity}, bench/app-corpus.json records ${pkg.integrity}`,
        );
      }
      const unpacked = join(tmp, "unpacked");
      mkdirSync(unpacked);
      execFileSync("tar", ["-xzf", tarball, "-C", unpacked], { stdio: ["ignore", "ignore", "pipe"] });
      rmSync(parent, { recursive: true, force: true });
      mkdirSync(parent, { recursive: true });
      renameSync(join(unpacked, "package"), dir);
      fetched.push(pkg.name);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return { fetched, present };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const { fetched, present } = fetchAppCorpus({ log: (line) => console.error(line) });
    console.error(
      `application corpus: ${fetched.length} fetched, ${present.length} already there (node_modules/.cache/locks-app-corpus/)`,
    );
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
