/**
 * Code paths: does every way out of a function pass a release? Built on ESLint's code-path analysis, collected
 * during the same traversal as the rest of the inventory (no second walk).
 *
 * ESLint hands rules the segments of each function's control-flow graph as it walks. We note, for each segment,
 * the nodes that matter in the order they are entered: calls, awaits, boolean assignments, `return` and `throw`.
 * A lock's release is then "on every path" when a walk from the acquire along `nextSegments` meets a release
 * before each final segment. ESLint forks a path into a `catch`/`finally` only at the first node of a `try`
 * block that can throw; it does not model a rejected `await` elsewhere, so awaits are checked on their own: an
 * await met before the release must sit in a `try` whose `catch` handles it or whose `finally` releases.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import type { PathEscape } from "../model/held-locks.js";
import { enclosingFunction } from "./units.js";
import { unwrap } from "./values.js";

type Segment = TSESLint.CodePathSegment;
type CodePath = TSESLint.CodePath;

/** Records, per segment, the nodes entered while it was current. One per file. */
export class PathRecorder {
  private readonly stack: { readonly codePath: CodePath; readonly current: Set<Segment> }[] = [];
  private readonly events = new Map<Segment, Node[]>();
  private readonly segmentsOf = new Map<Node, Segment[]>();
  private readonly pathOf = new Map<Node, CodePath>();

  /** The listeners the inventory adds to its own. */
  readonly listeners = {
    onCodePathStart: (codePath: CodePath) => {
      this.stack.push({ codePath, current: new Set() });
    },
    onCodePathEnd: () => {
      this.stack.pop();
    },
    onCodePathSegmentStart: (segment: Segment) => {
      this.stack.at(-1)?.current.add(segment);
    },
    onCodePathSegmentEnd: (segment: Segment) => {
      this.stack.at(-1)?.current.delete(segment);
    },
    onUnreachableCodePathSegmentStart: (segment: Segment) => {
      this.stack.at(-1)?.current.add(segment);
    },
    onUnreachableCodePathSegmentEnd: (segment: Segment) => {
      this.stack.at(-1)?.current.delete(segment);
    },
  };

  record(node: Node): void {
    const top = this.stack.at(-1);
    if (!top || top.current.size === 0) return;
    const segments = [...top.current];
    this.segmentsOf.set(node, segments);
    this.pathOf.set(node, top.codePath);
    for (const s of segments) {
      const list = this.events.get(s);
      if (list) list.push(node);
      else this.events.set(s, [node]);
    }
  }

  /** Whether `node` was seen on a code path (a call, await, boolean assignment, return, throw or `catch`). */
  has(node: Node): boolean {
    return this.segmentsOf.has(node);
  }

  /** The first recorded node inside [start, end) of the code path `inside` belongs to, in traversal order. */
  firstIn(inside: Node, start: number, end: number): Node | undefined {
    const codePath = this.pathOf.get(inside);
    let best: Node | undefined;
    for (const [node, path] of this.pathOf) {
      if (path !== codePath || node.range[0] < start || node.range[1] > end || node.type === "CatchClause") continue;
      if (!best || node.range[0] < best.range[0]) best = node;
    }
    return best;
  }

  /** The segment's first recorded node lies in `node` (the segment begins there). */
  private startsIn(segment: Segment, node: Node): boolean {
    const first = this.events.get(segment)?.[0];
    return first !== undefined && first.range[0] >= node.range[0] && first.range[1] <= node.range[1];
  }

  /**
   * The ways out of `from`'s function that pass no release, walking forward from `from` (`inclusive`: from `from`
   * itself, when it is where the lock starts being held rather than the acquire). `isRelease` says whether a
   * recorded node releases; `awaitHandled` whether a rejected await there is caught or released by a `finally`.
   * `refused`: a `catch` not to enter (its `try` holds only `from`, whose throwing holds nothing).
   */
  escapes(
    from: Node,
    isRelease: (node: Node) => boolean,
    awaitHandled: (node: TSESTree.AwaitExpression) => boolean,
    inclusive: boolean,
    refused?: Node,
  ): { escapes: PathEscape[]; reachesRelease: boolean } {
    const codePath = this.pathOf.get(from);
    const start = this.segmentsOf.get(from);
    if (!codePath || !start) return { escapes: [], reachesRelease: false };
    let reachesRelease = false;
    const finals = new Set(codePath.finalSegments);
    const thrown = new Set(codePath.thrownSegments);
    const out: PathEscape[] = [];
    const seen = new Set<string>();
    const add = (escape: PathEscape) => {
      const key = `${escape.kind}@${escape.node.range[0]}`;
      if (!seen.has(key)) {
        seen.add(key);
        out.push(escape);
      }
    };
    const visited = new Set<Segment>();
    // Depth-first over (segment, index in it, last exit statement met on the way).
    const stack: { segment: Segment; index: number; exit: Node | undefined }[] = [];
    for (const s of start) {
      const events = this.events.get(s) ?? [];
      stack.push({ segment: s, index: events.indexOf(from) + (inclusive ? 0 : 1), exit: undefined });
    }
    while (stack.length > 0) {
      const { segment, index, exit: exitIn } = stack.pop()!;
      if (!segment.reachable) continue;
      const events = this.events.get(segment) ?? [];
      let exit = exitIn;
      let released = false;
      for (let i = index; i < events.length; i++) {
        const e = events[i]!;
        if (isRelease(e) || (e.type === "AwaitExpression" && isRelease(unwrap(e.argument)))) {
          released = true;
          break;
        }
        if (e.type === "AwaitExpression" && !awaitHandled(e)) add({ kind: "await", node: e });
        if (e.type === "ReturnStatement" || e.type === "ThrowStatement") exit = e;
      }
      if (released) {
        reachesRelease = true;
        continue;
      }
      if (finals.has(segment)) {
        if (exit?.type === "ThrowStatement" || (thrown.has(segment) && !exit)) {
          if (exit) add({ kind: "throw", node: exit });
        } else if (exit) {
          add({ kind: "return", node: exit });
        } else {
          add({ kind: "end", node: enclosingFunction(from) ?? from });
        }
        continue;
      }
      for (const next of segment.nextSegments) {
        if (visited.has(next)) continue;
        if (refused && this.startsIn(next, refused)) continue;
        visited.add(next);
        stack.push({ segment: next, index: 0, exit });
      }
    }
    return { escapes: out, reachesRelease };
  }
}
