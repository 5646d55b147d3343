/**
 * Firestore (firebase-admin, @google-cloud/firestore, the web SDK's modular API): a document is written through its
 * reference, `ref.update(data)`, `ref.set(data, { merge: true })`, `ref.delete()`, or through a transaction or a
 * batch given the reference, `tx.update(ref, data)`, `tx.set(ref, data)`, `tx.delete(ref)`, or the modular functions,
 * `updateDoc(ref, data)`, `setDoc(ref, data)`, `deleteDoc(ref)`; it is read by `ref.get()`, `tx.get(ref)` and
 * `getDoc(ref)`. Every one of them names one document by its id: the filter is that id, known at run time.
 *
 * The model is the collection the reference was made in: `db.collection("matches").doc(id)`,
 * `collection(db, "matches")` then `doc(…)`, `doc(db, "matches", id)`, `db.doc("matches/" + id)`, and a `const`
 * holding one. A reference the module does not make (a parameter, `snap.ref`) is not read: without the collection
 * nothing here is known to be a document (unknown stays unknown). A transaction (`runTransaction`) is serializable
 * for the documents it reads (src/core/reading/units.ts), and `FieldValue.serverTimestamp()` is the database's clock
 * (src/core/reading/clock.ts).
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Condition, Node, StateAccess } from "../core/model/accesses.js";
import type { Recognizer, RecognizerContext } from "./recognizer.js";
import { assignedValue, objectAssignments } from "../core/reading/assignments.js";
import { calleeName, expressionName, methodOf } from "../core/reading/ast.js";
import { definitionOf, evaluate, keyName, objectLiteral, unwrap } from "../core/reading/values.js";

const STORE = "firestore";
const REF_WRITES = new Set(["update", "set", "delete"]);
const MODULAR = new Map([
  ["updateDoc", "update"],
  ["setDoc", "set"],
  ["deleteDoc", "delete"],
  ["getDoc", "get"],
]);

/** A static string, or undefined. */
function text(ctx: RecognizerContext, node: Node | undefined): string | undefined {
  if (!node || node.type === "SpreadElement") return undefined;
  const v = evaluate(ctx.sourceCode, node);
  return typeof v?.value === "string" && !v.symbolic ? v.value : undefined;
}

/** The collection a `collection(…)` call or a `.collection("name")` chain names, through a `const` holding one. */
function collectionOf(ctx: RecognizerContext, node: Node, depth = 0): string | undefined {
  if (depth > 3) return undefined;
  const n = unwrap(node);
  if (n.type === "Identifier") {
    const held = definitionOf(ctx.sourceCode, n);
    return held && collectionOf(ctx, held, depth + 1);
  }
  if (n.type !== "CallExpression") return undefined;
  const m = methodOf(n);
  if (m?.name === "collection") return text(ctx, n.arguments[0] as Node | undefined);
  // Modular: `collection(db, "matches")`.
  if (calleeName(n) === "collection" && !m) return text(ctx, n.arguments[1] as Node | undefined);
  return undefined;
}

/** A document a reference names: its collection, and the expression giving its id where the module shows one. */
interface Document {
  readonly model: string;
  readonly id?: Node;
}

/** The document a reference names, or undefined when the module did not make it. */
function documentOf(ctx: RecognizerContext, node: Node | undefined, depth = 0): Document | undefined {
  if (!node || node.type === "SpreadElement" || depth > 3) return undefined;
  const n = unwrap(node);
  if (n.type === "Identifier" || (n.type === "MemberExpression" && unwrap(n.object).type === "ThisExpression")) {
    const held = definitionOf(ctx.sourceCode, n);
    return held && documentOf(ctx, held, depth + 1);
  }
  if (n.type !== "CallExpression") return undefined;
  const m = methodOf(n);
  const args = n.arguments as Node[];
  if (m?.name === "doc") {
    // `db.collection("matches").doc(id)`, `matchesRef.doc(id)`; `db.doc("matches/abc")`: the path's first segment.
    const coll = collectionOf(ctx, m.member.object);
    if (coll) return { model: coll, id: args[0] };
    const path = text(ctx, args[0]);
    return path?.includes("/") ? { model: path.split("/")[0]! } : undefined;
  }
  if (!m && calleeName(n) === "doc") {
    // Modular: `doc(db, "matches", id)`, `doc(collection(db, "matches"), id)`.
    const [first, second, third] = args;
    const coll = first && collectionOf(ctx, first);
    if (coll) return { model: coll, id: second };
    const name = text(ctx, second);
    if (name && !name.includes("/")) return { model: name, id: third };
    return name ? { model: name.split("/")[0]! } : undefined;
  }
  return undefined;
}

/**
 * One document by its id. An id the module names by a constant (`.doc("streamLeader")`) is a value the rules can
 * compare, as a lock row's name is in SQL (`WHERE name = 'leader'`).
 */
function byId(ctx: RecognizerContext, call: Node, id: Node | undefined): Condition {
  const name = text(ctx, id);
  const values = name === undefined ? undefined : [{ value: name }];
  return {
    kind: "and",
    items: [
      { kind: "pred", field: "id", op: "eq", values, node: call, ...(id && name !== undefined ? { value: id } : {}) },
    ],
  };
}

function access(
  ctx: RecognizerContext,
  call: TSESTree.CallExpression,
  document: Document,
  operation: string,
  data: Node | undefined,
): StateAccess | undefined {
  const { model } = document;
  const filter = byId(ctx, call, document.id);
  if (operation === "get") return { access: "read", store: STORE, model, operation, filter, node: call };
  if (operation === "delete")
    return {
      access: "write",
      store: STORE,
      model,
      operation,
      effect: "delete",
      filter,
      assignments: [],
      node: call,
    };
  const obj = data && objectLiteral(ctx.sourceCode, data);
  if (!obj) return undefined;
  return {
    access: "write",
    store: STORE,
    model,
    operation,
    filter,
    assignments: objectAssignments(ctx.sourceCode, obj, {
      // `FieldValue.delete()` (the Admin SDK) and `deleteField()` (the web SDK) remove the field: it is emptied.
      value: (node) => ({
        value: removesField(node) ? { kind: "static", value: { value: null } } : assignedValue(ctx.sourceCode, node),
        valueNode: node,
      }),
    }),
    node: call,
  };
}

function removesField(node: Node): boolean {
  const n = unwrap(node);
  if (n.type !== "CallExpression" || n.arguments.length > 0) return false;
  const c = unwrap(n.callee);
  if (c.type === "Identifier") return c.name === "deleteField";
  return (
    c.type === "MemberExpression" &&
    keyName(c.property as Node, c.computed) === "delete" &&
    expressionName(unwrap(c.object as Node)) === "FieldValue"
  );
}

export const firestoreRecognizer: Recognizer = {
  store: STORE,
  packages: {
    own: /^(?:firebase-admin|@google-cloud\/firestore|firebase|@firebase\/firestore)(?:\/.*)?$/,
    family: /fire/i,
  },
  methods: new Set([...REF_WRITES, "get"]),
  functions: new Set(MODULAR.keys()),
  recognize(call, ctx): StateAccess | undefined {
    const args = call.arguments as Node[];
    if (args.some((a) => a.type === "SpreadElement")) return undefined;
    const m = methodOf(call);
    if (!m) {
      const operation = MODULAR.get(calleeName(call) ?? "");
      const document = operation ? documentOf(ctx, args[0]) : undefined;
      return operation && document ? access(ctx, call, document, operation, args[1]) : undefined;
    }
    if (!REF_WRITES.has(m.name) && m.name !== "get") return undefined;
    // On the reference itself: `ref.update(data)`, `ref.get()`.
    const own = documentOf(ctx, m.member.object);
    if (own) return access(ctx, call, own, m.name, args[0]);
    // Through a transaction or a batch that is handed the reference: `tx.update(ref, data)`, `tx.get(ref)`.
    const document = documentOf(ctx, args[0]);
    return document ? access(ctx, call, document, m.name, args[1]) : undefined;
  },
};
