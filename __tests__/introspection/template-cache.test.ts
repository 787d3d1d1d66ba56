import { compileTemplate } from '../../lib/jsonpath';
import { TemplateCache } from '../../lib/introspection/template-cache';

interface Compiled {
  readonly source: string;
  readonly serial: number;
}

/** A cache over a counting compiler; `compiled` lists every source compiled, in order. */
function counting(capacity: number, fail: (source: string) => boolean = () => false) {
  const compiled: string[] = [];
  const compile = jest.fn((source: string): Compiled => {
    if (fail(source)) throw new SyntaxError(`bad template ${source}`);
    compiled.push(source);
    return { source, serial: compiled.length };
  });
  return { cache: new TemplateCache(capacity, compile), compile, compiled };
}

/** Which of `sources` were cached: a probe that hits calls no compile (probing does refresh recency). */
function cachedAmong(cache: TemplateCache<Compiled>, compile: jest.Mock, sources: string[]): string[] {
  return sources.filter((source) => {
    const before = compile.mock.calls.length;
    cache.get(source);
    return compile.mock.calls.length === before;
  });
}

describe('TemplateCache', () => {
  it('compiles on a miss and answers the very same object on every hit', () => {
    const { cache, compile } = counting(4);
    const first = cache.get('{.a}');
    expect(first).toEqual({ source: '{.a}', serial: 1 });
    for (let i = 0; i < 5; i += 1) expect(cache.get('{.a}')).toBe(first);
    expect(compile).toHaveBeenCalledTimes(1);
    expect(compile).toHaveBeenCalledWith('{.a}');
  });

  it.each([
    ['whitespace', '{.a}', '{ .a }'],
    ['case', '{.a}', '{.A}'],
    ['empty vs space', '', ' '],
    ['trailing newline', '{.a}', '{.a}\n'],
  ])('keys by the exact source text (%s differs)', (_label, one, other) => {
    const { cache, compile } = counting(4);
    expect(cache.get(one)).not.toBe(cache.get(other));
    expect(compile).toHaveBeenCalledTimes(2);
  });

  it('holds up to capacity entries without recompiling', () => {
    const { cache, compile } = counting(3);
    const sources = ['a', 'b', 'c'];
    const firsts = sources.map((s) => cache.get(s));
    sources.forEach((s, i) => expect(cache.get(s)).toBe(firsts[i]));
    expect(compile).toHaveBeenCalledTimes(3);
  });

  it('evicts the least recently inserted entry when full', () => {
    const { cache, compile } = counting(3);
    const a = cache.get('a');
    ['b', 'c', 'd'].forEach((s) => cache.get(s));
    expect(compile).toHaveBeenCalledTimes(4);
    // 'a' was evicted: it compiles again into a new object.
    const again = cache.get('a');
    expect(again).not.toBe(a);
    expect(again.serial).toBe(5);
  });

  it('evicts the least recently used entry: a hit refreshes recency', () => {
    const { cache, compile } = counting(3);
    ['a', 'b', 'c'].forEach((s) => cache.get(s));
    cache.get('a'); // a is now the most recent; b is the oldest
    cache.get('d'); // evicts b
    expect(compile).toHaveBeenCalledTimes(4);
    expect(cachedAmong(cache, compile, ['a', 'c', 'd'])).toEqual(['a', 'c', 'd']);
    cache.get('b');
    expect(compile).toHaveBeenCalledTimes(5);
  });

  it.each([1, 2, 5, 16])('never holds more than capacity %d entries', (capacity) => {
    const { cache, compile } = counting(capacity);
    const sources = Array.from({ length: capacity * 3 }, (_, i) => `t${i}`);
    sources.forEach((s) => cache.get(s));
    // Exactly the newest `capacity` sources remain cached, in order of recency.
    const newest = sources.slice(-capacity);
    const older = sources.slice(0, -capacity);
    expect(cachedAmong(cache, compile, newest)).toEqual(newest);
    const calls = compile.mock.calls.length;
    cache.get(older[older.length - 1]!);
    expect(compile.mock.calls.length).toBe(calls + 1);
  });

  it.each([0, '', null, false, Number.NaN])('caches a falsy compiled value %p like any other', (value) => {
    const compile = jest.fn(() => value);
    const cache = new TemplateCache<unknown>(4, compile);
    expect(cache.get('x')).toBe(value);
    expect(cache.get('x')).toBe(value);
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('with capacity 0 caches nothing but still answers the compiled value', () => {
    const { cache, compile } = counting(0);
    expect(cache.get('a')).toEqual({ source: 'a', serial: 1 });
    expect(cache.get('a')).toEqual({ source: 'a', serial: 2 });
    expect(compile).toHaveBeenCalledTimes(2);
  });

  it('does not cache compile errors: each get recompiles and throws the same kind of error', () => {
    const { cache, compile } = counting(4, (s) => s.startsWith('bad'));
    expect(() => cache.get('bad1')).toThrow(SyntaxError);
    expect(() => cache.get('bad1')).toThrow('bad template bad1');
    expect(compile).toHaveBeenCalledTimes(2);
  });

  it('failing templates do not crowd out good ones', () => {
    const { cache, compile } = counting(2, (s) => s.startsWith('bad'));
    const a = cache.get('a');
    const b = cache.get('b');
    for (let i = 0; i < 10; i += 1) expect(() => cache.get(`bad${i}`)).toThrow(SyntaxError);
    const calls = compile.mock.calls.length;
    expect(cache.get('a')).toBe(a);
    expect(cache.get('b')).toBe(b);
    expect(compile.mock.calls.length).toBe(calls);
  });

  it('a source that failed once and then compiles is cached from then on', () => {
    let broken = true;
    const cache = new TemplateCache(4, (source: string) => {
      if (broken) throw new Error('transient');
      return { source };
    });
    expect(() => cache.get('x')).toThrow('transient');
    broken = false;
    const good = cache.get('x');
    broken = true;
    expect(cache.get('x')).toBe(good);
  });

  it('works with the real ?field= template compiler, as the vars router uses it', () => {
    const compile = jest.fn((source: string) => compileTemplate(source));
    const cache = new TemplateCache(256, compile);
    const first = cache.get('{.items[0].name}');
    expect(cache.get('{.items[0].name}')).toBe(first);
    expect(compile).toHaveBeenCalledTimes(1);
    expect(() => cache.get('{.items[')).toThrow();
    expect(() => cache.get('{.items[')).toThrow();
    expect(compile).toHaveBeenCalledTimes(3);
  });
});
