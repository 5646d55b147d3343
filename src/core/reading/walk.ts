/** A walk of the syntax tree that stops where told: the one traversal every reader below the rule kit uses. */
import type { Node } from "../model/accesses.js";

/** Each child node, `parent` excluded. */
function children(node: Node): Node[] {
  const out: Node[] = [];
  for (const key of Object.keys(node)) {
    if (key === "parent") continue;
    const value = (node as unknown as Record<string, unknown>)[key];
    if (Array.isArray(value)) {
      for (const v of value)
        if (v && typeof v === "object" && typeof (v as Node).type === "string") out.push(v as Node);
    } else if (value && typeof value === "object" && typeof (value as Node).type === "string") out.push(value as Node);
  }
  return out;
}

/** Visits `node` and its descendants depth first; a visit that returns `false` skips that node's children. */
export function walk(node: Node, visit: (n: Node) => boolean | void): void {
  if (visit(node) === false) return;
  for (const c of children(node)) walk(c, visit);
}
