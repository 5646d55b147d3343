// Types for bench/corpus.js, which scripts run as plain JavaScript and the zero-crash test imports.
export interface CorpusPackage {
  readonly name: string;
  readonly version: string;
  readonly files: number;
  readonly bytes: number;
}

export interface Corpus {
  /** Absolute paths: every corpus file, or an evenly spread sample of `limit` of them. */
  readonly files: string[];
  /** How many files the whole corpus has. */
  readonly total: number;
  readonly packages: CorpusPackage[];
  /** Every file of each package, by package name. */
  readonly filesByPackage: Record<string, string[]>;
  readonly skipped: { readonly declarations: number; readonly large: number };
}

export const repoRoot: string;
export const corpusConfigPath: string;
export const appCorpusConfigPath: string;
export function appCorpusDir(pkg: { name: string; version: string }, root?: string): string;
export function listCorpus(options?: { limit?: number; root?: string; corpus?: "library" | "application" }): Corpus;
export function displayPath(file: string, root?: string): string;
