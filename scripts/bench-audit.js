// locks-audit against `tsc --noEmit` on the same generated project (scripts/gen-audit-project.js), each run as a
// fresh process, alternated so that machine noise falls on both alike; prints medians and their ratio, and each
// command's peak RSS. With `--cache`, also `locks-audit --cache` cold (no cache file), warm (nothing changed) and
// after one module changed, each compared with the cold run and checked to report what the plain audit reports.
//   npm run build && node scripts/bench-audit.js [--modules 1200] [--runs 5] [--dir /tmp/locks-audit-bench] [--cache]
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generateProject } from "./gen-audit-project.js";

const repo = fileURLToPath(new URL("..", import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const modules = Number(arg("--modules", "1200"));
const runs = Number(arg("--runs", "5"));
const dir = arg("--dir", join(tmpdir(), "locks-audit-bench"));
const withCache = process.argv.includes("--cache");
const withThreads = process.argv.includes("--concurrency");

const count = generateProject(dir, modules);
const commands = {
  "tsc --noEmit": [join(repo, "node_modules/typescript/bin/tsc"), ["--noEmit", "-p", "tsconfig.json"]],
  "locks-audit": [join(repo, "dist/src/audit/cli.js"), ["--format", "json", "--output", join(dir, "audit.json")]],
  "locks-audit --parse-all": [
    join(repo, "dist/src/audit/cli.js"),
    ["--format", "json", "--parse-all", "--output", join(dir, "audit-all.json")],
  ],
  "locks-audit --types": [
    join(repo, "dist/src/audit/cli.js"),
    ["--format", "json", "--types", "--output", join(dir, "audit-types.json")],
  ],
};
const cores = availableParallelism();
if (withThreads) {
  commands["locks-audit --concurrency auto"] = [
    commands["locks-audit"][0],
    ["--format", "json", "--concurrency", "auto", "--output", join(dir, "audit-auto.json")],
  ];
  commands[`locks-audit --concurrency ${cores}`] = [
    commands["locks-audit"][0],
    ["--format", "json", "--concurrency", String(cores), "--output", join(dir, "audit-threads.json")],
  ];
}

/** Peak RSS of each command, in MiB (the largest seen). */
const peakMb = {};
// Runs a script in a fresh Node process that reports its peak RSS on exit.
const PEAK = "process.on('exit', () => process.stderr.write('\\npeak-rss ' + process.resourceUsage().maxRSS + '\\n'));";

function run(name, script, args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(PEAK)}`, script, ...args],
    { cwd: dir, encoding: "utf8" },
  );
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // tsc exits 0 (the project type-checks); the audit exits 1 (the generated project has unanswered claims).
  if (r.status !== (name === "tsc --noEmit" ? 0 : 1))
    throw new Error(`${name} exited ${r.status}: ${r.stderr || r.stdout}`);
  const kb = Number(/peak-rss (\d+)/.exec(r.stderr)?.[1] ?? 0);
  peakMb[name] = Math.max(peakMb[name] ?? 0, kb / 1024);
  return ms;
}

function time(name) {
  const [script, args] = commands[name];
  return run(name, script, args);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const names = Object.keys(commands);
for (const name of names) time(name); // warm the file cache once for each
const samples = Object.fromEntries(names.map((n) => [n, []]));
for (let i = 0; i < runs; i++) {
  // Rotate the order so that no command always runs first or last.
  for (let j = 0; j < names.length; j++) {
    const name = names[(i + j) % names.length];
    samples[name].push(time(name));
  }
}
// Skipping lock-free modules must not change the result.
const [a, b] = ["audit.json", "audit-all.json"].map((f) => readFileSync(join(dir, f), "utf8"));
if (a !== b) throw new Error("locks-audit and locks-audit --parse-all disagree");
for (const f of withThreads ? ["audit-auto.json", "audit-threads.json"] : []) {
  if (readFileSync(join(dir, f), "utf8") !== a) throw new Error(`locks-audit and ${f} (worker threads) disagree`);
}
const tsc = median(samples["tsc --noEmit"]);
const audit = median(samples["locks-audit"]);
console.log(`project: ${count} modules in ${dir}, ${runs} runs each, alternated, wall time per fresh process`);
for (const [name, xs] of Object.entries(samples)) {
  console.log(
    `${name.padEnd(23)} median ${(median(xs) / 1000).toFixed(2)} s  (runs: ${xs.map((x) => (x / 1000).toFixed(2)).join(", ")})`,
  );
}
const ratio = (name) => (median(samples[name]) / tsc).toFixed(2);
console.log(
  `ratio audit / tsc: ${(audit / tsc).toFixed(2)}; --parse-all: ${ratio("locks-audit --parse-all")}; --types: ${ratio("locks-audit --types")}`,
);
if (withThreads) {
  const off = median(samples["locks-audit"]);
  for (const name of ["locks-audit --concurrency auto", `locks-audit --concurrency ${cores}`]) {
    console.log(`${name} / off (one thread): ${(median(samples[name]) / off).toFixed(2)} (${cores} cores)`);
  }
}
console.log(
  `peak RSS: ${Object.entries(peakMb)
    .map(([n, mb]) => `${n} ${Math.round(mb)} MiB`)
    .join("; ")}`,
);

if (withCache) {
  // The cache series: cold (no cache file), warm (nothing changed), one module changed (a comment appended to a
  // service, which moves no line), in turn, `runs` times; each report must be the plain audit's.
  const cli = join(repo, "dist/src/audit/cli.js");
  const cacheFile = join(dir, ".locks-audit-cache");
  const changed = join(dir, "src/job1/service.ts");
  const original = readFileSync(changed, "utf8");
  const series = { cold: [], warm: [], "one changed": [] };
  const check = (label) => {
    if (readFileSync(join(dir, "audit-cache.json"), "utf8") !== a)
      throw new Error(`locks-audit --cache (${label}) disagrees with locks-audit`);
  };
  const cached = ["--format", "json", "--cache", "--output", join(dir, "audit-cache.json")];
  try {
    for (let i = 0; i < runs; i++) {
      rmSync(cacheFile, { force: true });
      writeFileSync(changed, original);
      series.cold.push(run("locks-audit --cache (cold)", cli, cached));
      check("cold");
      series.warm.push(run("locks-audit --cache (warm)", cli, cached));
      check("warm");
      appendFileSync(changed, `\n// changed in run ${i}\n`);
      series["one changed"].push(run("locks-audit --cache (one changed)", cli, cached));
      check("one changed");
    }
  } finally {
    writeFileSync(changed, original);
  }
  const cold = median(series.cold);
  for (const [name, xs] of Object.entries(series)) {
    console.log(
      `locks-audit --cache, ${name.padEnd(11)} median ${(median(xs) / 1000).toFixed(2)} s  (runs: ${xs.map((x) => (x / 1000).toFixed(2)).join(", ")})  ${name === "cold" ? `${(cold / tsc).toFixed(2)} of tsc` : `${((100 * median(xs)) / cold).toFixed(1)} % of cold`}`,
    );
  }
  console.log(
    `peak RSS with --cache: ${["cold", "warm", "one changed"].map((n) => `${n} ${Math.round(peakMb[`locks-audit --cache (${n})`])} MiB`).join("; ")}`,
  );
}
