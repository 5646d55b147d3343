// locks-audit on projects written the way real ones are: other tools' comments everywhere, the project's own ESLint
// config, workspaces whose packages import each other by name, tsconfig references and extends, JS beside TS; and
// exit statuses a CI step can trust.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/audit/index.js";
import { discoverProject } from "../../src/audit/discover.js";
import { ownMessages, withoutEslintEnv } from "../../src/audit/own-findings.js";
import { cli, copyProject, projects } from "./helpers.js";

const monorepo = join(projects, "monorepo");

/** A project in a temporary folder from `{ "path/in/it": text }`. */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "locks-audit-real-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const run = (args: string[], cwd: string) => spawnSync(process.execPath, [cli, ...args], { cwd, encoding: "utf8" });
const where = (list: readonly { ruleId: string; file: string; line: number }[]) =>
  list.map((f) => `${f.file}:${f.line} ${f.ruleId}`);

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** A Redis lock with no TTL: the one finding many of these projects carry. */
const noTtl = (name: string) => `import Redis from "ioredis";
const redis = new Redis();
export async function lock${name}(id) {
  return redis.set(\`${name}:\${id}:lock\`, "1", "NX");
}
`;

describe("only the audit's own findings", () => {
  it("other plugins' disable comments, inline configs, eslint-env and globals are not findings", async () => {
    const dir = project({
      "src/ui.ts": `/* eslint-env browser */
/* global gtag */
/* eslint react-hooks/exhaustive-deps: "off" */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const track = (e: any) => gtag("event", e); // eslint-disable-line turbo/no-undeclared-env-vars
/* eslint-disable import/no-cycle */
export {};
`,
      "src/lock.ts": `/* eslint-env node */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const opts: any = {};
${noTtl("Report")}`,
    });
    const { result, exitCode } = await runAudit({ cwd: dir, parseAll: true });
    expect(where(result.findings)).toEqual(["src/lock.ts:7 locks/require-lock-ttl"]);
    expect(exitCode).toBe(1);
  });

  it("a locks/* disable comment is honoured as in the editor, and listed with its reason", async () => {
    const dir = project({
      "a.js": noTtl("A").replace(
        "  return redis.set",
        "  // eslint-disable-next-line locks/require-lock-ttl, no-console -- the cleanup job deletes it\n  return redis.set",
      ),
      "b.js": noTtl("B").replace(
        "  return redis.set",
        "  // eslint-disable-next-line locks/require-lock-ttl\n  return redis.set",
      ),
    });
    const { result, exitCode, output } = await runAudit({ cwd: dir });
    expect([result.findings, exitCode]).toEqual([[], 0]);
    expect(result.silenced.map((f) => [f.file, f.line, f.ruleId, f.justification])).toEqual([
      ["a.js", 5, "locks/require-lock-ttl", "the cleanup job deletes it"],
      ["b.js", 5, "locks/require-lock-ttl", ""],
    ]);
    expect(output).toContain("a.js:5:16  locks/require-lock-ttl  -- the cleanup job deletes it");
    expect(output).toContain("b.js:5:16  locks/require-lock-ttl  (no reason given)");
  });

  it("a real parse error is still a finding; a disable naming a locks/* rule that does not exist is too", async () => {
    const dir = project({
      "broken.js": "import Redis from 'ioredis';\nconst redis = new Redis();\nawait redis.set(k, '1', 'NX'\n",
      "typo.js": noTtl("T").replace(
        "  return redis.set",
        "  // eslint-disable-next-line locks/require-ttl -- renamed rule\n  return redis.set",
      ),
    });
    const { result, exitCode } = await runAudit({ cwd: dir });
    expect(where(result.findings)).toEqual([
      "broken.js:4 locks-audit/parse-error",
      "typo.js:4 locks/require-ttl",
      "typo.js:5 locks/require-lock-ttl",
    ]);
    expect(result.findings[1]!.message).toBe("Definition for rule 'locks/require-ttl' was not found.");
    expect(exitCode).toBe(1);
  });

  it("narrows ESLint's messages: unknown rules, eslint-env and unused directives of other rules go, the plugin's stay", () => {
    const m = (ruleId: string | null, message: string, extra: object = {}) => ({
      ruleId,
      message,
      line: 1,
      column: 1,
      severity: 2 as const,
      ...extra,
    });
    const fix = { range: [0, 10] as [number, number], text: "" };
    const kept = ownMessages(
      [
        m(
          "@typescript-eslint/no-explicit-any",
          "Definition for rule '@typescript-eslint/no-explicit-any' was not found.",
        ),
        m(null, "/* eslint-env */ comments are no longer supported.", { fatal: true }),
        m(null, "Parsing error: ')' expected.", { fatal: true }),
        m("locks/require-lock-ttl", "Q1 …"),
        m(null, "Unused eslint-disable directive (no problems were reported from 'no-console').", { severity: 1, fix }),
        m(null, "Unused eslint-disable directive (no problems were reported).", { severity: 1, fix }),
        m(
          null,
          "Unused eslint-disable directive (no problems were reported from 'no-console' or 'locks/atomic-claim').",
          { severity: 1, fix },
        ),
        m(null, "Unused eslint-disable directive (no problems were reported from 'locks/atomic-claim').", {
          severity: 1,
          fix,
        }),
      ],
      2,
    );
    expect(kept.map((k) => [k.ruleId, k.message, k.severity, "fix" in k])).toEqual([
      [null, "Parsing error: ')' expected.", 2, false],
      ["locks/require-lock-ttl", "Q1 …", 2, false],
      [null, "Unused eslint-disable directive (no problems were reported from 'locks/atomic-claim').", 2, false],
      [null, "Unused eslint-disable directive (no problems were reported from 'locks/atomic-claim').", 2, true],
    ]);
    // With the project's reportUnusedDisableDirectives off, no unused directive is reported at all.
    expect(
      ownMessages(
        [
          m(null, "Unused eslint-disable directive (no problems were reported from 'locks/atomic-claim').", {
            severity: 1,
          }),
        ],
        0,
      ),
    ).toEqual([]);
  });

  it("makes eslint-env comments ordinary comments without moving a line or column", () => {
    const text = "/* eslint-env node, mocha */\n/*eslint-env browser*/\nconst s = '/* eslint-envy */';\n";
    const out = withoutEslintEnv(text);
    expect(out).toBe("/* eslint_env node, mocha */\n/*eslint_env browser*/\nconst s = '/* eslint-envy */';\n");
    expect(out.length).toBe(text.length);
  });
});

describe("the project's ESLint config", () => {
  const unusedDirective = (severity: string) => ({
    "eslint.config.mjs": `export default [{ linterOptions: { reportUnusedDisableDirectives: "${severity}" } }];\n`,
    "lock.js": `import Redis from "ioredis";
const redis = new Redis();
export async function lock(id, token) {
  // eslint-disable-next-line locks/require-lock-ttl, no-console -- outlived its code
  return redis.set(\`job:\${id}:lock\`, token, "PX", 30000, "NX");
}
`,
  });

  it("without one, an unused locks/* disable comment is not reported", async () => {
    const { result, exitCode } = await runAudit({ cwd: project({ "lock.js": unusedDirective("error")["lock.js"] }) });
    expect([result.findings, exitCode]).toEqual([[], 0]);
  });

  it("reports unused locks/* disable comments at its reportUnusedDisableDirectives severity, naming only the plugin's rules", async () => {
    const error = await runAudit({ cwd: project(unusedDirective("error")) });
    expect(error.result.findings.map((f) => [f.file, f.line, f.ruleId, f.severity, f.message])).toEqual([
      [
        "lock.js",
        4,
        "locks-audit/unused-disable-directive",
        "error",
        "Unused eslint-disable directive (no problems were reported from 'locks/require-lock-ttl').",
      ],
    ]);
    expect(error.exitCode).toBe(1);
    const warn = await runAudit({ cwd: project(unusedDirective("warn")) });
    expect(warn.result.findings.map((f) => f.severity)).toEqual(["warning"]);
    expect(warn.exitCode).toBe(0);
    expect((await runAudit({ cwd: project(unusedDirective("warn")), maxWarnings: 0 })).exitCode).toBe(1);
    const off = await runAudit({ cwd: project(unusedDirective("off")) });
    expect([off.result.findings, off.exitCode]).toEqual([[], 0]);
  });

  it("takes settings.locks from it, module by module; --no-eslint-config and --eslint-config choose", async () => {
    const claim = `export async function take(pool, id) {
  await pool.query("UPDATE invoices SET state = 'RESERVED' WHERE id = $1 AND state = 'OPEN'", [id]);
}
`;
    const files = {
      "eslint.config.mjs": `export default [{ files: ["billing/**"], settings: { locks: { inProgressValues: ["RESERVED"] } } }];\n`,
      "other.config.mjs": "export default [{}];\n",
      "billing/take.js": claim,
      "shipping/take.js": claim,
    };
    const dir = project(files);
    expect(where((await runAudit({ cwd: dir })).result.findings)).toEqual([
      "billing/take.js:2 locks/require-stale-recovery",
    ]);
    expect((await runAudit({ cwd: dir, eslintConfig: false })).result.findings).toEqual([]);
    expect((await runAudit({ cwd: dir, eslintConfig: "other.config.mjs" })).result.findings).toEqual([]);
    // settings passed to runAudit override the project's
    expect(
      (await runAudit({ cwd: dir, settings: { locks: { inProgressValues: ["SHIPPING"] } } })).result.findings,
    ).toEqual([]);
  });

  it("a config that cannot be loaded is a warning and the defaults are used; one named with --eslint-config is an error (exit 2)", () => {
    const dir = project({
      "eslint.config.mjs": `import nope from "eslint-plugin-not-installed";\nexport default [nope.configs.recommended];\n`,
      "lock.js": noTtl("L"),
    });
    const looked = run(["--format", "json"], dir);
    expect(looked.status).toBe(1);
    expect(JSON.parse(looked.stdout).findings.map((f: { ruleId: string }) => f.ruleId)).toEqual([
      "locks/require-lock-ttl",
    ]);
    expect(looked.stderr).toMatch(
      /^locks-audit: warning: could not load the project's ESLint config \(.*eslint-plugin-not-installed.*\); auditing with the plugin's defaults: no settings\.locks, and unused locks\/\* disable comments are not reported\. Pass --no-eslint-config to skip it, or install what the config imports\.\n$/,
    );
    expect(run(["--no-eslint-config"], dir).stderr).toBe("");
    const named = run(["--eslint-config", "eslint.config.mjs"], dir);
    expect(named.status).toBe(2);
    expect(named.stderr).toMatch(
      /^locks-audit: cannot load the ESLint config .*eslint\.config\.mjs: .*eslint-plugin-not-installed/,
    );
    const missing = run(["--eslint-config", "nope.mjs"], dir);
    expect([missing.status, missing.stderr]).toEqual([
      2,
      `locks-audit: --eslint-config ${join(dir, "nope.mjs")}: no such file\n`,
    ]);
  });

  it("invalid settings.locks in it stop the audit with exit 2 and the setting's name", () => {
    const dir = project({
      "eslint.config.mjs": `export default [{ settings: { locks: { stateFields: "status" } } }];\n`,
      "lock.js": noTtl("L"),
    });
    const r = run([], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'locks-audit: invalid settings.locks for lock.js: eslint-plugin-locks: settings.locks.stateFields must be an array of non-empty strings. Got "status".\n',
    );
  });
});

describe("monorepos", () => {
  it("fixtures/projects/monorepo: references, workspace packages with and without a tsconfig, every module read", () => {
    const p = discoverProject({ cwd: monorepo });
    expect(p.configFiles).toEqual([
      "tsconfig.json",
      "packages/db/tsconfig.json",
      "packages/jobs/tsconfig.json",
      "apps/worker/tsconfig.json",
    ]);
    expect(p.packages.map((x) => `${x.name} ${x.rel}`).sort()).toEqual([
      "@acme/admin apps/admin",
      "@acme/db packages/db",
      "@acme/jobs packages/jobs",
      "@acme/worker apps/worker",
      "acme ",
    ]);
    expect(p.modules.map((m) => m.rel)).toEqual([
      "apps/admin/lib/pool.js",
      "apps/admin/scripts/reset-renders.js",
      "apps/admin/scripts/unlock-export.js",
      "apps/worker/src/main.ts",
      "apps/worker/src/requeue.ts",
      "apps/worker/src/sweeper.ts",
      "packages/db/src/client.ts",
      "packages/db/src/index.ts",
      "packages/jobs/src/index.ts",
      "packages/jobs/src/invoices.ts",
      "packages/jobs/src/render.ts",
      "packages/jobs/src/reports.ts",
      "packages/jobs/src/transcribe.ts",
    ]);
  });

  it("resolves imports of workspace packages by name to their sources, and paths from an extended base config", () => {
    const p = discoverProject({ cwd: monorepo });
    const abs = (rel: string) => join(monorepo, rel);
    // main: dist/index.js (not in the repository) -> src/index.ts; exports "." and "./*" -> src/
    expect(p.importsOf(abs("apps/worker/src/sweeper.ts"))).toEqual([
      abs("packages/db/src/index.ts"),
      abs("packages/jobs/src/index.ts"),
    ]);
    expect(p.resolveModule("@acme/jobs/render", abs("apps/worker/src/main.ts"))).toBe(
      abs("packages/jobs/src/render.ts"),
    );
    expect(p.resolveModule("@acme/worker/src/requeue", abs("packages/jobs/src/transcribe.ts"))).toBe(
      abs("apps/worker/src/requeue.ts"),
    );
    // "@worker/*" is a paths alias of tsconfig.base.json, which the packages' tsconfigs extend
    expect(p.resolveModule("@worker/requeue", abs("packages/jobs/src/transcribe.ts"))).toBe(
      abs("apps/worker/src/requeue.ts"),
    );
    expect(p.resolveModule("@acme/nope", abs("apps/worker/src/main.ts"))).toBeUndefined();
  });

  it("pairs a claim in one package with the sweeper in another that imports it by name, and exits 0", async () => {
    const { result, exitCode } = await runAudit({ cwd: monorepo, format: "json" });
    expect(exitCode).toBe(0);
    const render = result.locks.find((l) => l.name === "renderJob.status = RENDERING")!;
    expect(render).toMatchObject({
      file: "packages/jobs/src/render.ts",
      q1: { status: "answered", file: "apps/worker/src/sweeper.ts" },
      q2: { status: "answered" },
    });
    // The directive names its module through the base config's alias; the RESERVED claim exists only in the
    // project's vocabulary (its eslint.config.mjs).
    expect(result.locks.map((l) => [l.file, l.name, l.q1.status, l.q1.file ?? ""])).toEqual([
      ["packages/jobs/src/invoices.ts", "invoice.state = RESERVED", "answered", "apps/worker/src/requeue.ts"],
      ["packages/jobs/src/render.ts", "renderJob.status = RENDERING", "answered", "apps/worker/src/sweeper.ts"],
      ["packages/jobs/src/reports.ts", "report:*:lock", "unanswered", ""],
      ["packages/jobs/src/transcribe.ts", "transcript.state = TRANSCRIBING", "answered", "apps/worker/src/requeue.ts"],
    ]);
    expect(result.findings.map((f) => [f.file, f.line, f.ruleId, f.severity])).toEqual([
      ["apps/admin/scripts/unlock-export.js", 10, "locks-audit/unused-disable-directive", "warning"],
    ]);
    expect(result.silenced.map((f) => [f.file, f.line, f.ruleId, f.justification])).toEqual([
      // the admin script's start-time reset, a flaw of its own (progress-based-staleness in the editor), justified
      [
        "apps/admin/scripts/reset-renders.js",
        10,
        "locks/progress-based-staleness",
        "run by hand only, with every worker stopped",
      ],
      [
        "packages/jobs/src/reports.ts",
        9,
        "locks/require-lock-ttl",
        "the key names its day and the cleanup job deletes it",
      ],
    ]);
    // Every `// expect:` in the project is a rule finding the audit reports or answers, and nothing else is.
    const expected = listFiles(monorepo).flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((text, i) => {
          const m = /\/\/ expect: ([\w-]+(?:, [\w-]+)*)\s*$/.exec(text);
          return m ? m[1]!.split(", ").map((rule) => `${relative(monorepo, file)}:${i + 1} locks/${rule}`) : [];
        }),
    );
    expect(where([...result.findings, ...result.answered].filter((f) => f.ruleId.startsWith("locks/"))).sort()).toEqual(
      expected.sort(),
    );
  });

  it("the package names are what pair them: with the names unresolvable, the admin script's start-time reset is taken instead", async () => {
    // Both recover the claim; the worker's sweeper wins because it is near the claim in the import graph (through
    // "@acme/db" and "@acme/jobs"). Rename the packages and those imports resolve to nothing: the far admin script
    // (first by path) answers. Its start-time judgement is the lock's Q2, and stays what the script's own disable
    // comment made it (silenced with its reason), not a second, remote finding.
    const dir = copyProject("monorepo");
    for (const pkg of ["packages/db/package.json", "packages/jobs/package.json"]) {
      const file = join(dir, pkg);
      writeFileSync(file, readFileSync(file, "utf8").replace(/"@acme\/(db|jobs)"/, '"@other/$1"'));
    }
    const { result, exitCode } = await runAudit({ cwd: dir });
    expect(result.locks.find((l) => l.name === "renderJob.status = RENDERING")!.q1.file).toBe(
      "apps/admin/scripts/reset-renders.js",
    );
    const render = result.locks.find((l) => l.name === "renderJob.status = RENDERING")!;
    expect(render.q2).toMatchObject({ status: "unanswered", file: "apps/admin/scripts/reset-renders.js" });
    expect(where(result.findings.filter((f) => f.severity === "error"))).toEqual([]);
    expect(where(result.silenced)).toContain("apps/admin/scripts/reset-renders.js:10 locks/progress-based-staleness");
    expect(exitCode).toBe(0);
  });

  it("pnpm-workspace.yaml, yarn's workspaces.packages, a negated glob, and a tsconfig extending a workspace package that is not installed", () => {
    const base = {
      "tooling/tsconfig/package.json": `{ "name": "@org/tsconfig" }`,
      "tooling/tsconfig/base.json": JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          paths: { "#jobs/*": ["../../packages/jobs/src/*"] },
        },
      }),
      "packages/jobs/package.json": `{ "name": "@org/jobs", "main": "./build/main.js" }`,
      "packages/jobs/tsconfig.json": JSON.stringify({
        extends: "@org/tsconfig/base.json",
        compilerOptions: { outDir: "build", rootDir: "src" },
        include: ["src"],
      }),
      "packages/jobs/src/main.ts": "export const x = 1;\n",
      "packages/jobs/src/main.test.ts": "export {};\n",
      "packages/legacy/package.json": `{ "name": "@org/legacy" }`,
      "packages/legacy/index.js": "export const y = 2;\n",
      "apps/api/package.json": `{ "name": "@org/api" }`,
      "apps/api/server.ts": 'import { x } from "@org/jobs";\nimport { z } from "#jobs/main";\n',
      "apps/api/tsconfig.json": JSON.stringify({ extends: "@org/tsconfig/base.json", include: ["*.ts"] }),
    };
    const pnpm = project({
      ...base,
      "package.json": `{ "name": "org" }`,
      "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n  - apps/*\n  - tooling/*\n  - '!packages/legacy'\n",
    });
    const p = discoverProject({ cwd: pnpm });
    // the package's tsconfig includes src/, tests too (as tsc reads it); the negated package is not read
    expect(p.modules.map((m) => m.rel)).toEqual([
      "apps/api/server.ts",
      "packages/jobs/src/main.test.ts",
      "packages/jobs/src/main.ts",
    ]);
    expect(p.importsOf(join(pnpm, "apps/api/server.ts"))).toEqual([join(pnpm, "packages/jobs/src/main.ts")]);

    const yarn = project({
      ...base,
      "package.json": JSON.stringify({ name: "org", workspaces: { packages: ["packages/*", "apps/*", "tooling/*"] } }),
    });
    expect(discoverProject({ cwd: yarn }).modules.map((m) => m.rel)).toEqual([
      "apps/api/server.ts",
      "packages/jobs/src/main.test.ts",
      "packages/jobs/src/main.ts",
      "packages/legacy/index.js",
    ]);
    rmSync(pnpm, { recursive: true, force: true });
    rmSync(yarn, { recursive: true, force: true });
  });

  it("no tsconfig and no workspaces declared: walks the folder, and every named package.json names a package", () => {
    const dir = project({
      "services/queue/package.json": `{ "name": "queue-lib", "main": "lib/index.js" }`,
      "services/queue/lib/index.js": "export const claim = () => 1;\n",
      "services/api/handler.js": 'import { claim } from "queue-lib";\nexport const h = claim;\n',
      "services/api/node_modules/dep/index.js": "export {};\n",
    });
    const p = discoverProject({ cwd: dir });
    expect(p.modules.map((m) => m.rel)).toEqual(["services/api/handler.js", "services/queue/lib/index.js"]);
    expect(p.importsOf(join(dir, "services/api/handler.js"))).toEqual([join(dir, "services/queue/lib/index.js")]);
  });
});

describe("exit statuses", () => {
  const dir = () => project({ "a.js": noTtl("A"), "b.js": noTtl("B") });

  it("0 nothing unanswered, 1 findings remain, --max-findings lets a known number through", () => {
    const d = dir();
    expect(run([], d).status).toBe(1);
    expect(run(["--max-findings", "1"], d).status).toBe(1);
    expect(run(["--max-findings", "2"], d).status).toBe(0);
    expect(run([], monorepo).status).toBe(0);
  });

  it("2 for a usage or configuration error, with one line that says what to do", () => {
    const d = dir();
    for (const args of [
      ["--max-findings", "-1"],
      ["--max-findings", "two"],
      ["--max-warnings", "1.5"],
    ]) {
      const r = run(args, d);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/takes a whole number \(0 or more\)/);
    }
    const unknown = run(["--strict"], d);
    expect([unknown.status, unknown.stderr]).toEqual([2, "error: unknown option '--strict'\n"]);
  });
});
