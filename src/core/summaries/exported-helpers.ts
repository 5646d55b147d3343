/**
 * Summaries across modules, the exporting side. A module's exported helpers become plain data (`ExportedHelper`:
 * effects in terms of parameters, with the verdicts the helper's own module reached): the key-value effects of its
 * functions (summaries.ts), the session advisory locks they take on the module's own pool, and the claims they take
 * and the lock rows they release or free wherever they are called. The audit (src/audit/) reads each module's
 * exports and hands every importer the helpers it imports (imported-helpers.ts).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, Node, StateWrite } from "../model/accesses.js";
import type { KvFacts } from "../model/kv-locks.js";
import type {
  AdvisoryHelperEffect,
  ClaimEffect,
  ExportedHelper,
  HelperEffect,
  RenewalEffect,
  RowReleaseEffect,
} from "../model/helper-summaries.js";
import type { LockFacts } from "../model/lock-facts.js";
import { claimKey, claimName, formatValue } from "../model/names.js";
import { describeRowRelease } from "../model/describe.js";
import { helperOrigin } from "../model/accesses.js";
import { enclosingFunction, functionName, unitOf } from "../reading/units.js";
import { exportNames, reachNames } from "../reading/exports.js";
import { findVariable, unwrap, valuesFrom } from "../reading/values.js";
import { caughtIn, chainCallOf, chainPromise } from "../reading/rejection-flow.js";
import { calleeName, contains } from "../reading/ast.js";
import { isFunction } from "../reading/units.js";
import { walk } from "../reading/walk.js";
import type { Renewal } from "../model/renewals.js";
import { toBranches } from "../model/conditions.js";
import type { FunctionSummary, KvEffect } from "./summaries.js";
import { byKind } from "../model/claims.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The plain-data form of one effect, with the verdicts of this module's facts. */
function plainEffect(effect: KvEffect, kv: KvFacts): HelperEffect {
  const { op } = effect;
  const root = helperOrigin(op);
  const locks = [...kv.locks, ...kv.viaHelpers.locks];
  const lock = locks.find((l) => l.acquire === op) ?? locks.find((l) => helperOrigin(l.acquire) === root);
  const released = [...kv.releases, ...kv.viaHelpers.releases].find((r) => r.op === op || helperOrigin(r.op) === root);
  const acquire = op.nx && (op.command === "set" || op.command === "setnx");
  const deleting =
    op.command === "del" || (op.command === "script" && (op.script === "compare-and-delete" || op.script === "delete"));
  const release = deleting
    ? (released?.kind ?? (root.script === "compare-and-delete" ? "owner-checked" : (op.via?.release ?? "plain")))
    : undefined;
  return {
    store: root.store,
    dialect: root.dialect,
    command: op.command,
    nx: op.nx,
    ...(op.script ? { script: op.script } : {}),
    key: effect.key ?? effect.fieldKey ?? { fixed: op.key },
    client: effect.client ? { param: effect.client } : effect.fieldClient ? { param: effect.fieldClient } : op.client,
    ...(acquire ? { ttl: lock?.ttl ?? op.ttl } : {}),
    ...(effect.value ? { value: effect.value } : {}),
    ...(op.constantValue ? { constantValue: op.constantValue } : {}),
    ...(release ? { release } : {}),
    ...(effect.handle ? { handle: effect.handle } : {}),
    line: root.loc.start.line,
  };
}

/**
 * The module's exported helpers: each exported function or method (of an exported class or object) with key-value
 * effects a caller makes through it. `summaries` are the module's (summaries.ts), `kv` its paired facts.
 */
export function exportedHelpers(
  sourceCode: SourceCode,
  summaries: ReadonlyMap<TSESTree.FunctionLike, FunctionSummary>,
  kv: KvFacts,
  advisory: readonly AdvisoryLockOp[] = [],
  rowLocks: RowLockHelpers = { rowReleases: new Map(), claims: new Map(), frees: new Map(), renews: new Map() },
): ExportedHelper[] {
  const pooled = advisoryHelpers(advisory);
  const { rowReleases, claims, frees, renews } = rowLocks;
  if (
    summaries.size === 0 &&
    pooled.size === 0 &&
    rowReleases.size === 0 &&
    claims.size === 0 &&
    frees.size === 0 &&
    renews.size === 0
  )
    return [];
  const exports = exportNames(sourceCode.ast as TSESTree.Program);
  if (exports.size === 0) return [];
  const out: ExportedHelper[] = [];
  const functions = new Set([
    ...summaries.keys(),
    ...pooled.keys(),
    ...rowReleases.keys(),
    ...claims.keys(),
    ...frees.keys(),
    ...renews.keys(),
  ]);
  for (const fn of functions) {
    const summary = summaries.get(fn);
    const effects = summary ? summary.effects.map((e) => plainEffect(e, kv)) : [];
    const locks = pooled.get(fn);
    const rows = rowReleases.get(fn);
    const taken = claims.get(fn);
    const freed = frees.get(fn);
    const renewed = renews.get(fn);
    for (const name of reachNames(fn, exports)) {
      out.push({
        name,
        effects,
        ...(locks ? { advisory: locks } : {}),
        ...(rows ? { rowReleases: rows } : {}),
        ...(taken ? { claims: taken } : {}),
        ...(freed ? { frees: freed } : {}),
        ...(renewed ? { renews: renewed } : {}),
      });
    }
  }
  return out;
}

/** What a module's functions do to its claims and lock rows, for `exportedHelpers`. */
export interface RowLockHelpers {
  readonly rowReleases: RowHelpers<RowReleaseEffect>;
  readonly claims: RowHelpers<ClaimEffect>;
  readonly frees: RowHelpers<string>;
  readonly renews: RowHelpers<RenewalEffect>;
}

/** The kinds of row-lock helper of a module (`rowReleaseHelpers`, `claimHelpers`, `freeingHelpers`, `renewalHelpers`). */
export function rowLockHelpers(
  sourceCode: SourceCode,
  facts: Pick<
    LockFacts,
    "claims" | "writes" | "answeredHere" | "rowReleases" | "changesHands" | "holderWrites" | "renewals"
  >,
): RowLockHelpers {
  return {
    rowReleases: rowReleaseHelpers(facts),
    claims: claimHelpers(facts),
    frees: freeingHelpers(facts),
    renews: renewalHelpers(sourceCode, facts.renewals),
  };
}

/**
 * The named functions that renew a lease by its holder (a fenced heartbeat) and leave what a failed renewal means to
 * their caller: the renewal's result, or a value computed from it, is what the function returns (`return
 * result.length > 0`), or its rejection leaves the function uncaught. The module itself cannot say whether the work
 * stops (`unknown` there); each caller's call is that renewal (`heartbeat-abort` at the call).
 */
function renewalHelpers(
  sourceCode: SourceCode,
  renewals: readonly Renewal[],
): Map<TSESTree.FunctionLike, RenewalEffect[]> {
  const out = new Map<TSESTree.FunctionLike, RenewalEffect[]>();
  for (const renewal of renewals) {
    if (renewal.via !== "database" || !renewal.owned || renewal.handling.kind !== "unknown") continue;
    const fn = unitOf(renewal.node);
    if (!fn || enclosingFunction(renewal.node) !== fn) continue;
    const promise = chainPromise(renewal.node);
    if (caughtWithin(promise, fn)) continue;
    const value = renewal.signal === "value" && returnsValueOf(sourceCode, promise, fn);
    if (!value && !returnsOrAwaits(promise, fn)) continue;
    const effect: RenewalEffect = {
      command: renewal.command,
      lock: renewal.lock,
      signal: value ? "value" : "rejection",
      line: renewal.node.loc.start.line,
    };
    out.set(fn, [...(out.get(fn) ?? []), effect]);
  }
  return out;
}

/** A `.catch(…)` on the promise, or a `try` around it whose `catch` does not rethrow: the failure stays inside. */
function caughtWithin(promise: Node, fn: Node): boolean {
  const chain = chainCallOf(promise);
  return (chain !== undefined && calleeName(chain) === "catch") || caughtIn(promise, fn);
}

/** The function returns what the promise resolves to, or a value computed from it, in one of its own `return`s. */
function returnsValueOf(sourceCode: SourceCode, promise: Node, fn: TSESTree.FunctionLike): boolean {
  const body = fn.body;
  if (!body) return false;
  const held = valuesFrom(sourceCode, promise);
  if (body.type !== "BlockStatement") return contains(body, promise);
  let found = false;
  walk(body, (n) => {
    if (found || (n !== body && isFunction(n))) return false;
    if (n.type !== "ReturnStatement" || !n.argument) return undefined;
    walk(n.argument, (m) => {
      if (m === promise) found = true;
      if (m.type === "Identifier") {
        const v = findVariable(sourceCode, m);
        if (v && held.has(v)) found = true;
      }
    });
    return false;
  });
  return found;
}

/** The promise is awaited or returned by the function itself: its rejection leaves the function. */
function returnsOrAwaits(promise: Node, fn: TSESTree.FunctionLike): boolean {
  const p = promise.parent;
  if (p?.type === "ReturnStatement" || (fn.body === promise && fn.body.type !== "BlockStatement")) return true;
  return p?.type === "AwaitExpression" && enclosingFunction(p) === fn;
}

/** The function a write is made in directly, when it has a name: not a factory around the function that writes. */
function namedWriter(write: StateWrite): TSESTree.FunctionLike | undefined {
  const fn = unitOf(write.node);
  return fn && functionName(fn) !== undefined && enclosingFunction(write.node) === fn ? fn : undefined;
}

/**
 * The functions that move a claimed row off its held value or free a lock row by identity (`markProcessed(id)`,
 * `clearLease(id)`), with the keys of those locks: whoever calls one after taking the lock through the module holds
 * the lock across its work.
 */
function freeingHelpers(facts: Pick<LockFacts, "rowReleases" | "holderWrites">): Map<TSESTree.FunctionLike, string[]> {
  const out = new Map<TSESTree.FunctionLike, string[]>();
  for (const { write, claim } of [...facts.holderWrites, ...facts.rowReleases]) {
    const fn = namedWriter(write);
    if (!fn) continue;
    const keys = out.get(fn) ?? [];
    const key = claimKey(claim);
    if (!keys.includes(key)) out.set(fn, [...keys, key]);
  }
  return out;
}

type RowHelpers<T> = ReadonlyMap<TSESTree.FunctionLike, T[]>;

/**
 * The named functions whose every state write is one of the items' (they read, or call, but write nothing else), with
 * the items' effects: what a call of such a function does wherever it is made.
 */
function soleWriters<T, E>(
  items: readonly T[],
  writeOf: (item: T) => StateWrite,
  writes: readonly StateWrite[],
  effectOf: (item: T) => E,
): Map<TSESTree.FunctionLike, E[]> {
  const out = new Map<TSESTree.FunctionLike, E[]>();
  const own = new Set(items.map(writeOf));
  for (const item of items) {
    const fn = namedWriter(writeOf(item));
    if (!fn || writes.some((w) => !own.has(w) && unitOf(w.node) === fn)) continue;
    out.set(fn, [...(out.get(fn) ?? []), effectOf(item)]);
  }
  return out;
}

/**
 * The functions whose every state write is a claim nothing in this module recovers (`answeredHere` false: what
 * `require-stale-recovery` reports here), `claimNextPending()`: a caller
 * in another module takes that lock at its call, and only a recovery somewhere in the project (the audit pairs
 * it by key) answers it.
 */
function claimHelpers(
  facts: Pick<LockFacts, "claims" | "writes" | "answeredHere">,
): Map<TSESTree.FunctionLike, ClaimEffect[]> {
  return soleWriters(
    facts.claims,
    (c) => c.write,
    facts.writes,
    (claim) => {
      const rowParam = rowParameter(claim.write);
      return {
        name: claimName(claim),
        answered: facts.answeredHere(claim),
        key: claimKey(claim),
        stuck: byKind<string>(claim, {
          "inserted-row": () => "its lock row",
          "keyed-row": () => "its lock row",
          "unenforced-row": () => "its lock row",
          lease: (c) => `${c.lock.field} set`,
          status: (c) => formatValue(c.lock.value),
        }),
        line: claim.write.node.loc.start.line,
        ...(rowParam !== undefined ? { rowParam } : {}),
      };
    },
  );
}

/** The parameter of the writing function that every branch of the write's filter pins a row by (`{ name: lockName }`). */
function rowParameter(write: StateWrite): number | undefined {
  const fn = namedWriter(write);
  if (!fn) return undefined;
  const branches = toBranches(write.filter);
  if (branches.length === 0) return undefined;
  let found: number | undefined;
  for (const branch of branches) {
    let here: number | undefined;
    for (const atom of branch) {
      if ("opaque" in atom || atom.op !== "eq" || atom.pred.values) continue;
      const n = atom.pred.node.type === "Property" ? unwrap(atom.pred.node.value as Node) : unwrap(atom.pred.node);
      if (n.type !== "Identifier") continue;
      const i = fn.params.findIndex((p) => p.type === "Identifier" && p.name === n.name);
      if (i >= 0) here = i;
    }
    if (here === undefined || (found !== undefined && found !== here)) return undefined;
    found = here;
  }
  return found;
}

/**
 * The functions whose every state write is an unchecked release of a lock row that changes hands while held
 * (`clearLease(id)`: `$unset: { lockUntil }` by `_id`): the release step itself, which a caller makes wherever it
 * calls it. A function that also does other writes (the work, then its completion) is the holder's own code,
 * judged in this module only. The verdicts are `owner-checked-release`'s in this module.
 */
function rowReleaseHelpers(
  facts: Pick<LockFacts, "rowReleases" | "writes" | "changesHands">,
): Map<TSESTree.FunctionLike, RowReleaseEffect[]> {
  const unchecked = facts.rowReleases.filter((r) => !r.ownerChecked && facts.changesHands(r.claim));
  return soleWriters(
    unchecked,
    (r) => r.write,
    facts.writes,
    (release) => ({
      key: claimKey(release.claim),
      ...describeRowRelease(release),
      line: release.write.node.loc.start.line,
      acquireLine: release.claim.write.node.loc.start.line,
    }),
  );
}

/**
 * The functions that take or free a session advisory lock on a pool the module holds (not one they are handed, and
 * not a connection they check out): what a call of them does wherever it is. A function that locks and unlocks
 * itself (`withAdvisoryLock(key, fn)`) is scoped, its own paths are analysed where it is written, and it gives none.
 */
function advisoryHelpers(ops: readonly AdvisoryLockOp[]): Map<TSESTree.FunctionLike, AdvisoryHelperEffect[]> {
  const byFn = new Map<TSESTree.FunctionLike, AdvisoryLockOp[]>();
  for (const op of ops) {
    if (op.scope !== "session" || op.via !== "pool" || op.helper || !op.client) continue;
    const fn = unitOf(op.node);
    if (!fn || functionName(fn) === undefined || isParameter(op.client, fn)) continue;
    byFn.set(fn, [...(byFn.get(fn) ?? []), op]);
  }
  const out = new Map<TSESTree.FunctionLike, AdvisoryHelperEffect[]>();
  for (const [fn, fnOps] of byFn) {
    if (fnOps.some((o) => o.fn === "lock") && fnOps.some((o) => o.fn !== "lock")) continue;
    out.set(
      fn,
      fnOps.map((o) => ({ store: o.store, fn: o.fn, try: o.try, client: o.client, line: o.node.loc.start.line })),
    );
  }
  return out;
}

/** Whether the function's parameter list names `client` (a pool it is handed: its caller's, not the module's). */
function isParameter(client: string, fn: TSESTree.FunctionLike): boolean {
  const names = new Set<string>();
  for (const p of fn.params) {
    const target = p.type === "TSParameterProperty" ? p.parameter : p;
    const id = target.type === "AssignmentPattern" ? target.left : target;
    if (id.type === "Identifier") names.add(id.name);
    if (id.type === "ObjectPattern")
      for (const prop of id.properties)
        if (prop.type === "Property" && prop.value.type === "Identifier") names.add(prop.value.name);
  }
  return names.has(client.split(".")[0]!);
}
