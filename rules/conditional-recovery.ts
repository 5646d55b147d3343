import type { Node } from "../src/core/model/model.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { checkData, claimData, describeRowFilter } from "../src/rule-kit/messages.js";
import { formatValue } from "../src/core/model/names.js";

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
      checkInJs:
        "Q3 (is the release race-safe?): this recovery of {{model}}.{{field}} = {{value}} (claimed at line {{claimLine}}) judges staleness {{checkedWhere}} at line {{checkLine}}, then writes by {{rowFilter}} only. A holder that finishes or reports progress between the read and the write is overwritten. Put the status and age conditions in the write's filter and treat zero affected rows as handled by someone else.",
      missingStatus:
        "Q3 (is the release race-safe?): this recovery moves stale {{model}} rows to {{target}} without requiring {{field}} = {{value}} (claimed at line {{claimLine}}) in its filter, so a row that completed in the meantime is overwritten. Add {{field}} = {{value}} to the filter.",
      missingTime:
        "Q3 (is the release race-safe?): this recovery moves every {{model}} row with {{field}} = {{value}} (claimed at line {{claimLine}}) to {{target}} without an age condition, so it also takes the lock from holders that are alive and working. Add a progress-timestamp condition (such as updatedAt older than a threshold) to the filter.",
      addStatus: "Add {{field}} = {{value}} to the filter.",
    },
  },
  create(context) {
    return onLockFacts(context, (facts) => {
      const seen = new Set<Node>();
      for (const recovery of facts.recoveries) {
        const flaw = recovery.flaws[0];
        if (!flaw || seen.has(recovery.write.node)) continue;
        seen.add(recovery.write.node);
        const target = recovery.write.assignments.find((a) => a.field === recovery.lock.field);
        const data = {
          ...claimData(recovery.claim),
          target: target?.value.kind === "static" ? formatValue(target.value.value) : "another state",
          rowFilter: describeRowFilter(recovery.write),
          ...(recovery.check ? checkData(recovery.check) : { checkedWhere: "", checkLine: "" }),
        };
        const edit = flaw === "missing-status"
          ? recovery.write.addPredicate?.(recovery.lock.field, "eq", recovery.lock.valueText)
          : undefined;
        context.report({
          node: recovery.write.node,
          messageId: flaw === "check-in-js" ? "checkInJs" : flaw === "missing-status" ? "missingStatus" : "missingTime",
          data,
          suggest: edit
            ? [{ messageId: "addStatus", data, fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text) }]
            : [],
        });
      }
    });
  },
});
