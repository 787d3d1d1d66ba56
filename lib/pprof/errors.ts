/**
 * The profilers' own errors. They know nothing of HTTP: the pprof router's one error middleware
 * answers a {@link ProfilerBusyError} with 503 and `Retry-After`, and a {@link SamplerStoppedError} with 503.
 */

/** A recording that runs once per process (a CPU profile, a trace) was asked for while one runs. */
export class ProfilerBusyError extends Error {
  /** Roughly how long the running recording still takes, in whole seconds (at least 1). */
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number) {
    super(message);
    this.name = 'ProfilerBusyError';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** V8's sampling heap profiler was stopped by something else in the process; it was restarted. */
export class SamplerStoppedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SamplerStoppedError';
  }
}

/** Whole seconds until `endsAt` (a `Date.now()` time), at least 1: what `Retry-After` says. */
export function secondsUntil(endsAt: number): number {
  return Math.max(1, Math.ceil((endsAt - Date.now()) / 1000));
}
