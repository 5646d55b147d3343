// In-process lock tables drawn from parts (issue 35, item 3): a `Map` or a `Set` under any name, kept at module
// level or in a class field, taken after a test that turns the caller away, a wait that tests again, or a wait that
// does not; released after the work, in a `finally`, or only by a timer (a dedupe set, not a lock). The oracle says
// what each part must bring, and nothing else may be reported:
// - a key deleted after the work but not in a `finally` stays when the work rejects (`release-in-finally`);
// - a take after a wait with no second test lets every waiter in (`atomic-claim`), and then a delete by key alone
//   frees another holder's entry (`owner-checked-release`);
// - a table whose entries only a timer deletes holds nothing across work.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { lint } from "./lint.js";
import { check, NUM_RUNS, SEED } from "./run.js";

interface TableParts {
  readonly collection: "Map" | "Set";
  readonly name: string;
  readonly holder: "module" | "field";
  readonly test: "leave" | "wait-loop" | "wait-once";
  readonly release: "after" | "finally" | "timer";
}

const tableArb: fc.Arbitrary<TableParts> = fc.record({
  collection: fc.constantFrom<TableParts["collection"]>("Map", "Set"),
  // Lock words and plain ones: the behaviour, not the name, makes the lock.
  name: fc.constantFrom("locks", "inFlight", "syncing", "pending", "activeImports", "busyKeys"),
  holder: fc.constantFrom<TableParts["holder"]>("module", "field"),
  test: fc.constantFrom<TableParts["test"]>("leave", "wait-loop", "wait-once"),
  release: fc.constantFrom<TableParts["release"]>("after", "finally", "timer"),
});

function tableModule(p: TableParts): { code: string; table: string } {
  const t = p.holder === "field" ? `this.${p.name}` : p.name;
  const take = p.collection === "Map" ? `${t}.set(key, Date.now());` : `${t}.add(key);`;
  // A Set holds no promise to wait on: the waiter polls.
  const wait = p.collection === "Map" ? `await new Promise((r) => setTimeout(r, 50));` : `await sleep(50);`;
  const test =
    p.test === "leave"
      ? `if (${t}.has(key)) return false;`
      : p.test === "wait-loop"
        ? `while (${t}.has(key)) {\n    ${wait}\n  }`
        : `if (${t}.has(key)) {\n    ${wait}\n  }`;
  const work = `await importFeed(key);`;
  const body =
    p.release === "after"
      ? `${take}\n  ${work}\n  ${t}.delete(key);\n  return true;`
      : p.release === "finally"
        ? `${take}\n  try {\n    ${work}\n  } finally {\n    ${t}.delete(key);\n  }\n  return true;`
        : `${take}\n  setTimeout(() => ${t}.delete(key), 60_000);\n  ${work}\n  return true;`;
  const fn = `async run(key: string): Promise<boolean> {\n  ${test}\n  ${body}\n}`;
  const head = `import { importFeed, sleep } from "./feeds.js";\n`;
  const code =
    p.holder === "field"
      ? `${head}export class Importer {\n  private ${p.name} = new ${p.collection}<string${p.collection === "Map" ? ", number" : ""}>();\n  ${fn.replace(/\n/g, "\n  ")}\n}\n`
      : `${head}const ${p.name} = new ${p.collection}<string${p.collection === "Map" ? ", number" : ""}>();\nexport ${fn.replace("async run", "async function run")}\n`;
  return { code, table: t };
}

/** What the plugin must report about the parts: rule and messageId, each once. */
function expected(p: TableParts): string[] {
  if (p.release === "timer") return [];
  const out: string[] = [];
  if (p.release === "after") out.push("locks/release-in-finally missedOnRejection");
  if (p.test === "wait-once") {
    out.push("locks/atomic-claim tableWaitThenTake");
    out.push("locks/owner-checked-release tableReleaseAfterWait");
  }
  return out.sort();
}

describe(`in-process lock tables (seed ${SEED}, ${NUM_RUNS} runs)`, () => {
  it("findings are exactly what the parts lack, whatever the table is called", () => {
    check(
      fc.property(tableArb, (p) => {
        const { code, table } = tableModule(p);
        const findings = lint(code);
        const keys = findings.map((f) => `${f.rule} ${f.messageId}`).sort();
        expect(keys, code).toEqual(expected(p));
        for (const f of findings) expect(f.fn, code).toBe("run");
        for (const f of findings.filter((f) => f.rule !== "locks/release-in-finally"))
          expect(f.data["table"], code).toBe(table);
      }),
    );
  });
});
