/**
 * Native histograms (lib/metrics/native-histogram.ts): the options, the bucket index, the
 * resolution reduction and, against the real client_golang (scripts/peers/prometheus/native-reference),
 * schema, zero bucket, count, sum, spans and deltas for many value sets.
 */
import { execFileSync } from 'node:child_process';
import {
  DEFAULT_NATIVE_MAX_BUCKETS,
  DEFAULT_NATIVE_ZERO_THRESHOLD,
  NativeHistogram,
  nativeBucketIndex,
  pickNativeSchema,
  resolveNativeHistogramOptions,
  type NativeHistogramOptions,
  type NativeSnapshot,
} from '../../lib/metrics/native-histogram';
import { describeWithBuiltPeer, peerBinary } from '../helpers/peer-binaries';
import { prng } from '../helpers/prng';

/** An observed value as the reference reads it: a number, or a special value spelled out. */
type Value = number | 'NaN' | '+Inf' | '-Inf' | '-0';

interface ReferenceCase {
  name: string;
  factor: number;
  zeroThreshold?: number;
  maxBuckets: number;
  values: Value[];
}

const SPECIAL: Record<Exclude<Value, number>, number> = { NaN: NaN, '+Inf': Infinity, '-Inf': -Infinity, '-0': -0 };
const toNumber = (value: Value): number => (typeof value === 'number' ? value : SPECIAL[value]);

/** The float64 `steps` units in the last place away from `value` (> 0). */
function ulps(value: number, steps: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  view.setBigUint64(0, view.getBigUint64(0) + BigInt(steps));
  return view.getFloat64(0);
}

function ours(c: ReferenceCase): NativeSnapshot {
  const options: NativeHistogramOptions = { bucketFactor: c.factor, maxBuckets: c.maxBuckets };
  if (c.zeroThreshold !== undefined) options.zeroThreshold = c.zeroThreshold;
  const histogram = new NativeHistogram(options);
  for (const value of c.values) histogram.observe(toNumber(value));
  return histogram.snapshot();
}

describe('native-histogram options', () => {
  test('defaults: factor 1.1 (schema 3), threshold 2^-128, 160 buckets', () => {
    expect(resolveNativeHistogramOptions(undefined, 'x')).toEqual({
      bucketFactor: 1.1,
      zeroThreshold: 2 ** -128,
      maxBuckets: 160,
      schema: 3,
    });
    expect(DEFAULT_NATIVE_ZERO_THRESHOLD).toBe(2.938735877055719e-39);
    expect(DEFAULT_NATIVE_MAX_BUCKETS).toBe(160);
  });

  test('the schema is the finest one whose factor does not exceed the bucket factor', () => {
    expect(pickNativeSchema(1.1)).toBe(3);
    expect(pickNativeSchema(1.5)).toBe(1);
    expect(pickNativeSchema(2)).toBe(0);
    expect(pickNativeSchema(4)).toBe(-1);
    expect(pickNativeSchema(1.0001)).toBe(8);
    expect(pickNativeSchema(65536)).toBe(-4);
    expect(pickNativeSchema(1e300)).toBe(-4);
    expect(() => pickNativeSchema(1)).toThrow(RangeError);
  });

  test.each([
    [{ bucketFactor: 1 }, /x\.bucketFactor must be a finite number > 1 .*got 1$/],
    [{ bucketFactor: Infinity }, /x\.bucketFactor .*got Infinity$/],
    [{ bucketFactor: '1.1' }, /x\.bucketFactor .*got "1\.1"$/],
    [{ zeroThreshold: -1 }, /x\.zeroThreshold must be a finite number >= 0; got -1$/],
    [{ zeroThreshold: NaN }, /x\.zeroThreshold .*got NaN$/],
    [{ maxBuckets: 0 }, /x\.maxBuckets must be an integer >= 1 \(0, no bound, is not allowed.*got 0$/],
    [{ maxBuckets: 2.5 }, /x\.maxBuckets must be an integer >= 1; got 2\.5$/],
    [{ maxBuckets: null }, /x\.maxBuckets .*got null$/],
    [{ schema: 3 }, /x\.schema is not a native-histogram option/],
  ])('%p is refused with a TypeError naming the option and the value', (options, message) => {
    expect(() => resolveNativeHistogramOptions(options as NativeHistogramOptions, 'x')).toThrow(TypeError);
    expect(() => resolveNativeHistogramOptions(options as NativeHistogramOptions, 'x')).toThrow(message);
    expect(() => new NativeHistogram(options as NativeHistogramOptions)).toThrow(/NativeHistogram options\./);
  });

  test('not an object', () => {
    expect(() => resolveNativeHistogramOptions(3 as NativeHistogramOptions, 'metrics.native')).toThrow(
      /^metrics\.native must be an object .*got 3$/,
    );
  });

  test('a resolved set is taken as is by the constructor', () => {
    const resolved = resolveNativeHistogramOptions({ bucketFactor: 2, maxBuckets: 4 }, 'x');
    expect(new NativeHistogram(resolved).schema).toBe(0);
  });
});

describe('native bucket index', () => {
  test('powers of two are upper bounds (inclusive) at every schema', () => {
    for (let schema = -4; schema <= 8; schema++) {
      expect(nativeBucketIndex(1, schema)).toBe(0);
      expect(nativeBucketIndex(-1, schema)).toBe(0);
      expect(nativeBucketIndex(ulps(1, 1), schema)).toBe(1);
    }
    expect(nativeBucketIndex(2, 3)).toBe(8);
    expect(nativeBucketIndex(2, 0)).toBe(1);
    expect(nativeBucketIndex(4, -1)).toBe(1);
    expect(nativeBucketIndex(5, -1)).toBe(2);
    expect(nativeBucketIndex(0.5, 0)).toBe(-1);
    expect(nativeBucketIndex(0.25, -1)).toBe(-1);
    expect(nativeBucketIndex(0.2, -1)).toBe(-1);
    expect(nativeBucketIndex(0.125, -1)).toBe(-1);
    expect(nativeBucketIndex(0.1, -1)).toBe(-1);
    expect(nativeBucketIndex(0.0625, -1)).toBe(-2);
    expect(nativeBucketIndex(0.05, -1)).toBe(-2);
  });

  test('subnormals, the largest double and infinity', () => {
    expect(nativeBucketIndex(Number.MIN_VALUE, 0)).toBe(-1074);
    expect(nativeBucketIndex(Number.MAX_VALUE, 0)).toBe(1024);
    expect(nativeBucketIndex(Infinity, 0)).toBe(1025);
    expect(nativeBucketIndex(-Infinity, -4)).toBe(nativeBucketIndex(-Number.MAX_VALUE, -4) + 1);
  });
});

describe('NativeHistogram', () => {
  test('an empty histogram: no-op span only with a zero threshold of 0', () => {
    expect(new NativeHistogram().snapshot()).toEqual({
      schema: 3,
      zeroThreshold: 2 ** -128,
      zeroCount: 0,
      count: 0,
      sum: 0,
      positiveSpans: [],
      positiveDeltas: [],
      negativeSpans: [],
      negativeDeltas: [],
    });
    expect(new NativeHistogram({ zeroThreshold: 0 }).snapshot().positiveSpans).toEqual([{ offset: 0, length: 0 }]);
  });

  test('gaps of up to two empty buckets stay inside a span; deltas run across spans', () => {
    const histogram = new NativeHistogram({ bucketFactor: 2 });
    // schema 0: 1 → 0, 2 → 1, 8 → 3 (gap of 1), 64 → 6 (gap of 2), 1024 → 10 (gap of 3: new span)
    for (const value of [1, 2, 2, 8, 64, 1024, 1024, 1024]) histogram.observe(value);
    const snapshot = histogram.snapshot();
    expect(snapshot.positiveSpans).toEqual([
      { offset: 0, length: 7 },
      { offset: 3, length: 1 },
    ]);
    expect(snapshot.positiveDeltas).toEqual([1, 1, -2, 1, -1, 0, 1, 2]);
  });

  test('NaN counts but fills no bucket; ±Inf go after ±MAX_VALUE', () => {
    const histogram = new NativeHistogram({ bucketFactor: 2 });
    for (const value of [NaN, Infinity, -Infinity, Number.MAX_VALUE, -0, 0]) histogram.observe(value);
    const snapshot = histogram.snapshot();
    expect(snapshot.count).toBe(6);
    expect(snapshot.sum).toBeNaN();
    expect(snapshot.zeroCount).toBe(2);
    expect(snapshot.positiveSpans).toEqual([{ offset: 1024, length: 2 }]);
    expect(snapshot.positiveDeltas).toEqual([1, 0]);
    expect(snapshot.negativeSpans).toEqual([{ offset: 1025, length: 1 }]);
  });

  test('more buckets than maxBuckets halves the resolution, one step per observation, never below -4', () => {
    const histogram = new NativeHistogram({ bucketFactor: 1.0001, maxBuckets: 2 });
    expect(histogram.schema).toBe(8);
    histogram.observe(1);
    histogram.observe(1.5);
    expect(histogram.schema).toBe(8);
    histogram.observe(3);
    expect(histogram.schema).toBe(7);
    for (let i = 0; i < 40; i++) histogram.observe(2 ** (i * 25 - 500));
    expect(histogram.schema).toBe(-4);
    expect(histogram.bucketCount).toBeLessThanOrEqual(266);
  });

  test('snapshots between observations do not change what later snapshots say', () => {
    const random = prng(11);
    const values = Array.from({ length: 3000 }, () => (random() < 0.3 ? -1 : 1) * Math.exp((random() - 0.5) * 30));
    const interleaved = new NativeHistogram({ maxBuckets: 40 });
    const fresh = (n: number) => {
      const histogram = new NativeHistogram({ maxBuckets: 40 });
      for (const value of values.slice(0, n)) histogram.observe(value);
      return histogram.snapshot();
    };
    values.forEach((value, i) => {
      interleaved.observe(value);
      if (i % 250 === 0) expect(interleaved.snapshot()).toEqual(fresh(i + 1));
    });
    expect(interleaved.snapshot()).toEqual(fresh(values.length));
  });

  test('memory stays bounded under a flood of distinct values', () => {
    const random = prng(7);
    const histogram = new NativeHistogram({ maxBuckets: 160 });
    for (let i = 0; i < 100_000; i++) histogram.observe((random() < 0.5 ? -1 : 1) * Math.exp((random() - 0.5) * 1400));
    expect(histogram.bucketCount).toBeLessThanOrEqual(266);
  });

  test('snapshot of a series with 160 buckets costs microseconds', () => {
    const histogram = new NativeHistogram({ bucketFactor: 1.0001, maxBuckets: 160 });
    for (let i = 0; i < 160; i++) histogram.observe(1 + i / 100);
    expect(histogram.bucketCount).toBeGreaterThanOrEqual(100);
    for (let i = 0; i < 2000; i++) histogram.snapshot();
    const rounds = 20_000;
    const started = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) histogram.snapshot();
    const micros = Number(process.hrtime.bigint() - started) / 1000 / rounds;
    console.log(`snapshot of ${histogram.bucketCount} buckets (schema ${histogram.schema}): ${micros.toFixed(2)} µs`);
    expect(micros).toBeLessThan(100);
  });
});

const REFERENCE = peerBinary('native-reference');

interface GoSpan {
  offset?: number;
  length?: number;
}
interface GoHistogram {
  sampleCount?: string;
  sampleSum?: number | string;
  schema?: number;
  zeroThreshold?: number | string;
  zeroCount?: string;
  negativeSpan?: GoSpan[];
  negativeDelta?: string[];
  positiveSpan?: GoSpan[];
  positiveDelta?: string[];
}

/** A protojson double: a number or "NaN", "Infinity", "-Infinity". */
function goDouble(value: number | string | undefined): number {
  if (value === undefined) return 0;
  return typeof value === 'number' ? value : Number(value);
}

function fromGo(metric: { histogram: GoHistogram }): NativeSnapshot {
  const h = metric.histogram;
  const spans = (list: GoSpan[] | undefined) => (list ?? []).map((span) => ({ offset: span.offset ?? 0, length: span.length ?? 0 }));
  return {
    schema: h.schema ?? 0,
    zeroThreshold: goDouble(h.zeroThreshold),
    zeroCount: Number(h.zeroCount ?? 0),
    count: Number(h.sampleCount ?? 0),
    sum: goDouble(h.sampleSum),
    positiveSpans: spans(h.positiveSpan),
    positiveDeltas: (h.positiveDelta ?? []).map(Number),
    negativeSpans: spans(h.negativeSpan),
    negativeDeltas: (h.negativeDelta ?? []).map(Number),
  };
}

/** JSON of a value for the reference: JSON has no NaN, infinities or -0. */
function spell(value: number): Value {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Object.is(value, -0)) return '-0';
  return value;
}

function referenceCases(): ReferenceCase[] {
  const cases: ReferenceCase[] = [];
  const factors = [
    1.1,
    1.5,
    2,
    4,
    1.0001,
    1.01,
    1.05,
    16,
    256,
    65536,
    1e6,
    Math.SQRT2,
    1.414213562373095,
    2 ** (1 / 4),
    2 ** (1 / 8),
    2 ** (1 / 256),
    1.2,
  ];
  // Random value sets from seeded generators, every factor, with and without resolution reduction.
  let seed = 1;
  for (const factor of factors) {
    for (const maxBuckets of [160, 20, 8]) {
      const random = prng(seed++);
      const values: Value[] = [];
      const n = 50 + Math.floor(random() * 400);
      for (let i = 0; i < n; i++) {
        const kind = random();
        if (kind < 0.5)
          values.push(Math.exp((random() - 0.3) * 12)); // latency-like
        else if (kind < 0.7) values.push(-Math.exp((random() - 0.5) * 40));
        else if (kind < 0.8) values.push(Math.floor(random() * 10));
        else if (kind < 0.9) values.push((random() < 0.5 ? -1 : 1) * Math.exp((random() - 0.5) * 1400));
        else values.push(random() * 1e-3);
      }
      cases.push({ name: `random seed ${seed - 1} factor ${factor} max ${maxBuckets}`, factor, maxBuckets, values });
    }
  }
  // Random options too.
  for (let i = 0; i < 30; i++) {
    const random = prng(1000 + i);
    const factor = 1 + random() ** 3 * 20;
    const maxBuckets = 1 + Math.floor(random() * 60);
    const zeroThreshold = random() < 0.3 ? 0 : random() < 0.5 ? random() * 0.01 : undefined;
    const values: Value[] = [];
    for (let j = 0; j < 300; j++) values.push((random() < 0.2 ? -1 : 1) * Math.exp((random() - 0.5) * 60));
    cases.push({ name: `random options seed ${1000 + i}`, factor, maxBuckets, zeroThreshold, values });
  }
  // Every bound of every positive schema (and its neighbours), at a few scales.
  for (let schema = 1; schema <= 8; schema++) {
    const values: Value[] = [];
    for (let j = 0; j < 2 ** schema; j++) {
      const bound = 2 ** (j / 2 ** schema);
      for (let step = -5; step <= 5; step++) {
        const value = ulps(bound, step);
        values.push(value, value * 2 ** -7, value * 2 ** 20, -value * 2 ** 3);
      }
    }
    cases.push({ name: `bounds of schema ${schema}`, factor: 2 ** (1.5 * 2 ** -schema), maxBuckets: 1_000_000, values });
  }
  // Powers of two and their neighbours at schemas <= 0.
  for (let schema = -4; schema <= 0; schema++) {
    const values: Value[] = [];
    for (let e = -60; e <= 60; e++) values.push(2 ** e, ulps(2 ** e, 1), ulps(2 ** e, -1), -(2 ** e));
    cases.push({ name: `powers of two at schema ${schema}`, factor: 2 ** (2 ** -schema), maxBuckets: 1_000_000, values });
  }
  // Near the zero threshold, zeros, subnormals.
  const t = 2 ** -128;
  const tiny: Value[] = [
    t,
    ulps(t, 1),
    ulps(t, -1),
    -t,
    -ulps(t, 1),
    0,
    '-0',
    5e-324,
    -5e-324,
    1e-310,
    1e-300,
    2 ** -1022,
    ulps(2 ** -1022, -1),
  ];
  for (const zeroThreshold of [undefined, 0, 1e-300, 0.001, 1]) {
    cases.push({
      name: `tiny values, zero threshold ${String(zeroThreshold)}`,
      factor: 1.1,
      zeroThreshold,
      maxBuckets: 160,
      values: [...tiny, 0.5, 1, 0.001, -0.001],
    });
  }
  // Huge values and infinities.
  const huge: Value[] = [Number.MAX_VALUE, -Number.MAX_VALUE, 1e308, 2 ** 1023, ulps(2 ** 1023, -1), '+Inf', '-Inf', '+Inf', 1e300];
  for (const factor of [1.1, 2, 1.0001, 65536])
    cases.push({ name: `huge values, factor ${factor}`, factor, maxBuckets: 160, values: huge });
  cases.push({ name: 'huge values, small bound', factor: 1.0001, maxBuckets: 3, values: [...huge, ...huge, 1, 2, 3] });
  // NaN and the exact values 1, 2, 2^(1/8).
  cases.push({ name: 'NaN only', factor: 1.1, maxBuckets: 160, values: ['NaN', 'NaN'] });
  cases.push({ name: 'NaN among others', factor: 1.1, maxBuckets: 160, values: [1, 'NaN', 2, 2 ** (1 / 8), 3] });
  cases.push({ name: 'infinities only', factor: 1.1, maxBuckets: 1, values: ['+Inf', '-Inf', '+Inf'] });
  cases.push({
    name: 'boundaries 1, 2, 2^(1/8)',
    factor: 1.1,
    maxBuckets: 160,
    values: [1, 2, 2 ** (1 / 8), 2 ** (2 / 8), -1, -2, 0.5, 4],
  });
  // Empty histograms and zero-only ones.
  for (const zeroThreshold of [undefined, 0, 0.5]) {
    cases.push({ name: `empty, zero threshold ${String(zeroThreshold)}`, factor: 1.1, zeroThreshold, maxBuckets: 160, values: [] });
    cases.push({ name: `zeros, zero threshold ${String(zeroThreshold)}`, factor: 1.1, zeroThreshold, maxBuckets: 1, values: [0, 0, '-0'] });
  }
  // Far-apart values that a halving barely merges, bucket bound 1 and 2.
  for (const maxBuckets of [1, 2, 8]) {
    const values: Value[] = [];
    for (let i = 0; i < 100; i++) values.push(2 ** (((i * 37) % 200) * 5 - 500) * (i % 3 === 0 ? -1 : 1));
    cases.push({ name: `sparse values, max ${maxBuckets}`, factor: 1.0001, maxBuckets, values });
  }
  // Gaps of exactly 1, 2 and 3 empty buckets, positive and negative, schema 0.
  cases.push({ name: 'gaps', factor: 2, maxBuckets: 160, values: [1, 4, 16, 128, 2048, 4096, -1, -4, -16, -128, -2048, 2 ** 20, 2 ** 20] });
  return cases;
}

describeWithBuiltPeer('native-reference')('native histograms against client_golang (native-reference)', () => {
  const cases = referenceCases();
  let reference: { histogram: GoHistogram }[] = [];

  beforeAll(() => {
    const input = JSON.stringify(
      cases.map((c) => ({
        factor: c.factor,
        zeroThreshold: c.zeroThreshold,
        maxBuckets: c.maxBuckets,
        values: c.values.map((v) => spell(toNumber(v))),
      })),
    );
    reference = JSON.parse(execFileSync(REFERENCE, [], { input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })) as {
      histogram: GoHistogram;
    }[];
  });

  test(`${cases.length} value sets: schema, zero bucket, count, sum, spans and deltas as client_golang`, () => {
    expect(reference).toHaveLength(cases.length);
    let reduced = 0;
    let multiSpan = 0;
    for (let i = 0; i < cases.length; i++) {
      const expected = fromGo(reference[i]);
      const actual = ours(cases[i]);
      if (actual.schema < pickNativeSchema(cases[i].factor)) reduced++;
      if (actual.positiveSpans.length > 1) multiSpan++;
      expect({ case: cases[i].name, snapshot: actual }).toEqual({ case: cases[i].name, snapshot: expected });
    }
    // The value sets did exercise resolution reduction and span splitting.
    expect(reduced).toBeGreaterThan(20);
    expect(multiSpan).toBeGreaterThan(20);
  });
});
