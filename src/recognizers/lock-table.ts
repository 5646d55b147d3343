/**
 * In-process tables: `get`, `has`, `set` (`add`) and `delete` on a `Map` or a `Set` that outlives the call making them (a module-level
 * `const locks = new Map()`, a class field, a variable of an enclosing factory). Services keep per-key locks in
 * such a table (`if (locks.has(key)) return busy(); locks.set(key, { at: Date.now() })`); whether a table holds
 * locks is decided by what the module does with it (src/core/facts/lock-tables.ts), not here. A `Map` made in the
 * calling function itself is scratch space and none of this.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node, TableOp } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { enclosingFunction } from "../core/reading/units.js";
import { fieldInit, findVariable, unwrap } from "../core/reading/values.js";

/** The calls read, and the table operation each is: a `Set`'s `add` takes an entry as a `Map`'s `set` does. */
const OPS = new Map<string, TableOp["op"]>([
  ["get", "get"],
  ["has", "has"],
  ["set", "set"],
  ["add", "set"],
  ["delete", "delete"],
]);

/** A `Map` or a `Set` made here: both keep entries by key, and a key's presence is what a guard tests. */
function isNewMap(init: Node | undefined): boolean {
  const n = init && unwrap(init);
  return (
    n?.type === "NewExpression" &&
    n.callee.type === "Identifier" &&
    (n.callee.name === "Map" || n.callee.name === "Set")
  );
}

/** Whether the receiver is a `Map` kept beyond the call: a field, or a `const` declared outside the calling function. */
function isLastingMap(ctx: RecognizerContext, call: TSESTree.CallExpression, receiver: Node): boolean {
  const r = unwrap(receiver);
  if (r.type === "MemberExpression" && unwrap(r.object).type === "ThisExpression") {
    return isNewMap(fieldInit(r));
  }
  if (r.type !== "Identifier") return false;
  const variable = findVariable(ctx.sourceCode, r);
  const def = variable?.defs[0];
  if (!variable || variable.defs.length !== 1 || def?.type !== "Variable" || def.parent.kind !== "const") return false;
  if (!isNewMap(def.node.init ?? undefined)) return false;
  const declaredIn = enclosingFunction(def.node);
  return declaredIn !== enclosingFunction(call);
}

export const lockTableRecognizer: Recognizer = {
  store: "in-process",
  methods: new Set(["set", "get", "add"]),
  companions: new Set(["has", "delete"]),
  recognize(call: TSESTree.CallExpression, ctx: RecognizerContext): TableOp | undefined {
    const callee = unwrap(call.callee);
    if (callee.type !== "MemberExpression" || callee.computed || callee.property.type !== "Identifier")
      return undefined;
    const op = OPS.get(callee.property.name);
    if (!op || call.arguments.length === 0 || call.arguments[0]!.type === "SpreadElement") return undefined;
    const text = ctx.sourceCode.getText(unwrap(callee.object));
    const memo = `table:${text}:${enclosingFunction(call)?.range[0] ?? -1}`;
    let lasting = ctx.scratch.get(memo) as boolean | undefined;
    if (lasting === undefined) {
      lasting = isLastingMap(ctx, call, callee.object);
      ctx.scratch.set(memo, lasting);
    }
    if (!lasting) return undefined;
    const [key, value] = call.arguments;
    return {
      access: "table",
      store: "in-process",
      table: text,
      op,
      node: call,
      keyNode: key!,
      ...(op === "set" && value && value.type !== "SpreadElement" ? { valueNode: value } : {}),
    };
  },
};
