// A nightly cron job that runs on one instance at a time: the instance that inserts the job's row in cron_locks
// runs it, pushing the row's expiry forward after every chunk, and deletes the row when done. Nothing removes a
// row whose holder was killed: the expiry passes, but the row stays, and every later run is skipped for good.
import knex from "knex";

const db = knex({ client: "pg", connection: process.env.DATABASE_URL, pool: { min: 0, max: 2 } });
const LEASE_MS = Number(process.env.LEASE_MS ?? 10 * 60 * 1000);
const CHUNK_MS = Number(process.env.CHUNK_MS ?? 60 * 1000);

export async function runNightly(holder, chunks) {
  const taken = await db("cron_locks") // flagged: locks/require-stale-recovery
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
