/**
 * The clock, one notion for every store: a JavaScript reading of it (`new Date()`, `Date.now()`, through consts), and
 * the database's, spelled as SQL that a query builder splices into a statement (`sql\`now()\``, `knex.fn.now()`,
 * `Sequelize.fn("NOW")`, `sequelize.literal("CURRENT_TIMESTAMP")`, `eb.fn("now")`, TypeORM's `() => "NOW()"`), read by
 * the SQL parser's own notion (`isSqlClock`), so that a fragment is a clock in every store exactly when the same SQL
 * is one in a raw statement.
 */
import type { TSESLint, TSESTree } from "@typescript-eslint/utils";
import type { Node } from "../model/accesses.js";
import { isSqlClock } from "../languages/sql/values.js";
import { evaluate, getConstInit, keyName, unwrap } from "./values.js";
import { expressionName } from "./ast.js";

type SourceCode = Readonly<TSESLint.SourceCode>;

/**
 * The clock as a value: a reading here or through consts (`const now = new Date()`), or its epoch milliseconds
 * (`new Date().getTime()`).
 */
export function readsClock(sourceCode: SourceCode, node: Node, depth = 0): boolean {
  const n = unwrap(node);
  if (isClockReading(n)) return true;
  if (
    n.type === "CallExpression" &&
    n.callee.type === "MemberExpression" &&
    !n.callee.computed &&
    n.callee.property.type === "Identifier" &&
    n.callee.property.name === "getTime"
  )
    return readsClock(sourceCode, n.callee.object, depth);
  if (n.type === "Identifier" && depth < 3) {
    const init = getConstInit(sourceCode, n);
    return init !== undefined && init.type !== "TSEnumDeclaration" && readsClock(sourceCode, init, depth + 1);
  }
  return false;
}

/**
 * The clock read now, bare or through a const (`Date.now()`, `new Date()`, `performance.now()`, `const startTime =
 * Date.now()`): not an instant made from a value (`new Date(lockedAt)`), which `isClockReading` also accepts.
 */
export function readsClockNow(sourceCode: SourceCode, node: Node, depth = 0): boolean {
  const n = unwrap(node);
  if (n.type === "NewExpression") return isClockReading(n) && n.arguments.length === 0;
  if (n.type === "CallExpression") {
    const c = n.callee;
    if (c.type === "Identifier") return isClockReading(n);
    // `Date.now()`, `performance.now()`, `new Date().getTime()` (not `new Date(lockedAt).getTime()`).
    return (
      c.type === "MemberExpression" &&
      !c.computed &&
      c.property.type === "Identifier" &&
      ((c.property.name === "now" && unwrap(c.object).type === "Identifier") ||
        (/^(getTime|valueOf)$/.test(c.property.name) && readsClockNow(sourceCode, c.object, depth)))
    );
  }
  if (n.type === "Identifier" && depth < 2) {
    const init = getConstInit(sourceCode, n);
    return init !== undefined && init.type !== "TSEnumDeclaration" && readsClockNow(sourceCode, init, depth + 1);
  }
  return false;
}

export function isClockReading(node: Node): boolean {
  const n = unwrap(node);
  if (n.type === "NewExpression" && n.callee.type === "Identifier" && n.callee.name === "Date") {
    // `new Date(0)`, `new Date("2000-01-01")`: a fixed instant, not the clock.
    const [first] = n.arguments;
    return !(
      n.arguments.length === 1 &&
      first?.type === "Literal" &&
      (typeof first.value === "number" || typeof first.value === "string")
    );
  }
  if (n.type === "CallExpression") {
    const c = n.callee;
    if (
      c.type === "MemberExpression" &&
      c.object.type === "Identifier" &&
      c.object.name === "Date" &&
      !c.computed &&
      c.property.type === "Identifier" &&
      c.property.name === "now"
    )
      return true;
    if (c.type === "Identifier" && /^(now|currentTime|getNow)$/i.test(c.name)) return true;
    // A time class's own clock: `Timestamp.now()` (Firestore), `DateTime.now()` (Luxon), `admin.firestore.Timestamp.now()`;
    // and a date library called with nothing, `moment()`, `dayjs()`.
    if (n.arguments.length === 0 && c.type === "MemberExpression" && expressionName(c) === "now") {
      const ownerName = expressionName(unwrap(c.object));
      if (ownerName !== undefined && /^[A-Z][a-z]\w*$/.test(ownerName)) return true;
    }
    if (n.arguments.length === 0 && c.type === "Identifier" && /^(moment|dayjs)$/.test(c.name)) return true;
    // `new Date().getTime()`, `new Date().valueOf()`: Date.now() spelled longer.
    if (
      c.type === "MemberExpression" &&
      !c.computed &&
      c.property.type === "Identifier" &&
      /^(getTime|valueOf)$/.test(c.property.name) &&
      n.arguments.length === 0 &&
      unwrap(c.object).type === "NewExpression" &&
      isClockReading(c.object)
    )
      return true;
  }
  return false;
}

/**
 * `new Date(Date.now() + ttl)`, itself or as the `const` it is read from: an instant ahead of the clock (an expiry),
 * where `isClockReading` sees a reading of it.
 */
/**
 * An instant or an epoch number ahead of the clock: `readsClockAhead`'s dates, and a sum with a clock reading
 * (`Date.now() + ttl`, `Math.floor(Date.now() / 1000) + 86_400`).
 */
export function readsTimeAhead(sourceCode: SourceCode, node: Node): boolean {
  if (readsClockAhead(sourceCode, node)) return true;
  const n = unwrap(node);
  return (
    n.type === "BinaryExpression" &&
    n.operator === "+" &&
    (readsClock(sourceCode, n.left as Node) || readsClock(sourceCode, n.right as Node))
  );
}

export function readsClockAhead(sourceCode: SourceCode, node: Node): boolean {
  let n = unwrap(node);
  if (n.type === "Identifier") {
    const init = getConstInit(sourceCode, n);
    if (!init) return false;
    n = unwrap(init);
  }
  if (n.type !== "NewExpression" || n.arguments.length !== 1) return false;
  const arg = unwrap(n.arguments[0] as Node);
  return (
    arg.type === "BinaryExpression" &&
    arg.operator === "+" &&
    (isClockReading(arg.left as Node) || isClockReading(arg.right as Node))
  );
}

/** A tag that marks SQL (`sql\`…\``, `Prisma.sql\`…\``, `db.sql\`…\``). */
function isSqlTag(tag: Node): boolean {
  const t = unwrap(tag);
  if (t.type === "Identifier") return t.name === "sql";
  return t.type === "MemberExpression" && keyName(t.property, t.computed) === "sql";
}

/**
 * The SQL text a JavaScript value splices into a statement, when it is static: a `sql` template without holes, the
 * string given to `raw(…)` or `literal(…)`, `fn("now")` (a function called by name, Kysely's `eb.fn`, Sequelize's
 * `fn`), `x.fn.now()` (Knex), a function returning a string (TypeORM's `() => "NOW()"`).
 */
export function sqlFragment(sourceCode: SourceCode, node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type === "TaggedTemplateExpression") {
    if (!isSqlTag(n.tag) || n.quasi.expressions.length > 0) return undefined;
    return n.quasi.quasis.map((q) => q.value.cooked ?? q.value.raw).join("");
  }
  if (n.type === "ArrowFunctionExpression" || n.type === "FunctionExpression") {
    let body: Node | undefined = n.body;
    if (body.type === "BlockStatement") {
      const only = body.body.length === 1 ? body.body[0] : undefined;
      body = only?.type === "ReturnStatement" && only.argument ? only.argument : undefined;
    }
    const v = n.params.length === 0 && body ? evaluate(sourceCode, body) : undefined;
    return typeof v?.value === "string" ? v.value : undefined;
  }
  if (n.type !== "CallExpression") return undefined;
  const callee = unwrap(n.callee);
  const name = expressionName(callee);
  const arg = n.arguments[0];
  const first = arg && arg.type !== "SpreadElement" ? evaluate(sourceCode, arg)?.value : undefined;
  if ((name === "raw" || name === "literal") && n.arguments.length === 1 && typeof first === "string") return first;
  if (name === "fn" && typeof first === "string" && n.arguments.length <= 2 && /^\w+$/.test(first)) return `${first}()`;
  if (name === "now" && callee.type === "MemberExpression") {
    const object = unwrap(callee.object);
    if (object.type === "MemberExpression" && keyName(object.property, object.computed) === "fn") return "now()";
  }
  return undefined;
}

/**
 * A value that is the clock when the statement runs: a JavaScript reading of it (also as an ISO string,
 * `new Date().toISOString()`), SQL that reads the database's clock, or a document database's server timestamp.
 */
export function isClockValue(sourceCode: SourceCode, node: Node, depth = 0): boolean {
  let n = unwrap(node);
  // `const now = new Date().toISOString()`, stored as `acquired_at: now`.
  if (n.type === "Identifier" && depth < 2) {
    const init = getConstInit(sourceCode, n);
    if (init && init.type !== "TSEnumDeclaration" && isClockValue(sourceCode, init, depth + 1)) return true;
  }
  if (
    n.type === "CallExpression" &&
    n.callee.type === "MemberExpression" &&
    keyName(n.callee.property, n.callee.computed) === "toISOString"
  )
    n = unwrap(n.callee.object);
  if (readsClock(sourceCode, n)) return true;
  // An instant in milliseconds ahead of the clock or behind it by a term (`Date.now() + LEASE_MS`, `now + ttl *
  // 1000`, `Date.now() - 60_000`): an expiry or a cutoff kept as a number. Not the difference of two instants
  // (`Date.now() - startedAt`, a duration): what is subtracted must be a number known here.
  // The term must read as a number (`LEASE_MS`, `ttl * 1000`, `5 * 60_000`), not text: `"w-" + Date.now()` and
  // `workerId + Date.now()` make a token, not an instant.
  if (n.type === "BinaryExpression" && (n.operator === "+" || n.operator === "-") && depth < 2) {
    const left = n.left as Node;
    const right = n.right as Node;
    if (n.operator === "+" && readsClockNow(sourceCode, right) && numericTerm(sourceCode, left)) return true;
    if (readsClockNow(sourceCode, left) && !readsClockNow(sourceCode, right))
      return n.operator === "+"
        ? numericTerm(sourceCode, right)
        : typeof evaluate(sourceCode, right)?.value === "number";
  }
  // A document database's stamp of its own clock, `FieldValue.serverTimestamp()` or `serverTimestamp()`.
  if (n.type === "CallExpression" && n.arguments.length === 0) {
    const c = unwrap(n.callee);
    const name =
      c.type === "Identifier" ? c.name : c.type === "MemberExpression" ? keyName(c.property, c.computed) : undefined;
    if (name === "serverTimestamp") return true;
  }
  const sql = sqlFragment(sourceCode, n);
  return sql !== undefined && isSqlClock(sql);
}

/** A TTL's name: what a number of milliseconds or seconds is called (`LEASE_MS`, `ttlSeconds`, `timeout`). */
const DURATION_NAME =
  /(?:ms|millis|seconds?|secs?|minutes?|mins?|hours?|days?|ttl|timeout|duration|lease|interval|delay|period|window|expiry|expiration|grace|offset)$/i;

/** A term that reads as a number: a number known here, arithmetic, or a name a duration goes by. */
function numericTerm(sourceCode: SourceCode, node: Node): boolean {
  const n = unwrap(node);
  if (typeof evaluate(sourceCode, n)?.value === "number") return true;
  if (n.type === "BinaryExpression" && ["*", "/", "%", "-"].includes(n.operator)) return true;
  const name =
    n.type === "Identifier" ? n.name : n.type === "MemberExpression" ? keyName(n.property, n.computed) : undefined;
  return name !== undefined && DURATION_NAME.test(name);
}

/** A template with a `sql` tag, holes or not: SQL, whose value is known only to the database. */
export function isSqlTemplate(node: Node): node is TSESTree.TaggedTemplateExpression {
  const n = unwrap(node);
  return n.type === "TaggedTemplateExpression" && isSqlTag(n.tag);
}
