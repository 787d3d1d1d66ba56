/**
 * The pipeline's workers on a work queue: each takes a key, runs the cycle the host describes for
 * it, and puts the key back with a backoff when the cycle failed, as controller-runtime's workers
 * do (kubernetes-sigs/controller-runtime pkg/internal/controller/controller.go, reconcileHandler).
 */
import { callback, custom, integer, optionSpec } from '../options/spec';
import { closeOnce } from '../util/close-once';
import type { ControllerRuntimeReporter } from './reporting';
import type { CycleResult, CycleSpec } from './spec';
import { isWorkQueue, type WorkQueue } from './work-queue';

/** Options of `pipeline.processQueue`. */
export interface QueueProcessingOptions {
  /**
   * Describes the cycle that reconciles `key`, for example by reading the object from an informer's
   * cache. A throw (or rejection) is handled as a failed cycle (the key is retried after its
   * backoff, `onError` is told) but records nothing, as no cycle ran.
   */
  cycle: (key: string) => CycleSpec | Promise<CycleSpec>;
  /** Workers, and so cycles that may run at once (never two for one key). Default 1. */
  workers?: number;
  /**
   * Reconcile a key again this many ms after a cycle for it succeeded: a periodic resync, counted
   * as `requeue_after` in `controller_runtime_reconcile_total`. Default 0: not requeued.
   */
  requeueAfterMs?: number;
  /**
   * Told about every failed cycle, after the pipeline recorded it (events, variables, metrics), with
   * the key it was for, for the host's log. Errors thrown by this callback are ignored.
   */
  onError?: (error: unknown, key: string) => void;
  /**
   * How long `close()` waits for the cycles in flight to end (a cycle's `render`, `validate` or
   * `deploy` may hang) before it settles without them. Milliseconds; default 10 000, `drain`'s
   * `closeTimeoutMs`.
   */
  closeTimeoutMs?: number;
}

const WHERE = 'pipeline.processQueue';

/** The options of `pipeline.processQueue`, declared once. */
const QUEUE_PROCESSING_SPEC = optionSpec(WHERE, {
  cycle: custom(undefined, ({ value }): QueueProcessingOptions['cycle'] => {
    if (typeof value !== 'function') {
      throw new TypeError(`${WHERE}: cycle must be a function (key) => the cycle's description { trigger, render, ... }`);
    }
    return value as QueueProcessingOptions['cycle'];
  }),
  /** One worker, as controller-runtime's `MaxConcurrentReconciles` default. */
  workers: integer(1, { min: 1, max: 1000 }),
  /** No resync after success (0). */
  requeueAfterMs: integer(0, { min: 0, max: 2_147_483_647, hint: 'milliseconds; 0 for no resync' }),
  onError: callback<NonNullable<QueueProcessingOptions['onError']>>('a function (error, key)'),
  /** close() waits 10 s at most for the cycles in flight. */
  closeTimeoutMs: integer(10_000, { min: 0, max: 2_147_483_647 }),
});

/** Every default of `pipeline.processQueue`, in one place. */
export const QUEUE_PROCESSING_DEFAULTS = QUEUE_PROCESSING_SPEC.defaults;

/** Workers running on a queue; see `pipeline.processQueue`. */
export interface QueueProcessing {
  /** How many workers run. */
  readonly workers: number;
  /**
   * Shuts the queue down (see `WorkQueue.shutDown`) at once: no worker takes another key. Settles
   * once the cycles in flight have ended, or after `closeTimeoutMs` with them still running (they
   * are abandoned, not cancelled: what they do is still recorded when they end). Never rejects.
   * Idempotent: every call answers the same promise. Fits `drain({ close: [processing] })`.
   */
  close(): Promise<void>;
}

/** What the workers need from the pipeline. */
export interface QueueProcessingHost {
  /** Where the workers are reported, when they are. */
  readonly runtime: ControllerRuntimeReporter | undefined;
  /** Checks and runs one cycle; `resync` says a requeue after success follows. */
  run(spec: CycleSpec, resync: boolean): Promise<CycleResult>;
}

/** Starts the workers; see `ReconciliationPipeline.processQueue`. */
export function processQueue(queue: WorkQueue, options: QueueProcessingOptions, host: QueueProcessingHost): QueueProcessing {
  if (!isWorkQueue(queue)) throw new TypeError(`${WHERE} needs a queue from createWorkQueue() as first argument`);
  const { cycle, workers, requeueAfterMs, onError, closeTimeoutMs } = QUEUE_PROCESSING_SPEC.resolve(options);
  if (queue.processed) throw new Error(`${WHERE}: queue "${queue.name}" is already being processed; one processQueue per queue`);
  if (queue.shuttingDown) throw new Error(`${WHERE}: queue "${queue.name}" was shut down`);
  queue.processed = true;

  const report = (error: unknown, key: string): void => {
    try {
      onError?.(error, key);
    } catch {
      // A broken logger must not stop a worker.
    }
  };
  const reconcile = async (key: string): Promise<void> => {
    try {
      const spec = await cycle(key);
      await host.run(spec, requeueAfterMs > 0);
      queue.forget(key);
      if (requeueAfterMs > 0) queue.addAfter(key, requeueAfterMs);
    } catch (err) {
      queue.addRateLimited(key);
      report(err, key);
    } finally {
      queue.done(key);
    }
  };
  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) await reconcile(key);
  };
  const releaseWorkers = host.runtime?.addWorkers(workers);
  const running = Promise.all(Array.from({ length: workers }, worker)).finally(() => releaseWorkers?.());
  // Workers catch every failure of a cycle; this only keeps an unforeseen one from crashing the host before close() is awaited.
  running.catch(() => undefined);
  return {
    workers,
    close: closeOnce(closeTimeoutMs, () => {
      queue.shutDown();
      return running.then(() => undefined);
    }),
  };
}
