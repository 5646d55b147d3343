#!/usr/bin/env node
// Scores the plugin of this repository on the labelled real-code corpus (manifest.json beside this script).
//   node corpus/score.mjs <files-dir> [--config strict|recommended] [--families A,B] [--slice redis-service]
//                         [--manifest other.json] [--projects <dir> [--editor]] [--show]   (from the project root, after `npm run build`)
// Site-level, as the development corpus in ../shared/corpus is scored: a report within a site's span (or its
// line) give or take two lines hits it. A flag:true site hit is a true positive, missed a false negative;
// a borderline site counts neither way, as the development corpus's scorer counts it: a hit is no true positive,
// a miss no false negative (the summary's second line says how many were hit, and the figures had they counted); a
// report that hits no flag:true site and no borderline site is a false
// positive (flag:false sites and unlabelled lines alike), listed for review. Exit 0 when precision and recall
// reach MIN_P / MIN_R (default 0 and 0: the scorer reports, it does not judge unless asked).
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const WITH_VALUE = new Set(["--config", "--families", "--slice", "--manifest", "--projects"]);
const filesDir = args.find((a, i) => !a.startsWith("--") && !WITH_VALUE.has(args[i - 1] ?? ""));
if (!filesDir) {
  console.error("usage: node corpus/score.mjs <files-dir> [--config strict|recommended] [--families A,B] [--slice s] [--manifest m.json] [--show]");
  process.exit(2);
}
const arg = (k) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
const configName = arg("--config") ?? "strict";
const families = arg("--families")?.split(",");
const slice = arg("--slice");
const show = args.includes("--show");
// --projects <dir>: a file with a folder <dir>/<id>/ (materialize.mjs writes them for sites whose helper lives in
// another module) is scored by locks-audit on that folder, so imported helpers count as the audit sees them.
const projectsDir = arg("--projects");
// --editor (with --projects): the file is linted in its folder by ESLint alone, as an editor or a CI lint step
// lints it, so imported helpers count as the rules read them themselves (src/rule-kit/imported-modules.ts).
const editor = args.includes("--editor");
const root = resolve(new URL("..", import.meta.url).pathname);
const manifestPath = resolve(arg("--manifest") ?? join(root, "corpus", "manifest.json"));
const { ESLint } = await import(pathToFileURL(join(root, "node_modules", "eslint", "lib", "api.js")).href);
const tsParser = (await import(pathToFileURL(join(root, "node_modules", "@typescript-eslint", "parser", "dist", "index.js")).href));
const plugin = (await import(pathToFileURL(join(root, "dist", "src", "index.js")).href)).default;
const cfg = plugin.configs[configName];
if (!cfg) { console.error(`no config ${configName}`); process.exit(2); }
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"))
  .filter((e) => (!families || families.includes(e.family)) && (!slice || e.slice === slice));
const lintConfig = [
  { files: ["**/*.{ts,tsx,js,mjs,cjs,jsx}"], languageOptions: { parser: tsParser.default ?? tsParser, sourceType: "module", parserOptions: { ecmaFeatures: { jsx: true } } } },
  { ...cfg, files: ["**/*.{ts,tsx,js,mjs,cjs,jsx}"] },
];
const eslint = new ESLint({
  cwd: resolve(filesDir), overrideConfigFile: true, ignore: false,
  overrideConfig: lintConfig,
});
async function editorMessages(project, path) {
  const inProject = new ESLint({ cwd: project, overrideConfigFile: true, ignore: false, overrideConfig: [...lintConfig, { settings: { locks: { readImports: true } } }] });
  const [res] = await inProject.lintFiles([join(project, path)]);
  return res.messages;
}
const { runAudit } = projectsDir && !editor ? await import(pathToFileURL(join(root, "dist", "src", "audit", "index.js")).href) : {};
async function auditMessages(project, path) {
  const { result } = await runAudit({ cwd: project, config: configName, eslintConfig: false, progress: false });
  return result.findings.filter((f) => f.file === path).map((f) => ({ ruleId: f.ruleId, line: f.line, endLine: f.endLine, message: f.message }));
}
const stat = {};
const out = [];
let missingFiles = 0;
let crashes = 0;
// A borderline site counts neither way, as ../shared/corpus/score.mjs counts it. The summary also says how many
// were hit, and the figures had those hits been true positives.
let borderlineHits = 0;
const S = (f) => (stat[f] ??= { tp: 0, fp: 0, fn: 0 });
for (const e of manifest) {
  const file = ["ts", "js", "tsx", "mjs", "jsx", "cjs"].map((x) => join(resolve(filesDir), `${e.id}.${x}`)).find(existsSync);
  if (!file) { missingFiles++; out.push(`MISSING ${e.id} (${e.repo} ${e.path})`); continue; }
  let res;
  try {
    const project = projectsDir && join(resolve(projectsDir), e.id);
    if (project && existsSync(join(project, e.path)))
      res = { messages: editor ? await editorMessages(project, e.path) : await auditMessages(project, e.path) };
    else [res] = await eslint.lintFiles([file]);
  } catch (err) {
    crashes++;
    out.push(`CRASH ${e.id}: ${String(err.message).split("\n")[0]}`);
    continue;
  }
  const sites = e.sites.map((s) => ({ ...s, lo: (s.span?.[0] ?? s.line) - 2, hi: (s.span?.[1] ?? s.line) + 2, hit: false }));
  for (const m of res.messages) {
    if (!m.ruleId) {
      if (m.fatal) { crashes++; out.push(`FATAL ${e.id}:${m.line} ${m.message}`); }
      continue;
    }
    if (!m.ruleId.startsWith("locks/")) continue;
    const near = sites.filter((s) => s.lo <= (m.endLine ?? m.line) && m.line <= s.hi);
    const flagged = near.filter((s) => s.expected.flag);
    if (flagged.length > 0) {
      for (const s of flagged) s.hit = true;
      if (show) out.push(`ok   ${e.id}:${m.line} ${m.ruleId}`);
      continue;
    }
    if (near.some((s) => s.borderline)) continue;
    S(e.family).fp++;
    out.push(`FP   ${e.id}:${m.line} ${m.ruleId}: ${m.message.slice(0, 140)}`);
  }
  for (const s of sites) {
    if (!s.expected.flag) continue;
    if (s.hit) {
      if (s.borderline) borderlineHits++;
      else S(e.family).tp++;
    } else if (!s.borderline) {
      S(e.family).fn++;
      out.push(`MISS ${e.id}:${s.line} ${s.kind} ${s.expected.which_questions_fail.join("/")}: ${s.expected.why.slice(0, 140)}`);
    }
  }
}
for (const l of out) console.log(l);
const pr = (s) => `P ${(s.tp + s.fp ? s.tp / (s.tp + s.fp) : 1).toFixed(2)} R ${(s.tp + s.fn ? s.tp / (s.tp + s.fn) : 1).toFixed(2)}`;
for (const [f, s] of Object.entries(stat).sort()) console.log(`family ${f}: ${pr(s)} (tp ${s.tp} fp ${s.fp} fn ${s.fn})`);
const tot = Object.values(stat).reduce((a, s) => ({ tp: a.tp + s.tp, fp: a.fp + s.fp, fn: a.fn + s.fn }), { tp: 0, fp: 0, fn: 0 });
if (missingFiles) console.log(`${missingFiles} corpus files not present in ${filesDir}: run corpus/materialize.mjs first (corpus/README.md)`);
console.log(`corpus ${configName}${slice ? ` slice ${slice}` : ""}${families ? ` families ${families}` : ""}: ${pr(tot)} (tp ${tot.tp}, fp ${tot.fp}, fn ${tot.fn}, crashes ${crashes}, files ${manifest.length - missingFiles})`);
console.log(`  borderline sites hit (counted neither way): ${borderlineHits}; counted as tp: ${pr({ ...tot, tp: tot.tp + borderlineHits })}`);
const P = tot.tp + tot.fp ? tot.tp / (tot.tp + tot.fp) : 1;
const R = tot.tp + tot.fn ? tot.tp / (tot.tp + tot.fn) : 1;
process.exit(!missingFiles && !crashes && P >= Number(process.env.MIN_P ?? 0) && R >= Number(process.env.MIN_R ?? 0) ? 0 : 1);
