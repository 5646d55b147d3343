import rule from "../../rules/require-fencing.js";
import { javascript, ruleTester, recoveredElsewhere } from "../rule-tester.js";
import { CHECKED_LEASE, BOUNDED_HOLD } from "./lease-lock.js";

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

/**
 * One finding for a function's unfenced writes of one claim, at the first: it names the others, and offers the
 * fence for the first (`first`) and for each other (`at`, by line).
 */
const unfencedAll = (
  line: number,
  column: number,
  data: FenceData,
  others: string,
  first: string,
  at: readonly { readonly line: number; readonly output: string }[],
) => ({
  messageId: "unfencedWrites" as const,
  line,
  column,
  data: { ...data, alsoAtLine: others },
  suggestions: [
    { messageId: "addFence" as const, data, output: first },
    ...at.map((a) => ({ messageId: "addFenceAt" as const, data: { ...data, line: String(a.line) }, output: a.output })),
  ],
});

/** A sweeper in the module that frees GENERATING rows once they stop moving: the claim can change hands. */
const SWEEP = `export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "PENDING" } });
}
`;

ruleTester.run("require-fencing", rule, {
  valid: [
    // seen on a queue worker: the holder aborts its call after 45 s and stuck rows are requeued after two minutes, so
    // no later holder can exist while it still writes
    BOUNDED_HOLD,
    {
      // written right after the claim, before anything is awaited: the holder cannot have outlived its claim, so
      // there is no newer holder to overwrite
      name: "a write of the claimed row before any await since the claim",
      code: `${SWEEP}async function generate(jobId: string, kind: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  const renderer = renderers.get(kind);
  if (!renderer) {
    await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED" } });
    return;
  }
  await prisma.job.updateMany({ where: { id: jobId, status: "GENERATING" }, data: { status: (await renderer(jobId)) ? "COMPLETED" : "FAILED" } });
}`,
    },
    // nothing can take the claim from a live holder (no recovery, no take-over, no directive): no newer holder to
    // overwrite. Q1 is this claim's finding (require-stale-recovery), Q3 comes once a recovery exists.
    `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
}`,
    // a repository module whose completion is not exported and not reached from the claim: nobody holds the row
    // when it runs (an internal helper of some other path)
    `export async function claimNext(id: string) {
  return prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "QUEUED" } });
}
async function archive(id: string) {
  await prisma.job.update({ where: { id }, data: { status: "ARCHIVED" } });
}`,
    // the same API, its completion fenced by the claimed value
    `export async function claimNext(id: string) {
  return prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}
export async function sweep(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "GENERATING", updatedAt: { lt: cutoff } }, data: { status: "QUEUED" } });
}
export async function complete(id: string) {
  await prisma.job.updateMany({ where: { id, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`,
    // a choice that may keep the claimed value is no completion (it may be a progress write)
    `${SWEEP}async function generate(jobId: string, partial: boolean) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: partial ? "GENERATING" : "COMPLETED" } });
}`,
    // a boot-time reset with no age test frees rows only of holders that died with the last process: the claim does
    // not pass to a new holder while this one works
    `export async function resetOnBoot() {
  await prisma.job.updateMany({ where: { status: "GENERATING" }, data: { status: "PENDING" } });
}
async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
}`,
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
      name: "a lease checked in JavaScript: the holder's write by id alone is told apart from a new holder's only by lockedBy",
      code: CHECKED_LEASE,
      errors: [
        {
          messageId: "leaseWrite",
          line: 7,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "importedPost",
            field: "lockedAt",
            claimLine: "5",
            tokenField: "lockedBy",
            effect: "stores status on the claimed importedPost row",
            filter: "id",
          },
          suggestions: [
            {
              messageId: "addToken",
              data: { tokenField: "lockedBy", tokenText: "me" },
              output: CHECKED_LEASE.replace(
                "{ where: { id }, data: { status",
                "{ where: { id, lockedBy: me }, data: { status",
              ),
            },
          ],
        },
      ],
    },
    {
      // a loop's later turn runs after the await of the earlier one: the write is not before every wait
      name: "a write in a loop after the claim, whose body awaits",
      code: `${SWEEP}async function generate(jobId: string, parts: string[]) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  for (const part of parts) {
    if (!part) await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED" } });
    await renderPart(jobId, part);
  }
}`,
      errors: [
        unfenced(
          8,
          22,
          lock("FAILED", 5),
          `${SWEEP}async function generate(jobId: string, parts: string[]) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  for (const part of parts) {
    if (!part) await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "FAILED" } });
    await renderPart(jobId, part);
  }
}`,
        ),
      ],
    },
    {
      // a sweep in the module frees rows that stopped moving: a paused holder's completion lands on the next claim
      code: `${SWEEP}async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(
          8,
          9,
          lock("COMPLETED", 5),
          `${SWEEP}async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`,
        ),
      ],
    },
    {
      // the status chosen by a ternary of two literals: a completion either way, by id alone
      code: `${SWEEP}async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  const ok = await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: ok ? "COMPLETED" : "FAILED" } });
}`,
      errors: [
        unfenced(
          8,
          9,
          lock("another state", 5),
          `${SWEEP}async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  const ok = await render(jobId);
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: ok ? "COMPLETED" : "FAILED" } });
}`,
        ),
      ],
    },
    {
      // a queue repository module (CommonJS): the worker in another file calls claimBatch(), then settle(); the
      // exported settle is the holder's write although nothing in this module calls it
      code: `async function claimBatch(workerId) {
  return Outbox.findOneAndUpdate({ status: { $in: ["pending", "retry"] } }, { $set: { status: "processing", lockedBy: workerId, heartbeatAt: new Date() } }, { new: true });
}
async function reap(cutoff) {
  await Outbox.updateMany({ status: "processing", heartbeatAt: { $lte: cutoff } }, { $set: { status: "retry", lockedBy: null } });
}
async function settle(itemId) {
  await Outbox.updateOne({ _id: itemId }, { $set: { status: "processed", lockedBy: null } });
}
module.exports = { claimBatch, reap, settle };`,
      languageOptions: javascript,
      errors: [
        unfenced(
          8,
          9,
          lock("processed", 2, { model: "Outbox", value: "processing" }),
          `async function claimBatch(workerId) {
  return Outbox.findOneAndUpdate({ status: { $in: ["pending", "retry"] } }, { $set: { status: "processing", lockedBy: workerId, heartbeatAt: new Date() } }, { new: true });
}
async function reap(cutoff) {
  await Outbox.updateMany({ status: "processing", heartbeatAt: { $lte: cutoff } }, { $set: { status: "retry", lockedBy: null } });
}
async function settle(itemId) {
  await Outbox.updateOne({ _id: itemId, status: "processing" }, { $set: { status: "processed", lockedBy: null } });
}
module.exports = { claimBatch, reap, settle };`,
        ),
      ],
    },
    recoveredElsewhere({
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
        unfenced(
          8,
          9,
          lock("COMPLETED", 2),
          `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({
    where: { id: jobId, status: { not: "GENERATING" } },
    data: { status: "GENERATING" },
  });
  if (claimed.count === 0) return;
  const pdf = await render(jobId);
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED", pdf } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // try/catch: completion and failure are both unfenced, one finding naming both
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
        unfencedAll(
          6,
          11,
          lock("COMPLETED", 2),
          "and so does the write at line 8",
          `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (count === 0) return;
  try {
    await generate(jobId);
    await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
  } catch (error) {
    await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED", error: String(error) } });
  }
}`,
          [
            {
              line: 8,
              output: `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (count === 0) return;
  try {
    await generate(jobId);
    await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
  } catch (error) {
    await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "FAILED", error: String(error) } });
  }
}`,
            },
          ],
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          7,
          11,
          lock("IDLE", 2, { value: "RUNNING" }),
          `async function run(jobId: string) {
  const { count } = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  if (count === 0) return;
  try {
    await work(jobId);
  } finally {
    await prisma.job.update({ where: { id: jobId, status: "RUNNING" }, data: { status: "IDLE" } });
  }
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // .then chain: the completion runs in an anonymous callback of the claiming function
      code: `function start(jobId: string) {
  return prisma.job
    .updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } })
    .then(() => render(jobId))
    .then(() => prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } }));
}`,
      errors: [
        unfenced(
          5,
          17,
          lock("COMPLETED", 2),
          `function start(jobId: string) {
  return prisma.job
    .updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } })
    .then(() => render(jobId))
    .then(() => prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } }));
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          7,
          13,
          lock("DONE", 3, { value: "PROCESSING" }),
          `async function processBatch(ids: string[]) {
  for (const id of ids) {
    const claimed = await prisma.job.updateMany({ where: { id, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
    if (claimed.count === 0) continue;
    setImmediate(async () => {
      await convert(id);
      await prisma.job.update({ where: { id, status: "PROCESSING" }, data: { status: "DONE" } });
    });
  }
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          9,
          9,
          lock("COMPLETED", 2),
          `async function claimAndRun(jobId: string, workerId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", lockedBy: workerId } });
  if (res.count === 0) return;
  await runGeneration(jobId);
  await markCompleted(jobId);
}

async function markCompleted(jobId: string) {
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED", finishedAt: new Date() } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          7,
          9,
          lock("FAILED", 2, { value: "EXPORTING" }),
          `async function start(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (res.count === 0) return;
  await withRetries(() => exportJob(jobId), onFailure);
}
const onFailure = async (jobId: string) => {
  await prisma.job.update({ where: { id: jobId, status: "EXPORTING" }, data: { status: "FAILED" } });
};`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          17,
          11,
          lock("COMPLETED", 7),
          `import { JobStatus } from "@prisma/client";
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
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          10,
          11,
          lock("FAILED", 4, { value: "RUNNING" }),
          `export class Worker {
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
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          6,
          9,
          lock("PUBLISHED", 3, { value: "PUBLISHING" }),
          `const { job } = prisma;
async function publish(jobId) {
  const claimed = await job.updateMany({ where: { id: jobId, status: { not: "PUBLISHING" } }, data: { status: "PUBLISHING" } });
  if (!claimed.count) return;
  await pushToCdn(jobId);
  await job.update({ where: { id: jobId, status: "PUBLISHING" }, data: { status: "PUBLISHED" } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // const chains and an aliased delegate; a where held in a variable gets no suggestion (one finding names both)
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
        unfencedAll(
          10,
          11,
          lock("COMPLETED", 6),
          "and so does the write at line 13",
          `const CLAIMED = "GENERATING";
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
}`,
          [],
        ),
      ],
    }),
    recoveredElsewhere({
      // a local TS string enum, another field name, notIn
      code: `enum JobState {
  Queued = "QUEUED",
  Rendering = "RENDERING",
  Ready = "READY",
}
async function render(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, state: { notIn: [JobState.Rendering] } }, data: { state: JobState.Rendering } });
  if (res.count === 0) return;
  await encode(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { state: JobState.Ready } });
}`,
      errors: [
        unfenced(
          10,
          9,
          lock("READY", 7, { field: "state", value: "RENDERING" }),
          `enum JobState {
  Queued = "QUEUED",
  Rendering = "RENDERING",
  Ready = "READY",
}
async function render(jobId: string) {
  const res = await prisma.job.updateMany({ where: { id: jobId, state: { notIn: [JobState.Rendering] } }, data: { state: JobState.Rendering } });
  if (res.count === 0) return;
  await encode(jobId);
  await prisma.job.update({ where: { id: jobId, state: JobState.Rendering }, data: { state: JobState.Ready } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
    }),
    recoveredElsewhere({
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
        unfenced(
          7,
          11,
          lock("EXPORTED", 2, { model: "export", value: "EXPORTING" }),
          `async function runExport(exportId: string) {
  const claimed = await prisma.export.updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (claimed.count === 0) return;
  const file = await buildFile(exportId);
  await prisma.$transaction(async (tx) => {
    await tx.file.create({ data: file });
    await tx.export.update({ where: { id: exportId, status: "EXPORTING" }, data: { status: "EXPORTED", fileId: file.id } });
  });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          10,
          7,
          lock("PAYMENT_FAILED", 3, { model: "order", value: "CHARGING" }),
          `async function reserve(orderId: string) {
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
}`,
        ),
      ],
    }),
    recoveredElsewhere({
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
        unfenced(
          8,
          11,
          lock("COMPLETED", 3),
          `class JobRunner {
  async start(id: string) {
    const r = await this.prisma.job.updateMany({ where: { id, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
    if (r.count === 0) return;
    await this.onDone?.(id);
  }
  async onDone(id: string) {
    await this.prisma?.job.update({ where: { id, status: "GENERATING" }, data: { status: "COMPLETED" } });
  }
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // the filter already compares status, with other values only: no room for the fence, no suggestion
      code: `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.updateMany({ where: { id: jobId, status: { not: "CANCELLED" } }, data: { status: "COMPLETED" } });
}`,
      errors: [unfenced(5, 9, lock("COMPLETED", 2), null)],
    }),
    recoveredElsewhere({
      // multi-line where with a trailing comma; \`set\` in data
      code: `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({
    where: {
      id: jobId,
    },
    data: { status: { set: "FAILED" } },
  });
}`,
      errors: [
        unfenced(
          5,
          9,
          lock("FAILED", 2),
          `async function generate(jobId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.update({
    where: {
      id: jobId, status: "GENERATING",
    },
    data: { status: { set: "FAILED" } },
  });
}`,
        ),
      ],
    }),
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
        unfenced(
          8,
          9,
          lock("SUCCEEDED", 2, { value: "RUNNING" }),
          `async function acquire(jobId: string, cutoff: Date) {
  const r = await prisma.job.updateMany({
    where: { id: jobId, OR: [{ status: { not: "RUNNING" } }, { heartbeatAt: { lt: cutoff } }] },
    data: { status: "RUNNING", heartbeatAt: new Date() },
  });
  if (r.count === 0) return;
  await doWork(jobId);
  await prisma.job.update({ where: { id: jobId, status: "RUNNING" }, data: { status: "SUCCEEDED" } });
}`,
        ),
      ],
    },
    recoveredElsewhere({
      // a second identity column that is no owner column (userId) does not fence
      code: `async function generate(jobId: string, userId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, userId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.updateMany({ where: { id: jobId, userId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(
          5,
          9,
          lock("COMPLETED", 2),
          `async function generate(jobId: string, userId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, userId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.updateMany({ where: { id: jobId, userId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // the owner column is only an owner column when settings say so (same code as a valid case, without settings)
      code: `async function generate(jobId: string, holderId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", holderId } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.updateMany({ where: { id: jobId, holderId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(
          5,
          9,
          lock("COMPLETED", 2),
          `async function generate(jobId: string, holderId: string) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING", holderId } });
  if (claimed.count === 0) return;
  await render(jobId);
  await prisma.job.updateMany({ where: { id: jobId, holderId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // a check-then-act claim (read, then unconditional write) still has a holder
      code: `async function generate(jobId: string) {
  const free = await prisma.job.findFirst({ where: { id: jobId, status: { not: "GENERATING" } } });
  if (!free) return;
  await prisma.job.update({ where: { id: jobId }, data: { status: "GENERATING" } });
  await render(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } });
}`,
      errors: [
        unfenced(
          6,
          9,
          lock("COMPLETED", 4),
          `async function generate(jobId: string) {
  const free = await prisma.job.findFirst({ where: { id: jobId, status: { not: "GENERATING" } } });
  if (!free) return;
  await prisma.job.update({ where: { id: jobId }, data: { status: "GENERATING" } });
  await render(jobId);
  await prisma.job.update({ where: { id: jobId, status: "GENERATING" }, data: { status: "COMPLETED" } });
}`,
        ),
      ],
    }),
    recoveredElsewhere({
      // upsert's update half, on a pluralised delegate name (jobs = job)
      code: `async function generate(jobId: string) {
  const claimed = await db.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await db.jobs.upsert({ where: { id: jobId }, update: { status: "COMPLETED" }, create: { id: jobId, status: "COMPLETED" } });
}`,
      errors: [
        unfenced(
          5,
          9,
          lock("COMPLETED", 2),
          `async function generate(jobId: string) {
  const claimed = await db.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) return;
  await render(jobId);
  await db.jobs.upsert({ where: { id: jobId, status: "GENERATING" }, update: { status: "COMPLETED" }, create: { id: jobId, status: "COMPLETED" } });
}`,
        ),
      ],
    }),
  ],
});

/** Applies one textual edit, checking it applies exactly once: a suggestion's expected output. */
const edit = (source: string, from: string, to: string): string => {
  if (source.split(from).length !== 2) throw new Error(`expected exactly one ${from}`);
  return source.replace(from, to);
};

/** The invalid cases' code, by what each shows (a suggestion's output is the code with one edit). */
const code = {
  leaseStatusOnly: `const workerId = crypto.randomUUID();
async function render(jobId: string, staleBefore: Date) {
  const r = await prisma.job.updateMany({
    where: { id: jobId, OR: [{ status: { not: "RENDERING" } }, { heartbeatAt: { lt: staleBefore } }] },
    data: { status: "RENDERING", lockedBy: workerId, heartbeatAt: new Date() },
  });
  if (r.count === 0) return;
  await encode(jobId);
  await prisma.job.updateMany({ where: { id: jobId, status: "RENDERING" }, data: { status: "DONE" } });
}`,
  leaseByIdOnly: `async function render(jobId: string, fencingToken: number, staleBefore: Date) {
  const r = await prisma.job.updateMany({
    where: { id: jobId, OR: [{ status: { not: "RENDERING" } }, { status: "RENDERING", leaseExpiresAt: { lt: staleBefore } }] },
    data: { status: "RENDERING", fencingToken },
  });
  if (r.count === 0) return;
  const url = await encode(jobId);
  await prisma.job.update({ where: { id: jobId }, data: { outputUrl: url } });
  await prisma.job.update({ where: { id: jobId }, data: { status: "DONE" } });
}`,
  separateTakeover: `export async function claim(jobId: string, leaseToken: string) {
  const r = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING", leaseToken } });
  if (r.count === 0) return;
  await run(jobId);
  await finish(jobId);
}
async function finish(jobId: string) {
  await prisma.job.updateMany({ where: { id: jobId, status: "RUNNING" }, data: { status: "SUCCEEDED" } });
}
export async function adopt(cutoff: Date, leaseToken: string) {
  await prisma.job.updateMany({ where: { status: "RUNNING", heartbeatAt: { lt: cutoff } }, data: { leaseToken, heartbeatAt: new Date() } });
}`,
  resultById: `async function transcode(videoId: string, workerId: string) {
  const r = await prisma.video.updateMany({
    where: { id: videoId, status: { not: "TRANSCODING" } },
    data: { status: "TRANSCODING", lockedBy: workerId },
  });
  if (r.count === 0) return;
  const hls = await ffmpeg(videoId);
  await prisma.video.update({ where: { id: videoId }, data: { playlistUrl: hls.url, durationSec: hls.duration } });
  await prisma.video.updateMany({ where: { id: videoId, lockedBy: workerId }, data: { status: "READY" } });
}`,
  inlineToken: `import { randomUUID } from "node:crypto";
async function transcode(videoId: string) {
  const r = await prisma.video.updateMany({
    where: { id: videoId, status: { not: "TRANSCODING" } },
    data: { status: "TRANSCODING", lockToken: randomUUID() },
  });
  if (r.count === 0) return;
  const hls = await ffmpeg(videoId);
  await prisma.video.update({ where: { id: videoId }, data: { playlistUrl: hls.url } });
}`,
  versionToken: `async function rebuild(indexId: string, staleBefore: Date) {
  const r = await prisma.searchIndex.updateMany({
    where: { id: indexId, OR: [{ state: { not: "BUILDING" } }, { heartbeatAt: { lt: staleBefore } }] },
    data: { state: "BUILDING", version: { increment: 1 }, heartbeatAt: new Date() },
  });
  if (r.count === 0) return;
  await build(indexId);
  await prisma.searchIndex.updateMany({ where: { id: indexId, state: "BUILDING" }, data: { state: "LIVE" } });
}`,
  s3FixedKey: `import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
const s3 = new S3Client({});
export async function exportCsv(exportId: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (r.count === 0) return;
  const csv = await buildCsv(exportId);
  await s3.send(new PutObjectCommand({ Bucket: "exports", Key: "exports/latest.csv", Body: csv }));
  await prisma.export.updateMany({ where: { id: exportId, status: "EXPORTING" }, data: { status: "EXPORTED" } });
}`,
  uploadPerFormat: `import { randomUUID } from "node:crypto";
import { Upload } from "@aws-sdk/lib-storage";
import Redis from "ioredis";
const redis = new Redis();
export async function renderVideo(projectId: string, format: string) {
  const token = randomUUID();
  const ok = await redis.set(\`lock:render:\${projectId}\`, token, "PX", 60_000, "NX");
  if (ok !== "OK") return;
  const stream = await renderStream(projectId, format);
  const upload = new Upload({ client: s3, params: { Bucket: "media", Key: \`renders/\${format}/latest.mp4\`, Body: stream } });
  await upload.done();
}`,
  v2SharedKey: `const Redlock = require("redlock");
const AWS = require("aws-sdk");
const s3 = new AWS.S3();
const redlock = new Redlock([redis]);
async function snapshot(tenantId) {
  const lock = await redlock.acquire([\`locks:snapshot:\${tenantId}\`], 30000);
  try {
    const body = await dump(tenantId);
    await s3.putObject({ Bucket: "snapshots", Key: "snapshots/latest.json", Body: body }).promise();
  } finally {
    await lock.release();
  }
}`,
  gcsInUsing: `import { Storage } from "@google-cloud/storage";
const bucket = new Storage().bucket("reports");
export async function publishReport(reportId: string) {
  await redlock.using([\`locks:report:\${reportId}\`], 30_000, async (signal) => {
    const pdf = await renderPdf(reportId, signal);
    await bucket.file("reports/current.pdf").save(pdf, { contentType: "application/pdf" });
  });
}`,
  gcsStreamInHelper: `import { pipeline } from "node:stream/promises";
export async function archive(batchId: string) {
  const r = await prisma.batch.updateMany({ where: { id: batchId, phase: { not: "ARCHIVING" } }, data: { phase: "ARCHIVING" } });
  if (r.count === 0) return;
  await writeArchive(batchId);
}
async function writeArchive(batchId: string) {
  const rows = await loadRows(batchId);
  await pipeline(rows, storage.bucket("archive").file("archive/rolling.ndjson").createWriteStream());
}`,
  namedWriteFile: `import { writeFile } from "node:fs/promises";
import path from "node:path";
const OUTPUT_DIR = "/srv/reports";
export async function nightly(reportId: string) {
  const r = await prisma.report.updateMany({ where: { id: reportId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (r.count === 0) return;
  const csv = await generate(reportId);
  await writeFile(path.join(OUTPUT_DIR, "nightly.csv"), csv);
}`,
  azureUnderRedis: `import { BlobServiceClient } from "@azure/storage-blob";
const container = BlobServiceClient.fromConnectionString(process.env.AZURE!).getContainerClient("thumbs");
export async function thumbnail(assetId: string) {
  const token = crypto.randomUUID();
  if (!(await redis.set(\`lock:thumb:\${assetId}\`, token, { NX: true, PX: 20_000 }))) return;
  const png = await resize(assetId);
  await container.getBlockBlobClient("thumbs/latest.png").uploadData(png);
}`,
  kvCompletion: `import { randomUUID } from "node:crypto";
export async function exportOnce(exportId: string) {
  const key = \`lock:export:\${exportId}\`;
  const token = randomUUID();
  if (!(await redis.set(key, token, "PX", 60_000, "NX"))) return;
  const url = await render(exportId);
  await prisma.export.update({ where: { id: exportId }, data: { status: "COMPLETE", url } });
}`,
  usingCompletion: `export async function publish(reportId: string) {
  await redlock.using([\`locks:report:\${reportId}\`], 30_000, async () => {
    await compile(reportId);
    await prisma.report.update({ where: { id: reportId }, data: { state: "PUBLISHED" } });
  });
}`,
  anotherRowsKey: `import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function renderExport(exportId: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  if (r.count === 0) return;
  const project = await prisma.project.findUniqueOrThrow({ where: { exportId } });
  const mp4 = await render(exportId);
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: \`projects/\${project.id}/final.mp4\`, Body: mp4 }));
}`,
  lockHelperCallback: `import { randomUUID } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
async function withLock(name: string, work: () => Promise<void>) {
  const token = randomUUID();
  if (!(await redis.set(\`lock:\${name}\`, token, "EX", 30, "NX"))) return;
  try {
    await work();
  } finally {
    await redis.eval(RELEASE, 1, \`lock:\${name}\`, token);
  }
}
export async function rebuildSitemap() {
  await withLock("sitemap", async () => {
    const xml = await buildSitemap();
    await s3.send(new PutObjectCommand({ Bucket: "site", Key: "sitemap.xml", Body: xml }));
  });
}`,
  claimHelperCallback: `async function withClaim(jobId: string, work: () => Promise<void>) {
  const r = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  if (r.count === 0) return;
  await work();
}
export async function runJob(jobId: string) {
  await withClaim(jobId, async () => {
    await execute(jobId);
    await prisma.job.update({ where: { id: jobId }, data: { status: "DONE" } });
  });
}`,
  sqlTakeover: `export async function runJob(pool: Pool, jobId: string, workerId: string) {
  const claimed = await pool.query(
    "UPDATE jobs SET status = 'running', locked_by = $2, heartbeat_at = now() WHERE id = $1 AND (status <> 'running' OR heartbeat_at < now() - interval '2 minutes')",
    [jobId, workerId],
  );
  if (claimed.rowCount === 0) return;
  const result = await execute(jobId);
  await pool.query("UPDATE jobs SET result = $2 WHERE id = $1", [jobId, result]);
  await pool.query("UPDATE jobs SET status = 'done' WHERE id = $1 AND status = 'running'", [jobId]);
}`,
  mongoTakeover: `async function runJob(jobs, jobId, workerId, staleBefore) {
  const job = await jobs.findOneAndUpdate(
    { _id: jobId, $or: [{ status: { $ne: "processing" } }, { heartbeatAt: { $lt: staleBefore } }] },
    { $set: { status: "processing", lockedBy: workerId, heartbeatAt: new Date() } },
  );
  if (!job) return;
  const output = await execute(job);
  await jobs.updateOne({ _id: jobId, status: "processing" }, { $set: { status: "done", output } });
}`,
  semaphoreFile: `import fs from "node:fs";
import { Mutex } from "redis-semaphore";
export async function compact(shardId: string) {
  const mutex = new Mutex(redis, \`lock:compact:\${shardId}\`);
  await mutex.acquire();
  try {
    const data = await merge(shardId);
    fs.writeFileSync("/data/compacted/current.bin", data);
  } finally {
    await mutex.release();
  }
}`,
};

/** A claim that takes over stale rows, and a give-up whose SQL CASE picks the status it leaves the row in. */
const CASE_GIVE_UP = (otherwise: string) => `export async function claimNext(pool, worker) {
  const { rows } = await pool.query(
    "UPDATE jobs SET status = 'running', locked_by = $1, locked_at = now() WHERE id = (SELECT id FROM jobs WHERE status = 'queued' OR (status = 'running' AND locked_at < now() - interval '10 minutes') ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *",
    [worker],
  );
  return rows[0];
}

export async function giveUp(pool, id, error) {
  await pool.query(
    "UPDATE jobs SET status = CASE WHEN attempts >= 5 THEN 'failed' ELSE '${otherwise}' END, last_error = $2, locked_by = NULL WHERE id = $1",
    [id, error],
  );
}`;

ruleTester.run("require-fencing: tokens, take-overs and object-storage writes", rule, {
  valid: [
    // a CASE that may keep the claimed value is not a move off it
    {
      code: CASE_GIVE_UP("running"),
      languageOptions: javascript,
    },
    // a lease claim that takes over stale holders: results and completion check the owner it stamped
    `const workerId = crypto.randomUUID();
async function render(jobId: string, staleBefore: Date) {
  const r = await prisma.job.updateMany({
    where: { id: jobId, OR: [{ status: { not: "RENDERING" } }, { heartbeatAt: { lt: staleBefore } }] },
    data: { status: "RENDERING", lockedBy: workerId, heartbeatAt: new Date() },
  });
  if (r.count === 0) return;
  const url = await encode(jobId);
  await prisma.job.updateMany({ where: { id: jobId, lockedBy: workerId }, data: { outputUrl: url } });
  await prisma.job.updateMany({ where: { id: jobId, status: "RENDERING", lockedBy: workerId }, data: { status: "DONE" } });
}`,
    // a token claim with no take-over: the claimed status fences results and completion (a recovery moves it off)
    `async function transcode(videoId: string, workerId: string) {
  const r = await prisma.video.updateMany({ where: { id: videoId, status: { not: "TRANSCODING" } }, data: { status: "TRANSCODING", lockedBy: workerId } });
  if (r.count === 0) return;
  const hls = await ffmpeg(videoId);
  await prisma.video.update({ where: { id: videoId, status: "TRANSCODING" }, data: { playlistUrl: hls.url } });
  await prisma.video.update({ where: { id: videoId, status: "TRANSCODING" }, data: { status: "READY" } });
}`,
    // progress and counters on the claimed row are bookkeeping, not results
    `async function transcode(videoId: string, workerId: string) {
  const r = await prisma.video.updateMany({ where: { id: videoId, status: { not: "TRANSCODING" } }, data: { status: "TRANSCODING", lockedBy: workerId } });
  if (r.count === 0) return;
  for (const segment of segments(videoId)) {
    await encodeSegment(segment);
    await prisma.video.update({ where: { id: videoId }, data: { progress: segment.index, segmentsDone: { increment: 1 }, updatedAt: new Date() } });
  }
}`,
    // no token to carry and no take-over: a result written by id stays quiet, as before (the completion is fenced)
    `async function transcode(videoId: string) {
  const r = await prisma.video.updateMany({ where: { id: videoId, status: { not: "TRANSCODING" } }, data: { status: "TRANSCODING" } });
  if (r.count === 0) return;
  const hls = await ffmpeg(videoId);
  await prisma.video.update({ where: { id: videoId }, data: { playlistUrl: hls.url } });
  await prisma.video.update({ where: { id: videoId, status: "TRANSCODING" }, data: { status: "READY" } });
}`,
    // the artefact goes to a job-addressed key (held in a const)
    `import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
const s3 = new S3Client({});
export async function renderExport(exportId: string, format: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  if (r.count === 0) return;
  const mp4 = await render(exportId, format);
  const key = \`exports/\${exportId}/render.\${format}\`;
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: key, Body: mp4 }));
  await prisma.export.updateMany({ where: { id: exportId, status: "RENDERING" }, data: { status: "DONE", key } });
}`,
    // conditional (IfNoneMatch) or carrying the claim's token in metadata
    `import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function publishLatest(exportId: string, lockToken: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING", lockToken } });
  if (r.count === 0) return;
  const mp4 = await render(exportId);
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: "site/latest.mp4", Body: mp4, IfNoneMatch: "*" }));
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: "site/teaser.mp4", Body: mp4, Metadata: { "lock-token": lockToken } }));
}`,
    // Cloud Storage with a generation precondition, or with Redlock's lock.value in the metadata
    `import { Storage } from "@google-cloud/storage";
const bucket = new Storage().bucket("reports");
export async function publishReport(reportId: string, generation: number) {
  const lock = await redlock.acquire([\`locks:report:\${reportId}\`], 30_000);
  try {
    const pdf = await renderPdf(reportId);
    await bucket.file("reports/current.pdf").save(pdf, { preconditionOpts: { ifGenerationMatch: generation } });
    await bucket.file("reports/previous.pdf").save(pdf, { metadata: { metadata: { lockValue: lock.value } } });
  } finally {
    await lock.release();
  }
}`,
    // scratch files in the temporary directory, and an exclusive-create flag
    `import { mkdtemp, writeFile } from "node:fs/promises";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
export async function renderThumb(assetId: string) {
  const r = await prisma.asset.updateMany({ where: { id: assetId, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
  if (r.count === 0) return;
  const dir = await mkdtemp(path.join(os.tmpdir(), "thumb-"));
  await writeFile(path.join(dir, "in.png"), await download(assetId));
  fs.writeFileSync(path.join(os.tmpdir(), "last.png"), "");
  await fs.promises.writeFile("/var/thumbs/latest.png", await resize(assetId), { flag: "wx" });
}`,
    // object and file writes outside any lock are not this rule's business
    `import { PutObjectCommand } from "@aws-sdk/client-s3";
import { writeFileSync } from "node:fs";
export async function uploadAvatar(userId: string, png: Buffer) {
  await s3.send(new PutObjectCommand({ Bucket: "avatars", Key: "avatars/latest.png", Body: png }));
  writeFileSync("last-upload.txt", userId);
}`,
    // a key new on every run (a random id, a timestamp) overwrites nothing; the fenced record decides which counts
    `import { randomUUID } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function renderExport(exportId: string, owner: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING", leaseOwner: owner } });
  if (r.count === 0) return;
  const key = \`renders/\${randomUUID()}.mp4\`;
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: key, Body: await render(exportId) }));
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: \`logs/\${Date.now()}.txt\`, Body: "done" }));
  await prisma.export.updateMany({ where: { id: exportId, leaseOwner: owner }, data: { status: "DONE", key } });
}`,
    // a location decided by the caller (a key parameter, opts.path) is unknown: no finding
    `import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function exportCsv(exportId: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  if (r.count === 0) return;
  await store(objectKeyFor(exportId), await buildCsv(exportId));
}
async function store(key: string, body: string) {
  await s3.send(new PutObjectCommand({ Bucket: "exports", Key: key, Body: body }));
}
async function storeUnder(opts: { path: string }, body: string) {
  await s3.send(new PutObjectCommand({ Bucket: "exports", Key: opts.path, Body: body }));
}`,
    // an idempotency key written with NX is no lock
    `import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function handleWebhook(eventId: string, payload: string) {
  const fresh = await redis.set(\`idempotency:webhook:\${eventId}\`, "1", "EX", 86_400, "NX");
  if (!fresh) return;
  await s3.send(new PutObjectCommand({ Bucket: "audit", Key: "webhooks/last.json", Body: payload }));
}`,
    // the completion is conditional; other rows and non-state fields are not the lock's row state
    `import { randomUUID } from "node:crypto";
export async function exportOnce(exportId: string) {
  const token = randomUUID();
  if (!(await redis.set(\`lock:export:\${exportId}\`, token, "PX", 60_000, "NX"))) return;
  const url = await render(exportId);
  await prisma.export.updateMany({ where: { id: exportId, status: { not: "COMPLETE" } }, data: { status: "COMPLETE", url } });
  await prisma.user.update({ where: { id: await ownerOf(exportId) }, data: { status: "NOTIFIED" } });
  await prisma.export.update({ where: { id: exportId }, data: { downloads: 0 } });
}`,
    // upload lookalikes: Cloudinary, a wrapper taking a bucket alias, a repository save, multer
    `import multer from "multer";
import { v2 as cloudinary } from "cloudinary";
const upload = multer({ dest: "uploads/" });
export async function importPhotos(albumId: string, files: string[]) {
  const r = await prisma.album.updateMany({ where: { id: albumId, status: { not: "IMPORTING" } }, data: { status: "IMPORTING" } });
  if (r.count === 0) return;
  for (const f of files) await cloudinary.uploader.upload(f, { folder: "albums" });
  await s3Service.upload("log", "logs/import.txt", files.join("\\n"));
  await this.fileRepository.save({ albumId, count: files.length });
  router.post("/x", upload.single("photo"));
}`,
    // a content-addressed key (the content's hash)
    `import { createHash } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function storeRender(exportId: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  if (r.count === 0) return;
  const mp4 = await render(exportId);
  const sha256 = createHash("sha256").update(mp4).digest("hex");
  await s3.send(new PutObjectCommand({ Bucket: "cas", Key: \`blobs/\${sha256}\`, Body: mp4 }));
}`,
    // a write before the claim is made without the lock
    `import { PutObjectCommand } from "@aws-sdk/client-s3";
export async function renderExport(exportId: string) {
  await s3.send(new PutObjectCommand({ Bucket: "media", Key: "exports/started.json", Body: "{}" }));
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  if (r.count === 0) return;
}`,
    // an options spread may carry the condition: no finding depends on it
    `import { Upload } from "@aws-sdk/lib-storage";
export async function archive(batchId: string, extra: Record<string, string>) {
  const r = await prisma.batch.updateMany({ where: { id: batchId, status: { not: "ARCHIVING" } }, data: { status: "ARCHIVING" } });
  if (r.count === 0) return;
  await new Upload({ client: s3, params: { Bucket: "archive", Key: "archive/latest.tar", Body: stream(batchId), ...extra } }).done();
}`,
    // the lease-takeover worker done right: heartbeat, completion and failure all check the owner
    `import { randomUUID } from "node:crypto";
const workerId = randomUUID();
export async function claimThumbnail(thumbnailId: string, staleBefore: Date) {
  const claimed = await prisma.thumbnail.updateMany({
    where: { id: thumbnailId, OR: [{ status: { notIn: ["PROCESSING", "DONE"] } }, { status: "PROCESSING", heartbeatAt: { lt: staleBefore } }] },
    data: { status: "PROCESSING", lockedBy: workerId, heartbeatAt: new Date() },
  });
  if (claimed.count === 0) return;
  const beat = setInterval(() => prisma.thumbnail.updateMany({ where: { id: thumbnailId, lockedBy: workerId }, data: { heartbeatAt: new Date() } }), 10_000);
  try {
    const url = await make(thumbnailId);
    await prisma.thumbnail.updateMany({ where: { id: thumbnailId, lockedBy: workerId }, data: { status: "DONE", url, lockedBy: null } });
  } catch (error) {
    await prisma.thumbnail.updateMany({ where: { id: thumbnailId, lockedBy: workerId }, data: { status: "FAILED", error: String(error) } });
  } finally {
    clearInterval(beat);
  }
}`,
    // Cloud Storage through a file variable, keyed by the export; an unimported writeFile is no file write
    `export async function render(exportId: string, format: string) {
  const r = await prisma.export.updateMany({ where: { id: exportId, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  if (r.count === 0) return;
  const file = bucket.file(\`exports/\${exportId}.\${format}\`);
  await file.save(await encode(exportId, format));
  await writeFile(\`out/\${format}.mp4\`, "");
}`,
    // under a Redis lock, a state write conditioned on the lock's token; a non-state write of the same row
    `import { randomUUID } from "node:crypto";
export async function settle(invoiceId: string) {
  const token = randomUUID();
  if (!(await redis.set(\`lock:invoice:\${invoiceId}\`, token, "PX", 30_000, "NX"))) return;
  await prisma.invoice.updateMany({ where: { id: invoiceId, lockToken: token }, data: { status: "SETTLED" } });
  await prisma.invoice.update({ where: { id: invoiceId }, data: { settledAt: new Date(), amountPaid: 10 } });
}`,
    // Mongo: the claimed document's id in the key, completion checks the owner
    `export async function handler(jobId: string) {
  const job = await Job.findOneAndUpdate(
    { _id: jobId, status: { $ne: "processing" } },
    { $set: { status: "processing", lockedBy: WORKER } },
    { new: true },
  );
  if (!job) return;
  await bucket.file(\`jobs/\${job._id}/output.json\`).save(JSON.stringify(await run(job)));
  await Job.updateOne({ _id: job._id, lockedBy: WORKER }, { $set: { status: "done", output: "x" } });
}`,
  ],
  invalid: [
    {
      // SQL's CASE of fixed values: a give-up that puts the job back or fails it moves it off the claimed state either
      // way, by id alone, after a claim that takes over stale rows
      code: CASE_GIVE_UP("queued"),
      languageOptions: javascript,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 10,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "jobs",
            field: "status",
            value: "running",
            claimLine: "2",
            tokenField: "locked_by",
            effect: "moves the claimed jobs row to another state",
            result: "status",
          },
          suggestions: [],
        },
      ],
    },
    {
      // a lease claim with a take-over branch stamps lockedBy: the completion checks only the status
      code: code.leaseStatusOnly,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 9,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "job",
            field: "status",
            value: "RENDERING",
            claimLine: "3",
            tokenField: "lockedBy",
            effect: "moves the claimed job row to DONE",
            result: "status",
          },
          suggestions: [
            {
              messageId: "addToken",
              data: { tokenField: "lockedBy", tokenText: "workerId" },
              output: edit(
                code.leaseStatusOnly,
                'where: { id: jobId, status: "RENDERING" }',
                'where: { id: jobId, status: "RENDERING", lockedBy: workerId }',
              ),
            },
          ],
        },
      ],
    },
    {
      // a take-over on the lease expiry stamps fencingToken: results and completion by id alone, one finding for
      // the function, with the edit for each write
      code: code.leaseByIdOnly,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 8,
          column: 9,
          data: {
            alsoAtLine: " (and in the filter of the write at line 9 of this function, unfenced the same way)",
            model: "job",
            field: "status",
            value: "RENDERING",
            claimLine: "2",
            tokenField: "fencingToken",
            effect: "stores outputUrl on the claimed job row",
            result: "outputUrl",
          },
          suggestions: [
            {
              messageId: "addToken",
              data: { tokenField: "fencingToken", tokenText: "fencingToken" },
              output: edit(
                code.leaseByIdOnly,
                "where: { id: jobId }, data: { outputUrl: url }",
                "where: { id: jobId, fencingToken: fencingToken }, data: { outputUrl: url }",
              ),
            },
            {
              messageId: "addTokenAt",
              data: { tokenField: "fencingToken", tokenText: "fencingToken", line: "9" },
              output: edit(
                code.leaseByIdOnly,
                'where: { id: jobId }, data: { status: "DONE" }',
                'where: { id: jobId, fencingToken: fencingToken }, data: { status: "DONE" }',
              ),
            },
          ],
        },
      ],
    },
    {
      // a separate take-over re-stamps the token of stale rows still RUNNING; the token is out of scope in finish(): no suggestion
      code: code.separateTakeover,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 8,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "job",
            field: "status",
            value: "RUNNING",
            claimLine: "2",
            tokenField: "leaseToken",
            effect: "moves the claimed job row to SUCCEEDED",
            result: "status",
          },
          suggestions: [],
        },
      ],
    },
    recoveredElsewhere({
      // a result stored on a row claimed with an owner, by id alone
      code: code.resultById,
      errors: [
        {
          messageId: "unfencedResult",
          line: 8,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "video",
            field: "status",
            value: "TRANSCODING",
            claimLine: "2",
            tokenField: "lockedBy",
            effect: "stores playlistUrl on the claimed video row",
            result: "playlistUrl",
          },
          suggestions: [
            {
              messageId: "addToken",
              data: { tokenField: "lockedBy", tokenText: "workerId" },
              output: edit(
                code.resultById,
                "where: { id: videoId }, data: { playlistUrl",
                "where: { id: videoId, lockedBy: workerId }, data: { playlistUrl",
              ),
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      // the token is generated inline and not kept: the suggestion falls back to the claimed status
      code: code.inlineToken,
      errors: [
        {
          messageId: "unfencedResult",
          line: 9,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "video",
            field: "status",
            value: "TRANSCODING",
            claimLine: "3",
            tokenField: "lockToken",
            effect: "stores playlistUrl on the claimed video row",
            result: "playlistUrl",
          },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "video", field: "status", value: "TRANSCODING", claimLine: "3" },
              output: edit(
                code.inlineToken,
                "where: { id: videoId }, data: { playlistUrl",
                'where: { id: videoId, status: "TRANSCODING" }, data: { playlistUrl',
              ),
            },
          ],
        },
      ],
    }),
    {
      // a version the claim increments is the token; no expression to suggest
      code: code.versionToken,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 8,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "searchIndex",
            field: "state",
            value: "BUILDING",
            claimLine: "2",
            tokenField: "version",
            effect: "moves the claimed searchIndex row to LIVE",
            result: "state",
          },
          suggestions: [],
        },
      ],
    },
    recoveredElsewhere({
      // S3 v3: a fixed key written while holding a status claim (no token: any fencing token)
      code: code.s3FixedKey,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 7,
          column: 9,
          data: {
            operation: "S3 PutObject",
            location: '"exports/latest.csv"',
            lock: "the claim of export.status = EXPORTING",
            acquireLine: "4",
            condition: "IfNoneMatch or IfMatch",
            token: "a fencing token",
          },
          suggestions: [],
        },
      ],
    }),
    {
      // lib-storage Upload under SET NX PX with a token; the key is per format, not per job
      code: code.uploadPerFormat,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 11,
          column: 9,
          data: {
            operation: "S3 Upload",
            location: "`renders/${format}/latest.mp4`",
            lock: 'the lock "lock:render:*"',
            acquireLine: "7",
            condition: "IfNoneMatch or IfMatch",
            token: "the lock's token `token`",
          },
          suggestions: [],
        },
      ],
    },
    {
      // plain JS, aws-sdk v2 under Redlock acquire: every tenant's snapshot overwrites one key
      code: code.v2SharedKey,
      languageOptions: javascript,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 9,
          column: 11,
          data: {
            operation: "S3 putObject",
            location: '"snapshots/latest.json"',
            lock: 'the Redlock lock on "locks:snapshot:*"',
            acquireLine: "6",
            condition: "IfNoneMatch or IfMatch",
            token: "the lock's token `lock.value`",
          },
          suggestions: [],
        },
      ],
    },
    {
      // Cloud Storage inside Redlock's using(): the routine gets no token
      code: code.gcsInUsing,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 6,
          column: 11,
          data: {
            operation: "Cloud Storage save",
            location: '"reports/current.pdf"',
            lock: 'the Redlock lock on "locks:report:*"',
            acquireLine: "4",
            condition: "ifGenerationMatch",
            token: "a fencing token",
          },
          suggestions: [],
        },
      ],
    },
    recoveredElsewhere({
      // a write stream in a function the claimer calls
      code: code.gcsStreamInHelper,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 9,
          column: 24,
          data: {
            operation: "Cloud Storage createWriteStream",
            location: '"archive/rolling.ndjson"',
            lock: "the claim of batch.phase = ARCHIVING",
            acquireLine: "3",
            condition: "ifGenerationMatch",
            token: "a fencing token",
          },
          suggestions: [],
        },
      ],
    }),
    recoveredElsewhere({
      // a named writeFile import, a path built from a module constant
      code: code.namedWriteFile,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 8,
          column: 9,
          data: {
            operation: "writeFile call",
            location: 'path.join(OUTPUT_DIR, "nightly.csv")',
            lock: "the claim of report.status = GENERATING",
            acquireLine: "5",
            condition: "an exclusive flag, wx",
            token: "a fencing token",
          },
          suggestions: [],
        },
      ],
    }),
    {
      // Azure Blob under a node-redis lock
      code: code.azureUnderRedis,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 7,
          column: 9,
          data: {
            operation: "Azure Blob uploadData",
            location: '"thumbs/latest.png"',
            lock: 'the lock "lock:thumb:*"',
            acquireLine: "5",
            condition: "conditions: { ifNoneMatch } or { ifMatch }",
            token: "the lock's token `token`",
          },
          suggestions: [],
        },
      ],
    },
    {
      // under a Redis lock keyed by the export, the completion is recorded unconditionally
      code: code.kvCompletion,
      errors: [
        {
          messageId: "unconditionalRowWrite",
          line: 7,
          column: 9,
          data: {
            lock: 'the lock "lock:export:*"',
            acquireLine: "5",
            model: "export",
            field: "status",
            target: "COMPLETE",
            token: "the lock's token `token`",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: { field: "status", target: "COMPLETE" },
              output: edit(
                code.kvCompletion,
                "where: { id: exportId }",
                'where: { id: exportId, status: { not: "COMPLETE" } }',
              ),
            },
          ],
        },
      ],
    },
    {
      // the same inside Redlock's using()
      code: code.usingCompletion,
      errors: [
        {
          messageId: "unconditionalRowWrite",
          line: 4,
          column: 11,
          data: {
            lock: 'the Redlock lock on "locks:report:*"',
            acquireLine: "2",
            model: "report",
            field: "state",
            target: "PUBLISHED",
            token: "a fencing token",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: { field: "state", target: "PUBLISHED" },
              output: edit(
                code.usingCompletion,
                "where: { id: reportId }",
                'where: { id: reportId, state: { not: "PUBLISHED" } }',
              ),
            },
          ],
        },
      ],
    },
    recoveredElsewhere({
      // keyed by another row (the project), not by the claimed export
      code: code.anotherRowsKey,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 7,
          column: 9,
          data: {
            operation: "S3 PutObject",
            location: "`projects/${project.id}/final.mp4`",
            lock: "the claim of export.status = RENDERING",
            acquireLine: "3",
            condition: "IfNoneMatch or IfMatch",
            token: "a fencing token",
          },
          suggestions: [],
        },
      ],
    }),
    {
      // a lock helper taking a callback: the callback holds the lock
      code: code.lockHelperCallback,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 15,
          column: 11,
          data: {
            operation: "S3 PutObject",
            location: '"sitemap.xml"',
            lock: 'the lock "lock:*"',
            acquireLine: "5",
            condition: "IfNoneMatch or IfMatch",
            token: "the lock's token `token`",
          },
          suggestions: [],
        },
      ],
    },
    recoveredElsewhere({
      // a claim helper taking a callback: the completion inside it is a holder write
      code: code.claimHelperCallback,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 9,
          column: 11,
          data: { model: "job", field: "status", value: "RUNNING", claimLine: "2", target: "DONE" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "job", field: "status", value: "RUNNING", claimLine: "2", target: "DONE" },
              output: edit(
                code.claimHelperCallback,
                'where: { id: jobId }, data: { status: "DONE" }',
                'where: { id: jobId, status: "RUNNING" }, data: { status: "DONE" }',
              ),
            },
          ],
        },
      ],
    }),
    {
      // redis-semaphore: writeFileSync of a fixed path while holding the mutex
      code: code.semaphoreFile,
      errors: [
        {
          messageId: "unfencedObjectWrite",
          line: 8,
          column: 5,
          data: {
            operation: "writeFileSync call",
            location: '"/data/compacted/current.bin"',
            lock: 'the redis-semaphore lock on "lock:compact:*"',
            acquireLine: "5",
            condition: "an exclusive flag, wx",
            token: "the lock's token `mutex.identifier`",
          },
          suggestions: [],
        },
      ],
    },
    {
      // raw SQL (node-postgres): a take-over branch in the WHERE, the owner in locked_by; one finding for the
      // function, with the edit for each write
      code: code.sqlTakeover,
      errors: [
        // The owner the claim stamped is a JS value: it becomes a parameter of its own, added to the call's values.
        {
          messageId: "takeoverWrite",
          line: 8,
          column: 9,
          data: {
            alsoAtLine: " (and in the filter of the write at line 9 of this function, unfenced the same way)",
            model: "jobs",
            field: "status",
            value: "running",
            claimLine: "2",
            tokenField: "locked_by",
            effect: "stores result on the claimed jobs row",
            result: "result",
          },
          suggestions: [
            {
              messageId: "addToken",
              data: { tokenField: "locked_by", tokenText: "workerId" },
              output: edit(
                code.sqlTakeover,
                '"UPDATE jobs SET result = $2 WHERE id = $1", [jobId, result]',
                '"UPDATE jobs SET result = $2 WHERE locked_by = $3 AND id = $1", [jobId, result, workerId]',
              ),
            },
            {
              messageId: "addTokenAt",
              data: { tokenField: "locked_by", tokenText: "workerId", line: "9" },
              output: edit(
                code.sqlTakeover,
                `"UPDATE jobs SET status = 'done' WHERE id = $1 AND status = 'running'", [jobId]`,
                `"UPDATE jobs SET status = 'done' WHERE locked_by = $2 AND id = $1 AND status = 'running'", [jobId, workerId]`,
              ),
            },
          ],
        },
      ],
    },
    {
      // plain JS, MongoDB driver: the same lease in a findOneAndUpdate
      code: code.mongoTakeover,
      languageOptions: javascript,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 8,
          column: 9,
          data: {
            alsoAtLine: "",
            model: "jobs",
            field: "status",
            value: "processing",
            claimLine: "2",
            tokenField: "lockedBy",
            effect: "moves the claimed jobs row to done",
            result: "status",
          },
          suggestions: [
            {
              messageId: "addToken",
              data: { tokenField: "lockedBy", tokenText: "workerId" },
              output: edit(
                code.mongoTakeover,
                '{ _id: jobId, status: "processing" }',
                '{ _id: jobId, status: "processing", lockedBy: workerId }',
              ),
            },
          ],
        },
      ],
    },
  ],
});

// The token is a JS value and the statement takes its values as parameters: the suggestion adds a parameter in the
// statement's own style and passes the value in the call's array, and offers nothing where it cannot be sure which
// array the statement reads or how its placeholders count.
const sqlClaim = (
  values: string,
  write: string,
): string => `export async function publish(pool: Pool, postId: string, workerId: string) {
  const claimed = await pool.query(
    "UPDATE posts SET status = 'publishing', locked_by = $2, heartbeat_at = now() WHERE id = $1 AND (status <> 'publishing' OR heartbeat_at < now() - interval '5 minutes')",
    [postId, workerId],
  );
  if (claimed.rowCount === 0) return;
  const url = await render(postId);${values}
  ${write}
}`;
const mysqlClaim = (
  write: string,
): string => `export async function publish(pool: Pool, postId: string, workerId: string) {
  const [claimed] = await pool.execute(
    "UPDATE posts SET status = 'publishing', locked_by = ?, heartbeat_at = NOW() WHERE id = ? AND (status <> 'publishing' OR heartbeat_at < NOW() - INTERVAL 5 MINUTE)",
    [workerId, postId],
  );
  if (claimed.affectedRows === 0) return;
  const url = await render(postId);
  ${write}
}`;
const takeoverWrite = (line: number, output?: string) => ({
  messageId: "takeoverWrite" as const,
  line,
  data: {
    alsoAtLine: "",
    model: "posts",
    field: "status",
    value: "publishing",
    claimLine: "2",
    tokenField: "locked_by",
    effect: "stores url on the claimed posts row",
    result: "url",
  },
  suggestions:
    output === undefined
      ? []
      : [{ messageId: "addToken" as const, data: { tokenField: "locked_by", tokenText: "workerId" }, output }],
});

ruleTester.run("require-fencing: the token as a statement parameter", rule, {
  valid: [],
  invalid: [
    {
      // node-postgres: `$3`, the value appended.
      code: sqlClaim("", 'await pool.query("UPDATE posts SET url = $2 WHERE id = $1", [postId, url]);'),
      errors: [
        takeoverWrite(
          8,
          sqlClaim(
            "",
            'await pool.query("UPDATE posts SET url = $2 WHERE locked_by = $3 AND id = $1", [postId, url, workerId]);',
          ),
        ),
      ],
    },
    {
      // The call passes the worker already (as `$3`): referred to again, not passed twice.
      code: sqlClaim(
        "",
        'await pool.query("UPDATE posts SET url = $2, published_by = $3 WHERE id = $1", [postId, url, workerId]);',
      ),
      errors: [
        takeoverWrite(
          8,
          sqlClaim(
            "",
            'await pool.query("UPDATE posts SET url = $2, published_by = $3 WHERE locked_by = $3 AND id = $1", [postId, url, workerId]);',
          ),
        ),
      ],
    },
    {
      // The `{ text, values }` form.
      code: sqlClaim(
        "",
        'await pool.query({ text: "UPDATE posts SET url = $2 WHERE id = $1", values: [postId, url] });',
      ),
      errors: [
        takeoverWrite(
          8,
          sqlClaim(
            "",
            'await pool.query({ text: "UPDATE posts SET url = $2 WHERE locked_by = $3 AND id = $1", values: [postId, url, workerId] });',
          ),
        ),
      ],
    },
    {
      // mysql2: positional `?`, the value placed among the array's values where its mark falls.
      code: mysqlClaim('await pool.execute("UPDATE posts SET url = ? WHERE id = ?", [url, postId]);'),
      errors: [
        takeoverWrite(
          8,
          mysqlClaim(
            'await pool.execute("UPDATE posts SET url = ? WHERE locked_by = ? AND id = ?", [url, workerId, postId]);',
          ),
        ),
      ],
    },
    // No edit: the values are a `const` the statement may share, a spread, or fewer than the text numbers.
    {
      code: sqlClaim(
        "\n  const values = [postId, url];",
        'await pool.query("UPDATE posts SET url = $2 WHERE id = $1", values);',
      ),
      errors: [takeoverWrite(9)],
    },
    {
      code: sqlClaim(
        "\n  const rest = [url];",
        'await pool.query("UPDATE posts SET url = $2 WHERE id = $1", [postId, ...rest]);',
      ),
      errors: [takeoverWrite(9)],
    },
    {
      code: sqlClaim("", 'await pool.query("UPDATE posts SET url = $3 WHERE id = $1", [postId, url]);'),
      errors: [takeoverWrite(8)],
    },
  ],
});
