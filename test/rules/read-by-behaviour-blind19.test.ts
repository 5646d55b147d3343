// Real code of blind-19 (issue 35) and of the property generators' new variants, read by what it does, in our words:
// - a status written only by the first caller that finds the row in its start state, with the work after the `if`
//   run by every caller (`if (c.status === "SCHEDULED") await update({ status: "RUNNING" })`, then the batch), is a
//   first touch: nobody is turned away, so nothing is held and nothing is claimed;
// - a conditional claim continued with `.then(() => work())` leaves its outcome unread as `await write; work()` does;
// - a hole of a PostgREST filter string whose value is known where the module is read (a constant, an `as const`
//   member) is that value; a hole filled at run time stays unknown;
// - a browser launched once and shared by every request (`browserPromise = puppeteer.launch()`) is a resource the
//   service depends on, as a connection is: a memo that keeps its rejection wedges every later request;
// - a helper the module calls from its heartbeat timer and whose false result it answers with an abort is, by the
//   module's own account, the lease's renewal: a catch that only logs its rejection lets the work run past the lease.
import atomicClaim from "../../rules/atomic-claim.js";
import heartbeatAbort from "../../rules/heartbeat-abort.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A campaign sender run once per batch; `gate` is how the batch treats the campaign's state before it sends. */
const CAMPAIGN = (gate: string) => `import { db } from "./db";
import { sendBatch } from "./mailer";

export async function processCampaignBatch(campaignId: string) {
  const campaign = await db.campaign.findUnique({ where: { id: campaignId } });
  if (!campaign || campaign.status === "PAUSED") return;
${gate}
  const contacts = await db.contact.findMany({ where: { bookId: campaign.bookId }, take: 500 });
  await sendBatch(campaign, contacts);
}
`;

const EXIT_BEFORE = (filter: string) => `  if (campaign.status !== "SCHEDULED") return;
  await db.campaign.update({ where: { ${filter} }, data: { status: "RUNNING" } });
`;

const WORK_INSIDE = (filter: string) => `  if (campaign.status === "SCHEDULED") {
    await db.campaign.update({ where: { ${filter} }, data: { status: "RUNNING" } });
    await sendBatch(campaign, []);
    return;
  }
`;

/**
 * The check-then-act finding of a gate that turns the caller away, and its suggestion: the write made to repeat the
 * check, so that of two batches that read SCHEDULED the second matches nothing.
 */
const checkedGate = (gate: (filter: string) => string) => ({
  code: CAMPAIGN(gate("id: campaignId")),
  errors: [
    {
      messageId: "checkThenAct" as const,
      line: 8,
      data: { model: "campaign", field: "status", value: "RUNNING", checkedWhere: "in JavaScript", checkLine: "7" },
      suggestions: [
        { messageId: "requireValue" as const, output: CAMPAIGN(gate('id: campaignId, status: "SCHEDULED"')) },
      ],
    },
  ],
});

const FIRST_TOUCH = `  if (campaign.status === "SCHEDULED") {
    await db.campaign.update({ where: { id: campaignId }, data: { status: "RUNNING" } });
  }
`;

/** A render started by a compare-and-set, continued in a \`.then\` callback. */
const THEN_CLAIM = (callback: string) => `import { db } from "./db";
import { renderVideo } from "./render";

export function startRender(id: string) {
  return db.render
    .updateMany({ where: { id, status: { not: "RENDERING" } }, data: { status: "RENDERING" } })
    .then(${callback});
}
`;

ruleTester.run("atomic-claim (first touch, claims continued with .then)", atomicClaim, {
  valid: [
    // Every batch sends, the one that found the campaign RUNNING already too: a progress mark, not a lock.
    { code: CAMPAIGN(FIRST_TOUCH) },
    // The same mark with an else that only logs: still nobody turned away.
    {
      code: CAMPAIGN(`  if (campaign.status === "SCHEDULED") {
    await db.campaign.update({ where: { id: campaignId }, data: { status: "RUNNING" } });
  } else {
    console.info("campaign already running", campaignId);
  }
`),
    },
    // The outcome read in the callback: a caller whose write matched no row stops there.
    { code: THEN_CLAIM(`(r) => (r.count === 1 ? renderVideo(id) : undefined)`) },
  ],
  invalid: [
    // A caller that finds the campaign anywhere but SCHEDULED is turned away: the check guards the work, and two
    // batches that read together both take it.
    checkedGate(EXIT_BEFORE),
    // The work inside the branch that writes: only the caller that found SCHEDULED sends.
    checkedGate(WORK_INSIDE),
    {
      code: THEN_CLAIM(`() => renderVideo(id)`),
      errors: [
        {
          messageId: "unreadClaim",
          line: 5,
          data: {
            model: "render",
            field: "status",
            value: "RENDERING",
            how: "nothing reads whether it changed a row (its result is not kept)",
            workLine: "7",
            fix: "Go on only when the write changed a row: test its count of changed rows",
          },
        },
      ],
    },
    {
      code: THEN_CLAIM(`(result) => {
      console.info("render", id);
      return renderVideo(id);
    }`),
      errors: [
        {
          messageId: "unreadClaim",
          line: 5,
          data: {
            model: "render",
            field: "status",
            value: "RENDERING",
            how: "nothing reads whether it changed a row (`result` is never read)",
            workLine: "8",
            fix: "Go on only when the write changed a row: test its count of changed rows",
          },
        },
      ],
    },
  ],
});

/** An export claimed through PostgREST from the states an \`or\` filter string names. */
const EXPORT_CLAIM = (signature: string, states: string) => `import { createClient } from "@supabase/supabase-js";
import { exportRows } from "./export";

const supabase = createClient("u", "k");
const Status = { Queued: "queued", Failed: "failed", Exporting: "exporting" } as const;

export async function claimExport(${signature}) {
  const { data } = await supabase
    .from("exports")
    .update({ status: Status.Exporting })
    .eq("id", id)
    .or(\`${states}\`)
    .select("id");
  if (!data || data.length === 0) return false;
  await exportRows(id);
  return true;
}
`;

ruleTester.run("require-stale-recovery (PostgREST filter strings with constant holes)", requireStaleRecovery, {
  valid: [
    // A state handed in at run time: what the filter admits is unknown, so the write is no claim we can name.
    { code: EXPORT_CLAIM("id: string, from: string", "status.eq.${from}") },
  ],
  invalid: [
    {
      code: EXPORT_CLAIM("id: string", "status.eq.${Status.Queued},status.eq.${Status.Failed}"),
      errors: [
        {
          messageId: "missingRecovery",
          line: 8,
          data: { model: "exports", field: "status", value: "exporting" },
        },
      ],
    },
  ],
});

/** A headless browser shared by every PDF route, launched by the first request that needs it. */
const BROWSER = (launch: string) => `import puppeteer from "puppeteer";

let browserPromise: ReturnType<typeof puppeteer.launch> | null = null;

export async function getBrowser() {
  if (!browserPromise) {
    browserPromise = ${launch};
  }
  return browserPromise;
}
`;

ruleTester.run("release-in-finally (a launched browser kept by a promise memo)", releaseInFinally, {
  valid: [
    // A failed launch empties the slot, so the next request launches again.
    {
      code: BROWSER(`puppeteer.launch({ headless: true }).catch((error) => {
      browserPromise = null;
      throw error;
    })`),
    },
  ],
  invalid: [
    // Every later request depends on the browser as on a connection: a launch that failed once is handed out for good.
    {
      code: BROWSER(`puppeteer.launch({ headless: true })`),
      errors: [
        {
          messageId: "memoKeepsRejection",
          line: 7,
          data: { slot: "browserPromise" },
          suggestions: [
            {
              messageId: "clearOnRejection",
              data: { slot: "browserPromise" },
              output: BROWSER(`puppeteer.launch({ headless: true }).catch((error) => {
      browserPromise = null;
      throw error;
    })`),
            },
          ],
        },
      ],
    },
  ],
});

/** A job runner's heartbeat loop that renews its lease through a helper of another module. */
const LEASE_LOOP = (
  onError: string,
  call = "renewJobLease(jobId, workerId)",
) => `import { renewJobLease } from "./leases";

export function startHeartbeat(jobId: string, workerId: string) {
  const controller = new AbortController();
  const tick = async () => {
    try {
      const ok = await ${call};
      if (!ok) {
        controller.abort("lease lost");
        return;
      }
    } catch (error) {
${onError}
    }
  };
  const timer = setInterval(tick, 10_000);
  return { signal: controller.signal, stop: () => clearInterval(timer) };
}
`;

ruleTester.run("heartbeat-abort (a renewal the module declares by aborting on its refusal)", heartbeatAbort, {
  valid: [
    // The rejection stops the work as the refusal does.
    { code: LEASE_LOOP(`      controller.abort(error);`) },
    // A reader named after a heartbeat record is no renewal, whatever its result leads to.
    {
      code: LEASE_LOOP(
        `      console.warn("heartbeat read failed", error);`,
        "getLastHeartbeat(jobId, workerId)",
      ).replace("import { renewJobLease }", "import { getLastHeartbeat }"),
    },
    // A request handler that renews once for a remote runner: the work it would stop is not in this process.
    {
      code: `import { renewJobLease } from "./leases";

export async function heartbeatRoute(req: { params: { id: string }; body: { worker: string } }, res: { json(v: unknown): void }) {
  try {
    const ok = await renewJobLease(req.params.id, req.body.worker);
    if (!ok) throw new Error("lease lost");
    res.json({ ok: true });
  } catch (error) {
    res.json({ ok: false, error: String(error) });
  }
}
`,
    },
  ],
  invalid: [
    // A refusal aborts the work, a rejection (the database unreachable) only logs: the work runs on past its lease.
    {
      code: LEASE_LOOP(`      console.error("heartbeat failed, retrying on the next tick", error);`),
      errors: [
        {
          messageId: "swallowed",
          line: 7,
          data: {
            lock: "the lease",
            where: "renewed through `renewJobLease`, whose false result this module already takes for a lost lease",
            handlerLine: "12",
          },
          suggestions: [
            {
              messageId: "stopWork",
              data: { statement: "controller.abort();" },
              output: LEASE_LOOP(`      controller.abort();
      console.error("heartbeat failed, retrying on the next tick", error);`),
            },
          ],
        },
      ],
    },
  ],
});
