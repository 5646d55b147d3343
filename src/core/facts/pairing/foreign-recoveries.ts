/** For the project-wide audit: the recoveries a module offers to claims made in other modules. */
import type { TSESLint } from "@typescript-eslint/utils";
import type { Node, StateAccess, StateWrite } from "../../model/accesses.js";
import type { Claim, LockKey, Recovery } from "../../model/claims.js";
import {
  type ResolvedVocabulary,
  hasLockWord,
  normalizeName,
  withClockedFields,
  withHeldValues,
} from "../../model/settings.js";
import { pins } from "../../model/conditions.js";
import { normalizeModel } from "../../model/names.js";
import { withClaimSources, withValuesHeldAcrossWork, withLeasedValues, isLockAssignment } from "./vocabulary.js";
import { Module } from "./module.js";
import { findStaleScans } from "./stale-scans.js";
import { type Classified, classifyAgainst } from "./classification.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** A claim's lock as text, models and fields compared loosely: `job\0status\0RUNNING`. */
export function lockKeyText(lock: LockKey): string {
  return `${normalizeModel(lock.model)}\0${normalizeName(lock.field)}\0${normalizeName(String(lock.value.value))}`;
}

/**
 * For the project-wide audit (src/audit/): the recoveries this module offers to claims made in *other* modules.
 * Every in-progress value a write's filter pins (`status = RUNNING`) stands for a claim made elsewhere, and the
 * module's writes are classified against it exactly as against a claim of its own; a delete from a lock table
 * stands for a lock row inserted elsewhere. Run only by the audit, never by the rules.
 */
export function buildForeignRecoveries(
  sourceCode: SourceCode,
  accesses: readonly StateAccess[],
  vocabulary: ResolvedVocabulary,
): Recovery[] {
  vocabulary = withLeasedValues(
    withValuesHeldAcrossWork(
      withHeldValues(withClockedFields(withClaimSources(vocabulary, accesses), accesses), accesses),
      accesses,
    ),
    accesses,
  );
  const mod = new Module(sourceCode, accesses, vocabulary);
  const program = sourceCode.ast as unknown as Node;
  // A stand-in claim: no write of the module runs after it, in its unit or elsewhere.
  const standIn = (model: string, lock: LockKey, insert: boolean): Claim => {
    const write: StateWrite = {
      access: "write",
      store: "elsewhere",
      model,
      operation: "claim",
      filter: { kind: "and", items: [] },
      assignments: [],
      node: program,
    };
    return {
      kind: insert ? "inserted-row" : "status",
      write,
      lock,
      assignment: {
        field: lock.field,
        value: { kind: "static", value: lock.value },
        node: program,
        valueNode: program,
      },
      takeover: [],
    };
  };
  const standIns = new Map<string, Claim>();
  for (const w of mod.writes) {
    if (w.effect === "delete" && hasLockWord(w.model)) {
      const key = `${normalizeModel(w.model)}\0row`;
      if (!standIns.has(key))
        standIns.set(
          key,
          standIn(w.model, { model: w.model, field: "row", value: { value: "held" }, valueText: "" }, true),
        );
    }
    for (const branch of mod.branchesOf(w)) {
      for (const atom of branch) {
        if ("opaque" in atom || (atom.op !== "eq" && atom.op !== "in") || !atom.pred.values) continue;
        for (const value of atom.pred.values) {
          if (!isLockAssignment(atom.pred.field, value, vocabulary)) continue;
          const key = `${normalizeModel(w.model)}\0${normalizeName(atom.pred.field)}\0${String(value.value)}`;
          if (standIns.has(key)) continue;
          const valueText = typeof value.value === "string" ? JSON.stringify(value.value) : String(value.value);
          standIns.set(key, standIn(w.model, { model: w.model, field: atom.pred.field, value, valueText }, false));
        }
      }
    }
  }
  // A read that picks rows stuck in an in-progress value by age (`find({ status: "in_progress", startedAt: { lt } })`)
  // stands for a claim made elsewhere just as a write's filter does: the writes after it move those rows.
  const scans = mod.reads.filter((r) => !r.locking).flatMap((r) => findStaleScans(sourceCode, r, vocabulary));
  for (const scan of scans) {
    const key = `${normalizeModel(scan.read.model)}\0${normalizeName(scan.field)}\0${String(scan.value.value)}`;
    if (standIns.has(key)) continue;
    const valueText =
      typeof scan.value.value === "string" ? JSON.stringify(scan.value.value) : String(scan.value.value);
    standIns.set(
      key,
      standIn(scan.read.model, { model: scan.read.model, field: scan.field, value: scan.value, valueText }, false),
    );
  }
  if (standIns.size === 0) return [];
  const out: Classified = { recoveries: [], holder: [], releases: [] };
  for (const claim of standIns.values()) {
    for (const w of mod.writes) {
      if (normalizeModel(claim.write.model) === normalizeModel(w.model)) classifyAgainst(mod, w, claim, scans, out);
    }
  }
  // A sweep that judges age in JS on something outside the row (how long it has watched the row, a liveness key)
  // and then writes with the status pinned has no column it could repeat in the filter: a holder that finished in
  // between no longer matches. Only a by-id write, or one that drops the row's own age column, races.
  return out.recoveries.map((r) =>
    r.flaws[0] === "check-in-js" &&
    r.check?.kind === "if" &&
    mod.branchesOf(r.write).every((b) => pins(b, r.lock.field, r.lock.value))
      ? { ...r, flaws: [] }
      : r,
  );
}
