/**
 * eslint-plugin-locks: finds locks whose unlock path is missing. Flat config only:
 *   import locks from "eslint-plugin-locks";
 *   export default [locks.configs.recommended];
 */
import { createRequire } from "node:module";
import { ruleSettings } from "./configs.js";
import { rules } from "./rules.js";

const { name, version } = createRequire(import.meta.url)("../../package.json") as { name: string; version: string };

interface FlatConfig {
  name: string;
  plugins: Record<string, unknown>;
  rules: Record<string, "error">;
}

const plugin = {
  meta: { name, version, namespace: "locks" },
  rules,
  configs: {} as { recommended: FlatConfig; strict: FlatConfig },
};

plugin.configs.recommended = { name: "locks/recommended", plugins: { locks: plugin }, rules: ruleSettings(rules, "recommended") };
plugin.configs.strict = { name: "locks/strict", plugins: { locks: plugin }, rules: ruleSettings(rules, "strict") };

export default plugin;
export { rules };
export const configs = plugin.configs;
export const meta = plugin.meta;
export { plugin as "module.exports" };
