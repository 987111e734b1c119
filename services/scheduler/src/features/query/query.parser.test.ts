import { BadRequestError } from '@selfstack/errors';
import { parseGoDuration, parseQueryOptions, requestToken } from './query.parser';
import { DEFAULT_WAIT_MS, MAX_WAIT_MS } from './query.types';

const parse = (query: Record<string, unknown>, headers: Record<string, string> = {}) => parseQueryOptions(query, headers, { region: 'global' });

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(BadRequestError);
    return (e as Error).message;
  }
  throw new Error('no error');
}

describe('parseQueryOptions', () => {
  it('applies the defaults', () => {
    expect(parse({})).toEqual({
      region: 'global',
      namespace: 'default',
      allNamespaces: false,
      minIndex: 0,
      waitMs: DEFAULT_WAIT_MS,
      stale: false,
      pretty: false,
      prefix: '',
      filter: '',
      perPage: 0,
      nextToken: '',
      reverse: false,
    });
  });

  it('parses wait as a Go duration, capped at 10 minutes', () => {
    expect(parse({ wait: '10s' }).waitMs).toBe(10_000);
    expect(parse({ wait: '1m30s' }).waitMs).toBe(90_000);
    expect(parse({ wait: '300000ms' }).waitMs).toBe(300_000);
    expect(parse({ wait: '1h' }).waitMs).toBe(MAX_WAIT_MS);
    expect(errorOf(() => parse({ wait: '10' }))).toBe('Invalid wait time');
    expect(errorOf(() => parse({ wait: 'soon' }))).toBe('Invalid wait time');
  });

  it('validates index, stale, per_page; reads pretty, reverse, namespace', () => {
    expect(parse({ index: '42' }).minIndex).toBe(42);
    expect(errorOf(() => parse({ index: '-1' }))).toBe('Invalid index');
    expect(parse({ stale: '' }).stale).toBe(true);
    expect(parse({ stale: 'true' }).stale).toBe(true);
    expect(parse({ stale: 'false' }).stale).toBe(false);
    expect(errorOf(() => parse({ stale: 'yes' }))).toBe('Expect `true` or `false` for `stale` query string parameter');
    expect(parse({ per_page: '25' }).perPage).toBe(25);
    expect(errorOf(() => parse({ per_page: 'ten' }))).toBe('Expect a number for `per_page` query string parameter');
    expect(parse({ pretty: '' }).pretty).toBe(true);
    expect(parse({ pretty: '0' }).pretty).toBe(false);
    expect(parse({ reverse: 'true' }).reverse).toBe(true);
    expect(parse({ reverse: '1' }).reverse).toBe(false);
    expect(parse({ namespace: '*' })).toMatchObject({ namespace: '*', allNamespaces: true });
    expect(parse({}, { 'x-nomad-namespace': 'prod' }).namespace).toBe('prod');
    expect(parse({ region: 'eu' }).region).toBe('eu');
  });

  it('parses durations like Go', () => {
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('')).toBeNaN();
  });
});

describe('requestToken', () => {
  it('prefers X-Scheduler-Token, then X-Nomad-Token, then a Bearer token', () => {
    expect(requestToken({ 'x-scheduler-token': ' a ', 'x-nomad-token': 'b' })).toBe('a');
    expect(requestToken({ 'x-nomad-token': 'b', authorization: 'Bearer c' })).toBe('b');
    expect(requestToken({ authorization: 'bearer c' })).toBe('c');
    expect(requestToken({ authorization: 'Basic c' })).toBe('');
    expect(requestToken({})).toBe('');
  });
});
