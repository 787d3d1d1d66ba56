/**
 * What the two storage read paths share. prom-client 15 (`hash-map.ts`) and `@prometheus-io/client`
 * 0.16 (`label-map.ts`) keep the same entries for a Counter, Gauge or Histogram, only in another
 * container: this recognises such a metric, starts its `collect()`, and reads each entry its
 * container's walk hands over into the model's series (one object per family, reused at every
 * step), with the exemplars, native buckets and start timestamp the encoder needs. A metric whose
 * class, methods or storage do not look exactly like its client's is read through its public
 * `get()` instead (`public.ts`), and `__tests__/metrics/exposition/internals.test.ts` fails loudly
 * when an upgrade changes the shape. Nothing here writes to a client's object.
 */
import type { MetricsClient } from '../../client';
import { callHost } from '../../../util/host-promise';
import { hostText, readLabel } from '../dialect';
import { readOnce } from '../in-flight';
import type {
  Exemplar,
  ExemplarSource,
  HistogramFamily,
  HistogramSeries,
  LabelSet,
  ModelNeeds,
  ScalarFamily,
  ScalarSeries,
  SeriesExemplars,
} from '../model';
import { isLegacyLabelName } from '../name-writer';

/** A counter's or gauge's entry, as both clients store it. */
export interface StoredScalar {
  /** The current value. */
  readonly value: unknown;
  /** The series' labels, the object the host passed in. */
  readonly labels?: LabelSet;
  /** prom-client's exemplar, kept only by counters created with `enableExemplars`. */
  readonly exemplar?: unknown;
}

/** A histogram's entry, as both clients store it. */
export interface StoredHistogram {
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

/** How one client's container of entries is recognised and walked. */
export interface StorageReader {
  /** Whether `metric`'s storage has the shape this client keeps. */
  holds(metric: Record<string, unknown>, client: MetricsClient): boolean;
  /**
   * A walk over the entries, each handed to `read`, one per `next()`; undefined when the storage no
   * longer has its shape (a host replaced it in `collect()`). Started once per scrape, after `collect()`.
   */
  walk<E, S>(metric: Record<string, unknown>, client: MetricsClient, read: (entry: E) => S): Iterator<S | undefined> | undefined;
}

/** A walk over a metric's entries, each handed to `read`. */
type EntryWalk<E> = <S>(read: (entry: E) => S) => Iterator<S | undefined>;

/** Fields every client metric has. */
interface StoredMetric {
  readonly name: string;
  readonly help: unknown;
  readonly type: string;
  readonly unit?: unknown;
  readonly upperBounds?: readonly number[];
  collect?: () => unknown;
}

/** A metric read through its storage: how to start its `collect()`, and its family once collected. */
export interface StoredAccess<K extends 'scalar' | 'histogram', E, F extends ScalarFamily | HistogramFamily> {
  readonly kind: K;
  readonly metric: StoredMetric;
  /** The entries as stored, one per `next()` (what {@link StoredAccess.family} reads). */
  series(): Iterator<E | undefined>;
  /** Starts its `collect()`, unless one is pending (`in-flight.ts`); undefined when it has none or it returns no Promise. */
  start(signal: AbortSignal | undefined): Promise<unknown> | undefined;
  /**
   * The family, its walk started: throws when the storage changed shape in `collect()`, before
   * anything of the family is written.
   */
  family(collected: unknown, needs: ModelNeeds, source: ExemplarSource | undefined): F;
}

/** A Counter or Gauge, or a Histogram, read through its storage. */
export type AnyStoredAccess =
  StoredAccess<'scalar', StoredScalar, ScalarFamily> | StoredAccess<'histogram', StoredHistogram, HistogramFamily>;

/**
 * The key under which a metric this package created carries its exemplars (see
 * `metrics/exemplar-store.ts`). Declared here, where such metrics are recognised.
 */
export const CARRIED_EXEMPLARS_KEY: unique symbol = Symbol('controller-introspection exemplars');

/** The OpenMetrics limit on an exemplar's label names and values together, in characters. */
const EXEMPLAR_LABEL_LIMIT = 128;

/** Characters of the names and values together, or Infinity when a name is not a valid label name. */
function labelCharacters(labels: LabelSet): number {
  let count = 0;
  for (const name of Object.keys(labels)) {
    if (!isLegacyLabelName(name)) return Infinity;
    // Code points, as the spec counts UTF-8 characters, not UTF-16 units.
    for (const _char of `${name}${hostText(readLabel(labels, name))}`) count += 1;
  }
  return count;
}

/** prom-client's stored exemplar as ours, or undefined when `stored` is not one (none recorded yet). */
function fromPromClient(stored: unknown): Exemplar | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { labelSet, value, timestamp } = stored as { labelSet?: unknown; value?: unknown; timestamp?: unknown };
  if (typeof labelSet !== 'object' || labelSet === null || typeof value !== 'number') return undefined;
  return { labels: labelSet as LabelSet, value, timestamp: typeof timestamp === 'number' ? timestamp : undefined };
}

/**
 * The exemplar an answer carries for a sample: this package's (`lookup`, for the series' labels and
 * the bucket's bound), else the client's stored one; undefined when there is none or its labels
 * would make the answer invalid (an invalid name, past the 128-character limit: Prometheus refuses them).
 */
export function writableExemplar(
  lookup: SeriesExemplars | undefined,
  labels: LabelSet | undefined,
  bound: number | undefined,
  stored: unknown,
): Exemplar | undefined {
  const exemplar = (lookup !== undefined && labels !== undefined ? lookup(labels, bound) : undefined) ?? fromPromClient(stored);
  return exemplar !== undefined && labelCharacters(exemplar.labels) <= EXEMPLAR_LABEL_LIMIT ? exemplar : undefined;
}

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

/**
 * Whether `metric` is an instance of `cls` (or of the subclass that carries our exemplars) whose
 * reading methods are the client's own and whose storage has the shape `reader` knows.
 */
function readsAs(
  metric: Record<string, unknown>,
  cls: { prototype: object },
  methods: readonly string[],
  client: MetricsClient,
  reader: StorageReader,
): boolean {
  if (!isOwnClass(metric, cls)) return false;
  const proto = cls.prototype as Record<string, unknown>;
  if (!methods.every((method) => metric[method] === proto[method])) return false;
  if (metric.collect !== undefined && typeof metric.collect !== 'function') return false;
  if (typeof metric.name !== 'string' || !Array.isArray(metric.labelNames)) return false;
  return reader.holds(metric, client);
}

/** Starts `metric`'s `collect()` (prom-client's own `get()` awaits only a real Promise from it, so does this). */
function startCollect(metric: StoredMetric, signal: AbortSignal | undefined): Promise<unknown> | undefined {
  if (!metric.collect) return undefined;
  const call = (): unknown => {
    const result = metric.collect!();
    return result instanceof Promise ? result : undefined;
  };
  return callHost(() => readOnce(metric, 'collect', call), signal);
}

/** The walk of `metric` through `read`, or the error that leaves the family out. */
function walkOf<E, S>(metric: StoredMetric, client: MetricsClient, reader: StorageReader, read: (entry: E) => S): Iterator<S | undefined> {
  const walk = reader.walk(metric as unknown as Record<string, unknown>, client, read);
  if (walk === undefined) throw new TypeError(`the storage of metric "${metric.name}" changed shape during the scrape`);
  return walk;
}

/** A Counter's or Gauge's family: one reused series, a counter's exemplars and start timestamp when needed. */
function scalarFamily(
  metric: StoredMetric,
  walk: EntryWalk<StoredScalar>,
  needs: ModelNeeds,
  source: ExemplarSource | undefined,
): ScalarFamily {
  const isCounter = metric.type === 'counter';
  const exemplars = needs.exemplars && isCounter;
  const lookup = exemplars ? source?.forMetric(metric) : undefined;
  const series: ScalarSeries = { kind: 'scalar', labels: undefined, value: undefined, exemplar: undefined };
  const read = (entry: StoredScalar): ScalarSeries => {
    series.labels = entry.labels;
    series.value = entry.value;
    series.exemplar = exemplars ? writableExemplar(lookup, entry.labels, undefined, entry.exemplar) : undefined;
    return series;
  };
  return {
    kind: 'scalar',
    name: metric.name,
    help: metric.help,
    type: metric.type,
    unit: metric.unit,
    createdMs: needs.created && isCounter ? source?.createdMs?.(metric) : undefined,
    series: walk(read),
  };
}

/**
 * A Histogram's family: one reused series whose counts and exemplars are arrays of the family's,
 * filled at each step; exemplars only where this package or the client keeps some for the series.
 */
function histogramFamily(
  metric: StoredMetric,
  walk: EntryWalk<StoredHistogram>,
  needs: ModelNeeds,
  source: ExemplarSource | undefined,
): HistogramFamily {
  const bounds = metric.upperBounds!;
  const keys = bounds.map(String);
  const lookup = needs.exemplars ? source?.forMetric(metric) : undefined;
  const native = needs.native ? source?.nativeOf?.(metric) : undefined;
  const exemplars = new Array<Exemplar | undefined>(bounds.length + 1).fill(undefined);
  const series: HistogramSeries = {
    kind: 'histogram',
    labels: undefined,
    counts: new Array<number>(bounds.length).fill(0),
    sum: undefined,
    count: undefined,
    exemplars: undefined,
    native: undefined,
  };
  const read = (entry: StoredHistogram): HistogramSeries => {
    const { labels, bucketValues } = entry;
    const stored = entry.bucketExemplars;
    series.labels = labels;
    for (let i = 0; i < keys.length; i += 1) series.counts[i] = bucketValues[keys[i]!]!;
    series.sum = entry.sum;
    series.count = entry.count;
    series.exemplars = needs.exemplars && (lookup !== undefined || stored !== undefined) ? exemplars : undefined;
    if (series.exemplars !== undefined) {
      for (let i = 0; i < keys.length; i += 1) exemplars[i] = writableExemplar(lookup, labels, bounds[i], stored?.[keys[i]!]);
      exemplars[keys.length] = writableExemplar(lookup, labels, Infinity, stored?.['-1']);
    }
    series.native = native?.(labels);
    return series;
  };
  const createdMs = needs.created ? source?.createdMs?.(metric) : undefined;
  return {
    kind: 'histogram',
    name: metric.name,
    help: metric.help,
    type: metric.type,
    unit: metric.unit,
    bounds,
    createdMs,
    series: walk(read),
  };
}

/** The access of a metric whose entries `familyOf` reads into its family. */
function accessOf<K extends 'scalar' | 'histogram', E, F extends ScalarFamily | HistogramFamily>(
  kind: K,
  metric: StoredMetric,
  client: MetricsClient,
  reader: StorageReader,
  familyOf: (metric: StoredMetric, walk: EntryWalk<E>, needs: ModelNeeds, source: ExemplarSource | undefined) => F,
): StoredAccess<K, E, F> {
  const walk: EntryWalk<E> = (read) => walkOf(metric, client, reader, read);
  return {
    kind,
    metric,
    start: (signal) => startCollect(metric, signal),
    series: () => walk((entry) => entry),
    family: (_collected, needs, source) => familyOf(metric, walk, needs, source),
  };
}

/**
 * How to read `metric` through its storage, when it is `client`'s Counter, Gauge or Histogram as
 * they ship (or as `withExemplars` extends them) and `reader` knows the client's storage: undefined
 * otherwise. Summaries are never read so: reading one means compressing its estimators and
 * dropping aged windows, which only the client's own `get()` may do.
 */
export function storedAccess(metric: Record<string, unknown>, client: MetricsClient, reader: StorageReader): AnyStoredAccess | undefined {
  const { Counter, Gauge, Histogram } = client.module;
  const stored = metric as unknown as StoredMetric;
  if (readsAs(metric, Counter, ['get'], client, reader) || readsAs(metric, Gauge, ['get'], client, reader)) {
    return accessOf('scalar', stored, client, reader, scalarFamily);
  }
  if (Array.isArray(metric.upperBounds) && readsAs(metric, Histogram, ['get', 'getForPromString'], client, reader)) {
    return accessOf('histogram', stored, client, reader, histogramFamily);
  }
  return undefined;
}
