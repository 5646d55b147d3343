// Real code (blind-6 and blind-7, issue 35) read by what it does rather than by its shape: a lock row in any store
// taken by an upsert on its key, a time class's clock, a status helper handed its value, a list of keys taken, rows
// taken from another read, a row per run, a recovery that ends rows rather than handing them back, a lock row keyed by
// an id drawn per acquisition. Each case is written in our words.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A lock row in a hosted database, taken by an upsert on its key after a read judged it free or stale, and freed by stamping
 * when it was freed (`freed_at`) rather than by deleting it. */
const TASK_LOCK_UPSERT = `import { createClient } from "@supabase/supabase-js";
const supabase = createClient(url, key);
const STALE_MS = 20 * 60 * 1000;

export async function runExclusive(task: string, work: () => Promise<void>) {
  const now = new Date().toISOString();
  const { data: row } = await supabase.from("task_locks").select("taken_at, freed_at").eq("task", task).maybeSingle();
  if (row && row.freed_at === null && Date.now() - Date.parse(row.taken_at) < STALE_MS) return false;
  await supabase.from("task_locks").upsert({ task, taken_at: now, freed_at: null }, { onConflict: "task" });
  try {
    await work();
  } finally {
    await supabase.from("task_locks").update({ freed_at: new Date().toISOString() }).eq("task", task);
  }
  return true;
}`;

/** A document lock: the document is read, its start judged in JavaScript, then overwritten with the clock of a time class
 * (`Timestamp.now()`) read through `snap.get("startedAt")`; the release deletes it by its id. */
const FIRESTORE_GUARD = `import { Timestamp } from "firebase-admin/firestore";
import { db } from "./firebase";

export async function guarded(name: string, fn: () => Promise<void>) {
  const ref = db.collection("job_locks").doc(name);
  const snap = await ref.get();
  if (snap.exists) {
    const began = snap.get("startedAt");
    if (began && Date.now() - began.toMillis() < 10 * 60_000) return;
  }
  await ref.set({ startedAt: Timestamp.now() });
  try {
    await fn();
  } finally {
    await ref.delete();
  }
}`;

/** A status set through the module's own helper that is handed the value (`this.setState(msg.id, "sending")`). */
const OUTBOX_HELPER = `import { pool } from "./db";

export class Outbox {
  async drain() {
    const due = await pool.query("SELECT * FROM outbox WHERE state = 'ready' LIMIT 20");
    for (const msg of due.rows) {
      await this.setState(msg.id, "sending");
      await deliver(msg);
      await this.setState(msg.id, "sent");
    }
  }

  private async setState(id: string, state: string) {
    await pool.query("UPDATE outbox SET state = $1, updated_at = now() WHERE id = $2", [state, id]);
  }
}`;

/** A recovery that puts stale running rows back to queued with a fresh stamp: the value it writes is where work waits, not a lease. */
const REQUEUE_AND_TAKE = `import { pool } from "./db";

export async function requeueStuck() {
  await pool.query(
    "UPDATE jobs SET status = 'queued', updated_at = now() WHERE status = 'running' AND updated_at < now() - interval '10 minutes'",
  );
}
export async function takeNext() {
  const { rows } = await pool.query(
    "UPDATE jobs SET status = 'running', updated_at = now() WHERE id = (SELECT id FROM jobs WHERE status = 'queued' LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *",
  );
  return rows[0];
}`;

/** Keys taken one by one and remembered in a list only once taken; the `finally` frees the members of that list. */
const HELD_KEYS = `import { redis } from "./redis";

export async function settle(userKey: string, orderKeys: string[]) {
  const held: string[] = [];
  try {
    if (!(await redis.set(userKey, "1", "EX", 30, "NX"))) return false;
    for (const key of orderKeys) {
      const got = await redis.set(key, "1", "EX", 30, "NX");
      if (!got) return false;
      held.push(key);
    }
    await applySettlement(userKey, orderKeys);
    return true;
  } finally {
    for (const key of held) await redis.del(key);
  }
}`;

/** Two sweeps in one function with loop variables of the same name: the second moves rows read as PENDING, not the claimed ones. */
const TWO_SWEEPS = `import { db } from "./db";

export async function cleanup() {
  const cutoff = new Date(Date.now() - 10 * 60_000);
  const stuck = await db.link.findMany({ where: { status: "PROCESSING", updatedAt: { lt: cutoff } } });
  for (const link of stuck) {
    await db.link.updateMany({ where: { id: link.id, status: "PROCESSING", updatedAt: { lt: cutoff } }, data: { status: "PENDING" } });
  }
  const old = await db.link.findMany({ where: { status: "PENDING", createdAt: { lt: cutoff } } });
  for (const link of old) {
    await db.link.update({ where: { id: link.id }, data: { status: "FAILED" } });
  }
}
export async function take(id: string) {
  await db.link.updateMany({ where: { id, status: "PENDING" }, data: { status: "PROCESSING", updatedAt: new Date() } });
}`;

/** A run row inserted per run: a late write of the run's own row touches no other holder's row. */
const RUN_ROWS = `import { supabase } from "./supabase";

export async function runNightly(job: string, work: () => Promise<unknown>) {
  await supabase.from("job_runs").update({ status: "failed" }).eq("job", job).eq("status", "running").lt("started_at", cutoff());
  const { data: run } = await supabase.from("job_runs").insert({ job, status: "running", started_at: new Date().toISOString() }).select("id").single();
  try {
    await work();
    await finish(run.id, "succeeded");
  } catch (e) {
    await finish(run.id, "failed");
  }
}
async function finish(id: number, status: string) {
  await supabase.from("job_runs").update({ status, ended_at: new Date().toISOString() }).eq("id", id);
}
function cutoff() {
  return new Date(Date.now() - 30 * 60_000).toISOString();
}`;

/** Completion and failure written through a status helper: the helper's filter is the one to fence, once for all its calls. */
const STATUS_HELPER = `import { pool } from "./db";

export async function work(id: string) {
  const { rowCount } = await pool.query("UPDATE renders SET status = 'rendering', updated_at = now() WHERE id = $1 AND status = 'queued'", [id]);
  if (rowCount === 0) return;
  try {
    await render(id);
    await setStatus(id, "done");
  } catch {
    await setStatus(id, "failed");
  }
}
export async function requeue() {
  await pool.query("UPDATE renders SET status = 'queued' WHERE status = 'rendering' AND updated_at < now() - interval '15 minutes'");
}
async function setStatus(id: string, status: string) {
  await pool.query("UPDATE renders SET status = $2 WHERE id = $1", [id, status]);
}`;

/** A claim whose recovery is SQL text kept in another module of the project and sent from here. */
const IMPORTED_REAP = `import { sql } from "kysely";
import { REAP_SQL } from "./queries";

export async function claim(id: string) {
  await db.updateTable("videos").set({ status: "processing" }).where("id", "=", id).where("status", "=", "queued").execute();
}
export async function reap() {
  await sql.raw(REAP_SQL).execute(db);
}`;

/**
 * An in-process memo of what this process last wrote, kept in an object of the project's own class: its get and set
 * are the class's, in this process, whatever the key is called (a telemetry service's memo, 12-service wild lint).
 */
const MEMO_FIELD = `import { InProcessMemo } from "./memo";
import { cache } from "./cache";

export class NameWriter {
  private static readonly written: InProcessMemo<string> = new InProcessMemo<string>({ max: 5000 });

  static async remember(lockKey: string, name: string) {
    if (this.written.get(lockKey) !== name) {
      await cache.setString(lockKey, name);
      this.written.set(lockKey, name);
    }
  }
}`;
/** The same field holding a Redis client. */
const REDIS_FIELD = MEMO_FIELD.replace("new InProcessMemo<string>({ max: 5000 })", "new Redis()")
  .replace("InProcessMemo<string>", "Redis")
  .replace('import { InProcessMemo } from "./memo";', 'import Redis from "ioredis";');

/** A worker whose caller reads queued jobs and hands each to the function that claims it by id. */
const CALLER_READ = `import { prisma } from "./db";

async function handle(job: { id: string }) {
  await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
  await render(job);
  await prisma.job.update({ where: { id: job.id }, data: { status: "DONE" } });
}

export async function poll() {
  const queued = await prisma.job.findMany({ where: { status: "QUEUED" }, take: 5 });
  for (const job of queued) await handle(job);
}`;
/** The same worker on Supabase: the rows are the `data` of a filtered select, the claim names the row by `eq("id", job.id)`. */
const CALLER_READ_POSTGREST = `import { createClient } from "@supabase/supabase-js";
const supabase = createClient(url, key);

async function processJob(job: any) {
  await supabase.from("jobs").update({ status: "running" }).eq("id", job.id);
  await work(job);
  await supabase.from("jobs").update({ status: "done" }).eq("id", job.id);
}

export async function tick() {
  const { data: jobs } = await supabase.from("jobs").select("*").eq("status", "queued").limit(5);
  for (const job of jobs ?? []) await processJob(job);
  return new Response("ok");
}`;

/** The same worker in raw SQL: the row comes in as the statement's parameter (`WHERE id = $1`, `[job.id]`). */
const CALLER_READ_SQL = `import { pool } from "./db";

async function runJob(job: { id: number }) {
  await pool.query("UPDATE jobs SET status = 'processing' WHERE id = $1", [job.id]);
  await handle(job);
  await pool.query("UPDATE jobs SET status = 'done' WHERE id = $1", [job.id]);
}

export async function poll() {
  const { rows } = await pool.query("SELECT * FROM jobs WHERE status = 'queued' LIMIT 5");
  for (const job of rows) await runJob(job);
}`;

/** The same worker when the rows come from a function the module cannot see into. */
const CALLER_UNKNOWN = CALLER_READ.replace(
  'const queued = await prisma.job.findMany({ where: { status: "QUEUED" }, take: 5 });',
  "const queued = await loadQueued();",
);

const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
/** Claimed deliveries a recovery ends as FAILED once stale: no claim takes FAILED rows, so nobody takes the row over. */
const ENDED_WHEN_STALE = `import { prisma } from "./db";

export async function sendNext(id: string) {
  const won = await prisma.delivery.updateMany({
    where: { id, status: "PENDING" },
    data: { status: "SENDING", sentAt: new Date() },
  });
  if (won.count !== 1) return;
  await transmit(id);
  await prisma.delivery.update({ where: { id }, data: { status: "SENT" } });
}

export async function failStuck() {
  await prisma.delivery.updateMany({
    where: { status: "SENDING", sentAt: { lt: new Date(Date.now() - 600_000) } },
    data: { status: "FAILED" },
  });
}`;

/** The same recovery handing stale deliveries back to PENDING, where the claim takes them again. */
const HANDED_BACK_WHEN_STALE = ENDED_WHEN_STALE.replace('data: { status: "FAILED" }', 'data: { status: "PENDING" }');

/** The same, with a retry of FAILED rows: its write runs only where the row was found FAILED, never a claimed row. */
const RETRY_OF_FAILED = `${HANDED_BACK_WHEN_STALE}

export async function retry(id: string) {
  const row = await prisma.delivery.findUnique({ where: { id } });
  if (!row || row.status !== "FAILED") return null;
  return prisma.delivery.update({ where: { id }, data: { status: "PENDING" } });
}`;

/**
 * A flag named by a flag word and a qualifier, taken by a compare-and-set (`$ne: true`) and cleared by the same
 * helper; beside it, a soft delete taken the same way, which is no flag (its name says nothing of work in progress).
 */
const QUALIFIED_FLAG = `import { db } from "./mongo";

export async function lockContactSync(userId: string, on: boolean): Promise<boolean> {
  const users = db.collection("users");
  if (on) {
    const r = await users.updateOne({ _id: userId, isSyncingContacts: { $ne: true } }, { $set: { isSyncingContacts: true } });
    return r.modifiedCount > 0;
  }
  await users.updateOne({ _id: userId }, { $set: { isSyncingContacts: false } });
  return true;
}

export async function archive(userId: string) {
  const users = db.collection("users");
  await users.updateOne({ _id: userId, isDeleted: { $ne: true } }, { $set: { isDeleted: true } });
}`;

/** A lock row taken by a PostgREST upsert on its key and released by a delete: the upsert overwrites whoever holds it. */
const OVERWRITING_UPSERT = `import { createClient } from "@supabase/supabase-js";
const supabase = createClient(url, key);

export async function takeDispatchLock(name: string): Promise<boolean> {
  const { error } = await supabase
    .from("dispatch_locks")
    .upsert({ name, taken_at: new Date().toISOString() }, { onConflict: "name" });
  return !error;
}

export async function dropDispatchLock(name: string) {
  await supabase.from("dispatch_locks").delete().eq("name", name);
}`;

/** The same in SQL: `ON CONFLICT (lock_name) DO UPDATE` with no condition. */
const OVERWRITING_SQL = `import { pool } from "./db";

export async function acquireLock(name: string): Promise<boolean> {
  await pool.query(
    "INSERT INTO cron_locks (lock_name, acquired_at, expires_at) VALUES ($1, now(), now() + interval '5 minutes') ON CONFLICT (lock_name) DO UPDATE SET acquired_at = now(), expires_at = now() + interval '5 minutes'",
    [name],
  );
  return true;
}

export async function releaseLock(name: string) {
  await pool.query("DELETE FROM cron_locks WHERE lock_name = $1", [name]);
}`;

/** The same upsert told to do nothing on a conflict: an insert under a unique key (its expiry is another question). */
const IGNORING_UPSERT = OVERWRITING_UPSERT.replace(
  '{ onConflict: "name" }',
  '{ onConflict: "name", ignoreDuplicates: true }',
);

/** A record of the holder written while an advisory lock is held: the advisory lock excludes, the row only tells. */
const RECORD_UNDER_LOCK = `import { pool } from "./db";

export async function deploy(env: string, run: string, work: () => Promise<void>) {
  const client = await pool.connect();
  try {
    const { rows } = await client.query("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [env]);
    if (!rows[0].ok) return;
    await client.query(
      "INSERT INTO deploy_locks (env, run_id) VALUES ($1, $2) ON CONFLICT (env) DO UPDATE SET run_id = EXCLUDED.run_id",
      [env, run],
    );
    await work();
    await client.query("DELETE FROM deploy_locks WHERE env = $1", [env]);
    await client.query("SELECT pg_advisory_unlock(hashtext($1))", [env]);
  } finally {
    client.release();
  }
}`;

/** A Mongoose schema's statics, where `this` is the model: a flag lock taken, and freed in JavaScript once expired. */
const SCHEMA_STATICS = `import mongoose from "mongoose";

const exportLockSchema = new mongoose.Schema({ key: String, isLocked: Boolean, expiresAt: Date });

exportLockSchema.statics.takeLock = async function (key: string, ttlMs: number) {
  const now = new Date();
  return this.findOneAndUpdate(
    { key, isLocked: false },
    { $set: { isLocked: true, expiresAt: new Date(now.getTime() + ttlMs) } },
    { new: true },
  );
};

exportLockSchema.statics.currentLock = async function (key: string) {
  const lock = await this.findOne({ key });
  if (lock && lock.isLocked && lock.expiresAt && new Date() > lock.expiresAt) {
    lock.isLocked = false;
    await lock.save();
  }
  return lock;
};

export const ExportLock = mongoose.model("ExportLock", exportLockSchema);`;

/** A lock table written only to record each run (nothing deletes from it here): no lock taken by the upsert. */
const RUN_RECORD_UPSERT = `import { pool } from "./db";

export async function recordRun(job: string) {
  await pool.query(
    "INSERT INTO cron_locks (job, last_run_at) VALUES ($1, now()) ON CONFLICT (job) DO UPDATE SET last_run_at = now()",
    [job],
  );
}`;

/** A MySQL leader lease whose values are chosen on the row's expiry (`IF(expires_at < NOW(), …)`): conditional. */
const CONDITIONAL_VALUES_UPSERT = `import { pool } from "./db";

export async function campaign(me: string) {
  await pool.query(
    "INSERT INTO leader_locks (id, holder, expires_at) VALUES (1, ?, NOW() + INTERVAL 30 SECOND) ON DUPLICATE KEY UPDATE holder = IF(expires_at < NOW(), VALUES(holder), holder), expires_at = IF(expires_at < NOW(), VALUES(expires_at), expires_at)",
    [me],
  );
}

export async function resign(me: string) {
  await pool.query("DELETE FROM leader_locks WHERE id = 1 AND holder = ?", [me]);
}`;

/** A lock row whose id is drawn fresh for each acquisition, released by that id. */
const FRESH_LOCK_ID = `import { supabase } from "./supabase";

export async function takeLock(name: string) {
  const now = new Date();
  await supabase.from("job_locks").delete().eq("name", name).lt("expires_at", now.toISOString());
  const lockId = \`\${name}-\${crypto.randomUUID()}\`;
  const { error } = await supabase
    .from("job_locks")
    .insert({ id: lockId, name, expires_at: new Date(now.getTime() + 60_000).toISOString() });
  if (error) return null;
  return lockId;
}

export async function dropLock(lockId: string) {
  await supabase.from("job_locks").delete().eq("id", lockId);
}`;

/** The same lock row keyed by the lock's name: every caller of the name writes the same id. */
const NAMED_LOCK_ID = `import { supabase } from "./supabase";

export async function takeLock(name: string) {
  const now = new Date();
  await supabase.from("job_locks").delete().eq("name", name).lt("expires_at", now.toISOString());
  const lockId = \`lock-\${name}\`;
  const { error } = await supabase
    .from("job_locks")
    .insert({ id: lockId, name, expires_at: new Date(now.getTime() + 60_000).toISOString() });
  if (error) return null;
  return lockId;
}

export async function dropLock(lockId: string) {
  await supabase.from("job_locks").delete().eq("id", lockId);
}`;

/**
 * A write in the branch an age test takes for a young row (`if (runtime > LIMIT) … else`) fails the item for another
 * reason (its checks failed): no recovery of a stale claim, so no recovery's questions.
 */
const YOUNG_BRANCH = `import { prisma } from "./db";

export async function tick() {
  const current = await prisma.mergeItem.findFirst({ where: { status: "running" } });
  if (current) {
    const runtime = Date.now() - (current.startedAt?.getTime() || 0);
    if (runtime > 10 * 60 * 1000) {
      await prisma.mergeItem.updateMany({
        where: { id: current.id, status: "running", startedAt: { lt: new Date(Date.now() - 600_000) } },
        data: { status: "failed" },
      });
    } else {
      const checks = await checksOf(current.id);
      if (checks === "failed") await prisma.mergeItem.update({ where: { id: current.id }, data: { status: "failed" } });
    }
    return;
  }
  const next = await nextId();
  const won = await prisma.mergeItem.updateMany({
    where: { status: "queued", id: next },
    data: { status: "running", startedAt: new Date() },
  });
  if (won.count === 0) return;
}`;

ruleTester.run("atomic-claim (read by behaviour)", atomicClaim, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "an upsert that records runs in a table nothing here deletes from", code: RUN_RECORD_UPSERT },
    { name: "an upsert whose values are chosen on the row's expiry", code: CONDITIONAL_VALUES_UPSERT },
    { name: "an upsert that does nothing on a conflict takes the row only when it is free", code: IGNORING_UPSERT },
    { name: "an upsert of a record made while an advisory lock is held", code: RECORD_UNDER_LOCK },
    // The release stamps `freed_at` after the same read: it stamps no column the check judged, so it takes nothing over.
    { name: "a lock row's end stamped after a check of when it was taken is no take-over", code: REQUEUE_AND_TAKE },
  ],
  invalid: [
    {
      name: "a PostgREST upsert on the lock's key overwrites whoever holds it",
      code: OVERWRITING_UPSERT,
      errors: [{ messageId: "overwritingLock", line: 5, column: 27, data: { model: "dispatch_locks" } }],
    },
    {
      name: "ON CONFLICT DO UPDATE with no condition overwrites whoever holds it",
      code: OVERWRITING_SQL,
      errors: [{ messageId: "overwritingLock", line: 4, column: 9, data: { model: "cron_locks" } }],
    },
    {
      name: "an upsert on the lock's key after a read judged it free or stale takes it by its key alone",
      code: TASK_LOCK_UPSERT,
      errors: [
        {
          messageId: "checkThenLease",
          line: 9,
          column: 9,
          data: { model: "task_locks", field: "taken_at", value: "held", claimLine: "9", checkLine: "7" },
        },
      ],
    },
    {
      name: "a document overwritten after its start was judged in JavaScript (Timestamp.now())",
      code: FIRESTORE_GUARD,
      errors: [
        {
          messageId: "checkThenLease",
          line: 11,
          column: 9,
          data: { model: "job_locks", field: "startedAt", value: "held", claimLine: "11", checkLine: "6" },
        },
      ],
    },
    {
      name: "a status written through the module's helper after a read of ready rows is check-then-act at the call",
      code: OUTBOX_HELPER,
      errors: [
        {
          messageId: "checkThenAct",
          line: 7,
          column: 13,
          data: {
            model: "outbox",
            field: "state",
            value: "sending",
            claimLine: "7",
            checkedWhere: "with a separate read",
            checkLine: "5",
          },
        },
      ],
    },
  ],
});

ruleTester.run("atomic-claim (the caller's read)", atomicClaim, {
  assertionOptions: { requireData: true },
  // Nothing shows where the caller's rows come from: unknown, not check-then-act.
  valid: [{ name: "rows handed over from a function not read", code: CALLER_UNKNOWN }],
  invalid: [
    {
      name: "a PostgREST claim by eq(id) of rows the caller selected as queued",
      code: CALLER_READ_POSTGREST,
      errors: [
        {
          messageId: "checkThenAct",
          line: 5,
          column: 9,
          data: {
            model: "jobs",
            field: "status",
            value: "running",
            claimLine: "5",
            checkedWhere: "with a separate read",
            checkLine: "11",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "jobs",
                field: "status",
                value: "running",
                claimLine: "5",
                checkedWhere: "with a separate read",
                checkLine: "11",
              },
              output: CALLER_READ_POSTGREST.replace(
                '.update({ status: "running" }).eq("id", job.id)',
                '.update({ status: "running" }).neq("status", "running").eq("id", job.id)',
              ),
            },
          ],
        },
      ],
    },
    {
      name: "a SQL claim whose row is its parameter, of rows the caller selected as queued",
      code: CALLER_READ_SQL,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: {
            model: "jobs",
            field: "status",
            value: "processing",
            claimLine: "4",
            checkedWhere: "with a separate read",
            checkLine: "10",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "jobs",
                field: "status",
                value: "processing",
                claimLine: "4",
                checkedWhere: "with a separate read",
                checkLine: "10",
              },
              output: CALLER_READ_SQL.replace(
                "SET status = 'processing' WHERE id = $1",
                "SET status = 'processing' WHERE status <> 'processing' AND id = $1",
              ),
            },
          ],
        },
      ],
    },
    {
      name: "a claim by id of a row every caller read as queued is check-then-act across the two functions",
      code: CALLER_READ,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: {
            model: "job",
            field: "status",
            value: "RUNNING",
            claimLine: "4",
            checkedWhere: "with a separate read",
            checkLine: "10",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "job",
                field: "status",
                value: "RUNNING",
                claimLine: "4",
                checkedWhere: "with a separate read",
                checkLine: "10",
              },
              output: CALLER_READ.replace(
                '{ where: { id: job.id }, data: { status: "RUNNING" } }',
                '{ where: { id: job.id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }',
              ),
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release (read by behaviour)", ownerCheckedRelease, {
  assertionOptions: { requireData: true },
  valid: [{ name: "a lock row released by an id drawn fresh for its acquisition", code: FRESH_LOCK_ID }],
  invalid: [
    {
      name: "a lock row released by an id every caller of the lock's name writes",
      code: NAMED_LOCK_ID,
      errors: [
        {
          messageId: "rowRelease",
          line: 15,
          column: 9,
          data: {
            operation: "delete",
            lock: "lock row in job_locks",
            acquireLine: "7",
            filter: "id",
            expires: "is swept when stale",
            expiryLine: "5",
          },
        },
      ],
    },
    {
      // `freed_at: now` where the acquire wrote `freed_at: null`: the lock's end, recorded rather than erased.
      name: "a lock row freed by stamping when it was freed, by its key alone",
      code: TASK_LOCK_UPSERT,
      errors: [
        {
          messageId: "rowRelease",
          line: 13,
          column: 11,
          data: {
            operation: "write",
            lock: "lease on task_locks.taken_at",
            acquireLine: "9",
            filter: "task",
            expires: "is taken over once taken_at has passed",
            expiryLine: "8",
          },
        },
      ],
    },
    {
      name: "a document lock deleted by its id",
      code: FIRESTORE_GUARD,
      errors: [
        {
          messageId: "rowRelease",
          line: 15,
          column: 11,
          data: {
            operation: "delete",
            lock: "lease on job_locks.startedAt",
            acquireLine: "11",
            filter: "id",
            expires: "is taken over once startedAt has passed",
            expiryLine: "9",
          },
        },
      ],
    },
    {
      // The list holds only keys this caller took: its `finally` frees no lock it did not take. The constant value
      // is still no owner (one finding, not the "released when not acquired" one).
      name: "keys freed from the list of keys taken: only the constant value is reported",
      code: HELD_KEYS,
      errors: [
        {
          messageId: "constantValue",
          line: 15,
          column: 41,
          data: { key: "`key`", acquireLine: "8", value: '"1"', command: "DEL" },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness (read by behaviour)", progressBasedStaleness, {
  assertionOptions: { requireData: true },
  valid: [],
  invalid: [
    {
      // `taken_at` is named in no vocabulary; only the claim stamps it, with the bare clock, and nothing renews it.
      name: "a lease nothing renews, judged by the instant its claim stamps, whatever it is called",
      code: TASK_LOCK_UPSERT,
      errors: [
        {
          messageId: "startTimeTakeoverRead",
          line: 8,
          column: 7,
          data: {
            what: "the lock row in task_locks",
            claimLine: "9",
            timeField: "taken_at",
            readLine: "7",
            stamped: "set once when the lock is taken",
            progressFields: PROGRESS,
          },
        },
      ],
    },
    {
      name: "a document's start read by name and judged in JavaScript",
      code: FIRESTORE_GUARD,
      errors: [
        {
          messageId: "startTimeTakeoverRead",
          line: 9,
          column: 9,
          data: {
            what: "the lock row in job_locks",
            claimLine: "11",
            timeField: "startedAt",
            readLine: "6",
            stamped: "set once when the lock is taken",
            progressFields: PROGRESS,
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery (read by behaviour)", requireStaleRecovery, {
  assertionOptions: { requireData: true },
  valid: [
    // The statement's text is not in this module: it may be the recovery (blind-6 FZ09). Unknown, not "none".
    { name: "a module that sends SQL text imported from the project is not judged unrecovered", code: IMPORTED_REAP },
    // Before: the requeue was read as a lease of `queued`, reported, and the running claim was left unanswered.
    {
      name: "a recovery back to queued with a fresh stamp is no claim of queued, and answers the claim",
      code: REQUEUE_AND_TAKE,
    },
  ],
  invalid: [
    {
      name: "a qualified processing flag taken by a compare-and-set with nothing to recover it",
      code: QUALIFIED_FLAG,
      errors: [
        {
          messageId: "missingRecovery",
          line: 6,
          column: 21,
          data: { model: "users", field: "isSyncingContacts", value: "true" },
        },
      ],
    },
    {
      // The same module without the imported statement: nothing here moves a processing video back.
      name: "the same claim with no statement it cannot read is reported",
      code: IMPORTED_REAP.replace('import { REAP_SQL } from "./queries";\n', "").replace(
        /export async function reap[\s\S]*$/,
        "",
      ),
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          column: 9,
          data: { model: "videos", field: "status", value: "processing" },
        },
      ],
    },
    {
      name: "a status set through the module's helper, handed the value, is a claim at the call",
      code: OUTBOX_HELPER,
      errors: [
        {
          messageId: "missingRecovery",
          line: 7,
          column: 13,
          data: { model: "outbox", field: "state", value: "sending" },
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing (read by behaviour)", requireFencing, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "a recovery that ends stale rows as FAILED hands them to nobody", code: ENDED_WHEN_STALE },
    { name: "rows taken from a read of PENDING rows are not the claimed PROCESSING rows", code: TWO_SWEEPS },
    { name: "a row inserted per run is never taken by another holder", code: RUN_ROWS },
  ],
  invalid: [
    {
      name: "a recovery that hands stale rows back to the claimed state lets a late holder overwrite the next one",
      code: HANDED_BACK_WHEN_STALE,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 10,
          column: 9,
          data: { model: "delivery", field: "status", value: "SENDING", claimLine: "4", target: "SENT" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "delivery", field: "status", value: "SENDING", claimLine: "4", target: "SENT" },
              output: HANDED_BACK_WHEN_STALE.replace("where: { id }, data", 'where: { id, status: "SENDING" }, data'),
            },
          ],
        },
      ],
    },
    {
      name: "a retry that runs only on rows found FAILED is no holder's write; the completion still is",
      code: RETRY_OF_FAILED,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 10,
          column: 9,
          data: { model: "delivery", field: "status", value: "SENDING", claimLine: "4", target: "SENT" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "delivery", field: "status", value: "SENDING", claimLine: "4", target: "SENT" },
              output: RETRY_OF_FAILED.replace(
                'where: { id }, data: { status: "SENT" }',
                'where: { id, status: "SENDING" }, data: { status: "SENT" }',
              ),
            },
          ],
        },
      ],
    },
    {
      name: "a status helper's write by id alone is reported once, at the helper, not at each call",
      code: STATUS_HELPER,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 17,
          column: 9,
          data: {
            model: "renders",
            field: "status",
            value: "rendering",
            claimLine: "4",
            target: "the state its callers pass",
          },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery (read by behaviour)", conditionalRecovery, {
  assertionOptions: { requireData: true },
  // The first sweep is conditional; the second moves rows another read found PENDING, which no claim holds.
  valid: [
    { name: "a write in the young branch of an age test is no recovery", code: YOUNG_BRANCH },
    { name: "a second sweep's loop variable of the same name is not the first sweep's rows", code: TWO_SWEEPS },
  ],
  invalid: [
    {
      name: "a schema static's this is the model: a flag freed by a save after a JS expiry check",
      code: SCHEMA_STATICS,
      errors: [
        {
          messageId: "checkInJs",
          line: 18,
          column: 11,
          data: {
            model: "exportLock",
            field: "isLocked",
            value: "true",
            claimLine: "7",
            checkedWhere: "in JavaScript",
            checkLine: "16",
            rowFilter: "_id",
          },
        },
      ],
    },
  ],
});

ruleTester.run(
  "owner-checked-release (an object of the project's own class is no key-value client)",
  ownerCheckedRelease,
  {
    assertionOptions: { requireData: true },
    valid: [{ name: "a memo object's get then set", code: MEMO_FIELD }],
    invalid: [
      {
        name: "the same get then set on a Redis client in that field",
        code: REDIS_FIELD,
        errors: [{ messageId: "checkedAcquire", line: 10, column: 20, data: { key: "`lockKey`", getLine: "8" } }],
      },
    ],
  },
);

// Issue 35, from blind-10's first sight: a module helper handed a data object (`patchExport(id, { status })`) whose
// row object gains its fields after it is made (`if (patch.status !== undefined) row.status = patch.status`). Each
// call stores what its object gives, and a recovery made through it is reported at the call in the sweep, where the
// re-check belongs; a call that passes no status (`{ progress }`) recovers nothing.
const PATCH_HELPER = `import { createClient } from "@supabase/supabase-js";
const db = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);
export async function claimExport(id: string) {
  const { data } = await db.from("exports").update({ status: "rendering" }).eq("id", id).eq("status", "queued").select();
  return data?.length === 1;
}
async function patchExport(id: string, patch: { status?: string; progress?: number }) {
  const row: Record<string, unknown> = { updated_at: new Date().toISOString() };
  if (patch.status !== undefined) row.status = patch.status;
  if (patch.progress !== undefined) row.progress = patch.progress;
  await db.from("exports").update(row).eq("id", id);
}
export async function reportProgress(id: string, progress: number) {
  await patchExport(id, { progress });
}
export async function requeueStuck() {
  const cutoff = new Date(Date.now() - 15 * 60_000).toISOString();
  const { data: stuck } = await db.from("exports").select("id").eq("status", "rendering").lt("updated_at", cutoff);
  for (const row of stuck ?? []) {
    await patchExport(row.id, %CALL%);
  }
}
`;

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "the helper called with no status from the sweep: nothing is handed back",
      code: PATCH_HELPER.replace("%CALL%", "{ progress: 0 }"),
    },
  ],
  invalid: [
    {
      name: "a sweep that hands rows back through a helper given a data object, by id only",
      code: PATCH_HELPER.replace("%CALL%", '{ status: "queued" }'),
      errors: [
        {
          messageId: "checkInJs",
          line: 20,
          column: 11,
          data: {
            model: "exports",
            field: "status",
            value: "rendering",
            claimLine: "4",
            target: "queued",
            rowFilter: "id",
            checkedWhere: "with a separate read",
            checkLine: "18",
          },
        },
      ],
    },
  ],
});
