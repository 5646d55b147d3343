/** Text edits the recognizers offer for suggestions, shared so every store writes them the same way. */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { TextEdit } from "../model/model.js";

/** `text` (a `key: value` property) added as the last property of an object literal, keeping its comma style. */
export function appendProperty(sourceCode: Readonly<TSESLint.SourceCode>, object: TSESTree.ObjectExpression, text: string): TextEdit {
  const last = object.properties[object.properties.length - 1];
  if (!last) return { range: [object.range[0] + 1, object.range[1] - 1], text: ` ${text} ` };
  const after = sourceCode.getTokenAfter(last);
  if (after && after.value === ",") return { range: [after.range[1], after.range[1]], text: ` ${text},` };
  return { range: [last.range[1], last.range[1]], text: `, ${text}` };
}

/** A field name as an object key: bare when it is an identifier, quoted otherwise. */
export function propertyKey(field: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(field) ? field : JSON.stringify(field);
}
