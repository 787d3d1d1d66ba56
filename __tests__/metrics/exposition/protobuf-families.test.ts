/**
 * The protobuf exposition of whole registries (lib/metrics/exposition/protobuf.ts's encoder of the model), read
 * back with prometheus/common's own decoder (scripts/peers/prometheus/native-reference decode): on
 * every corpus registry and on seeded random ones, the protobuf answer holds exactly the samples
 * of the text answer, label for label and value for value (NaN and ±Inf included); the package's
 * histograms carry native buckets when asked, counting what their classic buckets count, through
 * reset(), remove() and timers; the answer is negotiated only when asked for by name, sliced like
 * text, and gzip-compressed.
 */
import { execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { Histogram, Registry, type RegistryContentType } from 'prom-client';
import { createControllerMetrics } from '../../../lib/metrics';
import { CARRIED_EXEMPLARS } from '../../../lib/metrics/exemplar-store';
import { PROTOBUF_CONTENT_TYPE, renderExposition } from '../../../lib/metrics/exposition';
import { describeWithBuiltPeer, peerBinary } from '../../helpers/peer-binaries';
import { requestApp } from '../../helpers/http';
import { metricsApp } from '../helpers/server';
import { parseExposition } from '../helpers/exposition-parser';
import { CORPUS, randomCase, type Build } from './corpus';

const decoder = peerBinary('native-reference');
const describeDecoded = describeWithBuiltPeer('native-reference');

const PROTOBUF_ACCEPT = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited';

/** protojson of one decoded family, as far as these tests read it. */
interface DecodedFamily {
  name: string;
  help?: string;
  type?: string;
  metric?: DecodedMetric[];
}

/** protojson of one decoded series. */
interface DecodedMetric {
  label?: Array<{ name: string; value: string }>;
  counter?: { value?: number | string; exemplar?: unknown; createdTimestamp?: string };
  gauge?: { value?: number | string };
  untyped?: { value?: number | string };
  summary?: {
    sampleCount?: string;
    sampleSum?: number | string;
    quantile?: Array<{ quantile?: number | string; value?: number | string }>;
  };
  histogram?: {
    sampleCount?: string;
    sampleSum?: number | string;
    bucket?: Array<{ cumulativeCount?: string; upperBound?: number | string }>;
    schema?: number;
    zeroCount?: string;
    positiveSpan?: Array<{ offset?: number; length?: number }>;
    positiveDelta?: string[];
    exemplars?: Array<{ label: Array<{ name: string; value: string }>; value: number }>;
    createdTimestamp?: string;
  };
}

function decode(body: Buffer): DecodedFamily[] {
  return JSON.parse(execFileSync(decoder, ['decode'], { input: body, maxBuffer: 256 * 1024 * 1024 }).toString('utf8')) as DecodedFamily[];
}

/** protojson's double: a number, or "NaN" / "Infinity" / "-Infinity". */
function double(value: number | string | undefined): number {
  if (value === undefined) return 0;
  return typeof value === 'number' ? value : Number(value);
}

/** One sample as text writes it: `name{sorted labels} value`, NaN spelled NaN. */
function sampleLine(name: string, labels: Record<string, string>, value: number): string {
  const pairs = Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(',');
  return `${name}{${pairs}} ${Number.isNaN(value) ? 'NaN' : String(value)}`;
}

/** The samples the decoded families hold, as text 0.0.4 names them. */
function samplesOfProtobuf(families: readonly DecodedFamily[]): string[] {
  const lines: string[] = [];
  for (const family of families) {
    for (const metric of family.metric ?? []) {
      const labels = Object.fromEntries((metric.label ?? []).map(({ name, value }) => [name, value]));
      if (metric.counter) lines.push(sampleLine(family.name, labels, double(metric.counter.value)));
      if (metric.gauge) lines.push(sampleLine(family.name, labels, double(metric.gauge.value)));
      if (metric.untyped) lines.push(sampleLine(family.name, labels, double(metric.untyped.value)));
      if (metric.summary) {
        for (const q of metric.summary.quantile ?? []) {
          lines.push(sampleLine(family.name, { ...labels, quantile: String(double(q.quantile)) }, double(q.value)));
        }
        lines.push(sampleLine(`${family.name}_sum`, labels, double(metric.summary.sampleSum)));
        lines.push(sampleLine(`${family.name}_count`, labels, Number(metric.summary.sampleCount ?? 0)));
      }
      if (metric.histogram) {
        const h = metric.histogram;
        for (const bucket of h.bucket ?? []) {
          if (double(bucket.upperBound) === Infinity) continue;
          lines.push(
            sampleLine(`${family.name}_bucket`, { ...labels, le: String(double(bucket.upperBound)) }, Number(bucket.cumulativeCount ?? 0)),
          );
        }
        lines.push(sampleLine(`${family.name}_bucket`, { ...labels, le: '+Inf' }, Number(h.sampleCount ?? 0)));
        lines.push(sampleLine(`${family.name}_sum`, labels, double(h.sampleSum)));
        lines.push(sampleLine(`${family.name}_count`, labels, Number(h.sampleCount ?? 0)));
      }
    }
  }
  return lines.sort();
}

/** The samples of a text answer, `le` and `quantile` as numbers written by String() so both sides spell them alike. */
function samplesOfText(text: string): string[] {
  const lines: string[] = [];
  for (const family of parseExposition(text).families.values()) {
    for (const sample of family.samples) {
      const labels = { ...sample.labels };
      if (labels.le !== undefined && labels.le !== '+Inf') labels.le = String(Number(labels.le));
      if (labels.quantile !== undefined) labels.quantile = String(Number(labels.quantile));
      lines.push(sampleLine(sample.name, labels, sample.value));
    }
  }
  return lines.sort();
}

async function rendered(registry: Registry<RegistryContentType>, format: 'text' | 'protobuf', compress = false): Promise<Buffer> {
  // What the metrics this package made carry (exemplars, native buckets, start times), as the router passes it.
  const { body } = await renderExposition(registry, { format, compress, exemplars: CARRIED_EXEMPLARS });
  return Buffer.concat(body.chunks as Buffer[], body.byteLength);
}

async function expectSameSamples(build: Build, label: string): Promise<void> {
  // A registry of its own for each rendering: collect() callbacks may count their calls.
  const registry = new Registry();
  build(registry);
  const text = (await rendered(registry, 'text')).toString('utf8');
  const other = new Registry();
  build(other);
  const protobuf = await rendered(other, 'protobuf');
  expect({ label, samples: samplesOfProtobuf(decode(protobuf)) }).toEqual({ label, samples: samplesOfText(text) });
}

describeDecoded('the protobuf exposition holds the samples of the text one, read by prometheus/common', () => {
  it.each(CORPUS.map((c) => [c.name, c.build] as const))('%s', async (label, build) => {
    await expectSameSamples(build, label);
  });

  it('on 40 seeded random registries', async () => {
    for (let seed = 1; seed <= 40; seed += 1) {
      const { name, build } = randomCase(seed);
      await expectSameSamples(build, name);
    }
  });
});

/** The decoded histogram of `family`'s first series. */
function histogramOf(families: readonly DecodedFamily[], family: string): NonNullable<DecodedMetric['histogram']> {
  const found = families.find((f) => f.name === family);
  if (found?.metric?.[0]?.histogram === undefined) throw new Error(`no histogram ${family} in ${families.map((f) => f.name).join(', ')}`);
  return found.metric[0]!.histogram;
}

/** Observations counted by a native histogram's zero bucket and deltas. */
function nativeCount(h: NonNullable<DecodedMetric['histogram']>): number {
  let bucket = 0;
  let total = Number(h.zeroCount ?? 0);
  for (const delta of h.positiveDelta ?? []) {
    bucket += Number(delta);
    total += bucket;
  }
  return total;
}

describeDecoded("native buckets of the package's histograms", () => {
  it('are written beside the classic ones, with exemplars and a start timestamp, only when asked for', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry, undefined, {
      nativeHistograms: { bucketFactor: 1.5 },
      controllerRuntime: { controller: 'lb' },
    });
    for (let i = 0; i < 30; i++) metrics.recordReconciliation(0.003 * (i + 1), true, `cycle-${i}`);
    const families = decode(await rendered(registry, 'protobuf'));
    const own = histogramOf(families, 'ctl_reconciliation_duration_seconds');
    expect(own.schema).toBe(1);
    expect(Number(own.sampleCount)).toBe(30);
    expect(nativeCount(own)).toBe(30);
    expect(own.bucket?.length).toBe(10);
    expect(own.exemplars?.map((e) => e.label[0]?.value)).toContain('cycle-29');
    expect(Date.parse(own.createdTimestamp!)).toBeGreaterThan(Date.now() - 60_000);
    const runtime = histogramOf(families, 'controller_runtime_reconcile_time_seconds');
    expect(nativeCount(runtime)).toBe(30);
    // Off by default: classic buckets only.
    const plain = new Registry();
    createControllerMetrics(plain).recordReconciliation(0.2, true);
    const classic = histogramOf(decode(await rendered(plain, 'protobuf')), 'ctl_reconciliation_duration_seconds');
    expect(classic.schema).toBeUndefined();
    expect(classic.positiveSpan).toBeUndefined();
    expect(Number(classic.sampleCount)).toBe(1);
  });

  it('count what the classic buckets count: observe(), timers, reset() and remove() on the metric itself', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { nativeHistograms: true, controllerRuntime: { controller: 'lb' } });
    const histogram = registry.getSingleMetric('controller_runtime_reconcile_time_seconds') as Histogram<'controller'>;
    histogram.observe({ controller: 'other' }, 0.5);
    histogram.startTimer({ controller: 'other' })();
    let h = decode(await rendered(registry, 'protobuf')).find((f) => f.name === 'controller_runtime_reconcile_time_seconds')!;
    const other = h.metric!.find((m) => m.label?.some((l) => l.value === 'other'))!.histogram!;
    expect(nativeCount(other)).toBe(2);
    histogram.remove({ controller: 'other' });
    histogram.observe({ controller: 'other' }, 2);
    h = decode(await rendered(registry, 'protobuf')).find((f) => f.name === 'controller_runtime_reconcile_time_seconds')!;
    expect(nativeCount(h.metric!.find((m) => m.label?.some((l) => l.value === 'other'))!.histogram!)).toBe(1);
    registry.resetMetrics();
    histogram.observe({ controller: 'lb' }, 1);
    const after = decode(await rendered(registry, 'protobuf')).find((f) => f.name === 'controller_runtime_reconcile_time_seconds')!;
    expect(after.metric).toHaveLength(1);
    expect(nativeCount(after.metric![0]!.histogram!)).toBe(1);
  });

  it('read their arguments as the clients do, and stay in step through zero(), labels() and series never observed', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { nativeHistograms: true, controllerRuntime: { controller: 'lb' } });
    const own = registry.getSingleMetric('ctl_reconciliation_duration_seconds') as Histogram;
    const decodedOwn = async () => histogramOf(decode(await rendered(registry, 'protobuf')), 'ctl_reconciliation_duration_seconds');
    // Never observed: an empty native histogram, as client_golang writes one (schema and zero threshold).
    let h = await decodedOwn();
    expect(h.schema).toBe(3);
    expect(Number(h.sampleCount)).toBe(0);
    // undefined and null labels mean "no labels", the value is the second argument.
    own.observe(undefined as never, 5);
    own.observe(null as never, 5);
    h = await decodedOwn();
    expect(Number(h.sampleCount)).toBe(2);
    expect(nativeCount(h)).toBe(2);
    expect(Number(h.zeroCount ?? 0)).toBe(0);
    // zero() empties both; an observer from labels() counts in both.
    own.zero({});
    own.labels().observe(7);
    h = await decodedOwn();
    expect(Number(h.sampleCount)).toBe(1);
    expect(nativeCount(h)).toBe(1);
    expect(Number(h.sampleSum)).toBe(7);
    // The work queue's and the controller's series, zeroed by the package when they attach, are native from the start.
    const queue = registry.getSingleMetric('controller_runtime_reconcile_time_seconds') as Histogram<'controller'>;
    queue.zero({ controller: 'idle' });
    const idle = decode(await rendered(registry, 'protobuf'))
      .find((f) => f.name === 'controller_runtime_reconcile_time_seconds')!
      .metric!.find((m) => m.label?.some((l) => l.value === 'idle'))!.histogram!;
    expect(idle.schema).toBe(3);
  });

  it('a series whose classic count or sum differs from its native one (changed past the package) is written classic only', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { nativeHistograms: true });
    const histogram = registry.getSingleMetric('ctl_reconciliation_duration_seconds') as Histogram;
    histogram.observe(0.1);
    // A host that reaches into the client's storage bypasses everything.
    const stored = (histogram as unknown as { hashMap?: Record<string, { count: number; sum: number }> }).hashMap;
    const series =
      stored?.[''] ?? [...(histogram as unknown as { store: { values(): Iterable<{ count: number; sum: number }> } }).store.values()][0]!;
    series.count += 1;
    series.sum += 0.2;
    const h = histogramOf(decode(await rendered(registry, 'protobuf')), 'ctl_reconciliation_duration_seconds');
    expect(Number(h.sampleCount)).toBe(2);
    expect(h.schema).toBeUndefined();
  });
});

describeDecoded("a host's odd values in protobuf", () => {
  it('label getters that throw, in labels and shared labels, are written as in text, and the scrape goes on', async () => {
    const registry = new Registry();
    const throwing = Object.defineProperty({}, 'a', {
      enumerable: true,
      get: () => {
        throw new Error('getter a');
      },
    });
    for (const [name, type, values] of [
      ['custom_total', 'counter', [{ value: 1, labels: throwing }]],
      [
        'custom_seconds',
        'histogram',
        [
          { value: 1, labels: { le: 1 }, sharedLabels: throwing, metricName: 'custom_seconds_bucket' },
          { value: 1, labels: { le: '+Inf' }, sharedLabels: throwing, metricName: 'custom_seconds_bucket' },
          { value: 0.5, labels: {}, sharedLabels: throwing, metricName: 'custom_seconds_sum' },
          { value: 1, labels: {}, sharedLabels: throwing, metricName: 'custom_seconds_count' },
        ],
      ],
    ] as const) {
      registry.registerMetric({ name, help: 'h', type, get: async () => ({ name, help: 'h', type, values }) } as never);
    }
    const families = decode(await rendered(registry, 'protobuf'));
    expect(families.map((f) => [f.name, f.metric?.[0]?.label])).toEqual([
      ['custom_total', [{ name: 'a', value: '[unprintable]' }]],
      ['custom_seconds', [{ name: 'a', value: '[unprintable]' }]],
    ]);
  });
});

describeDecoded('protobuf over HTTP', () => {
  it('is answered only to a range that names it, gzip-compressed when accepted, and decodes', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { nativeHistograms: true }).recordReconciliation(0.2, true, 'c1');
    const app = metricsApp(registry);
    const asked = await requestApp(app, '/metrics', {
      headers: { Accept: `${PROTOBUF_ACCEPT};q=0.9,text/plain;version=0.0.4;q=0.1`, 'Accept-Encoding': 'gzip' },
    });
    expect(asked.status).toBe(200);
    expect(asked.headers['content-type']).toBe(`${PROTOBUF_CONTENT_TYPE}; escaping=underscores`);
    expect(asked.headers['content-encoding']).toBe('gzip');
    const families = decode(gunzipSync(asked.body));
    expect(nativeCount(histogramOf(families, 'ctl_reconciliation_duration_seconds'))).toBe(1);
    for (const accept of [
      '*/*',
      'application/*',
      'application/vnd.google.protobuf',
      'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text',
      'application/vnd.google.protobuf;proto=io.prometheus.client.Other;encoding=delimited',
      `${PROTOBUF_ACCEPT};q=0,*/*;q=0.1`,
    ]) {
      const res = await requestApp(app, '/metrics', { headers: { Accept: accept } });
      // A wildcard or a protobuf range without both parameters gets text or OpenMetrics, never protobuf.
      expect({ accept, type: res.headers['content-type'] }).toEqual({
        accept,
        type: expect.stringMatching(/^(text\/plain|application\/openmetrics-text);/),
      });
    }
    const escaped = await requestApp(app, '/metrics', { headers: { Accept: `${PROTOBUF_ACCEPT};escaping=allow-utf-8` } });
    expect(escaped.headers['content-type']).toBe(`${PROTOBUF_CONTENT_TYPE}; escaping=allow-utf-8`);
  });

  it('renders 20 000 series in slices, yielding to the event loop', async () => {
    const registry = new Registry();
    const histogram = new Histogram({ name: 'many_seconds', help: 'h', labelNames: ['i'], registers: [registry] });
    for (let i = 0; i < 20_000; i++) histogram.observe({ i: String(i) }, i / 1000);
    let turns = 0;
    const ticking = setInterval(() => (turns += 1), 0);
    const body = await rendered(registry, 'protobuf');
    clearInterval(ticking);
    expect(turns).toBeGreaterThan(1);
    const families = decode(body);
    expect(families[0]?.metric).toHaveLength(20_000);
  });
});
