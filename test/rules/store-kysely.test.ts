// Kysely through the five database rules: `updateTable(…).set(…).where(…)`, `deleteFrom`, `insertInto … onConflict`,
// `selectFrom(…).where(…)` reads, all recognised at `execute()`/`executeTakeFirst()`/`executeTakeFirstOrThrow()`;
// expression callbacks (`eb.or`, `eb.and`, `not`, destructured helpers), `sql\`now()\`` as the clock, transactions and
// builders split across const bindings.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester, recoveredElsewhere } from "../rule-tester.js";

const PROGRESS = "updatedAt, modifiedAt, heartbeatAt";
const lock = (model: string, field: string, value: string) => ({ model, field, value });
const claimed = (model: string, field: string, value: string, claimLine: number) => ({
  model,
  field,
  value,
  claimLine: String(claimLine),
});

/** A claim of jobs.status = 'running' at line 3 (column 21). Code after it starts at line 6. */
const CLAIM = `import { sql, type Kysely } from "kysely";
export async function claimJob(db: Kysely<DB>, id: string) {
  const res = await db.updateTable('jobs').set({ status: 'running', updated_at: sql\`now()\` }).where('id', '=', id).where('status', '!=', 'running').executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "a claim with a conditional recovery judged by a progress timestamp (sql threshold)",
      code:
        CLAIM +
        `export async function sweep(db: Kysely<DB>) {
  await db.updateTable('jobs').set({ status: 'queued' }).where('status', '=', 'running').where('updated_at', '<', sql\`now() - interval '10 minutes'\`).execute();
}`,
    },
    {
      name: "a lease take-over in the claim: eb.or with an expired heartbeat",
      code: `export async function claim(db: Kysely<DB>, id: string, staleBefore: Date) {
  return db.updateTable('jobs')
    .set({ status: 'running', heartbeat_at: new Date() })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('status', '!=', 'running'), eb('heartbeat_at', '<', staleBefore)]))
    .executeTakeFirst();
}`,
    },
    {
      name: "a lease take-over with destructured helpers and a nested and",
      code: `export async function claim(db, id, cutoff) {
  await db.updateTable('jobs').set('status', 'running').where('id', '=', id)
    .where(({ eb, or, and }) => or([eb('status', 'in', ['queued', 'failed']), and([eb('status', '=', 'running'), eb('updated_at', '<', cutoff)])]))
    .execute();
}`,
      languageOptions: javascript,
    },
    {
      name: "a plain transition PENDING → PAID by id is no lock",
      code: `export async function markPaid(db: Kysely<DB>, id: string) {
  await db.updateTable('orders').set({ status: 'paid', paid_at: sql\`now()\` }).where('id', '=', id).where('status', '=', 'pending').execute();
}`,
    },
    {
      name: "a bulk move into a waiting state is no claim",
      code: `export async function retryFailed(db: Kysely<DB>) {
  await db.updateTable('jobs').set({ status: 'pending' }).where('status', '=', 'failed').where('attempts', '<', 5).execute();
}`,
    },
    {
      name: "a lock row with an expiry that a sweeper deletes",
      code: `export async function acquire(db: Kysely<DB>, name: string, owner: string) {
  const r = await db.insertInto('job_locks').values({ name, owner, expires_at: sql\`now() + interval '1 minute'\` })
    .onConflict((oc) => oc.column('name').doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows) === 1;
}
export async function sweepLocks(db: Kysely<DB>) { await db.deleteFrom('job_locks').where('expires_at', '<', sql\`now()\`).execute(); }`,
    },
    {
      name: "a lock row taken over when expired: doUpdateSet(…).where(…)",
      code: `export async function acquire(db: Kysely<DB>, name: string, owner: string, until: Date) {
  await db.insertInto('leases').values({ name, owner, expires_at: until })
    .onConflict((oc) => oc.column('name').doUpdateSet({ owner, expires_at: until }).where('leases.expires_at', '<', sql\`now()\`))
    .execute();
}`,
    },
    {
      name: "execute() on things that are not Kysely queries",
      code: `export async function misc(db: Kysely<DB>, stmt: Statement, pipeline: Pipeline) {
  await db.transaction().execute(async (trx) => trx.selectFrom('jobs').selectAll().execute());
  await stmt.execute({ status: 'running' });
  await pipeline.set('status', 'running').execute();
}`,
    },
    {
      name: "a builder split across const bindings, recovered by a sweeper",
      code:
        CLAIM +
        `export async function sweep(db: Kysely<DB>, cutoff: Date) {
  const stale = db.updateTable('jobs').where('status', '=', 'running').where('updated_at', '<', cutoff);
  await stale.set({ status: 'queued' }).execute();
}`,
    },
    {
      name: "a class service: claim and sweeper through this.db",
      code: `export class JobService {
  constructor(private readonly db: Kysely<DB>) {}
  claim(id: string) {
    return this.db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '<>', 'running').executeTakeFirstOrThrow();
  }
  async sweep(cutoff: Date) {
    await this.db.updateTable('jobs').set({ status: 'queued' }).where((eb) => eb.and([eb('status', '=', 'running'), eb('updated_at', '<', cutoff)])).execute();
  }
}`,
    },
  ],
  invalid: [
    {
      name: "the claim with no recovery",
      code: CLAIM,
      errors: [
        { messageId: "missingRecovery", line: 3, column: 21, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "a claim on trx inside db.transaction().execute, excluding running with 'not in'",
      code: `export async function start(db: Kysely<DB>, id: string) {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', 'not in', ['running', 'done']).execute();
  });
}`,
      errors: [
        { messageId: "missingRecovery", line: 3, column: 11, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "set('col', value) and a not() callback, plain JS with .then",
      code: `export function start(db, id) {
  return db.updateTable('jobs').set('status', 'processing').where('id', '=', id).where(({ eb, not }) => not(eb('status', '=', 'processing')))
    .executeTakeFirst().then((r) => r.numUpdatedRows > 0);
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          column: 10,
          data: lock("jobs", "status", "processing"),
          suggestions: [],
        },
      ],
    },
    {
      name: "a builder split across const bindings, claimed with no recovery",
      code: `export async function start(db: Kysely<DB>, id: string) {
  const claim = db.updateTable('jobs').set({ status: 'running' });
  await claim.where('id', '=', id).where('status', '<>', 'running').execute();
}`,
      errors: [
        { messageId: "missingRecovery", line: 3, column: 9, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "a lock row inserted with onConflict doNothing and no expiry",
      code: `export async function withLock(db: Kysely<DB>, name: string, work: () => Promise<void>) {
  const r = await db.insertInto('locks').values({ name, owner: process.pid }).onConflict((oc) => oc.column('name').doNothing()).executeTakeFirst();
  if (Number(r.numInsertedOrUpdatedRows) === 0) return;
  try { await work(); } finally { await db.deleteFrom('locks').where('name', '=', name).execute(); }
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 19, data: { model: "locks" }, suggestions: [] }],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    {
      name: "a recovery judged by a heartbeat column",
      code:
        CLAIM +
        `export async function sweep(db: Kysely<DB>, cutoff: Date) {
  await db.updateTable('jobs').set({ status: 'queued' }).where('status', '=', 'running').where('heartbeat_at', '<', cutoff).execute();
}`,
    },
  ],
  invalid: [
    {
      name: "a recovery judged by started_at",
      code:
        CLAIM +
        `export async function sweep(db: Kysely<DB>, cutoff: Date) {
  await db.updateTable('jobs').set({ status: 'failed' }).where('status', '=', 'running').where('jobs.started_at', '<', cutoff).execute();
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 7,
          column: 96,
          data: {
            ...claimed("jobs", "status", "running", 3),
            stamped: "set once when work starts",
            timeField: "started_at",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
    {
      name: "a stale scan with selectFrom judged by created_at in an eb.and",
      code: `export async function findStuck(db: Kysely<DB>, cutoff: Date) {
  return db.selectFrom('jobs as j').select('j.id').where((eb) => eb.and([eb('j.status', '=', 'running'), eb('j.created_at', '<', cutoff)])).execute();
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 2,
          column: 106,
          data: { model: "jobs", field: "status", value: "running", timeField: "created_at", progressFields: PROGRESS },
          suggestions: [],
        },
      ],
    },
    {
      name: "a lease take-over judged by claimed_at",
      code: `export async function claim(db: Kysely<DB>, id: string, cutoff: Date) {
  await db.updateTable('jobs').set({ status: 'running', claimed_at: sql\`now()\` }).where('id', '=', id)
    .where((eb) => eb('status', '!=', 'running').or('claimed_at', '<', cutoff)).execute();
}`,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 3,
          column: 53,
          data: {
            ...claimed("jobs", "status", "running", 2),
            stamped: "set once when work starts",
            timeField: "claimed_at",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "a recovery with the status and the age in one write",
      code:
        CLAIM +
        `export async function sweep(db: Kysely<DB>, cutoff: Date) {
  await db.updateTable('jobs').set({ status: 'queued' }).where((eb) => eb.and({ status: 'running' }).and('updated_at', '<', cutoff)).execute();
}`,
    },
    {
      name: "deleting old finished rows is not a recovery",
      code:
        CLAIM +
        `export async function prune(db: Kysely<DB>, cutoff: Date) {
  await db.deleteFrom('jobs').where('status', '=', 'done').where('updated_at', '<', cutoff).execute();
}`,
    },
  ],
  invalid: [
    {
      name: "a boot-time reset of every running row, with no age",
      code:
        CLAIM +
        `export async function onBoot(db: Kysely<DB>) {
  await db.updateTable('jobs').set({ status: 'failed' }).where('status', '=', 'running').execute();
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 7,
          column: 9,
          data: {
            ...claimed("jobs", "status", "running", 3),
            target: "failed",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [],
        },
      ],
    },
    {
      name: "a recovery by age that does not require the claimed status",
      code:
        CLAIM +
        `export async function sweep(db: Kysely<DB>, cutoff: Date) {
  await db.updateTable('jobs').set({ status: 'failed' }).where('updated_at', '<', cutoff).execute();
}`,
      errors: [
        {
          messageId: "missingStatus",
          line: 7,
          column: 9,
          data: {
            ...claimed("jobs", "status", "running", 3),
            target: "failed",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [
            {
              messageId: "addStatus",
              data: {
                ...claimed("jobs", "status", "running", 3),
                target: "failed",
                rowFilter: "its filter",
                checkedWhere: "",
                checkLine: "",
              },
              output:
                CLAIM +
                `export async function sweep(db: Kysely<DB>, cutoff: Date) {
  await db.updateTable('jobs').set({ status: 'failed' }).where('updated_at', '<', cutoff).where('status', '=', 'running').execute();
}`,
            },
          ],
        },
      ],
    },
    {
      name: "staleness judged after a read, then a write by id",
      code:
        CLAIM +
        `export async function reap(db: Kysely<DB>, id: string) {
  const job = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (job.status === 'running' && Date.now() - job.updated_at.getTime() > 600_000) {
    await db.updateTable('jobs').set({ status: 'failed' }).where('id', '=', id).execute();
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 9,
          column: 11,
          data: {
            ...claimed("jobs", "status", "running", 3),
            target: "failed",
            rowFilter: "id",
            checkedWhere: "in JavaScript",
            checkLine: "8",
          },
          suggestions: [],
        },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    {
      name: "the status is excluded in the write itself",
      code: CLAIM,
    },
    {
      name: "a check of another model's row",
      code: `export async function start(db: Kysely<DB>, projectId: string, id: string) {
  const project = await db.selectFrom('projects').selectAll().where('id', '=', projectId).executeTakeFirstOrThrow();
  if (project.status !== 'active') return;
  await db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).execute();
}`,
    },
  ],
  invalid: [
    {
      name: "read, check in JavaScript, unconditional write",
      code: `export async function start(db: Kysely<DB>, id: string) {
  const job = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (job.status === 'running') return;
  await db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).execute();
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: { ...lock("jobs", "status", "running"), checkedWhere: "in JavaScript", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("jobs", "status", "running"), checkedWhere: "in JavaScript", checkLine: "3" },
              output: `export async function start(db: Kysely<DB>, id: string) {
  const job = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  if (job.status === 'running') return;
  await db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '!=', 'running').execute();
}`,
            },
          ],
        },
      ],
    },
    {
      name: "a read of queued rows, then a write by id, plain JS in a transaction",
      code: `export async function next(db) {
  await db.transaction().execute(async (trx) => {
    const job = await trx.selectFrom('jobs').select('id').where('status', '=', 'queued').executeTakeFirst();
    if (job) await trx.updateTable('jobs').set({ status: 'running' }).where('id', '=', job.id).execute();
  });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 20,
          data: { ...lock("jobs", "status", "running"), checkedWhere: "with a separate read", checkLine: "3" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("jobs", "status", "running"), checkedWhere: "with a separate read", checkLine: "3" },
              output: `export async function next(db) {
  await db.transaction().execute(async (trx) => {
    const job = await trx.selectFrom('jobs').select('id').where('status', '=', 'queued').executeTakeFirst();
    if (job) await trx.updateTable('jobs').set({ status: 'running' }).where('id', '=', job.id).where('status', '!=', 'running').execute();
  });
}`,
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    {
      name: "completion fenced by an owner column",
      code: `export async function run(db: Kysely<DB>, id: string, workerId: string) {
  await db.updateTable('jobs').set({ status: 'running', locked_by: workerId }).where('id', '=', id).where('status', '!=', 'running').execute();
  await db.updateTable('jobs').set({ status: 'done' }).where('id', '=', id).where('locked_by', '=', workerId).execute();
}`,
    },
    {
      name: "completion fenced by the claimed status in an eb.and object",
      code: `export async function run(db: Kysely<DB>, id: string) {
  await db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '!=', 'running').execute();
  await db.updateTable('jobs').set({ status: 'done' }).where((eb) => eb.and({ id, status: 'running' })).execute();
}`,
    },
  ],
  invalid: [
    recoveredElsewhere({
      name: "completion by id only, after the claim in the same function",
      code: `export async function run(db: Kysely<DB>, id: string) {
  await db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '!=', 'running').execute();
  await render(id);
  await db.updateTable('jobs').set({ status: 'done', updated_at: sql\`now()\` }).where('id', '=', id).execute();
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 4,
          column: 9,
          data: { ...claimed("jobs", "status", "running", 2), target: "done" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("jobs", "status", "running", 2), target: "done" },
              output: `export async function run(db: Kysely<DB>, id: string) {
  await db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '!=', 'running').execute();
  await render(id);
  await db.updateTable('jobs').set({ status: 'done', updated_at: sql\`now()\` }).where('id', '=', id).where('status', '=', 'running').execute();
}`,
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      name: "a failure write in a class service's catch",
      code: `export class Worker {
  constructor(private readonly db: Kysely<DB>) {}
  async run(id: string) {
    await this.db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '<>', 'running').execute();
    try { await work(id); } catch {
      await this.db.updateTable('jobs').set('status', 'failed').where('id', '=', id).execute();
    }
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 6,
          column: 13,
          data: { ...claimed("jobs", "status", "running", 4), target: "failed" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("jobs", "status", "running", 4), target: "failed" },
              output: `export class Worker {
  constructor(private readonly db: Kysely<DB>) {}
  async run(id: string) {
    await this.db.updateTable('jobs').set({ status: 'running' }).where('id', '=', id).where('status', '<>', 'running').execute();
    try { await work(id); } catch {
      await this.db.updateTable('jobs').set('status', 'failed').where('id', '=', id).where('status', '=', 'running').execute();
    }
  }
}`,
            },
          ],
        },
      ],
    }),
  ],
});
