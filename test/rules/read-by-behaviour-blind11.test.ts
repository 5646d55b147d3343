// Real code of blind-11's first sight (issue 35), read by what it does, in our words:
// - a lock row inserted under a constant name, taken over in JavaScript once it has aged and restamped by that name,
//   and deleted by that name: a take-over made apart from its check, judged by the time the lock was taken, and a
//   release that frees whoever holds the lock now;
// - a helper that spreads the data object its callers hand it into the row it stores, called with the row a poll
//   read found (`const { id } = run` names that row);
// - a flag taken where it is free, expired, or left without the time its claim always stamps (an orphan);
// - a reset of every in-progress row with no age test, run whenever a user clicks a button or calls a route;
// - a sweep whose rows are a part of the rows a stale scan found (`stale.filter(…)`, `dead.map((r) => r.id)`);
// - a purge of rows stuck for months, which hands no row to a next holder;
// - a person's edit lock: a lock row per holding, renewed only while live, deleted by the id of the row judged
//   expired;
// - a raw claim of a table beside an ORM model that may be the same table (Prisma's `@@map`): its renewal is unknown;
// - an optional filter term built beforehand in a const and spliced into the claim's SQL;
// - a per-user key freed only when the response emits `finish`, which an aborted request never does;
// - a flag set after an await, freed by a `finally` that a call leaving after that await (not holding it) runs too;
// - SQL in a template of the project's own tag (`rows\`INSERT …\``), read by what it holds; a lock row's expiry set to
//   a bare `NOW()` ends the hold; a session lock handed to the caller with the function that unlocks it;
// - a renewal made in a helper whose caller's `catch` only logs: reported at that call, where the work goes on;
// - a module-level guard in a Lambda function, whose process serves one invocation at a time: no two calls race on it;
// - a throw taken only when the lock was never won (`if (!acquired) throw`), and a session lock unlocked inside the
//   transaction that took it.
import atomicClaim from "../../rules/atomic-claim.js";
import heartbeatAbort from "../../rules/heartbeat-abort.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A nightly report's lock row (Drizzle): inserted at line 8, taken over at line 13 after the test at line 12. */
const REPORT_LOCK = `import { and, eq } from "drizzle-orm";
import { db } from "./db";
import { reportLocks } from "./schema";
const NAME = "nightly-report";
const STALE_MS = 10 * 60 * 1000;
export async function takeReportLock(): Promise<boolean> {
  try {
    await db.insert(reportLocks).values({ name: NAME, takenAt: new Date() });
    return true;
  } catch {
    const row = await db.query.reportLocks.findFirst({ where: eq(reportLocks.name, NAME) });
    if (row && Date.now() - row.takenAt.getTime() > STALE_MS) {
      await db.update(reportLocks).set({ takenAt: new Date() }).where(eq(reportLocks.name, NAME));
      return true;
    }
    return false;
  }
}
export async function dropReportLock() {
  await db.delete(reportLocks).where(eq(reportLocks.name, NAME));
}
`;
/** The same take-over made a compare-and-set on the time it read: only one taker's write matches. */
const REPORT_LOCK_CAS = REPORT_LOCK.replace(
  ".where(eq(reportLocks.name, NAME));\n      return true;",
  ".where(and(eq(reportLocks.name, NAME), eq(reportLocks.takenAt, row.takenAt)));\n      return true;",
);

/** An import worker: the helper spreads its callers' object into the row; the claim is the call at line 8. */
const IMPORT_RUNS = `import { createClient } from "@supabase/supabase-js";
const supabase = createClient(process.env.URL, process.env.KEY);
async function setRun(runId, patch) {
  await supabase.from("import_runs").update({ ...patch, touched_at: new Date().toISOString() }).eq("id", runId);
}
async function runImport(run) {
  const { id: runId, file } = run;
  await setRun(runId, { state: "importing", started_at: new Date().toISOString() });
  await importFile(file);
  await setRun(runId, { state: "imported" });
}
export async function loop() {
  for (;;) {
    const { data } = await supabase.from("import_runs").select("*").eq("state", "waiting").limit(1);
    if (data && data.length > 0) await runImport(data[0]);
    await sleep(2000);
  }
}
`;

/** An order's sync flag (Mongoose): taken where free, orphaned (no start time) or aged, at line 5. */
const ORDER_SYNC = `import Order from "./models/Order.js";
const STALE_MS = 60_000;
export async function lockOrder(orderId) {
  const cutoff = new Date(Date.now() - STALE_MS);
  return Order.findOneAndUpdate(
    { _id: orderId, $or: [{ isSyncing: false }, { isSyncing: true, syncStartedAt: null }, { syncStartedAt: { $lt: cutoff } }] },
    { $set: { isSyncing: true, syncStartedAt: new Date() } },
    { new: true },
  );
}
export async function unlockOrder(orderId) {
  await Order.updateOne({ _id: orderId }, { $set: { isSyncing: false, syncStartedAt: null } });
}
`;

/** A button that puts every mailing stuck in sending back in the queue (the claim is another module's). */
const RETRY_BUTTON = `import { supabase } from "@/lib/supabase";
export function StuckSendsButton() {
  return (
    <button
      onClick={async () => {
        const { data: stuckMailings } = await supabase.from("mailings").select("id").eq("state", "sending");
        if (stuckMailings && stuckMailings.length > 0) {
          await supabase.from("mailings").update({ state: "queued" }).eq("state", "sending");
        }
      }}
    >
      Retry stuck mailings
    </button>
  );
}
`;

/** The same reset behind an HTTP route (line 5), and once more at boot (line 9), when no holder is alive. */
const REQUEUE_ROUTE = `import express from "express";
import { pool } from "./db";
const app = express();
app.post("/admin/mailings/requeue", async (_req, res) => {
  await pool.query("UPDATE mailings SET state = 'queued' WHERE state = 'sending'");
  res.sendStatus(204);
});
async function main() {
  await pool.query("UPDATE mailings SET state = 'queued' WHERE state = 'sending'");
  app.listen(3000);
}
main();
`;

/** A render sweep: the stale scan at line 5, its rows split in two lists, each written by id (lines 10 and 12). */
const RENDER_SWEEP = `import { supabase } from "./supabase";
const LIMIT = 3;
export async function sweepRenders() {
  const cutoff = new Date(Date.now() - 15 * 60_000).toISOString();
  const { data: stale } = await supabase.from("renders").select("id, tries").eq("status", "rendering").lt("updated_at", cutoff);
  if (!stale) return;
  const retry = stale.filter((r) => r.tries < LIMIT);
  const dead = stale.filter((r) => r.tries >= LIMIT);
  for (const r of retry) {
    await supabase.from("renders").update({ status: "waiting", tries: r.tries + 1 }).eq("id", r.id);
  }
  await supabase.from("renders").update({ status: "failed" }).in("id", dead.map((r) => r.id));
}
`;

/** An export claim (line 4) completed by id (line 7); RECOVERY is the module's only recovery of stuck rows. */
const EXPORT_JOBS = `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
export async function takeExport(id: string) {
  const won = await prisma.exportJob.updateMany({ where: { id, status: "QUEUED" }, data: { status: "RUNNING", updatedAt: new Date() } });
  if (won.count === 0) return;
  await buildExport(id);
  await prisma.exportJob.update({ where: { id }, data: { status: "DONE" } });
}
export async function purgeAbandoned() {
  await RECOVERY;
}
`;
const AGED = `where: { status: "RUNNING", updatedAt: { lt: new Date(Date.now() - 90 * 86_400_000) } }`;
const exportJobs = (recovery: string) => EXPORT_JOBS.replace("RECOVERY", recovery);

/** A person's edit lock on a sheet: one row per holding, renewed by its holder while live (line 10). */
const SHEET_LOCK = `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
const HOLD_MS = 10 * 60 * 1000;
export async function openSheet(sheetId: string, userId: string): Promise<boolean> {
  const lock = await prisma.sheetLock.findUnique({ where: { sheetId } });
  if (lock) {
    if (lock.expiresAt < new Date()) {
      await prisma.sheetLock.delete({ where: { id: lock.id } });
    } else if (lock.userId === userId) {
      await prisma.sheetLock.update({ where: { id: lock.id }, data: { expiresAt: new Date(Date.now() + HOLD_MS) } });
      return true;
    } else {
      return false;
    }
  }
  await prisma.sheetLock.create({ data: { sheetId, userId, expiresAt: new Date(Date.now() + HOLD_MS) } });
  return true;
}
export async function closeSheet(sheetId: string, userId: string) {
  const lock = await prisma.sheetLock.findUnique({ where: { sheetId } });
  if (!lock || lock.userId !== userId) return;
  await prisma.sheetLock.delete({ where: { id: lock.id } });
}
`;
/** The same module with a keep-alive that extends any row by id, expired or not. */
const SHEET_LOCK_KEEPALIVE = `${SHEET_LOCK}export async function keepSheet(lockId: string) {
  await prisma.sheetLock.update({ where: { id: lockId }, data: { expiresAt: new Date(Date.now() + HOLD_MS) } });
}
`;

/** A raw claim of \`app_batches\` (line 4) and a recovery judged by beat_at (line 14); BEAT renews it, or not. */
const BATCHES = `import { prisma } from "./db";
const STALE = "10 minutes";
export async function claimBatch(workerId: string) {
  const rows = await prisma.$queryRaw<{ id: string }[]>\`
    UPDATE app_batches SET state = 'WORKING', owner = \${workerId}, beat_at = now()
    WHERE id = (SELECT id FROM app_batches WHERE state = 'READY' ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id\`;
  return rows[0];
}
export async function beat(id: string) {
  await BEAT;
}
export async function requeueStalled() {
  await prisma.$executeRaw\`UPDATE app_batches SET state = 'READY', owner = NULL
    WHERE state = 'WORKING' AND beat_at < now() - \${STALE}::interval\`;
}
`;

/** A task claim whose optional kind filter is built first, in a const (line 4 is the claim). */
const TASK_CLAIM = `import { pool } from "./db";
export async function claimNext(kinds: string[]) {
  const kindFilter = kinds.length > 0 ? \`AND kind IN (\${kinds.map((k) => \`'\${k}'\`).join(",")})\` : "";
  const { rows } = await pool.query(
    \`UPDATE tasks SET status = 'running', started_at = now()
     WHERE id = (SELECT id FROM tasks WHERE status = 'queued' \${kindFilter} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING *\`,
  );
  return rows[0];
}
`;

const jsx = { parserOptions: { ecmaFeatures: { jsx: true } } } as const;
const DEFAULT_PROGRESS = "updatedAt, modifiedAt, heartbeatAt";

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    { name: "a take-over that compares the time it read: one step", code: REPORT_LOCK_CAS },
    { name: "a person's edit lock renewed by its holder while live is no take-over", code: SHEET_LOCK },
    {
      name: "a helper whose own value follows the spread overrides what its callers pass: no claim",
      code: IMPORT_RUNS.replace("{ ...patch, touched_at: new Date().toISOString() }", '{ ...patch, state: "waiting" }'),
    },
  ],
  invalid: [
    {
      name: "a lock row taken over in JavaScript and restamped by its constant name",
      code: REPORT_LOCK,
      errors: [
        {
          messageId: "checkThenLease",
          line: 13,
          data: {
            model: "reportLocks",
            field: "takenAt",
            value: "held",
            claimLine: "13",
            checkedWhere: "with a separate read",
            checkLine: "11",
          },
        },
      ],
    },
    {
      name: "a state spread into the row by a helper, on the row a poll read found",
      code: IMPORT_RUNS,
      errors: [
        {
          messageId: "checkThenAct",
          line: 8,
          data: {
            model: "import_runs",
            field: "state",
            value: "importing",
            claimLine: "8",
            checkedWhere: "with a separate read",
            checkLine: "14",
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    { name: "a lock row taken over once aged has its stale path", code: REPORT_LOCK },
    { name: "a flag taken over once aged has its stale path", code: ORDER_SYNC },
  ],
  invalid: [
    {
      name: "the spread state is a claim nothing recovers",
      code: IMPORT_RUNS,
      errors: [
        { messageId: "missingRecovery", line: 8, data: { model: "import_runs", field: "state", value: "importing" } },
      ],
    },
    {
      name: "an orphan branch alone takes no dead holder's flag",
      code: ORDER_SYNC.replace(", { syncStartedAt: { $lt: cutoff } }", ""),
      errors: [{ messageId: "missingRecovery", line: 5, data: { model: "Order", field: "isSyncing", value: "true" } }],
    },
    {
      name: "an optional filter term held in a const leaves the claim readable",
      code: TASK_CLAIM,
      errors: [{ messageId: "missingRecovery", line: 4, data: { model: "tasks", field: "status", value: "running" } }],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    {
      name: "a renewal through an ORM model that may be the raw claim's table is not 'nothing renews it'",
      code: BATCHES.replace("BEAT", "prisma.batch.update({ where: { id }, data: { beatAt: new Date() } })"),
    },
  ],
  invalid: [
    {
      name: "the lock row's take-over judged by the time it was taken: one finding, at the read",
      code: REPORT_LOCK,
      errors: [
        {
          messageId: "startTimeTakeoverRead",
          line: 12,
          data: {
            what: "the lock row in reportLocks",
            claimLine: "13",
            timeField: "takenAt",
            readLine: "11",
            stamped: "set once when the lock is taken",
            progressFields: DEFAULT_PROGRESS,
          },
        },
      ],
    },
    {
      name: "a flag taken over by the age of its start",
      code: ORDER_SYNC,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 6,
          data: {
            model: "Order",
            field: "isSyncing",
            value: "true",
            claimLine: "5",
            timeField: "syncStartedAt",
            stamped: "set once when work starts",
            progressFields: DEFAULT_PROGRESS,
          },
        },
      ],
    },
    {
      name: "with no renewal anywhere, the beat is stamped once",
      code: BATCHES.replace("BEAT", "notify(id)"),
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 14,
          data: {
            model: "app_batches",
            field: "state",
            value: "WORKING",
            claimLine: "4",
            timeField: "beat_at",
            stamped: "set once when work starts",
            progressFields: DEFAULT_PROGRESS,
          },
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release", ownerCheckedRelease, {
  valid: [
    { name: "a person's edit lock released by its holder, by the id of its own row", code: SHEET_LOCK },
    {
      name: "an emergency wipe is an operator's override",
      code: REPORT_LOCK.replace(
        "export async function dropReportLock()",
        "export async function emergencyDropReportLock()",
      ),
    },
  ],
  invalid: [
    {
      name: "a lock row deleted by its constant name while the lock can be taken over",
      code: REPORT_LOCK,
      errors: [
        {
          messageId: "rowRelease",
          line: 20,
          data: {
            lock: "lock row in reportLocks",
            acquireLine: "8",
            filter: "name",
            operation: "delete",
            expires: "is swept when stale",
            expiryLine: "13",
          },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "a reset at boot, when no holder of a single instance is alive",
      code: REQUEUE_ROUTE.replace(/app\.post[\s\S]*?\n\}\);\n/, ""),
    },
    { name: "an expired edit lock deleted by its own row's id: nothing revives it", code: SHEET_LOCK },
  ],
  invalid: [
    {
      name: "a button that resets every row in sending, whenever it is clicked",
      code: RETRY_BUTTON,
      filename: "retry.tsx",
      languageOptions: jsx,
      errors: [
        {
          messageId: "sweepMissingTimeOnDemand",
          line: 8,
          data: { model: "mailings", field: "state", value: "sending", target: "queued" },
        },
      ],
    },
    {
      name: "the same reset behind a route; the one at boot stays quiet",
      code: REQUEUE_ROUTE,
      errors: [
        {
          messageId: "sweepMissingTimeOnDemand",
          line: 5,
          data: { model: "mailings", field: "state", value: "sending", target: "queued" },
        },
      ],
    },
    {
      name: "rows of a stale scan, split by filter and mapped to ids, written without the scan's conditions",
      code: RENDER_SWEEP,
      errors: [10, 12].map((line) => ({
        messageId: "sweepCheckInJs" as const,
        line,
        data: {
          model: "renders",
          field: "status",
          value: "rendering",
          checkedWhere: "with a separate read",
          checkLine: "5",
          rowFilter: "id",
        },
      })),
    },
    {
      name: "an edit lock a keep-alive may extend after the sweep judged it expired",
      code: SHEET_LOCK_KEEPALIVE,
      errors: [
        {
          messageId: "sweepLockRowCheckInJs",
          line: 8,
          data: { model: "sheetLock", checkedWhere: "in JavaScript", checkLine: "7", rowFilter: "id" },
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    {
      name: "a purge of rows stuck for months hands no row to a next holder",
      code: exportJobs(`prisma.exportJob.deleteMany({ ${AGED} })`),
    },
  ],
  invalid: [
    {
      name: "the same age test handing the rows back to the queue",
      code: exportJobs(`prisma.exportJob.updateMany({ data: { status: "QUEUED" }, ${AGED} })`),
      errors: [
        {
          messageId: "unfencedWrite",
          line: 7,
          data: { model: "exportJob", field: "status", value: "RUNNING", claimLine: "4", target: "DONE" },
          suggestions: [
            {
              messageId: "addFence",
              data: { model: "exportJob", field: "status", value: "RUNNING", claimLine: "4", target: "DONE" },
              output: exportJobs(`prisma.exportJob.updateMany({ data: { status: "QUEUED" }, ${AGED} })`).replace(
                'where: { id }, data: { status: "DONE" }',
                'where: { id, status: "RUNNING" }, data: { status: "DONE" }',
              ),
            },
          ],
        },
      ],
    },
  ],
});

/** An upload middleware: one upload per user at a time, the key freed when the response is done (line 11). */
const ONE_UPLOAD = `import type { NextFunction, Request, Response } from "express";
const uploading = new Map<string, number>();
export function oneUploadPerUser(req: Request, res: Response, next: NextFunction) {
  const userId = req.get("x-user") ?? "";
  if (uploading.has(userId)) {
    res.status(429).json({ error: "upload in progress" });
    return;
  }
  uploading.set(userId, Date.now());
  res.on("finish", () => {
    uploading.delete(userId);
  });
  next();
}
`;

ruleTester.run("release-in-finally", releaseInFinally, {
  valid: [
    { name: "freed on close, which a response emits either way", code: ONE_UPLOAD.replace('"finish"', '"close"') },
    {
      name: "a file stream's finish is no client's to withhold",
      code: ONE_UPLOAD.replace('res.on("finish"', 'createWriteStream(`/tmp/${userId}`).on("finish"'),
    },
    {
      name: "a key freed by the middleware's own finally is not left to an event",
      code: ONE_UPLOAD.replace(
        'res.on("finish", () => {\n    uploading.delete(userId);\n  });\n  next();',
        "try {\n    next();\n  } finally {\n    uploading.delete(userId);\n  }",
      ),
    },
  ],
  invalid: [
    {
      name: "a key freed only on finish stays taken when the client disconnects",
      code: ONE_UPLOAD,
      errors: [
        {
          messageId: "releasedOnFinishOnly",
          line: 10,
          data: { lock: "the entry of uploading", acquireLine: "9", emitter: "res" },
          suggestions: [{ messageId: "releaseOnClose", output: ONE_UPLOAD.replace('"finish"', '"close"') }],
        },
      ],
    },
  ],
});

/** A refresh guard set after an await (line 11), freed in the finally (line 15) that the return at line 9 runs too. */
const REFRESH = `export class CatalogRefresher {
  private refreshing = false;
  async refresh(): Promise<void> {
    if (this.refreshing) return;
    try {
      const due = await this.isDue();
      if (!due) {
        console.log("catalog fresh");
        return;
      }
      this.refreshing = true;
      await this.pullCatalog();
    } finally {
      this.refreshing = false;
    }
  }
  private async isDue() { return true; }
  private async pullCatalog() {}
}
`;

ruleTester.run("owner-checked-release (a flag set after a wait)", ownerCheckedRelease, {
  valid: [
    {
      name: "taken before the first await: every way out of the try is the holder's",
      code: REFRESH.replace(
        "    try {\n      const due",
        "    this.refreshing = true;\n    try {\n      const due",
      ).replace("      this.refreshing = true;\n      await this.pullCatalog", "      await this.pullCatalog"),
    },
  ],
  invalid: [
    {
      name: "the finally frees a flag another call may have taken while this one waited",
      code: REFRESH,
      errors: [
        {
          messageId: "releasedUntakenAfterWait",
          line: 14,
          data: {
            lock: "the guard `this.refreshing`",
            acquireLine: "11",
            exitKind: "return",
            exitLine: "9",
            releaseLine: "14",
            waitLine: "6",
          },
        },
      ],
    },
  ],
});

/** A cron lock row through the project's own tagged helper: taken at line 4 once expired, freed at line 13. */
const CRON_ROW = `import { rows, exec } from "./db";
export async function tryCronLock(name: string, seconds: number): Promise<boolean> {
  const got = await rows<{ name: string }>\`
    INSERT INTO job_locks (name, held_until) VALUES (\${name}, NOW() + (\${seconds} || ' seconds')::interval)
    ON CONFLICT (name) DO UPDATE SET held_until = NOW() + (\${seconds} || ' seconds')::interval
    WHERE job_locks.held_until < NOW()
    RETURNING name\`;
  return got.length > 0;
}
export async function dropCronLock(name: string): Promise<void> {
  await exec\`UPDATE job_locks SET held_until = NOW() + interval '1 minute' WHERE name = \${name}\`;
}
export async function releaseCronLock(name: string): Promise<void> {
  await exec\`UPDATE job_locks SET held_until = NOW() WHERE name = \${name}\`;
}
`;

ruleTester.run("owner-checked-release (a project's own SQL tag)", ownerCheckedRelease, {
  valid: [
    {
      name: "pushing the expiry ahead is no release",
      code: CRON_ROW.replace(/export async function releaseCronLock[\s\S]*$/, ""),
    },
  ],
  invalid: [
    {
      name: "the expiry set to the bare clock ends the hold, by name alone",
      code: CRON_ROW,
      errors: [
        {
          messageId: "rowRelease",
          line: 14,
          data: {
            lock: "lock row in job_locks",
            acquireLine: "3",
            filter: "name",
            operation: "write",
            expires: "is taken over once held_until has passed",
            expiryLine: "3",
          },
        },
      ],
    },
  ],
});

/** A leader lock on a connection of its own, handed to the caller with the function that unlocks it. */
const LEADER = `import postgres from "postgres";
export async function becomeLeader(url: string, id: number) {
  const conn = postgres(url, { max: 1, idle_timeout: 0 });
  const [row] = await conn\`SELECT pg_try_advisory_lock(\${id}) AS ok\`;
  if (!row?.ok) {
    await conn.end();
    return null;
  }
  const handle = {
    release: async () => {
      await conn\`SELECT pg_advisory_unlock(\${id})\`;
      await conn.end();
    },
  };
  return handle;
}
`;

ruleTester.run("release-in-finally (a lock handed to the caller)", releaseInFinally, {
  valid: [{ name: "the return hands over the function that unlocks", code: LEADER }],
  invalid: [
    {
      name: "a return that hands nothing over leaves holding the lock",
      code: LEADER.replace("return handle;", "await handle.release();\n  return { ok: true };").replace(
        "    return null;",
        "    return null;\n  }\n  if (id < 0) {\n    return { ok: false };",
      ),
      errors: [
        {
          messageId: "missedOnReturn",
          line: 4,
          data: {
            lock: "the session advisory lock (pg_try_advisory_lock)",
            exitLine: "10",
            consequence:
              "the connection keeps the session lock, and a pooled connection goes back to the pool still holding it.",
          },
        },
      ],
    },
  ],
});

/** A worker lock renewed by a helper (line 8) from a loop whose catch only logs (line 16). */
const RENEWER = `import { createClient } from "redis";
const client = createClient();
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
export class Worker {
  private token = "";
  private stopped = false;
  private async renew(): Promise<boolean> {
    const res = await client.eval(RENEW, { keys: ["worker:lock"], arguments: [this.token, "30000"] });
    return Number(res) === 1;
  }
  async start() {
    this.token = crypto.randomUUID();
    if ((await client.set("worker:lock", this.token, { NX: true, PX: 30000 })) !== "OK") return;
    const loop = async () => {
      while (!this.stopped) {
        try {
          await this.renew();
        } catch (err) {
          console.warn("renew failed", err);
        }
        await new Promise((r) => setTimeout(r, 10000));
      }
    };
    void loop();
    await this.work();
  }
  private async work() {}
}
`;

ruleTester.run("heartbeat-abort (a helper's renewal)", heartbeatAbort, {
  valid: [
    {
      name: "the caller stops the work when the renewal fails",
      code: RENEWER.replace(
        'console.warn("renew failed", err);',
        'console.warn("renew failed", err);\n          this.stopped = true;',
      ),
    },
  ],
  invalid: [
    {
      name: "the caller's catch only logs: reported at its call",
      code: RENEWER,
      errors: [
        {
          messageId: "swallowed",
          line: 17,
          data: { lock: 'the lock "worker:lock"', where: "acquired at line 13", handlerLine: "18" },
        },
      ],
    },
  ],
});

/** A webhook guard: tested inside the try (line 5), taken at line 8, freed in the finally (line 12). EXPORT makes it. */
const WEBHOOK = `let busy = false;
EXPORT {
  try {
    if (busy) {
      return { statusCode: 409, body: "busy" };
    }
    busy = true;
    await syncContact(JSON.parse(event.body));
    return { statusCode: 200, body: "ok" };
  } finally {
    busy = false;
  }
};
`;
const webhook = (exp: string) => WEBHOOK.replace("EXPORT", exp);

ruleTester.run("owner-checked-release (one invocation at a time)", ownerCheckedRelease, {
  valid: [
    {
      name: "a Lambda function (CommonJS): no other call shares the process",
      code: webhook("exports.handler = async (event) =>"),
    },
    { name: "a Lambda function (ESM)", code: webhook("export const handler = async (event, context) =>") },
  ],
  invalid: [
    {
      name: "the same guard in a server's handler: a caller that finds it held frees it",
      code: webhook("export const onWebhook = async (event) =>"),
      errors: [
        {
          messageId: "releasedUntaken",
          line: 5,
          data: {
            lock: "the guard `busy`",
            acquireLine: "7",
            exitKind: "return",
            exitLine: "5",
            releaseLine: "11",
          },
        },
      ],
    },
  ],
});

/** A sync lock retried until won, marked in the held branch (line 8); the throw at line 14 is a lost race's. */
const RETRIED = `import Redis from "ioredis";
const redis = new Redis();
export async function withSyncLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
  const token = crypto.randomUUID();
  let acquired = false;
  for (let i = 0; i < 10; i++) {
    const ok = await redis.set(\`sync:\${id}\`, token, "PX", 60000, "NX");
    if (ok === "OK" && token) {
      acquired = true;
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  if (!acquired) throw new Error("sync busy");
  try {
    return await fn();
  } finally {
    await redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end", 1, \`sync:\${id}\`, token);
  }
}
`;

/** A session lock inside a Prisma transaction, unlocked in its finally (lines 4 and 8). */
const TX_LOCK = `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
export const withTenantLock = (tenant: string, fn: () => Promise<void>) =>
  prisma.$transaction(async (tx) => {
    await tx.$executeRaw\`SELECT pg_advisory_lock(hashtext(\${tenant}))\`;
    try {
      await fn();
    } finally {
      await tx.$executeRaw\`SELECT pg_advisory_unlock(hashtext(\${tenant}))\`;
    }
  });
`;

ruleTester.run("release-in-finally (ways out and transactions)", releaseInFinally, {
  valid: [
    { name: "the throw is taken only when the lock was never won", code: RETRIED },
    {
      name: "a transaction-level lock ends with its transaction",
      code: `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
export const withTenantLock = (tenant: string, fn: () => Promise<void>) =>
  prisma.$transaction(async (tx) => {
    await tx.$executeRaw\`SELECT pg_advisory_xact_lock(hashtext(\${tenant}))\`;
    await fn();
  });
`,
    },
  ],
  invalid: [
    {
      name: "a mark cleared again before the test makes the throw a holder's way out",
      code: RETRIED.replace(
        '  if (!acquired) throw new Error("sync busy");',
        '  if (Math.random() < 0.5) acquired = false;\n  if (!acquired) throw new Error("sync busy");',
      ),
      errors: [
        {
          messageId: "ttlReleaseMissed",
          line: 7,
          data: { lock: "the lock `sync:*`", releaseLine: "19", how: "on the throw", exitLine: "15" },
        },
      ],
    },
    {
      name: "a session lock unlocked in the transaction that took it",
      code: TX_LOCK,
      errors: [
        {
          messageId: "advisoryUnlockInTransaction",
          line: 5,
          suggestions: [
            { messageId: "useXactLock", output: TX_LOCK.replace("pg_advisory_lock(", "pg_advisory_xact_lock(") },
          ],
        },
      ],
    },
  ],
});
