/**
 * Redis: the scripts a call sends (EVAL/EVALSHA, ioredis `defineCommand` commands): their text and key, the ARGVs the
 * call passes, and a Lua acquire's expiry as the call gives it.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { KvOp, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import type { ScriptShape } from "../../core/languages/lua.js";
import { evaluate, evaluateNumber, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import { objectOf, mayBeMissing } from "./options.js";

export function scriptKey(ctx: RecognizerContext, args: readonly Node[]): Node | undefined {
  // ioredis: eval(script, numKeys, key1, …) or eval(script, numKeys, [key1, …]); node-redis: eval(script, { keys });
  // Upstash: eval(script, [keys], [args]).
  const second = args[1] && unwrap(args[1]);
  if (!second) return undefined;
  if (second.type === "ArrayExpression") return second.elements[0] ?? undefined;
  const options = objectOf(ctx, second);
  if (options) {
    const keys = options.properties.find((p) => p.type === "Property" && keyName(p.key, p.computed) === "keys");
    const list = keys && keys.type === "Property" ? unwrap(keys.value) : undefined;
    return list?.type === "ArrayExpression" ? (list.elements[0] ?? undefined) : undefined;
  }
  const third = args[2] && unwrap(args[2]);
  if (third?.type === "ArrayExpression") return third.elements[0] ?? undefined;
  if (third?.type === "SpreadElement") return undefined;
  return third;
}

export function scriptText(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const n = unwrap(node);
  if (n.type === "TemplateLiteral" && n.expressions.length > 0) {
    return n.quasis.map((q) => q.value.cooked ?? "").join("ARGV[9]");
  }
  const v = evaluate(ctx.sourceCode, n);
  return typeof v?.value === "string" ? v.value : undefined;
}

export const OTHER_SCRIPT: ScriptShape = { kind: "other" };

/** The ARGV (1-based) of a script call, as the JavaScript passes it; undefined when it cannot be told. */
export type ArgvAt = (index: number) => Node | undefined;

/**
 * A Lua acquire's expiry as the call gives it. Given only when positive (`if ttl > 0 then … "EX", ttl`), a literal
 * 0 on one path of the argument (`opts.expire ? seconds : 0`, `ttl ?? 0`) leaves the lock without one there.
 */
export function argvTtl(
  ctx: RecognizerContext,
  ttl: NonNullable<ScriptShape["acquire"]>["ttl"],
  argv: ArgvAt,
): Pick<KvOp, "ttl" | "ttlNode" | "ttlMs"> {
  if (ttl === "none") return { ttl: "absent" };
  if (ttl === "constant") return { ttl: "present" };
  if (ttl === "unknown") return { ttl: "unknown" };
  const node = argv(ttl.argv);
  if (!node) return { ttl: "unknown" };
  const paths = (x: Node, depth: number): ("some" | "none" | "unknown")[] => {
    const u = unwrap(x);
    if (depth > 4) return ["unknown"];
    if (u.type === "ConditionalExpression")
      return [...paths(u.consequent, depth + 1), ...paths(u.alternate, depth + 1)];
    if (u.type === "LogicalExpression" && (u.operator === "??" || u.operator === "||"))
      return ["some", ...paths(u.right, depth + 1)];
    if (u.type === "Identifier") {
      const init = getConstInit(ctx.sourceCode, u);
      if (init) return paths(init, depth + 1);
      if (mayBeMissing(ctx, u)) return ["some", "none"];
    }
    const n = evaluateNumber(ctx.sourceCode, u);
    if (n !== undefined) return [n > 0 ? "some" : ttl.onlyWhenPositive ? "none" : "unknown"];
    const v = evaluate(ctx.sourceCode, u);
    if (v && (v.value === null || v.value === undefined)) return [ttl.onlyWhenPositive ? "none" : "unknown"];
    return ["some"];
  };
  const all = paths(node, 0);
  if (all.includes("unknown")) return { ttl: "unknown" };
  if (all.every((p) => p === "none")) return { ttl: "absent" };
  const n = evaluateNumber(ctx.sourceCode, node);
  const ttlMs = n !== undefined && n > 0 ? { ttlMs: ttl.unit === "EX" ? n * 1000 : n } : {};
  return { ttl: all.includes("none") ? "conditional" : "present", ttlNode: node, ...ttlMs };
}

/** ARGV[i] of an EVAL: ioredis `eval(s, n, ...keys, ...argv)`, node-redis `{ arguments: [a] }`, Upstash `eval(s, [k], [a])`. */
export function evalArgv(ctx: RecognizerContext, args: readonly Node[]): ArgvAt {
  return (index) => {
    const second = args[1] && unwrap(args[1]);
    if (!second) return undefined;
    const n = evaluate(ctx.sourceCode, second);
    if (typeof n?.value === "number") {
      const at = 2 + n.value + index - 1;
      return args.slice(0, at + 1).every((a) => a.type !== "SpreadElement") ? args[at] : undefined;
    }
    const options = objectOf(ctx, second);
    const list = options?.properties.find(
      (p): p is TSESTree.Property => p.type === "Property" && keyName(p.key, p.computed) === "arguments",
    );
    const listed = list ? unwrap(list.value as Node) : args[2] && unwrap(args[2]);
    if (
      listed?.type !== "ArrayExpression" ||
      listed.elements.slice(0, index).some((e) => !e || e.type === "SpreadElement")
    )
      return undefined;
    return listed.elements[index - 1] ?? undefined;
  };
}

/** ARGV[i] of an ioredis `defineCommand` command: `redis.name(key1, …, keyN, argv1, …)`. */
export function definedArgv(args: readonly Node[], numberOfKeys: number | undefined): ArgvAt {
  return (index) => {
    if (numberOfKeys === undefined) return undefined;
    const at = numberOfKeys + index - 1;
    return args.slice(0, at + 1).every((a) => a.type !== "SpreadElement") ? args[at] : undefined;
  };
}
