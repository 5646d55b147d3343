/**
 * The type a binding is declared with, read from the syntax: `private dataSource: DataSource` (a constructor's
 * parameter property or a class field, for `this.dataSource`), `(pool: Pool) => …`, `let manager: EntityManager`, and
 * the module the type is imported from. No type checker: what the annotation names is what the code says it is.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { findVariable, keyName, unwrap } from "./values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

export interface DeclaredType {
  /** The type's name as written (`DataSource`). */
  readonly name: string;
  /** The module it is imported from (`typeorm`), when the file imports it. */
  readonly from?: string;
}

function referenceName(annotation: TSESTree.TSTypeAnnotation | undefined): TSESTree.Identifier | undefined {
  const t = annotation?.typeAnnotation;
  if (t?.type !== "TSTypeReference") return undefined;
  return t.typeName.type === "Identifier" ? t.typeName : undefined;
}

/** The annotation of `this.name` in the class `from` sits in: a typed field or a constructor parameter property. */
function memberAnnotation(from: Node, name: string): TSESTree.Identifier | undefined {
  let p = from.parent;
  while (p && p.type !== "ClassBody") p = p.parent;
  if (!p) return undefined;
  for (const el of p.body) {
    if (el.type === "PropertyDefinition" && keyName(el.key, el.computed) === name)
      return referenceName(el.typeAnnotation);
    if (el.type !== "MethodDefinition" || el.kind !== "constructor") continue;
    for (const param of el.value.params) {
      if (param.type !== "TSParameterProperty") continue;
      const id = param.parameter.type === "AssignmentPattern" ? param.parameter.left : param.parameter;
      if (id.type === "Identifier" && id.name === name) return referenceName(id.typeAnnotation);
    }
  }
  return undefined;
}

/** The declared type of an identifier or of `this.name`, and where the type comes from. */
export function declaredType(sourceCode: SourceCode, node: Node): DeclaredType | undefined {
  const n = unwrap(node);
  let type: TSESTree.Identifier | undefined;
  if (n.type === "Identifier") {
    const def = findVariable(sourceCode, n)?.defs[0];
    if (def && (def.type === "Variable" || def.type === "Parameter") && def.name.type === "Identifier")
      type = referenceName(def.name.typeAnnotation);
  } else if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression") {
    const name = keyName(n.property, n.computed);
    if (name !== undefined) type = memberAnnotation(n, name);
  }
  if (!type) return undefined;
  const def = findVariable(sourceCode, type)?.defs[0];
  const decl = def?.type === "ImportBinding" ? def.parent : undefined;
  const from = decl?.type === "ImportDeclaration" ? String(decl.source.value) : undefined;
  return { name: type.name, ...(from !== undefined ? { from } : {}) };
}
