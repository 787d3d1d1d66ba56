import type { EventStats } from '../../../lib/state/types';
import type { MetricsStateSource } from '../../../lib/metrics';

/**
 * The two reads the metrics make of the host state, settable by tests. The real store
 * (lib/state/store.ts) satisfies the same `MetricsStateSource` type.
 */
export class FakeState implements MetricsStateSource {
  counts: Record<string, number> = {};
  stats: EventStats = { published: 0, subscribers: 0 };
  /** When set, `resourceCounts()` throws it, like a broken host cache. */
  failure: Error | undefined;
  /** How often each read happened, to prove reads happen at scrape time. */
  reads = { resourceCounts: 0, eventStats: 0 };

  resourceCounts(): Readonly<Record<string, number>> {
    this.reads.resourceCounts += 1;
    if (this.failure !== undefined) throw this.failure;
    return this.counts;
  }

  eventStats(): EventStats {
    this.reads.eventStats += 1;
    return { ...this.stats };
  }
}

/** A hand-driven monotonic clock in milliseconds. */
export class FakeClock {
  ms = 0;
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}
