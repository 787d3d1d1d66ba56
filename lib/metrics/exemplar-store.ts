/**
 * Exemplars that lead from a metric to the reconciliation cycle behind it, kept beside prom-client.
 *
 * prom-client keeps exemplars only on registries whose content type is OpenMetrics, and hosts use
 * text registries (the router negotiates OpenMetrics per request instead). So the controller
 * metrics record their exemplars here: one store per registry, found by the metrics router through
 * {@link exemplarSourceOf}, so `createMetricsRouter(registry)` keeps its signature. The store keeps
 * the last exemplar per series (and per histogram bucket, the bucket the observation fell in):
 * recording is a map lookup and an array write, on the host's path.
 */
import type { Exemplar, ExemplarSource, SeriesExemplars } from './exposition';
import type { LabelSet } from './exposition/internals';

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
 * {@link ExemplarStore.record} instead of the labels.
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
class MetricExemplars {
  private readonly series = new Map<string, Array<Exemplar | undefined>>();
  /** A histogram's bucket upper bounds, `+Inf` excluded; empty for a counter. */
  private readonly bounds: readonly number[];
  private readonly slotOfBound: ReadonlyMap<number, number>;

  constructor(bounds: readonly number[]) {
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

  record(series: LabelSet | string | undefined, exemplar: Exemplar): void {
    const key = typeof series === 'string' ? series : seriesKey(series);
    let slots = this.series.get(key);
    if (slots === undefined) {
      slots = new Array<Exemplar | undefined>(this.bounds.length === 0 ? 1 : this.bounds.length + 1);
      this.series.set(key, slots);
    }
    slots[this.bounds.length === 0 ? 0 : this.slotOf(exemplar.value)] = exemplar;
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

/** The exemplars of one registry's metrics. */
export class ExemplarStore implements ExemplarSource {
  private readonly metrics = new WeakMap<object, MetricExemplars>();

  /** {@inheritDoc ExemplarSource.forMetric} */
  forMetric(metric: object): SeriesExemplars | undefined {
    return this.metrics.get(metric)?.lookup;
  }

  /**
   * Keeps exemplars for `metric`: a counter (no `bounds`) or a histogram with these bucket upper
   * bounds. Called once per metric, at registration.
   */
  track(metric: object, bounds: readonly number[] = []): void {
    this.metrics.set(metric, new MetricExemplars(bounds));
  }

  /**
   * Records that `value` was observed (or added, for a counter) on `metric`'s series (its labels,
   * or their {@link seriesKey}) by the cycle `correlationId`, now. An id longer than
   * {@link MAX_CORRELATION_ID_LENGTH} is not recorded; neither is anything for a metric that is not
   * tracked.
   */
  record(metric: object, series: LabelSet | string | undefined, value: number, correlationId: string): void {
    const exemplars = this.metrics.get(metric);
    if (exemplars === undefined || !fitsExemplar(correlationId)) return;
    exemplars.record(series, { labels: { [CORRELATION_LABEL]: correlationId }, value, timestamp: Date.now() / 1000 });
  }

  /** Forgets the exemplars of one series of `metric`, when that series is removed. */
  forget(metric: object, labels: LabelSet | undefined): void {
    this.metrics.get(metric)?.forget(labels);
  }
}

const stores = new WeakMap<object, ExemplarStore>();

/** The exemplar store of `registry`, created on first use. */
export function exemplarStoreOf(registry: object): ExemplarStore {
  let store = stores.get(registry);
  if (store === undefined) {
    store = new ExemplarStore();
    stores.set(registry, store);
  }
  return store;
}

/** The exemplars recorded for `registry`'s metrics, or `undefined` when none were ever kept. */
export function exemplarSourceOf(registry: object): ExemplarSource | undefined {
  return stores.get(registry);
}
