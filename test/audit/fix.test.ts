// `locks-audit --fix` (issue 18, src/audit/fix.ts): writes the `locks-recovered-by` directive at each claim the
// audit paired with a recovery in another module, points a false one at the module that recovers the claim or
// removes it where none does; only those comments change, and a second run changes nothing.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Linter } from "eslint";
import tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/audit/index.js";
import plugin from "../../src/index.js";
import { copyProject } from "./helpers.js";

const quiet = { config: "strict" as const, eslintConfig: false as const, progress: false, format: "json" as const };

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "locks-audit-fix-"));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/** The editor's view of one file: require-stale-recovery findings, by line. */
function editorFindings(file: string): number[] {
  const config = [
    { files: ["**/*.ts"], languageOptions: { parser: tsParser as never } },
    { ...(plugin.configs.strict as object), files: ["**/*.ts"] },
  ];
  return new Linter({ configType: "flat", cwd: dirname(file) })
    .verify(readFileSync(file, "utf8"), config as never, { filename: file })
    .filter((m) => m.ruleId === "locks/require-stale-recovery")
    .map((m) => m.line);
}

const SWEEPER = `import { prisma } from "../db.js";

export async function sweep(): Promise<number> {
  const res = await prisma.job.updateMany({
    where: { status: "GENERATING", updatedAt: { lt: new Date(Date.now() - 60_000) } },
    data: { status: "FAILED" },
  });
  return res.count;
}
`;
const CLAIM = (directive: string) => `import { prisma } from "../db.js";

export async function start(id: string): Promise<boolean> {
${directive}  const claimed = await prisma.job.updateMany({
    where: { id, status: { not: "GENERATING" } },
    data: { status: "GENERATING", updatedAt: new Date() },
  });
  return claimed.count === 1;
}
`;
const DB = "export declare const prisma: any;\n";

describe("locks-audit --fix", () => {
  it("writes the directive above a claim recovered in another module, which the editor then accepts; a second run changes nothing", async () => {
    const dir = copyProject("claim-sweeper");
    const file = join(dir, "src/jobs/start.ts");
    const before = readFileSync(file, "utf8");
    expect(editorFindings(file)).toEqual([7]);
    const first = await runAudit({ cwd: dir, ...quiet, fix: true });
    expect(first.fixed).toEqual({ files: ["src/jobs/start.ts"], added: 1, pointed: 0, removed: 0 });
    const after = readFileSync(file, "utf8");
    // One line, at the claim's statement and indent; every other byte as it was.
    expect(after).toBe(
      before.replace(
        "  const claimed = await prisma.job.updateMany(",
        "  // locks-recovered-by: ./sweeper.ts\n  const claimed = await prisma.job.updateMany(",
      ),
    );
    expect(editorFindings(file)).toEqual([]);
    // The report is the audit of the fixed project.
    expect(first.output).toBe((await runAudit({ cwd: dir, ...quiet })).output);
    const second = await runAudit({ cwd: dir, ...quiet, fix: true });
    expect(second.fixed).toEqual({ files: [], added: 0, pointed: 0, removed: 0 });
    expect(readFileSync(file, "utf8")).toBe(after);
  });

  it("removes directives no module backs, uncovering the claims they hid", async () => {
    const dir = copyProject("false-directive");
    const before = readFileSync(join(dir, "src/transcribe.ts"), "utf8").split("\n");
    const plain = await runAudit({ cwd: dir, ...quiet });
    expect(plain.result.findings.filter((f) => f.ruleId === "locks-audit/false-directive").map((f) => f.line)).toEqual([
      14, 23,
    ]);
    const fixed = await runAudit({ cwd: dir, ...quiet, fix: true });
    expect(fixed.fixed).toEqual({ files: ["src/transcribe.ts"], added: 0, pointed: 0, removed: 2 });
    // The two false ones go, whole lines; the true one (line 5) stays.
    expect(readFileSync(join(dir, "src/transcribe.ts"), "utf8")).toBe(
      before.filter((_, i) => i !== 13 && i !== 22).join("\n"),
    );
    expect(fixed.result.findings.filter((f) => f.ruleId === "locks-audit/false-directive")).toEqual([]);
    // The claims the directives hid are findings now, where the claims are.
    expect(
      fixed.result.findings
        .filter((f) => f.ruleId === "locks/require-stale-recovery")
        .map((f) => `${f.file}:${f.line}`),
    ).toEqual(["src/transcribe.ts:14", "src/transcribe.ts:22"]);
  });

  it("points a directive naming the wrong module at the one that recovers the claim", async () => {
    const dir = project({
      "src/db.ts": DB,
      "src/jobs/sweeper.ts": SWEEPER,
      "src/jobs/notes.ts": "export const notes = 1;\n",
      "src/jobs/start.ts": CLAIM("  // locks-recovered-by: ./notes.ts (the janitor)\n"),
    });
    const fixed = await runAudit({ cwd: dir, ...quiet, fix: true });
    expect(fixed.fixed).toEqual({ files: ["src/jobs/start.ts"], added: 0, pointed: 1, removed: 0 });
    expect(readFileSync(join(dir, "src/jobs/start.ts"), "utf8")).toBe(
      CLAIM("  // locks-recovered-by: ./sweeper.ts (the janitor)\n"),
    );
    expect(fixed.result.findings).toEqual([]);
  });

  it("removes a false directive written after the claim on its line, and keeps the code", async () => {
    const claim = CLAIM("").replace(
      "  const claimed = await prisma.job.updateMany({",
      "  const claimed = await prisma.job.updateMany({ /* locks-recovered-by: ./nowhere.ts */",
    );
    const dir = project({ "src/db.ts": DB, "src/jobs/start.ts": claim });
    const fixed = await runAudit({ cwd: dir, ...quiet, fix: true });
    expect(fixed.fixed).toEqual({ files: ["src/jobs/start.ts"], added: 0, pointed: 0, removed: 1 });
    expect(readFileSync(join(dir, "src/jobs/start.ts"), "utf8")).toBe(CLAIM(""));
    expect(fixed.result.findings.map((f) => `${f.ruleId} ${f.line}`)).toEqual(["locks/require-stale-recovery 4"]);
  });

  it("with paths, writes only in the modules reported on", async () => {
    const dir = project({
      "src/db.ts": DB,
      "src/jobs/sweeper.ts": SWEEPER,
      "src/jobs/start.ts": CLAIM(""),
      "src/other/start.ts": CLAIM("").replace("../db.js", "../db.js").replace("start(", "startOther("),
    });
    const fixed = await runAudit({ cwd: dir, ...quiet, fix: true, paths: ["src/other"] });
    expect(fixed.fixed).toEqual({ files: ["src/other/start.ts"], added: 1, pointed: 0, removed: 0 });
    expect(readFileSync(join(dir, "src/jobs/start.ts"), "utf8")).toBe(CLAIM(""));
    expect(readFileSync(join(dir, "src/other/start.ts"), "utf8")).toContain(
      "  // locks-recovered-by: ../jobs/sweeper.ts\n  const claimed",
    );
  });
});
