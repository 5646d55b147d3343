/**
 * The missing half, written for the user (issue 18): require-stale-recovery's suggestion for a status claim. Next to
 * the claiming function it adds a recovery in the claim's own store syntax (the recognizer writes the call,
 * `StateWrite.recoveryWrite`): one conditional write that moves rows still holding the claimed value, whose
 * progress timestamp has not moved for longer than a named threshold, back to the value the claim took them from.
 *
 * It is offered only where every part is known from the module, never guessed:
 * - the value to give back: the one the claim's filter pins (`status: "PENDING"`, or the first of `status: { in }`);
 * - the progress timestamp: a time field the module keeps moving while the work runs (`LockFacts.keptMoving`),
 *   which the claim stamps too: without one there is nothing to judge age by, and the plugin does not invent a
 *   column;
 * - a client the recovery can reach where it is placed: a module-level binding for a function added after the
 *   claiming function, `this` for a method added after the claiming method.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import { nameWords } from "../core/model/words.js";
import type { Node, RecoveryWrite, TextEdit } from "../core/model/accesses.js";
import type { Claim } from "../core/model/claims.js";
import type { LockFacts } from "../core/model/lock-facts.js";
import { toBranches } from "../core/model/conditions.js";
import { clockStamp, normalizeModel } from "../core/model/names.js";
import { normalizeName } from "../core/model/settings.js";
import { findVariable } from "../core/reading/values.js";
import { findBelow, freeName, propertyKey, valueText } from "../core/reading/edits.js";
import { enclosingFunction, isFunction } from "../core/reading/units.js";
import { readsClockAhead } from "../core/reading/clock.js";
import { holdsRow, isLockRow } from "../core/model/claims.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/** A recovery ready to insert: the edits, and the names it adds (for the suggestion's text). */
export interface RecoveryEdit {
  readonly edits: readonly TextEdit[];
  readonly name: string;
  readonly threshold: string;
  readonly timeField: string;
  readonly backText: string;
  /** For a flag, the held and the free state in words (`locked = true`, `locked = false`), for the suggestion's text. */
  readonly flag?: { readonly held: string; readonly free: string };
}

/** Minutes a row may go without progress before the suggested recovery frees it: a default the user tunes. */
const DEFAULT_MINUTES = 15;

function words(name: string): string[] {
  return nameWords(name);
}

/**
 * The value to give back, as source text and as a value: the one the claim's filter takes rows from (pinned, or the
 * first of a list), as the filter writes it (`RenderStatus.QUEUED`); else, where the filter only excludes the
 * claimed value, the one the module's own failure path gives a row it holds (a write in a `catch` that pins the
 * claimed value and moves the field off it), which the claim accepts again.
 */
function backValue(
  sourceCode: SourceCode,
  claim: Claim,
  facts: LockFacts,
): { text: string; value: string | boolean } | undefined {
  const field = normalizeName(claim.lock.field);
  const claimed = claim.lock.value.value;
  const excluded: unknown[] = [];
  for (const branch of toBranches(claim.write.filter)) {
    for (const atom of branch) {
      if (!("pred" in atom) || normalizeName(atom.pred.field) !== field || !atom.pred.values?.length) continue;
      if (atom.op === "ne" || atom.op === "notIn") {
        excluded.push(...atom.pred.values.map((v) => v.value));
        continue;
      }
      // A status the rows wait in, or a flag's other value (`locked: false`).
      const value = atom.pred.values.find((v) => v.value !== claimed);
      const kind = typeof value?.value;
      if (
        value === undefined ||
        (kind !== "string" && kind !== "boolean") ||
        kind !== typeof claimed ||
        (atom.op !== "eq" && atom.op !== "in")
      )
        continue;
      const back = value.value as string | boolean;
      return { text: valueText(sourceCode, atom.pred.node, back) ?? JSON.stringify(back), value: back };
    }
  }
  if (!excluded.includes(claimed)) return undefined;
  const model = normalizeModel(claim.write.model);
  for (const w of facts.writes) {
    if (w === claim.write || normalizeModel(w.model) !== model || !inCatch(w.node)) continue;
    const pinsClaimed = toBranches(w.filter).every((b) =>
      b.some(
        (a) =>
          "pred" in a &&
          a.op === "eq" &&
          normalizeName(a.pred.field) === field &&
          a.pred.values?.length === 1 &&
          a.pred.values[0]!.value === claimed,
      ),
    );
    const moved = w.assignments.find((a) => normalizeName(a.field) === field && a.value.kind === "static");
    const to = moved?.value.kind === "static" ? moved.value.value.value : undefined;
    if (!pinsClaimed || typeof to !== "string" || to === claimed || excluded.includes(to)) continue;
    return { text: valueText(sourceCode, moved!.valueNode, to) ?? JSON.stringify(to), value: to };
  }
  return undefined;
}

function inCatch(node: Node): boolean {
  for (let n: Node | undefined = node.parent; n; n = n.parent) {
    if (n.type === "CatchClause") return true;
    if (isFunction(n)) return false;
  }
  return false;
}

/** The statement of the program body that holds `node`. */
function topStatement(node: Node): TSESTree.ProgramStatement | undefined {
  let n: Node = node;
  while (n.parent && n.parent.type !== "Program") n = n.parent;
  return n.parent ? (n as TSESTree.ProgramStatement) : undefined;
}

/** The leftmost name of a client expression: `prisma` in `prisma.job`, `this` in `this.prisma.job`. */
function clientRoot(node: Node): TSESTree.Identifier | TSESTree.ThisExpression | undefined {
  let n: Node = node;
  while (n.type === "MemberExpression" || n.type === "TSNonNullExpression")
    n = n.type === "MemberExpression" ? n.object : n.expression;
  return n.type === "Identifier" || n.type === "ThisExpression" ? n : undefined;
}

function lineIndent(sourceCode: SourceCode, node: Node): string {
  const line = sourceCode.lines[node.loc.start.line - 1] ?? "";
  return /^\s*/.exec(line)![0];
}

function indented(text: string, indent: string): string {
  return text
    .split("\n")
    .map((l) => (l ? indent + l : l))
    .join("\n");
}

/** Where a module statement begins with its decorators and the comments above it (a class's JSDoc stays on it). */
function statementStart(sourceCode: SourceCode, top: TSESTree.ProgramStatement): number {
  const declaration =
    top.type === "ExportNamedDeclaration" || top.type === "ExportDefaultDeclaration" ? top.declaration : top;
  const decorators = declaration && "decorators" in declaration ? (declaration.decorators ?? []) : [];
  const start = Math.min(top.range[0], ...decorators.map((d) => d.range[0]));
  const first = sourceCode.getTokenByRangeStart(start, { includeComments: false }) ?? sourceCode.getFirstToken(top);
  const comments = first ? sourceCode.getCommentsBefore(first) : [];
  return comments.length > 0 ? Math.min(start, comments[0]!.range[0]) : start;
}

/** The suggestion's edits for `claim`, or undefined where a part would have to be guessed. */
export function recoveryEdit(
  sourceCode: SourceCode,
  filename: string,
  claim: Claim,
  facts: LockFacts,
): RecoveryEdit | undefined {
  if (holdsRow(claim) || !claim.write.recoveryWrite) return undefined;
  const back = backValue(sourceCode, claim, facts);
  // The progress timestamp: a heartbeat's stamp (a field stamped only by the claim is a start time whatever its name).
  const timeField = facts.keptMoving(claim.write.model, claim);
  if (!back || !timeField) return undefined;
  // The claim stamps it too: else a row claimed again keeps the stamp of its last run (or none) until the first
  // beat, and the recovery would free a holder that has just started (or never free one killed before it beats).
  if (!clockStamp(claim.write, timeField)) return undefined;
  const fn = enclosingFunction(claim.write.node);
  const top = topStatement(claim.write.node);
  if (!fn || !top) return undefined;
  const model = words(claim.lock.model);
  // A flag is named by its field (`locked = true`), a status by its value (`RUNNING`).
  const flag = typeof claim.lock.value.value === "boolean";
  const value = flag
    ? words(claim.lock.field)
    : words(claim.lock.value.value === undefined ? "" : String(claim.lock.value.value));
  const threshold = freeName(sourceCode, ["STALE", ...model, ...value, "MS"].map((w) => w.toUpperCase()).join("_"));
  const name = freeName(sourceCode, `recoverStale${model.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")}`);
  const write = claim.write.recoveryWrite({
    field: claim.lock.field,
    stuck: claim.lock.value.value as string | boolean,
    back: back.value,
    stuckText: claim.lock.valueText,
    backText: back.text,
    timeField,
    threshold,
  });
  if (!write) return undefined;
  const stuck = flag ? `with ${claim.lock.field} = ${String(claim.lock.value.value)}` : String(claim.lock.value.value);
  const backWords = flag ? `${claim.lock.field} = ${String(back.value)}` : String(back.value);
  const edits = assemble(
    sourceCode,
    filename,
    write,
    fn,
    top,
    name,
    [
      `Gives ${claim.lock.model} rows left ${stuck} by a holder that died (SIGKILL, OOM, a deploy) back to ${backWords}, once`,
      `${timeField} has not moved for ${threshold}. Run it from a scheduled sweeper, or before claiming.`,
    ],
    [
      `/** How long ${/^[aeiou]/i.test(claim.lock.model) ? "an" : "a"} ${claim.lock.model} row may stay ${stuck} without ${timeField} moving before its holder counts as dead. */`,
      `const ${threshold} = ${DEFAULT_MINUTES} * 60 * 1000;`,
    ],
  );
  if (!edits) return undefined;
  return {
    edits,
    name,
    threshold,
    timeField,
    backText: back.text,
    ...(flag
      ? {
          flag: {
            held: `${claim.lock.field} = ${String(claim.lock.value.value)}`,
            free: `${claim.lock.field} = ${back.text}`,
          },
        }
      : {}),
  };
}

/** A lock-row sweep ready to insert (require-stale-recovery's suggestion for a lock row inserted under a unique key). */
export interface LockRowSweepEdit {
  readonly edits: readonly TextEdit[];
  readonly name: string;
  readonly timeField: string;
  /** The constant's name where the field is a stamp the holder renews; none where it is an expiry (compared with now). */
  readonly threshold?: string;
}

/**
 * The suggestion's edits for a lock row inserted under a unique key (`isLockRow(claim)`): a sweep that deletes the rows
 * whose holder died. Offered only where the row carries a time its holder keeps moving (`LockFacts.keptMoving`: an
 * expiry it extends, a heartbeat it stamps) and the insert stamps it too, so a live holder's row is never taken. An
 * expiry (`new Date(Date.now() + ttl)`) is compared with now; a stamp with a named threshold.
 */
export function lockRowSweepEdit(
  sourceCode: SourceCode,
  filename: string,
  claim: Claim,
  facts: LockFacts,
): LockRowSweepEdit | undefined {
  if (!isLockRow(claim) || !claim.write.staleRowsDelete) return undefined;
  const timeField = facts.keptMoving(claim.write.model, claim);
  const stamp = timeField && clockStamp(claim.write, timeField);
  const fn = enclosingFunction(claim.write.node);
  const top = topStatement(claim.write.node);
  if (!timeField || !stamp || !fn || !top) return undefined;
  const expiry = readsClockAhead(sourceCode, stamp.valueNode);
  const model = words(claim.lock.model);
  const Model = model.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
  const threshold = expiry
    ? undefined
    : freeName(sourceCode, ["STALE", ...model, "MS"].map((w) => w.toUpperCase()).join("_"));
  const name = freeName(sourceCode, `remove${expiry ? "Expired" : "Stale"}${Model}`);
  const write = claim.write.staleRowsDelete({ timeField, ...(threshold ? { threshold } : {}) });
  if (!write) return undefined;
  const edits = assemble(
    sourceCode,
    filename,
    write,
    fn,
    top,
    name,
    wrap(
      `Removes ${claim.lock.model} rows whose ${timeField} ${threshold ? `has not moved for ${threshold}` : "has passed"}: their holder died ` +
        "(SIGKILL, OOM, a deploy) without releasing them, and the key stays taken while they remain. Run it from a " +
        "scheduled sweeper, or before acquiring.",
    ),
    threshold
      ? [
          `/** How long ${/^[aeiou]/i.test(claim.lock.model) ? "an" : "a"} ${claim.lock.model} row may go without ${timeField} moving before its holder counts as dead. */`,
          `const ${threshold} = ${DEFAULT_MINUTES} * 60 * 1000;`,
        ]
      : undefined,
  );
  return edits && { edits, name, timeField, ...(threshold ? { threshold } : {}) };
}

/** `text` in lines of at most 110 characters, broken between words. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > 110) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

/**
 * The edits that add the function `name` calling `write` next to the claiming function `fn` (see `placement`), with
 * its JSDoc (`doc`, lines without the comment marks) and, above it (or above the class for a method), `constant`.
 * Types are written only in TypeScript files. Undefined where the client is not in reach there.
 */
function assemble(
  sourceCode: SourceCode,
  filename: string,
  write: RecoveryWrite,
  fn: TSESTree.FunctionLike,
  top: TSESTree.ProgramStatement,
  name: string,
  doc: readonly string[],
  constant: readonly string[] | undefined,
): TextEdit[] | undefined {
  const placed = placement(sourceCode, write, fn, top);
  if (!placed) return undefined;
  const result = /\.[cm]?tsx?$/.test(filename) ? ": Promise<number>" : "";
  const fnText = [
    "/**",
    ...doc.map((l) => ` * ${l}`),
    " */",
    `${placed.method ? "async " : `${placed.exported ? "export " : ""}async function `}${name}()${result} {`,
    `  const result = await ${write.call.split("\n").join("\n  ")};`,
    `  return ${write.count("result")};`,
    "}",
  ].join("\n");
  const constText = constant ? `${constant.join("\n")}\n\n` : "";
  const edits: TextEdit[] = [...(write.edits ?? [])];
  if (placed.method) {
    const start = statementStart(sourceCode, top);
    if (constText) edits.push({ range: [start, start], text: constText });
    edits.push({
      range: [placed.after.range[1], placed.after.range[1]],
      text: `\n\n${indented(fnText, lineIndent(sourceCode, placed.after))}`,
    });
  } else {
    edits.push({ range: [placed.after.range[1], placed.after.range[1]], text: `\n\n${constText}${fnText}` });
  }
  return edits;
}

/**
 * Where the recovery goes: after the claiming method of a class when the client is `this` (a method), else after
 * the module statement that holds the claiming function (a function), where the client must be a module binding.
 */
function placement(
  sourceCode: SourceCode,
  write: RecoveryWrite,
  fn: TSESTree.FunctionLike,
  top: TSESTree.ProgramStatement,
): { after: Node; method: boolean; exported: boolean } | undefined {
  const root = clientRoot(write.client);
  if (!root) return undefined;
  // An ES module exports it for a sweeper to import; a CommonJS module (no import or export declaration) gets a
  // plain function, since a later `module.exports = {…}` would drop one added to its exports here.
  const exported =
    sourceCode.ast.sourceType === "module" && sourceCode.ast.body.some((s) => /^(Import|Export)/.test(s.type));
  if (root.type === "ThisExpression") {
    // `this` of the class only: the claim sits directly in a method, not in a nested `function`.
    const method = fn.parent;
    if (fn.type !== "FunctionExpression" || method?.type !== "MethodDefinition" || method.static) return undefined;
    let own: Node | undefined = write.client;
    for (; own && own !== fn; own = own.parent)
      if (own.type === "FunctionExpression" || own.type === "FunctionDeclaration") break;
    if (own !== fn) return undefined;
    return { after: method, method: true, exported };
  }
  const variable = findVariable(sourceCode as never, root);
  const scope = variable?.scope.type;
  if (!variable || (scope !== "module" && scope !== "global") || variable.defs.some((d) => d.type === "Parameter"))
    return undefined;
  return { after: top, method: false, exported };
}

/**
 * progress-based-staleness's suggestion: the age test's field, where the test names it as an object key
 * (`createdAt: { lt: threshold }`) or as a query builder's column argument (`.where("started_at", "<", cutoff)`),
 * renamed to the progress timestamp the module keeps moving. Undefined where the field is not written so (a SQL
 * string, a computed key).
 */
export function renameTimeField(
  sourceCode: SourceCode,
  node: Node,
  field: string,
  replacement: string,
): TextEdit | undefined {
  const found = findBelow(
    node,
    (n) =>
      (n.type === "Property" &&
        !n.computed &&
        ((n.key.type === "Identifier" && n.key.name === field) ||
          (n.key.type === "Literal" && n.key.value === field))) ||
      (n.type === "Literal" && n.value === field && n.parent?.type === "CallExpression" && n.parent.arguments[0] === n),
  ) as TSESTree.Property | TSESTree.Literal | undefined;
  if (!found) return undefined;
  if (found.type === "Literal") {
    const quote = found.raw.startsWith("'") ? "'" : '"';
    return { range: [found.range[0], found.range[1]], text: `${quote}${replacement}${quote}` };
  }
  if (found.shorthand) return undefined;
  const key = found.key;
  const text = key.type === "Literal" ? JSON.stringify(replacement) : propertyKey(replacement);
  return { range: [key.range[0], key.range[1]], text };
}
