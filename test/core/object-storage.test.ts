import { Linter, type Rule } from "eslint";
import * as tsParser from "@typescript-eslint/parser";
import * as espree from "espree";
import { describe, expect, it } from "vitest";
import type { ObjectWrite } from "../../src/core/model/accesses.js";
import { collectAccesses } from "../../src/rule-kit/inventory.js";

interface Seen {
  store: ObjectWrite["store"];
  operation: string;
  location: string | undefined;
  conditional: boolean;
  temporary: boolean;
}

/** The object writes the recognizers find in `code`, with their location as written. */
function objectWrites(code: string, { js = false } = {}): Seen[] {
  let found: Seen[] = [];
  const capture: Rule.RuleModule = {
    meta: { type: "problem", schema: [] },
    create(context) {
      const calls: unknown[] = [];
      return {
        CallExpression(node) {
          calls.push(node);
        },
        "Program:exit"() {
          const sourceCode = context.sourceCode as unknown as Parameters<typeof collectAccesses>[0];
          found = collectAccesses(sourceCode, calls as Parameters<typeof collectAccesses>[1])
            .filter((a): a is ObjectWrite => a.access === "object")
            .map((w) => ({
              store: w.store,
              operation: w.operation,
              location: w.location && sourceCode.getText(w.location),
              conditional: w.conditional,
              temporary: w.temporary ?? false,
            }));
        },
      };
    },
  };
  const linter = new Linter({ configType: "flat" });
  const messages = linter.verify(
    code,
    [
      {
        files: ["**/*.ts", "**/*.js"],
        plugins: { test: { rules: { capture } } },
        languageOptions: {
          parser: js ? espree : (tsParser as Linter.Parser),
          ecmaVersion: "latest",
          sourceType: "module",
        },
        rules: { "test/capture": "error" },
      },
    ],
    js ? "probe.js" : "probe.ts",
  );
  const fatal = messages.find((m) => m.fatal);
  if (fatal) throw new Error(fatal.message);
  return found;
}

const write = (
  store: Seen["store"],
  operation: string,
  location: string | undefined,
  over: Partial<Seen> = {},
): Seen => ({
  store,
  operation,
  location,
  conditional: false,
  temporary: false,
  ...over,
});

describe("object-storage recognizers", () => {
  it.each([
    [
      "S3 v3 PutObjectCommand",
      `await s3.send(new PutObjectCommand({ Bucket: "b", Key: "a/b.txt", Body: x }));`,
      [write("s3", "PutObject", `"a/b.txt"`)],
    ],
    [
      "S3 v3, a command held in a const, conditional",
      `const cmd = new PutObjectCommand({ Bucket: "b", Key: key, Body: x, IfNoneMatch: "*" }); await client.send(cmd);`,
      [write("s3", "PutObject", "key", { conditional: true })],
    ],
    [
      "S3 v3 CopyObjectCommand with IfMatch",
      `await s3.send(new CopyObjectCommand({ Bucket: "b", Key: k, CopySource: src, IfMatch: etag }));`,
      [write("s3", "CopyObject", "k", { conditional: true })],
    ],
    [
      "S3 v3, IfNoneMatch set to undefined sets no condition",
      `await s3.send(new PutObjectCommand({ Bucket: "b", Key: k, IfNoneMatch: undefined }));`,
      [write("s3", "PutObject", "k")],
    ],
    [
      "S3 v3, a command with an input we cannot read",
      `await s3.send(new PutObjectCommand(input));`,
      [write("s3", "PutObject", undefined, { conditional: true })],
    ],
    [
      "lib-storage Upload",
      `const u = new Upload({ client: s3, params: { Bucket: "b", Key: \`r/\${id}.mp4\`, Body: s } }); await u.done();`,
      [write("s3", "Upload", "`r/${id}.mp4`")],
    ],
    [
      "S3 v2 putObject and upload",
      `await s3.putObject({ Bucket: "b", Key: "k1" }).promise(); await s3.upload({ Bucket: "b", Key: "k2", Body: x }).promise();`,
      [write("s3", "putObject", `"k1"`), write("s3", "upload", `"k2"`)],
    ],
    [
      "GCS file().save() with a precondition",
      `await storage.bucket("b").file(name).save(data, { preconditionOpts: { ifGenerationMatch: 0 } });`,
      [write("gcs", "save", "name", { conditional: true })],
    ],
    [
      "GCS through a file variable, createWriteStream",
      `const file = bucket.file("x.ndjson"); file.createWriteStream();`,
      [write("gcs", "createWriteStream", `"x.ndjson"`)],
    ],
    [
      "GCS bucket.upload with a destination",
      `await bucket.upload("/tmp/x", { destination: "y/x" });`,
      [write("gcs", "upload", `"y/x"`)],
    ],
    [
      "Azure block blob uploadData and upload",
      `await container.getBlockBlobClient("a").uploadData(buf); await container.getBlockBlobClient("b").upload(body, n, { conditions: { ifNoneMatch: "*" } });`,
      [write("azure-blob", "uploadData", `"a"`), write("azure-blob", "upload", `"b"`, { conditional: true })],
    ],
    [
      "fs named import, exclusive flag",
      `import { writeFile } from "node:fs/promises"; await writeFile("out.json", s, { flag: "wx" });`,
      [write("fs", "writeFile", `"out.json"`, { conditional: true })],
    ],
    [
      "fs default import, a temporary path",
      `import fs from "fs"; import os from "os"; fs.writeFileSync(path.join(os.tmpdir(), "x"), s);`,
      [write("fs", "writeFileSync", `path.join(os.tmpdir(), "x")`, { temporary: true })],
    ],
    [
      "fs.promises, a temp-named variable",
      `import * as fs from "node:fs"; await fs.promises.writeFile(tmpFile, s);`,
      [write("fs", "writeFile", "tmpFile", { temporary: true })],
    ],
  ] as const)("%s", (_name, code, expected) => {
    expect(objectWrites(code)).toEqual(expected);
  });

  it("reads plain JavaScript with require()", () => {
    const code = `const { writeFile } = require("fs/promises"); const fs = require("fs");
      async function f() { await writeFile("/tmp/a", "x"); fs.createWriteStream("out.log"); }`;
    expect(objectWrites(code, { js: true })).toEqual([
      write("fs", "writeFile", `"/tmp/a"`, { temporary: true }),
      write("fs", "createWriteStream", `"out.log"`),
    ]);
  });

  it.each([
    [
      "an append overwrites nothing",
      `import fs from "node:fs"; fs.createWriteStream("a.log", { flags: "a" }); fs.writeFileSync("b.log", s, { flag: "a+" });`,
    ],
    ["an upload wrapper with a bucket alias", `await s3Service.upload("log", path, zip);`],
    ["Cloudinary and multer", `await cloudinary.uploader.upload(file, { folder: "x" }); upload.single("photo");`],
    ["a document or entity save", `await job.save(); await this.repo.save(entity); await file.save();`],
    ["another send", `await ses.send(new SendEmailCommand({ Destination: d })); await socket.send("x");`],
    ["a writeFile that is not fs", `await writeFile("x", "y"); await this.storage.writeFile("k", v);`],
    ["a local Upload class", `await uploader.done();`],
  ] as const)("ignores %s", (_name, code) => {
    expect(objectWrites(code)).toEqual([]);
  });
});
