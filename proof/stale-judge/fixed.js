// The same render queue, its sweeper judging by the heartbeat: a worker claims a render, beats while it renders
// (and stops when the beat finds the render taken from it), and a sweeper hands back renders whose worker died. It
// judges death by heartbeat_at, the last sign of progress: a render that takes longer than the threshold keeps
// its worker and is never rendered twice; a worker that dies stops beating and its render is handed back.
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
    .where("heartbeat_at", "<", new Date(Date.now() - STALE_MS))
    .update({ status: "QUEUED", worker: null });
}

/** The expensive part: minutes of rendering in production. */
async function render(id, signal) {
  const response = await fetch(`${process.env.RENDER_API_URL}/renders/${id}`, { method: "POST", signal });
  if (!response.ok) throw new Error(`renderer answered ${response.status}`);
  const { url } = await response.json();
  return url;
}
