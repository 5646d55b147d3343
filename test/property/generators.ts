// Arbitraries that build lock modules from parts: a claim (compare-and-set, one whose outcome nothing reads, or
// check-then-act) in one of the supported stores (the SQL builders and ORMs, MongoDB, raw SQL, Supabase/PostgREST
// chains and MikroORM's EntityManager) and syntax variants, an optional stale recovery (sound or with one flaw), an optional lease
// take-over in the claim, stale scans, a runner with an optional completion and try/finally release, lock rows
// under a unique key with or without a sweeper, Redis locks with or without TTL and owner check, and lookalikes
// (transitions into states that are not in progress, idempotency keys, caches) that must stay quiet. Each kind of
// module has its oracle (`expectedDbFindings`, `expectedKvFindings`, `expectedLockRowFindings`): what the plugin
// must report about the parts, and nothing else.
//
// Only shapes that docs/stores.md and the store tests say the recognizers support are generated.
import fc from "fast-check";
import type { Client, Ctx, Expr, Fn, ModuleSpec, Step } from "./render.js";

// ---------------------------------------------------------------------------------------------------------------
// Database stores

export const DB_STORES = [
  "prisma",
  "knex",
  "kysely",
  "drizzle",
  "typeorm-qb",
  "typeorm-repo",
  "sequelize",
  "mongo",
  "mongoose",
  "pg",
  "postgrest",
  "mikro-orm",
] as const;
export type DbStore = (typeof DB_STORES)[number];

/** A value in a filter or an assignment: a literal, a variable of the code, or the clock. */
export type Val =
  | { readonly kind: "lit"; readonly value: string | boolean | number }
  /** A JS expression with a static value: a const, an enum member, an `as const` object's member. */
  | { readonly kind: "ref"; readonly text: string; readonly value: string | boolean | number }
  | { readonly kind: "var"; readonly name: string }
  | { readonly kind: "now" };

/** One filter condition on a logical field (`updatedAt`; each store spells the column its own way). */
export type Pred =
  | { readonly op: "eq" | "ne" | "lt" | "gt"; readonly field: string; readonly value: Val }
  | { readonly op: "or"; readonly items: readonly Pred[] };

export interface Write {
  readonly entity: string;
  readonly filter: readonly Pred[];
  readonly set: readonly { readonly field: string; readonly value: Val }[];
}

/** Syntax choices a store offers for the same write (`{ not: v }` or `NOT: { … }`, `whereNot` or `'<>'`…). */
export interface Syntax {
  readonly variant: number;
  readonly quote: '"' | "'";
}

/** How a claim's result says "I got it". */
export interface Claimed {
  readonly bind: string;
  readonly ok: string;
}

interface Dialect {
  readonly clients: readonly Client[];
  head(entities: readonly string[]): string[];
  /** The model name the plugin reports (`job`, `jobs`, `Job`). */
  model(entity: string): string;
  /** The column name as written in this store (`updated_at` for SQL builders, `updatedAt` for ORMs). */
  column(field: string): string;
  update(w: Write, c: Ctx, s: Syntax, claim: boolean): string;
  read(entity: string, filter: readonly Pred[], c: Ctx, s: Syntax): string;
  /** A read of one row (or null), for check-then-act; absent where the store has no row object to check. */
  readOne?(entity: string, filter: readonly Pred[], c: Ctx, s: Syntax): string;
  /** How the row of `readOne` is bound, when it is not the result itself (`{ rows: [row] }` for node-postgres). */
  readonly rowPattern?: (row: string) => string;
  claimed(s: Syntax): Claimed;
  /** How a transaction callback is opened, and the name its client parameter gets (`prisma.$transaction`, `tx`). */
  readonly transaction?: { readonly client: string; readonly open: (client: string) => string; readonly param: string };
  /** Whether the store has a readable OR for a lease take-over (`or` predicates). */
  readonly leases: boolean;
}

const snake = (name: string): string => name.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);
const pascal = (name: string): string => name[0]!.toUpperCase() + name.slice(1);
const plural = (name: string): string => `${name}s`;

function lit(v: string | boolean | number, q: string): string {
  return typeof v === "string" ? `${q}${v}${q}` : String(v);
}

function jsVal(v: Val, q: string, now = "new Date()"): string {
  if (v.kind === "lit") return lit(v.value, q);
  if (v.kind === "ref") return v.text;
  if (v.kind === "var") return v.name;
  return now;
}

/** `{ id }` when the key and the variable agree, as people write it. */
function prop(key: string, value: string): string {
  return key === value ? key : `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}: ${value}`;
}

function flatPreds(filter: readonly Pred[]): Extract<Pred, { field: string }>[] {
  return filter.flatMap((p) => (p.op === "or" ? [] : [p]));
}

const idField = (store: DbStore): string => (store === "mongo" || store === "mongoose" ? "_id" : "id");

// ---- Prisma ----

const prisma: Dialect = {
  clients: [
    {
      name: "prisma",
      declaration: `import { prisma } from "./db";`,
      type: "PrismaClient",
      typeImport: `import type { PrismaClient } from "@prisma/client";`,
    },
  ],
  head: () => [],
  model: (e) => e,
  column: (f) => f,
  leases: true,
  update(w, c, s) {
    return `${c.client("prisma")}.${w.entity}.updateMany({ where: ${prismaWhere(w.filter, s)}, data: { ${w.set.map((a) => prop(a.field, jsVal(a.value, s.quote))).join(", ")} } })`;
  },
  read(entity, filter, c, s) {
    return `${c.client("prisma")}.${entity}.findMany({ where: ${prismaWhere(filter, s)} })`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("prisma")}.${entity}.findFirst({ where: ${prismaWhere(filter, s)} })`;
  },
  claimed: (s) => (s.variant % 2 === 0 ? { bind: "r", ok: "r.count === 1" } : { bind: "{ count }", ok: "count > 0" }),
  transaction: { client: "prisma", open: (c) => `${c}.$transaction`, param: "tx" },
};

function prismaWhere(filter: readonly Pred[], s: Syntax): string {
  const parts = filter.map((p): string => {
    if (p.op === "or") return `OR: [${p.items.map((i) => prismaWhere([i], s)).join(", ")}]`;
    const v = jsVal(p.value, s.quote);
    if (p.op === "eq") return prop(p.field, v);
    if (p.op === "ne")
      return [`${p.field}: { not: ${v} }`, `NOT: { ${p.field}: ${v} }`, `${p.field}: { notIn: [${v}] }`][
        s.variant % 3
      ]!;
    return `${p.field}: { ${p.op}: ${v} }`;
  });
  return `{ ${parts.join(", ")} }`;
}

// ---- Knex ----

const SQL_OP = { eq: "=", ne: "<>", lt: "<", gt: ">" } as const;

const knex: Dialect = {
  clients: [
    {
      name: "knex",
      declaration: `import { knex } from "./db";`,
      type: "Knex",
      typeImport: `import type { Knex } from "knex";`,
    },
  ],
  head: () => [],
  model: plural,
  column: snake,
  leases: true,
  update(w, c, s) {
    const q = s.quote;
    const sets = w.set.map((a) => prop(snake(a.field), jsVal(a.value, q, `${c.client("knex")}.fn.now()`)));
    return `${c.client("knex")}(${q}${plural(w.entity)}${q})${knexWhere(w.filter, s, true)}.update({ ${sets.join(", ")} })`;
  },
  read(entity, filter, c, s) {
    return `${c.client("knex")}(${s.quote}${plural(entity)}${s.quote})${knexWhere(filter, s, true)}.select(${s.quote}id${s.quote})`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("knex")}(${s.quote}${plural(entity)}${s.quote})${knexWhere(filter, s, true)}.first()`;
  },
  claimed: () => ({ bind: "n", ok: "n === 1" }),
  transaction: { client: "knex", open: (c) => `${c}.transaction`, param: "trx" },
};

function knexWhere(filter: readonly Pred[], s: Syntax, first: boolean): string {
  const q = s.quote;
  return filter
    .map((p, i): string => {
      const where = first && i === 0 ? "where" : s.variant % 2 === 0 ? "where" : "andWhere";
      if (p.op === "or") {
        const [a, b] = p.items;
        const inner = (x: Pred | undefined, link: "where" | "orWhere") => {
          if (!x || x.op === "or") throw new Error("nested or");
          return x.op === "ne"
            ? `${link}Not(${q}${snake(x.field)}${q}, ${jsVal(x.value, q)})`
            : `${link}(${q}${snake(x.field)}${q}, ${q}${SQL_OP[x.op]}${q}, ${jsVal(x.value, q)})`;
        };
        return `.${where}((qb) => qb.${inner(a, "where")}.${inner(b, "orWhere")})`;
      }
      const col = `${q}${snake(p.field)}${q}`;
      const v = jsVal(p.value, q);
      if (p.op === "eq")
        return [
          `.${where}(${col}, ${v})`,
          `.${where}({ ${prop(snake(p.field), v)} })`,
          `.${where}(${col}, ${q}=${q}, ${v})`,
        ][s.variant % 3]!;
      if (p.op === "ne")
        return [`.whereNot(${col}, ${v})`, `.${where}(${col}, ${q}<>${q}, ${v})`, `.whereNotIn(${col}, [${v}])`][
          s.variant % 3
        ]!;
      return `.${where}(${col}, ${q}${SQL_OP[p.op]}${q}, ${v})`;
    })
    .join("");
}

// ---- Kysely ----

const kysely: Dialect = {
  clients: [
    {
      name: "db",
      declaration: `import { db } from "./db";`,
      type: "Kysely<Database>",
      typeImport: `import type { Kysely } from "kysely";`,
    },
  ],
  head: () => [],
  model: plural,
  column: snake,
  leases: true,
  update(w, c, s, claim) {
    const q = s.quote;
    const sets = w.set.map((a) => prop(snake(a.field), jsVal(a.value, q)));
    return `${c.client("db")}.updateTable(${q}${plural(w.entity)}${q}).set({ ${sets.join(", ")} })${kyselyWhere(w.filter, s)}.${claim ? "executeTakeFirst" : "execute"}()`;
  },
  read(entity, filter, c, s) {
    const q = s.quote;
    return `${c.client("db")}.selectFrom(${q}${plural(entity)}${q}).select(${q}id${q})${kyselyWhere(filter, s)}.execute()`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("db")}.selectFrom(${s.quote}${plural(entity)}${s.quote}).selectAll()${kyselyWhere(filter, s)}.executeTakeFirst()`;
  },
  claimed: () => ({ bind: "res", ok: "Number(res.numUpdatedRows) === 1" }),
  transaction: { client: "db", open: (c) => `${c}.transaction().execute`, param: "trx" },
};

function kyselyWhere(filter: readonly Pred[], s: Syntax): string {
  const q = s.quote;
  const one = (p: Pred, eb: string): string => {
    if (p.op === "or") throw new Error("nested or");
    const op = p.op === "ne" ? (s.variant % 2 === 0 ? "!=" : "<>") : SQL_OP[p.op];
    return `${eb}(${q}${snake(p.field)}${q}, ${q}${op}${q}, ${jsVal(p.value, q)})`;
  };
  return filter
    .map((p) =>
      p.op === "or" ? `.where((eb) => eb.or([${p.items.map((i) => one(i, "eb")).join(", ")}]))` : `.${one(p, "where")}`,
    )
    .join("");
}

// ---- Drizzle ----

const drizzle: Dialect = {
  clients: [
    {
      name: "db",
      declaration: `import { db } from "./db";`,
      type: "NodePgDatabase",
      typeImport: `import type { NodePgDatabase } from "drizzle-orm/node-postgres";`,
    },
  ],
  head: (entities) => [
    `import { and, eq, gt, lt, ne, or } from "drizzle-orm";`,
    `import { ${[...new Set(entities.map(plural))].sort().join(", ")} } from "./schema";`,
  ],
  model: plural,
  column: (f) => f,
  leases: true,
  update(w, c, s, claim) {
    const sets = w.set.map((a) => prop(a.field, jsVal(a.value, s.quote)));
    return `${c.client("db")}.update(${plural(w.entity)}).set({ ${sets.join(", ")} }).where(${drizzleCond(w.entity, w.filter, s)})${claim ? ".returning()" : ""}`;
  },
  read(entity, filter, c, s) {
    return `${c.client("db")}.select().from(${plural(entity)}).where(${drizzleCond(entity, filter, s)})`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("db")}.query.${plural(entity)}.findFirst({ where: ${drizzleCond(entity, filter, s)} })`;
  },
  claimed: () => ({ bind: "rows", ok: "rows.length === 1" }),
  transaction: { client: "db", open: (c) => `${c}.transaction`, param: "tx" },
};

function drizzleCond(entity: string, filter: readonly Pred[], s: Syntax): string {
  const t = plural(entity);
  const one = (p: Pred): string =>
    p.op === "or" ? `or(${p.items.map(one).join(", ")})` : `${p.op}(${t}.${p.field}, ${jsVal(p.value, s.quote)})`;
  return filter.length === 1 ? one(filter[0]!) : `and(${filter.map(one).join(", ")})`;
}

// ---- TypeORM ----

const dataSourceClient: Client = {
  name: "dataSource",
  declaration: `import { dataSource } from "./data-source";`,
  type: "DataSource",
  typeImport: `import type { DataSource } from "typeorm";`,
};

const typeormRepo: Dialect = {
  clients: [dataSourceClient],
  head: (entities) => [
    `import { LessThan, MoreThan, Not } from "typeorm";`,
    `import { ${[...new Set(entities.map(pascal))].sort().join(", ")} } from "./entities";`,
  ],
  model: pascal,
  column: (f) => f,
  leases: false,
  update(w, c, s) {
    const sets = w.set.map((a) => prop(a.field, jsVal(a.value, s.quote)));
    return `${c.client("dataSource")}.getRepository(${pascal(w.entity)}).update(${typeormCriteria(w.filter, s)}, { ${sets.join(", ")} })`;
  },
  read(entity, filter, c, s) {
    return `${c.client("dataSource")}.getRepository(${pascal(entity)}).find({ where: ${typeormCriteria(filter, s)} })`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("dataSource")}.getRepository(${pascal(entity)}).findOne({ where: ${typeormCriteria(filter, s)} })`;
  },
  claimed: () => ({ bind: "r", ok: "r.affected === 1" }),
};

function typeormCriteria(filter: readonly Pred[], s: Syntax): string {
  return `{ ${flatPreds(filter)
    .map((p) => {
      const v = jsVal(p.value, s.quote);
      return p.op === "eq"
        ? prop(p.field, v)
        : `${p.field}: ${{ ne: "Not", lt: "LessThan", gt: "MoreThan" }[p.op]}(${v})`;
    })
    .join(", ")} }`;
}

const typeormQb: Dialect = {
  clients: [dataSourceClient],
  head: (entities) => [
    `import { LessThan, MoreThan, Not } from "typeorm";`,
    `import { ${[...new Set(entities.map(pascal))].sort().join(", ")} } from "./entities";`,
  ],
  model: pascal,
  column: (f) => f,
  leases: true,
  update(w, c, s) {
    const sets = w.set.map((a) => prop(a.field, jsVal(a.value, s.quote)));
    return `${c.client("dataSource")}.createQueryBuilder().update(${pascal(w.entity)}).set({ ${sets.join(", ")} })${qbWhere(w.filter, s)}.execute()`;
  },
  read(entity, filter, c, s) {
    return `${c.client("dataSource")}.getRepository(${pascal(entity)}).createQueryBuilder(${s.quote}row${s.quote})${qbWhere(filter, s, "row.")}.getMany()`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("dataSource")}.getRepository(${pascal(entity)}).findOneBy(${typeormCriteria(filter, s)})`;
  },
  claimed: () => ({ bind: "r", ok: "r.affected === 1" }),
};

function qbWhere(filter: readonly Pred[], s: Syntax, alias = ""): string {
  let n = 0;
  const q = s.quote;
  const cond = (p: Pred, params: string[]): string => {
    if (p.op === "or") return `(${p.items.map((i) => cond(i, params)).join(" OR ")})`;
    const op = p.op === "ne" ? (s.variant % 2 === 0 ? "!=" : "<>") : SQL_OP[p.op];
    if (p.value.kind === "now") return `${alias}${p.field} ${op} NOW()`;
    // Literals inline in the SQL text (variant) or as named parameters.
    if (p.value.kind === "lit" && typeof p.value.value === "string" && s.variant % 3 === 2)
      return `${alias}${p.field} ${op} '${p.value.value}'`;
    const name = p.value.kind === "var" ? p.value.name : `p${n++}`; // a ref is a parameter too
    params.push(prop(name, jsVal(p.value, q)));
    return `${alias}${p.field} ${op} :${name}`;
  };
  const other = q === '"' ? "'" : '"';
  return filter
    .map((p, i) => {
      const params: string[] = [];
      const text = cond(p, params);
      const quoted = text.includes(q) ? `${other}${text}${other}` : `${q}${text}${q}`;
      return `.${i === 0 ? "where" : "andWhere"}(${quoted}${params.length > 0 ? `, { ${params.join(", ")} }` : ""})`;
    })
    .join("");
}

// ---- Sequelize ----

const sequelize: Dialect = {
  clients: [],
  head: (entities) => [
    `import { Op } from "sequelize";`,
    `import { ${[...new Set(entities.map(pascal))].sort().join(", ")} } from "./models";`,
  ],
  model: pascal,
  column: (f) => f,
  leases: true,
  update(w, _c, s) {
    const sets = w.set.map((a) => prop(a.field, jsVal(a.value, s.quote)));
    return `${pascal(w.entity)}.update({ ${sets.join(", ")} }, { where: ${sequelizeWhere(w.filter, s)} })`;
  },
  read(entity, filter, _c, s) {
    return `${pascal(entity)}.findAll({ where: ${sequelizeWhere(filter, s)} })`;
  },
  readOne(entity, filter, _c, s) {
    return `${pascal(entity)}.findOne({ where: ${sequelizeWhere(filter, s)} })`;
  },
  claimed: () => ({ bind: "[n]", ok: "n === 1" }),
};

function sequelizeWhere(filter: readonly Pred[], s: Syntax): string {
  return `{ ${filter
    .map((p): string => {
      if (p.op === "or") return `[Op.or]: [${p.items.map((i) => sequelizeWhere([i], s)).join(", ")}]`;
      const v = jsVal(p.value, s.quote);
      return p.op === "eq" ? prop(p.field, v) : `${p.field}: { [Op.${p.op}]: ${v} }`;
    })
    .join(", ")} }`;
}

// ---- MongoDB driver and Mongoose ----

/** A MongoDB-style filter (also MikroORM's FilterQuery); `nin`: "not equal" also spelled `{ $nin: [v] }`. */
function mongoFilter(filter: readonly Pred[], s: Syntax, nin = false): string {
  return `{ ${filter
    .map((p): string => {
      if (p.op === "or") return `$or: [${p.items.map((i) => mongoFilter([i], s, nin)).join(", ")}]`;
      const v = jsVal(p.value, s.quote);
      if (p.op === "ne" && nin && s.variant % 2 === 1) return `${p.field}: { $nin: [${v}] }`;
      return p.op === "eq" ? prop(p.field, v) : `${p.field}: { $${p.op}: ${v} }`;
    })
    .join(", ")} }`;
}

function mongoDialect(native: boolean): Dialect {
  const target = (entity: string, c: Ctx, q: string) =>
    native ? `${c.client("db")}.collection(${q}${plural(entity)}${q})` : pascal(entity);
  return {
    clients: native
      ? [
          {
            name: "db",
            declaration: `import { db } from "./mongo";`,
            type: "Db",
            typeImport: `import type { Db } from "mongodb";`,
          },
        ]
      : [],
    head: (entities) =>
      native ? [] : [`import { ${[...new Set(entities.map(pascal))].sort().join(", ")} } from "./models";`],
    model: (e) => (native ? plural(e) : pascal(e)),
    column: (f) => f,
    leases: true,
    update(w, c, s, claim) {
      const method = claim
        ? s.variant % 2 === 0
          ? "findOneAndUpdate"
          : "updateOne"
        : w.filter.some((p) => p.op !== "or" && p.field === "_id")
          ? "updateOne"
          : "updateMany";
      const sets = w.set.map((a) => prop(a.field, jsVal(a.value, s.quote)));
      return `${target(w.entity, c, s.quote)}.${method}(${mongoFilter(w.filter, s)}, { $set: { ${sets.join(", ")} } })`;
    },
    read(entity, filter, c, s) {
      return `${target(entity, c, s.quote)}.find(${mongoFilter(filter, s)})${native ? ".toArray()" : ""}`;
    },
    readOne(entity, filter, c, s) {
      return `${target(entity, c, s.quote)}.findOne(${mongoFilter(filter, s)})`;
    },
    claimed: (s) =>
      s.variant % 2 === 0 ? { bind: "doc", ok: "doc !== null" } : { bind: "r", ok: "r.modifiedCount === 1" },
  };
}

// ---- Raw SQL through node-postgres ----

function sqlLit(v: string | boolean | number): string {
  return typeof v === "string" ? `'${v}'` : String(v);
}

function sqlWhere(filter: readonly Pred[], s: Syntax, params: string[]): string {
  const one = (p: Pred): string => {
    if (p.op === "or") return `(${p.items.map(one).join(" OR ")})`;
    const col = snake(p.field);
    const op = p.op === "ne" ? (s.variant % 2 === 0 ? "<>" : "!=") : SQL_OP[p.op];
    if (p.value.kind === "now") return `${col} ${op} now()`;
    if (p.value.kind === "lit") return `${col} ${op} ${sqlLit(p.value.value)}`;
    params.push(p.value.kind === "ref" ? p.value.text : p.value.name);
    return `${col} ${op} $${params.length}`;
  };
  return filter.map(one).join(" AND ");
}

const pg: Dialect = {
  clients: [
    {
      name: "pool",
      declaration: `import { pool } from "./db";`,
      type: "Pool",
      typeImport: `import type { Pool } from "pg";`,
    },
  ],
  head: () => [],
  model: plural,
  column: snake,
  leases: true,
  update(w, c, s) {
    const params: string[] = [];
    const sets = w.set.map(
      (a) =>
        `${snake(a.field)} = ${a.value.kind === "now" ? "now()" : a.value.kind === "lit" ? sqlLit(a.value.value) : `$${params.push(a.value.kind === "ref" ? a.value.text : a.value.name)}`}`,
    );
    const text = `UPDATE ${plural(w.entity)} SET ${sets.join(", ")} WHERE ${sqlWhere(w.filter, s, params)}`;
    return `${c.client("pool")}.query(${sqlString(text, s)}${params.length > 0 ? `, [${params.join(", ")}]` : ""})`;
  },
  read(entity, filter, c, s) {
    const params: string[] = [];
    const text = `SELECT id FROM ${plural(entity)} WHERE ${sqlWhere(filter, s, params)}`;
    return `${c.client("pool")}.query(${sqlString(text, s)}${params.length > 0 ? `, [${params.join(", ")}]` : ""})`;
  },
  claimed: () => ({ bind: "r", ok: "r.rowCount === 1" }),
  readOne(entity, filter, c, s) {
    const params: string[] = [];
    const text = `SELECT * FROM ${plural(entity)} WHERE ${sqlWhere(filter, s, params)}`;
    return `${c.client("pool")}.query(${sqlString(text, s)}${params.length > 0 ? `, [${params.join(", ")}]` : ""})`;
  },
  rowPattern: (row) => `{ rows: [${row}] }`,
};

/** The statement as a JS string: a quoted string or a template literal with no holes. */
function sqlString(text: string, s: Syntax): string {
  return s.variant % 3 === 1 ? `\`${text}\`` : `"${text}"`;
}

// ---- Supabase / PostgREST ----

/** A value inside a PostgREST filter string (`status.neq.RUNNING`, `updated_at.lt.${cutoff}`). */
function postgrestText(v: Val): string {
  if (v.kind === "lit") return String(v.value);
  if (v.kind === "ref") return `\${${v.text}}`;
  if (v.kind === "var") return `\${${v.name}}`;
  return "${new Date().toISOString()}";
}

function postgrestFilters(filter: readonly Pred[], s: Syntax): string {
  const q = s.quote;
  return filter
    .map((p): string => {
      if (p.op === "or") {
        const items = p.items.map((i) => {
          if (i.op === "or") throw new Error("nested or");
          return `${snake(i.field)}.${i.op === "ne" ? "neq" : i.op}.${postgrestText(i.value)}`;
        });
        return `.or(\`${items.join(",")}\`)`;
      }
      const col = `${q}${snake(p.field)}${q}`;
      const v = jsVal(p.value, q, "new Date().toISOString()");
      if (p.op === "eq") return s.variant % 3 === 2 ? `.match({ ${prop(snake(p.field), v)} })` : `.eq(${col}, ${v})`;
      if (p.op === "ne")
        return [`.neq(${col}, ${v})`, `.not(${col}, ${q}eq${q}, ${v})`, `.filter(${col}, ${q}neq${q}, ${v})`][
          s.variant % 3
        ]!;
      return `.${p.op}(${col}, ${v})`;
    })
    .join("");
}

const postgrest: Dialect = {
  clients: [
    {
      name: "supabase",
      declaration: `import { supabase } from "./supabase";`,
      type: "SupabaseClient",
      typeImport: `import type { SupabaseClient } from "@supabase/supabase-js";`,
    },
  ],
  head: () => [],
  model: plural,
  column: snake,
  leases: true,
  update(w, c, s, claim) {
    const q = s.quote;
    const sets = w.set.map((a) => prop(snake(a.field), jsVal(a.value, q, "new Date().toISOString()")));
    return `${c.client("supabase")}.from(${q}${plural(w.entity)}${q}).update({ ${sets.join(", ")} })${postgrestFilters(w.filter, s)}${claim ? `.select(${q}id${q})` : ""}`;
  },
  read(entity, filter, c, s) {
    return `${c.client("supabase")}.from(${s.quote}${plural(entity)}${s.quote}).select(${s.quote}id${s.quote})${postgrestFilters(filter, s)}`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("supabase")}.from(${s.quote}${plural(entity)}${s.quote}).select(${s.quote}*${s.quote})${postgrestFilters(filter, s)}.maybeSingle()`;
  },
  rowPattern: (row) => `{ data: ${row} }`,
  claimed: (s) =>
    s.variant % 2 === 0
      ? { bind: "{ data }", ok: "(data ?? []).length === 1" }
      : { bind: "{ data: claimedRows }", ok: "claimedRows?.length === 1" },
};

// ---- MikroORM ----

const mikroWhere = (filter: readonly Pred[], s: Syntax): string => mongoFilter(filter, s, true);

const mikroOrm: Dialect = {
  clients: [
    {
      name: "em",
      declaration: `import { em } from "./orm";`,
      type: "EntityManager",
      typeImport: `import type { EntityManager } from "@mikro-orm/postgresql";`,
    },
  ],
  head: (entities) => [`import { ${[...new Set(entities.map(pascal))].sort().join(", ")} } from "./entities";`],
  model: pascal,
  column: (f) => f,
  leases: true,
  update(w, c, s) {
    const sets = w.set.map((a) => prop(a.field, jsVal(a.value, s.quote)));
    return `${c.client("em")}.nativeUpdate(${pascal(w.entity)}, ${mikroWhere(w.filter, s)}, { ${sets.join(", ")} })`;
  },
  read(entity, filter, c, s) {
    return `${c.client("em")}.find(${pascal(entity)}, ${mikroWhere(filter, s)})`;
  },
  readOne(entity, filter, c, s) {
    return `${c.client("em")}.findOne(${pascal(entity)}, ${mikroWhere(filter, s)})`;
  },
  claimed: (s) => (s.variant % 2 === 0 ? { bind: "n", ok: "n === 1" } : { bind: "updated", ok: "updated > 0" }),
};

export const DIALECTS: Readonly<Record<DbStore, Dialect>> = {
  prisma,
  knex,
  kysely,
  drizzle,
  "typeorm-qb": typeormQb,
  "typeorm-repo": typeormRepo,
  sequelize,
  mongo: mongoDialect(true),
  mongoose: mongoDialect(false),
  pg,
  postgrest,
  "mikro-orm": mikroOrm,
};

// ---------------------------------------------------------------------------------------------------------------
// Database lock modules

export type ValueStyle = "literal" | "const" | "enum" | "object";
export type ClaimStyle = "cas" | "cas-unread" | "check-if" | "check-read";
export type RecoveryKind = "none" | "valid" | "start-time" | "missing-status" | "missing-time" | "check-in-js";
export type HolderKind = "none" | "fenced" | "unfenced";
export const DB_LOOKALIKES = ["transition", "bulk-retry", "start-by-id", "dashboard", "recent", "archive"] as const;
export type DbLookalike = (typeof DB_LOOKALIKES)[number];

export interface DbLockParts {
  readonly store: DbStore;
  readonly syntax: Syntax;
  /** The claimed entity (`job`: Prisma delegate `job`, table `jobs`, entity `Job`). */
  readonly entity: string;
  /** A lifecycle field with an in-progress value, or a processing flag set true. */
  readonly field: string;
  readonly value: string | true;
  /** Where a recovery or a failed run puts the row, and where a finished run puts it. */
  readonly reset: string | false;
  readonly done: string | false;
  readonly progress: string;
  readonly start: string;
  /** How status values are written: literals, module constants, a TS enum, or an `as const` object. */
  readonly valueStyle: ValueStyle;
  /**
   * How the claim is taken: a compare-and-set write (`cas`), or check-then-act: a read of the row, a JS check that
   * excludes the claimed value, then an unconditional write (`check-if`), or a read whose filter excludes it
   * (`check-read`). Check-then-act is still a claim for Q1, and `atomic-claim` reports it. `cas-unread`: the
   * compare-and-set, but nothing reads whether it changed a row (its result dropped, or kept and never read) before
   * the work runs, so the caller that lost goes on too (`atomic-claim`'s `unreadClaim`).
   */
  readonly claimStyle: ClaimStyle;
  /** The row read for a check is held in a variable named like the model (`job`) or generically (`row`). */
  readonly rowName: "entity" | "row";
  /** The row is the read's result, or destructured from a list the read returns (`const [job] = await …`). */
  readonly rowBinding: "direct" | "array";
  /** A read that picks stuck rows by age: judged on the progress timestamp, or on the start time (Q2). */
  readonly staleScan: "none" | "progress" | "start-time";
  /** The claim also touches the progress timestamp. */
  readonly touch: boolean;
  /** The claim takes over rows whose progress timestamp is older than a threshold (a lease). */
  readonly lease: boolean;
  readonly recovery: RecoveryKind;
  /** The threshold: a parameter of the recovery, or a constant computed in it. */
  readonly cutoff: "param" | "local";
  /** A runner that claims, works, and then completes (by id, fenced or not) and/or releases in `finally`. */
  readonly runner: boolean;
  readonly completion: HolderKind;
  /** What a fenced holder write checks: the claimed status, or the owner column the claim wrote (`lockedBy`). */
  readonly fence: "status" | "owner";
  /** The completion in its own function the runner calls, or inline in the runner. */
  readonly completionFn: boolean;
  /**
   * A repository split: the completion function is part of the module's API and the runner does not call it (a
   * worker in another module calls the claim, then the completion).
   */
  readonly split?: boolean;
  readonly finallyRelease: HolderKind;
  readonly lookalikes: readonly DbLookalike[];
}

const STATUS_VALUES = [
  "RUNNING",
  "GENERATING",
  "PROCESSING",
  "RENDERING",
  "IN_PROGRESS",
  "running",
  "processing",
  "exporting",
];
const RESET_VALUES = ["FAILED", "QUEUED", "PENDING", "ERROR"];
const DONE_VALUES = ["DONE", "COMPLETED", "SUCCEEDED"];
const PROGRESS_FIELDS = ["updatedAt", "heartbeatAt", "lastProgressAt"];
const START_FIELDS = ["startedAt", "createdAt", "claimedAt"];

const caseLike = (template: string, value: string): string =>
  template === template.toLowerCase() ? value.toLowerCase() : value;

const syntaxArb: fc.Arbitrary<Syntax> = fc.record({
  variant: fc.nat({ max: 5 }),
  quote: fc.constantFrom<'"' | "'">('"', "'"),
});

const holderArb = fc.constantFrom<HolderKind>("none", "fenced", "unfenced");

export function dbLockArb(
  options: {
    stores?: readonly DbStore[];
    recovery?: fc.Arbitrary<RecoveryKind>;
    lease?: fc.Arbitrary<boolean>;
    staleScan?: fc.Arbitrary<DbLockParts["staleScan"]>;
  } = {},
): fc.Arbitrary<DbLockParts> {
  const stores = options.stores ?? DB_STORES;
  return fc
    .record({
      store: fc.constantFrom(...stores),
      syntax: syntaxArb,
      entity: fc.constantFrom("job", "render", "upload", "sync"),
      lock: fc.oneof(
        fc.record({
          field: fc.constantFrom("status", "state", "phase"),
          value: fc.constantFrom(...STATUS_VALUES),
          reset: fc.constantFrom(...RESET_VALUES),
          done: fc.constantFrom(...DONE_VALUES),
        }),
        fc.record({
          field: fc.constantFrom("isProcessing", "locked"),
          value: fc.constant(true as const),
          reset: fc.constant(false as const),
          done: fc.constant(false as const),
        }),
      ),
      progress: fc.constantFrom(...PROGRESS_FIELDS),
      start: fc.constantFrom(...START_FIELDS),
      valueStyle: fc.constantFrom<ValueStyle>("literal", "literal", "const", "enum", "object"),
      claimStyle: fc.constantFrom<ClaimStyle>("cas", "cas", "cas-unread", "check-if", "check-read"),
      rowName: fc.constantFrom<"entity" | "row">("entity", "row"),
      rowBinding: fc.constantFrom<"direct" | "array">("direct", "array"),
      staleScan:
        options.staleScan ??
        fc.constantFrom<"none" | "progress" | "start-time">("none", "none", "progress", "start-time"),
      touch: fc.boolean(),
      lease: options.lease ?? fc.boolean(),
      recovery:
        options.recovery ??
        fc.constantFrom<RecoveryKind>("none", "valid", "start-time", "missing-status", "missing-time", "check-in-js"),
      cutoff: fc.constantFrom<"param" | "local">("param", "local"),
      runner: fc.boolean(),
      completion: holderArb,
      fence: fc.constantFrom<"status" | "owner">("status", "owner"),
      completionFn: fc.boolean(),
      finallyRelease: holderArb,
      lookalikes: fc.subarray([...DB_LOOKALIKES], { maxLength: 3 }),
    })
    .map((r): DbLockParts => {
      const { lock, ...rest } = r;
      const value = typeof lock.value === "string" ? lock.value : true;
      return {
        ...rest,
        ...lock,
        value,
        reset: typeof lock.reset === "string" && typeof value === "string" ? caseLike(value, lock.reset) : lock.reset,
        done: typeof lock.done === "string" && typeof value === "string" ? caseLike(value, lock.done) : lock.done,
        lease: rest.lease && DIALECTS[rest.store].leases && rest.claimStyle.startsWith("cas"),
        claimStyle: DIALECTS[rest.store].readOne || rest.claimStyle.startsWith("cas") ? rest.claimStyle : "cas",
        recovery: rest.recovery === "check-in-js" && !DIALECTS[rest.store].readOne ? "valid" : rest.recovery,
      };
    });
}

const L = (value: string | boolean | number): Val => ({ kind: "lit", value });

const enumName = (p: DbLockParts): string => `${pascal(p.entity)}${pascal(p.field)}`;
const memberName = (value: string): string => value.toLowerCase().split("_").map(pascal).join("");

/** A status value of the lock (claimed, reset, done) as the parts write it. */
function statusVal(p: DbLockParts, value: string | boolean): Val {
  if (typeof value !== "string" || p.valueStyle === "literal") return L(value);
  const text = {
    const: value.toUpperCase(),
    enum: `${enumName(p)}.${memberName(value)}`,
    object: `${enumName(p)}.${value.toUpperCase()}`,
  }[p.valueStyle];
  return { kind: "ref", text, value };
}

/** The declarations `statusVal` refers to. */
function statusDeclarations(p: DbLockParts): string[] {
  const values = [p.value, p.reset, p.done].filter((v): v is string => typeof v === "string");
  const q = p.syntax.quote;
  if (values.length === 0) return [];
  switch (p.valueStyle) {
    case "literal":
      return [];
    case "const":
      return values.map((v) => `const ${v.toUpperCase()} = ${q}${v}${q};`);
    case "enum":
      return [`enum ${enumName(p)} { ${values.map((v) => `${memberName(v)} = ${q}${v}${q}`).join(", ")} }`];
    case "object":
      return [
        `const ${enumName(p)} = { ${values.map((v) => `${v.toUpperCase()}: ${q}${v}${q}`).join(", ")} } as const;`,
      ];
  }
}
const V = (name: string): Val => ({ kind: "var", name });
const NOW: Val = { kind: "now" };

/** The claim write: set V where the row is not V (or its lease ran out). */
export function claimWrite(p: DbLockParts): Write {
  const notHeld: Pred = { op: "ne", field: p.field, value: statusVal(p, p.value) };
  const filter: Pred[] = [{ op: "eq", field: idField(p.store), value: V("id") }];
  filter.push(
    p.lease ? { op: "or", items: [notHeld, { op: "lt", field: p.progress, value: V("staleBefore") }] } : notHeld,
  );
  const set = [{ field: p.field, value: statusVal(p, p.value) }];
  if (p.touch || p.lease) set.push({ field: p.progress, value: NOW });
  if (p.fence === "owner") set.push({ field: "lockedBy", value: V("workerId") });
  return { entity: p.entity, filter, set };
}

/** The recovery write of each kind: sound, judged on the start time, missing the status or the age condition. */
export function recoveryWrite(p: DbLockParts, kind: Exclude<RecoveryKind, "none" | "check-in-js">): Write {
  const held: Pred = { op: "eq", field: p.field, value: statusVal(p, p.value) };
  const age = (field: string): Pred => ({ op: "lt", field, value: V("cutoff") });
  const filter = {
    valid: [held, age(p.progress)],
    "start-time": [held, age(p.start)],
    "missing-status": [age(p.progress)],
    "missing-time": [held],
  }[kind];
  return { entity: p.entity, filter, set: [{ field: p.field, value: statusVal(p, p.reset) }] };
}

/** A write by the holder, by row id, fenced by the claimed value or not. */
function holderWrite(p: DbLockParts, fenced: boolean, target: string | boolean): Write {
  const filter: Pred[] = [{ op: "eq", field: idField(p.store), value: V("id") }];
  if (fenced)
    filter.push(
      p.fence === "owner"
        ? { op: "eq", field: "lockedBy", value: V("workerId") }
        : { op: "eq", field: p.field, value: statusVal(p, p.value) },
    );
  return { entity: p.entity, filter, set: [{ field: p.field, value: statusVal(p, target) }] };
}

const LOOKALIKE_ENTITY: Record<DbLookalike, string> = {
  transition: "order",
  "bulk-retry": "invoice",
  "start-by-id": "report",
  dashboard: "report",
  recent: "report",
  archive: "order",
};

function lookalikeFn(store: DbStore, kind: DbLookalike, s: Syntax): Fn {
  const d = DIALECTS[store];
  const entity = LOOKALIKE_ENTITY[kind];
  const id = idField(store);
  const upd =
    (w: Write): Expr =>
    (c) =>
      d.update(w, c, s, false);
  switch (kind) {
    case "transition":
      return {
        name: "markPaid",
        role: "lookalike",
        params: ["id"],
        steps: [
          {
            kind: "await",
            expr: upd({
              entity,
              filter: [
                { op: "eq", field: id, value: V("id") },
                { op: "eq", field: "status", value: L("PENDING") },
              ],
              set: [
                { field: "status", value: L("PAID") },
                { field: "paidAt", value: NOW },
              ],
            }),
          },
        ],
      };
    case "bulk-retry":
      return {
        name: "retryFailed",
        role: "lookalike",
        params: [],
        steps: [
          {
            kind: "await",
            expr: upd({
              entity,
              filter: [
                { op: "eq", field: "status", value: L("FAILED") },
                { op: "lt", field: "attempts", value: L(5) },
              ],
              set: [{ field: "status", value: L("PENDING") }],
            }),
          },
        ],
      };
    case "start-by-id":
      return {
        name: "markStarted",
        role: "lookalike",
        params: ["id"],
        steps: [
          {
            kind: "await",
            expr: upd({
              entity,
              filter: [{ op: "eq", field: id, value: V("id") }],
              set: [
                { field: "status", value: L("RUNNING") },
                { field: "startedAt", value: NOW },
              ],
            }),
          },
        ],
      };
    case "dashboard":
      return {
        name: "dashboard",
        role: "lookalike",
        params: [],
        steps: [
          {
            kind: "await",
            bind: "rows",
            expr: (c) => d.read(entity, [{ op: "eq", field: "status", value: L("RUNNING") }], c, s),
          },
          { kind: "return", value: () => "rows" },
        ],
      };
    case "recent":
      return {
        name: "recentlyActive",
        role: "lookalike",
        params: ["since"],
        steps: [
          {
            kind: "await",
            bind: "rows",
            expr: (c) =>
              d.read(
                entity,
                [
                  { op: "eq", field: "status", value: L("RUNNING") },
                  { op: "gt", field: "updatedAt", value: V("since") },
                ],
                c,
                s,
              ),
          },
          { kind: "return", value: () => "rows" },
        ],
      };
    case "archive":
      return {
        name: "archiveOld",
        role: "lookalike",
        params: ["cutoff"],
        steps: [
          {
            kind: "await",
            expr: upd({
              entity,
              filter: [
                { op: "eq", field: "status", value: L("DONE") },
                { op: "lt", field: "updatedAt", value: V("cutoff") },
              ],
              set: [{ field: "status", value: L("ARCHIVED") }],
            }),
          },
        ],
      };
  }
}

const WORK_IMPORT = `import { work } from "./work";`;
const CUTOFF_LOCAL = "new Date(Date.now() - 15 * 60 * 1000)";

/** The recovery function of a kind. */
export function recoveryFn(p: DbLockParts, kind: Exclude<RecoveryKind, "none">): Fn {
  const d = DIALECTS[p.store];
  if (kind === "check-in-js") {
    // Read one row, judge its status and age in JavaScript, then write by id only: racy (Q3).
    const row = p.rowName === "row" ? "row" : p.entity;
    const byId: Pred = { op: "eq", field: idField(p.store), value: V("id") };
    const stale = `!${row} || ${row}.${d.column(p.field)} !== ${jsVal(statusVal(p, p.value), p.syntax.quote)} || ${row}.${d.column(p.progress)} >= cutoff`;
    return {
      name: "recover",
      role: "recovery",
      params: ["id", "cutoff"],
      steps: [
        { kind: "await", bind: row, expr: (c) => d.readOne!(p.entity, [byId], c, p.syntax) },
        { kind: "exit", cond: stale, value: "false" },
        {
          kind: "await",
          expr: (c) =>
            d.update(
              { entity: p.entity, filter: [byId], set: [{ field: p.field, value: statusVal(p, p.reset) }] },
              c,
              p.syntax,
              false,
            ),
        },
        { kind: "return", value: () => "true" },
      ],
    };
  }
  const write: Step = { kind: "await", expr: (c) => d.update(recoveryWrite(p, kind), c, p.syntax, false) };
  return p.cutoff === "param"
    ? { name: "recover", role: "recovery", params: ["cutoff"], steps: [write] }
    : {
        name: "recover",
        role: "recovery",
        params: [],
        steps: [{ kind: "const", name: "cutoff", value: () => CUTOFF_LOCAL }, write],
      };
}

/** The body of `claim(id)`: a compare-and-set, or a read, a check and an unconditional write. */
function claimSteps(p: DbLockParts): Step[] {
  const d = DIALECTS[p.store];
  const s = p.syntax;
  if (p.claimStyle === "cas-unread") {
    // The claim's result dropped (`await …;`) or kept and never read (`const result = await …;`), then the work.
    return [
      ...(p.lease ? [{ kind: "const", name: "staleBefore", value: () => CUTOFF_LOCAL } as const] : []),
      {
        kind: "await",
        ...(s.variant % 2 === 1 ? { bind: "result" } : {}),
        expr: (c) => d.update(claimWrite(p), c, s, true),
      },
      { kind: "await", expr: () => "work(id)" },
      { kind: "return", value: () => "true" },
    ];
  }
  if (p.claimStyle === "cas") {
    const claimed = d.claimed(s);
    return [
      ...(p.lease ? [{ kind: "const", name: "staleBefore", value: () => CUTOFF_LOCAL } as const] : []),
      { kind: "await", bind: claimed.bind, expr: (c) => d.update(claimWrite(p), c, s, true) },
      { kind: "return", value: () => claimed.ok },
    ];
  }
  const row = p.rowName === "row" ? "row" : p.entity;
  const byId: Pred = { op: "eq", field: idField(p.store), value: V("id") };
  const filter: Pred[] =
    p.claimStyle === "check-read" ? [byId, { op: "ne", field: p.field, value: statusVal(p, p.value) }] : [byId];
  const check =
    p.claimStyle === "check-read"
      ? `!${row}`
      : `!${row} || ${row}.${d.column(p.field)} === ${jsVal(statusVal(p, p.value), s.quote)}`;
  const write: Write = {
    entity: p.entity,
    filter: [byId],
    set: [
      { field: p.field, value: statusVal(p, p.value) },
      ...(p.touch ? [{ field: p.progress, value: NOW }] : []),
      ...(p.fence === "owner" ? [{ field: "lockedBy", value: V("workerId") }] : []),
    ],
  };
  const read: Step = d.rowPattern
    ? { kind: "await", bind: d.rowPattern(row), expr: (c) => d.readOne!(p.entity, filter, c, s) }
    : p.rowBinding === "array"
      ? { kind: "await", bind: `[${row}]`, expr: (c) => d.read(p.entity, filter, c, s) }
      : { kind: "await", bind: row, expr: (c) => d.readOne!(p.entity, filter, c, s) };
  return [
    read,
    { kind: "exit", cond: check, value: "false" },
    { kind: "await", expr: (c) => d.update(write, c, s, false) },
    { kind: "return", value: () => "true" },
  ];
}

/** The module the parts describe. */
export function dbModule(p: DbLockParts): ModuleSpec {
  const d = DIALECTS[p.store];
  const s = p.syntax;
  const fns: Fn[] = [];
  const ids = p.fence === "owner" ? ["id", "workerId"] : ["id"];
  fns.push({ name: "claim", role: "claim", params: ids, steps: claimSteps(p) });
  if (p.staleScan !== "none") {
    const scan: Pred[] = [
      { op: "eq", field: p.field, value: statusVal(p, p.value) },
      { op: "lt", field: p.staleScan === "progress" ? p.progress : p.start, value: V("cutoff") },
    ];
    fns.push({
      name: "findStuck",
      role: "scan",
      params: ["cutoff"],
      steps: [
        { kind: "await", bind: "stuck", expr: (c) => d.read(p.entity, scan, c, s) },
        { kind: "return", value: () => "stuck" },
      ],
    });
  }
  if (p.recovery !== "none") fns.push(recoveryFn(p, p.recovery));
  const head: string[] = p.runner || p.claimStyle === "cas-unread" ? [WORK_IMPORT] : [];
  if (p.runner) {
    const complete: Step[] = [];
    if (p.completion !== "none") {
      const write: Step = {
        kind: "await",
        expr: (c) => d.update(holderWrite(p, p.completion === "fenced", p.done), c, s, false),
      };
      if (p.completionFn) {
        fns.push({ name: "finish", role: "completion", params: ids, steps: [write] });
        if (!p.split) complete.push({ kind: "await", expr: (c) => `${c.fn("finish")}(${ids.join(", ")})` });
      } else complete.push(write);
    }
    const body: Step[] = [{ kind: "await", expr: () => "work(id)" }, ...complete];
    const steps: Step[] = [
      { kind: "await", bind: "ok", expr: (c) => `${c.fn("claim")}(${ids.join(", ")})` },
      { kind: "exit", cond: "!ok", value: "false" },
    ];
    if (p.finallyRelease !== "none") {
      steps.push({
        kind: "try",
        body,
        cleanup: [
          { kind: "await", expr: (c) => d.update(holderWrite(p, p.finallyRelease === "fenced", p.reset), c, s, false) },
        ],
      });
    } else steps.push(...body, { kind: "return", value: () => "true" });
    fns.push({ name: "run", role: "runner", params: ids, steps });
  }
  for (const kind of p.lookalikes) fns.push(lookalikeFn(p.store, kind, s));
  const entities = [p.entity, ...p.lookalikes.map((k) => LOOKALIKE_ENTITY[k])];
  return {
    head: [...d.head(entities), ...head, ...statusDeclarations(p)],
    clients: d.clients,
    fns,
    ...(d.transaction ? { transaction: d.transaction } : {}),
  };
}

/**
 * The module with its recovery written with another store's client (a Prisma claim swept by raw SQL): the
 * recovery pairs by model, field and value, whatever the client. Undefined when the two stores' clients or
 * model imports clash.
 */
export function dbModuleRecoveredBy(
  p: DbLockParts,
  other: DbStore,
  kind: Exclude<RecoveryKind, "none"> = "valid",
): ModuleSpec | undefined {
  const base = dbModule({ ...p, recovery: "none" });
  const d = DIALECTS[other];
  // Two ORMs whose models are imported classes would import the same name twice (`Job` from both).
  const classModels = new Set<DbStore>(["sequelize", "mongoose", "typeorm-qb", "typeorm-repo", "mikro-orm"]);
  if (classModels.has(p.store) && classModels.has(other)) return undefined;
  if (d.clients.some((c) => base.clients.some((b) => b.name === c.name)) || (kind === "check-in-js" && !d.readOne))
    return undefined;
  const recovery = recoveryFn({ ...p, store: other }, kind);
  const fns = [...base.fns];
  fns.splice(1, 0, recovery);
  return { ...base, head: [...base.head, ...d.head([p.entity])], clients: [...base.clients, ...d.clients], fns };
}

/** A module of lookalikes only, in one store. */
export function dbLookalikeModule(store: DbStore, kinds: readonly DbLookalike[], s: Syntax): ModuleSpec {
  const d = DIALECTS[store];
  return {
    head: d.head(kinds.map((k) => LOOKALIKE_ENTITY[k])),
    clients: d.clients,
    fns: kinds.map((k) => lookalikeFn(store, k, s)),
    ...(d.transaction ? { transaction: d.transaction } : {}),
  };
}

export interface Expected {
  readonly rule: string;
  readonly messageId: string;
  readonly fn: string;
  /** The data the report must carry (a subset: the lock's model, field and value, and what names the flaw). */
  readonly data: Readonly<Record<string, string>>;
}

/** What the plugin must report about a database lock module: one finding per missing half, none for lookalikes. */
export function expectedDbFindings(p: DbLockParts): Expected[] {
  const d = DIALECTS[p.store];
  const lock = { model: d.model(p.entity), field: d.column(p.field), value: String(p.value) };
  const out: Expected[] = [];
  // An exported finder of stuck rows (`findStuck(cutoff)`, no write after it) hands the recovery to its callers.
  const handsOut = p.staleScan !== "none";
  if (p.recovery === "none" && !p.lease && !handsOut)
    out.push({ rule: "locks/require-stale-recovery", messageId: "missingRecovery", fn: "claim", data: lock });
  if (p.claimStyle === "cas-unread")
    out.push({ rule: "locks/atomic-claim", messageId: "unreadClaim", fn: "claim", data: lock });
  else if (p.claimStyle !== "cas") {
    out.push({
      rule: "locks/atomic-claim",
      messageId: "checkThenAct",
      fn: "claim",
      data: { ...lock, checkedWhere: p.claimStyle === "check-if" ? "in JavaScript" : "with a separate read" },
    });
  }
  if (p.staleScan === "start-time") {
    out.push({
      rule: "locks/progress-based-staleness",
      messageId: "startTimeScan",
      fn: "findStuck",
      data: { ...lock, timeField: d.column(p.start) },
    });
  }
  if (p.recovery === "start-time")
    out.push({
      rule: "locks/progress-based-staleness",
      messageId: "startTimeRecovery",
      fn: "recover",
      data: { ...lock, timeField: d.column(p.start) },
    });
  if (p.recovery === "missing-status")
    out.push({
      rule: "locks/conditional-recovery",
      messageId: "missingStatus",
      fn: "recover",
      data: { ...lock, target: String(p.reset) },
    });
  if (p.recovery === "missing-time")
    out.push({
      rule: "locks/conditional-recovery",
      messageId: "missingTime",
      fn: "recover",
      data: { ...lock, target: String(p.reset) },
    });
  if (p.recovery === "check-in-js")
    out.push({
      rule: "locks/conditional-recovery",
      messageId: "checkInJs",
      fn: "recover",
      data: { ...lock, checkedWhere: "in JavaScript" },
    });
  // A lease claim that stamps an owner column is told apart from the next holder only by that column: its
  // unfenced writes are take-over writes (the status alone would not fence them either).
  const takeover = p.lease && p.fence === "owner";
  const unfenced = (target: string) =>
    takeover
      ? { messageId: "takeoverWrite", data: { field: lock.field, value: lock.value } }
      : { messageId: "unfencedWrite", data: { ...lock, target } };
  // Q3 on the holder's writes is asked only once the claim can pass to a new holder while held: a lease, or a
  // recovery that judges age (a reset with no age test is conditional-recovery's finding, and takes no live claim).
  const changesHands = p.lease || handsOut || (p.recovery !== "none" && p.recovery !== "missing-time");
  if (!changesHands) return out;
  // The unfenced writes of one holder function are one finding, at the first (require-fencing names the others in
  // it): the completion in the runner's `try` and its release in the `finally`.
  const foldedInRun = p.runner && p.completion === "unfenced" && !p.completionFn && p.finallyRelease === "unfenced";
  if (p.runner && p.completion === "unfenced") {
    const found = unfenced(String(p.done));
    out.push({
      rule: "locks/require-fencing",
      fn: p.completionFn ? "finish" : "run",
      ...(foldedInRun && !takeover ? { ...found, messageId: "unfencedWrites" } : found),
    });
  }
  if (p.runner && p.finallyRelease === "unfenced" && !foldedInRun)
    out.push({ rule: "locks/require-fencing", fn: "run", ...unfenced(String(p.reset)) });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Redis locks

/** `app-cache`: an application's own cache service over Redis (`cache.set(key, v, { nx: true, ttl })`, `cache.delete(key)`). */
export type RedisClientKind = "ioredis" | "node-redis" | "upstash" | "app-cache";
/** `multi-var-expire`: the MULTI held in a const, SETNX and EXPIRE queued on it, then `exec()` (issue 16's pipelines in variables). */
export type KvAcquire = "set-ttl" | "set" | "setnx" | "setnx-expire" | "multi-expire" | "multi-var-expire";
export type KvRelease = "none" | "plain" | "owner" | "get-compare";
export const KV_LOOKALIKES = ["idempotency", "cache", "rate", "marker"] as const;
export type KvLookalike = (typeof KV_LOOKALIKES)[number];

export interface KvLockParts {
  readonly client: RedisClientKind;
  readonly quote: '"' | "'";
  /** The key's static part: with a lock word (`lock:report`) or without one (`report-run`). */
  readonly prefix: string;
  readonly keyStyle: "template" | "concat";
  /** The key held in a `const key` or written at each command. */
  readonly keyVar: boolean;
  readonly token: "uuid" | "constant";
  readonly acquire: KvAcquire;
  /** ioredis: `"PX", ms, "NX"` or `"NX", "EX", s`; node-redis: `PX` or `EX`. */
  readonly ttlVariant: number;
  readonly release: KvRelease;
  readonly tryFinally: boolean;
  /** Acquire and release in their own functions (`acquire`, `release`), called by the runner. */
  readonly split: boolean;
  /** With `split`: `acquire` hands back a handle whose `release()` the runner calls (`held.release()`). */
  readonly handle: boolean;
  readonly lookalikes: readonly KvLookalike[];
}

export function kvLockArb(
  options: { acquire?: fc.Arbitrary<KvAcquire>; release?: fc.Arbitrary<KvRelease> } = {},
): fc.Arbitrary<KvLockParts> {
  return fc
    .record({
      client: fc.constantFrom<RedisClientKind>("ioredis", "node-redis", "upstash", "app-cache"),
      quote: fc.constantFrom<'"' | "'">('"', "'"),
      prefix: fc.constantFrom("lock:report", "locks:export", "mutex:sync", "leader:billing", "report-run"),
      keyStyle: fc.constantFrom<"template" | "concat">("template", "concat"),
      keyVar: fc.boolean(),
      token: fc.constantFrom<"uuid" | "constant">("uuid", "constant"),
      acquire:
        options.acquire ??
        fc.constantFrom<KvAcquire>("set-ttl", "set", "setnx", "setnx-expire", "multi-expire", "multi-var-expire"),
      ttlVariant: fc.nat({ max: 3 }),
      release: options.release ?? fc.constantFrom<KvRelease>("none", "plain", "owner", "get-compare"),
      tryFinally: fc.boolean(),
      split: fc.boolean(),
      handle: fc.boolean(),
      lookalikes: fc.subarray([...KV_LOOKALIKES], { maxLength: 2 }),
      // An application's cache service sends no MULTI and has no script call of its own.
    })
    .filter((p) => p.client !== "app-cache" || (!p.acquire.startsWith("multi") && p.release !== "owner"));
}

const RELEASE_SCRIPT =
  'const RELEASE_IF_OWNER = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;';

function redisClient(kind: RedisClientKind): Client {
  switch (kind) {
    case "ioredis":
      return {
        name: "redis",
        declaration: `import Redis from "ioredis";\nconst redis = new Redis();`,
        type: "Redis",
        typeImport: `import Redis from "ioredis";`,
      };
    case "node-redis":
      return {
        name: "client",
        declaration: `import { createClient } from "redis";\nconst client = createClient();`,
        type: "RedisClientType",
        typeImport: `import type { RedisClientType } from "redis";`,
      };
    case "upstash":
      return {
        name: "redis",
        declaration: `import { Redis } from "@upstash/redis";\nconst redis = Redis.fromEnv();`,
        type: "Redis",
        typeImport: `import type { Redis } from "@upstash/redis";`,
      };
    case "app-cache":
      return {
        name: "cache",
        declaration: `import { cache } from "./cache";`,
        type: "CacheService",
        typeImport: `import type { CacheService } from "./cache";`,
      };
  }
}

/** The Redis commands of one client, spelled its way. */
function redisOps(p: KvLockParts, c: Ctx) {
  const r = c.client(p.client === "node-redis" ? "client" : p.client === "app-cache" ? "cache" : "redis");
  const q = p.quote;
  const app = p.client === "app-cache";
  return {
    set(key: string, value: string, ttl: boolean, nx = true): string {
      // The service's own option names: `nx`, and `ttl` in seconds.
      if (app)
        return `${r}.set(${key}, ${value}, { ${[...(nx ? ["nx: true"] : []), ...(ttl ? ["ttl: 30"] : [])].join(", ")} })`;
      if (p.client === "ioredis") {
        const opts = !ttl
          ? nx
            ? [`${q}NX${q}`]
            : []
          : p.ttlVariant % 2 === 0
            ? [`${q}PX${q}`, "30000", ...(nx ? [`${q}NX${q}`] : [])]
            : [...(nx ? [`${q}NX${q}`] : []), `${q}EX${q}`, "30"];
        return `${r}.set(${[key, value, ...opts].join(", ")})`;
      }
      let opts: string[];
      if (p.client === "upstash")
        opts = [...(nx ? ["nx: true"] : []), ...(ttl ? [p.ttlVariant % 2 === 0 ? "px: 30000" : "ex: 30"] : [])];
      else if (p.ttlVariant < 2)
        opts = [...(nx ? ["NX: true"] : []), ...(ttl ? [p.ttlVariant % 2 === 0 ? "PX: 30000" : "EX: 30"] : [])];
      // node-redis v5: `{ condition: "NX", expiration: { type: "PX", value } }`
      else
        opts = [
          ...(nx ? [`condition: ${q}NX${q}`] : []),
          ...(ttl
            ? [
                `expiration: { type: ${q}${p.ttlVariant === 2 ? "PX" : "EX"}${q}, value: ${p.ttlVariant === 2 ? "30000" : "30"} }`,
              ]
            : []),
        ];
      return `${r}.set(${key}, ${value}${opts.length > 0 ? `, { ${opts.join(", ")} }` : ""})`;
    },
    setnx: (key: string, value: string) => `${r}.${p.client === "node-redis" ? "setNX" : "setnx"}(${key}, ${value})`,
    /** SETNX and EXPIRE queued in one MULTI: sent together, so the key never lives without its expiry. */
    multiSetnxExpire: (key: string, value: string) =>
      `${r}.multi().${p.client === "node-redis" ? "setNX" : "setnx"}(${key}, ${value}).expire(${key}, 30).exec()`,
    expire: (key: string) => `${r}.expire(${key}, 30)`,
    del: (key: string) => `${r}.${app ? "delete" : "del"}(${key})`,
    get: (key: string) => `${r}.get(${key})`,
    incr: (key: string) => `${r}.incr(${key})`,
    ownerDelete: (key: string, token: string) =>
      ({
        ioredis: `${r}.eval(RELEASE_IF_OWNER, 1, ${key}, ${token})`,
        "node-redis": `${r}.eval(RELEASE_IF_OWNER, { keys: [${key}], arguments: [${token}] })`,
        upstash: `${r}.eval(RELEASE_IF_OWNER, [${key}], [${token}])`,
        // Not generated (kvLockArb): a cache service has no script call the plugin could read.
        "app-cache": `${r}.eval(RELEASE_IF_OWNER, [${key}], [${token}])`,
      })[p.client],
  };
}

function keyExpr(p: KvLockParts, prefix = p.prefix): string {
  const q = p.quote;
  return p.keyStyle === "template" ? `\`${prefix}:\${id}\`` : `${q}${prefix}:${q} + id`;
}

function kvLookalikeFn(p: KvLockParts, kind: KvLookalike): Fn {
  const q = p.quote;
  const ops = (c: Ctx) => redisOps(p, c);
  switch (kind) {
    case "idempotency":
      return {
        name: "handleEvent",
        role: "lookalike",
        params: ["id"],
        steps: [
          { kind: "await", bind: "first", expr: (c) => ops(c).set(`\`idempotency:event:\${id}\``, `${q}1${q}`, true) },
          { kind: "exit", cond: "!first", value: "false" },
          { kind: "await", expr: () => "work(id)" },
          { kind: "return", value: () => "true" },
        ],
      };
    case "cache":
      return {
        name: "cachedPrice",
        role: "lookalike",
        params: ["id"],
        steps: [
          { kind: "await", bind: "hit", expr: (c) => ops(c).get(`\`price:\${id}\``) },
          { kind: "exit", cond: "hit !== null", value: "hit" },
          { kind: "await", bind: "price", expr: () => "work(id)" },
          { kind: "await", expr: (c) => ops(c).set(`\`price:\${id}\``, "String(price)", true, false) },
          { kind: "return", value: () => "price" },
        ],
      };
    case "rate":
      return {
        name: "countHit",
        role: "lookalike",
        params: ["id"],
        steps: [
          { kind: "await", bind: "count", expr: (c) => ops(c).incr(`\`rate:\${id}\``) },
          { kind: "exit", cond: "count > 1", value: "count" },
          { kind: "await", expr: (c) => ops(c).expire(`\`rate:\${id}\``) },
          { kind: "return", value: () => "count" },
        ],
      };
    case "marker":
      return {
        name: "sendOnce",
        role: "lookalike",
        params: ["id"],
        steps: [
          { kind: "await", bind: "fresh", expr: (c) => ops(c).set(`\`sent:digest:\${id}\``, `${q}1${q}`, false) },
          { kind: "exit", cond: "!fresh", value: "false" },
          { kind: "await", expr: () => "work(id)" },
          { kind: "return", value: () => "true" },
        ],
      };
  }
}

/** The test that an acquire failed: SET NX answers "OK" or null, ioredis SETNX 1 or 0, node-redis setNX a boolean. */
function notAcquired(p: KvLockParts, bind: string): string {
  if (p.acquire === "set" || p.acquire === "set-ttl") return `${bind} !== ${p.quote}OK${p.quote}`;
  if (p.acquire === "multi-expire" || p.acquire === "multi-var-expire") return `!${bind}`;
  return p.client === "node-redis" ? `!${bind}` : `${bind} !== 1`;
}

/** The module the Redis parts describe. */
export function kvModule(p: KvLockParts): ModuleSpec {
  const q = p.quote;
  const fns: Fn[] = [];
  const head: string[] = [WORK_IMPORT];
  if (p.token === "uuid") head.push(`import { randomUUID } from "node:crypto";`);
  if (p.release === "owner") head.push(RELEASE_SCRIPT);
  const key = p.keyVar ? "key" : keyExpr(p);
  const keyStep: Step[] = p.keyVar ? [{ kind: "const", name: "key", value: () => keyExpr(p) }] : [];
  const token = p.token === "uuid" ? "token" : `${q}1${q}`;
  const ops = (c: Ctx) => redisOps(p, c);

  const setnxName = p.client === "node-redis" ? "setNX" : "setnx";
  const acquire: Step[] = [
    ...keyStep,
    ...(p.token === "uuid" ? [{ kind: "const", name: "token", value: () => "randomUUID()" } as const] : []),
    ...(p.acquire === "multi-var-expire"
      ? [
          {
            kind: "const",
            name: "tx",
            value: (c: Ctx) => `${c.client(p.client === "node-redis" ? "client" : "redis")}.multi()`,
          } as const,
          { kind: "stmt", text: `tx.${setnxName}(${key}, ${token});` } as const,
          { kind: "stmt", text: `tx.expire(${key}, 30);` } as const,
        ]
      : []),
    {
      kind: "await",
      bind: "ok",
      expr: (c) =>
        p.acquire === "set-ttl" || p.acquire === "set"
          ? ops(c).set(key, token, p.acquire === "set-ttl")
          : p.acquire === "multi-expire"
            ? ops(c).multiSetnxExpire(key, token)
            : p.acquire === "multi-var-expire"
              ? "tx.exec()"
              : ops(c).setnx(key, token),
    },
  ];
  const expire: Step[] = p.acquire === "setnx-expire" ? [{ kind: "await", expr: (c) => ops(c).expire(key) }] : [];
  // A GET-then-compare release reads the key, compares in JavaScript and deletes in a second command (racy, Q3).
  const release: Step[] =
    p.release === "none"
      ? []
      : p.release === "get-compare"
        ? [
            { kind: "await", bind: "current", expr: (c) => ops(c).get(key) },
            { kind: "exit", cond: `current !== ${token}`, value: "false" },
            { kind: "await", expr: (c) => ops(c).del(key) },
          ]
        : [{ kind: "await", expr: (c) => (p.release === "owner" ? ops(c).ownerDelete(key, token) : ops(c).del(key)) }];
  const work: Step = { kind: "await", expr: () => "work(id)" };

  if (p.split && p.handle && p.release !== "none") {
    // acquire(id) returns a handle (or null) whose release() gives the lock back: the key and token are the acquire's.
    fns.push({
      name: "acquire",
      role: "acquire",
      params: ["id"],
      steps: [
        ...acquire,
        { kind: "exit", cond: notAcquired(p, "ok"), value: "null" },
        ...expire,
        { kind: "handle", value: () => token, method: "release", body: release },
      ],
    });
  } else if (p.split) {
    // acquire(id) returns the token (or null); release(id[, token]) gives the lock back; the runner calls both.
    fns.push({
      name: "acquire",
      role: "acquire",
      params: ["id"],
      steps: [
        ...acquire,
        { kind: "exit", cond: notAcquired(p, "ok"), value: "null" },
        ...expire,
        { kind: "return", value: () => token },
      ],
    });
    if (p.release !== "none")
      fns.push({
        name: "release",
        role: "release",
        params: p.token === "uuid" ? ["id", "token"] : ["id"],
        steps: [...keyStep, ...release],
      });
  }
  if (p.split) {
    const releaseCall: Step[] =
      p.release === "none"
        ? []
        : p.handle
          ? [{ kind: "await", expr: () => "held.release()" }]
          : [{ kind: "await", expr: (c) => `${c.fn("release")}(${p.token === "uuid" ? "id, held" : "id"})` }];
    const steps: Step[] = [
      { kind: "await", bind: "held", expr: (c) => `${c.fn("acquire")}(id)` },
      { kind: "exit", cond: "held === null", value: "false" },
    ];
    if (p.tryFinally && releaseCall.length > 0) steps.push({ kind: "try", body: [work], cleanup: releaseCall });
    else steps.push(work, ...releaseCall, { kind: "return", value: () => "true" });
    fns.push({ name: "runTask", role: "runner", params: ["id"], steps });
  } else {
    const steps: Step[] = [...acquire, { kind: "exit", cond: notAcquired(p, "ok"), value: "false" }, ...expire];
    if (p.tryFinally && release.length > 0) steps.push({ kind: "try", body: [work], cleanup: release });
    else steps.push(work, ...release, { kind: "return", value: () => "true" });
    fns.push({ name: "runTask", role: "acquire", params: ["id"], steps });
  }
  for (const kind of p.lookalikes) fns.push(kvLookalikeFn(p, kind));
  return { head, clients: [redisClient(p.client)], fns };
}

/** A module of Redis lookalikes only. */
export function kvLookalikeModule(p: KvLockParts, kinds: readonly KvLookalike[]): ModuleSpec {
  return { head: [WORK_IMPORT], clients: [redisClient(p.client)], fns: kinds.map((k) => kvLookalikeFn(p, k)) };
}

/**
 * Whether the plugin should take the key for a lock (kv-pairing/kv-facts.ts): a lock word in the key or the functions, a
 * release in `finally`, or a release that checks the holder: the GET compared with the token stored, or a
 * compare-and-delete script handed it.
 */
export function kvLockLike(p: KvLockParts): boolean {
  return (
    /^(lock|locks|mutex|leader)\b/.test(p.prefix) ||
    p.split ||
    (p.tryFinally && p.release !== "none") ||
    (p.token === "uuid" && (p.release === "get-compare" || p.release === "owner"))
  );
}

export function expectedKvFindings(p: KvLockParts): Expected[] {
  const out: Expected[] = [];
  const fn = p.split ? "acquire" : "runTask";
  const key = JSON.stringify(`${p.prefix}:*`);
  const lockLike = kvLockLike(p);
  if ((p.acquire === "set" || p.acquire === "setnx") && lockLike) {
    out.push({
      rule: "locks/require-lock-ttl",
      messageId: "missingTtl",
      fn,
      data: { command: p.acquire === "set" ? "SET … NX" : "SETNX", key },
    });
  }
  if (p.acquire === "setnx-expire")
    out.push({ rule: "locks/require-lock-ttl", messageId: "separateExpire", fn, data: { command: "SETNX", key } });
  // A compare-and-delete handed the constant every holder stores checks no owner either (constantValue).
  if (
    (p.release === "plain" || p.release === "get-compare" || (p.release === "owner" && p.token === "constant")) &&
    lockLike
  ) {
    const messageId =
      p.token === "constant" ? "constantValue" : p.release === "plain" ? "plainDelete" : "getCompareDelete";
    out.push({ rule: "locks/owner-checked-release", messageId, fn: p.split ? "release" : "runTask", data: { key } });
  }
  // A release in the acquiring function but outside a `finally`: the awaited work can reject past it (and a
  // GET-then-compare release returns before its DEL when the value changed). With an expiry the TTL bounds it.
  // Split into helpers, the runner holds the lock between its two calls (function summaries): the same finding,
  // except that the GET-then-compare's early return is the release helper's, not a way out of the runner.
  if (!p.tryFinally && p.release !== "none" && lockLike) {
    const ttl =
      p.acquire === "set-ttl" ||
      p.acquire === "setnx-expire" ||
      p.acquire === "multi-expire" ||
      p.acquire === "multi-var-expire";
    const messageId = ttl
      ? "ttlReleaseMissed"
      : p.release === "get-compare" && !p.split
        ? "missedOnReturn"
        : "missedOnRejection";
    out.push({
      rule: "locks/release-in-finally",
      messageId,
      fn: "runTask",
      data: { lock: `the lock \`${p.prefix}:*\`` },
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Lock rows: an insert into a lock table under a unique key, freed only by a sweeper judged by age

export const LOCK_ROW_STORES = ["prisma", "knex", "kysely", "drizzle", "pg", "mongo"] as const;
export type LockRowStore = (typeof LOCK_ROW_STORES)[number];

export interface LockRowParts {
  readonly store: LockRowStore;
  readonly quote: '"' | "'";
  /** The lock table, named with a lock word (`job_locks`, `cron_locks`, `leases`). */
  readonly table: "jobLock" | "cronLock" | "lease";
  /** The insert sets an expiry column. */
  readonly expiry: boolean;
  /** A sweeper that deletes rows whose expiry passed, or (Q2) rows created long ago. */
  readonly sweeper: "none" | "expired" | "created";
  /** The holder deletes its row after the work (in `finally`, or after it). */
  readonly release: "none" | "after" | "finally";
  /** The release deletes only this holder's row (`owner = process.pid` in its filter). */
  readonly ownerCheck: boolean;
  /** knex and pg: a plain insert whose duplicate-key error is caught (`23505`, `ER_DUP_ENTRY`), not ON CONFLICT. */
  readonly duplicate: boolean;
}

export function lockRowArb(): fc.Arbitrary<LockRowParts> {
  return fc.record({
    store: fc.constantFrom(...LOCK_ROW_STORES),
    quote: fc.constantFrom<'"' | "'">('"', "'"),
    table: fc.constantFrom<LockRowParts["table"]>("jobLock", "cronLock", "lease"),
    expiry: fc.boolean(),
    sweeper: fc.constantFrom<LockRowParts["sweeper"]>("none", "expired", "created"),
    release: fc.constantFrom<LockRowParts["release"]>("none", "after", "finally"),
    ownerCheck: fc.boolean(),
    duplicate: fc.boolean(),
  });
}

/** `try { await insert; return true } catch (e) { if (duplicate) return false; throw e; }` around a plain insert. */
function caughtInsert(insert: Expr, duplicate: string): Step[] {
  return [
    {
      kind: "catch",
      body: [
        { kind: "await", expr: insert },
        { kind: "return", value: () => "true" },
      ],
      param: "e",
      handler: [
        { kind: "exit", cond: duplicate, value: "false" },
        { kind: "stmt", text: "throw e;" },
      ],
    },
  ];
}

/** The table as each store names it: `jobLock` (Prisma delegate, Drizzle table), `job_locks` (SQL). */
function lockTable(p: LockRowParts): string {
  return p.store === "prisma" || p.store === "drizzle"
    ? p.store === "drizzle"
      ? plural(p.table)
      : p.table
    : plural(snake(p.table));
}

export function lockRowModule(p: LockRowParts): ModuleSpec {
  const q = p.quote;
  const t = lockTable(p);
  const col = (f: string) => (p.store === "knex" || p.store === "kysely" || p.store === "pg" ? snake(f) : f);
  const until = "new Date(Date.now() + 60000)";
  const cutoffTime = p.sweeper === "created" ? "createdAt" : "expiresAt";
  const fns: Fn[] = [];
  const head: string[] = [WORK_IMPORT];
  let clients: readonly Client[];
  let insert: Step[];
  let sweep: Expr;
  let remove: Expr;
  switch (p.store) {
    case "prisma": {
      clients = prisma.clients;
      const data = `{ name, owner: process.pid${p.expiry ? `, expiresAt: ${until}` : ""} }`;
      insert = [
        {
          kind: "catch",
          body: [
            { kind: "await", expr: (c) => `${c.client("prisma")}.${t}.create({ data: ${data} })` },
            { kind: "return", value: () => "true" },
          ],
          param: "e",
          handler: [
            { kind: "exit", cond: `e.code === ${q}P2002${q}`, value: "false" },
            { kind: "stmt", text: "throw e;" },
          ],
        },
      ];
      sweep = (c) => `${c.client("prisma")}.${t}.deleteMany({ where: { ${cutoffTime}: { lt: cutoff } } })`;
      remove = (c) =>
        `${c.client("prisma")}.${t}.deleteMany({ where: { name${p.ownerCheck ? ", owner: process.pid" : ""} } })`;
      break;
    }
    case "knex": {
      clients = knex.clients;
      const row = `{ name, owner: process.pid${p.expiry ? `, expires_at: ${until}` : ""} }`;
      insert = p.duplicate
        ? caughtInsert(
            (c) => `${c.client("knex")}(${q}${t}${q}).insert(${row})`,
            `e.code === ${q}ER_DUP_ENTRY${q} || e.code === ${q}23505${q}`,
          )
        : [
            {
              kind: "await",
              bind: "rows",
              expr: (c) =>
                `${c.client("knex")}(${q}${t}${q}).insert(${row}).onConflict(${q}name${q}).ignore().returning(${q}name${q})`,
            },
            { kind: "return", value: () => "rows.length === 1" },
          ];
      sweep = (c) => `${c.client("knex")}(${q}${t}${q}).where(${q}${col(cutoffTime)}${q}, ${q}<${q}, cutoff).del()`;
      remove = (c) =>
        `${c.client("knex")}(${q}${t}${q}).where({ name${p.ownerCheck ? ", owner: process.pid" : ""} }).del()`;
      break;
    }
    case "kysely": {
      clients = kysely.clients;
      insert = [
        {
          kind: "await",
          bind: "r",
          expr: (c) =>
            `${c.client("db")}.insertInto(${q}${t}${q}).values({ name, owner: process.pid${p.expiry ? `, expires_at: ${until}` : ""} }).onConflict((oc) => oc.column(${q}name${q}).doNothing()).executeTakeFirst()`,
        },
        { kind: "return", value: () => "Number(r.numInsertedOrUpdatedRows) === 1" },
      ];
      sweep = (c) =>
        `${c.client("db")}.deleteFrom(${q}${t}${q}).where(${q}${col(cutoffTime)}${q}, ${q}<${q}, cutoff).execute()`;
      remove = (c) =>
        `${c.client("db")}.deleteFrom(${q}${t}${q}).where(${q}name${q}, ${q}=${q}, name)${p.ownerCheck ? `.where(${q}owner${q}, ${q}=${q}, process.pid)` : ""}.execute()`;
      break;
    }
    case "drizzle": {
      clients = drizzle.clients;
      head.push(`import { and, eq, lt } from "drizzle-orm";`, `import { ${t} } from "./schema";`);
      insert = [
        {
          kind: "await",
          bind: "rows",
          expr: (c) =>
            `${c.client("db")}.insert(${t}).values({ name, owner: process.pid${p.expiry ? `, expiresAt: ${until}` : ""} }).onConflictDoNothing().returning()`,
        },
        { kind: "return", value: () => "rows.length === 1" },
      ];
      sweep = (c) => `${c.client("db")}.delete(${t}).where(lt(${t}.${cutoffTime}, cutoff))`;
      remove = (c) =>
        p.ownerCheck
          ? `${c.client("db")}.delete(${t}).where(and(eq(${t}.name, name), eq(${t}.owner, process.pid)))`
          : `${c.client("db")}.delete(${t}).where(eq(${t}.name, name))`;
      break;
    }
    case "pg": {
      clients = pg.clients;
      const cols = `name, owner${p.expiry ? ", expires_at" : ""}`;
      const vals = `$1, $2${p.expiry ? ", now() + interval '1 minute'" : ""}`;
      insert = p.duplicate
        ? caughtInsert(
            (c) => `${c.client("pool")}.query("INSERT INTO ${t} (${cols}) VALUES (${vals})", [name, process.pid])`,
            `e.code === ${q}23505${q}`,
          )
        : [
            {
              kind: "await",
              bind: "r",
              expr: (c) =>
                `${c.client("pool")}.query("INSERT INTO ${t} (${cols}) VALUES (${vals}) ON CONFLICT DO NOTHING", [name, process.pid])`,
            },
            { kind: "return", value: () => "r.rowCount === 1" },
          ];
      sweep = (c) => `${c.client("pool")}.query("DELETE FROM ${t} WHERE ${col(cutoffTime)} < $1", [cutoff])`;
      remove = (c) =>
        p.ownerCheck
          ? `${c.client("pool")}.query("DELETE FROM ${t} WHERE name = $1 AND owner = $2", [name, process.pid])`
          : `${c.client("pool")}.query("DELETE FROM ${t} WHERE name = $1", [name])`;
      break;
    }
    case "mongo": {
      clients = mongoDialect(true).clients;
      const doc = `{ _id: name, owner: process.pid${p.expiry ? `, expiresAt: ${until}` : ""} }`;
      insert = [
        {
          kind: "catch",
          body: [
            { kind: "await", expr: (c) => `${c.client("db")}.collection(${q}${t}${q}).insertOne(${doc})` },
            { kind: "return", value: () => "true" },
          ],
          param: "err",
          handler: [
            { kind: "exit", cond: `String(err).includes(${q}E11000${q})`, value: "false" },
            { kind: "stmt", text: "throw err;" },
          ],
        },
      ];
      sweep = (c) => `${c.client("db")}.collection(${q}${t}${q}).deleteMany({ ${cutoffTime}: { $lt: cutoff } })`;
      remove = (c) =>
        `${c.client("db")}.collection(${q}${t}${q}).deleteOne({ _id: name${p.ownerCheck ? ", owner: process.pid" : ""} })`;
      break;
    }
  }
  fns.push({ name: "acquire", role: "acquire", params: ["name"], steps: insert });
  if (p.sweeper !== "none")
    fns.push({ name: "sweep", role: "recovery", params: ["cutoff"], steps: [{ kind: "await", expr: sweep }] });
  const release: Step = { kind: "await", expr: remove };
  const steps: Step[] = [
    { kind: "await", bind: "got", expr: (c) => `${c.fn("acquire")}(name)` },
    { kind: "exit", cond: "!got", value: "false" },
  ];
  if (p.release === "finally")
    steps.push({ kind: "try", body: [{ kind: "await", expr: () => "work(name)" }], cleanup: [release] });
  else
    steps.push({ kind: "await", expr: () => "work(name)" }, ...(p.release === "after" ? [release] : []), {
      kind: "return",
      value: () => "true",
    });
  fns.push({ name: "runLocked", role: "runner", params: ["name"], steps });
  return { head, clients, fns };
}

/**
 * A lock row with no sweeper is never freed if its holder dies; a sweeper judged by creation time is Q2. Once a
 * sweeper can free the row for another holder, a release by the lock's name alone (no owner in the filter) frees
 * whichever holder has it now (Q3).
 */
export function expectedLockRowFindings(p: LockRowParts): Expected[] {
  const model = lockTable(p);
  // A Mongo lock document holding a time ahead of now may be deleted by a TTL index the module does not show
  // (StateWrite.storeExpiry): its missing sweeper is unknown, not reported.
  if (p.sweeper === "none" && p.store === "mongo" && p.expiry) return [];
  if (p.sweeper === "none")
    return [{ rule: "locks/require-stale-recovery", messageId: "missingExpiry", fn: "acquire", data: { model } }];
  const out: Expected[] = [];
  if (p.sweeper === "created") {
    out.push({
      rule: "locks/progress-based-staleness",
      messageId: "startTimeLockRow",
      fn: "sweep",
      data: {
        model,
        what: "sweep",
        timeField: p.store === "knex" || p.store === "kysely" || p.store === "pg" ? "created_at" : "createdAt",
      },
    });
  }
  if (p.release !== "none" && !p.ownerCheck) {
    out.push({
      rule: "locks/owner-checked-release",
      messageId: "rowRelease",
      fn: "runLocked",
      data: {
        operation: "delete",
        lock: `lock row in ${model}`,
        filter: p.store === "mongo" ? "_id" : "name",
        expires: "is swept when stale",
      },
    });
  }
  return out;
}
