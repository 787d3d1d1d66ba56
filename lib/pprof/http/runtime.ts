import type { Response } from 'express';
import { stillThere, watchClientGone } from '../../http/client-gone';
import { HttpError } from '../../http/errors';
import { profileCatalog, type ProfileEntry, type ProfileName } from '../catalog';
import { startDelayMonitor, type DelayMonitor } from '../block';
import { selectCpuBackend, type BackendSelection } from '../cpu/select-backend';
import { acquireHeapSampler, type HeapSamplerLease } from '../heap/sampler';
import { warmHeapConversion } from '../pprof-encoder';
import { resolvePprofOptions, type PprofOptions, type ResolvedPprofOptions } from '../options';
import { SourceMapper } from '../source-maps/mapper';
import { errorMessage } from '../../util/error-message';

/**
 * Everything a pprof router keeps running between requests: the CPU backend (kept warm), the heap
 * sampler, the event-loop delay monitor, the source mapper and the recordings in flight. Handlers
 * read it; `close()` stops all of it.
 */
export interface ProfilingRuntime {
  readonly options: ResolvedPprofOptions;
  readonly cpu: BackendSelection;
  /** The heap sampler, unless heap profiling is off or unavailable. */
  readonly heap: HeapSamplerLease | undefined;
  /** Why heap profiling is unavailable on this Node.js (no inspector), if it is. */
  readonly heapUnavailable: string | undefined;
  readonly delay: DelayMonitor;
  readonly sourceMaps: SourceMapper | undefined;
  readonly catalog: readonly ProfileEntry[];
  /** The formats `/name` offers. */
  formatsOf(name: ProfileName): readonly string[];
  /** Whether `close()` was called. */
  readonly closed: boolean;
  /**
   * Runs work that lasts (a CPU profile, a delta, a trace, a conversion) so that a client leaving,
   * or `close()`, stops it through `signal`, and `close()` waits for it. Work that rejects with the
   * signal's reason ends quietly when the client left, and answers `503` when the router closed.
   */
  track(res: Response, work: (signal: AbortSignal) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** Starts what a pprof router needs; throws for wrong options or a forced profiler that cannot load. */
export function startProfilingRuntime(options: PprofOptions | undefined): ProfilingRuntime {
  const resolved = resolvePprofOptions(options);
  const cpu = selectCpuBackend(resolved);
  let heap: HeapSamplerLease | undefined;
  let heapUnavailable: string | undefined;
  if (resolved.heapSamplingIntervalBytes !== false) {
    try {
      heap = acquireHeapSampler(resolved.heapSamplingIntervalBytes, resolved.heapProfiler, resolved.heapSamples);
      warmHeapConversion();
    } catch (err) {
      // A reader forced by option that cannot load is a start-up error, like a forced CPU backend.
      if (resolved.heapProfiler !== 'auto') throw err;
      // A Node.js build without the inspector still gets CPU (via the addon) and the rest.
      heapUnavailable = errorMessage(err);
    }
  }
  const delay = startDelayMonitor();
  const sourceMaps = resolved.sourceMaps ? new SourceMapper() : undefined;
  const inflight = new Map<AbortController, Promise<void>>();
  let closed = false;
  // Now, because a router is usually created at start-up, while the heap is small: the one heap
  // walk V8's profiler needs (to log the code that exists) is then short.
  const releaseWarmProfiler = cpu.backend.keepWarm();
  const catalog = profileCatalog(resolved.defaultProfileSeconds, resolved.cpuSamplingIntervalMicros);

  async function track(res: Response, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    const gone = watchClientGone(res);
    const { controller } = gone;
    const running = (async (): Promise<void> => {
      try {
        // A client that asked and hung up at once is seen first: the work starts with its signal
        // aborted, and takes no profile.
        await stillThere(res, gone);
        await work(controller.signal);
      } catch (err) {
        // Work stopped by its signal: nobody to answer if the client left; a 503 if the router closed.
        if (!controller.signal.aborted || err !== controller.signal.reason) throw err;
        if (closed) throw new HttpError(503, 'the pprof router was closed while the profile was being prepared');
      } finally {
        gone.release();
        inflight.delete(controller);
      }
    })();
    // close() waits for the work, not for its outcome: the request answers the outcome.
    inflight.set(
      controller,
      running.catch(() => undefined),
    );
    await running;
  }

  async function close(): Promise<void> {
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
  }

  return {
    options: resolved,
    cpu,
    heap,
    heapUnavailable,
    delay,
    sourceMaps,
    catalog,
    formatsOf: (name) => catalog.find((p) => p.name === name)?.formats ?? ['pprof'],
    get closed() {
      return closed;
    },
    track,
    close,
  };
}
