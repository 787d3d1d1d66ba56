import { Router, type Request, type Response } from 'express';
import { answerErrors, handle, HttpError } from '../http/errors';
import { readOnly } from '../http/methods';
import { describeValue } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { cutText, MAX_ECHOED_MESSAGE } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import { stillThere, watchClientGone } from '../http/client-gone';
import { withTimeout } from '../util/with-timeout';
import { performance } from 'node:perf_hooks';
import { acceptRanges, prefersGzip } from '../http/header-lists';
import { DEFAULT_SLICE_MS, negotiateExposition, registryFormat, renderExposition, type CollectFailure } from './exposition';
import { setNoStoreHeaders } from '../http/headers';
import { OutputGuard } from '../json-stream/output';
import { cooperativeTicker } from '../util/cooperative';
import { CARRIED_EXEMPLARS } from './exemplar-store';
import { checkedClientOf } from './client';
import { EXACT_ROUTING } from '../http/request-path';
import type { MetricsRegistry } from './shapes';

/** Options of {@link createMetricsRouter}. */
export interface MetricsRouterOptions {
  /** Path the metrics are served at, relative to where the router is mounted. Default `/metrics`. */
  path?: string;
  /** Gzip the response when the scraper's `Accept-Encoding` allows it (Prometheus does). Default `true`. */
  compression?: boolean;
  /**
   * Told about every metric left out of a scrape (a {@link MetricCollectError}: its `collect()` or
   * `get()` threw or rejected, or a host callback it reads answered a wrong value; the scraper gets
   * every other family), and about every scrape that failed whole (a registry that renders itself
   * failed, or the scrape timed out: the scraper gets a 500 or 503), so the host can log them.
   * Without it, a family that starts failing is reported once with `process.emitWarning`, again
   * only after it recovered. Errors thrown by this callback are ignored.
   */
  onError?: (error: unknown) => void;
  /**
   * How long one scrape may wait for the registry (every metric's `collect()`), in milliseconds,
   * before answering `503`. Default 8000, below Prometheus' usual 10 s scrape timeout, so that a
   * `collect()` that never settles fails the scrape clearly instead of hanging it. A `collect()`
   * still pending from an earlier scrape is not called again: the next scrape waits on that same
   * one, for its own `scrapeTimeoutMs`, and calls it again only once it has settled.
   */
  scrapeTimeoutMs?: number;
}

/** The options of {@link createMetricsRouter}, declared once: kinds, ranges and defaults. */
const METRICS_ROUTER_SPEC = optionSpec('createMetricsRouter', {
  /** Served at `/metrics`. */
  path: option.custom('/metrics', ({ where, path, value, fallback }) => {
    if (value === undefined) return fallback;
    if (typeof value === 'string' && value.startsWith('/')) return value;
    throw new TypeError(`${where}: ${path} must be a string starting with "/" (for example "/metrics"), got ${describeValue(value)}`);
  }),
  /** Gzip when the scraper accepts it. */
  compression: option.boolean(true),
  /** Failures reported with `process.emitWarning`. */
  onError: option.callback<(error: unknown) => void>('a function (for example (err) => logger.error(err))'),
  /** 8 s per scrape, below Prometheus' usual 10 s scrape timeout. */
  scrapeTimeoutMs: option.integer(8000, { min: 1, max: 600_000 }),
});

/**
 * A metric left out of one scrape because reading it failed: its `collect()` or `get()` threw or
 * rejected, for example with an error naming a host callback and what it answered
 * (`state.resourceCounts() returned null; …`). The scrape answers every other family; the next
 * scrape reads this one again.
 */
export class MetricCollectError extends Error {
  /** The family left out, as the registry names it. */
  readonly family: string;

  /**
   * The error for one family left out of a scrape; the router makes it, a host only reads it.
   *
   * @param family - The family left out.
   * @param cause - What its `collect()` or `get()` threw or rejected with.
   */
  constructor(family: string, cause: unknown) {
    super(`collecting metric "${cutText(family, 200)}" failed: ${cutText(errorMessage(cause), MAX_ECHOED_MESSAGE) || 'unknown error'}`, {
      cause,
    });
    this.name = 'MetricCollectError';
    this.family = family;
  }
}

/**
 * The metrics endpoint: `GET`/`HEAD <path>` answers the registry's metrics, rendered by this
 * package in time slices of 5 ms, in the format the scraper's `Accept` prefers: OpenMetrics
 * 1.0.0 or Prometheus text 0.0.4 (byte-identical to prom-client's `registry.metrics()` wherever
 * that is valid). `Accept` is matched as Prometheus matches it: `version` selects, other
 * parameters never disqualify, and the `Content-Type` states the name `escaping` (see
 * `exposition/negotiation.ts`). A request that states no usable preference gets the registry's own format.
 * An `Accept` or `Accept-Encoding` over 4096 characters or 64 elements answers 431. The registry
 * itself is never changed. Gzip-compressed when accepted,
 * never cached. OpenMetrics answers carry the exemplars `createControllerMetrics` keeps for this
 * registry (each cycle's `correlation_id`). Other methods answer 405 with `Allow: GET, HEAD`.
 *
 * A metric whose `collect()` or `get()` throws or rejects (the host's own, or one of this package's
 * whose host callback answered a wrong value) is left out of that scrape and reported to `onError`
 * as a {@link MetricCollectError}; every other family is served, as client_golang's
 * `ContinueOnError` does, and the next scrape reads it again. What cannot be split fails the
 * scrape whole: a registry that renders itself (`500 {"error": "..."}`), or a scrape that runs out
 * of `scrapeTimeoutMs` (`503`). A metric's `collect()` (or `get()`, or a self-rendering registry's
 * `metrics()`) is never started while its previous call is still pending: a scrape that finds it
 * pending waits on that call, so a `collect()` that never settles is called once, not once per
 * timed-out scrape, and every scrape answers `503` until it settles.
 *
 * The registry is a Registry of prom-client 15 or of `@prometheus-io/client` 0.16 (its metrics are
 * read through their storage, read only: `@prometheus-io/client`'s one series per step,
 * prom-client 15's after listing a metric's keys in one step, docs/metrics.md), or any object with
 * `metrics()`, which then renders itself in its own format.
 *
 * @param registry - The registry to expose (text or OpenMetrics content type).
 * @param options - See {@link MetricsRouterOptions}.
 * @throws TypeError on invalid arguments, or when the registry and one of its metrics come from two
 *   metrics clients (prom-client and `@prometheus-io/client`, or two copies of one).
 */
export function createMetricsRouter(registry: MetricsRegistry, options: MetricsRouterOptions = {}): Router {
  if (typeof registry !== 'object' || registry === null || typeof registry.metrics !== 'function') {
    throw new TypeError(
      'createMetricsRouter: the first argument must be a Registry of prom-client or @prometheus-io/client, for example new Registry()',
    );
  }
  const { path, compression, onError, scrapeTimeoutMs } = METRICS_ROUTER_SPEC.resolve(options);
  checkedClientOf(registry, 'createMetricsRouter');

  const report = failureReporter(onError);
  // How long the last scrape took to render, in ms: this router's own, to size the wait above.
  let lastRenderMs = 0;

  async function serveMetrics(req: Request, res: Response): Promise<void> {
    // Only gzip and identity are offered; `gzip;q=0` or no header means identity.
    const useGzip = compression && prefersGzip(req);
    const { format, escaping } = negotiateExposition(acceptRanges(req), registryFormat(registry));
    // The scrape is given up when the scraper goes away before its answer is complete, or when it
    // times out: the rendering stops at once (it is waiting for its turn, or for a collect()), so
    // no CPU is spent on a body nobody reads and nothing is left attached to a hung collect().
    const gone = watchClientGone(res);
    const abandoned = gone.controller;
    let exposition;
    try {
      // A scraper that hung up right after asking is seen before any slice is rendered for it; when
      // the last rendering took more than a slice, a millisecond more is nothing beside this one.
      if (!(await stillThere(res, gone, lastRenderMs > DEFAULT_SLICE_MS ? 1 : 0))) abandoned.signal.throwIfAborted();
      const started = performance.now();
      exposition = await withTimeout(
        () =>
          renderExposition(registry, {
            format,
            escaping,
            compress: useGzip,
            signal: abandoned.signal,
            exemplars: CARRIED_EXEMPLARS,
          }),
        scrapeTimeoutMs,
        () => new ScrapeTimeoutError(scrapeTimeoutMs),
        abandoned.signal,
      );
      lastRenderMs = performance.now() - started;
    } catch (err) {
      gone.release();
      const left = abandoned.signal.aborted;
      abandoned.abort(err);
      // Nobody is left to answer, and a scraper hanging up is not the host's error.
      if (left) return;
      reportError(onError, err);
      throw new HttpError(...scrapeFailure(err));
    }
    report(exposition.failures);
    res.status(200);
    res.setHeader('Content-Type', exposition.contentType);
    setNoStoreHeaders(res);
    res.setHeader('Vary', compression ? 'Accept, Accept-Encoding' : 'Accept');
    if (exposition.contentEncoding !== undefined) res.setHeader('Content-Encoding', exposition.contentEncoding);
    res.setHeader('Content-Length', exposition.body.byteLength);
    // HEAD is rendered too, so its status and headers are exactly those a GET would get.
    try {
      if (req.method === 'HEAD') res.end();
      else await sendChunks(res, exposition.body.chunks, abandoned.signal);
    } finally {
      gone.release();
    }
  }

  const router = Router(EXACT_ROUTING);
  router.route(path).all(readOnly()).get(handle(serveMetrics));
  router.use(answerErrors());
  return router;
}

/**
 * Sends the body's blocks (256 KB each) a few per turn, following back-pressure: handing a socket
 * 18 MB at once copies it all into the kernel in one turn. Each block waits for room in the turn
 * first, so twenty scrapes whose sockets drain together do not write twenty blocks in one turn. A
 * client that goes away stops the sending; the headers are out by then, so there is nothing left to
 * answer.
 */
async function sendChunks(res: Response, chunks: readonly Buffer[], signal: AbortSignal): Promise<void> {
  // The scrape's signal: its sending keeps the place its rendering had, and stops if it leaves.
  const guard = new OutputGuard(res, signal);
  const tick = cooperativeTicker(undefined, 1, signal);
  try {
    for (const chunk of chunks) {
      const pause = tick();
      if (pause) await pause.catch(() => undefined);
      guard.check();
      if (!res.write(chunk)) await guard.drain();
    }
    guard.check();
    res.end();
  } catch {
    res.destroy();
  } finally {
    guard.dispose();
  }
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

/**
 * Reports the metrics each scrape left out: every one to `onError` when the host gave it; else a
 * family that starts failing once, through `process.emitWarning`, and again only after a scrape
 * that read it (so a family failing on every scrape is one warning, not one per scrape). It holds
 * the names failing at the last scrape, never more.
 */
function failureReporter(onError: ((error: unknown) => void) | undefined): (failures: readonly CollectFailure[]) => void {
  let warned = new Set<string>();
  return (failures) => {
    const errors = failures.map(({ family, error }) => new MetricCollectError(family, error));
    if (onError !== undefined) {
      for (const error of errors) reportError(onError, error);
      return;
    }
    const failing = new Set<string>();
    for (const error of errors) {
      failing.add(error.family);
      if (!warned.has(error.family)) warn(error);
    }
    warned = failing;
  };
}

/** A warning for the process's `warning` listeners (Node prints it to stderr by default); never throws. */
function warn(error: MetricCollectError): void {
  try {
    process.emitWarning(error.message, { type: error.name, code: 'METRIC_COLLECT_FAILED' });
  } catch {
    // A throwing `warning` listener must not fail the answer the families were served in.
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
