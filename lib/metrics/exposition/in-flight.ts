/**
 * One read of a metric in flight at a time. A metric's `collect()` may wait on something that never
 * settles (a refresh shared by every call, which never comes back); a scrape gives up waiting at its
 * `scrapeTimeoutMs` but cannot cancel it. Calling `collect()` again at every scrape would leave one
 * more call pending behind each timed-out scrape, for as long as what it waits on lives (its async
 * frame and promise, per scrape through the router: 1.5 KB for a gauge, 1.7 KB through a summary's
 * `get()`, 3.3 KB through a registry's own `metrics()`). So while a read of an object is pending, a
 * scrape that would start another waits on that same promise instead (within its own timeout,
 * through `callHost`, which leaves nothing of a wait given up attached to it); once the read
 * settles it is forgotten, and the next scrape starts a fresh one.
 *
 * Every way the renderer reaches a `collect()` goes through here: the `collect()` it calls itself
 * before walking a storage, a public `get()` (prom-client's and `@prometheus-io/client`'s call
 * `collect()`), and the `metrics()` of a registry that renders itself (which calls every one).
 *
 * The pending reads are kept in a WeakMap keyed by the object read, a metric or a registry: nothing
 * is written into the client's objects, and an object the host drops takes its entry with it.
 */
import { isThenable } from '../../util/host-promise';

/**
 * What is read: `collect()` before walking the storage (its value unused), the public `get()` (its
 * value is the family's data), or a registry's own `metrics()` (its value is the exposition).
 */
export type HostRead = 'collect' | 'get' | 'metrics';

/** A read in flight: which one, and its promise (native, the host's own when it is a Promise). */
interface Pending {
  readonly read: HostRead;
  readonly promise: Promise<unknown>;
}

// The read in flight per object, until it settles. Private to this module; nothing else reads it.
const inFlight = new WeakMap<object, Pending>();

/**
 * Reads `target` with `start` (which calls the host: `collect()`, `get()` or `metrics()`), unless a
 * read of it is still pending: then answers that read's promise, and `start` is not called. A
 * `start` that returns no thenable, or throws, leaves nothing pending (a throw is the caller's).
 *
 * A pending `get()` has called `collect()` itself, so a `collect` read waits for it and then walks
 * what it collected. A `get` read that finds a `collect()` pending waits for it before calling
 * `get()`, which is from then on the read in flight.
 */
export function readOnce(target: object, read: HostRead, start: () => unknown): unknown {
  const pending = inFlight.get(target);
  if (pending === undefined) {
    const result = start();
    return isThenable(result) ? remember(target, read, result) : result;
  }
  if (pending.read === read || read === 'collect') return pending.promise;
  return remember(target, read, pending.promise.then(start, start));
}

/** Records `thenable` as the read in flight of `target`, forgotten once it settles. */
function remember(target: object, read: HostRead, thenable: PromiseLike<unknown>): Promise<unknown> {
  // The host's own promise when it is a native one (Promise.resolve adopts any other thenable once).
  const promise = Promise.resolve(thenable);
  const entry: Pending = { read, promise };
  inFlight.set(target, entry);
  // Held weakly from the host's promise, which may live for ever: the metric is the host's to drop.
  const held = new WeakRef(target);
  const forget = (): void => {
    const key = held.deref();
    if (key !== undefined && inFlight.get(key) === entry) inFlight.delete(key);
  };
  // Attached before any wait: a scrape resumed by the settling already finds the read forgotten. It
  // also handles a rejection nobody waits for any more.
  promise.then(forget, forget);
  return promise;
}
