// `npm run demo`: lints the bundled fixtures with configs.recommended and prints what it finds.
// Exits 0: findings are the point of the demo, not a failure.
import { fileURLToPath } from "node:url";
import tsParser from "@typescript-eslint/parser";
import { ESLint } from "eslint";
import locks from "../dist/src/index.js";

const root = fileURLToPath(new URL("../fixtures/", import.meta.url));
const eslint = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tsParser } }, locks.configs.recommended],
});

// projects/monorepo is a whole project for `npx locks-audit` (its other plugins' disable comments are the point).
const results = (await eslint.lintFiles(["**/*.ts", "**/*.js"])).filter(
  (r) => !r.filePath.includes("/projects/monorepo/"),
);
const formatter = await eslint.loadFormatter("stylish");
const text = await formatter.format(results);
const findings = results.reduce((n, r) => n + r.messages.length, 0);
const clean = results.filter((r) => r.messages.length === 0).map((r) => r.filePath.slice(root.length));

console.log(`eslint-plugin-locks ${locks.meta.version}: configs.recommended on ${results.length} fixture files`);
console.log(text || "\nNo findings.");
console.log(`Clean (no findings): ${clean.sort().join(", ")}`);
console.log(
  `${findings} findings in ${results.length - clean.length} files. See fixtures/README.md for what each file shows.`,
);
