/**
 * owner-checked-release on leases the module knows only by their heartbeat: rows claimed where the module does not
 * show (an RPC, a SQL function, another module), renewed while the owner column names the holder, and released by
 * the row's identity alone.
 */
import rule from "../../rules/owner-checked-release.js";
import { javascript, ruleTester } from "../rule-tester.js";

function leaseRelease(
  line: number,
  data: { model: string; filter: string; owner: string; lease: string; heartbeatLine: number },
  operation = "write",
) {
  return {
    messageId: "leaseRelease" as const,
    line,
    data: { operation, ...data, heartbeatLine: String(data.heartbeatLine) },
  };
}

/** A job store on Prisma: the claim is a SQL function run elsewhere; this module renews and finishes. */
const PRISMA_JOBS = `import { prisma } from "./db";

export async function beat(jobId: string, workerId: string) {
  const res = await prisma.task.updateMany({
    where: { id: jobId, lockedBy: workerId },
    data: { leaseUntil: new Date(Date.now() + 30_000), updatedAt: new Date() },
  });
  return res.count === 1;
}

export async function finish(jobId: string) {
  await prisma.task.update({
    where: { id: jobId },
    data: { status: "DONE", lockedBy: null, leaseUntil: null },
  });
}

export async function giveBack(jobId: string, reason: string) {
  await prisma.task.update({
    where: { id: jobId },
    data: { status: "QUEUED", lastError: reason, lockedBy: null, leaseUntil: null },
  });
}
`;

/** The same store on Supabase, claimed through an RPC. */
const POSTGREST_JOBS = `import { createClient } from "@supabase/supabase-js";
const supabase = createClient(process.env.URL!, process.env.KEY!);

export async function claimNext(worker: string) {
  const { data } = await supabase.rpc("claim_render", { worker, seconds: 60 });
  return data;
}

export async function extend(render: { id: string; worker: string }) {
  await supabase
    .from("renders")
    .update({ lease_expires_at: new Date(Date.now() + 60_000).toISOString() })
    .eq("id", render.id)
    .eq("locked_by", render.worker);
}

export async function done(render: { id: string }) {
  await supabase.from("renders").update({ status: "done", locked_by: null, lease_expires_at: null }).eq("id", render.id);
}
`;

/** node-postgres with raw SQL: the heartbeat names the owner, the release does not. */
const SQL_JOBS = `export async function heartbeat(pool, id, worker) {
  await pool.query("UPDATE exports SET heartbeat_at = now() WHERE id = $1 AND locked_by = $2", [id, worker]);
}

export async function complete(pool, id) {
  await pool.query("UPDATE exports SET locked_by = NULL, heartbeat_at = NULL, state = 'finished' WHERE id = $1", [id]);
}
`;

ruleTester.run("owner-checked-release (leases known by their heartbeat)", rule, {
  valid: [
    // every release names the owner too: it frees only this holder's row
    PRISMA_JOBS.replaceAll("where: { id: jobId },", "where: { id: jobId, lockedBy: workerId },").replaceAll(
      "(jobId: string)",
      "(jobId: string, workerId: string)",
    ),
    PRISMA_JOBS.replace(
      "export async function giveBack(jobId: string, reason: string)",
      "export async function giveBack(jobId: string, reason: string, workerId: string)",
    )
      .replace(
        'where: { id: jobId },\n    data: { status: "DONE"',
        'where: { id: jobId, status: "RUNNING" },\n    data: { status: "DONE"',
      )
      .replace(
        'where: { id: jobId },\n    data: { status: "QUEUED"',
        'where: { id: jobId, lockedBy: workerId },\n    data: { status: "QUEUED"',
      ),
    // the heartbeat picks the row by id alone: nothing says the row has an owner that changes
    PRISMA_JOBS.replace("where: { id: jobId, lockedBy: workerId },", "where: { id: jobId },"),
    // an operator's cancel frees whatever holds the job, on purpose
    `import { prisma } from "./db";
export async function beat(jobId: string, workerId: string) {
  await prisma.task.updateMany({ where: { id: jobId, lockedBy: workerId }, data: { leaseUntil: new Date(Date.now() + 30_000) } });
}
export async function cancelJob(jobId: string) {
  await prisma.task.update({ where: { id: jobId }, data: { status: "CANCELLED", lockedBy: null, leaseUntil: null } });
}`,
    // a document its owner edits and hands over: an authorised edit is no renewal, a change of owner no release
    `import { prisma } from "./db";
export async function rename(id: string, ownerId: string, title: string) {
  await prisma.doc.update({ where: { id, ownerId }, data: { title, updatedAt: new Date() } });
}
export async function touch(id: string, ownerId: string) {
  await prisma.doc.updateMany({ where: { id, ownerId }, data: { updatedAt: new Date() } });
}
export async function disown(id: string) {
  await prisma.doc.update({ where: { id }, data: { ownerId: null } });
}`,
    // a lease the module renews but never releases by id: nothing to report
    SQL_JOBS.replace('WHERE id = $1", [id]);', 'WHERE id = $1 AND locked_by = $2", [id, worker]);').replace(
      "complete(pool, id)",
      "complete(pool, id, worker)",
    ),
  ],
  invalid: [
    {
      code: PRISMA_JOBS,
      errors: [
        leaseRelease(12, { model: "task", filter: "id", owner: "lockedBy", lease: "leaseUntil", heartbeatLine: 4 }),
        leaseRelease(19, { model: "task", filter: "id", owner: "lockedBy", lease: "leaseUntil", heartbeatLine: 4 }),
      ],
    },
    {
      code: POSTGREST_JOBS,
      errors: [
        leaseRelease(18, {
          model: "renders",
          filter: "id",
          owner: "locked_by",
          lease: "lease_expires_at",
          heartbeatLine: 10,
        }),
      ],
    },
    {
      code: SQL_JOBS,
      languageOptions: javascript,
      errors: [
        leaseRelease(6, {
          model: "exports",
          filter: "id",
          owner: "locked_by",
          lease: "heartbeat_at",
          heartbeatLine: 2,
        }),
      ],
    },
  ],
});
