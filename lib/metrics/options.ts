import { checkOptionObject } from '../options';
import type { IntrospectionState } from '../state/types';
import { monotonicNow, type MonotonicClock } from './clock';
import { DEFAULT_METRIC_PREFIX, validateMetricPrefix } from './names';
import type { ProcessMetricsOptions } from './process-metrics';

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

/** Options of `createControllerMetrics`. */
export interface ControllerMetricsOptions {
  /** Metric-name prefix, matching `[a-zA-Z_:][a-zA-Z0-9_:]*`. Default `ctl_`. */
  prefix?: string;
  /**
   * Where `resource_count`, `events_published_total` and `event_subscribers` are read from at
   * scrape time. Without it those three are still exposed: `resource_count` with no series, the
   * other two at 0.
   */
  state?: MetricsStateSource;
  /** Histogram buckets; each list must be non-empty, finite and strictly increasing. */
  buckets?: DurationBuckets;
  /**
   * Monotonic clock in milliseconds used by the `time*` helpers and leader time. Default
   * `performance.now`. Inject one only for tests; a wall clock breaks counters on clock steps.
   */
  now?: () => number;
  /**
   * Also expose prom-client's Node.js process metrics on the same registry. `true` uses the same
   * prefix as the controller metrics; an object may set another one. Default off. Idempotent per
   * registry and prefix (see `collectProcessMetrics`).
   */
  processMetrics?: boolean | ProcessMetricsOptions;
  /**
   * Also expose the health helpers' state, read from `state` at scrape time:
   * `<prefix>readiness_gate_open{gate}` (1 open, 0 closed) and
   * `<prefix>progress_last_timestamp_seconds{activity}` (what the progress watchdog watches).
   * Needs `state` to be an `IntrospectionState`. Default off.
   */
  healthMetrics?: boolean;
}

/**
 * Default buckets of both duration histograms, 10 ms to 10 s: the range the original controller
 * uses; reconciliations and deployments below 10 ms or above 10 s land in the first or `+Inf` bucket.
 */
export const DEFAULT_DURATION_BUCKETS: readonly number[] = Object.freeze([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);

/** {@link ControllerMetricsOptions} after validation, with defaults filled in. */
export interface ResolvedControllerMetricsOptions {
  readonly prefix: string;
  readonly state: MetricsStateSource | undefined;
  readonly reconciliationBuckets: number[];
  readonly deploymentBuckets: number[];
  readonly now: MonotonicClock;
  /** Prefix for process metrics, or `undefined` when they are off. */
  readonly processMetricsPrefix: string | undefined;
  /** Whether the readiness-gate and progress gauges are registered. */
  readonly healthMetrics: boolean;
}

/**
 * Validates the options once, at creation, so a mistake fails at startup with a message saying
 * how to fix it rather than on the first scrape or observation.
 *
 * @throws TypeError on any invalid option.
 */
export function resolveControllerMetricsOptions(options: ControllerMetricsOptions | undefined): ResolvedControllerMetricsOptions {
  if (options === undefined) options = {};
  checkOptionObject('createControllerMetrics', '', options, ['prefix', 'state', 'buckets', 'now', 'processMetrics', 'healthMetrics']);
  const prefix = validateMetricPrefix(
    options.prefix === undefined ? DEFAULT_METRIC_PREFIX : options.prefix,
    'createControllerMetrics option "prefix"',
  );
  const state = options.state;
  if (state !== undefined && (typeof state?.resourceCounts !== 'function' || typeof state?.eventStats !== 'function')) {
    throw new TypeError(
      'createControllerMetrics option "state" must provide resourceCounts() and eventStats() (an IntrospectionState ' +
        'from createIntrospectionState, or an object with those two functions); omit it to expose those metrics at 0',
    );
  }
  const buckets = checkOptionObject('createControllerMetrics', 'buckets', options.buckets, [
    'reconciliation',
    'deployment',
  ]) as DurationBuckets;
  const now = options.now === undefined ? monotonicNow : options.now;
  if (typeof now !== 'function') {
    throw new TypeError('createControllerMetrics option "now" must be a function returning monotonic milliseconds, like performance.now');
  }
  return {
    prefix,
    state,
    reconciliationBuckets: validateBuckets(buckets.reconciliation, 'buckets.reconciliation'),
    deploymentBuckets: validateBuckets(buckets.deployment, 'buckets.deployment'),
    now,
    processMetricsPrefix: resolveProcessMetricsPrefix(options.processMetrics, prefix),
    healthMetrics: resolveHealthMetrics(options.healthMetrics, state),
  };
}

function validateBuckets(buckets: readonly number[] | undefined, option: string): number[] {
  if (buckets === undefined) return [...DEFAULT_DURATION_BUCKETS];
  const valid =
    Array.isArray(buckets) &&
    buckets.length > 0 &&
    buckets.every((bound, i) => typeof bound === 'number' && Number.isFinite(bound) && (i === 0 || bound > buckets[i - 1]!));
  if (!valid) {
    throw new TypeError(
      `createControllerMetrics option "${option}" must be a non-empty array of finite numbers in strictly increasing ` +
        `order (seconds; +Inf is added automatically), for example [${DEFAULT_DURATION_BUCKETS.join(', ')}]`,
    );
  }
  // A copy: prom-client keeps the array, and the caller's array must not be able to change it later.
  return [...buckets];
}

function resolveProcessMetricsPrefix(processMetrics: ControllerMetricsOptions['processMetrics'], prefix: string): string | undefined {
  if (processMetrics === undefined || processMetrics === false) return undefined;
  if (processMetrics === true) return prefix;
  if (typeof processMetrics !== 'object' || processMetrics === null) {
    throw new TypeError('createControllerMetrics option "processMetrics" must be true, false or { prefix: "..." }');
  }
  return validateMetricPrefix(
    processMetrics.prefix === undefined ? prefix : processMetrics.prefix,
    'createControllerMetrics option "processMetrics.prefix"',
  );
}

function resolveHealthMetrics(value: boolean | undefined, state: MetricsStateSource | undefined): boolean {
  if (value === undefined || value === false) return false;
  if (value !== true) throw new TypeError(`createControllerMetrics option "healthMetrics" must be true or false, got ${String(value)}`);
  if (typeof state?.readinessGates !== 'function' || typeof state.progress !== 'function') {
    throw new TypeError(
      'createControllerMetrics option "healthMetrics" needs option "state" to be an IntrospectionState (it reads readinessGates() and progress())',
    );
  }
  return true;
}
