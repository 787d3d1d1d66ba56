/**
 * What the pipeline, its workers and its work queues report, declared here where it is reported
 * (as client-go's workqueue declares its `MetricsProvider`): this folder knows no metrics. The
 * `ControllerMetrics` of `createControllerMetrics` has this shape (the package's entry checks it
 * at compile time); a host may hand over its own, a wrapper or a test double.
 */
import type { MonotonicClock } from '../util/clock';

/**
 * How a cycle ended, as controller-runtime's `result` label names it: `success`, `error`, or
 * `requeue_after` (a success whose key comes back for a resync).
 */
export type CycleOutcome = 'success' | 'error' | 'requeue_after';

/** What a work queue offers to be read when its reporter is asked (at a scrape, for metrics). */
export interface WorkQueueReading {
  /** Keys queued and not yet taken by a worker (client-go's depth). */
  depth(): number;
  /** Readings of the reporter's clock ({@link PipelineDriver.now}) at which the keys being worked on were taken. */
  startedAt(): Iterable<number>;
}

/** What one work queue tells as it runs; see {@link ControllerRuntimeReporter.attachQueue}. */
export interface QueueReporter {
  /** A key became queued (not one already waiting). */
  added(): void;
  /** A worker took a key that had waited `seconds` since it was added. */
  waited(seconds: number): void;
  /** A worker was done with a key after `seconds`. */
  worked(seconds: number): void;
  /** A key was put back to be tried again after its backoff. */
  retried(): void;
  /** The queue shut down: it tells nothing more. */
  detach(): void;
}

/** What the workers of `pipeline.processQueue` and the work queues report for one controller, as controller-runtime does. */
export interface ControllerRuntimeReporter {
  /** The controller's name: the default name of its work queues. */
  readonly controller: string;
  /** A cycle started; the answer is called once when it ends. */
  workStarted(): () => void;
  /** A queue loop started `count` workers; the answer is called once when they stop. */
  addWorkers(count: number): () => void;
  /** A work queue named `name` started, readable through `reading`: answers where it reports. */
  attachQueue(name: string, reading: WorkQueueReading): QueueReporter;
}

/** What a cycle reports beyond the host's record calls, and the clock the work queues time with. */
export interface PipelineDriver {
  /** The monotonic clock (milliseconds) the work queues measure waits with; default `performance.now`. */
  readonly now?: MonotonicClock | undefined;
  /** The controller's workers and queues, when they are reported. */
  readonly controllerRuntime?: ControllerRuntimeReporter | undefined;
  /**
   * A cycle ended after `seconds`, `ok` or not, with the correlation id its events carry, and
   * `outcome` as controller-runtime's `result` says it.
   */
  recordReconciliation(seconds: number, ok: boolean, correlationId: string | undefined, outcome: CycleOutcome): void;
}

/**
 * Where the option `metrics` of `createPipeline` and `createWorkQueue` reports: the
 * `ControllerMetrics` of `createControllerMetrics`, or one the host writes.
 */
export interface PipelineMetrics {
  /** A validation ended, `ok` or not. */
  recordValidation(ok: boolean): void;
  /** A deployment to every endpoint ended after `seconds`, `ok` when every endpoint succeeded. */
  recordDeployment(seconds: number, ok: boolean, correlationId?: string): void;
  /** What cycles, workers and queues report. */
  readonly driver: PipelineDriver;
}

/** Whether `value` is an object with a function at each of `names`. */
function hasFunctions(value: unknown, names: readonly string[]): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const members = value as Record<string, unknown>;
  return names.every((name) => typeof members[name] === 'function');
}

/**
 * `metrics`, given as option `option` of `where`, checked: `undefined` without metrics.
 *
 * @throws TypeError when `metrics` lacks a call the pipeline makes, at creation rather than at
 *   the first cycle.
 */
export function checkPipelineMetrics(where: string, option: string, metrics: unknown): PipelineMetrics | undefined {
  if (metrics === undefined) return undefined;
  const driver = (metrics as Partial<PipelineMetrics> | null)?.driver;
  const runtime = driver?.controllerRuntime;
  const complete =
    hasFunctions(metrics, ['recordValidation', 'recordDeployment']) &&
    hasFunctions(driver, ['recordReconciliation']) &&
    (driver?.now === undefined || typeof driver.now === 'function') &&
    (runtime === undefined ||
      (typeof runtime.controller === 'string' && hasFunctions(runtime, ['workStarted', 'addWorkers', 'attachQueue'])));
  if (!complete) {
    throw new TypeError(
      `${where}: option "${option}" must be the result of createControllerMetrics(), or a PipelineMetrics: recordValidation, ` +
        'recordDeployment and a driver with recordReconciliation (and now, controllerRuntime when given: see PipelineDriver)',
    );
  }
  return metrics as PipelineMetrics;
}
