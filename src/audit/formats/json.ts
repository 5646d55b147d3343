/** `--format json`: the whole result, locks as a list; stable field names (documented in docs/audit.md). */
import type { AuditResult } from "../pair.js";

export function formatJson(result: AuditResult): string {
  // Paths are project-relative; the absolute root would make the output depend on the machine.
  const body = {
    version: 1,
    modules: result.modules,
    locks: result.locks,
    findings: result.findings,
    answered: result.answered,
    silenced: result.silenced,
  };
  const warnings = result.findings.filter((f) => f.severity === "warning").length;
  const summary = {
    locks: result.locks.length,
    findings: result.findings.length,
    errors: result.findings.length - warnings,
    warnings,
    answered: result.answered.length,
    silenced: result.silenced.length,
  };
  return `${JSON.stringify({ ...body, summary }, null, 2)}\n`;
}
