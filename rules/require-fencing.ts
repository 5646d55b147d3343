import { createRule } from "../src/create-rule.js";
import { onLockFacts } from "../src/core/inventory.js";
import { claimData } from "../src/core/messages.js";
import { formatValue } from "../src/core/values.js";

export default createRule({
  name: "require-fencing",
  meta: {
    type: "problem",
    hasSuggestions: true,
    docs: {
      description: "Require writes made by a claim's holder to be conditioned on still holding the claim",
      recommended: false,
      question: "Q3",
    },
    schema: [],
    messages: {
      unfencedWrite:
        "Q3 (is the release race-safe?): this write moves the claimed {{model}} row to {{target}} without checking that this worker still holds the claim ({{field}} = {{value}}, taken at line {{claimLine}}). After a stale recovery or a new claim, a late holder overwrites the newer state. Require {{field}} = {{value}}, or the holder's owner or token column, in the filter.",
      addFence: "Require {{field}} = {{value}} in the filter (zero affected rows then means the claim was lost).",
    },
  },
  create(context) {
    return onLockFacts(context, (facts) => {
      const seen = new Set<unknown>();
      for (const holder of facts.holderWrites) {
        if (holder.fenced || seen.has(holder.write.node)) continue;
        seen.add(holder.write.node);
        const data = {
          ...claimData(holder.claim),
          target: holder.assignment.value.kind === "static" ? formatValue(holder.assignment.value.value) : "another state",
        };
        const edit = holder.write.addPredicate?.(holder.claim.lock.field, "eq", holder.claim.lock.valueText);
        context.report({
          node: holder.write.node,
          messageId: "unfencedWrite",
          data,
          suggest: edit
            ? [{ messageId: "addFence", data, fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text) }]
            : [],
        });
      }
    });
  },
});
