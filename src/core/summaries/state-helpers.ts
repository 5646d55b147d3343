/**
 * State writes made through a module's own helper whose values are its parameters: `updateStatus(id, status)` that
 * runs `UPDATE sms_queue SET status = $1 WHERE id = $2`, called as `this.updateStatus(sms.id, "processing")`, or the
 * properties of a data object it is handed (`updateJob(id, patch)` storing `patch.status`, called as
 * `updateJob(row.id, { status: "pending" })`: a property the call's object does not have is not stored), or spread
 * into the object it stores (`{ ...fields, updated_at: now }`: each property of the call's object is stored). The
 * helper's write stores no known value (its status is whatever the caller passes), so it claims nothing where it is
 * written; each call that passes a known value is that write, made where the call is. An instance is the helper's
 * write with every parameter replaced by the call's argument (its value read in place, its node the argument), at the
 * call's node: the caller's checks, reads and locking reads are the ones on the way to the call, as they are for the
 * key-value helpers' instances (summaries.ts).
 *
 * Unknown stays unknown: a call that cannot be resolved to the one function (`calledFunction`), a missing or spread
 * argument where the write needs it, a helper reached only through another helper, and a call inside the helper
 * itself give no instance. The recognizer's edits are not carried over: they would change the helper's text, which
 * every call shares.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import {
  predicateValue,
  type Assignment,
  type Condition,
  type Node,
  type StateAccess,
  type StateWrite,
} from "../model/accesses.js";
import { assignedValue } from "../reading/assignments.js";
import { calledFunction, parameterIndex } from "../reading/calls.js";
import { enclosingFunction, functionName } from "../reading/units.js";
import { evaluate, findProperty, keyName, objectLiteral, unwrap } from "../reading/values.js";
import { walk } from "../reading/walk.js";

type SourceCode = Readonly<TSESLint.SourceCode>;
type Fn = TSESTree.FunctionLike;

/**
 * The parameter and property a value is read from when the helper is handed a data object (`patch.status` of
 * `updateJob(id, patch)`), or undefined.
 */
function parameterProperty(sourceCode: SourceCode, fn: Fn, node: Node): { index: number; key: string } | undefined {
  const n = unwrap(node);
  if (n.type !== "MemberExpression" || n.computed || n.property.type !== "Identifier") return undefined;
  const index = parameterIndex(sourceCode, fn, n.object as Node);
  return index === undefined ? undefined : { index, key: n.property.name };
}

/**
 * What a call's data object gives `key`: its property's value, `absent` where the object, read whole, has none (the
 * helper's `if (patch.status !== undefined)` skips it, and a store leaves an undefined field alone), or undefined
 * where the object cannot be read whole (a parameter, a spread).
 */
function argumentProperty(sourceCode: SourceCode, arg: Node, key: string): Node | "absent" | undefined {
  const object = objectLiteral(sourceCode, arg);
  if (!object || object.properties.some((p) => p.type !== "Property" || keyName(p.key, p.computed) === undefined))
    return undefined;
  const property = findProperty(object, key);
  return property ? (property.value as Node) : "absent";
}

/**
 * The parameters the helper's stored object spreads (`{ ...fields, updated_at: now }` of `updateJob(jobId, fields)`),
 * with the fields written after the spread (which the spread cannot override). The stored object is the one holding
 * the write's assignments: a spread in its filter names rows, not values.
 */
function spreadParameters(
  sourceCode: SourceCode,
  fn: Fn,
  write: StateWrite,
): { index: number; after: readonly string[] }[] {
  const out: { index: number; after: string[] }[] = [];
  walk(write.node, (n) => {
    if (n.type !== "ObjectExpression") return;
    const props = n.properties;
    if (!props.some((p) => write.assignments.some((a) => a.node === p))) return;
    props.forEach((p, i) => {
      if (p.type !== "SpreadElement") return;
      const index = parameterIndex(sourceCode, fn, p.argument as Node);
      if (index === undefined) return;
      const after = props
        .slice(i + 1)
        .flatMap((q) => (q.type === "Property" ? [keyName(q.key, q.computed)] : []))
        .filter((k): k is string => k !== undefined);
      out.push({ index, after });
    });
  });
  return out;
}

/** The write's condition with parameters replaced by the call's arguments; undefined where one is missing. */
function instantiateCondition(
  sourceCode: SourceCode,
  fn: Fn,
  c: Condition,
  args: readonly Node[],
): Condition | undefined {
  switch (c.kind) {
    case "and":
    case "or": {
      const items = c.items.map((i) => instantiateCondition(sourceCode, fn, i, args));
      return items.every((i) => i !== undefined) ? { kind: c.kind, items: items as Condition[] } : undefined;
    }
    case "not": {
      const item = instantiateCondition(sourceCode, fn, c.item, args);
      return item && { kind: "not", item };
    }
    case "pred": {
      const i = parameterIndex(sourceCode, fn, predicateValue(c));
      if (i === undefined) return c;
      const arg = args[i];
      if (!arg || arg.type === "SpreadElement") return undefined;
      const v = evaluate(sourceCode, arg);
      // The call's argument is what the row is named by now (`row.id` for the helper's `jobId`).
      return { ...c, node: arg, value: arg, values: c.op === "eq" || c.op === "ne" ? (v ? [v] : undefined) : c.values };
    }
    default:
      return c;
  }
}

/** The helper's write made at `call`, or undefined when the call passes no known value for any parameter it stores. */
function instance(sourceCode: SourceCode, fn: Fn, write: StateWrite, call: TSESTree.CallExpression) {
  const args = call.arguments as Node[];
  let known = false;
  const assignments: Assignment[] = [];
  for (const a of write.assignments) {
    const i = parameterIndex(sourceCode, fn, a.valueNode);
    const fromObject = i === undefined ? parameterProperty(sourceCode, fn, a.valueNode) : undefined;
    if (fromObject) {
      const arg = args[fromObject.index];
      const given = arg && arg.type !== "SpreadElement" ? argumentProperty(sourceCode, arg, fromObject.key) : undefined;
      if (given === "absent") continue;
      if (!given) {
        assignments.push(a);
        continue;
      }
      const value = assignedValue(sourceCode, given);
      if (value.kind !== "other") known = true;
      assignments.push({ field: a.field, value, node: given, valueNode: given });
      continue;
    }
    if (i === undefined) {
      assignments.push(a);
      continue;
    }
    const arg = args[i];
    if (!arg || arg.type === "SpreadElement") return undefined;
    const value = assignedValue(sourceCode, arg);
    if (value.kind !== "other") known = true;
    assignments.push({ field: a.field, value, node: arg, valueNode: arg });
  }
  // The call's own data object, spread into the stored one: each property it has is stored, unless a property
  // written after the spread overrides it. A spread argument nobody can read whole adds nothing known.
  for (const spread of spreadParameters(sourceCode, fn, write)) {
    const object = objectLiteral(sourceCode, args[spread.index]);
    if (!object) continue;
    for (const p of object.properties) {
      const key = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
      if (p.type !== "Property" || key === undefined || spread.after.includes(key)) continue;
      const value = assignedValue(sourceCode, p.value as Node);
      if (value.kind !== "other") known = true;
      const at = assignments.findIndex((a) => a.field === key);
      if (at >= 0) assignments.splice(at, 1);
      assignments.push({ field: key, value, node: p, valueNode: p.value as Node });
    }
  }
  if (!known) return undefined;
  const filter = instantiateCondition(sourceCode, fn, write.filter, args);
  if (!filter) return undefined;
  const made: StateWrite = {
    access: "write",
    store: write.store,
    model: write.model,
    operation: write.operation,
    ...(write.effect ? { effect: write.effect } : {}),
    ...(write.onConflict ? { onConflict: write.onConflict } : {}),
    ...(write.modelFromName ? { modelFromName: true } : {}),
    ...(write.dynamicModel ? { dynamicModel: true } : {}),
    filter,
    assignments,
    node: call,
    madeBy: write.node,
  };
  return made;
}

/**
 * The instances, at their calls, of the module's state writes whose stored values are the writing function's
 * parameters. Only for a write that is the function's own (not in a callback of it) and a function the module calls.
 */
export function stateHelperInstances(sourceCode: SourceCode, accesses: readonly StateAccess[]): StateWrite[] {
  const helpers = new Map<Fn, StateWrite[]>();
  for (const a of accesses) {
    if (a.access !== "write" || a.effect === "delete" || a.madeBy) continue;
    const fn = enclosingFunction(a.node);
    if (!fn || functionName(fn) === undefined) continue;
    const fromParameter = (x: Assignment) =>
      parameterIndex(sourceCode, fn, x.valueNode) !== undefined ||
      parameterProperty(sourceCode, fn, x.valueNode) !== undefined;
    if (!a.assignments.some(fromParameter) && spreadParameters(sourceCode, fn, a).length === 0) continue;
    helpers.set(fn, [...(helpers.get(fn) ?? []), a]);
  }
  if (helpers.size === 0) return [];
  const out: StateWrite[] = [];
  walk(sourceCode.ast as Node, (n) => {
    if (n.type !== "CallExpression") return;
    const fn = calledFunction(sourceCode, n);
    const writes = fn && helpers.get(fn);
    if (!writes || (n.range[0] >= fn.range[0] && n.range[1] <= fn.range[1])) return;
    for (const w of writes) {
      const made = instance(sourceCode, fn, w, n);
      if (made) out.push(made);
    }
  });
  return out;
}
