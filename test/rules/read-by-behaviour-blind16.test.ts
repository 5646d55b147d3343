// Real code of blind-16 (issue 35), read by what it does, in our words:
// - a row found by a read in one function and written in another: the rows a function of the module hands back from
//   its read (`return data ?? []`), iterated by a caller and passed on through more calls (`handle(row)` calling
//   `run(row)`), are the rows of that read wherever they arrive; every call on the way must pass one;
// - a SET NX whose answer is read from the call itself, not awaited: a promise is always truthy, so the test that
//   should turn a second caller away never does;
// - a write of many rows that picks them by part of the lock's key (`deleteMany({ grant, applicant })` of locks
//   keyed by grant, funding round and applicant): a clean-up of every lock that shares that part, not a holder's release;
// - a test that calls a function of the module settling some rows at once with a constant (`if (!build.started_at)
//   return true`) and judging the rest by age (`return started < cutoff`): the call is that age test;
// - a statement written into a const of the function and run by one call: the finding is at its text, where its
//   predicates are (as for a tagged statement held in a const), and its result is still read at the call;
// - a document found by a read and, when none was found, made anew in the same variable (`lock = new Lock(q); await
//   lock.save()`): the save inserts what the write that reaches it made.
import atomicClaim from "../../rules/atomic-claim.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import { ruleTester } from "../rule-tester.js";
import { normalizeModel } from "../../src/core/model/names.js";

/** An export queue drained by a loop: rows read as QUEUED in one function, marked RUNNING two calls further on. */
const DRAIN = (reader: string, caller: string) => `import { supabase } from "./supabase";

async function queuedExports(limit: number) {
${reader}
}

async function setState(exportId: string, state: string) {
  const patch = { state, touched_at: new Date().toISOString() };
  await supabase.from("exports").update(patch).eq("id", exportId);
}

async function runExport(row: { id: string; format: string }) {
  await setState(row.id, "RUNNING");
  await renderFile(row.format);
  await setState(row.id, "DONE");
}

async function handle(row: { id: string; format: string }) {
  try {
    await runExport(row);
  } catch {
    await setState(row.id, "FAILED");
  }
}

${caller}
`;

const READ_QUEUED = `  const { data, error } = await supabase.from("exports").select("*").eq("state", "QUEUED").limit(limit);
  if (error) throw error;
  return data ?? [];`;

const LOOP = `export async function drain() {
  const rows = await queuedExports(20);
  for (const row of rows) await handle(row);
}`;

ruleTester.run("atomic-claim (rows read in one function, claimed in another)", atomicClaim, {
  valid: [
    {
      name: "the same write reached from a request's body is no claim of a read row",
      code: DRAIN(
        READ_QUEUED,
        `${LOOP}\nexport async function retry(req: { body: { id: string; format: string } }) {\n  await handle(req.body);\n}`,
      ),
    },
    {
      name: "a function that hands back something else than its read's rows says nothing of the rows",
      code: DRAIN(
        `  const { data } = await supabase.from("exports").select("*").eq("state", "QUEUED").limit(limit);\n  return (data ?? []).map(normalise);`,
        LOOP,
      ),
    },
  ],
  invalid: [
    {
      name: "a read handed back, iterated and passed two calls on",
      code: DRAIN(READ_QUEUED, LOOP),
      errors: [
        {
          messageId: "checkThenAct",
          line: 15,
          data: {
            model: "exports",
            field: "state",
            value: "RUNNING",
            checkedWhere: "with a separate read",
            checkLine: "4",
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery (rows read in one function, claimed in another)", requireStaleRecovery, {
  valid: [
    {
      name: "a sweep of stuck RUNNING rows answers the claim",
      code: DRAIN(
        READ_QUEUED,
        `${LOOP}\nexport async function sweep() {\n  await supabase.from("exports").update({ state: "QUEUED" }).eq("state", "RUNNING").lt("touched_at", new Date(Date.now() - 600_000).toISOString());\n}`,
      ),
    },
  ],
  invalid: [
    {
      name: "nothing moves a RUNNING row back",
      code: DRAIN(READ_QUEUED, LOOP),
      errors: [
        { messageId: "missingRecovery", line: 15, data: { model: "exports", field: "state", value: "RUNNING" } },
      ],
    },
  ],
});

/** A bid placed under a short Redis lock; `acquire` is how the lock is taken. */
const BID = (acquire: string) => `import { randomUUID } from "node:crypto";
import { client } from "./redis";

export async function placeBid(itemId: string, amount: number) {
  const token = randomUUID();
  const key = \`bid-lock:\${itemId}\`;
  ${acquire}
  if (!acquired) throw new Error("busy");
  try {
    await saveBid(itemId, amount);
  } finally {
    await client.eval(RELEASE_IF_OWNER, { keys: [key], arguments: [token] });
  }
}
`;

ruleTester.run("atomic-claim (a SET NX that is not awaited)", atomicClaim, {
  valid: [
    {
      name: "awaited, the answer is OK or null",
      code: BID(`const acquired = await client.set(key, token, { NX: true, PX: 2000 });`),
    },
    {
      name: "a promise kept and awaited before the test",
      code: BID(`const pending = client.set(key, token, { NX: true, PX: 2000 });\n  const acquired = await pending;`),
    },
  ],
  invalid: [
    {
      name: "the promise itself is tested",
      code: BID(`const acquired = client.set(key, token, { NX: true, PX: 2000 });`),
      errors: [
        { messageId: "unawaitedLock", line: 7, data: { command: "SET NX", key: '"bid-lock:*"', testLine: "8" } },
      ],
    },
  ],
});

/** Edit locks on an application, one per (grant, funding round, applicant), taken over once expired. */
const EDIT_LOCKS = (cleanup: string) => `import { db } from "./mongo";

const locks = db.collection("application_locks");

export async function lockApplication(grant: string, round: string, applicant: string, userId: string) {
  const now = new Date();
  return locks.findOneAndUpdate(
    { grant, round, applicant, $or: [{ expiresAt: { $lte: now } }, { ownerId: userId }] },
    { $set: { grant, round, applicant, ownerId: userId, expiresAt: new Date(now.getTime() + 15 * 60_000) } },
    { upsert: true, returnDocument: "after" },
  );
}

export async function unlockApplication(grant: string, round: string, applicant: string, userId: string) {
  await locks.deleteOne({ grant, round, applicant, ownerId: userId });
}

${cleanup}
`;

/** The finding on a release of one lock by its key alone, made at line 19 of EDIT_LOCKS. */
const FREED_BY_KEY = [
  {
    messageId: "rowRelease" as const,
    line: 19,
    data: {
      operation: "delete",
      lock: "lease on application_locks.expiresAt",
      acquireLine: "7",
      filter: "grant and round and applicant",
      expires: "is taken over once expiresAt has passed",
      expiryLine: "7",
    },
  },
];

ruleTester.run("owner-checked-release (a clean-up of many locks)", ownerCheckedRelease, {
  valid: [
    {
      name: "every round's lock of a withdrawn application, removed together",
      code: EDIT_LOCKS(
        `export async function withdrawApplication(grant: string, applicant: string) {\n  await locks.deleteMany({ grant, applicant });\n}`,
      ),
    },
  ],
  invalid: [
    {
      name: "one lock freed by its key without the owner",
      code: EDIT_LOCKS(
        `export async function forgetLock(grant: string, round: string, applicant: string) {\n  await locks.deleteOne({ grant, round, applicant });\n}`,
      ),
      errors: FREED_BY_KEY,
    },
    {
      name: "many rows by the whole key are still one lock freed without the owner",
      code: EDIT_LOCKS(
        `export async function forgetLocks(grant: string, round: string, applicant: string) {\n  await locks.deleteMany({ grant, round, applicant });\n}`,
      ),
      errors: FREED_BY_KEY,
    },
  ],
});

/** An import guarded by a lock document, looked up and created in one variable. */
const IMPORT_LOCK = `import mongoose from "mongoose";

const ImportLock = mongoose.model("ImportLock", new mongoose.Schema({ source: String, startedAt: Date }));

export async function runImport(source: string) {
  let lock = await ImportLock.findOne({ source });
  if (lock) return "busy";
  lock = new ImportLock({ source, startedAt: new Date() });
  await lock.save();
  await importFeed(source);
  await ImportLock.deleteOne({ source });
  return "done";
}
`;
/** \`settings.locksUniqueKeys\`, as locks-audit fills it from the project's schemas. */
const importKeys = (list: string[][]) => ({ locksUniqueKeys: { [normalizeModel("ImportLock")]: list } });

ruleTester.run("atomic-claim (a document made anew in the variable a read filled)", atomicClaim, {
  valid: [
    {
      name: "a unique key on the source makes the create exclusive",
      code: IMPORT_LOCK,
      settings: importKeys([["source"]]),
    },
  ],
  invalid: [
    {
      name: "no unique key: two imports that read together both create one",
      code: IMPORT_LOCK,
      settings: importKeys([["_id"]]),
      errors: [
        {
          messageId: "checkThenInsert",
          line: 9,
          data: { model: "ImportLock", checkLine: "6", fields: "(source)", keys: "(_id)" },
        },
      ],
    },
  ],
});

/** A build restarted once its age passes a cutoff, judged by a helper of the module. */
const RESTART = (judged: string) => `import { db } from "./db";

function mayRestart(build: { ${judged}: string | null }): boolean {
  if (!build.${judged}) return true;
  const started = new Date(build.${judged});
  const cutoff = new Date(Date.now() - 20 * 60 * 1000);
  return started < cutoff;
}

export function startBuild(id: string) {
  const build = db.prepare("SELECT * FROM builds WHERE id = ?").get(id);
  if (build.status === "building" && !mayRestart(build)) return "already building";
  db.prepare("UPDATE builds SET status = 'building', started_at = CURRENT_TIMESTAMP, heartbeat_at = CURRENT_TIMESTAMP WHERE id = ?").run(id);
  return "started";
}
`;

ruleTester.run("progress-based-staleness (an age judged by a helper with early answers)", progressBasedStaleness, {
  valid: [{ name: "judged by the heartbeat the build moves", code: RESTART("heartbeat_at") }],
  invalid: [
    {
      name: "judged by the start time",
      code: RESTART("started_at"),
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 12,
          data: {
            model: "builds",
            field: "status",
            value: "building",
            timeField: "started_at",
            stamped: "set once when work starts",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});

/** An outbox batch claimed by a statement kept in a const; `run` is how it is sent. */
const OUTBOX = (run: string) => `import { pool } from "./pool";

export async function claimBatch(limit: number) {
  const claimSql = \`
    UPDATE outbox SET status = 'PROCESSING'
    WHERE id IN (SELECT id FROM outbox WHERE status = 'PENDING' ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
    RETURNING *\`;
${run}
}
`;

ruleTester.run("require-stale-recovery (a statement kept in a const)", requireStaleRecovery, {
  valid: [],
  invalid: [
    {
      name: "run by one call: reported at its text",
      code: OUTBOX("  const { rows } = await pool.query(claimSql, [limit]);\n  return rows;"),
      errors: [
        { messageId: "missingRecovery", line: 4, data: { model: "outbox", field: "status", value: "PROCESSING" } },
      ],
    },
    {
      name: "run by two calls: each is its own write, reported where it runs",
      code: OUTBOX(
        "  const first = await pool.query(claimSql, [limit]);\n  if (first.rows.length > 0) return first.rows;\n  const again = await pool.query(claimSql, [limit]);\n  return again.rows;",
      ),
      errors: [
        { messageId: "missingRecovery", line: 8, data: { model: "outbox", field: "status", value: "PROCESSING" } },
        { messageId: "missingRecovery", line: 10, data: { model: "outbox", field: "status", value: "PROCESSING" } },
      ],
    },
  ],
});
