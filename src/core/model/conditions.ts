/**
 * Filter algebra over the normalised `Condition`: which values of a field a filter lets through, whether it judges
 * age, and whether it names one row. Filters are put in disjunctive normal form (negations pushed to predicates),
 * then each branch is read on its own.
 */
import type { CompareOp, Condition, Predicate, StaticValue } from "./accesses.js";
import type { TimePredicate } from "./claims.js";
import type { ResolvedVocabulary } from "./settings.js";
import { normalizeName } from "./settings.js";
import { sameValue } from "./names.js";

/** A predicate with its polarity resolved, or a part of the filter no one could read. */
export type Atom = { readonly pred: Predicate; readonly op: CompareOp } | { readonly opaque: true };
export type Branch = readonly Atom[];

const MAX_BRANCHES = 64;
const NEGATE: Record<CompareOp, CompareOp> = {
  eq: "ne",
  ne: "eq",
  in: "notIn",
  notIn: "in",
  lt: "gte",
  lte: "gt",
  gt: "lte",
  gte: "lt",
  other: "other",
};
const OPAQUE: Branch = [{ opaque: true }];

/** The operator with its two sides swapped: `5 < col` is `col > 5`. Shared by every reader of comparisons. */
export const SWAPPED: Readonly<Record<CompareOp, CompareOp>> = {
  eq: "eq",
  ne: "ne",
  in: "in",
  notIn: "notIn",
  lt: "gt",
  lte: "gte",
  gt: "lt",
  gte: "lte",
  other: "other",
};

function product(a: readonly Branch[], b: readonly Branch[]): Branch[] {
  const out: Branch[] = [];
  for (const x of a) for (const y of b) out.push([...x, ...y]);
  return out;
}

/** Disjunctive normal form: a list of branches, each a conjunction of atoms. Too large a form becomes one opaque branch. */
export function toBranches(cond: Condition, negated = false): Branch[] {
  switch (cond.kind) {
    case "pred":
      return [[{ pred: cond, op: negated ? NEGATE[cond.op] : cond.op }]];
    case "opaque":
      return [OPAQUE];
    case "not":
      return toBranches(cond.item, !negated);
    case "and":
    case "or": {
      const conjunctive = (cond.kind === "and") !== negated;
      if (cond.items.length === 0) return conjunctive ? [[]] : [];
      if (conjunctive) {
        let acc: Branch[] = [[]];
        for (const item of cond.items) {
          acc = product(acc, toBranches(item, negated));
          if (acc.length > MAX_BRANCHES) return [OPAQUE];
        }
        return acc;
      }
      const out: Branch[] = [];
      for (const item of cond.items) out.push(...toBranches(item, negated));
      return out.length > MAX_BRANCHES ? [OPAQUE] : out;
    }
  }
}

/** Which values of one field a branch admits: only these, all but these, or anything. */
export type Allowed = { readonly only: readonly StaticValue[] } | { readonly except: readonly StaticValue[] } | "any";

const has = (list: readonly StaticValue[], v: StaticValue) => list.some((x) => sameValue(x, v));

function intersect(a: Allowed, b: Allowed): Allowed {
  if (a === "any") return b;
  if (b === "any") return a;
  if ("only" in a && "only" in b) return { only: a.only.filter((v) => has(b.only, v)) };
  if ("only" in a && "except" in b) return { only: a.only.filter((v) => !has(b.except, v)) };
  if ("except" in a && "only" in b) return intersect(b, a);
  return { except: [...(a as { except: StaticValue[] }).except, ...(b as { except: StaticValue[] }).except] };
}

function atomAllowed(atom: Atom, field: string): Allowed {
  if ("opaque" in atom) return "any";
  const { pred, op } = atom;
  if (normalizeName(pred.field) !== normalizeName(field) || !pred.values) return "any";
  switch (op) {
    case "eq":
    case "in":
      return { only: pred.values };
    case "ne":
    case "notIn":
      return { except: pred.values };
    default:
      return "any";
  }
}

export function allowedIn(branch: Branch, field: string): Allowed {
  let acc: Allowed = "any";
  for (const atom of branch) acc = intersect(acc, atomAllowed(atom, field));
  return acc;
}

/** The branch cannot match a row whose field holds `value`. */
export function excludes(branch: Branch, field: string, value: StaticValue): boolean {
  const a = allowedIn(branch, field);
  if (a === "any") return false;
  return "only" in a ? !has(a.only, value) : has(a.except, value);
}

/** The branch matches only rows whose field holds `value` (or one of a few values including it). */
export function pins(branch: Branch, field: string, value: StaticValue): boolean {
  const a = allowedIn(branch, field);
  return a !== "any" && "only" in a && has(a.only, value);
}

/** "Older than" predicates in a branch: a timestamp compared below a threshold (`updatedAt < threshold`). */
export function agePredicates(branch: Branch, vocabulary: ResolvedVocabulary): TimePredicate[] {
  const out: TimePredicate[] = [];
  // A time bounded from below too is a window (`scheduled_start_at > now AND <= now + 7 days`: what starts this
  // week; `createdAt` between two report dates), not rows left behind by age.
  const floored = (field: string) =>
    branch.some(
      (a) =>
        !("opaque" in a) && (a.op === "gt" || a.op === "gte") && normalizeName(a.pred.field) === normalizeName(field),
    );
  // A start bounded from above beside an end bounded from below is two intervals that overlap (`start_time < $end
  // AND end_time > $start`: a booking that clashes with another, a shift that covers an hour), not an age either.
  const overlaps = branch.some(
    (a) =>
      !("opaque" in a) &&
      (a.op === "gt" || a.op === "gte") &&
      vocabulary.isTimeField(a.pred.field) &&
      INTERVAL_END.test(normalizeName(a.pred.field)),
  );
  for (const atom of branch) {
    if ("opaque" in atom) continue;
    if (
      (atom.op === "lt" || atom.op === "lte") &&
      vocabulary.isTimeField(atom.pred.field) &&
      !floored(atom.pred.field) &&
      !(overlaps && !INTERVAL_END.test(normalizeName(atom.pred.field)))
    ) {
      out.push({ field: atom.pred.field, node: atom.pred.node });
    }
  }
  return out;
}

/** The end of an interval a row spans (`end_time`, `endsAt`, `period_end`), as opposed to a lease's expiry. */
const INTERVAL_END = /(^|[a-z])(end|ends|finish|finishes)(at|time|date|datetime|ts|on)?$/;

export function isOpaque(branch: Branch): boolean {
  return branch.some((a) => "opaque" in a);
}

/** Fields the branch pins to a value known only at run time (`id: jobId`): it names particular rows. */
export function identityFields(branch: Branch): string[] {
  const out: string[] = [];
  for (const atom of branch) {
    if ("opaque" in atom) continue;
    if (atom.op === "eq" && !atom.pred.values) out.push(atom.pred.field);
  }
  return out;
}

/**
 * The branch compares an owner or token column with a run-time value (`lockedBy: workerId`,
 * `version: job.version`), or `field` with a value read earlier (`status: job.status`): a compare-and-set
 * that only the holder of that value can win.
 */
export function ownerPinned(branch: Branch, field: string | undefined, vocabulary: ResolvedVocabulary): boolean {
  return (
    ownerColumns(branch, vocabulary).length > 0 ||
    (field !== undefined && identityFields(branch).some((f) => normalizeName(f) === normalizeName(field)))
  );
}

/**
 * The owner or token columns the branch compares with a value known at run time: equal to one (`lockedBy: workerId`),
 * or among holders named at run time (`lockedBy: { in: [me, myLegacyName] }`): only those holders' rows match.
 */
export function ownerColumns(branch: Branch, vocabulary: ResolvedVocabulary): string[] {
  const out: string[] = [];
  for (const atom of branch) {
    if ("opaque" in atom || atom.pred.values || !vocabulary.isOwnerField(atom.pred.field)) continue;
    if (atom.op === "eq" || atom.op === "in") out.push(atom.pred.field);
  }
  return out;
}

/** Every field the filter compares, in any branch. */
export function filterFields(branches: readonly Branch[]): Set<string> {
  const out = new Set<string>();
  for (const b of branches) for (const a of b) if (!("opaque" in a)) out.add(normalizeName(a.pred.field));
  return out;
}

/** Every branch (and at least one) compares some field for equality in a way `test` accepts: the rows it names. */
export function everyBranchPicks(branches: readonly Branch[], test: (pred: Predicate) => boolean): boolean {
  return (
    branches.length > 0 &&
    branches.every((b) => b.some((atom) => !("opaque" in atom) && atom.op === "eq" && test(atom.pred)))
  );
}
