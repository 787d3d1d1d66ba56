import { performance } from 'node:perf_hooks';
import type { Session } from 'node:inspector/promises';
import { measureJson } from '../json-stream/index';
import { cutText } from '../util/cut-text';
import { waitFor } from '../util/wait';
import { ProfilerBusyError, secondsUntil } from './errors';
import { openSession } from './inspector-session';

/**
 * The categories a trace may record: the event loop's phases (`node.environment`), V8's own events
 * (garbage collections), `console.time` and `console.count` events, and the `node.perf` categories
 * of `performance` marks, measures and `timerify` spans (which Node 20-24 leave empty). Each was
 * recorded over and over on a promise-busy host in a child process without a crash
 * (`__tests__/pprof/trace-host.test.ts`). Node's other categories record an event per file, socket,
 * DNS or thread-pool operation, at a rate the host decides, and are not offered until they are
 * tested the same way.
 */
export const TRACE_CATEGORIES = [
  'node.environment',
  'node.perf',
  'node.perf.usertiming',
  'node.perf.timerify',
  'node.console',
  'v8',
] as const;

/** One of {@link TRACE_CATEGORIES}. */
export type TraceCategory = (typeof TRACE_CATEGORIES)[number];

/** What a trace records unless asked otherwise: the event loop, garbage collections and marks. */
export const DEFAULT_TRACE_CATEGORIES: readonly TraceCategory[] = ['node.environment', 'node.perf', 'v8'];

// Never offered, whatever the request says: promise and async-hook tracing record an event per
// promise, millions a second on a promise-busy host, and with them Node itself crashed (SIGSEGV in
// its tracing thread, JSONTraceWriter::AppendTraceEvent called from
// NodeTraceBuffer::NonBlockingFlushSignalCb) in 2 of 13 traces; `node` turns on every `node.*`
// category, those included.
const REFUSED_PREFIXES = ['node.async_hooks', 'node.promises'];
const REFUSED_WHY =
  'it records an event per promise or async resource (millions a second on a busy host), and Node itself can crash while recording it (SIGSEGV in its tracing thread)';

/** Most items a category list may have (duplicates included): the allow-list has six. */
export const MAX_CATEGORY_ITEMS = 16;

/** A category list that cannot be traced; the message says which item and why. */
export class TraceCategoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceCategoryError';
  }
}

/** Something else in the process records trace events already (`--trace-event-categories`, `node:trace_events`, an inspector client). */
export class TraceConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceConflictError';
  }
}

function refusedWhy(category: string): string | undefined {
  const name = category.toLowerCase();
  if (name === 'node') return `it turns on every node.* category, node.async_hooks included: ${REFUSED_WHY}`;
  return REFUSED_PREFIXES.some((prefix) => name === prefix || name.startsWith(`${prefix}.`)) ? REFUSED_WHY : undefined;
}

/**
 * Reads a comma-separated category list strictly: items are trimmed, duplicates merged, and an
 * empty item, a refused category (in any letter case), one outside {@link TRACE_CATEGORIES} or
 * one this Node.js does not know (`available`) throws a {@link TraceCategoryError} that names it.
 */
export function parseTraceCategories(text: string, available: readonly string[]): TraceCategory[] {
  const allowed = `allowed: ${TRACE_CATEGORIES.join(', ')}`;
  const items = text.split(',');
  if (items.length > MAX_CATEGORY_ITEMS) {
    throw new TraceCategoryError(`at most ${MAX_CATEGORY_ITEMS} categories may be listed, got ${items.length}; ${allowed}`);
  }
  const chosen = new Set<TraceCategory>();
  for (const [index, item] of items.entries()) {
    const category = item.trim();
    if (category === '') {
      throw new TraceCategoryError(
        text.trim() === ''
          ? `name at least one category; ${allowed}`
          : `item ${index + 1} is empty; separate categories with single commas; ${allowed}`,
      );
    }
    const echo = JSON.stringify(cutText(category, 64));
    const why = refusedWhy(category);
    if (why !== undefined) throw new TraceCategoryError(`category ${echo} is refused: ${why}; ${allowed}`);
    if (!(TRACE_CATEGORIES as readonly string[]).includes(category)) {
      throw new TraceCategoryError(`unknown or not allowed category ${echo} (names are case-sensitive); ${allowed}`);
    }
    if (!available.includes(category)) throw new TraceCategoryError(`category ${echo} is not available in Node.js ${process.version}`);
    chosen.add(category as TraceCategory);
  }
  return [...chosen];
}

let knownCategories: Promise<string[]> | undefined;

/** The categories this Node.js can trace (asked once: the list is fixed for the process's life). */
export function traceCategories(): Promise<string[]> {
  knownCategories ??= (async () => {
    const session = openSession();
    try {
      return ((await session.post('NodeTracing.getCategories')) as { categories: string[] }).categories;
    } finally {
      session.disconnect();
    }
  })();
  knownCategories.catch(() => {
    knownCategories = undefined;
  });
  return knownCategories;
}

/** One event of Chrome's trace event format, as Node writes it. */
export interface TraceEvent {
  /** Event name (`RunTimers`, `MinorGC`, a mark's name). */
  name: string;
  /** Comma-separated category groups (`node,node.environment`). */
  cat: string;
  /** Phase: `X` complete, `B`/`E` begin/end, `M` metadata, `I` instant, ... */
  ph: string;
  /** Process id. */
  pid: number;
  /** Thread id. */
  tid: number;
  /** Timestamp, microseconds. */
  ts: number;
  /** Whatever else Node wrote (`dur`, `args`, ...). */
  [field: string]: unknown;
}

/** A recorded trace in Chrome's trace event format (Perfetto and `chrome://tracing` open it). */
export interface RecordedTrace {
  /** The events, in the order Node flushed them. */
  traceEvents: TraceEvent[];
  /** Set when the trace stopped early or dropped events, saying why. */
  truncated?: string;
}

/** What one trace may keep: the memory a host lends it, whatever its event rate. */
export interface TraceLimits {
  /** Most events kept. */
  readonly maxEvents: number;
  /** Most bytes of event JSON kept. */
  readonly maxBytes: number;
}

/*
 * How a trace is collected. Node's tracing buffers events in native memory (two buffers of 65 536)
 * and hands them to the inspector session as one JSON message per flush, which the session parses
 * on the host's main thread: one 8 s trace of a promise-busy host held 95 000 events and stalled the
 * event loop 795 ms while `NodeTracing.stop` flushed, serialized and parsed them in one turn. So the
 * trace is recorded in windows: tracing stops (and flushes) and restarts in the same turn, each
 * window sized from the last one's event rate and flush time to hold what Node flushes and the
 * session parses in a few milliseconds (a thousand events at most). A window never nears a full
 * native buffer, so Node's tracing thread never flushes on its own either (the path on which it
 * crashed). What remains is measured by benchmark 13 (TRACE_COST).
 */
// What flushing one window (NodeTracing.stop: Node serializes the events, the session parses them)
// should cost the event loop, in milliseconds. Restarting costs a wait for Node's tracing thread
// (0.2-3 ms, more when the machine is short of CPU), whatever the window's size: windows are made as
// long as this target allows, so that there are few restarts.
const TARGET_FLUSH_MS = 3;
// Bounds on a window's expected events whatever the measured cost per event says.
const MIN_WINDOW_EVENTS = 200;
const MAX_WINDOW_EVENTS = 1000;
// A first guess of the cost per event (ms): 0.7-3 µs measured, depending on the machine's load.
const FIRST_COST_PER_EVENT_MS = 0.003;
const FIRST_WINDOW_MS = 10;
const MIN_WINDOW_MS = 5;
const MAX_WINDOW_MS = 1000;
// A window may grow at most this much over the last: a host that was idle may become busy.
const MAX_GROWTH = 2;
// Half of one of Node's native buffers: a window this full means Node's tracing thread may be
// flushing on its own, the path on which it crashed; the trace stops there.
const UNSAFE_WINDOW_EVENTS = 32_768;

/**
 * The next window's length: as long as the event rate just seen allows for a flush of about
 * TARGET_FLUSH_MS at the cost per event just measured (which grows with the machine's load).
 */
class WindowSizer {
  windowMs = FIRST_WINDOW_MS;
  private costPerEventMs = FIRST_COST_PER_EVENT_MS;

  /** Learns from a window of `elapsedMs` that received `events`, whose flush took `flushMs`. */
  update(events: number, elapsedMs: number, flushMs: number): void {
    // Small windows say little about the cost per event: the flush's fixed part dominates them.
    if (events >= MIN_WINDOW_EVENTS) this.costPerEventMs = 0.7 * this.costPerEventMs + 0.3 * (flushMs / events);
    const target = Math.max(MIN_WINDOW_EVENTS, Math.min(MAX_WINDOW_EVENTS, TARGET_FLUSH_MS / this.costPerEventMs));
    const wanted = events > 0 ? (target * elapsedMs) / events : MAX_WINDOW_MS;
    this.windowMs = Math.max(MIN_WINDOW_MS, Math.min(MAX_WINDOW_MS, this.windowMs * MAX_GROWTH, wanted));
  }
}

/** The events of a trace, kept within its limits; duplicates of per-flush metadata merged. */
class EventStore {
  readonly events: TraceEvent[] = [];
  // The JSON of `events` with a comma after each: an upper bound of what they add to the answer.
  private bytes = 2;
  private pending: TraceEvent[] = [];
  private readonly metadata = new Set<string>();
  private readonly wanted: ReadonlySet<string>;
  // Whether a `cat` field names a wanted category; a trace has a handful of distinct ones.
  private readonly verdicts = new Map<string, boolean>();
  /** Events this window received, before filtering (the window's rate). */
  received = 0;
  /** Why the trace cannot take more, once it cannot. */
  full: string | undefined;

  constructor(
    categories: readonly string[],
    private readonly limits: TraceLimits,
  ) {
    this.wanted = new Set(categories);
  }

  /** A flushed batch: events of other tracers' categories are dropped (Node hands every client all events). */
  take(batch: readonly TraceEvent[]): void {
    this.received += batch.length;
    for (const event of batch) {
      if (event.ph === 'M') {
        // Node repeats process and thread names with every flush.
        const key = `${event.pid}:${event.tid}:${event.name}`;
        if (this.metadata.has(key)) continue;
        this.metadata.add(key);
      } else if (!this.isWanted(event.cat)) continue;
      if (this.events.length + this.pending.length >= this.limits.maxEvents) {
        this.full ??= `the trace reached its limit of ${this.limits.maxEvents} events (pprof option trace.maxEvents)`;
        return;
      }
      this.pending.push(event);
    }
  }

  /** Whether an event of this `cat` field belongs to the trace's categories. */
  private isWanted(cat: unknown): boolean {
    if (typeof cat !== 'string') return false;
    let verdict = this.verdicts.get(cat);
    if (verdict === undefined) {
      verdict = cat.split(',').some((c) => this.wanted.has(c));
      if (this.verdicts.size < 256) this.verdicts.set(cat, verdict);
    }
    return verdict;
  }

  /**
   * Moves what the last window kept to the trace, measured exactly (the serializer's own count) so
   * that the events' JSON stays within `maxBytes`: a window that does not fit whole gives the
   * longest prefix found that does, and the trace is full.
   */
  async settle(signal: AbortSignal): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    // An event adds its JSON and a comma; a batch's array adds the same, less one.
    const limit = this.limits.maxBytes - this.bytes + 1;
    let count = batch.length;
    while (count > 0) {
      const part = count === batch.length ? batch : batch.slice(0, count);
      const size = await measureJson(part, { limitBytes: limit, signal });
      if (!size.exceeds) {
        this.bytes += size.bytes - 1;
        for (const event of part) this.events.push(event);
        if (count === batch.length) return;
        break;
      }
      // Enough for the average event of this batch, then halves.
      count = Math.min(Math.floor(count / 2), Math.floor((count * limit) / size.bytes));
    }
    this.full ??= `the trace reached its limit of ${this.limits.maxBytes} bytes of events (pprof option trace.maxBytes)`;
  }
}

let running: { endsAt: number } | undefined;

/** Whether a trace is being recorded in this process. */
export function isTracing(): boolean {
  return running !== undefined;
}

/**
 * What a trace costs the host, as measured by benchmark 13 (bench/trace.js) on a promise-busy host:
 * the index page and docs/profiling.md state it.
 */
export const TRACE_COST =
  'on a promise-busy host (benchmark 13), a 3 s trace stalls the event loop 15-59 ms at worst (the median over runs; 6-17 ms without a trace), as Node flushes its events to the main thread every thousand or so (about 2 ms each, 10-17 ms at the 99th percentile) and each restart waits for its tracing thread; the host grows 10-20 MB per trace, about 25 MB at the default limit of 100 000 events';

/** The categories another tracer in this process records, or an empty string. */
function othersTracing(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on demand: most routers never trace
  return (require('node:trace_events') as typeof import('node:trace_events')).getEnabledCategories() ?? '';
}

/**
 * Ends a window and, unless it is the last, starts the next in the same turn, so that the timeline
 * has no gap; answers how long the stop took (it flushes the window's events, synchronously).
 */
async function rotate(session: Session, categories: readonly string[], restart: boolean): Promise<number> {
  const stopping = performance.now();
  await session.post('NodeTracing.stop');
  const flushMs = performance.now() - stopping;
  if (restart) await session.post('NodeTracing.start', { traceConfig: { includedCategories: [...categories] } });
  return flushMs;
}

/**
 * Records Node's trace events for `seconds` through the in-process inspector's NodeTracing domain, in
 * windows short enough that flushing one never stalls the event loop for long (see above), keeping
 * at most `limits` (one recording per process: a second one throws {@link ProfilerBusyError}).
 * Answers `undefined` when `signal` aborts first; tracing then stops at once.
 *
 * @throws {TraceConflictError} when something else in the process records trace events: Node hands
 *   every tracer all events, so ours would carry theirs and our windows would flush theirs.
 */
export async function recordTrace(
  seconds: number,
  categories: readonly TraceCategory[],
  limits: TraceLimits,
  signal: AbortSignal,
): Promise<RecordedTrace | undefined> {
  if (running) {
    const remaining = secondsUntil(running.endsAt);
    throw new ProfilerBusyError(
      `a trace is already being recorded in this process (about ${remaining}s left); only one runs at a time`,
      remaining,
    );
  }
  const others = othersTracing();
  if (others !== '') {
    throw new TraceConflictError(
      `trace events are already being recorded in this process (categories ${cutText(others, 200)}), by --trace-event-categories, node:trace_events or an inspector client; a trace cannot run beside them`,
    );
  }
  const claim = { endsAt: Date.now() + seconds * 1000 };
  running = claim;
  const store = new EventStore(categories, limits);
  const session = openSession();
  session.on('NodeTracing.dataCollected', (message: { params: { value: TraceEvent[] } }) => store.take(message.params.value));
  let tracing = false;
  try {
    const endsAt = performance.now() + seconds * 1000;
    await session.post('NodeTracing.start', { traceConfig: { includedCategories: [...categories] } });
    tracing = true;
    const sizer = new WindowSizer();
    for (;;) {
      const started = performance.now();
      store.received = 0;
      await waitFor(Math.max(0, Math.min(sizer.windowMs, endsAt - started)), signal);
      const last = signal.aborted || performance.now() >= endsAt - MIN_WINDOW_MS || store.full !== undefined;
      const ended = performance.now();
      const flushMs = await rotate(session, categories, !last);
      tracing = !last;
      if (signal.aborted) return undefined;
      const received = store.received;
      if (received >= UNSAFE_WINDOW_EVENTS) {
        store.full ??= `the host produced trace events faster than they can be collected safely (${received} in ${Math.round(ended - started)} ms); trace fewer categories`;
      }
      await store.settle(signal);
      if (last || store.full !== undefined) break;
      sizer.update(received, ended - started, flushMs);
    }
    if (signal.aborted) return undefined;
    const stoppedEarly = performance.now() < endsAt - MIN_WINDOW_MS;
    return {
      traceEvents: store.events,
      ...(store.full !== undefined ? { truncated: `${stoppedEarly ? 'stopped early' : 'later events dropped'}: ${store.full}` } : {}),
    };
  } finally {
    if (tracing) await session.post('NodeTracing.stop').catch(() => undefined);
    session.disconnect();
    if (running === claim) running = undefined;
  }
}
