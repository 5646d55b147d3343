// Each rule's doc page: its header matches meta.docs.description, it names its question, and its examples
// behave as they say: every "Incorrect" block is reported by the rule, every "Correct" block is clean under
// configs.strict.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { Linter } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../src/index.js";

const docsDir = fileURLToPath(new URL("../docs/rules/", import.meta.url));
const linter = new Linter({ configType: "flat" });
const config = [
  { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
  plugin.configs.strict,
] as Linter.Config[];

/** Code blocks under the "### ❌ Incorrect" and "### ✅ Correct" headings. */
function examples(markdown: string): { incorrect: string[]; correct: string[] } {
  const out = { incorrect: [] as string[], correct: [] as string[] };
  let section: "incorrect" | "correct" | undefined;
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("#"))
      section = /Incorrect/.test(line) ? "incorrect" : /Correct/.test(line) ? "correct" : undefined;
    else if (section && /^```(ts|js)$/.test(line)) {
      const end = lines.indexOf("```", i + 1);
      out[section].push(lines.slice(i + 1, end).join("\n"));
      i = end;
    }
  }
  return out;
}

describe.each(Object.entries(plugin.rules))("docs/rules/%s.md", (id, rule) => {
  const markdown = readFileSync(`${docsDir}${id}.md`, "utf8");
  const { incorrect, correct } = examples(markdown);

  it("starts with the rule's description and names its question", () => {
    expect(markdown.split("\n")[0]).toBe(`# ${rule.meta.docs.description} (\`locks/${id}\`)`);
    expect(markdown).toContain(`**${rule.meta.docs.question} ·`);
    expect(incorrect.length).toBeGreaterThan(0);
    expect(correct.length).toBeGreaterThan(0);
  });

  it.each(incorrect.map((code, i) => [i + 1, code]))("incorrect example %i is reported by the rule", (_i, code) => {
    const messages = linter.verify(code as string, config, "example.ts");
    expect(messages.filter((m) => m.fatal)).toEqual([]);
    expect(messages.map((m) => m.ruleId)).toContain(`locks/${id}`);
  });

  it.each(correct.map((code, i) => [i + 1, code]))("correct example %i is clean under configs.strict", (_i, code) => {
    expect(linter.verify(code as string, config, "example.ts")).toEqual([]);
  });
});

describe("docs/stores.md", () => {
  const markdown = readFileSync(fileURLToPath(new URL("../docs/stores.md", import.meta.url)), "utf8");
  const examples = [...markdown.matchAll(/## ([^\n]+)\n```(?:ts|js)\n([\s\S]*?)```/g)].map(
    (m) => [m[1]!, m[2]!] as const,
  );

  it("has one example per store", () => {
    // Every store's section (those before the effects and the lock shapes) opens with its example.
    const sections = [...markdown.split("## Object storage and files")[0]!.matchAll(/^## ([^\n]+)$/gm)].map(
      (m) => m[1],
    );
    expect(sections.length).toBeGreaterThanOrEqual(12);
    expect(examples.map(([store]) => store)).toEqual(sections);
  });

  it.each(examples)("the %s example is reported as the page says", (store, code) => {
    const ruleIds = linter.verify(code, config, "example.ts").map((m) => m.ruleId);
    expect(ruleIds).toContain(store === "Redis" ? "locks/require-lock-ttl" : "locks/require-stale-recovery");
  });
});

describe("docs/proof.md and the proof programs", () => {
  const root = fileURLToPath(new URL("../", import.meta.url));
  const scenarios = readdirSync(`${root}proof`, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name);

  it("every proof program is copied unchanged into its rule page (scripts/proof-docs.js --check)", () => {
    const run = spawnSync(process.execPath, ["scripts/proof-docs.js", "--check"], { cwd: root, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
  });

  it.each(scenarios)("scenario %s has a flagged and a fixed program, a test, and a section in docs/proof.md", (id) => {
    expect(readdirSync(`${root}proof/${id}`)).toEqual(expect.arrayContaining(["fixed.js", "flagged.js"]));
    expect(existsSync(`${root}test/proof/${id}.test.ts`)).toBe(true);
    expect(readFileSync(`${root}docs/proof.md`, "utf8")).toContain(`<a id="${id}"></a>`);
  });
});
