/**
 * The clock every duration of the package is measured with (the metrics', the work queue's).
 *
 * Durations must come from a monotonic source: a wall-clock step (NTP, a VM resume) would produce
 * negative durations or subtract from a counter, which Prometheus reads as a counter reset.
 */

/** A monotonic clock in milliseconds, like `performance.now`. */
export type MonotonicClock = () => number;

/** `performance.now()`: monotonic, sub-millisecond, unaffected by wall-clock changes. */
export const monotonicNow: MonotonicClock = () => performance.now();

/**
 * Milliseconds from `from` to `to`, never negative and never NaN, so a misbehaving injected clock
 * cannot make a counter go down or a histogram observation throw.
 */
export function elapsedMs(from: number, to: number): number {
  const ms = to - from;
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/**
 * A reading for bookkeeping that has nobody to tell of a failure (a work queue's timer, the end of
 * a timed call whose result must come back): `NaN` when the clock throws, which {@link elapsedMs}
 * counts as 0. The clock's error is named where a reading may fail: the call that starts the
 * timing, and the scrape of a family that reads the clock.
 */
export function readingOrNaN(now: MonotonicClock): number {
  try {
    return now();
  } catch {
    return NaN;
  }
}
