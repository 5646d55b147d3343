import { Linter } from "eslint";
import { describe, expect, it } from "vitest";
import type { Node, StaticValue } from "../../src/core/model/accesses.js";
import {
  boundMethod,
  definitionOf,
  destructuredFrom,
  evaluate,
  evaluateNumber,
  reachingDefinition,
} from "../../src/core/reading/values.js";
import { nameWords } from "../../src/core/model/words.js";
import { hasLockWord, namesALock } from "../../src/core/model/settings.js";
import { normalizeModel, sameValue } from "../../src/core/model/names.js";
import { isClockReading } from "../../src/core/reading/clock.js";
import { probeWith } from "./probe.js";

/**
 * Lints `code` with a throwaway rule and evaluates the argument of every `probe(…)` call, in source order, while
 * ESLint's traversal is running (so the scope manager is live).
 */
function probes(code: string, { js = false } = {}): (StaticValue | undefined)[] {
  return probeWith(code, js, (sourceCode, node) => evaluate(sourceCode, node));
}

/** The same probes read by `evaluateNumber`. */
function numbers(code: string): (number | undefined)[] {
  return probeWith(code, false, (sourceCode, node) => evaluateNumber(sourceCode, node));
}

const one = (code: string, options?: { js?: boolean }) => {
  const all = probes(code, options);
  expect(all).toHaveLength(1);
  return all[0];
};

describe("evaluate", () => {
  it("reads string, number, boolean and null literals", () => {
    expect(probes(`probe("GENERATING"); probe(42); probe(false); probe(null);`)).toEqual([
      { value: "GENERATING" },
      { value: 42 },
      { value: false },
      { value: null },
    ]);
  });

  it("does not read regular expressions or bigints as values", () => {
    expect(probes(`probe(/RUNNING/); probe(10n);`)).toEqual([undefined, undefined]);
  });

  it("reads negated numbers and booleans", () => {
    expect(probes(`probe(-1); probe(!true);`)).toEqual([{ value: -1 }, { value: false }]);
  });

  it("reads a template literal without expressions, but not one with an expression", () => {
    expect(probes("const suffix = 'ING'; probe(`RUNNING`); probe(`RUNN${suffix}`);")).toEqual([
      { value: "RUNNING" },
      undefined,
    ]);
  });

  it("follows chains of const bindings", () => {
    expect(one(`const A = "GENERATING"; const B = A; const C = B; probe(C);`)).toEqual({ value: "GENERATING" });
  });

  it("follows a let that is never reassigned, not one that is", () => {
    expect(probes(`let a = "RUNNING"; probe(a); let b = "RUNNING"; b = "DONE"; probe(b);`)).toEqual([
      { value: "RUNNING" },
      undefined,
    ]);
  });

  it("sees through TypeScript wrappers", () => {
    expect(
      probes(
        `const S = "LOCKED"; probe("RUNNING" as const); probe(S!); probe(<string>"BUSY"); probe(("X" satisfies string));`,
      ),
    ).toEqual([{ value: "RUNNING" }, { value: "LOCKED" }, { value: "BUSY" }, { value: "X" }]);
  });

  it("reads TS string enum members, by dot and by computed key", () => {
    const code = `enum JobStatus { Queued = "QUEUED", Generating = "GENERATING" }
      probe(JobStatus.Generating); probe(JobStatus["Queued"]); probe(JobStatus.Missing);`;
    expect(probes(code)).toEqual([{ value: "GENERATING" }, { value: "QUEUED" }, undefined]);
  });

  it("numbers TS enum members without initialisers by auto-increment", () => {
    const code = `enum Priority { Low, Mid, High }
      enum Code { A = 5, B, C }
      enum Mixed { S = "s", N = 10, M }
      probe(Priority.Low); probe(Priority.High); probe(Code.B); probe(Code.C); probe(Mixed.M);`;
    expect(probes(code)).toEqual([{ value: 0 }, { value: 2 }, { value: 6 }, { value: 7 }, { value: 11 }]);
  });

  it("reads properties of `as const` objects", () => {
    const code = `const Status = { Waiting: "waiting", Syncing: "syncing" } as const;
      probe(Status.Syncing); probe(Status["Waiting"]); probe(Status.Gone);`;
    expect(probes(code)).toEqual([{ value: "syncing" }, { value: "waiting" }, undefined]);
  });

  it("reads const objects in plain JavaScript (espree)", () => {
    const code = `const Status = { RUNNING: "running" }; const CURRENT = Status.RUNNING; probe(CURRENT);`;
    expect(one(code, { js: true })).toEqual({ value: "running" });
  });

  it("takes an imported enum member's key as its value, marked symbolic", () => {
    const code = `import { JobStatus, $Enums, Prisma } from "@prisma/client";
      probe(JobStatus.GENERATING); probe($Enums.JobStatus.RUNNING); probe(Prisma.JobStatus.FAILED);`;
    expect(probes(code)).toEqual([
      { value: "GENERATING", symbolic: true },
      { value: "RUNNING", symbolic: true },
      { value: "FAILED", symbolic: true },
    ]);
  });

  it("takes a member of an unbound (global) enum-like name as symbolic too", () => {
    expect(one(`probe(JobStatus.COMPLETED);`)).toEqual({ value: "COMPLETED", symbolic: true });
  });

  it("does not guess for lower-case namespaces, unless the key is named like a constant", () => {
    const code = `import { status } from "./status";
      const statusEnum = require("../constants/status-enum");
      probe(status.running);
      probe(status.RUNNING);
      probe(statusEnum.IN_PROGRESS);
      probe(process.env.STATUS);`;
    expect(probes(code)).toEqual([
      undefined,
      { value: "RUNNING", symbolic: true },
      { value: "IN_PROGRESS", symbolic: true },
      undefined,
    ]);
  });

  it("reads lower-case members of an imported enum by their key (Prisma enums keep the schema's case)", () => {
    const code = `import { JobStatus } from "@prisma/client";
      probe(JobStatus.running);`;
    expect(probes(code)).toEqual([{ value: "running", symbolic: true }]);
  });

  it("knows nothing about parameters, even enum-looking ones", () => {
    const code = `function handle(status: string, Status: any, job: { status: string }) {
        probe(status); probe(Status.RUNNING); probe(job.status);
      }`;
    expect(probes(code)).toEqual([undefined, undefined, undefined]);
  });

  it("knows nothing about undefined, calls or other expressions", () => {
    expect(probes(`probe(undefined); probe(getStatus()); probe(a + b);`)).toEqual([undefined, undefined, undefined]);
  });
});

describe("definitionOf", () => {
  const kinds = (code: string) =>
    probeWith(code, true, (sourceCode, node) => definitionOf(sourceCode, node)?.type ?? "unknown");

  it("gives a const's initializer and a field's one value, set by its declaration or once in the constructor", () => {
    const code = `const where = { state: "waiting" };
class Run {
  limit = 10;
  constructor(id) { this.filter = { _id: id }; }
  go() { probe(where); probe(this.filter); probe(this.limit); }
}`;
    expect(kinds(code)).toEqual(["ObjectExpression", "ObjectExpression", "Literal"]);
  });

  it("gives nothing for a field set twice, one changed by a compound assignment, or a name reassigned", () => {
    const code = `let where = { state: "waiting" };
where = {};
class Run {
  count = 0;
  constructor(id) { this.filter = { _id: id }; }
  reset() { this.filter = {}; this.count += 1; }
  go() { probe(where); probe(this.filter); probe(this.count); }
}`;
    expect(kinds(code)).toEqual(["unknown", "unknown", "unknown"]);
  });

  it("gives a let declared bare its one plain write, where every later statement runs after it or after its try failed", () => {
    const code = `async function read(store, key) {
  let held;
  try {
    held = await store.get(key);
  } catch (error) {
    report(error);
  }
  let total;
  total = 3;
  probe(held);
  probe(total);
}`;
    expect(kinds(code)).toEqual(["AwaitExpression", "Literal"]);
  });

  it("gives nothing for a bare let written under an if, in a loop, in a catch, twice, or by a compound assignment", () => {
    const code = `async function read(store, key, fresh) {
  let a;
  if (fresh) a = await store.get(key);
  let b;
  for (const k of [key]) b = k;
  let c;
  try { c = 1; } catch { c = 2; }
  let d;
  try { work(); } catch { d = 1; }
  let e;
  e += 1;
  probe(a); probe(b); probe(c); probe(d); probe(e);
}`;
    expect(kinds(code)).toEqual(["unknown", "unknown", "unknown", "unknown", "unknown"]);
  });
});

describe("reachingDefinition", () => {
  const kinds = (code: string) =>
    probeWith(code, true, (sourceCode, node) => {
      const n = node as Node;
      return n.type === "Identifier" ? (reachingDefinition(sourceCode, n)?.type ?? "unknown") : "not a name";
    });

  it("gives the last plain write before a read, in a block that holds the read", () => {
    const code = `async function take(name) {
  let lock = await Lock.findOne({ name });
  probe(lock);
  if (!lock) {
    lock = new Lock({ name });
    probe(lock);
  }
}`;
    expect(kinds(code)).toEqual(["AwaitExpression", "NewExpression"]);
  });

  it("gives nothing where a branch, a loop or a nested function may have written it since", () => {
    const code = `async function take(name, fresh) {
  let a = await Lock.findOne({ name });
  if (fresh) a = new Lock({ name });
  probe(a);
  let b = 0;
  for (const x of [1, 2]) { probe(b); b = x; }
  let c = 1;
  later(() => { c = 2; });
  probe(c);
  let d;
  probe(d);
}`;
    expect(kinds(code)).toEqual(["unknown", "unknown", "unknown", "unknown"]);
  });

  it("gives a write made earlier in the same turn of a loop", () => {
    const code = `function last(items) {
  let b = 0;
  for (const x of items) { b = x * 2; probe(b); }
}`;
    expect(kinds(code)).toEqual(["BinaryExpression"]);
  });
});

describe("nameWords", () => {
  it("splits at separators, at camelCase and where an acronym meets the next word", () => {
    expect(nameWords("DBLock")).toEqual(["DB", "Lock"]);
    expect(nameWords("lockedAt")).toEqual(["locked", "At"]);
    expect(nameWords("HTTPServer_pool")).toEqual(["HTTP", "Server", "pool"]);
    expect(nameWords("lock:payout-batch")).toEqual(["lock", "payout", "batch"]);
    expect(nameWords("job2Lock", true)).toEqual(["job", "Lock"]);
    expect(nameWords("JOB_LOCK")).toEqual(["JOB", "LOCK"]);
  });

  it("lets a lock word after an acronym name a lock", () => {
    expect(hasLockWord("DBLock")).toBe(true);
    expect(namesALock("CRMLock")).toBe(true);
    expect(hasLockWord("BLOCKS")).toBe(false);
  });
});

describe("destructuredFrom", () => {
  const reads = (code: string) =>
    probeWith(code, true, (sourceCode, node) => {
      const from = node.type === "Identifier" ? destructuredFrom(sourceCode, node) : undefined;
      return from ? `${sourceCode.getText(from.object)}.${from.property}` : "unknown";
    });

  it("names the object and property a flat pattern reads, renamed or not", () => {
    const code = `function handle(req) {
  const { seat: seatId, ticket } = req.body;
  probe(seatId); probe(ticket);
}`;
    expect(reads(code)).toEqual(["req.body.seat", "req.body.ticket"]);
  });

  it("knows nothing of defaults, nested patterns, rest elements, computed keys or names written again", () => {
    const code = `function handle(req, k) {
  const { a = "x", b: { c }, [k]: d, ...rest } = req.body;
  let { e } = req.body;
  e = "other";
  probe(a); probe(c); probe(d); probe(rest); probe(e);
}`;
    expect(reads(code)).toEqual(["unknown", "unknown", "unknown", "unknown", "unknown"]);
  });
});

describe("normalizeModel", () => {
  it("compares a model and its table in the plural as English forms it", () => {
    for (const [plural, singular] of [
      ["companies", "Company"],
      ["processes", "Process"],
      ["statuses", "Status"],
      ["batches", "Batch"],
      ["boxes", "Box"],
      ["jobs", "Job"],
      ["render_jobs", "RenderJob"],
      ["cron_locks", "CronLock"],
      ["responses", "Response"],
      ["leases", "Lease"],
    ]) {
      expect([plural, normalizeModel(plural!)]).toEqual([plural, normalizeModel(singular!)]);
    }
  });
  it("leaves singular names that end in s alone, and keeps different tables apart", () => {
    expect(normalizeModel("status")).toBe("status");
    expect(normalizeModel("process")).toBe("process");
    expect(normalizeModel("analysis")).toBe("analysis");
    expect(normalizeModel("company")).not.toBe(normalizeModel("companion"));
  });
});

describe("fixed instants", () => {
  it('reads new Date(0) as its epoch milliseconds, and neither it nor new Date("2000-01-01") as the clock', () => {
    expect(
      probes(`probe(new Date(0)); probe(new Date(86400000)); probe(new Date()); probe(new Date(Date.now() + 5))`),
    ).toEqual([{ value: 0 }, { value: 86400000 }, undefined, undefined]);
    const node = (code: string) => {
      let found: Node | undefined;
      const linter = new Linter({ configType: "flat" });
      linter.verify(code, [
        {
          plugins: {
            t: {
              rules: {
                r: {
                  meta: { type: "problem", schema: [] },
                  create: () => ({
                    NewExpression(n) {
                      found ??= n as unknown as Node;
                    },
                  }),
                },
              },
            },
          },
          rules: { "t/r": "error" },
        },
      ]);
      return found!;
    };
    expect(isClockReading(node("new Date(0)"))).toBe(false);
    expect(isClockReading(node('new Date("2000-01-01")'))).toBe(false);
    expect(isClockReading(node("new Date()"))).toBe(true);
    expect(isClockReading(node("new Date(Date.now() - 60000)"))).toBe(true);
  });

  it("reads new Date().getTime() and .valueOf() as the clock, not a fixed instant's or a computed one's", () => {
    const call = (code: string): Node => {
      let found: Node | undefined;
      const linter = new Linter({ configType: "flat" });
      linter.verify(code, [
        {
          plugins: {
            t: {
              rules: {
                r: {
                  meta: { type: "problem", schema: [] },
                  create: () => ({
                    "Program > ExpressionStatement > CallExpression"(n: unknown) {
                      found ??= n as Node;
                    },
                  }),
                },
              },
            },
          },
          rules: { "t/r": "error" },
        },
      ]);
      return found!;
    };
    expect(isClockReading(call("new Date().getTime()"))).toBe(true);
    expect(isClockReading(call("new Date().valueOf()"))).toBe(true);
    expect(isClockReading(call("new Date(0).getTime()"))).toBe(false);
    expect(isClockReading(call("new Date(now.getTime() + ttl).getTime()"))).toBe(true);
    expect(isClockReading(call("job.startedAt.getTime()"))).toBe(false);
  });
});

describe("sameValue", () => {
  it("compares strings ignoring case, underscores, dashes and spaces", () => {
    const base = { value: "IN_PROGRESS" };
    for (const other of ["in_progress", "InProgress", "in-progress", "in progress", "IN_PROGRESS"]) {
      expect(sameValue(base, { value: other })).toBe(true);
    }
    expect(sameValue({ value: "GENERATING" }, { value: "GENERATED" })).toBe(false);
  });

  it("treats a symbolic member like the literal it stands for", () => {
    expect(sameValue({ value: "GENERATING", symbolic: true }, { value: "generating" })).toBe(true);
  });

  it("compares other values strictly, never across types", () => {
    expect(sameValue({ value: 1 }, { value: 1 })).toBe(true);
    expect(sameValue({ value: 1 }, { value: "1" })).toBe(false);
    expect(sameValue({ value: true }, { value: "true" })).toBe(false);
    expect(sameValue({ value: null }, { value: null })).toBe(true);
    expect(sameValue({ value: 0 }, { value: false })).toBe(false);
  });
});

describe("evaluateNumber", () => {
  it("computes durations from literals, consts and arithmetic, and knows the never-expiring constants", () => {
    const code = `const DAYS = 90;
      const TTL = DAYS * 24 * 60 * 60;
      probe(TTL);
      probe(5 * 60_000 - 1);
      probe(Number.MAX_SAFE_INTEGER);
      probe(-(2 + 3));
      probe(ttlFromConfig * 1000);
      probe(1 / 0);`;
    expect(numbers(code)).toEqual([7_776_000, 299_999, Number.MAX_SAFE_INTEGER, -5, undefined, undefined]);
  });
});

describe("boundMethod", () => {
  const members = (code: string) =>
    probeWith(code, true, (sourceCode, node) => {
      const m = node.type === "Identifier" ? boundMethod(sourceCode, node) : undefined;
      return m ? sourceCode.getText(m) : "unknown";
    });

  it("reads a method bound to its own receiver, promisified before or after the bind", () => {
    const code = `const util = require("util");
const a = client.setnx.bind(client);
const b = util.promisify(client.del).bind(client);
const c = promisify(this.redis.get.bind(this.redis));
probe(a); probe(b); probe(c);`;
    expect(members(code)).toEqual(["client.setnx", "client.del", "this.redis.get"]);
  });

  it("knows nothing of a method bound to another receiver, taken off its object, or a name written again", () => {
    const code = `const a = client.setnx.bind(other);
const { del } = client;
const b = promisify(client.get);
let c = client.set.bind(client);
c = () => 1;
probe(a); probe(del); probe(b); probe(c);`;
    expect(members(code)).toEqual(["unknown", "unknown", "unknown", "unknown"]);
  });
});
