import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry, RegistryContentType } from 'prom-client';
import { elapsedMs } from './clock';
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
   *
   * @param seconds - Duration, finite and `>= 0`.
   * @param ok - `false` when the cycle failed.
   * @throws TypeError on an invalid argument (a bug in the caller, surfaced where it happens).
   */
  recordReconciliation(seconds: number, ok: boolean): void;
  /**
   * Runs `fn` and records it as one reconciliation: `ok` when it returned (or its promise
   * resolved), failed when it threw (or rejected). The result or error is passed through unchanged.
   */
  timeReconciliation<T>(fn: () => Promise<T> | T): Promise<T>;
  /** Like {@link ControllerMetrics.recordReconciliation}, for one deployment attempt. */
  recordDeployment(seconds: number, ok: boolean): void;
  /** Like {@link ControllerMetrics.timeReconciliation}, for one deployment attempt. */
  timeDeployment<T>(fn: () => Promise<T> | T): Promise<T>;
  /** Counts one validation attempt; a failed one also counts as an error. */
  recordValidation(ok: boolean): void;
  /**
   * Reports this replica's leadership. Replicas start as followers. Only a change of value is a
   * transition, so this may be called from every election callback.
   */
  setLeader(isLeader: boolean): void;
  /** Whether this replica currently leads, as last reported with {@link ControllerMetrics.setLeader}. */
  isLeader(): boolean;
  /**
   * Takes the 14 families off the registry so that a new `ControllerMetrics` with the same prefix
   * can be created on it. Idempotent; a family the registry no longer holds (for example after
   * `registry.clear()`) is left alone. Record calls afterwards still work but are not exposed.
   * Process metrics, if enabled, stay: they belong to the registry.
   */
  remove(): void;
}

type AnyRegistry = Registry<RegistryContentType>;
type Family = Counter | Gauge | Histogram;
type MetricOfType<T extends ControllerMetricType> = T extends 'counter' ? Counter : T extends 'gauge' ? Gauge : Histogram;
/** Each family under its handle, typed by its declared Prometheus type. */
type Families = { readonly [K in ControllerMetricKey]: MetricOfType<(typeof CONTROLLER_METRICS)[K]['type']> };
/** Families whose value is read when Prometheus scrapes instead of being recorded as it happens. */
type ScrapeReaders = { readonly [K in ControllerMetricKey]?: (metric: Families[K]) => void };
/** What one family registration leaves behind, so `remove()` can take back exactly what it added. */
type Registered = Array<readonly [string, Family]>;

/**
 * Registers the controller metric families on `registry` and returns the handle that drives them.
 *
 * One prefix per registry: creating a second instance with the same prefix on the same registry
 * throws at creation (not at scrape time); reuse the first instance, `remove()` it, or use another
 * registry. Instances with different prefixes coexist on one registry.
 *
 * @param registry - The prom-client registry to register on (text or OpenMetrics).
 * @param options - Prefix, state source, buckets, clock and process metrics; see {@link ControllerMetricsOptions}.
 * @throws TypeError on invalid options.
 * @throws Error when one of the family names is already registered on `registry`.
 */
export function createControllerMetrics(registry: Registry<RegistryContentType>, options?: ControllerMetricsOptions): ControllerMetrics {
  if (!isRegistry(registry)) {
    throw new TypeError('createControllerMetrics needs a prom-client Registry as first argument, for example new Registry()');
  }
  const resolved = resolveControllerMetricsOptions(options);
  const metricNames = controllerMetricNames(resolved.prefix);
  checkNamesFree(registry, resolved.prefix, metricNames);

  const leader = new LeaderTracker(resolved.now);
  const registered: Registered = [];
  const remove = (): void => {
    for (const [name, metric] of registered) {
      if (registry.getSingleMetric(name) === metric) registry.removeSingleMetric(name);
    }
  };
  let families: Families;
  try {
    families = registerFamilies(registry, resolved, scrapeReaders(resolved.state, leader), registered);
    registerCompanions(registry, resolved, registered);
  } catch (err) {
    remove();
    throw err;
  }
  return {
    prefix: resolved.prefix,
    metricNames: Object.freeze(metricNames),
    ...recorders(families, resolved),
    setLeader(isLeader: boolean): void {
      if (typeof isLeader !== 'boolean') throw new TypeError(`setLeader(isLeader) needs a boolean; got ${typeof isLeader}`);
      leader.set(isLeader);
    },
    isLeader: () => leader.isLeader(),
    remove,
  };
}

/** Checked for every family before creating any, so a conflict leaves the registry untouched. */
function checkNamesFree(registry: AnyRegistry, prefix: string, names: readonly string[]): void {
  const taken = names.find((name) => registry.getSingleMetric(name) !== undefined);
  if (taken !== undefined) {
    throw new Error(
      `cannot register controller metrics with prefix "${prefix}": metric "${taken}" is already registered on this ` +
        'registry. Reuse the existing ControllerMetrics instance for this registry (or call its remove() first), ' +
        'or pass another registry or another prefix',
    );
  }
}

/** One prom-client metric per declared family, in declaration order, which is the exposition order. */
function registerFamilies(
  registry: AnyRegistry,
  resolved: ResolvedControllerMetricsOptions,
  readers: ScrapeReaders,
  registered: Registered,
): Families {
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
    const metric =
      definition.type === 'counter'
        ? new Counter(config)
        : definition.type === 'gauge'
          ? new Gauge(config)
          : new Histogram({ ...config, buckets: buckets[key] });
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
      const subscribers = state?.eventStats().subscribers;
      if (isCount(subscribers)) gauge.set(subscribers);
    },
    eventsPublished: (counter) => {
      const published = state?.eventStats().published;
      if (isCount(published)) setCounter(counter, published);
    },
    isLeader: (gauge) => gauge.set(leader.isLeader() ? 1 : 0),
    leaderTransitions: (counter) => setCounter(counter, leader.transitions()),
    // Computed at each scrape rather than on loss of leadership, so a long-running leader's value
    // grows steadily instead of jumping when the term ends.
    timeAsLeader: (counter) => setCounter(counter, leader.secondsAsLeader()),
  };
}

/** The gauges beside the 14 families: watchers, health checks, process metrics. */
function registerCompanions(registry: AnyRegistry, resolved: ResolvedControllerMetricsOptions, registered: Registered): void {
  const { prefix, state } = resolved;
  if (state !== undefined) registered.push(createWatchersGauge(registry, prefix, state));
  if (resolved.healthMetrics) {
    for (const [name, gauge] of createHealthGauges(registry, prefix, state!)) registered.push([name, gauge]);
  }
  if (resolved.processMetricsPrefix !== undefined) collectProcessMetrics(registry, { prefix: resolved.processMetricsPrefix });
}

type Recorders = Pick<
  ControllerMetrics,
  'recordReconciliation' | 'timeReconciliation' | 'recordDeployment' | 'timeDeployment' | 'recordValidation'
>;

/** The calls a controller makes as work happens. */
function recorders(families: Families, resolved: ResolvedControllerMetricsOptions): Recorders {
  const { state, now } = resolved;
  const recordReconciliation = (seconds: number, ok: boolean): void => {
    checkRecord('recordReconciliation', seconds, ok);
    families.reconciliationTotal.inc();
    families.reconciliationDuration.observe(seconds);
    if (!ok) families.reconciliationErrors.inc();
    // A completed cycle, failed or not, is progress of the reconcile loop: the watchdog's default.
    state?.recordProgress?.('reconciliation');
  };
  const recordDeployment = (seconds: number, ok: boolean): void => {
    checkRecord('recordDeployment', seconds, ok);
    families.deploymentTotal.inc();
    families.deploymentDuration.observe(seconds);
    if (!ok) families.deploymentErrors.inc();
  };
  const timed = async <T>(fn: () => Promise<T> | T, record: (seconds: number, ok: boolean) => void, method: string): Promise<T> => {
    if (typeof fn !== 'function') throw new TypeError(`${method} needs a function to run and time`);
    const startedAt = now();
    let ok = false;
    try {
      const result = await fn();
      ok = true;
      return result;
    } finally {
      record(elapsedMs(startedAt, now()) / 1000, ok);
    }
  };
  return {
    recordReconciliation,
    timeReconciliation: (fn) => timed(fn, recordReconciliation, 'timeReconciliation'),
    recordDeployment,
    timeDeployment: (fn) => timed(fn, recordDeployment, 'timeDeployment'),
    recordValidation(ok: boolean): void {
      if (typeof ok !== 'boolean') throw new TypeError(`recordValidation(ok) needs a boolean; got ${typeof ok}`);
      families.validationTotal.inc();
      if (!ok) families.validationErrors.inc();
    },
  };
}

/**
 * Rebuilds the labelled series from the host's counts, so a type the host stops reporting
 * disappears from the output instead of freezing at its last value. Entries that are not finite
 * numbers are skipped: one bad count must not fail the whole scrape.
 */
function collectResourceCounts(gauge: Gauge, state: MetricsStateSource): void {
  // Read before reset: if the host throws, the scrape fails (500) without having wiped the gauge.
  const counts = state.resourceCounts();
  gauge.reset();
  for (const [type, count] of Object.entries(counts)) {
    if (typeof count === 'number' && Number.isFinite(count)) gauge.set({ type }, count);
  }
}

/** prom-client counters have no `set`; a scrape-time counter mirrors its source this way. */
function setCounter(counter: Counter, value: number): void {
  counter.reset();
  counter.inc(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function checkRecord(method: string, seconds: number, ok: boolean): void {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    throw new TypeError(`${method}(seconds, ok) needs a finite duration in seconds >= 0; got ${String(seconds)}`);
  }
  if (typeof ok !== 'boolean') throw new TypeError(`${method}(seconds, ok) needs ok to be a boolean; got ${typeof ok}`);
}

function isRegistry(value: unknown): value is AnyRegistry {
  const candidate = value as Partial<AnyRegistry> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.getSingleMetric === 'function' &&
    typeof candidate.registerMetric === 'function' &&
    typeof candidate.metrics === 'function'
  );
}
