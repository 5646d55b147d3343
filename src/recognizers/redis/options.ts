/**
 * Redis: SET's options, as ioredis tokens (`"NX", "PX", ms`) or an options object (node-redis v4 and v5, Upstash):
 * whether it sets only if absent, and its expiry (present, absent, on some paths, unknown); an application wrapper's
 * expiry by its name.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { KvDialect, Node, TtlPresence } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { evaluate, evaluateNumber, findVariable, keyName, objectLiteral, unwrap } from "../../core/reading/values.js";
import { WRAPPER_TTL, TTL_TOKENS } from "./commands.js";
import { expressionName } from "../../core/reading/ast.js";

export const objectOf = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

/** A TTL expression that may be undefined at run time: an optional parameter with no default (`ttl?: number`). */
export function mayBeMissing(ctx: RecognizerContext, node: Node): boolean {
  const n = unwrap(node);
  if (n.type !== "Identifier") return false;
  const def = findVariable(ctx.sourceCode, n)?.defs[0];
  if (def?.type !== "Parameter") return false;
  const param = def.name as TSESTree.Identifier;
  return param.optional === true && param.parent?.type !== "AssignmentPattern";
}

function isTruthy(ctx: RecognizerContext, node: Node): boolean {
  const v = evaluate(ctx.sourceCode, node);
  return v === undefined || Boolean(v.value);
}

/**
 * What a spread contributes to the expiry: on every path (`...(fast ? ["PX", 1e3] : ["PX", 3e4])`), on some
 * (`...(ttl ? ["PX", ttl] : [])`, `...(ttl && { PX: ttl })`), on none, or unknown (`...extra`).
 */
function spreadTtl(arg: Node, isTtl: (n: Node) => boolean): "present" | "conditional" | "none" | "unknown" {
  const paths = (x: Node): ("present" | "none" | "unknown")[] => {
    const u = unwrap(x);
    if (u.type === "ConditionalExpression") return [...paths(u.consequent), ...paths(u.alternate)];
    if (u.type === "LogicalExpression") return ["none", ...paths(u.right)];
    if (u.type === "ArrayExpression")
      return [u.elements.some((e) => e !== null && isTtl(unwrap(e))) ? "present" : "none"];
    if (u.type === "ObjectExpression") return [u.properties.some((p) => isTtl(p)) ? "present" : "none"];
    if (u.type === "Literal" || (u.type === "Identifier" && u.name === "undefined")) return ["none"];
    return ["unknown"];
  };
  const n = unwrap(arg);
  if (n.type !== "ConditionalExpression" && n.type !== "LogicalExpression") {
    const [only] = paths(n);
    return only === "present" ? "present" : only === "none" ? "none" : "unknown";
  }
  const all = paths(n);
  if (all.includes("unknown")) return "unknown";
  if (all.every((p) => p === "present")) return "present";
  return all.includes("present") ? "conditional" : "none";
}

export interface SetOptions {
  nx: boolean;
  ttl: TtlPresence;
  /** The expiry's expression, when one option gives it. */
  ttlNode?: Node;
  /** The relative expiry in milliseconds, when static. */
  ttlMs?: number;
  dialect: KvDialect | undefined;
  /** Where an expiry can be added, for suggestions. */
  insertAt?: { object?: TSESTree.ObjectExpression; afterValue?: Node; v5?: boolean };
}

/** `SET key value [NX|XX] [EX s|PX ms|…]` as ioredis tokens. */
/** A relative expiry in milliseconds, when its value is a static number (`"EX", 90 * 24 * 3600`, `{ px: TTL_MS }`). */
function ttlMsOf(ctx: RecognizerContext, node: Node | undefined, unit: string | undefined): { ttlMs?: number } {
  if (!node || node.type === "SpreadElement" || (unit !== "ex" && unit !== "px")) return {};
  const n = evaluateNumber(ctx.sourceCode, node);
  return n === undefined || !(n > 0) ? {} : { ttlMs: unit === "ex" ? n * 1000 : n };
}

export function tokenOptions(ctx: RecognizerContext, rest: readonly Node[]): SetOptions {
  let nx = false;
  let ttl: SetOptions["ttl"] = "absent";
  let ttlNode: Node | undefined;
  let ttlUnit: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg.type === "SpreadElement") {
      const isTtl = (n: Node) => {
        const v = evaluate(ctx.sourceCode, n);
        return typeof v?.value === "string" && TTL_TOKENS.has(v.value.toLowerCase());
      };
      const c = spreadTtl(arg.argument, isTtl);
      if (c === "present") ttl = "present";
      if (c === "conditional" && ttl === "absent") ttl = "conditional";
      if (c === "unknown") ttl = "unknown";
      continue;
    }
    const u = unwrap(arg);
    if (u.type === "ArrowFunctionExpression" || u.type === "FunctionExpression") continue; // legacy callback
    const v = evaluate(ctx.sourceCode, u);
    if (typeof v?.value !== "string") continue;
    const token = v.value.toLowerCase();
    if (token === "nx") nx = true;
    else if (TTL_TOKENS.has(token)) {
      const value = rest[i + 1];
      ttl = value && mayBeMissing(ctx, value) ? "conditional" : "present";
      ttlNode = value;
      ttlUnit = token;
      i++;
    }
  }
  return { nx, ttl, ...(ttlNode ? { ttlNode } : {}), ...ttlMsOf(ctx, ttlNode, ttlUnit), dialect: "ioredis" };
}

/** The SET options node-redis (v4, v5) and Upstash define besides the expiries (lower-cased). */
const SET_OPTION_KEYS = new Set(["nx", "xx", "keepttl", "get", "condition", "expiration"]);

/** `{ NX: true, PX: ms }` (node-redis v4), `{ condition: "NX", expiration: { type, value } }` (v5), `{ nx, px }` (Upstash). */
export function objectOptions(ctx: RecognizerContext, object: TSESTree.ObjectExpression): SetOptions {
  let nx = false;
  let unknown = false;
  let ttl: SetOptions["ttl"] = "absent";
  let lower = false;
  let v5 = false;
  let ttlNode: Node | undefined;
  let ttlUnit: string | undefined;
  for (const p of object.properties) {
    if (p.type === "SpreadElement") {
      const isTtl = (n: Node) =>
        n.type === "Property" && TTL_TOKENS.has((keyName(n.key, n.computed) ?? "").toLowerCase());
      const c = spreadTtl(p.argument, isTtl);
      if (c === "present") ttl = "present";
      if (c === "conditional" && ttl === "absent") ttl = "conditional";
      if (c === "unknown") ttl = "unknown";
      continue;
    }
    const key = keyName(p.key, p.computed);
    if (!key) {
      unknown = true;
      continue;
    }
    const k = key.toLowerCase();
    if (key === k) lower = true;
    if (!SET_OPTION_KEYS.has(k) && !TTL_TOKENS.has(k)) unknown = true;
    if (k === "nx" && isTruthy(ctx, p.value)) nx = true;
    else if (k === "condition") {
      v5 = true;
      const v = evaluate(ctx.sourceCode, p.value);
      if (typeof v?.value === "string" && v.value.toUpperCase() === "NX") nx = true;
    } else if (TTL_TOKENS.has(k)) {
      ttl = mayBeMissing(ctx, p.value) ? "conditional" : "present";
      ttlNode = p.value;
      ttlUnit = k;
    } else if (k === "expiration") {
      v5 = true;
      const e = objectOf(ctx, p.value);
      const value = e?.properties.find((q) => q.type === "Property" && keyName(q.key, q.computed) === "value");
      ttl = value && value.type === "Property" && mayBeMissing(ctx, value.value) ? "conditional" : "present";
      if (value && value.type === "Property") ttlNode = value.value;
      const type = e?.properties.find((q) => q.type === "Property" && keyName(q.key, q.computed) === "type");
      const t = type && type.type === "Property" ? evaluate(ctx.sourceCode, type.value) : undefined;
      if (typeof t?.value === "string") ttlUnit = t.value.toLowerCase();
    }
  }
  // An option no client defines (`{ ttlSec, nx: true }` to an app's own RedisService.set): what it does is unknown,
  // and so is the expiry, never absent.
  if (unknown && ttl === "absent") ttl = "unknown";
  return {
    nx,
    ttl,
    ...(ttlNode ? { ttlNode } : {}),
    ...ttlMsOf(ctx, ttlNode, ttlUnit),
    dialect:
      lower && !v5 && !object.properties.some((p) => p.type === "Property" && keyName(p.key, p.computed) === "NX")
        ? "upstash"
        : "node-redis",
    insertAt: { object, v5 },
  };
}

/** `{ ttl: 600_000 }`, `LOCK_TTL_SECONDS`, `{ expiresIn }`: an expiry by its name; anything else is unknown. */
export function wrapperTtl(ctx: RecognizerContext, node: Node): TtlPresence {
  const object = objectOf(ctx, node);
  if (object) {
    const named = object.properties.some(
      (p) => p.type === "Property" && WRAPPER_TTL.test(keyName(p.key, p.computed) ?? ""),
    );
    return named ? "present" : "unknown";
  }
  const n = unwrap(node);
  const name = expressionName(n);
  return name !== undefined && /ttl|expir|timeout|lease/i.test(name) ? "present" : "unknown";
}
