import { ApiError, debugUrl, getJson, getText, request } from '../api';
import { download, formatBytes, h, isAbort, sleep } from '../dom';
import { cpuPprof, drawFlameGraph, heapPprof } from '../flame';
import { cyclesOf, onlyCycle, summariseCpuProfile, summariseHeapProfile, type ProfiledCycle, type ProfileSummary } from '../profile-data';
import type { LabelledCpuProfile } from '../../lib/pprof/cpu/sample-labels';
import type { V8SamplingHeapProfile } from '../../lib/pprof/v8-shapes';
import { setViewParams } from './view';
import { errorMessage } from '../../lib/util/error-message';

interface PprofInfo {
  profiler: { backend: string; reason: string };
  cpu: { defaultSeconds: number; maxSeconds: number; samplingIntervalMicros: number; inProgress: boolean };
  heap: { sampling: boolean; intervalBytes: number };
  /** Off by default: the host turns the trace endpoint on with pprof option `trace`. */
  trace?: { enabled: boolean; maxSeconds?: number };
}

const TOP_ROWS = 30;

/** The CPU profile last taken in this page: kept while other views are open, so that a cycle's link from the events view finds it. */
interface LoadedCpuProfile {
  profile: LabelledCpuProfile;
  cycles: ProfiledCycle[];
  began: number;
  seconds: number;
}
let lastCpu: LoadedCpuProfile | undefined;

/** Whether the CPU profile loaded in this page has samples of cycle `correlationId` (the events view links to it then). */
export function profileHasCycle(correlationId: string): boolean {
  return lastCpu?.cycles.some((c) => c.id === correlationId) ?? false;
}

function topTable(summary: ProfileSummary, format: (value: number) => string, caption: string): HTMLElement {
  const percent = (value: number): string => (summary.total > 0 ? `${((100 * value) / summary.total).toFixed(1)}%` : '');
  const body = h('tbody');
  for (const row of summary.top.slice(0, TOP_ROWS)) {
    body.appendChild(
      h(
        'tr',
        null,
        h('td', { class: 'num' }, format(row.self)),
        h('td', { class: 'num' }, percent(row.self)),
        h('td', { class: 'num' }, format(row.total)),
        h('td', { class: 'num' }, percent(row.total)),
        h('td', { class: 'mono' }, row.name),
      ),
    );
  }
  return h(
    'div',
    null,
    h('h3', { class: 'muted' }, caption),
    h(
      'table',
      { class: 'top' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { class: 'num' }, 'flat'),
          h('th', { class: 'num' }, 'flat%'),
          h('th', { class: 'num' }, 'cum'),
          h('th', { class: 'num' }, 'cum%'),
          h('th', null, 'function'),
        ),
      ),
      body,
    ),
  );
}

/** Flame graph, top functions and downloads for one profile. */
function showProfile(
  panel: HTMLElement,
  summary: ProfileSummary,
  format: (value: number) => string,
  what: string,
  downloads: HTMLElement[],
): void {
  const graph = h('div', { class: 'flame', id: `${what}-flame` });
  const details = h('div', { class: 'details-line', 'aria-live': 'polite' });
  panel.replaceChildren(
    h('div', { class: 'row' }, ...downloads),
    h('p', { class: 'muted' }, 'Click a frame to zoom in, the bottom frame to zoom out. Widths are self values; hover for details.'),
    details,
    graph,
    topTable(summary, format, `Top functions of the ${what} profile (flat: the function itself; cum: with what it calls)`),
  );
  drawFlameGraph(graph, summary, format, details);
}

function downloadButton(label: string, make: () => Promise<Blob> | Blob, fileName: string): HTMLButtonElement {
  const button = h('button', { type: 'button' }, label);
  button.addEventListener('click', () => {
    button.disabled = true;
    void Promise.resolve(make())
      .then((blob) => download(blob, fileName))
      .finally(() => (button.disabled = false));
  });
  return button;
}

function stamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-');
}

/** Draws a loaded CPU profile, all of it or (`cycle`, a correlation id) one cycle's samples, with a selector of the cycles labelled in it. */
function showCpu(panel: HTMLElement, status: HTMLElement, info: PprofInfo, loaded: LoadedCpuProfile, cycle: string): void {
  const { profile, cycles, began, seconds: n } = loaded;
  const chosen = cycles.some((c) => c.id === cycle) ? cycle : '';
  const summary = summariseCpuProfile(chosen ? onlyCycle(profile, chosen) : profile);
  const interval = info.cpu.samplingIntervalMicros;
  const samples = (v: number): string => `${((v * interval) / 1000).toFixed(0)} ms`;
  status.textContent =
    `${summary.total} samples (${samples(summary.total)} on CPU) over ${n} s` +
    (chosen ? ` in cycle ${chosen}` : cycle ? `; cycle ${cycle} has no samples in this profile` : '');
  setViewParams('profiles', { seconds: String(n), cycle: chosen || undefined });
  const json = new Blob([JSON.stringify(profile)], { type: 'application/json' });
  const name = `cpu-${stamp()}`;
  const downloads: HTMLElement[] = [
    downloadButton('Download pprof', () => cpuPprof(profile, began, interval), `${name}.pb.gz`),
    downloadButton('Download .cpuprofile', () => json, `${name}.cpuprofile`),
  ];
  if (cycles.length > 0) {
    // Built from the labels present: the cycles this profile has samples of.
    const select = h(
      'select',
      { id: 'cpu-cycle', 'aria-label': 'Only the samples of one reconciliation cycle' },
      h('option', { value: '' }, `all samples (${cycles.length} cycles labelled)`),
      ...cycles.map((c) =>
        h('option', { value: c.id, selected: c.id === chosen }, `${c.id.slice(0, 8)} ${c.trigger} (${samples(c.samples)})`),
      ),
    );
    select.addEventListener('change', () => showCpu(panel, status, info, loaded, select.value));
    downloads.push(h('label', { for: 'cpu-cycle' }, 'Cycle'), select);
  }
  showProfile(panel, summary, samples, 'cpu', downloads);
}

function cpuSection(info: PprofInfo, params: URLSearchParams, signal: AbortSignal): HTMLElement {
  const max = info.cpu.maxSeconds;
  const initial = Math.min(max, Math.max(1, Number(params.get('seconds')) || 10));
  const seconds = h('input', {
    type: 'number',
    id: 'cpu-seconds',
    min: 1,
    max,
    step: 1,
    value: initial,
    'aria-label': 'Profile duration in seconds',
  });
  const start = h('button', { type: 'button', class: 'primary', id: 'cpu-start' }, 'Start CPU profile');
  const cancel = h('button', { type: 'button', id: 'cpu-cancel', disabled: true }, 'Cancel');
  const progress = h('progress', { max: 1, value: 0, id: 'cpu-progress', 'aria-label': 'Profile progress' });
  const status = h('span', { role: 'status', id: 'cpu-status', class: 'muted' });
  const panel = h('div', { id: 'cpu-result' });
  let running: AbortController | undefined;
  signal.addEventListener('abort', () => running?.abort());

  const wanted = params.get('cycle') ?? '';
  // Once the section is in the page: the flame graph measures its container.
  const shown = lastCpu;
  if (shown) queueMicrotask(() => showCpu(panel, status, info, shown, wanted));
  else if (wanted) status.textContent = `cycle ${wanted}: no CPU profile is loaded in this page; take one while such cycles run`;

  start.addEventListener('click', () => {
    const n = Number(seconds.value);
    if (!Number.isInteger(n) || n < 1 || n > max) {
      status.textContent = `seconds must be a whole number from 1 to ${max}`;
      return;
    }
    setViewParams('profiles', { seconds: String(n) });
    running = new AbortController();
    const controller = running;
    start.disabled = true;
    cancel.disabled = false;
    progress.max = n * 1000;
    const began = Date.now();
    const ticker = setInterval(() => {
      progress.value = Math.min(n * 1000, Date.now() - began);
      status.textContent = `profiling… ${Math.min(n, Math.floor((Date.now() - began) / 1000))} of ${n} s`;
    }, 200);
    void (async () => {
      try {
        const response = await request(debugUrl('pprof/profile', { seconds: n, format: 'cpuprofile' }), { signal: controller.signal });
        const profile = (await response.json()) as LabelledCpuProfile;
        lastCpu = { profile, cycles: cyclesOf(profile), began, seconds: n };
        showCpu(panel, status, info, lastCpu, '');
      } catch (err) {
        if (isAbort(err)) status.textContent = 'cancelled: the server stopped the profile';
        else if (err instanceof ApiError && err.status === 503 && err.retryAfter)
          status.textContent = `Another CPU profile is running in this process (one at a time); try again in ${err.retryAfter} s. ${err.message}`;
        else status.textContent = errorMessage(err);
      } finally {
        clearInterval(ticker);
        progress.value = 0;
        start.disabled = false;
        cancel.disabled = true;
      }
    })();
  });
  cancel.addEventListener('click', () => running?.abort());
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'CPU'),
    h(
      'p',
      { class: 'muted' },
      `V8's sampling profiler (${info.profiler.backend}), a sample every ${info.cpu.samplingIntervalMicros / 1000} ms; one profile at a time per process.`,
    ),
    h('div', { class: 'row' }, h('label', { for: 'cpu-seconds' }, 'Seconds'), seconds, start, cancel, progress, status),
    panel,
  );
}

/**
 * Runs `work` on each click of `button`, with the button disabled until it ends (a second click
 * would start a second profile) and any failure shown in `status`.
 */
function whileDisabled(button: HTMLButtonElement, status: HTMLElement, busy: string | (() => string), work: () => Promise<void>): void {
  button.addEventListener('click', () => {
    button.disabled = true;
    status.textContent = typeof busy === 'string' ? busy : busy();
    work()
      .catch((err: unknown) => {
        status.textContent = errorMessage(err);
      })
      .finally(() => {
        button.disabled = false;
      });
  });
}

function heapSection(info: PprofInfo, params: URLSearchParams): HTMLElement {
  const gc = h('input', { type: 'checkbox', id: 'heap-gc', checked: params.get('gc') === '1' });
  const read = h('button', { type: 'button', class: 'primary', id: 'heap-read', disabled: !info.heap.sampling }, 'Read heap profile');
  const status = h('span', { role: 'status', id: 'heap-status', class: 'muted' });
  const panel = h('div', { id: 'heap-result' });
  whileDisabled(read, status, 'reading…', async () => {
    const response = await request(debugUrl('pprof/heap', { format: 'heapprofile', gc: gc.checked ? 1 : undefined }));
    const profile = (await response.json()) as V8SamplingHeapProfile;
    const summary = summariseHeapProfile(profile);
    status.textContent = `${formatBytes(summary.total)} live (estimated from samples every ${formatBytes(info.heap.intervalBytes)})`;
    const name = `heap-${stamp()}`;
    const json = new Blob([JSON.stringify(profile)], { type: 'application/json' });
    showProfile(panel, summary, formatBytes, 'heap', [
      downloadButton('Download pprof', () => heapPprof(profile, info.heap.intervalBytes), `${name}.pb.gz`),
      downloadButton('Download .heapprofile', () => json, `${name}.heapprofile`),
    ]);
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'Heap'),
    h(
      'p',
      { class: 'muted' },
      info.heap.sampling
        ? 'Live JavaScript heap by allocating stack, from the sampling heap profiler running since start.'
        : 'Heap sampling is off on this controller (heapSamplingIntervalBytes: false).',
    ),
    h('div', { class: 'row' }, gc, h('label', { for: 'heap-gc' }, 'Collect garbage first (?gc=1)'), read, status),
    panel,
  );
}

function traceSection(info: PprofInfo): HTMLElement {
  const enabled = info.trace?.enabled !== false;
  const seconds = h('input', {
    type: 'number',
    id: 'trace-seconds',
    min: 1,
    max: info.trace?.maxSeconds ?? info.cpu.maxSeconds,
    step: 1,
    value: 2,
    'aria-label': 'Trace duration in seconds',
  });
  const record = h('button', { type: 'button', id: 'trace-record', disabled: !enabled }, 'Record and download trace');
  const status = h('span', { role: 'status', id: 'trace-status', class: 'muted' });
  whileDisabled(
    record,
    status,
    () => `tracing for ${seconds.value} s…`,
    async () => {
      const response = await request(debugUrl('pprof/trace', { seconds: seconds.value }));
      const blob = await response.blob();
      download(blob, `trace-${stamp()}.json`);
      status.textContent = `${formatBytes(blob.size)} of trace events; open the file in ui.perfetto.dev or chrome://tracing`;
    },
  );
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'Event-loop trace'),
    h(
      'p',
      { class: 'muted' },
      enabled
        ? "Node's trace events (timers, immediates, I/O callbacks, garbage collections) as a timeline, like Go's execution trace."
        : 'Tracing is off on this controller (pprof option trace: true turns it on; the pprof index states what a trace costs).',
    ),
    h('div', { class: 'row' }, h('label', { for: 'trace-seconds' }, 'Seconds'), seconds, record, status),
  );
}

function textSection(): HTMLElement {
  const out = h('pre', { class: 'text result', id: 'text-profile' }, 'Choose a profile.');
  const show = (path: string, query: Record<string, string>) => async (): Promise<void> => {
    out.textContent = 'loading…';
    try {
      out.textContent = await getText(debugUrl(path, query));
    } catch (err) {
      out.textContent = errorMessage(err);
    }
  };
  const button = (label: string, id: string, path: string, query: Record<string, string>): HTMLButtonElement => {
    const b = h('button', { type: 'button', id }, label);
    b.addEventListener('click', () => void show(path, query)());
    return b;
  };
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'Handles, event-loop delay, locks'),
    h('p', { class: 'muted' }, "Node's analogs of Go's goroutine, block and mutex profiles, as text."),
    h(
      'div',
      { class: 'row' },
      button('Handles (goroutine)', 'text-goroutine', 'pprof/goroutine', { debug: '1' }),
      button('Each handle (goroutine?debug=2)', 'text-goroutine2', 'pprof/goroutine', { debug: '2' }),
      button('Event-loop delay (block)', 'text-block', 'pprof/block', { debug: '1' }),
      button('mutex', 'text-mutex', 'pprof/mutex', { debug: '1' }),
      button('cmdline', 'text-cmdline', 'pprof/cmdline', {}),
    ),
    out,
  );
}

/** CPU and heap profiles in the page (flame graph, top table, downloads), and the text profiles. */
export async function renderProfiles(root: HTMLElement, params: URLSearchParams, signal: AbortSignal): Promise<void> {
  const info = await getJson<PprofInfo>(debugUrl('pprof/', { format: 'json' }), signal);
  root.replaceChildren(
    h('h1', null, 'Profiles'),
    cpuSection(info, params, signal),
    heapSection(info, params),
    traceSection(info),
    textSection(),
  );
  await sleep(2 ** 31 - 1, signal);
}
