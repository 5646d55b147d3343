// A weekly report guarded by a Redis lease (SET NX PX), so a dead builder frees it. But the release deletes the
// key whoever holds it now: a builder paused past its lease resumes and deletes the next holder's lock, and a
// third builder gets in while the second is still working.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

const redis = new Redis(process.env.REDIS_URL);
const LOCK_KEY = "lock:weekly-report";
const LEASE_MS = Number(process.env.LEASE_MS ?? 60_000);

export async function buildWeeklyReport() {
  const owner = randomUUID();
  const acquired = await redis.set(LOCK_KEY, owner, "PX", LEASE_MS, "NX");
  if (acquired !== "OK") return "busy";
  try {
    await renderReport();
    return "built";
  } finally {
    await redis.del(LOCK_KEY); // flagged: locks/owner-checked-release
  }
}

async function renderReport() {
  const response = await fetch(`${process.env.REPORTS_API_URL}/reports/weekly`, { method: "POST" });
  if (!response.ok) throw new Error(`reports API answered ${response.status}`);
}
