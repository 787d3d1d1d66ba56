/**
 * A bad value from a host callback costs only its own family: every shape a host's state may
 * answer wrongly (null, a number, an array, a Map, a promise, NaN or negative or string counts, a
 * getter or Proxy that throws, too many entries) leaves that family out of the scrape, served over
 * a real socket with every other family, and `onError` is told which callback answered what.
 */
import { Registry } from 'prom-client';
import { createControllerMetrics, MetricCollectError, type MetricsStateSource } from '../../lib/metrics';
import { MAX_HOST_ENTRIES } from '../../lib/metrics/host-readings';
import { MAX_RESOURCE_TYPES } from '../../lib/state/resource-counts';
import { createIntrospectionState } from '../../lib/state/store';
import type { EventStats, ProgressRecord, ReadinessGateStatus } from '../../lib/state/types';
import { requestApp } from '../helpers/http';
import { parseExposition, sampleValue, type Exposition } from './helpers/exposition-parser';
import { metricsApp } from './helpers/server';

/** Scrapes once over a real socket: the answer must be a 200; answers it with what onError was told. */
async function scrapeWith(registry: Registry): Promise<{ exposition: Exposition; errors: MetricCollectError[] }> {
  const errors: MetricCollectError[] = [];
  const res = await requestApp(metricsApp(registry, { onError: (err) => errors.push(err as MetricCollectError) }), '/metrics');
  expect(res.status).toBe(200);
  return { exposition: parseExposition(res.text), errors };
}

function stateAnswering(overrides: Partial<MetricsStateSource>): MetricsStateSource {
  return {
    resourceCounts: () => ({ ingresses: 3 }),
    eventStats: () => ({ published: 7, subscribers: 2, watchers: 1 }),
    ...overrides,
  };
}

const throwing = (message: string) => () => {
  throw new Error(message);
};

const revoked = (): object => {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
};

const tooMany = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`type-${i}`, 1]));

describe('state.resourceCounts() answering a wrong value', () => {
  it.each<[string, () => unknown, RegExp]>([
    ['null', () => null, /state\.resourceCounts\(\) returned null; expected an object of counts by resource type/],
    ['undefined', () => undefined, /state\.resourceCounts\(\) returned undefined; expected an object of counts/],
    ['a number', () => 3, /state\.resourceCounts\(\) returned 3; expected an object of counts/],
    ['a string', () => 'ingresses', /state\.resourceCounts\(\) returned "ingresses"; expected/],
    ['an array', () => [1, 2], /state\.resourceCounts\(\) returned an array; expected an object of counts/],
    ['a Map', () => new Map([['ingresses', 3]]), /state\.resourceCounts\(\) returned a Map; expected an object of counts/],
    ['a Set', () => new Set([3]), /state\.resourceCounts\(\) returned a Set; expected/],
    ['a promise (an async callback)', async () => ({ ingresses: 3 }), /state\.resourceCounts\(\) returned a promise; expected/],
    [
      'a NaN count',
      () => ({ ingresses: NaN }),
      /state\.resourceCounts\(\) returned NaN as the count of "ingresses"; expected a finite number >= 0/,
    ],
    ['an infinite count', () => ({ ingresses: Infinity }), /returned Infinity as the count of "ingresses"; expected a finite number >= 0/],
    ['a negative count', () => ({ ok: 1, ingresses: -1 }), /returned -1 as the count of "ingresses"; expected a finite number >= 0/],
    ['a string count', () => ({ ingresses: '3' }), /returned "3" as the count of "ingresses"; expected a finite number >= 0/],
    ['a null count', () => ({ ingresses: null }), /returned null as the count of "ingresses"/],
    ['an object count', () => ({ ingresses: { n: 3 } }), /returned an object as the count of "ingresses"/],
    ['a BigInt count', () => ({ ingresses: 3n }), /returned the BigInt 3n as the count of "ingresses"/],
    [
      'a throwing getter',
      () => ({
        get ingresses(): number {
          throw new Error('informer cache evicted');
        },
      }),
      /reading what state\.resourceCounts\(\) returned threw: informer cache evicted/,
    ],
    [
      'a Proxy that throws on ownKeys',
      () =>
        new Proxy(
          {},
          {
            ownKeys() {
              throw new Error('ownKeys trap');
            },
          },
        ),
      /reading what state\.resourceCounts\(\) returned threw: ownKeys trap/,
    ],
    ['a revoked Proxy', revoked, /reading what state\.resourceCounts\(\) returned threw: .*revoked/],
    [
      'more types than a gauge should hold',
      () => tooMany(MAX_RESOURCE_TYPES + 1),
      /returned an object of 10,001 types; expected .*at most 10,000 types/,
    ],
    ['a throw', throwing('informer not synced'), /state\.resourceCounts\(\) threw: informer not synced/],
  ])('%s: resource_count is left out, every other family is served, onError names the callback', async (_label, answer, message) => {
    const registry = new Registry();
    createControllerMetrics(registry, stateAnswering({ resourceCounts: answer as MetricsStateSource['resourceCounts'] }));
    const { exposition, errors } = await scrapeWith(registry);
    expect(exposition.families.has('ctl_resource_count')).toBe(false);
    expect(sampleValue(exposition, 'ctl_events_published_total')).toBe(7);
    expect(sampleValue(exposition, 'ctl_event_subscribers')).toBe(2);
    expect(sampleValue(exposition, 'ctl_reconciliation_total')).toBe(0);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(MetricCollectError);
    expect(errors[0]!.family).toBe('ctl_resource_count');
    expect(errors[0]!.message).toMatch(message);
  });

  it('serves exactly as many types as allowed', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, stateAnswering({ resourceCounts: () => tooMany(MAX_RESOURCE_TYPES) }));
    const { exposition, errors } = await scrapeWith(registry);
    expect(errors).toEqual([]);
    expect(exposition.families.get('ctl_resource_count')?.samples).toHaveLength(MAX_RESOURCE_TYPES);
  });

  it('keeps the last good series while the callback fails, and serves them again once it answers', async () => {
    const registry = new Registry();
    let answer: unknown = { ingresses: 3 };
    createControllerMetrics(registry, stateAnswering({ resourceCounts: () => answer as Record<string, number> }));
    expect(sampleValue((await scrapeWith(registry)).exposition, 'ctl_resource_count', { type: 'ingresses' })).toBe(3);
    answer = null;
    expect((await scrapeWith(registry)).exposition.families.has('ctl_resource_count')).toBe(false);
    expect(await registry.metrics().catch((err: Error) => err.message)).toMatch(/state\.resourceCounts\(\) returned null/);
    answer = { ingresses: 4 };
    expect(sampleValue((await scrapeWith(registry)).exposition, 'ctl_resource_count', { type: 'ingresses' })).toBe(4);
  });
});

describe('state.eventStats() answering a wrong value', () => {
  // In registry order, the order onError hears of them.
  const ALL = ['ctl_event_subscribers', 'ctl_events_published_total', 'ctl_event_watchers'];

  it.each<[string, () => unknown, string[], RegExp]>([
    ['null', () => null, ALL, /state\.eventStats\(\) returned null; expected \{ published, subscribers \} counts/],
    ['a number', () => 4, ALL, /state\.eventStats\(\) returned 4; expected/],
    ['an array', () => [], ALL, /state\.eventStats\(\) returned an array; expected/],
    ['a throw', throwing('stats gone'), ALL, /state\.eventStats\(\) threw: stats gone/],
    [
      'a NaN published count',
      () => ({ published: NaN, subscribers: 2 }),
      ['ctl_events_published_total'],
      /state\.eventStats\(\) returned published: NaN; expected published to be a finite number >= 0/,
    ],
    [
      'a negative subscriber count',
      () => ({ published: 7, subscribers: -2 }),
      ['ctl_event_subscribers'],
      /returned subscribers: -2; expected subscribers to be a finite number >= 0/,
    ],
    [
      'a string watcher count',
      () => ({ published: 7, subscribers: 2, watchers: '1' }),
      ['ctl_event_watchers'],
      /returned watchers: "1"; expected watchers to be a finite number >= 0/,
    ],
    [
      'a getter that throws',
      () => ({
        subscribers: 2,
        watchers: 0,
        get published(): number {
          throw new Error('counter unreadable');
        },
      }),
      ['ctl_events_published_total'],
      /reading what state\.eventStats\(\) returned threw: counter unreadable/,
    ],
  ])('%s: only the families it feeds are left out', async (_label, answer, left, message) => {
    const registry = new Registry();
    createControllerMetrics(registry, stateAnswering({ eventStats: answer as () => EventStats }));
    const { exposition, errors } = await scrapeWith(registry);
    for (const name of ALL) expect([name, exposition.families.has(name)]).toEqual([name, !left.includes(name)]);
    expect(sampleValue(exposition, 'ctl_resource_count', { type: 'ingresses' })).toBe(3);
    expect(errors.map((e) => e.family)).toEqual(left);
    for (const error of errors) expect(error.message).toMatch(message);
  });

  it('serves watchers as 0 when a host state leaves them out', async () => {
    const registry = new Registry();
    createControllerMetrics(registry, stateAnswering({ eventStats: () => ({ published: 1, subscribers: 0 }) }));
    const { exposition, errors } = await scrapeWith(registry);
    expect(errors).toEqual([]);
    expect(sampleValue(exposition, 'ctl_event_watchers')).toBe(0);
  });
});

describe('state.readinessGates() and state.progress() answering a wrong value (healthMetrics)', () => {
  const GATES = 'ctl_readiness_gate_open';
  const PROGRESS = 'ctl_progress_last_timestamp_seconds';

  function healthRegistry(overrides: { readinessGates?: () => unknown; progress?: () => unknown }): Registry {
    const registry = new Registry();
    const state = createIntrospectionState();
    const source = {
      resourceCounts: () => state.resourceCounts(),
      eventStats: () => state.eventStats(),
      readinessGates: (overrides.readinessGates ?? (() => state.readinessGates())) as () => readonly ReadinessGateStatus[],
      progress: (overrides.progress ??
        (() => [{ activity: 'reconciliation', at: '2026-01-01T00:00:00.000Z', ageMs: 0, count: 1 }])) as () => readonly ProgressRecord[],
    };
    createControllerMetrics(registry, source, { healthMetrics: true });
    return registry;
  }

  it.each<[string, { readinessGates?: () => unknown; progress?: () => unknown }, string, RegExp]>([
    [
      'gates: null',
      { readinessGates: () => null },
      GATES,
      /state\.readinessGates\(\) returned null; expected an array of \{ name: string, open: boolean \}/,
    ],
    ['gates: an object', { readinessGates: () => ({}) }, GATES, /state\.readinessGates\(\) returned an object; expected an array/],
    [
      'gates: a null entry',
      { readinessGates: () => [null] },
      GATES,
      /returned null as entry 0; expected \{ name: string, open: boolean \}/,
    ],
    ['gates: a numeric name', { readinessGates: () => [{ name: 3, open: true }] }, GATES, /returned a gate named 3 as entry 0/],
    ['gates: open as a string', { readinessGates: () => [{ name: 'a', open: 'yes' }] }, GATES, /returned open: "yes" as entry 0/],
    ['gates: a throw', { readinessGates: throwing('gates gone') }, GATES, /state\.readinessGates\(\) threw: gates gone/],
    [
      'gates: too many',
      { readinessGates: () => Array.from({ length: MAX_HOST_ENTRIES + 1 }, (_, i) => ({ name: `g${i}`, open: true })) },
      GATES,
      /returned an array of 10001 entries; expected at most 10,000/,
    ],
    [
      'progress: undefined',
      { progress: () => undefined },
      PROGRESS,
      /state\.progress\(\) returned undefined; expected an array of \{ activity: string/,
    ],
    [
      'progress: a bad timestamp',
      { progress: () => [{ activity: 'a', at: 'yesterday' }] },
      PROGRESS,
      /returned at: "yesterday" as entry 0/,
    ],
    [
      'progress: an empty activity',
      { progress: () => [{ activity: '', at: '2026-01-01T00:00:00Z' }] },
      PROGRESS,
      /returned an activity named "" as entry 0/,
    ],
    [
      'progress: an entry whose getter throws',
      {
        progress: () => [
          {
            get activity(): string {
              throw new Error('entry unreadable');
            },
          },
        ],
      },
      PROGRESS,
      /reading what state\.progress\(\) returned threw: entry unreadable/,
    ],
  ])('%s: only that family is left out', async (_label, overrides, left, message) => {
    const { exposition, errors } = await scrapeWith(healthRegistry(overrides));
    expect(errors.map((e) => e.family)).toEqual([left]);
    expect(errors[0]!.message).toMatch(message);
    expect(exposition.families.has(left)).toBe(false);
    const other = left === GATES ? PROGRESS : GATES;
    expect(exposition.families.get(other)?.samples.length).toBeGreaterThan(0);
  });
});

describe('host-chosen names as label values', () => {
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', '__defineGetter__'];

  it('serves every resource type as a series, whatever its name, from the store and from a host state', async () => {
    const counts = JSON.parse(`{${NAMES.map((name, i) => `"${name}": ${i + 1}`).join(', ')}}`) as Record<string, number>;
    const store = createIntrospectionState();
    store.setResourceCounts(counts);
    for (const state of [store, stateAnswering({ resourceCounts: () => counts })]) {
      const registry = new Registry();
      createControllerMetrics(registry, state);
      const { exposition, errors } = await scrapeWith(registry);
      expect(errors).toEqual([]);
      expect(exposition.families.get('ctl_resource_count')?.samples.map((s) => [s.labels.type, s.value])).toEqual(
        NAMES.map((name, i) => [name, i + 1]),
      );
    }
  });
});
