/**
 * The audit reports only what it owns. ESLint's run of the plugin over a real project also says things about the
 * project's other tools, which this run does not load: a disable comment naming `@typescript-eslint/…` gives
 * "Definition for rule … was not found", an `/* eslint-env *\/` comment is an error under ESLint 10, a disable
 * comment for another plugin's rule is "unused" because that rule never ran. None of that is about a lock, and a
 * CI step built on the audit must not fail on it. What stays:
 * - the plugin's rule findings (`locks/*`), including a disable or inline config naming a `locks/*` rule that does
 *   not exist, which the editor reports too;
 * - real parse errors ("Parsing error: …"), which become `locks-audit/parse-error`;
 * - unused disable directives, only for the `locks/*` rules they name and only when the project's ESLint config
 *   asks for them (`linterOptions.reportUnusedDisableDirectives`, at its severity).
 */
import type { Linter } from "eslint";

const PLUGIN = "locks/";

/** ESLint's message for an unused directive: "Unused eslint-disable directive (no problems were reported from 'a' or 'b')." */
const UNUSED = /^Unused eslint-(disable|enable) directive \(no problems were reported from (.+)\)\.$/;

function quoted(list: string): string[] {
  return [...list.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/** An unused directive naming `locks/*` rules, rewritten to name only those; undefined for anything else. */
function unusedLocksDirective(m: Linter.LintMessage, severity: 1 | 2): Linter.LintMessage | undefined {
  const match = UNUSED.exec(m.message);
  if (!match) return undefined;
  const rules = quoted(match[2]!);
  const own = rules.filter((r) => r.startsWith(PLUGIN));
  if (own.length === 0) return undefined;
  const { fix, ...rest } = m;
  return {
    ...rest,
    severity,
    message: `Unused eslint-${match[1]} directive (no problems were reported from ${own.map((r) => `'${r}'`).join(" or ")}).`,
    // ESLint's fix removes every unused rule of the comment; only keep it when all of them are the plugin's.
    ...(fix && own.length === rules.length ? { fix } : {}),
  };
}

/** Is `m` a message the audit owns? `unused` is the project's `reportUnusedDisableDirectives` severity (0: off). */
export function ownMessages(messages: readonly Linter.LintMessage[], unused: 0 | 1 | 2): Linter.LintMessage[] {
  const out: Linter.LintMessage[] = [];
  for (const m of messages) {
    if (m.ruleId) {
      if (m.ruleId.startsWith(PLUGIN)) out.push(m);
    } else if (m.fatal) {
      // Parse errors; and an inline-config problem only when it is about one of the plugin's rules.
      if (m.message.startsWith("Parsing error") || m.message.includes(`'${PLUGIN}`) || m.message.includes(`"${PLUGIN}`))
        out.push(m);
    } else if (unused !== 0) {
      const own = unusedLocksDirective(m, unused);
      if (own) out.push(own);
    }
  }
  return out;
}

/**
 * ESLint 10 reports `/* eslint-env *\/` comments as errors and ESLint 9 prints a warning on stderr for each; the
 * audit's run sets no globals, so the comment means nothing to it. It is made an ordinary comment (same length,
 * so every line and column stays) in the text the audit lints, never in the file.
 */
export function withoutEslintEnv(text: string): string {
  return text.includes("eslint-env") ? text.replace(/\/\*(\s*)eslint-env(?=\s)/g, "/*$1eslint_env") : text;
}
