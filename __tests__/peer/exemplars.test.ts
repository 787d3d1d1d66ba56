/**
 * A real Prometheus (exemplar storage on; Debian's 2.42, and 3.16 built from its module, each with
 * replicas of its own) scrapes two replicas of the example controller:
 * it ingests their OpenMetrics answers, `/api/v1/query_exemplars` gives back exemplars whose
 * `correlation_id` is a cycle the replica's `/debug/vars/events?correlation_id=` answers, and
 * controller-runtime's and the work queue's families are queryable with the values the replicas
 * produced. The debugging workflow the metrics guide gives ("from a slow cycle in Prometheus to its
 * events") is run here as written, with the test's addresses put in for `prometheus:9090` and
 * `localhost:8080`.
 *
 * Without a version's binaries (or jq, which the workflow uses) its tests skip, unless `CI` is set,
 * where they fail.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { request } from '../helpers/http';
import { blocksRunBy, shellCommands } from '../helpers/markdown';
import { freePorts } from '../helpers/ports';
import { describeWithPrometheus, findBinary, prometheusPeers, startPrometheus, type PrometheusServer } from './prometheus-harness';

/**
 * The debugging guide's workflow, read from the guide (`<!-- run: prometheus-exemplars -->`): the
 * five slowest cycles Prometheus holds an exemplar for (milliseconds, cycle id, the replica's
 * metrics address), then everything one of them did.
 */
const [SLOW_CYCLES_COMMAND, CYCLE_EVENTS_COMMAND] = blocksRunBy('prometheus-exemplars').flatMap(shellCommands) as [string, string];

const jqBin = findBinary('jq');

/** The 13 families as Prometheus stores them: histograms as `_bucket`, `_sum` and `_count`. */
const RUNTIME_SERIES = [
  'controller_runtime_reconcile_total',
  'controller_runtime_reconcile_errors_total',
  'controller_runtime_reconcile_time_seconds',
  'controller_runtime_max_concurrent_reconciles',
  'controller_runtime_active_workers',
  'leader_election_master_status',
  'workqueue_depth',
  'workqueue_adds_total',
  'workqueue_queue_duration_seconds',
  'workqueue_work_duration_seconds',
  'workqueue_unfinished_work_seconds',
  'workqueue_longest_running_processor_seconds',
  'workqueue_retries_total',
]
  .flatMap((name) =>
    name.endsWith('_seconds') && !/unfinished|longest/.test(name) ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
  )
  .sort();

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

interface ExemplarSeries {
  seriesLabels: Record<string, string>;
  exemplars: Array<{ labels: Record<string, string>; value: string; timestamp: number }>;
}

function sh(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { timeout: 30_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) : 0, stdout, stderr });
    });
  });
}

for (const peer of prometheusPeers()) {
  describeWithPrometheus(peer, jqBin === undefined ? 'jq not on PATH (apt-get install -y --no-install-recommends jq)' : undefined)(
    `a real Prometheus with exemplar storage scraping two example replicas (${peer.label})`,
    () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-exemplars-'));
      const replicas: ExampleApp[] = [];
      /** Replica by the address Prometheus scrapes it at (its `instance` label). */
      const byInstance = new Map<string, ExampleApp>();
      let prometheus: PrometheusServer | undefined;

      beforeAll(async () => {
        requireFreshDist();
        const ports = await freePorts(2);
        const leaseFile = path.join(dir, 'lease.json');
        // One lease, as in a real deployment: one replica deploys, both reconcile (the follower renders
        // and validates). Validation fails now and then, so the work queue retries. A cycle every
        // 500 ms keeps a minute of events in the ring, longer than this test runs.
        for (const [i, port] of ports.entries()) {
          const app = await startExample({
            leaseFile,
            replicaId: `replica-${'ab'[i]}`,
            metricsPort: port,
            simulation: { reconcileIntervalMs: 500, validationFailureRate: 0.3, cpuBurnMs: 2 },
          });
          replicas.push(app);
          byInstance.set(`127.0.0.1:${port}`, app);
        }
        const targets = [...byInstance.keys()].map((instance) => new URL(`http://${instance}/metrics`));
        prometheus = await startPrometheus(peer, targets, { features: ['exemplar-storage'] });
      });

      afterAll(async () => {
        // Each stop runs even if another failed, so no process outlives the test.
        const results = await Promise.allSettled([prometheus?.stop(), ...replicas.map((r) => r.stop())]);
        fs.rmSync(dir, { recursive: true, force: true });
        const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failure) throw failure.reason;
      });

      const withLog = async <T>(step: () => Promise<T>): Promise<T> => {
        try {
          return await step();
        } catch (err) {
          throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- prometheus log ---\n${prometheus!.log().slice(-4000)}`);
        }
      };
      const query = (promql: string) => prometheus!.api<{ result: VectorSample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
      const values = async (promql: string): Promise<Record<string, number>> =>
        Object.fromEntries((await query(promql)).result.map((r) => [r.metric['instance'] ?? '', Number(r.value[1])]));

      it('ingests the OpenMetrics answers of both replicas: targets up, samples stored', async () => {
        await withLog(() =>
          eventually(
            async () => {
              const reconciled = await values('ctl_reconciliation_total');
              return Object.keys(reconciled).length === 2 && Object.values(reconciled).every((n) => n > 0);
            },
            { timeoutMs: 30_000, intervalMs: 250, what: 'ctl_reconciliation_total of both replicas' },
          ),
        );
        const { activeTargets } = await prometheus!.api<{
          activeTargets: Array<{ labels: Record<string, string>; health: string; lastError: string }>;
        }>('/api/v1/targets');
        expect(activeTargets.map((t) => [t.labels['instance'], t.health, t.lastError]).sort()).toEqual(
          [...byInstance.keys()].map((instance) => [instance, 'up', '']).sort(),
        );
        // OpenMetrics names a counter's family without `_total`: the metadata shows which format was read.
        const metadata = await prometheus!.api<Record<string, Array<{ type: string }>>>('/api/v1/metadata?metric=workqueue_adds');
        expect(metadata['workqueue_adds']?.[0]?.type).toBe('counter');
      });

      it('returns exemplars whose correlation_id is a cycle the replica that ran it answers for', async () => {
        const series = await withLog(() =>
          eventually(
            async () => {
              const end = Date.now() / 1000;
              const found = await prometheus!.api<ExemplarSeries[]>(
                `/api/v1/query_exemplars?query=${encodeURIComponent('ctl_reconciliation_duration_seconds_bucket')}&start=${end - 600}&end=${end}`,
              );
              const instances = new Set(found.filter((s) => s.exemplars.length > 0).map((s) => s.seriesLabels['instance']));
              return instances.size === 2 ? found : undefined;
            },
            { timeoutMs: 30_000, intervalMs: 250, what: 'exemplars from both replicas' },
          ),
        );
        for (const [instance, app] of byInstance) {
          const exemplars = series.filter((s) => s.seriesLabels['instance'] === instance).flatMap((s) => s.exemplars);
          const newest = exemplars.reduce((a, b) => (a.timestamp >= b.timestamp ? a : b));
          const id = newest.labels['correlation_id']!;
          expect(Object.keys(newest.labels)).toEqual(['correlation_id']);
          expect(id).toMatch(/^[0-9a-f-]{36}$/);
          const res = await request(`${app.debugUrl}/debug/vars/events?correlation_id=${id}`);
          expect(res.status).toBe(200);
          const events = res.json<Array<{ type: string; correlation_id: string }>>();
          expect(events.length).toBeGreaterThan(0);
          expect(new Set(events.map((e) => e.correlation_id))).toEqual(new Set([id]));
          expect(events.map((e) => e.type)).toContain('reconciliation.triggered');
        }
        // The controller-runtime histogram carries the same cycles' ids.
        const end = Date.now() / 1000;
        const runtime = await prometheus!.api<ExemplarSeries[]>(
          `/api/v1/query_exemplars?query=${encodeURIComponent('controller_runtime_reconcile_time_seconds_bucket')}&start=${end - 600}&end=${end}`,
        );
        expect(runtime.flatMap((s) => s.exemplars).length).toBeGreaterThan(0);
      });

      it("runs the guide's workflow as written: from the slowest cycles in Prometheus to their events", async () => {
        const prometheusHost = new URL(prometheus!.origin).host;
        const slow = await sh(SLOW_CYCLES_COMMAND.replaceAll('prometheus:9090', prometheusHost));
        expect({ code: slow.code, stderr: slow.stderr }).toEqual({ code: 0, stderr: '' });
        const lines = slow.stdout.trim().split('\n');
        expect(lines.length).toBeGreaterThan(0);
        expect(lines.length).toBeLessThanOrEqual(5);
        const rows = lines.map((line) => {
          const match = /^(\d+) ms {2}(\S+) {2}(\S+)$/.exec(line);
          if (match === null) throw new Error(`unexpected line from the workflow: ${line}`);
          return { ms: Number(match[1]), id: match[2]!, instance: match[3]! };
        });
        expect(rows.map((r) => r.ms)).toEqual([...rows.map((r) => r.ms)].sort((a, b) => b - a));
        for (const { id, instance } of rows) {
          const app = byInstance.get(instance);
          expect(app).toBeDefined();
          const events = await sh(CYCLE_EVENTS_COMMAND.replace('localhost:8080', new URL(app!.debugUrl!).host).replace('<id>', id));
          expect(events.code).toBe(0);
          const parsed = JSON.parse(events.stdout) as Array<{ correlation_id: string }>;
          expect(parsed.length).toBeGreaterThan(0);
          expect(new Set(parsed.map((e) => e.correlation_id))).toEqual(new Set([id]));
        }
      });

      it("stores controller-runtime's and the work queue's families with the replicas' values", async () => {
        const names = await withLog(() =>
          eventually(
            async () => {
              const { result } = await query(
                'count by (__name__) ({__name__=~"controller_runtime_.*|workqueue_.*|leader_election_master_status"})',
              );
              const found = result.map((r) => r.metric['__name__']!).sort();
              return found.length === RUNTIME_SERIES.length ? found : undefined;
            },
            { timeoutMs: 15_000, intervalMs: 250, what: 'every controller-runtime series' },
          ),
        );
        expect(names).toEqual(RUNTIME_SERIES);
        const both = (found: Record<string, number>) => Object.keys(found).sort();
        const instances = [...byInstance.keys()].sort();
        const succeeded = await values('controller_runtime_reconcile_total{controller="loadbalancer",result="success"}');
        expect(both(succeeded)).toEqual(instances);
        expect(Object.values(succeeded).every((n) => n > 0)).toBe(true);
        // One lease: exactly one replica holds it.
        expect(Object.values(await values('leader_election_master_status{name="controller-introspection-example"}')).sort()).toEqual([
          0, 1,
        ]);
        expect(Object.values(await values('controller_runtime_max_concurrent_reconciles{controller="loadbalancer"}'))).toEqual([1, 1]);
        const queue = '{name="loadbalancer",controller="loadbalancer"}';
        for (const series of [
          `workqueue_adds_total${queue}`,
          `workqueue_queue_duration_seconds_count${queue}`,
          `workqueue_work_duration_seconds_count${queue}`,
        ]) {
          const found = await values(series);
          expect({ series, instances: both(found), positive: Object.values(found).every((n) => n > 0) }).toEqual({
            series,
            instances,
            positive: true,
          });
        }
        expect(Object.values(await values(`sum(workqueue_retries_total${queue})`))[0]).toBeGreaterThan(0);
        expect(Object.values(await values(`sum(controller_runtime_reconcile_errors_total)`))[0]).toBeGreaterThan(0);
        // The dashboards' usual queries answer: a work duration quantile and the time per reconcile.
        const p99 = await eventually(
          async () => {
            const found = await values(
              `histogram_quantile(0.99, sum by (instance, le) (rate(workqueue_work_duration_seconds_bucket${queue}[1m])))`,
            );
            return Object.values(found).filter((s) => !Number.isNaN(s)).length === 2 ? found : undefined;
          },
          { timeoutMs: 15_000, intervalMs: 250, what: 'a work duration quantile per replica (rate() needs two scrapes with work between)' },
        );
        expect(both(p99)).toEqual(instances);
        expect(Object.values(p99).every((s) => s > 0 && s < 10)).toBe(true);
        for (const gauge of [
          'workqueue_depth',
          'workqueue_unfinished_work_seconds',
          'workqueue_longest_running_processor_seconds',
          'controller_runtime_active_workers',
        ]) {
          const found = await values(gauge);
          expect({ gauge, instances: both(found), valid: Object.values(found).every((n) => n >= 0) }).toEqual({
            gauge,
            instances,
            valid: true,
          });
        }
      });
    },
  );
}
