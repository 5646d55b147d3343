/**
 * What a write stores in a field, one reading for every store: the clock (a JavaScript reading, or SQL that reads
 * the database's clock: `src/core/reading/clock.ts`), a statically known value, or something else (a computed value,
 * SQL, an increment). Stores whose data objects wrap a value (Prisma's `{ set: x }`, Mongo's pipeline strings) unwrap
 * it first and hand the value here.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { AssignedValue, Assignment, Node } from "../model/accesses.js";
import { isClockValue } from "./clock.js";
import { evaluate, findVariable, keyName } from "./values.js";

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
  const add = (key: string | undefined, value: Node, node: Node) => {
    const field = key === undefined ? undefined : read.field ? read.field(key) : key;
    if (!field) return;
    const stored = read.value ? read.value(value) : { value: assignedValue(sourceCode, value), valueNode: value };
    if (stored) out.push({ field, value: stored.value, node, valueNode: stored.valueNode });
  };
  for (const p of object.properties) {
    if (p.type !== "Property") continue;
    add(keyName(p.key, p.computed), p.value as Node, p);
  }
  for (const m of memberWrites(sourceCode, object)) add(m.key, m.value, m.node);
  return out;
}

/**
 * The properties a binding's object gains after it is made: `const data = { updated_at: now };` then
 * `if (patch.status !== undefined) data.status = patch.status;`. A write that stores `data` may store each of them
 * (a conditional one too: where it is set, it is stored), so each is an assignment of its own. Only plain
 * assignments to a named member of the binding count; a member nobody can name (`data[key] = v`) adds nothing.
 */
function memberWrites(
  sourceCode: Readonly<TSESLint.SourceCode>,
  object: TSESTree.ObjectExpression,
): { key: string; value: Node; node: Node }[] {
  const decl = object.parent;
  if (decl?.type !== "VariableDeclarator" || decl.init !== object || decl.id.type !== "Identifier") return [];
  const variable = findVariable(sourceCode, decl.id);
  if (!variable) return [];
  const out: { key: string; value: Node; node: Node }[] = [];
  for (const ref of variable.references) {
    const member = ref.identifier.parent;
    if (member?.type !== "MemberExpression" || member.object !== ref.identifier) continue;
    const assignment = member.parent;
    if (assignment?.type !== "AssignmentExpression" || assignment.left !== member || assignment.operator !== "=")
      continue;
    const key = member.property.type === "PrivateIdentifier" ? undefined : keyName(member.property, member.computed);
    if (key !== undefined) out.push({ key, value: assignment.right as Node, node: assignment as Node });
  }
  return out;
}
