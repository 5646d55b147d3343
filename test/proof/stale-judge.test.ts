// Scenario 7: who is dead, judged by when the work started or by its last sign of progress (Q2). A render takes
// longer than the sweeper's threshold while its worker is alive and beating. proof/stale-judge/flagged.js judges by
// started_at: the sweeper hands the render to a second worker, and the export is rendered twice.
// proof/stale-judge/fixed.js judges by heartbeat_at: the slow render keeps its worker; a worker killed mid-render
// stops beating, and its render is handed back once the threshold has passed. The third program is flagged.js with
// progress-based-staleness's suggestion applied (issue 18), which must behave as fixed.js.
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
  Gate,
  untilOlder,
} from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "stale-judge/flagged";
const FIXED = "stale-judge/fixed";
/** flagged.js with progress-based-staleness's suggestion applied: the sweeper's age test reads heartbeat_at. */
const SUGGESTED = suggestedProgram("stale-judge", "progress-based-staleness", "useProgressField");
const STALE_MS = 3_000;
const BEAT_MS = 200;
/** A render longer than the threshold: healthy, only slow (the first is held by a gate instead, as long as needed). */
const RENDER_MS = 7_000;

it("the linter flags the sweeper judged by started_at (progress-based-staleness, Q2) and passes the heartbeat", async () => {
  await expectVerdict(FLAGGED, "progress-based-staleness", "Q2");
  await expectVerdict(FIXED, "progress-based-staleness", "Q2");
  await expectVerdict(SUGGESTED, "progress-based-staleness", "Q2");
});

describe.skipIf(!postgres)("stale-judge: a slow render, a sweeper, and a worker killed mid-render", () => {
  let db: pg.Pool;
  let env: Record<string, string>;
  let renders: number[] = [];
  /** Holds the first render (A's) until the sweeper and B have had their turn, however long that takes. */
  let firstRender: Gate;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "stale-judge/schema.sql");
    db = fresh.db;
    renders = [];
    firstRender = new Gate();
    const renderer = await fakeApi(async (_body, request, response) => {
      renders.push(Number(/\/renders\/(\d+)/.exec(request.url ?? "")?.[1]));
      await (renders.length === 1 ? firstRender.wait() : sleep(RENDER_MS));
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ url: `https://cdn.example/${request.url}.mp4` }));
    });
    env = { DATABASE_URL: fresh.url, RENDER_API_URL: renderer, STALE_MS: String(STALE_MS), BEAT_MS: String(BEAT_MS) };
    await db.query("INSERT INTO renders (id) VALUES (1), (2)");
  });

  async function render(id: number): Promise<{ status: string; worker: string | null }> {
    const { rows } = await db.query("SELECT status, worker FROM renders WHERE id = $1", [id]);
    return rows[0];
  }

  /** Worker A renders export 1 for longer than the threshold; the sweeper runs once the threshold has passed, then B asks. */
  async function slowRender(program: string) {
    const a = start(program, "renderExport", [1, "a"], env);
    await waitUntil("A is rendering", () => renders.length === 1);
    // The render has run past the threshold when the sweeper looks (A still beats, and is still rendering).
    await untilOlder(db, "renders", "started_at", 1, `${STALE_MS} milliseconds`);
    const requeued = await runOnce(program, "requeueStale", [], env);
    const b = await runOnce(program, "renderExport", [1, "b"], env);
    // When B took the render over, A's heartbeat must find it taken before A's own render can answer: the gate stays
    // shut until A has ended, however long a busy machine makes A's next beat wait.
    if (b === "rendered")
      await waitUntil("A has found the render taken", () =>
        a.events.some((e) => e.event === "result" || e.event === "error"),
      );
    firstRender.open();
    return {
      requeued,
      b,
      a: a.next("result").then(
        (e) => e.value,
        (e: Error) => e.message,
      ),
    };
  }

  it("flagged: the sweeper hands a slow but healthy render to a second worker, and the export is rendered twice", async () => {
    await expectVerdict(FLAGGED, "progress-based-staleness", "Q2");
    const { requeued, b, a } = await slowRender(FLAGGED);
    expect(requeued).toBe(1);
    expect(b).toBe("rendered");
    expect(renders).toEqual([1, 1]);
    // A's next beat finds the render taken and aborts its work; the second render is the one kept.
    expect(await a).toMatch(/abort/i);
    expect(await render(1)).toMatchObject({ status: "DONE", worker: "b" });
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])(
    "%s: the slow render keeps its worker; a killed worker's render is handed back after the threshold",
    async (_name, program) => {
      await expectVerdict(program, "progress-based-staleness", "Q2");
      const { requeued, b, a } = await slowRender(program);
      expect(requeued).toBe(0);
      expect(b).toBe("busy");
      expect(await a).toBe("rendered");
      expect(renders).toEqual([1]);
      expect(await render(1)).toMatchObject({ status: "DONE", worker: "a" });

      // Worker C is killed mid-render (SIGKILL): its heartbeat stops with it. The sweeper is a running process, so
      // its first pass comes right after the kill.
      const sweeper = await session(program, env);
      const c = start(program, "renderExport", [2, "c"], env);
      await waitUntil("C is rendering", () => renders.length === 2);
      await c.kill();
      expect(await sweeper.ask("requeueStale")).toBe(0); // too soon to tell dead from slow
      await waitUntil(
        "the sweeper hands C's render back",
        async () => (await sweeper.ask("requeueStale")) === 1,
        10 * STALE_MS,
      );
      expect(await runOnce(program, "renderExport", [2, "d"], env)).toBe("rendered");
      expect(await render(2)).toMatchObject({ status: "DONE", worker: "d" });
    },
  );
});
