// A report renderer whose claim is checked in JavaScript and then written by id: the worker reads the report, goes
// away if it is RENDERING already, and otherwise marks it RENDERING. Two workers that read it at the same moment
// both find it free, both mark it, and both call the render service: the report is rendered (and billed) twice.
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const STALE_AFTER = process.env.STALE_AFTER ?? "5 minutes";
const BEAT_MS = Number(process.env.BEAT_MS ?? 30_000);

export async function renderReport(id, worker) {
  const { rows } = await pool.query("SELECT status FROM reports WHERE id = $1", [id]);
  if (rows[0].status === "RENDERING") return "busy";
  await pool.query( // flagged: locks/atomic-claim
    "UPDATE reports SET status = 'RENDERING', worker = $2, heartbeat_at = now() WHERE id = $1",
    [id, worker],
  );
  const controller = new AbortController();
  const heartbeat = setInterval(async () => {
    try {
      const beat = await pool.query(
        "UPDATE reports SET heartbeat_at = now() WHERE id = $1 AND worker = $2 AND status = 'RENDERING'",
        [id, worker],
      );
      if (beat.rowCount === 0) throw new Error("the report was taken by another worker");
    } catch (error) {
      controller.abort(error);
    }
  }, BEAT_MS);
  try {
    const url = await render(id, controller.signal);
    await pool.query("UPDATE reports SET status = 'DONE', url = $3 WHERE id = $1 AND worker = $2 AND status = 'RENDERING'", [id, worker, url]);
    return "rendered";
  } finally {
    clearInterval(heartbeat);
  }
}

/** The sweeper, run every minute: a report whose heartbeat stopped goes back to the queue. */
export async function requeueStale() {
  const { rowCount } = await pool.query(
    "UPDATE reports SET status = 'QUEUED', worker = NULL WHERE status = 'RENDERING' AND heartbeat_at < now() - $1::interval",
    [STALE_AFTER],
  );
  return rowCount;
}

/** One billed call to the render service; minutes each in production. */
async function render(id, signal) {
  const response = await fetch(`${process.env.RENDER_API_URL}/reports/${id}`, { method: "POST", signal });
  if (!response.ok) throw new Error(`render service answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
