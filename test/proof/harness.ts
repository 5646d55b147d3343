// What the proof scenarios share: the servers the global setup started, a fresh database per test, worker
// processes driven by real signals, fake upstream APIs, and the linter's verdict on the very programs that run.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { ESLint, Linter } from "eslint";
import pg from "pg";
import { Redis } from "ioredis";
import { afterEach, expect, inject } from "vitest";
import plugin from "../../src/index.js";

export const proofDir = fileURLToPath(new URL("../../proof/", import.meta.url));

declare module "vitest" {
  export interface ProvidedContext {
    proofServices: { postgres?: string; redis?: string; unavailable?: string };
  }
}

/**
 * The servers' URLs. When one that `needs` names could not start, says so loudly: the scenarios that need it
 * are skipped (the lint verdicts, which need no server, still run).
 */
export function services(...needs: ("postgres" | "redis")[]): { postgres?: string; redis?: string } {
  const found = inject("proofServices");
  if (needs.some((need) => !found[need])) {
    console.warn(
      `\n!!! proof scenarios SKIPPED, a server is missing: ${found.unavailable}\n` +
        "!!! install PostgreSQL (initdb, pg_ctl) and redis-server, or run .ci/run, which requires them.\n",
    );
  }
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// Databases and keys

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let databases = 0;

/**
 * Every connection the harness opens answers `error`: the server ends idle ones when a database is dropped WITH
 * (FORCE) or the run's PostgreSQL stops (57P01, "terminating connection due to administrator command"), and a pg
 * client or pool without a listener turns that into an unhandled error that fails the whole run. Expected then; any
 * other error still fails the test that is running (`connectionErrors`).
 */
const connectionErrors: Error[] = [];
function watched<T extends pg.Pool | pg.Client>(connection: T): T {
  const listener = (error: Error & { code?: string }) => {
    if (error.code !== "57P01") connectionErrors.push(error);
  };
  (connection as { on(event: "error", listener: (error: Error) => void): unknown }).on("error", listener);
  return connection;
}
afterEach(() => {
  const errors = connectionErrors.splice(0);
  if (errors.length > 0) throw new Error(`a database connection failed: ${errors.map((e) => e.message).join("; ")}`);
});

/** Runs `work` on a new client of `url`, ended whatever `work` does. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = watched(new pg.Client({ connectionString: url }));
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database with the scenario's schema; dropped after the test, once its pool is ended (the workers that used
 * it are killed first: cleanups run in reverse order, and the database is made before any worker starts).
 */
export async function freshDatabase(serverUrl: string, schemaFile: string): Promise<{ url: string; db: pg.Pool }> {
  const name = `proof_${process.pid}_${++databases}`;
  await withClient(serverUrl, (admin) => admin.query(`CREATE DATABASE ${name}`));
  const url = serverUrl.replace(/\/[^/]*$/, `/${name}`);
  const db = watched(new pg.Pool({ connectionString: url, max: 2 }));
  cleanups.push(async () => {
    await db.end();
    await withClient(serverUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  await db.query(readFileSync(`${proofDir}${schemaFile}`, "utf8"));
  return { url, db };
}

/**
 * A Redis logical database of its own (1-15), flushed before and after the test. Test files run in parallel
 * processes, so the index comes from a counter in database 0, never from anything process-local.
 */
export async function freshRedis(serverUrl: string): Promise<{ url: string; redis: Redis }> {
  const counter = new Redis(`${serverUrl}/0`, { maxRetriesPerRequest: 1 }).on("error", () => {});
  const index = ((await counter.incr("proof:next-database").finally(() => counter.disconnect())) % 15) + 1;
  const url = `${serverUrl}/${index}`;
  // A client's connection errors are its commands' failures, which the test sees; the event itself is not a test's.
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 }).on("error", () => {});
  await redis.connect();
  await redis.flushdb();
  cleanups.push(async () => {
    await redis.flushdb();
    redis.disconnect();
  });
  return { url, redis };
}

// ---------------------------------------------------------------------------------------------------------------
// Worker processes

export interface Event {
  event: "ready" | "stopped" | "result" | "error";
  value?: unknown;
  message?: string;
  before?: string;
  pid?: number;
}

/** A worker process running one proof program through proof/worker.js, read line by line. */
export class Worker {
  readonly child: ChildProcess;
  readonly events: Event[] = [];
  private waiters: (() => void)[] = [];
  private stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(program: string, args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [`${proofDir}worker.js`, program, ...args], {
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let buffer = "";
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as Event);
      }
      this.wake();
    });
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      this.child.once("exit", (code, signal) => {
        this.wake();
        resolve({ code, signal });
      }),
    );
    cleanups.push(() => this.kill());
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Waits for the next event of this kind after the ones already taken. */
  async next(kind: Event["event"], timeoutMs = 20_000): Promise<Event> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.events.findIndex((e) => e.event === kind || (kind === "result" && e.event === "error"));
      if (index >= 0) {
        const [found] = this.events.splice(0, index + 1).slice(-1);
        if (found!.event === "error" && kind !== "error") throw new Error(`worker failed: ${found!.message}`);
        if (found!.event === "stopped") await this.untilStopped(deadline);
        return found!;
      }
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(
          `worker exited (${this.child.exitCode ?? this.child.signalCode}) before "${kind}"; stderr: ${this.stderr}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`no "${kind}" from the worker within ${timeoutMs} ms; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  /**
   * The worker says "stopped" just before it sends itself SIGSTOP; on a loaded machine it can be descheduled
   * between the two, and a SIGCONT sent in that gap is lost (the stop then lands after it, for good). So a
   * "stopped" event counts only once the kernel shows the process stopped (state T in /proc/<pid>/stat).
   */
  private async untilStopped(deadline: number): Promise<void> {
    for (;;) {
      let state: string | undefined;
      try {
        const stat = readFileSync(`/proc/${this.pid}/stat`, "utf8");
        state = stat.charAt(stat.lastIndexOf(")") + 2); // "pid (comm) S …", and comm may hold ") "
      } catch {
        return; // no /proc (not Linux) or the process is gone: the next wait reports it
      }
      if (state === "T" || state === "t") return;
      if (Date.now() > deadline) throw new Error(`the worker said "stopped" but is still running (state ${state})`);
      await sleep(5);
    }
  }

  /** The value of the next call's result (throws when the call threw). */
  async result(timeoutMs?: number): Promise<unknown> {
    return (await this.next("result", timeoutMs)).value;
  }

  /** The message of the next call's error (throws when the call returned). */
  async error(timeoutMs?: number): Promise<string> {
    const found = await this.next("error", timeoutMs);
    if (found.event !== "error") throw new Error(`expected an error, got ${JSON.stringify(found)}`);
    return found.message!;
  }

  /** In session mode: one call on stdin. */
  call(name: string, ...args: unknown[]): void {
    this.child.stdin!.write(`${JSON.stringify({ call: name, args })}\n`);
  }

  /** In session mode: one call, and its result. */
  async ask(name: string, ...args: unknown[]): Promise<unknown> {
    this.call(name, ...args);
    return this.result();
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGKILL, and wait until the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGKILL");
    await this.exited;
  }
}

/** Starts `program`'s `exportName(...args)` in a new worker process (one call, then exit). */
export function start(program: string, exportName: string, args: unknown[], env: Record<string, string>): Worker {
  return new Worker(program, [exportName, ...args.map((a) => JSON.stringify(a))], env);
}

/** A long-running process of `program` (a service, a scheduler) that takes calls one by one, ready for them. */
export async function session(program: string, env: Record<string, string>): Promise<Worker> {
  const worker = new Worker(program, [], env);
  await worker.next("ready");
  return worker;
}

/** Runs one call to completion in a new process and returns its result. */
export async function runOnce(
  program: string,
  exportName: string,
  args: unknown[],
  env: Record<string, string>,
): Promise<unknown> {
  const worker = start(program, exportName, args, env);
  const value = await worker.result();
  await worker.exited;
  return value;
}

/**
 * A gate a fake API holds a request at until the test opens it: the scenario moves on when it is where it must be,
 * not after a fixed time that a busy machine can eat (a render "long enough" for the other worker to act).
 */
export class Gate {
  private opened = false;
  private readonly waiters: (() => void)[] = [];

  open(): void {
    this.opened = true;
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  wait(): Promise<void> {
    return this.opened ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** Until `column` of the row is older than `age` by the database's own clock (with 200 ms to spare). */
export async function untilOlder(db: pg.Pool, table: string, column: string, id: number, age: string): Promise<void> {
  await waitUntil(`${table} ${id}'s ${column} is older than ${age}`, async () => {
    const { rows } = await db.query(
      `SELECT ${column} < now() - $2::interval - interval '200 milliseconds' AS old FROM ${table} WHERE id = $1`,
      [id, age],
    );
    return rows[0]?.old === true;
  });
}

/** Polls until `check` returns a truthy value. */
export async function waitUntil<T>(what: string, check: () => Promise<T> | T, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Fake upstream APIs

/** An HTTP server on 127.0.0.1 answering with `handle`; closed after the test. Resolves to its URL. */
export async function fakeApi(
  handle: (body: string, request: IncomingMessage, response: ServerResponse) => Promise<void> | void,
): Promise<string> {
  const server: Server = createServer((request, response) => {
    let body = "";
    request
      .setEncoding("utf8")
      .on("data", (chunk: string) => (body += chunk))
      .on("end", () => {
        Promise.resolve(handle(body, request, response)).catch((error: unknown) => {
          response.statusCode = 500;
          response.end(String(error));
        });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("fake API has no port");
  return `http://127.0.0.1:${address.port}`;
}

// ---------------------------------------------------------------------------------------------------------------
// The linter's verdict on the same files

const eslint = new ESLint({
  cwd: proofDir,
  overrideConfigFile: true,
  overrideConfig: [plugin.configs.strict as never],
});

export interface Verdict {
  rule: string;
  question: string;
  line: number;
}

/** Every finding of configs.strict on a proof program, with the question its rule answers. */
export async function lint(program: string): Promise<Verdict[]> {
  const [result] = await eslint.lintFiles([`${proofDir}${program}.js`]);
  return result!.messages.map((m) => {
    const id = (m.ruleId ?? `fatal: ${m.message}`).replace(/^locks\//, "");
    const rule = plugin.rules[id as keyof typeof plugin.rules];
    return { rule: m.ruleId ?? `fatal: ${m.message}`, question: rule?.meta.docs.question ?? "?", line: m.line };
  });
}

/** The `// flagged: locks/<rule>` markers of a proof program: the findings it is written to produce. */
export function flaggedMarkers(program: string): Verdict[] {
  const out: Verdict[] = [];
  readFileSync(`${proofDir}${program}.js`, "utf8")
    .split("\n")
    .forEach((text, i) => {
      const m = /\/\/ flagged: locks\/([\w-]+)/.exec(text);
      if (m) {
        const rule = plugin.rules[m[1] as keyof typeof plugin.rules];
        out.push({ rule: `locks/${m[1]}`, question: rule?.meta.docs.question ?? "?", line: i + 1 });
      }
    });
  return out;
}

/**
 * Asserts the linter's verdict on a proof program: a flagged program gets exactly the findings its markers
 * name, all of them `rule` answering `question`; a fixed program gets none. Runtime tests call it first, so
 * each observed result is tied to the verdict on the very file that produced it.
 */
export async function expectVerdict(program: string, rule: string, question: string): Promise<void> {
  const verdict = await lint(program);
  if (program.endsWith("/fixed") || program.startsWith(`${SUGGESTED_DIR}/`)) {
    expect(verdict).toEqual([]);
    return;
  }
  expect(verdict).toEqual(flaggedMarkers(program));
  expect(verdict.length).toBeGreaterThan(0);
  for (const finding of verdict) expect(finding).toMatchObject({ rule: `locks/${rule}`, question });
}

// ---------------------------------------------------------------------------------------------------------------
// Suggestions, run

/** Where the programs a suggestion wrote are kept while the tests run (git-ignored, written afresh each run). */
const SUGGESTED_DIR = ".suggested";

/**
 * `scenario`'s flagged.js with `rule`'s suggestion `messageId` applied as an editor applies it (every fix of the
 * suggestion, nothing else but the rule's `// flagged:` markers, whose findings the edit answers), written where
 * worker.js runs it: proof/.suggested/<scenario>.js. Returns its program name, for start() and expectVerdict().
 */
export function suggestedProgram(scenario: string, rule: string, messageId: string): string {
  const code = readFileSync(`${proofDir}${scenario}/flagged.js`, "utf8");
  const messages = new Linter({ configType: "flat" }).verify(code, [plugin.configs.strict as never], {
    filename: `${scenario}/flagged.js`,
  });
  const found = messages.filter((m) => m.ruleId === `locks/${rule}`);
  expect(found.length).toBe(1);
  const suggestion = found[0]!.suggestions?.find((s) => s.messageId === messageId);
  if (!suggestion) throw new Error(`${scenario}/flagged.js: no ${messageId} suggestion from ${rule}`);
  let applied = code;
  for (const fix of [suggestion.fix].flat().sort((a, b) => b.range[0] - a.range[0]))
    applied = applied.slice(0, fix.range[0]) + fix.text + applied.slice(fix.range[1]);
  const program = `${SUGGESTED_DIR}/${scenario}`;
  mkdirSync(`${proofDir}${SUGGESTED_DIR}`, { recursive: true });
  writeFileSync(`${proofDir}${program}.js`, applied.replaceAll(` // flagged: locks/${rule}`, ""));
  return program;
}
