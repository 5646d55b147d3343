/**
 * Fencing (the second seed): the effects a module makes while holding a lock, and whether a holder that resumed
 * after its lock lapsed (a GC pause, a suspended VM) is refused or harmless when it makes them late.
 *
 * Locks: database claims (pairing.ts), key-value locks (kv-pairing.ts) and lock libraries (Redlock,
 * redis-semaphore). A lock *yields a token* when the holder gets something only it holds: an owner, token or
 * version column the claim stamps (`settings.locks.ownerFields`), a key-value lock's value (`SET key token NX PX`),
 * Redlock's `lock.value`, a semaphore's `identifier`.
 *
 * Effects, read here:
 * - rows the claim holds, when the claim stamps a token: if the claim can take over a stale lease (a take-over
 *   branch, or a separate write that re-stamps the owner of rows still claimed), the new holder has the same
 *   status, so only the token fences; results written onto the claimed row (`outputUrl`) must be fenced like the
 *   completion (the token, or the claimed status when nothing takes over);
 * - object-storage and file writes (`ObjectWrite`): harmless late when the location is keyed by the job (the
 *   claimed row's id, the lock key's variables, an id named for what is locked, a content hash) or new on every
 *   run (a random id, a time: it overwrites nothing), when the store refuses it (conditional), when it carries
 *   the token, or when it is a temporary file; a location passed in from elsewhere (`key`, `opts.path`,
 *   `this.target`) is unknown and yields nothing;
 * - under a key-value or library lock: a write of a state field to the row the lock is keyed by, with no
 *   condition on that field or on an owner column (the completion recorded unconditionally).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Assignment, Node, ObjectWrite, StateWrite } from "../model/accesses.js";
import type { Claim, HolderWrite, KeyDerivedHolder } from "../model/claims.js";
import type { KvFacts } from "../model/kv-locks.js";
import type { HeldEffect, EffectLock, LockToken } from "../model/held-locks.js";
import type { ResolvedVocabulary } from "../model/settings.js";
import { agePredicates, allowedIn, isOpaque, ownerPinned, pins, toBranches } from "../model/conditions.js";
import { formatValue, normalizeModel, sameValue } from "../model/names.js";
import { normalizeName } from "../model/settings.js";
import { describeKey, keyShape } from "../reading/keys.js";
import { findVariable, getConstInit, keyName, resultBinding, unwrap } from "../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** Where code runs while a lock is held (built from the module's calls in pairing.ts). */
export interface Holding {
  /** `effect` runs while the lock `acquire` took is held: after it, in what it reaches, in a helper's callers. */
  after(acquire: Node, effect: Node): boolean;
  /** `effect` runs in a callback handed to `call` (Redlock's `using(keys, ttl, routine)`), or in what it reaches. */
  within(call: Node, effect: Node): boolean;
}

export interface FencingInput {
  readonly sourceCode: SourceCode;
  readonly vocabulary: ResolvedVocabulary;
  readonly claims: readonly Claim[];
  readonly holderWrites: readonly HolderWrite[];
  readonly writes: readonly StateWrite[];
  readonly objects: readonly ObjectWrite[];
  readonly kv: KvFacts;
  readonly holding: Holding;
}

/** A lock as the effects see it. */
interface Held {
  readonly lock: EffectLock;
  readonly token?: LockToken;
  /** Names that say which job the lock is about: the claimed row's id variable, the variables in a lock key. */
  readonly jobNames: ReadonlySet<string>;
  /** What the lock is about, normalised: the claimed model (`export`), the words of a lock key (`lock:export:*`). */
  readonly subjects: ReadonlySet<string>;
  holds(effect: Node): boolean;
}

/** Lock libraries whose locks expire (a TTL), so that a paused holder can come back after losing them. */
const DISTRIBUTED: ReadonlySet<string> = new Set(["redlock", "redis-semaphore"]);
/** Row fields that record progress and liveness, not results: a late write of them loses nothing. */
const BOOKKEEPING =
  /progress|percent|attempt|retr(?:y|ies)|count|step|heartbeat|lease|lock|owner|worker|done$|processed|remaining|total/;
/** Names of an identity, and what is left of them is whose (`exportId` → `export`, `id` → nothing). */
const IDENTITY_NAME = /^(.*?)_?(?:id|Id|ID|key|Key|slug|Slug|uuid|Uuid|UUID)$/;
/** Names of a content hash: a location built from one is the same for the same content (content-addressed). */
const CONTENT_NAME = /(?:^|[a-z_])(?:hash|digest|checksum|sha\d*|md5|etag|contentId)$/i;
/** Variable names that say nothing about whose row they hold. */
const GENERIC_ROW =
  /^(?:row|record|item|entity|doc|document|data|result|entry|payload|input|params|args|job|task|work|message|msg)$/i;
/** Words of a lock key that say nothing about what is locked. */
const KEY_NOISE = new Set([
  "lock",
  "locks",
  "mutex",
  "lease",
  "leases",
  "semaphore",
  "leader",
  "key",
  "keys",
  "job",
  "jobs",
]);
/** Names of a location someone else decided (a parameter `key`, `opts.path`). */
const LOCATION_NAME =
  /(?:^|[a-z_])(?:key|path|name|dest|destination|location|target|file|filename|url|uri|prefix|folder|dir|directory)$/i;
/** Calls whose result is new on every run: a location built from one is never the same twice (it overwrites nothing). */
const GENERATOR =
  /^(?:randomUUID|uuid|uuidv4|v4|v1|v7|nanoid|cuid|cuid2|createId|ulid|now|random|randomBytes|toISOString|getTime|valueOf|hrtime)$/;
/** Calls that only reshape their inputs (`path.join`, `String`, `encodeURIComponent`, `.toLowerCase()`). */
const TRANSPARENT =
  /^(?:join|resolve|normalize|relative|basename|dirname|extname|format|String|encodeURIComponent|encodeURI|toString|toLowerCase|toUpperCase|trim|replace|replaceAll|slice|substring|padStart|padEnd|concat|toFixed)$/;

// ---- names in expressions ----

/** Identifier names and member texts (`job`, `job.id`) an expression uses, through `const` bindings. */
function namesIn(sourceCode: SourceCode, node: Node | undefined, out = new Set<string>(), depth = 0): Set<string> {
  if (!node || depth > 6) return out;
  const n = unwrap(node);
  switch (n.type) {
    case "Identifier": {
      out.add(n.name);
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") namesIn(sourceCode, init, out, depth + 1);
      return out;
    }
    case "MemberExpression":
      out.add(sourceCode.getText(n).replace(/\s+/g, "").replace(/\?\./g, "."));
      namesIn(sourceCode, n.object, out, depth + 1);
      if (n.computed) namesIn(sourceCode, n.property, out, depth + 1);
      return out;
    case "Property":
      if (n.computed) namesIn(sourceCode, n.key, out, depth + 1);
      return namesIn(sourceCode, n.value, out, depth + 1);
    case "CallExpression":
    case "NewExpression":
      if (n.callee.type === "MemberExpression") namesIn(sourceCode, n.callee.object, out, depth + 1);
      for (const a of n.arguments) namesIn(sourceCode, a, out, depth + 1);
      return out;
    default:
      for (const key of [
        "expressions",
        "quasis",
        "left",
        "right",
        "argument",
        "elements",
        "properties",
        "consequent",
        "alternate",
        "test",
        "expression",
      ] as const) {
        const child = (n as unknown as Record<string, unknown>)[key];
        if (Array.isArray(child)) {
          for (const c of child)
            if (c && typeof c === "object" && "type" in c) namesIn(sourceCode, c as Node, out, depth + 1);
        } else if (child && typeof child === "object" && "type" in child)
          namesIn(sourceCode, child as Node, out, depth + 1);
      }
      return out;
  }
}

/** The variable a call's result is stored in (`const job = await Job.findOneAndUpdate(…)`, `const [row] = …`). */
const resultName = (node: Node): string | undefined => resultBinding(node)?.name;

/** The token expression's text when a write elsewhere can name it: the same binding in scope there, or `this.x`. */
export function tokenTextAt(sourceCode: SourceCode, token: LockToken | undefined, at: Node): string | undefined {
  const n = token?.node && unwrap(token.node);
  if (!n) return undefined;
  if (n.type === "Identifier") {
    let scope: TSESLint.Scope.Scope | null = sourceCode.getScope(at);
    while (scope) {
      const v = scope.set.get(n.name);
      if (v) return v === findVariable(sourceCode, n) ? n.name : undefined;
      scope = scope.upper;
    }
    return undefined;
  }
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression" && !n.computed)
    return sourceCode.getText(n);
  return undefined;
}

// ---- the locks ----

function claimToken(claim: Claim, vocabulary: ResolvedVocabulary): LockToken | undefined {
  for (const a of claim.write.assignments) {
    if (!vocabulary.isOwnerField(a.field) || a.value.kind !== "other") continue;
    const n = unwrap(a.valueNode);
    const nameable = n.type === "Identifier" || (n.type === "MemberExpression" && !n.computed);
    return { field: a.field, ...(nameable ? { node: n } : {}), text: a.field };
  }
  return undefined;
}

/** The job a claim is about: the values that pick its row (`id: jobId`) and the variable holding the claimed row. */
function claimJobNames(sourceCode: SourceCode, claim: Claim, vocabulary: ResolvedVocabulary): Set<string> {
  const out = new Set<string>();
  for (const branch of toBranches(claim.write.filter)) {
    for (const atom of branch) {
      if ("opaque" in atom || atom.op !== "eq" || atom.pred.values !== undefined) continue;
      if (
        normalizeName(atom.pred.field) === normalizeName(claim.lock.field) ||
        vocabulary.isOwnerField(atom.pred.field)
      )
        continue;
      const at = atom.pred.node;
      namesIn(sourceCode, at.type === "Property" ? at.value : at, out);
    }
  }
  const row = resultName(claim.write.node);
  if (row) out.add(row);
  return out;
}

/**
 * A write that hands rows still claimed to a new owner when their lease looks stale (`WHERE status = 'RUNNING' AND
 * heartbeat_at < $1 SET locked_by = $2`): the row keeps its status under a new holder.
 */
export function hasTakeoverWrite(claim: Claim, writes: readonly StateWrite[], vocabulary: ResolvedVocabulary): boolean {
  const { field, value } = claim.lock;
  return writes.some((w) => {
    if (
      w === claim.write ||
      w.effect === "insert" ||
      w.effect === "delete" ||
      normalizeModel(w.model) !== normalizeModel(claim.write.model)
    )
      return false;
    const branches = toBranches(w.filter);
    if (
      branches.length === 0 ||
      !branches.every((b) => pins(b, field, value) && agePredicates(b, vocabulary).length > 0)
    )
      return false;
    const stays = w.assignments.every(
      (a) =>
        normalizeName(a.field) !== normalizeName(field) ||
        (a.value.kind === "static" && sameValue(a.value.value, value)),
    );
    return stays && w.assignments.some((a) => vocabulary.isOwnerField(a.field) && a.value.kind === "other");
  });
}

/** A key-value or library lock's value as a token: `token` in `SET key token NX PX`, `lock.value`, `mutex.identifier`. */
function valueToken(sourceCode: SourceCode, node: Node | undefined): LockToken | undefined {
  if (!node) return undefined;
  const n = unwrap(node);
  const nameable = n.type === "Identifier" || (n.type === "MemberExpression" && !n.computed);
  return { ...(nameable ? { node: n } : {}), text: sourceCode.getText(n) };
}

function libraryToken(sourceCode: SourceCode, op: { library: string; op: string; node: Node }): LockToken | undefined {
  if (op.op === "using") return undefined; // Redlock's using() hands the routine a signal, not the lock
  if (op.library === "redlock") {
    const name = resultName(op.node);
    return name ? { text: `${name}.value` } : undefined;
  }
  const callee = op.node.type === "CallExpression" ? unwrap(op.node.callee) : undefined;
  return callee?.type === "MemberExpression" ? { text: `${sourceCode.getText(callee.object)}.identifier` } : undefined;
}

/** The words of a lock key's static text that say what is locked: `lock:payout-batch:*` → `payout`, `batch`. */
function keyWords(text: string): Set<string> {
  return new Set(
    text
      .split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/)
      .map((w) => normalizeModel(w))
      .filter((w) => w.length >= 3 && !KEY_NOISE.has(w)),
  );
}

function heldLocks(input: FencingInput): Held[] {
  const { sourceCode, vocabulary, holding } = input;
  const out: Held[] = [];
  for (const claim of input.claims) {
    const token = claimToken(claim, vocabulary);
    out.push({
      lock: { kind: "claim", claim },
      ...(token ? { token } : {}),
      jobNames: claimJobNames(sourceCode, claim, vocabulary),
      subjects: new Set([normalizeModel(claim.lock.model)]),
      holds: (effect) => holding.after(claim.write.node, effect),
    });
  }
  for (const lock of [...input.kv.locks, ...input.kv.viaHelpers.locks]) {
    if (!lock.lockLike) continue;
    const token = lock.acquire.constantValue ? undefined : valueToken(sourceCode, lock.acquire.valueNode);
    out.push({
      lock: { kind: "kv", lock },
      ...(token ? { token } : {}),
      jobNames: namesIn(sourceCode, lock.acquire.keyNode),
      subjects: keyWords(lock.acquire.key.opaque ? "" : lock.acquire.key.text),
      holds: (effect) => holding.after(lock.acquire.node, effect),
    });
  }
  for (const op of input.kv.libraryLocks) {
    // Distributed locks only: an in-process mutex does not lapse while its holder is paused.
    if ((op.op !== "acquire" && op.op !== "using") || !DISTRIBUTED.has(op.library)) continue;
    const token = libraryToken(sourceCode, op);
    out.push({
      lock: { kind: "library", op },
      ...(token ? { token } : {}),
      jobNames: namesIn(sourceCode, op.keyNode),
      subjects: keyWords(op.keyNode ? keyShape(sourceCode, op.keyNode).text : ""),
      holds: (effect) => (op.op === "using" ? holding.within(op.node, effect) : holding.after(op.node, effect)),
    });
  }
  return out;
}

// ---- object locations ----

type Verdict = "keyed" | "fresh" | "unknown" | "fixed";

/** A part keyed by the job or new on every run decides the whole location; an unknown part makes it unknown. */
function combine(verdicts: readonly Verdict[]): Verdict {
  for (const v of ["keyed", "fresh", "unknown"] as const) if (verdicts.includes(v)) return v;
  return "fixed";
}

function rootOf(node: Node): Node {
  let n = unwrap(node);
  while (n.type === "MemberExpression") n = unwrap(n.object);
  return n;
}

/** The job the locks an effect runs under are about. */
interface Job {
  readonly names: ReadonlySet<string>;
  readonly subjects: ReadonlySet<string>;
}

/** An identity name (`exportId`, `id`, `jobKey`) and whether it is the job's: bare, or whose owner is a subject. */
function identityOf(name: string, job: Job): "job" | "other" | undefined {
  const m = IDENTITY_NAME.exec(name);
  if (!m) return undefined;
  return m[1] === "" || relates(m[1]!, job) ? "job" : "other";
}

/** `renderJob` relates to the subject `job`, `exports` to `export`. */
function relates(name: string, job: Job): boolean {
  const n = normalizeModel(name);
  return n.length > 0 && [...job.subjects].some((s) => n.includes(s) || s.includes(n));
}

/**
 * Whether an object key or path is the same for every run of this job and no other (`keyed`: built from the job's
 * id, the lock key's variables, a content hash), new on every run (`fresh`: a random id, a time: it overwrites
 * nothing, only the record pointing at it needs fencing), shared with other jobs (`fixed`: static text, another
 * row's id, an input that is no identity), or decided elsewhere (`unknown`: a parameter named like a location, a
 * helper's result, `this.path`).
 */
function locate(sourceCode: SourceCode, node: Node, job: Job, depth = 0): Verdict {
  if (depth > 6) return "unknown";
  const n = unwrap(node);
  const all = (nodes: readonly (Node | null)[]) =>
    combine(
      nodes
        .filter((x): x is Node => x !== null && x.type !== "SpreadElement")
        .map((x) => locate(sourceCode, x, job, depth + 1)),
    );
  switch (n.type) {
    case "Literal":
      return "fixed";
    case "TemplateLiteral":
      return all(n.expressions);
    case "BinaryExpression":
    case "LogicalExpression":
      return all([n.left as Node, n.right]);
    case "ConditionalExpression":
      return all([n.consequent, n.alternate]);
    case "AwaitExpression":
      return locate(sourceCode, n.argument, job, depth + 1);
    case "ArrayExpression":
      return all(n.elements);
    case "Identifier": {
      if (job.names.has(n.name) || CONTENT_NAME.test(n.name)) return "keyed";
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") return locate(sourceCode, init, job, depth + 1);
      const def = findVariable(sourceCode, n)?.defs[0];
      if (def?.type !== "Parameter") return "unknown";
      if (identityOf(n.name, job) === "job") return "keyed";
      // A parameter named like a location was decided by the caller; any other is an input of the job (`format`,
      // `projectId`).
      return LOCATION_NAME.test(n.name) ? "unknown" : "fixed";
    }
    case "MemberExpression": {
      const text = sourceCode.getText(n).replace(/\s+/g, "").replace(/\?\./g, ".");
      const root = rootOf(n);
      const property = keyName(n.property, n.computed);
      if (job.names.has(text) || (root.type === "Identifier" && job.names.has(root.name))) return "keyed";
      if (root.type === "Identifier" && root.name === "process") return "fixed"; // process.env.BUCKET_PREFIX
      if (property !== undefined && CONTENT_NAME.test(property)) return "keyed";
      const identity = property === undefined ? undefined : identityOf(property, job);
      const locationLike = property !== undefined && LOCATION_NAME.test(property);
      if (identity === "job" && IDENTITY_NAME.exec(property!)![1] !== "") return "keyed"; // payload.exportId
      if (identity === "job" && !locationLike) {
        // `export.id`, `row.id`: the job's row; `project.id`: another row's.
        const owner = unwrap(n.object);
        const ownerName =
          owner.type === "Identifier"
            ? owner.name
            : owner.type === "MemberExpression"
              ? keyName(owner.property, owner.computed)
              : undefined;
        return ownerName === undefined || GENERIC_ROW.test(ownerName) || relates(ownerName, job) ? "keyed" : "fixed";
      }
      if (locationLike) return "unknown"; // opts.key, job.outputPath: decided elsewhere
      if (identity === "other") return "fixed"; // job.projectId
      if (root.type === "Identifier") {
        const init = getConstInit(sourceCode, root);
        if (init && unwrap(init).type === "ObjectExpression") return "fixed"; // a module's config object
      }
      return "unknown";
    }
    case "NewExpression":
      return n.callee.type === "Identifier" && n.callee.name === "Date" ? "fresh" : "unknown";
    case "CallExpression": {
      const callee = unwrap(n.callee);
      const name =
        callee.type === "Identifier"
          ? callee.name
          : callee.type === "MemberExpression"
            ? keyName(callee.property, callee.computed)
            : undefined;
      if (name && GENERATOR.test(name)) return "fresh";
      if (name && TRANSPARENT.test(name)) {
        const object =
          callee.type === "MemberExpression" && !/^(?:path|posix|win32)$/.test(sourceCode.getText(callee.object))
            ? [callee.object]
            : [];
        return all([...object, ...n.arguments]);
      }
      // A helper that builds the key: keyed when it is handed the job, otherwise unknown.
      return all(n.arguments) === "keyed" ? "keyed" : "unknown";
    }
    default:
      return "unknown";
  }
}

/** The call passes the token on: its name appears in the arguments (a key, a condition, metadata). */
function carries(sourceCode: SourceCode, call: Node, token: LockToken | undefined): boolean {
  if (!token || call.type !== "CallExpression") return false;
  const names = new Set<string>();
  for (const a of call.arguments) namesIn(sourceCode, a, names);
  const text = token.node ? sourceCode.getText(unwrap(token.node)) : token.text;
  return names.has(text);
}

// ---- row writes ----

const sameField = (a: string, b: string) => normalizeName(a) === normalizeName(b);

/** Fields a write stores as results: not the lock's own field, not an owner or time column, not bookkeeping. */
function resultFields(write: StateWrite, field: string, vocabulary: ResolvedVocabulary): Assignment[] {
  return write.assignments.filter(
    (a) =>
      !sameField(a.field, field) &&
      !vocabulary.isOwnerField(a.field) &&
      !vocabulary.isTimeField(a.field) &&
      a.value.kind !== "now" &&
      !BOOKKEEPING.test(normalizeName(a.field)),
  );
}

/** The write picks rows by identity (`id: jobId`), not by a scan. */
function identified(write: StateWrite, field: string): boolean {
  const branches = toBranches(write.filter);
  return (
    branches.length > 0 &&
    branches.every((b) =>
      b.some(
        (atom) =>
          !("opaque" in atom) &&
          atom.op === "eq" &&
          atom.pred.values === undefined &&
          !sameField(atom.pred.field, field),
      ),
    )
  );
}

function ownerFenced(write: StateWrite, vocabulary: ResolvedVocabulary): boolean {
  const branches = toBranches(write.filter);
  return (
    branches.some(isOpaque) || (branches.length > 0 && branches.every((b) => ownerPinned(b, undefined, vocabulary)))
  );
}

function claimRowEffects(
  input: FencingInput,
  held: Held,
  claim: Claim,
  claimWrites: ReadonlySet<StateWrite>,
): HeldEffect[] {
  const { vocabulary } = input;
  if (!held.token || claim.insert) return [];
  const out: HeldEffect[] = [];
  const { field, value } = claim.lock;
  const takeover = claim.takeover.length > 0 || hasTakeoverWrite(claim, input.writes, vocabulary);
  const base = { lock: held.lock, token: held.token };
  if (takeover) {
    for (const h of input.holderWrites) {
      if (h.claim !== claim || h.beforeAnyWait) continue;
      out.push({
        ...base,
        kind: "takeover-row",
        write: h.write,
        assignment: h.assignment,
        fenced: ownerFenced(h.write, vocabulary),
      });
    }
  }
  for (const w of input.writes) {
    if (claimWrites.has(w) || (w.effect !== undefined && w.effect !== "update")) continue;
    if (normalizeModel(w.model) !== normalizeModel(claim.write.model) || !identified(w, field)) continue;
    // Writes that move the claimed field are holder writes or recoveries (pairing.ts).
    if (
      w.assignments.some(
        (a) => sameField(a.field, field) && !(a.value.kind === "static" && sameValue(a.value.value, value)),
      )
    )
      continue;
    const results = resultFields(w, field, vocabulary);
    if (results.length === 0 || !held.holds(w.node)) continue;
    const branches = toBranches(w.filter);
    const statusPinned = branches.length > 0 && branches.every((b) => pins(b, field, value));
    const fenced = ownerFenced(w, vocabulary) || (!takeover && statusPinned);
    out.push({ ...base, kind: takeover ? "takeover-row" : "result-row", write: w, assignment: results[0]!, fenced });
  }
  return out;
}

/** A variable of the job, or a member of one (`exportId`, `job.id`), as a row filter compares it. */
function isJobValue(sourceCode: SourceCode, node: Node, jobNames: ReadonlySet<string>): boolean {
  const n = unwrap(node);
  if (n.type === "Identifier") return jobNames.has(n.name);
  if (n.type !== "MemberExpression") return false;
  const root = rootOf(n);
  return (
    jobNames.has(sourceCode.getText(n).replace(/\s+/g, "")) || (root.type === "Identifier" && jobNames.has(root.name))
  );
}

/** Under a key-value or library lock: state written to the row the lock is keyed by, with or without a condition. */
function kvRowEffects(input: FencingInput, held: Held): HeldEffect[] {
  const { sourceCode, vocabulary } = input;
  if (held.jobNames.size === 0) return [];
  const out: HeldEffect[] = [];
  for (const w of input.writes) {
    if (w.effect !== undefined && w.effect !== "update") continue;
    const assignment = w.assignments.find(
      (a) => a.value.kind === "static" && (vocabulary.isStateField(a.field) || vocabulary.isFlagField(a.field)),
    );
    if (!assignment || !identified(w, assignment.field)) continue;
    const branches = toBranches(w.filter);
    // Keyed by the lock: the value that picks the row is one the lock key is built from (`id: exportId`,
    // `_id: job.id`), not something derived from it (`id: await ownerOf(exportId)`).
    const keyed = branches.every((b) =>
      b.some((atom) => {
        if ("opaque" in atom || atom.op !== "eq" || atom.pred.values !== undefined) return false;
        const at = atom.pred.node;
        return isJobValue(sourceCode, at.type === "Property" ? at.value : at, held.jobNames);
      }),
    );
    if (!keyed || !held.holds(w.node)) continue;
    const conditioned = branches.every((b) => allowedIn(b, assignment.field) !== "any");
    out.push({
      kind: "kv-row",
      lock: held.lock,
      write: w,
      assignment,
      ...(held.token ? { token: held.token } : {}),
      fenced: conditioned || ownerFenced(w, vocabulary),
    });
  }
  return out;
}

function objectEffect(input: FencingInput, write: ObjectWrite, locks: readonly Held[]): HeldEffect | undefined {
  const { sourceCode } = input;
  if (write.temporary) return undefined;
  const holders = locks.filter((h) => h.holds(write.node));
  const first = holders[0];
  if (!first) return undefined;
  const job: Job = {
    names: new Set(holders.flatMap((h) => [...h.jobNames])),
    subjects: new Set(holders.flatMap((h) => [...h.subjects])),
  };
  const where = write.location === undefined ? "unknown" : locate(sourceCode, write.location, job);
  const token = holders.find((h) => h.token)?.token;
  const fenced =
    write.conditional || where !== "fixed" || holders.some((h) => carries(sourceCode, write.node, h.token));
  return { kind: "object", lock: first.lock, write, ...(token ? { token } : {}), fenced };
}

export function buildHeldEffects(input: FencingInput): HeldEffect[] {
  if (
    input.claims.length === 0 &&
    input.kv.locks.length === 0 &&
    input.kv.viaHelpers.locks.length === 0 &&
    input.kv.libraryLocks.length === 0
  )
    return [];
  const locks = heldLocks(input);
  if (locks.length === 0) return [];
  const claimWrites = new Set(input.claims.map((c) => c.write));
  const out: HeldEffect[] = [];
  for (const held of locks) {
    if (held.lock.kind === "claim") out.push(...claimRowEffects(input, held, held.lock.claim, claimWrites));
    else out.push(...kvRowEffects(input, held));
  }
  for (const write of input.objects) {
    const effect = objectEffect(input, write, locks);
    if (effect) out.push(effect);
  }
  return out;
}

// ---- message data ----

/** The lock in words: `the claim of export.status = RENDERING`, `the lock "lock:export:*"`, `the Redlock lock on "…"`. */
export function describeEffectLock(sourceCode: SourceCode, lock: EffectLock): { lock: string; acquireLine: string } {
  switch (lock.kind) {
    case "claim": {
      const { model, field, value } = lock.claim.lock;
      return {
        lock: `the claim of ${model}.${field} = ${formatValue(value)}`,
        acquireLine: String(lock.claim.write.node.loc.start.line),
      };
    }
    case "kv":
      return {
        lock: `the lock ${describeKey(lock.lock.acquire.key)}`,
        acquireLine: String(lock.lock.acquire.loc.start.line),
      };
    case "library": {
      const name = lock.op.library === "redlock" ? "Redlock" : "redis-semaphore";
      const key = lock.op.keyNode ? ` on ${describeKey(keyShape(sourceCode, lock.op.keyNode))}` : "";
      return { lock: `the ${name} lock${key}`, acquireLine: String(lock.op.node.loc.start.line) };
    }
  }
}

/** The token in words: `the claim's lockedBy`, ``the lock's token `token` ``, or `a fencing token` when there is none. */
export function describeToken(sourceCode: SourceCode, token: LockToken | undefined): string {
  if (!token) return "a fencing token";
  if (token.field) return `the claim's ${token.field}`;
  return `the lock's token \`${token.node ? sourceCode.getText(token.node) : token.text}\``;
}

const CONDITIONS: Record<ObjectWrite["store"], string> = {
  s3: "IfNoneMatch or IfMatch",
  gcs: "ifGenerationMatch",
  "azure-blob": "conditions: { ifNoneMatch } or { ifMatch }",
  fs: "an exclusive flag, wx",
};

/** An object write in words: the operation, the location as written (shortened), the condition its store offers. */
export function describeObjectWrite(
  sourceCode: SourceCode,
  write: ObjectWrite,
): { operation: string; location: string; condition: string } {
  // A key held in a const reads better as what it holds: `projects/${slug}/latest.mp4`, not `key`.
  let shown = write.location && unwrap(write.location);
  const init = shown?.type === "Identifier" ? getConstInit(sourceCode, shown) : undefined;
  if (init && init.type !== "TSEnumDeclaration") shown = unwrap(init);
  const text = shown ? sourceCode.getText(shown).replace(/\s+/g, " ") : "";
  const location = text.length > 60 ? `${text.slice(0, 59)}…` : text;
  const operation =
    write.store === "fs"
      ? `${write.operation} call`
      : `${{ s3: "S3", gcs: "Cloud Storage", "azure-blob": "Azure Blob" }[write.store]} ${write.operation}`;
  return { operation, location, condition: CONDITIONS[write.store] };
}

// ---- holders made from the key ----

/**
 * Calls that may make a value of its own each time (a token, an id, the clock, the host): a holder made with one may
 * be the caller's, so it is not taken as made of the key. Wider than `GENERATOR` (calls that surely make a new value,
 * for object locations) on purpose: here a guess would be a finding.
 */
const UNIQUE_CALL = /uuid|random|nanoid|cuid|ulid|token|crypto|hostname|pid|now|time|date|counter|seq/i;

/**
 * The variables an expression is made of, following the `const`s it reads (`lock:${id}` and `normalize(id)` are
 * both made of `id`), or undefined when it reads something unique per call or per process (a random id, the
 * clock, the host) or something this cannot follow.
 */
function madeOf(sourceCode: SourceCode, node: Node, depth = 0): Set<string> | undefined {
  if (depth > 6) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "Literal":
      return new Set();
    case "Identifier": {
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") return madeOf(sourceCode, init, depth + 1);
      const def = findVariable(sourceCode, n)?.defs[0];
      // A parameter of the function, or a `let` it reassigns: a value known at run time, by this name.
      return def && (def.type === "Parameter" || def.type === "Variable") ? new Set([n.name]) : undefined;
    }
    case "TemplateLiteral":
      return union(sourceCode, n.expressions, depth);
    case "BinaryExpression":
      return union(sourceCode, [n.left as Node, n.right], depth);
    case "CallExpression": {
      const callee = unwrap(n.callee);
      const name =
        callee.type === "Identifier"
          ? callee.name
          : callee.type === "MemberExpression"
            ? (keyName(callee.property, callee.computed) ?? "")
            : "";
      if (!name || UNIQUE_CALL.test(name)) return undefined;
      // `String(id)`, `normalize(id)`, `id.trim()`: made of its arguments and of what it is called on.
      const on = callee.type === "MemberExpression" ? [callee.object] : [];
      return union(
        sourceCode,
        [...on, ...n.arguments.filter((a): a is TSESTree.Expression => a.type !== "SpreadElement")],
        depth,
      );
    }
    case "MemberExpression":
      // `req.userId`, `job.id`: the object's own value, by its text.
      return n.computed ? undefined : new Set([sourceCode.getText(n)]);
    default:
      return undefined;
  }
}

function union(sourceCode: SourceCode, nodes: readonly Node[], depth: number): Set<string> | undefined {
  const out = new Set<string>();
  for (const x of nodes) {
    const s = madeOf(sourceCode, x, depth + 1);
    if (!s) return undefined;
    for (const v of s) out.add(v);
  }
  return out;
}

/**
 * Lock rows and leases taken where the row is free or already the caller's (a branch of the write's filter pins an
 * owner column, `OR locks.holder = EXCLUDED.holder`), whose owner column is written with a value made only of what
 * the lock's key column is made of: the "holder" is the key itself, the same for every caller of that lock.
 */
export function keyDerivedHolders(
  sourceCode: SourceCode,
  claims: readonly Claim[],
  vocabulary: ResolvedVocabulary,
): KeyDerivedHolder[] {
  const out: KeyDerivedHolder[] = [];
  for (const claim of claims) {
    if (!claim.insert && !claim.lease) continue;
    const branches = toBranches(claim.write.filter);
    if (!branches.some((b) => ownerPinned(b, undefined, vocabulary))) continue;
    const owner = claim.write.assignments.find(
      (a) => vocabulary.isOwnerField(a.field) && a.value.kind === "other" && a.valueNode !== claim.write.node,
    );
    if (!owner) continue;
    const holder = madeOf(sourceCode, owner.valueNode);
    if (!holder || holder.size === 0) continue;
    // The column that names the lock: written by the same write, named like a key or a name (`lock_key`, `name`), not
    // a time or an owner; a row's other ids (`user_id` beside `document_id`) may well be the holder's own.
    for (const a of claim.write.assignments) {
      if (
        a === owner ||
        vocabulary.isOwnerField(a.field) ||
        vocabulary.isTimeField(a.field) ||
        a.valueNode === claim.write.node
      )
        continue;
      if (!/(key|name|resource)$/i.test(a.field)) continue;
      const key = madeOf(sourceCode, a.valueNode);
      if (!key || ![...holder].every((v) => key.has(v))) continue;
      out.push({ claim, owner, keyField: a.field, sources: [...holder] });
      break;
    }
  }
  return out;
}
