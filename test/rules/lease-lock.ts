// Code shared by the rule tests: lock modules as services write them (lock rows, leases, a key-value seat hold).
/** A lock document created once under its fixed _id, then taken over by a lease update once its lease passed. */
export const LEASE_LOCK = `import mongoose from "mongoose";
import { randomUUID } from "node:crypto";

const JobLock = mongoose.model("JobLock", new mongoose.Schema({ _id: String, ownerId: String, lockedUntil: Date }));

export async function acquire(name, ttlMs) {
  const ownerId = randomUUID();
  const until = new Date(Date.now() + ttlMs);
  const taken = await JobLock.findOneAndUpdate(
    { _id: name, $or: [{ lockedUntil: { $exists: false } }, { lockedUntil: { $lt: new Date() } }] },
    { $set: { ownerId, lockedUntil: until } },
    { new: true },
  );
  if (taken) return ownerId;
  try {
    await JobLock.create({ _id: name, ownerId, lockedUntil: until });
    return ownerId;
  } catch (err) {
    if (err.code === 11000) return null;
    throw err;
  }
}

export async function release(name, ownerId) {
  await JobLock.updateOne({ _id: name, ownerId }, { $set: { lockedUntil: new Date() } });
}

export function runEvery(name, ms, work) {
  setInterval(async () => {
    const ownerId = await acquire(name, ms);
    if (!ownerId) return;
    try {
      await work();
    } finally {
      await release(name, ownerId);
    }
  }, ms);
}`;

/**
 * A row of a settings table used as a lock under a constant name (shared corpus a10, in our words): read, checked
 * in JS (a stale timestamp is taken over), then upserted; released by a delete by name; force-unlocked by an operator.
 */
export const KEYED_LOCK = `const DIGEST_LOCK = "weekly_digest_lock";
export async function takeDigestLock(maxAgeMs = 120_000) {
  const clock = Date.now();
  const staleBefore = clock - maxAgeMs;
  const row = await prisma.appConfig.findUnique({ where: { name: DIGEST_LOCK } });
  if (row) {
    const stampedAt = Number(row.payload);
    if (stampedAt > staleBefore) return false;
  }
  await prisma.appConfig.upsert({ where: { name: DIGEST_LOCK }, update: { payload: String(clock) }, create: { name: DIGEST_LOCK, payload: String(clock) } });
  return true;
}
export async function dropDigestLock() {
  await prisma.appConfig.deleteMany({ where: { name: DIGEST_LOCK } });
}
export async function forceUnlockDigest() {
  await prisma.appConfig.deleteMany({ where: { name: DIGEST_LOCK } });
}
`;

/**
 * A lease checked in JavaScript: the row is read, its `lockedAt` judged against a cutoff in an `if`, then stamped by
 * id with this worker's `lockedBy`; the import's result is written by id alone afterwards (line 7).
 */
export const CHECKED_LEASE = `export async function importPost(id: string, me: string) {
  const cutoff = new Date(Date.now() - 5 * 60_000);
  const post = await prisma.importedPost.findUnique({ where: { id } });
  if (post.lockedAt && post.lockedAt > cutoff && post.lockedBy !== me) return;
  await prisma.importedPost.update({ where: { id }, data: { lockedAt: new Date(), lockedBy: me } });
  const result = await translate(post);
  await prisma.importedPost.update({ where: { id }, data: { status: "completed", body: result } });
}`;

/**
 * A queue worker that calls another service: each claimed item's work is aborted after 45 s and stuck items are
 * requeued after two minutes, so a start time tells alive from dead and no later holder exists while it still writes.
 * With the abort longer than the sweep's age, neither holds.
 */
export const BOUNDED_HOLD = `const STALE_MS = 2 * 60_000;
const WORK_MS = 45_000;

export async function requeueStuck() {
  await prisma.render.updateMany({
    where: { status: "RENDERING", startedAt: { lt: new Date(Date.now() - STALE_MS) } },
    data: { status: "QUEUED" },
  });
}

export async function renderOne(id: string, url: string) {
  const r = await prisma.render.updateMany({ where: { id, status: "QUEUED" }, data: { status: "RENDERING", startedAt: new Date() } });
  if (r.count === 0) return;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), WORK_MS);
  try {
    const res = await fetch(url, { signal: controller.signal });
    await prisma.render.update({ where: { id }, data: { status: "DONE", output: await res.text() } });
  } catch {
    await prisma.render.update({ where: { id }, data: { status: "FAILED" } });
  } finally {
    clearTimeout(timer);
  }
}
`;

/**
 * An in-process per-key lock that waits for the holder it found and then takes the key without testing it again
 * (seen in a sign-up service's lock helper): every waiter takes the key when the holder is done.
 */
export const WAIT_THEN_TAKE = `export class Locks {
  private held = new Map<string, Promise<void>>();
  async withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    if (this.held.has(key)) {
      await this.held.get(key);
    }
    const running = work();
    this.held.set(key, running.then(() => undefined, () => undefined));
    try {
      return await running;
    } finally {
      this.held.delete(key);
    }
  }
}`;

/**
 * A seat held by a GET that found the key empty and a SETEX of a fresh ticket, the key taken from the request body
 * under two names in two handlers (a `let` written in a `try`), released by a GET, a comparison and a DEL.
 */
export const SEAT_HOLD = `import express from "express";
import { createClient } from "redis";
const redis = createClient();
export const router = express.Router();
router.post("/seats/hold", async (req, res) => {
  const { seat: seatId } = req.body;
  let holder: string | null;
  try {
    holder = await redis.get(seatId);
  } catch (error) {
    console.warn("seat lookup failed", error);
  }
  if (holder) return res.status(409).json({ held: true });
  const ticket = crypto.randomUUID();
  await redis.setEx(seatId, 120, ticket);
  return res.json({ ticket });
});
router.post("/seats/release", async (req, res) => {
  const { seat, ticket } = req.body;
  const holder = await redis.get(seat);
  if (holder === ticket) await redis.del(seat);
  res.end();
});`;
