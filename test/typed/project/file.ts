// The file every type-aware RuleTester case is linted as (each case supplies its own text).
export {};
