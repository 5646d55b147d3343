// Worker threads (`eslint --concurrency`) and editors lint many files with one loaded plugin, in any order:
// nothing a file leaves behind may change what another file reports. Module-level mutable state in src/ and
// rules/ is therefore limited to the list below, each entry either keyed by the file's own objects (WeakMap,
// dropped with the file) or a memo of a pure function of its key. A new `let` or collection at module level
// fails here until it is looked at and listed with its reason.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../", import.meta.url));

const allowed: Record<string, string> = {
  "src/rule-kit/inventory.ts states": "per-file state, a WeakMap keyed by the file's SourceCode",
  "src/rule-kit/inventory.ts taggedRecognizers":
    "built once at load from the static recognizer list, never written after",
  "src/rule-kit/inventory.ts byMethod": "built once at load from the static recognizer list, never written after",
  "src/rule-kit/inventory.ts byFunction": "built once at load from the static recognizer list, never written after",
  "src/core/model/settings.ts cache": "a WeakMap keyed by the settings object ESLint hands every rule",
  "src/core/model/evidence.ts cache":
    "a WeakMap keyed by the vocabulary resolved from the settings object ESLint hands every rule",
  "src/rule-kit/inventory.ts lockFree": "per-file state, a WeakMap keyed by the file's SourceCode",
  "src/core/languages/sql.ts cache": "memo of parseSql: a pure function of the SQL text and dialect order",
  "src/core/languages/lua.ts cache": "memo of the Lua script classifier: a pure function of the script text",
  "src/core/languages/lua.ts luaparse": "the lazily required parser module",
  "src/audit/schemas.ts loaded": "the lazily required Prisma schema parser module (the audit only)",
  "src/recognizers/redis/commands.ts METHODS": "filled once at load from the static command table",
  "src/core/reading/directives.ts byLine": "per-file state, a WeakMap keyed by the file's SourceCode",
  "src/core/facts/pairing/state-claims.ts callsByModule":
    "per-file state, a WeakMap keyed by the file's pairing Module",
  "src/core/reading/exports.ts exportsByProgram": "per-file state, a WeakMap keyed by the file's Program node",
  "src/rule-kit/inventory.ts candidateText": "built lazily, once, from the static recognizer list; never written after",
  "src/rule-kit/imported-modules.ts readings":
    "memo of an imported module's reading, a pure function of its path, text and settings (each entry checks all three)",
  "src/rule-kit/imported-modules.ts configs":
    "memo of a tsconfig's compiler options, a pure function of its path and modification time (each entry checks both)",
  "src/rule-kit/imported-modules.ts typescript": "the lazily required TypeScript module",
  "src/core/reading/guards.ts BOTH":
    "per-file state, a WeakMap keyed by the file's AST nodes (the inner test of two nested `if`s), dropped with the file",
  "src/core/reading/named-types.ts registered":
    "a WeakSet of the ts.Programs the audit built itself; an editor's or a type-checked config's program is never in it",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/**
 * The module-level bindings of `file` that can hold state: every `let` and `var`, a `const` collection built empty or
 * from something other than a literal list (`new Map()`, `new Set(names)`), and a `const` empty array. A `Set` of a
 * literal list, or of a list computed from literals (`["", "Try"].flatMap(…)`), is a constant word list.
 */
function mutableBindings(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const literalList = (e: ts.Expression): boolean =>
    ts.isArrayLiteralExpression(e) ||
    (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && literalList(e.expression.expression));
  const out: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const d of statement.declarationList.declarations) {
      if (!ts.isIdentifier(d.name)) continue;
      const init = d.initializer && ts.isAsExpression(d.initializer) ? d.initializer.expression : d.initializer;
      const collection =
        init !== undefined &&
        ts.isNewExpression(init) &&
        ts.isIdentifier(init.expression) &&
        ["Map", "WeakMap", "Set", "WeakSet"].includes(init.expression.text) &&
        !(init.arguments?.[0] && literalList(init.arguments[0]));
      const emptyArray = init !== undefined && ts.isArrayLiteralExpression(init) && init.elements.length === 0;
      if (!isConst || collection || emptyArray) out.push(d.name.text);
    }
  }
  return out;
}

it("keeps no module-level mutable state but per-file caches and memos of pure functions", () => {
  const found: string[] = [];
  for (const file of [...sources(join(repo, "src")), ...sources(join(repo, "rules"))]) {
    for (const name of mutableBindings(file)) found.push(`${relative(repo, file)} ${name}`);
  }
  expect(found.filter((f) => !(f in allowed))).toEqual([]);
  expect(found).toContain("src/rule-kit/inventory.ts states"); // the scan itself still sees what it should
  // An entry whose binding is gone (or became a constant) is dropped from the list, so the list stays the truth.
  expect(Object.keys(allowed).filter((k) => !found.includes(k))).toEqual([]);
});
