import type { V8CpuProfile } from '../v8-shapes';

/** The CPU profiler implementations. */
export type BackendName = 'v8-profiler-next' | 'inspector';

/** A CPU profile being recorded. Exactly one of `stop` or `cancel` is called, once. */
export interface CpuProfileRun {
  /** Stops recording, frees V8's copy and answers the profile in the DevTools shape. */
  stop(): Promise<V8CpuProfile>;
  /** Stops recording and discards everything; never throws. */
  cancel(): void;
}

/** A way to record CPU profiles of this isolate. */
export interface CpuProfilerBackend {
  /** Which implementation this is. */
  readonly name: BackendName;
  /** Starts recording with a sample every `samplingIntervalMicros`. */
  start(samplingIntervalMicros: number): Promise<CpuProfileRun>;
  /**
   * Makes later starts cheap where the backend can, and answers how it is done for. Routers call
   * it at creation, while the host's heap is usually still small, and the release on `close()`.
   * Never throws: a backend that cannot keep warm still profiles, its starts just cost more.
   */
  keepWarm(): () => void;
  /** One sentence on what starting a profile costs the host with this backend, for the index. */
  readonly startCost: string;
}
