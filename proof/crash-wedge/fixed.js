// The first seed's guard with its other half: the same claim, plus a recovery on the read path that unlocks a
// job whose worker died. Death is judged by the last sign of progress (the job's or its newest item's update
// time), never by when the job started, and the recovery is the same kind of conditional update as the claim,
// so it backs off when a live worker finishes first.
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
/** Longer than any healthy gap between two progress signals (one item takes at most a few minutes). */
const STALE_AFTER = process.env.STALE_AFTER ?? "30 minutes";

/** Synthesises every item of a job that is not done yet; refuses while another generation holds the job. */
export async function generateJob(jobId) {
  const claimed = await pool.query(
    "UPDATE audio_jobs SET status = 'GENERATING', updated_at = now() WHERE id = $1 AND status <> 'GENERATING'",
    [jobId],
  );
  if (claimed.rowCount === 0) return "refused: already generating";
  try {
    const { rows: items } = await pool.query(
      "SELECT id, text FROM audio_items WHERE job_id = $1 AND status <> 'DONE' ORDER BY id",
      [jobId],
    );
    for (const item of items) {
      await pool.query("UPDATE audio_items SET status = 'GENERATING', updated_at = now() WHERE id = $1", [item.id]);
      const url = await synthesize(item.text);
      await pool.query(
        "UPDATE audio_items SET status = 'DONE', audio_url = $2, updated_at = now() WHERE id = $1",
        [item.id, url],
      );
    }
    await pool.query(
      "UPDATE audio_jobs SET status = 'COMPLETED', updated_at = now() WHERE id = $1 AND status = 'GENERATING'",
      [jobId],
    );
    return "completed";
  } catch (error) {
    await pool.query(
      "UPDATE audio_jobs SET status = 'FAILED', error_message = $2, updated_at = now() WHERE id = $1 AND status = 'GENERATING'",
      [jobId, String(error)],
    );
    throw error;
  }
}

/**
 * The admin page's read, which also unlocks: a generation with no progress for STALE_AFTER is dead, so the job
 * becomes FAILED (which the claim accepts again) and its unfinished items ERROR. Items left GENERATING after
 * their job ended are recovered the same way.
 */
export async function getJob(jobId) {
  const job = await readJob(jobId);
  if (job?.stale) {
    const recovered = await pool.query(
      `UPDATE audio_jobs SET status = 'FAILED', error_message = 'auto-recovered: no progress', updated_at = now()
        WHERE id = $1 AND status = 'GENERATING' AND updated_at < now() - $2::interval
          AND NOT EXISTS (SELECT 1 FROM audio_items WHERE job_id = $1 AND updated_at >= now() - $2::interval)`,
      [jobId, STALE_AFTER],
    );
    // Zero rows: a live worker finished or made progress since we looked. Back off and show what it wrote.
    if (recovered.rowCount === 0) return readJob(jobId);
  }
  await pool.query(
    `UPDATE audio_items SET status = 'ERROR', updated_at = now()
      WHERE job_id = $1 AND status = 'GENERATING' AND updated_at < now() - $2::interval
        AND NOT EXISTS (SELECT 1 FROM audio_jobs WHERE id = $1 AND status = 'GENERATING')`,
    [jobId, STALE_AFTER],
  );
  return readJob(jobId);
}

async function readJob(jobId) {
  const { rows } = await pool.query(
    `SELECT j.id, j.status, j.error_message,
            j.status = 'GENERATING' AND greatest(j.updated_at, max(i.updated_at)) < now() - $2::interval AS stale
       FROM audio_jobs j LEFT JOIN audio_items i ON i.job_id = j.id
      WHERE j.id = $1
      GROUP BY j.id`,
    [jobId, STALE_AFTER],
  );
  return rows[0];
}

/** One billed call to the speech API; minutes each in production. */
async function synthesize(text) {
  const response = await fetch(process.env.SPEECH_API_URL, { method: "POST", body: text });
  if (!response.ok) throw new Error(`speech API answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
