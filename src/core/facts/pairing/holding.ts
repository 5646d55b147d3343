/**
 * Who reaches whom, by the names calls use (`CallGraphByName`), and where code runs while a lock is held
 * (`holdingIn`): after the acquire, in what it reaches, in a claim helper's callers.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import type { ModuleShape } from "../../model/lock-facts.js";
import type { Holding } from "../fencing/held-effects.js";
import { classOf, enclosingFunction, functionName, isFunction, unitOf } from "../../reading/units.js";
import { contains } from "../../reading/ast.js";
import { keyName, unwrap } from "../../reading/values.js";
import { walk } from "../../reading/walk.js";

type Unit = TSESTree.FunctionLike | null;

function referencedName(node: Node): { name: string; viaThis: boolean } | undefined {
  const n = unwrap(node);
  if (n.type === "Identifier") return { name: n.name, viaThis: false };
  if (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression") {
    const name = keyName(n.property, n.computed);
    return name === undefined ? undefined : { name, viaThis: true };
  }
  return undefined;
}

/**
 * Who reaches whom by the names calls use: a call of `finish` (or a function handed on as `finish`) reaches every
 * function of the module named `finish` outside a class, `this.finish()` the caller's class's. Names, not bindings:
 * it is not `FunctionBindings` (src/core/reading/function-bindings.ts), which follows a reference to the one function
 * it is bound to in scope. The two answer "which function does this call reach?" by different rules and give
 * different answers (a function declared inside a method is reached only by binding, one a parameter shadows only by
 * name), so one cannot serve the other without changing findings.
 */
class CallGraphByName {
  private readonly byName = new Map<string, TSESTree.FunctionLike[]>();
  private readonly edges = new Map<Unit, { name: string; viaThis: boolean; from: Node }[]>();
  /** The same references by the name they use: `callSites` looks a name up instead of scanning every call. */
  private readonly byReference = new Map<string, { unit: Unit; viaThis: boolean; from: Node }[]>();
  private readonly reachCache = new Map<Unit, Set<Unit>>();
  private readonly siteCache = new Map<Unit, { unit: Unit; after: number; call: Node }[]>();

  constructor(shape: ModuleShape) {
    for (const fn of shape.functions) {
      const name = functionName(fn);
      if (name === undefined) continue;
      const list = this.byName.get(name) ?? [];
      list.push(fn);
      this.byName.set(name, list);
    }
    for (const call of shape.calls) {
      const unit = unitOf(call);
      const refs = this.edges.get(unit) ?? [];
      for (const n of [call.callee, ...call.arguments]) {
        const ref = referencedName(n);
        if (!ref) continue;
        refs.push({ ...ref, from: call });
        const named = this.byReference.get(ref.name) ?? [];
        named.push({ unit, viaThis: ref.viaThis, from: call });
        this.byReference.set(ref.name, named);
      }
      this.edges.set(unit, refs);
    }
  }

  /**
   * Where `target` is called from: each calling unit with the position right after the call, so a caller's
   * writes after `await claimExport(id)` count as the holder's.
   */
  callSites(target: Unit): { unit: Unit; after: number; call: Node }[] {
    if (target === null) return [];
    const cached = this.siteCache.get(target);
    if (cached) return cached;
    const name = functionName(target);
    const out: { unit: Unit; after: number; call: Node }[] = [];
    for (const ref of name === undefined ? [] : (this.byReference.get(name) ?? [])) {
      if (ref.viaThis ? classOf(ref.from) !== classOf(target) : classOf(target) !== undefined) continue;
      out.push({ unit: ref.unit, after: ref.from.range[1], call: ref.from });
    }
    this.siteCache.set(target, out);
    return out;
  }

  /** Units reachable from `start` by calls (and functions passed as arguments), `start` included. */
  reachable(start: Unit): Set<Unit> {
    const cached = this.reachCache.get(start);
    if (cached) return cached;
    const seen = new Set<Unit>([start]);
    const queue = [start];
    while (queue.length > 0) {
      const unit = queue.pop()!;
      for (const ref of this.edges.get(unit) ?? []) {
        // `this.finish()` means the caller's own class; a bare name means a module-level function.
        const cls = ref.viaThis ? classOf(ref.from) : undefined;
        for (const fn of this.byName.get(ref.name) ?? []) {
          if (ref.viaThis ? classOf(fn) !== cls : classOf(fn) !== undefined) continue;
          if (!seen.has(fn)) {
            seen.add(fn);
            queue.push(fn);
          }
        }
      }
    }
    this.reachCache.set(start, seen);
    return seen;
  }
}

/**
 * Where code runs while a lock is held, by the module's calls: after the acquire in its own function, in the
 * functions it reaches, and for a helper that takes the lock (`claimExport(id)`, `withLock(key, work)`), in its
 * callers after the call or in the callbacks handed to it.
 */
export function holdingIn(shape: ModuleShape): Holding {
  let graph: CallGraphByName | undefined;
  const named = (name: string) => shape.functions.filter((fn) => functionName(fn) === name);
  return {
    after(acquire, effect) {
      const acquireUnit = unitOf(acquire);
      const effectUnit = unitOf(effect);
      if (effectUnit === acquireUnit) return effect.range[0] > acquire.range[1];
      graph ??= new CallGraphByName(shape);
      if (graph.reachable(acquireUnit).has(effectUnit)) return true;
      // A claim helper's caller: `if (!(await claimExport(id))) return; …; await finish(id)`, or
      // `await withLock(key, async () => { … })`.
      return graph
        .callSites(acquireUnit)
        .some(
          (site) =>
            (site.unit === effectUnit && (effect.range[0] > site.after || insideCallback(site.call, effect))) ||
            (site.unit !== effectUnit && graph!.reachable(site.unit).has(effectUnit)),
        );
    },
    within(call, effect) {
      if (call.type !== "CallExpression") return false;
      if (insideCallback(call, effect)) return true;
      graph ??= new CallGraphByName(shape);
      const effectUnit = unitOf(effect);
      return call.arguments.some(
        (arg) => arg.type === "Identifier" && named(arg.name).some((fn) => graph!.reachable(fn).has(effectUnit)),
      );
    },
  };
}

/**
 * A write of the claim's own function that nothing awaited since the claim: `const job = await claim(); if
 * (!handler) { await markFailed(job.id); return; }`. The holder cannot have outlived its claim in between (no other
 * work ran), so there is no newer holder to overwrite. An await anywhere between the two in the source counts, and
 * so does any await of a loop that holds the write and not the claim (a later turn of it runs after that await).
 */
export function beforeAnyWait(claim: Node, write: Node): boolean {
  const fn = enclosingFunction(claim);
  if (!fn || enclosingFunction(write) !== fn || write.range[0] < claim.range[1]) return false;
  let loop: Node | undefined;
  for (let p = write.parent; p && p !== fn; p = p.parent) {
    if (/^(For|ForIn|ForOf|While|DoWhile)Statement$/.test(p.type) && !contains(p, claim)) loop = p;
  }
  const from = loop ? Math.min(loop.range[0], claim.range[1]) : claim.range[1];
  const to = loop ? Math.max(loop.range[1], write.range[0]) : write.range[0];
  let waits = false;
  if (!fn.body) return false;
  walk(fn.body, (n) => {
    if (waits || n.range[1] <= from || n.range[0] >= to) return false;
    if (n !== fn && isFunction(n)) return false;
    if (
      (n.type === "AwaitExpression" || n.type === "YieldExpression" || (n.type === "ForOfStatement" && n.await)) &&
      n.range[0] >= from &&
      n.range[1] <= to
    )
      waits = true;
    return undefined;
  });
  return !waits;
}

/** `effect` sits in a function handed to `call` as an argument. */
function insideCallback(call: Node, effect: Node): boolean {
  if (call.type !== "CallExpression") return false;
  return call.arguments.some(
    (arg) => isFunction(arg) && arg.range[0] <= effect.range[0] && effect.range[1] <= arg.range[1],
  );
}
