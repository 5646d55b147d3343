// require-stale-recovery's suggestion (issue 18): the recovery written next to the claim, in the claim's own store
// syntax, from what the module shows (the value the claim takes rows from, the progress timestamp it stamps, a
// client in scope), and no suggestion where one of those would have to be guessed.
import { Linter } from "eslint";
import tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import rule from "../../rules/require-stale-recovery.js";
import plugin from "../../src/index.js";
import { ruleTester } from "../rule-tester.js";
import { typeCheck } from "../typecheck.js";

const recovery = (opts: {
  name: string;
  model: string;
  value: string;
  back: string;
  backText?: string;
  time: string;
  threshold: string;
  client: string;
  field?: string;
  stuckText?: string;
  indent?: string;
  method?: boolean;
  exported?: boolean;
  typed?: boolean;
}) => {
  const i = opts.indent ?? "";
  const field = opts.field ?? "status";
  const head = opts.method ? "async " : `${opts.exported === false ? "" : "export "}async function `;
  return [
    `${i}/**`,
    `${i} * Gives ${opts.model} rows left ${opts.value} by a holder that died (SIGKILL, OOM, a deploy) back to ${opts.back}, once`,
    `${i} * ${opts.time} has not moved for ${opts.threshold}. Run it from a scheduled sweeper, or before claiming.`,
    `${i} */`,
    `${i}${head}${opts.name}()${opts.typed === false ? "" : ": Promise<number>"} {`,
    `${i}  const result = await ${opts.client}.updateMany({`,
    `${i}    where: { ${field}: ${opts.stuckText ?? JSON.stringify(opts.value)}, ${opts.time}: { lt: new Date(Date.now() - ${opts.threshold}) } },`,
    `${i}    data: { ${field}: ${opts.backText ?? JSON.stringify(opts.back)} },`,
    `${i}  });`,
    `${i}  return result.count;`,
    `${i}}`,
  ].join("\n");
};
const constant = (threshold: string, model: string, value: string, time: string) =>
  `/** How long ${/^[aeiou]/i.test(model) ? "an" : "a"} ${model} row may stay ${value} without ${time} moving before its holder counts as dead. */\nconst ${threshold} = 15 * 60 * 1000;`;
const desc = (name: string, value: string, back: string, time: string, threshold: string) => ({
  name,
  value,
  back,
  timeField: time,
  threshold,
});

const CLAIM_FN_HEAD = `import { prisma } from "./db";

export async function startJob(id: string) {
  const claimed = await prisma.job.updateMany({
    where: { id, status: "PENDING" },
    data: { status: "RUNNING", updatedAt: new Date() },
  });
  return claimed.count === 1;
}
`;
const BEAT = `
/** The heartbeat: the job's progress timestamp, moved while the work runs. */
export async function touchJob(id: string) {
  const { count } = await prisma.job.updateMany({ where: { id, status: "RUNNING" }, data: { updatedAt: new Date() } });
  if (count === 0) throw new Error(\`job \${id} was taken over\`);
}
`;
/** `code` with `inserted` right after `head`, its first part, as a suggestion inserts it after the claiming function. */
const after = (head: string, inserted: string, rest: string) => `${head.trimEnd()}${inserted}\n${rest}`;
const CLAIM_FN = CLAIM_FN_HEAD + BEAT;
const FN_OUTPUT = after(
  CLAIM_FN_HEAD,
  `

${constant("STALE_JOB_RUNNING_MS", "job", "RUNNING", "updatedAt")}

${recovery({ name: "recoverStaleJob", model: "job", value: "RUNNING", back: "PENDING", time: "updatedAt", threshold: "STALE_JOB_RUNNING_MS", client: "prisma.job" })}`,
  BEAT,
);

const SERVICE = (recovered: string) => `import { Injectable } from "@nestjs/common";
import { RenderStatus } from "@prisma/client";
import { PrismaService } from "./prisma.service";

${recovered}/** Renders reports. */
@Injectable()
export class RenderService {
  constructor(private readonly prisma: PrismaService) {}

  async start(id: string): Promise<boolean> {
    const { count } = await this.prisma.report.updateMany({
      where: { id, renderStatus: { in: [RenderStatus.QUEUED, RenderStatus.FAILED] } },
      data: { renderStatus: RenderStatus.RENDERING, heartbeatAt: new Date() },
    });
    return count === 1;
  }
%METHOD%
  async heartbeat(id: string): Promise<void> {
    const { count } = await this.prisma.report.updateMany({ where: { id, renderStatus: RenderStatus.RENDERING }, data: { heartbeatAt: new Date() } });
    if (count === 0) throw new Error(\`report \${id} was taken over\`);
  }
}
`;
const SERVICE_CODE = SERVICE("").replace("%METHOD%", "");
const SERVICE_OUTPUT = SERVICE(
  `${constant("STALE_REPORT_RENDERING_MS", "report", "RENDERING", "heartbeatAt")}\n\n`,
).replace(
  "%METHOD%",
  `\n${recovery({
    name: "recoverStaleReport",
    model: "report",
    value: "RENDERING",
    back: "QUEUED",
    backText: "RenderStatus.QUEUED",
    stuckText: "RenderStatus.RENDERING",
    field: "renderStatus",
    time: "heartbeatAt",
    threshold: "STALE_REPORT_RENDERING_MS",
    client: "this.prisma.report",
    indent: "  ",
    method: true,
  })}\n`,
);

const COMMONJS_HEAD = `const { prisma } = require("./db");

async function startJob(id) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING", updatedAt: new Date() } });
}
`;
const COMMONJS_REST = `
async function touchJob(id) {
  const { count } = await prisma.job.updateMany({ where: { id, status: "RUNNING" }, data: { updatedAt: new Date() } });
  if (count === 0) throw new Error("taken over");
}
module.exports = { startJob, touchJob };
`;
const COMMONJS_OUTPUT = after(
  COMMONJS_HEAD,
  `

${constant("STALE_JOB_RUNNING_MS", "job", "RUNNING", "updatedAt")}

${recovery({ name: "recoverStaleJob", model: "job", value: "RUNNING", back: "PENDING", time: "updatedAt", threshold: "STALE_JOB_RUNNING_MS", client: "prisma.job", exported: false, typed: false })}`,
  COMMONJS_REST,
);

const ARROW_HEAD = `import { prisma } from "./db";
export const startJob = async (id: string) => {
  await prisma.job.updateMany({ where: { id, status: { in: ["PENDING", "FAILED"] } }, data: { status: "RUNNING", updatedAt: new Date() } });
};
`;
const ARROW_REST = `export const touchJob = async (id: string) => {
  const { count } = await prisma.job.updateMany({ where: { id, status: "RUNNING" }, data: { updatedAt: new Date() } });
  if (count === 0) throw new Error("taken over");
};
// STALE_JOB_RUNNING_MS is taken in this module
`;
const ARROW = ARROW_HEAD + ARROW_REST;
const ARROW_OUTPUT = after(
  ARROW_HEAD,
  `

${constant("STALE_JOB_RUNNING_MS2", "job", "RUNNING", "updatedAt")}

${recovery({ name: "recoverStaleJob", model: "job", value: "RUNNING", back: "PENDING", time: "updatedAt", threshold: "STALE_JOB_RUNNING_MS2", client: "prisma.job" })}`,
  ARROW_REST,
);

const MONGO_HEAD = `import { Export } from "./models/export";

export async function claimExport(id: string) {
  return Export.findOneAndUpdate(
    { _id: id, state: "queued" },
    { $set: { state: "exporting", heartbeatAt: new Date() } },
    { new: true },
  );
}
`;
const MONGO_REST = `
export async function beat(id: string) {
  const { modifiedCount } = await Export.updateOne({ _id: id, state: "exporting" }, { $set: { heartbeatAt: new Date() } });
  if (modifiedCount === 0) throw new Error("taken over");
}
`;
const MONGO = MONGO_HEAD + MONGO_REST;
const MONGO_OUTPUT = after(
  MONGO_HEAD,
  `

${constant("STALE_EXPORT_EXPORTING_MS", "Export", "exporting", "heartbeatAt")}

/**
 * Gives Export rows left exporting by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * heartbeatAt has not moved for STALE_EXPORT_EXPORTING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleExport(): Promise<number> {
  const result = await Export.updateMany(
    { state: "exporting", heartbeatAt: { $lt: new Date(Date.now() - STALE_EXPORT_EXPORTING_MS) } },
    { $set: { state: "queued" } },
  );
  return result.modifiedCount;
}`,
  MONGO_REST,
);

const PG_HEAD = `import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

export async function generate(jobId) {
  const claimed = await pool.query(
    "UPDATE audio_jobs SET status = 'GENERATING', updated_at = now() WHERE id = $1 AND status <> 'GENERATING'",
    [jobId],
  );
  if (claimed.rowCount === 0) return "refused";
  try {
    await work(jobId);
    await pool.query("UPDATE audio_jobs SET status = 'COMPLETED', updated_at = now() WHERE id = $1 AND status = 'GENERATING'", [jobId]);
    return "completed";
  } catch (error) {
    await pool.query("UPDATE audio_jobs SET status = 'FAILED', updated_at = now() WHERE id = $1 AND status = 'GENERATING'", [jobId]);
    throw error;
  }
}
`;
const PG_REST = `
async function work(jobId) {
  for (let step = 0; step < 3; step++) {
    const beat = await pool.query("UPDATE audio_jobs SET updated_at = now() WHERE id = $1 AND status = 'GENERATING'", [jobId]);
    if (beat.rowCount === 0) throw new Error("taken over");
  }
}
`;
const PG = PG_HEAD + PG_REST;
const PG_OUTPUT = after(
  PG_HEAD,
  `

${constant("STALE_AUDIO_JOBS_GENERATING_MS", "audio_jobs", "GENERATING", "updated_at")}

/**
 * Gives audio_jobs rows left GENERATING by a holder that died (SIGKILL, OOM, a deploy) back to FAILED, once
 * updated_at has not moved for STALE_AUDIO_JOBS_GENERATING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleAudioJobs() {
  const result = await pool.query(
    "UPDATE audio_jobs SET status = $1 WHERE status = $2 AND updated_at < now() - $3 * interval '1 millisecond'",
    ["FAILED", "GENERATING", STALE_AUDIO_JOBS_GENERATING_MS],
  );
  return result.rowCount ?? 0;
}`,
  PG_REST,
);

const KNEX_HEAD = `import knex from "knex";

const db = knex({ client: "pg", connection: process.env.DATABASE_URL });

export async function claimExport(id: number): Promise<boolean> {
  const taken = await db("exports").where({ id, status: "queued" }).update({ status: "exporting", updated_at: db.fn.now() });
  return taken === 1;
}
`;
const KNEX_REST = `
export async function beat(id: number): Promise<void> {
  const touched = await db("exports").where({ id, status: "exporting" }).update({ updated_at: db.fn.now() });
  if (touched === 0) throw new Error("taken over");
}
`;
const KNEX = KNEX_HEAD + KNEX_REST;
const KNEX_OUTPUT = after(
  KNEX_HEAD,
  `

${constant("STALE_EXPORTS_EXPORTING_MS", "exports", "exporting", "updated_at")}

/**
 * Gives exports rows left exporting by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * updated_at has not moved for STALE_EXPORTS_EXPORTING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleExports(): Promise<number> {
  const result = await db("exports")
    .where("status", "exporting")
    .where("updated_at", "<", new Date(Date.now() - STALE_EXPORTS_EXPORTING_MS))
    .update({ status: "queued" });
  return result;
}`,
  KNEX_REST,
);

const FLAG = `import { prisma } from "./db";

export async function runNightly(name: string): Promise<boolean> {
  const res = await prisma.runLock.updateMany({ where: { name, locked: false }, data: { locked: true, touchedAt: new Date() } });
  if (res.count !== 1) return false;
  for (const step of ["extract", "load"]) {
    await runStep(step);
    const beat = await prisma.runLock.updateMany({ where: { name, locked: true }, data: { touchedAt: new Date() } });
    if (beat.count === 0) throw new Error("lock taken over");
  }
  await prisma.runLock.updateMany({ where: { name, locked: true }, data: { locked: false } });
  return true;
}
`;
const FLAG_OUTPUT = `import { prisma } from "./db";

export async function runNightly(name: string): Promise<boolean> {
  const res = await prisma.runLock.updateMany({ where: { name, locked: false }, data: { locked: true, touchedAt: new Date() } });
  if (res.count !== 1) return false;
  for (const step of ["extract", "load"]) {
    await runStep(step);
    const beat = await prisma.runLock.updateMany({ where: { name, locked: true }, data: { touchedAt: new Date() } });
    if (beat.count === 0) throw new Error("lock taken over");
  }
  await prisma.runLock.updateMany({ where: { name, locked: true }, data: { locked: false } });
  return true;
}

/** How long a runLock row may stay with locked = true without touchedAt moving before its holder counts as dead. */
const STALE_RUN_LOCK_LOCKED_MS = 15 * 60 * 1000;

/**
 * Gives runLock rows left with locked = true by a holder that died (SIGKILL, OOM, a deploy) back to locked = false, once
 * touchedAt has not moved for STALE_RUN_LOCK_LOCKED_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleRunLock(): Promise<number> {
  const result = await prisma.runLock.updateMany({
    where: { locked: true, touchedAt: { lt: new Date(Date.now() - STALE_RUN_LOCK_LOCKED_MS) } },
    data: { locked: false },
  });
  return result.count;
}
`;
const noSuggestion = (code: string, line: number) => ({
  code,
  filename: "jobs.ts",
  errors: [{ messageId: "missingRecovery" as const, line, suggestions: [] }],
});

ruleTester.run("require-stale-recovery", rule, {
  valid: [],
  invalid: [
    {
      // a function claim on a module-level client: an exported recovery after it
      code: CLAIM_FN,
      filename: "jobs.ts",
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc("recoverStaleJob", "RUNNING", '"PENDING"', "updatedAt", "STALE_JOB_RUNNING_MS"),
              output: FN_OUTPUT,
            },
          ],
        },
      ],
    },
    {
      // a method claim on `this.prisma`: a method after it, the constant above the class's JSDoc and decorator; the
      // values as the module writes them, the progress timestamp from the heartbeat write
      code: SERVICE_CODE,
      filename: "render.service.ts",
      errors: [
        {
          messageId: "missingRecovery",
          line: 11,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc(
                "recoverStaleReport",
                "RENDERING",
                "RenderStatus.QUEUED",
                "heartbeatAt",
                "STALE_REPORT_RENDERING_MS",
              ),
              output: SERVICE_OUTPUT,
            },
          ],
        },
      ],
    },
    {
      // CommonJS: a plain function (a later `module.exports = {…}` would drop an export added here), no types
      code: COMMONJS_HEAD + COMMONJS_REST,
      filename: "jobs.js",
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc("recoverStaleJob", "RUNNING", '"PENDING"', "updatedAt", "STALE_JOB_RUNNING_MS"),
              output: COMMONJS_OUTPUT,
            },
          ],
        },
      ],
    },
    {
      // an arrow function in a const; `in` gives back its first other value; a name the module's text holds is not reused
      code: ARROW,
      filename: "jobs.ts",
      errors: [
        {
          messageId: "missingRecovery",
          line: 3,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc("recoverStaleJob", "RUNNING", '"PENDING"', "updatedAt", "STALE_JOB_RUNNING_MS2"),
              output: ARROW_OUTPUT,
            },
          ],
        },
      ],
    },
    {
      // MongoDB (a Mongoose model): updateMany with $lt and $set, the count from modifiedCount
      code: MONGO,
      filename: "exports.ts",
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc("recoverStaleExport", "exporting", '"queued"', "heartbeatAt", "STALE_EXPORT_EXPORTING_MS"),
              output: MONGO_OUTPUT,
            },
          ],
        },
      ],
    },
    {
      // Knex: the same table through the same instance; update() resolves to the count
      code: KNEX,
      filename: "exports.ts",
      errors: [
        {
          messageId: "missingRecovery",
          line: 6,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc("recoverStaleExports", "exporting", '"queued"', "updated_at", "STALE_EXPORTS_EXPORTING_MS"),
              output: KNEX_OUTPUT,
            },
          ],
        },
      ],
    },
    {
      // a flag (locked: false → true): named by its field, given back to the value the filter pins
      code: FLAG,
      filename: "run-locks.ts",
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc(
                "recoverStaleRunLock",
                "locked = true",
                "locked = false",
                "touchedAt",
                "STALE_RUN_LOCK_LOCKED_MS",
              ),
              output: FLAG_OUTPUT,
            },
          ],
        },
      ],
    },
    // Knex through the instance a class holds (this.knex): the table expression is not the instance called with
    // literals, so no recovery is written for it.
    noSuggestion(
      `export class Exports {
  constructor(private readonly knex: any) {}
  async claim(id: number) {
    await this.knex("exports").where({ id, status: "queued" }).update({ status: "exporting", updated_at: this.knex.fn.now() });
  }
  async beat(id: number) {
    const n = await this.knex("exports").where({ id, status: "exporting" }).update({ updated_at: this.knex.fn.now() });
    if (n === 0) throw new Error("taken over");
  }
}
`,
      4,
    ),
    // A touch of rows in another state is no heartbeat of the claimed ones.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING", updatedAt: new Date() } });
}
export async function touchPending(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { updatedAt: new Date() } });
}
`,
      3,
    ),
    // A heartbeat the claim does not stamp: a row claimed again keeps its last run's heartbeatAt until the first
    // beat, so a recovery judged by it would free a holder that has just started.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING" } });
}
export async function beat(id: string) {
  await prisma.job.updateMany({ where: { id, status: "RUNNING" }, data: { heartbeatAt: new Date() } });
}
`,
      3,
    ),
    // updatedAt stamped by the claim alone is a start time whatever its name: a slow holder would be freed alive.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING", updatedAt: new Date() } });
}
`,
      3,
    ),
    {
      // node-postgres: the filter only excludes the claimed value, so the value given back is the one the module's
      // failure path gives a row it holds (FAILED, which the claim accepts again); values are parameters
      code: PG,
      filename: "jobs.js",
      errors: [
        {
          messageId: "missingRecovery",
          line: 6,
          suggestions: [
            {
              messageId: "addRecovery",
              data: desc(
                "recoverStaleAudioJobs",
                "GENERATING",
                '"FAILED"',
                "updated_at",
                "STALE_AUDIO_JOBS_GENERATING_MS",
              ),
              output: PG_OUTPUT,
            },
          ],
        },
      ],
    },
    // No progress timestamp stamped for the model (startedAt is a start time): nothing to judge age by, none invented.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING", startedAt: new Date() } });
}
`,
      3,
    ),
    // A stamp named neither as progress nor as a start time counts by what the write does: written by id alone, the
    // write may touch a row after it was handed on, so it is no heartbeat of the claimed rows.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING" } });
}
export async function noteBatch(id: string) {
  await prisma.job.updateMany({ where: { id }, data: { lastBatchAt: new Date() } });
}
`,
      3,
    ),
    // Re-stamped while held, a field named as a start time is still not what the recovery may judge by.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING" } });
}
export async function restart(id: string) {
  await prisma.job.updateMany({ where: { id, status: "RUNNING" }, data: { startedAt: new Date() } });
}
`,
      3,
    ),
    // Another lifecycle of the same row holds the same value (the payment's own status is PROCESSING while its
    // refund is): a write pinned on it, or another claim of the model stamping its time (a claim renews nothing),
    // is no heartbeat of the refund.
    noSuggestion(
      `import { Payment } from "./models/payment";
export async function startRefund(id: string) {
  return Payment.findOneAndUpdate({ _id: id, refundStatus: "FAILED" }, { $set: { refundStatus: "PROCESSING" } }, { new: true });
}
export async function lockProcessing(id: string, cutoff: Date) {
  return Payment.findOneAndUpdate(
    { _id: id, status: "PROCESSING", $or: [{ processingAt: null }, { processingAt: { $lt: cutoff } }] },
    { $set: { processingAt: new Date() } },
    { new: true },
  );
}
export async function noteProgress(id: string) {
  await Payment.updateOne({ _id: id, status: "PROCESSING" }, { $set: { checkedAt: new Date() } });
}
`,
      3,
    ),
    // The client is a parameter: not in scope next to the function.
    noSuggestion(
      `export async function startJob(db: any, id: string) {
  await db.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING", updatedAt: new Date() } });
}
`,
      2,
    ),
    // A transaction's client: only inside the callback.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.$transaction(async (tx) => {
    await tx.job.updateMany({ where: { id, status: "PENDING" }, data: { status: "RUNNING", updatedAt: new Date() } });
  });
}
`,
      4,
    ),
    // The filter says only what the row is not: the value to give back is unknown.
    noSuggestion(
      `import { prisma } from "./db";
export async function startJob(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING", updatedAt: new Date() } });
}
`,
      3,
    ),
  ],
});

describe("require-stale-recovery's suggested recovery", () => {
  const strict = [
    { files: ["**/*.{ts,js}"], languageOptions: { parser: tsParser as never, sourceType: "module" as const } },
    { ...(plugin.configs.strict as object), files: ["**/*.{ts,js}"] },
  ];
  it.each([
    [
      "run-locks.ts",
      FLAG_OUTPUT.replace(
        'import { prisma } from "./db";',
        'import { prisma } from "./db";\nimport { runStep } from "./steps";',
      ),
    ],
    ["jobs.ts", FN_OUTPUT],
    ["render.service.ts", SERVICE_OUTPUT],
    ["jobs.js", COMMONJS_OUTPUT],
    ["jobs.ts", ARROW_OUTPUT],
    ["exports.ts", MONGO_OUTPUT],
    ["jobs.js", PG_OUTPUT],
    ["knex-exports.ts", KNEX_OUTPUT],
  ])("%s: answers the claim and lints clean under configs.strict", (filename, output) => {
    const messages = new Linter({ configType: "flat" }).verify(output, strict as never, { filename });
    expect(messages.map((m) => `${m.line} ${m.ruleId} ${m.message}`)).toEqual([]);
  });

  it("type-checks against Prisma- and Mongoose-shaped clients", () => {
    const delegate = `{ updateMany(args: { where: Record<string, unknown>; data: Record<string, unknown> }): Promise<{ count: number }> }`;
    const files: Record<string, string> = {
      "/p/db.ts": `export declare const prisma: { job: ${delegate}; runLock: ${delegate}; $transaction<T>(fn: (tx: { job: ${delegate} }) => Promise<T>): Promise<T> };\n`,
      "/p/steps.ts": "export declare function runStep(step: string): Promise<void>;\n",
      "/p/run-locks.ts": FLAG_OUTPUT.replace(
        'import { prisma } from "./db";',
        'import { prisma } from "./db";\nimport { runStep } from "./steps";',
      ),
      "/p/prisma.service.ts": `export declare class PrismaService { report: ${delegate} }\n`,
      "/p/node_modules/@nestjs/common/index.d.ts": "export declare function Injectable(): ClassDecorator;\n",
      "/p/node_modules/@prisma/client/index.d.ts": `export declare const RenderStatus: { readonly QUEUED: "QUEUED"; readonly RENDERING: "RENDERING"; readonly FAILED: "FAILED" };\n`,
      "/p/jobs.ts": FN_OUTPUT,
      "/p/arrow.ts": ARROW_OUTPUT,
      "/p/render.service.ts": SERVICE_OUTPUT,
      "/p/models/export.ts": `export declare const Export: {
  findOneAndUpdate(filter: object, update: object, options?: object): Promise<unknown>;
  updateMany(filter: object, update: object): Promise<{ acknowledged: boolean; matchedCount: number; modifiedCount: number }>;
  updateOne(filter: object, update: object): Promise<{ acknowledged: boolean; matchedCount: number; modifiedCount: number }>;
};
`,
      "/p/exports.ts": MONGO_OUTPUT,
    };
    const problems = typeCheck(
      files,
      ["/p/jobs.ts", "/p/arrow.ts", "/p/render.service.ts", "/p/exports.ts", "/p/run-locks.ts"],
      { lib: ["lib.es2022.d.ts"] },
    );
    expect(problems).toEqual([]);
  });
});
