// Real code of blind-14's first sight and of the crash run before it (issue 35), read by what it does, in our words:
// - a flag set and left in one uninterrupted run (no await or yield after the set): no other call can find it set in
//   between, so a way out that leaves it set keeps a state on purpose (a budget switch cleared by a later check, a
//   tokenizer's quote state); only a `throw` leaves it by mistake, and the same way out after an await still does;
// - a timer that deletes an in-process lock table's entry, started by any method (an `extend` that restarts it): the
//   entry's expiry, not a release by key; the holder's own release is still asked for its owner test;
// - a state whose -ING word is itself a waiting one (`WITHDRAW_PENDING`): a request waiting for someone, not work
//   under way;
// - SQL composed of fragments: `Prisma.join(list, " AND ")` of `Prisma.sql` pieces (a list pushed onto ends in one more
//   unknown AND term), a fragment held in a const, an optional fragment (`${owner ? Prisma.sql`AND …` :
//   Prisma.empty}`), a `let` grown only by optional AND terms (`sql += " AND queue = ?"`), and an UPDATE's `ORDER BY … LIMIT` beside a
//   `RETURNING`, which neither grammar reads together;
// - a statement written into a const and handed to one call (`const n = await db.$executeRaw(q)`): its result and its
//   rejection are followed from that call, while findings stay at its text;
// - an unknown term ANDed beside known ones only narrows a stale scan;
// - reads that keep their rows: drizzle's `.for("update")`, and any read of a libSQL transaction opened for writing;
// - a lock row taken over when expired among alternatives not read (the holder's own re-entry, a type test): the
//   module answers Q1; a lock document deleted by the fixed key it was inserted under is that lock row;
// - a write under a row lock (`FOR UPDATE` earlier in its transaction) on a way decided by what the lock read: as
//   conditional as a compare-and-set, so no fence is asked of it;
// - an acquire alone in a `try` (or followed only by `try`s whose `finally` releases): its `catch` runs when the
//   acquire is refused, and holds nothing;
// - an in-flight table whose callers share the work they find (`if (p) return await p`): the entry is deleted after the
//   work, so a rejection leaves it for every later caller (a cache of results keeps its entries and is no lock);
// - a renewal helper of the module that answers its caller (`return result === 1`, `catch { return false }`): the
//   answer is followed to the module's calls, and one that drops it is reported there;
// - a lease's holder column by what the claim does (stamped with the caller's value and compared with it in one
//   alternative: its re-entry), whatever its name, and a lock row named by the constant key its claim picks it by:
//   a heartbeat or a release pinned to that column is this holder's; one by the constant key alone is anyone's.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import heartbeatAbort from "../../rules/heartbeat-abort.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A switch set when a budget check fails and cleared by a later check that finds the spend back under it. */
const BUDGET_SWITCH = `let intakePaused = false;
export function isIntakePaused() {
  return intakePaused;
}
export function reviewSpend(spentToday: number, dailyCap: number) {
  if (spentToday >= dailyCap) {
    if (!intakePaused) {
      intakePaused = true;
      events.emit("budget:exceeded", { spentToday, dailyCap });
    }
  }
  if (intakePaused && spentToday < dailyCap) {
    intakePaused = false;
  }
}
`;

/** A tokenizer's quote state, toggled per character in one synchronous pass. */
const QUOTE_STATE = `export class CsvScanner {
  private quoted = false;
  scan(line: string) {
    const cells: string[] = [];
    let cell = "";
    for (const ch of line) {
      if (ch === '"') {
        if (!this.quoted) {
          this.quoted = true;
          continue;
        }
        this.quoted = false;
        continue;
      }
      if (ch === "," && !this.quoted) {
        cells.push(cell);
        cell = "";
        continue;
      }
      cell += ch;
    }
    return cells;
  }
}
`;

/** The same guard held across an await: a way out that skips the reset leaves it set for good. */
const REINDEX_GUARD = (leave: string) => `let reindexing = false;
export async function reindex(store: SearchStore) {
  if (reindexing) return;
  reindexing = true;
  const docs = await store.loadAll();
  ${leave}
  await store.replaceIndex(docs);
  reindexing = false;
}
`;

/** A synchronous guard left set by a \`throw\` before its reset. */
const SYNC_THROW = `let rendering = false;
export function renderAll(views: View[]) {
  if (rendering) return;
  rendering = true;
  if (views.length === 0) throw new Error("nothing to render");
  for (const v of views) v.draw();
  rendering = false;
}
`;

const TURNED_AWAY = (flag: string) =>
  `\`${flag}\` stays true and every later call is turned away until the process restarts.`;

ruleTester.run("release-in-finally (a flag kept in one uninterrupted run)", releaseInFinally, {
  valid: [
    { name: "a switch cleared by a later check, no await", code: BUDGET_SWITCH },
    { name: "a tokenizer's state toggled per character", code: QUOTE_STATE },
  ],
  invalid: [
    {
      name: "the same early way out after an await leaves the guard set",
      code: REINDEX_GUARD("if (docs.length === 0) return;"),
      errors: [
        {
          messageId: "missedOnReturn",
          line: 4,
          data: { exitLine: "6", lock: "the guard `reindexing`", consequence: TURNED_AWAY("reindexing") },
          suggestions: [
            {
              messageId: "moveToFinally",
              output: `let reindexing = false;
export async function reindex(store: SearchStore) {
  if (reindexing) return;
  reindexing = true;
  try {
    const docs = await store.loadAll();
    if (docs.length === 0) return;
    await store.replaceIndex(docs);
  } finally {
    reindexing = false;
  }
}
`,
            },
          ],
        },
      ],
    },
    {
      name: "a throw before the reset of a synchronous guard",
      code: SYNC_THROW,
      errors: [
        {
          messageId: "missedOnThrow",
          line: 4,
          data: { exitLine: "5", lock: "the guard `rendering`", consequence: TURNED_AWAY("rendering") },
          suggestions: [
            {
              messageId: "moveToFinally",
              output: `let rendering = false;
export function renderAll(views: View[]) {
  if (rendering) return;
  rendering = true;
  try {
    if (views.length === 0) throw new Error("nothing to render");
    for (const v of views) v.draw();
  } finally {
    rendering = false;
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

/**
 * An in-process stand-in for a distributed lock: each entry keeps its expiry timer, `extend` restarts it, and
 * `release` cancels it after an owner test. Every timer fires only while its own entry is there.
 */
const MEMORY_LOCKS = (release: string) => `export class MemoryLocks {
  private held = new Map<string, { owner: string; timer: NodeJS.Timeout }>();
  async acquire(name: string, ttlMs: number, owner: string) {
    if (this.held.has(name)) return false;
    const timer = setTimeout(() => {
      this.held.delete(name);
    }, ttlMs);
    this.held.set(name, { owner, timer });
    return true;
  }
  async extend(name: string, ttlMs: number, owner: string) {
    const entry = this.held.get(name);
    if (!entry || entry.owner !== owner) return false;
    clearTimeout(entry.timer);
    const timer = setTimeout(() => {
      this.held.delete(name);
    }, ttlMs);
    this.held.set(name, { owner, timer });
    return true;
  }
  async release(name: string, owner: string) {
    const entry = this.held.get(name);
    ${release}
    clearTimeout(entry.timer);
    this.held.delete(name);
    return true;
  }
}
`;

ruleTester.run("owner-checked-release (timers of an in-process lock table)", ownerCheckedRelease, {
  valid: [
    {
      name: "a timer started by another method is the entry's expiry, and the release checks the owner",
      code: MEMORY_LOCKS("if (!entry || entry.owner !== owner) return false;"),
    },
  ],
  invalid: [
    {
      name: "the release that checks no owner is still reported, beside the timers",
      code: MEMORY_LOCKS("if (!entry) return false;"),
      errors: [
        {
          messageId: "tableRelease",
          line: 25,
          data: {
            table: "this.held",
            acquireLine: "8",
            expiry: "A timer deletes each entry",
            expiryLine: "5",
          },
        },
      ],
    },
  ],
});

/** A withdrawal request: the item waits for an operator, it is not being worked on. */
const WITHDRAWAL = (state: string) => `import { prisma } from "./db";
export async function requestWithdrawal(itemId: string, userId: string) {
  const moved = await prisma.inventoryItem.updateMany({
    where: { id: itemId, ownerId: userId, state: "OWNED" },
    data: { state: "${state}", requestedAt: new Date() },
  });
  if (moved.count !== 1) throw new Error("item is not available");
  await notifyOperators(itemId);
}
`;

ruleTester.run("require-stale-recovery (a state whose -ING word is a waiting one)", requireStaleRecovery, {
  valid: [
    { name: "WITHDRAW_PENDING waits", code: WITHDRAWAL("WITHDRAW_PENDING") },
    { name: "payout_pending waits", code: WITHDRAWAL("payout_pending") },
  ],
  invalid: [
    {
      name: "WITHDRAW_PROCESSING is under way",
      code: WITHDRAWAL("WITHDRAW_PROCESSING"),
      errors: [
        {
          messageId: "missingRecovery",
          line: 3,
          data: { model: "inventoryItem", field: "state", value: "WITHDRAW_PROCESSING" },
        },
      ],
    },
  ],
});

/**
 * A claim whose WHERE is a list of `Prisma.sql` fragments joined with AND (one pushed only for a kind), MySQL-style
 * `ORDER BY … LIMIT` beside `RETURNING`; a heartbeat whose statement sits in a const handed to `$executeRaw`, its
 * count only logged.
 */
const JOINED_CLAIM = `import { Prisma } from "@prisma/client";
import { db } from "./db";

export async function claimExports(workerId: string, kind?: string) {
  const conditions: Prisma.Sql[] = [Prisma.sql\`state = 'queued'\`, Prisma.sql\`attempts < 5\`];
  if (kind) conditions.push(Prisma.sql\`kind = \${kind}\`);
  const where = Prisma.sql\`WHERE \${Prisma.join(conditions, " AND ")}\`;
  const claim = Prisma.sql\`
    UPDATE export_jobs
    SET state = 'exporting', worker = \${workerId}, heartbeat_at = NOW()
    \${where}
    ORDER BY queued_at
    LIMIT 5
    RETURNING id\`;
  return db.$queryRaw<{ id: string }[]>(claim);
}

export async function heartbeat(id: string, workerId: string) {
  const touch = Prisma.sql\`
    UPDATE export_jobs SET heartbeat_at = NOW()
    WHERE id = \${id} AND worker = \${workerId} AND state = 'exporting'\`;
  const touched = await db.$executeRaw(touch);
  if (touched === 0) console.warn("export lease lost", id);
}
`;

/**
 * A sweep whose stale read adds an owner term only when one is given (`${workerId ? Prisma.sql`AND …` :
 * Prisma.empty}`), then requeues each row by id.
 */
const OPTIONAL_FRAGMENT_SWEEP = `import { Prisma } from "@prisma/client";
import { db } from "./db";

export async function claimExports(workerId: string) {
  return db.$queryRaw<{ id: string }[]>(Prisma.sql\`
    UPDATE export_jobs SET state = 'exporting', worker = \${workerId}, heartbeat_at = NOW()
    WHERE state = 'queued' RETURNING id\`);
}

export async function requeueStalled(workerId?: string) {
  const stalled = Prisma.sql\`
    SELECT id FROM export_jobs
    WHERE state = 'exporting' AND heartbeat_at < NOW() - INTERVAL '5 minutes'
    \${workerId ? Prisma.sql\`AND worker = \${workerId}\` : Prisma.empty}\`;
  const rows = await db.$queryRaw<{ id: string }[]>(stalled);
  for (const row of rows) {
    await db.$executeRaw\`UPDATE export_jobs SET state = 'queued', worker = NULL WHERE id = \${row.id}\`;
  }
}
`;

/**
 * libSQL: the claim reads and writes inside `transaction("write")`; the sweep's text is a `let` grown by an optional
 * AND term.
 */
const CLAIM_IN_TRANSACTION = (part: string) => `import { client } from "./turso";

export async function claimNext(worker: string) {
${part}
    args.push(queue);
  }
  const result = await client.execute({ sql, args });
  return result.rowsAffected;
}
`;

/** Drizzle: the next row picked `.for("update", { skipLocked: true })` and claimed in the same transaction. */
const DRIZZLE_PICK = (part: string) => `import { and, asc, eq } from "drizzle-orm";
import { db } from "./client";
import { renders } from "./schema";

export async function claimRender() {
  return db.transaction(async (tx) => {
    const [next] = await tx
      .select()
      .from(renders)
      .where(eq(renders.status, "queued"))
      .orderBy(asc(renders.queuedAt))
${part}
      .limit(1);
    if (!next) return undefined;
    await tx.update(renders).set({ status: "rendering", updatedAt: new Date() }).where(eq(renders.id, next.id));
    return next;
  });
}
`;

/**
 * A Mongo lease taken over when expired, re-entered by its holder, or when its expiry is not a date (an operator not
 * read), else inserted under a unique key.
 */
const MONGO_LEASE = (part: string) => `import type { Db } from "mongodb";

const LEASE_MS = 60_000;

export async function takeLease(db: Db, name: string, holder: string) {
  const leases = db.collection("leases");
  const now = new Date();
  const taken = await leases.findOneAndUpdate(
${part}
    { $set: { holder, expiresAt: new Date(now.getTime() + LEASE_MS) } },
    { returnDocument: "after" },
  );
  if (taken) return true;
  try {
    await leases.insertOne({ name, holder, expiresAt: new Date(now.getTime() + LEASE_MS) });
    return true;
  } catch (e: any) {
    if (e.code === 11000) return false;
    throw e;
  }
}

export async function dropLease(db: Db, name: string, holder: string) {
  await db.collection("leases").deleteOne({ name, holder });
}
`;

/**
 * A lock document inserted under a fixed `_id`; a stale one (by its start time, judged in JS) is deleted by that
 * `_id` and inserted again; the release deletes it by `_id` too.
 */
const NAMED_LOCK_DOCUMENT = `import { getDb } from "./mongo";

const STALE_MS = 10 * 60 * 1000;

export async function acquireNightlyLock(): Promise<boolean> {
  const locks = (await getDb()).collection("job_locks");
  const now = new Date();
  try {
    await locks.insertOne({ _id: "nightly", lockedAt: now, lockedBy: process.pid });
    return true;
  } catch (err: any) {
    if (err.code !== 11000) throw err;
    const current = await locks.findOne({ _id: "nightly" });
    if (current && now.getTime() - current.lockedAt.getTime() > STALE_MS) {
      await locks.deleteOne({ _id: "nightly" });
      await locks.insertOne({ _id: "nightly", lockedAt: now, lockedBy: process.pid });
      return true;
    }
    return false;
  }
}

export async function releaseNightlyLock() {
  const locks = (await getDb()).collection("job_locks");
  await locks.deleteOne({ _id: "nightly" });
}
`;

/**
 * A run switch taken over when lapsed, under `SELECT … FOR UPDATE` and a test of what it read; a quick path claims
 * it after a plain read.
 */
const RUN_SWITCH = (part: string) => `import { prisma } from "./prisma";

const TTL_MS = 15 * 60 * 1000;

export async function startImport(name: string, host: string) {
  return prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ running: boolean; expires_at: Date | null }[]>\`
${part}
    const row = rows[0];
    if (!row) return false;
    const now = new Date();
    const lapsed = row.running && row.expires_at !== null && row.expires_at < now;
    if (lapsed) {
      await tx.importRun.update({ where: { name }, data: { running: false, lastResult: "lapsed" } });
    }
    if (row.running && !lapsed) return false;
    await tx.importRun.update({
      where: { name },
      data: { running: true, host, expiresAt: new Date(now.getTime() + TTL_MS) },
    });
    return true;
  });
}

export async function startImportQuick(name: string, host: string) {
  const now = new Date();
  return prisma.$transaction(async (tx) => {
    await tx.importRun.updateMany({
      where: { name, running: true, expiresAt: { lt: now } },
      data: { running: false, lastResult: "lapsed" },
    });
    const current = await tx.importRun.findUnique({ where: { name } });
    if (current?.running) return false;
    await tx.importRun.upsert({
      where: { name },
      create: { name, running: true, host, expiresAt: new Date(now.getTime() + TTL_MS) },
      update: { running: true, host, expiresAt: new Date(now.getTime() + TTL_MS) },
    });
    return true;
  });
}

export async function finishImport(name: string, host: string) {
  await prisma.importRun.updateMany({ where: { name, host, running: true }, data: { running: false } });
}
`;

/**
 * A semaphore acquire with a wait limit, alone in a `try` whose `catch` answers busy; the work releases in a
 * `finally`.
 */
const SEMAPHORE_IN_TRY = (part: string) => `import { Semaphore } from "./semaphore";

const slots = new Semaphore(4);

export async function render(job: Job) {
  try {
    await slots.acquire(30_000);
${part}
    await report(job.id, "busy");
    return { ok: false };
  }
  try {
    return { ok: true, out: await draw(job) };
  } finally {
    slots.release();
  }
}
`;

ruleTester.run("require-stale-recovery (statements composed of fragments)", requireStaleRecovery, {
  valid: [
    {
      name: "a sweep narrowed by an optional AND term answers Q1",
      code: CLAIM_IN_TRANSACTION(`  const tx = await client.transaction("write");
  try {
    const next = await tx.execute({ sql: "SELECT id FROM renders WHERE status = 'queued' LIMIT 1", args: [] });
    if (next.rows.length === 0) return undefined;
    const id = next.rows[0].id as string;
    await tx.execute({ sql: "UPDATE renders SET status = 'rendering', worker = ?, touched_at = ? WHERE id = ?", args: [worker, Date.now(), id] });
    await tx.commit();
    return id;
  } finally {
    tx.close();
  }
}

export async function failStalled(limitMs: number, queue?: string) {
  let sql = "UPDATE renders SET status = 'failed' WHERE status = 'rendering' AND touched_at < ?";
  const args: (string | number)[] = [Date.now() - limitMs];
  if (queue) {
    sql += " AND queue = ?";`),
    },
    {
      name: "an expired lease is taken over, beside alternatives not read",
      code: MONGO_LEASE(`    {
      name,
      $or: [{ holder }, { expiresAt: { $lte: now } }, { expiresAt: { $not: { $type: "date" } } }],
    },`),
    },
  ],
  invalid: [
    {
      name: "the joined claim is read",
      code: JOINED_CLAIM,
      errors: [
        {
          messageId: "missingRecovery",
          line: 8,
          data: {
            model: "export_jobs",
            field: "state",
            value: "exporting",
          },
        },
      ],
    },
    {
      name: "a reassigned text is unknown, so no sweep",
      code: CLAIM_IN_TRANSACTION(`  const tx = await client.transaction("write");
  try {
    const next = await tx.execute({ sql: "SELECT id FROM renders WHERE status = 'queued' LIMIT 1", args: [] });
    if (next.rows.length === 0) return undefined;
    const id = next.rows[0].id as string;
    await tx.execute({ sql: "UPDATE renders SET status = 'rendering', worker = ?, touched_at = ? WHERE id = ?", args: [worker, Date.now(), id] });
    await tx.commit();
    return id;
  } finally {
    tx.close();
  }
}

export async function failStalled(limitMs: number, queue?: string) {
  let sql = "UPDATE renders SET status = 'failed' WHERE status = 'rendering' AND touched_at < ?";
  const args: (string | number)[] = [Date.now() - limitMs];
  if (queue) {
    sql = "UPDATE renders SET status = 'failed'";`),
      errors: [
        {
          messageId: "missingRecovery",
          line: 9,
          data: {
            model: "renders",
            field: "status",
            value: "rendering",
          },
        },
      ],
    },
    {
      name: "no expired alternative",
      code: MONGO_LEASE(`    { name, $or: [{ holder }, { expiresAt: { $not: { $type: "date" } } }] },`),
      errors: [
        {
          messageId: "missingExpiry",
          line: 15,
          data: {
            model: "leases",
          },
        },
      ],
    },
  ],
});

ruleTester.run("heartbeat-abort (a statement run from a const)", heartbeatAbort, {
  valid: [],
  invalid: [
    {
      name: "the count is only logged",
      code: JOINED_CLAIM,
      errors: [
        {
          messageId: "noAbort",
          line: 19,
          data: {
            lock: "the claimed export_jobs row",
            where: "claimed at line 8",
            checkLine: "23",
          },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery (optional fragments, named lock documents)", conditionalRecovery, {
  valid: [],
  invalid: [
    {
      name: "the optional owner term leaves a stale scan, and each row is requeued by id",
      code: OPTIONAL_FRAGMENT_SWEEP,
      errors: [
        {
          messageId: "checkInJs",
          line: 17,
          data: {
            model: "export_jobs",
            field: "state",
            value: "exporting",
            claimLine: "5",
            checkedWhere: "with a separate read",
            checkLine: "11",
            rowFilter: "id",
          },
        },
      ],
    },
    {
      name: "judged in JS, deleted by the fixed _id",
      code: NAMED_LOCK_DOCUMENT,
      errors: [
        {
          messageId: "lockRowCheckInJs",
          line: 15,
          data: {
            model: "job_locks",
            claimLine: "9",
            checkedWhere: "in JavaScript",
            checkLine: "14",
            rowFilter: "_id",
          },
        },
      ],
    },
  ],
});

ruleTester.run("atomic-claim (reads that lock the row)", atomicClaim, {
  valid: [
    {
      name: "libSQL write transaction",
      code: CLAIM_IN_TRANSACTION(`  const tx = await client.transaction("write");
  try {
    const next = await tx.execute({ sql: "SELECT id FROM renders WHERE status = 'queued' LIMIT 1", args: [] });
    if (next.rows.length === 0) return undefined;
    const id = next.rows[0].id as string;
    await tx.execute({ sql: "UPDATE renders SET status = 'rendering', worker = ?, touched_at = ? WHERE id = ?", args: [worker, Date.now(), id] });
    await tx.commit();
    return id;
  } finally {
    tx.close();
  }
}

export async function failStalled(limitMs: number, queue?: string) {
  let sql = "UPDATE renders SET status = 'failed' WHERE status = 'rendering' AND touched_at < ?";
  const args: (string | number)[] = [Date.now() - limitMs];
  if (queue) {
    sql += " AND queue = ?";`),
    },
    { name: "drizzle for update", code: DRIZZLE_PICK(`      .for("update", { skipLocked: true })`) },
  ],
  invalid: [
    {
      name: "deferred transaction",
      code: CLAIM_IN_TRANSACTION(`  const tx = await client.transaction("deferred");
  try {
    const next = await tx.execute({ sql: "SELECT id FROM renders WHERE status = 'queued' LIMIT 1", args: [] });
    if (next.rows.length === 0) return undefined;
    const id = next.rows[0].id as string;
    await tx.execute({ sql: "UPDATE renders SET status = 'rendering', worker = ?, touched_at = ? WHERE id = ?", args: [worker, Date.now(), id] });
    await tx.commit();
    return id;
  } finally {
    tx.close();
  }
}

export async function failStalled(limitMs: number, queue?: string) {
  let sql = "UPDATE renders SET status = 'failed' WHERE status = 'rendering' AND touched_at < ?";
  const args: (string | number)[] = [Date.now() - limitMs];
  if (queue) {
    sql += " AND queue = ?";`),
      errors: [
        {
          messageId: "checkThenAct",
          line: 9,
          data: {
            model: "renders",
            field: "status",
            value: "rendering",
            checkedWhere: "with a separate read",
            checkLine: "6",
          },
          suggestions: [
            {
              messageId: "addCondition",
              output: `import { client } from "./turso";

export async function claimNext(worker: string) {
  const tx = await client.transaction("deferred");
  try {
    const next = await tx.execute({ sql: "SELECT id FROM renders WHERE status = 'queued' LIMIT 1", args: [] });
    if (next.rows.length === 0) return undefined;
    const id = next.rows[0].id as string;
    await tx.execute({ sql: "UPDATE renders SET status = 'rendering', worker = ?, touched_at = ? WHERE status <> 'rendering' AND id = ?", args: [worker, Date.now(), id] });
    await tx.commit();
    return id;
  } finally {
    tx.close();
  }
}

export async function failStalled(limitMs: number, queue?: string) {
  let sql = "UPDATE renders SET status = 'failed' WHERE status = 'rendering' AND touched_at < ?";
  const args: (string | number)[] = [Date.now() - limitMs];
  if (queue) {
    sql += " AND queue = ?";
    args.push(queue);
  }
  const result = await client.execute({ sql, args });
  return result.rowsAffected;
}
`,
            },
          ],
        },
      ],
    },
    {
      name: "plain drizzle pick",
      code: DRIZZLE_PICK(`      .offset(0)`),
      errors: [
        {
          messageId: "checkThenAct",
          line: 15,
          data: {
            model: "renders",
            field: "status",
            value: "rendering",
            checkedWhere: "with a separate read",
            checkLine: "7",
          },
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release (a named lock document)", ownerCheckedRelease, {
  valid: [],
  invalid: [
    {
      name: "released by _id alone",
      code: NAMED_LOCK_DOCUMENT,
      errors: [
        {
          messageId: "rowRelease",
          line: 25,
          data: {
            operation: "delete",
            lock: "lock row in job_locks",
            acquireLine: "9",
            filter: "_id",
            expires: "is swept when stale",
            expiryLine: "15",
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing (a take-over under a row lock)", requireFencing, {
  valid: [
    {
      name: "checked under FOR UPDATE",
      code: RUN_SWITCH(`      SELECT "running", "expires_at" FROM "import_runs" WHERE "name" = \${name} FOR UPDATE\`;`),
    },
  ],
  invalid: [
    {
      name: "after a plain read",
      code: RUN_SWITCH(`      SELECT "running", "expires_at" FROM "import_runs" WHERE "name" = \${name}\`;`),
      errors: [
        {
          messageId: "unfencedWrite",
          line: 14,
          data: {
            model: "importRun",
            target: "false",
            field: "running",
            value: "true",
            claimLine: "34",
          },
          suggestions: [
            {
              messageId: "addFence",
              output: RUN_SWITCH(
                `      SELECT "running", "expires_at" FROM "import_runs" WHERE "name" = \${name}\`;`,
              ).replace(
                "where: { name }, data: { running: false",
                "where: { name, running: true }, data: { running: false",
              ),
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("release-in-finally (an acquire refused in its own try)", releaseInFinally, {
  valid: [{ name: "the catch runs only when the acquire is refused", code: SEMAPHORE_IN_TRY(`  } catch (err) {`) }],
  invalid: [
    {
      name: "work after the acquire in the same try",
      code: SEMAPHORE_IN_TRY(`    await warm(job);
  } catch (err) {`),
      errors: [
        {
          messageId: "missedOnReturn",
          line: 7,
          data: {
            lock: "the mutex `slots`",
            exitLine: "11",
            consequence: "every later caller waits on `slots` forever.",
          },
        },
      ],
    },
  ],
});

/** Thumbnails rendered once per key: a caller that finds the work in flight shares it; the entry is deleted after the await, so a rejection leaves it. */
const THUMBNAILS_IN_FLIGHT = `const inflight = new Map<string, Promise<Buffer>>();

export async function thumbnail(id: string, width: number) {
  const key = \`\${id}@\${width}\`;
  const running = inflight.get(key);
  if (running) {
    return await running;
  }
  const work = (async () => {
    const original = await storage.read(id);
    return resize(original, width);
  })();
  inflight.set(key, work);
  const out = await work;
  inflight.delete(key);
  return out;
}
`;

/** The same map kept as a bounded cache of results: entries stay after the work, evicted by size. */
const THUMBNAILS_CACHE = `const rendered = new Map<string, Promise<Buffer>>();

export async function thumbnail(id: string, width: number) {
  const key = \`\${id}@\${width}\`;
  const cached = rendered.get(key);
  if (cached) {
    return await cached;
  }
  const work = (async () => resize(await storage.read(id), width))();
  rendered.set(key, work);
  if (rendered.size > 500) rendered.delete(rendered.keys().next().value!);
  return work;
}
`;

ruleTester.run("release-in-finally (work in flight shared by the callers who find it)", releaseInFinally, {
  valid: [{ name: "a cache of results", code: THUMBNAILS_CACHE }],
  invalid: [
    {
      name: "the rejected promise stays for every later caller",
      code: THUMBNAILS_IN_FLIGHT,
      errors: [
        {
          messageId: "missedOnRejection",
          line: 13,
          data: {
            lock: "the entry this call adds to `inflight`",
            exitLine: "14",
            releaseLine: "15",
            consequence:
              "the rejected promise stays in `inflight`, and every later call for the key gets it instead of trying again, until the process restarts.",
            hint: "",
          },
          suggestions: [
            {
              messageId: "moveToFinally",
              output: `const inflight = new Map<string, Promise<Buffer>>();

export async function thumbnail(id: string, width: number) {
  const key = \`\${id}@\${width}\`;
  const running = inflight.get(key);
  if (running) {
    return await running;
  }
  const work = (async () => {
    const original = await storage.read(id);
    return resize(original, width);
  })();
  inflight.set(key, work);
  try {
    const out = await work;
    return out;
  } finally {
    inflight.delete(key);
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

/**
 * A report lock whose renewal helper answers its caller (`false` when the script finds another token or fails), and the
 * timer that calls it: `beat` is what the timer does with the answer.
 */
const REPORT_LOCK = (beat: string) => `import Redis from "ioredis";

const redis = new Redis();
const EXTEND = \`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end\`;
const RELEASE = \`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end\`;

export class ReportLock {
  static async take(key: string, token: string, ttlMs: number) {
    return (await redis.set(\`lock:\${key}\`, token, "PX", ttlMs, "NX")) === "OK";
  }

  static async extend(key: string, token: string, ttlMs: number): Promise<boolean> {
    try {
      const result = await redis.eval(EXTEND, 1, \`lock:\${key}\`, token, ttlMs);
      return result === 1;
    } catch {
      return false;
    }
  }

  static async run(key: string, token: string, ttlMs: number, work: (signal: AbortSignal) => Promise<void>) {
    if (!(await this.take(key, token, ttlMs))) return;
    const controller = new AbortController();
    const beat = setInterval(async () => {
${beat}
    }, ttlMs / 3);
    try {
      await work(controller.signal);
    } finally {
      clearInterval(beat);
      await redis.eval(RELEASE, 1, \`lock:\${key}\`, token);
    }
  }
}
`;

ruleTester.run("heartbeat-abort (a renewal helper of the module that answers its caller)", heartbeatAbort, {
  valid: [
    {
      name: "the timer aborts the work on a false answer",
      code: REPORT_LOCK("      if (!(await this.extend(key, token, ttlMs))) controller.abort();"),
    },
  ],
  invalid: [
    {
      name: "the timer drops the answer: reported at that call",
      code: REPORT_LOCK("      await this.extend(key, token, ttlMs);"),
      errors: [
        {
          messageId: "resultIgnored",
          line: 25,
          data: {
            lock: 'the lock "lock:*"',
            where: "acquired at line 9",
            signal: "it returns 0 once the key no longer holds this holder's token",
          },
        },
      ],
    },
  ],
});

/**
 * A leader lease in one document under a constant key, taken over when its beat is old, re-entered by the same
 * instance (`$or: [{ instance }, …]` with `$set: { instance }`); `filter` is what the heartbeat and the step-down
 * name the document by.
 */
const LEADER_LEASE = (filter: string) => `import { MongoClient } from "mongodb";

const KEY = "scheduler-singleton";
const STALE_MS = 2 * 60 * 1000;
let beat: NodeJS.Timeout | undefined;

export async function becomeLeader(client: MongoClient, instance: string) {
  const leases = client.db().collection<{ _id: string; instance: string; beatAt: number }>("leases");
  const now = Date.now();
  const res = await leases.updateOne(
    { _id: KEY, $or: [{ instance }, { beatAt: { $lt: now - STALE_MS } }, { instance: { $exists: false } }] },
    { $set: { instance, beatAt: now } },
    { upsert: true },
  );
  if (res.matchedCount + res.upsertedCount === 0) return false;
  beat = setInterval(async () => {
    await leases.updateOne(${filter}, { $set: { beatAt: Date.now() } });
  }, 30_000);
  return true;
}

export async function stepDown(client: MongoClient, instance: string) {
  clearInterval(beat);
  await client.db().collection("leases").deleteOne(${filter});
}
`;

ruleTester.run("heartbeat-abort (a lease's own holder column, a constant key)", heartbeatAbort, {
  valid: [],
  invalid: [
    {
      name: "the beat names the document by its constant key only",
      code: LEADER_LEASE("{ _id: KEY }"),
      errors: [
        {
          messageId: "unfencedHeartbeat",
          line: 17,
          data: { lock: "the claimed leases row", where: "claimed at line 10", rowFilter: "_id" },
        },
      ],
    },
    {
      name: "by the instance too: fenced, but its count is never read",
      code: LEADER_LEASE("{ _id: KEY, instance }"),
      errors: [
        {
          messageId: "resultIgnored",
          line: 17,
          data: {
            lock: "the claimed leases row",
            where: "claimed at line 10",
            signal: "it matches no row once the lease is lost",
          },
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release (a lease's own holder column, a constant key)", ownerCheckedRelease, {
  valid: [{ name: "stepping down names the instance", code: LEADER_LEASE("{ _id: KEY, instance }") }],
  invalid: [
    {
      name: "stepping down by the constant key alone",
      code: LEADER_LEASE("{ _id: KEY }"),
      errors: [
        {
          messageId: "rowRelease",
          line: 24,
          data: {
            operation: "delete",
            lock: "lease on leases.beatAt",
            acquireLine: "10",
            filter: "_id",
            expires: "is taken over once beatAt has passed",
            expiryLine: "10",
          },
        },
      ],
    },
  ],
});
