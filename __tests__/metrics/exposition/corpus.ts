/**
 * Registries to render both ways (prom-client's `registry.metrics()` and ours) and compare. Each
 * case is a builder, run once per registry, so that each renderer gets a registry of its own:
 * collect() callbacks with side effects and prom-client's OpenMetrics mode (which renames counters
 * in place) cannot leak from one rendering into the other.
 */
import { Counter, Gauge, Histogram, Registry, Summary, type RegistryContentType } from 'prom-client';
import { createControllerMetrics } from '../../../lib/metrics';
import { prng } from '../../helpers/prng';

/** Adds metrics to a registry. */
export type Build = (registry: Registry<RegistryContentType>) => void;

/** A named registry builder. */
export interface CorpusCase {
  readonly name: string;
  readonly build: Build;
}

/** Label values that need escaping or are otherwise awkward. */
export const AWKWARD_VALUES = ['plain', 'back\\slash', 'new\nline', 'double"quote', '\\"\n\\n', '', 'ünïcødé ✓ 🚀', ' spaced ', '{}=,#'];

/** Numbers whose formatting must match prom-client's. */
export const AWKWARD_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1 + 0.2,
  1e21,
  1e-7,
  123456789012345680000,
  2 ** 53,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -1.5e-300,
  Infinity,
  -Infinity,
  NaN,
];

/** The corpus: every metric type, escapes, special numbers, empty families, default labels, collect() callbacks. */
export const CORPUS: readonly CorpusCase[] = [
  { name: 'empty registry', build: () => undefined },
  {
    name: 'label-less metrics of every type, untouched',
    build: (registry) => {
      new Counter({ name: 'plain_total', help: 'A counter', registers: [registry] });
      new Gauge({ name: 'plain_gauge', help: 'A gauge', registers: [registry] });
      new Histogram({ name: 'plain_seconds', help: 'A histogram', registers: [registry] });
      new Summary({ name: 'plain_summary_seconds', help: 'A summary', registers: [registry] });
    },
  },
  {
    name: 'labelled metrics with no series yet',
    build: (registry) => {
      new Counter({ name: 'none_total', help: 'No series', labelNames: ['a'], registers: [registry] });
      new Gauge({ name: 'none_gauge', help: 'No series', labelNames: ['a'], registers: [registry] });
      new Histogram({ name: 'none_seconds', help: 'No series', labelNames: ['a'], registers: [registry] });
      new Summary({ name: 'none_summary', help: 'No series', labelNames: ['a'], registers: [registry] });
    },
  },
  {
    name: 'escapes in label values and help',
    build: (registry) => {
      const counter = new Counter({
        name: 'escapes_total',
        help: 'Help with \\ backslash,\nnewline and "quotes"',
        labelNames: ['value', 'other'],
        registers: [registry],
      });
      AWKWARD_VALUES.forEach((value, i) => counter.inc({ value, other: `o${i}` }, i + 1));
      const gauge = new Gauge({ name: 'escapes_gauge', help: ' ', labelNames: ['v'], registers: [registry] });
      AWKWARD_VALUES.forEach((v, i) => gauge.set({ v }, -i));
    },
  },
  {
    name: 'special and extreme numbers',
    build: (registry) => {
      const gauge = new Gauge({ name: 'numbers', help: 'Every awkward number', labelNames: ['i'], registers: [registry] });
      AWKWARD_NUMBERS.forEach((value, i) => gauge.set({ i: String(i) }, value));
      const histogram = new Histogram({
        name: 'numbers_bounds',
        help: 'Extreme bounds',
        buckets: [1e-9, 0.1 + 0.2, 1, 1e21, Number.MAX_VALUE],
        registers: [registry],
      });
      [1e-10, 0.3, 5, 1e22, 1e300].forEach((value) => histogram.observe(value));
    },
  },
  {
    name: 'label key order, numeric label values, removed series',
    build: (registry) => {
      const gauge = new Gauge({ name: 'order_gauge', help: 'Order', labelNames: ['a', 'b'], registers: [registry] });
      gauge.set({ b: 'first', a: 'second' }, 1);
      gauge.set({ a: 'x', b: 'y' }, 2);
      gauge.set({ a: 42 as unknown as string, b: 'number' }, 3);
      gauge.set({ a: 'gone', b: 'soon' }, 4);
      gauge.remove({ a: 'gone', b: 'soon' });
      gauge.inc({ a: 'only' }, 5);
      const counter = new Counter({ name: 'order_total', help: 'Order', labelNames: ['z', 'y'], registers: [registry] });
      counter.labels('1', '2').inc();
      counter.inc({ y: 'b', z: 'a' });
    },
  },
  {
    name: 'histograms with default and custom buckets and labels',
    build: (registry) => {
      const histogram = new Histogram({ name: 'req_seconds', help: 'Requests', labelNames: ['method', 'code'], registers: [registry] });
      [0.001, 0.02, 0.3, 4, 60].forEach((value, i) => histogram.observe({ method: i % 2 ? 'GET' : 'POST', code: '200' }, value));
      histogram.zero({ method: 'PUT', code: '500' });
      const custom = new Histogram({
        name: 'size_bytes',
        help: 'Sizes',
        labelNames: ['kind'],
        buckets: [100, 1000, 10000],
        registers: [registry],
      });
      custom.observe({ kind: 'a"b' }, 50);
      custom.observe({ kind: 'a"b' }, 5000);
      custom.observe({ kind: 'c\nd' }, 1e9);
    },
  },
  {
    name: 'summaries with quantiles, labels and windows',
    build: (registry) => {
      const summary = new Summary({
        name: 'latency_seconds',
        help: 'Latency',
        labelNames: ['route'],
        percentiles: [0.5, 0.9, 0.99],
        registers: [registry],
      });
      for (let i = 0; i < 200; i += 1) summary.observe({ route: i % 3 === 0 ? '/a' : '/b' }, (i % 17) / 10);
      const windowed = new Summary({ name: 'windowed', help: 'Windowed', maxAgeSeconds: 600, ageBuckets: 5, registers: [registry] });
      for (let i = 0; i < 50; i += 1) windowed.observe(i);
      new Summary({
        name: 'pruned',
        help: 'Pruned',
        labelNames: ['a'],
        maxAgeSeconds: 600,
        ageBuckets: 5,
        pruneAgedBuckets: true,
        registers: [registry],
      });
    },
  },
  {
    // prom-client writes an own null or undefined as it is; @prometheus-io/client puts the default in its place.
    name: 'default labels over own labels that are null or undefined',
    build: (registry) => {
      registry.setDefaultLabels({ env: 'prod', code: 'default' });
      const counter = new Counter({ name: 'dn_total', help: 'Nullish', labelNames: ['env', 'kind', 'code'], registers: [registry] });
      counter.inc({ env: undefined, kind: 'a' } as never);
      counter.inc({ env: null, kind: 'b', code: 'own' } as never);
      counter.inc({ kind: 'c', code: undefined } as never);
      const gauge = new Gauge({ name: 'dn_gauge', help: 'Nullish', labelNames: ['env'], registers: [registry] });
      gauge.set({ env: null } as never, 4);
      const summary = new Summary({ name: 'dn_summary', help: 'Nullish', labelNames: ['env'], percentiles: [0.5], registers: [registry] });
      summary.observe({ env: undefined } as never, 1);
    },
  },
  {
    name: 'default labels, overlapping the metrics own labels',
    build: (registry) => {
      registry.setDefaultLabels({ env: 'prod', region: 'eu"west\\1', code: 'default' });
      new Gauge({ name: 'dl_gauge', help: 'Label-less', registers: [registry] }).set(1);
      const own = new Gauge({ name: 'dl_own', help: 'Has env', labelNames: ['env', 'x'], registers: [registry] });
      own.set({ env: 'dev', x: '1' }, 2);
      own.set({ x: '2' }, 3);
      const histogram = new Histogram({
        name: 'dl_seconds',
        help: 'Histogram',
        labelNames: ['code'],
        buckets: [1, 2],
        registers: [registry],
      });
      histogram.observe({ code: '200' }, 1.5);
      histogram.observe(0.5);
      const summary = new Summary({ name: 'dl_summary', help: 'Summary', labelNames: ['env'], percentiles: [0.5], registers: [registry] });
      summary.observe({ env: 'x' }, 1);
      summary.observe(2);
      new Counter({ name: 'dl_total', help: 'Counter', registers: [registry] }).inc(7);
    },
  },
  {
    name: 'collect() callbacks, sync and async',
    build: (registry) => {
      let calls = 0;
      new Gauge({
        name: 'collected_sync',
        help: 'Set in collect',
        labelNames: ['call'],
        registers: [registry],
        collect() {
          calls += 1;
          this.set({ call: 'n' }, calls);
        },
      });
      new Gauge({
        name: 'collected_async',
        help: 'Set in an async collect',
        registers: [registry],
        async collect() {
          await new Promise((resolve) => setTimeout(resolve, 2));
          this.set(42);
        },
      });
      new Histogram({
        name: 'collected_histogram',
        help: 'Observed in collect',
        registers: [registry],
        collect() {
          this.observe(0.2);
        },
      });
    },
  },
  {
    name: 'custom metric classes read through their public get()',
    build: (registry) => {
      class Doubled extends Gauge {
        override async get() {
          const data = await super.get();
          return { ...data, values: data.values.map((value) => ({ ...value, value: value.value * 2 })) };
        }
      }
      const doubled = new Doubled({ name: 'doubled', help: 'Overrides get()', labelNames: ['a'], registers: [registry] });
      doubled.set({ a: 'x' }, 21);
      const shaped = {
        name: 'shaped',
        help: 'Not a prom-client class at all',
        type: 'gauge',
        aggregator: 'sum',
        get: async () => ({
          name: 'shaped',
          help: 'Not a prom-client class at all',
          type: 'gauge',
          aggregator: 'sum',
          values: [
            { value: 1, labels: { own: 'o"wn' }, sharedLabels: { shared: 's' } },
            { value: NaN, metricName: 'shaped_other', labels: {} },
          ],
        }),
      };
      registry.registerMetric(shaped as unknown as Gauge);
    },
  },
  {
    name: "this package's controller metrics",
    build: (registry) => {
      const metrics = createControllerMetrics(registry, undefined, { now: () => 1000 });
      metrics.recordReconciliation(0.1, true);
      metrics.recordReconciliation(2.5, false);
      metrics.recordDeployment(0.2, false);
      metrics.setLeader(true);
    },
  },
];

const NAME_PARTS = ['http', 'queue', 'cache', 'work', 'reconcile', 'pod'];
const LABEL_NAMES = ['namespace', 'name', 'kind', 'code', 'env', 'le_x', 'region'];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function randomValue(random: () => number): string {
  const r = random();
  if (r < 0.3) return pick(random, AWKWARD_VALUES);
  if (r < 0.35) return String.fromCodePoint(Math.floor(random() * 0x10ffff) & 0xffff || 65);
  return `v${Math.floor(random() * 50)}`;
}

function randomNumber(random: () => number): number {
  const r = random();
  if (r < 0.15) return pick(random, AWKWARD_NUMBERS);
  if (r < 0.5) return Math.floor(random() * 1000);
  return (random() - 0.3) * 10 ** Math.floor(random() * 40 - 20);
}

function randomLabels(random: () => number, names: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  // Any order, any subset: prom-client keeps the host's object as it was given.
  for (const label of [...names].sort(() => random() - 0.5)) if (random() < 0.85) labels[label] = randomValue(random);
  return labels;
}

/** A random registry builder for `seed`: 1-6 metrics of random types, labels, values and default labels. */
export function randomCase(seed: number): CorpusCase {
  return {
    name: `random registry, seed ${seed}`,
    build: (registry) => {
      const random = prng(seed);
      if (random() < 0.3) registry.setDefaultLabels(randomLabels(random, ['env', 'region', 'code']));
      const count = 1 + Math.floor(random() * 6);
      for (let m = 0; m < count; m += 1) {
        const labelNames = LABEL_NAMES.filter(() => random() < 0.3);
        const metricName = `${pick(random, NAME_PARTS)}_${m}_${Math.floor(random() * 1e6)}`;
        const help = random() < 0.2 ? pick(random, AWKWARD_VALUES) || 'x' : `Help of ${metricName}`;
        const type = Math.floor(random() * 4);
        const series = Math.floor(random() * 8);
        const labels = () => randomLabels(random, labelNames);
        if (type === 0) {
          const counter = new Counter({ name: `${metricName}_total`, help, labelNames, registers: [registry] });
          for (let s = 0; s < series; s += 1) counter.inc(labels(), Math.abs(randomNumber(random)) % 1e6 || 1);
        } else if (type === 1) {
          const gauge = new Gauge({ name: metricName, help, labelNames, registers: [registry] });
          for (let s = 0; s < series; s += 1) gauge.set(labels(), randomNumber(random));
        } else if (type === 2) {
          const bounds = Array.from({ length: 1 + Math.floor(random() * 6) }, () => Math.abs(randomNumber(random)) || 1);
          const buckets = random() < 0.5 ? undefined : [...new Set(bounds)].sort((a, b) => a - b).filter(Number.isFinite);
          const histogram = new Histogram({
            name: `${metricName}_seconds`,
            help,
            labelNames,
            ...(buckets && { buckets }),
            registers: [registry],
          });
          for (let s = 0; s < series; s += 1) histogram.observe(labels(), Math.abs(randomNumber(random)) % 1e9 || 0);
        } else {
          const percentiles = random() < 0.5 ? undefined : [0.1, 0.5, random()].sort();
          const summary = new Summary({
            name: `${metricName}_summary`,
            help,
            labelNames,
            ...(percentiles && { percentiles }),
            registers: [registry],
          });
          for (let s = 0; s < series; s += 1) summary.observe(labels(), Math.abs(randomNumber(random)) % 1e9 || 0);
        }
      }
    },
  };
}
