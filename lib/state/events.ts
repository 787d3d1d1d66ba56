import { EventRing, toEvent } from './event-ring';
import { servableEvent } from './event-view';
import type {
  EventListener,
  EventPage,
  EventQuery,
  EventReadOptions,
  EventStats,
  PublishEventOptions,
  ReadVarOptions,
  VarReading,
} from './types';

/**
 * The event side of the state: the ring, the subscribers told of every event as it is published,
 * and the watches woken after it. Publishing is O(1) whatever listens.
 */
export class EventLog {
  private readonly ring: EventRing;
  private readonly listeners = new Set<EventListener>();
  private readonly wakers = new Set<() => void>();
  private wakeScheduled = false;
  private published = 0;

  /**
   * @param capacity How many events the ring keeps.
   * @param defaultLimit How many of the newest events a read without a limit answers.
   * @param now The wall clock events are stamped with.
   */
  constructor(
    capacity: number,
    private readonly defaultLimit: number,
    private readonly now: () => number,
  ) {
    this.ring = new EventRing(capacity);
  }

  /** See `IntrospectionState.publishEvent`. */
  publish(type: string, summary?: string, options?: PublishEventOptions): void {
    // Checked here, on the host's own call, so that a wrong value is a clear error at its source
    // rather than a surprise in a watcher's filter later; three typeof checks keep this O(1).
    if (typeof type !== 'string' || type === '') throw new TypeError(`publishEvent: type must be a non-empty string, got ${typeof type}`);
    if (summary !== undefined && typeof summary !== 'string')
      throw new TypeError(`publishEvent: summary must be a string, got ${typeof summary}`);
    const time = this.now();
    const text = summary ?? type;
    const correlationId = options?.correlationId;
    if (correlationId !== undefined && typeof correlationId !== 'string')
      throw new TypeError(`publishEvent: correlationId must be a string, got ${typeof correlationId}`);
    const details = options?.details;
    const seq = this.ring.push(time, type, text, correlationId, details);
    this.published++;
    // Watches read the ring on their own schedule: one wake-up per event-loop turn, however many
    // events and watchers, so publishing stays O(1) whatever the watchers do.
    if (this.wakers.size > 0 && !this.wakeScheduled) {
      this.wakeScheduled = true;
      setImmediate(this.wakeWatchers);
    }
    if (this.listeners.size === 0) return;
    const event = toEvent(seq, time, type, text, correlationId, details);
    for (const listener of this.listeners) {
      try {
        const result = listener(event);
        // TypeScript lets an async function stand for a void listener: its rejection must not
        // become an unhandled rejection that takes the host down.
        if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
          (result as PromiseLike<unknown>).then(undefined, ignore);
      } catch {
        // A broken subscriber must not break the publisher (the controller loop).
      }
    }
  }

  /** See `IntrospectionStateReader.readEvents`. */
  read(query: EventQuery, limit: number, options?: EventReadOptions): EventPage {
    return this.ring.read(query, limit, options);
  }

  /** The `events` variable: the newest matches, `limit` of them (the default when not given, capped at capacity). */
  reading(options: ReadVarOptions): VarReading {
    return { ok: true, value: this.ring.read(options.events ?? {}, this.limit(options.limit)).events.map(servableEvent) };
  }

  /** See `IntrospectionStateReader.watchEvents`. */
  watch(wake: () => void): () => void {
    if (typeof wake !== 'function') throw new TypeError('watchEvents: wake must be a function');
    // Wrapped so that the same function watching twice counts as two watches.
    const entry = (): void => wake();
    this.wakers.add(entry);
    return () => {
      this.wakers.delete(entry);
    };
  }

  /** See `IntrospectionState.subscribe`. */
  subscribe(listener: EventListener): () => void {
    if (typeof listener !== 'function') throw new TypeError('subscribe: listener must be a function');
    // Wrapped so that subscribing the same function twice counts as two subscribers.
    const entry: EventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** See `IntrospectionStateReader.eventStats`. */
  stats(): EventStats {
    return { published: this.published, subscribers: this.listeners.size, watchers: this.wakers.size };
  }

  private readonly wakeWatchers = (): void => {
    this.wakeScheduled = false;
    for (const wake of this.wakers) {
      try {
        wake();
      } catch {
        // One broken watch must not stop the others.
      }
    }
  };

  private limit(limit: number | undefined): number {
    if (limit === undefined) return this.defaultLimit;
    return Math.min(Math.max(0, Math.floor(limit)), this.ring.capacity);
  }
}

function ignore(): void {
  // deliberately nothing: see publish
}
