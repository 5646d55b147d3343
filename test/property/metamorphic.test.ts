// Property and metamorphic tests: lock modules generated from parts (test/property/generators.ts), linted
// under configs.strict with the TypeScript parser, and checked against invariants:
// - the findings are exactly the missing halves the parts leave out (the oracle);
// - renaming identifiers, reordering functions, `await` ↔ `.then`, arrow consts, moving the code into a class
//   (with the clients as fields or not) and running each function in a transaction callback change no finding
//   (compared by rule, messageId, data without line numbers, and the function the finding is in);
// - adding a sound recovery removes exactly the Q1 finding, and deleting a recovery restores it (and removes
//   only the findings inside it);
// - a release in `finally` does not answer Q1; adding a TTL or an owner check removes exactly its finding; a
//   sweeper of expired lock rows removes exactly missingExpiry;
// - lookalikes never produce findings, alone or next to a lock.
// Seed: FC_SEED (fixed in CI when unset); runs: FC_NUM_RUNS. A failure prints the shrunk counterexample, its code
// and the command that replays it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DB_LOOKALIKES,
  DB_STORES,
  KV_LOOKALIKES,
  dbLockArb,
  dbLookalikeModule,
  dbModule,
  dbModuleRecoveredBy,
  expectedDbFindings,
  expectedKvFindings,
  expectedLockRowFindings,
  kvLockArb,
  kvLookalikeModule,
  kvModule,
  lockRowArb,
  lockRowModule,
  type DbLockParts,
  type Expected,
  type KvLockParts,
  type Syntax,
} from "./generators.js";
import type { Finding } from "./lint.js";
import {
  IDENTITY,
  SEED,
  NUM_RUNS,
  build,
  check,
  lintProgram,
  lintSpec,
  minus,
  mismatch,
  transformArb,
  without,
} from "./run.js";

const syntaxArb: fc.Arbitrary<Syntax> = fc.record({
  variant: fc.nat({ max: 5 }),
  quote: fc.constantFrom<'"' | "'">('"', "'"),
});

/** The oracle's view of a finding: rule, messageId, function, and the data the parts determine. */
const IN_FINALLY = "locks/release-in-finally ";

/** A lint result without release-in-finally's findings, for properties about the other rules. */
function withoutInFinally<T extends { keys: readonly string[] }>(r: T): T {
  return { ...r, keys: r.keys.filter((k) => !k.startsWith(IN_FINALLY)) };
}

function matches(f: Finding, e: Expected, back: ReadonlyMap<string, string>): boolean {
  const fn = f.fn === undefined ? undefined : (back.get(f.fn) ?? f.fn);
  return (
    f.rule === e.rule &&
    f.messageId === e.messageId &&
    fn === e.fn &&
    Object.entries(e.data).every(([k, v]) => f.data[k] === v)
  );
}

function assertOracle(
  findings: readonly Finding[],
  expected: readonly Expected[],
  code: string,
  back: ReadonlyMap<string, string> = new Map(),
): void {
  const unmatched = [...findings];
  const missing: Expected[] = [];
  for (const e of expected) {
    const i = unmatched.findIndex((f) => matches(f, e, back));
    if (i >= 0) unmatched.splice(i, 1);
    else missing.push(e);
  }
  if (missing.length > 0 || unmatched.length > 0) {
    throw mismatch(
      "the findings differ from what the parts leave out",
      { missing, unexpected: unmatched },
      { label: "module", code },
    );
  }
}

const q1Key = (p: DbLockParts, model: string, field: string): string =>
  `locks/require-stale-recovery missingRecovery [field=${field}, model=${model}, value=${String(p.value)}] in claim`;

const FENCING = "locks/require-fencing ";
/** Draws whose module has no exported finder of stuck rows: such a finder hands Q1 to its callers (tested below). */
const NO_SCAN = fc.constant<"none">("none");
const fencingOf = (keys: readonly string[]): string[] => keys.filter((k) => k.startsWith(FENCING));
/** How many holder writes the oracle says are unfenced once the claim can pass to a new holder. */
const unfencedHolderWrites = (p: DbLockParts): number =>
  expectedDbFindings(p).filter((e) => e.rule === "locks/require-fencing").length;

describe(`property tests (seed ${SEED}, ${NUM_RUNS} runs each)`, () => {
  describe("the oracle: findings are exactly the missing halves", () => {
    it("database locks in every store and syntax variant", () => {
      check(
        fc.property(dbLockArb(), (p) => {
          const { program, findings } = lintSpec(dbModule(p));
          assertOracle(findings, expectedDbFindings(p), program.code);
        }),
      );
    });

    it("lock rows inserted under a unique key, with or without a sweeper", () => {
      check(
        fc.property(lockRowArb(), (p) => {
          const { program, findings } = lintSpec(lockRowModule(p));
          assertOracle(findings, expectedLockRowFindings(p), program.code);
        }),
      );
    });

    it("Redis locks (ioredis, node-redis and Upstash)", () => {
      check(
        fc.property(kvLockArb(), (p) => {
          const { program, findings } = lintSpec(kvModule(p));
          assertOracle(findings, expectedKvFindings(p), program.code);
        }),
      );
    });
  });

  describe("metamorphic: how the code is written does not change the findings", () => {
    it("database locks: rename, reorder, .then, class methods and client fields", () => {
      check(
        fc.property(dbLockArb(), transformArb, (p, t) => {
          const spec = dbModule(p);
          const base = lintSpec(spec);
          const other = lintSpec(spec, t);
          if (JSON.stringify(base.keys) !== JSON.stringify(other.keys)) {
            throw mismatch(
              "a transform changed the findings",
              { base: base.keys, transformed: other.keys },
              { label: "base", code: base.program.code },
              { label: "transformed", code: other.program.code },
            );
          }
        }),
      );
    });

    it("database locks: a completion moved out of the runner into the module's API keeps its finding", () => {
      // The worker that calls claim() and then finish() lives in another module: finish() is still the holder's write.
      const parts = dbLockArb().map((p) => ({ ...p, runner: true, completionFn: true }));
      check(
        fc.property(parts, transformArb, (p, t) => {
          const called = lintSpec(dbModule(p), t);
          const split = lintSpec(dbModule({ ...p, split: true }), t);
          const inFinish = (keys: readonly string[]) => keys.filter((k) => k.endsWith(" in finish"));
          if (
            JSON.stringify(inFinish(called.keys)) !== JSON.stringify(inFinish(split.keys)) ||
            (p.completion === "unfenced" &&
              (p.lease || (p.recovery !== "none" && p.recovery !== "missing-time")) &&
              inFinish(split.keys).length !== 1)
          ) {
            throw mismatch(
              "moving the completion into the module's API changed its finding",
              { called: called.keys, split: split.keys },
              { label: "runner calls finish", code: called.program.code },
              { label: "finish called from elsewhere", code: split.program.code },
            );
          }
        }),
      );
    });

    it("lock rows: rename, reorder, .then (with .catch), class methods and client fields", () => {
      check(
        fc.property(lockRowArb(), transformArb, (p, t) => {
          const spec = lockRowModule(p);
          const base = lintSpec(spec);
          const other = lintSpec(spec, t);
          if (JSON.stringify(base.keys) !== JSON.stringify(other.keys)) {
            throw mismatch(
              "a transform changed the findings",
              { base: base.keys, transformed: other.keys },
              { label: "base", code: base.program.code },
              { label: "transformed", code: other.program.code },
            );
          }
        }),
      );
    });

    it("Redis locks: rename, reorder, .then, class methods and client fields", () => {
      check(
        fc.property(kvLockArb(), transformArb, (p, t) => {
          const spec = kvModule(p);
          const base = lintSpec(spec);
          const other = lintSpec(spec, t);
          // Known limit: release-in-finally follows one function's code paths, not promise chains, so a `.then`
          // layout (acquire and release in different callbacks) leaves its finding out.
          const keep = (keys: readonly string[]) =>
            t.layout.style === "then" ? keys.filter((k) => !k.startsWith(IN_FINALLY)) : keys;
          if (JSON.stringify(keep(base.keys)) !== JSON.stringify(keep(other.keys))) {
            throw mismatch(
              "a transform changed the findings",
              { base: base.keys, transformed: other.keys },
              { label: "base", code: base.program.code },
              { label: "transformed", code: other.program.code },
            );
          }
        }),
      );
    });
  });

  describe("recovery: adding one removes exactly Q1, deleting it restores Q1", () => {
    it("adding a sound recovery removes exactly the require-stale-recovery finding", () => {
      const parts = dbLockArb({ recovery: fc.constant("none"), lease: fc.constant(false), staleScan: NO_SCAN });
      check(
        fc.property(parts, transformArb, (p, t) => {
          const before = lintSpec(dbModule(p), t);
          const after = lintSpec(dbModule({ ...p, recovery: "valid" }), t);
          const q1 = before.findings.filter((f) => f.rule === "locks/require-stale-recovery");
          // The claim can now pass to a new holder, so the holder's unfenced writes are asked Q3.
          const asked = fencingOf(after.keys);
          const expectedAfter = [
            ...minus(before.keys, [q1Key(p, q1[0]?.data["model"] ?? "?", q1[0]?.data["field"] ?? "?")]),
            ...asked,
          ].sort();
          if (
            q1.length !== 1 ||
            fencingOf(before.keys).length !== 0 ||
            asked.length !== unfencedHolderWrites({ ...p, recovery: "valid" }) ||
            JSON.stringify(after.keys) !== JSON.stringify(expectedAfter)
          ) {
            throw mismatch(
              "adding the recovery did not remove exactly the Q1 finding and ask Q3 of the unfenced holder writes",
              { before: before.keys, after: after.keys },
              { label: "without recovery", code: before.program.code },
              { label: "with recovery", code: after.program.code },
            );
          }
        }),
      );
    });

    it("a sound recovery written with another store's client answers the claim just the same", () => {
      const parts = dbLockArb({ recovery: fc.constant("none"), lease: fc.constant(false), staleScan: NO_SCAN });
      check(
        fc.property(parts, fc.constantFrom(...DB_STORES), transformArb, (p, other, t) => {
          const mixed = dbModuleRecoveredBy(p, other);
          fc.pre(mixed !== undefined);
          const before = lintSpec(dbModule(p), t);
          const after = lintSpec(mixed!, t);
          const asked = fencingOf(after.keys);
          const expected = [
            ...before.keys.filter((k) => !k.startsWith("locks/require-stale-recovery ")),
            ...asked,
          ].sort();
          if (
            fencingOf(before.keys).length !== 0 ||
            asked.length !== unfencedHolderWrites({ ...p, recovery: "valid" }) ||
            JSON.stringify(after.keys) !== JSON.stringify(expected)
          ) {
            throw mismatch(
              `a recovery written with ${other} did not answer exactly the Q1 finding`,
              { before: before.keys, after: after.keys },
              { label: "without recovery", code: before.program.code },
              { label: "with the other store's recovery", code: after.program.code },
            );
          }
        }),
      );
    });

    it("an exported finder of stuck rows hands the recovery to its callers: it removes exactly Q1 and asks Q3", () => {
      // A repository module's `findStuck(cutoff)` (judged on the progress column, so no Q2 of its own).
      const parts = dbLockArb({ recovery: fc.constant("none"), lease: fc.constant(false), staleScan: NO_SCAN });
      check(
        fc.property(parts, transformArb, (p, t) => {
          const before = lintSpec(dbModule(p), t);
          const after = lintSpec(dbModule({ ...p, staleScan: "progress" }), t);
          const q1 = before.keys.filter((k) => k.startsWith("locks/require-stale-recovery "));
          const asked = fencingOf(after.keys);
          const expected = [...minus(before.keys, q1), ...asked].sort();
          if (
            q1.length !== 1 ||
            asked.length !== unfencedHolderWrites({ ...p, staleScan: "progress" }) ||
            JSON.stringify(after.keys) !== JSON.stringify(expected)
          ) {
            throw mismatch(
              "the finder of stuck rows did not answer exactly the Q1 finding",
              { before: before.keys, after: after.keys },
              { label: "no finder", code: before.program.code },
              { label: "with findStuck", code: after.program.code },
            );
          }
        }),
      );
    });

    it("deleting a recovery (sound or flawed) removes only its own findings and restores Q1", () => {
      const parts = dbLockArb({
        recovery: fc.constantFrom("valid", "start-time", "missing-status", "missing-time", "check-in-js"),
        lease: fc.constant(false),
        staleScan: NO_SCAN,
      });
      check(
        fc.property(parts, transformArb, (p, t) => {
          const withIt = lintSpec(dbModule(p), t);
          const withoutIt = lintProgram(without(withIt.program, "recover"));
          const own = withIt.keys.filter((k) => k.endsWith(" in recover"));
          const restored = withoutIt.keys.filter((k) => k.startsWith("locks/require-stale-recovery "));
          // Without a recovery nothing passes the claim to a new holder: Q3 on the holder's writes goes with it.
          const expected = [...minus(withIt.keys, [...own, ...fencingOf(withIt.keys)]), ...restored].sort();
          if (
            restored.length !== 1 ||
            !restored[0]!.endsWith(" in claim") ||
            fencingOf(withIt.keys).length !== unfencedHolderWrites(p) ||
            JSON.stringify(withoutIt.keys) !== JSON.stringify(expected)
          ) {
            throw mismatch(
              "deleting the recovery did not restore exactly the Q1 finding",
              { with: withIt.keys, without: withoutIt.keys },
              { label: "with recovery", code: withIt.program.code },
              { label: "recovery deleted", code: withoutIt.program.code },
            );
          }
        }),
      );
    });

    it("lock rows: a sweeper of expired rows removes exactly the missingExpiry finding; deleting it restores it", () => {
      // With an owner-checked release (or none): a plain release becomes a Q3 finding once a sweeper can free the row.
      // Not a Mongo document holding a time ahead of now: a TTL index may expire it, so it has no finding to answer.
      const parts = lockRowArb()
        .filter((p) => !(p.store === "mongo" && p.expiry))
        .map((p) => ({
          ...p,
          sweeper: "expired" as const,
          ownerCheck: p.release === "none" ? p.ownerCheck : true,
        }));
      check(
        fc.property(parts, transformArb, (p, t) => {
          const before = lintSpec(lockRowModule({ ...p, sweeper: "none" }), t);
          const after = lintSpec(lockRowModule(p), t);
          const deleted = lintProgram(without(after.program, "sweep"));
          const q1 = before.keys.filter((k) => k.startsWith("locks/require-stale-recovery missingExpiry "));
          if (
            q1.length !== 1 ||
            after.keys.length !== 0 ||
            JSON.stringify(deleted.keys) !== JSON.stringify(before.keys)
          ) {
            throw mismatch(
              "the sweeper did not answer exactly the missingExpiry finding",
              { before: before.keys, after: after.keys, deleted: deleted.keys },
              { label: "no sweeper", code: before.program.code },
              { label: "with sweeper", code: after.program.code },
            );
          }
        }),
      );
    });

    it("lock rows: an owner check in the release removes exactly the rowRelease finding", () => {
      const parts = lockRowArb().map((p) => ({
        ...p,
        sweeper: "expired" as const,
        release: p.release === "none" ? ("after" as const) : p.release,
      }));
      check(
        fc.property(parts, transformArb, (p, t) => {
          const plain = lintSpec(lockRowModule({ ...p, ownerCheck: false }), t);
          const checked = lintSpec(lockRowModule({ ...p, ownerCheck: true }), t);
          const q3 = plain.keys.filter((k) => k.startsWith("locks/owner-checked-release rowRelease "));
          if (
            q3.length !== 1 ||
            JSON.stringify(checked.keys) !== JSON.stringify(plain.keys.filter((k) => !q3.includes(k)))
          ) {
            throw mismatch(
              "the owner check did not remove exactly the rowRelease finding",
              { plain: plain.keys, checked: checked.keys },
              { label: "release by name", code: plain.program.code },
              { label: "release by name and owner", code: checked.program.code },
            );
          }
        }),
      );
    });

    it("a release in finally does not answer Q1 (SIGKILL runs no finally)", () => {
      const parts = dbLockArb({ recovery: fc.constant("none"), lease: fc.constant(false), staleScan: NO_SCAN }).map(
        (p) => ({ ...p, runner: true }),
      );
      check(
        fc.property(parts, transformArb, (p, t) => {
          const plain = lintSpec(dbModule({ ...p, finallyRelease: "none" }), t);
          const fenced = lintSpec(dbModule({ ...p, finallyRelease: "fenced" }), t);
          if (
            JSON.stringify(plain.keys) !== JSON.stringify(fenced.keys) ||
            !plain.keys.some((k) => k.startsWith("locks/require-stale-recovery "))
          ) {
            throw mismatch(
              "a fenced release in finally changed the findings",
              { plain: plain.keys, fenced: fenced.keys },
              { label: "no finally", code: plain.program.code },
              { label: "release in finally", code: fenced.program.code },
            );
          }
        }),
      );
    });
  });

  describe("Redis: adding the missing half removes exactly its finding", () => {
    // Only draws with the finding the edit removes: on a key not taken for a lock (no lock word, one function,
    // no release in `finally`) there is none, and "removes exactly it" would hold vacuously.
    const expectsFinding =
      (rule: string) =>
      (p: KvLockParts): boolean =>
        expectedKvFindings(p).some((e) => e.rule === rule);

    it("adding a TTL to the acquire removes exactly the require-lock-ttl finding", () => {
      const parts = kvLockArb({ acquire: fc.constantFrom("set", "setnx", "setnx-expire") }).filter(
        expectsFinding("locks/require-lock-ttl"),
      );
      check(
        fc.property(parts, transformArb, (p, t) => {
          // release-in-finally words its finding by whether a TTL bounds the lock; the oracle checks it exactly.
          const before = withoutInFinally(lintSpec(kvModule(p), t));
          const after = withoutInFinally(lintSpec(kvModule({ ...p, acquire: "set-ttl" }), t));
          const ttl = before.keys.filter((k) => k.startsWith("locks/require-lock-ttl "));
          if (ttl.length !== 1 || JSON.stringify(after.keys) !== JSON.stringify(minus(before.keys, ttl))) {
            throw mismatch(
              "adding the TTL did not remove exactly the require-lock-ttl finding",
              { before: before.keys, after: after.keys },
              { label: "before", code: before.program.code },
              { label: "with TTL", code: after.program.code },
            );
          }
        }),
      );
    });

    it("checking the owner in the release removes exactly the owner-checked-release finding", () => {
      // Only a token of the holder's own can be checked: with the constant every holder stores, the compare-and-delete
      // matches anyone's lock and the finding stays (the oracle says so).
      const parts = kvLockArb({ release: fc.constantFrom("plain", "get-compare") })
        .filter((p) => p.token === "uuid")
        .filter(expectsFinding("locks/owner-checked-release"));
      check(
        fc.property(parts, transformArb, (p, t) => {
          // release-in-finally names the path the release misses, which the shape of the release changes.
          const before = withoutInFinally(lintSpec(kvModule(p), t));
          const after = withoutInFinally(lintSpec(kvModule({ ...p, release: "owner" }), t));
          const own = before.keys.filter((k) => k.startsWith("locks/owner-checked-release "));
          if (own.length !== 1 || JSON.stringify(after.keys) !== JSON.stringify(minus(before.keys, own))) {
            throw mismatch(
              "the owner-checked release did not remove exactly the owner-checked-release finding",
              { before: before.keys, after: after.keys },
              { label: "plain DEL", code: before.program.code },
              { label: "compare-and-delete", code: after.program.code },
            );
          }
        }),
      );
    });
  });

  describe("lookalikes never produce findings", () => {
    it("database lookalikes alone, in every store and layout", () => {
      const kinds = fc.subarray([...DB_LOOKALIKES], { minLength: 1 });
      check(
        fc.property(fc.constantFrom(...DB_STORES), kinds, syntaxArb, transformArb, (store, k, s, t) => {
          const { program, findings } = lintSpec(dbLookalikeModule(store, k, s), t);
          if (findings.length > 0)
            throw mismatch("a lookalike was reported", { findings }, { label: "module", code: program.code });
        }),
      );
    });

    it("Redis lookalikes alone (idempotency keys, caches, rate limits, run-once markers)", () => {
      const kinds = fc.subarray([...KV_LOOKALIKES], { minLength: 1 });
      check(
        fc.property(kvLockArb(), kinds, transformArb, (p, k, t) => {
          const { program, findings } = lintSpec(kvLookalikeModule(p, k), t);
          if (findings.length > 0)
            throw mismatch("a lookalike was reported", { findings }, { label: "module", code: program.code });
        }),
      );
    });

    it("lookalikes next to a lock do not change the lock's findings", () => {
      const db = dbLockArb().map((p): { db: DbLockParts } => ({ db: p }));
      const kv = kvLockArb().map((p): { kv: KvLockParts } => ({ kv: p }));
      check(
        fc.property(fc.oneof(db, kv), transformArb, (parts, t) => {
          const [alone, next] =
            "db" in parts
              ? [dbModule({ ...parts.db, lookalikes: [] }), dbModule(parts.db)]
              : [kvModule({ ...parts.kv, lookalikes: [] }), kvModule(parts.kv)];
          const a = lintSpec(alone, t);
          const b = lintSpec(next, t);
          if (JSON.stringify(a.keys) !== JSON.stringify(b.keys)) {
            throw mismatch(
              "lookalikes changed the lock's findings",
              { alone: a.keys, withLookalikes: b.keys },
              { label: "alone", code: a.program.code },
              { label: "with lookalikes", code: b.program.code },
            );
          }
        }),
      );
    });
  });
});

describe("the harness itself", () => {
  it("maps renamed names back, and builds the same program for the identity transform", () => {
    const [p] = fc.sample(
      dbLockArb({ stores: ["prisma"], recovery: fc.constant("none"), lease: fc.constant(false), staleScan: NO_SCAN }),
      { numRuns: 1, seed: 1 },
    );
    const spec = dbModule(p!);
    const renamed = build(spec, { ...IDENTITY, rename: ["alpha"] });
    expect(renamed.code).not.toContain("function claim(");
    expect(lintProgram(renamed).keys).toEqual(lintSpec(spec).keys);
    expect(
      lintSpec(spec).keys.some((k) => k.startsWith("locks/require-stale-recovery ") && k.endsWith(" in claim")),
    ).toBe(true);
  });
});
