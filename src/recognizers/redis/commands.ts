/**
 * Redis: the commands, from each method name the clients and applications' wrappers use to the key-value command it
 * sends (`setnx`, `setNX`, `setIfNotExists`…), and the words of their options, batches and releases.
 */
import type { KvCommand } from "../../core/model/accesses.js";

export const COMMANDS: Record<string, KvCommand> = {
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
  // SETEX key seconds value and PSETEX key ms value: a plain SET with its expiry before the value.
  setex: "set",
  psetex: "set",
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
export const WRAPPER_NAMES = new Set([
  "delete",
  "setifnotexists",
  "setifnotexist",
  "setifabsent",
  "setifnotexistsorget",
]);
/** The expiry an application's set-if-absent wrapper is given: an option or argument named like one. */
export const WRAPPER_TTL = /^(?:ttl|ex|px|expire|expires|expiry|expiresIn|expiration|timeout|lease)/i;
export const EXPIRY_UNIT: Record<string, "EX" | "PX" | "EXAT" | "PXAT"> = {
  expire: "EX",
  pexpire: "PX",
  expireat: "EXAT",
  pexpireat: "PXAT",
};
export const TTL_TOKENS = new Set(["ex", "px", "exat", "pxat"]);
export const BATCH_METHODS = new Set(["multi", "pipeline", "batch"]);
/** A service's accessor for the client it wraps: `getClient()`, `getRedis()`, `client()`. */
export const CLIENT_GETTER = /^(?:get)?(?:client|redis|redisClient|connection)$/i;
export const GENERIC = new Set(["call", "sendcommand", "send_command", "callbuffer"]);
export const RELEASE_LUA = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

/** Every spelling the clients use: `setnx`, `setNX`, `SETNX`, `pExpire`, `sendCommand`… */
export const METHODS = new Set<string>();
for (const name of [...Object.keys(COMMANDS), "call", "sendCommand", "send_command", "callBuffer", "defineCommand"]) {
  METHODS.add(name);
  METHODS.add(name.toUpperCase());
}
for (const name of [
  "setNX",
  "getSet",
  "setEx",
  "pSetEx",
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
/**
 * Bluebird's `promisifyAll(client)`, which the callback-era `redis` client's documentation recommended, gives each
 * command a promise-returning twin named with `Async` (`client.getAsync(key)`, `client.watchAsync(key)`): the same
 * command.
 */
export const PROMISIFIED_SUFFIX = "Async";
for (const name of [...METHODS]) if (/^[a-z]/.test(name)) METHODS.add(`${name}${PROMISIFIED_SUFFIX}`);
