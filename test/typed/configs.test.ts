// The type-checked configs: the same rules as their syntactic twins, plus the one setting that turns on
// type-aware mode (src/core/reading/types.ts). Nothing else differs, so `recommended` is untouched by them.
import { expect, it } from "vitest";
import plugin from "../../src/index.js";

it.each([
  ["recommended-type-checked", "recommended"],
  ["strict-type-checked", "strict"],
] as const)("configs[%s] enables exactly the rules of configs.%s and sets settings.locks.typeAware", (typed, plain) => {
  const config = plugin.configs[typed];
  expect(config.name).toBe(`locks/${typed}`);
  expect(config.rules).toEqual(plugin.configs[plain].rules);
  expect(config.plugins["locks"]).toBe(plugin);
  expect(config.settings).toEqual({ locks: { typeAware: true } });
  expect(plugin.configs[plain]).not.toHaveProperty("settings");
});
