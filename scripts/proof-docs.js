// Copies the proof scenarios' programs (proof/<scenario>/flagged.js and fixed.js) into the rule doc pages, and
// writes the scenario table of docs/proof.md, so the docs show exactly the code that ran against real servers
// (test/proof/*.test.ts). Run after editing a proof program:
//
//   node scripts/proof-docs.js           rewrite the generated blocks
//   node scripts/proof-docs.js --check   exit 1 if any generated block differs (CI: npm run docs:check)
//
// Each generated block sits between `<!-- begin proof: <scenario> -->` and `<!-- end proof -->`; a page that
// has no such markers yet gets them appended before its first section after "## Examples".
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

/**
 * The scenarios, in docs/proof.md's order. `flagged` and `fixed` say what test/proof/<id>.test.ts asserts on
 * real servers; keep them in step with those tests.
 */
const scenarios = [
  {
    id: "crash-wedge",
    rule: "require-stale-recovery",
    question: "Q1",
    title: "Crash-wedge: a job claimed by a compare-and-set update, its worker killed (the first seed)",
    services: "PostgreSQL",
    fault: "SIGKILL mid-job",
    flagged:
      "The job stays GENERATING; every later claim is refused, before the stale threshold and on every retry after it.",
    fixed:
      "Before the threshold the claim is still refused (a dead worker cannot be told from a live one); after it, the read path " +
      "flips the job to FAILED and a retry claims and completes it. A slow job that keeps making progress is never " +
      "recovered; items left GENERATING after their job ended are recovered; a recovery that loses the race to a " +
      "finishing worker updates zero rows and the job stays COMPLETED.",
  },
  {
    id: "suggested-recovery",
    rule: "require-stale-recovery",
    /** The rule's second scenario: its heading says which. */
    heading: "the suggested recovery",
    question: "Q1",
    title:
      "The recovery the rule suggests, applied as the editor applies it: a render job with a heartbeat, its worker killed",
    services: "PostgreSQL",
    fault: "SIGKILL mid-job",
    flagged: "The job stays RENDERING; every later claim is refused, also past the stale threshold.",
    fixed:
      "fixed.js is flagged.js with the rule's suggestion applied, only its threshold tuned (checked byte for byte). Before the " +
      "threshold the suggested recovery frees nothing and the claim is refused; after it, the recovery gives the job back to " +
      "FAILED (the value the module's failure path writes) and a retry completes it. A slow render that keeps beating is " +
      "never freed, though it runs for more than twice the threshold.",
  },
  {
    id: "lock-row-sweep",
    rule: "require-stale-recovery",
    /** The rule's third scenario: its heading says which. */
    heading: "the suggested lock-row sweep",
    question: "Q1",
    title: "A cron lock row inserted under the job's name, its expiry pushed forward by the holder, the holder killed",
    services: "PostgreSQL (Knex)",
    fault: "SIGKILL mid-run",
    flagged: "The killed holder's row stays: every later run is skipped, also once its expiry has passed.",
    fixed:
      "A sweep deletes the rows whose expiry has passed: before the expiry it frees nothing and the next run is skipped; " +
      "after it, the row goes and the next run completes. A live holder slower than its lease keeps pushing its expiry " +
      "forward and no sweep takes its row. flagged.js with the rule's suggestion applied (`removeExpiredCronLocks()`) " +
      "does the same.",
  },
  {
    id: "lock-ttl",
    rule: "require-lock-ttl",
    question: "Q1",
    title: "A Redis lock taken with SETNX, its expiry set by a second command",
    services: "Redis",
    fault: "SIGKILL between acquire and expire",
    flagged:
      "The key is left with no TTL (PTTL -1); every later run is skipped, also after the TTL the code meant to set has passed.",
    fixed:
      "With SET NX PX the key expires after its TTL even when the holder is killed holding it; the next run proceeds. " +
      "flagged.js with the rule's suggestion applied (SETNX and PEXPIRE merged, the `=== 0` test rewritten) does the same.",
  },
  {
    id: "owner-release",
    rule: "owner-checked-release",
    question: "Q3",
    title: "A Redis lease released with a plain DEL",
    services: "Redis",
    fault: "SIGSTOP past the lease, then SIGCONT",
    flagged:
      "The resumed holder's DEL removes the new holder's lock, and a third worker gets in while the second still works.",
    fixed:
      "The compare-and-delete finds another value and deletes nothing; the third worker is turned away. flagged.js with " +
      "the rule's compare-and-delete suggestion applied does the same.",
  },
  {
    id: "stale-judge",
    rule: "progress-based-staleness",
    question: "Q2",
    title: "A sweeper of a render queue in Knex, judging dead workers by when the render started",
    services: "PostgreSQL",
    fault: "a render slower than the threshold; SIGKILL mid-render",
    flagged:
      "The sweeper hands a slow render whose worker is alive and beating to a second worker: the export is rendered twice, and the first worker's beat aborts it.",
    fixed:
      "Judged by heartbeat_at, the slow render keeps its worker and is rendered once; a worker killed mid-render stops " +
      "beating, its render is not handed back at once (dead cannot be told from slow yet) but is once the threshold has " +
      "passed, and the next worker renders it. flagged.js with the rule's suggestion applied (the age test renamed to the " +
      "heartbeat) does the same.",
  },
  {
    id: "lost-lease",
    rule: "heartbeat-abort",
    question: "Q2",
    title: "A heartbeat whose failure is caught and logged, the work going on",
    services: "PostgreSQL",
    fault: "SIGSTOP past the stale threshold, then SIGCONT",
    flagged:
      "The resumed worker's heartbeat matches no row; it logs that and writes every remaining part beside the worker the export was handed to.",
    fixed:
      "The heartbeat's failure aborts the export: the resumed worker finishes the part it was paused in and writes no other; " +
      "the new holder's export stands. flagged.js with the rule's suggestion applied (`controller.abort();` in the catch) " +
      "does the same.",
  },
  {
    id: "sweep-status",
    rule: "conditional-recovery",
    question: "Q3",
    title: "A sweeper that frees rows by the age of their heartbeat alone, a finished report among them",
    services: "PostgreSQL",
    fault: "a finished job's heartbeat grown old; SIGKILL mid-render",
    flagged:
      "A rendered report's heartbeat is as old as a dead worker's once the threshold has passed: the sweeper puts the DONE report back in the queue, and the next worker renders (and bills) it again.",
    fixed:
      "The sweeper's write requires status = 'RENDERING': the DONE report stays DONE and the next worker is turned away, " +
      "while a worker killed mid-render is still given back once the threshold has passed. flagged.js with the rule's " +
      "suggestion applied (the status added to the write's WHERE) does the same.",
  },
  {
    id: "check-then-act",
    rule: "atomic-claim",
    question: "Q3",
    title: "A claim checked in JavaScript and then written by id, two workers reading the report free at once",
    services: "PostgreSQL",
    fault: "SIGSTOP between the read and the claim, then SIGCONT",
    flagged:
      "The resumed worker claims the report the other holds and calls the render service too: the report is rendered twice, and the first worker's heartbeat, finding it taken, aborts its render.",
    fixed:
      "The claim's UPDATE requires status <> 'RENDERING' and a claim that changed no row returns \"busy\": the resumed worker " +
      "goes away and the report is rendered once. flagged.js with the rule's suggestion applied (the condition and the " +
      'check\'s own `return "busy"` on zero rows) does the same.',
  },
  {
    id: "fencing",
    rule: "require-fencing",
    question: "Q3",
    title: "A lease with a token, a worker paused past it (the second seed)",
    services: "PostgreSQL",
    fault: "SIGSTOP past the lease, then SIGCONT",
    flagged: "The new holder (token 2) writes its render; the resumed worker's late write overwrites it.",
    fixed:
      "The late write carries token 1 and matches zero rows: it is refused, and the new holder's render stands. flagged.js " +
      "with the rule's suggestion applied (the owner the claim stamped, `lease_owner = $3`, added to the WHERE) matches " +
      "zero rows too.",
  },
  {
    id: "in-process-guard",
    rule: "release-in-finally",
    question: "Q1",
    title: "A boolean guard in the process, one thrown error",
    services: "none (a long-running process)",
    fault: "a rejected await (the supplier's outage)",
    flagged: "The guard stays set: every later call in the same process is refused, until the process restarts.",
    fixed:
      "The guard is reset in finally: the next call proceeds. flagged.js with the rule's suggestion applied does the same.",
  },
];

function programBlock(scenario, shape) {
  const path = `proof/${scenario.id}/${shape}.js`;
  const code = readFileSync(`${root}${path}`, "utf8").trimEnd();
  return `\`\`\`js\n${code}\n\`\`\``;
}

/** The block a rule page gets for its scenario. */
function ruleBlock(scenario) {
  const where = scenario.services.startsWith("none")
    ? "in a real long-running process"
    : `against a real ${scenario.services}`;
  return [
    `<!-- begin proof: ${scenario.id} -->`,
    `## Proven on real servers${scenario.heading ? `: ${scenario.heading}` : ""}`,
    "",
    `The two programs below run in the test suite ${where}, with the fault a deployment meets (${scenario.fault}). ` +
      "The same test lints them: this rule reports the first and nothing reports the second. " +
      `The scenario step by step: [docs/proof.md](../proof.md#${scenario.id}).`,
    "",
    `### ❌ Incorrect: [\`proof/${scenario.id}/flagged.js\`](../../proof/${scenario.id}/flagged.js)`,
    "",
    `Observed: ${scenario.flagged}`,
    "",
    programBlock(scenario, "flagged"),
    "",
    `### ✅ Correct: [\`proof/${scenario.id}/fixed.js\`](../../proof/${scenario.id}/fixed.js)`,
    "",
    `Observed: ${scenario.fixed}`,
    "",
    programBlock(scenario, "fixed"),
    "<!-- end proof -->",
  ].join("\n");
}

function tableBlock() {
  const rows = scenarios.map(
    (s) =>
      `| [${s.id}](#${s.id}) | [\`locks/${s.rule}\`](rules/${s.rule}.md) (${s.question}) | ${s.services} | ${s.fault} | ${s.flagged} | ${s.fixed} |`,
  );
  return [
    "<!-- begin proof: table -->",
    "| scenario | rule | servers | fault | flagged shape (reported) | fixed shape (clean) |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "<!-- end proof -->",
  ].join("\n");
}

const blockPattern = (id) => new RegExp(`<!-- begin proof: ${id} -->[\\s\\S]*?<!-- end proof -->`);

function place(text, id, block, file) {
  if (blockPattern(id).test(text)) return text.replace(blockPattern(id), () => block);
  // A page that already shows another scenario: after its last block.
  const lastEnd = text.lastIndexOf("<!-- end proof -->");
  if (lastEnd >= 0 && id !== "table") {
    const at = lastEnd + "<!-- end proof -->".length;
    return `${text.slice(0, at)}\n\n${block}${text.slice(at)}`;
  }
  // First run on a page: put the block before the first "## " section after "## Examples".
  const examples = text.indexOf("\n## Examples");
  const next = examples < 0 ? -1 : text.indexOf("\n## ", examples + 1);
  if (next < 0) throw new Error(`${file}: no section after "## Examples" to put the proof block before`);
  return `${text.slice(0, next + 1)}${block}\n\n${text.slice(next + 1)}`;
}

const check = process.argv.includes("--check");
const stale = [];
const targets = [
  ...scenarios.map((s) => ({ file: `docs/rules/${s.rule}.md`, id: s.id, block: ruleBlock(s) })),
  { file: "docs/proof.md", id: "table", block: tableBlock() },
];
for (const { file, id, block } of targets) {
  const before = readFileSync(`${root}${file}`, "utf8");
  const after = place(before, id, block, file);
  if (after === before) continue;
  stale.push(file);
  if (!check) writeFileSync(`${root}${file}`, after);
}
if (check && stale.length > 0) {
  console.error(`proof blocks out of date in: ${stale.join(", ")}. Run: node scripts/proof-docs.js`);
  process.exit(1);
}
if (!check) console.log(stale.length ? `updated: ${stale.join(", ")}` : "proof blocks up to date");
