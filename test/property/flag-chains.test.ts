// Guards cleared by a promise chain, drawn from parts (issue 35, blind-21's session): a flag turned away on, set, then
// cleared in the callbacks of a chain the function starts after it (`await prune().finally(() => { busy = false })`).
// The flag is a module `let` or a member of a module object; the chain clears it in `.finally`, in both handlers of a
// `.then`, in a `.then` after a `.catch` that swallows the rejection, in a `.then` after a `.catch` that throws it on,
// or in a `.then` alone; it is awaited or returned; awaited work may come before it.
// The oracle: a chain that clears the flag however it settles is the release, where it stands, so the guard is
// reported (a rejection before the chain) exactly when awaited work comes first; a chain that clears it only on
// fulfilment is reported as such, whatever came before; nothing else is reported.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lint } from "./lint.js";
import { check, NUM_RUNS, SEED } from "./run.js";

type Link = "finally" | "two-handlers" | "catch-absorbs" | "catch-rethrows" | "then-only";

interface FlagChainParts {
  readonly name: string;
  readonly holder: "let" | "member";
  readonly link: Link;
  readonly workBefore: boolean;
  readonly use: "await" | "return";
}

const flagChainArb: fc.Arbitrary<FlagChainParts> = fc.record({
  name: fc.constantFrom("busy", "running", "isSyncing", "crawling", "inFlight"),
  holder: fc.constantFrom<FlagChainParts["holder"]>("let", "member"),
  link: fc.constantFrom<Link>("finally", "two-handlers", "catch-absorbs", "catch-rethrows", "then-only"),
  workBefore: fc.boolean(),
  use: fc.constantFrom<FlagChainParts["use"]>("await", "return"),
});

function flagChainModule(p: FlagChainParts): string {
  const flag = p.holder === "let" ? p.name : `state.${p.name}`;
  const decl = p.holder === "let" ? `let ${p.name} = false;` : `const state = { ${p.name}: false };`;
  const clear = `() => {\n    ${flag} = false;\n  }`;
  const chain = {
    finally: `prune().finally(${clear})`,
    "two-handlers": `prune().then(\n  ${clear},\n  (error) => {\n    ${flag} = false;\n    throw error;\n  },\n  )`,
    "catch-absorbs": `prune()\n    .catch((error) => console.error(error))\n    .then(${clear})`,
    "catch-rethrows": `prune()\n    .catch((error) => {\n      throw error;\n    })\n    .then(${clear})`,
    "then-only": `prune().then(${clear})`,
  }[p.link];
  const before = p.workBefore ? "  const pages = await fetchPages();\n  await store(pages);\n" : "";
  return [
    `import { fetchPages, store, prune } from "./work.js";`,
    decl,
    `export async function crawl() {`,
    `  if (${flag}) return;`,
    `  ${flag} = true;`,
    `${before}  ${p.use === "await" ? "await" : "return"} ${chain};`,
    `}`,
    ``,
  ].join("\n");
}

describe(`guards cleared by a promise chain (seed ${SEED}, ${NUM_RUNS} runs)`, () => {
  it("a chain that clears however it settles is the release; one that clears on fulfilment only is reported", () => {
    check(
      fc.property(flagChainArb, (p) => {
        const code = flagChainModule(p);
        const keys = lint(code).map((f) => `${f.rule} ${f.messageId} ${f.line}`);
        const settled = p.link === "finally" || p.link === "two-handlers" || p.link === "catch-absorbs";
        const expected = !settled
          ? ["locks/release-in-finally clearedOnFulfilOnly 5"]
          : p.workBefore
            ? ["locks/release-in-finally missedOnRejection 5"]
            : [];
        expect(keys, code).toEqual(expected);
      }),
    );
  });
});
