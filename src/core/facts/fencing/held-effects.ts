/**
 * Fencing (the second seed): the effects a module makes while holding a lock, and whether a holder that resumed
 * after its lock lapsed (a GC pause, a suspended VM) is refused or harmless when it makes them late.
 *
 * Locks: database claims (pairing/), key-value locks (kv-pairing/) and lock libraries (Redlock,
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
import type { TSESLint } from "@typescript-eslint/utils";
import { nameWords } from "../../model/words.js";
import type { Assignment, Node, ObjectWrite, StateWrite } from "../../model/accesses.js";
import type { Claim, HolderWrite } from "../../model/claims.js";
import type { KvFacts } from "../../model/kv-locks.js";
import type { HeldEffect, EffectLock, LockToken } from "../../model/held-locks.js";
import { type ResolvedVocabulary, normalizeName } from "../../model/settings.js";
import {
  agePredicates,
  allowedIn,
  everyBranchPicks,
  isOpaque,
  ownerPinned,
  pins,
  toBranches,
} from "../../model/conditions.js";
import { normalizeModel, sameValue, sameField } from "../../model/names.js";
import { keyShape } from "../../reading/keys.js";
import { unwrap } from "../../reading/values.js";
import { resultName, namesIn } from "./expression-names.js";
import { rootOf, carries, locate, type Job } from "./object-locations.js";
import { isLockRow } from "../../model/claims.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** Where code runs while a lock is held (built from the module's calls in pairing/holding.ts). */
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
  const row = resultName(claim.write.runAt ?? claim.write.node);
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
function keySubjects(text: string): Set<string> {
  return new Set(
    nameWords(text)
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
      subjects: keySubjects(lock.acquire.key.opaque ? "" : lock.acquire.key.text),
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
      subjects: keySubjects(op.keyNode ? keyShape(sourceCode, op.keyNode).text : ""),
      holds: (effect) => (op.op === "using" ? holding.within(op.node, effect) : holding.after(op.node, effect)),
    });
  }
  return out;
}

// ---- row writes ----

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
  return everyBranchPicks(
    toBranches(write.filter),
    (pred) => pred.values === undefined && !sameField(pred.field, field),
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
  if (!held.token || isLockRow(claim)) return [];
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
    // Writes that move the claimed field are holder writes or recoveries (pairing/classification.ts).
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
