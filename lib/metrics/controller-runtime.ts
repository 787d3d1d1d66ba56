/**
 * controller-runtime's metric families, so that the Grafana dashboards and alert rules written for
 * Go controllers work unchanged on a Node controller. Names, label names, buckets and result values
 * are controller-runtime's and client-go's, taken from their sources:
 * - kubernetes-sigs/controller-runtime pkg/internal/controller/metrics/metrics.go (the
 *   `controller_runtime_*` families and the reconcile-time buckets);
 * - kubernetes-sigs/controller-runtime pkg/internal/controller/controller.go (the `result` values,
 *   every one set to 0 when a controller starts, `max_concurrent_reconciles` set then too);
 * - kubernetes-sigs/controller-runtime pkg/metrics/workqueue.go (the `workqueue_*` families, labelled
 *   `name` and `controller`, both the queue's name; buckets `ExponentialBuckets(10e-9, 10, 12)`);
 * - kubernetes/client-go util/workqueue/metrics.go (when each is recorded);
 * - kubernetes-sigs/controller-runtime pkg/metrics/leaderelection.go (`leader_election_master_status`).
 * The help texts are our own. `workqueue_depth` has a third label in controller-runtime, `priority`,
 * always empty for a queue without priorities; Prometheus stores an empty label as no label, so it is
 * left out and the stored series are the same.
 *
 * The families belong to the registry, shared by every controller attached to it (one
 * `ControllerMetrics` each, told apart by the `controller` label), and leave it with the last one.
 * Counters and histograms are updated as work happens; gauges are read when Prometheus scrapes.
 */
import { clientFor } from './client';
import type { ResolvedNativeHistogramOptions } from './native-histogram';
import { elapsedMs, type MonotonicClock } from '../util/clock';
import { exemplarsOf, ownerOf, seriesKey, withExemplars, type MetricExemplars } from './exemplar-store';
import type { LeaderTracker } from './leader';
import type { CounterLike as Counter, GaugeLike as Gauge, HistogramLike as Histogram, MetricsRegistry } from './shapes';

/** What a reconciliation ended with, as controller-runtime's `result` label says it. */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

/** Every `result` value, each exposed (at 0) from the start as controller-runtime does. */
export const RECONCILE_RESULTS: readonly ReconcileResult[] = Object.freeze(['success', 'error', 'requeue', 'requeue_after']);

/** controller-runtime's buckets of `controller_runtime_reconcile_time_seconds`, 5 ms to 60 s. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5,
  4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
]);

/**
 * The work queue histograms' buckets, 10 ns to 1000 s: computed by repeated multiplication as Go's
 * `ExponentialBuckets` computes them, so the bounds are the same numbers (9.999999999999999e-6, not
 * 1e-5).
 */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = Object.freeze(exponentialBuckets(10e-9, 10, 12));

/** `count` bounds from `start`, each `factor` times the one before, multiplied in turn as Go does. */
function exponentialBuckets(start: number, factor: number, count: number): number[] {
  const bounds: number[] = [];
  for (let bound = start; bounds.length < count; bound *= factor) bounds.push(bound);
  return bounds;
}

type AnyRegistry = MetricsRegistry;

/** What a work queue tells the metrics as it runs. */
export interface QueueRecorder {
  /** A key became queued (not a duplicate of a key already waiting). */
  added(): void;
  /** A key was taken by a worker after waiting `seconds`. */
  waited(seconds: number): void;
  /** A worker finished a key after `seconds`. */
  worked(seconds: number): void;
  /** A key was put back to be retried later. */
  retried(): void;
  /** The queue stopped reporting: its series leave the families. */
  detach(): void;
}

/** What the metrics read from a work queue when Prometheus scrapes. */
export interface QueueReader {
  /** Keys queued and not yet taken by a worker (client-go's depth). */
  depth(): number;
  /** Clock readings (the metrics' clock) at which the keys being worked on were taken. */
  startedAt(): Iterable<number>;
}

/**
 * One controller's share of controller-runtime's families, as this package's pipeline and work
 * queues drive it (see {@link ControllerMetricsDriver}).
 */
export interface ControllerRuntimeDriver {
  /** The `controller` label, the default name of the controller's work queues. */
  readonly controller: string;
  /** A reconciliation started (`controller_runtime_active_workers`); call the returned function once when it ends. */
  workStarted(): () => void;
  /** A queue loop runs `count` workers (`controller_runtime_max_concurrent_reconciles`); call the returned function when it stops. */
  addWorkers(count: number): () => void;
  /** Reports the work queue `name` in the `workqueue_*` families, read through `reader` at each scrape. */
  attachQueue(name: string, reader: QueueReader): QueueRecorder;
}

interface AttachedQueue {
  readonly labels: { readonly name: string; readonly controller: string };
  readonly reader: QueueReader;
  /** The clock its readings come from: its controller's. */
  readonly now: MonotonicClock;
}

/** Sets one series of a gauge being rebuilt at scrape time. */
type SetSeries = (labels: Record<string, string>, value: number) => void;

/** One family: what prom-client needs, and for a gauge how its series are read when Prometheus scrapes. */
interface FamilySpec {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly buckets?: readonly number[];
  readonly read?: (families: SharedFamilies, set: SetSeries) => void;
}

const BY_CONTROLLER = ['controller'];
const BY_QUEUE = ['name', 'controller'];

/** A gauge with one series per controller, read from it at scrape time. */
function perController(name: string, help: string, value: (controller: ControllerRuntime) => number): FamilySpec {
  return {
    name,
    type: 'gauge',
    help,
    labelNames: BY_CONTROLLER,
    read: (families, set) => {
      for (const c of families.controllers.values()) set({ controller: c.controller }, value(c));
    },
  };
}

/** A gauge with one series per work queue, read from it at scrape time. */
function perQueue(name: string, help: string, value: (queue: AttachedQueue) => number): FamilySpec {
  return {
    name,
    type: 'gauge',
    help,
    labelNames: BY_QUEUE,
    read: (families, set) => {
      for (const q of families.queues.values()) set(q.labels, value(q));
    },
  };
}

/** The 13 families, in exposition order. */
const FAMILY_SPECS: readonly FamilySpec[] = [
  {
    name: 'controller_runtime_reconcile_total',
    type: 'counter',
    help: 'Reconciliations by controller and how they ended (success, error, requeue, requeue_after)',
    labelNames: ['controller', 'result'],
  },
  {
    name: 'controller_runtime_reconcile_errors_total',
    type: 'counter',
    help: 'Reconciliations that ended in an error, by controller',
    labelNames: BY_CONTROLLER,
  },
  {
    name: 'controller_runtime_reconcile_time_seconds',
    type: 'histogram',
    help: 'Seconds one reconciliation took, by controller',
    labelNames: BY_CONTROLLER,
    buckets: RECONCILE_TIME_BUCKETS,
  },
  perController('controller_runtime_max_concurrent_reconciles', 'How many reconciliations the controller may run at once', (c) =>
    c.maxConcurrentReconciles(),
  ),
  perController('controller_runtime_active_workers', 'Reconciliations running now, by controller', (c) => c.activeWorkers()),
  {
    name: 'leader_election_master_status',
    type: 'gauge',
    help: 'Whether this replica holds the named lease: 1 leader, 0 standby (aggregate by name)',
    labelNames: ['name'],
    read: (families, set) => {
      // Controllers sharing a lease report one series: leading under it by any of them is leading.
      const leading = new Map<string, boolean>();
      for (const c of families.controllers.values()) leading.set(c.leaseName, (leading.get(c.leaseName) ?? false) || c.isLeader());
      for (const [name, isLeader] of leading) set({ name }, isLeader ? 1 : 0);
    },
  },
  perQueue('workqueue_depth', 'Keys waiting in the work queue for a worker', (q) => q.reader.depth()),
  { name: 'workqueue_adds_total', type: 'counter', help: 'Keys added to the work queue', labelNames: BY_QUEUE },
  {
    name: 'workqueue_queue_duration_seconds',
    type: 'histogram',
    help: 'Seconds a key waited in the work queue before a worker took it',
    labelNames: BY_QUEUE,
    buckets: WORKQUEUE_DURATION_BUCKETS,
  },
  {
    name: 'workqueue_work_duration_seconds',
    type: 'histogram',
    help: 'Seconds a worker spent on one key',
    labelNames: BY_QUEUE,
    buckets: WORKQUEUE_DURATION_BUCKETS,
  },
  perQueue(
    'workqueue_unfinished_work_seconds',
    'Seconds of work in progress not yet counted in work_duration, summed over the keys being worked on (a steady rise means stuck workers)',
    (q) => busySeconds(q).total,
  ),
  perQueue(
    'workqueue_longest_running_processor_seconds',
    'Seconds the longest-running worker of the queue has spent on its current key',
    (q) => busySeconds(q).longest,
  ),
  {
    name: 'workqueue_retries_total',
    type: 'counter',
    help: 'Keys put back in the work queue to be retried after a backoff',
    labelNames: BY_QUEUE,
  },
];

/** The family names, in exposition order. */
export const CONTROLLER_RUNTIME_METRIC_NAMES: readonly string[] = Object.freeze(FAMILY_SPECS.map((spec) => spec.name));

/**
 * Registers one family on `registry`; a gauge's series are rebuilt from `spec.read` at each scrape,
 * so a controller or queue that leaves, leaves. The reconcile counters and histogram carry their
 * exemplars, and `controller_runtime_reconcile_total` its owner: the next controller on the
 * registry finds the families through it.
 */
function createFamily(
  registry: AnyRegistry,
  spec: FamilySpec,
  families: SharedFamilies,
  native: ResolvedNativeHistogramOptions | undefined,
): Counter | Gauge | Histogram {
  const config = { name: spec.name, help: spec.help, labelNames: [...spec.labelNames], registers: [registry] };
  const client = clientFor(registry, 'controller-runtime families');
  const exemplars = EXEMPLAR_FAMILIES.includes(spec.name);
  const owner = spec.name === OWNER_FAMILY ? families : undefined;
  if (spec.type === 'counter') return new (exemplars ? withExemplars(client.Counter, [], owner) : client.Counter)(config);
  if (spec.type === 'histogram') {
    const buckets = [...spec.buckets!];
    // Native buckets are carried as exemplars are: by a metric of this package's own subclass.
    const carrying = exemplars || native !== undefined;
    return new (carrying ? withExemplars(client.Histogram, buckets, undefined, native) : client.Histogram)({ ...config, buckets });
  }
  const read = spec.read!;
  return new client.Gauge({
    ...config,
    collect(this: Gauge): void {
      this.reset();
      read(families, (labels, value) => this.set(labels, value));
    },
  });
}

/** The families whose series keep the last cycle's correlation id as exemplar. */
const EXEMPLAR_FAMILIES: readonly string[] = [
  'controller_runtime_reconcile_total',
  'controller_runtime_reconcile_errors_total',
  'controller_runtime_reconcile_time_seconds',
];
/** The family through which a registry's families are found: see {@link familiesOn}. */
const OWNER_FAMILY = 'controller_runtime_reconcile_total';

/** The 13 families on one registry and the controllers and queues that feed them. */
class SharedFamilies {
  readonly controllers = new Map<string, ControllerRuntime>();
  readonly queues = new Map<string, AttachedQueue>();
  readonly reconcileTotal: Counter;
  readonly reconcileErrors: Counter;
  readonly reconcileTime: Histogram;
  readonly adds: Counter;
  readonly queueDuration: Histogram;
  readonly workDuration: Histogram;
  readonly retries: Counter;
  /** Every family, in the order of {@link CONTROLLER_RUNTIME_METRIC_NAMES}. */
  private readonly all: ReadonlyArray<Counter | Gauge | Histogram>;

  constructor(
    private readonly registry: AnyRegistry,
    native: ResolvedNativeHistogramOptions | undefined,
  ) {
    this.all = FAMILY_SPECS.map((spec) => createFamily(registry, spec, this, native));
    const named = <T>(name: string): T => this.all[CONTROLLER_RUNTIME_METRIC_NAMES.indexOf(name)] as T;
    this.reconcileTotal = named('controller_runtime_reconcile_total');
    this.reconcileErrors = named('controller_runtime_reconcile_errors_total');
    this.reconcileTime = named('controller_runtime_reconcile_time_seconds');
    this.adds = named('workqueue_adds_total');
    this.queueDuration = named('workqueue_queue_duration_seconds');
    this.workDuration = named('workqueue_work_duration_seconds');
    this.retries = named('workqueue_retries_total');
  }

  /** Whether these are the families of `registry`. */
  on(registry: AnyRegistry): boolean {
    return this.registry === registry;
  }

  /** Whether every family is still this object's on the registry (a `registry.clear()` removes them). */
  registered(): boolean {
    return this.all.every((metric, i) => this.registry.getSingleMetric(CONTROLLER_RUNTIME_METRIC_NAMES[i]!) === metric);
  }

  /** Takes the families off the registry, when the last controller leaves. */
  unregister(): void {
    for (const [i, metric] of this.all.entries()) {
      const name = CONTROLLER_RUNTIME_METRIC_NAMES[i]!;
      if (this.registry.getSingleMetric(name) === metric) this.registry.removeSingleMetric(name);
    }
  }
}

/** A queue's work in progress: total and longest, in seconds, now. */
function busySeconds(queue: AttachedQueue): { total: number; longest: number } {
  const now = queue.now();
  let total = 0;
  let longest = 0;
  for (const startedAt of queue.reader.startedAt()) {
    const seconds = elapsedMs(startedAt, now) / 1000;
    total += seconds;
    if (seconds > longest) longest = seconds;
  }
  return { total, longest };
}

/**
 * The families this package registered on `registry`, found through the registry itself (the
 * owner its `controller_runtime_reconcile_total` carries), while every one of them is still there.
 */
function familiesOn(registry: AnyRegistry): SharedFamilies | undefined {
  const owner = ownerOf(registry.getSingleMetric(OWNER_FAMILY));
  return owner instanceof SharedFamilies && owner.on(registry) && owner.registered() ? owner : undefined;
}

/** What attaching a controller to a registry needs. */
export interface ControllerRuntimeSettings {
  /** The `controller` label. */
  readonly controller: string;
  /** The `name` label of `leader_election_master_status`. */
  readonly leaseName: string;
  /** Where the controller's leadership is kept. */
  readonly leader: LeaderTracker;
  /** The metrics' monotonic clock. */
  readonly now: MonotonicClock;
  /** Native buckets for the histograms, when the first controller of the registry creates the families. */
  readonly nativeHistograms: ResolvedNativeHistogramOptions | undefined;
}

/**
 * Checks, before anything is registered, that `registry` can take the families for `controller`:
 * each name is free or already ours, and no other controller on it has that name.
 *
 * @throws Error naming the conflict.
 */
export function checkControllerRuntimeFree(registry: AnyRegistry, controller: string): void {
  const families = familiesOn(registry);
  const ours = families !== undefined;
  if (ours && families.controllers.has(controller)) {
    throw new Error(
      `cannot add controller-runtime metrics for controller "${controller}": another ControllerMetrics on this registry ` +
        'already reports that controller. Give each one its own controllerRuntime.controller name, or remove() the other first',
    );
  }
  if (ours) return;
  const taken = CONTROLLER_RUNTIME_METRIC_NAMES.find((name) => registry.getSingleMetric(name) !== undefined);
  if (taken !== undefined) {
    throw new Error(
      `cannot add controller-runtime metrics: metric "${taken}" is already registered on this registry by someone else. ` +
        'Use another registry for them, or leave option controllerRuntime off',
    );
  }
}

/** Attaches a controller to the registry's families, registering them on first use. Check with {@link checkControllerRuntimeFree} first. */
export function attachControllerRuntime(registry: AnyRegistry, settings: ControllerRuntimeSettings): ControllerRuntime {
  const families = familiesOn(registry) ?? new SharedFamilies(registry, settings.nativeHistograms);
  const runtime = new ControllerRuntime(families, settings);
  families.controllers.set(settings.controller, runtime);
  return runtime;
}

/** One controller's part of the families: what the pipeline, the `time*` helpers and the work queue drive. */
export class ControllerRuntime implements ControllerRuntimeDriver {
  /** The `controller` label. */
  readonly controller: string;
  /** The lease's name, the `name` label of `leader_election_master_status`. */
  readonly leaseName: string;
  /** The metrics' monotonic clock, which the work queue measures with too. */
  readonly now: MonotonicClock;
  private active = 0;
  /** Workers of the running queue loops, by loop. */
  private readonly workers = new Set<{ readonly count: number }>();
  private readonly leader: LeaderTracker;
  /** The exemplars the reconcile families carry. */
  private readonly exemplars: { readonly total: MetricExemplars; readonly errors: MetricExemplars; readonly time: MetricExemplars };
  /** Each series' labels, built once: the host's path only looks them up. */
  private readonly labels: { readonly controller: string };
  private readonly totalLabels: { readonly [R in ReconcileResult]: { readonly controller: string; readonly result: R } };
  /** The same series' exemplar keys. */
  private readonly key: string;
  private readonly totalKey: { readonly [R in ReconcileResult]: string };
  /** This controller's queues, detached with it. */
  private readonly queues = new Set<QueueRecorder>();
  private attached = true;

  constructor(
    private readonly families: SharedFamilies,
    settings: ControllerRuntimeSettings,
  ) {
    this.controller = settings.controller;
    this.leaseName = settings.leaseName;
    this.now = settings.now;
    this.leader = settings.leader;
    this.exemplars = {
      total: exemplarsOf(families.reconcileTotal)!,
      errors: exemplarsOf(families.reconcileErrors)!,
      time: exemplarsOf(families.reconcileTime)!,
    };
    const controller = this.controller;
    this.labels = Object.freeze({ controller });
    const total = <R extends ReconcileResult>(result: R) => Object.freeze({ controller, result });
    this.totalLabels = {
      success: total('success'),
      error: total('error'),
      requeue: total('requeue'),
      requeue_after: total('requeue_after'),
    };
    this.key = seriesKey(this.labels);
    const totalKey = (result: ReconcileResult): string => seriesKey(this.totalLabels[result]);
    this.totalKey = {
      success: totalKey('success'),
      error: totalKey('error'),
      requeue: totalKey('requeue'),
      requeue_after: totalKey('requeue_after'),
    };
    // Every series exists from the start, as controller-runtime's initMetrics makes them: a rate()
    // over a counter that appears only with its first error misses that error.
    for (const result of RECONCILE_RESULTS) families.reconcileTotal.inc(this.totalLabels[result], 0);
    families.reconcileErrors.inc(this.labels, 0);
    families.reconcileTime.zero(this.labels);
  }

  /** Records one finished reconciliation, with the cycle's correlation id as exemplar when given. */
  reconciled(seconds: number, result: ReconcileResult, correlationId: string | undefined): void {
    const { families, labels, exemplars } = this;
    families.reconcileTotal.inc(this.totalLabels[result]);
    if (result === 'error') families.reconcileErrors.inc(labels);
    families.reconcileTime.observe(labels, seconds);
    if (correlationId !== undefined) {
      exemplars.total.record(this.totalKey[result], 1, correlationId);
      if (result === 'error') exemplars.errors.record(this.key, 1, correlationId);
      exemplars.time.record(this.key, seconds, correlationId);
    }
  }

  /** A reconciliation started; call the returned function once when it ends. */
  workStarted(): () => void {
    this.active += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.active -= 1;
    };
  }

  /** Reconciliations running now. */
  activeWorkers(): number {
    return this.active;
  }

  /**
   * Counts `count` workers of a queue loop into `max_concurrent_reconciles` until the returned
   * function is called. With no loop running it is 1, controller-runtime's default.
   */
  addWorkers(count: number): () => void {
    const loop = { count };
    this.workers.add(loop);
    return () => void this.workers.delete(loop);
  }

  /** `max_concurrent_reconciles`: the running loops' workers, or 1 when none runs. */
  maxConcurrentReconciles(): number {
    let total = 0;
    for (const loop of this.workers) total += loop.count;
    return total === 0 ? 1 : total;
  }

  /** Whether this replica leads, for `leader_election_master_status`. */
  isLeader(): boolean {
    return this.leader.isLeader();
  }

  /**
   * Attaches a work queue: its `workqueue_*` series are labelled `name` and `controller`, both the
   * queue's name, as controller-runtime labels them.
   *
   * @throws Error when a queue with that name already reports on this registry.
   */
  attachQueue(name: string, reader: QueueReader): QueueRecorder {
    const { families } = this;
    if (!this.attached) throw new Error('cannot attach a work queue: these controller metrics were removed');
    if (families.queues.has(name)) {
      throw new Error(`a work queue named "${name}" already reports workqueue metrics on this registry; give each queue its own name`);
    }
    const labels = Object.freeze({ name, controller: name });
    families.queues.set(name, { labels, reader, now: this.now });
    families.adds.inc(labels, 0);
    families.retries.inc(labels, 0);
    families.queueDuration.zero(labels);
    families.workDuration.zero(labels);
    let detached = false;
    const recorder: QueueRecorder = {
      added: () => void (detached || families.adds.inc(labels)),
      waited: (seconds) => void (detached || families.queueDuration.observe(labels, seconds)),
      worked: (seconds) => void (detached || families.workDuration.observe(labels, seconds)),
      retried: () => void (detached || families.retries.inc(labels)),
      detach: () => {
        if (detached) return;
        detached = true;
        this.queues.delete(recorder);
        if (families.queues.get(name)?.reader === reader) families.queues.delete(name);
        for (const metric of [families.adds, families.retries, families.queueDuration, families.workDuration]) metric.remove(labels);
      },
    };
    this.queues.add(recorder);
    return recorder;
  }

  /** Takes this controller's series off the families, and the families off the registry when it was the last. */
  detach(): void {
    if (!this.attached) return;
    this.attached = false;
    const { families, controller } = this;
    if (families.controllers.get(controller) !== this) return;
    for (const queue of [...this.queues]) queue.detach();
    families.controllers.delete(controller);
    for (const result of RECONCILE_RESULTS) {
      families.reconcileTotal.remove({ controller, result });
      this.exemplars.total.forget({ controller, result });
    }
    families.reconcileErrors.remove({ controller });
    families.reconcileTime.remove({ controller });
    this.exemplars.errors.forget({ controller });
    this.exemplars.time.forget({ controller });
    if (families.controllers.size === 0) families.unregister();
  }
}
