/**
 * eslint-plugin-locks: finds locks whose unlock path is missing. Flat config only:
 *   import locks from "eslint-plugin-locks";
 *   export default [locks.configs.recommended];
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ruleSettings } from "./configs.js";
import { rules } from "./rules.js";

/** The package's own package.json: two folders up from dist/src, one from src when run from source. */
function readOwnPackage(): { name: string; version: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as { name: string; version: string };
  }
  return { name: "eslint-plugin-locks", version: "0.0.0" };
}

const { name, version } = readOwnPackage();

interface FlatConfig {
  name: string;
  plugins: Record<string, unknown>;
  rules: Record<string, "error">;
  settings?: { locks: { typeAware: true } };
}

interface Configs {
  recommended: FlatConfig;
  strict: FlatConfig;
  /** The recommended rules, type-aware: needs `parserOptions.projectService` (see docs/typed-linting.md). */
  "recommended-type-checked": FlatConfig;
  "strict-type-checked": FlatConfig;
}

const plugin = {
  meta: { name, version, namespace: "locks" },
  rules,
  configs: {} as Configs,
};

// The type-checked configs enable the same rules and only switch on type-aware mode (src/core/types.ts).
const typeAware = { locks: { typeAware: true } } as const;
plugin.configs.recommended = {
  name: "locks/recommended",
  plugins: { locks: plugin },
  rules: ruleSettings(rules, "recommended"),
};
plugin.configs.strict = { name: "locks/strict", plugins: { locks: plugin }, rules: ruleSettings(rules, "strict") };
plugin.configs["recommended-type-checked"] = {
  ...plugin.configs.recommended,
  name: "locks/recommended-type-checked",
  settings: typeAware,
};
plugin.configs["strict-type-checked"] = {
  ...plugin.configs.strict,
  name: "locks/strict-type-checked",
  settings: typeAware,
};

export default plugin;
export { rules };
export const configs = plugin.configs;
export const meta = plugin.meta;
export { plugin as "module.exports" };
