/**
 * `--format markdown`: a review comment. One checklist per lock (each question ticked when answered, with where),
 * then the unanswered findings. Paths are relative to the project root; nothing in it is HTML.
 */
import type { Answer } from "../../core/facts/summary.js";
import type { AuditLock, AuditResult } from "../pair.js";

const QUESTIONS = [
  ["q1", "Q1 if the holder dies, who unlocks?"],
  ["q2", "Q2 how do you tell alive from dead?"],
  ["q3", "Q3 is the release itself race-safe?"],
] as const;

/** Markdown-safe inline code. */
function code(text: string): string {
  const t = text.replace(/\s+/g, " ");
  return t.includes("`") ? `\`\` ${t} \`\`` : `\`${t}\``;
}

function escape(text: string): string {
  return text.replace(/([\\*_[\]<>|#])/g, "\\$1");
}

function answer(q: Answer, lock: AuditLock): string {
  const where = q.at && q.status !== "not-applicable" ? ` (${code(`${q.file ?? lock.file}:${q.at.line}`)})` : "";
  return `${escape(q.how)}${where}`;
}

export function formatMarkdown(result: AuditResult, options: { title?: string } = {}): string {
  const out: string[] = [];
  const open = result.locks.filter((l) => [l.q1, l.q2, l.q3].some((q) => q.status === "unanswered")).length;
  out.push(`### ${escape(options.title ?? "Lock audit")}`, "");
  out.push(
    `${result.locks.length} lock${result.locks.length === 1 ? "" : "s"}, ${open} with an open question; ${result.findings.length} unanswered finding${result.findings.length === 1 ? "" : "s"}.`,
    "",
  );
  for (const lock of result.locks) {
    out.push(`#### ${code(lock.name)} · ${lock.kind} · ${code(`${lock.file}:${lock.acquire.line}`)}`, "");
    for (const [key, label] of QUESTIONS) {
      const q = lock[key];
      const box = q.status === "unanswered" ? "[ ]" : "[x]";
      out.push(`- ${box} **${label}** ${q.status === "not-applicable" ? "n/a: " : ""}${answer(q, lock)}`);
    }
    out.push("");
  }
  if (result.findings.length > 0) {
    out.push("#### Findings", "");
    for (const f of result.findings)
      out.push(
        `- ${code(`${f.file}:${f.line}`)} ${code(f.ruleId)}${f.severity === "warning" ? " (warning)" : ""}: ${escape(f.message)}`,
      );
    out.push("");
  }
  if (result.answered.length > 0) {
    out.push("#### Answered in another module", "");
    for (const f of result.answered)
      out.push(`- ${code(`${f.file}:${f.line}`)} ${code(f.ruleId)}: ${escape(f.answeredBy.how)}`);
    out.push("");
  }
  if (result.silenced.length > 0) {
    out.push("#### Silenced by a disable comment", "");
    for (const f of result.silenced)
      out.push(
        `- ${code(`${f.file}:${f.line}`)} ${code(f.ruleId)}: ${f.justification ? escape(f.justification) : "**no reason given**"}`,
      );
    out.push("");
  }
  return out.join("\n");
}
