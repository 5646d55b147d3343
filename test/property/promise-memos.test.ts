// Promise memos drawn from parts (issue 35, blind-15's session): a slot that lives with the process (a module `let`,
// or a property of an object kept on `global`), filled when empty with a connection, a client or an initialisation,
// and handed out. The oracle: the plugin reports the memo exactly when nothing empties the slot on a rejection and
// the code shows that the slot holds a promise (a `.then` chain, a `Promise` type, a name that says so); a call whose
// result may be anything (`client.connect()` into an untyped `cache.conn`) stays unknown, so quiet.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lint } from "./lint.js";
import { check, NUM_RUNS, SEED } from "./run.js";

interface MemoParts {
  readonly name: string;
  readonly holder: "module" | "global";
  readonly fill: "if-empty" | "nullish-assign" | "return-if-full";
  readonly value: "connect" | "initialize" | "client-then";
  readonly handling: "none" | "catch-chained" | "try-reset" | "exit";
}

const memoArb: fc.Arbitrary<MemoParts> = fc.record({
  // Names that say promise and names that do not: the value stored decides.
  name: fc.constantFrom("clientPromise", "ready", "conn", "initP", "shared"),
  holder: fc.constantFrom<MemoParts["holder"]>("module", "global"),
  fill: fc.constantFrom<MemoParts["fill"]>("if-empty", "nullish-assign", "return-if-full"),
  value: fc.constantFrom<MemoParts["value"]>("connect", "initialize", "client-then"),
  handling: fc.constantFrom<MemoParts["handling"]>("none", "catch-chained", "try-reset", "exit"),
});

function memoModule(p: MemoParts): string {
  const slot = p.holder === "global" ? `cache.${p.name}` : p.name;
  const made =
    p.value === "connect"
      ? "client.connect()"
      : p.value === "initialize"
        ? "db.initialize()"
        : "createClient(url).then((c) => c)";
  const value =
    p.handling === "catch-chained"
      ? `${made}.catch((error) => {\n      ${slot} = null;\n      throw error;\n    })`
      : made;
  const fill =
    p.fill === "if-empty"
      ? `if (!${slot}) {\n    ${slot} = ${value};\n  }`
      : p.fill === "nullish-assign"
        ? `${slot} ??= ${value};`
        : `if (${slot}) return ${slot};\n  ${slot} = ${value};`;
  const use =
    p.handling === "try-reset"
      ? `try {\n    return await ${slot};\n  } catch (error) {\n    ${slot} = null;\n    throw error;\n  }`
      : p.handling === "exit"
        ? `try {\n    return await ${slot};\n  } catch (error) {\n    console.error(error);\n    process.exit(1);\n  }`
        : `return ${slot};`;
  const head =
    p.holder === "global"
      ? `const cache = (globalThis.__svc ??= { ${p.name}: null });\n`
      : `let ${p.name}: Promise<unknown> | null = null;\n`;
  return `import { client, db, createClient, url } from "./deps.js";\n${head}export async function get() {\n  ${fill}\n  ${use}\n}\n`;
}

describe(`promise memos (seed ${SEED}, ${NUM_RUNS} runs)`, () => {
  it("a memo is reported exactly when nothing empties it on a rejection", () => {
    check(
      fc.property(memoArb, (p) => {
        const code = memoModule(p);
        const findings = lint(code);
        const keys = findings.map((f) => `${f.rule} ${f.messageId}`);
        const promiseShown =
          p.value === "client-then" || p.holder === "module" || p.name === "clientPromise" || p.name === "ready";
        expect(keys, code).toEqual(
          p.handling === "none" && promiseShown ? ["locks/release-in-finally memoKeepsRejection"] : [],
        );
        for (const f of findings) {
          expect(f.fn, code).toBe("get");
          expect(f.data["slot"], code).toBe(p.holder === "global" ? `cache.${p.name}` : p.name);
        }
      }),
    );
  });
});
