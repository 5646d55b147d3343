// Where the plugin's time goes, in one process: `node bench/rule-times.js <job.json> <result.json>`.
//
// Each file is parsed once; then every setup lints the same parsed SourceCode, so parsing, scope analysis and
// traversal (the floor, the same for all) are paid once and the differences between setups are the rules' work.
// Setups take turns chunk by chunk, in a rotating order, so load on the machine hits them alike, and times are
// CPU times of this process, which do not grow while other processes hold the CPU.
//
// The plugin builds its facts once per file, in the `Program:exit` of the first `locks/*` rule, and hands them to
// each rule's callback in that rule's own `Program:exit`; ESLint's TIMING and `stats` show the building under the
// first rule. The "split" setup measures each part on its own: a marker rule before the inventory and a marker
// callback after each rule (Program:exit listeners run in the order rules were created) read the clock, so the
// differences are the building of the facts and each rule's own work.
//
// Some work is cached beyond one lint: raw SQL is parsed once per distinct text for the process, and ESLint caches
// scope lookups per node of a parsed file. So each chunk is first linted once, untimed for the setups, by
// configs.strict: its extra time over a warm strict run is reported as "first sight", and the timed setups all see
// warm caches. A real lint run pays both parts once per file.
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { setupConfig } from "./setups.js";

const [jobFile, resultFile] = process.argv.slice(2);
if (!jobFile || !resultFile) {
  console.error("usage: node bench/rule-times.js <job.json> <result.json>");
  process.exit(2);
}
/** @type {{ files: string[], eslint: "9" | "10", cwd: string, rounds: number, chunk: number }} */
const job = JSON.parse(readFileSync(jobFile, "utf8"));

const { Linter } = job.eslint === "9" ? await import("eslint-v9") : await import("eslint");
const { default: tsParser } = await import("@typescript-eslint/parser");
const { default: locks } = await import("../dist/src/index.js");
const { onLockFacts } = await import("../dist/src/rule-kit/inventory.js");

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// ---- the split setup: markers around the inventory and after each rule ----
const ruleIds = Object.keys(locks.configs.strict.rules); // "locks/<id>", in the order ESLint creates them
/** Per part (build, then each rule), CPU ms summed over files. */
const splitMs = { build: 0, ...Object.fromEntries(ruleIds.map((id) => [id, 0])) };
let marks = [];
const benchRules = {
  // Its Program:exit runs before the inventory's: where building the facts starts.
  begin: { meta: { type: "problem", schema: [] }, create: () => ({ "Program:exit": () => void (marks = [cpuNow()]) }) },
};
for (let i = 0; i <= ruleIds.length; i++) {
  benchRules[`mark${i}`] = {
    meta: { type: "problem", schema: [] },
    create: (context) =>
      onLockFacts(context, () => {
        marks.push(cpuNow());
        if (i === 0) splitMs.build += marks[1] - marks[0];
        else splitMs[ruleIds[i - 1]] += marks[i + 1] - marks[i];
      }),
  };
}
const splitRules = { "bench/begin": "error", "bench/mark0": "error" };
ruleIds.forEach((id, i) => Object.assign(splitRules, { [id]: "error", [`bench/mark${i + 1}`]: "error" }));
const floorConfig = await setupConfig("floor", tsParser);
const splitConfig = [...floorConfig, { plugins: { locks, bench: { rules: benchRules } }, rules: splitRules }];

const setups = ["floor", "listeners", "inventory", "split", "strict"];
const configs = { split: splitConfig };
for (const setup of setups) configs[setup] ??= await setupConfig(setup, tsParser);

// Each setup's configuration is built and validated once, as the ESLint class does for a run: handed a plain array,
// `Linter#verify` builds a config array and validates every rule's options again for each file, which charged each
// setup for its rule count (nine rules that do nothing measured +5 % of the floor that way, +0.1 % built once).
// ESLint exports no constructor for it, so its own module is loaded from the installed package.
const require = createRequire(import.meta.url);
const eslintRoot = dirname(require.resolve(`${job.eslint === "9" ? "eslint-v9" : "eslint"}/package.json`));
const { FlatConfigArray } = require(join(eslintRoot, "lib/config/flat-config-array.js"));
for (const setup of setups) {
  const built = new FlatConfigArray(configs[setup], { basePath: job.cwd });
  built.normalizeSync();
  configs[setup] = built;
}

const linter = new Linter({ configType: "flat", cwd: job.cwd });
const verifyOptions = (file) => ({ filename: file, allowInlineConfig: false });
const cpuMs = Object.fromEntries(setups.map((s) => [s, 0]));
let parseCpuMs = 0;
let firstSightCpuMs = 0;
const findings = {};
const fatal = [];

// Warm-up, not counted: every setup lints the first chunk once, so the JIT, the lazily loaded SQL parser and module
// caches are ready before anything is timed.
for (const file of job.files.slice(0, job.chunk)) {
  const text = readFileSync(file, "utf8");
  for (const setup of setups) linter.verify(text, configs[setup], verifyOptions(file));
}
for (const key of Object.keys(splitMs)) splitMs[key] = 0;

for (let start = 0, chunkIndex = 0; start < job.files.length; start += job.chunk, chunkIndex++) {
  const parsed = [];
  let t = cpuNow();
  for (const file of job.files.slice(start, start + job.chunk)) {
    const messages = linter.verify(readFileSync(file, "utf8"), configs.floor, verifyOptions(file));
    const bad = messages.find((m) => m.fatal);
    if (bad) fatal.push({ file, line: bad.line, message: bad.message });
    else parsed.push({ file, sourceCode: linter.getSourceCode() });
  }
  parseCpuMs += cpuNow() - t;

  // First sight: strict on cold caches; its excess over the timed (warm) strict rounds is the work cached per text or
  // per node.
  t = cpuNow();
  for (const { file, sourceCode } of parsed) {
    for (const m of linter.verify(sourceCode, configs.strict, verifyOptions(file)))
      findings[m.ruleId] = (findings[m.ruleId] ?? 0) + 1;
  }
  firstSightCpuMs += cpuNow() - t;

  for (let round = 0; round < job.rounds; round++) {
    const shift = (chunkIndex + round) % setups.length;
    for (const setup of [...setups.slice(shift), ...setups.slice(0, shift)]) {
      t = cpuNow();
      for (const { file, sourceCode } of parsed) linter.verify(sourceCode, configs[setup], verifyOptions(file));
      cpuMs[setup] += cpuNow() - t;
    }
  }
}

const perRound = (ms) => ms / job.rounds;
writeFileSync(
  resultFile,
  JSON.stringify({
    files: job.files.length,
    rounds: job.rounds,
    parseCpuMs,
    cpuMs: Object.fromEntries(Object.entries(cpuMs).map(([s, ms]) => [s, perRound(ms)])),
    splitMs: Object.fromEntries(Object.entries(splitMs).map(([s, ms]) => [s, perRound(ms)])),
    firstSightCpuMs: firstSightCpuMs - perRound(cpuMs.strict),
    findings,
    fatal,
  }),
);
