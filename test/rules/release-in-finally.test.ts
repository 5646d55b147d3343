import rule from "../../rules/release-in-finally.js";
import { javascript, ruleTester } from "../rule-tester.js";

/** Line and column (1-based, as ESLint reports) of the one occurrence of `text` in `code`. */
function at(code: string, text: string): { line: number; column: number } {
  const i = code.indexOf(text);
  if (i < 0 || code.indexOf(text, i + 1) >= 0)
    throw new Error(`expected exactly one ${JSON.stringify(text)} in the test code`);
  const before = code.slice(0, i).split("\n");
  return { line: before.length, column: before.at(-1)!.length + 1 };
}
const lineOf = (code: string, text: string) => String(at(code, text).line);

const MUTEX = (name: string) => ({
  lock: `the mutex \`${name}\``,
  consequence: `every later caller waits on \`${name}\` forever.`,
});
const GUARD = (name: string) => ({
  lock: `the guard \`${name}\``,
  consequence: `\`${name}\` stays true and every later call is turned away until the process restarts.`,
});
const ADVISORY = (fn: string) => ({
  lock: `the session advisory lock (${fn})`,
  consequence: "the connection keeps the session lock, and a pooled connection goes back to the pool still holding it.",
});

type Kind = { lock: string; consequence: string };
type Escape = "missedOnReturn" | "missedOnThrow" | "missedOnPath" | "missedOnRejection";

/** One path finding at `acquire`, escaping at `exit`, with the release(s) at `release`. */
function missed(
  code: string,
  messageId: Escape,
  kind: Kind,
  acquire: string,
  exit: string | null,
  release: string | null,
  output?: string,
) {
  const a = at(code, acquire);
  return {
    messageId,
    line: a.line,
    column: a.column,
    data: {
      ...kind,
      acquireLine: String(a.line),
      exitLine: exit ? lineOf(code, exit) : String(a.line),
      releaseLine: release ? lineOf(code, release) : "",
      hint: kind.lock.startsWith("the mutex") ? " (`runExclusive` does it for you)" : "",
    },
    suggestions: output ? [{ messageId: "moveToFinally" as const, output }] : [],
  };
}

/** The TTL-bounded variant of a path finding. */
function ttlMissed(
  code: string,
  lock: string,
  acquire: string,
  release: string,
  how: string,
  exit: string,
  output: string,
) {
  const a = at(code, acquire);
  return {
    messageId: "ttlReleaseMissed" as const,
    line: a.line,
    column: a.column,
    data: { lock, releaseLine: lineOf(code, release), how, exitLine: lineOf(code, exit) },
    suggestions: [{ messageId: "moveToFinally" as const, output }],
  };
}

/** A lock handle returned by a helper of the module: the caller releases through `lock.release()`. */
const HANDLE = (release: string) => `import Redis from "ioredis";
const redis = new Redis();
async function takeLock(name, ttlMs) {
  const key = \`lock:\${name}\`;
  const ok = await redis.set(key, "1", "PX", ttlMs, "NX");
  return { acquired: ok === "OK", release: async () => { await redis.del(key); } };
}
export async function rebuild(run) {
  const lock = await takeLock("rebuild", 60000);
  if (!lock.acquired) return;
${release}
}`;
const HANDLE_LATE = HANDLE("  await run();\n  await lock.release();");
const HANDLE_FINALLY = HANDLE("  try {\n    await run();\n  } finally {\n    await lock.release();\n  }");

// ---- async-mutex and friends ----

const MUTEX_WORK = `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export async function refreshToken() {
  const release = await mutex.acquire();
  const token = await fetchToken();
  cache.set("token", token);
  release();
}`;
const MUTEX_WORK_FIXED = `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export async function refreshToken() {
  const release = await mutex.acquire();
  try {
    const token = await fetchToken();
    cache.set("token", token);
  } finally {
    release();
  }
}`;

const SEMAPHORE_RETURN = `import { Semaphore } from "async-mutex";
const uploads = new Semaphore(4);
export async function upload(file) {
  const [, release] = await uploads.acquire();
  if (file.size === 0) return null;
  const url = await storage.put(file);
  release();
  return url;
}`;
// The early return goes into the try with the work (it tests the file, not the acquire); the value the work gave is
// read only by the return that ends the block, which moves in too.
const SEMAPHORE_RETURN_FIXED = `import { Semaphore } from "async-mutex";
const uploads = new Semaphore(4);
export async function upload(file) {
  const [, release] = await uploads.acquire();
  try {
    if (file.size === 0) return null;
    const url = await storage.put(file);
    return url;
  } finally {
    release();
  }
}`;
// The same, but the return does more work (a call): moving it would hold the permit over it. No edit.
const SEMAPHORE_RETURN_CALL = `import { Semaphore } from "async-mutex";
const uploads = new Semaphore(4);
export async function upload(file) {
  const [, release] = await uploads.acquire();
  if (file.size === 0) return null;
  const url = await storage.put(file);
  release();
  return publicUrl(url);
}`;

const RECEIVER_THROW = `import { Mutex } from "async-mutex";
export class Ledger {
  private readonly mutex = new Mutex();
  async post(entry) {
    await this.mutex.acquire();
    if (!entry.amount) throw new Error("empty entry");
    this.entries.push(entry);
    this.mutex.release();
  }
}`;
const RECEIVER_THROW_FIXED = `import { Mutex } from "async-mutex";
export class Ledger {
  private readonly mutex = new Mutex();
  async post(entry) {
    await this.mutex.acquire();
    try {
      if (!entry.amount) throw new Error("empty entry");
      this.entries.push(entry);
    } finally {
      this.mutex.release();
    }
  }
}`;

const RELEASE_IN_BRANCH = `const sessionMutex = createSessionMutex();
export async function save(session) {
  const release = await sessionMutex.acquire();
  if (session.dirty) {
    writeSession(session);
    release();
  }
}`;

const TRY_ACQUIRE = `import AwaitLock from "await-lock";
const lock = new AwaitLock();
export async function flush() {
  if (!lock.tryAcquire()) return;
  await sendBatch();
  lock.release();
}`;
const TRY_ACQUIRE_FIXED = `import AwaitLock from "await-lock";
const lock = new AwaitLock();
export async function flush() {
  if (!lock.tryAcquire()) return;
  try {
    await sendBatch();
  } finally {
    lock.release();
  }
}`;

// ---- boolean guards ----

const CRON_GUARD = `let running = false;
cron.schedule("*/5 * * * *", async () => {
  if (running) return;
  running = true;
  await syncInvoices();
  running = false;
});`;
const CRON_GUARD_FIXED = `let running = false;
cron.schedule("*/5 * * * *", async () => {
  if (running) return;
  running = true;
  try {
    await syncInvoices();
  } finally {
    running = false;
  }
});`;

const CLASS_GUARD_RETURN = `export class Importer {
  private busy = false;
  async run() {
    if (this.busy) return;
    this.busy = true;
    const batch = await this.queue.next();
    if (!batch) return;
    await this.import(batch);
    this.busy = false;
  }
}`;
const CLASS_GUARD_RETURN_FIXED = `export class Importer {
  private busy = false;
  async run() {
    if (this.busy) return;
    this.busy = true;
    try {
      const batch = await this.queue.next();
      if (!batch) return;
      await this.import(batch);
    } finally {
      this.busy = false;
    }
  }
}`;

const GUARD_IN_IF = `export class Poller {
  tick() {
    return this.poll();
  }
  async poll() {
    if (!this.polling) {
      this.polling = true;
      await this.fetchUpdates();
      this.polling = false;
    }
  }
}`;
const GUARD_IN_IF_FIXED = `export class Poller {
  tick() {
    return this.poll();
  }
  async poll() {
    if (!this.polling) {
      this.polling = true;
      try {
        await this.fetchUpdates();
      } finally {
        this.polling = false;
      }
    }
  }
}`;

const GUARD_LOOP = `let running = false;
export async function drain() {
  if (running) {
    return;
  }
  running = true;
  let task;
  while ((task = await nextTask()) != null) {
    task();
  }
  running = false;
}`;
const GUARD_LOOP_FIXED = `let running = false;
export async function drain() {
  if (running) {
    return;
  }
  running = true;
  try {
    let task;
    while ((task = await nextTask()) != null) {
      task();
    }
  } finally {
    running = false;
  }
}`;

const NESTED_TRY = `let sending = false;
export async function sendAll(messages) {
  if (sending) return;
  sending = true;
  for (const m of messages) {
    try {
      await send(m);
    } catch (err) {
      log.warn(err);
    }
  }
  await markBatchDone();
  sending = false;
}`;
const NESTED_TRY_FIXED = `let sending = false;
export async function sendAll(messages) {
  if (sending) return;
  sending = true;
  try {
    for (const m of messages) {
      try {
        await send(m);
      } catch (err) {
        log.warn(err);
      }
    }
    await markBatchDone();
  } finally {
    sending = false;
  }
}`;

const RETHROW = `let exporting = false;
export async function exportAll() {
  if (exporting) throw new Error("busy");
  exporting = true;
  try {
    await writeExport();
  } catch (err) {
    log.error(err);
    throw err;
  }
  exporting = false;
}`;
const RETHROW_FIXED = `let exporting = false;
export async function exportAll() {
  if (exporting) throw new Error("busy");
  exporting = true;
  try {
    try {
      await writeExport();
    } catch (err) {
      log.error(err);
      throw err;
    }
  } finally {
    exporting = false;
  }
}`;

const RETURN_AWAIT_OUTSIDE = `let refreshing = false;
export async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    return await reload();
  } catch (err) {
    log.error(err);
  }
  refreshing = false;
}`;
const RETURN_AWAIT_OUTSIDE_FIXED = `let refreshing = false;
export async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    try {
      return await reload();
    } catch (err) {
      log.error(err);
    }
  } finally {
    refreshing = false;
  }
}`;

const RELEASED_EARLY = `import { Mutex } from "async-mutex";
export class Renderer {
  mutex = new Mutex();
  async render(job) {
    const release = await this.mutex.acquire();
    try {
      return this.draw(job);
    } finally {
      release();
    }
  }
  async draw(job) {
    return job;
  }
}`;

const HELPER_RESET = `export class Scanner {
  async scanChanged(ids) {
    if (this.scanning) return;
    this.scanning = true;
    const folders = await this.db.folders(ids);
    this.index(folders);
    this.done();
  }
  done() {
    this.scanning = false;
  }
}`;

const HELPER_RESET_FIXED = `export class Scanner {
  async scanChanged(ids) {
    if (this.scanning) return;
    this.scanning = true;
    try {
      const folders = await this.db.folders(ids);
      this.index(folders);
    } finally {
      this.done();
    }
  }
  done() {
    this.scanning = false;
  }
}`;

// ---- PostgreSQL advisory locks ----

const ADVISORY_CLIENT = `export async function migrate(pool) {
  const client = await pool.connect();
  await client.query("SELECT pg_advisory_lock(7321)");
  await runMigrations(client);
  await client.query("SELECT pg_advisory_unlock(7321)");
  client.release();
}`;
const ADVISORY_CLIENT_FIXED = `export async function migrate(pool) {
  const client = await pool.connect();
  await client.query("SELECT pg_advisory_lock(7321)");
  try {
    await runMigrations(client);
  } finally {
    await client.query("SELECT pg_advisory_unlock(7321)");
  }
  client.release();
}`;

const ADVISORY_PRISMA = `export async function runDigest(prisma) {
  const [{ locked }] = await prisma.$queryRaw\`SELECT pg_try_advisory_lock(\${DIGEST_LOCK}) AS locked\`;
  if (!locked) return;
  try {
    await sendDigests();
  } finally {
    await prisma.$executeRaw\`SELECT pg_advisory_unlock(\${DIGEST_LOCK})\`;
  }
}`;

const ADVISORY_POOL = `import { Pool } from "pg";
const pool = new Pool();
export async function leaderTick() {
  const { rows } = await pool.query("SELECT pg_try_advisory_lock($1) AS ok", [42]);
  if (!rows[0].ok) return;
  await doLeaderWork();
}`;

const KNEX_POOL = `import knex from "knex";
const db = knex({ client: "pg", connection: process.env.DATABASE_URL });
export async function rollup() {
  await db.raw("SELECT pg_advisory_lock(11)");
  try {
    await db("events").where({ rolled: false }).update({ rolled: true });
  } finally {
    await db.raw("SELECT pg_advisory_unlock(11)");
  }
}`;

const DRIZZLE_POOL = `import { Pool } from "pg";
import { drizzle } from "drizzle-orm/node-postgres";
import { sql } from "drizzle-orm";
const pool = new Pool();
const db = drizzle(pool);
export async function leader() {
  const res = await db.execute(sql\`SELECT pg_try_advisory_lock(9) AS ok\`);
  if (!res.rows[0].ok) return;
  await lead();
}`;

const ADVISORY_RETURNED = `export async function reindex(pool) {
  const client = await pool.connect();
  await client.query("SELECT pg_advisory_lock(99)");
  await rebuild(client);
  client.release();
}`;

const ADVISORY_IN_TX = `export async function allocate(prisma, account) {
  await prisma.$transaction(async (tx) => {
    await tx.$executeRaw\`SELECT pg_advisory_lock(\${account.id})\`;
    await tx.ledger.create({ data: { accountId: account.id } });
  });
}`;

// ---- Redis and lock libraries ----

const REDLOCK = `import Redlock from "redlock";
const redlock = new Redlock([redis]);
export async function settle(orderId) {
  const lock = await redlock.acquire([\`order:\${orderId}\`], 10000);
  await chargeCard(orderId);
  await lock.release();
}`;

const SEMAPHORE_REDIS = `import { Mutex } from "redis-semaphore";
export async function rebuild(redis) {
  const mutex = new Mutex(redis, "rebuild");
  await mutex.acquire();
  await rebuildIndex();
  await mutex.release();
}`;

const SET_NX = `const RELEASE = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end';
export async function rebuild(redis, id) {
  const token = randomUUID();
  const ok = await redis.set(\`lock:rebuild:\${id}\`, token, "PX", 30000, "NX");
  if (!ok) return;
  await rebuildIndex(id);
  await redis.eval(RELEASE, 1, \`lock:rebuild:\${id}\`, token);
}`;

// ---- locks taken and freed through the module's own helpers (function summaries) ----

const LOCK_HELPERS = `import Redis from "ioredis";
import { randomUUID } from "node:crypto";
const redis = new Redis();
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
async function takeLock(name) {
  const token = randomUUID();
  return (await redis.set(\`lock:\${name}\`, token, "PX", 60000, "NX")) === "OK" ? token : null;
}
async function giveBack(name, token) {
  await redis.eval(RELEASE, 1, \`lock:\${name}\`, token);
}
export async function prune(run) {
  const token = await takeLock("prune");
  if (!token) return;
  await run();
  await giveBack("prune", token);
}`;
const CLASS_HELPERS = `import Redis from "ioredis";
export class Rooms {
  constructor(redis) { this.redis = redis; }
  async lock(id) { return (await this.redis.set(\`room:\${id}:lock\`, "1", "EX", 5, "NX")) === "OK"; }
  async unlock(id) { await this.redis.del(\`room:\${id}:lock\`); }
  async join(id, seat) {
    if (!(await this.lock(id))) return;
    await seat(id);
    await this.unlock(id);
  }
}`;
const SCOPED_HELPER = `import Redis from "ioredis";
const redis = new Redis();
async function withLock(name, work) {
  if ((await redis.set(\`lock:\${name}\`, "1", "PX", 30000, "NX")) !== "OK") return;
  try {
    await work();
  } finally {
    await redis.del(\`lock:\${name}\`);
  }
}
export async function nightly(build) {
  await withLock("nightly", build);
  await build();
}`;

// ---- an acquire settled by a later await (a race with a deadline, Promise.all) ----

const RACED_ACQUIRE = `import Redis from "ioredis";
const redis = new Redis();
export async function exclusive(name: string, token: string, job: () => Promise<void>) {
  const pending: Promise<unknown>[] = [];
  pending.push(redis.set(\`lock:\${name}\`, token, "PX", 30_000, "NX"));
  pending.push(giveUpAfter(5_000));
  await Promise.race(pending);
  try {
    await job();
  } finally {
    await redis.del(\`lock:\${name}\`);
  }
}`;
const ALL_ACQUIRE = RACED_ACQUIRE.replace(
  / {2}const pending[^]*?race\(pending\);\n/,
  '  await Promise.all([redis.set(`lock:${name}`, token, "PX", 30_000, "NX"), loadSettings()]);\n',
);
const RACED_THEN_WORK = RACED_ACQUIRE.replace(
  "  await Promise.race(pending);\n",
  "  await Promise.race(pending);\n  await warmUp();\n",
);

// ---- helpers named after PostgreSQL's advisory functions, handed their client ----

const NAMED_HELPERS_POOL = `import { prisma } from "./db";
import { pgTryAdvisoryLock, pgAdvisoryUnlock } from "./pg-locks";
const LEADER = 4242;
export async function leaderTick() {
  const leader = await pgTryAdvisoryLock(prisma, LEADER);
  if (!leader) return;
  try {
    await compactLedgers();
  } finally {
    await pgAdvisoryUnlock(prisma, LEADER);
  }
}`;
const NAMED_HELPERS_CLIENT = `import { pool } from "./db";
import { pgTryAdvisoryLock, pgAdvisoryUnlock } from "./pg-locks";
const LEADER = 4242;
export async function leaderTick() {
  const client = await pool.connect();
  try {
    if (!(await pgTryAdvisoryLock(client, LEADER))) return;
    try {
      await compactLedgers(client);
    } finally {
      await pgAdvisoryUnlock(client, LEADER);
    }
  } finally {
    client.release();
  }
}`;

ruleTester.run("release-in-finally", rule, {
  valid: [
    {
      // seen on a booking service: the work runs under \`if (token) { … }\`, its catch releases when a token was
      // taken, and the throw after the retry loop is reached only by callers that never got the lock
      name: "kv: held under a test of the acquire's result, released there and in the catch when it was taken",
      code: `export class SeatLock {
  static async take(resource: string, ttl = 30): Promise<string | null> {
    const token = randomUUID();
    const got = await redis.set(\`lock:\${resource}\`, token, { NX: true, EX: ttl });
    return got ? token : null;
  }

  static async give(resource: string, token: string): Promise<void> {
    const script = \`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end\`;
    await redis.eval(script, { keys: [\`lock:\${resource}\`], arguments: [token] });
  }

  static async withLock<T>(resource: string, work: () => Promise<T>): Promise<T> {
    let attempts = 0;
    let token: string | null = null;
    while (attempts < 3) {
      try {
        token = await this.take(resource);
        if (token) {
          const result = await work();
          await this.give(resource, token);
          return result;
        }
        attempts++;
        await new Promise((r) => setTimeout(r, 100 * attempts));
      } catch (error) {
        if (token) {
          await this.give(resource, token);
        }
        throw error;
      }
    }
    throw new Error(\`seat \${resource} is busy\`);
  }
}
`,
    },
    // a lock handle released in `finally`
    HANDLE_FINALLY,
    {
      name: "a processed marker written over the claim through a helper ends the hold on the success path, as the release does on failure",
      code: `import Redis from "ioredis";
const redis = new Redis();
async function claimEvent(id: string) {
  return (await redis.set(\`webhook:event:\${id}\`, "processing", "EX", 300, "NX")) === "OK";
}
async function markDone(id: string) {
  await redis.set(\`webhook:event:\${id}\`, "done", "EX", 604800);
}
async function releaseEvent(id: string) {
  await redis.del(\`webhook:event:\${id}\`);
}
export async function handle(id: string) {
  if (!(await claimEvent(id))) return 200;
  try {
    await apply(id);
  } catch (error) {
    await releaseEvent(id);
    return 500;
  }
  await markDone(id);
  return 200;
}`,
    },
    {
      name: "an acquire queued on a MULTI held in a const is taken when the batch runs: the not-acquired return leaves nothing held",
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function rebuildIndex(id: string, token: string) {
  const tx = redis.multi();
  tx.setnx(\`lock:index:\${id}\`, token);
  tx.expire(\`lock:index:\${id}\`, 30);
  const ok = await tx.exec();
  if (!ok) return false;
  try {
    await rebuild(id);
  } finally {
    await redis.del(\`lock:index:\${id}\`);
  }
  return true;
}`,
    },
    // the await that settles the acquire (a race with a deadline, Promise.all) is where holding starts: its own
    // rejection is a failed acquire, not a way out while holding
    { name: "an acquire raced against a deadline, then held in try/finally", code: RACED_ACQUIRE },
    { name: "an acquire awaited through Promise.all, then held in try/finally", code: ALL_ACQUIRE },
    // the named helpers on one checked-out client: lock, work and unlock share the session
    { name: "advisory helpers named after the SQL functions, on a checked-out client", code: NAMED_HELPERS_CLIENT },
    {
      // a worker process's own loop, whose every caller ends the process when it rejects: the guard dies with it
      name: "a guard of a function every caller exits the process on",
      code:
        GUARD_LOOP.replace("export async function", "async function") +
        `\nprocess.on("message", () => { drain().catch((err) => { console.error(err); process.exit(1); }); });`,
    },
    {
      name: "a helper that takes and frees its lock itself around the callback: its callers hold nothing",
      code: SCOPED_HELPER,
    },
    {
      // Both shapes were reported before: the fallback's return read as a way out while holding, and the catch of a
      // failed acquire too.
      name: "`if (!locked) { fallback }` holds nothing in its consequent; `try { locked = await acquire() } catch { return }` is tested after the try",
      code: `import Redis from "ioredis";
const redis = new Redis();
async function acquireJobLock(name: string, ttlMs: number): Promise<boolean> {
  return (await redis.set(\`cron-lock:\${name}\`, "1", "PX", ttlMs, "NX")) === "OK";
}
async function releaseJobLock(name: string): Promise<void> {
  await redis.del(\`cron-lock:\${name}\`);
}
export async function withJobLock(name: string, work: () => Promise<void>) {
  const locked = await acquireJobLock(name, 60000);
  if (!locked) {
    if (await redis.exists(\`cron-lock:\${name}\`)) return;
    console.warn("redis down, running unlocked");
  }
  try {
    await work();
  } finally {
    await releaseJobLock(name);
  }
}
export async function tolerant(name: string, work: () => Promise<void>) {
  let locked: boolean;
  try {
    locked = await acquireJobLock(name, 60000);
  } catch {
    return;
  }
  if (!locked) return;
  try {
    await work();
  } finally {
    await releaseJobLock(name);
  }
}`,
    },
    {
      name: "taken and freed through helpers, the release in a finally",
      code: LOCK_HELPERS.replace(
        '  await run();\n  await giveBack("prune", token);',
        '  try {\n    await run();\n  } finally {\n    await giveBack("prune", token);\n  }',
      ),
    },
    { name: "mutex released in finally", code: MUTEX_WORK_FIXED },
    {
      name: "runExclusive releases on every path",
      code: `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export const refresh = () => mutex.runExclusive(async () => { await fetchToken(); });`,
    },
    {
      name: "semaphore released in finally, early return inside the try",
      code: `import { Semaphore } from "async-mutex";
const uploads = new Semaphore(4);
export async function upload(file) {
  const [, release] = await uploads.acquire();
  try {
    if (file.size === 0) return null;
    return await storage.put(file);
  } finally {
    release();
  }
}`,
    },
    { name: "cron guard reset in finally", code: CRON_GUARD_FIXED },
    {
      name: "guard around synchronous work only: nothing between set and reset awaits",
      code: `let busy = false;
export function compact(list) {
  if (busy) return;
  busy = true;
  list.sort(byDate);
  trim(list);
  busy = false;
}`,
    },
    {
      name: "the only await has its rejection caught",
      code: `export class DailyLog {
  async append(line) {
    if (this.locked) {
      this.buffer.push(line);
      return;
    }
    this.locked = true;
    await fs.writeFile(this.path, line, { flag: "a+" }).catch((err) => console.log(err));
    this.locked = false;
  }
}`,
    },
    {
      name: "every await in the loop is caught, and break goes to the reset",
      code: `let running = false;
export async function processQueued(messages) {
  if (running) return;
  running = true;
  for (const m of messages) {
    try {
      await deliver(m);
    } catch (err) {
      if (err.fatal) break;
      log.error(err);
    }
  }
  running = false;
}`,
    },
    {
      name: "an init-once flag is not a guard: it is never reset",
      code: `export class Client {
  async connect() {
    if (this.connected) return;
    this.connected = true;
    await this.socket.open();
  }
}`,
    },
    {
      name: "a flag local to the function guards nothing",
      code: `export async function once() {
  let done = false;
  if (done) return;
  done = true;
  await work();
  done = false;
}`,
    },
    {
      name: "reset handed to a promise's finally",
      code: `let syncing = false;
export function sync() {
  if (syncing) return;
  syncing = true;
  pull().finally(() => { syncing = false; });
}`,
    },
    {
      name: "a flag set without a guard check is state, not a lock",
      code: `export class Table {
  async load() {
    this.loading = true;
    this.rows = await api.rows();
    this.loading = false;
  }
}`,
    },
    {
      name: "dedicated connection keeps its session lock until it closes: a leader lock",
      code: `import { Client } from "pg";
export async function becomeLeader() {
  const client = new Client();
  await client.connect();
  await client.query("SELECT pg_advisory_lock(1)");
  startLeaderDuties(client);
}`,
    },
    {
      name: "advisory try-lock on a checked-out client, unlock under a condition in finally",
      code: `export async function materialize(pool) {
  let locked = false;
  const client = await pool.connect();
  try {
    const res = await client.query("SELECT pg_try_advisory_lock(5) AS locked");
    locked = res.rows[0]?.locked === true;
    if (!locked) return;
    await computeStats();
  } finally {
    if (locked) await client.query("SELECT pg_advisory_unlock(5)");
    client.release();
  }
}`,
    },
    {
      name: "session lock ended with its dedicated connection in finally, kept on purpose on timeout",
      code: `import { Client } from "pg";
export async function withDbLock(fn) {
  const client = new Client();
  let timedOut = false;
  try {
    await client.connect();
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    return await Promise.race([fn(), timeout(() => { timedOut = true; })]);
  } finally {
    if (!timedOut) await client.end();
  }
}`,
    },
    {
      name: "transaction-level advisory lock ends with the transaction",
      code: `export async function allocate(prisma, account) {
  await prisma.$transaction(async (tx) => {
    await tx.$executeRaw\`SELECT pg_advisory_xact_lock(\${account.id})\`;
    await tx.ledger.create({ data: { accountId: account.id } });
  });
}`,
    },
    {
      name: "TypeORM query runner: one connection, unlock in finally",
      code: `export async function backfill(dataSource) {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  await runner.query("SELECT pg_advisory_lock(3)");
  try {
    await runner.query("UPDATE users SET tier = 'free' WHERE tier IS NULL");
  } finally {
    await runner.query("SELECT pg_advisory_unlock(3)");
    await runner.release();
  }
}`,
    },
    {
      name: "SQL that only names advisory things is not an advisory lock",
      code: `export async function notes(client, id) {
  const { rows } = await client.query("SELECT * FROM advisory_notes WHERE id = $1 -- pg_advisory_lock(1)", [id]);
  await audit(rows);
  return client.query("SELECT 'pg_advisory_unlock(1)' AS label");
}`,
    },
    {
      name: "a mutex from redis-semaphore is a Redis lock: with ttlLocks off it is not reported",
      code: `import { Mutex } from "redis-semaphore";
export async function rebuild(redis) {
  const mutex = new Mutex(redis, "rebuild");
  await mutex.acquire();
  await rebuildIndex();
  await mutex.release();
}`,
      options: [{ ttlLocks: false }],
    },
    {
      name: "Redlock released in finally",
      code: `import Redlock from "redlock";
const redlock = new Redlock([redis]);
export async function settle(orderId) {
  const lock = await redlock.acquire([\`order:\${orderId}\`], 10000);
  try {
    await chargeCard(orderId);
  } finally {
    await lock.release();
  }
}`,
    },
    { name: "TTL locks can be left out", code: REDLOCK, options: [{ ttlLocks: false }] },
    {
      name: "return await inside try/finally releases after the work",
      code: `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export async function render(job) {
  const release = await mutex.acquire();
  try {
    return await draw(job);
  } finally {
    release();
  }
}`,
    },
    {
      name: "the release function is handed on: the receiver releases",
      code: `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export async function lease() {
  const release = await mutex.acquire();
  await warmUp();
  return release;
}`,
    },
    {
      name: "async-lock's callback form releases by itself",
      code: `import AsyncLock from "async-lock";
const lock = new AsyncLock();
export async function write(key, value) {
  await lock.acquire(key, async () => { await store.put(key, value); });
}`,
    },
    {
      name: "SET NX, checked, compare-and-delete in finally",
      code: `const RELEASE = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end';
export async function rebuild(redis, id) {
  const token = randomUUID();
  const ok = await redis.set(\`lock:rebuild:\${id}\`, token, "PX", 30000, "NX");
  if (!ok) return;
  try {
    await rebuildIndex(id);
  } finally {
    await redis.eval(RELEASE, 1, \`lock:rebuild:\${id}\`, token);
  }
}`,
    },
    {
      name: "state flipped in one branch and back in the other is not a lock",
      code: `export class Progress {
  async update(payload) {
    if (!this.isFinished && payload.done) {
      this.isFinished = true;
    } else if (this.isFinished && !payload.done) {
      this.isFinished = false;
    }
    await this.save();
  }
}`,
    },
    {
      name: "a flag declared in a loop body is local",
      code: `export function rewrite(content, ids) {
  for (const id of ids) {
    let updateTitle = content.indexOf(id);
    if (updateTitle) continue;
    updateTitle = true;
    content = replaceLink(content, id);
    updateTitle = false;
  }
  return content;
}`,
    },
    {
      name: "reset by helpers on every branch, and the awaited sender catches everything",
      code: `export class ResponseQueue {
  async processNext() {
    if (this.inFlight) return;
    this.inFlight = true;
    const result = await this.sendWithRetry(this.queue[0]);
    if (result.ok) {
      this.onSuccess();
      return true;
    }
    this.onFailure();
    return false;
  }
  async sendWithRetry(item) {
    try {
      return await this.api.post(item);
    } catch (err) {
      return { ok: false, err };
    }
  }
  onSuccess() {
    this.queue.shift();
    this.inFlight = false;
  }
  onFailure() {
    this.inFlight = false;
  }
}`,
    },
    {
      name: "reset only when initialisation fails: started once, retried after a failure",
      code: `export class Cache {
  async init() {
    if (this.initializing) return;
    this.initializing = true;
    try {
      await this.load();
      this.ready = true;
    } catch (err) {
      this.initializing = false;
      throw err;
    }
  }
}`,
    },
    {
      name: "a guard reset in finally after returning a message send, not the guarded work",
      code: `let running = false;
export async function execute(task, sender) {
  if (running) return;
  try {
    running = true;
    const result = await task.run();
    return sender.send("DONE", result);
  } finally {
    running = false;
  }
}
export async function ping(sender) {
  await sender.send("PING");
}`,
    },
    {
      name: "plain JavaScript: guard reset in finally",
      code: `let running = false;
module.exports = async function tick() {
  if (running) return;
  running = true;
  try { await work(); } finally { running = false; }
};`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "an acquire settled by a race, then another await before the try",
      code: RACED_THEN_WORK,
      // the release is already in a finally: moving the stray await into its try is the author's edit, none is offered
      errors: [
        {
          ...ttlMissed(
            RACED_THEN_WORK,
            "the lock `lock:*`",
            "redis.set(",
            "redis.del(",
            "when the await rejects",
            "await warmUp()",
            "",
          ),
          suggestions: [],
        },
      ],
    },

    {
      name: "taken and freed through the module's helpers: the caller holds the lock, and its release is skipped by a rejection",
      code: LOCK_HELPERS,
      errors: [
        ttlMissed(
          LOCK_HELPERS,
          "the lock `lock:prune`",
          'takeLock("prune")',
          'giveBack("prune"',
          "when the await rejects",
          "await run()",
          LOCK_HELPERS.replace(
            '  await run();\n  await giveBack("prune", token);',
            '  try {\n    await run();\n  } finally {\n    await giveBack("prune", token);\n  }',
          ),
        ),
      ],
    },
    {
      name: "a class's own lock methods called through this",
      code: CLASS_HELPERS,
      errors: [
        ttlMissed(
          CLASS_HELPERS,
          "the lock `room:*:lock`",
          "this.lock(id)",
          "this.unlock(id)",
          "when the await rejects",
          "await seat(id)",
          CLASS_HELPERS.replace(
            "    await seat(id);\n    await this.unlock(id);",
            "    try {\n      await seat(id);\n    } finally {\n      await this.unlock(id);\n    }",
          ),
        ),
      ],
    },
    {
      name: "mutex: an await between acquire and release can reject",
      code: MUTEX_WORK,
      errors: [
        missed(
          MUTEX_WORK,
          "missedOnRejection",
          MUTEX("mutex"),
          "mutex.acquire()",
          "await fetchToken()",
          "release();",
          MUTEX_WORK_FIXED,
        ),
      ],
    },
    {
      name: "semaphore: the early return leaves a permit taken",
      code: SEMAPHORE_RETURN,
      errors: [
        missed(
          SEMAPHORE_RETURN,
          "missedOnReturn",
          MUTEX("uploads"),
          "uploads.acquire()",
          "return null",
          "release();",
          SEMAPHORE_RETURN_FIXED,
        ),
      ],
    },
    {
      name: "semaphore: the early return leaves a permit taken, and the last return calls on with the result",
      code: SEMAPHORE_RETURN_CALL,
      errors: [
        missed(
          SEMAPHORE_RETURN_CALL,
          "missedOnReturn",
          MUTEX("uploads"),
          "uploads.acquire()",
          "return null",
          "release();",
        ),
      ],
    },
    {
      name: "mutex held in a class field: the throw skips the release",
      code: RECEIVER_THROW,
      errors: [
        missed(
          RECEIVER_THROW,
          "missedOnThrow",
          MUTEX("mutex"),
          "this.mutex.acquire()",
          "throw new Error",
          "this.mutex.release()",
          RECEIVER_THROW_FIXED,
        ),
      ],
    },
    {
      name: "released only in one branch",
      code: RELEASE_IN_BRANCH,
      errors: [
        {
          ...missed(
            RELEASE_IN_BRANCH,
            "missedOnPath",
            MUTEX("sessionMutex"),
            "sessionMutex.acquire()",
            null,
            "release();",
          ),
          data: {
            ...missed(
              RELEASE_IN_BRANCH,
              "missedOnPath",
              MUTEX("sessionMutex"),
              "sessionMutex.acquire()",
              null,
              "release();",
            ).data,
            exitLine: "2",
          },
        },
      ],
    },
    {
      name: "await-lock try-acquire: held after the test, released without finally",
      code: TRY_ACQUIRE,
      errors: [
        missed(
          TRY_ACQUIRE,
          "missedOnRejection",
          { lock: "the mutex `lock`", consequence: "every later caller waits on `lock` forever." },
          "lock.tryAcquire()",
          "await sendBatch()",
          "lock.release()",
          TRY_ACQUIRE_FIXED,
        ),
      ],
    },
    {
      name: "cron guard: a rejected job leaves the guard set",
      code: CRON_GUARD,
      errors: [
        missed(
          CRON_GUARD,
          "missedOnRejection",
          GUARD("running"),
          "running = true",
          "await syncInvoices()",
          "  running = false;\n})",
          CRON_GUARD_FIXED,
        ),
      ],
    },
    {
      name: "class guard: an early return skips the reset",
      code: CLASS_GUARD_RETURN,
      errors: [
        missed(
          CLASS_GUARD_RETURN,
          "missedOnReturn",
          GUARD("this.busy"),
          "this.busy = true",
          "if (!batch) return;",
          "this.busy = false",
          CLASS_GUARD_RETURN_FIXED,
        ),
      ],
    },
    {
      name: "guard taken inside if (!flag)",
      code: GUARD_IN_IF,
      errors: [
        missed(
          GUARD_IN_IF,
          "missedOnRejection",
          GUARD("this.polling"),
          "this.polling = true",
          "await this.fetchUpdates()",
          "this.polling = false",
          GUARD_IN_IF_FIXED,
        ),
      ],
    },
    {
      name: "loop condition awaits: a failing nextTask() leaves the guard set",
      code: GUARD_LOOP,
      errors: [
        missed(
          GUARD_LOOP,
          "missedOnRejection",
          GUARD("running"),
          "running = true",
          "await nextTask()",
          "  running = false;\n}",
          GUARD_LOOP_FIXED,
        ),
      ],
    },
    {
      // the same caller logs instead of exiting: the process lives on with the guard set
      name: "a guard of a function whose caller only logs a rejection",
      code:
        GUARD_LOOP.replace("export async function", "async function") +
        `\nsetInterval(() => { drain().catch((err) => console.error(err)); }, 1000);`,
      errors: [
        missed(
          GUARD_LOOP.replace("export async function", "async function") +
            `\nsetInterval(() => { drain().catch((err) => console.error(err)); }, 1000);`,
          "missedOnRejection",
          GUARD("running"),
          "running = true",
          "await nextTask()",
          "  running = false;\n}",
          GUARD_LOOP_FIXED.replace("export async function", "async function") +
            `\nsetInterval(() => { drain().catch((err) => console.error(err)); }, 1000);`,
        ),
      ],
    },
    {
      // exported, it may be called from modules that keep the process alive
      name: "an exported guard's module caller exits, but other modules may call it",
      code: GUARD_LOOP + `\nprocess.on("message", () => { drain().catch(() => process.exit(1)); });`,
      errors: [
        missed(
          GUARD_LOOP + `\nprocess.on("message", () => { drain().catch(() => process.exit(1)); });`,
          "missedOnRejection",
          GUARD("running"),
          "running = true",
          "await nextTask()",
          "  running = false;\n}",
          GUARD_LOOP_FIXED + `\nprocess.on("message", () => { drain().catch(() => process.exit(1)); });`,
        ),
      ],
    },
    {
      name: "nested try covers the sends, not the await after the loop",
      code: NESTED_TRY,
      errors: [
        missed(
          NESTED_TRY,
          "missedOnRejection",
          GUARD("sending"),
          "sending = true",
          "await markBatchDone()",
          "  sending = false;",
          NESTED_TRY_FIXED,
        ),
      ],
    },
    {
      name: "catch rethrows before the reset",
      code: RETHROW,
      errors: [
        missed(
          RETHROW,
          "missedOnThrow",
          GUARD("exporting"),
          "exporting = true",
          "throw err",
          "  exporting = false;",
          RETHROW_FIXED,
        ),
      ],
    },
    {
      name: "return await inside a try without finally leaves before the reset",
      code: RETURN_AWAIT_OUTSIDE,
      errors: [
        missed(
          RETURN_AWAIT_OUTSIDE,
          "missedOnReturn",
          GUARD("refreshing"),
          "refreshing = true",
          "return await reload()",
          "  refreshing = false;",
          RETURN_AWAIT_OUTSIDE_FIXED,
        ),
      ],
    },
    {
      name: "returning the work's promise from the try releases before the work ends",
      code: RELEASED_EARLY,
      errors: [
        {
          messageId: "releasedEarly",
          ...at(RELEASED_EARLY, "return this.draw(job)"),
          data: { ...MUTEX("mutex"), acquireLine: lineOf(RELEASED_EARLY, "this.mutex.acquire()") },
          suggestions: [
            {
              messageId: "awaitReturn",
              output: RELEASED_EARLY.replace("return this.draw(job)", "return await this.draw(job)"),
            },
          ],
        },
      ],
    },
    {
      name: "advisory lock on a checked-out client, unlock skipped when the migration throws",
      code: ADVISORY_CLIENT,
      errors: [
        missed(
          ADVISORY_CLIENT,
          "missedOnRejection",
          ADVISORY("pg_advisory_lock"),
          `client.query("SELECT pg_advisory_lock(7321)")`,
          "await runMigrations(client)",
          "pg_advisory_unlock",
          ADVISORY_CLIENT_FIXED,
        ),
      ],
    },
    {
      name: "advisory lock and unlock through Prisma's pool",
      code: ADVISORY_PRISMA,
      errors: [
        { messageId: "advisoryOnPool", ...at(ADVISORY_PRISMA, "prisma.$queryRaw"), data: { client: "prisma" } },
        {
          messageId: "advisoryUnlockOnPool",
          ...at(ADVISORY_PRISMA, "prisma.$executeRaw"),
          data: { client: "prisma", acquireLine: lineOf(ADVISORY_PRISMA, "prisma.$queryRaw") },
        },
      ],
    },
    {
      // `pgTryAdvisoryLock(prisma, key)` sends pg_try_advisory_lock on the pool it is handed: the lock and the unlock
      // may land on two connections
      name: "advisory helpers named after the SQL functions, handed the Prisma pool",
      code: NAMED_HELPERS_POOL,
      errors: [
        {
          messageId: "advisoryOnPool",
          ...at(NAMED_HELPERS_POOL, "pgTryAdvisoryLock(prisma"),
          data: { client: "prisma, through pgTryAdvisoryLock" },
        },
        {
          messageId: "advisoryUnlockOnPool",
          ...at(NAMED_HELPERS_POOL, "pgAdvisoryUnlock(prisma"),
          data: {
            client: "prisma, through pgAdvisoryUnlock",
            acquireLine: lineOf(NAMED_HELPERS_POOL, "pgTryAdvisoryLock(prisma"),
          },
        },
      ],
    },
    {
      name: "advisory try-lock through a pg Pool",
      code: ADVISORY_POOL,
      errors: [{ messageId: "advisoryOnPool", ...at(ADVISORY_POOL, "pool.query("), data: { client: "pool" } }],
    },
    {
      name: "Knex: lock and unlock through the knex pool",
      code: KNEX_POOL,
      errors: [
        { messageId: "advisoryOnPool", ...at(KNEX_POOL, 'db.raw("SELECT pg_advisory_lock'), data: { client: "db" } },
        {
          messageId: "advisoryUnlockOnPool",
          ...at(KNEX_POOL, 'db.raw("SELECT pg_advisory_unlock'),
          data: { client: "db", acquireLine: lineOf(KNEX_POOL, "pg_advisory_lock(") },
        },
      ],
    },
    {
      name: "Drizzle over a pg Pool: the lock goes through the pool",
      code: DRIZZLE_POOL,
      errors: [{ messageId: "advisoryOnPool", ...at(DRIZZLE_POOL, "sql`SELECT pg_try"), data: { client: "db" } }],
    },
    {
      name: "connection returned to the pool still holding the session lock",
      code: ADVISORY_RETURNED,
      errors: [
        {
          messageId: "advisoryReturnedToPool",
          ...at(ADVISORY_RETURNED, `client.query("SELECT`),
          data: { client: "client", returnLine: lineOf(ADVISORY_RETURNED, "client.release()") },
        },
      ],
    },
    {
      name: "session lock in a transaction, never unlocked",
      code: ADVISORY_IN_TX,
      errors: [
        {
          messageId: "advisoryNeverUnlocked",
          ...at(ADVISORY_IN_TX, "tx.$executeRaw"),
          suggestions: [
            { messageId: "useXactLock", output: ADVISORY_IN_TX.replace("pg_advisory_lock", "pg_advisory_xact_lock") },
          ],
        },
      ],
    },
    {
      name: "Redlock release not in finally: the TTL bounds it",
      code: REDLOCK,
      errors: [
        ttlMissed(
          REDLOCK,
          "the lock taken from `redlock`",
          "redlock.acquire(",
          "lock.release()",
          "when the await rejects",
          "await chargeCard",
          REDLOCK.replace(
            "  await chargeCard(orderId);\n  await lock.release();",
            "  try {\n    await chargeCard(orderId);\n  } finally {\n    await lock.release();\n  }",
          ),
        ),
      ],
    },
    {
      name: "a mutex from redis-semaphore is a Redis lock: the TTL message, not the in-process one",
      code: SEMAPHORE_REDIS,
      errors: [
        ttlMissed(
          SEMAPHORE_REDIS,
          "the lock taken from `mutex`",
          "mutex.acquire()",
          "mutex.release()",
          "when the await rejects",
          "await rebuildIndex",
          SEMAPHORE_REDIS.replace(
            "  await rebuildIndex();\n  await mutex.release();",
            "  try {\n    await rebuildIndex();\n  } finally {\n    await mutex.release();\n  }",
          ),
        ),
      ],
    },
    {
      name: "SET NX with a compare-and-delete that a rejection skips",
      code: SET_NX,
      errors: [
        ttlMissed(
          SET_NX,
          "the lock `lock:rebuild:*`",
          "redis.set(",
          "redis.eval(",
          "when the await rejects",
          "await rebuildIndex",
          SET_NX.replace(
            "  await rebuildIndex(id);\n  await redis.eval(",
            "  try {\n    await rebuildIndex(id);\n  } finally {\n    await redis.eval(",
          ).replace("token);\n}", "token);\n  }\n}"),
        ),
      ],
    },
    {
      name: "reset by a helper, but the await before it can reject",
      code: HELPER_RESET,
      errors: [
        missed(
          HELPER_RESET,
          "missedOnRejection",
          GUARD("this.scanning"),
          "this.scanning = true",
          "await this.db.folders(ids)",
          "this.done()",
          HELPER_RESET_FIXED,
        ),
      ],
    },
    {
      name: "plain JavaScript: module guard in a queue processor",
      code: `let busy = false;
exports.process = async function (job) {
  if (busy) return "busy";
  busy = true;
  await render(job);
  busy = false;
};`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missedOnRejection",
          line: 4,
          column: 3,
          data: { ...GUARD("busy"), exitLine: "5", releaseLine: "6", hint: "", acquireLine: "4" },
          suggestions: [
            {
              messageId: "moveToFinally",
              output: `let busy = false;
exports.process = async function (job) {
  if (busy) return "busy";
  busy = true;
  try {
    await render(job);
  } finally {
    busy = false;
  }
};`,
            },
          ],
        },
      ],
    },
    {
      // the release through the handle the helper returned is skipped when the work throws
      code: HANDLE_LATE,
      errors: [
        ttlMissed(
          HANDLE_LATE,
          "the lock `lock:rebuild`",
          'takeLock("rebuild"',
          "lock.release()",
          "when the await rejects",
          "await run()",
          HANDLE_FINALLY,
        ),
      ],
    },
  ],
});

// In-process tables: a key's entry in a `Map` or `Set` taken after a presence test and deleted after the work is a
// lock, whatever the table is called (issue 35, item 3). Found on real services: a per-account sync guard released
// only on the success path. A cache, a dedupe set cleared by a timer and a traversal's `visited` set are not.
const TABLE = (name: string) => ({
  lock: `the entry this call adds to \`${name}\``,
  consequence: `the key stays in \`${name}\` and every later call for it is turned away until the process restarts.`,
});
const SET_GUARD = `const syncing = new Set();

export async function syncAccount(id) {
  if (syncing.has(id)) return;
  syncing.add(id);
  const data = await fetchRemote(id);
  await save(id, data);
  syncing.delete(id);
}
`;
const SET_GUARD_FIXED = `const syncing = new Set();

export async function syncAccount(id) {
  if (syncing.has(id)) return;
  syncing.add(id);
  try {
    const data = await fetchRemote(id);
    await save(id, data);
  } finally {
    syncing.delete(id);
  }
}
`;
const MAP_FIELD_RETURN = `export class Importer {
  running = new Map();

  async importFeed(feedId) {
    if (this.running.has(feedId)) return "already importing";
    this.running.set(feedId, Date.now());
    const feed = await this.client.fetch(feedId);
    if (!feed) return "gone";
    await this.store.write(feed);
    this.running.delete(feedId);
    return "done";
  }
}
`;
const MAP_FIELD_FIXED = `export class Importer {
  running = new Map();

  async importFeed(feedId) {
    if (this.running.has(feedId)) return "already importing";
    this.running.set(feedId, Date.now());
    try {
      const feed = await this.client.fetch(feedId);
      if (!feed) return "gone";
      await this.store.write(feed);
    } finally {
      this.running.delete(feedId);
    }
    return "done";
  }
}
`;

// Taken in the `else` of the test that finds it held: the branch that runs when it is clear (a hand-written render
// queue whose waiters park in the other branch; a print guard that only logs a repeat).
const ELSE_FLAG = `export class RenderQueue {
  locked = false;
  waiting = [];

  async render(job) {
    if (this.locked) {
      await new Promise((resolve) => this.waiting.push(resolve));
      return this.render(job);
    } else {
      this.locked = true;
      await job.draw();
      this.locked = false;
      this.waiting.shift()?.();
    }
  }
}
`;
const ELSE_TABLE = `const printing = new Set();

export async function printLabel(orderId) {
  if (printing.has(orderId)) {
    console.info("label already printing", orderId);
  } else {
    printing.add(orderId);
    const label = await renderLabel(orderId);
    await sendToPrinter(label);
    printing.delete(orderId);
  }
}
`;

ruleTester.run("release-in-finally (in-process tables)", rule, {
  valid: [
    { name: "table: released in finally", code: SET_GUARD_FIXED, languageOptions: javascript },
    {
      name: "table: a cache filled on a miss hands back what it finds",
      code: `const cache = new Map();
export async function lookup(k) {
  if (cache.has(k)) return cache.get(k);
  const v = await load(k);
  cache.set(k, v);
  return v;
}
export function forget(k) { cache.delete(k); }
`,
      languageOptions: javascript,
    },
    {
      name: "table: a dedupe set whose entries a timer clears",
      code: `const seen = new Set();
export async function onMessage(id) {
  if (seen.has(id)) return;
  seen.add(id);
  setTimeout(() => seen.delete(id), 60_000);
  await handle(id);
}
`,
      languageOptions: javascript,
    },
    {
      name: "table: a traversal's visited set lives no longer than the call",
      code: `export async function resolveAll(root) {
  const seen = new Set();
  async function visit(node) {
    if (seen.has(node.id)) throw new Error("cycle");
    seen.add(node.id);
    const children = await loadChildren(node.id);
    if (children.length === 0) return;
    for (const c of children) await visit(c);
    seen.delete(node.id);
  }
  await visit(root);
}
`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "table: a Set guard released only after the work succeeds",
      code: SET_GUARD,
      languageOptions: javascript,
      errors: [
        missed(
          SET_GUARD,
          "missedOnRejection",
          TABLE("syncing"),
          "syncing.add(id)",
          "await fetchRemote(id)",
          "syncing.delete(id)",
          SET_GUARD_FIXED,
        ),
      ],
    },
    {
      name: "table: a Map field's entry left behind by an early return",
      code: MAP_FIELD_RETURN,
      languageOptions: javascript,
      errors: [
        missed(
          MAP_FIELD_RETURN,
          "missedOnReturn",
          TABLE("this.running"),
          "this.running.set(feedId, Date.now())",
          'return "gone"',
          "this.running.delete(feedId)",
          MAP_FIELD_FIXED,
        ),
      ],
    },
    {
      name: "table: the caller turned away awaits its reply before leaving; the taker still releases only on success",
      code: SET_GUARD.replace(
        "if (syncing.has(id)) return;",
        "if (syncing.has(id)) {\n    return await notifyBusy(id);\n  }",
      ),
      languageOptions: javascript,
      errors: [
        missed(
          SET_GUARD.replace(
            "if (syncing.has(id)) return;",
            "if (syncing.has(id)) {\n    return await notifyBusy(id);\n  }",
          ),
          "missedOnRejection",
          TABLE("syncing"),
          "syncing.add(id)",
          "await fetchRemote(id)",
          "syncing.delete(id)",
          SET_GUARD_FIXED.replace(
            "if (syncing.has(id)) return;",
            "if (syncing.has(id)) {\n    return await notifyBusy(id);\n  }",
          ),
        ),
      ],
    },
    {
      name: "table: an entry taken in the else of its presence test",
      code: ELSE_TABLE,
      languageOptions: javascript,
      errors: [
        missed(
          ELSE_TABLE,
          "missedOnRejection",
          TABLE("printing"),
          "printing.add(orderId)",
          "await renderLabel(orderId)",
          "printing.delete(orderId)",
          ELSE_TABLE.replace(
            "    const label = await renderLabel(orderId);\n    await sendToPrinter(label);\n    printing.delete(orderId);\n",
            "    try {\n      const label = await renderLabel(orderId);\n      await sendToPrinter(label);\n    } finally {\n      printing.delete(orderId);\n    }\n",
          ),
        ),
      ],
    },
    {
      name: "flag: a guard taken in the else of the test that finds it held",
      code: ELSE_FLAG,
      languageOptions: javascript,
      errors: [
        missed(
          ELSE_FLAG,
          "missedOnRejection",
          GUARD("this.locked"),
          "this.locked = true",
          "await job.draw()",
          "this.locked = false",
          ELSE_FLAG.replace(
            "      await job.draw();\n      this.locked = false;\n",
            "      try {\n        await job.draw();\n      } finally {\n        this.locked = false;\n      }\n",
          ),
        ),
      ],
    },
  ],
});

// Flags kept per key in an object or an array that outlives the call: the keyed form of the boolean guard.
const SLOT_GUARD = `const overlapping = [];
export function schedule(tasks) {
  tasks.forEach((task, slot) => {
    cron.schedule(task.rule, async () => {
      if (overlapping[slot]) return;
      overlapping[slot] = true;
      await task.run();
      overlapping[slot] = false;
    });
  });
}
`;
const SLOT_GUARD_FIXED = SLOT_GUARD.replace(
  "      await task.run();\n      overlapping[slot] = false;\n",
  "      try {\n        await task.run();\n      } finally {\n        overlapping[slot] = false;\n      }\n",
);
const RECORD_DELETE = `export class Payouts {
  pending = {};
  async pay(accountId) {
    if (this.pending[accountId]) return "busy";
    this.pending[accountId] = true;
    const balance = await this.ledger.balance(accountId);
    if (balance <= 0) return "nothing";
    await this.bank.transfer(accountId, balance);
    delete this.pending[accountId];
    return "paid";
  }
}
`;
const RECORD_DELETE_FIXED = RECORD_DELETE.replace(
  '    const balance = await this.ledger.balance(accountId);\n    if (balance <= 0) return "nothing";\n    await this.bank.transfer(accountId, balance);\n    delete this.pending[accountId];\n',
  '    try {\n      const balance = await this.ledger.balance(accountId);\n      if (balance <= 0) return "nothing";\n      await this.bank.transfer(accountId, balance);\n    } finally {\n      delete this.pending[accountId];\n    }\n',
);

const SUCCESS_RETURN = `export class Gate {
  busy = false;
  async run(task) {
    if (this.busy) return false;
    else {
      this.busy = true;
      await task();
      this.busy = false;
      return true;
    }
  }
}
`;
const STATE_FLAG = `const state = { uploading: false };
export async function upload(file) {
  if (state.uploading) return;
  state.uploading = true;
  if (!file.size) {
    state.uploading = false;
    return;
  }
  await put(file);
  state.uploading = false;
}
`;

ruleTester.run("release-in-finally (flags kept per key)", rule, {
  valid: [
    { name: "slot flag: cleared in finally", code: SLOT_GUARD_FIXED, languageOptions: javascript },
    { name: "record flag: deleted in finally", code: RECORD_DELETE_FIXED, languageOptions: javascript },
    {
      name: "slot flag: a traversal's visited record made in the outer call guards nothing across calls",
      code: `export async function walkTree(root) {
  const visited = {};
  async function visit(node) {
    if (visited[node.id]) return;
    visited[node.id] = true;
    const children = await loadChildren(node.id);
    for (const c of children) await visit(c);
    visited[node.id] = false;
  }
  await visit(root);
}
`,
      languageOptions: javascript,
    },
    {
      name: "slot flag: a dedupe record that is never cleared is no lock",
      code: `const seen = {};
export async function onEvent(e) {
  if (seen[e.id]) return;
  seen[e.id] = true;
  await handle(e);
}
`,
      languageOptions: javascript,
    },
    {
      name: "slot flag: a feature switch set and cleared without a test that turns callers away",
      code: `const features = {};
export async function withBeta(fn) {
  features.beta = true;
  await fn();
  features.beta = false;
}
`,
      languageOptions: javascript,
    },
    {
      name: "slot flag: another key's slot is another guard",
      code: `const busy = {};
export async function sync(userId, teamId) {
  if (busy[userId]) return;
  busy[teamId] = true;
  await pull(teamId);
  busy[teamId] = false;
}
`,
      languageOptions: javascript,
    },
    {
      name: "member flag: reset only where the call gives up; on success a callback clears it (a stream's state machine)",
      code: `Writer.prototype.append = function (entry, done) {
  if (this.state.writing) {
    done(new Error("busy"));
    return;
  }
  this.state.writing = true;
  if (!isSource(entry)) {
    this.state.writing = false;
    done(new Error("bad source"));
    return;
  }
  this._pipe(entry, done);
  return this;
};
`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "slot flag: a rejected task leaves its slot set",
      code: SLOT_GUARD,
      languageOptions: javascript,
      errors: [
        missed(
          SLOT_GUARD,
          "missedOnRejection",
          GUARD("overlapping[slot]"),
          "overlapping[slot] = true",
          "await task.run()",
          "overlapping[slot] = false",
          SLOT_GUARD_FIXED,
        ),
      ],
    },
    {
      name: "member flag of a module object: reset where it gives up and after the work; the work's rejection skips both",
      code: STATE_FLAG,
      languageOptions: javascript,
      errors: [
        missed(
          STATE_FLAG,
          "missedOnRejection",
          GUARD("state.uploading"),
          "state.uploading = true",
          "await put(file)",
          "  state.uploading = false;\n}",
          STATE_FLAG.replace(
            "  if (!file.size) {\n    state.uploading = false;\n    return;\n  }\n  await put(file);\n  state.uploading = false;\n",
            "  try {\n    if (!file.size) {\n      state.uploading = false;\n      return;\n    }\n    await put(file);\n  } finally {\n    state.uploading = false;\n  }\n",
          ),
        ),
      ],
    },
    {
      name: "flag reset in a branch that succeeds and returns is the holder's release, not a branch that gives up",
      code: SUCCESS_RETURN,
      languageOptions: javascript,
      errors: [
        missed(
          SUCCESS_RETURN,
          "missedOnRejection",
          GUARD("this.busy"),
          "this.busy = true",
          "await task()",
          "this.busy = false",
          SUCCESS_RETURN.replace(
            "      await task();\n      this.busy = false;\n",
            "      try {\n        await task();\n      } finally {\n        this.busy = false;\n      }\n",
          ),
        ),
      ],
    },
    {
      name: "record flag in a field: an early return skips the delete",
      code: RECORD_DELETE,
      languageOptions: javascript,
      errors: [
        missed(
          RECORD_DELETE,
          "missedOnReturn",
          GUARD("this.pending[accountId]"),
          "this.pending[accountId] = true",
          'return "nothing"',
          "delete this.pending[accountId]",
          RECORD_DELETE_FIXED,
        ),
      ],
    },
  ],
});

// Pooled clients known by what their declaration says (blind-8 DO02, DE12, DE13; blind-6 DX01), in our words: a
// TypeORM DataSource injected as a typed constructor parameter, a Sequelize instance, a Connection's manager.
const TYPEORM_INJECTED = `import { Injectable } from "@nestjs/common";
import { DataSource } from "typeorm";

@Injectable()
export class ReportScheduler {
  constructor(private readonly dataSource: DataSource) {}

  async runExclusive(work: () => Promise<void>) {
    const [row] = await this.dataSource.query("SELECT pg_try_advisory_lock(4242) AS ok");
    if (!row.ok) return;
    try {
      await work();
    } finally {
      await this.dataSource.query("SELECT pg_advisory_unlock(4242)");
    }
  }
}`;

const SEQUELIZE_INSTANCE = `const { sequelize } = require("../models");

async function withOrderLock(key, work) {
  const [rows] = await sequelize.query("SELECT pg_try_advisory_lock(:key) AS ok", { replacements: { key } });
  if (!rows[0].ok) return false;
  try {
    return await work();
  } finally {
    await sequelize.query("SELECT pg_advisory_unlock(:key)", { replacements: { key } });
  }
}
module.exports = { withOrderLock };`;

const CONNECTION_MANAGER = `import { Connection } from "typeorm";

export async function migrateOnce(conn: Connection, work: () => Promise<void>) {
  const [row] = await conn.manager.query("SELECT pg_try_advisory_lock(77) AS ok");
  if (!row.ok) return;
  try {
    await work();
  } finally {
    await conn.manager.query("SELECT pg_advisory_unlock(77)");
  }
}`;

/** One query runner holds one connection: its lock and its unlock run on the same session. */
const QUERY_RUNNER = `import { QueryRunner } from "typeorm";

export async function migrateOnce(runner: QueryRunner, work: () => Promise<void>) {
  await runner.query("SELECT pg_advisory_lock(77)");
  try {
    await work();
  } finally {
    await runner.query("SELECT pg_advisory_unlock(77)");
  }
}`;

/** A parameter named and typed like TypeORM's data source, with a class of the app's own: not TypeORM's, so unknown. */
const OWN_DATA_SOURCE = `import { DataSource } from "./warehouse";

export async function syncOnce(dataSource: DataSource, work: () => Promise<void>) {
  await dataSource.query("SELECT pg_advisory_lock(9)");
  try {
    await work();
  } finally {
    await dataSource.query("SELECT pg_advisory_unlock(9)");
  }
}`;

ruleTester.run("release-in-finally (pooled clients by declaration)", rule, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "a TypeORM QueryRunner keeps one connection", code: QUERY_RUNNER },
    { name: "a DataSource class of the app's own is unknown", code: OWN_DATA_SOURCE },
  ],
  invalid: [
    {
      name: "a TypeORM DataSource injected as a typed parameter property is a pool",
      code: TYPEORM_INJECTED,
      errors: [
        {
          messageId: "advisoryOnPool",
          ...at(TYPEORM_INJECTED, 'this.dataSource.query("SELECT pg_try'),
          data: { client: "this.dataSource" },
        },
        {
          messageId: "advisoryUnlockOnPool",
          ...at(TYPEORM_INJECTED, 'this.dataSource.query("SELECT pg_advisory_unlock'),
          data: { client: "this.dataSource", acquireLine: lineOf(TYPEORM_INJECTED, "pg_try_advisory_lock") },
        },
      ],
    },
    {
      name: "a Sequelize instance hands each query to a pooled connection",
      languageOptions: javascript,
      code: SEQUELIZE_INSTANCE,
      errors: [
        {
          messageId: "advisoryOnPool",
          ...at(SEQUELIZE_INSTANCE, 'sequelize.query("SELECT pg_try'),
          data: { client: "sequelize" },
        },
        {
          messageId: "advisoryUnlockOnPool",
          ...at(SEQUELIZE_INSTANCE, 'sequelize.query("SELECT pg_advisory_unlock'),
          data: { client: "sequelize", acquireLine: lineOf(SEQUELIZE_INSTANCE, "pg_try_advisory_lock") },
        },
      ],
    },
    {
      name: "a TypeORM Connection's manager runs on its pool",
      code: CONNECTION_MANAGER,
      errors: [
        {
          messageId: "advisoryOnPool",
          ...at(CONNECTION_MANAGER, 'conn.manager.query("SELECT pg_try'),
          data: { client: "conn.manager" },
        },
        {
          messageId: "advisoryUnlockOnPool",
          ...at(CONNECTION_MANAGER, 'conn.manager.query("SELECT pg_advisory_unlock'),
          data: { client: "conn.manager", acquireLine: lineOf(CONNECTION_MANAGER, "pg_try_advisory_lock") },
        },
      ],
    },
  ],
});

/**
 * A flag set after a log line inside a `try` whose `catch` only logs (blind-9): ESLint forks to the `catch` from the
 * log line, before the flag is set, so the way through the `catch` is walked from the `catch` itself.
 */
const FLAG_AFTER_LOG = `let syncing = false;

export async function syncTick(fetchBatch: () => Promise<string[]>, push: (ids: string[]) => Promise<void>) {
  if (syncing) {
    console.log("previous sync still running");
    return;
  }
  const ids = await fetchBatch();
  try {
    console.log(\`pushing \${ids.length} records\`);
    syncing = true;
    await push(ids);
    syncing = false;
  } catch (error) {
    console.error("sync failed", error);
  }
}
`;
const FLAG_AFTER_LOG_FIXED = `let syncing = false;

export async function syncTick(fetchBatch: () => Promise<string[]>, push: (ids: string[]) => Promise<void>) {
  if (syncing) {
    console.log("previous sync still running");
    return;
  }
  const ids = await fetchBatch();
  try {
    console.log(\`pushing \${ids.length} records\`);
    syncing = true;
    try {
      await push(ids);
    } finally {
      syncing = false;
    }
  } catch (error) {
    console.error("sync failed", error);
  }
}
`;

ruleTester.run("release-in-finally (a catch reached from before the acquire)", rule, {
  valid: [
    { name: "released in a finally around the work", code: FLAG_AFTER_LOG_FIXED },
    {
      name: "released after the try, which the catch falls through to",
      code: FLAG_AFTER_LOG.replace(
        '    syncing = false;\n  } catch (error) {\n    console.error("sync failed", error);\n  }\n',
        '  } catch (error) {\n    console.error("sync failed", error);\n  }\n  syncing = false;\n',
      ),
    },
  ],
  invalid: [
    {
      name: "the catch logs and falls off the end with the flag still set",
      code: FLAG_AFTER_LOG,
      errors: [
        missed(
          FLAG_AFTER_LOG,
          "missedOnPath",
          GUARD("syncing"),
          "syncing = true",
          null,
          "    syncing = false",
          FLAG_AFTER_LOG_FIXED,
        ),
      ],
    },
  ],
});

/**
 * A day's digest marked sent by a key that expires after a day (blind-9): freed only by the branch that defers the
 * send, kept by the way that sends. A mark held until it expires, not a lock forgotten; the same key freed after the
 * send, except on one early return, is a lock with a missed release.
 */
const DIGEST = (body: string) => `import Redis from "ioredis";

const redis = new Redis();
const DAY_MS = 26 * 60 * 60 * 1000;

export async function sendDailyDigest(day: string, primaryReachable: () => boolean, send: () => Promise<void>) {
  const key = \`digest:lock:\${day}\`;
  const taken = await redis.set(key, "1", "PX", DAY_MS, "NX");
  if (taken !== "OK") return "already-sent";
${body}
}
`;
const DIGEST_MARK = DIGEST(`  if (!primaryReachable()) {
    await redis.del(key);
    return "deferred";
  }
  await send();
  return "sent";`);
const DIGEST_LOCK = DIGEST(`  await send();
  if (!primaryReachable()) return "unconfirmed";
  await redis.del(key);
  return "sent";`);
const DIGEST_LOCK_FIXED = DIGEST(`  try {
    await send();
    if (!primaryReachable()) return "unconfirmed";
  } finally {
    await redis.del(key);
  }
  return "sent";`);

ruleTester.run("release-in-finally (a key freed only by the branch that gives up)", rule, {
  valid: [{ name: "a dedupe mark with an expiry, freed only when the send is deferred", code: DIGEST_MARK }],
  invalid: [
    {
      name: "the key freed after the send but not on the early return",
      code: DIGEST_LOCK,
      errors: [
        ttlMissed(
          DIGEST_LOCK,
          "the lock `digest:lock:*`",
          "redis.set(",
          "await redis.del(key)",
          "on the return",
          'return "unconfirmed"',
          DIGEST_LOCK_FIXED,
        ),
      ],
    },
  ],
});
