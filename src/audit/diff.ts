/**
 * `--diff <ref>`: keep the locks a change touches. Changed lines come from `git diff --unified=0 <ref>` (the work
 * tree against the ref, so committed and uncommitted edits both count) plus untracked files, whole. A lock is kept
 * when its acquire or the place that answers, or fails to answer, one of its questions (its recovery, its release,
 * its directive; in any module) touches a changed line; a finding is kept when it touches one or belongs to a kept lock.
 */
import { execFileSync } from "node:child_process";
import { resolve, sep } from "node:path";
import type { Span } from "../core/facts/summary.js";
import { AuditError } from "./discover.js";
import type { AuditFinding, AuditLock, AuditResult } from "./pair.js";

/** Changed line ranges (1-based, inclusive) by absolute path. */
export type ChangedLines = Map<string, [number, number][]>;

function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export function changedLines(root: string, ref: string): ChangedLines {
  let top: string;
  try {
    top = git(root, ["rev-parse", "--show-toplevel"]).trim();
  } catch {
    throw new AuditError(`--diff needs a git repository, and ${root} is not in one`);
  }
  if (ref.startsWith("-")) throw new AuditError(`--diff ${ref}: not a git ref`);
  try {
    git(root, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
  } catch {
    throw new AuditError(
      `--diff ${ref}: no such commit, branch or tag in this repository (fetch it first, e.g. git fetch origin ${ref})`,
    );
  }
  const out: ChangedLines = new Map();
  let current: [number, number][] | undefined;
  for (const line of git(root, ["diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-renames", ref, "--"]).split(
    "\n",
  )) {
    if (line.startsWith("+++ ")) {
      const name = line.slice(4);
      if (name === "/dev/null") current = undefined;
      else {
        const path = resolve(top, name.replace(/^b\//, ""));
        current = out.get(path) ?? [];
        out.set(path, current);
      }
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk && current) {
      const start = Number(hunk[1]);
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      // A pure deletion touches the lines around the gap it leaves.
      current.push(count === 0 ? [Math.max(1, start), start + 1] : [start, start + count - 1]);
    }
  }
  for (const name of git(root, ["ls-files", "--others", "--exclude-standard", "--full-name"]).split("\n")) {
    if (name) out.set(resolve(top, name.split("/").join(sep)), [[1, Number.MAX_SAFE_INTEGER]]);
  }
  return out;
}

export function filterByDiff(result: AuditResult, changed: ChangedLines): AuditResult {
  const touches = (file: string, span: Pick<Span, "line" | "endLine">): boolean =>
    (changed.get(resolve(result.root, file)) ?? []).some(([a, b]) => span.line <= b && a <= span.endLine);
  const placesOf = (lock: AuditLock): { file: string; span: Span }[] => [
    { file: lock.file, span: lock.acquire },
    ...[lock.q1, lock.q2, lock.q3].flatMap((q) => (q.at ? [{ file: q.file ?? lock.file, span: q.at }] : [])),
    ...(lock.directive ? [{ file: lock.file, span: lock.directive.at }] : []),
  ];
  const locks = result.locks.filter((lock) => placesOf(lock).some((p) => touches(p.file, p.span)));
  const kept = new Set(locks.flatMap((lock) => placesOf(lock).map((p) => `${p.file}:${p.span.line}`)));
  const keep = (f: AuditFinding) => touches(f.file, f) || kept.has(`${f.file}:${f.line}`);
  return {
    ...result,
    locks,
    findings: result.findings.filter(keep),
    answered: result.answered.filter(keep),
    silenced: result.silenced.filter(keep),
  };
}
