/**
 * Shared vocabularies. Each can be set once for every rule in `settings.locks`, and some rules accept the same keys as
 * options; a rule option wins over the setting, which wins over the default (as in eslint-plugin-n's get-* helpers).
 * Names are compared normalised (case, `_` and `-` ignored), so `updated_at`, `updatedAt` and `UPDATED_AT` are one name.
 */
import type { JSONSchema4 } from "@typescript-eslint/utils/json-schema";
import { nameWords } from "./words.js";

export interface Vocabulary {
  /** Fields that hold a row's lifecycle state; only they can carry a claimed value (`status`, `syncState`). */
  readonly stateFields: readonly string[];
  /** Boolean columns that mean "someone is working on this row" when true (`is_processing`, `locked`). */
  readonly flagFields: readonly string[];
  /** Status values that mean "someone is working on this row": claiming them is taking a lock. */
  readonly inProgressValues: readonly string[];
  /** Values ending in -ING that are not in progress (waiting states). */
  readonly waitingValues: readonly string[];
  /** Timestamps that move while the holder makes progress: staleness judged on them tells slow from dead. */
  readonly progressTimeFields: readonly string[];
  /** Timestamps set once when work starts: staleness judged on them kills slow, healthy work. */
  readonly startTimeFields: readonly string[];
  /** Columns that identify the holder (owner, token): a write filtered on one is fenced. */
  readonly ownerFields: readonly string[];
}

/** Words that, before an -ING verb, say the work has not started: INCOMPLETE_ONBOARDING, READY_FOR_PROCESSING. */
const NOT_YET = new Set([
  "incomplete",
  "ready",
  "for",
  "to",
  "not",
  "needs",
  "need",
  "requires",
  "before",
  "pre",
  "queued",
  "scheduled",
  "unstarted",
]);

export const DEFAULT_VOCABULARY: Vocabulary = {
  stateFields: ["status", "state", "phase", "stage"],
  flagFields: [
    "processing",
    "locked",
    "inProgress",
    "running",
    "busy",
    "sending",
    "syncing",
    "generating",
    "working",
    "importing",
    "exporting",
    "claimed",
    "leased",
  ],
  inProgressValues: [
    // Not ACTIVE or RESERVED: in most schemas they mean "enabled" and "booked", not "someone is working on it".
    "GENERATING",
    "RUNNING",
    "PROCESSING",
    "IN_PROGRESS",
    "LOCKED",
    "CLAIMED",
    "STARTED",
    "BUSY",
    "EXECUTING",
    "WORKING",
    "LEASED",
    "ACQUIRED",
    "PROCESS",
    "IN_PROCESS",
    "ONGOING",
    "WIP",
    "DEQUEUED",
  ],
  waitingValues: [
    "PENDING",
    "WAITING",
    "AWAITING",
    "REMAINING",
    "MISSING",
    "UPCOMING",
    "INCOMING",
    "OUTGOING",
    "EXISTING",
    "TRAILING",
    "BLOCKING",
    "PENDING_RETRY",
    "STALLING",
  ],
  progressTimeFields: [
    "updatedAt",
    "modifiedAt",
    "heartbeatAt",
    "lastHeartbeatAt",
    "heartbeat",
    "lastHeartbeat",
    "heartbeatOn",
    "lastProgressAt",
    "progressAt",
    "progressUpdatedAt",
    "lastSeenAt",
    "lastActivityAt",
    "touchedAt",
    "pingedAt",
    "leaseExpiresAt",
    "leaseUntil",
    "leasedUntil",
    "lockedUntil",
    "lockExpiresAt",
    "lockExpiry",
    "expiresAt",
    "expireAt",
    "visibleAt",
    "keepAliveAt",
    "renewedAt",
  ],
  startTimeFields: [
    "startedAt",
    "startedOn",
    "createdAt",
    "createdOn",
    "claimedAt",
    "lockedAt",
    "enqueuedAt",
    "queuedAt",
    "requestedAt",
    "beganAt",
    "startTime",
    "startAt",
    "acquiredAt",
    "pickedAt",
    "pickedUpAt",
    "insertedAt",
    "attemptedAt",
  ],
  ownerFields: [
    "lockedBy",
    "claimedBy",
    "owner",
    "ownerId",
    "workerId",
    "worker",
    "lockToken",
    "fencingToken",
    "leaseToken",
    "leaseId",
    "lockId",
    "lockOwner",
    "token",
    "runId",
    "processedBy",
    "leaseOwner",
    "version",
    "holder",
    "lockHolder",
    "lockValue",
    "ownedBy",
  ],
};

const VOCABULARY_KEYS = Object.keys(DEFAULT_VOCABULARY) as (keyof Vocabulary)[];

const DESCRIPTIONS: Record<keyof Vocabulary, string> = {
  stateFields: "Fields that hold a row's lifecycle state (a field ending in one of these names counts too).",
  flagFields:
    "Boolean fields that mark a row as being worked on when true (an `is` prefix is implied: `isProcessing`, `is_processing`).",
  inProgressValues: "Status values that mean a row is being worked on; a write that claims one takes a lock.",
  waitingValues: "Values ending in -ING that are waiting states, not in progress.",
  progressTimeFields: "Timestamp fields that move while the holder makes progress (updatedAt, heartbeatAt).",
  startTimeFields: "Timestamp fields set once when work starts (startedAt, createdAt).",
  ownerFields: "Columns that identify the lock holder (owner, token); a write filtered on one is fenced.",
};

/**
 * A name must hold something besides separators: names are compared without case, `_`, `-` and spaces, so `"_"`
 * or `" "` would be the empty name, which every field ends with.
 */
const NAME_PATTERN = "[^\\s_-]";

/** JSON-schema fragment for one vocabulary key, for rule options. */
export function vocabularySchema(key: keyof Vocabulary): JSONSchema4 {
  return {
    type: "array",
    items: { type: "string", minLength: 1, pattern: NAME_PATTERN },
    uniqueItems: true,
    description: DESCRIPTIONS[key],
  };
}

export function normalizeName(name: string): string {
  return name.replace(/[-_\s]/g, "").toLowerCase();
}

export interface ResolvedVocabulary {
  readonly raw: Vocabulary;
  /** A lifecycle field: named in `stateFields` or ending in one (`syncState`, `job_status`). */
  isStateField(field: string): boolean;
  /** A processing flag: named in `flagFields`, with or without an `is` prefix, or qualified by a word before one that
   * names work under way (`syncInProgress`). */
  isFlagField(field: string): boolean;
  /** An in-progress value, of `field` when given (a module may hold a row in a value of one field only). */
  isInProgressValue(value: string, field?: string): boolean;
  isProgressTimeField(field: string): boolean;
  isStartTimeField(field: string): boolean;
  /** A timestamp-looking field: in either vocabulary, or named like one (`*At`, `*_at`, `*_on`, `*Time`, `*Until`). */
  isTimeField(field: string): boolean;
  isOwnerField(field: string): boolean;
}

const cache = new WeakMap<object, ResolvedVocabulary>();
const defaultResolved = resolveVocabulary(DEFAULT_VOCABULARY);

function nameSet(names: readonly string[]): Set<string> {
  return new Set(names.map(normalizeName));
}

/** True when the field is in the set, or ends in a listed name (`generation_started_at` ends in `startedAt`). */
function matchesField(set: Set<string>, field: string): boolean {
  const n = normalizeName(field);
  if (set.has(n)) return true;
  for (const name of set) if (name.length >= 6 && n.endsWith(name)) return true;
  return false;
}

const TIME_NAME = /(?:_at|[a-z]At|_on|[a-z]On|Time|_time|Date|_date|[Tt]imestamp|Until|_until|[Dd]eadline)$/;

function resolveVocabulary(raw: Vocabulary): ResolvedVocabulary {
  const inProgress = nameSet(raw.inProgressValues);
  const waiting = nameSet(raw.waitingValues);
  const progress = nameSet(raw.progressTimeFields);
  const start = nameSet(raw.startTimeFields);
  const owner = nameSet(raw.ownerFields);
  const state = [...nameSet(raw.stateFields)];
  const flags = new Set([...nameSet(raw.flagFields)].map((f) => f.replace(/^is/, "")));
  // Flag words that name work under way (`inProgress`, `running`, `syncing`), not a state (`locked`, `claimed`):
  // a field that ends in one says the same of what it qualifies (`syncInProgress`, `exportRunning`; blind-10 C8c10).
  const underWay = [...flags].filter((f) => /(?:ing|inprogress|busy)$/.test(f));
  return {
    raw,
    isFlagField: (field) => {
      const n = normalizeName(field).replace(/^is/, "");
      return flags.has(n) || underWay.some((w) => n.length > w.length && n.endsWith(w));
    },
    isStateField: (field) => {
      const n = normalizeName(field);
      return state.some((name) => n === name || n.endsWith(name));
    },
    isInProgressValue(value) {
      const n = normalizeName(value);
      if (inProgress.has(n)) return true;
      if (waiting.has(n)) return false;
      // Any -ING verb that is not a waiting state: RENDERING, EXPORTING, SYNCING, VIDEO_PROCESSING; not one an earlier
      // word says is not under way yet (INCOMPLETE_ONBOARDING, READY_FOR_PROCESSING, AWAITING_SHIPPING), nor one whose
      // -ING word is itself a waiting state (WITHDRAW_PENDING, payment_pending: a request waiting for someone).
      if (!/^[a-z]{4,}ing$/.test(n)) return false;
      const words = String(value)
        .split(/[^A-Za-z]+|(?<=[a-z])(?=[A-Z])/)
        .filter(Boolean)
        .map((w) => w.toLowerCase());
      // Nor one an earlier word says has ended (INVALID_FORMATTING, FAILED_PROCESSING: the work stopped there).
      return !words.some((w, i) => waiting.has(w) || (i < words.length - 1 && (NOT_YET.has(w) || ENDED.test(w))));
    },
    isProgressTimeField: (field) => matchesField(progress, field),
    isStartTimeField: (field) => matchesField(start, field) && !matchesField(progress, field),
    isTimeField: (field) => matchesField(progress, field) || matchesField(start, field) || TIME_NAME.test(field),
    isOwnerField: (field) => matchesField(owner, field),
  };
}

/** What is wrong with a vocabulary list, in words, or undefined when it is a list of usable names. */
function vocabularyProblem(value: unknown): string | undefined {
  const shown = (v: unknown): string => {
    if (typeof v === "string") return JSON.stringify(v);
    if (typeof v === "bigint" || typeof v === "symbol" || typeof v === "function") return String(typeof v);
    const json = JSON.stringify(v);
    return json === undefined ? String(v) : json.length > 60 ? `${json.slice(0, 57)}...` : json;
  };
  if (!Array.isArray(value)) return `Got ${shown(value)}.`;
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== "string" || item.length === 0) return `Got ${shown(item)} at index ${i}.`;
    if (!new RegExp(NAME_PATTERN).test(item))
      return `Got ${shown(item)} at index ${i}, which is only separators (space, _ or -).`;
  }
  return undefined;
}

function readSettings(settings: unknown): Partial<Vocabulary> {
  if (settings === undefined || settings === null) return {};
  if (typeof settings !== "object" || Array.isArray(settings)) {
    throw new TypeError("eslint-plugin-locks: settings.locks must be an object.");
  }
  const out: Partial<Record<keyof Vocabulary, readonly string[]>> = {};
  for (const [key, value] of Object.entries(settings)) {
    // Switches, not vocabularies: `typeAware` (set by `configs["recommended-type-checked"]`, read by
    // `src/core/reading/types.ts`) and `readImports` (src/rule-kit/imported-modules.ts).
    if (key === "typeAware" || key === "readImports") {
      if (typeof value !== "boolean")
        throw new TypeError(`eslint-plugin-locks: settings.locks.${key} must be true or false.`);
      continue;
    }
    if (!(VOCABULARY_KEYS as string[]).includes(key)) {
      throw new TypeError(
        `eslint-plugin-locks: unknown key settings.locks.${key}; expected one of ${VOCABULARY_KEYS.join(", ")}.`,
      );
    }
    const problem = vocabularyProblem(value);
    if (problem !== undefined) {
      throw new TypeError(
        `eslint-plugin-locks: settings.locks.${key} must be an array of non-empty strings. ${problem}`,
      );
    }
    out[key as keyof Vocabulary] = value as string[];
  }
  return out;
}

/**
 * The vocabulary in force: rule options over `settings.locks` over the defaults.
 * Resolved once per settings object (ESLint passes the same object to every rule of a file).
 */
export function getVocabulary(
  settings: Readonly<Record<string, unknown>>,
  options?: Partial<Vocabulary>,
): ResolvedVocabulary {
  const locks = settings["locks"];
  const hasOptions = options !== undefined && VOCABULARY_KEYS.some((k) => options[k] !== undefined);
  if (locks === undefined && !hasOptions) return defaultResolved;
  if (!hasOptions && typeof locks === "object" && locks !== null) {
    const hit = cache.get(locks);
    if (hit) return hit;
  }
  const fromSettings = readSettings(locks);
  const raw = { ...DEFAULT_VOCABULARY };
  for (const key of VOCABULARY_KEYS) {
    const value = options?.[key] ?? fromSettings[key];
    if (value !== undefined) raw[key] = value;
  }
  const resolved = resolveVocabulary(raw);
  if (!hasOptions && typeof locks === "object" && locks !== null) cache.set(locks, resolved);
  return resolved;
}

/** The vocabulary with more names added to its lists (union): how rule options reach the shared model. */
export function extendVocabulary(
  base: ResolvedVocabulary,
  extensions: readonly Partial<Vocabulary>[],
): ResolvedVocabulary {
  const useful = extensions.filter((e) => VOCABULARY_KEYS.some((k) => e[k] !== undefined && e[k]!.length > 0));
  if (useful.length === 0) return base;
  const raw = { ...base.raw };
  for (const e of useful)
    for (const key of VOCABULARY_KEYS) if (e[key]) raw[key] = [...new Set([...raw[key], ...e[key]!])];
  return resolveVocabulary(raw);
}

export const LOCK_WORDS: ReadonlySet<string> = new Set([
  "lock",
  "locks",
  "locked",
  "locking",
  "unlock",
  "mutex",
  "mutexes",
  "semaphore",
  "semaphores",
  "leader",
  "leaders",
  "leadership",
  "lease",
  "leases",
  "singleton",
  "exclusive",
]);

/** Function names that take or give back a lock when they wrap an NX key (`acquire(key)`, `release(key)`). */
export const LOCK_VERBS: ReadonlySet<string> = new Set(["acquire", "release", "unlock", "relinquish"]);

/**
 * The module's vocabulary with the fields it writes the clock into (`ts: new Date()`) read as timestamps, whatever
 * their names: a filter `ts < cutoff` on such a field judges age as surely as one on `updatedAt`.
 */
export function withClockedFields(
  base: ResolvedVocabulary,
  accesses: readonly { access: string; assignments?: readonly { field: string; value: { kind: string } }[] }[],
): ResolvedVocabulary {
  const clocked = new Set<string>();
  for (const a of accesses) {
    if (a.access !== "write") continue;
    for (const as of a.assignments ?? [])
      if (as.value.kind === "now" && !base.isTimeField(as.field)) clocked.add(normalizeName(as.field));
  }
  if (clocked.size === 0) return base;
  return { ...base, isTimeField: (field) => base.isTimeField(field) || clocked.has(normalizeName(field)) };
}

/** Values that say the work is over, in English at least: never held, whoever the row still names. */
const ENDED =
  /done|complete|success|succeed|finish|cancel|fail|error|invalid(?!at)|closed|archiv|resolv|paid|sent|deliver|expire|abort|reject|skip|dismiss|discard|declin|revok|supersed|obsolete|terminated|stopped|removed|deleted/i;

/** The value says the work it stands for is over (`COMPLETED`, `failed`, `sent`): no holder keeps a row in it. */
export function saysEnded(value: string): boolean {
  return ENDED.test(value);
}

type WriteLike = {
  access: string;
  assignments?: readonly { field: string; value: { kind: string; value?: { value: unknown } } }[];
};

/**
 * The module's vocabulary with the statuses it takes a row into *with a holder* read as in-progress values, whatever
 * language they are named in: a write that sets `status` to a literal and a lock-named owner column (`lockedBy`,
 * `lockOwner`) to who takes it, where another write of the module clears that column again (`lockedBy: null`),
 * takes a lock (`status: EM_CONTAGEM, lockedBy: userId`). A waiting value (`PENDING`) or one that says the work
 * ended (`COMPLETED` written with the holder kept for the record) never becomes one.
 */
export function withHeldValues(base: ResolvedVocabulary, accesses: readonly WriteLike[]): ResolvedVocabulary {
  const writes = accesses.filter((a) => a.access === "write");
  const isHolder = (field: string) => base.isOwnerField(field) && hasLockWord(field);
  const cleared = new Set<string>();
  for (const w of writes) {
    for (const a of w.assignments ?? [])
      if (isHolder(a.field) && a.value.kind === "static" && a.value.value?.value === null)
        cleared.add(normalizeName(a.field));
  }
  if (cleared.size === 0) return base;
  const held = new Set<string>();
  const waiting = nameSet(base.raw.waitingValues);
  for (const w of writes) {
    const as = w.assignments ?? [];
    if (!as.some((a) => cleared.has(normalizeName(a.field)) && a.value.kind !== "static")) continue;
    for (const a of as) {
      const v = a.value.kind === "static" ? a.value.value?.value : undefined;
      if (
        typeof v === "string" &&
        base.isStateField(a.field) &&
        !waiting.has(normalizeName(v)) &&
        !saysEnded(v) &&
        !base.isInProgressValue(v)
      )
        held.add(normalizeName(v));
    }
  }
  if (held.size === 0) return base;
  return {
    ...base,
    isInProgressValue: (value, field) => base.isInProgressValue(value, field) || held.has(normalizeName(value)),
  };
}

/**
 * Whether a name says "lock": one of its words (split at `_`, `-`, `:`, `.`, spaces and camelCase humps) is a lock
 * word. `job_lock`, `acquireLock`, `lock:report:*` do; `actor_block`, `clock`, `blockUser` do not.
 */
export function hasLockWord(text: string, verbs = false): boolean {
  for (const word of nameWords(text)) {
    const w = word.toLowerCase();
    if (LOCK_WORDS.has(w) || (verbs && LOCK_VERBS.has(w))) return true;
  }
  return false;
}

/**
 * Whether a constant names a lock, not a setting about one: its last word is a lock word (`auto_payout_lock`,
 * `cronLock`), or a lock word opens a namespace (`lock:payout`, `mutex/reindex`). `lock_screen_enabled` and
 * `lockTimeoutMinutes` are settings.
 */
export function namesALock(text: string): boolean {
  const words = nameWords(text).map((w) => w.toLowerCase());
  if (words.length === 0) return false;
  if (LOCK_WORDS.has(words[words.length - 1]!)) return true;
  return LOCK_WORDS.has(words[0]!) && /^[A-Za-z]+[:./]/.test(text);
}
