// The same lease, released by compare-and-delete: one Lua script deletes the key only while it still holds this
// builder's random value, so a builder that resumes after its lease expired deletes nothing.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

const redis = new Redis(process.env.REDIS_URL);
const LOCK_KEY = "lock:weekly-report";
const LEASE_MS = Number(process.env.LEASE_MS ?? 60_000);
const RELEASE_IF_OWNER = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;

export async function buildWeeklyReport() {
  const owner = randomUUID();
  const acquired = await redis.set(LOCK_KEY, owner, "PX", LEASE_MS, "NX");
  if (acquired !== "OK") return "busy";
  try {
    await renderReport();
    return "built";
  } finally {
    await redis.eval(RELEASE_IF_OWNER, 1, LOCK_KEY, owner);
  }
}

async function renderReport() {
  const response = await fetch(`${process.env.REPORTS_API_URL}/reports/weekly`, { method: "POST" });
  if (!response.ok) throw new Error(`reports API answered ${response.status}`);
}
