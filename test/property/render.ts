// A small program form for generated lock modules, and its renderings: `await` or `.then` chains, top-level
// functions or methods of one class (module functions called as `this.f()`, clients optionally held in fields).
// The same spec rendered two ways is the same program; the metamorphic properties rely on that.

/** How an expression is spelled depends on the layout: `prisma` or `this.prisma`, `finish()` or `this.finish()`. */
export interface Ctx {
  /** A database or Redis client the module holds (imported, or a constructor-injected field in class layout). */
  client(name: string): string;
  /** A function of this module, as a callee. */
  fn(name: string): string;
}

export type Expr = (c: Ctx) => string;

export type Step =
  /** `const bind = await expr;` or `await expr;` (`bind` may be a pattern: `[n]`, `{ count }`). */
  | { readonly kind: "await"; readonly bind?: string; readonly expr: Expr }
  /** `const name = value;` with no await in it. */
  | { readonly kind: "const"; readonly name: string; readonly value: Expr }
  /** `if (cond) return value;` */
  | { readonly kind: "exit"; readonly cond: string; readonly value?: string }
  /** `return value;` (no await in it). */
  | { readonly kind: "return"; readonly value: Expr }
  /** A statement with no await in it, as written (`throw e;`). */
  | { readonly kind: "stmt"; readonly text: string }
  /** `try { body } finally { cleanup }`: only as the last step of a body. */
  | { readonly kind: "try"; readonly body: readonly Step[]; readonly cleanup: readonly Step[] }
  /** `try { body } catch (param) { handler }` (`.catch((param) => …)` in `.then` style): only as the last step. */
  | {
      readonly kind: "catch";
      readonly body: readonly Step[];
      readonly param: string;
      readonly handler: readonly Step[];
    }
  /**
   * `return { token: value, [method]: async () => { body } };`: a lock handle whose method the caller calls later
   * (`() => promise` in `.then` style).
   */
  | { readonly kind: "handle"; readonly value: Expr; readonly method: string; readonly body: readonly Step[] };

export interface Fn {
  /** The function's name: what `Finding.fn` reports and the oracle expects. */
  readonly name: string;
  readonly params: readonly string[];
  readonly steps: readonly Step[];
  /** The part of the spec it renders (claim, recovery, lookalike…): for the tests' own bookkeeping. */
  readonly role: string;
}

export interface Client {
  readonly name: string;
  /** The declaration at module level in function layout: an import (`import { prisma } from "./db";`). */
  readonly declaration: string;
  /** The field type in class layout (`PrismaClient`), with the import it needs. */
  readonly type: string;
  readonly typeImport?: string;
}

export interface ModuleSpec {
  /** Imports and module-level constants the code needs whatever the layout (operators, scripts, tables). */
  readonly head: readonly string[];
  readonly clients: readonly Client[];
  readonly fns: readonly Fn[];
  /** How the store opens a transaction callback, for the layout that runs each function's writes in one. */
  readonly transaction?: { readonly client: string; readonly open: (client: string) => string; readonly param: string };
}

export interface Layout {
  readonly style: "await" | "then";
  /**
   * Function declarations, `const f = async () => {}` arrows, methods of one class, or methods of one exported
   * object (`export const service = { async claim() {…} }`, module functions called as `this.f()`).
   */
  readonly container: "functions" | "arrows" | "class" | "object";
  /** In class layout: clients are constructor-injected fields (`this.prisma`) instead of module imports. */
  readonly clientFields: boolean;
  /** Each function that writes runs its body in a transaction callback (`prisma.$transaction(async (tx) => …)`). */
  readonly transaction?: boolean;
}

export const BASE_LAYOUT: Layout = { style: "await", container: "functions", clientFields: false };

const indent = (lines: readonly string[], by = "  "): string[] => lines.map((l) => (l === "" ? l : by + l));

function hasAsync(steps: readonly Step[]): boolean {
  return steps.some((s) => s.kind === "await" || s.kind === "try" || s.kind === "catch");
}

function syncStep(step: Step, c: Ctx): string {
  switch (step.kind) {
    case "const":
      return `const ${step.name} = ${step.value(c)};`;
    case "exit":
      return `if (${step.cond}) return${step.value === undefined ? "" : ` ${step.value}`};`;
    case "return":
      return `return ${step.value(c)};`;
    case "stmt":
      return step.text;
    case "handle":
      return `return { token: ${step.value(c)}, ${step.method}: () => ${promiseOf(step.body, c)} };`;
    default:
      throw new Error(`not a synchronous step: ${step.kind}`);
  }
}

function awaitBody(steps: readonly Step[], c: Ctx): string[] {
  const out: string[] = [];
  for (const step of steps) {
    if (step.kind === "await")
      out.push(step.bind ? `const ${step.bind} = await ${step.expr(c)};` : `await ${step.expr(c)};`);
    else if (step.kind === "try")
      out.push("try {", ...indent(awaitBody(step.body, c)), "} finally {", ...indent(awaitBody(step.cleanup, c)), "}");
    else if (step.kind === "catch")
      out.push(
        "try {",
        ...indent(awaitBody(step.body, c)),
        `} catch (${step.param}) {`,
        ...indent(awaitBody(step.handler, c)),
        "}",
      );
    else if (step.kind === "handle") {
      out.push(
        "return {",
        `  token: ${step.value(c)},`,
        `  ${step.method}: async () => {`,
        ...indent(awaitBody(step.body, c), "    "),
        "  },",
        "};",
      );
    } else out.push(syncStep(step, c));
  }
  return out;
}

/** The steps as one promise expression, for `.finally(() => …)` and the `try` body. */
function promiseOf(steps: readonly Step[], c: Ctx): string {
  const first = steps[0];
  if (first?.kind === "await") {
    const rest = steps.slice(1);
    if (rest.length === 0) return first.expr(c);
    return `${first.expr(c)}.then((${first.bind ?? ""}) => {\n${indent(thenBody(rest, c)).join("\n")}\n})`;
  }
  return `Promise.resolve().then(() => {\n${indent(thenBody(steps, c)).join("\n")}\n})`;
}

/** The same steps without `await`: each await becomes a `.then` on the rest of the body. */
function thenBody(steps: readonly Step[], c: Ctx): string[] {
  const i = steps.findIndex((s) => s.kind === "await" || s.kind === "try" || s.kind === "catch");
  if (i < 0) return steps.map((s) => syncStep(s, c));
  const out = steps.slice(0, i).map((s) => syncStep(s, c));
  const step = steps[i]!;
  const rest = steps.slice(i + 1);
  if (step.kind === "try") {
    if (rest.length > 0) throw new Error("a try step must be the last step of a body");
    out.push(...`return ${promiseOf(step.body, c)}.finally(() => ${promiseOf(step.cleanup, c)});`.split("\n"));
    return out;
  }
  if (step.kind === "catch") {
    if (rest.length > 0) throw new Error("a catch step must be the last step of a body");
    out.push(
      ...`return ${promiseOf(step.body, c)}.catch((${step.param}) => {`.split("\n"),
      ...indent(thenBody(step.handler, c)),
      "});",
    );
    return out;
  }
  if (step.kind !== "await") throw new Error("unreachable");
  if (rest.length === 0) out.push(`return ${step.expr(c)};`);
  else out.push(`return ${step.expr(c)}.then((${step.bind ?? ""}) => {`, ...indent(thenBody(rest, c)), "});");
  return out;
}

function fnLines(fn: Fn, layout: Layout, c: Ctx, spec: ModuleSpec): string[] {
  const isAsync = layout.style === "await" && hasAsync(fn.steps);
  const tx = layout.transaction && fn.role !== "runner" && hasAsync(fn.steps) ? spec.transaction : undefined;
  let body: string[];
  if (tx) {
    // The body moves into the callback, and the client it uses becomes the callback's parameter.
    const inner: Ctx = { ...c, client: (name) => (name === tx.client ? tx.param : c.client(name)) };
    const lines = layout.style === "await" ? awaitBody(fn.steps, inner) : thenBody(fn.steps, inner);
    body = [
      `return ${tx.open(c.client(tx.client))}(${layout.style === "await" ? "async " : ""}(${tx.param}) => {`,
      ...indent(lines),
      "});",
    ];
  } else body = layout.style === "await" ? awaitBody(fn.steps, c) : thenBody(fn.steps, c);
  const params = fn.params.join(", ");
  const async = isAsync ? "async " : "";
  if (layout.container === "arrows")
    return [`export const ${fn.name} = ${async}(${params}) => {`, ...indent(body), "};"];
  if (layout.container === "object") return [`${async}${fn.name}(${params}) {`, ...indent(body), "},"];
  const head =
    layout.container === "class"
      ? `${async}${fn.name}(${params}) {`
      : `export ${async}function ${fn.name}(${params}) {`;
  return [head, ...indent(body), "}"];
}

/** Renders the module. The class is named `Service`; every function of the spec becomes one of its methods. */
export function render(spec: ModuleSpec, layout: Layout = BASE_LAYOUT): string {
  const inClass = layout.container === "class";
  const fields = inClass && layout.clientFields;
  const inObject = layout.container === "object";
  const c: Ctx = {
    client: (name) => (fields ? `this.${name}` : name),
    fn: (name) => (inClass || inObject ? `this.${name}` : name),
  };
  const prelude = new Set<string>();
  for (const client of spec.clients) {
    if (!fields) prelude.add(client.declaration);
    else if (client.typeImport) prelude.add(client.typeImport);
  }
  for (const line of spec.head) prelude.add(line);
  const lines = [...prelude, ""];
  if (inObject) {
    lines.push("export const service = {");
    for (const fn of spec.fns) lines.push(...indent(fnLines(fn, layout, c, spec)), "");
    lines.push("};", "");
    return lines.join("\n");
  }
  if (!inClass) {
    for (const fn of spec.fns) lines.push(...fnLines(fn, layout, c, spec), "");
    return lines.join("\n");
  }
  lines.push("export class Service {");
  if (fields && spec.clients.length > 0) {
    lines.push(
      `  constructor(${spec.clients.map((cl) => `private readonly ${cl.name}: ${cl.type}`).join(", ")}) {}`,
      "",
    );
  }
  for (const fn of spec.fns) lines.push(...indent(fnLines(fn, layout, c, spec)), "");
  lines.push("}", "");
  return lines.join("\n");
}
