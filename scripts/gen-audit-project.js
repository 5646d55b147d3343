// Writes a generated TypeScript service of N modules (default 1,200) for timing `locks-audit` against `tsc --noEmit`
// on the same project (scripts/bench-audit.js). The modules look like a real back end: models with types, services
// that claim jobs with Prisma, raw SQL and Redis, sweepers in their own modules, controllers that import the
// services, and plain helpers with no lock at all. Deterministic: the same N gives the same files.
//   node scripts/gen-audit-project.js <dir> [--modules N]
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** `typeRoots`: where the project finds @types/node (a Node back end has it; default: this repository's). */
export function generateProject(
  dir,
  modules = 1200,
  typeRoots = [fileURLToPath(new URL("../node_modules/@types", import.meta.url))],
) {
  rmSync(dir, { recursive: true, force: true });
  const write = (rel, text) => {
    mkdirSync(join(dir, rel, ".."), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  write(
    "tsconfig.json",
    JSON.stringify(
      {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          skipLibCheck: true,
          noEmit: true,
          types: ["node"],
          typeRoots,
          lib: ["ES2022"],
        },
        include: ["src"],
      },
      null,
      2,
    ),
  );
  write(
    "src/db.ts",
    `export interface Delegate<T> {
  updateMany(args: { where: Record<string, unknown>; data: Partial<T> }): Promise<{ count: number }>;
  update(args: { where: { id: string }; data: Partial<T> }): Promise<T>;
  findMany(args: { where: Record<string, unknown>; take?: number }): Promise<T[]>;
  findUnique(args: { where: { id: string } }): Promise<T | null>;
}
export interface Redis {
  set(key: string, value: string, ...args: (string | number)[]): Promise<"OK" | null>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
  eval(script: string, keys: number, ...args: string[]): Promise<unknown>;
}
export declare const prisma: Record<string, Delegate<Record<string, unknown>>> & { $queryRaw(q: TemplateStringsArray, ...v: unknown[]): Promise<unknown[]> };
export declare const redis: Redis;
`,
  );
  const groups = Math.max(1, Math.ceil(modules / 6));
  let n = 1;
  for (let g = 0; g < groups && n < modules; g++) {
    const name = `job${g}`;
    const Model = `Job${g}`;
    // model + DTO
    write(
      `src/${name}/model.ts`,
      `export type ${Model}Status = "PENDING" | "RUNNING" | "DONE" | "FAILED";
export interface ${Model} {
  id: string;
  status: ${Model}Status;
  attempts: number;
  payload: { input: string; options: Record<string, string> };
  updatedAt: Date;
  createdAt: Date;
}
export function describe${Model}(job: ${Model}): string {
  return \`\${job.id} (\${job.status}, \${job.attempts} attempts)\`;
}
`,
    );
    n++;
    // the service: claim, complete, fail
    const kind = g % 4;
    const claim =
      kind === 3
        ? `  const token = Math.random().toString(36).slice(2);
  const ok = await redis.set(\`lock:${name}:\${id}\`, token, "PX", 30_000, "NX");
  if (ok === null) return false;
  try {
    await work(id);
  } finally {
    await redis.eval('if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0', 1, \`lock:${name}:\${id}\`, token);
  }
  return true;`
        : `  const claimed = await prisma.${name}.updateMany({ where: { id, status: { not: "RUNNING" } }, data: { status: "RUNNING", updatedAt: new Date() } });
  if (claimed.count === 0) return false;
  try {
    await work(id);
    await prisma.${name}.updateMany({ where: { id, status: "RUNNING" }, data: { status: "DONE", updatedAt: new Date() } });
  } catch (error) {
    await prisma.${name}.updateMany({ where: { id, status: "RUNNING" }, data: { status: "FAILED", updatedAt: new Date() } });
    throw error;
  }
  return true;`;
    write(
      `src/${name}/service.ts`,
      `import { prisma, redis } from "../db.js";
import type { ${Model} } from "./model.js";
import { describe${Model} } from "./model.js";

async function work(id: string): Promise<void> {
  const job = (await prisma.${name}.findUnique({ where: { id } })) as unknown as ${Model} | null;
  if (!job) throw new Error(\`no job \${id}\`);
  if (describe${Model}(job).length === 0) throw new Error("empty");
}

export async function run${Model}(id: string): Promise<boolean> {
${claim}
}

export async function list${Model}(status: ${Model}["status"]): Promise<${Model}[]> {
  return (await prisma.${name}.findMany({ where: { status }, take: 50 })) as unknown as ${Model}[];
}
`,
    );
    n++;
    // the sweeper, in its own module (claims of kind 0 and 1 are recovered here; kind 2 is not)
    write(
      `src/${name}/sweeper.ts`,
      kind < 2
        ? `import { prisma } from "../db.js";

const STALE_MS = 15 * 60 * 1000;

export async function sweep${Model}(): Promise<number> {
  const threshold = new Date(Date.now() - STALE_MS);
  const res = await prisma.${name}.updateMany({
    where: { status: "RUNNING", updatedAt: { lt: threshold } },
    data: { status: "FAILED" },
  });
  return res.count;
}
`
        : `import { prisma } from "../db.js";

export async function archive${Model}(before: Date): Promise<number> {
  const res = await prisma.${name}.updateMany({ where: { status: "DONE", updatedAt: { lt: before } }, data: { status: "FAILED" } });
  return res.count;
}
`,
    );
    n++;
    write(
      `src/${name}/controller.ts`,
      `import { run${Model}, list${Model} } from "./service.js";
import type { ${Model} } from "./model.js";

export interface Request { params: Record<string, string>; query: Record<string, string | undefined> }
export interface Response { status(code: number): Response; json(body: unknown): void }

export async function post${Model}(req: Request, res: Response): Promise<void> {
  const id = req.params["id"];
  if (!id) return res.status(400).json({ error: "id" });
  const started = await run${Model}(id);
  res.status(started ? 202 : 409).json({ started });
}

export async function get${Model}s(req: Request, res: Response): Promise<void> {
  const status = (req.query["status"] ?? "PENDING") as ${Model}["status"];
  const jobs: ${Model}[] = await list${Model}(status);
  res.status(200).json(jobs.map((j) => ({ id: j.id, status: j.status })));
}
`,
    );
    n++;
    write(
      `src/${name}/validate.ts`,
      `export interface ${Model}Input { input: string; options?: Record<string, string> }
const MAX = ${100 + g};
export function validate${Model}(body: unknown): ${Model}Input {
  if (typeof body !== "object" || body === null) throw new TypeError("body must be an object");
  const input = (body as { input?: unknown }).input;
  if (typeof input !== "string" || input.length === 0 || input.length > MAX) throw new RangeError("input");
  const options = (body as { options?: Record<string, string> }).options;
  return options ? { input, options } : { input };
}
`,
    );
    n++;
    write(
      `src/${name}/format.ts`,
      `import type { ${Model} } from "./model.js";
export function toCsv${Model}(rows: readonly ${Model}[]): string {
  const head = "id,status,attempts,updatedAt";
  return [head, ...rows.map((r) => [r.id, r.status, String(r.attempts), r.updatedAt.toISOString()].join(","))].join("\\n");
}
export const ${name}Labels: Record<${Model}["status"], string> = { PENDING: "waiting", RUNNING: "running", DONE: "done", FAILED: "failed" };
`,
    );
    n++;
  }
  return n;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop())) {
  const dir = process.argv[2];
  if (!dir) {
    console.error("usage: node scripts/gen-audit-project.js <dir> [--modules N]");
    process.exit(2);
  }
  const i = process.argv.indexOf("--modules");
  const count = generateProject(dir, i > 0 ? Number(process.argv[i + 1]) : 1200);
  console.log(`${count} modules in ${dir}`);
}
