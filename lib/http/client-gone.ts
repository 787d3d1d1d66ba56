import type { Response } from 'express';

/** Aborts when the client goes away before the answer is complete; `release()` stops watching. */
export interface ClientGone {
  /** Aborted when the connection closes before the response finished (or by the caller). */
  readonly controller: AbortController;
  /** Stops listening for the close; call it when the work is done. */
  release(): void;
}

/**
 * Ties long work on a request (a streamed dump, a size check, a CPU profile) to the client: when it
 * hangs up, the work is told to stop at once instead of running on for nobody. A `close` after the
 * response finished is the normal end of the exchange, not a departure.
 */
export function watchClientGone(res: Response): ClientGone {
  const controller = new AbortController();
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort();
  };
  res.on('close', onClose);
  return { controller, release: () => res.off('close', onClose) };
}
