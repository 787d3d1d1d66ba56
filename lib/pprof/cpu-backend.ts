import type { V8CpuProfile } from './v8-shapes';

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
}
