// Real code of blind-24 (issue 35), read by what it does, in our words:
// - `id = ANY(SELECT id … )` picks rows as `id IN (SELECT id …)` does: a reset written that way is the claim's
//   recovery, with the subquery's state and age;
// - a holder that keeps its row locked while it works (`SELECT … FOR UPDATE` in a transaction of the claiming
//   function, after the claim) against recoveries that all skip locked rows (`FOR UPDATE SKIP LOCKED` in their row
//   picker) is told alive by the lock: no recovery takes a live holder's row, whatever age it judges, and the
//   holder's writes under that lock are its own;
// - a promisified Redis client's `getAsync`, `watchAsync` (bluebird's `promisifyAll`, which the callback-era client's
//   documentation recommended) are GET and WATCH: a release made of WATCH, GET, compare, MULTI DEL EXEC is an
//   owner-checked delete, and the same without WATCH a GET-compare-DEL race.
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireFencing from "../../rules/require-fencing.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";

/** Exports taken by one worker at a time on node-postgres; a reset gives stalled ones back. */
const EXPORTS = `import { Pool, type PoolClient } from "pg";

const pool = new Pool();

export async function resetStalled(maxAgeSeconds: number) {
  const { rows } = await pool.query(
    \`UPDATE exports SET state = 'queued', started_at = NULL
      WHERE id = ANY(SELECT id FROM exports
                      WHERE state = 'processing' AND started_at < now() - ($1 * interval '1 second')
                      FOR UPDATE SKIP LOCKED)
      RETURNING id\`,
    [maxAgeSeconds],
  );
  return rows.map((r) => r.id);
}

export async function takeAndRun(run: (id: string) => Promise<void>) {
  const { rows } = await pool.query(
    \`UPDATE exports SET state = 'processing', started_at = now()
      WHERE id = (SELECT id FROM exports WHERE state = 'queued' ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING id\`,
  );
  if (rows.length === 0) return false;
  const id = rows[0].id;
  await inTransaction(async (client) => {
    await client.query("SELECT * FROM exports WHERE id = $1 FOR UPDATE", [id]);
    await run(id);
    await client.query("UPDATE exports SET state = 'done' WHERE id = $1", [id]);
  });
  return true;
}

async function inTransaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}
`;

/** The same reset without SKIP LOCKED: it takes a live holder's row once its start is old enough. */
const BLOCKING_RESET = EXPORTS.replace("                      FOR UPDATE SKIP LOCKED)", "                      )");

const line = (code: string, text: string) => code.split("\n").findIndex((l) => l.includes(text)) + 1;

ruleTester.run("require-stale-recovery (a reset that picks rows with = ANY(SELECT …))", requireStaleRecovery, {
  valid: [{ code: EXPORTS }, { code: BLOCKING_RESET }],
  invalid: [],
});

ruleTester.run("progress-based-staleness (a holder told alive by its row lock)", progressBasedStaleness, {
  valid: [{ code: EXPORTS }],
  invalid: [
    {
      code: BLOCKING_RESET,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: line(BLOCKING_RESET, "const { rows } = await pool.query("),
          data: {
            model: "exports",
            field: "state",
            value: "processing",
            claimLine: "18",
            timeField: "started_at",
            stamped: "set once when work starts",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-fencing (a holder's write under its own row lock)", requireFencing, {
  valid: [{ code: EXPORTS }],
  invalid: [
    {
      code: BLOCKING_RESET,
      errors: [
        {
          messageId: "unfencedWrite",
          line: line(BLOCKING_RESET, "UPDATE exports SET state = 'done'"),
          data: { model: "exports", target: "done", field: "state", value: "processing", claimLine: "18" },
          suggestions: [
            {
              messageId: "addFence",
              data: { field: "state", value: "processing" },
              output: BLOCKING_RESET.replace(
                "UPDATE exports SET state = 'done' WHERE id = $1",
                "UPDATE exports SET state = 'done' WHERE state = 'processing' AND id = $1",
              ),
            },
          ],
        },
      ],
    },
  ],
});

/** A build lock on the callback-era redis client, promisified with bluebird; released with WATCH and MULTI. */
const BUILD_LOCK = `const redis = require("redis");
const bluebird = require("bluebird");

bluebird.promisifyAll(redis.RedisClient.prototype);
bluebird.promisifyAll(redis.Multi.prototype);

const client = redis.createClient();

async function takeBuild(buildId, workerId) {
  const ok = await client.setAsync(\`build-lock:\${buildId}\`, workerId, "NX", "PX", 60000);
  return ok === "OK";
}

async function releaseBuild(buildId, workerId) {
  const key = \`build-lock:\${buildId}\`;
  await client.watchAsync(key);
  const holder = await client.getAsync(key);
  if (holder !== workerId) {
    await client.unwatchAsync();
    return false;
  }
  await client.multi().del(key).execAsync();
  return true;
}

module.exports = { takeBuild, releaseBuild };
`;
const UNWATCHED = BUILD_LOCK.replace("  await client.watchAsync(key);\n", "");

ruleTester.run("owner-checked-release (a promisified client's WATCH … MULTI DEL EXEC)", ownerCheckedRelease, {
  valid: [{ code: BUILD_LOCK, languageOptions: javascript }],
  invalid: [
    {
      code: UNWATCHED,
      languageOptions: javascript,
      errors: [
        {
          messageId: "getCompareDelete",
          line: line(UNWATCHED, "await client.multi().del(key).execAsync();"),
          data: { key: '"build-lock:*"', getLine: String(line(UNWATCHED, "await client.getAsync(key);")) },
        },
      ],
    },
  ],
});
