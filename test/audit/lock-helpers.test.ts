// Locks written once in helpers and called from other modules (fixtures/projects/lock-helpers): the audit follows
// the imports (a path alias, a barrel, a class made with `new`, a service injected through the constructor), so a
// call of a helper is the helper's command at the call, reported there with the helper named.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/audit/index.js";
import { copyProject, marked, projects } from "./helpers.js";

const project = join(projects, "lock-helpers");
const where = (list: readonly { ruleId: string; file: string; line: number }[]) =>
  list.map((f) => `${f.file}:${f.line} ${f.ruleId}`);

describe("locks-audit: lock helpers of other modules", () => {
  it("reports exactly the `// expect:` and `// audit-expect:` lines of the project", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const expected = marked(project, /\/\/ (?:audit-)?expect: ([\w-]+(?:, [\w-]+)*)\s*$/);
    expect(expected.length).toBeGreaterThan(8);
    expect(where(result.findings).sort()).toEqual(expected.sort());
  });

  it("names the helper and where it lives, and reports the calls of one release helper once per lock", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const at = (file: string, line: number, rule: string) =>
      result.findings.find((f) => f.file === file && f.line === line && f.ruleId === `locks/${rule}`)!.message;
    expect(at("src/jobs/prune.ts", 10, "owner-checked-release")).toContain(
      "this DEL (through `releaseLock`, src/lib/redis-lock.ts, line 10) removes whatever lock is there now",
    );
    expect(at("src/jobs/prune.ts", 8, "release-in-finally")).toContain(
      "the lock `deploy:prune:lock` is released at line 10, but not when the await rejects (line 9)",
    );
    // Through the barrel, with the helper's own module named; the `finally` release is the same flaw, named with it.
    expect(at("src/jobs/build.ts", 11, "owner-checked-release")).toContain(
      "(through `releaseLock`, src/lib/redis-lock.ts, line 10; so do the calls at line 14)",
    );
    // A class made with `new PayLock(redis, key)`: the key is the constructor's argument.
    expect(at("src/jobs/pay.js", 9, "require-lock-ttl")).toContain(
      'this SETNX (through `lock.take`, src/lib/pay-lock.js, line 11) takes the lock "paying:*", and the helper gives it an expiry with a separate EXPIRE',
    );
    expect(at("src/services/sync.service.ts", 9, "release-in-finally")).toContain(
      "the lock `sync:catalog` is released at line 12",
    );
    // A compare-and-delete helper handed the one constant every holder stores checks nobody.
    expect(at("src/jobs/revalidate.ts", 14, "owner-checked-release")).toContain(
      'the lock "revalidating:routes" is acquired at line 10 with the constant value "true"',
    );
    // A release made through the handle the helper returns (`lock.release()`, a destructured `release()`): the
    // handle's GET-compare-DEL, named with the helper's module; the key is the one the handle was taken with.
    expect(at("src/jobs/digest.ts", 11, "owner-checked-release")).toBe(
      'Q3 (is the release race-safe?): this release (through `lock.release`, src/lib/cron-lock.ts, line 20) reads the lock "cron:digest", compares it in JavaScript and then deletes it in a separate command. The key can expire and be taken by another worker between the two, and the DEL removes that worker\'s lock. Compare and delete in one step in the helper: a compare-and-delete script, or DELEX key IFEQ token on Redis 8.4+.',
    );
    expect(at("src/jobs/digest.ts", 16, "release-in-finally")).toContain(
      "the lock `cron:cleanup` is released at line 19, but not when the await rejects (line 18)",
    );
    // A session advisory lock on the helper module's own pool is the caller's pool lock, named with that module.
    expect(at("src/jobs/report.ts", 8, "release-in-finally")).toContain(
      "this session advisory lock is taken through a pool (pool of src/lib/report-lock.ts)",
    );
    expect(at("src/jobs/report.ts", 12, "release-in-finally")).toContain(
      "this unlock goes through the pool (pool of src/lib/report-lock.ts) and may run on a different connection than the lock at line 8",
    );
    // A lock row's release helper of another module (CommonJS `exports.clearLease = async (id) => …`): its unchecked
    // release is made at the worker's calls, one finding for both, with the helper's verdict and where it lives.
    // A claim helper of another module whose claim nothing recovers: taken at the caller's first call, the second named.
    expect(at("src/jobs/send-email.ts", 6, "require-stale-recovery")).toBe(
      "Q1 (if the holder dies, who unlocks?): this call takes email.status = SENDING through `claimEmail` (src/lib/outbox-store.ts, line 8; so do the calls at line 12), and nothing in this module or the helper's moves a row that stays SENDING back. A holder killed by SIGKILL, OOM or a deploy leaves it so forever, and catch/finally never run. Add a conditional recovery that frees it where a progress timestamp is older than a threshold, or let the claim take over an expired lease.",
    );
    // Through an aggregate that holds the helpers' class: a class's static field and an object's property.
    // One finding per lock: the retry's take of the same row is named in the first's; the vacuum's row is its own.
    expect(at("src/jobs/nightly.ts", 7, "require-stale-recovery")).toContain(
      'this call takes runLock.locked = true (the row "rebuild-index") through `store.locks.take` (src/lib/store/run-locks.ts, line 8; so do the calls at line 14), and nothing',
    );
    expect(at("src/jobs/nightly.ts", 20, "require-stale-recovery")).toContain(
      'this call takes runLock.locked = true (the row "vacuum-index") through `store.locks.take` (src/lib/store/run-locks.ts, line 8), and nothing',
    );
    expect(at("src/jobs/compact.ts", 5, "require-stale-recovery")).toContain(
      '(the row "compact-reports") through `tables.locks.take` (src/lib/store/run-locks.ts, line 8)',
    );
    expect(at("src/jobs/deliver.js", 13, "owner-checked-release")).toBe(
      "Q3 (is the release race-safe?): this call releases the lease on Message.lockedUntil through `clearLease` (src/lib/lease-store.js, line 20; so do the calls at line 17), which clears it by _id alone, without checking that this holder still owns it. The lock changes hands once it looks stale (taken at line 12 there), so a holder that outlived it frees the row another worker holds now. Pass this holder's owner or token to the helper, and release only the row that still carries it.",
    );
  });

  it("stays quiet where the callers get it right or hold no lock", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const files = new Set(where(result.findings));
    // The `finally` releases, the marker never freed, the injected service's sound release.
    for (const quiet of [
      "src/jobs/build.ts:7 locks/release-in-finally",
      "src/jobs/pay.js:18 locks/require-lock-ttl",
      "src/services/sync.service.ts:16 locks/release-in-finally",
      "src/services/sync.service.ts:12 locks/owner-checked-release",
      // The scoped advisory helper (lock, work and unlock on one checked-out client) and a helper handed the
      // caller's own client leave the caller no pool lock.
      "src/jobs/report.ts:17 locks/release-in-finally",
      "src/jobs/report.ts:23 locks/release-in-finally",
      // The same helper handed a token of the caller's own.
      "src/jobs/revalidate.ts:24 locks/owner-checked-release",
      // A lock row's release helper that checks the token, and a helper that does the holder's work and then
      // clears the lease (judged in its own module), leave the worker quiet; the second clearLease is the first's.
      "src/jobs/deliver.js:17 locks/owner-checked-release",
      "src/jobs/deliver.js:20 locks/owner-checked-release",
      "src/jobs/deliver.js:25 locks/owner-checked-release",
      // The second call of the claim helper is the first's finding; a helper that claims and logs is judged at home.
      "src/jobs/send-email.ts:12 locks/require-stale-recovery",
      "src/jobs/send-email.ts:18 locks/require-stale-recovery",
      // Callers that hold nothing: an operator's unstick frees a lease it never took; a controller takes an email and
      // hands it on without freeing it through the data layer. The data layer's own findings stand for them.
      "src/jobs/deliver.js:32 locks/owner-checked-release",
      "src/jobs/send-email.ts:23 locks/require-stale-recovery",
      // Through the aggregate: an admin action that takes the run lock for someone else to give back; a local object
      // of the aggregate's shape, which is no import.
      "src/jobs/nightly.ts:14 locks/require-stale-recovery",
      "src/jobs/nightly.ts:27 locks/require-stale-recovery",
      "src/jobs/compact.ts:17 locks/require-stale-recovery",
    ])
      expect(files.has(quiet)).toBe(false);
    expect(
      where(result.findings)
        .filter((f) => f.startsWith("src/jobs/nightly.ts") || f.startsWith("src/jobs/compact.ts"))
        .sort(),
    ).toEqual([
      "src/jobs/compact.ts:5 locks/require-stale-recovery",
      "src/jobs/nightly.ts:20 locks/require-stale-recovery",
      "src/jobs/nightly.ts:7 locks/require-stale-recovery",
    ]);
    expect(where(result.findings).filter((f) => f.startsWith("src/jobs/report.ts"))).toEqual([
      "src/jobs/report.ts:8 locks/release-in-finally",
      "src/jobs/report.ts:12 locks/release-in-finally",
    ]);
  });

  it("unknown stays unknown: a helper module the audit cannot resolve gives the callers no finding", async () => {
    const dir = copyProject("lock-helpers");
    // Without the path alias, `@/lib/redis-lock` resolves to nothing: the prune's calls are calls of nobody knows what.
    writeFileSync(
      join(dir, "tsconfig.json"),
      readFileSync(join(dir, "tsconfig.json"), "utf8").replace(/"paths": \{[^}]*\}/, '"paths": {}'),
    );
    const { result } = await runAudit({ cwd: dir, config: "strict", eslintConfig: false, progress: false });
    expect(where(result.findings).filter((f) => f.startsWith("src/jobs/prune.ts"))).toEqual([]);
    expect(where(result.findings)).toContain("src/jobs/build.ts:11 locks/owner-checked-release");
  });
});
