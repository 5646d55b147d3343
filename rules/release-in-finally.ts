import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../src/core/model/accesses.js";
import { sessionsShared } from "../src/core/model/accesses.js";
import type { HeldLock, PathEscape, PromiseMemo } from "../src/core/model/held-locks.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { walk } from "../src/core/reading/walk.js";
import { enclosingFunction, isFunction } from "../src/core/reading/units.js";

type Options = [{ ttlLocks?: boolean }];
type SourceCode = Readonly<TSESLint.SourceCode>;

/** How a message names the lock. */
function describe(lock: HeldLock): string {
  switch (lock.kind) {
    case "mutex":
      return `the mutex \`${lock.name}\``;
    case "flag":
      return `the guard \`${lock.name}\``;
    case "table":
      return `the entry this call adds to \`${lock.name}\``;
    case "advisory":
      return `the session advisory lock (${lock.name})`;
    case "kv":
      return `the lock \`${lock.name}\``;
    case "library":
      return `the lock taken from \`${lock.name}\``;
  }
}

/** What a missed release costs, by kind. */
function consequence(lock: HeldLock): string {
  switch (lock.kind) {
    case "mutex":
      return `every later caller waits on \`${lock.name}\` forever.`;
    case "flag":
      return `\`${lock.name}\` stays true and every later call is turned away until the process restarts.`;
    case "table":
      return lock.sharesInFlight
        ? `the rejected promise stays in \`${lock.name}\`, and every later call for the key gets it instead of trying again, until the process restarts.`
        : `the key stays in \`${lock.name}\` and every later call for it is turned away until the process restarts.`;
    case "advisory":
      return "the connection keeps the session lock, and a pooled connection goes back to the pool still holding it.";
    case "kv":
    case "library":
      return lock.ttl ? "other workers are shut out until its TTL expires." : "the key stays until someone deletes it.";
  }
}

const HOW: Record<PathEscape["kind"], string> = {
  return: "on the return",
  throw: "on the throw",
  end: "on a path to the end of the function",
  await: "when the await rejects",
};

const ESCAPE_ORDER: Record<PathEscape["kind"], number> = { return: 0, throw: 1, end: 2, await: 3 };

function messageFor(escape: PathEscape): "missedOnReturn" | "missedOnThrow" | "missedOnPath" | "missedOnRejection" {
  switch (escape.kind) {
    case "return":
      return "missedOnReturn";
    case "throw":
      return "missedOnThrow";
    case "end":
      return "missedOnPath";
    case "await":
      return "missedOnRejection";
  }
}

/** The statement list a node is a direct member of, and its index there. */
function inList(node: Node): { list: readonly TSESTree.Statement[]; index: number } | undefined {
  let child: Node = node;
  for (let p = node.parent; p; child = p, p = p.parent) {
    if (p.type === "BlockStatement" || p.type === "Program") {
      const list = p.body as readonly TSESTree.Statement[];
      return { list, index: list.indexOf(child as TSESTree.Statement) };
    }
    if (p.type.startsWith("Function") || p.type === "ArrowFunctionExpression" || p.type === "SwitchCase")
      return undefined;
  }
  return undefined;
}

/**
 * The edit that moves a release into a `finally`: the statements between the acquire (or the `if` that tests a
 * try-acquire) and the release become the `try` block. Offered only when the release is a statement of its own in
 * the same block, and nothing declared in the moved statements is used after the release.
 */
/** A call, `await` or `new` anywhere under `node`: code that does work, not just reads. */
function hasCall(node: Node): boolean {
  let found = false;
  walk(node, (n) => {
    if (
      n.type === "CallExpression" ||
      n.type === "AwaitExpression" ||
      n.type === "NewExpression" ||
      n.type === "TaggedTemplateExpression"
    )
      found = true;
    return !found;
  });
  return found;
}

function holdsCallback(statement: Node): boolean {
  let found = false;
  walk(statement, (n) => {
    if (isFunction(n)) found = true;
    return !found;
  });
  return found;
}

function wrapInFinally(sourceCode: SourceCode, lock: HeldLock): TSESLint.ReportFixFunction | undefined {
  const acquired = inList(lock.acquire);
  if (!acquired) return undefined;
  const { list } = acquired;
  const releaseIndex = list.findIndex(
    (s, i) =>
      i > acquired.index &&
      s.type === "ExpressionStatement" &&
      lock.releases.some((r) => r.range[0] >= s.range[0] && r.range[1] <= s.range[1]) &&
      (() => {
        const e = s.expression.type === "AwaitExpression" ? s.expression.argument : s.expression;
        return lock.releases.includes(e);
      })(),
  );
  if (releaseIndex < 0) return undefined;
  // A release that is a promise chain carrying work (`await cleanup().finally(() => { busy = false })`): moving it
  // would run that work after a failure too, which is the author's call, not a mechanical fix.
  if (holdsCallback(list[releaseIndex]!)) return undefined;
  let first = acquired.index + 1;
  // A try-acquire tested right after: `if (!locked) return;` stays outside the try. Only a test of what the acquire
  // gave: any other early return (`if (!file.size) return null;`) is a path that leaves holding the lock, and goes in.
  const next = list[first];
  const acquireStatement = list[acquired.index]!;
  const given =
    acquireStatement.type === "VariableDeclaration"
      ? acquireStatement.declarations.flatMap((d) => sourceCode.getDeclaredVariables(d))
      : [];
  const testsAcquire =
    next?.type === "IfStatement" &&
    given.some((v) =>
      v.references.some(
        (r) => r.identifier.range[0] >= next.test.range[0] && r.identifier.range[1] <= next.test.range[1],
      ),
    );
  if (
    next?.type === "IfStatement" &&
    testsAcquire &&
    first < releaseIndex &&
    (next.consequent.type === "ReturnStatement" ||
      (next.consequent.type === "BlockStatement" && next.consequent.body.at(-1)?.type === "ReturnStatement"))
  )
    first += 1;
  if (first >= releaseIndex) return undefined;
  const moved = list.slice(first, releaseIndex);
  const release = list[releaseIndex]!;
  if (moved.some((s) => s.type === "FunctionDeclaration" || s.type === "ClassDeclaration")) return undefined;
  // A declaration of the work read after the release: only by the return that ends the block, and without a call
  // (`return \`synced ${stock.length}\``), which then moves into the try too: it runs before the release, as
  // cheaply as after it. Anything more would hold the lock over more work, or move code the author put outside.
  const tail = list.slice(releaseIndex + 1);
  const pureReturn =
    tail.length === 1 &&
    tail[0]!.type === "ReturnStatement" &&
    !hasCall(tail[0]!) &&
    sourceCode.getCommentsBefore(tail[0]!).every((c) => c.range[1] <= release.range[1]);
  let readAfter = false;
  for (const s of moved) {
    if (s.type !== "VariableDeclaration") continue;
    for (const d of s.declarations) {
      for (const v of sourceCode.getDeclaredVariables(d)) {
        if (v.references.some((r) => r.identifier.range[0] > release.range[1])) readAfter = true;
      }
    }
  }
  if (readAfter && !pureReturn) return undefined;
  const inTry = readAfter ? [...moved, tail[0]!] : moved;
  const indent = " ".repeat(moved[0]!.loc.start.column);
  const indentBody = (from: number, to: number) =>
    sourceCode.text
      .slice(from, to)
      .split("\n")
      .map((line, i) => (i === 0 ? `${indent}  ${line}` : line.length > 0 ? `  ${line}` : line))
      .join("\n");
  const body = readAfter
    ? `${indentBody(moved[0]!.range[0], moved.at(-1)!.range[1])}\n${indentBody(tail[0]!.range[0], tail[0]!.range[1])}`
    : indentBody(moved[0]!.range[0], moved.at(-1)!.range[1]);
  const text = `try {\n${body}\n${indent}} finally {\n${indent}  ${sourceCode.getText(release)}\n${indent}}`;
  return (fixer) =>
    fixer.replaceTextRange(
      [moved[0]!.range[0], inTry.at(-1)!.range[1] > release.range[1] ? inTry.at(-1)!.range[1] : release.range[1]],
      text,
    );
}

export default createRule<
  | "missedOnReturn"
  | "missedOnThrow"
  | "missedOnPath"
  | "missedOnRejection"
  | "releasedEarly"
  | "advisoryOnPool"
  | "advisoryUnlockOnPool"
  | "advisoryOnRequest"
  | "advisoryUnlockOnRequest"
  | "advisoryNeverUnlocked"
  | "advisoryReturnedToPool"
  | "moveToFinally"
  | "awaitReturn"
  | "useXactLock"
  | "ttlReleaseMissed"
  | "releasedOnFinishOnly"
  | "clearedOnFulfilOnly"
  | "releaseOnClose"
  | "advisoryUnlockInTransaction"
  | "memoKeepsRejection"
  | "chainPassesRejection"
  | "chainSkipsAfterRejection"
  | "namedLockOnPool"
  | "namedUnlockOnPool"
  | "clearedBySuccessCallback"
  | "clearOnRejection",
  Options
>({
  name: "release-in-finally",
  meta: {
    type: "problem",
    hasSuggestions: true,
    docs: {
      description: "Require in-process and session locks to be released on every path, in a `finally`",
      recommended: true,
      question: "Q1",
    },
    defaultOptions: [{ ttlLocks: true }],
    schema: [
      {
        type: "object",
        properties: {
          ttlLocks: {
            type: "boolean",
            description:
              "Also report Redis and lock-library locks (Redlock, redis-semaphore) whose release is missed on some path; their TTL bounds how long they stay taken.",
          },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      missedOnReturn:
        "Q1 (if the locker dies, who unlocks?): {{lock}} is taken here, but the return at line {{exitLine}} leaves without releasing it: {{consequence}} Release it in a `finally` that covers every return.",
      missedOnThrow:
        "Q1 (if the locker dies, who unlocks?): {{lock}} is taken here, but the throw at line {{exitLine}} leaves without releasing it: {{consequence}} Release it in a `finally`.",
      missedOnPath:
        "Q1 (if the locker dies, who unlocks?): {{lock}} is taken here, but a path reaches the end of the function without the release at line {{releaseLine}}: {{consequence}} Release it in a `finally`.",
      missedOnRejection:
        "Q1 (if the locker dies, who unlocks?): {{lock}} is taken here, but if the await at line {{exitLine}} rejects, the release at line {{releaseLine}} never runs: {{consequence}} Release it in a `finally`{{hint}}.",
      ttlReleaseMissed:
        "Q1 (if the locker dies, who unlocks?): {{lock}} is released at line {{releaseLine}}, but not {{how}} (line {{exitLine}}). Its TTL still frees it, but only when it expires, and until then every other worker is shut out. Release it in a `finally`.",
      releasedEarly:
        "Q1: this returns a promise of work that is still running, and the `finally` releases {{lock}} (taken at line {{acquireLine}}) as soon as the promise is returned, so a second caller gets in while the work runs. Return `await` of it.",
      advisoryOnPool:
        "Q1/Q3: this session advisory lock is taken through a pool ({{client}}): it belongs to whichever pooled connection ran the query, and the unlock may run on another connection, where it does nothing. The lock then stays with an idle pooled connection and every other instance is locked out. Check out one client for lock, work and unlock, or take pg_advisory_xact_lock inside a transaction.",
      advisoryUnlockOnPool:
        "Q1/Q3: this unlock goes through the pool ({{client}}) and may run on a different connection than the lock at line {{acquireLine}}, where it unlocks nothing and returns false. Lock and unlock on one checked-out client, or use pg_advisory_xact_lock inside a transaction.",
      advisoryOnRequest:
        "Q1/Q3: this session advisory lock is taken through a PostgREST call ({{client}}.rpc): the server runs each request on whichever of its pooled connections is free, so the lock stays with that connection after the request ends, and the unlock, another request, may reach another connection, where it does nothing. The lock then stays held and every other caller is locked out. Take pg_advisory_xact_lock inside one database function that does the work, or use a lock row with an expiry.",
      advisoryUnlockOnRequest:
        "Q1/Q3: this unlock is a PostgREST request of its own ({{client}}.rpc) and may run on a different server connection than the lock at line {{acquireLine}}, where it unlocks nothing and returns false. Take pg_advisory_xact_lock inside one database function that does the work, or use a lock row with an expiry.",
      advisoryNeverUnlocked:
        "Q1 (if the locker dies, who unlocks?): this session advisory lock is taken inside a transaction but never unlocked. Unlike pg_advisory_xact_lock it outlives the commit or rollback, and the transaction's pooled connection keeps it. Take pg_advisory_xact_lock, or unlock it in a `finally`.",
      advisoryUnlockInTransaction:
        "Q1 (if the locker dies, who unlocks?): this session advisory lock is taken inside a transaction and unlocked in the same transaction. When any statement of the work fails, the transaction is aborted and refuses every later statement, the unlock among them, and the lock outlives the rollback on the transaction's pooled connection: every other caller is locked out until that connection closes. Take pg_advisory_xact_lock: the transaction's end releases it, whichever way it ends.",
      advisoryReturnedToPool:
        "Q1 (if the locker dies, who unlocks?): this session advisory lock is never unlocked, and `{{client}}.release()` at line {{returnLine}} returns the connection to the pool still holding it. Unlock it in a `finally` before the release, release with `release(true)` to close the connection, or take pg_advisory_xact_lock inside a transaction.",
      releasedOnFinishOnly:
        "Q1 (if the locker dies, who unlocks?): {{lock}} (taken at line {{acquireLine}}) is released only when {{emitter}} emits `finish`, which it never does when the client disconnects before the response is written: the entry then stays until the process restarts, and every later caller for that key is turned away. Release it on `close`, which is emitted either way.",
      clearedOnFulfilOnly:
        "Q1 (if the locker dies, who unlocks?): the guard `{{name}}` set here is cleared only in the `.then` callback at line {{releaseLine}}, which runs when the promise fulfils. When it rejects, nothing clears the guard, and every later call finds it set for as long as the process lives. Clear it in `.finally(…)` on the chain, or in a rejection handler too.",
      memoKeepsRejection:
        "Q1 (if the locker dies, who unlocks?): `{{slot}}` keeps the promise stored here for every later call, and nothing empties it when the promise rejects: one failure (a refused connection, a timeout) is handed to every caller after it, and nothing tries again until the process restarts. Empty `{{slot}}` when the promise rejects, so the next call starts over.",
      clearOnRejection: "Empty `{{slot}}` when the promise rejects, and pass the rejection on.",
      clearedBySuccessCallback:
        "Q1 (if the locker dies, who unlocks?): the guard `{{name}}` (set at line {{setLine}}) is cleared only by the callback handed to `{{fn}}` here, which `{{fn}}` calls at line {{callLine}}, after its awaits. When one of them rejects, the callback never runs, and every later call finds the guard set for as long as the process lives. Clear it in a `finally` around the call of `{{fn}}`, or have `{{fn}}` call it in a `finally`.",
      namedLockOnPool:
        "Q1/Q3: this MySQL named lock (GET_LOCK) is taken through a pool ({{client}}): it belongs to whichever pooled connection ran the query, and RELEASE_LOCK may run on another connection, where it releases nothing. The lock then stays with an idle pooled connection and every other caller waits for it. Take one connection from the pool for GET_LOCK, the work and RELEASE_LOCK, and release it in a `finally` on that connection.",
      namedUnlockOnPool:
        "Q1/Q3: this RELEASE_LOCK goes through the pool ({{client}}) and may run on a different connection than the GET_LOCK at line {{acquireLine}}, where it releases nothing and returns NULL or 0. Take GET_LOCK, do the work and RELEASE_LOCK on one connection taken from the pool.",
      chainPassesRejection:
        "Q1 (if the locker dies, who unlocks?): this link, chained with `.finally(…)` on the one before it, is kept in `{{holder}}`: when one link rejects, `.finally` runs the next but passes the rejection on, and the chain is kept, so every later call fails with the old error until the process restarts. Chain with `.then(run, run)` (or `.catch(() => {}).then(run)`) so each link starts clean.",
      chainSkipsAfterRejection:
        "Q1 (if the locker dies, who unlocks?): this link, chained with `.then(…)` on the one before it, is kept in `{{holder}}`: when one link rejects, every later `.then` is skipped and rejects too, and the chain is kept, so no later call runs until the process restarts. Chain with `.then(run, run)` (or `.catch(() => {}).then(run)`) so each link starts clean.",
      releaseOnClose: "Release on `close` instead of `finish`.",
      moveToFinally: "Move the release into a `finally` around the work.",
      useXactLock: "Take a transaction-level lock (pg_advisory_xact_lock): it is released when the transaction ends.",
      awaitReturn: "Return `await` of the promise, so the `finally` runs after the work.",
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    const ttlLocks = context.options[0]?.ttlLocks !== false;
    return onLockFacts(context, (facts) => {
      // One call of a helper that takes the same lock on either of two clients (`upstash.set(…, { nx })` or
      // `ioredis.set(…, "NX")`) holds one lock: one finding (blind-10 B8b11).
      const seen = new Set<string>();
      for (const lock of facts.held) {
        if (lock.ttl && !ttlLocks) continue;
        const key = `${lock.acquire.range[0]}:${describe(lock)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (lock.fulfilOnly) {
          const { via, calledAt } = lock.fulfilOnly;
          // A callback's is reported at the call that hands it over, where the `finally` belongs.
          context.report({
            node: via && calledAt ? lock.fulfilOnly.chain : lock.acquire,
            messageId: via && calledAt ? "clearedBySuccessCallback" : "clearedOnFulfilOnly",
            data: {
              name: lock.name,
              releaseLine: String(lock.fulfilOnly.release.loc.start.line),
              ...(via && calledAt
                ? { fn: via, callLine: String(calledAt.loc.start.line), setLine: String(lock.acquire.loc.start.line) }
                : {}),
            },
          });
          continue;
        }
        const adv = lock.advisory;
        if (adv) {
          // Through a helper of another module: its pool, named where it lives.
          const client = adv.helper
            ? `${adv.helper.pool} of ${adv.helper.file}`
            : lock.acquire.type === "CallExpression" || lock.acquire.type === "TaggedTemplateExpression"
              ? clientName(sourceCode, lock.acquire)
              : "the pool";
          // MySQL's named locks have no transaction-level form: the fix is one connection for lock, work and unlock.
          const named = lock.name === "GET_LOCK";
          if (sessionsShared(adv.via)) {
            const request = adv.via === "request";
            context.report({
              node: lock.acquire,
              messageId: request ? "advisoryOnRequest" : named ? "namedLockOnPool" : "advisoryOnPool",
              data: { client },
            });
            for (const u of adv.pooledUnlocks) {
              const through =
                !adv.helper && (u.type === "CallExpression" || u.type === "TaggedTemplateExpression")
                  ? clientName(sourceCode, u)
                  : client;
              context.report({
                node: u,
                messageId: request ? "advisoryUnlockOnRequest" : named ? "namedUnlockOnPool" : "advisoryUnlockOnPool",
                data: { client: through, acquireLine: String(lock.acquire.loc.start.line) },
              });
            }
            continue;
          }
          // The other advisory findings name PostgreSQL's transaction-level lock as the fix: not MySQL's.
          if (named) continue;
          if (adv.neverUnlocked && adv.returnedToPool) {
            context.report({
              node: lock.acquire,
              messageId: "advisoryReturnedToPool",
              data: { client, returnLine: String(adv.returnedToPool.loc.start.line) },
            });
            continue;
          }
          // Inside a transaction a session lock is wrong whether it is unlocked or not: never unlocked, it outlives
          // the commit; unlocked in the same transaction, an aborted transaction refuses the unlock and the lock
          // outlives the rollback (shared corpus h2d02). Either way the transaction-level lock was meant. (A
          // dedicated connection that keeps its session lock until it closes is a leader lock, not a leak.)
          if (adv.via === "transaction") {
            const fix = toTransactionLock(sourceCode, lock.acquire);
            context.report({
              node: lock.acquire,
              messageId: adv.neverUnlocked ? "advisoryNeverUnlocked" : "advisoryUnlockInTransaction",
              suggest: fix ? [{ messageId: "useXactLock", fix }] : [],
            });
            continue;
          }
        }
        const data = {
          lock: describe(lock),
          consequence: consequence(lock),
          acquireLine: String(lock.acquire.loc.start.line),
        };
        // A key-value lock the module keeps alive from outside the function that takes it (a renewal of the same key
        // in another function: a leader's lease extended by its own loop) is held past that function by design; its
        // holder lets it lapse or releases it on shutdown, and heartbeat-abort asks the renewal its questions
        // (blind-15 F15f04). A lock the function renews itself, around its own work, is released by it.
        const owner = enclosingFunction(lock.acquire);
        const renewed =
          lock.ttl &&
          facts.renewals.some(
            (r) =>
              (r.acquire === lock.acquire || r.lock === `the lock "${lock.name}"`) &&
              !(owner !== undefined && r.node.range[0] >= owner.range[0] && r.node.range[1] <= owner.range[1]),
          );
        const escape = renewed
          ? undefined
          : [...lock.escapes].sort(
              (a, b) => ESCAPE_ORDER[a.kind] - ESCAPE_ORDER[b.kind] || a.node.range[0] - b.node.range[0],
            )[0];
        if (escape) {
          const fix = wrapInFinally(sourceCode, lock);
          // The release the escaping path would have reached next (else the first): the one it misses.
          const ahead = lock.releases.filter((r) => r.range[0] > escape.node.range[1]);
          const releaseLine = String(
            Math.min(...(ahead.length > 0 ? ahead : lock.releases).map((r) => r.loc.start.line)),
          );
          context.report({
            node: lock.acquire,
            messageId: lock.ttl ? "ttlReleaseMissed" : messageFor(escape),
            data: {
              ...data,
              exitLine: String(escape.node.loc.start.line),
              releaseLine,
              hint: lock.kind === "mutex" ? " (`runExclusive` does it for you)" : "",
              how: HOW[escape.kind],
            },
            suggest: fix ? [{ messageId: "moveToFinally", fix }] : [],
          });
        }
        if (lock.releasedEarly?.type === "ReturnStatement" && lock.releasedEarly.argument) {
          const argument = lock.releasedEarly.argument;
          context.report({
            node: lock.releasedEarly,
            messageId: "releasedEarly",
            data,
            suggest: [{ messageId: "awaitReturn", fix: (fixer) => fixer.insertTextBefore(argument, "await ") }],
          });
        }
      }
      // A promise memo: a one-key in-flight table whose entry is never emptied, so a rejection is kept for good
      // (blind-12 E12e08, blind-13 E13e13, blind-14 E14e09).
      for (const memo of facts.promiseMemos) {
        const data = { slot: memo.slot };
        context.report({
          node: memo.fill,
          messageId: "memoKeepsRejection",
          data,
          suggest: [{ messageId: "clearOnRejection", data, fix: clearOnRejection(sourceCode, memo) }],
        });
      }
      // A promise chain kept as a queue, which one rejection poisons for every later call (blind-15 E15e06).
      for (const chain of facts.poisonedChains) {
        context.report({
          node: chain.node,
          messageId: chain.link === "finally" ? "chainPassesRejection" : "chainSkipsAfterRejection",
          data: { holder: chain.holder },
        });
      }
      // An in-process lock table freed only when a response emits `finish`: a client that disconnects first leaves
      // the entry set while the process lives (blind-11 E9e08, E9e09).
      for (const table of facts.lockTables) {
        const listener = table.releasedOnFinishOnly;
        if (listener?.type !== "CallExpression") continue;
        const event = listener.arguments[0]!;
        const callee = listener.callee as TSESTree.MemberExpression;
        context.report({
          node: listener,
          messageId: "releasedOnFinishOnly",
          data: {
            lock: `the entry of ${table.table}`,
            acquireLine: String(table.acquire.node.loc.start.line),
            emitter: sourceCode.getText(callee.object),
          },
          suggest: [
            {
              messageId: "releaseOnClose",
              fix: (fixer) => fixer.replaceText(event, sourceCode.getText(event).replace("finish", "close")),
            },
          ],
        });
      }
    });
  },
});

/**
 * Chains a rejection handler on the promise stored that empties the slot and rethrows: the callers that share the
 * failed promise still see the failure, and the next call starts over. The slot is emptied with `null` where the
 * module declares it `null`, else `undefined`.
 */
function clearOnRejection(sourceCode: SourceCode, memo: PromiseMemo): TSESLint.ReportFixFunction {
  const value = memo.value;
  const text = sourceCode.getText(value);
  const bare =
    value.type === "CallExpression" ||
    value.type === "MemberExpression" ||
    value.type === "Identifier" ||
    value.type === "NewExpression";
  // Declared or set `null` (`let p: Promise<X> | null = null`, `{ conn: null, promise: null }`): emptied with it.
  const name = memo.slot.split(".").pop()!.replace(/\$/g, "\\$");
  const empty = new RegExp(`\\b${name}\\s*[:=]\\s*null\\b|\\b${name}\\??\\s*:[^=;]*\\|\\s*null\\b`).test(
    sourceCode.text,
  )
    ? "null"
    : "undefined";
  const handler = `.catch((error) => {\n${" ".repeat(memo.fill.loc.start.column + 2)}${memo.slot} = ${empty};\n${" ".repeat(memo.fill.loc.start.column + 2)}throw error;\n${" ".repeat(memo.fill.loc.start.column)}})`;
  return (fixer) => fixer.replaceText(value, `${bare ? text : `(${text})`}${handler}`);
}

/** Rewrites `pg_advisory_lock` / `pg_try_advisory_lock` in the statement text as its `_xact_` form. */
function toTransactionLock(sourceCode: SourceCode, node: Node): TSESLint.ReportFixFunction | undefined {
  const text = sourceCode.getText(node);
  const matches = [...text.matchAll(/pg_(try_)?advisory_lock\b/gi)];
  if (matches.length !== 1) return undefined;
  const m = matches[0]!;
  const start = node.range[0] + m.index;
  return (fixer) => fixer.replaceTextRange([start, start + m[0].length], `pg_${m[1] ?? ""}advisory_xact_lock`);
}

function clientName(sourceCode: SourceCode, node: TSESTree.CallExpression | TSESTree.TaggedTemplateExpression): string {
  const callee = node.type === "CallExpression" ? node.callee : node.tag;
  if (callee.type === "MemberExpression") return sourceCode.getText(callee.object);
  // A helper named after the SQL function, handed its client: `pgTryAdvisoryLock(prisma, KEY)`.
  const bare = callee.type === "TSAsExpression" || callee.type === "TSNonNullExpression" ? callee.expression : callee;
  const first = node.type === "CallExpression" ? node.arguments[0] : undefined;
  if (
    bare.type === "Identifier" &&
    /advisory/i.test(bare.name) &&
    first &&
    first.type !== "SpreadElement" &&
    node.type === "CallExpression" &&
    node.arguments.length >= 2
  ) {
    const client = first.type === "TSAsExpression" || first.type === "TSNonNullExpression" ? first.expression : first;
    return `${sourceCode.getText(client)}, through ${bare.name}`;
  }
  if (
    node.type === "TaggedTemplateExpression" &&
    node.parent?.type === "CallExpression" &&
    node.parent.callee.type === "MemberExpression"
  ) {
    return sourceCode.getText(node.parent.callee.object);
  }
  // Kysely's raw fragment, run on what it is handed: sql`SELECT …`.execute(db).
  const member = node.type === "TaggedTemplateExpression" ? node.parent : undefined;
  const run = member?.type === "MemberExpression" && member.object === node ? member.parent : undefined;
  const handed = run?.type === "CallExpression" && run.callee === member ? run.arguments[0] : undefined;
  if (handed && handed.type !== "SpreadElement") return sourceCode.getText(handed);
  return sourceCode.getText(callee);
}
