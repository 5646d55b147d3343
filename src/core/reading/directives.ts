/**
 * `// locks-recovered-by: src/jobs/sweeper.ts` next to a claim: the author says the claim's stale recovery lives in
 * another module. `require-stale-recovery` accepts the claim in the editor (it sees one file); the project-wide audit
 * (src/audit/) checks that the named module really holds a matching recovery and reports the directive otherwise.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

export interface RecoveredByDirective {
  /** The module named, as written (a project-relative path, a path relative to this file, or an import specifier). */
  readonly target: string;
  readonly comment: TSESTree.Comment;
}

const DIRECTIVE = /^\s*\*?\s*locks-recovered-by:\s*(\S+)/;
const byLine = new WeakMap<SourceCode, Map<number, RecoveredByDirective>>();

/** The module's directives by the last line of their comment. */
function directivesOf(sourceCode: SourceCode): Map<number, RecoveredByDirective> {
  let map = byLine.get(sourceCode);
  if (map) return map;
  map = new Map();
  for (const comment of sourceCode.getAllComments()) {
    const m = DIRECTIVE.exec(comment.value);
    if (m) map.set(comment.loc.end.line, { target: m[1]!.replace(/[.,;]+$/, ""), comment });
  }
  byLine.set(sourceCode, map);
  return map;
}

/** The statement a node belongs to (the `const claimed = await …` around a call). */
function statementOf(node: Node): Node {
  let n: Node = node;
  while (n.parent && !/Statement$|Declaration$/.test(n.type)) n = n.parent;
  // `export async function` / `export const`: the export is the statement.
  if (n.parent?.type === "ExportNamedDeclaration") n = n.parent;
  return n;
}

/**
 * The directive that speaks for the write at `node`: in the comments right above its statement (a run of comment
 * lines with nothing between), or a comment on the write's first line.
 */
export function recoveredByDirective(sourceCode: SourceCode, node: Node): RecoveredByDirective | undefined {
  const directives = directivesOf(sourceCode);
  if (directives.size === 0) return undefined;
  const onLine = directives.get(node.loc.start.line);
  if (onLine && onLine.comment.loc.start.line === node.loc.start.line) return onLine;
  const statement = statementOf(node);
  for (const comment of [...sourceCode.getCommentsBefore(statement)].reverse()) {
    const d = directives.get(comment.loc.end.line);
    if (d && d.comment === comment) return d;
  }
  return undefined;
}
