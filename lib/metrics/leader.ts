/**
 * Leadership bookkeeping behind the three `leader_election_*` metrics.
 *
 * The metrics read this at scrape time rather than being updated on each call, so the time spent
 * as leader includes the term still running and is never stale between transitions.
 */

import { elapsedMs, type MonotonicClock } from './clock';

/** Tracks whether this replica leads, how often that changed and for how long it led. */
export class LeaderTracker {
  readonly #now: MonotonicClock;
  #leading = false;
  #transitions = 0;
  /** Milliseconds accumulated over finished terms. */
  #finishedTermsMs = 0;
  /** Clock reading when the running term began; only meaningful while leading. */
  #termStartedAt = 0;

  /** @param now - Monotonic milliseconds (see {@link MonotonicClock}). */
  constructor(now: MonotonicClock) {
    this.#now = now;
  }

  /**
   * Records the current leadership. Repeating the current value changes nothing, so hosts may
   * call this from every election callback without inflating the transition count.
   *
   * @returns Whether this call was a transition.
   */
  set(leading: boolean): boolean {
    if (leading === this.#leading) return false;
    const now = this.#now();
    if (leading) {
      this.#termStartedAt = now;
    } else {
      this.#finishedTermsMs += elapsedMs(this.#termStartedAt, now);
    }
    this.#leading = leading;
    this.#transitions += 1;
    return true;
  }

  /** Whether this replica currently leads. */
  isLeader(): boolean {
    return this.#leading;
  }

  /** Gains plus losses since creation. */
  transitions(): number {
    return this.#transitions;
  }

  /** Seconds spent leading, including the running term up to now. */
  secondsAsLeader(): number {
    const running = this.#leading ? elapsedMs(this.#termStartedAt, this.#now()) : 0;
    return (this.#finishedTermsMs + running) / 1000;
  }
}
