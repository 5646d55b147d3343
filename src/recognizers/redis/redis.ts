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
import { appendProperty } from "../../core/reading/edits.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type { KvCommand, KvDialect, KvEdits, KvOp, Node, StaticValue, TextEdit } from "../../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { isFunction } from "../../core/reading/units.js";
import { keyShape } from "../../core/reading/keys.js";
import { classifyScript, type ScriptShape } from "../../core/languages/lua.js";
import { evaluate, keyName, unwrap } from "../../core/reading/values.js";
import { methodName, expressionName } from "../../core/reading/ast.js";
import { COMMANDS, WRAPPER_NAMES, EXPIRY_UNIT, GENERIC, RELEASE_LUA, METHODS, PROMISIFIED_SUFFIX } from "./commands.js";
import { info, clientOf, batchOf } from "./clients.js";
import { objectOf, type SetOptions, tokenOptions, objectOptions, wrapperTtl } from "./options.js";
import { scriptKey, scriptText, OTHER_SCRIPT, type ArgvAt, argvTtl, evalArgv, definedArgv } from "./scripts.js";

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
    const text = receiver ? expressionName(receiver) : undefined;
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
      // SETEX/PSETEX: a SET with its expiry as the first argument (seconds, or milliseconds), never NX.
      if (name === "setex" || name === "psetex") {
        const [ttl, value] = [args[1], args[2]];
        if (!ttl || !value) return undefined;
        const amount = evaluate(ctx.sourceCode, ttl)?.value;
        const ms = typeof amount === "number" ? amount * (name === "setex" ? 1000 : 1) : undefined;
        const constant = constantOf(ctx, value);
        return {
          ...base,
          dialect: forced ?? fi.dialect,
          command,
          nx: false,
          ttl: "present",
          ttlNode: ttl,
          ...(ms !== undefined ? { ttlMs: ms } : {}),
          valueNode: value,
          ...(constant ? { constantValue: constant } : {}),
        };
      }
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
    const called = methodName(call);
    if (!called) return undefined;
    // `getAsync`, `watchAsync`: a promisified client's twin of the command (`PROMISIFIED_SUFFIX`).
    const method =
      called.endsWith(PROMISIFIED_SUFFIX) && METHODS.has(called.slice(0, -PROMISIFIED_SUFFIX.length))
        ? called.slice(0, -PROMISIFIED_SUFFIX.length)
        : called;
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
