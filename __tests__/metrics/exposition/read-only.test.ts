/**
 * The router reads a client's objects and never changes them: no prototype put in place, no
 * property added, removed or redefined, no proxy, on the registry, its metrics, their series
 * storage, the series and their labels. Checked over scrapes in every format, gzip or not, with
 * enough series for the renderer to slice, and with scrapes abandoned half-way.
 */
import { types } from 'node:util';
import { Counter, Gauge, Histogram, Registry, Summary, type OpenMetricsContentType } from 'prom-client';
import { createControllerMetrics } from '../../../lib/metrics';
import { listen, request } from '../../helpers/http';
import { metricsApp } from '../helpers/server';

/** What can change about one object: its prototype, whether it takes new properties, each own property's descriptor. */
interface Shape {
  readonly path: string;
  readonly proxy: boolean;
  readonly prototype: string;
  readonly prototypeIsProxy: boolean;
  readonly extensible: boolean;
  readonly properties: Record<string, string>;
}

/**
 * The shapes of `root` and of every object reachable from it through own data properties, to
 * `maxDepth`. Prototypes are named by identity (the same object is the same name in both
 * readings), values by type and, for primitives, by value.
 */
function shapesOf(root: object, maxDepth: number): Shape[] {
  const names = new Map<object, string>();
  const nameOf = (value: object | null): string => {
    if (value === null) return 'null';
    let name = names.get(value);
    if (name === undefined) {
      name = `#${names.size}`;
      names.set(value, name);
    }
    return name;
  };
  const shapes: Shape[] = [];
  const seen = new Set<object>();
  const visit = (value: object, path: string, depth: number): void => {
    if (seen.has(value)) return;
    seen.add(value);
    const properties: Record<string, string> = {};
    const next: Array<[object, string]> = [];
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key)!;
      const flags = `${descriptor.enumerable ? 'e' : ''}${descriptor.configurable ? 'c' : ''}${descriptor.writable ? 'w' : ''}`;
      let what: string;
      if ('value' in descriptor) {
        const v: unknown = descriptor.value;
        if (typeof v === 'object' && v !== null) {
          what = `object ${nameOf(v)}`;
          next.push([v, `${path}.${String(key)}`]);
        } else if (typeof v === 'function') what = `function ${nameOf(v)}`;
        else what = `${typeof v}`;
      } else what = `accessor ${nameOf(descriptor.get ?? null)} ${nameOf(descriptor.set ?? null)}`;
      properties[String(key)] = `${flags} ${what}`;
    }
    shapes.push({
      path,
      proxy: types.isProxy(value),
      prototype: nameOf(Object.getPrototypeOf(value) as object | null),
      prototypeIsProxy: types.isProxy(Object.getPrototypeOf(value)),
      extensible: Object.isExtensible(value),
      properties,
    });
    if (depth < maxDepth) for (const [child, childPath] of next) visit(child, childPath, depth + 1);
  };
  visit(root, '', 0);
  return shapes;
}

function hostRegistry(series: number): Registry<OpenMetricsContentType> {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setDefaultLabels({ replica: 'a' });
  const counter = new Counter({ name: 'c_total', help: 'c', labelNames: ['key'], registers: [registry] });
  const gauge = new Gauge({ name: 'g', help: 'g', labelNames: ['key'], registers: [registry] });
  const histogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['key'], buckets: [0.1, 1], registers: [registry] });
  const summary = new Summary({ name: 's', help: 's', labelNames: ['key'], percentiles: [0.5, 0.9], registers: [registry] });
  for (let i = 0; i < series; i++) {
    const key = `k${i}`;
    counter.inc({ key });
    gauge.set({ key }, i);
    histogram.observe({ key }, i % 3);
    if (i < 100) summary.observe({ key }, i);
  }
  // A metric read at scrape time, and the controller metrics with their exemplars.
  new Gauge({
    name: 'collected',
    help: 'set by collect()',
    registers: [registry],
    collect(): void {
      this.set(1);
    },
  });
  const metrics = createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'lb' } });
  metrics.recordReconciliation(0.2, true, 'cycle-1');
  return registry;
}

/** Everything a scrape could touch, read with the prototypes they have now. */
function snapshot(registry: Registry<OpenMetricsContentType>): Shape[] {
  // Summaries are read through their own get(), which compresses their estimators as it should:
  // their shape is taken to the series, not into prom-client's estimator internals.
  return [
    ...shapesOf(registry, 1),
    ...registry.getMetricsAsArray().flatMap((metric) => [
      ...shapesOf(metric, metric instanceof Summary ? 2 : 4),
      // `@prometheus-io/client` keeps the series in a LabelMap's private Map: reached through values().
      ...[...labelMapSeries(metric)].flatMap((series) => shapesOf(series, 3)),
    ]),
  ];
}

/** The series of a metric whose store is a LabelMap (`@prometheus-io/client`), read through its values(); none for prom-client 15. */
function labelMapSeries(metric: object): Iterable<object> {
  const store = (metric as { store?: { values?: () => Iterable<object> } }).store;
  return typeof store?.values === 'function' ? store.values() : [];
}

/** The object holding a metric's series: prom-client 15's hashMap, `@prometheus-io/client`'s LabelMap. */
function storageOf(metric: object): object {
  const { hashMap, store } = metric as { hashMap?: object; store?: object };
  return hashMap ?? store!;
}

/** What differs between two readings, by path, the first few: a failing `toEqual` on 80 000 shapes would take minutes to print. */
function changes(before: readonly Shape[], after: readonly Shape[]): string[] {
  const text = (shape: Shape | undefined): string => JSON.stringify(shape ?? null);
  const found: string[] = [];
  for (let i = 0; i < Math.max(before.length, after.length) && found.length < 3; i++) {
    const was = text(before[i]);
    const is = text(after[i]);
    if (was !== is) found.push(`${was.slice(0, 300)}\n  became ${is.slice(0, 300)}`);
  }
  return found;
}

describe('the router changes nothing of the client', () => {
  it('leaves every object of the registry as it found it, over scrapes in every format, sliced and abandoned', async () => {
    const registry = hostRegistry(20_000);
    // collect() callbacks (the host's, and the controller metrics' own) create their series on the
    // first reading: prom-client's own rendering runs them once, before anything of ours exists.
    await registry.metrics();
    const before = snapshot(registry);
    expect(before.filter((shape) => shape.proxy || shape.prototypeIsProxy)).toEqual([]);
    // Creating the router is part of what is checked.
    const served = await listen(metricsApp(registry));
    try {
      for (const accept of ['text/plain', 'application/openmetrics-text; version=1.0.0', 'text/plain;version=1.0.0;escaping=allow-utf-8']) {
        for (const encoding of ['identity', 'gzip']) {
          const res = await request(`${served.origin}/metrics`, { headers: { Accept: accept, 'Accept-Encoding': encoding } });
          expect(res.status).toBe(200);
        }
      }
      // Scrapes that leave half-way, while the render is paused between slices.
      await Promise.all(
        Array.from({ length: 4 }, () => request(`${served.origin}/metrics`, { signal: AbortSignal.timeout(5) }).catch(() => undefined)),
      );
    } finally {
      await served.close();
    }
    expect(changes(before, snapshot(registry))).toEqual([]);
  });

  it('would see a prototype put in place, a property added and a proxy (the check can fail)', () => {
    const registry = hostRegistry(10);
    const before = snapshot(registry);
    const counter = registry.getSingleMetric('c_total')!;
    const storage = storageOf(counter);
    const original = Object.getPrototypeOf(storage) as object;
    Object.setPrototypeOf(storage, new Proxy(original, {}));
    expect(changes(before, snapshot(registry))).not.toEqual([]);
    Object.setPrototypeOf(storage, original);
    expect(changes(before, snapshot(registry))).toEqual([]);
    // A property added to one series, wherever the client keeps it.
    const series = [...labelMapSeries(counter), ...Object.values(storage)][0] as Record<string, unknown>;
    series['extra'] = undefined;
    expect(changes(before, snapshot(registry))).not.toEqual([]);
  });
});
