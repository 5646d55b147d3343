// Real code of the crash run before blind-15's first sight, and of blind-15 itself (issue 35), read by what it does,
// in our words:
// - a sweep that picks stuck runs by their start time and then writes each one with the claimed state in its filter:
//   a run that finishes in between no longer matches, and a live one never moves the time judged, so the earlier
//   reading still holds at the write (its Q2 finding stays, at the age test); judged by a time the holder moves, the
//   write is still racy, and the message says the state is pinned and only the age is missing;
// - a start bounded from above beside an end bounded from below (`start < $end AND end > $start`): two intervals that
//   overlap (a booking that clashes), not rows left behind by age;
// - a promise kept for every later caller in a slot that lives with the process (a module variable, a property of
//   `global` or of an object a module variable holds), filled when empty with a connection, a client or an
//   initialisation, and never emptied: a one-key in-flight table whose rejection every later caller is handed
//   (blind-12 E12e08, blind-13 E13e13, blind-14 E14e09). Quiet where anything empties the slot, where a rejection
//   handler is chained on the promise stored, where the process ends on the rejection, for teardowns (`closing`),
//   module imports, instance fields and closures (their lifetime is unknown), pages, tests and scripts;
// - a pool the lock's function closes in its `finally` (`await prisma.$disconnect()`): every connection of it ends
//   there, and its session locks with them, whichever connection the unlock reached;
// - a row of another table locked by identity first in a transaction (`SELECT id FROM users WHERE id = $1 FOR
//   UPDATE`): a mutex like an advisory lock, so a check and a claim made under it are one step for its callers;
// - a cache of promises that evicts a failure in a `catch` ("don't cache a failed load"): the entry is kept once the
//   work succeeds, so it is no hold, and a rejection leaves nothing behind (from the crash run);
// - a state whose -ING word follows a word that says the work ended (`INVALID_FORMATTING`, `FAILED_PROCESSING`): the
//   work stopped there, nobody holds it;
// - a key-value lock the module keeps alive with a renewal of the same key (a leader's lease): held past its function
//   by design, so no release is asked of the function that takes it;
// - `pg_advisory_xact_lock` sent on its own through a pool or a handle that opens transactions, outside any
//   transaction: released with its own statement, it excludes nothing; quiet in a transaction, for a client handed
//   in, with options that name the transaction, and for a statement returned unsent;
// - a key released by key alone in the `catch` of the `try` that takes it, after work that may throw before the
//   acquire (a body that fails to parse): that caller never held it and deletes another's lock; a release the catch
//   makes under a test of the acquire's result stays quiet. A release in a `try`'s block followed by its `return` is
//   on the way the work goes, not a branch that leaves early;
// - a guard cleared only by a callback handed to a function of the module, which calls it after its awaits and
//   outside any `catch` or `finally`: a rejection skips it and the guard stays set; reported at the call that hands
//   it over;
// - a lock key written by a command that never refuses (SETEX, SET without NX), whose result is then tested as a
//   try-acquire's: every caller goes on as the holder; the same write with NX is a lock;
// - MySQL's named locks (GET_LOCK, RELEASE_LOCK, `DO RELEASE_LOCK(?)`) through a pool, as PostgreSQL's advisory
//   locks are; on one connection taken from the pool they are held and released there;
// - a promise chain kept as a queue (per key in a module `Map`, or in a module variable), each call chained on the link
//   before it with `.then` or `.finally` and nothing handling a rejection: one rejection is every later call's;
//   quiet where a link handles rejections, where the work catches everything it does, and for chains whose lifetime
//   is unknown (a function's variable, an instance field);
// - a state a read judges stuck by the age of a lock's stamp (`{ status: "active", lockedAt: { lt: cutoff } }`): rows
//   in it have a holder, whatever the state is called (an age of `updatedAt` says nothing of one).
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import atomicClaim from "../../rules/atomic-claim.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import { ruleTester } from "../rule-tester.js";

/** A repair job: runs stuck in `running` for half an hour are failed one by one, each with the state re-checked. */
const REPAIR = (ageField: string) => `const cutoff = new Date(Date.now() - 30 * 60_000);
export async function repairStaleRuns() {
  const stale = await prisma.exportRun.findMany({
    where: { status: "running", ${ageField}: { lt: cutoff } },
  });
  for (const run of stale) {
    await prisma.exportRun.updateMany({
      where: { id: run.id, status: "running" },
      data: { status: "failed", finishedAt: new Date() },
    });
  }
}
`;

/** A room's clash check: bookings still busy whose time overlaps the one asked for. */
const CLASH = `import { and, eq, gt, inArray, lt, ne } from "drizzle-orm";
const BUSY = ["booked", "checked_in", "in_progress"] as const;
export async function findClash(args: { roomId: string; startTime: Date; endTime: Date; skipId?: string }) {
  const [clash] = await db
    .select({ id: bookings.id })
    .from(bookings)
    .where(
      and(
        eq(bookings.roomId, args.roomId),
        inArray(bookings.status, BUSY),
        lt(bookings.startTime, args.endTime),
        gt(bookings.endTime, args.startTime),
        args.skipId ? ne(bookings.id, args.skipId) : undefined,
      ),
    )
    .limit(1);
  return clash ?? null;
}
`;

ruleTester.run("conditional-recovery (a sweep that re-checks the state)", conditionalRecovery, {
  valid: [{ name: "judged by the start time, the state re-checked at the write", code: REPAIR("startedAt") }],
  invalid: [
    {
      name: "judged by a time the holder moves: the age is missing, and the message says the state is pinned",
      code: REPAIR("heartbeatAt"),
      errors: [
        {
          messageId: "sweepCheckInJsPinned",
          line: 7,
          data: {
            model: "exportRun",
            field: "status",
            value: "running",
            checkedWhere: "with a separate read",
            checkLine: "3",
            rowFilter: "id",
          },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness (intervals that overlap)", progressBasedStaleness, {
  valid: [{ name: "a booking clash is two intervals, not an age", code: CLASH }],
  invalid: [
    {
      name: "the repair job's start-time test is still Q2's",
      code: REPAIR("startedAt"),
      errors: [
        {
          messageId: "startTimeScan",
          line: 4,
          data: {
            model: "exportRun",
            field: "status",
            value: "running",
            timeField: "startedAt",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});

/** A module's database client, connected on first use and handed to every caller. */
const CLIENT_MEMO = (fill: string) => `import { MongoClient } from "mongodb";
const client = new MongoClient(process.env.MONGO_URL!);
let clientPromise: Promise<MongoClient> | null = null;
export function getClient() {
  if (!clientPromise) {
    clientPromise = ${fill};
  }
  return clientPromise;
}
`;

/** The global cache of a serverless connection, kept across hot reloads. */
const GLOBAL_CACHE = `const mongoose = require("mongoose");
let cached = global._mongo;
if (!cached) cached = global._mongo = { conn: null, promise: null };
module.exports = async function connectDb(uri) {
  if (cached.conn) return cached.conn;
  if (!cached.promise) {
    cached.promise = mongoose.connect(uri).then((m) => m);
  }
  cached.conn = await cached.promise;
  return cached.conn;
};
`;

ruleTester.run("release-in-finally (promise memos)", releaseInFinally, {
  valid: [
    {
      name: "a rejection handler on the promise stored empties the slot",
      code: CLIENT_MEMO(`client.connect().catch((error) => {
      clientPromise = null;
      throw error;
    })`),
    },
    {
      name: "a catch around the await empties the slot",
      code: `let ready: Promise<void> | undefined;
export async function ensureSchema() {
  ready ??= db.initialize();
  try {
    await ready;
  } catch (error) {
    ready = undefined;
    throw error;
  }
}
`,
    },
    {
      name: "the process ends when the initialisation rejects",
      code: `let initPromise: Promise<void>;
export async function init() {
  if (!initPromise) initPromise = connectAll();
  try {
    await initPromise;
  } catch (err) {
    logger.error(err);
    process.exit(1);
  }
}
`,
    },
    {
      name: "a teardown kept for every caller of close()",
      code: `let closing: Promise<void> | undefined;
export function closePool() {
  closing ??= pool.end();
  return closing;
}
`,
    },
    {
      name: "a module import fails again however often it is retried",
      code: `let driverPromise: Promise<typeof import("pg")> | undefined;
export function loadDriver() {
  if (!driverPromise) driverPromise = import("pg");
  return driverPromise;
}
`,
    },
    {
      name: "an instance field lives as long as its object, which may be one per request",
      code: `export class Session {
  private connecting?: Promise<void>;
  ready() {
    if (!this.connecting) this.connecting = this.client.connect();
    return this.connecting;
  }
}
`,
    },
    {
      name: "a memo of a value nothing depends on (a price list) may be meant to be kept",
      code: `let pricesPromise: Promise<Price[]> | undefined;
export function prices() {
  if (!pricesPromise) pricesPromise = fetch(PRICES_URL).then((r) => r.json());
  return pricesPromise;
}
`,
    },
    {
      name: "a page reloads: code that names the document",
      code: `let sdkPromise: Promise<void> | undefined;
export function loadSdk() {
  if (!sdkPromise) sdkPromise = injectClient(document.head);
  return sdkPromise;
}
`,
    },
    { name: "a test run's setup", filename: "test/setup-tests.ts", code: CLIENT_MEMO("client.connect()") },
  ],
  invalid: [
    {
      name: "a connection kept for every caller, never emptied",
      code: CLIENT_MEMO("client.connect()"),
      errors: [
        {
          messageId: "memoKeepsRejection",
          line: 6,
          data: { slot: "clientPromise" },
          suggestions: [
            {
              messageId: "clearOnRejection",
              data: { slot: "clientPromise" },
              output: CLIENT_MEMO(`client.connect().catch((error) => {
      clientPromise = null;
      throw error;
    })`),
            },
          ],
        },
      ],
    },
    {
      name: "an initialisation filled with ??=",
      code: `let ready: Promise<void> | undefined;
export async function ensureSchema() {
  ready ??= db.initialize();
  await ready;
}
`,
      errors: [
        {
          messageId: "memoKeepsRejection",
          line: 3,
          data: { slot: "ready" },
          suggestions: [
            {
              messageId: "clearOnRejection",
              data: { slot: "ready" },
              output: `let ready: Promise<void> | undefined;
export async function ensureSchema() {
  ready ??= db.initialize().catch((error) => {
    ready = undefined;
    throw error;
  });
  await ready;
}
`,
            },
          ],
        },
      ],
    },
    {
      name: "a property of an object the module keeps on global",
      code: GLOBAL_CACHE,
      errors: [
        {
          messageId: "memoKeepsRejection",
          line: 7,
          data: { slot: "cached.promise" },
          suggestions: [
            {
              messageId: "clearOnRejection",
              data: { slot: "cached.promise" },
              output: GLOBAL_CACHE.replace(
                "mongoose.connect(uri).then((m) => m);",
                `mongoose.connect(uri).then((m) => m).catch((error) => {
      cached.promise = null;
      throw error;
    });`,
              ),
            },
          ],
        },
      ],
    },
  ],
});

/** A one-shot program that probes a migration lock through the ORM's pool and disconnects at the end. */
const PROBE = (last: string) => `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
async function clearStaleLock() {
  try {
    const rows = await prisma.$queryRaw<Array<{ free: boolean }>>\`SELECT pg_try_advisory_lock(4242) AS free\`;
    if (rows[0]?.free) {
      await prisma.$executeRawUnsafe(\`SELECT pg_advisory_unlock(4242)\`);
    }
  } finally {
    ${last}
  }
}
clearStaleLock().then(() => process.exit(0));
`;

ruleTester.run("release-in-finally (a pool closed with the work)", releaseInFinally, {
  valid: [{ name: "the pool is disconnected in the finally", code: PROBE("await prisma.$disconnect();") }],
  invalid: [
    {
      name: "the same probe that leaves the pool open",
      code: PROBE('console.log("checked");'),
      errors: [
        { messageId: "advisoryOnPool", line: 5, data: { client: "prisma" } },
        { messageId: "advisoryUnlockOnPool", line: 7, data: { client: "prisma", acquireLine: "5" } },
      ],
    },
  ],
});

/** An activation claimed per user, checked and written in one transaction, and unstuck by age. */
const ACTIVATION = (lock: string) => `export async function claimActivation(userId: string, itemId: string) {
  return prisma.$transaction(async (tx) => {
    ${lock}
    const item = await tx.activationItem.findFirst({ where: { id: itemId, userId } });
    if (!item || item.status === "ACTIVATING") return false;
    await tx.activationItem.update({ where: { id: item.id }, data: { status: "ACTIVATING" } });
    return true;
  });
}
export async function unstickActivations() {
  const cutoff = new Date(Date.now() - 15 * 60_000);
  await prisma.activationItem.updateMany({
    where: { status: "ACTIVATING", updatedAt: { lt: cutoff } },
    data: { status: "READY" },
  });
}
`;

ruleTester.run("atomic-claim (a row locked as a mutex)", atomicClaim, {
  valid: [
    {
      name: "the user's row is locked first: callers check and claim one after another",
      code: ACTIVATION('await tx.$queryRaw`SELECT "id" FROM "users" WHERE "id" = ${userId} FOR UPDATE`;'),
    },
  ],
  invalid: [
    {
      name: "without the lock, two callers both see the item free",
      code: ACTIVATION("// no lock"),
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          data: {
            model: "activationItem",
            field: "status",
            value: "ACTIVATING",
            checkedWhere: "in JavaScript",
            checkLine: "5",
          },
          suggestions: [
            {
              messageId: "addCondition",
              output: ACTIVATION("// no lock").replace(
                "where: { id: item.id }, data",
                'where: { id: item.id, status: { not: "ACTIVATING" } }, data',
              ),
            },
          ],
        },
      ],
    },
  ],
});

/** A reaper of jobs stuck in "active", judged by a time field given as a parameter. */
const REAPER = (age: string) => `const STUCK_MS = 5 * 60_000;
export async function reapStuckJobs() {
  const cutoff = new Date(Date.now() - STUCK_MS);
  const stuck = await prisma.job.findMany({ where: { status: "active", ${age}: { lt: cutoff } } });
  for (const job of stuck) {
    await prisma.job.update({ where: { id: job.id }, data: { status: "queued", lockedAt: null, lockedBy: null } });
  }
}
`;

ruleTester.run("conditional-recovery (a state judged stuck by a lock's stamp)", conditionalRecovery, {
  valid: [
    { name: "an age of updatedAt says nothing of a holder: `active` keeps its meaning", code: REAPER("updatedAt") },
  ],
  invalid: [
    {
      name: "rows judged by lockedAt have a holder: the reset by id races with it",
      code: REAPER("lockedAt"),
      errors: [
        {
          messageId: "sweepCheckInJs",
          line: 6,
          data: {
            model: "job",
            field: "status",
            value: "active",
            checkedWhere: "with a separate read",
            checkLine: "4",
            rowFilter: "id",
          },
        },
      ],
    },
  ],
});

/** A cache of parsed files that drops a failed parse so that the next call retries it. */
const PARSE_CACHE = (onFailure: string) => `const parsed = new Map<string, Promise<Set<string>>>();
export async function parseOnce(url: string): Promise<Set<string>> {
  const cached = parsed.get(url);
  if (cached) return cached;
  const promise = parseRemote(url);
  parsed.set(url, promise);
  try {
    return await promise;
  } ${onFailure}
}
`;

ruleTester.run("release-in-finally (a cache that evicts failures)", releaseInFinally, {
  valid: [
    {
      name: "the failed entry is deleted in the catch, the parsed one kept",
      code: PARSE_CACHE(`catch (error) {
    parsed.delete(url);
    throw error;
  }`),
    },
  ],
  invalid: [
    {
      name: "deleted after the await, not in a catch: the entry is work in flight, and a rejection keeps it",
      code: `const inFlight = new Map<string, Promise<Set<string>>>();
export async function parseShared(url: string): Promise<Set<string>> {
  const running = inFlight.get(url);
  if (running) return await running;
  const promise = parseRemote(url);
  inFlight.set(url, promise);
  const result = await promise;
  inFlight.delete(url);
  return result;
}
`,
      errors: [
        {
          messageId: "missedOnRejection",
          line: 6,
          data: {
            lock: "the entry this call adds to `inFlight`",
            exitLine: "7",
            releaseLine: "8",
            consequence:
              "the rejected promise stays in `inFlight`, and every later call for the key gets it instead of trying again, until the process restarts.",
            hint: "",
          },
          suggestions: [
            {
              messageId: "moveToFinally",
              output: `const inFlight = new Map<string, Promise<Set<string>>>();
export async function parseShared(url: string): Promise<Set<string>> {
  const running = inFlight.get(url);
  if (running) return await running;
  const promise = parseRemote(url);
  inFlight.set(url, promise);
  try {
    const result = await promise;
    return result;
  } finally {
    inFlight.delete(url);
  }
}
`,
            },
          ],
        },
      ],
    },
  ],
});

/** A status moved to `value` only where it is not already. */
const MARK = (value: string) => `export async function mark(id: string) {
  const { count } = await prisma.outboundMessage.updateMany({
    where: { id, status: { not: "${value}" } },
    data: { status: "${value}" },
  });
  return count === 1;
}
`;

ruleTester.run("require-stale-recovery (a state that says the work ended)", requireStaleRecovery, {
  valid: [
    { name: "INVALID_FORMATTING: the formatting failed", code: MARK("INVALID_FORMATTING") },
    { name: "FAILED_PROCESSING: the processing failed", code: MARK("FAILED_PROCESSING") },
  ],
  invalid: [
    {
      name: "FORMATTING alone is work under way",
      code: MARK("FORMATTING"),
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          data: { model: "outboundMessage", field: "status", value: "FORMATTING" },
        },
      ],
    },
  ],
});

/** A leader's lease: taken when the loop starts, renewed by compare-and-expire, released by compare-and-delete. */
const LEADER_LEASE = `const lockKey = "leader:price-refresh";
const RENEW_LUA = \`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end\`;
const RELEASE_LUA = \`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end\`;
function register(redis: any) {
  redis.defineCommand("renewLease", { numberOfKeys: 1, lua: RENEW_LUA });
  redis.defineCommand("releaseLease", { numberOfKeys: 1, lua: RELEASE_LUA });
}
let leader = false;
let timer: NodeJS.Timeout | null = null;
async function tryAcquire() {
  const redis = cache.getClient();
  register(redis);
  const result = await redis.set(lockKey, instanceId, "PX", 30_000, "NX");
  leader = result === "OK";
  return leader;
}
async function renew() {
  if (!leader) return false;
  const redis = cache.getClient();
  register(redis);
  try {
    const result = await redis.renewLease(lockKey, instanceId, 30_000);
    if (result !== 1) leader = false;
  } catch (err) {
    logger.error(err);
  }
  return leader;
}
async function release() {
  if (!leader) return;
  const redis = cache.getClient();
  register(redis);
  await redis.releaseLease(lockKey, instanceId);
  leader = false;
}
async function stop() {
  if (timer) clearInterval(timer);
  timer = null;
  await release();
}
export function start() {
  if (timer) return;
  stop();
  tryAcquire().catch((err) => logger.error(err));
  timer = setInterval(() => {
    renew().catch((err) => logger.error(err));
  }, 10_000);
}
`;

ruleTester.run("release-in-finally (a lease the module keeps alive)", releaseInFinally, {
  valid: [{ name: "the leader's lease is renewed, so it is held past start() by design", code: LEADER_LEASE }],
  invalid: [],
});

/** A migration route that takes a transaction lock, then runs its statements in a transaction. */
const MIGRATE = (lockFirst: boolean) => `export async function applyMigration() {
  const db = getDb();
  ${lockFirst ? "await db.execute(sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`);" : ""}
  await db.transaction(async (tx) => {
    ${lockFirst ? "" : "await tx.execute(sql`SELECT pg_advisory_xact_lock(${LOCK_KEY})`);"}
    await tx.execute(sql\`ALTER TABLE t ADD COLUMN IF NOT EXISTS c text\`);
  });
}
`;

ruleTester.run("atomic-claim (a transaction lock outside a transaction)", atomicClaim, {
  valid: [
    { name: "the lock is the transaction's first statement", code: MIGRATE(false) },
    {
      name: "a helper handed the caller's transaction client",
      code: `export async function lockSequence(tx: Prisma.TransactionClient, key: number) {
  await tx.$executeRaw\`SELECT pg_advisory_xact_lock(\${key})\`;
}
`,
    },
    {
      name: "a batch transaction: the lock and the update share one",
      code: `export async function bump(id: string) {
  await prisma.$transaction([
    prisma.$executeRaw\`SELECT pg_advisory_xact_lock(\${42})\`,
    prisma.counter.update({ where: { id }, data: { n: { increment: 1 } } }),
  ]);
}
`,
    },
    {
      name: "options that name the transaction",
      code: `export async function ensureAccount(hostId: number, transaction: Transaction) {
  await sequelize.query("SELECT pg_advisory_xact_lock(7, :hostId)", { replacements: { hostId }, transaction });
}
`,
    },
    {
      name: "a statement returned unsent, for the caller's batch",
      code: `export function lockSplits(accountId: string) {
  return prisma.$queryRaw\`SELECT pg_advisory_xact_lock(742931, hashtext(\${accountId}))\`;
}
`,
    },
  ],
  invalid: [
    {
      name: "sent on the handle before its transaction begins",
      code: MIGRATE(true),
      errors: [
        {
          messageId: "xactLockOutsideTransaction",
          line: 3,
          data: { fn: "pg_advisory_xact_lock", client: "db" },
        },
      ],
    },
    {
      name: "sent through a pool",
      code: `import { Pool } from "pg";
const pool = new Pool();
export async function migrateOnce() {
  await pool.query("SELECT pg_try_advisory_xact_lock(42)");
  await pool.query("ALTER TABLE t ADD COLUMN IF NOT EXISTS c text");
}
`,
      errors: [
        {
          messageId: "xactLockOutsideTransaction",
          line: 4,
          data: { fn: "pg_try_advisory_xact_lock", client: "pool" },
        },
      ],
    },
  ],
});

/** A booking handler: a slot's key taken after the body is parsed, released after the save and in the catch. */
const BOOKING = (onError: string) => `import redis from "./redis.js";
const acquireLock = async (key, ttl = 5) => {
  const result = await redis.set(key, "LOCKED", "NX", "EX", ttl);
  return result === "OK";
};
const releaseLock = async (key) => {
  await redis.del(key);
};
export const book = async (req, res) => {
  const lockKey = \`lock:\${req.body.slot}\`;
  let taken = false;
  try {
    const input = schema.parse(req.body);
    taken = await acquireLock(lockKey);
    if (!taken) return res.status(429).end();
    await saveBooking(input);
    await releaseLock(lockKey);
    return res.status(201).end();
  } catch (error) {
    ${onError}
    return res.status(500).end();
  }
};
`;

/** The constant value's own finding, at the helper's DEL: asked in both variants. */
const CONSTANT = {
  messageId: "constantValue",
  line: 7,
  data: { key: "`key`", acquireLine: "3", value: '"LOCKED"', command: "DEL" },
} as const;

ruleTester.run("owner-checked-release (a catch that releases what it never took)", ownerCheckedRelease, {
  valid: [],
  invalid: [
    {
      name: "the catch releases only when this caller took the key: only the constant value is asked",
      code: BOOKING("if (taken) await releaseLock(lockKey);"),
      errors: [CONSTANT],
    },
    {
      name: "the catch releases whatever threw, also a parse before the acquire",
      code: BOOKING("await releaseLock(lockKey);"),
      errors: [
        CONSTANT,
        {
          messageId: "releasedInCatchUntaken",
          line: 20,
          data: { lock: "the lock `lock:*`", acquireLine: "14", exitLine: "13" },
        },
      ],
    },
  ],
});

/** A poller that skips a tick while the previous one runs, cleared by the callback the run calls when done. */
const POLLER = (tail: string) => `const runOnce = async (onDone) => {
  const due = await store.dueReminders();
  await Promise.all(due.map((r) => store.send(r)));
  ${tail}
};
let polling = false;
setInterval(() => {
  if (polling) return;
  polling = true;
  return runOnce(() => {
    polling = false;
  });
}, 1000);
`;

ruleTester.run("release-in-finally (a guard cleared by a success callback)", releaseInFinally, {
  valid: [
    {
      name: "the guard is a state the module also clears elsewhere (a stop)",
      code: POLLER("onDone();") + "export function stop() {\n  polling = false;\n}\n",
    },
    {
      name: "the run calls the callback in a finally",
      code: POLLER("").replace(
        `  const due = await store.dueReminders();
  await Promise.all(due.map((r) => store.send(r)));
  `,
        `  try {
    const due = await store.dueReminders();
    await Promise.all(due.map((r) => store.send(r)));
  } finally {
    onDone();
  }
  `,
      ),
    },
  ],
  invalid: [
    {
      name: "the run calls it after its awaits only",
      code: POLLER("onDone();"),
      errors: [
        {
          messageId: "clearedBySuccessCallback",
          line: 10,
          data: { name: "polling", setLine: "9", fn: "runOnce", callLine: "4" },
        },
      ],
    },
  ],
});

/** A token refresh guarded by a lock key, then the key deleted. */
const REFRESH = (take: string) => `const TOKEN_KEY = "oauth:token";
const LOCK_KEY = "oauth:lock";
export async function accessToken(): Promise<string> {
  const cached = await redis.get(TOKEN_KEY);
  if (cached) return cached;
  const lock = await ${take};
  if (!lock) {
    await sleep(200);
    return (await redis.get(TOKEN_KEY)) as string;
  }
  const fresh = await fetchToken();
  await redis.setex(TOKEN_KEY, fresh.ttl, fresh.value);
  await redis.del(LOCK_KEY);
  return fresh.value;
}
`;

ruleTester.run("atomic-claim (a lock written by a command that never refuses)", atomicClaim, {
  valid: [{ name: "SET NX with an expiry can be refused", code: REFRESH('redis.set(LOCK_KEY, "1", "EX", 5, "NX")') }],
  invalid: [
    {
      name: "SETEX always answers OK",
      code: REFRESH('redis.setex(LOCK_KEY, 5, "1")'),
      errors: [
        {
          messageId: "unrefusableLock",
          line: 6,
          data: { command: "SETEX", key: '"oauth:lock"', testLine: "7" },
        },
      ],
    },
  ],
});

/** A helper that runs work under a MySQL named lock, on `db`. */
const NAMED_LOCK = (setup: string, db: string) => `${setup}
export async function withNamedLock(name: string, seconds: number, work: () => Promise<void>) {
  ${setup.includes("getConnection") ? "const conn = await pool.getConnection();" : ""}
  await ${db}.query("SELECT GET_LOCK(?, ?)", { replacements: [name, seconds] });
  try {
    await work();
  } finally {
    await ${db}.query("DO RELEASE_LOCK(?)", { replacements: [name] });
  }
}
`;

ruleTester.run("release-in-finally (MySQL named locks)", releaseInFinally, {
  valid: [
    {
      name: "one connection taken from the pool holds the lock, the work and the release",
      code: NAMED_LOCK(
        'import mysql from "mysql2/promise";\nconst pool = mysql.createPool({}); // getConnection',
        "conn",
      ),
    },
  ],
  invalid: [
    {
      name: "through Sequelize's pool",
      code: NAMED_LOCK('const { sequelize } = require("../models");', "sequelize"),
      errors: [
        { messageId: "namedLockOnPool", line: 4, data: { client: "sequelize" } },
        { messageId: "namedUnlockOnPool", line: 8, data: { client: "sequelize", acquireLine: "4" } },
      ],
    },
  ],
});

/** Work serialised per key: each run chained on the one before and kept. */
const PER_KEY = (link: string) => `const tails = new Map<string, Promise<unknown>>();
export async function runInOrder(key: string, work: () => Promise<void>) {
  const before = tails.get(key) ?? Promise.resolve();
  const next = ${link};
  tails.set(key, next);
  await next;
}
`;

/** Writes to one file serialised by a module queue. */
const FILE_QUEUE = (body: string) => `let writing = Promise.resolve();
export async function appendUsage(entry: string) {
  writing = writing.then(async () => {
    ${body}
  });
  await writing;
}
`;

ruleTester.run("release-in-finally (promise chains kept as queues)", releaseInFinally, {
  valid: [
    { name: "each link starts clean: then(run, run)", code: PER_KEY("before.then(work, work)") },
    {
      name: "the work catches everything it does",
      code: FILE_QUEUE(`try {
      await fs.appendFile(USAGE_FILE, entry);
    } catch (error) {
      console.error(error);
    }`),
    },
    {
      name: "a keyed mutex's hand-over: each link waits on a promise made with a resolve function only",
      code: `const tails = new Map<string, Promise<unknown>>();
export function lockOne(key: string): Promise<() => void> {
  const tail = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  tails.set(key, tail.then(() => held));
  return tail.then(() => release);
}
`,
    },
    {
      name: "a queue kept in a function's variable lives as long as that call",
      code: `export async function saveAll(items: string[]) {
  let chain = Promise.resolve();
  for (const item of items) chain = chain.then(() => save(item));
  await chain;
}
`,
    },
  ],
  invalid: [
    {
      name: "finally passes the rejection on to every later link",
      code: PER_KEY("before.finally(work)"),
      errors: [{ messageId: "chainPassesRejection", line: 4, data: { holder: "tails" } }],
    },
    {
      name: "then skips every later link once one rejected",
      code: FILE_QUEUE("await fs.appendFile(USAGE_FILE, entry);"),
      errors: [{ messageId: "chainSkipsAfterRejection", line: 3, data: { holder: "writing" } }],
    },
  ],
});
