// Real code of blind-9 (issue 35) read by what it does: a lease stamped with an instant made from the clock through a
// const, on an upsert that names no conflict columns (the row its check read); a holder's release after such a check,
// which is no take-over and no sweep; an account's lock-out, stamped only on some paths, which is no lease; and a job
// processor defined after a sweep, whose writes name the job's row, not the sweep's; a check made by the read's own
// filter (a live holder only); a settings row named by a template that names a lock; a recovery whose outcome a `let`
// chooses; rows read in another state than the claim's; a version compare-and-set, a lease taken over by the next
// caller, an advisory lock before the check; an in-process release that tests the holder; a renewal helper whose
// answer goes back to its caller. Each case is in our words.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import heartbeatAbort from "../../rules/heartbeat-abort.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** Read the lock row, leave if its expiry is still ahead, then upsert it (primary key `task`) with a new expiry. */
const CHECK_THEN_UPSERT = (release: string) => `import { createClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";

const db = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);

export async function runAlone(task: string, work: () => Promise<void>, ttlMs = 120_000): Promise<boolean> {
  const token = randomUUID();
  const until = new Date(Date.now() + ttlMs).toISOString();
  const { data: row } = await db.from("task_locks").select("locked_until").eq("task", task).maybeSingle();
  if (row && new Date(row.locked_until) > new Date()) return false;
  await db.from("task_locks").upsert({ task, locked_until: until, locked_by: token });
  try {
    await work();
    return true;
  } finally {
    await db.from("task_locks").delete()${release};
  }
}
`;

/** A PIN's lock-out: escalated after the third failure, null before it. It keeps the user out; it guards no work. */
const PIN_LOCKOUT = `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function checkPin(userId: string, pin: string): Promise<boolean> {
  const account = await prisma.pinAccount.findFirst({ where: { userId } });
  if (!account) return false;
  if (account.lockedUntil && account.lockedUntil > new Date()) return false;
  if (account.pin === pin) return true;
  const failures = account.failures + 1;
  const lockedUntil = failures >= 3 ? new Date(Date.now() + 15 * 60_000) : null;
  await prisma.pinAccount.update({ where: { id: account.id }, data: { failures, lockedUntil } });
  return false;
}
`;

/** A start-up sweep of stuck renders, then a queue processor that writes the render its job names. */
const SWEEP_THEN_PROCESSOR = `import { PrismaClient } from "@prisma/client";
import { Worker } from "bullmq";

const prisma = new PrismaClient();

export async function startWorker() {
  const cutoff = new Date(Date.now() - 10 * 60_000);
  const stuck = await prisma.render.findMany({ where: { status: "rendering", updatedAt: { lt: cutoff } } });
  for (const r of stuck) {
    await prisma.render.updateMany({
      where: { id: r.id, status: "rendering", updatedAt: { lt: cutoff } },
      data: { status: "queued" },
    });
  }
  return new Worker("renders", async (job) => {
    const { renderId } = job.data;
    await prisma.render.update({ where: { id: renderId }, data: { status: "rendering" } });
    try {
      await render(renderId);
      await prisma.render.update({ where: { id: renderId }, data: { status: "done" } });
    } catch (err) {
      await prisma.render.update({ where: { id: renderId }, data: { status: "failed" } });
      throw err;
    }
  });
}

declare function render(id: string): Promise<void>;
`;

/** The same sweep, but the stale rows are failed one by one from the scan's own result, by id alone. */
const SWEEP_BY_ID = SWEEP_THEN_PROCESSOR.replace(
  'where: { id: r.id, status: "rendering", updatedAt: { lt: cutoff } },\n      data: { status: "queued" },',
  'where: { id: r.id },\n      data: { status: "queued" },',
);

ruleTester.run(
  "atomic-claim (blind-9: a lease stamped from a clock const on an upsert without conflict columns)",
  atomicClaim,
  {
    valid: [{ name: "a lock-out stamped only after the third failure is no lease", code: PIN_LOCKOUT }],
    invalid: [
      {
        name: "two callers that both read the lease expired both upsert it",
        code: CHECK_THEN_UPSERT('.eq("task", task).eq("locked_by", token)'),
        errors: [
          {
            messageId: "checkThenLease",
            line: 11,
            column: 9,
            data: { model: "task_locks", field: "locked_until", checkLine: "9" },
          },
        ],
      },
    ],
  },
);

ruleTester.run(
  "owner-checked-release (blind-9: the holder's own release after a check-then-upsert lease)",
  ownerCheckedRelease,
  {
    valid: [
      {
        name: "released by the key and the token drawn for this acquisition",
        code: CHECK_THEN_UPSERT('.eq("task", task).eq("locked_by", token)'),
      },
    ],
    invalid: [
      {
        name: "released by the key alone: a holder that outlived its expiry frees the next holder's lease",
        code: CHECK_THEN_UPSERT('.eq("task", task)'),
        errors: [
          {
            messageId: "rowRelease",
            line: 16,
            column: 11,
            data: {
              operation: "delete",
              lock: "lease on task_locks.locked_until",
              acquireLine: "11",
              filter: "task",
              expires: "is taken over once locked_until has passed",
              expiryLine: "10",
            },
          },
        ],
      },
    ],
  },
);

ruleTester.run("conditional-recovery (blind-9: what is no sweep)", conditionalRecovery, {
  valid: [
    {
      name: "the holder's delete in finally, after the check that preceded its claim, is its release, not a take-over",
      code: CHECK_THEN_UPSERT('.eq("task", task).eq("locked_by", token)'),
    },
    {
      name: "a processor defined after a sweep writes the row its job names; the sweep's read does not judge it",
      code: SWEEP_THEN_PROCESSOR,
    },
  ],
  invalid: [
    {
      name: "rows taken from the scan's own result and written by id alone are the sweep's, judged by a separate read",
      code: SWEEP_BY_ID,
      errors: [
        {
          messageId: "sweepCheckInJs",
          line: 10,
          column: 11,
          data: {
            model: "render",
            field: "status",
            value: "rendering",
            checkedWhere: "with a separate read",
            checkLine: "8",
            rowFilter: "id",
          },
        },
      ],
    },
  ],
});

/**
 * A record-edit lock in MongoDB: the read asks only for a live holder (`heldSince` newer than the TTL), a caller that
 * finds one leaves, and the upsert then stamps the record's lock for this editor.
 */
const LIVE_READ_THEN_UPSERT = (release: string) => `import { EditLock } from "./models/edit-lock.js";

const TTL_MS = 90_000;

export async function lockRecord(recordId, editorId) {
  const current = await EditLock.findOne({ recordId, heldSince: { $gt: new Date(Date.now() - TTL_MS) } });
  if (current && String(current.editorId) !== String(editorId)) return { ok: false, by: current.editorId };
  await EditLock.findOneAndUpdate(
    { recordId },
    { $set: { editorId, heldSince: new Date() } },
    { upsert: true, new: true },
  );
  return { ok: true };
}

export async function unlockRecord(recordId, editorId) {
  await EditLock.deleteOne(${release});
}

export async function unlockEverythingOf(editorId) {
  await EditLock.deleteMany({ editorId });
}
`;

/**
 * A general settings table used for per-job locks: the row's key is made from a template that names a lock, its
 * value the time it was taken; the age is judged in JavaScript before the upsert.
 */
const TEMPLATE_KEYED_ROW = (prefix: string) => `import { prisma } from "./db";

const STALE_MS = 15 * 60_000;

export async function tryStart(job: string): Promise<boolean> {
  const key = \`${prefix}:\${job}\`;
  const row = await prisma.setting.findUnique({ where: { key } });
  if (row && Date.now() - Number(row.value) < STALE_MS) return false;
  await prisma.setting.upsert({
    where: { key },
    update: { value: String(Date.now()) },
    create: { key, value: String(Date.now()) },
  });
  return true;
}

export async function finish(job: string): Promise<void> {
  await prisma.setting.deleteMany({ where: { key: \`${prefix}:\${job}\` } });
}
`;

ruleTester.run(
  "atomic-claim (blind-9: a check made by the read's filter; a lock row named by a template)",
  atomicClaim,
  {
    valid: [
      {
        name: "a settings row whose template key names no lock is no lock row",
        code: TEMPLATE_KEYED_ROW("last_run"),
      },
      {
        name: "a read of live holders that nothing tests before the upsert turns nobody away: no check",
        code: LIVE_READ_THEN_UPSERT("{ recordId, editorId }").replace(
          "  if (current && String(current.editorId) !== String(editorId)) return { ok: false, by: current.editorId };\n",
          "  console.log(current);\n",
        ),
      },
    ],
    invalid: [
      {
        name: "two editors whose reads both found no live holder both upsert the lock",
        code: LIVE_READ_THEN_UPSERT("{ recordId, editorId }"),
        errors: [
          {
            messageId: "checkThenLease",
            line: 8,
            data: { model: "EditLock", field: "heldSince", checkLine: "6" },
          },
        ],
      },
      {
        name: "two runs that both judged the job's lock row stale both upsert it",
        code: TEMPLATE_KEYED_ROW("job_lock"),
        errors: [
          {
            messageId: "checkThenTake",
            line: 9,
            data: { value: "`job_lock:${job}`", model: "setting", checkLine: "7" },
          },
        ],
      },
    ],
  },
);

ruleTester.run(
  "owner-checked-release (blind-9: releases of a live-read lease and a template-named row)",
  ownerCheckedRelease,
  {
    valid: [
      {
        name: "released by the record and the editor: a late editor frees only its own lock; logout frees only its own",
        code: LIVE_READ_THEN_UPSERT("{ recordId, editorId }"),
      },
    ],
    invalid: [
      {
        name: "released by the record alone: an editor whose lock lapsed frees the next editor's",
        code: LIVE_READ_THEN_UPSERT("{ recordId }"),
        errors: [
          {
            messageId: "rowRelease",
            line: 17,
            data: {
              operation: "delete",
              lock: "lease on EditLock.heldSince",
              acquireLine: "8",
              filter: "recordId",
              expires: "is taken over once heldSince has passed",
              expiryLine: "6",
            },
          },
        ],
      },
      {
        name: "the job's lock row deleted by its name alone: a run that outlived the stale limit frees its successor's",
        code: TEMPLATE_KEYED_ROW("job_lock"),
        errors: [
          {
            messageId: "rowRelease",
            line: 18,
            data: {
              operation: "delete",
              lock: "lock row `job_lock:${job}` in setting",
              acquireLine: "9",
              filter: "its name (key)",
              expires: "is taken over once value has passed",
              expiryLine: "8",
            },
          },
        ],
      },
    ],
  },
);

/**
 * A claim of queued exports, a sweep that ends stuck ones as failed or done (a `let` given one of two fixed values),
 * and an expiry of archived exports judged in JavaScript: rows read in another state than the claim's.
 */
const OUTCOME_SWEEP = `import { createClient } from "@supabase/supabase-js";

const db = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);

export async function claimNext() {
  const { data } = await db
    .from("exports")
    .update({ status: "exporting", updated_at: new Date().toISOString() })
    .eq("status", "queued")
    .select()
    .limit(1);
  return data?.[0];
}

export async function sweep() {
  const cutoff = new Date(Date.now() - 15 * 60_000).toISOString();
  const { data: stuck } = await db.from("exports").select("id, parts").eq("status", "exporting").lte("updated_at", cutoff);
  for (const row of stuck ?? []) {
    let outcome = "failed";
    if (row.parts > 0) outcome = "done";
    await db.from("exports").update({ status: outcome }).eq("id", row.id);
  }
}

export async function expireArchives() {
  const { data: archived } = await db.from("exports").select("id, archived_at").eq("status", "archived");
  for (const row of archived ?? []) {
    if (Date.now() - new Date(row.archived_at).getTime() > 30 * 86_400_000) {
      await db.from("exports").update({ status: "failed" }).eq("id", row.id);
    }
  }
}
`;

ruleTester.run(
  "conditional-recovery (blind-9: a recovery's outcome chosen on the way; rows read in another state)",
  conditionalRecovery,
  {
    valid: [
      {
        name: "archived rows expired after a JS age test are not the claimed exports",
        code: OUTCOME_SWEEP.replace(/export async function sweep[\s\S]*?\n}\n/, ""),
      },
    ],
    invalid: [
      {
        name: "stuck exports ended by id after a separate stale read, whichever outcome the loop picks",
        code: OUTCOME_SWEEP,
        errors: [
          {
            messageId: "checkInJs",
            line: 21,
            data: {
              model: "exports",
              field: "status",
              value: "exporting",
              claimLine: "6",
              checkedWhere: "with a separate read",
              checkLine: "17",
              rowFilter: "id",
            },
          },
        ],
      },
    ],
  },
);

/**
 * An export run with a lease: a caller that finds the lease lapsed resumes the run by a version-checked write, or
 * creates it; an abandoned run is handed back (running to interrupted, version-checked) and taken up again.
 */
const VERSIONED_RUN = `import { and, eq } from "drizzle-orm";
import { randomUUID } from "node:crypto";
import { db } from "./db";
import { exportRuns } from "./schema";

const LEASE_MS = 10 * 60_000;

export async function startExport(accountId: string) {
  const now = new Date();
  const [existing] = await db.select().from(exportRuns).where(eq(exportRuns.accountId, accountId)).limit(1);
  if (existing?.status === "running" && existing.leaseExpiresAt > now) throw new Error("busy");
  const leaseToken = randomUUID();
  const leaseExpiresAt = new Date(now.getTime() + LEASE_MS);
  if (existing) {
    const [resumed] = await db
      .update(exportRuns)
      .set({ status: "running", leaseToken, leaseExpiresAt, version: existing.version + 1 })
      .where(and(eq(exportRuns.id, existing.id), eq(exportRuns.version, existing.version)))
      .returning();
    if (!resumed) throw new Error("changed");
    return resumed;
  }
  const [created] = await db
    .insert(exportRuns)
    .values({ accountId, status: "running", leaseToken, leaseExpiresAt, version: 1 })
    .returning();
  return created;
}

export async function abandon(run: { id: string; version: number }) {
  const [back] = await db
    .update(exportRuns)
    .set({ status: "interrupted", leaseToken: null, leaseExpiresAt: null, version: run.version + 1, updatedAt: new Date() })
    .where(and(eq(exportRuns.id, run.id), eq(exportRuns.status, "running"), eq(exportRuns.version, run.version)))
    .returning();
  if (!back) return;
  await notifyOwner(back.id);
  await db.update(exportRuns).set({ status: "running" }).where(eq(exportRuns.id, back.id));
}

async function notifyOwner(id: string) {
  console.log(id);
}

export async function activeRuns() {
  return db.select().from(exportRuns).where(eq(exportRuns.status, "running"));
}
`;

ruleTester.run("atomic-claim (blind-9: a lease taken over by a version-checked write)", atomicClaim, {
  valid: [{ name: "the version read by the check is pinned in the write: one step", code: VERSIONED_RUN }],
  invalid: [
    {
      name: "the same take-over by id alone: two callers that read the lease lapsed both take it",
      code: VERSIONED_RUN.replace(", eq(exportRuns.version, existing.version)", ""),
      errors: [
        {
          messageId: "checkThenLease",
          line: 15,
          data: { model: "exportRuns", field: "leaseExpiresAt", checkLine: "10" },
        },
      ],
    },
  ],
});

ruleTester.run(
  "require-stale-recovery (blind-9: a lease's take-over answers the run it stamps)",
  requireStaleRecovery,
  {
    valid: [
      {
        name: "the inserted run carries the lease the take-over resumes; a run handed back from running is no hold",
        code: VERSIONED_RUN,
      },
    ],
    invalid: [],
  },
);

/** A lease row read and upserted inside a transaction that first took a transaction-scoped advisory lock. */
const ADVISORY_LEASE = `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();
const LEASE_MS = 5 * 60_000;

export async function takeImportLease(source: string, holder: string) {
  return prisma.$transaction(async (tx) => {
    const [row] = await tx.$queryRawUnsafe<{ ok: boolean }[]>("SELECT pg_try_advisory_xact_lock(hashtext($1)) AS ok", source);
    if (!row?.ok) return false;
    const now = new Date();
    const lease = await tx.importLease.findUnique({ where: { source } });
    if (lease && lease.expiresAt > now) return false;
    await tx.importLease.upsert({
      where: { source },
      create: { source, holder, expiresAt: new Date(now.getTime() + LEASE_MS) },
      update: { holder, expiresAt: new Date(now.getTime() + LEASE_MS) },
    });
    return true;
  });
}

export async function releaseImportLease(source: string, holder: string) {
  await prisma.importLease.deleteMany({ where: { source, holder } });
}
`;

ruleTester.run("atomic-claim (blind-9: a check and a write under a transaction's advisory lock)", atomicClaim, {
  valid: [{ name: "callers of the advisory lock read and write one after another", code: ADVISORY_LEASE }],
  invalid: [
    {
      name: "the same read and upsert with no advisory lock before them",
      code: ADVISORY_LEASE.replace(/ {4}const \[row\][^\n]*\n {4}if \(!row\?\.ok\) return false;\n/, ""),
      errors: [
        {
          messageId: "checkThenLease",
          line: 11,
          data: { model: "importLease", field: "expiresAt", checkLine: "9" },
        },
      ],
    },
  ],
});

/** A lease helper module: its renewal tells the caller whether the lease was extended, errors included. */
const RENEWAL_ANSWERED = `const { randomUUID } = require("node:crypto");
const { redis } = require("./redis");

const EXTEND = \`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end\`;

const extendLease = async (name, token, ms) => {
  try {
    const result = await redis.eval(EXTEND, 1, \`lease:\${name}\`, token, ms);
    return result === 1;
  } catch (error) {
    console.error("extend failed", error);
    return false;
  }
};

const takeLease = async (name, ms) => {
  const token = randomUUID();
  const ok = await redis.set(\`lease:\${name}\`, token, "PX", ms, "NX");
  if (ok !== "OK") return null;
  return { token, extend: (more) => extendLease(name, token, more ?? ms) };
};

module.exports = { takeLease, extendLease };
`;

/** Room holds kept in memory: a release told the guest checks that the guest holds the room. */
const ROOM_HOLDS = `class RoomHolds {
  constructor() {
    this.holds = new Map();
  }

  hold(roomId, guestId) {
    const current = this.holds.get(roomId);
    if (current && current.until > Date.now()) return false;
    this.holds.set(roomId, { guestId, until: Date.now() + 10 * 60_000 });
    return true;
  }

  release(roomId, guestId) {
    if (guestId) {
      const current = this.holds.get(roomId);
      if (current && current.guestId !== guestId) return false;
    }
    return this.holds.delete(roomId);
  }
}

module.exports = { RoomHolds };
`;

ruleTester.run(
  "owner-checked-release (blind-9: releases that check the holder before they delete)",
  ownerCheckedRelease,
  {
    valid: [
      {
        name: "an in-process release that leaves when another guest holds the room",
        code: ROOM_HOLDS,
      },
    ],
    invalid: [
      {
        name: "an in-process release by key alone frees the hold another guest took after this one expired",
        code: ROOM_HOLDS.replace(/ {4}if \(guestId\) \{[\s\S]*?\n {4}\}\n/, ""),
        errors: [
          {
            messageId: "tableRelease",
            line: 14,
            column: 12,
            data: {
              table: "this.holds",
              acquireLine: "9",
              expiry: "An expired entry counts as free",
              expiryLine: "8",
            },
          },
        ],
      },
    ],
  },
);

ruleTester.run("heartbeat-abort (blind-9: a renewal's answer handed back to the caller)", heartbeatAbort, {
  valid: [
    {
      name: "the handle's extend returns the helper's answer: a caught failure is reported as false to the caller",
      code: RENEWAL_ANSWERED,
    },
  ],
  invalid: [],
});

/** Posts still `processing` taken one by one by bumping their `updated_at`, the result deciding who publishes. */
const STAMP_AS_LOCK = `import { createClient } from "@supabase/supabase-js";

const supabase = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);

export async function publishProcessing(publish: (post: unknown) => Promise<void>) {
  const { data: posts } = await supabase.from("scheduled_posts").select("id").eq("status", "processing").limit(5);
  for (const post of posts ?? []) {
    const { data: lockedPost } = await supabase
      .from("scheduled_posts")
      .update({ updated_at: new Date().toISOString() })
      .eq("id", post.id)
      .eq("status", "processing")
      .select()
      .single();
    if (!lockedPost) continue;
    await publish(lockedPost);
  }
}
`;

ruleTester.run("atomic-claim (blind-9: a stamp taken as a lock)", atomicClaim, {
  valid: [
    {
      name: "the stamp is required to be older than a cutoff: a second caller matches nothing",
      code: STAMP_AS_LOCK.replace(
        '.eq("status", "processing")\n      .select()',
        '.eq("status", "processing")\n      .lt("updated_at", new Date(Date.now() - 5 * 60_000).toISOString())\n      .select()',
      ),
    },
    {
      name: "a touch whose result is not named as a lock is a heartbeat, not a claim",
      code: STAMP_AS_LOCK.replaceAll("lockedPost", "fresh"),
    },
  ],
  invalid: [
    {
      name: "every caller's bump matches the same processing row and returns it",
      code: STAMP_AS_LOCK,
      errors: [
        {
          messageId: "stampOnlyClaim",
          line: 8,
          data: {
            model: "scheduled_posts",
            field: "status",
            value: "processing",
            stamped: "updated_at",
            checkLine: "15",
          },
        },
      ],
    },
  ],
});
