/**
 * Exemplars, written in OpenMetrics answers only (text 0.0.4 has no syntax for them). Two sources:
 * prom-client's own (a Counter or Histogram created with `enableExemplars`, which prom-client
 * allows only on OpenMetrics registries), and an {@link ExemplarSource} the renderer is given, the
 * seam through which exemplars kept outside prom-client (per series, for any registry) reach the
 * answer. A source's exemplar wins over prom-client's for the same sample.
 */
import type { LabelSet } from './internals';
import type { NativeSnapshot } from '../native-histogram';
import { labelText } from './labels';
import { hostText, OPENMETRICS, readLabel } from './dialect';
import { isLegacyLabelName, type NameWriter } from './name-writer';

/** One exemplar: the labels that identify it (a trace or cycle id), the observed value, and when. */
export interface Exemplar {
  /** Its labels. OpenMetrics allows at most 128 characters of names and values together. */
  readonly labels: LabelSet;
  /** The observed value (for a counter, the increment). */
  readonly value: number;
  /** When it was observed, in seconds since the epoch; omitted from the answer when undefined. */
  readonly timestamp?: number;
}

/**
 * The exemplars of one metric's series. `upperBound` is the bucket's upper bound for a histogram
 * bucket sample (`Infinity` for `+Inf`) and `undefined` for a counter's sample.
 */
export type SeriesExemplars = (labels: LabelSet, upperBound: number | undefined) => Exemplar | undefined;

/** Where exemplars kept outside prom-client come from. */
export interface ExemplarSource {
  /**
   * The exemplar lookup of `metric` (a prom-client Counter or Histogram of the registry), or
   * `undefined` when it has none. Asked once per family per OpenMetrics scrape, so a family without
   * exemplars costs nothing per series.
   */
  forMetric(metric: object): SeriesExemplars | undefined;
  /**
   * The native buckets of `metric`'s series (a histogram's), by the series' labels, or undefined
   * when it keeps none. Asked once per family per protobuf scrape.
   */
  nativeOf?(metric: object): SeriesNative | undefined;
  /**
   * When `metric` was created, in milliseconds since the epoch, for the start timestamps of its
   * counter and histogram series in protobuf answers (their counts were 0 from then on), or
   * undefined when that is not known (a host's metric).
   */
  createdMs?(metric: object): number | undefined;
}

/** One metric's native buckets per series: the series' snapshot, or undefined when it has none. */
export type SeriesNative = (labels: LabelSet | undefined) => NativeSnapshot | undefined;

/** The OpenMetrics limit on an exemplar's label names and values together, in characters. */
export const EXEMPLAR_LABEL_LIMIT = 128;

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
export function fromPromClient(stored: unknown): Exemplar | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { labelSet, value, timestamp } = stored as { labelSet?: unknown; value?: unknown; timestamp?: unknown };
  if (typeof labelSet !== 'object' || labelSet === null || typeof value !== 'number') return undefined;
  return { labels: labelSet as LabelSet, value, timestamp: typeof timestamp === 'number' ? timestamp : undefined };
}

/** Whether `exemplar` can be written: its label names are valid and, with their values, within 128 characters. */
export function withinExemplarLimit(exemplar: Exemplar | undefined): exemplar is Exemplar {
  return exemplar !== undefined && labelCharacters(exemplar.labels) <= EXEMPLAR_LABEL_LIMIT;
}

/**
 * ` # {labels} value timestamp` for a sample line, or `''` when there is no exemplar or its labels
 * would make the answer invalid (an invalid name, past the 128-character limit). A timestamp that
 * is not a finite number is left out.
 */
export function exemplarSuffix(exemplar: Exemplar | undefined, names: NameWriter): string {
  if (!withinExemplarLimit(exemplar)) return '';
  const { timestamp } = exemplar;
  const time = typeof timestamp === 'number' && Number.isFinite(timestamp) ? ` ${String(timestamp)}` : '';
  return ` # {${labelText(exemplar.labels, names)}} ${OPENMETRICS.value(exemplar.value)}${time}`;
}
