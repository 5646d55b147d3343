// TypeORM through the five database rules: `repository.update(criteria, partial)` with find operators,
// `manager.update(Job, criteria, partial)` in transactions, query builder chains recognised at `.execute()`,
// `findOne`/`findOneBy`/`find` reads and active-record saves (`job.status = …; await repo.save(job)`).
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester, recoveredElsewhere } from "../rule-tester.js";

const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
const lock = (model: string, value: string, claimLine: number, field = "status") => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
});

/** A NestJS service head: the repository is known by `@InjectRepository` (lines 1–7; the first method starts at line 8). */
const NEST = `import { Injectable } from "@nestjs/common";
import { InjectRepository } from "@nestjs/typeorm";
import { In, IsNull, LessThan, Not, Repository } from "typeorm";
enum RenderStatus { Queued = "queued", Rendering = "rendering", Done = "done", Failed = "failed" }
@Injectable()
export class RenderService {
  constructor(@InjectRepository(RenderJob) private readonly jobs: Repository<RenderJob>) {}
`;
/** The conditional claim most cases pair with, at line 9. */
const NEST_CLAIM = `  async claim(id: string) {
    const res = await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering });
    return res.affected === 1;
  }
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    // claim and a conditional recovery on the progress timestamp
    NEST +
      NEST_CLAIM +
      `  async requeue(cutoff: Date) {
    await this.jobs.update({ status: RenderStatus.Rendering, updatedAt: LessThan(cutoff) }, { status: RenderStatus.Queued });
  }
}`,
    // the sweeper's fragment judges age as elapsed time (EXTRACT(EPOCH FROM now() - col) > n), and MySQL's DATE_SUB:
    // read by the project's SQL parser, as raw SQL is
    `import { DataSource, Not } from "typeorm";
export async function claim(ds: DataSource, id: string) {
  return ds.getRepository(Export).update({ id, status: Not("RENDERING") }, { status: "RENDERING" });
}
export async function requeueStale(ds: DataSource) {
  await ds.createQueryBuilder().update(Export).set({ status: "QUEUED" })
    .where("status = :s", { s: "RENDERING" })
    .andWhere("EXTRACT(EPOCH FROM now() - updated_at) > :secs", { secs: 600 })
    .execute();
}`,
    `import { DataSource, Not } from "typeorm";
export async function claim(ds: DataSource, id: string) {
  return ds.getRepository(Export).update({ id, status: Not("RENDERING") }, { status: "RENDERING" });
}
export async function requeueStale(ds: DataSource) {
  await ds.createQueryBuilder().update(Export).set({ status: "QUEUED" })
    .where("status = 'RENDERING' AND updated_at < DATE_SUB(NOW(), INTERVAL 10 MINUTE)")
    .execute();
}`,
    // query builder claim; the sweeper is a query builder too, its age written in SQL
    `import { DataSource } from "typeorm";
export class ExportWorker {
  constructor(private readonly dataSource: DataSource) {}
  async claim(id: string) {
    const res = await this.dataSource.createQueryBuilder().update(Export).set({ status: "EXPORTING" })
      .where("id = :id", { id }).andWhere("status != :busy", { busy: "EXPORTING" }).execute();
    return res.affected === 1;
  }
  async sweep() {
    await this.dataSource.createQueryBuilder().update(Export).set({ status: "QUEUED" })
      .where("status = 'EXPORTING'").andWhere("heartbeat_at < NOW() - INTERVAL '5 minutes'").execute();
  }
}`,
    // a lease: the claim takes over rows whose lease ran out (parenthesised OR in the where string)
    `import { Repository } from "typeorm";
export async function lease(tasks: Repository<Task>, id: string, me: string) {
  await tasks.createQueryBuilder().update().set({ status: "LOCKED", lockedBy: me, lockedUntil: () => "NOW() + INTERVAL '30 seconds'" })
    .where("id = :id", { id }).andWhere("(status <> :locked OR locked_until < NOW())", { locked: "LOCKED" }).execute();
}`,
    // a plain state transition and a bulk move into a waiting state
    `import { In } from "typeorm";
export class Billing {
  constructor(private readonly orderRepository: Repository<Order>) {}
  async pay(id: string) { await this.orderRepository.update({ id, status: "PENDING" }, { status: "PAID", paidAt: new Date() }); }
  async retry(batchId: string) { await this.orderRepository.update({ batchId, status: In(["FAILED"]) }, { status: "PENDING" }); }
}`,
    // an update by id alone, nothing checked before it: not a claim
    `import { Repository } from "typeorm";
export async function markStarted(jobRepository: Repository<Job>, id: string) {
  await jobRepository.update(id, { status: "RUNNING", startedAt: new Date() });
}`,
    // reporting reads
    NEST +
      `  async dashboard() {
    const rendering = await this.jobs.find({ where: { status: RenderStatus.Rendering } });
    const stuck = await this.jobs.count({ where: { status: RenderStatus.Rendering, updatedAt: LessThan(new Date()) } });
    return { rendering, stuck };
  }
}`,
    // plain JavaScript: EntityManager claim in a transaction, recovered through getRepository
    {
      code: `const { LessThan, Not } = require("typeorm");
async function start(dataSource, id) {
  await dataSource.transaction(async (manager) => {
    await manager.update(Sync, { id, state: Not("SYNCING") }, { state: "SYNCING" });
  });
}
async function unstick(dataSource, cutoff) {
  await dataSource.getRepository(Sync).update({ state: "SYNCING", heartbeatAt: LessThan(cutoff) }, { state: "IDLE" });
}`,
      languageOptions: javascript,
    },
    // a custom repository: the claim and its recovery (LessThanOrEqual, Not(IsNull())) are methods on `this`
    `import { Equal, IsNull, LessThanOrEqual, Not, Repository } from "typeorm";
export class JobRepository extends Repository<Job> {
  claim(id: string, me: string) {
    return this.update({ id, status: Not(Equal("RUNNING")) }, { status: "RUNNING", lockedBy: me });
  }
  release(cutoff: Date) {
    return this.update({ status: "RUNNING", heartbeatAt: LessThanOrEqual(cutoff), lockedBy: Not(IsNull()) }, { status: "QUEUED", lockedBy: null });
  }
}`,
    // a Map and a Mongoose model are not TypeORM repositories
    `import { Not } from "typeorm";
export async function other(cache: Map<string, unknown>, id: string) {
  cache.update(id, { status: "RUNNING" });
  await this.jobModel.update({ _id: id }, { $set: { status: "RUNNING" } });
}`,
  ],
  invalid: [
    {
      // the Nest service claims, and nothing in the module moves a stalled row back
      code: NEST + NEST_CLAIM + `}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 9,
          column: 23,
          data: { model: "RenderJob", field: "status", value: "rendering" },
        },
      ],
    },
    {
      // query builder claim, recognised once at execute()
      code: `import { DataSource } from "typeorm";
export async function claim(dataSource: DataSource, id: string) {
  const res = await dataSource.createQueryBuilder().update(Export).set({ status: "EXPORTING" })
    .where("id = :id", { id }).andWhere("status <> :busy", { busy: "EXPORTING" }).execute();
  return res.affected === 1;
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 3,
          column: 21,
          data: { model: "Export", field: "status", value: "EXPORTING" },
        },
      ],
    },
    {
      // plain JavaScript: manager.update in a transaction callback
      code: `const { Not } = require("typeorm");
async function start(dataSource, id) {
  await dataSource.transaction(async (manager) => {
    await manager.update(Sync, { id, state: Not("SYNCING") }, { state: "SYNCING" });
  });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          column: 11,
          data: { model: "Sync", field: "state", value: "SYNCING" },
        },
      ],
    },
    {
      // the sweeper recovers another entity: it does not answer the render claim
      code:
        NEST +
        NEST_CLAIM +
        `  async requeueExports(cutoff: Date) {
    await this.exportRepository.update({ status: "EXPORTING", updatedAt: LessThan(cutoff) }, { status: "QUEUED" });
  }
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 9,
          column: 23,
          data: { model: "RenderJob", field: "status", value: "rendering" },
        },
      ],
    },
    {
      // a custom repository whose only other write moves fresh rows (MoreThan is not an age)
      code: `import { Equal, MoreThan, Not, Repository } from "typeorm";
export class JobRepository extends Repository<Job> {
  claim(id: string) {
    return this.update({ id, status: Not(Equal("RUNNING")) }, { status: "RUNNING" });
  }
  bump(since: Date) {
    return this.update({ status: "RUNNING", updatedAt: MoreThan(since) }, { priority: 1 });
  }
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          column: 12,
          data: { model: "Job", field: "status", value: "RUNNING" },
        },
      ],
    },
    {
      // .then instead of await, and Not(In([…])) through getRepository on a manager
      code: `import { In, Not } from "typeorm";
export function claim(dataSource: DataSource, id: number) {
  return dataSource.manager.getRepository(Import).update({ id, phase: Not(In(["PARSING", "DONE"])) }, { phase: "PARSING" })
    .then((r) => r.affected === 1);
}`,
      errors: [
        {
          messageId: "missingRecovery",
          line: 3,
          column: 10,
          data: { model: "Import", field: "phase", value: "PARSING" },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    // the recovery judges the heartbeat
    NEST +
      NEST_CLAIM +
      `  async requeue(cutoff: Date) {
    await this.jobs.update({ status: RenderStatus.Rendering, updatedAt: LessThan(cutoff) }, { status: RenderStatus.Queued });
  }
}`,
    // a stale scan by heartbeat through the query builder
    `export async function stalled(dataSource: DataSource, cutoff: Date) {
  return dataSource.getRepository(Job).createQueryBuilder("job")
    .where("job.status = :s", { s: "RUNNING" }).andWhere("job.heartbeatAt < :cutoff", { cutoff }).getMany();
}`,
    // a start time compared for a report, not with an in-progress status
    `import { LessThan } from "typeorm";
export async function old(jobRepository: Repository<Job>, cutoff: Date) {
  return jobRepository.findBy({ status: "DONE", createdAt: LessThan(cutoff) });
}`,
  ],
  invalid: [
    {
      // the sweeper judges death by the start time
      code:
        NEST +
        `  async claim(id: string) {
    await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering, startedAt: new Date() });
  }
  async requeue(cutoff: Date) {
    await this.jobs.update({ status: RenderStatus.Rendering, startedAt: LessThan(cutoff) }, { status: RenderStatus.Queued });
  }
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 12,
          column: 62,
          suggestions: [],
          data: {
            ...lock("RenderJob", "rendering", 9),
            stamped: "set once when work starts",
            timeField: "startedAt",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      // rows read under a pessimistic lock and re-queued in the transaction: judged once, as the recovery
      code:
        NEST +
        NEST_CLAIM +
        `  async requeue(cutoff: Date) {
    await this.jobs.manager.transaction(async (em) => {
      const stale = await em.find(RenderJob, { where: { status: RenderStatus.Rendering, startedAt: LessThan(cutoff) }, lock: { mode: "pessimistic_write" } });
      for (const job of stale) {
        job.status = RenderStatus.Queued;
        await em.save(job);
      }
    });
  }
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 14,
          column: 89,
          suggestions: [],
          data: {
            ...lock("RenderJob", "rendering", 9),
            stamped: "set once when work starts",
            timeField: "startedAt",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      // a query builder scan whose age is the creation time, written threshold-first
      code: `export async function stalled(dataSource: DataSource, cutoff: Date) {
  return dataSource.createQueryBuilder(Job, "job")
    .where("job.status = 'RUNNING'").andWhere(":cutoff > job.createdAt", { cutoff }).getMany();
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 3,
          column: 47,
          suggestions: [],
          data: { model: "Job", field: "status", value: "RUNNING", timeField: "createdAt", progressFields: PROGRESS },
        },
      ],
    },
    {
      // a lease claim that takes over by the time the lock was taken
      code: `export async function take(dataSource: DataSource, id: string, me: string) {
  await dataSource.createQueryBuilder().update(Lock).set({ state: "LOCKED", owner: me, lockedAt: () => "NOW()" })
    .where("id = :id", { id }).andWhere("(state <> 'LOCKED' OR locked_at < NOW() - INTERVAL '1 minute')").execute();
}`,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 3,
          column: 41,
          suggestions: [],
          data: {
            ...lock("Lock", "LOCKED", 2, "state"),
            stamped: "set once when work starts",
            timeField: "locked_at",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      // a stale scan whose age is a Raw SQL fragment on the start time
      code: `import { Raw } from "typeorm";
export async function stalled(jobRepository: Repository<Job>) {
  return jobRepository.find({ where: { status: "RUNNING", startedAt: Raw((col) => \`\${col} < NOW() - INTERVAL '1 hour'\`) } });
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 3,
          column: 59,
          suggestions: [],
          data: { model: "Job", field: "status", value: "RUNNING", timeField: "startedAt", progressFields: PROGRESS },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    // one conditional write: status and age in the filter
    NEST +
      NEST_CLAIM +
      `  async requeue(cutoff: Date) {
    await this.jobs.update({ status: RenderStatus.Rendering, updatedAt: LessThan(cutoff) }, { status: RenderStatus.Queued });
  }
}`,
    // rows read under a pessimistic write lock keep their status and age until the transaction ends
    NEST +
      NEST_CLAIM +
      `  async requeue(cutoff: Date) {
    await this.jobs.manager.transaction(async (em) => {
      const stale = await em.find(RenderJob, { where: { status: RenderStatus.Rendering, updatedAt: LessThan(cutoff) }, lock: { mode: "pessimistic_write" } });
      for (const job of stale) {
        job.status = RenderStatus.Queued;
        await em.save(job);
      }
    });
  }
}`,
    // age judged in JavaScript, then a compare-and-set on what was read
    NEST +
      NEST_CLAIM +
      `  async reconcile(id: string) {
    const job = await this.jobs.findOneByOrFail({ id });
    if (Date.now() - job.updatedAt.getTime() < 60_000) return;
    await this.jobs.update({ id, status: job.status, updatedAt: job.updatedAt }, { status: RenderStatus.Failed });
  }
}`,
  ],
  invalid: [
    {
      // a stale scan, then each row saved by its id: a holder that finishes in between is overwritten
      code:
        NEST +
        NEST_CLAIM +
        `  async requeue(cutoff: Date) {
    const stale = await this.jobs.find({ where: { status: RenderStatus.Rendering, updatedAt: LessThan(cutoff) } });
    for (const job of stale) {
      job.status = RenderStatus.Queued;
      await this.jobs.save(job);
    }
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 16,
          column: 13,
          suggestions: [],
          data: {
            ...lock("RenderJob", "rendering", 9),
            target: "queued",
            rowFilter: "id",
            checkedWhere: "with a separate read",
            checkLine: "13",
          },
        },
      ],
    },
    {
      // age judged in an if, then an update by id
      code: `import { Not } from "typeorm";
export class Imports {
  constructor(private readonly importRepo: Repository<Import>) {}
  async start(id: string) { await this.importRepo.update({ id, status: Not("PARSING") }, { status: "PARSING" }); }
  async watchdog(id: string) {
    const row = await this.importRepo.findOneByOrFail({ id });
    if (Date.now() - row.heartbeatAt.getTime() > 120_000) {
      await this.importRepo.update(id, { status: "FAILED" });
    }
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 8,
          column: 13,
          suggestions: [],
          data: {
            ...lock("Import", "PARSING", 4),
            target: "FAILED",
            rowFilter: "id",
            checkedWhere: "in JavaScript",
            checkLine: "7",
          },
        },
      ],
    },
    {
      // the age is in the filter, the claimed status is not: a row that completed is moved back
      code:
        NEST +
        NEST_CLAIM +
        `  async requeue(cutoff: Date) {
    await this.jobs.update({ updatedAt: LessThan(cutoff) }, { status: RenderStatus.Queued });
  }
}`,
      errors: [
        {
          messageId: "missingStatus",
          line: 13,
          column: 11,
          data: {
            ...lock("RenderJob", "rendering", 9),
            target: "queued",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [
            {
              messageId: "addStatus",
              data: {
                ...lock("RenderJob", "rendering", 9),
                target: "queued",
                rowFilter: "its filter",
                checkedWhere: "",
                checkLine: "",
              },
              output:
                NEST +
                NEST_CLAIM +
                `  async requeue(cutoff: Date) {
    await this.jobs.update({ updatedAt: LessThan(cutoff), status: RenderStatus.Rendering }, { status: RenderStatus.Queued });
  }
}`,
            },
          ],
        },
      ],
    },
    {
      // plain JavaScript: a boot-time reset of every running row, alive or not (query builder)
      code: `const { Not } = require("typeorm");
async function claim(dataSource, id) {
  await dataSource.createQueryBuilder().update(Job).set({ status: "RUNNING" }).where({ id, status: Not("RUNNING") }).execute();
}
async function onBoot(dataSource) {
  await dataSource.createQueryBuilder().update(Job).set({ status: "FAILED" }).where("status = :s", { s: "RUNNING" }).execute();
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingTime",
          line: 6,
          column: 9,
          suggestions: [],
          data: {
            ...lock("Job", "RUNNING", 3),
            target: "FAILED",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
        },
      ],
    },
  ],
});

const claimData = (
  model: string,
  value: string,
  claimLine: number,
  checkedWhere: string,
  checkLine: number,
  field = "status",
) => ({
  ...lock(model, value, claimLine, field),
  checkedWhere,
  checkLine: String(checkLine),
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    // a JS check, but the write is conditional too
    NEST +
      `  async start(id: string) {
    const job = await this.jobs.findOneByOrFail({ id });
    if (job.status === RenderStatus.Rendering) return false;
    const res = await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering });
    return res.affected === 1;
  }
}`,
    // read under a pessimistic write lock in a transaction, then checked and saved: the row cannot change in between
    `import { DataSource } from "typeorm";
export async function start(dataSource: DataSource, id: string) {
  await dataSource.transaction(async (manager) => {
    const job = await manager.findOne(Job, { where: { id }, lock: { mode: "pessimistic_write" } });
    if (!job || job.status === "RUNNING") return;
    job.status = "RUNNING";
    await manager.save(job);
  });
}`,
    // a compare-and-set on the status that was read
    `import { Repository } from "typeorm";
export async function start(jobRepository: Repository<Job>, id: string) {
  const job = await jobRepository.findOneByOrFail({ id });
  if (job.status !== "QUEUED") return;
  await jobRepository.update({ id, status: job.status }, { status: "RUNNING" });
}`,
    // a heartbeat after the check writes no status
    `import { Repository } from "typeorm";
export async function beat(jobRepository: Repository<Job>, id: string, progress: number) {
  const job = await jobRepository.findOneByOrFail({ id });
  if (job.status !== "RUNNING") return;
  job.progress = progress;
  await jobRepository.save(job);
}`,
    // a business transition after a check: not a lock
    `import { Repository } from "typeorm";
export async function pay(invoiceRepository: Repository<Invoice>, id: string) {
  const invoice = await invoiceRepository.findOneByOrFail({ id });
  if (invoice.status === "PAID") return;
  invoice.status = "PAID";
  await invoiceRepository.save(invoice);
}`,
    // a new entity saved: an insert, not a claim of an existing row
    `import { Repository } from "typeorm";
export async function enqueue(jobRepository: Repository<Job>, existing: Job | null) {
  if (existing && existing.status === "RUNNING") return;
  const job = jobRepository.create({ kind: "render" });
  job.status = "RUNNING";
  await jobRepository.save(job);
}`,
  ],
  invalid: [
    {
      // read, check in JS, update by id: the suggestion turns the id into a conditional criteria object
      code:
        NEST +
        `  async start(id: string) {
    const job = await this.jobs.findOneByOrFail({ id });
    if (job.status === RenderStatus.Rendering) return;
    await this.jobs.update(id, { status: RenderStatus.Rendering });
  }
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 11,
          column: 11,
          data: claimData("RenderJob", "rendering", 11, "in JavaScript", 10),
          // the whole fix: the check's own `return` when the update affected no row
          suggestions: [
            {
              messageId: "addConditionAndExit",
              data: { field: "status", value: "rendering", exit: "return", checkLine: "10" },
              output:
                NEST +
                `  async start(id: string) {
    const job = await this.jobs.findOneByOrFail({ id });
    if (job.status === RenderStatus.Rendering) return;
    const claimed = await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering });
    if (claimed.affected === 0) return;
  }
}`,
            },
          ],
        },
      ],
    },
    {
      // active record: the field assigned, then saved; no filter to extend, so no suggestion
      code: `import { Repository } from "typeorm";
export class Reports {
  constructor(private readonly reportRepository: Repository<Report>) {}
  async generate(id: string) {
    const report = await this.reportRepository.findOneByOrFail({ id });
    if (report.state !== "IDLE") throw new Error("busy");
    report.state = "GENERATING";
    report.startedAt = new Date();
    await this.reportRepository.save(report);
  }
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 9,
          column: 11,
          data: claimData("Report", "GENERATING", 9, "in JavaScript", 6, "state"),
          suggestions: [],
        },
      ],
    },
    {
      // a separate read that excludes the value, then the EntityManager writes by id inside a transaction
      code: `import { DataSource, Not } from "typeorm";
export async function next(dataSource: DataSource) {
  const job = await dataSource.manager.findOne(Job, { where: { status: "QUEUED" }, order: { createdAt: "ASC" } });
  if (!job) return null;
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, job.id, { status: "RUNNING" });
  });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 11,
          data: claimData("Job", "RUNNING", 6, "with a separate read", 3),
          suggestions: [
            {
              messageId: "addCondition",
              data: claimData("Job", "RUNNING", 6, "with a separate read", 3),
              output: `import { DataSource, Not } from "typeorm";
export async function next(dataSource: DataSource) {
  const job = await dataSource.manager.findOne(Job, { where: { status: "QUEUED" }, order: { createdAt: "ASC" } });
  if (!job) return null;
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, { id: job.id, status: Not("RUNNING") }, { status: "RUNNING" });
  });
}`,
            },
          ],
        },
      ],
    },
    {
      // query builder after a JS check: the suggestion adds an andWhere
      code: `import { DataSource } from "typeorm";
export async function start(dataSource: DataSource, job: Job) {
  if (job.status === "RUNNING") return;
  await dataSource.createQueryBuilder().update(Job).set({ status: "RUNNING" }).where("id = :id", { id: job.id }).execute();
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: claimData("Job", "RUNNING", 4, "in JavaScript", 3),
          suggestions: [
            {
              messageId: "addCondition",
              data: claimData("Job", "RUNNING", 4, "in JavaScript", 3),
              output: `import { DataSource } from "typeorm";
export async function start(dataSource: DataSource, job: Job) {
  if (job.status === "RUNNING") return;
  await dataSource.createQueryBuilder().update(Job).set({ status: "RUNNING" }).where("id = :id", { id: job.id }).andWhere("status <> :status", { status: "RUNNING" }).execute();
}`,
            },
          ],
        },
      ],
    },
    {
      // BaseEntity active record in plain JavaScript; Not is not imported, so no suggestion either way
      code: `const { BaseEntity } = require("typeorm");
async function sync(account) {
  if (account.syncState === "SYNCING") return;
  account.syncState = "SYNCING";
  await account.save();
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: claimData("account", "SYNCING", 5, "in JavaScript", 3, "syncState"),
          suggestions: [],
        },
      ],
    },
    {
      // the Not operator is not imported: the id criteria gets no suggestion
      code: `import { Repository } from "typeorm";
export async function start(jobRepository: Repository<Job>, id: string) {
  const job = await jobRepository.findOneBy({ id, status: "QUEUED" });
  if (!job) return;
  await jobRepository.update(id, { status: "RUNNING" });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: claimData("Job", "RUNNING", 5, "with a separate read", 3),
          suggestions: [],
        },
      ],
    },
  ],
});

const fence = (model: string, value: string, claimLine: number, target: string, field = "status") => ({
  ...lock(model, value, claimLine, field),
  target,
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    // the completion requires the claimed status
    NEST +
      `  async render(id: string) {
    const res = await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering });
    if (!res.affected) return;
    await this.jobs.update({ id, status: RenderStatus.Rendering }, { status: RenderStatus.Done });
  }
}`,
    // fenced by the owner column the claim wrote
    `import { IsNull, Not, Repository } from "typeorm";
export async function run(jobRepository: Repository<Job>, id: string, workerId: string) {
  await jobRepository.update({ id, status: Not("RUNNING") }, { status: "RUNNING", lockedBy: workerId });
  await jobRepository.update({ id, lockedBy: workerId }, { status: "DONE", lockedBy: null });
}`,
    // query builder completion fenced in its where string
    `import { DataSource, Not } from "typeorm";
export async function run(dataSource: DataSource, id: string) {
  await dataSource.getRepository(Job).update({ id, status: Not("RUNNING") }, { status: "RUNNING" });
  await dataSource.createQueryBuilder().update(Job).set({ status: "DONE" }).where("id = :id AND status = :s", { id, s: "RUNNING" }).execute();
}`,
    // a write before the claim is not the holder's
    `import { Not, Repository } from "typeorm";
export async function restart(jobRepository: Repository<Job>, id: string) {
  await jobRepository.update(id, { status: "QUEUED" });
  await jobRepository.update({ id, status: Not("RUNNING") }, { status: "RUNNING" });
}`,
    // completion through the claim's own manager, before the transaction commits: the claim's write keeps the row
    // locked to every sweeper and claimer until then
    {
      code: `const { Not } = require("typeorm");
async function run(dataSource, id) {
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, { id, status: Not("RUNNING") }, { status: "RUNNING" });
    await renderJob(manager, id);
    await manager.update(Job, id, { status: "DONE" });
  });
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    recoveredElsewhere({
      // completion by id: the suggestion writes the fence into a criteria object
      code:
        NEST +
        `  async render(id: string) {
    const res = await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering });
    if (!res.affected) return;
    await this.renderer.render(id);
    await this.jobs.update(id, { status: RenderStatus.Done });
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 12,
          column: 11,
          data: fence("RenderJob", "rendering", 9, "done"),
          suggestions: [
            {
              messageId: "addFence",
              data: fence("RenderJob", "rendering", 9, "done"),
              output:
                NEST +
                `  async render(id: string) {
    const res = await this.jobs.update({ id, status: Not(RenderStatus.Rendering) }, { status: RenderStatus.Rendering });
    if (!res.affected) return;
    await this.renderer.render(id);
    await this.jobs.update({ id, status: RenderStatus.Rendering }, { status: RenderStatus.Done });
  }
}`,
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      // failure in another method the claim reaches, as an active-record save: no filter to extend
      code: `import { Not, Repository } from "typeorm";
export class Worker {
  constructor(private readonly jobRepository: Repository<Job>) {}
  async run(id: string) {
    await this.jobRepository.update({ id, status: Not("RUNNING") }, { status: "RUNNING" });
    await this.fail(id);
  }
  async fail(id: string) {
    const job = await this.jobRepository.findOneByOrFail({ id });
    job.status = "FAILED";
    await this.jobRepository.save(job);
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 11,
          column: 11,
          data: fence("Job", "RUNNING", 5, "FAILED"),
          suggestions: [],
        },
      ],
    }),
    recoveredElsewhere({
      // query builder completion by whereInIds: the suggestion adds an andWhere
      code: `import { DataSource, Not } from "typeorm";
export async function run(dataSource: DataSource, id: string) {
  await dataSource.getRepository(Job).update({ id, status: Not("RUNNING") }, { status: "RUNNING" });
  await renderJob(id);
  await dataSource.createQueryBuilder().update(Job).set({ status: "DONE" }).whereInIds(id).execute();
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 5,
          column: 9,
          data: fence("Job", "RUNNING", 3, "DONE"),
          suggestions: [
            {
              messageId: "addFence",
              data: fence("Job", "RUNNING", 3, "DONE"),
              output: `import { DataSource, Not } from "typeorm";
export async function run(dataSource: DataSource, id: string) {
  await dataSource.getRepository(Job).update({ id, status: Not("RUNNING") }, { status: "RUNNING" });
  await renderJob(id);
  await dataSource.createQueryBuilder().update(Job).set({ status: "DONE" }).whereInIds(id).andWhere("status = :status", { status: "RUNNING" }).execute();
}`,
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      // plain JavaScript, transactions: completion through a second transaction's manager by id. (Sent through the
      // claim's own manager, before it commits, it would need no fence: the claim's write keeps the row locked.)
      code: `const { Not } = require("typeorm");
async function run(dataSource, id) {
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, { id, status: Not("RUNNING") }, { status: "RUNNING" });
  });
  await renderJob(id);
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, id, { status: "DONE" });
  });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 8,
          column: 11,
          data: fence("Job", "RUNNING", 4, "DONE"),
          suggestions: [
            {
              messageId: "addFence",
              data: fence("Job", "RUNNING", 4, "DONE"),
              output: `const { Not } = require("typeorm");
async function run(dataSource, id) {
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, { id, status: Not("RUNNING") }, { status: "RUNNING" });
  });
  await renderJob(id);
  await dataSource.transaction(async (manager) => {
    await manager.update(Job, { id, status: "RUNNING" }, { status: "DONE" });
  });
}`,
            },
          ],
        },
      ],
    }),
  ],
});
