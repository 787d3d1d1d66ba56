import { compileKeyMatcher, redact, REDACTED } from '../../lib/state/redaction';

describe('redact', () => {
  const matcher = compileKeyMatcher(['password', /token$/i])!;

  it('replaces matching keys at any depth and leaves the input untouched', () => {
    const input = { a: { password: 'p', keep: 1 }, list: [{ apiToken: 't' }, { other: 2 }], plain: 'x' };
    const out = redact(input, matcher) as typeof input;
    expect(out).toEqual({ a: { password: REDACTED, keep: 1 }, list: [{ apiToken: REDACTED }, { other: 2 }], plain: 'x' });
    expect(input.a.password).toBe('p');
    expect(input.list[0]!.apiToken).toBe('t');
  });

  it('shares untouched subtrees instead of copying them', () => {
    const clean = { deep: { values: [1, 2, 3] } };
    const input = { clean, secret: { PASSWORD: 'x' } };
    const out = redact(input, matcher) as typeof input;
    expect(out.clean).toBe(clean);
    expect(redact(clean, matcher)).toBe(clean);
  });

  it('matches string keys case-insensitively and whole', () => {
    expect(matcher('Password')).toBe(true);
    expect(matcher('passwords')).toBe(false);
    expect(compileKeyMatcher([])).toBeUndefined();
    expect(() => compileKeyMatcher([42 as unknown as string])).toThrow(/strings or RegExps/);
  });
});
