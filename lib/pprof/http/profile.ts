import type { Request, Response } from 'express';
import { HttpError } from '../../http/errors';
import { recordCpuProfile } from '../cpu/session';
import { cpuProfileToPprof } from '../cpu/to-pprof';
import { withoutOwnCpuWork } from '../own-frames';
import type { ProfileQuery } from './query';
import { JSON_TYPE, sendBody, sendHeadOnly, sendPprof } from './respond';
import type { ProfilingRuntime } from './runtime';

/** `/profile`: a CPU profile of `?seconds=`, as pprof or (`?format=cpuprofile`) for DevTools. */
export async function serveProfile(rt: ProfilingRuntime, req: Request, res: Response, query: ProfileQuery): Promise<void> {
  if (req.method === 'HEAD') {
    // HEAD must stay cheap: it describes the answer without recording anything.
    if (query.format === 'cpuprofile') sendHeadOnly(res, JSON_TYPE, 'profile.cpuprofile');
    else sendHeadOnly(res, 'application/octet-stream', 'profile.pb.gz');
    return;
  }
  await rt.track(res, async (signal) => {
    const recording = { seconds: query.seconds, samplingIntervalMicros: rt.options.cpuSamplingIntervalMicros };
    const recorded = await recordCpuProfile(rt.cpu.backend, recording, signal);
    if (!recorded) {
      if (rt.closed) throw new HttpError(503, 'the pprof router was closed while the CPU profile was being recorded');
      return;
    }
    if (res.destroyed) return;
    const hostOnly = withoutOwnCpuWork(recorded.profile);
    const v8Profile = rt.sourceMaps ? await rt.sourceMaps.mapCpuProfile(hostOnly) : hostOnly;
    signal.throwIfAborted();
    if (query.format === 'cpuprofile') {
      // One JSON.stringify of the whole profile: a few MB for 30 s of a busy process.
      sendBody(req, res, JSON_TYPE, JSON.stringify(v8Profile), 'profile.cpuprofile');
      return;
    }
    const profile = await cpuProfileToPprof(v8Profile, {
      startedAtMs: recorded.startedAtMs,
      samplingIntervalMicros: recorded.samplingIntervalMicros,
      signal,
    });
    await sendPprof(req, res, 'profile', profile, signal);
  });
}
