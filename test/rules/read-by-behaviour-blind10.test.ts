// Real code of blind-10's first sight (issue 35) read by what it does, in our words: a flag named by what it
// qualifies (`catalogSyncInProgress`) and taken over in JavaScript once its holder's start has aged. The take-over is
// the stale path of every claim of that flag (no "never recovered" finding), and is itself a check made apart from
// its write; the plain claim beside it is a check-then-act.
import atomicClaim from "../../rules/atomic-claim.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

const CATALOG_SYNC = `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
const STALE_MS = 10 * 60 * 1000;
export async function startCatalogSync(shopId: string): Promise<boolean> {
  const shop = await prisma.shop.findUniqueOrThrow({ where: { id: shopId } });
  if (shop.catalogSyncInProgress) {
    if (Date.now() - shop.catalogSyncStartedAt.getTime() > STALE_MS) {
      await prisma.shop.update({ where: { id: shopId }, data: { catalogSyncInProgress: true, catalogSyncStartedAt: new Date() } });
      return true;
    }
    return false;
  }
  await prisma.shop.update({ where: { id: shopId }, data: { catalogSyncInProgress: true } });
  return true;
}
export async function finishCatalogSync(shopId: string) {
  await prisma.shop.update({ where: { id: shopId }, data: { catalogSyncInProgress: false } });
}
`;

/** An account lock-out: `accountLocked` ends in a state word, which names no work under way. */
const LOCK_OUT = (field: string) => `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
export async function recordFailedLogin(userId: string) {
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId } });
  if (user.${field}) throw new Error("locked");
  await sendAlert(userId);
  if (user.failedLogins + 1 >= 5) {
    await prisma.user.update({ where: { id: userId }, data: { ${field}: true, failedLogins: 0 } });
    await notifySecurity(userId);
  }
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    { name: "a flag another write takes over once aged: the claim has its stale path", code: CATALOG_SYNC },
    { name: "a lock-out named by a state word is no processing flag", code: LOCK_OUT("accountLocked") },
  ],
  invalid: [
    {
      name: "the same shape with a word of work under way: a flag, left set by a dead holder",
      code: LOCK_OUT("accountSyncing"),
      errors: [
        { messageId: "missingRecovery", line: 8, data: { model: "user", field: "accountSyncing", value: "true" } },
      ],
    },
    {
      name: "the same flag re-taken on a test of no age: no take-over, and a dead holder keeps it",
      code: CATALOG_SYNC.replace("Date.now() - shop.catalogSyncStartedAt.getTime() > STALE_MS", "shop.force"),
      errors: [
        {
          messageId: "missingRecovery",
          line: 13,
          data: { model: "shop", field: "catalogSyncInProgress", value: "true" },
        },
      ],
    },
  ],
});

/** The plain claim's data: the write at line 13, checked by the test at line 6. */
const CLAIM_13 = {
  model: "shop",
  field: "catalogSyncInProgress",
  value: "true",
  claimLine: "13",
  checkedWhere: "in JavaScript",
  checkLine: "6",
};

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [],
  invalid: [
    {
      name: "the take-over and the claim are each a check made apart from the write",
      code: CATALOG_SYNC,
      errors: [
        {
          messageId: "checkThenLease",
          line: 8,
          data: {
            model: "shop",
            field: "catalogSyncInProgress",
            value: "true",
            claimLine: "8",
            checkedWhere: "in JavaScript",
            checkLine: "7",
          },
        },
        {
          messageId: "checkThenAct",
          line: 13,
          data: CLAIM_13,
          suggestions: [
            {
              messageId: "addCondition",
              data: CLAIM_13,
              output: CATALOG_SYNC.replace(
                "{ where: { id: shopId }, data: { catalogSyncInProgress: true } }",
                "{ where: { id: shopId, catalogSyncInProgress: { not: true } }, data: { catalogSyncInProgress: true } }",
              ),
            },
          ],
        },
      ],
    },
  ],
});

// An in-process flag tested, then an await, then set (blind-10 E8e08): the event loop runs another call while this
// one waits, and it passes the same test. Set right after the test, the two run without interruption.
const SCHEDULER = (body: string) => `export class ChannelSync {
  private isSyncing = false;
  async syncOne(channelId: number) {
    if (this.isSyncing) {
      await this.notify("already syncing");
      return false;
    }
${body}
    try {
      await this.pull(channelId);
    } finally {
      this.isSyncing = false;
    }
    return true;
  }
  private async notify(message: string) {}
  private async pull(channelId: number) {}
  private async lookup(channelId: number) {}
}
`;

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    {
      // a mark that the awaited step was done once, set last: nothing is held across work after it
      name: "a flag set last, after the one step it marks as done",
      code: `export class QueueSlot {
  private queued = false;
  async enter(redis: Redis, key: string, uid: string) {
    if (!this.queued) {
      const length = await redis.rpush(key, uid);
      this.queued = true;
      return length === 1;
    }
    const head = await redis.lindex(key, 0);
    if (head === null) {
      this.queued = false;
      return false;
    }
    return head === uid;
  }
}`,
    },
    {
      name: "set right after the test; the await in the branch that turns the caller away is no gap",
      code: SCHEDULER("    this.isSyncing = true;\n    await this.lookup(channelId);"),
    },
  ],
  invalid: [
    {
      name: "tested, then awaited, then set: a second call passes the test meanwhile",
      code: SCHEDULER("    await this.lookup(channelId);\n    this.isSyncing = true;"),
      errors: [
        {
          messageId: "flagSetAfterAwait",
          line: 9,
          data: { name: "this.isSyncing", checkLine: "4", waitLine: "8" },
        },
      ],
    },
  ],
});
