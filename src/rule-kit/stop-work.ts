/**
 * heartbeat-abort's suggestion (issue 18): where a renewal's failure is caught and the work goes on, stop the work
 * there with what the module already has for it, never with something invented:
 * - an AbortController whose `signal` the module reads (the work honours it): `controller.abort()`;
 * - a boolean the module's loops test to go on (`while (!lost)`, `while (running)`): set it so the loop ends.
 * The statement opens the handler's block. Without one of those, or with a handler that is not a block, no edit.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node, TextEdit } from "../core/model/accesses.js";
import { variableAt } from "../core/reading/values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

export interface StopWork {
  /** The statement added: `controller.abort();`, `lost = true;`. */
  readonly statement: string;
  readonly edit: TextEdit;
}

/** The block a handler runs: a catch clause's, a callback's; undefined for an expression body. */
function handlerBlock(handler: Node): TSESTree.BlockStatement | undefined {
  if (handler.type === "CatchClause") return handler.body;
  if (
    (handler.type === "ArrowFunctionExpression" || handler.type === "FunctionExpression") &&
    handler.body.type === "BlockStatement"
  )
    return handler.body;
  if (handler.type === "BlockStatement") return handler;
  return undefined;
}

function loopTest(node: Node): TSESTree.Expression | null | undefined {
  if (node.type === "WhileStatement" || node.type === "DoWhileStatement") return node.test;
  if (node.type === "ForStatement") return node.test;
  return undefined;
}

/** Each variable the module declares with an initialiser (`const c = new AbortController()`, `let lost = false`). */
function* declared(
  sourceCode: SourceCode,
): Generator<{ variable: TSESLint.Scope.Variable; declarator: TSESTree.VariableDeclarator }> {
  for (const scope of sourceCode.scopeManager?.scopes ?? []) {
    for (const variable of scope.variables) {
      const def = variable.defs[0];
      if (variable.defs.length === 1 && def?.type === "Variable" && def.node.id.type === "Identifier" && def.node.init)
        yield { variable, declarator: def.node };
    }
  }
}

/** The statement that stops the work from inside `handler`, and the edit that puts it there. */
export function stopWorkEdit(sourceCode: SourceCode, handler: Node): StopWork | undefined {
  const block = handlerBlock(handler);
  if (!block) return undefined;
  // The variable must be the one the handler's code would name (not shadowed there, not out of its reach).
  const inScope = (variable: { name: string }) =>
    variableAt(sourceCode as never, variable.name, block.body[0] ?? block) === variable;
  let statement: string | undefined;
  for (const { variable, declarator: d } of declared(sourceCode)) {
    if (!d.init) continue;
    const name = variable.name;
    const reads = variable.references.filter((r) => r.isRead()).map((r) => r.identifier);
    // An AbortController whose signal the work reads.
    if (
      d.init.type === "NewExpression" &&
      d.init.callee.type === "Identifier" &&
      d.init.callee.name === "AbortController"
    ) {
      const signalRead = reads.some(
        (id) =>
          id.parent?.type === "MemberExpression" &&
          id.parent.object === id &&
          !id.parent.computed &&
          id.parent.property.type === "Identifier" &&
          id.parent.property.name === "signal",
      );
      if (signalRead && inScope(variable)) {
        statement = `${name}.abort();`;
        break;
      }
      continue;
    }
    // A boolean the loops test: `while (!lost)` ends when it is set, `while (running)` when it is cleared.
    if (
      d.init.type !== "Literal" ||
      typeof d.init.value !== "boolean" ||
      d.parent?.type !== "VariableDeclaration" ||
      d.parent.kind === "const"
    )
      continue;
    for (const id of reads) {
      const negated = id.parent?.type === "UnaryExpression" && id.parent.operator === "!";
      const test = negated ? id.parent : id;
      if (!test.parent || loopTest(test.parent) !== test) continue;
      if (negated === (d.init.value === false) && inScope(variable))
        statement = `${name} = ${negated ? "true" : "false"};`;
      break;
    }
    if (statement) break;
  }
  if (!statement) return undefined;
  const open = block.range[0] + 1;
  const first = block.body[0];
  const outer = /^[ \t]*/.exec(sourceCode.lines[block.loc.start.line - 1] ?? "")![0];
  if (first || sourceCode.getCommentsInside(block).length > 0) {
    const indent = first ? /^[ \t]*/.exec(sourceCode.lines[first.loc.start.line - 1] ?? "")![0] : `${outer}  `;
    return { statement, edit: { range: [open, open], text: `\n${indent}${statement}` } };
  }
  // An empty block (`.catch(() => {})`): the statement on its own line, the closing brace at the block's indent.
  return { statement, edit: { range: [open, block.range[1] - 1], text: `\n${outer}  ${statement}\n${outer}` } };
}
