/**
 * The metrics exposition engine: renders a registry of prom-client 15 or `@prometheus-io/client`
 * 0.16 as Prometheus text 0.0.4, OpenMetrics 1.0.0 or the delimited protobuf exposition (the one
 * that carries native histograms), in time slices, without ever changing the registry (unlike
 * switching its content type, which makes prom-client rename counters in place: prom-client issue
 * #829). It knows nothing of HTTP: the router negotiates the format (`negotiation.ts`) and sends
 * the bytes.
 *
 * A registry goes one way through it: here, the render entry, which starts the reading and drives
 * it; `adapters/`, one per way a client's series are read (prom-client 15's `hashMap`,
 * `@prometheus-io/client`'s `LabelMap`, any metric's public `get()`), which read every metric into
 * the one model of families and series (`model.ts`: name, HELP, type, unit; per series labels,
 * value or buckets, sum and count, exemplars, native buckets, start timestamps); one encoder per
 * format that reads only the model (`text.ts` for text and OpenMetrics, `protobuf.ts`); and the
 * sink (`sink.ts`), which gathers the output into blocks. The model streams: a family's series go
 * from its adapter to the encoder one per step, in one reused object, and the registry is never
 * held whole.
 */
import { createGzip } from 'node:zlib';
import { clientOfRegistry } from '../client';
import type { MetricsRegistry } from '../shapes';
import { cooperativeTicker } from '../../util/cooperative';
import { callHost } from '../../util/host-promise';
import { collectRegistry, readRegistry, type CollectFailure, type ReadableRegistry } from './adapters';
import type { ExpositionFormat } from './dialect';
import { readOnce } from './in-flight';
import type { Encoder, ExemplarSource, Family, Series } from './model';
import { answeredEscaping, NameWriter, type NameEscaping } from './name-writer';
import { contentTypeOf, registryFormat } from './negotiation';
import { ProtobufEncoder } from './protobuf';
import { ChunkSink, keepBlocks, type BlockConsumer, type RenderedBody } from './sink';
import { TextFormatEncoder } from './text';

export { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE, type ExpositionFormat } from './dialect';
export { PROTOBUF_CONTENT_TYPE } from './protobuf';
export type { Exemplar, ExemplarSource, LabelSet, SeriesExemplars, SeriesNative } from './model';
export { NAME_ESCAPINGS, type NameEscaping } from './name-writer';
export { negotiateExposition, registryFormat, type Negotiated } from './negotiation';
export type { RenderedBody } from './sink';
export type { CollectFailure } from './adapters';

/** Longest stretch, in ms, the renderer runs before it yields (well under the 20 ms stall goal). */
export const DEFAULT_SLICE_MS = 5;

/** One rendered scrape, ready to send. */
export interface Exposition {
  /** The exposition in pieces, gzip-compressed when {@link Exposition.contentEncoding} says so. */
  readonly body: RenderedBody;
  /** The format the body is in: the one asked for, unless the registry can only render itself. */
  readonly format: ExpositionFormat;
  /**
   * The body's content type: Prometheus text 0.0.4, OpenMetrics 1.0.0 or the delimited protobuf
   * exposition, with the `escaping` of its names (`text/plain; version=0.0.4; charset=utf-8;
   * escaping=underscores`), or the registry's own content type when it rendered itself.
   */
  readonly contentType: string;
  /** How the names were escaped, as the content type states it; undefined when the registry rendered itself. */
  readonly escaping: NameEscaping | undefined;
  /** `gzip` when the body is compressed. */
  readonly contentEncoding: 'gzip' | undefined;
  /**
   * The metrics whose `collect()` or `get()` threw or rejected, in registry order: left out of the
   * body, which holds every other family.
   */
  readonly failures: readonly CollectFailure[];
}

/** Options of {@link renderExposition}. */
export interface ExpositionOptions {
  /** The format wanted. Default: the registry's own content type's. */
  readonly format?: ExpositionFormat;
  /** Gzip the body. Compression runs on the libuv thread pool, off the event loop. */
  readonly compress: boolean;
  /** Aborting it (a scrape timeout, the scraper gone) stops the rendering at once. */
  readonly signal?: AbortSignal;
  /** Exemplars, native buckets and start timestamps kept outside the client, for OpenMetrics and protobuf answers. */
  readonly exemplars?: ExemplarSource;
  /**
   * The name escaping the scraper asked for (`escaping=` in its `Accept`). Default `underscores`.
   * Names are always written in the legacy character set; see {@link answeredEscaping} for what
   * the answer then states.
   */
  readonly escaping?: NameEscaping;
}

/**
 * Compresses blocks as the renderer fills them, through a zlib stream: the work runs on the libuv
 * thread pool while rendering goes on, and the uncompressed body (18 MB at 100 000 series) is never
 * held whole, so it does not add its size to the external memory that makes V8 collect.
 */
function gzipBlocks(): BlockConsumer {
  const gzip = createGzip();
  const chunks: Buffer[] = [];
  let byteLength = 0;
  gzip.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    byteLength += chunk.length;
  });
  const ended = new Promise<void>((resolve, reject) => {
    gzip.once('end', resolve);
    gzip.once('error', reject);
  });
  // An abandoned rendering destroys the stream; nobody waits for it then.
  ended.catch(() => undefined);
  return {
    push: (block) => void gzip.write(block),
    async end() {
      gzip.end();
      await ended;
      return { chunks, byteLength };
    },
    abort: () => void gzip.destroy(),
  };
}

/**
 * Renders `registry` in the format asked for. A plain Registry of prom-client 15 or
 * `@prometheus-io/client` 0.16 is rendered by this package's renderer in time slices; anything
 * else (a subclass that overrides how it renders, a registry of no client) by its own `metrics()`,
 * in its own format.
 *
 * A metric whose `collect()` or `get()` throws or rejects is left out and listed in `failures`; the
 * registry's own `metrics()` (the fallback) fails whole instead. None of them is called while its
 * previous call is still pending (a rendering abandoned on it, or a concurrent one): this rendering
 * waits on that call instead (`in-flight.ts`).
 *
 * @throws what the fallback's `metrics()` throws or rejects with, or the signal's reason.
 */
export async function renderExposition(registry: MetricsRegistry, options: ExpositionOptions): Promise<Exposition> {
  const readable = readRegistry(registry, clientOfRegistry(registry));
  const contentEncoding = options.compress ? 'gzip' : undefined;
  if (readable === undefined) {
    // Read before rendering: the content type describes the text produced by this call.
    const contentType = registry.contentType;
    // Its metrics() calls every collect(): not again while the previous call is pending (in-flight.ts).
    const rendered = await callHost(() => readOnce(registry, 'metrics', () => registry.metrics()), options.signal);
    const text = Buffer.from(rendered as string, 'utf8');
    const consumer = options.compress ? gzipBlocks() : keepBlocks();
    consumer.push(text);
    // Rendered whole by the registry itself: a collect() that fails fails it all (prom-client's way).
    return {
      body: await consumer.end(),
      format: registryFormat(registry),
      contentType,
      escaping: undefined,
      contentEncoding,
      failures: [],
    };
  }
  const format = options.format ?? registryFormat(registry);
  const consumer = options.compress ? gzipBlocks() : keepBlocks();
  // A scrape abandoned while a collect() never settles never reaches the renderer's own abort: its
  // gzip stream is released here, not left to the hung promise (17 KB each).
  const release = (): void => consumer.abort();
  options.signal?.addEventListener('abort', release, { once: true });
  const names = new NameWriter();
  try {
    const { body, failures } = await renderRegistry(readable, {
      format,
      signal: options.signal,
      exemplars: options.exemplars,
      names,
      consumer,
    });
    const escaping = answeredEscaping(options.escaping ?? 'underscores', names.rewrote);
    return { body, format, contentType: contentTypeOf(format, escaping), escaping, contentEncoding, failures };
  } finally {
    options.signal?.removeEventListener('abort', release);
  }
}

/** Options of {@link renderRegistry}. */
interface RenderOptions {
  /** The format to write. */
  readonly format: ExpositionFormat;
  /** Aborting it stops the rendering at its next step, rejecting with the signal's reason. */
  readonly signal: AbortSignal | undefined;
  /** Exemplars, native buckets and start timestamps kept outside the client. */
  readonly exemplars: ExemplarSource | undefined;
  /** How the scrape writes metric and label names; it tells afterwards whether one was rewritten. */
  readonly names: NameWriter;
  /** Where the encoded blocks go: kept, or compressed as they fill. */
  readonly consumer: BlockConsumer;
}

/** A rendered registry: the body, and the families left out of it. */
interface RenderedRegistry {
  readonly body: RenderedBody;
  readonly failures: readonly CollectFailure[];
}

/**
 * Renders a registry that the adapters read: every metric's read started and awaited, then each
 * family from its adapter to the format's encoder, one series per step, yielding to the event loop
 * whenever the slice budget is used up. The metrics whose `collect()` or `get()` threw or rejected
 * are left out (as client_golang's `ContinueOnError`) and answered beside the body. Rejects with
 * the signal's reason once aborted, or when writing fails; the consumer is then aborted.
 */
async function renderRegistry(registry: ReadableRegistry, options: RenderOptions): Promise<RenderedRegistry> {
  const { signal, consumer, names } = options;
  // Aborting stops the rendering while it waits for its turn: no further slice runs for nobody.
  const step = cooperativeTicker(DEFAULT_SLICE_MS, 8, signal);
  try {
    const collected = await collectRegistry(registry, { step, signal, exemplars: options.exemplars });
    const sink = new ChunkSink(consumer);
    const encoder: Encoder =
      options.format === 'protobuf'
        ? new ProtobufEncoder(sink, names, collected.model)
        : new TextFormatEncoder(options.format, sink, names, collected.model);
    for await (const family of collected.families(encoder.needs)) await encodeFamily(encoder, family, step);
    return { body: await encoder.finish(), failures: collected.failures() };
  } catch (err) {
    consumer.abort();
    throw err;
  }
}

/** One family through the encoder: its series one per step, then the work left at its end one per step. */
async function encodeFamily(encoder: Encoder, family: Family, step: () => Promise<void> | undefined): Promise<void> {
  encoder.begin(family);
  const all: Iterator<Series | undefined> = family.series;
  for (let next = all.next(); next.done !== true; next = all.next()) {
    if (next.value !== undefined) encoder.series(next.value);
    const pause = step();
    if (pause !== undefined) await pause;
  }
  for (const _ of encoder.end()) {
    const pause = step();
    if (pause !== undefined) await pause;
  }
}

/** The exposition of `registry` in `format` as one string, uncompressed: for tests and tools, not for serving. */
export async function renderExpositionText(registry: MetricsRegistry, format?: ExpositionFormat): Promise<string> {
  const { body } = await renderExposition(registry, { format, compress: false });
  return Buffer.concat(body.chunks as Buffer[], body.byteLength).toString('utf8');
}
