/**
 * A DynamoDB request's parameters read into the model: the table (`TableName`), the item it names (`Key`, read as
 * equalities on the key's attributes), what it writes (`UpdateExpression`'s actions, or a put's `Item`) and when
 * (`ConditionExpression`), with the placeholders resolved through `ExpressionAttributeNames` and
 * `ExpressionAttributeValues`. The low-level client's typed values (`{ S: "x" }`, `{ BOOL: true }`, `{ N: "1" }`)
 * and `marshall({ … })` read as the values they wrap.
 *
 * `attribute_not_exists(p)` matches an item without `p`, as a filter `p: null` does; `attribute_exists(p)` one with
 * it. Every other function (`begins_with`, `contains`, `size`) and a comparison of two attributes is a part not read
 * (`opaque`). An expression that is not a static string, or does not parse, is not read either.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Assignment, CompareOp, Condition, Node, StaticValue } from "../../core/model/accesses.js";
import type { RecognizerContext } from "../recognizer.js";
import { assignedValue, objectAssignments } from "../../core/reading/assignments.js";
import { evaluate, findProperty, keyName, objectLiteral, unwrap } from "../../core/reading/values.js";
import {
  parseCondition,
  parseUpdate,
  type Comparator,
  type ConditionTree,
  type Operand,
  type UpdateAction,
} from "./expressions.js";

/** The low-level client's attribute-value wrappers. */
const TYPED = new Set(["S", "N", "BOOL", "NULL", "B", "SS", "NS", "BS", "L", "M"]);

/**
 * The value an attribute-value node stands for: `{ S: "x" }` → `"x"`, `marshall({ … })` → its argument. `{ NULL: true }`
 * stays as it is and is read as no static value.
 */
export function attributeValue(node: Node): Node {
  const n = unwrap(node);
  if (n.type === "ObjectExpression" && n.properties.length === 1) {
    const p = n.properties[0]!;
    const key = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
    if (p.type === "Property" && key && TYPED.has(key) && key !== "NULL") return p.value as Node;
  }
  if (n.type === "CallExpression" && n.callee.type === "Identifier" && n.callee.name === "marshall" && n.arguments[0])
    return n.arguments[0] as Node;
  return n;
}

/** An object the request gives, inline, through a `const`, or marshalled. */
function objectOf(ctx: RecognizerContext, node: Node | undefined): TSESTree.ObjectExpression | undefined {
  return node && objectLiteral(ctx.sourceCode, attributeValue(node));
}

/** A static string, or undefined. */
function text(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return typeof v?.value === "string" && !v.symbolic ? v.value : undefined;
}

export interface DynamoParams {
  readonly object: TSESTree.ObjectExpression;
  /** The table, as a static name or the expression's source text (`LOCKS_TABLE` for `process.env.LOCKS_TABLE`). */
  readonly table: string;
  prop(name: string): TSESTree.Property | undefined;
}

/** The request's parameters, when they name a table: nothing else is known to be a DynamoDB request. */
export function readParams(ctx: RecognizerContext, node: Node | undefined): DynamoParams | undefined {
  const object = node && node.type !== "SpreadElement" ? objectLiteral(ctx.sourceCode, node) : undefined;
  const tableProp = object && findProperty(object, "TableName");
  if (!object || !tableProp) return undefined;
  // A table named at run time is named by its expression, as written but for where it comes from: `process.env.
  // LOCKS_TABLE` and `this.locksTable` read `LOCKS_TABLE` and `locksTable` in a message.
  const table =
    text(ctx, tableProp.value as Node) ??
    ctx.sourceCode.getText(tableProp.value).replace(/^(?:process\.env\.|this\.)/, "");
  return { object, table, prop: (name) => findProperty(object, name) };
}

/** Placeholders resolved: `#s` → `status`, `:now` → the value's node. */
class Placeholders {
  private readonly names = new Map<string, string>();
  private readonly values = new Map<string, Node>();

  constructor(
    private readonly ctx: RecognizerContext,
    params: DynamoParams,
  ) {
    for (const p of objectOf(ctx, params.prop("ExpressionAttributeNames")?.value as Node)?.properties ?? []) {
      const key = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
      const name = p.type === "Property" ? text(ctx, p.value as Node) : undefined;
      if (key && name) this.names.set(key, name);
    }
    for (const p of objectOf(ctx, params.prop("ExpressionAttributeValues")?.value as Node)?.properties ?? []) {
      const key = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
      if (key && p.type === "Property") this.values.set(key, attributeValue(p.value as Node));
    }
  }

  /** The attribute a path names (`lease.owner`), or undefined when a placeholder is not given. */
  field(operand: Operand): string | undefined {
    if (operand.kind !== "path") return undefined;
    const parts = operand.segments.map((s) => (s.startsWith("#") ? this.names.get(s) : s));
    return parts.every((p): p is string => p !== undefined) ? parts.join(".") : undefined;
  }

  value(operand: Operand): Node | undefined {
    return operand.kind === "value" ? this.values.get(operand.name) : undefined;
  }

  staticValue(node: Node): StaticValue | undefined {
    return evaluate(this.ctx.sourceCode, node);
  }
}

const OPS: Readonly<Record<Comparator, CompareOp>> = {
  "=": "eq",
  "<>": "ne",
  "<": "lt",
  "<=": "lte",
  ">": "gt",
  ">=": "gte",
};
const FLIPPED: Readonly<Record<Comparator, Comparator>> = {
  "=": "=",
  "<>": "<>",
  "<": ">",
  "<=": ">=",
  ">": "<",
  ">=": "<=",
};

function toCondition(tree: ConditionTree, names: Placeholders, at: Node): Condition {
  const opaque: Condition = { kind: "opaque", node: at };
  const compare = (path: Operand, op: CompareOp, value: Operand): Condition => {
    const field = names.field(path);
    const node = names.value(value);
    if (!field || !node) return opaque;
    const v = names.staticValue(node);
    return { kind: "pred", field, op, values: v ? [v] : undefined, node: at, value: node };
  };
  switch (tree.kind) {
    case "and":
    case "or":
      return { kind: tree.kind, items: tree.items.map((i) => toCondition(i, names, at)) };
    case "not":
      return { kind: "not", item: toCondition(tree.item, names, at) };
    case "compare":
      if (tree.left.kind === "path" && tree.right.kind === "value") return compare(tree.left, OPS[tree.op], tree.right);
      if (tree.left.kind === "value" && tree.right.kind === "path")
        return compare(tree.right, OPS[FLIPPED[tree.op]], tree.left);
      return opaque;
    case "between":
      return { kind: "and", items: [compare(tree.operand, "gte", tree.low), compare(tree.operand, "lte", tree.high)] };
    case "in": {
      const field = names.field(tree.operand);
      const nodes = tree.list.map((o) => names.value(o));
      if (!field || nodes.some((n) => !n)) return opaque;
      const values = nodes.map((n) => names.staticValue(n!));
      return {
        kind: "pred",
        field,
        op: "in",
        values: values.every((v): v is StaticValue => v !== undefined) ? values : undefined,
        node: at,
      };
    }
    case "function": {
      const field = tree.args.length === 1 ? names.field(tree.args[0]!) : undefined;
      if (!field || (tree.name !== "attribute_not_exists" && tree.name !== "attribute_exists")) return opaque;
      return {
        kind: "pred",
        field,
        op: tree.name === "attribute_not_exists" ? "eq" : "ne",
        values: [{ value: null }],
        node: at,
      };
    }
  }
}

/** The request's expression named `name` (`ConditionExpression`), read; opaque when given but not read. */
export function condition(ctx: RecognizerContext, params: DynamoParams, name: string): ConditionReading | undefined {
  const prop = params.prop(name);
  if (!prop) return undefined;
  const at = prop.value as Node;
  const source = text(ctx, at);
  const tree = source === undefined ? undefined : parseCondition(source);
  if (!tree) return { condition: { kind: "opaque", node: at } };
  return { tree, condition: toCondition(tree, new Placeholders(ctx, params), at) };
}

export interface ConditionReading {
  readonly tree?: ConditionTree;
  readonly condition: Condition;
}

/** The item a request names: an equality per key attribute (`Key: { pk: id }`). */
export function keyFilter(ctx: RecognizerContext, params: DynamoParams): Condition[] | undefined {
  const key = objectOf(ctx, params.prop("Key")?.value as Node);
  if (!key) return undefined;
  const out: Condition[] = [];
  for (const p of key.properties) {
    const field = p.type === "Property" ? keyName(p.key, p.computed) : undefined;
    if (!field || p.type !== "Property") return undefined;
    const value = attributeValue(p.value as Node);
    const v = evaluate(ctx.sourceCode, value);
    out.push({ kind: "pred", field, op: "eq", values: v ? [v] : undefined, node: p, value });
  }
  return out;
}

/** What an `UpdateExpression` stores, attribute by attribute; undefined when it is not read. */
export function updateAssignments(ctx: RecognizerContext, params: DynamoParams): Assignment[] | undefined {
  const prop = params.prop("UpdateExpression");
  const source = prop && text(ctx, prop.value as Node);
  const actions = source === undefined ? undefined : parseUpdate(source);
  if (!prop || !actions) return undefined;
  const names = new Placeholders(ctx, params);
  const out: Assignment[] = [];
  for (const action of actions) {
    const field = names.field(action.path);
    if (!field) return undefined;
    out.push({ field, ...stored(ctx, names, action, prop.value as Node), node: prop });
  }
  return out;
}

function stored(
  ctx: RecognizerContext,
  names: Placeholders,
  action: UpdateAction,
  at: Node,
): Pick<Assignment, "value" | "valueNode"> {
  if (action.clause === "REMOVE") return { value: { kind: "static", value: { value: null } }, valueNode: at };
  const node = action.clause === "SET" && action.value ? names.value(action.value) : undefined;
  return node
    ? { value: assignedValue(ctx.sourceCode, node), valueNode: node }
    : { value: { kind: "other" }, valueNode: at };
}

/** What a put stores: the item's attributes. */
export function itemAssignments(ctx: RecognizerContext, params: DynamoParams): Assignment[] | undefined {
  const item = objectOf(ctx, params.prop("Item")?.value as Node);
  if (!item) return undefined;
  return objectAssignments(ctx.sourceCode, item, {
    value: (node) => {
      const value = attributeValue(node);
      return { value: assignedValue(ctx.sourceCode, value), valueNode: value };
    },
  });
}

/**
 * A put's condition split by what it lets through: the item's absence (`attribute_not_exists(pk)`, alone or with
 * others by AND) and every other branch of a top-level OR (`lockedUntil < :now`: the existing item it may replace).
 */
export function splitAbsence(reading: ConditionReading): { absent: boolean; replaces: Condition[]; key: string[] } {
  const tree = reading.tree;
  if (!tree) return { absent: false, replaces: [reading.condition], key: [] };
  const branches = tree.kind === "or" ? tree.items : [tree];
  const mapped = reading.condition.kind === "or" && tree.kind === "or" ? reading.condition.items : [reading.condition];
  const isAbsence = (t: ConditionTree): boolean =>
    (t.kind === "function" && t.name === "attribute_not_exists") ||
    (t.kind === "and" && t.items.every((i) => isAbsence(i)));
  const absent = branches.some(isAbsence);
  // The attributes whose absence is required: the item's key, resolved (`#pk`), as the condition reads them.
  const key = mapped
    .filter((_, i) => isAbsence(branches[i]!))
    .flatMap(function fields(c: Condition): string[] {
      if (c.kind === "pred") return c.op === "eq" && c.values?.[0]?.value === null ? [c.field] : [];
      return c.kind === "and" ? c.items.flatMap(fields) : [];
    });
  return { absent, replaces: mapped.filter((_, i) => !isAbsence(branches[i]!)), key };
}
