import { Linter, type Rule } from "eslint";
import * as tsParser from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import { onLockFacts } from "../../src/rule-kit/inventory.js";
import type { LockFacts } from "../../src/core/model/lock-facts.js";

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
      create: (context) =>
        onLockFacts(context as never, (facts) => void seen.push({ rule: name, facts })) as Rule.RuleListener,
    });
    const linter = new Linter({ configType: "flat" });
    linter.verify(
      CLAIM,
      [
        {
          files: ["**/*.ts"],
          languageOptions: { parser: tsParser },
          plugins: { p: { rules: { first: probe("first"), second: probe("second"), third: probe("third") } } },
          rules: { "p/first": "error", "p/second": "error", "p/third": "error" },
        },
      ],
      { filename: "claim.ts" },
    );
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
    const between: Rule.RuleModule = {
      meta: { type: "problem", schema: [] },
      create: () => ({ "Program:exit": () => void order.push("between") }),
    };
    const linter = new Linter({ configType: "flat" });
    linter.verify(
      CLAIM,
      [
        {
          files: ["**/*.ts"],
          languageOptions: { parser: tsParser },
          plugins: { p: { rules: { first: probe("first"), between, second: probe("second") } } },
          rules: { "p/first": "error", "p/between": "error", "p/second": "error" },
        },
      ],
      { filename: "claim.ts" },
    );
    expect(order).toEqual(["first", "between", "second"]);
  });
});

/** The listeners each probe rule got, and the facts the first one saw (if any), for one module's text. */
function listen(text: string, settings: Record<string, unknown> = {}): { listeners: string[][]; facts?: LockFacts } {
  const listeners: string[][] = [];
  let facts: LockFacts | undefined;
  const probe: Rule.RuleModule = {
    meta: { type: "problem", schema: [] },
    create: (context) => {
      const l = onLockFacts(context as never, (f) => void (facts ??= f));
      listeners.push(Object.keys(l));
      return l as Rule.RuleListener;
    },
  };
  new Linter({ configType: "flat" }).verify(
    text,
    [
      {
        files: ["**/*.ts"],
        languageOptions: { parser: tsParser },
        plugins: { p: { rules: { first: probe, second: probe } } },
        rules: { "p/first": "error", "p/second": "error" },
        settings,
      },
    ],
    { filename: "module.ts" },
  );
  return { listeners, ...(facts ? { facts } : {}) };
}

describe("the text pre-check: modules with no lock evidence get no listener (issue 17)", () => {
  const VIEW = `export async function show(req: Request, res: Response) {
  const user = await prisma.user.findFirst({ where: { id: req.params.id } });
  if (!user) return res.status(404).json({ statusCode: 404 });
  const { theme } = useAppState();
  await prisma.user.update({ where: { id: user.id }, data: { name: req.body.name } });
  return res.json({ user, theme, at: appState.updatedAt });
}
`;

  it("gives a module of views and updates with no lock, state field or flag no listener at all, not even Program:exit", () => {
    expect(listen(VIEW)).toEqual({ listeners: [[], []] });
  });

  it("reads the same module whole when told to (the audit; the equivalence test), and finds nothing a rule reads", () => {
    const { listeners, facts } = listen(VIEW, { locksAllModules: true });
    expect(listeners[0]).toContain("CallExpression");
    expect(facts?.writes).toHaveLength(1);
    expect(facts?.claims).toEqual([]);
  });

  it("reads a SourceCode whole when told to, even after a lint with the pre-check ruled it out", () => {
    const seen: string[][] = [];
    const probe: Rule.RuleModule = {
      meta: { type: "problem", schema: [] },
      create: (context) => {
        const l = onLockFacts(context as never, () => undefined);
        seen.push(Object.keys(l));
        return l as Rule.RuleListener;
      },
    };
    const config = (settings: Record<string, unknown>) => [
      {
        files: ["**/*.ts"],
        languageOptions: { parser: tsParser },
        plugins: { p: { rules: { probe } } },
        rules: { "p/probe": "error" as const },
        settings,
      },
    ];
    const linter = new Linter({ configType: "flat" });
    linter.verify(VIEW, config({}), { filename: "view.ts" });
    linter.verify(linter.getSourceCode()!, config({ locksAllModules: true }), { filename: "view.ts" });
    expect(seen[0]).toEqual([]);
    expect(seen[1]).toContain("CallExpression");
  });

  it("listens to a module that writes a state field, and records no code path where no lock is held across paths", () => {
    const { listeners, facts } = listen(CLAIM);
    expect(listeners[0]).toEqual(expect.arrayContaining(["CallExpression", "Program:exit"]));
    expect(listeners[0]).not.toContain("onCodePathStart");
    expect(listeners[0]).not.toContain("AwaitExpression");
    expect(listeners[1]).toEqual(["Program:exit"]);
    expect(facts?.claims).toHaveLength(1);
  });

  it("records code paths where a key-value lock can be held across them", () => {
    const text = `export async function run(redis: Redis) {
  const ok = await redis.set("lock:report", "1", "PX", 30000, "NX");
  if (!ok) return;
  await work();
  await redis.del("lock:report");
}
`;
    const { listeners, facts } = listen(text);
    expect(listeners[0]).toEqual(expect.arrayContaining(["onCodePathStart", "AwaitExpression", "ReturnStatement"]));
    expect(facts?.held).toHaveLength(1);
  });

  it("takes the state and flag fields from settings.locks, in any spelling", () => {
    const text = `export async function start(id: string) {
  await db.update(jobs).set({ life_cycle: "CRUNCHING" }).where(eq(jobs.id, id));
}
`;
    expect(listen(text).listeners[0]).toEqual([]);
    expect(listen(text, { locks: { stateFields: ["lifeCycle"] } }).listeners[0]).toContain("CallExpression");
    const flag = `export async function start(id: string) { await db.update(jobs).set({ is_chewing: true }).where(eq(jobs.id, id)); }\n`;
    expect(listen(flag).listeners[0]).toEqual([]);
    expect(listen(flag, { locks: { flagFields: ["chewing"] } }).listeners[0]).toContain("CallExpression");
  });

  it("keeps a module whose only lock evidence is a store's own (Redis NX), an in-process flag, or a delete", () => {
    expect(listen(`export const take = (r: Redis, k: string) => r.setnx(k, "1");\n`).listeners[0]).toContain(
      "CallExpression",
    );
    expect(
      listen(`let on = false;\nexport async function tick() { if (on) return; on = true; await step(); on = false; }\n`)
        .listeners[0],
    ).toContain("CallExpression");
    expect(
      listen(`export const drop = (id: string) => prisma.run.delete({ where: { id } });\n`).listeners[0],
    ).toContain("CallExpression");
  });
});
