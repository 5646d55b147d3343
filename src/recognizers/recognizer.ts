/** The contract every store recognizer meets: a call in, a normalised state write or read out (or nothing). */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { StateAccess } from "../core/model/accesses.js";
import type { StorePackages } from "../core/reading/types.js";

export interface RecognizerContext {
  readonly sourceCode: Readonly<TSESLint.SourceCode>;
  /** Per-file memory a recognizer may keep between calls (e.g. scripts defined with `defineCommand`). */
  readonly scratch: Map<string, unknown>;
}

export interface Recognizer {
  /** Store name, as written into `StateWrite.store`. */
  readonly store: string;
  /**
   * The store's client packages, for type-aware mode (src/core/reading/types.ts): a receiver whose type the checker
   * proves is declared elsewhere (a `Map`, another library) is not this store's. Stores read by their text or their
   * constructors (raw SQL, lock libraries, object storage) declare none.
   */
  readonly packages?: StorePackages;
  /** Method names a call must end in to be worth a look: the inventory's cheap pre-filter. */
  readonly methods: ReadonlySet<string>;
  /**
   * Method names it also reads, but only in a module some call already makes a candidate (`has`, `delete` of a lock
   * table): no evidence on their own, so they do not make a module's text a candidate (`mayHoldLocks`).
   */
  readonly companions?: ReadonlySet<string>;
  /** Plain function names a call may have instead (`writeFile(path, data)` after a named import). */
  readonly functions?: ReadonlySet<string>;
  /**
   * What a module's text must contain for this store's accesses to make a lock beyond what the shared vocabulary
   * names (lock words, state and flag fields, deletes: core/model/evidence.ts): `NX` for Redis, `Sema` for
   * async-sema, matched without case. The inventory skips a module with none of either (issue 17).
   */
  readonly evidence?: RegExp;
  /** Looks at the file's calls once before `recognize`; returns method names it learnt (defined commands). */
  prepare?(calls: readonly TSESTree.CallExpression[], ctx: RecognizerContext): readonly string[];
  recognize(call: TSESTree.CallExpression, ctx: RecognizerContext): StateAccess | undefined;
  /** Tag names (`sql`, `$executeRaw`) whose tagged templates this recognizer reads. */
  readonly tags?: ReadonlySet<string>;
  recognizeTagged?(node: TSESTree.TaggedTemplateExpression, ctx: RecognizerContext): StateAccess | undefined;
  /**
   * A tagged template of another tag this recognizer reads by what it holds (a project's own `queryRows\`UPDATE …\``:
   * text that opens with a statement is SQL, whatever the tag is called). Looks at the template's first text only.
   */
  taggedByContent?(node: TSESTree.TaggedTemplateExpression): boolean;
}
