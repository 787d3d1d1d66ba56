/**
 * What the renderer relies on inside the metrics clients, in one place. prom-client 15 keeps every
 * metric's series in a plain object `hashMap` (label hash -> series); `@prometheus-io/client` 0.16
 * in a `LabelMap` (`metric.store`) whose `values()` iterates them. Reading these, read only, is what
 * lets a scrape walk 100 000 series in time slices instead of one `get()` that copies them all in
 * a single turn. Everything here is checked before use: a metric whose class, methods or storage
 * do not look exactly like its client's is read through its public `get()` instead, and
 * `__tests__/metrics/exposition/internals.test.ts` fails loudly when an upgrade changes the shape.
 * Nothing here writes to a client's object.
 */
import type { MetricsClient } from '../client';

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

/** A Counter or Gauge, read through its storage. */
export type ScalarMetric = MetricBase;

/** A Histogram, read through its storage. */
export interface HistogramMetric extends MetricBase {
  readonly upperBounds: readonly number[];
}

/**
 * Starts a walk over a metric's series, one per `next()`: the series as its client stores them (an
 * entry may be undefined when the host removed it during the walk). Called once per scrape.
 */
export type SeriesWalk<S> = () => Iterator<S | undefined>;

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
  | { readonly kind: 'scalar'; readonly metric: ScalarMetric; readonly series: SeriesWalk<ScalarSeries> }
  | { readonly kind: 'histogram'; readonly metric: HistogramMetric; readonly series: SeriesWalk<HistogramSeries> }
  | { readonly kind: 'public'; readonly metric: PublicMetric };

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

/** prom-client 15's storage: the series of a plain object, its keys listed in one step (V8 cannot split it). */
function* hashMapSeries<S>(map: Record<string, S | undefined>): Generator<S | undefined> {
  for (const key of Object.keys(map)) yield map[key];
}

/**
 * How `metric`'s series are walked, when it is an instance of `cls` (or of the subclass that
 * carries our exemplars) whose reading methods are the client's own and whose storage has the
 * shape `client` keeps: undefined otherwise. The walk only reads.
 */
function storageWalk<S>(
  metric: Record<string, unknown>,
  cls: { prototype: object },
  methods: readonly string[],
  client: MetricsClient,
): SeriesWalk<S> | undefined {
  if (!isOwnClass(metric, cls)) return undefined;
  const proto = cls.prototype as Record<string, unknown>;
  if (!methods.every((method) => metric[method] === proto[method])) return undefined;
  if (metric.collect !== undefined && typeof metric.collect !== 'function') return undefined;
  if (typeof metric.name !== 'string' || !Array.isArray(metric.labelNames)) return undefined;
  const labelMap = client.storage === 'label-map' ? client.labelMap : undefined;
  if (client.storage === 'hash-map' ? !isObject(metric.hashMap) : !isLabelMap(metric.store, labelMap)) return undefined;
  // Read again when the walk starts, after `collect()`: `reset()` gives the metric a new storage.
  return () => {
    if (client.storage === 'hash-map' && isObject(metric.hashMap)) return hashMapSeries(metric.hashMap as Record<string, S | undefined>);
    const { store } = metric;
    if (isLabelMap(store, labelMap)) return labelMapSeries<S>(store);
    throw new TypeError(`the storage of metric "${metric.name as string}" changed shape during the scrape`);
  };
}

/**
 * `@prometheus-io/client`'s storage: its live iterator, one series per step, for at most as many
 * series as the store held when the walk started (its public `size`): a host adding series
 * faster than a scrape reads them cannot keep the scrape going for ever.
 */
function* labelMapSeries<S>(store: { values: () => Iterator<unknown>; size?: unknown }): Generator<S | undefined> {
  const size = store.size;
  let left = typeof size === 'number' && size >= 0 ? size : Infinity;
  const all = store.values.call(store) as Iterator<S>;
  for (let next = all.next(); next.done !== true && left > 0; next = all.next(), left -= 1) yield next.value;
}

/**
 * Whether `store` is a `LabelMap` whose `values()` is LabelMap's own: a Map's live iterator, on
 * which series added during the walk are met and removed ones skipped.
 */
function isLabelMap(store: unknown, labelMap: MetricsClient['labelMap']): store is { values: () => Iterator<unknown> } {
  if (labelMap === undefined || !(store instanceof labelMap)) return false;
  const { values } = store as { values?: unknown };
  return typeof values === 'function' && values === (labelMap.prototype as { values?: unknown }).values;
}

/**
 * How to read `metric`, a metric of a registry of `client`: through its storage, read-only, when
 * it is that client's Counter, Gauge or Histogram as they ship (or as `withExemplars` extends them)
 * and the client's version is one whose storage this package knows; else through its public
 * `get()`: summaries (reading one means compressing its estimators and dropping aged windows,
 * which only the client's own `get()` may do), custom Metric subclasses, a metric of another
 * client, anything that overrides how values are read.
 */
export function accessMetric(metric: unknown, client: MetricsClient | undefined): MetricAccess | undefined {
  if (!isObject(metric) || typeof metric.get !== 'function' || typeof metric.name !== 'string') return undefined;
  if (client?.storage !== undefined) {
    const { Counter, Gauge, Histogram } = client.module;
    const scalar = storageWalk<ScalarSeries>(metric, Counter, ['get'], client) ?? storageWalk<ScalarSeries>(metric, Gauge, ['get'], client);
    if (scalar !== undefined) return { kind: 'scalar', metric: metric as unknown as ScalarMetric, series: scalar };
    const histogram = Array.isArray(metric.upperBounds)
      ? storageWalk<HistogramSeries>(metric, Histogram, ['get', 'getForPromString'], client)
      : undefined;
    if (histogram !== undefined) return { kind: 'histogram', metric: metric as unknown as HistogramMetric, series: histogram };
  }
  return { kind: 'public', metric: metric as unknown as PublicMetric };
}

/** A registry the renderer can read without calling its `metrics()`. */
export interface ReadableRegistry {
  /** The metrics, in registration order (the exposition order). */
  readonly metrics: readonly unknown[];
  /** `setDefaultLabels()`'s labels, or undefined when there are none. */
  readonly defaultLabels: LabelSet | undefined;
  /** The client the registry is of: its metrics are read as that client stores them. */
  readonly client: MetricsClient;
}

/**
 * Reads `registry`'s metrics and default labels, or answers undefined when it is not a plain
 * Registry of `client` (a subclass overriding how it renders, a registry of no client): such a
 * registry is rendered by its own `metrics()` in its own format.
 */
export function readRegistry(registry: unknown, client: MetricsClient | undefined): ReadableRegistry | undefined {
  const Registry = client?.module.Registry;
  if (client === undefined || Registry === undefined || !(registry instanceof Registry)) return undefined;
  const proto = Registry.prototype as unknown as Record<string, unknown>;
  const own = registry as unknown as Record<string, unknown>;
  for (const method of ['metrics', 'getMetricsAsString', 'getMetricsAsArray']) {
    if (own[method] !== proto[method]) return undefined;
  }
  const defaults = own._defaultLabels;
  if (defaults !== undefined && !isObject(defaults)) return undefined;
  const hasDefaults = defaults !== undefined && Object.keys(defaults).length > 0;
  return { metrics: registry.getMetricsAsArray(), defaultLabels: hasDefaults ? defaults : undefined, client };
}
