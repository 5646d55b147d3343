// locks-audit on the fixture projects: cross-module pairing, directives, plain JavaScript, path aliases, the
// paths argument, --diff, the formats, exit statuses and the errors a user can act on.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tsParser from "@typescript-eslint/parser";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import { AuditError, runAudit } from "../../src/audit/index.js";
import { discoverProject } from "../../src/audit/discover.js";
import { progressBar } from "../../src/audit/progress.js";
import { cli, commitAll, copyProject, projects, repoRoot } from "./helpers.js";
import { mayHoldLocks } from "../../src/rule-kit/inventory.js";
// @ts-expect-error: a plain ES module script without declarations
import { generateProject } from "../../scripts/gen-audit-project.js";

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}
const fixtureFiles = listFiles(join(repoRoot, "fixtures"));

const at = (name: string) => join(projects, name);

describe("cross-module pairing", () => {
  it("answers a claim with the sweeper in another module, and names it", async () => {
    const { result, exitCode } = await runAudit({ cwd: at("claim-sweeper"), format: "json" });
    expect(exitCode).toBe(0);
    expect(result.findings).toEqual([]);
    const job = result.locks.find((l) => l.name === "job.status = GENERATING")!;
    expect(job).toMatchObject({ kind: "claim", file: "src/jobs/start.ts", acquire: { line: 7 } });
    expect(job.q1).toMatchObject({ status: "answered", file: "src/jobs/sweeper.ts", at: { line: 9 } });
    expect(job.q2).toMatchObject({ status: "answered", how: "age judged by updatedAt in src/jobs/sweeper.ts" });
    expect(job.q3.status).toBe("answered");
    expect(result.answered).toEqual([
      expect.objectContaining({
        ruleId: "locks/require-stale-recovery",
        file: "src/jobs/start.ts",
        line: 7,
        answeredBy: { file: "src/jobs/sweeper.ts", line: 9, how: "stale recovery in src/jobs/sweeper.ts at line 9" },
      }),
    ]);
  });

  it("leaves a claim unanswered by another module's recovery of a different table, and flags a racy remote recovery", async () => {
    const project = (files: Record<string, string>) => {
      const dir = mkdtempSync(join(tmpdir(), "locks-audit-pair-"));
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      return dir;
    };
    const claim =
      "export async function claim(pool, id) {\n" +
      "  await pool.query(\"UPDATE jobs SET status = 'running', heartbeat_at = now() WHERE id = $1 AND status = 'queued'\", [id]);\n}\n";
    // Same field, same values, another table: not this claim's recovery.
    const reports =
      "export async function sweepReports(pool) {\n" +
      "  await pool.query(\"UPDATE reports SET status = 'queued' WHERE status = 'running' AND heartbeat_at < now() - interval '5 minutes'\");\n}\n";
    const lookalike = await runAudit({ cwd: project({ "claim.js": claim, "reports.js": reports }), format: "json" });
    expect(lookalike.exitCode).toBe(1);
    expect(lookalike.result.answered).toEqual([]);
    expect(lookalike.result.findings.map((f) => [f.ruleId, f.file, f.line])).toEqual([
      ["locks/require-stale-recovery", "claim.js", 2],
    ]);

    // The age checked in a SELECT, the write by id: it answers Q1. Its race is conditional-recovery's finding in the
    // sweeper's own module (the editor sees it too), so the audit does not repeat it as remote-race.
    const racy =
      "export async function sweep(pool) {\n" +
      "  const { rows } = await pool.query(\"SELECT id FROM jobs WHERE status = 'running' AND heartbeat_at < now() - interval '5 minutes'\");\n" +
      "  for (const row of rows) await pool.query(\"UPDATE jobs SET status = 'queued' WHERE id = $1 AND status = 'running'\", [row.id]);\n}\n";
    const raced = await runAudit({ cwd: project({ "claim.js": claim, "racy.js": racy }), format: "json" });
    expect(raced.exitCode).toBe(1);
    expect(raced.result.answered.map((f) => [f.ruleId, f.file, f.line])).toEqual([
      ["locks/require-stale-recovery", "claim.js", 2],
    ]);
    expect(raced.result.findings.map((f) => [f.ruleId, f.file, f.line])).toEqual([
      ["locks/conditional-recovery", "racy.js", 3],
    ]);
    expect(raced.result.locks[0]!.q3).toMatchObject({ status: "unanswered", file: "racy.js" });
  });

  it("verifies a directive that names the right module", async () => {
    const { result } = await runAudit({ cwd: at("claim-sweeper") });
    const exp = result.locks.find((l) => l.file === "src/exports/render.ts")!;
    expect(exp.directive).toMatchObject({ target: "src/exports/requeue.ts", at: { line: 5 } });
    expect(exp.q1).toMatchObject({ status: "answered", file: "src/exports/requeue.ts", at: { line: 6 } });
    expect(exp.q2.how).toBe("age judged by heartbeatAt in src/exports/requeue.ts");
  });

  it("lists key-value locks with their TTL and owner-checked release", async () => {
    const { result } = await runAudit({ cwd: at("claim-sweeper") });
    expect(result.locks.find((l) => l.kind === "kv")).toMatchObject({
      file: "src/cache/warm.ts",
      name: "lock:cdn-warm:*",
      q1: { status: "answered", how: "TTL on the acquire" },
      q3: { status: "answered", how: "owner-checked release" },
    });
  });

  it("reports a directive that points at no matching recovery, and one that names no module", async () => {
    const { result, exitCode } = await runAudit({ cwd: at("false-directive") });
    expect(exitCode).toBe(1);
    expect(result.findings.map((f) => [f.ruleId, f.file, f.line, f.column])).toEqual([
      ["locks-audit/false-directive", "src/transcribe.ts", 14, 3],
      ["locks-audit/false-directive", "src/transcribe.ts", 23, 3],
    ]);
    expect(result.findings[0]!.message).toBe(
      "Q1 (if the holder dies, who unlocks?): the locks-recovered-by directive for asset.status = PROCESSING (claimed at line 15) names src/cleanup.ts, which holds no stale recovery of it. The rule accepts the claim because of the directive, so a holder killed by SIGKILL, OOM or a deploy leaves the row locked with nothing to move it back. Point the directive at the module that recovers it, or add the recovery.",
    );
    expect(result.findings[1]!.message).toContain("(claimed at line 24) names no module of this project.");
    // the true directive (transcripts) is verified and answered
    expect(result.locks.find((l) => l.name.startsWith("transcript"))!.q1).toMatchObject({
      status: "answered",
      file: "src/cleanup.ts",
    });
  });

  it("reads a plain JavaScript project without a tsconfig, and judges the remote recovery's Q2", async () => {
    const { result, exitCode } = await runAudit({ cwd: at("plain-js") });
    expect(exitCode).toBe(1);
    expect(result.locks).toHaveLength(1);
    expect(result.locks[0]).toMatchObject({
      file: "lib/claim.js",
      q1: { status: "answered", file: "lib/reaper.js" },
      q2: { status: "unanswered" },
    });
    // The reaper's start-time test is its own flaw: the rule reports it in the editor too, and the audit does not repeat it.
    expect(result.findings.map((f) => [f.ruleId, f.file, f.line])).toEqual([
      ["locks/progress-based-staleness", "lib/reaper.js", 5],
    ]);
    expect(result.findings[0]!.message).toContain("judges age by started_at");
  });

  it("a lock-row sweeper in another module judged by the time the row was taken: remote-staleness (the rule sees no lock row there)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "locks-audit-lock-row-sweep-"));
    mkdirSync(join(dir, "src"));
    writeFileSync(
      join(dir, "src/lock.ts"),
      `import { Pool } from "pg";
const pool = new Pool();
export async function takeReportLock(name: string): Promise<boolean> {
  const { rowCount } = await pool.query("INSERT INTO report_locks (name, locked_at) VALUES ($1, now()) ON CONFLICT DO NOTHING", [name]);
  return rowCount === 1;
}
`,
    );
    writeFileSync(
      join(dir, "src/sweep.ts"),
      `import { Pool } from "pg";
const pool = new Pool();
export async function sweepReportLocks(): Promise<void> {
  await pool.query("DELETE FROM report_locks WHERE locked_at < now() - interval '1 hour'");
}
`,
    );
    const { result } = await runAudit({ cwd: dir, eslintConfig: false, progress: false });
    expect(result.findings.map((f) => [f.ruleId, f.file, f.line])).toEqual([
      ["locks-audit/remote-staleness", "src/sweep.ts", 4],
    ]);
    expect(result.findings[0]!.message).toContain("judges age by locked_at");
  });

  it("resolves a directive through the tsconfig's path aliases", async () => {
    const { result, exitCode } = await runAudit({ cwd: at("path-aliases") });
    expect(exitCode).toBe(0);
    expect(result.locks[0]!.q1).toMatchObject({ status: "answered", file: "src/maintenance/sweeper.ts" });
    const project = discoverProject({ cwd: at("path-aliases") });
    expect(project.importsOf(join(at("path-aliases"), "src/billing/invoice.ts"))).toEqual([
      join(at("path-aliases"), "src/db.ts"),
    ]);
  });

  it("--types: a repository typed through an alias and a delegate held under another name get their models", async () => {
    const syntax = await runAudit({ cwd: at("typed-receivers") });
    expect(syntax.exitCode).toBe(1);
    expect(syntax.result.locks.map((l) => l.name)).toEqual(["store.state = EXPORTING"]);
    const typed = await runAudit({ cwd: at("typed-receivers"), types: true });
    expect(typed.exitCode).toBe(0);
    expect(typed.result.locks.map((l) => [l.file, l.acquire.line, l.name, l.q1.file])).toEqual([
      ["src/export.service.ts", 13, "Export.state = EXPORTING", "src/export.sweeper.ts"],
      ["src/render.service.ts", 10, "RenderJob.status = RENDERING", "src/render.sweeper.ts"],
    ]);
    expect(typed.result.answered.map((f) => [f.file, f.line, f.ruleId])).toEqual([
      ["src/export.service.ts", 13, "locks/require-stale-recovery"],
      ["src/render.service.ts", 10, "locks/require-stale-recovery"],
    ]);
  });

  it("sharpens only with the audit's own program: a type-aware ESLint run of the rules reads syntax as before", async () => {
    const project = discoverProject({ cwd: at("typed-receivers") });
    const eslint = new ESLint({
      cwd: project.root,
      overrideConfigFile: true,
      ignore: false,
      overrideConfig: [
        {
          files: ["**/*.ts"],
          languageOptions: { parser: tsParser, parserOptions: { programs: project.createPrograms() } },
        },
        plugin.configs.recommended as never,
      ],
    });
    const results = await eslint.lintFiles([
      join(project.root, "src/render.service.ts"),
      join(project.root, "src/export.service.ts"),
    ]);
    expect(results.map((r) => r.messages.map((m) => `${m.line} ${m.ruleId}`))).toEqual([
      [],
      ["13 locks/require-stale-recovery"],
    ]);
    expect(results[1]!.messages[0]!.message).toContain("this write claims store.state = EXPORTING");
  });

  it("reports only on the paths given, still pairing with the whole project", async () => {
    const { result } = await runAudit({ cwd: at("claim-sweeper"), paths: ["src/jobs"] });
    expect(result.locks.map((l) => l.file)).toEqual(["src/jobs/start.ts"]);
    expect(result.locks[0]!.q1.file).toBe("src/jobs/sweeper.ts");
  });

  it("reads the tsconfig's include and exclude", () => {
    const dir = copyProject("claim-sweeper");
    writeFileSync(join(dir, "src/jobs/start.test.ts"), "export {};\n");
    mkdirSync(join(dir, "scripts"));
    writeFileSync(join(dir, "scripts/seed.ts"), "export {};\n");
    const rels = discoverProject({ cwd: dir }).modules.map((m) => m.rel);
    expect(rels).toContain("src/jobs/start.ts");
    expect(rels).not.toContain("src/jobs/start.test.ts");
    expect(rels).not.toContain("scripts/seed.ts");
  });
});

describe("same findings as the rules", () => {
  it.each(["claim-sweeper", "false-directive", "plain-js", "path-aliases", "typed-receivers"])(
    "%s: every rule finding is in the audit, found or answered",
    async (name) => {
      const eslint = new ESLint({
        cwd: at(name),
        overrideConfigFile: true,
        ignore: false,
        overrideConfig: [
          { files: ["**/*.{ts,js}"], languageOptions: { parser: tsParser } },
          plugin.configs.recommended as never,
        ],
      });
      const project = discoverProject({ cwd: at(name) });
      const rules = (await eslint.lintFiles(project.modules.map((m) => m.path))).flatMap((r) =>
        r.messages.map(
          (m) =>
            `${project.modules.find((x) => x.path === r.filePath)!.rel}:${m.line}:${m.column} ${m.ruleId} ${m.message}`,
        ),
      );
      const { result } = await runAudit({ cwd: at(name) });
      const audit = [...result.findings, ...result.answered]
        .filter((f) => f.ruleId.startsWith("locks/"))
        .map((f) => `${f.file}:${f.line}:${f.column} ${f.ruleId} ${f.message}`);
      expect(audit.sort()).toEqual(rules.sort());
    },
  );
});

describe("skipping modules with no candidate call", () => {
  it("changes nothing: the fixture projects and a generated one, with and without --parse-all", async () => {
    const generated = mkdtempSync(join(tmpdir(), "locks-audit-gen-"));
    generateProject(generated, 60);
    for (const cwd of [
      ...["claim-sweeper", "false-directive", "plain-js", "path-aliases", "typed-receivers"].map(at),
      generated,
    ]) {
      const fast = await runAudit({ cwd, format: "json" });
      const all = await runAudit({ cwd, format: "json", parseAll: true });
      expect(fast.output).toBe(all.output);
    }
  });

  it("mayHoldLocks says yes for every fixture with an expected finding, and no for a module of types and views", () => {
    for (const file of fixtureFiles) {
      const text = readFileSync(file, "utf8");
      // A module whose only lock calls are imported helpers' is parsed by the audit once it knows what its imports
      // export (lint.ts `followHelpers`), not for its own calls: it must import a module of the project.
      if (text.includes("// expect:"))
        expect([file, mayHoldLocks(text) || /from\s+["'](?:\.|@\/)/.test(text)]).toEqual([file, true]);
    }
    expect(
      mayHoldLocks(
        `export interface Job { id: string; status: "RUNNING" }\nexport const label = (j: Job) => j.items.map((i) => i.name).join(", ");\n`,
      ),
    ).toBe(false);
    expect(mayHoldLocks("const ok = await db.job.updateMany(args);")).toBe(true);
    expect(mayHoldLocks("await tx?.query<Row>(text)")).toBe(true);
    expect(mayHoldLocks('await client["set"](key, v)')).toBe(true);
    expect(mayHoldLocks("await sql`UPDATE jobs SET status = 'RUNNING'`")).toBe(true);
    expect(mayHoldLocks("if (running) return; running = true;")).toBe(true);
    expect(mayHoldLocks("if (running === true) return;")).toBe(false);
    // commands held bound to their client are called by another name
    expect(mayHoldLocks("const setnxAsync = promisify(client.setnx).bind(client);")).toBe(true);
    expect(mayHoldLocks("const pexpire = redisClient.pExpire.bind(redisClient);")).toBe(true);
    expect(mayHoldLocks("const render = view.render.bind(view);")).toBe(false);
  });
});

describe("--diff", () => {
  function repo() {
    const dir = copyProject("claim-sweeper");
    mkdirSync(join(dir, "src/legacy"));
    writeFileSync(
      join(dir, "src/legacy/reindex.ts"),
      `import { prisma } from "../db.js";

export async function claimReindex(id: string) {
  await prisma.reindex.updateMany({ where: { id, status: { not: "INDEXING" } }, data: { status: "INDEXING" } });
}
`,
    );
    const base = commitAll(dir);
    return { dir, base };
  }

  it("keeps the locks whose missing half a change touches, and drops untouched findings", async () => {
    const { dir, base } = repo();
    const full = await runAudit({ cwd: dir });
    expect(full.exitCode).toBe(1); // the legacy claim has no recovery
    // Change the job sweeper only: the job claim (answered there) is in the diff; the legacy finding is not.
    const sweeper = join(dir, "src/jobs/sweeper.ts");
    writeFileSync(
      sweeper,
      readFileSync(sweeper, "utf8").replace(
        'errorMessage: "auto-recovered"',
        'errorMessage: "recovered by the sweeper"',
      ),
    );
    const { result, exitCode } = await runAudit({ cwd: dir, diff: base });
    expect(exitCode).toBe(0);
    expect(result.locks.map((l) => `${l.file}:${l.acquire.line}`)).toEqual(["src/jobs/start.ts:7"]);
    expect(result.findings).toEqual([]);
  });

  it("includes a new, untracked module and its findings", async () => {
    const { dir, base } = repo();
    mkdirSync(join(dir, "src/reports"));
    writeFileSync(
      join(dir, "src/reports/build.ts"),
      `import { prisma } from "../db.js";

export async function claimReport(id: string) {
  await prisma.report.updateMany({ where: { id, status: { not: "BUILDING" } }, data: { status: "BUILDING" } });
}
`,
    );
    const { result, exitCode } = await runAudit({ cwd: dir, diff: base });
    expect(exitCode).toBe(1);
    expect(result.locks.map((l) => l.file)).toEqual(["src/reports/build.ts"]);
    expect(result.findings.map((f) => [f.ruleId, f.file, f.line])).toEqual([
      ["locks/require-stale-recovery", "src/reports/build.ts", 4],
    ]);
  });

  it("with nothing changed, reports nothing and exits 0", async () => {
    const { dir, base } = repo();
    const { result, exitCode } = await runAudit({ cwd: dir, diff: base });
    expect([result.locks.length, result.findings.length, exitCode]).toEqual([0, 0, 0]);
  });

  it("rejects a bad ref with a clear error", async () => {
    const { dir } = repo();
    await expect(runAudit({ cwd: dir, diff: "no-such-branch" })).rejects.toThrow(
      new AuditError(
        "--diff no-such-branch: no such commit, branch or tag in this repository (fetch it first, e.g. git fetch origin no-such-branch)",
      ),
    );
  });
});

describe("formats", () => {
  it("text: a table of locks, the findings, the answered findings", async () => {
    const { output } = await runAudit({ cwd: at("claim-sweeper"), format: "text" });
    const lines = output.split("\n");
    expect(lines[0]).toBe("locks-audit: 7 modules, 3 locks, 0 unanswered findings, 1 answered in another module");
    expect(lines).toContain("Lock inventory");
    expect(output).toMatch(
      /^src\/jobs\/start\.ts:7 +claim +job\.status = GENERATING +ok stale recovery in src\/jobs\/sweeper\.ts at line 9 +ok age judged by updatedAt/m,
    );
    expect(output).toContain(
      "src/jobs/start.ts:7:25  locks/require-stale-recovery  answered by stale recovery in src/jobs/sweeper.ts at line 9",
    );
  });

  it("text: names how a held lock escapes, and each line once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "locks-audit-text-"));
    writeFileSync(
      join(dir, "sync.js"),
      [
        "let syncing = false;",
        "export async function sync(pull) {",
        "  if (syncing) return;",
        "  syncing = true;",
        "  await pull();",
        "  syncing = false;",
        "}",
        "export async function recover(pool) {",
        "  await pool.query(\"UPDATE jobs SET status = 'queued' WHERE status = 'running' AND heartbeat_at < now() - interval '5 minutes'\");",
        "}",
        "export async function claim(pool, id) {",
        "  await pool.query(\"UPDATE jobs SET status = 'running', heartbeat_at = now() WHERE id = $1 AND status = 'queued'\", [id]);",
        "}",
        "",
      ].join("\n"),
    );
    const { output } = await runAudit({ cwd: dir, format: "text" });
    expect(output).toMatch(/^sync\.js:4 +flag +syncing +NO the release is missed when the await rejects at line 5 +-/m);
    expect(output).toMatch(/^sync\.js:12 +claim +jobs\.status = running +ok stale recovery at line 9 +ok/m);
    expect(output).not.toMatch(/at line (\d+) \(line \1\)/);
  });

  it("json: the locks as a list, with a summary", async () => {
    const { output, result } = await runAudit({ cwd: at("false-directive"), format: "json" });
    const parsed = JSON.parse(output);
    expect(parsed.version).toBe(1);
    expect(parsed.summary).toEqual({ locks: 3, findings: 2, errors: 2, warnings: 0, answered: 0, silenced: 0 });
    expect(parsed.locks).toEqual(JSON.parse(JSON.stringify(result.locks)));
    expect(parsed).not.toHaveProperty("root");
  });

  it("markdown: a checklist per lock, ready for a review comment", async () => {
    const { output } = await runAudit({ cwd: at("false-directive"), format: "markdown" });
    expect(output).toContain("### Lock audit\n\n3 locks, 2 with an open question; 2 unanswered findings.");
    expect(output).toContain(
      [
        "#### `asset.status = PROCESSING` · claim · `src/transcribe.ts:15`",
        "",
        "- [ ] **Q1 if the holder dies, who unlocks?** no stale recovery",
        "- [x] **Q2 how do you tell alive from dead?** n/a: no recovery to judge age",
        "- [x] **Q3 is the release itself race-safe?** conditional claim",
      ].join("\n"),
    );
    expect(output).toContain(
      "- [x] **Q1 if the holder dies, who unlocks?** stale recovery in src/cleanup.ts at line 6 (`src/cleanup.ts:6`)",
    );
    expect(output).toContain(
      "- `src/transcribe.ts:14` `locks-audit/false-directive`: Q1 (if the holder dies, who unlocks?)",
    );
  });
});

describe("the command", () => {
  const run = (args: string[], cwd: string) => spawnSync(process.execPath, [cli, ...args], { cwd, encoding: "utf8" });

  it("exits 0 with nothing unanswered, 1 with findings", () => {
    expect(run([], at("claim-sweeper")).status).toBe(0);
    const r = run(["--format", "json"], at("false-directive"));
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout).summary.findings).toBe(2);
    expect(r.stderr).toBe("");
  });

  it("writes --output to a file", () => {
    const dir = copyProject("false-directive");
    const r = run(["--format", "markdown", "--output", "audit.md"], dir);
    expect([r.status, r.stdout]).toEqual([1, ""]);
    expect(readFileSync(join(dir, "audit.md"), "utf8")).toMatch(/^### Lock audit/);
  });

  it("takes --project and paths", () => {
    const r = run(
      [
        "--project",
        "fixtures/projects/claim-sweeper/tsconfig.json",
        "fixtures/projects/claim-sweeper/src/cache",
        "-f",
        "json",
      ],
      join(projects, "../.."),
    );
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).locks.map((l: { file: string }) => l.file)).toEqual(["src/cache/warm.ts"]);
  });

  it("explains a missing tsconfig (exit 2)", () => {
    const r = run(["--project", "nope/tsconfig.json"], at("claim-sweeper"));
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      "locks-audit: no tsconfig at nope/tsconfig.json: pass --project with the path of an existing tsconfig.json, or leave it out to read the folder as plain JavaScript\n",
    );
  });

  it("explains an unreadable file (exit 2)", () => {
    const dir = copyProject("claim-sweeper");
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true }, files: ["src/db.ts", "src/gone.ts"] }),
    );
    const r = run([], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("locks-audit: cannot read src/gone.ts: ENOENT\n");
  });

  it("explains a bad ref (exit 2) and a bad format (exit 2)", () => {
    const dir = copyProject("claim-sweeper");
    commitAll(dir);
    const r = run(["--diff", "v9.9.9"], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("locks-audit: --diff v9.9.9: no such commit, branch or tag");
    const f = run(["--format", "xml"], dir);
    expect(f.status).toBe(2);
    expect(f.stderr).toContain(
      "error: option '-f, --format <format>' argument 'xml' is invalid. Allowed choices are text, json, sarif, markdown.",
    );
  });

  it("explains a folder that is not a git repository for --diff (exit 2)", () => {
    const dir = copyProject("plain-js");
    const r = run(["--diff", "main"], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^locks-audit: --diff needs a git repository/);
  });
});

describe("progress bar", () => {
  const stream = (isTTY: boolean) => {
    const chunks: string[] = [];
    return { chunks, s: { isTTY, write: (c: string) => chunks.push(c) } as unknown as NodeJS.WriteStream };
  };
  it("draws on an interactive stderr for a large project", () => {
    const { chunks, s } = stream(true);
    const bar = progressBar(400, s);
    bar.tick(200);
    bar.end();
    expect(chunks[0]).toBe(`\rlocks-audit [${"#".repeat(15)}${" ".repeat(15)}] 200/400 modules`);
  });
  it("stays silent when stderr is not a terminal or the project is small", () => {
    for (const [tty, total] of [
      [false, 5000],
      [true, 20],
    ] as const) {
      const { chunks, s } = stream(tty);
      const bar = progressBar(total, s);
      bar.tick(1);
      bar.end();
      expect(chunks).toEqual([]);
    }
  });
});
