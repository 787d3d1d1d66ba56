/**
 * A small work queue for reconciliation keys, shaped like client-go's rate-limited work queue: a key
 * is queued at most once however often it is added while it waits (ten changes to one object make
 * one reconciliation), a key being worked on is never handed to a second worker (added meanwhile,
 * it is queued again when the first worker is done), and a failed key comes back after a per-key
 * exponential backoff. The pipeline's workers pull from it (`pipeline.processQueue`). With
 * controller metrics whose controller-runtime families are on, it feeds the `workqueue_*` families
 * the way client-go's queue does (kubernetes/client-go util/workqueue/metrics.go).
 *
 * Every operation is O(1) on the host's path (a backoff timer per delayed key, not per add).
 */
import { monotonicNow, elapsedMs, readingOrNaN, type MonotonicClock } from '../util/clock';
import { integerOption } from '../options';
import { custom, integer, later, optionSpec } from '../options/spec';
import { checkPipelineMetrics, type PipelineMetrics, type QueueReporter, type WorkQueueReading } from './reporting';

/** Options of {@link createWorkQueue}. */
export interface WorkQueueOptions {
  /**
   * The queue's name: the `name` (and `controller`) label of its `workqueue_*` series. Default: the
   * controller name of `metrics` (as controller-runtime names a controller's queue), else `queue`.
   */
  name?: string;
  /**
   * Where the queue reports: the `ControllerMetrics` of `createControllerMetrics` (the `workqueue_*`
   * families are recorded when they were created with `controllerRuntime` on), or any
   * {@link PipelineMetrics}. Its driver's clock measures the queue's durations.
   */
  metrics?: PipelineMetrics;
  /** Backoff of a key's first retry, in ms; it doubles with each further failure. Default 5, as client-go's. */
  baseDelayMs?: number;
  /** Longest backoff, in ms. Default 1 000 000 (1 000 s), as client-go's. */
  maxDelayMs?: number;
}

/** The options of {@link createWorkQueue}, declared once. */
const WORK_QUEUE_SPEC = optionSpec('createWorkQueue', {
  /** The name when `metrics` names no controller. */
  name: later('queue'),
  metrics: custom(undefined, ({ where, path, value }) => checkPipelineMetrics(where, path, value)?.driver),
  /** First retry after 5 ms. */
  baseDelayMs: integer(5, { min: 1, max: 3_600_000 }),
  /** Retries wait at most 1 000 s. */
  maxDelayMs: later(1_000_000),
});
/** Every default of {@link createWorkQueue}, in one place. */
export const WORK_QUEUE_DEFAULTS = WORK_QUEUE_SPEC.defaults;

/** A queue of reconciliation keys; see {@link createWorkQueue}. */
export interface WorkQueue {
  /** The queue's name. */
  readonly name: string;
  /** Whether {@link WorkQueue.shutDown} was called. */
  readonly shuttingDown: boolean;
  /**
   * Queues `key` unless it is already waiting (then nothing changes: it keeps its place). A key
   * being worked on is queued again once its worker is done. Ignored after shutdown.
   *
   * @throws TypeError when `key` is not a non-empty string.
   */
  add(key: string): void;
  /** Adds `key` after `delayMs` (at once when `<= 0`); a key already waiting for a sooner time keeps it. */
  addAfter(key: string, delayMs: number): void;
  /** Adds `key` after its backoff (`baseDelayMs` doubled per failure since its last `forget`), counting a retry. */
  addRateLimited(key: string): void;
  /** Ends `key`'s backoff: its next failure waits `baseDelayMs` again. Call it when `key` was reconciled. */
  forget(key: string): void;
  /** How many times `key` was retried since its last `forget`. */
  numRequeues(key: string): number;
  /**
   * The next key, once there is one, for a worker; resolves `undefined` once the queue shuts down.
   * Call {@link WorkQueue.done} with it when the work is over.
   */
  get(): Promise<string | undefined>;
  /** Ends the work on `key` (from {@link WorkQueue.get}); a key added meanwhile is queued again. */
  done(key: string): void;
  /** Keys waiting for a worker now (not those being worked on, nor those waiting for a backoff). */
  len(): number;
  /**
   * Stops the queue: waiting workers get `undefined`, keys still queued and pending retries are
   * dropped, later adds are ignored, and its `workqueue_*` series leave the metrics. Idempotent.
   */
  shutDown(): void;
}

const WHERE = 'createWorkQueue';

/** Whether `value` is a queue made by {@link createWorkQueue}. */
export function isWorkQueue(value: unknown): value is Queue {
  return value instanceof Queue;
}

/**
 * Creates a work queue. Keys are strings (for Kubernetes objects, `namespace/name`); see
 * {@link WorkQueue}. Process it with `pipeline.processQueue(queue, ...)`, or take keys with
 * `get()` / `done()` yourself.
 *
 * @throws TypeError on invalid options.
 * @throws Error when a queue with the same name already reports to the same registry.
 */
export function createWorkQueue(options: WorkQueueOptions = {}): WorkQueue {
  const given = WORK_QUEUE_SPEC.resolve(options);
  const driver = given.metrics;
  const runtime = driver?.controllerRuntime;
  const name = given.name === undefined ? (runtime?.controller ?? WORK_QUEUE_DEFAULTS.name) : given.name;
  if (typeof name !== 'string' || name === '' || name.length > 256) {
    throw new TypeError(`${WHERE}: name must be a non-empty string of at most 256 characters, for example "ingress"`);
  }
  const { baseDelayMs } = given;
  const maxDelayMs = integerOption(WHERE, 'maxDelayMs', given.maxDelayMs, WORK_QUEUE_DEFAULTS.maxDelayMs, baseDelayMs, 2_147_483_647);
  const queue = new Queue(name, driver?.now ?? monotonicNow, baseDelayMs, maxDelayMs);
  if (runtime !== undefined) queue.report(runtime.attachQueue(name, queue.reader()));
  return queue;
}

/** A first-in first-out list of keys with O(1) push and shift. */
class Fifo {
  private items: string[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head === this.items.length) return undefined;
    const key = this.items[this.head]!;
    this.head += 1;
    // Dropping the taken slots now and then keeps the array from growing for ever.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

function checkKey(method: string, key: unknown): asserts key is string {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`workQueue.${method}(key) needs a non-empty string key, for example "default/web"; got ${typeof key}`);
  }
}

/** The queue {@link createWorkQueue} makes. */
export class Queue implements WorkQueue {
  /** Whether `pipeline.processQueue` runs workers on it: one loop per queue. */
  processed = false;
  private readonly fifo = new Fifo();
  /** Keys added and not yet taken by a worker: client-go's dirty set, and the `workqueue_depth`. */
  private readonly dirty = new Set<string>();
  /** Keys being worked on, with the clock reading when a worker took them. */
  private readonly processing = new Map<string, number>();
  /** When each dirty key was first added, for `workqueue_queue_duration_seconds`. */
  private readonly addedAt = new Map<string, number>();
  /** Keys waiting for a backoff or a delay. */
  private readonly delayed = new Map<string, { readonly timer: NodeJS.Timeout; readonly readyAt: number }>();
  /** Failures per key since its last `forget`. */
  private readonly failures = new Map<string, number>();
  private readonly waiters: Array<(key: string | undefined) => void> = [];
  private recorder: QueueReporter | undefined;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly now: MonotonicClock,
    private readonly baseDelayMs: number,
    private readonly maxDelayMs: number,
  ) {}

  /**
   * The clock, for the queue's timings only: a metrics clock gone wrong must never stop keys from
   * being queued (one read in a timer would have nobody to throw to). Such a reading times as 0; the
   * scrape of the queue's unfinished work names the clock.
   */
  private stamp(): number {
    return readingOrNaN(this.now);
  }

  get shuttingDown(): boolean {
    return this.stopped;
  }

  /** Reports there from now on. */
  report(recorder: QueueReporter): void {
    this.recorder = recorder;
  }

  /** What its reporter reads when asked (metrics: at scrape time). */
  reader(): WorkQueueReading {
    return { depth: () => this.dirty.size, startedAt: () => this.processing.values() };
  }

  add(key: string): void {
    checkKey('add', key);
    if (this.stopped || this.dirty.has(key)) return;
    this.recorder?.added();
    this.dirty.add(key);
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.stamp());
    if (!this.processing.has(key)) this.enqueue(key);
  }

  addAfter(key: string, delayMs: number): void {
    checkKey('addAfter', key);
    if (typeof delayMs !== 'number' || Number.isNaN(delayMs)) {
      throw new TypeError(`workQueue.addAfter(key, delayMs) needs a number of milliseconds; got ${typeof delayMs}`);
    }
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const delay = Math.min(delayMs, 2_147_483_647);
    const readyAt = this.stamp() + delay;
    const pending = this.delayed.get(key);
    if (pending !== undefined) {
      if (pending.readyAt <= readyAt) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delay);
    this.delayed.set(key, { timer, readyAt });
  }

  addRateLimited(key: string): void {
    checkKey('addRateLimited', key);
    if (this.stopped) return;
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    this.recorder?.retried();
    this.addAfter(key, Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** failures));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  get(): Promise<string | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    const key = this.fifo.shift();
    if (key !== undefined) return Promise.resolve(this.take(key));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.recorder?.worked(elapsedMs(startedAt, this.stamp()) / 1000);
    if (this.dirty.has(key) && !this.stopped) this.enqueue(key);
  }

  len(): number {
    return this.fifo.length;
  }

  shutDown(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.fifo.clear();
    this.dirty.clear();
    this.addedAt.clear();
    for (const waiter of this.waiters.splice(0)) waiter(undefined);
    this.recorder?.detach();
    this.recorder = undefined;
  }

  /** Hands `key` to a waiting worker, or queues it. */
  private enqueue(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) this.fifo.push(key);
    else waiter(this.take(key));
  }

  /** A worker takes `key`: it leaves the dirty set and its wait is observed. */
  private take(key: string): string {
    const now = this.stamp();
    this.dirty.delete(key);
    this.processing.set(key, now);
    const addedAt = this.addedAt.get(key);
    if (addedAt !== undefined) {
      this.addedAt.delete(key);
      this.recorder?.waited(elapsedMs(addedAt, now) / 1000);
    }
    return key;
  }
}
