/** The names an expression is made of, and the variable a call's result is stored in: what ties an effect to a lock. */
import type { TSESLint } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import { getConstInit, resultBinding, unwrap } from "../../reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** Identifier names and member texts (`job`, `job.id`) an expression uses, through `const` bindings. */
export function namesIn(
  sourceCode: SourceCode,
  node: Node | undefined,
  out = new Set<string>(),
  depth = 0,
): Set<string> {
  if (!node || depth > 6) return out;
  const n = unwrap(node);
  switch (n.type) {
    case "Identifier": {
      out.add(n.name);
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") namesIn(sourceCode, init, out, depth + 1);
      return out;
    }
    case "MemberExpression":
      out.add(sourceCode.getText(n).replace(/\s+/g, "").replace(/\?\./g, "."));
      namesIn(sourceCode, n.object, out, depth + 1);
      if (n.computed) namesIn(sourceCode, n.property, out, depth + 1);
      return out;
    case "Property":
      if (n.computed) namesIn(sourceCode, n.key, out, depth + 1);
      return namesIn(sourceCode, n.value, out, depth + 1);
    case "CallExpression":
    case "NewExpression":
      if (n.callee.type === "MemberExpression") namesIn(sourceCode, n.callee.object, out, depth + 1);
      for (const a of n.arguments) namesIn(sourceCode, a, out, depth + 1);
      return out;
    default:
      for (const key of [
        "expressions",
        "quasis",
        "left",
        "right",
        "argument",
        "elements",
        "properties",
        "consequent",
        "alternate",
        "test",
        "expression",
      ] as const) {
        const child = (n as unknown as Record<string, unknown>)[key];
        if (Array.isArray(child)) {
          for (const c of child)
            if (c && typeof c === "object" && "type" in c) namesIn(sourceCode, c as Node, out, depth + 1);
        } else if (child && typeof child === "object" && "type" in child)
          namesIn(sourceCode, child as Node, out, depth + 1);
      }
      return out;
  }
}

/** The variable a call's result is stored in (`const job = await Job.findOneAndUpdate(…)`, `const [row] = …`). */
export const resultName = (node: Node): string | undefined => resultBinding(node)?.name;
