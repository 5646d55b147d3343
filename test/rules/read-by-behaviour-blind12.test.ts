// Real code of blind-12's first sight (issue 35), read by what it does, in our words:
// - a pid lock file read back through the module's own reader, handed the caller's path (`readOwner(file)`), and its
//   owner judged alive by a function the module imports (`isAlive(owner.pid)`): the removal after that test is a
//   break, made apart from its check, and the lock has a way back from a dead holder;
// - a module of session advisory lock helpers on a pool (a try-lock, a blocking lock, a probe): each unlock answers
//   the lock of its own function, reported once, not once per lock of the module;
// - a release filtered on the owner column among holders known at run time (`lockedBy: { in: names }`): owner-checked;
// - a single-flight guard set before a promise chain and cleared only in its `.then` callback: a rejection leaves it
//   set; a `.finally`, a `.catch` or a second `.then` callback that clears it too is a release on every outcome;
// - a SETNX whose separate EXPIRE runs only on the success path: a `return` before it leaves the key set for good,
//   no crash needed, said in the acquire's one finding (a log line between the acquire and its test does not hide
//   where the lock is held);
// - a request key inserted under a unique key, its duplicate turning the caller away as "in progress", marked finished
//   when the work succeeds and deleted by that key when it fails: a lock row whatever its table is called (a
//   webhook's seen-event marker, never written again, is not); a delete that the same `catch`
//   follows with a new insert replaces the row and undoes nothing; a cleanup of rows inserted `locked: true` that
//   deletes only `locked: false` ones recovers no holder;
// - a flag on a module-level object tested, awaited past and then set, its work deferred to a function whose
//   `finally` clears it: the test-then-set races; the deferred work's paths are not this function's;
// - a guard cleared after `await Promise.all(jobs.map((j) => this.run(j)))` where `run` catches its own failure:
//   the batch cannot reject past the release (nor can `Promise.allSettled`);
// - a route disabled by a `return` at its top, its old body kept below: code that never runs takes no lock, while a
//   function declared below a `return` is hoisted and runs when called.
import conditionalRecovery from "../../rules/conditional-recovery.js";
import atomicClaim from "../../rules/atomic-claim.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import releaseInFinally from "../../rules/release-in-finally.js";
import requireLockTtl from "../../rules/require-lock-ttl.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A daemon's single-instance file: made exclusively, and broken when the pid written in it no longer runs. */
const PID_BREAK_THROUGH_READER = `import fs from "node:fs";
import { isAlive } from "./proc";
function readOwner(lockFile: string): { pid: number } | undefined {
  try {
    return JSON.parse(fs.readFileSync(lockFile, "utf8"));
  } catch {
    return undefined;
  }
}
export function holdDaemonLock(lockFile: string) {
  for (let tries = 0; tries < 2; tries++) {
    try {
      fs.closeSync(fs.openSync(lockFile, "wx"));
      fs.writeFileSync(lockFile, JSON.stringify({ pid: process.pid }));
      return () => fs.unlinkSync(lockFile);
    } catch {
      const owner = readOwner(lockFile);
      if (owner && isAlive(owner.pid)) throw new Error("daemon already running");
      fs.unlinkSync(lockFile);
    }
  }
  throw new Error("could not take the daemon lock");
}
`;

ruleTester.run("conditional-recovery", conditionalRecovery, {
  assertionOptions: { requireData: true },
  valid: [
    {
      // the same reader, but the removal follows no test of the owner: the holder's own undo, not a break
      name: "a file read through the module's reader and removed without judging its owner",
      code: `import fs from "node:fs";
function readOwner(lockFile: string) {
  return JSON.parse(fs.readFileSync(lockFile, "utf8"));
}
export function report(lockFile: string) {
  const owner = readOwner(lockFile);
  console.log(owner);
}
export function take(lockFile: string) {
  fs.closeSync(fs.openSync(lockFile, "wx"));
  return () => fs.unlinkSync(lockFile);
}`,
    },
  ],
  invalid: [
    {
      name: "the owner read through a reader handed the path, judged alive by an imported check, then unlinked",
      code: PID_BREAK_THROUGH_READER,
      errors: [
        {
          messageId: "lockFileBreakRace",
          line: 19,
          data: {
            operation: "`unlinkSync`",
            path: "`lockFile`",
            basis: "whether the process it names still runs",
            read: "call of `readOwner` (its `readFileSync`, line 5)",
            readLine: "17",
          },
        },
      ],
    },
  ],
});

ruleTester.run("require-stale-recovery", requireStaleRecovery, {
  valid: [
    { name: "a pid lock broken once its owner is judged dead has a way back", code: PID_BREAK_THROUGH_READER },
    {
      name: "a lock row taken below the `return` that disables the route: it never runs",
      code: `const PurgeLock = require("../models/purgeLock");
exports.purge = async (req, res) => {
  return res.status(503).json({ message: "purging is paused" });
  try {
    await PurgeLock.create({ name: "purge_lock" });
  } catch (error) {
    if (error.code === 11000) return res.status(409).end();
    throw error;
  }
  await purgeEverything();
};`,
    },
  ],
  invalid: [
    {
      name: "a function declared below a `return` is hoisted: its claim runs when it is called",
      code: `export async function start(req, res) {
  await claim(req.params.id);
  return res.status(202).end();
  async function claim(id) {
    await prisma.export.updateMany({ where: { id, status: "queued" }, data: { status: "running" } });
  }
}`,
      errors: [{ messageId: "missingRecovery", line: 5, data: { model: "export", field: "status", value: "running" } }],
    },
  ],
});

/** Two advisory lock helpers over Prisma's pool, each unlocking in its own `finally`. */
const TWO_POOLED_HELPERS = `import { prisma } from "./db";
export async function whenFree<T>(id: number, fn: () => Promise<T>) {
  const [row] = await prisma.$queryRaw<{ ok: boolean }[]>\`SELECT pg_try_advisory_lock(\${id}) AS ok\`;
  if (!row?.ok) return null;
  try {
    return await fn();
  } finally {
    await prisma.$queryRaw\`SELECT pg_advisory_unlock(\${id})\`;
  }
}
export async function inTurn<T>(id: number, fn: () => Promise<T>) {
  await prisma.$queryRaw\`SELECT pg_advisory_lock(\${id})\`;
  try {
    return await fn();
  } finally {
    await prisma.$queryRaw\`SELECT pg_advisory_unlock(\${id})\`;
  }
}
`;

ruleTester.run("release-in-finally", releaseInFinally, {
  valid: [],
  invalid: [
    {
      name: "two pooled lock helpers: each unlock is reported once, against its own function's lock",
      code: TWO_POOLED_HELPERS,
      errors: [
        { messageId: "advisoryOnPool", line: 3, data: { client: "prisma" } },
        { messageId: "advisoryUnlockOnPool", line: 8, data: { client: "prisma", acquireLine: "3" } },
        { messageId: "advisoryOnPool", line: 12, data: { client: "prisma" } },
        { messageId: "advisoryUnlockOnPool", line: 16, data: { client: "prisma", acquireLine: "12" } },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release", ownerCheckedRelease, {
  valid: [
    {
      name: "an editing lock released by the owner column among this user's names",
      code: `import { prisma } from "./db";
export async function takeEdit(docId: string, by: string) {
  await prisma.editLock.deleteMany({ where: { docId, expiresAt: { lt: new Date() } } });
  try {
    await prisma.editLock.create({ data: { docId, lockedBy: by, expiresAt: new Date(Date.now() + 600_000) } });
    return true;
  } catch (e) {
    if (e.code === "P2002") return false;
    throw e;
  }
}
export async function dropEdits(docId: string, by: string, aliases: string[]) {
  await prisma.editLock.deleteMany({ where: { docId, lockedBy: { in: [by, ...aliases] } } });
}`,
    },
  ],
  invalid: [],
});

/** A client's session refresher: one refresh in flight at a time; `clearing` is how the chain ends. */
const REFRESHER = (clearing: string) => `export class SessionRefresher {
  private inFlight = false;
  private current: Promise<void> | null = null;
  refresh(fetchToken: () => Promise<string>, store: (token: string) => void) {
    if (this.inFlight && this.current) return this.current;
    this.inFlight = true;
    this.current = fetchToken()${clearing};
    return this.current;
  }
}`;

ruleTester.run("release-in-finally (a guard cleared in a promise chain)", releaseInFinally, {
  valid: [
    {
      name: "cleared in .finally: every outcome",
      code: REFRESHER(".then((t) => store(t)).finally(() => { this.inFlight = false; })"),
    },
    {
      name: "cleared in .then and in .catch",
      code: REFRESHER(
        ".then((t) => { store(t); this.inFlight = false; }).catch((e) => { this.inFlight = false; throw e; })",
      ),
    },
    {
      name: "cleared in both callbacks of .then",
      code: REFRESHER(".then((t) => { store(t); this.inFlight = false; }, () => { this.inFlight = false; })"),
    },
  ],
  invalid: [
    {
      name: "cleared only when the refresh fulfils",
      code: REFRESHER(".then((t) => {\n      store(t);\n      this.inFlight = false;\n    })"),
      errors: [{ messageId: "clearedOnFulfilOnly", line: 6, data: { name: "this.inFlight", releaseLine: "9" } }],
    },
  ],
});

/** A seat hold for a concert: SETNX, the booking, then PEXPIRE; `leave` is what the function does when booking fails. */
const SEAT_HOLD = (leave: string) => `import { promisify } from "node:util";
export async function holdSeat(redis, seatId: string) {
  const setnx = promisify(redis.setnx).bind(redis);
  const pexpire = promisify(redis.pexpire).bind(redis);
  const del = promisify(redis.del).bind(redis);
  const key = \`seat:\${seatId}\`;
  const got = await setnx(key, Date.now());
  console.info("seat hold", key, got);
  if (got === 1) {
    const booked = await book(seatId);
    if (booked) {
      await pexpire(key, 5000);
      return key;
    }
    ${leave}
  }
  return undefined;
}`;

ruleTester.run("require-lock-ttl (an expiry on one path only)", requireLockTtl, {
  valid: [],
  invalid: [
    {
      name: "a return before the PEXPIRE leaves the seat held for good",
      code: SEAT_HOLD("return null;"),
      errors: [
        {
          messageId: "expireSkipped",
          line: 7,
          data: {
            command: "SETNX",
            key: '"seat:*"',
            expireCommand: "PEXPIRE",
            expireLine: "12",
            exit: "return",
            exitLine: "15",
            unit: "PX",
            ttl: "5000",
          },
        },
      ],
    },
    {
      name: "the key deleted before leaving: only the separate expiry's crash window",
      code: SEAT_HOLD("await del(key);\n    return null;"),
      errors: [{ messageId: "separateExpire", line: 7 }],
    },
    {
      name: "a finally that deletes the key runs on the way out",
      code: SEAT_HOLD("try {\n      return null;\n    } finally {\n      await del(key);\n    }"),
      errors: [{ messageId: "separateExpire", line: 7 }],
    },
  ],
});

/** An order request made at most once per client key: the key row is the "in progress" mark while the order runs. */
const ORDER_ONCE = (onFailure: string) => `import { prisma } from "./db";
export async function placeOnce(clientKey: string, order: Order) {
  try {
    await prisma.requestKey.create({ data: { clientKey, result: null } });
  } catch (e) {
    if (e.code === "P2002") throw new Error("this order is already being placed");
    throw e;
  }
  try {
    const placed = await submit(order);
    await prisma.requestKey.update({ where: { clientKey }, data: { result: placed.id } });
    return placed;
  } catch (e) {
    ${onFailure}
    throw e;
  }
}`;

ruleTester.run("require-stale-recovery (a row undone when the work fails)", requireStaleRecovery, {
  valid: [
    {
      name: "deleted and inserted again in the catch: a replacement, not an undo",
      code: ORDER_ONCE(
        "await prisma.requestKey.deleteMany({ where: { clientKey } });\n    await prisma.requestKey.create({ data: { clientKey, result: 'failed' } });",
      ),
    },
    {
      name: "never deleted: an idempotency record, not a hold",
      code: ORDER_ONCE("console.error(e);"),
    },
    {
      // at-most-once by design: the row is the mark that the event was seen, never marked finished
      name: "a webhook's seen-event marker, deleted when handling fails but never written again",
      code: `import { prisma } from "./db";
export async function onEvent(event: { id: string; type: string }) {
  try {
    await prisma.seenEvent.create({ data: { id: event.id, type: event.type } });
  } catch {
    return { received: true, duplicate: true };
  }
  try {
    await handle(event);
  } catch (error) {
    await prisma.seenEvent.delete({ where: { id: event.id } });
    throw error;
  }
  return { received: true };
}`,
    },
  ],
  invalid: [
    {
      name: "the key row deleted by its key when the order fails: a crash leaves it 'in progress' for good",
      code: ORDER_ONCE("await prisma.requestKey.deleteMany({ where: { clientKey } });"),
      errors: [{ messageId: "missingExpiry", line: 4, data: { model: "requestKey" } }],
    },
    {
      name: "a cleanup of finished rows (locked: false) frees no holder",
      code: `import { prisma } from "./db";
export async function runOnce(key: string, work: () => Promise<unknown>) {
  try {
    await prisma.runMark.create({ data: { key, locked: true } });
  } catch (e) {
    if (e.code === "P2002") throw new Error("already running");
    throw e;
  }
  try {
    const out = await work();
    await prisma.runMark.update({ where: { key }, data: { locked: false, out } });
    return out;
  } catch (e) {
    await prisma.runMark.delete({ where: { key } });
    throw e;
  }
}
export async function pruneMarks(days: number) {
  const before = new Date(Date.now() - days * 86_400_000);
  await prisma.runMark.deleteMany({ where: { createdAt: { lt: before }, locked: false } });
}`,
      errors: [{ messageId: "missingExpiry", line: 4, data: { model: "runMark" } }],
    },
  ],
});

/** An admin's bulk re-index: one at a time per process, run deferred; `start` is the order of the test and the set. */
const REINDEX = (start: string) => `const reindex = { running: false, done: 0 };
async function runReindex(ids: string[]) {
  try {
    for (const id of ids) {
      await reindexOne(id);
      reindex.done++;
    }
  } finally {
    reindex.running = false;
  }
}
export async function startReindex(userId: string) {
  if (reindex.running) throw new Error("a re-index is already running");
${start}
  await saveStatus({ running: true, by: userId });
  setImmediate(() => runReindex(ids));
  return ids.length;
}`;

ruleTester.run("atomic-claim (a guard handed to deferred work)", atomicClaim, {
  valid: [
    { name: "set right after the test", code: REINDEX("  reindex.running = true;\n  const ids = await listIds();") },
  ],
  invalid: [
    {
      name: "tested, awaited past, then set: two admins both start",
      code: REINDEX("  const ids = await listIds();\n  reindex.running = true;"),
      errors: [
        {
          messageId: "flagSetAfterAwait",
          line: 15,
          data: { name: "reindex.running", checkLine: "13", waitLine: "14" },
        },
      ],
    },
  ],
});

ruleTester.run("release-in-finally (a guard handed to deferred work)", releaseInFinally, {
  valid: [
    {
      name: "the deferred work clears it in its own finally: this function's paths say nothing of it",
      code: REINDEX("  const ids = await listIds();\n  reindex.running = true;"),
    },
  ],
  invalid: [],
});

/** A thumbnail queue drained two at a time; `runOne` is each job's function, `gather` how the batch is awaited. */
const THUMBNAILS = (runOne: string, gather: string) => `export class ThumbnailQueue {
  private draining = false;
  private queue: string[] = [];
  async drain() {
    if (this.draining) return;
    this.draining = true;
    const batch = this.queue.splice(0, 2);
    await ${gather};
    this.draining = false;
  }
  private async runOne(path: string) {
${runOne}
  }
}`;

const CATCHES = "    try {\n      await render(path);\n    } catch (error) {\n      console.error(path, error);\n    }";

ruleTester.run("release-in-finally (a batch that cannot reject)", releaseInFinally, {
  valid: [
    {
      name: "Promise.all over jobs that catch their own failure",
      code: THUMBNAILS(CATCHES, "Promise.all(batch.map((p) => this.runOne(p)))"),
    },
    {
      name: "Promise.allSettled never rejects",
      code: THUMBNAILS("    await render(path);", "Promise.allSettled(batch.map((p) => this.runOne(p)))"),
    },
    {
      name: "an array of calls that catch",
      code: THUMBNAILS(CATCHES, "Promise.all([this.runOne(batch[0]), this.runOne(batch[1])])"),
    },
  ],
  invalid: [
    {
      name: "Promise.all over jobs that may reject: the guard stays set",
      code: THUMBNAILS("    await render(path);", "Promise.all(batch.map((p) => this.runOne(p)))"),
      errors: [
        {
          messageId: "missedOnRejection",
          line: 6,
          suggestions: [
            {
              messageId: "moveToFinally",
              output: `export class ThumbnailQueue {
  private draining = false;
  private queue: string[] = [];
  async drain() {
    if (this.draining) return;
    this.draining = true;
    try {
      const batch = this.queue.splice(0, 2);
      await Promise.all(batch.map((p) => this.runOne(p)));
    } finally {
      this.draining = false;
    }
  }
  private async runOne(path: string) {
    await render(path);
  }
}`,
            },
          ],
        },
      ],
    },
  ],
});
