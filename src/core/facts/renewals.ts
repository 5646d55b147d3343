/**
 * Lease renewals and what happens when they fail (Q2: a heartbeat must stop the work when renewal fails).
 *
 * A *renewal* is a command that pushes a held lock's expiry forward:
 * - a Redis EXPIRE/PEXPIRE (or a SET … PX without NX) of a key the module locks with NX, other than the EXPIRE that
 *   gives a SETNX its TTL right after the acquire (that one is `require-lock-ttl`'s); or a compare-and-expire script;
 * - a lock library's `extend`/`refresh` (Redlock, redis-semaphore), a redis-semaphore lock's `onLockLost` handler,
 *   and Redlock's `using(resources, ttl, async (signal) => …)`, whose automatic extension aborts `signal`;
 * - a database heartbeat: a write by row identity that moves a progress-time field (`heartbeatAt`, `leaseExpiresAt`)
 *   and no lifecycle field, on a model the module claims, run from a timer or from a function named like a heartbeat.
 *
 * Each renewal is then followed, through the AST (parent pointers) and calls within the module, to where its failure
 * lands (`Flow`, src/core/reading/rejection-flow.ts). A renewal fails in one of two ways: its promise rejects (a lost Redis connection; Redlock's `extend`, Prisma's
 * `update` when no row matches), or it resolves a value that says so (EXPIRE's 0, a count of 0). The failure must
 * reach an *abort*: `controller.abort()`, `process.exit`, a flag the work reads, `reject` of a promise, a throw that
 * propagates into the work (not one thrown in a timer callback, where it reaches nobody), or a call to a module
 * function that does one of these. Where the answer depends on code the module does not show, the renewal is
 * `unknown` and nobody reports it.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvOp, LibraryLockOp, Node, StateWrite } from "../model/accesses.js";
import type { Claim } from "../model/claims.js";
import type { KvFacts } from "../model/kv-locks.js";
import type { FailureHandling, Renewal } from "../model/renewals.js";
import type { ImportedRenewal } from "../model/helper-summaries.js";
import type { ModuleShape } from "../model/lock-facts.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { identityFields, toBranches, type Branch } from "../model/conditions.js";
import { describeKey, keyShape, sameKey } from "../reading/keys.js";
import { holderColumns, namesClaimedRow } from "./pairing/leases.js";
import { comparedGet } from "./kv-pairing/value-checks.js";
import { normalizeModel, sameField, sameValue } from "../model/names.js";
import { calleeName, contains } from "../reading/ast.js";
import { functionName } from "../reading/units.js";
import { drawnFresh, findVariable, getConstInit, keyName, unwrap } from "../reading/values.js";
import { DELEGATE_NAME, isLoop, Flow, chainPromise } from "../reading/rejection-flow.js";
import { enclosingFn, isFn } from "../reading/function-bindings.js";
import { holdsRow, isLockRow } from "../model/claims.js";
import { walk } from "../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** Functions named like a lease renewal: `heartbeat`, `renewLease`, `extendLock`, `keepAlive`, `touchJob`. */
const RENEWAL_NAME = /heart_?beat|\bbeat\b|^beat|renew|extend|keep_?alive|refresh|touch|^ping/i;

/** `RENEWAL_NAME`'s words anywhere in a module's text. */
const RENEWAL_WORD = /heart_?beat|beat|renew|extend|keep_?alive|refresh|touch|ping/i;

const RELEASE_NAME = /release|unlock|relinquish|free/i;

function commandLoc(call: Node): TSESTree.SourceLocation {
  if (call.type === "CallExpression") {
    const callee = unwrap(call.callee);
    if (callee.type === "MemberExpression") return { start: callee.property.loc.start, end: call.loc.end };
  }
  return call.loc;
}

/** An EXPIRE right after the NX acquire, in the same function and not in a loop of its own: the acquire's TTL. */
function isAcquireTtl(op: KvOp, acquire: KvOp): boolean {
  const fn = enclosingFn(op.node);
  if (fn !== enclosingFn(acquire.node) || op.node.range[0] < acquire.node.range[1]) return false;
  for (let p = op.node.parent; p && p !== fn; p = p.parent) if (isLoop(p) && !contains(p, acquire.node)) return false;
  return true;
}

const LIBRARY_NAME: Record<LibraryLockOp["library"], string> = {
  redlock: "Redlock",
  "redis-semaphore": "redis-semaphore",
  "in-process": "in-process",
};

const EXPIRE_NAME: Record<string, string> = { EX: "EXPIRE", PX: "PEXPIRE", EXAT: "EXPIREAT", PXAT: "PEXPIREAT" };

function redisRenewals(flow: Flow, kv: KvFacts, vocabulary: ResolvedVocabulary): Renewal[] {
  const out: Renewal[] = [];
  const gets = new Map<Node, KvOp>();
  for (const o of kv.ops) if (o.command === "get") gets.set(o.node, o);
  const takeovers = new Set(kv.takeovers.map((t) => t.op));
  const watched = kv.ops.filter((o) => o.command === "watch");
  for (const op of kv.ops) {
    const isExpire = op.command === "expire";
    const isScript = op.command === "script" && op.script === "compare-and-expire";
    const watchedBatch = op.batch !== undefined && watched.some((w) => sameKey(w.key, op.key));
    // A SET after a GET compare is a take-over (owner-checked-release's), unless WATCH makes the pair atomic.
    const isSet = op.command === "set" && !op.nx && op.ttl === "present" && (!takeovers.has(op) || watchedBatch);
    if (!isExpire && !isScript && !isSet) continue;
    const paired = kv.locks.filter(
      (l) => l.lockLike && l.acquire !== op && l.acquire.client === op.client && sameKey(l.acquire.key, op.key),
    );
    const lock = paired[0];
    if (!lock || paired.some((l) => l.expire === op || (isExpire && isAcquireTtl(op, l.acquire)))) continue;
    // Without a TTL in the acquire, an EXPIRE elsewhere is the acquire's TTL set late (require-lock-ttl's finding).
    if (isExpire && paired.every((l) => l.ttl === "absent")) continue;
    // An expiry set on the way out (`release() { pexpire(key, 1) }`) ends the lock, it does not renew it.
    if (RELEASE_NAME.test(namedUnit(op.node) ?? "")) continue;
    // A plain SET of the lock key renews only when it runs as one: from a timer or a renewal function.
    if (isSet && !flow.timerDriven(op.node) && !RENEWAL_NAME.test(namedUnit(op.node) ?? "")) continue;
    const owned = isScript || (isSet && watchedBatch);
    const command = isScript
      ? "compare-and-expire script"
      : isSet
        ? "SET … PX"
        : (EXPIRE_NAME[op.expiry?.unit ?? "EX"] ?? "EXPIRE");
    const get = owned ? undefined : comparedGet(flow.sourceCode, op, gets, vocabulary);
    out.push({
      ...(get ? { comparedGet: get.node } : {}),
      via: "redis",
      node: op.node,
      loc: op.loc,
      command,
      lock: `the lock ${describeKey(op.key)}`,
      acquire: lock.acquire.node,
      owned,
      signal: isSet ? "rejection" : "value",
      handling: owned ? handlingOf(flow, op.node, isSet ? "rejection" : "value") : { kind: "unknown" },
    });
  }
  return out;
}

function namedUnit(node: Node): string | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (isFn(p)) {
      const name = functionName(p);
      if (name !== undefined) return name;
    }
  }
  return undefined;
}

/** How a renewal's failure is handled: its promise's fate, and for value-signalled renewals also its result's. */
function handlingOf(flow: Flow, call: Node, signal: "value" | "rejection"): FailureHandling {
  const promise = flow.promiseFate(call);
  // Dropped or swallowed outright is the first thing to fix; then an unread or unheeded result; then a rejection
  // that leaves a timer.
  if (promise.kind === "not-awaited" || promise.kind === "swallowed") return promise;
  if (signal === "value") {
    const value = flow.resolvedValueFate(call);
    if (value.kind === "result-ignored" || value.kind === "no-abort") return value;
  }
  return promise;
}

/** The library acquire whose lock `receiver` holds (`const lock = await redlock.acquire(…)`; `lock = await lock.extend(…)`). */
function libraryAcquireOf(
  sourceCode: SourceCode,
  receiver: Node,
  acquires: readonly LibraryLockOp[],
): LibraryLockOp | undefined {
  const r = unwrap(receiver);
  if (r.type !== "Identifier") return undefined;
  const variable = findVariable(sourceCode, r);
  for (const ref of variable?.references ?? []) {
    let value = ref.writeExpr && unwrap(ref.writeExpr);
    if (value?.type === "AwaitExpression") value = unwrap(value.argument);
    const acquire = value && acquires.find((a) => a.node === value);
    if (acquire) return acquire;
  }
  return undefined;
}

function libraryRenewals(flow: Flow, sourceCode: SourceCode, ops: readonly LibraryLockOp[]): Renewal[] {
  const out: Renewal[] = [];
  const acquires = ops.filter((o) => o.op === "acquire");
  for (const op of ops) {
    const call = op.node;
    if (call.type !== "CallExpression") continue;
    const callee = unwrap(call.callee);
    const receiver = callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
    if (op.op === "extend") {
      // `redlock.extend(lock, ttl)` (v5) or `lock.extend(ttl)`.
      const target =
        op.library === "redlock" && call.arguments.length >= 2 && call.arguments[0]?.type !== "SpreadElement"
          ? call.arguments[0]
          : receiver;
      const acquire = target && libraryAcquireOf(sourceCode, target, acquires);
      out.push({
        via: "library",
        node: call,
        loc: commandLoc(call),
        command: `${calleeName(call)}()`,
        lock: `the ${LIBRARY_NAME[op.library]} lock${target ? ` \`${sourceCode.getText(target)}\`` : ""}`,
        ...(acquire ? { acquire: acquire.node } : {}),
        owned: true,
        signal: "rejection",
        handling: handlingOf(flow, call, "rejection"),
      });
    } else if (op.op === "using" && op.library === "redlock") {
      const using = usingRenewal(sourceCode, call);
      if (using) out.push(using);
    } else if (op.op === "acquire" && op.library === "redis-semaphore" && receiver) {
      const lost = onLockLostRenewal(flow, sourceCode, op, receiver);
      if (lost) out.push(lost);
    }
  }
  return out;
}

/** Redlock `using(resources, ttl, [settings,] async (signal) => …)`: the callback must look at its signal. */
function usingRenewal(sourceCode: SourceCode, call: TSESTree.CallExpression): Renewal | undefined {
  const last = call.arguments[call.arguments.length - 1];
  const cb = last && unwrap(last);
  if (!cb || !isFn(cb) || call.arguments.length < 3) return undefined;
  // Synchronous work (no await, no promise handed back) cannot outlive its lease between two ticks of the extension
  // timer, and could not check a signal anyway.
  let awaits = cb.body.type !== "BlockStatement" && unwrap(cb.body).type === "CallExpression";
  walk(cb.body, (n) => {
    if (n !== cb.body && isFn(n)) return false;
    if (n.type === "AwaitExpression" || (n.type === "ForOfStatement" && n.await) || n.type === "YieldExpression")
      awaits = true;
    if (n.type === "ReturnStatement" && n.argument && unwrap(n.argument).type === "CallExpression") awaits = true;
    return undefined;
  });
  if (!awaits) return undefined;
  const resources = call.arguments[0] && unwrap(call.arguments[0]);
  const first = resources?.type === "ArrayExpression" ? resources.elements[0] : resources;
  const lock =
    first && first.type !== "SpreadElement" ? `the lock ${describeKey(keyShape(sourceCode, first))}` : "the lock";
  const base = {
    via: "using" as const,
    node: call,
    loc: commandLoc(call),
    command: "using()",
    lock,
    acquire: call,
    owned: true,
    signal: "rejection" as const,
  };
  const param = cb.params[0];
  if (!param) return { ...base, handling: { kind: "signal-ignored", at: cb } };
  if (param.type !== "Identifier") return { ...base, handling: { kind: "unknown" } };
  const variable = sourceCode.getDeclaredVariables(cb).find((v) => v.name === param.name);
  const used = variable?.references.some((r) => r.isRead()) ?? true;
  return { ...base, handling: used ? { kind: "stops" } : { kind: "signal-ignored", at: param, signal: param.name } };
}

/** redis-semaphore refreshes on its own timer and calls `onLockLost` when a refresh fails: that handler must stop the work. */
function onLockLostRenewal(flow: Flow, sourceCode: SourceCode, op: LibraryLockOp, receiver: Node): Renewal | undefined {
  if (receiver.type !== "Identifier") return undefined;
  let created = getConstInit(sourceCode, receiver);
  created = created && unwrap(created);
  if (created?.type !== "NewExpression") return undefined;
  const options = created.arguments[2] && unwrap(created.arguments[2]);
  if (options?.type !== "ObjectExpression") return undefined;
  const prop = options.properties.find(
    (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === "onLockLost",
  );
  if (!prop) return undefined;
  const handler = unwrap(prop.value);
  const fn = isFn(handler) ? handler : flow.bindings.boundFunction(handler);
  if (!fn) return undefined;
  // The library's default handler throws from its timer, which ends the process: a handler that throws keeps that.
  let throws = false;
  walk(fn.body, (n) => {
    if (n !== fn.body && isFn(n)) return false;
    if (n.type === "ThrowStatement") throws = true;
    return undefined;
  });
  const inside = throws ? { kind: "stops" as const } : flow.reachesAbort([fn.body], undefined);
  const keyNode = created.arguments[1];
  const key = `the redis-semaphore lock${keyNode && keyNode.type !== "SpreadElement" ? ` ${describeKey(keyShape(sourceCode, keyNode))}` : ""}`;
  return {
    via: "library",
    node: op.node,
    loc: prop.loc,
    command: "onLockLost",
    lock: key,
    acquire: op.node,
    owned: true,
    signal: "rejection",
    handling: inside.kind === "stops" ? inside : { kind: "swallowed", at: prop },
  };
}

/**
 * A heartbeat's filter branch matches only while this holder still has the row: it names the owner (`lockedBy`,
 * `workerId`, whether the value is a parameter or a module constant), or pins the claimed status (on any lifecycle
 * field: a raw-SQL claim of `"Job_Status"` and a Prisma heartbeat on `status` are one column), or cannot be read.
 */
function fenced(sourceCode: SourceCode, branch: Branch, claim: Claim, vocabulary: ResolvedVocabulary): boolean {
  const holders = holderColumns(sourceCode, claim.write);
  return branch.some((a) => {
    if ("opaque" in a) return true;
    if (a.op !== "eq" && a.op !== "in") return false;
    if (vocabulary.isOwnerField(a.pred.field)) return true;
    // The column the claim stamps with the caller's identity and compares with it (`instance` in a lease taken by
    // `{ $or: [{ instance }, …] }`), pinned to a run-time value.
    if (!a.pred.values && holders.some((h) => sameField(h, a.pred.field))) return true;
    // A lock row's field its insert filled with a value drawn for that acquisition (`_id: new ObjectId()`): the
    // row is this holder's own, and a new holder's is another (blind-10 C8c05).
    if (
      isLockRow(claim) &&
      claim.write.effect === "insert" &&
      claim.write.assignments.some((x) => sameField(x.field, a.pred.field) && drawnFresh(sourceCode, x.valueNode))
    )
      return true;
    return (
      !isLockRow(claim) &&
      vocabulary.isStateField(a.pred.field) &&
      (a.pred.values ?? []).some((v) => sameValue(v, claim.lock.value))
    );
  });
}

/** A write that throws when no row matches fails by rejecting; every other one reports a count. */
function failureSignal(write: StateWrite): "value" | "rejection" {
  return write.throwsWhenNothing ? "rejection" : "value";
}

function databaseRenewals(
  flow: Flow,
  facts: {
    readonly writes: readonly StateWrite[];
    readonly claims: readonly Claim[];
    readonly releases?: readonly StateWrite[];
  },
  vocabulary: ResolvedVocabulary,
): Renewal[] {
  if (facts.claims.length === 0) return [];
  const out: Renewal[] = [];
  // A lock row's release clears its lease (`lockedUntil = now()`): it ends the hold, it does not renew it.
  const claimWrites = new Set([...facts.claims.map((c) => c.write), ...(facts.releases ?? [])]);
  for (const write of facts.writes) {
    if ((write.effect ?? "update") !== "update" || claimWrites.has(write)) continue;
    // A progress time by its name, or the lease column of a lease the module takes, stamped with the clock (`ts` in
    // a lock document taken over once `ts` is old): moving it on is what keeps that lease.
    const progress =
      write.assignments.find((a) => a.value.kind !== "static" && vocabulary.isProgressTimeField(a.field)) ??
      write.assignments.find(
        (a) =>
          a.value.kind === "now" &&
          facts.claims.some(
            (c) =>
              c.kind === "lease" &&
              normalizeModel(c.lock.model) === normalizeModel(write.model) &&
              sameField(c.lock.field, a.field),
          ),
      );
    if (!progress || write.assignments.some((a) => vocabulary.isStateField(a.field) || vocabulary.isFlagField(a.field)))
      continue;
    const branches = toBranches(write.filter);
    const claim =
      facts.claims.find((c) => !isLockRow(c) && normalizeModel(c.lock.model) === normalizeModel(write.model)) ??
      facts.claims.find((c) => normalizeModel(c.lock.model) === normalizeModel(write.model));
    if (!claim) continue;
    // By the row's identity: a key known at run time, or the constant the lock row is taken under.
    const named = (b: Branch) => identityFields(b).length > 0 || (holdsRow(claim) && namesClaimedRow(b, claim));
    if (branches.length === 0 || !branches.every(named)) continue;
    if (!flow.timerDriven(write.node) && !RENEWAL_NAME.test(namedUnit(write.node) ?? "")) continue;
    const owned = branches.every((b) => fenced(flow.sourceCode, b, claim, vocabulary));
    const signal = failureSignal(write);
    const keyFields = (b: Branch) => {
      const ids = identityFields(b);
      return ids.length > 0
        ? ids
        : b.flatMap((a) => ("pred" in a && a.op === "eq" && a.pred.values ? [a.pred.field] : []));
    };
    const fields = [...new Set(branches.flatMap(keyFields))];
    out.push({
      via: "database",
      node: write.node,
      loc: commandLoc(write.node),
      command: `the ${progress.field} update`,
      lock: `the claimed ${write.model} row`,
      acquire: claim.write.node,
      owned,
      signal,
      rowFilter: fields.join(" and "),
      handling: owned ? handlingOf(flow, chainPromise(write.runAt ?? write.node), signal) : { kind: "unknown" },
    });
  }
  return out;
}

/**
 * The module's calls of other modules' renewal helpers (`ExportedHelper.renews`): each call is that renewal, made
 * here, with how this module handles its failure. The helper renews by its holder, so only the handling is asked.
 */
export function importedRenewals(
  sourceCode: SourceCode,
  shape: ModuleShape,
  calls: readonly ImportedRenewal[],
): Renewal[] {
  if (calls.length === 0) return [];
  const flow = new Flow(sourceCode, shape);
  return calls.map(({ call, helper, file, effect }) => ({
    via: "database",
    node: call,
    loc: call.loc,
    command: effect.command,
    lock: effect.lock,
    owned: true,
    signal: effect.signal,
    through: `\`${helper}\` in ${file}, line ${effect.line}`,
    handling: handlingOf(flow, call, effect.signal),
  }));
}

/** Inside a loop of its own function. */
function inLoop(node: Node): boolean {
  for (let p = node.parent; p && !isFn(p); p = p.parent) if (isLoop(p)) return true;
  return false;
}

/** A name that reads rather than renews (`getPreviousHeartbeat`, `isLeaseRenewed`). */
const READER_NAME = /^(get|find|fetch|load|read|list|count|query|select|is|has|check|should|can|was)[A-Z_]/;

/** A stop of the work written out: `controller.abort()`, `process.exit()`, `throw`, `onLeaseLost()`. */
function stopsWork(region: Node): boolean {
  let found = false;
  walk(region, (n) => {
    if (found || (n !== region && isFn(n))) return false;
    if (n.type === "ThrowStatement") found = true;
    if (n.type === "CallExpression") {
      const name = calleeName(n) ?? "";
      if (name === "exit" || DELEGATE_NAME.test(name)) found = true;
    }
    return !found;
  });
  return found;
}

/** `!v`, `v === false`, `v == false`, `!(await call)`: the test is true when the value says no. */
function testsFalse(test: Node, value: (n: Node) => boolean): boolean {
  const t = unwrap(test);
  if (t.type === "UnaryExpression" && t.operator === "!") return value(unwrap(t.argument));
  if (t.type === "BinaryExpression" && (t.operator === "===" || t.operator === "==")) {
    const isFalse = (n: Node) => {
      const u = unwrap(n);
      return u.type === "Literal" && u.value === false;
    };
    return (isFalse(t.right) && value(unwrap(t.left))) || (isFalse(t.left) && value(unwrap(t.right)));
  }
  return false;
}

/** The module stops the work where the call's result says no: `const ok = await renew(); if (!ok) ac.abort();`. */
function abortsOnFalse(sourceCode: SourceCode, call: TSESTree.CallExpression): boolean {
  const awaited = call.parent?.type === "AwaitExpression" ? call.parent : undefined;
  const holder = awaited?.parent;
  const ifs: TSESTree.IfStatement[] = [];
  if (holder?.type === "VariableDeclarator" && holder.init === awaited && holder.id.type === "Identifier") {
    const variable = findVariable(sourceCode, holder.id);
    for (const ref of variable?.references ?? []) {
      if (ref.identifier === holder.id) continue;
      let p: Node | undefined = ref.identifier.parent;
      while (p && (p.type === "UnaryExpression" || p.type === "BinaryExpression")) {
        if (p.parent?.type === "IfStatement" && p.parent.test === p) ifs.push(p.parent);
        p = p.parent;
      }
    }
    const id = holder.id;
    return ifs.some(
      (i) => testsFalse(i.test, (n) => n.type === "Identifier" && n.name === id.name) && stopsWork(i.consequent),
    );
  }
  // `if (!(await renew())) …`
  for (let p: Node | undefined = awaited?.parent; p && p.type === "UnaryExpression"; p = p.parent) {
    const parent = p.parent;
    if (parent?.type === "IfStatement" && parent.test === p) return stopsWork(parent.consequent);
  }
  return false;
}

/**
 * Renewals the module declares by how it treats them: a call of a function the module does not show, named like a
 * renewal (`leaseHeartbeat(eventId, workerId)`, `renewLease(job)`), whose false result the module answers by stopping
 * the work in so many words (`const ok = await leaseHeartbeat(…); if (!ok) controller.abort();`). The module says what
 * the call is; whether its rejection stops the work too is then asked as of any renewal. Only a call made beside the
 * work again and again (from a timer, or in the work's loop) is one: a single call (a request handler's) hands its
 * outcome elsewhere. Anything less (a name alone, a result that sets a value somewhere) is unknown, and not read.
 */
function declaredRenewals(flow: Flow, calls: readonly TSESTree.CallExpression[], known: ReadonlySet<Node>): Renewal[] {
  const out: Renewal[] = [];
  for (const n of calls) {
    if (known.has(n)) continue;
    const name = calleeName(n);
    if (!name || !RENEWAL_NAME.test(name) || READER_NAME.test(name) || flow.bindings.boundFunction(n.callee)) continue;
    // Beside the work, again and again: from a timer, or in the loop that does the work. A single call (a request
    // handler's, a step before the work) hands its outcome elsewhere.
    if (!flow.timerDriven(n) && !inLoop(n)) continue;
    if (!abortsOnFalse(flow.sourceCode, n)) continue;
    // Asked only of a failure the module takes in a handler and keeps going after: a rejection left to escape a timer
    // ends a current Node process (an unhandled rejection), which a library may count on (redis-semaphore's refresh).
    const handling = flow.promiseFate(n);
    if (handling.kind !== "swallowed") continue;
    out.push({
      via: "library",
      node: n,
      loc: commandLoc(n),
      command: `${name}()`,
      lock: "the lease",
      owned: true,
      signal: "value",
      through: `\`${name}\`, whose false result this module already takes for a lost lease`,
      handling,
    });
  }
  return out;
}

/** Every renewal in the module, with how its failure is handled. */
export function buildRenewals(
  sourceCode: SourceCode,
  facts: {
    readonly kv: KvFacts;
    readonly writes: readonly StateWrite[];
    readonly claims: readonly Claim[];
    /** Writes that release a lock row (pairing/classification.ts): not renewals. */
    readonly releases?: readonly StateWrite[];
  },
  shape: ModuleShape,
  vocabulary: ResolvedVocabulary,
): Renewal[] {
  const hasKv = facts.kv.locks.length > 0;
  const hasLibrary = facts.kv.libraryLocks.some((l) => l.op !== "release" && l.library !== "in-process");
  // The words a renewal is named by, somewhere in the text: else no call can be one.
  const named = RENEWAL_WORD.test(sourceCode.text);
  if (!hasKv && !hasLibrary && facts.claims.length === 0)
    return named ? declaredRenewals(new Flow(sourceCode, shape), shape.calls, new Set()) : [];
  const flow = new Flow(sourceCode, shape);
  const found = [
    ...(hasKv ? redisRenewals(flow, facts.kv, vocabulary) : []),
    ...(hasLibrary
      ? libraryRenewals(
          flow,
          sourceCode,
          facts.kv.libraryLocks.filter((l) => l.library !== "in-process"),
        )
      : []),
    ...databaseRenewals(flow, facts, vocabulary),
  ];
  return named ? [...found, ...declaredRenewals(flow, shape.calls, new Set(found.map((r) => r.node)))] : found;
}
