/**
 * The text encoder: the model written as Prometheus text 0.0.4 (byte for byte what the registry's
 * own client writes in `registry.metrics()`) or OpenMetrics 1.0.0, as its {@link Dialect} says.
 * Each family gets its `# HELP` / `# TYPE` (and in OpenMetrics `# UNIT`) lines, then its series,
 * each written in the step that reads it, so a histogram's buckets, sum and count are consistent
 * with each other even when the host observes values between two slices.
 *
 * Labels are written as prom-client writes them: it merges the registry's default labels into each
 * sample's own (`{...own, ...defaults, ...own}`: own names first in their order, own values win,
 * then the defaults the sample lacks), drops the names a `get()` sample's series labels
 * (`sharedLabels`) carry, and appends those. The helpers below produce the same text without
 * building the merged objects. Every name goes through the scrape's {@link NameWriter} and every
 * value through `labelValue`, whatever the host put there. Written as pieces, without building the
 * line where it can: most pieces are strings the metrics already hold.
 */
import { dialectOf, hostText, labelValue, OPENMETRICS, readLabel, type Dialect, type TextFormat } from './dialect';
import type {
  Encoder,
  Exemplar,
  Family,
  HistogramSeries,
  LabelSet,
  ModelNeeds,
  RegistryModel,
  Sample,
  ScalarSeries,
  Series,
} from './model';
import type { NameWriter } from './name-writer';
import type { ChunkSink, RenderedBody } from './sink';

const hasOwn = Object.prototype.hasOwnProperty;

/** The registry's default labels, each already written as `name="value"` (the name as the host gave it first). */
type DefaultPairs = ReadonlyArray<readonly [name: string, pair: string]>;

/** `name="value"`, for the label `name` of `labels`. */
function pairOf(names: NameWriter, labels: LabelSet, name: string): string {
  return `${names.label(name)}="${labelValue(readLabel(labels, name))}"`;
}

/** Writes the default labels once per scrape. */
function defaultPairs(defaults: LabelSet | undefined, names: NameWriter): DefaultPairs {
  if (defaults === undefined) return [];
  return Object.keys(defaults).map((name) => [name, pairOf(names, defaults, name)] as const);
}

/** `name="value"` pairs of `labels`, comma-joined in the set's own order; `''` for none. */
function labelText(labels: LabelSet | null | undefined, names: NameWriter): string {
  if (labels === null || labels === undefined) return '';
  let text = '';
  for (const name of Object.keys(labels)) {
    const pair = pairOf(names, labels, name);
    text = text === '' ? pair : `${text},${pair}`;
  }
  return text;
}

/**
 * The default labels that `labels` does not have and that are not `reserved` (the `le` or
 * `quantile` a sample adds), comma-joined; `''` for none.
 */
function missingDefaults(defaults: DefaultPairs, labels: LabelSet | null | undefined, reserved?: string): string {
  let text = '';
  for (let i = 0; i < defaults.length; i += 1) {
    const [name, pair] = defaults[i]!;
    if (name === reserved || (labels !== null && labels !== undefined && hasOwn.call(labels, name))) continue;
    text = text === '' ? pair : `${text},${pair}`;
  }
  return text;
}

/**
 * The default pair that stands for `labels`' own `name` when `nullishDefaults` (the registry's
 * defaults, given only where the client fills a default into a label that is `null` or
 * `undefined`, in its place: {@link RegistryModel.nullishDefaults}) has one and the value is
 * nullish; else undefined.
 */
function defaultInPlace(nullishDefaults: DefaultPairs | undefined, labels: LabelSet, name: string): string | undefined {
  if (nullishDefaults === undefined || nullishDefaults.length === 0) return undefined;
  const value = readLabel(labels, name);
  if (value !== null && value !== undefined) return undefined;
  for (const [defaultName, pair] of nullishDefaults) if (defaultName === name) return pair;
  return undefined;
}

/**
 * Puts `labels`' pairs into `sink`, the first after `separator` (`{` to open the set), the others
 * after commas. Returns the separator for what follows: still `separator` when nothing was put.
 * With `nullishDefaults`, a label whose value is null or undefined is written with its default.
 */
function putLabels(
  sink: ChunkSink,
  names: NameWriter,
  labels: LabelSet | null | undefined,
  separator: string,
  nullishDefaults: DefaultPairs | undefined,
): string {
  if (labels === null || labels === undefined) return separator;
  let next = separator;
  // for...in reads V8's enum cache without allocating a key array per series; own names only, as Object.entries.
  for (const name in labels) {
    if (!hasOwn.call(labels, name)) continue;
    sink.put(next);
    const inPlace = defaultInPlace(nullishDefaults, labels, name);
    if (inPlace !== undefined) {
      sink.put(inPlace);
    } else {
      sink.put(names.label(name));
      sink.put('="');
      sink.put(labelValue(readLabel(labels, name)));
      sink.put('"');
    }
    next = ',';
  }
  return next;
}

/** {@link missingDefaults}, put into `sink` the way {@link putLabels} puts labels. */
function putMissingDefaults(sink: ChunkSink, defaults: DefaultPairs, labels: LabelSet | null | undefined, separator: string): string {
  let next = separator;
  for (let i = 0; i < defaults.length; i += 1) {
    const [name, pair] = defaults[i]!;
    if (labels !== null && labels !== undefined && hasOwn.call(labels, name)) continue;
    sink.put(next);
    sink.put(pair);
    next = ',';
  }
  return next;
}

/** Joins label texts with commas, skipping empty ones. */
function joinLabels(first: string, second: string): string {
  if (second === '') return first;
  return first === '' ? second : `${first},${second}`;
}

/** `{labels}` or nothing. */
function braces(text: string): string {
  return text === '' ? '' : `{${text}}`;
}

/**
 * The general case, for samples read through a metric's public `get()`: `own` merged with the
 * defaults, minus the names in `shared`, then `shared`, exactly as prom-client's formatter does.
 */
function mergedLabelText(
  own: LabelSet | null | undefined,
  defaults: DefaultPairs,
  shared: LabelSet | null | undefined,
  names: NameWriter,
  nullishDefaults: DefaultPairs | undefined,
): string {
  const isShared = (name: string) => shared !== null && shared !== undefined && hasOwn.call(shared, name);
  let text = '';
  if (own !== null && own !== undefined) {
    for (const name of Object.keys(own)) {
      if (isShared(name)) continue;
      const pair = defaultInPlace(nullishDefaults, own, name) ?? pairOf(names, own, name);
      text = text === '' ? pair : `${text},${pair}`;
    }
  }
  for (let i = 0; i < defaults.length; i += 1) {
    const [name, pair] = defaults[i]!;
    if (isShared(name) || (own !== null && own !== undefined && hasOwn.call(own, name))) continue;
    text = text === '' ? pair : `${text},${pair}`;
  }
  return joinLabels(text, labelText(shared, names));
}

/**
 * ` # {labels} value timestamp` for a sample line (OpenMetrics only: text 0.0.4 has no syntax for
 * exemplars), or `''` when there is none. The model carries only exemplars an answer can carry. A
 * timestamp that is not a finite number is left out.
 */
function exemplarSuffix(exemplar: Exemplar | undefined, names: NameWriter): string {
  if (exemplar === undefined) return '';
  const { timestamp } = exemplar;
  const time = typeof timestamp === 'number' && Number.isFinite(timestamp) ? ` ${String(timestamp)}` : '';
  return ` # {${labelText(exemplar.labels, names)}} ${OPENMETRICS.value(exemplar.value)}${time}`;
}

const UNIT = /^[a-zA-Z0-9_:]+$/;

/** `# UNIT` for a unit given in the metric's configuration, when OpenMetrics allows it: the family name must end in `_<unit>`. */
function unitLine(family: string, unit: unknown): string {
  if (typeof unit !== 'string' || !UNIT.test(unit) || !family.endsWith(`_${unit}`)) return '';
  return `# UNIT ${family} ${unit}\n`;
}

/** The fixed parts of a histogram's lines, built once per family. */
interface HistogramShape {
  /** `name_bucket{le="0.005"` per bound. */
  readonly prefixes: readonly string[];
  readonly infinity: string;
  /** The `_sum` and `_count` sample names, each after the newline that ends the line before. */
  readonly sum: string;
  readonly count: string;
}

function histogramShape(name: string, bounds: readonly number[]): HistogramShape {
  return {
    prefixes: bounds.map((bound) => `${name}_bucket{le="${labelValue(bound)}"`),
    infinity: `${name}_bucket{le="+Inf"`,
    sum: `\n${name}_sum`,
    count: `\n${name}_count`,
  };
}

/** What the family being written needs at each series, set when it begins. */
interface FamilyState {
  /** The family name as written (a counter's without `_total` in OpenMetrics). */
  family: string;
  /** A scalar family's sample name (a counter's with `_total` in OpenMetrics). */
  sample: string;
  /** The family's type, as the model gives it. */
  type: string;
  /** Whether exemplars are written: a counter's in OpenMetrics. */
  exemplars: boolean;
  isCounter: boolean;
  histogram: HistogramShape | undefined;
}

/** No work left at a family's end: text frames nothing. */
const NOTHING: Iterable<void> = [];

/** Writes the model as text 0.0.4 or OpenMetrics 1.0.0 into a sink. */
export class TextFormatEncoder implements Encoder {
  readonly needs: ModelNeeds;
  private readonly dialect: Dialect;
  private readonly defaults: DefaultPairs;
  private readonly nullishDefaults: DefaultPairs | undefined;
  private readonly state: FamilyState = { family: '', sample: '', type: '', exemplars: false, isCounter: false, histogram: undefined };
  private written = 0;

  /**
   * @param format - Text 0.0.4 or OpenMetrics 1.0.0.
   * @param sink - Where the text goes.
   * @param names - How the scrape writes metric and label names.
   * @param registry - What holds for every family: the default labels are written once, here.
   */
  constructor(
    format: TextFormat,
    private readonly sink: ChunkSink,
    private readonly names: NameWriter,
    registry: RegistryModel,
  ) {
    this.dialect = dialectOf(format);
    this.needs = { exemplars: this.dialect.openMetrics, native: false, created: false };
    this.defaults = defaultPairs(registry.defaultLabels, names);
    this.nullishDefaults = registry.nullishDefaults ? this.defaults : undefined;
  }

  /** The family's separator, then its `# HELP`, `# TYPE` (and `# UNIT`) lines; HELP and type converted and escaped. */
  begin(family: Family): void {
    const { dialect, names, state } = this;
    if (this.written > 0) this.sink.put(dialect.familySeparator);
    this.written += 1;
    const isCounter = family.type === 'counter';
    const name = family.kind !== 'histogram' && isCounter ? dialect.counterFamily(hostText(family.name)) : family.name;
    state.family = names.metric(name);
    state.isCounter = isCounter;
    state.exemplars = isCounter && dialect.openMetrics;
    state.sample = family.kind === 'scalar' && isCounter ? dialect.counterSample(state.family) : state.family;
    state.type = family.type;
    state.histogram = family.kind === 'histogram' ? histogramShape(state.family, family.bounds) : undefined;
    const unitText = dialect.openMetrics ? unitLine(state.family, family.unit) : '';
    this.sink.put(
      `# HELP ${state.family} ${dialect.help(hostText(family.help))}\n# TYPE ${state.family} ${dialect.type(hostText(family.type))}\n${unitText}`,
    );
  }

  series(series: Series): void {
    if (series.kind === 'scalar') this.scalar(series);
    else if (series.kind === 'histogram') this.histogram(series);
    else this.sample(series);
  }

  end(): Iterable<void> {
    return NOTHING;
  }

  finish(): Promise<RenderedBody> {
    this.sink.put(this.dialect.end(this.written));
    return this.sink.finish();
  }

  /** A Counter's or Gauge's sample: own labels first, then the defaults it lacks. */
  private scalar(series: ScalarSeries): void {
    const { dialect, sink, defaults, names, state } = this;
    const { labels } = series;
    sink.put(state.sample);
    let separator = putLabels(sink, names, labels, '{', this.nullishDefaults);
    if (defaults.length !== 0) separator = putMissingDefaults(sink, defaults, labels, separator);
    sink.put(separator === '{' ? ' ' : '} ');
    sink.put(dialect.value(series.value));
    if (state.exemplars) sink.put(exemplarSuffix(series.exemplar, names));
    sink.put('\n');
  }

  /**
   * A Histogram's series: cumulative buckets, `+Inf`, `_sum` and `_count`. prom-client writes
   * bucket labels as `le`, the defaults the series lacks, then the series' labels; `_sum` and
   * `_count` as the defaults it lacks, then its labels. The label text is built once per series.
   */
  private histogram(series: HistogramSeries): void {
    const { dialect, defaults, sink, names } = this;
    const shape = this.state.histogram!;
    const { labels, counts, exemplars } = series;
    const own = labelText(labels, names);
    const bucketRest = joinLabels(defaults.length === 0 ? '' : missingDefaults(defaults, labels, 'le'), own);
    const bucketTail = bucketRest === '' ? '} ' : `,${bucketRest}} `;
    const withExemplars = dialect.openMetrics && exemplars !== undefined;
    let cumulative = 0;
    for (let i = 0; i < counts.length; i += 1) {
      cumulative += counts[i]!;
      sink.put(shape.prefixes[i]!);
      sink.put(bucketTail);
      sink.put(dialect.value(cumulative));
      if (withExemplars) sink.put(exemplarSuffix(exemplars[i], names));
      sink.put('\n');
    }
    sink.put(shape.infinity);
    sink.put(bucketTail);
    sink.put(dialect.value(series.count));
    if (withExemplars) sink.put(exemplarSuffix(exemplars[counts.length], names));
    const plain = `${braces(joinLabels(defaults.length === 0 ? '' : missingDefaults(defaults, labels), own))} `;
    sink.put(shape.sum);
    sink.put(plain);
    sink.put(dialect.value(series.sum));
    sink.put(shape.count);
    sink.put(plain);
    sink.put(dialect.value(series.count));
    sink.put('\n');
  }

  /**
   * A sample read through `get()`, written as prom-client's formatter writes it. In OpenMetrics a
   * counter's sample gets `_total` unless it already has it, and exemplars are written only where
   * OpenMetrics allows them.
   */
  private sample(value: Sample): void {
    const { dialect, names, state } = this;
    let sample = value.name === undefined ? state.family : names.metric(value.name);
    if (state.isCounter && dialect.openMetrics && !sample.endsWith('_total')) sample += '_total';
    const labels = mergedLabelText(value.labels ?? {}, this.defaults, value.sharedLabels ?? {}, names, this.nullishDefaults);
    let line = `${sample}${braces(labels)} ${dialect.value(value.value)}`;
    const exemplarAllowed = state.isCounter || (state.type === 'histogram' && sample.endsWith('_bucket'));
    if (dialect.openMetrics && exemplarAllowed) line += exemplarSuffix(value.exemplar, names);
    this.sink.put(`${line}\n`);
  }
}
