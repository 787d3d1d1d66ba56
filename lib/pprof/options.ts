import { booleanOption, choiceOption, describeValue, integerOption } from '../options';
import * as option from '../options/spec';
import { optionSpec, type SameOptions } from '../options/spec';
import type { HeapProfilerChoice, HeapSamples } from './heap/sampler';

const HEAP_PROFILERS: readonly HeapProfilerChoice[] = ['auto', '@datadog/pprof', 'inspector'];
/** Which CPU profiler to use; `auto` prefers the native addon and falls back to the inspector. */
export type ProfilerChoice = 'auto' | 'v8-profiler-next' | 'inspector';

/** Options of `createPprofRouter`; omitted ones take {@link PPROF_DEFAULTS}. */
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
   * (see docs/benchmarks.md). Default `true`; ignored with the v8-profiler-next backend, which
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
   * the package's 20 ms stall goal: on a promise-busy host (docs/benchmarks.md, benchmark 13) a 3 s trace stalls
   * the event loop 15-59 ms at worst (6-17 ms without one) and the host's memory grows by about 25 MB
   * at the default 100 000 events. Categories that crashed Node are refused whatever the option.
   */
  trace?: boolean | TraceOptions;
  /**
   * The arguments `/debug/pprof/cmdline` shows after the script. The Node binary, Node's own flags
   * (`process.execArgv`) and the script's path are always shown; every later argument is served as
   * `[REDACTED]` unless it equals a name listed here, or is `NAME=value` for a listed `NAME`
   * (`['serve', '--port']` shows `serve` and `--port=8080`). A value passed as the next argument
   * (`--port 8080`) stays hidden unless listed itself. Default: none.
   */
  cmdlineArgs?: readonly string[];
}

/** Limits of the trace endpoint (pprof option `trace`); each bounds what one trace costs the host. Omitted ones take {@link TRACE_DEFAULTS}. */
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

/** The environment variable that can force a backend. */
export const PROFILER_ENV = 'CONTROLLER_INTROSPECTION_PROFILER';

/** The factory that declares these options; `createIntrospectionRouter` names itself and `pprof.` (see {@link resolvePprofOptions}). */
const WHERE = 'createPprofRouter';
const PROFILERS: readonly ProfilerChoice[] = ['auto', 'v8-profiler-next', 'inspector'];
const HEAP_SAMPLES: readonly HeapSamples[] = ['live', 'allocations'];
// Beyond an hour the V8 profile of a busy process no longer fits comfortably in memory.
const MAX_SECONDS_CEILING = 3600;
const MAX_HEAP_INTERVAL = 2 ** 31 - 1;
// Bounds that keep a profile useful: much below 100 µs the sampling itself dominates the host's
// CPU time; above 1 s a 30 s profile holds a few dozen samples at most.
const MIN_CPU_INTERVAL = 100;
const MAX_CPU_INTERVAL = 1_000_000;

/** The limits of the trace endpoint, declared once: ranges and defaults (a group of the pprof options). */
const TRACE_SPEC = optionSpec(
  WHERE,
  {
    /** Traces of up to 10 s. */
    maxSeconds: option.integer(10, { min: 1, max: 60 }),
    /** 100 000 events per trace. */
    maxEvents: option.integer(100_000, { min: 1_000, max: 1_000_000 }),
    /** 32 MiB of event JSON per trace. */
    maxBytes: option.integer(32 * 1024 * 1024, { min: 64 * 1024, max: 256 * 1024 * 1024 }),
  },
  'trace',
);

/** The limits of the trace endpoint when `trace: true` (or an object without them) turns it on. Frozen. */
export const TRACE_DEFAULTS = TRACE_SPEC.defaults;

/** {@link TraceOptions} checked, with {@link TRACE_DEFAULTS} applied. */
export type ResolvedTraceOptions = ReturnType<typeof TRACE_SPEC.resolve>;

function resolveTrace(where: string, path: string, option: unknown): ResolvedTraceOptions | false {
  if (option === undefined || option === false) return false;
  if (option !== true && (typeof option !== 'object' || option === null || Array.isArray(option))) {
    throw new TypeError(
      `${where}: ${path} must be true, false or an object of limits { ${Object.keys(TRACE_DEFAULTS).join(', ')} }, got ${describeValue(option)}`,
    );
  }
  return TRACE_SPEC.resolve(option === true ? undefined : option, { where, path });
}

function isNamedArgument(entry: unknown): entry is string {
  return typeof entry === 'string' && entry !== '';
}

/** The options of `createPprofRouter`, declared once: kinds, ranges and defaults. */
const PPROF_SPEC = optionSpec(WHERE, {
  /** `/debug/pprof/cmdline` shows no argument after the script. */
  cmdlineArgs: option.array(Object.freeze([]) as readonly string[], isNamedArgument, 'non-empty strings (arguments or flag names to show)'),
  /** CPU profiles of up to 5 minutes. */
  maxProfileSeconds: option.integer(300, { min: 1, max: MAX_SECONDS_CEILING }),
  /** 30 s CPU profiles without `?seconds=` (as Go's net/http/pprof), or `maxProfileSeconds` when shorter. */
  // Its range ends at maxProfileSeconds: checked once that is known.
  defaultProfileSeconds: option.later(30),
  /** 100 Hz, as Go samples. */
  cpuSamplingIntervalMicros: option.integer(10_000, {
    min: MIN_CPU_INTERVAL,
    max: MAX_CPU_INTERVAL,
    hint: 'microseconds between CPU samples; 10000 is 100 Hz',
  }),
  /** A heap sample every 512 KiB allocated. */
  heapSamplingIntervalBytes: option.custom(512 * 1024, ({ where, path, value, fallback }) =>
    value === false ? false : integerOption(where, path, value, fallback, 1, MAX_HEAP_INTERVAL, 'or false to turn heap sampling off'),
  ),
  /** The native addon when it loads, else the inspector; the environment may force one. */
  // The environment is read once the option is known.
  profiler: option.later<ProfilerChoice>('auto'),
  /** The inspector backend keeps V8's code log between profiles. */
  keepCodeLog: option.boolean(true),
  /** `@datadog/pprof` when its addon loads, else the inspector. */
  heapProfiler: option.choice('auto', HEAP_PROFILERS),
  // Its default follows the process: see PprofOptions.sourceMaps.
  sourceMaps: option.custom(undefined, ({ where, path, value }) => booleanOption(where, path, value, nodeMapsSources())),
  /** Live objects (`/heap`). */
  heapSamples: option.choice('live', HEAP_SAMPLES),
  /** The trace endpoint is off; `trace: true` turns it on with {@link TRACE_DEFAULTS}. */
  // null is a mistake to report, not an omission.
  trace: option.custom(false, ({ where, path, value, fallback }) => resolveTrace(where, path, value === undefined ? fallback : value)),
});

/**
 * {@link PprofOptions} checked, with {@link PPROF_DEFAULTS} applied: what the declaration resolves
 * to, with the options checked after the others given their types, and where the profiler came from.
 */
export type ResolvedPprofOptions = Omit<ReturnType<typeof PPROF_SPEC.resolve>, 'defaultProfileSeconds' | 'profiler'> & {
  /** See {@link PprofOptions.defaultProfileSeconds}: at most `maxProfileSeconds`. */
  readonly defaultProfileSeconds: number;
  /** The requested backend. */
  readonly profiler: ProfilerChoice;
  /** Where `profiler` came from, for the index page. */
  readonly profilerSource: 'default' | 'option' | 'env';
};

/**
 * What every option of `createPprofRouter` resolves to when omitted. Frozen. `sourceMaps` is absent:
 * it follows the process (on with `--enable-source-maps`), see {@link PprofOptions.sourceMaps}.
 */
export const PPROF_DEFAULTS = PPROF_SPEC.defaults;

/** The names of the pprof options, for a factory that tells an options object from a dependency. */
export const PPROF_OPTION_KEYS: readonly string[] = PPROF_SPEC.keys;

/** The declaration and {@link PprofOptions} name the same options: one added to either alone is a compile error. */
const optionsMatch: SameOptions<PprofOptions, ReturnType<typeof PPROF_SPEC.resolve>> = true;
void optionsMatch;

function resolveProfiler(
  where: string,
  path: string,
  option: unknown,
  env: NodeJS.ProcessEnv,
): Pick<ResolvedPprofOptions, 'profiler' | 'profilerSource'> {
  const profiler = choiceOption(where, path, option, PPROF_DEFAULTS.profiler, PROFILERS);
  if (profiler !== 'auto') return { profiler, profilerSource: 'option' };
  const source = option === undefined ? 'default' : 'option';
  const fromEnv = env[PROFILER_ENV];
  if (fromEnv === undefined || fromEnv === '') return { profiler, profilerSource: source };
  if (!PROFILERS.includes(fromEnv as ProfilerChoice)) {
    throw new TypeError(
      `${where}: environment variable ${PROFILER_ENV} must be one of ${PROFILERS.join(', ')} (or unset), got ${JSON.stringify(fromEnv)}`,
    );
  }
  return { profiler: fromEnv as ProfilerChoice, profilerSource: 'env' };
}

/** Whether Node maps stack traces through source maps: on Node 20.7 and later it says; before, only the flag tells. */
function nodeMapsSources(): boolean {
  return (process as { sourceMapsEnabled?: boolean }).sourceMapsEnabled ?? process.execArgv.includes('--enable-source-maps');
}

/**
 * Validates options once, at router creation, so that a typo fails at start-up with a message
 * that says how to fix it rather than at the first profile request. Messages start with the
 * factory: `createPprofRouter: maxProfileSeconds …`, or with `as` the factory that takes these as
 * one of its options: `createIntrospectionRouter: pprof.maxProfileSeconds …`.
 */
export function resolvePprofOptions(
  options: PprofOptions = {},
  env: NodeJS.ProcessEnv = process.env,
  as: { readonly where: string; readonly path: string } = { where: WHERE, path: '' },
): ResolvedPprofOptions {
  const { defaultProfileSeconds, profiler, ...resolved } = PPROF_SPEC.resolve(options, as);
  const { maxProfileSeconds, heapSamples, heapProfiler } = resolved;
  const named = (key: string): string => (as.path === '' ? key : `${as.path}.${key}`);
  if (heapSamples === 'allocations' && heapProfiler === '@datadog/pprof')
    throw new TypeError(
      `${as.where}: ${named('heapSamples')} 'allocations' needs the inspector heap reader; @datadog/pprof cannot keep the samples of freed objects (use heapProfiler 'auto' or 'inspector')`,
    );
  return {
    ...resolved,
    defaultProfileSeconds: integerOption(
      as.where,
      named('defaultProfileSeconds'),
      defaultProfileSeconds,
      Math.min(PPROF_DEFAULTS.defaultProfileSeconds, maxProfileSeconds),
      1,
      maxProfileSeconds,
    ),
    ...resolveProfiler(as.where, named('profiler'), profiler, env),
  };
}
