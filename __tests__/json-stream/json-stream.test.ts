import type http from 'node:http';
import { Writable } from 'node:stream';
import {
  DEFAULT_JSON_BOUNDS,
  JsonSerializationError,
  JsonStreamAbortError,
  measureJson,
  SerializationRate,
  serializeAtOnce,
  writeJson,
  type JsonStreamOptions,
} from '../../lib/json-stream/index';
import { listen, open, request, type Listening } from '../helpers/http';
import { prng } from '../helpers/prng';

/** A writable that keeps everything written, and every chunk's type. */
function collector(): { out: Writable; text: () => string; writes: () => number; allBuffers: () => boolean } {
  const chunks: unknown[] = [];
  const out = new Writable({
    write(chunk: unknown, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  return {
    out,
    text: () => Buffer.concat(chunks as Buffer[]).toString('utf8'),
    writes: () => chunks.length,
    allBuffers: () => chunks.every((c) => Buffer.isBuffer(c)),
  };
}

async function streamed(value: unknown, options?: JsonStreamOptions): Promise<string> {
  const sink = collector();
  await writeJson(sink.out, value, options);
  expect(sink.allBuffers()).toBe(true);
  return sink.text();
}

/** Compares long texts without dumping megabytes: reports the first difference with context. */
const NEGATIVE_ZERO = '\u0000negative zero\u0000';

/** `JSON.stringify(value)` with the sign of -0 kept, as the serializer writes it (and Go does). */
function jsonText(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, v: unknown) => (Object.is(v, -0) ? NEGATIVE_ZERO : v))?.replaceAll(
    JSON.stringify(NEGATIVE_ZERO),
    '-0',
  );
}

function expectSameText(actual: string, expected: string): void {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && actual[i] === expected[i]) i++;
  throw new Error(
    `texts differ at ${i} (lengths ${actual.length} vs ${expected.length}): ` +
      `actual …${JSON.stringify(actual.slice(Math.max(0, i - 20), i + 20))} expected …${JSON.stringify(expected.slice(Math.max(0, i - 20), i + 20))}`,
  );
}

const CHUNK_SIZES = [1, 2, 3, 7, 16, 61, 1000, undefined];

function edgeValues(): Array<[string, unknown]> {
  const holes: unknown[] = [1, , 3];
  holes.length = 5;
  const withExtra: unknown[] & { extra?: number } = [1, 2];
  withExtra.extra = 3;
  const symbolKeyed = { a: 1, [Symbol('s')]: 2 };
  const nonEnumerable = Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false });
  const inherited = Object.assign(Object.create({ inheritedProp: 1 }) as object, { own: 2 });
  const getterObject = {
    get computed(): number {
      return 42;
    },
  };
  const numberWithValueOf = Object.assign(new Number(1), { valueOf: () => 7 });
  const stringWithToString = Object.assign(new String('boxed'), { toString: () => 'custom' });
  const protoKey = JSON.parse('{"__proto__": {"x": 1}, "y": 2}') as unknown;
  class Point {
    constructor(
      public x: number,
      public y: number,
    ) {}
  }
  const shared = { s: 1 };
  const longAscii = 'abcdefghij'.repeat(5000);
  const longEscapes = 'line "one"\n\tline two\\\u0001'.repeat(3000);
  const longPairs = 'x😀'.repeat(20000);
  const longLone = `${'ab\ud800c\udc00'.repeat(8000)}\ud83d`;
  const allControls = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join('');
  // Own keys named like Object.prototype's members, `__proto__` included (as JSON.parse makes them),
  // large enough to be walked rather than handed to JSON.stringify whole, and in a null-prototype object.
  const prototypeNames = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', '__defineGetter__'];
  const ownProtoKeys = JSON.parse(
    `{${prototypeNames.map((name) => `"${name}": {"deep": ${JSON.stringify('x'.repeat(3000))}}`).join(',')}}`,
  ) as object;
  const nullPrototype = Object.assign(Object.create(null) as object, { toString: 1, valueOf: 2 });
  Object.defineProperty(nullPrototype, '__proto__', { value: 3, enumerable: true });
  return [
    ['own keys named like Object.prototype members', ownProtoKeys],
    ['a null-prototype object with such keys', [nullPrototype]],
    ['integers', [0, -0, 1, -1, 2 ** 53, -(2 ** 53), 2 ** 31]],
    ['negative zero inside containers', { a: -0, b: [-0, 0, { c: -0 }], d: -0.0 }],
    ['floats', [0.1, -1.5e-7, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 123456789.123456789]],
    ['non-finite numbers', [NaN, Infinity, -Infinity]],
    ['top-level number', 3.14],
    ['top-level NaN', NaN],
    ['top-level string', 'hello'],
    ['top-level null', null],
    ['top-level booleans', [true, false]],
    ['empty containers', [[], {}, [[]], [{}], { a: {} }, { a: [] }]],
    ['control characters', allControls],
    ['quotes and backslashes', '"\\/\'`'],
    ['line separators and DEL', '\u2028\u2029\u007f\u0080\u00ff'],
    ['lone high surrogate', '\ud800'],
    ['lone low surrogate', 'a\udc00b'],
    ['reversed pair', '\udc00\ud800'],
    ['valid pair', '😀𝄞'],
    ['non-ASCII keys', { clé: 1, 日本: 2, '😀': 3, '\ud800': 4, 'a"b': 5, 'tab\tkey': 6, '': 7 }],
    ['integer-like keys ordered first', { b: 1, 2: 2, a: 3, 1: 4, '-1': 5, '01': 6 }],
    ['__proto__ own key', protoKey],
    ['undefined, functions and symbols in objects', { a: undefined, b: () => 1, c: Symbol('x'), d: 1 }],
    ['undefined, functions and symbols in arrays', [undefined, () => 1, Symbol('x'), 1]],
    ['only skipped members', { a: undefined, b: undefined }],
    ['array holes', holes],
    ['sparse array', Object.assign(new Array(10), { 3: 'x' })],
    ['array with extra property', withExtra],
    ['symbol keys ignored', symbolKeyed],
    ['non-enumerable ignored', nonEnumerable],
    ['inherited ignored', inherited],
    ['getter invoked', getterObject],
    ['null prototype', Object.assign(Object.create(null) as object, { a: 1 })],
    ['class instance', new Point(1, 2)],
    ['Date', new Date(Date.UTC(2026, 10, 22, 20, 40, 49, 123))],
    ['invalid Date', new Date(NaN)],
    ['Dates nested', { when: [new Date(0), { at: new Date(1e12) }] }],
    ['toJSON returning undefined', { a: { toJSON: () => undefined }, b: [{ toJSON: () => undefined }] }],
    ['toJSON receives the key', { first: { toJSON: (key: string) => `k=${key}` }, list: [{ toJSON: (key: string) => `i=${key}` }] }],
    ['toJSON result is not re-toJSONed at its own level', { a: { toJSON: () => ({ toJSON: () => 'inner', b: 1 }) } }],
    ['toJSON result children get their own toJSON', { a: { toJSON: () => ({ d: new Date(0) }) } }],
    ['boxed primitives', [new Number(3), new String('s'), new Boolean(false), Object(Symbol('q'))]],
    ['boxed with overridden valueOf / toString', [numberWithValueOf, stringWithToString]],
    ['boxed NaN', new Number(NaN)],
    ['typed arrays', [new Uint8Array([1, 2, 3]), new Float64Array([0.5, NaN])]],
    ['Map and Set', [new Map([['a', 1]]), new Set([1, 2])]],
    ['Buffer (has toJSON)', Buffer.from('hi')],
    ['ArrayBuffer, RegExp, Error', [new ArrayBuffer(4), /re/g, new Error('e')]],
    ['Proxy object', new Proxy({ a: 1, b: 2 }, {})],
    ['Proxy array', new Proxy([1, [2]], {})],
    ['shared (non-cyclic) references', { one: shared, two: shared, list: [shared, shared] }],
    ['long ASCII string', longAscii],
    ['long string needing escapes', longEscapes],
    ['long string of surrogate pairs', longPairs],
    ['long string with lone surrogates', longLone],
    ['long key', { ['k'.repeat(70000)]: 1, b: 'v'.repeat(70000) }],
    ['long strings in arrays', [longPairs, longAscii, { s: longLone }]],
    [
      'functions with toJSON',
      { f: Object.assign(() => 1, { toJSON: (key: string) => `fn:${key}` }), list: [Object.assign(() => 2, { toJSON: () => [1] })] },
    ],
    ['top-level function with toJSON', Object.assign(() => 1, { toJSON: () => ({ from: 'function' }) })],
    [
      'Dates with their own toJSON or toISOString',
      [Object.assign(new Date(0), { toJSON: () => 'own' }), Object.assign(new Date(0), { toISOString: () => 'iso' })],
    ],
    ['Date subclass', new (class Stamp extends Date {})(0)],
  ];
}

describe('writeJson output is byte-identical to JSON.stringify', () => {
  it.each(edgeValues())('%s', async (_name, value) => {
    const expected = jsonText(value) as string;
    for (const chunkBytes of CHUNK_SIZES) {
      expectSameText(await streamed(value, { chunkBytes }), expected);
    }
  });

  it('calls toJSON exactly like JSON.stringify (with the key it is written under)', async () => {
    const keys: string[] = [];
    const value = {
      a: 1,
      nested: { b: [1, { c: new Date(0) }, undefined], secret: 'x' },
      list: [{ toJSON: (key: string) => (keys.push(key), { fromToJSON: key }) }],
    };
    const expected = JSON.stringify(value);
    const stringifyKeys = keys.splice(0);
    expectSameText(await streamed(value, { chunkBytes: 5 }), expected);
    expect(keys).toEqual(stringifyKeys);
  });

  it('matches JSON.stringify on 300 random structures (seeded)', async () => {
    const random = prng(20261122);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const alphabet = ['a', 'Z', '0', ' ', '"', '\\', '\n', '\u0000', '\u001f', 'é', '日', '\u2028', '\ud800', '\udfff', '😀', '/', '~'];
    const randomString = (max: number): string => {
      const length = Math.floor(random() * max);
      let s = '';
      for (let i = 0; i < length; i++) s += pick(alphabet);
      return s;
    };
    const randomValue = (depth: number): unknown => {
      const r = random();
      if (depth <= 0 || r < 0.45) {
        return pick<() => unknown>([
          () => Math.floor(random() * 2000) - 1000,
          () => (random() - 0.5) * 10 ** Math.floor(random() * 40 - 20),
          () => pick([NaN, Infinity, -Infinity, -0, 0]),
          () => randomString(12),
          () => randomString(random() < 0.05 ? 3000 : 40),
          () => random() < 0.5,
          () => null,
          () => undefined,
          () => () => 0,
          () => Symbol('s'),
          () => new Date(Math.floor(random() * 4e12)),
          () => new Number(random() * 100),
          () => new String(randomString(5)),
        ])();
      }
      if (r < 0.7) {
        const length = Math.floor(random() * 8);
        const array: unknown[] = [];
        for (let i = 0; i < length; i++) {
          if (random() < 0.1)
            array.length++; // hole
          else array.push(randomValue(depth - 1));
        }
        return array;
      }
      const object: Record<string, unknown> = {};
      const size = Math.floor(random() * 8);
      for (let i = 0; i < size; i++) object[random() < 0.2 ? String(Math.floor(random() * 50)) : randomString(6)] = randomValue(depth - 1);
      if (random() < 0.05) object.toJSON = (key: string) => ({ key, n: size });
      return object;
    };
    for (let i = 0; i < 300; i++) {
      const value = randomValue(1 + Math.floor(random() * 6));
      const expected = jsonText(value);
      if (expected === undefined) continue;
      const chunkBytes = pick(CHUNK_SIZES);
      const actual = await streamed(value, { chunkBytes });
      if (actual !== expected)
        throw new Error(`case ${i} (chunkBytes ${String(chunkBytes)}): ${actual.slice(0, 200)} !== ${expected.slice(0, 200)}`);
    }
  });

  it('streams 100 000 levels of nesting without overflowing the stack', async () => {
    const depth = 100_000;
    let arrays: unknown = 0;
    for (let i = 0; i < depth; i++) arrays = [arrays];
    expectSameText(await streamed(arrays), `${'['.repeat(depth)}0${']'.repeat(depth)}`);

    let objects: unknown = null;
    for (let i = 0; i < depth; i++) objects = { k: objects };
    expectSameText(await streamed(objects, { chunkBytes: 4096 }), `${'{"k":'.repeat(depth)}null${'}'.repeat(depth)}`);
  });

  it('writes Buffers and does not end the output, so the caller can add to it', async () => {
    const sink = collector();
    await writeJson(sink.out, { a: 1 });
    sink.out.write(Buffer.from('\n'));
    expect(sink.out.writableEnded).toBe(false);
    expect(sink.allBuffers()).toBe(true);
    expect(sink.text()).toBe('{"a":1}\n');
  });

  it('splits the output into chunks of at most chunkBytes for ASCII data', async () => {
    const sizes: number[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        sizes.push(chunk.length);
        callback();
      },
    });
    const value = {
      list: Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `item-${i}`, text: 'y'.repeat(i % 300) })),
      big: 'z'.repeat(100_000),
    };
    await writeJson(out, value, { chunkBytes: 1000 });
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(JSON.stringify(value).length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1000);
    expect(sizes.length).toBeGreaterThan(100);
  });
});

describe('writeJson hands small subtrees to JSON.stringify, exactly', () => {
  /** Values whose every getter, toJSON and proxy trap appends to `log`, spread over small subtrees. */
  function instrumented(log: string[]): unknown {
    const withGetter = (id: number): object =>
      Object.defineProperty({ before: id }, 'computed', {
        enumerable: true,
        get(): number {
          log.push(`get ${id}`);
          return id * 10;
        },
      });
    const withToJSON = (id: number): object => ({
      toJSON(key: string): unknown {
        log.push(`toJSON ${id} key=${key}`);
        return { replaced: id, when: new Date(id * 1000) };
      },
    });
    const proxied = (id: number): object =>
      new Proxy(
        { id, inner: [id] },
        {
          get(target, property, receiver): unknown {
            log.push(`trap get ${id} ${String(property)}`);
            return Reflect.get(target, property, receiver) as unknown;
          },
          ownKeys(target): ArrayLike<string | symbol> {
            log.push(`trap ownKeys ${id}`);
            return Reflect.ownKeys(target);
          },
        },
      );
    const elements: unknown[] = [];
    for (let i = 0; i < 300; i++) {
      if (i % 37 === 5) elements.push(withGetter(i));
      else if (i % 41 === 7) elements.push(i % 2 === 0 ? withToJSON(i) : { deep: { deeper: withToJSON(i) } });
      else if (i % 43 === 11) elements.push(proxied(i));
      else if (i % 47 === 13) elements.push(Object.assign(() => i, { toJSON: (key: string) => (log.push(`fn ${i} key=${key}`), i) }));
      else elements.push({ name: `item-${i}`, tags: ['a', 'b'], at: new Date(i * 86_400_000), ratio: i / 7, gone: undefined });
    }
    return {
      elements,
      small: { a: withGetter(1000), b: [{ plain: true }, withToJSON(1001), proxied(1002)], c: { plain: [1, 2, 3] }, d: withToJSON(1003) },
      // Getters on the array itself: each element is read exactly once, in order.
      accessors: Object.defineProperty([1, 2, 3], 1, {
        enumerable: true,
        get(): number {
          log.push('get element 1');
          return 20;
        },
      }),
    };
  }

  it('runs getters, toJSON and proxy traps exactly as often and in the same order as JSON.stringify', async () => {
    const expectedLog: string[] = [];
    const expected = JSON.stringify(instrumented(expectedLog));
    for (const chunkBytes of [7, 1000, undefined]) {
      const log: string[] = [];
      const value = instrumented(log);
      expectSameText(await streamed(value, { chunkBytes }), expected);
      expect(log).toEqual(expectedLog);
    }
    expect(expectedLog.length).toBeGreaterThan(30);
  });

  it('keeps the order when an element that cannot join a run follows a long run or completes a chunk', async () => {
    const value = Array.from({ length: 3000 }, (_, i) => {
      if (i % 97 === 50) return 'l'.repeat(70_000); // a long string: walked piece by piece
      if (i % 89 === 3) return new Number(i); // boxed: walked
      if (i % 83 === 1) return { toJSON: () => `t${i}` }; // toJSON: walked
      return { i, s: 'x'.repeat(i % 200) };
    });
    for (const chunkBytes of CHUNK_SIZES.slice(3)) expectSameText(await streamed(value, { chunkBytes }), JSON.stringify(value));
  });

  it('names the exact path of a cycle inside a small subtree', async () => {
    const item: Record<string, unknown> = { b: { c: null } };
    (item.b as Record<string, unknown>).c = item;
    const value = { items: [{ a: 1 }, item, { a: 3 }] };
    let err = (await writeJson(collector().out, value).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err).toBeInstanceOf(JsonSerializationError);
    expect(err.reason).toBe('cycle');
    expect(err.path).toBe('$.items[1].b.c');
    expect(err.message).toContain('ancestor at $.items[1])');

    const list: unknown[] = [{ x: 1 }, { x: 2 }];
    list.push({ y: list });
    err = (await writeJson(collector().out, list).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err.path).toBe('$[2].y');
    expect(err.message).toContain('ancestor at $)');
  });

  it('names the exact path of a BigInt inside a small subtree, before writing anything', async () => {
    const sink = collector();
    const value = { list: [{ ok: 1 }, { ok: 2 }, { n: [1, 2n] }], after: { ok: 3 } };
    const err = (await writeJson(sink.out, value).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err.reason).toBe('bigint');
    expect(err.path).toBe('$.list[2].n[1]');
    expect(sink.writes()).toBe(0);
  });
});

describe('writeJson errors', () => {
  it('names the path of a cycle and of the ancestor it points back to', async () => {
    const vars: Record<string, unknown> = { foo: { bar: null } };
    const state = { vars };
    (vars.foo as Record<string, unknown>).bar = vars;
    const sink = collector();
    const err = (await writeJson(sink.out, state).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err).toBeInstanceOf(JsonSerializationError);
    expect(err.reason).toBe('cycle');
    expect(err.path).toBe('$.vars.foo.bar');
    expect(err.message).toMatch(/^\$\.vars\.foo\.bar: cycle .*ancestor at \$\.vars\)/);
    // Found within the first chunk: nothing reached the output.
    expect(sink.writes()).toBe(0);
  });

  it('detects a cycle through arrays, odd keys and deep nesting', async () => {
    const root: Record<string, unknown> = {};
    let node: Record<string, unknown> = root;
    let path = '$';
    let ancestor: Record<string, unknown> = root;
    let ancestorPath = '';
    for (let i = 0; i < 200; i++) {
      if (i === 150) {
        ancestor = node;
        ancestorPath = path;
      }
      const next: Record<string, unknown> = {};
      const key = i % 2 === 0 ? 'a b' : 'c';
      node[key] = [next];
      path += `${i % 2 === 0 ? '["a b"]' : '.c'}[0]`;
      node = next;
    }
    node.back = ancestor;
    const err = (await writeJson(collector().out, root).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err).toBeInstanceOf(JsonSerializationError);
    expect(err.reason).toBe('cycle');
    expect(err.path).toBe(`${path}.back`);
    // The message keeps its head and tail when the path is very long.
    expect(err.message.startsWith('$["a b"][0].c[0]')).toBe(true);
    expect(err.message).toContain(`ancestor at ${ancestorPath})`);
  }, 10_000);

  it('rejects BigInt (plain and boxed) with the path and how to fix it', async () => {
    for (const [value, path] of [
      [{ a: [1, 2, 3n] }, '$.a[2]'],
      [{ 'odd-key': { n: Object(5n) as object } }, '$["odd-key"].n'],
      [7n, '$'],
    ] as const) {
      const err = (await writeJson(collector().out, value).catch((e: unknown) => e)) as JsonSerializationError;
      expect(err).toBeInstanceOf(JsonSerializationError);
      expect(err.reason).toBe('bigint');
      expect(err.message).toBe(`${path}: BigInt is not JSON; convert it in the provider (for example to a string)`);
    }
  });

  it('rejects a top-level value that has no JSON form instead of writing nothing', async () => {
    for (const value of [undefined, () => 1, Symbol('x'), { toJSON: () => undefined }]) {
      const sink = collector();
      const err = (await writeJson(sink.out, value).catch((e: unknown) => e)) as JsonSerializationError;
      expect(err).toBeInstanceOf(JsonSerializationError);
      expect(err.reason).toBe('no-value');
      expect(sink.writes()).toBe(0);
    }
  });

  it('wraps an error thrown by a getter or toJSON with its path and cause', async () => {
    const boom = new Error('boom');
    const value = {
      ok: 1,
      list: [
        0,
        {
          get bad(): number {
            throw boom;
          },
        },
      ],
    };
    const err = (await writeJson(collector().out, value).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err).toBeInstanceOf(JsonSerializationError);
    expect(err.reason).toBe('threw');
    expect(err.message).toBe('$.list[1].bad: serializing threw: boom');
    expect(err.cause).toBe(boom);
  });

  it('rejects mid-stream, after bytes were sent, when the problem lies beyond the first chunk', async () => {
    const value = { padding: Array.from({ length: 5000 }, (_, i) => `entry-${i}`), late: 1n };
    const sink = collector();
    const err = (await writeJson(sink.out, value, { chunkBytes: 1024 }).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err.path).toBe('$.late');
    expect(sink.writes()).toBeGreaterThan(0);
    expect(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? 0 : v)).startsWith(sink.text())).toBe(true);
  });

  it('rejects invalid options with a TypeError saying how to fix them, before writing', async () => {
    const sink = collector();
    const bad: unknown[] = [
      { sliceMs: 0 },
      { sliceMs: Number.NaN },
      { chunkBytes: 0 },
      { chunkBytes: 1.5 },
      { signal: {} },
      { replacer: () => 1 },
      null,
    ];
    for (const options of bad) {
      await expect(writeJson(sink.out, { a: 1 }, options as JsonStreamOptions)).rejects.toThrow(TypeError);
    }
    await expect(writeJson(sink.out, 1, { chunkBytes: -1 })).rejects.toThrow(
      'writeJson: chunkBytes must be an integer from 1 to 67,108,864, got -1',
    );
    expect(sink.writes()).toBe(0);
  });

  it('rejects with the output error when the output fails', async () => {
    const failure = new Error('disk full');
    const out = new Writable({
      write(_chunk, _encoding, callback) {
        callback(failure);
      },
    });
    const value = Array.from({ length: 20000 }, (_, i) => i);
    await expect(writeJson(out, value, { chunkBytes: 100 })).rejects.toBe(failure);
  });
});

describe('writeJson yields, respects back-pressure and stops', () => {
  /** A large value whose element reads are counted, to see how far serialization went. */
  function countedArray(length: number): { value: unknown[]; reads: () => number } {
    let reads = 0;
    const element = { name: 'element', payload: 'p'.repeat(100) };
    const value = new Proxy(new Array<unknown>(length).fill(0), {
      get(target, property, receiver) {
        if (typeof property === 'string' && property !== 'length' && /^\d+$/.test(property)) {
          reads++;
          return element;
        }
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    return { value, reads: () => reads };
  }

  it('gives other callbacks turns of the event loop while writing', async () => {
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const value = Array.from({ length: 50_000 }, (_, i) => ({ i, s: `value ${i}` }));
    const text = await streamed(value, { sliceMs: 0.001 });
    ticking = false;
    expect(text).toBe(JSON.stringify(value));
    // Each step of 512 nodes ends a slice this short, so the ticker ran many times meanwhile.
    expect(turns).toBeGreaterThan(20);
  });

  it('lists the keys of an object known to have thousands at the start of a slice, not the end of one', async () => {
    const target = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`endpoint-${i}`, i % 7 === 0 ? { i } : `10.0.${i}`]));
    let turns = 0;
    let turnsAtListing: number[] = [];
    // The Proxy shows when the keys are listed; the slice is long enough that nothing else yields.
    const many = new Proxy(target, {
      ownKeys(t) {
        turnsAtListing.push(turns);
        return Reflect.ownKeys(t);
      },
    });
    const value = { before: Array.from({ length: 2000 }, (_, i) => ({ i })), many, after: 'end' };
    const expected = JSON.stringify(value);
    turnsAtListing = [];
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    try {
      setImmediate(tick);
      expectSameText(await streamed(value, { sliceMs: 1000 }), expected);
      // The first answer learns that the object is large, within its slice.
      expect(turnsAtListing).toEqual([0]);
      turns = 0;
      turnsAtListing = [];
      expectSameText(await streamed(value, { sliceMs: 1000 }), expected);
      expect(turnsAtListing).toHaveLength(1);
      expect(turnsAtListing[0]).toBeGreaterThan(0);
      // Measuring pauses the same way, and measures the same text.
      turns = 0;
      turnsAtListing = [];
      const measured = await measureJson(value);
      expect(measured.bytes).toBe(Buffer.byteLength(expected));
      expect(turnsAtListing[0]).toBeGreaterThan(0);
    } finally {
      ticking = false;
    }
  });

  it('keeps what user code produced counted as computed across that pause', async () => {
    const target = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, { nested: i, sign: -0 }]));
    const holder = {
      get many(): object {
        return target;
      },
    };
    // Produced by a getter, the object is computed depth 1 and its members depth 2 (-0 keeps them
    // from native JSON.stringify, so the walker enters each).
    const options = { maxComputedDepth: 1 };
    await expect(streamed(holder, options)).rejects.toThrow(/\$\.many\.k0: .*1/);
    await expect(streamed(holder, options)).rejects.toThrow(/\$\.many\.k0: .*1/);
    expectSameText(await streamed(holder, { maxComputedDepth: 2 }), jsonText(holder) as string);
  });

  it('keeps the writable buffer bounded by one chunk plus its highWaterMark with a slow consumer', async () => {
    const highWaterMark = 16;
    const chunkBytes = 512;
    let produced = 0;
    let consumed = 0;
    let maxAhead = 0;
    let maxBuffered = 0;
    const out = new Writable({
      highWaterMark,
      write(chunk: Buffer, _encoding, callback) {
        setTimeout(() => {
          consumed += chunk.length;
          callback();
        }, 1);
      },
    });
    const originalWrite = out.write.bind(out) as (chunk: Buffer) => boolean;
    out.write = ((chunk: Buffer) => {
      produced += chunk.length;
      const ok = originalWrite(chunk);
      maxBuffered = Math.max(maxBuffered, out.writableLength);
      maxAhead = Math.max(maxAhead, produced - consumed);
      return ok;
    }) as typeof out.write;
    const value = Array.from({ length: 3000 }, (_, i) => ({ id: i, label: `label-${i}` }));
    await writeJson(out, value, { chunkBytes });
    expect(produced).toBe(JSON.stringify(value).length);
    expect(maxBuffered).toBeGreaterThan(0);
    expect(maxBuffered).toBeLessThanOrEqual(chunkBytes + highWaterMark);
    expect(maxAhead).toBeLessThanOrEqual(chunkBytes + highWaterMark);
  });

  it('waits for drain first when the output is already backed up', async () => {
    const order: string[] = [];
    let release: (() => void) | undefined;
    const out = new Writable({
      highWaterMark: 4,
      write(chunk: Buffer, _encoding, callback) {
        order.push(chunk.toString());
        if (order.length === 1) release = callback;
        else callback();
      },
    });
    out.write(Buffer.from('previous'));
    const done = writeJson(out, [1, 2]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['previous']);
    release?.();
    await done;
    expect(order).toEqual(['previous', '[1,2]']);
  });

  it('stops writing promptly when the signal aborts', async () => {
    const { value, reads } = countedArray(200_000);
    const controller = new AbortController();
    let writes = 0;
    let writesAtAbort = -1;
    const out = new Writable({
      highWaterMark: 64,
      write(_chunk, _encoding, callback) {
        writes++;
        if (writes === 5) {
          controller.abort(new Error('client gave up'));
          writesAtAbort = writes;
        }
        setImmediate(callback);
      },
    });
    const err = (await writeJson(out, value, { chunkBytes: 1024, signal: controller.signal }).catch(
      (e: unknown) => e,
    )) as JsonStreamAbortError;
    expect(err).toBeInstanceOf(JsonStreamAbortError);
    expect(err.name).toBe('AbortError');
    expect(err.code).toBe('ABORT_ERR');
    expect((err.cause as Error).message).toBe('client gave up');
    expect(writes).toBe(writesAtAbort);
    const readsAtSettle = reads();
    expect(readsAtSettle).toBeLessThan(200_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reads()).toBe(readsAtSettle);
  });

  it('does nothing when the signal is already aborted', async () => {
    const sink = collector();
    const controller = new AbortController();
    controller.abort();
    await expect(writeJson(sink.out, { a: 1 }, { signal: controller.signal })).rejects.toBeInstanceOf(JsonStreamAbortError);
    expect(sink.writes()).toBe(0);
  });

  it('stops after an abort triggered synchronously by user code during a slice', async () => {
    const controller = new AbortController();
    const sink = collector();
    const value = Array.from({ length: 10_000 }, (_, i) => (i === 10 ? { toJSON: () => (controller.abort(), 'x') } : i));
    // Small chunks: one is complete right after the abort, and must not be written.
    await expect(writeJson(sink.out, value, { signal: controller.signal, chunkBytes: 64 })).rejects.toBeInstanceOf(JsonStreamAbortError);
    expect(sink.writes()).toBe(0);
  });

  it('does not write to an output destroyed synchronously during a slice', async () => {
    const sink = collector();
    let writeCalls = 0;
    const originalWrite = sink.out.write.bind(sink.out) as (chunk: Buffer) => boolean;
    sink.out.write = ((chunk: Buffer) => {
      writeCalls++;
      return originalWrite(chunk);
    }) as typeof sink.out.write;
    const value = Array.from({ length: 1000 }, (_, i) => (i === 10 ? { toJSON: () => (sink.out.destroy(), 'x') } : i));
    // 'close' is only emitted a tick after destroy(); the chunk completed meanwhile must not be written.
    await expect(writeJson(sink.out, value, { chunkBytes: 64 })).rejects.toBeInstanceOf(JsonStreamAbortError);
    expect(writeCalls).toBe(0);
  });

  it('rejects when the output is destroyed mid-stream and writes nothing more', async () => {
    let writes = 0;
    const out = new Writable({
      write(_chunk, _encoding, callback) {
        writes++;
        setImmediate(callback);
      },
    });
    const { value } = countedArray(100_000);
    const pending = writeJson(out, value, { chunkBytes: 512 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    out.destroy();
    const writesAtDestroy = writes;
    await expect(pending).rejects.toBeInstanceOf(JsonStreamAbortError);
    expect(writes).toBe(writesAtDestroy);
  });
});

describe('writeJson over a real socket', () => {
  let served: Listening;
  let handler: (req: http.IncomingMessage, res: http.ServerResponse) => void;

  beforeAll(async () => {
    served = await listen((req, res) => handler(req, res));
  });
  afterAll(() => served.close());

  it('sends the exact JSON.stringify bytes of a large value to a client that reads it all', async () => {
    const value = {
      rendered: 'global\n  maxconn 5000 # "quoted" ünïcödé 😀\n'.repeat(40_000),
      resources: Array.from({ length: 20_000 }, (_, i) => ({
        name: `ingress-${i}`,
        port: 8000 + i,
        weight: i / 7,
        created: new Date(i * 1000),
      })),
    };
    const expected = Buffer.from(JSON.stringify(value), 'utf8');
    let settled: Promise<void> | undefined;
    handler = (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      settled = writeJson(res, value).then(() => {
        res.end();
      });
    };
    // Megabytes written in cooperative slices: more than a plain request's bound on a busy machine.
    const { body } = await request(`${served.origin}/`, { timeoutMs: 30_000 });
    await settled;
    expect(body.length).toBe(expected.length);
    expect(body.equals(expected)).toBe(true);
    expect(JSON.parse(body.toString('utf8'))).toEqual(JSON.parse(expected.toString('utf8')));
  });

  it('settles and stops visiting the value when the client disconnects mid-stream', async () => {
    const total = 2_000_000;
    const { value, reads } = (() => {
      let count = 0;
      const element = { name: 'element', payload: 'p'.repeat(200) };
      const proxy = new Proxy(new Array<unknown>(total).fill(0), {
        get(target, property, receiver) {
          if (typeof property === 'string' && /^\d+$/.test(property)) {
            count++;
            return element;
          }
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
      return { value: proxy, reads: () => count };
    })();
    let outcome: Promise<unknown> | undefined;
    handler = (_req, res) => {
      outcome = writeJson(res, value).then(
        () => 'resolved',
        (e: unknown) => e,
      );
    };
    const res = await open(`${served.origin}/`);
    await new Promise<void>((resolve, reject) => {
      let received = 0;
      res.on('data', (c: Buffer) => {
        received += c.length;
        if (received > 256 * 1024) {
          res.destroy();
          resolve();
        }
      });
      res.on('error', () => undefined);
      setTimeout(() => reject(new Error('client never received data')), 30_000).unref();
    });
    const result = await outcome;
    expect(result).toBeInstanceOf(JsonStreamAbortError);
    const readsAtSettle = reads();
    expect(readsAtSettle).toBeLessThan(total);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads()).toBe(readsAtSettle);
  });
});

describe('serializeAtOnce', () => {
  // maxBytes makes the limit exact; the time budget is generous so that only maxBytes decides.
  const atOnce = (value: unknown, maxBytes: number) => {
    const answer = serializeAtOnce(value, { budgetMs: 1000, maxBytes });
    return answer && { bytes: answer.body.length, text: answer.body.toString('utf8') };
  };

  it('gives the exact text and UTF-8 size of plain data within the limit (native path)', () => {
    const value = { a: 'é😀', b: [1, null, new Date(0)], c: undefined };
    expect(atOnce(value, 1_000)).toEqual({ bytes: Buffer.byteLength(JSON.stringify(value)), text: JSON.stringify(value) });
  });

  it('gives the exact text of values with user code in them, running it once (walker path)', () => {
    let reads = 0;
    const value = {
      get counted(): number {
        reads++;
        return 1;
      },
      minusZero: -0,
      viaToJson: { toJSON: (key: string) => `key ${key}` },
    };
    const text = '{"counted":1,"minusZero":-0,"viaToJson":"key viaToJson"}';
    expect(atOnce(value, 1_000)).toEqual({ bytes: text.length, text });
    expect(reads).toBe(1);
  });

  it('answers undefined (stream it) past the limit without walking the whole value', () => {
    let reads = 0;
    const huge = new Proxy(new Array<unknown>(1_000_000).fill(0), {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) reads++;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    expect(atOnce(huge, 10_000)).toBeUndefined();
    expect(reads).toBeLessThan(20_000);
    expect(atOnce(new Array<number>(1_000_000).fill(0), 10_000)).toBeUndefined();
    expect(atOnce('x'.repeat(20_000), 10_000)).toBeUndefined();
  });

  it('stops on many skipped members even though they produce no bytes', () => {
    const sparse: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) sparse[`k${i}`] = undefined;
    expect(atOnce(sparse, 1_000)).toBeUndefined();
    expect(
      atOnce(
        {
          get lazy() {
            return sparse;
          },
        },
        1_000,
      ),
    ).toBeUndefined();
  });

  it('streams everything with a budget of 0 ms', () => {
    expect(serializeAtOnce({}, { budgetMs: 0 })).toBeUndefined();
    expect(serializeAtOnce(1, { budgetMs: 0 })).toBeUndefined();
  });

  it('throws the same clear errors for problems within the limit', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => atOnce(cyclic, 1_000)).toThrow('$.self: cycle');
    expect(() => atOnce({ n: 1n }, 1_000)).toThrow('$.n: BigInt is not JSON');
    expect(() => atOnce(undefined, 1_000)).toThrow('the value has no JSON form');
  });

  it('rejects unusable options', () => {
    expect(() => serializeAtOnce(1, { budgetMs: -1 })).toThrow(TypeError);
    expect(() => serializeAtOnce(1, { budgetMs: Number.POSITIVE_INFINITY })).toThrow(
      'serializeAtOnce: budgetMs must be a number from 0 to 1,000, got Infinity',
    );
    expect(() => serializeAtOnce(1, { budgetMs: 1, maxBytes: -1 })).toThrow(/maxBytes must be a number >= 0/);
    expect(() => serializeAtOnce(1, { budgetMs: 1, maxByte: 1 } as never)).toThrow(/did you mean "maxBytes"/);
  });
});

describe('SerializationRate', () => {
  it('starts cautious, learns from measured calls, and ignores calls too short to measure', () => {
    const rate = new SerializationRate();
    const first = rate.charsWithin(10);
    expect(first).toBe(1_000_000);
    rate.record(1_000, 0.001); // too short to teach anything
    expect(rate.charsWithin(10)).toBe(first);
    rate.record(4_000_000, 20); // the first measurement replaces the guess: 200 000 characters per ms
    expect(rate.rate).toBe(200_000);
    expect(rate.charsWithin(10)).toBe(2_000_000);
    rate.record(8_000_000, 20); // later ones are averaged in, a quarter each
    expect(rate.rate).toBe(250_000);
    for (let i = 0; i < 40; i++) rate.record(4_000_000, 20);
    expect(rate.rate).toBeCloseTo(200_000, -2);
  });

  it('keeps one measurement from teaching an absurd rate', () => {
    const rate = new SerializationRate();
    for (let i = 0; i < 100; i++) rate.record(10_000_000, 1e6); // a call stopped by a long collection
    expect(rate.rate).toBeCloseTo(20_000, -1);
    for (let i = 0; i < 100; i++) rate.record(10_000_000, 1e-3);
    expect(rate.rate).toBeCloseTo(1_000_000, -3);
  });
});

describe('values that user code generates while they are written', () => {
  /** An object whose getter builds a new one like it on every read: endless. */
  function endlessGetters(): object {
    return {
      get next(): object {
        return endlessGetters();
      },
    };
  }
  /** The same through toJSON(), and through a Proxy that invents a child for any key. */
  const endlessToJson = (): object => ({ toJSON: () => ({ next: endlessToJson() }) });
  const endlessProxy = (): object =>
    new Proxy(
      {},
      { ownKeys: () => ['next'], getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true }), get: () => endlessProxy() },
    );
  /** Two getters per level: finite depth, but 2^depth objects. */
  function doubling(depth: number): object {
    return depth === 0
      ? { leaf: 'x'.repeat(32) }
      : {
          get a(): object {
            return doubling(depth - 1);
          },
          get b(): object {
            return doubling(depth - 1);
          },
        };
  }

  it.each([
    ['getters', endlessGetters],
    ['toJSON()', endlessToJson],
    ['a Proxy', endlessProxy],
  ])('refuses an endless structure made by %s, naming the path, before writing a byte', async (_name, make) => {
    const sink = collector();
    const err = (await writeJson(sink.out, { plain: [1, 2], lazy: make() }).catch((e: unknown) => e)) as JsonSerializationError;
    expect(err).toBeInstanceOf(JsonSerializationError);
    expect(err.reason).toBe('too-deep');
    expect(err.message).toContain('nest deeper than 1000 levels');
    expect(err.path.startsWith('$.lazy')).toBe(true);
    expect(sink.writes()).toBe(0);
    await expect(measureJson({ lazy: make() })).rejects.toMatchObject({ reason: 'too-deep' });
    expect(() => serializeAtOnce({ lazy: make() }, { budgetMs: 1000 })).toThrow(/nest deeper than 1000 levels/);
  });

  it('bounds how much JSON user code may produce', async () => {
    const err = (await writeJson(collector().out, { lazy: doubling(30) }, { maxComputedBytes: 1_000_000 }).catch(
      (e: unknown) => e,
    )) as JsonSerializationError;
    expect(err).toBeInstanceOf(JsonSerializationError);
    expect(err.reason).toBe('too-large');
    expect(err.message).toContain('more than 1000000 characters');
    expect(DEFAULT_JSON_BOUNDS.maxComputedBytes).toBe(64 * 1024 * 1024);
  });

  it('writes finite computed values and deep plain data as they are', async () => {
    const value = { small: doubling(4), date: new Date(0), viaToJson: { toJSON: () => ({ ok: true }) } };
    expectSameText(await streamed(value), JSON.stringify(value));
    let deep: unknown = 'bottom';
    for (let i = 0; i < 20_000; i++) deep = { d: deep };
    expect((await streamed(deep)).length).toBe(20_000 * 6 + 8);
  });

  it('bounds the depth of plain data only where asked, and rejects bad bounds', async () => {
    let deep: unknown = 0;
    for (let i = 0; i < 101; i++) deep = [deep];
    await expect(streamed(deep, { maxDepth: 100 })).rejects.toMatchObject({
      reason: 'too-deep',
      message: expect.stringContaining('deeper than 100 levels'),
    });
    expect(await streamed(deep, { maxDepth: 101 })).toBe(`${'['.repeat(101)}0${']'.repeat(101)}`);
    await expect(streamed(1, { maxComputedDepth: 0 })).rejects.toThrow(/maxComputedDepth must be a number >= 1/);
  });
});
