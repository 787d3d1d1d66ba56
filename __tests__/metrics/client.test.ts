/**
 * Both metrics clients, and two of them in one process. prom-client 15 and `@prometheus-io/client`
 * 0.16 are loaded here by file (`…/index.js`), so this file holds both whatever METRICS_CLIENT the
 * run maps `prom-client` to; a third copy of prom-client comes from `jest.isolateModules`, which
 * loads the package again as a second copy in `node_modules` would be. A registry of one client
 * with a metric of another, or anything of a copy the package does not load, is refused when the
 * router or the metric set is created, by an error naming both; never a scrape that misses series.
 */
import type * as PromClient from 'prom-client';
import { createControllerMetrics, createMetricsRouter, collectProcessMetrics } from '../../lib/metrics';
import { clientOfMetric, clientOfRegistry, installedClients } from '../../lib/metrics/client';
import { accessMetric } from '../../lib/metrics/exposition/adapters';
import { createKubeAuth, createKubeAuthMetrics } from '../../lib';
import { requestApp } from '../helpers/http';
import { metricsApp } from './helpers/server';

type Client = typeof PromClient;
/* eslint-disable @typescript-eslint/no-require-imports -- each client by file, past the run's METRICS_CLIENT mapping */
const promClient = require('prom-client/index.js') as Client;
const official = require('@prometheus-io/client/index.js') as Client;
/* eslint-enable @typescript-eslint/no-require-imports */

/** prom-client loaded again: the same files, new classes, as a second installed copy gives. */
function copyOfPromClient(): Client {
  let copy: Client | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a second copy, on purpose
    copy = require('prom-client/index.js') as Client;
  });
  return copy!;
}

// With METRICS_CLIENT=@prometheus-io/client, `require('prom-client')` in lib/ is the official
// client too, and the real prom-client counts as a copy; the mixing cases run on the default lines.
const mapped = (process.env.METRICS_CLIENT ?? 'prom-client') !== 'prom-client';
const describeBothLoaded = mapped ? describe.skip : describe;

describeBothLoaded('both clients loaded by the package', () => {
  it('loads each once, with its name, version and how its series are read', () => {
    expect(installedClients().map(({ name, storage }) => [name, storage])).toEqual([
      ['prom-client', 'hash-map'],
      ['@prometheus-io/client', 'label-map'],
    ]);
    expect(clientOfRegistry(new promClient.Registry())?.name).toBe('prom-client');
    expect(clientOfRegistry(new official.Registry())?.name).toBe('@prometheus-io/client');
    expect(clientOfRegistry({ metrics: async () => '' })).toBeUndefined();
  });

  it.each([
    ['prom-client', promClient],
    ['@prometheus-io/client', official],
  ] as const)("creates every metric of createControllerMetrics with the registry's client (%s) and serves it", async (name, client) => {
    const registry = new client.Registry();
    const metrics = createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'lb' } });
    metrics.recordReconciliation(0.25, true, 'cycle-7');
    collectProcessMetrics(registry, { prefix: 'proc_' });
    createKubeAuth(
      { createTokenReview: jest.fn(), createSubjectAccessReview: jest.fn() } as never,
      createKubeAuthMetrics(registry, { prefix: 'auth_' }),
    );
    const made = registry.getMetricsAsArray();
    expect(made.length).toBeGreaterThan(30);
    expect(made.filter((metric) => clientOfMetric(metric)?.name !== name).map((metric) => metric.name)).toEqual([]);
    const res = await requestApp(metricsApp(registry), '/metrics', { headers: { Accept: 'application/openmetrics-text; version=1.0.0' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores');
    expect(res.text).toContain('ctl_reconciliation_total 1 # {correlation_id="cycle-7"} 1 ');
    expect(res.text).toMatch(
      /^controller_runtime_reconcile_time_seconds_bucket\{le="0\.25",controller="lb"\} 1 # \{correlation_id="cycle-7"\} 0\.25 /m,
    );
    expect(res.text).toContain('auth_auth_requests_total{outcome="allowed"} 0');
    expect(res.text).toMatch(/^proc_process_cpu_seconds_total /m);
  });
});

describeBothLoaded("@prometheus-io/client's series, walked one per step", () => {
  it('reads series added and removed during the walk as the live iterator meets them, never more than the store held at the start', () => {
    const registry = new official.Registry();
    const gauge = new official.Gauge({ name: 'walked', help: 'w', labelNames: ['i'], registers: [registry] });
    for (let i = 0; i < 100; i++) gauge.set({ i: String(i) }, i);
    const access = accessMetric(gauge, clientOfRegistry(registry));
    if (access?.kind !== 'scalar') throw new Error(`read as ${access?.kind}`);
    const walk = access.series();
    const seen: string[] = [];
    for (let next = walk.next(); next.done !== true; next = walk.next()) {
      seen.push(String(next.value?.labels?.['i']));
      // The host keeps adding, and removes one not read yet: the walk still ends.
      gauge.set({ i: `new-${seen.length}` }, 0);
      if (seen.length === 10) gauge.remove({ i: '50' });
    }
    expect(seen).toHaveLength(100);
    expect(seen).not.toContain('50');
    expect(seen.slice(0, 99)).toEqual([
      ...Array.from({ length: 50 }, (_, i) => String(i)),
      ...Array.from({ length: 49 }, (_, i) => String(51 + i)),
    ]);
  });
});

describeBothLoaded('two clients in one process are refused at creation, naming both', () => {
  const cases = [
    [
      'a prom-client registry holding an @prometheus-io/client metric',
      promClient,
      official,
      /prom-client 15\.\S+'s but its metric "stray" was made with @prometheus-io\/client 0\.16\.\S+: two metrics clients/,
    ],
    [
      'an @prometheus-io/client registry holding a prom-client metric',
      official,
      promClient,
      /@prometheus-io\/client 0\.16\.\S+'s but its metric "stray" was made with prom-client 15\.\S+: two metrics clients/,
    ],
  ] as const;

  it.each(cases)(
    '%s: createMetricsRouter and createControllerMetrics throw, nothing registered',
    (_, registryClient, metricClient, message) => {
      const registry = new registryClient.Registry();
      const stray = new metricClient.Gauge({ name: 'stray', help: 'from the other client', registers: [] });
      registry.registerMetric(stray as never);
      expect(() => createMetricsRouter(registry)).toThrow(message);
      expect(() => createMetricsRouter(registry)).toThrow(TypeError);
      expect(() => createControllerMetrics(registry)).toThrow(message);
      expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual(['stray']);
    },
  );

  it('a registry of a second copy of prom-client: refused, saying which copies the package loads', () => {
    const copy = copyOfPromClient();
    expect(copy.Registry).not.toBe(promClient.Registry);
    const registry = new copy.Registry();
    new copy.Counter({ name: 'c_total', help: 'c', registers: [registry] }).inc();
    const refused =
      /the registry is a Registry of a metrics client this package did not load \(controller-introspection loads prom-client 15\.\S+ from \S+node_modules\/prom-client and @prometheus-io\/client 0\.16\.\S+ from \S+\); two copies of a metrics client in one process/;
    expect(() => createMetricsRouter(registry)).toThrow(refused);
    expect(() => createControllerMetrics(registry)).toThrow(refused);
    expect(() => collectProcessMetrics(registry)).toThrow(refused);
  });

  it("a metric of a second copy in the package's client's registry: refused", () => {
    const copy = copyOfPromClient();
    const registry = new promClient.Registry();
    new promClient.Gauge({ name: 'fine', help: 'f', registers: [registry] });
    new copy.Histogram({ name: 'copied_seconds', help: 'h', registers: [registry as never] });
    expect(() => createMetricsRouter(registry)).toThrow(
      /the registry's metric "copied_seconds" was made with a copy of a metrics client this package did not load/,
    );
  });

  it("takes a host's own classes named like a client's (Registry, Metric) for what they are, not for a copy", async () => {
    class Metric {
      readonly name = 'host_up';
      readonly help = 'h';
      readonly type = 'gauge';
      async get(): Promise<object> {
        return { name: 'host_up', help: 'h', type: 'gauge', values: [{ value: 1, labels: {} }] };
      }
      reset(): void {}
    }
    const registry = new promClient.Registry();
    registry.registerMetric(new Metric() as never);
    const served = await requestApp(metricsApp(registry), '/metrics');
    expect(served.text).toBe('# HELP host_up h\n# TYPE host_up gauge\nhost_up 1\n');
    class Registry {
      readonly contentType = promClient.Registry.PROMETHEUS_CONTENT_TYPE;
      async metrics(): Promise<string> {
        return 'own 1\n';
      }
      registerMetric(): void {}
      getMetricsAsArray(): unknown[] {
        return [];
      }
    }
    expect((await requestApp(metricsApp(new Registry() as never), '/metrics')).text).toBe('own 1\n');
  });

  it("still serves a registry of no client (an object of the host's with metrics()), and a host's own metric object", async () => {
    const own = { metrics: async () => '# TYPE x gauge\nx 1\n', contentType: promClient.Registry.PROMETHEUS_CONTENT_TYPE };
    const res = await requestApp(metricsApp(own as never), '/metrics');
    expect(res.text).toBe('# TYPE x gauge\nx 1\n');
    const registry = new official.Registry();
    registry.registerMetric({
      name: 'hosts_own',
      help: 'h',
      type: 'gauge',
      get: async () => ({ name: 'hosts_own', help: 'h', type: 'gauge', values: [{ value: 3, labels: {} }] }),
    } as never);
    const served = await requestApp(metricsApp(registry), '/metrics');
    expect(served.text).toBe('# HELP hosts_own h\n# TYPE hosts_own gauge\nhosts_own 3\n');
  });
});
