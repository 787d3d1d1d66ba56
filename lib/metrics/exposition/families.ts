/**
 * One writer per kind of metric. Each writes its family's `# HELP` / `# TYPE` (and in OpenMetrics
 * `# UNIT`) lines, then one series per step, yielding through `context.step()` when the slice is
 * used up. A series is read in one step, so its samples (a histogram's buckets, sum and count) are
 * consistent with each other even when the host observes values between two slices.
 */
import type { Dialect } from './dialect';
import { hostText, labelValue } from './dialect';
import { exemplarSuffix, fromPromClient, type Exemplar, type ExemplarSource, type SeriesExemplars } from './exemplars';
import type { HistogramMetric, HistogramSeries, PublicMetric, PublicMetricData, ScalarMetric, ScalarSeries } from './internals';
import {
  braces,
  joinLabels,
  labelText,
  mergedLabelText,
  missingDefaults,
  putLabels,
  putMissingDefaults,
  type DefaultPairs,
} from './labels';
import type { NameWriter } from './name-writer';
import type { ChunkSink } from './sink';

/** What every family writer needs. */
export interface FamilyContext {
  /** Where the lines go. */
  readonly sink: ChunkSink;
  /** The format being written. */
  readonly dialect: Dialect;
  /** The registry's default labels, written once. */
  readonly defaults: DefaultPairs;
  /** How this scrape writes metric and label names. */
  readonly names: NameWriter;
  /** Exemplars kept outside prom-client, for OpenMetrics answers. */
  readonly exemplars: ExemplarSource | undefined;
  /**
   * The default labels again when the registry's client writes a default in place of an own label
   * that is null or undefined (`@prometheus-io/client`); undefined for prom-client, which does not.
   */
  readonly nullishDefaults: DefaultPairs | undefined;
  /** Call after each series: a promise to await when the slice is used up (it rejects once the scrape is abandoned). */
  readonly step: () => Promise<void> | undefined;
}

const UNIT = /^[a-zA-Z0-9_:]+$/;

/** `# UNIT` for a unit given in the metric's configuration, when OpenMetrics allows it: the family name must end in `_<unit>`. */
function unitLine(family: string, unit: unknown): string {
  if (typeof unit !== 'string' || !UNIT.test(unit) || !family.endsWith(`_${unit}`)) return '';
  return `# UNIT ${family} ${unit}\n`;
}

/**
 * Writes the family's `# HELP`, `# TYPE` (and `# UNIT`) lines for `family`, a name already written
 * by the scrape's {@link NameWriter}. HELP and type are whatever the host gave, converted and escaped.
 */
function writeHeader(context: FamilyContext, family: string, help: unknown, type: unknown, unit: unknown): void {
  const { dialect } = context;
  const unitText = dialect.openMetrics ? unitLine(family, unit) : '';
  context.sink.put(`# HELP ${family} ${dialect.help(hostText(help))}\n# TYPE ${family} ${dialect.type(hostText(type))}\n${unitText}`);
}

/** The exemplar lookup of a family in an OpenMetrics answer, or undefined. */
function lookupOf(context: FamilyContext, metric: object): SeriesExemplars | undefined {
  return context.dialect.openMetrics ? context.exemplars?.forMetric(metric) : undefined;
}

function exemplarOf(
  lookup: SeriesExemplars | undefined,
  labels: ScalarSeries['labels'],
  bound: number | undefined,
  stored: unknown,
): Exemplar | undefined {
  return (lookup !== undefined && labels !== undefined ? lookup(labels, bound) : undefined) ?? fromPromClient(stored);
}

/**
 * A Counter or Gauge: one sample per series, own labels first, then the defaults it lacks. Written
 * as pieces, without building the line: most pieces are strings the metric already holds.
 */
export async function writeScalar(context: FamilyContext, metric: ScalarMetric, all: Iterator<ScalarSeries | undefined>): Promise<void> {
  const { dialect, sink, defaults, names } = context;
  const isCounter = metric.type === 'counter';
  const family = names.metric(isCounter ? dialect.counterFamily(hostText(metric.name)) : metric.name);
  writeHeader(context, family, metric.help, metric.type, metric.unit);
  const sample = isCounter ? dialect.counterSample(family) : family;
  const exemplars = isCounter && dialect.openMetrics;
  const lookup = exemplars ? lookupOf(context, metric) : undefined;
  for (let next = all.next(); next.done !== true; next = all.next()) {
    const series = next.value;
    if (series !== undefined) {
      const { labels } = series;
      sink.put(sample);
      let separator = putLabels(sink, names, labels, '{', context.nullishDefaults);
      if (defaults.length !== 0) separator = putMissingDefaults(sink, defaults, labels, separator);
      sink.put(separator === '{' ? ' ' : '} ');
      sink.put(dialect.value(series.value));
      if (exemplars) sink.put(exemplarSuffix(exemplarOf(lookup, labels, undefined, series.exemplar), names));
      sink.put('\n');
    }
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
}

/** The fixed parts of a histogram's lines, built once per scrape. */
interface HistogramShape {
  readonly bounds: readonly number[];
  /** Each bound as the property name prom-client's bucketValues uses for it. */
  readonly keys: readonly string[];
  /** `name_bucket{le="0.005"` per bound. */
  readonly prefixes: readonly string[];
  readonly infinity: string;
  /** The `_sum` and `_count` sample names, each after the newline that ends the line before. */
  readonly sum: string;
  readonly count: string;
}

function histogramShape(name: string, bounds: readonly number[]): HistogramShape {
  return {
    bounds,
    keys: bounds.map(String),
    prefixes: bounds.map((bound) => `${name}_bucket{le="${labelValue(bound)}"`),
    infinity: `${name}_bucket{le="+Inf"`,
    sum: `\n${name}_sum`,
    count: `\n${name}_count`,
  };
}

/**
 * Puts one histogram series' lines. prom-client writes bucket labels as `le`, the defaults the
 * series lacks, then the series' labels; `_sum` and `_count` as the defaults it lacks, then its
 * labels. The label text is built once per series and shared by its lines.
 */
function putHistogramSeries(
  context: FamilyContext,
  shape: HistogramShape,
  series: HistogramSeries,
  lookup: SeriesExemplars | undefined,
): void {
  const { dialect, defaults, sink, names } = context;
  const { labels } = series;
  const own = labelText(labels, names);
  const bucketRest = joinLabels(defaults.length === 0 ? '' : missingDefaults(defaults, labels, 'le'), own);
  const bucketTail = bucketRest === '' ? '} ' : `,${bucketRest}} `;
  const stored = series.bucketExemplars;
  const exemplars = dialect.openMetrics && (lookup !== undefined || stored !== undefined);
  let cumulative = 0;
  for (let i = 0; i < shape.keys.length; i += 1) {
    cumulative += series.bucketValues[shape.keys[i]!]!;
    sink.put(shape.prefixes[i]!);
    sink.put(bucketTail);
    sink.put(dialect.value(cumulative));
    if (exemplars) sink.put(exemplarSuffix(exemplarOf(lookup, labels, shape.bounds[i], stored?.[shape.keys[i]!]), names));
    sink.put('\n');
  }
  sink.put(shape.infinity);
  sink.put(bucketTail);
  sink.put(dialect.value(series.count));
  if (exemplars) sink.put(exemplarSuffix(exemplarOf(lookup, labels, Infinity, stored?.['-1']), names));
  const plain = `${braces(joinLabels(defaults.length === 0 ? '' : missingDefaults(defaults, labels), own))} `;
  sink.put(shape.sum);
  sink.put(plain);
  sink.put(dialect.value(series.sum));
  sink.put(shape.count);
  sink.put(plain);
  sink.put(dialect.value(series.count));
  sink.put('\n');
}

/** A Histogram: cumulative buckets, `+Inf`, `_sum` and `_count` per series. */
export async function writeHistogram(
  context: FamilyContext,
  metric: HistogramMetric,
  all: Iterator<HistogramSeries | undefined>,
): Promise<void> {
  const name = context.names.metric(metric.name);
  writeHeader(context, name, metric.help, metric.type, metric.unit);
  const shape = histogramShape(name, metric.upperBounds);
  const lookup = lookupOf(context, metric);
  for (let next = all.next(); next.done !== true; next = all.next()) {
    if (next.value !== undefined) putHistogramSeries(context, shape, next.value, lookup);
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
}

/**
 * Any other metric, from what its public `get()` (or `getForPromString()`) returned: each value
 * written as prom-client's formatter writes it. In OpenMetrics a counter's sample gets `_total`
 * unless it already has it, and exemplars are written only where OpenMetrics allows them.
 */
export async function writePublic(context: FamilyContext, metric: PublicMetric, data: PublicMetricData): Promise<void> {
  const { dialect, sink, defaults, names } = context;
  const isCounter = data.type === 'counter';
  const family = names.metric(isCounter ? dialect.counterFamily(hostText(data.name)) : data.name);
  writeHeader(context, family, data.help, data.type, metric.unit);
  for (const value of data.values ?? []) {
    let sample = value.metricName === undefined ? family : names.metric(value.metricName);
    if (isCounter && dialect.openMetrics && !sample.endsWith('_total')) sample += '_total';
    const labels = mergedLabelText(value.labels ?? {}, defaults, value.sharedLabels ?? {}, names, context.nullishDefaults);
    let line = `${sample}${braces(labels)} ${dialect.value(value.value)}`;
    const exemplarAllowed = isCounter || (data.type === 'histogram' && sample.endsWith('_bucket'));
    if (dialect.openMetrics && exemplarAllowed) line += exemplarSuffix(fromPromClient(value.exemplar), names);
    sink.put(`${line}\n`);
    const pause = context.step();
    if (pause !== undefined) await pause;
  }
}
