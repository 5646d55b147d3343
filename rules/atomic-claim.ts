import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { checkData, claimData, fileCall } from "../src/rule-kit/messages.js";
import { describeKey } from "../src/core/reading/keys.js";
import { claimExit } from "../src/rule-kit/claim-exit.js";
import { valueText } from "../src/core/reading/edits.js";
import { unreachable } from "../src/core/model/claims.js";

/** How a claim's outcome goes unread, in the words of `unreadClaim`. */
const UNREAD: Record<"dropped" | "unused" | "error-only", (binding: string) => string> = {
  dropped: () => "nothing reads whether it changed a row (its result is not kept)",
  unused: (binding) => `nothing reads whether it changed a row (\`${binding}\` is never read)`,
  "error-only": () => "only its `error` is read, which stays empty when the filter matched no row",
};

export default createRule({
  name: "atomic-claim",
  meta: {
    type: "problem",
    hasSuggestions: true,
    docs: {
      description:
        "Disallow claims that let a second caller in: a status tested in JavaScript and then written unconditionally, or a lock acquire whose failure the work ignores",
      recommended: true,
      question: "Q3",
    },
    schema: [],
    messages: {
      unrefusableLock:
        "Q3 (is the claim race-safe?): this {{command}} writes the lock {{key}} whatever holds it, so it never refuses: the test at line {{testLine}} always finds the lock taken, and every caller goes on as its holder. Take it with SET key token NX and an expiry, and go on only when it returns OK.",
      unawaitedLock:
        "Q3 (is the claim race-safe?): this {{command}} is not awaited, so the test at line {{testLine}} reads its promise, not its answer: a promise is always truthy, so the test never finds the lock {{key}} taken, and every caller goes on as its holder. Await it, and go on only when it returns OK.",
      xactLockOutsideTransaction:
        "Q3 (is the claim race-safe?): this {{fn}} is sent on its own through `{{client}}`, outside any transaction: the statement is its own transaction, so the lock is released as soon as it returns and the work after it is not excluded at all. Take it as the first statement of the transaction that does the work, or take a session lock on one checked-out connection and unlock it in a `finally`.",
      overwritingLock:
        "Q3 (is the claim race-safe?): this upsert takes the lock row in {{model}} by overwriting the row on its key whatever holds it (a conflict update with no condition): it never fails, so every caller takes the lock, while its holder still works too. Insert and let a conflict do nothing (ON CONFLICT DO NOTHING; PostgREST: ignoreDuplicates: true), treating no row written as held, or overwrite only an expired row (DO UPDATE … WHERE expires_at < now()).",
      unreadClaim:
        "Q3 (is the claim race-safe?): this write claims {{model}}.{{field}} = {{value}} only where no other caller has, but {{how}}, and the work at line {{workLine}} runs either way: a caller whose write matched no row goes on as the holder beside the one that claimed it. {{fix}}.",
      stampOnlyClaim:
        "Q3 (is the claim race-safe?): this write is taken as a lock (the test at line {{checkLine}} lets the caller go on only when it returned the row), but it only stamps {{stamped}} on a {{model}} row that stays {{field}} = {{value}}: nothing its filter tests changes, so the next caller's write matches the same row and gets it too, and every caller goes on. Move the row in the same write to a state the filter excludes, or require the stamp to be older than a cutoff in the filter, so a second caller matches nothing.",
      lockFileCheckThenWrite:
        'Q3 (is the claim race-safe?): this {{operation}} writes the lock file {{path}} after a separate {{check}} at line {{checkLine}} found it {{found}}: two processes that both check before either writes both take the lock, and the later write replaces the first holder\'s. Create it in one step that fails when it exists, open(path, "wx") or writeFile(path, data, { flag: "wx" }), and treat EEXIST as held.',
      tableWaitThenTake:
        "Q3 (is the claim race-safe?): this call found the key held in `{{table}}`, waits for the holder at line {{waitLine}}, and then takes the key without testing it again. When the holder is done, every caller that waited wakes and takes it at once, so the work runs side by side. Test again after the wait (`while ({{table}}.has(key)) await …`), then take the key in the same turn.",
      checkThenAct:
        "Q3 (is the claim race-safe?): this claim of {{model}}.{{field}} = {{value}} checks {{field}} {{checkedWhere}} at line {{checkLine}} and then writes {{value}} unconditionally, so two callers that read at the same time both claim it. Make the write conditional ({{field}} not {{value}} in its filter) and act on the affected-row count.",
      checkThenTake:
        "Q3 (is the claim race-safe?): this write takes the lock row {{value}} in {{model}} after a separate read at line {{checkLine}} found it free or stale, and writes it unconditionally, so two callers that read at the same time both take it. Take it in one conditional write: create it under its unique key and treat the duplicate as held, or update it only where it is still stale, and act on the result.",
      checkThenRenew:
        "Q3 (is the renewal race-safe?): this write renews the lock row {{value}} in {{model}} after a separate read at line {{checkLine}} found it held by this caller (the test at line {{testLine}}), and writes it by its name alone: a caller that took the row over in between is renewed in this caller's stead, and both go on as its holder. Renew in one conditional write that requires the holder to still be this caller, and stop the work when it matches nothing.",
      checkThenLease:
        "Q3 (is the claim race-safe?): this write takes the lease on {{model}}.{{field}} after a separate read at line {{checkLine}} judged it free or expired in JavaScript, and writes it by its key alone, so two callers that read at the same time both take it. Make the write conditional (its filter requires {{field}} to be empty or past the cutoff, or the holder's own) and act on the affected-row count.",
      checkThenTakeOver:
        "Q3 (is the claim race-safe?): this claim of {{model}}.{{field}} = {{value}} is written by its key alone after the test at line {{checkLine}} found the row, as read before, not {{value}}, or {{value}} with {{timeField}} past a cutoff (judged in JavaScript), so two callers that read at the same time both take it. Make the write conditional (its filter requires {{field}} not {{value}}, or {{timeField}} older than the cutoff) and act on the affected-row count.",
      checkThenInsert:
        "Q3 (is the claim race-safe?): this create takes a lock row in {{model}} after a separate read at line {{checkLine}} found none for {{fields}}, but no unique key of {{model}} lies within {{fields}} (the schema's keys: {{keys}}), so two callers that read at the same time both create one and both go on as its holder. Add a unique key on {{fields}} and treat the duplicate-key error as held, or take the row in one conditional write.",
      acquireFailureIgnored:
        "Q3 (is the acquire race-safe?): this acquire of {{name}} throws when another worker holds the lock, but the `catch` at line {{catchLine}} goes on, and the work after the `try` runs whether or not the lock was taken, so every worker does it. Leave when the acquire fails: return or rethrow in the `catch`, or do the work inside the `try`.",
      holderFromKey:
        "Q3 (is the claim race-safe?): this write takes the lock row in {{model}} where it is free or already held by {{owner}}, but {{owner}} is written with a value made of {{sources}}, as the lock's {{keyField}} is: every caller of this lock writes the same holder, so each one counts as the holder and re-enters the lock another caller holds. Write a value unique to this acquire (a random token the caller keeps) as {{owner}}, and release and renew with it.",
      flagSetAfterAwait:
        "Q3 (is the claim race-safe?): this sets {{name}} after the test at line {{checkLine}}, but the function awaits at line {{waitLine}} in between: another call runs while this one waits, passes the same test, and both go on. Set {{name}} right after the test, before anything is awaited (JavaScript runs the two without interruption), and clear it where the work ends.",
      addCondition:
        "Require {{field}} to differ from {{value}} in the write's filter (then treat zero affected rows, or a not-found error, as already claimed).",
      addConditionAndExit:
        "Require {{field}} to differ from {{value}} in the write's filter, and `{{exit}}` as the check at line {{checkLine}} does when the write changes no row (another caller claimed it).",
      requireValue:
        "Require {{field}} = {{required}} in the write's filter, as the check at line {{checkLine}} does (then treat zero affected rows, or a not-found error, as already claimed).",
      requireValueAndExit:
        "Require {{field}} = {{required}} in the write's filter, and `{{exit}}` as the check at line {{checkLine}} does when the write changes no row (another caller claimed it).",
    },
  },
  create(context) {
    return onLockFacts(context, (facts) => {
      for (const lock of facts.held) {
        if (!lock.setAfterAwait) continue;
        context.report({
          node: lock.acquire,
          messageId: "flagSetAfterAwait",
          data: {
            name: lock.name,
            checkLine: String(lock.setAfterAwait.check.loc.start.line),
            waitLine: String(lock.setAfterAwait.wait.loc.start.line),
          },
        });
      }
      for (const write of facts.overwritingLocks)
        context.report({ node: write.node, messageId: "overwritingLock", data: { model: write.model } });
      for (const u of facts.unreadClaims) {
        const { model, field, value } = claimData(u.claim);
        context.report({
          node: u.claim.write.node,
          messageId: "unreadClaim",
          data: {
            model,
            field,
            value,
            how: UNREAD[u.how](u.binding ?? ""),
            workLine: String(u.work.loc.start.line),
            fix: u.batch
              ? "Stamp this caller's token in the same write, and go on with the rows that carry it"
              : u.how === "error-only"
                ? "Go on only when the write changed a row: count it, or `.select()` the row and test it"
                : "Go on only when the write changed a row: test its count of changed rows",
          },
        });
      }
      for (const c of facts.stampOnlyClaims)
        context.report({
          node: c.write.node,
          messageId: "stampOnlyClaim",
          data: {
            model: c.write.model,
            field: c.field,
            value: c.value,
            stamped: c.stamped.join(", "),
            checkLine: String(c.check.loc.start.line),
          },
        });
      for (const lock of facts.files) {
        if (!lock.checkedBy) continue;
        context.report({
          loc: lock.acquire.loc,
          messageId: "lockFileCheckThenWrite",
          data: {
            operation: fileCall(lock.acquire),
            path: describeKey(lock.acquire.key),
            check: fileCall(lock.checkedBy),
            checkLine: String(lock.checkedBy.loc.start.line),
            found: lock.takesOverStale ? "absent or stale" : "absent",
          },
        });
      }
      for (const { acquire, handler, name } of facts.ignoredAcquireFailures) {
        context.report({
          node: acquire,
          messageId: "acquireFailureIgnored",
          data: { name, catchLine: String(handler.loc.start.line) },
        });
      }
      // A lock key written by a command that never refuses, tested as if it could (blind-15 B15a13), or a SET NX whose
      // promise is tested in place of its answer (blind-16 B16b02).
      for (const lock of facts.kv.unrefusable) {
        context.report({
          node: lock.op.node,
          messageId: lock.unawaited ? "unawaitedLock" : "unrefusableLock",
          data: {
            command: lock.command,
            key: describeKey(lock.op.key),
            testLine: String(lock.test.loc.start.line),
          },
        });
      }
      // A transaction-level advisory lock outside any transaction ends with its own statement (blind-15 D15d12).
      for (const lock of facts.unheldXactLocks) {
        context.report({
          node: lock.node,
          messageId: "xactLockOutsideTransaction",
          data: { client: lock.client, fn: lock.try ? "pg_try_advisory_xact_lock" : "pg_advisory_xact_lock" },
        });
      }
      for (const { claim, owner, keyField, sources } of facts.keyDerivedHolders) {
        context.report({
          node: claim.write.node,
          messageId: "holderFromKey",
          data: { model: claim.lock.model, owner: owner.field, keyField, sources: sources.join(", ") },
        });
      }
      for (const table of facts.lockTables) {
        if (!table.waited) continue;
        context.report({
          node: table.acquire.node,
          messageId: "tableWaitThenTake",
          data: { table: table.table, waitLine: String(table.waited.loc.start.line) },
        });
      }
      for (const claim of facts.claims) {
        if (!claim.check) continue;
        const data = { ...claimData(claim), ...checkData(claim.check) };
        switch (claim.kind) {
          case "lease":
            context.report({ node: claim.write.node, messageId: "checkThenLease", data });
            continue;
          case "unenforced-row": {
            const list = (fields: readonly string[]) => `(${fields.join(", ")})`;
            const keys = claim.keys.map(list).join(", ") || "none";
            context.report({
              node: claim.write.node,
              messageId: "checkThenInsert",
              data: { model: data.model, checkLine: data.checkLine, fields: list(claim.fields), keys },
            });
            continue;
          }
          case "keyed-row":
            // A keyed lock row has no status to add to the filter: the fix is a different write.
            if (claim.heldByCaller) {
              const testLine = String(claim.heldByCaller.loc.start.line);
              const { model, value, checkLine } = data;
              context.report({
                node: claim.write.node,
                messageId: "checkThenRenew",
                data: { model, value, checkLine, testLine },
              });
              continue;
            }
            context.report({ node: claim.write.node, messageId: "checkThenTake", data });
            continue;
          case "status":
            // A take-over decided in JavaScript (`if (age > STALE) take it`): the write must stay able to take an
            // aged hold, so the fix is a condition on the age (or the holder), not on the value; no edit is offered.
            if (claim.takeover.length > 0) {
              // A status taken over (`generating` again once its `updatedAt` is old) names its state and its age.
              if (claim.lock.value.value !== true)
                context.report({
                  node: claim.write.node,
                  messageId: "checkThenTakeOver",
                  data: {
                    model: data.model,
                    field: data.field,
                    value: data.value,
                    checkLine: data.checkLine,
                    timeField: claim.takeover[0]!.field,
                  },
                });
              else context.report({ node: claim.write.node, messageId: "checkThenLease", data });
              continue;
            }
            break;
          case "inserted-row":
            break;
          default:
            unreachable(claim);
        }
        // The condition repeats the check: the one value it lets through where it pins one (a row that finished
        // meanwhile is not taken again), else the claimed value excluded.
        const required =
          claim.check.requires && valueText(context.sourceCode, claim.check.node, claim.check.requires.value);
        const edit = required
          ? claim.write.addPredicate?.(claim.lock.field, "eq", required)
          : claim.write.addPredicate?.(claim.lock.field, "ne", claim.lock.valueText);
        // With the check's own way out taken when the write changed nothing, the fix is whole; without it, the caller
        // that lost goes on unless its store throws (Prisma's `update`), and the text says to act on the count.
        const exit = edit && claimExit(context.sourceCode, claim);
        const checkLine = String(claim.check.node.loc.start.line);
        const condition = required
          ? { messageId: "requireValue" as const, data: { field: data.field, required, checkLine } }
          : { messageId: "addCondition" as const, data };
        const whole =
          exit &&
          (required
            ? {
                messageId: "requireValueAndExit" as const,
                data: { field: data.field, required, exit: exit.exit, checkLine },
              }
            : {
                messageId: "addConditionAndExit" as const,
                data: { field: data.field, value: data.value, exit: exit.exit, checkLine },
              });
        context.report({
          node: claim.write.node,
          messageId: "checkThenAct",
          data,
          suggest: !edit
            ? []
            : whole
              ? [
                  {
                    ...whole,
                    fix: (fixer) =>
                      [edit, ...exit.edits].map((e) => fixer.replaceTextRange([e.range[0], e.range[1]], e.text)),
                  },
                ]
              : [{ ...condition, fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text) }],
        });
      }
    });
  },
});
