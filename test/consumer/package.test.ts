// The path a user takes: `npm pack` the built package, install the tarball in a project outside the repository
// next to ESLint 9 (latest 9.x) or ESLint 10 and @typescript-eslint/parser, write the config a user writes
// (ESM `eslint.config.js`, CommonJS `eslint.config.cjs`, `defineConfig({ extends: ["locks/recommended"] })`),
// lint a copy of fixtures/ with the installed `eslint` binary and compare the exact (rule, line) findings with
// the fixtures' `// expect:` comments. The same lint with worker threads (`--concurrency`) must find the same.
// The type-aware setup of docs/typed-linting.md (and the README), copied from the page, is linted on a .ts file
// its tsconfig.json includes, one it does not include and a .js file.
// The packed tarball itself is checked too: its file list, publint and arethetypeswrong.
//
// Needs the npm registry (CI has it). Each ESLint major is installed once per run into a temporary project and
// reused by every config; npm's ordinary cache is shared, so a second run installs from it.
import { execFile, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import { runAudit } from "../../src/audit/index.js";
import { expectMarkers } from "../expect-markers.js";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));
const fixturesDir = join(repo, "fixtures");
const monorepoFixture = join(fixturesDir, "projects", "monorepo");
const INSTALL_TIMEOUT = 240_000;

/** The environment of `npm test` minus what npm sets for its own script (package fields, lifecycle, prefix). */
function cleanEnv(): NodeJS.ProcessEnv {
  const keep = new Set(["npm_config_cache", "npm_config_registry", "npm_config_userconfig"]);
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) || keep.has(k.toLowerCase())),
  );
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run("npm", args, { cwd, env: cleanEnv(), maxBuffer: 64 << 20, timeout: INSTALL_TIMEOUT });
  return stdout;
}

function newestMtime(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newestMtime(join(dir, e.name)) : /\.ts$/.test(e.name) ? statSync(join(dir, e.name)).mtimeMs : 0,
    ),
  );
}

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? fixtureFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/**
 * The lock-helpers callers, whose findings come through helpers of other modules: the editor reads those only with
 * `settings.locks.readImports: true` (fixtures.test.ts lints them so, the audit always), not in these default setups.
 */
const importingCallers = /^projects\/lock-helpers\/src\/(jobs|services)\//;

/** `path line rule` for every `// expect:` of a rule the recommended config enables, under the given prefix. */
function expectedFindings(prefix = "locks"): string[] {
  const out: string[] = [];
  for (const file of fixtureFiles(fixturesDir).filter(
    (f) => !f.startsWith(monorepoFixture) && !importingCallers.test(relative(fixturesDir, f)),
  )) {
    for (const { rule, line } of expectMarkers(readFileSync(file, "utf8"))) {
      if (rule in plugin.configs.recommended.rules)
        out.push(`${relative(fixturesDir, file)} ${line} ${rule.replace(/^locks\//, `${prefix}/`)}`);
    }
  }
  return out.sort();
}

interface LintResult {
  filePath: string;
  messages: { ruleId: string | null; line: number; message: string; fatal?: boolean }[];
}

/** Runs the project's own `eslint` binary over `src/` and returns `path line rule` for every message. */
async function lint(project: string, args: string[], target = "src"): Promise<string[]> {
  const bin = join(project, "node_modules", "eslint", "bin", "eslint.js");
  let stdout: string;
  try {
    ({ stdout } = await run(process.execPath, [bin, "--format", "json", ...args, target], {
      cwd: project,
      env: cleanEnv(),
      maxBuffer: 64 << 20,
    }));
  } catch (error) {
    // Exit code 1 means "problems found": the report is still on stdout.
    const e = error as { code?: number; stdout?: string; stderr?: string };
    if (e.code !== 1 || !e.stdout)
      throw new Error(`eslint ${args.join(" ")} failed (exit ${e.code}):\n${e.stderr ?? ""}`, { cause: error });
    stdout = e.stdout;
  }
  const results = JSON.parse(stdout) as LintResult[];
  return results
    .filter((r) => !importingCallers.test(relative(join(project, target), r.filePath)))
    .flatMap((r) =>
      r.messages.map(
        (m) => `${relative(join(project, target), r.filePath)} ${m.line} ${m.ruleId ?? `fatal: ${m.message}`}`,
      ),
    )
    .sort();
}

const configs = {
  // What the README shows: ESM, the config object spread next to the parser setting.
  "eslint.config.js": `import tsParser from "@typescript-eslint/parser";
import locks from "eslint-plugin-locks";

export default [
  { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
  { files: ["**/*.ts", "**/*.js"], ...locks.configs.recommended },
];
`,
  // CommonJS: require() returns the plugin object itself (the package exports it as "module.exports").
  "eslint.config.cjs": `const tsParser = require("@typescript-eslint/parser");
const locks = require("eslint-plugin-locks");

module.exports = [
  { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
  locks.configs.recommended,
];
`,
  // defineConfig with the config named by string: found under the plugin's name in \`plugins\`.
  "eslint.define.config.mjs": `import { defineConfig } from "eslint/config";
import tsParser from "@typescript-eslint/parser";
import locks from "eslint-plugin-locks";

export default defineConfig({
  files: ["**/*.ts", "**/*.js"],
  languageOptions: { parser: tsParser },
  plugins: { locks },
  extends: ["locks/recommended"],
});
`,
  // The plugin registered under another name: its rule ids are rewritten through meta.namespace.
  "eslint.alias.config.mjs": `import { defineConfig } from "eslint/config";
import tsParser from "@typescript-eslint/parser";
import locks from "eslint-plugin-locks";

export default defineConfig({
  files: ["**/*.ts", "**/*.js"],
  languageOptions: { parser: tsParser },
  plugins: { lk: locks },
  extends: ["lk/recommended"],
});
`,
  // Type-aware: the project service reads tsconfig.json; the fixtures' clients are not installed here, so their
  // receivers are \`any\` and every finding stays (lookalikes proved by types are test/typed/'s business).
  "eslint.typed.config.mjs": `import tsParser from "@typescript-eslint/parser";
import locks from "eslint-plugin-locks";

export default [
  {
    files: ["**/*.ts", "**/*.js"],
    languageOptions: { parser: tsParser, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  { files: ["**/*.ts", "**/*.js"], ...locks.configs["recommended-type-checked"] },
];
`,
  // The README's answer to unexplained disables: the community rule, plus unused directives reported.
  "eslint.comments.config.mjs": `import tsParser from "@typescript-eslint/parser";
import comments from "@eslint-community/eslint-plugin-eslint-comments/configs";
import locks from "eslint-plugin-locks";

export default [
  { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
  locks.configs.recommended,
  comments.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: { "@eslint-community/eslint-comments/require-description": "error" },
  },
];
`,
};

/** The config in a page's first ```js block after `heading`: what the page tells users to write. */
function snippet(file: string, heading: string): string {
  const text = readFileSync(join(repo, file), "utf8");
  const at = text.indexOf(heading);
  const block = at < 0 ? null : /```js\n([\s\S]*?)```/.exec(text.slice(at));
  if (!block) throw new Error(`${file} has no js block after ${JSON.stringify(heading)}`);
  return block[1]!;
}

const typedSetup = snippet("docs/typed-linting.md", "## Setup");

/**
 * One lock without a TTL (its client is not installed: `any`, the finding stays) and a Map written like SET … NX,
 * which only a program shows to be a Map: reported on line 4, and on line 8 too where the file gets no program.
 */
const typedModule = (ts: boolean) => `import Redis from "ioredis";
const redis = new Redis();
export async function lockReport(id${ts ? ": string" : ""}) {
  return redis.set(\`lock:report:\${id}\`, "1", "NX");
}
// a Map handed in: only its type tells it from a Redis client (one the module builds is never read as Redis)
export function lockLocal(memo${ts ? ": Map<string, string>" : ""}, id${ts ? ": string" : ""}) {
  return memo.set(\`lock:local:\${id}\`, "1", "NX");
}
`;

/** A module whose lock findings are silenced, once with a reason and once without. */
const suppressed = `import Redis from "ioredis";
const redis = new Redis();
export async function lockReport(id: string) {
  // eslint-disable-next-line locks/require-lock-ttl -- the key is deleted by the nightly cleanup job
  return redis.set(\`report:\${id}:lock\`, "1", "NX");
}
export async function lockExport(id: string) {
  // eslint-disable-next-line locks/require-lock-ttl
  return redis.set(\`export:\${id}:lock\`, "1", "NX");
}
`;

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    allowJs: true,
    noEmit: true,
    skipLibCheck: true,
    experimentalDecorators: true,
  },
  include: ["src/**/*"],
};

let work: string;
let tarball: string;
let packedFiles: string[];

beforeAll(async () => {
  const index = join(repo, "dist", "src", "index.js");
  if (
    !existsSync(index) ||
    statSync(index).mtimeMs < Math.max(newestMtime(join(repo, "src")), newestMtime(join(repo, "rules")))
  ) {
    throw new Error(
      "dist/ is missing or older than src/: run `npm run build` (npm test does) before the consumer tests",
    );
  }
  work = mkdtempSync(join(tmpdir(), "locks-consumer-"));
  // --ignore-scripts: prepack would clean and rebuild dist/ under the other test files' feet; npm test has built it.
  const packed = JSON.parse(await npm(["pack", "--ignore-scripts", "--json", "--pack-destination", work], repo)) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(work, packed[0]!.filename);
  packedFiles = packed[0]!.files.map((f) => f.path).sort();
}, INSTALL_TIMEOUT);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the packed tarball", () => {
  it("holds the built plugin, its docs, README, LICENSE and package.json, and nothing else", () => {
    const allowed = /^(package\.json|README\.md|LICENSE|dist\/(src|rules)\/.+\.(js|d\.ts)|docs\/.+\.md)$/;
    expect(packedFiles.filter((f) => !allowed.test(f))).toEqual([]);
    for (const f of packedFiles)
      expect(f).not.toMatch(/(^|\/)(test|fixtures|scripts|bench|proof)\/|\.map$|\.test\.|(performance|proof)\.md$/);
    expect(packedFiles).toEqual(
      expect.arrayContaining(["package.json", "README.md", "LICENSE", "dist/src/index.js", "dist/src/index.d.ts"]),
    );
    for (const id of Object.keys(plugin.rules)) {
      expect(packedFiles).toContain(`dist/rules/${id}.js`);
      expect(packedFiles).toContain(`docs/rules/${id}.md`);
    }
  });

  it("passes publint --strict", async () => {
    const { stdout } = await run(
      process.execPath,
      [join(repo, "node_modules/publint/src/cli.js"), "run", tarball, "--strict"],
      { cwd: repo },
    );
    expect(stdout).toContain("All good!");
  }, 60_000);

  it("passes arethetypeswrong (ESM only: require() of it needs Node's require(esm), which engines guarantees)", async () => {
    const bin = join(repo, "node_modules/@arethetypeswrong/cli/dist/index.js");
    const { stdout } = await run(process.execPath, [bin, tarball, "--profile", "esm-only", "--format", "json"], {
      cwd: repo,
      maxBuffer: 16 << 20,
    });
    const report = JSON.parse(stdout) as { analysis: { problems: { kind: string; resolutionKind?: string }[] } };
    const problems = report.analysis.problems.filter(
      (p) => p.resolutionKind !== "node10" && p.resolutionKind !== "node16-cjs",
    );
    expect(problems).toEqual([]);
  }, 60_000);
});

describe("the type-aware setup", () => {
  it("is the same in the README as in docs/typed-linting.md", () => {
    expect(snippet("README.md", "### Type-aware mode")).toBe(typedSetup.replace(/, \/\/ or .*$/m, ","));
  });
});

describe.each([
  ["ESLint 9", "eslint@^9.39.0"],
  ["ESLint 10", "eslint@^10.0.0"],
])("a project with %s", (_name, eslintSpec) => {
  let project: string;
  let singleThreaded: string[];

  beforeAll(async () => {
    project = join(work, eslintSpec.replace(/\W+/g, "-"));
    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2),
    );
    try {
      await npm(
        [
          "install",
          "--no-audit",
          "--no-fund",
          "--prefer-offline",
          "--save-dev",
          tarball,
          eslintSpec,
          "@typescript-eslint/parser@8.72.0",
          "typescript-eslint@8.72.0",
          "@eslint-community/eslint-plugin-eslint-comments@4.8.1",
        ],
        project,
      );
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(
        `npm install of ${eslintSpec} into ${project} failed; the consumer tests need the npm registry.\n${(e.stderr ?? e.message).slice(-2000)}`,
        { cause: error },
      );
    }
    // fixtures/projects/monorepo is audited below with locks-audit: its other plugins' comments are its point.
    cpSync(fixturesDir, join(project, "src"), {
      recursive: true,
      filter: (f) => !f.endsWith(".md") && !f.startsWith(monorepoFixture),
    });
    for (const [file, text] of Object.entries(configs)) writeFileSync(join(project, file), text);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
    mkdirSync(join(project, "suppressions"));
    writeFileSync(join(project, "suppressions", "locks.ts"), suppressed);
    // The documented type-aware setup in a project of its own: src/ in its tsconfig.json, scripts/ not.
    const documented = join(project, "documented");
    mkdirSync(join(documented, "src"), { recursive: true });
    mkdirSync(join(documented, "scripts"));
    writeFileSync(join(documented, "eslint.config.js"), typedSetup);
    writeFileSync(
      join(documented, "eslint.service-only.config.js"),
      typedSetup.replace(/projectService: \{[^}]*\}/, "projectService: true"),
    );
    writeFileSync(
      join(documented, "tsconfig.json"),
      JSON.stringify(
        {
          compilerOptions: {
            target: "ES2022",
            module: "NodeNext",
            moduleResolution: "NodeNext",
            noEmit: true,
            skipLibCheck: true,
          },
          include: ["src"],
        },
        null,
        2,
      ),
    );
    writeFileSync(join(documented, "src", "report.ts"), typedModule(true));
    writeFileSync(join(documented, "scripts", "backfill.ts"), typedModule(true));
    writeFileSync(join(documented, "scripts", "sweep.js"), typedModule(false));
  }, INSTALL_TIMEOUT);

  it("installed the major it asked for, and the plugin from the tarball", () => {
    const version = (
      JSON.parse(readFileSync(join(project, "node_modules/eslint/package.json"), "utf8")) as { version: string }
    ).version;
    expect(version.split(".")[0]).toBe(eslintSpec.match(/@\^(\d+)/)![1]);
    const installed = JSON.parse(
      readFileSync(join(project, "node_modules/eslint-plugin-locks/package.json"), "utf8"),
    ) as { version: string };
    expect(installed.version).toBe(plugin.meta.version);
    expect(existsSync(join(project, "node_modules/eslint-plugin-locks/dist/src/index.js"))).toBe(true);
  });

  it("eslint.config.js (ESM, the recommended config spread) reports exactly the fixtures' expectations", async () => {
    singleThreaded = await lint(project, ["--concurrency", "off"]);
    expect(expectedFindings().length).toBeGreaterThan(20);
    expect(singleThreaded).toEqual(expectedFindings());
  }, 120_000);

  it("eslint.config.cjs (require) reports the same", async () => {
    expect(await lint(project, ["--config", "eslint.config.cjs"])).toEqual(expectedFindings());
  }, 120_000);

  it('defineConfig({ extends: ["locks/recommended"] }) reports the same', async () => {
    expect(await lint(project, ["--config", "eslint.define.config.mjs"])).toEqual(expectedFindings());
  }, 120_000);

  it("defineConfig under another plugin name (lk/recommended) renames the rules through meta.namespace", async () => {
    expect(await lint(project, ["--config", "eslint.alias.config.mjs"])).toEqual(expectedFindings("lk"));
  }, 120_000);

  it('configs["recommended-type-checked"] with projectService reports the same when no receiver type resolves', async () => {
    expect(await lint(project, ["--config", "eslint.typed.config.mjs"])).toEqual(expectedFindings());
  }, 120_000);

  it("docs/typed-linting.md's setup lints a .ts file outside the tsconfig.json without a parsing error, with types", async () => {
    // Both .ts files get a program (the Map on line 8 is dropped); the .js file is read syntactically.
    expect(await lint(project, ["--config", "documented/eslint.config.js"], "documented")).toEqual([
      "scripts/backfill.ts 4 locks/require-lock-ttl",
      "scripts/sweep.js 4 locks/require-lock-ttl",
      "scripts/sweep.js 8 locks/require-lock-ttl",
      "src/report.ts 4 locks/require-lock-ttl",
    ]);
    // The control: with `projectService: true` alone, the file outside the tsconfig.json is refused.
    const serviceOnly = await lint(project, ["--config", "documented/eslint.service-only.config.js"], "documented");
    expect(serviceOnly.filter((m) => m.startsWith("scripts/backfill.ts"))).toEqual([
      expect.stringMatching(/ fatal: Parsing error: .*backfill\.ts was not found by the project service/),
    ]);
    expect(serviceOnly.filter((m) => !m.startsWith("scripts/backfill.ts"))).toEqual([
      "scripts/sweep.js 4 locks/require-lock-ttl",
      "scripts/sweep.js 8 locks/require-lock-ttl",
      "src/report.ts 4 locks/require-lock-ttl",
    ]);
  }, 120_000);

  it("the README's suppression setup reports a locks/* disable without a reason, and only that one", async () => {
    expect(await lint(project, ["--config", "eslint.comments.config.mjs"], "suppressions")).toEqual([
      "locks.ts 8 @eslint-community/eslint-comments/require-description",
    ]);
  }, 120_000);

  it("npx locks-audit from the tarball on fixtures/projects/monorepo: its own findings only, pairing across packages, exit codes", async () => {
    const dir = join(project, "monorepo");
    cpSync(monorepoFixture, dir, { recursive: true });
    const audit = (args: string[]) =>
      spawnSync(join(project, "node_modules", ".bin", "locks-audit"), args, {
        cwd: dir,
        env: cleanEnv(),
        encoding: "utf8",
      });
    const r = audit(["--format", "json"]);
    expect([r.status, r.stderr]).toEqual([0, ""]);
    // The same report as the repository's own build gives on the fixture in place.
    expect(r.stdout).toBe((await runAudit({ cwd: monorepoFixture, format: "json", progress: false })).output);
    const report = JSON.parse(r.stdout) as {
      summary: Record<string, number>;
      answered: { file: string; answeredBy: { file: string } }[];
    };
    expect(report.summary).toEqual({ locks: 4, findings: 1, errors: 0, warnings: 1, answered: 2, silenced: 2 });
    expect(report.answered.map((a) => `${a.file} ${a.answeredBy.file}`)).toContain(
      "packages/jobs/src/render.ts apps/worker/src/sweeper.ts",
    );
    expect(audit(["--max-warnings", "0"]).status).toBe(1);
    const usage = audit(["--max-findings", "x"]);
    expect([usage.status, usage.stderr]).toEqual([
      2,
      `error: option '--max-findings <n>' argument 'x' is invalid. --max-findings takes a whole number (0 or more), not "x".\n`,
    ]);
  }, 120_000);

  it("--concurrency auto reports the same as single-threaded", async () => {
    expect(await lint(project, ["--concurrency", "auto"])).toEqual(singleThreaded);
  }, 120_000);

  it("--concurrency 2 (two worker threads even on a two-core machine) reports the same as single-threaded", async () => {
    expect(await lint(project, ["--concurrency", "2"])).toEqual(singleThreaded);
  }, 120_000);
});
