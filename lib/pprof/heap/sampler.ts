import type { Session } from 'node:inspector/promises';
import { SamplerStoppedError } from '../errors';
import { errorMessage } from '../../util/error-message';
import { datadogHeapReader, inspectorHeapReader, loadDatadogHeap, type HeapReader, type HeapReaderName } from './readers';
import { openSession } from '../inspector-session';
import type { V8SamplingHeapProfile } from '../v8-shapes';
import type { HeapSamples } from './to-pprof';

/** Which heap reader to use: the fastest that loads, or one forced. */
export type HeapProfilerChoice = 'auto' | HeapReaderName;

// Declared beside the converter, which the console's page imports without this Node-only module.
export type { HeapSamples };

/**
 * A claim on V8's sampling heap profiler. V8 has one per isolate: whoever stops it stops it for
 * everyone, so routers share it and it stops when the last claim is released.
 */
export interface HeapSamplerLease {
  /** The interval actually in effect (the first claimant's, when several routers share it). */
  readonly intervalBytes: number;
  /** What the sampler keeps (the first claimant's choice, like the interval). */
  readonly samples: HeapSamples;
  /** Who reads the profile, and why that one. */
  readonly reader: HeapReaderName;
  readonly readerReason: string;
  /** The live sampled allocations since sampling started, without stopping it. */
  profile(): Promise<V8SamplingHeapProfile>;
  /** Runs a full garbage collection so that the profile holds only reachable objects. */
  collectGarbage(): Promise<void>;
  /** Gives the claim back; the last one stops sampling. Idempotent. */
  release(): void;
}

interface SharedSampler {
  readonly reader: HeapReader;
  readonly readerReason: string;
  readonly intervalBytes: number;
  readonly samples: HeapSamples;
  started: Promise<void>;
  claims: number;
  /** An inspector session for `?gc=1`, opened the first time it is needed. */
  gcSession: Session | undefined;
}

let shared: SharedSampler | undefined;

function startSampling(sampler: SharedSampler): void {
  sampler.started = sampler.reader.start(sampler.intervalBytes);
  // Surfaced by profile(); an unobserved rejection must not crash the host meanwhile.
  sampler.started.catch(() => undefined);
}

/**
 * Picks the heap reader. @datadog/pprof reads V8's live sampling profile without forcing a full
 * collection (its prebuilt addon covers every supported Node line); the inspector is the fallback.
 * v8-profiler-next is not used for heap: it can only read by stopping the sampler, which drops
 * every live sample. A forced reader that cannot load is a start-up error.
 */
function chooseReader(choice: HeapProfilerChoice, samples: HeapSamples): { reader: HeapReader; reason: string } {
  // Only the inspector can ask V8 to keep the samples of freed objects (the options forbid forcing
  // @datadog/pprof with them).
  if (samples === 'allocations') {
    return {
      reader: inspectorHeapReader(true),
      reason: "heapSamples: 'allocations' (only node:inspector keeps the samples of freed objects; each read forces a full GC)",
    };
  }
  if (choice === 'inspector') return { reader: inspectorHeapReader(), reason: "forced by option heapProfiler: 'inspector'" };
  const datadog = loadDatadogHeap();
  if ('heap' in datadog)
    return {
      reader: datadogHeapReader(datadog.heap),
      reason: choice === 'auto' ? '@datadog/pprof loaded' : "forced by option heapProfiler: '@datadog/pprof'",
    };
  if (choice === '@datadog/pprof')
    throw new Error(
      `@datadog/pprof was forced by option heapProfiler but failed to load: ${datadog.error}; use heapProfiler 'auto' or 'inspector'`,
    );
  return {
    reader: inspectorHeapReader(),
    reason: `@datadog/pprof failed to load (${datadog.error}); reading through node:inspector, which forces a full GC per profile`,
  };
}

/**
 * Claims the heap sampler, starting it if nobody runs it yet (routers share it; the first
 * claimant's interval and reader win).
 */
export function acquireHeapSampler(
  intervalBytes: number,
  choice: HeapProfilerChoice = 'auto',
  samples: HeapSamples = 'live',
): HeapSamplerLease {
  if (!shared) {
    const { reader, reason } = chooseReader(choice, samples);
    shared = { reader, readerReason: reason, intervalBytes, samples, claims: 0, started: Promise.resolve(), gcSession: undefined };
    startSampling(shared);
  }
  const sampler = shared;
  sampler.claims += 1;
  let released = false;
  return {
    intervalBytes: sampler.intervalBytes,
    samples: sampler.samples,
    reader: sampler.reader.name,
    readerReason: sampler.readerReason,
    async profile(): Promise<V8SamplingHeapProfile> {
      if (released) throw new Error('heap sampler lease already released');
      await sampler.started;
      try {
        return await sampler.reader.read();
      } catch (err) {
        // Something else in the process (DevTools, another profiler) stopped V8's sampler.
        startSampling(sampler);
        throw new SamplerStoppedError(
          `V8's sampling heap profiler was stopped by something else in this process (${errorMessage(err)}); sampling restarted now, so a retry shows allocations from now on`,
        );
      }
    },
    async collectGarbage(): Promise<void> {
      if (released) throw new Error('heap sampler lease already released');
      // The inspector's GC is always available and safe; v8.setFlagsFromString('--expose-gc')
      // after start-up is documented by Node.js as undefined behaviour.
      sampler.gcSession ??= openSession();
      await sampler.gcSession.post('HeapProfiler.collectGarbage');
      // The sampler drops the samples of collected objects in weak callbacks that may run in a later
      // task: let them run before the profile is read. (On a loaded machine a few samples, about 1 %
      // of the released bytes, can still be there: the tests bound it.)
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
    release(): void {
      if (released) return;
      released = true;
      sampler.claims -= 1;
      if (sampler.claims === 0 && shared === sampler) {
        shared = undefined;
        sampler.reader.stop();
        sampler.gcSession?.disconnect();
      }
    },
  };
}
