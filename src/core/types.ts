/**
 * Optional type information. When the parser was given a TypeScript program (`parserOptions.project`, or the
 * program `locks-audit --types` builds), a receiver's type can say what syntax cannot: `private repo: JobRepo`
 * with `type JobRepo = Repository<Job>` in another module is a repository of `Job`. Without a program every
 * function here returns undefined at once; nothing may depend on types being there (DESIGN: syntactic first).
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { Node } from "./model.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The named type of an expression and the names of its type arguments: `Repository<Job>` → `{ name: "Repository", args: ["Job"] }`. */
export interface NamedType {
  readonly name: string;
  readonly args: readonly string[];
}

export function namedTypeOf(sourceCode: SourceCode, node: Node): NamedType | undefined {
  const services = sourceCode.parserServices;
  const program = services?.program;
  const tsNode = program ? services.esTreeNodeToTSNodeMap?.get(node) : undefined;
  if (!program || !tsNode) return undefined;
  try {
    const checker = program.getTypeChecker();
    const type = checker.getTypeAtLocation(tsNode);
    const name = type.getSymbol()?.getName();
    if (!name || name === "__type" || name === "__object") return undefined;
    const reference = "target" in type ? (type as Parameters<typeof checker.getTypeArguments>[0]) : undefined;
    const args = reference ? checker.getTypeArguments(reference).map((t) => t.getSymbol()?.getName()).filter((n): n is string => n !== undefined) : [];
    return { name, args };
  } catch {
    return undefined;
  }
}
