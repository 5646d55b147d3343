// `npm run bench`: how much eslint-plugin-locks adds to an ESLint run, on a corpus of real code (bench/corpus.json).
// docs/performance.md explains the setups, the floor and how to read the figures. `--help` lists the options.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { displayPath, listCorpus, repoRoot } from "../bench/corpus.js";
import { fetchAppCorpus } from "../bench/app-corpus.js";
import { DEFAULT_SETUPS, KNOWN_SETUPS, SETUP_DESCRIPTIONS } from "../bench/setups.js";

const HELP = `Usage: npm run bench -- [options]

  --runs N        timed runs of each setup, interleaved; medians are reported (default 5)
  --files N       lint an evenly spread sample of N corpus files (default: every file)
  --quick         a short run: --runs 1 --files 300 --rounds 1
  --setups a,b    setups to time (default ${DEFAULT_SETUPS.join(",")}; also ${KNOWN_SETUPS.filter((s) => !DEFAULT_SETUPS.includes(s)).join(", ")})
  --rounds N      rounds of the per-rule measurement (default 3)
  --no-rules      skip the per-rule measurement
  --no-stats      skip the runs with ESLint's own stats
  --corpus NAME   library (default: bench/corpus.json, installed by npm ci) or application (bench/app-corpus.json:
                  server packages, fetched on first use into node_modules/.cache/locks-app-corpus/)
  --eslint 9|10   ESLint major to run (default 10)
  --out FILE      where to write the figures as JSON (default bench/results/latest.json)
  --check         exit 1 when a target is missed (in one process: the plugin > 2 % of the floor, a rule > 0.5 %;
                  whole runs: the plugin > 5 % of the floor's wall time)
  --help          this text
`;

function parseArgs(argv) {
  const options = {
    runs: 5,
    files: undefined,
    setups: DEFAULT_SETUPS,
    rounds: 3,
    rules: true,
    stats: true,
    eslint: "10",
    corpus: "library",
    out: undefined,
    check: false,
  };
  const number = (name, value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} needs a positive whole number, got ${value}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--help" || arg === "-h") options.help = true;
    else if (arg === "--runs") options.runs = number(arg, value());
    else if (arg === "--files") options.files = number(arg, value());
    else if (arg === "--rounds") options.rounds = number(arg, value());
    else if (arg === "--quick") Object.assign(options, { runs: 1, files: 300, rounds: 1 });
    else if (arg === "--setups")
      options.setups = value()
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
    else if (arg === "--no-rules") options.rules = false;
    else if (arg === "--no-stats") options.stats = false;
    else if (arg === "--eslint") options.eslint = value();
    else if (arg === "--corpus") options.corpus = value();
    else if (arg === "--out") options.out = value();
    else if (arg === "--check") options.check = true;
    else throw new Error(`unknown option ${arg} (see --help)`);
  }
  for (const s of options.setups) {
    if (!KNOWN_SETUPS.includes(s) && !s.startsWith("rule:")) throw new Error(`unknown setup ${s}`);
  }
  if (!options.setups.includes("floor")) options.setups = ["floor", ...options.setups];
  if (options.eslint !== "9" && options.eslint !== "10") throw new Error("--eslint takes 9 or 10");
  if (options.corpus !== "library" && options.corpus !== "application")
    throw new Error("--corpus takes library or application");
  options.out ??= join(
    repoRoot,
    options.corpus === "application" ? "bench/results/latest-application.json" : "bench/results/latest.json",
  );
  return options;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const round1 = (x) => Math.round(x * 10) / 10;
const pct = (part, whole) => (100 * part) / whole;
const fmtMs = (ms) =>
  ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
const fmtPct = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(1)} %`;

/** A markdown table, padded so it also reads in a terminal. */
function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

function runWorker(script, job, tmp, label) {
  const jobFile = join(tmp, "job.json");
  const resultFile = join(tmp, "result.json");
  writeFileSync(jobFile, JSON.stringify(job));
  rmSync(resultFile, { force: true });
  const child = spawnSync(process.execPath, [join(repoRoot, "bench", script), jobFile, resultFile], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (child.status !== 0) throw new Error(`${label}: the worker exited with ${child.status ?? child.signal}`);
  return JSON.parse(readFileSync(resultFile, "utf8"));
}

function gitDescribe() {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: repoRoot,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const dirty =
      execFileSync("git", ["status", "--porcelain", "--", "src", "rules"], {
        cwd: repoRoot,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim() !== "";
    return dirty ? `${commit} (with uncommitted changes to src/ or rules/)` : commit;
  } catch {
    return "unknown";
  }
}

function versionOf(name) {
  return JSON.parse(readFileSync(join(repoRoot, "node_modules", name, "package.json"), "utf8")).version;
}

const log = (...args) => console.error(...args);

async function main() {
  const options = parseArgs(process.argv.slice(2));
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (options.corpus === "application") fetchAppCorpus({ log });
  const corpus = listCorpus({ limit: options.files, corpus: options.corpus });
  const files = corpus.files;
  let bytes = 0;
  for (const file of files) bytes += readFileSync(file).length; // also warms the page cache for every run alike
  const machine = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGb: round1(totalmem() / 2 ** 30),
    loadavgAtStart: loadavg().map(round1),
  };
  const eslintPackage = options.eslint === "9" ? "eslint-v9" : "eslint";
  log(
    `eslint-plugin-locks benchmark: ${files.length} of ${corpus.total} corpus files (${(bytes / 2 ** 20).toFixed(1)} MiB) from ${corpus.packages.length} packages, ESLint ${versionOf(eslintPackage)}, Node ${process.version}, ${machine.cores} cores, load ${machine.loadavgAtStart.join(" ")}`,
  );

  const tmp = mkdtempSync(join(tmpdir(), "locks-bench-"));
  const started = new Date();
  try {
    // 1. Whole runs, one process each, interleaved: floor, listeners, strict, reference, then the next round in a
    //    rotated order, so drift in the machine's load is shared by every setup.
    const runs = Object.fromEntries(options.setups.map((s) => [s, []]));
    for (let r = 0; r < options.runs; r++) {
      const order = [
        ...options.setups.slice(r % options.setups.length),
        ...options.setups.slice(0, r % options.setups.length),
      ];
      for (const setup of order) {
        const result = runWorker(
          "worker.js",
          { setup, files, eslint: options.eslint, stats: false, cwd: repoRoot },
          tmp,
          setup,
        );
        result.loadavg = loadavg()[0];
        runs[setup].push(result);
        log(
          `  run ${r + 1}/${options.runs} ${setup.padEnd(10)} ${fmtMs(result.wallMs).padStart(8)}  (lint ${fmtMs(result.lintMs)}, cpu ${fmtMs(result.cpuMs)}, gc ${fmtMs(result.gcMs)}, ${Math.round(result.maxRssMb)} MiB)`,
        );
      }
    }
    const summary = {};
    for (const [setup, results] of Object.entries(runs)) {
      summary[setup] = {
        description: SETUP_DESCRIPTIONS[setup] ?? setup,
        wallMs: median(results.map((r) => r.wallMs)),
        lintMs: median(results.map((r) => r.lintMs)),
        configLoadMs: median(results.map((r) => r.configLoadMs)),
        cpuMs: median(results.map((r) => r.cpuMs)),
        gcMs: median(results.map((r) => r.gcMs)),
        maxRssMb: Math.max(...results.map((r) => r.maxRssMb)),
        filesPerSecond: files.length / (median(results.map((r) => r.lintMs)) / 1000),
        findings: results[0].findings,
        runs: results.map((r) => ({
          wallMs: r.wallMs,
          lintMs: r.lintMs,
          cpuMs: r.cpuMs,
          gcMs: r.gcMs,
          maxRssMb: r.maxRssMb,
          loadavg: r.loadavg,
        })),
        fatal: results[0].fatal.map((f) => ({ ...f, file: displayPath(f.file) })),
      };
    }
    const floor = summary.floor;
    for (const s of Object.values(summary)) {
      s.ratio = s.wallMs / floor.wallMs;
      s.cpuRatio = s.cpuMs / floor.cpuMs;
    }

    // 2. Per-rule times, every file parsed once and linted by each setup in turn.
    let perRule;
    if (options.rules) {
      log(`  per-rule times: ${options.rounds} round(s) over ${files.length} files`);
      perRule = runWorker(
        "rule-times.js",
        { files, eslint: options.eslint, cwd: repoRoot, rounds: options.rounds, chunk: 100 },
        tmp,
        "rule times",
      );
    }

    // 3. ESLint's own per-rule stats (what `eslint --stats` and TIMING show) for strict and the reference.
    const eslintStats = {};
    if (options.stats) {
      for (const setup of ["strict", "reference"]) {
        log(`  ESLint stats: ${setup}`);
        const r = runWorker(
          "worker.js",
          { setup, files, eslint: options.eslint, stats: true, cwd: repoRoot },
          tmp,
          `${setup} stats`,
        );
        eslintStats[setup] = { parseMs: r.parseMs, totalMs: r.statsTotalMs, ruleMs: r.ruleMs };
      }
    }

    const report = buildReport({ options, corpus, files, bytes, machine, summary, perRule, eslintStats, started });
    const outDir = dirname(options.out);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(options.out, `${JSON.stringify(report.json, null, 2)}\n`);
    process.stdout.write(
      `${report.text}\n\nFigures written to ${options.out.startsWith(repoRoot) ? displayPath(options.out) : options.out}\n`,
    );
    if (options.check && report.json.targets.missed.length > 0) {
      log(`Targets missed: ${report.json.targets.missed.join("; ")}`);
      return 1;
    }
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

function buildReport({ options, corpus, files, bytes, machine, summary, perRule, eslintStats, started }) {
  const floor = summary.floor;
  const lines = [];
  lines.push(`## eslint-plugin-locks benchmark, ${started.toISOString().slice(0, 10)}`);
  lines.push("");
  lines.push(
    `${files.length} files (${(bytes / 2 ** 20).toFixed(1)} MiB) from ${corpus.packages.length} pinned packages (the ${options.corpus} corpus); ${options.runs} interleaved run(s) per setup, medians; ESLint ${versionOf(options.eslint === "9" ? "eslint-v9" : "eslint")}, @typescript-eslint/parser ${versionOf("@typescript-eslint/parser")}, Node ${machine.node}, ${machine.cores} × ${machine.cpu}, load average ${machine.loadavgAtStart.join(" ")} at start, ${loadavg().map(round1).join(" ")} at end.`,
  );
  lines.push("");
  lines.push(
    table(
      ["setup", "wall", "vs floor", "cpu", "vs floor", "lint only", "files/s", "gc", "peak RSS"],
      Object.entries(summary).map(([name, s]) => [
        name,
        fmtMs(s.wallMs),
        name === "floor" ? "" : fmtPct(pct(s.wallMs - floor.wallMs, floor.wallMs)),
        fmtMs(s.cpuMs),
        name === "floor" ? "" : fmtPct(pct(s.cpuMs - floor.cpuMs, floor.cpuMs)),
        fmtMs(s.lintMs),
        Math.round(s.filesPerSecond),
        fmtMs(s.gcMs),
        `${Math.round(s.maxRssMb)} MiB`,
      ]),
    ),
  );

  // Issue 17: in one process, the whole plugin at most 2 % of the floor and no rule above 0.5 %; the whole-run wall
  // target (5 %) is the earlier one, kept as a check on what a user's run sees.
  const IN_PROCESS_TARGET = 2;
  const RULE_TARGET = 0.5;
  const targets = { plugin: undefined, inProcess: undefined, rules: [], missed: [] };
  if (summary.strict) {
    const added = pct(summary.strict.wallMs - floor.wallMs, floor.wallMs);
    targets.plugin = { addedToFloorPct: added, target: 5, met: added <= 5 };
    if (!targets.plugin.met) targets.missed.push(`configs.strict adds ${added.toFixed(1)} % to the floor (target 5 %)`);
    lines.push("");
    lines.push(
      `configs.strict adds ${fmtPct(added)} to the floor's wall time (target: at most 5 %)${summary.listeners ? `, ${fmtPct(pct(summary.strict.wallMs - summary.listeners.wallMs, floor.wallMs))} of the floor on top of the no-op listeners` : ""}; plugin loading ${fmtMs(summary.strict.configLoadMs)}.`,
    );
  }

  let perRuleJson;
  if (perRule) {
    // This process's floor: parsing with scope and code-path analysis and one traversal, in CPU time.
    const floorCpu = perRule.parseCpuMs;
    const over = (setup) => perRule.cpuMs[setup] - perRule.cpuMs.floor;
    const build = perRule.splitMs.build;
    const rows = [
      { part: "dispatch: a no-op rule with the plugin's listeners", cpuMs: over("listeners") },
      { part: "inventory: collecting nodes during the traversal (with dispatch)", cpuMs: over("inventory") - build },
      { part: "inventory: building the facts (recognizers, pairing)", cpuMs: build },
      ...Object.keys(perRule.splitMs)
        .filter((k) => k !== "build")
        .map((id) => ({ part: `${id}: own work on the facts`, rule: id, cpuMs: perRule.splitMs[id] })),
      { part: "configs.strict, warm caches", cpuMs: over("strict") },
      {
        part: "first sight: work a second lint of the same file skips (SQL parsed per text, scopes cached per node)",
        cpuMs: perRule.firstSightCpuMs,
      },
      { part: "configs.strict in all", cpuMs: over("strict") + perRule.firstSightCpuMs },
    ].map((r) => ({ ...r, pctOfFloor: pct(r.cpuMs, floorCpu) }));
    perRuleJson = {
      files: perRule.files,
      rounds: perRule.rounds,
      floorCpuMs: floorCpu,
      cpuMs: perRule.cpuMs,
      splitMs: perRule.splitMs,
      firstSightCpuMs: perRule.firstSightCpuMs,
      rows,
      fatal: perRule.fatal.map((f) => ({ ...f, file: displayPath(f.file) })),
    };
    for (const row of rows.filter((r) => r.rule)) {
      targets.rules.push({
        rule: row.rule,
        pctOfFloor: row.pctOfFloor,
        target: RULE_TARGET,
        met: row.pctOfFloor <= RULE_TARGET,
      });
      if (row.pctOfFloor > RULE_TARGET)
        targets.missed.push(`${row.rule} takes ${row.pctOfFloor.toFixed(2)} % of the floor (target ${RULE_TARGET} %)`);
    }
    const shared = pct(over("inventory") + perRule.firstSightCpuMs, floorCpu);
    targets.sharedCore = { pctOfFloor: shared };
    const inAll = rows[rows.length - 1].pctOfFloor;
    targets.inProcess = { pctOfFloor: inAll, target: IN_PROCESS_TARGET, met: inAll <= IN_PROCESS_TARGET };
    if (!targets.inProcess.met)
      targets.missed.push(
        `configs.strict in all takes ${inAll.toFixed(1)} % of the floor in one process (target ${IN_PROCESS_TARGET} %)`,
      );
    lines.push("");
    lines.push(
      `Where the time goes (CPU time; each file parsed once, then linted by each setup in turn, ${perRule.rounds} round(s); floor here: ${fmtMs(floorCpu)} to parse and traverse ${perRule.files} files). The plugin builds its facts once per file and every rule reads them, so the shared inventory (${fmtPct(shared)} of the floor with first sight) is listed apart from each rule's own work:`,
    );
    lines.push("");
    lines.push(
      table(
        ["part", "cpu", "% of floor"],
        rows.map((r) => [r.part, fmtMs(r.cpuMs), fmtPct(r.pctOfFloor)]),
      ),
    );
  }

  if (Object.keys(eslintStats).length > 0) {
    lines.push("");
    lines.push(
      `ESLint's own stats (\`stats: true\`, one run each; the plugin builds its facts inside the first locks/* rule, so that rule carries the shared inventory):`,
    );
    lines.push("");
    const statRows = [];
    for (const [setup, s] of Object.entries(eslintStats)) {
      const top = Object.entries(s.ruleMs)
        .sort((a, b) => b[1] - a[1])
        .slice(0, setup === "reference" ? 5 : 10);
      const total = Object.values(s.ruleMs).reduce((a, b) => a + b, 0);
      statRows.push([setup, "parse", fmtMs(s.parseMs), ""]);
      statRows.push([setup, "all rules", fmtMs(total), fmtPct(pct(total, floor.wallMs))]);
      for (const [rule, ms] of top) statRows.push([setup, rule, fmtMs(ms), fmtPct(pct(ms, floor.wallMs))]);
    }
    lines.push(table(["setup", "rule", "time", "% of floor wall"], statRows));
  }

  const fatal = floor.fatal;
  if (fatal.length > 0) {
    lines.push("");
    lines.push(
      `Warning: ${fatal.length} file(s) did not parse and were not linted: ${fatal
        .slice(0, 5)
        .map((f) => `${f.file}:${f.line} ${f.message}`)
        .join("; ")}`,
    );
  }
  if (summary.strict) {
    const found = Object.entries(summary.strict.findings)
      .sort((a, b) => b[1] - a[1])
      .map(([r, n]) => `${r} ${n}`)
      .join(", ");
    lines.push("");
    lines.push(`configs.strict findings on the corpus: ${found || "none"}.`);
  }

  const json = {
    date: started.toISOString(),
    finishedAt: new Date().toISOString(),
    plugin: {
      version: JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")).version,
      commit: gitDescribe(),
    },
    eslint: versionOf(options.eslint === "9" ? "eslint-v9" : "eslint"),
    parser: versionOf("@typescript-eslint/parser"),
    machine: { ...machine, loadavgAtEnd: loadavg().map(round1) },
    options: {
      runs: options.runs,
      files: options.files ?? null,
      setups: options.setups,
      rounds: options.rounds,
      rules: options.rules,
      stats: options.stats,
    },
    corpus: {
      files: files.length,
      totalFiles: corpus.total,
      bytes,
      packages: corpus.packages,
      skipped: corpus.skipped,
    },
    setups: summary,
    perRule: perRuleJson,
    eslintStats,
    targets,
  };
  return { text: lines.join("\n"), json };
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
