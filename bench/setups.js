// The ESLint setups the benchmark compares. Every setup lints with the same parser, options and files; only the
// rules differ. Used by the benchmark workers (bench/worker.js, bench/rule-times.js).

/** Setups measured by default, in the order of each interleaved round. */
export const DEFAULT_SETUPS = ["floor", "listeners", "strict", "reference"];
/** Every setup a run may name (`rule:<id>` is one plugin rule alone). */
export const KNOWN_SETUPS = ["floor", "listeners", "inventory", "strict", "recommended", "reference"];

/** What each setup is, for the report. */
export const SETUP_DESCRIPTIONS = {
  floor: "no rules: parse, scope analysis, traversal and code-path analysis (ESLint does all of these for every file)",
  listeners: "one no-op rule registering the plugin's listeners: the cost of having such listeners at all",
  inventory: "the plugin's shared core alone (collect, recognize, pair), with no rule asking for the facts",
  strict: "configs.strict of eslint-plugin-locks (every rule)",
  recommended: "configs.recommended of eslint-plugin-locks",
  reference: "typescript-eslint's recommended rules (no type information)",
};

/** The corpus lives in node_modules, which ESLint ignores by default. */
const unignore = { ignores: ["!**/node_modules/"] };

/** @param {unknown} tsParser */
function baseConfig(tsParser) {
  return {
    files: ["**/*.{js,mjs,cjs,ts,mts,cts}"],
    languageOptions: { parser: tsParser },
    linterOptions: { reportUnusedDisableDirectives: "off" },
  };
}

/** The listener keys the plugin registers for the first `locks/*` rule of a file. */
function pluginListenerKeys(plugin) {
  const keys = new Set();
  for (const rule of Object.values(plugin.rules)) {
    // A fresh stand-in source code per rule, so each rule is "the first" and returns the collecting listeners.
    const context = { sourceCode: {}, settings: {}, options: [], id: "bench", report() {} };
    for (const key of Object.keys(rule.create(context))) keys.add(key);
  }
  return [...keys];
}

function benchRule(name, create) {
  return {
    plugins: { bench: { rules: { [name]: { meta: { type: "problem", schema: [] }, create } } } },
    rules: { [`bench/${name}`]: "error" },
  };
}

/**
 * The flat config array of a setup. Modules are imported here, so a worker that times this call times the loading
 * of the plugin or the reference rules.
 * @param {string} setup
 * @param {unknown} tsParser
 */
export async function setupConfig(setup, tsParser) {
  const base = baseConfig(tsParser);
  if (setup === "floor") return [unignore, base];
  if (setup === "reference") {
    const { default: tseslint } = await import("typescript-eslint");
    // Rules and plugins only: the parser and its options stay the floor's.
    const rulesOnly = tseslint.configs.recommended.map((entry) =>
      Object.fromEntries(Object.entries(entry).filter(([key]) => key !== "languageOptions")),
    );
    return [unignore, base, ...rulesOnly];
  }
  const { default: locks } = await import("../dist/src/index.js");
  if (setup === "strict" || setup === "recommended") return [unignore, base, locks.configs[setup]];
  if (setup.startsWith("rule:")) {
    const id = setup.slice("rule:".length);
    if (!(id in locks.rules)) throw new Error(`no rule locks/${id}`);
    return [unignore, base, { plugins: { locks }, rules: { [`locks/${id}`]: "error" } }];
  }
  if (setup === "listeners") {
    // The listeners the plugin registers, doing nothing: dispatch cost without any of the plugin's work.
    const keys = pluginListenerKeys(locks);
    const noop = () => {};
    return [unignore, base, benchRule("listeners", () => Object.fromEntries(keys.map((k) => [k, noop])))];
  }
  if (setup === "inventory") {
    // The shared core alone: collect, recognize and pair, with no rule asking anything of the facts.
    const { onLockFacts } = await import("../dist/src/rule-kit/inventory.js");
    return [unignore, base, benchRule("inventory", (context) => onLockFacts(context, () => {}))];
  }
  throw new Error(`unknown setup ${setup}`);
}

/** The plugin's rule ids, for `rule:<id>` setups. */
export async function pluginRuleIds() {
  const { default: locks } = await import("../dist/src/index.js");
  return Object.keys(locks.rules);
}
