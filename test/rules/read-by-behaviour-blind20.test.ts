// Real code of blind-20 (issue 35), read by what it does, in our words:
// - a SET list the code builds at run time (`SET ${updates.join(", ")}`) from an array of fixed assignments is those
//   assignments, and whatever the code pushes onto the array is more, unknown: the write moves the columns the array
//   names, and may move any other;
// - a progress write (it stamps a progress time) that stamps the claim's own stamp again keeps that stamp moving: a
//   recovery judged by it judges a live holder's last progress, whatever the column is called;
// - a take-over of a lock row whose write compares the column with what the read found, in any spelling of equality
//   (`value: { equals: at }`) and through a const computed from it (`const at = stampOf(existing?.value)`), is one
//   compare-and-set: of two callers that read the same stale row, the second matches nothing;
// - a row a helper of the module reads and hands back (`const existing = await findLock(task)`) is that read's row:
//   a stale lock row deleted by its own id is the row judged, which a lock taken since (a new row) does not share;
// - a write of the rows named by a list of keys the caller holds (`id = ANY($1)` of the jobs it claimed, at shut-down)
//   is that caller handing its own rows back, not a recovery of everyone's: a claim nothing else recovers is still
//   unrecovered when the process is killed instead;
// - a row named by a const holding a field of the function's parameter (`const renderId = render.render_id`) is the
//   parameter's row, so a read of it in the caller is the check of a check-then-act claim; and a write of the value
//   the same function already stored in that row, on every way to it, is the holder's progress, not a second claim.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A crawl queue on node-postgres: a claim that stamps locked_at, a progress write built at run time, a requeue. */
const CRAWL_QUEUE = (progressSets: string) => `import { Pool } from "pg";

const pool = new Pool();

export async function claimNext(workerId: string) {
  const { rows } = await pool.query(
    \`UPDATE crawl_jobs SET status = 'processing', worker_id = $1, locked_at = NOW()
     WHERE id = (SELECT id FROM crawl_jobs WHERE status = 'ready' ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING id\`,
    [workerId],
  );
  return rows[0]?.id;
}

export async function recordProgress(jobId: string, pagesCrawled?: number) {
  const updates: string[] = ${progressSets};
  const values: unknown[] = [jobId];
  if (pagesCrawled !== undefined) {
    updates.push(\`pages_crawled = $2\`);
    values.push(pagesCrawled);
  }
  await pool.query(\`UPDATE crawl_jobs SET \${updates.join(", ")} WHERE id = $1\`, values);
}

export async function requeueStale(cutoff: Date) {
  await pool.query(
    \`UPDATE crawl_jobs SET status = 'ready', worker_id = NULL, locked_at = NULL
     WHERE status = 'processing' AND locked_at < $1\`,
    [cutoff],
  );
}
`;

ruleTester.run("progress-based-staleness (a SET list built at run time)", progressBasedStaleness, {
  valid: [
    // Every progress write stamps locked_at again: the requeue judges the holder's last progress.
    { code: CRAWL_QUEUE(`["updated_at = NOW()", "locked_at = NOW()"]`) },
    // The same with the separator and the order changed.
    {
      code: CRAWL_QUEUE(`["locked_at = now()", "updated_at = now()"]`).replace('updates.join(", ")', "updates.join()"),
    },
  ],
  invalid: [
    // The progress write moves updated_at only: locked_at is when the job was claimed, and a slow crawl is requeued
    // while it still runs.
    {
      code: CRAWL_QUEUE(`["updated_at = NOW()"]`),
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 26,
          data: {
            model: "crawl_jobs",
            field: "status",
            value: "processing",
            claimLine: "6",
            timeField: "locked_at",
            stamped: "set once when work starts",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});

/** A nightly lock kept as a settings row: created under its key, taken over once its stamp is older than the TTL. */
const SETTINGS_LOCK = (filter: string) => `import { prisma } from "./db";

const stampOf = (value: unknown): number => (typeof value === "number" ? value : 0);

export async function takeNightlyLock(ttlMs = 600_000): Promise<boolean> {
  const now = Date.now();
  try {
    await prisma.setting.create({ data: { key: "lock:nightly", value: now } });
    return true;
  } catch {
    const existing = await prisma.setting.findUnique({ where: { key: "lock:nightly" } });
    const at = stampOf(existing?.value);
    if (now - at <= ttlMs) return false;
    const taken = await prisma.setting.updateMany({
      where: { ${filter} },
      data: { value: now },
    });
    return taken.count === 1;
  }
}
`;

ruleTester.run("atomic-claim (a take-over compared with what the read found)", atomicClaim, {
  valid: [
    { code: SETTINGS_LOCK(`key: "lock:nightly", value: { equals: at }`) },
    { code: SETTINGS_LOCK(`key: "lock:nightly", value: existing?.value`) },
  ],
  invalid: [
    // The stale row found, then written by its key alone: two callers that read it together both take it.
    {
      code: SETTINGS_LOCK(`key: "lock:nightly"`),
      errors: [
        { messageId: "checkThenTake", line: 14, data: { value: "lock:nightly", model: "setting", checkLine: "11" } },
      ],
    },
  ],
});

/** A sync lock kept as rows under a unique task: inserted, and reclaimed once stale through a helper's read. */
const SYNC_LOCK = (deleteFilter: string) => `import { prisma } from "./db";

const STALE_MS = 30 * 60 * 1000;

async function insertLock(task: string): Promise<boolean> {
  try {
    await prisma.syncLock.create({ data: { task, lockedAt: new Date() } });
    return true;
  } catch {
    return false;
  }
}

async function findLock(task: string) {
  const rows = await prisma.syncLock.findMany({ where: { task }, take: 1 });
  return rows[0] ?? null;
}

export async function acquireSyncLock(task: string): Promise<boolean> {
  if (await insertLock(task)) return true;
  const existing = await findLock(task);
  if (!existing) return insertLock(task);
  if (Date.now() - existing.lockedAt.getTime() < STALE_MS) return false;
  await prisma.syncLock.deleteMany({ where: { ${deleteFilter} } });
  return insertLock(task);
}
`;

/** A batch worker on node-postgres that hands back the jobs it claimed when it shuts down. */
const BATCH_WORKER = (requeue: string) => `import { Pool } from "pg";

const pool = new Pool();
const claimed = new Set<string>();

export async function claimBatch(limit: number) {
  const { rows } = await pool.query(
    \`UPDATE extraction_jobs SET status = 'processing', started_at = NOW()
     WHERE id IN (SELECT id FROM extraction_jobs WHERE status = 'pending' LIMIT $1 FOR UPDATE SKIP LOCKED)
     RETURNING id\`,
    [limit],
  );
  for (const row of rows) claimed.add(row.id);
  return rows;
}

export async function requeueOnShutdown() {
  const ids = [...claimed];
  if (ids.length === 0) return;
  await pool.query(
    \`UPDATE extraction_jobs SET status = 'pending', started_at = NULL
     WHERE ${requeue}\`,
    [ids],
  );
}
`;

ruleTester.run("require-stale-recovery (a shut-down hand-back of the caller's own rows)", requireStaleRecovery, {
  valid: [
    // A sweep of every stalled row (by age) answers Q1.
    {
      code: BATCH_WORKER(
        "status = 'processing' AND started_at < NOW() - INTERVAL '30 minutes' AND id <> ALL($1::uuid[])",
      ),
    },
    // A list of keys the module picked by age (a stale scan, then `id = ANY($1)`) is a recovery's, not a hand-back:
    // it answers Q1 (conditional-recovery asks whether the write re-checks the age).
    {
      code: BATCH_WORKER("id = ANY($1::uuid[]) AND status = 'processing'").replace(
        "const ids = [...claimed];",
        "const { rows: stale } = await pool.query(`SELECT id FROM extraction_jobs WHERE status = 'processing' AND started_at < NOW() - INTERVAL '30 minutes'`);\n  const ids = stale.map((r) => r.id);",
      ),
    },
  ],
  invalid: [
    // The hand-back runs only on a clean shut-down; a killed worker's rows stay processing.
    {
      code: BATCH_WORKER("id = ANY($1::uuid[]) AND status = 'processing'"),
      errors: [
        {
          messageId: "missingRecovery",
          line: 7,
          data: { model: "extraction_jobs", field: "status", value: "processing" },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery (a stale lock row read through a helper)", conditionalRecovery, {
  valid: [
    { code: SYNC_LOCK("id: existing.id") },
    // The worker's own claimed rows handed back by their keys: no recovery of anyone else's, so no age is asked of it.
    { code: BATCH_WORKER("id = ANY($1::uuid[]) AND status = 'processing'") },
  ],
  invalid: [
    {
      code: SYNC_LOCK("task"),
      errors: [
        {
          messageId: "lockRowCheckInJs",
          line: 24,
          data: {
            model: "syncLock",
            claimLine: "7",
            checkedWhere: "in JavaScript",
            checkLine: "23",
            rowFilter: "task",
          },
        },
      ],
    },
  ],
});

/** A render queue on Supabase: rows read as waiting, each moved through a helper that stores what it is handed. */
const RENDER_QUEUE = (progress: string) => `import { createClient } from "@supabase/supabase-js";

const db = createClient(process.env.DB_URL!, process.env.DB_KEY!);

async function setRenderState(renderId: string, state: string, step: string | null = null, percent: number | null = null) {
  const patch = { state, step, percent, touched_at: new Date().toISOString() };
  const { error } = await db.from("renders").update(patch).eq("render_id", renderId);
  if (error) throw error;
}

export async function pollRenders() {
  const { data: renders } = await db.from("renders").select("*").eq("state", "waiting").limit(5);
  for (const render of renders ?? []) await renderOne(render);
}

async function renderOne(render: { render_id: string; scene: string; resumed: boolean }) {
  const renderId = render.render_id;
  try {
    await setRenderState(renderId, "rendering", "frames", 10);
    await drawFrames(render.scene);
    ${progress}
    await encode(renderId);
    await setRenderState(renderId, "done");
  } catch (err) {
    await setRenderState(renderId, "failed");
  }
}

declare function drawFrames(scene: string): Promise<void>;
declare function encode(id: string): Promise<void>;
`;

const renderClaim = (line: number) => ({
  messageId: "checkThenAct" as const,
  line,
  data: {
    model: "renders",
    field: "state",
    value: "rendering",
    claimLine: String(line),
    checkedWhere: "with a separate read",
    checkLine: "12",
  },
});

ruleTester.run("atomic-claim (a caller's read of the row a helper then claims)", atomicClaim, {
  valid: [],
  invalid: [
    // Read as waiting in the poller, claimed by id alone in the worker it calls: one claim, at the first write;
    // the second write of "rendering" is the holder's progress.
    {
      code: RENDER_QUEUE(`await setRenderState(renderId, "rendering", "encode", 60);`),
      errors: [{ ...renderClaim(19), suggestions: [] }],
    },
    // A write of "rendering" that only some ways reach first does not make the later one the holder's: both claim.
    {
      code: RENDER_QUEUE(`await setRenderState(renderId, "rendering", "encode", 60);`).replace(
        `    await setRenderState(renderId, "rendering", "frames", 10);`,
        `    if (!render.resumed) await setRenderState(renderId, "rendering", "frames", 10);`,
      ),
      errors: [
        { ...renderClaim(19), suggestions: [] },
        { ...renderClaim(21), suggestions: [] },
      ],
    },
  ],
});
