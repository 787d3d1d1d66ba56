import type { ControllerEvent, EventDetails, EventPage, EventQuery, EventReadOptions } from './types';

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
   * The `limit` events that match `query` (type exact or, ending in `.`, as a prefix; correlation
   * id; `seq > since`), oldest first: the newest matches, or with `from: 'oldest'` the oldest ones
   * after `since`. Walks only the events after `since`, and at most `maxScan` of them oldest first.
   */
  read(query: EventQuery, limit: number = this.size, options: EventReadOptions = {}): EventPage {
    const oldestSeq = this.nextSeq - this.size;
    const since = Math.max(query.since ?? 0, oldestSeq - 1);
    const out: ControllerEvent[] = [];
    const matches = this.matcher(query);
    let scannedThrough = this.nextSeq - 1;
    if (limit > 0 && options.from === 'oldest') {
      const last = Math.min(this.nextSeq - 1, since + Math.max(1, options.maxScan ?? Infinity));
      let seq = since + 1;
      for (; seq <= last && out.length < limit; seq++) {
        const index = this.indexOf(seq);
        if (matches(index)) out.push(this.eventAt(seq, index));
      }
      scannedThrough = seq - 1;
    } else if (limit > 0) {
      // Newest first, so that `limit` keeps the newest matches; reversed at the end.
      for (let seq = this.nextSeq - 1; seq > since && out.length < limit; seq--) {
        const index = this.indexOf(seq);
        if (matches(index)) out.push(this.eventAt(seq, index));
      }
      out.reverse();
    }
    return { events: out, oldestSeq, nextSeq: this.nextSeq, scannedThrough };
  }

  private indexOf(seq: number): number {
    return (this.next - (this.nextSeq - seq) + this.capacity * 2) % this.capacity;
  }

  private matcher(query: EventQuery): (index: number) => boolean {
    const { type, correlationId } = query;
    const prefix = type !== undefined && type.endsWith('.');
    return (index) => {
      const eventType = this.types[index] as string;
      if (type !== undefined && (prefix ? !eventType.startsWith(type) : eventType !== type)) return false;
      return correlationId === undefined || this.correlations[index] === correlationId;
    };
  }

  private eventAt(seq: number, index: number): ControllerEvent {
    return toEvent(
      seq,
      this.times[index] as number,
      this.types[index] as string,
      this.summaries[index] as string,
      this.correlations[index],
      this.details[index],
    );
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
