import rule from "../../rules/heartbeat-abort.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { LEASE_LOCK } from "./lease-lock.js";
import { Linter } from "eslint";
import tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";

/** A compare-and-expire script: renews only while the key still holds this holder's token. */
const RENEW = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RENEW_CONST = `const RENEW = ${JSON.stringify(RENEW)};`;

/** Line and column (1-based) of the `nth` occurrence of `needle` in `code`. */
function at(code: string, needle: string, nth = 1): { line: number; column: number } {
  let index = -1;
  for (let i = 0; i < nth; i++) {
    index = code.indexOf(needle, index + 1);
    if (index < 0) throw new Error(`${needle} (#${nth}) is not in the test code`);
  }
  const before = code.slice(0, index).split("\n");
  return { line: before.length, column: before[before.length - 1]!.length + 1 };
}

const lineOf = (code: string, needle: string, nth = 1) => String(at(code, needle, nth).line);

// ---------------------------------------------------------------- invalid sources

const ioredisPlainPexpire = `import Redis from "ioredis";
import { randomUUID } from "node:crypto";

const redis = new Redis();

export async function withReportLock(reportId: string, work: () => Promise<void>) {
  const key = \`lock:report:\${reportId}\`;
  const token = randomUUID();
  if ((await redis.set(key, token, "PX", 30_000, "NX")) !== "OK") return false;
  const beat = setInterval(() => {
    void redis.pexpire(key, 30_000);
  }, 10_000);
  try {
    await work();
  } finally {
    clearInterval(beat);
  }
  return true;
}`;

const nodeRedisPlainExpire = `import { createClient } from "redis";

const client = createClient();

async function renewLease(name: string) {
  const renewed = await client.expire(\`lease:\${name}\`, 30);
  return renewed === 1;
}

export async function lead(name: string, token: string, work: () => Promise<void>) {
  if (!(await client.set(\`lease:\${name}\`, token, { NX: true, EX: 30 }))) return;
  await work();
}`;

const docOwnerSetPx = `import Redis from "ioredis";

export class DocumentOwner {
  private timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly redis: Redis, private readonly serverId: string, private readonly ttl: number) {}

  claim(doc: string) {
    return this.redis.set(\`doc-lock:\${doc}\`, this.serverId, "PX", this.ttl, "NX");
  }

  keep(doc: string) {
    this.timers.set(doc, setInterval(() => {
      this.redis.set(\`doc-lock:\${doc}\`, this.serverId, "PX", this.ttl);
    }, this.ttl / 2));
  }
}`;

const scriptCatchEmpty = `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function exportInvoices(batchId: string, token: string) {
  const key = \`lock:invoices:\${batchId}\`;
  if (!(await redis.set(key, token, "NX", "PX", 20_000))) return;
  const timer = setInterval(() => {
    redis.eval(RENEW, 1, key, token, 20_000).catch(() => {});
  }, 5_000);
  try {
    await writeInvoices(batchId);
  } finally {
    clearInterval(timer);
  }
}`;

const scriptEscapesTimer = `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function syncCatalog(shopId: string, token: string, controller: AbortController) {
  const key = \`lock:catalog:\${shopId}\`;
  if (!(await redis.set(key, token, "NX", "PX", 20_000))) return;
  const timer = setInterval(async () => {
    const renewed = await redis.eval(RENEW, 1, key, token, 20_000);
    if (!renewed) controller.abort(new Error("catalog lock lost"));
  }, 5_000);
  try {
    await pullCatalog(shopId, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`;

const scriptTryCatchLogs = `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function rebuildSearch(token: string) {
  const key = "lock:search-index";
  if (!(await redis.set(key, token, "NX", "PX", 20_000))) return;
  const timer = setInterval(async () => {
    try {
      const renewed = await redis.eval(RENEW, 1, key, token, 20_000);
      if (renewed === 0) console.warn("search index lock was lost");
    } catch (err) {
      console.error("renewal failed", err);
    }
  }, 5_000);
  try {
    await reindexAll();
  } finally {
    clearInterval(timer);
  }
}`;

const scriptThrowInTimer = `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function compileAssets(token: string, bundles: string[]) {
  const key = "lock:assets";
  if (!(await redis.set(key, token, "NX", "PX", 60_000))) return;
  const timer = setInterval(async () => {
    const n = await redis.eval(RENEW, 1, key, token, 60_000).catch(() => 0);
    if (n === 0) throw new Error("assets lock lost");
  }, 20_000);
  try {
    for (const b of bundles) await compile(b);
  } finally {
    clearInterval(timer);
  }
}`;

const scriptInlineIgnored = `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function compileInline(token: string, bundles: string[]) {
  const key = "lock:assets";
  if (!(await redis.set(key, token, "NX", "PX", 60_000))) return;
  for (const b of bundles) {
    await compile(b);
    await redis.eval(RENEW, 1, key, token, 60_000);
  }
}`;

const redlockExtendLogs = `import Redis from "ioredis";
import Redlock from "redlock";

const redlock = new Redlock([new Redis()]);

export async function settleLedger(day: string) {
  let lock = await redlock.acquire([\`locks:ledger:\${day}\`], 10_000);
  const timer = setInterval(() => {
    lock.extend(10_000).then((next) => { lock = next; }).catch((err) => console.error(err));
  }, 4_000);
  try {
    await settle(day);
  } finally {
    clearInterval(timer);
    await lock.release();
  }
}`;

const redlockExtendArrow = `import Redis from "ioredis";
import Redlock from "redlock";

export class LockService {
  private readonly redlock = new Redlock([new Redis()]);

  async withLock<T>(name: string, callback: () => Promise<T>): Promise<T> {
    const lock = await this.redlock.acquire([name], 5_000);
    const timer = setInterval(() => lock.extend(5_000), 3_500);
    try {
      return await callback();
    } finally {
      clearInterval(timer);
      await lock.release();
    }
  }
}`;

const redlockUsing = `import Redis from "ioredis";
import Redlock from "redlock";

const redlock = new Redlock([new Redis()]);

export async function rotatePartitions() {
  await redlock.using(["locks:partitions"], 30_000, async () => {
    for (const table of await listTables()) {
      await rotate(table);
    }
  });
}

export async function vacuum(db: string) {
  await redlock.using([\`locks:vacuum:\${db}\`], 30_000, { retryCount: 0 }, async (signal) => {
    await runVacuum(db);
  });
}`;

const semaphoreOnLockLost = `import Redis from "ioredis";
import { Mutex } from "redis-semaphore";

const redis = new Redis();

export async function importFeed(feedId: string) {
  const mutex = new Mutex(redis, \`feed:\${feedId}\`, {
    lockTimeout: 30_000,
    onLockLost: (err) => console.error("feed lock lost", err),
  });
  await mutex.acquire();
  try {
    await readFeed(feedId);
  } finally {
    await mutex.release();
  }
}`;

const prismaVoidHeartbeat = `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function claimExport(id: string, workerId: string) {
  const { count } = await prisma.export.updateMany({
    where: { id, status: { not: "RUNNING" } },
    data: { status: "RUNNING", lockedBy: workerId, heartbeatAt: new Date() },
  });
  return count === 1;
}

function heartbeat(id: string, workerId: string) {
  return prisma.export.updateMany({ where: { id, lockedBy: workerId }, data: { heartbeatAt: new Date() } });
}

export async function runExport(id: string, workerId: string) {
  if (!(await claimExport(id, workerId))) return;
  const timer = setInterval(() => void heartbeat(id, workerId), 15_000);
  try {
    await render(id);
  } finally {
    clearInterval(timer);
  }
}`;

const prismaUnfenced = `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function processVideo(id: string, workerId: string, controller: AbortController) {
  const claimed = await prisma.video.updateMany({
    where: { id, status: "QUEUED" },
    data: { status: "TRANSCODING", lockedBy: workerId, heartbeatAt: new Date() },
  });
  if (claimed.count === 0) return;
  const timer = setInterval(async () => {
    try {
      await prisma.video.update({ where: { id }, data: { heartbeatAt: new Date() } });
    } catch (err) {
      controller.abort(err);
    }
  }, 10_000);
  try {
    await transcode(id, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`;

const knexRecursiveTimeout = `import knexFactory from "knex";

const knex = knexFactory({ client: "pg" });

export async function claim(id, workerId) {
  const n = await knex("exports").where({ id, status: "queued" }).update({ status: "running", locked_by: workerId, heartbeat_at: knex.fn.now() });
  return n === 1;
}

export async function run(id, workerId) {
  if (!(await claim(id, workerId))) return;
  let timer;
  const beat = () => {
    knex("exports")
      .where({ id, locked_by: workerId })
      .update({ heartbeat_at: knex.fn.now() })
      .then(() => {
        timer = setTimeout(beat, 10_000);
      });
  };
  timer = setTimeout(beat, 10_000);
  try {
    await exportRows(id);
  } finally {
    clearTimeout(timer);
  }
}`;

const sqlTryCatchLogs = `import { Pool } from "pg";

const pool = new Pool();

export async function work(workerId: string) {
  const { rows } = await pool.query(
    "UPDATE jobs SET status = 'running', locked_by = $1, heartbeat_at = now() WHERE id = (SELECT id FROM jobs WHERE status = 'queued' LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
    [workerId],
  );
  const job = rows[0];
  if (!job) return;
  const timer = setInterval(async () => {
    try {
      await pool.query("UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND locked_by = $2", [job.id, workerId]);
    } catch (err) {
      console.error("heartbeat failed", err);
    }
  }, 10_000);
  try {
    await perform(job.id);
  } finally {
    clearInterval(timer);
  }
}`;

const typeormInterval = `import { Injectable } from "@nestjs/common";
import { Interval } from "@nestjs/schedule";
import { InjectRepository } from "@nestjs/typeorm";
import { Not, Repository } from "typeorm";
import { Build } from "./build.entity";

@Injectable()
export class BuildRunner {
  private current?: { id: string; runner: string };

  constructor(@InjectRepository(Build) private readonly builds: Repository<Build>) {}

  async start(id: string, runner: string) {
    const res = await this.builds.update({ id, status: Not("BUILDING") }, { status: "BUILDING", lockedBy: runner });
    if (!res.affected) return;
    this.current = { id, runner };
  }

  @Interval(15_000)
  async heartbeat() {
    if (!this.current) return;
    await this.builds.update({ id: this.current.id, lockedBy: this.current.runner }, { heartbeatAt: new Date() });
  }
}`;

const typeormCallback = `import { Injectable } from "@nestjs/common";
import { InjectRepository } from "@nestjs/typeorm";
import { Not, Repository } from "typeorm";
import { Render } from "./render.entity";

@Injectable()
export class RenderService {
  constructor(@InjectRepository(Render) private readonly renders: Repository<Render>, private readonly renderer: Renderer) {}

  async process(id: string) {
    const claim = await this.renders.update({ id, status: Not("RENDERING") }, { status: "RENDERING" });
    if (!claim.affected) return;
    await this.renderer.render(id, () => this.heartbeat(id));
  }

  private async heartbeat(id: string) {
    await this.renders.update({ id, status: "RENDERING" }, { updatedAt: new Date() });
  }
}`;

const mongoCatchConsole = `import { MongoClient } from "mongodb";

const jobs = new MongoClient(process.env.MONGO_URL!).db().collection("jobs");

export async function take(id: string, worker: string) {
  return jobs.findOneAndUpdate({ _id: id, status: "queued" }, { $set: { status: "running", lockedBy: worker, heartbeatAt: new Date() } });
}

export function keepAlive(id: string, worker: string) {
  return setInterval(() => {
    jobs.updateOne({ _id: id, lockedBy: worker }, { $set: { heartbeatAt: new Date() } }).catch(console.error);
  }, 5_000);
}`;

const drizzleResultUnchecked = `import { and, eq, ne } from "drizzle-orm";
import { db } from "./db";
import { imports } from "./schema";

export async function runImport(id: string, workerId: string, controller: AbortController) {
  const claimed = await db
    .update(imports)
    .set({ status: "importing", lockedBy: workerId, heartbeatAt: new Date() })
    .where(and(eq(imports.id, id), ne(imports.status, "importing")))
    .returning({ id: imports.id });
  if (claimed.length === 0) return;
  const timer = setInterval(async () => {
    try {
      const beat = await db
        .update(imports)
        .set({ heartbeatAt: new Date() })
        .where(and(eq(imports.id, id), eq(imports.lockedBy, workerId)));
      if (beat.rowCount === 0) console.warn("import lease lost", id);
    } catch (err) {
      controller.abort(err);
    }
  }, 10_000);
  try {
    await readRows(id, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`;

const plainJsRecursive = `const Redis = require("ioredis");

const redis = new Redis();
${RENEW_CONST}

function keepLeader(token, onLost) {
  let timer;
  function tick() {
    redis.eval(RENEW, 1, "leader:scheduler", token, 15000).then((held) => {
      if (!held) console.log("lost leadership");
      timer = setTimeout(tick, 5000);
    }, onLost);
  }
  tick();
  return () => clearTimeout(timer);
}

async function campaign(token) {
  return (await redis.set("leader:scheduler", token, "NX", "PX", 15000)) === "OK";
}

module.exports = { keepLeader, campaign };`;

const sqlClaimLeaseLostSwallowed = `import { Prisma, PurgeStatus } from "@prisma/client";
import { prisma } from "./prisma";

const WORKER_ID = \`\${process.env.HOSTNAME}:\${process.pid}\`;
class LeaseLostError extends Error {}

async function claimPurge(): Promise<{ id: number } | null> {
  const rows = await prisma.$queryRaw<{ id: number }[]>(Prisma.sql\`
    UPDATE "PurgeJob" SET "PurgeJob_Status" = 'PROCESSING', "PurgeJob_WorkerID" = \${WORKER_ID}, "PurgeJob_HeartbeatAt" = NOW()
    WHERE "PurgeJob_ID" = (
      SELECT "PurgeJob_ID" FROM "PurgeJob" WHERE "PurgeJob_Status" = 'PENDING' LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING "PurgeJob_ID" AS id
  \`);
  return rows[0] ?? null;
}

async function heartbeat(job: { id: number }): Promise<void> {
  const updated = await prisma.purgeJob.updateMany({
    where: { id: job.id, status: PurgeStatus.PROCESSING, workerId: WORKER_ID },
    data: { heartbeatAt: new Date() },
  });
  if (updated.count !== 1) throw new LeaseLostError(\`purge \${job.id} was reclaimed\`);
}

export async function runPurgeOnce(): Promise<void> {
  const job = await claimPurge();
  if (!job) return;
  const timer = setInterval(() => {
    void heartbeat(job).catch(() => undefined);
  }, 40_000);
  try {
    await purge(job.id);
  } finally {
    clearInterval(timer);
  }
}`;

const redlockUsingUnderscore = `import Redis from "ioredis";
import Redlock from "redlock";

const redlock = new Redlock([new Redis()]);

export async function withSessionLock<T>(userId: string, fn: () => Promise<T>): Promise<T> {
  return redlock.using([\`session:lock:\${userId}\`], 60_000, async (_signal) => {
    return fn();
  });
}`;

const leaderGetCompare = `import { createClient } from "redis";

const client = createClient();
const KEY = "leader:billing";

export async function campaign(id: string) {
  return (await client.set(KEY, id, { NX: true, PX: 15_000 })) === "OK";
}

export function keepLeading(id: string, controller: AbortController) {
  return setInterval(async () => {
    try {
      if ((await client.get(KEY)) !== id) return controller.abort();
      await client.pExpire(KEY, 15_000);
    } catch (err) {
      controller.abort(err);
    }
  }, 5_000);
}`;

// ---------------------------------------------------------------- data helpers

const redisLock = (key: string, acquireLine: string) => ({
  lock: `the lock "${key}"`,
  where: `acquired at line ${acquireLine}`,
});
/** A lease row module whose renewal helper answers its caller with true or false (in our words, after corpus Cp19). */
const LEASE_HELPERS = `import mongoose from "mongoose";
const Lease = mongoose.model("Lease");
const ME = \`\${process.pid}\`;
export async function takeLease(name) {
  try {
    await Lease.create({ _id: name, holder: ME, expiresAt: new Date(Date.now() + 30_000) });
    return true;
  } catch (e) {
    if (e.code === 11000) return false;
    throw e;
  }
}
export async function renewLease(name, ms = 30_000) {
  try {
    const r = await Lease.updateOne({ _id: name, holder: ME }, { $set: { expiresAt: new Date(Date.now() + ms) } });
    if (r.matchedCount > 0) {
      return true;
    } else {
      return false;
    }
  } catch (err) {
    console.error(err);
    return false;
  }
}
`;
/** The same module with its own worker, which drops the helper's answer. */
const LEASE_HELPERS_USED =
  LEASE_HELPERS +
  `export async function rebuild(name) {
  if (!(await takeLease(name))) return;
  const timer = setInterval(() => { void renewLease(name); }, 10_000);
  try {
    await rebuildIndex();
  } finally {
    clearInterval(timer);
  }
}
`;

const rowLock = (model: string, claimLine: string) => ({
  lock: `the claimed ${model} row`,
  where: `claimed at line ${claimLine}`,
});
const RESULT_REDIS = "it returns 0 once the key no longer holds this holder's token";
const RESULT_ROW = "it matches no row once the lease is lost";

ruleTester.run("heartbeat-abort", rule, {
  valid: [
    // an exported renewal helper that tells its callers (all in other modules) whether the lease was extended:
    // whether the work stops is their decision, which this module cannot see
    { code: LEASE_HELPERS, languageOptions: javascript },
    {
      // the release clears the lease (lockedUntil = now, owner-checked): it ends the hold, it is no renewal
      code: LEASE_LOCK,
      languageOptions: javascript,
    },
    // owner-checked renewal in a timer: 0 and a rejection both abort the work
    `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function syncCatalog(shopId: string, token: string) {
  const key = \`lock:catalog:\${shopId}\`;
  if (!(await redis.set(key, token, "NX", "PX", 20_000))) return;
  const controller = new AbortController();
  const timer = setInterval(() => {
    redis.eval(RENEW, 1, key, token, 20_000).then(
      (renewed) => {
        if (renewed === 0) controller.abort(new Error("catalog lock lost"));
      },
      (err) => controller.abort(err),
    );
  }, 5_000);
  try {
    await pullCatalog(shopId, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`,
    // lookalikes: a session TTL refresh and a cache TTL refresh on a timer are not lock renewals
    `import Redis from "ioredis";

const redis = new Redis();

export async function touchSession(sessionId: string) {
  await redis.expire(\`session:\${sessionId}\`, 3600);
}

export async function cacheReport(id: string, body: string) {
  await redis.set(\`cache:report:\${id}\`, body, "EX", 300);
  setInterval(() => void redis.expire(\`cache:report:\${id}\`, 300), 60_000);
}

export async function lockReport(id: string, token: string) {
  return redis.set(\`lock:report:\${id}\`, token, "NX", "PX", 10_000);
}`,
    // lookalikes: presence pings and session touches of rows nobody claims, polling that reads, inline progress
    `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function claimJob(id: string) {
  const res = await prisma.job.updateMany({ where: { id, status: "QUEUED" }, data: { status: "RUNNING", heartbeatAt: new Date() } });
  return res.count === 1;
}

export function startPresence(workerId: string) {
  return setInterval(() => void prisma.worker.update({ where: { id: workerId }, data: { lastSeenAt: new Date() } }), 30_000);
}

export async function touch(sessionId: string) {
  await prisma.session.update({ where: { id: sessionId }, data: { lastSeenAt: new Date() } });
}

export function watchCancellation(id: string, controller: AbortController) {
  return setInterval(async () => {
    try {
      const job = await prisma.job.findUnique({ where: { id } });
      if (job?.status === "CANCELLED") controller.abort();
    } catch {}
  }, 5_000);
}

export async function runJob(id: string, items: string[]) {
  for (const [i, item] of items.entries()) {
    await handle(item);
    await prisma.job.update({ where: { id }, data: { progress: i + 1, progressUpdatedAt: new Date() } });
  }
}`,
    // a fenced Prisma heartbeat whose count and rejection both abort the work
    `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function transcode(id: string, workerId: string) {
  const claimed = await prisma.video.updateMany({
    where: { id, status: "QUEUED" },
    data: { status: "TRANSCODING", lockedBy: workerId, heartbeatAt: new Date() },
  });
  if (claimed.count === 0) return;
  const controller = new AbortController();
  const timer = setInterval(async () => {
    try {
      const { count } = await prisma.video.updateMany({ where: { id, lockedBy: workerId }, data: { heartbeatAt: new Date() } });
      if (count === 0) controller.abort(new Error("lease lost"));
    } catch (err) {
      controller.abort(err);
    }
  }, 10_000);
  try {
    await runFfmpeg(id, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`,
    // queue libraries renew their own locks: BullMQ's extendLock, pg-boss's heartbeat
    `import { Worker } from "bullmq";
import PgBoss from "pg-boss";

const worker = new Worker("renders", async (job, token) => {
  for (const frame of job.data.frames) {
    await renderFrame(frame);
    await job.extendLock(token!, 30_000);
  }
});
worker.on("stalled", (id) => console.warn("stalled", id));

const boss = new PgBoss(process.env.DATABASE_URL!);
await boss.work("emails", { batchSize: 1 }, async ([job]) => {
  await sendEmail(job.data);
});`,
    // Redlock: extend awaited inline in the work loop (a failure propagates and stops the loop)
    `import Redis from "ioredis";
import Redlock from "redlock";

const redlock = new Redlock([new Redis()]);

export async function migrateTenants(tenants: string[]) {
  let lock = await redlock.acquire(["locks:migrate"], 15_000);
  try {
    for (const tenant of tenants) {
      await migrate(tenant);
      lock = await lock.extend(15_000);
    }
  } finally {
    await lock.release();
  }
}`,
    // Redlock using(): the signal read between steps, passed to fetch, or a callback with no await at all
    `import Redis from "ioredis";
import Redlock from "redlock";

const redlock = new Redlock([new Redis()]);

export async function payout(batchId: string) {
  await redlock.using([\`locks:payout:\${batchId}\`], 60_000, async (signal) => {
    for (const p of await pending(batchId)) {
      if (signal.aborted) throw signal.error;
      await send(p);
    }
  });
}

export async function mirror(url: string) {
  await redlock.using(["locks:mirror"], 60_000, async (signal) => {
    const res = await fetch(url, { signal });
    await store(await res.text());
  });
}

export async function bump() {
  await redlock.using(["locks:counter"], 5_000, () => {
    counter += 1;
  });
}`,
    // redis-semaphore: onLockLost aborts, the default handler (which throws), a handler that rethrows
    `import Redis from "ioredis";
import { Mutex, Semaphore } from "redis-semaphore";

const redis = new Redis();

export async function importFeed(feedId: string) {
  const controller = new AbortController();
  const mutex = new Mutex(redis, \`feed:\${feedId}\`, { onLockLost: (err) => controller.abort(err) });
  await mutex.acquire();
  try {
    await readFeed(feedId, controller.signal);
  } finally {
    await mutex.release();
  }
}

export async function thumbnails(batch: string[]) {
  const semaphore = new Semaphore(redis, "thumbs", 4);
  await semaphore.acquire();
  try {
    await render(batch);
  } finally {
    await semaphore.release();
  }
}

export async function compact() {
  const mutex = new Mutex(redis, "compact", {
    onLockLost(err) {
      throw err;
    },
  });
  await mutex.acquire();
  await runCompaction();
  await mutex.release();
}`,
    // a flag the work checks, set by both the result and the rejection of a renewal helper
    `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

let lost = false;

async function renew(key: string, token: string): Promise<boolean> {
  return (await redis.eval(RENEW, 1, key, token, 15_000)) === 1;
}

export async function crawl(site: string, token: string, pages: string[]) {
  const key = \`lock:crawl:\${site}\`;
  if (!(await redis.set(key, token, "NX", "PX", 15_000))) return;
  const timer = setInterval(() => {
    renew(key, token)
      .then((held) => {
        if (!held) lost = true;
      })
      .catch(() => {
        lost = true;
      });
  }, 5_000);
  try {
    for (const page of pages) {
      if (lost) throw new Error("crawl lock lost");
      await fetchPage(page);
    }
  } finally {
    clearInterval(timer);
  }
}`,
    // node-redis: renewed inline, the loop returns when the lease is lost; a renewal that rejects a raced promise
    `import { createClient } from "redis";

const client = createClient();
${RENEW_CONST}

export async function reindex(token: string, batches: string[][]) {
  const key = "lock:reindex";
  if (!(await client.set(key, token, { NX: true, PX: 30_000 }))) return;
  for (const batch of batches) {
    const renewed = await client.eval(RENEW, { keys: [key], arguments: [token, "30000"] });
    if (!renewed) return;
    await indexBatch(batch);
  }
}

export function lease(name: string, token: string, work: (signal: AbortSignal) => Promise<void>) {
  const key = \`lease:\${name}\`;
  return new Promise<void>((resolve, reject) => {
    client.set(key, token, { NX: true, PX: 10_000 }).then((ok) => {
      if (!ok) return resolve();
      const controller = new AbortController();
      const timer = setInterval(() => {
        client.eval(RENEW, { keys: [key], arguments: [token, "10000"] }).then((n) => {
          if (n === 0) reject(new Error("lease lost"));
        }, reject);
      }, 3_000);
      work(controller.signal).then(resolve, reject).finally(() => clearInterval(timer));
    }, reject);
  });
}`,
    // SETNX then EXPIRE is the acquire's TTL (require-lock-ttl's finding), not a renewal; an expiry on release
    `import Redis from "ioredis";

const redis = new Redis();

export async function nightly(token: string) {
  const key = "lock:nightly";
  if (!(await redis.setnx(key, token))) return;
  await redis.expire(key, 600);
  await runNightly();
}

export async function withLock(id: string, token: string) {
  if (!(await redis.set(\`lock:\${id}\`, token, "NX", "PX", 5000))) return;
  await doWork(id);
}

export async function releaseLock(id: string) {
  await redis.pexpire(\`lock:\${id}\`, 1);
}`,
    // a renewal failure handed to a module function that aborts, and one that exits the process
    `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}
const controller = new AbortController();

function stopWork(reason: unknown) {
  controller.abort(reason);
}

export async function ingest(token: string) {
  const key = "lock:ingest";
  if (!(await redis.set(key, token, "NX", "PX", 30_000))) return;
  setInterval(async () => {
    try {
      if ((await redis.eval(RENEW, 1, key, token, 30_000)) === 0) stopWork(new Error("ingest lock lost"));
    } catch (err) {
      stopWork(err);
    }
  }, 10_000);
  await consume(controller.signal);
}

export async function singleton(token: string) {
  const key = "lock:singleton";
  if (!(await redis.set(key, token, "NX", "PX", 30_000))) process.exit(0);
  setInterval(() => {
    redis.eval(RENEW, 1, key, token, 30_000).then((n) => n || process.exit(1), () => process.exit(1));
  }, 10_000);
  await serve();
}`,
    // Knex heartbeat whose count is checked and whose rejection aborts, in plain JavaScript
    {
      code: `import knexFactory from "knex";

const knex = knexFactory({ client: "pg" });

export async function runExport(id, workerId, controller) {
  const claimed = await knex("exports").where({ id }).whereNot("status", "running").update({ status: "running", locked_by: workerId });
  if (claimed !== 1) return;
  const timer = setInterval(() => {
    knex("exports")
      .where({ id, locked_by: workerId })
      .update({ heartbeat_at: knex.fn.now() })
      .then((n) => {
        if (n === 0) controller.abort(new Error("export lease lost"));
      })
      .catch((err) => controller.abort(err));
  }, 10000);
  try {
    await renderExport(id, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`,
      languageOptions: javascript,
    },
    // a Prisma update (which throws when no row matches) fenced on the owner and awaited in the work loop
    `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function processBatch(id: string, workerId: string, items: string[]) {
  const claimed = await prisma.batch.updateMany({
    where: { id, status: { not: "PROCESSING" } },
    data: { status: "PROCESSING", lockedBy: workerId },
  });
  if (claimed.count === 0) return;
  for (const item of items) {
    await handle(item);
    await heartbeat(id, workerId);
  }
}

async function heartbeat(id: string, workerId: string) {
  await prisma.batch.update({ where: { id, lockedBy: workerId }, data: { heartbeatAt: new Date() } });
}`,
    // WATCH, GET compare, then SET … XX PX in the MULTI: an owner-checked renewal
    `import Redis from "ioredis";

const redis = new Redis();

export async function acquire(key: string, token: string) {
  return redis.set(key, token, "NX", "PX", 10_000);
}

export async function renewLock(key: string, token: string): Promise<boolean> {
  await redis.watch(key);
  if ((await redis.get(key)) !== token) {
    await redis.unwatch();
    return false;
  }
  const res = await redis.multi().set(key, token, "XX", "PX", 10_000).exec();
  return res !== null;
}`,
    // a refresher class: a lost lock stops the timer, clears the flag the holder reads, and calls onLockLost
    `import Redis from "ioredis";
import { randomUUID } from "node:crypto";

${RENEW_CONST}

export class RefreshingLock {
  private readonly token = randomUUID();
  private timer?: NodeJS.Timeout;
  private acquired = false;

  constructor(private readonly redis: Redis, private readonly key: string, private readonly onLockLost: (err: Error) => void) {}

  get isAcquired(): boolean {
    return this.acquired;
  }

  async acquire(): Promise<boolean> {
    this.acquired = (await this.redis.set(this.key, this.token, "PX", 10_000, "NX")) === "OK";
    if (this.acquired) this.timer = setInterval(this.refresh, 8_000);
    return this.acquired;
  }

  private refresh = async (): Promise<void> => {
    try {
      const refreshed = await this.redis.eval(RENEW, 1, this.key, this.token, 10_000);
      if (!refreshed) {
        this.acquired = false;
        clearInterval(this.timer);
        this.onLockLost(new Error(\`lost \${this.key}\`));
      }
    } catch (err) {
      this.onLockLost(err as Error);
    }
  };
}`,
    // a raw-SQL claim and a Prisma heartbeat fenced on the same status column: a lost lease aborts the purge
    `import { Prisma, PurgeStatus } from "@prisma/client";
import { prisma } from "./prisma";

const WORKER_ID = \`\${process.env.HOSTNAME}:\${process.pid}\`;

async function claimPurge(): Promise<{ id: number } | null> {
  const rows = await prisma.$queryRaw<{ id: number }[]>(Prisma.sql\`
    UPDATE "PurgeJob" SET "PurgeJob_Status" = 'PROCESSING', "PurgeJob_WorkerID" = \${WORKER_ID}, "PurgeJob_HeartbeatAt" = NOW()
    WHERE "PurgeJob_ID" = (
      SELECT "PurgeJob_ID" FROM "PurgeJob" WHERE "PurgeJob_Status" = 'PENDING' LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    RETURNING "PurgeJob_ID" AS id
  \`);
  return rows[0] ?? null;
}

async function heartbeat(job: { id: number }): Promise<void> {
  const updated = await prisma.purgeJob.updateMany({
    where: { id: job.id, status: PurgeStatus.PROCESSING },
    data: { heartbeatAt: new Date() },
  });
  if (updated.count !== 1) throw new Error(\`purge \${job.id} was reclaimed\`);
}

export async function runPurgeOnce(): Promise<void> {
  const job = await claimPurge();
  if (!job) return;
  const lease = new AbortController();
  const timer = setInterval(() => {
    heartbeat(job).catch((err) => lease.abort(err));
  }, 40_000);
  try {
    await purge(job.id, lease.signal);
  } finally {
    clearInterval(timer);
  }
}`,
    // odd shapes: missing arguments, spreads, mutual recursion; nothing to judge, nothing thrown
    `import Redis from "ioredis";
import Redlock from "redlock";

const redis = new Redis();
const redlock = new Redlock([redis]);
${RENEW_CONST}

export async function withLock(key: string, token: string, args: any[]) {
  if (!(await redis.set(key, token, "NX", "PX", 1000))) return;
  setInterval();
  new Promise();
  await redlock.using(...args);
  await redlock.using(["locks:a"], 1000, ...args);
  redis.eval(RENEW, 1, key, token, 1000).then(...args);
  const a = (): unknown => b();
  const b = (): unknown => a();
  setInterval(a, 10);
}`,
  ],
  invalid: [
    {
      // the same helper, called by this module's own worker, which drops its answer: the catch that only logs is
      // judged here
      code: LEASE_HELPERS_USED,
      languageOptions: javascript,
      errors: [
        {
          // The helper answers its caller (false when nothing matched or the update failed); the timer drops the
          // answer, so that is where the work is left going on.
          messageId: "resultIgnored",
          data: { ...rowLock("Lease", "6"), signal: "it matches no row once the lease is lost" },
          ...at(LEASE_HELPERS_USED, "renewLease(name); }"),
        },
      ],
    },
    {
      // ioredis: a plain PEXPIRE on a timer renews whoever holds the key
      code: ioredisPlainPexpire,
      errors: [
        {
          messageId: "unownedRenewal",
          data: { ...redisLock("lock:report:*", lineOf(ioredisPlainPexpire, "redis.set")), command: "PEXPIRE" },
          ...at(ioredisPlainPexpire, "pexpire("),
          endLine: at(ioredisPlainPexpire, "pexpire(").line,
          endColumn: at(ioredisPlainPexpire, ", 30_000);").column + 9,
        },
      ],
    },
    {
      // node-redis: a plain EXPIRE in a renewal helper, even with its result read
      code: nodeRedisPlainExpire,
      errors: [
        {
          messageId: "unownedRenewal",
          data: { ...redisLock("lease:*", lineOf(nodeRedisPlainExpire, "client.set")), command: "EXPIRE" },
          ...at(nodeRedisPlainExpire, "expire("),
        },
      ],
    },
    {
      // ioredis class: a blind SET … PX every half TTL overwrites the next owner's key
      code: docOwnerSetPx,
      errors: [
        {
          messageId: "unownedRenewal",
          data: { ...redisLock("doc-lock:*", lineOf(docOwnerSetPx, "this.redis.set")), command: "SET … PX" },
          ...at(docOwnerSetPx, "set(", 3),
        },
      ],
    },
    {
      // compare-and-expire script whose failure is swallowed by .catch(() => {})
      code: scriptCatchEmpty,
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...redisLock("lock:invoices:*", lineOf(scriptCatchEmpty, "redis.set")),
            handlerLine: lineOf(scriptCatchEmpty, ".catch("),
          },
          ...at(scriptCatchEmpty, "eval("),
        },
      ],
    },
    {
      // the result aborts the work, but a rejection escapes the async timer callback
      code: scriptEscapesTimer,
      errors: [
        {
          messageId: "escapesTimer",
          data: {
            ...redisLock("lock:catalog:*", lineOf(scriptEscapesTimer, "redis.set")),
            timerLine: lineOf(scriptEscapesTimer, "setInterval"),
          },
          ...at(scriptEscapesTimer, "eval("),
        },
      ],
    },
    {
      // try/catch that only logs
      code: scriptTryCatchLogs,
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...redisLock("lock:search-index", lineOf(scriptTryCatchLogs, "redis.set")),
            handlerLine: lineOf(scriptTryCatchLogs, "catch (err)"),
          },
          ...at(scriptTryCatchLogs, "eval("),
        },
      ],
    },
    {
      // the result is checked, but the failure branch throws inside the timer callback, where nobody catches it
      code: scriptThrowInTimer,
      errors: [
        {
          messageId: "noAbort",
          data: {
            ...redisLock("lock:assets", lineOf(scriptThrowInTimer, "redis.set")),
            checkLine: lineOf(scriptThrowInTimer, "if (n === 0)"),
          },
          ...at(scriptThrowInTimer, "eval("),
        },
      ],
    },
    {
      // inline in the work loop: awaited, but the 0 that says the lock is gone is never read
      code: scriptInlineIgnored,
      errors: [
        {
          messageId: "resultIgnored",
          data: { ...redisLock("lock:assets", lineOf(scriptInlineIgnored, "redis.set")), signal: RESULT_REDIS },
          ...at(scriptInlineIgnored, "eval("),
        },
      ],
    },
    {
      // Redlock: extend() on a timer, failure only logged
      code: redlockExtendLogs,
      errors: [
        {
          messageId: "swallowed",
          data: {
            lock: "the Redlock lock `lock`",
            where: `acquired at line ${lineOf(redlockExtendLogs, "redlock.acquire")}`,
            handlerLine: lineOf(redlockExtendLogs, ".catch("),
          },
          ...at(redlockExtendLogs, "extend("),
        },
      ],
    },
    {
      // Redlock: extend() returned to setInterval, which drops it
      code: redlockExtendArrow,
      errors: [
        {
          messageId: "notAwaited",
          data: {
            lock: "the Redlock lock `lock`",
            where: `acquired at line ${lineOf(redlockExtendArrow, "this.redlock.acquire")}`,
            dropLine: lineOf(redlockExtendArrow, "lock.extend"),
          },
          ...at(redlockExtendArrow, "extend("),
        },
      ],
    },
    {
      // Redlock using(): no signal parameter; a signal parameter never read (with settings)
      code: redlockUsing,
      errors: [
        {
          messageId: "usingNoSignal",
          data: {
            lock: 'the lock "locks:partitions"',
            where: `acquired at line ${lineOf(redlockUsing, "redlock.using")}`,
          },
          ...at(redlockUsing, "using("),
        },
        {
          messageId: "usingUnusedSignal",
          data: {
            lock: 'the lock "locks:vacuum:*"',
            where: `acquired at line ${lineOf(redlockUsing, "redlock.using", 2)}`,
            signal: "signal",
          },
          ...at(redlockUsing, "using(", 2),
        },
      ],
    },
    {
      // redis-semaphore: an onLockLost handler that only logs replaces the default that stops the process
      code: semaphoreOnLockLost,
      errors: [
        {
          messageId: "swallowed",
          data: {
            lock: 'the redis-semaphore lock "feed:*"',
            where: `acquired at line ${lineOf(semaphoreOnLockLost, "mutex.acquire")}`,
            handlerLine: lineOf(semaphoreOnLockLost, "onLockLost"),
          },
          ...at(semaphoreOnLockLost, "onLockLost"),
        },
      ],
    },
    {
      // Prisma: void heartbeat() on a timer drops both the rejection and the count
      code: prismaVoidHeartbeat,
      errors: [
        {
          messageId: "notAwaited",
          data: {
            ...rowLock("export", lineOf(prismaVoidHeartbeat, "prisma.export.updateMany")),
            dropLine: lineOf(prismaVoidHeartbeat, "void heartbeat"),
          },
          ...at(prismaVoidHeartbeat, "updateMany(", 2),
        },
      ],
    },
    {
      // Prisma: a heartbeat by id only succeeds for whoever holds the row now
      code: prismaUnfenced,
      errors: [
        {
          messageId: "unfencedHeartbeat",
          data: { ...rowLock("video", lineOf(prismaUnfenced, "prisma.video.updateMany")), rowFilter: "id" },
          ...at(prismaUnfenced, "update("),
        },
      ],
    },
    {
      // Knex in plain JavaScript: a recursive setTimeout whose chain is never awaited or caught
      code: knexRecursiveTimeout,
      languageOptions: javascript,
      errors: [
        {
          messageId: "notAwaited",
          data: {
            ...rowLock("exports", lineOf(knexRecursiveTimeout, 'knex("exports")')),
            dropLine: lineOf(knexRecursiveTimeout, 'knex("exports")', 2),
          },
          ...at(knexRecursiveTimeout, "update(", 2),
        },
      ],
    },
    {
      // raw SQL: a fenced heartbeat in a try/catch that only logs
      code: sqlTryCatchLogs,
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...rowLock("jobs", lineOf(sqlTryCatchLogs, "pool.query(")),
            handlerLine: lineOf(sqlTryCatchLogs, "catch (err)"),
          },
          ...at(sqlTryCatchLogs, "query(", 2),
        },
      ],
    },
    {
      // NestJS @Interval heartbeat: TypeORM's affected count is never read
      code: typeormInterval,
      errors: [
        {
          messageId: "resultIgnored",
          data: { ...rowLock("Build", lineOf(typeormInterval, "this.builds.update")), signal: RESULT_ROW },
          ...at(typeormInterval, "update(", 2),
        },
      ],
    },
    {
      // a heartbeat method the renderer calls back: fenced on the status, but its result is ignored
      code: typeormCallback,
      errors: [
        {
          messageId: "resultIgnored",
          data: { ...rowLock("Render", lineOf(typeormCallback, "this.renders.update")), signal: RESULT_ROW },
          ...at(typeormCallback, "update(", 2),
        },
      ],
    },
    {
      // MongoDB: .catch(console.error) swallows the failure
      code: mongoCatchConsole,
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...rowLock("jobs", lineOf(mongoCatchConsole, "jobs.findOneAndUpdate")),
            handlerLine: lineOf(mongoCatchConsole, "console.error"),
          },
          ...at(mongoCatchConsole, "updateOne("),
        },
      ],
    },
    {
      // Drizzle: the rejection aborts, but a heartbeat that matched no row only warns
      code: drizzleResultUnchecked,
      errors: [
        {
          messageId: "noAbort",
          data: {
            ...rowLock("imports", lineOf(drizzleResultUnchecked, "const claimed")),
            checkLine: lineOf(drizzleResultUnchecked, "if (beat.rowCount"),
          },
          ...at(drizzleResultUnchecked, "where(", 2),
        },
      ],
    },
    {
      // plain JavaScript: recursive setTimeout whose lost-leadership branch only logs
      code: plainJsRecursive,
      languageOptions: javascript,
      errors: [
        {
          messageId: "noAbort",
          data: {
            ...redisLock("leader:scheduler", lineOf(plainJsRecursive, "redis.set")),
            checkLine: lineOf(plainJsRecursive, "if (!held)"),
          },
          ...at(plainJsRecursive, "eval("),
        },
      ],
    },
    {
      // the heartbeat detects the lost lease and throws, but the timer swallows the throw with .catch(() => undefined)
      code: sqlClaimLeaseLostSwallowed,
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...rowLock("purgeJob", lineOf(sqlClaimLeaseLostSwallowed, "prisma.$queryRaw")),
            handlerLine: lineOf(sqlClaimLeaseLostSwallowed, ".catch("),
          },
          ...at(sqlClaimLeaseLostSwallowed, "updateMany("),
        },
      ],
    },
    {
      // node-redis leader election: GET, compare in JavaScript, then a separate PEXPIRE
      code: leaderGetCompare,
      errors: [
        {
          messageId: "getCompareRenewal",
          data: {
            ...redisLock("leader:billing", lineOf(leaderGetCompare, "client.set")),
            command: "PEXPIRE",
            getLine: lineOf(leaderGetCompare, "client.get"),
          },
          ...at(leaderGetCompare, "pExpire("),
        },
      ],
    },
    {
      // Redlock v5 redlock.extend(lock, ttl) of a lock this module was handed: the failure is swallowed
      code: `import Redis from "ioredis";
import Redlock, { type Lock } from "redlock";

const redlock = new Redlock([new Redis()]);

export function keepAlive(lock: Lock) {
  return setInterval(() => {
    redlock.extend(lock, 10_000).catch(() => {});
  }, 3_000);
}`,
      errors: [
        {
          messageId: "swallowed",
          data: { lock: "the Redlock lock `lock`", where: "acquired outside this module", handlerLine: "8" },
          line: 8,
          column: 13,
        },
      ],
    },
    {
      // Redlock using(): the signal is taken as \`_signal\` and never passed on to the work
      code: redlockUsingUnderscore,
      errors: [
        {
          messageId: "usingUnusedSignal",
          data: {
            lock: 'the lock "session:lock:*"',
            where: `acquired at line ${lineOf(redlockUsingUnderscore, "redlock.using")}`,
            signal: "_signal",
          },
          ...at(redlockUsingUnderscore, "using("),
        },
      ],
    },
  ],
});

// The suggestion (issue 18): stop the work where the failure is caught, with what the module has for it.
const WITH_CONTROLLER = (handler: string) => `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function exportInvoices(batchId: string, token: string) {
  const key = \`lock:invoices:\${batchId}\`;
  if (!(await redis.set(key, token, "NX", "PX", 20_000))) return;
  const controller = new AbortController();
  const timer = setInterval(() => {
    redis.eval(RENEW, 1, key, token, 20_000).then((n) => {
      if (n === 0) controller.abort();
    }).catch(() => {${handler}});
  }, 5_000);
  try {
    await writeInvoices(batchId, controller.signal);
  } finally {
    clearInterval(timer);
  }
}`;
const WITH_FLAG = (handler: string) => `import Redis from "ioredis";

const redis = new Redis();
${RENEW_CONST}

export async function drainQueue(queue: string, token: string) {
  const key = \`lock:queue:\${queue}\`;
  if (!(await redis.set(key, token, "NX", "PX", 20_000))) return;
  let lost = false;
  const timer = setInterval(async () => {
    try {
      if ((await redis.eval(RENEW, 1, key, token, 20_000)) === 0) lost = true;
    } catch (error) {${handler}
      console.error("renewal failed", error);
    }
  }, 5_000);
  try {
    while (!lost) {
      if (!(await handleNext(queue))) break;
    }
  } finally {
    clearInterval(timer);
  }
}`;

ruleTester.run("heartbeat-abort (suggestion)", rule, {
  valid: [],
  invalid: [
    {
      // an AbortController whose signal the work reads: abort it in the handler
      code: WITH_CONTROLLER(""),
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...redisLock("lock:invoices:*", lineOf(WITH_CONTROLLER(""), "redis.set")),
            handlerLine: lineOf(WITH_CONTROLLER(""), ".catch("),
          },
          suggestions: [
            {
              messageId: "stopWork",
              data: { statement: "controller.abort();" },
              output: WITH_CONTROLLER("\n      controller.abort();\n    "),
            },
          ],
        },
      ],
    },
    {
      // a flag the loop tests to go on: set it in the catch, so the loop ends
      code: WITH_FLAG(""),
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...redisLock("lock:queue:*", lineOf(WITH_FLAG(""), "redis.set")),
            handlerLine: lineOf(WITH_FLAG(""), "catch (error)"),
          },
          suggestions: [
            { messageId: "stopWork", data: { statement: "lost = true;" }, output: WITH_FLAG("\n      lost = true;") },
          ],
        },
      ],
    },
    {
      // nothing in the module stops the work: no edit (the message says what is missing)
      code: scriptCatchEmpty,
      errors: [
        {
          messageId: "swallowed",
          data: {
            ...redisLock("lock:invoices:*", lineOf(scriptCatchEmpty, "redis.set")),
            handlerLine: lineOf(scriptCatchEmpty, ".catch("),
          },
          suggestions: [],
        },
      ],
    },
    {
      // a boolean no loop tests (only logged) stops nothing: no edit
      code: WITH_FLAG("").replace("while (!lost) {", "while (true) {\n      console.log(lost);"),
      errors: [{ messageId: "swallowed", suggestions: [] }],
    },
    {
      // a controller nobody reads the signal of stops nothing: no edit
      code: WITH_CONTROLLER("").replace("controller.signal", "undefined"),
      errors: [{ messageId: "swallowed", suggestions: [] }],
    },
  ],
});

describe("heartbeat-abort's suggestion", () => {
  it.each([
    ["controller", WITH_CONTROLLER("\n      controller.abort();\n    ")],
    ["flag", WITH_FLAG("\n      lost = true;")],
  ])("applied (%s), the renewal's failure stops the work and the rule is satisfied", (_, output) => {
    const config = [
      { files: ["**/*.ts"], languageOptions: { parser: tsParser as never } },
      {
        files: ["**/*.ts"],
        plugins: { locks: { rules: { "heartbeat-abort": rule } } as never },
        rules: { "locks/heartbeat-abort": "error" as const },
      },
    ];
    expect(
      new Linter({ configType: "flat" })
        .verify(output, config as never, { filename: "worker.ts" })
        .map((m) => `${m.ruleId} ${m.message}`),
    ).toEqual([]);
  });
});
