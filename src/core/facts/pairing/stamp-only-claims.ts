/**
 * A conditional write used as a lock that excludes nobody: it picks a row still in an in-progress state
 * (`status = 'processing'`) and only stamps a time on it (`updated_at = now()`), and the caller goes on only when the
 * write returned the row (`const { data: lockedPost } = …; if (!lockedPost) continue`). Nothing the filter tests
 * changes, so the next caller's write matches the same row and returns it too: every caller goes on (blind-9 A406,
 * an "optimistic lock" on a bumped timestamp). Known by what the code does with the result: its binding names a lock
 * (`lockedPost`, `lock`), and a test of it leaves before the work.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import type { StampOnlyClaim } from "../../model/lock-facts.js";
import { isOpaque } from "../../model/conditions.js";
import { sameField } from "../../model/names.js";
import { hasLockWord } from "../../model/settings.js";
import { contains, exits } from "../../reading/ast.js";
import { findVariable, resultBinding } from "../../reading/values.js";
import { Module } from "./module.js";

export function findStampOnlyClaims(mod: Module): StampOnlyClaim[] {
  const out: StampOnlyClaim[] = [];
  for (const write of mod.writes) {
    if ((write.effect !== undefined && write.effect !== "update") || write.dynamicModel || write.underLock) continue;
    if (write.assignments.length === 0 || !write.assignments.every((a) => a.value.kind === "now")) continue;
    const branches = mod.branchesOf(write);
    if (branches.length !== 1 || isOpaque(branches[0]!)) continue;
    const branch = branches[0]!;
    // The filter holds the row in an in-progress state and tests nothing the write changes.
    const held = branch.find(
      (atom) =>
        !("opaque" in atom) &&
        atom.op === "eq" &&
        atom.pred.values?.length === 1 &&
        typeof atom.pred.values[0]!.value === "string" &&
        mod.vocabulary.isStateField(atom.pred.field) &&
        mod.vocabulary.isInProgressValue(atom.pred.values[0]!.value, atom.pred.field),
    );
    if (!held || "opaque" in held) continue;
    if (
      branch.some((atom) => !("opaque" in atom) && write.assignments.some((a) => sameField(a.field, atom.pred.field)))
    )
      continue;
    const result = resultBinding(write.runAt ?? write.node);
    if (!result || !hasLockWord(result.name)) continue;
    const exit = leavesWithout(mod, result, write.node);
    if (!exit) continue;
    out.push({
      write,
      field: held.pred.field,
      value: String(held.pred.values![0]!.value),
      stamped: write.assignments.map((a) => a.field),
      check: exit,
    });
  }
  return out;
}

/** The `if` after the write that tests its result and leaves (`if (lockError || !lockedPost) continue`). */
function leavesWithout(mod: Module, result: TSESTree.Identifier, write: Node): Node | undefined {
  const uses = findVariable(mod.sourceCode, result)?.references.map((r) => r.identifier) ?? [];
  for (const use of uses) {
    if (use.range[0] < write.range[1]) continue;
    for (let p: Node | undefined = use.parent; p; p = p.parent) {
      if (p.type === "IfStatement") {
        if (contains(p.test, use) && exits(p.consequent)) return p;
        break;
      }
      if (p.type.endsWith("Statement") || p.type.startsWith("Function") || p.type === "ArrowFunctionExpression") break;
    }
  }
  return undefined;
}
