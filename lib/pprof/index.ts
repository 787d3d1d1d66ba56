/**
 * Go-style `/debug/pprof` profiling for Node.js: CPU and heap profiles in pprof format (and the
 * DevTools formats), plus Node analogs of goroutine, block and mutex profiles.
 */
export { createPprofRouter, PPROF_CLOSE_BOUND_MS, type PprofRouter } from './http/router';
export { PPROF_DEFAULTS, TRACE_DEFAULTS, type PprofOptions, type ProfilerChoice, type TraceOptions } from './options';
export type { BackendName } from './cpu/backend';
export { isProfiling } from './cpu/session';
export type { HeapProfilerChoice, HeapSamples } from './heap/sampler';
export type { HeapReaderName } from './heap/readers';
