// Real code of blind-17 (issue 35), read by what it does, in our words:
// - PostgreSQL's advisory functions called by name through PostgREST (`supabase.rpc("pg_try_advisory_lock", …)`):
//   each request runs on whichever pooled server connection is free, so a session lock stays with that connection
//   after the request and the unlock, a request of its own, may reach another;
// - a Kysely instance hands each query to its dialect's pool, also a raw fragment run on it (sql`…`.execute(db)):
//   a session lock taken so is a pooled one; a Kysely transaction keeps one connection;
// - a promise memo written in the long form of `||=` (`slot = slot || connect()`) keeps a rejection as the short
//   form does; and a slot named `pending` is no teardown (`end` is a word of a name, not its letters: `pEND`);
// - a lock row taken over with a compare-and-set on what the read found (`where: { key, value: found.value }`) is
//   one conditional write: of two callers that read the same row, the second matches nothing;
// - a write that empties the holder's column (`workerId: null`) gives the row up, whatever state it moves it to;
// - a try-acquire whose function returns the outcome (`return held`) hands the lock to its caller, and a close on the
//   way taken when the lock was refused (`if (!held) await conn.end()`) is no release of it;
// - and one of blind-18: a write of many rows pinned only by the identity the module stamps on its lock rows
//   (`deleteMany({ holder: PROCESS_ID })` at shut-down) is the process's clean-up of its own rows, not a release;
//   and a conditional claim whose outcome nothing reads (not kept, kept and never read, or only PostgREST's `error`)
//   lets the caller that lost go on beside the holder.
import releaseInFinally from "../../rules/release-in-finally.js";
import atomicClaim from "../../rules/atomic-claim.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import { ruleTester } from "../rule-tester.js";

/** A nightly report guarded by a session advisory lock taken and freed through PostgREST calls. */
const RPC_LOCK = (lockFn: string, unlockFn: string) => `import { createClient } from "@supabase/supabase-js";

const db = createClient(process.env.API_URL!, process.env.API_KEY!);
const REPORT_LOCK = 4242;

export async function nightlyReport() {
  const { data: got } = await db.rpc("${lockFn}", { key: REPORT_LOCK });
  if (!got) return "busy";
  try {
    await buildReport();
    return "done";
  } finally {
    await db.rpc("${unlockFn}", { key: REPORT_LOCK });
  }
}
`;

ruleTester.run("release-in-finally (advisory locks through PostgREST)", releaseInFinally, {
  valid: [
    // A function of the project's own, whose SQL this module does not show: unknown, so quiet.
    { code: RPC_LOCK("acquire_report_lock", "release_report_lock") },
    // A transaction-level lock called alone holds nothing past its own request, but is no session lock left held.
    {
      code: `import { createClient } from "@supabase/supabase-js";
const db = createClient("u", "k");
export async function bump(id: string) {
  const { error } = await db.rpc("increment_views", { id });
  if (error) throw error;
}
`,
    },
  ],
  invalid: [
    {
      code: RPC_LOCK("pg_try_advisory_lock", "pg_advisory_unlock"),
      errors: [
        { messageId: "advisoryOnRequest", line: 7, data: { client: "db" } },
        { messageId: "advisoryUnlockOnRequest", line: 13, data: { client: "db", acquireLine: "7" } },
      ],
    },
  ],
});

/** A scheduler lock of a module handed a Kysely instance: acquire and release are two functions. */
const KYSELY_LOCK = (dbType: string, runOn: string, lockFn = "pg_try_advisory_lock") => `import { sql } from "kysely";
import type { ${dbType} } from "kysely";
import type { Schema } from "./schema";

export async function takeSchedulerLock(db: ${dbType}<Schema>): Promise<boolean> {
  const result = await sql<{ ok: boolean }>\`SELECT ${lockFn}(7001) AS ok\`.execute(${runOn});
  return result.rows[0]?.ok === true;
}

export async function dropSchedulerLock(db: ${dbType}<Schema>): Promise<void> {
  await sql\`SELECT pg_advisory_unlock(7001)\`.execute(${runOn});
}
`;

ruleTester.run("release-in-finally (advisory locks through Kysely)", releaseInFinally, {
  valid: [
    // A Kysely transaction runs every statement on its one connection: its own lock ends with it.
    { code: KYSELY_LOCK("Transaction", "db", "pg_try_advisory_xact_lock") },
  ],
  invalid: [
    {
      // A session lock in a transaction is no pooled one: it outlives a rollback on the transaction's connection.
      code: KYSELY_LOCK("Transaction", "db"),
      errors: [
        {
          messageId: "advisoryUnlockInTransaction",
          line: 6,
          suggestions: [
            { messageId: "useXactLock", output: KYSELY_LOCK("Transaction", "db", "pg_try_advisory_xact_lock") },
          ],
        },
      ],
    },
    {
      code: KYSELY_LOCK("Kysely", "db"),
      errors: [
        { messageId: "advisoryOnPool", line: 6, data: { client: "db" } },
        { messageId: "advisoryUnlockOnPool", line: 11, data: { client: "db", acquireLine: "6" } },
      ],
    },
  ],
});

/** A database connection shared by every request of a serverless handler. */
const MEMO = (fill: string, reset = "") => `import mongoose from "mongoose";

const shared = (globalThis as any).dbShared || { conn: undefined, pending: undefined };

export async function database() {
  if (shared.conn) return shared.conn;
  ${fill}
  shared.conn = await shared.pending;
  return shared.conn;
}
${reset}`;

ruleTester.run("release-in-finally (a promise memo's long form)", releaseInFinally, {
  valid: [
    // Emptied when the connection fails: the next call tries again.
    {
      code: MEMO(
        "shared.pending = shared.pending || mongoose.connect(process.env.DB_URL!);",
        "export function forget() {\n  shared.pending = undefined;\n}\n",
      ),
    },
    // A rejection handler on the promise stored.
    {
      code: MEMO(
        "shared.pending = shared.pending || mongoose.connect(process.env.DB_URL!).catch((e) => { shared.pending = undefined; throw e; });",
      ),
    },
    // A value, not a promise: nothing to reject.
    { code: MEMO("shared.pending = shared.pending || process.env.DB_URL;") },
  ],
  invalid: [
    {
      code: MEMO("shared.pending = shared.pending || mongoose.connect(process.env.DB_URL!);"),
      errors: [
        {
          messageId: "memoKeepsRejection",
          line: 7,
          data: { slot: "shared.pending" },
          suggestions: [
            {
              messageId: "clearOnRejection",
              data: { slot: "shared.pending" },
              output: MEMO(
                "shared.pending = shared.pending || mongoose.connect(process.env.DB_URL!).catch((error) => {\n    shared.pending = undefined;\n    throw error;\n  });",
              ),
            },
          ],
        },
      ],
    },
  ],
});

/** A lease kept as a row of a settings table, taken over once the lease it holds has run out. */
const TAKE_OVER = (filter: string) => `import { db } from "./db";

export async function takeLease(name: string, ms: number): Promise<boolean> {
  const key = \`lease:\${name}\`;
  const next = JSON.stringify({ until: Date.now() + ms });
  const found = await db.setting.findUnique({ where: { key } });
  if (!found) return false;
  if (JSON.parse(found.value).until > Date.now()) return false;
  const res = await db.setting.updateMany({ where: ${filter}, data: { value: next } });
  return res.count === 1;
}
`;

ruleTester.run("atomic-claim (a lock row taken over by compare-and-set)", atomicClaim, {
  valid: [{ code: TAKE_OVER("{ key, value: found.value }") }],
  invalid: [
    {
      // By key alone: two callers that read the expired row both take it.
      code: TAKE_OVER("{ key }"),
      errors: [
        { messageId: "checkThenTake", line: 9, data: { model: "setting", value: "`lease:${name}`", checkLine: "6" } },
      ],
    },
  ],
});

/** A job queue's two writes of one state field: the claim by a worker, and the hand-back after a failed attempt. */
const HAND_BACK = (backTo: string, holder: string) => `import { prisma } from "./db";

export async function claimNext(workerId: string) {
  const job = await prisma.renderJob.findFirst({ where: { state: "QUEUED" } });
  if (!job) return null;
  const res = await prisma.renderJob.updateMany({
    where: { id: job.id, state: "QUEUED" },
    data: { state: "RUNNING", workerId, heartbeatAt: new Date() },
  });
  return res.count === 1 ? job : null;
}

export async function giveBack(jobId: string) {
  const res = await prisma.renderJob.updateMany({
    where: { id: jobId, state: "RUNNING" },
    data: { state: "${backTo}", workerId: ${holder}, heartbeatAt: null },
  });
  return res.count > 0;
}

export async function sweep(cutoff: Date) {
  await prisma.renderJob.updateMany({
    where: { state: "RUNNING", heartbeatAt: { lt: cutoff } },
    data: { state: "QUEUED", workerId: null },
  });
}
`;

ruleTester.run("require-stale-recovery (a write that empties the holder gives the row up)", requireStaleRecovery, {
  valid: [
    // RETRYING reads as work under way by its -ING, but a write that empties `workerId` names no holder: a hand-back.
    { code: HAND_BACK("RETRYING", "null") },
  ],
  invalid: [
    {
      // Moved to RETRYING by a named worker: a claim of RETRYING that nothing recovers.
      code: HAND_BACK("RETRYING", '"retrier"'),
      errors: [
        { messageId: "missingRecovery", line: 14, data: { model: "renderJob", field: "state", value: "RETRYING" } },
      ],
    },
  ],
});

/** A worker lock on a connection of its own, made by a factory: `tryAcquire()` beside `release()`. */
const WORKER_LOCK = (afterQuery: string) => `import { Client } from "pg";

export function workerLock(url: string) {
  const conn = new Client({ connectionString: url });
  let held = false;
  return {
    async tryAcquire() {
      await conn.connect();
      const res = await conn.query("SELECT pg_try_advisory_lock(5150) AS ok");
${afterQuery}
    },
    async release() {
      if (held) await conn.query("SELECT pg_advisory_unlock(5150)");
      held = false;
      await conn.end();
    },
  };
}
`;

const TAKE_AND_WORK = `      held = res.rows[0]?.ok === true;
      if (!held) {
        await conn.end();
        return false;
      }
      const n = await runBatch();
      if (n === 0) return true;
      await conn.query("SELECT pg_advisory_unlock(5150)");
      return true;`;

const TAKE_AND_WORK_IN_TRY = `      try {
        held = res.rows[0]?.ok === true;
        if (!held) {
          await conn.end();
          return false;
        }
        const n = await runBatch();
        if (n === 0) return true;
      } finally {
        await conn.query("SELECT pg_advisory_unlock(5150)");
      }
      return true;`;

ruleTester.run("release-in-finally (an acquire that returns its outcome)", releaseInFinally, {
  valid: [
    // `return held` tells the caller it holds the lock, and `release()` beside it gives it back; the close when the
    // lock was refused ends an attempt that holds nothing.
    {
      code: WORKER_LOCK(
        "      held = res.rows[0]?.ok === true;\n      if (!held) await conn.end();\n      return held;",
      ),
    },
  ],
  invalid: [
    {
      // Taken, then work run here and a way out that unlocks nothing: the lock stays with the connection.
      code: WORKER_LOCK(TAKE_AND_WORK),
      errors: [
        {
          messageId: "missedOnReturn",
          line: 9,
          data: {
            lock: "the session advisory lock (pg_try_advisory_lock)",
            exitLine: "16",
            consequence:
              "the connection keeps the session lock, and a pooled connection goes back to the pool still holding it.",
          },
          suggestions: [{ messageId: "moveToFinally", output: WORKER_LOCK(TAKE_AND_WORK_IN_TRY) }],
        },
      ],
    },
  ],
});

/** Job locks stamped with this process's id (in `host`, a column no vocabulary names), taken over once stale. */
const PROCESS_LOCKS = (giveBack: string) => `import { randomUUID } from "node:crypto";
import { prisma } from "./db";

const PROCESS_ID = randomUUID();

export async function lockJob(job: string): Promise<boolean> {
  const until = new Date(Date.now() + 60_000);
  try {
    await prisma.jobLock.create({ data: { job, host: PROCESS_ID, expiresAt: until } });
    return true;
  } catch {
    const row = await prisma.jobLock.findUnique({ where: { job } });
    if (!row || row.expiresAt > new Date()) return false;
    await prisma.jobLock.update({ where: { job }, data: { host: PROCESS_ID, expiresAt: until } });
    return true;
  }
}

export async function onShutdown(): Promise<void> {
  await prisma.jobLock.deleteMany({ where: { host: PROCESS_ID } });
}
${giveBack}`;

ruleTester.run("owner-checked-release (a process's clean-up of its own rows, blind-18)", ownerCheckedRelease, {
  valid: [
    // `onShutdown` frees every row this process stamped, whatever the job: no other holder's row matches it.
    { code: PROCESS_LOCKS("") },
  ],
  invalid: [
    {
      // One job's lock by its key alone is a release that may free the row another process took over; the clean-up
      // beside it is still not one.
      code: PROCESS_LOCKS(
        "\nexport async function giveBack(job: string): Promise<void> {\n  await prisma.jobLock.deleteMany({ where: { job } });\n}\n",
      ),
      errors: [
        {
          messageId: "rowRelease",
          line: 24,
          data: {
            operation: "delete",
            lock: "lock row in jobLock",
            acquireLine: "9",
            filter: "job",
            expires: "is swept when stale",
            expiryLine: "14",
          },
        },
      ],
    },
  ],
});

/** A report worker that claims its row with a conditional write, then builds the report. */
const CLAIM_THEN_BUILD = (claim: string) => `import { prisma } from "./db";

export async function buildOne(reportId: string) {
${claim}
  await renderReport(reportId);
  await prisma.report.update({ where: { id: reportId }, data: { state: "DONE" } });
}
`;

/** The same worker on Supabase: the claim's result is destructured as `claimed`. */
const SUPABASE_CLAIM = (chainEnd: string, kept: string) => `import { createClient } from "@supabase/supabase-js";
const db = createClient("u", "k");

export async function buildOne(reportId: string) {
  const { ${kept} } = await db.from("reports").update({ state: "BUILDING" }).eq("id", reportId).eq("state", "QUEUED")${chainEnd};
  if (claimError) return;
  await renderReport(reportId);
}
`;

const unread = (line: number, how: string, fix: string, model = "report", workLine = "5") => ({
  messageId: "unreadClaim" as const,
  line,
  data: { model, field: "state", value: "BUILDING", how, workLine, fix },
});
const TEST_COUNT = "Go on only when the write changed a row: test its count of changed rows";

ruleTester.run("atomic-claim (a conditional claim whose outcome nothing reads)", atomicClaim, {
  valid: [
    // The count decides.
    {
      code: CLAIM_THEN_BUILD(
        '  const res = await prisma.report.updateMany({ where: { id: reportId, state: "QUEUED" }, data: { state: "BUILDING" } });\n  if (res.count === 0) return;',
      ),
    },
    // Prisma's `update` throws when its filter matches no row: the loser leaves by the rejection.
    {
      code: CLAIM_THEN_BUILD(
        '  await prisma.report.update({ where: { id: reportId, state: "QUEUED" }, data: { state: "BUILDING" } });',
      ),
    },
    // `.select().single()` turns a filter that matched nothing into the error the test reads.
    { code: SUPABASE_CLAIM('.select("id").single()', "error: claimError") },
    // A batch claimed with this caller's token and read back by it: the caller goes on with the rows it won.
    {
      code: `import { prisma } from "./db";

export async function claimBatch(ids: string[], me: string) {
  await prisma.report.updateMany({ where: { id: { in: ids }, state: "QUEUED" }, data: { state: "BUILDING", claimedBy: me } });
  return prisma.report.findMany({ where: { id: { in: ids }, claimedBy: me } });
}
`,
    },
    // The row read back decides.
    {
      code: SUPABASE_CLAIM('.select("id")', "data: won, error: claimError").replace(
        "if (claimError)",
        "if (claimError || !won?.length)",
      ),
    },
  ],
  invalid: [
    {
      code: CLAIM_THEN_BUILD(
        '  await prisma.report.updateMany({ where: { id: reportId, state: "QUEUED" }, data: { state: "BUILDING" } });',
      ),
      errors: [unread(4, "nothing reads whether it changed a row (its result is not kept)", TEST_COUNT)],
    },
    {
      code: CLAIM_THEN_BUILD(
        '  const res = await prisma.report.updateMany({ where: { id: reportId, state: "QUEUED" }, data: { state: "BUILDING" } });',
      ),
      errors: [unread(4, "nothing reads whether it changed a row (`res` is never read)", TEST_COUNT)],
    },
    {
      code: SUPABASE_CLAIM("", "error: claimError"),
      errors: [
        unread(
          5,
          "only its `error` is read, which stays empty when the filter matched no row",
          "Go on only when the write changed a row: count it, or `.select()` the row and test it",
          "reports",
          "7",
        ),
      ],
    },
    {
      // A batch claimed by its keys: what a caller won is which rows, so it must read back only its own.
      code: `import { prisma } from "./db";

export async function claimBatch(ids: string[]) {
  await prisma.report.updateMany({ where: { id: { in: ids }, state: "QUEUED" }, data: { state: "BUILDING" } });
  return prisma.report.findMany({ where: { id: { in: ids }, state: "BUILDING" } });
}
`,
      errors: [
        unread(
          4,
          "nothing reads whether it changed a row (its result is not kept)",
          "Stamp this caller's token in the same write, and go on with the rows that carry it",
        ),
      ],
    },
  ],
});
