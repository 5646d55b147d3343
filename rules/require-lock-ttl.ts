import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { KvOp, Node, TextEdit } from "../src/core/model/accesses.js";
import type { KvLock } from "../src/core/model/kv-locks.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { throughHelper } from "../src/rule-kit/messages.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { describeKey } from "../src/core/reading/keys.js";
import { findVariable, unwrap } from "../src/core/reading/values.js";

const EXPIRE_COMMAND = { EX: "EXPIRE", PX: "PEXPIRE", EXAT: "EXPIREAT", PXAT: "PEXPIREAT" } as const;

/** The expiry a suggestion proposes: long enough for most critical sections, short enough to unwedge. */
const SUGGESTED_TTL_MS = "30_000";

function commandName(op: KvOp, lock?: KvLock): string {
  const own =
    op.command === "setnx"
      ? "SETNX"
      : op.script === "set-if-absent"
        ? "script's SET … NX"
        : lock?.checkedBy
          ? "SET (after a GET check)"
          : "SET … NX";
  return own + throughHelper(op);
}

/** The statement an expression call stands in, through `await` and `void`. */
function statementOf(node: Node): TSESTree.ExpressionStatement | undefined {
  let n: Node = node;
  while (
    n.parent &&
    (n.parent.type === "AwaitExpression" || n.parent.type === "UnaryExpression" || n.parent.type === "ChainExpression")
  )
    n = n.parent;
  return n.parent?.type === "ExpressionStatement" ? n.parent : undefined;
}

/**
 * How the module reads the acquire's result, which turning SETNX into SET … NX changes from 1/0 (ioredis; true/false
 * in node-redis) to "OK"/null. Ignored or tested for truth, both agree; compared with 0/1 or true/false, each
 * comparison is rewritten against "OK" (left as it was, it would never match, and the lock would be taken twice or
 * never); anything else (returned, passed on, a multi's reply) is the reader's to check, so only a suggestion, never
 * the automatic fix. A `.then` callback's parameter is read the same way.
 */
function resultUses(
  sourceCode: Readonly<TSESLint.SourceCode>,
  call: Node,
): { readonly truthOnly: boolean; readonly edits: readonly TextEdit[] } {
  const edits: TextEdit[] = [];
  let escapes = false;
  const truth = (n: Node) => {
    const p = n.parent;
    return (
      (p?.type === "IfStatement" && p.test === n) ||
      (p?.type === "UnaryExpression" && p.operator === "!") ||
      (p?.type === "ConditionalExpression" && p.test === n) ||
      (p?.type === "WhileStatement" && p.test === n)
    );
  };
  // `x === 0` → `x !== "OK"`: the lock is held when the literal is 1 or true; `!==`/`!=` test the opposite.
  const compared = (n: Node) => {
    const p = n.parent;
    if (p?.type !== "BinaryExpression" || !["===", "!==", "==", "!="].includes(p.operator)) return false;
    const other = unwrap(p.left === n ? p.right : p.left);
    if (other.type !== "Literal" || ![0, 1, true, false].includes(other.value as never)) return false;
    const held = other.value === 1 || other.value === true;
    const equal = p.operator === "===" || p.operator === "==";
    const operator = sourceCode.getFirstTokenBetween(p.left, p.right, (t) => t.value === p.operator);
    if (!operator) return false;
    // The operator and the literal only: the acquire itself may sit in the comparison, and is edited apart.
    edits.push(
      { range: operator.range, text: held === equal ? "===" : "!==" },
      { range: [other.range[0], other.range[1]], text: '"OK"' },
    );
    return true;
  };
  // Every read of the name the result is bound to: a test, a comparison, or it escapes.
  const readsOf = (id: TSESTree.Identifier) => {
    for (const r of findVariable(sourceCode, id)?.references ?? []) {
      if (!r.isWrite() && !truth(r.identifier) && !compared(r.identifier)) escapes = true;
    }
  };
  let n: Node = call;
  while (n.parent && (n.parent.type === "AwaitExpression" || n.parent.type === "ChainExpression")) n = n.parent;
  const p = n.parent;
  const then =
    p?.type === "MemberExpression" &&
    p.object === n &&
    !p.computed &&
    p.property.type === "Identifier" &&
    p.property.name === "then" &&
    p.parent?.type === "CallExpression" &&
    p.parent.callee === p
      ? p.parent.arguments[0]
      : undefined;
  if (!p || p.type === "ExpressionStatement" || truth(n) || compared(n)) {
    // nothing more to read
  } else if (p.type === "VariableDeclarator" && p.id.type === "Identifier") {
    readsOf(p.id);
  } else if (
    (then?.type === "ArrowFunctionExpression" || then?.type === "FunctionExpression") &&
    then.params[0]?.type === "Identifier"
  ) {
    readsOf(then.params[0]);
  } else {
    escapes = true;
  }
  return { truthOnly: !escapes && edits.length === 0, edits };
}

/** Removing the EXPIRE: its statement, or the `if` that holds nothing else. */
function expireRemoval(expire: KvOp): Node | undefined {
  const stmt = statementOf(expire.node);
  if (!stmt) return undefined;
  const parent = stmt.parent;
  if (
    parent?.type === "BlockStatement" &&
    parent.body.length === 1 &&
    parent.parent?.type === "IfStatement" &&
    parent.parent.consequent === parent &&
    parent.parent.alternate === null
  )
    return parent.parent;
  if (parent?.type === "IfStatement" && parent.consequent === stmt && parent.alternate === null) return parent;
  if (parent?.type === "BlockStatement" || parent?.type === "Program") return stmt;
  return undefined;
}

/** An expiry this long is none (a year; `Number.MAX_SAFE_INTEGER` ms is 285,000 years). */
const NEVER_MS = 365 * 24 * 60 * 60 * 1000;

export default createRule({
  name: "require-lock-ttl",
  meta: {
    type: "problem",
    fixable: "code",
    hasSuggestions: true,
    docs: {
      description: "Require key-value locks to expire: SET NX with an expiry in the same command, never SETNX alone",
      recommended: true,
      question: "Q1",
    },
    schema: [],
    messages: {
      missingTtl:
        "Q1 (if the holder dies, who unlocks?): this {{command}} takes the lock {{key}} with no expiry. If the holder is killed before it deletes the key (SIGKILL, OOM, a deploy), the lock is held forever and every later attempt fails; catch/finally never run. Set an expiry in the same command (SET key token NX PX ms).",
      separateExpire:
        "Q1 (if the holder dies, who unlocks?): this {{command}} takes the lock {{key}} and a separate {{expireCommand}} at line {{expireLine}} gives it an expiry. A crash between the two round trips leaves a lock that never expires. Set the expiry in the acquire itself (SET key token NX EX seconds).",
      expireSkipped:
        "Q1 (if the holder dies, who unlocks?): this {{command}} takes the lock {{key}} and a separate {{expireCommand}} at line {{expireLine}} gives it an expiry, but only on some paths: the {{exit}} at line {{exitLine}} leaves with the lock held before the {{expireCommand}} and deletes nothing, so the key stays set forever with no crash at all (and a crash between the two round trips does the same). Set the expiry in the acquire itself (SET key token NX EX seconds).",
      separateExpireInHelper:
        "Q1 (if the holder dies, who unlocks?): this {{command}} takes the lock {{key}}, and the helper gives it an expiry with a separate EXPIRE. A crash between the two round trips leaves a lock that never expires. Set the expiry in the helper's acquire itself (SET key token NX EX seconds).",
      conditionalTtl:
        "Q1 (if the holder dies, who unlocks?): this {{command}} takes the lock {{key}} with an expiry only on some paths (the TTL can be missing at run time), and on the others the lock never expires if its holder dies. Always set an expiry, with a default.",
      neverExpires:
        "Q1 (if the holder dies, who unlocks?): this {{command}} takes the lock {{key}} with an expiry of {{ttl}}, which never comes in practice. If the holder is killed before it releases the lock (SIGKILL, OOM, a deploy), the lock is held for good and every later attempt fails; catch/finally never run. Give it an expiry a little longer than the work, and renew it while the work runs.",
      semaphoreNoExpiry:
        "Q1 (if the holder dies, who unlocks?): this INCR takes a slot of the semaphore {{key}} (given back by the DECR at line {{releaseLine}}), and the counter never expires and records no holder. A holder killed before its DECR (SIGKILL, OOM, a deploy) keeps its slot forever; enough of them and nobody gets one; catch/finally never run. Keep one entry per holder with its lease time (a sorted set: ZADD, and ZREMRANGEBYSCORE of expired entries before counting), or use a semaphore library with leases.",
      addTtl: "Add a 30-second expiry (PX 30000) to the acquire.",
      mergeExpire: "Set the expiry in the acquire ({{unit}} {{ttl}}) and drop the separate {{expireCommand}}.",
      expireInAcquire: "Set the expiry in the acquire ({{unit}} {{ttl}}); the separate {{expireCommand}} can stay.",
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    function report(lock: KvLock): void {
      const { acquire } = lock;
      const data = { command: commandName(acquire, lock), key: describeKey(acquire.key) };
      if (lock.ttl === "conditional") {
        context.report({ loc: acquire.loc, messageId: "conditionalTtl", data });
        return;
      }
      if (lock.ttl === "absent") {
        // A SET checked in JS wants NX as well as an expiry, and its GET gone: no edit of this call alone does that.
        const setnx = acquire.command === "setnx";
        const uses = setnx ? resultUses(sourceCode, acquire.node) : { truthOnly: true, edits: [] };
        const edit = lock.checkedBy
          ? undefined
          : setnx
            ? acquire.edits?.toSetWithTtl?.(SUGGESTED_TTL_MS, "PX")
            : acquire.edits?.addTtl?.(SUGGESTED_TTL_MS, "PX");
        context.report({
          loc: acquire.loc,
          messageId: "missingTtl",
          data,
          suggest: edit
            ? [
                {
                  messageId: "addTtl",
                  fix: (fixer) =>
                    [edit, ...uses.edits].map((e) => fixer.replaceTextRange([e.range[0], e.range[1]], e.text)),
                },
              ]
            : [],
        });
        return;
      }
      const expire = lock.expire;
      const expiry = expire?.expiry;
      if (!expire || !expiry) {
        // A helper of another module sends the EXPIRE (its own module reports where): no line here to name or fix.
        context.report({ loc: acquire.loc, messageId: "separateExpireInHelper", data });
        return;
      }
      const expireCommand = EXPIRE_COMMAND[expiry.unit];
      const ttlText = sourceCode.getText(expiry.node);
      const setnx = acquire.command === "setnx";
      const uses = setnx ? resultUses(sourceCode, acquire.node) : { truthOnly: true, edits: [] };
      const edit = setnx
        ? acquire.edits?.toSetWithTtl?.(ttlText, expiry.unit)
        : expiry.unit === "EX" || expiry.unit === "PX"
          ? acquire.edits?.addTtl?.(ttlText, expiry.unit)
          : undefined;
      const removal = expireRemoval(expire);
      const mergeData = {
        ...data,
        expireCommand,
        unit: expiry.unit,
        ttl: ttlText,
        expireLine: String(expire.loc.start.line),
      };
      // The EXPIRE goes with the rewrite unless removing it would take the acquire with it (`if (await setnx()) expire()`):
      // then the rewrite alone, and the EXPIRE stays, harmless.
      const removable =
        removal && !(removal.range[0] <= acquire.node.range[0] && acquire.node.range[1] <= removal.range[1])
          ? removal
          : undefined;
      const fix = edit
        ? (fixer: TSESLint.RuleFixer) => [
            fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text),
            ...uses.edits.map((e) => fixer.replaceTextRange([e.range[0], e.range[1]], e.text)),
            ...(removable ? [fixer.removeRange(wholeLines(sourceCode.text, removable))] : []),
          ]
        : undefined;
      // Mechanical only when the TTL is a literal, the EXPIRE stands alone, and no caller reads SETNX's 1/0.
      const mechanical =
        fix !== undefined &&
        removable !== undefined &&
        unwrap(expiry.node).type === "Literal" &&
        uses.truthOnly &&
        unitOfBlock(acquire.node) === unitOfBlock(expire.node);
      // A way out before the EXPIRE that deletes nothing: the same defect without a crash, said in the one finding.
      const skipped = lock.expireSkippedBy;
      const skippedData = skipped
        ? { exit: skipped.type === "ThrowStatement" ? "throw" : "return", exitLine: String(skipped.loc.start.line) }
        : undefined;
      context.report({
        loc: acquire.loc,
        ...(skippedData
          ? { messageId: "expireSkipped" as const, data: { ...mergeData, ...skippedData } }
          : { messageId: "separateExpire" as const, data: mergeData }),
        ...(mechanical ? { fix } : {}),
        suggest:
          !mechanical && fix
            ? [{ messageId: removable ? "mergeExpire" : "expireInAcquire", data: mergeData, fix }]
            : [],
      });
    }
    return onLockFacts(context, (facts) => {
      for (const semaphore of facts.kv.semaphores) {
        if (semaphore.expire) continue;
        context.report({
          loc: semaphore.acquire.loc,
          messageId: "semaphoreNoExpiry",
          data: { key: describeKey(semaphore.acquire.key), releaseLine: String(semaphore.releases[0]!.loc.start.line) },
        });
      }
      // An expiry of a year or more (`Number.MAX_SAFE_INTEGER` ms) is none: a dead holder's lock outlives the service.
      const never = (ms: number | undefined) => ms !== undefined && ms >= NEVER_MS;
      for (const op of facts.kv.libraryLocks) {
        if ((op.op !== "acquire" && op.op !== "using") || !never(op.ttlMs)) continue;
        const key = op.keyNode
          ? `\`${sourceCode.getText(op.keyNode).replace(/\s+/g, " ").replace(/\( /g, "(").replace(/,? \)/g, ")")}\``
          : "the lock";
        context.report({
          node: op.node,
          messageId: "neverExpires",
          data: {
            command: `Redlock ${op.op}`,
            key,
            ttl: sourceCode.getText(op.node.type === "CallExpression" ? op.node.arguments[1]! : op.node),
          },
        });
      }
      for (const lock of facts.kv.locks) {
        if (lock.ttl === "present" && lock.lockLike && never(lock.acquire.ttlMs) && lock.acquire.ttlNode) {
          context.report({
            loc: lock.acquire.loc,
            messageId: "neverExpires",
            data: {
              command: commandName(lock.acquire),
              key: describeKey(lock.acquire.key),
              ttl: sourceCode.getText(lock.acquire.ttlNode),
            },
          });
          continue;
        }
        // A missing expiry matters for locks; an expiry set apart or only sometimes is a bug whatever the key is for.
        // An expiry through an option no client defines is unknown: never reported on a guess.
        if (lock.ttl === "present" || lock.ttl === "unknown" || (lock.ttl === "absent" && !lock.lockLike)) continue;
        // Through another module's helper, only where this module uses the key as a lock: the helper's own module
        // reports its EXPIRE; a marker set through it here (never released) is not this module's lock.
        if (lock.acquire.via && !lock.acquire.via.template && !lock.lockLike) continue;
        // A timestamp-valued lock taken over once its instant passes: a holder that died before its EXPIRE (or with
        // none) is taken over, so nothing wedges (the take-over's own race is owner-checked-release's).
        if (lock.ttl !== "conditional" && facts.kv.takeovers.some((t) => t.lock === lock && t.byTime)) continue;
        report(lock);
      }
    });
  },
});

/** A statement's range widened to its whole lines when it stands alone on them, so no blank line is left. */
function wholeLines(text: string, node: Node): [number, number] {
  let [start, end] = node.range;
  let s = start;
  while (s > 0 && (text[s - 1] === " " || text[s - 1] === "\t")) s--;
  let e = end;
  while (e < text.length && (text[e] === " " || text[e] === "\t")) e++;
  if ((s === 0 || text[s - 1] === "\n") && (e === text.length || text[e] === "\n" || text[e] === "\r")) {
    start = s;
    end = text[e] === "\r" && text[e + 1] === "\n" ? e + 2 : e < text.length ? e + 1 : e;
  }
  return [start, end];
}

/** The function a node runs in: a fix may only merge commands that run in the same one. */
function unitOfBlock(node: Node): Node | undefined {
  let p = node.parent;
  while (
    p &&
    p.type !== "FunctionDeclaration" &&
    p.type !== "FunctionExpression" &&
    p.type !== "ArrowFunctionExpression"
  )
    p = p.parent;
  return p;
}
