// The rdjson formatter (eslint-plugin-locks/rdjson): reviewdog's diagnostic format, with each finding's first
// suggestion as a suggested change. Checked against the shape reviewdog documents for rdjson (DiagnosticResult:
// source, diagnostics with message, location.path and range, severity, code, suggestions with range and text),
// written here as a JSON schema of our own, and by applying each suggestion to the source.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import tsParser from "@typescript-eslint/parser";
import Ajv from "ajv";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import rdjson, { type RdjsonResult } from "../../src/formatters/rdjson.js";
import { repoRoot } from "./helpers.js";

const position = {
  type: "object",
  required: ["line"],
  additionalProperties: false,
  properties: { line: { type: "integer", minimum: 1 }, column: { type: "integer", minimum: 1 } },
};
const range = {
  type: "object",
  required: ["start"],
  additionalProperties: false,
  properties: { start: position, end: position },
};
const rdjsonSchema = {
  type: "object",
  required: ["diagnostics"],
  additionalProperties: false,
  properties: {
    source: { type: "object", required: ["name"], properties: { name: { type: "string" }, url: { type: "string" } } },
    severity: { enum: ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"] },
    diagnostics: {
      type: "array",
      items: {
        type: "object",
        required: ["message", "location"],
        additionalProperties: false,
        properties: {
          message: { type: "string", minLength: 1 },
          location: {
            type: "object",
            required: ["path"],
            additionalProperties: false,
            properties: { path: { type: "string" }, range },
          },
          severity: { enum: ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"] },
          source: { type: "object" },
          code: {
            type: "object",
            required: ["value"],
            additionalProperties: false,
            properties: { value: { type: "string" }, url: { type: "string" } },
          },
          suggestions: {
            type: "array",
            items: {
              type: "object",
              required: ["range", "text"],
              additionalProperties: false,
              properties: { range, text: { type: "string" } },
            },
          },
          original_output: { type: "string" },
        },
      },
    },
  },
};
const validate = new Ajv({ allErrors: true }).compile(rdjsonSchema);

const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfigFile: true,
  overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tsParser } }, plugin.configs.strict as never],
});

/** Applies an rdjson range (1-based line, UTF-8 byte column, end exclusive) to `text`. */
function apply(text: string, r: RdjsonResult["diagnostics"][number]["suggestions"] & object, i = 0): string {
  const lines = text.split("\n");
  const offset = (p: { line: number; column: number }) => {
    const before = lines.slice(0, p.line - 1).reduce((n, l) => n + l.length + 1, 0);
    return (
      before +
      Buffer.from(lines[p.line - 1]!, "utf8")
        .subarray(0, p.column - 1)
        .toString("utf8").length
    );
  };
  const s = r[i]!;
  return text.slice(0, offset(s.range.start as never)) + s.text + text.slice(offset(s.range.end as never));
}

describe("rdjson formatter", () => {
  it("formats the fixtures as rdjson, carrying the first suggestion of each finding", async () => {
    const files = [
      "fixtures/redis-locks/cron-no-ttl.ts",
      "fixtures/audio-generation/wedged.ts",
      "fixtures/racy-recovery/export-worker.ts",
    ].map((f) => join(repoRoot, f));
    const results = await eslint.lintFiles(files);
    const out = JSON.parse(
      rdjson(results, { cwd: repoRoot, rulesMeta: eslint.getRulesMetaForResults(results) } as never),
    ) as RdjsonResult;
    expect(validate(out)).toBe(true);
    expect(validate.errors ?? null).toBeNull();
    const all = results.flatMap((r) => r.messages.map((m) => ({ r, m })));
    expect(out.diagnostics).toHaveLength(all.length);
    expect(all.some(({ m }) => m.suggestions?.length)).toBe(true);
    for (const [i, { r, m }] of all.entries()) {
      const d = out.diagnostics[i]!;
      expect(d).toMatchObject({
        message: m.message,
        severity: "ERROR",
        code: { value: m.ruleId, url: expect.stringMatching(/docs\/rules\//) },
      });
      expect(d.location.path).toBe(r.filePath.slice(repoRoot.length));
      const s = m.suggestions?.[0];
      if (!s) {
        expect(d.suggestions).toBeUndefined();
        continue;
      }
      // The suggested change, applied as reviewdog applies it, gives ESLint's own suggestion output.
      const source = readFileSync(r.filePath, "utf8");
      const expected = source.slice(0, s.fix.range[0]) + s.fix.text + source.slice(s.fix.range[1]);
      expect(apply(source, d.suggestions!)).toBe(expected);
    }
  });

  it("counts columns in UTF-8 bytes, as rdjson does", async () => {
    const code = `const note = "déjà"; export async function go(id: string) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); }\n`;
    const results = await eslint.lintText(code, { filePath: join(repoRoot, "fixtures/x.ts") });
    const [d] = JSON.parse(rdjson(results, { cwd: repoRoot, rulesMeta: {} } as never))
      .diagnostics as RdjsonResult["diagnostics"];
    const m = results[0]!.messages.find((x) => x.ruleId === "locks/require-stale-recovery")!;
    expect(d!.location.range.start).toEqual({ line: 1, column: m.column + 2 }); // é and à are two bytes each
  });

  it("is the package's ./rdjson export", async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    expect(pkg.exports["./rdjson"]).toEqual({
      types: "./dist/src/formatters/rdjson.d.ts",
      default: "./dist/src/formatters/rdjson.js",
    });
    const mod = await import("eslint-plugin-locks/rdjson");
    expect(typeof mod.default).toBe("function");
  });
});
