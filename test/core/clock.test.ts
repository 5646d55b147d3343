// One notion of the clock for every store (issue 34): a value is the clock when JavaScript reads it, or when it is
// SQL that reads the database's clock, whichever store's way splices the SQL in. Before, each recognizer had its
// own list, and they disagreed: `sql\`now()::timestamptz\`` was a clock for Drizzle and not for Kysely, a shifted
// `literal("NOW() - INTERVAL …")` was one in raw SQL and not for Sequelize, SQLite's `datetime('now')` was one for
// Knex and not in raw SQL, and an ISO string of the clock was one for Payload and not for Mongo.
import { describe, expect, it } from "vitest";
import { assignedValue } from "../../src/core/reading/assignments.js";
import { isClockValue, sqlFragment } from "../../src/core/reading/clock.js";
import { isSqlClock } from "../../src/core/languages/sql/values.js";
import { probeWith } from "./probe.js";

const clock = (code: string) => probeWith(code, false, (sourceCode, node) => isClockValue(sourceCode, node));

describe("isClockValue", () => {
  it("reads the JavaScript clock, through consts and as an ISO string or epoch", () => {
    expect(
      clock(`
        const now = new Date();
        probe(new Date()); probe(Date.now()); probe(now); probe(new Date().toISOString()); probe(now.getTime());
      `),
    ).toEqual([true, true, true, true, true]);
  });

  it("reads a time class's own clock and a date library called with nothing (blind-6: a Firestore lock stamped Timestamp.now())", () => {
    expect(
      clock(`
        const stamp = new Date().toISOString();
        probe(Timestamp.now()); probe(admin.firestore.Timestamp.now()); probe(DateTime.now()); probe(moment());
        probe(dayjs()); probe(stamp);
      `),
    ).toEqual(Array(6).fill(true));
  });

  it("does not read a lower-case receiver's now(), a clock given an instant, or a library given a date", () => {
    expect(
      clock(`
        probe(performance.now()); probe(clock.now()); probe(Timestamp.now(1)); probe(moment(job.createdAt));
        probe(dayjs("2020-01-01")); probe(TIMESTAMP.now());
      `),
    ).toEqual(Array(6).fill(false));
  });

  it("reads an instant kept in milliseconds ahead of the clock or behind it by a known term (blind-21: a Firestore lease stamped expiresAtMs)", () => {
    expect(
      clock(`
        const now = Date.now();
        const TTL_MS = 30000;
        probe(now + TTL_MS); probe(Date.now() + ttl * 1000); probe(TTL_MS + Date.now()); probe(Date.now() - 60000);
      `),
    ).toEqual([true, true, true, true]);
  });

  it("does not read a duration, the difference of two instants, as the clock", () => {
    expect(
      clock(`
        const started = Date.now();
        probe(Date.now() - started); probe(Date.now() - job.startedAt); probe(Date.now() - Date.now()); probe(ttl + 1000);
        probe("w-" + Date.now()); probe(workerId + Date.now()); probe(Date.now() + suffix);
      `),
    ).toEqual([false, false, false, false, false, false, false]);
  });

  it("reads the database's clock however a store splices SQL in", () => {
    expect(
      clock(`
        probe(sql\`now()\`);
        probe(sql\`now()::timestamptz\`);
        probe(sql<Date>\`CURRENT_TIMESTAMP\`);
        probe(knex.fn.now());
        probe(trx.fn.now(6));
        probe(knex.raw("now()"));
        probe(sql.raw("CURRENT_TIMESTAMP"));
        probe(eb.fn("now"));
        probe(Sequelize.fn("NOW"));
        probe(sequelize.literal("CURRENT_TIMESTAMP"));
        probe(sequelize.literal("NOW() - INTERVAL '5 minutes'"));
        probe(() => "NOW()");
        probe(knex.raw("datetime('now')"));
      `),
    ).toEqual(Array(13).fill(true));
  });

  it("is not fooled by SQL or values that read no clock", () => {
    expect(
      clock(`
        probe(sql\`'RUNNING'\`);
        probe(sql\`now() - \${ttl}\`);
        probe(knex.raw("updated_at"));
        probe(eb.fn("lower"));
        probe(Sequelize.literal("now() - updated_at"));
        probe(new Date(0));
        probe(new Date("2000-01-01"));
        probe(() => "RUNNING");
        probe(job.updatedAt);
        probe(raw("now()", extra));
      `),
    ).toEqual(Array(10).fill(false));
  });
});

describe("isSqlClock", () => {
  it("reads clocks as whole statements do, SQLite's included", () => {
    for (const text of [
      "now()",
      "CURRENT_TIMESTAMP",
      "localtimestamp",
      "now()::timestamptz",
      "datetime('now')",
      "unixepoch()",
      "strftime('%s', 'now')",
    ])
      expect([text, isSqlClock(text)]).toEqual([text, true]);
    for (const text of ["updated_at", "datetime(updated_at)", "now() - updated_at", "1; DROP TABLE jobs", "'now'"])
      expect([text, isSqlClock(text)]).toEqual([text, false]);
  });
});

describe("sqlFragment and assignedValue", () => {
  it("gives the SQL text a value splices in, and what a write stores", () => {
    expect(probeWith(`probe(eb.fn("now")); probe(x.fn.now()); probe(sql\`a\${b}\`);`, false, sqlFragment)).toEqual([
      "now()",
      "now()",
      undefined,
    ]);
    expect(
      probeWith(`const S = "RUNNING"; probe(S); probe(knex.fn.now()); probe(job.attempts + 1);`, false, assignedValue),
    ).toEqual([{ kind: "static", value: { value: "RUNNING" } }, { kind: "now" }, { kind: "other" }]);
  });
});
