/**
 * The clock every duration in this module is measured with.
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
