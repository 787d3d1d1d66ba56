/**
 * The metrics exposition engine: renders a prom-client registry as Prometheus text 0.0.4 or
 * OpenMetrics 1.0.0, in time slices, without ever changing the registry (unlike switching its
 * content type, which makes prom-client rename counters in place: prom-client issue #829). It
 * knows nothing of HTTP: the router picks the format and sends the bytes.
 */
import { createGzip } from 'node:zlib';
import { OPENMETRICS_CONTENT_TYPE, dialectOf, type ExpositionFormat } from './dialect';
import { PROTOBUF_CONTENT_TYPE } from './protobuf';
import type { ExemplarSource } from './exemplars';
import { readOnce } from './in-flight';
import { readRegistry } from './internals';
import { clientOfRegistry } from '../client';
import type { MetricsRegistry } from '../shapes';
import { answeredEscaping, NameWriter, type NameEscaping } from './name-writer';
import { renderRegistry, type CollectFailure } from './render';
import { callHost } from '../../util/host-promise';
import { keepBlocks, type BlockConsumer, type RenderedBody } from './sink';

export { OPENMETRICS_CONTENT_TYPE, TEXT_CONTENT_TYPE, type ExpositionFormat } from './dialect';
export { PROTOBUF_CONTENT_TYPE } from './protobuf';
export type { Exemplar, ExemplarSource, SeriesExemplars, SeriesNative } from './exemplars';
export { NAME_ESCAPINGS, type NameEscaping } from './name-writer';
export type { RenderedBody } from './sink';
export type { CollectFailure } from './render';
export { DEFAULT_SLICE_MS } from './render';

/** One rendered scrape, ready to send. */
export interface Exposition {
  /** The exposition in pieces, gzip-compressed when {@link Exposition.contentEncoding} says so. */
  readonly body: RenderedBody;
  /** The format the body is in: the one asked for, unless the registry can only render itself. */
  readonly format: ExpositionFormat;
  /**
   * The body's content type: Prometheus text 0.0.4 or OpenMetrics 1.0.0, with the `escaping` of
   * its names (`text/plain; version=0.0.4; charset=utf-8; escaping=underscores`), or the
   * registry's own content type when it rendered itself.
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
  /** Exemplars kept outside prom-client, for OpenMetrics answers. */
  readonly exemplars?: ExemplarSource;
  /**
   * The name escaping the scraper asked for (`escaping=` in its `Accept`). Default `underscores`.
   * Names are always written in the legacy character set; see {@link answeredEscaping} for what
   * the answer then states.
   */
  readonly escaping?: NameEscaping;
}

/** The format a registry renders itself in when asked for nothing: its content type's. */
export function registryFormat(registry: MetricsRegistry): ExpositionFormat {
  return registry.contentType === OPENMETRICS_CONTENT_TYPE ? 'openmetrics' : 'text';
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
 * Renders `registry` in the format asked for. A plain prom-client 15 Registry is rendered by this
 * package's renderer in time slices; anything else (a subclass that overrides how it renders,
 * another copy or major of prom-client) by its own `metrics()`, in its own format.
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
    const mediaType = format === 'protobuf' ? PROTOBUF_CONTENT_TYPE : dialectOf(format).contentType;
    return { body, format, contentType: `${mediaType}; escaping=${escaping}`, escaping, contentEncoding, failures };
  } finally {
    options.signal?.removeEventListener('abort', release);
  }
}

/** The exposition of `registry` in `format` as one string, uncompressed: for tests and tools, not for serving. */
export async function renderExpositionText(registry: MetricsRegistry, format?: ExpositionFormat): Promise<string> {
  const { body } = await renderExposition(registry, { format, compress: false });
  return Buffer.concat(body.chunks as Buffer[], body.byteLength).toString('utf8');
}
