// The editor reads the helpers a file imports (src/rule-kit/imported-modules.ts): a project written to a temporary
// folder, linted file by file with ESLint alone, as an editor or a CI lint step lints it.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ESLint } from "eslint";
import tsParser from "@typescript-eslint/parser";
import { afterEach, describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import { resolveModule } from "../../src/rule-kit/imported-modules.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function project(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), "locks-imports-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

async function lint(
  root: string,
  file: string,
  locks: Record<string, unknown> = { readImports: true },
): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    ignore: false,
    overrideConfig: [
      { files: ["**/*.{ts,js}"], languageOptions: { parser: tsParser, sourceType: "module" } },
      { ...(plugin.configs.strict as object), files: ["**/*.{ts,js}"] } as never,
      { settings: { locks } },
    ],
  });
  const [result] = await eslint.lintFiles([join(root, file)]);
  return result!.messages.map((m) => `${m.line} ${m.ruleId}: ${m.message}`);
}

/** A Redis lock helper taken with a constant value and freed by a plain DEL. */
const LOCK = `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(key: string): Promise<boolean> {
  return (await redis.set(key, "1", "EX", 60, "NX")) === "OK";
}
export async function releaseLock(key: string): Promise<void> {
  await redis.del(key);
}
`;

/** Takes the lock through the helper and releases it only after work that succeeded. */
const JOB = (from: string) => `import { acquireLock, releaseLock } from "${from}";
export async function runDigest(send: () => Promise<void>) {
  if (!(await acquireLock("digest"))) return;
  await send();
  await releaseLock("digest");
}
`;

describe("the editor reads the modules a file imports and calls", () => {
  it("reports a lock taken and released through a helper of another file, naming it, through a tsconfig path", async () => {
    const root = project({
      "tsconfig.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@/*": ["src/*"] } } }),
      "src/lib/lock.ts": LOCK,
      "src/jobs/digest.ts": JOB("@/lib/lock"),
    });
    const found = await lint(root, "src/jobs/digest.ts");
    expect(found.map((f) => f.split(":")[0])).toEqual(["3 locks/release-in-finally", "5 locks/owner-checked-release"]);
    expect(found[1]).toContain("through `releaseLock`, src/lib/lock.ts, line 7");
  });

  it("resolves a relative import written with .js to its TypeScript source, without a tsconfig", async () => {
    const root = project({ "src/lib/lock.ts": LOCK, "src/jobs/digest.ts": JOB("../lib/lock.js") });
    expect((await lint(root, "src/jobs/digest.ts")).map((f) => f.split(":")[0])).toEqual([
      "3 locks/release-in-finally",
      "5 locks/owner-checked-release",
    ]);
  });

  it("reads nothing unless settings.locks.readImports is true, and rejects a value that is not a boolean", async () => {
    const root = project({ "src/lib/lock.ts": LOCK, "src/jobs/digest.ts": JOB("../lib/lock") });
    expect(await lint(root, "src/jobs/digest.ts", {})).toEqual([]);
    expect(await lint(root, "src/jobs/digest.ts", { readImports: false })).toEqual([]);
    await expect(lint(root, "src/jobs/digest.ts", { readImports: "no" })).rejects.toThrow(
      "settings.locks.readImports must be true or false",
    );
  });

  it("reads the helper again when its text changes (the memo is keyed by the text)", async () => {
    const root = project({ "src/lib/lock.ts": LOCK, "src/jobs/digest.ts": JOB("../lib/lock") });
    expect(await lint(root, "src/jobs/digest.ts")).toHaveLength(2);
    // The release becomes owner-checked (a token compared in a Lua script) and is made in a finally by the caller.
    writeFileSync(
      join(root, "src/lib/lock.ts"),
      LOCK.replace('"1"', "token")
        .replace("(key: string): Promise<boolean>", "(key: string, token: string)")
        .replace(
          "await redis.del(key);",
          `await redis.eval('if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end', 1, key, token);`,
        )
        .replace("releaseLock(key: string)", "releaseLock(key: string, token: string)"),
    );
    writeFileSync(
      join(root, "src/jobs/digest.ts"),
      `import { acquireLock, releaseLock } from "../lib/lock";
export async function runDigest(send: () => Promise<void>, token: string) {
  if (!(await acquireLock("digest", token))) return;
  try {
    await send();
  } finally {
    await releaseLock("digest", token);
  }
}
`,
    );
    expect(await lint(root, "src/jobs/digest.ts")).toEqual([]);
  });

  it("stays quiet on an imported module with no lock in it, and on packages", async () => {
    const root = project({
      "src/lib/mail.ts": `export async function send(to: string) { return fetch("https://mail.example/" + to); }\n`,
      "src/jobs/notify.ts": `import { send } from "../lib/mail";
import { Queue } from "bullmq";
export async function notify(lock: { taken: boolean }) {
  await send("ops");
  return new Queue("x");
}
`,
    });
    expect(await lint(root, "src/jobs/notify.ts")).toEqual([]);
    expect(resolveModule("bullmq", join(root, "src/jobs/notify.ts"))).toBeUndefined();
    expect(resolveModule("../lib/mail", join(root, "src/jobs/notify.ts"))).toBe(join(root, "src/lib/mail.ts"));
    expect(resolveModule("../lib/missing", join(root, "src/jobs/notify.ts"))).toBeUndefined();
  });
});

/** A task queue's lease module: claims with a lease, and a renewal fenced on the holder's token that reports the loss. */
const LEASES = `import { Pool } from "pg";
const pool = new Pool();
export async function claimNext(token: string) {
  const { rows } = await pool.query(
    \`UPDATE tasks SET status = 'running', token = $1, lease_until = now() + interval '30 seconds'
     WHERE id = (SELECT id FROM tasks WHERE status = 'queued' OR (status = 'running' AND lease_until < now())
                 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *\`,
    [token],
  );
  return rows[0];
}
export async function renewLease(id: string, token: string): Promise<boolean> {
  const res = await pool.query(
    \`UPDATE tasks SET lease_until = now() + interval '30 seconds' WHERE id = $1 AND token = $2 AND status = 'running'\`,
    [id, token],
  );
  const kept = res.rowCount === 1;
  if (!kept) console.warn("lease lost", id);
  return kept;
}
export async function finish(id: string, token: string) {
  await pool.query(\`UPDATE tasks SET status = 'done' WHERE id = $1 AND token = $2\`, [id, token]);
}
`;

/** A worker that renews through the lease module every ten seconds; \`onLost\` is what it does when a renewal fails. */
const WORKER = (onLost: string) => `import { claimNext, finish, renewLease } from "../queue/lease";
export async function runOne(work: (id: string, signal: AbortSignal) => Promise<void>) {
  const token = crypto.randomUUID();
  const task = await claimNext(token);
  if (!task) return;
  const controller = new AbortController();
  const beat = setInterval(async () => {
    try {
      if (!(await renewLease(task.id, token))) ${onLost};
    } catch {
      controller.abort();
    }
  }, 10_000);
  try {
    await work(task.id, controller.signal);
    await finish(task.id, token);
  } finally {
    clearInterval(beat);
  }
}
`;

describe("the editor reads a renewal made through another file's helper (heartbeat-abort)", () => {
  it("reports a heartbeat whose failed renewal, returned by the helper, only logs", async () => {
    const root = project({
      "src/queue/lease.ts": LEASES,
      "src/worker/run.ts": WORKER('console.error("lost", task.id)'),
    });
    const found = await lint(root, "src/worker/run.ts");
    expect(found.map((f) => f.split(":")[0])).toEqual(["9 locks/heartbeat-abort"]);
    expect(found[0]).toContain("renewed through `renewLease` in src/queue/lease.ts, line 13");
    expect(found[0]).toContain("is checked at line 9, but the failure branch does not stop the work");
  });

  it("stays quiet when the caller stops the work on a failed renewal, and when imports are not read", async () => {
    const root = project({ "src/queue/lease.ts": LEASES, "src/worker/run.ts": WORKER("controller.abort()") });
    expect(await lint(root, "src/worker/run.ts")).toEqual([]);
    const logs = project({ "src/queue/lease.ts": LEASES, "src/worker/run.ts": WORKER('console.error("lost")') });
    expect(await lint(logs, "src/worker/run.ts", {})).toEqual([]);
  });

  it("reads no renewal through a helper that catches its own failure (not summarised yet): unknown, no finding", async () => {
    const catching = LEASES.replace(
      "  const res = await pool.query(",
      "  let res;\n  try {\n  res = await pool.query(",
    ).replace(
      "    [id, token],\n  );\n  const kept",
      "    [id, token],\n  );\n  } catch {\n    return false;\n  }\n  const kept",
    );
    expect(catching).toContain("return false;");
    const root = project({ "src/queue/lease.ts": catching, "src/worker/run.ts": WORKER('console.error("lost")') });
    expect(await lint(root, "src/worker/run.ts")).toEqual([]);
  });
});
