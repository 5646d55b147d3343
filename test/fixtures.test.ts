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
import { expectMarkers, unreadableMarkers, type Expectation } from "./expect-markers.js";

const root = fileURLToPath(new URL("../fixtures/", import.meta.url));

function fixtureFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? fixtureFiles(join(dir, e.name)) : /\.(ts|js)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** The `// expect:` markers of a fixture file. */
function expectations(file: string): Expectation[] {
  return expectMarkers(readFileSync(file, "utf8"));
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
      // readImports: the editor reads imported helpers (opt-in), so fixtures/projects/lock-helpers reads as the audit.
      overrideConfig: [
        { files: ["**/*.ts"], languageOptions: { parser: tsParser } },
        config as never,
        { settings: { locks: { readImports: true } } },
      ],
    });
    it.each(files.map((f) => [relative(root, f), f]))("%s", async (_rel, file) => {
      const [result] = await eslint.lintFiles([file]);
      const actual = result!.messages.map((m) => ({ rule: m.ruleId ?? `fatal: ${m.message}`, line: m.line }));
      const expected = expectations(file).filter((e) => e.rule in config.rules);
      const key = (x: { rule: string; line: number }) => `${x.line} ${x.rule}`;
      expect(actual.map(key).sort()).toEqual(expected.map(key).sort());
      // A suggestion pinned in the fixture: offered as named, and applying it answers the finding (one fewer of
      // the rule's findings, and code that still parses).
      const code = readFileSync(file, "utf8");
      for (const e of expected.filter((x) => x.suggestions)) {
        const message = result!.messages.find((m) => m.ruleId === e.rule && m.line === e.line)!;
        expect((message.suggestions ?? []).map((x) => x.messageId)).toEqual(e.suggestions);
        for (const suggestion of message.suggestions ?? []) {
          let applied = code;
          for (const fix of [suggestion.fix].flat().sort((a, b) => b.range[0] - a.range[0]))
            applied = applied.slice(0, fix.range[0]) + fix.text + applied.slice(fix.range[1]);
          const [after] = await eslint.lintText(applied, { filePath: file });
          expect(after!.messages.filter((m) => m.fatal)).toEqual([]);
          const count = (messages: readonly { ruleId: string | null }[]) =>
            messages.filter((m) => m.ruleId === e.rule).length;
          expect(count(after!.messages)).toBe(count(result!.messages) - 1);
        }
      }
    });
  });
});

it("reads every // expect: marker as a rule of the plugin (a misspelt one fails, it is not dropped)", () => {
  const known = new Set(Object.keys(plugin.rules).map((id) => `locks/${id}`));
  const unknown = files.flatMap((f) =>
    expectations(f)
      .filter((e) => !known.has(e.rule))
      .map((e) => `${relative(root, f)}:${e.line} ${e.rule}`),
  );
  const unreadable = files.flatMap((f) =>
    unreadableMarkers(readFileSync(f, "utf8")).map((line) => `${relative(root, f)}:${line}`),
  );
  expect([...unknown, ...unreadable]).toEqual([]);
});

it("finds at least one expectation for every rule across the fixtures", () => {
  const seen = new Set(files.flatMap((f) => expectations(f).map((e) => e.rule)));
  for (const id of Object.keys(plugin.rules)) expect(seen).toContain(`locks/${id}`);
});
