/**
 * Bounds how many heavy requests (variable reads that may serialise megabytes, selections) run at
 * once. Each running one takes slices of the event loop; with hundreds at once every round of
 * slices is long enough to delay a liveness probe by seconds. Extra requests wait in a bounded
 * queue (first come, first served); beyond it they are refused at once, so nothing piles up.
 */
export interface WorkLimiter {
  /**
   * Waits for a slot: resolves with the function that frees it, or `undefined` when the queue is
   * full (answer `503` with `Retry-After`). A request that goes away while queued frees its place
   * (`signal`).
   */
  acquire(signal: AbortSignal): Promise<(() => void) | undefined>;
  /** Requests running now, and waiting. */
  readonly running: number;
  readonly waiting: number;
}

/** A limiter running at most `maxRunning` at once with at most `maxWaiting` queued. */
export function createWorkLimiter(maxRunning: number, maxWaiting: number): WorkLimiter {
  let running = 0;
  const queue: Array<() => void> = [];

  const release = (): void => {
    running--;
    const next = queue.shift();
    if (next) next();
  };
  const slot = (): (() => void) => {
    running++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      release();
    };
  };

  return {
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
    acquire(signal: AbortSignal): Promise<(() => void) | undefined> {
      if (running < maxRunning) return Promise.resolve(slot());
      if (queue.length >= maxWaiting || signal.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const start = (): void => {
          signal.removeEventListener('abort', leave);
          resolve(slot());
        };
        const leave = (): void => {
          const index = queue.indexOf(start);
          if (index >= 0) queue.splice(index, 1);
          resolve(undefined);
        };
        queue.push(start);
        signal.addEventListener('abort', leave, { once: true });
      });
    },
  };
}
