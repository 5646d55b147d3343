// Lints every fixture with configs.recommended and configs.strict, under ESLint 10 and ESLint 9, and compares
// the exact set of (rule, line) with the `// expect: rule, rule` comments in the fixtures.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { ESLint as ESLint10 } from "eslint";
import { ESLint as ESLint9 } from "eslint-v9";
import { describe, expect, it } from "vitest";
import plugin from "../src/index.js";

const root = fileURLToPath(new URL("../fixtures/", import.meta.url));

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? fixtureFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : []);
}

/** `// expect: a, b` on a line: rules a and b report that line. */
function expectations(file: string): { rule: string; line: number }[] {
  const out: { rule: string; line: number }[] = [];
  readFileSync(file, "utf8").split("\n").forEach((text, i) => {
    const m = /\/\/ expect: ([\w-]+(?:, [\w-]+)*)\s*$/.exec(text);
    if (m) for (const rule of m[1]!.split(", ")) out.push({ rule: `locks/${rule}`, line: i + 1 });
  });
  return out;
}

// fixtures/projects/monorepo carries other plugins' disable comments and `eslint-env`, as real projects do: the
// plugin alone reports those as unknown rules, which is what locks-audit must not. Its expectations are checked
// through the audit (test/audit/monorepo.test.ts).
const files = fixtureFiles(root).filter((f) => !relative(root, f).startsWith("projects/monorepo/"));
const majors = [
  ["ESLint 10", ESLint10],
  ["ESLint 9", ESLint9],
] as const;

describe.each(majors)("fixtures under %s", (_name, ESLintClass) => {
  describe.each(["recommended", "strict"] as const)("configs.%s", (configName) => {
    const config = plugin.configs[configName];
    const eslint = new (ESLintClass as typeof ESLint10)({
      cwd: root,
      overrideConfigFile: true,
      overrideConfig: [
        { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
        config as never,
      ],
    });
    it.each(files.map((f) => [relative(root, f), f]))("%s", async (_rel, file) => {
      const [result] = await eslint.lintFiles([file]);
      const actual = result!.messages.map((m) => ({ rule: m.ruleId ?? `fatal: ${m.message}`, line: m.line }));
      const expected = expectations(file).filter((e) => e.rule in config.rules);
      const key = (x: { rule: string; line: number }) => `${x.line} ${x.rule}`;
      expect(actual.map(key).sort()).toEqual(expected.map(key).sort());
    });
  });
});

it("finds at least one expectation for every rule across the fixtures", () => {
  const seen = new Set(files.flatMap((f) => expectations(f).map((e) => e.rule)));
  for (const id of Object.keys(plugin.rules)) expect(seen).toContain(`locks/${id}`);
});
