import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { alsoAt, claimData, fileCall } from "../src/rule-kit/messages.js";
import { describeKey } from "../src/core/reading/keys.js";
import { lockRowSweepEdit, recoveryEdit } from "../src/rule-kit/recovery.js";
import { unreachable, type LockRowClaim, type StatusClaim } from "../src/core/model/claims.js";

export default createRule({
  name: "require-stale-recovery",
  meta: {
    type: "problem",
    docs: {
      description:
        "Require a stale-claim recovery for every database claim, so a holder that dies does not wedge the row",
      recommended: true,
      question: "Q1",
    },
    hasSuggestions: true,
    schema: [],
    messages: {
      lockFileNeverBroken:
        "Q1 (if the holder dies, who unlocks?): this {{operation}} takes the lock file {{path}}, and only its holder removes it (line {{releaseLine}}): nothing in this module tells a dead holder's file from a live one. A holder killed by SIGKILL, OOM or a deploy leaves the file, and every later attempt finds it and stays out until someone deletes it by hand; catch/finally and exit handlers never run. Write the holder's pid into the file and break the lock when that process is gone, or break it when its mtime, refreshed by the holder while it works, is older than a limit.",
      addLockSweep:
        "Add {{name}}(): delete {{model}} rows whose {{timeField}} {{when}}, and call it from a sweeper or before acquiring.",
      addRecovery:
        "Add {{name}}(): give rows stuck {{value}} back to {{back}} once {{timeField}} is older than {{threshold}} (15 minutes; tune it), and call it from a sweeper or before claiming.",
      missingExpiry:
        "Q1 (if the holder dies, who unlocks?): this insert takes a lock row in {{model}}, guarded by a unique key, and nothing in this module removes a row whose holder died. A holder killed by SIGKILL, OOM or a deploy leaves the row forever and every later insert fails; catch/finally never run. Give the row an expiry, or use the one it has (an expiry nothing compares frees nothing): let a take-over (ON CONFLICT … DO UPDATE … WHERE expires_at < now()) or a sweeper (DELETE … WHERE expires_at < now()) free the row once it has passed.",
      missingRowExpiry:
        "Q1 (if the holder dies, who unlocks?): this create takes a lock row in {{model}} once a read at line {{checkLine}} found none, and nothing in this module removes a row whose holder died. A holder killed by SIGKILL, OOM or a deploy leaves the row forever, and every later caller finds it and stays out; catch/finally never run. Give the row an expiry column, treat an expired row as free, and remove it in the same conditional write (DELETE … WHERE expires_at < now()).",
      missingLockExpiry:
        "Q1 (if the holder dies, who unlocks?): this write takes the lock {{model}}.{{field}} where it is empty, and nothing in this module expires it or clears one whose holder died. A holder killed by SIGKILL, OOM or a deploy leaves {{field}} set forever and every later take fails; catch/finally never run. Take it also where {{field}} is older than a threshold (a take-over), or add a recovery that clears it there.",
      missingRecoveryVia:
        "Q1 (if the holder dies, who unlocks?): this call takes {{lock}} through `{{helper}}` ({{where}}), and nothing in this module or the helper's moves a row that stays {{stuck}} back. A holder killed by SIGKILL, OOM or a deploy leaves it so forever, and catch/finally never run. Add a conditional recovery that frees it where a progress timestamp is older than a threshold, or let the claim take over an expired lease.",
      missingRecovery:
        "Q1 (if the holder dies, who unlocks?): this write claims {{model}}.{{field}} = {{value}}, but nothing in this module moves a stalled {{value}} row back. A holder killed by SIGKILL, OOM or a deploy leaves it {{value}} forever, and catch/finally never run. Add a conditional recovery that moves {{field}} off {{value}} where a progress timestamp is older than a threshold, or let the claim take over an expired lease.",
    },
  },
  create(context) {
    return onLockFacts(context, (facts) => {
      for (const lock of facts.files) {
        if (lock.breaks.length > 0 || lock.takesOverStale || lock.unknownRecovery) continue;
        // Removed by nobody here: its release (and perhaps its break) is another module's.
        const release = lock.releases[0];
        if (!release) continue;
        context.report({
          loc: lock.acquire.loc,
          messageId: "lockFileNeverBroken",
          data: {
            operation: fileCall(lock.acquire),
            path: describeKey(lock.acquire.key),
            releaseLine: String(release.op.loc.start.line),
          },
        });
      }
      /** A lock row nothing sweeps: its expiry, with the sweep as a suggestion where the row keeps a moving time. */
      const reportLockRow = (claim: LockRowClaim) => {
        if (claim.kind === "unenforced-row" && claim.check) {
          context.report({
            node: claim.write.node,
            messageId: "missingRowExpiry",
            data: { model: claim.lock.model, checkLine: String(claim.check.node.loc.start.line) },
          });
          return;
        }
        const sweep = lockRowSweepEdit(context.sourceCode, context.filename, claim, facts);
        const when = sweep?.threshold ? `has not moved for ${sweep.threshold} (15 minutes; tune it)` : "has passed";
        context.report({
          node: claim.write.node,
          messageId: "missingExpiry",
          data: { model: claim.lock.model },
          suggest: sweep
            ? [
                {
                  messageId: "addLockSweep",
                  data: { name: sweep.name, model: claim.lock.model, timeField: sweep.timeField, when },
                  fix: (fixer) => sweep.edits.map((e) => fixer.insertTextAfterRange([e.range[0], e.range[0]], e.text)),
                },
              ]
            : [],
        });
      };
      /** A status claim nothing moves back: the recovery, suggested where the module keeps a progress timestamp. */
      const reportStatus = (claim: StatusClaim) => {
        const data = claimData(claim);
        const recovery = recoveryEdit(context.sourceCode, context.filename, claim, facts);
        context.report({
          node: claim.write.node,
          messageId: "missingRecovery",
          data,
          suggest: recovery
            ? [
                {
                  messageId: "addRecovery",
                  data: {
                    name: recovery.name,
                    value: recovery.flag?.held ?? data.value,
                    back: recovery.flag?.free ?? recovery.backText,
                    timeField: recovery.timeField,
                    threshold: recovery.threshold,
                  },
                  fix: (fixer) =>
                    recovery.edits.map((e) => fixer.insertTextAfterRange([e.range[0], e.range[0]], e.text)),
                },
              ]
            : [],
        });
      };
      for (const claim of facts.claims) {
        // A take-over, a recovery here, stuck rows handed to a caller (`staleJobs()`), or a `locks-recovered-by`
        // directive naming the module that recovers it (locks-audit checks it).
        if (facts.answeredHere(claim)) continue;
        switch (claim.kind) {
          case "inserted-row":
          case "keyed-row":
          case "unenforced-row":
            reportLockRow(claim);
            break;
          case "lease":
            context.report({
              node: claim.write.node,
              messageId: "missingLockExpiry",
              data: { model: claim.lock.model, field: claim.lock.field },
            });
            break;
          case "status":
            reportStatus(claim);
            break;
          default:
            unreachable(claim);
        }
      }
      // In the audit: a claim taken through another module's helper that nothing answers, reported at the call.
      for (const { call, alsoAt: others, helper, file, effect, row } of facts.importedClaims) {
        context.report({
          node: call,
          messageId: "missingRecoveryVia",
          data: {
            lock: row === undefined ? effect.name : `${effect.name} (the row ${JSON.stringify(row)})`,
            helper,
            where: `${file}, line ${effect.line}${alsoAt(others)}`,
            stuck: effect.stuck,
          },
        });
      }
    });
  },
});
