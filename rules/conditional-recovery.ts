import type { Node } from "../src/core/model/accesses.js";
import type { Recovery } from "../src/core/model/claims.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { checkData, claimData, fileCall, lockData, staleBasis } from "../src/rule-kit/messages.js";
import { describeKey } from "../src/core/reading/keys.js";
import { describeRowFilter } from "../src/core/model/describe.js";
import { formatValue } from "../src/core/model/names.js";
import { runsOnDemand, runsRepeatedly } from "../src/core/reading/units.js";
import { isLockRow } from "../src/core/model/claims.js";
import { pins, toBranches } from "../src/core/model/conditions.js";

/** The message for each flaw: of a claim made in this module, and of a sweep of claims made elsewhere. */
const MESSAGES = {
  "check-in-js": ["checkInJs", "sweepCheckInJs"],
  "missing-status": ["missingStatus", "sweepMissingStatus"],
  "missing-time": ["missingTime", "sweepMissingTime"],
} as const;

export default createRule({
  name: "conditional-recovery",
  meta: {
    type: "problem",
    hasSuggestions: true,
    docs: {
      description: "Require stale recovery to be one conditional write that re-checks the claimed status and the age",
      recommended: true,
      question: "Q3",
    },
    schema: [],
    messages: {
      lockFileBreakRace:
        "Q3 (is the recovery race-safe?): this {{operation}} breaks the lock file {{path}} after judging {{basis}} from a separate {{read}} at line {{readLine}}. Two waiters that both judged the old file stale can interleave: the first removes it and creates its own, the second then removes that fresh lock and creates another, and both hold it. Make the break a step only one waiter can win: rename the stale file to a name of its own (a rename is atomic), check that the file moved is the one judged, and only then create the lock again.",
      lockFileUnreadableBreak:
        "Q3 (is the recovery race-safe?): this {{operation}} removes the lock file {{path}} when reading it failed (line {{readLine}}), taking it for corrupt. A holder creates the file before it writes its contents, so a waiter that reads in between finds it empty or half-written and removes a live lock, and two holders follow. Treat an unreadable lock file as held (retry, or break it only once its mtime is older than the stale limit), or write the contents to a temporary file and rename it into place.",
      checkInJs:
        "Q3 (is the release race-safe?): this recovery of {{model}}.{{field}} = {{value}} (claimed at line {{claimLine}}) judges staleness {{checkedWhere}} at line {{checkLine}}, then writes by {{rowFilter}} only. A holder that finishes or reports progress between the read and the write is overwritten. Put the status and age conditions in the write's filter and treat zero affected rows as handled by someone else.",
      checkInJsPinned:
        "Q3 (is the release race-safe?): this recovery of {{model}}.{{field}} = {{value}} (claimed at line {{claimLine}}) judges staleness {{checkedWhere}} at line {{checkLine}}, then writes by {{rowFilter}} and {{field}} = {{value}}, without the age. A holder that reports progress between the read and the write is still judged dead by the earlier reading and overwritten. Put the age condition in the write's filter too and treat zero affected rows as handled by someone else.",
      missingStatus:
        "Q3 (is the release race-safe?): this recovery moves stale {{model}} rows to {{target}} without requiring {{field}} = {{value}} (claimed at line {{claimLine}}) in its filter, so a row that completed in the meantime is overwritten. Add {{field}} = {{value}} to the filter.",
      missingTime:
        "Q3 (is the release race-safe?): this recovery moves every {{model}} row with {{field}} = {{value}} (claimed at line {{claimLine}}) to {{target}} without an age condition, so it also takes the lock from holders that are alive and working. Add a progress-timestamp condition (such as updatedAt older than a threshold) to the filter.",
      lockRowCheckInJs:
        "Q3 (is the release race-safe?): this take-over of the lock row in {{model}} (taken at line {{claimLine}}) judges the row stale {{checkedWhere}} at line {{checkLine}}, then deletes by {{rowFilter}} only. Two takers that both saw it stale both delete, and the second removes the lock the first has just taken. Delete only the row that was judged (its token or stamped time in the filter), or put the age condition in the delete.",
      sweepCheckInJs:
        "Q3 (is the release race-safe?): this sweep of {{model}} rows stuck in {{field}} = {{value}} judges staleness {{checkedWhere}} at line {{checkLine}}, then writes by {{rowFilter}} only. A holder that finishes or reports progress between the read and the write is overwritten. Put the status and age conditions in the write's filter and treat zero affected rows as handled by someone else.",
      sweepCheckInJsPinned:
        "Q3 (is the release race-safe?): this sweep of {{model}} rows stuck in {{field}} = {{value}} judges staleness {{checkedWhere}} at line {{checkLine}}, then writes by {{rowFilter}} and {{field}} = {{value}}, without the age. A holder that reports progress between the read and the write is still judged dead by the earlier reading and overwritten. Put the age condition in the write's filter too and treat zero affected rows as handled by someone else.",
      sweepLockRowCheckInJs:
        "Q3 (is the release race-safe?): this sweep of lock rows in {{model}} judges a row stale {{checkedWhere}} at line {{checkLine}}, then deletes by {{rowFilter}} only. A holder that renews its lock between the read and the delete, or a taker that has just replaced the row, loses its lock. Delete only the row that was judged (its token or stamped time in the filter), or put the age condition in the delete.",
      sweepMissingStatus:
        "Q3 (is the release race-safe?): this sweep moves stale {{model}} rows to {{target}} without requiring {{field}} = {{value}} in its filter, so a row that completed in the meantime is overwritten. Add {{field}} = {{value}} to the filter.",
      sweepMissingTimeOnDemand:
        "Q3 (is the release race-safe?): this reset moves every {{model}} row with {{field}} = {{value}} to {{target}} whenever it is triggered (a button, a request), without an age condition, so it also takes the lock from holders that are alive and working. Add a progress-timestamp condition (such as updatedAt older than a threshold) to the filter.",
      sweepMissingTime:
        "Q3 (is the release race-safe?): this scheduled sweep moves every {{model}} row with {{field}} = {{value}} to {{target}} each time it runs, without an age condition, so it also takes the lock from holders that are alive and working. Add a progress-timestamp condition (such as updatedAt older than a threshold) to the filter.",
      addStatus: "Add {{field}} = {{value}} to the filter.",
    },
  },
  create(context) {
    return onLockFacts(context, (facts) => {
      for (const lock of facts.files) {
        for (const { remove, judged } of lock.breaks) {
          context.report({
            loc: remove.loc,
            messageId: judged.by === "unreadable" ? "lockFileUnreadableBreak" : "lockFileBreakRace",
            data: {
              operation: fileCall(remove),
              path: describeKey(lock.acquire.key),
              basis: staleBasis(judged.by),
              read: judged.read ? fileCall(judged.read) : "read",
              readLine: String((judged.read ?? remove).loc.start.line),
            },
          });
        }
      }
      // A recovery is reported where it is made: for one a module helper makes at a call (`updateJob(row.id, {
      // status: "pending" })` in a sweep), at that call, since the helper's other calls are no recovery and the fix
      // (re-checking the state and the age) belongs to the sweep.
      const site = (write: Recovery["write"]): Node => write.node;
      const seen = new Set<Node>();
      // A claim of this module names its line; a sweep of claims made elsewhere names only the lock.
      const report = (recovery: Recovery, sweep: boolean, onDemand = false): void => {
        const flaw = recovery.flaws[0]!;
        seen.add(site(recovery.write));
        const target = recovery.write.assignments.find((a) => a.field === recovery.lock.field);
        const data = {
          ...(sweep ? lockData(recovery.lock) : claimData(recovery.claim)),
          target: target?.value.kind === "static" ? formatValue(target.value.value) : "another state",
          rowFilter: describeRowFilter(recovery.write.filter),
          ...(recovery.check ? checkData(recovery.check) : { checkedWhere: "", checkLine: "" }),
        };
        const edit =
          flaw === "missing-status"
            ? recovery.write.addPredicate?.(recovery.lock.field, "eq", recovery.lock.valueText)
            : undefined;
        context.report({
          node: site(recovery.write),
          messageId:
            isLockRow(recovery.claim) && flaw === "check-in-js"
              ? sweep
                ? "sweepLockRowCheckInJs"
                : "lockRowCheckInJs"
              : onDemand
                ? "sweepMissingTimeOnDemand"
                : flaw === "check-in-js" && pinsClaimed(recovery)
                  ? sweep
                    ? "sweepCheckInJsPinned"
                    : "checkInJsPinned"
                  : MESSAGES[flaw][sweep ? 1 : 0],
          data,
          suggest: edit
            ? [
                {
                  messageId: "addStatus",
                  data,
                  fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text),
                },
              ]
            : [],
        });
      };
      for (const recovery of facts.recoveries) {
        if (recovery.flaws.length > 0 && !seen.has(site(recovery.write))) report(recovery, false);
      }
      // A sweeper of claims made elsewhere (a cron job, a queue module's `resetStale`). A reset with no age test is
      // reported there only when it runs while holders work: a scheduler runs it again and again
      // (`cron.schedule("*/15 * * * *", …)`), or a user triggers it (a button's handler, a route's). Once, at boot,
      // every holder of a single instance is dead.
      for (const sweep of facts.sweeps()) {
        const flaw = sweep.flaws[0];
        if (!flaw || seen.has(site(sweep.write))) continue;
        const onDemand = flaw === "missing-time" && !runsRepeatedly(site(sweep.write));
        if (onDemand && !runsOnDemand(site(sweep.write))) continue;
        report(sweep, true, onDemand);
      }
    });
  },
});

/** The recovery's write re-checks the claimed state (`status: "running"` in its filter), in every branch. */
function pinsClaimed(recovery: Recovery): boolean {
  const branches = toBranches(recovery.write.filter);
  return branches.length > 0 && branches.every((b) => pins(b, recovery.lock.field, recovery.lock.value));
}
