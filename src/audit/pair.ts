/**
 * Pairing across modules. Each module's summary lists its locks and the recoveries it offers, both keyed by
 * (model, field, value) as `src/core/facts/pairing/` pairs within one module. A claim the rules left without a recovery
 * is answered when another module recovers the same key; the answer names that module and line. A
 * `locks-recovered-by` directive is checked against the module it names. The rules' findings stay as they are,
 * except `require-stale-recovery` on a claim answered elsewhere, which moves to `answered`.
 */
import type { ESLint } from "eslint";
import type { Answer, LockSummary, RecoverySummary, Span } from "../core/facts/summary.js";
import type { Project } from "./discover.js";
import type { LintedModule } from "./lint.js";

export interface AuditLock extends LockSummary {
  readonly file: string;
}

export interface AuditFinding {
  readonly ruleId: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
  readonly message: string;
  /**
   * "error" for every lock finding; an unused `locks/*` disable directive has the severity the project's
   * `reportUnusedDisableDirectives` gives it. Warnings do not fail the audit unless `--max-warnings` says so.
   */
  readonly severity: "error" | "warning";
  /** The first suggestion ESLint offered, when there is one. */
  readonly suggestion?: { readonly desc: string; readonly range: readonly [number, number]; readonly text: string };
}

export interface AnsweredFinding extends AuditFinding {
  readonly answeredBy: { readonly file: string; readonly line: number; readonly how: string };
}

/** A lock finding a disable comment silences, with the reason the comment gives (empty when it gives none). */
export interface SilencedFinding extends AuditFinding {
  readonly justification: string;
}

/**
 * A `locks-recovered-by` directive `locks-audit --fix` writes (fix.ts): `add` one above the claim at `at` naming
 * `target`, the module the audit paired its stale recovery with; `point` the false directive at `at` to `target`;
 * `remove` the false directive at `at` (no module recovers the claim). `file` and `target` are project-relative.
 */
export interface DirectiveFix {
  readonly file: string;
  readonly action: "add" | "point" | "remove";
  readonly at: Span;
  readonly target?: string;
}

export interface AuditResult {
  readonly root: string;
  readonly modules: number;
  readonly locks: readonly AuditLock[];
  /** Unanswered: the exit status is 1 when any remain. */
  readonly findings: readonly AuditFinding[];
  /** Rule findings that another module answers. */
  readonly answered: readonly AnsweredFinding[];
  /** Rule findings silenced by a `locks/*` disable comment: not findings, listed so a reviewer sees each reason. */
  readonly silenced: readonly SilencedFinding[];
  /** The directives `--fix` writes or removes. */
  readonly directives: readonly DirectiveFix[];
}

/** Findings only the audit can make (it sees every module); their ids are documented in docs/audit.md. */
export const AUDIT_RULES = {
  "locks-audit/false-directive": {
    question: "Q1",
    description: "A locks-recovered-by directive must name a module that holds a stale recovery of the claim",
  },
  "locks-audit/remote-staleness": {
    question: "Q2",
    description: "A stale recovery in another module must judge age by a progress timestamp, not a start time",
  },
  "locks-audit/remote-race": {
    question: "Q3",
    description: "A stale recovery in another module must be a conditional update, like the claim",
  },
  "locks-audit/parse-error": {
    question: "Q1",
    description: "Every module of the project must parse, or its locks go unaudited",
  },
  "locks-audit/unused-disable-directive": {
    question: "Q1",
    description:
      "A disable comment for a locks/* rule must still silence a finding (reported when the project's ESLint config sets reportUnusedDisableDirectives)",
  },
} as const;

interface Candidate {
  readonly file: string;
  readonly path: string;
  readonly recovery: RecoverySummary;
}

function findingOf(file: string, m: ESLint.LintResult["messages"][number]): AuditFinding {
  const s = m.suggestions?.[0];
  // lint.ts has narrowed the messages to the audit's own: rule findings, parse errors, unused locks/* directives.
  const ruleId = m.ruleId ?? (m.fatal ? "locks-audit/parse-error" : "locks-audit/unused-disable-directive");
  return {
    ruleId,
    file,
    line: m.line,
    column: m.column,
    endLine: m.endLine ?? m.line,
    endColumn: m.endColumn ?? m.column,
    message:
      ruleId === "locks-audit/parse-error"
        ? `This module could not be parsed, so its locks were not audited: ${m.message}`
        : m.message,
    severity: m.severity === 1 ? "warning" : "error",
    ...(s?.fix ? { suggestion: { desc: s.desc, range: s.fix.range, text: s.fix.text } } : {}),
  };
}

function at(file: string, span: Span): Pick<AuditFinding, "file" | "line" | "column" | "endLine" | "endColumn"> {
  return { file, line: span.line, column: span.column, endLine: span.endLine, endColumn: span.endColumn };
}

/** Modules within two imports of `path`, either direction: where a sweeper of a claim usually is. */
function neighbourhood(project: Project, path: string, importers: Map<string, string[]>): Set<string> {
  const near = new Set<string>([path]);
  let frontier = [path];
  for (let hop = 0; hop < 2; hop++) {
    const next: string[] = [];
    for (const p of frontier) {
      for (const q of [...project.importsOf(p), ...(importers.get(p) ?? [])]) {
        if (!near.has(q)) {
          near.add(q);
          next.push(q);
        }
      }
    }
    frontier = next;
  }
  return near;
}

/**
 * Pairs claims with recoveries across modules. `recovered`, when given, receives for each module the lines of its
 * claims that another module's recovery frees by age: such a claim can pass to a new holder while its holder
 * still works, so the rules ask Q3 of the holder's writes when the module is linted again with them
 * (`settings.locksRecoveredElsewhere`, src/audit/lint.ts).
 */
export function pairAcrossModules(
  project: Project,
  linted: readonly LintedModule[],
  recovered?: Map<string, number[]>,
): AuditResult {
  const byKey = new Map<string, Candidate[]>();
  for (const { module, summary } of linted) {
    for (const recovery of summary.recoveries) {
      const list = byKey.get(recovery.key) ?? [];
      list.push({ file: module.rel, path: module.path, recovery });
      byKey.set(recovery.key, list);
    }
  }
  let importers: Map<string, string[]> | undefined;
  const importersOf = () => {
    if (importers) return importers;
    importers = new Map();
    for (const { module } of linted) {
      for (const q of project.importsOf(module.path)) importers.set(q, [...(importers.get(q) ?? []), module.path]);
    }
    return importers;
  };

  // Lines where a module's own lint already judged a recovery's age (`progress-based-staleness` reports a sweeper's
  // start-time test in the editor too): the audit does not say it again as remote-staleness, and a disable comment
  // that silenced it there, with its reason, silences it here too.
  // Likewise `conditional-recovery` reports a sweeper's racy write in the editor: no remote-race on top of it.
  const judgedAge = new Set<string>();
  const judgedRace = new Set<string>();
  for (const { module, result } of linted) {
    for (const m of [...result.messages, ...(result.suppressedMessages ?? [])]) {
      if (m.ruleId === "locks/progress-based-staleness") judgedAge.add(`${module.rel}\0${m.line}`);
      if (m.ruleId === "locks/conditional-recovery") judgedRace.add(`${module.rel}\0${m.line}`);
    }
  }
  const judgedIn = (set: Set<string>) => (file: string, at: { line: number; endLine: number }) => {
    for (let line = at.line; line <= at.endLine; line++) if (set.has(`${file}\0${line}`)) return true;
    return false;
  };
  const ageJudgedIn = judgedIn(judgedAge);
  const raceJudgedIn = judgedIn(judgedRace);

  const locks: AuditLock[] = [];
  const findings: AuditFinding[] = [];
  const answered: AnsweredFinding[] = [];
  const silenced: SilencedFinding[] = [];
  const directives: DirectiveFix[] = [];
  const seen = new Set<string>();
  const add = (f: AuditFinding) => {
    const id = `${f.ruleId}\0${f.file}\0${f.line}\0${f.column}`;
    if (seen.has(id)) return;
    seen.add(id);
    findings.push(f);
  };

  for (const { module, result, summary } of linted) {
    const answeredClaims = new Map<string, { file: string; line: number; how: string }>();
    for (const lock of summary.locks) {
      let entry: AuditLock = { ...lock, file: module.rel };
      if (lock.key !== undefined && (lock.kind === "claim" || lock.kind === "lock-row")) {
        const remote = (byKey.get(lock.key) ?? []).filter((c) => c.path !== module.path);
        const target = lock.directive ? project.resolveModule(lock.directive.target, module.path) : undefined;
        if (lock.directive) {
          const holds =
            target !== undefined &&
            (target === module.path ? lock.q1.status === "answered" : remote.some((c) => c.path === target));
          if (!holds) {
            const where =
              target === undefined
                ? "names no module of this project"
                : `names ${relTo(project, target)}, which holds no stale recovery of it`;
            add({
              ruleId: "locks-audit/false-directive",
              severity: "error",
              ...at(module.rel, lock.directive.at),
              message: `Q1 (if the holder dies, who unlocks?): the locks-recovered-by directive for ${lock.name} (claimed at line ${lock.acquire.line}) ${where}${remote.length > 0 ? `; a recovery of it is in ${remote[0]!.file} at line ${remote[0]!.recovery.at.line}` : ""}. The rule accepts the claim because of the directive, so a holder killed by SIGKILL, OOM or a deploy leaves the row locked with nothing to move it back. Point the directive at the module that recovers it, or add the recovery.`,
            });
            directives.push(
              remote.length > 0
                ? { file: module.rel, action: "point", at: lock.directive.at, target: remote[0]!.file }
                : { file: module.rel, action: "remove", at: lock.directive.at },
            );
          }
        }
        if (lock.q1.status === "unanswered" && remote.length > 0) {
          // The import graph only ranks: read it when there is a choice to make.
          const near = remote.length > 1 ? neighbourhood(project, module.path, importersOf()) : new Set<string>();
          const ranked = [...remote].sort(
            (a, b) =>
              Number(b.path === target) - Number(a.path === target) ||
              Number(near.has(b.path)) - Number(near.has(a.path)) ||
              a.recovery.flaws.length - b.recovery.flaws.length ||
              (a.file < b.file ? -1 : a.file > b.file ? 1 : 0),
          );
          const best = ranked[0]!;
          const r = best.recovery;
          const q1: Answer = {
            status: "answered",
            how: `stale recovery in ${best.file} at line ${r.at.line}`,
            at: r.at,
            file: best.file,
          };
          const q2: Answer = r.startTimeOnly
            ? {
                status: "unanswered",
                how: `the recovery in ${best.file} judges age by ${r.timeFields.join(", ")}, a start time`,
                at: r.at,
                file: best.file,
              }
            : {
                status: "answered",
                how: `age judged by ${r.timeFields.join(", ") || "the recovery's check"} in ${best.file}`,
                at: r.at,
                file: best.file,
              };
          const q3: Answer =
            lock.q3.status === "answered" && r.flaws.length > 0
              ? {
                  status: "unanswered",
                  how: `the recovery in ${best.file} at line ${r.at.line} is racy (${r.flaws.join(", ")})`,
                  at: r.at,
                  file: best.file,
                }
              : lock.q3;
          entry = { ...entry, q1, q2, q3 };
          answeredClaims.set(`${lock.acquire.line}:${lock.acquire.column}`, {
            file: best.file,
            line: r.at.line,
            how: q1.how,
          });
          if (!lock.directive)
            directives.push({ file: module.rel, action: "add", at: lock.acquire, target: best.file });
          // The claim changes hands when a recovery judged by age gives its rows to a next holder; one that
          // deletes them (a purge) gives them to nobody.
          if (recovered && remote.some((c) => !c.recovery.flaws.includes("missing-time") && !c.recovery.removes)) {
            recovered.set(module.path, [...(recovered.get(module.path) ?? []), lock.acquire.line]);
          }
          const claimed = `${lock.name} (claimed in ${module.rel} at line ${lock.acquire.line})`;
          if (r.startTimeOnly && !ageJudgedIn(best.file, r.at)) {
            add({
              ruleId: "locks-audit/remote-staleness",
              severity: "error",
              ...at(best.file, r.at),
              message: `Q2 (how do you tell alive from dead?): this recovery of ${claimed} judges age by ${r.timeFields.join(", ")}, which is set once when work starts. A slow but healthy holder is declared dead and its work runs twice. Judge it by a timestamp the holder keeps moving.`,
            });
          }
          if (q3 !== lock.q3 && !raceJudgedIn(best.file, r.at)) {
            add({
              ruleId: "locks-audit/remote-race",
              severity: "error",
              ...at(best.file, r.at),
              message: `Q3 (is the release itself race-safe?): this recovery of ${claimed} is not a conditional update (${r.flaws.join(", ")}): a recovery that races the holder, or another recoverer, overwrites a row that moved on. Write it like the claim: match the claimed value and the age in the same update.`,
            });
          }
        }
      }
      locks.push(entry);
    }
    for (const m of result.messages) {
      const f = findingOf(module.rel, m);
      const by = m.ruleId === "locks/require-stale-recovery" ? answeredClaims.get(`${m.line}:${m.column}`) : undefined;
      if (by) answered.push({ ...f, answeredBy: by });
      else add(f);
    }
    for (const m of result.suppressedMessages) {
      if (!m.ruleId?.startsWith("locks/")) continue;
      const justification = m.suppressions
        .map((s) => s.justification.trim())
        .filter((j) => j !== "")
        .join("; ");
      silenced.push({ ...findingOf(module.rel, m), justification });
    }
  }
  const order = (
    a: { file: string; line: number; column: number },
    b: { file: string; line: number; column: number },
  ) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || a.column - b.column;
  return {
    root: project.root,
    modules: linted.length,
    locks: locks.sort((a, b) => order({ ...a.acquire, file: a.file }, { ...b.acquire, file: b.file })),
    findings: findings.sort(order),
    answered: answered.sort(order),
    silenced: silenced.sort(order),
    directives: directives.sort((a, b) => order({ ...a.at, file: a.file }, { ...b.at, file: b.file })),
  };
}

function relTo(project: Project, path: string): string {
  return project.modules.find((m) => m.path === path)?.rel ?? path;
}
