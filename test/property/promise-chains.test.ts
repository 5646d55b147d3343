// Promise chains kept as queues, drawn from parts (issue 35, blind-15's session): work serialised by chaining each
// call on the link before it, kept per key in a `Map` or in one slot, at module level or in a function's variable;
// the start seeded in place (`get(key) ?? Promise.resolve()`) or stored first (`if (!m.has(key)) m.set(key,
// Promise.resolve())`), and the tail kept as the work's link or advanced past it through a const (`const run =
// q.then(work); q = run.then(() => undefined)`: blind-23's session).
// The oracle: the plugin reports the link exactly when the chain lives with the process and nothing on it handles a
// rejection (the link, a `.catch`, or the work itself catching everything); and nothing else.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lint } from "./lint.js";
import { check, NUM_RUNS, SEED } from "./run.js";

interface ChainParts {
  readonly name: string;
  readonly holder: "map" | "slot";
  readonly scope: "module" | "function";
  readonly link: "then" | "finally";
  readonly handling: "none" | "two-handlers" | "catch-first" | "work-catches";
  readonly seed: "in-place" | "stored-first";
  readonly advance: "kept" | "past-const";
}

const chainArb: fc.Arbitrary<ChainParts> = fc.record({
  name: fc.constantFrom("tails", "queue", "pending", "lastRun", "q"),
  holder: fc.constantFrom<ChainParts["holder"]>("map", "slot"),
  scope: fc.constantFrom<ChainParts["scope"]>("module", "function"),
  link: fc.constantFrom<ChainParts["link"]>("then", "finally"),
  handling: fc.constantFrom<ChainParts["handling"]>("none", "two-handlers", "catch-first", "work-catches"),
  seed: fc.constantFrom<ChainParts["seed"]>("in-place", "stored-first"),
  advance: fc.constantFrom<ChainParts["advance"]>("kept", "past-const"),
});

function chainModule(p: ChainParts): string {
  const work =
    p.handling === "work-catches"
      ? "async () => {\n    try {\n      await apply(item);\n    } catch (error) {\n      console.error(error);\n    }\n  }"
      : "() => apply(item)";
  const seeded = p.holder === "map" && p.seed === "stored-first";
  const before =
    p.holder === "map" ? (seeded ? `${p.name}.get(key)` : `(${p.name}.get(key) ?? Promise.resolve())`) : p.name;
  const start = p.handling === "catch-first" ? `${before}.catch(() => undefined)` : before;
  const linked =
    p.handling === "two-handlers" && p.link === "then"
      ? `${start}.then(${work}, ${work})`
      : p.handling === "two-handlers"
        ? `${start}.then(${work}, ${work}).${p.link}(() => undefined)`
        : `${start}.${p.link}(${work})`;
  const seed = seeded ? `if (!${p.name}.has(key)) ${p.name}.set(key, Promise.resolve());\n  ` : "";
  const tail = p.advance === "past-const" ? "run.then(() => undefined)" : undefined;
  const keep =
    seed +
    (p.advance === "past-const" ? `const run = ${linked};\n  ` : "") +
    (p.holder === "map"
      ? `const next = ${tail ?? linked};\n  ${p.name}.set(key, next);\n  await next;`
      : `${p.name} = ${tail ?? linked};\n  await ${p.name};`);
  const decl =
    p.holder === "map"
      ? `const ${p.name} = new Map<string, Promise<unknown>>();`
      : `let ${p.name}: Promise<unknown> = Promise.resolve();`;
  const head = `import { apply } from "./apply.js";\n`;
  return p.scope === "module"
    ? `${head}${decl}\nexport async function enqueue(key: string, item: string) {\n  ${keep}\n}\n`
    : `${head}export async function enqueueAll(key: string, items: string[]) {\n  ${decl}\n  for (const item of items) {\n  ${keep}\n  }\n}\n`;
}

describe(`promise chains kept as queues (seed ${SEED}, ${NUM_RUNS} runs)`, () => {
  it("a link is reported exactly when the kept chain handles no rejection", () => {
    check(
      fc.property(chainArb, (p) => {
        const code = chainModule(p);
        const findings = lint(code);
        const keys = findings.map((f) => `${f.rule} ${f.messageId}`);
        const poisoned = p.scope === "module" && p.handling === "none";
        // Reported at the link that is kept: past a const, the tail's own `.then`.
        const id = p.link === "finally" && p.advance === "kept" ? "chainPassesRejection" : "chainSkipsAfterRejection";
        expect(keys, code).toEqual(poisoned ? [`locks/release-in-finally ${id}`] : []);
        for (const f of findings) expect(f.data["holder"], code).toBe(p.name);
      }),
    );
  });
});
