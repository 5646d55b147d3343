// Knex through the five database rules: chains rooted at a table call (`knex('jobs')`, `trx('jobs')`,
// `this.knex('jobs')`, `knex.table(…)`, `knex.select(…).from(…)`), where-links with `orWhere` precedence and grouped
// callbacks, `update`/`del`/`insert … onConflict`, reads at `first()`/`select()`, `knex.fn.now()` as the clock.
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

/** A claim of exports.status = 'running' at line 2 (column 21), plain JavaScript. Code after it starts at line 5. */
const CLAIM = `export async function claimExport(id) {
  const n = await knex('exports').where({ id }).whereNot('status', 'running').update({ status: 'running', updated_at: knex.fn.now() });
  return n === 1;
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      // a number on a field that is no flag stays a number: attempts = 1 after a check of attempts is no claim
      name: "a counter set to 1 is not a flag",
      code: `export async function reset(id) {
  const [row] = await knex("jobs").where({ id }).forUpdate();
  if (row.attempts) return;
  await knex("jobs").where({ id }).update({ attempts: 1 });
}`,
      languageOptions: javascript,
    },
    {
      name: "a claim with a conditional recovery judged by a progress timestamp (knex.raw threshold)",
      code:
        CLAIM +
        `export async function sweep() {
  await knex('exports').where('status', 'running').andWhere('updated_at', '<', knex.raw("now() - interval '15 minutes'")).update({ status: 'failed' });
}`,
      languageOptions: javascript,
    },
    {
      name: "a lease take-over in the claim itself: a grouped where callback with orWhere",
      code: `export async function claim(id: string, staleBefore: Date) {
  return knex.table('jobs')
    .where({ id })
    .where(function () { this.whereNotIn('status', ['running', 'done']).orWhere('heartbeat_at', '<', staleBefore); })
    .update({ status: 'running', heartbeat_at: knex.fn.now() });
}`,
    },
    {
      name: "a lease take-over written with an arrow callback on trx inside a transaction",
      code: `export async function claim(id: string, cutoff: Date) {
  await knex.transaction(async (trx) => {
    await trx('jobs').where('id', id).where((qb) => qb.where('status', '!=', 'running').orWhere('updated_at', '<=', cutoff)).update({ status: 'running' });
  });
}`,
    },
    {
      name: "a plain transition PENDING → PAID by id is no lock",
      code: `export async function markPaid(id: string) {
  await knex('orders').where({ id, status: 'pending' }).update({ status: 'paid', paid_at: knex.fn.now() });
}`,
    },
    {
      name: "a bulk move into a waiting state is no claim",
      code: `export async function retryFailed() {
  await db('jobs').where('status', 'failed').andWhere('attempts', '<', 5).update({ status: 'pending' });
}`,
      languageOptions: javascript,
    },
    {
      name: "a stale recovery by delete (pinned to the claimed value, judged by age) answers the claim",
      code:
        CLAIM +
        `export function purge(cutoff) {
  return knex('exports').where({ status: 'running' }).where('updated_at', '<', cutoff).del().then((n) => n);
}`,
      languageOptions: javascript,
    },
    {
      name: "a lock row with an expiry that a sweeper deletes",
      code: `export async function acquire(name: string, owner: string) {
  const rows = await knex('job_locks').insert({ name, owner, expires_at: new Date(Date.now() + 60_000) }).onConflict('name').ignore().returning('name');
  return rows.length === 1;
}
export async function sweepLocks() { await knex('job_locks').where('expires_at', '<', knex.fn.now()).del(); }`,
    },
    {
      name: "a lock row taken over when expired: onConflict().merge().where(…)",
      code: `export async function acquire(name: string, owner: string, until: Date) {
  await knex('leases').insert({ name, owner, expires_at: until }).onConflict('name').merge({ owner, expires_at: until }).where('leases.expires_at', '<', knex.fn.now());
}`,
    },
    {
      name: "not knex: a hash digest, a Firebase ref, a Map (no table call at the root)",
      code: `import { createHash } from "node:crypto";
export async function lookalikes(id: string, cache: Map<string, string>) {
  createHash('sha256').update('running', 'utf8');
  await firebase.database().ref('jobs/' + id).update({ status: 'running' });
  cache.delete(id);
}`,
    },
    {
      name: "a class service: claim through this.knex, sweeper in the same class",
      code: `export class ExportService {
  constructor(private readonly knex: Knex) {}
  async claim(id: string) {
    return this.knex('exports').where('id', id).whereNot('status', 'running').update({ status: 'running', updated_at: this.knex.fn.now() });
  }
  async sweep(cutoff: Date) {
    await this.knex('exports').where({ status: 'running' }).andWhere('updated_at', '<', cutoff).update({ status: 'queued' });
  }
}`,
    },
  ],
  invalid: [
    {
      // a migration lock row: read under FOR UPDATE (a builder awaited as is), checked in JavaScript, then the flag
      // written as 1 through whichever of the transaction and the connection is there; nothing clears it if the
      // migration dies
      name: "a numeric flag taken under a locking read, through (trx || knex)(table) (plain JS)",
      code: `exports.lock = function lock(knex, trx) {
  return knex.transaction(async (transacting) => {
    const rows = await transacting("migrations_lock").where({ lock_key: "km01" }).forUpdate();
    if (!rows.length || rows[0].locked) throw new Error("migrations are locked");
    return (trx || knex)("migrations_lock").where({ lock_key: "km01" }).update({ locked: 1 });
  });
};
exports.unlock = function unlock(knex) {
  return knex("migrations_lock").where({ lock_key: "km01" }).update({ locked: 0 });
};`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 5,
          column: 12,
          data: lock("migrations_lock", "locked", "true"),
          suggestions: [],
        },
      ],
    },
    {
      name: "the claim from the fixture, with no recovery (plain JS)",
      code: CLAIM,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          column: 19,
          data: lock("exports", "status", "running"),
          suggestions: [],
        },
      ],
    },
    {
      name: "a claim inside knex.transaction on trx, excluding running with whereNotIn",
      code: `export async function start(id: string) {
  await knex.transaction(async (trx) => {
    await trx('jobs').where({ id }).whereNotIn('status', ['running', 'done']).update({ status: 'running' });
  });
}`,
      errors: [
        { messageId: "missingRecovery", line: 3, column: 11, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "update('col', value) with '<>' in a .then chain",
      code: `export function start(id) {
  return knex('jobs').where('id', id).andWhere('status', '<>', 'processing').update('status', 'processing').then((n) => n === 1);
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
      name: "a claim through a FOR UPDATE SKIP LOCKED subquery of the same table",
      code: `export async function next() {
  return knex('jobs')
    .whereIn('id', function () { this.select('id').from('jobs').where('status', 'queued').orderBy('id').limit(1).forUpdate().skipLocked(); })
    .update({ status: 'running' })
    .returning('*');
}`,
      errors: [
        { messageId: "missingRecovery", line: 2, column: 10, data: lock("jobs", "status", "running"), suggestions: [] },
      ],
    },
    {
      name: "a lock row inserted under a unique key with no expiry",
      code: `export async function withLock(name: string, work: () => Promise<void>) {
  const rows = await knex('locks').insert({ name, owner: process.pid }).onConflict('name').ignore().returning('name');
  if (rows.length === 0) return;
  try { await work(); } finally { await knex('locks').where({ name }).del(); }
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 22, data: { model: "locks" }, suggestions: [] }],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [
    {
      name: "a recovery judged by a heartbeat column",
      code:
        CLAIM +
        `export async function sweep(cutoff) {
  await knex('exports').where('status', 'running').where('heartbeat_at', '<', cutoff).update({ status: 'queued' });
}`,
      languageOptions: javascript,
    },
    {
      name: "a read of recent rows (updated_at > t) is a report, not a stale scan",
      code: `export async function recent(t: Date) {
  return knex('exports').where('status', 'running').where('updated_at', '>', t).select('id');
}`,
    },
  ],
  invalid: [
    {
      name: "a recovery judged by started_at",
      code:
        CLAIM +
        `export async function sweep(cutoff) {
  await knex('exports').where('status', 'running').where('exports.started_at', '<', cutoff).update({ status: 'failed' });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 6,
          column: 58,
          data: {
            ...claimed("exports", "status", "running", 2),
            stamped: "set once when work starts",
            timeField: "started_at",
            progressFields: PROGRESS,
          },
          suggestions: [],
        },
      ],
    },
    {
      name: "a stale scan with knex.select().from() judged by created_at",
      code: `export async function findStuck(cutoff: Date) {
  return knex.select('id').from('jobs').where({ status: 'running' }).where('created_at', '<', cutoff);
}`,
      errors: [
        {
          messageId: "startTimeScan",
          line: 2,
          column: 76,
          data: { model: "jobs", field: "status", value: "running", timeField: "created_at", progressFields: PROGRESS },
          suggestions: [],
        },
      ],
    },
    {
      name: "a lease take-over judged by claimed_at",
      code: `export async function claim(id: string, cutoff: Date) {
  await knex('jobs').where('id', id).where((qb) => qb.whereNot('status', 'running').orWhere('claimed_at', '<', cutoff)).update({ status: 'running', claimed_at: knex.fn.now() });
}`,
      errors: [
        {
          messageId: "startTimeTakeover",
          line: 2,
          column: 93,
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
        `export async function sweep(cutoff) {
  await knex('exports').where({ status: 'running' }).where('updated_at', '<', cutoff).update({ status: 'queued', updated_at: knex.fn.now() });
}`,
      languageOptions: javascript,
    },
    {
      name: "archiving old rows in a waiting state is not a recovery",
      code:
        CLAIM +
        `export async function archive(cutoff) {
  await knex('exports').where('status', 'pending').where('created_at', '<', cutoff).update({ status: 'archived' });
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "a boot-time reset of every running row, with no age",
      code:
        CLAIM +
        `export async function onBoot() {
  await knex('exports').where('status', 'running').update({ status: 'failed' });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingTime",
          line: 6,
          column: 9,
          data: {
            ...claimed("exports", "status", "running", 2),
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
        `export async function sweep(cutoff) {
  await knex('exports').where('updated_at', '<', cutoff).update({ status: 'failed' });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingStatus",
          line: 6,
          column: 9,
          data: {
            ...claimed("exports", "status", "running", 2),
            target: "failed",
            rowFilter: "its filter",
            checkedWhere: "",
            checkLine: "",
          },
          suggestions: [
            {
              messageId: "addStatus",
              data: {
                ...claimed("exports", "status", "running", 2),
                target: "failed",
                rowFilter: "its filter",
                checkedWhere: "",
                checkLine: "",
              },
              output:
                CLAIM +
                `export async function sweep(cutoff) {
  await knex('exports').where('updated_at', '<', cutoff).where('status', 'running').update({ status: 'failed' });
}`,
            },
          ],
        },
      ],
    },
    {
      name: "staleness judged after a read with first(), then a write by id",
      code: `export class Reaper {
  async claim(id: string) {
    await this.db('jobs').where({ id }).whereNot('status', 'running').update({ status: 'running', updated_at: new Date() });
  }
  async reap(id: string) {
    const job = await this.db('jobs').where({ id }).first();
    if (job.status === 'running' && Date.now() - job.updated_at.getTime() > 600_000) {
      await this.db('jobs').where({ id }).update({ status: 'failed' });
    }
  }
}`,
      errors: [
        {
          messageId: "checkInJs",
          line: 8,
          column: 13,
          data: {
            ...claimed("jobs", "status", "running", 3),
            target: "failed",
            rowFilter: "id",
            checkedWhere: "in JavaScript",
            checkLine: "7",
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
      languageOptions: javascript,
    },
    {
      // forUpdate().skipLocked() in the transaction: the rows read stay locked until the update commits
      name: "a locking read in a transaction, then whereIn(ids).update",
      code: `export async function claimBatch(queue: string, n: number, worker: string) {
  return knex.transaction(async (trx) => {
    const picked = await trx("tasks").select("id").where("state", "waiting").andWhere("queue", queue).limit(n).forUpdate().skipLocked();
    if (picked.length === 0) return [];
    const ids = picked.map((t) => t.id);
    await trx("tasks").whereIn("id", ids).update({ state: "claimed", claimed_by: worker });
    return ids;
  });
}`,
    },
    {
      name: "Supabase filters after update(): not a knex chain, so no unconditional write is seen",
      code: `export async function start(id: string) {
  const { data: job } = await supabase.from('jobs').select('*').eq('id', id).single();
  if (job.status === 'running') return;
  await supabase.from('jobs').update({ status: 'running' }).eq('id', id).neq('status', 'running');
}`,
    },
    {
      name: "a compare-and-set on the status read before",
      code: `export async function start(id: string) {
  const job = await knex('jobs').where('id', id).first();
  if (job.status === 'running') return;
  await knex('jobs').where({ id, status: job.status }).update({ status: 'running' });
}`,
    },
  ],
  invalid: [
    {
      name: "read with first(), check in JavaScript, unconditional write",
      code: `export async function start(id) {
  const job = await knex('jobs').where({ id }).first();
  if (job.status === 'running') return;
  await knex('jobs').where({ id }).update({ status: 'running' });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: { ...lock("jobs", "status", "running"), checkedWhere: "in JavaScript", checkLine: "3" },
          // the whole fix: Knex resolves the update to the count, and the check's `return` is taken again on 0
          suggestions: [
            {
              messageId: "addConditionAndExit",
              data: { field: "status", value: "running", exit: "return", checkLine: "3" },
              output: `export async function start(id) {
  const job = await knex('jobs').where({ id }).first();
  if (job.status === 'running') return;
  const claimed = await knex('jobs').where({ id }).whereNot('status', 'running').update({ status: 'running' });
  if (claimed === 0) return;
}`,
            },
          ],
        },
      ],
    },
    {
      name: "a read of queued rows, then a write by id in .then",
      code: `export function next() {
  return knex('jobs').where('status', 'queued').first().then((job) => job && knex('jobs').where('id', job.id).update({ status: 'running' }));
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 2,
          column: 78,
          data: { ...lock("jobs", "status", "running"), checkedWhere: "with a separate read", checkLine: "2" },
          suggestions: [
            {
              messageId: "addCondition",
              data: { ...lock("jobs", "status", "running"), checkedWhere: "with a separate read", checkLine: "2" },
              output: `export function next() {
  return knex('jobs').where('status', 'queued').first().then((job) => job && knex('jobs').where('id', job.id).whereNot('status', 'running').update({ status: 'running' }));
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
      name: "completion fenced by the claimed status",
      code:
        CLAIM +
        `export async function run(id) {
  if (!(await claimExport(id))) return;
  await knex('exports').where({ id, status: 'running' }).update({ status: 'done' });
}`,
      languageOptions: javascript,
    },
    {
      name: "completion fenced by an owner column",
      code: `export async function run(id: string, workerId: string) {
  await knex('jobs').where({ id }).whereNot('status', 'running').update({ status: 'running', locked_by: workerId });
  await knex('jobs').where('id', id).where('locked_by', workerId).update({ status: 'done' });
}`,
    },
  ],
  invalid: [
    recoveredElsewhere({
      name: "completion by id only, after the claim in the same function (plain JS, .then)",
      code: `export function run(id, render) {
  return knex('exports').where({ id }).whereNot('status', 'running').update({ status: 'running', updated_at: knex.fn.now() })
    .then(async (n) => {
      if (n !== 1) return;
      const url = await render(id);
      await knex('exports').where({ id }).update({ status: 'done', url });
    });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 6,
          column: 13,
          data: { ...claimed("exports", "status", "running", 2), target: "done" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("exports", "status", "running", 2), target: "done" },
              output: `export function run(id, render) {
  return knex('exports').where({ id }).whereNot('status', 'running').update({ status: 'running', updated_at: knex.fn.now() })
    .then(async (n) => {
      if (n !== 1) return;
      const url = await render(id);
      await knex('exports').where({ id }).where('status', 'running').update({ status: 'done', url });
    });
}`,
            },
          ],
        },
      ],
    }),
    recoveredElsewhere({
      name: "a failure write in a transaction of a class service",
      code: `export class Worker {
  async run(id: string) {
    await this.knex('jobs').where('id', id).whereNot('status', 'running').update({ status: 'running' });
    try { await work(id); } catch {
      await this.knex.transaction(async (trx) => { await trx('jobs').where('id', id).update({ status: 'failed' }); });
    }
  }
}`,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 5,
          column: 58,
          data: { ...claimed("jobs", "status", "running", 3), target: "failed" },
          suggestions: [
            {
              messageId: "addFence",
              data: { ...claimed("jobs", "status", "running", 3), target: "failed" },
              output: `export class Worker {
  async run(id: string) {
    await this.knex('jobs').where('id', id).whereNot('status', 'running').update({ status: 'running' });
    try { await work(id); } catch {
      await this.knex.transaction(async (trx) => { await trx('jobs').where('id', id).where('status', 'running').update({ status: 'failed' }); });
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
