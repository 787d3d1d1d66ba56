import { ApiError, debugUrl, getJson, request } from '../api';
import { append, h, isAbort, sleep } from '../dom';
import { profileHasCycle } from './profiles';
import { setViewParams } from './view';
import { errorMessage } from '../../lib/util/error-message';

interface EventRecord {
  seq: number;
  timestamp: string;
  type: string;
  summary: string;
  correlation_id?: string;
  details?: unknown;
}

const KEEP_ROWS = 1000;
/** The events that end a cycle, with its duration: where a slow one is seen. */
const CYCLE_ENDS = new Set(['reconciliation.completed', 'reconciliation.failed']);
const POLL_MS = 2000;

type WatchRecord = EventRecord | { heartbeat: number } | { gap: { missed: number; resume_from: number } };

/** Recent events as a table, then live: the watch stream, or polling `?since=` where there is none. */
export async function renderEvents(root: HTMLElement, params: URLSearchParams, signal: AbortSignal): Promise<void> {
  const view = new EventsView(root, params, signal);
  await view.load(view.renew());
  void view.follow();
  await sleep(2 ** 31 - 1, signal);
}

/** The elements of the view, built once. */
function eventsLayout(root: HTMLElement, params: URLSearchParams, correlation: string) {
  const type = h('input', {
    type: 'text',
    id: 'event-type',
    class: 'mono',
    placeholder: 'deployment.failed, or a prefix: deployment.',
    'aria-label': 'Filter by event type: exact, or a prefix ending in a dot',
    value: params.get('type') ?? '',
  });
  const pause = h('button', { type: 'button', id: 'pause-events', 'aria-pressed': 'false' }, 'Pause');
  const state = h('span', { class: 'muted', role: 'status', id: 'events-status' });
  const body = h('tbody');
  const box = h(
    'div',
    { class: 'events-box', id: 'events-box', tabindex: '0', 'aria-label': 'Events' },
    h(
      'table',
      { class: 'fixed' },
      h('colgroup', null, h('col', { class: 'seq' }), h('col', { class: 'time' }), h('col', { class: 'type' }), h('col')),
      h(
        'thead',
        null,
        h('tr', null, h('th', { class: 'num' }, 'seq'), h('th', null, 'time'), h('th', null, 'type'), h('th', null, 'summary')),
      ),
      body,
    ),
  );
  root.replaceChildren(h('h1', null, 'Events'));
  append(
    root,
    h('div', { class: 'row' }, h('label', { for: 'event-type' }, 'Type'), type, pause, state),
    correlation
      ? h('p', null, 'Only correlation id ', h('code', null, correlation), ' · ', h('a', { href: '#/events' }, 'all events'))
      : null,
    box,
  );
  return { type, pause, state, body, box };
}

/** One table row per event, newest last. */
function eventRow(event: EventRecord): HTMLTableRowElement {
  const summary = h('td', null, event.summary);
  if (event.correlation_id)
    summary.append(
      ' ',
      h(
        'a',
        { href: `#/events?correlation_id=${encodeURIComponent(event.correlation_id)}`, class: 'muted' },
        event.correlation_id.slice(0, 8),
      ),
    );
  // A cycle's end (its duration is in the summary's details) links to its samples in the CPU
  // profile loaded in the profiles view, when that profile has any.
  if (event.correlation_id && CYCLE_ENDS.has(event.type) && profileHasCycle(event.correlation_id))
    summary.append(
      ' ',
      h(
        'a',
        {
          href: `#/profiles?cycle=${encodeURIComponent(event.correlation_id)}`,
          class: 'cycle-profile',
          title: 'This cycle in the loaded CPU profile',
        },
        'CPU profile',
      ),
    );
  return h(
    'tr',
    { 'data-seq': event.seq },
    h('td', { class: 'num' }, event.seq),
    h('td', { class: 'mono' }, event.timestamp.replace('T', ' ').replace('Z', '')),
    h('td', { class: 'mono' }, event.type),
    summary,
  );
}

function gapRow(gap: { missed: number; resume_from: number }): HTMLTableRowElement {
  return h(
    'tr',
    { class: 'gap' },
    h('td', { colspan: '4' }, `${gap.missed} events were missed (the ring moved on); resuming at seq ${gap.resume_from}`),
  );
}

/** Calls `onLine` for every non-empty line of a streamed response body until it ends. */
async function readLines(response: Response, onLine: (line: string) => void): Promise<void> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let pending = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    pending += value;
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) onLine(line);
    }
  }
}

class EventsView {
  private readonly ui: ReturnType<typeof eventsLayout>;
  private readonly correlation: string;
  private paused: boolean;
  private lastSeq = 0;
  /**
   * What fills the table now (a load, then the stream that follows it). Renewed, and the previous
   * one aborted, whenever the filter changes or the stream restarts: rows that arrive for an
   * aborted one (a chunk already read when the stream was cut, a load answered just after) are
   * dropped, so a table cleared for a new filter never gets a row of the old one.
   */
  private current: AbortController | undefined;
  /** Rows waiting for the next frame, oldest first. */
  private queued: HTMLTableRowElement[] = [];
  /** The frame that adds them, when one is asked for. */
  private frame: number | undefined;
  private filterTimer: ReturnType<typeof setTimeout> | undefined;
  /** Where a reader scrolled up is being kept, unrounded (see addRow). */
  private scrollTarget: number | undefined;

  constructor(root: HTMLElement, params: URLSearchParams, signal: AbortSignal) {
    this.correlation = params.get('correlation_id') ?? '';
    this.ui = eventsLayout(root, params, this.correlation);
    this.paused = params.get('paused') === '1';
    signal.addEventListener('abort', () => this.current?.abort());
    this.ui.pause.addEventListener('click', () => {
      this.paused = !this.paused;
      void this.follow();
    });
    this.ui.type.addEventListener('input', () => this.refilter(signal));
  }

  /** Reloads with the new type filter once typing pauses. */
  private refilter(signal: AbortSignal): void {
    clearTimeout(this.filterTimer);
    this.filterTimer = setTimeout(() => {
      if (signal.aborted) return;
      const loading = this.renew();
      void this.load(loading).then(
        () => {
          if (!loading.aborted) void this.follow();
        },
        (err: unknown) => {
          if (!isAbort(err)) this.ui.state.textContent = errorMessage(err);
        },
      );
    }, 300);
  }

  /**
   * Queues a row for the next frame. A burst of events (a replay after a pause, a busy controller)
   * then costs one layout per frame instead of one per event, which kept the page's main thread
   * busy for seconds on a loaded machine. Bounded: rows past {@link KEEP_ROWS} would be dropped
   * anyway.
   */
  private addRow(row: HTMLTableRowElement): void {
    this.queued.push(row);
    if (this.queued.length > 2 * KEEP_ROWS) this.queued.splice(0, this.queued.length - KEEP_ROWS);
    this.frame ??= requestAnimationFrame(() => this.flush());
  }

  /** Adds the queued rows, drops the oldest past {@link KEEP_ROWS}, and keeps what the reader reads where it is. */
  private flush(): void {
    if (this.frame !== undefined) cancelAnimationFrame(this.frame);
    this.frame = undefined;
    const rows = this.queued.length > KEEP_ROWS ? this.queued.slice(-KEEP_ROWS) : this.queued;
    this.queued = [];
    if (rows.length === 0) return;
    const { box, body } = this.ui;
    const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 24;
    const added = document.createDocumentFragment();
    added.append(...rows);
    body.appendChild(added);
    const excess = body.rows.length - KEEP_ROWS;
    let dropped = 0;
    if (excess > 0) {
      const first = body.rows[0]!;
      const kept = body.rows[excess]!;
      dropped = kept.getBoundingClientRect().top - first.getBoundingClientRect().top;
      const range = document.createRange();
      range.setStartBefore(first);
      range.setEndBefore(kept);
      range.deleteContents();
    }
    // Follow the stream only when the reader is at the end. A reader scrolled up keeps what they
    // are reading where it is: the rows dropped above it would pull it up by their height, so the
    // scroll offset moves with them (the browser's scroll anchoring does not take table rows).
    if (atBottom) {
      this.scrollTarget = undefined;
      box.scrollTop = box.scrollHeight;
    } else if (dropped > 0) {
      // scrollTop keeps whole pixels and rows are not (27.3 px): carried unrounded from one frame
      // to the next, so the fractions do not add up, unless the reader has scrolled since.
      const from = this.scrollTarget !== undefined && Math.abs(this.scrollTarget - box.scrollTop) < 1 ? this.scrollTarget : box.scrollTop;
      this.scrollTarget = from - dropped;
      box.scrollTop = this.scrollTarget;
    }
  }

  private addEvent(event: EventRecord): void {
    if (event.seq <= this.lastSeq) return;
    this.lastSeq = event.seq;
    this.addRow(eventRow(event));
  }

  private filters(): Record<string, string | undefined> {
    return { type: this.ui.type.value.trim() || undefined, correlation_id: this.correlation || undefined };
  }

  /** Aborts what fills the table now and answers the signal of what replaces it. */
  renew(): AbortSignal {
    // What arrived before the cut is the current fill's: shown (a new filter clears it anyway).
    this.flush();
    this.current?.abort();
    this.current = new AbortController();
    return this.current.signal;
  }

  async load(abort: AbortSignal): Promise<void> {
    this.ui.body.replaceChildren();
    this.lastSeq = 0;
    const events = await getJson<EventRecord[]>(debugUrl('vars/events', { limit: 200, ...this.filters() }), abort);
    if (abort.aborted) return;
    for (const event of events) this.addEvent(event);
    this.flush();
    this.ui.box.scrollTop = this.ui.box.scrollHeight;
  }

  /** Reads the NDJSON watch until it ends; false when the server has no watch (then we poll). */
  private async watch(abort: AbortSignal): Promise<boolean> {
    let response: Response;
    try {
      response = await request(debugUrl('vars/events', { watch: 1, since: this.lastSeq, ...this.filters() }), { signal: abort });
    } catch (err) {
      if (err instanceof ApiError && (err.status === 400 || err.status === 404)) return false;
      throw err;
    }
    // Answered just as it was cut (paused, filtered anew): the status is the newer stream's to set.
    abort.throwIfAborted();
    this.ui.state.textContent = 'live';
    await readLines(response, (line) => {
      if (abort.aborted) return;
      const record = JSON.parse(line) as WatchRecord;
      if ('gap' in record) this.addRow(gapRow(record.gap));
      else if ('seq' in record) this.addEvent(record);
    });
    return true;
  }

  private async poll(abort: AbortSignal): Promise<void> {
    this.ui.state.textContent = 'live (polling)';
    for (;;) {
      const events = await getJson<EventRecord[]>(debugUrl('vars/events', { since: this.lastSeq, limit: 1000, ...this.filters() }), abort);
      if (abort.aborted) return;
      for (const event of events) this.addEvent(event);
      await sleep(POLL_MS, abort);
    }
  }

  /** Follows new events until paused, filtered anew or left; retries after a failure. */
  async follow(): Promise<void> {
    const signal = this.renew();
    const { pause, state } = this.ui;
    setViewParams('events', { ...this.filters(), paused: this.paused ? '1' : undefined });
    pause.textContent = this.paused ? 'Resume' : 'Pause';
    pause.setAttribute('aria-pressed', String(this.paused));
    if (this.paused) {
      state.textContent = 'paused';
      return;
    }
    try {
      await this.followLive(signal);
    } catch (err) {
      if (isAbort(err) || signal.aborted) return;
      state.textContent = `stream failed: ${errorMessage(err)}; retrying`;
      await sleep(3000, signal).then(
        () => this.follow(),
        () => undefined,
      );
    }
  }

  private async followLive(signal: AbortSignal): Promise<void> {
    for (;;) {
      if (!(await this.watch(signal))) {
        await this.poll(signal);
        return;
      }
      // The server closed the stream (restart, proxy timeout): resume after the last seq.
      signal.throwIfAborted();
      this.ui.state.textContent = 'reconnecting…';
      await sleep(1000, signal);
    }
  }
}
