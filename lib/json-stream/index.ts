/**
 * Writes large JSON values (a busy controller's state can be 50 MB) to a response without
 * blocking the event loop: the exact bytes of `JSON.stringify(value)` are produced in short
 * synchronous slices, written in chunks that respect back-pressure, and production stops as soon
 * as the client goes away.
 *
 * When an error is found: a value whose problem (cycle, BigInt, a throwing getter or
 * `toJSON()`) lies within roughly the first `chunkBytes` of output is rejected before any byte is
 * written, because nothing is written until the first chunk is complete. A problem found later
 * rejects after part of the body was sent; the caller must then destroy the connection (as
 * `sendError` does once headers are sent) so the client sees a truncated body, never valid-looking
 * JSON. {@link serializeAtOnce} walks the beginning of a value with user code in it first and so
 * reports problems within its limit before anything is sent.
 */
import { performance } from 'node:perf_hooks';
import { nativeRate } from './cost';
import { sharedProbe } from './probe';
import { JsonChunker } from './serializer';
import { checkOptionObject, integerOption, numberOption, signalOption, type NumberRange } from '../options';
import { cooperativeTicker, nextTurn } from '../util/cooperative';
import { OutputGuard } from './output';
import { JsonStreamAbortError } from './errors';

export { JsonSerializationError, JsonStreamAbortError, type JsonSerializationReason } from './errors';
export { nativeRate, SerializationRate } from './cost';

/** Options of {@link writeJson}. */
export interface JsonStreamOptions extends JsonBounds {
  /**
   * Longest synchronous stretch, in milliseconds, before giving the event loop a turn (default 2:
   * a single atomic step, such as listing the keys of an object with tens of thousands of them,
   * can add several milliseconds to a slice).
   * Time is checked every few hundred nodes, so a single slow getter or `toJSON()` can overrun it.
   */
  sliceMs?: number;
  /**
   * Target size of each write (default 64 KiB), counted in UTF-16 code units of JSON text: equal
   * to bytes for ASCII, up to 3 bytes per unit otherwise. A single object key longer than this,
   * or heavily escaped string content, can make one write larger.
   */
  chunkBytes?: number;
  /** Aborting stops writing promptly; the promise then rejects with a `JsonStreamAbortError`. */
  signal?: AbortSignal;
}

/**
 * Bounds on what one value may make the serializer write (see `JsonChunkerOptions`): plain data
 * is finite, values that getters, `toJSON()` or Proxies produce while being written need not be.
 * The defaults below apply unless a caller passes its own.
 */
export interface JsonBounds {
  /** Deepest nesting of any value. Default 200 000. */
  maxDepth?: number;
  /** Deepest nesting inside values that user code produced. Default 1 000. */
  maxComputedDepth?: number;
  /** Most JSON (in UTF-16 units, bytes for ASCII) that user code may produce. Default 64 MiB. */
  maxComputedBytes?: number;
}

/**
 * What the options of {@link writeJson}, {@link measureJson}, {@link serializeAtOnce} and
 * {@link stringifyAtOnce} resolve to when omitted. Frozen. `budgetMs` has no default.
 */
export const JSON_STREAM_DEFAULTS = Object.freeze({
  /** {@link writeJson} gives the event loop a turn after 2 ms. */
  sliceMs: 2,
  /** {@link writeJson} writes 64 KiB at a time. */
  chunkBytes: 64 * 1024,
  /** {@link measureJson} measures it all. */
  limitBytes: Infinity,
  /** {@link serializeAtOnce}: no size cap beside the time budget. */
  maxBytes: Infinity,
  /** {@link serializeAtOnce}: no expectation of the length. */
  expectedBytes: 0,
  /** See {@link JsonBounds.maxDepth}. */
  maxDepth: 200_000,
  /** See {@link JsonBounds.maxComputedDepth}. */
  maxComputedDepth: 1_000,
  /** See {@link JsonBounds.maxComputedBytes}. */
  maxComputedBytes: 64 * 1024 * 1024,
});

/** The bounds every writer and measure uses unless told otherwise (those of {@link JSON_STREAM_DEFAULTS}). */
export const DEFAULT_JSON_BOUNDS: Readonly<Required<JsonBounds>> = Object.freeze({
  maxDepth: JSON_STREAM_DEFAULTS.maxDepth,
  maxComputedDepth: JSON_STREAM_DEFAULTS.maxComputedDepth,
  maxComputedBytes: JSON_STREAM_DEFAULTS.maxComputedBytes,
});

const BOUND_NAMES = ['maxDepth', 'maxComputedDepth', 'maxComputedBytes'] as const;
const WRITE_OPTIONS = ['sliceMs', 'chunkBytes', 'signal', ...BOUND_NAMES] as const;
const MEASURE_OPTIONS = ['limitBytes', 'signal', ...BOUND_NAMES] as const;
const AT_ONCE_OPTIONS = ['budgetMs', 'maxBytes', 'expectedBytes', ...BOUND_NAMES] as const;
// A longer synchronous budget or slice than a second is a stall, whoever asks for it.
const BUDGET_RANGE: NumberRange = { min: 0, max: 1000 };
const SLICE_RANGE: NumberRange = { min: 0, max: 1000, minExcluded: true };
const NOT_NEGATIVE: NumberRange = { min: 0, max: Infinity };
const AT_LEAST_ONE: NumberRange = { min: 1, max: Infinity };
// One chunk is held whole in memory before it is written.
const MAX_CHUNK_BYTES = 64 * 1024 * 1024;

/** The serializer's bounds from checked options. */
function chunkerBounds(
  where: string,
  given: Record<string, unknown>,
): { maxDepth: number; maxComputedDepth: number; maxComputedChars: number } {
  const bound = (name: (typeof BOUND_NAMES)[number]): number =>
    numberOption(where, name, given[name], DEFAULT_JSON_BOUNDS[name], AT_LEAST_ONE);
  return { maxDepth: bound('maxDepth'), maxComputedDepth: bound('maxComputedDepth'), maxComputedChars: bound('maxComputedBytes') };
}

// Measuring (?size=1, the size check of a multi-valued selection) keeps 4 ms slices: it is bounded by
// a limit rather than a whole dump, and with shorter ones a measure that shares the loop with a
// stream of other requests gets half the turns and can take seconds of wall time.
const MEASURE_SLICE_MS = 4;
// Nodes between two clock reads: ~50 µs of work for small nodes, so a slice overruns sliceMs by
// little while performance.now() stays below 1% of the cost.
const UNITS_PER_CHECK = 512;

/**
 * Writes exactly the bytes of `JSON.stringify(value)` to `out`, in chunks of about
 * `chunkBytes`, yielding to the event loop (`setImmediate`) whenever a slice has run `sliceMs` and
 * waiting for `'drain'` whenever `out.write()` returns false, so memory stays bounded by the
 * output's buffer plus one chunk whatever the value's size.
 *
 * It does not set headers and does not end `out`: the caller does both (this allows wrapping the
 * value in more output). It resolves, with the length written in UTF-16 units (bytes for ASCII),
 * once the last chunk has been handed to `out.write()`.
 *
 * Getters and `toJSON()` run as they would under `JSON.stringify`, but spread over
 * time: a value mutated while it is being written may be written half old, half new.
 *
 * @throws {JsonSerializationError} (rejection) for a cycle, a BigInt (not JSON; convert it in the
 *   provider), a top-level value with no JSON form (`undefined`, a function, a symbol), or user code
 *   that throws; the message names the JSONPath, e.g. `$.vars.foo.bar: cycle (...)`. See the module
 *   comment for whether bytes were sent by then.
 * @throws {JsonStreamAbortError} (rejection) when `signal` aborts or `out` closes first.
 * @throws {TypeError} (rejection) for invalid options, before anything is written.
 */
export async function writeJson(out: NodeJS.WritableStream, value: unknown, options: JsonStreamOptions = {}): Promise<number> {
  const given = checkOptionObject('writeJson', '', options ?? null, WRITE_OPTIONS);
  const sliceMs = numberOption('writeJson', 'sliceMs', given['sliceMs'], JSON_STREAM_DEFAULTS.sliceMs, SLICE_RANGE);
  const chunkBytes = integerOption('writeJson', 'chunkBytes', given['chunkBytes'], JSON_STREAM_DEFAULTS.chunkBytes, 1, MAX_CHUNK_BYTES);
  const bounds = chunkerBounds('writeJson', given);
  const signal = signalOption('writeJson', 'signal', given['signal']);
  const guard = new OutputGuard(out, signal);
  try {
    guard.check();
    if (guard.needsDrain) await guard.drain();
    const chunker = new JsonChunker(value, { chunkChars: chunkBytes, ...bounds });
    const tick = cooperativeTicker(sliceMs, 1, signal);
    let written = 0;
    while (!chunker.done) {
      const chunk = chunker.step(UNITS_PER_CHECK);
      if (chunk !== undefined) written += chunk.length;
      // Stop signals can only arrive from user code run by step() or while awaiting below.
      guard.check();
      // Written as a string: a socket encodes it straight into its own write buffer, whereas a
      // Buffer per chunk is external memory that V8 answers with full collections of the host's
      // heap (a fifth of a 50 MB dump's time was spent in them). Back-pressure then counts UTF-16
      // units: bytes for ASCII, at most a third of them otherwise.
      if (chunk !== undefined && chunk.length > 0 && !out.write(chunk, 'utf8')) {
        // drain() resumes on a turn of its own: the next slice starts there.
        await guard.drain();
        continue;
      }
      const pause = pauseFor(chunker, tick, signal);
      if (pause !== undefined) {
        // A pause rejects only when the signal aborts, which check() reports as the guard's error.
        await pause.catch(() => undefined);
        guard.check();
      }
    }
    nativeRate.record(chunker.nativeChars, chunker.nativeMs);
    return written;
  } finally {
    guard.dispose();
  }
}

/**
 * The turn to give the event loop after a step: when the slice is spent, or when the chunker asks.
 * Rejects, with the signal's reason, once `signal` aborts while it waits.
 */
function pauseFor(chunker: JsonChunker, tick: () => Promise<void> | undefined, signal?: AbortSignal): Promise<void> | undefined {
  if (chunker.done) return undefined;
  return chunker.wantsTurn ? nextTurn({ signal }) : tick();
}

/** Options of {@link measureJson}. */
export interface JsonMeasureOptions extends JsonBounds {
  /** Stop once the JSON is known to be longer than this many bytes. Default: measure it all. */
  limitBytes?: number;
  /** Aborting stops measuring promptly; the promise then rejects with a `JsonStreamAbortError`. */
  signal?: AbortSignal;
}

/** Result of {@link measureJson}: the exact UTF-8 length, or the bytes counted once over the limit. */
export interface JsonMeasure {
  readonly exceeds: boolean;
  readonly bytes: number;
}

/**
 * The exact UTF-8 length of the JSON {@link writeJson} would write for `value`, found by the same
 * serializer in the same time slices (so measuring an 80 MB dump never stalls the host), without
 * keeping the text.
 *
 * @throws {JsonSerializationError} (rejection) as {@link writeJson} would.
 * @throws {JsonStreamAbortError} (rejection) when `signal` aborts first.
 */
export async function measureJson(value: unknown, options: JsonMeasureOptions = {}): Promise<JsonMeasure> {
  const given = checkOptionObject('measureJson', '', options, MEASURE_OPTIONS);
  const limit = numberOption('measureJson', 'limitBytes', given['limitBytes'], JSON_STREAM_DEFAULTS.limitBytes, NOT_NEGATIVE);
  const signal = signalOption('measureJson', 'signal', given['signal']);
  const chunker = new JsonChunker(value, { chunkChars: JSON_STREAM_DEFAULTS.chunkBytes, ...chunkerBounds('measureJson', given) });
  const tick = cooperativeTicker(MEASURE_SLICE_MS, 1, signal);
  let bytes = 0;
  while (!chunker.done) {
    const chunk = chunker.step(UNITS_PER_CHECK);
    if (chunk !== undefined) bytes += Buffer.byteLength(chunk, 'utf8');
    if (bytes > limit) return { exceeds: true, bytes };
    const pause = pauseFor(chunker, tick, signal);
    if (pause !== undefined) {
      await pause.catch(() => undefined);
      if (signal?.aborted) throw new JsonStreamAbortError('measuring the JSON size was aborted');
    }
  }
  return { exceeds: false, bytes };
}

/** Options of {@link goJsonPieces}. */
export interface GoJsonOptions {
  /** Give up, answering `undefined`, once the text is longer than this many UTF-8 bytes. */
  readonly maxBytes: number;
  /** The caller's ticker ({@link cooperativeTicker}), asked after every step whether to give the event loop a turn. */
  readonly tick: () => Promise<void> | undefined;
}

/** The text {@link goJsonPieces} wrote, in the pieces it wrote it in, and its exact UTF-8 length. */
export interface GoJsonText {
  /** The text, in the chunks the serializer wrote (each flat, about 64 KiB at most). */
  readonly pieces: string[];
  /** Its UTF-8 length. */
  readonly bytes: number;
}

/**
 * The JSON text Go's `json.Marshal` writes for `value`, as kubectl prints it (compact, keys sorted
 * by code point, HTML-safe escapes, a BigInt as its digits), written by the one serializer with
 * the same bounds and checks as every answer, in time slices: the text in pieces, or `undefined`
 * as soon as it is longer than `maxBytes`, without writing the rest.
 *
 * @throws {JsonSerializationError} (rejection) as {@link writeJson} would, except for a BigInt.
 */
export async function goJsonPieces(value: unknown, options: GoJsonOptions): Promise<GoJsonText | undefined> {
  const chunker = new JsonChunker(value, {
    chunkChars: JSON_STREAM_DEFAULTS.chunkBytes,
    dialect: 'go',
    ...chunkerBounds('goJsonPieces', {}),
  });
  const pieces: string[] = [];
  let bytes = 0;
  while (!chunker.done) {
    const chunk = chunker.step(UNITS_PER_CHECK);
    if (chunk !== undefined && chunk.length > 0) {
      // Measuring also flattens the chunk, built by appending many small strings: kept as it
      // is, a 20 MB text is millions of string fragments that triple its time in collections.
      bytes += Buffer.byteLength(chunk, 'utf8');
      if (bytes > options.maxBytes) return undefined;
      pieces.push(chunk);
    }
    const pause = pauseFor(chunker, options.tick);
    if (pause !== undefined) await pause;
  }
  return { pieces, bytes };
}

/** Options of {@link serializeAtOnce}. */
export interface AtOnceOptions extends JsonBounds {
  /** The longest one synchronous serialisation may be expected to take, in milliseconds. */
  budgetMs: number;
  /** Never at once above this many bytes (UTF-16 units), whatever the time. Default: no cap. */
  maxBytes?: number;
  /**
   * What the caller expects the JSON's length to be (the last answer to the same request, say):
   * above what fits, the value is not walked at all. Only ever a reason to stream, never to skip
   * the checks that make an answer at once safe.
   */
  expectedBytes?: number;
}

/** A body serialised in one piece. */
export interface AtOnce {
  /**
   * The JSON, encoded as UTF-8 once: its length is the Content-Length, and the socket takes it as
   * it is (measuring a string's UTF-8 length and then writing the string encodes it twice).
   */
  readonly body: Buffer;
}

// A one-shot answer is the walk that sizes plain data and proves it free of user code (0.4-0.5x
// native JSON.stringify's time per character, measured on Node 20 and 24), the native call, and the
// UTF-8 encoding (0.2-0.3x): the characters allowed are what native writes in this share of the
// budget.
const NATIVE_SHARE = 0.6;
// The walker, which serialises what native JSON.stringify may not (values with getters, toJSON(),
// Proxies, -0), is several times slower per character than native: its share of the budget is this.
const WALKER_SHARE = 4;
// Captured at load: the fast path must be the intrinsic, whatever the host later patches.
const nativeStringify = JSON.stringify;

/**
 * Serialises `value` in one piece when that is expected to take at most `budgetMs` (judged by
 * {@link nativeRate}, what native serialisation has cost in this process), and returns
 * `undefined` when it would take longer, for the caller to stream it with {@link writeJson}.
 * Plain data is sized by a walk that runs no user code and, when it fits, written by one native
 * `JSON.stringify` call (exact: the same checks as the streaming writer's native runs). Values with
 * user code in them are serialised by the streaming writer's walk, up to a fraction of the budget.
 * Either way the synchronous work is bounded by about the budget, and a large value costs only the
 * walk that found it large.
 *
 * @throws {JsonSerializationError} for a problem within the walked part of a value with user code
 *   in it (cycle, BigInt, no JSON form, throwing user code), so small values are diagnosed before
 *   any byte is sent.
 * @throws {TypeError} for a `budgetMs` or `maxBytes` that is not a number >= 0.
 */
export function serializeAtOnce(value: unknown, options: AtOnceOptions): AtOnce | undefined {
  const text = stringifyAtOnce(value, options, 'serializeAtOnce');
  return text === undefined ? undefined : { body: Buffer.from(text, 'utf8') };
}

/**
 * {@link serializeAtOnce}'s text, before encoding: for callers that frame many small values into
 * one write (the event watch), so each value is checked and bounded exactly as a whole answer is.
 *
 * @throws as {@link serializeAtOnce} does.
 */
export function stringifyAtOnce(value: unknown, options: AtOnceOptions, where = 'stringifyAtOnce'): string | undefined {
  const given = checkOptionObject(where, '', options, AT_ONCE_OPTIONS);
  const budgetMs = numberOption(where, 'budgetMs', given['budgetMs'], undefined, BUDGET_RANGE);
  const maxBytes = numberOption(where, 'maxBytes', given['maxBytes'], JSON_STREAM_DEFAULTS.maxBytes, NOT_NEGATIVE);
  const expectedBytes = numberOption(where, 'expectedBytes', given['expectedBytes'], JSON_STREAM_DEFAULTS.expectedBytes, NOT_NEGATIVE);
  const bounds = chunkerBounds(where, given);
  const limit = Math.min(nativeRate.charsWithin(budgetMs * NATIVE_SHARE), maxBytes);
  if (expectedBytes > limit) return undefined;
  if (typeof value === 'object' && value !== null) {
    const probe = sharedProbe;
    if (probe.measure(value, limit) >= 0) {
      const started = performance.now();
      const text = nativeStringify(value) as string;
      nativeRate.record(text.length, performance.now() - started);
      return text;
    }
    // Plain data, only too large: streaming it is the answer, and the walker would find that again.
    if (!probe.refused) return undefined;
  }
  return walkAtOnce(value, Math.floor(limit / WALKER_SHARE), bounds);
}

/** The streaming writer's walk, kept whole while it stays within `limit` characters and nodes. */
function walkAtOnce(value: unknown, limit: number, bounds: ReturnType<typeof chunkerBounds>): string | undefined {
  const chunkChars = Math.max(16, Math.min(JSON_STREAM_DEFAULTS.chunkBytes, limit + 1));
  const chunker = new JsonChunker(value, { chunkChars, ...bounds });
  // Characters, as the limit is counted: bytes are known once the whole text is encoded.
  let chars = 0;
  const chunks: string[] = [];
  while (!chunker.done) {
    const chunk = chunker.step(UNITS_PER_CHECK);
    if (chunk !== undefined) {
      chars += chunk.length;
      chunks.push(chunk);
    }
    // Many skipped `undefined` members are costly to walk yet write nothing: nodes count too.
    if (chars > limit || chunker.visited > limit) return undefined;
  }
  return chunks.join('');
}
