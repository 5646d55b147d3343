// Scenario 10: a claim checked in JavaScript and then written by id (atomic-claim, Q3). Worker A reads the report,
// finds it free, and is paused (SIGSTOP) just before its UPDATE; worker B reads it free too, claims it and starts
// rendering. A resumes. proof/check-then-act/flagged.js writes by id: A claims the report B holds and calls the render
// service too, so the report is rendered twice (and B's heartbeat, finding the report taken, aborts B).
// proof/check-then-act/fixed.js writes only where the report is not RENDERING and leaves when that changed no row: A
// goes away, B renders once. The third program is flagged.js with atomic-claim's suggestion applied (issue 18):
// the condition and the check's own way out, which must behave as fixed.js.
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import {
  Gate,
  expectVerdict,
  fakeApi,
  freshDatabase,
  services,
  start,
  suggestedProgram,
  waitUntil,
} from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "check-then-act/flagged";
const FIXED = "check-then-act/fixed";
/** flagged.js with atomic-claim's suggestion applied: `status <> 'RENDERING'` in the UPDATE, and `return "busy"` on no row. */
const SUGGESTED = suggestedProgram("check-then-act", "atomic-claim", "addConditionAndExit");

it("the linter flags the claim checked in JavaScript (atomic-claim, Q3) and passes the conditional one", async () => {
  await expectVerdict(FLAGGED, "atomic-claim", "Q3");
  await expectVerdict(FIXED, "atomic-claim", "Q3");
  await expectVerdict(SUGGESTED, "atomic-claim", "Q3");
});

describe.skipIf(!postgres)("check-then-act: two workers read the report free at the same moment", () => {
  let db: pg.Pool;
  let env: Record<string, string>;
  let renders: string[] = [];
  /** Holds every render until the paused worker, resumed, has either claimed the report too or gone away. */
  let rendering: Gate;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "check-then-act/schema.sql");
    db = fresh.db;
    renders = [];
    rendering = new Gate();
    const renderer = await fakeApi(async (_body, request, response) => {
      renders.push(request.url ?? "");
      await rendering.wait();
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ url: `https://cdn.example${request.url}.pdf` }));
    });
    env = { DATABASE_URL: fresh.url, RENDER_API_URL: renderer, BEAT_MS: "100" };
    await db.query("INSERT INTO reports (id) VALUES (1)");
  });

  async function report(): Promise<{ status: string; worker: string | null }> {
    const { rows } = await db.query("SELECT status, worker FROM reports WHERE id = 1");
    return rows[0];
  }

  /** A has read the report free and is paused before its claim; B claims it and renders; then A resumes. */
  async function bothReadItFree(program: string) {
    const a = start(program, "renderReport", [1, "a"], {
      ...env,
      PROOF_STOP_BEFORE: "sql:UPDATE reports SET status = 'RENDERING'",
    });
    await a.next("stopped");
    const b = start(program, "renderReport", [1, "b"], env);
    await waitUntil("B is rendering", () => renders.length === 1);
    expect(await report()).toMatchObject({ status: "RENDERING", worker: "b" });
    a.signal("SIGCONT");
    // B is still rendering while A acts: A claims and renders too (flagged), or answers at once (fixed).
    await waitUntil("A has claimed the report or gone away", () => renders.length === 2 || a.events.length > 0);
    // When A claimed it too, B's heartbeat must find the report taken before B's render can answer: the gate stays
    // shut until B has ended, however long a busy machine makes B's next beat wait.
    if (renders.length === 2)
      await waitUntil("B has found the report taken", () =>
        b.events.some((e) => e.event === "result" || e.event === "error"),
      );
    rendering.open();
    const outcome = (w: typeof a) =>
      w.next("result").then(
        (e) => String(e.value),
        (e: Error) => e.message,
      );
    return { a: await outcome(a), b: await outcome(b) };
  }

  it("flagged: the paused worker claims the report the other one holds, and it is rendered twice", async () => {
    await expectVerdict(FLAGGED, "atomic-claim", "Q3");
    const { a, b } = await bothReadItFree(FLAGGED);
    expect(renders).toEqual(["/reports/1", "/reports/1"]);
    expect(a).toBe("rendered");
    // B's heartbeat finds the report taken (worker = 'a') and aborts B's render: A's is the one kept.
    expect(b).toMatch(/abort|taken by another worker/i);
    expect(await report()).toMatchObject({ status: "DONE", worker: "a" });
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])(
    "%s: the paused worker's claim changes no row and it goes away; the report is rendered once",
    async (_name, program) => {
      await expectVerdict(program, "atomic-claim", "Q3");
      const { a, b } = await bothReadItFree(program);
      expect(a).toBe("busy");
      expect(b).toBe("rendered");
      expect(renders).toEqual(["/reports/1"]);
      expect(await report()).toMatchObject({ status: "DONE", worker: "b" });
    },
  );
});
