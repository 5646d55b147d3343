// Reads the argument of every `probe(…)` call of a snippet with a function of the core, in source order, while
// ESLint's traversal is running (so the scope manager is live): the harness of the core's unit tests.
import { Linter, type Rule } from "eslint";
import * as tsParser from "@typescript-eslint/parser";
import * as espree from "espree";
import type { Node } from "../../src/core/model/accesses.js";
import type { evaluate } from "../../src/core/reading/values.js";

export type ProbeSourceCode = Parameters<typeof evaluate>[0];

export function probeWith<T>(
  code: string,
  js: boolean,
  read: (sourceCode: Parameters<typeof evaluate>[0], node: Node) => T,
): T[] {
  const results: T[] = [];
  const capture: Rule.RuleModule = {
    meta: { type: "problem", schema: [] },
    create(context) {
      return {
        CallExpression(node) {
          if (node.callee.type === "Identifier" && node.callee.name === "probe") {
            // ESLint's and typescript-eslint's AST and SourceCode types describe the same objects
            results.push(
              read(
                context.sourceCode as unknown as Parameters<typeof evaluate>[0],
                node.arguments[0] as unknown as Node,
              ),
            );
          }
        },
      };
    },
  };
  const linter = new Linter({ configType: "flat" });
  const messages = linter.verify(
    code,
    [
      {
        files: ["**/*.ts", "**/*.js"],
        plugins: { test: { rules: { capture } } },
        languageOptions: {
          parser: js ? espree : (tsParser as Linter.Parser),
          ecmaVersion: "latest",
          sourceType: "module",
        },
        rules: { "test/capture": "error" },
      },
    ],
    js ? "probe.js" : "probe.ts",
  );
  const fatal = messages.find((m) => m.fatal);
  if (fatal) throw new Error(`parse error: ${fatal.message}`);
  return results;
}
