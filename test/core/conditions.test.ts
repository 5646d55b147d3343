import { describe, expect, it } from "vitest";
import type { CompareOp, Condition, Node, Predicate, StaticValue } from "../../src/core/model/accesses.js";
import { agePredicates, excludes, isOpaque, pins, toBranches, type Branch } from "../../src/core/model/conditions.js";
import { getVocabulary } from "../../src/core/model/settings.js";

// Hand-built filters: the nodes only need an identity (agePredicates hands them back).
const node = (name: string): Node => ({ type: "Identifier", name }) as unknown as Node;
const v = (value: StaticValue["value"]): StaticValue => ({ value });
const p = (field: string, op: CompareOp, values?: StaticValue["value"][]): Predicate => ({
  kind: "pred",
  field,
  op,
  values: values?.map(v),
  node: node(field),
});
const and = (...items: Condition[]): Condition => ({ kind: "and", items });
const or = (...items: Condition[]): Condition => ({ kind: "or", items });
const not = (item: Condition): Condition => ({ kind: "not", item });
const opaque = (): Condition => ({ kind: "opaque", node: node("spread") });

/** A branch as `field op` strings, for readable assertions. */
const show = (branches: Branch[]) =>
  branches.map((b) => b.map((a) => ("opaque" in a ? "opaque" : `${a.pred.field} ${a.op}`)));
const branch = (cond: Condition): Branch => {
  const branches = toBranches(cond);
  expect(branches).toHaveLength(1);
  return branches[0]!;
};

const GENERATING = v("GENERATING");
const vocabulary = getVocabulary({});

describe("toBranches", () => {
  it("keeps a predicate as a one-atom branch", () => {
    const pred = p("status", "eq", ["GENERATING"]);
    expect(toBranches(pred)).toEqual([[{ pred, op: "eq" }]]);
  });

  it("negates a predicate's operator under NOT", () => {
    const cases: [CompareOp, CompareOp][] = [
      ["eq", "ne"],
      ["ne", "eq"],
      ["in", "notIn"],
      ["notIn", "in"],
      ["lt", "gte"],
      ["lte", "gt"],
      ["gt", "lte"],
      ["gte", "lt"],
      ["other", "other"],
    ];
    for (const [op, negated] of cases) {
      const pred = p("f", op, ["x"]);
      expect(toBranches(not(pred))).toEqual([[{ pred, op: negated }]]);
    }
  });

  it("cancels a double negation", () => {
    const pred = p("status", "eq", ["GENERATING"]);
    expect(toBranches(not(not(pred)))).toEqual([[{ pred, op: "eq" }]]);
  });

  it("puts AND in one branch and OR in separate branches", () => {
    expect(show(toBranches(and(p("id", "eq"), p("status", "ne", ["X"]))))).toEqual([["id eq", "status ne"]]);
    expect(show(toBranches(or(p("a", "eq", [1]), p("b", "eq", [2]))))).toEqual([["a eq"], ["b eq"]]);
  });

  it("distributes AND over OR", () => {
    const cond = and(
      p("id", "eq"),
      or(p("status", "ne", ["G"]), p("updatedAt", "lt")),
      or(p("a", "eq", [1]), p("b", "eq", [1])),
    );
    expect(show(toBranches(cond))).toEqual([
      ["id eq", "status ne", "a eq"],
      ["id eq", "status ne", "b eq"],
      ["id eq", "updatedAt lt", "a eq"],
      ["id eq", "updatedAt lt", "b eq"],
    ]);
  });

  it("pushes NOT through AND and OR (De Morgan)", () => {
    expect(show(toBranches(not(and(p("a", "eq", [1]), p("b", "lt")))))).toEqual([["a ne"], ["b gte"]]);
    expect(show(toBranches(not(or(p("a", "in", [1, 2]), p("b", "lte")))))).toEqual([["a notIn", "b gt"]]);
    expect(
      show(toBranches(and(p("id", "eq"), not(or(p("status", "eq", ["A"]), and(p("x", "gt"), p("y", "eq", [1]))))))),
    ).toEqual([
      ["id eq", "status ne", "x lte"],
      ["id eq", "status ne", "y ne"],
    ]);
  });

  it("reads an empty AND as match-all and an empty OR as match-nothing, under NOT too", () => {
    expect(toBranches(and())).toEqual([[]]);
    expect(toBranches(or())).toEqual([]);
    expect(toBranches(not(and()))).toEqual([]);
    expect(toBranches(not(or()))).toEqual([[]]);
  });

  it("keeps an opaque part as an opaque atom of its branch, negated or not", () => {
    const branches = toBranches(or(and(p("id", "eq"), opaque()), p("status", "eq", ["A"])));
    expect(show(branches)).toEqual([["id eq", "opaque"], ["status eq"]]);
    expect(branches.map(isOpaque)).toEqual([true, false]);
    expect(show(toBranches(not(opaque())))).toEqual([["opaque"]]);
  });

  it("gives up on a form larger than 64 branches with a single opaque branch", () => {
    const wide = (n: number) => or(...Array.from({ length: n }, (_, i) => p(`f${i}`, "eq", [i])));
    expect(toBranches(wide(64))).toHaveLength(64);
    expect(show(toBranches(wide(65)))).toEqual([["opaque"]]);
    const pairs = (n: number) =>
      and(...Array.from({ length: n }, (_, i) => or(p(`a${i}`, "eq", [1]), p(`b${i}`, "eq", [1]))));
    expect(toBranches(pairs(6))).toHaveLength(64);
    expect(show(toBranches(pairs(7)))).toEqual([["opaque"]]);
    // the cap also applies to OR after De Morgan (NOT of a wide AND)
    const wideAnd = and(...Array.from({ length: 65 }, (_, i) => p(`f${i}`, "eq", [i])));
    expect(show(toBranches(not(wideAnd)))).toEqual([["opaque"]]);
  });
});

describe("excludes and pins", () => {
  it("an equality admits only its value", () => {
    const b = branch(and(p("id", "eq"), p("status", "eq", ["GENERATING"])));
    expect(pins(b, "status", GENERATING)).toBe(true);
    expect(excludes(b, "status", GENERATING)).toBe(false);
    expect(excludes(b, "status", v("QUEUED"))).toBe(true);
    expect(pins(b, "status", v("QUEUED"))).toBe(false);
  });

  it("a NOT equality excludes its value and pins nothing", () => {
    const b = branch(and(p("id", "eq"), not(p("status", "eq", ["GENERATING"]))));
    expect(excludes(b, "status", GENERATING)).toBe(true);
    expect(pins(b, "status", GENERATING)).toBe(false);
    expect(excludes(b, "status", v("QUEUED"))).toBe(false);
  });

  it("in pins each listed value; notIn excludes each", () => {
    const inList = branch(p("status", "in", ["GENERATING", "RETRYING"]));
    expect(pins(inList, "status", GENERATING)).toBe(true);
    expect(pins(inList, "status", v("RETRYING"))).toBe(true);
    expect(excludes(inList, "status", v("DONE"))).toBe(true);
    const notIn = branch(p("status", "notIn", ["GENERATING", "DONE"]));
    expect(excludes(notIn, "status", GENERATING)).toBe(true);
    expect(excludes(notIn, "status", v("QUEUED"))).toBe(false);
    expect(pins(notIn, "status", v("QUEUED"))).toBe(false);
    expect(excludes(branch(not(p("status", "in", ["GENERATING"]))), "status", GENERATING)).toBe(true);
  });

  it("intersects several predicates on the field within a branch", () => {
    const narrowed = branch(and(p("status", "in", ["GENERATING", "QUEUED"]), p("status", "notIn", ["GENERATING"])));
    expect(excludes(narrowed, "status", GENERATING)).toBe(true);
    expect(pins(narrowed, "status", v("QUEUED"))).toBe(true);
    const contradiction = branch(and(p("status", "eq", ["GENERATING"]), p("status", "ne", ["GENERATING"])));
    expect(excludes(contradiction, "status", GENERATING)).toBe(true);
    expect(pins(contradiction, "status", GENERATING)).toBe(false);
    const twoExcepts = branch(and(p("status", "ne", ["A"]), p("status", "ne", ["B"])));
    expect(excludes(twoExcepts, "status", v("A"))).toBe(true);
    expect(excludes(twoExcepts, "status", v("B"))).toBe(true);
    expect(excludes(twoExcepts, "status", v("C"))).toBe(false);
  });

  it("compares field names and values normalised", () => {
    const b = branch(and(p("job_status", "ne", ["in_progress"])));
    expect(excludes(b, "jobStatus", v("IN_PROGRESS"))).toBe(true);
    expect(excludes(b, "JobStatus", v("InProgress"))).toBe(true);
    expect(pins(branch(p("Status", "eq", ["generating"])), "status", GENERATING)).toBe(true);
  });

  it("admits anything when the field is not compared, not compared statically, or compared by order", () => {
    for (const cond of [
      p("id", "eq"),
      p("state", "ne", ["GENERATING"]),
      p("status", "ne"),
      p("status", "in"),
      p("status", "lt", ["GENERATING"]),
      p("status", "other"),
      and(p("id", "eq"), opaque()),
    ]) {
      const b = branch(cond);
      expect(excludes(b, "status", GENERATING)).toBe(false);
      expect(pins(b, "status", GENERATING)).toBe(false);
    }
  });

  it("an opaque atom does not widen what the readable atoms of its branch say", () => {
    const b = branch(and(opaque(), p("status", "ne", ["GENERATING"])));
    expect(excludes(b, "status", GENERATING)).toBe(true);
  });

  it("is read per branch: a lease claim excludes in one branch and judges age in the other", () => {
    const [free, stale] = toBranches(and(p("id", "eq"), or(p("status", "ne", ["GENERATING"]), p("updatedAt", "lt"))));
    expect(excludes(free!, "status", GENERATING)).toBe(true);
    expect(excludes(stale!, "status", GENERATING)).toBe(false);
    expect(agePredicates(stale!, vocabulary).map((t) => t.field)).toEqual(["updatedAt"]);
  });
});

describe("agePredicates", () => {
  it("returns timestamps compared below a threshold, with their nodes", () => {
    const updated = p("updatedAt", "lt");
    const heartbeat = p("last_heartbeat_at", "lte");
    const b = branch(and(p("status", "eq", ["GENERATING"]), updated, heartbeat));
    expect(agePredicates(b, vocabulary)).toEqual([
      { field: "updatedAt", node: updated.node },
      { field: "last_heartbeat_at", node: heartbeat.node },
    ]);
  });

  it("counts start-time fields and timestamp-looking names as well", () => {
    for (const field of ["startedAt", "created_at", "processedAt", "deadline", "leaseUntil"]) {
      expect(
        agePredicates(branch(p(field, "lt")), vocabulary).map((t) => t.field),
        field,
      ).toEqual([field]);
    }
  });

  it("ignores newer-than comparisons, equalities and non-time fields", () => {
    for (const cond of [
      p("updatedAt", "gt"),
      p("updatedAt", "gte"),
      p("updatedAt", "eq"),
      p("updatedAt", "ne"),
      p("attempts", "lt", [3]),
      p("priority", "lte"),
    ]) {
      expect(agePredicates(branch(cond), vocabulary)).toEqual([]);
    }
  });

  it("reads the polarity after NOT: NOT (updatedAt >= t) judges age, NOT (updatedAt < t) does not", () => {
    expect(agePredicates(branch(not(p("updatedAt", "gte"))), vocabulary).map((t) => t.field)).toEqual(["updatedAt"]);
    expect(agePredicates(branch(not(p("updatedAt", "lt"))), vocabulary)).toEqual([]);
  });

  it("skips opaque atoms", () => {
    expect(agePredicates(branch(and(opaque(), p("heartbeatAt", "lt"))), vocabulary).map((t) => t.field)).toEqual([
      "heartbeatAt",
    ]);
  });

  it("follows the configured vocabulary", () => {
    const custom = getVocabulary({ locks: { progressTimeFields: ["pulse"] } });
    expect(agePredicates(branch(p("pulse", "lt")), custom).map((t) => t.field)).toEqual(["pulse"]);
    expect(agePredicates(branch(p("pulse", "lt")), vocabulary)).toEqual([]);
  });
});
