/**
 * Exemplars that lead from a metric to the reconciliation cycle behind it, kept beside prom-client.
 *
 * prom-client keeps exemplars only on registries whose content type is OpenMetrics, and hosts use
 * text registries (the router negotiates OpenMetrics per request instead). So the metrics this
 * package creates carry their own: each is an instance of a subclass of prom-client's class
 * ({@link withExemplars}) that holds the last exemplar per series (and per histogram bucket, the
 * bucket the observation fell in). The metrics router finds them on the metrics of the registry
 * it serves, through {@link CARRIED_EXEMPLARS}: no table keyed by registry, nothing written into an
 * object we did not create. Recording is a map lookup and an array write, on the host's path.
 *
 * The same metrics carry when they were created (the start timestamp of their series in protobuf
 * answers), and a histogram made with native buckets carries those per series
 * ({@link MetricNativeBuckets}): neither client has native histograms.
 */
import type { Exemplar, ExemplarSource, LabelSet, SeriesExemplars } from './exposition';
import { CARRIED_EXEMPLARS_KEY } from './exposition/adapters/stored';
import { NativeHistogram, type NativeSnapshot, type ResolvedNativeHistogramOptions } from './native-histogram';

/** The exemplar label that carries a cycle's correlation id. */
export const CORRELATION_LABEL = 'correlation_id';

/**
 * The longest correlation id an exemplar carries, in characters (code points): OpenMetrics allows
 * 128 characters of exemplar label names and values together, and the name takes 14. A longer id
 * is dropped, not cut: a cut id would match no cycle at `/debug/vars/events?correlation_id=`, a
 * lead to nowhere, where the bucket's previous exemplar still leads to a real cycle.
 */
export const MAX_CORRELATION_ID_LENGTH = 128 - CORRELATION_LABEL.length;

/** Whether `id` fits in an exemplar. UTF-16 length bounds the code-point count from above. */
export function fitsExemplar(id: string): boolean {
  if (id.length <= MAX_CORRELATION_ID_LENGTH) return true;
  if (id.length > 2 * MAX_CORRELATION_ID_LENGTH) return false;
  let count = 0;
  for (const _char of id) count += 1;
  return count <= MAX_CORRELATION_ID_LENGTH;
}

/**
 * A series' identity from its labels, independent of the order the names were given in. A caller
 * that records often on the same series computes it once and passes it to
 * {@link MetricExemplars.record} instead of the labels.
 */
export function seriesKey(labels: LabelSet | undefined): string {
  if (labels === undefined) return '';
  const names = Object.keys(labels);
  if (names.length === 0) return '';
  if (names.length > 1) names.sort();
  let key = '';
  for (const name of names) key += `${name}\u0001${String(labels[name])}\u0002`;
  return key;
}

/** The last exemplars of one metric's series: one slot per series, or one per bucket of a histogram series. */
export class MetricExemplars {
  /** When the metric was made, in milliseconds since the epoch: its series counted from 0 since. */
  readonly createdMs = Date.now();
  private readonly series = new Map<string, Array<Exemplar | undefined>>();
  /** A histogram's bucket upper bounds, `+Inf` excluded; empty for a counter. */
  private readonly bounds: readonly number[];
  private readonly slotOfBound: ReadonlyMap<number, number>;

  /**
   * @param bounds - A histogram's bucket upper bounds (`+Inf` excluded); empty for a counter.
   * @param owner - What created the metric, for a later creator to find it by (see {@link ownerOf}).
   */
  constructor(
    bounds: readonly number[],
    readonly owner: unknown,
  ) {
    this.bounds = bounds;
    this.slotOfBound = new Map([...bounds.map((bound, i) => [bound, i] as const), [Infinity, bounds.length]]);
  }

  /** The slot an observation of `value` lands in: the first bucket whose bound is `>= value`, as prom-client counts it. */
  private slotOf(value: number): number {
    const { bounds } = this;
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (bounds[middle]! >= value) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /**
   * Records that `value` was observed (or added, for a counter) on a series (its labels, or their
   * {@link seriesKey}) by the cycle `correlationId`, now. An id longer than
   * {@link MAX_CORRELATION_ID_LENGTH} is not recorded.
   */
  record(series: LabelSet | string | undefined, value: number, correlationId: string): void {
    if (!fitsExemplar(correlationId)) return;
    const key = typeof series === 'string' ? series : seriesKey(series);
    let slots = this.series.get(key);
    if (slots === undefined) {
      slots = new Array<Exemplar | undefined>(this.bounds.length === 0 ? 1 : this.bounds.length + 1);
      this.series.set(key, slots);
    }
    const exemplar: Exemplar = { labels: { [CORRELATION_LABEL]: correlationId }, value, timestamp: Date.now() / 1000 };
    slots[this.bounds.length === 0 ? 0 : this.slotOf(value)] = exemplar;
  }

  /** The renderer's lookup; a bound the metric does not have (buckets changed) finds nothing. */
  readonly lookup: SeriesExemplars = (labels, upperBound) => {
    const slots = this.series.get(seriesKey(labels));
    if (slots === undefined) return undefined;
    if (upperBound === undefined) return this.bounds.length === 0 ? slots[0] : undefined;
    const slot = this.slotOfBound.get(upperBound);
    return slot === undefined ? undefined : slots[slot];
  };

  /** Forgets one series' exemplars (its series left the metric). */
  forget(labels: LabelSet | undefined): void {
    this.series.delete(seriesKey(labels));
  }
}

/** One histogram's native buckets, by series, beside the client's classic buckets. */
export class MetricNativeBuckets {
  private readonly series = new Map<string, NativeHistogram>();

  /** @param options - The histogram's native options, resolved once for all its series. */
  constructor(private readonly options: ResolvedNativeHistogramOptions) {
    this.empty = new NativeHistogram(options).snapshot();
  }

  /** Counts `value` in the series of `labels` (none: the series without labels). */
  observe(labels: LabelSet | undefined, value: number): void {
    const key = seriesKey(labels);
    let histogram = this.series.get(key);
    if (histogram === undefined) {
      histogram = new NativeHistogram(this.options);
      this.series.set(key, histogram);
    }
    histogram.observe(value);
  }

  /** A series' buckets before its first observation: what an empty native histogram is written as. */
  private readonly empty: NativeSnapshot;

  /**
   * The renderer's lookup: the series' native buckets; for a series never observed, an empty
   * native histogram (as client_golang writes one), which the renderer writes only when the
   * classic series counts nothing either.
   */
  readonly lookup = (labels: LabelSet | undefined): NativeSnapshot => this.series.get(seriesKey(labels))?.snapshot() ?? this.empty;

  /** Starts the series of `labels` again from nothing (the client's `zero()`). */
  zero(labels: LabelSet | undefined): void {
    this.series.set(seriesKey(labels), new NativeHistogram(this.options));
  }

  /** Forgets one series (it left the metric). */
  forget(labels: LabelSet | undefined): void {
    this.series.delete(seriesKey(labels));
  }

  /** Forgets every series (the metric was reset). */
  clear(): void {
    this.series.clear();
  }
}

/** The key under which a histogram made with native buckets carries them. */
const CARRIED_NATIVE_KEY: unique symbol = Symbol('controller-introspection native buckets');

/** A metric class of prom-client's, as {@link withExemplars} extends it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a class extended at run time takes any[] (TS2545)
type MetricClass<M extends object> = new (...args: any[]) => M;

/** What a histogram's observe(), labels(), zero(), reset() and remove() take, as both clients take them. */
interface Observed {
  observe: (labelsOrValue?: unknown, value?: unknown) => void;
  labels: (...args: unknown[]) => { observe: (value: number) => void; startTimer: (...args: unknown[]) => unknown };
  zero: (labels: unknown) => void;
  reset: () => void;
  remove: (...labels: unknown[]) => void;
  readonly labelNames: readonly string[];
}

function isLabelObject(value: unknown): value is LabelSet {
  return typeof value === 'object' && value !== null;
}

/** The label set of `labels(...args)` or `remove(...args)`: an object, or the values in label-name order. */
function labelsOfArguments(labelNames: readonly string[], args: readonly unknown[]): LabelSet {
  if (isLabelObject(args[0])) return args[0];
  return Object.fromEntries(labelNames.map((name, i) => [name, args[i]]));
}

/**
 * Makes the histogram's own `observe`, `labels`, `zero`, `reset` and `remove` (own properties of
 * the metric this package made; the clients assign `observe` per instance too) keep the native
 * buckets in step, each after the client's own accepted the call: the classic and native buckets
 * of a series see the same observations. Arguments are read as both clients read them: `observe(x,
 * v)` takes `x` as the labels when `x || {}` is an object (so `observe(undefined, v)` observes `v`),
 * else `x` as the value; a timer's observation goes through `observe`.
 */
function keepNative(metric: Observed, native: MetricNativeBuckets): void {
  const { observe, labels, zero, reset, remove } = metric;
  metric.observe = (labelsOrValue?: unknown, value?: unknown): void => {
    observe.call(metric, labelsOrValue, value);
    const given = labelsOrValue === 0 ? 0 : labelsOrValue || {};
    if (isLabelObject(given)) native.observe(given, value as number);
    else native.observe(undefined, given as number);
  };
  metric.labels = (...args: unknown[]) => {
    const bound = labels.apply(metric, args);
    const set = labelsOfArguments(metric.labelNames, args);
    return {
      ...bound,
      observe: (value: number): void => {
        bound.observe(value);
        native.observe(set, value);
      },
    };
  };
  metric.zero = (labels: unknown): void => {
    zero.call(metric, labels);
    native.zero(isLabelObject(labels) ? labels : undefined);
  };
  metric.reset = (): void => {
    reset.call(metric);
    native.clear();
  };
  metric.remove = (...labels: unknown[]): void => {
    remove.apply(metric, labels);
    native.forget(labelsOfArguments(metric.labelNames, labels));
  };
}

/**
 * A subclass of prom-client's `Base` (Counter or Histogram) whose instances carry their exemplars
 * (and, for a histogram given `native` options, their native buckets): the metric is ours from its
 * creation, so nothing is written into an object someone else made.
 *
 * @param bounds - The histogram's bucket upper bounds (`+Inf` excluded); empty for a counter.
 * @param owner - What creates the metric, answered by {@link ownerOf} to whoever finds the metric.
 * @param native - A histogram's native options; undefined keeps classic buckets only.
 */
export function withExemplars<M extends object>(
  Base: MetricClass<M>,
  bounds: readonly number[],
  owner?: unknown,
  native?: ResolvedNativeHistogramOptions,
): MetricClass<M> {
  return class extends (Base as MetricClass<object>) {
    readonly [CARRIED_EXEMPLARS_KEY] = new MetricExemplars(bounds, owner);
    readonly [CARRIED_NATIVE_KEY] = native === undefined ? undefined : new MetricNativeBuckets(native);

    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a class extended at run time takes any[] (TS2545)
    constructor(...args: any[]) {
      super(...(args as unknown[]));
      const buckets = this[CARRIED_NATIVE_KEY];
      if (buckets !== undefined) keepNative(this as unknown as Observed, buckets);
    }
  } as MetricClass<M>;
}

/**
 * What `metric` carries under `key` when it is an instance of `cls`, else undefined: a host's
 * metric behind a proxy that throws on reads it does not know is not ours.
 */
function carriedBy<T>(metric: object, key: symbol, cls: abstract new (...args: never[]) => T): T | undefined {
  let carried: unknown;
  try {
    carried = (metric as Record<symbol, unknown>)[key];
  } catch {
    return undefined;
  }
  return carried instanceof cls ? (carried as T) : undefined;
}

/** The native buckets `metric` carries when {@link withExemplars} made it with native options, else `undefined`. */
export function nativeBucketsOf(metric: object): MetricNativeBuckets | undefined {
  return carriedBy(metric, CARRIED_NATIVE_KEY, MetricNativeBuckets);
}

/** The exemplars `metric` carries when {@link withExemplars} made it, else `undefined`. */
export function exemplarsOf(metric: object): MetricExemplars | undefined {
  return carriedBy(metric, CARRIED_EXEMPLARS_KEY, MetricExemplars);
}

/** The `owner` given to {@link withExemplars} for `metric`, or `undefined` for any other metric. */
export function ownerOf(metric: object | undefined): unknown {
  return metric === undefined ? undefined : exemplarsOf(metric)?.owner;
}

/** What the renderer reads beside the client's storage: the exemplars, native buckets and creation time each metric of the registry carries. */
export const CARRIED_EXEMPLARS: ExemplarSource = {
  forMetric: (metric) => exemplarsOf(metric)?.lookup,
  nativeOf: (metric) => nativeBucketsOf(metric)?.lookup,
  createdMs: (metric) => exemplarsOf(metric)?.createdMs,
};
