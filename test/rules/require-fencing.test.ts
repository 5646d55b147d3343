import rule from "../../rules/require-fencing.js";
import { javascript, ruleTester } from "../rule-tester.js";

type FenceData = {
  model: string;
  field: string;
  value: string;
  claimLine: string;
  target: string;
};

/** The message data of a holder write: the claimed lock, where it was taken, and where the write moves the row. */
const lock = (target: string, claimLine: number, over: Partial<FenceData> = {}): FenceData => ({
  model: "job",
  field: "status",
  value: "GENERATING",
  claimLine: String(claimLine),
  target,
  ...over,
});

/** One `unfencedWrite` at line:column; `output` is the source once `addFence` is applied, or null when none is offered. */
const unfenced = (line: number, column: number, data: FenceData, output: string | null) => ({
  messageId: "unfencedWrite" as const,
  line,
  column,
  data,
  suggestions: output === null ? [] : [{ messageId: "addFence" as const, data, output }],
});

ruleTester.run("require-fencing", rule, {
  valid: [
    // the completion requires the claimed value: a worker that lost its claim changes nothing
    `
    async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await render(jobId);
      await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
    }`,
    // fenced by the owner column the claim wrote
    `
    async function generate(jobId: string, workerId: string) {
      const claimed = await prisma.job.updateMany({
        where: { id: jobId, status: { not: "GENERATING" } },
        data: { status: "GENERATING", lockedBy: workerId },
      });
      if (claimed.count === 0) return;
      await render(jobId);
      await prisma.job.updateMany({ where: { id: jobId, lockedBy: workerId }, data: { status: "COMPLETED", lockedBy: null } });
    }`,
    // snake_case owner column, failure in catch
    `
    async function run(jobId: string, me: string) {
      const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING", worker_id: me } });
      if (count === 0) return;
      try {
        await work(jobId);
        await prisma.job.updateMany({ where: { id: jobId, worker_id: me }, data: { status: "SUCCEEDED" } });
      } catch {
        await prisma.job.updateMany({ where: { id: jobId, worker_id: me }, data: { status: "FAILED" } });
      }
    }`,
    // fencing token through a .then chain
    `
    function start(jobId: string, fencingToken: number) {
      return prisma.job
        .updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", fencingToken } })
        .then(() => render(jobId))
        .then(() => prisma.job.updateMany({ where: { id: jobId, fencingToken }, data: { status: "COMPLETED" } }));
    }`,
    // NestJS-style service: this.finish(id) filters on the lease id
    `
    import { JobStatus } from "@prisma/client";
    export class ExportService {
      constructor(private readonly prisma: PrismaService) {}
      async start(id: string, leaseId: string) {
        const { count } = await this.prisma.job.updateMany({
          where: { id, status: { not: JobStatus.GENERATING } },
          data: { status: JobStatus.GENERATING, leaseId },
        });
        if (count === 0) return;
        await this.finish(id, leaseId);
      }
      private async finish(id: string, leaseId: string) {
        await this.prisma.job.updateMany({ where: { id, leaseId }, data: { status: JobStatus.COMPLETED, leaseId: null } });
      }
    }`,
    // optimistic concurrency: a version column compared with equals
    `
    async function claim(jobId: string) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      const r = await prisma.job.updateMany({
        where: { id: jobId, version: job.version, status: { not: "PROCESSING" } },
        data: { status: "PROCESSING", version: { increment: 1 } },
      });
      if (r.count === 0) return;
      await prisma.job.updateMany({ where: { id: jobId, version: { equals: job.version + 1 } }, data: { status: "PROCESSED" } });
    }`,
    // plain JS, token column, the completion in a function called by name
    {
      code: `
      async function take(id, token) {
        const r = await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING", token } });
        if (r.count === 0) return;
        await complete(id, token);
      }
      async function complete(id, token) {
        await prisma.job.updateMany({ where: { id, token }, data: { status: "DONE", token: null } });
      }`,
      languageOptions: javascript,
    },
    // a filter that admits the claimed value among a few others still pins it
    `
    async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await prisma.job.updateMany({ where: { id: jobId, status: { in: ["GENERATING", "RETRYING"] } }, data: { status: "FAILED" } });
    }`,
    // an admin cancel endpoint elsewhere in the module: the claiming code never reaches it
    `
    export async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await render(jobId);
      await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
    }
    export async function cancelJob(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "CANCELLED" } });
    }`,
    // a helper that moves the row, but only the admin path calls it
    `
    async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await render(jobId);
    }
    async function adminCancel(jobId: string) {
      await markCancelled(jobId);
    }
    async function markCancelled(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "CANCELLED" } });
    }`,
    // progress updates do not touch the status field
    `
    async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      for (let page = 1; page <= 10; page++) {
        await renderPage(jobId, page);
        await prisma.job.update({ where: { id: jobId }, data: { progress: page * 10, updatedAt: new Date() } });
      }
    }`,
    // heartbeats re-write the claimed value: they do not move the row off it
    `
    async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      const timer = setInterval(() => prisma.job.update({ where: { id: jobId }, data: { status: "GENERATING", heartbeatAt: new Date() } }), 10_000);
      await render(jobId);
      clearInterval(timer);
    }`,
    // the status written belongs to another model
    `
    async function generate(jobId: string, reportId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await prisma.report.update({ where: { id: reportId }, data: { status: "COMPLETED" } });
      await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
    }`,
    // recoveries are conditional-recovery's business: pinned and aged, by id or in bulk
    `
    async function generate(jobId: string) {
      await prisma.job.updateMany({
        where: { id: jobId, status: "GENERATING", updatedAt: { lt: new Date(Date.now() - 600_000) } },
        data: { status: "FAILED" },
      });
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await sweep();
    }
    async function sweep() {
      await prisma.job.updateMany({ where: { status: "GENERATING", heartbeatAt: { lt: new Date(Date.now() - 600_000) } }, data: { status: "QUEUED" } });
    }`,
    // a recovery that judges age in JavaScript: a flawed recovery, not a holder write
    `
    async function generate(jobId: string) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (isStale(job.updatedAt)) {
        await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED" } });
      }
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
    }`,
    // a write that can only match rows in another state never touches the claim
    `
    async function generate(jobId: string) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) {
        await prisma.job.update({ where: { id: jobId, status: "QUEUED" }, data: { status: "DEDUPLICATED" } });
        return;
      }
      await prisma.job.update({ where: { id: jobId, status: { equals: "GENERATING" } }, data: { status: "COMPLETED" } });
    }`,
    // a filter no one can read (spread, helper call) yields no finding
    `
    async function generate(jobId: string, owner: Record<string, string>) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) return;
      await prisma.job.updateMany({ where: { id: jobId, ...owner }, data: { status: "COMPLETED" } });
      await prisma.job.updateMany({ where: holderFilter(jobId), data: { status: "FAILED" } });
    }`,
    // moving rows to a state that is not in progress is a transition, not a lock
    `
    async function approve(postId: string) {
      const r = await prisma.post.updateMany({ where: { id: postId, status: { not: "APPROVED" } }, data: { status: "APPROVED" } });
      if (r.count === 0) return;
      await prisma.post.update({ where: { id: postId }, data: { status: "PUBLISHED" } });
    }`,
    // an owner column declared in settings.locks
    {
      code: `
      async function generate(jobId: string, holderId: string) {
        const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", holderId } });
        if (claimed.count === 0) return;
        await prisma.job.updateMany({ where: { id: jobId, holderId }, data: { status: "COMPLETED" } });
      }`,
      settings: { locks: { ownerFields: ["holderId"] } },
    },
    // interactive transaction, fenced by status; optional chaining on the delegate
    `
    async function runExport(exportId: string) {
      await prisma.$transaction(async (tx) => {
        const r = await tx.export.updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
        if (r.count === 0) throw new Error("busy");
      });
      const file = await buildFile(exportId);
      await prisma.$transaction(async (tx) => {
        await tx.file.create({ data: file });
        await tx?.export.updateMany({ where: { id: exportId, status: "EXPORTING" }, data: { status: "EXPORTED" } });
      });
    }`,
    // no claim at all: the row is only ever moved between resting states
    `
    async function archive(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "ARCHIVED" } });
    }`,
  ],
  invalid: [
    {
      // await: the completion after the claim, in the same function
      code: `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({
    where: { id: jobId, status: { not: "GENERATING" } },
    data: { status: "GENERATING" },
  });
  if (claimed.count === 0) return;
  const pdf = await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED", pdf } });
}`,
      errors: [
        unfenced(8, 9, lock("COMPLETED", 2), `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({
    where: { id: jobId, status: { not: "GENERATING" } },
    data: { status: "GENERATING" },
  });
  if (claimed.count === 0) return;
  const pdf = await render(jobId);
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED", pdf } });
}`),
      ],
    },
    {
      // try/catch: completion and failure are both unfenced
      code: `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (count === 0) return;
  try {
    await generate(jobId);
    await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
  } catch (error) {
    await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED", error: String(error) } });
  }
}`,
      errors: [
        unfenced(6, 11, lock("COMPLETED", 2), `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (count === 0) return;
  try {
    await generate(jobId);
    await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
  } catch (error) {
    await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED", error: String(error) } });
  }
}`),
        unfenced(8, 11, lock("FAILED", 2), `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (count === 0) return;
  try {
    await generate(jobId);
    await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
  } catch (error) {
    await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "FAILED", error: String(error) } });
  }
}`),
      ],
    },
    {
      // finally: the release back to idle
      code: `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  if (count === 0) return;
  try {
    await work(jobId);
  } finally {
    await prisma.job.update({ where: { id: jobId }, data: { status: "IDLE" } });
  }
}`,
      errors: [
        unfenced(7, 11, lock("IDLE", 2, { value: "RUNNING" }), `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  if (count === 0) return;
  try {
    await work(jobId);
  } finally {
    await prisma.job.update({ where: { id: jobId, status: "RUNNING" }, data: { status: "IDLE" } });
  }
}`),
      ],
    },
    {
      // .then chain: the completion runs in an anonymous callback of the claiming function
      code: `function start(jobId: string) {
  return prisma.job
    .updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } })
    .then(() => render(jobId))
    .then(() => prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } }));
}`,
      errors: [
        unfenced(5, 17, lock("COMPLETED", 2), `function start(jobId: string) {
  return prisma.job
    .updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } })
    .then(() => render(jobId))
    .then(() => prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } }));
}`),
      ],
    },
    {
      // a nested callback, per item of a loop
      code: `async function processBatch(ids: string[]) {
  for (const id of ids) {
    const claimed = await prisma.job.updateMany({ where: { id, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
    if (claimed.count === 0) continue;
    setImmediate(async () => {
      await convert(id);
      await prisma.job.update({ where: { id }, data: { status: "DONE" } });
    });
  }
}`,
      errors: [
        unfenced(7, 13, lock("DONE", 3, { value: "PROCESSING" }), `async function processBatch(ids: string[]) {
  for (const id of ids) {
    const claimed = await prisma.job.updateMany({ where: { id, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
    if (claimed.count === 0) continue;
    setImmediate(async () => {
      await convert(id);
      await prisma.job.update({ where: { id, status: "PROCESSING" }, data: { status: "DONE" } });
    });
  }
}`),
      ],
    },
    {
      // a function the claimer calls by name; the claim wrote an owner but the completion does not check it
      code: `async function claimAndRun(jobId: string, workerId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", lockedBy: workerId } });
  if (res.count === 0) return;
  await runGeneration(jobId);
  await markCompleted(jobId);
}

async function markCompleted(jobId: string) {
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED", finishedAt: new Date() } });
}`,
      errors: [
        unfenced(9, 9, lock("COMPLETED", 2), `async function claimAndRun(jobId: string, workerId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", lockedBy: workerId } });
  if (res.count === 0) return;
  await runGeneration(jobId);
  await markCompleted(jobId);
}

async function markCompleted(jobId: string) {
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED", finishedAt: new Date() } });
}`),
      ],
    },
    {
      // a function passed as an argument (failure handler)
      code: `async function start(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (res.count === 0) return;
  await withRetries(() => exportJob(jobId), onFailure);
}
const onFailure = async (jobId: string) => {
  await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED" } });
};`,
      errors: [
        unfenced(7, 9, lock("FAILED", 2, { value: "EXPORTING" }), `async function start(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (res.count === 0) return;
  await withRetries(() => exportJob(jobId), onFailure);
}
const onFailure = async (jobId: string) => {
  await prisma.job.update({ where: { id: jobId, status: "EXPORTING" }, data: { status: "FAILED" } });
};`),
      ],
    },
    {
      // NestJS-style service with a Prisma enum: this.finish(id)
      code: `import { JobStatus } from "@prisma/client";
@Injectable()
export class ExportService {
  constructor(private readonly prisma: PrismaService) {}

  async start(id: string) {
    const { count } = await this.prisma.job.updateMany({
      where: { id, status: { not: JobStatus.GENERATING } },
      data: { status: JobStatus.GENERATING },
    });
    if (count === 0) throw new ConflictException();
    await this.generate(id);
    await this.finish(id);
  }

  private async finish(id: string) {
    await this.prisma.job.update({ where: { id }, data: { status: JobStatus.COMPLETED } });
  }
}`,
      errors: [
        unfenced(17, 11, lock("COMPLETED", 7), `import { JobStatus } from "@prisma/client";
@Injectable()
export class ExportService {
  constructor(private readonly prisma: PrismaService) {}

  async start(id: string) {
    const { count } = await this.prisma.job.updateMany({
      where: { id, status: { not: JobStatus.GENERATING } },
      data: { status: JobStatus.GENERATING },
    });
    if (count === 0) throw new ConflictException();
    await this.generate(id);
    await this.finish(id);
  }

  private async finish(id: string) {
    await this.prisma.job.update({ where: { id, status: JobStatus.GENERATING }, data: { status: JobStatus.COMPLETED } });
  }
}`),
      ],
    },
    {
      // plain JS: a class-field arrow reached through this.fail in a .catch callback
      code: `export class Worker {
  constructor(db) { this.db = db; }
  async take(id) {
    const r = await this.db.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    if (r.count === 0) return false;
    this.run(id).catch((err) => this.fail(id, err));
    return true;
  }
  fail = async (id, err) => {
    await this.db.job.update({ where: { id }, data: { status: "FAILED", error: err.message } });
  };
}`,
      languageOptions: javascript,
      errors: [
        unfenced(10, 11, lock("FAILED", 4, { value: "RUNNING" }), `export class Worker {
  constructor(db) { this.db = db; }
  async take(id) {
    const r = await this.db.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
    if (r.count === 0) return false;
    this.run(id).catch((err) => this.fail(id, err));
    return true;
  }
  fail = async (id, err) => {
    await this.db.job.update({ where: { id, status: "RUNNING" }, data: { status: "FAILED", error: err.message } });
  };
}`),
      ],
    },
    {
      // plain JS: a destructured delegate
      code: `const { job } = prisma;
async function publish(jobId) {
  const claimed = await job.updateMany({ where: { id: jobId, status: { not: "PUBLISHING" } }, data: { status: "PUBLISHING" } });
  if (!claimed.count) return;
  await pushToCdn(jobId);
  await job.update({ where: { id: jobId }, data: { status: "PUBLISHED" } });
}`,
      languageOptions: javascript,
      errors: [
        unfenced(6, 9, lock("PUBLISHED", 3, { value: "PUBLISHING" }), `const { job } = prisma;
async function publish(jobId) {
  const claimed = await job.updateMany({ where: { id: jobId, status: { not: "PUBLISHING" } }, data: { status: "PUBLISHING" } });
  if (!claimed.count) return;
  await pushToCdn(jobId);
  await job.update({ where: { id: jobId, status: "PUBLISHING" }, data: { status: "PUBLISHED" } });
}`),
      ],
    },
    {
      // const chains and an aliased delegate; a where held in a variable gets no suggestion
      code: `const CLAIMED = "GENERATING";
const IN_FLIGHT = CLAIMED;
const DONE = "COMPLETED";
async function generate(jobId: string) {
  const jobs = prisma.job;
  const claimed = await jobs.updateMany({ where: { id: jobId, status: { not: IN_FLIGHT } }, data: { status: IN_FLIGHT } });
  if (claimed.count === 0) return;
  try {
    await render(jobId);
    await jobs.update({ where: { id: jobId }, data: { status: DONE } });
  } catch {
    const where = { id: jobId };
    await jobs.update({ where, data: { status: "FAILED" } });
  }
}`,
      errors: [
        unfenced(10, 11, lock("COMPLETED", 6), `const CLAIMED = "GENERATING";
const IN_FLIGHT = CLAIMED;
const DONE = "COMPLETED";
async function generate(jobId: string) {
  const jobs = prisma.job;
  const claimed = await jobs.updateMany({ where: { id: jobId, status: { not: IN_FLIGHT } }, data: { status: IN_FLIGHT } });
  if (claimed.count === 0) return;
  try {
    await render(jobId);
    await jobs.update({ where: { id: jobId, status: IN_FLIGHT }, data: { status: DONE } });
  } catch {
    const where = { id: jobId };
    await jobs.update({ where, data: { status: "FAILED" } });
  }
}`),
        unfenced(13, 11, lock("FAILED", 6), null),
      ],
    },
    {
      // a local TS string enum, another field name, notIn
      code: `enum JobState {
  Queued = "QUEUED",
  Rendering = "RENDERING",
  Ready = "READY",
}
async function render(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, state: { notIn: [JobState.Rendering] } }, data: { state: JobState.Rendering } });
  if (res.count === 0) return;
  await prisma.job.update({ where: { id: jobId }, data: { state: JobState.Ready } });
}`,
      errors: [
        unfenced(9, 9, lock("READY", 7, { field: "state", value: "RENDERING" }), `enum JobState {
  Queued = "QUEUED",
  Rendering = "RENDERING",
  Ready = "READY",
}
async function render(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, state: { notIn: [JobState.Rendering] } }, data: { state: JobState.Rendering } });
  if (res.count === 0) return;
  await prisma.job.update({ where: { id: jobId, state: JobState.Rendering }, data: { state: JobState.Ready } });
}`),
      ],
    },
    {
      // an \`as const\` object of lower-case values, another model
      code: `const Sync = { Waiting: "waiting", Syncing: "syncing", Synced: "synced" } as const;
export async function sync(accountId: string) {
  const got = await prisma.account.updateMany({ where: { id: accountId, syncStatus: { not: Sync.Syncing } }, data: { syncStatus: Sync.Syncing } });
  if (got.count === 0) return;
  await pullChanges(accountId);
  await prisma.account.update({ where: { id: accountId }, data: { syncStatus: Sync.Synced, syncedAt: new Date() } });
}`,
      errors: [
        unfenced(
          6,
          9,
          lock("synced", 3, { model: "account", field: "syncStatus", value: "syncing" }),
          `const Sync = { Waiting: "waiting", Syncing: "syncing", Synced: "synced" } as const;
export async function sync(accountId: string) {
  const got = await prisma.account.updateMany({ where: { id: accountId, syncStatus: { not: Sync.Syncing } }, data: { syncStatus: Sync.Syncing } });
  if (got.count === 0) return;
  await pullChanges(accountId);
  await prisma.account.update({ where: { id: accountId, syncStatus: Sync.Syncing }, data: { syncStatus: Sync.Synced, syncedAt: new Date() } });
}`,
        ),
      ],
    },
    {
      // $transaction: the completion inside an interactive transaction's callback
      code: `async function runExport(exportId: string) {
  const claimed = await prisma.export.updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (claimed.count === 0) return;
  const file = await buildFile(exportId);
  await prisma.$transaction(async (tx) => {
    await tx.file.create({ data: file });
    await tx.export.update({ where: { id: exportId }, data: { status: "EXPORTED", fileId: file.id } });
  });
}`,
      errors: [
        unfenced(7, 11, lock("EXPORTED", 2, { model: "export", value: "EXPORTING" }), `async function runExport(exportId: string) {
  const claimed = await prisma.export.updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (claimed.count === 0) return;
  const file = await buildFile(exportId);
  await prisma.$transaction(async (tx) => {
    await tx.file.create({ data: file });
    await tx.export.update({ where: { id: exportId, status: "EXPORTING" }, data: { status: "EXPORTED", fileId: file.id } });
  });
}`),
      ],
    },
    {
      // $transaction: claim inside the transaction, failure in a batch transaction of the catch
      code: `async function reserve(orderId: string) {
  await prisma.$transaction(async (tx) => {
    const r = await tx.order.updateMany({ where: { id: orderId, status: { not: "CHARGING" } }, data: { status: "CHARGING" } });
    if (r.count === 0) throw new Error("taken");
  });
  try {
    await charge(orderId);
  } catch (e) {
    await prisma.$transaction([
      prisma.order.update({ where: { id: orderId }, data: { status: "PAYMENT_FAILED" } }),
      prisma.auditLog.create({ data: { orderId, event: "payment_failed" } }),
    ]);
  }
}`,
      errors: [
        unfenced(10, 7, lock("PAYMENT_FAILED", 3, { model: "order", value: "CHARGING" }), `async function reserve(orderId: string) {
  await prisma.$transaction(async (tx) => {
    const r = await tx.order.updateMany({ where: { id: orderId, status: { not: "CHARGING" } }, data: { status: "CHARGING" } });
    if (r.count === 0) throw new Error("taken");
  });
  try {
    await charge(orderId);
  } catch (e) {
    await prisma.$transaction([
      prisma.order.update({ where: { id: orderId, status: "CHARGING" }, data: { status: "PAYMENT_FAILED" } }),
      prisma.auditLog.create({ data: { orderId, event: "payment_failed" } }),
    ]);
  }
}`),
      ],
    },
    {
      // optional chaining on the call and on the client
      code: `class JobRunner {
  async start(id: string) {
    const r = await this.prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
    if (r.count === 0) return;
    await this.onDone?.(id);
  }
  async onDone(id: string) {
    await this.prisma?.job.update({ where: { id }, data: { status: "COMPLETED" } });
  }
}`,
      errors: [
        unfenced(8, 11, lock("COMPLETED", 3), `class JobRunner {
  async start(id: string) {
    const r = await this.prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
    if (r.count === 0) return;
    await this.onDone?.(id);
  }
  async onDone(id: string) {
    await this.prisma?.job.update({ where: { id, status: "GENERATING" }, data: { status: "COMPLETED" } });
  }
}`),
      ],
    },
    {
      // the filter already compares status, with other values only: no room for the fence, no suggestion
      code: `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.updateMany({ where: { id: jobId, status: { not: "CANCELLED" } }, data: { status: "COMPLETED" } });
}`,
      errors: [unfenced(5, 9, lock("COMPLETED", 2), null)],
    },
    {
      // multi-line where with a trailing comma; \`set\` in data
      code: `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await prisma.job.update({
    where: {
      id: jobId,
    },
    data: { status: { set: "FAILED" } },
  });
}`,
      errors: [
        unfenced(4, 9, lock("FAILED", 2), `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await prisma.job.update({
    where: {
      id: jobId, status: "GENERATING",
    },
    data: { status: { set: "FAILED" } },
  });
}`),
      ],
    },
    {
      // a lease claim that can take over a stale holder: exactly where a late holder must be fenced
      code: `async function acquire(jobId: string, cutoff: Date) {
  const r = await prisma.job.updateMany({
    where: { id: jobId, OR: [{ status: { not: "RUNNING" } }, { heartbeatAt: { lt: cutoff } }] },
    data: { status: "RUNNING", heartbeatAt: new Date() },
  });
  if (r.count === 0) return;
  await doWork(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "SUCCEEDED" } });
}`,
      errors: [
        unfenced(8, 9, lock("SUCCEEDED", 2, { value: "RUNNING" }), `async function acquire(jobId: string, cutoff: Date) {
  const r = await prisma.job.updateMany({
    where: { id: jobId, OR: [{ status: { not: "RUNNING" } }, { heartbeatAt: { lt: cutoff } }] },
    data: { status: "RUNNING", heartbeatAt: new Date() },
  });
  if (r.count === 0) return;
  await doWork(jobId);
  await prisma.job.update({ where: { id: jobId, status: "RUNNING" }, data: { status: "SUCCEEDED" } });
}`),
      ],
    },
    {
      // a second identity column that is no owner column (userId) does not fence
      code: `async function generate(jobId: string, userId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, userId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await prisma.job.updateMany({ where: { id: jobId, userId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(4, 9, lock("COMPLETED", 2), `async function generate(jobId: string, userId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, userId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await prisma.job.updateMany({ where: { id: jobId, userId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`),
      ],
    },
    {
      // the owner column is only an owner column when settings say so (same code as a valid case, without settings)
      code: `async function generate(jobId: string, holderId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", holderId } });
  if (claimed.count === 0) return;
  await prisma.job.updateMany({ where: { id: jobId, holderId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(4, 9, lock("COMPLETED", 2), `async function generate(jobId: string, holderId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", holderId } });
  if (claimed.count === 0) return;
  await prisma.job.updateMany({ where: { id: jobId, holderId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`),
      ],
    },
    {
      // a check-then-act claim (read, then unconditional write) still has a holder
      code: `async function generate(jobId: string) {
  const free = await prisma.job.findFirst({ where: { id: jobId, status: { not: "GENERATING" } } });
  if (!free) return;
  await prisma.job.update({ where: { id: jobId }, data: { status: "GENERATING" } });
  await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(6, 9, lock("COMPLETED", 4), `async function generate(jobId: string) {
  const free = await prisma.job.findFirst({ where: { id: jobId, status: { not: "GENERATING" } } });
  if (!free) return;
  await prisma.job.update({ where: { id: jobId }, data: { status: "GENERATING" } });
  await render(jobId);
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`),
      ],
    },
    {
      // upsert's update half, on a pluralised delegate name (jobs = job)
      code: `async function generate(jobId: string) {
  const claimed = await db.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await db.jobs.upsert({ where: { id: jobId }, update: { status: "COMPLETED" }, create: { id: jobId, status: "COMPLETED" } });
}`,
      errors: [
        unfenced(4, 9, lock("COMPLETED", 2), `async function generate(jobId: string) {
  const claimed = await db.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await db.jobs.upsert({ where: { id: jobId, status: "GENERATING" }, update: { status: "COMPLETED" }, create: { id: jobId, status: "COMPLETED" } });
}`),
      ],
    },
  ],
});
