// Scenario 11: a lock row inserted under a unique key, its holder killed (require-stale-recovery, Q1). A nightly
// cron job runs on whichever instance inserts the job's row in cron_locks; the holder pushes the row's expiry forward
// after every chunk. Worker A is killed (SIGKILL) mid-run. proof/lock-row-sweep/flagged.js never removes the row:
// every later run is skipped, also once the expiry has passed. proof/lock-row-sweep/fixed.js sweeps the rows whose
// expiry has passed before each run. The third program is flagged.js with the rule's lock-row sweep applied (issue
// 18), which must behave as fixed.js: the killed holder's row goes once its lease runs out, a live holder's never.
import type pg from "pg";
import { beforeEach, describe, expect, it } from "vitest";
import {
  expectVerdict,
  freshDatabase,
  runOnce,
  services,
  session,
  start,
  suggestedProgram,
  waitUntil,
} from "./harness.js";

const { postgres } = services("postgres");
const FLAGGED = "lock-row-sweep/flagged";
const FIXED = "lock-row-sweep/fixed";
/** flagged.js with require-stale-recovery's suggestion applied: removeExpiredCronLocks() deletes rows past their expiry. */
const SUGGESTED = suggestedProgram("lock-row-sweep", "require-stale-recovery", "addLockSweep");
const LEASE_MS = 2_000;

it("the linter flags the lock row nothing removes (require-stale-recovery, Q1) and passes the swept one", async () => {
  await expectVerdict(FLAGGED, "require-stale-recovery", "Q1");
  await expectVerdict(FIXED, "require-stale-recovery", "Q1");
  await expectVerdict(SUGGESTED, "require-stale-recovery", "Q1");
});

describe.skipIf(!postgres)("lock-row-sweep: a cron lock whose holder is killed", () => {
  let db: pg.Pool;
  let env: Record<string, string>;

  beforeEach(async () => {
    const fresh = await freshDatabase(postgres!, "lock-row-sweep/schema.sql");
    db = fresh.db;
    env = { DATABASE_URL: fresh.url, LEASE_MS: String(LEASE_MS), CHUNK_MS: "50" };
  });

  async function lockRow(): Promise<{ holder: string } | undefined> {
    const { rows } = await db.query("SELECT holder FROM cron_locks WHERE job_name = 'nightly'");
    return rows[0];
  }

  /** A takes the lock, writes its first chunk, and is killed just before it pushes the expiry forward. */
  async function killHolder(program: string): Promise<void> {
    const a = start(program, "runNightly", ["a", 3], { ...env, PROOF_STOP_BEFORE: 'sql:update "cron_locks"' });
    await a.next("stopped");
    expect(await lockRow()).toEqual({ holder: "a" });
    await a.kill();
  }

  async function pastExpiry(): Promise<void> {
    await waitUntil("A's lock has expired", async () => {
      const { rows } = await db.query(
        "SELECT expires_at < now() - interval '200 milliseconds' AS expired FROM cron_locks WHERE job_name = 'nightly'",
      );
      return rows[0]?.expired === true;
    });
  }

  it("flagged: the killed holder's row stays, and every later run is skipped, also past its expiry", async () => {
    await killHolder(FLAGGED);
    await pastExpiry();
    for (let run = 0; run < 3; run++) expect(await runOnce(FLAGGED, "runNightly", ["b", 3], env)).toBe("skipped");
    expect(await lockRow()).toEqual({ holder: "a" });
  });

  it.each([
    ["fixed", FIXED, "sweepExpiredLocks"],
    ["suggested", SUGGESTED, "removeExpiredCronLocks"],
  ])(
    "%s: the killed holder's row goes once its expiry passes and the next run proceeds; a live holder's row stays",
    async (_name, program, sweep) => {
      await expectVerdict(program, "require-stale-recovery", "Q1");
      const scheduler = await session(program, env);
      await killHolder(program);
      // Before the expiry a dead holder cannot be told from a live one.
      expect(await scheduler.ask(sweep)).toBe(0);
      expect(await scheduler.ask("runNightly", "b", 3)).toBe("skipped");
      await pastExpiry();
      expect(await scheduler.ask(sweep)).toBe(1);
      expect(await scheduler.ask("runNightly", "b", 3)).toBe("done");
      expect(await lockRow()).toBeUndefined();

      // A live holder slower than its lease: it keeps pushing the expiry forward, and no sweep takes its row.
      const slow = { ...env, CHUNK_MS: "700" };
      const c = start(program, "runNightly", ["c", 8], slow);
      await waitUntil("C holds the lock", async () => (await lockRow())?.holder === "c");
      const startedAt = Date.now();
      const swept: unknown[] = [];
      while (c.events.length === 0 && c.child.exitCode === null) {
        swept.push(await scheduler.ask(sweep));
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      expect(await c.result()).toBe("done");
      expect(Date.now() - startedAt).toBeGreaterThan(2 * LEASE_MS);
      expect(swept.filter((n) => n !== 0)).toEqual([]);
    },
  );
});
