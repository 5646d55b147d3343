/** `--format text`: the lock inventory as a table, then the findings, one per line (file:line:column). */
import type { Answer } from "../../core/facts/summary.js";
import type { AuditResult } from "../pair.js";

const MARK = { answered: "ok", unanswered: "NO", "not-applicable": "-" } as const;

function cell(q: Answer): string {
  // A "how" that already names its line in this module needs no "(line N)" after it.
  const named = q.at && q.how.includes(`line ${q.at.line}`);
  return `${MARK[q.status]} ${q.how}${q.file || named ? "" : q.at && q.status !== "not-applicable" ? ` (line ${q.at.line})` : ""}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

export function formatText(result: AuditResult): string {
  const lines: string[] = [];
  const warnings = result.findings.filter((f) => f.severity === "warning").length;
  lines.push(
    `locks-audit: ${result.modules} modules, ${result.locks.length} locks, ${result.findings.length - warnings} unanswered findings${warnings > 0 ? `, ${warnings} warnings` : ""}, ${result.answered.length} answered in another module${result.silenced.length > 0 ? `, ${result.silenced.length} silenced` : ""}`,
  );
  if (result.locks.length > 0) {
    lines.push("", "Lock inventory");
    lines.push(
      table([
        ["where", "kind", "lock", "Q1 who unlocks", "Q2 alive or dead", "Q3 race-safe release"],
        ...result.locks.map((l) => [`${l.file}:${l.acquire.line}`, l.kind, l.name, cell(l.q1), cell(l.q2), cell(l.q3)]),
      ]),
    );
  }
  if (result.findings.length > 0) {
    lines.push("", "Findings");
    for (const f of result.findings)
      lines.push(
        `${f.file}:${f.line}:${f.column}  ${f.severity === "warning" ? "warning  " : ""}${f.ruleId}  ${f.message}`,
      );
  }
  if (result.answered.length > 0) {
    lines.push("", "Answered in another module");
    for (const f of result.answered)
      lines.push(`${f.file}:${f.line}:${f.column}  ${f.ruleId}  answered by ${f.answeredBy.how}`);
  }
  if (result.silenced.length > 0) {
    lines.push("", "Silenced by a disable comment");
    for (const f of result.silenced)
      lines.push(
        `${f.file}:${f.line}:${f.column}  ${f.ruleId}  ${f.justification ? `-- ${f.justification}` : "(no reason given)"}`,
      );
  }
  return `${lines.join("\n")}\n`;
}
