/**
 * Redis: what a module says once (the client it imports, the scripts it defines, whether it makes batches) and the
 * client a command is sent on, through a `multi()`/`pipeline()` batch, a service's client getter or an alias of `this`.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { KvDialect, Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import type { ScriptShape } from "../../core/languages/lua.js";
import { findVariable, getConstInit, keyName, unwrap } from "../../core/reading/values.js";
import { methodName } from "../../core/reading/ast.js";
import { BATCH_METHODS, CLIENT_GETTER } from "./commands.js";

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

export function info(ctx: RecognizerContext): FileInfo {
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

/**
 * The client a command is sent on: the receiver below any multi()/pipeline() chain, `this.` dropped. A batch held in
 * a variable (`const p = redis.pipeline(); p.del(key)`) sends on the client it was made from.
 */
export function clientOf(ctx: RecognizerContext, call: TSESTree.CallExpression): string {
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
export function batchOf(ctx: RecognizerContext, receiver: Node): Node | undefined {
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
