/**
 * Type-aware mode: the one place that asks the TypeScript checker what a call's receiver is. Recognizers read
 * syntax only; when `settings.locks.typeAware` is true and the parser gives a program (`parserOptions.projectService`),
 * the inventory asks here, for each call a recognizer took as its store's, whether the receiver's type says so:
 *
 * - `store`: the type is declared by the store's own client package (`ioredis`, `@redis/client`, `.prisma/client`,
 *   `typeorm`, `mongodb`, `mongoose`…: each recognizer declares its own, `Recognizer.packages`);
 * - `other`: the type resolves completely, and only to declarations of the standard library or of packages that are
 *   neither the store's nor named like it (an in-memory cache, a browser database, another ORM): the call is not
 *   the store's, so the access is dropped (the next recognizer may still take it);
 * - `unknown`: anything else, which keeps the syntactic reading: `any` (a module the project cannot resolve),
 *   a type parameter without constraint, or a type declared in the project's own code (a wrapper class around the
 *   client, a generated client written into `src/`).
 *
 * So type information only ever removes findings whose receiver is proved to be something else; it never adds one.
 * `typescript` is an optional peer: nothing here imports it at run time, only the checker the parser made is used.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type * as ts from "typescript";
import { unwrap } from "./values.js";

export type ReceiverVerdict = "store" | "other" | "unknown";

export interface ReceiverTypes {
  /** What the receiver of `call` (the object its method is called on) is, for a store whose client is `packages`. */
  verdict(packages: StorePackages, call: TSESTree.CallExpression, store: string): ReceiverVerdict;
}

/** A store's client packages, as its recognizer declares them (`Recognizer.packages`). */
export interface StorePackages {
  /** Packages whose declarations confirm the store. */
  readonly own: RegExp;
  /** A package named like this may wrap the client (`nestjs-prisma`, `@liaoliaots/nestjs-redis`): never `other`. */
  readonly family: RegExp;
}

// ts.TypeFlags, spelled out so that nothing imports `typescript` at run time (stable since TypeScript 3).
const ANY_OR_UNKNOWN = 1 | 2;
const TYPE_PARAMETER = 1 << 18;
const PRIMITIVE = 4 | 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096 | 8192 | 16384 | 32768 | 65536;

type Origin = { kind: "lib" } | { kind: "local" } | { kind: "package"; name: string };

/** The package a declaration file belongs to: the last `node_modules/` segment of its path. */
function packageOf(fileName: string): string | undefined {
  const at = fileName.lastIndexOf("/node_modules/");
  if (at < 0) return undefined;
  const parts = fileName.slice(at + "/node_modules/".length).split("/");
  return parts[0]?.startsWith("@") ? `${parts[0]}/${parts[1] ?? ""}` : parts[0];
}

function originOf(program: ts.Program, declaration: ts.Declaration): Origin {
  const file = declaration.getSourceFile();
  if (program.isSourceFileDefaultLibrary(file)) return { kind: "lib" };
  const name = packageOf(file.fileName.replace(/\\/g, "/"));
  return name === undefined ? { kind: "local" } : { kind: "package", name };
}

/** Where the receiver's type is declared: one origin per declaration of each constituent; undefined when unknowable. */
function originsOf(program: ts.Program, checker: ts.TypeChecker, type: ts.Type, depth = 0): Origin[] | undefined {
  if (depth > 5 || type.flags & ANY_OR_UNKNOWN) return undefined;
  if (type.flags & TYPE_PARAMETER) {
    const constraint = checker.getBaseConstraintOfType(type);
    return constraint && constraint !== type ? originsOf(program, checker, constraint, depth + 1) : undefined;
  }
  if (type.isUnionOrIntersection()) {
    const all: Origin[] = [];
    for (const t of type.types) {
      const o = originsOf(program, checker, t, depth + 1);
      if (!o) return undefined;
      all.push(...o);
    }
    return all;
  }
  if (type.flags & PRIMITIVE) return [{ kind: "lib" }];
  const symbol = type.getSymbol() ?? type.aliasSymbol;
  const declarations = symbol?.getDeclarations() ?? [];
  if (declarations.length === 0) return undefined;
  return declarations.map((d) => originOf(program, d));
}

function judge(packages: StorePackages, origins: Origin[] | undefined): ReceiverVerdict {
  if (!origins) return "unknown";
  if (origins.some((o) => o.kind === "package" && packages.own.test(o.name))) return "store";
  if (origins.some((o) => o.kind === "local" || (o.kind === "package" && packages.family.test(o.name))))
    return "unknown";
  return "other";
}

interface ParserServices {
  readonly program: ts.Program | null;
  readonly esTreeNodeToTSNodeMap: { get(node: TSESTree.Node): ts.Node };
}

/** True when the config asks for type-aware mode (`configs["recommended-type-checked"]` sets it). */
export function isTypeAware(settings: Readonly<Record<string, unknown>>): boolean {
  const locks = settings["locks"];
  return typeof locks === "object" && locks !== null && (locks as { typeAware?: unknown }).typeAware === true;
}

/**
 * The receiver oracle for a file, or undefined when the file is linted syntactically: type-aware mode not asked
 * for, or no program (no `projectService`, a file outside every project, a parser other than typescript-eslint's).
 */
export function receiverTypes(
  context: Readonly<TSESLint.RuleContext<string, readonly unknown[]>>,
): ReceiverTypes | undefined {
  if (!isTypeAware(context.settings)) return undefined;
  const services = context.sourceCode.parserServices as Partial<ParserServices> | undefined;
  const program = services?.program;
  const map = services?.esTreeNodeToTSNodeMap;
  if (!program || !map) return undefined;
  const checker = program.getTypeChecker();
  return {
    verdict(packages, call, store) {
      const callee = unwrap(call.callee);
      if (callee.type !== "MemberExpression") return "unknown";
      const tsNode = map.get(callee.object);
      if (!tsNode) return "unknown";
      const verdict = judge(packages, originsOf(program, checker, checker.getTypeAtLocation(tsNode)));
      // LOCKS_DEBUG_TYPES=1 prints every verdict (scripts/typed-corpus.js counts them): why a finding went away.
      if (process.env["LOCKS_DEBUG_TYPES"]) {
        console.error(`locks types: ${context.filename}:${call.loc.start.line} ${store} ${verdict}`);
      }
      return verdict;
    },
  };
}
