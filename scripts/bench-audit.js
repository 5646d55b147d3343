// locks-audit against `tsc --noEmit` on the same generated project (scripts/gen-audit-project.js), each run as a
// fresh process, alternated so that machine noise falls on both alike; prints medians and their ratio.
//   npm run build && node scripts/bench-audit.js [--modules 1200] [--runs 5] [--dir /tmp/locks-audit-bench]
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

const count = generateProject(dir, modules);
const commands = {
  "tsc --noEmit": [join(repo, "node_modules/typescript/bin/tsc"), ["--noEmit", "-p", "tsconfig.json"]],
  "locks-audit": [join(repo, "dist/src/audit/cli.js"), ["--format", "json", "--output", join(dir, "audit.json")]],
  "locks-audit --parse-all": [join(repo, "dist/src/audit/cli.js"), ["--format", "json", "--parse-all", "--output", join(dir, "audit-all.json")]],
  "locks-audit --types": [join(repo, "dist/src/audit/cli.js"), ["--format", "json", "--types", "--output", join(dir, "audit-types.json")]],
};

function time(name) {
  const [script, args] = commands[name];
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [script, ...args], { cwd: dir, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // tsc exits 0 (the project type-checks); the audit exits 1 (the generated project has unanswered claims).
  if (r.status !== (name === "tsc --noEmit" ? 0 : 1)) throw new Error(`${name} exited ${r.status}: ${r.stderr || r.stdout}`);
  return ms;
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
const tsc = median(samples["tsc --noEmit"]);
const audit = median(samples["locks-audit"]);
console.log(`project: ${count} modules in ${dir}, ${runs} runs each, alternated, wall time per fresh process`);
for (const [name, xs] of Object.entries(samples)) {
  console.log(`${name.padEnd(23)} median ${(median(xs) / 1000).toFixed(2)} s  (runs: ${xs.map((x) => (x / 1000).toFixed(2)).join(", ")})`);
}
const ratio = (name) => (median(samples[name]) / tsc).toFixed(2);
console.log(`ratio audit / tsc: ${(audit / tsc).toFixed(2)}; --parse-all: ${ratio("locks-audit --parse-all")}; --types: ${ratio("locks-audit --types")}`);
