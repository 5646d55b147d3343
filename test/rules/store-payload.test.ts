// Payload CMS's Local API through the database rules: `payload.find({ collection, where })` as the check of
// check-then-act, `payload.update({ collection, id | where, data })` as the claim, `payload.db.updateMany` as a
// recovery, Payload's operators (`equals`, `not_equals`, `in`, `exists`, `less_than`) and `and` / `or` lists. The
// model is the collection's slug.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
const lock = (model: string, field: string, value: string) => ({ model, field, value });

/** An export runner that reads a queued job and then flips it to running by id: the claim is at line 6. */
const READ_THEN_FLIP = `import type { Payload } from "payload";
export async function runNextExport(payload: Payload) {
  const found = await payload.find({ collection: "export-jobs", where: { status: { equals: "queued" } }, limit: 1 });
  const job = found.docs[0];
  if (!job) return;
  await payload.update({ collection: "export-jobs", id: job.id, data: { status: "running", startedAt: new Date().toISOString() } });
  await buildExport(payload, job);
  await payload.update({ collection: "export-jobs", id: job.id, data: { status: "done" } });
}
`;

/** The same runner written safely: one conditional update per job, and a sweeper judged by the heartbeat. */
const CONDITIONAL = `import type { Payload } from "payload";
export async function claimExport(payload: Payload, id: string) {
  const res = await payload.update({
    collection: "export-jobs",
    where: { and: [{ id: { equals: id } }, { status: { not_equals: "running" } }] },
    data: { status: "running", heartbeatAt: new Date().toISOString() },
  });
  return res.docs.length === 1;
}
`;

/**
 * Payload's own jobs queue through the adapter: `payload.db.updateJobs` writes the `payload-jobs` collection; its
 * filter is a const `and` list the runner pushes more terms into (they only narrow). The claim is at line 4.
 */
const JOBS_RUNNER = `export async function claimJobs(payload: Payload, queue: string | undefined, token: string) {
  const and: Where[] = [{ completedAt: { exists: false } }, { processing: { equals: false } }];
  if (queue) and.push({ queue: { equals: queue } });
  const jobs = await payload.db.updateJobs({ data: { processing: true, processingToken: token }, limit: 10, returning: true, where: { and } });
  for (const job of jobs ?? []) {
    await runJob(job);
    await payload.db.updateJobs({ data: { processing: false, completedAt: new Date().toISOString() }, where: { id: { equals: job.id } } });
  }
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "the jobs runner with a sweep of jobs whose processing stopped moving",
      code:
        JOBS_RUNNER +
        `export async function releaseStuckJobs(payload: Payload) {
  const cutoff = new Date(Date.now() - 10 * 60_000).toISOString();
  await payload.db.updateJobs({ data: { processing: false }, where: { and: [{ processing: { equals: true } }, { updatedAt: { less_than: cutoff } }] } });
}`,
    },
    {
      // alternatives pushed into an \`or\` widen what it matches: the filter is unknown, nothing is claimed on a guess
      name: "a filter whose or-list grows at run time is not read",
      code: `export async function claimJobs(payload: Payload, extra: Where[]) {
  const or: Where[] = [{ processing: { equals: false } }];
  for (const w of extra) or.push(w);
  await payload.db.updateJobs({ data: { processing: true }, where: { or } });
}`,
    },
    {
      name: "a conditional claim with a sweeper through payload.db that judges the heartbeat",
      code:
        CONDITIONAL +
        `export async function sweepExports(payload: Payload) {
  const cutoff = new Date(Date.now() - 5 * 60_000).toISOString();
  await payload.db.updateMany({
    collection: "export-jobs",
    where: { status: { equals: "running" }, heartbeatAt: { less_than: cutoff } },
    data: { status: "queued" },
  });
}`,
    },
    {
      // `collection` keys are everywhere (an analytics client, a search index): only `payload` is Payload
      name: "another client with a collection argument is not read as Payload",
      code: `export async function track(analytics: Analytics, id: string) {
  const open = await analytics.find({ collection: "sessions", where: { status: { equals: "open" } } });
  await analytics.update({ collection: "sessions", id, data: { status: "running" } });
  return open;
}`,
    },
    {
      name: "a plain transition to published is no claim",
      code: `export async function publish(payload: Payload, id: string) {
  await payload.update({ collection: "posts", id, data: { status: "published", publishedAt: new Date().toISOString() } });
}`,
    },
  ],
  invalid: [
    {
      name: "Payload jobs claimed through payload.db.updateJobs, with nothing to free a dead runner's jobs",
      code: JOBS_RUNNER,
      errors: [{ messageId: "missingRecovery", line: 4, column: 22, data: lock("payload-jobs", "processing", "true") }],
    },
    {
      name: "a job flipped to running by id, with nothing to move it back",
      code: READ_THEN_FLIP,
      errors: [{ messageId: "missingRecovery", line: 6, column: 9, data: lock("export-jobs", "status", "running") }],
    },
    {
      name: "the conditional claim alone still needs its recovery (req.payload)",
      code: CONDITIONAL.replace("payload: Payload, id", "req: PayloadRequest, id").replace(
        "await payload.update",
        "await req.payload.update",
      ),
      errors: [{ messageId: "missingRecovery", line: 3, column: 21, data: lock("export-jobs", "status", "running") }],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    { name: "one conditional update (and list with not_equals)", code: CONDITIONAL },
    {
      name: "a read that excludes nothing the write sets is no check",
      code: `export async function touch(payload: Payload, id: string) {
  const found = await payload.find({ collection: "export-jobs", where: { owner: { exists: true } } });
  await payload.update({ collection: "export-jobs", id, data: { status: "running" } });
  return found;
}`,
    },
  ],
  invalid: [
    {
      name: "find queued, then update by id",
      code: READ_THEN_FLIP,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 9,
          data: {
            model: "export-jobs",
            field: "status",
            value: "running",
            claimLine: "6",
            checkedWhere: "with a separate read",
            checkLine: "3",
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "the sweeper repeats status and age in its one write",
      code:
        CONDITIONAL +
        `export async function sweepExports(payload: Payload, cutoff: string) {
  await payload.db.updateMany({ collection: "export-jobs", where: { status: { equals: "running" }, heartbeatAt: { less_than: cutoff } }, data: { status: "queued" } });
}`,
    },
  ],
  invalid: [],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [],
  invalid: [
    {
      name: "a sweeper of the claim judged by when the export started",
      code:
        CONDITIONAL +
        `export async function sweepExports(payload: Payload, cutoff: string) {
  await payload.db.updateMany({ collection: "export-jobs", where: { status: { equals: "running" }, startedAt: { less_than: cutoff } }, data: { status: "queued" } });
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 11,
          column: 100,
          data: {
            ...lock("export-jobs", "status", "running"),
            claimLine: "3",
            stamped: "set once when work starts",
            timeField: "startedAt",
            progressFields: PROGRESS,
          },
        },
      ],
    },
  ],
});
