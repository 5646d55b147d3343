/**
 * Functions as the unit of "who reaches whom": a named function (declaration, variable, class member, exported
 * object method) owns the anonymous callbacks inside it; a top-level anonymous function (an Express handler,
 * a queue processor) is its own unit.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { keyName, unwrap } from "./values.js";
import { expressionName } from "./ast.js";

export function isFunction(node: Node): node is TSESTree.FunctionLike {
  return (
    node.type === "FunctionDeclaration" || node.type === "FunctionExpression" || node.type === "ArrowFunctionExpression"
  );
}

/** The name a function is known by in its module, or undefined for a callback. */
export function functionName(fn: TSESTree.FunctionLike): string | undefined {
  if (fn.type === "FunctionDeclaration" && fn.id) return fn.id.name;
  const p = fn.parent;
  if (!p) return undefined;
  if (p.type === "VariableDeclarator" && p.id.type === "Identifier") return p.id.name;
  if ((p.type === "MethodDefinition" || p.type === "PropertyDefinition") && p.key) return keyName(p.key, p.computed);
  // An object's method counts when the object is a module's API (`export const jobs = { start() {} }`),
  // not when it is an options bag handed to a call (`run(id, { onSuccess: async () => … })`).
  if (p.type === "Property" && p.parent.type === "ObjectExpression" && p.parent.parent?.type !== "CallExpression") {
    return keyName(p.key, p.computed);
  }
  // CommonJS: `exports.clearLease = async (id) => …`, `module.exports.clearLease = function () { … }`.
  if (p.type === "AssignmentExpression" && p.right === fn) return commonJsExportName(p.left);
  return undefined;
}

/** `exports.name` or `module.exports.name` as an assignment's target: the name it exports, else undefined. */
export function commonJsExportName(target: Node): string | undefined {
  if (target.type !== "MemberExpression" || target.computed || target.property.type !== "Identifier") return undefined;
  const o = target.object;
  const onExports =
    (o.type === "Identifier" && o.name === "exports") ||
    (o.type === "MemberExpression" &&
      !o.computed &&
      o.object.type === "Identifier" &&
      o.object.name === "module" &&
      o.property.type === "Identifier" &&
      o.property.name === "exports");
  return onExports ? target.property.name : undefined;
}

/** The function a node sits in, or undefined at module level. */
export function enclosingFunction(node: Node): TSESTree.FunctionLike | undefined {
  let p = node.parent;
  while (p) {
    if (isFunction(p)) return p;
    p = p.parent;
  }
  return undefined;
}

/** The nearest enclosing named function; else the outermost enclosing function; null at module level. */
export function unitOf(node: Node): TSESTree.FunctionLike | null {
  let outermost: TSESTree.FunctionLike | null = null;
  let p = node.parent;
  while (p) {
    if (isFunction(p)) {
      if (functionName(p) !== undefined) return p;
      outermost = p;
    }
    p = p.parent;
  }
  return outermost;
}

/** The calls that run work in one transaction: a callback's statements, or an array's, share it. */
export const TRANSACTION_CALLS: ReadonlySet<string> = new Set([
  "$transaction",
  "transaction",
  "begin",
  "withTransaction",
  "transact",
]);

/**
 * A call that runs its callback (or its list) in one transaction: one of `TRANSACTION_CALLS`, or a project's wrapper
 * named for one (`runInTransaction(fn)`, `withInstrumentedTransaction(conn, fn)`).
 */
export function opensTransaction(call: TSESTree.CallExpression): boolean {
  const name = expressionName(unwrap(call.callee));
  return name !== undefined && (TRANSACTION_CALLS.has(name) || /^[a-z]\w*Transaction$/.test(name));
}

/** `node` is inside the arguments of a call that opens a transaction (`prisma.$transaction([…])`, `db.transaction(…)`). */
export function insideTransactionCall(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) if (p.type === "CallExpression" && opensTransaction(p)) return true;
  return false;
}

/**
 * The transaction callback `node` runs in when the transaction is SERIALIZABLE: Prisma's `$transaction(fn, {
 * isolationLevel: Prisma.TransactionIsolationLevel.Serializable })`, knex's `transaction(fn, { isolationLevel:
 * "serializable" })`, Sequelize's `transaction({ isolationLevel: …SERIALIZABLE }, fn)`, TypeORM's
 * `transaction("SERIALIZABLE", fn)`, every SQLite transaction of better-sqlite3 (`sqliteTransaction`), and
 * `runTransaction(fn)` (Firestore's). Under it
 * a read and a later write of the same rows are one step: a concurrent change of what was read fails one of the two
 * transactions. REPEATABLE READ is not enough on every database (MySQL lets the later write through), so it is not
 * read as one.
 */
export function serializableTransaction(node: Node): TSESTree.FunctionLike | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (!isFunction(p)) continue;
    const call = p.parent;
    if (call?.type !== "CallExpression" || !call.arguments.includes(p as TSESTree.CallExpressionArgument)) continue;
    const callee = call.callee.type === "MemberExpression" ? call.callee.property : call.callee;
    if (callee.type !== "Identifier" || !/^(?:\$?transaction|runTransaction)$/i.test(callee.name)) continue;
    // `runTransaction(fn)` (Firestore, and Firebase's other databases) is serializable for what it reads: a
    // document changed after the read makes the transaction retry.
    if (/^runTransaction$/i.test(callee.name)) return p;
    const serializable = call.arguments.some((a) => {
      if (a === p) return false;
      if (a.type === "Literal") return typeof a.value === "string" && /^serializable$/i.test(a.value);
      if (a.type !== "ObjectExpression") return false;
      return a.properties.some(
        (q) =>
          q.type === "Property" &&
          q.key.type === "Identifier" &&
          q.key.name === "isolationLevel" &&
          /serializ/i.test(
            q.value.type === "Literal"
              ? String(q.value.value)
              : q.value.type === "MemberExpression" && q.value.property.type === "Identifier"
                ? q.value.property.name
                : "",
          ),
      );
    });
    return serializable || sqliteTransaction(call, p) ? p : undefined;
  }
  return undefined;
}

/**
 * better-sqlite3's (and bun:sqlite's) `db.transaction(fn)`: a function that runs `fn` in a transaction when called,
 * `db.transaction(fn)()` or `.immediate()` / `.exclusive()` / `.deferred()`. `fn` is synchronous, so nothing else of
 * the process runs inside it, and SQLite's transactions are serializable: a second process that read the same rows
 * cannot write after the first has (SQLITE_BUSY). Only the call of the result tells it from the promise-returning
 * `transaction(fn)` of the other clients.
 */
function sqliteTransaction(call: TSESTree.CallExpression, fn: TSESTree.FunctionLike): boolean {
  if (fn.async || fn.generator) return false;
  const up = call.parent;
  if (up?.type === "CallExpression" && up.callee === call) return true;
  return (
    up?.type === "MemberExpression" &&
    up.object === call &&
    up.property.type === "Identifier" &&
    ["immediate", "exclusive", "deferred"].includes(up.property.name) &&
    up.parent?.type === "CallExpression" &&
    up.parent.callee === up
  );
}

/** The class body a function is a member of (directly), for `this.method()` resolution. */
export function classOf(node: Node): TSESTree.ClassBody | undefined {
  let p = node.parent;
  while (p) {
    if (p.type === "ClassBody") return p;
    p = p.parent;
  }
  return undefined;
}

/**
 * Schedulers that call a function again and again: `setInterval(fn, ms)`, and, with a cron expression first,
 * `cron.schedule("*\/15 * * * *", fn)` (node-cron), `schedule.scheduleJob("0 * * * *", fn)` (node-schedule; a Date
 * there runs once), `new CronJob("0 * * * *", fn)` (cron). `agenda.every(…)` names a job, not a function.
 */
const REPEATING_CALLS = /^setInterval$/;
const CRON_CALLS = /^(?:schedule|scheduleJob)$/;
const REPEATING_CLASSES = /^(?:CronJob|Cron)$/;
const CRON_EXPRESSION = /^\s*(?:@\w+|(?:\S+\s+){4,6}\S+)\s*$/;

function isCronExpression(node: Node | undefined): boolean {
  const n = node && node.type !== "SpreadElement" ? unwrap(node) : undefined;
  const text =
    n?.type === "Literal" && typeof n.value === "string"
      ? n.value
      : n?.type === "TemplateLiteral" && n.expressions.length === 0
        ? (n.quasis[0]?.value.cooked ?? undefined)
        : undefined;
  return text !== undefined && CRON_EXPRESSION.test(text);
}

/** Whether `node` runs in a function handed to a repeating scheduler, or in a method decorated `@Cron(…)`/`@Interval(…)`. */
export function runsRepeatedly(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (!isFunction(p)) continue;
    const host = p.parent;
    if (
      (host?.type === "CallExpression" || host?.type === "NewExpression") &&
      host.arguments.includes(p as TSESTree.Expression)
    ) {
      const callee = host.callee;
      const name =
        callee.type === "Identifier"
          ? callee.name
          : callee.type === "MemberExpression" && !callee.computed && callee.property.type === "Identifier"
            ? callee.property.name
            : undefined;
      if (
        name !== undefined &&
        (host.type === "NewExpression"
          ? REPEATING_CLASSES.test(name) && isCronExpression(host.arguments[0])
          : REPEATING_CALLS.test(name) || (CRON_CALLS.test(name) && isCronExpression(host.arguments[0])))
      )
        return true;
    }
    if (host?.type === "MethodDefinition") {
      const decorators = host.decorators ?? [];
      return decorators.some((d) => {
        const e = d.expression;
        const c = e.type === "CallExpression" ? e.callee : e;
        return c.type === "Identifier" && /^(?:Cron|Interval)$/.test(c.name);
      });
    }
  }
  return false;
}

/** Registrations of a route's handler: `app.post("/reset", handler)`, `router.get(path, auth, handler)`. */
const ROUTE_METHODS = /^(?:get|post|put|patch|delete|all)$/;

/**
 * Whether `node` runs in a function a user triggers at any time: a JSX event handler (`onClick={async () => …}`) or a
 * handler registered for an HTTP route with a path (`app.post("/jobs/reset", async (req, res) => …)`). Such code runs
 * while other callers work, unlike code run once at boot.
 */
export function runsOnDemand(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (!isFunction(p)) continue;
    const host = p.parent;
    if (host?.type === "JSXExpressionContainer" && host.parent?.type === "JSXAttribute") {
      const name = host.parent.name;
      if (name.type === "JSXIdentifier" && /^on[A-Z]/.test(name.name)) return true;
    }
    if (host?.type === "CallExpression" && host.arguments.includes(p as TSESTree.Expression)) {
      const callee = host.callee;
      const first = host.arguments[0];
      const path =
        first !== undefined &&
        ((first.type === "Literal" && typeof first.value === "string" && first.value.startsWith("/")) ||
          (first.type === "TemplateLiteral" && (first.quasis[0]?.value.cooked ?? "").startsWith("/")));
      if (path && callee.type === "MemberExpression" && ROUTE_METHODS.test(expressionName(callee) ?? "")) return true;
    }
  }
  return false;
}

/**
 * The module is an AWS Lambda (or Netlify) function: it exports `handler` as a function of the invocation's `event`
 * (`exports.handler = async (event) => …`, `export const handler = async (event, context) => …`, `export async
 * function handler(event)`). The platform runs one invocation at a time in each instance, and concurrent ones in
 * other instances: module-level state is never shared by two invocations at once, so races between two calls of
 * one process cannot happen there (a flag left set after a failure still stays set for the next one).
 */
export function servesOneInvocationAtATime(program: TSESTree.Program): boolean {
  const isHandler = (fn: Node | null | undefined): boolean => {
    const f = fn ? unwrap(fn) : undefined;
    if (!f || !isFunction(f)) return false;
    const first = f.params[0];
    return first?.type === "Identifier" && /^(?:event|evt|lambdaEvent)$/.test(first.name);
  };
  for (const st of program.body) {
    if (st.type === "ExpressionStatement" && st.expression.type === "AssignmentExpression") {
      const left = st.expression.left;
      const text =
        left.type === "MemberExpression" && !left.computed && left.property.type === "Identifier"
          ? left.property.name
          : undefined;
      const obj = left.type === "MemberExpression" ? unwrap(left.object) : undefined;
      const exportsObject =
        (obj?.type === "Identifier" && obj.name === "exports") ||
        (obj?.type === "MemberExpression" &&
          unwrap(obj.object).type === "Identifier" &&
          (unwrap(obj.object) as TSESTree.Identifier).name === "module" &&
          !obj.computed &&
          obj.property.type === "Identifier" &&
          obj.property.name === "exports");
      if (text === "handler" && exportsObject && isHandler(st.expression.right)) return true;
    }
    if (st.type === "ExportNamedDeclaration" && st.declaration) {
      const d = st.declaration;
      if (d.type === "FunctionDeclaration" && d.id?.name === "handler" && isHandler(d)) return true;
      if (d.type === "VariableDeclaration")
        for (const v of d.declarations)
          if (v.id.type === "Identifier" && v.id.name === "handler" && isHandler(v.init)) return true;
    }
  }
  return false;
}

/**
 * Code that never runs: `node` follows, in a block of its own function (or of the module), a statement that always
 * leaves it (`return`, `throw`, `break`, `continue`), as in a handler that returns at its top and keeps its old body
 * below. A function declared there is hoisted and runs when called, so only the blocks up to `node`'s own function
 * count.
 */
export function neverRuns(node: Node): boolean {
  let child: Node = node;
  for (let p = node.parent; p && !isFunction(p); child = p, p = p.parent) {
    const list = statementList(p);
    if (!list) continue;
    const at = list.indexOf(child);
    for (let i = 0; i < at; i++) {
      const t = list[i]!.type;
      if (t === "ReturnStatement" || t === "ThrowStatement" || t === "BreakStatement" || t === "ContinueStatement")
        return true;
    }
  }
  return false;
}

/** The statements a block, the module or a `case` runs in order; undefined for any other node. */
export function statementList(node: Node): readonly Node[] | undefined {
  if (node.type === "BlockStatement" || node.type === "Program") return node.body as Node[];
  if (node.type === "SwitchCase") return node.consequent as Node[];
  return undefined;
}
