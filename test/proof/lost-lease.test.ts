// Scenario 8: a heartbeat whose failure is caught and the work goes on (heartbeat-abort, Q2). Worker A is paused
// (SIGSTOP) past the stale threshold just before writing a part; the sweeper hands its export back and worker B
// takes it. When A resumes, its heartbeat matches no row. proof/lost-lease/flagged.js logs that and A writes every
// remaining part beside B; proof/lost-lease/fixed.js aborts the export there, and A writes no part after the one it
// was paused in. The third program is flagged.js with heartbeat-abort's suggestion applied (issue 18), which must
// behave as fixed.js.
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import { expectVerdict, freshDatabase, runOnce, services, start, suggestedProgram, waitUntil } from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "lost-lease/flagged";
const FIXED = "lost-lease/fixed";
/** flagged.js with heartbeat-abort's suggestion applied: the heartbeat's catch aborts the export's controller. */
const SUGGESTED = suggestedProgram("lost-lease", "heartbeat-abort", "stopWork");
const STALE_AFTER = "1 second";
const PARTS = 5;

it("the linter flags the heartbeat whose failure is swallowed (heartbeat-abort, Q2) and passes the one that aborts", async () => {
  await expectVerdict(FLAGGED, "heartbeat-abort", "Q2");
  await expectVerdict(FIXED, "heartbeat-abort", "Q2");
  await expectVerdict(SUGGESTED, "heartbeat-abort", "Q2");
});

describe.skipIf(!postgres)("lost-lease: a worker paused past its heartbeat's threshold resumes", () => {
  let db: pg.Pool;
  let env: Record<string, string>;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "lost-lease/schema.sql");
    db = fresh.db;
    env = { DATABASE_URL: fresh.url, STALE_AFTER, BEAT_MS: "100", PARTS: String(PARTS), PART_MS: "500" };
    await db.query("INSERT INTO exports (id) VALUES (1)");
  });

  async function partsBy(worker: string): Promise<number[]> {
    const { rows } = await db.query("SELECT part FROM export_parts WHERE export_id = 1 AND worker = $1 ORDER BY part", [
      worker,
    ]);
    return rows.map((r: { part: number }) => r.part);
  }

  /** A is paused before its first part past the threshold, the sweeper hands the export to B, then A resumes. */
  async function pausedWorkerResumes(program: string) {
    const a = start(program, "exportNightly", [1, "a"], { ...env, PROOF_STOP_BEFORE: "sql:INSERT INTO export_parts" });
    await a.next("stopped");
    await waitUntil("A's heartbeat looks stale to the database", async () => {
      const { rows } = await db.query(
        "SELECT heartbeat_at < now() - $1::interval - interval '200 milliseconds' AS stale FROM exports WHERE id = 1",
        [STALE_AFTER],
      );
      return rows[0].stale === true;
    });
    expect(await runOnce(program, "requeueStale", [], env)).toBe(1);
    const b = start(program, "exportNightly", [1, "b"], env);
    await waitUntil(
      "B has the export",
      async () => (await db.query("SELECT worker FROM exports WHERE id = 1")).rows[0].worker === "b",
    );
    a.signal("SIGCONT");
    const aOutcome = await a.next("result").then(
      (e) => String(e.value),
      (e: Error) => e.message,
    );
    expect(await b.result()).toBe("exported");
    return { aOutcome, aParts: await partsBy("a"), bParts: await partsBy("b") };
  }

  it("flagged: the resumed worker logs the failed heartbeat and writes every remaining part beside the new holder", async () => {
    await expectVerdict(FLAGGED, "heartbeat-abort", "Q2");
    const { aParts, bParts } = await pausedWorkerResumes(FLAGGED);
    expect(bParts).toEqual([1, 2, 3, 4, 5]);
    expect(aParts).toEqual([1, 2, 3, 4, 5]);
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])(
    "%s: the resumed worker's heartbeat aborts the export, and it writes no part after the one it was paused in",
    async (_name, program) => {
      await expectVerdict(program, "heartbeat-abort", "Q2");
      const { aOutcome, aParts, bParts } = await pausedWorkerResumes(program);
      expect(bParts).toEqual([1, 2, 3, 4, 5]);
      expect(aParts).toEqual([1]);
      expect(aOutcome).toMatch(/abort|handed to another worker/i);
      expect((await db.query("SELECT status, worker FROM exports WHERE id = 1")).rows[0]).toEqual({
        status: "DONE",
        worker: "b",
      });
    },
  );
});
