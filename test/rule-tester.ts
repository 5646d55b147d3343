import { RuleTester } from "@typescript-eslint/rule-tester";

/** The tester every rule test uses: TypeScript parser, ES modules, no type information (rules are syntactic). */
export const ruleTester = new RuleTester({
  languageOptions: { parserOptions: { ecmaVersion: "latest", sourceType: "module" } },
});

import * as espree from "espree";

/** For plain-JavaScript cases: ESLint's own default parser, as a user without typescript-eslint has it. */
export const javascript = { parser: espree } as const;

type Case = {
  code: string;
  errors: readonly {
    line?: number;
    data?: Record<string, unknown>;
    suggestions?: readonly { output: string }[] | null;
  }[];
};

const RECOVERED_BY = "/* locks-recovered-by: ./sweeper */ ";

/**
 * The case with its claim recovered by another module, as its author declares it: a `locks-recovered-by` comment
 * opening the claim's line (`claimLine` or `acquireLine` of the first error's data), in the code and in every
 * suggestion's output. Q3 on a holder's writes is asked only of a claim that can pass to a new holder while held.
 */
export function recoveredElsewhere<C extends Case>(c: C): C {
  const data = c.errors[0]?.data ?? {};
  const line = Number(data["claimLine"] ?? data["acquireLine"]);
  if (!Number.isInteger(line) || line < 1) throw new Error("recoveredElsewhere: the first error names no claim line");
  if (c.errors.some((e) => e.line === line))
    throw new Error("recoveredElsewhere: an error on the claim's line would move");
  const mark = (code: string): string => {
    const lines = code.split("\n");
    const at = lines[line - 1];
    if (at === undefined) throw new Error(`recoveredElsewhere: no line ${line}`);
    const indent = /^\s*/.exec(at)![0];
    lines[line - 1] = `${indent}${RECOVERED_BY}${at.slice(indent.length)}`;
    return lines.join("\n");
  };
  return {
    ...c,
    code: mark(c.code),
    errors: c.errors.map((e) =>
      e.suggestions ? { ...e, suggestions: e.suggestions.map((s) => ({ ...s, output: mark(s.output) })) } : e,
    ),
  };
}
