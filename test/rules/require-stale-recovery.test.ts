import rule from "../../rules/require-stale-recovery.js";
import { javascript, ruleTester } from "../rule-tester.js";

const missing = (line: number, column: number, data: Record<string, string>) => ({
  messageId: "missingRecovery" as const,
  line,
  column,
  data,
});
const jobGenerating = { model: "job", field: "status", value: "GENERATING", claimLine: "2" };

ruleTester.run("require-stale-recovery", rule, {
  valid: [
    // the seed's fixed module: conditional recovery on the read path, judged on updated_at
    `
    async function start(jobId) {
      const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
      if (claimed.count === 0) throw new Error("busy");
    }
    async function recover(jobId, staleThreshold) {
      await prisma.job.updateMany({
        where: { id: jobId, status: "GENERATING", updated_at: { lt: staleThreshold } },
        data: { status: "FAILED", error_message: "auto-recovered" },
      });
    }`,
  ],
  invalid: [
    {
      // the seed's module as first written: try/catch does not count
      code: `async function start(jobId) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
  if (claimed.count === 0) throw new Error("busy");
  try { await generate(jobId); await prisma.job.update({ where: { id: jobId }, data: { status: "COMPLETED" } }); }
  catch (e) { await prisma.job.update({ where: { id: jobId }, data: { status: "FAILED" } }); }
}`,
      errors: [missing(2, 25, jobGenerating)],
    },
    {
      code: `async function start(jobId) {
  const claimed = await prisma.job.updateMany({ where: { id: jobId, status: { not: "GENERATING" } }, data: { status: "GENERATING" } });
}`,
      languageOptions: javascript,
      errors: [missing(2, 25, jobGenerating)],
    },
  ],
});
