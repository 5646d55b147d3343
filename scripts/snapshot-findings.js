// Writes every finding a built copy of the plugin reports on some folders (rule, position, message and the exact
// edits of each suggestion), or compares two such snapshots. For changes that must not change behaviour (a
// refactor): snapshot before, snapshot after, compare, and read every difference.
//   node scripts/snapshot-findings.js snap <out.json> [--plugin <built project dir>] [--config strict] <dir|file>...
//   node scripts/snapshot-findings.js compare <before.json> <after.json>
// `--plugin` defaults to this project (run `npm run build` first). Files: .ts .js .mts .cts .mjs .cjs, tests and
// `node_modules` skipped; TypeScript files parsed with @typescript-eslint/parser, as the fixtures test does.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [mode, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const i = rest.indexOf(name);
  if (i < 0) return fallback;
  const [value] = rest.splice(i, 2).slice(1);
  return value;
};

if (mode === "compare") {
  const [a, b] = rest.map((p) => JSON.parse(readFileSync(p, "utf8")));
  const key = (f) => `${f.line}:${f.column} ${f.rule}`;
  let differences = 0;
  for (const file of [...new Set([...Object.keys(a.files), ...Object.keys(b.files)])].sort()) {
    const before = new Map((a.files[file] ?? []).map((f) => [key(f), JSON.stringify(f)]));
    const after = new Map((b.files[file] ?? []).map((f) => [key(f), JSON.stringify(f)]));
    for (const [k, v] of before) {
      if (!after.has(k)) console.log(`- ${file}:${k}  ${JSON.parse(v).message}`);
      else if (after.get(k) !== v) console.log(`~ ${file}:${k}\n    before ${v}\n    after  ${after.get(k)}`);
      if (!after.has(k) || after.get(k) !== v) differences++;
    }
    for (const [k, v] of after) {
      if (!before.has(k)) {
        console.log(`+ ${file}:${k}  ${JSON.parse(v).message}`);
        differences++;
      }
    }
  }
  const count = (s) => Object.values(s.files).reduce((n, l) => n + l.length, 0);
  console.log(`${count(a)} findings before, ${count(b)} after, ${differences} differences`);
  process.exit(differences ? 1 : 0);
}

if (mode !== "snap" || rest.length < 2) {
  console.error("usage: snapshot-findings.js snap <out.json> [--plugin dir] [--config strict] <dir|file>...");
  console.error("       snapshot-findings.js compare <before.json> <after.json>");
  process.exit(2);
}
const pluginDir = resolve(option("--plugin", new URL("..", import.meta.url).pathname));
const configName = option("--config", "strict");
const [outPath, ...roots] = rest;
const req = createRequire(join(pluginDir, "package.json"));
const { ESLint } = await import(pathToFileURL(req.resolve("eslint")).href);
const tsParser = (await import(pathToFileURL(req.resolve("@typescript-eslint/parser")).href)).default;
const plugin = (await import(pathToFileURL(join(pluginDir, "dist/src/index.js")).href)).default;

const files = [];
const visit = (p) => {
  const st = statSync(p);
  if (st.isDirectory()) {
    for (const n of readdirSync(p).sort()) if (n !== "node_modules" && !n.startsWith(".")) visit(join(p, n));
  } else if (/\.(ts|js|mts|cts|mjs|cjs)$/.test(p) && !/\.d\.ts$|\.(test|spec)\.[jt]s$/.test(p)) files.push(p);
};
for (const r of roots) visit(resolve(r));

const eslint = new ESLint({
  cwd: "/",
  overrideConfigFile: true,
  allowInlineConfig: true,
  errorOnUnmatchedPattern: false,
  overrideConfig: [
    { files: ["**/*.ts", "**/*.mts", "**/*.cts"], languageOptions: { parser: tsParser } },
    { languageOptions: { sourceType: "module" } },
    plugin.configs[configName],
  ],
});
const out = { config: configName, plugin: pluginDir, files: {} };
let crashes = 0;
for (let i = 0; i < files.length; i += 50) {
  const batch = files.slice(i, i + 50);
  let results;
  try {
    results = await eslint.lintFiles(batch);
  } catch {
    results = [];
    for (const f of batch) {
      try {
        results.push(...(await eslint.lintFiles([f])));
      } catch (e) {
        crashes++;
        out.files[f] = [{ rule: "crash", line: 0, column: 0, message: String(e.message).split("\n")[0] }];
      }
    }
  }
  for (const r of results) {
    const findings = r.messages
      .filter((m) => m.ruleId?.startsWith("locks/") || m.fatal)
      .map((m) => ({
        rule: m.fatal ? "fatal" : m.ruleId,
        line: m.line,
        column: m.column,
        endLine: m.endLine,
        endColumn: m.endColumn,
        message: m.fatal ? "(unparsable)" : m.message,
        ...(m.suggestions?.length
          ? { suggestions: m.suggestions.map((s) => ({ id: s.messageId, desc: s.desc, fix: s.fix })) }
          : {}),
      }));
    if (findings.length) out.files[relative(process.cwd(), r.filePath)] = findings;
  }
}
writeFileSync(outPath, JSON.stringify(out, null, 1));
const n = Object.values(out.files).reduce((a, l) => a + l.length, 0);
console.log(`${files.length} files, ${n} findings, ${crashes} crashes -> ${outPath}`);
