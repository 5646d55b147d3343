import type { TSESLint } from "@typescript-eslint/utils";
import type { Node, ObjectWrite, StateWrite, TextEdit } from "../src/core/model/accesses.js";
import type { HeldEffect } from "../src/core/model/held-locks.js";
import type { LockFacts } from "../src/core/model/lock-facts.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import {
  describeEffectLock,
  describeObjectWrite,
  describeToken,
  tokenTextAt,
} from "../src/core/facts/fencing/messages.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { claimData } from "../src/rule-kit/messages.js";
import { describeRowFilter } from "../src/core/model/describe.js";
import { formatValue } from "../src/core/model/names.js";

type MessageId =
  | "unfencedWrite"
  | "takeoverWrite"
  | "unfencedResult"
  | "unfencedObjectWrite"
  | "unconditionalRowWrite"
  | "addFence"
  | "addToken"
  | "addCondition";
type Suggestion = TSESLint.SuggestionReportDescriptor<MessageId>;

const suggestion = (messageId: MessageId, data: Record<string, string>, edit: TextEdit | undefined): Suggestion[] =>
  edit ? [{ messageId, data, fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text) }] : [];

export default createRule({
  name: "require-fencing",
  meta: {
    type: "problem",
    hasSuggestions: true,
    docs: {
      description:
        "Require effects made while holding a lock to be fenced by its token, keyed by the job, or conditional",
      recommended: false,
      question: "Q3",
    },
    schema: [],
    messages: {
      unfencedWrite:
        "Q3 (is the release race-safe?): this write moves the claimed {{model}} row to {{target}} without checking that this worker still holds the claim ({{field}} = {{value}}, taken at line {{claimLine}}). After a stale recovery or a new claim, a late holder overwrites the newer state. Require {{field}} = {{value}}, or the holder's owner or token column, in the filter.",
      takeoverWrite:
        "Q3 (is the release race-safe?): this write {{effect}} checking at most {{field}} = {{value}}, but the claim at line {{claimLine}} takes over leases that look stale and the new holder has the same {{field}} = {{value}}: only the {{tokenField}} column the claim stamps tells the holders apart. A worker that paused past its lease resumes and overwrites the new holder's work. Require {{tokenField}} to hold this worker's token in the filter.",
      leaseWrite:
        "Q3 (is the release race-safe?): this write {{effect}} by {{filter}} alone, but the lease on {{field}} taken at line {{claimLine}} passes to another worker once it looks stale: only the {{tokenField}} column the lease stamps tells the holders apart. A worker that paused past its lease resumes and overwrites the new holder's work. Require {{tokenField}} to hold this worker's token in the filter.",
      unfencedResult:
        "Q3 (is the release race-safe?): this write stores {{result}} on the claimed {{model}} row without checking that this worker still holds the claim ({{field}} = {{value}} with its {{tokenField}}, taken at line {{claimLine}}). A worker that paused past its claim resumes and writes its result onto a row that was recovered and claimed again. Require {{tokenField}}, or {{field}} = {{value}}, in the filter.",
      unfencedObjectWrite:
        "Q3 (is a late holder's write refused?): this {{operation}} writes {{location}} while holding {{lock}} (taken at line {{acquireLine}}), at a location not keyed by the job and without a condition. A worker that paused past its lock resumes and overwrites what the new holder wrote: the lock only avoids duplicate work. Write to a job-addressed location, make the write conditional ({{condition}}), or pass {{token}} so that storage can refuse a late writer.",
      unconditionalRowWrite:
        "Q3 (is a late holder's write refused?): this write sets {{field}} to {{target}} on the {{model}} row that {{lock}} (taken at line {{acquireLine}}) is about, without any condition. A worker that paused past its lock resumes and overwrites the state the new holder recorded. Write it only if {{field}} is not already {{target}}, or only while the row holds {{token}}.",
      addFence: "Require {{field}} = {{value}} in the filter (zero affected rows then means the claim was lost).",
      addToken:
        "Require {{tokenField}} = {{tokenText}} in the filter (zero affected rows then means the claim was lost).",
      addCondition:
        "Write only if {{field}} is not already {{target}} (zero affected rows then means another holder recorded it).",
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    const seen = new Set<Node>();

    function reportRow(effect: HeldEffect & { write: StateWrite }): void {
      if (effect.lock.kind !== "claim" || !effect.assignment) return;
      const claim = effect.lock.claim;
      const tokenField = effect.token?.field ?? "";
      const assignment = effect.assignment;
      const moves = assignment.field === claim.lock.field;
      const target = assignment.value.kind === "static" ? formatValue(assignment.value.value) : "another state";
      const data = {
        ...claimData(claim),
        tokenField,
        effect: moves
          ? `moves the claimed ${claim.lock.model} row to ${target}`
          : `stores ${assignment.field} on the claimed ${claim.lock.model} row`,
        result: assignment.field,
        filter: describeRowFilter(effect.write.filter),
      };
      const tokenText = tokenTextAt(sourceCode, effect.token, effect.write.node);
      const suggest =
        tokenText !== undefined
          ? suggestion("addToken", { tokenField, tokenText }, effect.write.addPredicate?.(tokenField, "eq", tokenText))
          : effect.kind === "result-row"
            ? suggestion(
                "addFence",
                claimData(claim),
                effect.write.addPredicate?.(claim.lock.field, "eq", claim.lock.valueText),
              )
            : [];
      // A lease has no claimed value to name: what fences its holder is the token alone.
      const messageId =
        effect.kind !== "takeover-row" ? "unfencedResult" : claim.kind === "lease" ? "leaseWrite" : "takeoverWrite";
      context.report({ node: effect.write.node, messageId, data, suggest });
    }

    function reportObject(effect: HeldEffect & { write: ObjectWrite }): void {
      const { operation, location, condition } = describeObjectWrite(sourceCode, effect.write);
      const { lock, acquireLine } = describeEffectLock(sourceCode, effect.lock);
      context.report({
        node: effect.write.node,
        messageId: "unfencedObjectWrite",
        data: { operation, location, lock, acquireLine, condition, token: describeToken(sourceCode, effect.token) },
      });
    }

    function reportKvRow(effect: HeldEffect & { write: StateWrite }): void {
      const assignment = effect.assignment;
      if (!assignment || assignment.value.kind !== "static") return;
      const target = formatValue(assignment.value.value);
      const data = {
        ...describeEffectLock(sourceCode, effect.lock),
        model: effect.write.model,
        field: assignment.field,
        target,
        token: describeToken(sourceCode, effect.token),
      };
      const edit = effect.write.addPredicate?.(assignment.field, "ne", sourceCode.getText(assignment.valueNode));
      context.report({
        node: effect.write.node,
        messageId: "unconditionalRowWrite",
        data,
        suggest: suggestion("addCondition", { field: assignment.field, target }, edit),
      });
    }

    function report(effect: HeldEffect, facts: LockFacts): void {
      if (effect.fenced || seen.has(effect.write.node)) return;
      // A claim nothing can take from its holder has no newer holder to overwrite: Q1 is its finding.
      if (effect.lock.kind === "claim" && !facts.changesHands(effect.lock.claim)) return;
      seen.add(effect.write.node);
      if (effect.write.access === "object") reportObject({ ...effect, write: effect.write });
      else if (effect.kind === "kv-row") reportKvRow({ ...effect, write: effect.write });
      else reportRow({ ...effect, write: effect.write });
    }

    return onLockFacts(context, (facts: LockFacts) => {
      // Claims first (their messages name the claimed row), then what other locks hold.
      for (const effect of facts.heldEffects)
        if (effect.lock.kind === "claim" && effect.write.access === "write") report(effect, facts);
      for (const holder of facts.holderWrites) {
        if (holder.fenced || holder.beforeAnyWait || seen.has(holder.write.node) || !facts.changesHands(holder.claim))
          continue;
        seen.add(holder.write.node);
        const data = {
          ...claimData(holder.claim),
          target:
            holder.assignment.value.kind === "static" ? formatValue(holder.assignment.value.value) : "another state",
        };
        const edit = holder.write.addPredicate?.(holder.claim.lock.field, "eq", holder.claim.lock.valueText);
        context.report({
          node: holder.write.node,
          messageId: "unfencedWrite",
          data,
          suggest: suggestion("addFence", data, edit),
        });
      }
      for (const effect of facts.heldEffects) report(effect, facts);
    });
  },
});
