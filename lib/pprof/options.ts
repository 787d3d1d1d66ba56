import { booleanOption, checkOptionObject, integerOption } from '../options';
import type { HeapProfilerChoice, HeapSamples } from './heap/sampler';

const HEAP_PROFILERS: readonly HeapProfilerChoice[] = ['auto', '@datadog/pprof', 'inspector'];
/** Which CPU profiler to use; `auto` prefers the native addon and falls back to the inspector. */
export type ProfilerChoice = 'auto' | 'v8-profiler-next' | 'inspector';

/** Options of `createPprofRouter`. */
export interface PprofOptions {
  /** Longest CPU profile a client may ask for with `?seconds=`; default 300. Above it → 400. */
  maxProfileSeconds?: number;
  /** CPU profile length when `seconds` is not given; default 30 (as Go's net/http/pprof). */
  defaultProfileSeconds?: number;
  /**
   * Mean bytes between samples of V8's sampling heap profiler, which runs from router creation
   * until `close()`; default 524288 (512 KiB). Smaller is more precise and costs more. `false`
   * turns heap sampling off (`/heap` then answers 404).
   */
  heapSamplingIntervalBytes?: number | false;
  /**
   * Microseconds between CPU samples; default 10000 (100 Hz, Go's default rate), from 100 to
   * 1000000. A smaller interval gives finer profiles but costs the host more while a profile runs
   * (at 1000, V8's own default, a busy render loop measured 8-15 % slower; at 10000 the loss was
   * within noise). The pprof `period` is this interval in nanoseconds.
   */
  cpuSamplingIntervalMicros?: number;
  /**
   * CPU profiler backend; default `auto`. When this is unset or `auto`, the environment variable
   * `CONTROLLER_INTROSPECTION_PROFILER` may force one.
   */
  profiler?: ProfilerChoice;
  /**
   * With the `node:inspector` backend, keep V8's code log on between profiles (a CPU profile that
   * always runs at the sampling interval, rotated every few seconds so it holds a bounded number of
   * samples), so that starting a profile does not block the event loop for a heap walk (100-300 ms in
   * a host with a 50 MB heap and many compiled functions). The walk then happens once, when the
   * router is created. Costs a sampling thread that interrupts the process at the sampling interval
   * (see the README's benchmarks). Default `true`; ignored with the v8-profiler-next backend, which
   * keeps its log without sampling.
   */
  keepCodeLog?: boolean;
  /**
   * Who reads the sampling heap profile: `auto` (default) uses `@datadog/pprof` when its addon loads
   * (it reads the live profile without forcing a garbage collection: about 1 ms instead of a full GC
   * per request), else `node:inspector`; forcing one that cannot load throws at creation.
   */
  heapProfiler?: HeapProfilerChoice;
  /**
   * Map CPU and heap profile frames (pprof, `.cpuprofile`, `.heapprofile` and the text forms)
   * through the scripts' source maps, inline or in `.map` files, so that profiles name the host's
   * TypeScript functions, files and lines. Maps are read and decoded in a worker thread, once per
   * script. Default: on when the process runs with `--enable-source-maps` (or called
   * `process.setSourceMapsEnabled(true)`) when the router is created, off otherwise.
   */
  sourceMaps?: boolean;
  /**
   * What V8's sampling heap profiler keeps. V8 runs one per process, and it keeps either the
   * samples of `live` objects (default; served by `/heap`, Go's in-use profile) or of every
   * `allocations`, freed objects included (served by `/allocs`, Go's allocation profile: the one
   * for finding churn). Only the inspector can keep freed objects' samples, and each of its reads
   * forces a full garbage collection first (tens of ms with a large heap): choose `allocations`
   * while hunting allocation churn, not for a host's whole life.
   */
  heapSamples?: HeapSamples;
  /**
   * The trace endpoint (`/trace`, Node's trace events as Chrome trace JSON), off by default: `true`
   * turns it on with the default limits, an object with the limits given. Off, `/trace` answers
   * 404 saying how to turn it on. Off by default because Node's tracing cannot be collected within
   * the package's 20 ms stall goal: on a promise-busy host (README, benchmark 13) a 3 s trace stalls
   * the event loop 15-59 ms at worst (6-17 ms without one) and the host's memory grows by about 25 MB
   * at the default 100 000 events. Categories that crashed Node are refused whatever the option.
   */
  trace?: boolean | TraceOptions;
}

/** Limits of the trace endpoint (pprof option `trace`); each bounds what one trace costs the host. */
export interface TraceOptions {
  /** Longest trace a client may ask for with `?seconds=`; default 10, at most 60. Above it → 400. */
  maxSeconds?: number;
  /**
   * Most events one trace keeps; default 100 000 (from 1 000 to 1 000 000). Each costs the host
   * about 250 bytes of heap until the answer is sent; a busy event loop makes 10 000-30 000 a
   * second. A trace that reaches the limit stops early and its answer says so (`truncated`).
   */
  maxEvents?: number;
  /**
   * Most bytes of event JSON one trace keeps; default 32 MiB (from 64 KiB to 256 MiB). Bounds a host
   * whose events carry long strings (`performance.mark` names, `console.time` labels).
   */
  maxBytes?: number;
}

/** {@link TraceOptions} after validation, with defaults filled in. */
export interface ResolvedTraceOptions {
  /** See {@link TraceOptions.maxSeconds}. */
  readonly maxSeconds: number;
  /** See {@link TraceOptions.maxEvents}. */
  readonly maxEvents: number;
  /** See {@link TraceOptions.maxBytes}. */
  readonly maxBytes: number;
}

/** Options after validation, with defaults filled in. */
export interface ResolvedPprofOptions {
  /** See {@link PprofOptions.maxProfileSeconds}. */
  readonly maxProfileSeconds: number;
  /** See {@link PprofOptions.defaultProfileSeconds}. */
  readonly defaultProfileSeconds: number;
  /** See {@link PprofOptions.cpuSamplingIntervalMicros}. */
  readonly cpuSamplingIntervalMicros: number;
  /** Bytes between heap samples, or `false` when heap sampling is off. */
  readonly heapSamplingIntervalBytes: number | false;
  /** The requested backend. */
  readonly profiler: ProfilerChoice;
  /** Where {@link profiler} came from, for the index page. */
  readonly profilerSource: 'default' | 'option' | 'env';
  readonly keepCodeLog: boolean;
  readonly heapProfiler: HeapProfilerChoice;
  readonly sourceMaps: boolean;
  readonly heapSamples: HeapSamples;
  /** The trace endpoint's limits, or `false` when it is off (the default). */
  readonly trace: ResolvedTraceOptions | false;
}

/** The environment variable that can force a backend. */
export const PROFILER_ENV = 'CONTROLLER_INTROSPECTION_PROFILER';

const CHOICES: readonly ProfilerChoice[] = ['auto', 'v8-profiler-next', 'inspector'];
// Beyond an hour the V8 profile of a busy process no longer fits comfortably in memory.
const MAX_SECONDS_CEILING = 3600;
const MAX_HEAP_INTERVAL = 2 ** 31 - 1;

/** Default of {@link PprofOptions.cpuSamplingIntervalMicros}: 100 Hz, as Go samples. */
const DEFAULT_CPU_SAMPLING_INTERVAL_MICROS = 10_000;
// Bounds that keep a profile useful: much below 100 µs the sampling itself dominates the host's
// CPU time; above 1 s a 30 s profile holds a few dozen samples at most.
const MIN_CPU_INTERVAL = 100;
const MAX_CPU_INTERVAL = 1_000_000;

function integerIn(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`pprof option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function positiveInteger(name: string, value: unknown, fallback: number, max: number): number {
  return integerIn(name, value, fallback, 1, max);
}

const TRACE_LIMITS = ['maxSeconds', 'maxEvents', 'maxBytes'];

function resolveTrace(option: unknown): ResolvedTraceOptions | false {
  if (option === undefined || option === false) return false;
  if (option !== true && (typeof option !== 'object' || option === null || Array.isArray(option))) {
    const got = Array.isArray(option) ? 'an array' : option === null ? 'null' : `a ${typeof option}`;
    throw new TypeError(`pprof options: pprof.trace must be true, false or an object of limits { ${TRACE_LIMITS.join(', ')} }, got ${got}`);
  }
  const limits = checkOptionObject('pprof options', 'pprof.trace', option === true ? {} : option, TRACE_LIMITS);
  return {
    maxSeconds: integerOption('pprof options', 'pprof.trace.maxSeconds', limits['maxSeconds'], 10, 1, 60),
    maxEvents: integerOption('pprof options', 'pprof.trace.maxEvents', limits['maxEvents'], 100_000, 1_000, 1_000_000),
    maxBytes: integerOption('pprof options', 'pprof.trace.maxBytes', limits['maxBytes'], 32 * 1024 * 1024, 64 * 1024, 256 * 1024 * 1024),
  };
}

function resolveProfiler(option: unknown, env: NodeJS.ProcessEnv): Pick<ResolvedPprofOptions, 'profiler' | 'profilerSource'> {
  if (option !== undefined && !CHOICES.includes(option as ProfilerChoice)) {
    throw new TypeError(`pprof option profiler must be one of ${CHOICES.join(', ')}, got ${String(option)}`);
  }
  if (option !== undefined && option !== 'auto') return { profiler: option as ProfilerChoice, profilerSource: 'option' };
  const fromEnv = env[PROFILER_ENV];
  if (fromEnv === undefined || fromEnv === '') return { profiler: 'auto', profilerSource: option === undefined ? 'default' : 'option' };
  if (!CHOICES.includes(fromEnv as ProfilerChoice)) {
    throw new TypeError(
      `environment variable ${PROFILER_ENV} must be one of ${CHOICES.join(', ')} (or unset), got ${JSON.stringify(fromEnv)}`,
    );
  }
  return { profiler: fromEnv as ProfilerChoice, profilerSource: 'env' };
}

/**
 * Validates options once, at router creation, so that a typo fails at start-up with a message
 * that says how to fix it rather than at the first profile request.
 */
export function resolvePprofOptions(options: PprofOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedPprofOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('pprof options must be an object (or omitted)');
  checkOptionObject('pprof options', 'pprof', options, [
    'maxProfileSeconds',
    'defaultProfileSeconds',
    'cpuSamplingIntervalMicros',
    'heapSamplingIntervalBytes',
    'profiler',
    'keepCodeLog',
    'heapProfiler',
    'sourceMaps',
    'heapSamples',
    'trace',
  ]);
  const maxProfileSeconds = positiveInteger('maxProfileSeconds', options.maxProfileSeconds, 300, MAX_SECONDS_CEILING);
  const defaultProfileSeconds = positiveInteger(
    'defaultProfileSeconds',
    options.defaultProfileSeconds,
    Math.min(30, maxProfileSeconds),
    maxProfileSeconds,
  );
  const cpuSamplingIntervalMicros = integerIn(
    'cpuSamplingIntervalMicros (microseconds between CPU samples; 10000 is 100 Hz)',
    options.cpuSamplingIntervalMicros,
    DEFAULT_CPU_SAMPLING_INTERVAL_MICROS,
    MIN_CPU_INTERVAL,
    MAX_CPU_INTERVAL,
  );
  const interval = options.heapSamplingIntervalBytes;
  const heapSamplingIntervalBytes =
    interval === false
      ? false
      : positiveInteger('heapSamplingIntervalBytes (or false to turn heap sampling off)', interval, 512 * 1024, MAX_HEAP_INTERVAL);
  const keepCodeLog = options.keepCodeLog ?? true;
  if (typeof keepCodeLog !== 'boolean') throw new TypeError(`pprof option keepCodeLog must be true or false, got ${String(keepCodeLog)}`);
  const heapProfiler = options.heapProfiler ?? 'auto';
  if (!HEAP_PROFILERS.includes(heapProfiler))
    throw new TypeError(`pprof option heapProfiler must be one of ${HEAP_PROFILERS.join(', ')}, got ${String(heapProfiler)}`);
  // Node 20.7 and later say whether source maps are on; before that, only the flag tells.
  const nodeMapsSources =
    (process as { sourceMapsEnabled?: boolean }).sourceMapsEnabled ?? process.execArgv.includes('--enable-source-maps');
  const sourceMaps = booleanOption('pprof options', 'pprof.sourceMaps', options.sourceMaps, nodeMapsSources);
  const heapSamples = options.heapSamples ?? 'live';
  if (heapSamples !== 'live' && heapSamples !== 'allocations')
    throw new TypeError(
      `pprof option heapSamples must be 'live' (the /heap profile) or 'allocations' (the /allocs profile), got ${String(heapSamples)}`,
    );
  if (heapSamples === 'allocations' && heapProfiler === '@datadog/pprof')
    throw new TypeError(
      "pprof option heapSamples: 'allocations' needs the inspector heap reader; @datadog/pprof cannot keep the samples of freed objects (use heapProfiler 'auto' or 'inspector')",
    );
  return {
    maxProfileSeconds,
    defaultProfileSeconds,
    cpuSamplingIntervalMicros,
    heapSamplingIntervalBytes,
    keepCodeLog,
    heapProfiler,
    sourceMaps,
    heapSamples,
    trace: resolveTrace(options.trace),
    ...resolveProfiler(options.profiler, env),
  };
}
