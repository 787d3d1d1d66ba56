/**
 * Pins what the renderer reads inside the metrics client the suite runs with (prom-client 15, or
 * `@prometheus-io/client` 0.16 with METRICS_CLIENT=@prometheus-io/client). If an upgrade changes
 * any of it, this file fails by name (and the byte-identity corpus fails by content); until the
 * renderer is adapted, the version check sends every metric through its public `get()` again.
 */
import { Counter, Gauge, Histogram, Registry, Summary, type OpenMetricsContentType } from 'prom-client';
import { clientOfRegistry, type MetricsClient } from '../../../lib/metrics/client';
import { accessMetric, readRegistry } from '../../../lib/metrics/exposition/adapters';
import { renderExposition } from '../../../lib/metrics/exposition';
import { createControllerMetrics } from '../../../lib/metrics';

const client: MetricsClient = clientOfRegistry(new Registry())!;
const sortedKeys = (value: object): string[] => Object.keys(value).sort();
/** The series as the client stores them, by the key it files them under, in its order. */
const storage = (metric: object): Record<string, Record<string, unknown>> => {
  if (client.storage === 'hash-map') return (metric as { hashMap: Record<string, Record<string, unknown>> }).hashMap;
  const store = (metric as { store: { values(): Iterable<Record<string, unknown>>; keyFrom(labels: unknown): string } }).store;
  return Object.fromEntries([...store.values()].map((series) => [store.keyFrom(series.labels), series]));
};

describe("the client's internals the renderer reads", () => {
  it('is the client this run asked for, at a version whose storage the renderer reads', () => {
    expect(client.name).toBe(process.env.METRICS_CLIENT ?? 'prom-client');
    if (client.name === 'prom-client') {
      expect(client.version).toMatch(/^15\./);
      expect(client.storage).toBe('hash-map');
    } else {
      expect(client.version).toMatch(/^0\.16\./);
      expect(client.storage).toBe('label-map');
      // Its LabelMap, found through the symbol-keyed export, is the class of every metric's store.
      expect(new Counter({ name: 'c', help: 'c', registers: [] })).toHaveProperty('store', expect.any(client.labelMap));
    }
  });

  it('Counter and Gauge keep {value, labels} per label hash in hashMap, in insertion order', () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'c_total', help: 'c', labelNames: ['b', 'a'], registers: [registry] });
    counter.inc({ b: '2', a: '1' }, 3);
    counter.inc({ a: 'first-in-order?', b: 'no' });
    expect(Object.values(storage(counter)).map(sortedKeys)).toEqual([
      ['labels', 'value'],
      ['labels', 'value'],
    ]);
    expect(Object.values(storage(counter))[0]).toEqual({ value: 3, labels: { b: '2', a: '1' } });
    const gauge = new Gauge({ name: 'g', help: 'g', registers: [registry] });
    expect(storage(gauge)).toEqual({ '': { value: 0, labels: {} } });
  });

  it('a Counter with exemplars keeps them on the series as {labelSet, value, timestamp}', () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const counter = new Counter({ name: 'e_total', help: 'e', enableExemplars: true, registers: [registry] });
    counter.inc({ value: 1, exemplarLabels: { id: 'x' } });
    const series = storage(counter)['']!;
    expect(sortedKeys(series)).toEqual(['exemplar', 'labels', 'value']);
    expect(sortedKeys(series.exemplar as object)).toEqual(['labelSet', 'timestamp', 'value']);
  });

  it('Histogram keeps upperBounds and per series non-cumulative bucketValues keyed by String(bound), sum and count', () => {
    const histogram = new Histogram({ name: 'h', help: 'h', labelNames: ['a'], buckets: [0.5, 1e21], registers: [] });
    histogram.observe({ a: 'x' }, 0.25);
    histogram.observe({ a: 'x' }, 2);
    expect((histogram as unknown as { upperBounds: number[] }).upperBounds).toEqual([0.5, 1e21]);
    const series = Object.values(storage(histogram))[0]!;
    expect(sortedKeys(series)).toEqual(['bucketValues', 'count', 'labels', 'sum']);
    expect(series.bucketValues).toEqual({ '0.5': 1, '1e+21': 1 });
    expect(Object.keys(series.bucketValues as object)).toEqual([String(0.5), String(1e21)]);
  });

  it('Registry keeps default labels in _defaultLabels and lists metrics in registration order', () => {
    const registry = new Registry();
    registry.setDefaultLabels({ env: 'prod' });
    new Gauge({ name: 'b', help: 'b', registers: [registry] });
    new Gauge({ name: 'a', help: 'a', registers: [registry] });
    expect((registry as unknown as { _defaultLabels: unknown })._defaultLabels).toEqual({ env: 'prod' });
    expect(readRegistry(registry, client)).toEqual({ metrics: registry.getMetricsAsArray(), defaultLabels: { env: 'prod' }, client });
    expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(['b', 'a']);
  });
});

describe('what is read through storage and what through get()', () => {
  it("reads prom-client's Counter, Gauge and Histogram through their storage, a Summary through get()", () => {
    expect(accessMetric(new Counter({ name: 'c', help: 'c', registers: [] }), client)?.kind).toBe('scalar');
    expect(accessMetric(new Gauge({ name: 'g', help: 'g', registers: [] }), client)?.kind).toBe('scalar');
    expect(accessMetric(new Histogram({ name: 'h', help: 'h', registers: [] }), client)?.kind).toBe('histogram');
    // Reading a summary compresses its estimators and drops aged windows: prom-client's get() may.
    expect(accessMetric(new Summary({ name: 's', help: 's', registers: [] }), client)?.kind).toBe('public');
  });

  it('reads subclasses, instances with their own get(), and other objects through get()', () => {
    class Custom extends Gauge {}
    expect(accessMetric(new Custom({ name: 'x', help: 'x', registers: [] }), client)?.kind).toBe('public');
    const patched = new Gauge({ name: 'y', help: 'y', registers: [] });
    patched.get = (async () => ({ name: 'y', help: 'y', type: 'gauge', values: [], aggregator: 'sum' })) as unknown as typeof patched.get;
    expect(accessMetric(patched, client)?.kind).toBe('public');
    const broken = new Histogram({ name: 'z', help: 'z', registers: [] });
    (broken as unknown as { upperBounds: unknown }).upperBounds = 'not an array';
    expect(accessMetric(broken, client)?.kind).toBe('public');
    expect(accessMetric({ name: 'o', get: async () => ({}) }, client)?.kind).toBe('public');
    expect(accessMetric({ name: 'no get' }, client)).toBeUndefined();
  });

  it('reads the metrics the controller metrics make to carry their exemplars through storage, as plain ones', () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'lb' } });
    const kinds = Object.fromEntries(registry.getMetricsAsArray().map((metric) => [metric.name, accessMetric(metric, client)?.kind]));
    expect(kinds).toMatchObject({
      ctl_reconciliation_total: 'scalar',
      ctl_reconciliation_duration_seconds: 'histogram',
      controller_runtime_reconcile_total: 'scalar',
      controller_runtime_reconcile_time_seconds: 'histogram',
    });
    // The same shape made by anyone else (a symbol of their own, a method of their own) is not ours.
    const lookalikeKey: unique symbol = Symbol('controller-introspection exemplars');
    class Lookalike extends Gauge {
      readonly [lookalikeKey] = {};
    }
    expect(accessMetric(new Lookalike({ name: 'l', help: 'l', registers: [] }), client)?.kind).toBe('public');
  });

  it('renders a registry that overrides how it renders by its own metrics(), in its own format', async () => {
    class Wrapped extends Registry {
      override async metrics(): Promise<string> {
        return `# wrapped\n${await super.metrics()}`;
      }
    }
    const registry = new Wrapped();
    new Gauge({ name: 'w', help: 'w', registers: [registry] });
    expect(readRegistry(registry, client)).toBeUndefined();
    const exposition = await renderExposition(registry, { format: 'openmetrics', compress: false });
    expect(exposition.format).toBe('text');
    expect(exposition.contentType).toBe(Registry.PROMETHEUS_CONTENT_TYPE);
    expect(Buffer.concat(exposition.body.chunks).toString('utf8')).toBe(await registry.metrics());
  });
});
