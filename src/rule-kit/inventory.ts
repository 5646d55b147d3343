/**
 * The per-module inventory, built once per file and shared by every rule of the plugin.
 *
 * The first `locks/*` rule that ESLint creates for a file installs the only listeners the plugin needs (calls and
 * functions, collected during ESLint's own traversal); every rule, that one included, listens to `Program:exit` on
 * its own. The first `Program:exit` to run (the first rule's, as ESLint calls them in the order the rules were
 * created) puts the collected calls through the recognizers and pairs the writes into lock facts, once; each rule's
 * callback then receives the same facts in its own listener, so ESLint's `TIMING` and `--stats` show the facts
 * under the first rule and each rule's own work under its own name. No second AST walk, no work for files without
 * candidate calls.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AdvisoryLockOp, StateAccess } from "../core/model/accesses.js";
import type { LockFacts } from "../core/model/lock-facts.js";
import { recognizers } from "../recognizers/index.js";
import type { Recognizer } from "../recognizers/recognizer.js";
import type { ModuleShape } from "../core/model/lock-facts.js";
import { buildFacts } from "../core/facts/pairing/assembly.js";
import type { UniqueKeyMap } from "../core/facts/pairing/module.js";
import { PathRecorder } from "../core/reading/code-paths.js";
import { buildHeldLocks } from "../core/facts/held-locks/analysis.js";
import type { FlagWrite } from "../core/facts/held-locks/candidates.js";
import { ignoredAcquireFailures } from "../core/facts/held-locks/ignored-acquire-failures.js";
import { markLockInserts } from "../core/reading/failures.js";
import { buildLockTables } from "../core/facts/lock-tables.js";
import { buildPromiseMemos } from "../core/facts/promise-memos.js";
import { buildPoisonedChains } from "../core/facts/promise-chains.js";
import { unheldXactLocks } from "../core/facts/held-locks/unheld-xact-locks.js";
import { buildLockFiles } from "../core/facts/lock-files.js";
import { unrecoveredImportedClaims } from "../core/facts/summary.js";
import { importedRenewals } from "../core/facts/renewals.js";
import { neverRuns } from "../core/reading/units.js";
import { helperInstances } from "../core/summaries/summaries.js";
import { stateHelperInstances } from "../core/summaries/state-helpers.js";
import { exportedHelpers, rowLockHelpers } from "../core/summaries/exported-helpers.js";
import { importBindings, importedInstances, type ImportedHelpers } from "../core/summaries/imported-helpers.js";
import { heldBindings } from "../core/reading/exports.js";
import { Linter, type Rule } from "eslint";
import { dirname } from "node:path";
import { editorImportedHelpers, readsImports, type ModuleReading, type ReadModule } from "./imported-modules.js";
import { extendVocabulary, getVocabulary, type Vocabulary } from "../core/model/settings.js";
import { lockEvidence, type Evidence } from "../core/model/evidence.js";
import { receiverTypes, type ReceiverTypes } from "../core/reading/types.js";
import { boundMethod, keyName, unwrap } from "../core/reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Context = Readonly<TSESLint.RuleContext<string, readonly unknown[]>>;
type Callback = (facts: LockFacts) => void;

interface FileState {
  readonly tagged: TSESTree.TaggedTemplateExpression[];
  done: boolean;
  /** Vocabulary that rule options add to `settings.locks` (e.g. a rule's own `progressTimeFields`). */
  readonly extensions: Partial<Vocabulary>[];
  readonly calls: TSESTree.CallExpression[];
  readonly functions: TSESTree.FunctionLike[];
  /** `x = true` / `this.x = false`: in-process guards are made of these. */
  readonly flags: FlagWrite[];
  /** The code paths of the calls, awaits, returns and throws: recorded only where a held lock can be. */
  readonly paths: PathRecorder;
  /** The rule context facts are built with (the first rule's: settings and parser services are the file's). */
  readonly context: Context;
  /** Built at the first `Program:exit`, then shared. */
  facts?: LockFacts;
}

const states = new WeakMap<SourceCode, FileState>();
/** Recognizers by tag name (`sql`, `$executeRaw`) for tagged templates. */
const taggedRecognizers = new Map<string, Recognizer[]>();
for (const r of recognizers)
  for (const t of r.tags ?? []) taggedRecognizers.set(t, [...(taggedRecognizers.get(t) ?? []), r]);

/** Recognizers that read a tagged template of a tag they do not know by its text (`taggedByContent`). */
const contentRecognizers = recognizers.filter((r) => r.taggedByContent);
function byContent(node: TSESTree.TaggedTemplateExpression): Recognizer[] {
  return contentRecognizers.filter((r) => r.taggedByContent!(node));
}

/** `sql` in sql\`…\`, `$executeRaw` in prisma.$executeRaw\`…\`. */
function tagName(node: TSESTree.TaggedTemplateExpression): string | undefined {
  const tag = unwrap(node.tag);
  if (tag.type === "Identifier") return tag.name;
  if (tag.type === "MemberExpression" && !tag.computed && tag.property.type === "Identifier") return tag.property.name;
  return undefined;
}

/** Recognizers by the method names they handle: the cheap pre-filter every call goes through. */
const byMethod = new Map<string, Recognizer[]>();
for (const r of recognizers) for (const m of r.methods) byMethod.set(m, [...(byMethod.get(m) ?? []), r]);
/** The method names that are evidence on their own: what `mayHoldLocks` looks for. */
const evidenceMethods = [...byMethod.keys()];
for (const r of recognizers) for (const m of r.companions ?? []) byMethod.set(m, [...(byMethod.get(m) ?? []), r]);
// Companions too are tried in the recognizers' order (`fs.unlink(path)` is the file system's before Redis's UNLINK).
for (const [m, list] of byMethod)
  byMethod.set(
    m,
    [...list].sort((a, b) => recognizers.indexOf(a) - recognizers.indexOf(b)),
  );

/** Recognizers by the plain function names they handle (`writeFile(path, data)` imported from `node:fs/promises`). */
const byFunction = new Map<string, Recognizer[]>();
for (const r of recognizers) for (const f of r.functions ?? []) byFunction.set(f, [...(byFunction.get(f) ?? []), r]);

function calleeFunction(call: TSESTree.CallExpression): string | undefined {
  const callee = unwrap(call.callee);
  return callee.type === "Identifier" ? callee.name : undefined;
}

function calleeMethod(call: TSESTree.CallExpression): string | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression") return undefined;
  if (!callee.computed && callee.property.type === "Identifier") return callee.property.name;
  if (callee.computed && callee.property.type === "Literal" && typeof callee.property.value === "string") {
    return callee.property.value;
  }
  return undefined;
}

const EMPTY_FACTS: LockFacts = {
  kv: {
    ops: [],
    locks: [],
    releases: [],
    takeovers: [],
    libraryLocks: [],
    viaHelpers: { locks: [], releases: [] },
    semaphores: [],
    unrefusable: [],
  },
  helpers: [],
  importedRowReleases: [],
  importedClaims: [],
  held: [],
  ignoredAcquireFailures: [],
  unheldXactLocks: [],
  lockTables: [],
  promiseMemos: [],
  poisonedChains: [],
  files: [],
  writes: [],
  reads: [],
  staleScans: [],
  claims: [],
  recoveries: [],
  holderWrites: [],
  untakenReleases: [],
  rowReleases: [],
  ownedLeaseReleases: [],
  keyDerivedHolders: [],
  overwritingLocks: [],
  stampOnlyClaims: [],
  unreadClaims: [],
  heldEffects: [],
  renewals: [],
  recoveriesOf: () => [],
  sweeps: () => [],
  staleRowsHandedOut: () => undefined,
  answeredHere: () => false,
  changesHands: () => false,
  stampedOnlyByClaims: () => false,
  stampedOnlyAtCreationOrClaim: () => false,
  clearedOutsideClaims: () => false,
  keptMoving: () => undefined,
  boundedBelowRecovery: () => false,
  heldUnderRowLock: () => false,
};

/** Runs every recognizer over the candidate calls. Exported for the tests and the audit. */
export function collectAccesses(
  sourceCode: SourceCode,
  calls: readonly TSESTree.CallExpression[],
  tagged: readonly TSESTree.TaggedTemplateExpression[] = [],
  types?: ReceiverTypes,
): StateAccess[] {
  const accesses: StateAccess[] = [];
  const ctx = { sourceCode, scratch: new Map<string, unknown>() };
  for (const node of tagged) {
    for (const recognizer of taggedRecognizers.get(tagName(node) ?? "") ?? byContent(node)) {
      const access = recognizer.recognizeTagged?.(node, ctx);
      if (access) {
        accesses.push(access);
        break;
      }
    }
  }
  // Methods some recognizer learnt from this file (ioredis defineCommand names), by recognizer.
  const learnt = new Map<string, Recognizer[]>();
  for (const recognizer of recognizers) {
    for (const name of recognizer.prepare?.(calls, ctx) ?? [])
      learnt.set(name, [...(learnt.get(name) ?? []), recognizer]);
  }
  // Methods held bound to their receiver (`const setnx = promisify(client.setnx).bind(client)`), in a module that
  // binds any: their calls are read as the method's.
  const binds = /\.bind\s*\(|promisify\s*\(/.test(sourceCode.text);
  for (const call of calls) {
    let method = calleeMethod(call);
    const fn = method === undefined ? calleeFunction(call) : undefined;
    if (method === undefined && fn === undefined) continue;
    let view = call;
    if (method === undefined && binds && !byFunction.has(fn!)) {
      const member = boundMethod(sourceCode, unwrap(call.callee) as TSESTree.Identifier);
      const name = member && keyName(member.property, member.computed);
      if (member && name !== undefined && byMethod.has(name)) {
        view = boundView(call, member);
        method = name;
      }
    }
    const candidates = method === undefined ? byFunction.get(fn!) : (byMethod.get(method) ?? learnt.get(method));
    for (const recognizer of candidates ?? []) {
      const access = recognizer.recognize(view, ctx);
      // Type-aware mode: a receiver the checker proves is not this store's client is not its access.
      if (access && recognizer.packages && types?.verdict(recognizer.packages, view, recognizer.store) === "other")
        continue;
      if (access) {
        accesses.push(view === call ? access : throughBinding(access, call));
        break;
      }
    }
  }
  accesses.push(...stateHelperInstances(sourceCode, accesses));
  markLockInserts(sourceCode, accesses);
  return accesses;
}

/**
 * A call of a bound method as the recognizers read it: the call with the method's member as its callee. The view is
 * read, never reported: its access is given back the real call (`throughBinding`).
 */
function boundView(call: TSESTree.CallExpression, member: TSESTree.MemberExpression): TSESTree.CallExpression {
  return { ...call, callee: member };
}

/**
 * The access a bound method's call makes, pointed at the call itself. What a recognizer would rewrite is dropped: its
 * edits address the method's member where the binding was made, not this call.
 */
function throughBinding(access: StateAccess, call: TSESTree.CallExpression): StateAccess {
  const out: Record<string, unknown> = { ...access, node: call };
  if ("loc" in access) out["loc"] = call.loc;
  for (const key of ["edits", "addPredicate", "recoveryWrite", "staleRowsDelete"]) delete out[key];
  return out as unknown as StateAccess;
}

/** What the recognizers add to the model's text evidence (core/model/evidence.ts). */
const storeEvidence = recognizers.flatMap((r) => (r.evidence ? [r.evidence] : []));
/** The modules the first rule found no lock evidence in: no rule listens to them. */
const lockFree = new WeakMap<SourceCode, true>();

/**
 * What a module may hold, from its text alone (issue 17): the audit, which also needs modules that only recover or
 * export helpers, says `settings.locksAllModules`, as does the test that proves the check changes no finding. Rule
 * options add time fields only, which make no lock, so the settings' vocabulary decides.
 */
function evidenceOf(context: Context): Evidence {
  if (context.settings["locksAllModules"] === true) return "held";
  return lockEvidence(getVocabulary(context.settings), storeEvidence)(context.sourceCode.text);
}

/**
 * Gives a rule the module's lock facts. `extension` adds a rule's vocabulary options to what the shared model
 * recognises (a timestamp the rule was told about must count as one when the facts are built). Returns the listeners the rule must return from `create` (the collecting
 * listeners for the first rule of a file, and a `Program:exit` for every rule); `callback` runs once, in that rule's
 * own `Program:exit`.
 */
export function onLockFacts(
  context: Context,
  callback: Callback,
  extension?: Partial<Vocabulary>,
): TSESLint.RuleListener {
  const sourceCode = context.sourceCode;
  // A module with no lock evidence gives every rule empty facts: no listener at all, not even `Program:exit`.
  if (lockFree.has(sourceCode) && context.settings["locksAllModules"] !== true) return {};
  const existing = states.get(sourceCode);
  if (existing && !existing.done) {
    if (extension) existing.extensions.push(extension);
    return {
      "Program:exit"() {
        callback(factsOf(existing));
      },
    };
  }
  const evidence = evidenceOf(context);
  if (evidence === "none") {
    lockFree.set(sourceCode, true);
    return {};
  }
  const recording = evidence === "held";
  const state: FileState = {
    done: false,
    extensions: extension ? [extension] : [],
    calls: [],
    tagged: [],
    functions: [],
    flags: [],
    paths: new PathRecorder(),
    context,
  };
  states.set(sourceCode, state);
  const { paths } = state;
  // Without its listeners the recorder sees no code path and records nothing: awaits, returns and throws are
  // listened to only for it.
  const recordOnly = recording
    ? {
        ...paths.listeners,
        AwaitExpression(node: TSESTree.AwaitExpression) {
          paths.record(node);
        },
        ReturnStatement(node: TSESTree.ReturnStatement) {
          paths.record(node);
        },
        ThrowStatement(node: TSESTree.ThrowStatement) {
          paths.record(node);
        },
        // Where a `catch` starts: a way into it can be told apart (code-paths.ts `escapes`, `refused`).
        CatchClause(node: TSESTree.CatchClause) {
          paths.record(node);
        },
      }
    : {};
  return {
    ...recordOnly,
    CallExpression(node) {
      state.calls.push(node);
      paths.record(node);
    },
    AssignmentExpression(node) {
      if (node.operator === "=" && node.right.type === "Literal" && typeof node.right.value === "boolean") {
        state.flags.push(node);
        paths.record(node);
      }
    },
    UnaryExpression(node) {
      // `delete inFlight[id]`: a flag kept per key, cleared (held-locks/candidates.ts `flagLocks`).
      if (node.operator === "delete" && node.argument.type === "MemberExpression") {
        state.flags.push(node);
        paths.record(node);
      }
    },
    TaggedTemplateExpression(node) {
      if (taggedRecognizers.has(tagName(node) ?? "") || byContent(node).length > 0) {
        state.tagged.push(node);
        paths.record(node);
      }
    },
    // Plain node types, not the `:function` selector: cheaper to dispatch on every node.
    FunctionDeclaration(node) {
      state.functions.push(node);
    },
    FunctionExpression(node) {
      state.functions.push(node);
    },
    ArrowFunctionExpression(node) {
      state.functions.push(node);
    },
    "Program:exit"() {
      callback(factsOf(state));
    },
  };
}

/**
 * The module's lock facts, built by the first `Program:exit` that asks (by then ESLint has visited every node, and
 * every rule has added its vocabulary in `create`), then the same object for every rule of this lint of the file.
 */
function factsOf(state: FileState): LockFacts {
  if (state.facts) return state.facts;
  state.done = true;
  const { context, paths } = state;
  const sourceCode = context.sourceCode;
  const vocabulary = extendVocabulary(getVocabulary(context.settings), state.extensions);
  let facts: LockFacts;
  try {
    // Code that never runs (below a `return` at the top of a handler) does nothing: no access is read from it.
    const runs = <T extends TSESTree.Node>(nodes: readonly T[]) =>
      nodes.some(neverRuns) ? nodes.filter((n) => !neverRuns(n)) : nodes;
    const liveCalls = runs(state.calls);
    const accesses = collectAccesses(sourceCode, liveCalls, runs(state.tagged), receiverTypes(context));
    const shape: ModuleShape = { calls: state.calls, functions: state.functions };
    // Calls of helpers (this module's, and in the audit those it imports) are the helpers' ops at the call.
    const audit = auditGiven(context.settings, context.filename);
    const given = importedHelpersOf(audit);
    // The editor reads the modules this one imports itself (imported-modules.ts); the audit hands them over.
    const importedHelpers =
      given.length === 0 && readsImports(context.settings)
        ? editorImportedHelpers(context, sourceCode.ast, readImportedModule)
        : given;
    const imported = importedInstances(sourceCode, liveCalls, importedHelpers);
    const helpers = helperInstances(sourceCode, accesses, shape, imported.kv);
    const built = buildFacts(
      sourceCode,
      accesses,
      shape,
      vocabulary,
      helpers.instances,
      recoveredElsewhereOf(audit),
      uniqueKeysOf(context.settings),
    );
    const advisory = accesses.filter((a): a is AdvisoryLockOp => a.access === "advisory");
    // An imported helper's advisory lock is the held lock of the code that calls it.
    const viaHelpers = imported.advisory;
    const lockTables = buildLockTables(sourceCode, accesses, vocabulary);
    facts = {
      ...built,
      renewals:
        imported.renewals.length > 0
          ? [...built.renewals, ...importedRenewals(sourceCode, shape, imported.renewals)]
          : built.renewals,
      held: buildHeldLocks(
        sourceCode,
        viaHelpers.length > 0 ? [...accesses, ...viaHelpers] : accesses,
        built.kv,
        shape,
        state.flags,
        paths,
        lockTables,
      ),
      ignoredAcquireFailures: ignoredAcquireFailures(sourceCode, accesses),
      unheldXactLocks: unheldXactLocks(sourceCode, accesses, state.calls),
      lockTables,
      promiseMemos: buildPromiseMemos(sourceCode, context.filename),
      poisonedChains: buildPoisonedChains(sourceCode, context.filename),
      files: buildLockFiles(sourceCode, accesses, shape, vocabulary),
      helpers: exportedHelpers(sourceCode, helpers.summaries, built.kv, advisory, rowLockHelpers(sourceCode, built)),
      importedRowReleases: imported.rows,
      importedClaims: unrecoveredImportedClaims(sourceCode, imported.claims, built),
    };
  } catch (error) {
    // A recognizer or the model met code it did not expect. One odd file must not stop a whole lint run:
    // it gets no lock findings. Tests and LOCKS_DEBUG=1 see the error.
    if (process.env["LOCKS_DEBUG"]) throw error;
    facts = EMPTY_FACTS;
  }
  state.facts = facts;
  return facts;
}

/**
 * What the audit hands this module (src/audit/ only; the editor reads imported helpers itself, imported-modules.ts): under
 * `settings.locksAuditFiles[filename]` when one configuration lints many modules, each with its own (the audit's
 * batches, which ESLint's worker threads share), else `settings` itself (one module's lint).
 */
function auditGiven(settings: Readonly<Record<string, unknown>>, filename: string): Readonly<Record<string, unknown>> {
  const files = settings["locksAuditFiles"];
  if (!files || typeof files !== "object") return settings;
  const own = (files as Record<string, unknown>)[filename];
  return own && typeof own === "object" ? (own as Record<string, unknown>) : {};
}

/**
 * Lints an imported module's text for what the editor needs of it (imported-modules.ts): its exported helpers and
 * the bindings its exports hold, from the same inventory and the same parser as the file that imports it, without
 * type information and without reading that module's own imports. A module with no lock evidence is not parsed.
 */
const readImportedModule: ReadModule = (path, text, context) => {
  if (lockEvidence(getVocabulary(context.settings), storeEvidence)(text) === "none") return undefined;
  let reading: ModuleReading | undefined;
  const collect: Rule.RuleModule = {
    meta: { type: "problem", schema: [] },
    create(inner) {
      return onLockFacts(inner as unknown as Context, (facts) => {
        const program = inner.sourceCode.ast as unknown as TSESTree.Program;
        reading = { helpers: facts.helpers, bindings: importBindings(program), held: heldBindings(program) };
      }) as Rule.RuleListener;
    },
  };
  const options = context.languageOptions as { parser?: Linter.Parser } | undefined;
  try {
    new Linter({ configType: "flat", cwd: dirname(path) }).verify(
      text,
      [
        {
          files: ["**/*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}"],
          languageOptions: {
            ...(options?.parser ? { parser: options.parser } : {}),
            ecmaVersion: "latest",
            sourceType: path.endsWith(".cjs") ? "commonjs" : "module",
            parserOptions: { ecmaFeatures: { jsx: true } },
          },
          plugins: { "locks-read": { rules: { collect } } },
          rules: { "locks-read/collect": "error" },
          settings: { ...context.settings, locksNestedRead: true },
        },
      ],
      { filename: path },
    );
  } catch (error) {
    if (process.env["LOCKS_DEBUG"]) throw error;
    return undefined;
  }
  return reading;
};

/** The helpers the audit hands a module that imports them (`locksImportedHelpers`). */
function importedHelpersOf(settings: Readonly<Record<string, unknown>>): readonly ImportedHelpers[] {
  const given = settings["locksImportedHelpers"];
  return Array.isArray(given) ? (given as ImportedHelpers[]) : [];
}

/**
 * The lines of this module's claims that the audit paired with a stale recovery in another module
 * (`locksRecoveredElsewhere`): those claims can pass to a new holder while held.
 */
function recoveredElsewhereOf(settings: Readonly<Record<string, unknown>>): ReadonlySet<number> {
  const given = settings["locksRecoveredElsewhere"];
  return new Set(Array.isArray(given) ? given.filter((n): n is number => typeof n === "number") : []);
}

/**
 * The unique keys the project's schemas declare (`settings.locksUniqueKeys`, set by src/audit/ only, from
 * src/audit/schemas.ts): without them an insert's exclusivity is unknown. Read once per file, at its end.
 */
function uniqueKeysOf(settings: Readonly<Record<string, unknown>>): UniqueKeyMap {
  const given = settings["locksUniqueKeys"];
  if (!given || typeof given !== "object") return new Map();
  return new Map(
    Object.entries(given as Record<string, unknown>).filter(
      (e): e is [string, string[][]] =>
        Array.isArray(e[1]) && e[1].every((k) => Array.isArray(k) && k.every((f) => typeof f === "string")),
    ),
  );
}

let candidateText: RegExp | undefined;

/**
 * Whether a module's text could give the inventory anything: a call of a method, or of a function, that some
 * recognizer handles, a tagged template some recognizer reads, a boolean assignment (in-process guards) or a slot
 * filled when empty (promise memos). The
 * inventory looks at nothing else, so a module for which this is false yields no lock facts and no finding from
 * any rule. The project-wide audit uses it to skip parsing such modules (DTOs, types, views); conservative: a word
 * in a comment or a string is enough to say yes.
 */
export function mayHoldLocks(text: string): boolean {
  if (!candidateText) {
    const escape = (s: string) => s.replace(/[$]/g, "\\$");
    // A companion is no evidence as a method or as a function (`existsSync(p)` reads a lock file, or anything).
    const companions = new Set(recognizers.flatMap((r) => [...(r.companions ?? [])]));
    const functions = recognizers.flatMap((r) => [...(r.functions ?? [])]).filter((f) => !companions.has(f));
    const methods = [...new Set([...evidenceMethods, ...functions])].map(escape).join("|");
    const tags = [...taggedRecognizers.keys()].map(escape).join("|");
    candidateText = new RegExp(
      // `.update(`, `?.update(`, `.update<T>(`, `["update"](`, `writeFile(`, sql`…`, `running = true`, and a slot
      // filled when empty (`p ??= connect()`, `p = p || connect()`), a promise memo's form
      `(?:^|[^\\w$])(?:${methods})\\s*(?:\\?\\.\\s*)?[(<]|\\.(?:${methods})\\s*\\)?\\s*\\.\\s*bind\\s*\\(|\\[\\s*["'\`](?:${methods})["'\`]\\s*\\]|(?:^|[^\\w$])(?:${tags})\\s*(?:<[^>]*>\\s*)?\`|[^=!<>]=\\s*(?:true|false)\\b|(?:\\|\\||\\?\\?)=|(?<![\\w$.])([\\w$.]{1,64})\\s*=\\s*\\1\\s*(?:\\|\\||\\?\\?)`,
    );
  }
  return candidateText.test(text);
}
