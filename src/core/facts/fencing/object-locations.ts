/**
 * Where an object-storage or file write goes, read for a holder that comes back late: a location keyed by the job,
 * new on every run, shared with other jobs, or decided elsewhere; and whether the write carries the lock's token.
 */
import type { TSESLint } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import type { LockToken } from "../../model/held-locks.js";
import { normalizeModel } from "../../model/names.js";
import { findVariable, getConstInit, keyName, unwrap } from "../../reading/values.js";
import { namesIn } from "./expression-names.js";
import { expressionName } from "../../reading/ast.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** Names of an identity, and what is left of them is whose (`exportId` → `export`, `id` → nothing). */
const IDENTITY_NAME = /^(.*?)_?(?:id|Id|ID|key|Key|slug|Slug|uuid|Uuid|UUID)$/;

/** Names of a content hash: a location built from one is the same for the same content (content-addressed). */
const CONTENT_NAME = /(?:^|[a-z_])(?:hash|digest|checksum|sha\d*|md5|etag|contentId)$/i;

/**
 * Variable names that say nothing about whose row they hold (`row`, `job`, `payload`, `params`): the job's own row or
 * input is what an effect under its lock holds in one, so its id (`job.id`) is taken for the job's.
 */
const JOB_ROW_NAMES =
  /^(?:row|record|item|entity|doc|document|data|result|entry|payload|input|params|args|job|task|work|message|msg)$/i;

/** Names of a location someone else decided (a parameter `key`, `opts.path`). */
const LOCATION_NAME =
  /(?:^|[a-z_])(?:key|path|name|dest|destination|location|target|file|filename|url|uri|prefix|folder|dir|directory)$/i;

/** Calls whose result is new on every run: a location built from one is never the same twice (it overwrites nothing). */
const GENERATOR =
  /^(?:randomUUID|uuid|uuidv4|v4|v1|v7|nanoid|cuid|cuid2|createId|ulid|now|random|randomBytes|toISOString|getTime|valueOf|hrtime)$/;

/** Calls that only reshape their inputs (`path.join`, `String`, `encodeURIComponent`, `.toLowerCase()`). */
const TRANSPARENT =
  /^(?:join|resolve|normalize|relative|basename|dirname|extname|format|String|encodeURIComponent|encodeURI|toString|toLowerCase|toUpperCase|trim|replace|replaceAll|slice|substring|padStart|padEnd|concat|toFixed)$/;

type Verdict = "keyed" | "fresh" | "unknown" | "fixed";

/** A part keyed by the job or new on every run decides the whole location; an unknown part makes it unknown. */
function combine(verdicts: readonly Verdict[]): Verdict {
  for (const v of ["keyed", "fresh", "unknown"] as const) if (verdicts.includes(v)) return v;
  return "fixed";
}

export function rootOf(node: Node): Node {
  let n = unwrap(node);
  while (n.type === "MemberExpression") n = unwrap(n.object);
  return n;
}

/** The job the locks an effect runs under are about. */
export interface Job {
  readonly names: ReadonlySet<string>;
  readonly subjects: ReadonlySet<string>;
}

/** An identity name (`exportId`, `id`, `jobKey`) and whether it is the job's: bare, or whose owner is a subject. */
function identityOf(name: string, job: Job): "job" | "other" | undefined {
  const m = IDENTITY_NAME.exec(name);
  if (!m) return undefined;
  return m[1] === "" || relates(m[1]!, job) ? "job" : "other";
}

/** `renderJob` relates to the subject `job`, `exports` to `export`. */
function relates(name: string, job: Job): boolean {
  const n = normalizeModel(name);
  return n.length > 0 && [...job.subjects].some((s) => n.includes(s) || s.includes(n));
}

/**
 * Whether an object key or path is the same for every run of this job and no other (`keyed`: built from the job's
 * id, the lock key's variables, a content hash), new on every run (`fresh`: a random id, a time: it overwrites
 * nothing, only the record pointing at it needs fencing), shared with other jobs (`fixed`: static text, another
 * row's id, an input that is no identity), or decided elsewhere (`unknown`: a parameter named like a location, a
 * helper's result, `this.path`).
 */
export function locate(sourceCode: SourceCode, node: Node, job: Job, depth = 0): Verdict {
  if (depth > 6) return "unknown";
  const n = unwrap(node);
  const all = (nodes: readonly (Node | null)[]) =>
    combine(
      nodes
        .filter((x): x is Node => x !== null && x.type !== "SpreadElement")
        .map((x) => locate(sourceCode, x, job, depth + 1)),
    );
  switch (n.type) {
    case "Literal":
      return "fixed";
    case "TemplateLiteral":
      return all(n.expressions);
    case "BinaryExpression":
    case "LogicalExpression":
      return all([n.left as Node, n.right]);
    case "ConditionalExpression":
      return all([n.consequent, n.alternate]);
    case "AwaitExpression":
      return locate(sourceCode, n.argument, job, depth + 1);
    case "ArrayExpression":
      return all(n.elements);
    case "Identifier": {
      if (job.names.has(n.name) || CONTENT_NAME.test(n.name)) return "keyed";
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") return locate(sourceCode, init, job, depth + 1);
      const def = findVariable(sourceCode, n)?.defs[0];
      if (def?.type !== "Parameter") return "unknown";
      if (identityOf(n.name, job) === "job") return "keyed";
      // A parameter named like a location was decided by the caller; any other is an input of the job (`format`,
      // `projectId`).
      return LOCATION_NAME.test(n.name) ? "unknown" : "fixed";
    }
    case "MemberExpression": {
      const text = sourceCode.getText(n).replace(/\s+/g, "").replace(/\?\./g, ".");
      const root = rootOf(n);
      const property = keyName(n.property, n.computed);
      if (job.names.has(text) || (root.type === "Identifier" && job.names.has(root.name))) return "keyed";
      if (root.type === "Identifier" && root.name === "process") return "fixed"; // process.env.BUCKET_PREFIX
      if (property !== undefined && CONTENT_NAME.test(property)) return "keyed";
      const identity = property === undefined ? undefined : identityOf(property, job);
      const locationLike = property !== undefined && LOCATION_NAME.test(property);
      if (identity === "job" && IDENTITY_NAME.exec(property!)![1] !== "") return "keyed"; // payload.exportId
      if (identity === "job" && !locationLike) {
        // `export.id`, `row.id`: the job's row; `project.id`: another row's.
        const owner = unwrap(n.object);
        const ownerName = expressionName(owner);
        return ownerName === undefined || JOB_ROW_NAMES.test(ownerName) || relates(ownerName, job) ? "keyed" : "fixed";
      }
      if (locationLike) return "unknown"; // opts.key, job.outputPath: decided elsewhere
      if (identity === "other") return "fixed"; // job.projectId
      if (root.type === "Identifier") {
        const init = getConstInit(sourceCode, root);
        if (init && unwrap(init).type === "ObjectExpression") return "fixed"; // a module's config object
      }
      return "unknown";
    }
    case "NewExpression":
      return n.callee.type === "Identifier" && n.callee.name === "Date" ? "fresh" : "unknown";
    case "CallExpression": {
      const callee = unwrap(n.callee);
      const name = expressionName(callee);
      if (name && GENERATOR.test(name)) return "fresh";
      if (name && TRANSPARENT.test(name)) {
        const object =
          callee.type === "MemberExpression" && !/^(?:path|posix|win32)$/.test(sourceCode.getText(callee.object))
            ? [callee.object]
            : [];
        return all([...object, ...n.arguments]);
      }
      // A helper that builds the key: keyed when it is handed the job, otherwise unknown.
      return all(n.arguments) === "keyed" ? "keyed" : "unknown";
    }
    default:
      return "unknown";
  }
}

/** The call passes the token on: its name appears in the arguments (a key, a condition, metadata). */
export function carries(sourceCode: SourceCode, call: Node, token: LockToken | undefined): boolean {
  if (!token || call.type !== "CallExpression") return false;
  const names = new Set<string>();
  for (const a of call.arguments) namesIn(sourceCode, a, names);
  const text = token.node ? sourceCode.getText(unwrap(token.node)) : token.text;
  return names.has(text);
}
