/**
 * `--cache`: each module's lint kept between runs (issue 17), so a run after a one-file change lints that module
 * (and the modules whose inputs it changes) and pairs the project from the rest as it was.
 *
 * An entry is keyed by everything the lint of one module reads: the module's path and text, the plugin config, the
 * project's settings and `reportUnusedDisableDirectives` for it, the settings given on the command line, and what
 * the audit hands it from other modules (their lock helpers it imports, the lines of its claims recovered
 * elsewhere, the schemas' unique keys). A change to any of them is a different key, never a stale entry. The whole
 * cache is also dropped when the plugin, ESLint or the parser changes (their versions, and the time the plugin's
 * code was built). It stores what the lint gave: the module's findings as ESLint reports them, its lock summary
 * and its import and export bindings, all plain data.
 *
 * The file holds the entries of the last run only, so it never grows past one entry per module and helper set. A
 * file that cannot be read or is of another format is ignored (the run lints everything and writes a new one).
 * `--types` reads a TypeScript program of the whole project into every module's lint: it is not cached.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ESLint } from "eslint";
import type { ModuleSummary } from "../core/facts/summary.js";
import type { importBindings } from "../core/summaries/imported-helpers.js";
import type { heldBindings } from "../core/reading/exports.js";
import { AuditError } from "./discover.js";

/** Bumped whenever what an entry holds changes shape. */
const FORMAT = 1;

/** The default file, in the folder the audit runs from (as ESLint's `.eslintcache`). */
export const DEFAULT_CACHE_FILE = ".locks-audit-cache";

export interface CachedLint {
  readonly result: ESLint.LintResult;
  readonly summary: ModuleSummary;
  readonly bindings: ReturnType<typeof importBindings>;
  readonly held: ReturnType<typeof heldBindings>;
}

interface CacheFile {
  readonly format: number;
  readonly salt: string;
  readonly entries: Record<string, CachedLint>;
}

/** Where `--cache-location` points: a file, or a folder to put the default file in (as ESLint reads it). */
export function cacheFile(cwd: string, location?: string): string {
  if (location === undefined) return join(cwd, DEFAULT_CACHE_FILE);
  const path = resolve(cwd, location);
  let folder = /[\\/]$/.test(location);
  try {
    folder ||= statSync(path).isDirectory();
  } catch {
    // Not there yet: a file to create.
  }
  return folder ? join(path, DEFAULT_CACHE_FILE) : path;
}

/** What invalidates every entry: the format, the plugin (its version and build), ESLint and the parser. */
function saltOf(versions: readonly string[]): string {
  let built = "";
  try {
    built = String(statSync(fileURLToPath(new URL("../index.js", import.meta.url))).mtimeMs);
  } catch {
    // Bundled or loaded from elsewhere: the versions alone.
  }
  return JSON.stringify([FORMAT, ...versions, built]);
}

export class LintCache {
  private readonly previous: Record<string, CachedLint>;
  private readonly kept = new Map<string, CachedLint>();
  private readonly salt: string;
  hits = 0;
  misses = 0;
  /** The modules whose lint ran (a miss), by path. */
  readonly linted = new Set<string>();

  constructor(
    readonly file: string,
    versions: readonly string[],
  ) {
    this.salt = saltOf(versions);
    this.previous = this.load();
  }

  private load(): Record<string, CachedLint> {
    try {
      const data = JSON.parse(readFileSync(this.file, "utf8")) as Partial<CacheFile>;
      if (data.format === FORMAT && data.salt === this.salt && data.entries && typeof data.entries === "object")
        return data.entries;
    } catch {
      // Absent, unreadable or not JSON: start empty.
    }
    return {};
  }

  /** The key of one lint: a hash of everything it reads (see the file comment). */
  key(parts: readonly unknown[]): string {
    return createHash("sha256").update(JSON.stringify(parts)).digest("base64url");
  }

  get(key: string, path: string): CachedLint | undefined {
    const hit = this.kept.get(key) ?? this.previous[key];
    if (hit) {
      this.hits++;
      this.kept.set(key, hit);
    } else {
      this.misses++;
      this.linted.add(path);
    }
    return hit;
  }

  set(key: string, value: CachedLint): void {
    this.kept.set(key, value);
  }

  /** Writes this run's entries, replacing the file in one step (a reader never sees half a file). */
  save(): void {
    const data: CacheFile = { format: FORMAT, salt: this.salt, entries: Object.fromEntries(this.kept) };
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      writeFileSync(tmp, JSON.stringify(data));
      renameSync(tmp, this.file);
    } catch (error) {
      throw new AuditError(
        `cannot write the cache ${this.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
  }
}
