/**
 * Stale scans (Q2): reads that pick rows stuck in an in-progress value by age, judged in their filter or in JavaScript
 * over the rows they return.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, StateRead, StaticValue } from "../../model/accesses.js";
import type { StaleScan, TimePredicate } from "../../model/claims.js";
import type { ResolvedVocabulary } from "../../model/settings.js";
import { agePredicates, isOpaque, pins, toBranches, type Branch } from "../../model/conditions.js";
import { describeTest } from "../../reading/guards.js";
import { isFunction } from "../../reading/units.js";
import { findVariable, keyName, resultBinding, unwrap } from "../../reading/values.js";
import { isLockAssignment } from "./vocabulary.js";
import { sameField } from "../../model/names.js";
import { walk } from "../../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Reads that pick rows stuck in an in-progress value by age: `findMany({ where: { status: RUNNING, startedAt: { lt } } })`;
 * one scan per value when the branches pin different ones (`createdAt < cutoff AND (state = creating OR state = uploading)`).
 */
export function findStaleScans(sourceCode: SourceCode, read: StateRead, vocabulary: ResolvedVocabulary): StaleScan[] {
  // A count of stuck rows (a dashboard's, a metric's) returns a number: no row it finds is handed to anyone.
  if (COUNTING.test(read.operation)) return [];
  // A term known only at run time ANDed beside known ones (`AND locked_by = ${me}` added when a worker id is given)
  // only narrows the rows a branch finds; a branch that is nothing but such a term may find any row.
  const branches = toBranches(read.filter).map((b) => (b.length > 1 ? b.filter((a) => !("opaque" in a)) : b));
  if (branches.length === 0 || branches.some((b) => b.length === 0 || isOpaque(b))) return [];
  let ages = branches.map((b) => agePredicates(b, vocabulary));
  let js: TimePredicate[] | undefined;
  const out: StaleScan[] = [];
  for (const atom of branches[0]!) {
    if ("opaque" in atom || (atom.op !== "eq" && atom.op !== "in") || !atom.pred.values) continue;
    const field = atom.pred.field;
    if (!atom.pred.values.some((v) => isLockAssignment(field, v, vocabulary))) continue;
    // Every branch must be about this field's lock values: one that is not picks other rows too.
    const perBranch = branches.map((b) => lockValuesPinned(b, field, vocabulary));
    if (perBranch.some((vs) => vs.length === 0)) continue;
    // Age judged in JavaScript over the rows read, for every row (`rows.filter((job) => job.startedAt < cutoff)`):
    // the branches whose query judges none are judged by it. Looked for only in a read of rows held in a lock value.
    if (ages.some((a) => a.length === 0)) {
      js ??= rowsFilteredByAge(sourceCode, read, vocabulary);
      if (js.length === 0) return [];
      const fill = js;
      ages = ages.map((a) => (a.length === 0 ? fill : a));
    }
    const seen = new Set<string>();
    for (const value of perBranch.flat()) {
      const key = String(value.value);
      if (seen.has(key)) continue;
      seen.add(key);
      // Each value is judged by the age tests of the branches that pin it (`claimed` by claimed_at, `running` by
      // attempted_at), the same test once.
      const judged = [
        ...new Set(branches.flatMap((_, i) => (perBranch[i]!.some((v) => String(v.value) === key) ? ages[i]! : []))),
      ];
      out.push({ read, field, value, timePredicates: judged });
    }
    if (out.length > 0) return out;
  }
  return out;
}

/** Reads that return how many rows match, not the rows. */
const COUNTING = /^(count|countDocuments|estimatedDocumentCount|countBy|exists)$/;

/**
 * The age tests JavaScript makes of every row a read returns: the rows (`const jobs = await …`, and arrays made from
 * them with `.map(…)`) handed to `.filter((job) => …)` whose callback keeps a row by an age test of its own fields
 * (`return new Date(job.attempted_at).getTime() < now - timeout`). Each field judged, at its test.
 */
function rowsFilteredByAge(sourceCode: SourceCode, read: StateRead, vocabulary: ResolvedVocabulary): TimePredicate[] {
  const first = resultBinding(read.runAt ?? read.node);
  if (!first) return [];
  const out: TimePredicate[] = [];
  const arrays = [first];
  for (let i = 0; i < arrays.length && i < 4; i++) {
    const variable = findVariable(sourceCode, arrays[i]!);
    for (const ref of variable?.references ?? []) {
      const member = ref.identifier.parent;
      if (member?.type !== "MemberExpression" || member.object !== ref.identifier) continue;
      const method = keyName(member.property, member.computed);
      const call = member.parent;
      if ((method !== "map" && method !== "filter") || call?.type !== "CallExpression" || call.callee !== member)
        continue;
      const next = resultBinding(call);
      if (method === "map" && next) arrays.push(next);
      if (method !== "filter") continue;
      const callback = call.arguments[0] && unwrap(call.arguments[0]);
      const row = callback && isFunction(callback) ? callback.params[0] : undefined;
      const body = callback && isFunction(callback) ? callback.body : undefined;
      if (!body || row?.type !== "Identifier") continue;
      // What the callback keeps a row by: its returned expressions (and an expression body), not nested functions'.
      const kept: TSESTree.Expression[] = body.type !== "BlockStatement" ? [body as TSESTree.Expression] : [];
      walk(body, (n) => {
        if (n !== body && isFunction(n)) return false;
        if (n.type === "ReturnStatement" && n.argument) kept.push(n.argument);
        return true;
      });
      for (const test of kept) {
        const judged = describeTest(sourceCode, test, false, vocabulary);
        if (!judged.judgesAge) continue;
        for (const field of judged.timeFields) if (readsField(test, row.name, field)) out.push({ field, node: test });
      }
    }
  }
  return out;
}

/** Whether `expr` reads `row.field` (`row.field`, `row["field"]`), the field of the row the callback was handed. */
function readsField(expr: Node, row: string, field: string): boolean {
  let found = false;
  walk(expr, (n) => {
    if (found) return false;
    if (
      n.type === "MemberExpression" &&
      unwrap(n.object).type === "Identifier" &&
      (unwrap(n.object) as TSESTree.Identifier).name === row &&
      keyName(n.property, n.computed) === field
    )
      found = true;
    return !found;
  });
  return found;
}

/** The lock values a branch pins `field` to (`status = RUNNING`, `status IN (RUNNING, CLAIMED)`). */
function lockValuesPinned(branch: Branch, field: string, vocabulary: ResolvedVocabulary): StaticValue[] {
  const out: StaticValue[] = [];
  for (const atom of branch) {
    if (
      "opaque" in atom ||
      !sameField(atom.pred.field, field) ||
      (atom.op !== "eq" && atom.op !== "in") ||
      !atom.pred.values
    )
      continue;
    for (const v of atom.pred.values) if (isLockAssignment(field, v, vocabulary) && pins(branch, field, v)) out.push(v);
  }
  return out;
}
