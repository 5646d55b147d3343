/**
 * MongoDB: what an update writes, as assignments (an update document's operators, an update pipeline's stages), and
 * the fields of a document to insert.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, AssignedValue, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { evaluate, keyName, unwrap } from "../../core/reading/values.js";
import { assignedValue, objectAssignments } from "../../core/reading/assignments.js";
import { OTHER_UPDATE_OPS, objectOf } from "./vocabulary.js";

function fieldsOf(
  ctx: RecognizerContext,
  object: TSESTree.ObjectExpression,
  value: (node: Node) => AssignedValue,
  out: Assignment[],
): void {
  out.push(
    ...objectAssignments(ctx.sourceCode, object, { value: (node) => ({ value: value(node), valueNode: node }) }),
  );
}

/**
 * A value of an update pipeline's `$set`: `"$$NOW"` is the clock, another `"$field"` or `"$$var"` string and any
 * expression object are computed by the server (other); a plain value is what it says.
 */
function pipelineValue(ctx: RecognizerContext, node: Node): AssignedValue {
  const v = evaluate(ctx.sourceCode, node);
  if (typeof v?.value === "string" && v.value.startsWith("$"))
    return v.value === "$$NOW" ? { kind: "now" } : { kind: "other" };
  if (unwrap(node).type === "ObjectExpression") return { kind: "other" };
  return assignedValue(ctx.sourceCode, node);
}

/**
 * The fields an update pipeline (`[{ $set: { status: "PENDING", at: "$$NOW" } }, { $unset: "lease" }]`) writes:
 * `$set`/`$addFields` stages, `$unset` of a field or a list of them. Another stage (`$replaceWith`, `$project`)
 * rewrites the document in ways not read: the whole update is then unknown and gives no assignments.
 */
function parsePipelineUpdate(ctx: RecognizerContext, stages: TSESTree.ArrayExpression): Assignment[] {
  const out: Assignment[] = [];
  for (const el of stages.elements) {
    const stage = el && el.type !== "SpreadElement" ? objectOf(ctx, el) : undefined;
    const only = stage?.properties.length === 1 ? stage.properties[0] : undefined;
    const key = only?.type === "Property" ? keyName(only.key, only.computed) : undefined;
    if (!only || only.type !== "Property" || key === undefined) return [];
    if (key === "$set" || key === "$addFields") {
      const fields = objectOf(ctx, only.value);
      if (!fields) return [];
      fieldsOf(ctx, fields, (node) => pipelineValue(ctx, node), out);
    } else if (key === "$unset") {
      const list = unwrap(only.value);
      const names = list.type === "ArrayExpression" ? list.elements : [list];
      for (const n of names) {
        const v = n && n.type !== "SpreadElement" ? evaluate(ctx.sourceCode, n) : undefined;
        if (typeof v?.value !== "string") return [];
        out.push({
          field: v.value,
          value: { kind: "static", value: { value: null } },
          node: n as Node,
          valueNode: n as Node,
        });
      }
    } else return [];
  }
  return out;
}

/**
 * The fields an update document sets: `$set` (and top-level fields, which Mongoose casts to `$set`), `$unset`
 * (null), `$currentDate` (now), `$inc` and other operators (other); or an update pipeline's stages.
 */
export function parseUpdate(ctx: RecognizerContext, node: Node): Assignment[] {
  const n = unwrap(node);
  if (n.type === "ArrayExpression") return parsePipelineUpdate(ctx, n);
  const update = objectOf(ctx, node);
  if (!update) return [];
  const out: Assignment[] = [];
  for (const p of update.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    if (key === undefined) continue;
    if (!key.startsWith("$")) {
      out.push({ field: key, value: assignedValue(ctx.sourceCode, p.value), node: p, valueNode: p.value });
      continue;
    }
    const fields = objectOf(ctx, p.value);
    if (!fields) continue;
    if (key === "$set") fieldsOf(ctx, fields, (node) => assignedValue(ctx.sourceCode, node), out);
    else if (key === "$unset") fieldsOf(ctx, fields, () => ({ kind: "static", value: { value: null } }), out);
    else if (key === "$currentDate") fieldsOf(ctx, fields, () => ({ kind: "now" }), out);
    else if (OTHER_UPDATE_OPS.has(key)) fieldsOf(ctx, fields, () => ({ kind: "other" }), out);
    // $setOnInsert only writes when an upsert inserts: it changes no existing document.
  }
  return out;
}

/** A document to insert: its fields as assignments. */
export function parseDocument(ctx: RecognizerContext, doc: TSESTree.ObjectExpression): Assignment[] {
  const out: Assignment[] = [];
  fieldsOf(ctx, doc, (node) => assignedValue(ctx.sourceCode, node), out);
  return out;
}
