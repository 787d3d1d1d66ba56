/**
 * The protobuf encoder: the model written as Prometheus' protobuf exposition,
 * `io.prometheus.client.MetricFamily` messages (client_model's `metrics.proto`, proto2) in the
 * delimited encoding, each message preceded by its length as a varint. The only exposition that
 * carries native histograms. {@link ProtobufEncoder} reads the model; below it, a small
 * hand-written writer, no protobuf library, no client, no HTTP.
 *
 * Made for a caller that renders many series in time slices: {@link encodeMetric} encodes one
 * series (one `Metric` message, as the family's `metric` field) at a time, and {@link frameFamily}
 * puts the family's framing around the encoded series without copying them again. Fields are
 * written in field-number order with the presence client_golang gives them (every value field of a
 * present message is written, zeros included; repeated numbers unpacked, as proto2 declares them).
 */
import type { NativeBucketSpan, NativeSnapshot } from '../native-histogram';
import { hostText, readLabel, sampleNumber } from './dialect';
import type {
  Encoder,
  Exemplar,
  Family,
  HistogramFamily,
  HistogramSeries,
  LabelSet,
  ModelNeeds,
  RegistryModel,
  Sample,
  ScalarFamily,
  ScalarSeries,
  Series,
} from './model';
import type { NameWriter } from './name-writer';
import type { ChunkSink, RenderedBody } from './sink';

/** The content type of the delimited protobuf exposition, as Prometheus asks for it in its Accept header. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';

/** The family types of `MetricFamily.type` and their enum numbers in `metrics.proto`. */
export const PROTO_METRIC_TYPES = {
  counter: 0,
  gauge: 1,
  summary: 2,
  untyped: 3,
  histogram: 4,
  gaugehistogram: 5,
} as const;

/** A family type (see {@link PROTO_METRIC_TYPES}). */
export type ProtoMetricType = keyof typeof PROTO_METRIC_TYPES;

/** One label (`LabelPair`). Any string; lone UTF-16 surrogates are written as U+FFFD, as Node writes UTF-8. */
export interface ProtoLabel {
  /** The label name. */
  readonly name: string;
  /** The label value. */
  readonly value: string;
}

/** An exemplar (`Exemplar`). */
export interface ProtoExemplar {
  /** Its labels (a trace id, for example). */
  readonly labels: readonly ProtoLabel[];
  /** The observed value. */
  readonly value: number;
  /** When it was observed, in milliseconds since the epoch (fractions kept to the nanosecond); none when undefined. */
  readonly timestampMs?: number;
}

/** A counter's sample (`Counter`). */
export interface ProtoCounter {
  /** The counter's value. */
  readonly value: number;
  /** An exemplar of its last increment. */
  readonly exemplar?: ProtoExemplar;
  /** When the counter was created, in milliseconds since the epoch. */
  readonly createdMs?: number;
}

/** A gauge's sample (`Gauge`). */
export interface ProtoGauge {
  /** The gauge's value. */
  readonly value: number;
}

/** An untyped sample (`Untyped`). */
export interface ProtoUntyped {
  /** The value. */
  readonly value: number;
}

/** One quantile of a summary (`Quantile`). */
export interface ProtoQuantile {
  /** The quantile, in [0, 1]. */
  readonly quantile: number;
  /** Its value. */
  readonly value: number;
}

/** A summary's samples (`Summary`). */
export interface ProtoSummary {
  /** Number of observations, a safe integer >= 0. */
  readonly count: number;
  /** Sum of the observations. */
  readonly sum: number;
  /** The quantiles. */
  readonly quantiles: readonly ProtoQuantile[];
  /** When the summary was created, in milliseconds since the epoch. */
  readonly createdMs?: number;
}

/** One classic histogram bucket (`Bucket`). */
export interface ProtoBucket {
  /** Inclusive upper bound. */
  readonly upperBound: number;
  /** Observations <= upperBound, a safe integer >= 0. */
  readonly cumulativeCount: number;
  /** An exemplar of an observation in this bucket. */
  readonly exemplar?: ProtoExemplar;
}

/** A histogram's samples (`Histogram`): classic buckets, native buckets, or both. */
export interface ProtoHistogram {
  /** Number of observations, a safe integer >= 0. */
  readonly count: number;
  /** Sum of the observations. */
  readonly sum: number;
  /**
   * Classic buckets in increasing order of upper bound. The protobuf exposition has no `+Inf`
   * bucket (`count` is its count); pass one only to carry an exemplar for it, as client_golang does.
   */
  readonly buckets: readonly ProtoBucket[];
  /** When the histogram was created, in milliseconds since the epoch. */
  readonly createdMs?: number;
  /**
   * The native buckets (a {@link NativeSnapshot}; its `count` and `sum` are not written, this
   * histogram's are). An empty one with a zero threshold of 0 gets the no-op positive span
   * `{offset: 0, length: 0}` if it has no span, so that Prometheus still reads it as native.
   */
  readonly native?: NativeSnapshot;
  /** Exemplars of a native histogram (`exemplars`, not tied to a bucket). */
  readonly exemplars?: readonly ProtoExemplar[];
}

interface SeriesBase {
  /** The series' labels (with the family name, they identify it). */
  readonly labels: readonly ProtoLabel[];
  /** An explicit sample timestamp in integer milliseconds since the epoch (`timestamp_ms`); usually left out. */
  readonly timestampMs?: number;
}

/** One series (`Metric`): its labels and exactly one of `counter`, `gauge`, `untyped`, `summary`, `histogram`. */
export type ProtoSeries = SeriesBase &
  (
    | {
        readonly counter: ProtoCounter;
        readonly gauge?: never;
        readonly untyped?: never;
        readonly summary?: never;
        readonly histogram?: never;
      }
    | {
        readonly gauge: ProtoGauge;
        readonly counter?: never;
        readonly untyped?: never;
        readonly summary?: never;
        readonly histogram?: never;
      }
    | {
        readonly untyped: ProtoUntyped;
        readonly counter?: never;
        readonly gauge?: never;
        readonly summary?: never;
        readonly histogram?: never;
      }
    | {
        readonly summary: ProtoSummary;
        readonly counter?: never;
        readonly gauge?: never;
        readonly untyped?: never;
        readonly histogram?: never;
      }
    | {
        readonly histogram: ProtoHistogram;
        readonly counter?: never;
        readonly gauge?: never;
        readonly untyped?: never;
        readonly summary?: never;
      }
  );

/** What {@link frameFamily} writes besides the series: `MetricFamily`'s own fields. */
export interface ProtoFamilyHeader {
  /** The family name (the metric name; for a counter, with its `_total`). */
  readonly name: string;
  /** Its help text (written even when empty, as client_golang does). */
  readonly help: string;
  /** Its type. A gauge histogram's series carry `histogram`. */
  readonly type: ProtoMetricType;
  /** Its unit, written when given and not empty. */
  readonly unit?: string;
}

// Wire types.
const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;

/** Bytes of the varint of a safe integer >= 0. */
function varintSize(value: number): number {
  let size = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

/** Writes a varint of a safe integer >= 0 into `buffer` at `pos`; returns the position after it. */
function putVarint(buffer: Uint8Array, pos: number, value: number): number {
  while (value >= 128) {
    buffer[pos++] = (value % 128) | 128;
    value = Math.floor(value / 128);
  }
  buffer[pos++] = value;
  return pos;
}

/**
 * The varint bytes of an integer >= 0 below 2^64, of a negative int64 (two's complement, ten
 * bytes) given as an integer >= -2^63, or of a bigint taken modulo 2^64. Exported for tests.
 */
export function varint(value: number | bigint): Buffer {
  const writer = new ProtoWriter(16);
  if (typeof value === 'bigint') writer.uint64Big(BigInt.asUintN(64, value));
  else if (value < 0) writer.int64(value);
  else writer.uint(value);
  return Buffer.from(writer.finish());
}

/**
 * ZigZag of a safe integer, as `sint32`/`sint64` fields carry it: 0, -1, 1, -2 … → 0, 1, 2, 3 ….
 * A bigint for magnitudes whose image exceeds 2^53. Exported for tests.
 */
export function zigzag(value: number): number | bigint {
  if (value >= 0) return value * 2;
  const image = -value * 2 - 1;
  return Number.isSafeInteger(image) ? image : BigInt(-value) * 2n - 1n;
}

/** A growable buffer with the protobuf primitives; nested messages reserve one length byte and move their body when it needs more. */
class ProtoWriter {
  buffer: Buffer;
  pos = 0;

  constructor(size: number) {
    this.buffer = Buffer.allocUnsafe(size);
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.pos + bytes));
    this.buffer.copy(grown, 0, 0, this.pos);
    this.buffer = grown;
  }

  /** An unsigned varint of an integer >= 0 below 2^64 (exact for every safe integer). */
  uint(value: number): void {
    if (!(value >= 0 && Number.isInteger(value) && value < 2 ** 64))
      throw new RangeError(`protobuf: ${String(value)} is not an unsigned integer`);
    this.ensure(10);
    this.pos = putVarint(this.buffer, this.pos, value);
  }

  uint64Big(value: bigint): void {
    this.ensure(10);
    while (value >= 128n) {
      this.buffer[this.pos++] = Number(value & 127n) | 128;
      value >>= 7n;
    }
    this.buffer[this.pos++] = Number(value);
  }

  /** An int64 varint of an integer in [-2^63, 2^64) (negative ones take ten bytes). */
  int64(value: number): void {
    if (value >= 0) return this.uint(value);
    if (!(Number.isInteger(value) && value >= -(2 ** 63))) throw new RangeError(`protobuf: ${String(value)} is not an int64`);
    this.uint64Big(BigInt.asUintN(64, BigInt(value)));
  }

  /** A sint32/sint64 (ZigZag) varint of a safe integer. */
  sint(value: number): void {
    if (!Number.isSafeInteger(value)) throw new RangeError(`protobuf: ${String(value)} is not a safe integer`);
    const image = zigzag(value);
    if (typeof image === 'bigint') this.uint64Big(image);
    else this.uint(image);
  }

  tag(field: number, wireType: number): void {
    this.ensure(2);
    // Fields 1 to 15 take one byte, Histogram.exemplars (16) two.
    this.pos = putVarint(this.buffer, this.pos, (field << 3) | wireType);
  }

  uintField(field: number, value: number): void {
    this.tag(field, VARINT);
    this.uint(value);
  }

  sintField(field: number, value: number): void {
    this.tag(field, VARINT);
    this.sint(value);
  }

  doubleField(field: number, value: number): void {
    this.tag(field, FIXED64);
    this.ensure(8);
    this.buffer.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  stringField(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED);
    if (value.length < 43) {
      // At most 3 bytes per UTF-16 unit: the length fits in one byte, written after the string.
      this.ensure(1 + value.length * 3);
      const written = this.buffer.write(value, this.pos + 1, 'utf8');
      this.buffer[this.pos] = written;
      this.pos += 1 + written;
      return;
    }
    const bytes = Buffer.byteLength(value, 'utf8');
    this.uint(bytes);
    this.ensure(bytes);
    this.pos += this.buffer.write(value, this.pos, 'utf8');
  }

  /** Starts a nested message in `field`; returns where its length goes, for {@link end}. */
  begin(field: number): number {
    this.tag(field, LENGTH_DELIMITED);
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the nested message begun at `start`: writes its length, moving the body when the length needs more than one byte. */
  end(start: number): void {
    const length = this.pos - start - 1;
    if (length < 128) {
      this.buffer[start] = length;
      return;
    }
    const extra = varintSize(length) - 1;
    this.ensure(extra);
    this.buffer.copyWithin(start + 1 + extra, start + 1, this.pos);
    putVarint(this.buffer, start, length);
    this.pos += extra;
  }

  finish(): Buffer {
    return this.buffer.subarray(0, this.pos);
  }
}

function writeLabel(writer: ProtoWriter, field: number, label: ProtoLabel): void {
  const start = writer.begin(field);
  writer.stringField(1, label.name);
  writer.stringField(2, label.value);
  writer.end(start);
}

/** A `google.protobuf.Timestamp` (proto3: zero fields left out) of milliseconds since the epoch. */
function writeTimestamp(writer: ProtoWriter, field: number, ms: number): void {
  if (!Number.isFinite(ms)) throw new RangeError(`protobuf: timestamp ${String(ms)} ms is not finite`);
  let seconds = Math.floor(ms / 1000);
  let nanos = Math.round((ms - seconds * 1000) * 1e6);
  if (nanos >= 1e9) {
    seconds++;
    nanos -= 1e9;
  }
  const start = writer.begin(field);
  if (seconds !== 0) {
    writer.tag(1, VARINT);
    writer.int64(seconds);
  }
  if (nanos !== 0) writer.uintField(2, nanos);
  writer.end(start);
}

function writeExemplar(writer: ProtoWriter, field: number, exemplar: ProtoExemplar): void {
  const start = writer.begin(field);
  for (const label of exemplar.labels) writeLabel(writer, 1, label);
  writer.doubleField(2, exemplar.value);
  if (exemplar.timestampMs !== undefined) writeTimestamp(writer, 3, exemplar.timestampMs);
  writer.end(start);
}

function writeSpans(writer: ProtoWriter, field: number, spans: readonly NativeBucketSpan[]): void {
  for (const span of spans) {
    const start = writer.begin(field);
    writer.sintField(1, span.offset);
    writer.uintField(2, span.length);
    writer.end(start);
  }
}

function writeDeltas(writer: ProtoWriter, field: number, deltas: readonly number[]): void {
  for (const delta of deltas) writer.sintField(field, delta);
}

function writeHistogram(writer: ProtoWriter, histogram: ProtoHistogram): void {
  const start = writer.begin(7);
  writer.uintField(1, histogram.count);
  writer.doubleField(2, histogram.sum);
  for (const bucket of histogram.buckets) {
    const bucketStart = writer.begin(3);
    writer.uintField(1, bucket.cumulativeCount);
    writer.doubleField(2, bucket.upperBound);
    if (bucket.exemplar !== undefined) writeExemplar(writer, 3, bucket.exemplar);
    writer.end(bucketStart);
  }
  const native = histogram.native;
  if (native !== undefined) {
    writer.sintField(5, native.schema);
    writer.doubleField(6, native.zeroThreshold);
    writer.uintField(7, native.zeroCount);
    writeSpans(writer, 9, native.negativeSpans);
    writeDeltas(writer, 10, native.negativeDeltas);
    const noop =
      native.zeroThreshold === 0 && native.zeroCount === 0 && native.positiveSpans.length === 0 && native.negativeSpans.length === 0;
    writeSpans(writer, 12, noop ? [{ offset: 0, length: 0 }] : native.positiveSpans);
    writeDeltas(writer, 13, native.positiveDeltas);
  }
  if (histogram.createdMs !== undefined) writeTimestamp(writer, 15, histogram.createdMs);
  if (histogram.exemplars !== undefined) for (const exemplar of histogram.exemplars) writeExemplar(writer, 16, exemplar);
  writer.end(start);
}

function writeSeries(writer: ProtoWriter, series: ProtoSeries): void {
  for (const label of series.labels) writeLabel(writer, 1, label);
  if (series.gauge !== undefined) {
    const start = writer.begin(2);
    writer.doubleField(1, series.gauge.value);
    writer.end(start);
  } else if (series.counter !== undefined) {
    const counter = series.counter;
    const start = writer.begin(3);
    writer.doubleField(1, counter.value);
    if (counter.exemplar !== undefined) writeExemplar(writer, 2, counter.exemplar);
    if (counter.createdMs !== undefined) writeTimestamp(writer, 3, counter.createdMs);
    writer.end(start);
  } else if (series.summary !== undefined) {
    const summary = series.summary;
    const start = writer.begin(4);
    writer.uintField(1, summary.count);
    writer.doubleField(2, summary.sum);
    for (const quantile of summary.quantiles) {
      const quantileStart = writer.begin(3);
      writer.doubleField(1, quantile.quantile);
      writer.doubleField(2, quantile.value);
      writer.end(quantileStart);
    }
    if (summary.createdMs !== undefined) writeTimestamp(writer, 4, summary.createdMs);
    writer.end(start);
  } else if (series.untyped !== undefined) {
    const start = writer.begin(5);
    writer.doubleField(1, series.untyped.value);
    writer.end(start);
  }
  if (series.timestampMs !== undefined) {
    writer.tag(6, VARINT);
    writer.int64(series.timestampMs);
  }
  if (series.histogram !== undefined) writeHistogram(writer, series.histogram);
}

/** The shared scratch writer of {@link encodeMetric}; shrunk back after an unusually large series. */
const SCRATCH_SIZE = 64 * 1024;
let scratch = new ProtoWriter(SCRATCH_SIZE);

/**
 * Encodes one series as a `MetricFamily.metric` field: its field tag and length followed by the
 * `Metric` message, ready for {@link frameFamily}, which places it in its family unchanged. The
 * bytes are copied once out of a shared scratch buffer into the returned Buffer, which the caller
 * owns. Throws a RangeError for a count that is not an integer in [0, 2^64), a span offset or
 * delta that is not a safe integer, or a non-finite timestamp; a series with none of the five
 * value kinds is written with its labels only.
 */
export function encodeMetric(series: ProtoSeries): Buffer {
  const writer = scratch;
  writer.pos = 0;
  try {
    const start = writer.begin(4);
    writeSeries(writer, series);
    writer.end(start);
    const field = Buffer.allocUnsafe(writer.pos);
    writer.buffer.copy(field, 0, 0, writer.pos);
    return field;
  } finally {
    if (writer.buffer.length > SCRATCH_SIZE * 4) scratch = new ProtoWriter(SCRATCH_SIZE);
  }
}

/** The bytes of one family besides its series (see {@link familyFraming}). */
export interface FamilyFraming {
  /** The varint length of the whole `MetricFamily` message, then its name, help and type: written first. */
  readonly head: Buffer;
  /** The unit field, written after the series; undefined without a unit. */
  readonly tail: Buffer | undefined;
}

/**
 * The framing of one family whose series, encoded by {@link encodeMetric}, take `metricsLength`
 * bytes together: write `head`, the series, then `tail` when there is one. For a caller that
 * encodes a large family's series over several time slices and adds up their lengths as it goes,
 * so that no step walks all the series at once.
 */
export function familyFraming(header: ProtoFamilyHeader, metricsLength: number): FamilyFraming {
  if (!Object.hasOwn(PROTO_METRIC_TYPES, header.type)) throw new TypeError(`protobuf: unknown metric type ${String(header.type)}`);
  if (!(Number.isSafeInteger(metricsLength) && metricsLength >= 0))
    throw new RangeError(`protobuf: series length ${String(metricsLength)} is not a safe integer >= 0`);
  const head = new ProtoWriter(16 + header.name.length * 3 + header.help.length * 3);
  head.pos = 10; // room for the length prefix, written in front once the total is known
  head.stringField(1, header.name);
  head.stringField(2, header.help);
  head.uintField(3, PROTO_METRIC_TYPES[header.type]);
  const headEnd = head.pos;
  let total = headEnd - 10 + metricsLength;
  let tail: Buffer | undefined;
  if (header.unit !== undefined && header.unit !== '') {
    const unit = new ProtoWriter(8 + header.unit.length * 3);
    unit.stringField(5, header.unit);
    tail = unit.finish();
    total += tail.length;
  }
  const prefixStart = 10 - varintSize(total);
  putVarint(head.buffer, prefixStart, total);
  return { head: head.buffer.subarray(prefixStart, headEnd), tail };
}

/**
 * Frames one family in the delimited encoding around its series encoded by {@link encodeMetric}:
 * the pieces to write in order are {@link familyFraming}'s head, each series' own Buffer (the same
 * objects, not copies) and the tail when there is one. Concatenated, the pieces are one
 * length-prefixed `MetricFamily`. Walks `metrics` once to add up their lengths (skipped when
 * `metricsLength` is given) and copies the list: 2 to 5 ms for 100 000 series on one call, so a
 * caller that slices its work into a few milliseconds takes {@link familyFraming} instead.
 */
export function frameFamily(header: ProtoFamilyHeader, metrics: readonly Buffer[], metricsLength?: number): Buffer[] {
  let length = metricsLength;
  if (length === undefined) {
    length = 0;
    for (let i = 0; i < metrics.length; i++) length += metrics[i].length;
  }
  const { head, tail } = familyFraming(header, length);
  const pieces = [head].concat(metrics);
  if (tail !== undefined) pieces.push(tail);
  return pieces;
}

/** One family with its series, delimited, as a single Buffer: {@link frameFamily} of {@link encodeMetric} of each series, joined. */
export function encodeFamily(header: ProtoFamilyHeader, series: readonly ProtoSeries[]): Buffer {
  return Buffer.concat(frameFamily(header, series.map(encodeMetric)));
}

// The encoder: the model written as delimited `MetricFamily` messages.

/** The registry's default labels, converted once per scrape: the host's name, and the pair written. */
type ProtoDefaults = ReadonlyArray<readonly [name: string, pair: ProtoLabel]>;

/** The default labels as protobuf label pairs, names written by the scrape's writer. */
function protoDefaults(defaults: LabelSet | undefined, names: NameWriter): ProtoDefaults {
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

/** The model's exemplar (one an answer can carry) as a protobuf one. */
function protoExemplar(exemplar: Exemplar | undefined, names: NameWriter): ProtoExemplar | undefined {
  if (exemplar === undefined) return undefined;
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
 * A count as protobuf's unsigned integers take it. A client's counts always are one; a count
 * that is not a whole number >= 0 (only a host's own metric can answer one from `get()`) is
 * written rounded, NaN and negatives as 0, rather than failing the scrape.
 */
function countOf(value: number): number {
  if (Number.isSafeInteger(value) && value >= 0) return value;
  if (!(value > 0)) return 0;
  return Math.min(Math.round(value), Number.MAX_SAFE_INTEGER);
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
 * A sample's labels and shared labels as one plain set, each value read through `readLabel` (a
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

/** The protobuf type of a family of the model. */
function protoTypeOf(family: Family): ProtoMetricType {
  const { type } = family;
  if (family.kind === 'histogram') return 'histogram';
  if (type === 'counter' || type === 'gauge') return type;
  return family.kind === 'samples' && (type === 'histogram' || type === 'summary') ? type : 'untyped';
}

/**
 * Writes the model as the delimited protobuf exposition: each series encoded into one `Metric`
 * message in the step that reads it, and the family framed around them once its last series is
 * read, put into the sink one piece per step (the copies of 100 000 series into the output blocks
 * are a step each, not one long turn). Names go through the scrape's {@link NameWriter} as in
 * text; label values are converted as in text, without text escaping (protobuf strings need none).
 * A family without series is left out, as client_golang's gathering leaves it out: protobuf has no
 * use for its HELP alone.
 *
 * What protobuf writes that text does not: the native buckets of the histograms this package made
 * with native histograms on, beside their classic buckets (as client_golang writes both), every
 * exemplar (classic bucket exemplars in their buckets, and the same in `exemplars` when native
 * buckets are written, where Prometheus reads a native histogram's), and the start timestamps of
 * the counters and histograms this package made.
 */
export class ProtobufEncoder implements Encoder {
  readonly needs: ModelNeeds = { exemplars: true, native: true, created: true };
  private readonly defaults: ProtoDefaults;
  private readonly nullishDefaults: boolean;
  private family: Family | undefined;
  /** The family's name as written. */
  private name = '';
  private type: ProtoMetricType = 'untyped';
  private encoded = new EncodedSeries();
  /** A `get()` histogram's or summary's samples, grouped back into series. */
  private groups = new Map<string, Group>();
  /** A `get()` family's samples named after another family, which text writes under that name: encoded by that name. */
  private elsewhere = new Map<string, EncodedSeries>();

  /**
   * @param sink - Where the bytes go.
   * @param names - How the scrape writes metric and label names.
   * @param registry - What holds for every family: the default labels are converted once, here.
   */
  constructor(
    private readonly sink: ChunkSink,
    private readonly names: NameWriter,
    registry: RegistryModel,
  ) {
    this.defaults = protoDefaults(registry.defaultLabels, names);
    this.nullishDefaults = registry.nullishDefaults;
  }

  begin(family: Family): void {
    this.family = family;
    this.name = this.names.metric(family.name);
    this.type = protoTypeOf(family);
    this.encoded = new EncodedSeries();
    if (family.kind === 'samples') {
      this.groups = new Map();
      this.elsewhere = new Map();
    }
  }

  series(series: Series): void {
    if (series.kind === 'scalar') this.scalar(series);
    else if (series.kind === 'histogram') this.histogram(series);
    else this.sample(series);
  }

  /** A `get()` histogram's or summary's series, one per step; then the family; then the families of samples named elsewhere. */
  *end(): Generator<void> {
    const family = this.family!;
    if (family.kind === 'samples') {
      for (const group of this.groups.values()) {
        const count = countOf(group.count ?? 0);
        if (this.type === 'histogram') {
          this.encoded.push(encodeMetric({ labels: group.labels, histogram: { count, sum: group.sum, buckets: group.buckets } }));
        } else {
          this.encoded.push(encodeMetric({ labels: group.labels, summary: { count, sum: group.sum, quantiles: group.quantiles } }));
        }
        yield;
      }
    }
    yield* this.put(this.name, family.help, this.type, this.encoded);
    for (const [sample, metrics] of this.elsewhere) yield* this.put(sample, family.help, 'untyped', metrics);
    this.elsewhere.clear();
  }

  async finish(): Promise<RenderedBody> {
    // Delimited protobuf messages need no separator and no end marker.
    return this.sink.finish();
  }

  /** Frames a family around its encoded series and puts it in the sink, one piece per step. */
  private *put(name: string, help: unknown, type: ProtoMetricType, series: EncodedSeries): Generator<void> {
    if (series.list.length === 0) return;
    for (const piece of frameFamily({ name, help: hostText(help), type }, series.list, series.bytes)) {
      this.sink.putBytes(piece);
      yield;
    }
  }

  /** A Counter or Gauge: one `Metric`; a counter with its exemplar and start timestamp when the model has them. */
  private scalar(series: ScalarSeries): void {
    const labels = protoLabels(this.names, series.labels, this.defaults, undefined, this.nullishDefaults);
    const value = sampleNumber(series.value);
    if (this.type === 'counter') {
      const exemplar = protoExemplar(series.exemplar, this.names);
      this.encoded.push(encodeMetric({ labels, counter: { value, exemplar, createdMs: (this.family as ScalarFamily).createdMs } }));
    } else if (this.type === 'gauge') {
      this.encoded.push(encodeMetric({ labels, gauge: { value } }));
    } else {
      this.encoded.push(encodeMetric({ labels, untyped: { value } }));
    }
  }

  /**
   * A Histogram: cumulative classic buckets (with their exemplars), sum and count; with native
   * buckets when the model has them for the series and they count the same observations as the
   * classic ones (a series reset or observed around the package is written classic only).
   */
  private histogram(series: HistogramSeries): void {
    const { names } = this;
    const { bounds, createdMs } = this.family as HistogramFamily;
    const buckets: ProtoBucket[] = [];
    const exemplars: ProtoExemplar[] = [];
    let cumulative = 0;
    for (let i = 0; i < bounds.length; i += 1) {
      cumulative += countOf(sampleNumber(series.counts[i]));
      const exemplar = protoExemplar(series.exemplars?.[i], names);
      if (exemplar !== undefined) exemplars.push(exemplar);
      buckets.push({ upperBound: bounds[i]!, cumulativeCount: cumulative, exemplar });
    }
    const count = countOf(sampleNumber(series.count));
    const infinity = protoExemplar(series.exemplars?.[bounds.length], names);
    if (infinity !== undefined) {
      exemplars.push(infinity);
      buckets.push({ upperBound: Infinity, cumulativeCount: count, exemplar: infinity });
    }
    const snapshot = series.native;
    // The same observations, in the same order, give the same count and the bit-identical sum.
    const withNative = snapshot !== undefined && snapshot.count === count && Object.is(snapshot.sum, sampleNumber(series.sum));
    this.encoded.push(
      encodeMetric({
        labels: protoLabels(names, series.labels, this.defaults),
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

  /**
   * A sample read through `get()`: a counter's, gauge's or unknown type's one `Metric`; a
   * histogram's or summary's (`_bucket` with `le`, `quantile`, `_sum`, `_count`) grouped back into
   * its series, encoded at the family's end. A counter's, gauge's or unknown type's sample that
   * names a sample of its own (`metricName`), which text writes under that name, is written as an
   * untyped family of that name after this one, as text's reader takes it.
   */
  private sample(value: Sample): void {
    const { names, defaults, type } = this;
    const own = readLabels(value.labels, value.sharedLabels);
    const number = sampleNumber(value.value);
    if (type === 'histogram' || type === 'summary') {
      this.group(value, own, number);
    } else if (value.name !== undefined && names.metric(value.name) !== this.name) {
      const sample = names.metric(value.name);
      const list = this.elsewhere.get(sample) ?? new EncodedSeries();
      list.push(encodeMetric({ labels: protoLabels(names, own, defaults, undefined, this.nullishDefaults), untyped: { value: number } }));
      this.elsewhere.set(sample, list);
    } else {
      const labels = protoLabels(names, own, defaults, undefined, this.nullishDefaults);
      if (type === 'counter') this.encoded.push(encodeMetric({ labels, counter: { value: number } }));
      else if (type === 'gauge') this.encoded.push(encodeMetric({ labels, gauge: { value: number } }));
      else this.encoded.push(encodeMetric({ labels, untyped: { value: number } }));
    }
  }

  /** Adds a histogram's or summary's sample to the group of its series. */
  private group(value: Sample, own: Record<string, unknown>, number: number): void {
    const reserved = this.type === 'histogram' ? 'le' : 'quantile';
    const labels = protoLabels(this.names, own, this.defaults, reserved, this.nullishDefaults);
    const key = groupKey(labels);
    let group = this.groups.get(key);
    if (group === undefined) {
      group = { labels, buckets: [], quantiles: [], sum: 0, count: undefined };
      this.groups.set(key, group);
    }
    const sample = value.name === undefined ? '' : hostText(value.name);
    const marker = hostText(readLabel(own, reserved));
    if (sample.endsWith('_sum')) group.sum = number;
    else if (sample.endsWith('_count')) group.count = number;
    else if (this.type === 'histogram') {
      const bound = marker === '+Inf' ? Infinity : Number(marker);
      if (bound === Infinity) group.count ??= number;
      else if (!Number.isNaN(bound)) group.buckets.push({ upperBound: bound, cumulativeCount: countOf(number) });
    } else if (Object.prototype.hasOwnProperty.call(own, 'quantile')) {
      group.quantiles.push({ quantile: Number(marker), value: number });
    }
  }
}
