#!/usr/bin/env node
// Writes every corpus file from bare git copies of its repository, and checks each labelled line is still the one
// the label was made on (line_sha1).
//   node corpus/materialize.mjs <out-dir> [--mirror <dir>] [--manifest m.json]
// <dir>/<owner>+<name>/repo is the bare git directory of owner/name (the layout this project's research tools
// leave under /work/.mirror); any other layout: pass --git-dir-of "<command with {repo}>" printing the git dir.
import { execFileSync, execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";

const args = process.argv.slice(2);
const outDir = args[0];
if (!outDir || outDir.startsWith("--")) {
  console.error("usage: node corpus/materialize.mjs <out-dir> [--mirror <dir>] [--git-dir-of <cmd>] [--manifest m.json]");
  process.exit(2);
}
const arg = (k) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : undefined; };
const mirror = arg("--mirror") ?? "/work/.mirror";
const gitDirOf = arg("--git-dir-of");
const manifestPath = resolve(arg("--manifest") ?? new URL("./manifest.json", import.meta.url).pathname);
const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
mkdirSync(outDir, { recursive: true });
/** The git directory of a repository: the command's answer, or `<mirror>/<owner>+<name>/repo` (its `.git` when the snapshot is a clone with a work tree). */
function gitDirFor(repo) {
  if (gitDirOf) return execSync(gitDirOf.replace("{repo}", repo), { encoding: "utf8" }).trim();
  const dir = join(mirror, repo.replace("/", "+"), "repo");
  return existsSync(join(dir, ".git")) ? join(dir, ".git") : dir;
}
const sha1 = (text) => createHash("sha1").update(text.trim()).digest("hex");
let written = 0, missing = 0, moved = 0;
for (const e of manifest) {
  const dir = gitDirFor(e.repo);
  if (!existsSync(dir)) { missing++; console.log(`no git directory for ${e.repo} (${dir})`); continue; }
  let text;
  try {
    text = execFileSync("git", ["--git-dir", dir, "show", `${e.commit}:${e.path}`], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"] });
  } catch {
    missing++;
    console.log(`${e.id}: ${e.repo} has no ${e.path} at ${e.commit}`);
    continue;
  }
  // JSX parses only in a .tsx file among TypeScript's: a component's file keeps its extension.
  const ext = e.path.endsWith(".tsx") ? "tsx" : /\.(ts|mts|cts)$/.test(e.path) ? "ts" : "js";
  writeFileSync(join(outDir, `${e.id}.${ext}`), text);
  written++;
  const lines = text.split("\n");
  for (const s of e.sites) {
    if (s.line_sha1 && sha1(lines[s.line - 1] ?? "") !== s.line_sha1) {
      moved++;
      console.log(`${e.id}:${s.line}: the labelled line changed (line_sha1 differs)`);
    }
  }
}
// Sites whose lock lives in a helper of another module (`helper_module`), or whose release or recovery does
// (`cross_module_release`), or whose verdict rests on the unique keys a schema declares (`schema_module`: a
// schema.prisma, a Strapi schema.json): a small project per file under <out-dir>/projects/<id>/, the labelled file
// and those files at their repository paths with the repository's tsconfig.json (for `paths` such as `@/lib/…`),
// for `score.mjs --projects`, which runs locks-audit on it: only the project-wide audit sees another module.
// Labellers wrote these names on the site or inside its `expected`; both are read.
const named = (s, key) => s[key] ?? s.expected?.[key];
let projects = 0;
for (const e of manifest) {
  const helpers = [...new Set(e.sites.flatMap((s) => [named(s, "helper_module"), named(s, "cross_module_release")])
    .filter((h) => typeof h === "string" && /\.(ts|tsx|js|mjs|cjs|jsx)$/.test(h) && h !== e.path))];
  // The schema that declares the tables' unique keys (`schema_module`: a schema.prisma, a Strapi schema.json),
  // where a verdict rests on what it declares.
  const schemas = [...new Set(e.sites.map((s) => named(s, "schema_module")).filter((h) => typeof h === "string"))];
  if (helpers.length === 0 && schemas.length === 0) continue;
  const dir = gitDirFor(e.repo);
  if (!existsSync(dir)) continue;
  const show = (path) => {
    try {
      return execFileSync("git", ["--git-dir", dir, "show", `${e.commit}:${path}`], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"] });
    } catch {
      return undefined;
    }
  };
  const project = join(outDir, "projects", e.id);
  const put = (path, text) => {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), text);
  };
  let found = 0;
  // A helper's folder may be imported through its barrel (`../class/` for `class/Lock.js`).
  const barrels = helpers.flatMap((h) => ["index.ts", "index.js"].map((i) => [...h.split("/").slice(0, -1), i].join("/")));
  for (const path of barrels) {
    const text = show(path);
    if (text !== undefined) put(path, text);
  }
  // A helper reached through a module the file imports (an aggregate: `db.locks.acquire` of `export class db {
  // static locks = locks }`): that module too, one hop, as the audit of the whole repository sees it.
  const via = [];
  const resolve = (spec, from) => {
    if (!spec.startsWith(".")) return undefined;
    const base = join(dirname(from), spec).replace(/\.(js|mjs|cjs)$/, "");
    return ["", ".ts", ".tsx", ".js", ".mjs", ".cjs", "/index.ts", "/index.js"].map((x) => base + x).find((c) => /\.[cm]?[jt]sx?$/.test(c) && show(c) !== undefined);
  };
  const importsOf = (path, text) => [...text.matchAll(/(?:from\s*|require\(\s*)["']([^"']+)["']/g)].map((m) => resolve(m[1], path)).filter(Boolean);
  const own = show(e.path) ?? "";
  for (const hop of importsOf(e.path, own)) {
    if (helpers.includes(hop)) continue;
    const text = show(hop);
    if (text !== undefined && importsOf(hop, text).some((p) => helpers.includes(p))) via.push(hop);
  }
  for (const path of via) put(path, show(path));
  for (const path of [e.path, ...helpers, ...schemas]) {
    const text = show(path);
    if (text === undefined) console.log(`${e.id}: ${e.repo} has no helper module ${path} at ${e.commit}`);
    else { put(path, text); found++; }
  }
  // The tsconfig of every folder on the way to the files (a package's own, the root's), without `extends` or
  // `references` the project does not carry: only the options that resolve imports are kept.
  const folders = new Set([e.path, ...helpers].flatMap((p) => p.split("/").slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join("/"))).concat([""]));
  for (const folder of folders) {
    const text = show(folder ? `${folder}/tsconfig.json` : "tsconfig.json");
    if (text === undefined) continue;
    const options = ts.parseConfigFileTextToJson("tsconfig.json", text).config?.compilerOptions ?? {};
    const keep = Object.fromEntries(Object.entries(options).filter(([k]) => ["baseUrl", "paths", "module", "moduleResolution"].includes(k)));
    put(folder ? `${folder}/tsconfig.json` : "tsconfig.json", JSON.stringify({ compilerOptions: { ...keep, allowJs: true } }, null, 2) + "\n");
  }
  if (found > 0) projects++;
}
console.log(`${written} files written to ${outDir}; ${missing} missing; ${moved} labelled lines that moved; ${projects} helper projects`);
process.exit(missing || moved ? 1 : 0);
