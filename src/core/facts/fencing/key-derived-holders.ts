/** Holders made from the key (`LockFacts.keyDerivedHolders`): the owner column holds what the key column holds. */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../../model/accesses.js";
import type { Claim, KeyDerivedHolder } from "../../model/claims.js";
import type { ResolvedVocabulary } from "../../model/settings.js";
import { ownerPinned, toBranches } from "../../model/conditions.js";
import { findVariable, getConstInit, keyName, unwrap } from "../../reading/values.js";
import { holdsRow } from "../../model/claims.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * Calls that may make a value of its own each time (a token, an id, the clock, the host): a holder made with one may
 * be the caller's, so it is not taken as made of the key. Wider than `GENERATOR` (calls that surely make a new value,
 * for object locations) on purpose: here a guess would be a finding.
 */
const UNIQUE_CALL = /uuid|random|nanoid|cuid|ulid|token|crypto|hostname|pid|now|time|date|counter|seq/i;

/**
 * The variables an expression is made of, following the `const`s it reads (`lock:${id}` and `normalize(id)` are
 * both made of `id`), or undefined when it reads something unique per call or per process (a random id, the
 * clock, the host) or something this cannot follow.
 */
function madeOf(sourceCode: SourceCode, node: Node, depth = 0): Set<string> | undefined {
  if (depth > 6) return undefined;
  const n = unwrap(node);
  switch (n.type) {
    case "Literal":
      return new Set();
    case "Identifier": {
      const init = getConstInit(sourceCode, n);
      if (init && init.type !== "TSEnumDeclaration") return madeOf(sourceCode, init, depth + 1);
      const def = findVariable(sourceCode, n)?.defs[0];
      // A parameter of the function, or a `let` it reassigns: a value known at run time, by this name.
      return def && (def.type === "Parameter" || def.type === "Variable") ? new Set([n.name]) : undefined;
    }
    case "TemplateLiteral":
      return union(sourceCode, n.expressions, depth);
    case "BinaryExpression":
      return union(sourceCode, [n.left as Node, n.right], depth);
    case "CallExpression": {
      const callee = unwrap(n.callee);
      const name =
        callee.type === "Identifier"
          ? callee.name
          : callee.type === "MemberExpression"
            ? (keyName(callee.property, callee.computed) ?? "")
            : "";
      if (!name || UNIQUE_CALL.test(name)) return undefined;
      // `String(id)`, `normalize(id)`, `id.trim()`: made of its arguments and of what it is called on.
      const on = callee.type === "MemberExpression" ? [callee.object] : [];
      return union(
        sourceCode,
        [...on, ...n.arguments.filter((a): a is TSESTree.Expression => a.type !== "SpreadElement")],
        depth,
      );
    }
    case "MemberExpression":
      // `req.userId`, `job.id`: the object's own value, by its text.
      return n.computed ? undefined : new Set([sourceCode.getText(n)]);
    default:
      return undefined;
  }
}

function union(sourceCode: SourceCode, nodes: readonly Node[], depth: number): Set<string> | undefined {
  const out = new Set<string>();
  for (const x of nodes) {
    const s = madeOf(sourceCode, x, depth + 1);
    if (!s) return undefined;
    for (const v of s) out.add(v);
  }
  return out;
}

/**
 * Lock rows and leases taken where the row is free or already the caller's (a branch of the write's filter pins an
 * owner column, `OR locks.holder = EXCLUDED.holder`), whose owner column is written with a value made only of what
 * the lock's key column is made of: the "holder" is the key itself, the same for every caller of that lock.
 */
export function keyDerivedHolders(
  sourceCode: SourceCode,
  claims: readonly Claim[],
  vocabulary: ResolvedVocabulary,
): KeyDerivedHolder[] {
  const out: KeyDerivedHolder[] = [];
  for (const claim of claims) {
    if (!holdsRow(claim)) continue;
    const branches = toBranches(claim.write.filter);
    if (!branches.some((b) => ownerPinned(b, undefined, vocabulary))) continue;
    const owner = claim.write.assignments.find(
      (a) => vocabulary.isOwnerField(a.field) && a.value.kind === "other" && a.valueNode !== claim.write.node,
    );
    if (!owner) continue;
    const holder = madeOf(sourceCode, owner.valueNode);
    if (!holder || holder.size === 0) continue;
    // The column that names the lock: written by the same write, named like a key or a name (`lock_key`, `name`), not
    // a time or an owner; a row's other ids (`user_id` beside `document_id`) may well be the holder's own.
    for (const a of claim.write.assignments) {
      if (
        a === owner ||
        vocabulary.isOwnerField(a.field) ||
        vocabulary.isTimeField(a.field) ||
        a.valueNode === claim.write.node
      )
        continue;
      if (!/(key|name|resource)$/i.test(a.field)) continue;
      const key = madeOf(sourceCode, a.valueNode);
      if (!key || ![...holder].every((v) => key.has(v))) continue;
      out.push({ claim, owner, keyField: a.field, sources: [...holder] });
      break;
    }
  }
  return out;
}
