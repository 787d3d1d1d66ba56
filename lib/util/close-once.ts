import { callHost } from './host-promise';

/**
 * The one `close()` of every handle a host starts (routers, the Lease elector, the certificate
 * watch, the controller metrics, the cache gate, the queue's workers, the watchdog, the auth
 * middleware): the returned function runs `shutDown` on its first call, synchronously (what it does
 * before its first `await` is done when `close()` returns), and answers that call and every later
 * one with the same promise. The promise settles when `shutDown` settles, or after `boundMs` with
 * `shutDown` still running (abandoned, never cancelled), whichever comes first, and it never
 * rejects: a throw or a rejection of `shutDown` is the handle's own to report (`lastError`, …),
 * never its caller's. The bound's timer never keeps the process alive.
 */
export function closeOnce(boundMs: number, shutDown: () => void | PromiseLike<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => (closing ??= settleWithin(boundMs, shutDown));
}

function settleWithin(boundMs: number, shutDown: () => void | PromiseLike<void>): Promise<void> {
  const bound = new AbortController();
  const timer = setTimeout(() => bound.abort(), boundMs);
  timer.unref();
  // Waited on through callHost: a shutDown that never settles keeps nothing of this wait once abandoned.
  return callHost(shutDown, bound.signal).then(
    () => clearTimeout(timer),
    () => clearTimeout(timer),
  );
}
