/**
 * `promtool check metrics` on both formats, of Prometheus 2.42 (Debian's `prometheus` package) and
 * of Prometheus 3.16 (built from its module), which word their lints alike.
 *
 * promtool (either version) reads only the text format: on OpenMetrics it takes each counter's `_total` samples for a
 * family of their own, one without HELP, and reports that; it cannot read exemplars, nor the `\"`
 * OpenMetrics requires for a double quote in HELP. So OpenMetrics is checked here, on a registry
 * without those two, for exactly the counter artifacts and nothing else (no parse error, no other
 * lint); that OpenMetrics answers are valid is proven by a real Prometheus ingesting them
 * (prometheus-openmetrics.test.ts).
 */
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { createControllerMetrics } from '../../../lib/metrics';
import { renderExpositionText } from '../../../lib/metrics/exposition';
import { describeWithPrometheus, prometheusPeers, promtoolCheckMetrics } from '../../peer/prometheus-harness';

/** The spec names a gauge `*_resource_count`; promtool objects (2.42 and 3.16 in these words), and the spec wins. */
const ACCEPTED_LINT = 'ctl_resource_count non-histogram and non-summary metrics should not have "_count" suffix';
const COUNTS = { ingresses: 3, 'lb-pods': 2 };

function lintableRegistry(): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ cluster: 'eu "1"' });
  const state = { resourceCounts: () => COUNTS, eventStats: () => ({ published: 1, subscribers: 0 }) };
  const metrics = createControllerMetrics(registry, state, { now: () => 1000 });
  metrics.recordReconciliation(0.3, false);
  metrics.setLeader(true);
  const jobs = new Counter({ name: 'host_jobs_total', help: 'Jobs with a \\ and\na newline', labelNames: ['kind'], registers: [registry] });
  jobs.inc({ kind: 'a\\b"c\nd' }, 2);
  const temperature = new Gauge({ name: 'host_temperature_celsius', help: 'Temperature', labelNames: ['sensor'], registers: [registry] });
  temperature.set({ sensor: 'nan' }, NaN);
  temperature.set({ sensor: 'hot' }, Infinity);
  temperature.set({ sensor: 'cold' }, -Infinity);
  temperature.set({ sensor: 'tiny' }, 5e-324);
  new Histogram({ name: 'host_request_duration_seconds', help: 'Requests', labelNames: ['code'], registers: [registry] }).observe(
    { code: '200' },
    0.2,
  );
  new Summary({ name: 'host_payload_bytes', help: 'Payloads', percentiles: [0.5, 0.99], registers: [registry] }).observe(512);
  new Gauge({ name: 'host_empty_family', help: 'No series yet', labelNames: ['x'], registers: [registry] });
  return registry;
}

for (const peer of prometheusPeers()) {
  const promtool = peer.promtool;
  describeWithPrometheus(peer)(`promtool check metrics (${peer.label})`, () => {
    it('accepts the text format, but for the spec-mandated resource_count name', async () => {
      const registry = lintableRegistry();
      new Gauge({ name: 'host_quoted', help: 'A "quoted" help', registers: [registry] });
      const result = await promtoolCheckMetrics(promtool!, await renderExpositionText(registry, 'text'));
      expect(result).toEqual({ exitCode: 3, lines: [ACCEPTED_LINT] });
    });

    it('finds nothing in OpenMetrics but the counter samples it cannot attach to their family', async () => {
      const registry = lintableRegistry();
      const counters = registry
        .getMetricsAsArray()
        .filter((metric) => String(metric.type) === 'counter')
        .map((metric) => `${metric.name.replace(/_total$/, '')}_total no help text`);
      const result = await promtoolCheckMetrics(promtool!, await renderExpositionText(registry, 'openmetrics'));
      expect(result.exitCode).toBe(3);
      expect(result.lines.sort()).toEqual([...counters, ACCEPTED_LINT].sort());
    });
  });
}
