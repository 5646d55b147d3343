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
import { claimData, filterSite } from "../src/rule-kit/messages.js";
import { describeRowFilter } from "../src/core/model/describe.js";
import { formatValue, normalizeModel } from "../src/core/model/names.js";
import { unitOf } from "../src/core/reading/units.js";

type MessageId =
  | "unfencedWrite"
  | "unfencedWrites"
  | "takeoverWrite"
  | "unfencedResult"
  | "unfencedObjectWrite"
  | "unconditionalRowWrite"
  | "addFence"
  | "addFenceAt"
  | "addToken"
  | "addTokenAt"
  | "addCondition";
type Suggestion = TSESLint.SuggestionReportDescriptor<MessageId>;

const suggestion = (messageId: MessageId, data: Record<string, string>, edit: TextEdit | undefined): Suggestion[] =>
  edit ? [{ messageId, data, fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text) }] : [];

/** The other unfenced writes of the same holder, as the message names them. */
/** `and so does the write at line 8`, `and so do the writes at lines 8, 13`. */
function sameIn(lines: readonly number[]): string {
  return lines.length === 1
    ? `and so does the write at line ${lines[0]}`
    : `and so do the writes at lines ${lines.join(", ")}`;
}

function othersText(more: readonly HeldEffect[]): string {
  if (more.length === 0) return "";
  const lines = [...new Set(more.map((e) => e.write.node.loc.start.line))];
  const shown = lines.slice(0, 8).join(", ") + (lines.length > 8 ? ", …" : "");
  return lines.length === 1
    ? ` (and in the filter of the write at line ${shown} of this function, unfenced the same way)`
    : ` (and in the filters of the ${lines.length} writes at lines ${shown} of this function, unfenced the same way)`;
}

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
      unfencedWrites:
        "Q3 (is the release race-safe?): this write moves the claimed {{model}} row to {{target}} without checking that this worker still holds the claim ({{field}} = {{value}}, taken at line {{claimLine}}), {{alsoAtLine}} of this function. After a stale recovery or a new claim, a late holder overwrites the newer state. Require {{field}} = {{value}}, or the holder's owner or token column, in each filter.",
      takeoverWrite:
        "Q3 (is the release race-safe?): this write {{effect}} checking at most {{field}} = {{value}}, but the claim at line {{claimLine}} takes over leases that look stale and the new holder has the same {{field}} = {{value}}: only the {{tokenField}} column the claim stamps tells the holders apart. A worker that paused past its lease resumes and overwrites the new holder's work. Require {{tokenField}} to hold this worker's token in the filter{{alsoAtLine}}.",
      leaseWrite:
        "Q3 (is the release race-safe?): this write {{effect}} by {{filter}} alone, but the lease on {{field}} taken at line {{claimLine}} passes to another worker once it looks stale: only the {{tokenField}} column the lease stamps tells the holders apart. A worker that paused past its lease resumes and overwrites the new holder's work. Require {{tokenField}} to hold this worker's token in the filter{{alsoAtLine}}.",
      unfencedResult:
        "Q3 (is the release race-safe?): this write stores {{result}} on the claimed {{model}} row without checking that this worker still holds the claim ({{field}} = {{value}} with its {{tokenField}}, taken at line {{claimLine}}). A worker that paused past its claim resumes and writes its result onto a row that was recovered and claimed again. Require {{tokenField}}, or {{field}} = {{value}}, in the filter{{alsoAtLine}}.",
      unfencedObjectWrite:
        "Q3 (is a late holder's write refused?): this {{operation}} writes {{location}} while holding {{lock}} (taken at line {{acquireLine}}), at a location not keyed by the job and without a condition. A worker that paused past its lock resumes and overwrites what the new holder wrote: the lock only avoids duplicate work. Write to a job-addressed location, make the write conditional ({{condition}}), or pass {{token}} so that storage can refuse a late writer.",
      unconditionalRowWrite:
        "Q3 (is a late holder's write refused?): this write sets {{field}} to {{target}} on the {{model}} row that {{lock}} (taken at line {{acquireLine}}) is about, without any condition. A worker that paused past its lock resumes and overwrites the state the new holder recorded. Write it only if {{field}} is not already {{target}}, or only while the row holds {{token}}.",
      addFence: "Require {{field}} = {{value}} in the filter (zero affected rows then means the claim was lost).",
      addFenceAt:
        "Require {{field}} = {{value}} in the filter of the write at line {{line}} (zero affected rows then means the claim was lost).",
      addToken:
        "Require {{tokenField}} = {{tokenText}} in the filter (zero affected rows then means the claim was lost).",
      addTokenAt:
        "Require {{tokenField}} = {{tokenText}} in the filter of the write at line {{line}} (zero affected rows then means the claim was lost).",
      addCondition:
        "Write only if {{field}} is not already {{target}} (zero affected rows then means another holder recorded it).",
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    const seen = new Set<Node>();

    /**
     * One finding per holder function (the nearest named one: a `.then` callback is its function's) and claimed table: a handler that writes the held row ten times by id alone has
     * one flaw (its writes do not carry the token), reported at the first write with the lines of the others.
     */
    function reportRows(rows: readonly (HeldEffect & { write: StateWrite })[]): void {
      const groups = new Map<string, (HeldEffect & { write: StateWrite })[]>();
      for (const effect of rows) {
        if (effect.lock.kind !== "claim") continue;
        const key = `${unitOf(filterSite(effect.write))?.range[0] ?? -1}:${normalizeModel(effect.lock.claim.lock.model)}`;
        groups.set(key, [...(groups.get(key) ?? []), effect]);
      }
      for (const group of groups.values()) {
        const [first, ...more] = [...group].sort((a, b) => a.write.node.range[0] - b.write.node.range[0]);
        reportRow(first!, more);
      }
    }

    function reportRow(effect: HeldEffect & { write: StateWrite }, more: readonly HeldEffect[] = []): void {
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
        alsoAtLine: othersText(more),
      };
      const tokenText = tokenTextAt(sourceCode, effect.token, filterSite(effect.write));
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
      // The same edit for each other write the finding names, one suggestion each.
      for (const other of more) {
        if (other.write.access !== "write") continue;
        const text = tokenTextAt(sourceCode, other.token, other.write.node);
        const field = other.token?.field ?? "";
        if (text === undefined || field === "") continue;
        suggest.push(
          ...suggestion(
            "addTokenAt",
            { tokenField: field, tokenText: text, line: String(other.write.node.loc.start.line) },
            other.write.addPredicate?.(field, "eq", text),
          ),
        );
      }
      // A lease has no claimed value to name: what fences its holder is the token alone.
      const messageId =
        effect.kind !== "takeover-row" ? "unfencedResult" : claim.kind === "lease" ? "leaseWrite" : "takeoverWrite";
      context.report({ node: filterSite(effect.write), messageId, data, suggest });
    }

    function reportObject(effect: HeldEffect & { write: ObjectWrite }): void {
      const { operation, location, condition } = describeObjectWrite(sourceCode, effect.write);
      const { lock, acquireLine } = describeEffectLock(sourceCode, effect.lock);
      context.report({
        node: filterSite(effect.write),
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
        node: filterSite(effect.write),
        messageId: "unconditionalRowWrite",
        data,
        suggest: suggestion("addCondition", { field: assignment.field, target }, edit),
      });
    }

    const rows: (HeldEffect & { write: StateWrite })[] = [];

    function report(effect: HeldEffect, facts: LockFacts): void {
      if (effect.fenced || seen.has(filterSite(effect.write))) return;
      // A claim nothing can take from its holder has no newer holder to overwrite: Q1 is its finding.
      if (effect.lock.kind === "claim" && !facts.changesHands(effect.lock.claim)) return;
      // Nor one whose holder aborts its work before any recovery can take the row: it cannot write late.
      if (effect.lock.kind === "claim" && facts.boundedBelowRecovery(effect.lock.claim)) return;
      seen.add(filterSite(effect.write));
      if (effect.write.access === "object") reportObject({ ...effect, write: effect.write });
      else if (effect.kind === "kv-row") reportKvRow({ ...effect, write: effect.write });
      else rows.push({ ...effect, write: effect.write });
    }

    return onLockFacts(context, (facts: LockFacts) => {
      // Claims first (their messages name the claimed row), then what other locks hold.
      for (const effect of facts.heldEffects)
        if (effect.lock.kind === "claim" && effect.write.access === "write") report(effect, facts);
      const holderGroups = new Map<string, (typeof facts.holderWrites)[number][]>();
      for (const holder of facts.holderWrites) {
        if (
          holder.fenced ||
          holder.beforeAnyWait ||
          seen.has(filterSite(holder.write)) ||
          !facts.changesHands(holder.claim) ||
          facts.boundedBelowRecovery(holder.claim)
        )
          continue;
        seen.add(filterSite(holder.write));
        // The holder function as the held effects' findings take it: a `.then` callback is its function's.
        const key = `${holder.claim.write.node.range[0]}:${unitOf(filterSite(holder.write))?.range[0] ?? -1}`;
        holderGroups.set(key, [...(holderGroups.get(key) ?? []), holder]);
      }
      // One finding per claim and function, at its first unfenced write, naming the others (as the held effects'
      // findings do): the function's writes share one flaw, and the fix is the same in each filter.
      for (const group of holderGroups.values()) {
        const [holder, ...more] = [...group].sort(
          (a, b) => filterSite(a.write).range[0] - filterSite(b.write).range[0],
        ) as [(typeof group)[number], ...typeof group];
        const data = {
          ...claimData(holder.claim),
          target: holder.write.madeBy
            ? "the state its callers pass"
            : holder.assignment.value.kind === "static"
              ? formatValue(holder.assignment.value.value)
              : "another state",
        };
        const fence = (w: StateWrite) => w.addPredicate?.(holder.claim.lock.field, "eq", holder.claim.lock.valueText);
        const suggest = suggestion("addFence", data, fence(holder.write));
        for (const other of more) {
          const line = String(filterSite(other.write).loc.start.line);
          suggest.push(...suggestion("addFenceAt", { ...data, line }, fence(other.write)));
        }
        context.report({
          node: filterSite(holder.write),
          ...(more.length === 0
            ? { messageId: "unfencedWrite" as const, data }
            : {
                messageId: "unfencedWrites" as const,
                data: {
                  ...data,
                  alsoAtLine: sameIn([...new Set(more.map((h) => filterSite(h.write).loc.start.line))]),
                },
              }),
          suggest,
        });
      }
      for (const effect of facts.heldEffects) report(effect, facts);
      reportRows(rows);
    });
  },
});
