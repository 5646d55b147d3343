// require-stale-recovery's suggestion for a lock row inserted under a unique key (issue 18): a sweep that deletes the
// rows whose holder died, in the insert's own store syntax, where the row carries a time its holder keeps moving
// (an expiry pushed forward, a heartbeat) that the insert stamps too. An expiry is compared with now, a heartbeat
// with a named threshold. Outputs are pinned as text, linted with configs.strict (the finding answered, nothing
// new), and type-checked against the libraries' own types (Mongoose, Knex, node-postgres).
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Linter } from "eslint";
import tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import rule from "../../rules/require-stale-recovery.js";
import plugin from "../../src/index.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { typeCheck } from "../typecheck.js";

/** Mongoose: a lock document per report, its expiry set on insert and pushed forward by the holder. */
const MONGOOSE = (sweep: string) => `import mongoose from "mongoose";

const ReportLock = mongoose.model("ReportLock", new mongoose.Schema({ _id: String, holder: String, expiresAt: Date }));
const LEASE_MS = 30_000;

export async function lockReport(reportId: string, holder: string): Promise<boolean> {
  const expiresAt = new Date(Date.now() + LEASE_MS);
  try {
    await ReportLock.create({ _id: reportId, holder, expiresAt });
    return true;
  } catch (error) {
    if ((error as { code?: number }).code === 11000) return false;
    throw error;
  }
}${sweep}

export async function extendReportLock(reportId: string, holder: string): Promise<boolean> {
  const { matchedCount } = await ReportLock.updateOne({ _id: reportId, holder }, { $set: { expiresAt: new Date(Date.now() + LEASE_MS) } });
  return matchedCount === 1;
}
`;
const MONGOOSE_SWEEP = `

/**
 * Removes ReportLock rows whose expiresAt has passed: their holder died (SIGKILL, OOM, a deploy) without
 * releasing them, and the key stays taken while they remain. Run it from a scheduled sweeper, or before
 * acquiring.
 */
export async function removeExpiredReportLock(): Promise<number> {
  const result = await ReportLock.deleteMany({ expiresAt: { $lt: new Date() } });
  return result.deletedCount;
}`;

/** node-postgres: a lock table row per job name, its heartbeat stamped on insert and moved by the holder. */
const PG = (sweep: string) => `import pg from "pg";

const pool = new pg.Pool();

export async function takeSyncLock(name: string, holder: string): Promise<boolean> {
  const taken = await pool.query(
    "INSERT INTO sync_locks (name, holder, heartbeat_at) VALUES ($1, $2, now()) ON CONFLICT (name) DO NOTHING",
    [name, holder],
  );
  return taken.rowCount === 1;
}${sweep}

export async function beatSyncLock(name: string, holder: string): Promise<void> {
  const beat = await pool.query("UPDATE sync_locks SET heartbeat_at = now() WHERE name = $1 AND holder = $2", [name, holder]);
  if (beat.rowCount === 0) throw new Error(\`the \${name} lock was taken over\`);
}
`;
const PG_SWEEP = `

/** How long a sync_locks row may go without heartbeat_at moving before its holder counts as dead. */
const STALE_SYNC_LOCKS_MS = 15 * 60 * 1000;

/**
 * Removes sync_locks rows whose heartbeat_at has not moved for STALE_SYNC_LOCKS_MS: their holder died (SIGKILL,
 * OOM, a deploy) without releasing them, and the key stays taken while they remain. Run it from a scheduled
 * sweeper, or before acquiring.
 */
export async function removeStaleSyncLocks(): Promise<number> {
  const result = await pool.query(
    "DELETE FROM sync_locks WHERE heartbeat_at < now() - $1 * interval '1 millisecond'",
    [STALE_SYNC_LOCKS_MS],
  );
  return result.rowCount ?? 0;
}`;

/** Knex: a lock row per key, inserted with its expiry, ignored on conflict; the holder pushes the expiry forward. */
const KNEX = (sweep: string) => `import knex from "knex";

const db = knex({ client: "pg" });
const TTL_MS = 60_000;

export async function lockKey(key: string, owner: string): Promise<boolean> {
  const rows = await db("locks").insert({ key, owner, expires_at: new Date(Date.now() + TTL_MS) }).onConflict("key").ignore().returning("key");
  return rows.length === 1;
}${sweep}

export async function extendKey(key: string, owner: string): Promise<boolean> {
  const extended = await db("locks").where({ key, owner }).update({ expires_at: new Date(Date.now() + TTL_MS) });
  return extended === 1;
}
`;
const KNEX_SWEEP = `

/**
 * Removes locks rows whose expires_at has passed: their holder died (SIGKILL, OOM, a deploy) without releasing
 * them, and the key stays taken while they remain. Run it from a scheduled sweeper, or before acquiring.
 */
export async function removeExpiredLocks(): Promise<number> {
  const result = await db("locks").where("expires_at", "<", new Date()).del();
  return result;
}`;

/** Prisma (plain JavaScript): a cron lock row created under its name, its renewedAt stamped and moved by the holder. */
const PRISMA = (sweep: string) => `import { prisma } from "./db.js";

export async function takeCronLock(name, owner) {
  try {
    await prisma.cronLock.create({ data: { name, owner, renewedAt: new Date() } });
    return true;
  } catch (error) {
    if (error.code === "P2002") return false;
    throw error;
  }
}${sweep}

export async function renewCronLock(name, owner) {
  const { count } = await prisma.cronLock.updateMany({ where: { name, owner }, data: { renewedAt: new Date() } });
  return count === 1;
}
`;
const PRISMA_SWEEP = `

/** How long a cronLock row may go without renewedAt moving before its holder counts as dead. */
const STALE_CRON_LOCK_MS = 15 * 60 * 1000;

/**
 * Removes cronLock rows whose renewedAt has not moved for STALE_CRON_LOCK_MS: their holder died (SIGKILL, OOM, a
 * deploy) without releasing them, and the key stays taken while they remain. Run it from a scheduled sweeper, or
 * before acquiring.
 */
export async function removeStaleCronLock() {
  const result = await prisma.cronLock.deleteMany({ where: { renewedAt: { lt: new Date(Date.now() - STALE_CRON_LOCK_MS) } } });
  return result.count;
}`;

const sweep = (line: number, model: string, name: string, timeField: string, when: string, output: string) => ({
  messageId: "missingExpiry" as const,
  line,
  data: { model },
  suggestions: [{ messageId: "addLockSweep" as const, data: { name, model, timeField, when }, output }],
});
const STALE = (threshold: string) => `has not moved for ${threshold} (15 minutes; tune it)`;

ruleTester.run("require-stale-recovery: lock-row sweeps", rule, {
  valid: [],
  invalid: [
    {
      name: "Mongoose: an expiry pushed forward by the holder, compared with now",
      code: MONGOOSE(""),
      filename: "report-lock.ts",
      errors: [sweep(9, "ReportLock", "removeExpiredReportLock", "expiresAt", "has passed", MONGOOSE(MONGOOSE_SWEEP))],
    },
    {
      name: "node-postgres: a heartbeat moved by the holder, judged by a named threshold",
      code: PG(""),
      filename: "sync-lock.ts",
      errors: [
        sweep(6, "sync_locks", "removeStaleSyncLocks", "heartbeat_at", STALE("STALE_SYNC_LOCKS_MS"), PG(PG_SWEEP)),
      ],
    },
    {
      name: "Knex: insert … onConflict().ignore(), the expiry written in place",
      code: KNEX(""),
      filename: "locks.ts",
      errors: [sweep(7, "locks", "removeExpiredLocks", "expires_at", "has passed", KNEX(KNEX_SWEEP))],
    },
    {
      name: "Prisma in plain JavaScript: a renewal stamp outside the progress vocabulary, counted by what the write does",
      code: PRISMA(""),
      filename: "cron-lock.js",
      languageOptions: javascript,
      errors: [
        sweep(5, "cronLock", "removeStaleCronLock", "renewedAt", STALE("STALE_CRON_LOCK_MS"), PRISMA(PRISMA_SWEEP)),
      ],
    },
    // No edit: nothing to tell a dead holder's row from a live one's.
    {
      name: "the stamp is set once, never moved: a start time",
      code: `import pg from "pg";
const pool = new pg.Pool();
export async function takeSyncLock(name, holder) {
  const taken = await pool.query("INSERT INTO sync_locks (name, holder, locked_at) VALUES ($1, $2, now()) ON CONFLICT (name) DO NOTHING", [name, holder]);
  return taken.rowCount === 1;
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingExpiry", line: 4, suggestions: [] }],
    },
    {
      name: "the holder moves a heartbeat the insert does not stamp: a holder killed before its first beat has none",
      code: `import pg from "pg";
const pool = new pg.Pool();
export async function takeSyncLock(name, holder) {
  const taken = await pool.query("INSERT INTO sync_locks (name, holder) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING", [name, holder]);
  return taken.rowCount === 1;
}
export async function beatSyncLock(name, holder) {
  const beat = await pool.query("UPDATE sync_locks SET heartbeat_at = now() WHERE name = $1 AND holder = $2", [name, holder]);
  if (beat.rowCount === 0) throw new Error("taken over");
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingExpiry", line: 4, suggestions: [] }],
    },
  ],
});

describe("the suggested lock-row sweeps", () => {
  const strict = [
    { files: ["**/*.{ts,js}"], languageOptions: { parser: tsParser as never } },
    { ...(plugin.configs.strict as object), files: ["**/*.{ts,js}"] },
  ];
  it.each([
    ["report-lock.ts", MONGOOSE(MONGOOSE_SWEEP)],
    ["sync-lock.ts", PG(PG_SWEEP)],
    ["locks.ts", KNEX(KNEX_SWEEP)],
    ["cron-lock.js", PRISMA(PRISMA_SWEEP)],
  ])("%s: answers the lock row and lints clean under configs.strict", (filename, output) => {
    const messages = new Linter({ configType: "flat" }).verify(output, strict as never, { filename });
    expect(messages.map((m) => `${m.line} ${m.ruleId} ${m.message}`)).toEqual([]);
  });

  it("type-check against the libraries' own types (Mongoose, node-postgres, Knex)", () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), "virtual-lock-rows");
    const outputs = {
      "report-lock.ts": MONGOOSE(MONGOOSE_SWEEP),
      "sync-lock.ts": PG(PG_SWEEP),
      "locks.ts": KNEX(KNEX_SWEEP),
    };
    const files = Object.fromEntries(Object.entries(outputs).map(([name, text]) => [join(root, name), text]));
    expect(typeCheck(files, Object.keys(files), { skipLibCheck: true, esModuleInterop: true })).toEqual([]);
  });
});

// A lock row taken by an insert whose failure, whatever the error, means "held": read for every store, not only
// where the code names the duplicate-key error (here Prisma and Drizzle, neither of which names it).
const GIVE_UP_ON_FAILURE = (insert: string) => `import { db } from "./db";
export async function tryTakeImportLock(feed: string): Promise<boolean> {
  try {
    ${insert};
    return true;
  } catch {
    return false;
  }
}
export async function dropImportLock(feed: string): Promise<void> {
  await db.importLock.delete({ where: { feed } });
}
`;

ruleTester.run("require-stale-recovery: a lock insert whose failure gives up, in any store", rule, {
  valid: [
    {
      name: "an insert into a table not named like a lock is not a lock row for failing",
      code: GIVE_UP_ON_FAILURE("await db.auditEntry.create({ data: { feed, at: new Date() } })"),
    },
    {
      name: "the failure is rethrown: the caller decides, nothing says the row is held",
      code: GIVE_UP_ON_FAILURE("await db.importLock.create({ data: { feed } })").replace(
        "    return false;",
        "    throw new Error(`import of ${feed} failed`);",
      ),
    },
  ],
  invalid: [
    {
      name: "Prisma: create in a try whose catch returns false",
      code: GIVE_UP_ON_FAILURE("await db.importLock.create({ data: { feed } })"),
      errors: [{ messageId: "missingExpiry", line: 4, data: { model: "importLock" }, suggestions: [] }],
    },
  ],
});
