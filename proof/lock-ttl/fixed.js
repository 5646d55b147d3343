// The same nightly job with the lock taken and given its expiry in one command (SET NX PX): there is no moment
// when the key exists without a TTL, so a worker killed at any point frees the lock when its lease runs out.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

const redis = new Redis(process.env.REDIS_URL);
const LOCK_KEY = "lock:nightly-invoices";
const LOCK_TTL_MS = Number(process.env.LOCK_TTL_MS ?? 600_000);
const RELEASE_IF_OWNER = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0`;

export async function runNightlyInvoices() {
  const owner = randomUUID();
  const acquired = await redis.set(LOCK_KEY, owner, "PX", LOCK_TTL_MS, "NX");
  if (acquired !== "OK") return "skipped: locked";
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
