import rule from "../../rules/atomic-claim.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { KEYED_LOCK, WAIT_THEN_TAKE } from "./lease-lock.js";
import { normalizeModel } from "../../src/core/model/names.js";

/** An editor row looked up by its document and created when none is found; released by its whole key. */
const EDITOR_ROW = `export async function startEditing(db, documentId, editorId) {
  const current = await db.documentEditor.findFirst({ where: { documentId } });
  if (current) return false;
  await db.documentEditor.create({ data: { documentId, editorId } });
  return true;
}
export async function stopEditing(db, documentId, editorId) {
  await db.documentEditor.deleteMany({ where: { documentId, editorId } });
}`;
/** \`settings.locksUniqueKeys\`, as locks-audit fills it from the project's schemas. */
const keys = (list: string[][]) => ({ locksUniqueKeys: { [normalizeModel("documentEditor")]: list } });

type Where = "in JavaScript" | "with a separate read";

/**
 * A nightly export guarded by a Redlock lock (line 5): `catch` at line 6 only logs, and the export after the `try`
 * (line 9) runs in every worker. `CATCH` and `AFTER` are replaced by the lookalikes below.
 */
const IGNORED_ACQUIRE = `import Redlock from "redlock";
const redlock = new Redlock([redis]);
export async function exportNightly(day: string) {
  let lock;
  try { lock = await redlock.acquire([\`export:\${day}\`], 60_000); }
  catch (err) { console.warn("export already running?", err); CATCH }
  AFTER
  await writeExport(day);
  if (lock) await lock.release();
}`;
const ignoredAcquire = (catchBody = "", after = "") =>
  IGNORED_ACQUIRE.replace("CATCH", catchBody).replace("AFTER", after);

/**
 * better-sqlite3: an export picked by one prepared statement and taken by another, run in `WRAP` (the body of
 * `take`). The pick is at line 5, the take at line 6.
 */
const SQLITE_TAKE = `import Database from "better-sqlite3";
const db = new Database("jobs.db");
const pick = db.prepare("SELECT id FROM exports WHERE state = 'queued' LIMIT 1");
const start = db.prepare("UPDATE exports SET state = @state WHERE id = @id");
export const take = () => WRAP(() => { const row = pick.get();
  if (row) start.run({ id: row.id, state: "running" });
  return row; })WRAPPED;`;
/**
 * A tenant lock row taken where it is free or already the caller's (`OR holder = EXCLUDED.holder`), the row at
 * line 4; HOLDER is what the caller writes as the holder (line 8).
 */
const TENANT_LOCK = `import { pool } from "./db";
export async function lockTenant(tenantId: string, token: string) {
  const key = \`tenant:\${tenantId}\`;
  const res = await pool.query(
    \`INSERT INTO app_locks (lock_key, holder, expires_at) VALUES ($1, $2, now() + interval '30 seconds')
     ON CONFLICT (lock_key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE app_locks.expires_at < now() OR app_locks.holder = EXCLUDED.holder\`,
    [key, HOLDER]);
  return res.rowCount === 1;
}`;
const tenantLock = (holder: string) => TENANT_LOCK.replace("HOLDER", holder);

const sqliteTake = (wrap: string, wrapped = "") => SQLITE_TAKE.replace("WRAP", wrap).replace("WRAPPED", wrapped);

const claim = (
  model: string,
  field: string,
  value: string,
  claimLine: number,
  checkedWhere: Where,
  checkLine: number,
) => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
  checkedWhere,
  checkLine: String(checkLine),
});

/** A check-then-act report; `output` is the code after the suggestion, or null when no suggestion is offered. */
const checkThenAct = (line: number, column: number, data: ReturnType<typeof claim>, output: string | null) => ({
  messageId: "checkThenAct" as const,
  line,
  column,
  data,
  suggestions: output === null ? [] : [{ messageId: "addCondition" as const, data, output }],
});
/** The condition the check pins (`status = "QUEUED"` after `if (job.status !== "QUEUED") return`), the write's result unread. */
const requireValue = (
  line: number,
  column: number,
  data: ReturnType<typeof claim>,
  required: string,
  output: string,
) => ({
  messageId: "checkThenAct" as const,
  line,
  column,
  data,
  suggestions: [
    { messageId: "requireValue" as const, data: { field: data.field, required, checkLine: data.checkLine }, output },
  ],
});
/** The whole fix: the condition, and the check's own way out when the write changed no row. */
const checkThenActExit = (
  line: number,
  column: number,
  data: ReturnType<typeof claim>,
  exit: string,
  checkLine: number,
  output: string,
) => ({
  messageId: "checkThenAct" as const,
  line,
  column,
  data,
  suggestions: [
    {
      messageId: "addConditionAndExit" as const,
      data: { field: data.field, value: data.value, exit, checkLine: String(checkLine) },
      output,
    },
  ],
});

/** A migration lock flag on a metadata document, read into a module-level variable and checked there. */
const MIGRATION_LOCK = `let migrationLock = null;
export async function takeMigrationLock(meta) {
  const [row] = await meta.find({ name: "schema" }).toArray();
  migrationLock = row;
  if (migrationLock.isLocked) return false;
  await meta.updateOne({ name: "schema" }, { $set: { isLocked: true } });
  return true;
}`;

/**
 * A picking queue written in Spanish: the status values are no English in-progress words, but the claim stamps
 * `lockedBy` with the picker and the module clears it again, so EN_PREPARACION is held. `owner` renames the
 * holder column (a lookalike uses `assigneeId`, no lock word).
 */
const pickQueue = (owner = "lockedBy") => `export async function nextForPicker(pickerId: string) {
  const item = await prisma.pickItem.findFirst({ where: { status: "ABIERTO", ${owner}: null } });
  if (!item) return null;
  return prisma.pickItem.update({
    where: { id: item.id },
    data: { status: "EN_PREPARACION", ${owner}: pickerId, lockedAt: new Date() },
  });
}
export async function finish(id: string) {
  await prisma.pickItem.update({ where: { id }, data: { status: "LISTO", ${owner}: null, lockedAt: null } });
}
`;

ruleTester.run("atomic-claim", rule, {
  valid: [
    // The holder is the caller's own: a token it was handed, a random id, the process. Only the caller re-enters.
    { name: "a lock row re-entered by the token the caller holds", code: tenantLock("token") },
    {
      name: "a lock row re-entered by a random holder id",
      code: `import { randomUUID } from "node:crypto";\n` + tenantLock("randomUUID()"),
    },
    {
      // the editor is the holder of the document's lock: its own id column says who edits, not which lock it is
      name: "a document lock re-entered by the user who holds it, with the user's id in a column of its own",
      code: `import { pool } from "./db";
export async function lockDocument(documentId: string, userId: string) {
  const res = await pool.query(
    \`INSERT INTO edit_locks (document_key, user_id, holder, expires_at) VALUES ($1, $2, $2, now() + interval '1 minute')
     ON CONFLICT (document_key) DO UPDATE SET holder = EXCLUDED.holder, user_id = EXCLUDED.user_id, expires_at = EXCLUDED.expires_at
     WHERE edit_locks.expires_at < now() OR edit_locks.holder = EXCLUDED.holder\`,
    [\`doc:\${documentId}\`, userId]);
  return res.rowCount === 1;
}`,
    },
    {
      name: "a lock row re-entered by the process that holds it",
      code: `import { hostname } from "node:os";\n` + tenantLock("`${hostname()}:${process.pid}`"),
    },
    // better-sqlite3's transaction is serializable (and synchronous): the pick and the take in one are one step,
    // whether it is called directly or as IMMEDIATE.
    {
      name: "a pick and a take in a better-sqlite3 transaction called directly",
      code: sqliteTake("db.transaction", "()"),
    },
    {
      name: "a pick and a take in an IMMEDIATE better-sqlite3 transaction",
      code: sqliteTake("db.transaction", ".immediate()"),
    },
    // A statement variable given one of two statements holds neither for certain: its run is no known write.
    {
      name: "a statement variable reassigned is unknown",
      code: `import Database from "better-sqlite3";
const db = new Database("jobs.db");
const pick = db.prepare("SELECT id FROM exports WHERE state = 'queued' LIMIT 1");
export function take(draft: boolean) {
  const row = pick.get();
  if (!row) return;
  let stmt;
  stmt = db.prepare("UPDATE exports SET state = 'running' WHERE id = ?");
  if (draft) stmt = db.prepare("UPDATE exports SET state = 'draft' WHERE id = ?");
  stmt.run(row.id);
}`,
    },
    { name: "a lock acquire whose catch returns: the work runs only in the holder", code: ignoredAcquire("return;") },
    { name: "a lock acquire whose catch rethrows", code: ignoredAcquire("throw err;") },
    {
      name: "a worker loop whose catch goes on to the next job: the work after the try is skipped",
      code: `export async function drain(jobs: string[]) {
  for (const id of jobs) {
    let lock;
    try { lock = await redlock.acquire([\`job:\${id}\`], 30_000); } catch { continue; }
    await run(id);
    await lock.release();
  }
}`,
    },
    { name: "a lock acquire whose result is tested before the work", code: ignoredAcquire("", "if (!lock) return;") },
    {
      name: "the work inside the try: a failed acquire skips it",
      code: `export async function exportNightly(day: string) {
  try {
    const lock = await redlock.acquire([\`export:\${day}\`], 60_000);
    await writeExport(day);
    await lock.release();
  } catch (err) { console.warn(err); }
  await report(day);
}`,
    },
    {
      // an in-process mutex waits for its turn: its acquire does not fail because someone else holds it
      name: "an async-mutex acquire in a try whose catch logs",
      code: `import { Mutex } from "async-mutex";
const mutex = new Mutex();
export async function flush() {
  let release;
  try { release = await mutex.acquire(); } catch (err) { console.warn(err); }
  await writeAll();
  release?.();
}`,
    },
    // no schema read (the editor): whether the create is exclusive is unknown, so nothing is reported
    { code: EDITOR_ROW },
    // a unique key within what the row is looked up by: the second create fails, the insert is exclusive
    { code: EDITOR_ROW, settings: keys([["documentId"]]) },
    // the create does not depend on what the read found: the test reads a property of the same name elsewhere
    {
      code: EDITOR_ROW.replace("if (current) return false;", "if (session.current) return false;"),
      settings: keys([["documentId", "editorId"]]),
    },
    // a key on the document and more (editor) does not make it exclusive, but a row never removed is no lock
    {
      code: EDITOR_ROW.replace(/export async function stopEditing[\s\S]*$/, ""),
      settings: keys([["documentId", "editorId"]]),
    },
    {
      name: "lookalike: a reassigned variable that holds another collection's row checks nothing about this write",
      code: `let current = null;
export async function markMigrating(meta, settings) {
  current = await settings.findOne({ name: "maintenance" });
  if (current.isLocked) return false;
  await meta.updateOne({ name: "schema" }, { $set: { isLocked: true } });
  return true;
}`,
      languageOptions: javascript,
    },
    {
      // the holder kept for the record on a finished row: COMPLETED is not held
      name: "a terminal status written with the holder is no claim",
      code: pickQueue().replace('status: "EN_PREPARACION"', 'status: "COMPLETED"'),
    },
    {
      // an assignment to an agent is business state: the holder column says nothing of a lock
      name: "a status set with an assignee (no lock-named holder) is no claim",
      code: pickQueue("assigneeId"),
    },
    // a user-interface setting whose name holds "lock" (lock_screen_enabled) is a setting about a lock, not one
    `export async function toggleLockScreen(on: boolean) {
  const current = await prisma.appConfig.findUnique({ where: { name: "lock_screen_enabled" } });
  if (current?.payload === String(on)) return;
  await prisma.appConfig.upsert({ where: { name: "lock_screen_enabled" }, update: { payload: String(on) }, create: { name: "lock_screen_enabled", payload: String(on) } });
}`,
    // a settings row read and then written under a name that is no lock: a setting, not a lock row
    `export async function saveTheme(theme: string) {
  const current = await prisma.appConfig.findUnique({ where: { name: "theme" } });
  if (current?.payload === theme) return;
  await prisma.appConfig.upsert({ where: { name: "theme" }, update: { payload: theme }, create: { name: "theme", payload: theme } });
}`,
    // the same lock row taken by a create under its unique key, the duplicate treated as held: one step
    `export async function takeDigestLock() {
  try {
    await prisma.appConfig.create({ data: { name: "weekly_digest_lock", payload: String(Date.now()) } });
    return true;
  } catch (e) {
    if (e.code === "P2002") return false;
    throw e;
  }
}`,
    // the claim is conditional: the write's filter excludes the value
    `
    export async function start(jobId: string) {
      const res = await prisma.job.updateMany({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
      if (res.count === 0) throw new Error("already running");
    }`,
    // a JS check first, but the write itself is still conditional
    `
    export async function start(jobId: string) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (job.status !== "QUEUED") return false;
      const res = await prisma.job.updateMany({ where: { id: jobId, status: "QUEUED" }, data: { status: "RUNNING" } });
      return res.count === 1;
    }`,
    // a separate read first, then a conditional write (NOT form)
    `
    export async function pickNext() {
      const next = await prisma.run.findFirst({ where: { status: "pending" }, orderBy: { createdAt: "asc" } });
      if (!next) return null;
      const { count } = await prisma.run.updateMany({ where: { id: next.id, NOT: { status: "running" } }, data: { status: "running" } });
      return count === 1 ? next : null;
    }`,
    // update by id alone, nothing checked before it: not a check-then-act
    `
    export async function markStarted(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING", startedAt: new Date() } });
    }`,
    // reads only
    `
    export async function listActive() {
      const job = await prisma.job.findFirst({ where: { status: { not: "RUNNING" } } });
      return prisma.job.findMany({ where: { status: "RUNNING" } });
    }`,
    // bulk transition that admits the value it sets
    `
    export async function promote(projectId: string) {
      await prisma.job.updateMany({ where: { projectId, status: { in: ["QUEUED", "PROCESSING"] } }, data: { status: "PROCESSING" } });
    }`,
    // a JS check before a write to unrelated fields
    `
    export async function heartbeat(jobId: string, progress: number) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (job.status !== "RUNNING") return;
      await prisma.job.update({ where: { id: jobId }, data: { progress, updatedAt: new Date() } });
    }`,
    // terminal and business states after a JS check: transitions, not claims
    `
    export async function pay(invoiceId: string) {
      const invoice = await prisma.invoice.findUniqueOrThrow({ where: { id: invoiceId } });
      if (invoice.status === "PAID") return;
      await prisma.invoice.update({ where: { id: invoiceId }, data: { status: "PAID", paidAt: new Date() } });
    }`,
    `
    export async function finish(jobId: string) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (job.status === "DONE" || job.status === "CANCELLED") return;
      await prisma.job.update({ where: { id: jobId }, data: { status: "DONE" } });
    }`,
    `
    export async function archive(projectId: string) {
      const project = await prisma.project.findFirst({ where: { id: projectId, status: { not: "ARCHIVED" } } });
      if (!project) return;
      await prisma.project.update({ where: { id: projectId }, data: { status: "ARCHIVED" } });
    }`,
    // APPROVED compare-and-set
    `
    export async function approve(requestId: string) {
      const request = await prisma.request.findUniqueOrThrow({ where: { id: requestId } });
      if (request.status !== "SUBMITTED") throw new Error("not submitted");
      await prisma.request.update({ where: { id: requestId, status: "SUBMITTED" }, data: { status: "APPROVED" } });
    }`,
    // waiting states are not in progress
    `
    export async function retry(jobId: string) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (job.status !== "FAILED") throw new Error("only failed jobs can be retried");
      await prisma.job.update({ where: { id: jobId }, data: { status: "PENDING", attempts: { increment: 1 } } });
    }`,
    `
    export async function enqueue(id: string) {
      const draft = await prisma.email.findFirst({ where: { id, status: "DRAFT" } });
      if (draft) await prisma.email.update({ where: { id }, data: { status: "QUEUED" } });
    }`,
    // lease take-over in the claim itself
    `
    export async function claim(jobId: string, threshold: Date) {
      const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
      if (job.status === "RUNNING" && job.updatedAt >= threshold) return false;
      const res = await prisma.job.updateMany({
        where: { id: jobId, OR: [{ status: { not: "RUNNING" } }, { updatedAt: { lt: threshold } }] },
        data: { status: "RUNNING", updatedAt: new Date() },
      });
      return res.count === 1;
    }`,
    // a stale recovery guarded in JS moves rows off the value: not a claim
    `
    export async function recover(job: Job, cutoff: Date) {
      if (job.status === "RUNNING" && job.updatedAt < cutoff) {
        await prisma.job.update({ where: { id: job.id }, data: { status: "FAILED" } });
      }
    }`,
    // a JS check on another field is not a status check
    `
    export async function start(job: Job) {
      if (job.kind !== "EXPORT") return;
      await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
    }`,
    // the earlier read is of another model
    `
    export async function start(projectId: string, jobId: string) {
      const project = await prisma.project.findFirst({ where: { id: projectId, status: "ACTIVE" } });
      if (!project) return;
      await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING" } });
    }`,
    // the read is in another function
    `
    export async function findQueued() {
      return prisma.job.findFirst({ where: { status: "QUEUED" } });
    }
    export async function start(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING" } });
    }`,
    // the read comes after the write
    `
    export async function start(jobId: string) {
      await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING" } });
      return prisma.job.findFirst({ where: { id: jobId, status: "QUEUED" } });
    }`,
    // the read admits the claimed value: it checks nothing about it
    `
    export async function start(queue: string) {
      const job = await prisma.job.findFirst({ where: { queue, status: { in: ["QUEUED", "RUNNING"] } } });
      if (!job) return;
      await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
    }`,
    // an unreadable filter never yields a finding
    `
    export async function start(job: Job, scope: Prisma.JobWhereInput) {
      if (job.status !== "QUEUED") return;
      await prisma.job.updateMany({ where: { id: job.id, ...scope }, data: { status: "RUNNING" } });
    }`,
    // conditional upsert after a JS check
    `
    export async function acquire(name: string) {
      const lease = await prisma.lease.findUnique({ where: { name } });
      if (lease?.state === "ACQUIRED") return false;
      await prisma.lease.upsert({ where: { name, state: { not: "ACQUIRED" } }, update: { state: "ACQUIRED" }, create: { name, state: "ACQUIRED" } });
      return true;
    }`,
    // $transaction with a conditional claim, TS enum
    `
    enum RunState { Queued = "QUEUED", Running = "RUNNING" }
    export async function claim(runId: string) {
      return prisma.$transaction(async (tx) => {
        const run = await tx.run.findFirst({ where: { id: runId, state: RunState.Queued } });
        if (!run) return null;
        return tx.run.updateMany({ where: { id: runId, state: { notIn: [RunState.Running] } }, data: { state: RunState.Running } });
      });
    }`,
    // NestJS service: conditional claim on this.prisma with an imported enum
    `
    import { ImportStatus } from "@prisma/client";
    @Injectable()
    export class ImportService {
      constructor(private readonly prisma: PrismaService) {}
      async start(importId: string) {
        const record = await this.prisma.dataImport.findUniqueOrThrow({ where: { id: importId } });
        if (record.status === ImportStatus.IMPORTING) throw new ConflictException();
        const res = await this.prisma.dataImport.updateMany({
          where: { id: importId, status: { not: ImportStatus.IMPORTING } },
          data: { status: ImportStatus.IMPORTING },
        });
        return res.count === 1;
      }
    }`,
    // plain JS, destructured delegate, .then, conditional write
    {
      code: `
      const { exportJob } = prisma;
      export function claim(id) {
        return exportJob.findUnique({ where: { id } }).then((exp) => {
          if (exp.status === "EXPORTING") return false;
          return exportJob.updateMany({ where: { id, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
        });
      }`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      // The holder is the tenant, as the key is: every request of the tenant is "the holder" and re-enters.
      name: "a lock row whose holder is made of what its key is made of",
      code: tenantLock("tenantId.trim()"),
      errors: [
        {
          messageId: "holderFromKey",
          line: 4,
          column: 21,
          data: { model: "app_locks", owner: "holder", keyField: "lock_key", sources: "tenantId" },
        },
      ],
    },
    {
      name: "a lock row whose holder is the key itself",
      code: tenantLock("key"),
      errors: [
        {
          messageId: "holderFromKey",
          line: 4,
          column: 21,
          data: { model: "app_locks", owner: "holder", keyField: "lock_key", sources: "tenantId" },
        },
      ],
    },
    {
      // Statements prepared once and run here: the write is made at the run, with the run's values.
      name: "a pick and a take of statements prepared once, outside any transaction",
      code: sqliteTake("(", ")()"),
      errors: [checkThenAct(6, 12, claim("exports", "state", "running", 6, "with a separate read", 5), null)],
    },
    {
      // An async callback is no better-sqlite3 transaction: other clients' transaction(fn) run at READ COMMITTED.
      name: "a pick and a take in an async transaction callback",
      code: sqliteTake("db.transaction(async", ")"),
      errors: [checkThenAct(6, 12, claim("exports", "state", "running", 6, "with a separate read", 5), null)],
    },
    {
      name: "a Redlock acquire whose failure is only logged, with the work after the try",
      code: ignoredAcquire(),
      errors: [
        { messageId: "acquireFailureIgnored", line: 5, column: 22, data: { name: "`export:${day}`", catchLine: "6" } },
      ],
    },
    {
      // testing the lock without leaving (`if (lock) await lock.release()`) does not keep the work out
      name: "a Redlock v4 lock() whose catch logs, tested only to release it",
      code: `export async function beforePerform(jobId: string) {
  let lock;
  try {
    lock = await redlock.lock(\`job:\${jobId}\`, 5000);
  } catch (err) {
    logger.error(err);
  }
  const proceed = await checkBlocking(jobId);
  if (lock) await lock.unlock();
  return proceed;
}`,
      errors: [
        { messageId: "acquireFailureIgnored", line: 4, column: 18, data: { name: "`job:${jobId}`", catchLine: "5" } },
      ],
    },
    {
      name: "a module-level variable set to the row just read is that row where the check reads it",
      code: MIGRATION_LOCK,
      languageOptions: javascript,
      errors: [
        checkThenActExit(
          6,
          9,
          claim("meta", "isLocked", "true", 6, "in JavaScript", 5),
          "return false",
          5,
          MIGRATION_LOCK.replace(
            '  await meta.updateOne({ name: "schema" }, { $set: { isLocked: true } });',
            '  const claimed = await meta.updateOne({ name: "schema", isLocked: { $ne: true } }, { $set: { isLocked: true } });\n  if (claimed.matchedCount === 0) return false;',
          ),
        ),
      ],
    },
    {
      name: "a status taken with a lock-named holder is a claim, whatever language its value is in",
      code: pickQueue(),
      errors: [
        checkThenAct(
          4,
          10,
          claim("pickItem", "status", "EN_PREPARACION", 4, "with a separate read", 2),
          pickQueue().replace("where: { id: item.id },", 'where: { id: item.id, status: { not: "EN_PREPARACION" } },'),
        ),
      ],
    },
    {
      // a row of a settings table used as a lock under a constant name: read, checked in JS, then upserted
      code: KEYED_LOCK,
      errors: [
        {
          messageId: "checkThenTake",
          line: 10,
          column: 9,
          data: {
            model: "appConfig",
            field: "name",
            value: "weekly_digest_lock",
            claimLine: "10",
            checkedWhere: "with a separate read",
            checkLine: "5",
          },
        },
      ],
    },
    {
      // early return after a JS check
      code: `export async function startJob(jobId: string) {
  const job = await prisma.job.findUnique({ where: { id: jobId } });
  if (!job || job.status !== "QUEUED") return false;
  await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING" } });
  return true;
}`,
      errors: [
        requireValue(
          4,
          9,
          claim("job", "status", "RUNNING", 4, "in JavaScript", 3),
          '"QUEUED"',
          `export async function startJob(jobId: string) {
  const job = await prisma.job.findUnique({ where: { id: jobId } });
  if (!job || job.status !== "QUEUED") return false;
  await prisma.job.update({ where: { id: jobId, status: "QUEUED" }, data: { status: "RUNNING" } });
  return true;
}`,
        ),
      ],
    },
    {
      // enclosing if
      code: `export async function resume(run: Run) {
  if (run.status === "PAUSED") {
    await prisma.run.update({ where: { id: run.id }, data: { status: "RUNNING" } });
  }
}`,
      errors: [
        requireValue(
          3,
          11,
          claim("run", "status", "RUNNING", 3, "in JavaScript", 2),
          '"PAUSED"',
          `export async function resume(run: Run) {
  if (run.status === "PAUSED") {
    await prisma.run.update({ where: { id: run.id, status: "PAUSED" }, data: { status: "RUNNING" } });
  }
}`,
        ),
      ],
    },
    {
      // early throw
      code: `async function process(orderId: string) {
  const order = await prisma.order.findUniqueOrThrow({ where: { id: orderId } });
  if (order.status === "PROCESSING") throw new ConflictException("already processing");
  await prisma.order.update({ where: { id: orderId }, data: { status: "PROCESSING" } });
}`,
      errors: [
        checkThenAct(
          4,
          9,
          claim("order", "status", "PROCESSING", 4, "in JavaScript", 3),
          `async function process(orderId: string) {
  const order = await prisma.order.findUniqueOrThrow({ where: { id: orderId } });
  if (order.status === "PROCESSING") throw new ConflictException("already processing");
  await prisma.order.update({ where: { id: orderId, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
}`,
        ),
      ],
    },
    {
      // a separate read picks a pending run, then the write is by id
      code: `export async function pickNextRun() {
  const run = await prisma.run.findFirst({ where: { status: "pending" }, orderBy: { createdAt: "asc" } });
  if (!run) return null;
  return prisma.run.update({ where: { id: run.id }, data: { status: "running" } });
}`,
      errors: [
        checkThenAct(
          4,
          10,
          claim("run", "status", "running", 4, "with a separate read", 2),
          `export async function pickNextRun() {
  const run = await prisma.run.findFirst({ where: { status: "pending" }, orderBy: { createdAt: "asc" } });
  if (!run) return null;
  return prisma.run.update({ where: { id: run.id, status: { not: "running" } }, data: { status: "running" } });
}`,
        ),
      ],
    },
    {
      // findMany with in, then a loop of writes
      code: `export async function drainQueue() {
  const queued = await prisma.email.findMany({ where: { status: { in: ["QUEUED", "RETRY"] } }, take: 50 });
  for (const email of queued) {
    await prisma.email.update({ where: { id: email.id }, data: { status: "SENDING" } });
    await send(email);
  }
}`,
      errors: [
        checkThenAct(
          4,
          11,
          claim("email", "status", "SENDING", 4, "with a separate read", 2),
          `export async function drainQueue() {
  const queued = await prisma.email.findMany({ where: { status: { in: ["QUEUED", "RETRY"] } }, take: 50 });
  for (const email of queued) {
    await prisma.email.update({ where: { id: email.id, status: { not: "SENDING" } }, data: { status: "SENDING" } });
    await send(email);
  }
}`,
        ),
      ],
    },
    {
      // .then callback with an optional-chained check
      code: `export function claimExport(exportId: string) {
  return prisma.exportJob.findUnique({ where: { id: exportId } }).then((exp) => {
    if (exp?.status !== "READY") return null;
    return prisma.exportJob.update({ where: { id: exportId }, data: { status: "EXPORTING" } });
  });
}`,
      errors: [
        requireValue(
          4,
          12,
          claim("exportJob", "status", "EXPORTING", 4, "in JavaScript", 3),
          '"READY"',
          `export function claimExport(exportId: string) {
  return prisma.exportJob.findUnique({ where: { id: exportId } }).then((exp) => {
    if (exp?.status !== "READY") return null;
    return prisma.exportJob.update({ where: { id: exportId, status: "READY" }, data: { status: "EXPORTING" } });
  });
}`,
        ),
      ],
    },
    {
      // destructured delegate, shorthand where
      code: `const { job } = prisma;
export async function start(id: string) {
  const current = await job.findUnique({ where: { id } });
  if (current?.status === "RUNNING") return;
  await job.update({ where: { id }, data: { status: "RUNNING" } });
}`,
      errors: [
        checkThenAct(
          5,
          9,
          claim("job", "status", "RUNNING", 5, "in JavaScript", 4),
          `const { job } = prisma;
export async function start(id: string) {
  const current = await job.findUnique({ where: { id } });
  if (current?.status === "RUNNING") return;
  await job.update({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
        ),
      ],
    },
    {
      // delegate in a variable; the read excludes the value with NOT
      code: `const jobs = prisma.job;
export async function claimOne(queue: string) {
  const next = await jobs.findFirst({ where: { queue, NOT: { status: "PROCESSING" } } });
  if (next) await jobs.update({ where: { id: next.id }, data: { status: "PROCESSING" } });
}`,
      errors: [
        checkThenAct(
          4,
          19,
          claim("job", "status", "PROCESSING", 4, "with a separate read", 3),
          `const jobs = prisma.job;
export async function claimOne(queue: string) {
  const next = await jobs.findFirst({ where: { queue, NOT: { status: "PROCESSING" } } });
  if (next) await jobs.update({ where: { id: next.id, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
}`,
        ),
      ],
    },
    {
      // TS enum: the suggestion writes the enum member as the claim does
      code: `enum ExportStatus { Idle = "IDLE", Exporting = "EXPORTING", Done = "DONE" }
export async function exportReport(reportId: string) {
  const report = await prisma.report.findUniqueOrThrow({ where: { id: reportId } });
  if (report.exportStatus !== ExportStatus.Idle) throw new Error("busy");
  await prisma.report.update({ where: { id: reportId }, data: { exportStatus: ExportStatus.Exporting } });
}`,
      errors: [
        checkThenAct(
          5,
          9,
          claim("report", "exportStatus", "EXPORTING", 5, "in JavaScript", 4),
          `enum ExportStatus { Idle = "IDLE", Exporting = "EXPORTING", Done = "DONE" }
export async function exportReport(reportId: string) {
  const report = await prisma.report.findUniqueOrThrow({ where: { id: reportId } });
  if (report.exportStatus !== ExportStatus.Idle) throw new Error("busy");
  await prisma.report.update({ where: { id: reportId, exportStatus: { not: ExportStatus.Exporting } }, data: { exportStatus: ExportStatus.Exporting } });
}`,
        ),
      ],
    },
    {
      // as const object
      code: `const Status = { Queued: "QUEUED", Working: "WORKING", Done: "DONE" } as const;
export async function work(taskId: string) {
  const task = await prisma.task.findFirst({ where: { id: taskId, status: Status.Queued } });
  if (!task) return;
  await prisma.task.update({ where: { id: taskId }, data: { status: Status.Working } });
}`,
      errors: [
        checkThenAct(
          5,
          9,
          claim("task", "status", "WORKING", 5, "with a separate read", 3),
          `const Status = { Queued: "QUEUED", Working: "WORKING", Done: "DONE" } as const;
export async function work(taskId: string) {
  const task = await prisma.task.findFirst({ where: { id: taskId, status: Status.Queued } });
  if (!task) return;
  await prisma.task.update({ where: { id: taskId, status: { not: Status.Working } }, data: { status: Status.Working } });
}`,
        ),
      ],
    },
    {
      // an enum imported from @prisma/client, const binding for the where's id
      code: `import { RunStatus } from "@prisma/client";
export async function trigger(runId: string) {
  const run = await prisma.run.findUnique({ where: { id: runId } });
  if (run?.status !== RunStatus.QUEUED) return;
  await prisma.run.update({ where: { id: runId }, data: { status: RunStatus.RUNNING } });
}`,
      errors: [
        requireValue(
          5,
          9,
          claim("run", "status", "RUNNING", 5, "in JavaScript", 4),
          "RunStatus.QUEUED",
          `import { RunStatus } from "@prisma/client";
export async function trigger(runId: string) {
  const run = await prisma.run.findUnique({ where: { id: runId } });
  if (run?.status !== RunStatus.QUEUED) return;
  await prisma.run.update({ where: { id: runId, status: RunStatus.QUEUED }, data: { status: RunStatus.RUNNING } });
}`,
        ),
      ],
    },
    {
      // read and write inside the same $transaction callback, notIn
      code: `export async function claimInvoice(invoiceId: string) {
  return prisma.$transaction(async (tx) => {
    const invoice = await tx.invoice.findFirst({ where: { id: invoiceId, status: { notIn: ["PROCESSING", "PAID"] } } });
    if (!invoice) throw new Error("not claimable");
    return tx.invoice.update({ where: { id: invoiceId }, data: { status: "PROCESSING" } });
  });
}`,
      errors: [
        checkThenAct(
          5,
          12,
          claim("invoice", "status", "PROCESSING", 5, "with a separate read", 3),
          `export async function claimInvoice(invoiceId: string) {
  return prisma.$transaction(async (tx) => {
    const invoice = await tx.invoice.findFirst({ where: { id: invoiceId, status: { notIn: ["PROCESSING", "PAID"] } } });
    if (!invoice) throw new Error("not claimable");
    return tx.invoice.update({ where: { id: invoiceId, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
  });
}`,
        ),
      ],
    },
    {
      // NestJS service on this.prisma, early throw in a block
      code: `@Injectable()
export class ImportService {
  constructor(private readonly prisma: PrismaService) {}

  async startImport(importId: string) {
    const record = await this.prisma.dataImport.findUniqueOrThrow({ where: { id: importId } });
    if (record.status === ImportStatus.IMPORTING) {
      throw new ConflictException("import already running");
    }
    await this.prisma.dataImport.update({ where: { id: importId }, data: { status: ImportStatus.IMPORTING } });
  }
}`,
      errors: [
        checkThenAct(
          10,
          11,
          claim("dataImport", "status", "IMPORTING", 10, "in JavaScript", 7),
          `@Injectable()
export class ImportService {
  constructor(private readonly prisma: PrismaService) {}

  async startImport(importId: string) {
    const record = await this.prisma.dataImport.findUniqueOrThrow({ where: { id: importId } });
    if (record.status === ImportStatus.IMPORTING) {
      throw new ConflictException("import already running");
    }
    await this.prisma.dataImport.update({ where: { id: importId, status: { not: ImportStatus.IMPORTING } }, data: { status: ImportStatus.IMPORTING } });
  }
}`,
        ),
      ],
    },
    {
      // this.db, the read excludes with in
      code: `export class BackupService {
  constructor(private db: PrismaClient) {}
  async run(backupId: string) {
    const due = await this.db.backup.findFirst({ where: { id: backupId, status: { in: ["SCHEDULED", "FAILED"] } } });
    if (due == null) return;
    await this.db.backup.update({ where: { id: backupId }, data: { status: "RUNNING" } });
  }
}`,
      errors: [
        checkThenAct(
          6,
          11,
          claim("backup", "status", "RUNNING", 6, "with a separate read", 4),
          `export class BackupService {
  constructor(private db: PrismaClient) {}
  async run(backupId: string) {
    const due = await this.db.backup.findFirst({ where: { id: backupId, status: { in: ["SCHEDULED", "FAILED"] } } });
    if (due == null) return;
    await this.db.backup.update({ where: { id: backupId, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  }
}`,
        ),
      ],
    },
    {
      // optional chaining on the client and on the checked row
      code: `export async function lockAccount(accountId: string, client?: PrismaClient) {
  const account = await client?.account.findUnique({ where: { id: accountId } });
  if (account?.state === "LOCKED") return;
  await client?.account.update({ where: { id: accountId }, data: { state: "LOCKED" } });
}`,
      errors: [
        checkThenAct(
          4,
          9,
          claim("account", "state", "LOCKED", 4, "in JavaScript", 3),
          `export async function lockAccount(accountId: string, client?: PrismaClient) {
  const account = await client?.account.findUnique({ where: { id: accountId } });
  if (account?.state === "LOCKED") return;
  await client?.account.update({ where: { id: accountId, state: { not: "LOCKED" } }, data: { state: "LOCKED" } });
}`,
        ),
      ],
    },
    {
      // plain JS, check in a block that throws
      code: `async function startDeploy(prisma, deployId) {
  const deploy = await prisma.deployment.findUnique({ where: { id: deployId } });
  if (deploy.status !== "QUEUED") {
    throw new Error("deployment is not queued");
  }
  await prisma.deployment.update({ where: { id: deployId }, data: { status: "DEPLOYING" } });
}`,
      languageOptions: javascript,
      errors: [
        requireValue(
          6,
          9,
          claim("deployment", "status", "DEPLOYING", 6, "in JavaScript", 3),
          '"QUEUED"',
          `async function startDeploy(prisma, deployId) {
  const deploy = await prisma.deployment.findUnique({ where: { id: deployId } });
  if (deploy.status !== "QUEUED") {
    throw new Error("deployment is not queued");
  }
  await prisma.deployment.update({ where: { id: deployId, status: "QUEUED" }, data: { status: "DEPLOYING" } });
}`,
        ),
      ],
    },
    {
      // plain JS, a ternary guards the write
      code: `export const maybeStart = async (job) =>
  job.status === "QUEUED"
    ? prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } })
    : null;`,
      languageOptions: javascript,
      errors: [
        requireValue(
          3,
          7,
          claim("job", "status", "RUNNING", 3, "in JavaScript", 2),
          '"QUEUED"',
          `export const maybeStart = async (job) =>
  job.status === "QUEUED"
    ? prisma.job.update({ where: { id: job.id, status: "QUEUED" }, data: { status: "RUNNING" } })
    : null;`,
        ),
      ],
    },
    {
      // includes() on a list of statuses, the write also increments a counter
      code: `export async function retryAndRun(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (!["FAILED", "QUEUED"].includes(job.status)) return;
  await prisma.job.update({ where: { id: jobId }, data: { status: "RUNNING", attempts: { increment: 1 } } });
}`,
      errors: [
        checkThenAct(
          4,
          9,
          claim("job", "status", "RUNNING", 4, "in JavaScript", 3),
          `export async function retryAndRun(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (!["FAILED", "QUEUED"].includes(job.status)) return;
  await prisma.job.update({ where: { id: jobId, status: { not: "RUNNING" } }, data: { status: "RUNNING", attempts: { increment: 1 } } });
}`,
        ),
      ],
    },
    {
      // upsert after a JS check
      code: `export async function acquireLease(name: string) {
  const existing = await prisma.lease.findUnique({ where: { name } });
  if (existing?.state === "ACQUIRED") return false;
  await prisma.lease.upsert({ where: { name }, update: { state: "ACQUIRED" }, create: { name, state: "ACQUIRED" } });
  return true;
}`,
      errors: [
        checkThenAct(
          4,
          9,
          claim("lease", "state", "ACQUIRED", 4, "in JavaScript", 3),
          `export async function acquireLease(name: string) {
  const existing = await prisma.lease.findUnique({ where: { name } });
  if (existing?.state === "ACQUIRED") return false;
  await prisma.lease.upsert({ where: { name, state: { not: "ACQUIRED" } }, update: { state: "ACQUIRED" }, create: { name, state: "ACQUIRED" } });
  return true;
}`,
        ),
      ],
    },
    {
      // updateManyAndReturn over the ids of an earlier read
      code: `export async function claimBatch(ids: string[]) {
  const rows = await prisma.item.findMany({ where: { id: { in: ids }, status: "QUEUED" } });
  return prisma.item.updateManyAndReturn({ where: { id: { in: rows.map((r) => r.id) } }, data: { status: "PROCESSING" } });
}`,
      errors: [
        checkThenAct(
          3,
          10,
          claim("item", "status", "PROCESSING", 3, "with a separate read", 2),
          `export async function claimBatch(ids: string[]) {
  const rows = await prisma.item.findMany({ where: { id: { in: ids }, status: "QUEUED" } });
  return prisma.item.updateManyAndReturn({ where: { id: { in: rows.map((r) => r.id) }, status: { not: "PROCESSING" } }, data: { status: "PROCESSING" } });
}`,
        ),
      ],
    },
    {
      // the where is held in a variable: no suggestion
      code: `export async function begin(jobId: string) {
  const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status === "RUNNING") return;
  const byId = { id: jobId };
  await prisma.job.update({ where: byId, data: { status: "RUNNING" } });
}`,
      errors: [checkThenAct(5, 9, claim("job", "status", "RUNNING", 5, "in JavaScript", 3), null)],
    },
    {
      // multi-line where with a trailing comma
      code: `export async function startRender(renderId: string) {
  const render = await prisma.render.findUniqueOrThrow({ where: { id: renderId } });
  if (render.status !== "QUEUED") return;
  await prisma.render.update({
    where: {
      id: renderId,
    },
    data: { status: "RENDERING" },
  });
}`,
      errors: [
        requireValue(
          4,
          9,
          claim("render", "status", "RENDERING", 4, "in JavaScript", 3),
          '"QUEUED"',
          `export async function startRender(renderId: string) {
  const render = await prisma.render.findUniqueOrThrow({ where: { id: renderId } });
  if (render.status !== "QUEUED") return;
  await prisma.render.update({
    where: {
      id: renderId, status: "QUEUED",
    },
    data: { status: "RENDERING" },
  });
}`,
        ),
      ],
    },
    {
      // a singleton row with an empty where
      code: `export async function startMaintenance() {
  const state = await prisma.maintenance.findFirst({ where: { status: "IDLE" } });
  if (!state) return;
  await prisma.maintenance.updateMany({ where: {}, data: { status: "LOCKED" } });
}`,
      errors: [
        checkThenAct(
          4,
          9,
          claim("maintenance", "status", "LOCKED", 4, "with a separate read", 2),
          `export async function startMaintenance() {
  const state = await prisma.maintenance.findFirst({ where: { status: "IDLE" } });
  if (!state) return;
  await prisma.maintenance.updateMany({ where: { status: { not: "LOCKED" } }, data: { status: "LOCKED" } });
}`,
        ),
      ],
    },
    {
      // a && guard
      code: `async function kick(task: Task) {
  task.status !== "RUNNING" && (await prisma.task.update({ where: { id: task.id }, data: { status: "RUNNING" } }));
}`,
      errors: [
        checkThenAct(
          2,
          39,
          claim("task", "status", "RUNNING", 2, "in JavaScript", 2),
          `async function kick(task: Task) {
  task.status !== "RUNNING" && (await prisma.task.update({ where: { id: task.id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }));
}`,
        ),
      ],
    },
    {
      // continue in a loop is an early exit
      code: `export async function startAll(jobs: Job[]) {
  for (const job of jobs) {
    if (job.status !== "QUEUED") continue;
    await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
  }
}`,
      errors: [
        requireValue(
          4,
          11,
          claim("job", "status", "RUNNING", 4, "in JavaScript", 3),
          '"QUEUED"',
          `export async function startAll(jobs: Job[]) {
  for (const job of jobs) {
    if (job.status !== "QUEUED") continue;
    await prisma.job.update({ where: { id: job.id, status: "QUEUED" }, data: { status: "RUNNING" } });
  }
}`,
        ),
      ],
    },
    {
      // quoted keys
      code: `export async function start(job: Job) {
  if (job.status !== "QUEUED") return;
  await prisma.job.update({ where: { "id": job.id }, data: { "status": "RUNNING" } });
}`,
      errors: [
        requireValue(
          3,
          9,
          claim("job", "status", "RUNNING", 3, "in JavaScript", 2),
          '"QUEUED"',
          `export async function start(job: Job) {
  if (job.status !== "QUEUED") return;
  await prisma.job.update({ where: { "id": job.id, status: "QUEUED" }, data: { "status": "RUNNING" } });
}`,
        ),
      ],
    },
    {
      // the where already filters the status but admits the value: no suggestion
      code: `export async function start(job: Job) {
  if (job.status === "RUNNING") return;
  await prisma.job.updateMany({ where: { id: job.id, status: { in: ["QUEUED", "RUNNING"] } }, data: { status: "RUNNING" } });
}`,
      errors: [checkThenAct(3, 9, claim("job", "status", "RUNNING", 3, "in JavaScript", 2), null)],
    },
    {
      // findFirstOrThrow with equals and select
      code: `export async function start(id: string) {
  const job = await prisma.job.findFirstOrThrow({ where: { id, status: { equals: "QUEUED" } }, select: { id: true } });
  await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
}`,
      errors: [
        checkThenAct(
          3,
          9,
          claim("job", "status", "RUNNING", 3, "with a separate read", 2),
          `export async function start(id: string) {
  const job = await prisma.job.findFirstOrThrow({ where: { id, status: { equals: "QUEUED" } }, select: { id: true } });
  await prisma.job.update({ where: { id: job.id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
        ),
      ],
    },
    {
      // a read whose where is an OR of statuses, each excluding the value
      code: `export async function pickRetry() {
  const job = await prisma.job.findFirst({ where: { OR: [{ status: "QUEUED" }, { status: "FAILED", attempts: { lt: 3 } }] } });
  if (!job) return;
  await prisma.job.update({ where: { id: job.id }, data: { status: "RUNNING" } });
}`,
      errors: [
        checkThenAct(
          4,
          9,
          claim("job", "status", "RUNNING", 4, "with a separate read", 2),
          `export async function pickRetry() {
  const job = await prisma.job.findFirst({ where: { OR: [{ status: "QUEUED" }, { status: "FAILED", attempts: { lt: 3 } }] } });
  if (!job) return;
  await prisma.job.update({ where: { id: job.id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
        ),
      ],
    },
    {
      // the schema's key is (documentId, editorId): two editors that both find no row both create one
      code: EDITOR_ROW,
      settings: keys([["documentId", "editorId"]]),
      errors: [
        {
          messageId: "checkThenInsert",
          line: 4,
          column: 9,
          data: { model: "documentEditor", checkLine: "2", fields: "(documentId)", keys: "(documentId, editorId)" },
        },
      ],
    },
  ],
});

// The whole fix where the module shows it: the write made conditional, and the check's own way out taken again when
// the write changed no row, read off the result as the store writes it. Elsewhere the condition alone.
const pgStart = (head: string, check: string, write: string) => `${head}const pool = new pg.Pool();
export async function startImport(id) {
  const { rows } = await pool.query("SELECT status FROM imports WHERE id = $1", [id]);
  ${check}
  ${write}
  await runImport(id);
  return "started";
}`;
const PG_IMPORT = 'import pg from "pg";\n';
const PG_CHECK = 'if (rows[0].status === "RUNNING") return "busy";';
const PG_WRITE = "await pool.query(\"UPDATE imports SET status = 'RUNNING' WHERE id = $1\", [id]);";
const pgData = claim("imports", "status", "RUNNING", 6, "in JavaScript", 5);

const typeormStart = (check: string) => `import { Not, Repository } from "typeorm";
export class CampaignService {
  constructor(private readonly campaigns: Repository<Campaign>) {}
  async start(id: string) {
    const campaign = await this.campaigns.findOneBy({ id });
    ${check}
    await this.campaigns.update({ id }, { status: "sending" });
    await this.send(campaign);
  }
}`;

ruleTester.run("atomic-claim: the condition and the check's way out", rule, {
  valid: [],
  invalid: [
    {
      name: "node-postgres: status <> 'RUNNING', and the check's return when rowCount is 0",
      code: pgStart(PG_IMPORT, PG_CHECK, PG_WRITE),
      languageOptions: javascript,
      errors: [
        checkThenActExit(
          6,
          9,
          pgData,
          'return "busy"',
          5,
          pgStart(
            PG_IMPORT,
            PG_CHECK,
            "const claimed = await pool.query(\"UPDATE imports SET status = 'RUNNING' WHERE status <> 'RUNNING' AND id = $1\", [id]);\n  if (claimed.rowCount === 0) return \"busy\";",
          ),
        ),
      ],
    },
    {
      name: "a check that lets one value by: the write requires it, and the check's return on no row",
      code: pgStart(PG_IMPORT, 'if (rows[0].status !== "QUEUED") return "busy";', PG_WRITE),
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 6,
          column: 9,
          data: pgData,
          suggestions: [
            {
              messageId: "requireValueAndExit",
              data: { field: "status", required: '"QUEUED"', exit: 'return "busy"', checkLine: "5" },
              output: pgStart(
                PG_IMPORT,
                'if (rows[0].status !== "QUEUED") return "busy";',
                "const claimed = await pool.query(\"UPDATE imports SET status = 'RUNNING' WHERE status = 'QUEUED' AND id = $1\", [id]);\n  if (claimed.rowCount === 0) return \"busy\";",
              ),
            },
          ],
        },
      ],
    },
    {
      name: "TypeORM: the check's throw when affected is 0",
      code: typeormStart('if (campaign.status === "sending") throw new Error("already sending");'),
      errors: [
        checkThenActExit(
          7,
          11,
          claim("Campaign", "status", "sending", 7, "in JavaScript", 6),
          'throw new Error("already sending")',
          6,
          typeormStart('if (campaign.status === "sending") throw new Error("already sending");').replace(
            '    await this.campaigns.update({ id }, { status: "sending" });',
            '    const claimed = await this.campaigns.update({ id, status: Not("sending") }, { status: "sending" });\n    if (claimed.affected === 0) throw new Error("already sending");',
          ),
        ),
      ],
    },
    {
      name: "Prisma's updateMany: count === 0",
      code: `export async function startJob(id: string) {
  const job = await prisma.job.findUnique({ where: { id } });
  if (job.status === "RUNNING") return false;
  await prisma.job.updateMany({ where: { id }, data: { status: "RUNNING" } });
  return true;
}`,
      errors: [
        checkThenActExit(
          4,
          9,
          claim("job", "status", "RUNNING", 4, "in JavaScript", 3),
          "return false",
          3,
          `export async function startJob(id: string) {
  const job = await prisma.job.findUnique({ where: { id } });
  if (job.status === "RUNNING") return false;
  const claimed = await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  if (claimed.count === 0) return false;
  return true;
}`,
        ),
      ],
    },
    {
      name: "Sequelize: [count] === 0, the name `claimed` taken already",
      code: `import { Op } from "sequelize";
export async function startSync(id, claimed) {
  const sync = await Sync.findByPk(id);
  if (sync.state === "syncing") throw new Error("busy");
  await Sync.update({ state: "syncing" }, { where: { id } });
}`,
      languageOptions: javascript,
      errors: [
        checkThenActExit(
          5,
          9,
          claim("Sync", "state", "syncing", 5, "in JavaScript", 4),
          'throw new Error("busy")',
          4,
          `import { Op } from "sequelize";
export async function startSync(id, claimed) {
  const sync = await Sync.findByPk(id);
  if (sync.state === "syncing") throw new Error("busy");
  const claimed2 = await Sync.update({ state: "syncing" }, { where: { id, state: { [Op.ne]: "syncing" } } });
  if (claimed2[0] === 0) throw new Error("busy");
}`,
        ),
      ],
    },
    // The condition alone: no way out to copy, or no way to read the result.
    {
      name: "a module that does not import pg: its `query` may answer rows, so no count is read",
      code: pgStart("", PG_CHECK, PG_WRITE),
      languageOptions: javascript,
      errors: [
        checkThenAct(
          5,
          9,
          claim("imports", "status", "RUNNING", 5, "in JavaScript", 4),
          pgStart("", PG_CHECK, PG_WRITE.replace("WHERE id", "WHERE status <> 'RUNNING' AND id")),
        ),
      ],
    },
    {
      name: "the check's consequent does more than leave",
      code: pgStart(PG_IMPORT, 'if (rows[0].status === "RUNNING") { log("busy"); return "busy"; }', PG_WRITE),
      languageOptions: javascript,
      errors: [
        checkThenAct(
          6,
          9,
          pgData,
          pgStart(
            PG_IMPORT,
            'if (rows[0].status === "RUNNING") { log("busy"); return "busy"; }',
            PG_WRITE.replace("WHERE id", "WHERE status <> 'RUNNING' AND id"),
          ),
        ),
      ],
    },
    {
      // A catch would swallow the way out and the code after the try go on; a finally would clean up a lock never held.
      name: "the write inside a try",
      code: pgStart(PG_IMPORT, PG_CHECK, `try {\n    ${PG_WRITE}\n  } catch (error) {\n    log(error);\n  }`),
      languageOptions: javascript,
      errors: [
        checkThenAct(
          7,
          11,
          pgData,
          pgStart(
            PG_IMPORT,
            PG_CHECK,
            `try {\n    ${PG_WRITE.replace("WHERE id", "WHERE status <> 'RUNNING' AND id")}\n  } catch (error) {\n    log(error);\n  }`,
          ),
        ),
      ],
    },
    {
      name: "the write's result is read already: the code acts on it",
      code: pgStart(PG_IMPORT, PG_CHECK, `const result = ${PG_WRITE}`),
      languageOptions: javascript,
      errors: [
        checkThenAct(
          6,
          24,
          pgData,
          pgStart(
            PG_IMPORT,
            PG_CHECK,
            `const result = ${PG_WRITE.replace("WHERE id", "WHERE status <> 'RUNNING' AND id")}`,
          ),
        ),
      ],
    },
  ],
});

// A table named for locks whose row's time columns are the lease: read by its key, judged unexpired in JavaScript,
// then upserted (issue 35: a scheduler's job-lock table keyed by job and shard). The columns need no lock word of
// their own; the table names the lock. A lock table's row stamped with no age test before it is no lease.
const LOCK_TABLE_LEASE = `export async function tryLock(job: string, shard: string, ttlMs: number): Promise<boolean> {
  const now = new Date();
  const row = await prisma.cronLock.findUnique({ where: { job_shard: { job, shard } } });
  if (row && row.expiresAt > now) return false;
  await prisma.cronLock.upsert({
    where: { job_shard: { job, shard } },
    create: { job, shard, takenAt: now, expiresAt: new Date(now.getTime() + ttlMs) },
    update: { takenAt: now, expiresAt: new Date(now.getTime() + ttlMs) },
  });
  return true;
}`;

ruleTester.run("atomic-claim (leases of a lock table)", rule, {
  valid: [
    {
      name: "a lock table's audit row stamped after a read that judges nothing",
      code: `export async function noteSeen(id: string) {
  const row = await prisma.lockEvent.findUnique({ where: { id } });
  if (!row) return;
  await prisma.lockEvent.update({ where: { id }, data: { seenAt: new Date() } });
}`,
    },
  ],
  invalid: [
    {
      name: "a lock table's lease judged in JavaScript, then upserted by its compound key",
      code: LOCK_TABLE_LEASE,
      errors: [
        {
          messageId: "checkThenLease",
          line: 5,
          data: {
            model: "cronLock",
            field: "expiresAt",
            value: "held",
            claimLine: "5",
            checkedWhere: "with a separate read",
            checkLine: "3",
          },
        },
      ],
    },
  ],
});

// An in-process per-key lock that waits for the holder it found and then takes the key without testing again
// (issue 35, item 3; seen in a sign-up service's lock helper). Waiting in a loop that tests again, or joining the
// work in flight, is sound.

ruleTester.run("atomic-claim (in-process tables)", rule, {
  valid: [
    {
      name: "a wait in a loop that tests the key again before taking it",
      code: WAIT_THEN_TAKE.replace(
        "if (this.held.has(key)) {\n      await this.held.get(key);\n    }",
        "while (this.held.has(key)) {\n      await this.held.get(key);\n    }",
      ),
    },
    {
      name: "a join of work in flight hands back what it finds",
      code: `const inflight = new Map<string, Promise<string>>();
export async function once(key: string, load: () => Promise<string>) {
  if (inflight.has(key)) return await inflight.get(key)!;
  const p = load();
  inflight.set(key, p);
  try { return await p; } finally { inflight.delete(key); }
}`,
    },
  ],
  invalid: [
    {
      name: "waits for the holder, then takes the key without testing it again",
      code: WAIT_THEN_TAKE,
      errors: [{ messageId: "tableWaitThenTake", line: 8, data: { table: "this.held", waitLine: "5" } }],
    },
  ],
});
