// Type-aware mode (configs["recommended-type-checked"]): with `parserOptions.projectService`, a call whose receiver
// the checker proves is not the store's client is not read as that store's access (src/core/reading/types.ts). Valid cases
// are lookalikes the syntactic reading reports and the types silence (an in-process key-value store with a Redis-like
// `set(…, "NX")`, a local-first database with a Prisma-like API); invalid cases are the real clients (ioredis,
// node-redis, a generated Prisma client, TypeORM, the MongoDB driver) and receivers the checker cannot settle (`any`,
// an unresolved import, a wrapper class written in the project, a package named like the store), which keep the
// syntactic reading. The last block shows the same lookalikes reported when type-aware mode is not asked for.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RuleTester } from "@typescript-eslint/rule-tester";
import lockTtl from "../../rules/require-lock-ttl.js";
import staleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

const project = fileURLToPath(new URL("./project/", import.meta.url));
const filename = join(project, "file.ts");

/** Stand-ins for packages: small declaration files, written before the project service reads them. */
const packages: Record<string, string> = {
  // An in-process key-value store (one process, nothing to outlive): `set` takes a Redis-like NX mode.
  "memo-store": `export declare class MemoStore {
  set(key: string, value: string, mode?: "NX" | "XX"): Promise<"OK" | null>;
  setnx(key: string, value: string): Promise<0 | 1>;
  del(key: string): Promise<number>;
}
export declare function openStore(): MemoStore;`,
  // A local-first database in the browser with a Prisma-shaped API and Mongo-shaped collections.
  "offline-db": `export interface Where { [field: string]: unknown }
export interface Table<T> {
  updateMany(args: { where: Where; data: Partial<T> }): Promise<{ count: number }>;
}
export interface Collection<T> {
  updateOne(filter: Where, update: { $set: Partial<T> }): Promise<{ modifiedCount: number }>;
}
export declare class OfflineDb {
  jobs: Table<{ id: string; status: string }>;
  collection<T>(name: string): Collection<T>;
}`,
  // A generated Prisma client, as \`prisma generate\` writes it into node_modules/.prisma/client.
  ".prisma/client": `export interface JobDelegate {
  updateMany(args: { where: object; data: object }): Promise<{ count: number }>;
}
export declare class PrismaClient {
  job: JobDelegate;
}`,
  "@prisma/client": `export * from ".prisma/client";`,
  // A package named like the store: it may wrap a real client, so it never silences.
  "@acme/redis-wrapper": `export declare class RedisWrapper {
  set(key: string, value: string, mode: "NX"): Promise<"OK" | null>;
}`,
};
for (const [name, types] of Object.entries(packages)) {
  const dir = join(project, "node_modules", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", types: "./index.d.ts" }));
  writeFileSync(join(dir, "index.d.ts"), `${types}\n`);
}

const typed = new RuleTester({
  languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: project } },
  settings: { locks: { typeAware: true } },
});

/** A lock with no expiry; `output` is the code after the suggested fix (an expiry of 30 s in the same command). */
const noTtl = (line: number, column: number, command: string, key: string, output: string) => ({
  messageId: "missingTtl" as const,
  line,
  column,
  data: { command, key },
  suggestions: [{ messageId: "addTtl" as const, output }],
});
/** An invalid type-aware case of require-lock-ttl; the suggestion's output defaults to `withPx(code)`. */
const ttlCase = (code: string, line: number, column: number, command: string, key: string, output = withPx(code)) => ({
  code,
  filename,
  errors: [noTtl(line, column, command, key, output)],
});
/** The code with `"NX")` given an expiry the way the ioredis suggestion writes it. */
const withPx = (code: string) => code.replace(/, "NX"\)/, ', "PX", 30_000, "NX")');
const noRecovery = (line: number, column: number, model: string, value: string) => ({
  messageId: "missingRecovery" as const,
  line,
  column,
  data: { model, field: "status", value, claimLine: String(line) },
});

// ---- Redis-shaped calls -------------------------------------------------------------------------------------
const memoSetNx = `import { MemoStore } from "memo-store";
const store = new MemoStore();
export async function lockJob(id: string) {
  return store.set(\`lock:\${id}\`, "1", "NX");
}`;
const memoSetnx = `import { MemoStore } from "memo-store";
export class JobLocks {
  constructor(private readonly locks: MemoStore) {}
  tryLock(jobId: string) {
    return this.locks.setnx(\`jobs:\${jobId}:lock\`, "1");
  }
}`;
const memoWithLock = `import { openStore } from "memo-store";
const store = openStore();
export async function withLock(id: string, work: () => Promise<void>) {
  const lockKey = \`lock:\${id}\`;
  if ((await store.set(lockKey, "1", "NX")) !== "OK") return;
  try { await work(); } finally { await store.del(lockKey); }
}`;
const memoOrMap = `import { MemoStore } from "memo-store";
export async function lockJob(store: MemoStore | Map<string, string>, id: string) {
  if (store instanceof Map) return store.set(\`lock:\${id}\`, "1");
  return store.set(\`lock:\${id}\`, "1", "NX");
}`;

// ---- Prisma- and Mongo-shaped calls -----------------------------------------------------------------------------
const offlineClaim = `import { OfflineDb } from "offline-db";
const db = new OfflineDb();
export async function startSync(id: string) {
  await db.jobs.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`;
const offlineMongoClaim = `import { OfflineDb } from "offline-db";
export async function startSync(db: OfflineDb, id: string) {
  await db.collection<{ status: string }>("jobs").updateOne({ _id: id, status: { $ne: "RUNNING" } }, { $set: { status: "RUNNING" } });
}`;

typed.run("require-lock-ttl, type-aware", lockTtl, {
  valid: [
    { code: memoSetNx, filename },
    { code: memoSetnx, filename },
    { code: memoOrMap, filename },
    // the store's type inferred from the package's factory, used in a lock-named helper and released in finally
    { code: memoWithLock, filename },
  ],
  invalid: [
    // ioredis, resolved from the project's node_modules
    ttlCase(
      `import { Redis } from "ioredis";
const redis = new Redis();
export async function acquire(id: string, token: string) {
  return redis.set(\`lock:\${id}\`, token, "NX");
}`,
      4,
      16,
      "SET … NX",
      '"lock:*"',
    ),
    // node-redis v5 client (createClient from @redis/client)
    ttlCase(
      `import { createClient } from "@redis/client";
const client = createClient();
export async function acquire(id: string) {
  return client.set(\`lock:\${id}\`, "1", { NX: true });
}`,
      4,
      17,
      "SET … NX",
      '"lock:*"',
      `import { createClient } from "@redis/client";
const client = createClient();
export async function acquire(id: string) {
  return client.set(\`lock:\${id}\`, "1", { NX: true, PX: 30_000 });
}`,
    ),
    // ioredis inside a class, typed by an import type
    ttlCase(
      `import type { Redis } from "ioredis";
export class Locks {
  constructor(private readonly redis: Redis) {}
  take(id: string) { return this.redis.setnx(\`job:\${id}:lock\`, "1"); }
}`,
      4,
      40,
      "SETNX",
      '"job:*:lock"',
      `import type { Redis } from "ioredis";
export class Locks {
  constructor(private readonly redis: Redis) {}
  take(id: string) { return this.redis.set(\`job:\${id}:lock\`, "1", "PX", 30_000, "NX"); }
}`,
    ),
    // a union with a real client: confirmed
    ttlCase(
      `import { Redis } from "ioredis";
import { MemoStore } from "memo-store";
export async function acquire(store: Redis | MemoStore, id: string) {
  return store.set(\`lock:\${id}\`, "1", "NX");
}`,
      4,
      16,
      "SET … NX",
      '"lock:*"',
    ),
    // any: nothing is known, the syntactic reading stands
    ttlCase(
      `declare const redis: any;
export async function acquire(id: string) {
  return redis.set(\`lock:\${id}\`, "1", "NX");
}`,
      3,
      16,
      "SET … NX",
      '"lock:*"',
    ),
    // an import the project cannot resolve is an error type: the syntactic reading stands
    ttlCase(
      `import { Redis } from "not-installed-redis-client";
const redis = new Redis();
export async function acquire(id: string) {
  return redis.set(\`lock:\${id}\`, "1", "NX");
}`,
      4,
      16,
      "SET … NX",
      '"lock:*"',
    ),
    // a wrapper class written in the project may forward to a client: kept
    ttlCase(
      `export class Cache {
  async set(key: string, value: string, mode: "NX"): Promise<unknown> { return [key, value, mode]; }
}
const cache = new Cache();
export async function acquire(id: string) {
  return cache.set(\`lock:\${id}\`, "1", "NX");
}`,
      6,
      16,
      "SET … NX",
      '"lock:*"',
    ),
    // a package named like the store (it may wrap one): kept
    ttlCase(
      `import { RedisWrapper } from "@acme/redis-wrapper";
declare const redis: RedisWrapper;
export async function acquire(id: string) {
  return redis.set(\`lock:\${id}\`, "1", "NX");
}`,
      4,
      16,
      "SET … NX",
      '"lock:*"',
    ),
    // a type parameter bounded by a real client
    ttlCase(
      `import type { Redis } from "ioredis";
export async function acquire<C extends Redis>(client: C, id: string) {
  return client.set(\`lock:\${id}\`, "1", "NX");
}`,
      3,
      17,
      "SET … NX",
      '"lock:*"',
    ),
  ],
});

typed.run("require-stale-recovery, type-aware", staleRecovery, {
  valid: [
    { code: offlineClaim, filename },
    { code: offlineMongoClaim, filename },
  ],
  invalid: [
    {
      // a generated Prisma client
      code: `import { PrismaClient } from "@prisma/client";
const prisma = new PrismaClient();
export async function start(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
      filename,
      errors: [noRecovery(4, 9, "job", "RUNNING")],
    },
    {
      // the MongoDB driver
      code: `import type { Collection } from "mongodb";
export async function start(jobs: Collection<{ status: string }>, id: string) {
  await jobs.updateOne({ _id: id as never, status: { $ne: "RUNNING" } }, { $set: { status: "RUNNING" } });
}`,
      filename,
      errors: [noRecovery(3, 9, "jobs", "RUNNING")],
    },
    {
      // a TypeORM repository
      code: `import { Not, type Repository } from "typeorm";
declare class Job { id: string; status: string }
export async function start(jobs: Repository<Job>, id: string) {
  await jobs.update({ id, status: Not("RUNNING") }, { status: "RUNNING" });
}`,
      filename,
      errors: [noRecovery(4, 9, "Job", "RUNNING")],
    },
    {
      // a Prisma-shaped object typed in the project (a test double, a generated client in src/): kept
      code: `interface Delegate { updateMany(args: object): Promise<{ count: number }> }
declare const prisma: { job: Delegate };
export async function start(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
}`,
      filename,
      errors: [noRecovery(4, 9, "job", "RUNNING")],
    },
  ],
});

// Without type-aware mode the same lookalikes are reported: `recommended` reads syntax only, with or without types.
ruleTester.run("require-lock-ttl, syntactic", lockTtl, {
  valid: [],
  invalid: [
    { code: memoSetNx, errors: [noTtl(4, 16, "SET … NX", '"lock:*"', withPx(memoSetNx))] },
    { code: memoWithLock, errors: [noTtl(5, 20, "SET … NX", '"lock:*"', withPx(memoWithLock))] },
    { code: memoOrMap, errors: [noTtl(4, 16, "SET … NX", '"lock:*"', withPx(memoOrMap))] },
    {
      code: memoSetnx,
      errors: [
        noTtl(
          5,
          23,
          "SETNX",
          '"jobs:*:lock"',
          memoSetnx.replace('setnx(`jobs:${jobId}:lock`, "1")', 'set(`jobs:${jobId}:lock`, "1", "PX", 30_000, "NX")'),
        ),
      ],
    },
  ],
});
const withTypesNotAsked = new RuleTester({
  languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: project } },
});
withTypesNotAsked.run("require-stale-recovery, types present but typeAware not set", staleRecovery, {
  valid: [],
  invalid: [
    { code: offlineClaim, filename, errors: [noRecovery(4, 9, "jobs", "RUNNING")] },
    { code: offlineMongoClaim, filename, errors: [noRecovery(3, 9, "jobs", "RUNNING")] },
  ],
});
const typeAwareWithoutTypes = new RuleTester({ settings: { locks: { typeAware: true } } });
typeAwareWithoutTypes.run("require-lock-ttl, typeAware set but no type information", lockTtl, {
  valid: [],
  invalid: [{ code: memoSetNx, errors: [noTtl(4, 16, "SET … NX", '"lock:*"', withPx(memoSetNx))] }],
});
