// AST of go-bexpr filter expressions (hashicorp/go-bexpr grammar/ast.go), the language
// Nomad's `filter` query parameter uses (spec: "Filter expressions").

export type MatchOperator =
  | 'Equal'
  | 'NotEqual'
  | 'In'
  | 'NotIn'
  | 'IsEmpty'
  | 'IsNotEmpty'
  | 'Matches'
  | 'NotMatches'
  | 'IsNil'
  | 'IsNotNil';

export interface Selector {
  type: 'bexpr' | 'jsonpointer';
  path: string[];
}

export interface MatchValue {
  raw: string;
}

export interface MatchExpression {
  kind: 'match';
  selector: Selector;
  operator: MatchOperator;
  value: MatchValue | null;
}

export interface UnaryExpression {
  kind: 'not';
  operand: Expression;
}

export interface BinaryExpression {
  kind: 'and' | 'or';
  left: Expression;
  right: Expression;
}

export type CollectionBindMode = 'Default' | 'Index' | 'Value' | 'IndexAndValue';

export interface CollectionNameBinding {
  mode: CollectionBindMode;
  default: string;
  index: string;
  value: string;
}

export interface CollectionExpression {
  kind: 'collection';
  op: 'ANY' | 'ALL';
  selector: Selector;
  binding: CollectionNameBinding;
  inner: Expression;
}

export type Expression = MatchExpression | UnaryExpression | BinaryExpression | CollectionExpression;

/** A parse or evaluation failure, carrying go-bexpr's message verbatim. */
export class BexprError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BexprError';
  }
}

/** Selector.String() of go-bexpr: dotted for bexpr selectors, slash-joined for JSON pointers. */
export function selectorString(sel: Selector): string {
  if (sel.path.length === 0) return '';
  return sel.type === 'bexpr' ? sel.path.join('.') : sel.path.join('/');
}
