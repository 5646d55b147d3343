/**
 * `--format sarif`: SARIF 2.1.0 for GitHub code scanning, built with node-sarif-builder (the log, run, rule and
 * result objects and their required fields come from the library, typed by @types/sarif). Every rule that can
 * report is described with its question and its doc page (`helpUri`); results carry project-relative URIs under
 * the `%SRCROOT%` base, which code scanning resolves against the repository checkout. Validated against the SARIF
 * 2.1.0 schema in test/audit/sarif.test.ts.
 */
import { SarifBuilder, SarifResultBuilder, SarifRuleBuilder, SarifRunBuilder } from "node-sarif-builder";
import plugin from "../../index.js";
import { REPOSITORY_URL } from "../../rule-kit/create-rule.js";
import { AUDIT_RULES, type AuditResult } from "../pair.js";

export function formatSarif(result: AuditResult): string {
  const run = new SarifRunBuilder().initSimple({
    toolDriverName: "locks-audit",
    toolDriverVersion: plugin.meta.version,
    url: `${REPOSITORY_URL}/blob/main/docs/audit.md`,
  });
  for (const [id, rule] of Object.entries(plugin.rules)) {
    const docs = rule.meta.docs;
    run.addRule(
      new SarifRuleBuilder().initSimple({
        ruleId: `locks/${id}`,
        shortDescriptionText: `${docs.question}: ${docs.description}.`,
        ...(docs.url ? { helpUri: docs.url } : {}),
      }),
    );
  }
  for (const [id, rule] of Object.entries(AUDIT_RULES)) {
    run.addRule(
      new SarifRuleBuilder().initSimple({
        ruleId: id,
        shortDescriptionText: `${rule.question}: ${rule.description}.`,
        helpUri: `${REPOSITORY_URL}/blob/main/docs/audit.md#${id.replace("locks-audit/", "")}`,
      }),
    );
  }
  // Silenced findings are results with an in-source suppression: code scanning shows them as dismissed, with the reason.
  for (const f of [...result.findings, ...result.silenced]) {
    const r = new SarifResultBuilder().initSimple({
      level: f.severity === "warning" ? "warning" : "error",
      messageText: f.message,
      ruleId: f.ruleId,
      fileUri: f.file,
      startLine: f.line,
      startColumn: f.column,
      endLine: f.endLine,
      endColumn: f.endColumn,
    });
    const location = r.result.locations?.[0]?.physicalLocation?.artifactLocation;
    if (location) location.uriBaseId = "%SRCROOT%";
    const justification = "justification" in f ? (f as { justification: string }).justification : undefined;
    if (justification !== undefined)
      r.result.suppressions = [{ kind: "inSource", ...(justification ? { justification } : {}) }];
    run.addResult(r);
  }
  run.run.columnKind = "utf16CodeUnits";
  const builder = new SarifBuilder();
  builder.addRun(run);
  return `${builder.buildSarifJsonString({ indent: true })}\n`;
}
