import type { Request, Response } from 'express';
import { setNoStoreHeaders } from '../http/headers';
import type { EventQuery, IntrospectionStateReader } from '../state/types';

/** Options of the event watch (`/debug/vars/events?watch=1`). */
export interface EventWatchOptions {
  /** How often an idle watch writes a heartbeat, so proxies and port-forwards keep it open. */
  readonly heartbeatMs: number;
}

/** The open watches of one router, so that `close()` can end them all. */
export type WatchSet = Set<() => void>;

type Format = 'ndjson' | 'sse';

function formatOf(req: Request): Format {
  return (req.headers.accept ?? '').includes('text/event-stream') ? 'sse' : 'ndjson';
}

/**
 * Streams events as they are published: NDJSON (one event per line), or Server-Sent Events when
 * the client accepts `text/event-stream` (`id:` is the event's seq, so `EventSource` resumes with
 * `Last-Event-ID`). Nothing is buffered per event on the publisher's side: the watch is woken once
 * per event-loop turn and reads the ring from its cursor. A client that does not read fills its
 * socket; the watch then waits for `drain`, and if the ring overwrote events meanwhile it writes
 * a `gap` record (how many were missed, and the first seq still there) and carries on. Memory per
 * watch is bounded by the ring and the socket buffer, whatever the client does.
 *
 * @param since - Replay matching events after this seq first (`undefined`: start live).
 */
export function serveEventWatch(
  req: Request,
  res: Response,
  state: IntrospectionStateReader,
  query: EventQuery,
  since: number | undefined,
  options: EventWatchOptions,
  watches: WatchSet,
): void {
  const format = formatOf(req);
  res.status(200);
  setNoStoreHeaders(res);
  res.setHeader('Content-Type', format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  // Reverse proxies (nginx) would otherwise hold the stream back.
  res.setHeader('X-Accel-Buffering', 'no');
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  res.flushHeaders();

  const lastSeq = state.readEvents({}, 0).nextSeq - 1;
  // A seq from the future (a client resuming against a restarted process) starts live.
  let cursor = since === undefined || since > lastSeq ? lastSeq : since;
  let paused = false;
  let ended = false;

  const write = (chunk: string): void => {
    if (!res.write(chunk) && !paused) {
      paused = true;
      res.once('drain', () => {
        paused = false;
        pump();
      });
    }
  };
  const pump = (): void => {
    if (ended || paused) return;
    const page = state.readEvents({ ...query, since: cursor }, Number.MAX_SAFE_INTEGER);
    if (page.oldestSeq > cursor + 1 && page.oldestSeq <= page.nextSeq) {
      const gap = { missed: page.oldestSeq - 1 - cursor, resume_from: page.oldestSeq };
      write(format === 'sse' ? `event: gap\ndata: ${JSON.stringify(gap)}\n\n` : `${JSON.stringify({ gap })}\n`);
    }
    cursor = page.nextSeq - 1;
    if (page.events.length === 0) return;
    let chunk = '';
    for (const event of page.events)
      chunk += format === 'sse' ? `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n` : `${JSON.stringify(event)}\n`;
    write(chunk);
  };
  const heartbeat = setInterval(() => {
    if (!paused) write(format === 'sse' ? ': heartbeat\n\n' : `${JSON.stringify({ heartbeat: Date.now() })}\n`);
  }, options.heartbeatMs);
  heartbeat.unref();

  const unwatch = state.watchEvents(pump);
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearInterval(heartbeat);
    unwatch();
    watches.delete(close);
  };
  const close = (): void => {
    end();
    res.end();
  };
  watches.add(close);
  res.on('close', end);
  // The replay (when a seq was given), and nothing when starting live.
  pump();
}
