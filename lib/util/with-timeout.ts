/**
 * Runs host code (a custom variable's provider, a health check) and settles within `timeoutMs`:
 * with its result, its error, or `timeoutError()` when it takes too long. A synchronous throw
 * becomes a rejection. The timer is always cleared and never keeps the process alive.
 *
 * Host code that never settles cannot be cancelled, only abandoned: its promise is left behind.
 */
export async function withTimeout<T>(run: () => T | Promise<T>, timeoutMs: number, timeoutError: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(run),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(timeoutError()), timeoutMs);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
