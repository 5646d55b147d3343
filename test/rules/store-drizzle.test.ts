// Drizzle ORM through the five database rules: `db.update(t).set(…).where(…)`, `db.delete(t).where(…)`,
// `db.insert(t).values(…).onConflict…`, `db.select().from(t).where(…)` and `db.query.t.findFirst({ where })`,
// with conditions built from the operators of `drizzle-orm`.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester, recoveredElsewhere } from "../rule-tester.js";

const IMPORTS = `import { and, eq, gt, inArray, isNull, lt, ne, or, sql } from "drizzle-orm";\n`;
const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
const lock = (value: string, claimLine: number, model = "jobs", field = "status") => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
});

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    // claim, and a conditional recovery on the heartbeat
    IMPORTS +
      `export async function claim(id: string) {
  return db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running"))).returning();
}
export async function recover(cutoff: Date) {
  await db.update(jobs).set({ status: "queued" }).where(and(eq(jobs.status, "running"), lt(jobs.heartbeatAt, cutoff)));
}`,
    // a lease: the claim takes over rows whose lease expired
    IMPORTS +
      `export async function lease(id: string, me: string) {
  await db.update(jobs)
    .set({ status: "leased", leasedBy: me, leaseExpiresAt: sql\`now() + interval '30 seconds'\` })
    .where(and(eq(jobs.id, id), or(ne(jobs.status, "leased"), lt(jobs.leaseExpiresAt, new Date()))));
}`,
    // a plain state transition into a state that is not in progress
    IMPORTS +
      `export async function pay(id: string) {
  await db.update(orders).set({ status: "paid", paidAt: new Date() }).where(and(eq(orders.id, id), eq(orders.status, "pending")));
}`,
    // an update by id alone, no check: not a claim
    IMPORTS +
      `export async function markStarted(id: string) {
  await db.update(jobs).set({ status: "running", startedAt: new Date() }).where(eq(jobs.id, id));
}`,
    // a bulk move into a waiting state
    IMPORTS +
      `export async function retryBatch(batchId: string) {
  await db.update(jobs).set({ status: "pending" }).where(and(eq(jobs.batchId, batchId), eq(jobs.status, "failed")));
}`,
    // a raw sql condition is opaque: no guess about what it excludes
    IMPORTS +
      `export async function start(id: string) {
  await db.update(jobs).set({ status: "running" }).where(sql\`\${jobs.id} = \${id} and \${jobs.status} <> 'running'\`);
}`,
    // the operators come from a local helper module, not from drizzle-orm
    `import { and, eq, ne } from "./query-helpers";
export async function start(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}`,
    // TypeORM's query builder has the same method names, with a string where (an update by id)
    `export async function start(id: string) {
  await dataSource.createQueryBuilder().update(Job).set({ status: "running" }).where("id = :id", { id }).execute();
}`,
    // reporting reads
    IMPORTS +
      `export async function dashboard() {
  const running = await db.select().from(jobs).where(eq(jobs.status, "running"));
  const stuck = await db.query.jobs.findMany({ where: (t, { eq }) => eq(t.status, "processing") });
  return { running, stuck };
}`,
    // an insert-or-take-over lock row whose take-over is judged by expiry (plain JavaScript)
    {
      code: `import { lt } from "drizzle-orm";
export async function acquire(name, owner) {
  return db.insert(locks).values({ name, owner, status: "locked", expiresAt: new Date(Date.now() + 30000) })
    .onConflictDoUpdate({ target: locks.name, set: { owner, status: "locked" }, setWhere: lt(locks.expiresAt, new Date()) })
    .returning();
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      code:
        IMPORTS +
        `export async function claim(id: string) {
  const [row] = await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running"))).returning();
  return row;
}`,
      errors: [{ messageId: "missingRecovery", line: 3, column: 23, data: lock("running", 3), suggestions: [] }],
    },
    {
      // plain JavaScript, .then, inArray, a class service inside a transaction
      code: `import { and, eq, inArray } from "drizzle-orm";
export class Exports {
  start(id) {
    return this.db.transaction((tx) =>
      tx.update(exportsTable).set({ state: "rendering" }).where(and(eq(exportsTable.id, id), inArray(exportsTable.state, ["queued", "failed"])))
        .then((rows) => rows.length === 1));
  }
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 5,
          column: 7,
          data: lock("rendering", 5, "exports", "state"),
          suggestions: [],
        },
      ],
    },
    {
      // a namespace import, isNull on the owner, and a recovery for another value
      code: `import * as d from "drizzle-orm";
export async function take(id: string, me: string) {
  await db.update(uploads).set({ status: "processing", owner: me })
    .where(d.and(d.eq(uploads.id, id), d.eq(uploads.status, "pending"), d.isNull(uploads.owner)));
}
export async function reset(cutoff: Date) {
  await db.update(uploads).set({ status: "pending" }).where(d.and(d.eq(uploads.status, "scanning"), d.lt(uploads.updatedAt, cutoff)));
}`,
      errors: [
        { messageId: "missingRecovery", line: 3, column: 9, data: lock("processing", 3, "uploads"), suggestions: [] },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    // the claim is a compare-and-set after the check
    IMPORTS +
      `export async function start(id: string) {
  const [job] = await db.select().from(jobs).where(eq(jobs.id, id));
  if (job.status !== "queued") return;
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), eq(jobs.status, "queued")));
}`,
    // the check is about another model's row
    IMPORTS +
      `export async function start(projectId: string, jobId: string) {
  const [project] = await db.select().from(projects).where(eq(projects.id, projectId));
  if (project.status !== "active") throw new Error("inactive");
  await db.update(jobs).set({ status: "running" }).where(eq(jobs.id, jobId));
}`,
    // the queue pattern: SKIP LOCKED pick, compare-and-set claim, in a transaction
    IMPORTS +
      `export async function next() {
  return db.transaction(async (tx) => {
    const [job] = await tx.select().from(jobs).where(eq(jobs.status, "queued")).limit(1).for("update", { skipLocked: true });
    if (!job) return undefined;
    return tx.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, job.id), eq(jobs.status, "queued"))).returning();
  });
}`,
    // Knex: a where object and an update call; not Drizzle, and a compare-and-set anyway
    `export async function start(id: string) {
  const job = await knex("jobs").where({ id }).first();
  if (job.status !== "queued") return;
  await knex("jobs").where({ id, status: "queued" }).update({ status: "running" });
}`,
  ],
  invalid: [
    {
      // read in a transaction, checked in JavaScript, written by id
      code:
        IMPORTS +
        `export async function start(id: string) {
  await db.transaction(async (tx) => {
    const [job] = await tx.select().from(jobs).where(eq(jobs.id, id)).limit(1);
    if (job.status === "running") return;
    await tx.update(jobs).set({ status: "running" }).where(eq(jobs.id, id));
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 11,
          data: { ...lock("running", 6), checkedWhere: "in JavaScript", checkLine: "5" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("running", 6), checkedWhere: "in JavaScript", checkLine: "5" },
              output:
                IMPORTS +
                `export async function start(id: string) {
  await db.transaction(async (tx) => {
    const [job] = await tx.select().from(jobs).where(eq(jobs.id, id)).limit(1);
    if (job.status === "running") return;
    await tx.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
  });
}`,
            },
          ],
        },
      ],
    },
    {
      // a read that picks queued rows, then an inline and(…) by id: the condition is appended to it
      code:
        IMPORTS +
        `export async function next(pool: string) {
  const [job] = await db.select().from(jobs).where(eq(jobs.status, "queued")).limit(1);
  if (!job) return;
  await db.update(jobs).set({ status: "running", heartbeatAt: new Date() }).where(and(eq(jobs.id, job.id), eq(jobs.pool, pool)));
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: { ...lock("running", 5), checkedWhere: "with a separate read", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("running", 5), checkedWhere: "with a separate read", checkLine: "3" },
              output:
                IMPORTS +
                `export async function next(pool: string) {
  const [job] = await db.select().from(jobs).where(eq(jobs.status, "queued")).limit(1);
  if (!job) return;
  await db.update(jobs).set({ status: "running", heartbeatAt: new Date() }).where(and(eq(jobs.id, job.id), eq(jobs.pool, pool), ne(jobs.status, "running")));
}`,
            },
          ],
        },
      ],
    },
    {
      // a single-row table updated without a where: the suggestion adds one
      code:
        IMPORTS +
        `export async function syncAll() {
  const [sync] = await db.select().from(syncState).where(eq(syncState.id, 1));
  if (sync.state === "syncing") return;
  await db.update(syncState).set({ state: "syncing", updatedAt: new Date() });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: { ...lock("syncing", 5, "syncState", "state"), checkedWhere: "in JavaScript", checkLine: "4" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("syncing", 5, "syncState", "state"), checkedWhere: "in JavaScript", checkLine: "4" },
              output:
                IMPORTS +
                `export async function syncAll() {
  const [sync] = await db.select().from(syncState).where(eq(syncState.id, 1));
  if (sync.state === "syncing") return;
  await db.update(syncState).set({ state: "syncing", updatedAt: new Date() }).where(ne(syncState.state, "syncing"));
}`,
            },
          ],
        },
      ],
    },
    {
      // plain JavaScript with .then: the read's filter is the check
      code: `import { and, eq, ne } from "drizzle-orm";
export function next() {
  return db.select().from(jobs).where(eq(jobs.status, "queued")).limit(1)
    .then(([job]) => job && db.update(jobs).set({ status: "running" }).where(eq(jobs.id, job.id)));
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 29,
          data: { ...lock("running", 4), checkedWhere: "with a separate read", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("running", 4), checkedWhere: "with a separate read", checkLine: "3" },
              output: `import { and, eq, ne } from "drizzle-orm";
export function next() {
  return db.select().from(jobs).where(eq(jobs.status, "queued")).limit(1)
    .then(([job]) => job && db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, job.id), ne(jobs.status, "running"))));
}`,
            },
          ],
        },
      ],
    },
    {
      // the relational query API with a where callback; no `and` imported, so no suggestion
      code: `import { eq } from "drizzle-orm";
export async function start(id: string) {
  const job = await db.query.jobs.findFirst({ where: (t, { eq, ne }) => ne(t.status, "running") });
  if (!job) return;
  await db.update(jobs).set({ status: "running" }).where(eq(jobs.id, job.id));
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: { ...lock("running", 5), checkedWhere: "with a separate read", checkLine: "3" },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    // status and age in the write's filter
    IMPORTS +
      `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function recover(cutoff: Date) {
  await db.update(jobs).set({ status: "failed" }).where(and(eq(jobs.status, "running"), lt(jobs.heartbeatAt, cutoff)));
}`,
    // judged in JavaScript, then a compare-and-set on the status read
    IMPORTS +
      `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function unstick(id: string) {
  const [run] = await db.select().from(jobs).where(eq(jobs.id, id));
  if (Date.now() - run.heartbeatAt.getTime() < 60_000) return;
  await db.update(jobs).set({ status: "failed" }).where(and(eq(jobs.id, id), eq(jobs.status, run.status)));
}`,
  ],
  invalid: [
    {
      // judges age but not the status: a finished row is overwritten
      code:
        IMPORTS +
        `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function recover(cutoff: Date) {
  await db.update(jobs).set({ status: "failed" }).where(lt(jobs.heartbeatAt, cutoff));
}`,
      errors: [
        {
          messageId: "missingStatus",
          line: 6,
          column: 9,
          data: { ...lock("running", 3), target: "failed", rowFilter: "its filter", checkedWhere: "", checkLine: "" },
          suggestions: [
            {
              messageId: "addStatus",
              data: {
                ...lock("running", 3),
                target: "failed",
                rowFilter: "its filter",
                checkedWhere: "",
                checkLine: "",
              },
              output:
                IMPORTS +
                `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function recover(cutoff: Date) {
  await db.update(jobs).set({ status: "failed" }).where(and(lt(jobs.heartbeatAt, cutoff), eq(jobs.status, "running")));
}`,
            },
          ],
        },
      ],
    },
    {
      // every running row, alive or not, at boot
      code:
        IMPORTS +
        `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function onBoot() {
  await db.update(jobs).set({ status: "queued" }).where(eq(jobs.status, "running"));
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 6,
          column: 9,
          data: { ...lock("running", 3), target: "queued", rowFilter: "its filter", checkedWhere: "", checkLine: "" },
          suggestions: [],
        },
      ],
    },
    {
      // staleness judged in JavaScript, then a write by id only
      code:
        IMPORTS +
        `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function unstick(id: string) {
  const [job] = await db.select().from(jobs).where(eq(jobs.id, id));
  if (job.status === "running" && Date.now() - job.heartbeatAt.getTime() > 60_000) {
    await db.update(jobs).set({ status: "failed" }).where(eq(jobs.id, id));
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 8,
          column: 11,
          data: {
            ...lock("running", 3),
            target: "failed",
            rowFilter: "id",
            checkedWhere: "in JavaScript",
            checkLine: "7",
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    // judged by the heartbeat
    IMPORTS +
      `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function recover(cutoff: Date) {
  await db.update(jobs).set({ status: "queued" }).where(and(eq(jobs.status, "running"), lt(jobs.heartbeatAt, cutoff)));
}`,
    // "started after the cutoff" is not an age check
    IMPORTS +
      `export async function recent(cutoff: Date) {
  return db.select().from(jobs).where(and(eq(jobs.status, "running"), gt(jobs.startedAt, cutoff)));
}`,
  ],
  invalid: [
    {
      // the sweeper judges death by the start time
      code:
        IMPORTS +
        `export async function claim(id: string) {
  await db.update(jobs).set({ status: "running", startedAt: new Date() }).where(and(eq(jobs.id, id), ne(jobs.status, "running")));
}
export async function sweep(cutoff: Date) {
  await db.update(jobs).set({ status: "queued" }).where(and(eq(jobs.status, "running"), lt(jobs.startedAt, cutoff)));
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 6,
          column: 89,
          data: {
            ...lock("running", 3),
            stamped: "set once when work starts",
            timeField: "startedAt",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
    {
      // a stale scan, with the threshold written on the left: `cutoff > claimedAt` is claimedAt < cutoff
      code:
        IMPORTS +
        `export async function findStuck(cutoff: Date) {
  return db.select({ id: jobs.id }).from(jobs).where(and(inArray(jobs.status, ["processing"]), gt(cutoff, jobs.claimedAt)));
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 3,
          column: 96,
          data: {
            model: "jobs",
            field: "status",
            value: "processing",
            timeField: "claimedAt",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
    {
      // a lease taken over by the time it was taken
      code:
        IMPORTS +
        `export async function lease(id: string) {
  await db.update(tasks).set({ status: "locked", lockedAt: new Date() })
    .where(and(eq(tasks.id, id), or(ne(tasks.status, "locked"), lt(tasks.lockedAt, sql\`now() - interval '1 minute'\`))));
}`,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 4,
          column: 65,
          data: {
            ...lock("locked", 3, "tasks"),
            stamped: "set once when work starts",
            timeField: "lockedAt",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    // the completion requires the owner column the claim wrote
    IMPORTS +
      `export async function run(id: string, me: string) {
  const claimed = await db.update(jobs).set({ status: "running", lockedBy: me }).where(and(eq(jobs.id, id), ne(jobs.status, "running"))).returning();
  if (claimed.length === 0) return;
  await work(id);
  await db.update(jobs).set({ status: "done", lockedBy: null }).where(and(eq(jobs.id, id), eq(jobs.lockedBy, me)));
}`,
    // the failure path requires the claimed status
    IMPORTS +
      `export async function run(id: string) {
  const claimed = await db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running"))).returning();
  if (claimed.length === 0) return;
  try { await work(id); } catch {
    await db.update(jobs).set({ status: "failed" }).where(and(eq(jobs.id, id), eq(jobs.status, "running")));
  }
}`,
  ],
  invalid: [
    recoveredElsewhere({
      // a class service: the claim reaches a completion that writes by id only
      code:
        IMPORTS +
        `export class Worker {
  async run(id: string) {
    const claimed = await this.db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running"))).returning();
    if (claimed.length === 0) return;
    await this.finish(id);
  }
  async finish(id: string) {
    await this.db.update(jobs).set({ status: "done" }).where(eq(jobs.id, id));
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 9,
          column: 11,
          data: { ...lock("running", 4), target: "done" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...lock("running", 4), target: "done" },
              output:
                IMPORTS +
                `export class Worker {
  async run(id: string) {
    const claimed = await this.db.update(jobs).set({ status: "running" }).where(and(eq(jobs.id, id), ne(jobs.status, "running"))).returning();
    if (claimed.length === 0) return;
    await this.finish(id);
  }
  async finish(id: string) {
    await this.db.update(jobs).set({ status: "done" }).where(and(eq(jobs.id, id), eq(jobs.status, "running")));
  }
}`,
            },
          ],
        },
      ],
    }),
  ],
});
