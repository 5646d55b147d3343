// The first seed's guard as first written: a compare-and-set claim lets exactly one generation run, and
// try/catch marks the job FAILED on every error. Nothing unlocks a job whose worker was killed: SIGKILL runs
// neither catch nor finally, and every later claim is refused.
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

/** Synthesises every item of a job that is not done yet; refuses while another generation holds the job. */
export async function generateJob(jobId) {
  const claimed = await pool.query( // flagged: locks/require-stale-recovery
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

/** The admin page's read. */
export async function getJob(jobId) {
  const { rows } = await pool.query("SELECT id, status, error_message FROM audio_jobs WHERE id = $1", [jobId]);
  return rows[0];
}

/** One billed call to the speech API; minutes each in production. */
async function synthesize(text) {
  const response = await fetch(process.env.SPEECH_API_URL, { method: "POST", body: text });
  if (!response.ok) throw new Error(`speech API answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
