// The second seed's redesign: the same lease, but its token travels with the effect, and the row refuses a
// write from any token but the newest grant. A worker paused past its lease may still finish rendering (no lock
// can reach into a paused process), but its late write changes nothing.
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
  const token = rows[0].lease_token;
  const videoUrl = await render(exportId, worker);
  const written = await pool.query(
    "UPDATE exports SET status = 'DONE', video_url = $2, rendered_by = $3 WHERE id = $1 AND lease_token = $4",
    [exportId, videoUrl, worker, token],
  );
  // Zero rows: the lease was granted again since; the newer holder's render is the one that counts.
  return written.rowCount === 1 ? "rendered" : "refused: the lease has a newer holder";
}

/** The expensive part: minutes of rendering in production. */
async function render(exportId, worker) {
  const response = await fetch(`${process.env.RENDER_API_URL}/exports/${exportId}?worker=${worker}`, { method: "POST" });
  if (!response.ok) throw new Error(`renderer answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
