import { checkOptionObject, refuseOptionsInPlace, resultCheckedOption } from '../options';
import * as option from '../options/spec';
import { optionSpec, type SameOptions } from '../options/spec';
import type { IntrospectionState } from '../state/types';
import { MONOTONIC_READING } from './clock';
import { monotonicNow } from '../util/clock';
import { PREFIX_OPTION, validateMetricPrefix } from './names';
import type { ProcessMetricsOptions } from './process-metrics';
import { resolveNativeHistogramOptions, type NativeHistogramOptions, type ResolvedNativeHistogramOptions } from './native-histogram';

/**
 * The part of the host state the metrics read: resource counts and event-stream counters. Any
 * {@link IntrospectionState} fits; a host with its own caches can pass just these two functions.
 */
export type MetricsStateSource = Pick<IntrospectionState, 'resourceCounts' | 'eventStats'> &
  Partial<Pick<IntrospectionState, 'recordProgress' | 'readinessGates' | 'progress'>>;

/** Histogram upper bounds, in seconds, of the two duration histograms. */
export interface DurationBuckets {
  /** Buckets of `<prefix>reconciliation_duration_seconds`. Default {@link DEFAULT_DURATION_BUCKETS}. */
  reconciliation?: readonly number[];
  /** Buckets of `<prefix>deployment_duration_seconds`. Default {@link DEFAULT_DURATION_BUCKETS}. */
  deployment?: readonly number[];
}

/**
 * controller-runtime's families (see {@link ControllerMetricsOptions.controllerRuntime}): the
 * labels that name this controller and its lease.
 */
export interface ControllerRuntimeOptions {
  /**
   * The `controller` label, as controller-runtime names a controller (usually its kind in lower
   * case, for example `ingress`). Default `controller`.
   */
  controller?: string;
  /** The `name` label of `leader_election_master_status`: the lease's name. Default: the controller name. */
  leaseName?: string;
}

/** The labels of `<prefix>build_info` that only the host knows (see {@link ControllerMetricsOptions.buildInfo}). */
export interface BuildInfoOptions {
  /** The controller's version, for example from its package.json or a build argument. Default `unknown`. */
  version?: string;
  /** The controller's source revision, for example the commit it was built from. Default `unknown`. */
  revision?: string;
}

/** Options of `createControllerMetrics`. */
export interface ControllerMetricsOptions {
  /** Metric-name prefix, matching `[a-zA-Z_:][a-zA-Z0-9_:]*`. Default `ctl_`. */
  prefix?: string;
  /** Histogram buckets; each list must be non-empty, finite and strictly increasing. */
  buckets?: DurationBuckets;
  /**
   * Monotonic clock in milliseconds used by the `time*` helpers, leader time and the work queue.
   * Default `performance.now`. Inject one only for tests; a wall clock breaks counters on clock steps.
   * Called once at creation: one that throws or answers anything but a finite number throws there.
   * One that goes wrong later fails what reads it with an error naming this option: `setLeader` and
   * `time*` at the call, the families that read it at a scrape (leader time, the work queues'
   * unfinished work), which are then left out of that scrape while the rest is served.
   */
  now?: () => number;
  /**
   * Also expose prom-client's Node.js process metrics on the same registry. `true` uses the same
   * prefix as the controller metrics; an object may set another one. Default off. Idempotent per
   * registry and prefix (see `collectProcessMetrics`).
   */
  processMetrics?: boolean | ProcessMetricsOptions;
  /**
   * Also expose the health helpers' state, read from the state at scrape time:
   * `<prefix>readiness_gate_open{gate}` (1 open, 0 closed) and
   * `<prefix>progress_last_timestamp_seconds{activity}` (what the progress watchdog watches).
   * Needs the state (`createControllerMetrics`' second argument) to be an `IntrospectionState`.
   * Default off.
   */
  healthMetrics?: boolean;
  /**
   * Also expose controller-runtime's families, unprefixed, so dashboards and alerts written for Go
   * controllers work unchanged: `controller_runtime_reconcile_total{controller,result}`,
   * `controller_runtime_reconcile_errors_total`, `controller_runtime_reconcile_time_seconds`,
   * `controller_runtime_active_workers`, `controller_runtime_max_concurrent_reconciles`,
   * `leader_election_master_status{name}`, and the `workqueue_*` families of the work queues created
   * with these metrics (`createWorkQueue`). Fed by the pipeline and the `record*` / `time*` helpers.
   * `true` or an object turns them on. Default off.
   */
  controllerRuntime?: boolean | ControllerRuntimeOptions;
  /**
   * `<prefix>build_info{version,revision,node_version,package_version} 1`. On by default, with
   * version and revision `unknown` until given; `false` leaves it out.
   */
  buildInfo?: boolean | BuildInfoOptions;
  /**
   * Native histograms (Prometheus' sparse exponential buckets) for the package's histograms:
   * `<prefix>reconciliation_duration_seconds`, `<prefix>deployment_duration_seconds`, and with
   * `controllerRuntime` `controller_runtime_reconcile_time_seconds`,
   * `workqueue_queue_duration_seconds` and `workqueue_work_duration_seconds`. Served only in the
   * protobuf exposition, which Prometheus 3 asks for with `scrape_native_histograms: true`; each
   * keeps its classic buckets beside them, so text and OpenMetrics answers do not change. `true`
   * for client_golang's reference settings (bucket factor 1.1, zero threshold 2^-128, at most 160
   * buckets per series), or the settings to change. Default `false`. controller-runtime's
   * families are shared by the controllers of a registry: the first one creates them with its setting.
   */
  nativeHistograms?: boolean | NativeHistogramOptions;
}

/**
 * Default buckets of both duration histograms, 10 ms to 10 s: the range the original controller
 * uses; reconciliations and deployments below 10 ms or above 10 s land in the first or `+Inf` bucket.
 */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = Object.freeze([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

const WHERE = 'createControllerMetrics';

/** The options of `createControllerMetrics`, declared once: kinds and defaults. */
const CONTROLLER_METRICS_SPEC = optionSpec(WHERE, {
  /** The metric-name prefix. */
  prefix: PREFIX_OPTION,
  /** Both histograms' buckets: {@link DEFAULT_DURATION_BUCKETS}. */
  buckets: option.group({
    /** `<prefix>reconciliation_duration_seconds`. */
    reconciliation: option.custom(DEFAULT_DURATION_BUCKETS, ({ path, value }) => validateBuckets(value, path)),
    /** `<prefix>deployment_duration_seconds`. */
    deployment: option.custom(DEFAULT_DURATION_BUCKETS, ({ path, value }) => validateBuckets(value, path)),
  }),
  now: option.custom(undefined, ({ where, path, value }) =>
    resultCheckedOption(
      where,
      path,
      value,
      monotonicNow,
      'a function returning monotonic milliseconds, like performance.now',
      MONOTONIC_READING,
    ),
  ),
  /** Process metrics are off. */
  // Their prefix follows prefix: checked once that is known.
  processMetrics: option.later(false),
  /** Health gauges are off. */
  healthMetrics: option.boolean(false),
  /** controller-runtime's families are off: they are opt-in (`true` or `{ controller }` turns them on). */
  controllerRuntime: option.custom(false as boolean | ControllerRuntimeOptions, ({ value, fallback }) =>
    resolveControllerRuntime(value, fallback),
  ),
  /** Off: classic buckets only. */
  nativeHistograms: option.custom(false as boolean | NativeHistogramOptions, ({ value, fallback }) =>
    resolveNativeHistograms(value, fallback),
  ),
  /** `<prefix>build_info` is on, with these labels until given. */
  buildInfo: option.custom(
    Object.freeze({
      /** The `version` label when none is given. */
      version: 'unknown',
      /** The `revision` label when none is given. */
      revision: 'unknown',
    }) as boolean | BuildInfoOptions,
    ({ value, fallback }) => resolveBuildInfo(value, fallback),
  ),
});

/** Every default of `createControllerMetrics`, in one place. */
export const CONTROLLER_METRICS_DEFAULTS = CONTROLLER_METRICS_SPEC.defaults;

/**
 * {@link ControllerMetricsOptions} after validation, with defaults filled in: what the declaration
 * resolves to, with the buckets and the process metrics' prefix taken out of their groups, and the
 * state (the factory's second argument).
 */
export type ResolvedControllerMetricsOptions = Omit<ReturnType<typeof CONTROLLER_METRICS_SPEC.resolve>, 'buckets' | 'processMetrics'> & {
  readonly state: MetricsStateSource | undefined;
  readonly reconciliationBuckets: number[];
  readonly deploymentBuckets: number[];
  /** Prefix for process metrics, or `undefined` when they are off. */
  readonly processMetricsPrefix: string | undefined;
};

/** The declaration and {@link ControllerMetricsOptions} name the same options: one added to either alone is a compile error. */
const optionsMatch: SameOptions<ControllerMetricsOptions, ReturnType<typeof CONTROLLER_METRICS_SPEC.resolve>> = true;
void optionsMatch;

/**
 * Validates the state and the options once, at creation, so a mistake fails at startup with a
 * message saying how to fix it rather than on the first scrape or observation.
 *
 * @throws TypeError on an invalid state or option, or options given in the state's place.
 */
export function resolveControllerMetricsOptions(
  state: MetricsStateSource | undefined,
  options: ControllerMetricsOptions | undefined,
): ResolvedControllerMetricsOptions {
  const source = checkStateSource(state);
  const { buckets, processMetrics, healthMetrics, ...resolved } = CONTROLLER_METRICS_SPEC.resolve(options);
  if (healthMetrics && (typeof source?.readinessGates !== 'function' || typeof source.progress !== 'function')) {
    throw new TypeError(
      `${WHERE}: healthMetrics needs the state (the second argument) to be an IntrospectionState (it reads readinessGates() and progress())`,
    );
  }
  return {
    ...resolved,
    state: source,
    reconciliationBuckets: buckets.reconciliation,
    deploymentBuckets: buckets.deployment,
    processMetricsPrefix: resolveProcessMetricsPrefix(processMetrics, resolved.prefix),
    healthMetrics,
  };
}

/** Whether `value` has either reading of a {@link MetricsStateSource}: a state, right or wrong, not options. */
function looksLikeState(value: unknown): boolean {
  const source = value as Partial<MetricsStateSource>;
  return typeof source.resourceCounts === 'function' || typeof source.eventStats === 'function';
}

/** The state argument: undefined, or what provides the two readings the metrics need. */
function checkStateSource(state: unknown): MetricsStateSource | undefined {
  if (state === undefined) return undefined;
  refuseOptionsInPlace(WHERE, state, looksLikeState, [...CONTROLLER_METRICS_SPEC.keys, 'state'], {
    position: 'second',
    dependency: 'the state (or undefined)',
    options: 'third',
    call: 'createControllerMetrics(registry, state, { prefix })',
  });
  const source = state as Partial<MetricsStateSource> | null;
  if (typeof source?.resourceCounts !== 'function' || typeof source.eventStats !== 'function') {
    throw new TypeError(
      `${WHERE}: argument "state" must provide resourceCounts() and eventStats() (an IntrospectionState ` +
        'from createIntrospectionState, or an object with those two functions), or be undefined to expose those metrics at 0',
    );
  }
  return state as MetricsStateSource;
}

function validateBuckets(given: unknown, path: string): number[] {
  if (given === undefined) return [...DEFAULT_DURATION_BUCKETS];
  const buckets = given as readonly unknown[];
  const valid =
    Array.isArray(buckets) &&
    buckets.length > 0 &&
    buckets.every((bound, i) => typeof bound === 'number' && Number.isFinite(bound) && (i === 0 || bound > (buckets[i - 1] as number)));
  if (!valid) {
    throw new TypeError(
      `${WHERE}: ${path} must be a non-empty array of finite numbers in strictly increasing ` +
        `order (seconds; +Inf is added automatically), for example [${DEFAULT_DURATION_BUCKETS.join(', ')}]`,
    );
  }
  // A copy: prom-client keeps the array, and the caller's array must not be able to change it later.
  return [...(buckets as readonly number[])];
}

function resolveNativeHistograms(value: unknown, fallback: boolean | NativeHistogramOptions): ResolvedNativeHistogramOptions | undefined {
  const section = toggledSection(
    'nativeHistograms',
    value,
    fallback,
    ['bucketFactor', 'zeroThreshold', 'maxBuckets'],
    '{ maxBuckets: 100 }',
  );
  return section === undefined ? undefined : resolveNativeHistogramOptions(section, `${WHERE}: nativeHistograms`);
}

function resolveProcessMetricsPrefix(processMetrics: unknown, prefix: string): string | undefined {
  const section = toggledSection(
    'processMetrics',
    processMetrics,
    CONTROLLER_METRICS_DEFAULTS.processMetrics,
    ['prefix'],
    '{ prefix: "..." }',
  );
  if (section === undefined) return undefined;
  const own = (section as ProcessMetricsOptions).prefix;
  return validateMetricPrefix(own === undefined ? prefix : own, `${WHERE}: processMetrics.prefix`);
}

function resolveControllerRuntime(
  value: unknown,
  fallback: boolean | object,
): { readonly controller: string; readonly leaseName: string } | undefined {
  const section = toggledSection('controllerRuntime', value, fallback, ['controller', 'leaseName'], '{ controller: "ingress" }');
  if (section === undefined) return undefined;
  const controller = labelOption('controllerRuntime.controller', section['controller'], DEFAULT_CONTROLLER_LABEL);
  return { controller, leaseName: labelOption('controllerRuntime.leaseName', section['leaseName'], controller) };
}

function resolveBuildInfo(
  value: unknown,
  fallback: boolean | BuildInfoOptions,
): { readonly version: string; readonly revision: string } | undefined {
  const defaults = fallback as Required<BuildInfoOptions>;
  const section = toggledSection('buildInfo', value, defaults, ['version', 'revision'], '{ version: "1.4.2" }');
  if (section === undefined) return undefined;
  return {
    version: labelOption('buildInfo.version', section['version'], defaults.version),
    revision: labelOption('buildInfo.revision', section['revision'], defaults.revision),
  };
}

/** The `controller` label of controller-runtime's families when none is given. */
const DEFAULT_CONTROLLER_LABEL = 'controller';

/**
 * An option that is `true`, `false` or an object of settings (which means on): the settings when
 * on (`{}` for `true`), `undefined` when off. An omitted one takes `fallback`, which is itself such a value.
 */
function toggledSection(
  path: string,
  value: unknown,
  fallback: boolean | object,
  known: readonly string[],
  example: string,
): Record<string, unknown> | undefined {
  if (value === undefined) return fallback === false ? undefined : {};
  if (typeof value === 'boolean') return value ? {} : undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${WHERE}: ${path} must be true, false or ${example}`);
  }
  return checkOptionObject(WHERE, path, value, known);
}

/** Longest label value an option may give: a version or a name, not a document. */
const MAX_LABEL_OPTION = 256;

/** A label value given as an option: a non-empty string of at most 256 characters, or `fallback`. */
function labelOption(path: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '' || value.length > MAX_LABEL_OPTION) {
    throw new TypeError(
      `${WHERE}: ${path} must be a non-empty string of at most ${MAX_LABEL_OPTION} characters, got ${describeValue(value)}`,
    );
  }
  return value;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return value === '' ? 'an empty string' : `a string of ${value.length} characters`;
  return value === null ? 'null' : typeof value;
}
