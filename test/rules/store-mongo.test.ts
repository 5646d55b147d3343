// The MongoDB Node driver and Mongoose through the five database rules: `updateOne`/`updateMany`/
// `findOneAndUpdate(filter, update)` with operator documents, Mongoose models and `findByIdAndUpdate(id, …)`,
// active-record `doc.x = v; await doc.save()`, reads as the check of check-then-act and as stale scans,
// deletes, and lock documents inserted under a unique `_id` with E11000 caught.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import heartbeatAbort from "../../rules/heartbeat-abort.js";
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

/** A Mongoose claim of Job.status = "processing", taken at line 3. The code after it starts at line 6. */
const MONGOOSE_CLAIM = `import mongoose from "mongoose";
export async function claim(id) {
  const job = await Job.findOneAndUpdate({ _id: id, status: { $ne: "processing" } }, { $set: { status: "processing", updatedAt: new Date() } }, { new: true });
  return job;
}
`;

/**
 * A lock module on a Mongo collection held in a field (`self.locks = await app.db.collection("reportLocks")`): the
 * insert under the name's `_id` is called from a `try` that catches E11000 one function up, and a stale row is
 * taken over after a JS deadline test (`takenAt + ttlMs >= now`) by a delete of the very row judged (`token`).
 * `takeOver` swaps that delete (line 17).
 */
const fieldLock = (
  takeOver = "await self.locks.deleteOne({ _id: name, token: held.token });",
  field = `self.locks = await app.db.collection("reportLocks");`,
) => `module.exports = (app) => {
  const self = {};
  self.lock = async function (name, ttlMs) {
    const now = Date.now();
    try {
      await clearStale();
      await take();
    } catch (err) {
      if (err.code !== 11000) throw err;
      return false;
    }
    return true;

    async function clearStale() {
      const held = await self.locks.findOne({ _id: name });
      if (!held || held.takenAt + held.ttlMs >= now) return;
      ${takeOver}
    }

    async function take() {
      await self.locks.insertOne({ _id: name, takenAt: now, ttlMs, token: app.newId() });
    }
  };
  self.unlock = async function (name) {
    await self.locks.deleteOne({ _id: name });
  };
  self.init = async function () {
    ${field}
  };
  return self;
};
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      // the field is given two filters (one by the constructor, one by retarget), so the write's filter is unknown
      // where it runs: nothing is reported on a guess
      name: "a filter field that the class sets twice is not read as either value",
      code: `export class ImportRun {
  constructor(jobs, id) {
    this.jobs = jobs;
    this.pending = { _id: id, state: "waiting" };
  }
  retarget(id) {
    this.pending = { _id: id };
  }
  async begin() {
    return this.jobs.findOneAndUpdate(this.pending, { $set: { state: "importing" } });
  }
}`,
      languageOptions: javascript,
    },
    {
      // the same field compared as an instant is a lease taken over once old, not a flag: it answers Q1
      name: "a flag-named field compared with the clock is a lease",
      code: `export async function lockMigrations(db) {
  const res = await db.collection("control").updateOne({ _id: "migrations", isLocked: { $lt: Date.now() - 600000 } }, { $set: { isLocked: new Date().getTime() } });
  if (res.modifiedCount === 0) return false;
  await runMigrations(db);
  await db.collection("control").updateOne({ _id: "migrations" }, { $set: { isLocked: 0 } });
  return true;
}`,
      languageOptions: javascript,
    },
    {
      // a pipeline stage that rewrites the document (\`$replaceWith\`) is not read: no claim on a guess
      name: "an update pipeline with a stage the recognizer does not read",
      code: `export async function takeExport(id) {
  return Export.findOneAndUpdate({ _id: id, status: { $ne: "exporting" } }, [{ $replaceWith: { $mergeObjects: ["$$ROOT", { status: "exporting" }] } }]);
}`,
      languageOptions: javascript,
    },
    {
      name: "a lock document taken over after a JS deadline test, by a delete of the row judged",
      code: fieldLock(),
      languageOptions: javascript,
    },
    {
      // the insert's E11000 is caught only where take() is awaited in the try: a second call outside it may throw
      // the duplicate error anywhere, so the insert is no lock taken
      name: "an insert whose function is also called outside the try that catches E11000",
      code: fieldLock("return;").replace(
        "    return true;\n\n    async function clearStale",
        "    await take();\n    return true;\n\n    async function clearStale",
      ),
      languageOptions: javascript,
    },
    {
      // a field set to two collections is known by its name only: `store` says nothing of a lock
      name: "a collection field assigned twice stays unknown",
      code: fieldLock("return;")
        .replaceAll("self.locks", "self.store")
        .replace(
          `self.store = await app.db.collection("reportLocks");`,
          `self.store = await app.db.collection("reportLocks");\n    self.store = await app.db.collection("reports");`,
        ),
      languageOptions: javascript,
    },
    {
      // update(criteria, partial) without update operators is another store's (TypeORM, Sequelize), or a
      // replacement document: not read as a Mongo update
      name: "an update() whose second argument has no update operators",
      code: `export async function start(repo, id) {
  await repo.update({ id, locked: false }, { locked: true });
}`,
      languageOptions: javascript,
    },
    {
      name: "a claim with a conditional recovery judged by a progress timestamp",
      code:
        MONGOOSE_CLAIM +
        `export async function reap(cutoff) {
  await Job.updateMany({ status: "processing", updatedAt: { $lt: cutoff } }, { $set: { status: "queued" } });
}`,
      languageOptions: javascript,
    },
    {
      name: "a lease take-over in the claim itself ($or with an expired lease), native driver",
      code: `import type { Db } from "mongodb";
export async function claim(db: Db, id: string, workerId: string) {
  const now = new Date();
  return db.collection("jobs").findOneAndUpdate(
    { _id: id, $or: [{ status: { $nin: ["running", "done"] } }, { status: "running", "lease.expiresAt": { $lt: now } }] },
    { $set: { status: "running", lockedBy: workerId, "lease.expiresAt": new Date(now.getTime() + 30_000) } },
  );
}`,
    },
    {
      name: "a plain transition PENDING → PAID by id is no lock",
      code: `export async function markPaid(orderId: string) {
  await Order.updateOne({ _id: orderId, status: "pending" }, { $set: { status: "paid", paidAt: new Date() } });
}`,
    },
    {
      name: "a bulk move into a waiting state is no claim",
      code: `export async function retryFailed() {
  await db.collection("jobs").updateMany({ status: "failed", attempts: { $lt: 5 } }, { $set: { status: "pending" }, $inc: { attempts: 1 } });
}`,
    },
    {
      name: "a processing flag claimed with $ne: true and recovered by a sweeper, Mongoose in a NestJS service",
      code: `@Injectable()
export class CampaignService {
  constructor(@InjectModel(Campaign.name) private readonly campaignModel: Model<CampaignDocument>) {}
  async claim(id: string) {
    return this.campaignModel.updateOne({ _id: id, isSending: { $ne: true } }, { $set: { isSending: true, heartbeatAt: new Date() } });
  }
  async unstick(cutoff: Date) {
    await this.campaignModel.updateMany({ isSending: true, heartbeatAt: { $lte: cutoff } }, { $set: { isSending: false } });
  }
}`,
    },
    {
      name: "an unreadable filter ($expr) never yields a finding",
      code: `export async function start(id: string) {
  await db.collection("jobs").updateOne({ _id: id, $expr: { $lt: ["$attempts", "$maxAttempts"] } }, { $set: { status: "running" } });
}`,
    },
    {
      name: "a lock document with an expiry that a sweeper deletes",
      code: `export async function acquire(name: string, owner: string) {
  try {
    await db.collection("locks").insertOne({ _id: name, owner, expiresAt: new Date(Date.now() + 60_000) });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return false;
    throw err;
  }
}
export async function sweep() {
  await db.collection("locks").deleteMany({ expiresAt: { $lt: new Date() } });
}`,
    },
    {
      name: "an upsert lease: inserted when absent, taken over when expired, E11000 means held",
      code: `export async function acquire(name: string, owner: string) {
  const now = new Date();
  try {
    await db.collection("leases").updateOne(
      { _id: name, expiresAt: { $lt: now } },
      { $set: { owner, expiresAt: new Date(now.getTime() + 30_000) } },
      { upsert: true },
    );
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return false;
    throw err;
  }
}`,
    },
    {
      name: "an insert whose duplicate-key error is not caught takes no lock",
      code: `export async function seed(name: string) {
  await db.collection("locks").insertOne({ _id: name, owner: "seed" });
}`,
    },
    {
      name: "Prisma's one-argument updateMany is not read as Mongo (and here is a transition)",
      code: `export async function archive(id: string) {
  await prisma.job.deleteMany({ where: { id, status: "running" } });
  await prisma.job.create({ data: { status: "running" } });
}`,
    },
  ],
  invalid: [
    {
      // a flag set to the time it was taken is set: nothing clears it if the migration runner dies
      name: "a flag taken with a timestamp, with no expiry",
      code: `export async function lockMigrations(db) {
  const res = await db.collection("control").updateOne({ _id: "migrations", isLocked: { $in: [null, false] } }, { $set: { isLocked: new Date().getTime() } });
  if (res.modifiedCount === 0) return false;
  await runMigrations(db);
  await db.collection("control").updateOne({ _id: "migrations" }, { $set: { isLocked: false } });
  return true;
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 2, column: 21, data: lock("control", "isLocked", "true") }],
    },
    {
      // an update pipeline's $set stage writes the claim; "$$NOW" is the server's clock
      name: "a claim written as an update pipeline, with nothing to put it back",
      code: `export async function takeExport(id) {
  return Export.findOneAndUpdate({ _id: id, status: { $ne: "exporting" } }, [{ $set: { status: "exporting", startedAt: "$$NOW" } }], { new: true });
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 2, column: 10, data: lock("Export", "status", "exporting") }],
    },
    {
      // a job taken off the queue is in progress under the name the queue gives it
      name: "a job flipped from queued to dequeued, with nothing to put it back",
      code: `export function dequeue(db, callback) {
  db.collection("jobs").findAndModify({ query: { status: "queued" }, update: { $set: { status: "dequeued", dequeuedAt: new Date() } }, new: true }, callback);
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 2, column: 3, data: lock("jobs", "status", "dequeued") }],
    },
    {
      name: "a lock document in a field-held collection, with no way to clear a dead holder's row",
      code: fieldLock("return;"),
      languageOptions: javascript,
      errors: [{ messageId: "missingExpiry", line: 21, column: 13, data: { model: "reportLocks" } }],
    },
    {
      // Meteor and the 2.x driver: update(selector, modifier); the control document's flag is taken atomically,
      // but nothing expires it or looks at lockedAt, so a process killed mid-migration leaves it locked
      name: "a legacy update() flag claim on a control document (plain JS)",
      code: `Migrations.lock = function () {
  return this._collection.update({ _id: "control", locked: false }, { $set: { locked: true, lockedAt: new Date() } }) === 1;
};
Migrations.unlock = function () {
  this._collection.update({ _id: "control" }, { $set: { locked: false } });
};`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 2, column: 10, data: lock("_collection", "locked", "true") }],
    },
    {
      name: "Mongoose findOneAndUpdate claim with no recovery (plain JS)",
      code: MONGOOSE_CLAIM,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 3, column: 21, data: lock("Job", "status", "processing") }],
    },
    {
      name: "native driver in a class service: this.jobs with $nin",
      code: `import type { Collection, Db } from "mongodb";
export class JobQueue {
  private readonly jobs: Collection<JobDoc>;
  constructor(db: Db) {
    this.jobs = db.collection<JobDoc>("jobs");
  }
  async claim(id: string): Promise<boolean> {
    const res = await this.jobs.updateOne({ _id: id, status: { $nin: ["running", "done"] } }, { $set: { status: "running" } });
    return res.modifiedCount === 1;
  }
}`,
      errors: [{ messageId: "missingRecovery", line: 8, column: 23, data: lock("jobs", "status", "running") }],
    },
    {
      // the filter is built once, in the constructor, and read back through the field where the claim is written
      name: "a claim whose filter the class keeps in a field set once by its constructor",
      code: `export class ImportRun {
  constructor(jobs, id) {
    this.jobs = jobs;
    this.pending = { _id: id, state: "waiting" };
  }
  async begin() {
    return this.jobs.findOneAndUpdate(this.pending, { $set: { state: "importing" } });
  }
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 7, column: 12, data: lock("jobs", "state", "importing") }],
    },
    {
      name: "a collection held in a const, with .then",
      code: `const exportJobs = db.collection("exports");
export function startExport(id) {
  return exportJobs.updateOne({ _id: id, state: { $ne: "exporting" } }, { $set: { state: "exporting" } }).then((r) => r.modifiedCount === 1);
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 3, column: 10, data: lock("exports", "state", "exporting") }],
    },
    {
      name: "a lock document inserted with E11000 caught, and no expiry",
      code: `export async function acquire(name: string) {
  try {
    await db.collection("locks").insertOne({ _id: name, owner: process.pid });
    return true;
  } catch (err) {
    if (String(err).includes("E11000")) return false;
    throw err;
  }
}
export async function release(name: string) {
  await db.collection("locks").deleteOne({ _id: name });
}`,
      errors: [{ messageId: "missingExpiry", line: 3, column: 11, data: { model: "locks" } }],
    },
    {
      name: "Model.create of a lock document, E11000 handled in a .catch after .then",
      code: `export function tryLock(name) {
  return Lock.create({ _id: name, pid: process.pid }).then(() => true).catch((e) => {
    if (e.code === 11000) return false;
    throw e;
  });
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingExpiry", line: 2, column: 10, data: { model: "Lock" } }],
    },
    {
      name: "new Model({…}).save() of a lock document: the first save inserts it",
      code: `export async function lockImport(name) {
  const lock = new ImportLock({ _id: name, host: os.hostname() });
  try {
    await lock.save();
  } catch (err) {
    if (err.code === 11000) return null;
    throw err;
  }
  return lock;
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingExpiry", line: 4, column: 11, data: { model: "ImportLock" } }],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    {
      name: "the write itself excludes the value: an atomic claim",
      code: `export async function start(id: string) {
  const job = await Job.findById(id);
  if (!job || job.status === "running") return;
  await Job.updateOne({ _id: id, status: { $ne: "running" } }, { $set: { status: "running" } });
}`,
    },
    {
      name: "a compare-and-set on the status read before",
      code: `export function next() {
  return Job.findOne({ status: "queued" }).then((job) => job && Job.updateOne({ _id: job._id, status: job.status }, { $set: { status: "running" } }));
}`,
    },
    {
      name: "a check of another model's document says nothing about the job",
      code: `export async function start(projectId: string, jobId: string) {
  const project = await Project.findById(projectId);
  if (project.status !== "active") return;
  await Job.findByIdAndUpdate(jobId, { $set: { status: "running" } });
}`,
    },
    {
      name: "a reporting query before an update that claims nothing",
      code: `export async function report() {
  const busy = await db.collection("jobs").countDocuments({ status: "running" });
  await db.collection("stats").updateOne({ _id: "jobs" }, { $set: { busy } });
}`,
    },
  ],
  invalid: [
    {
      name: "active record: read, check in JS, assign, save (inside a transaction)",
      code: `export async function start(id: string) {
  const session = await mongoose.startSession();
  await session.withTransaction(async () => {
    const job = await Job.findById(id).session(session);
    if (job.status === "processing") return;
    job.status = "processing";
    job.startedAt = new Date();
    await job.save({ session });
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 8,
          column: 11,
          data: { ...lock("Job", "status", "processing"), checkedWhere: "in JavaScript", checkLine: "5" },
          suggestions: [],
        },
      ],
    },
    {
      name: "a processing flag: if (doc.isSending) return; doc.isSending = true; await doc.save() (plain JS)",
      code: `export async function send(id) {
  const campaign = await Campaign.findById(id);
  if (campaign.isSending) return;
  campaign.isSending = true;
  await campaign.save();
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: { ...lock("Campaign", "isSending", "true"), checkedWhere: "in JavaScript", checkLine: "3" },
          suggestions: [],
        },
      ],
    },
    {
      name: "a loop over a read of queued jobs, doc.set, then save",
      code: `export async function drain() {
  for (const job of await Job.find({ status: "queued" }).limit(10)) {
    job.set({ status: "running", startedAt: new Date() });
    await job.save();
  }
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 11,
          data: { ...lock("Job", "status", "running"), checkedWhere: "with a separate read", checkLine: "2" },
          suggestions: [],
        },
      ],
    },
    {
      name: "read, then write by id in .then: the filter gains $ne",
      code: `export function next(db: Db) {
  return db.collection("tasks").findOne({ state: "queued" }).then((t) => t && db.collection("tasks").updateOne({ _id: t._id }, { $set: { state: "running" } }));
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 2,
          column: 79,
          data: { ...lock("tasks", "state", "running"), checkedWhere: "with a separate read", checkLine: "2" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("tasks", "state", "running"), checkedWhere: "with a separate read", checkLine: "2" },
              output: `export function next(db: Db) {
  return db.collection("tasks").findOne({ state: "queued" }).then((t) => t && db.collection("tasks").updateOne({ _id: t._id, state: { $ne: "running" } }, { $set: { state: "running" } }));
}`,
            },
          ],
        },
      ],
    },
    {
      name: "findByIdAndUpdate after a JS check: the suggestion turns it into findOneAndUpdate with a filter",
      code: `export async function start(id: string) {
  const job = await Job.findById(id).lean();
  if (job.status !== "queued") return null;
  return Job.findByIdAndUpdate(id, { status: "running" }, { new: true });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 10,
          data: { ...lock("Job", "status", "running"), checkedWhere: "in JavaScript", checkLine: "3" },
          // the check lets only "queued" by: the filter requires it (a job finished meanwhile is not taken again)
          suggestions: [
            {
              messageId: "requireValue",
              data: { field: "status", required: '"queued"', checkLine: "3" },
              output: `export async function start(id: string) {
  const job = await Job.findById(id).lean();
  if (job.status !== "queued") return null;
  return Job.findOneAndUpdate({ _id: id, status: "queued" }, { status: "running" }, { new: true });
}`,
            },
          ],
        },
      ],
    },
    {
      name: "Mongoose top-level fields (cast to $set) after a check, this.jobModel in a service",
      code: `export class JobsService {
  constructor(private readonly jobModel: Model<JobDocument>) {}
  async run(id: string) {
    const job = await this.jobModel.findOne({ _id: id }).exec();
    if (["running", "done"].includes(job.status)) return;
    await this.jobModel.updateOne({ _id: id }, { status: "running", startedAt: new Date() });
  }
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 11,
          data: { ...lock("job", "status", "running"), checkedWhere: "in JavaScript", checkLine: "5" },
          // the whole fix: the update's matchedCount read, and the check's `return` taken again on 0
          suggestions: [
            {
              messageId: "addConditionAndExit",
              data: { field: "status", value: "running", exit: "return", checkLine: "5" },
              output: `export class JobsService {
  constructor(private readonly jobModel: Model<JobDocument>) {}
  async run(id: string) {
    const job = await this.jobModel.findOne({ _id: id }).exec();
    if (["running", "done"].includes(job.status)) return;
    const claimed = await this.jobModel.updateOne({ _id: id, status: { $ne: "running" } }, { status: "running", startedAt: new Date() });
    if (claimed.matchedCount === 0) return;
  }
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
      name: "the take-over deletes only the row it judged (its token)",
      code: fieldLock(),
      languageOptions: javascript,
    },
    {
      name: "status and age in one filter",
      code:
        MONGOOSE_CLAIM +
        `export async function reap() {
  await Job.updateMany({ status: { $in: ["processing"] }, updatedAt: { $lt: new Date(Date.now() - 60_000) } }, { $set: { status: "failed" } });
}`,
      languageOptions: javascript,
    },
    {
      name: "a delete of stale claimed documents, judged by age and pinned",
      code:
        MONGOOSE_CLAIM +
        `export async function purge(cutoff) {
  await Job.deleteMany({ status: "processing", updatedAt: { $lt: cutoff } });
}`,
      languageOptions: javascript,
    },
    {
      name: "a $nor over fresh rows is still status and age in the filter",
      code:
        MONGOOSE_CLAIM +
        `export async function reap(cutoff) {
  await Job.updateMany({ status: "processing", $nor: [{ updatedAt: { $gte: cutoff } }] }, { $set: { status: "queued" } });
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "a lock document taken over after a JS deadline test by a delete by name alone",
      code: fieldLock("await self.locks.deleteOne({ _id: name });"),
      languageOptions: javascript,
      errors: [
        {
          messageId: "lockRowCheckInJs",
          line: 17,
          column: 13,
          data: {
            model: "reportLocks",
            field: "row",
            value: "held",
            claimLine: "21",
            target: "another state",
            rowFilter: "_id",
            checkedWhere: "in JavaScript",
            checkLine: "16",
          },
        },
      ],
    },
    {
      name: "a boot-time reset of every processing job: no age",
      code:
        MONGOOSE_CLAIM +
        `export async function onBoot() {
  await Job.updateMany({ status: "processing" }, { $set: { status: "queued" } });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingTime",
          line: 7,
          column: 9,
          data: {
            ...claimed("Job", "status", "processing", 3),
            target: "queued",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [],
        },
      ],
    },
    {
      name: "age without the status: the suggestion adds it",
      code:
        MONGOOSE_CLAIM +
        `export async function reap(cutoff) {
  await Job.updateMany({ updatedAt: { $lt: cutoff } }, { $set: { status: "failed" } });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingStatus",
          line: 7,
          column: 9,
          data: {
            ...claimed("Job", "status", "processing", 3),
            target: "failed",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [
            {
              messageId: "addStatus",
              data: {
                ...claimed("Job", "status", "processing", 3),
                target: "failed",
                rowFilter: "its filter",
                checkedWhere: "",
                checkLine: "",
              },
              output:
                MONGOOSE_CLAIM +
                `export async function reap(cutoff) {
  await Job.updateMany({ updatedAt: { $lt: cutoff }, status: "processing" }, { $set: { status: "failed" } });
}`,
            },
          ],
        },
      ],
    },
    {
      name: "a stale scan, then writes by _id only",
      code:
        MONGOOSE_CLAIM +
        `export async function reap(cutoff) {
  const stale = await Job.find({ status: "processing", updatedAt: { $lt: cutoff } });
  for (const job of stale) {
    await Job.updateOne({ _id: job._id }, { $set: { status: "queued" } });
  }
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkInJs",
          line: 9,
          column: 11,
          data: {
            ...claimed("Job", "status", "processing", 3),
            target: "queued",
            rowFilter: "_id",
            checkedWhere: "with a separate read",
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
    {
      // the same value and stamp without an age test to take stale rows over: a status, not a lease
      name: "ACTIVE written with a clock stamp but no take-over by its age",
      code: `export async function activate(col: Collection, ids: string[]) {
  const now = new Date();
  await col.updateMany({ _id: { $in: ids }, status: "CREATED" }, { $set: { status: "ACTIVE", keepAlive: now } });
}
export async function purge(col: Collection) {
  await col.deleteMany({ status: "ACTIVE", $expr: { $lt: ["$keepAlive", { $subtract: [new Date(), 86_400_000] }] } });
}`,
    },
    {
      name: "a recovery judged by a nested progress field (lease.heartbeatAt)",
      code: `export async function claim(id: string) {
  await db.collection("jobs").updateOne({ _id: id, status: "queued" }, { $set: { status: "running", "lease.heartbeatAt": new Date() } });
}
export async function reap(cutoff: Date) {
  await db.collection("jobs").updateMany({ status: "running", "lease.heartbeatAt": { $lt: cutoff } }, { $set: { status: "queued" } });
}`,
    },
    {
      name: "a scan of recent work by start time is no stale scan",
      code: `export async function recent(since: Date) {
  return Job.find({ status: "running", startedAt: { $gte: since } });
}`,
    },
    {
      name: "a scan of finished jobs by start time pins no in-progress value",
      code: `export async function old(cutoff: Date) {
  return Job.find({ status: "done", startedAt: { $lt: cutoff } }).lean();
}`,
    },
  ],
  invalid: [
    {
      // ACTIVE names no work in progress, but taking over rows by the age of the very stamp the write makes is a
      // lease: the value is held. The stamp is a `const now` and the age test an aggregation expression.
      name: "an outbox's ACTIVE events, taken over by an $expr age test of keepAlive, which only the claim stamps",
      code: `export async function claimBatch(col: Collection, ids: string[]) {
  const now = new Date();
  const query = { $or: [{ status: "CREATED" }, { $expr: { $lt: ["$keepAlive", { $subtract: [now, 60_000] }] } }] };
  await col.updateMany({ _id: { $in: ids }, ...query }, { $set: { status: "ACTIVE", keepAlive: now } });
}`,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 3,
          column: 50,
          data: {
            ...claimed("col", "status", "ACTIVE", 4),
            stamped: "set once when work starts",
            timeField: "keepAlive",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "a recovery judged by lockedAt, set once when the claim is taken (plain JS)",
      code: `export async function claim(id) {
  await Job.findOneAndUpdate({ _id: id, status: { $ne: "processing" } }, { $set: { status: "processing", lockedAt: new Date() } });
}
export async function recover() {
  await Job.updateMany({ status: "processing", lockedAt: { $lt: new Date(Date.now() - 600_000) } }, { $set: { status: "queued" } });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 5,
          column: 48,
          data: {
            ...claimed("Job", "status", "processing", 2),
            stamped: "set once when work starts",
            timeField: "lockedAt",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "a stale scan by a nested start time (lease.startedAt)",
      code: `export async function stuck(db: Db, cutoff: Date) {
  return db.collection("jobs").find({ status: "running", "lease.startedAt": { $lte: cutoff } }).toArray();
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 2,
          column: 58,
          data: {
            model: "jobs",
            field: "status",
            value: "running",
            timeField: "lease.startedAt",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "an upsert lock taken over by the time it was acquired",
      code: `export async function acquire(name: string, owner: string) {
  const now = new Date();
  try {
    await db.collection("locks").updateOne({ _id: name, acquiredAt: { $lt: new Date(now.getTime() - 30_000) } }, { $set: { owner, acquiredAt: now } }, { upsert: true });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 11000) return false;
    throw err;
  }
}`,
      errors: [
        {
          messageId: "startTimeLockRow",
          line: 4,
          column: 57,
          data: {
            what: "take-over",
            model: "locks",
            claimLine: "4",
            timeField: "acquiredAt",
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
      name: "completion fenced on the owner column",
      code: `export async function work(id: string, workerId: string) {
  const job = await Job.findOneAndUpdate({ _id: id, status: "queued" }, { $set: { status: "running", lockedBy: workerId } });
  if (!job) return;
  await Job.updateOne({ _id: id, lockedBy: workerId }, { $set: { status: "done" } });
}`,
    },
    {
      name: "completion fenced on the claimed status",
      code: `export async function work(id: string) {
  const job = await Job.findOneAndUpdate({ _id: id, status: "queued" }, { $set: { status: "running" } });
  if (!job) return;
  await Job.updateOne({ _id: id, status: "running" }, { $set: { status: "done" } });
}`,
    },
    {
      name: "an admin cancel in another route handler is not the holder's write",
      code: `app.post("/jobs/:id/start", async (req) => {
  await Job.updateOne({ _id: req.params.id, status: { $ne: "running" } }, { $set: { status: "running" } });
});
app.post("/jobs/:id/cancel", async (req) => {
  await Job.findByIdAndUpdate(req.params.id, { $set: { status: "cancelled" } });
});`,
    },
  ],
  invalid: [
    recoveredElsewhere({
      name: "completion by _id only",
      code: MONGOOSE_CLAIM.replace(
        "  return job;\n",
        `  if (!job) return null;
  await runJob(job);
  await Job.updateOne({ _id: id }, { $set: { status: "done", finishedAt: new Date() } });
`,
      ),
      languageOptions: javascript,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 6,
          column: 9,
          data: { ...claimed("Job", "status", "processing", 3), target: "done" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("Job", "status", "processing", 3), target: "done" },
              output: MONGOOSE_CLAIM.replace(
                "  return job;\n",
                `  if (!job) return null;
  await runJob(job);
  await Job.updateOne({ _id: id, status: "processing" }, { $set: { status: "done", finishedAt: new Date() } });
`,
              ),
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      name: "active record: the claimed document saved as done",
      code: MONGOOSE_CLAIM.replace(
        "  return job;\n",
        `  if (!job) return null;
  await runJob(job);
  job.status = "done";
  await job.save();
`,
      ),
      languageOptions: javascript,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 7,
          column: 9,
          data: { ...claimed("Job", "status", "processing", 3), target: "done" },
          suggestions: [],
        },
      ],
    }),
    recoveredElsewhere({
      name: "a failure path reached through this.fail(): findByIdAndUpdate gets a filter",
      code: `export class Worker {
  async run(id: string) {
    const res = await this.jobs.updateOne({ _id: id, status: { $ne: "running" } }, { $set: { status: "running" } });
    if (res.modifiedCount === 0) return;
    await this.fail(id);
  }
  async fail(id: string) {
    await this.jobModel.findByIdAndUpdate(id, { $set: { status: "failed" } });
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 8,
          column: 11,
          data: { ...claimed("jobs", "status", "running", 3), target: "failed" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("jobs", "status", "running", 3), target: "failed" },
              output: `export class Worker {
  async run(id: string) {
    const res = await this.jobs.updateOne({ _id: id, status: { $ne: "running" } }, { $set: { status: "running" } });
    if (res.modifiedCount === 0) return;
    await this.fail(id);
  }
  async fail(id: string) {
    await this.jobModel.findOneAndUpdate({ _id: id, status: "running" }, { $set: { status: "failed" } });
  }
}`,
            },
          ],
        },
      ],
    }),
  ],
});

// A boolean no flag word names is a flag by what the module does with it (issue 35): set true only where it is not,
// and set back on the same document by the same function after its work. Set once and never given back, it is a
// transition, not a lock.
const REFRESHING = `import { Collection } from "mongodb";
declare const feeds: Collection;
export async function refreshFeed(feedId: string) {
  const taken = await feeds.updateOne({ _id: feedId, isRefreshing: { $ne: true } }, { $set: { isRefreshing: true } });
  if (taken.modifiedCount === 0) return;
  const items = await pullItems(feedId);
  await feeds.updateOne({ _id: feedId }, { $set: { isRefreshing: false, items, status: "fresh" } });
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "a one-way compare-and-set of a boolean: archived once, never given back",
      code: REFRESHING.replaceAll("isRefreshing", "isArchived").replace(
        "isArchived: false, items",
        "archivedItems: items",
      ),
    },
  ],
  invalid: [
    {
      name: "a boolean held across the work by compare-and-set and cleared after, whatever it is called",
      code: REFRESHING,
      errors: [
        { messageId: "missingRecovery", line: 4, data: { model: "feeds", field: "isRefreshing", value: "true" } },
      ],
    },
  ],
});

// From blind-10's first sight (issue 35): a lease kept inside an embedded document, recovered by a branch for rows
// without one; a lock document the store can expire (a TTL index on a time ahead of now) and renewed by the id its
// acquisition drew.
const LEASED_TASKS = (claimSets: string) => `const Task = require("./task.model");
async function claimTask(worker, leaseMs) {
  return Task.findOneAndUpdate({ state: "waiting" }, { $set: { state: "running", ${claimSets} } }, { new: true });
}
async function requeueExpired() {
  const now = new Date();
  await Task.updateMany(
    { state: "running", $or: [{ "lease.expiresAt": { $exists: false } }, { "lease.expiresAt": { $lt: now } }] },
    { $set: { state: "waiting" }, $unset: { lease: "" } },
  );
}
module.exports = { claimTask, requeueExpired };
`;

const TTL_LOCK = `import { Collection, ObjectId } from "mongodb";
declare const locks: Collection;
export async function takeLock(name: string): Promise<ObjectId | null> {
  const id = new ObjectId();
  try {
    await locks.insertOne({ _id: id, name, expireAt: new Date(Date.now() + 120_000) });
    return id;
  } catch {
    return null;
  }
}
export async function extendLock(name: string, id: ObjectId): Promise<boolean> {
  const res = await locks.updateOne({ _id: id, name }, { $set: { expireAt: new Date(Date.now() + 120_000) } });
  return res.matchedCount === 1;
}
export async function dropLock(name: string, id: ObjectId) {
  await locks.deleteOne({ _id: id, name });
}
`;

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "a branch for rows without the lease the claim always sets finds no holder's row",
      code: LEASED_TASKS("lease: { worker, expiresAt: new Date(Date.now() + leaseMs) }"),
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "the same branch where the claim sets no lease takes every running task",
      code: LEASED_TASKS("worker"),
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingTime",
          line: 7,
          column: 9,
          data: {
            ...claimed("Task", "state", "running", 3),
            target: "waiting",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    { name: "a lock document with a time ahead of now, which a TTL index elsewhere may expire", code: TTL_LOCK },
    {
      name: "a schema here that declares the TTL on that time",
      code: `import mongoose from "mongoose";
const Lock = mongoose.model("Lock", new mongoose.Schema({ _id: String, expireAt: { type: Date, expires: 0 } }));
export async function takeLock(name: string) {
  try {
    await Lock.create({ _id: name, expireAt: new Date(Date.now() + 60_000) });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 11000) return false;
    throw error;
  }
}`,
    },
  ],
  invalid: [
    {
      name: "the same lock document with no time at all",
      code: TTL_LOCK.replace(", expireAt: new Date(Date.now() + 120_000) });", " });"),
      errors: [{ messageId: "missingExpiry", line: 6, data: { model: "locks" } }],
    },
  ],
});

ruleTester.run("heartbeat-abort", heartbeatAbort, {
  valid: [{ name: "renewed by the id the acquisition drew: a new holder's document has another", code: TTL_LOCK }],
  invalid: [
    {
      name: "renewed by the lock's name alone: it succeeds on a new holder's document",
      code: TTL_LOCK.replace("{ _id: id, name }, { $set", "{ name }, { $set"),
      errors: [
        {
          messageId: "unfencedHeartbeat",
          line: 13,
          data: { lock: "the claimed locks row", where: "claimed at line 6", rowFilter: "name" },
        },
      ],
    },
  ],
});

// A flag marked once when its time comes (blind-10, issue 35): the check guards only the mark, and what follows runs
// the same either way, so nobody is turned away and nothing is held. Where the check turns a second caller away, the
// same flag is a lock taken in two steps.
const MARK_ONCE = (after: string) => `import mongoose from "mongoose";
const Poll = mongoose.model("Poll");
export async function openPoll(pollId, now) {
  const poll = await Poll.findById(pollId);
  if (!poll.isLocked && now >= poll.closesAt) {
    poll.isLocked = true;
    await poll.save();
  }${after}
  return poll;
}
`;

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    { name: "a flag marked once: the check guards the mark alone", code: MARK_ONCE(""), languageOptions: javascript },
  ],
  invalid: [
    {
      name: "the same flag when the check turns the second caller away",
      code: MARK_ONCE(" else {\n    return null;\n  }").replace(
        "!poll.isLocked && now >= poll.closesAt",
        "!poll.isLocked",
      ),
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 7,
          data: {
            model: "Poll",
            field: "isLocked",
            value: "true",
            claimLine: "7",
            checkedWhere: "in JavaScript",
            checkLine: "5",
          },
        },
      ],
    },
  ],
});
