// A nightly export in PostgreSQL: a worker claims the export, beats its heartbeat while it writes the parts, and a
// sweeper hands back exports whose heartbeat stopped. The heartbeat owns its claim (it matches only this worker's
// row), but its failure is caught and logged and the export goes on: a worker paused past the threshold (a long GC
// pause, a suspended VM) resumes, learns from its heartbeat that the export was handed on, and keeps writing parts
// beside the worker that has it now.
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
      const beat = await pool.query( // flagged: locks/heartbeat-abort
        "UPDATE exports SET heartbeat_at = now() WHERE id = $1 AND worker = $2 AND status = 'EXPORTING'",
        [id, worker],
      );
      if (beat.rowCount === 0) throw new Error("the export was handed to another worker");
    } catch (error) {
      console.error("heartbeat failed:", error.message);
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
