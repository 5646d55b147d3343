// DynamoDB through the database rules (issue 35, item 1): requests are read from what their parameters say, a
// `TableName`, a `Key`, an `UpdateExpression` or an `Item`, and a `ConditionExpression` parsed with its placeholders,
// whether they are sent as v3 commands or through the clients' per-request methods. Lookalikes that stay quiet: an
// idempotency key put once with an expiry attribute, a one-way compare-and-set (`isPaid`), an ORM's `update` that
// names no table, and a `Map`'s `get`/`set` in a module that mentions locks.
import atomicClaim from "../../rules/atomic-claim.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";

const HEAD = `import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, UpdateCommand, PutCommand, DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));
`;

/** An export marked as building by a conditional update (line 5), finished after; no way back for a dead builder. */
const BUILDING = `${HEAD}export async function buildExport(exportId: string) {
  await ddb.send(
    new UpdateCommand({
      TableName: "exports",
      Key: { exportId },
      UpdateExpression: "SET #st = :building, touchedAt = :now",
      ConditionExpression: "#st <> :building",
      ExpressionAttributeNames: { "#st": "state" },
      ExpressionAttributeValues: { ":building": "BUILDING", ":now": Date.now() },
    }),
  );
  await writeArchive(exportId);
  await ddb.send(
    new UpdateCommand({
      TableName: "exports",
      Key: { exportId },
      UpdateExpression: "SET #st = :ready",
      ExpressionAttributeNames: { "#st": "state" },
      ExpressionAttributeValues: { ":ready": "READY" },
    }),
  );
}
`;

/** The sweep that gives stalled exports back: scanned by state and age, each moved only if still stalled. */
const SWEEP = `export async function sweepExports() {
  const cutoff = Date.now() - 10 * 60 * 1000;
  const { Items = [] } = await ddb.send(
    new ScanCommand({
      TableName: "exports",
      FilterExpression: "#st = :building AND touchedAt < :cutoff",
      ExpressionAttributeNames: { "#st": "state" },
      ExpressionAttributeValues: { ":building": "BUILDING", ":cutoff": cutoff },
    }),
  );
  for (const item of Items) {
    await ddb.send(
      new UpdateCommand({
        TableName: "exports",
        Key: { exportId: item.exportId },
        UpdateExpression: "SET #st = :failed",
        ConditionExpression: "#st = :building AND touchedAt < :cutoff",
        ExpressionAttributeNames: { "#st": "state" },
        ExpressionAttributeValues: { ":failed": "FAILED", ":building": "BUILDING", ":cutoff": cutoff },
      }),
    );
  }
}
`;

/** The v2 DocumentClient: a boolean nobody names a lock, taken where false (line 5) and cleared after the work. */
const REBUILDING_V2 = `const AWS = require("aws-sdk");
const docs = new AWS.DynamoDB.DocumentClient();
const TABLE = process.env.CATALOG_TABLE;
async function rebuildCatalog(tenant) {
  await docs
    .update({
      TableName: TABLE,
      Key: { pk: tenant, sk: "catalog" },
      UpdateExpression: "SET isRebuilding = :yes",
      ConditionExpression: "attribute_not_exists(isRebuilding) OR isRebuilding = :no",
      ExpressionAttributeValues: { ":yes": true, ":no": false },
    })
    .promise();
  const entries = await collectEntries(tenant);
  await docs
    .update({
      TableName: TABLE,
      Key: { pk: tenant, sk: "catalog" },
      UpdateExpression: "SET isRebuilding = :no, entries = :entries",
      ExpressionAttributeValues: { ":no": false, ":entries": entries },
    })
    .promise();
}
module.exports = { rebuildCatalog };
`;

/** The low-level client: a lock item put under attribute_not_exists (line 5), deleted by its key in finally. */
const LOCK_ITEM = `import { DynamoDBClient, PutItemCommand, DeleteItemCommand } from "@aws-sdk/client-dynamodb";
const client = new DynamoDBClient({});
export async function exclusively(name: string, run: () => Promise<void>) {
  await client.send(
    new PutItemCommand({
      TableName: "mutexes",
      Item: { mutexName: { S: name }, holder: { S: String(process.pid) } },
      ConditionExpression: "attribute_not_exists(mutexName)",
    }),
  );
  try {
    await run();
  } finally {
    await client.send(new DeleteItemCommand({ TableName: "mutexes", Key: { mutexName: { S: name } } }));
  }
}
`;

/** A lease put when absent or expired; `release` decides who may delete it. */
const lease = (release: string) => `${HEAD}export async function takeLease(name: string, holder: string) {
  const now = Date.now();
  await ddb.send(
    new PutCommand({
      TableName: "leases",
      Item: { leaseName: name, holder, expiresAt: now + 30_000 },
      ConditionExpression: "attribute_not_exists(leaseName) OR expiresAt < :now",
      ExpressionAttributeValues: { ":now": now },
    }),
  );
}
export async function dropLease(name: string, holder: string) {
  await ddb.send(new DeleteCommand(${release}));
}
`;
const BY_KEY = `{ TableName: "leases", Key: { leaseName: name } }`;
const BY_HOLDER = `{
      TableName: "leases",
      Key: { leaseName: name },
      ConditionExpression: "#h = :me",
      ExpressionAttributeNames: { "#h": "holder" },
      ExpressionAttributeValues: { ":me": holder },
    }`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    { name: "a claim with its sweep beside it", code: BUILDING + SWEEP },
    { name: "a lease put when absent or expired: its expiry is the recovery", code: lease(BY_HOLDER) },
    {
      name: "an idempotency key put once, with an expiry attribute: nothing is held",
      code: `${HEAD}export async function firstDelivery(messageId: string) {
  try {
    await ddb.send(
      new PutCommand({
        TableName: "deliveries",
        Item: { messageId, expiresAt: Math.floor(Date.now() / 1000) + 86_400 },
        ConditionExpression: "attribute_not_exists(messageId)",
      }),
    );
    return true;
  } catch (error) {
    if ((error as Error).name === "ConditionalCheckFailedException") return false;
    throw error;
  }
}`,
    },
    {
      name: "a one-way compare-and-set: paid once, never given back",
      code: `${HEAD}export async function markPaid(orderId: string) {
  await ddb.send(
    new UpdateCommand({
      TableName: "orders",
      Key: { orderId },
      UpdateExpression: "SET isPaid = :yes",
      ConditionExpression: "isPaid = :no",
      ExpressionAttributeValues: { ":yes": true, ":no": false },
    }),
  );
  await sendReceipt(orderId);
}`,
    },
    {
      name: "an ORM's update names no table: not a DynamoDB request",
      code: `export async function start(repo: Repository<Job>, id: string) {
  await repo.update({ id, lockedBy: null }, { ConditionExpression: "x" });
  await run(id);
}`,
    },
    {
      name: "a Map memo in a module that mentions locks",
      code: `// block until the clock ticks
const memo = new Map<string, string>();
export function remember(key: string, value: string) {
  if (memo.get(key) === undefined) memo.set(key, value);
  return memo.get(key);
}`,
    },
  ],
  invalid: [
    {
      name: "a state claimed by a conditional UpdateCommand, nothing moves it back",
      code: BUILDING,
      errors: [
        { messageId: "missingRecovery", line: 5, data: { model: "exports", field: "state", value: "BUILDING" } },
      ],
    },
    {
      name: "the v2 DocumentClient: a flag held across the work, whatever it is called",
      code: REBUILDING_V2,
      languageOptions: javascript,
      errors: [
        { messageId: "missingRecovery", line: 5, data: { model: "TABLE", field: "isRebuilding", value: "true" } },
      ],
    },
    {
      name: "the low-level client: a lock item under a unique key, deleted only in finally",
      code: LOCK_ITEM,
      errors: [{ messageId: "missingExpiry", line: 4, data: { model: "mutexes" } }],
    },
  ],
});

/** The lease's release at line 16, by `filter` alone, after a take-over the put at line 6 allows. */
const releasedByKey = (filter: string) => ({
  messageId: "rowRelease" as const,
  line: 16,
  data: {
    operation: "delete",
    lock: "lock row in leases",
    acquireLine: "6",
    filter,
    expires: "is taken over once expiresAt has passed",
    expiryLine: "6",
  },
});

ruleTester.run("owner-checked-release", ownerCheckedRelease, {
  valid: [{ name: "the lease deleted only where this holder still holds it", code: lease(BY_HOLDER) }],
  invalid: [
    {
      // `lockId` names holders' tokens elsewhere; here it is the key the put is unique on, so it names the lock
      name: "a lock item keyed by lockId, deleted by that key alone",
      code: lease(BY_KEY).replaceAll("leaseName", "lockId"),
      errors: [releasedByKey("lockId")],
    },
    {
      name: "the lease deleted by its key alone, after it may have been taken over",
      code: lease(BY_KEY),
      errors: [releasedByKey("leaseName")],
    },
  ],
});

ruleTester.run("require-fencing", requireFencing, {
  valid: [
    {
      name: "the finishing write re-checks the claimed state",
      code: BUILDING.replace(
        '      UpdateExpression: "SET #st = :ready",\n',
        '      UpdateExpression: "SET #st = :ready",\n      ConditionExpression: "#st = :building",\n',
      ).replace('{ ":ready": "READY" }', '{ ":ready": "READY", ":building": "BUILDING" }'),
    },
  ],
  invalid: [
    {
      name: "a finishing write by key alone after a sweep may have handed the export on",
      code: BUILDING + SWEEP,
      errors: [
        {
          messageId: "unfencedWrite",
          line: 16,
          data: { model: "exports", field: "state", value: "BUILDING", claimLine: "5", target: "READY" },
        },
      ],
    },
  ],
});

/** A GetCommand, a check in JavaScript (line 6), then an unconditional UpdateCommand (line 7). */
const CHECK_THEN_SET = `${HEAD}import { GetCommand } from "@aws-sdk/lib-dynamodb";
export async function startImport(userId: string) {
  const { Item } = await ddb.send(new GetCommand({ TableName: "users", Key: { userId } }));
  if (Item?.importStatus === "importing") return false;
  await ddb.send(
    new UpdateCommand({
      TableName: "users",
      Key: { userId },
      UpdateExpression: "SET importStatus = :importing",
      ExpressionAttributeValues: { ":importing": "importing" },
    }),
  );
  await importEverything(userId);
  return true;
}
`;

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [{ name: "the condition is the check: one request", code: BUILDING }],
  invalid: [
    {
      name: "read, checked in JavaScript, then written without a condition: two callers both start",
      code: CHECK_THEN_SET,
      errors: [
        {
          messageId: "checkThenAct",
          line: 8,
          data: {
            model: "users",
            field: "importStatus",
            value: "importing",
            claimLine: "8",
            checkedWhere: "in JavaScript",
            checkLine: "7",
          },
        },
      ],
    },
  ],
});
