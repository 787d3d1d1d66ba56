import fs from 'node:fs';
import path from 'node:path';
import { Counter, Registry } from 'prom-client';
import {
  CONTROLLER_METRICS_DEFAULTS,
  controllerMetricNames,
  createControllerMetrics,
  DEFAULT_DURATION_BUCKETS,
  MetricCollectError,
} from '../../lib/metrics';
import { requestApp } from '../helpers/http';
import { family, parseExposition, sampleValue } from './helpers/exposition-parser';
import { FakeClock, FakeState } from './helpers/fake-state';
import { metricsApp, scrape } from './helpers/server';

/** This package's version, as its package.json says. */
const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string })
  .version;

/** The spec table (interface.md section 2, "Metrics"), written out independently of lib/metrics/names.ts. */
const SPEC: ReadonlyArray<readonly [name: string, type: string, labels: readonly string[], help: string]> = [
  ['ctl_reconciliation_total', 'counter', [], 'Reconciliation cycles triggered'],
  ['ctl_reconciliation_duration_seconds', 'histogram', [], 'Time in reconciliation cycles'],
  ['ctl_reconciliation_errors_total', 'counter', [], 'Failed reconciliation cycles'],
  ['ctl_deployment_total', 'counter', [], 'Deployment attempts'],
  ['ctl_deployment_duration_seconds', 'histogram', [], 'Time deploying to the load balancer'],
  ['ctl_deployment_errors_total', 'counter', [], 'Failed deployments'],
  ['ctl_validation_total', 'counter', [], 'Validation attempts'],
  ['ctl_validation_errors_total', 'counter', [], 'Failed validations'],
  ['ctl_resource_count', 'gauge', ['type'], 'Current count of watched resources'],
  ['ctl_event_subscribers', 'gauge', [], 'Active event subscribers'],
  ['ctl_events_published_total', 'counter', [], 'Events published'],
  ['ctl_leader_election_is_leader', 'gauge', [], '1 if this replica is leader, 0 otherwise'],
  ['ctl_leader_election_transitions_total', 'counter', [], 'Leadership transitions (gain or loss)'],
  ['ctl_leader_election_time_as_leader_seconds_total', 'counter', [], 'Cumulative seconds as leader'],
];

function setup(state?: Parameters<typeof createControllerMetrics>[1], options: Parameters<typeof createControllerMetrics>[2] = {}) {
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state, options);
  return { registry, metrics, app: metricsApp(registry) };
}

describe('controller metric families', () => {
  it('exposes exactly the 14 families of the spec with their types, HELP texts and label names, plus build_info, and event_watchers with a state', async () => {
    const state = new FakeState();
    state.counts = { ingresses: 1 };
    const { app } = setup(state);
    const exposition = await scrape(app);

    // event_watchers counts HTTP event watches apart from the spec's event_subscribers.
    expect([...exposition.families.keys()].sort()).toEqual([...SPEC.map(([name]) => name), 'ctl_build_info', 'ctl_event_watchers'].sort());
    expect(family(exposition, 'ctl_event_watchers').type).toBe('gauge');
    expect(sampleValue(exposition, 'ctl_event_watchers')).toBe(0);
    expect([...(await scrape(setup().app)).families.keys()].sort()).toEqual([...SPEC.map(([name]) => name), 'ctl_build_info'].sort());
    expect([...(await scrape(setup(undefined, { buildInfo: false }).app)).families.keys()].sort()).toEqual(
      SPEC.map(([name]) => name).sort(),
    );
    for (const [name, type, labels, help] of SPEC) {
      const fam = family(exposition, name);
      expect({ name, type: fam.type, help: fam.help }).toEqual({ name, type, help });
      expect(fam.samples.length).toBeGreaterThan(0);
      for (const sample of fam.samples) {
        const own = Object.keys(sample.labels).filter((label) => label !== 'le');
        expect({ name: sample.name, labels: own }).toEqual({ name: sample.name, labels });
      }
    }
    expect(controllerMetricNames()).toEqual(SPEC.map(([name]) => name));
  });

  it('gives both duration histograms the default 10 ms … 10 s buckets plus +Inf, _sum and _count', async () => {
    const { app } = setup();
    const exposition = await scrape(app);
    for (const name of ['ctl_reconciliation_duration_seconds', 'ctl_deployment_duration_seconds']) {
      const fam = family(exposition, name);
      const bounds = fam.samples
        .filter((s) => s.name === `${name}_bucket`)
        .map((s) => Number(s.labels.le === '+Inf' ? Infinity : s.labels.le));
      expect(bounds).toEqual([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, Infinity]);
      expect(sampleValue(exposition, `${name}_sum`)).toBe(0);
      expect(sampleValue(exposition, `${name}_count`)).toBe(0);
    }
    expect(DEFAULT_DURATION_BUCKETS).toEqual([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  });

  it('uses configured buckets per histogram', async () => {
    const { app } = setup(undefined, { buckets: { reconciliation: [1, 60], deployment: [0.5] } });
    const exposition = await scrape(app);
    const les = (name: string) =>
      family(exposition, name)
        .samples.filter((s) => s.name.endsWith('_bucket'))
        .map((s) => s.labels.le);
    expect(les('ctl_reconciliation_duration_seconds')).toEqual(['1', '60', '+Inf']);
    expect(les('ctl_deployment_duration_seconds')).toEqual(['0.5', '+Inf']);
  });

  it.each([
    ['empty', []],
    ['unsorted', [1, 0.5]],
    ['duplicated', [1, 1]],
    ['non-finite', [1, Infinity]],
    ['non-numeric', ['1']],
    ['not an array', 5],
  ])('rejects %s buckets with a TypeError that shows a valid example', (_label, buckets) => {
    const registry = new Registry();
    expect(() => createControllerMetrics(registry, undefined, { buckets: { deployment: buckets as number[] } })).toThrow(
      /createControllerMetrics: buckets\.deployment must be a non-empty array of finite numbers in strictly increasing order.*\[0\.01, /,
    );
    expect(registry.getMetricsAsArray()).toHaveLength(0);
  });
});

describe('recorded operations', () => {
  it('counts reconciliations, deployments and validations, errors and durations', async () => {
    const { app, metrics } = setup();
    metrics.recordReconciliation(0.2, true);
    metrics.recordReconciliation(0.7, false);
    metrics.recordReconciliation(20, true);
    metrics.recordDeployment(0.03, false);
    metrics.recordValidation(true);
    metrics.recordValidation(false);
    metrics.recordValidation(false);
    const e = await scrape(app);

    expect(sampleValue(e, 'ctl_reconciliation_total')).toBe(3);
    expect(sampleValue(e, 'ctl_reconciliation_errors_total')).toBe(1);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_count')).toBe(3);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_sum')).toBeCloseTo(20.9, 10);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '0.1' })).toBe(0);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '0.25' })).toBe(1);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '1' })).toBe(2);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '10' })).toBe(2);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '+Inf' })).toBe(3);

    expect(sampleValue(e, 'ctl_deployment_total')).toBe(1);
    expect(sampleValue(e, 'ctl_deployment_errors_total')).toBe(1);
    expect(sampleValue(e, 'ctl_deployment_duration_seconds_bucket', { le: '0.025' })).toBe(0);
    expect(sampleValue(e, 'ctl_deployment_duration_seconds_bucket', { le: '0.05' })).toBe(1);

    expect(sampleValue(e, 'ctl_validation_total')).toBe(3);
    expect(sampleValue(e, 'ctl_validation_errors_total')).toBe(2);
  });

  it('times reconciliations and deployments with the monotonic clock, passing results and errors through', async () => {
    const clock = new FakeClock();
    const { app, metrics } = setup(undefined, { now: clock.now });

    await expect(
      metrics.timeReconciliation(async () => {
        clock.advance(300);
        return 'rendered';
      }),
    ).resolves.toBe('rendered');
    const syncFailure = new Error('template missing');
    await expect(
      metrics.timeReconciliation(() => {
        clock.advance(2000);
        throw syncFailure;
      }),
    ).rejects.toBe(syncFailure);
    await expect(metrics.timeDeployment(() => 42)).resolves.toBe(42);
    const rejection = new Error('pod unreachable');
    await expect(
      metrics.timeDeployment(async () => {
        clock.advance(40);
        throw rejection;
      }),
    ).rejects.toBe(rejection);

    const e = await scrape(app);
    expect(sampleValue(e, 'ctl_reconciliation_total')).toBe(2);
    expect(sampleValue(e, 'ctl_reconciliation_errors_total')).toBe(1);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_sum')).toBeCloseTo(2.3, 10);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '0.25' })).toBe(0);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '0.5' })).toBe(1);
    expect(sampleValue(e, 'ctl_reconciliation_duration_seconds_bucket', { le: '2.5' })).toBe(2);
    expect(sampleValue(e, 'ctl_deployment_total')).toBe(2);
    expect(sampleValue(e, 'ctl_deployment_errors_total')).toBe(1);
    expect(sampleValue(e, 'ctl_deployment_duration_seconds_sum')).toBeCloseTo(0.04, 10);
    expect(sampleValue(e, 'ctl_deployment_duration_seconds_bucket', { le: '0.01' })).toBe(1);
  });

  it('rejects invalid record arguments where they are made, without counting them', async () => {
    const { app, metrics } = setup();
    expect(() => metrics.recordReconciliation(-1, true)).toThrow(/finite duration in seconds >= 0; got -1/);
    expect(() => metrics.recordDeployment(NaN, true)).toThrow(TypeError);
    expect(() => metrics.recordDeployment(1, 'yes' as unknown as boolean)).toThrow(/ok to be a boolean/);
    expect(() => metrics.recordValidation(1 as unknown as boolean)).toThrow(/needs a boolean/);
    await expect(metrics.timeDeployment(undefined as unknown as () => void)).rejects.toThrow(/timeDeployment needs a function/);
    const e = await scrape(app);
    expect(sampleValue(e, 'ctl_reconciliation_total')).toBe(0);
    expect(sampleValue(e, 'ctl_deployment_total')).toBe(0);
    expect(sampleValue(e, 'ctl_validation_total')).toBe(0);
  });
});

describe('prefix', () => {
  it('names every family with the configured prefix', async () => {
    const { app, metrics } = setup(undefined, { prefix: 'lbctl:' });
    const e = await scrape(app);
    const expected = SPEC.map(([name]) => name.replace(/^ctl_/, 'lbctl:'));
    expect([...e.families.keys()].sort()).toEqual([...expected, 'lbctl:build_info'].sort());
    expect(metrics.metricNames).toEqual(expected);
    expect(metrics.prefix).toBe('lbctl:');
  });

  it.each(['', '1ctl_', 'ctl-', 'ctl ', 'ctl_é', 42, null])('rejects prefix %p with a TypeError naming the allowed pattern', (prefix) => {
    const registry = new Registry();
    expect(() => createControllerMetrics(registry, undefined, { prefix: prefix as string })).toThrow(TypeError);
    expect(() => createControllerMetrics(registry, undefined, { prefix: prefix as string })).toThrow(
      /createControllerMetrics: prefix must be a string matching \[a-zA-Z_:\]\[a-zA-Z0-9_:\]\*.*for example "ctl_"/,
    );
    expect(registry.getMetricsAsArray()).toHaveLength(0);
  });

  it('validates the other options at creation', () => {
    const registry = new Registry();
    expect(() => createControllerMetrics({} as Registry)).toThrow(
      /createControllerMetrics: the first argument must be a Registry of prom-client or @prometheus-io\/client/,
    );
    expect(() => createControllerMetrics(registry, {} as FakeState)).toThrow(/"state" must provide resourceCounts\(\) and eventStats\(\)/);
    expect(() => createControllerMetrics(registry, undefined, { now: 5 as unknown as () => number })).toThrow(/now must be a function/);
    expect(() => createControllerMetrics(registry, undefined, { processMetrics: 'yes' as unknown as boolean })).toThrow(
      'createControllerMetrics: processMetrics must be true, false or { prefix: "..." }',
    );
    expect(() => createControllerMetrics(registry, undefined, { prefx: 'a_' } as never)).toThrow(
      'createControllerMetrics: unknown option "prefx" (did you mean "prefix"?)',
    );
    expect(() => createControllerMetrics(registry, undefined, { processMetrics: { prefex: 'a_' } as never })).toThrow(
      'unknown option "processMetrics.prefex" (did you mean "prefix"?)',
    );
    expect(registry.getMetricsAsArray()).toHaveLength(0);
  });

  it('refuses options given second, where the state goes (the 0.1 call shape), saying where they go', () => {
    const registry = new Registry();
    const migration = new TypeError(
      'createControllerMetrics: the second argument is the state (or undefined); options come third: createControllerMetrics(registry, state, { prefix })',
    );
    for (const old of [
      { prefix: 'a_' },
      { state: new FakeState() },
      { state: new FakeState(), healthMetrics: true },
      { buildInfo: false },
    ]) {
      expect(() => createControllerMetrics(registry, old as never)).toThrow(migration);
    }
    expect(registry.getMetricsAsArray()).toHaveLength(0);
    expect(() => createControllerMetrics(registry, new FakeState(), { prefix: 'a_' })).not.toThrow();
  });
});

describe('several instances on one registry', () => {
  it('refuses a second instance with the same prefix at creation, naming the prefix, and keeps serving the first', async () => {
    const { registry, metrics, app } = setup();
    metrics.recordValidation(true);
    expect(() => createControllerMetrics(registry)).toThrow(
      /cannot register controller metrics with prefix "ctl_": metric "ctl_reconciliation_total" is already registered on this registry\. Reuse the existing ControllerMetrics instance/,
    );
    const e = await scrape(app);
    expect(e.families.size).toBe(15);
    expect(sampleValue(e, 'ctl_validation_total')).toBe(1);
  });

  it('refuses when the host already owns one of the names, registering nothing', async () => {
    const registry = new Registry();
    new Counter({ name: 'ctl_validation_total', help: 'host-owned', registers: [registry] });
    expect(() => createControllerMetrics(registry)).toThrow(/metric "ctl_validation_total" is already registered/);
    const e = await scrape(metricsApp(registry));
    expect([...e.families.keys()]).toEqual(['ctl_validation_total']);
  });

  it('lets instances with different prefixes coexist with independent values', async () => {
    const registry = new Registry();
    const a = createControllerMetrics(registry, undefined, { prefix: 'a_' });
    const b = createControllerMetrics(registry, undefined, { prefix: 'b_' });
    a.recordDeployment(1, true);
    b.setLeader(true);
    const e = await scrape(metricsApp(registry));
    expect(e.families.size).toBe(30);
    expect(sampleValue(e, 'a_deployment_total')).toBe(1);
    expect(sampleValue(e, 'b_deployment_total')).toBe(0);
    expect(sampleValue(e, 'a_leader_election_is_leader')).toBe(0);
    expect(sampleValue(e, 'b_leader_election_is_leader')).toBe(1);
  });

  it('remove() takes the families off so the prefix can be reused; it is idempotent and never removes a successor', async () => {
    const registry = new Registry();
    const app = metricsApp(registry);
    const first = createControllerMetrics(registry);
    const other = createControllerMetrics(registry, undefined, { prefix: 'other_' });
    first.recordValidation(true);
    await first.close();
    await first.close();
    expect(
      registry
        .getMetricsAsArray()
        .map((m) => m.name)
        .every((name) => name.startsWith('other_')),
    ).toBe(true);

    const second = createControllerMetrics(registry);
    second.recordValidation(false);
    await first.close();
    first.recordValidation(true); // still callable, no longer exposed
    const e = await scrape(app);
    expect(e.families.size).toBe(30);
    expect(sampleValue(e, 'ctl_validation_total')).toBe(1);
    expect(sampleValue(e, 'ctl_validation_errors_total')).toBe(1);

    registry.clear();
    const third = createControllerMetrics(registry);
    await second.close();
    await other.close();
    expect((await scrape(app)).families.size).toBe(15);
    await third.close();
    expect((await scrape(app)).families.size).toBe(0);
  });
});

describe('build_info', () => {
  it('is one series at 1 naming the host version and revision, Node.js and this package', async () => {
    const { app } = setup(undefined, { buildInfo: { version: '2.3.4', revision: 'abc123' } });
    const e = await scrape(app);
    const info = family(e, 'ctl_build_info');
    expect(info.type).toBe('gauge');
    expect(info.samples).toEqual([
      {
        name: 'ctl_build_info',
        labels: { version: '2.3.4', revision: 'abc123', node_version: process.version, package_version: PACKAGE_VERSION },
        value: 1,
      },
    ]);
    const defaults = family(await scrape(setup(undefined, { prefix: 'x_' }).app), 'x_build_info').samples[0]!.labels;
    expect(defaults).toMatchObject({ version: 'unknown', revision: 'unknown' });
    expect(CONTROLLER_METRICS_DEFAULTS.buildInfo).toEqual({ version: 'unknown', revision: 'unknown' });
    expect(Object.isFrozen(CONTROLLER_METRICS_DEFAULTS)).toBe(true);
  });

  it('checks its options and its name like the other families', () => {
    const registry = new Registry();
    expect(() => createControllerMetrics(registry, undefined, { buildInfo: { version: '' } })).toThrow(
      'createControllerMetrics: buildInfo.version must be a non-empty string of at most 256 characters, got an empty string',
    );
    expect(() => createControllerMetrics(registry, undefined, { buildInfo: { versoin: '1' } as never })).toThrow(
      'unknown option "buildInfo.versoin" (did you mean "version"?)',
    );
    new Counter({ name: 'ctl_build_info', help: 'host-owned', registers: [registry] });
    expect(() => createControllerMetrics(registry)).toThrow(/metric "ctl_build_info" is already registered/);
    expect(() => createControllerMetrics(registry, undefined, { buildInfo: false })).not.toThrow();
  });
});

describe('state-backed metrics', () => {
  it('reads resource counts and event stats from the state at scrape time, following every change', async () => {
    const state = new FakeState();
    const { app } = setup(state);
    expect(state.reads).toEqual({ resourceCounts: 0, eventStats: 0 });

    state.counts = { ingresses: 3, services: 5, endpoints: 7, 'lb-pods': 2 };
    state.stats = { published: 10, subscribers: 2 };
    let e = await scrape(app);
    expect(family(e, 'ctl_resource_count').samples.map((s) => [s.labels.type, s.value])).toEqual([
      ['ingresses', 3],
      ['services', 5],
      ['endpoints', 7],
      ['lb-pods', 2],
    ]);
    expect(sampleValue(e, 'ctl_events_published_total')).toBe(10);
    expect(sampleValue(e, 'ctl_event_subscribers')).toBe(2);

    state.counts = { ingresses: 4, 'lb-pods': 3, gateways: 1 };
    state.stats = { published: 12, subscribers: 1 };
    e = await scrape(app);
    expect(family(e, 'ctl_resource_count').samples.map((s) => [s.labels.type, s.value])).toEqual([
      ['ingresses', 4],
      ['lb-pods', 3],
      ['gateways', 1],
    ]);
    expect(sampleValue(e, 'ctl_resource_count', { type: 'services' })).toBeUndefined();
    expect(sampleValue(e, 'ctl_events_published_total')).toBe(12);
    expect(sampleValue(e, 'ctl_event_subscribers')).toBe(1);
    expect(state.reads.resourceCounts).toBe(2);
  });

  it('without a state still registers the three families: resource_count without series, the others at 0', async () => {
    const e = await scrape(setup().app);
    expect(family(e, 'ctl_resource_count')).toMatchObject({ type: 'gauge', samples: [] });
    expect(family(e, 'ctl_events_published_total').samples).toEqual([{ name: 'ctl_events_published_total', labels: {}, value: 0 }]);
    expect(family(e, 'ctl_event_subscribers').samples).toEqual([{ name: 'ctl_event_subscribers', labels: {}, value: 0 }]);
  });
});

describe('leader election', () => {
  it('starts as a follower and counts gains and losses but not repeated values', async () => {
    const { app, metrics } = setup();
    let e = await scrape(app);
    expect(metrics.isLeader()).toBe(false);
    expect(sampleValue(e, 'ctl_leader_election_is_leader')).toBe(0);
    expect(sampleValue(e, 'ctl_leader_election_transitions_total')).toBe(0);
    expect(sampleValue(e, 'ctl_leader_election_time_as_leader_seconds_total')).toBe(0);

    metrics.setLeader(false);
    e = await scrape(app);
    expect(sampleValue(e, 'ctl_leader_election_transitions_total')).toBe(0);

    metrics.setLeader(true);
    metrics.setLeader(true);
    e = await scrape(app);
    expect(metrics.isLeader()).toBe(true);
    expect(sampleValue(e, 'ctl_leader_election_is_leader')).toBe(1);
    expect(sampleValue(e, 'ctl_leader_election_transitions_total')).toBe(1);

    metrics.setLeader(false);
    metrics.setLeader(false);
    metrics.setLeader(true);
    e = await scrape(app);
    expect(sampleValue(e, 'ctl_leader_election_is_leader')).toBe(1);
    expect(sampleValue(e, 'ctl_leader_election_transitions_total')).toBe(3);
    expect(() => metrics.setLeader(1 as unknown as boolean)).toThrow(/setLeader\(isLeader\) needs a boolean/);
  });

  it('reports time as leader including the running term at every scrape', async () => {
    const clock = new FakeClock();
    const { app, metrics } = setup(undefined, { now: clock.now });
    const timeAsLeader = async () => sampleValue(await scrape(app), 'ctl_leader_election_time_as_leader_seconds_total');

    clock.advance(5000);
    expect(await timeAsLeader()).toBe(0);
    metrics.setLeader(true);
    clock.advance(1500);
    expect(await timeAsLeader()).toBe(1.5);
    clock.advance(500);
    metrics.setLeader(false);
    clock.advance(10_000);
    expect(await timeAsLeader()).toBe(2);
    metrics.setLeader(true);
    clock.advance(250);
    expect(await timeAsLeader()).toBe(2.25);
  });

  it('grows time as leader between two scrapes with the default monotonic clock', async () => {
    const { app, metrics } = setup();
    metrics.setLeader(true);
    const first = sampleValue(await scrape(app), 'ctl_leader_election_time_as_leader_seconds_total')!;
    const second = sampleValue(await scrape(app), 'ctl_leader_election_time_as_leader_seconds_total')!;
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
  });

  it('never lets a clock that goes backwards decrease the counter', async () => {
    const clock = new FakeClock();
    const { app, metrics } = setup(undefined, { now: clock.now });
    metrics.setLeader(true);
    clock.advance(1000);
    metrics.setLeader(false);
    metrics.setLeader(true);
    clock.advance(-5000);
    expect(sampleValue(await scrape(app), 'ctl_leader_election_time_as_leader_seconds_total')).toBe(1);
  });
});

describe('the clock (option "now")', () => {
  const NOW_ERROR = /^createControllerMetrics: now\(\) (returned (NaN|Infinity|"1"|undefined)|threw: clock gone)/;

  it.each<[string, () => unknown]>([
    ['NaN', () => NaN],
    ['Infinity', () => Infinity],
    ['a string', () => '1'],
    ['undefined', () => undefined],
    [
      'a throw',
      () => {
        throw new Error('clock gone');
      },
    ],
  ])('returning %s is refused at creation, leaving the registry empty', (_label, now) => {
    const registry = new Registry();
    expect(() => createControllerMetrics(registry, undefined, { now: now as () => number })).toThrow(NOW_ERROR);
    expect(registry.getMetricsAsArray()).toHaveLength(0);
  });

  it('going wrong later: the calls that read it throw naming it, the scrape leaves out only the families that read it', async () => {
    const registry = new Registry();
    let reading: unknown = 0;
    const metrics = createControllerMetrics(registry, undefined, { now: () => reading as number, controllerRuntime: true });
    metrics.setLeader(true);
    reading = NaN;
    expect(() => metrics.setLeader(false)).toThrow(NOW_ERROR);
    expect(metrics.isLeader()).toBe(true);
    const fn = jest.fn(() => 'result');
    await expect(metrics.timeReconciliation(fn)).rejects.toThrow(NOW_ERROR);
    expect(fn).not.toHaveBeenCalled();
    metrics.recordReconciliation(0.5, true);

    const errors: Error[] = [];
    const res = await requestApp(metricsApp(registry, { onError: (err) => errors.push(err as Error) }), '/metrics');
    expect(res.status).toBe(200);
    const e = parseExposition(res.text);
    expect(errors.map((err) => (err as MetricCollectError).family)).toEqual(['ctl_leader_election_time_as_leader_seconds_total']);
    expect(errors[0]!.message).toMatch(/failed: createControllerMetrics: now\(\) returned NaN; expected monotonic milliseconds/);
    expect(e.families.has('ctl_leader_election_time_as_leader_seconds_total')).toBe(false);
    expect(sampleValue(e, 'ctl_leader_election_is_leader')).toBe(1);
    expect(sampleValue(e, 'ctl_reconciliation_total')).toBe(1);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { controller: 'controller', result: 'success' })).toBe(1);
  });

  it('failing while a timed call runs: its result still comes back, timed as 0', async () => {
    const registry = new Registry();
    let reading: unknown = 0;
    const metrics = createControllerMetrics(registry, undefined, { now: () => reading as number });
    const result = await metrics.timeDeployment(() => {
      reading = undefined;
      return 'deployed';
    });
    expect(result).toBe('deployed');
    const e = await scrape(metricsApp(registry));
    expect(sampleValue(e, 'ctl_deployment_total')).toBe(1);
    expect(sampleValue(e, 'ctl_deployment_duration_seconds_sum')).toBe(0);
  });
});

describe('nativeHistograms option', () => {
  it.each([
    [{ maxBucket: 10 }, 'unknown option "nativeHistograms.maxBucket" (did you mean "maxBuckets"?)'],
    [{ bucketFactor: 1 }, 'nativeHistograms.bucketFactor must be a finite number > 1 (for example 1.1); got 1'],
    [{ bucketFactor: Number.NaN }, 'nativeHistograms.bucketFactor must be a finite number > 1'],
    [{ maxBuckets: 0 }, 'nativeHistograms.maxBuckets must be an integer >= 1'],
    [{ maxBuckets: 2.5 }, 'nativeHistograms.maxBuckets must be an integer >= 1'],
    [{ zeroThreshold: -1 }, 'nativeHistograms.zeroThreshold must be a finite number >= 0; got -1'],
    ['yes', 'nativeHistograms must be true, false or { maxBuckets: 100 }'],
  ])('refuses %p at creation, naming it, with nothing registered', (value, message) => {
    const registry = new Registry();
    expect(() => createControllerMetrics(registry, undefined, { nativeHistograms: value as never })).toThrow(message);
    expect(registry.getMetricsAsArray()).toEqual([]);
  });

  it('leaves text and OpenMetrics answers as they are: native buckets are served in protobuf only', async () => {
    const answers: string[] = [];
    for (const nativeHistograms of [false, true]) {
      const registry = new Registry();
      const metrics = createControllerMetrics(registry, undefined, {
        nativeHistograms,
        controllerRuntime: { controller: 'lb' },
        now: () => 1000,
      });
      metrics.recordReconciliation(0.3, true);
      metrics.recordDeployment(1.2, false);
      for (const accept of ['text/plain', 'application/openmetrics-text']) {
        const res = await requestApp(metricsApp(registry), '/metrics', { headers: { Accept: accept } });
        answers.push(res.text.replace(/^ctl_build_info.*$/m, ''));
      }
    }
    expect(answers[2]).toBe(answers[0]);
    expect(answers[3]).toBe(answers[1]);
  });
});
