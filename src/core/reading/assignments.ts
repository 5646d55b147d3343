/**
 * What a write stores in a field, one reading for every store: the clock (a JavaScript reading, or SQL that reads
 * the database's clock: `src/core/reading/clock.ts`), a statically known value, or something else (a computed value,
 * SQL, an increment). Stores whose data objects wrap a value (Prisma's `{ set: x }`, Mongo's pipeline strings) unwrap
 * it first and hand the value here.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AssignedValue, Assignment, Node } from "../model/accesses.js";
import { isClockValue } from "./clock.js";
import { evaluate, keyName } from "./values.js";

export function assignedValue(sourceCode: Readonly<TSESLint.SourceCode>, node: Node): AssignedValue {
  if (isClockValue(sourceCode, node)) return { kind: "now" };
  const v = evaluate(sourceCode, node);
  return v ? { kind: "static", value: v } : { kind: "other" };
}

/** How a store reads one property of an object it writes: the column its key names, and what its value stores. */
export interface PropertyReading {
  /** The column a key names (`fieldOf(scope, key)` for a builder with table aliases); undefined skips the property. */
  readonly field?: (key: string) => string | undefined;
  /** What the value stores, and the node it was read from; undefined skips the property (Prisma's nested relation write). */
  readonly value?: (node: Node) => { readonly value: AssignedValue; readonly valueNode: Node } | undefined;
}

/**
 * The assignments of an object a write stores (Prisma's `data`, Sequelize's values, Mongo's `$set`, a builder's
 * `.set({…})`): one per property whose key is readable, the value read as every store reads it unless the store's
 * `read.value` says otherwise. Spreads and computed keys nobody can name are not assignments anyone can read.
 */
export function objectAssignments(
  sourceCode: Readonly<TSESLint.SourceCode>,
  object: TSESTree.ObjectExpression,
  read: PropertyReading = {},
): Assignment[] {
  const out: Assignment[] = [];
  for (const p of object.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    const field = key === undefined ? undefined : read.field ? read.field(key) : key;
    if (!field) continue;
    const stored = read.value ? read.value(p.value) : { value: assignedValue(sourceCode, p.value), valueNode: p.value };
    if (stored) out.push({ field, value: stored.value, node: p, valueNode: stored.valueNode });
  }
  return out;
}
