import { callHost } from './host-promise';

/**
 * Runs host code (a custom variable's provider, a health check, a metric's `collect()`) and settles
 * within `timeoutMs`: with its result, its error, or `timeoutError()` when it takes too long; or,
 * once `signal` aborts (the client went away), with the signal's reason. A synchronous throw
 * becomes a rejection. The timer is always cleared and never keeps the process alive.
 *
 * Host code that never settles cannot be cancelled, only abandoned; it is waited on through
 * `callHost` (host-promise.ts), so an abandoned wait leaves nothing of the caller attached to the
 * host's promise, however many times the host hands out the same one.
 */
export async function withTimeout<T>(
  run: () => T | PromiseLike<T>,
  timeoutMs: number,
  timeoutError: () => Error,
  signal?: AbortSignal,
): Promise<T> {
  const given = new AbortController();
  const timer = setTimeout(() => given.abort(timeoutError()), timeoutMs);
  timer.unref();
  const left = (): void => given.abort(signal?.reason);
  signal?.addEventListener('abort', left, { once: true });
  try {
    // Called on a later microtask, as before: a throw never escapes synchronously.
    await undefined;
    signal?.throwIfAborted();
    return await callHost(run, given.signal);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', left);
  }
}
