// Platform-neutral, like to-pprof.ts: the debug console's page labels the samples of a profile it
// received the same way.
import type { V8CpuProfile } from '../v8-shapes';

/** A span of time whose samples get `labels`: a reconciliation cycle, on the profile's clock (µs). */
export interface LabelSpan {
  /** pprof string labels, key → value (`correlation_id`, `trigger`, `controller`). */
  readonly labels: Readonly<Record<string, string>>;
  /** Start, µs, on the clock of the profile's `startTime` and `timeDeltas`. */
  readonly startMicros: number;
  /** End, µs; `undefined` (or absent) for a span still open when the profile stopped. */
  readonly endMicros?: number | undefined;
}

/** A synchronous stretch of one span's work (a cycle's own code running), µs. */
export interface LabelSegment {
  /** Index of its span in the spans given with it. */
  readonly span: number;
  /** Enter, µs. */
  readonly startMicros: number;
  /** Exit, µs. */
  readonly endMicros: number;
}

/** A V8 CPU profile with the cycles that overlapped it (the `.cpuprofile` answer of `/profile`). */
export type LabelledCpuProfile = V8CpuProfile & {
  /** The cycles in flight during the profile; absent when none was. */
  cycles?: readonly LabelSpan[];
  /** Their synchronous segments, noted while the profile recorded; absent when none was. */
  cycleSegments?: readonly LabelSegment[];
};

/**
 * `spanOf` of a sample inside several spans at once and in none of their segments.
 */
export const AMBIGUOUS = -2;

/** Which span each sample falls in. */
export interface SampleLabelling {
  /**
   * Per sample (index of `profile.samples`): the index in `spans` of its span, -1 when none holds
   * it, {@link AMBIGUOUS} when several do and no segment tells which.
   */
  readonly spanOf: Int32Array;
  /** Per sample: 1 when a segment placed it. */
  readonly bySegmentOf: Uint8Array;
  /** Samples given a span's labels. */
  readonly labelled: number;
  /** Of those, placed by a segment. */
  readonly bySegment: number;
  /** Samples inside two or more spans at once (concurrent cycles) and no segment, left unlabelled. */
  readonly ambiguous: number;
}

interface Interval {
  readonly startMicros: number;
  readonly endMicros?: number | undefined;
}

/**
 * A sweep over intervals in start order for timestamps that (mostly) grow: `at(t)` answers the
 * intervals holding t. Timestamps slightly out of order (V8 writes a few) are checked against the
 * intervals open at that point of the sweep.
 */
class Sweep<T extends Interval> {
  private readonly order: T[];
  private next = 0;
  private active: T[] = [];

  constructor(intervals: readonly T[]) {
    this.order = [...intervals].sort((a, b) => a.startMicros - b.startMicros);
  }

  at(t: number): T[] {
    while (this.next < this.order.length && (this.order[this.next]?.startMicros ?? 0) <= t) {
      const item = this.order[this.next++];
      if (item) this.active.push(item);
    }
    if (this.active.some((i) => endOf(i) < t)) this.active = this.active.filter((i) => endOf(i) >= t);
    return this.active.filter((i) => i.startMicros <= t && t <= endOf(i));
  }
}

const endOf = (i: Interval): number => i.endMicros ?? Number.POSITIVE_INFINITY;

/**
 * Places each sample by its timestamp. A sample inside a segment belongs to that segment's span
 * (the innermost when segments nest): the cycle's own code was running. Otherwise, a sample inside
 * exactly one span gets that span: with one worker, cycles follow each other and every sample
 * while one is in flight is placed, including the process's other work meanwhile (a request
 * served while the cycle awaited); a sample inside several spans (cycles of concurrent workers
 * overlapping) gets none and is counted as ambiguous; one outside every span gets none.
 */
export function labelSamples(profile: V8CpuProfile, spans: readonly LabelSpan[], segments: readonly LabelSegment[] = []): SampleLabelling {
  const spanOf = new Int32Array(profile.samples.length).fill(-1);
  const bySegmentOf = new Uint8Array(profile.samples.length);
  if (spans.length === 0) return { spanOf, bySegmentOf, labelled: 0, bySegment: 0, ambiguous: 0 };
  const bySpan = new Sweep(spans.map((span, index) => ({ startMicros: span.startMicros, endMicros: span.endMicros, index })));
  const bySeg = new Sweep(segments);
  let labelled = 0;
  let bySegment = 0;
  let ambiguous = 0;
  let timestamp = profile.startTime;
  for (let s = 0; s < profile.samples.length; s += 1) {
    timestamp += profile.timeDeltas[s] ?? 0;
    const inSegments = segments.length > 0 ? bySeg.at(timestamp) : [];
    const holders = bySpan.at(timestamp);
    if (inSegments.length > 0) {
      // Innermost: the one entered last.
      let inner = inSegments[0];
      for (const seg of inSegments) if (inner === undefined || seg.startMicros > inner.startMicros) inner = seg;
      spanOf[s] = inner?.span ?? -1;
      bySegmentOf[s] = 1;
      labelled += 1;
      bySegment += 1;
    } else if (holders.length === 1) {
      spanOf[s] = holders[0]?.index ?? -1;
      labelled += 1;
    } else if (holders.length > 1) {
      spanOf[s] = AMBIGUOUS;
      ambiguous += 1;
    }
  }
  return { spanOf, bySegmentOf, labelled, bySegment, ambiguous };
}
