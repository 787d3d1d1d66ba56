/**
 * Waiting on promises the host owns: a metric's `collect()`, a custom variable's provider, a health
 * check. A wait may be given up (a timeout, a client that left), but the host's promise cannot be
 * cancelled and may never settle, or be shared by every wait (a `collect()` that hands out the one
 * refresh in flight). A reaction attached to it directly (`await`, `Promise.race`, `.then`) stays
 * attached for as long as the promise lives, and with it everything the abandoned wait held: a
 * whole rendering frame per timed-out scrape.
 *
 * So each distinct host promise gets one reaction, attached the first time it is waited on, that
 * forwards its outcome to whoever is waiting at that moment; a wait given up takes itself off that
 * list. What stays attached to a host promise is that reaction and a list holding the live waits
 * only: O(1) per distinct promise, however many waits were given up on it.
 */

/** One wait on a host promise. */
interface Waiter {
  settle(fulfilled: boolean, value: unknown): void;
}

// The live waits per host promise, until it settles. Weak: a promise the host drops takes its
// entry with it. Private to this module; nothing else reads it.
const forwards = new WeakMap<object, Set<Waiter>>();

/** The waits on `thenable`, after attaching its one forwarding reaction if it has none yet. */
function waitersOf(thenable: PromiseLike<unknown>): Set<Waiter> {
  const known = forwards.get(thenable);
  if (known !== undefined) return known;
  const waiters = new Set<Waiter>();
  forwards.set(thenable, waiters);
  const settle = (fulfilled: boolean, value: unknown): void => {
    forwards.delete(thenable);
    for (const waiter of waiters) waiter.settle(fulfilled, value);
    waiters.clear();
  };
  // Promise.resolve adopts a foreign thenable (calling its `then` once, on a later microtask, a
  // throw becoming a rejection) and is the promise itself for a native one.
  Promise.resolve(thenable).then(
    (value) => settle(true, value),
    (reason: unknown) => settle(false, reason),
  );
  return waiters;
}

/** Whether `value` is something `await` would wait on. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Settles as the host's `thenable` does, or rejects with `signal`'s reason once it aborts; a wait
 * given up that way leaves nothing of the caller reachable from the host's promise.
 */
export function awaitHost<T>(thenable: PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const waiters = waitersOf(thenable);
    const abandon = (): void => {
      waiters.delete(waiter);
      reject(signal?.reason);
    };
    const waiter: Waiter = {
      settle(fulfilled, value) {
        signal?.removeEventListener('abort', abandon);
        if (fulfilled) resolve(value as T);
        else reject(value);
      },
    };
    waiters.add(waiter);
    signal?.addEventListener('abort', abandon, { once: true });
  });
}

/**
 * Calls host code and waits for its answer through {@link awaitHost}: its value, what it returned a
 * promise of, or what it threw (as a rejection). `signal` gives the wait up.
 */
export function callHost<T>(run: () => T | PromiseLike<T>, signal?: AbortSignal): Promise<T> {
  try {
    const result = run();
    return isThenable(result) ? awaitHost(result, signal) : Promise.resolve(result);
  } catch (err) {
    // A throw from `run`, or from a `then` getter of what it returned.
    return Promise.reject(err);
  }
}
