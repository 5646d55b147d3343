/**
 * How the model compares names of models and tables: `Job`, `job` and `jobs` are one model, whichever store or
 * client named it (a Prisma delegate, a TypeORM entity, a raw SQL table); and values, as claims and recoveries
 * compare them (`IN_PROGRESS` = `in-progress`).
 */
import type { Assignment, StateWrite, StaticValue } from "./accesses.js";
import type { Claim } from "./claims.js";
import { normalizeName } from "./settings.js";
import { byKind } from "./claims.js";

/**
 * A model or table name in the singular, as English forms the plural: `companies` = `company`, `processes` =
 * `process`, `statuses` = `status`, `batches` = `batch`, `jobs` = `job`; a name that is already singular
 * (`status`, `process`, `analysis`) stays.
 */
export function normalizeModel(name: string): string {
  const n = normalizeName(name);
  if (n.length <= 3) return n;
  if (n.endsWith("ies") && n.length > 4) return `${n.slice(0, -3)}y`;
  if (/(?:ss|us|x|ch|sh|z)es$/.test(n)) return n.slice(0, -2);
  if (/(?:ss|us|is)$/.test(n)) return n;
  return n.endsWith("s") ? n.slice(0, -1) : n;
}

/**
 * Two writes' models may name one table though their names differ: one is a client's entity name that a schema may
 * map to any table (`mappedModel`), the other a table named in another store's syntax (a raw statement's). Only an
 * answer that says something is missing may lean on this, never a finding.
 */
export function namedApart(a: StateWrite, b: StateWrite): boolean {
  return a.store !== b.store && Boolean(a.mappedModel) !== Boolean(b.mappedModel);
}

/** Two field names are one column: `lockedAt`, `locked_at` and `LOCKED_AT` compare equal (`normalizeName`). */
export function sameField(a: string, b: string): boolean {
  return normalizeName(a) === normalizeName(b);
}

export function sameValue(a: StaticValue, b: StaticValue): boolean {
  if (typeof a.value === "string" && typeof b.value === "string") {
    return a.value.replace(/[-_\s]/g, "").toLowerCase() === b.value.replace(/[-_\s]/g, "").toLowerCase();
  }
  return a.value === b.value;
}

/** The write's assignment of `field` with a clock reading (`heartbeatAt: new Date()`, `updated_at = now()`), if any. */
export function clockStamp(write: StateWrite, field: string): Assignment | undefined {
  return write.assignments.find((a) => a.value.kind === "now" && normalizeName(a.field) === normalizeName(field));
}

export function formatValue(v: StaticValue): string {
  return typeof v.value === "string" ? v.value : String(v.value);
}

/** The pairing key of a claim's lock across modules: (model, field, value) with model and field compared loosely. */
export function lockKey(model: string, field: string, value: unknown): string {
  return `${normalizeModel(model)}|${normalizeName(field)}|${String(value)}`;
}

/** A claim's pairing key: its (model, field, value), or the lock table's for a lock row inserted under a unique key. */
export function claimKey(claim: Claim): string {
  const row = (c: Claim) => lockKey(c.lock.model, "row", "held");
  const field = (c: Claim) => lockKey(c.lock.model, c.lock.field, c.lock.value.value);
  return byKind(claim, { "inserted-row": row, "keyed-row": row, "unenforced-row": row, lease: field, status: field });
}

/** A claim in words: `job.status = "GENERATING"`, `locks (lock row)`. */
export function claimName(claim: Claim): string {
  const row = (c: Claim) => `${c.lock.model} (lock row)`;
  const field = (c: Claim) => `${c.lock.model}.${c.lock.field} = ${formatValue(c.lock.value)}`;
  return byKind(claim, { "inserted-row": row, "keyed-row": row, "unenforced-row": row, lease: field, status: field });
}
