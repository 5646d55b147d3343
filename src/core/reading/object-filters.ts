/**
 * One reading of filters written as objects, for every store that writes them so (Prisma's `where`, MongoDB's filter
 * documents, Sequelize's `where`, Payload's `where`, Strapi's `filters`, TypeORM's find criteria): a store declares
 * its dialect (which keys combine sub-filters, which keys or calls are operators and what each compares, what a
 * nested object means), and `readObjectFilter` walks the object into the model's `Condition`. A recognizer keeps
 * only what its API means beyond that table (which argument is the filter, which receiver is a model).
 *
 * The walk is the same for every dialect:
 * - a property whose key is a combinator (`AND`, `$or`, `[Op.not]`) reads its operand as sub-filters;
 * - any other key is a field: a bare value compares equal (or is a list the field is in), an object whose keys are
 *   operators compares by each, a call of an operator function (`Not(X)`) compares by it, and an object with no
 *   operator key is what the dialect says (a compound key naming one row, a path into a relation, a match not read);
 * - spreads of an object the module holds in a `const` are read as their properties; every other part nobody can
 *   read (a spread of a call, a computed key) is `opaque`, so no finding can depend on it.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { CompareOp, Condition, Node, StaticValue } from "../model/accesses.js";
import { andTerms, arrayLiteral, evaluate, keyName, objectLiteral, staticList, unwrap } from "./values.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * What an operator of a field does:
 * - a comparison (`eq` … `gte`, `other` for one the model does not read: `contains`, `$regex`);
 * - `not`: the negation of an operator object (`{ not: { in: [...] } }`), or "not equal" to a value;
 * - `exists`: `true` matches a value (not null), `false` none; `null` / `notNull`: `true` matches null / a value;
 * - `and` / `or`: a list of operator objects on the same field (Sequelize's `status: { [Op.or]: [...] }`);
 * - `between`: two values, the bounds (TypeORM's `Between(a, b)`);
 * - `skip`: a modifier that compares nothing (`mode: "insensitive"`, `$options`).
 */
export type FieldOperator =
  CompareOp | "not" | "exists" | "null" | "notNull" | "and" | "or" | "between" | "skip" | OwnOperator;

/** An operator call the store reads itself (TypeORM's `Raw((alias) => sql)`): the condition on `field` it makes. */
export type OwnOperator = (sourceCode: SourceCode, field: string, call: TSESTree.CallExpression, at: Node) => Condition;

/** A call that applies an operator to a field (`Not(X)`, `LessThan(cutoff)`): the operator's name and the call. */
export interface OperatorCall {
  readonly name: string;
  readonly call: TSESTree.CallExpression;
}

export interface ObjectFilterDialect {
  /** Keys that combine sub-filters: `and`/`or` take a list (or one filter), `not` negates, `nor` is "none of". */
  readonly combinators: Readonly<Record<string, "and" | "or" | "not" | "nor">>;
  /** Operator keys (or operator calls' names) and what each does. */
  readonly operators: Readonly<Record<string, FieldOperator>>;
  /**
   * A computed key naming an operator or combinator (`[Op.ne]`): its name in `operators` or `combinators` (`"?"` for
   * one of the store's operators the table does not list); undefined for any other key.
   */
  operatorKey?(p: TSESTree.Property): string | undefined;
  /** Keys the store reserves (`$where`, `$regex`): on a filter, a part not read (opaque); on a field, an operator not read. */
  readonly reserved?: (key: string) => boolean;
  /** Keys of a filter or of a field's operators that say nothing about rows (`$comment`, `mode`). */
  readonly ignored?: ReadonlySet<string>;
  /** Filter keys the store reads itself (Mongo's `$expr`). */
  readonly special?: Readonly<Record<string, (sourceCode: SourceCode, value: Node, at: Node) => Condition>>;
  /**
   * A field's object value with no operator key: `row`, a compound key naming one row (Prisma's `id_createdAt: { … }`);
   * `path`, fields of a relation (`owner: { id }` is `owner.id`, TypeORM); `other`, a match not read (an embedded
   * document, a relation filter).
   */
  readonly nested: "row" | "path" | "other";
  /**
   * A field's object value with operator keys and other keys mixed: the whole field is a match not read (`other`), or
   * each key is read for itself, an unknown one as a comparison not read (`each`) or a part not read (`each-opaque`).
   */
  readonly mixed: "other" | "each" | "each-opaque";
  /** A field's bare value: compared equal (`eq`), or not a filter of this store (`opaque`: Payload has none). */
  readonly bare: "eq" | "opaque";
  /** A list as a field's bare value means "in" (Sequelize's `status: ["a", "b"]`). */
  readonly lists?: boolean;
  /** The operand of an `or` combinator when it is an object, not a list: one filter, or one per property (Sequelize). */
  readonly objectOperand: "one" | "each";
  /** A list of filters as the whole filter means any of them (TypeORM's `where: [{ … }, { … }]`). */
  readonly topLevelList?: boolean;
  /** A call of one of the store's operator functions (`Not(X)`), when the dialect writes operators as calls. */
  operatorCall?(node: Node): OperatorCall | undefined;
  /** A value the store computes (a regex, a SQL helper): a field compared with one compares in a way not read. */
  computed?(node: Node): boolean;
  /** A field's value the dialect reads itself before the walk does: a condition, `null` for none (skipped), or undefined. */
  fieldValue?(sourceCode: SourceCode, field: string, value: Node, at: Node): Condition | null | undefined;
  /** How deep combinators nest before the rest is opaque (4 by default). */
  readonly maxDepth?: number;
}

const opaque = (node: Node): Condition => ({ kind: "opaque", node });
const pred = (field: string, op: CompareOp, values: readonly StaticValue[] | undefined, node: Node): Condition => ({
  kind: "pred",
  field,
  op,
  values,
  node,
});
const NULL: readonly StaticValue[] = [{ value: null }];

type Key = { readonly combinator: string } | { readonly operator: string } | { readonly field: string };

class Reader {
  private readonly maxDepth: number;
  constructor(
    private readonly sourceCode: SourceCode,
    private readonly d: ObjectFilterDialect,
  ) {
    this.maxDepth = d.maxDepth ?? 4;
  }

  /** What a property's key is: a combinator, an operator, a field, or nothing readable. */
  private key(p: TSESTree.Property): Key | undefined {
    const op = this.d.operatorKey?.(p);
    if (op !== undefined) return op in this.d.combinators ? { combinator: op } : { operator: op };
    const name = keyName(p.key, p.computed);
    if (name === undefined) return undefined;
    return name in this.d.combinators ? { combinator: name } : { field: name };
  }

  /** Whether a key of a field's object is an operator of the store (listed, reserved, or named by a computed key). */
  private isOperator(k: Key | undefined): boolean {
    if (!k) return false;
    if ("operator" in k) return true;
    if ("combinator" in k) return k.combinator in this.d.operators;
    return k.field in this.d.operators || !!this.d.reserved?.(k.field) || !!this.d.ignored?.has(k.field);
  }

  /** A value compared by `op`: static where it can be read, a list for `in`/`notIn`. */
  private compare(field: string, op: CompareOp, value: Node, at: Node): Condition {
    if (this.d.computed?.(value)) return pred(field, "other", undefined, at);
    if (op === "in" || op === "notIn") return pred(field, op, staticList(this.sourceCode, value), at);
    const v = evaluate(this.sourceCode, value);
    return pred(field, op, v ? [v] : undefined, at);
  }

  /** A flag-valued operator (`$exists: false`, `$null: true`): null or not null; unknown when the flag is. */
  private nullTest(field: string, flag: Node, nullWhen: boolean, at: Node): Condition {
    const v = evaluate(this.sourceCode, flag)?.value;
    if (typeof v !== "boolean") return pred(field, "other", undefined, at);
    return pred(field, v === nullWhen ? "eq" : "ne", NULL, at);
  }

  /** One operator applied to `field`: `operand` is the key's value, or an operator call's arguments in `args`. */
  private apply(
    field: string,
    op: Exclude<FieldOperator, "skip" | OwnOperator>,
    operand: Node | undefined,
    at: Node,
    depth: number,
    args?: readonly (Node | undefined)[],
  ): Condition {
    switch (op) {
      case "null":
      case "notNull":
        if (!operand) return pred(field, op === "null" ? "eq" : "ne", NULL, at);
        return this.nullTest(field, operand, op === "null", at);
      case "exists":
        return operand ? this.nullTest(field, operand, false, at) : opaque(at);
      case "not": {
        if (!operand) return opaque(at);
        const call = this.d.operatorCall?.(operand);
        if (call) return { kind: "not", item: this.operatorCall(field, call, at, depth + 1) };
        if (unwrap(operand).type === "ObjectExpression" && depth < this.maxDepth)
          return { kind: "not", item: this.field(field, operand, at, depth + 1) ?? { kind: "and", items: [] } };
        return this.compare(field, "ne", operand, at);
      }
      case "and":
      case "or": {
        const parts = args ?? (operand ? this.operands(operand) : []);
        return {
          kind: op,
          items: parts.map((el) => (el && this.field(field, el, at, depth + 1)) || opaque(at)),
        };
      }
      case "between": {
        const [lo, hi] = args ?? [];
        return {
          kind: "and",
          items: [
            lo ? this.compare(field, "gte", lo, at) : pred(field, "gte", undefined, at),
            hi ? this.compare(field, "lte", hi, at) : pred(field, "lte", undefined, at),
          ],
        };
      }
      default:
        return operand ? this.compare(field, op, operand, at) : opaque(at);
    }
  }

  /** The elements of a list operand (holes and spreads undefined); anything else is one operand. */
  private operands(node: Node): (Node | undefined)[] {
    const list = arrayLiteral(this.sourceCode, node);
    if (!list) return [node];
    return list.elements.map((el) => (el && el.type !== "SpreadElement" ? el : undefined));
  }

  private operatorCall(field: string, { name, call }: OperatorCall, at: Node, depth: number): Condition {
    const op = this.d.operators[name];
    if (!op || op === "skip" || depth > this.maxDepth) return opaque(at);
    if (typeof op === "function") return op(this.sourceCode, field, call, at);
    const args = call.arguments.map((a) => (a.type === "SpreadElement" ? undefined : a));
    return this.apply(
      field,
      op,
      args[0],
      at,
      depth,
      op === "and" || op === "or" || op === "between" ? args : undefined,
    );
  }

  /** One field's filter: a bare value, an operator call, or an object of operators. */
  private field(field: string, valueNode: Node, at: Node, depth: number): Condition | undefined {
    const own = this.d.fieldValue?.(this.sourceCode, field, valueNode, at);
    if (own !== undefined) return own ?? undefined;
    const value = unwrap(valueNode);
    const call = this.d.operatorCall?.(value);
    if (call) return this.operatorCall(field, call, at, depth);
    const object = objectLiteral(this.sourceCode, value);
    if (!object) {
      if (this.d.bare === "opaque") return opaque(at);
      if (this.d.lists && arrayLiteral(this.sourceCode, value)) return this.compare(field, "in", value, at);
      return this.compare(field, "eq", value, at);
    }
    const keys = object.properties.map((p) => (p.type === "Property" ? this.key(p) : undefined));
    const operators = keys.filter((k) => this.isOperator(k)).length;
    if (operators === 0 && !(this.d.nested === "row" && object.properties.length === 0)) {
      const plain = object.properties.every((p, i) => p.type === "Property" && keys[i] && "field" in keys[i]!);
      if (this.d.nested === "path" && depth < this.maxDepth) return this.filter(object, depth + 1, `${field}.`);
      if (this.d.nested === "row" && plain) return pred(field, "eq", undefined, at);
      if (this.d.nested === "other") return pred(field, "other", undefined, at);
    }
    if (operators < object.properties.length && this.d.mixed === "other") return pred(field, "other", undefined, at);
    const items: Condition[] = [];
    object.properties.forEach((p, i) => {
      const k = keys[i];
      if (p.type !== "Property" || !k) return void items.push(opaque(p));
      const name = "operator" in k ? k.operator : "field" in k ? k.field : k.combinator;
      if (this.d.ignored?.has(name)) return;
      const op = this.d.operators[name];
      if (op === "skip") return;
      if (typeof op === "function") return void items.push(pred(field, "other", undefined, at));
      if (!op) {
        const known = this.isOperator(k) || this.d.mixed === "each";
        return void items.push(known ? pred(field, "other", undefined, at) : opaque(p));
      }
      items.push(this.apply(field, op, p.value, at, depth));
    });
    return { kind: "and", items };
  }

  /**
   * The sub-filters of a combinator's operand: a list of filters (inline, or held in a `const` that code only pushes
   * more terms into, which only narrows an `and`), or one filter object; undefined when the operand is not read.
   */
  subFilters(node: Node, kind: "and" | "or" | "not" | "nor", depth: number): Condition[] | undefined {
    const n = unwrap(node);
    const each = (el: Node | null | undefined, fallback: Node): Condition => {
      const obj = el && el.type !== "SpreadElement" ? objectLiteral(this.sourceCode, el) : undefined;
      return obj ? this.filter(obj, depth + 1) : opaque(el ?? fallback);
    };
    if (n.type === "ArrayExpression") return n.elements.map((el) => each(el, n));
    if (n.type === "Identifier") {
      const list = andTerms(this.sourceCode, n);
      if (list) {
        if (list.grows && kind !== "and") return undefined;
        const parts = list.terms.map((el) => each(el, n));
        return list.grows ? [...parts, opaque(n)] : parts;
      }
    }
    const obj = objectLiteral(this.sourceCode, n);
    if (!obj) return [opaque(n)];
    if (this.d.objectOperand === "each" && kind === "or")
      return obj.properties.map((p): Condition => ({ kind: "and", items: this.items(obj, [p], depth + 1, "") }));
    return [this.filter(obj, depth + 1)];
  }

  private items(
    owner: TSESTree.ObjectExpression,
    properties: readonly TSESTree.ObjectLiteralElement[],
    depth: number,
    prefix: string,
  ): Condition[] {
    const items: Condition[] = [];
    for (const p of properties) {
      if (p.type !== "Property") {
        // `{ ...staleQuery, _id: { $in: ids } }`: the terms of a filter object the module holds in a `const`.
        const spread = depth < this.maxDepth ? objectLiteral(this.sourceCode, p.argument) : undefined;
        items.push(spread && spread !== owner ? this.filter(spread, depth + 1, prefix) : opaque(p));
        continue;
      }
      const k = depth > this.maxDepth ? undefined : this.key(p);
      if (!k || "operator" in k) {
        items.push(opaque(p));
        continue;
      }
      if ("combinator" in k) {
        const kind = this.d.combinators[k.combinator]!;
        const parts = this.subFilters(p.value, kind, depth);
        if (!parts) items.push(opaque(p));
        else if (kind === "not") items.push(...parts.map((item): Condition => ({ kind: "not", item })));
        else if (kind === "nor") items.push({ kind: "not", item: { kind: "or", items: parts } });
        else items.push({ kind, items: parts });
        continue;
      }
      const special = this.d.special?.[k.field];
      if (special) items.push(special(this.sourceCode, p.value, p));
      else if (this.d.ignored?.has(k.field)) continue;
      else if (this.d.reserved?.(k.field)) items.push(opaque(p));
      else {
        const c = this.field(prefix + k.field, p.value, p, depth);
        if (c) items.push(c);
      }
    }
    return items;
  }

  filter(obj: TSESTree.ObjectExpression, depth: number, prefix = ""): Condition {
    return { kind: "and", items: this.items(obj, obj.properties, depth, prefix) };
  }
}

/** A filter object read in a store's dialect. */
export function readObjectFilter(
  sourceCode: SourceCode,
  dialect: ObjectFilterDialect,
  filter: TSESTree.ObjectExpression,
): Condition {
  return new Reader(sourceCode, dialect).filter(filter, 0);
}

/**
 * A filter argument in a store's dialect: an object (inline or held in a `const`), a list of them where the dialect
 * reads a top-level list as "any of", or opaque (a variable, a helper's result).
 */
export function readFilterArgument(sourceCode: SourceCode, dialect: ObjectFilterDialect, node: Node): Condition {
  const reader = new Reader(sourceCode, dialect);
  if (dialect.topLevelList && unwrap(node).type === "ArrayExpression")
    return { kind: "or", items: reader.subFilters(node, "or", -1) ?? [opaque(node)] };
  const obj = objectLiteral(sourceCode, node);
  return obj ? reader.filter(obj, 0) : opaque(node);
}
