/**
 * Receivers' named types, for `locks-audit --types` only. The audit builds a TypeScript program, registers it here
 * (`sharpenWith`) and hands it to the parser; a receiver's type can then say what syntax cannot: `private repo:
 * JobRepo` with `type JobRepo = Repository<Job>` in another module is a repository of `Job`. Sharpening can make a
 * write visible, so it adds findings; it is therefore never used for a program the audit did not register (an
 * editor's or a type-checked config's `projectService` program): there, and without a program, `namedTypeOf`
 * returns undefined at once and the rules read syntax only.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The named type of an expression and the names of its type arguments: `Repository<Job>` → `{ name: "Repository", args: ["Job"] }`. */
export interface NamedType {
  readonly name: string;
  readonly args: readonly string[];
}

const registered = new WeakSet<object>();

/** Lets recognizers read receivers' types from `program` (the audit's own). */
export function sharpenWith(program: object): void {
  registered.add(program);
}

export function namedTypeOf(sourceCode: SourceCode, node: Node): NamedType | undefined {
  const services = sourceCode.parserServices;
  const program = services?.program;
  const tsNode = program && registered.has(program) ? services.esTreeNodeToTSNodeMap?.get(node) : undefined;
  if (!program || !tsNode) return undefined;
  try {
    const checker = program.getTypeChecker();
    const type = checker.getTypeAtLocation(tsNode);
    const name = type.getSymbol()?.getName();
    if (!name || name === "__type" || name === "__object") return undefined;
    const reference = "target" in type ? (type as Parameters<typeof checker.getTypeArguments>[0]) : undefined;
    const args = reference
      ? checker
          .getTypeArguments(reference)
          .map((t) => t.getSymbol()?.getName())
          .filter((n): n is string => n !== undefined)
      : [];
    return { name, args };
  } catch {
    return undefined;
  }
}
