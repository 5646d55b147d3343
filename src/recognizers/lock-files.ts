/**
 * The file system as a lock store: the calls a lock file is made of, on `fs`, `fs/promises`, `fs-extra`, their
 * named imports, or a file system handed in (`options.fs`). An `open` with an exclusive flag (`"wx"`, `O_EXCL`) creates a file only if it is absent, as SET NX
 * does a key; `existsSync`, `stat` and `readFile` read it (whether it is there, its age, the holder it names);
 * `unlink`/`rm` remove it; `utimes` refreshes its age; `rename` moves it (aside, or into place). A `mkdir` is read only when its path is named like a lock (a
 * directory lock), since most directories are made to hold files. Plain `writeFile`s are the `fs` object store's
 * (object-storage.ts); whether any of this is a lock is decided by what the module does with one path
 * (src/core/facts/lock-files.ts), not here.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { FileOp } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { fsFunctionOf } from "./object-storage.js";
import { evaluate, findProperty, getConstInit, objectLiteral, unwrap } from "../core/reading/values.js";
import { hasLockWord } from "../core/model/settings.js";

const OPS: Record<string, FileOp["op"]> = {
  open: "open",
  openSync: "open",
  exists: "exists",
  existsSync: "exists",
  access: "exists",
  accessSync: "exists",
  pathExists: "exists",
  pathExistsSync: "exists",
  stat: "stat",
  statSync: "stat",
  lstat: "stat",
  lstatSync: "stat",
  readFile: "read",
  readFileSync: "read",
  readJson: "read",
  readJsonSync: "read",
  appendFile: "append",
  appendFileSync: "append",
  unlink: "remove",
  unlinkSync: "remove",
  rm: "remove",
  rmSync: "remove",
  remove: "remove",
  removeSync: "remove",
  rmdir: "remove",
  rmdirSync: "remove",
  utimes: "touch",
  utimesSync: "touch",
  lutimes: "touch",
  lutimesSync: "touch",
  mkdir: "open",
  mkdirSync: "open",
  rename: "rename",
  renameSync: "rename",
};

/** The calls that can create a lock file (plain `writeFile`s are the `fs` object store's, object-storage.ts). */
const CREATES = ["open", "openSync", "appendFile", "appendFileSync", "mkdir", "mkdirSync"];

/** The flags an `open` is given: a string (`"wx"`), or constants or'ed together (`O_CREAT | O_EXCL`). */
function openFlags(ctx: RecognizerContext, flag: TSESTree.CallExpressionArgument | undefined): string {
  if (!flag || flag.type === "SpreadElement") return "r";
  const value = evaluate(ctx.sourceCode, flag);
  if (typeof value?.value === "string") return value.value;
  const text = ctx.sourceCode.getText(flag);
  return (/O_EXCL/.test(text) ? "x" : "") + (/O_CREAT|O_WRONLY|O_RDWR|O_TRUNC/.test(text) ? "w" : "");
}

/** `mkdir(path)` without `{ recursive: true }`: it fails when the directory exists, so it creates exclusively. */
function exclusiveMkdir(ctx: RecognizerContext, call: TSESTree.CallExpression): boolean {
  const options = call.arguments[1];
  if (!options || options.type === "SpreadElement") return true;
  const object = objectLiteral(ctx.sourceCode, options);
  if (!object)
    return unwrap(options).type === "ArrowFunctionExpression" || unwrap(options).type === "FunctionExpression";
  const recursive = findProperty(object, "recursive")?.value;
  return recursive === undefined || evaluate(ctx.sourceCode, recursive)?.value === false;
}

/** A path named like a lock, as written or where its const is made (`const lockfilePath = getLockFile(file)`). */
function namedLikeLock(ctx: RecognizerContext, path: TSESTree.Node): boolean {
  if (hasLockWord(ctx.sourceCode.getText(path))) return true;
  const p = unwrap(path);
  const init = p.type === "Identifier" ? getConstInit(ctx.sourceCode, p) : undefined;
  return init !== undefined && init.type !== "TSEnumDeclaration" && hasLockWord(ctx.sourceCode.getText(init));
}

export const lockFilesRecognizer: Recognizer = {
  store: "file",
  // A pid file, or an exclusive create: lock files the shared vocabulary's lock words may not name.
  evidence: /\bpid|Pid[A-Z]|\.pid\b|['"`][wa]x\+?['"`]|O_EXCL/,
  // Creating a file is evidence a module may hold a lock file; reading, removing or touching one is not on its own.
  methods: new Set(CREATES),
  companions: new Set(Object.keys(OPS).filter((name) => !CREATES.includes(name))),
  functions: new Set(Object.keys(OPS)),
  recognize(call, ctx): FileOp | undefined {
    const path = call.arguments[0];
    if (!path || path.type === "SpreadElement") return undefined;
    const name = fsFunctionOf(ctx, call);
    const op = name !== undefined && Object.hasOwn(OPS, name) ? OPS[name] : undefined;
    if (!op || !name) return undefined;
    let exclusive = false;
    let creates = false;
    if (name.startsWith("mkdir")) {
      // A directory made to hold files is no lock; one named like a lock and made exclusively is.
      if (!namedLikeLock(ctx, path) || !exclusiveMkdir(ctx, call)) return undefined;
      exclusive = creates = true;
    } else if (op === "open") {
      const flags = openFlags(ctx, call.arguments[1]);
      exclusive = flags.includes("x");
      creates = /[wax]/.test(flags);
    }
    return { access: "file", store: "file", op, exclusive, creates, name, path, node: call };
  },
};
