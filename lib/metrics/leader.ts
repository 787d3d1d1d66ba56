/**
 * Leadership bookkeeping behind the three `leader_election_*` metrics.
 *
 * The metrics read this at scrape time rather than being updated on each call, so the time spent
 * as leader includes the term still running and is never stale between transitions.
 */

import { elapsedMs, type MonotonicClock } from '../util/clock';

/** Tracks whether this replica leads, how often that changed and for how long it led. */
export class LeaderTracker {
  readonly #now: MonotonicClock;
  #leading = false;
  #transitions = 0;
  /** Milliseconds accumulated over finished terms. */
  #finishedTermsMs = 0;
  /** Clock reading when the running term began; only meaningful while leading. */
  #termStartedAt = 0;
  /** Asked at each read while leading, when the host gave one: `false` ends the term there. */
  #stillLeading: (() => boolean) | undefined;

  /** @param now - Monotonic milliseconds (see {@link MonotonicClock}). */
  constructor(now: MonotonicClock) {
    this.#now = now;
  }

  /**
   * Records the current leadership. Repeating the current value changes nothing, so hosts may
   * call this from every election callback without inflating the transition count.
   *
   * @param stillLeading - With `true`: asked at each read while leading (a scrape, `isLeader()`);
   *   once it answers `false`, the term ends at that read, as `set(false)` would end it.
   * @returns Whether this call was a transition.
   */
  set(leading: boolean, stillLeading?: () => boolean): boolean {
    this.#stillLeading = leading ? stillLeading : undefined;
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

  /** Ends the term when the host's `stillLeading` says it ended (it may call `set(false)` itself). */
  #check(): void {
    const stillLeading = this.#stillLeading;
    if (!this.#leading || stillLeading === undefined) return;
    let leading = true;
    try {
      leading = stillLeading() !== false;
    } catch {
      // A source that throws says nothing: the last reported value stands.
    }
    if (!leading) this.set(false);
  }

  /** Whether this replica currently leads. */
  isLeader(): boolean {
    this.#check();
    return this.#leading;
  }

  /** Gains plus losses since creation. */
  transitions(): number {
    this.#check();
    return this.#transitions;
  }

  /** Seconds spent leading, including the running term up to now. */
  secondsAsLeader(): number {
    this.#check();
    const running = this.#leading ? elapsedMs(this.#termStartedAt, this.#now()) : 0;
    return (this.#finishedTermsMs + running) / 1000;
  }
}
