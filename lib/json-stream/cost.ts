/**
 * How fast native `JSON.stringify` runs on this machine, learned from the calls the package makes,
 * so that "can this body be serialised in one piece within the stall goal?" is answered in time,
 * not by a byte size picked once for every machine and every Node line.
 */

// Where learning starts: about half the rate measured on a shared 2-core VM with Node 20 (185-230
// characters per microsecond on a controller's state), so a first guess errs towards streaming.
const INITIAL_CHARS_PER_MS = 100_000;
// Bounds of what one measurement may teach: a call interrupted by a full collection must not make
// every later body stream, nor an unusually cheap one make multi-megabyte bodies go out at once.
const MIN_CHARS_PER_MS = 20_000;
const MAX_CHARS_PER_MS = 1_000_000;
// Calls shorter than this are dominated by their fixed cost and the clock's resolution.
const MIN_SAMPLE_CHARS = 64 * 1024;
// Weight of the newest measurement: a few calls are enough to follow a machine that got busier.
const WEIGHT = 0.25;

/** A running estimate of native serialisation throughput, in characters per millisecond. */
export class SerializationRate {
  private charsPerMs = INITIAL_CHARS_PER_MS;
  private measured = false;

  /**
   * Learns from one native call (or several added up) that produced `chars` characters in `ms`.
   * The first measurement replaces the initial guess outright: averaged in, the guess kept a
   * fresh host streaming 1 MB bodies for its first six answers.
   */
  record(chars: number, ms: number): void {
    if (!(chars >= MIN_SAMPLE_CHARS) || !(ms > 0)) return;
    const measured = Math.min(MAX_CHARS_PER_MS, Math.max(MIN_CHARS_PER_MS, chars / ms));
    this.charsPerMs += (this.measured ? WEIGHT : 1) * (measured - this.charsPerMs);
    this.measured = true;
  }

  /** About how many characters native `JSON.stringify` writes in `ms`. */
  charsWithin(ms: number): number {
    return Math.floor(this.charsPerMs * ms);
  }

  /** The current estimate, characters per millisecond. */
  get rate(): number {
    return this.charsPerMs;
  }
}

/** The one estimate of the process: every serialisation teaches it, every one-shot decision reads it. */
export const nativeRate = new SerializationRate();
