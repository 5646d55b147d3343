import rule from "../../rules/owner-checked-release.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { KEYED_LOCK, SEAT_HOLD } from "./lease-lock.js";

/** The compare-and-delete script the suggestions write, and the same text as a JS string literal. */
const CAD = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end';
const CAD_LITERAL = JSON.stringify(CAD);

/** A multi-line compare-and-delete, as projects usually write it. */
const RELEASE_LUA = `if redis.call("get", KEYS[1]) == ARGV[1] then
  return redis.call("del", KEYS[1])
else
  return 0
end`;

/** `code` with the one occurrence of `from` replaced by `to` (throws when `from` is missing or repeated). */
function swap(code: string, from: string, to: string): string {
  const at = code.indexOf(from);
  if (at < 0 || code.indexOf(from, at + 1) >= 0) throw new Error(`expected exactly one ${from} in the test code`);
  return code.slice(0, at) + to + code.slice(at + from.length);
}

type Dialect = "ioredis" | "node-redis" | "upstash";

/** The suggestions a plain DEL gets, `call` being the text from the method name to the closing parenthesis. */
function fixes(dialect: Dialect, code: string, call: string, key: string, token: string) {
  const data = { token };
  if (dialect === "ioredis") {
    return [
      { messageId: "useScript" as const, data, output: swap(code, call, `eval(${CAD_LITERAL}, 1, ${key}, ${token})`) },
      { messageId: "useDelex" as const, data, output: swap(code, call, `call("DELEX", ${key}, "IFEQ", ${token})`) },
    ];
  }
  if (dialect === "node-redis") {
    return [
      {
        messageId: "useScript" as const,
        data,
        output: swap(code, call, `eval(${CAD_LITERAL}, { keys: [${key}], arguments: [${token}] })`),
      },
      {
        messageId: "useDelex" as const,
        data,
        output: swap(code, call, `sendCommand(["DELEX", ${key}, "IFEQ", ${token}])`),
      },
    ];
  }
  return [
    { messageId: "useScript" as const, data, output: swap(code, call, `eval(${CAD_LITERAL}, [${key}], [${token}])`) },
  ];
}

/** Data of a release report (plainDelete, getCompareDelete, constantValue). */
function releaseData(command: string, key: string, acquireLine: number, getLine?: number, value = "") {
  return {
    command,
    key,
    acquireLine: String(acquireLine),
    getLine: getLine === undefined ? "" : String(getLine),
    value,
  };
}

type Suggestions = ReturnType<typeof fixes> | [];

const plainDelete = (line: number, column: number, data: ReturnType<typeof releaseData>, suggestions: Suggestions) => ({
  messageId: "plainDelete" as const,
  line,
  column,
  data,
  suggestions,
});
/** A GET compared in JavaScript, then DEL: the DEL becomes the compare-and-delete where the holder's token is in reach. */
const getCompareDelete = (
  line: number,
  column: number,
  data: ReturnType<typeof releaseData>,
  suggestions: Suggestions = [],
) => ({
  messageId: "getCompareDelete" as const,
  line,
  column,
  data,
  suggestions,
});
/** A release that reads the key and compares it in JavaScript before its DEL. */
const GET_COMPARE_CLASS = `import Redis from "ioredis";
const redis = new Redis();
export class Leader {
  constructor(private key: string, private id: string) {}
  async elect() {
    return (await redis.set(this.key, this.id, "PX", 10000, "NX")) === "OK";
  }
  async isLeader() {
    const current = await redis.get(this.key);
    return current === this.id;
  }
  async resign() {
    if (await this.isLeader()) await redis.del(this.key);
  }
}`;

/** A release that reads the key and compares it in JavaScript before its DEL. */
const GET_COMPARE_PROTOTYPE = `function Leader(redis, key, id) { this.redis = redis; this.key = key; this.id = id; }
Leader.prototype.elect = function (done) {
  this.redis.set(this.key, this.id, "PX", 10000, "NX", done);
};
Leader.prototype.isLeader = function (done) {
  this.redis.get(this.key, function (err, id) {
    if (err) return done(err);
    done(null, id === this.id);
  }.bind(this));
};
Leader.prototype.resign = function () {
  this.isLeader(function (err, leading) {
    if (leading) this.redis.del(this.key);
  }.bind(this));
};
module.exports = Leader;`;

/** A release that reads the key and compares it in JavaScript before its DEL. */
const GET_COMPARE_UPSTASH = `import { Redis } from "@upstash/redis";

export class SyncLock {
  constructor(private readonly redis: Redis, private readonly owner: string) {}

  async lock(job: string): Promise<boolean> {
    return (await this.redis.set(\`sync:\${job}\`, this.owner, { nx: true, px: 20_000 })) === "OK";
  }

  async unlock(job: string): Promise<void> {
    const holder = await this.redis.get<string>(\`sync:\${job}\`);
    if (holder === this.owner) await this.redis.del(\`sync:\${job}\`);
  }
}`;

const constantValue = (line: number, column: number, data: ReturnType<typeof releaseData>) => ({
  messageId: "constantValue" as const,
  line,
  column,
  data,
  suggestions: [],
});
const staleTakeover = (line: number, column: number, key: string, acquireLine: number, getLine: number) => ({
  messageId: "staleTakeover" as const,
  line,
  column,
  data: { key, acquireLine: String(acquireLine), getLine: String(getLine) },
  suggestions: [],
});
const checkedAcquire = (line: number, column: number, key: string, getLine: number) => ({
  messageId: "checkedAcquire" as const,
  line,
  column,
  data: { key, getLine: String(getLine) },
  suggestions: [],
});

/** The old SETNX recipe in callbacks: a stale instant taken over with GETSET, its replaced value checked. */
const GETSET_TAKEOVER = `function withLock(redis, key, timeoutSec, callback) {
  var now = Date.now();
  var expiry = now + timeoutSec * 1000 + 1;
  redis.setnx(key, expiry, function (error, set) {
    if (set === 1) return callback();
    redis.get(key, function (error, timeout) {
      if (!timeout) return;
      if (now < parseInt(timeout, 10)) return;
      redis.getset(key, expiry, function (error, old) {
        if (old !== timeout) return;
        callback();
      });
    });
  });
}`;

/** A try-acquire left early inside the try whose finally deletes the key by key alone. */
const LOSER_RELEASES = `import Redis from "ioredis";
const redis = new Redis();
export async function nightly(token: string) {
  try {
    const got = await redis.set("nightly:lock", token, "EX", 600, "NX");
    if (!got) return;
    await buildReport();
  } finally {
    await redis.del("nightly:lock");
  }
}`;

/** A lock written as GET, a JS check of the holder, then a plain SET: set-if-absent in two round trips. */
const CHECKED_SET = `export class Locker {
  constructor(private readonly cache: Cache) {}
  async lock(owner: string, name: string) {
    const key = \`mutex:\${name}\`;
    const holder = await this.cache.get(key);
    if (holder && holder !== owner) throw new Error("held by another owner");
    await this.cache.set(key, owner, { ttl: 30_000 });
    return async () => { await this.cache.delete(key); };
  }
}`;

// ---------------------------------------------------------------- invalid sources

const ioredisFinally = `import Redis from "ioredis";
import { randomUUID } from "node:crypto";

const redis = new Redis();

export async function withReportLock(reportId: string, work: () => Promise<void>) {
  const key = \`lock:report:\${reportId}\`;
  const token = randomUUID();
  const acquired = await redis.set(key, token, "PX", 30_000, "NX");
  if (acquired !== "OK") return false;
  try {
    await work();
  } finally {
    await redis.del(key);
  }
  return true;
}`;

const ioredisThenJs = `const Redis = require("ioredis");
const redis = new Redis();

function runExclusive(name, token, work) {
  const key = \`mutex:\${name}\`;
  return redis.set(key, token, "EX", 60, "NX").then((ok) => {
    if (!ok) return false;
    return work().then(() => redis.del(key));
  });
}

module.exports = { runExclusive };`;

const ioredisClass = `import Redis from "ioredis";
import { randomUUID } from "node:crypto";

export class SchedulerLeader {
  private readonly token = randomUUID();

  constructor(private readonly redis: Redis) {}

  async campaign(): Promise<boolean> {
    const res = await this.redis.set("leader:scheduler", this.token, "PX", 15_000, "NX");
    return res === "OK";
  }

  async resign(): Promise<void> {
    await this.redis.del("leader:scheduler");
  }
}`;

const ioredisUnlink = `import IORedis from "ioredis";

const redis = new IORedis(process.env.REDIS_URL!);
const LOCK_TTL_MS = 20_000;

export async function rebuildIndex(tenantId: string, owner: string) {
  const lockKey = "lock:index:" + tenantId;
  if (!(await redis.set(lockKey, owner, "PX", LOCK_TTL_MS, "NX"))) {
    throw new Error("index rebuild already running");
  }
  try {
    await doRebuild(tenantId);
  } finally {
    await redis.unlink(lockKey);
  }
}`;

const ioredisMulti = `import Redis from "ioredis";

const redis = new Redis();

export async function finishJob(jobId: string, workerId: string) {
  const key = \`lock:job:\${jobId}\`;
  const ok = await redis.set(key, workerId, "EX", 120, "NX");
  if (!ok) return;
  await processJob(jobId);
  await redis
    .multi()
    .del(key)
    .hincrby("stats", "finished", 1)
    .exec();
}`;

const ioredisHelperKey = `import Redis from "ioredis";

export class JobRunner {
  constructor(private readonly redis: Redis) {}

  private lockKey(jobId: string) {
    return \`lock:job:\${jobId}\`;
  }

  async run(jobId: string, token: string) {
    const ok = await this.redis.set(this.lockKey(jobId), token, "EX", 60, "NX");
    if (!ok) return;
    try {
      await this.execute(jobId);
    } finally {
      await this.redis.del(this.lockKey(jobId));
    }
  }

  private async execute(jobId: string) {}
}`;

const nodeRedisFinally = `import { createClient } from "redis";

const client = createClient();

export async function withCheckoutLock(cartId: string, fn: () => Promise<void>) {
  const key = \`lock:checkout:\${cartId}\`;
  const token = crypto.randomUUID();
  const ok = await client.set(key, token, { NX: true, PX: 10_000 });
  if (!ok) throw new Error("checkout in progress");
  try {
    await fn();
  } finally {
    await client.del(key);
  }
}`;

const nodeRedisV5Class = `import { createClient, type RedisClientType } from "redis";
import { randomUUID } from "node:crypto";

export class ReportLock {
  private readonly token = randomUUID();

  constructor(private readonly client: RedisClientType) {}

  async acquire(reportId: string): Promise<boolean> {
    const reply = await this.client.set(\`lock:report:\${reportId}\`, this.token, {
      condition: "NX",
      expiration: { type: "PX", value: 30_000 },
    });
    return reply === "OK";
  }

  async release(reportId: string): Promise<void> {
    await this.client.del(\`lock:report:\${reportId}\`);
  }
}`;

const nodeRedisThenJs = `import { createClient } from "redis";

const client = createClient();

export function refreshFeed(feedId, token) {
  const key = "lock:feed:" + feedId;
  return client
    .set(key, token, { NX: true, EX: 30 })
    .then((reply) => {
      if (reply !== "OK") return;
      return fetchFeed(feedId).finally(() => client.del(key));
    });
}`;

const upstashFinally = `import { Redis } from "@upstash/redis";

const redis = Redis.fromEnv();

export async function withLock(id: string, token: string, task: () => Promise<void>) {
  const key = \`lock:\${id}\`;
  const acquired = await redis.set(key, token, { nx: true, ex: 30 });
  if (!acquired) return false;
  try {
    await task();
  } finally {
    await redis.del(key);
  }
  return true;
}`;

const vercelThenJs = `import { kv } from "@vercel/kv";

export function publishOnce(postId, token) {
  const key = \`lock:publish:\${postId}\`;
  return kv
    .set(key, token, { nx: true, ex: 15 })
    .then((ok) => (ok ? publish(postId) : null))
    .finally(() => kv.del(key));
}`;

const ioredisWatchOther = `import Redis from "ioredis";

const redis = new Redis();

export async function rollout(id: string, token: string) {
  const key = \`lock:\${id}\`;
  if (!(await redis.set(key, token, "NX", "PX", 1000))) return;
  await redis.watch("config:flags");
  await redis.multi().del(key).exec();
}`;

/**
 * A job-queue plugin's key, set (or taken over once its stamped time passed) in one lifecycle hook and deleted in
 * another: `beforeEnqueue` to `beforePerform` marks a queued job, `beforePerform` to `afterPerform` holds the work.
 */
const queuedMarker = (acquireHook: string, releaseHook: string) => `export class SingleQueuedPlugin extends Plugin {
  async ${acquireHook}() {
    const key = \`queued:\${this.job}\`;
    const until = Date.now() + 60_000;
    if (await this.redis.set(key, String(until), "PX", 60_000, "NX")) return true;
    const held = Number(await this.redis.get(key));
    if (Date.now() <= held) return false;
    await this.redis.set(key, String(until), "PX", 60_000);
    return true;
  }
  async ${releaseHook}() {
    await this.redis.del(\`queued:\${this.job}\`);
    return true;
  }
}`;

/** A lock row's release by its key alone, once the row can pass to another holder. */
function rowRelease(
  line: number,
  column: number,
  data: { operation: string; lock: string; acquireLine: number; filter: string; expires: string; expiryLine: number },
) {
  return {
    messageId: "rowRelease" as const,
    line,
    column,
    data: { ...data, acquireLine: String(data.acquireLine), expiryLine: String(data.expiryLine) },
  };
}

/** A Mongoose lease: `leaseUntil` stamped only where it has passed (or is absent); released by `releaseWith`. */
const mongooseLease = (releaseWith: string) => `import mongoose from "mongoose";

const Lease = mongoose.model("Lease", new mongoose.Schema({ name: String, leaseUntil: Date }));

export async function runExclusive(name, ttlMs, task) {
  const until = new Date(Date.now() + ttlMs);
  const doc = await Lease.findOneAndUpdate(
    { name, $or: [{ leaseUntil: { $lt: new Date() } }, { leaseUntil: { $exists: false } }] },
    { name, leaseUntil: until },
    { upsert: true, new: true },
  );
  if (doc.leaseUntil.getTime() !== until.getTime()) return false;
  try {
    await task();
  } finally {
    ${releaseWith}
  }
  return true;
}`;

/** A lock table in PostgreSQL through the service's own \`query\` helper: an upsert that takes over expired rows. */
const sqlLockTable = (release: string) => `const { query } = require("./db");

async function acquireLock(key, holder, ttlSeconds) {
  const res = await query(
    "INSERT INTO app_locks (lock_key, holder, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3)) ON CONFLICT (lock_key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE app_locks.expires_at < now() RETURNING holder",
    [key, holder, ttlSeconds],
  );
  return res.rowCount === 1;
}

async function releaseLock(key, holder) {
  await query(${release}, [key, holder]);
}

module.exports = { acquireLock, releaseLock };`;

/** A poller whose check of its guard sits inside the `try`: the caller that finds it busy runs the `finally` too. */
const UNTAKEN_GUARD = `export class InboxPoller {
  private busy = false;
  async poll() {
    try {
      if (this.busy) return;
      this.busy = true;
      await this.fetchAll();
    } catch (err) {
      console.error(err);
    } finally {
      this.busy = false;
    }
  }
}`;
/** The same with a mutex: the caller that sees it locked leaves through a `finally` that releases it. */
const UNTAKEN_MUTEX = `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export async function syncCatalog() {
  try {
    if (mutex.isLocked()) return;
    await mutex.acquire();
    await pullCatalog();
  } finally {
    mutex.release();
  }
}`;

/** A lock whose value is a JSON document naming its agent, released by the Lua script given. */
const jsonLock = (script: string) => `import Redis from "ioredis";

const redis = new Redis();
const RELEASE = \`${script}\`;

export async function takeConversation(id: string, agentId: string) {
  const key = \`lock:conversation:\${id}\`;
  if ((await redis.set(key, JSON.stringify({ agentId }), "NX", "PX", 30_000)) === null) return;
  try {
    await reply(id);
  } finally {
    await redis.eval(RELEASE, 1, key, agentId);
  }
}`;

/** A per-notice Upstash lock held by a constant value, released by key when the send fails; its expiry is `keep`. */
const noticeLock = (keep: string) => `import { Redis } from "@upstash/redis";
const redis = Redis.fromEnv();
const KEEP_SECONDS = ${keep};
export async function sendOnce(noticeId: string) {
  const key = \`lock:notice:\${noticeId}\`;
  if ((await redis.set(key, 1, { ex: KEEP_SECONDS, nx: true })) !== "OK") return;
  try {
    await deliver(noticeId);
  } catch (err) {
    await redis.del(key);
    throw err;
  }
}`;

/**
 * A Mongoose lease on notifications, taken per row where `leaseUntil` is absent or past (line 5), and a
 * `giveUp(doc)` whose document is a parameter: its writes are set in an `if` and saved after it.
 */
const notificationLease = (docName: string, models = "") => `export async function leaseBatch(limit) {
  const now = new Date();
  const picked = [];
  for (const c of await Notification.find({ state: "queued" }).limit(limit)) {
    const got = await Notification.findOneAndUpdate(
      { _id: c._id, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
      { $set: { leaseUntil: new Date(now.getTime() + 30000) } },
      { new: true },
    );
    if (got) picked.push(got);
  }
  return picked;
}

export async function giveUp(${docName}, reason) {
  ${docName}.state = "failed";
  ${docName}.reason = reason;
  ${docName}.leaseUntil = null;
  if (${docName}.tries < 5) {
    const wait = 2 ** ${docName}.tries * 1000;
    ${docName}.retryAt = new Date(Date.now() + wait);
  } else {
    ${docName}.retryAt = null;
  }
  await ${docName}.save();
}
${models}`;

/**
 * An export guarded by a flag row of `taskFlag`, read and tested inside the `try` whose `finally` clears it.
 * `exit` is the early way out at line 5.
 */
const flagRowTask = (
  exit = "if (flag.exporting) return;",
) => `export async function runExport(name: string, run: () => Promise<void>) {
  try {
    const flag = await prisma.taskFlag.findUnique({ where: { name } });
    if (!flag) return;
    ${exit}
    await prisma.taskFlag.update({ where: { name }, data: { exporting: true } });
    await run();
  } finally {
    await prisma.taskFlag.update({ where: { name }, data: { exporting: false } });
  }
}
`;

/**
 * An application's cache service over Redis, with its own names: `setIfNotExistsOrGet(key, token, ttl)` and
 * `setnx(key, value, { ttl })` take the lock, `delete(key)` frees it (in a finally, or in a disposer that runs
 * on every path).
 */
const CACHE_SERVICE = `import { randomUUID } from "node:crypto";
export class ReportService {
  constructor(private readonly cache: CacheService) {}
  async rebuild(id: string) {
    const key = \`report:rebuild:\${id}\`;
    const token = randomUUID();
    const seen = await this.cache.setIfNotExistsOrGet(key, token, REBUILD_TTL_SECONDS);
    if (seen !== token) return;
    try {
      await this.build(id);
    } finally {
      await this.cache.delete(key);
    }
  }
  async upgrade() {
    const acquired = await this.cache.setnx("schema:upgrade", 1, { ttl: 10 * 60 * 1000 });
    await using _ = defer(async () => {
      await this.cache.delete("schema:upgrade");
    });
    if (acquired) await this.migrate();
  }
}
`;

ruleTester.run("owner-checked-release", rule, {
  valid: [
    // The same window cleared in JavaScript through a method of the class: the method compares the value with a
    // state ("pending:"), never with what this caller stored, so the key is still no lock.
    {
      code: `import Redis from "ioredis";
const redis = new Redis();
export class Window {
  constructor(private key: string, private claimId: string) {}
  async open(ttlMs: number) {
    return (await redis.set(this.key, \`pending:\${this.claimId}\`, "PX", ttlMs, "NX")) === "OK";
  }
  async isPending() {
    const value = await redis.get(this.key);
    return value !== null && value.startsWith("pending:");
  }
  async abandon() {
    if (await this.isPending()) await redis.del(this.key);
  }
}`,
    },
    // A coalescing window, not a lock: the key is claimed NX as "pending", later holds the batch id, and is
    // cleared by a script that checks a state (the "pending:" prefix), not a holder's token, or deleted outright
    // when the batch is dropped. Nothing here compares the key with what this caller stored.
    {
      code: `import Redis from "ioredis";
const redis = new Redis();
redis.defineCommand("dropIfPending", {
  numberOfKeys: 1,
  lua: "local v = redis.call('GET', KEYS[1]) if v and string.sub(v, 1, 8) == 'pending:' then redis.call('DEL', KEYS[1]) end return 1",
});
export async function openWindow(scope: string, claimId: string, ttlMs: number) {
  const windowKey = \`coalesce:\${scope}\`;
  return (await redis.set(windowKey, \`pending:\${claimId}\`, "PX", ttlMs, "NX")) === "OK";
}
export async function abandonWindow(scope: string) {
  await redis.dropIfPending(\`coalesce:\${scope}\`);
}
export async function dropBatch(scope: string) {
  await redis.del(\`coalesce:\${scope}\`);
}`,
    },
    {
      // GETSET swaps the stale instant out and hands back the one it replaced: only the caller that swapped out the
      // value it judged stale goes on, the old recipe's race-safe take-over
      name: "a stale timestamp lock taken over with GETSET whose old value is checked",
      code: GETSET_TAKEOVER,
      languageOptions: javascript,
    },
    {
      // the same early return, but the finally's compare-and-delete carries this caller's token: it deletes nothing
      // of the winner's
      name: "a try-acquire left early inside the try whose finally compares the token",
      code: LOSER_RELEASES.replace(
        "const redis = new Redis();\n",
        'const redis = new Redis();\nconst RELEASE = \'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0\';\n',
      ).replace('await redis.del("nightly:lock");', 'await redis.eval(RELEASE, 1, "nightly:lock", token);'),
    },
    {
      // a Map the module builds is no store, however its get/compare/set reads: a per-key owner table in memory
      name: "a Map of owners checked and set in JavaScript",
      code: `export class Rooms {
  private readonly owners = new Map<string, string>();
  claim(roomLock: string, owner: string) {
    const holder = this.owners.get(roomLock);
    if (holder && holder !== owner) throw new Error("taken");
    this.owners.set(roomLock, owner);
    return () => this.owners.delete(roomLock);
  }
}`,
    },
    {
      // a check of the key's value against something other than what the SET stores (a count kept between runs)
      // is no acquire: nothing is turned away for holding it
      name: "GET, a check of another value, then a SET of the key",
      code: `export class SyncGuard {
  constructor(private readonly store: Store) {}
  async push(data: { items: string[] }) {
    const previous = await this.store.get("sync-lock:count");
    const current = data.items.length;
    if (previous > 0 && current === 0) return false;
    await this.store.set("sync-lock:count", current);
    return true;
  }
}`,
    },
    // the check before the `try`: only the holder enters it; a way out inside the `try` before the flag is set
    // (nothing to do) is taken only when nobody holds it
    `let running = false;
export async function tick(items: string[]) {
  if (running) return;
  try {
    if (items.length === 0) return;
    running = true;
    await work(items);
  } finally {
    running = false;
  }
}`,

    // a per-notice lock kept for 90 days (Upstash), held by a constant value and released by key when the send
    // fails: nobody else takes the key while its holder works, since its expiry outlasts any work
    noticeLock("90 * 24 * 60 * 60"),
    // the same helper-rooted upsert on a table with no lock word, overwriting where an ordinary timestamp has passed:
    // a cache refresh, not a lock; its delete by key frees nobody's lock
    `import type { Knex } from "knex";
function snapshotsTable(db: Knex) { return db("snapshots"); }
export async function refresh(db: Knex, row: { key: string; refreshedAt: Date }) {
  await snapshotsTable(db).insert(row).onConflict("key").merge().where("refreshedAt", "<", new Date(Date.now() - 60_000));
}
export async function drop(db: Knex, key: string) {
  await snapshotsTable(db).where({ key }).delete();
}`,
    // ioredis: the lock's value is a JSON document; the script decodes it and compares its owner field
    jsonLock(`
  local current = redis.call("get", KEYS[1])
  if not current then return 0 end
  local held = cjson.decode(current)
  if held["agentId"] == ARGV[1] then
    return redis.call("del", KEYS[1])
  end
  return 0
`),
    // a column stamped with the bare clock is a start time, not an until-instant: setting it to the clock again
    // takes the lease anew, it releases nothing (and a table with no lock word holds no lease)
    {
      code: `export function touchPlugin(schema, modelName) {
  schema.methods.lock = function (cutoff, cb) {
    this.model(modelName).findOneAndUpdate({ _id: this._id, locked: { $lte: cutoff } }, { locked: new Date() }, { new: true }, cb);
  };
  schema.methods.touch = function (cb) {
    this.model(modelName).findOneAndUpdate({ _id: this._id }, { locked: new Date() }, { new: true }, cb);
  };
}
export async function seen(id) {
  await this.model("visit").findOneAndUpdate({ _id: id, seenAt: { $lte: new Date() } }, { seenAt: new Date(Date.now() + 1000) });
  await this.model("visit").findOneAndUpdate({ _id: id }, { seenAt: new Date() });
}`,
      languageOptions: javascript,
    },
    // lock rows: the release names the holder too, or clears only the lease this holder stamped
    { code: sqlLockTable('"DELETE FROM app_locks WHERE lock_key = $1 AND holder = $2"'), languageOptions: javascript },
    {
      code: mongooseLease("await Lease.updateOne({ name, leaseUntil: until }, { leaseUntil: new Date(0) });"),
      languageOptions: javascript,
    },
    {
      // a lock row that never changes hands while held (no expiry, no sweeper): Q1 is its finding, not Q3
      code: `import { prisma } from "./db";
export async function withJobLock(name: string, work: () => Promise<void>) {
  try {
    await prisma.jobLock.create({ data: { name } });
  } catch (e: any) {
    if (e.code === "P2002") return;
    throw e;
  }
  await work();
  await prisma.jobLock.delete({ where: { name } });
}`,
    },
    {
      // extending a lease (the clock plus a TTL, in SQL and in JS) renews it; it does not release the row
      code: `export async function acquire(pool, key, holder) {
  const r = await pool.query("INSERT INTO app_locks (lock_key, holder, expires_at) VALUES ($1, $2, now() + interval '30 seconds') ON CONFLICT (lock_key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at WHERE app_locks.expires_at < now()", [key, holder]);
  return r.rowCount === 1;
}
export async function extend(pool, key) {
  await pool.query("UPDATE app_locks SET expires_at = now() + interval '30 seconds' WHERE lock_key = $1", [key]);
}
export async function extendInJs(prisma, name) {
  await prisma.appLock.updateMany({ where: { name }, data: { expiresAt: new Date(Date.now() + 30000) } });
}`,
      languageOptions: javascript,
    },
    {
      // a session table refreshed when expired and deleted on logout: no lock in its name, so not a lease
      code: `export async function touchSession(pool, id) {
  await pool.query("UPDATE sessions SET expires_at = now() + interval '1 hour' WHERE id = $1 AND expires_at < now()", [id]);
}
export async function logout(pool, id) {
  await pool.query("DELETE FROM sessions WHERE id = $1", [id]);
}`,
      languageOptions: javascript,
    },
    {
      // a plain function called \`query\` whose argument is not SQL is not a database call
      code: `import { query } from "./graphql";
export const lockedItems = () => query("query LockedItems { items(locked: true) { id } }");
export const unlock = (id) => query("mutation Unlock { unlock(id: 1) }", { id });`,
      languageOptions: javascript,
    },
    // ioredis: compare-and-delete script in finally
    `import Redis from "ioredis";

const redis = new Redis();
const RELEASE = ${JSON.stringify(RELEASE_LUA)};

export async function withLock(id: string, token: string, fn: () => Promise<void>) {
  const key = \`lock:\${id}\`;
  if (!(await redis.set(key, token, "PX", 30_000, "NX"))) return;
  try {
    await fn();
  } finally {
    await redis.eval(RELEASE, 1, key, token);
  }
}`,
    // ioredis: the script loaded once, released by EVALSHA
    `import Redis from "ioredis";

const redis = new Redis();
const RELEASE = ${JSON.stringify(RELEASE_LUA)};
let releaseSha: string | undefined;

export async function unlock(key: string, token: string) {
  releaseSha ??= (await redis.script("LOAD", RELEASE)) as string;
  return redis.evalsha(releaseSha, 1, key, token);
}

export async function lock(key: string, token: string) {
  return redis.set(key, token, "NX", "PX", 5000);
}`,
    // ioredis: defineCommand, then the custom command
    `import Redis from "ioredis";

const redis = new Redis();
redis.defineCommand("releaseLock", {
  numberOfKeys: 1,
  lua: ${JSON.stringify(RELEASE_LUA)},
});

export async function runNightly(token: string) {
  const ok = await redis.set("lock:nightly", token, "EX", 600, "NX");
  if (!ok) return;
  try {
    await nightly();
  } finally {
    await redis.releaseLock("lock:nightly", token);
  }
}`,
    // node-redis: eval(script, { keys, arguments })
    `import { createClient } from "redis";

const client = createClient();
const RELEASE = ${JSON.stringify(RELEASE_LUA)};

export async function withLock(name: string, token: string, fn: () => Promise<void>) {
  const key = \`lock:\${name}\`;
  if (!(await client.set(key, token, { NX: true, PX: 15_000 }))) return;
  try {
    await fn();
  } finally {
    await client.eval(RELEASE, { keys: [key], arguments: [token] });
  }
}`,
    // Upstash: eval(script, [keys], [args])
    `import { Redis } from "@upstash/redis";

const redis = Redis.fromEnv();

export async function releaseLease(resource: string, token: string) {
  await redis.eval(${CAD_LITERAL}, [\`lease:\${resource}\`], [token]);
}

export async function takeLease(resource: string, token: string) {
  return redis.set(\`lease:\${resource}\`, token, { nx: true, px: 8000 });
}`,
    // @vercel/kv: compare-and-delete, plain JS with .then
    {
      code: `import { kv } from "@vercel/kv";

export function once(id, token, fn) {
  const key = "lock:once:" + id;
  return kv.set(key, token, { nx: true, ex: 20 }).then((ok) => {
    if (!ok) return null;
    return fn().finally(() => kv.eval(${CAD_LITERAL}, [key], [token]));
  });
}`,
      languageOptions: javascript,
    },
    // cache invalidation: the deleted key was never acquired with NX
    `import Redis from "ioredis";

const redis = new Redis();

export async function updateUser(id: string, token: string, data: object) {
  if (!(await redis.set(\`lock:user:\${id}\`, token, "NX", "EX", 10))) return;
  await saveUser(id, data);
  await redis.del(\`cache:user:\${id}\`);
  await redis.eval(${CAD_LITERAL}, 1, \`lock:user:\${id}\`, token);
}`,
    // a plain SET with expiry, then DEL: a cache entry, not a lock
    `import Redis from "ioredis";

const redis = new Redis();

export async function remember(key: string, value: string) {
  await redis.set(key, value, "EX", 60);
}

export async function forget(key: string) {
  await redis.del(key);
}`,
    // idempotency key set NX EX, deleted when the work fails so a retry can run
    `import Redis from "ioredis";

const redis = new Redis();

export async function handleWebhook(requestId: string, payload: unknown) {
  const key = \`idempotency:\${requestId}\`;
  const first = await redis.set(key, "1", "NX", "EX", 86_400);
  if (!first) return { duplicate: true };
  try {
    await apply(payload);
  } catch (err) {
    await redis.del(key);
    throw err;
  }
  return { duplicate: false };
}`,
    // dedup marker in node-redis: not a lock
    `import { createClient } from "redis";

const client = createClient();

export async function consume(messageId: string) {
  const fresh = await client.set(\`dedup:\${messageId}\`, "seen", { NX: true, EX: 3600 });
  if (!fresh) return;
  try {
    await handle(messageId);
  } catch (err) {
    await client.del(\`dedup:\${messageId}\`);
    throw err;
  }
}`,
    // WATCH + GET + MULTI DEL EXEC: optimistic, owner-checked
    `import Redis from "ioredis";

const redis = new Redis();

export async function acquire(key: string, token: string) {
  return redis.set(key, token, "PX", 10_000, "NX");
}

export async function release(key: string, token: string) {
  await redis.watch(key);
  const current = await redis.get(key);
  if (current !== token) {
    await redis.unwatch();
    return false;
  }
  const result = await redis.multi().del(key).exec();
  return result !== null;
}`,
    // node-redis: WATCH on an isolated connection, then MULTI DEL EXEC
    {
      code: `import { createClient } from "redis";

const client = createClient();

export async function acquire(name, token) {
  return client.set(\`lock:\${name}\`, token, { NX: true, PX: 10000 });
}

export async function release(name, token) {
  return client.executeIsolated(async (isolated) => {
    await isolated.watch(\`lock:\${name}\`);
    if ((await isolated.get(\`lock:\${name}\`)) !== token) return false;
    await isolated.multi().del(\`lock:\${name}\`).exec();
    return true;
  });
}`,
      languageOptions: javascript,
    },
    // Redlock v5: acquire/release
    {
      code: `import Redlock from "redlock";
import Redis from "ioredis";

const redlock = new Redlock([new Redis()]);

export async function payout(accountId) {
  const lock = await redlock.acquire([\`lock:payout:\${accountId}\`], 5000);
  try {
    await doPayout(accountId);
  } finally {
    await lock.release();
  }
}`,
      languageOptions: javascript,
    },
    // redis-semaphore Mutex
    `import Redis from "ioredis";
import { Mutex } from "redis-semaphore";

const redis = new Redis();

export async function migrate() {
  const mutex = new Mutex(redis, "migrations");
  await mutex.acquire();
  try {
    await runMigrations();
  } finally {
    await mutex.release();
  }
}`,
    // Map#delete next to a Redis lock released by script
    `import Redis from "ioredis";

const redis = new Redis();
const local = new Map<string, Promise<void>>();

export async function exclusive(id: string, token: string, fn: () => Promise<void>) {
  const key = \`lock:\${id}\`;
  if (!(await redis.set(key, token, "NX", "PX", 5000))) return;
  local.set(key, fn());
  try {
    await local.get(key);
  } finally {
    local.delete(key);
    await redis.eval(${CAD_LITERAL}, 1, key, token);
  }
}`,
    // heartbeat: SET PX without a GET check is not a take-over
    `import Redis from "ioredis";

const redis = new Redis();

export async function lead(token: string, work: () => Promise<void>) {
  const key = "leader:billing";
  if (!(await redis.set(key, token, "PX", 10_000, "NX"))) return;
  const beat = setInterval(() => {
    void redis.set(key, token, "PX", 10_000);
  }, 3000);
  try {
    await work();
  } finally {
    clearInterval(beat);
    await redis.eval(${CAD_LITERAL}, 1, key, token);
  }
}`,
    // node-redis v5 class: this.client.eval with a compare-and-delete
    `import { createClient, type RedisClientType } from "redis";

export class Lease {
  constructor(private readonly client: RedisClientType, private readonly token: string) {}

  async take(id: string) {
    return this.client.set(\`lease:\${id}\`, this.token, { condition: "NX", expiration: { type: "EX", value: 30 } });
  }

  async drop(id: string) {
    await this.client.eval(${JSON.stringify(RELEASE_LUA)}, { keys: [\`lease:\${id}\`], arguments: [this.token] });
  }
}`,
    // ioredis pipeline queuing the compare-and-delete script
    `import Redis from "ioredis";

const redis = new Redis();

export async function finish(jobId: string, token: string) {
  const key = \`lock:job:\${jobId}\`;
  if (!(await redis.set(key, token, "EX", 60, "NX"))) return;
  await redis
    .pipeline()
    .eval(${CAD_LITERAL}, 1, key, token)
    .lpush("done", jobId)
    .exec();
}`,
    // ioredis generic call("EVAL", …)
    `import Redis from "ioredis";

const redis = new Redis();

export async function guarded(token: string) {
  if ((await redis.call("SET", "lock:report", token, "NX", "EX", 30)) !== "OK") return;
  try {
    await report();
  } finally {
    await redis.call("EVAL", ${CAD_LITERAL}, 1, "lock:report", token);
  }
}`,
    // node-redis generic sendCommand(["EVAL", …])
    `import { createClient } from "redis";

const client = createClient();

export async function guarded(token: string) {
  const ok = await client.sendCommand(["SET", "lock:report", token, "NX", "PX", "30000"]);
  if (ok !== "OK") return;
  try {
    await report();
  } finally {
    await client.sendCommand(["EVAL", ${CAD_LITERAL}, "1", "lock:report", token]);
  }
}`,
    // already released with DELEX … IFEQ
    `import Redis from "ioredis";

const redis = new Redis();

export async function sync(token: string) {
  if (!(await redis.set("lock:sync", token, "NX", "PX", 20_000))) return;
  try {
    await doSync();
  } finally {
    await redis.call("DELEX", "lock:sync", "IFEQ", token);
  }
}`,
    // a GET check before retrying SET NX: still atomic, not a take-over
    `import Redis from "ioredis";

const redis = new Redis();

export async function tryLock(key: string, token: string) {
  const current = await redis.get(key);
  if (current === token) return true;
  return (await redis.set(key, token, "NX", "PX", 5000)) === "OK";
}

export async function unlock(key: string, token: string) {
  return redis.eval(${CAD_LITERAL}, 1, key, token);
}`,
    // a GET compared in JS, then a compare-and-delete script all the same
    `import Redis from "ioredis";

const redis = new Redis();

export async function release(key: string, token: string) {
  const holder = await redis.get(key);
  if (holder !== token) return false;
  return (await redis.eval(${CAD_LITERAL}, 1, key, token)) === 1;
}

export async function acquire(key: string, token: string) {
  return redis.set(key, token, "NX", "EX", 30);
}`,
    // the deleted key is an opaque parameter that is not the acquired pattern
    `import Redis from "ioredis";

const redis = new Redis();

export async function refresh(id: string, token: string, cacheKey: string) {
  if (!(await redis.set(\`lock:refresh:\${id}\`, token, "NX", "EX", 30))) return;
  await redis.del(cacheKey);
  await redis.eval(${CAD_LITERAL}, 1, \`lock:refresh:\${id}\`, token);
}`,
    // ioredis: keys and arguments passed as arrays to eval
    `import Redis from "ioredis";

const redis = new Redis();

export async function withLock(id: string, token: string, fn: () => Promise<void>) {
  const key = \`lock:\${id}\`;
  if (!(await redis.set(key, token, "NX", "PX", 1000))) return;
  try {
    await fn();
  } finally {
    await redis.eval(${CAD_LITERAL}, 1, [key], [token]);
  }
}`,
    // Redlock v4 lock/unlock in plain JS
    {
      code: `const Redlock = require("redlock");
const redlock = new Redlock([client]);

async function settle(id) {
  const lock = await redlock.lock("locks:settle:" + id, 2000);
  try {
    await doSettle(id);
  } finally {
    await lock.unlock();
  }
}

module.exports = { settle };`,
      languageOptions: javascript,
    },
    {
      // the early way out is taken when the feature is off, not when the row is held: it frees nobody's claim
      name: "a flag row cleared in finally after an exit that does not test the flag",
      code: flagRowTask("if (process.env.EXPORTS_OFF) return;"),
    },
    {
      // an application cache's `delete(key)` is a DEL; a Map's delete of the same key text is another store's
      name: "a Map's delete of a Redis lock's key is no release",
      code: `import Redis from "ioredis";
const redis = new Redis();
const inFlight = new Map<string, Promise<void>>();
export async function once(id: string, token: string, work: () => Promise<void>) {
  const key = \`lock:once:\${id}\`;
  if ((await redis.set(key, token, "PX", 60_000, "NX")) !== "OK") return;
  try {
    inFlight.set(key, work());
    await inFlight.get(key);
  } finally {
    inFlight.delete(key);
  }
}`,
    },
    {
      // two methods of one service whose keys are only their own parameters are two unrelated values: a generic
      // deleteKey(key) is no release of acquire(key)'s lock (releaseLock(key) would be, by its name)
      name: "a generic delete helper next to a lock helper, each keyed by its own parameter",
      code: `import Redis from "ioredis";
export class RedisStore {
  constructor(private readonly redis: Redis) {}
  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(key, token, "PX", ttlMs, "NX")) === "OK";
  }
  async deleteKey(key: string): Promise<void> {
    await this.redis.del(key);
  }
}`,
    },
    {
      // a document known only as a parameter is given to a model named like it; `thing` is named like none
      name: "a saved parameter named like no model of the module stays unknown",
      code: notificationLease("thing"),
      languageOptions: javascript,
    },
    {
      // `event` could be a MessageEvent or an AuditEvent: two models alike, so it is neither
      name: "a saved parameter named like two models stays unknown",
      code:
        notificationLease("event").replaceAll("Notification", "MessageEvent") +
        `export async function audit(id) { await AuditEvent.updateOne({ _id: id }, { $set: { leaseUntil: null } }); }\n`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "a queued-job marker deleted by the next stage's beforePerform hook is handed off, not released; its take-over still races",
      code: queuedMarker("beforeEnqueue", "beforePerform"),
      errors: [staleTakeover(8, 22, '"queued:*"', 5, 6)],
    },
    {
      name: "the same key held from beforePerform to afterPerform is released by its holder: the plain DEL is reported",
      code: queuedMarker("beforePerform", "afterPerform"),
      errors: [staleTakeover(8, 22, '"queued:*"', 5, 6), plainDelete(12, 22, releaseData("DEL", '"queued:*"', 5), [])],
    },
    {
      // "release only if we own it", with the owner read from the key a moment before: it always matches
      name: "a compare-and-delete handed the value just read from the key",
      code: `import Redis from "ioredis";
const redis = new Redis();
const RELEASE = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end';
export async function withExportLock(id: string, work: () => Promise<void>) {
  const key = \`lock:export:\${id}\`;
  if ((await redis.set(key, \`\${process.pid}:\${Date.now()}\`, "PX", 30_000, "NX")) !== "OK") return;
  try {
    await work();
  } finally {
    const current = await redis.get(key);
    if (current) await redis.eval(RELEASE, 1, key, current);
  }
}`,
      errors: [
        {
          messageId: "selfComparedDelete",
          line: 11,
          column: 30,
          data: releaseData("script", '"lock:export:*"', 6, 10),
          suggestions: [],
        },
      ],
    },
    {
      // the wrapper's own method names; no suggestion, since a wrapper has no client command to rewrite into
      name: "an application cache service's set-if-absent and delete",
      code: CACHE_SERVICE,
      errors: [
        plainDelete(12, 24, releaseData("DEL", '"report:rebuild:*"', 7), []),
        constantValue(18, 24, releaseData("DEL", '"schema:upgrade"', 16, undefined, '"1"')),
      ],
    },
    {
      // the second caller finds the row held and returns; its finally clears the first caller's flag
      name: "a flag row cleared in the finally of a try left early when the row is held",
      code: flagRowTask(),
      errors: [
        {
          messageId: "releasedUntaken",
          line: 9,
          column: 11,
          data: {
            lock: "the claim of taskFlag.exporting = true",
            acquireLine: "6",
            exitKind: "return",
            exitLine: "5",
            releaseLine: "9",
          },
        },
      ],
    },
    {
      // the take-over deletes only the row it judged stale, so the lock changes hands; the unlock by name frees
      // whoever holds it now
      name: "a lock document released by its name alone after a token-checked take-over",
      code: `module.exports = (app) => {
  const self = {};
  self.lock = async function (name, ttlMs) {
    const now = Date.now();
    try {
      const held = await self.locks.findOne({ _id: name });
      if (held && held.takenAt + held.ttlMs < now) await self.locks.deleteOne({ _id: name, token: held.token });
      await self.locks.insertOne({ _id: name, takenAt: now, ttlMs, token: app.newId() });
      return true;
    } catch (err) {
      if (err.code === 11000) return false;
      throw err;
    }
  };
  self.unlock = async function (name) {
    await self.locks.deleteOne({ _id: name });
  };
  self.init = async function () {
    self.locks = await app.db.collection("reportLocks");
  };
  return self;
};`,
      languageOptions: javascript,
      errors: [
        rowRelease(16, 11, {
          operation: "delete",
          lock: "lock row in reportLocks",
          acquireLine: 8,
          filter: "_id",
          expires: "is swept when stale",
          expiryLine: 7,
        }),
      ],
    },
    {
      // `giveUp(notification)` saves a parameter: the document is the module's Notification (named like it), and
      // its save clears the lease by _id alone after an if that sets retryAt either way
      name: "a lease cleared by saving a parameter document, past an if of its own writes",
      code: notificationLease("notification"),
      languageOptions: javascript,
      errors: [
        rowRelease(25, 9, {
          operation: "write",
          lock: "lease on Notification.leaseUntil",
          acquireLine: 5,
          filter: "_id",
          expires: "is taken over once leaseUntil has passed",
          expiryLine: 5,
        }),
      ],
    },
    {
      // a poller whose guard is checked inside the try: a caller that finds it busy clears it in finally
      code: UNTAKEN_GUARD,
      errors: [
        {
          messageId: "releasedUntaken",
          line: 5,
          column: 22,
          data: {
            lock: "the guard `this.busy`",
            acquireLine: "6",
            exitKind: "return",
            exitLine: "5",
            releaseLine: "11",
          },
        },
      ],
    },
    {
      // the same with a mutex: a caller that sees it locked releases it in finally
      code: UNTAKEN_MUTEX,
      errors: [
        {
          messageId: "releasedUntaken",
          line: 5,
          column: 27,
          data: { lock: "the mutex `mutex`", acquireLine: "6", exitKind: "return", exitLine: "5", releaseLine: "9" },
        },
      ],
    },
    {
      // the same lock kept for ten minutes: a send that outlasts it and then fails frees the next sender's lock
      code: noticeLock("10 * 60"),
      errors: [
        {
          messageId: "constantValue",
          line: 10,
          column: 17,
          data: { key: '"lock:notice:*"', acquireLine: "6", getLine: "", value: '"1"', command: "DEL" },
        },
      ],
    },
    {
      // a settings row used as a lock under a constant name, taken over once stale: the release by name alone frees
      // whoever took it over; the operator's forceUnlock is an override on purpose and is not reported
      code: KEYED_LOCK,
      // The take-over is decided at the JavaScript check (line 8), not at the upsert.
      errors: [
        rowRelease(14, 9, {
          operation: "delete",
          lock: "lock row weekly_digest_lock in appConfig",
          acquireLine: 10,
          filter: "its name (name)",
          expires: "is taken over once payload has passed",
          expiryLine: 8,
        }),
      ],
    },
    {
      // a task table (no lock word in its name) whose upsert takes a row only once its lockExpiresAt has passed is
      // a lock row; the module's table helper takes the knex instance, and the release deletes by task name alone
      code: `import type { Knex } from "knex";
const tables = { scheduledTasks: (db: Knex) => db(ScheduledTasks.name) };
export const acquire = ({ db }: { db: Knex }) => async (task: { taskName: string; lockExpiresAt: Date }) => {
  const [lock] = await tables.scheduledTasks(db).insert(task).onConflict("taskName").merge().where("lockExpiresAt", "<", new Date()).returning("*");
  return lock ?? null;
};
export const release = ({ db }: { db: Knex }) => async ({ taskName }: { taskName: string }) => {
  await tables.scheduledTasks(db).where({ taskName }).delete();
};`,
      errors: [
        rowRelease(8, 9, {
          operation: "delete",
          lock: "lock row in scheduledTasks",
          acquireLine: 4,
          filter: "taskName",
          expires: "is taken over once lockExpiresAt has passed",
          expiryLine: 4,
        }),
      ],
    },
    {
      // the same JSON lock, but the script decodes the value and deletes whatever the owner field says
      code: jsonLock(`
  local held = cjson.decode(redis.call("get", KEYS[1]) or "{}")
  if held then return redis.call("del", KEYS[1]) end
`),
      errors: [plainDelete(15, 17, releaseData("script", '"lock:conversation:*"', 11), [])],
    },
    {
      name: "a class's own release method: its flaw is the method's, reported once there and not at each call",
      code: `import Redis from "ioredis";
export class Rooms {
  constructor(redis) { this.redis = redis; }
  async lock(id) { return (await this.redis.set(\`room:\${id}:lock\`, "1", "EX", 5, "NX")) === "OK"; }
  async unlock(id) { await this.redis.del(\`room:\${id}:lock\`); }
  async join(id, seat) {
    if (!(await this.lock(id))) return;
    try { await seat(id); } finally { await this.unlock(id); }
  }
  async leave(id, unseat) {
    if (!(await this.lock(id))) return;
    try { await unseat(id); } finally { await this.unlock(id); }
  }
}`,
      errors: [constantValue(5, 39, releaseData("DEL", '"room:*:lock"', 4, undefined, '"1"'))],
    },
    {
      // an expiry through an app wrapper's own option is unknown, but the constant value and the plain DEL are not:
      // every instance stores "1", so a run that outlived the lock deletes the next run's
      code: `export class ExpireTask {
  constructor(private readonly redis: RedisService) {}
  async handle() {
    const got = await this.redis.set("lock:expire-holds", "1", { ttlSec: 55, nx: true });
    if (!got) return;
    try { await expireHolds(); } finally { await this.redis.del("lock:expire-holds"); }
  }
}`,
      errors: [constantValue(6, 61, releaseData("DEL", '"lock:expire-holds"', 4, undefined, '"1"'))],
    },
    {
      name: "acquired directly, released through a helper whose DEL pairs with nothing of its own: reported at the call, the helper named",
      code: `import Redis from "ioredis";
import { randomUUID } from "node:crypto";
const redis = new Redis();
async function dropKey(key) { await redis.del(key); }
export async function rebuild(id) {
  const token = randomUUID();
  if ((await redis.set(\`lock:rebuild:\${id}\`, token, "PX", 30000, "NX")) !== "OK") return;
  try { await work(id); } finally { await dropKey(\`lock:rebuild:\${id}\`); }
}`,
      errors: [plainDelete(8, 43, releaseData("DEL (through `dropKey`, line 4)", '"lock:rebuild:*"', 7), [])],
    },
    {
      // a Mongoose lease cleared by name alone: after an overrun, it clears the lease the next holder took
      code: mongooseLease("await Lease.updateOne({ name }, { leaseUntil: new Date(0) });"),
      languageOptions: javascript,
      errors: [
        rowRelease(16, 11, {
          operation: "write",
          lock: "lease on Lease.leaseUntil",
          acquireLine: 7,
          filter: "name",
          expires: "is taken over once leaseUntil has passed",
          expiryLine: 7,
        }),
      ],
    },
    {
      // a lock table in raw SQL through a plain query() helper, deleted by its key alone
      code: sqlLockTable('"DELETE FROM app_locks WHERE lock_key = $1"'),
      languageOptions: javascript,
      errors: [
        rowRelease(12, 9, {
          operation: "delete",
          lock: "lock row in app_locks",
          acquireLine: 4,
          filter: "lock_key",
          expires: "is taken over once expires_at has passed",
          expiryLine: 4,
        }),
      ],
    },
    {
      // a Mongoose schema plugin: the model is whichever \`this.model(modelName)\` names; \`locked\` says until when the
      // lease holds by what the claim stores in it (the clock plus a term), so setting it to the clock releases it
      code: `export function lockPlugin(schema, modelName) {
  schema.add({ locked: { type: Date, default: Date.now } });
  schema.methods.lock = function (duration, cb) {
    const now = new Date();
    this.model(modelName).findOneAndUpdate({ _id: this._id, locked: { $lte: now } }, { locked: new Date(now.getTime() + duration) }, { new: true }, cb);
  };
  schema.methods.release = function (cb) {
    this.model(modelName).findOneAndUpdate({ _id: this._id }, { locked: new Date() }, { new: true }, cb);
  };
}`,
      languageOptions: javascript,
      errors: [
        rowRelease(8, 5, {
          operation: "write",
          lock: "lease on modelName.locked",
          acquireLine: 5,
          filter: "_id",
          expires: "is taken over once locked has passed",
          expiryLine: 5,
        }),
      ],
    },
    {
      // a lock row whose sweeper lives in another module, named by a directive: it changes hands just the same
      code: `import { prisma } from "./db";
export async function withCronLock(name: string, work: () => Promise<void>) {
  try {
    // locks-recovered-by: ./lock-sweeper
    await prisma.cronLock.create({ data: { name, expiresAt: new Date(Date.now() + 60_000) } });
  } catch (e: any) {
    if (e.code === "P2002") return;
    throw e;
  }
  await work();
  await prisma.cronLock.deleteMany({ where: { name } });
}`,
      errors: [
        rowRelease(11, 9, {
          operation: "delete",
          lock: "lock row in cronLock",
          acquireLine: 5,
          filter: "name",
          expires: "is recovered in the module its directive names",
          expiryLine: 5,
        }),
      ],
    },
    {
      // a lock row with a sweeper: the sweep can hand the row to another holder while this one still works
      code: `import { prisma } from "./db";
export async function sweepLocks() {
  await prisma.cronLock.deleteMany({ where: { expiresAt: { lt: new Date() } } });
}
export async function withCronLock(name: string, work: () => Promise<void>) {
  try {
    await prisma.cronLock.create({ data: { name, owner: process.pid, expiresAt: new Date(Date.now() + 60_000) } });
  } catch (e: any) {
    if (e.code === "P2002") return;
    throw e;
  }
  try {
    await work();
  } finally {
    await prisma.cronLock.deleteMany({ where: { name } });
  }
}`,
      errors: [
        rowRelease(15, 11, {
          operation: "delete",
          lock: "lock row in cronLock",
          acquireLine: 7,
          filter: "name",
          expires: "is swept when stale",
          expiryLine: 3,
        }),
      ],
    },
    {
      // ioredis: DEL in finally after SET PX NX
      code: ioredisFinally,
      errors: [
        plainDelete(
          14,
          17,
          releaseData("DEL", '"lock:report:*"', 9),
          fixes("ioredis", ioredisFinally, "del(key)", "key", "token"),
        ),
      ],
    },
    {
      // ioredis in plain JS: released in a .then callback, token is a parameter
      code: ioredisThenJs,
      languageOptions: javascript,
      errors: [
        plainDelete(
          8,
          36,
          releaseData("DEL", '"mutex:*"', 6),
          fixes("ioredis", ioredisThenJs, "del(key)", "key", "token"),
        ),
      ],
    },
    {
      // class service: this.redis, this.token, constant key
      code: ioredisClass,
      errors: [
        plainDelete(
          15,
          22,
          releaseData("DEL", '"leader:scheduler"', 10),
          fixes("ioredis", ioredisClass, 'del("leader:scheduler")', '"leader:scheduler"', "this.token"),
        ),
      ],
    },
    {
      // UNLINK of a concatenated key
      code: ioredisUnlink,
      errors: [
        plainDelete(
          14,
          17,
          releaseData("DEL", '"lock:index:*"', 8),
          fixes("ioredis", ioredisUnlink, "unlink(lockKey)", "lockKey", "owner"),
        ),
      ],
    },
    {
      // DEL queued on a MULTI chain: reported at `del`
      code: ioredisMulti,
      // queued in a multi: a rewrite would have to be queued too, so none is offered
      errors: [plainDelete(12, 6, releaseData("DEL", '"lock:job:*"', 7), [])],
    },
    {
      // opaque key from a helper method, kept by its source text
      code: ioredisHelperKey,
      errors: [
        plainDelete(
          16,
          24,
          releaseData("DEL", "`this.lockKey(jobId)`", 11),
          fixes("ioredis", ioredisHelperKey, "del(this.lockKey(jobId))", "this.lockKey(jobId)", "token"),
        ),
      ],
    },
    {
      // token not visible at the release: no rewrite offered; opaque key
      code: `import Redis from "ioredis";
import { randomUUID } from "node:crypto";

const redis = new Redis();

export async function acquireLock(key: string): Promise<string | null> {
  const token = randomUUID();
  const ok = await redis.set(key, token, "PX", 10_000, "NX");
  return ok ? token : null;
}

export async function releaseLock(key: string): Promise<void> {
  await redis.del(key);
}`,
      errors: [plainDelete(13, 15, releaseData("DEL", "`key`", 8), [])],
    },
    {
      // a different variable that happens to be called token: no rewrite either
      code: `import Redis from "ioredis";

const redis = new Redis();

export async function acquire(resource: string) {
  const token = Math.random().toString(36).slice(2);
  await redis.set(\`lock:\${resource}\`, token, "NX", "PX", 8000);
  return token;
}

export async function release(resource: string, token: string) {
  await redis.del(\`lock:\${resource}\`);
}`,
      errors: [plainDelete(12, 15, releaseData("DEL", '"lock:*"', 7), [])],
    },
    {
      // SETNX of a constant, EXPIRE after, DEL in finally
      code: `import Redis from "ioredis";

const redis = new Redis();

export async function nightlyExport() {
  const key = "lock:nightly-export";
  const got = await redis.setnx(key, "1");
  if (!got) return;
  await redis.expire(key, 600);
  try {
    await exportEverything();
  } finally {
    await redis.del(key);
  }
}`,
      errors: [constantValue(13, 17, releaseData("DEL", '"lock:nightly-export"', 7, undefined, '"1"'))],
    },
    {
      // generic call("SET", …, "locked", "NX") and call("DEL", …)
      code: `import Redis from "ioredis";

const redis = new Redis();

export async function syncInventory(shopId: string) {
  const key = \`lock:sync:\${shopId}\`;
  const res = await redis.call("SET", key, "locked", "NX", "EX", 300);
  if (res !== "OK") return;
  try {
    await pullInventory(shopId);
  } finally {
    await redis.call("DEL", key);
  }
}`,
      errors: [constantValue(12, 17, releaseData("DEL", '"lock:sync:*"', 7, undefined, '"locked"'))],
    },
    {
      // GET, compare in JS, DEL
      code: `import Redis from "ioredis";

const redis = new Redis();

export async function releaseLock(key: string, token: string): Promise<boolean> {
  const current = await redis.get(key);
  if (current === token) {
    await redis.del(key);
    return true;
  }
  return false;
}

export async function acquireLock(key: string, token: string, ttlMs: number): Promise<boolean> {
  return (await redis.set(key, token, "PX", ttlMs, "NX")) === "OK";
}`,
      errors: [getCompareDelete(8, 17, releaseData("DEL", "`key`", 15, 6))],
    },
    {
      // the comparison made in a method of the class the check calls: still a GET, a compare, then a DEL
      code: GET_COMPARE_CLASS,
      errors: [
        getCompareDelete(
          13,
          44,
          releaseData("DEL", "`this.key`", 6, 9),
          fixes("ioredis", GET_COMPARE_CLASS, `del(this.key)`, `this.key`, `this.id`),
        ),
      ],
    },
    {
      // callback style on a prototype: the helper hands the comparison to its callback, bound with .bind(this);
      // comparing the key's value with the holder's id is what makes the key a lock here, whatever it is called
      code: GET_COMPARE_PROTOTYPE,
      languageOptions: javascript,
      errors: [
        getCompareDelete(
          13,
          29,
          releaseData("DEL", "`this.key`", 3, 6),
          fixes("ioredis", GET_COMPARE_PROTOTYPE, `del(this.key)`, `this.key`, `this.id`),
        ),
      ],
    },
    {
      // plain JS: the GET compared inline, early return
      code: `import Redis from "ioredis";

const redis = new Redis();

export async function unlockCron(name, token) {
  if ((await redis.get(\`cron:\${name}\`)) !== token) return false;
  await redis.del(\`cron:\${name}\`);
  return true;
}

export async function lockCron(name, token) {
  return redis.set(\`cron:\${name}\`, token, "NX", "PX", 60000);
}`,
      languageOptions: javascript,
      errors: [getCompareDelete(7, 15, releaseData("DEL", '"cron:*"', 12, 6))],
    },
    {
      // GET compared, then a MULTI DEL without WATCH
      code: `import Redis from "ioredis";

const redis = new Redis();

export async function release(key: string, token: string) {
  const current = await redis.get(key);
  if (current === token) await redis.multi().del(key).exec();
}

export async function acquire(key: string, token: string) {
  await redis.set(key, token, "NX", "EX", 30);
}`,
      errors: [getCompareDelete(7, 46, releaseData("DEL", "`key`", 11, 6))],
    },
    {
      // ioredis: a Lua script that deletes without comparing
      code: `import Redis from "ioredis";

const redis = new Redis();
const FORCE_UNLOCK = \`return redis.call("DEL", KEYS[1])\`;

export async function importFeed(feedId: string, token: string) {
  const key = \`lock:feed:\${feedId}\`;
  if ((await redis.set(key, token, "NX", "PX", 45_000)) === null) return;
  try {
    await readFeed(feedId);
  } finally {
    await redis.eval(FORCE_UNLOCK, 1, key);
  }
}`,
      errors: [plainDelete(12, 17, releaseData("script", '"lock:feed:*"', 8), [])],
    },
    {
      // plain JS class: GET timestamp, compare, SET (take-over), and a plain DEL in a pipeline
      code: `import Redis from "ioredis";

export class CronGuard {
  constructor(redis, ttlMs) {
    this.redis = redis;
    this.ttlMs = ttlMs;
  }

  async enter(name) {
    const key = \`cron:\${name}\`;
    const until = String(Date.now() + this.ttlMs);
    if (await this.redis.setnx(key, until)) return true;
    const stamp = await this.redis.get(key);
    if (Number(stamp) > Date.now()) return false;
    await this.redis.set(key, until);
    return true;
  }

  async leave(name) {
    await this.redis.pipeline().del(\`cron:\${name}\`).exec();
  }
}`,
      languageOptions: javascript,
      errors: [staleTakeover(15, 22, '"cron:*"', 12, 13), plainDelete(20, 33, releaseData("DEL", '"cron:*"', 12), [])],
    },
    {
      // node-redis v4: DEL in finally
      code: nodeRedisFinally,
      errors: [
        plainDelete(
          13,
          18,
          releaseData("DEL", '"lock:checkout:*"', 8),
          fixes("node-redis", nodeRedisFinally, "del(key)", "key", "token"),
        ),
      ],
    },
    {
      // node-redis v5 options, class service with this.client and this.token
      code: nodeRedisV5Class,
      errors: [
        plainDelete(
          18,
          23,
          releaseData("DEL", '"lock:report:*"', 10),
          fixes(
            "node-redis",
            nodeRedisV5Class,
            "del(`lock:report:${reportId}`)",
            "`lock:report:${reportId}`",
            "this.token",
          ),
        ),
      ],
    },
    {
      // node-redis in plain JS: .then, DEL in .finally
      code: nodeRedisThenJs,
      languageOptions: javascript,
      errors: [
        plainDelete(
          11,
          53,
          releaseData("DEL", '"lock:feed:*"', 8),
          fixes("node-redis", nodeRedisThenJs, "del(key)", "key", "token"),
        ),
      ],
    },
    {
      // node-redis setNX of a constant
      code: `import { createClient } from "redis";

const redis = createClient({ url: process.env.REDIS_URL });

export async function rotateKeys() {
  const claimed = await redis.setNX("lock:rotate-keys", "1");
  if (!claimed) return;
  await redis.expire("lock:rotate-keys", 900);
  await rotate();
  await redis.del("lock:rotate-keys");
}`,
      errors: [constantValue(10, 15, releaseData("DEL", '"lock:rotate-keys"', 6, undefined, '"1"'))],
    },
    {
      // node-redis: GET, compare, DEL
      code: `import { createClient } from "redis";

const client = createClient();

export async function leaseRelease(resource: string, holder: string) {
  const key = \`lease:\${resource}\`;
  const owner = await client.get(key);
  if (owner !== holder) return false;
  await client.del(key);
  return true;
}

export async function leaseAcquire(resource: string, holder: string) {
  return client.set(\`lease:\${resource}\`, holder, { NX: true, PX: 5000 });
}`,
      errors: [getCompareDelete(9, 16, releaseData("DEL", '"lease:*"', 14, 7))],
    },
    {
      // node-redis: eval of a deleting script without a compare
      code: `import { createClient } from "redis";

const client = createClient();

export async function sendDigest(userId: string, token: string) {
  const key = \`lock:digest:\${userId}\`;
  const ok = await client.set(key, token, { NX: true, EX: 120 });
  if (!ok) return;
  await deliverDigest(userId);
  await client.eval("return redis.call('UNLINK', KEYS[1])", { keys: [key] });
}`,
      errors: [plainDelete(10, 16, releaseData("script", '"lock:digest:*"', 7), [])],
    },
    {
      // node-redis generic sendCommand with a constant value
      code: `import { createClient } from "redis";

const client = createClient();

export async function compactLogs() {
  const key = "lock:compact-logs";
  const reply = await client.sendCommand(["SET", key, "locked", "NX", "EX", "600"]);
  if (reply !== "OK") return;
  try {
    await compact();
  } finally {
    await client.sendCommand(["DEL", key]);
  }
}`,
      errors: [constantValue(12, 18, releaseData("DEL", '"lock:compact-logs"', 7, undefined, '"locked"'))],
    },
    {
      // node-redis: GET the expiry stamp, compare, plain SET over it
      code: `import { createClient } from "redis";

const client = createClient();
const TTL = 30_000;

export async function tryLock(name: string): Promise<boolean> {
  const key = \`lock:\${name}\`;
  const expiresAt = String(Date.now() + TTL);
  if (await client.set(key, expiresAt, { NX: true })) return true;
  const current = await client.get(key);
  if (current !== null && Number(current) < Date.now()) {
    await client.set(key, expiresAt);
    return true;
  }
  return false;
}`,
      errors: [staleTakeover(12, 18, '"lock:*"', 9, 10)],
    },
    {
      // a field named like a flag but compared with the clock is a lease: resetting it to now releases it, and
      // does so by id alone (it is not a flag taken with a timestamp)
      name: "a lease kept in a flag-named date field, released to now by id",
      code: `export function leasePlugin(schema, modelName) {
  schema.methods.take = async function (ms) {
    const now = new Date();
    return this.model(modelName).findOneAndUpdate({ _id: this._id, locked: { $lte: now } }, { locked: new Date(now.getTime() + ms) }, { new: true });
  };
  schema.methods.give = async function () {
    return this.model(modelName).findOneAndUpdate({ _id: this._id }, { locked: new Date() }, { new: true });
  };
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "rowRelease",
          line: 7,
          column: 12,
          data: {
            operation: "write",
            lock: "lease on modelName.locked",
            acquireLine: "4",
            filter: "_id",
            expires: "is taken over once locked has passed",
            expiryLine: "4",
          },
          suggestions: [],
        },
      ],
    },
    {
      // the acquire sends on the client taken from the app's Redis service, the release through the service's own
      // del(): one client, so the constant-valued lock meets its release
      name: "a lock set on a service's client and deleted through the service",
      code: `export class LoansService {
  constructor(private readonly redisService: RedisService) {}
  private async acquireLock(key: string, ttlSeconds: number): Promise<boolean> {
    const redisClient = this.redisService.getClient();
    return (await redisClient.set(key, "1", "EX", ttlSeconds, "NX")) === "OK";
  }
  private async releaseLock(key: string): Promise<void> {
    await this.redisService.del(key);
  }
}`,
      errors: [constantValue(8, 29, releaseData("DEL", "`key`", 5, undefined, '"1"'))],
    },
    {
      // a GETSET whose replaced value nobody reads is a plain SET: two callers that both judged the lock stale both go on
      name: "a stale timestamp lock taken over with GETSET, its old value ignored",
      code: GETSET_TAKEOVER.replace(
        "      if (!timeout) return;\n      if (now < parseInt(timeout, 10)) return;\n",
        "      if (!timeout || now < parseInt(timeout, 10)) return;\n",
      ).replace(
        "      redis.getset(key, expiry, function (error, old) {\n        if (old !== timeout) return;\n        callback();\n      });",
        "      redis.getset(key, expiry);\n      callback();",
      ),
      languageOptions: javascript,
      errors: [staleTakeover(8, 13, "`key`", 4, 6)],
    },
    {
      // the same, the try-acquire tested where it is made: the throw leaves the try, and the finally deletes the key
      name: "a try-acquire tested in the if that throws when it failed, inside the try",
      code: LOSER_RELEASES.replace(
        'const got = await redis.set("nightly:lock", token, "EX", 600, "NX");\n    if (!got) return;',
        'if (!(await redis.set("nightly:lock", token, "EX", 600, "NX"))) {\n      throw new Error("busy");\n    }',
      ),
      errors: [
        {
          messageId: "releasedNotAcquired",
          line: 10,
          column: 11,
          data: {
            lock: "the lock `nightly:lock`",
            acquireLine: "5",
            exitKind: "throw",
            exitLine: "6",
            releaseLine: "10",
          },
        },
        plainDelete(
          10,
          17,
          releaseData("DEL", '"nightly:lock"', 5),
          fixes(
            "ioredis",
            LOSER_RELEASES.replace(
              'const got = await redis.set("nightly:lock", token, "EX", 600, "NX");\n    if (!got) return;',
              'if (!(await redis.set("nightly:lock", token, "EX", 600, "NX"))) {\n      throw new Error("busy");\n    }',
            ),
            'del("nightly:lock")',
            '"nightly:lock"',
            "token",
          ),
        ),
      ],
    },
    {
      // the caller that loses the race returns inside the try, and its finally deletes the winner's key at once
      name: "a try-acquire left early inside the try whose finally deletes the key",
      code: LOSER_RELEASES,
      errors: [
        {
          messageId: "releasedNotAcquired",
          line: 9,
          column: 11,
          data: {
            lock: "the lock `nightly:lock`",
            acquireLine: "5",
            exitKind: "return",
            exitLine: "6",
            releaseLine: "9",
          },
        },
        plainDelete(
          9,
          17,
          releaseData("DEL", '"nightly:lock"', 5),
          fixes("ioredis", LOSER_RELEASES, 'del("nightly:lock")', '"nightly:lock"', "token"),
        ),
      ],
    },
    {
      // a \`var\` that every assignment gives a new MULTI of the same client is that client's batch too (legacy
      // callback code): the lock's constant value is then seen at the client's own DEL
      name: "a lock taken in a MULTI held in a reassigned var, released by a DEL of its constant value",
      code: `var client = require("./redis-client");
function request(id, callback) {
  var multi = client.multi();
  multi.SETNX("sync:lease:" + id, true);
  multi.EXPIRE("sync:lease:" + id, 60);
  multi.exec(function (err, replies) {
    multi = client.multi();
    multi.SADD("sync:active", id);
    multi.exec(function () { callback(err, replies[0] === 1); });
  });
}
function release(id, callback) {
  client.DEL("sync:lease:" + id, callback);
}
module.exports = { request, release };`,
      languageOptions: javascript,
      errors: [constantValue(13, 10, releaseData("DEL", '"sync:lease:*"', 4, undefined, '"true"'))],
    },
    {
      // a MULTI held in a variable sends on the client it was made from: the DEL of the same key elsewhere is the
      // lock's release
      name: "a lock taken in a MULTI held in a variable, deleted by key",
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function lockRoom(id: string, token: string) {
  const tx = redis.multi();
  tx.set(\`room-lock:\${id}\`, token, "NX");
  tx.expire(\`room-lock:\${id}\`, 30);
  await tx.exec();
}
export async function unlockRoom(id: string) {
  await redis.del(\`room-lock:\${id}\`);
}`,
      // the token is not in scope at the release: no rewrite is offered
      errors: [plainDelete(10, 15, releaseData("DEL", '"room-lock:*"', 5), [])],
    },
    {
      // the SET is the acquire, checked in JavaScript: two callers that both read the key free both take it; the
      // release the lock hands back deletes by key alone (the GET before the acquire checks nothing at the release)
      name: "a lock taken by GET, a holder check and a plain SET, released by key",
      code: CHECKED_SET,
      errors: [checkedAcquire(7, 22, '"mutex:*"', 5), plainDelete(8, 43, releaseData("DEL", '"mutex:*"', 7), [])],
    },
    {
      // the old SETNX recipe, its value an expiry in seconds read back through a ternary and parseInt: two callers
      // that both see it passed both take the lock. The release is another function keyed by its own parameter:
      // its name says it unlocks (a generic `done(key)` would pair with nothing)
      code: `export async function enqueueOnce(redis: Redis, key: string, timeoutSec: number) {
  const now = Math.round(new Date().getTime() / 1000);
  const until = now + timeoutSec + 1;
  if (await redis.setnx(key, until)) {
    await redis.expire(key, timeoutSec);
    return true;
  }
  const stored = await redis.get(key);
  const storedUntil = stored ? parseInt(stored) : 0;
  if (now <= storedUntil) return false;
  await redis.set(key, until);
  await redis.expire(key, timeoutSec);
  return true;
}
export async function unlockEnqueue(redis: Redis, key: string) {
  await redis.del(key);
}`,
      errors: [staleTakeover(11, 15, "`key`", 4, 8), plainDelete(16, 15, releaseData("DEL", "`key`", 4), [])],
    },
    {
      // Upstash: DEL in finally, only the script rewrite (no DELEX)
      code: upstashFinally,
      errors: [
        plainDelete(
          12,
          17,
          releaseData("DEL", '"lock:*"', 7),
          fixes("upstash", upstashFinally, "del(key)", "key", "token"),
        ),
      ],
    },
    {
      // @vercel/kv in plain JS: .then chain, DEL in .finally
      code: vercelThenJs,
      languageOptions: javascript,
      errors: [
        plainDelete(
          8,
          23,
          releaseData("DEL", '"lock:publish:*"', 6),
          fixes("upstash", vercelThenJs, "del(key)", "key", "token"),
        ),
      ],
    },
    {
      // @vercel/kv: the constant true
      code: `import { kv } from "@vercel/kv";

export async function revalidateOnce(slug: string) {
  const key = \`lock:revalidate:\${slug}\`;
  const fresh = await kv.set(key, true, { nx: true, px: 60_000 });
  if (!fresh) return;
  await revalidate(slug);
  await kv.del(key);
}`,
      errors: [constantValue(8, 12, releaseData("DEL", '"lock:revalidate:*"', 5, undefined, '"true"'))],
    },
    {
      // Upstash class: GET, compare with this.owner, DEL
      code: GET_COMPARE_UPSTASH,
      errors: [
        getCompareDelete(
          12,
          49,
          releaseData("DEL", '"sync:*"', 7, 11),
          fixes("upstash", GET_COMPARE_UPSTASH, `del(\`sync:\${job}\`)`, `\`sync:\${job}\``, `this.owner`),
        ),
      ],
    },
    {
      // Upstash: a deleting script with no compare
      code: `import { Redis } from "@upstash/redis";

const redis = Redis.fromEnv();
const DROP = "redis.call('DEL', KEYS[1]) return 1";

export async function rebuild(token: string) {
  const ok = await redis.set("lock:rebuild", token, { nx: true, ex: 300 });
  if (ok !== "OK") return;
  await doRebuild();
  await redis.eval(DROP, ["lock:rebuild"], []);
}`,
      errors: [plainDelete(10, 15, releaseData("script", '"lock:rebuild"', 7), [])],
    },
    {
      // ioredis defineCommand whose script deletes without comparing
      code: `import Redis from "ioredis";

const redis = new Redis();
redis.defineCommand("forceUnlock", { numberOfKeys: 1, lua: 'return redis.call("DEL", KEYS[1])' });

export async function reindex(id: string, token: string) {
  const key = \`lock:reindex:\${id}\`;
  if (!(await redis.set(key, token, "NX", "PX", 60_000))) return;
  try {
    await doReindex(id);
  } finally {
    await redis.forceUnlock(key);
  }
}`,
      errors: [plainDelete(12, 17, releaseData("script", '"lock:reindex:*"', 8), [])],
    },
    {
      // a WATCH of some other key does not make the MULTI DEL owner-checked
      code: ioredisWatchOther,
      // queued in a multi: a rewrite would have to be queued too, so none is offered
      errors: [plainDelete(9, 23, releaseData("DEL", '"lock:*"', 7), [])],
    },
    {
      // plain JS: the GET compared in a conditional expression
      code: `import Redis from "ioredis";

const redis = new Redis();

export const unlock = async (key, token) => {
  const current = await redis.get(key);
  return current === token ? redis.del(key) : 0;
};

export const lock = (key, token) => redis.set(key, token, "NX", "PX", 3000);`,
      languageOptions: javascript,
      errors: [getCompareDelete(7, 36, releaseData("DEL", "`key`", 10, 6))],
    },
  ],
});

// The suggestion for a lock row released by its key alone (issue 18): the owner column the claim wrote, pinned to
// the same binding, added to the release's filter in the store's syntax; none where the release cannot name it.
const OWNED_ROW = (release: string, owner = "const OWNER = `${process.pid}`;\n") => `import type { Knex } from "knex";
${owner}
export const acquire = (db: Knex) => async (taskName: string) => {
  const [lock] = await db("scheduled_tasks").insert({ taskName, owner: OWNER, lockExpiresAt: new Date(Date.now() + 60_000) }).onConflict("taskName").merge().where("lockExpiresAt", "<", new Date()).returning("*");
  return lock ?? null;
};
export const release = (db: Knex) => async (taskName: string) => {
  await db("scheduled_tasks").where({ ${release} }).delete();
};`;

ruleTester.run("owner-checked-release (row suggestion)", rule, {
  valid: [OWNED_ROW("taskName, owner: OWNER")],
  invalid: [
    {
      code: OWNED_ROW("taskName"),
      errors: [
        {
          messageId: "rowRelease",
          line: 9,
          // knex's own syntax for the added condition
          suggestions: [
            {
              messageId: "useOwner",
              data: { field: "owner", token: "OWNER" },
              output: OWNED_ROW("taskName").replace(
                ".where({ taskName }).delete()",
                '.where({ taskName }).where("owner", OWNER).delete()',
              ),
            },
          ],
        },
      ],
    },
    {
      // the owner is a parameter of the acquire: the release cannot name it, no edit
      code: OWNED_ROW("taskName", "").replace(
        "async (taskName: string) => {\n  const [lock]",
        "async (taskName: string, OWNER: string) => {\n  const [lock]",
      ),
      errors: [{ messageId: "rowRelease", line: 8, suggestions: [] }],
    },
  ],
});

/** A cache filled on a miss: deleted by key, or after comparing with a constant, never after comparing a holder. */
const CACHE_FILL = `import Redis from "ioredis";
const redis = new Redis();
export async function profile(userId: string) {
  const key = \`profile:\${userId}\`;
  const cached = await redis.get(key);
  if (!cached) {
    const fresh = JSON.stringify(await loadProfile(userId));
    await redis.setex(key, 300, fresh);
    return fresh;
  }
  return cached;
}
export async function forget(userId: string) {
  const key = \`profile:\${userId}\`;
  const cached = await redis.get(key);
  if (cached === "tombstone") await redis.del(key);
}
export async function invalidate(userId: string) {
  await redis.del(\`profile:\${userId}\`);
}`;

ruleTester.run("owner-checked-release (a key taken where a GET found it empty)", rule, {
  valid: [
    // no release compares a holder: the key is a cache entry, whatever fills it on a miss
    CACHE_FILL,
    // the same seat handlers without the release: nothing says the key has an owner
    SEAT_HOLD.slice(0, SEAT_HOLD.indexOf('router.post("/seats/release"')),
  ],
  invalid: [
    {
      // the release compares the value with the caller's ticket: the key has an owner, so the SET that took it
      // after finding it empty is the acquire, and two callers that both read it empty both hold the seat
      code: SEAT_HOLD,
      errors: [
        checkedAcquire(15, 15, "`req.body.seat`", 9),
        getCompareDelete(21, 38, releaseData("DEL", "`req.body.seat`", 15, 20)),
      ],
    },
  ],
});

// A lock row whose acquire fills a column with a value of its own (here `acquiredBy`, a name no vocabulary lists):
// a release pinned to that column beside the key frees only this acquisition's row, whatever the column is called.
const SELF_STAMPED_ROW = (holderValue: string, releaseFilter: string) => `import { randomUUID } from "node:crypto";
import { prisma } from "./db";

export async function takeMutex(name: string, ttlMs: number): Promise<string | null> {
  const me = randomUUID();
  const until = new Date(Date.now() + ttlMs);
  try {
    await prisma.mutex.create({ data: { name, acquiredBy: ${holderValue}, expiresAt: until } });
    return me;
  } catch {
    const row = await prisma.mutex.findUnique({ where: { name } });
    if (row && row.expiresAt < new Date()) {
      await prisma.mutex.update({ where: { name }, data: { acquiredBy: ${holderValue}, expiresAt: until } });
      return me;
    }
    return null;
  }
}

export async function giveMutex(name: string, me: string): Promise<void> {
  await prisma.mutex.deleteMany({ where: { ${releaseFilter} } });
}
`;

/** The release of SELF_STAMPED_ROW reported, filtered by `filter`. */
const mutexRelease = (filter: string) =>
  rowRelease(21, 9, {
    operation: "delete",
    lock: "lock row in mutex",
    acquireLine: 8,
    filter,
    expires: "is swept when stale",
    expiryLine: 13,
  });

ruleTester.run("owner-checked-release (a column the acquire fills with its own value)", rule, {
  valid: [
    { name: "released by key and the holder's own random value", code: SELF_STAMPED_ROW("me", "name, acquiredBy: me") },
  ],
  invalid: [
    {
      name: "released by the key alone: the lock row changes hands once stale",
      code: SELF_STAMPED_ROW("me", "name"),
      errors: [mutexRelease("name")],
    },
    {
      name: "the column holds a constant: every caller writes the same value, so pinning it checks nothing",
      code: SELF_STAMPED_ROW('"cron"', 'name, acquiredBy: "cron"'),
      errors: [mutexRelease("name")],
    },
    {
      name: "the column holds a value made once per process: two overlapping runs of the process both match it",
      code: SELF_STAMPED_ROW("INSTANCE_ID", "name, acquiredBy: INSTANCE_ID").replace(
        'import { prisma } from "./db";',
        'import { prisma } from "./db";\nconst INSTANCE_ID = randomUUID();',
      ),
      errors: [
        // paired with the take-over (the lease it stamps), the first of the two acquires whose owner is not its own
        rowRelease(22, 9, {
          operation: "delete",
          lock: "lease on mutex.expiresAt",
          acquireLine: 14,
          filter: "name and acquiredBy",
          expires: "is taken over once expiresAt has passed",
          expiryLine: 13,
        }),
      ],
    },
    {
      name: "the column holds the lock's key again: every caller of that lock writes the same value",
      code: SELF_STAMPED_ROW("name", "name, acquiredBy: name"),
      errors: [mutexRelease("name and acquiredBy")],
    },
  ],
});

/** A PostgREST lease on a pre-made row: taken where `lease_until` has passed, ended by writing `release`. */
const POSTGREST_LEASE = (
  release: string,
  releaseFilter: string,
) => `import { createClient } from "@supabase/supabase-js";

const db = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);

export async function takeLease(job: string, seconds: number): Promise<string | undefined> {
  const until = new Date(Date.now() + seconds * 1000).toISOString();
  const { data } = await db
    .from("job_leases")
    .update({ lease_until: until })
    .eq("job", job)
    .lt("lease_until", new Date().toISOString())
    .select("job");
  return (data ?? []).length > 0 ? until : undefined;
}

export async function endLease(job: string, until: string): Promise<void> {
  await db.from("job_leases").update({ lease_until: ${release} })${releaseFilter};
}
`;

/** A Mongoose lock document upserted where it is unlocked or expired; the duplicate `_id` says "held". */
const MONGO_UPSERT_GATE = (releaseFilter: string) => `import { Schema, model } from "mongoose";

const Gate = model("Gate", new Schema({ _id: String, locked: Boolean, owner: String, until: Date }));

export async function enter(name: string, owner: string, ms: number): Promise<boolean> {
  const now = new Date();
  try {
    await Gate.updateOne(
      { _id: name, $or: [{ locked: false }, { until: { $lt: now } }] },
      { $set: { locked: true, owner, until: new Date(now.getTime() + ms) } },
      { upsert: true },
    );
    return true;
  } catch (err: any) {
    if (err.code === 11000) return false;
    throw err;
  }
}

export async function leave(name: string, owner: string): Promise<void> {
  await Gate.updateOne(${releaseFilter}, { $set: { locked: false, until: null } });
}
`;

/** A Firestore document taken in a transaction once its expiry (the clock read once, into a const) has passed. */
const FIRESTORE_RUNNER = (path: string) => `import { getFirestore } from "firebase-admin/firestore";

const db = getFirestore();

export async function claimNightly(ttlMs: number): Promise<boolean> {
  const ref = db.doc("${path}");
  const t = Date.now();
  try {
    await db.runTransaction(async (tx) => {
      const snap = await tx.get(ref);
      const held = snap.exists ? snap.data() : undefined;
      if (held && held.expiresAt > t) throw new Error("busy");
      tx.set(ref, { holder: "nightly", expiresAt: t + ttlMs, checkedAt: t });
    });
    return true;
  } catch {
    return false;
  }
}

export async function releaseNightly(): Promise<void> {
  await db.doc("${path}").delete();
}
`;

ruleTester.run(
  "owner-checked-release (leases ended by a past instant, a compare-and-set upsert, a clock const)",
  rule,
  {
    valid: [
      {
        name: "the lease is ended only where it still holds the instant this holder stamped",
        code: POSTGREST_LEASE("new Date(0).toISOString()", '.eq("job", job).eq("lease_until", until)'),
      },
      {
        name: "a write of an instant still to come extends the lease; it frees nothing",
        code: POSTGREST_LEASE('new Date("2999-12-31").toISOString()', '.eq("job", job)'),
      },
      {
        name: "the gate is left only where this caller's owner value is still on it",
        code: MONGO_UPSERT_GATE("{ _id: name, owner }"),
      },
      {
        name: "a cooldown document (no lock in its name or its columns) is no lock, whatever deletes it",
        code: FIRESTORE_RUNNER("meta/cooldown"),
      },
    ],
    invalid: [
      {
        name: "the epoch written by the job's name alone ends whatever lease the row holds now",
        code: POSTGREST_LEASE("new Date(0).toISOString()", '.eq("job", job)'),
        errors: [
          rowRelease(17, 9, {
            operation: "write",
            lock: "lease on job_leases.lease_until",
            acquireLine: 7,
            filter: "job",
            expires: "is taken over once lease_until has passed",
            expiryLine: 7,
          }),
        ],
      },
      {
        name: "an upsert that takes the gate where it is unlocked or expired; left by its _id alone",
        code: MONGO_UPSERT_GATE("{ _id: name }"),
        errors: [
          rowRelease(21, 9, {
            operation: "write",
            lock: "lock row in Gate",
            acquireLine: 8,
            filter: "_id",
            expires: "is taken over once until has passed",
            expiryLine: 8,
          }),
        ],
      },
      {
        name: "a lock document whose expiry is built from a clock const, deleted by its path alone",
        code: FIRESTORE_RUNNER("locks/nightly"),
        errors: [
          rowRelease(22, 9, {
            operation: "delete",
            lock: "lease on locks.expiresAt",
            acquireLine: 13,
            filter: "id",
            expires: "is taken over once expiresAt has passed",
            expiryLine: 13,
          }),
        ],
      },
    ],
  },
);

/**
 * A lock object (blind-9): its release reads the key and deletes only on this holder's token, and does nothing when
 * it never took the lock; the caller leaves the try on a failed acquire and the finally calls the release.
 */
const COMPARED_RELEASE = `import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

export class ReportLock {
  private token = randomUUID();
  private held = false;

  constructor(private readonly redis: Redis, private readonly key: string) {}

  async acquire(): Promise<boolean> {
    this.held = (await this.redis.set(this.key, this.token, "EX", 60, "NX")) === "OK";
    return this.held;
  }

  async release(): Promise<void> {
    if (!this.held) return;
    const current = await this.redis.get(this.key);
    if (current === this.token) await this.redis.del(this.key);
    this.held = false;
  }
}

export async function buildReport(redis: Redis, id: string, build: () => Promise<void>) {
  const lock = new ReportLock(redis, \`report:\${id}:lock\`);
  try {
    if (!(await lock.acquire())) throw new Error("report is being built");
    await build();
  } finally {
    await lock.release();
  }
}
`;
const PLAIN_RELEASE = swap(
  COMPARED_RELEASE,
  "if (current === this.token) await this.redis.del(this.key);",
  "await this.redis.del(this.key);",
);

ruleTester.run("owner-checked-release (a caller that never took the key, released by a compare)", rule, {
  valid: [],
  invalid: [
    {
      name: "GET then DEL is a race of its own, but a caller that never took the key reads another token and deletes nothing",
      code: COMPARED_RELEASE,
      errors: [
        getCompareDelete(
          18,
          50,
          releaseData("DEL", "`this.key`", 11, 17),
          fixes("ioredis", COMPARED_RELEASE, "del(this.key)", "this.key", "this.token"),
        ),
      ],
    },
    {
      name: "the same release by key alone: the caller that lost the race deletes the winner's key in its finally",
      code: PLAIN_RELEASE,
      errors: [
        plainDelete(
          18,
          22,
          releaseData("DEL", "`this.key`", 11),
          fixes("ioredis", PLAIN_RELEASE, "del(this.key)", "this.key", "this.token"),
        ),
        {
          messageId: "releasedNotAcquired",
          line: 29,
          column: 11,
          data: {
            lock: "the lock `this.key`",
            acquireLine: "26",
            exitKind: "throw",
            exitLine: "26",
            releaseLine: "29",
          },
        },
      ],
    },
  ],
});
