// The pipeline's stages import one way (docs/architecture.md, "Layout"): the model at the bottom, then the
// embedded languages, the readers of JavaScript (which may read the SQL a value holds), the facts built from them,
// the recognizers of each store, the rule kit, and the rules and the audit on top. `npm run lint:deps` (in CI) fails on an import against that flow,
// and on any import cycle.
const stage = (name) => `^src/core/${name}/`;
const above = {
  model: [
    "^src/core/(languages|reading|facts)/",
    "^src/(recognizers|rule-kit|audit|formatters)/",
    "^rules/",
    "^src/index\\.ts$",
  ],
  languages: [
    "^src/core/(reading|facts)/",
    "^src/(recognizers|rule-kit|audit|formatters)/",
    "^rules/",
    "^src/index\\.ts$",
  ],
  // The readers of JavaScript read the SQL a value holds (a clock spelled `sql\`now()\``) with the languages' parser.
  reading: ["^src/core/facts/", "^src/(recognizers|rule-kit|audit|formatters)/", "^rules/", "^src/index\\.ts$"],
  facts: ["^src/core/summaries/", "^src/(recognizers|rule-kit|audit|formatters)/", "^rules/", "^src/index\\.ts$"],
  // Function summaries read the accesses the recognizers made and hand instances to the facts, beside them.
  summaries: [
    "^src/core/(languages|facts)/",
    "^src/(recognizers|rule-kit|audit|formatters)/",
    "^rules/",
    "^src/index\\.ts$",
  ],
};

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycle",
      severity: "error",
      comment: "Imports run one way: no module may reach itself again.",
      from: {},
      to: { circular: true },
    },
    ...Object.entries(above).map(([name, upper]) => ({
      name: `${name}-imports-only-below`,
      severity: "error",
      comment: `src/core/${name}/ is a lower stage: it may not import ${upper.join(", ")}.`,
      from: { path: stage(name) },
      to: { path: upper },
    })),
    {
      name: "recognizers-read-no-facts",
      severity: "error",
      comment:
        "A recognizer turns one store's calls into the model; it reads code and languages, never facts or the rule kit.",
      from: { path: "^src/recognizers/" },
      to: {
        path: ["^src/core/(facts|summaries)/", "^src/(rule-kit|audit|formatters)/", "^rules/", "^src/index\\.ts$"],
      },
    },
    {
      name: "rule-kit-below-rules",
      severity: "error",
      comment: "The rule kit serves the rules and the audit; it never imports them.",
      from: { path: "^src/rule-kit/" },
      to: { path: ["^src/(audit|formatters)/", "^rules/", "^src/index\\.ts$"] },
    },
    {
      name: "rules-read-no-client-syntax",
      severity: "error",
      comment: "Rules ask the facts one question; client syntax lives in the recognizers and the embedded languages.",
      from: { path: "^rules/" },
      to: { path: ["^src/recognizers/", "^src/core/languages/"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
  },
};
