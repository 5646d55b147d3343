// Scenario 9: a sweeper whose write does not re-check the state it frees (conditional-recovery, Q3). A report is
// rendered and marked DONE; its heartbeat stops with the work, so once the threshold has passed its heartbeat is as
// old as a dead worker's. proof/sweep-status/flagged.js gives back every report with an old heartbeat: the DONE
// report goes back to the queue and is rendered (and billed) a second time. proof/sweep-status/fixed.js requires
// status = 'RENDERING' in the write: the DONE report stays DONE, and a worker killed mid-render is still given back.
// The third program is flagged.js with conditional-recovery's suggestion applied (issue 18), which must behave as
// fixed.js.
import type pg from "pg";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeEach, describe, expect, it } from "vitest";
import {
  expectVerdict,
  fakeApi,
  freshDatabase,
  runOnce,
  services,
  session,
  start,
  suggestedProgram,
  waitUntil,
  untilOlder,
} from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "sweep-status/flagged";
const FIXED = "sweep-status/fixed";
/** flagged.js with conditional-recovery's suggestion applied: the sweeper's write requires status = 'RENDERING'. */
const SUGGESTED = suggestedProgram("sweep-status", "conditional-recovery", "addStatus");
const STALE_MS = 2_000;

it("the linter flags the sweeper that frees rows by age alone (conditional-recovery, Q3) and passes the one that re-checks the state", async () => {
  await expectVerdict(FLAGGED, "conditional-recovery", "Q3");
  await expectVerdict(FIXED, "conditional-recovery", "Q3");
  await expectVerdict(SUGGESTED, "conditional-recovery", "Q3");
});

describe.skipIf(!postgres)("sweep-status: a rendered report, its heartbeat old, and a sweeper", () => {
  let db: pg.Pool;
  let env: Record<string, string>;
  let renders: number[] = [];
  let renderMs = 0;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "sweep-status/schema.sql");
    db = fresh.db;
    renders = [];
    renderMs = 0;
    const renderer = await fakeApi(async (_body, request, response) => {
      renders.push(Number(/\/reports\/(\d+)/.exec(request.url ?? "")?.[1]));
      await sleep(renderMs);
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ url: `https://cdn.example${request.url}.pdf` }));
    });
    env = {
      DATABASE_URL: fresh.url,
      RENDER_API_URL: renderer,
      STALE_AFTER: `${STALE_MS} milliseconds`,
      BEAT_MS: "100",
    };
    await db.query("INSERT INTO reports (id) VALUES (1), (2)");
  });

  async function report(id: number): Promise<{ status: string; worker: string | null }> {
    const { rows } = await db.query("SELECT status, worker FROM reports WHERE id = $1", [id]);
    return rows[0];
  }

  /** A renders report 1 to the end; the sweeper runs once its last heartbeat is older than the threshold; B asks. */
  async function sweepAfterDone(program: string) {
    expect(await runOnce(program, "renderReport", [1, "a"], env)).toBe("rendered");
    expect(await report(1)).toMatchObject({ status: "DONE", worker: "a" });
    await untilOlder(db, "reports", "heartbeat_at", 1, `${STALE_MS} milliseconds`);
    const requeued = await runOnce(program, "requeueStale", [], env);
    const b = await runOnce(program, "renderReport", [1, "b"], env);
    return { requeued, b };
  }

  it("flagged: the sweeper puts the rendered report back in the queue, and it is rendered twice", async () => {
    await expectVerdict(FLAGGED, "conditional-recovery", "Q3");
    const { requeued, b } = await sweepAfterDone(FLAGGED);
    expect(requeued).toBe(1);
    expect(b).toBe("rendered");
    expect(renders).toEqual([1, 1]);
    expect(await report(1)).toMatchObject({ status: "DONE", worker: "b" });
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])(
    "%s: the rendered report stays DONE; a worker killed mid-render is given back after the threshold",
    async (_name, program) => {
      await expectVerdict(program, "conditional-recovery", "Q3");
      const { requeued, b } = await sweepAfterDone(program);
      expect(requeued).toBe(0);
      expect(b).toBe("busy");
      expect(renders).toEqual([1]);
      expect(await report(1)).toMatchObject({ status: "DONE", worker: "a" });

      // The condition must not cost the recovery: worker C is killed mid-render (SIGKILL), its heartbeat stops, and
      // the sweeper gives its report back once the threshold has passed. The sweeper is a running process, so its
      // first pass comes right after the kill.
      renderMs = 60_000;
      const sweeper = await session(program, env);
      const c = start(program, "renderReport", [2, "c"], env);
      await waitUntil("C is rendering", () => renders.length === 2);
      await c.kill();
      expect(await sweeper.ask("requeueStale")).toBe(0); // too soon to tell dead from slow
      await waitUntil(
        "the sweeper gives C's report back",
        async () => (await sweeper.ask("requeueStale")) === 1,
        10 * STALE_MS,
      );
      expect(await report(2)).toMatchObject({ status: "QUEUED", worker: null });
      renderMs = 0;
      expect(await runOnce(program, "renderReport", [2, "d"], env)).toBe("rendered");
      expect(await report(2)).toMatchObject({ status: "DONE", worker: "d" });
    },
  );
});
