/**
 * What the document APIs of the CMS frameworks (Payload's Local API, Strapi's services) share: the `data` object a
 * write stores (its values read as every store reads them, dates sent as ISO strings being the clock). Their filters are object-filter dialects (src/core/reading/object-filters.ts).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, Node } from "../core/model/accesses.js";
import type { RecognizerContext } from "./recognizer.js";
import { objectLiteral } from "../core/reading/values.js";
import { objectAssignments } from "../core/reading/assignments.js";

/** The assignments of a `data` object the file spells out; undefined when it is not one. */
export function dataAssignments(ctx: RecognizerContext, node: Node | undefined): Assignment[] | undefined {
  const obj: TSESTree.ObjectExpression | undefined = objectLiteral(ctx.sourceCode, node);
  return obj && objectAssignments(ctx.sourceCode, obj);
}
