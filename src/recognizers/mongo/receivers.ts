/**
 * MongoDB: the collection or model a receiver stands for (`db.collection("jobs")`, a field set to one once, a Mongoose
 * model), and where a Mongoose document comes from (a read of a model, `new Model({…})`, a loop over a read).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { methodOf, expressionName } from "../../core/reading/ast.js";
import { findVariable, getConstInit, keyName, reachingDefinition, unwrap } from "../../core/reading/values.js";
import { UPDATE_METHODS, READ_METHODS, CHAIN_LINKS, RECEIVER_SUFFIX, objectOf, stringArg } from "./vocabulary.js";
import { walk } from "../../core/reading/walk.js";

interface Receiver {
  readonly model: string;
  /** Named or built like a Mongoose model (`Job`, `this.jobModel`, `mongoose.model("Job")`): `create` is an insert. */
  readonly mongooseModel: boolean;
}

/** The collection or model a receiver stands for: `db.collection("jobs")` → `jobs`, `this.jobModel` → `job`. */
export function receiverOf(ctx: RecognizerContext, node: Node, depth = 0): Receiver | undefined {
  if (depth > 4) return undefined;
  const r = unwrap(node);
  if (r.type === "CallExpression") {
    const callee = unwrap(r.callee);
    const name = expressionName(callee);
    const arg = r.arguments[0] ? unwrap(r.arguments[0]) : undefined;
    // `this.model(modelName)` in a schema method or plugin: the model is whichever the name holds, the same one
    // wherever the module writes it with that name.
    const model =
      stringArg(ctx, r.arguments[0]) ?? (name === "model" && arg?.type === "Identifier" ? arg.name : undefined);
    if (!model) return undefined;
    // `require("../models/Export").findOneAndUpdate(…)`: the model module's export, named by its file.
    if (name === "require" && callee.type === "Identifier") {
      const file = /(?:^|\/)([A-Za-z_$][\w$]*)(?:\.[cm]?[jt]s)?$/.exec(model)?.[1];
      const fromModels = /(?:^|\/)models?\//i.test(model);
      return file && (fromModels || /^[A-Z]/.test(file)) ? { model: file, mongooseModel: true } : undefined;
    }
    if (name === "collection" && callee.type === "MemberExpression") return { model, mongooseModel: false };
    if (name === "model") return { model, mongooseModel: true };
    return undefined;
  }
  if (r.type === "MemberExpression") {
    const name = keyName(r.property, r.computed);
    if (!name || name.startsWith("$")) return undefined;
    const object = unwrap(r.object);
    // `self.db` with `self.db = await self.apos.db.collection("aposLocks")` once in the module: that collection.
    // (The module's text must assign such a field at all before its tree is walked for it.)
    const assigned = assignsField(ctx, name)
      ? fieldCollections(ctx).get(`${ctx.sourceCode.getText(object)}.${name}`)
      : undefined;
    if (assigned) return assigned;
    // `prisma.session.deleteMany({})`: a Prisma delegate, whatever the arguments look like.
    const owner = expressionName(object);
    if (owner !== undefined && /prisma$/i.test(owner)) return undefined;
    // `mongoose.models.Job`, `connection.models["Job"]`
    const fromModels = object.type === "MemberExpression" && keyName(object.property, object.computed) === "models";
    const stripped = name.replace(RECEIVER_SUFFIX, "") || name;
    return { model: stripped, mongooseModel: fromModels || /Model$/.test(name) || /^[A-Z]/.test(name) };
  }
  if (r.type === "ThisExpression") {
    const schema = staticsOwner(r);
    const model = schema?.replace(/Schema$/, "");
    return model ? { model, mongooseModel: true } : undefined;
  }
  if (r.type === "Identifier") {
    const init = getConstInit(ctx.sourceCode, r);
    if (init && init.type !== "TSEnumDeclaration") {
      let target = unwrap(init);
      if (target.type === "AwaitExpression") target = unwrap(target.argument);
      if (target.type === "CallExpression" || target.type === "MemberExpression") {
        const resolved = receiverOf(ctx, target, depth + 1);
        if (resolved) return resolved;
      }
    }
    const stripped = r.name.replace(RECEIVER_SUFFIX, "") || r.name;
    return { model: stripped, mongooseModel: /Model$/.test(r.name) || /^[A-Z]/.test(r.name) };
  }
  return undefined;
}

/**
 * The schema whose static `this` is in: Mongoose binds `this` to the model in a function assigned to
 * `schema.statics.name`, listed in `schema.statics = { name() {} }`, or handed to `schema.static("name", fn)`
 * (`processingLockSchema.statics.acquireLock = async function () { this.findOneAndUpdate(…) }`). Arrow functions
 * take `this` from around them; any other function stops the search.
 */
function staticsOwner(node: Node): string | undefined {
  let fn: Node | undefined = node.parent;
  while (fn && fn.type !== "FunctionExpression" && fn.type !== "FunctionDeclaration") fn = fn.parent;
  if (fn?.type !== "FunctionExpression") return undefined;
  const statics = (m: Node | undefined): string | undefined => {
    const u = m && unwrap(m);
    if (u?.type !== "MemberExpression" || keyName(u.property, u.computed) !== "statics") return undefined;
    const owner = unwrap(u.object);
    return owner.type === "Identifier" ? owner.name : undefined;
  };
  const p = fn.parent;
  if (p?.type === "AssignmentExpression" && p.right === fn && p.left.type === "MemberExpression")
    return statics(p.left.object);
  if (p?.type === "Property" && p.value === fn && p.parent.type === "ObjectExpression") {
    const holder = p.parent.parent;
    if (holder?.type === "AssignmentExpression" && holder.right === p.parent) return statics(holder.left);
    // `new Schema(fields, { statics: { acquire() { … } } })`, the schema kept in a variable.
    if (holder?.type === "Property" && keyName(holder.key, holder.computed) === "statics") {
      const call = holder.parent.parent;
      const declarator = call?.type === "NewExpression" ? call.parent : undefined;
      if (declarator?.type === "VariableDeclarator" && declarator.id.type === "Identifier") return declarator.id.name;
    }
    // A model class's statics handed over by a member named for them (`static get modelStatics() { return { … } as
    // const }`): the class is the model.
    let returned: Node | undefined = holder;
    while (returned?.type === "TSAsExpression" || returned?.type === "TSSatisfiesExpression")
      returned = returned.parent;
    if (returned?.type === "ReturnStatement") {
      const member = enclosingMember(returned);
      if (member && /statics$/i.test(keyName(member.key, member.computed) ?? "")) {
        const cls = member.parent.parent;
        if ((cls?.type === "ClassDeclaration" || cls?.type === "ClassExpression") && cls.id) return cls.id.name;
      }
    }
  }
  if (p?.type === "CallExpression" && p.arguments[1] === fn) {
    const callee = unwrap(p.callee);
    if (callee.type === "MemberExpression" && keyName(callee.property, callee.computed) === "static") {
      const owner = unwrap(callee.object);
      return owner.type === "Identifier" ? owner.name : undefined;
    }
  }
  return undefined;
}

/** The class member (method or getter) whose own body holds `node`, with no other function between. */
function enclosingMember(node: Node): TSESTree.MethodDefinition | undefined {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "FunctionExpression") return p.parent?.type === "MethodDefinition" ? p.parent : undefined;
    if (p.type === "FunctionDeclaration" || p.type === "ArrowFunctionExpression") return undefined;
  }
  return undefined;
}

/** Whether the module's text assigns a field of this name anywhere (`.db = …`), remembered per name. */
function assignsField(ctx: RecognizerContext, name: string): boolean {
  let seen = ctx.scratch.get("mongo:assigned") as Map<string, boolean> | undefined;
  if (!seen) ctx.scratch.set("mongo:assigned", (seen = new Map()));
  let found = seen.get(name);
  if (found === undefined) {
    found = new RegExp(`\\.${name.replace(/\$/g, "\\$")}\\s*=[^=]`).test(ctx.sourceCode.text);
    seen.set(name, found);
  }
  return found;
}

/** The text of a `collection(…)` or `model(…)` call: `.collection("jobs")`, `["model"]<Job>(name)`. */
const COLLECTION_CALL = /(?:collection|model)["'`\]]?\s*[(<]/;

/**
 * The fields the module sets, exactly once, to a collection or model (`this.jobs = db.collection("jobs")`,
 * `self.db = await apos.db.collection("aposLocks")`), by the field's text (`self.db`). A field set twice, or to
 * anything else, is not in the map: its name is all there is.
 */
function fieldCollections(ctx: RecognizerContext): ReadonlyMap<string, Receiver> {
  const cached = ctx.scratch.get("mongo:fields") as Map<string, Receiver> | undefined;
  if (cached) return cached;
  const seen = new Map<string, Receiver | null>();
  // Only a `collection(…)` or `model(…)` call is recorded: a module that makes none is not walked for them.
  if (COLLECTION_CALL.test(ctx.sourceCode.text))
    walk(ctx.sourceCode.ast, (n) => {
      if (n.type !== "AssignmentExpression" || n.operator !== "=" || n.left.type !== "MemberExpression") return;
      const field = keyName(n.left.property, n.left.computed);
      if (!field) return;
      const text = `${ctx.sourceCode.getText(unwrap(n.left.object))}.${field}`;
      let right = unwrap(n.right);
      if (right.type === "AwaitExpression") right = unwrap(right.argument);
      const call = right.type === "CallExpression" ? right : undefined;
      const m = call && methodOf(call);
      const receiver =
        m && (m.name === "collection" || m.name === "model") && call.arguments.length <= 2
          ? receiverOf(ctx, call)
          : undefined;
      seen.set(text, seen.has(text) ? null : (receiver ?? null));
    });
  const out = new Map<string, Receiver>();
  for (const [k, v] of seen) if (v) out.set(k, v);
  ctx.scratch.set("mongo:fields", out);
  return out;
}

/** Strips query-chain links: `Job.findOne(f).lean().exec()` → `Job.findOne(f)`. */
function queryCall(node: Node): TSESTree.CallExpression | undefined {
  let n = unwrap(node);
  if (n.type === "AwaitExpression") n = unwrap(n.argument);
  while (n.type === "CallExpression") {
    const m = methodOf(n);
    if (!m || !CHAIN_LINKS.has(m.name)) return n;
    const inner = unwrap(m.member.object);
    if (inner.type !== "CallExpression") return n;
    n = inner;
  }
  return undefined;
}

interface DocOrigin {
  readonly model: string;
  /** Built with `new Model({…})`: its first save inserts it. */
  readonly created?: TSESTree.ObjectExpression | null;
  /** For `new Model({…})`: the model as the code names it (`Lock`), a client other calls can be made on. */
  readonly modelNode?: Node;
  /** Not traced to a model (a parameter): `model` is only the variable's name. */
  readonly byName?: true;
}

/** Where a Mongoose document comes from: a read of a model, `new Model({…})`, or a loop over a read. */
export function docOrigin(ctx: RecognizerContext, id: TSESTree.Identifier): DocOrigin {
  const fallback: DocOrigin = { model: id.name, byName: true };
  const variable = findVariable(ctx.sourceCode, id);
  const def = variable?.defs[0];
  if (!variable || !def || variable.defs.length !== 1 || def.type !== "Variable") return fallback;
  const decl = def.node;
  if (decl.init) {
    // A `let` written again on the way (a read, then `doc = new Model(…)` when it found none): the write that
    // reaches this use.
    const init = getConstInit(ctx.sourceCode, id) ?? reachingDefinition(ctx.sourceCode, id);
    let target = init && unwrap(init);
    if (target?.type === "AwaitExpression") target = unwrap(target.argument);
    if (target?.type === "NewExpression") {
      const receiver = receiverOf(ctx, target.callee);
      if (receiver?.mongooseModel)
        return { model: receiver.model, created: objectOf(ctx, target.arguments[0]) ?? null, modelNode: target.callee };
      return fallback;
    }
    const call = target && queryCall(target);
    const m = call && methodOf(call);
    if (m && (READ_METHODS.has(m.name) || UPDATE_METHODS.has(m.name))) {
      const receiver = receiverOf(ctx, m.member.object);
      if (receiver) return { model: receiver.model };
    }
    return fallback;
  }
  // `for (const doc of await Job.find(…))`, `for (const doc of docs)` with `const docs = await Job.find(…)`
  const loop = decl.parent?.parent;
  if (loop?.type === "ForOfStatement" && loop.left === decl.parent) {
    let source = unwrap(loop.right);
    if (source.type === "Identifier") {
      const init = getConstInit(ctx.sourceCode, source);
      if (init && init.type !== "TSEnumDeclaration") source = unwrap(init);
    }
    const call = queryCall(source);
    const m = call && methodOf(call);
    if (m && READ_METHODS.has(m.name)) {
      const receiver = receiverOf(ctx, m.member.object);
      if (receiver) return { model: receiver.model };
    }
  }
  return fallback;
}
