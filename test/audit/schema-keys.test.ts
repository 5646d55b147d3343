// The unique keys a project's schemas declare (src/audit/schemas.ts) decide whether a create after a lookup is an
// exclusive insert. fixtures/projects/schema-keys holds one racy lock row per data layer (Prisma, Strapi) and a
// lookalike beside each; the editor, which reads no schema, reports none of them (no `// expect:` there).
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runAudit } from "../../src/audit/index.js";
import { readUniqueKeys } from "../../src/audit/schemas.js";
import { normalizeModel } from "../../src/core/model/names.js";
import { marked, projects } from "./helpers.js";

const project = join(projects, "schema-keys");
const where = (list: readonly { ruleId: string; file: string; line: number }[]) =>
  list.map((f) => `${f.file}:${f.line} ${f.ruleId}`);

describe("locks-audit: unique keys read from the project's schemas", () => {
  it("reports exactly the `// audit-expect:` lines", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const expected = marked(project, /\/\/ audit-expect: ([\w-]+(?:, [\w-]+)*)\s*$/);
    expect(expected).toHaveLength(3);
    expect(where(result.findings).sort()).toEqual(expected.sort());
  });

  it("names the fields the row was looked up by and the keys the schema declares", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const editors = result.findings.find(
      (f) => f.file === "src/editing/editors.ts" && f.ruleId === "locks/atomic-claim",
    )!;
    expect(editors.message).toContain(
      "this create takes a lock row in documentEditor after a separate read at line 6 found none for (documentId), but no unique key of documentEditor lies within (documentId) (the schema's keys: (documentId, editorId))",
    );
    const stage = result.findings.find((f) => f.file === "src/api/show/services/stage.ts")!;
    expect(stage.message).toContain("lock row in stage-lock after a separate read at line 7 found none for (stage)");
    expect(stage.message).toContain("(the schema's keys: (id), (documentId))");
    const q1 = result.findings.find((f) => f.ruleId === "locks/require-stale-recovery")!;
    expect(q1.message).toContain("this create takes a lock row in documentEditor once a read at line 6 found none");
  });

  it("answers Q1 by the take-over the lookup judges, and Q3 of a release by the row's own key", async () => {
    const { result } = await runAudit({ cwd: project, config: "strict", eslintConfig: false, progress: false });
    const stage = result.locks.find((l) => l.file === "src/api/show/services/stage.ts")!;
    expect(stage.q1.status).toBe("answered");
    expect(stage.q3.how).toContain("checked by a separate read at line 7");
    expect(result.findings.some((f) => f.ruleId === "locks/owner-checked-release")).toBe(false);
  });

  it("without a schema the insert's exclusivity is unknown, and nothing is reported", async () => {
    const dir = mkdtempSync(join(tmpdir(), "locks-schema-none-"));
    mkdirSync(join(dir, "src"));
    writeFileSync(
      join(dir, "src/editors.ts"),
      [
        'import { PrismaClient } from "@prisma/client";',
        "const db = new PrismaClient();",
        "export async function startEditing(documentId: string, editorId: string) {",
        "  const current = await db.documentEditor.findFirst({ where: { documentId } });",
        "  if (current) return false;",
        "  await db.documentEditor.create({ data: { documentId, editorId } });",
        "  return true;",
        "}",
        "export async function stopEditing(documentId: string, editorId: string) {",
        "  await db.documentEditor.deleteMany({ where: { documentId, editorId } });",
        "}",
        "",
      ].join("\n"),
    );
    const { result } = await runAudit({ cwd: dir, config: "strict", eslintConfig: false, progress: false });
    expect(result.findings).toEqual([]);
    expect(result.locks).toEqual([]);
  });
});

describe("readUniqueKeys", () => {
  const write = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), "locks-schemas-"));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return dir;
  };

  it("reads @id, @unique, @@id and @@unique (also with fields:), under the model's name and its @@map table", () => {
    const dir = write({
      "prisma/schema.prisma": [
        "model JobLease {",
        "  id      Int    @id @default(autoincrement())",
        "  name    String @unique",
        "  shard   Int",
        "  owner   String",
        '  @@unique(fields: [shard, owner], name: "by_owner")',
        '  @@map("job_leases")',
        "}",
        "model Pair {",
        "  a String",
        "  b String",
        "  @@id([a, b])",
        "  @@index([b])",
        "}",
      ].join("\n"),
    });
    const keys = readUniqueKeys(dir);
    expect(keys[normalizeModel("JobLease")]).toEqual([["id"], ["name"], ["shard", "owner"]]);
    // The table name normalises to the same model as the client's name, so both read the same keys.
    expect(normalizeModel("job_leases")).toBe(normalizeModel("jobLease"));
    expect(keys[normalizeModel("Pair")]).toEqual([["a", "b"]]);
  });

  it("reads Strapi content types: id, documentId and unique attributes, by singular name and collection", () => {
    const dir = write({
      "src/api/cron-lock/content-types/cron-lock/schema.json": JSON.stringify({
        collectionName: "cron_locks",
        info: { singularName: "cron-lock" },
        attributes: { job_name: { type: "string", unique: true }, locked: { type: "boolean" } },
      }),
      "src/api/cron-lock/other/schema.json": JSON.stringify({
        info: { singularName: "not-a-content-type" },
        attributes: {},
      }),
    });
    const keys = readUniqueKeys(dir);
    expect(keys[normalizeModel("cron-lock")]).toEqual([["id"], ["documentId"], ["job_name"]]);
    expect(keys[normalizeModel("not-a-content-type")]).toBeUndefined();
  });

  it("leaves out a model two schemas declare differently, and schemas it cannot parse", () => {
    const dir = write({
      "a/schema.prisma": "model Slot {\n  id Int @id\n}\n",
      "b/schema.prisma": "model Slot {\n  id Int @id\n  code String @unique\n}\nmodel Same {\n  id Int @id\n}\n",
      "c/schema.prisma": "model Same {\n  id Int @id\n}\n",
      "d/broken.prisma": "model {{{",
      "node_modules/pkg/schema.prisma": "model Hidden {\n  id Int @id\n}\n",
    });
    const keys = readUniqueKeys(dir);
    expect(keys[normalizeModel("Slot")]).toBeUndefined();
    expect(keys[normalizeModel("Same")]).toEqual([["id"]]);
    expect(keys[normalizeModel("Hidden")]).toBeUndefined();
  });
});
