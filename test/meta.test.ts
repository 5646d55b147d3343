// The plugin's shape: every rule registered under its file name, documented, in the right configs, schema pinned.
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Linter } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../src/index.js";

const rulesDir = fileURLToPath(new URL("../rules/", import.meta.url));
const docsDir = fileURLToPath(new URL("../docs/rules/", import.meta.url));
const ruleFiles = readdirSync(rulesDir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.slice(0, -3))
  .sort();
const entries = Object.entries(plugin.rules);

describe("plugin", () => {
  it("has meta with name, version and the locks namespace", () => {
    expect(plugin.meta).toEqual({
      name: "eslint-plugin-locks",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      namespace: "locks",
    });
  });

  it("registers every file in rules/ under its file name, and nothing else", () => {
    expect(Object.keys(plugin.rules).sort()).toEqual(ruleFiles);
  });

  it("derives configs.recommended from meta.docs.recommended and puts every rule in configs.strict", () => {
    const recommended = entries
      .filter(([, r]) => r.meta.docs.recommended)
      .map(([id]) => `locks/${id}`)
      .sort();
    expect(Object.keys(plugin.configs.recommended.rules).sort()).toEqual(recommended);
    expect(Object.keys(plugin.configs.strict.rules).sort()).toEqual(entries.map(([id]) => `locks/${id}`).sort());
    expect(plugin.configs.recommended.rules).not.toHaveProperty("locks/require-fencing");
    expect(plugin.configs.recommended.plugins.locks).toBe(plugin);
  });

  it('resolves extends: ["locks/recommended"] in defineConfig through its namespace', async () => {
    const { defineConfig } = await import("eslint/config");
    const { ESLint } = await import("eslint");
    const eslint = new ESLint({
      overrideConfigFile: true,
      overrideConfig: defineConfig([
        { files: ["**/*.js"], plugins: { locks: plugin as never }, extends: ["locks/recommended"] },
      ]),
    });
    const code = `async function s(id) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); }`;
    const [result] = await eslint.lintText(code, { filePath: "x.js" });
    expect(result!.messages.map((m) => m.ruleId)).toEqual(["locks/require-stale-recovery"]);
  });

  it("returns the same plugin object to require()", () => {
    const require = createRequire(import.meta.url);
    const required = require("../dist/src/index.js") as unknown;
    expect((required as { meta: unknown }).meta).toEqual(plugin.meta);
    expect(Object.keys((required as { rules: object }).rules).sort()).toEqual(ruleFiles);
  });
});

describe.each(entries)("rule %s", (id, rule) => {
  it("is documented, with a verb-first description and its question", () => {
    expect(rule.meta.docs.description).toMatch(/^(Require|Disallow|Enforce) /);
    expect(rule.meta.docs.url).toMatch(new RegExp(`/docs/rules/${id}\\.md$`));
    expect(existsSync(`${docsDir}${id}.md`)).toBe(true);
    expect(["Q1", "Q2", "Q3"]).toContain(rule.meta.docs.question);
  });

  it("has messages that are full sentences naming their question", () => {
    for (const [messageId, text] of Object.entries(rule.meta.messages as Record<string, string>)) {
      expect(text, messageId).toMatch(/^[A-Z]/);
      expect(text, messageId).toMatch(/\.$/);
    }
    const reports = Object.values(rule.meta.messages as Record<string, string>).filter((t) => /^Q\d/.test(t));
    expect(reports.length).toBeGreaterThan(0);
    for (const text of reports) expect(text.slice(0, 2)).toBe(rule.meta.docs.question);
  });

  it("has a pinned option schema", () => {
    expect(rule.meta.schema).toMatchSnapshot();
  });
});

describe("configuration errors", () => {
  const linter = new Linter({ configType: "flat" });
  it("rejects an unknown rule option with a schema error", () => {
    expect(() =>
      linter.verify("x()", [
        { plugins: { locks: plugin }, rules: { "locks/progress-based-staleness": ["error", { startTime: ["x"] }] } },
      ] as never),
    ).toThrow(/progress-based-staleness[\s\S]*additional properties/i);
  });

  it("rejects a malformed settings.locks with a message naming the key", () => {
    const config = [
      {
        plugins: { locks: plugin },
        settings: { locks: { progressFields: ["x"] } },
        rules: { "locks/require-stale-recovery": "error" },
      },
    ];
    const code = `prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });`;
    expect(() => linter.verify(code, config as never)).toThrow(/settings\.locks\.progressFields/);
  });
});
