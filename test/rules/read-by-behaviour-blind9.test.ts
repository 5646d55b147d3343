// Real code of blind-9 (issue 35) read by what it does: a lease stamped with an instant made from the clock through a
// const, on an upsert that names no conflict columns (the row its check read); a holder's release after such a check,
// which is no take-over and no sweep; an account's lock-out, stamped only on some paths, which is no lease; and a job
// processor defined after a sweep, whose writes name the job's row, not the sweep's. Each case is in our words.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import { ruleTester } from "../rule-tester.js";

/** Read the lock row, leave if its expiry is still ahead, then upsert it (primary key `task`) with a new expiry. */
const CHECK_THEN_UPSERT = (release: string) => `import { createClient } from "@supabase/supabase-js";
import { randomUUID } from "node:crypto";

const db = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);

export async function runAlone(task: string, work: () => Promise<void>, ttlMs = 120_000): Promise<boolean> {
  const token = randomUUID();
  const until = new Date(Date.now() + ttlMs).toISOString();
  const { data: row } = await db.from("task_locks").select("locked_until").eq("task", task).maybeSingle();
  if (row && new Date(row.locked_until) > new Date()) return false;
  await db.from("task_locks").upsert({ task, locked_until: until, locked_by: token });
  try {
    await work();
    return true;
  } finally {
    await db.from("task_locks").delete()${release};
  }
}
`;

/** A PIN's lock-out: escalated after the third failure, null before it. It keeps the user out; it guards no work. */
const PIN_LOCKOUT = `import { PrismaClient } from "@prisma/client";

const prisma = new PrismaClient();

export async function checkPin(userId: string, pin: string): Promise<boolean> {
  const account = await prisma.pinAccount.findFirst({ where: { userId } });
  if (!account) return false;
  if (account.lockedUntil && account.lockedUntil > new Date()) return false;
  if (account.pin === pin) return true;
  const failures = account.failures + 1;
  const lockedUntil = failures >= 3 ? new Date(Date.now() + 15 * 60_000) : null;
  await prisma.pinAccount.update({ where: { id: account.id }, data: { failures, lockedUntil } });
  return false;
}
`;

/** A start-up sweep of stuck renders, then a queue processor that writes the render its job names. */
const SWEEP_THEN_PROCESSOR = `import { PrismaClient } from "@prisma/client";
import { Worker } from "bullmq";

const prisma = new PrismaClient();

export async function startWorker() {
  const cutoff = new Date(Date.now() - 10 * 60_000);
  const stuck = await prisma.render.findMany({ where: { status: "rendering", updatedAt: { lt: cutoff } } });
  for (const r of stuck) {
    await prisma.render.updateMany({
      where: { id: r.id, status: "rendering", updatedAt: { lt: cutoff } },
      data: { status: "queued" },
    });
  }
  return new Worker("renders", async (job) => {
    const { renderId } = job.data;
    await prisma.render.update({ where: { id: renderId }, data: { status: "rendering" } });
    try {
      await render(renderId);
      await prisma.render.update({ where: { id: renderId }, data: { status: "done" } });
    } catch (err) {
      await prisma.render.update({ where: { id: renderId }, data: { status: "failed" } });
      throw err;
    }
  });
}

declare function render(id: string): Promise<void>;
`;

/** The same sweep, but the stale rows are failed one by one from the scan's own result, by id alone. */
const SWEEP_BY_ID = SWEEP_THEN_PROCESSOR.replace(
  'where: { id: r.id, status: "rendering", updatedAt: { lt: cutoff } },\n      data: { status: "queued" },',
  'where: { id: r.id },\n      data: { status: "queued" },',
);

ruleTester.run(
  "atomic-claim (blind-9: a lease stamped from a clock const on an upsert without conflict columns)",
  atomicClaim,
  {
    valid: [{ name: "a lock-out stamped only after the third failure is no lease", code: PIN_LOCKOUT }],
    invalid: [
      {
        name: "two callers that both read the lease expired both upsert it",
        code: CHECK_THEN_UPSERT('.eq("task", task).eq("locked_by", token)'),
        errors: [
          {
            messageId: "checkThenLease",
            line: 11,
            column: 9,
            data: { model: "task_locks", field: "locked_until", checkLine: "9" },
          },
        ],
      },
    ],
  },
);

ruleTester.run(
  "owner-checked-release (blind-9: the holder's own release after a check-then-upsert lease)",
  ownerCheckedRelease,
  {
    valid: [
      {
        name: "released by the key and the token drawn for this acquisition",
        code: CHECK_THEN_UPSERT('.eq("task", task).eq("locked_by", token)'),
      },
    ],
    invalid: [
      {
        name: "released by the key alone: a holder that outlived its expiry frees the next holder's lease",
        code: CHECK_THEN_UPSERT('.eq("task", task)'),
        errors: [
          {
            messageId: "rowRelease",
            line: 16,
            column: 11,
            data: {
              operation: "delete",
              lock: "lease on task_locks.locked_until",
              acquireLine: "11",
              filter: "task",
              expires: "is taken over once locked_until has passed",
              expiryLine: "10",
            },
          },
        ],
      },
    ],
  },
);

ruleTester.run("conditional-recovery (blind-9: what is no sweep)", conditionalRecovery, {
  valid: [
    {
      name: "the holder's delete in finally, after the check that preceded its claim, is its release, not a take-over",
      code: CHECK_THEN_UPSERT('.eq("task", task).eq("locked_by", token)'),
    },
    {
      name: "a processor defined after a sweep writes the row its job names; the sweep's read does not judge it",
      code: SWEEP_THEN_PROCESSOR,
    },
  ],
  invalid: [
    {
      name: "rows taken from the scan's own result and written by id alone are the sweep's, judged by a separate read",
      code: SWEEP_BY_ID,
      errors: [
        {
          messageId: "sweepCheckInJs",
          line: 10,
          column: 11,
          data: {
            model: "render",
            field: "status",
            value: "rendering",
            checkedWhere: "with a separate read",
            checkLine: "8",
            rowFilter: "id",
          },
        },
      ],
    },
  ],
});
