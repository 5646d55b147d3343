/**
 * Lock files, paired from file-system calls by path (src/core/facts/lock-files.ts): how a lock file is taken, what
 * breaks it when its holder is dead, and how its holder removes it.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { KeyShape, Node } from "./accesses.js";

/** One file-system call on a lock path, or a call of a module function that makes it (`via`). */
export interface FileLockOp {
  readonly kind: "create" | "write" | "exists" | "stat" | "read" | "remove" | "touch" | "rename";
  /** A create that fails when the file exists (`open(path, "wx")`, `writeFile(path, data, { flag: "wx" })`). */
  readonly exclusive: boolean;
  readonly key: KeyShape;
  /** The call: the fs call itself, or the call of the module's function that makes it. */
  readonly node: Node;
  readonly loc: TSESTree.SourceLocation;
  /** The fs function as called (`openSync`, `unlink`). */
  readonly name: string;
  /** The module function the op is made through (`this.writeLockFile()`), when it is, and the line of its own call. */
  readonly via?: string;
  readonly viaLine?: number;
  /** For a call of a module function: the function's own call, where a flaw of the function is reported once. */
  readonly template?: FileLockOp;
}

/**
 * How a stale lock file is told from a live one: its age (by the file's mtime, or by a time written into it when it
 * was made), whether the process it names still runs, or that it cannot be read (taken for corrupt).
 */
export interface StaleJudgement {
  readonly by: "mtime" | "stored-time" | "pid" | "unreadable";
  /** The test that judges it (`if (Date.now() - s.mtimeMs > staleMs)`), or the `catch` of an unreadable file. */
  readonly test: Node;
  /** The read the judgement is made on (the `stat`, the `readFile`). */
  readonly read?: FileLockOp;
}

/** A removal of a lock file that another process holds, once it is judged stale: the break. */
export interface FileBreak {
  readonly remove: FileLockOp;
  readonly judged: StaleJudgement;
}

/** A removal by the holder. */
export interface FileRelease {
  readonly op: FileLockOp;
  /** Made under a test of what a read of the file holds (`if (read(p) === String(process.pid))`): the owner is checked. */
  readonly ownerChecked: boolean;
  /** In a `catch` of the acquiring function: the holder undoes a create it has just made, before any work. */
  readonly undoesAcquire: boolean;
}

export interface FileLock {
  /** The create: exclusive, or a plain write taken after a check that turns the caller away (`checkedBy`). */
  readonly acquire: FileLockOp;
  /** For a plain write: the read of the file whose test turns the caller away when it is there (or fresh). */
  readonly checkedBy?: FileLockOp;
  /** The plain write goes over a file judged stale (its holder is taken for dead and replaced, no removal first). */
  readonly takesOverStale?: StaleJudgement;
  readonly breaks: readonly FileBreak[];
  /** Removals by the holder when its work is done. */
  readonly releases: readonly FileRelease[];
  /** Refreshes of the file while it is held: `utimes`, or a write of it other than the acquire. */
  readonly renewals: readonly FileLockOp[];
  /**
   * The module refreshes (`utimes`) a lock file whose path it names another way, where both paths are known only at
   * run time (`lock.lockfilePath` kept in a record, `getLockFile(file)` here): it may be this file, so whether this
   * lock is refreshed is unknown.
   */
  readonly mayBeRenewed: boolean;
  /**
   * The module removes the file somewhere this model does not read as a break or a release (at start-up, in a
   * function named for cleaning up), renames it (a break that moves the file aside first), or checks a pid it does
   * not pair: whether it recovers a dead holder is unknown.
   */
  readonly unknownRecovery: boolean;
}
