/**
 * A real Prometheus (Debian's 2.42, and 3.16 built from its module) scrapes the router, asks for
 * OpenMetrics first as both do by default, and ingests the answer: the target is up with no scrape
 * error, and every sample is stored with its value, escapes, NaN and infinities included.
 * Exemplars and `# UNIT` are in the answer, so a syntax error in either would fail the scrape.
 * Prometheus 3 asks for `escaping=allow-utf-8`, which the answer states back (every name is of the
 * legacy set), and stores a classic bucket's `le` as a float (`1` becomes `1.0`).
 */
import express from 'express';
import { Counter, Gauge, Histogram, Registry, Summary, type OpenMetricsContentType, type RegistryContentType } from 'prom-client';
import { createMetricsRouter } from '../../../lib/metrics';
import { eventually } from '../../helpers/eventually';
import { listen, type Listening } from '../../helpers/http';
import { describeWithPrometheus, prometheusPeers, startPrometheus, type PrometheusServer } from '../../peer/prometheus-harness';

function registryWithEverything(): Registry<OpenMetricsContentType> {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  registry.setDefaultLabels({ replica: 'a' });
  const all = registry as Registry<RegistryContentType>;
  const jobs = new Counter<string>({
    name: 'om_jobs_total',
    help: 'Jobs, with "quotes" and a \\ in HELP',
    labelNames: ['kind'],
    enableExemplars: true,
    registers: [all],
  });
  jobs.inc({ labels: { kind: 'a"b\\c\nd' }, value: 3, exemplarLabels: { correlation_id: 'cycle-42' } });
  const gauge = new Gauge({
    name: 'om_temperature_celsius',
    help: 'Has a unit',
    labelNames: ['sensor'],
    registers: [all],
    ...{ unit: 'celsius' },
  });
  gauge.set({ sensor: 'nan' }, NaN);
  gauge.set({ sensor: 'hot' }, Infinity);
  gauge.set({ sensor: 'cold' }, -Infinity);
  const histogram = new Histogram<string>({
    name: 'om_cycle_seconds',
    help: 'Cycles',
    buckets: [0.1, 1],
    enableExemplars: true,
    registers: [all],
  });
  histogram.observe({ value: 0.5, exemplarLabels: { correlation_id: 'cycle-43' } });
  histogram.observe({ value: 3 });
  new Summary({ name: 'om_payload_bytes', help: 'Payloads', percentiles: [0.5], registers: [all] }).observe(512);
  return registry;
}

interface Target {
  scrapeUrl: string;
  health: string;
  lastError: string;
  lastScrape: string;
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

for (const peer of prometheusPeers()) {
  describeWithPrometheus(peer)(`a real Prometheus ingests the OpenMetrics answer (${peer.label})`, () => {
    let target: Listening | undefined;
    let prometheus: PrometheusServer | undefined;
    const answered: string[] = [];

    beforeAll(async () => {
      const app = express();
      app.use((_req, res, next) => {
        res.on('finish', () => answered.push(String(res.getHeader('content-type'))));
        next();
      });
      app.use(createMetricsRouter(registryWithEverything()));
      target = await listen(app);
    });

    afterAll(async () => {
      const results = await Promise.allSettled([prometheus?.stop(), target?.close()]);
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
    });

    it('scrapes it with no error and stores every sample', async () => {
      const url = new URL(`${target!.origin}/metrics`);
      prometheus = await startPrometheus(peer, url);
      const server = prometheus;
      const scraped = await eventually(
        async () => {
          const { activeTargets } = await server.api<{ activeTargets: Target[] }>('/api/v1/targets');
          const found = activeTargets.find((t) => t.scrapeUrl === url.href);
          return found && found.health !== 'unknown' && !found.lastScrape.startsWith('0001-') ? found : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200, what: `a completed scrape (log: ${server.log().slice(-2000)})` },
      );
      expect({ health: scraped.health, lastError: scraped.lastError }).toEqual({ health: 'up', lastError: '' });
      expect(answered.length).toBeGreaterThan(0);
      // 2.42 asks for no escaping (the default, underscores, is answered); 3.x asks for allow-utf-8.
      const escaping = peer.major === 3 ? 'allow-utf-8' : 'underscores';
      expect(new Set(answered)).toEqual(new Set([`application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=${escaping}`]));

      const query = async (promql: string) =>
        (await server.api<{ result: VectorSample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)).result;
      const value = async (promql: string) => (await query(promql)).map((r) => r.value[1]);
      await eventually(async () => (await value('om_jobs_total')).length === 1, {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: 'om_jobs_total stored',
      });
      const jobs = await query('om_jobs_total');
      expect(jobs.map((r) => [r.metric.kind, r.metric.replica, r.value[1]])).toEqual([['a"b\\c\nd', 'a', '3']]);
      expect(await value('om_temperature_celsius{sensor="nan"}')).toEqual(['NaN']);
      expect(await value('om_temperature_celsius{sensor="hot"}')).toEqual(['+Inf']);
      expect(await value('om_temperature_celsius{sensor="cold"}')).toEqual(['-Inf']);
      const buckets = await query('om_cycle_seconds_bucket');
      // Prometheus 3 normalises `le` to a float on ingestion (its 3.0 migration guide).
      const one = peer.major === 3 ? '1.0' : '1';
      expect(buckets.map((r) => [r.metric.le, r.value[1]]).sort()).toEqual([
        ['+Inf', '2'],
        ['0.1', '0'],
        [one, '1'],
      ]);
      expect(await value('om_cycle_seconds_bucket{le="+Inf"}')).toEqual(['2']);
      expect(await value('om_cycle_seconds_count')).toEqual(['2']);
      expect(await value('om_payload_bytes{quantile="0.5"}')).toEqual(['512']);
      expect(await value('scrape_samples_scraped')).toEqual(['12']);
    });
  });
}
