// go-bexpr grammar (hashicorp/go-bexpr grammar/grammar.peg) run by a small PEG interpreter
// that reproduces the pigeon-generated parser's behaviour, including its error reporting
// (farthest failure position, sorted expected set, `rule "<display name>"` prefixes), so
// that a bad `filter` answers with the same text Nomad does (reference §7).
import { goQuote, goUnquote } from './go-strconv';
import {
  BexprError,
  type CollectionNameBinding,
  type Expression,
  type MatchOperator,
  type MatchValue,
  type Selector,
  selectorString,
} from './bexpr.types';

type Scope = Record<string, unknown>;

interface Ctx {
  text: string;
  scope: Scope;
}

type Node =
  | { t: 'seq'; items: Node[] }
  | { t: 'choice'; alts: Node[] }
  | { t: 'action'; expr: Node; run: (c: Ctx) => unknown }
  | { t: 'label'; label: string; expr: Node }
  | { t: 'lit'; val: string; want: string }
  | { t: 'cls'; val: string; test: (ch: string) => boolean }
  | { t: 'any' }
  | { t: 'not'; expr: Node }
  | { t: 'and'; expr: Node }
  | { t: 'andCode'; run: () => string | null }
  | { t: 'opt'; expr: Node }
  | { t: 'star'; expr: Node }
  | { t: 'plus'; expr: Node }
  | { t: 'ref'; name: string };

interface Rule {
  name: string;
  displayName: string;
  expr: Node;
}

const seq = (...items: Node[]): Node => ({ t: 'seq', items });
const choice = (...alts: Node[]): Node => ({ t: 'choice', alts });
const act = (expr: Node, run: (c: Ctx) => unknown): Node => ({ t: 'action', expr, run });
const lab = (label: string, expr: Node): Node => ({ t: 'label', label, expr });
const lit = (val: string): Node => ({ t: 'lit', val, want: goQuote(val) });
const cls = (val: string, test: (ch: string) => boolean): Node => ({ t: 'cls', val, test });
const ANY: Node = { t: 'any' };
const not = (expr: Node): Node => ({ t: 'not', expr });
const and = (expr: Node): Node => ({ t: 'and', expr });
const fail = (message: string): Node => ({ t: 'andCode', run: () => message });
const opt = (expr: Node): Node => ({ t: 'opt', expr });
const star = (expr: Node): Node => ({ t: 'star', expr });
const plus = (expr: Node): Node => ({ t: 'plus', expr });
const ref = (name: string): Node => ({ t: 'ref', name });

const WS = ref('_');
const OWS = opt(WS);

const matchOp = (op: MatchOperator, ...items: Node[]): Node => act(seq(...items), () => op);

function binding(mode: CollectionNameBinding['mode'], d: string, i: string, v: string): CollectionNameBinding {
  return { mode, default: d, index: i, value: v };
}

const RULES: Rule[] = [
  {
    name: 'Input',
    displayName: '',
    expr: choice(
      act(seq(OWS, lit('('), OWS, lab('expr', ref('OrExpression')), OWS, lit(')'), OWS, ref('EOF')), (c) => c.scope['expr']),
      act(seq(OWS, lab('expr', ref('OrExpression')), OWS, ref('EOF')), (c) => c.scope['expr']),
    ),
  },
  {
    name: 'OrExpression',
    displayName: '',
    expr: choice(
      act(seq(lab('left', ref('AndExpression')), WS, lit('or'), WS, lab('right', ref('OrExpression'))), (c) => ({
        kind: 'or',
        left: c.scope['left'] as Expression,
        right: c.scope['right'] as Expression,
      })),
      act(lab('expr', ref('AndExpression')), (c) => c.scope['expr']),
      act(lab('expr', ref('CollectionExpression')), (c) => c.scope['expr']),
    ),
  },
  {
    name: 'AndExpression',
    displayName: '',
    expr: choice(
      act(seq(lab('left', ref('NotExpression')), WS, lit('and'), WS, lab('right', ref('AndExpression'))), (c) => ({
        kind: 'and',
        left: c.scope['left'] as Expression,
        right: c.scope['right'] as Expression,
      })),
      act(lab('expr', ref('NotExpression')), (c) => c.scope['expr']),
    ),
  },
  {
    name: 'NotExpression',
    displayName: '',
    expr: choice(
      act(seq(lit('not'), WS, lab('expr', ref('NotExpression'))), (c) => {
        const e = c.scope['expr'] as Expression;
        // go-bexpr collapses `not not x` into `x`.
        if (e && e.kind === 'not') return e.operand;
        return { kind: 'not', operand: e };
      }),
      act(lab('expr', ref('ParenthesizedExpression')), (c) => c.scope['expr']),
    ),
  },
  {
    name: 'CollectionExpression',
    displayName: '',
    expr: act(
      seq(
        lab('op', choice(ref('CollectionOpAny'), ref('CollectionOpAll'))),
        lab('selector', ref('Selector')),
        WS,
        lit('as'),
        WS,
        lab('binding', ref('CollectionIdentifiers')),
        OWS,
        lit('{'),
        OWS,
        lab('expr', ref('OrExpression')),
        OWS,
        lit('}'),
      ),
      (c) => ({
        kind: 'collection',
        op: c.scope['op'] as 'ANY' | 'ALL',
        selector: c.scope['selector'] as Selector,
        binding: c.scope['binding'] as CollectionNameBinding,
        inner: c.scope['expr'] as Expression,
      }),
    ),
  },
  {
    name: 'CollectionIdentifiers',
    displayName: '"collection-identifiers"',
    expr: choice(
      act(seq(lab('id1', ref('Identifier')), OWS, lit(','), OWS, lab('id2', ref('Identifier'))), (c) =>
        binding('IndexAndValue', '', c.scope['id1'] as string, c.scope['id2'] as string),
      ),
      act(seq(lab('id1', ref('Identifier')), OWS, lit(','), OWS, lit('_')), (c) =>
        binding('Index', '', c.scope['id1'] as string, ''),
      ),
      act(seq(lit('_'), OWS, lit(','), OWS, lab('id2', ref('Identifier'))), (c) =>
        binding('Value', '', '', c.scope['id2'] as string),
      ),
      act(lab('id', ref('Identifier')), (c) => binding('Default', c.scope['id'] as string, '', '')),
    ),
  },
  { name: 'CollectionOpAny', displayName: '', expr: act(seq(lit('any'), WS), () => 'ANY') },
  { name: 'CollectionOpAll', displayName: '', expr: act(seq(lit('all'), WS), () => 'ALL') },
  {
    name: 'ParenthesizedExpression',
    displayName: '"grouping"',
    expr: choice(
      act(seq(lit('('), OWS, lab('expr', ref('OrExpression')), OWS, lit(')')), (c) => c.scope['expr']),
      act(lab('expr', ref('MatchExpression')), (c) => c.scope['expr']),
      seq(lit('('), OWS, ref('OrExpression'), OWS, not(lit(')')), fail('Unmatched parentheses')),
    ),
  },
  {
    name: 'MatchExpression',
    displayName: '"match"',
    expr: choice(ref('MatchSelectorOpValue'), ref('MatchSelectorOp'), ref('MatchValueOpSelector')),
  },
  {
    name: 'MatchSelectorOpValue',
    displayName: '"match"',
    expr: act(
      seq(
        lab('selector', ref('Selector')),
        lab(
          'operator',
          choice(
            ref('MatchEqual'),
            ref('MatchNotEqual'),
            ref('MatchContains'),
            ref('MatchNotContains'),
            ref('MatchMatches'),
            ref('MatchNotMatches'),
          ),
        ),
        lab('value', ref('Value')),
      ),
      (c) => ({
        kind: 'match',
        selector: c.scope['selector'] as Selector,
        operator: c.scope['operator'] as MatchOperator,
        value: c.scope['value'] as MatchValue,
      }),
    ),
  },
  {
    name: 'MatchSelectorOp',
    displayName: '"match"',
    expr: act(
      seq(
        lab('selector', ref('Selector')),
        lab('operator', choice(ref('MatchIsEmpty'), ref('MatchIsNotEmpty'), ref('MatchIsNil'), ref('MatchIsNotNil'))),
      ),
      (c) => ({
        kind: 'match',
        selector: c.scope['selector'] as Selector,
        operator: c.scope['operator'] as MatchOperator,
        value: null,
      }),
    ),
  },
  {
    name: 'MatchValueOpSelector',
    displayName: '"match"',
    expr: choice(
      act(
        seq(lab('value', ref('Value')), lab('operator', choice(ref('MatchIn'), ref('MatchNotIn'))), lab('selector', ref('Selector'))),
        (c) => ({
          kind: 'match',
          selector: c.scope['selector'] as Selector,
          operator: c.scope['operator'] as MatchOperator,
          value: c.scope['value'] as MatchValue,
        }),
      ),
      seq(ref('Value'), lab('operator', choice(ref('MatchIn'), ref('MatchNotIn'))), not(ref('Selector')), fail('Invalid selector')),
    ),
  },
  { name: 'MatchEqual', displayName: '', expr: matchOp('Equal', OWS, lit('=='), OWS) },
  { name: 'MatchNotEqual', displayName: '', expr: matchOp('NotEqual', OWS, lit('!='), OWS) },
  { name: 'MatchIsEmpty', displayName: '', expr: matchOp('IsEmpty', WS, lit('is'), WS, lit('empty')) },
  { name: 'MatchIsNotEmpty', displayName: '', expr: matchOp('IsNotEmpty', WS, lit('is'), WS, lit('not'), WS, lit('empty')) },
  { name: 'MatchIn', displayName: '', expr: matchOp('In', WS, lit('in'), WS) },
  { name: 'MatchNotIn', displayName: '', expr: matchOp('NotIn', WS, lit('not'), WS, lit('in'), WS) },
  { name: 'MatchContains', displayName: '', expr: matchOp('In', WS, lit('contains'), WS) },
  { name: 'MatchNotContains', displayName: '', expr: matchOp('NotIn', WS, lit('not'), WS, lit('contains'), WS) },
  { name: 'MatchMatches', displayName: '', expr: matchOp('Matches', WS, lit('matches'), WS) },
  { name: 'MatchNotMatches', displayName: '', expr: matchOp('NotMatches', WS, lit('not'), WS, lit('matches'), WS) },
  { name: 'MatchIsNil', displayName: '', expr: matchOp('IsNil', WS, lit('is'), WS, lit('nil')) },
  { name: 'MatchIsNotNil', displayName: '', expr: matchOp('IsNotNil', WS, lit('is'), WS, lit('not'), WS, lit('nil')) },
  {
    name: 'Selector',
    displayName: '"selector"',
    expr: choice(
      act(seq(lab('first', ref('Identifier')), lab('rest', star(ref('SelectorOrIndex')))), (c) => ({
        type: 'bexpr',
        path: [c.scope['first'] as string, ...((c.scope['rest'] as string[] | null) ?? [])],
      })),
      act(seq(lit('"'), lab('ptrsegs', star(ref('JsonPointerSegment'))), lit('"')), (c) => {
        const segs = (c.scope['ptrsegs'] as string[] | null) ?? [];
        // pointerstructure.Parse("/" + segs.join("/")): split on "/", then unescape ~1 and ~0.
        const parts = segs
          .join('/')
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
        return { type: 'jsonpointer', path: parts };
      }),
    ),
  },
  {
    name: 'JsonPointerSegment',
    displayName: '',
    expr: act(seq(lit('/'), lab('ident', plus(cls('[\\pL\\pN-_.~:|]', (ch) => /^[\p{L}\p{N}\-_.~:|]$/u.test(ch))))), (c) =>
      c.text.slice(1),
    ),
  },
  {
    name: 'Identifier',
    displayName: '',
    expr: act(seq(cls('[a-zA-Z]', (ch) => /^[a-zA-Z]$/.test(ch)), star(cls('[a-zA-Z0-9_/]', (ch) => /^[a-zA-Z0-9_/]$/.test(ch)))), (c) => c.text),
  },
  {
    name: 'SelectorOrIndex',
    displayName: '',
    expr: choice(
      act(seq(lit('.'), lab('ident', ref('Identifier'))), (c) => c.scope['ident']),
      act(lab('expr', ref('IndexExpression')), (c) => c.scope['expr']),
      act(seq(lit('.'), lab('idx', plus(cls('[0-9]', (ch) => ch >= '0' && ch <= '9')))), (c) => c.text.slice(1)),
    ),
  },
  {
    name: 'IndexExpression',
    displayName: '"index"',
    expr: choice(
      act(seq(lit('['), OWS, lab('lit', ref('StringLiteral')), OWS, lit(']')), (c) => c.scope['lit']),
      seq(lit('['), OWS, not(ref('StringLiteral')), fail('Invalid index')),
      seq(lit('['), OWS, ref('StringLiteral'), OWS, not(lit(']')), fail('Unclosed index expression')),
    ),
  },
  {
    name: 'Value',
    displayName: '"value"',
    expr: choice(
      act(lab('selector', ref('Selector')), (c) => ({ raw: selectorString(c.scope['selector'] as Selector) })),
      act(lab('n', ref('NumberLiteral')), (c) => ({ raw: c.scope['n'] as string })),
      act(lab('s', ref('StringLiteral')), (c) => ({ raw: c.scope['s'] as string })),
    ),
  },
  {
    name: 'NumberLiteral',
    displayName: '"number"',
    expr: choice(
      act(seq(opt(lit('-')), ref('IntegerOrFloat'), and(ref('AfterNumbers'))), (c) => c.text),
      seq(opt(lit('-')), ref('IntegerOrFloat'), not(ref('AfterNumbers')), fail('Invalid number literal')),
    ),
  },
  { name: 'AfterNumbers', displayName: '', expr: and(choice(WS, ref('EOF'), lit(')'))) },
  {
    name: 'IntegerOrFloat',
    displayName: '',
    expr: seq(
      choice(lit('0'), seq(cls('[1-9]', (ch) => ch >= '1' && ch <= '9'), star(cls('[0-9]', (ch) => ch >= '0' && ch <= '9')))),
      opt(seq(lit('.'), plus(cls('[0-9]', (ch) => ch >= '0' && ch <= '9')))),
    ),
  },
  {
    name: 'StringLiteral',
    displayName: '"string"',
    expr: choice(
      act(choice(seq(lit('`'), star(ref('RawStringChar')), lit('`')), seq(lit('"'), star(ref('DoubleStringChar')), lit('"'))), (c) => {
        const v = goUnquote(c.text);
        if (v === null) throw new ActionError('invalid syntax');
        return v;
      }),
      seq(choice(seq(lit('`'), star(ref('RawStringChar'))), seq(lit('"'), star(ref('DoubleStringChar')))), ref('EOF'), fail('Unterminated string literal')),
    ),
  },
  { name: 'RawStringChar', displayName: '', expr: seq(not(lit('`')), ANY) },
  { name: 'DoubleStringChar', displayName: '', expr: seq(not(lit('"')), ANY) },
  { name: '_', displayName: '"whitespace"', expr: plus(cls('[ \\t\\r\\n]', (ch) => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n')) },
  { name: 'EOF', displayName: '', expr: not(ANY) },
];

const RULE_MAP = new Map(RULES.map((r) => [r.name, r]));

class ActionError extends Error {}

interface Pos {
  line: number;
  col: number;
  offset: number;
}

const MAX_EXPRESSIONS = 2_000_000;
/**
 * Rules open at once (each nested `(`, chained `not`, or further `and`/`or` term adds one
 * or more). The interpreter recurses per rule; pigeon's Go parser runs on a growable
 * goroutine stack, ours on V8's fixed one, where about 450 chained `not` overflowed it
 * (issue 29). Past this depth the filter is a parse error (a 400), never a RangeError.
 */
export const MAX_RULE_DEPTH = 200;

class Parser {
  private readonly runes: string[];
  /** positions[k]: pigeon's position while rune k is the current rune (k = length is EOF). */
  private readonly positions: Pos[];
  /** byte offset of rune k in the UTF-8 input (for c.text slicing). */
  private k = 0;
  private maxFailPos: Pos = { line: 1, col: 1, offset: 0 };
  private maxFailExpected: string[] = [];
  private invert = false;
  private readonly errs: string[] = [];
  private readonly rstack: Rule[] = [];
  private exprCount = 0;

  constructor(input: string) {
    this.runes = Array.from(input);
    this.positions = [];
    let line = 1;
    let col = 0;
    let offset = 0;
    let prevWidth = 0;
    for (let i = 0; i <= this.runes.length; i++) {
      offset += prevWidth;
      col++;
      const r = this.runes[i];
      if (r === '\n') {
        line++;
        col = 0;
      }
      this.positions.push({ line, col, offset });
      prevWidth = r === undefined ? 0 : Buffer.byteLength(r, 'utf8');
    }
  }

  private pos(): Pos {
    return this.positions[this.k] as Pos;
  }

  private failAt(failed: boolean, pos: Pos, want: string): void {
    if (failed !== this.invert) return;
    if (pos.offset < this.maxFailPos.offset) return;
    if (pos.offset > this.maxFailPos.offset) {
      this.maxFailPos = pos;
      this.maxFailExpected = [];
    }
    this.maxFailExpected.push(this.invert ? '!' + want : want);
  }

  private addErrAt(message: string, pos: Pos): void {
    let prefix = `${pos.line}:${pos.col} (${pos.offset})`;
    const rule = this.rstack[this.rstack.length - 1];
    if (rule) prefix += ': rule ' + (rule.displayName !== '' ? rule.displayName : rule.name);
    this.errs.push(prefix + ': ' + message);
  }

  run(): Expression {
    const start = RULE_MAP.get('Input') as Rule;
    let result: [unknown, boolean];
    try {
      result = this.rule(start, {});
    } catch (e) {
      if (e instanceof MaxExprError) {
        this.addErrAt('max number of expressions parsed', this.pos());
        result = [null, false];
      } else if (e instanceof MaxDepthError) {
        this.addErrAt(`expression nested deeper than ${MAX_RULE_DEPTH} rules`, this.pos());
        result = [null, false];
      } else throw e;
    }
    const [val, ok] = result;
    if (!ok && this.errs.length === 0) {
      const set = new Set(this.maxFailExpected);
      const eof = set.delete('!.');
      const expected = [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (eof) expected.push('EOF');
      this.rstack.length = 0;
      this.addErrAt('no match found, expected: ' + listJoin(expected), this.maxFailPos);
    }
    if (this.errs.length > 0) {
      throw new BexprError([...new Set(this.errs)].join('\n'));
    }
    return val as Expression;
  }

  private rule(r: Rule, _scope: Scope): [unknown, boolean] {
    if (this.rstack.length >= MAX_RULE_DEPTH) throw new MaxDepthError();
    this.rstack.push(r);
    const res = this.expr(r.expr, {});
    this.rstack.pop();
    return res;
  }

  private expr(n: Node, scope: Scope): [unknown, boolean] {
    if (++this.exprCount > MAX_EXPRESSIONS) throw new MaxExprError();
    switch (n.t) {
      case 'action': {
        const start = this.k;
        const startPos = this.pos();
        const inner: Scope = {};
        const [, ok] = this.expr(n.expr, inner);
        if (!ok) return [null, false];
        const text = this.runes.slice(start, this.k).join('');
        try {
          return [n.run({ text, scope: inner }), true];
        } catch (e) {
          if (e instanceof ActionError) {
            this.addErrAt(e.message, startPos);
            return [text, true];
          }
          throw e;
        }
      }
      case 'andCode': {
        const msg = n.run();
        if (msg !== null) this.addErrAt(msg, this.pos());
        return [null, false];
      }
      case 'and': {
        const save = this.k;
        const [, ok] = this.expr(n.expr, {});
        this.k = save;
        return [null, ok];
      }
      case 'not': {
        const save = this.k;
        this.invert = !this.invert;
        const [, ok] = this.expr(n.expr, {});
        this.invert = !this.invert;
        this.k = save;
        return [null, !ok];
      }
      case 'any': {
        if (this.k >= this.runes.length) {
          this.failAt(false, this.pos(), '.');
          return [null, false];
        }
        const p = this.pos();
        const ch = this.runes[this.k] as string;
        this.k++;
        this.failAt(true, p, '.');
        return [ch, true];
      }
      case 'cls': {
        const p = this.pos();
        const ch = this.runes[this.k];
        if (ch === undefined || !n.test(ch)) {
          this.failAt(false, p, n.val);
          return [null, false];
        }
        this.k++;
        this.failAt(true, p, n.val);
        return [ch, true];
      }
      case 'lit': {
        const start = this.k;
        const p = this.pos();
        for (const want of n.val) {
          if (this.runes[this.k] !== want) {
            this.failAt(false, p, n.want);
            this.k = start;
            return [null, false];
          }
          this.k++;
        }
        this.failAt(true, p, n.want);
        return [n.val, true];
      }
      case 'choice': {
        for (const alt of n.alts) {
          const [v, ok] = this.expr(alt, {});
          if (ok) {
            // Labels set inside the winning alternative's own scope stay there; a labeled
            // choice hands its value up through the label node.
            return [v, true];
          }
        }
        return [null, false];
      }
      case 'label': {
        const [v, ok] = this.expr(n.expr, {});
        if (ok && n.label !== '') scope[n.label] = v;
        return [v, ok];
      }
      case 'seq': {
        const start = this.k;
        const vals: unknown[] = [];
        for (const item of n.items) {
          const [v, ok] = this.expr(item, scope);
          if (!ok) {
            this.k = start;
            return [null, false];
          }
          vals.push(v);
        }
        return [vals, true];
      }
      case 'opt': {
        const [v] = this.expr(n.expr, {});
        return [v, true];
      }
      case 'star':
      case 'plus': {
        const vals: unknown[] = [];
        for (;;) {
          const [v, ok] = this.expr(n.expr, {});
          if (!ok) break;
          vals.push(v);
        }
        if (n.t === 'plus' && vals.length === 0) return [null, false];
        return [vals.length === 0 ? null : vals, true];
      }
      case 'ref':
        return this.rule(RULE_MAP.get(n.name) as Rule, scope);
    }
  }
}

class MaxExprError extends Error {}
class MaxDepthError extends Error {}

function listJoin(list: string[]): string {
  if (list.length === 0) return '';
  if (list.length === 1) return list[0] as string;
  return list.slice(0, -1).join(', ') + ' or ' + list[list.length - 1];
}

/** Parses a go-bexpr expression; throws BexprError with pigeon's message on failure. */
export function parseBexpr(input: string): Expression {
  return new Parser(input).run();
}
