// `locks-audit --cache` (issue 17, src/audit/cache.ts): a re-run lints only the modules whose text or inputs
// changed, and gives the same report as a run without the cache.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/audit/index.js";
import { main } from "../../src/audit/cli.js";
import { copyProject } from "./helpers.js";

const quiet = { config: "strict" as const, eslintConfig: false as const, progress: false, format: "json" as const };

describe("locks-audit --cache", () => {
  it("lints every parsed module on the first run, none on a second, and reports the same", async () => {
    const dir = copyProject("lock-helpers");
    const plain = await runAudit({ cwd: dir, ...quiet });
    const cold = await runAudit({ cwd: dir, ...quiet, cache: true });
    expect(cold.cache?.hits).toBe(0);
    expect(cold.cache?.misses).toBeGreaterThan(5);
    expect(cold.cache?.file).toBe(join(dir, ".locks-audit-cache"));
    const warm = await runAudit({ cwd: dir, ...quiet, cache: true });
    expect(warm.cache).toEqual({
      file: join(dir, ".locks-audit-cache"),
      hits: cold.cache!.misses,
      misses: 0,
      linted: [],
    });
    expect(warm.output).toBe(plain.output);
    expect(cold.output).toBe(plain.output);
    expect(warm.result.findings.length).toBeGreaterThan(8);
  });

  it("after a one-module change lints that module again and nothing else, and reports what a fresh run reports", async () => {
    const dir = copyProject("lock-helpers");
    await runAudit({ cwd: dir, ...quiet, cache: true });
    const file = join(dir, "src/jobs/prune.ts");
    writeFileSync(file, `${readFileSync(file, "utf8")}\n// touched\n`);
    const changed = await runAudit({ cwd: dir, ...quiet, cache: true });
    // Linted twice, as in any run: alone, then with the lock helpers it imports.
    expect(changed.cache?.linted).toEqual(["src/jobs/prune.ts"]);
    expect(changed.output).toBe((await runAudit({ cwd: dir, ...quiet })).output);
    const helper = join(dir, "src/lib/redis-lock.ts");
    writeFileSync(helper, readFileSync(helper, "utf8").replace(/\n/, "\n// a comment that moves every line\n"));
    const moved = await runAudit({ cwd: dir, ...quiet, cache: true });
    // The helper and the modules that import it (their inputs name the helper's lines) are linted again.
    expect(moved.cache?.linted).toContain("src/lib/redis-lock.ts");
    expect(moved.cache?.linted).toContain("src/jobs/prune.ts");
    expect(moved.cache?.linted).not.toContain("src/jobs/pay.js");
    expect(moved.output).toBe((await runAudit({ cwd: dir, ...quiet })).output);
  });

  it("lints everything again when the settings or the config change", async () => {
    const dir = copyProject("claim-sweeper");
    const cold = await runAudit({ cwd: dir, ...quiet, cache: true });
    const other = await runAudit({ cwd: dir, ...quiet, config: "recommended", cache: true });
    expect(other.cache?.hits).toBe(0);
    const set = await runAudit({
      cwd: dir,
      ...quiet,
      cache: true,
      settings: { locks: { progressTimeFields: ["touchedAt"] } },
    });
    expect(set.cache?.hits).toBe(0);
    expect(set.cache?.misses).toBe(cold.cache?.misses);
  });

  it("ignores a cache file it cannot read and writes a good one; takes a folder for --cache-location", async () => {
    const dir = copyProject("claim-sweeper");
    writeFileSync(join(dir, ".locks-audit-cache"), "{ not json");
    const first = await runAudit({ cwd: dir, ...quiet, cache: true });
    expect(first.cache?.hits).toBe(0);
    expect((await runAudit({ cwd: dir, ...quiet, cache: true })).cache?.misses).toBe(0);
    mkdirSync(join(dir, "cache-here"));
    const elsewhere = await runAudit({ cwd: dir, ...quiet, cache: true, cacheLocation: "cache-here" });
    expect(elsewhere.cache?.file).toBe(join(dir, "cache-here/.locks-audit-cache"));
    expect(existsSync(join(dir, "cache-here/.locks-audit-cache"))).toBe(true);
    expect((await runAudit({ cwd: dir, ...quiet, cache: true, cacheLocation: "custom.json" })).cache?.file).toBe(
      join(dir, "custom.json"),
    );
  });

  it("refuses --cache-location without --cache, and --cache with --types (exit 2)", async () => {
    const dir = copyProject("claim-sweeper");
    const cwd = process.cwd();
    const errors: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => void errors.push(s)) as never;
    try {
      process.chdir(dir);
      expect(await main(["--cache-location", "x", "--no-eslint-config"])).toBe(2);
      expect(await main(["--cache", "--types", "--no-eslint-config"])).toBe(2);
    } finally {
      process.chdir(cwd);
      process.stderr.write = write;
    }
    expect(errors.join("")).toContain("--cache-location needs --cache");
    expect(errors.join("")).toContain("--cache cannot be used with --types");
  });
});
