/**
 * The family writers of the protobuf exposition: the same walk over the same series as the text
 * writers (`families.ts`), one series per step, each series encoded into one `Metric` message as
 * it is read, and the family framed around them once its last series is read. Names go through
 * the scrape's {@link NameWriter} as in text; label values are converted as in text, without text
 * escaping (protobuf strings need none).
 *
 * What protobuf adds: the native buckets of the histograms this package made with native
 * histograms on, beside their classic buckets (as client_golang writes both), every exemplar
 * (classic bucket exemplars in their buckets, and the same in `exemplars` when native buckets are
 * written, where Prometheus reads a native histogram's), and the start timestamps of the counters
 * and histograms this package made.
 */
import { hostText, readLabel, sampleNumber } from './dialect';
import { fromPromClient, withinExemplarLimit, type Exemplar, type SeriesExemplars, type SeriesNative } from './exemplars';
import type { FamilyContext } from './families';
import type { HistogramMetric, HistogramSeries, LabelSet, PublicMetric, PublicMetricData, ScalarMetric, ScalarSeries } from './internals';
import type { NameWriter } from './name-writer';
import {
  encodeMetric,
  frameFamily,
  type ProtoBucket,
  type ProtoExemplar,
  type ProtoLabel,
  type ProtoMetricType,
  type ProtoQuantile,
} from './protobuf';

/** The registry's default labels, converted once per scrape: the host's name, and the pair written. */
export type ProtoDefaults = ReadonlyArray<readonly [name: string, pair: ProtoLabel]>;

/** The default labels as protobuf label pairs, names written by the scrape's writer. */
export function protoDefaults(defaults: LabelSet | undefined, names: NameWriter): ProtoDefaults {
  if (defaults === undefined) return [];
  return Object.keys(defaults).map((name) => [name, { name: names.label(name), value: hostText(readLabel(defaults, name)) }] as const);
}

/**
 * A series' labels, then the defaults it lacks, as text writes them; the `reserved` label (`le`,
 * `quantile`) is left out. With `nullishDefaults` (`@prometheus-io/client`), an own label that is
 * null or undefined takes its default, as that client's text does.
 */
function protoLabels(
  names: NameWriter,
  labels: LabelSet | null | undefined,
  defaults: ProtoDefaults,
  reserved?: string,
  nullishDefaults = false,
): ProtoLabel[] {
  const pairs: ProtoLabel[] = [];
  const own = labels ?? {};
  for (const name in own) {
    if (!Object.prototype.hasOwnProperty.call(own, name) || name === reserved) continue;
    const value = readLabel(own, name);
    const inPlace = nullishDefaults && (value === null || value === undefined) ? defaults.find(([d]) => d === name) : undefined;
    pairs.push(inPlace !== undefined ? inPlace[1] : { name: names.label(name), value: hostText(value) });
  }
  for (const [name, pair] of defaults) {
    if (!Object.prototype.hasOwnProperty.call(own, name)) pairs.push(pair);
  }
  return pairs;
}

/** Our exemplar as a protobuf one, or undefined when it cannot be written (its labels past OpenMetrics' 128 characters, as Prometheus refuses them). */
function protoExemplar(exemplar: Exemplar | undefined, names: NameWriter): ProtoExemplar | undefined {
  if (!withinExemplarLimit(exemplar)) return undefined;
  const labels = Object.keys(exemplar.labels).map((name) => ({
    name: names.label(name),
    value: hostText(readLabel(exemplar.labels, name)),
  }));
  const { timestamp } = exemplar;
  return {
    labels,
    value: exemplar.value,
    ...(typeof timestamp === 'number' && Number.isFinite(timestamp) && { timestampMs: timestamp * 1000 }),
  };
}

function exemplarOf(
  lookup: SeriesExemplars | undefined,
  labels: LabelSet | undefined,
  bound: number | undefined,
  stored: unknown,
): Exemplar | undefined {
  return (lookup !== undefined && labels !== undefined ? lookup(labels, bound) : undefined) ?? fromPromClient(stored);
}

/** What the protobuf writers need beyond the text writers' context. */
export interface ProtoContext extends FamilyContext {
  /** The registry's default labels, converted. */
  readonly protoDefaults: ProtoDefaults;
  /** Whether an own label that is null or undefined takes its default (`@prometheus-io/client`). */
  readonly protoNullishDefaults: boolean;
}

/** A family's encoded series and their length together, added up as they are encoded. */
class EncodedSeries {
  readonly list: Buffer[] = [];
  bytes = 0;

  push(encoded: Buffer): void {
    this.list.push(encoded);
    this.bytes += encoded.length;
  }
}

/**
 * Frames the family around its encoded series and puts it in the sink, one series per step: the
 * copies of 100 000 series into the output blocks are a step of their own each, not one long
 * turn. A family without series is left out, as client_golang's gathering leaves it out: protobuf
 * has no use for its HELP alone.
 */
async function putFamily(context: ProtoContext, name: string, help: unknown, type: ProtoMetricType, series: EncodedSeries): Promise<void> {
  if (series.list.length === 0) return;
  for (const piece of frameFamily({ name, help: hostText(help), type }, series.list, series.bytes)) {
    context.sink.putBytes(piece);
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
}

/**
 * A count as protobuf's unsigned integers take it. A client's counts always are one; a count
 * that is not a whole number >= 0 (only a host's own metric can answer one from `get()`) is
 * written rounded, NaN and negatives as 0, rather than failing the scrape.
 */
function countOf(value: number): number {
  if (Number.isSafeInteger(value) && value >= 0) return value;
  if (!(value > 0)) return 0;
  return Math.min(Math.round(value), Number.MAX_SAFE_INTEGER);
}

/** A Counter or Gauge: one `Metric` per series; a counter of this package's with its exemplar and start timestamp. */
export async function writeScalarProto(
  context: ProtoContext,
  metric: ScalarMetric,
  all: Iterator<ScalarSeries | undefined>,
): Promise<void> {
  const { names, protoDefaults: defaults } = context;
  const isCounter = metric.type === 'counter';
  const lookup = isCounter ? context.exemplars?.forMetric(metric) : undefined;
  const createdMs = isCounter ? context.exemplars?.createdMs?.(metric) : undefined;
  const encoded = new EncodedSeries();
  for (let next = all.next(); next.done !== true; next = all.next()) {
    const series = next.value;
    if (series !== undefined) {
      const labels = protoLabels(names, series.labels, defaults, undefined, context.protoNullishDefaults);
      const value = sampleNumber(series.value);
      if (isCounter) {
        const exemplar = protoExemplar(exemplarOf(lookup, series.labels, undefined, series.exemplar), names);
        encoded.push(encodeMetric({ labels, counter: { value, exemplar, createdMs } }));
      } else if (metric.type === 'gauge') {
        encoded.push(encodeMetric({ labels, gauge: { value } }));
      } else {
        encoded.push(encodeMetric({ labels, untyped: { value } }));
      }
    }
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
  const type = isCounter ? 'counter' : metric.type === 'gauge' ? 'gauge' : 'untyped';
  await putFamily(context, names.metric(metric.name), metric.help, type, encoded);
}

/**
 * A Histogram: cumulative classic buckets (with their exemplars), sum and count; with native
 * buckets when this package keeps them for the series and they count the same observations as
 * the classic ones (a series reset or observed around the package is written classic only).
 */
export async function writeHistogramProto(
  context: ProtoContext,
  metric: HistogramMetric,
  all: Iterator<HistogramSeries | undefined>,
): Promise<void> {
  const { names, protoDefaults: defaults } = context;
  const lookup = context.exemplars?.forMetric(metric);
  const native: SeriesNative | undefined = context.exemplars?.nativeOf?.(metric);
  const createdMs = context.exemplars?.createdMs?.(metric);
  const bounds = metric.upperBounds;
  const keys = bounds.map(String);
  const encoded = new EncodedSeries();
  for (let next = all.next(); next.done !== true; next = all.next()) {
    const series = next.value;
    if (series !== undefined) {
      const { labels: raw } = series;
      const stored = series.bucketExemplars;
      const buckets: ProtoBucket[] = [];
      const exemplars: ProtoExemplar[] = [];
      let cumulative = 0;
      for (let i = 0; i < keys.length; i += 1) {
        cumulative += countOf(sampleNumber(series.bucketValues[keys[i]!]));
        const exemplar = protoExemplar(exemplarOf(lookup, raw, bounds[i], stored?.[keys[i]!]), names);
        if (exemplar !== undefined) exemplars.push(exemplar);
        buckets.push({ upperBound: bounds[i]!, cumulativeCount: cumulative, exemplar });
      }
      const count = countOf(sampleNumber(series.count));
      const infinity = protoExemplar(exemplarOf(lookup, raw, Infinity, stored?.['-1']), names);
      if (infinity !== undefined) {
        exemplars.push(infinity);
        buckets.push({ upperBound: Infinity, cumulativeCount: count, exemplar: infinity });
      }
      const snapshot = native?.(raw);
      // The same observations, in the same order, give the same count and the bit-identical sum.
      const withNative = snapshot !== undefined && snapshot.count === count && Object.is(snapshot.sum, sampleNumber(series.sum));
      encoded.push(
        encodeMetric({
          labels: protoLabels(names, raw, defaults),
          histogram: {
            count,
            sum: sampleNumber(series.sum),
            buckets,
            createdMs,
            ...(withNative && { native: snapshot, exemplars }),
          },
        }),
      );
    }
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
  await putFamily(context, names.metric(metric.name), metric.help, 'histogram', encoded);
}

/** One label set's samples of a histogram or summary read through `get()`. */
interface Group {
  readonly labels: ProtoLabel[];
  buckets: ProtoBucket[];
  quantiles: ProtoQuantile[];
  sum: number;
  count: number | undefined;
}

/**
 * A value's labels and shared labels as one plain set, each value read through `readLabel` (a
 * getter that throws gives `[unprintable]`, as in text) and a set whose keys cannot be listed
 * taken as empty: a host's odd label object never fails the scrape.
 */
function readLabels(...sets: ReadonlyArray<LabelSet | null | undefined>): Record<string, unknown> {
  const merged = Object.create(null) as Record<string, unknown>;
  for (const set of sets) {
    if (set === null || set === undefined) continue;
    let names: string[];
    try {
      names = Object.keys(set);
    } catch {
      names = [];
    }
    for (const name of names) merged[name] = readLabel(set, name);
  }
  return merged;
}

/** The key of a label set, for grouping a histogram's or summary's samples by series. */
function groupKey(labels: readonly ProtoLabel[]): string {
  return labels
    .map(({ name, value }) => `${name}\u0001${value}`)
    .sort()
    .join('\u0002');
}

/**
 * Any other metric, from what its public `get()` returned: counters, gauges and unknown types one
 * `Metric` per value; a histogram's or summary's samples (`_bucket` with `le`, `quantile`, `_sum`,
 * `_count`) grouped back into one `Metric` per series. A counter's, gauge's or unknown type's value
 * that names a sample of its own (`metricName`), which text writes under that name, is written as
 * an untyped family of that name after this one, as text's reader takes it.
 */
export async function writePublicProto(context: ProtoContext, _metric: PublicMetric, data: PublicMetricData): Promise<void> {
  const { names, protoDefaults: defaults } = context;
  const family = names.metric(data.name);
  const type: ProtoMetricType =
    data.type === 'counter' || data.type === 'gauge' || data.type === 'histogram' || data.type === 'summary' ? data.type : 'untyped';
  const encoded = new EncodedSeries();
  const groups = new Map<string, Group>();
  const elsewhere = new Map<string, EncodedSeries>();
  for (const value of data.values ?? []) {
    const own = readLabels(value.labels, value.sharedLabels);
    const number = sampleNumber(value.value);
    if (type === 'histogram' || type === 'summary') {
      const reserved = type === 'histogram' ? 'le' : 'quantile';
      const labels = protoLabels(names, own, defaults, reserved, context.protoNullishDefaults);
      const key = groupKey(labels);
      let group = groups.get(key);
      if (group === undefined) {
        group = { labels, buckets: [], quantiles: [], sum: 0, count: undefined };
        groups.set(key, group);
      }
      const sample = value.metricName === undefined ? '' : hostText(value.metricName);
      const marker = hostText(readLabel(own, reserved));
      if (sample.endsWith('_sum')) group.sum = number;
      else if (sample.endsWith('_count')) group.count = number;
      else if (type === 'histogram') {
        const bound = marker === '+Inf' ? Infinity : Number(marker);
        if (bound === Infinity) group.count ??= number;
        else if (!Number.isNaN(bound)) group.buckets.push({ upperBound: bound, cumulativeCount: countOf(number) });
      } else if (Object.prototype.hasOwnProperty.call(own, 'quantile')) {
        group.quantiles.push({ quantile: Number(marker), value: number });
      }
    } else if (value.metricName !== undefined && names.metric(value.metricName) !== family) {
      const sample = names.metric(value.metricName);
      const list = elsewhere.get(sample) ?? new EncodedSeries();
      list.push(
        encodeMetric({ labels: protoLabels(names, own, defaults, undefined, context.protoNullishDefaults), untyped: { value: number } }),
      );
      elsewhere.set(sample, list);
    } else {
      const labels = protoLabels(names, own, defaults, undefined, context.protoNullishDefaults);
      if (type === 'counter') encoded.push(encodeMetric({ labels, counter: { value: number } }));
      else if (type === 'gauge') encoded.push(encodeMetric({ labels, gauge: { value: number } }));
      else encoded.push(encodeMetric({ labels, untyped: { value: number } }));
    }
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
  for (const group of groups.values()) {
    const count = countOf(group.count ?? 0);
    if (type === 'histogram') {
      encoded.push(encodeMetric({ labels: group.labels, histogram: { count, sum: group.sum, buckets: group.buckets } }));
    } else {
      encoded.push(encodeMetric({ labels: group.labels, summary: { count, sum: group.sum, quantiles: group.quantiles } }));
    }
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
  await putFamily(context, family, data.help, type, encoded);
  for (const [sample, metrics] of elsewhere) await putFamily(context, sample, data.help, 'untyped', metrics);
}
