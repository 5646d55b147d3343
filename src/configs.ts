/** Configs derived from each rule's `meta.docs.recommended`: never a hand-kept list. */
import type { rules as allRules } from "./rules.js";

type RuleMap = typeof allRules;
export type ConfigName = "recommended" | "strict";

export function ruleSettings(rules: RuleMap, config: ConfigName): Record<string, "error"> {
  const out: Record<string, "error"> = {};
  for (const [id, rule] of Object.entries(rules)) {
    if (config === "strict" || rule.meta.docs.recommended) out[`locks/${id}`] = "error";
  }
  return out;
}
