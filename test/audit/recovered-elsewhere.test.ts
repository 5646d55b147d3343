// A claim whose stale recovery is in another module (fixtures/projects/recovered-elsewhere): the audit answers its
// Q1 there, and since the recovery can then hand the row to a new holder while the old one is only paused, the
// holder's writes by id are asked Q3 as they are when the recovery is in the claim's own module.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/audit/index.js";
import { marked, projects } from "./helpers.js";

const project = join(projects, "recovered-elsewhere");
const where = (list: readonly { ruleId: string; file: string; line: number }[]) =>
  list.map((f) => `${f.file}:${f.line} ${f.ruleId}`);

describe("locks-audit: claims recovered in another module", () => {
  it("reports exactly the `// audit-expect:` lines, and answers the `// expect:` Q1 findings in the recovering module", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const auditOnly = marked(project, /\/\/ audit-expect: ([\w-]+(?:, [\w-]+)*)\s*$/);
    const editor = marked(project, /\/\/ expect: ([\w-]+(?:, [\w-]+)*)\s*$/);
    // A claim taken through another module's helper (src/reports/print.ts) is the audit's alone, answered with it.
    const answeredCalls = marked(project, /\/\/ audit-answered: ([\w-]+(?:, [\w-]+)*)\s*$/);
    expect(answeredCalls).toEqual(["src/reports/print.ts:6 locks/require-stale-recovery"]);
    // The builder's two writes by id are one finding, at the first, naming the second.
    expect(auditOnly).toEqual(["src/reports/build.ts:15 locks/require-fencing"]);
    expect(result.findings.find((f) => f.ruleId === "locks/require-fencing")?.message).toContain(
      "and so does the write at line 17 of this function",
    );
    expect(
      where(result.findings)
        .filter((f) => f.includes(" locks/"))
        .sort(),
    ).toEqual(auditOnly.sort());
    expect(where(result.answered).sort()).toEqual([...editor, ...answeredCalls].sort());
    // The reset that judges no age is the audit's own finding, at the reset.
    expect(where(result.findings).filter((f) => !f.includes(" locks/"))).toEqual([
      "src/maintenance/janitor.ts:17 locks-audit/remote-race",
    ]);
  });

  it("names the claim the write no longer holds", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const ready = result.findings.find((f) => f.file === "src/reports/build.ts" && f.line === 15)!;
    expect(ready.message).toContain(
      "this write moves the claimed report row to READY without checking that this worker still holds the claim (status = BUILDING, taken at line 8)",
    );
  });

  it("the recommended config leaves require-fencing out, and the re-lint adds nothing else", async () => {
    const { result } = await runAudit({ cwd: project, config: "recommended", eslintConfig: false, progress: false });
    expect(where(result.findings)).toEqual(["src/maintenance/janitor.ts:17 locks-audit/remote-race"]);
  });
});
