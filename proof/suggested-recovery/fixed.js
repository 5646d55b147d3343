// A render job claimed by a conditional update, with a heartbeat on the job row while it works, and nothing that
// unlocks a job whose worker died: require-stale-recovery flags the claim and suggests the recovery. fixed.js is
// this program with that suggestion applied as the editor applies it, only its threshold tuned.
import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

/** Renders every page of a job; refuses while another render holds it. */
export async function renderJob(jobId) {
  const claimed = await pool.query(
    "UPDATE render_jobs SET status = 'RENDERING', updated_at = now() WHERE id = $1 AND status <> 'RENDERING'",
    [jobId],
  );
  if (claimed.rowCount === 0) return "refused: already rendering";
  try {
    for (let page = 1; page <= Number(process.env.PAGES ?? 3); page++) {
      await renderPage(page);
      // The heartbeat: progress on the job row, written only while this render still holds it.
      const beat = await pool.query(
        "UPDATE render_jobs SET pages_done = $2, updated_at = now() WHERE id = $1 AND status = 'RENDERING'",
        [jobId, page],
      );
      if (beat.rowCount === 0) throw new Error("render taken over");
    }
    await pool.query("UPDATE render_jobs SET status = 'COMPLETED', updated_at = now() WHERE id = $1 AND status = 'RENDERING'", [jobId]);
    return "completed";
  } catch (error) {
    await pool.query("UPDATE render_jobs SET status = 'FAILED', updated_at = now() WHERE id = $1 AND status = 'RENDERING'", [jobId]);
    throw error;
  }
}

/** How long a render_jobs row may stay RENDERING without updated_at moving before its holder counts as dead. */
const STALE_RENDER_JOBS_RENDERING_MS = Number(process.env.STALE_MS ?? 15 * 60 * 1000);

/**
 * Gives render_jobs rows left RENDERING by a holder that died (SIGKILL, OOM, a deploy) back to FAILED, once
 * updated_at has not moved for STALE_RENDER_JOBS_RENDERING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleRenderJobs() {
  const result = await pool.query(
    "UPDATE render_jobs SET status = $1 WHERE status = $2 AND updated_at < now() - $3 * interval '1 millisecond'",
    ["FAILED", "RENDERING", STALE_RENDER_JOBS_RENDERING_MS],
  );
  return result.rowCount ?? 0;
}

/** The admin page's read. */
export async function getJob(jobId) {
  const { rows } = await pool.query("SELECT id, status, pages_done FROM render_jobs WHERE id = $1", [jobId]);
  return rows[0];
}

/** One page: seconds each in production. */
async function renderPage(page) {
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.PAGE_MS ?? 50) + page));
}
