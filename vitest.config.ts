import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    setupFiles: ["test/setup.ts"],
    // The default report, then one line on the proof scenarios: run against real servers, or skipped.
    reporters: ["default", "./test/proof/reporter.ts"],
    testTimeout: 60_000,
    // The plugin swallows internal errors on odd files (no finding, no crash); the tests must see them.
    env: { LOCKS_DEBUG: "1" },
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/**/*.test.ts"], exclude: ["test/proof/**"] },
      },
      {
        // The crash scenarios against real servers (docs/proof.md). `vitest run --project unit` skips them.
        extends: true,
        test: {
          name: "proof",
          include: ["test/proof/**/*.test.ts"],
          globalSetup: ["test/proof/global-setup.ts"],
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
