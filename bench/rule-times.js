// Per-rule times in one process: `node bench/rule-times.js <job.json> <result.json>`.
// Each file is parsed once; then every setup (the floor, the plugin's listeners, its shared inventory, each rule
// alone, configs.strict) lints the same parsed SourceCode, so parsing, scope analysis and traversal (the floor,
// identical for all) are paid once and the differences between setups are the rules' own work. Setups take turns
// file chunk by file chunk, in a rotating order, so load on the machine hits them alike.
//
// Rule time is measured as ESLint's TIMING and `stats` measure it: the time spent in the rule's `create` and in each
// of its listeners. (ESLint's Linter keeps stats only in verifyAndFix, which cannot take a parsed SourceCode, so the
// listeners are wrapped here the same way.) Because the plugin builds its facts once per file, inside the first
// `locks/*` rule's `Program:exit`, the whole plugin's work shows under whichever rule runs first; so each rule is also
// measured alone, and its own cost is that minus the shared inventory.
import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { pluginRuleIds, setupConfig } from "./setups.js";

const [jobFile, resultFile] = process.argv.slice(2);
if (!jobFile || !resultFile) {
  console.error("usage: node bench/rule-times.js <job.json> <result.json>");
  process.exit(2);
}
/** @type {{ files: string[], eslint: "9" | "10", cwd: string, rounds: number, chunk: number }} */
const job = JSON.parse(readFileSync(jobFile, "utf8"));

const { Linter } = job.eslint === "9" ? await import("eslint-v9") : await import("eslint");
const { default: tsParser } = await import("@typescript-eslint/parser");

/** Rule time per setup and rule id, summed over files: [create + listeners]. */
const ruleMs = {};
function timed(setup, ruleId, rule) {
  const sink = (ruleMs[setup] ??= {});
  sink[ruleId] ??= 0;
  const wrap = (fn) => function timedListener(...args) {
    const t = performance.now();
    try {
      return fn.apply(this, args);
    } finally {
      sink[ruleId] += performance.now() - t;
    }
  };
  return {
    ...rule,
    create(context) {
      const t = performance.now();
      const listeners = rule.create(context);
      sink[ruleId] += performance.now() - t;
      return Object.fromEntries(Object.entries(listeners).map(([k, fn]) => [k, typeof fn === "function" ? wrap(fn) : fn]));
    },
  };
}

/** The setup's config with every plugin rule wrapped for timing. */
function timedConfig(setup, config) {
  return config.map((entry) => {
    if (!entry.plugins) return entry;
    const plugins = {};
    for (const [ns, plugin] of Object.entries(entry.plugins)) {
      const rules = Object.fromEntries(Object.entries(plugin.rules ?? {}).map(([id, rule]) => [id, timed(setup, `${ns}/${id}`, rule)]));
      plugins[ns] = { ...plugin, rules };
    }
    return { ...entry, plugins };
  });
}

const ruleIds = await pluginRuleIds();
const setups = ["floor", "listeners", "inventory", ...ruleIds.map((id) => `rule:${id}`), "strict"];
const configs = {};
for (const setup of setups) configs[setup] = timedConfig(setup, await setupConfig(setup, tsParser));

const linter = new Linter({ configType: "flat", cwd: job.cwd });
const wallMs = Object.fromEntries(setups.map((s) => [s, 0]));
// CPU time of this process while a setup lints: unlike wall time, it does not grow when other processes take the CPU.
const cpuMs = Object.fromEntries(setups.map((s) => [s, 0]));
const findings = {};
const fatal = [];
let parseMs = 0;
let parseCpuMs = 0;

// Warm-up, not counted: every setup lints the first files once, so the JIT, the lazily loaded SQL parser and the
// plugin's module-level caches are ready before any setup is timed.
for (const file of job.files.slice(0, job.chunk)) {
  const text = readFileSync(file, "utf8");
  for (const setup of setups) linter.verify(text, configs[setup], { filename: file, allowInlineConfig: false });
}
for (const setup of setups) for (const id of Object.keys(ruleMs[setup] ?? {})) ruleMs[setup][id] = 0;

for (let start = 0, chunkIndex = 0; start < job.files.length; start += job.chunk, chunkIndex++) {
  const parsed = [];
  for (const file of job.files.slice(start, start + job.chunk)) {
    const text = readFileSync(file, "utf8");
    const t = performance.now();
    const cpu = process.cpuUsage();
    const messages = linter.verify(text, configs.floor, { filename: file, allowInlineConfig: false });
    parseMs += performance.now() - t;
    const used = process.cpuUsage(cpu);
    parseCpuMs += (used.user + used.system) / 1000;
    const bad = messages.find((m) => m.fatal);
    if (bad) fatal.push({ file, line: bad.line, message: bad.message });
    else parsed.push({ file, sourceCode: linter.getSourceCode() });
  }
  for (let round = 0; round < job.rounds; round++) {
    const shift = (chunkIndex + round) % setups.length;
    for (const setup of [...setups.slice(shift), ...setups.slice(0, shift)]) {
      const t = performance.now();
      const cpu = process.cpuUsage();
      for (const { file, sourceCode } of parsed) {
        const messages = linter.verify(sourceCode, configs[setup], { filename: file, allowInlineConfig: false });
        if (round === 0) for (const m of messages) findings[setup] = (findings[setup] ?? 0) + (m.fatal ? 0 : 1);
      }
      wallMs[setup] += performance.now() - t;
      const used = process.cpuUsage(cpu);
      cpuMs[setup] += (used.user + used.system) / 1000;
    }
  }
}

const perRound = (ms) => ms / job.rounds;
writeFileSync(resultFile, JSON.stringify({
  files: job.files.length,
  rounds: job.rounds,
  parseMs,
  parseCpuMs,
  cpuMs: Object.fromEntries(Object.entries(cpuMs).map(([s, ms]) => [s, perRound(ms)])),
  wallMs: Object.fromEntries(Object.entries(wallMs).map(([s, ms]) => [s, perRound(ms)])),
  ruleMs: Object.fromEntries(Object.entries(ruleMs).map(([s, rules]) =>
    [s, Object.fromEntries(Object.entries(rules).map(([id, ms]) => [id, perRound(ms)]))])),
  findings,
  fatal,
}));
