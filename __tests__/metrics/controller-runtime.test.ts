/**
 * controller-runtime's families, opt-in: names, types, labels and buckets as controller-runtime and
 * client-go define them (written out here from their sources, independently of the library:
 * controller-runtime pkg/internal/controller/metrics/metrics.go, pkg/metrics/workqueue.go,
 * pkg/metrics/leaderelection.go), fed by the record and time helpers.
 */
import { Counter, Registry } from 'prom-client';
import { createControllerMetrics, type ControllerMetricsOptions } from '../../lib/metrics';
import { family, sampleValue, type Exposition } from './helpers/exposition-parser';
import { FakeClock } from './helpers/fake-state';
import { metricsApp, scrape } from './helpers/server';

/** controller-runtime's ReconcileTime buckets. */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5,
  5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

const FAMILIES: ReadonlyArray<readonly [name: string, type: string, labels: readonly string[]]> = [
  ['controller_runtime_reconcile_total', 'counter', ['controller', 'result']],
  ['controller_runtime_reconcile_errors_total', 'counter', ['controller']],
  ['controller_runtime_reconcile_time_seconds', 'histogram', ['controller']],
  ['controller_runtime_max_concurrent_reconciles', 'gauge', ['controller']],
  ['controller_runtime_active_workers', 'gauge', ['controller']],
  ['leader_election_master_status', 'gauge', ['name']],
  ['workqueue_depth', 'gauge', ['name', 'controller']],
  ['workqueue_adds_total', 'counter', ['name', 'controller']],
  ['workqueue_queue_duration_seconds', 'histogram', ['name', 'controller']],
  ['workqueue_work_duration_seconds', 'histogram', ['name', 'controller']],
  ['workqueue_unfinished_work_seconds', 'gauge', ['name', 'controller']],
  ['workqueue_longest_running_processor_seconds', 'gauge', ['name', 'controller']],
  ['workqueue_retries_total', 'counter', ['name', 'controller']],
];

const RUNTIME_NAMES = FAMILIES.map(([name]) => name);

function setup(options: ControllerMetricsOptions = {}) {
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, undefined, options);
  return { registry, metrics, app: metricsApp(registry) };
}

function runtimeFamilies(e: Exposition): string[] {
  return [...e.families.keys()].filter((name) => RUNTIME_NAMES.includes(name));
}

function bounds(e: Exposition, name: string): number[] {
  return family(e, name)
    .samples.filter((s) => s.name === `${name}_bucket` && s.labels['le'] !== '+Inf')
    .map((s) => Number(s.labels['le']));
}

describe('controller-runtime families', () => {
  it('are off by default', async () => {
    const { app } = setup();
    expect(runtimeFamilies(await scrape(app))).toEqual([]);
  });

  it('carry controller-runtime names, types, labels and buckets, every result at 0 from the start', async () => {
    const { app, metrics } = setup({ controllerRuntime: { controller: 'ingress' } });
    // The workqueue families have series only once a queue reports (see the work queue tests).
    const e = await scrape(app);
    expect(runtimeFamilies(e)).toEqual(RUNTIME_NAMES);
    for (const [name, type] of FAMILIES) expect({ name, type: family(e, name).type }).toEqual({ name, type });
    for (const [name, , labels] of FAMILIES.slice(0, 6)) {
      for (const sample of family(e, name).samples) {
        expect({ name, labels: Object.keys(sample.labels).filter((l) => l !== 'le') }).toEqual({ name, labels });
      }
    }
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'ingress', result })).toBe(0);
    }
    expect(family(e, 'controller_runtime_reconcile_total').samples).toHaveLength(4);
    expect(sampleValue(e, 'controller_runtime_reconcile_errors_total', { controller: 'ingress' })).toBe(0);
    expect(sampleValue(e, 'controller_runtime_reconcile_time_seconds_count', { controller: 'ingress' })).toBe(0);
    expect(bounds(e, 'controller_runtime_reconcile_time_seconds')).toEqual(RECONCILE_TIME_BUCKETS);
    expect(sampleValue(e, 'controller_runtime_max_concurrent_reconciles', { controller: 'ingress' })).toBe(1);
    expect(sampleValue(e, 'controller_runtime_active_workers', { controller: 'ingress' })).toBe(0);
    // The lease is named after the controller unless told.
    expect(sampleValue(e, 'leader_election_master_status', { name: 'ingress' })).toBe(0);
    metrics.setLeader(true);
    expect(sampleValue(await scrape(app), 'leader_election_master_status', { name: 'ingress' })).toBe(1);
  });

  it('count reconciliations by result and time them, fed by recordReconciliation and timeReconciliation', async () => {
    const clock = new FakeClock();
    const { app, metrics } = setup({ controllerRuntime: true, now: clock.now });
    metrics.recordReconciliation(0.12, true);
    metrics.recordReconciliation(7.5, false);
    let activeDuring: number | undefined;
    await metrics.timeReconciliation(async () => {
      clock.advance(2000);
      activeDuring = sampleValue(await scrape(app), 'controller_runtime_active_workers', { controller: 'controller' });
    });
    const e = await scrape(app);
    expect(activeDuring).toBe(1);
    expect(sampleValue(e, 'controller_runtime_active_workers', { controller: 'controller' })).toBe(0);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'controller', result: 'success' })).toBe(2);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'controller', result: 'error' })).toBe(1);
    expect(sampleValue(e, 'controller_runtime_reconcile_errors_total', { controller: 'controller' })).toBe(1);
    expect(sampleValue(e, 'controller_runtime_reconcile_time_seconds_count', { controller: 'controller' })).toBe(3);
    expect(sampleValue(e, 'controller_runtime_reconcile_time_seconds_sum', { controller: 'controller' })).toBeCloseTo(9.62, 10);
    expect(sampleValue(e, 'controller_runtime_reconcile_time_seconds_bucket', { controller: 'controller', le: '0.15' })).toBe(1);
    expect(sampleValue(e, 'controller_runtime_reconcile_time_seconds_bucket', { controller: 'controller', le: '2' })).toBe(2);
    expect(sampleValue(e, 'controller_runtime_reconcile_time_seconds_bucket', { controller: 'controller', le: '8' })).toBe(3);
    // The spec's families are fed as before.
    expect(sampleValue(e, 'ctl_reconciliation_total')).toBe(3);
  });

  it('are shared by the controllers of one registry, told apart by the controller label', async () => {
    const registry = new Registry();
    const a = createControllerMetrics(registry, undefined, { prefix: 'a_', controllerRuntime: { controller: 'ingress', leaseName: 'lb' } });
    const b = createControllerMetrics(registry, undefined, { prefix: 'b_', controllerRuntime: { controller: 'service', leaseName: 'lb' } });
    a.recordReconciliation(0.1, true);
    b.recordReconciliation(0.1, false);
    b.setLeader(true);
    const app = metricsApp(registry);
    const e = await scrape(app);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'ingress', result: 'success' })).toBe(1);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'service', result: 'error' })).toBe(1);
    // One lease: leading under it by either controller is leading.
    expect(family(e, 'leader_election_master_status').samples).toEqual([
      { name: 'leader_election_master_status', labels: { name: 'lb' }, value: 1 },
    ]);

    await a.close();
    const after = await scrape(app);
    expect(sampleValue(after, 'controller_runtime_reconcile_total', { controller: 'ingress', result: 'success' })).toBeUndefined();
    expect(sampleValue(after, 'controller_runtime_reconcile_total', { controller: 'service', result: 'error' })).toBe(1);
    await b.close();
    await b.close();
    expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual([]);
    // With the families gone, a new controller starts them afresh.
    createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'ingress' } });
    expect(sampleValue(await scrape(app), 'controller_runtime_reconcile_total', { controller: 'ingress', result: 'error' })).toBe(0);
  });

  it('refuse a second controller of the same name, and names the host already owns, registering nothing', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'ingress' } });
    const count = registry.getMetricsAsArray().length;
    expect(() => createControllerMetrics(registry, undefined, { prefix: 'other_', controllerRuntime: { controller: 'ingress' } })).toThrow(
      /another ControllerMetrics on this registry already reports that controller/,
    );
    expect(registry.getMetricsAsArray()).toHaveLength(count);

    const hosts = new Registry();
    new Counter({ name: 'workqueue_adds_total', help: 'the host has its own', registers: [hosts] });
    expect(() => createControllerMetrics(hosts, undefined, { controllerRuntime: true })).toThrow(
      /metric "workqueue_adds_total" is already registered on this registry by someone else/,
    );
    expect(hosts.getMetricsAsArray().map((m) => m.name)).toEqual(['workqueue_adds_total']);
  });

  it('come back after registry.clear()', async () => {
    const { registry, app } = setup({ controllerRuntime: { controller: 'ingress' } });
    registry.clear();
    createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'service' } });
    const e = await scrape(app);
    expect(runtimeFamilies(e)).toEqual(RUNTIME_NAMES);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'ingress', result: 'success' })).toBeUndefined();
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'service', result: 'success' })).toBe(0);
  });

  it('validate their options at creation with "did you mean"', () => {
    const registry = new Registry();
    expect(() => createControllerMetrics(registry, undefined, { controllerRuntim: true } as ControllerMetricsOptions)).toThrow(
      'createControllerMetrics: unknown option "controllerRuntim" (did you mean "controllerRuntime"?)',
    );
    expect(() =>
      createControllerMetrics(registry, undefined, {
        controllerRuntime: { controler: 'x' } as ControllerMetricsOptions['controllerRuntime'],
      }),
    ).toThrow('unknown option "controllerRuntime.controler" (did you mean "controller"?)');
    expect(() => createControllerMetrics(registry, undefined, { controllerRuntime: { controller: '' } })).toThrow(
      'createControllerMetrics: controllerRuntime.controller must be a non-empty string',
    );
    expect(() => createControllerMetrics(registry, undefined, { controllerRuntime: 'yes' as unknown as boolean })).toThrow(
      'createControllerMetrics: controllerRuntime must be true, false or { controller: "ingress" }',
    );
    expect(registry.getMetricsAsArray()).toHaveLength(0);
  });
});
