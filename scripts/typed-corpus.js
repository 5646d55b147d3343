// Measures type-aware mode on the labelled corpus: precision and recall of recommended and strict, each
// syntactic and type-checked (parserOptions.projectService), scored by site as ../shared/corpus/score.mjs does.
//   npm run build && node scripts/typed-corpus.js [files-dir] [--manifest path]
// The corpus files come without their projects, so they are linted twice: alone (no import resolves: every client
// is `any`) and next to this repository's node_modules (ioredis, @redis/client, mongodb, mongoose, typeorm, knex,
// kysely, drizzle-orm, sequelize, pg resolve; generated Prisma clients and the files' own modules still do not).
// Results are printed; docs/typed-linting.md records a run.
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import tsParser from "@typescript-eslint/parser";
import { ESLint } from "eslint";
import plugin from "../dist/src/index.js";

const repo = fileURLToPath(new URL("../", import.meta.url));
const args = process.argv.slice(2);
const flag = (k) => {
  const i = args.indexOf(k);
  return i >= 0 ? args[i + 1] : undefined;
};
const filesDir = resolve(
  args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--manifest") ?? "/tmp/devcorpus/files",
);
const manifestPath = flag("--manifest") ?? join(repo, "..", "shared", "corpus", "manifest.json");
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));

/** Site-level score, as score.mjs: a finding within a site's span (±2 lines) hits it; borderline sites count neither way. */
function score(results) {
  const s = { tp: 0, fp: 0, fn: 0 };
  for (const e of manifest) {
    const messages = results.get(e.id);
    if (!messages) continue;
    const sites = e.sites.map((x) => ({
      ...x,
      lo: (x.span?.[0] ?? x.line) - 2,
      hi: (x.span?.[1] ?? x.line) + 2,
      hit: false,
    }));
    for (const m of messages) {
      const near = sites.filter((x) => x.lo <= (m.endLine ?? m.line) && m.line <= x.hi);
      const flagged = near.filter((x) => x.expected.flag);
      if (flagged.length) for (const x of flagged) x.hit = true;
      else if (!near.some((x) => x.borderline)) s.fp++;
    }
    for (const x of sites) {
      if (!x.expected.flag) continue;
      if (x.hit) s.tp++;
      else if (!x.borderline) s.fn++;
    }
  }
  return { ...s, p: s.tp + s.fp ? s.tp / (s.tp + s.fp) : 1, r: s.tp + s.fn ? s.tp / (s.tp + s.fn) : 1 };
}

async function lintAll(dir, configName, typed) {
  const eslint = new ESLint({
    cwd: dir,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ["**/*.{ts,js}"],
        languageOptions: {
          parser: tsParser,
          sourceType: "module",
          ...(typed ? { parserOptions: { projectService: true, tsconfigRootDir: dir } } : {}),
        },
      },
      plugin.configs[typed ? `${configName}-type-checked` : configName],
    ],
  });
  const started = performance.now();
  const results = new Map();
  const verdicts = {};
  let fatal = 0;
  // src/core/reading/types.ts reports each receiver verdict on console.error when LOCKS_DEBUG_TYPES is set.
  const log = console.error;
  process.env.LOCKS_DEBUG_TYPES = "1";
  console.error = (line) => {
    const m = /^locks types: .* (\S+) (store|other|unknown)$/.exec(String(line));
    if (m) verdicts[`${m[1]} ${m[2]}`] = (verdicts[`${m[1]} ${m[2]}`] ?? 0) + 1;
    else log(line);
  };
  const linted = await eslint.lintFiles(["*.ts", "*.js"]).finally(() => {
    console.error = log;
    delete process.env.LOCKS_DEBUG_TYPES;
  });
  for (const r of linted) {
    const id = r.filePath
      .split("/")
      .pop()
      .replace(/\.(ts|js)$/, "");
    fatal += r.messages.filter((m) => m.fatal).length;
    results.set(
      id,
      r.messages.filter((m) => m.ruleId?.startsWith("locks/")),
    );
  }
  return { results, ms: performance.now() - started, fatal, verdicts };
}

const findings = (results) => [...results].flatMap(([id, ms]) => ms.map((m) => `${id}:${m.line} ${m.ruleId}`)).sort();

const setups = [
  ["alone (no import resolves)", false],
  ["beside this repository's node_modules", true],
];
for (const [label, withModules] of setups) {
  const dir = mkdtempSync(join(tmpdir(), "locks-typed-corpus-"));
  for (const f of readdirSync(filesDir)) if (/\.(ts|js)$/.test(f)) cpSync(join(filesDir, f), join(dir, f));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        allowJs: true,
        checkJs: false,
        noEmit: true,
        skipLibCheck: true,
        strict: false,
        experimentalDecorators: true,
      },
      include: ["*.ts", "*.js"],
    }),
  );
  if (withModules && existsSync(join(repo, "node_modules")))
    symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"), "dir");
  console.log(`\n## corpus ${label}: ${readdirSync(dir).filter((f) => /\.(ts|js)$/.test(f)).length} files`);
  for (const configName of ["recommended", "strict"]) {
    const plain = await lintAll(dir, configName, false);
    const typed = await lintAll(dir, configName, true);
    for (const [name, run] of [
      [configName, plain],
      [`${configName}-type-checked`, typed],
    ]) {
      const s = score(run.results);
      console.log(
        `${name.padEnd(26)} P ${s.p.toFixed(2)} R ${s.r.toFixed(2)} (tp ${s.tp}, fp ${s.fp}, fn ${s.fn}) findings ${findings(run.results).length}, fatal ${run.fatal}, ${(run.ms / 1000).toFixed(1)} s`,
      );
    }
    const counts = Object.entries(typed.verdicts)
      .sort()
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    console.log(`  receiver verdicts (calls a recognizer took, by store): ${counts || "none"}`);
    const a = new Set(findings(plain.results));
    const b = new Set(findings(typed.results));
    for (const f of a) if (!b.has(f)) console.log(`  only syntactic: ${f}`);
    for (const f of b) if (!a.has(f)) console.log(`  only typed:     ${f}`);
  }
  rmSync(dir, { recursive: true, force: true });
}
