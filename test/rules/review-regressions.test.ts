// Cases found while reviewing the rules against the spec: each was a false positive or a miss, fixed in the
// core (guards as conditions over the written model, units through callbacks, identity by run-time values only,
// `this.method()` within its class, holder writes after the claim, rule options reaching the shared model).
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester, recoveredElsewhere } from "../rule-tester.js";

const claimGenerating = `await prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });`;

// Age judged by a helper in JS, then a compare-and-set on the values read: a race-safe recovery.
const casRecovery = `export async function claimRun(id: string) {
  return prisma.agentRun.updateManyAndReturn({ where: { id, status: "QUEUED" }, data: { status: "RUNNING", heartbeatAt: new Date() } });
}
function classifyStaleRun(run: { heartbeatAt: Date | null }, now: number) {
  return run.heartbeatAt && now - run.heartbeatAt.getTime() > 60_000 ? "WORKER_LOST" : null;
}
export async function reconcile(conversationId: string) {
  const runs = await prisma.agentRun.findMany({ where: { conversationId, status: { in: UNSETTLED } } });
  for (const run of runs) {
    const verdict = classifyStaleRun(run, Date.now());
    if (!verdict) continue;
    await prisma.agentRun.updateMany({
      where: { id: run.id, status: run.status, heartbeatAt: run.heartbeatAt },
      data: { status: "FAILED", errorCode: verdict },
    });
  }
}`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    casRecovery,
    // ACTIVE means "enabled" in most schemas: re-enabling a source is not a claim
    `export async function repair(id: string) {
  await prisma.feedbackSource.updateMany({ where: { id, status: "error" }, data: { status: "active" } });
}`,
    // "billing" ends in -ing, but a role is not a lifecycle field: demoting owners is not a claim
    `export async function disable(projectId: string) {
  await prisma.projectUsers.updateMany({ where: { projectId, role: "owner" }, data: { role: "billing" } });
}`,
    // a field named in settings.locks.stateFields can carry a claim; others cannot
    {
      code: `export async function start(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
      settings: { locks: { stateFields: ["lifecycle"] } },
    },
    // a racy recovery inside a callback still answers Q1
    `export async function claim(id: string) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); }
export async function sweep(cutoff: Date) {
  const stale = await prisma.job.findMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } } });
  await Promise.all(stale.map((job) => prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } })));
}`,
    // a boot-time reset scoped by a fixed value is a (racy) recovery, not a holder's write
    `export async function claim(id: string) { await prisma.doc.updateMany({ where: { id, status: "QUEUED" }, data: { status: "EXPORTING" } }); }
export async function onBoot() { await prisma.doc.updateMany({ where: { kind: "pdf", status: { in: ["EXPORTING"] } }, data: { status: "FAILED" } }); }`,
  ],
  invalid: [
    {
      // Prisma enums keep the schema's case
      code: `import { JobStatus } from "@prisma/client";
export async function start(id: string) { await prisma.job.updateMany({ where: { id, status: { not: JobStatus.running } }, data: { status: JobStatus.running } }); }`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          column: 49,
          data: { model: "job", field: "status", value: "running" },
        },
      ],
    },
    {
      // an optimistic compare-and-set on a version column is atomic, but still a claim that needs a recovery
      code: `export async function start(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status !== "QUEUED") return;
  await prisma.job.updateMany({ where: { id: jobId, version: job.version }, data: { status: "RUNNING", version: { increment: 1 } } });
}`,
      errors: [
        { messageId: "missingRecovery", line: 4, column: 9, data: { model: "job", field: "status", value: "RUNNING" } },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    // the check is about another model's row
    `export async function start(projectId: string, jobId: string) {
  const project = await prisma.project.findUniqueOrThrow({ where: { id: projectId } });
  if (project.status !== "ACTIVE") throw new Error("project is not active");
  await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING" } });
}`,
    // the check proves the row already holds the value: nothing is claimed
    `export async function progress(job: { id: string; status: string }, pct: number) {
  if (job.status !== "RUNNING") return;
  await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING", progress: pct } });
}`,
    // the check excludes terminal states only: it does not guard against a second run
    `export async function deliver(delivery: { id: string; status: string }) {
  if (delivery.status === "SUCCEEDED" || delivery.status === "FAILED") return;
  await prisma.webhookDelivery.update({ where: { id: delivery.id }, data: { status: "PROCESSING" } });
}`,
    // optimistic compare-and-set on the status read before
    `export async function start(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status !== "QUEUED") return;
  await prisma.job.updateMany({ where: { id: jobId, status: job.status }, data: { status: "RUNNING" } });
}`,
  ],
  invalid: [
    {
      // the check is made outside the transaction callback
      code: `export async function start(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status === "RUNNING") return;
  await prisma.$transaction(async (tx) => {
    await tx.job.update({ where: { id: jobId }, data: { status: "RUNNING" } });
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 11,
          data: { model: "job", field: "status", value: "RUNNING", checkedWhere: "in JavaScript", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { model: "job", field: "status", value: "RUNNING", checkedWhere: "in JavaScript", checkLine: "3" },
              output: `export async function start(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status === "RUNNING") return;
  await prisma.$transaction(async (tx) => {
    await tx.job.update({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  });
}`,
            },
          ],
        },
      ],
    },
    {
      // read, then write in the .then callback
      code: `export function next() {
  return prisma.job.findFirst({ where: { status: "QUEUED" } }).then((job) => job && prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } }));
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 2,
          column: 85,
          data: {
            model: "job",
            field: "status",
            value: "RUNNING",
            checkedWhere: "with a separate read",
            checkLine: "2",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "job",
                field: "status",
                value: "RUNNING",
                checkedWhere: "with a separate read",
                checkLine: "2",
              },
              output: `export function next() {
  return prisma.job.findFirst({ where: { status: "QUEUED" } }).then((job) => job && prisma.job.update({ where: { id: job.id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }));
}`,
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    // two anonymous route handlers do not reach each other
    `app.post("/start/:id", async (req) => {
  const id = req.params.id;
  ${claimGenerating}
});
app.post("/admin/cancel/:id", async (req) => {
  await prisma.job.update({ where: { id: req.params.id }, data: { status: "CANCELLED" } });
});`,
    // a bulk write by a fixed value names no claimed row
    `export async function start(id: string) {
  ${claimGenerating}
  await prisma.job.updateMany({ where: { kind: "PREVIEW" }, data: { status: "CANCELLED" } });
}`,
    // this.finish() is the caller's own class, not another class's finish()
    `class Worker {
  async start(id: string) {
    ${claimGenerating}
    await this.finish(id);
  }
  async finish(id: string) { await prisma.job.updateMany({ where: { id, status: "GENERATING" }, data: { status: "DONE" } }); }
}
class AdminController {
  async finish(id: string) { await prisma.job.update({ where: { id }, data: { status: "CANCELLED" } }); }
}`,
    // a reset before the claim is not the holder's write
    `export async function restart(id: string) {
  await prisma.job.update({ where: { id }, data: { status: "PENDING" } });
  ${claimGenerating}
}`,
  ],
  invalid: [
    recoveredElsewhere({
      // a callback in an options bag belongs to the claiming function
      code: `export async function start(id: string) {
  ${claimGenerating}
  await runWithHooks(id, { onSuccess: async () => { await prisma.job.update({ where: { id }, data: { status: "COMPLETED" } }); } });
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 3,
          column: 59,
          data: { model: "job", field: "status", value: "GENERATING", claimLine: "2", target: "COMPLETED" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "job", field: "status", value: "GENERATING", claimLine: "2", target: "COMPLETED" },
              output: `export async function start(id: string) {
  ${claimGenerating}
  await runWithHooks(id, { onSuccess: async () => { await prisma.job.update({ where: { id, status: "GENERATING" }, data: { status: "COMPLETED" } }); } });
}`,
            },
          ],
        },
      ],
    }),
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    casRecovery,
    // archiving old rows judged in JS is not a recovery
    `export async function claim(id: string) { ${claimGenerating} }
export async function archive(job: { id: string; createdAt: Date }, cutoff: Date) {
  if (job.createdAt < cutoff) await prisma.job.update({ where: { id: job.id }, data: { status: "ARCHIVED" } });
}`,
    // the checks together say the row is PENDING, not GENERATING
    `export async function claim(id: string) { ${claimGenerating} }
export async function expire(job: { id: string; status: string; createdAt: Date }, cutoff: Date) {
  if (job.status !== "PENDING") return;
  if (job.createdAt < cutoff) await prisma.job.update({ where: { id: job.id }, data: { status: "EXPIRED" } });
}`,
    // the holder's own deadline, after its claim, is a holder write (require-fencing's business)
    `export async function run(id: string, budgetMs: number) {
  ${claimGenerating}
  const began = Date.now();
  await work(id);
  if (Date.now() - began > budgetMs) await prisma.job.update({ where: { id }, data: { status: "TIMED_OUT" } });
}`,
  ],
  invalid: [
    {
      code: `export async function claim(id: string) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); }
export async function sweep(cutoff: Date) {
  const stale = await prisma.job.findMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } } });
  await Promise.all(stale.map((job) => prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } })));
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 4,
          column: 40,
          data: {
            model: "job",
            field: "status",
            value: "RUNNING",
            claimLine: "1",
            checkedWhere: "with a separate read",
            checkLine: "3",
            rowFilter: "id",
          },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    {
      // a progress field given as a rule option counts as a liveness signal in the shared model too
      code: `export async function claim(id: string) { ${claimGenerating} }
export async function sweep(t: Date) { await prisma.job.updateMany({ where: { status: "GENERATING", startedAt: { lt: t }, pulse: { lt: t } }, data: { status: "FAILED" } }); }`,
      options: [{ progressTimeFields: ["pulse"] }],
    },
  ],
  invalid: [
    {
      code: `export async function claim(id: string) { ${claimGenerating} }
export async function sweep(t: Date) { await prisma.job.updateMany({ where: { status: "GENERATING", kickoff: { lt: t } }, data: { status: "FAILED" } }); }`,
      options: [{ startTimeFields: ["kickoff"] }],
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 2,
          column: 101,
          data: {
            model: "job",
            field: "status",
            value: "GENERATING",
            claimLine: "1",
            stamped: "set once when work starts",
            timeField: "kickoff",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});

// ---- key-value locks ----
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import requireLockTtl from "../../rules/require-lock-ttl.js";

const ioredisHeader = `import Redis from "ioredis";
const redis = new Redis();
`;

ruleTester.run("require-lock-ttl", requireLockTtl, {
  valid: [
    // an expiry on every branch of the spread is an expiry
    `${ioredisHeader}export async function acquireLock(key: string, token: string, fast: boolean) { return redis.set(key, token, "NX", ...(fast ? ["PX", 1000] : ["PX", 30000])); }`,
  ],
  invalid: [
    {
      // the EXPIRE is the acquire's own if-branch: rewriting the acquire must not remove the if around it
      code: `${ioredisHeader}export async function acquireLock(id: string) {
  if (await redis.setnx(\`lock:\${id}\`, "1")) await redis.expire(\`lock:\${id}\`, 30);
}`,
      errors: [
        {
          messageId: "separateExpire",
          line: 4,
          column: 19,
          data: { command: "SETNX", key: '"lock:*"', expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: "4" },
          suggestions: [
            {
              messageId: "expireInAcquire",
              data: {
                command: "SETNX",
                key: '"lock:*"',
                expireCommand: "EXPIRE",
                unit: "EX",
                ttl: "30",
                expireLine: "4",
              },
              output: `${ioredisHeader}export async function acquireLock(id: string) {
  if (await redis.set(\`lock:\${id}\`, "1", "EX", 30, "NX")) await redis.expire(\`lock:\${id}\`, 30);
}`,
            },
          ],
        },
      ],
    },
    {
      // another function's EXPIRE does not expire this acquire
      code: `${ioredisHeader}export async function quickLock(id: string) { return redis.setnx(\`lock:\${id}\`, "1"); }
export async function acquireLock(id: string) {
  const ok = await redis.setnx(\`lock:\${id}\`, "1");
  await redis.expire(\`lock:\${id}\`, 30);
  return ok;
}`,
      errors: [
        {
          messageId: "missingTtl",
          line: 3,
          column: 60,
          data: { command: "SETNX", key: '"lock:*"' },
          suggestions: [
            {
              messageId: "addTtl",
              output: `${ioredisHeader}export async function quickLock(id: string) { return redis.set(\`lock:\${id}\`, "1", "PX", 30_000, "NX"); }
export async function acquireLock(id: string) {
  const ok = await redis.setnx(\`lock:\${id}\`, "1");
  await redis.expire(\`lock:\${id}\`, 30);
  return ok;
}`,
            },
          ],
        },
        {
          messageId: "separateExpire",
          line: 5,
          column: 26,
          data: { command: "SETNX", key: '"lock:*"', expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: "6" },
          suggestions: [
            {
              messageId: "mergeExpire",
              data: {
                command: "SETNX",
                key: '"lock:*"',
                expireCommand: "EXPIRE",
                unit: "EX",
                ttl: "30",
                expireLine: "6",
              },
              output: `${ioredisHeader}export async function quickLock(id: string) { return redis.setnx(\`lock:\${id}\`, "1"); }
export async function acquireLock(id: string) {
  const ok = await redis.set(\`lock:\${id}\`, "1", "EX", 30, "NX");
  return ok;
}`,
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release", ownerCheckedRelease, {
  valid: [
    // a compare-and-delete that returns early when the token differs
    `${ioredisHeader}const RELEASE = \`if redis.call("GET", KEYS[1]) ~= ARGV[1] then return 0 end return redis.call("DEL", KEYS[1])\`;
export async function withLock(key: string, token: string) {
  if (!(await redis.set(key, token, "PX", 5000, "NX"))) return;
  try { await work(); } finally { await redis.eval(RELEASE, 1, key, token); }
}`,
    // Map#get/Map#set next to a Redis lock: another client, and "*:*" names nothing in particular
    `import { redis } from "./redis";
const LOCK_KEY = "lock:update-click-stats";
export async function GET() {
  if (!(await redis.set(LOCK_KEY, crypto.randomUUID(), { nx: true, ex: 60 }))) return;
  const enrollments = new Map();
  for (const c of clicks) {
    const key = \`\${c.programId}:\${c.partnerId}\`;
    const existing = enrollments.get(key);
    if (existing) existing.clicks++; else enrollments.set(key, { clicks: 1 });
  }
}`,
    // a one-time OAuth nonce consumed by a get-and-delete script is not a lock
    `${ioredisHeader}export async function issueState(nonce: string) { await redis.set(\`oauth:state:\${nonce}\`, "1", "EX", 600, "NX"); }
export async function consumeState(nonce: string) {
  return redis.eval(\`local v = redis.call("get", KEYS[1]); redis.call("del", KEYS[1]); return v\`, 1, \`oauth:state:\${nonce}\`);
}`,
    // a single-flight throttle window cleared early is not a lock
    `${ioredisHeader}export async function revalidate(userId: string) {
  const key = revalidationKey(userId);
  if (!(await redis.set(key, "1", "EX", 300, "NX"))) return;
  if (!(await check(userId))) await redis.del(key);
}`,
  ],
  invalid: [
    {
      // the GET's result is compared in a .then callback
      code: `${ioredisHeader}export async function acquireLock(key: string, token: string) { return redis.set(key, token, "PX", 5000, "NX"); }
export function releaseLock(key: string, token: string) {
  return redis.get(key).then((value) => { if (value === token) return redis.del(key); return 0; });
}`,
      errors: [
        {
          messageId: "getCompareDelete",
          line: 5,
          column: 77,
          data: { command: "DEL", key: "`key`", acquireLine: "3", getLine: "5", value: "" },
          suggestions: [],
        },
      ],
    },
  ],
});

// The holder's writes in the function that called the claim helper, after the call.
const claimHelper = `export async function claimExport(id: string) {
  const { count } = await prisma.videoExport.updateMany({ where: { id, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  return count === 1;
}
`;

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    // before the claim, the caller is not yet the holder
    `${claimHelper}export async function rerun(id: string) {
  await prisma.videoExport.update({ where: { id }, data: { status: "QUEUED" } });
  if (!(await claimExport(id))) return;
}`,
  ],
  invalid: [
    recoveredElsewhere({
      code: `${claimHelper}export async function runExport(id: string) {
  if (!(await claimExport(id))) return;
  await render(id);
  await prisma.videoExport.update({ where: { id }, data: { status: "READY" } });
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 8,
          column: 9,
          data: { model: "videoExport", field: "status", value: "RENDERING", claimLine: "2", target: "READY" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "videoExport", field: "status", value: "RENDERING", claimLine: "2", target: "READY" },
              output: `${claimHelper}export async function runExport(id: string) {
  if (!(await claimExport(id))) return;
  await render(id);
  await prisma.videoExport.update({ where: { id, status: "RENDERING" }, data: { status: "READY" } });
}`,
            },
          ],
        },
      ],
    }),
  ],
});

// Rows born in progress, and schedule checks that are not age checks (defihelper's task queue).
const taskQueue = (push: string) => `export class TaskQueue {
  table() { return this.knex("tasks"); }
  async push(task: Task) {
${push}
  }
  async lock({ id }: Task) {
    const n = await this.table().update({ status: TaskStatus.Process }).where({ id, status: TaskStatus.Pending });
    return n > 0;
  }
}`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    // inserted in a state nothing in the module claims or reads: a record, not a lock
    `export async function log(run: Run) { await prisma.syncRun.create({ data: { id: run.id, status: "RUNNING" } }); }`,
  ],
  invalid: [
    {
      // inserted already in the claimed state: a claim from birth, next to the claim itself
      code: taskQueue(`    if (!dayjs(task.startAt).isAfter(new Date())) {
      await this.table().insert({ ...task, status: TaskStatus.Process });
      await publish(task).catch(() => this.table().update({ ...task, status: TaskStatus.Pending }).where("id", task.id));
    }`),
      errors: [
        {
          messageId: "missingRecovery",
          line: 5,
          column: 13,
          data: { model: "table", field: "status", value: "Process" },
        },
        {
          messageId: "missingRecovery",
          line: 10,
          column: 21,
          data: { model: "table", field: "status", value: "Process" },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  // `startAt <= now` says the task is due, not that its holder died: the write after it is no recovery
  valid: [
    taskQueue(`    if (!dayjs(task.startAt).isAfter(new Date())) {
      await publish(task).catch(() => this.table().update({ ...task, status: TaskStatus.Pending }).where("id", task.id));
    }`),
  ],
  invalid: [],
});

// Drizzle with a column chosen at run time (Dokploy: `deployments[\`${type}Id\`]`): no finding, no crash.
ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    `import { and, eq } from "drizzle-orm";
export async function latest(type: "application" | "compose", id: string) {
  const row = await db.query.deployments.findFirst({ where: eq(deployments[\`\${type}Id\`], id) });
  if (row?.status === "running") return;
  await db.update(deployments).set({ status: "running" }).where(and(eq(deployments[\`\${type}Id\`], id)));
  await db.insert(deployments).values({ status: "running" });
}`,
  ],
  invalid: [],
});

// A read in one test callback does not check a write in the next (apostrophe's adapter tests).
ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    `describe("adapter", function () {
  it("finds", async function () {
    const docs = await db.collection("test").find({ status: "published" }).toArray();
    expect(docs).to.have.lengthOf(2);
  });
  it("updates", async function () {
    await db.collection("test").updateOne({ _id: "a" }, { $set: { status: "running" } });
  });
});`,
  ],
  invalid: [],
});

// "block" is not "lock": atproto's block tables are not lock tables.
ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    `export async function insertBlock(db: Db, uri: string, creator: string, subject: string) {
  await db.insertInto("actor_block").values({ uri, creator, subjectDid: subject }).onConflict((oc) => oc.doNothing()).execute();
}`,
  ],
  invalid: [
    {
      code: `export async function takeJobLock(db: Db, name: string) {
  await db.insertInto("job_lock").values({ name }).onConflict((oc) => oc.doNothing()).executeTakeFirst();
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 9, data: { model: "job_lock" } }],
    },
  ],
});
