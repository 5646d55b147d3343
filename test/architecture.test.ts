// Store knowledge lives in the recognizers (issue 34, docs/architecture.md "Adding a store"): the core, the rule kit
// and the rules never test which store an access came from. A store's meaning reaches them through the model
// (`StateWrite.throwsWhenNothing`, `ObjectWrite.wording`, `HelperEffect.store`, `Recognizer.packages`), so adding
// a store is its recognizer, its registration, its docs and its tests. This test reads the sources' syntax and
// fails on a comparison of a `store` with a string (`write.store === "prisma"`), a `case "…"` of a switch on a
// `store`, or an object literal that sets `store` to a string (`{ store: "redis", … }`), where the string is the name
// of a store some recognizer reads.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";
import { recognizers } from "../src/recognizers/index.js";

const repo = fileURLToPath(new URL("../", import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The stores the recognizers read, by the names they write into the model's accesses. */
const STORES = new Set(recognizers.map((r) => r.store));

const storeName = (e: ts.Expression) => ts.isStringLiteral(e) && STORES.has(e.text);
const namedStore = (e: ts.Expression) =>
  (ts.isPropertyAccessExpression(e) && e.name.text === "store") || (ts.isIdentifier(e) && e.text === "store");

/** Every place in `file` that tests or sets a store by name. */
function storeTests(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (n: ts.Node) => `${relative(repo, file)}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
  const visit = (n: ts.Node): void => {
    if (
      ts.isBinaryExpression(n) &&
      [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(
        n.operatorToken.kind,
      ) &&
      ((namedStore(n.left) && storeName(n.right)) || (namedStore(n.right) && storeName(n.left)))
    )
      found.push(`${at(n)} ${n.getText(source)}`);
    if (ts.isSwitchStatement(n) && namedStore(n.expression))
      for (const c of n.caseBlock.clauses)
        if (ts.isCaseClause(c)) found.push(`${at(c)} case ${c.expression.getText(source)}`);
    if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && n.name.text === "store" && storeName(n.initializer))
      found.push(`${at(n)} ${n.getText(source)}`);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

it("keeps store names out of the core, the rule kit and the rules", () => {
  const outside = [
    ...sources(join(repo, "src/core")),
    ...sources(join(repo, "src/rule-kit")),
    ...sources(join(repo, "rules")),
  ];
  expect(outside.flatMap(storeTests)).toEqual([]);
});

it("sees a store test where there is one (the recognizers are full of them)", () => {
  const inside = sources(join(repo, "src/recognizers")).flatMap(storeTests);
  expect(inside.some((f) => f.includes('store: "prisma"'))).toBe(true);
});
