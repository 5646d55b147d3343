import type { Node, StateWrite } from "../src/core/model/accesses.js";
import type { Claim } from "../src/core/model/claims.js";
import type { LockFacts } from "../src/core/model/lock-facts.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { claimData, lockData } from "../src/rule-kit/messages.js";
import { getVocabulary, hasLockWord, normalizeName, vocabularySchema } from "../src/core/model/settings.js";
import { clockStamp, formatValue, normalizeModel } from "../src/core/model/names.js";
import { renameTimeField } from "../src/rule-kit/recovery.js";
import type { TSESLint } from "@typescript-eslint/utils";
import { holdsRow, isLockRow } from "../src/core/model/claims.js";
import { contains } from "../src/core/reading/ast.js";
import { describeKey } from "../src/core/reading/keys.js";
import { enclosingFunction } from "../src/core/reading/units.js";
import { isBareClock } from "../src/core/facts/pairing/leases.js";
import { getConstInit, unwrap } from "../src/core/reading/values.js";

type Options = [{ startTimeFields?: string[]; progressTimeFields?: string[] }];

type MessageId =
  | "fixedLease"
  | "lockFileAgeFromCreation"
  | "startTimeLockRow"
  | "startTimeRecovery"
  | "startTimeScan"
  | "startTimeSweep"
  | "startTimeTakeover"
  | "startTimeTakeoverRead"
  | "useProgressField";

export default createRule<MessageId, Options>({
  name: "progress-based-staleness",
  meta: {
    type: "problem",
    docs: {
      description: "Require stale recovery and lease take-over to judge age by a progress timestamp, not a start time",
      recommended: true,
      question: "Q2",
    },
    schema: [
      {
        type: "object",
        properties: {
          startTimeFields: vocabularySchema("startTimeFields"),
          progressTimeFields: vocabularySchema("progressTimeFields"),
        },
        additionalProperties: false,
      },
    ],
    defaultOptions: [{}],
    hasSuggestions: true,
    messages: {
      lockFileAgeFromCreation:
        "Q2 (how do you tell alive from dead?): this judges the lock file {{path}} stale by {{clock}}, which says when the lock was taken, and nothing in this module refreshes it while the holder works. A holder that runs longer than the limit is taken for dead while it still works, and a second one starts beside it. Refresh the file on a timer while the work runs (utimes(path, now, now), or rewrite the time in it) and judge by that, with a limit a few refresh periods long.",
      useProgressField:
        "Judge age by {{progressField}}, which this module keeps moving for {{model}}, instead of {{timeField}}.",
      fixedLease:
        "Q2 (how do you tell alive from dead?): this claim of {{model}}.{{field}} = {{value}} stamps the lease {{timeField}} once, and nothing in this module renews it, yet {{judges}} the holder dead by it. A slow but healthy holder loses its job while it still works, and the work runs twice. Renew {{timeField}} while the work progresses (a heartbeat), and stop the work when the renewal fails.",
      startTimeRecovery:
        "Q2 (how do you tell alive from dead?): this recovery of {{model}}.{{field}} = {{value}} (claimed at line {{claimLine}}) judges age by {{timeField}}, which is {{stamped}}. A slow but healthy holder is declared dead and its work runs twice. Judge it by a timestamp the holder keeps moving ({{progressFields}}).",
      startTimeLockRow:
        "Q2 (how do you tell alive from dead?): this {{what}} of lock rows in {{model}} (taken at line {{claimLine}}) judges age by {{timeField}}, which is set once when the lock is taken. A slow but healthy holder loses its lock while it still works. Judge it by an expiry the holder renews, or a timestamp it keeps moving ({{progressFields}}).",
      startTimeSweep:
        "Q2 (how do you tell alive from dead?): this sweep of {{model}}.{{field}} = {{value}} (no claim of it in this module) judges age by {{timeField}}, which is set once when work starts. A slow but healthy holder is declared dead and its work runs twice. Judge it by a timestamp the holder keeps moving ({{progressFields}}).",
      startTimeScan:
        "Q2 (how do you tell alive from dead?): this age test picks {{model}} rows stuck in {{field}} = {{value}} by {{timeField}}, which is set once when work starts. A slow but healthy holder is declared dead and its work runs twice. Judge it by a timestamp the holder keeps moving ({{progressFields}}).",
      startTimeTakeoverRead:
        "Q2 (how do you tell alive from dead?): this test decides whether to take over {{what}} (taken at line {{claimLine}}) by the age of {{timeField}} as the read at line {{readLine}} found it, which is {{stamped}}. A slow but healthy holder loses its lock while it still works, and the work runs twice. Judge it by an expiry the holder renews, or a timestamp it keeps moving ({{progressFields}}).",
      startTimeTakeover:
        "Q2 (how do you tell alive from dead?): this claim of {{model}}.{{field}} = {{value}} takes over a lease judged by {{timeField}}, which is {{stamped}}. A slow but healthy holder loses its lease while it still works. Judge it by a timestamp the holder keeps moving ({{progressFields}}).",
    },
  },
  create(context) {
    const vocabulary = getVocabulary(context.settings, context.options[0]);
    const progressFields = vocabulary.raw.progressTimeFields.slice(0, 3).join(", ");
    /**
     * The first start-time field judged, unless a progress field is judged too. With `claimed`, the job rows a
     * status claim of the module takes: a field named in neither list that the module stamps only in its claims
     * is a start time too (`picked: now()` when a job is taken, touched by nothing after), and so is one it writes
     * only when a row is created or claimed (`next_run_at`, the time a job was due). A field named as
     * progress (a lease expiry) stays one, unless it is a fixed lease: see `fixedLease`.
     */
    function startTimeOnly(fields: readonly { field: string; node: Node }[], claimed?: Claim, facts?: LockFacts) {
      const job = jobClaim(claimed);
      const atClaim = (f: { field: string }) =>
        job !== undefined && facts!.stampedOnlyAtCreationOrClaim(job.write.model, f.field);
      if (fields.some((f) => vocabulary.isProgressTimeField(f.field))) return undefined;
      // A lease nothing renews, judged by the instant its own claim stamps (`taken_at: now`, not an expiry ahead of
      // the clock) and no other write moves: that instant is when the lock was taken, whatever it is called.
      const leaseStart = (f: { field: string }) => {
        if (claimed?.kind !== "lease" || claimed.renewed || !facts) return false;
        // In a table that says lock: an account's lock-out (`user.accountLockedUntil`) is no lease on work.
        if (!hasLockWord(claimed.write.model)) return false;
        const stamp = clockStamp(claimed.write, f.field);
        return (
          stamp !== undefined &&
          isBareClock(instantOf(stamp.valueNode)) &&
          facts.stampedOnlyByClaims(claimed.write.model, f.field)
        );
      };
      const leased = fields.find(leaseStart);
      if (leased) return leased;
      // Judged by a field the module keeps moving for these rows (a heartbeat re-stamps it), whatever its name.
      if (job && fields.some((f) => facts!.keptMoving(job.write.model, job, f.field) !== undefined)) return undefined;
      return fields.find((f) => vocabulary.isStartTimeField(f.field) || atClaim(f));
    }
    /** The instant a stored value is made from: through a `const` and an ISO string (`const now = new Date().toISOString()`). */
    function instantOf(node: Node): Node {
      let n = unwrap(node);
      if (n.type === "Identifier") n = getConstInit(context.sourceCode, n) ?? n;
      n = unwrap(n);
      if (n.type === "CallExpression" && n.callee.type === "MemberExpression" && !n.callee.computed) {
        const p = n.callee.property;
        if (p.type === "Identifier" && p.name === "toISOString") return unwrap(n.callee.object);
      }
      return n;
    }
    /**
     * A lease expiry (a field named as progress, `lock_expires_at`) that only the module's claims stamp and that its
     * other writes clear when the job completes or fails: the module keeps the column's whole life, and nothing
     * renews it, so a holder slower than the term is judged dead while it works. Reported once, at the claim that
     * stamps it (the fix is there: renew it while the work runs), not at each age test that reads it.
     */
    function fixedLease(fields: readonly { field: string; node: Node }[], claimed: Claim, facts: LockFacts) {
      const job = jobClaim(claimed);
      if (!job || fields.some((f) => vocabulary.isStartTimeField(f.field))) return undefined;
      const fixed = (f: { field: string }) =>
        vocabulary.isProgressTimeField(f.field) &&
        facts.stampedOnlyByClaims(job.write.model, f.field) &&
        facts.clearedOutsideClaims(job.write.model, f.field);
      return fields.every(fixed) ? fields[0] : undefined;
    }
    /** When the judged field is written, as the message says it: a start time, or a stamp made with the row. */
    function stampedWhen(claim: Claim, field: string, facts: LockFacts): string {
      return vocabulary.isStartTimeField(field) || facts.stampedOnlyByClaims(claim.write.model, field)
        ? "set once when work starts"
        : "written only when the row is created or claimed, never while the work runs";
    }
    /** A recovery of lock rows removes them (a sweep) or restamps them for the recovering caller (a take-over). */
    function sweepOrTakeover(write: StateWrite): "sweep" | "take-over" {
      return write.effect === "delete" ? "sweep" : "take-over";
    }
    function jobClaim(claim: Claim | undefined): Claim | undefined {
      return claim && !holdsRow(claim) && claim.lock.value.value !== true ? claim : undefined;
    }
    /**
     * The suggestion: judge age by the progress timestamp the module stamps with the clock for `model`, where the age
     * test names its field as an object key. None where the module keeps no such field moving: none is invented.
     * The claims whose rows the test judges (`claims`; for a sweep or a scan, the module's claims of the model) must
     * stamp it too: a row claimed again keeps its last run's stamp until the first beat, and would be judged dead
     * just after it was taken. With no claim in the module to show that, no edit.
     */
    function useProgress(
      facts: LockFacts,
      model: string,
      start: { field: string; node: Node },
      claims: readonly Claim[],
    ): TSESLint.SuggestionReportDescriptor<MessageId>[] {
      const progress = facts.keptMoving(model);
      if (!progress || claims.length === 0 || !claims.every((claim) => clockStamp(claim.write, progress))) return [];
      const edit =
        normalizeName(progress) !== normalizeName(start.field)
          ? renameTimeField(context.sourceCode, start.node, start.field, progress)
          : undefined;
      if (!edit) return [];
      return [
        {
          messageId: "useProgressField",
          data: { progressField: progress, model, timeField: start.field },
          fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text),
        },
      ];
    }
    /** The module's claims of `model`. */
    function claimsOf(facts: LockFacts, model: string): Claim[] {
      return facts.claims.filter((c) => normalizeModel(c.write.model) === normalizeModel(model));
    }
    function reportLockRow(
      what: string,
      claim: Claim,
      start: { field: string; node: Node },
      facts: LockFacts,
      at: Node = start.node,
    ): void {
      const data = {
        what,
        model: claim.lock.model,
        claimLine: String(claim.write.node.loc.start.line),
        timeField: start.field,
        progressFields,
      };
      context.report({
        node: at,
        messageId: "startTimeLockRow",
        data,
        suggest: useProgress(facts, claim.write.model, start, [claim]),
      });
    }
    return onLockFacts(
      context,
      (facts) => {
        const seen = new Set<Node>();
        // A lock file judged stale by an age nothing refreshes: the moment it was created.
        for (const lock of facts.files) {
          if (lock.renewals.length > 0 || lock.mayBeRenewed) continue;
          const judged = [lock.takesOverStale, ...lock.breaks.map((b) => b.judged)];
          for (const j of judged) {
            if (!j || (j.by !== "mtime" && j.by !== "stored-time") || seen.has(j.test)) continue;
            seen.add(j.test);
            context.report({
              node: j.test,
              messageId: "lockFileAgeFromCreation",
              data: {
                path: describeKey(lock.acquire.key),
                clock: j.by === "mtime" ? "the file's mtime" : "the time written into it when it was created",
              },
            });
          }
        }
        const fixedLeases = new Map<Claim, { field: string; takeover: boolean; recoveryLines: number[] }>();
        function noteFixed(claim: Claim, field: string, by: number | "takeover"): void {
          const entry = fixedLeases.get(claim) ?? { field, takeover: false, recoveryLines: [] };
          if (by === "takeover") entry.takeover = true;
          else if (!entry.recoveryLines.includes(by)) entry.recoveryLines.push(by);
          fixedLeases.set(claim, entry);
        }
        for (const recovery of facts.recoveries) {
          if (seen.has(recovery.write.node)) continue;
          // A stale scan that found the rows is reported on its own, below.
          if (recovery.check?.kind === "read") continue;
          // The holder aborts its work sooner than this age: no live holder is that old, whatever the field.
          if (facts.boundedBelowRecovery(recovery.claim)) continue;
          // The holder keeps its row locked while it works and this recovery skips locked rows: it never takes a
          // live holder's row, whatever age it judges.
          if (facts.heldUnderRowLock(recovery.claim)) continue;
          const judged = recovery.check ? recovery.check.timeFields : recovery.timePredicates;
          const lease = fixedLease(judged, recovery.claim, facts);
          if (lease) {
            noteFixed(recovery.claim, lease.field, recovery.write.node.loc.start.line);
            continue;
          }
          const start = startTimeOnly(judged, recovery.claim, facts);
          if (!start) continue;
          seen.add(recovery.write.node);
          // Judged in a JavaScript test before the write: the finding is the recovery's, at its write.
          const at = recovery.check ? recovery.write.node : start.node;
          if (isLockRow(recovery.claim)) {
            reportLockRow(sweepOrTakeover(recovery.write), recovery.claim, start, facts, at);
            continue;
          }
          const data = {
            ...claimData(recovery.claim),
            timeField: start.field,
            stamped: stampedWhen(recovery.claim, start.field, facts),
            progressFields,
          };
          context.report({
            node: at,
            messageId: "startTimeRecovery",
            data,
            suggest: useProgress(facts, recovery.claim.write.model, start, [recovery.claim]),
          });
        }
        // A sweeper of claims made elsewhere (a cron job, a queue module's `resetStale`): its age test is its own.
        for (const sweep of facts.sweeps()) {
          if (seen.has(sweep.write.node) || sweep.check?.kind === "read" || isLockRow(sweep.claim)) continue;
          const start = startTimeOnly(sweep.check ? sweep.check.timeFields : sweep.timePredicates);
          // Stamped again by the module's own progress writes (`SET updated_at = NOW(), locked_at = NOW()`): it moves.
          if (!start || facts.keptMoving(sweep.write.model, undefined, start.field) !== undefined) continue;
          seen.add(sweep.write.node);
          const { model, field, value } = lockData(sweep.lock);
          context.report({
            node: start.node,
            messageId: "startTimeSweep",
            data: { model, field, value, timeField: start.field, progressFields },
            suggest: useProgress(facts, sweep.write.model, start, claimsOf(facts, sweep.write.model)),
          });
        }
        // One report per age test: a scan of several stuck values (`state = creating OR state = uploading`) names them all.
        const scans = new Map<Node, { scan: (typeof facts.staleScans)[number]; timeField: string; values: string[] }>();
        for (const scan of facts.staleScans) {
          const start = startTimeOnly(scan.timePredicates);
          if (!start || facts.keptMoving(scan.read.model, undefined, start.field) !== undefined) continue;
          const entry = scans.get(start.node);
          if (entry) entry.values.push(formatValue(scan.value));
          else scans.set(start.node, { scan, timeField: start.field, values: [formatValue(scan.value)] });
        }
        for (const [node, { scan, timeField, values }] of scans) {
          // A scan whose rows a recovery of this module then writes back: the finding is that recovery's, at its write.
          const recovery = facts.recoveries.find(
            (r) =>
              (r.check?.kind === "read" && r.check.node === scan.read.node) ||
              (r.check !== undefined &&
                enclosingFunction(r.write.node) === enclosingFunction(scan.read.node) &&
                r.write.node.range[0] > scan.read.node.range[1] &&
                normalizeModel(r.write.model) === normalizeModel(scan.read.model) &&
                normalizeName(r.lock.field) === normalizeName(scan.field)),
          );
          if (recovery && !seen.has(recovery.write.node)) {
            seen.add(recovery.write.node);
            const start = { field: timeField, node };
            if (isLockRow(recovery.claim)) {
              reportLockRow(sweepOrTakeover(recovery.write), recovery.claim, start, facts, recovery.write.node);
              continue;
            }
            const data = {
              ...claimData(recovery.claim),
              timeField,
              stamped: stampedWhen(recovery.claim, timeField, facts),
              progressFields,
            };
            context.report({
              node: recovery.write.node,
              messageId: "startTimeRecovery",
              data,
              suggest: useProgress(facts, recovery.claim.write.model, start, [recovery.claim]),
            });
            continue;
          }
          context.report({
            node,
            messageId: "startTimeScan",
            data: { model: scan.read.model, field: scan.field, value: values.join(" or "), timeField, progressFields },
            suggest: useProgress(facts, scan.read.model, { field: timeField, node }, claimsOf(facts, scan.read.model)),
          });
        }
        for (const claim of facts.claims) {
          if (claim.kind === "lease" && claim.renewed) continue;
          // A take-over that is also the recovery of another claim of the lock (a lock row inserted once, then taken
          // over by restamping it) was reported as that recovery: one finding per write.
          if (seen.has(claim.write.node)) continue;
          const lease = claim.takeover.length > 0 ? fixedLease(claim.takeover, claim, facts) : undefined;
          if (lease) {
            noteFixed(claim, lease.field, "takeover");
            continue;
          }
          const start = startTimeOnly(claim.takeover, claim, facts);
          if (!start) continue;
          // Decided in JavaScript on what a read found: the age test is where the holder is judged, the write
          // (reported for its own race) only acts on it.
          if (claim.check?.kind === "read" && !contains(claim.write.node, start.node)) {
            const { model, field, value } = lockData(claim.lock);
            context.report({
              node: start.node,
              messageId: "startTimeTakeoverRead",
              data: {
                what: holdsRow(claim) ? `the lock row in ${claim.lock.model}` : `${model}.${field} = ${value}`,
                claimLine: String(claim.write.node.loc.start.line),
                timeField: start.field,
                readLine: String(claim.check.node.loc.start.line),
                stamped: holdsRow(claim) ? "set once when the lock is taken" : stampedWhen(claim, start.field, facts),
                progressFields,
              },
              suggest: useProgress(facts, claim.write.model, start, [claim]),
            });
            continue;
          }
          // A lock row or a lease has no claimed value to name: its take-over is the lock row's.
          if (holdsRow(claim)) {
            reportLockRow("take-over", claim, start, facts);
            continue;
          }
          const data = {
            ...claimData(claim),
            timeField: start.field,
            stamped: stampedWhen(claim, start.field, facts),
            progressFields,
          };
          context.report({
            node: start.node,
            messageId: "startTimeTakeover",
            data,
            suggest: useProgress(facts, claim.write.model, start, [claim]),
          });
        }
        for (const [claim, { field, takeover, recoveryLines }] of fixedLeases) {
          const stamp = claim.write.assignments.find((a) => normalizeName(a.field) === normalizeName(field));
          const by = [
            ...(takeover ? ["its own take-over"] : []),
            ...recoveryLines.sort((a, b) => a - b).map((l) => `the recovery at line ${l}`),
          ];
          const judges = `${by.join(" and ")} ${by.length > 1 ? "judge" : "judges"}`;
          const { model, field: lockField, value } = lockData(claim.lock);
          context.report({
            node: stamp?.node ?? claim.write.node,
            messageId: "fixedLease",
            data: { model, field: lockField, value, timeField: field, judges },
          });
        }
      },
      context.options[0],
    );
  },
});
