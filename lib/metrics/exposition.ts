import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Registry, RegistryContentType } from 'prom-client';

const gzipAsync = promisify(gzip);

/** One rendered scrape, ready to send. */
export interface Exposition {
  /** The exposition text, gzip-compressed when {@link Exposition.contentEncoding} says so. */
  readonly body: Buffer;
  /** The registry's own content type: Prometheus text 0.0.4 or OpenMetrics 1.0.0. */
  readonly contentType: string;
  /** `gzip` when the body is compressed. */
  readonly contentEncoding: 'gzip' | undefined;
}

/**
 * Renders `registry` in the format it was created with.
 *
 * The format is deliberately not negotiated per request: switching a shared registry's content
 * type for one response makes prom-client rename counters in place (prom-client issue #829), which
 * corrupts every later scrape in the other format. A host wanting OpenMetrics creates its registry
 * with `Registry.OPENMETRICS_CONTENT_TYPE`.
 *
 * Compression runs on the libuv thread pool (async zlib) so a large exposition does not block the
 * event loop that the controller itself runs on.
 *
 * @throws whatever a metric's `collect()` throws or rejects with.
 */
export async function renderExposition(registry: Registry<RegistryContentType>, compress: boolean): Promise<Exposition> {
  // Read before rendering: the content type describes the text produced by this call.
  const contentType = registry.contentType;
  const text = await registry.metrics();
  const raw = Buffer.from(text, 'utf8');
  if (!compress) return { body: raw, contentType, contentEncoding: undefined };
  return { body: await gzipAsync(raw), contentType, contentEncoding: 'gzip' };
}
