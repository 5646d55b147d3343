// How long a holder can live and how old a hold must be before a take-over (reading/lifetime.ts), and the values a
// parameter typed as literals can hold (staticChoices in reading/values.ts). Each case is written in our words.
import { describe, expect, it } from "vitest";
import { ageLimitMs, holderLifetimeMs } from "../../src/core/reading/lifetime.js";
import { staticChoices } from "../../src/core/reading/values.js";
import { probeWith } from "./probe.js";

/** The module's exported time limit, read once per probe. */
const lifetime = (code: string) => probeWith(code, false, (sourceCode) => holderLifetimeMs(sourceCode));
const limit = (code: string) => probeWith(code, false, (sourceCode, node) => ageLimitMs(sourceCode, node));
const choices = (code: string) =>
  probeWith(code, false, (sourceCode, node) => staticChoices(sourceCode, node)?.map((v) => v.value));

describe("holderLifetimeMs: the time limit a route exports", () => {
  it.each([
    ["the route segment config", "export const maxDuration = 55; probe(0);", 55000],
    ["a const it names", "const LIMIT = 30; export const maxDuration = LIMIT; probe(0);", 30000],
    ["the pages router's config", "export const config = { maxDuration: 120 }; probe(0);", 120000],
  ])("reads %s", (_name, code, expected) => {
    expect(lifetime(code)).toEqual([expected]);
  });
  it.each([
    ["a limit that is not exported", "const maxDuration = 55; probe(0);"],
    ["a config without one", 'export const config = { runtime: "edge" }; probe(0);'],
    ["a limit known only at run time", "export const maxDuration = Number(process.env.MAX); probe(0);"],
  ])("has none for %s", (_name, code) => {
    expect(lifetime(code)).toEqual([undefined]);
  });
});

describe("ageLimitMs: the age a JavaScript test compares with", () => {
  it.each([
    ["an age held in a const", "const age = Date.now() - job.updatedAt; probe(job.busy && age < 60000);", 60000],
    ["the age written in the test", "probe(Date.now() - lock.at > 5 * 60 * 1000);", 300000],
    ["a limit on the left", "const idle = Date.now() - row.touchedAt; probe(45000 <= idle);", 45000],
  ])("reads %s", (_name, code, expected) => {
    expect(limit(code)).toEqual([expected]);
  });
  it.each([
    ["an age in seconds", "const secs = (Date.now() - job.updatedAt) / 1000; probe(secs < 60);"],
    ["a cutoff computed elsewhere", "probe(job.updatedAt < cutoff);"],
    ["two limits", "const a = Date.now() - x.at; probe(a > 1000 && a < 9000);"],
  ])("has none for %s", (_name, code) => {
    expect(limit(code)).toEqual([undefined]);
  });
});

describe("staticChoices: a parameter typed as a union of literals", () => {
  it("reads the union written on the parameter and one named by a type alias", () => {
    expect(choices('function f(status: "done" | "failed") { probe(status); }')).toEqual([["done", "failed"]]);
    expect(choices('type Outcome = "ok" | "late"; function f(o: Outcome) { probe(o); }')).toEqual([["ok", "late"]]);
  });
  it("has none for a wider type, a reassigned parameter, or an untyped one", () => {
    expect(choices('function f(status: "done" | string) { probe(status); }')).toEqual([undefined]);
    expect(choices('function f(s: "a" | "b") { s = pick(); probe(s); }')).toEqual([undefined]);
    expect(choices("function f(status) { probe(status); }")).toEqual([undefined]);
  });
});
