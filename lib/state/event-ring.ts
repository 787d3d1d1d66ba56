import type { ControllerEvent } from './types';

/**
 * A fixed-capacity ring of the newest events, kept as parallel columns. `push` is O(1) and
 * allocates nothing: one slot of each column is overwritten and nothing shifts, so publishing stays
 * cheap on the host's hot path however full the ring is. Event objects and ISO timestamps are only
 * made when someone reads.
 */
export class EventRing {
  private readonly times: Float64Array;
  private readonly types: string[];
  private readonly summaries: string[];
  private next = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    this.times = new Float64Array(capacity);
    this.types = new Array<string>(capacity).fill('');
    this.summaries = new Array<string>(capacity).fill('');
  }

  push(timeMs: number, type: string, summary: string): void {
    const i = this.next;
    this.times[i] = timeMs;
    this.types[i] = type;
    this.summaries[i] = summary;
    this.next = i + 1 === this.capacity ? 0 : i + 1;
    if (this.size < this.capacity) this.size++;
  }

  /** The newest `count` events (all when omitted), oldest first. */
  newest(count: number = this.size): ControllerEvent[] {
    const n = Math.max(0, Math.min(count, this.size));
    const out = new Array<ControllerEvent>(n);
    let index = (this.next - n + this.capacity) % this.capacity;
    for (let i = 0; i < n; i++) {
      out[i] = toEvent(this.times[index] as number, this.types[index] as string, this.summaries[index] as string);
      index = index + 1 === this.capacity ? 0 : index + 1;
    }
    return out;
  }

  get length(): number {
    return this.size;
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

/** Materialises one event as served and as given to subscribers. */
export function toEvent(timeMs: number, type: string, summary: string): ControllerEvent {
  return { timestamp: isoTimestamp(timeMs), type, summary };
}
