import type { ControllerEvent, EventDetails, EventQuery } from './types';

/** What {@link EventRing.read} found: the matching events and where the ring stands. */
export interface EventPage {
  /** Matching events with `seq > since`, oldest first (at most `limit`, the newest ones). */
  readonly events: ControllerEvent[];
  /** The seq of the oldest event still in the ring (`nextSeq` when the ring is empty). */
  readonly oldestSeq: number;
  /** The seq the next published event will get. */
  readonly nextSeq: number;
}

/**
 * A fixed-capacity ring of the newest events, kept as parallel columns. `push` is O(1) and
 * allocates nothing: one slot of each column is overwritten and nothing shifts, so publishing stays
 * cheap on the host's hot path however full the ring is. Event objects and ISO timestamps are only
 * made when someone reads. Every event has a sequence number (`seq`, from 1, never reused), so
 * readers can ask for what came after the last one they saw and tell what they missed.
 */
export class EventRing {
  private readonly times: Float64Array;
  private readonly types: string[];
  private readonly summaries: string[];
  private readonly correlations: (string | undefined)[];
  private readonly details: (EventDetails | undefined)[];
  private next = 0;
  private size = 0;
  /** Seq of the next event; the event in slot `next - 1` has `nextSeq - 1`. */
  private nextSeq = 1;

  constructor(readonly capacity: number) {
    this.times = new Float64Array(capacity);
    this.types = new Array<string>(capacity).fill('');
    this.summaries = new Array<string>(capacity).fill('');
    this.correlations = new Array<string | undefined>(capacity).fill(undefined);
    this.details = new Array<EventDetails | undefined>(capacity).fill(undefined);
  }

  push(timeMs: number, type: string, summary: string, correlationId?: string, details?: EventDetails): number {
    const i = this.next;
    this.times[i] = timeMs;
    this.types[i] = type;
    this.summaries[i] = summary;
    this.correlations[i] = correlationId;
    this.details[i] = details;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    if (this.size < this.capacity) this.size++;
    return this.nextSeq++;
  }

  /** The newest `count` events (all when omitted), oldest first. */
  newest(count: number = this.size): ControllerEvent[] {
    return this.read({}, count).events;
  }

  /**
   * The newest `limit` events that match `query` (type exact or, ending in `.`, as a prefix;
   * correlation id; `seq > since`), oldest first. Walks only the events after `since`.
   */
  read(query: EventQuery, limit: number = this.size): EventPage {
    const oldestSeq = this.nextSeq - this.size;
    const page: EventPage = { events: [], oldestSeq, nextSeq: this.nextSeq };
    if (limit <= 0) return page;
    const since = Math.max(query.since ?? 0, oldestSeq - 1);
    const type = query.type;
    const prefix = type !== undefined && type.endsWith('.');
    const out = page.events;
    // Newest first, so that `limit` keeps the newest matches; reversed at the end.
    for (let seq = this.nextSeq - 1; seq > since && out.length < limit; seq--) {
      const index = (this.next - (this.nextSeq - seq) + this.capacity * 2) % this.capacity;
      const eventType = this.types[index] as string;
      if (type !== undefined && (prefix ? !eventType.startsWith(type) : eventType !== type)) continue;
      if (query.correlationId !== undefined && this.correlations[index] !== query.correlationId) continue;
      out.push(
        toEvent(
          seq,
          this.times[index] as number,
          eventType,
          this.summaries[index] as string,
          this.correlations[index],
          this.details[index],
        ),
      );
    }
    out.reverse();
    return page;
  }

  get length(): number {
    return this.size;
  }

  /** The seq of the newest event (0 before the first). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }
}

// Formatting a timestamp costs ~1 µs, far more than the rest of publishing; events come in bursts
// within one millisecond, so the last one formatted is kept.
let lastTimeMs = NaN;
let lastTimestamp = '';

function isoTimestamp(timeMs: number): string {
  if (timeMs !== lastTimeMs) {
    lastTimestamp = new Date(timeMs).toISOString();
    lastTimeMs = timeMs;
  }
  return lastTimestamp;
}

/**
 * Materialises one event as served and as given to subscribers: `correlation_id` and `details`
 * appear only on events that have them.
 */
export function toEvent(
  seq: number,
  timeMs: number,
  type: string,
  summary: string,
  correlationId?: string,
  details?: EventDetails,
): ControllerEvent {
  const event: ControllerEvent = { seq, timestamp: isoTimestamp(timeMs), type, summary };
  if (correlationId !== undefined) event.correlation_id = correlationId;
  if (details !== undefined) event.details = details;
  return event;
}
