/**
 * Which helpers an import brings in, from what the modules of the project export. One reading for both places that
 * look across modules: the audit (src/audit/lint.ts), which lints every module first and hands each importer its
 * helpers, and the editor (src/rule-kit/imported-modules.ts), which reads the few modules a file imports and calls.
 *
 * A module's helpers are its own exported ones (exported-helpers.ts), those it re-exports from others (a barrel:
 * `export * from "./lock"`, `export { RedisLock as Lock } from "./redis-lock"`, read from its text since a barrel
 * makes no call), and those its exports hold (an aggregate: `export class db { static locks = locks }` of an imported
 * `locks` exports `locks.acquire` as `db.locks.acquire`).
 */
import { relative } from "node:path";
import type { ExportedHelper } from "../model/helper-summaries.js";
import type { importBindings, ImportedHelpers } from "./imported-helpers.js";
import type { heldBindings } from "../reading/exports.js";

export type ImportBinding = ReturnType<typeof importBindings>[number];
export type HeldBinding = ReturnType<typeof heldBindings>[number];
/** An export that holds an import binding: the export's path, and where the binding comes from. */
export interface HeldImport {
  readonly path: string;
  readonly specifier: string;
  readonly imported: string;
}

/** What the helper index reads of the project, module by module (absolute paths). */
export interface ProjectModules {
  readonly root: string;
  /** The module's own exported helpers; undefined or empty when it exports none (or is not read). */
  helpersOf(path: string): readonly ExportedHelper[] | undefined;
  /** The module's text, for its re-exports; undefined when it is not read. */
  textOf(path: string): string | undefined;
  /** Its exports that hold an import binding (`heldImports`). */
  heldOf(path: string): readonly HeldImport[];
  resolve(specifier: string, from: string): string | undefined;
}

/** The module's exports that hold one of its import bindings: the export's path and the binding. */
export function heldImports(imports: readonly ImportBinding[], held: readonly HeldBinding[]): HeldImport[] {
  return held.flatMap((h) => {
    const b = imports.find((i) => i.local === h.local);
    return b ? [{ path: h.path, specifier: b.specifier, imported: b.imported }] : [];
  });
}

/** `name` is the export `base` or one of its members (`Lock.acquire`, `Lock#release`). */
const under = (name: string, base: string) =>
  name === base || name.startsWith(`${base}.`) || name.startsWith(`${base}#`);

const REEXPORT = /export\s*(\*|\{([^}]*)\})\s*from\s*["']([^"']+)["']/g;

/** The helpers each module exports, its re-exports and held exports included; memoised for the index's life. */
export function helperIndex(project: ProjectModules): (path: string) => readonly ExportedHelper[] {
  const memo = new Map<string, readonly ExportedHelper[]>();
  const exportsOf = (path: string, depth: number): readonly ExportedHelper[] => {
    const known = memo.get(path);
    if (known) return known;
    const own = project.helpersOf(path) ?? [];
    const text = project.textOf(path);
    const held = text === undefined ? [] : project.heldOf(path);
    if (depth > 3 || !text || (!text.includes("from") && held.length === 0)) {
      memo.set(path, own);
      return own;
    }
    memo.set(path, own); // a cycle of barrels ends here
    const out = [...own];
    const located = (theirs: ExportedHelper, target: string) =>
      theirs.file ? theirs : { ...theirs, file: relative(project.root, target) };
    for (const h of held) {
      const target = project.resolve(h.specifier, path);
      if (!target || target === path) continue;
      const base = h.imported === "*" ? undefined : h.imported;
      for (const theirs of exportsOf(target, depth + 1)) {
        if (base === undefined) {
          if (!theirs.name.startsWith("default"))
            out.push({ ...located(theirs, target), name: `${h.path}.${theirs.name}` });
        } else if (under(theirs.name, base)) {
          out.push({ ...located(theirs, target), name: h.path + theirs.name.slice(base.length) });
        }
      }
    }
    for (const m of text.matchAll(REEXPORT)) {
      const target = project.resolve(m[3]!, path);
      if (!target || target === path) continue;
      const theirs = exportsOf(target, depth + 1).map((h) => located(h, target));
      if (m[1] === "*") {
        out.push(...theirs.filter((h) => !h.name.startsWith("default")));
        continue;
      }
      for (const spec of m[2]!.split(",")) {
        const [from, as] = spec
          .trim()
          .replace(/^type\s+/, "")
          .split(/\s+as\s+/)
          .map((x) => x.trim());
        if (!from) continue;
        for (const h of theirs)
          if (under(h.name, from)) out.push({ ...h, name: (as ?? from) + h.name.slice(from.length) });
      }
    }
    memo.set(path, out);
    return out;
  };
  return (path) => exportsOf(path, 0);
}

/** The helpers each import binding of the module at `path` brings in, from what the modules it resolves to export. */
export function importedHelpers(
  path: string,
  bindings: readonly ImportBinding[],
  exportsOf: (path: string) => readonly ExportedHelper[],
  project: Pick<ProjectModules, "resolve" | "root">,
): ImportedHelpers[] {
  const out: ImportedHelpers[] = [];
  for (const b of bindings) {
    const target = project.resolve(b.specifier, path);
    if (!target || target === path) continue;
    const base = b.imported === "*" ? undefined : b.imported;
    const helpers = exportsOf(target).filter((h) => base === undefined || under(h.name, base));
    if (helpers.length > 0)
      out.push({ local: b.local, imported: b.imported, file: relative(project.root, target), helpers });
  }
  return out;
}
