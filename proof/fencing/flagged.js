// The second seed's render worker: a lease frees the export when its worker dies (a new worker takes it over
// once it has expired), and every grant carries a new token. But the result is written without the token: a
// worker paused past its lease resumes, believes it still holds the lock, and overwrites the new holder's work.
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const LEASE = process.env.LEASE ?? "30 seconds";

export async function renderExport(exportId, worker) {
  const { rows } = await pool.query(
    `UPDATE exports
        SET status = 'RENDERING', lease_owner = $2, lease_token = lease_token + 1, lease_expires_at = now() + $3::interval
      WHERE id = $1 AND (status = 'QUEUED' OR (status = 'RENDERING' AND lease_expires_at < now()))
      RETURNING lease_token`,
    [exportId, worker, LEASE],
  );
  if (rows.length === 0) return "busy";
  const videoUrl = await render(exportId, worker);
  await pool.query( // flagged: locks/require-fencing
    "UPDATE exports SET status = 'DONE', video_url = $2, rendered_by = $3 WHERE id = $1",
    [exportId, videoUrl, worker],
  );
  return "rendered";
}

/** The expensive part: minutes of rendering in production. */
async function render(exportId, worker) {
  const response = await fetch(`${process.env.RENDER_API_URL}/exports/${exportId}?worker=${worker}`, { method: "POST" });
  if (!response.ok) throw new Error(`renderer answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
