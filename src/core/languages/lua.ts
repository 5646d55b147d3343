/**
 * Reads Redis Lua scripts with a real Lua parser (luaparse) to tell what they do to KEYS[n]: a compare-and-delete
 * (`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end`), a compare-and-expire,
 * an unconditional delete, or something else. A script that does not parse is "other": no finding, no crash.
 * The parser is loaded on first use: most modules hold no Lua, and every lint run would pay for loading it.
 */
import { createRequire } from "node:module";
import type luaparseModule from "luaparse";

const requireFrom = createRequire(import.meta.url);
let luaparse: typeof luaparseModule | undefined;

export type ScriptKind = "compare-and-delete" | "compare-and-expire" | "delete" | "set-if-absent" | "other";

/**
 * What a set-if-absent script stores and how it expires, in terms of its ARGV (1-based): the expiry from an ARGV
 * always, or only when that ARGV is positive (`if ttl > 0 then table.insert(args, "EX") … end`), a constant in the
 * script, none at all, or unknown (an expiry under a condition not read).
 */
export interface LuaAcquire {
  readonly valueArgv?: number;
  readonly ttl:
    | { readonly argv: number; readonly unit: "EX" | "PX"; readonly onlyWhenPositive: boolean }
    | "constant"
    | "none"
    | "unknown";
}

export interface ScriptShape {
  readonly kind: ScriptKind;
  readonly acquire?: LuaAcquire;
}

type LuaNode = { type: string; [key: string]: unknown };

const cache = new Map<string, ScriptShape>();

function isNode(x: unknown): x is LuaNode {
  return typeof x === "object" && x !== null && typeof (x as LuaNode).type === "string";
}

function walk(node: unknown, visit: (n: LuaNode) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (!isNode(node)) return;
  visit(node);
  for (const [k, v] of Object.entries(node)) if (k !== "type" && typeof v === "object") walk(v, visit);
}

function stringValue(node: unknown): string | undefined {
  if (!isNode(node) || node.type !== "StringLiteral") return undefined;
  if (typeof node["value"] === "string") return node["value"];
  const raw = node["raw"];
  return typeof raw === "string" ? raw.slice(1, -1) : undefined;
}

/** `redis.call("DEL", …)` / `redis.pcall(…)`: the command name, lower-cased. */
function redisCommand(node: LuaNode): string | undefined {
  if (node.type !== "CallExpression") return undefined;
  const base = node["base"];
  if (!isNode(base) || base.type !== "MemberExpression") return undefined;
  const object = base["base"];
  const member = base["identifier"];
  if (!isNode(object) || object.type !== "Identifier" || object["name"] !== "redis") return undefined;
  if (!isNode(member) || (member["name"] !== "call" && member["name"] !== "pcall")) return undefined;
  const args = node["arguments"];
  return Array.isArray(args) ? stringValue(args[0])?.toLowerCase() : undefined;
}

/**
 * Whether an expression is the key's value or derived from it: the GET itself, a local bound to it
 * (`local current = redis.call("get", KEYS[1])`), a decoding of it (`cjson.decode(current)`, `tonumber(current)`),
 * or a field of one (`decoded["agentId"]`, `decoded.owner`).
 */
function derivesFromValue(node: unknown, locals: ReadonlySet<string>): boolean {
  if (!isNode(node)) return false;
  if (["get", "hget"].includes(redisCommand(node) ?? "")) return true;
  if (node.type === "Identifier") return locals.has(String(node["name"]));
  if (node.type === "IndexExpression" || node.type === "MemberExpression")
    return derivesFromValue(node["base"], locals);
  if (node.type === "CallExpression") {
    const args = node["arguments"];
    return Array.isArray(args) && args.some((a) => derivesFromValue(a, locals));
  }
  return false;
}

/** The locals a script binds to the key's value or to something derived from it, in order of binding. */
function valueLocals(chunk: unknown): Set<string> {
  const locals = new Set<string>();
  walk(chunk, (n) => {
    if (n.type !== "LocalStatement" && n.type !== "AssignmentStatement") return;
    const vars = n["variables"];
    const init = n["init"];
    if (!Array.isArray(vars) || !Array.isArray(init)) return;
    vars.forEach((v, i) => {
      if (isNode(v) && v.type === "Identifier" && derivesFromValue(init[i], locals)) locals.add(String(v["name"]));
    });
  });
  return locals;
}

/** An `==` / `~=` comparison of the key's value (or something derived from it) with something else. */
function comparesOwner(condition: unknown, locals: ReadonlySet<string>): boolean {
  let found = false;
  walk(condition, (n) => {
    if (n.type !== "BinaryExpression" || (n["operator"] !== "==" && n["operator"] !== "~=")) return;
    if ([n["left"], n["right"]].some((side) => derivesFromValue(side, locals))) found = true;
  });
  return found;
}

function classify(chunk: unknown): ScriptKind {
  const locals = valueLocals(chunk);
  let kind: ScriptKind = "other";
  let deletes = false;
  walk(chunk, (n) => {
    if (n.type !== "IfStatement") return;
    const clauses = n["clauses"];
    if (!Array.isArray(clauses)) return;
    for (const clause of clauses) {
      if (!isNode(clause) || clause.type !== "IfClause" || !comparesOwner(clause["condition"], locals)) continue;
      walk(clause["body"], (m) => {
        const cmd = redisCommand(m);
        if (cmd === "del" || cmd === "unlink") kind = "compare-and-delete";
        else if ((cmd === "pexpire" || cmd === "expire" || cmd === "set") && kind === "other")
          kind = "compare-and-expire";
      });
    }
  });
  if (kind !== "other") return kind;
  // `if redis.call("get", KEYS[1]) ~= ARGV[1] then return 0 end return redis.call("del", KEYS[1])`: the check
  // guards the delete by returning early.
  let guarded = false;
  walk(chunk, (n) => {
    const cmd = redisCommand(n);
    if (cmd === "del" || cmd === "unlink") deletes = true;
    if (n.type === "IfStatement" && Array.isArray(n["clauses"])) {
      for (const clause of n["clauses"] as unknown[]) {
        if (
          isNode(clause) &&
          clause.type === "IfClause" &&
          comparesOwner(clause["condition"], locals) &&
          Array.isArray(clause["body"]) &&
          (clause["body"] as unknown[]).some((b) => isNode(b) && b.type === "ReturnStatement")
        )
          guarded = true;
      }
    }
  });
  if (deletes && guarded) return "compare-and-delete";
  return deletes ? "delete" : "other";
}

/** What a local or an argument is: KEYS[n] or ARGV[n] (through `tonumber`), a string token, a number, or unknown. */
type Ref = { keys: number } | { argv: number } | { token: string } | { number: number } | undefined;

/** The argument of a SET or SETNX, with the condition that guards it when it was added to a table under an `if`. */
interface Arg {
  readonly ref: Ref;
  readonly when?: unknown;
}

function refOf(node: unknown, locals: ReadonlyMap<string, Ref>): Ref {
  if (!isNode(node)) return undefined;
  if (node.type === "StringLiteral") {
    const v = stringValue(node);
    return v === undefined ? undefined : { token: v.toUpperCase() };
  }
  if (node.type === "NumericLiteral" && typeof node["value"] === "number") return { number: node["value"] };
  if (node.type === "Identifier") return locals.get(String(node["name"]));
  if (node.type === "IndexExpression") {
    const base = node["base"];
    const index = node["index"];
    if (
      isNode(base) &&
      base.type === "Identifier" &&
      isNode(index) &&
      index.type === "NumericLiteral" &&
      typeof index["value"] === "number"
    ) {
      if (base["name"] === "KEYS") return { keys: index["value"] };
      if (base["name"] === "ARGV") return { argv: index["value"] };
    }
    return undefined;
  }
  if (node.type === "CallExpression") {
    const base = node["base"];
    const args = node["arguments"];
    if (
      isNode(base) &&
      base.type === "Identifier" &&
      base["name"] === "tonumber" &&
      Array.isArray(args) &&
      args.length === 1
    )
      return refOf(args[0], locals);
  }
  return undefined;
}

/** `ttl > 0`, `0 < ttl`, `ttl >= 1`: the condition that the ARGV behind `ttl` is positive. */
function positiveTest(condition: unknown, locals: ReadonlyMap<string, Ref>): number | undefined {
  if (!isNode(condition) || condition.type !== "BinaryExpression") return undefined;
  const l = refOf(condition["left"], locals);
  const r = refOf(condition["right"], locals);
  const op = condition["operator"];
  const argv = (x: Ref) => (x && "argv" in x ? x.argv : undefined);
  const num = (x: Ref) => (x && "number" in x ? x.number : undefined);
  if (argv(l) !== undefined && ((op === ">" && num(r) === 0) || (op === ">=" && num(r) === 1))) return argv(l);
  if (argv(r) !== undefined && ((op === "<" && num(l) === 0) || (op === "<=" && num(l) === 1))) return argv(r);
  return undefined;
}

/**
 * The script's first set-if-absent of a key: `SET KEYS[1] ARGV[1] NX [PX ARGV[2]]`, the same built in a table and
 * sent with `unpack` (its expiry added under an `if`), or `SETNX` followed by an `EXPIRE`/`PEXPIRE` of the key.
 * A script is atomic, so an expiry anywhere after the SETNX in it is part of the acquire.
 */
function acquireOf(chunk: unknown): LuaAcquire | undefined {
  const locals = new Map<string, Ref>();
  const tables = new Map<string, Arg[]>();
  let found: { args: readonly Arg[]; setnx: boolean } | undefined;
  let expireAfter: { cmd: string; args: readonly Arg[]; when?: unknown } | undefined;
  const argsOf = (call: LuaNode, when: unknown): Arg[] | undefined => {
    const list = call["arguments"];
    if (!Array.isArray(list)) return undefined;
    const rest = list.slice(1);
    if (rest.length === 1 && isNode(rest[0]) && rest[0].type === "CallExpression") {
      const base = rest[0]["base"];
      const unpack =
        isNode(base) &&
        ((base.type === "Identifier" && base["name"] === "unpack") ||
          (base.type === "MemberExpression" && isNode(base["identifier"]) && base["identifier"]["name"] === "unpack"));
      const inner = rest[0]["arguments"];
      if (!unpack || !Array.isArray(inner) || !isNode(inner[0]) || inner[0].type !== "Identifier") return undefined;
      return tables.get(String(inner[0]["name"]));
    }
    return rest.map((a) => ({ ref: refOf(a, locals), ...(when ? { when } : {}) }));
  };
  const visit = (node: unknown, when: unknown): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n, when);
      return;
    }
    if (!isNode(node)) return;
    if (node.type === "IfStatement" && Array.isArray(node["clauses"])) {
      for (const clause of node["clauses"] as unknown[]) {
        if (!isNode(clause)) continue;
        // The first clause's test runs on every run; a later one's only when the earlier ones failed.
        if (clause.type === "IfClause") visit(clause["condition"], when);
        else if (clause.type === "ElseifClause") visit(clause["condition"], when ?? clause);
        visit(clause["body"], clause.type === "IfClause" && !when ? clause["condition"] : (when ?? clause));
      }
      return;
    }
    if (node.type === "LocalStatement" || node.type === "AssignmentStatement") {
      const vars = node["variables"];
      const init = node["init"];
      if (Array.isArray(vars) && Array.isArray(init)) {
        vars.forEach((v, i) => {
          if (!isNode(v) || v.type !== "Identifier") return;
          const name = String(v["name"]);
          const value = init[i];
          if (isNode(value) && value.type === "TableConstructorExpression" && Array.isArray(value["fields"])) {
            tables.set(
              name,
              (value["fields"] as unknown[]).map((f) => ({
                ref: isNode(f) && f.type === "TableValue" ? refOf(f["value"], locals) : undefined,
              })),
            );
          } else {
            tables.delete(name);
            if (!when) locals.set(name, refOf(value, locals));
            else locals.delete(name);
          }
        });
      }
    }
    if (node.type === "CallExpression") {
      const base = node["base"];
      const args = node["arguments"];
      // table.insert(t, x): an argument added to the table, under the condition the insert runs in.
      if (
        isNode(base) &&
        base.type === "MemberExpression" &&
        isNode(base["base"]) &&
        base["base"]["name"] === "table" &&
        isNode(base["identifier"]) &&
        base["identifier"]["name"] === "insert" &&
        Array.isArray(args) &&
        args.length === 2 &&
        isNode(args[0]) &&
        args[0].type === "Identifier"
      ) {
        tables.get(String(args[0]["name"]))?.push({ ref: refOf(args[1], locals), ...(when ? { when } : {}) });
      }
      const cmd = redisCommand(node);
      // Only a set-if-absent every run of the script makes: one under an `if` is a re-entry or a renewal.
      if (!found && !when && (cmd === "set" || cmd === "setnx")) {
        const list = argsOf(node, when);
        if (
          list &&
          list[0]?.ref &&
          "keys" in list[0].ref &&
          !list[0].when &&
          (cmd === "setnx" || list.some((a) => a.ref && "token" in a.ref && a.ref.token === "NX" && !a.when))
        )
          found = { args: list, setnx: cmd === "setnx" };
      } else if (found && !expireAfter && (cmd === "expire" || cmd === "pexpire")) {
        const list = argsOf(node, when);
        if (list) expireAfter = { cmd, args: list, when };
      }
    }
    for (const [k, v] of Object.entries(node)) if (k !== "type" && typeof v === "object") visit(v, when);
  };
  visit(chunk, undefined);
  if (!found) return undefined;
  const value = found.args[1]?.ref;
  const valueArgv = value && "argv" in value ? { valueArgv: value.argv } : {};
  const ttlFrom = (unit: "EX" | "PX", arg: Arg | undefined, when: unknown): LuaAcquire["ttl"] => {
    const ref = arg?.ref;
    if (ref && "number" in ref) return ref.number > 0 && !when ? "constant" : "unknown";
    if (!ref || !("argv" in ref)) return "unknown";
    if (!when) return { argv: ref.argv, unit, onlyWhenPositive: false };
    return positiveTest(when, locals) === ref.argv ? { argv: ref.argv, unit, onlyWhenPositive: true } : "unknown";
  };
  if (!found.setnx) {
    const at = found.args.findIndex((a) => a.ref && "token" in a.ref && (a.ref.token === "EX" || a.ref.token === "PX"));
    if (at >= 0) {
      const token = found.args[at]!;
      return {
        ...valueArgv,
        ttl: ttlFrom(
          (token.ref as { token: "EX" | "PX" }).token,
          found.args[at + 1],
          token.when ?? found.args[at + 1]?.when,
        ),
      };
    }
    // Other options (`KEEPTTL`, `EXAT`, a token not read): unknown, never absent.
    if (
      found.args.slice(2).some((a) => !(a.ref && "token" in a.ref && (a.ref.token === "NX" || a.ref.token === "GET")))
    )
      return { ...valueArgv, ttl: "unknown" };
  }
  if (expireAfter)
    return {
      ...valueArgv,
      ttl: ttlFrom(expireAfter.cmd === "pexpire" ? "PX" : "EX", expireAfter.args[1], expireAfter.when),
    };
  return { ...valueArgv, ttl: "none" };
}

export function classifyScript(source: string): ScriptShape {
  const hit = cache.get(source);
  if (hit) return hit;
  let shape: ScriptShape;
  try {
    luaparse ??= requireFrom("luaparse") as typeof luaparseModule;
    const chunk = luaparse.parse(source, { luaVersion: "5.1", comments: false, scope: false, locations: false });
    // A script that first sets the key if absent is an acquire, whatever its re-entrant branch then does (`if
    // redis.call("get", KEYS[1]) == ARGV[1] then … "XX" …`); a compare-and-delete stays a release.
    const kind = classify(chunk);
    const acquire = kind === "compare-and-delete" || kind === "delete" ? undefined : acquireOf(chunk);
    shape = acquire ? { kind: "set-if-absent", acquire } : { kind };
  } catch {
    shape = { kind: "other" };
  }
  if (cache.size > 500) cache.clear();
  cache.set(source, shape);
  return shape;
}
