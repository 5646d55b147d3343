import { Linter, type Rule } from "eslint";
import * as tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import { onLockFacts } from "../../src/rule-kit/inventory.js";
import type { LockFacts } from "../../src/core/model/model.js";

const CLAIM = `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
export async function render(id: string) {
  const claimed = await prisma.video.updateMany({ where: { id, status: { not: "RENDERING" } }, data: { status: "RENDERING" } });
  if (claimed.count === 0) return;
  await prisma.video.update({ where: { id }, data: { status: "DONE" } });
}
`;

describe("the inventory: facts built once per file, each rule's work under its own name", () => {
  it("hands every rule the same facts, in its own Program:exit, in the order the rules were created", () => {
    const seen: { rule: string; facts: LockFacts }[] = [];
    const probe = (name: string): Rule.RuleModule => ({
      meta: { type: "problem", schema: [] },
      create: (context) => onLockFacts(context as never, (facts) => void seen.push({ rule: name, facts })) as Rule.RuleListener,
    });
    const linter = new Linter({ configType: "flat" });
    linter.verify(CLAIM, [{
      files: ["**/*.ts"],
      languageOptions: { parser: tsParser },
      plugins: { p: { rules: { first: probe("first"), second: probe("second"), third: probe("third") } } },
      rules: { "p/first": "error", "p/second": "error", "p/third": "error" },
    }], { filename: "claim.ts" });
    expect(seen.map((s) => s.rule)).toEqual(["first", "second", "third"]);
    expect(seen[0]!.facts.claims).toHaveLength(1);
    expect(new Set(seen.map((s) => s.facts)).size).toBe(1);
  });

  it("runs each rule's callback in that rule's own Program:exit, so ESLint's TIMING and stats put its work under its name", () => {
    // A rule of another plugin between the two: its Program:exit runs between theirs only if each has its own.
    const order: string[] = [];
    const probe = (name: string): Rule.RuleModule => ({
      meta: { type: "problem", schema: [] },
      create: (context) => onLockFacts(context as never, () => void order.push(name)) as Rule.RuleListener,
    });
    const between: Rule.RuleModule = { meta: { type: "problem", schema: [] }, create: () => ({ "Program:exit": () => void order.push("between") }) };
    const linter = new Linter({ configType: "flat" });
    linter.verify(CLAIM, [{
      files: ["**/*.ts"],
      languageOptions: { parser: tsParser },
      plugins: { p: { rules: { first: probe("first"), between, second: probe("second") } } },
      rules: { "p/first": "error", "p/between": "error", "p/second": "error" },
    }], { filename: "claim.ts" });
    expect(order).toEqual(["first", "between", "second"]);
  });
});
