import { ProfilerBusyError, secondsUntil } from '../errors';
import type { CpuProfilerBackend, CpuProfileRun } from './backend';
import type { V8CpuProfile } from '../v8-shapes';
import { waitFor } from '../../util/wait';

interface ActiveProfile {
  readonly startedAt: number;
  readonly endsAt: number;
}

// Process-wide, not per router: two routers (or two apps) in one process profile the same
// isolate, and overlapping profiles would only double the overhead for the same data.
let active: ActiveProfile | undefined;

/** Whether a CPU profile is being recorded in this process right now. */
export function isProfiling(): boolean {
  return active !== undefined;
}

/** A recorded profile and its wall-clock start (pprof wants wall time; V8 gives monotonic µs). */
export interface RecordedCpuProfile {
  /** The profile in the DevTools shape. */
  readonly profile: V8CpuProfile;
  /** `Date.now()` when recording started. */
  readonly startedAtMs: number;
  /** Microseconds between samples it was recorded with (the pprof period). */
  readonly samplingIntervalMicros: number;
}

/** How to record one CPU profile. */
export interface CpuRecording {
  /** Length, s. */
  readonly seconds: number;
  /** Microseconds between samples. */
  readonly samplingIntervalMicros: number;
}

function busyError(): ProfilerBusyError {
  const remaining = active ? secondsUntil(active.endsAt) : 1;
  return new ProfilerBusyError(
    `a CPU profile is already being recorded in this process (about ${remaining}s left); only one runs at a time, retry after it finishes`,
    remaining,
  );
}

/**
 * Records one CPU profile. Answers `undefined` when `signal` aborts first (the client went away or
 * the router closed): the profile is then cancelled at once and nothing stays running. Throws a
 * {@link ProfilerBusyError} while another profile is being recorded.
 */
export async function recordCpuProfile(
  backend: CpuProfilerBackend,
  recording: CpuRecording,
  signal: AbortSignal,
): Promise<RecordedCpuProfile | undefined> {
  const { seconds, samplingIntervalMicros } = recording;
  if (active) throw busyError();
  if (signal.aborted) return undefined;
  const startedAt = Date.now();
  // Claimed before the first await so that two requests arriving together cannot both start.
  const claim: ActiveProfile = { startedAt, endsAt: startedAt + seconds * 1000 };
  active = claim;
  let run: CpuProfileRun | undefined;
  try {
    run = await backend.start(samplingIntervalMicros);
    await waitFor(seconds * 1000, signal);
    if (signal.aborted) {
      run.cancel();
      return undefined;
    }
    const stopping = run;
    run = undefined;
    return { profile: await stopping.stop(), startedAtMs: startedAt, samplingIntervalMicros };
  } catch (err) {
    run?.cancel();
    throw err;
  } finally {
    if (active === claim) active = undefined;
  }
}
