/**
 * DynamoDB's expression languages, parsed: condition expressions (`ConditionExpression`, `FilterExpression`,
 * `KeyConditionExpression`) and update expressions (`UpdateExpression`), as AWS's developer guide gives their grammar
 * ("Condition and filter expressions, operators, and functions"; "Update expressions"). No npm package parses them
 * (docs/stores.md), and a regular expression cannot tell `a = :x OR b < :now` from `NOT (a = :x) AND b < :now`, so
 * this is a small recursive-descent parser: a tokenizer, then one function per grammar rule. It knows nothing of the
 * model; `params.ts` maps its trees onto the model's conditions and assignments.
 *
 * Precedence, loosest first: `OR`, `AND`, `NOT`, then a comparison, `BETWEEN`, `IN` or a function. Keywords are read
 * without case. Anything the grammar does not allow gives `undefined`: an expression nobody can read is not guessed at.
 */

/** A document path (`status`, `#s`, `lease.owner`, `items[0]`): its segments, placeholders (`#s`) left as written. */
export interface PathOperand {
  readonly kind: "path";
  readonly segments: readonly string[];
}

/** A value placeholder (`:now`), named in `ExpressionAttributeValues`. */
export interface ValueOperand {
  readonly kind: "value";
  readonly name: string;
}

/** A function used as an operand: `size(path)`, and in updates `if_not_exists(path, v)`, `list_append(a, b)`. */
export interface CallOperand {
  readonly kind: "call";
  readonly name: string;
  readonly args: readonly Operand[];
}

/** `a + b`, `a - b` (update expressions only). */
export interface ArithmeticOperand {
  readonly kind: "arithmetic";
  readonly op: "+" | "-";
  readonly left: Operand;
  readonly right: Operand;
}

export type Operand = PathOperand | ValueOperand | CallOperand | ArithmeticOperand;

export type Comparator = "=" | "<>" | "<" | "<=" | ">" | ">=";

export type ConditionTree =
  | { readonly kind: "and" | "or"; readonly items: readonly ConditionTree[] }
  | { readonly kind: "not"; readonly item: ConditionTree }
  | { readonly kind: "compare"; readonly op: Comparator; readonly left: Operand; readonly right: Operand }
  | { readonly kind: "between"; readonly operand: Operand; readonly low: Operand; readonly high: Operand }
  | { readonly kind: "in"; readonly operand: Operand; readonly list: readonly Operand[] }
  /** `attribute_exists(p)`, `attribute_not_exists(p)`, `begins_with(p, v)`, `contains(p, v)`, `attribute_type(p, t)`. */
  | { readonly kind: "function"; readonly name: string; readonly args: readonly Operand[] };

/** One action of an update expression: `SET p = v`, `REMOVE p`, `ADD p v`, `DELETE p v`. */
export interface UpdateAction {
  readonly clause: "SET" | "REMOVE" | "ADD" | "DELETE";
  readonly path: PathOperand;
  readonly value?: Operand;
}

type Token =
  | { readonly t: "name"; readonly v: string }
  | { readonly t: "placeholder"; readonly v: string }
  | { readonly t: "value"; readonly v: string }
  | { readonly t: "number"; readonly v: string }
  | { readonly t: "punct"; readonly v: string };

const PUNCT = ["<>", "<=", ">=", "=", "<", ">", "(", ")", "[", "]", ",", ".", "+", "-"];

function tokenize(text: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const word = /^[#:]?[A-Za-z_]\w*/.exec(text.slice(i));
    if (word) {
      const v = word[0];
      out.push({ t: v.startsWith("#") ? "placeholder" : v.startsWith(":") ? "value" : "name", v });
      i += v.length;
      continue;
    }
    const num = /^\d+/.exec(text.slice(i));
    if (num) {
      out.push({ t: "number", v: num[0] });
      i += num[0].length;
      continue;
    }
    const p = PUNCT.find((s) => text.startsWith(s, i));
    if (!p) return undefined;
    out.push({ t: "punct", v: p });
    i += p.length;
  }
  return out;
}

class ParseFailure extends Error {}

/** A cursor over the tokens; every `expect` that fails throws, and the entry points turn that into `undefined`. */
class Parser {
  private at = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  done(): boolean {
    return this.at >= this.tokens.length;
  }
  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }
  isKeyword(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.t === "name" && t.v.toUpperCase() === word;
  }
  isPunct(p: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t?.t === "punct" && t.v === p;
  }
  next(): Token {
    const t = this.tokens[this.at++];
    if (!t) throw new ParseFailure();
    return t;
  }
  expectPunct(p: string): void {
    if (!this.isPunct(p)) throw new ParseFailure();
    this.at++;
  }
  expectKeyword(word: string): void {
    if (!this.isKeyword(word)) throw new ParseFailure();
    this.at++;
  }

  // condition ::= conjunction (OR conjunction)*;  conjunction ::= negation (AND negation)*
  condition(): ConditionTree {
    return this.joined("or", () => this.conjunction());
  }
  conjunction(): ConditionTree {
    return this.joined("and", () => this.negation());
  }
  /** One or more `next` joined by the keyword `kind`: a single one is itself. */
  joined(kind: "and" | "or", next: () => ConditionTree): ConditionTree {
    const items = [next()];
    while (this.isKeyword(kind.toUpperCase())) {
      this.at++;
      items.push(next());
    }
    return items.length === 1 ? items[0]! : { kind, items };
  }
  negation(): ConditionTree {
    if (this.isKeyword("NOT")) {
      this.at++;
      return { kind: "not", item: this.negation() };
    }
    return this.primary();
  }
  primary(): ConditionTree {
    if (this.isPunct("(")) {
      this.at++;
      const inner = this.condition();
      this.expectPunct(")");
      return inner;
    }
    const t = this.peek();
    // A function used as a condition: `attribute_not_exists(#lock)`. `size(p)` is an operand, compared below.
    if (t?.t === "name" && this.isPunct("(", 1) && t.v !== "size") {
      const call = this.call();
      return { kind: "function", name: call.name, args: call.args };
    }
    const left = this.operand();
    if (this.isKeyword("BETWEEN")) {
      this.at++;
      const low = this.operand();
      this.expectKeyword("AND");
      return { kind: "between", operand: left, low, high: this.operand() };
    }
    if (this.isKeyword("IN")) {
      this.at++;
      this.expectPunct("(");
      const list = [this.operand()];
      while (this.isPunct(",")) {
        this.at++;
        list.push(this.operand());
      }
      this.expectPunct(")");
      return { kind: "in", operand: left, list };
    }
    const op = this.next();
    if (op.t !== "punct" || !["=", "<>", "<", "<=", ">", ">="].includes(op.v)) throw new ParseFailure();
    return { kind: "compare", op: op.v as Comparator, left, right: this.operand() };
  }

  call(): CallOperand {
    const name = this.next().v;
    this.expectPunct("(");
    const args: Operand[] = [];
    if (!this.isPunct(")")) {
      args.push(this.value());
      while (this.isPunct(",")) {
        this.at++;
        args.push(this.value());
      }
    }
    this.expectPunct(")");
    return { kind: "call", name, args };
  }

  /** A path, a value placeholder or a function call. */
  operand(): Operand {
    const t = this.peek();
    if (!t) throw new ParseFailure();
    if (t.t === "value") {
      this.at++;
      return { kind: "value", name: t.v };
    }
    if (t.t === "name" && this.isPunct("(", 1)) return this.call();
    return this.path();
  }

  /** An update's value: an operand, or two joined by `+` / `-`. */
  value(): Operand {
    const left = this.operand();
    if (this.isPunct("+") || this.isPunct("-")) {
      const op = this.next().v as "+" | "-";
      return { kind: "arithmetic", op, left, right: this.operand() };
    }
    return left;
  }

  // path ::= segment ( '.' segment | '[' n ']' )*
  path(): PathOperand {
    const first = this.next();
    if (first.t !== "name" && first.t !== "placeholder") throw new ParseFailure();
    const segments = [first.v];
    for (;;) {
      if (this.isPunct(".")) {
        this.at++;
        const s = this.next();
        if (s.t !== "name" && s.t !== "placeholder") throw new ParseFailure();
        segments.push(s.v);
      } else if (this.isPunct("[")) {
        this.at++;
        if (this.next().t !== "number") throw new ParseFailure();
        this.expectPunct("]");
      } else break;
    }
    return { kind: "path", segments };
  }

  // update ::= clause+ ; clause ::= SET action (, action)* | REMOVE path (, path)* | ADD|DELETE path value (, …)*
  update(): UpdateAction[] {
    const out: UpdateAction[] = [];
    while (!this.done()) {
      const word = this.next();
      const clause = word.t === "name" ? word.v.toUpperCase() : "";
      if (clause !== "SET" && clause !== "REMOVE" && clause !== "ADD" && clause !== "DELETE") throw new ParseFailure();
      do {
        if (this.isPunct(",")) this.at++;
        const path = this.path();
        if (clause === "SET") {
          this.expectPunct("=");
          out.push({ clause, path, value: this.value() });
        } else if (clause === "REMOVE") out.push({ clause, path });
        else out.push({ clause, path, value: this.operand() });
      } while (this.isPunct(","));
    }
    return out;
  }
}

function run<T>(text: string, parse: (p: Parser) => T): T | undefined {
  const tokens = tokenize(text);
  if (!tokens || tokens.length === 0) return undefined;
  const parser = new Parser(tokens);
  try {
    const out = parse(parser);
    return parser.done() ? out : undefined;
  } catch (e) {
    if (e instanceof ParseFailure) return undefined;
    throw e;
  }
}

/** A condition, filter or key-condition expression; undefined when it is not one. */
export function parseCondition(text: string): ConditionTree | undefined {
  return run(text, (p) => p.condition());
}

/** An update expression's actions, in order; undefined when it is not one. */
export function parseUpdate(text: string): UpdateAction[] | undefined {
  return run(text, (p) => p.update());
}
