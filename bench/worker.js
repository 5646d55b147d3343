// One benchmark measurement in a fresh process: `node bench/worker.js <job.json> <result.json>`.
// The job names a setup (floor, listeners, inventory, strict, recommended, reference, rule:<id>), the files, the
// ESLint major and whether to collect ESLint's per-rule `stats`. The result holds times, memory and findings.
// scripts/bench.js starts one of these per run so that every setup pays the same module loading and starts from
// the same empty heap; a run never sees the JIT or the caches a previous one warmed.
import { readFileSync, writeFileSync } from "node:fs";
import { performance, PerformanceObserver } from "node:perf_hooks";
import { setupConfig } from "./setups.js";

const started = performance.now();
let gcMs = 0;
let gcCount = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcMs += entry.duration;
    gcCount++;
  }
});
gcObserver.observe({ entryTypes: ["gc"] });

const [jobFile, resultFile] = process.argv.slice(2);
if (!jobFile || !resultFile) {
  console.error("usage: node bench/worker.js <job.json> <result.json>");
  process.exit(2);
}
/** @type {{ setup: string, files: string[], eslint: "9" | "10", stats: boolean, cwd: string }} */
const job = JSON.parse(readFileSync(jobFile, "utf8"));

const { ESLint } = job.eslint === "9" ? await import("eslint-v9") : await import("eslint");
const { default: tsParser } = await import("@typescript-eslint/parser");
const eslintLoaded = performance.now();

const config = await setupConfig(job.setup, tsParser);
const configLoaded = performance.now();

const eslint = new ESLint({
  cwd: job.cwd,
  overrideConfigFile: true,
  overrideConfig: config,
  // Corpus files may carry eslint comments (`/* eslint no-foo: "error" */` would turn a rule on in the floor), so
  // inline config is off for every setup.
  allowInlineConfig: false,
  cache: false,
  stats: job.stats,
});
const results = await eslint.lintFiles(job.files);
const linted = performance.now();

const findings = {};
const fatal = [];
const ruleMs = {};
let parseMs = 0;
let statsTotalMs = 0;
for (const result of results) {
  for (const m of result.messages) {
    if (m.fatal) fatal.push({ file: result.filePath, line: m.line, message: m.message });
    else findings[m.ruleId ?? "?"] = (findings[m.ruleId ?? "?"] ?? 0) + 1;
  }
  for (const pass of result.stats?.times.passes ?? []) {
    parseMs += pass.parse.total;
    statsTotalMs += pass.total;
    for (const [rule, t] of Object.entries(pass.rules ?? {})) ruleMs[rule] = (ruleMs[rule] ?? 0) + t.total;
  }
}
gcObserver.disconnect();

const usage = process.resourceUsage();
writeFileSync(
  resultFile,
  JSON.stringify({
    setup: job.setup,
    eslint: job.eslint,
    stats: job.stats,
    files: results.length,
    // From the worker's first line (after Node's own start-up) to the end of the lint: what `eslint` costs a user.
    wallMs: linted - started,
    eslintLoadMs: eslintLoaded - started,
    configLoadMs: configLoaded - eslintLoaded,
    lintMs: linted - configLoaded,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    gcMs,
    gcCount,
    maxRssMb: usage.maxRSS / 1024,
    findings,
    fatal,
    ...(job.stats ? { parseMs, statsTotalMs, ruleMs } : {}),
  }),
);
