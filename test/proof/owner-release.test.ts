// Scenario 3: a lease released without an owner check. Builder A is paused (SIGSTOP) past its lease, B takes
// the lock, A resumes and releases. proof/owner-release/flagged.js deletes the key whoever holds it: B's lock is
// gone and a third builder gets in while B still works. proof/owner-release/fixed.js deletes only its own value,
// and so must flagged.js with the rule's own compare-and-delete suggestion applied (issue 18).
import type { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import {
  expectVerdict,
  fakeApi,
  freshRedis,
  runOnce,
  services,
  start,
  suggestedProgram,
  waitUntil,
} from "./harness.js";

const { redis: redisServer } = services("redis");
const FLAGGED = "owner-release/flagged";
const FIXED = "owner-release/fixed";
/** flagged.js with owner-checked-release's suggestion applied: the DEL becomes a compare-and-delete script (EVAL). */
const SUGGESTED = suggestedProgram("owner-release", "owner-checked-release", "useScript");
const LEASE_MS = 800;
const KEY = "lock:weekly-report";

it("the linter flags the plain DEL (owner-checked-release, Q3) and passes compare-and-delete", async () => {
  await expectVerdict(FLAGGED, "owner-checked-release", "Q3");
  await expectVerdict(FIXED, "owner-checked-release", "Q3");
  await expectVerdict(SUGGESTED, "owner-checked-release", "Q3");
});

describe.skipIf(!redisServer)("owner-release: a builder paused past its lease releases the lock", () => {
  let redis: Redis;
  let env: Record<string, string>;

  beforeEach(async () => {
    const fresh = await freshRedis(redisServer!);
    redis = fresh.redis;
    const reports = await fakeApi((_body, _request, response) => void response.end());
    env = { REDIS_URL: fresh.url, REPORTS_API_URL: reports, LEASE_MS: String(LEASE_MS) };
  });

  /** A pauses past its lease, B takes the lock and is mid-work, A resumes and releases; then C tries. */
  async function pausedHolderReleases(program: string, release: string) {
    const a = start(program, "buildWeeklyReport", [], { ...env, PROOF_STOP_BEFORE: release });
    await a.next("stopped"); // SIGSTOP, with A's work done and its release next
    await waitUntil("A's lease expires", async () => (await redis.exists(KEY)) === 0, 20 * LEASE_MS);
    const b = start(program, "buildWeeklyReport", [], { ...env, PROOF_STOP_BEFORE: release, LEASE_MS: "60000" });
    await b.next("stopped"); // B holds the lock and is still working
    const bToken = await redis.get(KEY);
    expect(bToken).toMatch(/^[0-9a-f-]{36}$/);
    a.signal("SIGCONT");
    expect(await a.result()).toBe("built");
    const afterRelease = await redis.get(KEY);
    const c = await runOnce(program, "buildWeeklyReport", [], { ...env, LEASE_MS: "60000" });
    b.signal("SIGCONT");
    expect(await b.result()).toBe("built");
    return { bToken, afterRelease, c };
  }

  it("flagged: the resumed builder deletes B's lock, and a third builder runs alongside B", async () => {
    await expectVerdict(FLAGGED, "owner-checked-release", "Q3");
    const { afterRelease, c } = await pausedHolderReleases(FLAGGED, "redis:del");
    expect(afterRelease).toBeNull();
    expect(c).toBe("built");
  });

  it.each([
    ["fixed", FIXED],
    ["suggested", SUGGESTED],
  ])(
    "%s: the resumed builder's release deletes nothing, and the third builder is turned away",
    async (_name, program) => {
      await expectVerdict(program, "owner-checked-release", "Q3");
      const { bToken, afterRelease, c } = await pausedHolderReleases(program, "redis:eval");
      expect(afterRelease).toBe(bToken);
      expect(c).toBe("busy");
    },
  );
});
