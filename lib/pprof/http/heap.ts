import type { Request, Response } from 'express';
import { HttpError } from '../../http/errors';
import { nextTurn } from '../../util/cooperative';
import { waitFor } from '../../util/wait';
import type { HeapSamplerLease } from '../heap/sampler';
import { heapText } from '../heap/text';
import { heapDelta, heapProfileToPprof, heapStacks, heapStacksToPprof } from '../heap/to-pprof';
import { withoutOwnHeap } from '../own-frames';
import type { V8SamplingHeapProfile } from '../v8-shapes';
import type { ProfileQuery } from './query';
import { JSON_TYPE, TEXT, sendBody, sendHeadOnly, sendPprof } from './respond';
import type { ProfilingRuntime } from './runtime';

type HeapName = 'heap' | 'allocs';

const NOT_KEPT: Readonly<Record<HeapName, string>> = {
  allocs:
    "no allocs profile: V8 runs one sampling heap profiler per process, and this one keeps live objects (served by /heap); set pprof option heapSamples: 'allocations' to keep every allocation, freed ones included, for /allocs. Continuous profilers (Grafana Alloy, Parca) scrape /heap for memory instead: see Continuous profiling in the package's docs/profiling.md",
  heap: "no heap profile: V8 runs one sampling heap profiler per process, and this one keeps every allocation (pprof option heapSamples: 'allocations', served by /allocs); the live heap needs heapSamples: 'live'",
};

/** The sampler that serves `name`, or the error that says why there is none. */
function samplerFor(rt: ProfilingRuntime, name: HeapName): HeapSamplerLease {
  if (!rt.heap) {
    if (rt.heapUnavailable !== undefined) throw new HttpError(501, `heap profiling is unavailable: ${rt.heapUnavailable}`);
    throw new HttpError(404, 'heap profiling is turned off (option heapSamplingIntervalBytes: false)');
  }
  if (rt.heap.samples !== (name === 'heap' ? 'live' : 'allocations')) throw new HttpError(404, NOT_KEPT[name]);
  return rt.heap;
}

/** `/heap` (live objects) and `/allocs` (every allocation): the same sampler, kept one way or the other. */
export async function serveHeap(rt: ProfilingRuntime, req: Request, res: Response, query: ProfileQuery, name: HeapName): Promise<void> {
  const lease = samplerFor(rt, name);
  if (req.method === 'HEAD') {
    if (query.debug > 0) sendHeadOnly(res, TEXT);
    else if (query.format === 'heapprofile') sendHeadOnly(res, JSON_TYPE, `${name}.heapprofile`);
    else sendHeadOnly(res, 'application/octet-stream', `${name}.pb.gz`);
    return;
  }
  const snapshot = async (signal: AbortSignal): Promise<V8SamplingHeapProfile> => {
    signal.throwIfAborted();
    if (query.gc) await lease.collectGarbage();
    signal.throwIfAborted();
    const hostOnly = withoutOwnHeap(await lease.profile());
    // V8 builds the profile in one synchronous call, after the request was parsed and routed in
    // the same run, and no ticker was counting then: the conversion begins on a fresh turn, so that
    // the build and its first slice never add up to one stall.
    await nextTurn({ signal });
    const mapped = rt.sourceMaps ? await rt.sourceMaps.mapHeapProfile(hostOnly) : hostOnly;
    signal.throwIfAborted();
    return mapped;
  };
  if (query.deltaSeconds !== undefined) {
    await serveHeapDelta(rt, req, res, { query, name, seconds: query.deltaSeconds, lease, snapshot });
    return;
  }
  // Tracked like a recording: a client that leaves stops the conversion at its next slice.
  await rt.track(res, async (signal) => {
    const v8Profile = await snapshot(signal);
    if (query.debug > 0)
      sendBody(req, res, TEXT, heapText(await heapStacks(v8Profile, signal), lease.intervalBytes, query.gc, undefined, lease.samples));
    else if (query.format === 'heapprofile') sendBody(req, res, JSON_TYPE, JSON.stringify(v8Profile), `${name}.heapprofile`);
    else await sendPprof(req, res, name, await heapProfileToPprof(v8Profile, lease.intervalBytes, lease.samples, signal), signal);
  });
}

interface DeltaRequest {
  readonly query: ProfileQuery;
  readonly name: HeapName;
  readonly seconds: number;
  readonly lease: HeapSamplerLease;
  readonly snapshot: (signal: AbortSignal) => Promise<V8SamplingHeapProfile>;
}

/** Go's `heap?seconds=N` and `allocs?seconds=N`: two snapshots N seconds apart, and what changed. */
async function serveHeapDelta(rt: ProfilingRuntime, req: Request, res: Response, delta: DeltaRequest): Promise<void> {
  const { query, name, seconds, lease, snapshot } = delta;
  const what =
    lease.samples === 'live'
      ? 'live bytes at the end minus at the start per allocating stack (negative: released)'
      : 'bytes allocated in the window per allocating stack';
  await rt.track(res, async (signal) => {
    const before = await heapStacks(await snapshot(signal), signal);
    await waitFor(seconds * 1000, signal);
    if (signal.aborted || res.destroyed) return;
    const stacks = heapDelta(before, await heapStacks(await snapshot(signal), signal));
    if (query.debug > 0) {
      sendBody(req, res, TEXT, heapText(stacks, lease.intervalBytes, query.gc, seconds, lease.samples));
      return;
    }
    const comment = `delta ${name} profile over ${seconds} s: ${what}; V8 sampling heap profiler, mean sampling interval ${lease.intervalBytes} bytes`;
    await sendPprof(req, res, name, await heapStacksToPprof(stacks, lease.intervalBytes, [comment], lease.samples, signal), signal);
  });
}
