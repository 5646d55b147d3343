// Scenario 1 (the first seed): a compare-and-set claim on a job, a worker killed with SIGKILL mid-job.
// proof/crash-wedge/flagged.js has no recovery: the job stays GENERATING and every later claim is refused, also
// after the stale threshold. proof/crash-wedge/fixed.js recovers on the read path, judged by the last sign
// of progress and written as a conditional update; the seed's five behaviours are each checked below.
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { expectVerdict, fakeApi, freshDatabase, runOnce, services, session, start, waitUntil } from "./harness.js";

const { postgres } = services("postgres");
const STALE_AFTER = "3 seconds";
const FLAGGED = "crash-wedge/flagged";
const FIXED = "crash-wedge/fixed";

it("the linter flags the shape without recovery (require-stale-recovery, Q1) and passes the fixed one", async () => {
  await expectVerdict(FLAGGED, "require-stale-recovery", "Q1");
  await expectVerdict(FIXED, "require-stale-recovery", "Q1");
});

describe.skipIf(!postgres)("crash-wedge: a claimed job whose worker is killed", () => {
  let db: pg.Pool;
  let env: Record<string, string>;
  let speechDelayMs = 0;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "crash-wedge/schema.sql");
    db = fresh.db;
    speechDelayMs = 0;
    const speechApi = await fakeApi(async (text, _request, response) => {
      await new Promise((resolve) => setTimeout(resolve, speechDelayMs));
      if (text.includes("unpronounceable")) {
        response.statusCode = 503;
        response.end();
        return;
      }
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ url: `https://cdn.example/audio/${encodeURIComponent(text)}.mp3` }));
    });
    env = { DATABASE_URL: fresh.url, SPEECH_API_URL: speechApi, STALE_AFTER };
    await db.query("INSERT INTO audio_jobs (id) VALUES (1)");
    await db.query("INSERT INTO audio_items (job_id, text) SELECT 1, 'line ' || n FROM generate_series(1, 3) n");
  });

  async function job(): Promise<{ status: string; error_message: string | null }> {
    const { rows } = await db.query("SELECT status, error_message FROM audio_jobs WHERE id = 1");
    return rows[0];
  }

  async function itemStatuses(): Promise<string[]> {
    const { rows } = await db.query("SELECT status FROM audio_items WHERE job_id = 1 ORDER BY id");
    return rows.map((r: { status: string }) => r.status);
  }

  /** Until the job's last progress signal (its own or its newest item's) is older than STALE_AFTER, by the DB clock. */
  async function pastStaleThreshold(): Promise<void> {
    await waitUntil("the job looks stale to the database", async () => {
      const { rows } = await db.query(
        `SELECT greatest(j.updated_at, max(i.updated_at)) < now() - $1::interval - interval '200 milliseconds' AS stale
           FROM audio_jobs j LEFT JOIN audio_items i ON i.job_id = j.id WHERE j.id = 1 GROUP BY j.id`,
        [STALE_AFTER],
      );
      return rows[0].stale as boolean;
    });
  }

  /** Claims job 1 in a worker, stops it after the first item, and kills it with SIGKILL. */
  async function killMidJob(program: string): Promise<void> {
    const worker = start(program, "generateJob", [1], { ...env, PROOF_STOP_BEFORE: "sql:SET status = 'DONE'" });
    await worker.next("stopped");
    expect((await job()).status).toBe("GENERATING");
    worker.signal("SIGKILL");
    expect((await worker.exited).signal).toBe("SIGKILL");
  }

  it("flagged: after SIGKILL every later claim is refused, before the stale threshold and on every retry after it", async () => {
    await expectVerdict(FLAGGED, "require-stale-recovery", "Q1");
    await killMidJob(FLAGGED);
    expect(await runOnce(FLAGGED, "generateJob", [1], env)).toBe("refused: already generating");
    await pastStaleThreshold();
    for (let attempt = 0; attempt < 3; attempt++) {
      expect(await runOnce(FLAGGED, "getJob", [1], env)).toMatchObject({ status: "GENERATING" });
      expect(await runOnce(FLAGGED, "generateJob", [1], env)).toBe("refused: already generating");
    }
    expect(await itemStatuses()).toEqual(["GENERATING", "PENDING", "PENDING"]);
  });

  it("fixed: a fresh claim is left alone; after the threshold the read recovers it and a retry claims it", async () => {
    await expectVerdict(FIXED, "require-stale-recovery", "Q1");
    const page = await session(FIXED, env); // started first, so the reads below come right after the crash
    await killMidJob(FIXED);
    // Before the threshold the dead worker cannot be told from a live one: the job stays locked.
    expect(await page.ask("getJob", 1)).toMatchObject({ status: "GENERATING" });
    expect(await page.ask("generateJob", 1)).toBe("refused: already generating");
    const { rows } = await db.query(
      "SELECT max(updated_at) > now() - $1::interval AS fresh FROM (SELECT updated_at FROM audio_jobs UNION ALL SELECT updated_at FROM audio_items) t",
      [STALE_AFTER],
    );
    expect(rows[0].fresh).toBe(true); // those reads really happened before the threshold
    await pastStaleThreshold();
    expect(await page.ask("getJob", 1)).toMatchObject({
      status: "FAILED",
      error_message: "auto-recovered: no progress",
    });
    expect(await itemStatuses()).toEqual(["ERROR", "PENDING", "PENDING"]);
    expect(await page.ask("generateJob", 1)).toBe("completed");
    expect(await job()).toMatchObject({ status: "COMPLETED" });
    expect(await itemStatuses()).toEqual(["DONE", "DONE", "DONE"]);
  });

  it("fixed: a slow job that keeps making progress is never recovered, though it runs past the threshold", async () => {
    await expectVerdict(FIXED, "require-stale-recovery", "Q1");
    await db.query("INSERT INTO audio_items (job_id, text) SELECT 1, 'more ' || n FROM generate_series(1, 5) n");
    speechDelayMs = 800; // 8 items: over 6 s in all, twice STALE_AFTER; never 3 s without progress
    const page = await session(FIXED, env);
    const worker = start(FIXED, "generateJob", [1], env);
    await waitUntil("the worker has claimed the job", async () => (await job()).status === "GENERATING");
    const startedAt = Date.now();
    const seen: string[] = [];
    while (worker.events.length === 0 && worker.child.exitCode === null) {
      seen.push(((await page.ask("getJob", 1)) as { status: string }).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await worker.result()).toBe("completed");
    expect(Date.now() - startedAt).toBeGreaterThan(6_000);
    // Read all along while it ran; a read may land just after completion, but none may see a recovery.
    expect(seen.filter((status) => status === "GENERATING").length).toBeGreaterThan(10);
    expect(seen.filter((status) => status !== "GENERATING" && status !== "COMPLETED")).toEqual([]);
    expect(await job()).toMatchObject({ status: "COMPLETED", error_message: null });
  });

  it("fixed: items left GENERATING after their job ended are recovered separately; flagged: they stay", async () => {
    await expectVerdict(FLAGGED, "require-stale-recovery", "Q1");
    await expectVerdict(FIXED, "require-stale-recovery", "Q1");
    await db.query("UPDATE audio_items SET text = 'unpronounceable' WHERE id = 2");
    for (const program of [FLAGGED, FIXED]) {
      await db.query("UPDATE audio_jobs SET status = 'PENDING'; UPDATE audio_items SET status = 'PENDING'");
      const worker = start(program, "generateJob", [1], env);
      expect(await worker.error()).toBe("speech API answered 503");
      expect(await job()).toMatchObject({ status: "FAILED" });
      expect(await itemStatuses()).toEqual(["DONE", "GENERATING", "PENDING"]);
      await pastStaleThreshold();
      await runOnce(program, "getJob", [1], env);
      expect(await itemStatuses()).toEqual(["DONE", program === FIXED ? "ERROR" : "GENERATING", "PENDING"]);
    }
  });

  it("fixed: a recovery that loses the race to a finishing worker backs off, and the job stays COMPLETED", async () => {
    await expectVerdict(FIXED, "require-stale-recovery", "Q1");
    // The worker has done every item and is paused (SIGSTOP) just before recording completion, long enough to
    // look dead.
    const worker = start(FIXED, "generateJob", [1], { ...env, PROOF_STOP_BEFORE: "sql:SET status = 'COMPLETED'" });
    await worker.next("stopped");
    await pastStaleThreshold();
    // A reader sees a stale job and is paused just before its recovery write.
    const reader = start(FIXED, "getJob", [1], { ...env, PROOF_STOP_BEFORE: "sql:auto-recovered" });
    await reader.next("stopped");
    // The worker was alive after all: it resumes and completes the job.
    worker.signal("SIGCONT");
    expect(await worker.result()).toBe("completed");
    // The recovery's conditional update now matches zero rows: it backs off and reports what the worker wrote.
    reader.signal("SIGCONT");
    expect(await reader.result()).toMatchObject({ status: "COMPLETED", error_message: null });
    expect(await job()).toMatchObject({ status: "COMPLETED", error_message: null });
    expect(await itemStatuses()).toEqual(["DONE", "DONE", "DONE"]);
  });
});
