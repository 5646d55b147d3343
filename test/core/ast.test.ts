import { parse } from "@typescript-eslint/parser";
import { describe, expect, it } from "vitest";
import type { Node } from "../../src/core/model/accesses.js";
import { runsAfter } from "../../src/core/reading/ast.js";
import { walk } from "../../src/core/reading/walk.js";

/** Parses `code` with parents set and returns the calls `a()` and `b()` (the first of each). */
function marks(code: string): { a: Node; b: Node } {
  const program = parse(code, { range: true, loc: true }) as unknown as Node;
  const found: Record<string, Node> = {};
  const setParents = (n: Node, parent?: Node) => {
    (n as { parent?: Node }).parent = parent;
    walk(n, (c) => {
      if (c === n) return true;
      setParents(c, n);
      return false;
    });
  };
  setParents(program);
  walk(program, (n) => {
    if (n.type === "CallExpression" && n.callee.type === "Identifier" && !found[n.callee.name])
      found[n.callee.name] = n;
    return true;
  });
  return { a: found["a"]!, b: found["b"]! };
}

describe("runsAfter: whether one write can follow another in one run of their function", () => {
  it.each([
    ["one after the other", "async function f() { await a(); await b(); }", true],
    ["a branch that runs on into the rest", "async function f(x) { if (x) { await a(); } await b(); }", true],
    [
      "a loop left by break, then the write after it",
      "async function f(xs) { for (const x of xs) { await a(x); break; } await b(); }",
      true,
    ],
    ["a nested block that does not leave", "async function f(x) { { await a(); } if (x) return; await b(); }", true],
  ])("yes: %s", (_name, code, expected) => {
    const { a, b } = marks(code);
    expect(runsAfter(a, b)).toBe(expected);
  });

  it.each([
    ["the first returns before the second", "async function f(x) { if (x) { await a(); return; } await b(); }"],
    [
      "the first throws before the second",
      "async function f(x) { if (x) { await a(); throw new Error('x'); } await b(); }",
    ],
    ["the two branches of one if", "async function f(x) { if (x) { await a(); } else { await b(); } }"],
    [
      "the next iteration is another item",
      "async function f(xs) { for (const x of xs) { if (x.gone) { await a(x); continue; } await b(x); } }",
    ],
    [
      "an if whose branches both leave",
      "async function f(x, y) { await a(); if (y) { return 1; } else { throw y; } await b(); }",
    ],
    ["the second comes first", "async function f() { await b(); await a(); }"],
  ])("no: %s", (_name, code) => {
    const { a, b } = marks(code);
    expect(runsAfter(a, b)).toBe(false);
  });
});
