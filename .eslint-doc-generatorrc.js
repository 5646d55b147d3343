/** @type {import('eslint-doc-generator').GenerateOptions} */
export default {
  configEmoji: [
    ["recommended", "✅"],
    ["strict", "🔒"],
  ],
  // The type-checked configs enable the same rules as recommended/strict (README, docs/typed-linting.md).
  ignoreConfig: ["recommended-type-checked", "strict-type-checked"],
  ruleDocTitleFormat: "desc-parens-prefix-name",
  ruleListColumns: ["name", "description", "configsError", "hasSuggestions", "options"],
};
