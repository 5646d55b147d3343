import rule from "../../rules/conditional-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";

/** Every placeholder the rule's messages can use; `checkedWhere`/`checkLine` are "" when no separate check exists. */
type RecoveryData = {
  model: string;
  field: string;
  value: string;
  claimLine: string;
  target: string;
  rowFilter: string;
  checkedWhere: string;
  checkLine: string;
};

/** The claim most cases pair with: job.status = GENERATING, taken at line 2. The code after it starts at line 5. */
const CLAIM = `async function claim(id: string) {
  const result = await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (result.count === 0) throw new Error("already generating");
}
`;

const generating = { model: "job", field: "status", value: "GENERATING", claimLine: "2" };
const noCheck = { checkedWhere: "", checkLine: "" };
const inJs = (checkLine: number) => ({ checkedWhere: "in JavaScript", checkLine: String(checkLine) });
const byRead = (checkLine: number) => ({ checkedWhere: "with a separate read", checkLine: String(checkLine) });

const checkInJs = (line: number, column: number, data: RecoveryData) => ({
  messageId: "checkInJs" as const,
  line,
  column,
  data,
});
const missingTime = (line: number, column: number, data: RecoveryData) => ({
  messageId: "missingTime" as const,
  line,
  column,
  data,
});
/** `output` is the whole module after the `addStatus` suggestion; omitted when the rule cannot offer one. */
const missingStatus = (line: number, column: number, data: RecoveryData, output?: string) => ({
  messageId: "missingStatus" as const,
  line,
  column,
  data,
  suggestions: output === undefined ? [] : [{ messageId: "addStatus" as const, data, output }],
});

ruleTester.run("conditional-recovery", rule, {
  assertionOptions: { requireData: true },
  valid: [
    {
      // seen on a sync worker: the IS NULL branch can match no row the claim took (the claim always stamps the
      // field), so the sweep is judged by its age branch
      name: "a sweep whose filter is the status and (no stamp, or an old one)",
      code: `export async function claim(workerId: string) {
  return prisma.$queryRaw\`UPDATE "SyncJob" SET status = 'RUNNING', "heartbeatAt" = now(), "lockedBy" = \${workerId}
    WHERE id IN (SELECT id FROM "SyncJob" WHERE status = 'PENDING' LIMIT 5 FOR UPDATE SKIP LOCKED) RETURNING id\`;
}
export async function sweep(cutoff: Date) {
  return prisma.$executeRaw\`UPDATE "SyncJob" SET status = 'PENDING', "lockedBy" = NULL
    WHERE status = 'RUNNING' AND ("heartbeatAt" IS NULL OR "heartbeatAt" < \${cutoff})\`;
}`,
    },
    {
      // seen on a notification route: a time budget measured from the run's own start judges no row's age, so the
      // writes after it are the run's own, not a sweep decided in JavaScript
      name: "a run's time budget is not a staleness check",
      code: `export async function run() {
  const held = await db.update(alerts).set({ processing: true }).where(eq(alerts.processing, false)).returning();
  const startTime = Date.now();
  for (const alert of held) {
    if (Date.now() - startTime > TIME_BUDGET_MS) {
      await db.update(alerts).set({ processing: false }).where(eq(alerts.id, alert.id));
      break;
    }
    await send(alert);
    await db.update(alerts).set({ processing: false, notified: true }).where(eq(alerts.id, alert.id));
  }
}`,
    },
    {
      name: "a correct recovery: one write that pins the claimed status and judges age by updatedAt",
      code:
        CLAIM +
        `async function sweep(threshold: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: threshold } }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a correct recovery back to PENDING, awaited through .then, with lte",
      code:
        CLAIM +
        `function requeueStale(threshold: Date) {
  return prisma.job
    .updateMany({ where: { status: "GENERATING", updatedAt: { lte: threshold } }, data: { status: "PENDING" } })
    .then((res) => res.count);
}`,
    },
    {
      name: "the holder's completion by id is require-fencing's business",
      code:
        CLAIM +
        `async function complete(id: string, url: string) {
  await prisma.job.update({ where: { id }, data: { status: "COMPLETED", resultUrl: url } });
}`,
    },
    {
      name: "the holder's own success and failure writes inside the claiming function",
      code: `async function generate(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  try {
    await render(id);
    await prisma.job.update({ where: { id }, data: { status: "DONE" } });
  } catch {
    await prisma.job.update({ where: { id }, data: { status: "FAILED" } });
  }
}`,
    },
    {
      name: "a fenced holder completion (id and the claimed status)",
      code:
        CLAIM +
        `async function complete(id: string) {
  await prisma.job.updateMany({ where: { id, status: "GENERATING" }, data: { status: "DONE" } });
}`,
    },
    {
      name: "a holder write after a JS status check that judges no age",
      code:
        CLAIM +
        `async function complete(job: { id: string; status: string }) {
  if (job.status !== "GENERATING") return;
  await prisma.job.update({ where: { id: job.id }, data: { status: "DONE" } });
}`,
    },
    {
      name: "a status sweep of an unrelated model",
      code:
        CLAIM +
        `async function voidDrafts() {
  await prisma.invoice.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "archiving old rows by createdAt is not a recovery",
      code:
        CLAIM +
        `async function archiveOld(cutoff: Date) {
  await prisma.job.updateMany({ where: { createdAt: { lt: cutoff } }, data: { status: "ARCHIVED" } });
}`,
    },
    {
      name: "archiving finished rows by createdAt never touches claimed rows",
      code:
        CLAIM +
        `async function archiveFinished(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "DONE", createdAt: { lt: cutoff } }, data: { status: "ARCHIVED" } });
}`,
    },
    {
      name: "a read of finished rows (not a stale scan) followed by writes by id",
      code:
        CLAIM +
        `async function tidy() {
  const finished = await prisma.job.findMany({ where: { status: "DONE" } });
  for (const row of finished) await prisma.job.update({ where: { id: row.id }, data: { status: "ARCHIVED" } });
}`,
    },
    {
      name: "a JS age check about another status value (PENDING)",
      code:
        CLAIM +
        `async function expire(job: { id: string; status: string; createdAt: Date }, cutoff: Date) {
  if (job.status === "PENDING" && job.createdAt < cutoff) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "EXPIRED" } });
  }
}`,
    },
    {
      name: "a JS age check whose includes() lists other status values only",
      code:
        CLAIM +
        `async function expire(job: Job, cutoff: Date) {
  if (["PENDING", "QUEUED"].includes(job.status) && job.createdAt < cutoff) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "EXPIRED" } });
  }
}`,
    },
    {
      name: "a JS age check about finished rows, through .then",
      code:
        CLAIM +
        `function archiveIfOld(id: string, cutoff: Date) {
  return prisma.job.findUnique({ where: { id } }).then((job) => {
    if (job && job.status === "DONE" && job.updatedAt < cutoff) return prisma.job.update({ where: { id }, data: { status: "ARCHIVED" } });
  });
}`,
    },
    {
      name: "a stale read of waiting rows is not a stale scan of the lock",
      code:
        CLAIM +
        `async function giveUp(cutoff: Date) {
  const waiting = await prisma.job.findMany({ where: { status: "PENDING", updatedAt: { lt: cutoff } } });
  for (const row of waiting) await prisma.job.update({ where: { id: row.id }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a page read by createdAt",
      code:
        CLAIM +
        `function page(before: Date) {
  return prisma.job.findMany({ where: { createdAt: { lt: before } }, orderBy: { createdAt: "desc" }, take: 50 });
}`,
    },
    {
      name: "age judged by heartbeatAt",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", heartbeatAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "NOT: { updatedAt: { gte } } is an age predicate",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", NOT: { updatedAt: { gte: cutoff } } }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "NOT as a list around a heartbeat comparison",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", NOT: [{ heartbeatAt: { gte: cutoff } }] }, data: { status: "PENDING" } });
}`,
    },
    {
      name: "an OR whose every branch judges age",
      code:
        CLAIM +
        `async function reap(soft: Date, hard: Date) {
  await prisma.job.updateMany({
    where: { status: "GENERATING", OR: [{ updatedAt: { lt: soft } }, { heartbeatAt: { lt: hard } }] },
    data: { status: "PENDING" },
  });
}`,
    },
    {
      name: "AND around an OR of ages",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({
    where: { AND: [{ status: "GENERATING" }, { OR: [{ updatedAt: { lt: cutoff } }, { lastHeartbeatAt: { lt: cutoff } }] }] },
    data: { status: "FAILED" },
  });
}`,
    },
    {
      name: "a correct recovery inside a $transaction callback, judged by lastProgressAt",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.$transaction(async (tx) => {
    await tx.job.updateMany({ where: { status: "GENERATING", lastProgressAt: { lt: cutoff } }, data: { status: "FAILED" } });
  });
}`,
    },
    {
      name: "a NestJS-style service with this.prisma",
      code: `@Injectable()
export class JobService {
  constructor(private readonly prisma: PrismaService) {}
  async claim(id: string) {
    return this.prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  }
  @Cron("*/5 * * * *")
  async reap() {
    const cutoff = new Date(Date.now() - 10 * 60_000);
    return this.prisma.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
  }
}`,
    },
    {
      name: "a repository class over this.db, with updated_at in snake case",
      code: `class JobRepository {
  constructor(private db: PrismaClient) {}
  claim(id: string) { return this.db.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } }); }
  reap(cutoff: Date) { return this.db.job.updateMany({ where: { status: "GENERATING", updated_at: { lt: cutoff } }, data: { status: "FAILED" } }); }
}`,
    },
    {
      name: "plain JavaScript, correct recovery",
      code: `async function claim(id) {
  await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function reap(cutoff) {
  await prisma.job.updateMany({ where: { status: "GENERATING", updated_at: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      languageOptions: javascript,
    },
    {
      name: "TS enum members for the values",
      code: `enum JobStatus { PENDING = "PENDING", GENERATING = "GENERATING", FAILED = "FAILED" }
async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: JobStatus.GENERATING } }, data: { status: JobStatus.GENERATING } });
}
async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: JobStatus.GENERATING, updatedAt: { lt: cutoff } }, data: { status: JobStatus.FAILED } });
}`,
    },
    {
      name: "a const and an as-const object for the values",
      code: `const GENERATING = "GENERATING";
const Status = { FAILED: "FAILED" } as const;
async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: GENERATING } }, data: { status: GENERATING } });
}
async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: GENERATING, updatedAt: { lt: cutoff } }, data: { status: Status.FAILED } });
}`,
    },
    {
      name: "a where held in a const",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  const stale = { status: "GENERATING", updatedAt: { lt: cutoff } };
  await prisma.job.updateMany({ where: stale, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a destructured delegate, judged by leaseExpiresAt",
      code: `const { job } = prisma;
async function claim(id: string) {
  await job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function reap(now: Date) {
  await job.updateMany({ where: { status: "GENERATING", leaseExpiresAt: { lt: now } }, data: { status: "PENDING" } });
}`,
    },
    {
      name: "optional chaining on the client",
      code:
        CLAIM +
        `async function reap(db: PrismaClient | undefined, cutoff: Date) {
  await db?.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "status: { equals } and updateManyAndReturn",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  return prisma.job.updateManyAndReturn({ where: { status: { equals: "GENERATING" }, updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a status sweep in a module that claims nothing",
      code: `async function resetAll() {
  await prisma.job.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a status sweep of a value the module never claims",
      code:
        CLAIM +
        `async function resetRunning() {
  await prisma.job.updateMany({ where: { status: "RUNNING" }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a write that does not touch the status",
      code:
        CLAIM +
        `async function countAttempt(id: string) {
  await prisma.job.update({ where: { id }, data: { attempts: { increment: 1 } } });
}`,
    },
    {
      name: "a sweeper of claims made elsewhere that judges age outside the row (how long it watched it) and pins the status",
      code: `export async function sweepDeploys(watchedFor: (id: string) => Promise<number>, budgetMs: number) {
  const running = await prisma.deploy.findMany({ where: { status: "RUNNING" } });
  for (const deploy of running) {
    if ((await watchedFor(deploy.id)) < budgetMs) continue;
    await prisma.deploy.updateMany({ where: { id: deploy.id, status: "RUNNING" }, data: { status: "FAILED" } });
  }
}`,
    },
    {
      name: "a sweeper of claims made elsewhere that resets every running row at boot (no age test): not judged here",
      code: `export async function resetOnBoot() {
  await prisma.deploy.updateMany({ where: { status: "RUNNING" }, data: { status: "QUEUED" } });
}`,
    },
    {
      name: "a sweeper whose write filter comes from elsewhere (opaque): unknown, not reported",
      code: `export async function sweep(cutoff: Date, extra: object) {
  const stuck = await prisma.deploy.findMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } } });
  for (const d of stuck) await prisma.deploy.updateMany({ where: { ...extra, id: d.id }, data: { status: "FAILED" } });
}`,
    },
    {
      name: "a reset handed to a one-off scheduler (a Date, a delay), not a repeating one: it may be a boot reset",
      code: `const schedule = require("node-schedule");
schedule.scheduleJob(new Date(Date.now() + 5000), () => {
  db.Case.update({ currentStatus: "Open" }, { where: { currentStatus: "Locked" } });
});`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    // ---- sweeps of claims made in another module ----
    {
      name: "a setInterval sweep that resets every PROCESSING upload, live or not",
      code: `setInterval(async () => {
  await prisma.upload.updateMany({ where: { status: "PROCESSING" }, data: { status: "PENDING" } });
}, 60_000);`,
      errors: [
        {
          messageId: "sweepMissingTime",
          line: 2,
          column: 9,
          data: {
            model: "upload",
            field: "status",
            value: "PROCESSING",
            target: "PENDING",
            rowFilter: "status",
            ...noCheck,
          },
        },
      ],
    },
    {
      name: "a cron job that unlocks every locked case every 15 minutes, whoever holds it and for how long",
      code: `const cron = require("node-cron");
cron.schedule("*/15 * * * *", () => {
  db.Case.update({ currentStatus: "Open" }, { where: { currentStatus: "Locked" } });
});`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "sweepMissingTime",
          line: 3,
          column: 3,
          data: {
            model: "Case",
            field: "currentStatus",
            value: "Locked",
            target: "Open",
            rowFilter: "currentStatus",
            ...noCheck,
          },
        },
      ],
    },
    {
      name: "a sweeper module: stuck rows read by age, then each written by id only",
      code: `export async function failStuckExports(cutoff: Date) {
  const stuck = await prisma.exportJob.findMany({ where: { status: "IN_PROGRESS", updatedAt: { lt: cutoff } } });
  for (const job of stuck) {
    await prisma.exportJob.update({ where: { id: job.id }, data: { status: "FAILED" } });
  }
}`,
      errors: [
        {
          messageId: "sweepCheckInJs",
          line: 4,
          column: 11,
          data: {
            model: "exportJob",
            field: "status",
            value: "IN_PROGRESS",
            target: "FAILED",
            rowFilter: "id",
            ...byRead(2),
          },
        },
      ],
    },
    {
      name: "a Mongo shell sweep: the age column is the one the module stamps with the clock (ts), the write repeats only the state",
      code: `db.queue.find({ state: "PROCESSING", ts: { $lt: cutoff } }).forEach(function (job) {
  db.queue.update({ _id: job._id, state: "PROCESSING" }, { $set: { state: "NEW", ts: new Date() } });
});`,
      languageOptions: javascript,
      errors: [
        {
          // The write repeats the state, so the message says so and asks only for the age.
          messageId: "sweepCheckInJsPinned",
          line: 2,
          column: 3,
          data: { model: "queue", field: "state", value: "PROCESSING", target: "NEW", rowFilter: "_id", ...byRead(1) },
        },
      ],
    },
    // ---- checkInJs ----
    {
      name: "age judged in an if, then a write by id",
      code:
        CLAIM +
        `async function recover(job: Job, threshold: Date) {
  if (job.status === "GENERATING" && job.updatedAt < threshold) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
  }
}`,
      errors: [checkInJs(7, 11, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(6) })],
    },
    {
      name: "age judged by an earlier stale read, then writes by id in a loop",
      code:
        CLAIM +
        `async function recover(threshold: Date) {
  const stale = await prisma.job.findMany({ where: { status: "GENERATING", updatedAt: { lt: threshold } } });
  for (const job of stale) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
  }
}`,
      errors: [checkInJs(8, 11, { ...generating, target: "FAILED", rowFilter: "id", ...byRead(6) })],
    },
    {
      name: "age judged in an early exit",
      code:
        CLAIM +
        `async function recover(job: Job, cutoff: Date) {
  if (job.status !== "GENERATING" || job.updatedAt >= cutoff) return;
  await prisma.job.update({ where: { id: job.id }, data: { status: "PENDING" } });
}`,
      errors: [checkInJs(7, 9, { ...generating, target: "PENDING", rowFilter: "id", ...inJs(6) })],
    },
    {
      name: "age judged by a helper named like a staleness test",
      code:
        CLAIM +
        `async function recover(job: Job) {
  if (isStale(job)) await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
}`,
      errors: [checkInJs(6, 27, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(6) })],
    },
    {
      name: "age judged with Date.now() and heartbeatAt",
      code:
        CLAIM +
        `async function recover(job: Job, ttlMs: number) {
  if (Date.now() - job.heartbeatAt.getTime() > ttlMs) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
  }
}`,
      errors: [checkInJs(7, 11, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(6) })],
    },
    {
      name: "age judged with optional chaining",
      code:
        CLAIM +
        `async function recover(job: Job | null, cutoff: Date) {
  if (job?.status === "GENERATING" && job?.updatedAt < cutoff) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
  }
}`,
      errors: [checkInJs(7, 11, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(6) })],
    },
    {
      name: "plain JavaScript, age judged in an if on updated_at",
      code: `async function claim(id) {
  await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function recover(job, cutoff) {
  if (job.status === "GENERATING" && job.updated_at < cutoff) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
  }
}`,
      languageOptions: javascript,
      errors: [checkInJs(6, 11, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(5) })],
    },
    {
      name: "inside a $transaction callback, by two identity columns",
      code:
        CLAIM +
        `async function recover(job: Job, cutoff: Date) {
  await prisma.$transaction(async (tx) => {
    if (job.status === "GENERATING" && job.updatedAt < cutoff) {
      await tx.job.updateMany({ where: { id: job.id, userId: job.userId }, data: { status: "FAILED" } });
    }
  });
}`,
      errors: [checkInJs(8, 13, { ...generating, target: "FAILED", rowFilter: "id and userId", ...inJs(7) })],
    },
    {
      name: "age judged in a conditional expression",
      code:
        CLAIM +
        `function recover(job: Job, cutoff: Date) {
  return job.status === "GENERATING" && job.updatedAt < cutoff ? prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } }) : null;
}`,
      errors: [checkInJs(6, 66, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(6) })],
    },
    {
      name: "age judged in an if inside a forEach callback",
      code:
        CLAIM +
        `function recover(jobs: Job[], cutoff: Date) {
  jobs.forEach((job) => {
    if (job.status === "GENERATING" && job.updatedAt < cutoff) void prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
  });
}`,
      errors: [checkInJs(7, 69, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(7) })],
    },
    {
      name: "age judged in an if inside a .then callback",
      code:
        CLAIM +
        `function recover(id: string, cutoff: Date) {
  return prisma.job.findUnique({ where: { id } }).then((job) => {
    if (job?.status === "GENERATING" && job.updatedAt < cutoff) return prisma.job.update({ where: { id }, data: { status: "FAILED" } });
  });
}`,
      errors: [checkInJs(7, 72, { ...generating, target: "FAILED", rowFilter: "id", ...inJs(7) })],
    },
    {
      name: "a stale read with NOT: { updatedAt: { gte } } inside a $transaction, then writes by id",
      code:
        CLAIM +
        `async function recover(cutoff: Date) {
  await prisma.$transaction(async (tx) => {
    const stale = await tx.job.findMany({ where: { status: "GENERATING", NOT: { updatedAt: { gte: cutoff } } } });
    for (const row of stale) await tx.job.update({ where: { id: row.id }, data: { status: "PENDING" } });
  });
}`,
      errors: [checkInJs(8, 36, { ...generating, target: "PENDING", rowFilter: "id", ...byRead(7) })],
    },
    // ---- missingStatus ----
    {
      name: "age in the filter but no status: the suggestion appends it",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, target: "FAILED", rowFilter: "its filter", ...noCheck },
          CLAIM +
            `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { updatedAt: { lt: cutoff }, status: "GENERATING" }, data: { status: "FAILED" } });
}`,
        ),
      ],
    },
    {
      name: "a multi-line where with a trailing comma",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({
    where: {
      updatedAt: { lt: cutoff },
    },
    data: { status: "PENDING" },
  });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, target: "PENDING", rowFilter: "its filter", ...noCheck },
          CLAIM +
            `async function reap(cutoff: Date) {
  await prisma.job.updateMany({
    where: {
      updatedAt: { lt: cutoff }, status: "GENERATING",
    },
    data: { status: "PENDING" },
  });
}`,
        ),
      ],
    },
    {
      name: "the suggestion writes the claim's own enum member",
      code: `import { JobStatus } from "@prisma/client";
async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: JobStatus.GENERATING } }, data: { status: JobStatus.GENERATING } });
}
async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { heartbeatAt: { lt: cutoff } }, data: { status: JobStatus.FAILED } });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, claimLine: "3", target: "FAILED", rowFilter: "its filter", ...noCheck },
          `import { JobStatus } from "@prisma/client";
async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: JobStatus.GENERATING } }, data: { status: JobStatus.GENERATING } });
}
async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { heartbeatAt: { lt: cutoff }, status: JobStatus.GENERATING }, data: { status: JobStatus.FAILED } });
}`,
        ),
      ],
    },
    {
      name: "a status filter that admits the claimed value: no suggestion (the key exists)",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: { not: "DONE" }, updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [missingStatus(6, 9, { ...generating, target: "FAILED", rowFilter: "its filter", ...noCheck })],
    },
    {
      name: "a where held in a const: no suggestion (not inline)",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  const old = { updatedAt: { lt: cutoff } };
  await prisma.job.updateMany({ where: old, data: { status: "FAILED" } });
}`,
      errors: [missingStatus(7, 9, { ...generating, target: "FAILED", rowFilter: "its filter", ...noCheck })],
    },
    {
      name: "age as NOT: { updatedAt: { gte } }, no status",
      code:
        CLAIM +
        `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { NOT: { updatedAt: { gte: cutoff } } }, data: { status: "FAILED" } });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, target: "FAILED", rowFilter: "its filter", ...noCheck },
          CLAIM +
            `async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { NOT: { updatedAt: { gte: cutoff } }, status: "GENERATING" }, data: { status: "FAILED" } });
}`,
        ),
      ],
    },
    {
      name: "an OR of ages, no status",
      code:
        CLAIM +
        `async function reap(soft: Date, hard: Date) {
  await prisma.job.updateMany({ where: { OR: [{ updatedAt: { lt: soft } }, { heartbeatAt: { lt: hard } }] }, data: { status: "PENDING" } });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, target: "PENDING", rowFilter: "its filter", ...noCheck },
          CLAIM +
            `async function reap(soft: Date, hard: Date) {
  await prisma.job.updateMany({ where: { OR: [{ updatedAt: { lt: soft } }, { heartbeatAt: { lt: hard } }], status: "GENERATING" }, data: { status: "PENDING" } });
}`,
        ),
      ],
    },
    {
      name: "a delegate alias (const jobs = prisma.job)",
      code: `const jobs = prisma.job;
async function claim(id: string) {
  await jobs.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function reap(cutoff: Date) {
  await jobs.updateMany({ where: { updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, claimLine: "3", target: "FAILED", rowFilter: "its filter", ...noCheck },
          `const jobs = prisma.job;
async function claim(id: string) {
  await jobs.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function reap(cutoff: Date) {
  await jobs.updateMany({ where: { updatedAt: { lt: cutoff }, status: "GENERATING" }, data: { status: "FAILED" } });
}`,
        ),
      ],
    },
    {
      name: "one row by id and age, without the status",
      code:
        CLAIM +
        `async function reapOne(id: string, cutoff: Date) {
  await prisma.job.update({ where: { id, updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}`,
      errors: [
        missingStatus(
          6,
          9,
          { ...generating, target: "FAILED", rowFilter: "id", ...noCheck },
          CLAIM +
            `async function reapOne(id: string, cutoff: Date) {
  await prisma.job.update({ where: { id, updatedAt: { lt: cutoff }, status: "GENERATING" }, data: { status: "FAILED" } });
}`,
        ),
      ],
    },
    {
      name: "snake-case status column and value",
      code: `async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, job_status: { not: "IN_PROGRESS" } }, data: { job_status: "IN_PROGRESS" } });
}
async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { updated_at: { lt: cutoff } }, data: { job_status: "QUEUED" } });
}`,
      errors: [
        missingStatus(
          5,
          9,
          {
            model: "job",
            field: "job_status",
            value: "IN_PROGRESS",
            claimLine: "2",
            target: "QUEUED",
            rowFilter: "its filter",
            ...noCheck,
          },
          `async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, job_status: { not: "IN_PROGRESS" } }, data: { job_status: "IN_PROGRESS" } });
}
async function reap(cutoff: Date) {
  await prisma.job.updateMany({ where: { updated_at: { lt: cutoff }, job_status: "IN_PROGRESS" }, data: { job_status: "QUEUED" } });
}`,
        ),
      ],
    },
    // ---- missingTime ----
    {
      name: "a sweep by status alone",
      code:
        CLAIM +
        `async function resetStuck() {
  await prisma.job.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
      errors: [missingTime(6, 9, { ...generating, target: "FAILED", rowFilter: "status", ...noCheck })],
    },
    {
      name: "a sweep by status alone inside a $transaction callback",
      code:
        CLAIM +
        `async function resetStuck() {
  await prisma.$transaction(async (tx) => {
    await tx.job.updateMany({ where: { status: "GENERATING" }, data: { status: "PENDING", error: null } });
  });
}`,
      errors: [missingTime(7, 11, { ...generating, target: "PENDING", rowFilter: "status", ...noCheck })],
    },
    {
      name: "a sweep by status alone, consumed with .then",
      code:
        CLAIM +
        `function resetStuck() {
  return prisma.job.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } }).then((r) => r.count);
}`,
      errors: [missingTime(6, 10, { ...generating, target: "FAILED", rowFilter: "status", ...noCheck })],
    },
    {
      name: "a NestJS service that resets every claim on start-up",
      code: `@Injectable()
export class JobService implements OnModuleInit {
  constructor(private readonly prisma: PrismaService) {}
  async claim(id: string) {
    await this.prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  }
  async onModuleInit() {
    await this.prisma.job.updateMany({ where: { status: "GENERATING" }, data: { status: "PENDING" } });
  }
}`,
      errors: [
        missingTime(8, 11, { ...generating, claimLine: "5", target: "PENDING", rowFilter: "status", ...noCheck }),
      ],
    },
    {
      name: "a renamed destructured delegate",
      code: `const { job: jobTable } = prisma;
async function claim(id: string) {
  await jobTable.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function resetStuck() {
  await jobTable.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
      errors: [missingTime(6, 9, { ...generating, claimLine: "3", target: "FAILED", rowFilter: "status", ...noCheck })],
    },
    {
      name: "a const value, a notIn claim and another field name",
      code: `const RUNNING = "RUNNING";
async function claim(id: string) {
  await prisma.task.updateMany({ where: { id, state: { notIn: [RUNNING, "DONE"] } }, data: { state: RUNNING } });
}
async function resetStuck() {
  await prisma.task.updateMany({ where: { state: RUNNING }, data: { state: "QUEUED" } });
}`,
      errors: [
        missingTime(6, 9, {
          model: "task",
          field: "state",
          value: "RUNNING",
          claimLine: "3",
          target: "QUEUED",
          rowFilter: "state",
          ...noCheck,
        }),
      ],
    },
    {
      name: "status pinned with in: [...]",
      code:
        CLAIM +
        `async function resetStuck() {
  await prisma.job.updateMany({ where: { status: { in: ["GENERATING"] } }, data: { status: "FAILED" } });
}`,
      errors: [missingTime(6, 9, { ...generating, target: "FAILED", rowFilter: "its filter", ...noCheck })],
    },
    {
      name: "plain JavaScript with optional chaining",
      code: `async function claim(db, id) {
  await db.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function resetStuck(db) {
  await db?.job?.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
      languageOptions: javascript,
      errors: [missingTime(5, 9, { ...generating, target: "FAILED", rowFilter: "status", ...noCheck })],
    },
    {
      name: "model names compare loosely (jobs = job)",
      code:
        CLAIM +
        `async function resetStuck() {
  await prisma.jobs.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
      errors: [missingTime(6, 9, { ...generating, target: "FAILED", rowFilter: "status", ...noCheck })],
    },
    {
      name: "two claims of the same lock: reported once, against the first",
      code: `async function claim(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
async function retry(id: string) {
  await prisma.job.updateMany({ where: { id, status: "FAILED" }, data: { status: "GENERATING" } });
}
async function resetStuck() {
  await prisma.job.updateMany({ where: { status: "GENERATING" }, data: { status: "FAILED" } });
}`,
      errors: [missingTime(8, 9, { ...generating, target: "FAILED", rowFilter: "status", ...noCheck })],
    },
    {
      name: "an in-progress value declared in settings.locks",
      code: `async function hold(id: string) {
  await prisma.seat.updateMany({ where: { id, state: { not: "HELD" } }, data: { state: "HELD" } });
}
async function releaseAll() {
  await prisma.seat.updateMany({ where: { state: "HELD" }, data: { state: "OPEN" } });
}`,
      settings: { locks: { inProgressValues: ["HELD"] } },
      errors: [
        missingTime(5, 9, {
          model: "seat",
          field: "state",
          value: "HELD",
          claimLine: "2",
          target: "OPEN",
          rowFilter: "state",
          ...noCheck,
        }),
      ],
    },
  ],
});
