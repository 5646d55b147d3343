// The same nightly export, its heartbeat's failure handled: where the heartbeat learns the export was handed on
// (or cannot reach the database), it aborts the export, which stops before its next part. A worker paused past the
// threshold may still finish the part it was writing (no lock reaches into a paused process; fencing is
// require-fencing's), but it writes no more beside the worker that has the export now.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const STALE_AFTER = process.env.STALE_AFTER ?? "5 minutes";
const BEAT_MS = Number(process.env.BEAT_MS ?? 30_000);
const PARTS = Number(process.env.PARTS ?? 10);
/** Minutes per part in production. */
const PART_MS = Number(process.env.PART_MS ?? 60_000);

export async function exportNightly(id, worker) {
  const claimed = await pool.query(
    "UPDATE exports SET status = 'EXPORTING', worker = $2, heartbeat_at = now() WHERE id = $1 AND status = 'QUEUED'",
    [id, worker],
  );
  if (claimed.rowCount === 0) return "busy";
  const controller = new AbortController();
  const heartbeat = setInterval(async () => {
    try {
      const beat = await pool.query(
        "UPDATE exports SET heartbeat_at = now() WHERE id = $1 AND worker = $2 AND status = 'EXPORTING'",
        [id, worker],
      );
      if (beat.rowCount === 0) throw new Error("the export was handed to another worker");
    } catch (error) {
      console.error("heartbeat failed, stopping the export:", error.message);
      controller.abort(error);
    }
  }, BEAT_MS);
  try {
    for (let part = 1; part <= PARTS; part++) {
      await sleep(PART_MS, undefined, { signal: controller.signal });
      await pool.query("INSERT INTO export_parts (export_id, part, worker) VALUES ($1, $2, $3)", [id, part, worker]);
    }
    await pool.query("UPDATE exports SET status = 'DONE' WHERE id = $1 AND worker = $2 AND status = 'EXPORTING'", [id, worker]);
    return "exported";
  } finally {
    clearInterval(heartbeat);
  }
}

/** The sweeper, run every minute: an export whose heartbeat stopped goes back to the queue. */
export async function requeueStale() {
  const { rowCount } = await pool.query(
    "UPDATE exports SET status = 'QUEUED', worker = NULL WHERE status = 'EXPORTING' AND heartbeat_at < now() - $1::interval",
    [STALE_AFTER],
  );
  return rowCount;
}
