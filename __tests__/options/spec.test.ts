/**
 * Options declared once (`lib/options/spec.ts`): one declaration gives the frozen defaults, the
 * known keys with their "did you mean", the nested groups and their paths, and the resolved values.
 */
import * as option from '../../lib/options/spec';
import { optionSpec } from '../../lib/options/spec';

const isText = (entry: unknown): entry is string => typeof entry === 'string';

const SPEC = optionSpec('make', {
  enabled: option.boolean(true),
  timeoutMs: option.integer(100, { min: 1, max: 1000 }),
  mode: option.choice('fast', ['fast', 'slow']),
  name: option.string('x', 1),
  tags: option.array(Object.freeze([]) as readonly string[], isText, 'strings'),
  onEvent: option.callback<() => void>('a function'),
  required: option.integer(undefined, { min: 0, max: 5, hint: 'required' }),
  raw: option.later(7),
  doubled: option.custom(2, ({ value, fallback }) => (typeof value === 'number' ? value * 2 : fallback)),
  nested: option.group({ depth: option.integer(3, { min: 1, max: 9 }), inner: option.group({ on: option.boolean(false) }) }),
});

describe('optionSpec', () => {
  it('derives the frozen defaults, leaving out options without one', () => {
    expect(SPEC.defaults).toEqual({
      enabled: true,
      timeoutMs: 100,
      mode: 'fast',
      name: 'x',
      tags: [],
      raw: 7,
      doubled: 2,
      nested: { depth: 3, inner: { on: false } },
    });
    expect(Object.isFrozen(SPEC.defaults)).toBe(true);
    expect(Object.isFrozen(SPEC.defaults.nested)).toBe(true);
    expect(Object.isFrozen(SPEC.defaults.nested.inner)).toBe(true);
  });

  it('resolves every option, defaults applied, nested groups included', () => {
    const onEvent = (): void => undefined;
    expect(SPEC.resolve({ required: 1, raw: 'given', doubled: 4, onEvent, nested: { inner: { on: true } } })).toEqual({
      enabled: true,
      timeoutMs: 100,
      mode: 'fast',
      name: 'x',
      tags: [],
      onEvent,
      required: 1,
      raw: 'given',
      doubled: 8,
      nested: { depth: 3, inner: { on: true } },
    });
  });

  it.each<[unknown, string]>([
    [{ required: 1, timeoutMS: 5 }, 'make: unknown option "timeoutMS" (did you mean "timeoutMs"?); known options: enabled, timeoutMs'],
    [
      { required: 1, nested: { inner: { of: true } } },
      'make: unknown option "nested.inner.of" (did you mean "on"?); known options of nested.inner: on',
    ],
    [{ required: 1, nested: [] }, 'make: nested must be an object (or omitted), got an array'],
    [{ required: 1, nested: { depth: 0 } }, 'make: nested.depth must be an integer from 1 to 9, got 0'],
    [{}, 'make: required must be an integer from 0 to 5 (required), got undefined'],
    [{ required: 1, mode: 'slo' }, 'make: mode must be one of fast, slow, got "slo" (did you mean "slow"?)'],
    [{ required: 1, onEvent: 1 }, 'make: onEvent must be a function, got 1'],
    [{ required: 1, tags: [1] }, 'make: tags must be an array of strings; entry 0 is 1'],
    [null, 'make: options must be an object (or omitted), got null'],
  ])('answers %j with the common message', (options, message) => {
    expect(() => SPEC.resolve(options)).toThrow(TypeError);
    expect(() => SPEC.resolve(options)).toThrow(message);
  });

  it('names options by the path it is given', () => {
    const nested = optionSpec('pprof options', { maxSeconds: option.integer(10, { min: 1, max: 60 }) }, 'pprof.trace');
    expect(() => nested.resolve({ maxSeconds: 0 })).toThrow(
      new TypeError('pprof options: pprof.trace.maxSeconds must be an integer from 1 to 60, got 0'),
    );
  });
});
