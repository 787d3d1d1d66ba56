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
   * CPU profiler backend; default `auto`. When this is unset or `auto`, the environment variable
   * `CONTROLLER_INTROSPECTION_PROFILER` may force one.
   */
  profiler?: ProfilerChoice;
}

/** Options after validation, with defaults filled in. */
export interface ResolvedPprofOptions {
  /** See {@link PprofOptions.maxProfileSeconds}. */
  readonly maxProfileSeconds: number;
  /** See {@link PprofOptions.defaultProfileSeconds}. */
  readonly defaultProfileSeconds: number;
  /** Bytes between heap samples, or `false` when heap sampling is off. */
  readonly heapSamplingIntervalBytes: number | false;
  /** The requested backend. */
  readonly profiler: ProfilerChoice;
  /** Where {@link profiler} came from, for the index page. */
  readonly profilerSource: 'default' | 'option' | 'env';
}

/** The environment variable that can force a backend. */
export const PROFILER_ENV = 'CONTROLLER_INTROSPECTION_PROFILER';

const CHOICES: readonly ProfilerChoice[] = ['auto', 'v8-profiler-next', 'inspector'];
// Beyond an hour the V8 profile of a busy process no longer fits comfortably in memory.
const MAX_SECONDS_CEILING = 3600;
const MAX_HEAP_INTERVAL = 2 ** 31 - 1;

function positiveInteger(name: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new TypeError(`pprof option ${name} must be an integer from 1 to ${max}, got ${String(value)}`);
  }
  return value;
}

function resolveProfiler(option: unknown, env: NodeJS.ProcessEnv): Pick<ResolvedPprofOptions, 'profiler' | 'profilerSource'> {
  if (option !== undefined && !CHOICES.includes(option as ProfilerChoice)) {
    throw new TypeError(`pprof option profiler must be one of ${CHOICES.join(', ')}, got ${String(option)}`);
  }
  if (option !== undefined && option !== 'auto') return { profiler: option as ProfilerChoice, profilerSource: 'option' };
  const fromEnv = env[PROFILER_ENV];
  if (fromEnv === undefined || fromEnv === '') return { profiler: 'auto', profilerSource: option === undefined ? 'default' : 'option' };
  if (!CHOICES.includes(fromEnv as ProfilerChoice)) {
    throw new TypeError(`environment variable ${PROFILER_ENV} must be one of ${CHOICES.join(', ')} (or unset), got ${JSON.stringify(fromEnv)}`);
  }
  return { profiler: fromEnv as ProfilerChoice, profilerSource: 'env' };
}

/**
 * Validates options once, at router creation, so that a typo fails at start-up with a message
 * that says how to fix it rather than at the first profile request.
 */
export function resolvePprofOptions(options: PprofOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedPprofOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('pprof options must be an object (or omitted)');
  const known = new Set(['maxProfileSeconds', 'defaultProfileSeconds', 'heapSamplingIntervalBytes', 'profiler']);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new TypeError(`unknown pprof option ${JSON.stringify(key)}; known options are ${[...known].join(', ')}`);
  }
  const maxProfileSeconds = positiveInteger('maxProfileSeconds', options.maxProfileSeconds, 300, MAX_SECONDS_CEILING);
  const defaultProfileSeconds = positiveInteger('defaultProfileSeconds', options.defaultProfileSeconds, Math.min(30, maxProfileSeconds), maxProfileSeconds);
  const interval = options.heapSamplingIntervalBytes;
  const heapSamplingIntervalBytes =
    interval === false ? false : positiveInteger('heapSamplingIntervalBytes (or false to turn heap sampling off)', interval, 512 * 1024, MAX_HEAP_INTERVAL);
  return { maxProfileSeconds, defaultProfileSeconds, heapSamplingIntervalBytes, ...resolveProfiler(options.profiler, env) };
}
