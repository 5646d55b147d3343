import { RuleTester } from "@typescript-eslint/rule-tester";

/** The tester every rule test uses: TypeScript parser, ES modules, no type information (rules are syntactic). */
export const ruleTester = new RuleTester({
  languageOptions: { parserOptions: { ecmaVersion: "latest", sourceType: "module" } },
});

import * as espree from "espree";

/** For plain-JavaScript cases: ESLint's own default parser, as a user without typescript-eslint has it. */
export const javascript = { parser: espree } as const;
