import rule from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { KEYED_LOCK, LEASE_LOCK } from "./lease-lock.js";
import { normalizeModel } from "../../src/core/model/names.js";

/** A stage lock row looked up by its stage and created when none is found (or the one found has expired). */
const STAGE_ROW = (takeover: boolean) => `export async function lockStage(db, stageId, owner) {
  const found = await db.stageLock.findFirst({ where: { stageId } });
  ${takeover ? "if (found && found.expiresAt > new Date()) return false;\n  if (found) await db.stageLock.deleteMany({ where: { id: found.id, expiresAt: found.expiresAt } });" : "if (found) return false;"}
  await db.stageLock.create({ data: { stageId, owner, expiresAt: new Date(Date.now() + 60000) } });
  return true;
}`;
const stageKeys = { locksUniqueKeys: { [normalizeModel("stageLock")]: [["id"]] } };

const missing = (line: number, column: number, data: Record<string, string>) => ({
  messageId: "missingRecovery" as const,
  line,
  column,
  data,
});
const lock = (model: string, field: string, value: string, claimLine: number) => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
});
const jobGenerating = lock("job", "status", "GENERATING", 2);

/**
 * A value held across work whatever its name: PENDING taken only from null or FAILED, the gateway called, then
 * PROCESSED or FAILED by id in the same function. Nothing else in the module acts on PENDING refunds.
 */
const REFUND_CLAIM = `export async function refund(paymentId: string) {
  const taken = await prisma.payment.updateMany({
    where: { id: paymentId, OR: [{ refundStatus: null }, { refundStatus: "FAILED" }] },
    data: { refundStatus: "PENDING", refundAttemptAt: new Date() },
  });
  if (taken.count === 0) return;
  try {
    const refundId = await gateway.refund(paymentId);
    await prisma.payment.update({ where: { id: paymentId }, data: { refundStatus: "PROCESSED", refundId } });
  } catch (err) {
    await prisma.payment.update({ where: { id: paymentId }, data: { refundStatus: "FAILED" } });
    throw err;
  }
}`;

ruleTester.run("require-stale-recovery", rule, {
  valid: [
    {
      // Each branch moves the row off QUEUED once and returns: no holder keeps it in PARKED across work.
      name: "lookalike: a value written on a path that returns before the later write by id is no hold",
      code: `import { Pool } from "pg";
const pool = new Pool();
export async function triage(id: string, attempts: number) {
  if (attempts >= 5) {
    await pool.query("UPDATE tickets SET status = 'PARKED', parked_at = now() WHERE id = $1 AND status = 'QUEUED'", [id]);
    return;
  }
  const owner = await findOwner(id);
  await pool.query("UPDATE tickets SET status = 'ASSIGNED', owner = $2 WHERE id = $1 AND status = 'QUEUED'", [id, owner]);
}
declare function findOwner(id: string): Promise<string>;`,
    },
    // the lookup judges the row's expiry and removes an expired one before creating: a dead holder's row is taken over
    { code: STAGE_ROW(true), settings: stageKeys },
    {
      // PENDING is a state others act on here (an admin approves pending requests by id): a workflow state, not a
      // hold of the function that set it, whatever it does after
      name: "a waiting value that another function selects rows by",
      code: `export async function reopen(requestId: string) {
  const moved = await prisma.mediaRequest.updateMany({ where: { id: requestId, status: "APPROVED" }, data: { status: "PENDING" } });
  if (moved.count === 0) return;
  await notifyAdmins(requestId);
  await prisma.mediaRequest.update({ where: { id: requestId }, data: { status: "DECLINED" } });
}
export async function approve(requestId: string) {
  await prisma.mediaRequest.updateMany({ where: { id: requestId, status: "PENDING" }, data: { status: "APPROVED" } });
}`,
    },
    {
      // the same refund with a sweep that hands stale PENDING refunds back: answered
      name: "a value held across work, with a recovery",
      code:
        REFUND_CLAIM +
        `
export async function releaseStaleRefunds(cutoff: Date) {
  await prisma.payment.updateMany({ where: { refundStatus: "PENDING", refundAttemptAt: { lt: cutoff } }, data: { refundStatus: "FAILED" } });
}`,
    },
    // a module required in place that is no model (a cache helper, no models/ folder, a lower-case name): not a claim
    {
      code: `module.exports = () => require("./cache").findOneAndUpdate({ status: "pending" }, { status: "started" });`,
      languageOptions: javascript,
    },
    // findAndModify with remove: true takes the document out of the queue: a delete, not a claim of its status
    {
      code: `const doc = db.queue.findAndModify({ query: { state: "NEW" }, update: { $set: { state: "PROCESSING" } }, remove: true });`,
      languageOptions: javascript,
    },
    // a settings row used as a lock under a constant name: the JS check takes a stale one over
    KEYED_LOCK,
    // status bookkeeping beside a queue that keeps the work single itself: the write's failure is swallowed and its
    // result unread, so it cannot stop the handler that follows and a row left PROCESSING blocks nothing
    `export async function handle(job: { backgroundJobId: string }) {
  await prisma.backgroundJob.update({ where: { id: job.backgroundJobId, status: "PENDING" }, data: { status: "PROCESSING" } }).catch(() => null);
  await runHandler(job);
}`,
    // a repository module that hands its stuck rows to a caller: `staleJobs()` returns claimed rows older than the
    // cutoff and writes nothing after; the engine that calls it moves them back (the audit follows that caller)
    `export class JobStore {
  constructor(private readonly db: Knex) {}
  async claimNext(worker: string) {
    return this.db("jobs").where({ state: "waiting" }).update({ state: "claimed", claimed_by: worker, claimed_at: new Date() });
  }
  async staleJobs(cutoff: Date) {
    return this.db("jobs").where("state", "claimed").andWhere("claimed_at", "<", cutoff).select("*");
  }
}`,
    // the Mongo shell's findAndModify in its options form, with a sweep of stuck documents by the stamped clock
    {
      code: `const doc = db.queue.findAndModify({ query: { state: "NEW" }, update: { $set: { state: "PROCESSING", ts: new Date() } }, new: true });
db.queue.updateMany({ state: "PROCESSING", ts: { $lt: cutoff } }, { $set: { state: "NEW" } });`,
      languageOptions: javascript,
    },
    // a tombstone: every run reads all DELETING rows, whoever flipped them, and deletes them by id, so a run killed
    // after the flip leaves its rows to the next run. The value is a queue state, not a lock anybody holds.
    `export async function prune(cutoff: Date) {
  await prisma.attachment.updateMany({ where: { status: "PENDING", createdAt: { lt: cutoff } }, data: { status: "DELETING" } });
  await reclaim();
}
async function reclaim() {
  for (;;) {
    const batch = await prisma.attachment.findMany({ where: { status: "DELETING" }, take: 100 });
    if (batch.length === 0) return;
    await Promise.all(batch.map((a) => storage.delete(a.key)));
    await prisma.attachment.deleteMany({ where: { id: { in: batch.map((a) => a.id) }, status: "DELETING" } });
  }
}`,
    {
      name: "a lock row created once, then taken over by a lease update of the same table once its lease passed",
      code: LEASE_LOCK,
      languageOptions: javascript,
    },
    // locks-recovered-by: the sweeper lives in another module (locks-audit checks it); the comment above the statement
    `
    export async function start(jobId: string) {
      // locks-recovered-by: src/jobs/sweeper.ts
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) throw new Error("busy");
    }`,
    // the directive on the claim's own line, after the code
    `
    export async function start(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); // locks-recovered-by: ./sweeper
    }`,
    // in a block comment, among other comment lines right above the claim
    `
    export async function start(jobId: string) {
      /* locks-recovered-by: @/jobs/sweeper */
      // the sweeper runs every minute
      await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    }`,
    // a lock row whose sweeper is elsewhere
    `
    export async function lock(name: string) {
      // locks-recovered-by: src/locks/sweep.ts
      await db.insertInto("locks").values({ name, holder: "me" }).onConflict((oc) => oc.column("name").doNothing()).execute();
    }`,
    // the seed's fixed module: conditional recovery on the read path, judged on updated_at
    `
    async function start(jobId) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) throw new Error("busy");
    }
    async function recover(jobId, staleThreshold) {
      await prisma.job.updateMany({
        where: { id: jobId, status: "GENERATING", updated_at: { lt: staleThreshold } },
        data: { status: "FAILED", error_message: "auto-recovered" },
      });
    }`,
    // bulk transition: admits the value it sets, so it is not a claim
    `
    export async function promoteBatch(projectId: string) {
      await prisma.job.updateMany({
        where: { projectId, status: { in: ["QUEUED", "PROCESSING"] } },
        data: { status: "PROCESSING" },
      });
    }`,
    // bulk transition with no status filter at all
    `
    export async function startAllForTenant(tenantId: string) {
      return prisma.syncJob.updateMany({ where: { tenantId }, data: { status: "SYNCING" } });
    }`,
    // update by id alone, no check anywhere: not a claim
    `
    export async function markStarted(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING", startedAt: new Date() } });
    }`,
    // reads of in-progress rows are not writes
    `
    export async function dashboard() {
      const running = await prisma.job.findMany({ where: { status: "RUNNING" } });
      const busy = await prisma.job.count({ where: { status: { in: ["RUNNING", "GENERATING"] } } });
      return { running, busy };
    }`,
    // heartbeat: writes unrelated fields of a running row
    `
    export async function heartbeat(jobId: string, progress: number) {
      await prisma.job.updateMany({ where: { id: jobId, status: "RUNNING" }, data: { progress, updatedAt: new Date() } });
    }`,
    // terminal states set with a compare-and-set: transitions, not locks
    `
    export async function complete(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: { not: "DONE" } }, data: { status: "DONE", finishedAt: new Date() } });
    }
    export async function cancel(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: { in: ["QUEUED", "RUNNING"] } }, data: { status: "CANCELLED" } });
    }`,
    `
    export async function archiveOld(cutoff: Date) {
      await prisma.project.updateMany({
        where: { createdAt: { lt: cutoff }, NOT: { status: "ARCHIVED" } },
        data: { status: "ARCHIVED" },
      });
    }`,
    `
    export async function settle(invoiceId: string) {
      const { count } = await prisma.invoice.updateMany({ where: { id: invoiceId, status: "OPEN" }, data: { status: "PAID", paidAt: new Date() } });
      return count === 1;
    }`,
    // APPROVED compare-and-set guarded by a version column
    `
    export async function approve(requestId: string, version: number) {
      const res = await prisma.request.updateMany({
        where: { id: requestId, status: "SUBMITTED", version },
        data: { status: "APPROVED", version: { increment: 1 } },
      });
      if (res.count === 0) throw new Error("changed concurrently");
    }`,
    // waiting states are not in progress: requeueing is not a lock
    `
    export async function retry(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: "FAILED" }, data: { status: "PENDING" } });
    }
    export async function enqueue(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: { not: "QUEUED" } }, data: { status: "QUEUED" } });
    }`,
    // lease take-over in the claim itself: an expired RUNNING row is claimable again
    `
    export async function claim(jobId: string, threshold: Date) {
      const res = await prisma.job.updateMany({
        where: { id: jobId, OR: [{ status: { not: "RUNNING" } }, { updatedAt: { lt: threshold } }] },
        data: { status: "RUNNING", updatedAt: new Date() },
      });
      return res.count === 1;
    }`,
    // take-over on a lease column, inside a transaction, with AND/OR nesting
    `
    export async function acquire(name: string, owner: string) {
      return prisma.$transaction(async (tx) => {
        const now = new Date();
        return tx.lease.updateMany({
          where: { AND: [{ name }, { OR: [{ state: { notIn: ["LEASED"] } }, { leaseExpiresAt: { lte: now } }] }] },
          data: { state: "LEASED", owner, leaseExpiresAt: new Date(now.getTime() + 30_000) },
        });
      });
    }`,
    // a racy recovery (stale read, then a write by id) still answers Q1
    `
    export async function claim(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    }
    export async function sweep(cutoff: Date) {
      const stale = await prisma.job.findMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } } });
      for (const job of stale) {
        await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
      }
    }`,
    // a recovery that judges age in a JS if still answers Q1
    `
    export async function claim(jobId: string) {
      await prisma.render.updateMany({ where: { id: jobId, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
    }
    export async function checkOne(render: Render, cutoff: Date) {
      if (render.status === "RENDERING" && render.heartbeatAt < cutoff) {
        await prisma.render.update({ where: { id: render.id }, data: { status: "FAILED" } });
      }
    }`,
    // a startup reset of every RUNNING row (no age) still answers Q1
    `
    export async function claim(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: "QUEUED" }, data: { status: "RUNNING" } });
    }
    export async function onBoot() {
      await prisma.job.updateMany({ where: { status: "RUNNING" }, data: { status: "QUEUED" } });
    }`,
    // a sweeper that judges age but not the status still answers Q1
    `
    export async function claim(jobId: string) {
      await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    }
    export async function sweep(cutoff: Date) {
      await prisma.job.updateMany({ where: { updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
    }`,
    // NestJS service: claim and a cron recovery on this.prisma, enum values from @prisma/client
    `
    import { ReportStatus } from "@prisma/client";
    @Injectable()
    export class ReportService {
      constructor(private readonly prisma: PrismaService) {}
      async start(reportId: string) {
        return this.prisma.report.updateMany({
          where: { id: reportId, status: { not: ReportStatus.GENERATING } },
          data: { status: ReportStatus.GENERATING },
        });
      }
      @Cron("*/5 * * * *")
      async recoverStalled() {
        const cutoff = new Date(Date.now() - 15 * 60_000);
        await this.prisma.report.updateMany({
          where: { status: ReportStatus.GENERATING, updatedAt: { lt: cutoff } },
          data: { status: ReportStatus.FAILED },
        });
      }
    }`,
    // an imported enum on the claim pairs with a string literal in the sweeper; model names compare loosely
    `
    import { JobStatus } from "@prisma/client";
    const jobs = prisma.job;
    export async function claim(id: string) {
      await jobs.updateMany({ where: { id, status: { not: JobStatus.GENERATING } }, data: { status: JobStatus.GENERATING } });
    }
    export async function sweep(cutoff: Date) {
      await prisma.jobs.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
    }`,
    // plain JS, destructured delegate, .then form, recovery covering two in-progress values
    {
      code: `
      const { exportJob } = prisma;
      export function claim(id) {
        return exportJob
          .updateMany({ where: { id, status: { notIn: ["EXPORTING", "UPLOADING"] } }, data: { status: "EXPORTING" } })
          .then((r) => r.count === 1);
      }
      export function upload(id) {
        return exportJob.updateMany({ where: { id, status: "EXPORTING" }, data: { status: "UPLOADING" } });
      }
      export function sweep(cutoff) {
        return exportJob.updateMany({
          where: { status: { in: ["EXPORTING", "UPLOADING"] }, updatedAt: { lt: cutoff } },
          data: { status: "FAILED" },
        });
      }`,
      languageOptions: javascript,
    },
    // TS enum and updateManyAndReturn, answered by a recovery using the same enum
    `
    enum TaskState { Queued = "QUEUED", Processing = "PROCESSING", Failed = "FAILED" }
    export async function claimTasks(limit: Date) {
      return prisma.task.updateManyAndReturn({ where: { state: TaskState.Queued, runAt: { lte: limit } }, data: { state: TaskState.Processing } });
    }
    export async function sweep(cutoff: Date) {
      await prisma.task.updateMany({ where: { state: TaskState.Processing, heartbeatAt: { lt: cutoff } }, data: { state: TaskState.Failed } });
    }`,
    // take-over on a nested AND branch: a RUNNING row whose heartbeat stopped
    `
    export async function claim(id: string, cutoff: Date) {
      await prisma.job.updateMany({
        where: { id, OR: [{ status: { in: ["QUEUED", "FAILED"] } }, { AND: [{ status: "RUNNING" }, { heartbeatAt: { lt: cutoff } }] }] },
        data: { status: "RUNNING", heartbeatAt: new Date() },
      });
    }`,
    // a class sweeper on this.prisma (equals, lte, inline threshold) pairs with a function's claim
    `
    export async function claim(id: string) {
      await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    }
    export class Sweeper {
      constructor(private prisma: PrismaClient) {}
      async sweep() {
        await this.prisma.job.updateMany({
          where: { status: { equals: "RUNNING" }, updatedAt: { lte: new Date(Date.now() - 60_000) } },
          data: { status: "FAILED" },
        });
      }
    }`,
    // a recovery judged by a staleness helper in JS still answers Q1
    `
    export async function claim(id: string) {
      await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    }
    export async function check(job: Job) {
      if (isStale(job)) await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
    }`,
    // stale scan, then a write per row that also pins the status
    `
    export async function claim(id: string) {
      await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    }
    export async function sweep(cutoff: Date) {
      const stale = await prisma.job.findMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } } });
      for (const s of stale) await prisma.job.updateMany({ where: { id: s.id, status: "RUNNING" }, data: { status: "FAILED" } });
    }`,
    // upsert by key alone: not a claim
    `
    export async function touchSync(accountId: string) {
      await prisma.syncState.upsert({
        where: { accountId },
        update: { status: "SYNCING" },
        create: { accountId, status: "SYNCING" },
      });
    }`,
  ],
  invalid: [
    {
      // PENDING is taken from null or FAILED only, held while the gateway is called, and moved off by id after it:
      // a claim by behaviour, and nothing moves a refund left PENDING by a killed process back
      name: "a waiting-named value held across work, with no recovery",
      code: REFUND_CLAIM,
      errors: [missing(2, 23, lock("payment", "refundStatus", "PENDING", 2))],
    },
    {
      // an exported count of stuck rows (a health check) hands no rows to anyone who could move them back
      code: `export async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
export async function stuckCount(cutoff: Date) {
  return prisma.job.count({ where: { status: "GENERATING", updatedAt: { lt: cutoff } } });
}`,
      errors: [missing(2, 9, lock("job", "status", "GENERATING", 2))],
    },
    {
      // the same settings-row lock with no age in its check: a holder that dies leaves the row, and every later
      // caller finds it held
      code: `export async function takeDigestLock() {
  const row = await prisma.appConfig.findUnique({ where: { name: "weekly_digest_lock" } });
  if (row) return false;
  await prisma.appConfig.upsert({ where: { name: "weekly_digest_lock" }, update: { payload: "1" }, create: { name: "weekly_digest_lock", payload: "1" } });
  return true;
}`,
      errors: [{ messageId: "missingExpiry", line: 4, column: 9, data: { model: "appConfig" } }],
    },
    {
      // the same write, its failure not swallowed: a row left PROCESSING by a killed handler is never taken again
      code: `export async function handle(job: { backgroundJobId: string }) {
  await prisma.backgroundJob.update({ where: { id: job.backgroundJobId, status: "PENDING" }, data: { status: "PROCESSING" } });
  await runHandler(job);
}`,
      errors: [missing(2, 9, lock("backgroundJob", "status", "PROCESSING", 2))],
    },
    {
      // a catch that ends the process stops the handler too: still a claim
      code: `export async function handle(job: { backgroundJobId: string }) {
  await prisma.backgroundJob.update({ where: { id: job.backgroundJobId, status: "PENDING" }, data: { status: "PROCESSING" } }).catch((e) => { console.error(e); process.exit(1); });
  await runHandler(job);
}`,
      errors: [missing(2, 9, lock("backgroundJob", "status", "PROCESSING", 2))],
    },
    {
      // a catch that rethrows keeps the write's failure: the handler does not run, so it is a claim
      code: `export async function handle(job: { backgroundJobId: string }) {
  await prisma.backgroundJob.update({ where: { id: job.backgroundJobId, status: "PENDING" }, data: { status: "PROCESSING" } }).catch((e) => { log(e); throw e; });
  await runHandler(job);
}`,
      errors: [missing(2, 9, lock("backgroundJob", "status", "PROCESSING", 2))],
    },
    {
      // a finder of stuck rows that only counts them (for a dashboard) is not exported and hands nothing out
      code: `export async function claimNext(worker: string) {
  return db("jobs").where({ state: "waiting" }).update({ state: "claimed", claimed_by: worker, claimed_at: new Date() });
}
async function countStale(cutoff: Date) {
  return db("jobs").where("state", "claimed").andWhere("claimed_at", "<", cutoff).count();
}
export async function metrics() { return { stale: await countStale(new Date(Date.now() - 60_000)) }; }`,
      errors: [missing(2, 10, lock("jobs", "state", "claimed", 2))],
    },
    {
      // the Mongo shell's findAndModify in its options form: a claim, with nothing that moves PROCESSING back
      code: `const doc = db.queue.findAndModify({ query: { state: "NEW" }, update: { $set: { state: "PROCESSING", worker: "w1" } }, new: true });`,
      languageOptions: javascript,
      errors: [missing(1, 13, lock("queue", "state", "PROCESSING", 1))],
    },
    {
      // the 2.x driver's positional findAndModify(query, sort, update, options, callback)
      code: `exports.next = function (cb) {
  this.collection.findAndModify({ status: "queued" }, [["_id", 1]], { $set: { status: "processing" } }, { new: true }, cb);
};`,
      languageOptions: javascript,
      errors: [missing(2, 3, lock("collection", "status", "processing", 2))],
    },
    {
      // a model module required inline: require("../models/Export") is the Export model
      code: `module.exports = () => require("../models/Export").findOneAndUpdate({ status: "pending" }, { status: "started" }, { new: true });`,
      languageOptions: javascript,
      errors: [missing(1, 24, lock("Export", "status", "started", 1))],
    },
    {
      // statuses named by the constants of a required module, a table qualified by a schema known at run time, and
      // the ids collected into a const array before the update by id
      code: `const statusEnum = require("../constants/status-enum");
module.exports = async (db, schema) => {
  const rows = await db.select().table(\`\${schema}.Task\`).where("Status", statusEnum.PENDING);
  const ids = [];
  rows.forEach((r) => ids.push(r.TaskId));
  await db(\`\${schema}.Task\`).whereIn("TaskId", ids).update("Status", statusEnum.INPROGRESS);
};`,
      languageOptions: javascript,
      errors: [missing(6, 9, lock("Task", "Status", "INPROGRESS", 6))],
    },
    {
      // a bulk reader that takes only some of the rows in the value (those already uploaded) works off those: a run
      // killed before the upload leaves its rows PROCESSING for good
      code: `export async function claim(ids: string[]) {
  await prisma.item.updateMany({ where: { id: { in: ids }, status: "PENDING" }, data: { status: "PROCESSING" } });
}
export async function finishUploaded() {
  const done = await prisma.item.findMany({ where: { status: "PROCESSING", uploadedAt: { not: null } } });
  await prisma.item.updateMany({ where: { id: { in: done.map((d) => d.id) } }, data: { status: "DONE" } });
}`,
      errors: [missing(2, 9, lock("item", "status", "PROCESSING", 2))],
    },
    {
      // the same flip, but the module only ever works off the rows it flipped itself (by id): a run killed in
      // between leaves them DELETING for good
      code: `export async function prune(id: string) {
  await prisma.attachment.updateMany({ where: { id, status: { not: "DELETING" } }, data: { status: "DELETING" } });
  await storage.delete(id);
  await prisma.attachment.delete({ where: { id } });
}
export async function listDeleting() {
  return prisma.attachment.findMany({ where: { status: "DELETING" } });
}`,
      errors: [missing(2, 9, lock("attachment", "status", "DELETING", 2))],
    },
    {
      // a directive separated from the claim by code speaks for nothing
      code: `export async function start(jobId: string) {
  // locks-recovered-by: src/jobs/sweeper.ts
  const now = new Date();
  await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING", startedAt: now } });
}`,
      errors: [missing(4, 9, lock("job", "status", "RUNNING", 4))],
    },
    {
      // a directive covers its own claim only
      code: `export async function start(jobId: string) {
  // locks-recovered-by: src/jobs/sweeper.ts
  await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  await prisma.export.updateMany({ where: { jobId, state: { not: "EXPORTING" } }, data: { state: "EXPORTING" } });
}`,
      errors: [missing(4, 9, lock("export", "state", "EXPORTING", 4))],
    },
    {
      // a misspelt directive is no directive
      code: `export async function start(jobId: string) {
  // locks-recover-by: src/jobs/sweeper.ts
  await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
      errors: [missing(3, 9, lock("job", "status", "RUNNING", 3))],
    },
    {
      // a directive below the claim does not speak for it
      code: `export async function start(jobId: string) {
  await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  // locks-recovered-by: src/jobs/sweeper.ts
}`,
      errors: [missing(2, 9, lock("job", "status", "RUNNING", 2))],
    },
    {
      // the seed's module as first written: try/catch does not count
      code: `async function start(jobId) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) throw new Error("busy");
  try { await generate(jobId); await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } }); }
  catch (e) { await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED" } }); }
}`,
      errors: [missing(2, 25, jobGenerating)],
    },
    {
      code: `async function start(jobId) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}`,
      languageOptions: javascript,
      errors: [missing(2, 25, jobGenerating)],
    },
    {
      // a finally release does not count either
      code: `export async function rebuildIndex(indexId: string) {
  const claimed = await prisma.searchIndex.updateMany({ where: { id: indexId, status: { not: "BUILDING" } }, data: { status: "BUILDING" } });
  if (claimed.count === 0) return;
  try {
    await build(indexId);
  } finally {
    await prisma.searchIndex.update({ where: { id: indexId }, data: { status: "IDLE" } });
  }
}`,
      errors: [missing(2, 25, lock("searchIndex", "status", "BUILDING", 2))],
    },
    {
      // .then form
      code: `export function startExport(exportId: string) {
  return prisma.exportJob
    .updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } })
    .then((r) => r.count === 1);
}`,
      errors: [missing(2, 10, lock("exportJob", "status", "EXPORTING", 2))],
    },
    {
      // destructured delegate
      code: `const { job } = prisma;
export async function claim(jobId: string) {
  const res = await job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  return res.count > 0;
}`,
      errors: [missing(3, 21, lock("job", "status", "RUNNING", 3))],
    },
    {
      // delegate held in a variable, notIn
      code: `const jobs = prisma.job;
export async function claimNext(id: number) {
  await jobs.update({ where: { id, status: { notIn: ["RUNNING", "DONE"] } }, data: { status: "RUNNING", startedAt: new Date() } });
}`,
      errors: [missing(3, 9, lock("job", "status", "RUNNING", 3))],
    },
    {
      // TS enum
      code: `enum RenderState { Queued = "QUEUED", Rendering = "RENDERING", Done = "DONE" }
export async function render(videoId: string) {
  await prisma.video.updateMany({ where: { id: videoId, state: { not: RenderState.Rendering } }, data: { state: RenderState.Rendering } });
}`,
      errors: [missing(3, 9, lock("video", "state", "RENDERING", 3))],
    },
    {
      // as const object, lower-case values
      code: `const RunStatus = { Queued: "queued", Running: "running", Finished: "finished" } as const;
export async function startRun(runId: string) {
  const { count } = await prisma.run.updateMany({ where: { id: runId, status: RunStatus.Queued }, data: { status: RunStatus.Running } });
  if (count === 0) throw new Error("run already started");
}`,
      errors: [missing(3, 27, lock("run", "status", "running", 3))],
    },
    {
      // const binding, NOT
      code: `const PROCESSING = "PROCESSING";
export async function lockPayout(payoutId: string) {
  return prisma.payout.updateMany({
    where: { id: payoutId, NOT: { status: PROCESSING } },
    data: { status: PROCESSING },
  });
}`,
      errors: [missing(3, 10, lock("payout", "status", "PROCESSING", 3))],
    },
    {
      // an enum imported from @prisma/client
      code: `import { JobStatus } from "@prisma/client";
export async function startGeneration(jobId: string) {
  await prisma.job.updateMany({ where: { id: jobId, status: { not: JobStatus.GENERATING } }, data: { status: JobStatus.GENERATING } });
}`,
      errors: [missing(3, 9, lock("job", "status", "GENERATING", 3))],
    },
    {
      // $transaction callback, in
      code: `export async function claimBatch(batchId: string) {
  return prisma.$transaction(async (tx) => {
    const claimed = await tx.batch.updateMany({ where: { id: batchId, status: { in: ["QUEUED", "FAILED"] } }, data: { status: "PROCESSING" } });
    if (claimed.count === 0) return null;
    return tx.batch.findUnique({ where: { id: batchId } });
  });
}`,
      errors: [missing(3, 27, lock("batch", "status", "PROCESSING", 3))],
    },
    {
      // NestJS service on this.prisma, enum of unknown origin
      code: `@Injectable()
export class ReportService {
  constructor(private readonly prisma: PrismaService) {}

  async start(reportId: string) {
    const result = await this.prisma.report.updateMany({
      where: { id: reportId, status: { not: ReportStatus.RUNNING } },
      data: { status: ReportStatus.RUNNING, startedAt: new Date() },
    });
    return result.count === 1;
  }
}`,
      errors: [missing(6, 26, lock("report", "status", "RUNNING", 6))],
    },
    {
      // this.db, AND list
      code: `class SyncWorker {
  constructor(private db: PrismaClient) {}
  async claim(accountId: string) {
    await this.db.syncJob.updateMany({ where: { accountId, AND: [{ status: { not: "SYNCING" } }] }, data: { status: "SYNCING" } });
  }
}`,
      errors: [missing(4, 11, lock("syncJob", "status", "SYNCING", 4))],
    },
    {
      // optional chaining on the client
      code: `export async function claimTask(taskId: string, client?: PrismaClient) {
  const res = await client?.task.updateMany({ where: { id: taskId, status: { not: "IN_PROGRESS" } }, data: { status: "IN_PROGRESS" } });
  return res?.count === 1;
}`,
      errors: [missing(2, 21, lock("task", "status", "IN_PROGRESS", 2))],
    },
    {
      // optional call on this.prisma's delegate, plain JS class
      code: `export class InvoiceWorker {
  constructor(prisma) { this.prisma = prisma; }
  async claim(invoiceId) {
    return this.prisma.invoice?.updateMany({ where: { id: invoiceId, status: "OPEN" }, data: { status: "PROCESSING" } });
  }
}`,
      languageOptions: javascript,
      errors: [missing(4, 12, lock("invoice", "status", "PROCESSING", 4))],
    },
    {
      // updateManyAndReturn: bulk claim of due rows
      code: `export async function claimEmails(limit: Date) {
  return prisma.email.updateManyAndReturn({
    where: { status: "QUEUED", scheduledFor: { lte: limit } },
    data: { status: "SENDING" },
  });
}`,
      errors: [missing(2, 10, lock("email", "status", "SENDING", 2))],
    },
    {
      // upsert with a filter that excludes the value
      code: `export async function acquire(name: string, owner: string) {
  await prisma.mutex.upsert({
    where: { name, status: { not: "LOCKED" } },
    update: { status: "LOCKED", owner },
    create: { name, status: "LOCKED", owner },
  });
}`,
      errors: [missing(2, 9, lock("mutex", "status", "LOCKED", 2))],
    },
    {
      // a check-then-act claim is still a claim for Q1
      code: `export async function startRun(pipelineId: string) {
  const run = await prisma.run.findFirst({ where: { pipelineId, status: "pending" } });
  if (!run) return null;
  return prisma.run.update({ where: { id: run.id }, data: { status: "running" } });
}`,
      errors: [missing(4, 10, lock("run", "status", "running", 4))],
    },
    {
      // the sweeper recovers a different value
      code: `export async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}
export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [missing(2, 9, lock("job", "status", "RUNNING", 2))],
    },
    {
      // the sweeper recovers a different model
      code: `export async function claim(id: string) {
  await prisma.export.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}
export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [missing(2, 9, lock("export", "status", "RUNNING", 2))],
    },
    {
      // the sweeper clears the owner but leaves the status in progress
      code: `export async function claim(id: string, worker: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING", lockedBy: worker } });
}
export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } }, data: { lockedBy: null } });
}`,
      errors: [missing(2, 9, lock("job", "status", "RUNNING", 2))],
    },
    {
      // two claims, only one of them is swept
      code: `export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}
export async function startReport(id: string) {
  await prisma.report.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [missing(5, 9, lock("report", "status", "GENERATING", 5))],
    },
    {
      // equals in the filter, set in the data
      code: `export async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { equals: "QUEUED" } }, data: { status: { set: "RUNNING" } } });
}`,
      errors: [missing(2, 9, lock("job", "status", "RUNNING", 2))],
    },
    {
      // NOT as a list, and not: { in } nested
      code: `export async function claimJob(id: string) {
  await prisma.job.updateMany({ where: { id, NOT: [{ status: "RUNNING" }] }, data: { status: "RUNNING" } });
}
export async function claimRun(id: string) {
  await prisma.run.updateMany({ where: { id, status: { not: { in: ["RUNNING", "DONE"] } } }, data: { status: "RUNNING" } });
}`,
      errors: [missing(2, 9, lock("job", "status", "RUNNING", 2)), missing(5, 9, lock("run", "status", "RUNNING", 5))],
    },
    {
      // the where object is held in a const
      code: `export async function claim(id: string) {
  const where = { id, status: { not: "RUNNING" } };
  await prisma.job.updateMany({ where, data: { status: "RUNNING" } });
}`,
      errors: [missing(3, 9, lock("job", "status", "RUNNING", 3))],
    },
    {
      // optional chaining all the way, template literal values
      code: "export async function claim(id: string) {\n  await prisma?.job?.updateMany({ where: { id, status: { not: `RUNNING` } }, data: { status: `RUNNING` } });\n}",
      errors: [missing(2, 9, lock("job", "status", "RUNNING", 2))],
    },
    {
      // the array form of $transaction
      code: `export async function claim(id: string) {
  await prisma.$transaction([prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } })]);
}`,
      errors: [missing(2, 30, lock("job", "status", "RUNNING", 2))],
    },
    {
      // $Enums namespace from @prisma/client
      code: `import { $Enums } from "@prisma/client";
export async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: $Enums.JobStatus.RUNNING } }, data: { status: $Enums.JobStatus.RUNNING } });
}`,
      errors: [missing(3, 9, lock("job", "status", "RUNNING", 3))],
    },
    {
      // delegate destructured from this.prisma inside a class arrow property
      code: `export class JobService {
  constructor(private prisma: PrismaClient) {}
  claim = async (id: string) => {
    const { job } = this.prisma;
    await job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  };
}`,
      errors: [missing(5, 11, lock("job", "status", "RUNNING", 5))],
    },
    {
      // nested OR/NOT: every branch excludes the value, none judges age
      code: `export async function claimDeploy(deployId: string) {
  await prisma.deployment.updateMany({
    where: { id: deployId, OR: [{ status: "QUEUED" }, { status: "FAILED", NOT: { retries: 0 } }] },
    data: { status: "DEPLOYING" },
  });
}`,
      errors: [missing(2, 9, lock("deployment", "status", "DEPLOYING", 2))],
    },
    {
      // created once a lookup found none, in a table whose only key is its id: nothing removes a dead holder's row
      code: STAGE_ROW(false),
      settings: stageKeys,
      errors: [{ messageId: "missingRowExpiry", line: 4, column: 9, data: { model: "stageLock", checkLine: "2" } }],
    },
  ],
});
