// Zero crashes on real code: lints every file of the benchmark corpus (bench/corpus.json: the sources of pinned
// packages that `npm ci` installs) and of the application corpus (bench/app-corpus.json: server packages, fetched on
// first use as their npm tarballs by bench/app-corpus.js, which needs the registry like `npm ci`) with configs.strict, and fails on any exception a rule throws, naming the file
// and the stack. LOCKS_DEBUG=1 turns off the inventory's safety net, so a recognizer or the model that meets code it
// did not expect fails here instead of silently giving that file no findings. ESLint 10 lints every file; ESLint 9,
// whose rule API differs in small ways, lints an evenly spread sample.
//
// The same run proves the text pre-check sound (issue 17, core/model/evidence.ts): each file is linted whole first
// (`settings.locksAllModules`, every module read as if it had lock evidence), then its parsed SourceCode again with
// the pre-check on; the findings must be the same file by file, and every module the pre-check rules out must have
// given facts with no lock, lease, claim, scan, recovery or helper in them.
import { readFileSync } from "node:fs";
import tsParser from "@typescript-eslint/parser";
import { Linter as Linter10 } from "eslint";
import { Linter as Linter9 } from "eslint-v9";
import { describe, expect, it } from "vitest";
import { displayPath, listCorpus, repoRoot } from "../../bench/corpus.js";
import { fetchAppCorpus } from "../../bench/app-corpus.js";
import plugin from "../../src/index.js";
import { onLockFacts } from "../../src/rule-kit/inventory.js";
import type { LockFacts } from "../../src/core/model/lock-facts.js";

process.env["LOCKS_DEBUG"] = "1";

const corpus = listCorpus();
fetchAppCorpus();
const applications = listCorpus({ corpus: "application" });
/** ESLint 9 sample size: enough to reach every package, a tenth of the time. */
const ESLINT9_SAMPLE = 300;

/** Counts the files the rules ran on: an ignored or unmatched file would otherwise pass without being linted. */
let linted = 0;
/** What the whole read of the current file found that a rule could use (see `lockContent`). */
let content: string[] = [];
/** Whether the pre-check ruled the current file out: the inventory gave the probe no listener. */
let ruledOut = false;

/**
 * The parts of the facts that hold anything a rule reads: every list but the raw accesses (`writes`, `reads`,
 * `kv.ops`), which make nothing on their own, and the summaries of exported helpers (`helpers`: a module's
 * `headers.set(…)` wrapper), which only the audit reads, and the audit reads every module whole. Named with their
 * sizes, for the failure message.
 */
function lockContent(facts: LockFacts): string[] {
  const out: string[] = [];
  const visit = (value: unknown, path: string) => {
    if (Array.isArray(value)) {
      if (value.length > 0) out.push(`${path} ${value.length}`);
    } else if (value && typeof value === "object") {
      visitAll(value, path);
    }
  };
  const skip = new Set(["writes", "reads", "helpers", "kv.ops"]);
  const visitAll = (value: object, path: string) => {
    for (const [k, v] of Object.entries(value)) {
      const at = path ? `${path}.${k}` : k;
      if (!skip.has(at)) visit(v, at);
    }
  };
  visitAll(facts, "");
  return out;
}

const probe = {
  rules: {
    files: { meta: { type: "problem", schema: [] }, create: () => ({ Program: () => void linted++ }) },
    facts: {
      meta: { type: "problem", schema: [] },
      create: (context: never) => onLockFacts(context, (facts) => void (content = lockContent(facts))),
    },
    gate: {
      meta: { type: "problem", schema: [] },
      create: (context: never) => {
        const listeners = onLockFacts(context, () => undefined);
        ruledOut = Object.keys(listeners).length === 0;
        return listeners;
      },
    },
  },
};

const base = [
  { ignores: ["!**/node_modules/"] }, // the corpus is installed there, which ESLint ignores by default
  { files: ["**/*.{js,mjs,cjs,ts,mts,cts}"], languageOptions: { parser: tsParser } },
  plugin.configs.strict,
] as const;
/** Every module read whole: what the rules find without the pre-check. */
const whole = [
  ...base,
  {
    plugins: { probe },
    rules: { "probe/files": "error", "probe/facts": "error" },
    settings: { locksAllModules: true },
  },
] as never;
/** The pre-check on, as users run it. */
const config = [...base, { plugins: { probe }, rules: { "probe/gate": "error" } }] as never;

interface Problem {
  readonly file: string;
  readonly detail: string;
}

/** A finding as the equivalence compares it. */
function shown(m: {
  ruleId: string | null;
  line: number;
  column: number;
  messageId?: string;
  message: string;
}): string {
  return `${m.line}:${m.column} ${m.ruleId ?? ""} ${m.messageId ?? m.message}`;
}

function lintAll(
  linter: Linter10,
  files: readonly string[],
): { crashes: Problem[]; unparsed: Problem[]; differ: Problem[]; unsound: Problem[] } {
  const crashes: Problem[] = [];
  const unparsed: Problem[] = [];
  const differ: Problem[] = [];
  const unsound: Problem[] = [];
  let skipped = 0;
  linted = 0;
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    try {
      content = [];
      const messages = linter.verify(text, whole, { filename: file, allowInlineConfig: false });
      const fatal = messages.find((m) => m.fatal);
      if (fatal) {
        unparsed.push({ file: displayPath(file), detail: `${fatal.line}:${fatal.column} ${fatal.message}` });
        continue;
      }
      const found = content;
      const gated = linter.verify(linter.getSourceCode()!, config, { filename: file, allowInlineConfig: false });
      if (ruledOut) skipped++;
      const [a, b] = [messages.map(shown).join("\n"), gated.map(shown).join("\n")];
      if (a !== b) differ.push({ file: displayPath(file), detail: `whole:\n${a}\npre-checked:\n${b}` });
      if (ruledOut && found.length > 0) unsound.push({ file: displayPath(file), detail: found.join(", ") });
    } catch (error) {
      const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
      crashes.push({ file: displayPath(file), detail: stack.split("\n").slice(0, 12).join("\n") });
    }
  }
  expect(linted + unparsed.length + crashes.length, "files the rules ran on").toBe(files.length);
  // Not a vacuous equivalence: the pre-check rules out some files of every package of any size.
  if (files.length >= 50) expect(skipped, "files the pre-check ruled out").toBeGreaterThan(0);
  return { crashes, unparsed, differ, unsound };
}

function report(kind: string, problems: readonly Problem[]): string {
  return `${problems.length} file(s) ${kind}:\n${problems.map((p) => `--- ${p.file}\n${p.detail}`).join("\n")}`;
}

function expectClean({ crashes, unparsed, differ, unsound }: ReturnType<typeof lintAll>): void {
  expect(crashes.length, report("made a rule throw", crashes)).toBe(0);
  // A file that does not parse is not checked at all: the corpus settings (bench/corpus.json) must keep such files out.
  expect(unparsed.length, report("did not parse", unparsed)).toBe(0);
  expect(differ.length, report("gave other findings with the pre-check", differ)).toBe(0);
  expect(unsound.length, report("were ruled out by the pre-check but hold lock facts", unsound)).toBe(0);
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
