/**
 * Lock files (`FileLock` in model/lock-files.ts), paired by path from the module's file-system calls
 * (src/recognizers/lock-files.ts, and the `fs` writes of object-storage.ts).
 *
 * Behaviour decides, on a path named like a lock (a lock word, a pid file): the acquire is an exclusive create (`open(path,
 * "wx")`), or a plain write taken after a test that reads the file and turns the caller away (`if (existsSync(p))
 * return`, an age test of what it holds). A removal judged on what a read of the file says (its mtime or a time
 * written into it against the clock, whether its pid still runs, a `catch` of a read that failed) breaks another
 * process's lock: a break. Other removals are the holder's releases. A function of the module that makes one of these
 * calls on a path it does not take as a parameter makes it where it is called (`this.readLockFile()`).
 *
 * The file outlives its process: a holder killed before it removes the file leaves it, and only a break (or a
 * take-over of a stale file) answers Q1. A break judged by age needs the holder to refresh what the age is read
 * from (Q2); a break or a release by path alone can remove a newer holder's file once the lock changes hands (Q3).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { FileOp, KeyShape, Node, ObjectWrite, StateAccess } from "../model/accesses.js";
import type { FileBreak, FileLock, FileLockOp, FileRelease, StaleJudgement } from "../model/lock-files.js";
import type { ModuleShape } from "../model/lock-facts.js";
import { type ResolvedVocabulary, hasLockWord } from "../model/settings.js";
import { calleeName, contains } from "../reading/ast.js";
import { calledFunction, callbackResultOf, isErrorParameter, returnedValues } from "../reading/calls.js";
import { readsClockNow } from "../reading/clock.js";
import { guardsOf } from "../reading/guards.js";
import { keyShape, sameKey } from "../reading/keys.js";
import { enclosingFunction, functionName, isFunction, unitOf } from "../reading/units.js";
import { findVariable, getConstInit, keyName, unwrap } from "../reading/values.js";
import { walk } from "../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Fn = TSESTree.FunctionLike;

/** A file's age as the file system keeps it: refreshed by any write or `utimes`, not by reading. */
const FILE_TIME = /^(mtime|mtimeMs|ctime|ctimeMs|birthtime|birthtimeMs|atime|atimeMs)$/;
/** Functions named for clearing leftovers: a removal there is a recovery whose verdict is not read here. */
const CLEANUP = /clean|stale|recover|reset|clear|force|break|purge|prune|sweep/i;

/** What a call does to a lock file, for telling a one-purpose wrapper from a function that holds a whole lock. */
const CLASS: Record<FileLockOp["kind"], "read" | "write" | "remove"> = {
  create: "write",
  write: "write",
  touch: "write",
  exists: "read",
  stat: "read",
  read: "read",
  remove: "remove",
  rename: "remove",
};

/** Names of functions that ask whether a process runs, when handed a pid: `isProcessAlive`, `isRunning`, `pidExists`. */
const LIVENESS_NAME = /alive|running|exists|kill/i;

/**
 * The call asks whether a process runs: `process.kill(pid, 0)`, a call named for it handed a pid (`isAlive(owner.pid)`,
 * the function may live in another module), or a module function that makes one of these (two levels deep).
 */
function checksPid(sourceCode: SourceCode, call: TSESTree.CallExpression, depth: number): boolean {
  if (processCall(call, "kill")) return true;
  const handedPid = call.arguments.some((a) => {
    const u = unwrap(a as Node);
    const name =
      u.type === "Identifier" ? u.name : u.type === "MemberExpression" ? keyName(u.property, u.computed) : "";
    return /^(?:pid|ownerPid|holderPid)$/i.test(name ?? "");
  });
  if (handedPid && LIVENESS_NAME.test(calleeName(call) ?? "")) return true;
  const called = depth < 2 ? calledFunction(sourceCode, call) : undefined;
  if (!called?.body) return false;
  let found = false;
  walk(called.body, (m) => {
    if (found) return false;
    if (m.type === "CallExpression" && checksPid(sourceCode, m, depth + 1)) found = true;
    return undefined;
  });
  return found;
}

/** A path named like a lock: a lock word, or a pid file. */
function lockNamed(sourceCode: SourceCode, path: Node, key: KeyShape): boolean {
  const texts = [key.text, key.name ?? "", sourceCode.getText(path)];
  const u = unwrap(path);
  const init = u.type === "Identifier" ? getConstInit(sourceCode, u) : undefined;
  // The directory a lock file is kept in (`dirname(lockPath)`) is no lock file.
  const made = init && init.type !== "TSEnumDeclaration" ? unwrap(init) : u;
  if (made.type === "CallExpression" && calleeName(made) === "dirname") return false;
  if (init && init.type !== "TSEnumDeclaration") texts.push(sourceCode.getText(init));
  return texts.some((t) => hasLockWord(t) || /(?:^|[^a-z])pid(?:[^a-z]|$)|\.pid\b|Pid(?:File|Path)/i.test(t));
}

/** The kind a recognised call is, as a lock file sees it. */
function kindOf(a: FileOp | ObjectWrite): { kind: FileLockOp["kind"]; exclusive: boolean } | undefined {
  if (a.access === "object") {
    if (!a.wholeFile) return undefined;
    return { kind: a.conditional ? "create" : "write", exclusive: a.conditional };
  }
  switch (a.op) {
    case "open":
      return a.exclusive
        ? { kind: "create", exclusive: true }
        : a.creates
          ? { kind: "write", exclusive: false }
          : { kind: "read", exclusive: false };
    case "append":
      return { kind: "write", exclusive: false };
    default:
      return { kind: a.op, exclusive: false };
  }
}

/** Two ops name one file: the same key, and the same expression when both are opaque (`lockFilePath(id)`). */
function sameFile(a: FileLockOp, b: FileLockOp): boolean {
  if (a.key.opaque && b.key.opaque) return a.key.text === b.key.text;
  return sameKey(a.key, b.key);
}

/** The identifiers a function takes (`name`, `{ id }`): a path made from one is the caller's, not one file. */
function paramNames(fn: Fn): Set<string> {
  const names = new Set<string>();
  for (const p of fn.params) walk(p, (n) => void (n.type === "Identifier" && names.add(n.name)));
  return names;
}

/**
 * How a call of `fn` names what `fn` names by its parameters: each parameter's whole-word occurrences replaced by the
 * text of the argument given for it (identifiers and members only, so the caller's path reads as the caller wrote
 * it). Undefined when an argument is anything else or missing.
 */
function argumentsFor(
  sourceCode: SourceCode,
  fn: Fn,
  call: TSESTree.CallExpression,
): ((text: string) => string) | undefined {
  const pairs: [string, string][] = [];
  for (const [i, p] of fn.params.entries()) {
    const arg = call.arguments[i];
    if (p.type !== "Identifier") return undefined;
    const a = arg && arg.type !== "SpreadElement" ? unwrap(arg) : undefined;
    if (!a || (a.type !== "Identifier" && a.type !== "MemberExpression")) continue;
    pairs.push([p.name, sourceCode.getText(a).replace(/\s+/g, "")]);
  }
  return (text) =>
    pairs.reduce(
      (t, [from, to]) => t.replace(new RegExp(`(?<![\\w$.])${from.replace(/\$/g, "\\$")}(?![\\w$])`, "g"), to),
      text,
    );
}

/** The key a path is, read through the const the path is held in when it is opaque (`const file = lockFilePath(id)`). */
function pathKey(sourceCode: SourceCode, path: Node): KeyShape {
  const key = keyShape(sourceCode, path);
  const u = unwrap(path);
  if (key.opaque && u.type === "Identifier") {
    const init = getConstInit(sourceCode, u);
    if (init && init.type !== "TSEnumDeclaration") {
      const inner = keyShape(sourceCode, init);
      return { ...inner, name: u.name, ...(key.local ? { local: key.local } : {}) };
    }
  }
  return key;
}

/** `process.<method>(…)`: `process.exit(…)`, `process.kill(…)`. */
function processCall(n: Node, method: string): boolean {
  if (n.type !== "CallExpression") return false;
  const c = unwrap(n.callee);
  return (
    c.type === "MemberExpression" &&
    unwrap(c.object).type === "Identifier" &&
    (unwrap(c.object) as TSESTree.Identifier).name === "process" &&
    keyName(c.property, c.computed) === method
  );
}

/** `process.exit(…)`: a way out of the process, taken like a `return` when the lock file is found held. */
function processExit(n: Node): boolean {
  return processCall(n, "exit");
}

interface Reading {
  reads: FileLockOp[];
  clock: boolean;
  fileTime: boolean;
  pid: boolean;
  content: boolean;
}

export function buildLockFiles(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  shape: ModuleShape,
  vocabulary: ResolvedVocabulary,
): FileLock[] {
  const direct: FileLockOp[] = [];
  for (const a of accesses) {
    if (a.access !== "file" && a.access !== "object") continue;
    const k = kindOf(a);
    const path = a.access === "file" ? a.path : a.location;
    if (!k || !path) continue;
    const key = pathKey(sourceCode, path);
    if (!lockNamed(sourceCode, path, key)) continue;
    direct.push({ ...k, key, node: a.node, loc: a.node.loc, name: a.access === "file" ? a.name : a.operation });
  }
  if (!direct.some((o) => o.kind === "create" || o.kind === "write")) return [];

  // Module functions that make an op on a path of their own, or on the path they are handed (`readLock(file)`): the
  // op is made where they are called, on the caller's path in the second case.
  const wrappers = new Map<Fn, { ops: FileLockOp[]; pathParam?: number; substitute?: boolean }>();
  for (const fn of shape.functions) {
    const params = paramNames(fn);
    const mine = direct.filter((o) => enclosingFunction(o.node) === fn);
    const ops = mine.filter(
      (o) => ![...params].some((p) => new RegExp(`(?<![\\w$.])${p.replace(/\$/g, "\\$")}(?![\\w$])`).test(o.key.text)),
    );
    // A wrapper of one kind of call (reads, writes or removals: `readLockFile`, `writeLockFile`); a function that
    // takes, breaks and frees a lock (`acquire()`) is read where it is, not copied into its callers.
    const classes = new Set(ops.map((o) => CLASS[o.kind]));
    if (ops.length > 0 && classes.size === 1 && ops.length === mine.length) {
      wrappers.set(fn, { ops });
      continue;
    }
    // Every op an unconditional removal of a path made from the parameters (`removeLock(file, options)` removing
    // `getLockFile(file, options)`): a break or release made at each call, on the path the caller's arguments make.
    // One that judges the holder itself first (`if (isAlive(owner.pid)) return false; unlinkSync(p)`) is a break
    // where it is, judged by its own tests.
    if (
      mine.length > 0 &&
      ops.length === 0 &&
      mine.every((o) => o.kind === "remove" && o.key.opaque && guardsOf(sourceCode, o.node, vocabulary).length === 0) &&
      fn.params.every((p) => p.type === "Identifier")
    )
      wrappers.set(fn, { ops: mine, substitute: true });
    // Every op a read (`readLock(file)`, `lockAge(file)`) on the one parameter that is the path itself: what a test
    // judges at the call is the caller's file. A function handed the path that writes or removes it (`releaseLock(p)`)
    // stays where it is, paired by its parameter's name with the acquire beside it.
    const pathParam = fn.params.findIndex(
      (p) =>
        p.type === "Identifier" &&
        mine.length > 0 &&
        mine.every((o) => o.key.opaque && o.key.name === p.name && o.key.text === `{${p.name}}`),
    );
    if (pathParam >= 0 && mine.every((o) => CLASS[o.kind] === "read")) wrappers.set(fn, { ops: mine, pathParam });
  }
  const instances: FileLockOp[] = [];
  const called = new Set<Fn>();
  for (const call of shape.calls) {
    const fn = wrappers.size > 0 ? calledFunction(sourceCode, call) : undefined;
    const wrapped = fn && wrappers.get(fn);
    if (!fn || !wrapped || contains(fn, call)) continue;
    let key: KeyShape | undefined;
    if (wrapped.pathParam !== undefined) {
      const arg = call.arguments[wrapped.pathParam] as Node | undefined;
      if (!arg || arg.type === "SpreadElement") continue;
      key = pathKey(sourceCode, arg);
      if (!lockNamed(sourceCode, arg, key)) continue;
    }
    const substituted = wrapped.substitute ? argumentsFor(sourceCode, fn, call) : undefined;
    if (wrapped.substitute && !substituted) continue;
    called.add(fn);
    const via = functionName(fn) ?? sourceCode.getText(call.callee);
    for (const o of wrapped.ops)
      instances.push({
        ...o,
        ...(key ? { key } : {}),
        ...(substituted ? { key: { text: substituted(o.key.text), exact: false, opaque: true } } : {}),
        node: call,
        loc: call.loc,
        via,
        viaLine: o.loc.start.line,
        template: o,
      });
  }
  // A helper's own ops are seen at its calls; one nobody here calls (an exported API) is seen where it is.
  const ops = [...direct.filter((o) => !called.has(enclosingFunction(o.node)!)), ...instances].sort(
    (a, b) => a.node.range[0] - b.node.range[0],
  );
  const opAt = new Map<Node, FileLockOp>();
  for (const o of ops) if (!opAt.has(o.node)) opAt.set(o.node, o);
  const moduleText = sourceCode.getText();
  const checksPids = /process\.kill\([^)]*,\s*0\s*\)/.test(moduleText);

  /** The arguments the module's calls of `fn` give its parameter at `index` (none for a callback or an export). */
  const argumentsOf = (fn: Fn, index: number): Node[] => {
    if (index < 0 || functionName(fn) === undefined) return [];
    const out: Node[] = [];
    for (const c of shape.calls) {
      const arg = c.arguments[index];
      if (arg && arg.type !== "SpreadElement" && calledFunction(sourceCode, c) === fn) out.push(arg);
    }
    return out;
  };

  /** What a test reads, followed through consts, calls and members: reads of `target`, the clock, a pid check. */
  const reading = (test: Node, target: FileLockOp): Reading => {
    const r: Reading = { reads: [], clock: false, fileTime: false, pid: false, content: false };
    const seen = new Set<Node>();
    const visit = (node: Node, depth: number): void => {
      if (depth > 6 || seen.has(node)) return;
      seen.add(node);
      const n = unwrap(node);
      if (readsClockNow(sourceCode, n)) r.clock = true;
      const op = opAt.get(n);
      if (op && op !== target && sameFile(op, target) && op.kind !== "remove" && op.kind !== "rename") {
        r.reads.push(op);
        if (op.kind === "read") r.content = true;
      }
      switch (n.type) {
        case "Identifier": {
          if (FILE_TIME.test(n.name)) r.fileTime = true;
          const init = getConstInit(sourceCode, n);
          if (init && init.type !== "TSEnumDeclaration") visit(init, depth + 1);
          else {
            // `const { mtimeMs } = await stat(p)`: the destructured declaration's init.
            const def = findVariable(sourceCode, n)?.defs[0];
            if (def?.type === "Variable" && def.node.init) visit(def.node.init, depth + 1);
            // `fs.stat(p, (err, stat) => …)`: the callback's result is the call's.
            const call = def?.type === "Parameter" ? callbackResultOf(sourceCode, n) : undefined;
            if (call) visit(call, depth + 1);
            // `function reapIfDead(p, holder) { if (isAlive(holder.pid)) return; unlink(p) }`: what the module's
            // calls of the function hand that parameter (`reapIfDead(p, readHolder(p))`).
            if (!call && def?.type === "Parameter" && isFunction(def.node))
              for (const arg of argumentsOf(def.node, def.node.params.indexOf(def.name as TSESTree.Parameter)))
                visit(arg, depth + 1);
          }
          return;
        }
        case "MemberExpression": {
          const name = keyName(n.property, n.computed);
          if (name && FILE_TIME.test(name)) r.fileTime = true;
          visit(n.object, depth);
          return;
        }
        case "AwaitExpression":
        case "UnaryExpression":
        case "SpreadElement":
          visit(n.argument, depth);
          return;
        case "BinaryExpression":
        case "LogicalExpression":
          if (n.left.type !== "PrivateIdentifier") visit(n.left, depth);
          visit(n.right, depth);
          return;
        case "ConditionalExpression":
          visit(n.test, depth);
          visit(n.consequent, depth);
          visit(n.alternate, depth);
          return;
        case "CallExpression":
        case "NewExpression": {
          const c = unwrap(n.callee);
          // A module function the test calls (`isProcessAlive(pid)`): a pid check inside it counts, and so does a
          // call handed the pid the file holds (`isProcessAlive(owner.pid)`), here or in such a function.
          if (n.type === "CallExpression" && checksPid(sourceCode, n, 0)) r.pid = true;
          if (c.type === "MemberExpression") visit(c.object, depth);
          for (const a of n.arguments) visit(a, depth + 1);
          // A module function handed the file's stat (`isLockStale(stat, options)`): the clock and file times it
          // compares in what it returns are the test's.
          if (n.type === "CallExpression" && n.arguments.length > 0)
            for (const v of returnedValues(sourceCode, n)) visit(v, depth + 1);
          return;
        }
        default:
          return;
      }
    };
    visit(test, 0);
    return r;
  };

  const judgementOf = (test: Node, r: Reading): StaleJudgement | undefined => {
    const read = r.reads[0];
    if (!read) return undefined;
    if (r.pid) return { by: "pid", test, read };
    if (r.clock) return { by: r.fileTime ? "mtime" : "stored-time", test, read };
    return undefined;
  };

  /** A removal's verdict: an age or pid test on the way to it, or a `catch` of a failed read of the file. */
  const breakOf = (remove: FileLockOp): StaleJudgement | undefined => {
    for (const guard of guardsOf(sourceCode, remove.node, vocabulary)) {
      const j = judgementOf(guard.test, reading(guard.test, remove));
      if (j) return j;
    }
    for (let p = remove.node.parent, child: Node = remove.node; p; child = p, p = p.parent) {
      if (isFunction(p) && functionName(p) !== undefined) break;
      if (p.type === "CatchClause" && p.parent.type === "TryStatement" && child === p.body) {
        const tried = p.parent.block;
        const read = ops.find((o) => o.kind === "read" && contains(tried, o.node) && sameFile(o, remove));
        if (read) return { by: "unreadable", test: p, read };
      }
    }
    return undefined;
  };

  /** The exits before `op` in its function and the tests above each; and the tests `op` itself runs under. */
  const turnedAway = (op: FileLockOp): { read: FileLockOp; judged?: StaleJudgement } | undefined => {
    const fn = unitOf(op.node);
    const scope: Node = fn?.body ?? sourceCode.ast;
    const testsAbove = (n: Node): { test: Node; inAlternate: boolean }[] => {
      const out: { test: Node; inAlternate: boolean }[] = [];
      for (let p = n.parent, child: Node = n; p && p !== scope; child = p, p = p.parent) {
        if (isFunction(p)) return [];
        if (p.type === "IfStatement" && child !== p.test)
          out.push({ test: p.test, inAlternate: child === p.alternate });
      }
      return out;
    };
    /** A bare existence test: the read, and whether the file is there on this branch (`!existsSync(p)` false). */
    const bareExists = (test: Node, inAlternate: boolean): { read: FileLockOp; present: boolean } | undefined => {
      let u = unwrap(test);
      let negated = inAlternate;
      while (u.type === "UnaryExpression" && u.operator === "!") {
        negated = !negated;
        u = unwrap(u.argument);
      }
      if (u.type === "AwaitExpression") u = unwrap(u.argument);
      const o = opAt.get(u);
      return o && o.kind === "exists" && sameFile(o, op) ? { read: o, present: !negated } : undefined;
    };
    let found: { read: FileLockOp; judged?: StaleJudgement } | undefined;
    const consider = (test: Node, inAlternate: boolean, exitHere: boolean) => {
      const bare = bareExists(test, inAlternate);
      // An exit taken when the file is absent, or a write made only where it is present, is no turn-away.
      if (bare) {
        if (bare.present === exitHere) found ??= { read: bare.read };
        return;
      }
      const r = reading(test, op);
      if (r.reads.length === 0) return;
      const judged = judgementOf(test, r);
      if (!found || (judged && !found.judged)) found = { read: r.reads[0]!, ...(judged ? { judged } : {}) };
    };
    for (const t of testsAbove(op.node)) consider(t.test, t.inAlternate, false);
    walk(scope, (n) => {
      if (n.range[0] >= op.node.range[0]) return false;
      if (n !== scope && isFunction(n)) return false;
      const exit =
        n.type === "ReturnStatement" ||
        n.type === "ThrowStatement" ||
        (n.type === "ExpressionStatement" && processExit(unwrap(n.expression)));
      if (exit) {
        // An exit inside a `catch` is the failure of something else, not the file found held.
        for (let p: Node | undefined = n.parent; p && p !== scope; p = p.parent)
          if (p.type === "CatchClause") return false;
        for (const t of testsAbove(n)) consider(t.test, t.inAlternate, true);
        return false;
      }
      return true;
    });
    return found;
  };

  const locks: FileLock[] = [];
  const taken = new Set<FileLockOp>();
  for (const op of ops) {
    if (taken.has(op) || (op.kind !== "create" && op.kind !== "write")) continue;
    const check = op.kind === "write" ? turnedAway(op) : undefined;
    if (op.kind === "write" && !check) continue;
    const same = ops.filter((o) => sameFile(o, op));
    // Later creates of the same file (a retry after a break) are the same lock.
    for (const o of same) if (o.kind === "create" || (o.kind === "write" && o !== op && turnedAway(o))) taken.add(o);
    const breaks: FileBreak[] = [];
    const releases: FileRelease[] = [];
    let unknownRecovery = checksPids;
    for (const o of same) {
      if (o.kind === "rename") unknownRecovery = true;
      if (o.kind !== "remove") continue;
      const judged = breakOf(o);
      if (judged) breaks.push({ remove: o, judged });
      else {
        const fn = unitOf(o.node);
        const name = (fn && functionName(fn)) ?? "";
        if (!fn || CLEANUP.test(name)) unknownRecovery = true;
        else {
          const checksOwner = (at: FileLockOp) =>
            guardsOf(sourceCode, at.node, vocabulary).some((g) => reading(g.test, at).content);
          const ownerChecked = checksOwner(o) || (o.template !== undefined && checksOwner(o.template));
          let undoesAcquire = false;
          for (let p: Node | undefined = o.node.parent; p && p !== fn; p = p.parent)
            if (p.type === "CatchClause" && fn === unitOf(op.node)) undoesAcquire = true;
          // In the acquire's own callbacks, on the branch a callback's error takes (`mkdir(p, (err) => { if (!err)
          // probe(p, (err) => { if (err) { rmdir(p); return cb(err); } … }) })`): the create undone before any work.
          const acquireUnit = unitOf(op.node);
          if (acquireUnit && contains(acquireUnit, o.node) && o.node.range[0] > op.node.range[0])
            for (
              let p: Node | undefined = o.node.parent, child: Node = o.node;
              p && p !== acquireUnit;
              child = p, p = p.parent
            )
              if (p.type === "IfStatement" && child === p.consequent && isErrorParameter(sourceCode, p.test)) {
                undoesAcquire = true;
                break;
              }
          releases.push({ op: o, ownerChecked, undoesAcquire });
        }
      }
    }
    const acquireFn = unitOf(op.node);
    const renewals = same.filter(
      (o) => o.kind === "touch" || (o.kind === "write" && !taken.has(o) && unitOf(o.node) !== acquireFn),
    );
    locks.push({
      acquire: op,
      ...(check ? { checkedBy: check.read } : {}),
      ...(check?.judged ? { takesOverStale: check.judged } : {}),
      breaks,
      releases,
      renewals,
      mayBeRenewed:
        renewals.length === 0 &&
        op.key.opaque === true &&
        ops.some((o) => o.kind === "touch" && o.key.opaque && !sameFile(o, op)),
      unknownRecovery: unknownRecovery && !breaks.some((b) => b.judged.by === "pid"),
    });
  }
  return locks;
}
