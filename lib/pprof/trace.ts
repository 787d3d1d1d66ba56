import { ProfilerBusyError, secondsUntil } from './errors';
import { waitFor } from '../util/wait';
import { openSession } from './inspector-session';

/**
 * What `trace` records unless `?categories=` says otherwise: the event loop's phases (timers,
 * immediates, I/O callbacks), garbage collections and `performance.mark`/`measure` spans. Not
 * `node.async_hooks`: it records every promise, which costs a busy host dearly; ask for it.
 */
export const DEFAULT_TRACE_CATEGORIES = ['node.environment', 'node.perf', 'v8'] as const;

/** Events kept per trace; a busy host with every category on can produce millions. */
const MAX_EVENTS = 500_000;

/** A recorded trace in Chrome's trace event format (Perfetto and `chrome://tracing` open it). */
export interface RecordedTrace {
  traceEvents: unknown[];
  /** Set when the trace hit {@link MAX_EVENTS} and later events were dropped. */
  truncated?: string;
}

let running: { endsAt: number } | undefined;

/** The categories this Node.js can trace, for validating `?categories=`. */
export async function traceCategories(): Promise<string[]> {
  const session = openSession();
  try {
    return ((await session.post('NodeTracing.getCategories')) as { categories: string[] }).categories;
  } finally {
    session.disconnect();
  }
}

/**
 * Records Node's trace events for `seconds` through the in-process inspector's NodeTracing domain
 * (one recording per process: a second one throws {@link ProfilerBusyError}). Answers `undefined` when `signal` aborts
 * first; tracing then stops at once.
 */
export async function recordTrace(seconds: number, categories: readonly string[], signal: AbortSignal): Promise<RecordedTrace | undefined> {
  if (running) {
    const remaining = secondsUntil(running.endsAt);
    throw new ProfilerBusyError(
      `a trace is already being recorded in this process (about ${remaining}s left); only one runs at a time`,
      remaining,
    );
  }
  const claim = { endsAt: Date.now() + seconds * 1000 };
  running = claim;
  const session = openSession();
  const events: unknown[] = [];
  let dropped = 0;
  session.on('NodeTracing.dataCollected', (message: { params: { value: unknown[] } }) => {
    const room = MAX_EVENTS - events.length;
    if (room >= message.params.value.length) events.push(...message.params.value);
    else {
      events.push(...message.params.value.slice(0, Math.max(0, room)));
      dropped += message.params.value.length - Math.max(0, room);
    }
  });
  try {
    await session.post('NodeTracing.start', { traceConfig: { includedCategories: [...categories] } });
    await waitFor(seconds * 1000, signal);
    const complete = new Promise((resolve) => session.once('NodeTracing.tracingComplete', resolve));
    await session.post('NodeTracing.stop');
    await complete;
    if (signal.aborted) return undefined;
    return {
      traceEvents: events,
      ...(dropped > 0
        ? { truncated: `${dropped} events after the first ${MAX_EVENTS} were dropped; trace fewer seconds or categories` }
        : {}),
    };
  } finally {
    session.disconnect();
    if (running === claim) running = undefined;
  }
}
