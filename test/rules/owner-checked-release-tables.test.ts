/**
 * owner-checked-release on in-process lock tables: a `Map` of entries per key, set after a test that turns callers
 * away and deleted when the holder is done. Q3 is asked once an entry can be freed by age.
 */
import rule from "../../rules/owner-checked-release.js";
import { javascript, ruleTester } from "../rule-tester.js";
import { WAIT_THEN_TAKE } from "./lease-lock.js";

function tableRelease(
  line: number,
  column: number,
  table: string,
  acquireLine: number,
  expiry: string,
  expiryLine: number,
) {
  return {
    messageId: "tableRelease" as const,
    line,
    column,
    data: { table, acquireLine: String(acquireLine), expiry, expiryLine: String(expiryLine) },
  };
}

/** A per-chat lock for a webhook: an entry older than the limit is taken over; `release` deletes by key. */
const WEBHOOK_GATE = `const busy = new Map();
const LIMIT_MS = 10_000;

export function releaseChat(chatId) {
  busy.delete(chatId);
}

export function chatGate(req, res, next) {
  const chatId = req.body.chat.id;
  const now = Date.now();
  const entry = busy.get(chatId);
  if (entry && now - entry.since > LIMIT_MS) busy.delete(chatId);
  if (busy.has(chatId)) {
    res.status(429).end();
    return;
  }
  busy.set(chatId, { since: now });
  res.on("finish", () => releaseChat(chatId));
  next();
}
`;

/** A class keeping locks with an expiry instant; an expired entry counts as free. */
const EXPIRING_LOCKS = `export class LocalLocks {
  private held = new Map<string, number>();

  tryLock(name: string, ttlMs: number): boolean {
    const now = Date.now();
    const until = this.held.get(name);
    if (until !== undefined && until > now) return false;
    this.held.set(name, now + ttlMs);
    return true;
  }

  unlock(name: string): void {
    this.held.delete(name);
  }
}
`;

ruleTester.run("owner-checked-release (in-process lock tables)", rule, {
  valid: [
    {
      name: "the release deletes only the entry this holder set",
      code: WEBHOOK_GATE.replace(
        "busy.delete(chatId);\n}",
        "if (busy.get(chatId) === mine) busy.delete(chatId);\n}",
      ).replace("export function releaseChat(chatId) {", "export function releaseChat(chatId, mine) {"),
      languageOptions: javascript,
    },
    {
      name: "a guard that leaves when the entry's owner differs checks the owner",
      code: `export class Leases {
  private leases = new Map<string, { owner: string; expiresAt: number }>();
  acquire(key: string, owner: string, ttlMs: number): boolean {
    const now = Date.now();
    const lease = this.leases.get(key);
    if (lease && lease.expiresAt > now) return false;
    this.leases.set(key, { owner, expiresAt: now + ttlMs });
    return true;
  }
  releaseLock(key: string, owner: string): boolean {
    const lease = this.leases.get(key);
    if (!lease || lease.owner !== owner) return false;
    this.leases.delete(key);
    return true;
  }
}`,
    },
    {
      name: "no entry is ever freed by age: only its holder deletes it, so no other holder is freed",
      code: `const running = new Map();
export async function withJobLock(id, work) {
  if (running.has(id)) return false;
  running.set(id, Date.now());
  try {
    await work();
  } finally {
    running.delete(id);
  }
  return true;
}`,
      languageOptions: javascript,
    },
    {
      name: "a cache with a lifetime uses what it finds; its invalidation is no lock's release",
      code: `const cache = new Map();
const TTL = 60_000;
export function lookup(key, compute) {
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < TTL) return hit.value;
  const value = compute(key);
  cache.set(key, { value, at: Date.now() });
  return value;
}
export function invalidate(key) {
  cache.delete(key);
}`,
      languageOptions: javascript,
    },
    {
      name: "work in flight joined by the next caller: the entry is used, not a lock, whatever the table is called",
      code: `const inFlight = new Map();
export function refresh(key, load) {
  const pending = inFlight.get(key);
  if (pending) return pending;
  const started = load(key).finally(() => inFlight.delete(key));
  inFlight.set(key, started);
  setTimeout(() => inFlight.delete(key), 30_000);
  return started;
}`,
      languageOptions: javascript,
    },
    {
      name: "a cooldown map is a throttle: nothing deletes an entry after the work",
      code: `const lastSent = new Map();
export function maySend(userId) {
  const now = Date.now();
  const last = lastSent.get(userId);
  if (last !== undefined && now - last < 30_000) return false;
  lastSent.set(userId, now);
  return true;
}
export function forget(userId) {
  lastSent.delete(userId);
}`,
      languageOptions: javascript,
    },
    {
      name: "an await between the test and the set: no one-step acquire, so no lock is assumed",
      code: EXPIRING_LOCKS.replace(
        "tryLock(name: string, ttlMs: number): boolean {",
        "async tryLock(name: string, ttlMs: number): Promise<boolean> {",
      ).replace(
        "    this.held.set(name, now + ttlMs);",
        "    await Promise.resolve();\n    this.held.set(name, now + ttlMs);",
      ),
    },
    {
      name: "a bulk clear over the table's entries and a sweep of expired ones are no holder's release",
      code: `export class Locks {
  private locks = new Map<string, { at: number }>();
  take(key: string): boolean {
    if (this.locks.has(key)) return false;
    this.locks.set(key, { at: Date.now() });
    return true;
  }
  sweep(maxAgeMs: number) {
    for (const [key, entry] of this.locks) {
      if (Date.now() - entry.at > maxAgeMs) this.locks.delete(key);
    }
  }
  clearAll() {
    for (const [key] of this.locks.entries()) this.locks.delete(key);
  }
}`,
    },
    {
      name: "a Map made inside the function is scratch space, not a table",
      code: `export function dedupe(items) {
  const seen = new Map();
  for (const item of items) {
    if (seen.has(item.lockId)) continue;
    seen.set(item.lockId, Date.now());
  }
  seen.delete("x");
  return seen;
}`,
      languageOptions: javascript,
    },
  ],
  invalid: [
    {
      name: "a table with a neutral name, taken and freed by functions named acquire… and release…",
      code: `const slots = new Map();
export function acquireSlot(userId) {
  const now = Date.now();
  const held = slots.get(userId);
  if (held !== undefined && held > now) return false;
  slots.set(userId, now + 30_000);
  return true;
}
export function releaseSlot(userId) {
  slots.delete(userId);
}`,
      languageOptions: javascript,
      errors: [tableRelease(10, 3, "slots", 6, "An expired entry counts as free", 5)],
    },
    {
      name: "an old entry is taken over by the next request, and the finish handler deletes by key",
      code: WEBHOOK_GATE,
      languageOptions: javascript,
      errors: [tableRelease(5, 3, "busy", 17, "Entries older than a limit are taken over", 12)],
    },
    {
      name: "the same table in a private field (`this.#held`), read through the class's field initialiser",
      code: EXPIRING_LOCKS.replaceAll("this.held", "this.#held").replace(
        "private held = new Map<string, number>();",
        "#held = new Map<string, number>();",
      ),
      errors: [tableRelease(13, 5, "this.#held", 8, "An expired entry counts as free", 7)],
    },
    {
      name: "an expired entry counts as free, and unlock deletes by key",
      code: EXPIRING_LOCKS,
      errors: [tableRelease(13, 5, "this.held", 8, "An expired entry counts as free", 7)],
    },
    {
      name: "a timer deletes each entry; the holder's own release then frees a newer holder's entry",
      code: `const locks = new Map();
export function lock(key, ttlMs) {
  if (locks.has(key)) return false;
  locks.set(key, { at: Date.now() });
  setTimeout(() => locks.delete(key), ttlMs);
  return true;
}
export function unlock(key) {
  locks.delete(key);
}`,
      languageOptions: javascript,
      errors: [tableRelease(9, 3, "locks", 4, "A timer deletes each entry", 5)],
    },
    {
      name: "a sweep deletes expired entries; the release in the finally deletes by key",
      code: `export class JobLocks {
  private locks = new Map<string, number>();
  async run(id: string, work: () => Promise<void>) {
    if (this.locks.has(id)) return;
    this.locks.set(id, Date.now());
    try {
      await work();
    } finally {
      this.locks.delete(id);
    }
  }
  sweep() {
    for (const [id, at] of this.locks) if (Date.now() - at > 60_000) this.locks.delete(id);
  }
}`,
      errors: [tableRelease(9, 7, "this.locks", 5, "Expired entries are deleted", 13)],
    },
  ],
});

// A table whose callers wait for the holder they found and then take the key without testing again: two can hold a
// key at once, so a delete by key alone frees the other holder's entry (issue 35, item 3). With a wait that tests
// again, one holder at a time: the plain delete is that holder's.

ruleTester.run("owner-checked-release (tables taken after a wait)", rule, {
  valid: [
    {
      name: "a wait that tests the key again: one holder at a time",
      code: WAIT_THEN_TAKE.replace("if (this.held.has(key)) {", "while (this.held.has(key)) {"),
    },
  ],
  invalid: [
    {
      name: "a delete by key alone after callers that waited took the key",
      code: WAIT_THEN_TAKE,
      errors: [
        {
          messageId: "tableReleaseAfterWait",
          line: 12,
          data: { table: "this.held", acquireLine: "8", waitLine: "5" },
        },
      ],
    },
  ],
});
