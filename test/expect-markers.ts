// The `// expect:` markers the fixtures carry, read one way for every test that checks them:
//   // expect: rule-a, rule-b (suggestionId, …)
// on a line: rules a and b report that line (ids without `locks/`), and b's finding offers those suggestions.

export interface Expectation {
  readonly rule: string;
  readonly line: number;
  /** Named after the rule in parentheses: the finding offers exactly these suggestions. */
  readonly suggestions?: readonly string[];
}

const MARKER = /\/\/ expect: ([\w-]+(?: \([\w, ]+\))?(?:, [\w-]+(?: \([\w, ]+\))?)*)\s*$/;

/** Every expectation in `text`, rules as `locks/<id>`. */
export function expectMarkers(text: string): Expectation[] {
  const out: Expectation[] = [];
  text.split("\n").forEach((line, i) => {
    const m = MARKER.exec(line);
    if (!m) return;
    for (const [, rule, suggested] of m[1]!.matchAll(/([\w-]+)(?: \(([\w, ]+)\))?/g)) {
      out.push({ rule: `locks/${rule}`, line: i + 1, ...(suggested ? { suggestions: suggested.split(", ") } : {}) });
    }
  });
  return out;
}

/** Lines that look like a marker (`// expect …`) but do not read as one: a typo there must fail, not be skipped. */
export function unreadableMarkers(text: string): number[] {
  const out: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (/\/\/\s*expects?\b/i.test(line) && !MARKER.test(line)) out.push(i + 1);
  });
  return out;
}
