// Real code of blind-13's first sight (issue 35), read by what it does, in our words:
// - a try-acquire whose outcome is assigned to a variable declared before the `try` (`acquired = result === "OK"`):
//   the test of that variable is the test of the acquire, so the `return` it takes holds nothing;
// - a session advisory lock taken on a client the function made and then returned to its caller (`return client`):
//   the connection goes to the caller with its lock, and that `return` is no way out holding it;
// - a session advisory lock sent through a binding named `knex`: a knex instance is a pool, so lock and unlock may
//   run on two connections;
// - a guard kept in a static field of a class (`Task.isLocked`), shared by every instance: tested, awaited past and
//   then set, it races like a module variable;
// - a status taken over in JavaScript (`if (row.state === "generating") { if (age < LIMIT) return; }`, then the
//   write of `generating`): every way to the write found the row free or stale, and two callers that read together
//   both take it. A status moved elsewhere under the same tests (`failed`) is a recovery, not a claim;
// - a route that exports its platform time limit (`maxDuration`) and takes over a claim only after a longer age: the
//   platform stops every holder before its claim can pass on, so its later writes need no fence (a shorter age does);
//   the same for a sweep of the route's claims that waits longer than the limit: no live holder is that old;
// - a parameter typed as a union of literals (`status: "done" | "failed"`): the values a write of it can set;
// - a write by id of a state known only at run time that clears the owner column the claim fills: the holder's
//   release, whatever the state (a write of such a state that leaves the owner alone stays unknown);
// - an in-flight table whose presence test is a `get` found empty (`const p = inflight.get(k); if (!p)
//   inflight.set(k, call)`): the module is read (the text check knew only `has`), and a rejection skips its delete;
// - a row created already in progress under a unique key whose duplicate turns the caller away: a claim from birth,
//   asked Q1 like the module's other claim of that state (a table of records whose flag is set false in place is no
//   presence lock: the crash run found one the `get` test let in);
// - a lease moved on with the clock by id (`expiresAt: new Date(Date.now() + ttl)`) that also stamps a column the claim
//   cleared (`refreshedAt: new Date()`): a renewal by id, not a release.
import atomicClaim from "../../rules/atomic-claim.js";
import heartbeatAbort from "../../rules/heartbeat-abort.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/**
 * A cron wrapper: SET NX PX in a `try` of its own, the outcome kept in a `let` declared above it; the work runs in a
 * second `try` whose `finally` releases.
 */
const OUTCOME_IN_OUTER_LET = `import Redis from "ioredis";
const redis = new Redis();
export async function runExclusive(name: string, job: () => Promise<void>) {
  const key = \`cron:\${name}\`;
  const token = crypto.randomUUID();
  let acquired = false;
  try {
    const reply = await redis.set(key, token, "PX", 600000, "NX");
    acquired = reply === "OK";
    if (!acquired) {
      return { skipped: true };
    }
  } catch (err) {
    return { skipped: true, err };
  }
  try {
    await job();
    return { skipped: false };
  } finally {
    await redis.eval(RELEASE_SCRIPT, 1, key, token);
  }
}
const RELEASE_SCRIPT = 'if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0';
`;

/** A worker's singleton lock on a dedicated client, handed to the caller, which unlocks and closes it at shutdown. */
const CLIENT_RETURNED = `import { Client } from "pg";
const LOCK_ID = 4242;
export async function takeWorkerLock(url: string) {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const res = await client.query("select pg_try_advisory_lock($1) as ok", [LOCK_ID]);
    if (!res.rows[0]?.ok) throw new Error("another worker holds the lock");
    return client;
  } catch (err) {
    await client.end();
    throw err;
  }
}
export async function dropWorkerLock(client: Client) {
  await client.query("select pg_advisory_unlock($1)", [LOCK_ID]);
  await client.end();
}
`;

/** The same lock, but the function leaves with the client's lock taken and gives the caller something else. */
const CLIENT_KEPT = CLIENT_RETURNED.replace("return client;", 'return "locked";');

/** A CMS cron task: the framework's knex instance takes and frees a session lock in two statements. */
const KNEX_SESSION_LOCK = `export async function purgeExpired({ strapi }) {
  const knex = strapi.db.connection;
  let locked = false;
  try {
    const res = await knex.raw("select pg_try_advisory_lock(?) as locked", [991]);
    locked = !!res.rows[0]?.locked;
    if (!locked) return;
    await strapi.documents("api::token.token").deleteMany({ filters: { expired: true } });
  } finally {
    if (locked) await knex.raw("select pg_advisory_unlock(?)", [991]);
  }
}
`;

/** A polling task guarded by a static field, set only after the reads that decide whether there is work. */
const STATIC_FIELD_GUARD = `export class SyncTask {
  private static running = false;
  constructor(private readonly chain: { head(): Promise<number> }, private readonly store: { cursor(): Promise<number> }) {}
  async tick(): Promise<void> {
    if (SyncTask.running) return;
    const head = await this.chain.head();
    const cursor = await this.store.cursor();
    if (cursor >= head) return;
    SyncTask.running = true;
    try {
      await this.sync(cursor, head);
    } finally {
      SyncTask.running = false;
    }
  }
  private async sync(from: number, to: number) {}
}
`;

/** A render route: the document's state is read, a stale `rendering` is taken over, and the write is by id alone. */
const STATUS_TAKEN_OVER_IN_JS = `import { getFirestore } from "firebase-admin/firestore";
const STUCK_MS = 10 * 60 * 1000;
export async function startRender(videoId: string) {
  const ref = getFirestore().collection("videos").doc(videoId);
  const snap = await ref.get();
  const video = snap.data();
  if (!video) throw new Error("no such video");
  if (video.renderState === "rendering") {
    const idle = Date.now() - video.updatedAt;
    if (idle < STUCK_MS) return { busy: true };
    console.warn("taking over a stuck render", videoId);
  }
  await ref.update({ renderState: "rendering", updatedAt: Date.now() });
  void renderInBackground(ref);
  return { busy: false };
}
async function renderInBackground(ref) {}
`;

/** The same tests leading to a write that gives up on the stuck render: a recovery, not a claim. */
const STATUS_FAILED_IN_JS = STATUS_TAKEN_OVER_IN_JS.replace(
  '{ renderState: "rendering", updatedAt: Date.now() }',
  '{ renderState: "failed", updatedAt: Date.now() }',
);

ruleTester.run("release-in-finally (outcomes and connections handed on)", releaseInFinally, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "the outcome assigned to an outer let: its test's return holds nothing", code: OUTCOME_IN_OUTER_LET },
    { name: "the client holding the session lock is returned to the caller", code: CLIENT_RETURNED },
  ],
  invalid: [
    {
      name: "a return that keeps the client and gives the caller something else leaves holding it",
      code: CLIENT_KEPT,
      errors: [
        {
          messageId: "missedOnReturn",
          line: 7,
          data: {
            lock: "the session advisory lock (pg_try_advisory_lock)",
            consequence:
              "the connection keeps the session lock, and a pooled connection goes back to the pool still holding it.",
            acquireLine: "7",
            exitLine: "9",
            releaseLine: "11",
            hint: "",
            how: "on the return",
          },
        },
      ],
    },
    {
      name: "a knex instance is a pool: lock and unlock are two statements on any connection",
      code: KNEX_SESSION_LOCK,
      errors: [
        { messageId: "advisoryOnPool", line: 5, data: { client: "knex" } },
        { messageId: "advisoryUnlockOnPool", line: 10, data: { client: "knex", acquireLine: "5" } },
      ],
    },
  ],
});

ruleTester.run("atomic-claim (static guards and statuses taken over in JavaScript)", atomicClaim, {
  assertionOptions: { requireData: true },
  valid: [{ name: "a stuck status moved to failed is a recovery's write", code: STATUS_FAILED_IN_JS }],
  invalid: [
    {
      name: "a static field tested, awaited past, then set",
      code: STATIC_FIELD_GUARD,
      errors: [
        {
          messageId: "flagSetAfterAwait",
          line: 9,
          data: { name: "SyncTask.running", checkLine: "5", waitLine: "6" },
        },
      ],
    },
    {
      name: "a status read, found free or stale in nested tests, then written by id",
      code: STATUS_TAKEN_OVER_IN_JS,
      errors: [
        {
          messageId: "checkThenTakeOver",
          line: 13,
          data: {
            model: "videos",
            field: "renderState",
            value: "rendering",
            checkLine: "10",
            timeField: "updatedAt",
          },
        },
      ],
    },
  ],
});

/**
 * A serverless step route: a flag taken over in JavaScript after 90 s, in a function the platform stops after 60 s;
 * each step clears the flag by id when it is done.
 */
const PLATFORM_BOUNDED = `import { db } from "./db";
export const maxDuration = 60;
export async function POST(req: Request) {
  const { id } = await req.json();
  const { data: job } = await db.from("exports").select("*").eq("id", id).single();
  const heldFor = Date.now() - new Date(job.updated_at).getTime();
  if (job.is_processing && heldFor < 90000) return new Response("busy", { status: 409 });
  await db.from("exports").update({ is_processing: true, updated_at: new Date().toISOString() }).eq("id", id);
  const part = await renderNextPart(job);
  await db.from("exports").update({ parts: [...job.parts, part], is_processing: false }).eq("id", id);
  return new Response("ok");
}
async function renderNextPart(job) {}
`;

/** The same route taking the flag over after 30 s: a live holder of up to 60 s can be taken over and write late. */
const PLATFORM_OUTLIVED = PLATFORM_BOUNDED.replace("heldFor < 90000", "heldFor < 30000");

/** A worker's module: runs claimed by a conditional write, reset by a sweep, finished by a helper given the outcome. */
const OUTCOME_PARAMETER = `import { runs } from "./db";
type Outcome = "done" | "failed";
export async function claimRun(id: string, worker: string) {
  return runs.findOneAndUpdate({ _id: id, status: "pending" }, { $set: { status: "running", claimedBy: worker, updatedAt: new Date() } });
}
export async function reap(cutoff: Date) {
  await runs.updateMany({ status: "running", updatedAt: { $lt: cutoff } }, { $set: { status: "pending" } });
}
export async function finishRun(id: string, status: Outcome) {
  await runs.updateOne({ _id: id }, { $set: { status, finishedAt: new Date() } });
}
`;

/** A job queue: claims take over expired leases, and a helper frees a job with whatever outcome it is handed. */
const OWNER_CLEARED = `import { prisma } from "./db";
export async function claimJob(id: string, worker: string) {
  const now = new Date();
  return prisma.job.updateMany({
    where: { id, OR: [{ status: "QUEUED" }, { status: "RUNNING", leaseUntil: { lt: now } }] },
    data: { status: "RUNNING", workerId: worker, leaseUntil: new Date(now.getTime() + 30000) },
  });
}
export async function finishJob(id: string, outcome: { status: JobStatus; error?: string }) {
  return prisma.job.update({
    where: { id },
    data: { status: outcome.status, error: outcome.error ?? null, workerId: null, leaseUntil: null },
  });
}
`;

/** The same helper, but it keeps the owner: a state known only at run time says nothing of the hold. */
const OWNER_KEPT = OWNER_CLEARED.replace(", workerId: null, leaseUntil: null", "");

ruleTester.run("require-fencing (holders the platform stops, outcomes typed as literals)", requireFencing, {
  valid: [
    { name: "a take-over after 90 s in a route the platform stops at 60 s", code: PLATFORM_BOUNDED },
    { name: "a state known only at run time, the owner left alone: unknown", code: OWNER_KEPT },
  ],
  invalid: [
    {
      name: "a take-over after 30 s in a route that may live 60 s",
      code: PLATFORM_OUTLIVED,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 10,
          data: { model: "exports", field: "is_processing", value: "true", claimLine: "8", target: "false" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "exports", field: "is_processing", value: "true", claimLine: "8", target: "false" },
              output: PLATFORM_OUTLIVED.replace(
                'is_processing: false }).eq("id", id)',
                'is_processing: false }).eq("is_processing", true).eq("id", id)',
              ),
            },
          ],
        },
      ],
    },
    {
      name: "an outcome parameter typed as a union of literals moves the claimed row by id alone",
      code: OUTCOME_PARAMETER,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 10,
          data: { model: "runs", field: "status", value: "running", claimLine: "4", target: "another state" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "runs", field: "status", value: "running", claimLine: "4", target: "another state" },
              output: OUTCOME_PARAMETER.replace("updateOne({ _id: id }", 'updateOne({ _id: id, status: "running" }'),
            },
          ],
        },
      ],
    },
    {
      name: "a state known only at run time, written with the claim's owner cleared, by id alone",
      code: OWNER_CLEARED,
      errors: [
        {
          messageId: "takeoverWrite",
          line: 10,
          data: {
            effect: "moves the claimed job row to another state",
            field: "status",
            value: "RUNNING",
            claimLine: "4",
            tokenField: "workerId",
            alsoAtLine: "",
          },
        },
      ],
    },
  ],
});

/** Identical requests share one in-flight promise, found by `get`; the entry is deleted only after a fulfilled await. */
const INFLIGHT_BY_GET = `const inflight = new Map();
export async function dedupedGet(url) {
  const key = \`GET \${url}\`;
  const pending = inflight.get(key);
  const call = pending ?? fetch(url).then((r) => r.json());
  if (!pending) inflight.set(key, call);
  const body = await call;
  inflight.delete(key);
  return body;
}
`;

/** A nightly run claimed by creating its row IN_PROGRESS under a unique key, or by retrying a FAILED one. */
const BORN_IN_PROGRESS = `import { prisma } from "./db";
export async function runNightly(propertyId: string, day: string) {
  try {
    await prisma.nightRun.create({ data: { propertyId, day, status: "IN_PROGRESS" } });
  } catch (err) {
    if (err.code !== "P2002") throw err;
    const retried = await prisma.nightRun.updateMany({
      where: { propertyId, day, status: "FAILED" },
      data: { status: "IN_PROGRESS" },
    });
    if (retried.count === 0) return { skipped: true };
  }
  try {
    await postCharges(propertyId, day);
    await prisma.nightRun.updateMany({ where: { propertyId, day }, data: { status: "COMPLETED" } });
  } catch (err) {
    await prisma.nightRun.updateMany({ where: { propertyId, day }, data: { status: "FAILED" } });
    throw err;
  }
  return { skipped: false };
}
async function postCharges(p: string, d: string) {}
`;

/** A table of records (attempts, a cooldown, a flag): the flag in the record is set false in place when done. */
const RECORD_TABLE = `const titleJobs = new Map();
export async function makeTitle(chatId, messages) {
  const entry = titleJobs.get(chatId);
  if (entry && entry.isProcessing) return;
  titleJobs.set(chatId, { attempts: (entry?.attempts ?? 0) + 1, isProcessing: true });
  if (messages.length < 2) {
    titleJobs.set(chatId, { attempts: entry?.attempts ?? 0, isProcessing: false });
    return;
  }
  await summarise(messages);
  titleJobs.delete(chatId);
}
async function summarise(messages) {}
`;

ruleTester.run("release-in-finally (an in-flight table found by get)", releaseInFinally, {
  valid: [
    {
      name: "a table of records whose flag is set false in place: the entry's presence is no hold",
      code: RECORD_TABLE,
    },
    {
      name: "the same table released in a finally",
      code: INFLIGHT_BY_GET.replace(
        "const body = await call;\n  inflight.delete(key);\n  return body;",
        "try {\n    return await call;\n  } finally {\n    inflight.delete(key);\n  }",
      ),
    },
  ],
  invalid: [
    {
      name: "a rejection skips the delete",
      code: INFLIGHT_BY_GET,
      errors: [
        {
          messageId: "missedOnRejection",
          line: 6,
          suggestions: [
            {
              messageId: "moveToFinally",
              output: INFLIGHT_BY_GET.replace(
                "const body = await call;\n  inflight.delete(key);\n  return body;",
                "try {\n    const body = await call;\n    return body;\n  } finally {\n    inflight.delete(key);\n  }",
              ),
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery (a row created in progress)", requireStaleRecovery, {
  valid: [
    {
      name: "the same module with a sweep of stalled runs",
      code: `${BORN_IN_PROGRESS}export async function sweep(cutoff: Date) {
  await prisma.nightRun.updateMany({ where: { status: "IN_PROGRESS", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}
`,
    },
  ],
  invalid: [
    {
      name: "created IN_PROGRESS under a unique key, and reclaimed from FAILED: neither comes back from a crash",
      code: BORN_IN_PROGRESS,
      errors: [
        { messageId: "missingRecovery", line: 4, data: { model: "nightRun", field: "status", value: "IN_PROGRESS" } },
        { messageId: "missingRecovery", line: 7, data: { model: "nightRun", field: "status", value: "IN_PROGRESS" } },
      ],
    },
  ],
});

/** A cron lock row: taken after a read found none live, renewed by id after a read found it this owner's. */
const REFRESH_STAMPED = `import { prisma } from "./db";
export async function acquireLock(lockName: string, owner: string) {
  const now = new Date();
  const found = await prisma.jobLock.findFirst({ where: { lockName, released: false, expiresAt: { gt: now } } });
  if (found) return null;
  return prisma.jobLock.upsert({
    where: { lockName },
    create: { lockName, owner, released: false, expiresAt: new Date(now.getTime() + 900000), refreshedAt: null },
    update: { owner, released: false, expiresAt: new Date(now.getTime() + 900000), refreshedAt: null },
  });
}
export async function refreshLock(lockName: string, owner: string) {
  const lock = await prisma.jobLock.findFirst({ where: { lockName, owner, released: false } });
  if (!lock) return false;
  const expiresAt = new Date(Date.now() + 900000);
  await prisma.jobLock.update({ where: { id: lock.id }, data: { expiresAt, refreshedAt: new Date() } });
  return true;
}
`;

ruleTester.run("owner-checked-release (a renewal that stamps a column the claim cleared)", ownerCheckedRelease, {
  valid: [{ name: "the lease moved on with the clock is renewed, not released", code: REFRESH_STAMPED }],
  invalid: [],
});

ruleTester.run("heartbeat-abort (a renewal that stamps a column the claim cleared)", heartbeatAbort, {
  valid: [],
  invalid: [
    {
      name: "renewed by id after a separate read: it succeeds for whoever holds the row now",
      code: REFRESH_STAMPED,
      errors: [{ messageId: "unfencedHeartbeat", line: 16 }],
    },
  ],
});

/** A report route stopped by its platform after 60 s, with a sweep of renders started over five minutes ago. */
const SWEPT_PAST_LIFETIME = `import { prisma } from "./db";
export const maxDuration = 60;
export async function POST(req: Request) {
  const { id } = await req.json();
  const claimed = await prisma.report.updateMany({ where: { id, status: "QUEUED" }, data: { status: "RENDERING", startedAt: new Date() } });
  if (claimed.count === 0) return new Response("busy", { status: 409 });
  await render(id);
  await prisma.report.update({ where: { id }, data: { status: "DONE" } });
  return new Response("ok");
}
export async function sweep() {
  await prisma.report.updateMany({
    where: { status: "RENDERING", startedAt: { lt: new Date(Date.now() - 5 * 60 * 1000) } },
    data: { status: "QUEUED" },
  });
}
async function render(id: string) {}
`;

/** The same route allowed ten minutes: a live render can be older than the sweep's five. */
const SWEPT_WITHIN_LIFETIME = SWEPT_PAST_LIFETIME.replace("maxDuration = 60", "maxDuration = 600");

ruleTester.run("progress-based-staleness (a sweep longer than the platform's limit)", progressBasedStaleness, {
  valid: [{ name: "no live holder is five minutes old in a route stopped at 60 s", code: SWEPT_PAST_LIFETIME }],
  invalid: [
    {
      name: "a route that may live ten minutes is swept after five by its start time",
      code: SWEPT_WITHIN_LIFETIME,
      errors: [{ messageId: "startTimeRecovery", line: 13 }],
    },
  ],
});

ruleTester.run("require-fencing (a sweep longer than the platform's limit)", requireFencing, {
  valid: [
    { name: "the sweep never takes a live holder's row: its completion needs no fence", code: SWEPT_PAST_LIFETIME },
  ],
  invalid: [],
});
