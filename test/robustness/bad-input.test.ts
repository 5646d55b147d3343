// Bad input: invalid rule options and settings.locks values give a configuration error that names the rule or
// the setting; files with syntax errors, huge files, deeply nested expressions, odd Unicode and huge SQL
// templates are linted without a rule exception. The suite runs with LOCKS_DEBUG=1 (vitest.config.ts), so an
// error the inventory would swallow for users surfaces here as a thrown exception.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tsParser from "@typescript-eslint/parser";
import { ESLint, Linter } from "eslint";
import { Linter as Linter9 } from "eslint-v9";
import * as espree from "espree";
import { afterAll, describe, expect, it } from "vitest";
import plugin from "../../src/index.js";
import { DEFAULT_VOCABULARY } from "../../src/core/model/settings.js";

const linter = new Linter({ configType: "flat" });
const ts = { files: ["**/*.ts"], languageOptions: { parser: tsParser } } as Linter.Config;
const strict = [ts, plugin.configs.strict] as Linter.Config[];
const parseOnly = [ts] as Linter.Config[];

function lint(code: string, config: Linter.Config[] = strict, filename = "module.ts"): Linter.LintMessage[] {
  return linter.verify(code, config, filename);
}

const ids = (messages: readonly Linter.LintMessage[]) =>
  messages.map((m) => (m.fatal ? "fatal" : `${m.ruleId}:${m.messageId}`));

/** Runs `fn` as a user would: without LOCKS_DEBUG, so the inventory swallows internal errors. */
function asUser<T>(fn: () => T): T {
  const saved = process.env["LOCKS_DEBUG"];
  delete process.env["LOCKS_DEBUG"];
  try {
    return fn();
  } finally {
    if (saved !== undefined) process.env["LOCKS_DEBUG"] = saved;
  }
}

/** Time one call, for the notes the slow cases print. */
function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: Math.round(performance.now() - start) };
}

const CLAIM = `export async function claim(id: string) {
  const r = await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } });
  return r.count === 1;
}
`;

describe("invalid rule options: ESLint rejects them, naming the rule", () => {
  const majors = [
    ["ESLint 10", Linter],
    ["ESLint 9", Linter9],
  ] as const;
  const ruleIds = Object.keys(plugin.rules) as (keyof typeof plugin.rules)[];
  const configFor = (id: string, options: unknown[]) => [
    { plugins: { locks: plugin }, rules: { [`locks/${id}`]: ["error", ...options] } },
  ];

  describe.each(majors)("%s", (_name, LinterClass) => {
    const l = new (LinterClass as typeof Linter)({ configType: "flat" });
    const verify = (id: string, options: unknown[]) => () =>
      l.verify("const x = 1;", configFor(id, options) as unknown as Linter.Config[], "m.js");

    it.each(ruleIds.filter((id) => (plugin.rules[id].meta.schema as unknown[]).length === 0))(
      "%s takes no options",
      (id) => {
        expect(verify(id, [{ unknownOption: true }])).toThrow(`Key "locks/${id}"`);
        expect(verify(id, [{ unknownOption: true }])).toThrow("should NOT have more than 0 items");
        expect(verify(id, [])).not.toThrow();
      },
    );

    describe("progress-based-staleness (the rule with options)", () => {
      const id = "progress-based-staleness";
      const rejects = (options: unknown, ...parts: string[]) => {
        for (const part of [`Key "locks/${id}"`, ...parts]) expect(verify(id, [options]), part).toThrow(part);
      };

      it("accepts its documented options", () => {
        expect(verify(id, [{}])).not.toThrow();
        expect(
          verify(id, [{ startTimeFields: ["kickedOffAt"], progressTimeFields: ["lastPingAt", "renewed_at"] }]),
        ).not.toThrow();
      });

      it("names a misspelt option and the ones it expects", () => {
        rejects(
          { startTimeField: ["x"] },
          'Unexpected property "startTimeField"',
          'Expected properties: "startTimeFields", "progressTimeFields"',
        );
      });

      it("quotes the value that has the wrong type", () => {
        rejects({ startTimeFields: "startedAt" }, 'Value "startedAt" should be array');
        rejects({ progressTimeFields: [1] }, "Value 1 should be string");
        rejects({ progressTimeFields: [null] }, "Value null should be string");
        rejects("strict", 'Value "strict" should be object');
      });

      it("rejects empty names, names made only of separators, and repeated names", () => {
        rejects({ startTimeFields: [""] }, 'Value "" should NOT be shorter than 1 characters');
        rejects({ startTimeFields: ["_"] }, 'Value "_" should match pattern');
        rejects({ progressTimeFields: ["  "] }, 'Value "  " should match pattern');
        rejects({ startTimeFields: ["a", "a"] }, "should NOT have duplicate items");
      });

      it("rejects a second options object", () => {
        expect(verify(id, [{}, {}])).toThrow("should NOT have more than 1 items");
      });
    });
  });
});

describe("invalid settings.locks: a configuration error that names the setting", () => {
  const withSettings =
    (locks: unknown, code = "const x = 1;", filename = "m.js") =>
    () =>
      linter.verify(code, [ts, plugin.configs.strict, { settings: { locks } }] as Linter.Config[], filename);
  const keys = Object.keys(DEFAULT_VOCABULARY);

  it.each(keys)("settings.locks.%s must be an array of names", (key) => {
    const prefix = `eslint-plugin-locks: settings.locks.${key} must be an array of non-empty strings.`;
    expect(withSettings({ [key]: "status" })).toThrow(`${prefix} Got "status".`);
    expect(withSettings({ [key]: { status: true } })).toThrow(`${prefix} Got {"status":true}.`);
    expect(withSettings({ [key]: null })).toThrow(`${prefix} Got null.`);
    expect(withSettings({ [key]: ["ok", 42] })).toThrow(`${prefix} Got 42 at index 1.`);
    expect(withSettings({ [key]: ["ok", ""] })).toThrow(`${prefix} Got "" at index 1.`);
    expect(withSettings({ [key]: ["-_ "] })).toThrow(
      `${prefix} Got "-_ " at index 0, which is only separators (space, _ or -).`,
    );
    expect(withSettings({ [key]: [["nested"]] })).toThrow(`${prefix} Got ["nested"] at index 0.`);
    expect(withSettings({ [key]: ["valid", "names"] })).not.toThrow();
  });

  it("names an unknown key and lists the valid ones", () => {
    expect(withSettings({ stateField: ["status"] })).toThrow(
      `eslint-plugin-locks: unknown key settings.locks.stateField; expected one of ${keys.join(", ")}.`,
    );
  });

  it("rejects a settings.locks that is not an object", () => {
    for (const value of ["strict", 42, true, ["status"]]) {
      expect(withSettings(value), JSON.stringify(value)).toThrow(
        "eslint-plugin-locks: settings.locks must be an object.",
      );
    }
    expect(withSettings(null)).not.toThrow();
    expect(withSettings(undefined)).not.toThrow();
    expect(withSettings({})).not.toThrow();
  });

  it("surfaces for users too (no LOCKS_DEBUG), on files with and without lock code, with the rule that loaded it", () => {
    asUser(() => {
      expect(withSettings({ ownerFields: "lockedBy" })).toThrow("settings.locks.ownerFields");
      expect(withSettings({ ownerFields: "lockedBy" }, CLAIM, "m.ts")).toThrow("settings.locks.ownerFields");
      expect(withSettings({ ownerFields: "lockedBy" })).toThrow(/Error while loading rule 'locks\/|Rule: "locks\//);
    });
  });

  it("a valid setting changes what is found", () => {
    const found = linter.verify(
      CLAIM,
      [ts, plugin.configs.strict, { settings: { locks: { stateFields: ["lifecycle"] } } }] as Linter.Config[],
      "m.ts",
    );
    expect(found).toEqual([]);
  });
});

describe("files with syntax errors: a parse error, no rule exception", () => {
  const broken: [string, string][] = [
    [
      "an unterminated claim",
      `export async function claim(id) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" }`,
    ],
    [
      "an unclosed SQL template",
      "export async function claim(id) { await pool.query(`UPDATE jobs SET status = 'running' WHERE id = ${id}); }",
    ],
    ["a stray closing brace", `${CLAIM}}`],
    [
      "a half-written Redis acquire",
      `export async function lock(k) { await redis.set(k, "1", "NX", "PX", ); await redis.del(k `,
    ],
    [
      "an await outside async in a class body",
      `export class S { claim(id) { await this.prisma.job.updateMany({ where: { id } , data: { status: "RUNNING" } }) } x y }`,
    ],
    ["JSX in a .ts file", `export const view = <div>{prisma.job.updateMany({ where: { id } })}</div>;`],
    ["binary garbage", "\u0000\u0001\u0002 \uFFFF {{{ ]]] ;;; @@@"],
  ];

  it.each(broken)("%s (TypeScript parser)", (_name, code) => {
    const messages = lint(code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ fatal: true, ruleId: null, severity: 2 });
    expect(messages[0]!.message).toMatch(/^Parsing error: /);
  });

  it.each(broken)("%s (espree, plain JavaScript)", (_name, code) => {
    const messages = linter.verify(
      code,
      [{ files: ["**/*.js"], languageOptions: { parser: espree } }, plugin.configs.strict] as Linter.Config[],
      "module.js",
    );
    expect(messages.filter((m) => !m.fatal)).toEqual([]);
    expect(messages.some((m) => m.fatal)).toBe(true);
  });

  it("TypeScript syntax under the default parser is a parse error, not a crash", () => {
    const messages = linter.verify(CLAIM, [plugin.configs.strict] as Linter.Config[], "module.js");
    expect(ids(messages)).toEqual(["fatal"]);
  });

  it("empty files, comment-only files and a lone BOM are clean", () => {
    for (const code of ["", "// nothing here\n/* nor here */", "\uFEFF", "\n\n\n", "#!/usr/bin/env node\n"]) {
      expect(lint(code), JSON.stringify(code)).toEqual([]);
    }
  });
});

describe("huge files", () => {
  /** A generated CRUD service: many models, reads, updates by id, archive transitions; one claim every 200 units. */
  function generatedService(minLength: number): { code: string; claims: number } {
    const parts: string[] = [];
    let length = 0;
    let claims = 0;
    for (let i = 0; length < minLength; i++) {
      const model = `entity${i % 200}`;
      let unit = `
export async function list${i}(take: number, cursor?: string) {
  return prisma.${model}.findMany({ where: { deletedAt: null, status: "ACTIVE" }, take, ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}) });
}
export async function update${i}(id: string, input: { name?: string; note?: string }) {
  const row = await prisma.${model}.findUnique({ where: { id } });
  if (!row) throw new Error("not found: " + id);
  return prisma.${model}.update({ where: { id }, data: { ...input, updatedAt: new Date() } });
}
export async function archive${i}(id: string) {
  await prisma.${model}.updateMany({ where: { id, status: { not: "ARCHIVED" } }, data: { status: "ARCHIVED" } });
}
`;
      if (i % 200 === 0) {
        claims++;
        unit += `
export async function claimExport${i}(id: string) {
  const r = await prisma.export${i}.updateMany({ where: { id, status: { not: "EXPORTING" } }, data: { status: "EXPORTING" } });
  return r.count === 1;
}
`;
      }
      parts.push(unit);
      length += unit.length;
    }
    return { code: parts.join(""), claims };
  }

  it("a generated file over 1 MB: no exception, one finding per claim (the time is printed)", () => {
    const { code, claims } = generatedService(1_050_000);
    expect(code.length).toBeGreaterThan(1_000_000);
    const parse = timed(() => lint(code, parseOnly));
    const { value: messages, ms } = timed(() => lint(code));
    console.info(
      `bad-input: ${(code.length / 1e6).toFixed(2)} MB linted in ${ms} ms under configs.strict (parse and traversal alone: ${parse.ms} ms)`,
    );
    expect(parse.value).toEqual([]);
    expect(ids(messages)).toEqual(Array(claims).fill("locks/require-stale-recovery:missingRecovery"));
  }, 300_000);

  it("many claims of one model, each with its holder write and recovery, pair in bounded time (the time is printed)", () => {
    // Finding a claim helper's callers once scanned every call for each (claim, holder write) pair: cubic.
    const units = Array.from(
      { length: 150 },
      (_, i) => `
export async function claim${i}(id: string) {
  const r = await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING", updatedAt: new Date() } });
  if (r.count === 0) return false;
  await work(id);
  await prisma.job.updateMany({ where: { id, status: "RUNNING" }, data: { status: "DONE" } });
  return true;
}
export async function recover${i}(cutoff: Date) {
  await prisma.job.updateMany({ where: { status: "RUNNING", updatedAt: { lt: cutoff } }, data: { status: "FAILED" } });
}
`,
    ).join("");
    const { value: messages, ms } = timed(() => lint(units));
    console.info(`bad-input: 150 claims of one model linted in ${ms} ms`);
    expect(messages).toEqual([]);
  }, 300_000);
});

describe("deeply nested expressions: no rule exception at any depth the parser accepts", () => {
  // Each shape at depth n. Depth 2,000 exceeds the TypeScript parser's own stack in a test worker for most shapes
  // (a parse error, which is fine); the test then halves the depth until the file parses and lints it there, so
  // the plugin's own recursion is exercised as deep as the parser allows.
  const shapes: Record<string, (n: number) => string> = {
    "parentheses around the claimed value": (n) =>
      `export async function f(id) { await prisma.job.updateMany({ where: { id, status: { not: ${"(".repeat(n)}"RUNNING"${")".repeat(n)} } }, data: { status: "RUNNING" } }); }`,
    "a lock key built with + ": (n) =>
      `export async function f(id) { await redis.set("lock:" + ${Array(n).fill("id").join(" + ")}, "1", "NX"); }`,
    "a status value built with +": (n) =>
      `export async function f(id) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: ${Array(n).fill('"R"').join(" + ")} } }); }`,
    "a member chain as the client": (n) =>
      `export async function f(id) { await x${".a".repeat(n)}.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); }`,
    "nested ternaries as the claimed value": (n) =>
      `export async function f(id, c) { await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: ${Array(n).fill('c ? "A" :').join(" ")} "RUNNING" } }); }`,
    "nested ternaries in a guard": (n) =>
      `export async function f(id, job) { if (${Array(n).fill('job.status === "A" ? true :').join(" ")} false) return; await prisma.job.update({ where: { id }, data: { status: "RUNNING" } }); }`,
    "a guard of n && conditions": (n) =>
      `export async function f(id, job) { if (${Array(n).fill('job.status !== "RUNNING"').join(" && ")}) await prisma.job.update({ where: { id }, data: { status: "RUNNING" } }); }`,
    "a guard of n (a || b) conditions": (n) =>
      `export async function f(id, job) { if (${Array(n).fill('(job.status !== "RUNNING" || job.a)').join(" && ")}) await prisma.job.update({ where: { id }, data: { status: "RUNNING" } }); }`,
    "nested ifs around a write": (n) =>
      `export async function f(id, job) { ${Array(n).fill('if (job.status !== "RUNNING" || job.x) {').join("\n")} await prisma.job.update({ where: { id }, data: { status: "RUNNING" } }); ${"}".repeat(n)} }`,
    "nested Prisma AND": (n) =>
      `export async function f(id) { await prisma.job.updateMany({ where: ${Array(n).fill("{ AND: [").join("")}{ id }, { status: { not: "RUNNING" } }${"] }".repeat(n)}, data: { status: "RUNNING" } }); }`,
    "nested Mongo $and": (n) =>
      `export async function f(id) { await Job.findOneAndUpdate(${Array(n).fill("{ $and: [").join("")}{ _id: id }, { status: { $ne: "running" } }${"] }".repeat(n)}, { $set: { status: "running" } }); }`,
    "nested Sequelize Op.and": (n) =>
      `import { Op } from "sequelize"; export async function f(id) { await Job.update({ status: "running" }, { where: ${Array(n).fill("{ [Op.and]: [").join("")}{ id }, { status: { [Op.ne]: "running" } }${"] }".repeat(n)} }); }`,
    "nested Drizzle and()": (n) =>
      `import { and, eq, ne } from "drizzle-orm"; export async function f(id) { await db.update(jobs).set({ status: "running" }).where(${Array(n).fill("and(eq(jobs.id, id), ").join("")}ne(jobs.status, "running")${")".repeat(n)}); }`,
    "a Knex chain of n where()": (n) =>
      `export async function f(id) { await knex("jobs")${Array(n).fill(".where('id', id)").join("")}.whereNot('status', 'running').update({ status: 'running' }); }`,
    "a Kysely chain of n where()": (n) =>
      `export async function f(id) { await db.updateTable("jobs").set({ status: "running" })${Array(n).fill(".where('id', '=', id)").join("")}.where('status', '!=', 'running').execute(); }`,
    "a .then chain of n links": (n) =>
      `export function f(id) { return prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } })${".then((x) => x)".repeat(n)}; }`,
    "nested async callbacks": (n) =>
      `export async function f(id) { ${Array(n).fill("await g(async () => {").join("")} await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING" } }); ${"});".repeat(n)} }`,
    "a chain of n const bindings to the claimed value": (n) =>
      `const v0 = "RUNNING"; ${Array.from({ length: n }, (_, i) => `const v${i + 1} = v${i};`).join(" ")} export async function f(id) { await prisma.job.updateMany({ where: { id, status: { not: v${n} } }, data: { status: v${n} } }); }`,
    "a lock key built from n const bindings": (n) =>
      `const k0 = "lock:"; ${Array.from({ length: n }, (_, i) => `const k${i + 1} = k${i} + "a";`).join(" ")} export async function f(id, t) { await redis.set(k${n} + id, t, "NX"); }`,
  };

  it.each(Object.entries(shapes))("%s", (_name, shape) => {
    // At depth 3 the shape is ordinary code: the plugin reads it (or deliberately not), and never throws.
    expect(() => lint(shape(3))).not.toThrow();
    let depth = 2000;
    let messages = lint(shape(depth));
    while (messages.some((m) => m.fatal) && depth > 50) {
      expect(messages).toHaveLength(1); // the parse error alone
      depth = Math.floor(depth / 2);
      messages = lint(shape(depth));
    }
    expect(
      messages.filter((m) => m.fatal),
      `depth ${depth}`,
    ).toEqual([]);
    expect(depth).toBeGreaterThanOrEqual(100);
  });

  it("a filter whose normal form would have 2^40 branches is read as opaque, at once", () => {
    const ors = Array(40).fill("{ OR: [{ a: 1 }, { b: 2 }] }").join(", ");
    const { value, ms } = timed(() =>
      lint(
        `export async function f(id) { await prisma.job.updateMany({ where: { AND: [${ors}, { id }, { status: { not: "RUNNING" } }] }, data: { status: "RUNNING" } }); }`,
      ),
    );
    expect(value).toEqual([]);
    expect(ms).toBeLessThan(20_000);
  });
});

describe("odd Unicode in strings, keys and names", () => {
  const LONE_HIGH = "\uD800";
  const LONE_LOW = "\uDC00";

  it("lone surrogates, NUL, BOM, zero-width and bidi characters in a claim, a key and SQL: no exception", () => {
    const code = `\uFEFFexport async function f(id: string) {
  await prisma.j\u00f6b.updateMany({ where: { id, "st\u200Datus": { not: "RUNN${LONE_HIGH}ING" }, status: { not: "R\u{1F600}UNNING" } }, data: { status: "R\u{1F600}UNNING", "st\u200Datus": "RUNN${LONE_HIGH}ING" } });
  await redis.set("lock:${LONE_LOW}:\u202E" + id, "\u0000", "NX");
  await pool.query("UPDATE jobs SET status = 'runn${LONE_HIGH}ing' WHERE id = $1 AND status <> 'runn${LONE_HIGH}ing'", [id]);
  await pool.query(\`UPDATE "j\u0000bs" SET status = 'running' WHERE id = \${id} AND status <> 'running'\`);
  await redis.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end -- ${LONE_HIGH}\u{10FFFF}", 1, "lock:" + id, "t");
}`;
    const messages = lint(code);
    expect(messages.filter((m) => m.fatal)).toEqual([]);
    // The key with odd characters is still a lock key (it starts with lock:) taken with no expiry.
    expect(ids(messages)).toContain("locks/require-lock-ttl:missingTtl");
  });

  it("in-progress values and fields in other scripts and cases are compared as text, never crash", () => {
    const values = [
      "RUNNİNG",
      "runnıng",
      "ＲＵＮＮＩＮＧ",
      "Running\u0301",
      "處理中",
      "processing\u200B",
      "GENERATING\uFE0F",
    ];
    for (const value of values) {
      const code = `export async function f(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: ${JSON.stringify(value)} } }, data: { status: ${JSON.stringify(value)} } });
}`;
      expect(() => lint(code), value).not.toThrow();
    }
    // Plain ASCII names around them still work.
    expect(ids(lint(CLAIM))).toEqual(["locks/require-stale-recovery:missingRecovery"]);
  });

  it("identifiers and keys with non-ASCII letters", () => {
    const code = `const ÉTAT_EN_COURS = "RUNNING";
export async function réclamer(identifiant: string) {
  const résultat = await prisma.tâche.updateMany({ where: { id: identifiant, état: { not: ÉTAT_EN_COURS } }, data: { état: ÉTAT_EN_COURS } });
  return résultat.count === 1;
}
export async function 恢复(截止: Date) {
  await prisma.tâche.updateMany({ where: { état: ÉTAT_EN_COURS, updatedAt: { lt: 截止 } }, data: { état: "FAILED" } });
}`;
    const messages = lint(code, [
      ts,
      plugin.configs.strict,
      { settings: { locks: { stateFields: ["état", "status"] } } },
    ] as Linter.Config[]);
    expect(messages).toEqual([]);
    const unrecovered = lint(code.slice(0, code.indexOf("export async function 恢复")), [
      ts,
      plugin.configs.strict,
      { settings: { locks: { stateFields: ["état"] } } },
    ] as Linter.Config[]);
    expect(ids(unrecovered)).toEqual(["locks/require-stale-recovery:missingRecovery"]);
    expect(unrecovered[0]!.message).toContain("tâche.état = RUNNING");
  });

  describe("a file that is not valid UTF-8, linted from disk", () => {
    const dir = mkdtempSync(join(tmpdir(), "locks-bad-input-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("invalid byte sequences in strings and keys are decoded as U+FFFD; no exception", async () => {
      const head = Buffer.from(`export async function f(id: string) {
  await prisma.job.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING", note: "`);
      const bad = Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0xf8, 0x88, 0x80, 0x80, 0x80]);
      const tail = Buffer.from(`" } });
  await redis.set("lock:`);
      const end = Buffer.from(`" + id, "1", "NX");
}
`);
      const file = join(dir, "latin1.ts");
      writeFileSync(file, Buffer.concat([head, bad, tail, bad, end]));
      const eslint = new ESLint({ cwd: dir, overrideConfigFile: true, overrideConfig: strict as never });
      const [result] = await eslint.lintFiles([file]);
      const found = result!.messages.map((m) => (m.fatal ? "fatal" : m.ruleId));
      // The claim's result is not kept and the SET NX runs after it: atomic-claim's unread outcome too.
      expect(found.sort()).toEqual(["locks/atomic-claim", "locks/require-lock-ttl", "locks/require-stale-recovery"]);
    });

    it("a UTF-16 file (a BOM and NUL bytes) is a parse error, not a crash", async () => {
      const file = join(dir, "utf16.ts");
      writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(CLAIM, "utf16le")]));
      const eslint = new ESLint({ cwd: dir, overrideConfigFile: true, overrideConfig: strict as never });
      const [result] = await eslint.lintFiles([file]);
      expect(result!.messages.filter((m) => !m.fatal)).toEqual([]);
    });
  });
});

describe("huge template literals in SQL positions (the times are printed)", () => {
  const cases: [string, string, string[]][] = [
    [
      "1 MB of static text in a pg query template",
      `export async function f(id) { await pool.query(\`UPDATE jobs SET status = 'running', note = '${"x".repeat(1_000_000)}' WHERE id = \${id} AND status <> 'running'\`); }`,
      ["locks/require-stale-recovery:missingRecovery"],
    ],
    [
      "1 MB in a sql tagged template",
      `export async function f(id) { await sql\`UPDATE jobs SET status = 'running' WHERE id = \${id} AND status <> 'running' AND note <> '${"y".repeat(1_000_000)}'\`; }`,
      ["locks/require-stale-recovery:missingRecovery"],
    ],
    [
      "1 MB in Prisma $executeRaw",
      `export async function f(id) { await prisma.$executeRaw\`UPDATE "Job" SET status = 'RUNNING' WHERE id = \${id} AND status <> 'RUNNING' AND note <> '${"z".repeat(1_000_000)}'\`; }`,
      ["locks/require-stale-recovery:missingRecovery"],
    ],
    [
      "2,000 template holes",
      `export async function f(id) { await pool.query(\`UPDATE jobs SET status = 'running' WHERE id IN (${Array(2000).fill("${id}").join(", ")}) AND status <> 'running'\`); }`,
      ["locks/require-stale-recovery:missingRecovery"],
    ],
    [
      "a WHERE of 2,000 ORs (deeper than the SQL parser goes: no finding)",
      `export async function f(id) { await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1 AND (${Array(2000).fill("status <> 'running'").join(" OR ")})", [id]); }`,
      [],
    ],
    [
      "500 nested parentheses in a WHERE",
      `export async function f(id) { await pool.query("UPDATE jobs SET status = 'running' WHERE id = $1 AND ${"(".repeat(500)}status <> 'running'${")".repeat(500)}", [id]); }`,
      ["locks/require-stale-recovery:missingRecovery"],
    ],
    [
      "1 MB of text that is not SQL (not parsed)",
      `export async function f(id) { await pool.query(\`-- ${"w".repeat(1_000_000)}\`); }`,
      [],
    ],
    [
      "a huge SQL string that does not parse",
      `export async function f(id) { await pool.query("UPDATE jobs SET status = 'running' WHERE ${"((( ".repeat(50_000)}"); }`,
      [],
    ],
  ];

  it.each(cases)(
    "%s",
    (name, code, expected) => {
      const { value, ms } = timed(() => lint(code));
      console.info(`bad-input: ${name}: ${ms} ms`);
      expect(ids(value)).toEqual(expected);
    },
    300_000,
  );
});
