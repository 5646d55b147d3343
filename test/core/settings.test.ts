import { describe, expect, it } from "vitest";
import { DEFAULT_VOCABULARY, getVocabulary, namesALock, saysEnded } from "../../src/core/model/settings.js";

describe("getVocabulary: defaults", () => {
  const v = getVocabulary({});

  it("uses the default vocabulary when nothing is configured", () => {
    expect(v.raw).toEqual(DEFAULT_VOCABULARY);
    expect(getVocabulary({ unrelated: { x: 1 } }).raw).toEqual(DEFAULT_VOCABULARY);
  });

  it("knows the listed in-progress values, in any case or separator style", () => {
    for (const value of [
      "GENERATING",
      "running",
      "IN_PROGRESS",
      "in_progress",
      "InProgress",
      "in-progress",
      "LOCKED",
      "LEASED",
    ]) {
      expect(v.isInProgressValue(value), value).toBe(true);
    }
  });

  it("takes any other -ING verb as in progress", () => {
    for (const value of ["RENDERING", "EXPORTING", "syncing", "Transcoding", "UPLOADING"]) {
      expect(v.isInProgressValue(value), value).toBe(true);
    }
  });

  it("takes a value that ends in an -ING verb as in progress unless a word says the work has not started or waits", () => {
    for (const value of ["VIDEO_PROCESSING", "dataSyncing", "pdf-rendering"])
      expect(v.isInProgressValue(value), value).toBe(true);
    for (const value of [
      "INCOMPLETE_ONBOARDING",
      "READY_FOR_PROCESSING",
      "awaitingShipping",
      "PENDING_PROCESSING",
      "not_started_uploading",
      "WITHDRAW_PENDING",
      "payment_pending",
      "approvalAwaiting",
    ]) {
      expect(v.isInProgressValue(value), value).toBe(false);
    }
  });

  it("does not take waiting states or resting states as in progress", () => {
    for (const value of [
      "PENDING",
      "pending",
      "WAITING",
      "AWAITING",
      "PENDING_RETRY",
      "pendingRetry",
      "UPCOMING",
      "QUEUED",
      "DONE",
      "FAILED",
      "COMPLETED",
      "IDLE",
    ]) {
      expect(v.isInProgressValue(value), value).toBe(false);
    }
  });

  it("reads terminal values as ended, and no waiting, resting or in-progress value as one", () => {
    for (const value of [
      "COMPLETED",
      "failed",
      "DISMISSED",
      "discarded",
      "DECLINED",
      "revoked",
      "SUPERSEDED",
      "obsolete",
      "TERMINATED",
      "stopped",
      "REMOVED",
      "deleted",
    ]) {
      expect(saysEnded(value), value).toBe(true);
    }
    for (const value of ["PENDING", "QUEUED", "ACTIVE", "RUNNING", "SUSPENDED", "DEFERRED", "OPEN"]) {
      expect(saysEnded(value), value).toBe(false);
    }
  });

  it("matches time fields in camelCase and snake_case", () => {
    expect(v.isProgressTimeField("updatedAt")).toBe(true);
    expect(v.isProgressTimeField("updated_at")).toBe(true);
    expect(v.isProgressTimeField("last_heartbeat_at")).toBe(true);
    expect(v.isStartTimeField("started_at")).toBe(true);
    expect(v.isStartTimeField("generation_started_at")).toBe(true);
    expect(v.isStartTimeField("updatedAt")).toBe(false);
    expect(v.isProgressTimeField("startedAt")).toBe(false);
  });

  it("recognises timestamp-looking names that no list holds", () => {
    for (const field of ["processedAt", "processed_at", "deadline", "runUntil", "due_date", "checkedOn"]) {
      expect(v.isTimeField(field), field).toBe(true);
    }
    for (const field of ["status", "attempts", "priority", "ownerId"]) {
      expect(v.isTimeField(field), field).toBe(false);
    }
  });

  it("recognises owner columns, in either style and as a suffix of a longer name", () => {
    for (const field of [
      "lockedBy",
      "locked_by",
      "LOCKED_BY",
      "workerId",
      "worker_id",
      "fencingToken",
      "lease_id",
      "version",
      "jobLockedBy",
    ]) {
      expect(v.isOwnerField(field), field).toBe(true);
    }
    for (const field of ["id", "userId", "status", "tenantId"]) {
      expect(v.isOwnerField(field), field).toBe(false);
    }
  });
});

describe("getVocabulary: settings.locks and rule options", () => {
  it("replaces a default list with the one in settings.locks", () => {
    const v = getVocabulary({ locks: { ownerFields: ["holderId"] } });
    expect(v.isOwnerField("holderId")).toBe(true);
    expect(v.isOwnerField("holder_id")).toBe(true);
    expect(v.isOwnerField("lockedBy")).toBe(false);
    // other lists keep their defaults
    expect(v.raw.inProgressValues).toEqual(DEFAULT_VOCABULARY.inProgressValues);
    expect(v.isProgressTimeField("updatedAt")).toBe(true);
  });

  it("adds in-progress values from settings; the -ING rule still applies", () => {
    const v = getVocabulary({ locks: { inProgressValues: ["CHECKED_OUT"] } });
    expect(v.isInProgressValue("checked_out")).toBe(true);
    expect(v.isInProgressValue("CheckedOut")).toBe(true);
    expect(v.isInProgressValue("GENERATING")).toBe(true);
  });

  it("lets settings name more waiting states", () => {
    const v = getVocabulary({ locks: { waitingValues: [...DEFAULT_VOCABULARY.waitingValues, "QUEUEING"] } });
    expect(v.isInProgressValue("QUEUEING")).toBe(false);
    expect(getVocabulary({}).isInProgressValue("QUEUEING")).toBe(true);
  });

  it("honours snake_case names given in settings for camelCase fields", () => {
    const v = getVocabulary({ locks: { progressTimeFields: ["last_ping_at"] } });
    expect(v.isProgressTimeField("lastPingAt")).toBe(true);
    expect(v.isProgressTimeField("updatedAt")).toBe(false);
  });

  it("prefers a rule option over the setting, key by key", () => {
    const settings = { locks: { ownerFields: ["fromSettings"], startTimeFields: ["kickedOffAt"] } };
    const v = getVocabulary(settings, { ownerFields: ["fromOptions"] });
    expect(v.isOwnerField("fromOptions")).toBe(true);
    expect(v.isOwnerField("fromSettings")).toBe(false);
    expect(v.isStartTimeField("kickedOffAt")).toBe(true);
    expect(v.isStartTimeField("startedAt")).toBe(false);
  });

  it("ignores an options object that sets no vocabulary key", () => {
    const settings = { locks: { ownerFields: ["holderId"] } };
    expect(getVocabulary(settings, {}).isOwnerField("holderId")).toBe(true);
    expect(getVocabulary(settings, { ownerFields: undefined }).isOwnerField("holderId")).toBe(true);
  });

  it("resolves one settings object once", () => {
    const settings = { locks: { ownerFields: ["holderId"] } };
    expect(getVocabulary(settings)).toBe(getVocabulary(settings));
    expect(getVocabulary({})).toBe(getVocabulary({}));
  });

  it("throws on an unknown settings.locks key, naming the valid ones", () => {
    expect(() => getVocabulary({ locks: { ownerField: ["x"] } })).toThrow(TypeError);
    expect(() => getVocabulary({ locks: { ownerField: ["x"] } })).toThrow(
      "eslint-plugin-locks: unknown key settings.locks.ownerField; expected one of stateFields, flagFields, inProgressValues, waitingValues, progressTimeFields, startTimeFields, ownerFields.",
    );
  });

  it("knows lifecycle fields by name or suffix, and takes them from settings", () => {
    const v = getVocabulary({});
    for (const f of ["status", "state", "syncState", "job_status", "PHASE", "renderStage"])
      expect(v.isStateField(f), f).toBe(true);
    for (const f of ["role", "kind", "statusMessage", "name"]) expect(v.isStateField(f), f).toBe(false);
    expect(getVocabulary({ locks: { stateFields: ["lifecycle"] } }).isStateField("lifecycle")).toBe(true);
    expect(getVocabulary({ locks: { stateFields: ["lifecycle"] } }).isStateField("status")).toBe(false);
  });

  it("throws on a value that is not an array of non-empty strings", () => {
    const message = "eslint-plugin-locks: settings.locks.ownerFields must be an array of non-empty strings.";
    expect(() => getVocabulary({ locks: { ownerFields: "lockedBy" } })).toThrow(message);
    expect(() => getVocabulary({ locks: { ownerFields: [""] } })).toThrow(message);
    expect(() => getVocabulary({ locks: { ownerFields: [42] } })).toThrow(message);
  });

  it("says which item is wrong, and rejects names made only of separators (they would match every field)", () => {
    expect(() => getVocabulary({ locks: { stateFields: "status" } })).toThrow(
      'eslint-plugin-locks: settings.locks.stateFields must be an array of non-empty strings. Got "status".',
    );
    expect(() => getVocabulary({ locks: { ownerFields: ["lockedBy", 42] } })).toThrow(
      "eslint-plugin-locks: settings.locks.ownerFields must be an array of non-empty strings. Got 42 at index 1.",
    );
    expect(() => getVocabulary({ locks: { stateFields: ["_"] } })).toThrow(
      'eslint-plugin-locks: settings.locks.stateFields must be an array of non-empty strings. Got "_" at index 0, which is only separators (space, _ or -).',
    );
    expect(() => getVocabulary({ locks: { flagFields: [" - "] } })).toThrow("settings.locks.flagFields");
    expect(getVocabulary({ locks: { stateFields: ["état", "lifecycle_2"] } }).isStateField("lifecycle2")).toBe(true);
    expect(getVocabulary({ locks: { stateFields: ["état"] } }).isStateField("jobÉtat")).toBe(true);
  });

  it("throws when settings.locks is not an object", () => {
    expect(() => getVocabulary({ locks: ["lockedBy"] })).toThrow(
      "eslint-plugin-locks: settings.locks must be an object.",
    );
    expect(() => getVocabulary({ locks: "strict" })).toThrow("eslint-plugin-locks: settings.locks must be an object.");
  });
});

describe("namesALock", () => {
  it("reads a constant as a lock's name when a lock word ends it or opens its namespace", () => {
    expect(
      ["auto_payout_lock", "cronLock", "lock:payout", "mutex/reindex", "weekly-digest-lease"].map(namesALock),
    ).toEqual([true, true, true, true, true]);
  });
  it("does not read settings about locks as locks", () => {
    expect(
      ["lock_screen_enabled", "lockTimeoutMinutes", "unlock_hint", "clock_offset", "theme"].map(namesALock),
    ).toEqual([false, false, false, false, false]);
  });
});
