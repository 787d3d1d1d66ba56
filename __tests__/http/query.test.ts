import type { Request } from 'express';
import { HttpError } from '../../lib/http/errors';
import { queryFlag, queryHas, queryInteger, queryList, queryString } from '../../lib/http/query';

/** A request as a mounted router sees it: `url` relative to the mount point, `originalUrl` whole. */
function req(query: string, extra: Partial<Request> = {}): Request {
  const tail = query === '' ? '' : `?${query}`;
  return { originalUrl: `/debug/vars${tail}`, url: `/vars${tail}`, query: {}, ...extra } as unknown as Request;
}

/** Runs `fn` and answers the HttpError it threw (failing the test when it threw nothing else). */
function httpError(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    return err as HttpError;
  }
  throw new Error('expected an HttpError, nothing was thrown');
}

const RANGE = { min: 1, max: 300 };

describe('queryHas', () => {
  it.each([
    ['a', true],
    ['a=', true],
    ['a=1', true],
    ['a[x]=1', true],
    ['a%5Bx%5D=1', true],
    ['b=1&a', true],
    ['', false],
    ['ab=1', false],
    ['A=1', false],
    ['x=a', false],
    ['b[a]=1', false],
  ])('?%s has "a": %s', (query, expected) => {
    expect(queryHas(req(query), 'a')).toBe(expected);
  });
});

describe('queryString', () => {
  it.each([
    ['a=hello', 'hello'],
    ['a=', ''],
    ['a', ''],
    ['a=%24.items%5B0%5D', '$.items[0]'],
    ['a=x+y', 'x y'],
    ['a=%E2%9C%93', '\u2713'],
    ['a=1=2', '1=2'],
    ['b=1&b=2&a=ok', 'ok'],
  ])('?%s reads %j', (query, expected) => {
    expect(queryString(req(query), 'a')).toBe(expected);
  });

  it.each(['', 'b=1', 'ab=1', 'A=1'])('?%s is absent: undefined', (query) => {
    expect(queryString(req(query), 'a')).toBeUndefined();
  });

  it.each(['a=1&a=2', 'a=1&a=1', 'a&a', 'a[x]=1', 'a[]=1', 'a=1&a[x]=2', 'a%5B0%5D=1'])(
    '?%s is rejected with 400 naming the parameter',
    (query) => {
      const err = httpError(() => queryString(req(query), 'a'));
      expect(err.status).toBe(400);
      expect(err.message).toBe('query parameter "a" must be given once, as a plain string');
    },
  );

  it('reads the raw URL, not req.query (the host query parser must not matter)', () => {
    expect(queryString(req('a=raw', { query: { a: ['parsed', 'by', 'qs'] } } as Partial<Request>), 'a')).toBe('raw');
  });

  it('prefers originalUrl and falls back to url', () => {
    expect(queryString(req('', { originalUrl: '/x?a=original', url: '/y?a=mounted' }), 'a')).toBe('original');
    expect(queryString(req('', { originalUrl: undefined, url: '/y?a=mounted' }), 'a')).toBe('mounted');
  });
});

describe('queryInteger', () => {
  it.each([
    ['n=1', 1],
    ['n=300', 300],
    ['n=30', 30],
    ['n=007', 7],
    ['n=%33%30', 30],
  ])('?%s reads %d', (query, expected) => {
    expect(queryInteger(req(query), 'n', RANGE)).toBe(expected);
  });

  it('answers undefined when absent', () => {
    expect(queryInteger(req('m=5'), 'n', RANGE)).toBeUndefined();
  });

  it.each([
    ['0', 0, 2],
    ['2', 0, 2],
    ['0', 0, 0],
    ['999999999999999', 0, 999_999_999_999_999],
  ])('accepts the boundary %s of [%d, %d]', (text, min, max) => {
    expect(queryInteger(req(`n=${text}`), 'n', { min, max })).toBe(Number(text));
  });

  it.each([
    ['empty', '', '""'],
    ['negative', '-1', '"-1"'],
    ['plus sign (decoded to a space)', '+5', '" 5"'],
    ['encoded plus sign', '%2B5', '"+5"'],
    ['fraction', '1.5', '"1.5"'],
    ['trailing point', '5.', '"5."'],
    ['exponent', '1e3', '"1e3"'],
    ['hex', '0x10', '"0x10"'],
    ['NaN', 'NaN', '"NaN"'],
    ['Infinity', 'Infinity', '"Infinity"'],
    ['word', 'abc', '"abc"'],
    ['leading space', '%201', '" 1"'],
    ['trailing space', '1%20', '"1 "'],
    ['digits then letters', '12abc', '"12abc"'],
    ['non-ASCII digits', '%D9%A3', '"\u0663"'],
    ['16 digits', '1234567890123456', '"1234567890123456"'],
    ['huge, cut to 32 characters and marked', '9'.repeat(40), `"${'9'.repeat(32)}…"`],
  ])('rejects %s with a 400 naming the parameter and range', (_label, text, shown) => {
    const err = httpError(() => queryInteger(req(`n=${text}`), 'n', RANGE));
    expect(err.status).toBe(400);
    expect(err.message).toBe(`query parameter "n" must be an integer from 1 to 300, got ${shown}`);
  });

  it.each([
    ['0', 0],
    ['301', 301],
    ['000', 0],
    ['999999999999999', 999_999_999_999_999],
  ])('rejects out-of-range %s with the parsed value in the message', (text, value) => {
    const err = httpError(() => queryInteger(req(`n=${text}`), 'n', RANGE));
    expect(err.status).toBe(400);
    expect(err.message).toBe(`query parameter "n" must be an integer from 1 to 300, got ${value}`);
  });

  it.each(['n=1&n=2', 'n[0]=1', 'n=5&n[x]=6'])('rejects the repeated or bracketed ?%s as not given once', (query) => {
    const err = httpError(() => queryInteger(req(query), 'n', RANGE));
    expect(err.status).toBe(400);
    expect(err.message).toContain('"n" must be given once');
  });
});

describe('queryFlag', () => {
  it.each([
    ['', false],
    ['other=1', false],
    ['v', true],
    ['v=', true],
    ['v=1', true],
    ['v=true', true],
    ['v=yes', true],
    ['v=0', false],
    ['v=false', false],
    ['v=0&v=1', true],
    ['v=1&v=0', false],
  ])('?%s: %s', (query, expected) => {
    expect(queryFlag(req(query), 'v')).toBe(expected);
  });
});

describe('queryList', () => {
  it.each([
    ['', []],
    ['x=a', ['a']],
    ['x=a&x=b&y=c&x=', ['a', 'b', '']],
    ['x=a%2Cb', ['a,b']],
  ])('?%s lists %j', (query, expected) => {
    expect(queryList(req(query), 'x')).toEqual(expected);
  });
});

describe('caching', () => {
  it('parses each request once: a later change of its URL is not seen', () => {
    const request = req('a=first');
    expect(queryString(request, 'a')).toBe('first');
    (request as { originalUrl: string }).originalUrl = '/debug/vars?a=second';
    expect(queryString(request, 'a')).toBe('first');
    expect(queryString(req('a=second'), 'a')).toBe('second');
  });
});
