// The missing half written by the plugin (issue 18): proof/suggested-recovery/flagged.js claims render jobs with a
// conditional update and keeps a heartbeat on the job row, but nothing unlocks a job whose worker died.
// require-stale-recovery's suggestion adds the recovery; fixed.js is flagged.js with that suggestion applied, only
// its threshold tuned (and the test's `flagged` marker gone), which the first test checks byte for byte. Run under
// SIGKILL against PostgreSQL, the suggested program behaves as the hand-fixed one of the first seed
// (crash-wedge/fixed.js): a fresh claim is left alone, a dead one is freed after the threshold and can be claimed
// again, and a slow job that keeps beating is never freed.
import { readFileSync } from "node:fs";
import { Linter } from "eslint";
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import { expectVerdict, freshDatabase, proofDir, runOnce, services, session, start, waitUntil } from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "suggested-recovery/flagged";
const FIXED = "suggested-recovery/fixed";
const STALE_MS = 2_000;

it("fixed.js is flagged.js with require-stale-recovery's suggestion applied, its threshold tuned", () => {
  const code = readFileSync(`${proofDir}${FLAGGED}.js`, "utf8");
  const config = [
    { files: ["**/*.js"], languageOptions: { sourceType: "module" as const } },
    {
      files: ["**/*.js"],
      plugins: { locks: plugin as never },
      rules: { "locks/require-stale-recovery": "error" as const },
    },
  ];
  const [finding] = new Linter({ configType: "flat" }).verify(code, config as never, { filename: "flagged.js" });
  expect(finding).toMatchObject({ ruleId: "locks/require-stale-recovery", messageId: "missingRecovery", line: 10 });
  const suggestion = finding!.suggestions?.[0];
  expect(suggestion?.messageId).toBe("addRecovery");
  let applied = code;
  for (const fix of [suggestion!.fix].flat().sort((a, b) => b.range[0] - a.range[0]))
    applied = applied.slice(0, fix.range[0]) + fix.text + applied.slice(fix.range[1]);
  const tuned = applied
    .replace(" // flagged: locks/require-stale-recovery", "")
    .replace(
      "const STALE_RENDER_JOBS_RENDERING_MS = 15 * 60 * 1000;",
      "const STALE_RENDER_JOBS_RENDERING_MS = Number(process.env.STALE_MS ?? 15 * 60 * 1000);",
    );
  expect(tuned).not.toBe(applied.replace(" // flagged: locks/require-stale-recovery", "")); // the threshold line was there to tune
  expect(readFileSync(`${proofDir}${FIXED}.js`, "utf8")).toBe(tuned);
});

it("the linter flags the claim without recovery (require-stale-recovery, Q1) and passes the suggested program", async () => {
  await expectVerdict(FLAGGED, "require-stale-recovery", "Q1");
  await expectVerdict(FIXED, "require-stale-recovery", "Q1");
});

describe.skipIf(!postgres)("suggested-recovery: a claimed render whose worker is killed", () => {
  let db: pg.Pool;
  let env: Record<string, string>;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "suggested-recovery/schema.sql");
    db = fresh.db;
    env = { DATABASE_URL: fresh.url, STALE_MS: String(STALE_MS), PAGES: "3", PAGE_MS: "50" };
    await db.query("INSERT INTO render_jobs (id) VALUES (1)");
  });

  async function job(): Promise<{ status: string; pages_done: number }> {
    const { rows } = await db.query("SELECT status, pages_done FROM render_jobs WHERE id = 1");
    return rows[0];
  }

  /** Claims job 1 in a worker, stops it before its second heartbeat, and kills it with SIGKILL. */
  async function killMidJob(program: string): Promise<void> {
    const worker = start(program, "renderJob", [1], { ...env, PROOF_STOP_BEFORE: "sql:pages_done = $2" });
    await worker.next("stopped");
    expect((await job()).status).toBe("RENDERING");
    worker.signal("SIGKILL");
    expect((await worker.exited).signal).toBe("SIGKILL");
  }

  /** Until the job's heartbeat is older than the threshold, by the database's clock. */
  async function pastStaleThreshold(): Promise<void> {
    await waitUntil("the job looks stale to the database", async () => {
      const { rows } = await db.query(
        "SELECT updated_at < now() - $1 * interval '1 millisecond' - interval '200 milliseconds' AS stale FROM render_jobs WHERE id = 1",
        [STALE_MS],
      );
      return rows[0].stale as boolean;
    });
  }

  it("flagged: after SIGKILL the job stays RENDERING and every later claim is refused, also past the threshold", async () => {
    await killMidJob(FLAGGED);
    await pastStaleThreshold();
    for (let attempt = 0; attempt < 3; attempt++)
      expect(await runOnce(FLAGGED, "renderJob", [1], env)).toBe("refused: already rendering");
    expect(await job()).toMatchObject({ status: "RENDERING" });
  });

  it("suggested: a fresh claim is left alone; past the threshold the recovery frees it (FAILED) and a retry completes", async () => {
    const sweeper = await session(FIXED, env);
    await killMidJob(FIXED);
    // Before the threshold the dead worker cannot be told from a live one.
    expect(await sweeper.ask("recoverStaleRenderJobs")).toBe(0);
    expect(await sweeper.ask("renderJob", 1)).toBe("refused: already rendering");
    expect((await job()).status).toBe("RENDERING");
    await pastStaleThreshold();
    expect(await sweeper.ask("recoverStaleRenderJobs")).toBe(1);
    expect(await job()).toMatchObject({ status: "FAILED" });
    expect(await sweeper.ask("renderJob", 1)).toBe("completed");
    expect(await job()).toMatchObject({ status: "COMPLETED", pages_done: 3 });
  });

  it("suggested: a slow render that keeps beating is never freed, though it runs past the threshold", async () => {
    const slow = { ...env, PAGES: "8", PAGE_MS: "700" }; // over 5.6 s in all; never 2 s without a heartbeat
    const sweeper = await session(FIXED, slow);
    const worker = start(FIXED, "renderJob", [1], slow);
    await waitUntil("the worker has claimed the job", async () => (await job()).status === "RENDERING");
    const startedAt = Date.now();
    const freed: unknown[] = [];
    while (worker.events.length === 0 && worker.child.exitCode === null) {
      freed.push(await sweeper.ask("recoverStaleRenderJobs"));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(await worker.result()).toBe("completed");
    expect(Date.now() - startedAt).toBeGreaterThan(2 * STALE_MS);
    expect(freed.length).toBeGreaterThan(10);
    expect(freed.filter((n) => n !== 0)).toEqual([]);
    expect(await job()).toMatchObject({ status: "COMPLETED", pages_done: 8 });
  });
});
