/**
 * Object storage and files: the writes a lock holder makes outside the database, which a holder that resumed after
 * its lock lapsed can still make late. One recognizer per store, each turning a call into an `ObjectWrite` (the
 * location written and whether the store refuses the write when the object exists or changed):
 * - **S3** (AWS SDK v3): `client.send(new PutObjectCommand({ Bucket, Key, … }))` (also `CopyObjectCommand`,
 *   `CompleteMultipartUploadCommand`), `new Upload({ client, params }).done()` from `@aws-sdk/lib-storage`, and the
 *   method style of the v3 aggregated client and v2 (`s3.putObject({ Bucket, Key })`, `s3.upload({ Bucket, Key })`);
 *   conditional with `IfNoneMatch` or `IfMatch`.
 * - **Google Cloud Storage**: `bucket.file(name).save(data, options)` and `.createWriteStream(options)`,
 *   `bucket.upload(path, { destination })`; conditional with `ifGenerationMatch` (in `preconditionOpts` or not).
 * - **Azure Blob**: `container.getBlockBlobClient(name).uploadData|upload|uploadFile|uploadStream(…)` and
 *   `container.uploadBlockBlob(name, …)`; conditional with `conditions: { ifNoneMatch | ifMatch }`.
 * - **The file system**: `fs.writeFile`, `fs.promises.writeFile`, `writeFileSync`, `createWriteStream`, on `fs`,
 *   `fs/promises`, `fs-extra` or their named imports; conditional with an exclusive flag (`wx`); an append flag
 *   (`a`) overwrites nothing and is not read. A path under the temporary directory (`os.tmpdir()`, `/tmp/…`, a `tmpDir` variable) is scratch space, marked `temporary`.
 *
 * An options object with a spread may hold the condition: such a write counts as conditional (no finding depends
 * on what a spread might contain).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node, ObjectWrite } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import {
  evaluate,
  findProperty,
  findVariable,
  getConstInit,
  keyName,
  objectLiteral,
  unwrap,
} from "../core/reading/values.js";
import { expressionName } from "../core/reading/ast.js";

type Call = TSESTree.CallExpression;

function methodOf(call: Call): { receiver: Node; name: string } | undefined {
  const callee = unwrap(call.callee);
  if (callee.type !== "MemberExpression") return undefined;
  const name = keyName(callee.property, callee.computed);
  return name === undefined ? undefined : { receiver: unwrap(callee.object), name };
}

/** The expression behind a variable (`const file = bucket.file(name)`), `await` removed. */
function resolve(ctx: RecognizerContext, node: Node, depth = 0): Node {
  let n = unwrap(node);
  if (n.type === "AwaitExpression") n = unwrap(n.argument);
  if (n.type === "Identifier" && depth < 4) {
    const init = getConstInit(ctx.sourceCode, n);
    if (init && init.type !== "TSEnumDeclaration") return resolve(ctx, init, depth + 1);
  }
  return n;
}

/** A property's value in an object literal (inline or held by a const). */
function propertyValue(object: TSESTree.ObjectExpression | undefined, name: string): Node | undefined {
  const p = object && findProperty(object, name);
  return p?.value;
}

function hasSpread(object: TSESTree.ObjectExpression | undefined): boolean {
  return object?.properties.some((p) => p.type === "SpreadElement") ?? false;
}

/** `undefined` or `null`: a condition key set to nothing sets no condition. */
function isNothing(ctx: RecognizerContext, node: Node): boolean {
  const n = unwrap(node);
  return (n.type === "Identifier" && n.name === "undefined") || evaluate(ctx.sourceCode, n)?.value === null;
}

/** Any of `names` among the keys of `object` or of the objects nested in it (`preconditionOpts`, `conditions`). */
function hasKeyDeep(
  ctx: RecognizerContext,
  object: TSESTree.ObjectExpression | undefined,
  names: ReadonlySet<string>,
  depth = 0,
): boolean {
  if (!object || depth > 2) return false;
  for (const p of object.properties) {
    if (p.type !== "Property") continue;
    const key = keyName(p.key, p.computed);
    if (key !== undefined && names.has(key) && !isNothing(ctx, p.value)) return true;
    if (hasKeyDeep(ctx, objectLiteral(ctx.sourceCode, p.value), names, depth + 1)) return true;
  }
  return false;
}

/** Each store in messages: its name, and the condition it offers to refuse an overwrite. */
const WORDING: Readonly<Record<ObjectWrite["store"], { readonly name?: string; readonly condition: string }>> = {
  s3: { name: "S3", condition: "IfNoneMatch or IfMatch" },
  gcs: { name: "Cloud Storage", condition: "ifGenerationMatch" },
  "azure-blob": { name: "Azure Blob", condition: "conditions: { ifNoneMatch } or { ifMatch }" },
  fs: { condition: "an exclusive flag, wx" },
};

function objectWrite(
  store: ObjectWrite["store"],
  operation: string,
  call: Call,
  location: Node | undefined,
  conditional: boolean,
  temporary?: boolean,
): ObjectWrite {
  const { name, condition } = WORDING[store];
  return {
    access: "object",
    store,
    operation,
    location,
    conditional,
    wording: { operation: name ? `${name} ${operation}` : `${operation} call`, condition },
    ...(temporary ? { temporary } : {}),
    ...(store === "fs" && operation !== "createWriteStream" ? { wholeFile: true } : {}),
    node: call,
  };
}

// ---- S3 ----

const S3_COMMANDS = new Set(["PutObjectCommand", "CopyObjectCommand", "CompleteMultipartUploadCommand"]);
const S3_METHODS = new Set(["putObject", "copyObject", "completeMultipartUpload", "upload"]);
const S3_CONDITIONS = new Set(["IfNoneMatch", "IfMatch"]);

function s3Input(
  ctx: RecognizerContext,
  call: Call,
  operation: string,
  input: Node | undefined,
): ObjectWrite | undefined {
  const params = objectLiteral(ctx.sourceCode, input);
  if (!params) return objectWrite("s3", operation, call, undefined, true);
  const conditional = hasSpread(params) || hasKeyDeep(ctx, params, S3_CONDITIONS);
  return objectWrite("s3", operation, call, propertyValue(params, "Key"), conditional);
}

export const s3Recognizer: Recognizer = {
  store: "s3",
  methods: new Set(["send", "done", ...S3_METHODS]),
  recognize(call, ctx) {
    const m = methodOf(call);
    if (!m) return undefined;
    if (m.name === "send") {
      // client.send(new PutObjectCommand({ … })), or a command held in a variable.
      const command = call.arguments[0] && resolve(ctx, call.arguments[0]);
      if (
        command?.type !== "NewExpression" ||
        command.callee.type !== "Identifier" ||
        !S3_COMMANDS.has(command.callee.name)
      )
        return undefined;
      return s3Input(ctx, call, command.callee.name.replace(/Command$/, ""), command.arguments[0]);
    }
    if (m.name === "done") {
      // new Upload({ client, params: { Bucket, Key, Body } }).done()
      const upload = resolve(ctx, m.receiver);
      if (upload.type !== "NewExpression" || upload.callee.type !== "Identifier" || upload.callee.name !== "Upload")
        return undefined;
      const options = objectLiteral(ctx.sourceCode, upload.arguments[0]);
      if (!options || !findProperty(options, "params")) return undefined;
      return s3Input(ctx, call, "Upload", propertyValue(options, "params"));
    }
    // v2 and the v3 aggregated client: s3.putObject({ Bucket, Key, Body }). `upload` is a common name, so the
    // object must name both a bucket and a key.
    const params = objectLiteral(ctx.sourceCode, call.arguments[0]);
    if (!params || !findProperty(params, "Bucket") || !findProperty(params, "Key")) return undefined;
    return s3Input(ctx, call, m.name, params);
  },
};

// ---- Google Cloud Storage ----

const GCS_CONDITIONS = new Set(["ifGenerationMatch", "ifMetagenerationMatch"]);

/** `bucket.file(name)` (or a variable holding it): the name. */
function gcsFileName(ctx: RecognizerContext, receiver: Node): Node | undefined | false {
  const file = resolve(ctx, receiver);
  if (file.type !== "CallExpression") return false;
  const m = methodOf(file);
  if (m?.name !== "file" || file.arguments.length === 0) return false;
  return file.arguments[0];
}

function looksLikeBucket(ctx: RecognizerContext, receiver: Node): boolean {
  const r = resolve(ctx, receiver);
  if (r.type === "CallExpression") return methodOf(r)?.name === "bucket";
  const name = expressionName(r);
  return name !== undefined && /bucket$/i.test(name);
}

export const gcsRecognizer: Recognizer = {
  store: "gcs",
  methods: new Set(["save", "createWriteStream", "upload"]),
  recognize(call, ctx) {
    const m = methodOf(call);
    if (!m) return undefined;
    if (m.name === "upload") {
      // bucket.upload(localPath, { destination })
      const options = objectLiteral(ctx.sourceCode, call.arguments[1]);
      if (!looksLikeBucket(ctx, m.receiver) || (call.arguments[1] && !options)) return undefined;
      const conditional = hasSpread(options) || hasKeyDeep(ctx, options, GCS_CONDITIONS);
      return objectWrite("gcs", "upload", call, propertyValue(options, "destination"), conditional);
    }
    const name = gcsFileName(ctx, m.receiver);
    if (name === false || name === undefined || name.type === "SpreadElement") return undefined;
    const options = objectLiteral(ctx.sourceCode, call.arguments[m.name === "save" ? 1 : 0]);
    const conditional = hasSpread(options) || hasKeyDeep(ctx, options, GCS_CONDITIONS);
    return objectWrite("gcs", m.name, call, name, conditional);
  },
};

// ---- Azure Blob ----

const AZURE_UPLOADS: Record<string, number> = { uploadData: 1, upload: 2, uploadFile: 1, uploadStream: 3 };
const AZURE_CONDITIONS = new Set(["ifNoneMatch", "ifMatch"]);

function azureConditional(ctx: RecognizerContext, options: Node | undefined): boolean {
  const object = objectLiteral(ctx.sourceCode, options);
  return hasSpread(object) || hasKeyDeep(ctx, object, AZURE_CONDITIONS);
}

export const azureBlobRecognizer: Recognizer = {
  store: "azure-blob",
  methods: new Set([...Object.keys(AZURE_UPLOADS), "uploadBlockBlob"]),
  recognize(call, ctx) {
    const m = methodOf(call);
    if (!m) return undefined;
    if (m.name === "uploadBlockBlob") {
      // container.uploadBlockBlob(name, body, length, options)
      if (!/container/i.test(ctx.sourceCode.getText(m.receiver)) || !call.arguments[0]) return undefined;
      return objectWrite("azure-blob", m.name, call, call.arguments[0], azureConditional(ctx, call.arguments[3]));
    }
    const client = resolve(ctx, m.receiver);
    if (client.type !== "CallExpression") return undefined;
    const getter = methodOf(client)?.name;
    if ((getter !== "getBlockBlobClient" && getter !== "getBlobClient") || !client.arguments[0]) return undefined;
    return objectWrite(
      "azure-blob",
      m.name,
      call,
      client.arguments[0],
      azureConditional(ctx, call.arguments[AZURE_UPLOADS[m.name]!]),
    );
  },
};

// ---- the file system ----

const FS_MODULES = new Set(["fs", "node:fs", "fs/promises", "node:fs/promises", "fs-extra", "graceful-fs"]);
const FS_WRITES: Record<string, number> = {
  writeFile: 2,
  writeFileSync: 2,
  createWriteStream: 1,
  outputFile: 2,
  outputFileSync: 2,
};
const TEMP_CALL = /^(?:tmpdir|mkdtemp|mkdtempSync|tmpName|tmpNameSync|dirSync|fileSync)$/;
const TEMP_NAME = /^(?:tmp|temp)(?:[A-Z_]|$)|(?:Tmp|Temp|_tmp|_temp)(?:Dir|Path|File|Name|Folder)?$/;
const TEMP_PATH = /^(?:\/tmp\/|\/var\/tmp\/|\/dev\/shm\/|\.?\/?te?mp\/)/;

/** The module a binding comes from: `import fs from "node:fs"`, `const { writeFile } = require("fs/promises")`. */
function moduleOf(ctx: RecognizerContext, id: TSESTree.Identifier): string | undefined {
  const def = findVariable(ctx.sourceCode, id)?.defs[0];
  if (!def) return undefined;
  if (def.type === "ImportBinding") {
    const decl = def.parent;
    return decl?.type === "ImportDeclaration" ? String(decl.source.value) : undefined;
  }
  if (def.type === "Variable" && def.node.init) {
    let init = unwrap(def.node.init);
    if (init.type === "AwaitExpression") init = unwrap(init.argument); // await import("fs/promises")
    if (init.type === "MemberExpression") init = unwrap(init.object); // require("fs").promises
    if (init.type === "CallExpression" && init.callee.type === "Identifier" && init.callee.name === "require") {
      const source = init.arguments[0] && evaluate(ctx.sourceCode, init.arguments[0]);
      return typeof source?.value === "string" ? source.value : undefined;
    }
    if (init.type === "ImportExpression") {
      const source = evaluate(ctx.sourceCode, init.source);
      return typeof source?.value === "string" ? source.value : undefined;
    }
  }
  return undefined;
}

/**
 * `fs`, `fs.promises`, `fsp` (bound to an fs module), `fs` with no binding in the file, or a file system handed in
 * as a property named `fs` (`options.fs`, `this.fs`: an injected `fs` or `graceful-fs`, which has its methods).
 */
function isFsReceiver(ctx: RecognizerContext, receiver: Node): boolean {
  let r = unwrap(receiver);
  if (r.type === "MemberExpression" && keyName(r.property, r.computed) === "promises") r = unwrap(r.object);
  if (r.type === "MemberExpression") return keyName(r.property, r.computed) === "fs";
  if (r.type !== "Identifier") return false;
  const source = moduleOf(ctx, r);
  if (source !== undefined) return FS_MODULES.has(source);
  return (r.name === "fs" || r.name === "fse") && findVariable(ctx.sourceCode, r) === undefined;
}

/** Whether a path expression points into the temporary directory. */
function isTemporary(ctx: RecognizerContext, node: Node, depth = 0): boolean {
  if (depth > 4) return false;
  const n = unwrap(node);
  const text = evaluate(ctx.sourceCode, n);
  if (typeof text?.value === "string") return TEMP_PATH.test(text.value);
  switch (n.type) {
    case "TemplateLiteral":
      return (
        TEMP_PATH.test(n.quasis[0]?.value.cooked ?? "") || n.expressions.some((e) => isTemporary(ctx, e, depth + 1))
      );
    case "BinaryExpression":
      return (
        n.left.type !== "PrivateIdentifier" &&
        (isTemporary(ctx, n.left, depth + 1) || isTemporary(ctx, n.right, depth + 1))
      );
    case "Identifier": {
      if (TEMP_NAME.test(n.name)) return true;
      const init = getConstInit(ctx.sourceCode, n);
      return init !== undefined && init.type !== "TSEnumDeclaration" && isTemporary(ctx, init, depth + 1);
    }
    case "MemberExpression": {
      const name = keyName(n.property, n.computed);
      return name !== undefined && TEMP_NAME.test(name);
    }
    case "AwaitExpression":
      return isTemporary(ctx, n.argument, depth + 1);
    case "CallExpression": {
      const callee = unwrap(n.callee);
      const name = expressionName(callee);
      if (name && TEMP_CALL.test(name)) return true;
      // path.join(os.tmpdir(), name), join(tmp, name), path.resolve(…): the first segment decides.
      const first = n.arguments[0];
      return first !== undefined && first.type !== "SpreadElement" && isTemporary(ctx, first, depth + 1);
    }
    default:
      return false;
  }
}

function fsWrite(ctx: RecognizerContext, call: Call, name: string): ObjectWrite | undefined {
  const path = call.arguments[0];
  if (!path || path.type === "SpreadElement") return undefined;
  const optionsNode = call.arguments[FS_WRITES[name]!];
  const options = objectLiteral(ctx.sourceCode, optionsNode);
  let conditional = hasSpread(options);
  for (const key of ["flag", "flags"]) {
    const v = propertyValue(options, key);
    const flag = v && evaluate(ctx.sourceCode, v);
    // An append (`a`, `a+`) adds to the file and overwrites nothing: not a write this model is about.
    if (typeof flag?.value === "string" && flag.value.includes("a")) return undefined;
    if (v && (typeof flag?.value !== "string" || flag.value.includes("x"))) conditional = true;
  }
  return objectWrite("fs", name, call, path, conditional, isTemporary(ctx, path));
}

/** The `fs` function a call makes (`writeFile`, `openSync`): on an fs module's binding or receiver, else undefined. */
export function fsFunctionOf(ctx: RecognizerContext, call: Call): string | undefined {
  const callee = unwrap(call.callee);
  if (callee.type === "Identifier") {
    const source = moduleOf(ctx, callee);
    return source !== undefined && FS_MODULES.has(source) ? callee.name : undefined;
  }
  const m = methodOf(call);
  return m && isFsReceiver(ctx, m.receiver) ? m.name : undefined;
}

export const fsRecognizer: Recognizer = {
  store: "fs",
  methods: new Set(Object.keys(FS_WRITES)),
  functions: new Set(Object.keys(FS_WRITES)),
  recognize(call, ctx) {
    const name = fsFunctionOf(ctx, call);
    return name !== undefined && name in FS_WRITES ? fsWrite(ctx, call, name) : undefined;
  },
};
