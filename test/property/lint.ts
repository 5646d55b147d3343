// Lints a generated module through ESLint's Linter (flat config, the TypeScript parser, every rule of
// configs.strict) and returns its findings as comparable records: rule, messageId, the report's data and the
// function the report sits in. The rules are wrapped only to see the `data` each report carries (Linter gives
// the formatted message, not the data); what they report is untouched.
import tsParser from "@typescript-eslint/parser";
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import { Linter } from "eslint";
import plugin from "../../src/index.js";

export interface Finding {
  readonly rule: string;
  readonly messageId: string;
  readonly data: Readonly<Record<string, string>>;
  readonly line: number;
  readonly column: number;
  /** The innermost named function or method the report is in (`undefined` at module level). */
  readonly fn: string | undefined;
}

type AnyRule = TSESLint.RuleModule<string, readonly unknown[]>;
type Descriptor = TSESLint.ReportDescriptor<string> & { data?: Record<string, unknown> };

/** The name a function is known by: its id, its method key (class or object), or the variable it is assigned to. */
function functionName(node: TSESTree.Node): string | undefined {
  if (
    node.type === "FunctionDeclaration" ||
    node.type === "FunctionExpression" ||
    node.type === "ArrowFunctionExpression"
  ) {
    if (node.id) return node.id.name;
    const parent = node.parent;
    if ((parent?.type === "MethodDefinition" || parent?.type === "Property") && parent.key.type === "Identifier")
      return parent.key.name;
    if (parent?.type === "VariableDeclarator" && parent.id.type === "Identifier") return parent.id.name;
  }
  return undefined;
}

function enclosingName(sourceCode: Readonly<TSESLint.SourceCode>, loc: TSESTree.Position): string | undefined {
  let node: TSESTree.Node | null = sourceCode.getNodeByRangeIndex(
    sourceCode.getIndexFromLoc(loc),
  ) as TSESTree.Node | null;
  while (node) {
    const name = functionName(node);
    if (name !== undefined) return name;
    node = node.parent ?? null;
  }
  return undefined;
}

let sink: Finding[] | undefined;

function wrap(id: string, rule: AnyRule): AnyRule {
  return {
    ...rule,
    create(context) {
      const report = (descriptor: Descriptor): void => {
        const loc =
          "loc" in descriptor && descriptor.loc
            ? "start" in descriptor.loc
              ? descriptor.loc.start
              : descriptor.loc
            : (descriptor as { node: TSESTree.Node }).node.loc.start;
        const data: Record<string, string> = {};
        for (const [k, v] of Object.entries(descriptor.data ?? {})) data[k] = String(v);
        sink?.push({
          rule: `locks/${id}`,
          messageId: descriptor.messageId,
          data,
          line: loc.line,
          column: loc.column + 1,
          fn: enclosingName(context.sourceCode, loc),
        });
        context.report(descriptor);
      };
      const proxy = Object.create(context, { report: { value: report } }) as typeof context;
      return rule.create(proxy);
    },
  };
}

const wrapped = {
  meta: { name: "locks-observed" },
  rules: Object.fromEntries(
    Object.entries(plugin.rules).map(([id, rule]) => [id, wrap(id, rule as unknown as AnyRule)]),
  ),
};

const linter = new Linter({ configType: "flat" });
const config: Linter.Config[] = [
  { files: ["**/*.ts"], languageOptions: { parser: tsParser as Linter.Parser } },
  { plugins: { locks: wrapped as never }, rules: plugin.configs.strict.rules },
];

export class LintError extends Error {}

/**
 * Lints `code` as `module.ts` under configs.strict. A parse error is a generator bug and throws; so does a rule
 * exception (the tests run with LOCKS_DEBUG=1, so the inventory rethrows what it would otherwise swallow).
 */
export function lint(code: string): Finding[] {
  const found: Finding[] = [];
  sink = found;
  let messages: Linter.LintMessage[];
  try {
    messages = linter.verify(code, config, "module.ts");
  } finally {
    sink = undefined;
  }
  const fatal = messages.find((m) => m.fatal);
  if (fatal)
    throw new LintError(`generated code does not parse (${fatal.line}:${fatal.column}: ${fatal.message}):\n${code}`);
  if (messages.length !== found.length) {
    throw new LintError(
      `Linter reported ${messages.length} messages, the rules ${found.length}:\n${JSON.stringify(messages, null, 2)}`,
    );
  }
  return found;
}

/** Data keys that carry a line number: they move with the code and are left out when findings are compared. */
const LINE_KEY = /Line$/;

/**
 * A finding as the metamorphic properties compare it: rule, messageId, the data without line numbers, and the
 * function it is in. `rename` maps a transformed module's names back to the original ones.
 */
export function findingKey(f: Finding, rename: ReadonlyMap<string, string> = new Map()): string {
  const back = (text: string) => text.replace(/[A-Za-z_$][\w$]*/g, (w) => rename.get(w) ?? w);
  const data = Object.keys(f.data)
    .filter((k) => !LINE_KEY.test(k))
    .sort()
    .map((k) => `${k}=${back(f.data[k]!)}`);
  return `${f.rule} ${f.messageId} [${data.join(", ")}] in ${f.fn === undefined ? "<module>" : back(f.fn)}`;
}

/** The findings as a sorted multiset of keys. */
export function findingKeys(findings: readonly Finding[], rename?: ReadonlyMap<string, string>): string[] {
  return findings.map((f) => findingKey(f, rename)).sort();
}
