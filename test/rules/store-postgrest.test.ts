// PostgREST query builders (supabase-js) through the rules: a claim written as a chain of filters
// (`.from(t).update(v).eq(…).eq(…)`), a read then an update by id (check-then-act), a recovery whose age test is a
// filter link, a lock row taken by an insert whose error the caller leaves on, and filter strings (`or()`). The
// lookalikes stay quiet: a Knex chain (`where`), `Array.from`, a plain status transition, an insert whose error is
// only logged.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

const lock = (model: string, field: string, value: string) => ({ model, field, value });

/** A digest mailer: a conditional claim per digest (line 4, from queued or failed), and its heartbeat while sending. */
const CLAIM = `import { createClient } from "@supabase/supabase-js";
const supabase = createClient(process.env.SUPABASE_URL!, process.env.SUPABASE_KEY!);
export async function claimDigest(id: string) {
  const { data } = await supabase.from("digests").update({ status: "sending", touched_at: new Date().toISOString() }).eq("id", id).or("status.eq.queued,status.eq.failed").select("id");
  return (data ?? []).length === 1;
}
export async function touch(id: string) {
  await supabase.from("digests").update({ touched_at: new Date().toISOString() }).eq("id", id).eq("status", "sending");
}
`;

/** The mailer picking the next digest with a read and then marking it by id: the claim is line 5, the read line 4. */
const READ_THEN_MARK = `export async function nextDigest(db: SupabaseClient) {
  const { data: digest } = await db.from("digests").select("id").eq("status", "queued").limit(1).single();
  if (!digest) return null;
  await db
    .from("digests")
    .update({ status: "sending" })
    .eq("id", digest.id);
  return digest;
}
`;

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    {
      name: "the claim with a sweep of digests whose heartbeat stopped (the age in a filter link)",
      code:
        CLAIM +
        `export async function sweep() {
  const cutoff = new Date(Date.now() - 15 * 60_000).toISOString();
  await supabase.from("digests").update({ status: "queued" }).eq("status", "sending").lt("touched_at", cutoff);
}`,
    },
    {
      name: "a Knex chain rooted in from() is Knex's, with a recovery; Array.from is no table",
      code: `export async function claim(knex: Knex, id: number) {
  await knex.from("digests").where({ id }).whereNot("status", "sending").update({ status: "sending" });
  await knex.from("digests").where("status", "sending").where("touched_at", "<", knex.raw("now() - interval '15 minutes'")).update({ status: "queued" });
  return Array.from("abc").map((c) => c.toUpperCase());
}`,
    },
    {
      name: "a plain transition to published is no claim",
      code: `export async function publish(supabase: SupabaseClient, id: string) {
  await supabase.from("posts").update({ status: "published" }).eq("id", id);
}`,
    },
    {
      name: "an insert whose error is only logged takes nothing",
      code: `export async function remember(supabase: SupabaseClient, jobName: string) {
  const { error } = await supabase.from("cron_locks").insert({ job_name: jobName });
  if (error) console.error(error);
  await run(jobName);
}`,
    },
  ],
  invalid: [
    {
      name: "a conditional claim with nothing to move a dead mailer's digest back; the recovery on the same client",
      code: CLAIM,
      errors: [
        {
          messageId: "missingRecovery",
          line: 4,
          column: 26,
          data: lock("digests", "status", "sending"),
          suggestions: [
            {
              messageId: "addRecovery",
              data: {
                name: "recoverStaleDigests",
                value: "sending",
                back: '"queued"',
                timeField: "touched_at",
                threshold: "STALE_DIGESTS_SENDING_MS",
              },
              output: CLAIM.replace(
                "export async function touch",
                `
/** How long a digests row may stay sending without touched_at moving before its holder counts as dead. */
const STALE_DIGESTS_SENDING_MS = 15 * 60 * 1000;

/**
 * Gives digests rows left sending by a holder that died (SIGKILL, OOM, a deploy) back to queued, once
 * touched_at has not moved for STALE_DIGESTS_SENDING_MS. Run it from a scheduled sweeper, or before claiming.
 */
export async function recoverStaleDigests(): Promise<number> {
  const result = await supabase.from("digests").update({ status: "queued" }, { count: "exact" }).eq("status", "sending").lt("touched_at", new Date(Date.now() - STALE_DIGESTS_SENDING_MS).toISOString());
  return result.count ?? 0;
}
export async function touch`,
              ),
            },
          ],
        },
      ],
    },
    {
      name: "a lock row taken by an insert whose duplicate-key error the caller leaves on, never swept",
      code: `export async function withCronLock(supabase: SupabaseClient, jobName: string, fn: () => Promise<void>) {
  const { error } = await supabase.from("cron_locks").insert({ job_name: jobName, locked_at: new Date().toISOString() });
  if (error) {
    if (error.code === "23505") return false;
    throw error;
  }
  try {
    await fn();
  } finally {
    await supabase.from("cron_locks").delete().eq("job_name", jobName);
  }
  return true;
}`,
      errors: [{ messageId: "missingExpiry", line: 2, column: 27, data: { model: "cron_locks" } }],
    },
  ],
});

ruleTester.run("atomic-claim", atomicClaim, {
  valid: [{ name: "one conditional update chain (an or-string of the statuses it takes from)", code: CLAIM }],
  invalid: [
    {
      name: "select a queued digest, then update it by id",
      code: READ_THEN_MARK,
      errors: [
        {
          messageId: "checkThenAct",
          line: 4,
          column: 9,
          data: {
            model: "digests",
            field: "status",
            value: "sending",
            claimLine: "4",
            checkedWhere: "with a separate read",
            checkLine: "2",
          },
          suggestions: [
            {
              messageId: "addCondition",
              data: {
                model: "digests",
                field: "status",
                value: "sending",
                claimLine: "4",
                checkedWhere: "with a separate read",
                checkLine: "2",
              },
              output: READ_THEN_MARK.replace(
                '.update({ status: "sending" })',
                '.update({ status: "sending" }).neq("status", "sending")',
              ),
            },
          ],
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery", conditionalRecovery, {
  valid: [
    {
      name: "the sweep repeats the claimed status and the age in its one write",
      code:
        CLAIM +
        `export async function sweep(cutoff: string) {
  await supabase.from("digests").update({ status: "queued" }).eq("status", "sending").lt("touched_at", cutoff);
}`,
    },
  ],
  invalid: [
    {
      name: "a sweep that frees every sending digest, however fresh its heartbeat",
      code:
        CLAIM +
        `export async function failStuck() {
  await supabase.from("digests").update({ status: "failed" }).eq("status", "sending");
}`,
      errors: [
        {
          messageId: "missingTime",
          line: 11,
          column: 9,
          data: {
            ...lock("digests", "status", "sending"),
            claimLine: "4",
            target: "failed",
            rowFilter: "status",
            checkedWhere: "",
            checkLine: "",
          },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness", progressBasedStaleness, {
  valid: [],
  invalid: [
    {
      name: "a sweep judged by when the digest was created",
      code:
        CLAIM +
        `export async function sweep(cutoff: string) {
  await supabase.from("digests").update({ status: "queued" }).eq("status", "sending").lt("created_at", cutoff);
}`,
      errors: [
        {
          messageId: "startTimeRecovery",
          line: 11,
          column: 87,
          data: {
            ...lock("digests", "status", "sending"),
            claimLine: "4",
            stamped: "set once when work starts",
            timeField: "created_at",
            progressFields: "updatedAt, modifiedAt, heartbeatAt",
          },
        },
      ],
    },
  ],
});
