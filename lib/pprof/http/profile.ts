import type { Request, Response } from 'express';
import { HttpError } from '../../http/errors';
import { recordCpuProfile } from '../cpu/session';
import { cpuProfileToPprof } from '../cpu/to-pprof';
import { withoutOwnCpuWork } from '../own-frames';
import type { IntrospectionStateReader } from '../../state/types';
import type { LabelledCpuProfile } from '../cpu/sample-labels';
import type { ProfileQuery } from './query';
import { JSON_TYPE, sendBody, sendHeadOnly, sendPprof } from './respond';
import type { ProfilingRuntime } from './runtime';

/** Where the reconciliation cycles that CPU samples are labelled with are read: the state's ring. */
export type CycleSpanSource = Pick<IntrospectionStateReader, 'cycleTimeline' | 'traceCycles'>;

/**
 * `/profile`: a CPU profile of `?seconds=`, as pprof or (`?format=cpuprofile`) for DevTools. With
 * a `state` that records cycles, pprof samples carry the labels of the cycle they fell in, and the
 * `.cpuprofile` carries the cycles themselves (`cycles` and `cycleSegments`, which DevTools ignores
 * and the console reads). The state notes the cycles' segments only while the profile records.
 */
export async function serveProfile(
  rt: ProfilingRuntime,
  req: Request,
  res: Response,
  query: ProfileQuery,
  state?: CycleSpanSource,
): Promise<void> {
  if (req.method === 'HEAD') {
    // HEAD must stay cheap: it describes the answer without recording anything.
    if (query.format === 'cpuprofile') sendHeadOnly(res, JSON_TYPE, 'profile.cpuprofile');
    else sendHeadOnly(res, 'application/octet-stream', 'profile.pb.gz');
    return;
  }
  await rt.track(res, async (signal) => {
    const recording = { seconds: query.seconds, samplingIntervalMicros: rt.options.cpuSamplingIntervalMicros };
    // Cycles' synchronous segments are noted only while the profile records (async_hooks cost).
    const stopTracing = state?.traceCycles?.();
    let recorded: Awaited<ReturnType<typeof recordCpuProfile>>;
    try {
      recorded = await recordCpuProfile(rt.cpu.backend, recording, signal);
    } finally {
      stopTracing?.();
    }
    if (!recorded) {
      if (rt.closed) throw new HttpError(503, 'the pprof router was closed while the CPU profile was being recorded');
      return;
    }
    if (res.destroyed) return;
    const hostOnly = withoutOwnCpuWork(recorded.profile);
    const v8Profile = rt.sourceMaps ? await rt.sourceMaps.mapCpuProfile(hostOnly) : hostOnly;
    signal.throwIfAborted();
    // V8's profile clock is the monotonic one the state's cycle spans are on.
    const { spans, segments } = state?.cycleTimeline?.(v8Profile.startTime, v8Profile.endTime) ?? { spans: [], segments: [] };
    if (query.format === 'cpuprofile') {
      const labelled: LabelledCpuProfile =
        spans.length > 0 ? { ...v8Profile, cycles: spans, ...(segments.length > 0 ? { cycleSegments: segments } : {}) } : v8Profile;
      // One JSON.stringify of the whole profile: a few MB for 30 s of a busy process.
      sendBody(req, res, JSON_TYPE, JSON.stringify(labelled), 'profile.cpuprofile');
      return;
    }
    const profile = await cpuProfileToPprof(v8Profile, {
      startedAtMs: recorded.startedAtMs,
      samplingIntervalMicros: recorded.samplingIntervalMicros,
      signal,
      spans,
      segments,
    });
    await sendPprof(req, res, 'profile', profile, signal);
  });
}
