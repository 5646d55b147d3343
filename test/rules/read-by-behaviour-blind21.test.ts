// Real code of blind-21 (issue 35), read by what it does, in our words:
// - a write whose filter also finds rows in the state the claim takes them from (`status = 'pending' OR (status =
//   'claimed' AND claimed_at < …)`, moved straight to `done`) competes with the claim for unheld rows: it is a second
//   claim, no holder's write, so a holder's fencing is not asked of it;
// - a release pinned to a member of the document the acquire stored (`meta->>ticket`, where the insert wrote `meta: {
//   takenAt, ticket }` with a fresh UUID) deletes only this acquisition's row, as an owner column would;
// - a guard cleared in the callbacks of a promise chain the function starts after setting it (`await
//   cleanup().finally(() => { crawling = false })`) is released where that chain stands: the awaits before it are not
//   covered. A `.then` after a `.catch` that swallows the rejection runs either way, so it clears on a rejection too;
// - a write of a keyed lock row that empties every column it writes (`value: null`, Firestore's `FieldValue.delete()`)
//   gives the row up after the holder's check: a release, neither a take nor a renewal;
// - a guard cleared in a callback the function hands to a call after setting it (a timer, an event listener:
//   `setTimeout(() => { delete removing[id] }, 30_000)`, `worker.on("exit", () => { exporting = false })`) is released
//   where that call stands: the awaits before it are asked the usual question, and a guard set only after an await
//   that follows its test is held past the function by that callback, so its test-then-set is asked too.
import atomicClaim from "../../rules/atomic-claim.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import requireFencing from "../../rules/require-fencing.js";
import { ruleTester } from "../rule-tester.js";

/** An inbox on node-postgres: tasks claimed with a take-over of stale claims, replies taken and acknowledged at once. */
const INBOX = `import { Pool } from "pg";

const pool = new Pool();

export async function takeTask(worker: string) {
  const { rows } = await pool.query(
    \`UPDATE inbox SET status = 'claimed', claimed_by = $1, claimed_at = now()
      WHERE id IN (SELECT id FROM inbox
                    WHERE status = 'pending' OR (status = 'claimed' AND claimed_at < now() - interval '10 minutes')
                    ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING *\`,
    [worker],
  );
  return rows[0];
}

export async function takeReply(worker: string, topic: string) {
  const { rows } = await pool.query(
    \`UPDATE inbox SET status = 'done', claimed_by = $1, payload = 'read', claimed_at = now()
      WHERE topic = $2
        AND (status = 'pending' OR (status = 'claimed' AND claimed_at < now() - interval '10 minutes'))
      RETURNING *\`,
    [worker, topic],
  );
  return rows[0];
}

export async function finishTask(id: string, result: string) {
  await pool.query(\`UPDATE inbox SET status = 'done', payload = $2 WHERE id = $1\`, [id, result]);
}
`;

const inboxCompletion = {
  messageId: "takeoverWrite" as const,
  line: 29,
  data: {
    effect: "moves the claimed inbox row to done",
    field: "status",
    value: "claimed",
    claimLine: "6",
    tokenField: "claimed_by",
    alsoAtLine: "",
  },
  suggestions: [],
};

ruleTester.run("require-fencing (a second claim is no holder's write)", requireFencing, {
  valid: [
    // Without the holder's completion, only the reply taker writes done: it takes pending rows, holds none.
    { code: INBOX.slice(0, INBOX.indexOf("export async function finishTask")) },
  ],
  invalid: [
    // The holder's completion by id alone is still reported; the reply taker beside it is not.
    { code: INBOX, errors: [inboxCompletion] },
    // A holder's write that admits the claimed state beside the free one still writes the held row.
    {
      code: INBOX.replace("WHERE id = $1`", "WHERE id = $1 AND status IN ('claimed', 'pending')`"),
      errors: [inboxCompletion],
    },
  ],
});

/** Named locks as rows on Supabase: expired rows swept, the row inserted with a fresh ticket in a JSON column. */
const APP_LOCKS = (release: string) => `import { randomUUID } from "node:crypto";
import { createClient } from "@supabase/supabase-js";

const db = createClient(process.env.DB_URL!, process.env.DB_KEY!);

export async function lock(name: string, ttlMs: number): Promise<string | null> {
  const now = new Date();
  await db.from("app_locks").delete().eq("name", name).lt("expires_at", now.toISOString());
  const ticket = randomUUID();
  const { error } = await db.from("app_locks").insert({
    name,
    meta: { takenAt: now.toISOString(), ticket },
    expires_at: new Date(now.getTime() + ttlMs).toISOString(),
  });
  if (error) {
    if (error.code === "23505") return null;
    throw error;
  }
  return ticket;
}

export async function unlock(name: string, ticket: string) {
  await db.from("app_locks").delete()${release};
}
`;

const appLockRelease = (filter: string) => ({
  messageId: "rowRelease" as const,
  line: 23,
  data: {
    operation: "delete",
    lock: "lock row in app_locks",
    acquireLine: "10",
    filter,
    expires: "is swept when stale",
    expiryLine: "8",
  },
});

ruleTester.run("owner-checked-release (a ticket kept in the lock row's document)", ownerCheckedRelease, {
  valid: [{ code: APP_LOCKS(`.eq("name", name).eq("meta->>ticket", ticket)`) }],
  invalid: [
    {
      code: APP_LOCKS(`.eq("name", name)`),
      errors: [appLockRelease("name")],
    },
    // A member every caller of the lock stores alike (the lock's own name) tells no holder apart.
    {
      code: APP_LOCKS(`.eq("name", name).eq("meta->>ticket", ticket)`).replace(
        "meta: { takenAt: now.toISOString(), ticket },",
        "meta: { takenAt: now.toISOString(), ticket: name },",
      ),
      errors: [appLockRelease("name and ticket")],
    },
  ],
});

/** A crawler guarded by a module flag, cleared in the callbacks of the last step's promise chain. */
const CRAWLER = (steps: string, last: string) => `let crawling = false;

export async function crawl() {
  if (crawling) return;
  crawling = true;
${steps}  await prune()${last};
}

declare function fetchPages(): Promise<string[]>;
declare function store(pages: string[]): Promise<void>;
declare function prune(): Promise<void>;
`;
const STEPS = "  const pages = await fetchPages();\n  await store(pages);\n";

ruleTester.run("release-in-finally (a guard cleared by a promise chain)", releaseInFinally, {
  valid: [
    // Nothing awaited before the chain, and its `.finally` clears the guard however it settles.
    { code: CRAWLER("", ".finally(() => {\n    crawling = false;\n  })") },
    // A fulfilment and a rejection handler that both clear it.
    {
      code: CRAWLER(
        "",
        ".then(\n    () => {\n      crawling = false;\n    },\n    (err) => {\n      crawling = false;\n      throw err;\n    },\n  )",
      ),
    },
    // A `.catch` that swallows the rejection: the `.then` after it runs either way.
    { code: CRAWLER("", ".catch(() => undefined).then(() => {\n    crawling = false;\n  })") },
  ],
  invalid: [
    // The awaits before the chain leave the guard set when they reject; no move is offered, since it would run the
    // chain's own work after a failure too.
    {
      code: CRAWLER(STEPS, ".finally(() => {\n    crawling = false;\n  })"),
      errors: [
        {
          messageId: "missedOnRejection",
          line: 5,
          data: {
            lock: "the guard `crawling`",
            consequence: "`crawling` stays true and every later call is turned away until the process restarts.",
            exitLine: "6",
            releaseLine: "8",
            hint: "",
          },
          suggestions: [],
        },
      ],
    },
    // A `.catch` that hands the rejection on does not make the `.then` after it run on a failure.
    {
      code: CRAWLER("", ".catch((err) => {\n    throw err;\n  }).then(() => {\n    crawling = false;\n  })"),
      errors: [{ messageId: "clearedOnFulfilOnly", line: 5, data: { name: "crawling", releaseLine: "9" } }],
    },
  ],
});

/** A nightly lock kept in a settings row under a constant key: taken after a check, given up after the holder's. */
const NIGHTLY = `import { prisma } from "./db";

export async function releaseNightly(me: string) {
  const row = await prisma.setting.findUnique({ where: { key: "lock:nightly" } });
  if (row?.value !== me) return;
  await prisma.setting.update({ where: { key: "lock:nightly" }, data: { value: null } });
}

export async function takeNightly(me: string) {
  const row = await prisma.setting.findUnique({ where: { key: "lock:nightly" } });
  if (row?.value) return false;
  await prisma.setting.upsert({ where: { key: "lock:nightly" }, create: { key: "lock:nightly", value: me }, update: { value: me } });
  return true;
}
`;

ruleTester.run("atomic-claim (a keyed row emptied is given up, not taken)", atomicClaim, {
  valid: [],
  invalid: [
    // Only the take is a take; the release at line 6 is neither a take nor a renewal.
    {
      code: NIGHTLY,
      errors: [
        { messageId: "checkThenTake", line: 12, data: { value: "lock:nightly", model: "setting", checkLine: "10" } },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery (a keyed row emptied is given up, not taken)", requireStaleRecovery, {
  valid: [],
  invalid: [{ code: NIGHTLY, errors: [{ messageId: "missingExpiry", line: 12, data: { model: "setting" } }] }],
});

/** A site remover guarded per id, whose guard a timer clears once the work is done. */
const REMOVER = (body: string) => `const removing: Record<string, true | undefined> = {};

export async function removeSite(id: string) {
  if (removing[id]) return;
  removing[id] = true;
${body}}

declare function stopContainer(id: string): Promise<void>;
declare function dropConfig(id: string): Promise<void>;
`;
const TIMER = "  setTimeout(() => {\n    delete removing[id];\n  }, 30_000);\n";

ruleTester.run("release-in-finally (a guard cleared by a callback handed on)", releaseInFinally, {
  valid: [
    // The timer is scheduled however the work ends.
    { code: REMOVER(`  try {\n    await stopContainer(id);\n    await dropConfig(id);\n  } finally {\n${TIMER}  }\n`) },
    // Nothing is awaited before the timer is scheduled: the guard lapses on its own after 30 s.
    { code: REMOVER(`${TIMER}  await stopContainer(id);\n`) },
  ],
  invalid: [
    // The awaits before the timer leave the guard set for good when they reject.
    {
      code: REMOVER(`  await stopContainer(id);\n  await dropConfig(id);\n${TIMER}`),
      errors: [
        {
          messageId: "missedOnRejection",
          line: 5,
          data: {
            lock: "the guard `removing[id]`",
            consequence: "`removing[id]` stays true and every later call is turned away until the process restarts.",
            exitLine: "6",
            releaseLine: "8",
            hint: "",
          },
          suggestions: [],
        },
      ],
    },
  ],
});

/** An export run in a worker thread, its guard cleared when the worker exits. */
const EXPORTER = (start: string) => `import { Worker } from "node:worker_threads";

let exporting = false;

export async function startExport(file: string) {
  if (exporting) return;
${start}  const worker = new Worker("./export-worker.js", { workerData: { target } });
  worker.on("exit", () => {
    exporting = false;
  });
}

declare function resolveTarget(file: string): Promise<string>;
`;

/** A listener registered before the work that clears the guard on a signal, and the function's own release after. */
const IMPORTER = `let importing = false;

export async function importAll() {
  if (importing) return;
  importing = true;
  process.once("SIGTERM", () => {
    importing = false;
  });
  await fetchAndStore();
  importing = false;
}

declare function fetchAndStore(): Promise<void>;
`;

ruleTester.run("release-in-finally (a listener before an explicit release is a contingency)", releaseInFinally, {
  valid: [],
  invalid: [
    {
      code: IMPORTER,
      errors: [
        {
          messageId: "missedOnRejection",
          line: 5,
          data: {
            lock: "the guard `importing`",
            consequence: "`importing` stays true and every later call is turned away until the process restarts.",
            exitLine: "9",
            releaseLine: "10",
            hint: "",
          },
          suggestions: [
            {
              messageId: "moveToFinally",
              output: IMPORTER.replace(
                `  process.once("SIGTERM", () => {
    importing = false;
  });
  await fetchAndStore();
  importing = false;`,
                `  try {
    process.once("SIGTERM", () => {
      importing = false;
    });
    await fetchAndStore();
  } finally {
    importing = false;
  }`,
              ),
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("atomic-claim (a guard held past the function by a callback)", atomicClaim, {
  valid: [
    // Set right after its test, before anything is awaited.
    { code: EXPORTER("  exporting = true;\n  const target = await resolveTarget(file);\n") },
  ],
  invalid: [
    // Set only after the await that follows its test; the worker's exit clears it later.
    {
      code: EXPORTER("  const target = await resolveTarget(file);\n  exporting = true;\n"),
      errors: [{ messageId: "flagSetAfterAwait", line: 8, data: { name: "exporting", checkLine: "6", waitLine: "7" } }],
    },
  ],
});

ruleTester.run("release-in-finally (a guard held past the function by a callback)", releaseInFinally, {
  // The worker's exit is the release; the function itself has no way out between the set and the listener.
  valid: [{ code: EXPORTER("  const target = await resolveTarget(file);\n  exporting = true;\n") }],
  invalid: [],
});
