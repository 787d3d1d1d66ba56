/**
 * The series index must give exactly `Object.keys(hashMap)`'s order whatever the host does to its
 * metrics, must never write a series twice or one that is gone, and must leave the host's objects
 * behaving as before. Checked as a class: seeded random operation sequences on all four metric
 * kinds, compared with V8's own listing and with prom-client's own text after every batch.
 */
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';
import { indexRegistrySeries, renderExpositionText } from '../../../lib/metrics/exposition';
import { INDEX_MIN_SERIES, indexSeries, isIndexed, seriesKeys } from '../../../lib/metrics/exposition/series-index';
import { createMetricsRouter } from '../../../lib';
import express from 'express';
import { prng } from '../../helpers/prng';
import { requestApp } from '../../helpers/http';

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string> | Summary<string>;
const mapOf = (metric: object): Record<string, unknown> => (metric as { hashMap: Record<string, unknown> }).hashMap;
const labels = (i: number): { ns: string; name: string } => ({ ns: `n${i % 7}`, name: `object-${i}` });

/** Applies one host operation to `metric`, chosen by `random`, over label sets 0..span (`reset()` has a test of its own). */
function operate(metric: AnyMetric, random: () => number, span: number): void {
  const pick = labels(Math.floor(random() * span));
  const roll = random();
  if (roll < 0.04) {
    metric.remove(pick);
  } else if (metric instanceof Counter) {
    if (roll < 0.5) metric.inc(pick);
    else metric.labels(pick).inc(2);
  } else if (metric instanceof Gauge) {
    if (roll < 0.4) metric.set(pick, roll);
    else if (roll < 0.7) metric.inc(pick);
    else metric.labels(pick).dec(1);
  } else if (metric instanceof Histogram) {
    if (roll < 0.1) metric.zero(pick);
    else metric.observe(pick, roll * 10);
  } else {
    metric.observe(pick, roll);
  }
}

function filled(kind: string, registry: Registry, count: number): AnyMetric {
  const config = { name: `m_${kind}`, help: `${kind} help`, labelNames: ['ns', 'name'], registers: [registry] };
  const metric: AnyMetric =
    kind === 'counter'
      ? new Counter(config)
      : kind === 'gauge'
        ? new Gauge(config)
        : kind === 'histogram'
          ? new Histogram({ ...config, buckets: [0.1, 1, 5] })
          : new Summary({ ...config, percentiles: [0.5, 0.9] });
  for (let i = 0; i < count; i++) {
    if (metric instanceof Counter || metric instanceof Gauge) metric.inc(labels(i));
    else metric.observe(labels(i), i % 3);
  }
  return metric;
}

describe('series index', () => {
  it.each(['counter', 'gauge', 'histogram', 'summary'])(
    'keeps %s series in Object.keys order through random inc/set/observe/zero/remove, byte-identical to prom-client',
    async (kind) => {
      for (const seed of [1, 2, 3]) {
        const random = prng(seed * 7919);
        const registry = new Registry();
        const metric = filled(kind, registry, INDEX_MIN_SERIES + 50);
        expect(indexSeries(mapOf(metric), true)).toHaveLength(INDEX_MIN_SERIES + 50);
        expect(isIndexed(mapOf(metric))).toBe(true);
        for (let batch = 0; batch < 12; batch++) {
          for (let op = 0; op < 400; op++) operate(metric, random, INDEX_MIN_SERIES + 400);
          expect(isIndexed(mapOf(metric))).toBe(true);
          expect([...seriesKeys(mapOf(metric))]).toEqual(Object.keys(mapOf(metric)));
        }
        expect(await renderExpositionText(registry)).toBe(await registry.metrics());
      }
    },
  );

  it('indexes only large maps, and only plain extensible ones', () => {
    const registry = new Registry();
    const small = filled('gauge', registry, INDEX_MIN_SERIES - 1);
    expect(indexSeries(mapOf(small), true)).toHaveLength(INDEX_MIN_SERIES - 1);
    expect(isIndexed(mapOf(small))).toBe(false);
    expect(Object.getPrototypeOf(mapOf(small))).toBe(Object.prototype);

    const bare: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (let i = 0; i < INDEX_MIN_SERIES; i++) bare[`k:${i}`] = i;
    indexSeries(bare, true);
    expect(isIndexed(bare)).toBe(false);
    expect(Object.getPrototypeOf(bare)).toBeNull();

    const frozen = Object.freeze(Object.fromEntries(Array.from({ length: INDEX_MIN_SERIES }, (_, i) => [`k:${i}`, i])));
    indexSeries(frozen, true);
    expect(isIndexed(frozen)).toBe(false);
  });

  it('a walk paused by the renderer writes no series twice, none added after it began, none deleted before it reached them', () => {
    const registry = new Registry();
    const gauge = filled('gauge', registry, INDEX_MIN_SERIES) as Gauge<string>;
    const map = mapOf(gauge);
    indexSeries(map, true);
    const before = Object.keys(map);
    const walk = seriesKeys(map)[Symbol.iterator]();
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) seen.push(walk.next().value as string);
    // While the walk is paused: a visited series is removed and added again (it moves to the end),
    // an unvisited one is removed, another unvisited one is removed and added again, a new one is added.
    gauge.remove(labels(3));
    gauge.set(labels(3), 1);
    gauge.remove(labels(20));
    gauge.remove(labels(30));
    gauge.set(labels(30), 1);
    gauge.set(labels(INDEX_MIN_SERIES + 1), 1);
    for (let next = walk.next(); !next.done; next = walk.next()) seen.push(next.value);
    expect(new Set(seen).size).toBe(seen.length);
    const gone = new Set([before[20], before[30]]);
    expect(seen).toEqual(before.filter((key) => !gone.has(key)));
    // The next walk sees the map as it is now, in V8's order.
    expect([...seriesKeys(map)]).toEqual(Object.keys(map));
  });

  it('two walks at once each give the whole map', () => {
    const registry = new Registry();
    const counter = filled('counter', registry, INDEX_MIN_SERIES + 3);
    const map = mapOf(counter);
    indexSeries(map, true);
    const a = seriesKeys(map)[Symbol.iterator]();
    const b = seriesKeys(map)[Symbol.iterator]();
    const fromA: string[] = [];
    const fromB: string[] = [];
    for (;;) {
      const x = a.next();
      const y = b.next();
      if (!x.done) fromA.push(x.value);
      if (!y.done) fromB.push(y.value);
      if (x.done && y.done) break;
    }
    expect(fromA).toEqual(Object.keys(map));
    expect(fromB).toEqual(Object.keys(map));
  });

  it("leaves the host's map behaving as a plain object", () => {
    const registry = new Registry();
    const gauge = filled('gauge', registry, INDEX_MIN_SERIES) as Gauge<string>;
    const map = mapOf(gauge);
    const json = JSON.stringify(map);
    indexSeries(map, true);
    expect(map instanceof Object).toBe(true);
    expect(typeof map.toString).toBe('function');
    expect(String(map)).toBe('[object Object]');
    expect(Object.prototype.hasOwnProperty.call(map, Object.keys(map)[0]!)).toBe(true);
    expect(map.hasOwnProperty('nope:x')).toBe(false);
    expect('constructor' in map).toBe(true);
    expect(map['nope:x']).toBeUndefined();
    expect(JSON.stringify(map)).toBe(json);
    expect({ ...map }).toEqual(JSON.parse(json));
    // Updates to existing series never reach the trap: the index's order does not move.
    const order = [...seriesKeys(map)];
    gauge.set(labels(0), 5);
    gauge.inc(labels(1));
    expect([...seriesKeys(map)]).toEqual(order);
    expect(mapOf(gauge)).toBe(map);
  });

  it('the router indexes large metrics when created; a scrape of an indexed metric never lists its keys', async () => {
    const registry = new Registry();
    const big = filled('histogram', registry, INDEX_MIN_SERIES + 10);
    const small = filled('gauge', registry, 5);
    const router = createMetricsRouter(registry);
    expect(isIndexed(mapOf(big))).toBe(true);
    expect(isIndexed(mapOf(small))).toBe(false);
    const keys = jest.spyOn(Object, 'keys');
    try {
      const res = await requestApp(express().use(router), '/metrics');
      expect(res.status).toBe(200);
      const listed = keys.mock.calls.filter(([target]) => target === mapOf(big)).length;
      keys.mockRestore();
      expect(listed).toBe(0);
      expect(res.text).toBe(await registry.metrics());
    } finally {
      keys.mockRestore();
    }
  });

  it('indexRegistrySeries leaves registries it cannot read alone', () => {
    class Custom extends Registry {
      override async metrics(): Promise<string> {
        return '';
      }
    }
    const registry = new Custom();
    const gauge = filled('gauge', registry, INDEX_MIN_SERIES);
    indexRegistrySeries(registry);
    expect(isIndexed(mapOf(gauge))).toBe(false);
  });

  it('a metric grown large after the router was created is indexed by the second scrape that finds the same map', async () => {
    const registry = new Registry();
    const gauge = filled('gauge', registry, 1) as Gauge<string>;
    indexRegistrySeries(registry);
    expect(isIndexed(mapOf(gauge))).toBe(false);
    for (let i = 1; i < INDEX_MIN_SERIES + 1; i++) gauge.set(labels(i), i);
    expect(await renderExpositionText(registry)).toBe(await registry.metrics());
    expect(isIndexed(mapOf(gauge))).toBe(false);
    expect(await renderExpositionText(registry)).toBe(await registry.metrics());
    expect(isIndexed(mapOf(gauge))).toBe(true);
    gauge.reset();
    expect(isIndexed(mapOf(gauge))).toBe(false);
    expect(await renderExpositionText(registry)).toBe(await registry.metrics());
  });

  it('a map the host replaces in every collect() is listed each scrape, never indexed, and rendered as prom-client does', async () => {
    const registry = new Registry();
    let round = 0;
    const maps: object[] = [];
    const gauge = new Gauge({
      name: 'cache_objects',
      help: 'objects in the cache',
      labelNames: ['ns', 'name'],
      registers: [registry],
      collect(this: Gauge<string>) {
        this.reset();
        round += 1;
        for (let i = 0; i < INDEX_MIN_SERIES + 10; i++) this.set(labels(i + round), i);
        maps.push(mapOf(this));
      },
    });
    for (let scrape = 0; scrape < 3; scrape++) {
      const ours = await renderExpositionText(registry);
      expect(isIndexed(mapOf(gauge))).toBe(false);
      // prom-client's own text of the same content, from the map this scrape rendered.
      round -= 1;
      expect(ours).toBe(await registry.metrics());
    }
    expect(maps.some((map) => isIndexed(map))).toBe(false);
  });
});
