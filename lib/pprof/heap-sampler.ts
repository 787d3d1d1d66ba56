import type { Session } from 'node:inspector/promises';
import { HttpError } from '../http/errors';
import { openSession } from './inspector-session';
import type { V8SamplingHeapProfile } from './v8-shapes';

/**
 * A claim on V8's sampling heap profiler. V8 has one per isolate: whoever stops it stops it for
 * everyone, so routers share it and it stops when the last claim is released.
 */
export interface HeapSamplerLease {
  /** The interval actually in effect (the first claimant's, when several routers share it). */
  readonly intervalBytes: number;
  /** The live sampled allocations since sampling started, without stopping it. */
  profile(): Promise<V8SamplingHeapProfile>;
  /** Runs a full garbage collection so that the profile holds only reachable objects. */
  collectGarbage(): Promise<void>;
  /** Gives the claim back; the last one stops sampling. Idempotent. */
  release(): void;
}

interface SharedSampler {
  readonly session: Session;
  readonly intervalBytes: number;
  started: Promise<void>;
  claims: number;
}

let shared: SharedSampler | undefined;

function startSampling(session: Session, intervalBytes: number): Promise<void> {
  return session.post('HeapProfiler.startSampling', { samplingInterval: intervalBytes });
}

/**
 * Claims the heap sampler, starting it if nobody runs it yet. We read it through the inspector in
 * every backend: `HeapProfiler.getSamplingProfile` reads without stopping, whereas
 * v8-profiler-next can only read by stopping, which would drop every live sample.
 */
export function acquireHeapSampler(intervalBytes: number): HeapSamplerLease {
  if (!shared) {
    const session = openSession();
    shared = { session, intervalBytes, claims: 0, started: startSampling(session, intervalBytes) };
    // Surfaced by profile(); an unobserved rejection must not crash the host meanwhile.
    shared.started.catch(() => undefined);
  }
  const sampler = shared;
  sampler.claims += 1;
  let released = false;
  return {
    intervalBytes: sampler.intervalBytes,
    async profile(): Promise<V8SamplingHeapProfile> {
      if (released) throw new Error('heap sampler lease already released');
      await sampler.started;
      try {
        const { profile } = await sampler.session.post('HeapProfiler.getSamplingProfile');
        return profile as V8SamplingHeapProfile;
      } catch (err) {
        // Something else in the process (DevTools, another profiler) stopped V8's sampler.
        sampler.started = startSampling(sampler.session, sampler.intervalBytes);
        sampler.started.catch(() => undefined);
        const message = err instanceof Error ? err.message : String(err);
        throw new HttpError(503, `V8's sampling heap profiler was stopped by something else in this process (${message}); sampling restarted now, so a retry shows allocations from now on`);
      }
    },
    async collectGarbage(): Promise<void> {
      if (released) throw new Error('heap sampler lease already released');
      // The inspector's GC is always available and safe; v8.setFlagsFromString('--expose-gc')
      // after start-up is documented by Node.js as undefined behaviour.
      await sampler.session.post('HeapProfiler.collectGarbage');
    },
    release(): void {
      if (released) return;
      released = true;
      sampler.claims -= 1;
      if (sampler.claims === 0 && shared === sampler) {
        shared = undefined;
        // Disconnecting makes V8 stop the sampler and free its samples.
        sampler.session.disconnect();
      }
    },
  };
}

/** Whether this process currently holds V8's heap sampler (for tests and the index page). */
export function isHeapSampling(): boolean {
  return shared !== undefined;
}
