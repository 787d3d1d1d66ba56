import { Router, type Request, type Response } from 'express';
import type { Registry, RegistryContentType } from 'prom-client';
import { answerErrors, handle, HttpError } from '../http/errors';
import { readOnly } from '../http/methods';
import { checkOptionObject, integerOption } from '../options';
import { errorMessage } from '../util/error-message';
import { withTimeout } from '../util/with-timeout';
import { renderExposition } from './exposition';
import { setNoStoreHeaders } from '../http/headers';

/** Options of {@link createMetricsRouter}. */
export interface MetricsRouterOptions {
  /** Path the metrics are served at, relative to where the router is mounted. Default `/metrics`. */
  path?: string;
  /** Gzip the response when the scraper's `Accept-Encoding` allows it (Prometheus does). Default `true`. */
  compression?: boolean;
  /**
   * Told about every failed scrape (a metric's `collect()` threw or rejected) so the host can log
   * it; the scraper only sees a 500. Errors thrown by this callback are ignored.
   */
  onError?: (error: unknown) => void;
  /**
   * How long one scrape may wait for the registry (every metric's `collect()`), in milliseconds,
   * before answering `503`. Default 8000, below Prometheus' usual 10 s scrape timeout, so that a
   * `collect()` that never settles fails the scrape clearly instead of hanging it; the next scrape
   * tries again.
   */
  scrapeTimeoutMs?: number;
}

const METRICS_ROUTER = 'createMetricsRouter';

/**
 * The metrics endpoint: `GET`/`HEAD <path>` answers `registry.metrics()` with `registry.contentType`
 * (Prometheus text, or OpenMetrics for an OpenMetrics registry), gzip-compressed when accepted, never
 * cached. Other methods answer 405 with `Allow: GET, HEAD`. A failing `collect()` answers 500
 * `{"error": "..."}` and does not affect the next scrape.
 *
 * The exposition format is the registry's own: it is not negotiated from `Accept`, because changing
 * a shared registry's content type per request corrupts later scrapes (prom-client issue #829).
 *
 * @param registry - The prom-client registry to expose (text or OpenMetrics).
 * @param options - See {@link MetricsRouterOptions}.
 * @throws TypeError on invalid arguments.
 */
export function createMetricsRouter(registry: Registry<RegistryContentType>, options: MetricsRouterOptions = {}): Router {
  if (typeof registry !== 'object' || registry === null || typeof registry.metrics !== 'function') {
    throw new TypeError('createMetricsRouter needs a prom-client Registry as first argument, for example new Registry()');
  }
  checkOptionObject(METRICS_ROUTER, '', options, ['path', 'compression', 'onError', 'scrapeTimeoutMs']);
  const scrapeTimeoutMs = integerOption(METRICS_ROUTER, 'scrapeTimeoutMs', options.scrapeTimeoutMs, 8000, 1, 600_000);
  const path = options.path === undefined ? '/metrics' : options.path;
  if (typeof path !== 'string' || !path.startsWith('/')) {
    throw new TypeError(
      `createMetricsRouter option "path" must be a string starting with "/", for example "/metrics"; got ${JSON.stringify(path)}`,
    );
  }
  const compression = options.compression === undefined ? true : options.compression;
  if (typeof compression !== 'boolean') {
    throw new TypeError('createMetricsRouter option "compression" must be a boolean');
  }
  const onError = options.onError;
  if (onError !== undefined && typeof onError !== 'function') {
    throw new TypeError('createMetricsRouter option "onError" must be a function, for example (err) => logger.error(err)');
  }

  async function serveMetrics(req: Request, res: Response): Promise<void> {
    // Only gzip and identity are offered; `gzip;q=0` or no header means identity.
    const useGzip = compression && req.acceptsEncodings('gzip', 'identity') === 'gzip';
    let exposition;
    try {
      exposition = await withTimeout(
        () => renderExposition(registry, useGzip),
        scrapeTimeoutMs,
        () => new ScrapeTimeoutError(scrapeTimeoutMs),
      );
    } catch (err) {
      reportError(onError, err);
      throw new HttpError(...scrapeFailure(err));
    }
    res.status(200);
    res.setHeader('Content-Type', exposition.contentType);
    setNoStoreHeaders(res);
    if (compression) res.setHeader('Vary', 'Accept-Encoding');
    if (exposition.contentEncoding !== undefined) res.setHeader('Content-Encoding', exposition.contentEncoding);
    res.setHeader('Content-Length', exposition.body.length);
    // HEAD is rendered too, so its status and headers are exactly those a GET would get.
    if (req.method === 'HEAD') res.end();
    else res.end(exposition.body);
  }

  const router = Router();
  router.route(path).all(readOnly()).get(handle(serveMetrics));
  router.use(answerErrors());
  return router;
}

/** The status, message and headers of a failed scrape: 503 (retry soon) for a timeout, else 500. */
function scrapeFailure(err: unknown): [number, string, Record<string, string>] {
  if (err instanceof ScrapeTimeoutError) return [503, err.message, { 'Retry-After': '1' }];
  return [500, `collecting metrics failed: ${errorMessage(err) || 'unknown error'}`, {}];
}

/** A scrape that waited longer than `scrapeTimeoutMs` for the registry. */
class ScrapeTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`collecting metrics timed out after ${timeoutMs} ms (a metric's collect() did not settle; option scrapeTimeoutMs)`);
    this.name = 'ScrapeTimeoutError';
  }
}

function reportError(onError: ((error: unknown) => void) | undefined, err: unknown): void {
  if (onError === undefined) return;
  try {
    onError(err);
  } catch {
    // A broken logger must not turn a clean 500 into an unhandled rejection.
  }
}
