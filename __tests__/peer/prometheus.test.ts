/**
 * Peer test against the real Prometheus, 2.42 (Debian package `prometheus`) and 3.16 (built from
 * its module): each version's promtool must accept our exposition, and a real Prometheus server of
 * each version must scrape it, see the target up and store every controller metric family with its
 * type.
 *
 * Run locally: `apt-get install -y --no-install-recommends prometheus` and
 * `bash scripts/build-peers.sh prometheus`, then `npx jest __tests__/peer/prometheus.test.ts`.
 * Without a version's binaries its tests skip, unless `CI` is set, where they fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import { Registry } from 'prom-client';
import { createControllerMetrics, createMetricsRouter, type MetricsStateSource } from '../../lib/metrics';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { listen, request } from '../helpers/http';
import { describeWithPeer } from '../helpers/peers';
import {
  describeWithPrometheus,
  prometheusPeers,
  prometheusRuns,
  promtoolCheckMetrics,
  startPrometheus,
  type PrometheusServer,
} from './prometheus-harness';

/** The example app also turns on the health gauges (readiness gates, last progress). */
const EXAMPLE_SERIES_NAMES_EXTRA = [
  'ctl_build_info',
  'ctl_event_watchers',
  'ctl_progress_last_timestamp_seconds',
  'ctl_readiness_gate_open',
];

/**
 * The one lint promtool raises on our output: the spec names a gauge `*_resource_count`, and the
 * spec wins. promtool 2.42 and 3.16 word it alike.
 */
const ACCEPTED_LINT = 'ctl_resource_count non-histogram and non-summary metrics should not have "_count" suffix';

const FAMILIES: ReadonlyArray<readonly [name: string, type: 'counter' | 'gauge' | 'histogram']> = [
  ['ctl_reconciliation_total', 'counter'],
  ['ctl_reconciliation_duration_seconds', 'histogram'],
  ['ctl_reconciliation_errors_total', 'counter'],
  ['ctl_deployment_total', 'counter'],
  ['ctl_deployment_duration_seconds', 'histogram'],
  ['ctl_deployment_errors_total', 'counter'],
  ['ctl_validation_total', 'counter'],
  ['ctl_validation_errors_total', 'counter'],
  ['ctl_resource_count', 'gauge'],
  ['ctl_event_subscribers', 'gauge'],
  ['ctl_events_published_total', 'counter'],
  ['ctl_leader_election_is_leader', 'gauge'],
  ['ctl_leader_election_transitions_total', 'counter'],
  ['ctl_leader_election_time_as_leader_seconds_total', 'counter'],
];

/** Series names Prometheus stores for the families: histograms become `_bucket`, `_sum`, `_count`. */
const SERIES_NAMES = FAMILIES.flatMap(([name, type]) =>
  type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
).sort();
const EXAMPLE_SERIES_NAMES = [...SERIES_NAMES, ...EXAMPLE_SERIES_NAMES_EXTRA].sort();
/** With a state, the metric set also counts event watches (apart from the spec's subscribers); build_info is on by default. */
const TARGET_SERIES_NAMES = [...SERIES_NAMES, 'ctl_build_info', 'ctl_event_watchers'].sort();

/** What Prometheus scrapes. */
interface ScrapeTarget {
  /** Full URL of the metrics endpoint, e.g. `http://127.0.0.1:41234/metrics`. */
  readonly url: URL;
  close(): Promise<void>;
}

/**
 * The server under test, with every metric driven. This is the one place to change to scrape
 * another server (for example the example app in examples/controller): return its metrics URL.
 */
async function startScrapeTarget(): Promise<ScrapeTarget> {
  const counts = { ingresses: 3, services: 4, endpoints: 4, 'lb-pods': 2 };
  const state: MetricsStateSource = {
    resourceCounts: () => counts,
    eventStats: () => ({ published: 7, subscribers: 2 }),
  };
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state);
  metrics.recordValidation(true);
  metrics.recordValidation(false);
  metrics.recordReconciliation(0.12, true);
  metrics.recordReconciliation(3.4, false);
  metrics.recordDeployment(0.05, true);
  metrics.recordDeployment(12, false);
  metrics.setLeader(true);

  const app = express();
  app.use(createMetricsRouter(registry));
  const served = await listen(app);
  return { url: new URL(`${served.origin}/metrics`), close: served.close };
}

const PEERS = prometheusPeers();

for (const peer of PEERS) {
  const promtoolBin = peer.promtool;
  describeWithPrometheus(peer)(`Prometheus peer (${peer.label})`, () => {
    let target: ScrapeTarget | undefined;
    let prometheus: PrometheusServer | undefined;

    beforeAll(async () => {
      target = await startScrapeTarget();
    });

    afterAll(async () => {
      // Each step runs even if the other failed, so no Prometheus outlives the test.
      const results = await Promise.allSettled([prometheus?.stop(), target?.close()]);
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
    });

    it('passes promtool check metrics except for the spec-mandated resource_count name', async () => {
      const res = await request(target!.url.href);
      expect(res.status).toBe(200);
      const exposition = res.text;
      expect(exposition).toContain('ctl_resource_count{type="lb-pods"} 2');

      const result = await promtoolCheckMetrics(promtoolBin!, exposition);
      // Exit code 3 is promtool's "lint problems found"; anything else (1: parse error) fails here.
      expect(result).toEqual({ exitCode: 3, lines: [ACCEPTED_LINT] });
    });

    it('is scraped by a real Prometheus: target up, all 14 families stored with their types', async () => {
      prometheus = await startPrometheus(peer, target!.url);
      const server = prometheus;
      const withLog = async <T>(step: Promise<T>): Promise<T> => {
        try {
          return await step;
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          throw new Error(`${reason}\n--- prometheus log ---\n${server.log()}`);
        }
      };

      interface Target {
        scrapeUrl: string;
        health: string;
        lastError: string;
        lastScrape: string;
      }
      const scraped = await withLog(
        eventually(
          async () => {
            const { activeTargets } = await server.api<{ activeTargets: Target[] }>('/api/v1/targets');
            const found = activeTargets.find((t) => t.scrapeUrl === target!.url.href);
            return found && found.health !== 'unknown' && !found.lastScrape.startsWith('0001-') ? found : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 200, what: 'a completed scrape of the target' },
        ),
      );
      expect({ health: scraped.health, lastError: scraped.lastError }).toEqual({ health: 'up', lastError: '' });

      interface VectorSample {
        metric: Record<string, string>;
        value: [number, string];
      }
      const query = (promql: string) => server.api<{ result: VectorSample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
      const stored = await withLog(
        eventually(
          async () => {
            const { result } = await query('count by (__name__) ({__name__=~"ctl_.*"})');
            const names = result.map((r) => r.metric.__name__!).sort();
            return names.length === TARGET_SERIES_NAMES.length ? names : undefined;
          },
          { timeoutMs: 15_000, intervalMs: 200, what: 'every ctl_ series in the TSDB' },
        ),
      );
      expect(stored).toEqual(TARGET_SERIES_NAMES);

      const value = async (promql: string) => (await query(promql)).result.map((r) => Number(r.value[1]));
      expect(await value('ctl_reconciliation_total')).toEqual([2]);
      expect(await value('ctl_reconciliation_errors_total')).toEqual([1]);
      expect(await value('ctl_deployment_duration_seconds_count')).toEqual([2]);
      expect(await value('ctl_deployment_duration_seconds_bucket{le="+Inf"}')).toEqual([2]);
      // Prometheus 3 stores a classic bucket's `le` as a float: `10` becomes `10.0`.
      expect(await value(`ctl_deployment_duration_seconds_bucket{le="${peer.major === 3 ? '10.0' : '10'}"}`)).toEqual([1]);
      expect(await value('ctl_validation_errors_total')).toEqual([1]);
      expect(await value('ctl_resource_count{type="lb-pods"}')).toEqual([2]);
      expect(await value('count(ctl_resource_count)')).toEqual([4]);
      expect(await value('ctl_events_published_total')).toEqual([7]);
      expect(await value('ctl_event_subscribers')).toEqual([2]);
      expect(await value('ctl_leader_election_is_leader')).toEqual([1]);
      expect(await value('ctl_leader_election_transitions_total')).toEqual([1]);
      expect((await value('ctl_leader_election_time_as_leader_seconds_total'))[0]).toBeGreaterThan(0);

      const metadata = await server.api<Record<string, Array<{ type: string; help: string }>>>('/api/v1/metadata');
      const types = Object.fromEntries(
        Object.entries(metadata)
          .filter(([name]) => name.startsWith('ctl_'))
          .map(([name, entries]) => [name, entries.map((e) => e.type)]),
      );
      // Prometheus asks for OpenMetrics, which names a counter's family without `_total`.
      const familyName = (name: string, type: string) => (type === 'counter' ? name.replace(/_total$/, '') : name);
      expect(types).toEqual(
        Object.fromEntries(
          [...FAMILIES, ['ctl_build_info', 'gauge'] as const, ['ctl_event_watchers', 'gauge'] as const].map(([name, type]) => [
            familyName(name, type),
            [type],
          ]),
        ),
      );
      expect(await value('ctl_event_watchers')).toEqual([0]);
    });
  });
}

// One example app for both versions: starting it is the slow part, and what each version makes of
// its answers is what differs.
describeWithPeer(PEERS.some(prometheusRuns) ? undefined : 'no Prometheus version is here to run')(
  'Prometheus peer against the example controller app',
  () => {
    let app: ExampleApp | undefined;
    /** Its text answer once it has deployed, and its OpenMetrics answer. */
    let exposition = '';
    let openMetrics = '';

    beforeAll(async () => {
      // The example app runs the built package.
      requireFreshDist();
      app = await startExample({ simulation: { reconcileIntervalMs: 100 } });
      // Let the simulated controller reconcile, deploy and win the lease before the checks.
      await app.waitForLog((l) => l['msg'] === 'became leader');
      const url = `${app.metricsUrl}/metrics`;
      exposition = await eventually(
        async () => {
          const { text } = await request(url);
          return /^ctl_deployment_total [1-9]/m.test(text) ? text : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200, what: 'a deployment in the metrics' },
      );
      const { text, headers } = await request(url, { headers: { Accept: 'application/openmetrics-text; version=1.0.0' } });
      expect(headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores');
      openMetrics = text;
    });

    afterAll(async () => {
      await app?.stop();
    });

    it('serves every family, with exemplars in OpenMetrics', () => {
      for (const [name, type] of FAMILIES) expect(exposition).toContain(`# TYPE ${name} ${type}`);
      // controller-runtime's families and build_info are in it too.
      expect(exposition).toContain('# TYPE controller_runtime_reconcile_time_seconds histogram');
      expect(exposition).toContain('# TYPE workqueue_depth gauge');
      expect(exposition).toContain('# TYPE ctl_build_info gauge');
      expect(openMetrics).toMatch(/ # \{correlation_id="[0-9a-f-]{36}"\} /);
    });

    for (const peer of PEERS) {
      describeWithPrometheus(peer)(peer.label, () => {
        let prometheus: PrometheusServer | undefined;

        afterAll(async () => {
          await prometheus?.stop();
        });

        it('serves an exposition promtool accepts, but for the spec-mandated resource_count name', async () => {
          expect(await promtoolCheckMetrics(peer.promtool!, exposition)).toEqual({ exitCode: 3, lines: [ACCEPTED_LINT] });
        });

        it('serves an OpenMetrics answer promtool finds nothing in but what it cannot read of OpenMetrics', async () => {
          // promtool (2.42 and 3.16) reads only the text format (see
          // __tests__/metrics/exposition/promtool.test.ts): it cannot parse exemplars, so they are
          // taken off (a real Prometheus ingesting them is exemplars.test.ts), and it takes each
          // counter's `_total` samples for a family without HELP.
          const withoutExemplars = openMetrics.replace(/ # \{[^}]*\} \S+(?: \S+)?$/gm, '');
          expect(withoutExemplars).not.toContain('correlation_id');
          const counters = [...openMetrics.matchAll(/^# TYPE (\S+) counter$/gm)].map((m) => `${m[1]}_total no help text`);
          expect(counters.length).toBeGreaterThan(10);
          const result = await promtoolCheckMetrics(peer.promtool!, withoutExemplars);
          expect(result.exitCode).toBe(3);
          expect(result.lines.sort()).toEqual([...counters, ACCEPTED_LINT].sort());
        });

        it('is scraped by a real Prometheus with no error and every ctl_ series stored', async () => {
          const url = new URL(`${app!.metricsUrl}/metrics`);
          prometheus = await startPrometheus(peer, url);
          const server = prometheus;
          const { activeTargets } = await eventually(
            async () => {
              const targets = await server.api<{ activeTargets: Array<{ scrapeUrl: string; health: string; lastError: string }> }>(
                '/api/v1/targets',
              );
              return targets.activeTargets.some((t) => t.scrapeUrl === url.href && t.health !== 'unknown') ? targets : undefined;
            },
            { timeoutMs: 30_000, intervalMs: 200, what: 'a completed scrape of the example app' },
          );
          const scraped = activeTargets.find((t) => t.scrapeUrl === url.href)!;
          expect({ health: scraped.health, lastError: scraped.lastError }).toEqual({ health: 'up', lastError: '' });
          const names = await eventually(
            async () => {
              const { result } = await server.api<{ result: Array<{ metric: Record<string, string> }> }>(
                `/api/v1/query?query=${encodeURIComponent('count by (__name__) ({__name__=~"ctl_.*"})')}`,
              );
              const found = result.map((r) => r.metric['__name__']!).sort();
              return found.length === EXAMPLE_SERIES_NAMES.length ? found : undefined;
            },
            { timeoutMs: 15_000, intervalMs: 200, what: 'every ctl_ series in the TSDB' },
          );
          expect(names).toEqual(EXAMPLE_SERIES_NAMES);
        });

        if (peer.major === 3) {
          it('with scrape_native_histograms: stores the opted-in histograms as native ones, histogram_quantile() answers, exemplars name cycles', async () => {
            await prometheus?.stop();
            const url = new URL(`${app!.metricsUrl}/metrics`);
            // The metrics guide's scrape job (examples/monitoring/scrape-native-histograms.yml), as the
            // only job, pointed at the example app.
            const guide = fs.readFileSync(
              path.join(__dirname, '..', '..', 'examples', 'monitoring', 'scrape-native-histograms.yml'),
              'utf8',
            );
            const job = guide
              .slice(guide.indexOf('scrape_configs:\n') + 'scrape_configs:\n'.length)
              .replace("'controller:9090'", `'${url.host}'`);
            expect(job).toContain(`targets: ['${url.host}']`);
            prometheus = await startPrometheus(peer, [], {
              scrapeConfigs: job,
              features: ['exemplar-storage'],
            });
            const server = prometheus;
            type Native = { metric: Record<string, string>; histogram?: [number, { count: string; buckets?: unknown[] }]; value?: unknown };
            const query = (promql: string) => server.api<{ result: Native[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
            const families = [
              'ctl_reconciliation_duration_seconds',
              'ctl_deployment_duration_seconds',
              'controller_runtime_reconcile_time_seconds',
              'workqueue_queue_duration_seconds',
              'workqueue_work_duration_seconds',
            ];
            for (const family of families) {
              const { result } = await eventually(
                async () => {
                  const answer = await query(family);
                  return answer.result.length > 0 && answer.result.every((r) => Number(r.histogram?.[1].count) > 0) ? answer : undefined;
                },
                { timeoutMs: 30_000, intervalMs: 250, what: `native ${family} with observations` },
              );
              // A native histogram is one series with a histogram value, and no classic _bucket series beside it.
              expect(
                result.every((r) => r.histogram !== undefined && r.value === undefined && (r.histogram[1].buckets?.length ?? 0) > 0),
              ).toBe(true);
              expect((await query(`${family}_bucket`)).result).toEqual([]);
            }
            const quantile = await query('histogram_quantile(0.9, ctl_reconciliation_duration_seconds)');
            const answered = Number((quantile.result[0] as unknown as { value: [number, string] }).value[1]);
            expect(answered).toBeGreaterThan(0);
            expect(answered).toBeLessThan(60);
            const exemplars = await eventually(
              async () => {
                const end = Date.now() / 1000;
                const found = await server.api<Array<{ exemplars: Array<{ labels: Record<string, string> }> }>>(
                  `/api/v1/query_exemplars?query=${encodeURIComponent('ctl_reconciliation_duration_seconds')}&start=${end - 600}&end=${end}`,
                );
                const all = found.flatMap((s) => s.exemplars);
                return all.length > 0 ? all : undefined;
              },
              { timeoutMs: 30_000, intervalMs: 250, what: 'exemplars of the native histogram' },
            );
            const id = exemplars[exemplars.length - 1]!.labels['correlation_id']!;
            expect(id).toMatch(/^[0-9a-f-]{36}$/);
            const events = await request(`${app!.debugUrl}/debug/vars/events?correlation_id=${id}`);
            expect(events.json<Array<{ correlation_id: string }>>().map((e) => e.correlation_id)).toContain(id);
          });
        }
      });
    }
  },
);
