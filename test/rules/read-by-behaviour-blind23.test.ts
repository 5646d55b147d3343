// Real code of blind-23 (issue 35), read by what it does, in our words:
// - a claim that takes rows from a list of states holding a waiting one (`status: { in: ["queued", "retrying"] }`
//   moved to `sending`) says every state in that list is where rows wait: RETRYING there is a queue state, so a
//   write that moves a stuck row back to it gives the row back, and claims nothing;
// - a recovery that locks the row (`SELECT … FOR UPDATE`) and re-checks the claimed state on what it read there
//   pins that state as its filter would, and a stamp only the claim writes (`dueAt: now`, moved by no write that
//   keeps the row claimed) is a start stamp whatever it is called: a live holder never moves it, so the age judged
//   before the write still holds at it;
// - a holder's write sent through the claim's own transaction handle, after the claim, in the same run of the same
//   function (`tx.mail.updateMany` claims, `tx.mail.update` fails the row) comes before the claim commits: the
//   claim's write keeps the row locked to everyone else until then, so there is nothing to fence;
// - a promise queue is a queue whatever it is called and however its tail is kept: seeded settled
//   (`Promise.resolve()`) and chained on, with the new link kept through a const (`const next = tail.then(run);
//   tail = next.then(() => {})`), one rejection is every later call's result. It is reported at the link that is
//   kept, the one to give a rejection handler;
// - a write that never refuses (SETEX) in a function named as a lock's acquire, whose result it hands its caller as
//   the answer (`return acquired === "OK"`), lets every caller in, as one tested in place does;
// - `this` in a Mongoose static is the model wherever the statics are listed: in the schema's options (`new
//   Schema(fields, { statics: { … } })`) or handed over by a model class's member named for them (`static get
//   modelStatics() { return { … } as const }`), as it already was for `schema.statics.name = function …`.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import requireFencing from "../../rules/require-fencing.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A mail outbox on Prisma: mails claimed in a transaction, stuck ones moved back to `retrying` under a row lock. */
const OUTBOX = (opts: { recheck?: boolean; touch?: boolean; failOutside?: boolean } = {}) => {
  const { recheck = true, touch = false, failOutside = false } = opts;
  return `import { prisma } from "./db";

type Tx = Parameters<Parameters<typeof prisma.$transaction>[0]>[0];

export async function sendOne(id: string, now: Date) {
${
  failOutside
    ? `  const mail = await prisma.$transaction(async (tx) => takeInTransaction(tx, id, now));
  if (mail && !mail.body) await prisma.mail.update({ where: { id }, data: { status: "failed", failedAt: now } });`
    : `  return prisma.$transaction(async (tx) => takeInTransaction(tx, id, now));`
}
}

async function takeInTransaction(tx: Tx, id: string, now: Date) {
  const taken = await tx.mail.updateMany({
    where: { id, status: { in: ["queued", "retrying"] }, dueAt: { lte: now } },
    data: { status: "sending", dueAt: now },
  });
  if (taken.count === 0) return null;
  const mail = await tx.mail.findUnique({ where: { id } });
${
  failOutside
    ? `  return mail;`
    : `  if (!mail?.body) {
    await tx.mail.update({ where: { id }, data: { status: "failed", failedAt: now } });
    return null;
  }
  return mail;`
}
}
${
  touch
    ? `
export async function touch(id: string) {
  await prisma.mail.update({ where: { id }, data: { dueAt: new Date() } });
}
`
    : ""
}
export async function markSent(id: string) {
  await prisma.mail.updateMany({ where: { id, status: "sending" }, data: { status: "sent" } });
}

export async function requeueStuck(now: Date) {
  const stuck = await prisma.mail.findMany({
    where: { status: "sending", dueAt: { lte: new Date(now.getTime() - 10 * 60_000) } },
    select: { id: true },
  });
  for (const row of stuck) {
    await prisma.$transaction(async (tx) => {
      await tx.$queryRaw\`SELECT id FROM "Mail" WHERE id = \${row.id} FOR UPDATE\`;
      const locked = await tx.mail.findUnique({ where: { id: row.id }, select: { status: true } });
${recheck ? `      if (!locked || locked.status !== "sending") return;\n` : ""}      await tx.mail.update({ where: { id: row.id }, data: { status: "retrying", dueAt: now } });
    });
  }
}
`;
};

const line = (code: string, text: string) => String(code.split("\n").findIndex((l) => l.includes(text)) + 1);

ruleTester.run("require-stale-recovery (a state a claim takes rows from is a queue state)", requireStaleRecovery, {
  // The move back to `retrying` is the recovery of `sending`; it claims nothing of its own.
  valid: [{ code: OUTBOX() }],
  invalid: [],
});

/**
 * A cancel that takes rows from a waiting state and a running one: RUNNING is held by the module's own claim, so it
 * keeps its meaning, and that claim still lacks a recovery.
 */
const CANCELLABLE = `import { Pool } from "pg";

const pool = new Pool();

export async function startRender(id: string) {
  const { rowCount } = await pool.query(\`UPDATE renders SET status = 'running' WHERE id = $1 AND status = 'pending'\`, [id]);
  if (rowCount === 0) return false;
  await render(id);
  await pool.query(\`UPDATE renders SET status = 'done' WHERE id = $1 AND status = 'running'\`, [id]);
  return true;
}

export async function cancelRender(id: string) {
  await pool.query(\`UPDATE renders SET status = 'stopping' WHERE id = $1 AND status IN ('pending', 'running')\`, [id]);
}

export async function finishStopped() {
  await pool.query(
    \`UPDATE renders SET status = 'cancelled' WHERE status = 'stopping' AND updated_at < now() - interval '5 minutes'\`,
  );
}

declare function render(id: string): Promise<void>;
`;

ruleTester.run("require-stale-recovery (a state the module claims itself keeps its meaning)", requireStaleRecovery, {
  valid: [],
  invalid: [
    {
      code: CANCELLABLE,
      errors: [
        { messageId: "missingRecovery", line: 6, data: { model: "renders", field: "status", value: "running" } },
      ],
    },
  ],
});

ruleTester.run("atomic-claim (a state a claim takes rows from is a queue state)", atomicClaim, {
  valid: [{ code: OUTBOX() }],
  invalid: [],
});

const recovery = (code: string) => ({
  messageId: "checkInJs" as const,
  line: Number(line(code, 'data: { status: "retrying"')),
  data: {
    model: "mail",
    field: "status",
    value: "sending",
    claimLine: line(code, "await tx.mail.updateMany"),
    target: "retrying",
    rowFilter: "id",
    checkedWhere: "with a separate read",
    checkLine: line(code, "await prisma.mail.findMany"),
  },
});

ruleTester.run(
  "conditional-recovery (a state re-checked under a row lock, an age only the claim stamps)",
  conditionalRecovery,
  {
    valid: [{ code: OUTBOX() }],
    invalid: [
      // Without the re-check, a holder that finished between the read and the write is overwritten.
      { code: OUTBOX({ recheck: false }), errors: [recovery(OUTBOX({ recheck: false }))] },
      // A holder that moves the judged stamp while it works (`touch`) is judged by an old reading.
      { code: OUTBOX({ touch: true }), errors: [recovery(OUTBOX({ touch: true }))] },
    ],
  },
);

const EXPORTED = OUTBOX().replace("\nasync function takeInTransaction", "\nexport async function takeInTransaction");

ruleTester.run("require-fencing (a holder's write in the claim's own transaction)", requireFencing, {
  valid: [{ code: OUTBOX() }],
  invalid: [
    // Exported, the function may be handed a plain client by another module: that its handle is a transaction is
    // not known, so the write is asked for its fence.
    {
      code: EXPORTED,
      errors: [
        {
          messageId: "unfencedWrite",
          line: Number(line(EXPORTED, 'await tx.mail.update({ where: { id }, data: { status: "failed"')),
          data: {
            model: "mail",
            target: "failed",
            field: "status",
            value: "sending",
            claimLine: line(EXPORTED, "await tx.mail.updateMany"),
          },
          suggestions: [
            {
              messageId: "addFence",
              data: { field: "status", value: "sending" },
              output: EXPORTED.replace(
                'tx.mail.update({ where: { id }, data: { status: "failed"',
                'tx.mail.update({ where: { id, status: "sending" }, data: { status: "failed"',
              ),
            },
          ],
        },
      ],
    },
    // Sent after the transaction committed: a recovery and a new claim can come between.
    {
      code: OUTBOX({ failOutside: true }),
      errors: [
        {
          messageId: "unfencedWrite",
          line: Number(line(OUTBOX({ failOutside: true }), "await prisma.mail.update({ where: { id }")),
          data: {
            model: "mail",
            target: "failed",
            field: "status",
            value: "sending",
            claimLine: line(OUTBOX({ failOutside: true }), "await tx.mail.updateMany"),
          },
          suggestions: [
            {
              messageId: "addFence",
              data: { field: "status", value: "sending" },
              output: OUTBOX({ failOutside: true }).replace(
                'update({ where: { id }, data: { status: "failed"',
                'update({ where: { id, status: "sending" }, data: { status: "failed"',
              ),
            },
          ],
        },
      ],
    },
  ],
});

/** Jobs run one after another per account, each chained on the account's tail (no lock word anywhere). */
const PER_ACCOUNT = (link: string) => `const tails = new Map();

export function runForAccount(accountId, job) {
  if (!tails.has(accountId)) tails.set(accountId, Promise.resolve());
  const tail = tails.get(accountId);
  const next = ${link};
  tails.set(accountId, next);
  return next;
}
`;

/** Renders serialised by one module tail, advanced through a const. */
const RENDERS = (advance: string) => `let tail = Promise.resolve();

export function schedule(render: () => Promise<void>) {
  const next = tail.then(render);
  tail = ${advance};
  return next;
}
`;

ruleTester.run("release-in-finally (a promise queue by what it does)", releaseInFinally, {
  valid: [
    { code: PER_ACCOUNT("tail.then(() => job(), () => job())") },
    { code: PER_ACCOUNT("tail.catch(() => undefined).then(() => job())") },
    { code: RENDERS("next.then(\n    () => undefined,\n    () => undefined,\n  )") },
    { code: RENDERS("next.catch(() => undefined)") },
  ],
  invalid: [
    {
      code: PER_ACCOUNT("tail.then(() => job())"),
      errors: [{ messageId: "chainSkipsAfterRejection", line: 6, data: { holder: "tails" } }],
    },
    {
      code: RENDERS("next.then(() => undefined)"),
      errors: [{ messageId: "chainSkipsAfterRejection", line: 5, data: { holder: "tail" } }],
    },
  ],
});

/** A lock manager on ioredis whose acquire writes with SETEX and answers whether it was taken. */
const MANAGER = (write: string, name = "acquireLock") => `import Redis from "ioredis";

export class LockManager {
  private redis = new Redis();

  async ${name}(key: string, ttlSeconds = 30): Promise<boolean> {
    const lockKey = \`lock:\${key}\`;
    const acquired = await ${write};
    return acquired === "OK";
  }

  async releaseLock(key: string): Promise<void> {
    const lockKey = \`lock:\${key}\`;
    await this.redis.del(lockKey);
  }
}
`;

ruleTester.run("atomic-claim (a lock write that never refuses, answered to the caller)", atomicClaim, {
  valid: [
    { code: MANAGER('this.redis.set(lockKey, "1", "EX", ttlSeconds, "NX")') },
    // A wrapper's own signature: what `ttlSeconds, true` asks of the server is not known, so nothing is said.
    { code: MANAGER('this.redis.set(lockKey, "1", ttlSeconds, true)') },
    // Not a lock's acquire, and the key names no lock: a cache entry refreshed.
    {
      code: MANAGER('this.redis.setex(lockKey, ttlSeconds, "1")', "refreshEntry").replaceAll("lock:", "entry:"),
    },
  ],
  invalid: [
    {
      code: MANAGER('this.redis.setex(lockKey, ttlSeconds, "1")'),
      errors: [
        {
          messageId: "unrefusableLock",
          line: 8,
          data: { command: "SETEX", key: '"lock:*"', testLine: "9" },
        },
      ],
    },
  ],
});

/** A lock document taken where absent or expired; a live holder's makes the upsert fail on the duplicate key. */
const TAKE = `        try {
          await this.findOneAndUpdate(
            { _id: name, $or: [{ expiresAt: { $lt: new Date() } }, { expiresAt: null }] },
            { holder, expiresAt: new Date(Date.now() + ttlSeconds * 1000) },
            { upsert: true },
          );
        } catch (error) {
          if ((error as { code?: number }).code !== 11000) throw error;
          return false;
        }
        return true;`;

/** A named lock kept as a Mongo document with an expiry, in a model class whose statics take and give it. */
const LOCK_CLASS = (releaseFilter: string) => `import { BaseModel } from "./base-model";

class Lock extends BaseModel {
  static get modelStatics() {
    return {
      acquire: async function (this: LockModel, name: string, holder: string, ttlSeconds = 30) {
${TAKE}
      },
      release: async function (this: LockModel, name: string, holder: string) {
        await this.deleteOne(${releaseFilter});
      },
    } as const;
  }
}

export default Lock;
`;

/** The same lock with its statics in the schema's options. */
const LOCK_SCHEMA = (releaseFilter: string) => `import mongoose, { Schema } from "mongoose";

const lockSchema = new Schema(
  { _id: String, holder: String, expiresAt: Date },
  {
    statics: {
      async acquire(name: string, holder: string, ttlSeconds = 30) {
${TAKE}
      },
      async release(name: string, holder: string) {
        await this.deleteOne(${releaseFilter});
      },
    },
  },
);

export const Lock = mongoose.model("Lock", lockSchema);
`;

const byIdAlone = (code: string, model: string) => ({
  messageId: "rowRelease" as const,
  line: Number(line(code, "await this.deleteOne")),
  data: {
    operation: "delete",
    lock: `lock row in ${model}`,
    filter: "_id",
    acquireLine: line(code, "await this.findOneAndUpdate"),
    expires: "is taken over once expiresAt has passed",
    expiryLine: line(code, "await this.findOneAndUpdate"),
  },
  // The holder each caller passes is not known to be its own: no owner is offered.
  suggestions: [],
});

ruleTester.run("owner-checked-release (this in a Mongoose static is the model)", ownerCheckedRelease, {
  valid: [{ code: LOCK_CLASS("{ _id: name, holder }") }, { code: LOCK_SCHEMA("{ _id: name, holder }") }],
  invalid: [
    { code: LOCK_CLASS("{ _id: name }"), errors: [byIdAlone(LOCK_CLASS("{ _id: name }"), "Lock")] },
    { code: LOCK_SCHEMA("{ _id: name }"), errors: [byIdAlone(LOCK_SCHEMA("{ _id: name }"), "lock")] },
  ],
});
