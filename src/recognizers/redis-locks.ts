/**
 * Lock libraries over Redis: Redlock (v4 `lock`/`unlock`, v5 `acquire`/`release`/`using`/`extend`) and
 * redis-semaphore (`Mutex`, `Semaphore`, `RedlockMutex`…: `acquire`/`tryAcquire`/`release`/`refresh`). Their
 * acquisitions carry a TTL by construction and their releases are owner-checked; recognising them keeps them
 * apart from raw commands and lists them in the module's lock inventory.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { LibraryLockOp, Node } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { receiverText, expressionName } from "../core/reading/ast.js";
import { evaluateNumber, findVariable, getConstInit, keyName, unwrap } from "../core/reading/values.js";

const OPS: Record<string, LibraryLockOp["op"]> = {
  acquire: "acquire",
  tryAcquire: "acquire",
  lock: "acquire",
  using: "using",
  release: "release",
  unlock: "release",
  extend: "extend",
  refresh: "extend",
};
const SEMAPHORE_CLASSES = /^(Mutex|Semaphore|MultiSemaphore|RedlockMutex|RedlockSemaphore|RedlockMultiSemaphore)$/;

/** What a receiver is: a Redlock instance, a redis-semaphore object, or a lock Redlock returned. */
function libraryOf(ctx: RecognizerContext, receiver: Node, depth = 0): LibraryLockOp["library"] | undefined {
  const r = unwrap(receiver);
  const name = expressionName(r);
  if (r.type === "Identifier" && depth < 3) {
    const constInit = getConstInit(ctx.sourceCode, r);
    // `let lock = await redlock.acquire(…)`, later `lock = await lock.extend(ttl)`: any write that is a library's.
    const inits = constInit
      ? [constInit]
      : (findVariable(ctx.sourceCode, r)?.references ?? []).flatMap((ref) => (ref.writeExpr ? [ref.writeExpr] : []));
    for (let init of inits) {
      init = unwrap(init);
      if (init.type === "AwaitExpression") init = unwrap(init.argument);
      if (init.type === "NewExpression" && init.callee.type === "Identifier") {
        if (init.callee.name === "Redlock") return "redlock";
        if (SEMAPHORE_CLASSES.test(init.callee.name)) return "redis-semaphore";
      }
      // const lock = await redlock.acquire([...], ttl)
      if (init.type === "CallExpression" && init.callee.type === "MemberExpression") {
        const object = unwrap(init.callee.object);
        if (constInit) return libraryOf(ctx, object, depth + 1);
        const found =
          object.type === "Identifier" && object.name === r.name ? undefined : libraryOf(ctx, object, depth + 1);
        if (found) return found;
      }
    }
  }
  if (name && /redlock/i.test(name)) return "redlock";
  if (name && /(mutex|semaphore)$/i.test(name)) return "redis-semaphore";
  return undefined;
}

/**
 * What an acquire locks: Redlock's resource list (`acquire([key], ttl)`, v4 `lock(key, ttl)`: its first key), or the
 * key a redis-semaphore object was built with (`new Mutex(redis, key)`).
 */
function resourceOf(
  ctx: RecognizerContext,
  library: LibraryLockOp["library"],
  receiver: Node,
  call: TSESTree.CallExpression,
): Node | undefined {
  if (library === "redlock") {
    const first = call.arguments[0] && unwrap(call.arguments[0]);
    if (!first || first.type === "SpreadElement") return undefined;
    if (first.type !== "ArrayExpression") return first;
    const key = first.elements[0];
    return key && key.type !== "SpreadElement" ? key : undefined;
  }
  const r = unwrap(receiver);
  let init = r.type === "Identifier" ? getConstInit(ctx.sourceCode, r) : undefined;
  if (init) init = unwrap(init);
  const key = init?.type === "NewExpression" ? init.arguments[1] : undefined;
  return key && key.type !== "SpreadElement" ? key : undefined;
}

export const redisLocksRecognizer: Recognizer = {
  store: "redis-locks",
  methods: new Set(Object.keys(OPS)),
  recognize(call: TSESTree.CallExpression, ctx: RecognizerContext): LibraryLockOp | undefined {
    const callee = unwrap(call.callee);
    if (callee.type !== "MemberExpression") return undefined;
    const op = OPS[keyName(callee.property, callee.computed) ?? ""];
    const library = op && libraryOf(ctx, callee.object);
    if (!library) return undefined;
    const receiver = receiverText(ctx.sourceCode, callee.object);
    const isTry = keyName(callee.property, callee.computed) === "tryAcquire";
    const keyNode = op === "acquire" || op === "using" ? resourceOf(ctx, library, callee.object, call) : undefined;
    // Redlock's `acquire(resources, duration)`, `using(resources, duration, routine)`, v4's `lock(key, ttl)`.
    const duration = library === "redlock" && (op === "acquire" || op === "using") ? call.arguments[1] : undefined;
    const ttlMs = duration && duration.type !== "SpreadElement" ? evaluateNumber(ctx.sourceCode, duration) : undefined;
    return {
      access: "library",
      library,
      op,
      node: call,
      receiver,
      ...(isTry ? { try: true } : {}),
      ...(keyNode ? { keyNode } : {}),
      ...(ttlMs !== undefined ? { ttlMs } : {}),
    };
  },
};
