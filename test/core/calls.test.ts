// The call a node-style callback's parameters come from (reading/calls.ts): `stat` in `fs.stat(p, (err, stat) => …)`
// is what `fs.stat` gives, and `err` is the error it hands first. Each case is written in our words.
import { describe, expect, it } from "vitest";
import type { TSESTree } from "@typescript-eslint/utils";
import { callbackResultOf, isErrorParameter } from "../../src/core/reading/calls.js";
import { probeWith } from "./probe.js";

/** The text of the call whose result the probed identifier receives, or undefined. */
function resultOf(code: string): (string | undefined)[] {
  return probeWith(code, true, (sourceCode, node) => {
    const call = node.type === "Identifier" ? callbackResultOf(sourceCode, node as TSESTree.Identifier) : undefined;
    return call ? sourceCode.getText(call.callee) : undefined;
  });
}

describe("callbackResultOf: the call an error-first callback's result parameter comes from", () => {
  it.each([
    ["an arrow handed last", "fs.stat(p, (err, info) => { probe(info); });", "fs.stat"],
    ["a function expression", "store.get(key, function (error, holder) { probe(holder); });", "store.get"],
    ["a bound callback", "c.get(k, function (err, v) { probe(v); }.bind(this));", "c.get"],
  ])("reads %s", (_name, code, expected) => {
    expect(resultOf(code)).toEqual([expected]);
  });

  it.each([
    ["a first parameter that is no error", "items.forEach((item, index) => { probe(index); });"],
    ["the error itself", "fs.stat(p, (err, info) => { probe(err); });"],
    ["a callback that is not the last argument", "on(p, (err, info) => { probe(info); }, opts);"],
    ["a third parameter", "fs.read(fd, (err, n, buf) => { probe(buf); });"],
    ["a local variable", "const info = other(); probe(info);"],
  ])("leaves %s unread", (_name, code) => {
    expect(resultOf(code)).toEqual([undefined]);
  });
});

describe("isErrorParameter: the error an error-first callback is handed", () => {
  const errorParam = (code: string) => probeWith(code, true, (sourceCode, node) => isErrorParameter(sourceCode, node));
  it("is the first parameter named like an error", () => {
    expect(errorParam("fs.mkdir(p, (err) => { probe(err); });")).toEqual([true]);
    expect(errorParam("fs.mkdir(p, function (error) { probe(error); });")).toEqual([true]);
  });
  it("is not a second parameter, a local, or a first parameter named otherwise", () => {
    expect(errorParam("fs.stat(p, (e1, err) => { probe(err); });")).toEqual([false]);
    expect(errorParam("const err = make(); probe(err);")).toEqual([false]);
    expect(errorParam("list.map((value) => { probe(value); });")).toEqual([false]);
  });
});
