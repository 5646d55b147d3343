// Raw SQL text that cannot name a model is not handed to the parser (see SLOT_TABLE in src/core/languages/sql.ts).
import { describe, expect, it } from "vitest";
import { parseSql } from "../../src/core/languages/sql.js";
import { translateSql } from "../../src/core/languages/sql/statements.js";

describe("parseSql: a table known only at run time", () => {
  it.each([
    "update :__p0 set status = 'RUNNING' where id = :__p1",
    "UPDATE :__p0._private_jobs AS jobs SET locked_at = now() WHERE id = $1",
    "delete from :__p0 where expires_at < now()",
    "insert into :__p0 (name, owner) values (:__p1, :__p2) on conflict do nothing",
    "select id from :__p0.jobs where status = 'RUNNING'",
    "select * from jobs j join :__p0 l on l.id = j.id where j.status = 'RUNNING'",
    "SELECT * FROM (:__p0) kcu WHERE kcu.name = 'PRIMARY'",
  ])("%s: no statement", (text) => {
    expect(parseSql(text, false)).toBeUndefined();
    expect(parseSql(text, true)).toBeUndefined();
  });

  it.each([
    "update jobs set status = :__p0 where id = :__p1",
    "-- copied from :__p0\nupdate jobs set status = 'RUNNING' where id = $1",
    "select id from jobs where note = 'moved from :__p0' and status = 'RUNNING'",
    "update jobs set status = 'RUNNING' from batches where batches.id = jobs.batch_id and batches.owner = :__p0",
  ])("%s: still parsed", (text) => {
    expect(parseSql(text, false)?.ast["type"]).toBeDefined();
  });
});

describe("translateSql: a CASE of fixed values", () => {
  const assignment = (text: string, column: string) => {
    const parsed = parseSql(text, false)!;
    const statement = translateSql(parsed, () => undefined, parsed.ast as never)!;
    return statement.assignments.find((a) => a.field === column)?.value;
  };

  it("reads the values a CASE with an ELSE picks from", () => {
    expect(
      assignment(
        "UPDATE jobs SET status = CASE WHEN attempts >= 5 THEN 'failed' ELSE 'queued' END WHERE id = $1",
        "status",
      ),
    ).toEqual({ kind: "other", choices: [{ value: "failed" }, { value: "queued" }] });
  });

  it("knows no choices for a CASE without an ELSE or with a branch that is not a fixed value", () => {
    expect(
      assignment("UPDATE jobs SET status = CASE WHEN attempts >= 5 THEN 'failed' END WHERE id = $1", "status"),
    ).toEqual({
      kind: "other",
    });
    expect(
      assignment("UPDATE jobs SET run_at = CASE WHEN attempts >= 5 THEN run_at ELSE now() END WHERE id = $1", "run_at"),
    ).toEqual({ kind: "other" });
  });
});
