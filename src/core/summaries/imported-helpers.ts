/**
 * Summaries across modules, the importing side. A module that imports exported helpers (exported-helpers.ts) gets
 * instances of their effects at its calls, exactly as for its own helpers (summaries.ts), with `via` naming the
 * helper and where it lives. The audit (src/audit/) reads each module's exports and import bindings and hands every
 * importer the helpers it imports, through `settings.locksImportedHelpers`; the editor reads them itself (src/rule-kit/imported-modules.ts).
 *
 * Reached: `fn()` of a named or default import or a destructured `require`, `X.m()` of an imported class's static
 * method or an imported object's method (`import * as locks`, `const lock = require(…)`), `x.m()` of a
 * `const x = new X(…)` of an imported class, and `this.svc.m()` of a class field or constructor parameter typed
 * as an imported class (the NestJS way of injecting a `RedisLockService`); `db.locks.m()` of an imported `db` whose
 * export holds another module's helpers (`static locks = locks`, `{ locks }`), named so by the audit.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, KeyShape, KvOp, Node } from "../model/accesses.js";
import type {
  ClaimEffect,
  ExportedHelper,
  HelperEffect,
  ImportedClaim,
  ImportedRenewal,
  ImportedRowRelease,
  RowReleaseEffect,
} from "../model/helper-summaries.js";
import { classOf, unitOf } from "../reading/units.js";
import { evaluate, findVariable, keyName, unwrap } from "../reading/values.js";
import { argumentFor, clientText, describeCallee, handleCalls, shapeFromParts } from "./summaries.js";

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
  /** Calls of helpers that renew a lease and hand its outcome back (`ExportedHelper.renews`): renewals at the call. */
  readonly renewals: readonly ImportedRenewal[];
}

const NO_IMPORTED: ImportedOps = { kv: [], advisory: [], rows: [], claims: [], renewals: [] };

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
  const renewals: ImportedRenewal[] = [];
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
    for (const effect of helper.renews ?? []) renewals.push({ call, helper: name, file, effect });
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
        store: effect.store,
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
    renewals,
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
    store: effect.store,
    client: client!,
    dialect: effect.dialect,
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
