// `locks-audit --format sarif` validated against the SARIF 2.1.0 schema (vendored, see test/schemas/README.md)
// with a real validator: Ajv 6 and the draft-04 meta-schema the SARIF schema is written in.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import Ajv from "ajv";
import { describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import { runAudit } from "../../src/audit/index.js";
import { projects, repoRoot } from "./helpers.js";

const require = createRequire(import.meta.url);
const schema = JSON.parse(readFileSync(join(repoRoot, "test/schemas/sarif-2.1.0-rtm.5.json"), "utf8"));
const ajv = new Ajv({ schemaId: "id", allErrors: true, meta: false, validateSchema: true });
ajv.addMetaSchema(require("ajv/lib/refs/json-schema-draft-04.json"));
const validate = ajv.compile(schema);

describe("SARIF", () => {
  it.each(["false-directive", "plain-js", "claim-sweeper"])("%s: valid SARIF 2.1.0", async (name) => {
    const { output } = await runAudit({ cwd: join(projects, name), format: "sarif" });
    const log = JSON.parse(output);
    const ok = validate(log);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
    expect(log.version).toBe("2.1.0");
  });

  it("the validator does reject a broken log", () => {
    expect(validate({ version: "2.1.0", runs: [{ tool: { driver: {} } }] })).toBe(false);
  });

  it("describes every rule with its question and doc page, and places each result", async () => {
    const { output, result } = await runAudit({ cwd: join(projects, "false-directive"), format: "sarif" });
    const run = JSON.parse(output).runs[0];
    expect(run.tool.driver.name).toBe("locks-audit");
    const rules = new Map(run.tool.driver.rules.map((r: { id: string }) => [r.id, r]));
    for (const id of Object.keys(plugin.rules)) {
      expect(rules.get(`locks/${id}`)).toMatchObject({
        helpUri: `https://github.com/eslint-plugin-locks/eslint-plugin-locks/blob/main/docs/rules/${id}.md`,
      });
    }
    expect(rules.get("locks-audit/false-directive")).toMatchObject({
      shortDescription: {
        text: "Q1: A locks-recovered-by directive must name a module that holds a stale recovery of the claim.",
      },
      helpUri: "https://github.com/eslint-plugin-locks/eslint-plugin-locks/blob/main/docs/audit.md#false-directive",
    });
    expect(run.results).toHaveLength(result.findings.length);
    expect(run.results[0]).toMatchObject({
      ruleId: "locks-audit/false-directive",
      level: "error",
      message: { text: result.findings[0]!.message },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: "src/transcribe.ts", uriBaseId: "%SRCROOT%" },
            region: { startLine: 14, startColumn: 3 },
          },
        },
      ],
    });
  });
});
