/** `--format json`: the whole result, locks as a list; stable field names (documented in docs/audit.md). */
import type { AuditResult } from "../pair.js";

export function formatJson(result: AuditResult): string {
  const { root: _root, ...rest } = result;
  return `${JSON.stringify({ version: 1, ...rest, summary: { locks: result.locks.length, findings: result.findings.length, answered: result.answered.length } }, null, 2)}\n`;
}
