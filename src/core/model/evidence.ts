/**
 * What a module's text must contain for its lock facts to hold anything a rule reads (issue 17). The inventory asks
 * it once per file, before it installs a listener: a module whose text has none of it gets no listener, no code
 * path recorded and no facts built, and so no finding, which is what building its facts would have given.
 *
 * Every lock the model knows is named by something in the text, and this module lists what, concept by concept
 * (the recognizers add their own stores' marks, `Recognizer.evidence`):
 * - lock words and lock verbs (settings.ts `LOCK_WORDS`, `LOCK_VERBS`): lock rows, leases, keyed rows, held values,
 *   advisory locks, lock libraries, helpers named like locks;
 * - a state or flag field of the vocabulary (`settings.locks` included; rule options add time fields only), used as
 *   a field: claims of in-progress values and flags, their stale scans and recoveries, values held across work;
 * - a delete: an insert checked by a read is a claim when the module also deletes that row (`findCheckedInsert`),
 *   and a lock table's entries are released by one (lock-tables.ts);
 * - `= true` and `= false`, or `= true` and a `delete` of a slot (`delete inFlight[id]`): in-process flags that guard
 *   work, alone or kept per key in an object (held-locks/candidates.ts `flagLocks`);
 * - `.has(` or `.get(`, `.add(` or `.set(`, and `.delete(`: a key's entry in an in-process `Map` or `Set` taken after a
 *   presence test (`has`, or a `get` found empty: `const p = inflight.get(k); if (!p) inflight.set(k, …)`) and deleted
 *   after the work (lock-tables.ts), whose releases the code paths are read for (`tableLocks`);
 * - a slot filled when empty (`p ??= …`, `if (!p) { p = …`, `if (p) return p; p = …`) in a module that makes promises (`.then(`, `async`,
 *   `Promise`): promise memos that keep a rejection for every later caller (promise-memos.ts);
 * - a promise chain kept as a queue (`q = q.then(…)`, a `.finally(` link, `(… ?? Promise.resolve()).then(`, or a
 *   settled start `Promise.resolve()` and a `.then(` anywhere): chains that one rejection poisons (promise-chains.ts).
 *
 * Words are matched as substrings, without case, so every spelling the model accepts (`acquireLock`, `LOCK_KEY`,
 * `job_lease`) is found, at the price of a few lookalikes (`block`). A field name must not run on into a longer
 * word, a call or a member (`status:`, `status =`, `"status"`, `j.status IN`, not `res.status(404)`, `statusCode`
 * or `state.user`): the model reads a field only where it is one. The equivalence test
 * (test/robustness/corpus.test.ts) lints the benchmark corpora with and without this check and requires the same
 * findings file by file, and facts with no lock in every module it rules out.
 */
import { DEFAULT_VOCABULARY, LOCK_VERBS, LOCK_WORDS, normalizeName, type ResolvedVocabulary } from "./settings.js";

/** The words of `words` that contain no other of them: `lock` stands for `locked`, `unlock` and `locks`. */
function roots(words: Iterable<string>): string[] {
  const all = [...new Set([...words].map((w) => w.toLowerCase()))];
  return all.filter((w) => !all.some((o) => o !== w && w.includes(o)));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const DEFAULT_NAMES = new Set([...DEFAULT_VOCABULARY.stateFields, ...DEFAULT_VOCABULARY.flagFields]);

/**
 * A vocabulary name in the spellings `normalizeName` folds together: `inProgress`, `in_progress`, `IN-PROGRESS`. A
 * default name may be split only where its words meet (the pattern stays fast); a name from the settings anywhere,
 * since how the project spells it is not known (`lifecycle` matches `life_cycle`).
 */
function spellings(name: string): string {
  if (!DEFAULT_NAMES.has(name)) return [...normalizeName(name)].map(escape).join("[-_\\s]*");
  return name
    .split(/(?<=[a-z0-9])(?=[A-Z])|[-_\s]+/)
    .map((w) => escape(w.toLowerCase()))
    .join("[-_\\s]*");
}

/** Ends a field name: not the start of a longer word, a call or a member. */
const FIELD_END = "(?![\\w$(.])";

/** Deletes of every store the recognizers read: `delete(`, `deleteMany(`, `findOneAndDelete(`, `destroy(`, `del()`, `DELETE FROM`. */
const DELETES = /(?:delete\w*|destroy|remove\w*|\bdel)\s*[(<]|delete\s+from/i;
/** In-process flags: a boolean set and cleared again. */
const SET_TRUE = /=\s*true\b/;
const SET_FALSE = /=\s*false\b/;
const DELETE_SLOT = /\bdelete\s+[\w$.]+\s*\[/;
/** In-process lock tables: a presence test, an entry taken and one deleted. */
const TABLE_HAS = /\.(?:has|get)\s*\(/;
const TABLE_TAKE = /\.(?:add|set)\s*\(/;
const TABLE_DELETE = /\.delete\s*\(/;
/**
 * Promise memos: a slot filled when empty, in a module that makes promises (`slot = slot || make()` bounded as
 * CHAIN_KEPT's slot is, so a long run of name characters is tried once).
 */
const MEMO_FILL =
  /(?:\?\?|\|\|)=|if\s*\(\s*!\s*([\w$.]+)\s*\)\s*\{?\s*\1\s*=(?!=)|if\s*\(\s*([\w$.]+)\s*\)\s*\{?\s*return\s+\2\b[^;]*;\s*\}?\s*\2\s*=(?!=)|(?<![\w$.])([\w$.]{1,64})\s*=\s*\3\s*(?:\?\?|\|\|)/;
const MAKES_PROMISES = /Promise|\.then\s*\(|\basync\b/;
/**
 * Promise chains kept as queues: a link chained on the one before and kept (`q = q.then(…)`, `.finally(` kept). The
 * slot's name starts where no name character precedes it and is at most 64 long: a long run of name characters (a
 * minified line, a test's megabyte of text) is tried once, not from every position in it.
 */
const CHAIN_KEPT =
  /(?<![\w$.])([\w$.]{1,64})\s*=\s*\(?\s*\1\b[^;]*?\.(?:then|finally)\s*\(|\.finally\s*\(|(?:\?\?|\|\|)\s*Promise\.resolve\(\s*\)\s*\)\s*\.then\s*\(/;

/**
 * A queue started settled and chained on (`let queue = Promise.resolve()` then `queue.then(…)` through a const, or
 * `tails.set(key, Promise.resolve())` then `tails.get(key).then(…)` kept again): the start and a link, anywhere.
 */
const SETTLED_START = /Promise\.resolve\(\s*\)/;
const CHAINED = /\.(?:then|finally)\s*\(/;

/**
 * What a module's text says it may hold: nothing (`none`), locks of some kind (`locks`), or locks held across code
 * paths too (`held`: held-locks/analysis.ts reads the code paths of key-value locks, advisory locks, lock libraries and
 * in-process flags, the only facts made from them; where none can be, none are recorded).
 */
export type Evidence = "none" | "locks" | "held";

const cache = new WeakMap<object, (text: string) => Evidence>();

function anyOf(sources: readonly string[]): RegExp {
  return new RegExp(sources.map((s) => `(?:${s})`).join("|"), "i");
}

/**
 * The check for one vocabulary and the recognizers' evidence, built once per vocabulary (ESLint hands every file of
 * a configuration the same settings object). A module is read at most twice: most modules with a lock name it
 * early, and the field and delete patterns are tried only on the others.
 */
export function lockEvidence(vocabulary: ResolvedVocabulary, stores: readonly RegExp[]): (text: string) => Evidence {
  const hit = cache.get(vocabulary.raw);
  if (hit) return hit;
  const named = anyOf([...roots([...LOCK_WORDS, ...LOCK_VERBS]).map(escape), ...stores.map((r) => r.source)]);
  const fields = [...vocabulary.raw.stateFields, ...vocabulary.raw.flagFields].map(spellings);
  const fieldsOrDeletes = anyOf([`(?:${fields.join("|")})${FIELD_END}`, DELETES.source]);
  const check = (text: string): Evidence => {
    if (
      named.test(text) ||
      (SET_TRUE.test(text) && (SET_FALSE.test(text) || DELETE_SLOT.test(text))) ||
      (TABLE_HAS.test(text) && TABLE_DELETE.test(text) && TABLE_TAKE.test(text))
    )
      return "held";
    return fieldsOrDeletes.test(text) ||
      (MEMO_FILL.test(text) && MAKES_PROMISES.test(text)) ||
      CHAIN_KEPT.test(text) ||
      (SETTLED_START.test(text) && CHAINED.test(text))
      ? "locks"
      : "none";
  };
  cache.set(vocabulary.raw, check);
  return check;
}
