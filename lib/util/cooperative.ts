// Platform-neutral: the debug console's page runs the pprof converters on these tickers in a
// browser, so only what Node and browsers share is used (`performance`, `MessageChannel`,
// `setTimeout`), and `setImmediate` where there is one.

/** Node's `setImmediate`; looked up at each use, because a browser has none and tests replace it. */
type Immediate = (callback: () => void) => unknown;

/**
 * Runs `callback` once the event loop has had a turn. In Node that is `setImmediate`: it runs
 * after pending I/O, so the host's sockets are served between slices. A browser has no
 * `setImmediate`; a message posted to itself is the nearest equivalent, where `setTimeout` would
 * wait at least 4 ms once nested. The channel is closed after its one message, so no port is left
 * open (in Node it would keep the process alive).
 */
function onNextTurn(callback: () => void): void {
  const immediate = (globalThis as { setImmediate?: Immediate }).setImmediate;
  if (immediate) {
    immediate(callback);
    return;
  }
  const { port1, port2 } = new MessageChannel();
  port1.addEventListener('message', () => {
    port1.close();
    callback();
  });
  port1.start();
  port2.postMessage(null);
}

// The timer the run's end is taken from, as it was when this module loaded: a test that fakes the
// timers later must not stop runs from ending.
const realSetTimeout = globalThis.setTimeout;

/**
 * Runs `callback` when the event loop next reaches its timers. That is where a turn ends as the
 * host sees it: its timers (and `monitorEventLoopDelay`) fire there, after the I/O and the
 * `setImmediate` callbacks of the turn before. A zero-delay timer fires a millisecond later at the
 * earliest, so a run may span more than one short turn: it then yields sooner, never later. A
 * browser ends the run on its next turn.
 */
function atTurnEnd(callback: () => void): void {
  if ((globalThis as { setImmediate?: Immediate }).setImmediate === undefined) {
    onNextTurn(callback);
    return;
  }
  const timer = realSetTimeout(callback, 0) as { unref?: () => unknown };
  timer.unref?.();
}

// The current run: what the event loop has been doing since its timers last ran, as far as tickers
// know. Shared by every ticker, so that work done in steps (stop, then convert, then encode, each
// awaiting only promises that are already settled) counts as the one stall it is for the event
// loop, and so do twenty scrapes rendering at once: the budget is the turn's, not each job's.
let runStart: number | undefined;
// Whether a waiting job has been resumed in the current run: the first one always is, so every
// turn moves some work on however busy the host kept it before.
let resumedInRun = false;

/** A run older than this is over whatever its timer says (a timer that never fires stops nothing). */
const STALE_RUN_MS = 50;

/**
 * How much of the run may be used when a job that asked for a fresh turn ({@link nextTurn} without a
 * budget) resumes: the step it resumes for may be one that cannot be split.
 */
const FRESH_TURN_MS = 1;

function endRun(): void {
  runStart = undefined;
  resumedInRun = false;
}

/**
 * The start of the current synchronous run (now, if none is counted yet); it ends when the event
 * loop next runs its timers. Call it before synchronous work that tickers created later should count.
 */
export function startOfRun(): number {
  if (runStart === undefined) {
    runStart = performance.now();
    atTurnEnd(endRun);
  }
  return runStart;
}

/**
 * One piece of work as the slicer orders it: a request's rendering and sending (every wait that
 * carries the request's signal), or one ticker's loop. The oldest job goes first, so that twenty
 * scrapes at once finish one after another, each releasing its body, instead of all at the end
 * holding twenty; a job that has run for {@link QUANTUM_MS} goes behind the others, so a long dump
 * or a watch that never ends cannot keep a short scrape waiting.
 */
interface Job {
  /** Its place: lower goes first. */
  order: number;
  /** How long it has run in its current place, in ms. */
  ranMs: number;
  /** When it was last resumed, until it waits again. */
  resumedAt: number | undefined;
}

/**
 * How long a job keeps its place, in ms of its own slices: after that it goes behind the jobs
 * waiting. Counted in the job's own running time, not since it began, so that a busy machine (every
 * slice doing less) does not turn the order into a round robin that finishes every job at the end.
 */
const QUANTUM_MS = 500;

/** The most one resumption counts toward {@link QUANTUM_MS}: a job may wait for I/O before it yields again. */
const MAX_COUNTED_RUN_MS = 20;

let jobsBegun = 0;

function newJob(): Job {
  jobsBegun += 1;
  return { order: jobsBegun, ranMs: 0, resumedAt: undefined };
}

// Every wait on a request's signal belongs to that request's one job, whichever loop it comes
// from: its rendering, then its sending, keep their place. Weak: a job goes with its request.
const jobsOfSignals = new WeakMap<AbortSignal, Job>();

function jobOf(signal: AbortSignal | undefined): Job {
  if (signal === undefined) return newJob();
  let job = jobsOfSignals.get(signal);
  if (job === undefined) {
    job = newJob();
    jobsOfSignals.set(signal, job);
  }
  return job;
}

/** A job waiting for its turn. */
interface Waiter {
  readonly job: Job;
  /** The most of the run that may be used already when it resumes. */
  readonly budgetMs: number;
  resume(): void;
}

// The jobs waiting for a turn, the oldest job first: one queue for every job of the process, so that
// no two of them run their slices back to back in one turn.
const waiting: Waiter[] = [];

function enqueue(waiter: Waiter): void {
  const { job } = waiter;
  if (job.resumedAt !== undefined) {
    job.ranMs += Math.min(performance.now() - job.resumedAt, MAX_COUNTED_RUN_MS);
    job.resumedAt = undefined;
  }
  if (job.ranMs >= QUANTUM_MS) {
    jobsBegun += 1;
    job.order = jobsBegun;
    job.ranMs = 0;
  }
  // After every waiter of the same age or older: jobs of one age resume in the order they yielded.
  let low = 0;
  let high = waiting.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (waiting[mid]!.job.order <= job.order) low = mid + 1;
    else high = mid;
  }
  waiting.splice(low, 0, waiter);
}

/**
 * One `setImmediate` per waiting job, each resuming the first job in line if the run has room for
 * it: a run already used up by another job (or by the host's own I/O callbacks) sends the job to
 * the next turn instead of adding its slice to this one. Jobs are resumed one callback at a time,
 * and Node runs each resumed job's promise continuations before the next callback, so each one sees
 * what the jobs before it used.
 */
function resumeNext(): void {
  const head = waiting[0];
  if (head === undefined) return;
  const now = performance.now();
  if (runStart !== undefined && now - runStart > STALE_RUN_MS) endRun();
  if (resumedInRun && runStart !== undefined && now - runStart >= head.budgetMs) {
    onNextTurn(resumeNext);
    return;
  }
  waiting.shift();
  startOfRun();
  resumedInRun = true;
  head.job.resumedAt = now;
  head.resume();
}

/** Options of {@link nextTurn}. */
export interface TurnOptions {
  /**
   * Resume only while less than this much of the turn is used (the caller's own slice budget, in
   * ms); the first job of a turn resumes however much is used. Default 1: a fresh turn.
   */
  readonly budgetMs?: number;
  /**
   * The request the work is for. Aborting it while the job waits rejects the promise at once, with
   * the signal's reason; every wait carrying it keeps the request's place in line.
   */
  readonly signal?: AbortSignal;
}

function waitTurn(job: Job, budgetMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const abandon = (): void => {
      const at = waiting.indexOf(waiter);
      if (at >= 0) waiting.splice(at, 1);
      reject(signal?.reason);
    };
    const waiter: Waiter = {
      job,
      budgetMs,
      resume() {
        signal?.removeEventListener('abort', abandon);
        resolve();
      },
    };
    signal?.addEventListener('abort', abandon, { once: true });
    enqueue(waiter);
    onNextTurn(resumeNext);
  });
}

/**
 * Resolves on a later turn of the event loop that has room for the caller: the one way this package
 * yields. Jobs resume oldest first, each only while the turn has room for its slice, so jobs running
 * at once share each turn's budget instead of each taking a full one. The run that resumes counts
 * from the turn itself, so the first step after a yield (a listing of 44 000 keys, say) is part of
 * the slice it opens instead of going uncounted until the ticker is next asked. Work for a client
 * that left stops while it waits: aborting `signal` rejects with its reason.
 */
export function nextTurn(options: TurnOptions = {}): Promise<void> {
  const { budgetMs = FRESH_TURN_MS, signal } = options;
  return waitTurn(jobOf(signal), budgetMs, signal);
}

/**
 * Resolves once the event loop has polled for I/O since the call (two `setImmediate` turns: the
 * first may run before the poll of its own loop iteration), or rejects with `signal`'s reason once
 * it aborts. Not a turn of work: it waits behind no job and takes no budget, so a request that only
 * needs the connection's pending events read (a hang-up) is not held back by long jobs running.
 */
export function afterPoll(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const abandon = (): void => reject(signal?.reason);
    signal?.addEventListener('abort', abandon, { once: true });
    onNextTurn(() =>
      onNextTurn(() => {
        signal?.removeEventListener('abort', abandon);
        resolve();
      }),
    );
  });
}

/**
 * Lets long conversion loops share the event loop: awaiting `tick()` on every iteration yields to
 * other work once the current run has lasted `budgetMs`, and costs nothing in between. The budget
 * is time, not a step count, because one step's cost varies a hundredfold (a sample's counter
 * update against walking a deep stack), so a count that is fine for one loop stalls another. The
 * run is shared with every other ticker since the event loop last turned, and counts from the
 * ticker's creation at the latest: create it before a synchronous call that should count. The
 * clock is read every `checkEvery` steps (a read costs ~40 ns; a step may cost far less).
 * `signal` is the request the loop works for: aborting it (the client went away) rejects the pause
 * the loop is waiting on, with the signal's reason, so the loop stops there instead of running on
 * for nobody; without one, the loop is a job of its own.
 */
export function cooperativeTicker(budgetMs = 5, checkEvery = 8, signal?: AbortSignal): () => Promise<void> | undefined {
  startOfRun();
  const job = jobOf(signal);
  let count = 0;
  return function tick(): Promise<void> | undefined {
    count += 1;
    if (count % checkEvery !== 0 || performance.now() - startOfRun() < budgetMs) return undefined;
    return waitTurn(job, budgetMs, signal);
  };
}

/**
 * `items.map(convert)` for long arrays: yields to the event loop as {@link cooperativeTicker} does,
 * and stops (rejecting with the reason) once `signal` aborts.
 */
export async function mapCooperatively<T, R>(
  items: readonly T[],
  convert: (item: T) => R,
  budgetMs = 5,
  signal?: AbortSignal,
): Promise<R[]> {
  const tick = cooperativeTicker(budgetMs, 8, signal);
  const out: R[] = [];
  for (const item of items) {
    out.push(convert(item));
    const pause = tick();
    if (pause) await pause;
  }
  return out;
}
