// `locks-audit --concurrency` (issue 17): the rules run in ESLint's worker threads, batch by batch, and the audit
// reports exactly what it reports in one thread. The workers load the built options module
// (dist/src/audit/lint-worker.js), so these tests run the built CLI.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, copyProject, projects } from "./helpers.js";

const run = (args: string[], cwd: string) => spawnSync(process.execPath, [cli, ...args], { cwd, encoding: "utf8" });

describe("locks-audit --concurrency", () => {
  // Each project exercises one batch of the audit: modules given imported helpers (lock-helpers), claim lines
  // recovered in another module (recovered-elsewhere), settings.locks per package (monorepo), schema keys.
  it.each(["lock-helpers", "recovered-elsewhere", "monorepo", "schema-keys"])(
    "%s: two worker threads report what one thread reports, byte for byte",
    (name) => {
      const dir = join(projects, name);
      const one = run(["--config", "strict", "--format", "json", "--concurrency", "off"], dir);
      const two = run(["--config", "strict", "--format", "json", "--concurrency", "2"], dir);
      expect(one.stderr).toBe("");
      expect(JSON.parse(one.stdout).findings.length + JSON.parse(one.stdout).answered.length).toBeGreaterThan(0);
      expect([two.status, two.stdout]).toEqual([one.status, one.stdout]);
      // ESLint's advice on its threads (a handful of modules per batch: they mostly start) is said once, not per batch.
      expect(two.stderr).toMatch(
        /^(locks-audit: warning: ESLint's worker threads spent much of their time starting rather than linting \("You may (disable|reduce or disable) concurrency to improve performance\."\): --concurrency off or fewer threads may be faster on this project and machine\.\n)?$/,
      );
    },
  );

  it("auto is ESLint's choice (no thread for a handful of modules) and reports the same", () => {
    const dir = join(projects, "lock-helpers");
    const auto = run(["--format", "json", "--concurrency", "auto"], dir);
    const plain = run(["--format", "json"], dir);
    expect([auto.status, auto.stdout, auto.stderr]).toEqual([plain.status, plain.stdout, ""]);
  });

  it("a warm --cache run with threads lints nothing and reports the same", () => {
    const dir = copyProject("lock-helpers");
    const cold = run(["--format", "json", "--cache", "--concurrency", "2"], dir);
    const cache = JSON.parse(readFileSync(join(dir, ".locks-audit-cache"), "utf8")) as {
      entries: Record<string, unknown>;
    };
    expect(Object.keys(cache.entries).length).toBeGreaterThan(5);
    const warm = run(["--format", "json", "--cache", "--concurrency", "2"], dir);
    expect(warm.stdout).toBe(cold.stdout);
    expect(warm.stdout).toBe(run(["--format", "json"], dir).stdout);
  });

  it("invalid settings.locks found in a worker thread stop the audit with exit 2 and the module's name", () => {
    const dir = mkdtempSync(join(tmpdir(), "locks-audit-threads-"));
    writeFileSync(
      join(dir, "eslint.config.mjs"),
      `export default [{ settings: { locks: { stateFields: "status" } } }];\n`,
    );
    for (const name of ["a", "b", "c"]) {
      writeFileSync(
        join(dir, `${name}.js`),
        `import Redis from "ioredis";\nconst redis = new Redis();\nexport async function lock(id) {\n  return redis.set(\`${name}:\${id}\`, "1", "NX");\n}\n`,
      );
    }
    const r = run(["--concurrency", "2"], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /^locks-audit: invalid settings\.locks for [abc]\.js: eslint-plugin-locks: settings\.locks\.stateFields must be an array of non-empty strings\. Got "status"\.\n$/,
    );
  });

  it("takes off, auto or a positive whole number, and not with --types", () => {
    const dir = mkdtempSync(join(tmpdir(), "locks-audit-threads-"));
    cpSync(join(projects, "claim-sweeper"), dir, { recursive: true });
    for (const bad of ["0", "two", "-1", "1.5"]) {
      const r = run(["--concurrency", bad], dir);
      expect([r.status, r.stderr]).toEqual([
        2,
        `error: option '--concurrency <n>' argument '${bad}' is invalid. --concurrency takes off, auto or a number of threads (1 or more), not ${JSON.stringify(bad)}.\n`,
      ]);
    }
    const typed = run(["--concurrency", "2", "--types"], dir);
    expect([typed.status, typed.stderr]).toEqual([
      2,
      "locks-audit: --concurrency cannot be used with --types: the TypeScript program cannot be handed to worker threads\n",
    ]);
    expect(run(["--concurrency", "off", "--types", "--format", "json"], dir).status).toBe(
      run(["--format", "json"], dir).status,
    );
  });
});
