// Scenario 2: a Redis lock with no expiry at the moment of the crash. proof/lock-ttl/flagged.js takes the lock
// with SETNX and sets its expiry with a second command; a worker killed between the two leaves the key with no
// TTL and the job never runs again. proof/lock-ttl/fixed.js takes it with SET NX PX: after a crash at any point
// the lock frees itself when the TTL runs out. The third program is flagged.js with the rule's own suggestion
// applied (issue 18): it must behave as fixed.js does, at the very point a crash hurts most.
import type { Redis } from "ioredis";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeEach, describe, expect, it } from "vitest";
import {
  expectVerdict,
  fakeApi,
  freshRedis,
  runOnce,
  services,
  session,
  start,
  suggestedProgram,
  waitUntil,
} from "./harness.js";

const { redis: redisServer } = services("redis");
const FLAGGED = "lock-ttl/flagged";
const FIXED = "lock-ttl/fixed";
/** flagged.js with require-lock-ttl's suggestion applied: SETNX + PEXPIRE merged into SET NX PX, its 0-test rewritten. */
const SUGGESTED = suggestedProgram("lock-ttl", "require-lock-ttl", "mergeExpire");
const LOCK_TTL_MS = 3_000;
const KEY = "lock:nightly-invoices";

it("the linter flags SETNX + PEXPIRE (require-lock-ttl, Q1) and passes SET NX PX, by hand and as suggested", async () => {
  await expectVerdict(FLAGGED, "require-lock-ttl", "Q1");
  await expectVerdict(FIXED, "require-lock-ttl", "Q1");
  await expectVerdict(SUGGESTED, "require-lock-ttl", "Q1");
});

describe.skipIf(!redisServer)("lock-ttl: a Redis lock whose holder is killed", () => {
  let redis: Redis;
  let env: Record<string, string>;
  let invoiceRuns = 0;

  beforeEach(async () => {
    const fresh = await freshRedis(redisServer!);
    redis = fresh.redis;
    invoiceRuns = 0;
    const billing = await fakeApi((_body, _request, response) => {
      invoiceRuns++;
      response.end();
    });
    env = { REDIS_URL: fresh.url, BILLING_API_URL: billing, LOCK_TTL_MS: String(LOCK_TTL_MS) };
  });

  it("both shapes run the job and free the lock when nothing goes wrong", async () => {
    await expectVerdict(FLAGGED, "require-lock-ttl", "Q1");
    await expectVerdict(FIXED, "require-lock-ttl", "Q1");
    for (const program of [FLAGGED, FIXED, SUGGESTED]) {
      expect(await runOnce(program, "runNightlyInvoices", [], env)).toBe("sent");
      expect(await redis.exists(KEY)).toBe(0);
    }
    expect(invoiceRuns).toBe(3);
  });

  it("flagged: SIGKILL between SETNX and PEXPIRE leaves a lock that never expires", async () => {
    await expectVerdict(FLAGGED, "require-lock-ttl", "Q1");
    const next = await session(FLAGGED, env);
    const worker = start(FLAGGED, "runNightlyInvoices", [], { ...env, PROOF_STOP_BEFORE: "redis:pexpire" });
    await worker.next("stopped");
    worker.signal("SIGKILL");
    await worker.exited;
    expect(await redis.pttl(KEY)).toBe(-1); // the key exists and has no expiry
    await sleep(LOCK_TTL_MS + 1_000); // longer than the TTL the code meant to set
    for (let night = 0; night < 3; night++) expect(await next.ask("runNightlyInvoices")).toBe("skipped: locked");
    expect(await redis.pttl(KEY)).toBe(-1);
    expect(invoiceRuns).toBe(0);
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])("%s: SIGKILL while holding the lock frees it after the TTL, and the next run proceeds", async (_name, program) => {
    await expectVerdict(program, "require-lock-ttl", "Q1");
    const next = await session(program, env);
    // Killed after the work, just before the release: the latest point a crash can hit.
    const worker = start(program, "runNightlyInvoices", [], { ...env, PROOF_STOP_BEFORE: "redis:eval" });
    await worker.next("stopped");
    worker.signal("SIGKILL");
    await worker.exited;
    const ttl = await redis.pttl(KEY);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(LOCK_TTL_MS);
    expect(await next.ask("runNightlyInvoices")).toBe("skipped: locked");
    expect(await redis.exists(KEY)).toBe(1); // that run really came while the lock was held
    await waitUntil("the lock expires", async () => (await redis.exists(KEY)) === 0, 10 * LOCK_TTL_MS);
    expect(await next.ask("runNightlyInvoices")).toBe("sent");
    expect(invoiceRuns).toBe(2);
  });
});
