/**
 * DynamoDB, through every client JavaScript has for it: the v3 SDK's commands sent on a client
 * (`client.send(new UpdateCommand(params))`, `UpdateItemCommand` of the low-level client, a command held in a
 * `const`), and the method per request of the v2 DocumentClient, the v2 low-level client and the v3 aggregated
 * clients (`docClient.update(params).promise()`, `dynamodb.updateItem(params)`, `ddbDocClient.put(params)`).
 *
 * What tells a request apart from any other `update(…)` or `send(…)`: its parameters are an object the module writes
 * (inline or in a `const`) that names a table (`TableName`). The item it names is its `Key`; what it writes is its
 * `UpdateExpression` or its `Item`; when, its `ConditionExpression` (params.ts, parsed by expressions.ts).
 *
 * - An update changes the item its key names, when its condition holds (`SET #lock = :me` where
 *   `attribute_not_exists(#lock)` is a claim, `REMOVE #lock` where `#lock = :me` an owner-checked release). A failed
 *   condition throws (`ConditionalCheckFailedException`), so a claim that lost rejects.
 * - A put adds the item, or replaces the one with its key: under `attribute_not_exists(pk)` only when there is none
 *   (an insert under a unique key whose conflict is an error), under `attribute_not_exists(pk) OR expiresAt < :now`
 *   also when the one there has expired (a take-over on conflict), and with no condition always (an upsert).
 * - A delete removes the item its key names, when its condition holds; a get reads it; a query or a scan reads what
 *   its key condition and filter match.
 *
 * Transactions (`TransactWriteCommand`, `transactWrite`) and batches are not read yet, nor is the legacy `Expected`
 * parameter (read as a part of the condition nobody can read).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, StateAccess } from "../../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "../recognizer.js";
import { calleeName, methodOf } from "../../core/reading/ast.js";
import { definitionOf, unwrap } from "../../core/reading/values.js";
import { readsTimeAhead } from "../../core/reading/clock.js";
import {
  condition,
  itemAssignments,
  keyFilter,
  readParams,
  splitAbsence,
  updateAssignments,
  type DynamoParams,
} from "./params.js";

const STORE = "dynamodb";
type Operation = "update" | "put" | "delete" | "get" | "query" | "scan";

/** The v3 commands, of the document client (`UpdateCommand`) and of the low-level client (`UpdateItemCommand`). */
const COMMANDS: ReadonlyMap<string, Operation> = new Map([
  ["UpdateCommand", "update"],
  ["UpdateItemCommand", "update"],
  ["PutCommand", "put"],
  ["PutItemCommand", "put"],
  ["DeleteCommand", "delete"],
  ["DeleteItemCommand", "delete"],
  ["GetCommand", "get"],
  ["GetItemCommand", "get"],
  ["QueryCommand", "query"],
  ["ScanCommand", "scan"],
]);

/** The clients' methods, one per request. */
const METHODS: ReadonlyMap<string, Operation> = new Map([
  ["update", "update"],
  ["updateItem", "update"],
  ["put", "put"],
  ["putItem", "put"],
  ["delete", "delete"],
  ["deleteItem", "delete"],
  ["get", "get"],
  ["getItem", "get"],
  ["query", "query"],
  ["scan", "scan"],
]);

/** `new UpdateCommand(params)`, inline or held in a `const`: the operation and the parameters' node. */
function command(
  ctx: RecognizerContext,
  node: Node | undefined,
): { op: Operation; params: Node | undefined } | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const n = unwrap(node);
  const made = n.type === "NewExpression" ? n : definitionOf(ctx.sourceCode, n);
  const target = made && unwrap(made);
  if (target?.type !== "NewExpression") return undefined;
  const op = COMMANDS.get(calleeName(target) ?? "");
  return op && { op, params: target.arguments[0] as Node | undefined };
}

function and(items: readonly (Condition | undefined)[]): Condition {
  return { kind: "and", items: items.filter((c): c is Condition => c !== undefined) };
}

function access(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  op: Operation,
  params: DynamoParams,
): StateAccess | undefined {
  const base = { store: STORE, model: params.table, operation: op, node: call } as const;
  const cond = condition(ctx, params, "ConditionExpression");
  const legacy = params.prop("Expected")
    ? { kind: "opaque" as const, node: params.prop("Expected")!.value as Node }
    : undefined;
  if (op === "get" || op === "query" || op === "scan") {
    const key = op === "get" ? keyFilter(ctx, params) : undefined;
    if (op === "get" && !key) return undefined;
    const parts =
      op === "get"
        ? key!
        : [
            condition(ctx, params, "KeyConditionExpression")?.condition,
            condition(ctx, params, "FilterExpression")?.condition,
          ];
    return { access: "read", ...base, filter: and(parts) };
  }
  if (op === "put") {
    const assignments = itemAssignments(ctx, params);
    if (!assignments) return undefined;
    const split = cond && splitAbsence(cond);
    const ahead = assignments.filter((a) => readsTimeAhead(ctx.sourceCode, a.valueNode)).map((a) => a.field);
    const onConflict = split?.absent && split.replaces.length === 0 && !legacy ? "error" : "update";
    const replaces =
      split === undefined
        ? []
        : split.replaces.length === 1
          ? split.replaces
          : [{ kind: "or" as const, items: split.replaces }];
    return {
      access: "write",
      ...base,
      effect: "insert",
      onConflict,
      ...(split && split.key.length > 0 ? { conflictKey: split.key } : {}),
      // Time to live may delete the item once that time has passed (storeExpiry).
      ...(ahead.length > 0 ? { storeExpiry: ahead } : {}),
      filter: and([...(onConflict === "update" ? replaces : []), legacy]),
      assignments,
    };
  }
  const key = keyFilter(ctx, params);
  if (!key) return undefined;
  const filter = and([...key, cond?.condition, legacy]);
  const conditional = cond !== undefined || legacy !== undefined;
  if (op === "delete")
    return {
      access: "write",
      ...base,
      effect: "delete",
      filter,
      assignments: [],
      ...(conditional ? { throwsWhenNothing: true } : {}),
    };
  const assignments = updateAssignments(ctx, params);
  if (!assignments) return undefined;
  return { access: "write", ...base, filter, assignments, ...(conditional ? { throwsWhenNothing: true } : {}) };
}

export const dynamodbRecognizer: Recognizer = {
  store: STORE,
  packages: {
    own: /^(?:@aws-sdk\/(?:client-dynamodb|lib-dynamodb|util-dynamodb)|aws-sdk)(?:\/.*)?$/,
    family: /dynamo/i,
  },
  methods: new Set(["send", ...METHODS.keys()]),
  // A conditional write is what takes or releases anything in DynamoDB; its flags are set through placeholders
  // (`":yes": true`), which the shared `= true` evidence does not see.
  evidence: /ConditionExpression/,
  recognize(call, ctx): StateAccess | undefined {
    const m = methodOf(call);
    if (!m) return undefined;
    const arg = call.arguments[0] as Node | undefined;
    if (m.name === "send") {
      const sent = command(ctx, arg);
      const params = sent && readParams(ctx, sent.params);
      return sent && params ? access(ctx, call, sent.op, params) : undefined;
    }
    const op = METHODS.get(m.name);
    const params = op && readParams(ctx, arg);
    return op && params ? access(ctx, call, op, params) : undefined;
  },
};
