/**
 * Builder chains, read the same way for every fluent query builder (Knex, Kysely, PostgREST): the links of a chain
 * from the expression it starts from outwards (`db("jobs").where(…).update(…)`), and the links made on a call's result.
 * What each link means is the store's; how a chain is walked is not.
 */
import type { TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { keyName, unwrap } from "./values.js";

type Call = TSESTree.CallExpression;

/** One `.name(args)` of a builder chain. */
export interface Link {
  readonly name: string;
  readonly call: Call;
  readonly args: readonly TSESTree.CallExpressionArgument[];
}

/** The calls of a chain from its base outwards up to `call` (included), and the expression the chain starts from. */
export function chainDown(call: Call): { base: Node; links: Link[] } {
  const links: Link[] = [];
  let node: Call = call;
  for (;;) {
    const callee = unwrap(node.callee);
    if (callee.type !== "MemberExpression") return { base: node, links: links.reverse() };
    const name = keyName(callee.property, callee.computed);
    if (name === undefined) return { base: callee, links: [] };
    links.push({ name, call: node, args: node.arguments });
    const object = unwrap(callee.object);
    if (object.type !== "CallExpression") return { base: object, links: links.reverse() };
    node = object;
  }
}

/** The calls made on the result of `call`, innermost first, while `keep` accepts their names. */
export function chainUp(call: Call, keep: (name: string) => boolean): Link[] {
  const links: Link[] = [];
  let node: Node = call;
  for (;;) {
    let parent: Node | undefined = node.parent;
    while (
      parent &&
      (parent.type === "TSNonNullExpression" || parent.type === "TSAsExpression") &&
      parent.expression === node
    ) {
      node = parent;
      parent = parent.parent;
    }
    if (!parent || parent.type !== "MemberExpression" || parent.object !== node) return links;
    const outer: Node | undefined = parent.parent;
    if (!outer || outer.type !== "CallExpression" || outer.callee !== parent) return links;
    const name = keyName(parent.property, parent.computed);
    if (name === undefined || !keep(name)) return links;
    links.push({ name, call: outer, args: outer.arguments });
    node = outer;
  }
}
