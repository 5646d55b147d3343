// Raw SQL through the five database rules: `pool.query(text, params)`, `query({ text, values })`, mysql2
// `execute` with `?`, Prisma `$executeRaw`/`$queryRaw` tagged templates and `$executeRawUnsafe`, `knex.raw`,
// postgres.js `sql` tags, better-sqlite3 `prepare(…).run(…)`, and the `sqlite` driver's (or an adapter's)
// `db.run(text, a, b)` / `db.all(text, [a])` / `db.get(text)`. The statement is parsed: subqueries and CTEs
// that pick rows of the same table (`FOR UPDATE SKIP LOCKED`) are read into the filter, `now() - interval …`
// is the clock, parameters take the static value of their JS expression.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester, recoveredElsewhere } from "../rule-tester.js";

const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
const lock = (model: string, field: string, value: string) => ({ model, field, value });
const claimed = (model: string, field: string, value: string, claimLine: number) => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
});

/** A queue claim on node-postgres at line 2 (column 26): the next queued job, picked with FOR UPDATE SKIP LOCKED. */
const QUEUE_CLAIM = `export async function claimNext(workerId: string) {
  const { rows } = await pool.query(
    "UPDATE jobs SET status = 'running', locked_by = $1, heartbeat_at = now() WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *",
    [workerId],
  );
  return rows[0];
}
`;

/** A queue claim through Prisma raw SQL: the next queued row read FOR UPDATE SKIP LOCKED, then written by id. */
const LOCKED_CLAIM = `export async function claimNext(kind?: string) {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
      \`SELECT id FROM jobs WHERE status = 'queued' \${kind ? \`AND kind = '\${kind}'\` : ""} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED\`,
    );
    if (rows.length === 0) return null;
    await tx.$executeRawUnsafe("UPDATE jobs SET status = 'running' WHERE id = $1", rows[0].id);
    return rows[0].id;
  });
}`;

/** A task queue on SQLite through a service's adapter: ids read, then flipped to running by id (line 6). */
const sqliteBatch = (extra = "") => `const db = require("./db");
async function takeBatch(workerId) {
  await db.run("BEGIN");
  const rows = await db.all("SELECT id FROM tasks WHERE status = 'queued' LIMIT ?", 10);
  const ids = rows.map((r) => r.id).join(",");
  await db.run(\`UPDATE tasks SET status = 'running', owner = ? WHERE id IN (\${ids})\`, workerId);
  await db.run("COMMIT");
  return rows;
}
${extra}module.exports = { takeBatch };
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      // the claim's time lives in a JSON document (`metadata->>'claimedAt'`): the sweep's age test reads that member
      name: "a recovery whose age test compares a JSON member cast to a timestamp",
      code: `export async function claim(id: number) {
  return prisma.$executeRaw\`UPDATE "Report" SET status = 'Rendering', metadata = metadata || jsonb_build_object('heartbeatAt', now()) WHERE id = \${id} AND status = 'Queued'\`;
}
export async function reset(minutes = 10) {
  return prisma.$executeRaw\`UPDATE "Report" SET status = 'Queued' WHERE status = 'Rendering' AND (metadata->>'heartbeatAt')::timestamptz < now() - \${\`\${minutes} minutes\`}::interval\`;
}`,
    },
    {
      // the same names on routers, maps and caches: no statement text, no access
      name: "get/run/all calls whose first argument is no SQL statement",
      code: `export function routes(app, cache, settings) {
  app.get("/tasks/running", (req, res) => res.json(cache.get("running")));
  settings.all("UPDATE");
  return jobs.run("status = 'running'", { status: "running" });
}`,
      languageOptions: javascript,
    },
    {
      name: "SQLite adapter: the batch with a sweeper judged by the heartbeat",
      code: sqliteBatch(`async function sweep() {
  await db.run("UPDATE tasks SET status = 'queued' WHERE status = 'running' AND heartbeat_at < datetime('now', '-10 minutes')");
}
`),
      languageOptions: javascript,
    },
    {
      name: "the queue claim with a conditional recovery judged by heartbeat",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued', locked_by = NULL WHERE status = 'running' AND heartbeat_at < now() - interval '5 minutes'");
}`,
    },
    {
      name: 'a Prisma claim recovered by a raw-SQL sweeper of the same table ("Export" pairs with prisma.export)',
      code: `export async function claim(id: string) {
  await prisma.export.updateMany({ where: { id, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
}
export async function sweep() {
  await prisma.$executeRaw\`UPDATE "Export" SET status = 'FAILED' WHERE status = 'RENDERING' AND "updatedAt" < now() - interval '15 minutes'\`;
}`,
    },
    {
      name: "a lease take-over in the claim itself, the elapsed time written as now() - heartbeat_at > interval",
      code: `export async function claim(id: string) {
  await sql\`UPDATE jobs SET status = 'running', heartbeat_at = now() WHERE id = \${id} AND (status <> 'running' OR now() - heartbeat_at > interval '2 minutes')\`;
}`,
    },
    {
      name: "a plain transition PENDING → PAID by id is no lock",
      code: `export async function markPaid(id: string) {
  await pool.query("UPDATE orders SET status = 'paid', paid_at = now() WHERE id = $1 AND status = 'pending'", [id]);
}`,
    },
    {
      name: "a bulk move into a waiting state (plain JS, knex.raw with bindings) is no claim",
      code: `export function retryFailed(maxAttempts) {
  return knex.raw("UPDATE jobs SET status = 'queued' WHERE status = 'failed' AND attempts < ?", [maxAttempts]);
}`,
      languageOptions: javascript,
    },
    {
      name: "reports and advisory locks only read: no claim",
      code: `export async function stats() {
  await pool.query("SELECT pg_advisory_lock($1)", [42]);
  const { rows } = await pool.query("SELECT status, count(*) FROM jobs WHERE status IN ('running', 'queued') GROUP BY status");
  return rows;
}`,
    },
    {
      name: "a lock row inserted ON CONFLICT DO NOTHING, with a sweeper that deletes expired rows",
      code: `export async function acquire(name: string, owner: string) {
  const res = await pool.query("INSERT INTO job_locks (name, owner, expires_at) VALUES ($1, $2, now() + interval '1 minute') ON CONFLICT DO NOTHING", [name, owner]);
  return res.rowCount === 1;
}
export async function sweepLocks() {
  await pool.query("DELETE FROM job_locks WHERE expires_at < now()");
}`,
    },
    {
      name: "a lock row taken over when expired: ON CONFLICT … DO UPDATE … WHERE expires_at < now()",
      code: `export async function acquire(name: string, owner: string) {
  await pool.query(
    "INSERT INTO leases (name, owner, expires_at) VALUES ($1, $2, now() + interval '30 seconds') ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at WHERE leases.expires_at < now()",
    [name, owner],
  );
}`,
    },
    {
      name: "not SQL: calls named query/execute/raw whose text is not a statement, and a Drizzle fragment",
      code: `export async function lookalikes(router: Router) {
  await graphql.query("query { jobs { id status } }");
  await cli.execute("select the default profile");
  await db.update(jobs).set({ status: "running", updatedAt: sql\`now()\` }).where(eq(jobs.id, 1));
  router.raw("UPDATE is a word");
}`,
    },
    {
      name: "a class service on mysql2: claim and sweeper in the same class",
      code: `export class JobService {
  constructor(private readonly conn: Connection) {}
  async claim(id: number) {
    await this.conn.execute("UPDATE \`jobs\` SET \`status\` = ? WHERE \`id\` = ? AND \`status\` <> ?", ["running", id, "running"]);
  }
  async sweep() {
    await this.conn.execute("UPDATE jobs SET status = 'failed' WHERE status = 'running' AND updated_at < NOW() - INTERVAL 15 MINUTE");
  }
}`,
    },
    {
      name: "claimed rows removed by a DELETE pinned to the claimed status and judged by age",
      code:
        QUEUE_CLAIM +
        `export async function purge() {
  await pool.query("DELETE FROM jobs WHERE status = 'running' AND heartbeat_at < now() - interval '1 hour'");
}`,
    },
    {
      name: "a processing flag set true, cleared by a sweeper judged by updated_at",
      code: `export async function claim(id: string) {
  await pool.query("UPDATE documents SET is_processing = true, updated_at = now() WHERE id = $1 AND is_processing = false", [id]);
}
export async function sweep() {
  await pool.query("UPDATE documents SET is_processing = false WHERE is_processing = true AND updated_at < now() - interval '10 minutes'");
}`,
    },
  ],
  invalid: [
    {
      name: "SQLite adapter: db.run flips read ids to running, with nothing to move them back",
      code: sqliteBatch(),
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 6, column: 9, data: lock("tasks", "status", "running") }],
    },
    {
      // The locking read (with an optional AND term, unknown but only narrowing) and the write by id are one claim.
      name: "a row locked by SELECT … FOR UPDATE in the transaction, then written by id: a claim, with no recovery",
      code: LOCKED_CLAIM,
      errors: [
        { messageId: "missingRecovery", line: 7, column: 11, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "the queue claim with no recovery",
      code: QUEUE_CLAIM,
      errors: [
        { messageId: "missingRecovery", line: 2, column: 26, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "a CTE picking the next job for postgres.js (plain JS)",
      code: `export async function next() {
  const [job] = await sql\`WITH next AS (SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) UPDATE jobs SET status = 'running' FROM next WHERE jobs.id = next.id RETURNING jobs.*\`;
  return job;
}`,
      languageOptions: javascript,
      errors: [
        { messageId: "missingRecovery", line: 2, column: 23, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "Prisma $executeRaw with enum casts and a parameter hole",
      code: `export async function start(id: string) {
  return prisma.$executeRaw\`UPDATE "Export" SET status = 'RENDERING'::"ExportStatus" WHERE id = \${id} AND status <> 'RENDERING'::"ExportStatus"\`;
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          column: 10,
          data: lock("Export", "status", "RENDERING"),
          suggestions: [],
        },
      ],
    },
    {
      name: "mysql2 execute: the claimed value comes from the params array (a const)",
      code: `const RUNNING = "running";
export async function start(conn: Connection, id: number) {
  const [res] = await conn.execute("UPDATE jobs SET status = ?, updated_at = NOW() WHERE id = ? AND status != ?", [RUNNING, id, RUNNING]);
  return res;
}`,
      errors: [
        { messageId: "missingRecovery", line: 3, column: 23, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "query({ text, values }) inside a transaction callback, .then",
      code: `export function start(id: string) {
  return withTransaction((client) =>
    client.query({ text: "UPDATE documents SET state = 'processing' WHERE id = $1 AND state = ANY(ARRAY['new', 'failed'])", values: [id] }).then((r) => r.rowCount === 1),
  );
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 3,
          column: 5,
          data: lock("documents", "state", "processing"),
          suggestions: [],
        },
      ],
    },
    {
      name: "better-sqlite3: prepare(text).run(id), NOT IN excludes the claimed value",
      code: `export function claim(id: number) {
  return db.prepare("UPDATE uploads SET is_processing = 1, status = 'uploading' WHERE id = ? AND status NOT IN ('uploading', 'done')").run(id);
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          column: 10,
          data: lock("uploads", "status", "uploading"),
          suggestions: [],
        },
      ],
    },
    {
      name: "a processing flag set true by a conditional write, never cleared by age",
      code: `export async function claim(id: string) {
  await pool.query("UPDATE documents SET is_processing = true WHERE id = $1 AND is_processing = false", [id]);
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          column: 9,
          data: lock("documents", "is_processing", "true"),
          suggestions: [],
        },
      ],
    },
    {
      name: "MySQL INSERT IGNORE of a lock row (plain JS)",
      code: `export async function lockCron(conn, name) {
  const [res] = await conn.query("INSERT IGNORE INTO cron_locks (name) VALUES (?)", [name]);
  return res.affectedRows === 1;
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingExpiry", line: 2, column: 23, data: { model: "cron_locks" }, suggestions: [] }],
    },
    {
      name: "a lock row inserted ON CONFLICT DO NOTHING that nothing expires",
      code: `export async function acquire(name: string) {
  const res = await pool.query("INSERT INTO cron_locks (name, locked_at) VALUES ($1, now()) ON CONFLICT DO NOTHING", [name]);
  return res.rowCount === 1;
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 21, data: { model: "cron_locks" }, suggestions: [] }],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    {
      // FOR UPDATE keeps the rows the read found until the transaction ends: nobody can claim them in between
      name: "a locking read in the transaction, then the write by id",
      code: LOCKED_CLAIM,
    },
    {
      name: "the status is compared in the UPDATE itself",
      code: `export async function start(id: string) {
  const { rows } = await pool.query("SELECT * FROM jobs WHERE id = $1", [id]);
  if (rows[0].status !== "queued") return;
  await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'queued'", [id]);
}`,
    },
    {
      name: "a compare-and-set on the version read before is atomic",
      code: `export async function start(id: string) {
  const job = (await pool.query("SELECT * FROM jobs WHERE id = $1", [id])).rows[0];
  if (job.status === "running") return;
  await pool.query("UPDATE jobs SET status = 'running', version = version + 1 WHERE id = $1 AND version = $2", [id, job.version]);
}`,
    },
  ],
  invalid: [
    {
      name: "read, compare in JavaScript, then write by id",
      code: `export async function start(id: string) {
  const { rows: [job] } = await pool.query("SELECT * FROM jobs WHERE id = $1", [id]);
  if (job.status === "running") return;
  await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1", [id]);
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: { ...claimed("jobs", "status", "running", 4), checkedWhere: "in JavaScript", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...claimed("jobs", "status", "running", 4), checkedWhere: "in JavaScript", checkLine: "3" },
              output: `export async function start(id: string) {
  const { rows: [job] } = await pool.query("SELECT * FROM jobs WHERE id = $1", [id]);
  if (job.status === "running") return;
  await pool.query("UPDATE jobs SET status = 'running' WHERE status <> 'running' AND id = $1", [id]);
}`,
            },
          ],
        },
      ],
    },
    {
      // the same read without FOR UPDATE locks nothing: two callers read the same queued row and both claim it
      name: "a plain read in the transaction, then the write by id",
      code: `export async function claimNext() {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe("SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1");
    if (rows.length === 0) return null;
    await tx.$executeRawUnsafe("UPDATE jobs SET status = 'running' WHERE id = $1", rows[0].id);
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 11,
          data: { ...claimed("jobs", "status", "running", 5), checkedWhere: "with a separate read", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                ...claimed("jobs", "status", "running", 5),
                checkedWhere: "with a separate read",
                checkLine: "3",
              },
              output: `export async function claimNext() {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRawUnsafe("SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1");
    if (rows.length === 0) return null;
    await tx.$executeRawUnsafe("UPDATE jobs SET status = 'running' WHERE status <> 'running' AND id = $1", rows[0].id);
  });
}`,
            },
          ],
        },
      ],
    },
    {
      name: "a separate read that selects queued rows, then an unconditional tagged-template write (plain JS)",
      code: `export async function start(id) {
  const found = await sql\`SELECT id FROM jobs WHERE id = \${id} AND status = 'queued'\`;
  if (found.length === 0) return;
  await sql\`UPDATE jobs SET status = 'running' WHERE id = \${id}\`;
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: { ...claimed("jobs", "status", "running", 4), checkedWhere: "with a separate read", checkLine: "2" },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                ...claimed("jobs", "status", "running", 4),
                checkedWhere: "with a separate read",
                checkLine: "2",
              },
              output: `export async function start(id) {
  const found = await sql\`SELECT id FROM jobs WHERE id = \${id} AND status = 'queued'\`;
  if (found.length === 0) return;
  await sql\`UPDATE jobs SET status = 'running' WHERE status <> 'running' AND id = \${id}\`;
}`,
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "status and age in one statement",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE status = 'running' AND heartbeat_at < $1", [new Date(Date.now() - 60_000)]);
}`,
    },
    {
      name: "the recovery picks stale rows with a same-table subquery",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE id IN (SELECT id FROM jobs WHERE status = 'running' AND heartbeat_at < now() - interval '5 minutes' FOR UPDATE SKIP LOCKED)");
}`,
    },
  ],
  invalid: [
    {
      name: "the age without the claimed status, with a suggestion",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE heartbeat_at < now() - interval '5 minutes'");
}`,
      errors: [
        {
          messageId: "missingStatus",
          line: 9,
          column: 9,
          data: {
            ...claimed("jobs", "status", "running", 2),
            target: "queued",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [
            {
              messageId: "addStatus",
              data: {
                ...claimed("jobs", "status", "running", 2),
                target: "queued",
                rowFilter: "its filter",
                checkedWhere: "",
                checkLine: "",
              },
              output:
                QUEUE_CLAIM +
                `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE status = 'running' AND heartbeat_at < now() - interval '5 minutes'");
}`,
            },
          ],
        },
      ],
    },
    {
      name: "a boot-time reset of every running job: no age",
      code:
        QUEUE_CLAIM +
        `export async function onBoot() {
  await pool.query("UPDATE jobs SET status = 'failed' WHERE status = 'running'");
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 9,
          column: 9,
          data: {
            ...claimed("jobs", "status", "running", 2),
            target: "failed",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [],
        },
      ],
    },
    {
      name: "age judged in JavaScript, then a write by id ($executeRawUnsafe)",
      code: `export async function claim(id: string) {
  await prisma.$executeRawUnsafe("UPDATE jobs SET status = 'running', updated_at = now() WHERE id = $1 AND status <> 'running'", id);
}
export async function unstick(id: string) {
  const [job] = await prisma.$queryRawUnsafe("SELECT * FROM jobs WHERE id = $1", id);
  if (job.status === "running" && Date.now() - job.updated_at.getTime() > 600_000) {
    await prisma.$executeRawUnsafe("UPDATE jobs SET status = 'failed' WHERE id = $1", id);
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 7,
          column: 11,
          data: {
            ...claimed("jobs", "status", "running", 2),
            target: "failed",
            rowFilter: "id",
            checkedWhere: "in JavaScript",
            checkLine: "6",
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    {
      name: "a JSON member named as progress (metadata->>'heartbeatAt')",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE status = 'running' AND (meta->>'heartbeatAt')::timestamptz < now() - interval '5 minutes'");
}`,
    },
    {
      name: "judged by the heartbeat, through COALESCE with the start time",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE status = 'running' AND COALESCE(heartbeat_at, started_at) < now() - interval '5 minutes'");
}`,
    },
    {
      name: "a stale scan by updated_at (mysql DATE_SUB)",
      code: `export async function stuck(conn: Connection) {
  const [rows] = await conn.query("SELECT id FROM jobs WHERE status = 'running' AND updated_at < DATE_SUB(NOW(), INTERVAL 10 MINUTE)");
  return rows;
}`,
    },
  ],
  invalid: [
    {
      // a member of a JSON column is a field like any other: a claim time kept in `metadata` is still a start time
      name: "a recovery judged by a JSON member cast to a timestamp, named as a start time",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE status = 'running' AND (meta->>'claimedAt')::timestamptz < now() - interval '1 hour'");
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 9,
          column: 9,
          data: {
            ...claimed("jobs", "status", "running", 2),
            stamped: "set once when work starts",
            timeField: "claimedAt",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "a recovery judged by started_at",
      code:
        QUEUE_CLAIM +
        `export async function sweep() {
  await pool.query("UPDATE jobs SET status = 'queued' WHERE status = 'running' AND started_at < now() - interval '1 hour'");
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 9,
          column: 9,
          data: {
            ...claimed("jobs", "status", "running", 2),
            stamped: "set once when work starts",
            timeField: "started_at",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "a stale scan judged by created_at, written as now() > created_at + interval",
      code: `export async function stuck() {
  return sql\`SELECT * FROM exports WHERE status = 'rendering' AND now() > created_at + interval '1 hour'\`;
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 2,
          column: 10,
          data: {
            model: "exports",
            field: "status",
            value: "rendering",
            timeField: "created_at",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "a lease take-over judged by claimed_at (plain JS)",
      code: `export function claim(id) {
  return pool.query("UPDATE jobs SET status = 'running', claimed_at = now() WHERE id = $1 AND (status <> 'running' OR claimed_at < now() - interval '10 minutes')", [id]);
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 2,
          column: 10,
          data: {
            ...claimed("jobs", "status", "running", 2),
            stamped: "set once when work starts",
            timeField: "claimed_at",
            progressFields: PROGRESS,
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    {
      name: "completion fenced by the owner column the claim wrote",
      code: `export async function work(workerId: string) {
  const { rows } = await pool.query("UPDATE jobs SET status = 'running', locked_by = $1 WHERE id = (SELECT id FROM jobs WHERE status = 'queued' LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id", [workerId]);
  if (!rows[0]) return;
  await run(rows[0].id);
  await pool.query("UPDATE jobs SET status = 'done' WHERE id = $1 AND locked_by = $2", [rows[0].id, workerId]);
}`,
    },
    {
      name: "completion fenced by the claimed status, tagged template",
      code: `export async function work(id: string) {
  const claimed = await sql\`UPDATE jobs SET status = 'running' WHERE id = \${id} AND status = 'queued' RETURNING id\`;
  if (claimed.length === 0) return;
  await run(id);
  await sql\`UPDATE jobs SET status = 'done' WHERE id = \${id} AND status = 'running'\`;
}`,
    },
  ],
  invalid: [
    recoveredElsewhere({
      name: "completion by id only, with a suggestion written into the SQL string",
      code: `export async function work(id: string) {
  const res = await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'queued'", [id]);
  if (res.rowCount === 0) return;
  await run(id);
  await pool.query("UPDATE jobs SET status = 'done' WHERE id = $1", [id]);
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 5,
          column: 9,
          data: { ...claimed("jobs", "status", "running", 2), target: "done" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("jobs", "status", "running", 2), target: "done" },
              output: `export async function work(id: string) {
  const res = await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1 AND status = 'queued'", [id]);
  if (res.rowCount === 0) return;
  await run(id);
  await pool.query("UPDATE jobs SET status = 'done' WHERE status = 'running' AND id = $1", [id]);
}`,
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      name: "a Prisma claim, a raw-SQL failure write in catch (plain JS, single-quoted JS string)",
      code: `export async function work(id) {
  const { count } = await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  if (count === 0) return;
  try {
    await run(id);
  } catch (e) {
    await prisma.$executeRawUnsafe('UPDATE "Job" SET status = \\'FAILED\\' WHERE id = $1', id);
  }
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 7,
          column: 11,
          data: { model: "job", field: "status", value: "RUNNING", claimLine: "2", target: "FAILED" },
          suggestions: [],
        },
      ],
    }),
  ],
});
