// DynamoDB's condition and update expressions, parsed (src/recognizers/dynamodb/expressions.ts): precedence, the
// grammar's functions and operators, and the expressions it must refuse rather than guess at.
import { describe, expect, it } from "vitest";
import { parseCondition, parseUpdate } from "../../src/recognizers/dynamodb/expressions.js";

const path = (...segments: string[]) => ({ kind: "path", segments });
const value = (name: string) => ({ kind: "value", name });

describe("parseCondition", () => {
  it("binds AND tighter than OR, and NOT tighter than AND", () => {
    expect(parseCondition("attribute_not_exists(pk) OR #exp < :now AND NOT #owner = :me")).toEqual({
      kind: "or",
      items: [
        { kind: "function", name: "attribute_not_exists", args: [path("pk")] },
        {
          kind: "and",
          items: [
            { kind: "compare", op: "<", left: path("#exp"), right: value(":now") },
            { kind: "not", item: { kind: "compare", op: "=", left: path("#owner"), right: value(":me") } },
          ],
        },
      ],
    });
  });

  it("reads parentheses, keywords in any case, BETWEEN and IN", () => {
    expect(parseCondition("(a = :x or b = :y) and c between :lo AND :hi AND d in (:p, :q)")).toEqual({
      kind: "and",
      items: [
        {
          kind: "or",
          items: [
            { kind: "compare", op: "=", left: path("a"), right: value(":x") },
            { kind: "compare", op: "=", left: path("b"), right: value(":y") },
          ],
        },
        { kind: "between", operand: path("c"), low: value(":lo"), high: value(":hi") },
        { kind: "in", operand: path("d"), list: [value(":p"), value(":q")] },
      ],
    });
  });

  it("reads nested paths and a value on the left", () => {
    expect(parseCondition(":now >= lease.expiresAt")).toEqual({
      kind: "compare",
      op: ">=",
      left: value(":now"),
      right: path("lease", "expiresAt"),
    });
  });

  it("refuses what the grammar does not allow", () => {
    for (const bad of ["", "a =", "a = :x AND", "a == :x", "(a = :x", "a = :x b = :y", "attribute_exists(", "= :x"])
      expect(parseCondition(bad), bad).toBeUndefined();
  });
});

describe("parseUpdate", () => {
  it("reads every clause and its actions", () => {
    expect(parseUpdate("SET #s = :running, tries = tries + :one REMOVE lockedBy ADD version :one")).toEqual([
      { clause: "SET", path: path("#s"), value: value(":running") },
      {
        clause: "SET",
        path: path("tries"),
        value: { kind: "arithmetic", op: "+", left: path("tries"), right: value(":one") },
      },
      { clause: "REMOVE", path: path("lockedBy") },
      { clause: "ADD", path: path("version"), value: value(":one") },
    ]);
  });

  it("reads functions as values", () => {
    expect(parseUpdate("set startedAt = if_not_exists(startedAt, :now)")).toEqual([
      {
        clause: "SET",
        path: path("startedAt"),
        value: { kind: "call", name: "if_not_exists", args: [path("startedAt"), value(":now")] },
      },
    ]);
  });

  it("refuses what the grammar does not allow", () => {
    for (const bad of ["", "SET", "SET a", "SET a = ", "UPSERT a = :x", "SET a = :x,", "REMOVE"])
      expect(parseUpdate(bad), bad).toBeUndefined();
  });
});
