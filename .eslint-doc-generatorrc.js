/** @type {import('eslint-doc-generator').GenerateOptions} */
export default {
  configEmoji: [
    ["recommended", "✅"],
    ["strict", "🔒"],
  ],
  ruleDocTitleFormat: "desc-parens-prefix-name",
  ruleListColumns: ["name", "description", "configsError", "hasSuggestions", "options"],
};
