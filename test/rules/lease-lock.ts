// Code shared by the rule tests: a lock-row module as services write it.
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
