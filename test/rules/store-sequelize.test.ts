// Sequelize through the five database rules: `Model.update(values, { where })`, `Model.destroy({ where })`,
// `findOne`/`findAll`/`findByPk` reads, and instance writes (`job.status = …; await job.save()`, `job.update({…})`).
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester, recoveredElsewhere } from "../rule-tester.js";

const IMPORTS = `import { Op } from "sequelize";\n`;
const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
const lock = (value: string, claimLine: number, model = "Job", field = "status") => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
});
const CLAIM = `export async function claim(id: string) {
  const [n] = await Job.update({ status: "running" }, { where: { id, status: { [Op.ne]: "running" } } });
  return n === 1;
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    // claim, and a conditional recovery on the heartbeat
    IMPORTS +
      CLAIM +
      `export async function recover(cutoff: Date) {
  await Job.update({ status: "queued" }, { where: { status: "running", heartbeatAt: { [Op.lt]: cutoff } } });
}`,
    // a lease: the claim takes over rows whose lease ran out
    IMPORTS +
      `export async function lease(id: string, me: string) {
  await Task.update(
    { status: "locked", lockedBy: me, lockedUntil: new Date(Date.now() + 30_000) },
    { where: { id, [Op.or]: [{ status: { [Op.ne]: "locked" } }, { lockedUntil: { [Op.lt]: new Date() } }] } },
  );
}`,
    // a plain state transition
    IMPORTS +
      `export async function pay(id: string) {
  await Order.update({ status: "PAID" }, { where: { id, status: "PENDING" } });
}`,
    // an update by id alone, no check
    IMPORTS +
      `export async function markStarted(id: string) {
  await Job.update({ status: "running", startedAt: new Date() }, { where: { id } });
}`,
    // a bulk move into a waiting state
    IMPORTS +
      `export async function retryBatch(batchId: string) {
  await Job.update({ status: "pending" }, { where: { batchId, status: { [Op.in]: ["failed", "cancelled"] } } });
}`,
    // reporting reads
    IMPORTS +
      `export async function dashboard() {
  const running = await Job.findAll({ where: { status: "running" } });
  const mine = await Job.findAndCountAll({ where: { status: { [Op.or]: ["running", "queued"] } } });
  return { running, mine };
}`,
    // a where built with sequelize.where is opaque: no guess about what it excludes
    IMPORTS +
      `export async function start(id: string) {
  await Job.update({ status: "running" }, {
    where: { id, [Op.and]: [sequelize.where(sequelize.fn("coalesce", sequelize.col("status"), "new"), { [Op.ne]: "running" })] },
  });
}`,
    // an instance updated by its identity, with no check before: not a claim
    IMPORTS +
      `export async function touch(id: string) {
  const job = await Job.findByPk(id);
  await job.update({ status: "running", startedAt: sequelize.fn("NOW") });
}`,
    // TypeORM uses the same method names: a where with its find operators is not ours
    `export async function start(id: string) {
  const job = await jobs.findOne({ where: { id, status: Not("running") } });
  if (!job) return;
  await jobs.save({ ...job, status: "done" });
}`,
    // Mongoose documents in a module that does not use Sequelize
    `export async function start(id: string) {
  const job = await Job.findById(id);
  job.status = "running";
  await job.save();
}`,
  ],
  invalid: [
    {
      code: IMPORTS + CLAIM,
      errors: [{ messageId: "missingRecovery", line: 3, column: 21, data: lock("running", 3), suggestions: [] }],
    },
    {
      // plain JavaScript, CommonJS, a defined model, .then
      code: `const { Op } = require("sequelize");
const ExportModel = sequelize.define("Export", {});
function start(id) {
  return ExportModel.update({ state: "rendering" }, { where: { id, state: { [Op.in]: ["queued", "failed"] } } })
    .then(([count]) => count === 1);
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          column: 10,
          data: lock("rendering", 4, "Export", "state"),
          suggestions: [],
        },
      ],
    },
    {
      // legacy string operators and a recovery of another value
      code: `export async function take(id: string, me: string) {
  await Upload.update({ status: "processing", owner: me }, { where: { id, status: "pending", owner: { $eq: null } } });
}
export async function reset(cutoff: Date) {
  await Upload.update({ status: "pending" }, { where: { status: "scanning", updatedAt: { $lt: cutoff } } });
}`,
      errors: [
        { messageId: "missingRecovery", line: 2, column: 9, data: lock("processing", 2, "Upload"), suggestions: [] },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    // a compare-and-set after the check
    IMPORTS +
      `export async function start(id: string) {
  const job = await Job.findByPk(id);
  if (job.status !== "queued") return;
  await Job.update({ status: "running" }, { where: { id, status: "queued" } });
}`,
    // the check is about another model's row
    IMPORTS +
      `export async function start(projectId: string, jobId: string) {
  const project = await Project.findByPk(projectId);
  if (project.status !== "active") throw new Error("inactive");
  await Job.update({ status: "running" }, { where: { id: jobId } });
}`,
    // a locking read in a transaction, then a compare-and-set
    IMPORTS +
      `export async function next() {
  return sequelize.transaction(async (t) => {
    const job = await Job.findOne({ where: { status: "queued" }, lock: t.LOCK.UPDATE, skipLocked: true, transaction: t });
    if (!job) return null;
    await Job.update({ status: "running" }, { where: { id: job.id, status: "queued" }, transaction: t });
    return job;
  });
}`,
  ],
  invalid: [
    {
      // an instance checked in JavaScript and saved, inside a transaction: no filter to extend
      code:
        IMPORTS +
        `export async function start(id: string) {
  await sequelize.transaction(async (t) => {
    const job = await Job.findByPk(id, { transaction: t });
    if (job.status === "running") return;
    job.status = "running";
    job.startedAt = new Date();
    await job.save({ transaction: t });
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 8,
          column: 11,
          data: { ...lock("running", 8), checkedWhere: "in JavaScript", checkLine: "5" },
          suggestions: [],
        },
      ],
    },
    {
      // a read of queued rows, then a static update by id: the condition goes into the where
      code:
        IMPORTS +
        `export async function next() {
  const job = await Job.findOne({ where: { status: "queued" }, order: [["createdAt", "ASC"]] });
  if (!job) return;
  await Job.update({ status: "running" }, { where: { id: job.id } });
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
                `export async function next() {
  const job = await Job.findOne({ where: { status: "queued" }, order: [["createdAt", "ASC"]] });
  if (!job) return;
  await Job.update({ status: "running" }, { where: { id: job.id, status: { [Op.ne]: "running" } } });
}`,
            },
          ],
        },
      ],
    },
    {
      // plain JavaScript with .then; Op from require
      code: `const { Op } = require("sequelize");
function start(id) {
  return Job.findByPk(id).then((job) => {
    if (job.status === "running") return false;
    return Job.update({ status: "running" }, { where: { id } });
  });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 12,
          data: { ...lock("running", 5), checkedWhere: "in JavaScript", checkLine: "4" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("running", 5), checkedWhere: "in JavaScript", checkLine: "4" },
              output: `const { Op } = require("sequelize");
function start(id) {
  return Job.findByPk(id).then((job) => {
    if (job.status === "running") return false;
    return Job.update({ status: "running" }, { where: { id, status: { [Op.ne]: "running" } } });
  });
}`,
            },
          ],
        },
      ],
    },
    {
      // a class service: instance update after a check; and a model held as this.jobModel
      code:
        IMPORTS +
        `export class Jobs {
  async start(id: string) {
    const job = await this.jobModel.findByPk(id);
    if (job.status === "processing") throw new Error("busy");
    await job.update({ status: "processing" });
  }
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 11,
          data: { ...lock("processing", 6, "job"), checkedWhere: "in JavaScript", checkLine: "5" },
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
      CLAIM +
      `export async function recover(cutoff: Date) {
  await Job.update({ status: "failed" }, { where: { status: "running", heartbeatAt: { [Op.lt]: cutoff } } });
}`,
    // a delete of finished rows is not a recovery
    IMPORTS +
      CLAIM +
      `export async function purge(cutoff: Date) {
  await Job.destroy({ where: { status: "done", updatedAt: { [Op.lt]: cutoff } } });
}`,
  ],
  invalid: [
    {
      // judges age but not the status
      code:
        IMPORTS +
        CLAIM +
        `export async function recover(cutoff: Date) {
  await Job.update({ status: "failed" }, { where: { heartbeatAt: { [Op.lt]: cutoff } } });
}`,
      errors: [
        {
          messageId: "missingStatus",
          line: 7,
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
                CLAIM +
                `export async function recover(cutoff: Date) {
  await Job.update({ status: "failed" }, { where: { heartbeatAt: { [Op.lt]: cutoff }, status: "running" } });
}`,
            },
          ],
        },
      ],
    },
    {
      // every running row at boot
      code:
        IMPORTS +
        CLAIM +
        `export async function onBoot() {
  await Job.update({ status: "queued" }, { where: { status: "running" } });
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 7,
          column: 9,
          data: { ...lock("running", 3), target: "queued", rowFilter: "its filter", checkedWhere: "", checkLine: "" },
          suggestions: [],
        },
      ],
    },
    {
      // staleness judged in JavaScript, then an instance save by id
      code:
        IMPORTS +
        CLAIM +
        `export async function unstick(id: string) {
  const job = await Job.findByPk(id);
  if (job.status === "running" && Date.now() - job.heartbeatAt.getTime() > 60_000) {
    job.status = "failed";
    await job.save();
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 10,
          column: 11,
          data: {
            ...lock("running", 3),
            target: "failed",
            rowFilter: "id",
            checkedWhere: "in JavaScript",
            checkLine: "8",
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
      CLAIM +
      `export async function recover(cutoff: Date) {
  await Job.update({ status: "queued" }, { where: { status: "running", heartbeatAt: { [Op.lt]: cutoff } } });
}`,
    // started after the cutoff: not an age check
    IMPORTS +
      `export async function recent(cutoff: Date) {
  return Job.findAll({ where: { status: "running", startedAt: { [Op.gt]: cutoff } } });
}`,
  ],
  invalid: [
    {
      // the sweeper judges death by the creation time
      code:
        IMPORTS +
        CLAIM +
        `export async function sweep(cutoff: Date) {
  await Job.update({ status: "queued" }, { where: { status: "running", createdAt: { [Op.lt]: cutoff } } });
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 7,
          column: 72,
          data: {
            ...lock("running", 3),
            stamped: "set once when work starts",
            timeField: "createdAt",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
    {
      // a stale scan by start time, in a defined model
      code:
        IMPORTS +
        `const Task = sequelize.define("BackgroundTask", {});
export async function findStuck(cutoff: Date) {
  return Task.findAll({ where: { status: { [Op.in]: ["processing"] }, startedAt: { [Op.lte]: cutoff } } });
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 4,
          column: 71,
          data: {
            model: "BackgroundTask",
            field: "status",
            value: "processing",
            timeField: "startedAt",
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
  await Task.update({ status: "locked", lockedAt: Sequelize.literal("CURRENT_TIMESTAMP") }, {
    where: { id, [Op.or]: [{ status: { [Op.ne]: "locked" } }, { lockedAt: { [Op.lt]: new Date(Date.now() - 60_000) } }] },
  });
}`,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 4,
          column: 65,
          data: {
            ...lock("locked", 3, "Task"),
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
  const [n] = await Job.update({ status: "running", lockedBy: me }, { where: { id, status: { [Op.ne]: "running" } } });
  if (n === 0) return;
  await work(id);
  await Job.update({ status: "done", lockedBy: null }, { where: { id, lockedBy: me } });
}`,
    // the failure path requires the claimed status
    IMPORTS +
      `export async function run(id: string) {
  const [n] = await Job.update({ status: "running" }, { where: { id, status: { [Op.ne]: "running" } } });
  if (n === 0) return;
  try { await work(id); } catch {
    await Job.update({ status: "failed" }, { where: { id, status: "running" } });
  }
}`,
  ],
  invalid: [
    recoveredElsewhere({
      // the completion writes by id only
      code:
        IMPORTS +
        `export async function run(id: string) {
  const [n] = await Job.update({ status: "running" }, { where: { id, status: { [Op.ne]: "running" } } });
  if (n === 0) return;
  await work(id);
  await Job.update({ status: "done" }, { where: { id } });
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 6,
          column: 9,
          data: { ...lock("running", 3), target: "done" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...lock("running", 3), target: "done" },
              output:
                IMPORTS +
                `export async function run(id: string) {
  const [n] = await Job.update({ status: "running" }, { where: { id, status: { [Op.ne]: "running" } } });
  if (n === 0) return;
  await work(id);
  await Job.update({ status: "done" }, { where: { id, status: "running" } });
}`,
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      // a class service whose completion saves the instance it read
      code:
        IMPORTS +
        `export class Runner {
  async run(id: string) {
    const [n] = await Job.update({ status: "running" }, { where: { id, status: { [Op.ne]: "running" } } });
    if (n === 0) return;
    await this.complete(id);
  }
  async complete(id: string) {
    const job = await Job.findByPk(id);
    job.status = "done";
    await job.save();
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 11,
          column: 11,
          data: { ...lock("running", 4), target: "done" },
          suggestions: [],
        },
      ],
    }),
  ],
});
