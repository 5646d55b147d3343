// Every snippet of docs/ci.md, run on a copy of fixtures/projects/claim-sweeper with this package installed the
// way a user has it (node_modules/eslint-plugin-locks, eslint, @typescript-eslint/parser and their bins).
// `reviewdog` and `gh` are stand-ins on PATH that record what they are given; everything before them runs for real.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { commitAll, copyProject, installPlugin, repoRoot } from "./helpers.js";

const doc = readFileSync(join(repoRoot, "docs/ci.md"), "utf8");

/** `<!-- ci-snippet: name -->` followed by a fenced block. */
const snippets = new Map<string, string>();
for (const m of doc.matchAll(/<!-- ci-snippet: ([\w-]+) -->\n```\w+\n([\s\S]*?)```/g)) snippets.set(m[1]!, m[2]!);

let dir: string;
let bin: string;
let base: string;

function sh(command: string) {
  return spawnSync("bash", ["-c", command], {
    cwd: dir,
    encoding: "utf8",
    env: {
      ...process.env,
      PATH: `${bin}:${join(dir, "node_modules/.bin")}:${process.env["PATH"]}`,
      BASE_SHA: base,
      PR_NUMBER: "42",
      npm_config_yes: "false",
    },
  });
}

beforeAll(() => {
  dir = copyProject("claim-sweeper");
  installPlugin(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "tts-service", private: true, type: "module" }));
  writeFileSync(join(dir, "eslint.config.js"), snippets.get("eslint-config")!);
  base = commitAll(dir);
  // The pull request: a new export claim with no recovery anywhere.
  const render = join(dir, "src/exports/render.ts");
  writeFileSync(
    render,
    `${readFileSync(render, "utf8")}
export async function claimPreview(exportId: string): Promise<boolean> {
  const res = await prisma.preview.updateMany({ where: { id: exportId, state: { not: "RENDERING" } }, data: { state: "RENDERING" } });
  return res.count === 1;
}
`,
  );
  bin = join(dir, ".stubs");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "reviewdog"),
    `#!/bin/sh\ncat > "${dir}/reviewdog.stdin"\necho "$@" > "${dir}/reviewdog.args"\n`,
  );
  writeFileSync(join(bin, "gh"), `#!/bin/sh\necho "$@" > "${dir}/gh.args"\n`);
  chmodSync(join(bin, "reviewdog"), 0o755);
  chmodSync(join(bin, "gh"), 0o755);
});

describe("docs/ci.md", () => {
  it("has every snippet this test runs", () => {
    expect([...snippets.keys()].sort()).toEqual([
      "comment",
      "eslint-config",
      "lint",
      "markdown",
      "ratchet",
      "reviewdog",
      "sarif",
      "workflow",
    ]);
  });

  it("lint: the flat config and `npx eslint .` report the claims the rules see", () => {
    const r = sh(snippets.get("lint")!);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("src/jobs/start.ts");
    expect(r.stdout).toMatch(
      /7:25 +error +Q1 \(if the holder dies, who unlocks\?\): this write claims job\.status = GENERATING/,
    );
    expect(r.stdout).toMatch(/locks\/require-stale-recovery/);
    expect(r.stdout).toContain("2 problems (2 errors, 0 warnings)");
  });

  it("sarif: writes a SARIF log with the unanswered finding", () => {
    const r = sh(snippets.get("sarif")!);
    expect(r.status).toBe(1);
    const log = JSON.parse(readFileSync(join(dir, "locks.sarif"), "utf8"));
    expect(log.version).toBe("2.1.0");
    expect(
      log.runs[0].results.map(
        (x: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }) => [
          x.ruleId,
          x.locations[0]!.physicalLocation.artifactLocation.uri,
        ],
      ),
    ).toEqual([["locks/require-stale-recovery", "src/exports/render.ts"]]);
  });

  it("ratchet: --max-findings lets the known finding through (exit 0) and still prints it; one more fails", () => {
    const r = sh(snippets.get("ratchet")!);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("1 unanswered findings");
    expect(r.stdout).toMatch(/src\/exports\/render\.ts:14:\d+ {2}locks\/require-stale-recovery/);
    expect(sh(snippets.get("ratchet")!.replace("--max-findings 1", "--max-findings 0")).status).toBe(1);
  });

  it("markdown + comment: the diff-limited checklist, posted with gh", () => {
    const r = sh(snippets.get("markdown")!);
    expect(r.status).toBe(1);
    const md = readFileSync(join(dir, "locks-audit.md"), "utf8");
    expect(md).toContain("#### `preview.state = RENDERING` · claim · `src/exports/render.ts:14`");
    expect(md).toContain("- [ ] **Q1 if the holder dies, who unlocks?** no stale recovery");
    // only what the pull request touches: the job claim, answered in src/jobs/sweeper.ts, is not in it
    expect(md).not.toContain("job.status");
    const c = sh(snippets.get("comment")!);
    expect(c.status).toBe(0);
    expect(readFileSync(join(dir, "gh.args"), "utf8")).toBe("pr comment 42 --body-file locks-audit.md\n");
  });

  it("reviewdog: rdjson with the suggestions, piped to reviewdog", () => {
    const r = sh(snippets.get("reviewdog")!);
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, "reviewdog.args"), "utf8")).toBe("-f=rdjson -reporter=github-pr-review\n");
    const out = JSON.parse(readFileSync(join(dir, "reviewdog.stdin"), "utf8"));
    expect(
      out.diagnostics.map(
        (d: { location: { path: string; range: { start: { line: number } } }; code: { value: string } }) => [
          d.location.path,
          d.location.range.start.line,
          d.code.value,
        ],
      ),
    ).toEqual([
      ["src/exports/render.ts", 14, "locks/require-stale-recovery"],
      ["src/jobs/start.ts", 7, "locks/require-stale-recovery"],
    ]);
  });

  it("workflow: every run step is one of the snippets above (or npm ci)", () => {
    const runs = [...snippets.get("workflow")!.matchAll(/^\s+(?:- )?run: (.*)$/gm)].map((m) => m[1]!);
    const known = new Set([
      "npm ci",
      ...["lint", "sarif", "markdown", "comment", "reviewdog"].map((k) => snippets.get(k)!.trim()),
    ]);
    expect(runs.length).toBe(6);
    for (const run of runs) expect(known).toContain(run);
    expect(snippets.get("workflow")).toContain("sarif_file: locks.sarif");
  });
});
