import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../src/core/model/accesses.js";
import { contains } from "../src/core/reading/ast.js";
import { enclosingFunction, isFunction } from "../src/core/reading/units.js";
import { calledFunction } from "../src/core/reading/calls.js";
import { walk } from "../src/core/reading/walk.js";
import type { Renewal } from "../src/core/model/renewals.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { stopWorkEdit } from "../src/rule-kit/stop-work.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** How a lost lease shows in the renewal's result, for messages. */
function signalText(renewal: Renewal): string {
  if (renewal.via === "database") return "it matches no row once the lease is lost";
  if (renewal.command === "compare-and-expire script")
    return "it returns 0 once the key no longer holds this holder's token";
  return `${renewal.command} returns 0 once the key is gone`;
}

/**
 * Where a swallowed failure is reported: the renewal itself, or, when it is made in a module helper whose caller's
 * `catch` takes the failure (`try { await this.renewLock() } catch { log }`), that call: the work that goes on is the
 * caller's, and the fix is there (blind-11 F9b10).
 */
function callInTry(sourceCode: SourceCode, handler: Node, renewal: Renewal): TSESTree.SourceLocation {
  const tryStmt = handler.parent;
  if (handler.type !== "CatchClause" || tryStmt?.type !== "TryStatement" || contains(tryStmt.block, renewal.node))
    return renewal.loc;
  const helper = enclosingFunction(renewal.node);
  let found: TSESTree.CallExpression | undefined;
  walk(tryStmt.block, (n) => {
    if (found || (n !== tryStmt.block && isFunction(n))) return false;
    if (n.type === "CallExpression" && helper && calledFunction(sourceCode, n) === helper) found = n;
    return !found;
  });
  return found ? found.loc : renewal.loc;
}

function whereText(renewal: Renewal): string {
  if (renewal.through) return `renewed through ${renewal.through}`;
  if (!renewal.acquire) return "acquired outside this module";
  return `${renewal.via === "database" ? "claimed" : "acquired"} at line ${renewal.acquire.loc.start.line}`;
}

/** The call of a module helper that drops the renewal's result, when that is outside the renewal's own function. */
function droppedAt(at: Node, renewal: Node): Node | undefined {
  return !isFunction(at) && enclosingFunction(at) !== enclosingFunction(renewal) ? at : undefined;
}

export default createRule({
  name: "heartbeat-abort",
  meta: {
    type: "problem",
    docs: {
      description:
        "Require a heartbeat to stop the work when lease renewal fails, and to renew only a lock it still owns",
      recommended: true,
      question: "Q2",
    },
    hasSuggestions: true,
    schema: [],
    messages: {
      stopWork:
        "Stop the work where the renewal's failure is caught, with what the module has for it: `{{statement}}`.",
      notAwaited:
        "Q2 (how do you tell alive from dead?): the promise of this renewal of {{lock}} ({{where}}) is dropped at line {{dropLine}}, neither awaited nor handled, so when the renewal fails nothing stops the work, which goes on after its lease has lapsed. Await it (or attach a handler) and stop the work when it fails, for example by aborting an AbortController the work honours.",
      escapesTimer:
        "Q2 (how do you tell alive from dead?): when this renewal of {{lock}} ({{where}}) fails, the error escapes the timer callback at line {{timerLine}}, where nothing catches it, and the work goes on after its lease has lapsed. Catch the failure in the callback and stop the work, for example by aborting an AbortController the work honours.",
      resultIgnored:
        "Q2 (how do you tell alive from dead?): this renewal of {{lock}} ({{where}}) reports a lost lease only in its result ({{signal}}), and the result is never read, so the work goes on after the lock has passed to another worker. Check the result and stop the work when the renewal fails.",
      noAbort:
        "Q2 (how do you tell alive from dead?): the result of this renewal of {{lock}} ({{where}}) is checked at line {{checkLine}}, but the failure branch does not stop the work: it neither aborts it, sets a flag the work checks, nor throws into it. Stop the work when the renewal fails.",
      swallowed:
        "Q2 (how do you tell alive from dead?): the failure of this renewal of {{lock}} ({{where}}) is caught at line {{handlerLine}} and the handler does not stop the work: it neither aborts it, sets a flag the work checks, nor throws into it. A renewal that fails silently is worse than none: the work carries on past its lease. Stop the work in the handler.",
      unownedRenewal:
        "Q2 (how do you tell alive from dead?): this {{command}} renews {{lock}} ({{where}}) without checking that this holder still owns it. Once the lease has lapsed and another worker has taken the key, it extends that worker's lock, and this holder never learns that it lost its own. Renew with a compare-and-expire script on this holder's token, and stop the work when it returns 0.",
      getCompareRenewal:
        "Q2 (how do you tell alive from dead?): this {{command}} renews {{lock}} ({{where}}) after comparing its value in JavaScript (GET at line {{getLine}}). The key can expire and pass to another worker between the two commands, and the renewal then extends that worker's lock while this holder believes it still owns it. Compare and renew in one step: a compare-and-expire script on this holder's token, and stop the work when it returns 0.",
      unfencedHeartbeat:
        "Q2 (how do you tell alive from dead?): this heartbeat of {{lock}} ({{where}}) updates it by {{rowFilter}} only, so it succeeds even after a recovery has taken the row back or another worker has claimed it, and this holder never learns that it lost the claim. Filter on the holder's owner column (or the claimed status) and stop the work when the heartbeat matches no row.",
      usingNoSignal:
        "Q2 (how do you tell alive from dead?): this Redlock using() callback takes no abort signal. When the automatic extension of {{lock}} fails, Redlock aborts the signal, but the work never looks at it and goes on without the lock. Take the signal and check signal.aborted (or call signal.throwIfAborted()) between steps, or pass it to the calls that do the work.",
      usingUnusedSignal:
        "Q2 (how do you tell alive from dead?): this Redlock using() callback never reads its abort signal `{{signal}}`. When the automatic extension of {{lock}} fails, Redlock aborts the signal, but the work goes on without the lock. Check {{signal}}.aborted (or call {{signal}}.throwIfAborted()) between steps, or pass it to the calls that do the work.",
    },
  },
  create(context) {
    return onLockFacts(context, (facts) => {
      const seen = new Set<string>();
      for (const renewal of facts.renewals) {
        const key = `${renewal.loc.start.line}:${renewal.loc.start.column}`;
        if (seen.has(key)) continue;
        const base = { lock: renewal.lock, where: whereText(renewal) };
        const report = (
          messageId: Parameters<typeof context.report>[0]["messageId"],
          data: Record<string, string> = {},
          handler?: Node,
          at?: Node,
        ): void => {
          seen.add(key);
          // Where the failure is caught and the work goes on, stop it there with what the module has for it.
          const stop = handler ? stopWorkEdit(context.sourceCode, handler) : undefined;
          context.report({
            loc: handler ? callInTry(context.sourceCode, handler, renewal) : (at?.loc ?? renewal.loc),
            messageId,
            data: { ...base, ...data },
            suggest: stop
              ? [
                  {
                    messageId: "stopWork",
                    data: { statement: stop.statement },
                    fix: (fixer) => fixer.replaceTextRange([stop.edit.range[0], stop.edit.range[1]], stop.edit.text),
                  },
                ]
              : [],
          });
        };
        if (!renewal.owned) {
          if (renewal.via === "database") report("unfencedHeartbeat", { rowFilter: renewal.rowFilter ?? "its filter" });
          else if (renewal.comparedGet)
            report("getCompareRenewal", {
              command: renewal.command,
              getLine: String(renewal.comparedGet.loc.start.line),
            });
          else report("unownedRenewal", { command: renewal.command });
          continue;
        }
        const h = renewal.handling;
        switch (h.kind) {
          case "not-awaited":
            report("notAwaited", { dropLine: String(h.at.loc.start.line) });
            break;
          case "escapes-timer":
            report("escapesTimer", { timerLine: String(h.timer.loc.start.line) });
            break;
          case "result-ignored":
            // Carried out of a helper of the module (`return result === 1`) and dropped by its caller: reported at the
            // call that drops it (`await this.extendLock(key, token)` in a timer), where the work has to be stopped.
            report("resultIgnored", { signal: signalText(renewal) }, undefined, droppedAt(h.at, renewal.node));
            break;
          case "no-abort":
            report("noAbort", { checkLine: String(h.at.loc.start.line) });
            break;
          case "swallowed":
            report("swallowed", { handlerLine: String(h.at.loc.start.line) }, h.at);
            break;
          case "signal-ignored":
            if (h.signal === undefined) report("usingNoSignal");
            else report("usingUnusedSignal", { signal: h.signal });
            break;
          default:
            break;
        }
      }
    });
  },
});
