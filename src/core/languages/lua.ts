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

export type ScriptKind = "compare-and-delete" | "compare-and-expire" | "delete" | "other";

type LuaNode = { type: string; [key: string]: unknown };

const cache = new Map<string, ScriptKind>();

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
  if (node.type === "IndexExpression" || node.type === "MemberExpression") return derivesFromValue(node["base"], locals);
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
        else if ((cmd === "pexpire" || cmd === "expire" || cmd === "set") && kind === "other") kind = "compare-and-expire";
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
        if (isNode(clause) && clause.type === "IfClause" && comparesOwner(clause["condition"], locals) &&
          Array.isArray(clause["body"]) && (clause["body"] as unknown[]).some((b) => isNode(b) && b.type === "ReturnStatement")) guarded = true;
      }
    }
  });
  if (deletes && guarded) return "compare-and-delete";
  return deletes ? "delete" : "other";
}

export function classifyScript(source: string): ScriptKind {
  const hit = cache.get(source);
  if (hit) return hit;
  let kind: ScriptKind;
  try {
    luaparse ??= requireFrom("luaparse") as typeof luaparseModule;
    kind = classify(luaparse.parse(source, { luaVersion: "5.1", comments: false, scope: false, locations: false }));
  } catch {
    kind = "other";
  }
  if (cache.size > 500) cache.clear();
  cache.set(source, kind);
  return kind;
}
