// A nightly job guarded by a Redis lock: SETNX takes it, a second command gives it an expiry. A worker killed
// between the two leaves a key that never expires, and the job never runs again until someone deletes the key
// by hand. (A lock taken with no expiry at all wedges the same way on any crash.)
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

const redis = new Redis(process.env.REDIS_URL);
const LOCK_KEY = "lock:nightly-invoices";
const LOCK_TTL_MS = Number(process.env.LOCK_TTL_MS ?? 600_000);
const RELEASE_IF_OWNER = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;

export async function runNightlyInvoices() {
  const owner = randomUUID();
  const acquired = await redis.setnx(LOCK_KEY, owner); // flagged: locks/require-lock-ttl
  if (acquired === 0) return "skipped: locked";
  await redis.pexpire(LOCK_KEY, LOCK_TTL_MS);
  try {
    await sendInvoices();
    return "sent";
  } finally {
    await redis.eval(RELEASE_IF_OWNER, 1, LOCK_KEY, owner);
  }
}

async function sendInvoices() {
  const response = await fetch(`${process.env.BILLING_API_URL}/invoices/nightly`, { method: "POST" });
  if (!response.ok) throw new Error(`billing API answered ${response.status}`);
}
