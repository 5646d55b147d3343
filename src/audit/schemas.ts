/**
 * The unique keys a project's schemas declare, so the model can tell an insert that a unique key makes exclusive
 * from one that is not (`findFirst` for the row, then `create` it: two callers both find none and both insert
 * unless a unique key covers what they looked the row up by). The editor sees one module and no schema, so there
 * the answer stays unknown; the audit reads:
 *
 * - Prisma schemas (`*.prisma`), with `@mrleebo/prisma-ast`: `@id` and `@unique` fields, `@@id([…])` and
 *   `@@unique([…])`; a model is named as the client names it (`prisma.transactionTempUser`) and by its `@@map` table;
 * - Strapi content types (`…/content-types/<name>/schema.json`): `id` and `documentId`, and every attribute with
 *   `unique: true`; named by `info.singularName` (`api::turn-lock.turn-lock` is `turn-lock`) and `collectionName`.
 *
 * A model two schemas declare with different keys is left out: which one a module writes is not known.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { globSync } from "tinyglobby";
import { normalizeModel } from "../core/model/names.js";
import { SKIP_DIRS } from "./discover.js";

let loaded: typeof import("@mrleebo/prisma-ast") | undefined;

/** The Prisma schema parser, loaded at the first `.prisma` file (it takes a third of a second; most projects have none). */
function prismaAst(): typeof import("@mrleebo/prisma-ast") {
  loaded ??= createRequire(import.meta.url)("@mrleebo/prisma-ast") as typeof import("@mrleebo/prisma-ast");
  return loaded;
}

/** Model (normalised, `normalizeModel`) -> its unique keys, each a list of field names. */
export type UniqueKeys = Record<string, string[][]>;

/**
 * The schema files under `root`, found as the audit finds manifests (tinyglobby): not in dependency or build folders
 * (discover.ts's `SKIP_DIRS`), nor in hidden ones.
 */
function schemaFiles(root: string): { prisma: string[]; strapi: string[] } {
  const ignore = [...SKIP_DIRS].map((d) => `**/${d}/**`);
  const found = globSync(["**/*.prisma", "**/content-types/*/schema.json"], {
    cwd: root,
    ignore,
    absolute: true,
  }).sort();
  return { prisma: found.filter((f) => f.endsWith(".prisma")), strapi: found.filter((f) => f.endsWith("schema.json")) };
}

/** A Prisma attribute's field list: `@@id([a, b])`, `@@unique(fields: [a, b], name: "x")`. */
function fieldList(args: readonly unknown[] | undefined): string[] | undefined {
  for (const arg of args ?? []) {
    const value = (arg as { value?: unknown }).value as
      { type?: string; key?: string; value?: unknown; args?: unknown[] } | undefined;
    const array =
      value?.type === "array"
        ? value
        : value?.type === "keyValue" && value.key === "fields"
          ? (value.value as { type?: string; args?: unknown[] })
          : undefined;
    if (array?.type === "array" && array.args?.every((a) => typeof a === "string")) return array.args as string[];
  }
  return undefined;
}

const unquote = (s: unknown): string | undefined => (typeof s === "string" ? s.replace(/^"|"$/g, "") : undefined);

function prismaKeys(text: string): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  let schema;
  try {
    schema = prismaAst().getSchema(text);
  } catch {
    return out; // a schema this parser cannot read tells nothing
  }
  for (const block of schema.list) {
    if (block.type !== "model") continue;
    const keys: string[][] = [];
    const names = [block.name];
    for (const p of block.properties) {
      if (p.type === "field") {
        if ((p.attributes ?? []).some((a) => a.name === "id" || a.name === "unique")) keys.push([p.name]);
      } else if (p.type === "attribute" && (p.name === "id" || p.name === "unique")) {
        const fields = fieldList(p.args);
        if (fields && fields.length > 0) keys.push(fields);
      } else if (p.type === "attribute" && p.name === "map") {
        const table = unquote((p.args?.[0] as { value?: unknown } | undefined)?.value);
        if (table) names.push(table);
      }
    }
    for (const name of names) out.set(name, keys);
  }
  return out;
}

function strapiKeys(text: string): Map<string, string[][]> {
  const out = new Map<string, string[][]>();
  let schema: {
    info?: { singularName?: unknown };
    collectionName?: unknown;
    attributes?: Record<string, { unique?: unknown }>;
  };
  try {
    schema = JSON.parse(text);
  } catch {
    return out;
  }
  const keys: string[][] = [["id"], ["documentId"]];
  for (const [name, attribute] of Object.entries(schema.attributes ?? {})) {
    if (attribute && attribute.unique === true) keys.push([name]);
  }
  for (const name of [schema.info?.singularName, schema.collectionName]) {
    if (typeof name === "string" && name.length > 0) out.set(name, keys);
  }
  return out;
}

const keyText = (keys: readonly string[][]) => JSON.stringify(keys.map((k) => [...k].sort()).sort());

/** The unique keys every schema under `root` declares (see the module comment); models declared twice differently are left out. */
export function readUniqueKeys(root: string): UniqueKeys {
  const files = schemaFiles(root);
  const found = new Map<string, string[][] | null>();
  const add = (keys: Map<string, string[][]>) => {
    for (const [name, k] of keys) {
      const model = normalizeModel(name);
      const before = found.get(model);
      if (before === undefined) found.set(model, k);
      else if (before !== null && keyText(before) !== keyText(k)) found.set(model, null);
    }
  };
  for (const file of files.prisma) add(prismaKeys(readFileSync(file, "utf8")));
  for (const file of files.strapi) add(strapiKeys(readFileSync(file, "utf8")));
  const out: UniqueKeys = {};
  for (const [model, keys] of found) if (keys) out[model] = keys;
  return out;
}
