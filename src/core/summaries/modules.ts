/**
 * Summaries across modules. A module's exported helpers become plain data (`ExportedHelper`: effects in terms of
 * parameters, with the verdicts the helper's own module reached), and a module that imports them gets instances of
 * their effects at its calls, exactly as for its own helpers (summaries.ts), with `via` naming the helper and where
 * it lives. The audit (src/audit/) reads each module's exports and import bindings and hands every importer the
 * helpers it imports, through `settings.locksImportedHelpers`; the editor sees one file and has none.
 *
 * Reached: `fn()` of a named or default import or a destructured `require`, `X.m()` of an imported class's static
 * method or an imported object's method (`import * as locks`, `const lock = require(…)`), `x.m()` of a
 * `const x = new X(…)` of an imported class, and `this.svc.m()` of a class field or constructor parameter typed
 * as an imported class (the NestJS way of injecting a `RedisLockService`); `db.locks.m()` of an imported `db` whose
 * export holds another module's helpers (`static locks = locks`, `{ locks }`), named so by the audit.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, KeyShape, KvOp, Node, StateWrite } from "../model/accesses.js";
import type { KvFacts } from "../model/kv-locks.js";
import type {
  AdvisoryHelperEffect,
  ClaimEffect,
  ExportedHelper,
  HelperEffect,
  ImportedClaim,
  ImportedRowRelease,
  RowReleaseEffect,
} from "../model/helper-summaries.js";
import type { LockFacts } from "../model/lock-facts.js";
import { claimKey, claimName, formatValue } from "../model/names.js";
import { describeRowRelease } from "../model/describe.js";
import { helperOrigin } from "../model/accesses.js";
import { classOf, enclosingFunction, functionName, unitOf } from "../reading/units.js";
import { exportNames, reachNames } from "../reading/exports.js";
import { evaluate, findVariable, keyName, unwrap } from "../reading/values.js";
import { toBranches } from "../model/conditions.js";
import {
  argumentFor,
  clientText,
  describeCallee,
  handleCalls,
  shapeFromParts,
  type FunctionSummary,
  type KvEffect,
} from "./summaries.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** What one import binding of a module brings in: the local name, the name imported (`default`, `*`), the helpers. */
export interface ImportedHelpers {
  readonly local: string;
  /** `default`, `*` (a namespace or a whole `require`), or the imported name. */
  readonly imported: string;
  /** The helpers' module, relative to the project, for messages. */
  readonly file: string;
  readonly helpers: readonly ExportedHelper[];
}

// ---- the exporting side ----

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
  rowLocks: RowLockHelpers = { rowReleases: new Map(), claims: new Map(), frees: new Map() },
): ExportedHelper[] {
  const pooled = advisoryHelpers(advisory);
  const { rowReleases, claims, frees } = rowLocks;
  if (summaries.size === 0 && pooled.size === 0 && rowReleases.size === 0 && claims.size === 0 && frees.size === 0)
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
  ]);
  for (const fn of functions) {
    const summary = summaries.get(fn);
    const effects = summary ? summary.effects.map((e) => plainEffect(e, kv)) : [];
    const locks = pooled.get(fn);
    const rows = rowReleases.get(fn);
    const taken = claims.get(fn);
    const freed = frees.get(fn);
    for (const name of reachNames(fn, exports)) {
      out.push({
        name,
        effects,
        ...(locks ? { advisory: locks } : {}),
        ...(rows ? { rowReleases: rows } : {}),
        ...(taken ? { claims: taken } : {}),
        ...(freed ? { frees: freed } : {}),
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
}

/** The three kinds of row-lock helper of a module (`rowReleaseHelpers`, `claimHelpers`, `freeingHelpers`). */
export function rowLockHelpers(
  facts: Pick<LockFacts, "claims" | "writes" | "answeredHere" | "rowReleases" | "changesHands" | "holderWrites">,
): RowLockHelpers {
  return { rowReleases: rowReleaseHelpers(facts), claims: claimHelpers(facts), frees: freeingHelpers(facts) };
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
        stuck: claim.insert ? "its lock row" : claim.lease ? `${claim.lock.field} set` : formatValue(claim.lock.value),
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
      fnOps.map((o) => ({ fn: o.fn, try: o.try, client: o.client, line: o.node.loc.start.line })),
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

// ---- the importing side ----

/** The import bindings of a module: `import`s and top-level `require`s, by local name. */
export function importBindings(program: TSESTree.Program): { local: string; imported: string; specifier: string }[] {
  const out: { local: string; imported: string; specifier: string }[] = [];
  for (const s of program.body) {
    if (s.type === "ImportDeclaration" && s.importKind !== "type") {
      for (const sp of s.specifiers) {
        const imported =
          sp.type === "ImportDefaultSpecifier"
            ? "default"
            : sp.type === "ImportNamespaceSpecifier"
              ? "*"
              : (keyName(sp.imported, false) ?? "");
        out.push({ local: sp.local.name, imported, specifier: s.source.value });
      }
    }
    if (s.type === "VariableDeclaration") {
      for (const d of s.declarations) {
        const init = d.init && unwrap(d.init);
        if (
          !init ||
          init.type !== "CallExpression" ||
          init.callee.type !== "Identifier" ||
          init.callee.name !== "require"
        )
          continue;
        const arg = init.arguments[0];
        if (!arg || arg.type !== "Literal" || typeof arg.value !== "string") continue;
        if (d.id.type === "Identifier") out.push({ local: d.id.name, imported: "*", specifier: arg.value });
        if (d.id.type === "ObjectPattern") {
          for (const p of d.id.properties) {
            if (p.type === "Property" && p.value.type === "Identifier")
              out.push({ local: p.value.name, imported: keyName(p.key, p.computed) ?? "", specifier: arg.value });
          }
        }
      }
    }
  }
  return out;
}

/** The import binding an identifier refers to (not a local that shadows it). */
function bindingOf(
  sourceCode: SourceCode,
  id: TSESTree.Identifier,
  imports: ReadonlyMap<string, ImportedHelpers>,
): ImportedHelpers | undefined {
  const binding = imports.get(id.name);
  if (!binding) return undefined;
  const def = findVariable(sourceCode, id)?.defs[0];
  if (def?.type === "ImportBinding") return binding;
  if (
    def?.type === "Variable" &&
    def.node.init &&
    unwrap(def.node.init).type === "CallExpression" &&
    def.parent.parent?.type === "Program"
  )
    return binding;
  return undefined;
}

/** The names a call may reach an imported helper by, most specific first, and the binding. */
function importedTarget(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  imports: ReadonlyMap<string, ImportedHelpers>,
): { binding: ImportedHelpers; names: string[] } | undefined {
  const callee = unwrap(call.callee);
  if (callee.type === "Identifier") {
    const binding = bindingOf(sourceCode, callee, imports);
    return binding ? { binding, names: [binding.imported === "*" ? "default" : binding.imported] } : undefined;
  }
  if (callee.type !== "MemberExpression") return undefined;
  const method = keyName(callee.property, callee.computed);
  if (method === undefined) return undefined;
  const object = unwrap(callee.object);
  const ofClass = (id: TSESTree.Identifier | undefined, sep: "." | "#") => {
    const binding = id && bindingOf(sourceCode, id, imports);
    if (!binding) return undefined;
    const base = binding.imported === "*" ? ["default"] : [binding.imported];
    return {
      binding,
      names: [...(binding.imported === "*" && sep === "." ? [method] : []), ...base.map((b) => `${b}${sep}${method}`)],
    };
  };
  if (object.type === "Identifier") {
    const def = findVariable(sourceCode, object)?.defs[0];
    // `const lock = new RedisLock(…)`
    if (def?.type === "Variable" && def.node.init) {
      const init = unwrap(def.node.init);
      if (init.type === "NewExpression" && init.callee.type === "Identifier") return ofClass(init.callee, "#");
    }
    return ofClass(object, ".");
  }
  // `db.locks.acquire()` of an imported `db` whose export holds another module's helpers (an aggregate)
  if (object.type === "MemberExpression" && unwrap(object.object).type !== "ThisExpression") {
    const path: string[] = [];
    let o: TSESTree.Node = object;
    while (o.type === "MemberExpression") {
      const key = keyName(o.property, o.computed);
      if (key === undefined) return undefined;
      path.unshift(key);
      o = unwrap(o.object);
    }
    const binding = o.type === "Identifier" ? bindingOf(sourceCode, o, imports) : undefined;
    if (!binding) return undefined;
    const held = `${path.join(".")}.${method}`;
    return { binding, names: binding.imported === "*" ? [held, `default.${held}`] : [`${binding.imported}.${held}`] };
  }
  // `this.redisLock.acquire()` with `private readonly redisLock: RedisLockService`
  if (object.type === "MemberExpression" && unwrap(object.object).type === "ThisExpression") {
    const field = keyName(object.property, object.computed);
    const body = classOf(call);
    if (!field || !body) return undefined;
    const typeName = fieldType(body, field);
    return typeName ? ofClass(typeName, "#") : undefined;
  }
  return undefined;
}

/** The class a field or constructor parameter property is declared as (`private lock: RedisLock`). */
function fieldType(body: TSESTree.ClassBody, field: string): TSESTree.Identifier | undefined {
  const ref = (annotation: TSESTree.TSTypeAnnotation | undefined) => {
    const t = annotation?.typeAnnotation;
    return t?.type === "TSTypeReference" && t.typeName.type === "Identifier" ? t.typeName : undefined;
  };
  for (const m of body.body) {
    if (m.type === "PropertyDefinition" && m.key && keyName(m.key, m.computed) === field) {
      const v = m.value && unwrap(m.value);
      if (v?.type === "NewExpression" && v.callee.type === "Identifier") return v.callee;
      return ref(m.typeAnnotation);
    }
    if (m.type === "MethodDefinition" && m.kind === "constructor") {
      for (const p of m.value.params) {
        if (p.type !== "TSParameterProperty") continue;
        const param = p.parameter.type === "AssignmentPattern" ? p.parameter.left : p.parameter;
        if (param.type === "Identifier" && param.name === field) return ref(param.typeAnnotation);
      }
    }
  }
  return undefined;
}

function shapeAt(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  key: HelperEffect["key"],
): { key: KeyShape; keyNode: Node } | undefined {
  return "fixed" in key ? { key: key.fixed, keyNode: call } : shapeFromParts(sourceCode, call, key);
}

/** What the module's calls of imported helpers do, at the calls: key-value ops, and advisory locks on the helpers' pools. */
export interface ImportedOps {
  readonly kv: readonly KvOp[];
  readonly advisory: readonly AdvisoryLockOp[];
  readonly rows: readonly ImportedRowRelease[];
  readonly claims: readonly ImportedClaim[];
}

const NO_IMPORTED: ImportedOps = { kv: [], advisory: [], rows: [], claims: [] };

/** The ops the module's calls of imported helpers make, at the calls. */
export function importedInstances(
  sourceCode: SourceCode,
  calls: readonly TSESTree.CallExpression[],
  imported: readonly ImportedHelpers[],
): ImportedOps {
  if (imported.length === 0) return NO_IMPORTED;
  const imports = new Map(imported.map((b) => [b.local, b]));
  const out: KvOp[] = [];
  const advisory: AdvisoryLockOp[] = [];
  const rowCalls: Called<RowReleaseEffect>[] = [];
  const claimCalls: Called<ClaimEffect>[] = [];
  // Which lock (by its module and key) each call takes or frees, to keep only the instances of a holder.
  const uses: { call: TSESTree.CallExpression; file: string; key: string; takes: boolean; frees: boolean }[] = [];
  for (const call of calls) {
    const target = importedTarget(sourceCode, call, imports);
    if (!target) continue;
    const helper = target.names
      .map((n) => target.binding.helpers.find((h) => h.name === n))
      .find((h) => h !== undefined);
    if (!helper) continue;
    const file = helper.file ?? target.binding.file;
    const name = describeCallee(sourceCode, call);
    for (const effect of helper.rowReleases ?? []) rowCalls.push({ call, helper: name, file, effect });
    for (const effect of helper.claims ?? [])
      claimCalls.push({ call, helper: name, file, effect, row: rowArgument(sourceCode, call, effect.rowParam) });
    for (const key of [
      ...(helper.claims ?? []).map((c) => c.key),
      ...(helper.rowReleases ?? []).map((r) => r.key),
      ...(helper.frees ?? []),
    ]) {
      uses.push({
        call,
        file,
        key,
        takes: (helper.claims ?? []).some((c) => c.key === key),
        frees: !(helper.claims ?? []).some((c) => c.key === key),
      });
    }
    for (const effect of helper.advisory ?? []) {
      advisory.push({
        access: "advisory",
        store: "sql",
        fn: effect.fn,
        try: effect.try,
        scope: "session",
        // The pool is the helper module's: one name for every helper of that module, so its lock and unlock pair.
        client: `${file}:${effect.client}`,
        via: "pool",
        node: call,
        helper: { name: describeCallee(sourceCode, call), file, line: effect.line, pool: effect.client },
      });
    }
    for (const effect of helper.effects) {
      const shape = shapeAt(sourceCode, call, effect.key);
      if (!shape) continue;
      // Made through the returned handle: at each call of its method (`lock.release()`), the key still the call's.
      for (const at of effect.handle ? handleCalls(sourceCode, call, effect.handle) : [call]) {
        const op = importedOp(sourceCode, call, at, effect, shape, file);
        if (op) out.push(op);
      }
    }
  }
  // A caller holds a lock row it takes through the helper's module and then frees through it, in one function (the
  // worker's loop: claimNext(), the work, markDone(id)). Only then are the module's verdicts on the take (Q1) and on
  // the release (Q3) the caller's: a controller that only resumes a row, or an admin path that only clears one, holds
  // nothing, and the module's own finding stands alone.
  const holds = (call: TSESTree.CallExpression, file: string, key: string, side: "takes" | "frees") => {
    const fn = unitOf(call);
    return uses.some(
      (u) =>
        u.file === file &&
        u.key === key &&
        u[side] &&
        unitOf(u.call) === fn &&
        (side === "frees" ? u.call.range[0] > call.range[1] : u.call.range[1] < call.range[0]),
    );
  };
  return {
    kv: out,
    advisory,
    rows: grouped(rowCalls.filter((r) => holds(r.call, r.file, r.effect.key, "takes"))),
    claims: grouped(claimCalls.filter((c) => !c.effect.answered && holds(c.call, c.file, c.effect.key, "frees"))),
  };
}

interface Called<E> {
  readonly call: TSESTree.CallExpression;
  readonly helper: string;
  readonly file: string;
  readonly effect: E;
  /** The row the call takes, when the helper picks it by an argument known here (`acquireLock("nightly")`). */
  readonly row?: string;
}

/** The value of the argument a claim helper picks its row by, when it is static (`"resetDailyTasks"`). */
function rowArgument(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  index: number | undefined,
): string | undefined {
  const arg = index === undefined ? undefined : call.arguments[index];
  if (!arg || arg.type === "SpreadElement") return undefined;
  const v = evaluate(sourceCode, arg);
  return v && !v.symbolic ? String(v.value) : undefined;
}

/**
 * The calls of one helper share its flaw, fixed in the helper: one instance, at the first call, naming the others;
 * calls that take different rows by a static argument (`acquireLock("daily")`, `acquireLock("weekly")`) take
 * different locks, one instance each.
 */
function grouped<E extends { readonly line: number }>(
  calls: readonly Called<E>[],
): (Called<E> & { readonly alsoAt: readonly number[] })[] {
  const out: (Called<E> & { alsoAt: readonly number[] })[] = [];
  for (const c of calls) {
    const i = out.findIndex(
      (x) => x.file === c.file && x.helper === c.helper && x.effect.line === c.effect.line && x.row === c.row,
    );
    if (i < 0) out.push({ ...c, alsoAt: [] });
    else out[i] = { ...out[i]!, alsoAt: [...out[i]!.alsoAt, c.call.loc.start.line] };
  }
  return out;
}

/**
 * One effect of an imported helper as an op: the arguments read from `call`, the op placed at `at` (the call, or the
 * call of the returned handle's method that makes it). Undefined when the client it needs cannot be read.
 */
function importedOp(
  sourceCode: SourceCode,
  call: TSESTree.CallExpression,
  at: TSESTree.CallExpression,
  effect: HelperEffect,
  shape: { key: KeyShape; keyNode: Node },
  file: string,
): KvOp | undefined {
  let client = typeof effect.client === "string" ? `${file}:${effect.client}` : undefined;
  if (typeof effect.client !== "string") {
    const arg = argumentFor(sourceCode, call, effect.client.param);
    // A client the constructor was given, on an injected instance (`this.locks.acquire()`): the instance's own.
    if (!arg && effect.client.param.ctor) client = `${file}#client${effect.client.param.index}`;
    else if (!arg) return undefined;
    else client = clientText(sourceCode, arg);
  }
  const valueArg = effect.value ? argumentFor(sourceCode, call, effect.value) : undefined;
  const constantValue = effect.value ? (valueArg ? evaluate(sourceCode, valueArg) : undefined) : effect.constantValue;
  return {
    access: "kv",
    store: "redis",
    client: client!,
    dialect: "ioredis",
    command: effect.command,
    key: shape.key,
    keyNode: shape.keyNode,
    node: at,
    loc: at.loc,
    nx: effect.nx,
    ttl: effect.ttl === undefined || effect.ttl === "separate" ? "absent" : effect.ttl,
    ...(effect.script ? { script: effect.script } : {}),
    ...(valueArg ? { valueNode: valueArg } : {}),
    ...(constantValue ? { constantValue } : {}),
    via: {
      helper: describeCallee(sourceCode, at),
      line: effect.line,
      file,
      ...(effect.release ? { release: effect.release } : {}),
      ...(effect.ttl === "separate" ? { separateExpire: true } : {}),
    },
  };
}
