/**
 * The protobuf exposition encoder (lib/metrics/exposition/protobuf.ts): the wire primitives byte
 * by byte, the framing, and, against prometheus/common's expfmt decoder and client_model
 * (scripts/peers/prometheus/native-reference decode), that the bytes decode to exactly the
 * families that were encoded, native histograms from client_golang's own Write included; and with
 * the parser Prometheus scrapes with (native-reference scrape), that it reads the native
 * histograms as native ones, empty ones included.
 */
import { execFileSync } from 'node:child_process';
import {
  encodeFamily,
  encodeMetric,
  familyFraming,
  frameFamily,
  PROTOBUF_CONTENT_TYPE,
  varint,
  zigzag,
  type ProtoExemplar,
  type ProtoFamilyHeader,
  type ProtoLabel,
  type ProtoSeries,
} from '../../../lib/metrics/exposition/protobuf';
import { NativeHistogram, type NativeSnapshot } from '../../../lib/metrics/native-histogram';
import { describeWithBuiltPeer, peerBinary } from '../../helpers/peer-binaries';
import { prng } from '../../helpers/prng';

const bytes = (...list: number[]) => Buffer.from(list);
const double = (value: number) => {
  const buffer = Buffer.alloc(8);
  buffer.writeDoubleLE(value);
  return [...buffer];
};

describe('wire primitives', () => {
  test.each([
    [0, [0x00]],
    [1, [0x01]],
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [300, [0xac, 0x02]],
    [16383, [0xff, 0x7f]],
    [16384, [0x80, 0x80, 0x01]],
    [2 ** 31 - 1, [0xff, 0xff, 0xff, 0xff, 0x07]],
    [2 ** 32, [0x80, 0x80, 0x80, 0x80, 0x10]],
    [2 ** 53 - 1, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f]],
    [2 ** 53, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]],
    [2 ** 63, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]],
    [-1, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]],
    [-2, [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]],
    [-(2 ** 53), [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0xf0, 0xff, 0x01]],
  ])('varint %p', (value, expected) => {
    expect([...varint(value)]).toEqual(expected);
  });

  test('varints agree with a bigint reference for every 7-bit boundary', () => {
    for (let bits = 0; bits <= 53; bits++) {
      for (const value of [2 ** bits - 1, 2 ** bits]) {
        expect(varint(value)).toEqual(varint(BigInt(value)));
      }
    }
  });

  test.each([
    [0, 0],
    [-1, 1],
    [1, 2],
    [-2, 3],
    [2, 4],
    [-8179, 16357],
    [2 ** 31 - 1, 2 ** 32 - 2],
    [-(2 ** 31), 2 ** 32 - 1],
    [2 ** 53 - 1, 2 ** 54 - 2],
    [-(2 ** 53 - 1), 2n ** 54n - 3n],
  ])('zigzag %p → %p', (value, expected) => {
    expect(zigzag(value)).toBe(expected);
  });

  test('a gauge with one label, byte by byte: the metric field (4) of a family', () => {
    expect(encodeMetric({ labels: [{ name: 'a', value: 'b' }], gauge: { value: 1 } })).toEqual(
      bytes(0x22, 0x13, 0x0a, 0x06, 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x12, 0x09, 0x09, ...double(1)),
    );
  });

  test('negative span offsets and deltas are ZigZag (sint32/sint64)', () => {
    const native: NativeSnapshot = {
      schema: -1,
      zeroThreshold: 0,
      zeroCount: 0,
      count: 1,
      sum: 0.1,
      positiveSpans: [{ offset: -3, length: 2 }],
      positiveDeltas: [1, -1],
      negativeSpans: [],
      negativeDeltas: [],
    };
    const body = encodeMetric({ labels: [], histogram: { count: 1, sum: 0.1, buckets: [], native } });
    const histogram = [
      ...[0x08, 0x01], // sample_count 1
      ...[0x11, ...double(0.1)], // sample_sum
      ...[0x28, 0x01], // schema -1 → 1
      ...[0x31, ...double(0)], // zero_threshold
      ...[0x38, 0x00], // zero_count
      ...[0x62, 0x04, 0x08, 0x05, 0x10, 0x02], // positive_span {offset -3 → 5, length 2}
      ...[0x68, 0x02, 0x68, 0x01], // positive_delta 1 → 2, -1 → 1
    ];
    expect(body).toEqual(bytes(0x22, histogram.length + 2, 0x3a, histogram.length, ...histogram));
  });

  test('the framing: length prefix and header, each series as encoded (not a copy), unit last', () => {
    const header: ProtoFamilyHeader = { name: 'x', help: 'h', type: 'gauge', unit: 'seconds' };
    const metrics = [
      encodeMetric({ labels: [], gauge: { value: 2 } }),
      encodeMetric({ labels: [{ name: 'l', value: 'v'.repeat(200) }], gauge: { value: 3 } }),
    ];
    const pieces = frameFamily(header, metrics);
    expect(pieces).toHaveLength(4);
    expect(pieces[1]).toBe(metrics[0]);
    expect(pieces[2]).toBe(metrics[1]);
    expect([...metrics[1].subarray(0, 3)]).toEqual([0x22, ...varint(metrics[1].length - 3)]);
    const fields = [0x0a, 0x01, 0x78, 0x12, 0x01, 0x68, 0x18, 0x01];
    const unit = [0x2a, 0x07, ...Buffer.from('seconds')];
    const message = [...fields, ...metrics[0], ...metrics[1], ...unit];
    expect([...Buffer.concat(pieces)]).toEqual([...varint(message.length), ...message]);
    expect(encodeFamily(header, [])).toEqual(bytes(fields.length + unit.length, ...fields, ...unit));
    expect(encodeFamily({ name: 'x', help: '', type: 'counter' }, [])).toEqual(bytes(7, 0x0a, 0x01, 0x78, 0x12, 0x00, 0x18, 0x00));
  });

  test('familyFraming: the same head and tail from the series length alone', () => {
    const header: ProtoFamilyHeader = { name: 'ünits', help: 'h'.repeat(300), type: 'summary', unit: 'bytes' };
    const metrics = Array.from({ length: 50 }, (_, i) =>
      encodeMetric({ labels: [{ name: 'i', value: String(i) }], untyped: { value: i } }),
    );
    const length = metrics.reduce((sum, metric) => sum + metric.length, 0);
    const { head, tail } = familyFraming(header, length);
    expect(Buffer.concat([head, ...metrics, tail ?? Buffer.alloc(0)])).toEqual(Buffer.concat(frameFamily(header, metrics)));
    expect(frameFamily(header, metrics, length)).toEqual(frameFamily(header, metrics));
    expect(familyFraming({ name: 'x', help: '', type: 'gauge' }, 0).tail).toBeUndefined();
    expect(() => familyFraming(header, -1)).toThrow(RangeError);
  });

  test('long strings and nested messages of 128 bytes and more get multi-byte lengths', () => {
    const value = 'é'.repeat(10_000); // 20 000 bytes: a three-byte length
    const field = encodeMetric({ labels: [{ name: 'n', value }], untyped: { value: 0 } });
    expect([...field.subarray(0, 4)]).toEqual([0x22, ...varint(field.length - 4)]);
    const body = field.subarray(4);
    expect([...body.subarray(0, 4)]).toEqual([0x0a, ...varint(3 + 1 + 3 + 20_000)]);
    expect([...body.subarray(4, 11)]).toEqual([0x0a, 0x01, 0x6e, 0x12, ...varint(20_000)]);
    expect(body.subarray(11, 20_011).toString('utf8')).toBe(value);
    expect([...body.subarray(20_011)]).toEqual([0x2a, 0x09, 0x09, ...double(0)]);
  });

  test('counts must be unsigned safe integers, timestamps finite', () => {
    expect(() => encodeMetric({ labels: [], summary: { count: -1, sum: 0, quantiles: [] } })).toThrow(RangeError);
    expect(() => encodeMetric({ labels: [], summary: { count: 1.5, sum: 0, quantiles: [] } })).toThrow(RangeError);
    expect(() => encodeMetric({ labels: [], counter: { value: 1, createdMs: NaN } })).toThrow(RangeError);
    expect(() => frameFamily({ name: 'x', help: '', type: 'toString' as 'gauge' }, [])).toThrow(TypeError);
  });

  test('the content type', () => {
    expect(PROTOBUF_CONTENT_TYPE).toBe('application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited');
  });
});

const REFERENCE = peerBinary('native-reference');

/** What `native-reference decode` prints: protojson of each MetricFamily. */
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function decode(body: Buffer): Json[] {
  return JSON.parse(execFileSync(REFERENCE, ['decode'], { input: body, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })) as Json[];
}

interface Scraped {
  kind: 'series' | 'histogram';
  labels: string;
  value?: number | string;
  schema?: number;
  zeroThreshold?: number | string;
  zeroCount?: number;
  count?: number;
  sum?: number | string;
  positiveSpans?: { offset: number; length: number }[];
  positiveDeltas?: number[];
  negativeSpans?: { offset: number; length: number }[];
  negativeDeltas?: number[];
}

function scrape(body: Buffer): Scraped[] {
  return JSON.parse(execFileSync(REFERENCE, ['scrape'], { input: body, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })) as Scraped[];
}

/** Populated buckets of spans and deltas: `index:count` in order (how they are split in spans aside). */
function buckets(spans: readonly { offset: number; length: number }[] = [], deltas: readonly number[] = []): string[] {
  const out: string[] = [];
  let index = 0;
  let count = 0;
  let d = 0;
  for (const span of spans) {
    index += span.offset;
    for (let i = 0; i < span.length; i++, index++) {
      count += deltas[d++];
      if (count !== 0) out.push(`${index}:${count}`);
    }
  }
  return out;
}

/** A scraped histogram with its buckets expanded: Prometheus' parser compacts spans (drops empty buckets), which changes the layout, not the buckets. */
function expanded(entry: Scraped): object {
  const { positiveSpans, positiveDeltas, negativeSpans, negativeDeltas, ...rest } = entry;
  return { ...rest, positive: buckets(positiveSpans, positiveDeltas), negative: buckets(negativeSpans, negativeDeltas) };
}

/** What Prometheus' parser should read for a native histogram series, expanded (its JSON leaves out zero counts). */
function scrapedNative(labels: string, histogram: { count: number; sum: number }, n: NativeSnapshot): object {
  const float = (value: number) => (Number.isNaN(value) ? 'NaN' : value === Infinity ? '+Inf' : value === -Infinity ? '-Inf' : value);
  return {
    kind: 'histogram',
    labels,
    schema: n.schema,
    zeroThreshold: float(n.zeroThreshold),
    ...(n.zeroCount > 0 ? { zeroCount: n.zeroCount } : {}),
    ...(histogram.count > 0 ? { count: histogram.count } : {}),
    sum: float(histogram.sum),
    positive: buckets(n.positiveSpans, n.positiveDeltas),
    negative: buckets(n.negativeSpans, n.negativeDeltas),
  };
}

/** A double as protojson writes it. */
function pjDouble(value: number): number | string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return value;
}

/** A google.protobuf.Timestamp as protojson writes it (RFC 3339, 0, 3, 6 or 9 fraction digits). */
function pjTimestamp(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  const whole = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (nanos === 0) return `${whole}Z`;
  const digits = String(nanos).padStart(9, '0');
  const fraction = nanos % 1e6 === 0 ? digits.slice(0, 3) : nanos % 1e3 === 0 ? digits.slice(0, 6) : digits;
  return `${whole}.${fraction}Z`;
}

const pjLabels = (labels: readonly ProtoLabel[]): { [key: string]: Json } =>
  labels.length > 0 ? { label: labels.map((l) => ({ name: l.name, value: l.value })) } : {};

function pjExemplar(exemplar: ProtoExemplar): Json {
  return {
    ...pjLabels(exemplar.labels),
    value: pjDouble(exemplar.value),
    ...(exemplar.timestampMs !== undefined ? { timestamp: pjTimestamp(exemplar.timestampMs) } : {}),
  };
}

/** The protojson a series should decode to, written from the ProtoSeries by hand (the oracle). */
function pjSeries(series: ProtoSeries): Json {
  const out: { [key: string]: Json } = { ...pjLabels(series.labels) };
  if (series.counter) {
    out.counter = {
      value: pjDouble(series.counter.value),
      ...(series.counter.exemplar ? { exemplar: pjExemplar(series.counter.exemplar) } : {}),
      ...(series.counter.createdMs !== undefined ? { createdTimestamp: pjTimestamp(series.counter.createdMs) } : {}),
    };
  }
  if (series.gauge) out.gauge = { value: pjDouble(series.gauge.value) };
  if (series.untyped) out.untyped = { value: pjDouble(series.untyped.value) };
  if (series.summary) {
    const s = series.summary;
    out.summary = {
      sampleCount: String(s.count),
      sampleSum: pjDouble(s.sum),
      ...(s.quantiles.length > 0
        ? { quantile: s.quantiles.map((q) => ({ quantile: pjDouble(q.quantile), value: pjDouble(q.value) })) }
        : {}),
      ...(s.createdMs !== undefined ? { createdTimestamp: pjTimestamp(s.createdMs) } : {}),
    };
  }
  if (series.timestampMs !== undefined) out.timestampMs = String(series.timestampMs);
  if (series.histogram) {
    const h = series.histogram;
    const histogram: { [key: string]: Json } = { sampleCount: String(h.count), sampleSum: pjDouble(h.sum) };
    if (h.buckets.length > 0) {
      histogram.bucket = h.buckets.map((b) => ({
        cumulativeCount: String(b.cumulativeCount),
        upperBound: pjDouble(b.upperBound),
        ...(b.exemplar ? { exemplar: pjExemplar(b.exemplar) } : {}),
      }));
    }
    if (h.createdMs !== undefined) histogram.createdTimestamp = pjTimestamp(h.createdMs);
    const n = h.native;
    if (n) {
      histogram.schema = n.schema;
      histogram.zeroThreshold = pjDouble(n.zeroThreshold);
      histogram.zeroCount = String(n.zeroCount);
      const spans = (list: NativeSnapshot['positiveSpans']) => list.map((s) => ({ offset: s.offset, length: s.length }));
      if (n.negativeSpans.length > 0) histogram.negativeSpan = spans(n.negativeSpans);
      if (n.negativeDeltas.length > 0) histogram.negativeDelta = n.negativeDeltas.map(String);
      if (n.positiveSpans.length > 0) histogram.positiveSpan = spans(n.positiveSpans);
      if (n.positiveDeltas.length > 0) histogram.positiveDelta = n.positiveDeltas.map(String);
    }
    if (h.exemplars && h.exemplars.length > 0) histogram.exemplars = h.exemplars.map(pjExemplar);
    out.histogram = histogram;
  }
  return out;
}

const TYPE_NAMES = {
  counter: 'COUNTER',
  gauge: 'GAUGE',
  summary: 'SUMMARY',
  untyped: 'UNTYPED',
  histogram: 'HISTOGRAM',
  gaugehistogram: 'GAUGE_HISTOGRAM',
} as const;

function pjFamily(header: ProtoFamilyHeader, series: readonly ProtoSeries[]): Json {
  return {
    name: header.name,
    help: header.help,
    type: TYPE_NAMES[header.type],
    ...(series.length > 0 ? { metric: series.map(pjSeries) } : {}),
    ...(header.unit ? { unit: header.unit } : {}),
  };
}

function native(values: readonly number[], options = {}): NativeSnapshot {
  const histogram = new NativeHistogram(options);
  for (const value of values) histogram.observe(value);
  return histogram.snapshot();
}

type Family = [ProtoFamilyHeader, ProtoSeries[]];

function families(): Family[] {
  const traceExemplar: ProtoExemplar = {
    labels: [{ name: 'trace_id', value: '4bf92f3577b34da6a3ce929d0e0e4736' }],
    value: 0.25,
    timestampMs: 1_764_240_000_123,
  };
  const withUtf8: ProtoLabel[] = [
    { name: 'controller', value: 'ingréss ✓ 控制器 🚀' },
    { name: 'empty', value: '' },
    { name: 'quote', value: 'a"b\\c\nd' },
  ];
  const nativeValues = [0.001, 0.002, 0.5, 1, 1, 2, 3.5, -0.25, 0, 1e6, Infinity, NaN];
  return [
    [
      { name: 'reconciles_total', help: 'Reconciliations, with exemplar and created timestamp.', type: 'counter' },
      [
        { labels: [{ name: 'result', value: 'ok' }], counter: { value: 42, exemplar: traceExemplar, createdMs: 1_764_000_000_000 } },
        { labels: [{ name: 'result', value: 'error' }], counter: { value: 0, createdMs: 1_764_000_000_000.5 } },
        { labels: withUtf8, counter: { value: 1e21, exemplar: { labels: [], value: -1 } } },
      ],
    ],
    [
      { name: 'queue_depth', help: '', type: 'gauge', unit: 'items' },
      [
        { labels: [{ name: 'q', value: 'nan' }], gauge: { value: NaN } },
        { labels: [{ name: 'q', value: 'inf' }], gauge: { value: Infinity } },
        { labels: [{ name: 'q', value: '-inf' }], gauge: { value: -Infinity } },
        { labels: [{ name: 'q', value: 'neg zero' }], gauge: { value: -0 } },
        { labels: [{ name: 'q', value: 'min' }], gauge: { value: Number.MIN_VALUE } },
        { labels: [{ name: 'q', value: 'max' }], gauge: { value: -Number.MAX_VALUE }, timestampMs: 1_764_240_000_000 },
        { labels: [{ name: 'q', value: 'old' }], gauge: { value: 1 }, timestampMs: -1 },
      ],
    ],
    [
      { name: 'mystery', help: 'Untyped, and labels long enough for multi-byte lengths.', type: 'untyped' },
      [
        { labels: withUtf8, untyped: { value: 3.25 } },
        { labels: [{ name: 'long', value: 'ü'.repeat(5000) + '∞'.repeat(50) }], untyped: { value: -2 } },
      ],
    ],
    [
      { name: 'rpc_seconds', help: 'A summary.', type: 'summary', unit: 'seconds' },
      [
        {
          labels: [],
          summary: {
            count: 2 ** 53 - 1,
            sum: 12.5,
            quantiles: [
              { quantile: 0.5, value: 0.1 },
              { quantile: 0.99, value: NaN },
            ],
            createdMs: 1_700_000_000_001,
          },
        },
        { labels: [{ name: 'x', value: 'empty' }], summary: { count: 0, sum: 0, quantiles: [] } },
      ],
    ],
    [
      { name: 'reconcile_seconds', help: 'Classic and native buckets with exemplars.', type: 'histogram' },
      [
        {
          labels: [{ name: 'controller', value: 'ingress' }],
          histogram: {
            count: 12,
            sum: NaN,
            buckets: [
              { upperBound: 0.1, cumulativeCount: 4 },
              { upperBound: 1, cumulativeCount: 6, exemplar: traceExemplar },
              { upperBound: 10, cumulativeCount: 8 },
              {
                upperBound: Infinity,
                cumulativeCount: 12,
                exemplar: { labels: [{ name: 'trace_id', value: 'inf' }], value: Infinity, timestampMs: 1 },
              },
            ],
            createdMs: 1_764_000_000_000,
            native: native(nativeValues),
            exemplars: [traceExemplar, { labels: [{ name: 'trace_id', value: 'b' }], value: -0.25, timestampMs: 1_764_240_000_123.456789 }],
          },
        },
        {
          labels: [{ name: 'controller', value: 'empty native, threshold 0' }],
          histogram: { count: 0, sum: 0, buckets: [], native: native([], { zeroThreshold: 0 }) },
        },
        {
          labels: [{ name: 'controller', value: 'empty native, default threshold' }],
          histogram: { count: 0, sum: 0, buckets: [], native: native([]) },
        },
        {
          labels: [{ name: 'controller', value: 'hand-made empty native without span' }],
          histogram: {
            count: 0,
            sum: 0,
            buckets: [],
            native: {
              schema: 3,
              zeroThreshold: 0,
              zeroCount: 0,
              count: 0,
              sum: 0,
              positiveSpans: [],
              positiveDeltas: [],
              negativeSpans: [],
              negativeDeltas: [],
            },
          },
        },
        {
          labels: [{ name: 'controller', value: 'classic only' }],
          histogram: { count: 3, sum: 3, buckets: [{ upperBound: 1, cumulativeCount: 3 }] },
        },
      ],
    ],
    [
      { name: 'pending_seconds', help: 'A gauge histogram.', type: 'gaugehistogram' },
      [{ labels: [], histogram: { count: 3, sum: -1, buckets: [], native: native([-1, -2, 2], { bucketFactor: 4 }) } }],
    ],
    [{ name: 'no_series', help: 'A family without series.', type: 'counter' }, []],
  ];
}

describeWithBuiltPeer('native-reference')('protobuf exposition decoded by expfmt (native-reference decode)', () => {
  test('every kind of family decodes to exactly what was encoded', () => {
    const list = families();
    const body = Buffer.concat(list.map(([header, series]) => encodeFamily(header, series)));
    const expected = list.map(([header, series]) => pjFamily(header, series));
    // The hand-made empty native histogram gets the no-op span.
    const histogram = (expected[4] as { metric: { histogram: { [key: string]: Json } }[] }).metric[3].histogram;
    histogram.positiveSpan = [{ offset: 0, length: 0 }];
    expect(decode(body)).toEqual(expected);
  });

  test('framed piece by piece (series encoded one at a time) and many random native histograms', () => {
    const random = prng(42);
    const header: ProtoFamilyHeader = { name: 'random_seconds', help: 'Random native histograms.', type: 'histogram' };
    const series: ProtoSeries[] = [];
    for (let i = 0; i < 200; i++) {
      const values = Array.from({ length: Math.floor(random() * 300) }, () => (random() < 0.2 ? -1 : 1) * Math.exp((random() - 0.5) * 40));
      const snapshot = native(values, {
        bucketFactor: 1 + random(),
        maxBuckets: 1 + Math.floor(random() * 200),
        zeroThreshold: random() < 0.2 ? 0 : 1e-6,
      });
      series.push({
        labels: [{ name: 'i', value: String(i) }],
        histogram: { count: snapshot.count, sum: snapshot.sum, buckets: [], native: snapshot },
      });
    }
    const pieces = frameFamily(header, series.map(encodeMetric));
    expect(decode(Buffer.concat(pieces))).toEqual([pjFamily(header, series)]);
  });

  test("Prometheus' scrape parser reads every native histogram as native, empty ones included, and classic ones as series", () => {
    const list = families();
    const entries = scrape(Buffer.concat(list.map(([header, series]) => encodeFamily(header, series))));
    const histograms = entries.filter((entry) => entry.kind === 'histogram').map(expanded);
    const [, reconcile] = list[4];
    const [, pending] = list[5];
    const expected = [
      ...reconcile
        .slice(0, 4)
        .map((series) =>
          scrapedNative(
            `{__name__="reconcile_seconds", controller="${series.labels[0].value}"}`,
            series.histogram!,
            series.histogram!.native!,
          ),
        ),
      scrapedNative('{__name__="pending_seconds"}', pending[0].histogram!, pending[0].histogram!.native!),
    ];
    expect(histograms).toEqual(expected);
    const classic = entries.filter((entry) => entry.labels.includes('classic only')).map((entry) => [entry.labels, entry.value]);
    expect(classic).toEqual([
      ['{__name__="reconcile_seconds_count", controller="classic only"}', 3],
      ['{__name__="reconcile_seconds_sum", controller="classic only"}', 3],
      ['{__name__="reconcile_seconds_bucket", controller="classic only", le="1.0"}', 3],
      ['{__name__="reconcile_seconds_bucket", controller="classic only", le="+Inf"}', 3],
    ]);
    expect(entries.find((entry) => entry.labels.includes('queue_depth') && entry.labels.includes('"nan"'))?.value).toBe('NaN');
    expect(entries.find((entry) => entry.labels.includes('mystery') && entry.labels.includes('🚀'))?.value).toBe(3.25);
  });

  test("Prometheus' scrape parser reads random native histograms exactly as encoded", () => {
    const random = prng(9);
    const series: ProtoSeries[] = [];
    for (let i = 0; i < 100; i++) {
      const values = Array.from({ length: Math.floor(random() * 500) }, () => (random() < 0.3 ? -1 : 1) * Math.exp((random() - 0.5) * 50));
      const snapshot = native(values, {
        bucketFactor: 1 + random() * 3,
        maxBuckets: 1 + Math.floor(random() * 160),
        zeroThreshold: random() < 0.3 ? 0 : 1e-9,
      });
      series.push({
        labels: [{ name: 'i', value: String(i) }],
        histogram: { count: snapshot.count, sum: snapshot.sum, buckets: [], native: snapshot },
      });
    }
    const entries = scrape(encodeFamily({ name: 'random', help: '', type: 'histogram' }, series));
    expect(entries.map(expanded)).toEqual(
      series.map((s, i) => scrapedNative(`{__name__="random", i="${i}"}`, s.histogram!, s.histogram!.native!)),
    );
  });

  test("a native histogram encoded here decodes to what client_golang's own Write produced for the same observations", () => {
    const random = prng(3);
    const cases = Array.from({ length: 20 }, (_, i) => ({
      factor: [1.1, 1.0001, 2, 4, 1.5][i % 5],
      maxBuckets: [160, 8, 20, 1][i % 4],
      values: Array.from({ length: 100 + i * 20 }, () => (random() < 0.25 ? -1 : 1) * Math.exp((random() - 0.4) * 20)),
    }));
    const written = JSON.parse(execFileSync(REFERENCE, [], { input: JSON.stringify(cases), encoding: 'utf8' })) as {
      histogram: { [key: string]: Json };
    }[];
    const header: ProtoFamilyHeader = { name: 'reference', help: 'The reference histogram.', type: 'histogram' };
    const series: ProtoSeries[] = cases.map((c) => {
      const snapshot = native(c.values, { bucketFactor: c.factor, maxBuckets: c.maxBuckets });
      return { labels: [], histogram: { count: snapshot.count, sum: snapshot.sum, buckets: [], native: snapshot } };
    });
    const decoded = decode(encodeFamily(header, series))[0] as { metric: { histogram: { [key: string]: Json } }[] };
    decoded.metric.forEach((metric, i) => {
      const theirs = { ...written[i].histogram };
      delete theirs.bucket;
      delete theirs.createdTimestamp;
      expect(metric.histogram).toEqual(theirs);
    });
  });
});
