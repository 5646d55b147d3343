/**
 * Redis commands from ioredis, node-redis (v4/v5) and Upstash (`@upstash/redis`, `@vercel/kv`), normalised to
 * key-value ops: SET (with NX and expiry read from tokens or option objects), SETNX, EXPIRE and kin, DEL/UNLINK,
 * GET, WATCH, and scripts (EVAL/EVALSHA and ioredis `defineCommand`) read with a Lua parser. Also the generic
 * forms `call("SET", …)` (ioredis) and `sendCommand(["SET", …])` (node-redis), and commands queued on
 * `multi()`/`pipeline()`, which are sent together.
 *
 * Precision comes from what a call says, not from guessing receivers: only `SET` with an NX condition or
 * `SETNX` acquires; GET/DEL/EXPIRE matter only when their key shape matches an acquired one.
 */
import { appendProperty } from "../core/reading/edits.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type {
  KvCommand,
  KvDialect,
  KvEdits,
  KvOp,
  Node,
  StaticValue,
  TextEdit,
  TtlPresence,
} from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { isFunction } from "../core/reading/units.js";
import { keyShape } from "../core/reading/keys.js";
import { classifyScript, type ScriptShape } from "../core/languages/lua.js";
import {
  evaluate,
  evaluateNumber,
  findVariable,
  getConstInit,
  keyName,
  objectLiteral,
  unwrap,
} from "../core/reading/values.js";
import { methodName } from "../core/reading/ast.js";

const COMMANDS: Record<string, KvCommand> = {
  set: "set",
  setnx: "setnx",
  expire: "expire",
  pexpire: "expire",
  expireat: "expire",
  pexpireat: "expire",
  del: "del",
  unlink: "del",
  get: "get",
  getset: "set",
  eval: "script",
  evalsha: "script",
  evalro: "script",
  evalsharo: "script",
  watch: "watch",
  incr: "incr",
  incrby: "incr",
  decr: "decr",
  decrby: "decr",
  // An application's cache service over Redis (`this.cache.setnx(key, 1, { ttl })`, `setIfNotExists(key, v, ttl)`,
  // `delete(key)`): its own names for SETNX and DEL. A DEL matters only where its key is an acquired lock's.
  delete: "del",
  setifnotexists: "setnx",
  setifnotexist: "setnx",
  setifabsent: "setnx",
  setifnotexistsorget: "setnx",
};
const WRAPPER_NAMES = new Set(["delete", "setifnotexists", "setifnotexist", "setifabsent", "setifnotexistsorget"]);
/** The expiry an application's set-if-absent wrapper is given: an option or argument named like one. */
const WRAPPER_TTL = /^(?:ttl|ex|px|expire|expires|expiry|expiresIn|expiration|timeout|lease)/i;
const EXPIRY_UNIT: Record<string, "EX" | "PX" | "EXAT" | "PXAT"> = {
  expire: "EX",
  pexpire: "PX",
  expireat: "EXAT",
  pexpireat: "PXAT",
};
const TTL_TOKENS = new Set(["ex", "px", "exat", "pxat"]);
const BATCH_METHODS = new Set(["multi", "pipeline", "batch"]);
/** A service's accessor for the client it wraps: `getClient()`, `getRedis()`, `client()`. */
const CLIENT_GETTER = /^(?:get)?(?:client|redis|redisClient|connection)$/i;
const GENERIC = new Set(["call", "sendcommand", "send_command", "callbuffer"]);
const RELEASE_LUA = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** Every spelling the clients use: `setnx`, `setNX`, `SETNX`, `pExpire`, `sendCommand`… */
const METHODS = new Set<string>();
for (const name of [...Object.keys(COMMANDS), "call", "sendCommand", "send_command", "callBuffer", "defineCommand"]) {
  METHODS.add(name);
  METHODS.add(name.toUpperCase());
}
for (const name of [
  "setNX",
  "getSet",
  "pExpire",
  "expireAt",
  "pExpireAt",
  "evalSha",
  "evalRo",
  "evalShaRo",
  "setIfNotExists",
  "setIfNotExist",
  "setIfAbsent",
  "setIfNotExistsOrGet",
])
  METHODS.add(name);

interface DefinedScript {
  readonly shape: ScriptShape;
  readonly numberOfKeys: number | undefined;
}

interface FileInfo {
  /** Read on first use: finding it scans the module's imports and text, and most modules send no Redis command. */
  readonly dialect: KvDialect;
  readonly defined: Map<string, DefinedScript>;
  /** Read on first use from the module's text: whether it makes a batch, whether it binds `this` to a name. */
  readonly text: { readonly batches: boolean; readonly aliasesThis: boolean; readonly clientGetters: boolean };
}

function info(ctx: RecognizerContext): FileInfo {
  let fi = ctx.scratch.get("redis") as FileInfo | undefined;
  if (!fi) {
    let dialect: KvDialect | undefined;
    let text: FileInfo["text"] | undefined;
    fi = {
      get dialect() {
        return (dialect ??= importedDialect(ctx));
      },
      defined: new Map(),
      get text() {
        const t = ctx.sourceCode.text;
        return (text ??= {
          batches: /\.(?:multi|pipeline|batch)\s*\(/i.test(t),
          aliasesThis: /=\s*this\s*[;,\n]/.test(t),
          clientGetters: /\.(?:get)?(?:client|redis|redisClient|connection)\s*\(\s*\)/i.test(t),
        });
      },
    };
    ctx.scratch.set("redis", fi);
  }
  return fi;
}

/** The client the module imports, which decides how a suggested rewrite is spelled. */
function importedDialect(ctx: RecognizerContext): KvDialect {
  const sources = new Set<string>();
  for (const stmt of ctx.sourceCode.ast.body) {
    if (stmt.type === "ImportDeclaration") sources.add(String(stmt.source.value));
  }
  const text = ctx.sourceCode.text;
  for (const m of text.matchAll(/require\(\s*["']([^"']+)["']\s*\)/g)) sources.add(m[1]!);
  if ([...sources].some((s) => s === "ioredis" || s.startsWith("ioredis/"))) return "ioredis";
  if ([...sources].some((s) => s === "redis" || s.startsWith("@redis/"))) return "node-redis";
  if ([...sources].some((s) => s.startsWith("@upstash/redis") || s === "@vercel/kv")) return "upstash";
  return "ioredis";
}

const objectOf = (ctx: RecognizerContext, node: Node | undefined) => objectLiteral(ctx.sourceCode, node);

/** A TTL expression that may be undefined at run time: an optional parameter with no default (`ttl?: number`). */
function mayBeMissing(ctx: RecognizerContext, node: Node): boolean {
  const n = unwrap(node);
  if (n.type !== "Identifier") return false;
  const def = findVariable(ctx.sourceCode, n)?.defs[0];
  if (def?.type !== "Parameter") return false;
  const param = def.name as TSESTree.Identifier;
  return param.optional === true && param.parent?.type !== "AssignmentPattern";
}

/**
 * The client a command is sent on: the receiver below any multi()/pipeline() chain, `this.` dropped. A batch held in
 * a variable (`const p = redis.pipeline(); p.del(key)`) sends on the client it was made from.
 */
function clientOf(ctx: RecognizerContext, call: TSESTree.CallExpression): string {
  let r: Node = unwrap(call.callee);
  if (r.type === "MemberExpression") r = unwrap(r.object);
  const fi = info(ctx);
  for (let i = 0; i < 50; i++) {
    if (r.type === "Identifier") {
      // Most modules make no batch, get no client from a service and alias no `this`: their receivers are taken as
      // written, with no scope lookup.
      const batch = fi.text.batches ? batchHeldIn(ctx, r) : undefined;
      const service = !batch && fi.text.clientGetters ? serviceOfClient(ctx, r) : undefined;
      if (service) {
        r = service;
        break;
      }
      if (!batch) break;
      r = batch;
    }
    if (r.type !== "CallExpression") break;
    const callee = unwrap(r.callee);
    if (callee.type !== "MemberExpression") break;
    r = unwrap(callee.object);
  }
  // `var self = this; self._redis.get(…)` sends on the same client as `this._redis.setnx(…)`.
  let root: Node = r;
  while (root.type === "MemberExpression") root = unwrap(root.object);
  const aliasOfThis =
    root.type === "Identifier" &&
    fi.text.aliasesThis &&
    (() => {
      const init = getConstInit(ctx.sourceCode, root as TSESTree.Identifier);
      return init !== undefined && init.type !== "TSEnumDeclaration" && unwrap(init).type === "ThisExpression";
    })();
  const text = ctx.sourceCode.getText(r).replace(/\s+/g, "");
  return aliasOfThis ? text.replace(/^[^.]+\./, "") : text.replace(/^this\./, "");
}

/**
 * The batch a variable holds where it is used: `const p = redis.pipeline()`, or a `let`/`var` that every assignment
 * gives a new batch of the same client (`var multi = client.multi(); …; multi = client.multi();`), in which case
 * the one assigned last before the use.
 */
function batchHeldIn(ctx: RecognizerContext, id: TSESTree.Identifier): TSESTree.CallExpression | undefined {
  const batchIn = (n: Node | null | undefined): TSESTree.CallExpression | undefined => {
    let u = n ? unwrap(n) : undefined;
    if (u?.type === "AwaitExpression") u = unwrap(u.argument);
    const m = u?.type === "CallExpression" ? methodName(u) : undefined;
    return m !== undefined && BATCH_METHODS.has(m.toLowerCase()) ? (u as TSESTree.CallExpression) : undefined;
  };
  const clientText = (b: TSESTree.CallExpression) => {
    const callee = unwrap(b.callee);
    return ctx.sourceCode.getText(callee.type === "MemberExpression" ? callee.object : callee);
  };
  const variable = findVariable(ctx.sourceCode, id);
  const def = variable?.defs[0];
  const first = def?.node.type === "VariableDeclarator" ? batchIn(def.node.init) : undefined;
  if (!variable || !first) return undefined;
  let held = first;
  for (const ref of variable.references) {
    if (!ref.isWrite() || ref.init) continue;
    const assignment = ref.identifier.parent;
    const again =
      assignment?.type === "AssignmentExpression" && assignment.operator === "="
        ? batchIn(assignment.right)
        : undefined;
    if (!again || clientText(again) !== clientText(first)) return undefined;
    if (again.range[0] < id.range[0] && again.range[0] > held.range[0]) held = again;
  }
  return held;
}

/**
 * The service a client variable was taken from: `const redisClient = this.redisService.getClient()` sends on the
 * client `this.redisService` wraps, so its SET and the service's own `del(key)` are on one client (corpus Br08).
 */
function serviceOfClient(ctx: RecognizerContext, id: TSESTree.Identifier): Node | undefined {
  const init = getConstInit(ctx.sourceCode, id);
  const call = init && init.type !== "TSEnumDeclaration" ? unwrap(init) : undefined;
  if (call?.type !== "CallExpression" || call.arguments.length > 0) return undefined;
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression" || !CLIENT_GETTER.test(keyName(callee.property, callee.computed) ?? ""))
    return undefined;
  return unwrap(callee.object);
}

/** The batch (`multi()`/`pipeline()`) a command is queued on, if any. */
function batchOf(ctx: RecognizerContext, receiver: Node): Node | undefined {
  let r = unwrap(receiver);
  for (let i = 0; i < 50; i++) {
    if (r.type === "CallExpression") {
      const m = methodName(r);
      if (m && BATCH_METHODS.has(m.toLowerCase())) return r;
      const callee = unwrap(r.callee);
      if (callee.type !== "MemberExpression") return undefined;
      r = unwrap(callee.object);
    } else if (r.type === "Identifier") {
      // A batch held in a variable; most modules make none, and their receivers need no scope lookup.
      return info(ctx).text.batches ? batchHeldIn(ctx, r) : undefined;
    } else return undefined;
  }
  return undefined;
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

interface SetOptions {
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

function tokenOptions(ctx: RecognizerContext, rest: readonly Node[]): SetOptions {
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
function objectOptions(ctx: RecognizerContext, object: TSESTree.ObjectExpression): SetOptions {
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

function scriptKey(ctx: RecognizerContext, args: readonly Node[]): Node | undefined {
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

function scriptText(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const n = unwrap(node);
  if (n.type === "TemplateLiteral" && n.expressions.length > 0) {
    return n.quasis.map((q) => q.value.cooked ?? "").join("ARGV[9]");
  }
  const v = evaluate(ctx.sourceCode, n);
  return typeof v?.value === "string" ? v.value : undefined;
}

/** From the method name to the closing parenthesis: in `redis.multi().setnx(k).expire(k, 9)` each command's own part. */
function commandLoc(call: TSESTree.CallExpression): TSESTree.SourceLocation {
  const callee = unwrap(call.callee);
  const start = callee.type === "MemberExpression" ? callee.property.loc.start : call.loc.start;
  return { start, end: call.loc.end };
}

function replaceCall(ctx: RecognizerContext, call: TSESTree.CallExpression, text: string): TextEdit | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression" || callee.computed) return undefined;
  return { range: [callee.property.range[0], call.range[1]], text };
}

function editsFor(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  command: KvCommand,
  args: readonly Node[],
  dialect: KvDialect,
  options?: SetOptions,
): KvEdits {
  const src = (n: Node) => ctx.sourceCode.getText(n);
  const [key, value] = args;
  const generic = methodName(call)?.toLowerCase();
  if (!key || (generic && GENERIC.has(generic))) return {};
  const edits: { -readonly [K in keyof KvEdits]: KvEdits[K] } = {};
  if (command === "set" && options) {
    edits.addTtl = (ttl, unit) => {
      const object = options.insertAt?.object;
      if (object) {
        const prop = options.insertAt?.v5
          ? `expiration: { type: "${unit}", value: ${ttl} }`
          : `${dialect === "upstash" ? unit.toLowerCase() : unit}: ${ttl}`;
        return appendProperty(ctx.sourceCode, object, prop);
      }
      if (!value) return undefined;
      return { range: [value.range[1], value.range[1]], text: `, "${unit}", ${ttl}` };
    };
  }
  if (command === "setnx" && value) {
    edits.toSetWithTtl = (ttl, unit) => {
      const k = src(key);
      const v = src(value);
      if (dialect === "ioredis") return replaceCall(ctx, call, `set(${k}, ${v}, "${unit}", ${ttl}, "NX")`);
      if (dialect === "upstash")
        return replaceCall(ctx, call, `set(${k}, ${v}, { nx: true, ${unit.toLowerCase()}: ${ttl} })`);
      return replaceCall(ctx, call, `set(${k}, ${v}, { NX: true, ${unit}: ${ttl} })`);
    };
  }
  // Inside a MULTI/pipeline the rewrite would have to be queued too (node-redis multis have no sendCommand).
  const callee = unwrap(call.callee);
  const batched = callee.type === "MemberExpression" && batchOf(ctx, callee.object) !== undefined;
  if (command === "del" && args.length === 1 && !batched) {
    edits.toOwnerCheckedDelete = (token, how) => {
      const k = src(key);
      const lua = JSON.stringify(RELEASE_LUA);
      if (how === "delex") {
        if (dialect === "ioredis") return replaceCall(ctx, call, `call("DELEX", ${k}, "IFEQ", ${token})`);
        if (dialect === "node-redis") return replaceCall(ctx, call, `sendCommand(["DELEX", ${k}, "IFEQ", ${token}])`);
        return undefined;
      }
      if (dialect === "ioredis") return replaceCall(ctx, call, `eval(${lua}, 1, ${k}, ${token})`);
      if (dialect === "upstash") return replaceCall(ctx, call, `eval(${lua}, [${k}], [${token}])`);
      return replaceCall(ctx, call, `eval(${lua}, { keys: [${k}], arguments: [${token}] })`);
    };
  }
  return edits;
}

function constantOf(ctx: RecognizerContext, node: Node | undefined): StaticValue | undefined {
  return node ? evaluate(ctx.sourceCode, node) : undefined;
}

/** `{ ttl: 600_000 }`, `LOCK_TTL_SECONDS`, `{ expiresIn }`: an expiry by its name; anything else is unknown. */
function wrapperTtl(ctx: RecognizerContext, node: Node): TtlPresence {
  const object = objectOf(ctx, node);
  if (object) {
    const named = object.properties.some(
      (p) => p.type === "Property" && WRAPPER_TTL.test(keyName(p.key, p.computed) ?? ""),
    );
    return named ? "present" : "unknown";
  }
  const n = unwrap(node);
  const name =
    n.type === "Identifier" ? n.name : n.type === "MemberExpression" ? keyName(n.property, n.computed) : undefined;
  return name !== undefined && /ttl|expir|timeout|lease/i.test(name) ? "present" : "unknown";
}

function commandOp(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  name: string,
  args: readonly Node[],
  forced: KvDialect | undefined,
): KvOp | undefined {
  const command = COMMANDS[name];
  const key = args[0];
  if (!command || !key || key.type === "SpreadElement") return undefined;
  // A key is a string expression: `.set({ status })` of a query builder, `map.get(obj)` of objects are not Redis.
  const keyType = unwrap(key).type;
  if (
    keyType === "ObjectExpression" ||
    keyType === "ArrayExpression" ||
    keyType === "ArrowFunctionExpression" ||
    keyType === "FunctionExpression" ||
    keyType === "ThisExpression"
  )
    return undefined;
  if ((command === "set" || command === "setnx" || command === "expire") && args.length < 2) return undefined;
  // `delete(key)` is every Map's and Set's: a DEL only on a receiver named as a cache or key-value store.
  if (name === "delete") {
    const callee = unwrap(call.callee);
    const receiver = callee.type === "MemberExpression" ? unwrap(callee.object) : undefined;
    const text = receiver
      ? receiver.type === "MemberExpression"
        ? keyName(receiver.property, receiver.computed)
        : receiver.type === "Identifier"
          ? receiver.name
          : undefined
      : undefined;
    if (!text || !/cache|redis|kv|store/i.test(text)) return undefined;
  }
  const fi = info(ctx);
  const callee = unwrap(call.callee);
  const batch = callee.type === "MemberExpression" ? batchOf(ctx, callee.object) : undefined;
  const base = {
    access: "kv" as const,
    store: "redis",
    client: clientOf(ctx, call),
    key: keyShape(ctx.sourceCode, key),
    keyNode: key,
    node: call,
    loc: commandLoc(call),
    ...(batch ? { batch } : {}),
  };
  switch (command) {
    case "set": {
      const rest = args.slice(2);
      const object = rest.length === 1 ? objectOf(ctx, rest[0]) : undefined;
      const options = object ? objectOptions(ctx, object) : tokenOptions(ctx, rest);
      const dialect = forced ?? options.dialect ?? fi.dialect;
      // GETSET swaps the value in and returns the one it replaced: a plain SET with no options to rewrite.
      if (name === "getset") {
        return {
          ...base,
          dialect,
          command,
          nx: false,
          ttl: "absent",
          swap: true,
          ...(args[1] ? { valueNode: args[1] } : {}),
        };
      }
      return {
        ...base,
        dialect,
        command,
        nx: options.nx,
        ttl: options.ttl,
        ...(options.ttlNode ? { ttlNode: options.ttlNode } : {}),
        ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
        ...(args[1] ? { valueNode: args[1] } : {}),
        ...(constantOf(ctx, args[1]) ? { constantValue: constantOf(ctx, args[1])! } : {}),
        edits: editsFor(ctx, call, command, args, dialect, options),
      };
    }
    case "setnx": {
      // node-redis v4/v5 spells it setNX/SETNX; a lower-case setnx is ioredis, Upstash, or legacy node_redis v3.
      const spelled = methodName(call);
      const dialect: KvDialect =
        forced ??
        (spelled === "setNX" || (spelled === "SETNX" && fi.dialect === "node-redis")
          ? "node-redis"
          : fi.dialect === "upstash"
            ? "upstash"
            : "ioredis");
      // SETNX takes a key and a value (and a callback): more is an application wrapper's, whose expiry is read from
      // the option's name, and is unknown otherwise, never absent.
      const extra = args[2] && !isFunction(unwrap(args[2])) ? args[2] : undefined;
      return {
        ...base,
        dialect,
        command,
        nx: true,
        ttl: extra ? wrapperTtl(ctx, extra) : COMMANDS[name] === "setnx" && name !== "setnx" ? "unknown" : "absent",
        ...(args[1] ? { valueNode: args[1] } : {}),
        ...(constantOf(ctx, args[1]) ? { constantValue: constantOf(ctx, args[1])! } : {}),
        // An application's wrapper has its own methods: no client command to rewrite it into.
        ...(WRAPPER_NAMES.has(name) || extra ? {} : { edits: editsFor(ctx, call, command, args, dialect) }),
      };
    }
    case "expire": {
      const ttl = args[1];
      if (!ttl) return undefined;
      return {
        ...base,
        dialect: forced ?? fi.dialect,
        command,
        nx: false,
        ttl: "present",
        expiry: { node: ttl, unit: EXPIRY_UNIT[name]! },
      };
    }
    case "incr":
    case "decr":
      // Counting: nothing to rewrite, no expiry of its own.
      return { ...base, dialect: forced ?? fi.dialect, command, nx: false, ttl: "absent" };
    case "script":
      return undefined; // handled by scriptOp
    default: {
      const dialect = forced ?? fi.dialect;
      return {
        ...base,
        dialect,
        command,
        nx: false,
        ttl: "absent",
        ...(WRAPPER_NAMES.has(name) ? {} : { edits: editsFor(ctx, call, command, args, dialect) }),
      };
    }
  }
}

const OTHER_SCRIPT: ScriptShape = { kind: "other" };

/** The ARGV (1-based) of a script call, as the JavaScript passes it; undefined when it cannot be told. */
type ArgvAt = (index: number) => Node | undefined;

function scriptOp(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  shape: ScriptShape,
  keyNode: Node | undefined,
  argv: ArgvAt,
): KvOp | undefined {
  if (!keyNode || keyNode.type === "SpreadElement") return undefined;
  const callee = unwrap(call.callee);
  const batch = callee.type === "MemberExpression" ? batchOf(ctx, callee.object) : undefined;
  const base = {
    access: "kv",
    store: "redis",
    client: clientOf(ctx, call),
    dialect: info(ctx).dialect,
    key: keyShape(ctx.sourceCode, keyNode),
    keyNode,
    node: call,
    loc: commandLoc(call),
    ...(batch ? { batch } : {}),
  } as const;
  const acquire = shape.acquire;
  if (shape.kind === "set-if-absent" && acquire) {
    // A Lua set-if-absent is a SET … NX whose value and expiry are the ARGVs the call passes; no client command to
    // rewrite it into.
    const value = acquire.valueArgv !== undefined ? argv(acquire.valueArgv) : undefined;
    const constant = value ? constantOf(ctx, value) : undefined;
    return {
      ...base,
      command: "set",
      nx: true,
      script: "set-if-absent",
      ...argvTtl(ctx, acquire.ttl, argv),
      ...(value ? { valueNode: value } : {}),
      ...(constant ? { constantValue: constant } : {}),
    };
  }
  const token = shape.kind === "compare-and-delete" ? argv(1) : undefined;
  return {
    ...base,
    command: "script",
    nx: false,
    ttl: "absent",
    script: shape.kind === "set-if-absent" ? "other" : shape.kind,
    ...(token ? { valueNode: token } : {}),
  };
}

/**
 * A Lua acquire's expiry as the call gives it. Given only when positive (`if ttl > 0 then … "EX", ttl`), a literal
 * 0 on one path of the argument (`opts.expire ? seconds : 0`, `ttl ?? 0`) leaves the lock without one there.
 */
function argvTtl(
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
function evalArgv(ctx: RecognizerContext, args: readonly Node[]): ArgvAt {
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
function definedArgv(args: readonly Node[], numberOfKeys: number | undefined): ArgvAt {
  return (index) => {
    if (numberOfKeys === undefined) return undefined;
    const at = numberOfKeys + index - 1;
    return args.slice(0, at + 1).every((a) => a.type !== "SpreadElement") ? args[at] : undefined;
  };
}

export const redisRecognizer: Recognizer = {
  store: "redis",
  packages: {
    own: /^(ioredis|redis|@redis\/.+|@upstash\/redis|@vercel\/kv|@types\/ioredis|@types\/redis)$/,
    family: /redis|valkey|upstash|\bkv\b/i,
  },
  methods: METHODS,
  // An acquire is a SET with NX (`"NX"`, `{ NX: true }`, `setnx`, `setNX`, `setIfNotExists`, `setIfAbsent`), a
  // counting semaphore an INCR, a take-over a GETSET; every other command matters only next to one of them.
  evidence: /\bnx\b|setnx|if_?not_?exists?|if_?absent|\bincr|getset/,
  prepare(calls, ctx) {
    // ioredis `defineCommand("releaseLock", { numberOfKeys: 1, lua })`: later `redis.releaseLock(key, token)` calls.
    const fi = info(ctx);
    for (const call of calls) {
      if (methodName(call) !== "defineCommand") continue;
      const name = call.arguments[0] && evaluate(ctx.sourceCode, call.arguments[0]);
      const options = objectOf(ctx, call.arguments[1]);
      if (typeof name?.value !== "string" || !options) continue;
      let lua: string | undefined;
      let numberOfKeys: number | undefined;
      for (const p of options.properties) {
        if (p.type !== "Property") continue;
        const k = keyName(p.key, p.computed);
        if (k === "lua") lua = scriptText(ctx, p.value);
        if (k === "numberOfKeys") {
          const v = evaluate(ctx.sourceCode, p.value);
          if (typeof v?.value === "number") numberOfKeys = v.value;
        }
      }
      fi.defined.set(name.value, { shape: lua === undefined ? OTHER_SCRIPT : classifyScript(lua), numberOfKeys });
    }
    return [...fi.defined.keys()];
  },
  recognize(call, ctx) {
    const method = methodName(call);
    if (!method) return undefined;
    const lower = method.toLowerCase();
    const args = call.arguments;
    const defined = info(ctx).defined.get(method);
    if (defined)
      return scriptOp(
        ctx,
        call,
        defined.shape,
        defined.numberOfKeys === 0 ? undefined : args[0],
        definedArgv(args, defined.numberOfKeys),
      );
    if (GENERIC.has(lower)) {
      // ioredis call("SET", key, …); node-redis sendCommand(["SET", key, …]).
      const list =
        lower === "sendcommand" || lower === "send_command"
          ? args[0] && unwrap(args[0]).type === "ArrayExpression"
            ? (unwrap(args[0]) as TSESTree.ArrayExpression).elements
            : undefined
          : args;
      const head = list?.[0];
      const name = head && head.type !== "SpreadElement" ? evaluate(ctx.sourceCode, head) : undefined;
      if (!list || typeof name?.value !== "string") return undefined;
      const rest = list.slice(1).filter((x): x is TSESTree.Expression | TSESTree.SpreadElement => x !== null);
      const forced: KvDialect = lower === "call" || lower === "callbuffer" ? "ioredis" : "node-redis";
      const cmd = name.value.toLowerCase();
      if (COMMANDS[cmd] === "script") {
        const text = scriptText(ctx, rest[0]);
        return scriptOp(
          ctx,
          call,
          text === undefined ? OTHER_SCRIPT : classifyScript(text),
          rest[2],
          evalArgv(ctx, rest),
        );
      }
      return commandOp(ctx, call, cmd, rest, forced);
    }
    if (COMMANDS[lower] === "script") {
      const text = lower.startsWith("evalsha") ? undefined : scriptText(ctx, args[0]);
      return scriptOp(
        ctx,
        call,
        text === undefined ? OTHER_SCRIPT : classifyScript(text),
        scriptKey(ctx, args),
        evalArgv(ctx, args),
      );
    }
    if (lower === "definecommand") return undefined;
    return commandOp(ctx, call, lower, args, undefined);
  },
};
