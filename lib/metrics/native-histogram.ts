/**
 * Native (sparse exponential) histogram buckets, computed as Prometheus' Go client
 * (client_golang's `histogram`) computes them, so that a series observed here and there with the
 * same options exposes the same schema, zero bucket, spans and deltas. Pure: no prom-client, no
 * HTTP, no timers. One {@link NativeHistogram} is one series; the exposition encoder
 * (`exposition/protobuf.ts`) writes its {@link NativeSnapshot}.
 *
 * Bucket `k` of schema `s` holds the observations `v` with `2^((k-1)/2^s) < |v| <= 2^(k/2^s)`,
 * positive and negative values in separate bucket sets; `|v| <= zeroThreshold` goes to the zero
 * bucket. The schema follows from the bucket factor (the growth of one bucket's upper bound over
 * the previous one's).
 */

/** The finest schema Prometheus knows (growth factor 2^(2^-8), about 1.0027). */
export const NATIVE_SCHEMA_MAX = 8;
/** The coarsest schema Prometheus knows (growth factor 2^16); resolution is never reduced below it. */
export const NATIVE_SCHEMA_MIN = -4;
/** Default {@link NativeHistogramOptions.bucketFactor}: 1.1, as controller-runtime and Kubernetes use (schema 3). */
export const DEFAULT_NATIVE_BUCKET_FACTOR = 1.1;
/** Default {@link NativeHistogramOptions.zeroThreshold}: 2^-128, client_golang's default. */
export const DEFAULT_NATIVE_ZERO_THRESHOLD = 2 ** -128;
/** Default {@link NativeHistogramOptions.maxBuckets}: 160 populated buckets (both signs together). */
export const DEFAULT_NATIVE_MAX_BUCKETS = 160;

/**
 * Options of a native histogram. Two client_golang features are left out on purpose, to keep one
 * series a plain counter set with a bounded footprint and no timers: the reset after
 * `NativeHistogramMinResetDuration` (a series is never reset, its resolution only goes down) and
 * the widening of the zero bucket up to `NativeHistogramMaxZeroThreshold` (the zero bucket keeps
 * its threshold; only the schema is reduced). Both are what client_golang does with those two
 * options at 0.
 */
export interface NativeHistogramOptions {
  /**
   * The largest acceptable growth factor from one bucket's upper bound to the next, a finite
   * number > 1 (client_golang's `NativeHistogramBucketFactor`). The schema is the finest one, at
   * most 8, whose factor `2^(2^-schema)` does not exceed it: 1.1 → schema 3 (factor 1.0905), 2 →
   * schema 0, 1.0001 → schema 8; factors of 65536 and more give schema -4. Default 1.1.
   */
  bucketFactor?: number;
  /**
   * Observations with an absolute value up to this (inclusive) are counted in the zero bucket, a
   * finite number >= 0 (client_golang's `NativeHistogramZeroThreshold`; 0 keeps only exact zeros
   * there). Default 2^-128 (about 2.9e-39), client_golang's default.
   */
  zeroThreshold?: number;
  /**
   * The bound on populated buckets (positive and negative together), an integer >= 1
   * (client_golang's `NativeHistogramMaxBucketNumber`, whose default 0 means no bound; here a
   * bound is required, since every bucket is held memory). Each observation that leaves more
   * buckets than this halves the resolution once (schema - 1, pairs of buckets merged), as
   * client_golang does, down to schema -4. As there, one halving may merge few buckets when they
   * are far apart, so the count can stay above the bound for a few observations: it is at most
   * `maxBuckets + (initial schema + 4)` above schema -4, and schema -4 has at most 266 distinct
   * buckets for all of float64 including ±Inf, so a series never holds more than
   * `max(maxBuckets + 12, 266)` buckets. Default 160.
   */
  maxBuckets?: number;
}

/**
 * {@link NativeHistogramOptions} with every default applied (every option of it, so the two cannot
 * drift), and the initial schema the bucket factor gives (see {@link pickNativeSchema}).
 */
export type ResolvedNativeHistogramOptions = Readonly<Required<NativeHistogramOptions>> & { readonly schema: number };

/** A run of consecutive buckets: `offset` buckets after the previous span's end (the first: its start index). */
export interface NativeBucketSpan {
  /** Gap to the end of the previous span, or the index of the first bucket for the first span; may be negative. */
  readonly offset: number;
  /** Number of consecutive buckets (0 only in the no-op span of an empty histogram, see {@link NativeSnapshot}). */
  readonly length: number;
}

/**
 * The state of one native histogram as Prometheus' protobuf exposition carries it, laid out as
 * client_golang's `Write` lays it out: buckets sorted by index, a new span only where more than
 * two empty buckets lie between populated ones (gaps of one or two are written as empty buckets
 * inside the span), and each bucket's count as the delta to the previous bucket in the list (the
 * first to 0, empty gap buckets included). A histogram with a zero threshold of 0, nothing in the
 * zero bucket and no buckets has one positive span `{offset: 0, length: 0}`, the no-op span
 * client_golang writes so that scrapers still see a native histogram (with a threshold > 0, the
 * threshold itself marks it native).
 */
export interface NativeSnapshot {
  /** The current schema (the initial one, or lower after resolution reductions). */
  readonly schema: number;
  /** The zero bucket's threshold (inclusive). */
  readonly zeroThreshold: number;
  /** Observations in the zero bucket. */
  readonly zeroCount: number;
  /** All observations, NaN ones included. */
  readonly count: number;
  /** The sum of all observations (NaN once a NaN was observed, ±Inf once one was). */
  readonly sum: number;
  /** Spans of the positive buckets. */
  readonly positiveSpans: readonly NativeBucketSpan[];
  /** Count deltas of the positive buckets, one per bucket the spans cover. */
  readonly positiveDeltas: readonly number[];
  /** Spans of the negative buckets (indexes by absolute value). */
  readonly negativeSpans: readonly NativeBucketSpan[];
  /** Count deltas of the negative buckets. */
  readonly negativeDeltas: readonly number[];
}

/**
 * The schema of a bucket factor, as client_golang picks it: the largest `n` in [-4, 8] with
 * `2^(2^-n) <= bucketFactor`, that is `-floor(log2(log2(bucketFactor)))` clamped to that range.
 * Throws a RangeError for a factor that is not a number > 1.
 */
export function pickNativeSchema(bucketFactor: number): number {
  if (!(bucketFactor > 1)) throw new RangeError(`a native histogram's bucket factor must be > 1; got ${String(bucketFactor)}`);
  const floor = Math.floor(Math.log2(Math.log2(bucketFactor)));
  if (floor <= -NATIVE_SCHEMA_MAX) return NATIVE_SCHEMA_MAX;
  if (floor >= -NATIVE_SCHEMA_MIN) return NATIVE_SCHEMA_MIN;
  return 0 - floor;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined || value === null) {
    return String(value);
  }
  return typeof value;
}

/**
 * Validates native-histogram options and applies the defaults. `where` names the options in the
 * messages (for example `metrics.nativeHistograms`). Throws a TypeError naming the option and the
 * value it got: `bucketFactor` must be a finite number > 1, `zeroThreshold` a finite number >= 0,
 * `maxBuckets` an integer >= 1 (0, client_golang's "no bound", is refused: held memory must be
 * bounded); unknown keys are refused too.
 */
export function resolveNativeHistogramOptions(options: NativeHistogramOptions | undefined, where: string): ResolvedNativeHistogramOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new TypeError(`${where} must be an object of native-histogram options; got ${describe(options)}`);
  }
  const given: Record<string, unknown> = { ...options };
  for (const key of Object.keys(given)) {
    if (key !== 'bucketFactor' && key !== 'zeroThreshold' && key !== 'maxBuckets') {
      throw new TypeError(`${where}.${key} is not a native-histogram option (bucketFactor, zeroThreshold, maxBuckets)`);
    }
  }
  const {
    bucketFactor = DEFAULT_NATIVE_BUCKET_FACTOR,
    zeroThreshold = DEFAULT_NATIVE_ZERO_THRESHOLD,
    maxBuckets = DEFAULT_NATIVE_MAX_BUCKETS,
  } = given;
  if (typeof bucketFactor !== 'number' || !Number.isFinite(bucketFactor) || bucketFactor <= 1) {
    throw new TypeError(`${where}.bucketFactor must be a finite number > 1 (for example 1.1); got ${describe(bucketFactor)}`);
  }
  if (typeof zeroThreshold !== 'number' || !Number.isFinite(zeroThreshold) || zeroThreshold < 0) {
    throw new TypeError(`${where}.zeroThreshold must be a finite number >= 0; got ${describe(zeroThreshold)}`);
  }
  if (typeof maxBuckets !== 'number' || !Number.isSafeInteger(maxBuckets) || maxBuckets < 1) {
    const why = maxBuckets === 0 ? ' (0, no bound, is not allowed: every bucket is held memory)' : '';
    throw new TypeError(`${where}.maxBuckets must be an integer >= 1${why}; got ${describe(maxBuckets)}`);
  }
  const resolved = Object.freeze({ bucketFactor, zeroThreshold, maxBuckets, schema: pickNativeSchema(bucketFactor) });
  RESOLVED.add(resolved);
  return resolved;
}

/** The option sets {@link resolveNativeHistogramOptions} made, which a {@link NativeHistogram} takes without checking again. */
const RESOLVED = new WeakSet<ResolvedNativeHistogramOptions>();

/**
 * Upper bounds of the buckets within one power of two, per positive schema, as fractions in
 * [0.5, 1): `BOUNDS[s][j]` is about `2^(j/2^s - 1)`. Built as client_golang built its table: each
 * schema doubles the previous one's bounds, the new (odd) ones being the previous bound times the
 * schema's factor `2^(2^-s)`, so the values match client_golang's bit for bit (not always the
 * correctly rounded powers; the peer tests observe every bound and its neighbours to prove it).
 * The factors are the correctly rounded `2^(2^-s)` except for schema 1, where client_golang's
 * table was made with Go's `math.Exp2(0.5)`, one unit in the last place below √2.
 */
const BOUNDS: readonly Float64Array[] = (() => {
  const tables: Float64Array[] = [Float64Array.of(0.5)];
  for (let schema = 1; schema <= NATIVE_SCHEMA_MAX; schema++) {
    const factor = schema === 1 ? 1.414213562373095 : Math.pow(2, Math.pow(2, -schema));
    const previous = tables[schema - 1];
    const bounds = new Float64Array(2 ** schema);
    bounds[0] = 0.5;
    for (let j = 1; j < bounds.length; j++) bounds[j] = j % 2 === 0 ? previous[j / 2] : bounds[j - 1] * factor;
    tables.push(bounds);
  }
  return tables;
})();

// frexp through the bits of a float64: the host's byte order decides which 32-bit word is the high one.
const FLOAT = new Float64Array(1);
const WORDS = new Uint32Array(FLOAT.buffer);
const HIGH = new Uint8Array(Float64Array.of(1).buffer)[7] === 0x3f ? 1 : 0;
const LOW = 1 - HIGH;

/**
 * The index of the bucket of schema `schema` a finite `value` != 0 falls in (by absolute value), as
 * client_golang computes it: with `|value| = frac * 2^exp`, `frac` in [0.5, 1), the first bound
 * `>= frac` of the schema's table plus `(exp - 1) * 2^schema` for schemas > 0, and `exp` (minus one
 * when `frac` is exactly 0.5, a power of two) shifted down by `-schema` bits, rounding up, for
 * schemas <= 0. ±Inf is the index after that of ±`Number.MAX_VALUE`.
 */
export function nativeBucketIndex(value: number, schema: number): number {
  let magnitude = Math.abs(value);
  const infinite = magnitude === Infinity;
  if (infinite) magnitude = Number.MAX_VALUE;
  FLOAT[0] = magnitude;
  let high = WORDS[HIGH];
  let biased = high >>> 20;
  let exp: number;
  if (biased === 0) {
    // Subnormal: scale it into the normal range first.
    FLOAT[0] = magnitude * 2 ** 64;
    high = WORDS[HIGH];
    biased = high >>> 20;
    exp = biased - 1022 - 64;
  } else {
    exp = biased - 1022;
  }
  let index: number;
  if (schema > 0) {
    // frac: the same mantissa with the exponent of [0.5, 1).
    WORDS[HIGH] = (high & 0x000fffff) | 0x3fe00000;
    const frac = FLOAT[0];
    const bounds = BOUNDS[schema];
    let lo = 0;
    let hi = bounds.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (bounds[mid] < frac) lo = mid + 1;
      else hi = mid;
    }
    index = lo + (exp - 1) * bounds.length;
  } else {
    const powerOfTwo = (high & 0x000fffff) === 0 && WORDS[LOW] === 0;
    index = powerOfTwo ? exp - 1 : exp;
    const shift = -schema;
    index = (index + (1 << shift) - 1) >> shift;
  }
  return infinite ? index + 1 : index;
}

/** Adds `count` to bucket `index`; true when that created the bucket. */
function addTo(buckets: Map<number, number>, index: number, count: number): boolean {
  const before = buckets.get(index);
  buckets.set(index, (before ?? 0) + count);
  return before === undefined;
}

/** The spans and deltas of one sign's buckets, as client_golang's `makeBuckets` lays them out. */
function spansAndDeltas(buckets: Map<number, number>, indexes: Float64Array, spans: NativeBucketSpan[], deltas: number[]): void {
  if (indexes.length === 0) return;
  let previousCount = 0;
  let next = 0;
  let spanStart = 0;
  let spanOffset = 0;
  for (let n = 0; n < indexes.length; n++) {
    const index = indexes[n];
    const gap = index - next;
    if (n === 0 || gap > 2) {
      if (n > 0) spans.push({ offset: spanOffset, length: deltas.length - spanStart });
      spanOffset = gap;
      spanStart = deltas.length;
    } else {
      for (let i = 0; i < gap; i++) {
        deltas.push(0 - previousCount);
        previousCount = 0;
      }
    }
    const count = buckets.get(index) as number;
    deltas.push(count - previousCount);
    previousCount = count;
    next = index + 1;
  }
  spans.push({ offset: spanOffset, length: deltas.length - spanStart });
}

const EMPTY = new Float64Array(0);

/**
 * One native-histogram series: observations counted in sparse exponential buckets, exactly as
 * client_golang's histogram counts them with the same options (see {@link NativeHistogramOptions}
 * for the two features left out). Memory is bounded: two maps of at most
 * `max(maxBuckets + 12, 266)` entries together.
 *
 * Special values, as client_golang: NaN is counted in `count` and makes `sum` NaN but goes in no
 * bucket; +Inf goes in the bucket after that of `Number.MAX_VALUE` (the highest positive one), -Inf
 * likewise among the negative buckets; both make `sum` infinite. -0 and 0 go to the zero bucket.
 */
export class NativeHistogram {
  private readonly zeroThreshold: number;
  private readonly maxBuckets: number;
  private currentSchema: number;
  private positive = new Map<number, number>();
  private negative = new Map<number, number>();
  /** The bucket indexes of each sign in increasing order, kept until a bucket is created or merged. */
  private positiveIndexes: Float64Array | undefined = EMPTY;
  private negativeIndexes: Float64Array | undefined = EMPTY;
  private zeroCount = 0;
  private count = 0;
  private sum = 0;

  /**
   * Validates `options` with {@link resolveNativeHistogramOptions}; a set that function returned is
   * taken as is, so that many series share one validation.
   */
  constructor(options?: NativeHistogramOptions | ResolvedNativeHistogramOptions) {
    const resolved =
      options !== undefined && RESOLVED.has(options as ResolvedNativeHistogramOptions)
        ? (options as ResolvedNativeHistogramOptions)
        : resolveNativeHistogramOptions(options as NativeHistogramOptions | undefined, 'NativeHistogram options');
    this.zeroThreshold = resolved.zeroThreshold;
    this.maxBuckets = resolved.maxBuckets;
    this.currentSchema = resolved.schema;
  }

  /** The current schema (lower than the initial one once the bucket bound reduced the resolution). */
  get schema(): number {
    return this.currentSchema;
  }

  /** The number of populated buckets, positive and negative together (the zero bucket not counted). */
  get bucketCount(): number {
    return this.positive.size + this.negative.size;
  }

  /** Counts one observation (any number: NaN, ±Inf and -0 included; see the class). */
  observe(value: number): void {
    this.count++;
    this.sum += value;
    if (Number.isNaN(value)) return;
    if (value > this.zeroThreshold) {
      if (addTo(this.positive, nativeBucketIndex(value, this.currentSchema), 1)) this.positiveIndexes = undefined;
    } else if (value < -this.zeroThreshold) {
      if (addTo(this.negative, nativeBucketIndex(value, this.currentSchema), 1)) this.negativeIndexes = undefined;
    } else {
      this.zeroCount++;
    }
    if (this.positive.size + this.negative.size > this.maxBuckets && this.currentSchema > NATIVE_SCHEMA_MIN) this.halveResolution();
  }

  /** Schema - 1: bucket `k` goes into bucket `ceil(k / 2)` of the coarser schema (client_golang's doubleBucketWidth). */
  private halveResolution(): void {
    this.currentSchema--;
    const merge = (buckets: Map<number, number>): Map<number, number> => {
      const merged = new Map<number, number>();
      for (const [index, count] of buckets) addTo(merged, (index + 1) >> 1, count);
      return merged;
    };
    this.positive = merge(this.positive);
    this.negative = merge(this.negative);
    this.positiveIndexes = undefined;
    this.negativeIndexes = undefined;
  }

  /** The series' current state as the protobuf exposition writes it (see {@link NativeSnapshot}). A fresh object each call. */
  snapshot(): NativeSnapshot {
    const positiveSpans: NativeBucketSpan[] = [];
    const positiveDeltas: number[] = [];
    const negativeSpans: NativeBucketSpan[] = [];
    const negativeDeltas: number[] = [];
    this.positiveIndexes ??= Float64Array.from(this.positive.keys()).sort();
    this.negativeIndexes ??= Float64Array.from(this.negative.keys()).sort();
    spansAndDeltas(this.positive, this.positiveIndexes, positiveSpans, positiveDeltas);
    spansAndDeltas(this.negative, this.negativeIndexes, negativeSpans, negativeDeltas);
    if (this.zeroThreshold === 0 && this.zeroCount === 0 && positiveSpans.length === 0 && negativeSpans.length === 0) {
      positiveSpans.push({ offset: 0, length: 0 });
    }
    return {
      schema: this.currentSchema,
      zeroThreshold: this.zeroThreshold,
      zeroCount: this.zeroCount,
      count: this.count,
      sum: this.sum,
      positiveSpans,
      positiveDeltas,
      negativeSpans,
      negativeDeltas,
    };
  }
}
