import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Profile } from 'pprof-format';
import { HttpError, sendError, sendThrown } from '../http/errors';
import { readOnly } from '../http/methods';
import { queryString } from '../http/query';
import { PROFILE_NAMES, isProfileName, profileCatalog, type ProfileName } from './catalog';
import { SYMBOL_NOT_APPLICABLE, commandLine } from './cmdline';
import type { BackendName } from './cpu-backend';
import { isProfiling, recordCpuProfile } from './cpu-session';
import { cpuProfileToPprof } from './cpu-to-pprof';
import { delayText, delayToPprof, startDelayMonitor } from './event-loop-delay';
import { acquireHeapSampler, type HeapSamplerLease } from './heap-sampler';
import { heapText } from './heap-text';
import { heapDelta, heapProfileToPprof, heapStacks, heapStacksToPprof } from './heap-to-pprof';
import { indexHtml, indexJson, type IndexModel } from './index-page';
import { emptyMutexProfile, mutexText } from './mutex';
import { resolvePprofOptions, type PprofOptions } from './options';
import { parseProfileQuery, type ProfileQuery } from './query';
import { resourcesText, resourcesToPprof, snapshotResources } from './resources';
import { encodePprof } from './pprof-builder';
import { selectCpuBackend } from './select-backend';
import { SourceMapper } from './source-maps/mapper';
import { withoutOwnCpuWork, withoutOwnHeap } from './own-frames';
import type { V8SamplingHeapProfile } from './v8-shapes';
import { setNoStoreHeaders } from '../http/headers';
import { watchClientGone } from '../http/client-gone';
import { waitFor } from '../util/wait';
import { sendJson } from '../http/send-json';
import { DEFAULT_TRACE_CATEGORIES, recordTrace, traceCategories } from './trace';

/** The router returned by {@link createPprofRouter}. */
export type PprofRouter = Router & {
  /**
   * Stops heap sampling and the delay monitor, cancels a running CPU profile and, for the last
   * router in the process, disposes of V8's warm CPU profiler; leaves no timers.
   */
  close(): Promise<void>;
  /** The CPU profiler in use. */
  readonly backend: BackendName;
  /** Why that backend, e.g. `v8-profiler-next failed to load (...); fell back to node:inspector`. */
  readonly backendReason: string;
};

function sendBody(req: Request, res: Response, contentType: string, body: string | Buffer, fileName?: string): void {
  setNoStoreHeaders(res);
  res.status(200);
  res.setHeader('Content-Type', contentType);
  if (fileName) res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** HEAD of an expensive representation: its headers, without producing it (length unknown). */
function sendHeadOnly(res: Response, contentType: string, fileName?: string): void {
  setNoStoreHeaders(res);
  res.status(200);
  res.setHeader('Content-Type', contentType);
  if (fileName) res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.end();
}

async function sendPprof(req: Request, res: Response, name: string, profile: Profile): Promise<void> {
  const body = await encodePprof(profile);
  if (res.destroyed) return;
  sendBody(req, res, 'application/octet-stream', body, `${name}.pb.gz`);
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Creates the Express router for Go-style `/debug/pprof` endpoints (mount it at `/debug/pprof`):
 * the index, `profile` (CPU), `heap`, `goroutine` (active resources), `block` (event-loop delay)
 * and `mutex` (always empty). Options are validated here and a forced backend that cannot load
 * throws. Heap sampling and the event-loop delay monitor start now and run until `close()`; with
 * the v8-profiler-next backend, V8's CPU profiler is created now too (one short heap walk, so create
 * the router early, while the heap is small) and later profiles start without walking the heap.
 */
export function createPprofRouter(options?: PprofOptions): PprofRouter {
  const resolved = resolvePprofOptions(options);
  const selection = selectCpuBackend(resolved);
  let heap: HeapSamplerLease | undefined;
  let heapUnavailable: string | undefined;
  if (resolved.heapSamplingIntervalBytes !== false) {
    try {
      heap = acquireHeapSampler(resolved.heapSamplingIntervalBytes, resolved.heapProfiler, resolved.heapSamples);
    } catch (err) {
      // A reader forced by option that cannot load is a start-up error, like a forced CPU backend.
      if (resolved.heapProfiler !== 'auto') throw err;
      // A Node.js build without the inspector still gets CPU (via the addon) and the rest.
      heapUnavailable = err instanceof Error ? err.message : String(err);
    }
  }
  const delay = startDelayMonitor();
  const sourceMaps = resolved.sourceMaps ? new SourceMapper() : undefined;
  const inflight = new Map<AbortController, Promise<void>>();
  let closed = false;
  // Now, because a router is usually created at start-up, while the heap is small: the one heap
  // walk V8's profiler needs (to log the code that exists) is then short.
  const releaseWarmProfiler = selection.backend.keepWarm();
  const catalog = profileCatalog(resolved.defaultProfileSeconds, resolved.cpuSamplingIntervalMicros);
  const formatsOf = (name: ProfileName): readonly string[] => catalog.find((p) => p.name === name)?.formats ?? ['pprof'];

  const router = express.Router();
  router.use(readOnly());
  router.use(function rejectWhenClosed(_req: Request, res: Response, next: NextFunction): void {
    if (closed) sendError(res, 503, 'the pprof router has been closed');
    else next();
  });

  router.get('/', function pprofIndex(req: Request, res: Response): void {
    try {
      const format = queryString(req, 'format');
      if (format !== undefined && format !== 'html' && format !== 'json') {
        throw new HttpError(400, `query parameter "format" must be html or json for the index, got ${JSON.stringify(format.slice(0, 32))}`);
      }
      const base = req.baseUrl;
      const model: IndexModel = {
        base,
        profiles: catalog.map((p) => ({ ...p, href: `${base}/${p.href}` })),
        backend: selection.backend.name,
        backendReason: selection.reason,
        startCost: selection.backend.startCost,
        heapSamplingIntervalBytes: heap ? heap.intervalBytes : false,
        sourceMaps: sourceMaps?.status() ?? false,
        ...(heap ? { heapReader: { name: heap.reader, reason: heap.readerReason }, heapSamples: heap.samples } : {}),
        cpu: { defaultSeconds: resolved.defaultProfileSeconds, maxSeconds: resolved.maxProfileSeconds, samplingIntervalMicros: resolved.cpuSamplingIntervalMicros, inProgress: isProfiling() },
      };
      if (heapUnavailable !== undefined) model.backendReason += `; heap profiling unavailable: ${heapUnavailable}`;
      res.vary('Accept');
      const wantsJson = format === 'json' || (format === undefined && req.accepts(['html', 'json']) === 'json');
      if (wantsJson) sendBody(req, res, JSON_TYPE, indexJson(model));
      else sendBody(req, res, 'text/html; charset=utf-8', indexHtml(model));
    } catch (err) {
      sendThrown(res, err);
    }
  });

  /**
   * Runs work that lasts (a CPU profile, a delta, a trace) so that a client leaving, or `close()`,
   * stops it through `signal`, and `close()` waits for it. Errors are answered here.
   */
  async function tracked(res: Response, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const gone = watchClientGone(res);
    const { controller } = gone;
    const running = (async (): Promise<void> => {
      try {
        await work(controller.signal);
      } catch (err) {
        sendThrown(res, err);
      } finally {
        gone.release();
        inflight.delete(controller);
      }
    })();
    inflight.set(controller, running);
    await running;
  }

  async function serveCpu(req: Request, res: Response, query: ProfileQuery): Promise<void> {
    if (req.method === 'HEAD') {
      // HEAD must stay cheap: it describes the answer without recording anything.
      if (query.format === 'cpuprofile') sendHeadOnly(res, JSON_TYPE, 'profile.cpuprofile');
      else sendHeadOnly(res, 'application/octet-stream', 'profile.pb.gz');
      return;
    }
    await tracked(res, async (signal) => {
      const recording = { seconds: query.seconds, samplingIntervalMicros: resolved.cpuSamplingIntervalMicros };
      const recorded = await recordCpuProfile(selection.backend, recording, signal);
      if (!recorded) {
        if (closed) sendError(res, 503, 'the pprof router was closed while the CPU profile was being recorded');
        return;
      }
      if (res.destroyed) return;
      const hostOnly = withoutOwnCpuWork(recorded.profile);
      const v8Profile = sourceMaps ? await sourceMaps.mapCpuProfile(hostOnly) : hostOnly;
      if (query.format === 'cpuprofile') {
        // One JSON.stringify of the whole profile: a few MB for 30 s of a busy process.
        sendBody(req, res, JSON_TYPE, JSON.stringify(v8Profile), 'profile.cpuprofile');
        return;
      }
      const profile = await cpuProfileToPprof(v8Profile, { startedAtMs: recorded.startedAtMs, samplingIntervalMicros: recorded.samplingIntervalMicros });
      await sendPprof(req, res, 'profile', profile);
    });
  }

  /** `/heap` (live objects) and `/allocs` (every allocation): the same sampler, kept one way or the other. */
  async function serveHeap(req: Request, res: Response, query: ProfileQuery, name: 'heap' | 'allocs'): Promise<void> {
    if (!heap) {
      if (heapUnavailable !== undefined) throw new HttpError(501, `heap profiling is unavailable: ${heapUnavailable}`);
      throw new HttpError(404, 'heap profiling is turned off (option heapSamplingIntervalBytes: false)');
    }
    const wanted = name === 'heap' ? 'live' : 'allocations';
    if (heap.samples !== wanted) {
      throw new HttpError(
        404,
        name === 'allocs'
          ? "no allocs profile: V8 runs one sampling heap profiler per process, and this one keeps live objects (served by /heap); set pprof option heapSamples: 'allocations' to keep every allocation, freed ones included, for /allocs"
          : "no heap profile: V8 runs one sampling heap profiler per process, and this one keeps every allocation (pprof option heapSamples: 'allocations', served by /allocs); the live heap needs heapSamples: 'live'",
      );
    }
    if (req.method === 'HEAD') {
      if (query.debug > 0) sendHeadOnly(res, TEXT);
      else if (query.format === 'heapprofile') sendHeadOnly(res, JSON_TYPE, `${name}.heapprofile`);
      else sendHeadOnly(res, 'application/octet-stream', `${name}.pb.gz`);
      return;
    }
    const lease = heap;
    const snapshot = async (): Promise<V8SamplingHeapProfile> => {
      if (query.gc) await lease.collectGarbage();
      const hostOnly = withoutOwnHeap(await lease.profile());
      return sourceMaps ? sourceMaps.mapHeapProfile(hostOnly) : hostOnly;
    };
    if (query.deltaSeconds !== undefined) {
      await serveHeapDelta(req, res, query, name, query.deltaSeconds, lease, snapshot);
      return;
    }
    const v8Profile = await snapshot();
    if (query.debug > 0) sendBody(req, res, TEXT, heapText(await heapStacks(v8Profile), lease.intervalBytes, query.gc, undefined, lease.samples));
    else if (query.format === 'heapprofile') sendBody(req, res, JSON_TYPE, JSON.stringify(v8Profile), `${name}.heapprofile`);
    else await sendPprof(req, res, name, await heapProfileToPprof(v8Profile, lease.intervalBytes, lease.samples));
  }

  /** Go's `heap?seconds=N` and `allocs?seconds=N`: two snapshots N seconds apart, and what changed. */
  async function serveHeapDelta(req: Request, res: Response, query: ProfileQuery, name: 'heap' | 'allocs', seconds: number, lease: HeapSamplerLease, snapshot: () => Promise<V8SamplingHeapProfile>): Promise<void> {
    const what = lease.samples === 'live' ? 'live bytes at the end minus at the start per allocating stack (negative: released)' : 'bytes allocated in the window per allocating stack';
    await tracked(res, async (signal) => {
      const before = await heapStacks(await snapshot());
      await waitFor(seconds * 1000, signal);
      if (signal.aborted || res.destroyed) return;
      const delta = heapDelta(before, await heapStacks(await snapshot()));
      if (query.debug > 0) sendBody(req, res, TEXT, heapText(delta, lease.intervalBytes, query.gc, seconds, lease.samples));
      else await sendPprof(req, res, name, await heapStacksToPprof(delta, lease.intervalBytes, [`delta ${name} profile over ${seconds} s: ${what}; V8 sampling heap profiler, mean sampling interval ${lease.intervalBytes} bytes`], lease.samples));
    });
  }

  async function serveTrace(req: Request, res: Response, query: ProfileQuery): Promise<void> {
    const asked = queryString(req, 'categories');
    let categories: readonly string[] = DEFAULT_TRACE_CATEGORIES;
    if (asked !== undefined) {
      const known = await traceCategories();
      categories = asked.split(',').map((c) => c.trim());
      const unknown = categories.find((c) => !known.includes(c));
      if (unknown !== undefined || categories.length === 0) throw new HttpError(400, `query parameter "categories" must be a comma-separated list of ${known.join(', ')}; got ${JSON.stringify((unknown ?? asked).slice(0, 64))}`);
    }
    if (req.method === 'HEAD') {
      sendHeadOnly(res, JSON_TYPE, 'trace.json');
      return;
    }
    await tracked(res, async (signal) => {
      const trace = await recordTrace(query.seconds, categories, signal);
      if (!trace || res.destroyed) return;
      // Streamed in slices: a busy second can hold a hundred thousand events.
      await sendJson(req, res, trace, { streamThresholdBytes: 256 * 1024, headers: { 'Content-Disposition': 'attachment; filename="trace.json"' } });
    });
  }

  async function serveSmall(req: Request, res: Response, name: 'goroutine' | 'block' | 'mutex', query: ProfileQuery): Promise<void> {
    if (name === 'goroutine') {
      const snapshot = snapshotResources();
      if (query.debug > 0) sendBody(req, res, TEXT, resourcesText(snapshot, query.debug as 1 | 2));
      else await sendPprof(req, res, name, resourcesToPprof(snapshot));
    } else if (name === 'block') {
      const summary = delay.summary();
      if (query.debug > 0) sendBody(req, res, TEXT, delayText(summary));
      else await sendPprof(req, res, name, delayToPprof(summary));
    } else if (query.debug > 0) {
      sendBody(req, res, TEXT, mutexText());
    } else {
      await sendPprof(req, res, name, emptyMutexProfile());
    }
  }

  router.get('/cmdline', function pprofCmdline(req: Request, res: Response): void {
    sendBody(req, res, TEXT, commandLine());
  });

  router.get('/symbol', function pprofSymbol(_req: Request, res: Response): void {
    sendError(res, 404, SYMBOL_NOT_APPLICABLE);
  });

  router.get('/:name', async function pprofProfile(req: Request, res: Response): Promise<void> {
    try {
      const name = String(req.params.name);
      if (!isProfileName(name)) {
        throw new HttpError(404, `unknown profile ${JSON.stringify(name.slice(0, 64))}; available: ${PROFILE_NAMES.join(', ')}`);
      }
      const query = parseProfileQuery(req, name, formatsOf(name), { defaultSeconds: resolved.defaultProfileSeconds, maxSeconds: resolved.maxProfileSeconds });
      if (name === 'profile') await serveCpu(req, res, query);
      else if (name === 'heap' || name === 'allocs') await serveHeap(req, res, query, name);
      else if (name === 'trace') await serveTrace(req, res, query);
      else await serveSmall(req, res, name, query);
    } catch (err) {
      sendThrown(res, err);
    }
  });

  router.use(function unknownPprofPath(req: Request, res: Response): void {
    sendError(res, 404, `no pprof endpoint at ${JSON.stringify(req.path.slice(0, 64))}; available: ${PROFILE_NAMES.join(', ')} (and the index at ${req.baseUrl || '/'})`);
  });

  const close = async (): Promise<void> => {
    if (closed) {
      await Promise.allSettled([...inflight.values()]);
      return;
    }
    closed = true;
    for (const controller of inflight.keys()) controller.abort();
    heap?.release();
    delay.close();
    await sourceMaps?.close();
    await Promise.allSettled([...inflight.values()]);
    // After the in-flight profiles: the last release disposes of V8's profiler, which the addon
    // does only when no profile is running.
    releaseWarmProfiler();
  };

  Object.defineProperties(router, {
    close: { value: close, enumerable: true },
    backend: { value: selection.backend.name, enumerable: true },
    backendReason: { value: selection.reason, enumerable: true },
  });
  return router as PprofRouter;
}
