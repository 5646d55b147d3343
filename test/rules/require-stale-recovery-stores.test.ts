// require-stale-recovery's suggestion in the stores whose recovery needs an operator from the library (issue 18):
// TypeORM's LessThan, Sequelize's Op, Drizzle's and/eq/lt (the module's own import, or added to it), and Kysely's
// bigint count; and Knex and node-postgres in TypeScript. Each output is type-checked against the libraries' own
// types and linted with configs.strict.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Linter } from "eslint";
import tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import rule from "../../rules/require-stale-recovery.js";
import plugin from "../../src/index.js";
import { ruleTester } from "../rule-tester.js";
import { typeCheck } from "../typecheck.js";

const TYPEORM = `import { Repository } from "typeorm";
import { RenderJob } from "./render-job.entity";

export class RenderService {
  constructor(private readonly jobs: Repository<RenderJob>) {}

  async claim(id: string): Promise<boolean> {
    const result = await this.jobs.update({ id, status: "queued" }, { status: "rendering", heartbeatAt: new Date() });
    return result.affected === 1;
  }

  async beat(id: string): Promise<void> {
    const result = await this.jobs.update({ id, status: "rendering" }, { heartbeatAt: new Date() });
    if (result.affected === 0) throw new Error(\`render \${id} was taken over\`);
  }
}
`;
const TYPEORM_OUTPUT = `import { Repository, LessThan } from "typeorm";
import { RenderJob } from "./render-job.entity";

/** How long a RenderJob row may stay rendering without heartbeatAt moving before its holder counts as dead. */
const STALE_RENDER_JOB_RENDERING_MS = 15 * 60 * 1000;

export class RenderService {
  constructor(private readonly jobs: Repository<RenderJob>) {}

  async claim(id: string): Promise<boolean> {
    const result = await this.jobs.update({ id, status: "queued" }, { status: "rendering", heartbeatAt: new Date() });
    return result.affected === 1;
  }

  /**
   * Gives RenderJob rows left rendering by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
   * heartbeatAt has not moved for STALE_RENDER_JOB_RENDERING_MS. Run it from a scheduled sweeper, or before claiming.
   */
  async recoverStaleRenderJob(): Promise<number> {
    const result = await this.jobs.update(
      { status: "rendering", heartbeatAt: LessThan(new Date(Date.now() - STALE_RENDER_JOB_RENDERING_MS)) },
      { status: "queued" },
    );
    return result.affected ?? 0;
  }

  async beat(id: string): Promise<void> {
    const result = await this.jobs.update({ id, status: "rendering" }, { heartbeatAt: new Date() });
    if (result.affected === 0) throw new Error(\`render \${id} was taken over\`);
  }
}
`;
const SEQUELIZE = `import { Model } from "sequelize";

export class Job extends Model {}

export async function claimJob(id: number): Promise<boolean> {
  const [count] = await Job.update({ status: "running", heartbeatAt: new Date() }, { where: { id, status: "queued" } });
  return count === 1;
}

export async function beat(id: number): Promise<void> {
  const [count] = await Job.update({ heartbeatAt: new Date() }, { where: { id, status: "running" } });
  if (count === 0) throw new Error("taken over");
}
`;
const SEQUELIZE_OUTPUT = `import { Model, Op } from "sequelize";

export class Job extends Model {}

export async function claimJob(id: number): Promise<boolean> {
  const [count] = await Job.update({ status: "running", heartbeatAt: new Date() }, { where: { id, status: "queued" } });
  return count === 1;
}

/** How long a Job row may stay running without heartbeatAt moving before its holder counts as dead. */
const STALE_JOB_RUNNING_MS = 15 * 60 * 1000;

/**
 * Gives Job rows left running by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * heartbeatAt has not moved for STALE_JOB_RUNNING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleJob(): Promise<number> {
  const result = await Job.update(
    { status: "queued" },
    { where: { status: "running", heartbeatAt: { [Op.lt]: new Date(Date.now() - STALE_JOB_RUNNING_MS) } } },
  );
  return result[0];
}

export async function beat(id: number): Promise<void> {
  const [count] = await Job.update({ heartbeatAt: new Date() }, { where: { id, status: "running" } });
  if (count === 0) throw new Error("taken over");
}
`;
const KYSELY = `import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema";

const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) });

export async function claimExport(id: string): Promise<boolean> {
  const result = await db.updateTable("exports").set({ status: "exporting", updated_at: new Date() })
    .where("id", "=", id).where("status", "=", "queued").executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function touchExport(id: string): Promise<void> {
  const result = await db.updateTable("exports").set({ updated_at: new Date() })
    .where("id", "=", id).where("status", "=", "exporting").executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new Error("taken over");
}
`;
const KYSELY_OUTPUT = `import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema";

const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool() }) });

export async function claimExport(id: string): Promise<boolean> {
  const result = await db.updateTable("exports").set({ status: "exporting", updated_at: new Date() })
    .where("id", "=", id).where("status", "=", "queued").executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** How long an exports row may stay exporting without updated_at moving before its holder counts as dead. */
const STALE_EXPORTS_EXPORTING_MS = 15 * 60 * 1000;

/**
 * Gives exports rows left exporting by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * updated_at has not moved for STALE_EXPORTS_EXPORTING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleExports(): Promise<number> {
  const result = await db.updateTable("exports")
    .set({ status: "queued" })
    .where("status", "=", "exporting")
    .where("updated_at", "<", new Date(Date.now() - STALE_EXPORTS_EXPORTING_MS))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function touchExport(id: string): Promise<void> {
  const result = await db.updateTable("exports").set({ updated_at: new Date() })
    .where("id", "=", id).where("status", "=", "exporting").executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new Error("taken over");
}
`;
const DRIZZLE = `import { and, eq } from "drizzle-orm";
import { db } from "./db";
import { jobs } from "./schema";

export async function claimJob(id: number): Promise<boolean> {
  const claimed = await db.update(jobs).set({ status: "running", heartbeatAt: new Date() })
    .where(and(eq(jobs.id, id), eq(jobs.status, "queued"))).returning({ id: jobs.id });
  return claimed.length === 1;
}

export async function beat(id: number): Promise<void> {
  const touched = await db.update(jobs).set({ heartbeatAt: new Date() }).where(and(eq(jobs.id, id), eq(jobs.status, "running"))).returning({ id: jobs.id });
  if (touched.length === 0) throw new Error("taken over");
}
`;
const DRIZZLE_OUTPUT = `import { and, eq, lt } from "drizzle-orm";
import { db } from "./db";
import { jobs } from "./schema";

export async function claimJob(id: number): Promise<boolean> {
  const claimed = await db.update(jobs).set({ status: "running", heartbeatAt: new Date() })
    .where(and(eq(jobs.id, id), eq(jobs.status, "queued"))).returning({ id: jobs.id });
  return claimed.length === 1;
}

/** How long a jobs row may stay running without heartbeatAt moving before its holder counts as dead. */
const STALE_JOBS_RUNNING_MS = 15 * 60 * 1000;

/**
 * Gives jobs rows left running by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * heartbeatAt has not moved for STALE_JOBS_RUNNING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleJobs(): Promise<number> {
  const result = await db
    .update(jobs)
    .set({ status: "queued" })
    .where(and(eq(jobs.status, "running"), lt(jobs.heartbeatAt, new Date(Date.now() - STALE_JOBS_RUNNING_MS))))
    .returning({ id: jobs.id });
  return result.length;
}

export async function beat(id: number): Promise<void> {
  const touched = await db.update(jobs).set({ heartbeatAt: new Date() }).where(and(eq(jobs.id, id), eq(jobs.status, "running"))).returning({ id: jobs.id });
  if (touched.length === 0) throw new Error("taken over");
}
`;
const KNEX = `import knex from "knex";

const db = knex({ client: "pg", connection: process.env.DATABASE_URL });

export async function claimExport(id: string): Promise<boolean> {
  const taken = await db("exports").where({ id, status: "queued" }).update({ status: "exporting", updated_at: db.fn.now() });
  return taken === 1;
}

export async function touchExport(id: string): Promise<void> {
  const touched = await db("exports").where({ id, status: "exporting" }).update({ updated_at: db.fn.now() });
  if (touched === 0) throw new Error("taken over");
}
`;
const KNEX_OUTPUT = `import knex from "knex";

const db = knex({ client: "pg", connection: process.env.DATABASE_URL });

export async function claimExport(id: string): Promise<boolean> {
  const taken = await db("exports").where({ id, status: "queued" }).update({ status: "exporting", updated_at: db.fn.now() });
  return taken === 1;
}

/** How long an exports row may stay exporting without updated_at moving before its holder counts as dead. */
const STALE_EXPORTS_EXPORTING_MS = 15 * 60 * 1000;

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
}

export async function touchExport(id: string): Promise<void> {
  const touched = await db("exports").where({ id, status: "exporting" }).update({ updated_at: db.fn.now() });
  if (touched === 0) throw new Error("taken over");
}
`;
const PG = `import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

export async function claimJob(id: number): Promise<boolean> {
  const claimed = await pool.query("UPDATE jobs SET status = 'running', heartbeat_at = now() WHERE id = $1 AND status = 'queued'", [id]);
  return claimed.rowCount === 1;
}

export async function beat(id: number): Promise<void> {
  const touched = await pool.query("UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'", [id]);
  if (touched.rowCount === 0) throw new Error("taken over");
}
`;
const PG_OUTPUT = `import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

export async function claimJob(id: number): Promise<boolean> {
  const claimed = await pool.query("UPDATE jobs SET status = 'running', heartbeat_at = now() WHERE id = $1 AND status = 'queued'", [id]);
  return claimed.rowCount === 1;
}

/** How long a jobs row may stay running without heartbeat_at moving before its holder counts as dead. */
const STALE_JOBS_RUNNING_MS = 15 * 60 * 1000;

/**
 * Gives jobs rows left running by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * heartbeat_at has not moved for STALE_JOBS_RUNNING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleJobs(): Promise<number> {
  const result = await pool.query(
    "UPDATE jobs SET status = $1 WHERE status = $2 AND heartbeat_at < now() - $3 * interval '1 millisecond'",
    ["queued", "running", STALE_JOBS_RUNNING_MS],
  );
  return result.rowCount ?? 0;
}

export async function beat(id: number): Promise<void> {
  const touched = await pool.query("UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'", [id]);
  if (touched.rowCount === 0) throw new Error("taken over");
}
`;
const PG_FLAG = `import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

export async function runNightly(name) {
  const taken = await pool.query("UPDATE run_locks SET locked = true, touched_at = now() WHERE name = $1 AND locked = false", [name]);
  if (taken.rowCount !== 1) return false;
  for (const step of ["extract", "load"]) {
    await runStep(step);
    const beat = await pool.query("UPDATE run_locks SET touched_at = now() WHERE name = $1 AND locked = true", [name]);
    if (beat.rowCount === 0) throw new Error("lock taken over");
  }
  await pool.query("UPDATE run_locks SET locked = false WHERE name = $1 AND locked = true", [name]);
  return true;
}
`;
const PG_FLAG_OUTPUT = `import pg from "pg";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });

export async function runNightly(name) {
  const taken = await pool.query("UPDATE run_locks SET locked = true, touched_at = now() WHERE name = $1 AND locked = false", [name]);
  if (taken.rowCount !== 1) return false;
  for (const step of ["extract", "load"]) {
    await runStep(step);
    const beat = await pool.query("UPDATE run_locks SET touched_at = now() WHERE name = $1 AND locked = true", [name]);
    if (beat.rowCount === 0) throw new Error("lock taken over");
  }
  await pool.query("UPDATE run_locks SET locked = false WHERE name = $1 AND locked = true", [name]);
  return true;
}

/** How long a run_locks row may stay with locked = true without touched_at moving before its holder counts as dead. */
const STALE_RUN_LOCKS_LOCKED_MS = 15 * 60 * 1000;

/**
 * Gives run_locks rows left with locked = true by a holder that died (SIGKILL, OOM, a deploy) back to locked = false, once
 * touched_at has not moved for STALE_RUN_LOCKS_LOCKED_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleRunLocks() {
  const result = await pool.query(
    "UPDATE run_locks SET locked = $1 WHERE locked = $2 AND touched_at < now() - $3 * interval '1 millisecond'",
    [false, true, STALE_RUN_LOCKS_LOCKED_MS],
  );
  return result.rowCount ?? 0;
}
`;
const desc = (name: string, value: string, back: string, timeField: string, threshold: string) => ({
  name,
  value,
  back,
  timeField,
  threshold,
});
const suggests = (code: string, filename: string, line: number, data: ReturnType<typeof desc>, output: string) => ({
  code,
  filename,
  errors: [
    { messageId: "missingRecovery" as const, line, suggestions: [{ messageId: "addRecovery" as const, data, output }] },
  ],
});
const noSuggestion = (code: string, filename: string, line: number) => ({
  code,
  filename,
  errors: [{ messageId: "missingRecovery" as const, line, suggestions: [] }],
});

ruleTester.run("require-stale-recovery", rule, {
  valid: [],
  invalid: [
    // TypeORM: update() on the claim's repository, LessThan added to the module's typeorm import; affected may be undefined
    suggests(
      TYPEORM,
      "render.service.ts",
      8,
      desc("recoverStaleRenderJob", "rendering", '"queued"', "heartbeatAt", "STALE_RENDER_JOB_RENDERING_MS"),
      TYPEORM_OUTPUT,
    ),
    // Sequelize: Model.update() with [Op.lt], Op added to the module's sequelize import; it resolves to [count]
    suggests(
      SEQUELIZE,
      "jobs.ts",
      6,
      desc("recoverStaleJob", "running", '"queued"', "heartbeatAt", "STALE_JOB_RUNNING_MS"),
      SEQUELIZE_OUTPUT,
    ),
    // Kysely: the same instance and table; numUpdatedRows is a bigint
    suggests(
      KYSELY,
      "exports.ts",
      8,
      desc("recoverStaleExports", "exporting", '"queued"', "updated_at", "STALE_EXPORTS_EXPORTING_MS"),
      KYSELY_OUTPUT,
    ),
    // Drizzle: the same instance and table, lt added beside and/eq; counted as the claim counts, by its returning()
    suggests(
      DRIZZLE,
      "jobs.ts",
      6,
      desc("recoverStaleJobs", "running", '"queued"', "heartbeatAt", "STALE_JOBS_RUNNING_MS"),
      DRIZZLE_OUTPUT,
    ),
    // Knex in TypeScript: update() resolves to the count
    suggests(
      KNEX,
      "exports.ts",
      6,
      desc("recoverStaleExports", "exporting", '"queued"', "updated_at", "STALE_EXPORTS_EXPORTING_MS"),
      KNEX_OUTPUT,
    ),
    // node-postgres in TypeScript: @types/pg types rowCount as number | null
    suggests(
      PG,
      "jobs.ts",
      6,
      desc("recoverStaleJobs", "running", '"queued"', "heartbeat_at", "STALE_JOBS_RUNNING_MS"),
      PG_OUTPUT,
    ),
    // A flag, not a status (locked = true): given back to the value the claim's filter pins, as a parameter
    suggests(
      PG_FLAG,
      "run-locks.js",
      6,
      desc("recoverStaleRunLocks", "locked = true", "locked = false", "touched_at", "STALE_RUN_LOCKS_LOCKED_MS"),
      PG_FLAG_OUTPUT,
    ),
    // TypeORM in CommonJS without LessThan: no import can be added, so no recovery is written.
    noSuggestion(
      `const { Repository } = require("typeorm");
class Renders {
  constructor(jobs) { this.jobs = jobs; }
  async claim(id) { await this.jobs.update({ id, status: "queued" }, { status: "rendering", heartbeatAt: new Date() }); }
  async beat(id) { await this.jobs.update({ id, status: "rendering" }, { heartbeatAt: new Date() }); }
}
module.exports = { Renders, Repository };
`,
      "renders.js",
      4,
    ),
    // Drizzle with neither returning() nor a count read off the claim: how this driver counts rows is unknown.
    noSuggestion(
      `import { and, eq } from "drizzle-orm";
import { db } from "./db";
import { jobs } from "./schema";
export async function claimJob(id: number) {
  await db.update(jobs).set({ status: "running", heartbeatAt: new Date() }).where(and(eq(jobs.id, id), eq(jobs.status, "queued")));
}
export async function beat(id: number) {
  await db.update(jobs).set({ heartbeatAt: new Date() }).where(and(eq(jobs.id, id), eq(jobs.status, "running")));
}
`,
      "jobs.ts",
      5,
    ),
    // The module already binds `lt` to something else: importing drizzle's would clash.
    noSuggestion(
      `import { and, eq } from "drizzle-orm";
import { db } from "./db";
import { jobs } from "./schema";
const lt = "<";
export async function claimJob(id: number) {
  const claimed = await db.update(jobs).set({ status: "running", heartbeatAt: new Date() }).where(and(eq(jobs.id, id), eq(jobs.status, "queued"))).returning();
  return claimed.length === 1 ? lt : "";
}
export async function beat(id: number) {
  await db.update(jobs).set({ heartbeatAt: new Date() }).where(and(eq(jobs.id, id), eq(jobs.status, "running")));
}
`,
      "jobs.ts",
      6,
    ),
  ],
});

describe("the suggested recoveries in TypeORM, Sequelize, Kysely, Drizzle, Knex and node-postgres", () => {
  const outputs = {
    "render.service.ts": TYPEORM_OUTPUT,
    "sequelize-jobs.ts": SEQUELIZE_OUTPUT,
    "exports.ts": KYSELY_OUTPUT,
    "drizzle-jobs.ts": DRIZZLE_OUTPUT,
    "knex-exports.ts": KNEX_OUTPUT,
    "pg-jobs.ts": PG_OUTPUT,
  };
  const strict = [
    { files: ["**/*.{ts,js}"], languageOptions: { parser: tsParser as never } },
    { ...(plugin.configs.strict as object), files: ["**/*.{ts,js}"] },
  ];
  it.each([...Object.entries(outputs), ["run-locks.js", PG_FLAG_OUTPUT]])(
    "%s: answers the claim and lints clean under configs.strict",
    (filename, output) => {
      const messages = new Linter({ configType: "flat" }).verify(output, strict as never, { filename });
      expect(messages.map((m) => `${m.line} ${m.ruleId} ${m.message}`)).toEqual([]);
    },
  );

  it("type-check against the libraries' own types", () => {
    // Beside the tests, so that the libraries resolve from the project's node_modules.
    const root = join(dirname(fileURLToPath(import.meta.url)), "virtual-stores");
    const files: Record<string, string> = {
      [join(root, "render-job.entity.ts")]:
        "export class RenderJob {\n  id!: string;\n  status!: string;\n  heartbeatAt!: Date;\n}\n",
      [join(root, "schema.ts")]: `import { pgTable, serial, text, timestamp } from "drizzle-orm/pg-core";
export interface Database { exports: { id: string; status: string; updated_at: Date } }
export const jobs = pgTable("jobs", { id: serial("id").primaryKey(), status: text("status").notNull(), heartbeatAt: timestamp("heartbeat_at") });
`,
      [join(root, "db.ts")]: `import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
export const db = drizzle(new pg.Pool());
`,
      ...Object.fromEntries(Object.entries(outputs).map(([name, text]) => [join(root, name), text])),
    };
    const problems = typeCheck(
      files,
      Object.keys(outputs).map((name) => join(root, name)),
      { skipLibCheck: true },
    );
    expect(problems).toEqual([]);
  });
});
