#!/usr/bin/env node
// Writes every corpus file from bare git copies of its repository, and checks each labelled line is still the one
// the label was made on (line_sha1).
//   node corpus/materialize.mjs <out-dir> [--mirror <dir>] [--manifest m.json]
// <dir>/<owner>+<name>/repo is the bare git directory of owner/name (the layout this project's research tools
// leave under /work/.mirror); any other layout: pass --git-dir-of "<command with {repo}>" printing the git dir.
import { execFileSync, execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

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
const sha1 = (text) => createHash("sha1").update(text.trim()).digest("hex");
let written = 0, missing = 0, moved = 0;
for (const e of manifest) {
  const dir = gitDirOf ? execSync(gitDirOf.replace("{repo}", e.repo), { encoding: "utf8" }).trim() : join(mirror, e.repo.replace("/", "+"), "repo");
  if (!existsSync(dir)) { missing++; console.log(`no git directory for ${e.repo} (${dir})`); continue; }
  let text;
  try {
    text = execFileSync("git", ["--git-dir", dir, "show", `${e.commit}:${e.path}`], { encoding: "utf8", maxBuffer: 64 << 20, stdio: ["ignore", "pipe", "pipe"] });
  } catch {
    missing++;
    console.log(`${e.id}: ${e.repo} has no ${e.path} at ${e.commit}`);
    continue;
  }
  const ext = /\.(ts|tsx|mts|cts)$/.test(e.path) ? "ts" : "js";
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
console.log(`${written} files written to ${outDir}; ${missing} missing; ${moved} labelled lines that moved`);
process.exit(missing || moved ? 1 : 0);
