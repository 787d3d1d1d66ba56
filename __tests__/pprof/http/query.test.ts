import type { Request } from 'express';
import { HttpError } from '../../../lib/http/errors';
import { PROFILE_NAMES, profileCatalog, type ProfileName } from '../../../lib/pprof/catalog';
import { parseProfileQuery, type ProfileQuery } from '../../../lib/pprof/http/query';

const LIMITS = { defaultSeconds: 30, maxSeconds: 300 };
const CATALOG = profileCatalog(LIMITS.defaultSeconds, 10_000);
const formatsOf = (name: ProfileName): readonly string[] => CATALOG.find((p) => p.name === name)!.formats;

function parse(name: ProfileName, query: string, limits = LIMITS): ProfileQuery {
  const request = { originalUrl: `/debug/pprof/${name}${query === '' ? '' : `?${query}`}`, url: '/', query: {} } as unknown as Request;
  return parseProfileQuery(request, name, formatsOf(name), limits);
}

function rejection(name: ProfileName, query: string, limits = LIMITS): HttpError {
  try {
    parse(name, query, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
    return err as HttpError;
  }
  throw new Error(`expected /${name}?${query} to be rejected`);
}

const DEFAULTS: Record<ProfileName, Pick<ProfileQuery, 'seconds' | 'format'>> = {
  profile: { seconds: 30, format: 'pprof' },
  trace: { seconds: 1, format: 'json' },
  heap: { seconds: 30, format: 'pprof' },
  allocs: { seconds: 30, format: 'pprof' },
  goroutine: { seconds: 30, format: 'pprof' },
  block: { seconds: 30, format: 'pprof' },
  mutex: { seconds: 30, format: 'pprof' },
};

describe('parseProfileQuery defaults', () => {
  it.each(Object.entries(DEFAULTS))('/%s with no query', (name, expected) => {
    expect(parse(name as ProfileName, '')).toEqual({ debug: 0, gc: false, formatGiven: false, deltaSeconds: undefined, ...expected });
  });

  it('the table above covers every profile name', () => {
    expect(Object.keys(DEFAULTS).sort()).toEqual([...PROFILE_NAMES].sort());
  });
});

describe('debug and gc', () => {
  it.each([
    ['debug=0', { debug: 0 }],
    ['debug=1', { debug: 1 }],
    ['debug=2', { debug: 2 }],
    ['gc=0', { gc: false }],
    ['gc=1', { gc: true }],
    ['debug=2&gc=1', { debug: 2, gc: true }],
  ])('/heap?%s', (query, expected) => {
    expect(parse('heap', query)).toMatchObject(expected);
  });

  it.each([
    ['debug', '3', 'from 0 to 2, got 3'],
    ['debug', '-1', 'from 0 to 2, got "-1"'],
    ['debug', '', 'from 0 to 2, got ""'],
    ['debug', '1.0', 'from 0 to 2, got "1.0"'],
    ['debug', 'true', 'from 0 to 2, got "true"'],
    ['debug', 'NaN', 'from 0 to 2, got "NaN"'],
    ['gc', '2', 'from 0 to 1, got 2'],
    ['gc', 'true', 'from 0 to 1, got "true"'],
    ['gc', 'Infinity', 'from 0 to 1, got "Infinity"'],
  ])('rejects %s=%s', (param, value, detail) => {
    expect(rejection('heap', `${param}=${value}`).message).toBe(`query parameter "${param}" must be an integer ${detail}`);
  });

  it.each(['debug=1&debug=2', 'debug[x]=1', 'gc=1&gc=1'])('rejects the repeated or bracketed ?%s', (query) => {
    expect(rejection('heap', query).message).toMatch(/^query parameter "(debug|gc)" must be given once/);
  });
});

describe('format', () => {
  it.each([
    ['profile', 'cpuprofile'],
    ['profile', 'pprof'],
    ['heap', 'heapprofile'],
    ['allocs', 'heapprofile'],
    ['goroutine', 'pprof'],
    ['trace', 'json'],
  ] as const)('/%s accepts format=%s', (name, format) => {
    expect(parse(name, `format=${format}`)).toMatchObject({ format, formatGiven: true });
  });

  it.each([
    ['profile', 'heapprofile', 'pprof, cpuprofile'],
    ['heap', 'cpuprofile', 'pprof, heapprofile'],
    ['goroutine', 'json', 'pprof'],
    ['trace', 'pprof', 'json'],
    ['heap', '', 'pprof, heapprofile'],
    ['heap', 'PPROF', 'pprof, heapprofile'],
  ] as const)('/%s rejects format=%j, listing %s', (name, format, listed) => {
    expect(rejection(name, `format=${format}`).message).toBe(
      `query parameter "format" must be one of ${listed} for /${name}, got ${JSON.stringify(format)}`,
    );
  });

  it('cuts a long format value to 32 characters in the message', () => {
    expect(rejection('heap', `format=${'x'.repeat(100)}`).message).toMatch(new RegExp(`got "${'x'.repeat(32)}"$`));
  });

  it('rejects a repeated format', () => {
    expect(rejection('profile', 'format=pprof&format=pprof').message).toContain('"format" must be given once');
  });

  it.each(['heap', 'allocs', 'goroutine', 'block', 'mutex'] as const)('/%s: debug>0 and format are alternatives', (name) => {
    expect(rejection(name, 'debug=1&format=pprof').message).toBe(
      `query parameters "debug" and "format" are alternatives for /${name}: debug=1 or 2 selects the text form, format selects another one`,
    );
    expect(parse(name, 'debug=0&format=pprof')).toMatchObject({ debug: 0, format: 'pprof' });
  });

  it.each([
    ['profile', 'format=cpuprofile'],
    ['trace', 'format=json'],
  ] as const)('/%s takes and ignores debug alongside %s', (name, query) => {
    expect(parse(name, `debug=2&${query}`)).toMatchObject({ debug: 2, formatGiven: true });
  });
});

describe('seconds', () => {
  it.each([
    ['profile', '1', 1],
    ['profile', '300', 300],
    ['trace', '5', 5],
    ['trace', '300', 300],
  ] as const)('/%s?seconds=%s sets seconds', (name, text, seconds) => {
    expect(parse(name, `seconds=${text}`)).toMatchObject({ seconds, deltaSeconds: undefined });
  });

  it.each([
    ['heap', '10', 10],
    ['allocs', '1', 1],
    ['allocs', '300', 300],
  ] as const)('/%s?seconds=%s asks for a delta profile', (name, text, delta) => {
    expect(parse(name, `seconds=${text}`)).toMatchObject({ deltaSeconds: delta, seconds: LIMITS.defaultSeconds });
  });

  it.each(['profile', 'trace', 'heap', 'allocs'] as const)('/%s rejects every malformed or out-of-range seconds', (name) => {
    for (const [text, shown] of [
      ['0', '0'],
      ['301', '301'],
      ['-5', '"-5"'],
      ['1.5', '"1.5"'],
      ['', '""'],
      ['NaN', '"NaN"'],
      ['Infinity', '"Infinity"'],
      ['1e2', '"1e2"'],
      ['9'.repeat(20), `"${'9'.repeat(20)}"`],
    ]) {
      expect(rejection(name, `seconds=${text}`).message).toBe(`query parameter "seconds" must be an integer from 1 to 300, got ${shown}`);
    }
  });

  it('follows the configured maximum', () => {
    const limits = { defaultSeconds: 5, maxSeconds: 10 };
    expect(parse('profile', 'seconds=10', limits).seconds).toBe(10);
    expect(parse('profile', '', limits).seconds).toBe(5);
    expect(rejection('profile', 'seconds=11', limits).message).toContain('from 1 to 10, got 11');
  });

  it.each(['seconds=1&seconds=2', 'seconds[0]=1', 'seconds'])('/heap rejects ?%s', (query) => {
    expect(rejection('heap', query).message).toMatch(/^query parameter "seconds" must be/);
  });

  it.each(['goroutine', 'block', 'mutex'] as const)('/%s is a snapshot: any seconds is rejected', (name) => {
    for (const query of ['seconds=5', 'seconds=', 'seconds', 'seconds[x]=1']) {
      expect(rejection(name, query).message).toBe(
        `query parameter "seconds" applies only to /profile, /trace, /heap and /allocs (a delta profile); /${name} is a snapshot`,
      );
    }
  });

  it.each(['heap', 'allocs'] as const)('/%s delta profiles take pprof or debug text but not heapprofile', (name) => {
    expect(parse(name, 'seconds=5&format=pprof')).toMatchObject({ deltaSeconds: 5, format: 'pprof' });
    expect(parse(name, 'seconds=5&debug=1')).toMatchObject({ deltaSeconds: 5, debug: 1 });
    expect(rejection(name, 'seconds=5&format=heapprofile').message).toBe(
      `a delta ${name} profile (?seconds=) is served as pprof or debug=1 text; heapprofile cannot hold a difference of two profiles`,
    );
  });
});
