// A render queue in Knex: a worker claims a render, beats its heartbeat while it renders (and stops rendering
// when the beat finds the render taken from it), and a sweeper hands back renders whose worker died. The sweeper
// judges death by started_at, when the render began: a render that takes longer than the threshold is handed to
// a second worker while the first is alive and beating, and the export is rendered twice.
import knex from "knex";

const db = knex({ client: "pg", connection: process.env.DATABASE_URL, pool: { min: 0, max: 2 } });
/** Longer than any healthy gap between two heartbeats. */
const STALE_MS = Number(process.env.STALE_MS ?? 10 * 60 * 1000);
const BEAT_MS = Number(process.env.BEAT_MS ?? 30 * 1000);

export async function renderExport(id, worker) {
  const taken = await db("renders")
    .where({ id, status: "QUEUED" })
    .update({ status: "RENDERING", worker, started_at: db.fn.now(), heartbeat_at: db.fn.now() });
  if (taken !== 1) return "busy";
  const controller = new AbortController();
  const heartbeat = setInterval(() => {
    db("renders")
      .where({ id, status: "RENDERING", worker })
      .update({ heartbeat_at: db.fn.now() })
      .then((touched) => {
        if (touched === 0) controller.abort();
      }, () => controller.abort());
  }, BEAT_MS);
  try {
    const url = await render(id, controller.signal);
    const done = await db("renders").where({ id, status: "RENDERING", worker }).update({ status: "DONE", url });
    return done === 1 ? "rendered" : "refused: handed to another worker";
  } finally {
    clearInterval(heartbeat);
  }
}

/** The sweeper, run every minute: renders whose worker died go back to the queue. */
export async function requeueStale() {
  return db("renders")
    .where({ status: "RENDERING" })
    .where("started_at", "<", new Date(Date.now() - STALE_MS)) // flagged: locks/progress-based-staleness
    .update({ status: "QUEUED", worker: null });
}

/** The expensive part: minutes of rendering in production. */
async function render(id, signal) {
  const response = await fetch(`${process.env.RENDER_API_URL}/renders/${id}`, { method: "POST", signal });
  if (!response.ok) throw new Error(`renderer answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
