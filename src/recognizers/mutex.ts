/**
 * In-process mutexes and semaphores: async-mutex (`Mutex`, `Semaphore`, `withTimeout`), await-lock
 * (`acquireAsync`/`release`), async-sema (`Sema`). Nothing frees such a lock but its own release, so a release
 * skipped by a thrown error leaves every later caller waiting until the process restarts.
 *
 * redis-semaphore also calls its classes `Mutex` and `Semaphore`; they take a Redis client and a key
 * (`new Mutex(redis, "key")`), which is how they are told apart. A receiver whose construction is not visible
 * counts as in-process when it is named like a mutex or semaphore and the module imports no Redis lock library.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { LibraryLockOp, Node } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { receiverText, expressionName } from "../core/reading/ast.js";
import { fieldInit, getConstInit, keyName, unwrap } from "../core/reading/values.js";

const OPS: Record<string, { op: LibraryLockOp["op"]; try?: boolean }> = {
  acquire: { op: "acquire" },
  acquireAsync: { op: "acquire" },
  tryAcquire: { op: "acquire", try: true },
  release: { op: "release" },
  runExclusive: { op: "using" },
};
const IN_PROCESS_PACKAGES = /^(async-mutex|await-lock|async-sema|async-lock|p-mutex|@esfx\/async-mutex)$/;
const REDIS_LOCK_PACKAGES = /^(redis-semaphore|redlock|@sesamecare-oss\/redlock|node-redlock)$/;
const MUTEX_NAME = /(mutex|semaphore|sema)$/i;

/** The module specifiers a file imports or requires at top level, once per file. */
function imports(ctx: RecognizerContext): Set<string> {
  const cached = ctx.scratch.get("mutex:imports") as Set<string> | undefined;
  if (cached) return cached;
  const out = new Set<string>();
  for (const s of ctx.sourceCode.ast.body) {
    if (s.type === "ImportDeclaration") out.add(s.source.value);
    if (s.type === "VariableDeclaration") {
      for (const d of s.declarations) {
        const init = d.init && unwrap(d.init);
        if (
          init?.type === "CallExpression" &&
          init.callee.type === "Identifier" &&
          init.callee.name === "require" &&
          init.arguments[0]?.type === "Literal" &&
          typeof init.arguments[0].value === "string"
        )
          out.add(init.arguments[0].value);
      }
    }
  }
  ctx.scratch.set("mutex:imports", out);
  return out;
}

/** `new Mutex()`, `new Semaphore(4)`, `withTimeout(new Mutex(), 1000)`, `new AwaitLock()`, `new Sema(2)`. */
function constructsInProcess(init: Node): boolean | undefined {
  const n = unwrap(init);
  if (
    n.type === "CallExpression" &&
    n.callee.type === "Identifier" &&
    n.callee.name === "withTimeout" &&
    n.arguments[0]
  ) {
    return constructsInProcess(n.arguments[0]);
  }
  if (n.type !== "NewExpression" || n.callee.type !== "Identifier") return undefined;
  const cls = n.callee.name;
  if (cls === "AwaitLock" || cls === "Sema" || cls === "AsyncMutex") return true;
  // redis-semaphore: new Mutex(client, key, options), new Semaphore(client, key, limit)
  if (cls === "Mutex") return n.arguments.length <= 1;
  if (cls === "Semaphore") return n.arguments.length <= 2 && n.arguments[0]?.type === "Literal";
  return undefined;
}

function isInProcess(ctx: RecognizerContext, receiver: Node): boolean {
  const r = unwrap(receiver);
  let init: Node | undefined;
  if (r.type === "Identifier") init = getConstInit(ctx.sourceCode, r);
  else if (r.type === "MemberExpression" && unwrap(r.object).type === "ThisExpression") init = fieldInit(r);
  const constructed = init && constructsInProcess(init);
  if (constructed !== undefined) return constructed;
  const name = expressionName(r);
  if (!name) return false;
  const imported = [...imports(ctx)];
  if (imported.some((m) => REDIS_LOCK_PACKAGES.test(m))) return false;
  if (MUTEX_NAME.test(name)) return true;
  return /lock$/i.test(name) && imported.some((m) => IN_PROCESS_PACKAGES.test(m));
}

export const mutexRecognizer: Recognizer = {
  store: "in-process",
  methods: new Set(Object.keys(OPS)),
  // `acquire`, `release`, `runExclusive`, `Mutex` are lock words and verbs already; async-sema's `Sema` is not.
  evidence: /sema/,
  recognize(call: TSESTree.CallExpression, ctx: RecognizerContext): LibraryLockOp | undefined {
    const callee = unwrap(call.callee);
    if (callee.type !== "MemberExpression") return undefined;
    const spec = OPS[keyName(callee.property, callee.computed) ?? ""];
    if (!spec || !isInProcess(ctx, callee.object)) return undefined;
    const receiver = receiverText(ctx.sourceCode, callee.object);
    return {
      access: "library",
      library: "in-process",
      op: spec.op,
      node: call,
      receiver,
      ...(spec.try ? { try: true } : {}),
    };
  },
};
