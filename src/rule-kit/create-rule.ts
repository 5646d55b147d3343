/** The one rule factory: fixes the docs URL and the docs shape every rule shares. */
import type { TSESLint } from "@typescript-eslint/utils";

export const REPOSITORY_URL = "https://github.com/eslint-plugin-locks/eslint-plugin-locks";

export interface LocksDocs {
  /** Starts with a verb; kept equal to the doc page's description by the docs test. */
  description: string;
  /** In `configs.recommended` (every rule is in `configs.strict`). */
  recommended: boolean;
  /** The question the rule answers. */
  question: "Q1" | "Q2" | "Q3";
  requiresTypeChecking?: boolean;
  url?: string;
}

export type LocksRule<MessageIds extends string, Options extends readonly unknown[]> = TSESLint.RuleModule<
  MessageIds,
  Options,
  LocksDocs
> & { name: string; meta: TSESLint.RuleMetaData<MessageIds, LocksDocs, Options> & { docs: LocksDocs } };

export function createRule<MessageIds extends string, Options extends readonly unknown[]>(rule: {
  name: string;
  meta: Omit<TSESLint.RuleMetaData<MessageIds, LocksDocs, Options>, "docs"> & { docs: Omit<LocksDocs, "url"> };
  create: (context: Readonly<TSESLint.RuleContext<MessageIds, Options>>) => TSESLint.RuleListener;
}): LocksRule<MessageIds, Options> {
  const defaultOptions = (rule.meta.defaultOptions ?? []) as unknown as Options;
  return {
    name: rule.name,
    meta: { ...rule.meta, docs: { ...rule.meta.docs, url: `${REPOSITORY_URL}/blob/main/docs/rules/${rule.name}.md` } },
    defaultOptions,
    create: rule.create,
  };
}
