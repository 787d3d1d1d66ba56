/**
 * The one model of an exposition, between the adapters that read a registry (`adapters/`: one per
 * way a client's series are read) and the encoders that write it (`text.ts`, `protobuf.ts`). Types
 * only. A registry is a {@link RegistryModel} and a stream of {@link Family} values, in
 * registration order; a family carries its header and an iterator of its series, read one per
 * step. The series objects are the adapter's, reused from one step to the next: an encoder reads
 * a series in its step and keeps nothing of it. Nothing of a registry is ever held whole.
 *
 * Values are the host's as they were stored (a label value, a sample value, HELP may be anything):
 * the encoders convert them (`dialect.ts`) and write the names (`name-writer.ts`).
 */
import type { NativeSnapshot } from '../native-histogram';
import type { RenderedBody } from './sink';

/** A label set as the clients store it: label name -> value (the clients accept numbers too). */
export type LabelSet = Readonly<Record<string, unknown>>;

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

/** One metric's native buckets per series: the series' snapshot, or undefined when it has none. */
export type SeriesNative = (labels: LabelSet | undefined) => NativeSnapshot | undefined;

/**
 * What the adapters read beside a client's own storage: the exemplars, native buckets and start
 * timestamps the metrics of this package carry (`metrics/exemplar-store.ts`).
 */
export interface ExemplarSource {
  /**
   * The exemplar lookup of `metric` (a client's Counter or Histogram of the registry), or
   * `undefined` when it has none. Asked once per family per scrape that writes exemplars, so a
   * family without exemplars costs nothing per series.
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

/**
 * What an encoder reads beyond headers, labels and values. The adapters read only that: a text
 * scrape asks for no exemplar, an OpenMetrics one for no native bucket.
 */
export interface ModelNeeds {
  /** The exemplars of counter samples and histogram buckets (and prom-client's on `get()` samples). */
  readonly exemplars: boolean;
  /** The native buckets of histogram series. */
  readonly native: boolean;
  /** The start timestamps of counter and histogram families. */
  readonly created: boolean;
}

/** What holds for every family of one registry. */
export interface RegistryModel {
  /** `setDefaultLabels()`'s labels, or undefined when there are none. */
  readonly defaultLabels: LabelSet | undefined;
  /**
   * Whether an own label that is null or undefined is written with the default label of its name,
   * in its place, as `@prometheus-io/client`'s text does (prom-client writes it as it is).
   */
  readonly nullishDefaults: boolean;
}

/** A counter's or gauge's series. */
export interface ScalarSeries {
  readonly kind: 'scalar';
  /** The series' labels, the object the host passed in. */
  labels: LabelSet | undefined;
  /** The current value, as stored. */
  value: unknown;
  /**
   * A counter's exemplar, when the encoder needs exemplars: this package's for the series, else
   * prom-client's (a counter made with `enableExemplars`); only one the answer can carry (valid
   * label names, 128 characters at most). Undefined otherwise.
   */
  exemplar: Exemplar | undefined;
}

/** A histogram's series: classic buckets, and native ones where this package keeps them. */
export interface HistogramSeries {
  readonly kind: 'histogram';
  /** The series' labels. */
  labels: LabelSet | undefined;
  /** Non-cumulative count per upper bound of the family's `bounds`, in their order, as stored. */
  readonly counts: number[];
  /** Sum of the observations, as stored. */
  sum: unknown;
  /** Number of observations, as stored. */
  count: unknown;
  /**
   * Per bucket (the family's bounds, then `+Inf` last) the exemplar the answer can carry, as
   * {@link ScalarSeries.exemplar}; undefined when the encoder needs none or neither this package
   * nor the client keeps any for the series.
   */
  exemplars: Array<Exemplar | undefined> | undefined;
  /** The series' native buckets, when the encoder needs them and this package keeps them. */
  native: NativeSnapshot | undefined;
}

/** One sample of a metric read through its public `get()`, as the client's formatter writes it. */
export interface Sample {
  readonly kind: 'sample';
  /** The sample's own name (a histogram's `_bucket`, a summary's `_sum`), or undefined for the family's. */
  name: string | undefined;
  /** Its labels. */
  labels: LabelSet | null | undefined;
  /** Labels the client adds after the others (a histogram's `le`, a summary's `quantile` are among `labels`). */
  sharedLabels: LabelSet | null | undefined;
  /** The value, as the host gave it. */
  value: unknown;
  /** prom-client's exemplar of the sample, when the encoder needs exemplars and the answer can carry it. */
  exemplar: Exemplar | undefined;
}

/** Any series of the model. */
export type Series = ScalarSeries | HistogramSeries | Sample;

/**
 * A family's series, one per `next()`: the series, or undefined for a step with nothing to write
 * (a series the host removed while the walk was under way).
 */
export type SeriesIterator<S extends Series> = Iterator<S | undefined>;

/** What every family has. */
interface FamilyHeader {
  /** The family's name as the registry holds it. */
  readonly name: string;
  /** Its HELP, as the host gave it. */
  readonly help: unknown;
  /** Its type as the client names it (`counter`, `gauge`, `histogram`, `summary`) or the host's own word. */
  readonly type: string;
  /** A unit given in the metric's configuration (prom-client keeps unknown options on the metric). */
  readonly unit: unknown;
}

/** A client's Counter or Gauge, read through its storage. */
export interface ScalarFamily extends FamilyHeader {
  readonly kind: 'scalar';
  /** A counter's start timestamp, in ms since the epoch, when the encoder needs it and it is known. */
  readonly createdMs: number | undefined;
  readonly series: SeriesIterator<ScalarSeries>;
}

/** A client's Histogram, read through its storage. */
export interface HistogramFamily extends FamilyHeader {
  readonly kind: 'histogram';
  /** The classic buckets' upper bounds, `+Inf` excluded. */
  readonly bounds: readonly number[];
  /** The start timestamp, in ms since the epoch, when the encoder needs it and it is known. */
  readonly createdMs: number | undefined;
  readonly series: SeriesIterator<HistogramSeries>;
}

/** Any other metric, read through its public `get()`: its samples as that returned them. */
export interface SampleFamily extends FamilyHeader {
  readonly kind: 'samples';
  readonly series: SeriesIterator<Sample>;
}

/** One family of the model. */
export type Family = ScalarFamily | HistogramFamily | SampleFamily;

/**
 * What writes the model in one format (`text.ts`: text 0.0.4 and OpenMetrics; `protobuf.ts`): the
 * renderer hands it each family, then each of its series one per step, then lets it end the family
 * one step per piece of work left.
 */
export interface Encoder {
  /** What it reads beyond headers, labels and values. */
  readonly needs: ModelNeeds;
  /** Starts `family`: what is written before its series. */
  begin(family: Family): void;
  /** Writes one series of the family begun last (a series of that family's kind). */
  series(series: Series): void;
  /** Ends the family begun last: each step of the iteration is one piece of work (none for text). */
  end(): Iterable<void>;
  /** Ends the exposition: its body. */
  finish(): Promise<RenderedBody>;
}
