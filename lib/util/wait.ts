/**
 * Resolves after `ms`, or as soon as `signal` aborts (the client went away, the router closed);
 * callers look at `signal.aborted` to tell which. A timer, never a busy wait: the process keeps
 * serving meanwhile.
 */
export function waitFor(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const finish = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, ms);
    signal.addEventListener('abort', finish, { once: true });
  });
}
