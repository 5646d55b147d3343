import type { TSESLint } from "@typescript-eslint/utils";
import type { KvOp, Node, TextEdit } from "../src/core/model/accesses.js";
import type { RowRelease } from "../src/core/model/claims.js";
import type { KvRelease } from "../src/core/model/kv-locks.js";
import { createRule } from "../src/rule-kit/create-rule.js";
import { onLockFacts } from "../src/rule-kit/inventory.js";
import { describeKey } from "../src/core/reading/keys.js";
import { findVariable, unwrap, variableAt } from "../src/core/reading/values.js";
import { getVocabulary } from "../src/core/model/settings.js";
import { formatValue } from "../src/core/model/names.js";
import { alsoAt, fileCall, filterSite, staleBasis, throughHelper } from "../src/rule-kit/messages.js";
import { describeRowFilter, describeRowRelease } from "../src/core/model/describe.js";

function commandName(op: KvOp): string {
  return (op.command === "script" ? "script" : "DEL") + throughHelper(op);
}

/**
 * The acquire's token as an expression that means the same thing at the release: the same variable in scope,
 * or the same `this.field`. Without one no rewrite is offered (it would invent a name).
 */
function tokenAt(sourceCode: Readonly<TSESLint.SourceCode>, release: KvRelease): string | undefined {
  const value = release.lock.acquire.valueNode && unwrap(release.lock.acquire.valueNode);
  if (!value || release.lock.acquire.constantValue) return undefined;
  if (value.type === "Identifier") {
    const here = sourceCode.getScope(release.op.node);
    let scope: typeof here | null = here;
    while (scope) {
      const v = scope.set.get(value.name);
      if (v) return v === findVariable(sourceCode, value) ? value.name : undefined;
      scope = scope.upper;
    }
    return undefined;
  }
  if (value.type === "MemberExpression" && unwrap(value.object).type === "ThisExpression" && !value.computed) {
    return sourceCode.getText(value);
  }
  return undefined;
}

export default createRule({
  name: "owner-checked-release",
  meta: {
    type: "problem",
    hasSuggestions: true,
    docs: {
      description:
        "Require a lock (a key-value lock, a lock row or an in-process lock table) to be released only by its owner, in one atomic compare-and-delete",
      recommended: true,
      question: "Q3",
    },
    schema: [],
    messages: {
      lockFilePlainRemove:
        "Q3 (is the release race-safe?): this {{operation}} removes the lock file {{path}} by its path alone, without checking that it is still this holder's. The lock is broken once {{basis}} says its holder is gone (line {{breakLine}}), so a holder that was taken for dead removes the file another process holds now, and a third one gets in. Read the file first and remove it only if it still names this holder (a token written at create), or rename it aside and check what was moved.",
      plainDelete:
        "Q3 (is the release race-safe?): this {{command}} removes the lock {{key}} (acquired at line {{acquireLine}}) without checking that this holder still owns it. A holder that outlived the expiry deletes the lock another worker holds now. Delete only while the key still holds this holder's token: a compare-and-delete script, or DELEX key IFEQ token on Redis 8.4+.",
      getCompareDelete:
        "Q3 (is the release race-safe?): this release reads the lock {{key}} (GET at line {{getLine}}), compares it in JavaScript and then deletes it in a separate command. The key can expire and be taken by another worker between the two, and the DEL removes that worker's lock. Compare and delete in one step: a compare-and-delete script, or DELEX key IFEQ token on Redis 8.4+.",
      getCompareDeleteVia:
        "Q3 (is the release race-safe?): this release{{command}} reads the lock {{key}}, compares it in JavaScript and then deletes it in a separate command. The key can expire and be taken by another worker between the two, and the DEL removes that worker's lock. Compare and delete in one step in the helper: a compare-and-delete script, or DELEX key IFEQ token on Redis 8.4+.",
      selfComparedDelete:
        "Q3 (is the release race-safe?): this compare-and-delete of the lock {{key}} (acquired at line {{acquireLine}}) is handed, as the owner's token, the value it just read from the key itself (GET at line {{getLine}}), so the comparison always matches and it removes whatever lock is there now. Pass the token this holder stored when it acquired the lock.",
      constantValue:
        "Q3 (is the release race-safe?): the lock {{key}} is acquired at line {{acquireLine}} with the constant value {{value}}, so no release can tell whose lock it deletes, and this {{command}} removes whatever lock is there now. Store a unique token per acquire (a random id) and delete only while the key still holds it.",
      staleTakeover:
        "Q3 (is the take-over race-safe?): this SET overwrites the lock {{key}} (acquired at line {{acquireLine}}) after reading its value with a separate GET at line {{getLine}}: two workers that both see a stale lock both take it. Let the lock expire (SET NX with an expiry), or check and set in one script.",
      checkedAcquire:
        "Q3 (is the acquire race-safe?): this SET takes the lock {{key}} after a separate GET at line {{getLine}} found it free or already this holder's: two workers that both read it before either writes both take it, and the later SET silently replaces the first holder. Take it in one command: SET key token NX with an expiry, or a script that checks and sets.",
      releasedUntaken:
        "Q3 (is the release race-safe?): the {{exitKind}} at line {{exitLine}} leaves the `try` before {{lock}} is taken (line {{acquireLine}}), and the `finally` still releases it (line {{releaseLine}}): a caller that found it held frees it for everyone while its holder still works. Check and take it before the `try`, so only the holder's way out runs the release.",
      releasedUntakenAfterWait:
        "Q3 (is the release race-safe?): this `finally` releases {{lock}} (taken at line {{acquireLine}}) also for the {{exitKind}} at line {{exitLine}}, which leaves after the await at line {{waitLine}} without taking it: another call that passed the same test while this one waited may hold it by then, and this one frees it while that holder still works. Take it before the first await, or release it only on the way out of the call that took it.",
      releasedInCatchUntaken:
        "Q3 (is the release race-safe?): this `catch` releases {{lock}} (taken at line {{acquireLine}}) by key alone whatever threw, also when line {{exitLine}} throws before the lock is taken: that caller never held it, and it deletes the lock another request holds while its holder still works. Release it only once this caller took it (keep the acquire's result and test it here), or check and take it before the `try`.",
      releasedNotAcquired:
        "Q3 (is the release race-safe?): the {{exitKind}} at line {{exitLine}} leaves the `try` when {{lock}} was not acquired (line {{acquireLine}}), and the `finally` still releases it by key alone (line {{releaseLine}}): every caller that loses the race deletes the winner's lock at once, and a third caller takes it while the winner still works. Return before the `try`, or release only with this caller's token (a compare-and-delete).",
      rowRelease:
        "Q3 (is the release race-safe?): this {{operation}} releases the {{lock}} (taken at line {{acquireLine}}) by {{filter}} alone, without checking that this holder still owns it. The lock {{expires}} (line {{expiryLine}}), so a holder that outlived it frees the row another worker holds now. Release only this holder's row: add its owner or token column, or the lease value it stamped, to the filter.",
      rowReleaseVia:
        "Q3 (is the release race-safe?): this call releases the {{lock}} through `{{helper}}` ({{where}}), which {{how}} it by {{filter}} alone, without checking that this holder still owns it. The lock changes hands once it looks stale (taken at line {{acquireLine}} there), so a holder that outlived it frees the row another worker holds now. Pass this holder's owner or token to the helper, and release only the row that still carries it.",
      leaseRelease:
        "Q3 (is the release race-safe?): this {{operation}} frees the {{model}} row by {{filter}} alone, clearing {{owner}} without checking that this holder still owns the row. The module renews the row's lease ({{lease}}) only while {{owner}} names its holder (line {{heartbeatLine}}), so the lease runs out when a holder stalls and another worker takes the row; a holder that outlived its lease then frees that worker's row. Release only this holder's row: add {{owner}} = this holder's id to the filter.",
      tableReleaseAfterWait:
        "Q3 (is the release race-safe?): this delete frees an entry of the in-process lock table `{{table}}` (taken at line {{acquireLine}}) by its key alone, without checking that the entry is still this holder's. Callers that waited for a holder (line {{waitLine}}) take the key without testing it again, so two can hold it at once, and the first to finish deletes the other's entry: a third caller gets in while it still works. Delete only the entry this holder set: `if ({{table}}.get(key) === entry) {{table}}.delete(key)`.",
      tableRelease:
        "Q3 (is the release race-safe?): this delete frees an entry of the in-process lock table `{{table}}` (taken at line {{acquireLine}}) by its key alone, without checking that the entry is still this holder's. {{expiry}} (line {{expiryLine}}), so a holder that outlives its entry deletes the one of the caller that took over, and a third caller gets in while both still work. Delete only the entry this holder set: `if ({{table}}.get(key) === entry) {{table}}.delete(key)`.",
      useOwner: "Release only this holder's row: add {{field}} = {{token}} to the filter.",
      useScript: "Delete with a compare-and-delete script on {{token}}.",
      useDelex: "Delete with DELEX … IFEQ {{token}} (Redis 8.4+, Valkey 9: DELIFEQ).",
    },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    /**
     * The suggestion for a lock row released by its key alone: the owner or token column the claim wrote, pinned to
     * the same binding (`owner: workerId` at the claim, `workerId` in reach of the release), written into the
     * release's filter in its store's syntax (`addPredicate`). None where the release cannot name that value.
     */
    const vocabulary = getVocabulary(context.settings);
    function ownerPredicate(release: RowRelease): { field: string; token: string; edit: TextEdit } | undefined {
      for (const a of release.claim.write.assignments) {
        if (!vocabulary.isOwnerField(a.field) || a.valueNode.type !== "Identifier") continue;
        const atClaim = findVariable(sourceCode as never, a.valueNode);
        const atRelease = variableAt(sourceCode as never, a.valueNode.name, release.write.node);
        if (!atClaim || atClaim !== atRelease) continue;
        const edit = release.write.addPredicate?.(a.field, "eq", a.valueNode.name);
        if (edit) return { field: a.field, token: a.valueNode.name, edit };
      }
      return undefined;
    }
    const ownerChecked = (r: KvRelease) => r.kind === "owner-checked";
    return onLockFacts(context, (facts) => {
      const seenFiles = new Set<Node>();
      for (const lock of facts.files) {
        const broken = lock.takesOverStale ?? lock.breaks[0]?.judged;
        if (!broken) continue;
        for (const release of lock.releases) {
          if (release.ownerChecked || release.undoesAcquire) continue;
          // A release function of the module is reported once, at its own removal.
          const at = release.op.template ?? release.op;
          if (seenFiles.has(at.node)) continue;
          seenFiles.add(at.node);
          context.report({
            loc: at.loc,
            messageId: "lockFilePlainRemove",
            data: {
              operation: fileCall(at),
              path: describeKey(lock.acquire.key),
              basis: staleBasis(broken.by),
              breakLine: String(broken.test.loc.start.line),
            },
          });
        }
      }
      const seen = new Set<Node>();
      // Calls of another module's release helper share one flaw, fixed in the helper: one finding per lock and
      // helper, at the first call, naming the others.
      const byHelper = new Map<string, KvRelease[]>();
      // A key whose expiry outlasts any work (a day or more) is not taken by anyone else while its holder works.
      const releases = facts.kv.releases.filter((r) => !r.lock.outlastsWork);
      for (const release of releases) {
        const via = release.op.via;
        if (ownerChecked(release) || !via?.file) continue;
        const group = `${release.lock.acquire.loc.start.line}:${release.lock.acquire.loc.start.column}|${via.file}:${via.line}|${release.kind}`;
        byHelper.set(group, [...(byHelper.get(group) ?? []), release]);
      }
      const others = new Map<KvRelease, number[]>();
      for (const group of byHelper.values()) {
        const [first, ...rest] = group.sort((a, b) => a.op.node.range[0] - b.op.node.range[0]);
        others.set(
          first!,
          rest.map((r) => r.op.loc.start.line),
        );
        for (const r of rest) seen.add(r.op.node);
      }
      for (const release of releases) {
        if (ownerChecked(release) || seen.has(release.op.node)) continue;
        seen.add(release.op.node);
        const { acquire } = release.lock;
        const data = {
          command: commandName(release.op).replace(/\)$/, alsoAt(others.get(release)) + ")"),
          key: describeKey(acquire.key),
          acquireLine: String(acquire.loc.start.line),
          getLine: String(release.get?.loc.start.line ?? ""),
          value: acquire.constantValue ? JSON.stringify(formatValue(acquire.constantValue)) : "",
        };
        const token = tokenAt(sourceCode, release);
        const suggest: TSESLint.SuggestionReportDescriptor<"useScript" | "useDelex" | "useOwner">[] = [];
        for (const [how, messageId] of [
          ["script", "useScript"],
          ["delex", "useDelex"],
        ] as const) {
          // A GET compared in JavaScript before the DEL (`get-compare`) is left in place: the DEL it guards becomes
          // the atomic compare-and-delete, and the read before it only skips a call that would delete nothing.
          const edit =
            token !== undefined && (release.kind === "plain" || release.kind === "get-compare")
              ? release.op.edits?.toOwnerCheckedDelete?.(token, how)
              : undefined;
          if (edit)
            suggest.push({
              messageId,
              data: { token: token! },
              fix: (fixer) => fixer.replaceTextRange([edit.range[0], edit.range[1]], edit.text),
            });
        }
        // Compared in a helper of another module: its GET is there, named with the helper.
        if (!acquire.constantValue && release.kind === "get-compare" && !release.get && release.op.via) {
          context.report({
            loc: release.op.loc,
            messageId: "getCompareDeleteVia",
            data: {
              command: throughHelper(release.op).replace(/\)$/, alsoAt(others.get(release)) + ")"),
              key: data.key,
            },
          });
          continue;
        }
        const messageId = acquire.constantValue
          ? "constantValue"
          : release.kind === "get-compare"
            ? "getCompareDelete"
            : release.kind === "self-compared"
              ? "selfComparedDelete"
              : "plainDelete";
        context.report({ loc: release.op.loc, messageId, data, suggest });
      }
      // An in-process guard or mutex, or a key released by key alone, checked inside the `try` whose `finally`
      // releases it.
      for (const lock of facts.held) {
        if (!lock.releasedUntaken) continue;
        const { exit, release, afterWait } = lock.releasedUntaken;
        // A key's is reported at its release, the call that deletes the winner's lock (as a row's is); so is a flag's
        // freed after a wait, where the way out is sound and the release is what frees another caller's flag.
        context.report({
          node: lock.kind === "kv" || afterWait ? release : exit,
          messageId: lock.releasedUntaken.inCatch
            ? "releasedInCatchUntaken"
            : lock.kind === "kv"
              ? "releasedNotAcquired"
              : afterWait
                ? "releasedUntakenAfterWait"
                : "releasedUntaken",
          data: {
            lock:
              lock.kind === "mutex"
                ? `the mutex \`${lock.name}\``
                : lock.kind === "kv"
                  ? `the lock \`${lock.name}\``
                  : `the guard \`${lock.name}\``,
            acquireLine: String(lock.acquire.loc.start.line),
            exitKind: exit.type === "ThrowStatement" ? "throw" : "return",
            exitLine: String(exit.loc.start.line),
            releaseLine: String(release.loc.start.line),
            ...(afterWait ? { waitLine: String(afterWait.loc.start.line) } : {}),
          },
        });
      }
      // In-process lock tables whose entries are freed by age: the release by key alone frees a newer holder's.
      const EXPIRY = {
        takeover: "Entries older than a limit are taken over",
        expires: "An expired entry counts as free",
        timer: "A timer deletes each entry",
        sweep: "Expired entries are deleted",
      } as const;
      for (const table of facts.lockTables) {
        // Two can hold a key once an entry is freed by age, or once waiters take it without testing again.
        const { expiry, waited } = table;
        if (!expiry && !waited) continue;
        for (const release of table.releases) {
          if (release.ownerChecked || seen.has(release.op.node)) continue;
          seen.add(release.op.node);
          const acquireLine = String(table.acquire.node.loc.start.line);
          context.report(
            expiry
              ? {
                  node: release.op.node,
                  messageId: "tableRelease",
                  data: {
                    table: table.table,
                    acquireLine,
                    expiry: EXPIRY[expiry.kind],
                    expiryLine: String(expiry.node.loc.start.line),
                  },
                }
              : {
                  node: release.op.node,
                  messageId: "tableReleaseAfterWait",
                  data: { table: table.table, acquireLine, waitLine: String(waited!.loc.start.line) },
                },
          );
        }
      }
      // The row form: the claim's release sits in the `finally` of a `try` that is left early when the row is found
      // held. Reported at the release, the write that frees someone else's row.
      for (const { claim, release, exit } of facts.untakenReleases) {
        if (seen.has(release.node)) continue;
        seen.add(release.node);
        context.report({
          node: release.node,
          messageId: "releasedUntaken",
          data: {
            lock: `the claim of ${claim.lock.model}.${claim.lock.field} = ${formatValue(claim.lock.value)}`,
            acquireLine: String(claim.write.node.loc.start.line),
            exitKind: exit.type === "ThrowStatement" ? "throw" : "return",
            exitLine: String(exit.loc.start.line),
            releaseLine: String(release.node.loc.start.line),
          },
        });
      }
      for (const release of facts.rowReleases) {
        if (release.ownerChecked || seen.has(filterSite(release.write))) continue;
        const { claim } = release;
        // A row that never changes hands while held (no expiry, no sweeper) cannot be freed for someone else.
        if (!facts.changesHands(claim)) continue;
        // One finding per write: a release of the rows two claims take (a targeted and a swept path) is one flaw.
        seen.add(filterSite(release.write));
        const sweeper = facts.recoveriesOf(claim)[0];
        const described = describeRowRelease(release);
        const owner = ownerPredicate(release);
        context.report({
          node: filterSite(release.write),
          messageId: "rowRelease",
          suggest: owner
            ? [
                {
                  messageId: "useOwner",
                  data: { field: owner.field, token: owner.token },
                  fix: (fixer) => fixer.replaceTextRange([owner.edit.range[0], owner.edit.range[1]], owner.edit.text),
                },
              ]
            : [],
          data: {
            operation: described.operation,
            lock: described.lock,
            filter: described.filter,
            acquireLine: String(claim.write.node.loc.start.line),
            expires:
              claim.takeover.length > 0
                ? `is taken over once ${[...new Set(claim.takeover.map((t) => t.field))].join(", ")} has passed`
                : sweeper
                  ? "is swept when stale"
                  : "is recovered in the module its directive names",
            // A take-over judged in JavaScript is decided at its check; one in the filter at the claim itself.
            expiryLine: String(
              (claim.takeover.length > 0
                ? claim.check
                  ? claim.takeover[0]!.node
                  : claim.write.node
                : !sweeper
                  ? claim.write.node
                  : sweeper.write.node
              ).loc.start.line,
            ),
          },
        });
      }
      // A lease the module renews by owner, claimed where the module does not show (an RPC, another module): its
      // releases by identity alone.
      for (const release of facts.ownedLeaseReleases) {
        if (seen.has(filterSite(release.write))) continue;
        seen.add(filterSite(release.write));
        context.report({
          node: filterSite(release.write),
          messageId: "leaseRelease",
          data: {
            operation: release.write.effect === "delete" ? "delete" : "write",
            model: release.write.model,
            filter: describeRowFilter(release.write.filter),
            owner: release.ownerField,
            lease: release.leaseField,
            heartbeatLine: String(release.heartbeat.node.loc.start.line),
          },
        });
      }
      // Another module's release helper (`clearLease(id)`): its unchecked release is made where it is called, one
      // finding at the first call, naming the others.
      for (const { call, alsoAt: others, helper, file, effect } of facts.importedRowReleases) {
        context.report({
          node: call,
          messageId: "rowReleaseVia",
          data: {
            helper,
            where: `${file}, line ${effect.line}${alsoAt(others)}`,
            how: effect.operation === "delete" ? "deletes" : "clears",
            lock: effect.lock,
            filter: effect.filter,
            acquireLine: String(effect.acquireLine),
          },
        });
      }
      for (const takeover of facts.kv.takeovers) {
        if (takeover.swapChecked) continue;
        context.report({
          loc: takeover.op.loc,
          messageId: takeover.acquire ? "checkedAcquire" : "staleTakeover",
          data: {
            key: describeKey(takeover.lock.acquire.key),
            acquireLine: String(takeover.lock.acquire.loc.start.line),
            getLine: String(takeover.get?.loc.start.line ?? ""),
          },
        });
      }
    });
  },
});
