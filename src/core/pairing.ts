/**
 * Classify, then pair. Every state write of a module is read against the vocabulary:
 * - a *claim* sets field F to an in-progress value V while its filter excludes V (or a JS `if` checked F first);
 * - a *recovery* moves F off V for rows whose filter pins F = V and judges age (`updatedAt < threshold`);
 *   a recovery that judges age in JS, or lacks the status or the age predicate, is still one, with flaws;
 * - a *holder write* moves one claimed row off V from code the claiming function reaches (completion, failure).
 * Pairing is by (model, field, value); model names compare loosely (`job`, `Job`, `jobs`).
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type {
  Check, Claim, Guard, HolderWrite, LockFacts, LockKey, Node, Recovery, RecoveryFlaw, StaleScan, StateAccess, StateRead,
  StateWrite, StaticValue, TimePredicate,
} from "./model.js";
import type { ResolvedVocabulary } from "./settings.js";
import {
  agePredicates, excludes, identityFields, isOpaque, pins, toBranches, type Branch,
} from "./conditions.js";
import { enclosingFunction, guardsOf, isFunction } from "./guards.js";
import { normalizeName } from "./settings.js";
import { keyName, sameValue, unwrap } from "./values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** What the inventory saw of the module besides writes: enough to follow calls from a claim to its holder's writes. */
export interface ModuleShape {
  readonly calls: readonly TSESTree.CallExpression[];
  readonly functions: readonly TSESTree.FunctionLike[];
}

/** Values a recovery or failure path moves a row to: failed, retryable or waiting states. */
const RESET_VALUE = /fail|error|pending|queue|wait|time_?out|stale|expire|abandon|retry|idle|ready|new|created|available|interrupt|crash|dead|stuck|unknown|open|todo|scheduled|init|reset|draft/i;

export function normalizeModel(name: string): string {
  const n = normalizeName(name);
  return n.length > 3 && n.endsWith("s") && !n.endsWith("ss") ? n.slice(0, -1) : n;
}

function sameField(a: string, b: string): boolean {
  return normalizeName(a) === normalizeName(b);
}

// ---- functions and who reaches whom ----

/** The name a function is known by in its module: declaration, variable, method, property. */
function functionName(fn: TSESTree.FunctionLike): string | undefined {
  if (fn.type === "FunctionDeclaration" && fn.id) return fn.id.name;
  const p = fn.parent;
  if (!p) return undefined;
  if (p.type === "VariableDeclarator" && p.id.type === "Identifier") return p.id.name;
  if ((p.type === "MethodDefinition" || p.type === "Property" || p.type === "PropertyDefinition") && p.key) {
    return keyName(p.key, p.computed);
  }
  if (fn.type === "FunctionExpression" && fn.id) return fn.id.name;
  return undefined;
}

/** The nearest enclosing named function (anonymous callbacks belong to it), or null for module level. */
function unitOf(node: Node): TSESTree.FunctionLike | null {
  let p = node.parent;
  while (p) {
    if (isFunction(p) && functionName(p) !== undefined) return p;
    p = p.parent;
  }
  return null;
}

function referencedName(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") return n.name;
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression") return keyName(n.property, n.computed);
  return undefined;
}

class CallGraph {
  private readonly byName = new Map<string, TSESTree.FunctionLike[]>();
  private readonly edges = new Map<TSESTree.FunctionLike | null, Set<string>>();
  private readonly reachCache = new Map<TSESTree.FunctionLike | null, Set<TSESTree.FunctionLike | null>>();

  constructor(shape: ModuleShape) {
    for (const fn of shape.functions) {
      const name = functionName(fn);
      if (name === undefined) continue;
      const list = this.byName.get(name) ?? [];
      list.push(fn);
      this.byName.set(name, list);
    }
    for (const call of shape.calls) {
      const unit = unitOf(call);
      const names = this.edges.get(unit) ?? new Set<string>();
      const callee = referencedName(call.callee);
      if (callee) names.add(callee);
      for (const arg of call.arguments) {
        const ref = referencedName(arg);
        if (ref) names.add(ref);
      }
      this.edges.set(unit, names);
    }
  }

  /** Units reachable from `start` by calls (and functions passed as arguments), `start` included. */
  reachable(start: TSESTree.FunctionLike | null): Set<TSESTree.FunctionLike | null> {
    const cached = this.reachCache.get(start);
    if (cached) return cached;
    const seen = new Set<TSESTree.FunctionLike | null>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const unit = queue.pop()!;
      for (const name of this.edges.get(unit) ?? []) {
        for (const fn of this.byName.get(name) ?? []) {
          if (!seen.has(fn)) {
            seen.add(fn);
            queue.push(fn);
          }
        }
      }
    }
    this.reachCache.set(start, seen);
    return seen;
  }
}

// ---- classification ----

function isLockValue(value: StaticValue, vocabulary: ResolvedVocabulary): boolean {
  return typeof value.value === "string" && vocabulary.isInProgressValue(value.value);
}

/** Reads that happen before `node` in the same function, on the same model. */
function earlierReads(reads: readonly StateRead[], node: Node, model: string): StateRead[] {
  const fn = enclosingFunction(node);
  return reads.filter((r) =>
    r.node.range[1] <= node.range[0] && enclosingFunction(r.node) === fn && normalizeModel(r.model) === normalizeModel(model));
}

function ifCheck(guard: Guard): Check {
  return { kind: "if", node: guard.test, timeFields: guard.timeFields.map((field) => ({ field, node: guard.test })) };
}

function findClaims(
  sourceCode: SourceCode,
  write: StateWrite,
  branches: readonly Branch[],
  vocabulary: ResolvedVocabulary,
  guards: () => Guard[],
  reads: () => StateRead[],
): Claim[] {
  const claims: Claim[] = [];
  for (const assignment of write.assignments) {
    if (assignment.value.kind !== "static" || !isLockValue(assignment.value.value, vocabulary)) continue;
    const value = assignment.value.value;
    const lock: LockKey = {
      model: write.model,
      field: assignment.field,
      value,
      valueText: sourceCode.getText(assignment.valueNode),
    };
    let open = false;
    let excluded = false;
    const takeover: TimePredicate[] = [];
    for (const branch of branches) {
      if (excludes(branch, assignment.field, value)) excluded = true;
      else {
        const age = agePredicates(branch, vocabulary);
        if (age.length > 0) takeover.push(...age);
        else open = true;
      }
    }
    if (excluded && !open) {
      claims.push({ write, lock, assignment, takeover });
      continue;
    }
    if (!open || branches.some(isOpaque)) continue;
    // Unconditional write of the in-progress value: a claim only if a JS check or an earlier read of the same
    // field gated it (check-then-act).
    const guard = guards().find((g) => g.statusFields.some((f) => sameField(f, assignment.field)));
    if (guard) {
      claims.push({ write, lock, assignment, takeover: [], check: ifCheck(guard) });
      continue;
    }
    const read = reads().find((r) => {
      const rb = toBranches(r.filter);
      return rb.length > 0 && !rb.some(isOpaque) && rb.every((b) => excludes(b, assignment.field, value));
    });
    if (read) claims.push({ write, lock, assignment, takeover: [], check: { kind: "read", node: read.node, timeFields: [] } });
  }
  return claims;
}

/** Reads that pick rows stuck in an in-progress value by age: `findMany({ where: { status: RUNNING, startedAt: { lt } } })`. */
function findStaleScan(read: StateRead, vocabulary: ResolvedVocabulary): StaleScan | undefined {
  const branches = toBranches(read.filter);
  if (branches.length === 0 || branches.some(isOpaque)) return undefined;
  const ages = branches.map((b) => agePredicates(b, vocabulary));
  if (ages.some((a) => a.length === 0)) return undefined;
  for (const atom of branches[0]!) {
    if ("opaque" in atom || (atom.op !== "eq" && atom.op !== "in") || !atom.pred.values) continue;
    for (const value of atom.pred.values) {
      if (isLockValue(value, vocabulary) && branches.every((b) => pins(b, atom.pred.field, value))) {
        return { read, field: atom.pred.field, value, timePredicates: ages.flat() };
      }
    }
  }
  return undefined;
}

interface Classified {
  recoveries: Recovery[];
  holder: HolderWrite[];
}

/** A JS age check is about this lock unless it compares the field with other values only. */
function guardAdmits(guard: Guard, field: string, value: StaticValue): boolean {
  const checks = guard.statusChecks.filter((c) => sameField(c.field, field));
  return checks.length === 0 || checks.some((c) => sameValue(c.value, value));
}

function classifyAgainst(
  write: StateWrite,
  branches: readonly Branch[],
  claim: Claim,
  vocabulary: ResolvedVocabulary,
  ageCheck: (claim: Claim) => Check | undefined,
  out: Classified,
): void {
  const { field, value } = claim.lock;
  const assignment = write.assignments.find((a) => sameField(a.field, field));
  if (!assignment || assignment.value.kind !== "static" || sameValue(assignment.value.value, value)) return;
  if (branches.length === 0 || branches.every((b) => excludes(b, field, value))) return; // never touches claimed rows
  const opaque = branches.some(isOpaque);
  const pinned = branches.every((b) => pins(b, field, value));
  const ages = branches.map((b) => agePredicates(b, vocabulary));
  const timed = ages.every((a) => a.length > 0);
  const timePredicates = ages.flat();
  const identified = branches.every((b) => identityFields(b).some((f) => !sameField(f, field)));
  const target = assignment.value.value;
  const resets = typeof target.value === "string" && RESET_VALUE.test(target.value) && !isLockValue(target, vocabulary);
  const recovery = (flaws: RecoveryFlaw[], check?: Check): void => {
    out.recoveries.push({ write, lock: claim.lock, claim, timePredicates, flaws, ...(check ? { check } : {}) });
  };

  if (pinned && timed) return recovery([]);
  if (timed) {
    if (resets && !opaque) recovery(["missing-status"]);
    return;
  }
  const check = ageCheck(claim);
  if (check) return recovery(["check-in-js"], check);
  if (identified) {
    const fenced = pinned || branches.every((b) => identityFields(b).some((f) => vocabulary.isOwnerField(f)));
    out.holder.push({ write, claim, assignment, fenced: fenced || opaque });
    return;
  }
  if (pinned && resets && !opaque) recovery(["missing-time"]);
}

export function buildFacts(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  shape: ModuleShape,
  vocabulary: ResolvedVocabulary,
): LockFacts {
  const writes = accesses.filter((a): a is StateWrite => a.access === "write");
  const reads = accesses.filter((a): a is StateRead => a.access === "read");
  const branchesOf = new Map<StateWrite, Branch[]>();
  const guardCache = new Map<StateWrite, Guard[]>();
  const guards = (w: StateWrite) => {
    let g = guardCache.get(w);
    if (!g) guardCache.set(w, (g = guardsOf(sourceCode, w.node, vocabulary)));
    return g;
  };
  for (const w of writes) branchesOf.set(w, toBranches(w.filter));

  const claims: Claim[] = [];
  for (const w of writes) {
    claims.push(...findClaims(sourceCode, w, branchesOf.get(w)!, vocabulary, () => guards(w), () => earlierReads(reads, w.node, w.model)));
  }
  const staleScans: StaleScan[] = [];
  for (const r of reads) {
    const scan = findStaleScan(r, vocabulary);
    if (scan) staleScans.push(scan);
  }

  const classified: Classified = { recoveries: [], holder: [] };
  if (claims.length > 0) {
    const claimWrites = new Set(claims.map((c) => c.write));
    for (const w of writes) {
      if (claimWrites.has(w)) continue;
      // Age judged outside the write: in a JS `if` about this lock, or by an earlier stale scan of it.
      const ageCheck = (claim: Claim): Check | undefined => {
        const guard = guards(w).find((g) => g.judgesAge && guardAdmits(g, claim.lock.field, claim.lock.value));
        if (guard) return ifCheck(guard);
        const scan = staleScans.find((s) =>
          sameField(s.field, claim.lock.field) && sameValue(s.value, claim.lock.value) &&
          earlierReads([s.read], w.node, w.model).length > 0);
        return scan && { kind: "read", node: scan.read.node, timeFields: scan.timePredicates };
      };
      for (const claim of claims) {
        if (normalizeModel(claim.write.model) !== normalizeModel(w.model)) continue;
        classifyAgainst(w, branchesOf.get(w)!, claim, vocabulary, ageCheck, classified);
      }
    }
  }

  // Holder writes count only where the claiming code reaches them.
  let graph: CallGraph | undefined;
  const holderWrites = classified.holder.filter((h) => {
    graph ??= new CallGraph(shape);
    return graph.reachable(unitOf(h.claim.write.node)).has(unitOf(h.write.node));
  });

  const byClaim = new Map<Claim, Recovery[]>();
  for (const r of classified.recoveries) {
    const list = byClaim.get(r.claim) ?? [];
    list.push(r);
    byClaim.set(r.claim, list);
  }
  return {
    writes,
    reads,
    staleScans,
    claims,
    recoveries: classified.recoveries,
    holderWrites,
    recoveriesOf: (claim) => byClaim.get(claim) ?? [],
  };
}
