// The plugin lints itself: typescript-eslint for the sources, eslint-plugin-eslint-plugin for the rules and
// tests, and its own recommended config over its fixtures (whose expectations the fixture test checks).
import js from "@eslint/js";
import globals from "globals";
import eslintPlugin from "eslint-plugin-eslint-plugin";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "fixtures/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["rules/**/*.ts"],
    ...eslintPlugin.configs.recommended,
    rules: {
      ...eslintPlugin.configs.recommended.rules,
      "eslint-plugin/require-meta-default-options": "error",
      "eslint-plugin/require-meta-schema-description": "error",
      "eslint-plugin/require-meta-docs-description": ["error", { pattern: "^(Require|Disallow|Enforce) " }],
      "eslint-plugin/require-meta-docs-url": "off", // set by createRule
    },
  },
  {
    files: ["test/rules/**/*.ts"],
    ...eslintPlugin.configs.recommended,
    rules: {
      ...eslintPlugin.configs.recommended.rules,
      "eslint-plugin/require-test-error-positions": "error",
    },
  },
  {
    // Node programs: scripts, the benchmark, and the proof scenarios' worker programs.
    files: ["scripts/**/*.js", "bench/**/*.js", "proof/**/*.js", "corpus/**/*.mjs", "*.js", "*.cjs"],
    languageOptions: { globals: globals.node },
  },
);
