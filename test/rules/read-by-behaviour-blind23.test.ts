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
//   claim's write keeps the row locked to everyone else until then, so there is nothing to fence.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import requireFencing from "../../rules/require-fencing.js";
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

ruleTester.run("require-fencing (a holder's write in the claim's own transaction)", requireFencing, {
  valid: [{ code: OUTBOX() }],
  invalid: [
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
