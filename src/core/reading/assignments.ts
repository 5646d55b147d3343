/**
 * What a write stores in a field, one reading for every store: the clock (a JavaScript reading, or SQL that reads
 * the database's clock: `src/core/reading/clock.ts`), a statically known value, or something else (a computed value,
 * SQL, an increment). Stores whose data objects wrap a value (Prisma's `{ set: x }`, Mongo's pipeline strings) unwrap
 * it first and hand the value here.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { AssignedValue, Node } from "../model/accesses.js";
import { isClockValue } from "./clock.js";
import { evaluate } from "./values.js";

export function assignedValue(sourceCode: Readonly<TSESLint.SourceCode>, node: Node): AssignedValue {
  if (isClockValue(sourceCode, node)) return { kind: "now" };
  const v = evaluate(sourceCode, node);
  return v ? { kind: "static", value: v } : { kind: "other" };
}
