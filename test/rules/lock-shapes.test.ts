// The two lock shapes besides status claims: processing flags and unique-insert lock rows (with Prisma here;
// the store tests show them through the other clients).
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";

const flagData = (model: string, field: string) => ({ model, field, value: "true" });

/** A lock timestamp taken where empty and cleared after the work (no expiry of its own). */
const TASK_LOCK = `export async function runTask(taskId: string, work: () => Promise<void>) {
  const { count } = await prisma.scheduledTask.updateMany({ where: { taskId, lockedAt: null }, data: { lockedAt: new Date() } });
  if (count === 0) return;
  await work();
  await prisma.scheduledTask.updateMany({ where: { taskId }, data: { lockedAt: null } });
}`;

/** A lock row created once, then taken over (when free or expired, checked in JavaScript) by a write filtered on `where`. */
const takeOver = (where: string) => `export async function acquire(name: string, ownerId: string) {
  try {
    const lock = await prisma.lock.findFirst({ where: { name } });
    if (!lock) {
      await prisma.lock.create({ data: { name, isLocked: true, ownerId, expiresAt: new Date(Date.now() + 5000) } });
    } else if (!lock.isLocked || lock.expiresAt < new Date()) {
      await prisma.lock.update({
        where: ${where},
        data: { isLocked: true, ownerId, expiresAt: new Date(Date.now() + 5000), clock: { increment: 1 } },
      });
    } else {
      throw new Error("taken");
    }
  } catch (e: any) {
    if (e.code === "P2002" || e.code === "P2025") return false;
    throw e;
  }
  return true;
}`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      // lookalike: an audit row whose failed insert is only logged is no lock, whatever the catch does
      code: `export async function record(pool: Pool, event: string) {
  try {
    await pool.query("INSERT INTO audit_events (event) VALUES ($1)", [event]);
  } catch (e) {
    logger.warn("audit failed", e);
    return false;
  }
  return true;
}`,
    },
    {
      // lookalike: a duplicate e-mail caught on an ordinary table is a user error, not a lock
      code: `export async function signUp(pool: Pool, email: string) {
  try {
    await pool.query("INSERT INTO users (email) VALUES ($1)", [email]);
  } catch (e) {
    if (e.code === "23505") return "taken";
    throw e;
  }
  return "created";
}`,
    },
    // a lock timestamp taken where empty, with a sweeper that clears it once it is older than a threshold
    `${TASK_LOCK}
export async function clearStale(cutoff: Date) {
  await prisma.scheduledTask.updateMany({ where: { lockedAt: { lt: cutoff } }, data: { lockedAt: null } });
}`,
    // an account lockout stamped where empty and never cleared here: no holder that does work and lets go
    `export async function lockOut(userId: string) {
  await prisma.user.updateMany({ where: { id: userId, lockedAt: null }, data: { lockedAt: new Date() } });
}`,
    // a lock row created once, then taken over when free or expired by a compare-and-set on the version read
    // (`clock: lock.clock`, decided in JavaScript): the take-over is the row's way out when its holder dies
    takeOver("{ id: lock.id, clock: lock.clock }"),
    // the same take-over by id alone still frees a dead holder's row once it expires (Q1 is answered); the two steps
    // race, which is atomic-claim's finding (a lease of the lock table judged in JavaScript, below)
    takeOver("{ id: lock.id }"),
    // a flag claim with a conditional recovery judged by a progress timestamp
    `export async function start(id: string) {
  await prisma.campaign.updateMany({ where: { id, is_processing: false }, data: { is_processing: true } });
}
export async function unstick(cutoff: Date) {
  await prisma.campaign.updateMany({ where: { is_processing: true, updated_at: { lt: cutoff } }, data: { is_processing: false } });
}`,
    // a boolean that is not a processing flag
    `export async function publish(id: string) {
  await prisma.post.updateMany({ where: { id, published: false }, data: { published: true } });
}`,
    // setting a flag false is a release, not a claim
    `export async function stop(id: string) {
  await prisma.campaign.updateMany({ where: { id, isSending: true }, data: { isSending: false } });
}`,
    // a lock row with an expiry that a sweeper uses
    `export async function acquire(name: string) {
  try { await prisma.jobLock.create({ data: { name, expiresAt: new Date(Date.now() + 60_000) } }); return true; }
  catch (e) { if (e.code === "P2002") return false; throw e; }
}
export async function sweep() { await prisma.jobLock.deleteMany({ where: { expiresAt: { lt: new Date() } } }); }`,
    // an insert into a table that is not a lock table is not a lock
    `export async function record(id: string) {
  try { await prisma.webhookEvent.create({ data: { id } }); } catch (e) { if (e.code === "P2002") return; throw e; }
}`,
    // an insert into a lock table whose duplicate error is not caught is just a write
    `export async function seed(name: string) { await prisma.jobLock.create({ data: { name } }); }`,
  ],
  invalid: [
    {
      code: `export async function start(id: string) {
  const r = await prisma.campaign.updateMany({ where: { id, isSending: false }, data: { isSending: true } });
  if (r.count === 0) return;
}`,
      errors: [{ messageId: "missingRecovery", line: 2, column: 19, data: flagData("campaign", "isSending") }],
    },
    {
      code: `async function start(id) {
  await prisma.importRun.updateMany({ where: { id, NOT: { locked: true } }, data: { locked: true } });
}`,
      languageOptions: javascript,
      errors: [{ messageId: "missingRecovery", line: 2, column: 9, data: flagData("importRun", "locked") }],
    },
    {
      // a lock row with no expiry: catching P2002 is the claim, the delete in finally is not a recovery
      code: `export async function withLock(name: string, work: () => Promise<void>) {
  try {
    await prisma.jobLock.create({ data: { name, owner: process.pid } });
  } catch (e) {
    if (e.code === "P2002") return;
    throw e;
  }
  try { await work(); } finally { await prisma.jobLock.delete({ where: { name } }); }
}`,
      errors: [{ messageId: "missingExpiry", line: 3, column: 11, data: { model: "jobLock" } }],
    },
    {
      // raw SQL: PostgreSQL's unique_violation (23505) caught around a plain INSERT is the claim, as with P2002
      code: `export async function withLock(pool: Pool, name: string, work: () => Promise<void>) {
  try {
    await pool.query("INSERT INTO job_locks (name, owner) VALUES ($1, $2)", [name, process.pid]);
  } catch (e) {
    if (e.code === "23505") return;
    throw e;
  }
  try { await work(); } finally { await pool.query("DELETE FROM job_locks WHERE name = $1", [name]); }
}`,
      errors: [{ messageId: "missingExpiry", line: 3, column: 11, data: { model: "job_locks" } }],
    },
    {
      // MySQL through a promise: ER_DUP_ENTRY handled in .catch() on a knex insert with later builder links
      code: `export async function withLock(db: Knex, name: string, work: () => Promise<void>) {
  const took = await db("job_locks").insert({ name }).returning("name").then(() => true, (e) => {
    if (e.code === "ER_DUP_ENTRY") return false;
    throw e;
  });
  if (!took) return;
  try { await work(); } finally { await db("job_locks").where({ name }).delete(); }
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 22, data: { model: "job_locks" } }],
    },
    {
      // a lock table's insert whose failure, any failure, ends the attempt: the row was already there
      code: `export async function withLock(pool: Pool, name: string, work: () => Promise<void>) {
  try {
    await pool.query("INSERT INTO cron_locks (name) VALUES ($1)", [name]);
  } catch (e) {
    logger.warn("cron lock busy", e);
    return false;
  }
  try { await work(); } finally { await pool.query("DELETE FROM cron_locks WHERE name = $1", [name]); }
  return true;
}`,
      errors: [{ messageId: "missingExpiry", line: 3, column: 11, data: { model: "cron_locks" } }],
    },
    {
      // the same through a wrapper that hands the error back instead of throwing it
      code: `export async function withLock(db: Knex, name: string, work: () => Promise<void>) {
  const taken = await attempt(() => db("run_locks").insert({ name }));
  if (taken instanceof Error) return false;
  try { await work(); } finally { await db("run_locks").where({ name }).delete(); }
  return true;
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 37, data: { model: "run_locks" } }],
    },
    {
      // a lock timestamp taken where empty and cleared after the work, with nothing that clears one whose holder
      // died: a task killed mid-run never runs again
      code: TASK_LOCK,
      errors: [
        { messageId: "missingLockExpiry", line: 2, column: 27, data: { model: "scheduledTask", field: "lockedAt" } },
      ],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    // the flag is checked in the write itself
    `export async function send(id: string) {
  const { count } = await prisma.newsletter.updateMany({ where: { id, isSending: false }, data: { isSending: true } });
  return count === 1;
}`,
  ],
  invalid: [
    {
      // a lock table's row taken over by id alone after a JavaScript check of its expiry: two takers that both saw it
      // expired both write (before issue 35 the expiry column needed a lock word to make this a lease, and the row was
      // reported as having no way out at all)
      code: takeOver("{ id: lock.id }"),
      errors: [
        {
          messageId: "checkThenLease",
          line: 7,
          data: {
            model: "lock",
            field: "expiresAt",
            value: "held",
            claimLine: "7",
            checkedWhere: "with a separate read",
            checkLine: "3",
          },
        },
      ],
    },
    {
      code: `export async function send(id: string) {
  const n = await prisma.newsletter.findUniqueOrThrow({ where: { id } });
  if (n.isSending) return;
  await prisma.newsletter.update({ where: { id }, data: { isSending: true } });
}`,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: {
            model: "newsletter",
            field: "isSending",
            value: "true",
            checkedWhere: "in JavaScript",
            checkLine: "3",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "newsletter",
                field: "isSending",
                value: "true",
                checkedWhere: "in JavaScript",
                checkLine: "3",
              },
              output: `export async function send(id: string) {
  const n = await prisma.newsletter.findUniqueOrThrow({ where: { id } });
  if (n.isSending) return;
  await prisma.newsletter.update({ where: { id, isSending: { not: true } }, data: { isSending: true } });
}`,
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [],
  invalid: [
    {
      // clearing every flag at boot, with no age: live holders lose their lock
      code: `export async function start(id: string) {
  await prisma.campaign.updateMany({ where: { id, isSending: false }, data: { isSending: true } });
}
export async function onBoot() {
  await prisma.campaign.updateMany({ where: { isSending: true }, data: { isSending: false } });
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 5,
          column: 9,
          data: { model: "campaign", field: "isSending", value: "true", claimLine: "2", target: "false" },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [],
  invalid: [
    {
      // a lock-row sweeper judged by when the row was created
      code: `export async function acquire(name: string) {
  try { await prisma.jobLock.create({ data: { name } }); } catch (e) { if (e.code === "P2002") return false; throw e; }
  return true;
}
export async function sweep(cutoff: Date) { await prisma.jobLock.deleteMany({ where: { createdAt: { lt: cutoff } } }); }`,
      errors: [
        {
          messageId: "startTimeLockRow",
          line: 5,
          column: 88,
          data: {
            what: "sweep",
            model: "jobLock",
            claimLine: "2",
            timeField: "createdAt",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});
