/**
 * The shapes of lib/metrics/shapes.ts, which the package's declarations name instead of a metrics
 * client's types, against both clients. At compile time (`npm run typecheck`, and ts-jest here):
 * prom-client 15's and `@prometheus-io/client` 0.16's `Registry` (any content type) are
 * `MetricsRegistry`s and their Counter, Gauge and Histogram fit the shapes the package drives them
 * by, so a host passes its registry to every factory without a cast whichever client it has. At run
 * time: every member the shapes name is there, and does what the package calls it for, on objects
 * of both clients (loaded by file, past the run's METRICS_CLIENT mapping) taken through the shapes
 * as lib/metrics/client.ts takes them. (A client's module is not assignable to
 * `MetricsClientModule` by its own declarations: they type a metric's `registers` as that client's
 * `Registry`, where its constructors read only `contentType` and `registerMetric`, as the shape says.)
 */
import type * as PromClient from 'prom-client';
import type * as OfficialClient from '@prometheus-io/client';
import { collectProcessMetrics, createControllerMetrics, createMetricsRouter } from '../../lib/metrics';
import { createKubeAuth, createKubeAuthMetrics } from '../../lib';
import type { CounterLike, GaugeLike, HistogramLike, MetricsClientModule, MetricsRegistry } from '../../lib/metrics/shapes';

/** Compiles only when `T` is assignable to `Shape`. */
type Fits<T extends Shape, Shape> = T;

/** Each client's classes as their own declarations give them, against the shape this package reads them by. */
export type BothClientsFit = [
  Fits<PromClient.Registry, MetricsRegistry>,
  Fits<PromClient.Registry<PromClient.OpenMetricsContentType>, MetricsRegistry>,
  Fits<PromClient.Registry<PromClient.RegistryContentType>, MetricsRegistry>,
  Fits<PromClient.Counter<string>, CounterLike>,
  Fits<PromClient.Gauge<string>, GaugeLike>,
  Fits<PromClient.Histogram<string>, HistogramLike>,
  Fits<OfficialClient.Registry, MetricsRegistry>,
  Fits<OfficialClient.Registry<OfficialClient.OpenMetricsContentType>, MetricsRegistry>,
  Fits<OfficialClient.Registry<OfficialClient.PrometheusContentType>, MetricsRegistry>,
  Fits<OfficialClient.Counter<string>, CounterLike>,
  Fits<OfficialClient.Gauge<string>, GaugeLike>,
  Fits<OfficialClient.Histogram<string>, HistogramLike>,
];

/* eslint-disable @typescript-eslint/no-require-imports -- each client by file, past the run's METRICS_CLIENT mapping */
const promClient = require('prom-client/index.js') as typeof PromClient;
const official = require('@prometheus-io/client/index.js') as typeof OfficialClient;
/** The same modules as lib/metrics/client.ts loads a client: through the shape. */
const promShape = require('prom-client/index.js') as MetricsClientModule;
const officialShape = require('@prometheus-io/client/index.js') as MetricsClientModule;
/* eslint-enable @typescript-eslint/no-require-imports */

/** Every member of `MetricsRegistry`: a member added to the shape and not listed here fails the type check. */
const REGISTRY_MEMBERS = [
  'contentType',
  'metrics',
  'getSingleMetric',
  'registerMetric',
  'removeSingleMetric',
  'getMetricsAsArray',
] as const satisfies ReadonlyArray<keyof MetricsRegistry>;
export const everyRegistryMember: [Exclude<keyof MetricsRegistry, (typeof REGISTRY_MEMBERS)[number]>] extends [never] ? true : false = true;

/** Drives one client's objects through the shapes only, as the package does. */
function throughTheShapes(client: MetricsClientModule, registry: MetricsRegistry): void {
  for (const member of REGISTRY_MEMBERS) {
    expect(typeof registry[member]).toBe(member === 'contentType' ? 'string' : 'function');
  }
  const counter = new client.Counter({ name: 'shape_counter_total', help: 'h', labelNames: ['l'], registers: [registry] });
  const gauge = new client.Gauge({
    name: 'shape_gauge',
    help: 'h',
    registers: [registry],
    collect() {
      this.set(7);
    },
  });
  const histogram = new client.Histogram({ name: 'shape_seconds', help: 'h', labelNames: ['l'], buckets: [1, 2], registers: [registry] });
  expect(registry.getMetricsAsArray()).toEqual([counter, gauge, histogram]);
  expect(registry.getSingleMetric('shape_gauge')).toBe(gauge);
  counter.inc({ l: 'a' }, 2);
  counter.remove({ l: 'a' });
  counter.inc(0);
  counter.reset();
  gauge.set(1);
  gauge.set({}, 2);
  gauge.reset();
  histogram.zero({ l: 'a' });
  histogram.observe({ l: 'a' }, 1.5);
  histogram.remove({ l: 'a' });
  histogram.observe(3);
  registry.removeSingleMetric('shape_counter_total');
  expect(registry.getSingleMetric('shape_counter_total')).toBeUndefined();
}

// With METRICS_CLIENT=@prometheus-io/client, lib/ loads the official client for `prom-client` too, and
// refuses a registry of the real prom-client as a second copy (client.test.ts): the factories take
// prom-client's registry on the default lines.
const mapped = (process.env.METRICS_CLIENT ?? 'prom-client') !== 'prom-client';

describe.each([
  ['prom-client 15', promShape, () => new promClient.Registry()],
  ['@prometheus-io/client 0.16', officialShape, () => new official.Registry()],
] as const)('the shapes against %s', (_name, client, newRegistry) => {
  it('has every member the shapes name, doing what the package calls it for', async () => {
    const registry = newRegistry();
    throughTheShapes(client, registry);
    expect(await registry.metrics()).toMatch(/^shape_gauge 7$/m);
    expect(await registry.metrics()).toMatch(/^shape_seconds_count 1$/m);
  });

  (mapped && client === promShape ? it.skip : it)("takes the client's Registry in every factory, without a cast", async () => {
    const registry = newRegistry();
    await createControllerMetrics(registry).close();
    expect(collectProcessMetrics(registry, { prefix: 'shape_' })).toBe(true);
    createMetricsRouter(registry);
    const api = { createTokenReview: jest.fn(), createSubjectAccessReview: jest.fn() };
    const counter = createKubeAuthMetrics(registry, { prefix: 'shape_auth_' });
    await createKubeAuth(api, counter).close();
    await counter.close();
  });
});
