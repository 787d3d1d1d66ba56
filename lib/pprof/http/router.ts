import { Router, type NextFunction, type Request, type Response } from 'express';
import { answerErrors, handle, HttpError } from '../../http/errors';
import { preferredMediaType } from '../../http/header-lists';
import { readOnly } from '../../http/methods';
import { boundQuery, MAX_QUERY_CHARS, queryString } from '../../http/query';
import { PROFILE_NAMES, isProfileName } from '../catalog';
import { SYMBOL_NOT_APPLICABLE, commandLine } from '../cmdline';
import type { BackendName } from '../cpu/backend';
import { isProfiling } from '../cpu/session';
import { ProfilerBusyError, SamplerStoppedError } from '../errors';
import { PPROF_OPTION_KEYS, type PprofOptions } from '../options';
import { checkStateInPlace } from '../../options';
import type { IntrospectionStateReader } from '../../state/types';
import { serveHeap } from './heap';
import { indexHtml, indexJson, traceIndex, type IndexModel } from './index-page';
import { serveProfile } from './profile';
import { parseProfileQuery } from './query';
import { JSON_TYPE, TEXT, sendBody } from './respond';
import { startProfilingRuntime, type ProfilingRuntime } from './runtime';
import { serveSnapshot } from './snapshots';
import { serveTrace } from './trace';
import { EXACT_ROUTING } from '../../http/request-path';
import { closeOnce } from '../../util/close-once';

const WHERE = 'createPprofRouter';

/** The router returned by {@link createPprofRouter}. */
export type PprofRouter = Router & {
  /**
   * Stops heap sampling and the delay monitor, cancels a running CPU profile and, for the last
   * router in the process, disposes of V8's warm CPU profiler; leaves no timers. Requests from then
   * on answer 503. Settles once the profiles in flight stopped (each at its next step), within
   * 5 s at the most; never rejects. Idempotent: every call answers
   * the same promise. Fits `drain({ close: [router] })`.
   */
  close(): Promise<void>;
  /** The CPU profiler in use. */
  readonly backend: BackendName;
  /** Why that backend, e.g. `v8-profiler-next failed to load (...); fell back to node:inspector`. */
  readonly backendReason: string;
};

/**
 * How long a router's `close()` waits at the most for the profiles in flight to stop: they stop at
 * their next step, milliseconds after the signal; this bounds it should one not.
 */
export const PPROF_CLOSE_BOUND_MS = 5000;

/**
 * The pprof router's statuses for the profilers' own errors. A recording that runs once per process
 * (a CPU profile, a trace) asked for while one runs is a `503` with `Retry-After` (the running one's
 * remaining seconds) and a JSON body, as Go's `profile` refuses a second concurrent CPU profile: a
 * second scraper, or a scraper beside an operator's `go tool pprof`, is told to come back, and no
 * profile is ever cut short or shared half-way.
 */
function pprofStatuses(err: unknown): HttpError | undefined {
  if (err instanceof ProfilerBusyError) return new HttpError(503, err.message, { 'Retry-After': String(err.retryAfterSeconds) });
  if (err instanceof SamplerStoppedError) return new HttpError(503, err.message);
  return undefined;
}

/** What the index shows: the profiles and how each profiler runs here. */
function indexModel(rt: ProfilingRuntime, base: string): IndexModel {
  const { options } = rt;
  const model: IndexModel = {
    base,
    profiles: rt.catalog.map((p) => ({ ...p, href: `${base}/${p.href}` })),
    backend: rt.cpu.backend.name,
    backendReason: rt.cpu.reason,
    startCost: rt.cpu.backend.startCost,
    heapSamplingIntervalBytes: rt.heap ? rt.heap.intervalBytes : false,
    sourceMaps: rt.sourceMaps?.status() ?? false,
    ...(rt.heap ? { heapReader: { name: rt.heap.reader, reason: rt.heap.readerReason }, heapSamples: rt.heap.samples } : {}),
    cpu: {
      defaultSeconds: options.defaultProfileSeconds,
      maxSeconds: options.maxProfileSeconds,
      samplingIntervalMicros: options.cpuSamplingIntervalMicros,
      inProgress: isProfiling(),
    },
    trace: traceIndex(options.trace),
  };
  if (rt.heapUnavailable !== undefined) model.backendReason += `; heap profiling unavailable: ${rt.heapUnavailable}`;
  return model;
}

/**
 * Creates the Express router for Go-style `/debug/pprof` endpoints (mount it at `/debug/pprof`):
 * the index, `profile` (CPU), `heap`, `goroutine` (active resources), `block` (event-loop delay)
 * and `mutex` (always empty). Options are validated here and a forced backend that cannot load
 * throws. Heap sampling and the event-loop delay monitor start now and run until `close()`; with
 * the v8-profiler-next backend, V8's CPU profiler is created now too (one short heap walk, so create
 * the router early, while the heap is small) and later profiles start without walking the heap.
 * With `state` (the introspection state a pipeline records its cycles in; `undefined` for none),
 * CPU samples taken while a reconciliation cycle ran carry its pprof labels (`correlation_id`,
 * `trigger`, `controller`). Dependencies first, options second, as every factory takes them: an
 * options object given first (the 0.1 call shape) throws with the new one.
 */
export function createPprofRouter(
  state?: Pick<IntrospectionStateReader, 'cycleTimeline' | 'traceCycles'>,
  options?: PprofOptions,
): PprofRouter {
  if (state !== undefined) {
    checkStateInPlace(WHERE, state, ['cycleTimeline', 'traceCycles'], {
      position: 'first',
      optional: true,
      optionKeys: PPROF_OPTION_KEYS,
      call: 'createPprofRouter(state, { heapSamplingIntervalBytes }) (or createPprofRouter(undefined, { … }) without cycle labels)',
    });
  }
  const rt = startProfilingRuntime(options);
  const router = Router(EXACT_ROUTING);
  router.use(boundQuery(MAX_QUERY_CHARS));
  router.use(readOnly());
  router.use(function rejectWhenClosed(_req: Request, _res: Response, next: NextFunction): void {
    next(rt.closed ? new HttpError(503, 'the pprof router has been closed') : undefined);
  });

  router.get('/', function pprofIndex(req: Request, res: Response): void {
    const format = queryString(req, 'format');
    if (format !== undefined && format !== 'html' && format !== 'json') {
      throw new HttpError(400, `query parameter "format" must be html or json for the index, got ${JSON.stringify(format.slice(0, 32))}`);
    }
    const model = indexModel(rt, req.baseUrl);
    res.vary('Accept');
    const wantsJson =
      format === 'json' || (format === undefined && preferredMediaType(req, ['text/html', 'application/json']) === 'application/json');
    if (wantsJson) sendBody(req, res, JSON_TYPE, indexJson(model));
    else sendBody(req, res, 'text/html; charset=utf-8', indexHtml(model));
  });

  router.get('/cmdline', function pprofCmdline(req: Request, res: Response): void {
    sendBody(req, res, TEXT, commandLine(rt.options.cmdlineArgs));
  });

  router.get('/symbol', function pprofSymbol(): void {
    throw new HttpError(404, SYMBOL_NOT_APPLICABLE);
  });

  router.get(
    '/:name',
    handle(async function pprofProfile(req: Request, res: Response): Promise<void> {
      const name = String(req.params['name']);
      if (!isProfileName(name))
        throw new HttpError(404, `unknown profile ${JSON.stringify(name.slice(0, 64))}; available: ${PROFILE_NAMES.join(', ')}`);
      // The trace has its own switch (off by default) and limits, checked before its query.
      if (name === 'trace') return serveTrace(rt, req, res);
      const query = parseProfileQuery(req, name, rt.formatsOf(name), {
        defaultSeconds: rt.options.defaultProfileSeconds,
        maxSeconds: rt.options.maxProfileSeconds,
      });
      if (name === 'profile') await serveProfile(rt, req, res, query, state);
      else if (name === 'heap' || name === 'allocs') await serveHeap(rt, req, res, query, name);
      else await serveSnapshot(rt, req, res, name, query);
    }),
  );

  router.use(function unknownPprofPath(req: Request, _res: Response, next: NextFunction): void {
    next(
      new HttpError(
        404,
        `no pprof endpoint at ${JSON.stringify(req.path.slice(0, 64))}; available: ${PROFILE_NAMES.join(', ')} (and the index at ${req.baseUrl || '/'})`,
      ),
    );
  });
  router.use(answerErrors(pprofStatuses));

  Object.defineProperties(router, {
    close: { value: closeOnce(PPROF_CLOSE_BOUND_MS, () => rt.close()), enumerable: true },
    backend: { value: rt.cpu.backend.name, enumerable: true },
    backendReason: { value: rt.cpu.reason, enumerable: true },
  });
  return router as PprofRouter;
}
