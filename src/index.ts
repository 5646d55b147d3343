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
