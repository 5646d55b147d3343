// Age read in an `if` test (`describeTest`): a row's time compared with a duration ago is age; the time this very
// code has been running, measured between two clock readings of its own, is not (issue 35: a notification route's
// time budget was read as a staleness check and its per-row writes as a sweep decided in JavaScript).
import { describe, expect, it } from "vitest";
import type { TSESTree } from "@typescript-eslint/utils";
import { describeTest, oldWhenTrue } from "../../src/core/reading/guards.js";
import { getVocabulary } from "../../src/core/model/settings.js";
import { probeWith } from "./probe.js";

const vocabulary = getVocabulary({});
const judgesAge = (code: string) =>
  probeWith(
    code,
    false,
    (sourceCode, node) => describeTest(sourceCode, node as TSESTree.Expression, false, vocabulary).judgesAge,
  );

describe("describeTest", () => {
  it("reads a row's time against a duration ago as age", () => {
    expect(
      judgesAge(`
        const now = Date.now();
        probe(Date.now() - job.startedAt.getTime() > LIMIT);
        probe(now - new Date(lock.lockedAt).getTime() < TTL);
        probe(job.updatedAt < new Date(Date.now() - 60_000));
      `),
    ).toEqual([true, true, true]);
  });

  it('reads a time field fetched by name from a document (`snap.get("startedAt")`) and names that field', () => {
    const fields = probeWith(
      `
        const startedAt = snap.get("startedAt");
        probe(now - startedAt.toDate().getTime() < ttlSec * 1000);
        probe(Date.now() - doc.get("heartbeatAt") > LIMIT);
      `,
      false,
      (sourceCode, node) => describeTest(sourceCode, node as TSESTree.Expression, false, vocabulary).timeFields,
    );
    // The methods called on the time (`toDate`, `getTime`) are no fields of the row.
    expect(fields).toEqual([["startedAt"], ["heartbeatAt"]]);
  });

  it("does not read a list named after stale rows as a verdict (blind-7: `if (stuckLinks.length === 0) return`)", () => {
    expect(
      judgesAge(`
        probe(stuckLinks.length === 0);
        probe(staleJobs.length > 0);
      `),
    ).toEqual([false, false]);
    expect(judgesAge(`probe(isStale); probe(!expired);`)).toEqual([true, true]);
  });

  it("does not read the code's own stopwatch as age, whatever the variable is called", () => {
    expect(
      judgesAge(`
        const startTime = Date.now();
        const started = new Date().getTime();
        const t0 = performance.now();
        probe(Date.now() - startTime > TIME_BUDGET_MS);
        probe(new Date().getTime() - started >= BUDGET);
        probe(performance.now() - t0 > 5000);
      `),
    ).toEqual([false, false, false]);
  });
});

describe("oldWhenTrue", () => {
  const direction = (code: string) => probeWith(code, false, (sourceCode, node) => oldWhenTrue(sourceCode, node));

  it("says which way an age test points: the side that grows as time passes decides", () => {
    expect(
      direction(`
        const now = Date.now();
        const runtime = Date.now() - (item.startedAt?.getTime() || 0);
        probe(runtime > 10 * 60 * 1000);
        probe(runtime < LIMIT);
        probe(job.updatedAt < new Date(now - 60_000));
        probe(lease.expiresAt > new Date());
        probe(lease.expiresAt.getTime() <= Date.now());
        probe(!(Date.now() - lock.at > TTL));
      `),
    ).toEqual([true, false, true, false, true, false]);
  });

  it("leaves a test it cannot read undecided", () => {
    expect(
      direction(`
        probe(job.updatedAt < cutoff);
        probe(minutesSince(job.updatedAt) > 5);
        probe(a > b);
      `),
    ).toEqual([undefined, undefined, undefined]);
  });
});
