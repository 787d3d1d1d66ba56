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
 */
import type { Exemplar, ExemplarSource, SeriesExemplars } from './exposition';
import { CARRIED_EXEMPLARS_KEY, type LabelSet } from './exposition/internals';

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

/** A metric class of prom-client's, as {@link withExemplars} extends it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a class extended at run time takes any[] (TS2545)
type MetricClass<M extends object> = new (...args: any[]) => M;

/**
 * A subclass of prom-client's `Base` (Counter or Histogram) whose instances carry their exemplars:
 * the metric is ours from its creation, so nothing is written into an object someone else made.
 *
 * @param bounds - The histogram's bucket upper bounds (`+Inf` excluded); empty for a counter.
 * @param owner - What creates the metric, answered by {@link ownerOf} to whoever finds the metric.
 */
export function withExemplars<M extends object>(Base: MetricClass<M>, bounds: readonly number[], owner?: unknown): MetricClass<M> {
  return class extends (Base as MetricClass<object>) {
    readonly [CARRIED_EXEMPLARS_KEY] = new MetricExemplars(bounds, owner);
  } as MetricClass<M>;
}

/** The exemplars `metric` carries when {@link withExemplars} made it, else `undefined`. */
export function exemplarsOf(metric: object): MetricExemplars | undefined {
  let carried: unknown;
  try {
    carried = (metric as { readonly [CARRIED_EXEMPLARS_KEY]?: unknown })[CARRIED_EXEMPLARS_KEY];
  } catch {
    // A host's metric behind a proxy that throws on reads it does not know: not ours.
    return undefined;
  }
  return carried instanceof MetricExemplars ? carried : undefined;
}

/** The `owner` given to {@link withExemplars} for `metric`, or `undefined` for any other metric. */
export function ownerOf(metric: object | undefined): unknown {
  return metric === undefined ? undefined : exemplarsOf(metric)?.owner;
}

/** The renderer's exemplars: those each metric of the registry carries. */
export const CARRIED_EXEMPLARS: ExemplarSource = { forMetric: (metric) => exemplarsOf(metric)?.lookup };
