// Zero crashes on real code: lints every file of the benchmark corpus (bench/corpus.json: the sources of pinned
// packages that `npm ci` installs) and of the application corpus (bench/app-corpus.json: server packages, fetched on
// first use as their npm tarballs by bench/app-corpus.js, which needs the registry like `npm ci`) with configs.strict, and fails on any exception a rule throws, naming the file
// and the stack. LOCKS_DEBUG=1 turns off the inventory's safety net, so a recognizer or the model that meets code it
// did not expect fails here instead of silently giving that file no findings. ESLint 10 lints every file; ESLint 9,
// whose rule API differs in small ways, lints an evenly spread sample.
import { readFileSync } from "node:fs";
import tsParser from "@typescript-eslint/parser";
import { Linter as Linter10 } from "eslint";
import { Linter as Linter9 } from "eslint-v9";
import { describe, expect, it } from "vitest";
import { displayPath, listCorpus, repoRoot } from "../../bench/corpus.js";
import { fetchAppCorpus } from "../../bench/app-corpus.js";
import plugin from "../../src/index.js";

process.env["LOCKS_DEBUG"] = "1";

const corpus = listCorpus();
fetchAppCorpus();
const applications = listCorpus({ corpus: "application" });
/** ESLint 9 sample size: enough to reach every package, a tenth of the time. */
const ESLINT9_SAMPLE = 300;

/** Counts the files the rules ran on: an ignored or unmatched file would otherwise pass without being linted. */
let linted = 0;
const probe = { rules: { files: { meta: { type: "problem", schema: [] }, create: () => ({ Program: () => void linted++ }) } } };

const config = [
  { ignores: ["!**/node_modules/"] }, // the corpus is installed there, which ESLint ignores by default
  { files: ["**/*.{js,mjs,cjs,ts,mts,cts}"], languageOptions: { parser: tsParser } },
  plugin.configs.strict,
  { plugins: { probe }, rules: { "probe/files": "error" } },
] as never;

interface Problem {
  readonly file: string;
  readonly detail: string;
}

function lintAll(linter: Linter10, files: readonly string[]): { crashes: Problem[]; unparsed: Problem[] } {
  const crashes: Problem[] = [];
  const unparsed: Problem[] = [];
  linted = 0;
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    try {
      const messages = linter.verify(text, config, { filename: file, allowInlineConfig: false });
      const fatal = messages.find((m) => m.fatal);
      if (fatal) unparsed.push({ file: displayPath(file), detail: `${fatal.line}:${fatal.column} ${fatal.message}` });
    } catch (error) {
      const stack = error instanceof Error ? error.stack ?? error.message : String(error);
      crashes.push({ file: displayPath(file), detail: stack.split("\n").slice(0, 12).join("\n") });
    }
  }
  expect(linted + unparsed.length + crashes.length, "files the rules ran on").toBe(files.length);
  return { crashes, unparsed };
}

function report(kind: string, problems: readonly Problem[]): string {
  return `${problems.length} file(s) ${kind}:\n${problems.map((p) => `--- ${p.file}\n${p.detail}`).join("\n")}`;
}

function expectClean({ crashes, unparsed }: { crashes: Problem[]; unparsed: Problem[] }): void {
  expect(crashes.length, report("made a rule throw", crashes)).toBe(0);
  // A file that does not parse is not checked at all: the corpus settings (bench/corpus.json) must keep such files out.
  expect(unparsed.length, report("did not parse", unparsed)).toBe(0);
}

describe("configs.strict on the benchmark corpus, ESLint 10", () => {
  const linter = new Linter10({ configType: "flat", cwd: repoRoot });
  it.each(corpus.packages.map((p) => [`${p.name}@${p.version} (${p.files} files)`, p.name] as const))(
    "%s: no rule throws",
    (_label, name) => expectClean(lintAll(linter, corpus.filesByPackage[name] ?? [])),
    300_000,
  );
});

describe("configs.strict on the benchmark corpus, ESLint 9", () => {
  it(`a sample of ${ESLINT9_SAMPLE} files: no rule throws`, () => {
    const linter = new Linter9({ configType: "flat", cwd: repoRoot }) as unknown as Linter10;
    expectClean(lintAll(linter, listCorpus({ limit: ESLINT9_SAMPLE }).files));
  }, 300_000);
});

describe("configs.strict on the application corpus, ESLint 10", () => {
  const linter = new Linter10({ configType: "flat", cwd: repoRoot });
  it.each(applications.packages.map((p) => [`${p.name}@${p.version} (${p.files} files)`, p.name] as const))(
    "%s: no rule throws",
    (_label, name) => expectClean(lintAll(linter, applications.filesByPackage[name] ?? [])),
    300_000,
  );
});

it("the application corpus is what bench/app-corpus.json pins: thousands of files of server code from every package", () => {
  expect(applications.total).toBeGreaterThan(3000);
  for (const p of applications.packages) expect(p.files, p.name).toBeGreaterThan(0);
});

it("the corpus is what bench/corpus.json pins: several thousand files from every package", () => {
  expect(corpus.total).toBeGreaterThan(3000);
  for (const p of corpus.packages) expect(p.files, p.name).toBeGreaterThan(0);
});
