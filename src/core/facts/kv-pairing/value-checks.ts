/**
 * What the JS checks on the way to a key-value op compare: the GET of the same key whose value they read, whether they
 * compare it with the clock or with the value the acquire stored; and a plain SET checked against such a GET, which
 * acquires as SET NX does.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { KvOp, Node } from "../../model/accesses.js";
import type { ResolvedVocabulary } from "../../model/settings.js";
import { callbackArguments, returnedValues } from "../../reading/calls.js";
import { guardsOf } from "../../reading/guards.js";
import { callbackValueOf, fieldInit, getConstInit, thenParameterOf, unwrap } from "../../reading/values.js";
import { sameTarget } from "./keys.js";
import { isClockReading, readsClock } from "../../reading/clock.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** The GET whose result an expression is: the call awaited in place, or a const holding it. */
function getRead(sourceCode: SourceCode, node: Node, gets: Map<Node, KvOp>): KvOp | undefined {
  let u = unwrap(node);
  if (u.type === "Identifier") {
    const init = getConstInit(sourceCode, u);
    if (!init || init.type === "TSEnumDeclaration") return undefined;
    u = unwrap(init);
  }
  if (u.type === "AwaitExpression") u = unwrap(u.argument);
  return gets.get(u);
}

/** The GET of the same key, on the same client, whose result a compare-and-delete is handed as its token. */
export function tokenReadFromKey(sourceCode: SourceCode, op: KvOp, gets: Map<Node, KvOp>): KvOp | undefined {
  const token = op.valueNode && unwrap(op.valueNode);
  if (token?.type !== "Identifier") return undefined;
  const get = getRead(sourceCode, token, gets);
  return get && sameTarget(get, op) ? get : undefined;
}

/** The GET (of the same key) whose result a JS check on the way to `op` compares. */
export function comparedGet(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): KvOp | undefined {
  return comparedGetIn(sourceCode, op, gets, vocabulary)?.get;
}

/**
 * The GET whose value a JS check on the way to `op` compares, followed through the consts derived from it
 * (`parseInt(v)`, `Number(v)`, `v ? parseInt(v) : 0`); `byTime` when the check also reads the clock (`now <= until`,
 * through consts too): the value is an instant, and the check asks whether it has passed.
 */
export function comparedGetIn(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
  stored?: string,
): { get: KvOp; byTime: boolean; withStored: boolean } | undefined {
  let first: { get: KvOp; byTime: boolean; withStored: boolean } | undefined;
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    let found: KvOp | undefined;
    let byTime = false;
    // `stored`: the text of the value the acquire stores; a test that compares something with it (`id === this.id`).
    let withStored = false;
    const seen = new Set<Node>();
    const visit = (n: Node): void => {
      if (seen.has(n)) return;
      seen.add(n);
      const u = unwrap(n);
      if (
        stored !== undefined &&
        u.type === "BinaryExpression" &&
        /^[!=]==?$/.test(u.operator) &&
        u.left.type !== "PrivateIdentifier" &&
        (sourceCode.getText(unwrap(u.left)) === stored || sourceCode.getText(unwrap(u.right)) === stored)
      )
        withStored = true;
      if (isClockReading(u)) byTime = true;
      const direct = gets.get(u.type === "AwaitExpression" ? unwrap(u.argument) : u);
      if (direct && sameTarget(direct, op)) found = direct;
      // A check through a helper of the module: `if (await this.isLeader())` with `return current === this.id`.
      if (u.type === "CallExpression" && !direct) for (const r of returnedValues(sourceCode, u)) visit(r);
      if (u.type === "Identifier") {
        // this.isLeader(function (err, isLeader) { if (isLeader) … }) with `done(null, id === this.id)` in it
        for (const a of callbackArguments(sourceCode, u)) visit(a);
        // redis.get(key).then((value) => { if (value === token) … })
        const param = thenParameterOf(sourceCode, u);
        const viaThen = param && gets.get(param);
        if (viaThen && sameTarget(viaThen, op)) found = viaThen;
        // redis.get(key, function (err, value) { if (now < parseInt(value)) return; … })
        const called = callbackValueOf(sourceCode, u);
        const viaCallback = called && gets.get(called);
        if (viaCallback && sameTarget(viaCallback, op)) found = viaCallback;
        let init = getConstInit(sourceCode, u);
        if (init) {
          init = unwrap(init);
          if (init.type === "AwaitExpression") init = unwrap(init.argument);
          const get = gets.get(init);
          if (get && sameTarget(get, op)) found = get;
          // A const derived from the value (`parseInt(v)`, `v ? Number(v) : 0`) or from the clock.
          else if (init.type !== "CallExpression" || isDerivation(init)) visit(init);
          else if (readsClock(sourceCode, init)) byTime = true;
        }
      }
      for (const key of [
        "left",
        "right",
        "argument",
        "test",
        "consequent",
        "alternate",
        "expressions",
        "arguments",
        "object",
        "callee",
      ] as const) {
        const child = (u as unknown as Record<string, unknown>)[key];
        if (Array.isArray(child)) child.forEach((c) => c && typeof c === "object" && visit(c as Node));
        else if (child && typeof child === "object" && "type" in child) visit(child as Node);
      }
    };
    visit(guard.test);
    // Every test on the way counts: `if (!value) return; if (now < parseInt(value)) return;` judges the instant in
    // the second.
    if (found && (!first || found === first.get))
      first = {
        get: found,
        byTime: (first?.byTime ?? false) || byTime,
        withStored: (first?.withStored ?? false) || withStored,
      };
  }
  return first;
}

/**
 * A release that checks who holds the key is a lock's release (only a lock has an owner): the value read from the key
 * compared first with the very value the acquire stored (`if (id === this.id) del`, also inside a helper of the module
 * the test calls), or a compare-and-delete script handed that value. A script or a test that compares the value with
 * anything else (a `pending:` prefix, a state) checks a state, not a holder.
 */
export function checksHolder(
  sourceCode: SourceCode,
  del: KvOp,
  acquire: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): boolean {
  const stored =
    acquire.valueNode && !acquire.constantValue ? sourceCode.getText(unwrap(acquire.valueNode)) : undefined;
  if (stored === undefined) return false;
  if (del.command === "script")
    return (
      del.script === "compare-and-delete" &&
      del.valueNode !== undefined &&
      sourceCode.getText(unwrap(del.valueNode)) === stored
    );
  return comparedGetIn(sourceCode, del, gets, vocabulary, stored)?.withStored === true;
}

/** A call that only converts or rounds its argument: `parseInt(v)`, `Number(v)`, `Math.round(t / 1000)`, `d.getTime()`. */
function isDerivation(call: Node): boolean {
  if (call.type !== "CallExpression") return false;
  const c = unwrap(call.callee);
  if (c.type === "Identifier") return /^(parseInt|parseFloat|Number)$/.test(c.name);
  if (c.type !== "MemberExpression" || c.computed || c.property.type !== "Identifier") return false;
  const o = unwrap(c.object);
  if (o.type === "Identifier" && (o.name === "Math" || o.name === "Number")) return true;
  return /^(getTime|valueOf)$/.test(c.property.name);
}

const COLLECTIONS = /^(Map|WeakMap|Set|WeakSet|URLSearchParams|Headers|FormData)$/;

/** The receiver is a JavaScript collection the module builds (`const seen = new Map()`, `private byId = new Map()`). */
function builtInCollection(sourceCode: SourceCode, call: Node): boolean {
  if (call.type !== "CallExpression") return false;
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression") return false;
  const receiver = unwrap(callee.object);
  let init: Node | undefined;
  if (receiver.type === "Identifier") {
    const found = getConstInit(sourceCode, receiver);
    init = found && found.type !== "TSEnumDeclaration" ? found : undefined;
  } else if (receiver.type === "MemberExpression" && unwrap(receiver.object).type === "ThisExpression") {
    init = fieldInit(receiver);
  }
  const n = init && unwrap(init);
  // A collection, or an object of a class that is no key-value client (`new InProcessMemo()`, `new LRUCache()`): its
  // get and set are its own, in this process. A client is made by its library (`new Redis()`, `new Cluster()`).
  return (
    n?.type === "NewExpression" &&
    n.callee.type === "Identifier" &&
    (COLLECTIONS.test(n.callee.name) || !KV_CLIENT_CLASS.test(n.callee.name))
  );
}

/** Classes that are key-value clients: ioredis's and node-redis's, Upstash's, Valkey's, Keyv and memcached's. */
const KV_CLIENT_CLASS = /redis|cluster|valkey|upstash|keyv|memcache|kv/i;

/**
 * The GET a plain SET is checked against as an acquire: a test before it compares the key's value (or a const
 * derived from it) with the very value the SET stores, and turns the caller away on a mismatch. A cache filled on
 * a miss (`if (cached) return cached`) compares nothing with what it stores, and is not one.
 */
export function checkedSet(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): KvOp | undefined {
  if (builtInCollection(sourceCode, op.node)) return undefined;
  const value = op.valueNode && unwrap(op.valueNode);
  if (!value || (value.type !== "Identifier" && value.type !== "MemberExpression")) return undefined;
  const stored = sourceCode.getText(value);
  const get = comparedGet(sourceCode, op, gets, vocabulary);
  if (!get) return undefined;
  const readsGet = (side: Node): boolean => getRead(sourceCode, side, gets) === get;
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    let compares = false;
    const visit = (n: Node): void => {
      const u = unwrap(n);
      if (
        u.type === "BinaryExpression" &&
        /^[!=]==?$/.test(u.operator) &&
        u.left.type !== "PrivateIdentifier" &&
        ((sourceCode.getText(unwrap(u.left)) === stored && readsGet(u.right)) ||
          (sourceCode.getText(unwrap(u.right)) === stored && readsGet(u.left)))
      )
        compares = true;
      if (u.type === "LogicalExpression") {
        visit(u.left);
        visit(u.right);
      }
      if (u.type === "UnaryExpression") visit(u.argument);
    };
    visit(guard.test);
    if (compares) return get;
  }
  return undefined;
}

/** The GET a test asks only "is the key empty?" of, where the guarded code runs: `!v`, `v == null`, or `v` past an exit. */
function absenceTested(sourceCode: SourceCode, test: Node, negated: boolean, gets: Map<Node, KvOp>): KvOp | undefined {
  const u = unwrap(test);
  if (u.type === "UnaryExpression" && u.operator === "!") return absenceTested(sourceCode, u.argument, !negated, gets);
  if (u.type === "BinaryExpression" && /^[!=]==?$/.test(u.operator) && u.left.type !== "PrivateIdentifier") {
    const empty = (n: Node) => {
      const e = unwrap(n);
      return (e.type === "Literal" && e.value === null) || (e.type === "Identifier" && e.name === "undefined");
    };
    const read = empty(u.right) ? u.left : empty(u.left) ? u.right : undefined;
    const equal = u.operator.startsWith("=");
    return read && equal !== negated ? getRead(sourceCode, read, gets) : undefined;
  }
  // `if (v) return;` before the SET, or `if (!v) { … }` around it.
  return negated ? getRead(sourceCode, u, gets) : undefined;
}

/**
 * A release that compares the key's value with a holder first: a compare-and-delete script, or a DEL under a test
 * that compares the value a GET of the key read with something that is not a constant (`if (value === id) del`).
 */
export function ownerCompared(
  sourceCode: SourceCode,
  del: KvOp,
  gets: Map<Node, KvOp>,
  vocabulary: ResolvedVocabulary,
): boolean {
  if (del.command === "script") return del.script === "compare-and-delete";
  if (del.command !== "del") return false;
  return guardsOf(sourceCode, del.node, vocabulary).some((guard) => {
    let compares = false;
    const visit = (n: Node): void => {
      const u = unwrap(n);
      if (u.type === "LogicalExpression") return (visit(u.left), visit(u.right));
      if (u.type === "UnaryExpression" && u.operator === "!") return visit(u.argument);
      if (u.type !== "BinaryExpression" || !/^[!=]==?$/.test(u.operator) || u.left.type === "PrivateIdentifier") return;
      const [l, r] = [unwrap(u.left), unwrap(u.right)];
      for (const [read, other] of [
        [l, r],
        [r, l],
      ] as const) {
        const get = getRead(sourceCode, read, gets);
        if (
          get &&
          sameTarget(get, del) &&
          other.type !== "Literal" &&
          !(other.type === "Identifier" && other.name === "undefined")
        )
          compares = true;
      }
    };
    visit(guard.test);
    return compares;
  });
}

/**
 * The GET a plain SET is taken after when the test on the way only asks whether the key is empty (`if (!held) await
 * redis.set(key, token)`). A cache filled on a miss is written the same way, so the SET is a lock's acquire only when
 * the module also releases the key after comparing its value with a holder (`releases`, read by `ownerCompared`):
 * only a lock has an owner to compare. What it stores must be a value of its own, not a constant.
 */
export function absenceCheckedSet(
  sourceCode: SourceCode,
  op: KvOp,
  gets: Map<Node, KvOp>,
  releases: readonly KvOp[],
  vocabulary: ResolvedVocabulary,
): KvOp | undefined {
  if (op.constantValue !== undefined || !op.valueNode || builtInCollection(sourceCode, op.node)) return undefined;
  if (!releases.some((d) => sameTarget(d, op) && ownerCompared(sourceCode, d, gets, vocabulary))) return undefined;
  for (const guard of guardsOf(sourceCode, op.node, vocabulary)) {
    const get = absenceTested(sourceCode, guard.test, guard.negated, gets);
    if (get && sameTarget(get, op) && get.node.range[1] < op.node.range[0]) return get;
  }
  return undefined;
}
