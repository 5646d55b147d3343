/** TypeORM recognizer: what the file is (its ORM), and which receivers are repositories or an EntityManager. */
import { namedTypeOf } from "../../core/reading/named-types.js";
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { findVariable, keyName, unwrap } from "../../core/reading/values.js";
import { FOREIGN_MODULE, MANAGER_NAME, NOT_A_REPO, TYPEORM_MODULE, entityName } from "./shared.js";
import { calleeName } from "../../core/reading/ast.js";

// ---- what the file is ----

interface Flavor {
  /** The file imports from `typeorm` or `@nestjs/typeorm`. */
  readonly typeorm: boolean;
  /** The file imports another ORM or driver with the same method names. */
  readonly foreign: boolean;
  /** Classes declared here that extend `BaseEntity` (active record). */
  readonly baseEntities: ReadonlySet<string>;
  /** Local names of TypeORM exports (`Not` → `Not`, or `typeorm.Not` for a namespace import). */
  readonly imports: ReadonlyMap<string, string>;
}

export function requireSource(node: Node | null | undefined): string | undefined {
  let n = node && unwrap(node);
  if (n?.type === "AwaitExpression") n = unwrap(n.argument);
  if (n?.type === "CallExpression" && n.callee.type === "Identifier" && n.callee.name === "require") {
    const arg = n.arguments[0];
    return arg?.type === "Literal" && typeof arg.value === "string" ? arg.value : undefined;
  }
  if (n?.type === "ImportExpression" && n.source.type === "Literal" && typeof n.source.value === "string")
    return n.source.value;
  return undefined;
}

export function flavorOf(ctx: RecognizerContext): Flavor {
  const cached = ctx.scratch.get("typeorm:flavor") as Flavor | undefined;
  if (cached) return cached;
  let typeorm = false;
  let foreign = false;
  const baseEntities = new Set<string>();
  const imports = new Map<string, string>();
  const visit = (source: string): boolean => {
    if (TYPEORM_MODULE.test(source)) return (typeorm = true);
    if (FOREIGN_MODULE.test(source)) foreign = true;
    return false;
  };
  for (const stmt of ctx.sourceCode.ast.body) {
    if (stmt.type === "ImportDeclaration") {
      if (!visit(String(stmt.source.value))) continue;
      for (const s of stmt.specifiers) {
        if (s.type === "ImportSpecifier") imports.set(keyName(s.imported, false) ?? s.local.name, s.local.name);
        else if (s.type === "ImportNamespaceSpecifier") imports.set("*", s.local.name);
      }
      continue;
    }
    if (stmt.type === "VariableDeclaration") {
      for (const d of stmt.declarations) {
        const source = requireSource(d.init);
        if (source === undefined || !visit(source)) continue;
        if (d.id.type === "Identifier") imports.set("*", d.id.name);
        else if (d.id.type === "ObjectPattern") {
          for (const p of d.id.properties) {
            if (p.type === "Property" && p.value.type === "Identifier")
              imports.set(keyName(p.key, p.computed) ?? p.value.name, p.value.name);
          }
        }
      }
      continue;
    }
    const decl =
      stmt.type === "ExportNamedDeclaration" || stmt.type === "ExportDefaultDeclaration" ? stmt.declaration : stmt;
    if (
      decl?.type === "ClassDeclaration" &&
      decl.id &&
      decl.superClass?.type === "Identifier" &&
      decl.superClass.name === "BaseEntity"
    ) {
      baseEntities.add(decl.id.name);
    }
  }
  const flavor: Flavor = { typeorm, foreign, baseEntities, imports };
  ctx.scratch.set("typeorm:flavor", flavor);
  return flavor;
}

/** How to write a TypeORM export in this file (`Not`, `typeorm.Not`), or undefined when it is not in scope. */
export function exportRef(ctx: RecognizerContext, name: string): string | undefined {
  const flavor = flavorOf(ctx);
  const local = flavor.imports.get(name);
  if (local) return local;
  const ns = flavor.imports.get("*");
  if (ns) return `${ns}.${name}`;
  const global = ctx.sourceCode.scopeManager?.globalScope;
  if (global?.through.some((r) => r.identifier.name === name)) return name;
  return undefined;
}

// ---- receivers ----

type Target =
  | { readonly kind: "repo"; readonly model: string; readonly strong: boolean }
  | { readonly kind: "manager" }
  | { readonly kind: "foreign" };

const MANAGER: Target = { kind: "manager" };
const FOREIGN: Target = { kind: "foreign" };

export function typeName(node: Node | undefined): { name: string; arg?: string } | undefined {
  if (node?.type !== "TSTypeReference") return undefined;
  const t = node.typeName;
  const name = t.type === "Identifier" ? t.name : t.type === "TSQualifiedName" ? t.right.name : undefined;
  if (!name) return undefined;
  const first = node.typeArguments?.params[0];
  const arg = first?.type === "TSTypeReference" ? typeName(first)?.name : undefined;
  // A type parameter (`Repository<T>`, `Repository<TEntity>`) names no entity.
  return arg && !/^(?:[A-Z]|T[A-Z]\w*)$/.test(arg) ? { name, arg } : { name };
}

/** What a declared type says: `Repository<Job>`, `EntityManager`, a Mongoose `Model<Job>`. */
function fromType(annotation: TSESTree.TSTypeAnnotation | undefined): Target | undefined {
  const t = typeName(annotation?.typeAnnotation);
  if (!t) return undefined;
  if ((t.name === "Repository" || t.name === "TreeRepository") && t.arg)
    return { kind: "repo", model: t.arg, strong: true };
  if (t.name === "EntityManager") return MANAGER;
  if (/^(?:MongoRepository|Model|ModelStatic|ModelCtor|Collection)$/.test(t.name)) return FOREIGN;
  return undefined;
}

/** What a decorator says: `@InjectRepository(Job)`, `@InjectEntityManager()`, `@InjectModel(Job.name)`. */
function fromDecorators(decorators: readonly TSESTree.Decorator[] | undefined): Target | undefined {
  for (const d of decorators ?? []) {
    const e = unwrap(d.expression);
    if (e.type !== "CallExpression" || e.callee.type !== "Identifier") continue;
    if (e.callee.name === "InjectRepository") {
      const model = entityName(e.arguments[0]);
      if (model) return { kind: "repo", model, strong: true };
    }
    if (e.callee.name === "InjectEntityManager") return MANAGER;
    if (e.callee.name === "InjectModel" || e.callee.name === "InjectConnection") return FOREIGN;
  }
  return undefined;
}

function byName(name: string): Target | undefined {
  if (MANAGER_NAME.test(name)) return MANAGER;
  if (/[a-z]Model$/.test(name)) return FOREIGN;
  const m = /^(.+?)(?:Repository|Repo)$/.exec(name);
  if (m) return { kind: "repo", model: m[1]!, strong: true };
  if (/^(?:repository|repo)$/i.test(name) || NOT_A_REPO.test(name)) return undefined;
  return { kind: "repo", model: name, strong: false };
}

/** `this.name` inside a class: a decorated or typed property, a constructor parameter property, or `this.name = …`. */
function classMember(ctx: RecognizerContext, from: Node, name: string, depth: number): Target | undefined {
  let p = from.parent;
  while (p && p.type !== "ClassBody") p = p.parent;
  if (!p) return undefined;
  for (const el of p.body) {
    if (el.type === "PropertyDefinition" && keyName(el.key, el.computed) === name) {
      const t =
        fromDecorators(el.decorators) ??
        fromType(el.typeAnnotation) ??
        (el.value ? resolveTarget(ctx, el.value, depth + 1) : undefined);
      if (t) return t;
    }
    if (el.type !== "MethodDefinition" || el.kind !== "constructor") continue;
    for (const param of el.value.params) {
      if (param.type !== "TSParameterProperty") continue;
      const id = param.parameter.type === "AssignmentPattern" ? param.parameter.left : param.parameter;
      if (id.type !== "Identifier" || id.name !== name) continue;
      const t = fromDecorators(param.decorators) ?? fromType(id.typeAnnotation);
      if (t) return t;
    }
    for (const stmt of el.value.body?.body ?? []) {
      if (stmt.type !== "ExpressionStatement" || stmt.expression.type !== "AssignmentExpression") continue;
      const left = stmt.expression.left;
      if (
        left.type === "MemberExpression" &&
        left.object.type === "ThisExpression" &&
        keyName(left.property, left.computed) === name
      ) {
        const t = resolveTarget(ctx, stmt.expression.right, depth + 1);
        if (t) return t;
      }
    }
  }
  return undefined;
}

/** The function `fn` is a callback of `transaction(…)` (TypeORM passes it the transaction's EntityManager). */
function isTransactionCallback(fn: Node): boolean {
  const parent = fn.parent;
  return (
    parent?.type === "CallExpression" &&
    parent.arguments.includes(fn as TSESTree.CallExpressionArgument) &&
    calleeName(parent) === "transaction"
  );
}

/** `this` in a custom repository (`class JobRepository extends Repository<Job>`) or in a `BaseEntity` class. */
function thisTarget(node: Node): Target | undefined {
  let p = node.parent;
  while (p && p.type !== "ClassBody") {
    // `this` in a plain function is not the class instance
    if (p.type === "FunctionDeclaration" || p.type === "FunctionExpression") {
      if (p.parent?.type !== "MethodDefinition" && p.parent?.type !== "PropertyDefinition") return undefined;
    }
    p = p.parent;
  }
  const cls = p?.parent;
  if (
    !cls ||
    (cls.type !== "ClassDeclaration" && cls.type !== "ClassExpression") ||
    cls.superClass?.type !== "Identifier"
  )
    return undefined;
  const base = cls.superClass.name;
  if (base === "BaseEntity" && cls.id) return { kind: "repo", model: cls.id.name, strong: true };
  if (base !== "Repository" && base !== "TreeRepository") return undefined;
  const arg = cls.superTypeArguments?.params[0];
  const model = arg?.type === "TSTypeReference" ? typeName(arg)?.name : undefined;
  return model ? { kind: "repo", model, strong: true } : undefined;
}

/**
 * What a receiver is: a repository of some entity, an EntityManager, or another library's object. Read from the
 * syntax; where that finds nothing or only guesses from a name, the receiver's type sharpens it when the parser has
 * a program (`Repository<Job>` through an alias or a wrapper's property).
 */
export function resolveTarget(ctx: RecognizerContext, node: Node, depth = 0): Target | undefined {
  const t = resolveSyntax(ctx, node, depth);
  if (t && (t.kind !== "repo" || t.strong)) return t;
  const typed = namedTypeOf(ctx.sourceCode, unwrap(node));
  if (typed && (typed.name === "Repository" || typed.name === "TreeRepository") && typed.args[0])
    return { kind: "repo", model: typed.args[0], strong: true };
  if (typed?.name === "EntityManager") return MANAGER;
  return t;
}

function resolveSyntax(ctx: RecognizerContext, node: Node, depth: number): Target | undefined {
  if (depth > 5) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "AwaitExpression":
      return resolveTarget(ctx, n.argument, depth + 1);
    case "ThisExpression":
      return thisTarget(n);
    case "CallExpression": {
      const method = calleeName(n);
      if (method === "getRepository" || method === "getTreeRepository") {
        const model = entityName(n.arguments[0]);
        return model ? { kind: "repo", model, strong: true } : undefined;
      }
      if (method === "withRepository" && n.arguments[0]) return resolveTarget(ctx, n.arguments[0], depth + 1);
      if (method === "getCustomRepository") {
        const name = entityName(n.arguments[0]);
        const t = name ? byName(name) : undefined;
        return t?.kind === "repo" ? { ...t, strong: true } : undefined;
      }
      if (method === "getManager" || method === "createEntityManager") return MANAGER;
      return undefined;
    }
    case "MemberExpression": {
      const name = keyName(n.property, n.computed);
      if (!name) return undefined;
      if (name === "manager") return MANAGER;
      if (unwrap(n.object).type === "ThisExpression") {
        const member = classMember(ctx, n, name, depth);
        if (member) return member;
      }
      return byName(name);
    }
    case "Identifier": {
      const variable = findVariable(ctx.sourceCode, n);
      const def = variable?.defs[0];
      if (def?.type === "Variable" && def.node.id.type === "Identifier") {
        const t = fromType(def.node.id.typeAnnotation);
        if (t) return t;
        if (def.node.init) {
          const init = unwrap(def.node.init);
          const resolved = resolveTarget(ctx, init, depth + 1);
          if (resolved) return resolved;
          // A value computed by some other call (a loaded entity, a query result) is not a repository.
          if (init.type === "CallExpression" || init.type === "AwaitExpression" || init.type === "NewExpression")
            return undefined;
        }
      } else if (def?.type === "Parameter") {
        if (def.name.type === "Identifier") {
          const t = fromType(def.name.typeAnnotation);
          if (t) return t;
        }
        if (isTransactionCallback(def.node)) return MANAGER;
      } else if (def?.type === "ClassName") {
        return flavorOf(ctx).baseEntities.has(n.name)
          ? { kind: "repo", model: n.name, strong: true }
          : { kind: "repo", model: n.name, strong: false };
      }
      return byName(n.name);
    }
    default:
      return undefined;
  }
}
