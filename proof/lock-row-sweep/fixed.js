// The same nightly cron job, with the other half of its lock: a sweep, run by the scheduler before each run, deletes
// the rows whose expiry has passed. A killed holder stops pushing its expiry forward, so its row goes once the
// lease has run out and the next run proceeds; a live holder's row is never taken, however long the job runs.
import knex from "knex";

const db = knex({ client: "pg", connection: process.env.DATABASE_URL, pool: { min: 0, max: 2 } });
const LEASE_MS = Number(process.env.LEASE_MS ?? 10 * 60 * 1000);
const CHUNK_MS = Number(process.env.CHUNK_MS ?? 60 * 1000);

export async function runNightly(holder, chunks) {
  const taken = await db("cron_locks")
    .insert({ job_name: "nightly", holder, expires_at: new Date(Date.now() + LEASE_MS) })
    .onConflict("job_name")
    .ignore()
    .returning("job_name");
  if (taken.length === 0) return "skipped";
  try {
    for (let chunk = 1; chunk <= chunks; chunk++) {
      await new Promise((resolve) => setTimeout(resolve, CHUNK_MS));
      await db("cron_chunks").insert({ chunk, holder });
      const extended = await db("cron_locks")
        .where({ job_name: "nightly", holder })
        .update({ expires_at: new Date(Date.now() + LEASE_MS) });
      if (extended === 0) throw new Error("the nightly lock was lost");
    }
    return "done";
  } finally {
    await db("cron_locks").where({ job_name: "nightly", holder }).del();
  }
}

/** Deletes the locks whose holder stopped renewing them (it died); the scheduler calls it before each run. */
export async function sweepExpiredLocks() {
  return db("cron_locks").where("expires_at", "<", new Date()).del();
}
