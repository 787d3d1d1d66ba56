import { clientFor } from './client';
import { elapsedMs, readingOrNaN, type MonotonicClock } from '../util/clock';
import { LeaderTracker } from './leader';
import {
  CONTROLLER_METRICS,
  controllerMetricNames,
  type ControllerMetricDefinition,
  type ControllerMetricKey,
  type ControllerMetricType,
} from './names';
import {
  resolveControllerMetricsOptions,
  type ControllerMetricsOptions,
  type MetricsStateSource,
  type ResolvedControllerMetricsOptions,
} from './options';
import { createHealthGauges, createWatchersGauge } from './health-metrics';
import { collectProcessMetrics } from './process-metrics';
import { BUILD_INFO_SUFFIX, createBuildInfoGauge } from './build-info';
import {
  attachControllerRuntime,
  checkControllerRuntimeFree,
  type ControllerRuntime,
  type ControllerRuntimeDriver,
  type ReconcileResult,
} from './controller-runtime';
import { exemplarsOf, withExemplars, type MetricExemplars } from './exemplar-store';
import { readEventStat, readResourceCounts } from './host-readings';
import {
  isRegistry,
  type CounterLike as Counter,
  type GaugeLike as Gauge,
  type HistogramLike as Histogram,
  type MetricsRegistry,
} from './shapes';
import { closeOnce } from '../util/close-once';

/**
 * The controller's metric families on one registry, and the calls a controller makes to drive them.
 *
 * Record calls are cheap (a counter increment, a histogram observation); state-backed values are
 * read only when Prometheus scrapes.
 */
export interface ControllerMetrics {
  /** The prefix every family name starts with. */
  readonly prefix: string;
  /** Full names of the 14 families, in exposition order. */
  readonly metricNames: readonly string[];
  /**
   * Counts one reconciliation cycle and observes its duration; a failed one also counts as an error.
   * With controller-runtime's families on, also counts it there (result `success` or `error`).
   *
   * @param seconds - Duration, finite and `>= 0`.
   * @param ok - `false` when the cycle failed.
   * @param correlationId - The cycle's correlation id (the one its events carry): kept as the
   *   OpenMetrics exemplar of the histogram bucket the duration fell in and of the counters this
   *   call increments, shown in OpenMetrics answers only. An id longer than 114 characters is not
   *   kept (OpenMetrics' 128-character limit on exemplar labels, `correlation_id` included).
   * @throws TypeError on an invalid argument (a bug in the caller, surfaced where it happens).
   */
  recordReconciliation(seconds: number, ok: boolean, correlationId?: string): void;
  /**
   * Runs `fn` and records it as one reconciliation: `ok` when it returned (or its promise
   * resolved), failed when it threw (or rejected). The result or error is passed through unchanged.
   * While it runs it counts in `controller_runtime_active_workers`.
   *
   * @param correlationId - As for {@link ControllerMetrics.recordReconciliation}.
   */
  timeReconciliation<T>(fn: () => Promise<T> | T, correlationId?: string): Promise<T>;
  /** Like {@link ControllerMetrics.recordReconciliation}, for one deployment attempt. */
  recordDeployment(seconds: number, ok: boolean, correlationId?: string): void;
  /** Like {@link ControllerMetrics.timeReconciliation}, for one deployment attempt. */
  timeDeployment<T>(fn: () => Promise<T> | T, correlationId?: string): Promise<T>;
  /** Counts one validation attempt; a failed one also counts as an error. */
  recordValidation(ok: boolean): void;
  /**
   * Reports this replica's leadership. Replicas start as followers. Only a change of value is a
   * transition, so this may be called from every election callback. With `true`, `stillLeading`
   * (optional) is asked at every read of leadership while it lasts (each scrape, `isLeader()`):
   * once it answers `false`, leadership ends at that read, as `setLeader(false)` would end it.
   * `createLeaseElector` passes its renew-deadline check, so a scrape after a stalled event loop
   * never says 1.
   */
  setLeader(isLeader: boolean, stillLeading?: () => boolean): void;
  /** Whether this replica currently leads, as last reported with {@link ControllerMetrics.setLeader}. */
  isLeader(): boolean;
  /**
   * Takes the 14 families (and build_info, the health gauges, this controller's controller-runtime
   * series and its work queues' series) off the registry so that a new `ControllerMetrics` with the
   * same prefix can be created on it; a family the registry no longer holds (for example after
   * `registry.clear()`) is left alone. They are off the registry when `close()` returns; the
   * promise settles at once (on a later microtask) and never rejects. Idempotent: every call
   * answers the same promise. Record calls afterwards still work but are not exposed. Process
   * metrics, if enabled, stay: they belong to the registry. Fits `drain({ close: [metrics] })`.
   */
  close(): Promise<void>;
  /**
   * What the package's pipeline and work queues report beyond the calls above (their
   * `PipelineMetrics`, which this object is); hosts do not call it. A wrapper that spreads this
   * object keeps it, and with it controller-runtime's families, the exemplars and the work queues'
   * series.
   */
  readonly driver: ControllerMetricsDriver;
}

/**
 * What a {@link ControllerMetrics} offers beyond its record calls, as the pipeline's `PipelineDriver`
 * asks: its clock, controller-runtime's result of a cycle, and the controller's share of
 * controller-runtime's families.
 */
export interface ControllerMetricsDriver {
  /** The metrics' monotonic clock, which work queues measure waits with too. */
  readonly now: MonotonicClock;
  /** This controller's share of controller-runtime's families, when they are on. */
  readonly controllerRuntime: ControllerRuntimeDriver | undefined;
  /**
   * {@link ControllerMetrics.recordReconciliation} with controller-runtime's result given (a
   * requeue is a success that comes back) rather than derived from `ok`, and no progress recorded
   * on the state: the caller (the pipeline) records its own.
   */
  recordReconciliation(seconds: number, ok: boolean, correlationId: string | undefined, result: ReconcileResult): void;
}

type AnyRegistry = MetricsRegistry;
type Family = Counter | Gauge | Histogram;
type MetricOfType<T extends ControllerMetricType> = T extends 'counter' ? Counter : T extends 'gauge' ? Gauge : Histogram;
/** Each family under its handle, typed by its declared Prometheus type. */
type Families = { readonly [K in ControllerMetricKey]: MetricOfType<(typeof CONTROLLER_METRICS)[K]['type']> };
/** Families whose value is read when Prometheus scrapes instead of being recorded as it happens. */
type ScrapeReaders = { readonly [K in ControllerMetricKey]?: (metric: Families[K]) => void };
/** What one family registration leaves behind, so `close()` can take back exactly what it added. */
type Registered = Array<readonly [string, Family]>;

/**
 * Registers the controller metric families on `registry` and returns the handle that drives them.
 *
 * One prefix per registry: creating a second instance with the same prefix on the same registry
 * throws at creation (not at scrape time); reuse the first instance, `close()` it, or use another
 * registry. Instances with different prefixes coexist on one registry.
 *
 * Also registers `<prefix>build_info` (unless `buildInfo: false`) and, with `controllerRuntime`,
 * controller-runtime's families, shared by the controllers on the registry.
 *
 * @param registry - The registry to register on: a `Registry` of prom-client 15 or of `@prometheus-io/client`
 *   0.16 (text or OpenMetrics); see {@link MetricsRegistry}.
 * @param state - Where `resource_count`, `events_published_total` and `event_subscribers` are
 *   read from at scrape time (and the health gauges, with `healthMetrics`); each reconciliation
 *   the host records (`recordReconciliation`, `timeReconciliation`) is recorded as its progress
 *   (the pipeline records its cycles' itself). `undefined`: those three are still exposed,
 *   `resource_count` with no series, the other two at 0.
 * @param options - Prefix, buckets, clock, process metrics, health gauges, controller-runtime's
 *   families and build_info; see {@link ControllerMetricsOptions}.
 * @throws TypeError on an invalid state or options (options given second, where the state goes,
 *   are refused with the call's new shape), or when `registry` and a metric on it come from two
 *   metrics clients (prom-client and `@prometheus-io/client`, or two copies of one).
 * @throws Error when one of the family names is already registered on `registry`, or another
 *   `ControllerMetrics` on it reports the same controller-runtime controller.
 */
export function createControllerMetrics(
  registry: MetricsRegistry,
  state?: MetricsStateSource,
  options?: ControllerMetricsOptions,
): ControllerMetrics {
  if (!isRegistry(registry)) {
    throw new TypeError(
      'createControllerMetrics: the first argument must be a Registry of prom-client or @prometheus-io/client, for example new Registry()',
    );
  }
  const resolved = resolveControllerMetricsOptions(state, options);
  // Two clients in one process are refused before anything is registered.
  clientFor(registry, 'createControllerMetrics');
  const metricNames = controllerMetricNames(resolved.prefix);
  const buildInfoName = resolved.buildInfo === undefined ? [] : [resolved.prefix + BUILD_INFO_SUFFIX];
  checkNamesFree(registry, resolved.prefix, [...metricNames, ...buildInfoName]);
  if (resolved.controllerRuntime !== undefined) checkControllerRuntimeFree(registry, resolved.controllerRuntime.controller);

  const leader = new LeaderTracker(resolved.now);
  const registered: Registered = [];
  let runtime: ControllerRuntime | undefined;
  const remove = (): void => {
    for (const [name, metric] of registered) {
      if (registry.getSingleMetric(name) === metric) registry.removeSingleMetric(name);
    }
    runtime?.detach();
  };
  let families: Families;
  try {
    families = registerFamilies(registry, resolved, scrapeReaders(resolved.state, leader), registered);
    registerCompanions(registry, resolved, registered);
    if (resolved.controllerRuntime !== undefined) {
      runtime = attachControllerRuntime(registry, {
        ...resolved.controllerRuntime,
        leader,
        now: resolved.now,
        nativeHistograms: resolved.nativeHistograms,
      });
    }
  } catch (err) {
    remove();
    throw err;
  }
  const record = recorders(families, resolved, runtime);
  const metrics: ControllerMetrics = {
    prefix: resolved.prefix,
    metricNames: Object.freeze(metricNames),
    recordReconciliation: record.recordReconciliation,
    timeReconciliation: record.timeReconciliation,
    recordDeployment: record.recordDeployment,
    timeDeployment: record.timeDeployment,
    recordValidation: record.recordValidation,
    setLeader(isLeader: boolean, stillLeading?: () => boolean): void {
      if (typeof isLeader !== 'boolean') throw new TypeError(`setLeader(isLeader) needs a boolean; got ${typeof isLeader}`);
      if (stillLeading !== undefined && typeof stillLeading !== 'function') {
        throw new TypeError(`setLeader(isLeader, stillLeading) needs a function or nothing; got ${typeof stillLeading}`);
      }
      leader.set(isLeader, stillLeading);
    },
    isLeader: () => leader.isLeader(),
    close: closeOnce(0, remove),
    driver: Object.freeze({ now: resolved.now, controllerRuntime: runtime, recordReconciliation: record.reconciled }),
  };
  return metrics;
}

/** Checked for every family before creating any, so a conflict leaves the registry untouched. */
function checkNamesFree(registry: AnyRegistry, prefix: string, names: readonly string[]): void {
  const taken = names.find((name) => registry.getSingleMetric(name) !== undefined);
  if (taken !== undefined) {
    throw new Error(
      `cannot register controller metrics with prefix "${prefix}": metric "${taken}" is already registered on this ` +
        'registry. Reuse the existing ControllerMetrics instance for this registry (or call its close() first), ' +
        'or pass another registry or another prefix',
    );
  }
}

/** The families whose series keep the last cycle's correlation id as exemplar. */
const CARRY_EXEMPLARS: ReadonlySet<ControllerMetricKey> = new Set([
  'reconciliationTotal',
  'reconciliationErrors',
  'reconciliationDuration',
  'deploymentTotal',
  'deploymentErrors',
  'deploymentDuration',
]);

/** One prom-client metric per declared family, in declaration order, which is the exposition order. */
function registerFamilies(
  registry: AnyRegistry,
  resolved: ResolvedControllerMetricsOptions,
  readers: ScrapeReaders,
  registered: Registered,
): Families {
  const client = clientFor(registry, 'createControllerMetrics');
  const buckets: Partial<Record<ControllerMetricKey, number[]>> = {
    reconciliationDuration: resolved.reconciliationBuckets,
    deploymentDuration: resolved.deploymentBuckets,
  };
  const families: Partial<Record<ControllerMetricKey, Family>> = {};
  for (const key of Object.keys(CONTROLLER_METRICS) as ControllerMetricKey[]) {
    const definition: ControllerMetricDefinition = CONTROLLER_METRICS[key];
    // Widened once here: the mapped types guarantee each reader receives its own family's type.
    const read = readers[key] as ((metric: Family) => void) | undefined;
    const config = {
      name: resolved.prefix + definition.suffix,
      help: definition.help,
      labelNames: [...definition.labelNames],
      registers: [registry],
      ...(read !== undefined && {
        collect(this: Family): void {
          read(this);
        },
      }),
    };
    // The reconciliation and deployment counters and histograms carry the cycle's correlation id.
    const exemplars = CARRY_EXEMPLARS.has(key);
    const metric =
      definition.type === 'counter'
        ? new (exemplars ? withExemplars(client.Counter, []) : client.Counter)(config)
        : definition.type === 'gauge'
          ? new client.Gauge(config)
          : new (exemplars ? withExemplars(client.Histogram, buckets[key]!, undefined, resolved.nativeHistograms) : client.Histogram)({
              ...config,
              buckets: buckets[key],
            });
    registered.push([config.name, metric]);
    families[key] = metric;
  }
  return families as Families;
}

/** The families that mirror the host's state or the leader tracker at each scrape. */
function scrapeReaders(state: MetricsStateSource | undefined, leader: LeaderTracker): ScrapeReaders {
  return {
    resourceCount: (gauge) => {
      if (state !== undefined) collectResourceCounts(gauge, state);
    },
    eventSubscribers: (gauge) => {
      if (state !== undefined) gauge.set(readEventStat(state, 'subscribers'));
    },
    eventsPublished: (counter) => {
      if (state !== undefined) setCounter(counter, readEventStat(state, 'published'));
    },
    isLeader: (gauge) => gauge.set(leader.isLeader() ? 1 : 0),
    leaderTransitions: (counter) => setCounter(counter, leader.transitions()),
    // Computed at each scrape rather than on loss of leadership, so a long-running leader's value
    // grows steadily instead of jumping when the term ends.
    timeAsLeader: (counter) => setCounter(counter, leader.secondsAsLeader()),
  };
}

/** The gauges beside the 14 families: build_info, watchers, health checks, process metrics. */
function registerCompanions(registry: AnyRegistry, resolved: ResolvedControllerMetricsOptions, registered: Registered): void {
  const { prefix, state } = resolved;
  if (resolved.buildInfo !== undefined) registered.push(createBuildInfoGauge(registry, prefix, resolved.buildInfo));
  if (state !== undefined) registered.push(createWatchersGauge(registry, prefix, state));
  if (resolved.healthMetrics) {
    for (const [name, gauge] of createHealthGauges(registry, prefix, state!)) registered.push([name, gauge]);
  }
  if (resolved.processMetricsPrefix !== undefined) collectProcessMetrics(registry, { prefix: resolved.processMetricsPrefix });
}

type Recorders = Pick<
  ControllerMetrics,
  'recordReconciliation' | 'timeReconciliation' | 'recordDeployment' | 'timeDeployment' | 'recordValidation'
> & { readonly reconciled: ControllerMetricsDriver['recordReconciliation'] };

/** The calls a controller makes as work happens. */
function recorders(families: Families, resolved: ResolvedControllerMetricsOptions, runtime: ControllerRuntime | undefined): Recorders {
  const { state, now } = resolved;
  // Made with their exemplars by registerFamilies: looked up once, not on every record.
  const carried = (metric: Family): MetricExemplars => exemplarsOf(metric)!;
  const exemplars = {
    reconciliationTotal: carried(families.reconciliationTotal),
    reconciliationErrors: carried(families.reconciliationErrors),
    reconciliationDuration: carried(families.reconciliationDuration),
    deploymentTotal: carried(families.deploymentTotal),
    deploymentErrors: carried(families.deploymentErrors),
    deploymentDuration: carried(families.deploymentDuration),
  };
  const reconciled = (seconds: number, ok: boolean, correlationId: string | undefined, result: ReconcileResult): void => {
    families.reconciliationTotal.inc();
    families.reconciliationDuration.observe(seconds);
    if (!ok) families.reconciliationErrors.inc();
    if (correlationId !== undefined) {
      exemplars.reconciliationTotal.record(undefined, 1, correlationId);
      exemplars.reconciliationDuration.record(undefined, seconds, correlationId);
      if (!ok) exemplars.reconciliationErrors.record(undefined, 1, correlationId);
    }
    runtime?.reconciled(seconds, result, correlationId);
  };
  const recordReconciliation = (seconds: number, ok: boolean, correlationId?: string): void => {
    checkRecord('recordReconciliation', seconds, ok, correlationId);
    reconciled(seconds, ok, correlationId, ok ? 'success' : 'error');
    // A completed cycle, failed or not, is progress of the reconcile loop: the watchdog's default.
    state?.recordProgress?.('reconciliation');
  };
  const recordDeployment = (seconds: number, ok: boolean, correlationId?: string): void => {
    checkRecord('recordDeployment', seconds, ok, correlationId);
    families.deploymentTotal.inc();
    families.deploymentDuration.observe(seconds);
    if (!ok) families.deploymentErrors.inc();
    if (correlationId !== undefined) {
      exemplars.deploymentTotal.record(undefined, 1, correlationId);
      exemplars.deploymentDuration.record(undefined, seconds, correlationId);
      if (!ok) exemplars.deploymentErrors.record(undefined, 1, correlationId);
    }
  };
  const timed = async <T>(
    fn: () => Promise<T> | T,
    correlationId: string | undefined,
    record: (seconds: number, ok: boolean, correlationId?: string) => void,
    method: string,
    working?: ControllerRuntime,
  ): Promise<T> => {
    if (typeof fn !== 'function') throw new TypeError(`${method} needs a function to run and time`);
    checkCorrelationId(method, correlationId);
    const startedAt = now();
    const ended = working?.workStarted();
    let ok = false;
    try {
      const result = await fn();
      ok = true;
      return result;
    } finally {
      ended?.();
      // The result (or the error) of fn must come back: a clock that failed meanwhile is not
      // allowed to replace it; the next call's first reading names it.
      record(elapsedMs(startedAt, readingOrNaN(now)) / 1000, ok, correlationId);
    }
  };
  return {
    reconciled,
    recordReconciliation,
    timeReconciliation: (fn, correlationId) => timed(fn, correlationId, recordReconciliation, 'timeReconciliation', runtime),
    recordDeployment,
    timeDeployment: (fn, correlationId) => timed(fn, correlationId, recordDeployment, 'timeDeployment'),
    recordValidation(ok: boolean): void {
      if (typeof ok !== 'boolean') throw new TypeError(`recordValidation(ok) needs a boolean; got ${typeof ok}`);
      families.validationTotal.inc();
      if (!ok) families.validationErrors.inc();
    },
  };
}

/**
 * Rebuilds the labelled series from the host's counts, so a type the host stops reporting
 * disappears from the output instead of freezing at its last value. Counts that are not an object
 * of finite counts throw (see `host-readings.ts`): the family is left out of that scrape.
 */
function collectResourceCounts(gauge: Gauge, state: MetricsStateSource): void {
  // Read and checked before reset: a failed read leaves the last good series in place.
  const counts = readResourceCounts(state);
  gauge.reset();
  for (const [type, count] of counts) gauge.set({ type }, count);
}

/** prom-client counters have no `set`; a scrape-time counter mirrors its source this way. */
function setCounter(counter: Counter, value: number): void {
  counter.reset();
  counter.inc(value);
}

function checkRecord(method: string, seconds: number, ok: boolean, correlationId: string | undefined): void {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError(`${method}(seconds, ok) needs a finite duration in seconds >= 0; got ${String(seconds)}`);
  }
  if (typeof ok !== 'boolean') throw new TypeError(`${method}(seconds, ok) needs ok to be a boolean; got ${typeof ok}`);
  checkCorrelationId(method, correlationId);
}

/** A correlation id is optional; given, it must be a non-empty string (a too-long one is dropped, not refused). */
function checkCorrelationId(method: string, correlationId: unknown): void {
  if (correlationId !== undefined && (typeof correlationId !== 'string' || correlationId === '')) {
    throw new TypeError(
      `${method}: correlationId must be a non-empty string (the cycle's id) or omitted; got ${correlationId === '' ? 'an empty string' : typeof correlationId}`,
    );
  }
}
