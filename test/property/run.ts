// How the property tests run: seed and number of runs from the environment, and failures that say how to
// replay them. `FC_SEED` fixes the seed (CI uses a fixed one when it is unset); `FC_NUM_RUNS` scales the runs.
import fc from "fast-check";
import { NEUTRAL_WORDS, removeFunction, renameIdentifiers, reorderFunctions } from "./transforms.js";
import { render, type Layout, type ModuleSpec } from "./render.js";
import { findingKeys, lint, type Finding } from "./lint.js";

const DEFAULT_CI_SEED = 20_260_601;

function seedFromEnvironment(): number {
  const fromEnv = process.env["FC_SEED"];
  if (fromEnv !== undefined && fromEnv !== "") {
    const seed = Number(fromEnv);
    if (!Number.isInteger(seed)) throw new Error(`FC_SEED must be an integer, got ${JSON.stringify(fromEnv)}`);
    return seed;
  }
  return process.env["CI"] ? DEFAULT_CI_SEED : Math.floor(Math.random() * 2 ** 31);
}

export const SEED = seedFromEnvironment();
/** Runs per property: the default keeps the whole property suite well under a minute on two cores. */
export const NUM_RUNS = Number(process.env["FC_NUM_RUNS"] ?? 60);

/**
 * Checks a property with the suite's seed. fast-check shrinks a failure to a minimal counterexample and names
 * the seed and path; the message adds the command that replays it.
 */
export function check<T>(property: fc.IProperty<T> | fc.IAsyncProperty<T>, runs = NUM_RUNS): void {
  try {
    fc.assert(property as fc.IProperty<T>, { seed: SEED, numRuns: runs, includeErrorInReport: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n\nReplay with: FC_SEED=${SEED} npx vitest run test/property`, { cause: error });
  }
}

// ---- transforms ----

export interface Transform {
  readonly layout: Layout;
  /** Stems for fresh names; absent: no renaming. */
  readonly rename: readonly string[] | null;
  /** Sort keys for a permutation of the functions; absent: no reordering. */
  readonly reorder: readonly number[] | null;
}

export const transformArb: fc.Arbitrary<Transform> = fc.record({
  layout: fc.record({
    style: fc.constantFrom<Layout["style"]>("await", "then"),
    container: fc.constantFrom<Layout["container"]>("functions", "arrows", "class", "object"),
    clientFields: fc.boolean(),
    transaction: fc.boolean(),
  }),
  rename: fc.option(fc.array(fc.constantFrom(...NEUTRAL_WORDS), { minLength: 1, maxLength: 6 }), { nil: null }),
  reorder: fc.option(fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 8, maxLength: 8 }), { nil: null }),
});

export const IDENTITY: Transform = {
  layout: { style: "await", container: "functions", clientFields: false },
  rename: null,
  reorder: null,
};

function permutation(keys: readonly number[], n: number): number[] {
  return [...Array(n).keys()].sort((a, b) => keys[a % keys.length]! - keys[b % keys.length]! || a - b);
}

export interface Program {
  readonly code: string;
  /** Transformed name → original name. */
  readonly back: ReadonlyMap<string, string>;
  /** Original name → transformed name. */
  readonly forward: ReadonlyMap<string, string>;
}

/** Renders the spec in the transform's layout, then reorders and renames it. */
export function build(spec: ModuleSpec, t: Transform): Program {
  let code = render(spec, t.layout);
  if (t.reorder) code = reorderFunctions(code, (n) => permutation(t.reorder!, n));
  if (!t.rename) return { code, back: new Map(), forward: new Map() };
  const stems = t.rename;
  const renamed = renameIdentifiers(code, (i) => stems[i % stems.length]!);
  return { code: renamed.code, back: renamed.back, forward: new Map([...renamed.back].map(([k, v]) => [v, k])) };
}

export interface Linted {
  readonly program: Program;
  readonly findings: readonly Finding[];
  /** The findings as comparable keys, with names mapped back to the spec's. */
  readonly keys: readonly string[];
}

export function lintProgram(program: Program): Linted {
  const findings = lint(program.code);
  return { program, findings, keys: findingKeys(findings, program.back) };
}

export function lintSpec(spec: ModuleSpec, t: Transform = IDENTITY): Linted {
  return lintProgram(build(spec, t));
}

/** Deletes a function of the spec (by its original name) from a built program. */
export function without(program: Program, name: string): Program {
  return { ...program, code: removeFunction(program.code, program.forward.get(name) ?? name) };
}

/** Multiset difference: `a` minus `b` (each key of `b` removes one equal key of `a`). */
export function minus(a: readonly string[], b: readonly string[]): string[] {
  const rest = [...a];
  for (const k of b) {
    const i = rest.indexOf(k);
    if (i >= 0) rest.splice(i, 1);
  }
  return rest;
}

/** A readable failure: what differs, and the code it differs on. */
export function mismatch(
  what: string,
  details: Record<string, unknown>,
  ...programs: readonly { label: string; code: string }[]
): Error {
  const parts = [what, JSON.stringify(details, null, 2), ...programs.map((p) => `---- ${p.label}\n${p.code}`)];
  return new Error(parts.join("\n"));
}
