import { ApiError, debugUrl, getJson, request } from '../api';
import { append, h, isAbort, sleep } from '../dom';
import { setViewParams } from './view';

interface EventRecord {
  seq: number;
  timestamp: string;
  type: string;
  summary: string;
  correlation_id?: string;
  details?: unknown;
}

const KEEP_ROWS = 1000;
const POLL_MS = 2000;

/** Recent events as a table, then live: the watch stream, or polling `?since=` where there is none. */
export async function renderEvents(root: HTMLElement, params: URLSearchParams, signal: AbortSignal): Promise<void> {
  const type = h('input', {
    type: 'text',
    id: 'event-type',
    class: 'mono',
    placeholder: 'deployment.failed, or a prefix: deployment.',
    'aria-label': 'Filter by event type: exact, or a prefix ending in a dot',
    value: params.get('type') ?? '',
  });
  const correlation = params.get('correlation_id') ?? '';
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

  let paused = params.get('paused') === '1';
  let lastSeq = 0;
  let stream: AbortController | undefined;
  signal.addEventListener('abort', () => stream?.abort());

  function atBottom(): boolean {
    return box.scrollHeight - box.scrollTop - box.clientHeight < 24;
  }

  function addRow(row: HTMLTableRowElement): void {
    const follow = atBottom();
    body.appendChild(row);
    while (body.rows.length > KEEP_ROWS) body.deleteRow(0);
    // Follow the stream only when the reader is at the end; otherwise nothing on screen moves.
    if (follow) box.scrollTop = box.scrollHeight;
  }

  function addEvent(event: EventRecord): void {
    if (event.seq <= lastSeq) return;
    lastSeq = event.seq;
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
    addRow(
      h(
        'tr',
        { 'data-seq': event.seq },
        h('td', { class: 'num' }, event.seq),
        h('td', { class: 'mono' }, event.timestamp.replace('T', ' ').replace('Z', '')),
        h('td', { class: 'mono' }, event.type),
        summary,
      ),
    );
  }

  function filters(): Record<string, string | undefined> {
    return { type: type.value.trim() || undefined, correlation_id: correlation || undefined };
  }

  async function load(abort: AbortSignal): Promise<void> {
    body.replaceChildren();
    lastSeq = 0;
    const events = await getJson<EventRecord[]>(debugUrl('vars/events', { limit: 200, ...filters() }), abort);
    for (const event of events) addEvent(event);
    box.scrollTop = box.scrollHeight;
  }

  /** Reads the NDJSON watch until it ends; false when the server has no watch (then we poll). */
  async function watch(abort: AbortSignal): Promise<boolean> {
    let response: Response;
    try {
      response = await request(debugUrl('vars/events', { watch: 1, since: lastSeq, ...filters() }), { signal: abort });
    } catch (err) {
      if (err instanceof ApiError && (err.status === 400 || err.status === 404)) return false;
      throw err;
    }
    state.textContent = 'live';
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let pending = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return true;
      pending += value;
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (!line) continue;
        const record = JSON.parse(line) as EventRecord | { heartbeat: number } | { gap: { missed: number; resume_from: number } };
        if ('gap' in record)
          addRow(
            h(
              'tr',
              { class: 'gap' },
              h(
                'td',
                { colspan: '4' },
                `${record.gap.missed} events were missed (the ring moved on); resuming at seq ${record.gap.resume_from}`,
              ),
            ),
          );
        else if ('seq' in record) addEvent(record);
      }
    }
  }

  async function poll(abort: AbortSignal): Promise<void> {
    state.textContent = 'live (polling)';
    for (;;) {
      const events = await getJson<EventRecord[]>(debugUrl('vars/events', { since: lastSeq, limit: 1000, ...filters() }), abort);
      for (const event of events) addEvent(event);
      await sleep(POLL_MS, abort);
    }
  }

  async function follow(): Promise<void> {
    stream?.abort();
    const controller = new AbortController();
    stream = controller;
    setViewParams('events', { ...filters(), paused: paused ? '1' : undefined });
    pause.textContent = paused ? 'Resume' : 'Pause';
    pause.setAttribute('aria-pressed', String(paused));
    if (paused) {
      state.textContent = 'paused';
      return;
    }
    try {
      for (;;) {
        if (!(await watch(controller.signal))) {
          await poll(controller.signal);
          return;
        }
        // The server closed the stream (restart, proxy timeout): resume after the last seq.
        state.textContent = 'reconnecting…';
        await sleep(1000, controller.signal);
      }
    } catch (err) {
      if (isAbort(err)) return;
      state.textContent = `stream failed: ${err instanceof Error ? err.message : String(err)}; retrying`;
      await sleep(3000, controller.signal).then(
        () => follow(),
        () => undefined,
      );
    }
  }

  pause.addEventListener('click', () => {
    paused = !paused;
    void follow();
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  type.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stream?.abort();
      void load(signal).then(follow, (err: unknown) => {
        if (!isAbort(err)) state.textContent = err instanceof Error ? err.message : String(err);
      });
    }, 300);
  });

  await load(signal);
  void follow();
  await sleep(2 ** 31 - 1, signal);
}
