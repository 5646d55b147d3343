// Lock files (issue 35: blind-6 and blind-7 held nine lock files the model did not read): a path named like a lock,
// created exclusively or written after a check that turns the caller away, broken when judged stale, removed by its
// holder. Each case is written in our words.
import atomicClaim from "../../rules/atomic-claim.js";
import conditionalRecovery from "../../rules/conditional-recovery.js";
import ownerCheckedRelease from "../../rules/owner-checked-release.js";
import progressBasedStaleness from "../../rules/progress-based-staleness.js";
import requireStaleRecovery from "../../rules/require-stale-recovery.js";
import { ruleTester } from "../rule-tester.js";

/** A pid file created exclusively and removed only by its holder: nothing tells a dead holder's file from a live one. */
const PID_FILE = `import { openSync, closeSync, writeSync, unlinkSync } from "node:fs";
import { join } from "node:path";

const RUN_DIR = process.env.RUN_DIR ?? "/var/run/exporter";

function pidPathFor(name: string) {
  return join(RUN_DIR, \`\${name}.pid\`);
}

export function claimExport(name: string): boolean {
  const target = pidPathFor(name);
  try {
    const fd = openSync(target, "wx");
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch {
    return false;
  }
}

export function finishExport(name: string) {
  const target = pidPathFor(name);
  unlinkSync(target);
}`;

/** A lock file broken when its mtime is old, though nothing refreshes the mtime; the holder removes it by path. */
const MTIME_BREAK = `import { open, stat, unlink } from "fs/promises";

const GUARD = "/var/lock/nightly-report.lock";
const TOO_OLD_MS = 10 * 60 * 1000;

export async function runNightly(report: () => Promise<void>) {
  let handle;
  try {
    handle = await open(GUARD, "wx");
  } catch {
    const info = await stat(GUARD);
    if (Date.now() - info.mtimeMs < TOO_OLD_MS) return;
    await unlink(GUARD);
    handle = await open(GUARD, "wx");
  }
  try {
    await report();
  } finally {
    await handle.close();
    await unlink(GUARD);
  }
}`;

/** A lock file written after an existence check, never broken. */
const CHECKED_WRITE = `import * as fs from "fs";

const SYNC_LOCK = "./data/sync.lock";

export function startSync(run: () => void) {
  if (fs.existsSync(SYNC_LOCK)) {
    console.log("sync already running");
    return;
  }
  fs.writeFileSync(SYNC_LOCK, String(Date.now()));
  run();
  fs.unlinkSync(SYNC_LOCK);
}`;

/**
 * Lookalikes and the same lock done right: a settings file written when missing (no lock word, never removed); a lock
 * whose mtime a heartbeat refreshes and whose release compares the token it wrote; a lock directory made with
 * `recursive`.
 */
const DONE_RIGHT = `import * as fs from "fs";
import { open, stat, unlink, utimes, readFile } from "fs/promises";

const CONFIG = "./data/settings.json";
const GUARD = "/var/lock/nightly-report.lock";
const TOO_OLD_MS = 60 * 1000;

export function ensureConfig() {
  if (!fs.existsSync(CONFIG)) fs.writeFileSync(CONFIG, "{}");
}

export async function runNightly(report: () => Promise<void>) {
  const token = \`\${process.pid}:\${Math.random()}\`;
  let handle;
  try {
    handle = await open(GUARD, "wx");
  } catch {
    const info = await stat(GUARD);
    if (Date.now() - info.mtimeMs < TOO_OLD_MS) return;
    await unlink(GUARD);
    handle = await open(GUARD, "wx");
  }
  await handle.writeFile(token);
  const beat = setInterval(() => void utimes(GUARD, new Date(), new Date()), 15_000);
  try {
    await report();
  } finally {
    clearInterval(beat);
    await handle.close();
    const held = await readFile(GUARD, "utf8");
    if (held === token) await unlink(GUARD);
  }
}

export function ensureLockDir() {
  fs.mkdirSync("/var/lock/reports", { recursive: true });
}`;

/**
 * A lock file created with `writeFile(…, { flag: "wx" })` on the default export of `fs/promises`, broken when the time
 * written into it is old, through `fs.unlink` (a method Redis clients have too: here the file system's).
 */
const STORED_TIME_BREAK = `import fs from "fs/promises";

export class ReportLock {
  constructor(private readonly lockPath: string, private readonly staleMs = 120_000) {}

  async take(): Promise<boolean> {
    try {
      await fs.writeFile(this.lockPath, JSON.stringify({ at: Date.now() }), { flag: "wx" });
      return true;
    } catch {
      const held = JSON.parse(await fs.readFile(this.lockPath, "utf8"));
      if (Date.now() - held.at > this.staleMs) {
        await fs.unlink(this.lockPath);
        return this.take();
      }
      return false;
    }
  }

  async give(): Promise<void> {
    await fs.unlink(this.lockPath);
  }
}`;

/** A lock file nobody in this module removes: its release, and perhaps its break, are another module's. */
const NEVER_REMOVED_HERE = `import { openSync } from "node:fs";
export function takeBuildLock(dir: string) {
  return openSync(\`\${dir}/build.lock\`, "wx");
}`;

/** A break that renames the stale file aside before removing it: not read, so unknown, not unrecovered. */
const RENAMED_ASIDE = `import { open, rename, unlink } from "fs/promises";
const LOCK = "/var/lock/rotate.lock";
export async function rotate(work: () => Promise<void>) {
  try {
    await open(LOCK, "wx");
  } catch {
    const aside = \`\${LOCK}.\${process.pid}\`;
    await rename(LOCK, aside);
    await unlink(aside);
    return;
  }
  await work();
  await unlink(LOCK);
}`;

/**
 * A directory lock in callback style on a file system handed in as `opts.fs`: the age test reads the `stat` callback's
 * result through a module function, the break is a module function removing the path its arguments make, and a
 * failed step right after the create undoes it on the callback's error branch (blind-12's first sight missed it all).
 */
const CALLBACK_DIR_LOCK = `"use strict";
const path = require("path");

function lockDirFor(target, opts) {
  return opts.lockDir || path.join(path.dirname(target), ".sync.lock");
}

function tooOld(info, opts) {
  return Date.now() - info.mtimeMs > opts.maxAgeMs;
}

function dropLock(target, opts, done) {
  opts.fs.rmdir(lockDirFor(target, opts), (err) => done(err && err.code !== "ENOENT" ? err : null));
}

function takeLock(target, opts, done) {
  const dir = lockDirFor(target, opts);
  opts.fs.mkdir(dir, (err) => {
    if (!err) {
      return opts.fs.chmod(dir, 0o700, (err) => {
        if (err) {
          opts.fs.rmdir(dir, () => {});
          return done(err);
        }
        done(null);
      });
    }
    if (err.code !== "EEXIST") return done(err);
    opts.fs.stat(dir, (err, info) => {
      if (err) return done(err);
      if (!tooOld(info, opts)) return done(new Error("busy"));
      dropLock(target, opts, (err) => (err ? done(err) : takeLock(target, opts, done)));
    });
  });
}

function releaseLock(target, opts, done) {
  dropLock(target, opts, done);
}

module.exports = { takeLock, releaseLock };
`;

/** The same lock refreshed by a timer that keeps the path in a record: this module may refresh it. */
const CALLBACK_DIR_LOCK_REFRESHED = `${CALLBACK_DIR_LOCK}
const held = {};

function keepFresh(target) {
  const entry = held[target];
  entry.opts.fs.utimes(entry.lockDir, new Date(), new Date(), () => {});
}

module.exports.keepFresh = keepFresh;
`;

/**
 * A pid lock file whose break is a module function judging the holder it is handed (`reapIfDead(p, readHolder(p))`):
 * the pid tested comes from the caller's read, and the removal after the test, made inside the function, is a break.
 */
const REAPED_THROUGH_PARAMETER = `import { closeSync, openSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { isRunning } from "./proc";

function readHolder(lockPath: string): { pid: number } | null {
  try {
    return JSON.parse(readFileSync(lockPath, "utf8"));
  } catch {
    return null;
  }
}

function reapIfDead(lockPath: string, holder: { pid: number } | null): boolean {
  if (!holder) return false;
  if (isRunning(holder.pid)) return false;
  unlinkSync(lockPath);
  return true;
}

export function takeIndexLock(lockPath: string) {
  for (;;) {
    try {
      const fd = openSync(lockPath, "wx");
      writeFileSync(fd, JSON.stringify({ pid: process.pid }));
      closeSync(fd);
      return () => unlinkSync(lockPath);
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      if (reapIfDead(lockPath, readHolder(lockPath))) continue;
      throw new Error("index is locked");
    }
  }
}
`;

ruleTester.run("require-stale-recovery (lock files)", requireStaleRecovery, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "a lock file broken by its age has a recovery (its Q2 and Q3 are other rules')", code: MTIME_BREAK },
    { name: "a settings file written when missing and a heartbeat-refreshed lock", code: DONE_RIGHT },
    { name: "a lock file this module never removes: unknown", code: NEVER_REMOVED_HERE },
    { name: "a lock file renamed aside: a break not read, unknown", code: RENAMED_ASIDE },
    { name: "callback style: a lock directory broken by its age has a recovery", code: CALLBACK_DIR_LOCK },
    {
      name: "a break in a function that judges the holder its caller read and hands it",
      code: REAPED_THROUGH_PARAMETER,
    },
  ],
  invalid: [
    {
      name: "a pid file created exclusively and removed only by its holder",
      code: PID_FILE,
      errors: [
        {
          messageId: "lockFileNeverBroken",
          line: 13,
          column: 16,
          data: { operation: "`openSync`", path: "`pidPathFor(name)`", releaseLine: "24" },
        },
      ],
    },
    {
      name: "a lock file written after an existence check, never broken",
      code: CHECKED_WRITE,
      errors: [
        {
          messageId: "lockFileNeverBroken",
          line: 10,
          column: 3,
          data: { operation: "`writeFileSync`", path: '"./data/sync.lock"', releaseLine: "12" },
        },
      ],
    },
  ],
});

ruleTester.run("atomic-claim (lock files)", atomicClaim, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "an exclusive create is one step", code: PID_FILE },
    { name: "a settings file written when missing is no lock", code: DONE_RIGHT },
  ],
  invalid: [
    {
      name: "existsSync then writeFileSync of a lock file",
      code: CHECKED_WRITE,
      errors: [
        {
          messageId: "lockFileCheckThenWrite",
          line: 10,
          column: 3,
          data: {
            operation: "`writeFileSync`",
            path: '"./data/sync.lock"',
            check: "`existsSync`",
            checkLine: "6",
            found: "absent",
          },
        },
      ],
    },
  ],
});

ruleTester.run("progress-based-staleness (lock files)", progressBasedStaleness, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "an mtime a heartbeat refreshes says the holder still works", code: DONE_RIGHT },
    { name: "a lock file never judged by age", code: PID_FILE },
    {
      name: "a refresh of a path kept in a record may be this lock's: unknown stays quiet",
      code: CALLBACK_DIR_LOCK_REFRESHED,
    },
  ],
  invalid: [
    {
      name: "callback style: the stat handed to a module function that compares its mtime with the clock",
      code: CALLBACK_DIR_LOCK,
      errors: [
        {
          messageId: "lockFileAgeFromCreation",
          line: 31,
          column: 11,
          data: { path: "`lockDirFor(target,opts)`", clock: "the file's mtime" },
        },
      ],
    },
    {
      name: "a time written at create and never rewritten",
      code: STORED_TIME_BREAK,
      errors: [
        {
          messageId: "lockFileAgeFromCreation",
          line: 12,
          column: 11,
          data: { path: "`this.lockPath`", clock: "the time written into it when it was created" },
        },
      ],
    },
    {
      name: "an mtime nothing refreshes is the time the lock was taken",
      code: MTIME_BREAK,
      errors: [
        {
          messageId: "lockFileAgeFromCreation",
          line: 12,
          column: 9,
          data: { path: '"/var/lock/nightly-report.lock"', clock: "the file's mtime" },
        },
      ],
    },
  ],
});

ruleTester.run("conditional-recovery (lock files)", conditionalRecovery, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "no break at all", code: PID_FILE },
    { name: "a break by renaming aside is not read", code: RENAMED_ASIDE },
  ],
  invalid: [
    {
      name: "a pid judged in the function the caller hands its read, then the unlink there: two waiters both break",
      code: REAPED_THROUGH_PARAMETER,
      errors: [
        {
          messageId: "lockFileBreakRace",
          line: 15,
          column: 3,
          data: {
            operation: "`unlinkSync`",
            path: "`lockPath`",
            basis: "whether the process it names still runs",
            read: "call of `readHolder` (its `readFileSync`, line 6)",
            readLine: "28",
          },
        },
      ],
    },
    {
      name: "callback style: stat, then a module function removes the path the arguments make",
      code: CALLBACK_DIR_LOCK,
      errors: [
        {
          messageId: "lockFileBreakRace",
          line: 32,
          column: 7,
          data: {
            operation: "call of `dropLock` (its `rmdir`, line 13)",
            path: "`lockDirFor(target,opts)`",
            basis: "its age by the file's mtime",
            read: "`stat`",
            readLine: "29",
          },
        },
      ],
    },
    {
      name: "a time written into the file, read back and judged old, then fs.unlink",
      code: STORED_TIME_BREAK,
      errors: [
        {
          messageId: "lockFileBreakRace",
          line: 13,
          column: 15,
          data: {
            operation: "`unlink`",
            path: "`this.lockPath`",
            basis: "its age by the time written into it",
            read: "`readFile`",
            readLine: "11",
          },
        },
      ],
    },
    {
      name: "stat, then unlink, then create again: two waiters both break",
      code: MTIME_BREAK,
      errors: [
        {
          messageId: "lockFileBreakRace",
          line: 13,
          column: 11,
          data: {
            operation: "`unlink`",
            path: '"/var/lock/nightly-report.lock"',
            basis: "its age by the file's mtime",
            read: "`stat`",
            readLine: "11",
          },
        },
      ],
    },
    {
      name: "a heartbeat does not make the break itself one step",
      code: DONE_RIGHT,
      errors: [
        {
          messageId: "lockFileBreakRace",
          line: 20,
          column: 11,
          data: {
            operation: "`unlink`",
            path: '"/var/lock/nightly-report.lock"',
            basis: "its age by the file's mtime",
            read: "`stat`",
            readLine: "18",
          },
        },
      ],
    },
  ],
});

ruleTester.run("owner-checked-release (lock files)", ownerCheckedRelease, {
  assertionOptions: { requireData: true },
  valid: [
    { name: "a release that compares the token it wrote", code: DONE_RIGHT },
    { name: "a lock that never changes hands: its holder's removal frees nobody else", code: PID_FILE },
  ],
  invalid: [
    {
      name: "callback style: reported once at the removal function, not at the undo on the create's error branch",
      code: CALLBACK_DIR_LOCK,
      errors: [
        {
          messageId: "lockFilePlainRemove",
          line: 13,
          column: 3,
          data: {
            operation: "`rmdir`",
            path: "`lockDirFor(target,opts)`",
            basis: "its age by the file's mtime",
            breakLine: "31",
          },
        },
      ],
    },
    {
      name: "a method of the lock's class removes it by path once it can be broken",
      code: STORED_TIME_BREAK,
      errors: [
        {
          messageId: "lockFilePlainRemove",
          line: 21,
          column: 11,
          data: {
            operation: "`unlink`",
            path: "`this.lockPath`",
            basis: "its age by the time written into it",
            breakLine: "12",
          },
        },
      ],
    },
    {
      name: "removed by path alone once the lock can be broken",
      code: MTIME_BREAK,
      errors: [
        {
          messageId: "lockFilePlainRemove",
          line: 20,
          column: 11,
          data: {
            operation: "`unlink`",
            path: '"/var/lock/nightly-report.lock"',
            basis: "its age by the file's mtime",
            breakLine: "12",
          },
        },
      ],
    },
  ],
});
