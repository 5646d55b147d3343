// Scenario 4 (the second seed): a lease with a token, a worker paused past it. Worker A is paused (SIGSTOP) with
// its render done, its lease expires, B takes the export over with a higher token and writes its render, then A
// resumes and writes. proof/fencing/flagged.js writes without the token and overwrites B's result;
// proof/fencing/fixed.js writes only while its token is the newest grant, so A's late write is refused. The third
// program is flagged.js with require-fencing's suggestion applied (issue 18): the write requires the lease owner the
// claim stamped, which B's take-over replaced, so A's late write matches no row either.
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import {
  expectVerdict,
  fakeApi,
  freshDatabase,
  runOnce,
  services,
  start,
  suggestedProgram,
  waitUntil,
} from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "fencing/flagged";
const FIXED = "fencing/fixed";
/** flagged.js with require-fencing's suggestion applied: `lease_owner = $3` (the worker, passed already) in the WHERE. */
const SUGGESTED = suggestedProgram("fencing", "require-fencing", "addToken");
const LEASE = "1 second";

it("the linter flags the unfenced write (require-fencing, Q3) and passes the fenced one", async () => {
  await expectVerdict(FLAGGED, "require-fencing", "Q3");
  await expectVerdict(FIXED, "require-fencing", "Q3");
  await expectVerdict(SUGGESTED, "require-fencing", "Q3");
});

describe.skipIf(!postgres)("fencing: a render worker paused past its lease", () => {
  let db: pg.Pool;
  let env: Record<string, string>;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "fencing/schema.sql");
    db = fresh.db;
    const renderer = await fakeApi((_body, request, response) => {
      const worker = new URL(request.url!, "http://x").searchParams.get("worker");
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ url: `https://cdn.example/exports/7/${worker}.mp4` }));
    });
    env = { DATABASE_URL: fresh.url, RENDER_API_URL: renderer, LEASE };
    await db.query("INSERT INTO exports (id) VALUES (7)");
  });

  async function exportRow(): Promise<{ status: string; video_url: string; rendered_by: string; lease_token: string }> {
    const { rows } = await db.query("SELECT status, video_url, rendered_by, lease_token FROM exports WHERE id = 7");
    return rows[0];
  }

  /** A renders and pauses before writing; its lease expires; B takes over and finishes; A resumes. */
  async function pausedWorkerWritesLate(program: string) {
    const a = start(program, "renderExport", [7, "A"], { ...env, PROOF_STOP_BEFORE: "sql:SET status = 'DONE'" });
    await a.next("stopped");
    expect(await exportRow()).toMatchObject({ status: "RENDERING", lease_token: "1" });
    await waitUntil("A's lease expires", async () => {
      const { rows } = await db.query("SELECT lease_expires_at < now() AS expired FROM exports WHERE id = 7");
      return rows[0].expired as boolean;
    });
    expect(await runOnce(program, "renderExport", [7, "B"], env)).toBe("rendered");
    expect(await exportRow()).toMatchObject({ status: "DONE", rendered_by: "B", lease_token: "2" });
    a.signal("SIGCONT");
    return a.result();
  }

  it("flagged: the resumed worker's late write overwrites the new holder's render", async () => {
    await expectVerdict(FLAGGED, "require-fencing", "Q3");
    expect(await pausedWorkerWritesLate(FLAGGED)).toBe("rendered");
    expect(await exportRow()).toMatchObject({
      status: "DONE",
      rendered_by: "A",
      video_url: "https://cdn.example/exports/7/A.mp4",
    });
  });

  it("fixed: the resumed worker's late write is refused, and the new holder's render stands", async () => {
    await expectVerdict(FIXED, "require-fencing", "Q3");
    expect(await pausedWorkerWritesLate(FIXED)).toBe("refused: the lease has a newer holder");
    expect(await exportRow()).toMatchObject({
      status: "DONE",
      rendered_by: "B",
      video_url: "https://cdn.example/exports/7/B.mp4",
    });
  });

  it("suggested: the resumed worker's late write matches no row, and the new holder's render stands", async () => {
    await expectVerdict(SUGGESTED, "require-fencing", "Q3");
    // The program does not read the write's count (the suggestion says zero rows means the claim was lost): A still
    // answers "rendered", but its write changed nothing.
    expect(await pausedWorkerWritesLate(SUGGESTED)).toBe("rendered");
    expect(await exportRow()).toMatchObject({
      status: "DONE",
      rendered_by: "B",
      video_url: "https://cdn.example/exports/7/B.mp4",
    });
  });

  it("both: while the lease is live a second worker is turned away", async () => {
    await expectVerdict(FLAGGED, "require-fencing", "Q3");
    await expectVerdict(FIXED, "require-fencing", "Q3");
    for (const program of [FLAGGED, FIXED]) {
      await db.query("UPDATE exports SET status = 'QUEUED', lease_expires_at = NULL WHERE id = 7");
      const a = start(program, "renderExport", [7, "A"], {
        ...env,
        LEASE: "1 minute",
        PROOF_STOP_BEFORE: "sql:SET status = 'DONE'",
      });
      await a.next("stopped");
      expect(await runOnce(program, "renderExport", [7, "B"], env)).toBe("busy");
      a.signal("SIGCONT");
      expect(await a.result()).toBe("rendered");
    }
  });
});
