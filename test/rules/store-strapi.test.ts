// Strapi's three data layers through the database rules: the Entity Service (`strapi.entityService.update(uid, id,
// { data })`), the Query Engine (`strapi.db.query(uid).updateMany({ where, data })`) and the Document Service
// (`strapi.documents(uid).update({ documentId, data })`), with Strapi's `$`-operators. The model is the content
// type's name. A lease taken after a JavaScript check of its age (`checkThenLease`) is the lock-row form of
// check-then-act; read in a SERIALIZABLE transaction it is one step.
import atomicClaim from "../../rules/atomic-claim.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";

/** A cron lock entry read through the Entity Service, judged by a helper, then stamped by id: the claim is line 7. */
const ENTITY_SERVICE_LEASE = `const LOCK = "api::job-lock.job-lock";
const TTL_MS = 60_000;
const fresh = (at) => Date.now() - new Date(at).getTime() < TTL_MS;
export async function takeLock(strapi, job) {
  const [entry] = await strapi.entityService.findMany(LOCK, { filters: { job }, limit: 1 });
  if (!entry || (entry.locked && fresh(entry.locked_at))) return false;
  await strapi.entityService.update(LOCK, entry.id, { data: { locked: true, locked_at: new Date() } });
  return true;
}
`;

/** The same lock taken in one conditional write through the Query Engine, released only by its owner. */
const CONDITIONAL_LEASE = `const LOCK = "api::job-lock.job-lock";
export async function takeLock(strapi, job, owner) {
  const now = new Date();
  const { count } = await strapi.db.query(LOCK).updateMany({
    where: { job, $or: [{ locked_until: { $null: true } }, { locked_until: { $lt: now } }] },
    data: { owner, locked_until: new Date(now.getTime() + 60_000) },
  });
  return count === 1;
}
`;

const leaseData = {
  model: "job-lock",
  field: "locked_at",
  value: "held",
  claimLine: "7",
  checkedWhere: "with a separate read",
  checkLine: "5",
};

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [
    {
      name: "a lease taken in one conditional write through strapi.db.query",
      code: CONDITIONAL_LEASE,
      languageOptions: javascript,
    },
    {
      name: "a status claim with the check in the Document Service's filter",
      code: `export async function startImport(strapi, id) {
  const runs = strapi.documents("api::import.import");
  const updated = await runs.update({ documentId: id, filters: { state: { $ne: "running" } }, data: { state: "running" } });
  return updated;
}`,
      languageOptions: javascript,
    },
    {
      name: "a lease checked in JavaScript inside a SERIALIZABLE transaction: the read and the write are one step",
      code: `export async function claimMigration(prisma: Db, workerId: string) {
  await prisma.$transaction(async (tx) => {
    const m = await tx.backgroundMigration.findFirst({ where: { finishedAt: null } });
    if (!m || (m.lockedAt && m.lockedAt > new Date(Date.now() - 60_000))) return;
    await tx.backgroundMigration.update({ where: { id: m.id }, data: { workerId, lockedAt: new Date() } });
  }, { isolationLevel: Prisma.TransactionIsolationLevel.Serializable });
}`,
    },
    {
      name: "lookalike: an article published by id after a check, no lock column written",
      code: `export async function publish(strapi, id) {
  const article = await strapi.documents("api::article.article").findOne({ documentId: id });
  if (article.publishedAt && Date.now() - new Date(article.publishedAt).getTime() < 60_000) return;
  await strapi.documents("api::article.article").update({ documentId: id, data: { publishedAt: new Date() } });
}`,
      languageOptions: javascript,
    },
    {
      name: "lookalike: an entityService on something that is not Strapi",
      code: `export async function take(app, id) {
  const [lock] = await app.entityService.findMany("api::job-lock.job-lock", { filters: { id } });
  if (lock && Date.now() - lock.locked_at < 60_000) return;
  await app.entityService.update("api::job-lock.job-lock", id, { data: { locked_at: new Date() } });
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "Entity Service: a lease judged fresh by a helper, then stamped by id",
      code: ENTITY_SERVICE_LEASE,
      languageOptions: javascript,
      errors: [{ messageId: "checkThenLease", line: 7, data: leaseData }],
    },
    {
      name: "Prisma: the same lease checked in JavaScript outside any transaction",
      code: `export async function acquire(prisma: Db, id: string, me: string) {
  const cutoff = new Date(Date.now() - 5 * 60_000);
  const post = await prisma.importedPost.findUnique({ where: { id } });
  if (post.lockedAt && post.lockedAt > cutoff && post.lockedBy !== me) return false;
  await prisma.importedPost.update({ where: { id }, data: { lockedAt: new Date(), lockedBy: me } });
  return true;
}`,
      errors: [
        {
          messageId: "checkThenLease",
          line: 5,
          data: {
            model: "importedPost",
            field: "lockedAt",
            value: "held",
            claimLine: "5",
            checkedWhere: "with a separate read",
            checkLine: "3",
          },
        },
      ],
    },
    {
      name: "Document Service: a status checked in JavaScript, then written by documentId",
      code: `export async function startImport(strapi, id) {
  const run = await strapi.documents("api::import.import").findOne({ documentId: id });
  if (run.state === "running") return false;
  await strapi.documents("api::import.import").update({ documentId: id, data: { state: "running" } });
  return true;
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          data: {
            model: "import",
            field: "state",
            value: "running",
            claimLine: "4",
            checkedWhere: "in JavaScript",
            checkLine: "3",
          },
          suggestions: null,
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release", ownerCheckedRelease, {
  valid: [
    {
      name: "the conditional lease released only where this owner holds it",
      code:
        CONDITIONAL_LEASE +
        `export async function dropLock(strapi, job, owner) {
  await strapi.db.query(LOCK).updateMany({ where: { job, owner }, data: { owner: null, locked_until: null } });
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "the checked lease released by clearing its flag by id alone",
      code:
        ENTITY_SERVICE_LEASE +
        `export async function dropLock(strapi, job) {
  const [entry] = await strapi.entityService.findMany(LOCK, { filters: { job }, limit: 1 });
  if (entry) await strapi.entityService.update(LOCK, entry.id, { data: { locked: false } });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "rowRelease",
          line: 12,
          data: {
            operation: "write",
            lock: "lease on job-lock.locked_at",
            acquireLine: "7",
            filter: "id",
            expires: "is taken over once locked_at has passed",
            expiryLine: "6",
          },
        },
      ],
    },
    {
      name: "the conditional lease released by a Query Engine delete by job alone",
      code:
        CONDITIONAL_LEASE +
        `export async function dropLock(strapi, job) {
  await strapi.db.query(LOCK).delete({ where: { job } });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "rowRelease",
          line: 11,
          data: {
            operation: "delete",
            lock: "lease on job-lock.locked_until",
            acquireLine: "4",
            filter: "job",
            expires: "is taken over once locked_until has passed",
            expiryLine: "4",
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "a checked lease: the take-over its check judges answers a dead holder",
      code: ENTITY_SERVICE_LEASE,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "Query Engine: a status claim in the filter with no sweeper",
      code: `export async function claimSync(strapi, id) {
  const { count } = await strapi.db.query("api::shop-sync.shop-sync").updateMany({ where: { id, state: { $ne: "syncing" } }, data: { state: "syncing" } });
  if (count !== 1) return;
  await runSync(id);
  await strapi.db.query("api::shop-sync.shop-sync").update({ where: { id }, data: { state: "idle" } });
}`,
      languageOptions: javascript,
      errors: [
        {
          messageId: "missingRecovery",
          line: 2,
          data: { model: "shop-sync", field: "state", value: "syncing", claimLine: "2" },
        },
      ],
    },
  ],
});
