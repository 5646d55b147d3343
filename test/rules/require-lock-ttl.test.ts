import rule from "../../rules/require-lock-ttl.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { SEAT_HOLD } from "./lease-lock.js";

/** How the rule names the acquiring command in its messages. */
const SET_NX = "SET … NX";
const SETNX = "SETNX";

/** A lock taken with no expiry at all; `suggestion` is the code after `addTtl`, or null when none is offered. */
const missing = (line: number, column: number, command: string, key: string, suggestion: string | null) => ({
  messageId: "missingTtl" as const,
  line,
  column,
  data: { command, key },
  suggestions: suggestion === null ? [] : [{ messageId: "addTtl" as const, output: suggestion }],
});

interface Expire {
  readonly expireCommand: string;
  readonly unit: string;
  readonly ttl: string;
  readonly expireLine: number;
}

const separateData = (command: string, key: string, e: Expire) => ({
  command,
  key,
  expireCommand: e.expireCommand,
  unit: e.unit,
  ttl: e.ttl,
  expireLine: String(e.expireLine),
});

/** SETNX then EXPIRE fixed automatically: the case carries `output`, the error has no suggestion. */
const separateFixed = (line: number, column: number, command: string, key: string, e: Expire) => ({
  messageId: "separateExpire" as const,
  line,
  column,
  data: separateData(command, key, e),
  suggestions: [],
});

/** SETNX then EXPIRE offered as a suggestion (`suggestion` is its output), or nothing when null. */
const separateSuggested = (
  line: number,
  column: number,
  command: string,
  key: string,
  e: Expire,
  suggestion: string | null,
  suggestionId: "mergeExpire" | "expireInAcquire" = "mergeExpire",
) => {
  const data = separateData(command, key, e);
  return {
    messageId: "separateExpire" as const,
    line,
    column,
    data,
    suggestions: suggestion === null ? [] : [{ messageId: suggestionId, data, output: suggestion }],
  };
};

/** The TTL exists on some paths only; no edit is offered (the right default is the author's call). */
const conditional = (line: number, column: number, command: string, key: string) => ({
  messageId: "conditionalTtl" as const,
  line,
  column,
  data: { command, key },
  suggestions: [],
});

/** An ioredis command defined from Lua that sets the key if absent, with an expiry only when ARGV[2] is positive. */
const LUA_ACQUIRE = `import Redis from "ioredis";
const redis = new Redis();
redis.defineCommand("takeSlot", {
  numberOfKeys: 1,
  lua: \`
    local ttl = tonumber(ARGV[2])
    local args = {KEYS[1], ARGV[1], "NX"}
    if ttl > 0 then
      table.insert(args, "EX")
      table.insert(args, ttl)
    end
    if redis.call("SET", unpack(args)) then return 1 end
    if redis.call("GET", KEYS[1]) == ARGV[1] then return 1 end
    return 0
  \`,
});
redis.defineCommand("giveSlot", {
  numberOfKeys: 1,
  lua: 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0',
});`;

/** A render-slot semaphore: INCR against a bound, DECR in release; `extra` goes into `takeSlot` after the INCR. */
const renderSlots = (extra = "") => `import Redis from "ioredis";
const redis = new Redis();
const MAX_RENDERS = 4;
export async function takeSlot(): Promise<boolean> {
  const inUse = await redis.incr("render:slots");${extra}
  if (inUse > MAX_RENDERS) {
    await redis.decr("render:slots");
    return false;
  }
  return true;
}
export async function giveSlot(): Promise<void> {
  await redis.decr("render:slots");
}`;

ruleTester.run("require-lock-ttl", rule, {
  valid: [
    // SETEX key seconds value (node-redis setEx) gives the lock its expiry, as SET … EX does
    SEAT_HOLD,
    {
      // The same call on a parameter of unknown type is read as Redis (the consumer test's type-aware case).
      name: "lookalike: a Map the module builds is never a Redis client, whatever its set is handed",
      code: `const memo = new Map();
export function lockLocal(id) {
  return memo.set(\`lock:local:\${id}\`, "1", "NX");
}`,
    },
    {
      name: "a semaphore whose counter expires: dead holders' slots come back when it resets",
      code: renderSlots('\n  await redis.expire("render:slots", 600);'),
    },
    {
      name: "lookalike: a rate limiter counts against a bound but gives nothing back",
      code: `export async function allow(redis: Redis, ip: string) {
  const hits = await redis.incr(\`rate:\${ip}\`);
  if (hits === 1) await redis.expire(\`rate:\${ip}\`, 60);
  return hits <= 100;
}`,
    },
    {
      name: "lookalike: a counter decremented only to roll back a refused increment is no semaphore",
      code: `export async function reserveSeat(redis: Redis, show: string, seats: number) {
  const sold = await redis.incr(\`sold:\${show}\`);
  if (sold > seats) {
    await redis.decr(\`sold:\${show}\`);
    return false;
  }
  return true;
}`,
    },
    {
      // the Lua acquire's expiry is the ARGV the call passes: a positive constant always gives one
      name: "a Lua set-if-absent called with a positive expiry",
      code: `${LUA_ACQUIRE}
export async function withSlot(id: string, owner: string, work: () => Promise<void>) {
  if ((await redis.takeSlot(\`slot-lock:\${id}\`, owner, 30)) !== 1) return;
  try { await work(); } finally { await redis.giveSlot(\`slot-lock:\${id}\`, owner); }
}`,
    },
    {
      // an EVAL whose script sets with NX and PX from ARGV[2], handed a value the rule cannot read: given, not missing
      name: "an EVAL set-if-absent with its expiry from the call",
      code: `import Redis from "ioredis";
const redis = new Redis();
const ACQUIRE = 'return redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2])';
export async function lockJob(id: string, token: string, leaseMs: number) {
  return redis.eval(ACQUIRE, 1, \`job-lock:\${id}\`, token, leaseMs);
}
export async function unlockJob(id: string) {
  await redis.del(\`job-lock:\${id}\`);
}`,
    },
    {
      // a cache filled on a miss reads, tests and sets, but compares nothing with what it stores: not a lock
      name: "cache-aside: GET, return on a hit, SET",
      code: `export class Profiles {
  constructor(private readonly cache: CacheService, private readonly db: Db) {}
  async get(id: string) {
    const cached = await this.cache.get(\`profile-lock:\${id}\`);
    if (cached) return cached;
    const profile = await this.db.profile(id);
    await this.cache.set(\`profile-lock:\${id}\`, profile);
    return profile;
  }
}`,
    },
    {
      // an application cache service's set-if-absent: an option under a name it defines is an expiry; one nobody
      // knows (`retention`) may be one, so the expiry is unknown, never absent
      name: "a cache service's setnx with its own expiry options, released in finally",
      code: `export class Jobs {
  constructor(private readonly cache: CacheService) {}
  async a(id: string) {
    if (!(await this.cache.setnx(\`lock:a:\${id}\`, 1, { ttl: 60_000 }))) return;
    try { await this.run(id); } finally { await this.cache.delete(\`lock:a:\${id}\`); }
  }
  async b(id: string) {
    if (!(await this.cache.setnx(\`lock:b:\${id}\`, 1, { retention: 60 }))) return;
    try { await this.run(id); } finally { await this.cache.delete(\`lock:b:\${id}\`); }
  }
  async c(id: string) {
    if (!(await this.cache.setIfNotExists(\`lock:c:\${id}\`, 1))) return;
    try { await this.run(id); } finally { await this.cache.delete(\`lock:c:\${id}\`); }
  }
}`,
    },
    // Redlock with a duration a little longer than the work, and a Redis lock whose expiry is a day: both expire
    `import Redlock from "redlock";
const redlock = new Redlock([redis]);
export async function grab(seat: string) {
  const lock = await redlock.acquire([\`seat:\${seat}\`], 30_000);
  try { await book(seat); } finally { await lock.release(); }
}`,
    `import Redis from "ioredis";
const redis = new Redis();
export async function nightly(token: string) {
  if ((await redis.set("lock:nightly-report", token, "NX", "EX", 24 * 60 * 60)) !== "OK") return;
  await buildReport();
}`,
    // a timestamp-valued lock (the old SETNX recipe) is taken over once its instant has passed: a holder that died
    // before its EXPIRE does not wedge it (the take-over's race is owner-checked-release's finding)
    `export async function enqueueOnce(redis: Redis, key: string, timeoutSec: number) {
  const now = Math.round(new Date().getTime() / 1000);
  const until = now + timeoutSec + 1;
  if (await redis.setnx(key, until)) {
    await redis.expire(key, timeoutSec);
    return true;
  }
  const stored = await redis.get(key);
  if (now <= (stored ? parseInt(stored) : 0)) return false;
  await redis.set(key, until);
  return true;
}
export async function done(redis: Redis, key: string) { await redis.del(key); }`,
    // the same recipe written with callbacks and GETSET, on `self` (this): the take-over answers Q1
    {
      name: "a timestamp lock taken over with GETSET in node-style callbacks",
      code: `function Engine(redis) { this._redis = redis; }
Engine.prototype.withLock = function (name, timeoutSec, callback) {
  var key = "locks/" + name, now = new Date().getTime(), expiry = now + timeoutSec * 1000 + 1, self = this;
  this._redis.setnx(key, expiry, function (error, set) {
    if (set === 1) return callback();
    self._redis.get(key, function (error, timeout) {
      if (!timeout) return;
      var stored = parseInt(timeout, 10);
      if (now < stored) return;
      self._redis.getset(key, expiry, function (error, old) {
        if (old !== timeout) return;
        callback();
      });
    });
  });
};`,
      languageOptions: javascript,
    },
    // an app's own Redis service takes its expiry under a name no client defines (\`ttlSec\`): the expiry is unknown,
    // not missing, so nothing is reported on a guess
    `export class ExpireTask {
  constructor(private readonly redis: RedisService) {}
  async handle() {
    const got = await this.redis.set("lock:expire-holds", "1", { ttlSec: 55, nx: true });
    if (!got) return;
    try { await expireHolds(); } finally { await this.redis.del("lock:expire-holds"); }
  }
}`,
    // the wrapper itself: \`this.set\` with its own options, inside the service
    `export class RedisService {
  async acquireLock(key: string, token: string, ttlSec: number) {
    const ok = await this.set(key, token, { ttlSec, nx: true });
    return ok === "OK";
  }
  async releaseLock(key: string) { await this.del(key); }
}`,
    // a run-once marker per day (never released, not named like a lock) is not a lock: no expiry needed to unwedge
    `import { kv } from "@vercel/kv";
export async function runCronOnce(day: string) {
  const fresh = await kv.setnx(\`cron:daily:\${day}\`, 1);
  if (!fresh) return;
  await sendDigest();
}`,
    // ioredis: SET NX with PX in the same command
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(id: string, token: string) {
      return (await redis.set(\`lock:\${id}\`, token, "PX", 30_000, "NX")) === "OK";
    }`,
    // ioredis: NX before EX is the same command
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(id: string, token: string) {
      return redis.set("lock:" + id, token, "NX", "EX", 10);
    }`,
    // the TTL is a variable: present
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(key: string, token: string, ttlMs: number) {
      return redis.set(key, token, "PX", ttlMs, "NX");
    }`,
    // an optional TTL with a default, or defaulted at the call: always present
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function withLock(key: string, ttlMs = 30_000) {
      return redis.set(key, "1", "PX", ttlMs, "NX");
    }
    export async function takeLock(key: string, ttlMs?: number) {
      return redis.set(key, "1", "PX", ttlMs ?? 30_000, "NX");
    }`,
    // idempotency key: SET NX with a TTL
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function handleWebhook(eventId: string) {
      const first = await redis.set(\`idempotency:\${eventId}\`, "1", "EX", 86_400, "NX");
      if (!first) return;
      await process(eventId);
    }`,
    // cache fill: SET NX with a TTL
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function fill(id: string, json: string) {
      await redis.set(\`cache:user:\${id}\`, json, "EX", 60, "NX");
    }`,
    // plain SET/GET caching
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function cached(id: string) {
      const hit = await redis.get(\`cache:\${id}\`);
      if (hit) return JSON.parse(hit);
      const value = await load(id);
      await redis.set(\`cache:\${id}\`, JSON.stringify(value));
      return value;
    }`,
    // XX is not an acquire
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function refreshLock(key: string, token: string) {
      await redis.set(key, token, "XX");
    }`,
    {
      // queued in one MULTI held in a reassigned var: the SETNX and its EXPIRE are sent together
      name: "SETNX and EXPIRE in one MULTI held in a var that is later given a new MULTI",
      code: `var client = require("./redis-client");
function request(id, callback) {
  var multi = client.multi();
  multi.SETNX("sync:lease:" + id, "1");
  multi.EXPIRE("sync:lease:" + id, 60);
  multi.exec(function (err, replies) {
    multi = client.multi();
    multi.SADD("sync:active", id);
    multi.exec(callback);
  });
}
function release(id, callback) { client.DEL("sync:lease:" + id, callback); }`,
      languageOptions: javascript,
    },
    // SETNX + EXPIRE queued in one multi() chain: sent together
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(id: string) {
      const [[, ok]] = await redis.multi().setnx(\`lock:\${id}\`, "1").expire(\`lock:\${id}\`, 30).exec();
      return ok === 1;
    }`,
    // SETNX + EXPIRE queued on one pipeline held in a variable
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(lockKey: string) {
      const p = redis.pipeline();
      p.setnx(lockKey, "1");
      p.pexpire(lockKey, 5000);
      await p.exec();
    }`,
    // node-redis multi chain and multi variable
    `
    import { createClient } from "redis";
    const client = createClient();
    export async function acquireLock(name: string) {
      await client.multi().setNX(\`lock:\${name}\`, "1").expire(\`lock:\${name}\`, 60).exec();
    }
    export async function acquireMutex(name: string) {
      const tx = client.multi();
      tx.setNX(\`mutex:\${name}\`, "1");
      tx.expire(\`mutex:\${name}\`, 60);
      await tx.exec();
    }`,
    // rate-limit counter: INCR + EXPIRE, no acquire
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function rateLimit(ip: string) {
      const n = await redis.incr(\`rate:\${ip}\`);
      if (n === 1) await redis.expire(\`rate:\${ip}\`, 60);
      return n <= 100;
    }`,
    // Map#set, cookies, URLSearchParams: not Redis
    `
    const locks = new Map<string, boolean>();
    export function lockLocally(id: string, res: any, params: URLSearchParams) {
      locks.set(\`lock:\${id}\`, true);
      res.cookies.set("lock", "1", { httpOnly: true });
      params.set("lock", "NX");
    }`,
    // Redlock
    `
    import Redlock from "redlock";
    const redlock = new Redlock([redis]);
    export async function withLock(id: string) {
      const lock = await redlock.acquire([\`lock:\${id}\`], 5000);
      try { await work(id); } finally { await lock.release(); }
    }`,
    // redis-semaphore
    `
    import { Mutex } from "redis-semaphore";
    export async function exclusive(redis: any, key: string) {
      const mutex = new Mutex(redis, key);
      await mutex.acquire();
      try { await work(); } finally { await mutex.release(); }
    }`,
    // node-redis v5: NX condition with an expiration object
    `
    import { createClient } from "redis";
    const client = createClient();
    export async function acquireLock(key: string, token: string) {
      return client.set(key, token, { condition: "NX", expiration: { type: "PX", value: 5000 } });
    }`,
    // node-redis v4 option object, inline and through a const
    `
    import { createClient } from "redis";
    const client = createClient();
    const LOCK_OPTIONS = { NX: true, PX: 10_000 } as const;
    export async function acquireLock(key: string, token: string) {
      await client.set(key, token, { NX: true, EX: 30 });
      return client.set(key, token, LOCK_OPTIONS);
    }`,
    // Upstash and @vercel/kv with an expiry
    `
    import { Redis } from "@upstash/redis";
    const redis = Redis.fromEnv();
    export async function acquireLock(id: string, token: string) {
      return redis.set(\`lock:\${id}\`, token, { nx: true, ex: 10 });
    }`,
    `
    import { kv } from "@vercel/kv";
    export async function acquireLease(shard: string, owner: string, ttlMs: number) {
      return kv.set(\`lease:\${shard}\`, owner, { nx: true, px: ttlMs });
    }`,
    // Upstash pipeline: SETNX and EXPIRE sent together
    `
    import { Redis } from "@upstash/redis";
    const redis = Redis.fromEnv();
    export async function acquireLock(id: string) {
      const p = redis.pipeline();
      p.setnx(\`lock:\${id}\`, 1);
      p.expire(\`lock:\${id}\`, 30);
      await p.exec();
    }`,
    // an idempotency SETNX marker that is never deleted and not lock-named
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function handleOnce(eventId: string) {
      const fresh = await redis.setnx(\`processed:\${eventId}\`, "1");
      if (!fresh) return;
      await handle(eventId);
    }`,
    // SET NX on a key that is neither lock-named nor deleted here
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function markSynced(accountId: string) {
      await redis.set(\`sync:\${accountId}\`, "1", "NX");
    }`,
    // generic commands with an expiry
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(lockKey: string, token: string) {
      return redis.call("SET", lockKey, token, "PX", 30000, "NX");
    }`,
    `
    import { createClient } from "redis";
    const client = createClient();
    export async function acquireLock(lockKey: string, token: string) {
      return client.sendCommand(["SET", lockKey, token, "NX", "EX", "30"]);
    }`,
    // class service with a TTL field
    `
    import type { Redis } from "ioredis";
    export class LockService {
      private readonly ttlMs = 15_000;
      constructor(private readonly redis: Redis) {}
      async acquire(id: string, token: string) {
        return this.redis.set(\`lock:\${id}\`, token, "PX", this.ttlMs, "NX");
      }
    }`,
    // options read from a spread nobody can see: not judged
    `
    import Redis from "ioredis";
    const redis = new Redis();
    export async function acquireLock(key: string, token: string, ...extra: string[]) {
      return redis.set(key, token, "NX", ...extra);
    }`,
    // plain JS, .then, SET NX PX
    {
      code: `
      const Redis = require("ioredis");
      const redis = new Redis();
      function tryLock(name, token) {
        return redis.set("lock:" + name, token, "PX", 5000, "NX").then((r) => r === "OK");
      }
      module.exports = { tryLock };`,
      languageOptions: javascript,
    },
    // plain JS class: SETNX + EXPIRE in one multi chain
    {
      code: `
      class Scheduler {
        constructor(redis) { this.redis = redis; }
        async becomeLeader(id) {
          const res = await this.redis.multi().setnx("leader", id).expire("leader", 15).exec();
          return res[0][1] === 1;
        }
      }
      module.exports = { Scheduler };`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "a semaphore in one counter with no expiry: a holder that dies keeps its slot",
      code: renderSlots(),
      errors: [
        { messageId: "semaphoreNoExpiry", line: 5, column: 29, data: { key: '"render:slots"', releaseLine: "13" } },
      ],
    },
    {
      // "regenerate" holds the letters of "rate" but is no rate-limit key: the lock (released in finally) is a lock
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function regenerate(token: string) {
  if ((await redis.set("regenerate:sitemap", token, "NX")) !== "OK") return;
  try { await buildSitemap(); } finally { await redis.del("regenerate:sitemap"); }
}`,
      errors: [
        missing(
          4,
          20,
          SET_NX,
          '"regenerate:sitemap"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function regenerate(token: string) {
  if ((await redis.set("regenerate:sitemap", token, "PX", 30_000, "NX")) !== "OK") return;
  try { await buildSitemap(); } finally { await redis.del("regenerate:sitemap"); }
}`,
        ),
      ],
    },
    {
      // Redlock asked for a lock that "never" expires: Number.MAX_SAFE_INTEGER ms, 285,000 years
      code: `import Redlock from "redlock";
const redlock = new Redlock([redis]);
export async function grab(room: string, item: string) {
  const lock = await redlock.acquire(
    [grabKey(room, item)],
    Number.MAX_SAFE_INTEGER,
  );
  holders.set(item, lock);
}`,
      errors: [
        {
          messageId: "neverExpires",
          line: 4,
          column: 22,
          data: { command: "Redlock acquire", key: "`grabKey(room, item)`", ttl: "Number.MAX_SAFE_INTEGER" },
        },
      ],
    },
    {
      // a Redis lock whose expiry is ten years: none in practice
      code: `import Redis from "ioredis";
const redis = new Redis();
const TEN_YEARS = 10 * 365 * 24 * 60 * 60;
export async function migrate(token: string) {
  if ((await redis.set("lock:migrate", token, "NX", "EX", TEN_YEARS)) !== "OK") return;
  try { await runMigrations(); } finally { await redis.del("lock:migrate"); }
}`,
      errors: [
        {
          messageId: "neverExpires",
          line: 5,
          column: 20,
          data: { command: "SET … NX", key: '"lock:migrate"', ttl: "TEN_YEARS" },
        },
      ],
    },
    // ---- missingTtl --------------------------------------------------------------------------------------
    {
      // ioredis SET NX, template key
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(id: string, token: string) {
  const ok = await redis.set(\`lock:\${id}\`, token, "NX");
  return ok === "OK";
}`,
      errors: [
        missing(
          4,
          26,
          SET_NX,
          '"lock:*"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(id: string, token: string) {
  const ok = await redis.set(\`lock:\${id}\`, token, "PX", 30_000, "NX");
  return ok === "OK";
}`,
        ),
      ],
    },
    {
      // ioredis SETNX in a class service (this.redis), key named by a lock-named const
      code: `import type { Redis } from "ioredis";
export class JobLocks {
  constructor(private readonly redis: Redis) {}
  async tryLock(jobId: string): Promise<boolean> {
    const lockKey = \`jobs:\${jobId}:lock\`;
    const got = await this.redis.setnx(lockKey, process.pid.toString());
    return got === 1;
  }
}`,
      errors: [
        missing(
          6,
          34,
          SETNX,
          '"jobs:*:lock"',
          `import type { Redis } from "ioredis";
export class JobLocks {
  constructor(private readonly redis: Redis) {}
  async tryLock(jobId: string): Promise<boolean> {
    const lockKey = \`jobs:\${jobId}:lock\`;
    const got = await this.redis.set(lockKey, process.pid.toString(), "PX", 30_000, "NX");
    return got === "OK";
  }
}`,
        ),
      ],
    },
    {
      // node-redis v4 option object
      code: `import { createClient } from "redis";
const client = createClient();
export async function acquireMutex(name: string, owner: string) {
  return client.set(\`mutex:\${name}\`, owner, { NX: true });
}`,
      errors: [
        missing(
          4,
          17,
          SET_NX,
          '"mutex:*"',
          `import { createClient } from "redis";
const client = createClient();
export async function acquireMutex(name: string, owner: string) {
  return client.set(\`mutex:\${name}\`, owner, { NX: true, PX: 30_000 });
}`,
        ),
      ],
    },
    {
      // node-redis v4 option object with a trailing comma
      code: `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(id: string) {
  return client.set(\`lock:\${id}\`, "1", {
    NX: true,
  });
}`,
      errors: [
        missing(
          4,
          17,
          SET_NX,
          '"lock:*"',
          `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(id: string) {
  return client.set(\`lock:\${id}\`, "1", {
    NX: true, PX: 30_000,
  });
}`,
        ),
      ],
    },
    {
      // node-redis setNX, lock-like by its key ("leader")
      code: `import { createClient } from "redis";
const client = createClient();
export async function join(nodeId: string) {
  const won = await client.setNX("cluster:leader", nodeId);
  if (!won) return false;
  return true;
}`,
      errors: [
        missing(
          4,
          28,
          SETNX,
          '"cluster:leader"',
          `import { createClient } from "redis";
const client = createClient();
export async function join(nodeId: string) {
  const won = await client.set("cluster:leader", nodeId, { NX: true, PX: 30_000 });
  if (!won) return false;
  return true;
}`,
        ),
      ],
    },
    {
      // node-redis v5: NX condition, no expiration
      code: `import { createClient } from "redis";
const client = createClient();
export async function lockReport(reportId: string, token: string) {
  return client.set(\`report:\${reportId}:lock\`, token, { condition: "NX" });
}`,
      errors: [
        missing(
          4,
          17,
          SET_NX,
          '"report:*:lock"',
          `import { createClient } from "redis";
const client = createClient();
export async function lockReport(reportId: string, token: string) {
  return client.set(\`report:\${reportId}:lock\`, token, { condition: "NX", expiration: { type: "PX", value: 30_000 } });
}`,
        ),
      ],
    },
    {
      // Upstash: { nx: true }, key built with +
      code: `import { Redis } from "@upstash/redis";
const redis = Redis.fromEnv();
export async function acquireLease(shard: string, worker: string) {
  const res = await redis.set("lease:" + shard, worker, { nx: true });
  return res === "OK";
}`,
      errors: [
        missing(
          4,
          27,
          SET_NX,
          '"lease:*"',
          `import { Redis } from "@upstash/redis";
const redis = Redis.fromEnv();
export async function acquireLease(shard: string, worker: string) {
  const res = await redis.set("lease:" + shard, worker, { nx: true, px: 30_000 });
  return res === "OK";
}`,
        ),
      ],
    },
    {
      // ioredis call("SET", …): reported at call, no rewrite of the generic form
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(lockKey: string, token: string) {
  return redis.call("SET", lockKey, token, "NX");
}`,
      errors: [missing(4, 16, SET_NX, "`lockKey`", null)],
    },
    {
      // node-redis sendCommand(["SET", …])
      code: `import { createClient } from "redis";
const client = createClient();
export async function acquire(lockKey: string, token: string) {
  return client.sendCommand(["SET", lockKey, token, "NX"]);
}`,
      errors: [missing(4, 17, SET_NX, "`lockKey`", null)],
    },
    {
      // plain JS class service: opaque helper key, released with DEL
      code: `class ExportService {
  constructor(redis) { this.redis = redis; }
  lockKey(id) { return "export:" + id + ":lock"; }
  async start(id) {
    const ok = await this.redis.set(this.lockKey(id), "1", "NX");
    if (!ok) throw new Error("busy");
    try { await this.run(id); } finally { await this.redis.del(this.lockKey(id)); }
  }
}
module.exports = { ExportService };`,
      languageOptions: javascript,
      errors: [
        missing(
          5,
          33,
          SET_NX,
          "`this.lockKey(id)`",
          `class ExportService {
  constructor(redis) { this.redis = redis; }
  lockKey(id) { return "export:" + id + ":lock"; }
  async start(id) {
    const ok = await this.redis.set(this.lockKey(id), "1", "PX", 30_000, "NX");
    if (!ok) throw new Error("busy");
    try { await this.run(id); } finally { await this.redis.del(this.lockKey(id)); }
  }
}
module.exports = { ExportService };`,
        ),
      ],
    },
    {
      // not lock-named, but the module deletes the key: a lock
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function syncAccount(accountId: string) {
  if (!(await redis.set(\`sync:\${accountId}\`, "1", "NX"))) return;
  try {
    await pullChanges(accountId);
  } finally {
    await redis.del(\`sync:\${accountId}\`);
  }
}`,
      errors: [
        missing(
          4,
          21,
          SET_NX,
          '"sync:*"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function syncAccount(accountId: string) {
  if (!(await redis.set(\`sync:\${accountId}\`, "1", "PX", 30_000, "NX"))) return;
  try {
    await pullChanges(accountId);
  } finally {
    await redis.del(\`sync:\${accountId}\`);
  }
}`,
        ),
      ],
    },
    {
      // lock-like by the enclosing function's name
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function electLeader(host: string) {
  return (await redis.setnx("scheduler:primary", host)) === 1;
}`,
      errors: [
        missing(
          4,
          23,
          SETNX,
          '"scheduler:primary"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function electLeader(host: string) {
  return (await redis.set("scheduler:primary", host, "PX", 30_000, "NX")) === "OK";
}`,
        ),
      ],
    },
    {
      // plain JS, require("ioredis"), .then
      code: `const Redis = require("ioredis");
const redis = new Redis();
function takeLock(name) {
  return redis.setnx("lock:" + name, Date.now()).then((n) => n === 1);
}
module.exports = { takeLock };`,
      languageOptions: javascript,
      // SET … NX answers "OK"/null where SETNX answered 1/0: the callback's comparison is rewritten with it
      errors: [
        missing(
          4,
          16,
          SETNX,
          '"lock:*"',
          `const Redis = require("ioredis");
const redis = new Redis();
function takeLock(name) {
  return redis.set("lock:" + name, Date.now(), "PX", 30_000, "NX").then((n) => n === "OK");
}
module.exports = { takeLock };`,
        ),
      ],
    },
    {
      // SETNX queued in a multi chain with no EXPIRE: located at setnx, rewritten in place
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function enqueueExclusive(jobId: string) {
  await redis.multi().setnx(\`exclusive:\${jobId}\`, "1").rpush("queue", jobId).exec();
}`,
      errors: [
        missing(
          4,
          23,
          SETNX,
          '"exclusive:*"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function enqueueExclusive(jobId: string) {
  await redis.multi().set(\`exclusive:\${jobId}\`, "1", "PX", 30_000, "NX").rpush("queue", jobId).exec();
}`,
        ),
      ],
    },
    {
      // two acquires in one module; ioredis call("SETNX") has no rewrite
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function lockA(id: string) {
  await redis.call("SETNX", \`lock:a:\${id}\`, "1");
}
export async function lockB(id: string) {
  await redis.set(\`lock:b:\${id}\`, "1", "NX");
}`,
      errors: [
        missing(4, 15, SETNX, '"lock:a:*"', null),
        missing(
          7,
          15,
          SET_NX,
          '"lock:b:*"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function lockA(id: string) {
  await redis.call("SETNX", \`lock:a:\${id}\`, "1");
}
export async function lockB(id: string) {
  await redis.set(\`lock:b:\${id}\`, "1", "PX", 30_000, "NX");
}`,
        ),
      ],
    },

    {
      // optional chaining on a class field: located at setnx, rewritten keeping ?.
      code: `import type { Redis } from "ioredis";
export class Worker {
  redis?: Redis;
  async acquireLock(id: string) {
    await this.redis?.setnx(\`lock:\${id}\`, "1");
  }
}`,
      errors: [
        missing(
          5,
          23,
          SETNX,
          '"lock:*"',
          `import type { Redis } from "ioredis";
export class Worker {
  redis?: Redis;
  async acquireLock(id: string) {
    await this.redis?.set(\`lock:\${id}\`, "1", "PX", 30_000, "NX");
  }
}`,
        ),
      ],
    },
    {
      // an EXPIRE before the SETNX does nothing (the key does not exist yet)
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(id: string) {
  await redis.expire(\`lock:\${id}\`, 30);
  await redis.setnx(\`lock:\${id}\`, "1");
}`,
      errors: [
        missing(
          5,
          15,
          SETNX,
          '"lock:*"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(id: string) {
  await redis.expire(\`lock:\${id}\`, 30);
  await redis.set(\`lock:\${id}\`, "1", "PX", 30_000, "NX");
}`,
        ),
      ],
    },
    // ---- separateExpire ----------------------------------------------------------------------------------
    {
      // commands held bound to their client (\`promisify(client.setnx).bind(client)\`, \`client.expire.bind(client)\`)
      // send what the client's own calls send; no rewrite is offered at a call of a bound name
      name: "a SETNX and its EXPIRE sent through bound and promisified methods",
      code: `const { promisify } = require("util");
const { client } = require("./redis");

const setnx = promisify(client.setnx).bind(client);
const expire = client.expire.bind(client);
const del = promisify(client.del.bind(client));

async function holdSeat(seatId, work) {
  const key = \`seat-lock:\${seatId}\`;
  if ((await setnx(key, "1")) !== 1) return false;
  await work();
  await expire(key, 30);
  await del(key);
  return true;
}

module.exports = { holdSeat };`,
      languageOptions: javascript,
      errors: [
        separateSuggested(
          10,
          14,
          "SETNX",
          '"seat-lock:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 12 },
          null,
        ),
      ],
    },
    {
      // a take-over that compares the value with a token, not with the clock, frees no dead holder's lock: the
      // separate EXPIRE is still the wedge
      code: `export async function lockFor(redis: Redis, key: string, token: string) {
  if (await redis.setnx(key, token)) {
    await redis.expire(key, 60);
    return true;
  }
  const holder = await redis.get(key);
  if (holder !== token) return false;
  await redis.set(key, token);
  return true;
}
export async function unlock(redis: Redis, key: string) { await redis.del(key); }`,
      output: `export async function lockFor(redis: Redis, key: string, token: string) {
  if (await redis.set(key, token, "EX", 60, "NX")) {
    return true;
  }
  const holder = await redis.get(key);
  if (holder !== token) return false;
  await redis.set(key, token);
  return true;
}
export async function unlock(redis: Redis, key: string) { await redis.del(key); }`,
      errors: [separateFixed(2, 19, SETNX, "`key`", { expireCommand: "EXPIRE", unit: "EX", ttl: "60", expireLine: 3 })],
    },
    {
      // mechanical: literal TTL, own statement, result only tested for truth
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(id: string) {
const key = \`lock:\${id}\`;
const ok = await redis.setnx(key, "1");
if (!ok) return false;
await redis.expire(key, 30);
return true;
}`,
      output: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(id: string) {
const key = \`lock:\${id}\`;
const ok = await redis.set(key, "1", "EX", 30, "NX");
if (!ok) return false;
return true;
}`,
      errors: [
        separateFixed(5, 24, SETNX, '"lock:*"', { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 7 }),
      ],
    },
    {
      // mechanical: the EXPIRE is the only statement of an if block, which goes with it
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function withMutex(name: string, fn: () => Promise<void>) {
const acquired = await redis.setnx(\`mutex:\${name}\`, "1");
if (acquired) {
  await redis.expire(\`mutex:\${name}\`, 60);
}
if (!acquired) return;
try { await fn(); } finally { await redis.del(\`mutex:\${name}\`); }
}`,
      output: `import Redis from "ioredis";
const redis = new Redis();
export async function withMutex(name: string, fn: () => Promise<void>) {
const acquired = await redis.set(\`mutex:\${name}\`, "1", "EX", 60, "NX");
if (!acquired) return;
try { await fn(); } finally { await redis.del(\`mutex:\${name}\`); }
}`,
      errors: [
        separateFixed(4, 30, SETNX, '"mutex:*"', { expireCommand: "EXPIRE", unit: "EX", ttl: "60", expireLine: 6 }),
      ],
    },
    {
      // mechanical: SET NX then PEXPIRE
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function lockInvoice(invoiceId: string, token: string) {
const key = "invoice-lock:" + invoiceId;
if (!(await redis.set(key, token, "NX"))) return null;
await redis.pexpire(key, 15000);
return token;
}`,
      output: `import Redis from "ioredis";
const redis = new Redis();
export async function lockInvoice(invoiceId: string, token: string) {
const key = "invoice-lock:" + invoiceId;
if (!(await redis.set(key, token, "PX", 15000, "NX"))) return null;
return token;
}`,
      errors: [
        separateFixed(5, 19, SET_NX, '"invoice-lock:*"', {
          expireCommand: "PEXPIRE",
          unit: "PX",
          ttl: "15000",
          expireLine: 6,
        }),
      ],
    },
    {
      // node-redis setNX in an if test, EXPIRE inside the block next to other statements
      code: `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(resource: string) {
const key = \`locks:\${resource}\`;
if (await client.setNX(key, "1")) {
await client.expire(key, 60);
return true;
}
return false;
}`,
      output: `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(resource: string) {
const key = \`locks:\${resource}\`;
if (await client.set(key, "1", { NX: true, EX: 60 })) {
return true;
}
return false;
}`,
      errors: [
        separateFixed(5, 18, SETNX, '"locks:*"', { expireCommand: "EXPIRE", unit: "EX", ttl: "60", expireLine: 6 }),
      ],
    },
    {
      // node-redis v4 { NX: true } then pExpire
      code: `import { createClient } from "redis";
const client = createClient();
export async function takeLock(id: string, token: string) {
const key = \`lock:\${id}\`;
const ok = await client.set(key, token, { NX: true });
if (!ok) return false;
await client.pExpire(key, 5000);
return true;
}`,
      output: `import { createClient } from "redis";
const client = createClient();
export async function takeLock(id: string, token: string) {
const key = \`lock:\${id}\`;
const ok = await client.set(key, token, { NX: true, PX: 5000 });
if (!ok) return false;
return true;
}`,
      errors: [
        separateFixed(5, 25, SET_NX, '"lock:*"', { expireCommand: "PEXPIRE", unit: "PX", ttl: "5000", expireLine: 7 }),
      ],
    },
    {
      // Upstash SETNX then EXPIRE
      code: `import { Redis } from "@upstash/redis";
const redis = Redis.fromEnv();
export async function acquireLease(worker: string) {
await redis.setnx("lease:compactor", worker);
await redis.expire("lease:compactor", 45);
}`,
      output: `import { Redis } from "@upstash/redis";
const redis = Redis.fromEnv();
export async function acquireLease(worker: string) {
await redis.set("lease:compactor", worker, { nx: true, ex: 45 });
}`,
      errors: [
        separateFixed(4, 13, SETNX, '"lease:compactor"', {
          expireCommand: "EXPIRE",
          unit: "EX",
          ttl: "45",
          expireLine: 5,
        }),
      ],
    },
    {
      // the TTL is a constant, not a literal: a suggestion
      code: `import Redis from "ioredis";
const redis = new Redis();
const LOCK_TTL = 30;
export async function lock(name: string) {
const key = \`lock:\${name}\`;
await redis.setnx(key, "1");
await redis.expire(key, LOCK_TTL);
}`,
      output: null,
      errors: [
        separateSuggested(
          6,
          13,
          SETNX,
          '"lock:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "LOCK_TTL", expireLine: 7 },
          `import Redis from "ioredis";
const redis = new Redis();
const LOCK_TTL = 30;
export async function lock(name: string) {
const key = \`lock:\${name}\`;
await redis.set(key, "1", "EX", LOCK_TTL, "NX");
}`,
        ),
      ],
    },
    {
      // SETNX's 1/0 is compared to a number: a suggestion
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function claimSlot(slot: string) {
const n = await redis.setnx(\`slot:\${slot}\`, "1");
await redis.expire(\`slot:\${slot}\`, 120);
return n === 1;
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          23,
          SETNX,
          '"slot:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "120", expireLine: 5 },
          `import Redis from "ioredis";
const redis = new Redis();
export async function claimSlot(slot: string) {
const n = await redis.set(\`slot:\${slot}\`, "1", "EX", 120, "NX");
return n === "OK";
}`,
        ),
      ],
    },
    {
      // SETNX's 0 tested before the work, as a nightly job does: the test is rewritten with the command, since
      // SET … NX never answers 0 and, left as it was, would let every caller in while the lock is held
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function nightly(owner: string) {
const taken = await redis.setnx("lock:nightly", owner);
if (taken === 0) return "skipped";
await redis.pexpire("lock:nightly", 60_000);
if (false != taken) return "ran";
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          27,
          SETNX,
          '"lock:nightly"',
          { expireCommand: "PEXPIRE", unit: "PX", ttl: "60_000", expireLine: 6 },
          `import Redis from "ioredis";
const redis = new Redis();
export async function nightly(owner: string) {
const taken = await redis.set("lock:nightly", owner, "PX", 60_000, "NX");
if (taken !== "OK") return "skipped";
if ("OK" === taken) return "ran";
}`,
        ),
      ],
    },
    {
      // plain JS: EXPIRE in a .then callback (another function): a suggestion
      code: `const Redis = require("ioredis");
const redis = new Redis();
function lockJob(id) {
return redis.setnx(\`job-lock:\${id}\`, "1").then((ok) => {
if (ok) redis.expire(\`job-lock:\${id}\`, 10);
return ok;
});
}
module.exports = { lockJob };`,
      languageOptions: javascript,
      output: null,
      errors: [
        separateSuggested(
          4,
          14,
          SETNX,
          '"job-lock:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "10", expireLine: 5 },
          `const Redis = require("ioredis");
const redis = new Redis();
function lockJob(id) {
return redis.set(\`job-lock:\${id}\`, "1", "EX", 10, "NX").then((ok) => {
return ok;
});
}
module.exports = { lockJob };`,
        ),
      ],
    },
    {
      // EXPIREAT at a variable time, result compared: a suggestion with EXAT
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function lockUntil(name: string, until: number) {
const ok = await redis.setnx(\`lock:\${name}\`, "1");
if (ok) await redis.expireat(\`lock:\${name}\`, until);
return ok === 1;
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          24,
          SETNX,
          '"lock:*"',
          { expireCommand: "EXPIREAT", unit: "EXAT", ttl: "until", expireLine: 5 },
          `import Redis from "ioredis";
const redis = new Redis();
export async function lockUntil(name: string, until: number) {
const ok = await redis.set(\`lock:\${name}\`, "1", "EXAT", until, "NX");
return ok === "OK";
}`,
        ),
      ],
    },
    {
      // the EXPIRE is queued in a multi() of its own: still a separate round trip, and no edit
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(lockKey: string) {
  await redis.setnx(lockKey, "1");
  await redis.multi().expire(lockKey, 30).exec();
}`,
      output: null,
      // the EXPIRE sits in its own multi, so it stays; the suggestion only makes the acquire expire by itself
      errors: [
        separateSuggested(
          4,
          15,
          SETNX,
          "`lockKey`",
          { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 5 },
          `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(lockKey: string) {
  await redis.set(lockKey, "1", "EX", 30, "NX");
  await redis.multi().expire(lockKey, 30).exec();
}`,
          "expireInAcquire",
        ),
      ],
    },
    {
      // SETNX and EXPIRE in two different multi() chains: located at setnx
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(id: string) {
  await redis.multi().setnx(\`lock:\${id}\`, "1").exec();
  await redis.multi().expire(\`lock:\${id}\`, 30).exec();
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          23,
          SETNX,
          '"lock:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 5 },
          `import Redis from "ioredis";
const redis = new Redis();
export async function acquire(id: string) {
  await redis.multi().set(\`lock:\${id}\`, "1", "EX", 30, "NX").exec();
  await redis.multi().expire(\`lock:\${id}\`, 30).exec();
}`,
          "expireInAcquire",
        ),
      ],
    },
    {
      // ioredis call("SETNX") then EXPIRE: the generic form has no edit
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(id: string) {
  await redis.call("SETNX", \`lock:\${id}\`, "1");
  await redis.expire(\`lock:\${id}\`, 30);
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          15,
          SETNX,
          '"lock:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 5 },
          null,
        ),
      ],
    },

    {
      // node-redis SETNX (upper case), EXPIRE the only statement of a brace-less if
      code: `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(id: string) {
const ok = await client.SETNX(\`lock:\${id}\`, "1");
if (ok) await client.expire(\`lock:\${id}\`, 30);
return ok;
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          25,
          SETNX,
          '"lock:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 5 },
          `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(id: string) {
const ok = await client.set(\`lock:\${id}\`, "1", { NX: true, EX: 30 });
return ok;
}`,
        ),
      ],
    },
    {
      // node-redis SETNX (upper case) fixed: result only tested for truth
      code: `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(id: string) {
const ok = await client.SETNX(\`lock:\${id}\`, "1");
if (ok) await client.expire(\`lock:\${id}\`, 30);
if (!ok) throw new Error("locked");
}`,
      output: `import { createClient } from "redis";
const client = createClient();
export async function acquireLock(id: string) {
const ok = await client.set(\`lock:\${id}\`, "1", { NX: true, EX: 30 });
if (!ok) throw new Error("locked");
}`,
      errors: [
        separateFixed(4, 25, SETNX, '"lock:*"', { expireCommand: "EXPIRE", unit: "EX", ttl: "30", expireLine: 5 }),
      ],
    },
    {
      // SET NX then EXPIREAT: no SET option is written for an absolute time, so no edit
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(id: string, at: number) {
  await redis.set(\`lock:\${id}\`, "1", "NX");
  await redis.expireat(\`lock:\${id}\`, at);
}`,
      output: null,
      errors: [
        separateSuggested(
          4,
          15,
          SET_NX,
          '"lock:*"',
          { expireCommand: "EXPIREAT", unit: "EXAT", ttl: "at", expireLine: 5 },
          null,
        ),
      ],
    },
    {
      // a SET after a GET check of the holder is a set-if-absent in JavaScript; without an expiry a dead holder keeps it
      name: "a lock taken by a SET after a GET check, with no expiry",
      code: `export class Locker {
  constructor(private readonly cache: Cache) {}
  async lock(owner: string, name: string) {
    const key = \`mutex:\${name}\`;
    const holder = await this.cache.get(key);
    if (holder && holder !== owner) throw new Error("held by another owner");
    await this.cache.set(key, owner);
    return async () => { await this.cache.delete(key); };
  }
}`,
      errors: [missing(7, 22, "SET (after a GET check)", '"mutex:*"', null)],
    },
    {
      // a SET taken where a GET found the key empty, of a key released only after its holder is compared: a lock
      // (with SETEX's expiry it is not reported, see the valid cases)
      name: "a lock taken by a plain SET where a GET found the key empty, with no expiry",
      code: SEAT_HOLD.replace("await redis.setEx(seatId, 120, ticket);", "await redis.set(seatId, ticket);"),
      errors: [missing(15, 15, "SET (after a GET check)", "`req.body.seat`", null)],
    },
    {
      // a Lua SETNX with no EXPIRE after it in the script
      name: "a Lua SETNX with no expiry",
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function lockImport(id: string, token: string) {
  return redis.eval('return redis.call("SETNX", KEYS[1], ARGV[1])', 1, \`import-lock:\${id}\`, token);
}
export async function unlockImport(id: string) {
  await redis.del(\`import-lock:\${id}\`);
}`,
      errors: [missing(4, 16, "script's SET … NX", '"import-lock:*"', null)],
    },
    {
      // a key that ends in "lock" names the lock of whatever it guards, a cache preload here: not a cache entry
      name: "the lock of a cache preload, with no expiry",
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function preload() {
  if (!(await redis.setnx("sitemap-cache:lock", "1"))) return;
  try { await rebuildSitemapCache(); } finally { await redis.del("sitemap-cache:lock"); }
}`,
      errors: [
        missing(
          4,
          21,
          SETNX,
          '"sitemap-cache:lock"',
          `import Redis from "ioredis";
const redis = new Redis();
export async function preload() {
  if (!(await redis.set("sitemap-cache:lock", "1", "PX", 30_000, "NX"))) return;
  try { await rebuildSitemapCache(); } finally { await redis.del("sitemap-cache:lock"); }
}`,
        ),
      ],
    },
    {
      // the var is given a new MULTI between the two: the EXPIRE goes in another round trip
      name: "SETNX and EXPIRE in two MULTIs held in the same var",
      code: `var client = require("./redis-client");
function request(id, callback) {
  var multi = client.multi();
  multi.SETNX("sync:lease:" + id, "1");
  multi.exec(function () {
    multi = client.multi();
    multi.EXPIRE("sync:lease:" + id, 60);
    multi.exec(callback);
  });
}
function release(id, callback) { client.DEL("sync:lease:" + id, callback); }`,
      languageOptions: javascript,
      errors: [
        separateSuggested(
          4,
          9,
          SETNX,
          '"sync:lease:*"',
          { expireCommand: "EXPIRE", unit: "EX", ttl: "60", expireLine: 7 },
          `var client = require("./redis-client");
function request(id, callback) {
  var multi = client.multi();
  multi.set("sync:lease:" + id, "1", "EX", 60, "NX");
  multi.exec(function () {
    multi = client.multi();
    multi.exec(callback);
  });
}
function release(id, callback) { client.DEL("sync:lease:" + id, callback); }`,
        ),
      ],
    },
    // ---- conditionalTtl ----------------------------------------------------------------------------------
    {
      // the script adds EX only when ARGV[2] is positive, and the call passes 0 unless asked for an expiry
      name: "a Lua set-if-absent whose expiry the caller passes as 0 by default",
      code: `${LUA_ACQUIRE}
export async function withSlot(id: string, owner: string, work: () => Promise<void>, opts?: { expire?: number }) {
  if ((await redis.takeSlot(\`slot-lock:\${id}\`, owner, opts?.expire ? opts.expire : 0)) !== 1) return;
  try { await work(); } finally { await redis.giveSlot(\`slot-lock:\${id}\`, owner); }
}`,
      errors: [conditional(22, 20, "script's SET … NX", '"slot-lock:*"')],
    },
    {
      // ioredis: TTL tokens spread only when ttl is set
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireLock(key: string, token: string, ttl?: number) {
  return redis.set(key, token, "NX", ...(ttl ? ["PX", ttl] : []));
}`,
      errors: [conditional(4, 16, SET_NX, "`key`")],
    },
    {
      // node-redis: options spread only when ttlMs is set
      code: `import { createClient } from "redis";
const client = createClient();
export async function lockTenant(tenantId: string, ttlMs: number | undefined) {
  const acquired = await client.set(\`tenant:\${tenantId}:lock\`, "1", { NX: true, ...(ttlMs ? { PX: ttlMs } : {}) });
  return acquired === "OK";
}`,
      errors: [conditional(4, 33, SET_NX, '"tenant:*:lock"')],
    },
    {
      // ioredis: TTL from an optional parameter with no default
      code: `import Redis from "ioredis";
const redis = new Redis();
export async function acquireMutex(name: string, ttlMs?: number) {
  return redis.set(\`mutex:\${name}\`, "1", "PX", ttlMs, "NX");
}`,
      errors: [conditional(4, 16, SET_NX, '"mutex:*"')],
    },
    {
      // Upstash in a class service: px from an optional parameter
      code: `import { Redis } from "@upstash/redis";
export class LeaseStore {
  constructor(private redis: Redis) {}
  async take(id: string, owner: string, ttl?: number) {
    return this.redis.set(\`lease:\${id}\`, owner, { nx: true, px: ttl });
  }
}`,
      errors: [conditional(5, 23, SET_NX, '"lease:*"')],
    },
    {
      // node-redis v5: expiration value from an optional parameter
      code: `import { createClient } from "redis";
const client = createClient();
export async function lock(key: string, token: string, ms?: number) {
  return client.set(key, token, { condition: "NX", expiration: { type: "PX", value: ms } });
}`,
      errors: [conditional(4, 17, SET_NX, "`key`")],
    },
  ],
});
