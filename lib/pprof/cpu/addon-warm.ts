import { errorMessage } from '../../util/error-message';
/** The part of v8-profiler-next that controls the lifetime of V8's CPU profiler. */
export interface AddonProfilerLifetime {
  setProfilesCleanupLimit(limit: number): void;
  startProfiling(name: string, recordSamples: boolean, mode?: 0 | 1): void;
  stopProfiling(name: string): { delete(): void } | undefined;
}

/**
 * v8-profiler-next's `startProfiling` mode for V8's `kEagerLogging`: the profiler logs code from
 * its creation on and keeps logging between profiles. With the default (lazy) mode, every start
 * makes V8 walk the whole heap to log the code that already exists, which blocked the event loop
 * 100-250 ms with a 50 MB state; with eager logging only the first start walks.
 */
export const EAGER_LOGGING = 1;

// The addon disposes V8's profiler (and with it the code log) after a stop unless more than this
// many profiles were started since the last disposal; it keeps the limit in a signed 32-bit int.
const KEEP_FOREVER = 2 ** 31 - 1;
// The addon's own default, which disposes the profiler after every profile.
const DISPOSE_AFTER_EACH = 0;

let leases = 0;
let warmError: string | undefined;

function cycle(addon: AddonProfilerLifetime, phase: string): void {
  const title = `controller-introspection-${phase}-${process.pid}`;
  // No samples: the profile exists only to create (or dispose of) V8's profiler.
  addon.startProfiling(title, false, EAGER_LOGGING);
  addon.stopProfiling(title)?.delete();
}

/**
 * Creates V8's CPU profiler now, in eager-logging mode, and keeps it until the last lease is
 * released. Call it while the heap is small: the one heap walk happens here. What stays on is V8's
 * code-event log (no sampler thread runs between profiles); measured on Node 20, it costs ~9 ns per
 * call into a native binding and a few µs per newly compiled function, and a render loop and an
 * Express server showed no difference beyond noise. The last release disposes of the profiler,
 * so a closed router leaves nothing running.
 */
export function keepAddonWarm(addon: AddonProfilerLifetime): () => void {
  leases += 1;
  if (leases === 1) {
    try {
      addon.setProfilesCleanupLimit(KEEP_FOREVER);
      cycle(addon, 'warm-up');
      warmError = undefined;
    } catch (err) {
      // Profiling still works: every start then walks the heap, as without the warm-up.
      warmError = errorMessage(err);
    }
  }
  let released = false;
  return function releaseWarmProfiler(): void {
    if (released) return;
    released = true;
    leases -= 1;
    if (leases > 0) return;
    try {
      addon.setProfilesCleanupLimit(DISPOSE_AFTER_EACH);
      // The addon disposes only at a stop, and only when no other profile is running (another
      // user's profile keeps it alive until theirs stops, which then disposes it).
      cycle(addon, 'dispose');
    } catch {
      // Best effort: the profiler then lives until the addon's next stop.
    }
  };
}

/** Whether the profiler is held warm, and if the warm-up failed, why. */
export function addonWarmState(): { warm: boolean; error?: string } {
  if (leases === 0) return { warm: false };
  return warmError === undefined ? { warm: true } : { warm: false, error: warmError };
}
