import type { Response } from 'express';
import { afterPoll } from '../util/cooperative';
import { waitFor } from '../util/wait';

/** Aborts when the client goes away before the answer is complete; `release()` stops watching. */
export interface ClientGone {
  /** Aborted when the connection closes before the response finished (or by the caller). */
  readonly controller: AbortController;
  /** Stops listening for the close; call it when the work is done. */
  release(): void;
}

/**
 * Whether the answer can no longer reach the client: the response closed unfinished, or the client
 * closed its side of the connection and Node ended ours in reply (what an HTTP server does unless
 * the host allows half-open connections; the socket's `close` then comes a turn or two later).
 */
function unreachable(res: Response): boolean {
  if (res.writableFinished) return false;
  return res.destroyed || (res.socket?.readableEnded === true && res.socket.writableEnded);
}

/**
 * Ties long work on a request (a scrape, a streamed dump, a selection, a profile's conversion) to
 * the client: when it hangs up, the work is told to stop at once instead of running on for nobody.
 * A client that hung up is seen as soon as its end of the connection is read, before the socket
 * closes; one that left before the watch began (while earlier middleware awaited something) is gone
 * already, and the signal is aborted at once. A `close` after the response finished is the normal
 * end of the exchange, not a departure.
 */
export function watchClientGone(res: Response): ClientGone {
  const controller = new AbortController();
  if (unreachable(res)) {
    controller.abort();
    return { controller, release: () => undefined };
  }
  const socket = res.socket;
  const onClose = (): void => {
    if (!res.writableFinished) controller.abort();
  };
  const onEnd = (): void => {
    if (unreachable(res)) controller.abort();
  };
  res.on('close', onClose);
  socket?.on('end', onEnd);
  return {
    controller,
    release: () => {
      res.off('close', onClose);
      socket?.off('end', onEnd);
    },
  };
}

/**
 * Waits until the event loop has polled the connection again after the request was read, and
 * answers whether the client is still there; call it before long work for a request starts. A
 * client that asks and hangs up at once would otherwise be served a first slice for nobody: its
 * hang-up may be read only polls later, or read with the request, which Node then parses from its
 * handling of the hang-up itself before it ends the connection (so no `end` or `close` reaches a
 * listener the request's handler adds until the socket closes, a turn or two later). A poll and a
 * look at the connection see a hang-up read with the request; `graceMs` of real time after the poll
 * sees one that comes a little later, for work long enough that a millisecond is nothing beside it
 * (measured: 50 scrapers of 20 000 series hanging up 4 ms after asking cost 160-285 ms of CPU after
 * they left with the poll alone, 26-66 ms, about one scrape's worth, with 1 ms more).
 */
export async function stillThere(res: Response, gone: ClientGone, graceMs = 0): Promise<boolean> {
  const { controller } = gone;
  const { signal } = controller;
  try {
    await afterPoll(signal);
    if (graceMs > 0) await waitFor(graceMs, signal);
  } catch {
    // Aborted while waiting: the client left.
  }
  if (unreachable(res)) controller.abort();
  return !signal.aborted;
}
