import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["test/setup.ts"],
    testTimeout: 60_000,
    // The plugin swallows internal errors on odd files (no finding, no crash); the tests must see them.
    env: { LOCKS_DEBUG: "1" },
  },
});
