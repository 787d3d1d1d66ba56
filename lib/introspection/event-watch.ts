import type { Request, Response } from 'express';
import { preferredMediaType } from '../http/header-lists';
import { setNoStoreHeaders } from '../http/headers';
import { performance } from 'node:perf_hooks';
import { cooperativeTicker, startOfRun } from '../util/cooperative';
import { eventJson } from '../state/event-view';
import type { ControllerEvent, EventQuery, IntrospectionStateReader } from '../state/types';

/** Options of the event watches of one router (`/debug/vars/events?watch=1`). */
export interface EventWatchOptions {
  /** How often an idle watch writes a heartbeat, so proxies and port-forwards keep it open. */
  readonly heartbeatMs: number;
  /**
   * The most one watch holds unsent (in this process, before the kernel takes it). A client that
   * reads slower than events come stops being written to at this point; when it reads again it
   * carries on from the ring, with a `gap` record for what the ring overwrote meanwhile.
   */
  readonly bufferBytes: number;
}

type Format = 'ndjson' | 'sse';

// One turn of the watch scheduler may run this long before the event loop gets a turn: the dumps'
// slice, so watches and dumps share the loop the same way.
const SLICE_MS = 2;
// Events a watch takes from the ring per step, and how many it may examine for a filter: bounded so
// that one step is short whatever the ring holds and whatever the filter matches.
const EVENTS_PER_STEP = 64;
const SCAN_PER_STEP = 4096;
// Texts of recently served events, shared by every watch of the router: 64 watches of one burst
// serialise each event once. Bounded in bytes (UTF-16 units); a miss only serialises again.
const TEXT_CACHE_CHARS = 1024 * 1024;
// How often a watch over its budget without a 'drain' to wait for looks again.
const BUDGET_POLL_MS = 10;

const NDJSON = 'application/x-ndjson';
const SSE = 'text/event-stream';

/** Server-sent events when `Accept` prefers them (an EventSource asks for nothing else), NDJSON otherwise. */
function formatOf(req: Request): Format {
  return preferredMediaType(req, [NDJSON, SSE]) === SSE ? 'sse' : 'ndjson';
}

/** Event texts by seq, oldest evicted first, bounded in characters. */
class EventTexts {
  private readonly texts = new Map<number, string>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(event: ControllerEvent, maxEventChars: number): string {
    const cached = this.texts.get(event.seq);
    if (cached !== undefined) return cached;
    const text = eventJson(event, maxEventChars);
    this.texts.set(event.seq, text);
    this.chars += text.length;
    for (const [seq, old] of this.texts) {
      if (this.chars <= this.maxChars) break;
      this.texts.delete(seq);
      this.chars -= old.length;
    }
    return text;
  }
}

/** One open watch: where it is in the ring, and its socket. */
class Watch {
  paused = false;
  ended = false;
  queued = false;
  private cursor: number;

  constructor(
    private readonly hub: EventWatches,
    private readonly res: Response,
    private readonly format: Format,
    private readonly query: EventQuery,
    since: number | undefined,
  ) {
    const lastSeq = hub.state.readEvents({}, 0).nextSeq - 1;
    // A seq from the future (a client resuming against a restarted process) starts live.
    this.cursor = since === undefined || since > lastSeq ? lastSeq : since;
  }

  /**
   * Writes what the ring holds after the cursor, up to one step's worth; true when there is more
   * to write and the socket can take it now. Stops at the watch's byte budget: a client that does
   * not read holds at most that much here, never the ring.
   */
  step(deadline: number): boolean {
    if (this.ended || this.paused) return false;
    const page = this.hub.state.readEvents({ ...this.query, since: this.cursor }, EVENTS_PER_STEP, {
      from: 'oldest',
      maxScan: SCAN_PER_STEP,
    });
    let chunk = '';
    if (page.oldestSeq > this.cursor + 1 && page.oldestSeq <= page.nextSeq) {
      const gap = { missed: page.oldestSeq - 1 - this.cursor, resume_from: page.oldestSeq };
      chunk += this.format === 'sse' ? `event: gap\ndata: ${JSON.stringify(gap)}\n\n` : `${JSON.stringify({ gap })}\n`;
      this.cursor = page.oldestSeq - 1;
    }
    const budget = this.hub.options.bufferBytes;
    // Room for the socket's own buffer and this chunk: an event text is at most half the budget.
    const chunkChars = budget / 4;
    let complete = true;
    for (const event of page.events) {
      const text = this.hub.texts.get(event, budget / 2);
      chunk += this.format === 'sse' ? `id: ${event.seq}\ndata: ${text}\n\n` : `${text}\n`;
      this.cursor = event.seq;
      if (chunk.length >= chunkChars || performance.now() >= deadline) {
        complete = false;
        break;
      }
    }
    // Events the scan passed without a match are behind the cursor too.
    if (complete) this.cursor = Math.max(this.cursor, page.scannedThrough);
    if (chunk !== '') this.write(chunk);
    return !this.paused && this.cursor < page.nextSeq - 1;
  }

  /** Writes, and stops taking events once the socket holds what the budget allows. */
  write(chunk: string): void {
    if (this.ended || this.paused) return;
    if (this.res.destroyed || this.res.writableEnded) {
      this.fail();
      return;
    }
    const accepted = this.res.write(chunk);
    const budget = this.hub.options.bufferBytes;
    if (accepted && this.res.writableLength < budget / 2) return;
    this.paused = true;
    const resume = (): void => {
      if (!this.paused) return;
      this.paused = false;
      this.hub.schedule(this);
    };
    this.res.once('drain', resume);
    // A host that raised the socket's high-water mark above half the budget gets no 'drain' for
    // what it accepted: the budget is then watched until the socket has taken most of it.
    if (accepted) this.waitBelow(budget / 4, resume);
  }

  private waitBelow(bytes: number, resume: () => void): void {
    const timer = setTimeout(() => {
      if (this.ended || !this.paused) return;
      if (this.res.writableLength <= bytes) resume();
      else this.waitBelow(bytes, resume);
    }, BUDGET_POLL_MS);
    timer.unref();
  }

  /** Ends a watch whose socket failed under it: the client sees the stream cut, never a lie. */
  fail(): void {
    // Nothing more is written; the response's 'close' ends the watch and unregisters it.
    this.paused = true;
    this.res.destroy();
  }

  heartbeat(): void {
    if (!this.paused) this.write(this.format === 'sse' ? ': heartbeat\n\n' : `${JSON.stringify({ heartbeat: Date.now() })}\n`);
  }
}

/**
 * The event watches of one router: a live stream of events as they are published, NDJSON (one
 * event per line) or Server-Sent Events when the client accepts `text/event-stream` (`id:` is the
 * event's seq, so `EventSource` resumes with `Last-Event-ID`).
 *
 * Publishing stays O(1): the store wakes the watches once per event-loop turn and they read the
 * ring from their cursors. One scheduler writes for every watch, round-robin, in slices of
 * {@link SLICE_MS}, so no turn runs long whatever the ring holds or how many watch; each event is
 * serialised once for all of them. A watch whose client does not read stops at its byte budget;
 * when the client reads again it carries on from the ring, with a `gap` record (how many were
 * missed, the first seq still there) if the ring overwrote events meanwhile. Memory is bounded by
 * `maxWatchers × bufferBytes` plus a shared 1 MiB cache of event texts.
 */
export class EventWatches {
  /** Recently served event texts, shared by every watch. */
  readonly texts = new EventTexts(TEXT_CACHE_CHARS);
  private readonly open = new Set<() => void>();
  private readonly ready: Watch[] = [];
  private running = false;

  constructor(
    readonly state: IntrospectionStateReader,
    readonly options: EventWatchOptions,
  ) {}

  /** Watches open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Answers a watch request and keeps it open.
   *
   * @param since - Replay matching events after this seq first (`undefined`: start live).
   */
  serve(req: Request, res: Response, query: EventQuery, since: number | undefined): void {
    // A client that left before this point (while earlier middleware awaited something) will send
    // no 'close' to end the watch: opening one would replay the ring for nobody and hold a place.
    if (res.destroyed) return;
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

    const watch = new Watch(this, res, format, query, since);
    const heartbeat = setInterval(() => watch.heartbeat(), this.options.heartbeatMs);
    heartbeat.unref();
    const unwatch = this.state.watchEvents(() => this.schedule(watch));
    const end = (): void => {
      if (watch.ended) return;
      watch.ended = true;
      clearInterval(heartbeat);
      unwatch();
      this.open.delete(close);
    };
    const close = (): void => {
      end();
      res.end();
    };
    this.open.add(close);
    res.on('close', end);
    // The replay (when a seq was given), and nothing when starting live.
    this.schedule(watch);
  }

  /** Ends every open watch. */
  closeAll(): void {
    for (const close of [...this.open]) close();
  }

  /** Queues a watch that may have something to write, and starts the scheduler if it is idle. */
  schedule(watch: Watch): void {
    if (watch.queued || watch.ended || watch.paused) return;
    watch.queued = true;
    this.ready.push(watch);
    if (!this.running) {
      this.running = true;
      void this.run();
    }
  }

  /** Round-robin over the ready watches, one step each, yielding whenever the slice is spent. */
  private async run(): Promise<void> {
    const tick = cooperativeTicker(SLICE_MS, 1);
    try {
      let watch: Watch | undefined;
      while ((watch = this.ready.shift()) !== undefined) {
        watch.queued = false;
        let more = false;
        try {
          // Every step writes at least one event, so each watch moves on every turn it gets.
          more = watch.step(startOfRun() + SLICE_MS);
        } catch {
          // A socket that failed under one watch must not stop the others.
          watch.fail();
        }
        if (more) this.schedule(watch);
        const pause = tick();
        if (pause !== undefined) await pause;
      }
    } finally {
      this.running = false;
    }
  }
}
