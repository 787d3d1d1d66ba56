import { SubtreeProbe } from '../../lib/json-stream/probe';

const BUDGET = 16 * 1024;

/** A getter that counts its calls, as an enumerable own property of a fresh object. */
function withGetter(): { value: object; calls: () => number } {
  let calls = 0;
  const value = Object.defineProperty({ a: 1 }, 'computed', {
    enumerable: true,
    get(): number {
      calls++;
      return 2;
    },
  });
  return { value, calls: () => calls };
}

/** A proxy that counts every trap it runs. */
function countingProxy<T extends object>(target: T): { value: T; traps: () => number } {
  let traps = 0;
  const handler = new Proxy(
    {},
    {
      get(_target, trap: string) {
        return (...args: unknown[]): unknown => {
          traps++;
          return (Reflect as unknown as Record<string, (...a: unknown[]) => unknown>)[trap](...args);
        };
      },
    },
  );
  return { value: new Proxy(target, handler as ProxyHandler<T>), traps: () => traps };
}

describe('SubtreeProbe', () => {
  it('admits plain data within the budget and charges what it looked at', () => {
    const probe = new SubtreeProbe();
    const value = { name: 'web', ports: [80, 443], labels: { app: 'x' }, ok: true, none: null, gone: undefined, at: new Date(0) };
    const left = probe.measure(value, BUDGET);
    expect(left).toBeGreaterThanOrEqual(0);
    // The estimate is close to the real length (exact for everything but numbers).
    expect(BUDGET - left).toBeGreaterThanOrEqual(JSON.stringify(value).length - 10);
    expect(BUDGET - left).toBeLessThan(JSON.stringify(value).length + 40);
    expect(probe.nodes).toBe(11);
  });

  it('admits primitives, holes, null-prototype objects, class instances and functions without toJSON', () => {
    const probe = new SubtreeProbe();
    class Point {
      constructor(public x = 1) {}
    }
    for (const value of [
      's',
      1,
      true,
      null,
      undefined,
      Symbol('s'),
      () => 1,
      [1, , 3],
      Object.assign(Object.create(null) as object, { a: 1 }),
      new Point(),
      new Map(),
    ]) {
      expect(probe.measure(value, BUDGET)).toBeGreaterThanOrEqual(0);
    }
  });

  it('rejects values JSON.stringify would write differently, run user code for, or throw on', () => {
    const probe = new SubtreeProbe();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = { back: cyclic };
    let deep: unknown = 0;
    for (let i = 0; i < 70; i++) deep = [deep];
    for (const [why, value] of [
      ['BigInt', { n: [1n] }],
      ['boxed primitive', { n: new Number(1) }],
      ['own toJSON', { t: { toJSON: () => 1 } }],
      ['inherited toJSON', Object.create({ toJSON: () => 1 }) as object],
      ['toJSON on an array', Object.assign([1], { toJSON: () => 1 })],
      ['toJSON on a function', { f: Object.assign(() => 1, { toJSON: () => 1 }) }],
      ['Date with its own toJSON', Object.assign(new Date(0), { toJSON: () => 'x' })],
      ['Date subclass', new (class Stamp extends Date {})(0)],
      ['typed array', new Uint8Array(4)],
      ['cycle', cyclic],
      ['deeper than 64 levels', deep],
      ['over budget', { s: 'x'.repeat(BUDGET) }],
      ['array longer than the budget', new Array(BUDGET + 1)],
    ] as Array<[string, unknown]>) {
      expect([why, probe.measure(value, BUDGET) < 0]).toEqual([why, true]);
    }
  });

  it('tells a value that is only too large from one that can never be written natively', () => {
    const probe = new SubtreeProbe();
    expect(probe.measure({ s: 'x'.repeat(BUDGET) }, BUDGET)).toBeLessThan(0);
    expect(probe.refused).toBe(false);
    expect(probe.measure({ big: 'x'.repeat(100), n: 1n }, BUDGET)).toBeLessThan(0);
    expect(probe.refused).toBe(true);
    expect(probe.measure({ fine: 1 }, BUDGET)).toBeGreaterThanOrEqual(0);
    expect(probe.refused).toBe(false);
  });

  it('sees toJSON wherever JSON.stringify would: non-enumerable, null prototype, added to a built-in prototype later', () => {
    const probe = new SubtreeProbe();
    const hidden = Object.defineProperty({ a: 1 }, 'toJSON', { value: () => 1, enumerable: false });
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { toJSON: () => 1 });
    expect(probe.measure({ hidden }, BUDGET)).toBeLessThan(0);
    expect(probe.measure({ bare }, BUDGET)).toBeLessThan(0);
    for (const proto of [Object.prototype, Array.prototype]) {
      expect(probe.measure({ list: [{ a: 1 }] }, BUDGET)).toBeGreaterThanOrEqual(0);
      Object.defineProperty(proto, 'toJSON', { value: () => 'replaced', configurable: true, writable: true });
      try {
        expect(probe.measure({ list: [{ a: 1 }] }, BUDGET)).toBeLessThan(0);
        expect(probe.refused).toBe(true);
      } finally {
        delete (proto as { toJSON?: unknown }).toJSON;
      }
      expect(probe.measure({ list: [{ a: 1 }] }, BUDGET)).toBeGreaterThanOrEqual(0);
    }
  });

  it('rejects accessors and proxies without running their getters or traps', () => {
    const probe = new SubtreeProbe();
    const getter = withGetter();
    expect(probe.measure({ list: [getter.value] }, BUDGET)).toBeLessThan(0);
    expect(getter.calls()).toBe(0);

    let elementReads = 0;
    const array = Object.defineProperty([1, 2], 0, { enumerable: true, get: () => ++elementReads });
    expect(probe.measure({ array }, BUDGET)).toBeLessThan(0);
    expect(elementReads).toBe(0);

    const proxied = countingProxy({ a: 1 });
    expect(probe.measure({ p: proxied.value }, BUDGET)).toBeLessThan(0);
    const onChain = countingProxy({});
    expect(probe.measure([Object.create(onChain.value) as object], BUDGET)).toBeLessThan(0);
    expect(proxied.traps() + onChain.traps()).toBe(0);
  });

  it('leaves enumerable keys inherited from a prototype to the walker without reading them', () => {
    const probe = new SubtreeProbe();
    let inheritedReads = 0;
    const proto = Object.defineProperty({ plain: 1 }, 'lazy', {
      enumerable: true,
      get: () => ++inheritedReads,
    });
    expect(probe.measure({ child: Object.create(proto) as object }, BUDGET)).toBeLessThan(0);
    expect(probe.refused).toBe(true);
    expect(inheritedReads).toBe(0);
    // A setter without a getter reads as undefined, which JSON.stringify skips: no user code runs.
    const setterOnly = Object.defineProperty({ a: 1 }, 'sink', { enumerable: true, set: () => undefined });
    expect(probe.measure(setterOnly, BUDGET)).toBeGreaterThan(0);
  });

  it('names the containers that were open where it gave up, innermost first', () => {
    const probe = new SubtreeProbe();
    const inner = { n: 1n };
    const middle = [0, inner];
    const outer = { ok: { fine: 1 }, middle };
    expect(probe.measure(outer, BUDGET)).toBeLessThan(0);
    expect(probe.failedPath).toEqual([inner, middle, outer]);
    expect(probe.failedPath[0]).toBe(inner);
    // A later success clears it.
    expect(probe.measure({ fine: 1 }, BUDGET)).toBeGreaterThanOrEqual(0);
    expect(probe.failedPath).toEqual([]);
  });
});
