/**
 * What the renderer relies on inside prom-client, in one place. prom-client 15 keeps every metric's
 * series in a plain object `hashMap` (label hash -> series); reading it directly is what lets a
 * scrape walk 100 000 series in time slices instead of one `get()` that copies them all in a
 * single turn. Everything here is checked before use: a metric whose class, methods or storage do
 * not look exactly like prom-client 15's is read through its public `get()` instead, and the test
 * `__tests__/metrics/exposition/internals.test.ts` fails loudly when an upgrade changes the shape.
 */
import { installedPromClient, TRUSTED_PROM_CLIENT_MAJOR } from '../client';

/** A label set as prom-client stores it: label name -> value (prom-client accepts numbers too). */
export type LabelSet = Readonly<Record<string, unknown>>;

/** A counter's or gauge's series. */
export interface ScalarSeries {
  /** The current value. */
  readonly value: unknown;
  /** The series' labels, the object the host passed in. */
  readonly labels?: LabelSet;
  /** prom-client's exemplar, kept only by counters created with `enableExemplars`. */
  readonly exemplar?: unknown;
}

/** A histogram's series. */
export interface HistogramSeries {
  /** The series' labels. */
  readonly labels?: LabelSet;
  /** Non-cumulative count per upper bound, keyed by the bound as a property name. */
  readonly bucketValues: Readonly<Record<string, number>>;
  /** Sum of the observations. */
  readonly sum: unknown;
  /** Number of observations. */
  readonly count: unknown;
  /** prom-client's exemplars per upper bound (`-1` is the `+Inf` bucket), with `enableExemplars`. */
  readonly bucketExemplars?: Readonly<Record<string, unknown>>;
}

/** Fields every prom-client metric has. */
interface MetricBase {
  readonly name: string;
  readonly help: unknown;
  readonly type: string;
  /** A unit given in the metric's configuration (prom-client keeps unknown options on the metric). */
  readonly unit?: unknown;
  collect?: () => unknown;
}

/** A prom-client 15 Counter or Gauge, read through its storage. */
export interface ScalarMetric extends MetricBase {
  readonly hashMap: Record<string, ScalarSeries | undefined>;
}

/** A prom-client 15 Histogram, read through its storage. */
export interface HistogramMetric extends MetricBase {
  readonly hashMap: Record<string, HistogramSeries | undefined>;
  readonly upperBounds: readonly number[];
}

/** One value as a metric's public `get()` / `getForPromString()` returns it. */
export interface PublicValue {
  readonly value: unknown;
  readonly labels?: LabelSet | null;
  readonly sharedLabels?: LabelSet | null;
  readonly metricName?: string;
  readonly exemplar?: unknown;
}

/** What a metric's public `get()` returns. */
export interface PublicMetricData {
  readonly name: string;
  readonly help: unknown;
  readonly type: string;
  readonly values?: readonly PublicValue[] | null;
}

/** Any metric in a registry, read only through its public methods. */
export interface PublicMetric {
  readonly name: string;
  readonly type?: unknown;
  readonly unit?: unknown;
  get(): Promise<PublicMetricData>;
  getForPromString?: () => Promise<PublicMetricData>;
}

/** How the renderer reads one metric. */
export type MetricAccess =
  | { readonly kind: 'scalar'; readonly metric: ScalarMetric }
  | { readonly kind: 'histogram'; readonly metric: HistogramMetric }
  | { readonly kind: 'public'; readonly metric: PublicMetric };

/** prom-client's classes when the installed one is the major read through its storage, else undefined. */
function trustedClient(): typeof import('prom-client') | undefined {
  const found = installedPromClient();
  return found?.major === TRUSTED_PROM_CLIENT_MAJOR ? found.module : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * The key under which a metric this package created carries its exemplars (see
 * `metrics/exemplar-store.ts`). Declared here, where the renderer recognises such metrics.
 */
export const CARRIED_EXEMPLARS_KEY: unique symbol = Symbol('controller-introspection exemplars');

/**
 * Whether `metric` is an instance of `cls` itself, or of the subclass this package makes of it to
 * carry exemplars (`withExemplars`: a prototype with only its constructor, the exemplars an
 * own field). Any other subclass may keep its values elsewhere: it is read through `get()`.
 */
function isOwnClass(metric: object, cls: { prototype: object }): boolean {
  const proto = Object.getPrototypeOf(metric) as object | null;
  if (proto === cls.prototype) return true;
  if (proto === null || !Object.prototype.hasOwnProperty.call(metric, CARRIED_EXEMPLARS_KEY)) return false;
  if (Object.getPrototypeOf(proto) !== cls.prototype) return false;
  const own = Reflect.ownKeys(proto);
  return own.length === 1 && own[0] === 'constructor';
}

/** True when `metric` is an instance of `cls` (or of the subclass that carries our exemplars) whose reading methods are prom-client's own. */
function isPlain(metric: Record<string, unknown>, cls: { prototype: object }, methods: readonly string[]): boolean {
  if (!isOwnClass(metric, cls)) return false;
  const proto = cls.prototype as Record<string, unknown>;
  if (!methods.every((method) => metric[method] === proto[method])) return false;
  if (metric.collect !== undefined && typeof metric.collect !== 'function') return false;
  return typeof metric.name === 'string' && isObject(metric.hashMap) && Array.isArray(metric.labelNames);
}

/**
 * How to read `metric`: through its storage, read-only, when it is a prom-client 15 Counter, Gauge or
 * Histogram as they ship (or as `withExemplars` extends them); else through its public `get()`:
 * summaries (reading one means compressing its estimators and dropping aged windows, which only
 * prom-client's own `get()` may do), custom Metric subclasses, another prom-client copy or major,
 * anything that overrides how values are read.
 */
export function accessMetric(metric: unknown): MetricAccess | undefined {
  if (!isObject(metric) || typeof metric.get !== 'function' || typeof metric.name !== 'string') return undefined;
  const client = trustedClient();
  if (client !== undefined) {
    const { Counter, Gauge, Histogram } = client;
    if (isPlain(metric, Counter, ['get']) || isPlain(metric, Gauge, ['get'])) {
      return { kind: 'scalar', metric: metric as unknown as ScalarMetric };
    }
    if (isPlain(metric, Histogram, ['get', 'getForPromString']) && Array.isArray(metric.upperBounds)) {
      return { kind: 'histogram', metric: metric as unknown as HistogramMetric };
    }
  }
  return { kind: 'public', metric: metric as unknown as PublicMetric };
}

/** A registry the renderer can read without calling its `metrics()`. */
export interface ReadableRegistry {
  /** The metrics, in registration order (the exposition order). */
  readonly metrics: readonly unknown[];
  /** `setDefaultLabels()`'s labels, or undefined when there are none. */
  readonly defaultLabels: LabelSet | undefined;
}

/**
 * Reads `registry`'s metrics and default labels, or answers undefined when it is not a plain
 * prom-client 15 Registry (a subclass overriding how it renders, another copy of prom-client): such
 * a registry is rendered by its own `metrics()` in its own format.
 */
export function readRegistry(registry: unknown): ReadableRegistry | undefined {
  const Registry = trustedClient()?.Registry;
  if (Registry === undefined || !(registry instanceof Registry)) return undefined;
  const proto = Registry.prototype as unknown as Record<string, unknown>;
  const own = registry as unknown as Record<string, unknown>;
  for (const method of ['metrics', 'getMetricsAsString', 'getMetricsAsArray']) {
    if (own[method] !== proto[method]) return undefined;
  }
  const defaults = own._defaultLabels;
  if (defaults !== undefined && !isObject(defaults)) return undefined;
  const hasDefaults = defaults !== undefined && Object.keys(defaults).length > 0;
  return { metrics: registry.getMetricsAsArray(), defaultLabels: hasDefaults ? defaults : undefined };
}
