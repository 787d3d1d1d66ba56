/**
 * When each reconciliation cycle ran, for the CPU profiler. Two fixed-size rings:
 * - spans: [start, end] of every cycle, opened and closed by {@link CycleTimeline.run} (always on:
 *   O(1), no allocation but the labels object);
 * - segments: while a CPU profile records ({@link CycleTimeline.trace}), the [enter, exit] of each
 *   synchronous stretch of a cycle: its own start, and every async callback (promise continuation,
 *   timer, I/O) that runs in its AsyncLocalStorage context, noted by async_hooks `before`/`after`
 *   hooks enabled only while tracing. Segments place samples when cycles of concurrent workers are
 *   in flight together.
 * The clock is the monotonic one V8's CPU profiles use (`process.hrtime`, in µs), so a sample's
 * timestamp and a span compare directly.
 */
import { AsyncLocalStorage, createHook, executionAsyncResource, type AsyncHook } from 'node:async_hooks';

/** What a cycle's samples are labelled with: pprof string labels, key → value. */
export type CycleLabels = Readonly<Record<string, string>>;

/** One cycle's span: its labels and [start, end] on the monotonic clock, µs. */
export interface CycleSpan {
  /** pprof labels: `correlation_id`, `trigger`, and `controller` when the pipeline has one. */
  readonly labels: CycleLabels;
  /** `process.hrtime` when the cycle started, µs. */
  readonly startMicros: number;
  /** `process.hrtime` when it ended, µs; `undefined` while it still runs. */
  readonly endMicros: number | undefined;
}

/** A synchronous stretch of one cycle: [enter, exit], µs, and the index of its cycle's span in the answer's `spans`. */
export interface CycleSegment {
  /** Index in {@link CycleTimelineReading.spans}. */
  readonly span: number;
  /** When the stretch began, µs. */
  readonly startMicros: number;
  /** When it ended, µs. */
  readonly endMicros: number;
}

/** The cycles over a stretch of time. */
export interface CycleTimelineReading {
  /** The cycles in flight at some point of it, oldest first. */
  readonly spans: readonly CycleSpan[];
  /** Their synchronous stretches noted while tracing was on (none otherwise), oldest first. */
  readonly segments: readonly CycleSegment[];
}

/** The monotonic clock of V8's CPU profiles (`base::TimeTicks`), µs. */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** How many spans the ring keeps: at a cycle every 5 ms, the last 20 s. */
export const CYCLE_SPAN_CAPACITY = 4096;
/** How many segments the ring keeps (3 MB, allocated on the first trace): a 14 s profile at 9 000 cycle callbacks/s. */
export const CYCLE_SEGMENT_CAPACITY = 131_072;

const OPEN = Number.POSITIVE_INFINITY;

/** Where a resource created while tracing keeps the number of the cycle that created it. */
const CYCLE_OF = Symbol('controller-introspection.cycle');

type Tagged = { [CYCLE_OF]?: number };

/**
 * The cycles' timeline: the span ring, the segment ring and the hooks that fill the latter. One per
 * state. Spans are numbered from 0 as they open; slot of span n is n % capacity.
 */
export class CycleTimeline {
  private readonly labels: (CycleLabels | undefined)[];
  private readonly starts: Float64Array;
  private readonly ends: Float64Array;
  private opened = 0;
  /** The context each cycle runs in: its span's number. */
  private readonly context = new AsyncLocalStorage<number>();
  private segmentSpans: Float64Array | undefined;
  private segmentStarts: Float64Array | undefined;
  private segmentEnds: Float64Array | undefined;
  private segmentsWritten = 0;
  private tracers = 0;
  private hook: AsyncHook | undefined;
  /** Callbacks of a cycle being run, innermost last: [asyncId, span, enter]. */
  private readonly entered: number[] = [];

  constructor(
    private readonly capacity = CYCLE_SPAN_CAPACITY,
    private readonly segmentCapacity = CYCLE_SEGMENT_CAPACITY,
  ) {
    this.labels = new Array<CycleLabels | undefined>(capacity).fill(undefined);
    this.starts = new Float64Array(capacity);
    this.ends = new Float64Array(capacity);
  }

  /**
   * Runs one cycle: opens its span, runs `cycle` (in its context while tracing is on, so that
   * tracing can tell its callbacks from others'), and closes the span when the answer settles.
   * Outside tracing no AsyncLocalStorage is entered: on Node 20 and 22 an AsyncLocalStorage once
   * entered stays enabled for the life of the process, and every promise created from then on
   * carries its store, a cost the host would pay all the time for profiles it takes now and then.
   * A cycle already running when tracing begins is placed by its span only.
   */
  async run<T>(labels: CycleLabels, cycle: () => Promise<T>): Promise<T> {
    const n = this.opened++;
    const slot = n % this.capacity;
    const start = monotonicMicros();
    this.labels[slot] = labels;
    this.starts[slot] = start;
    this.ends[slot] = OPEN;
    try {
      const running = this.tracers > 0 ? this.context.run(n, cycle) : cycle();
      // Its synchronous start is a segment of its own: no hook sees it.
      if (this.tracers > 0) this.segment(n, start, monotonicMicros());
      return await running;
    } finally {
      // Unless the ring has reused the slot (a cycle longer than 4096 others).
      if (this.opened - n <= this.capacity) this.ends[slot] = monotonicMicros();
    }
  }

  /**
   * Notes cycles' segments until the answer is called (idempotent). Calls nest: segments are noted
   * while any is on. Costs every async callback of the process two clock reads while on.
   */
  trace(): () => void {
    this.tracers += 1;
    if (this.tracers === 1) {
      this.segmentSpans ??= new Float64Array(this.segmentCapacity);
      this.segmentStarts ??= new Float64Array(this.segmentCapacity);
      this.segmentEnds ??= new Float64Array(this.segmentCapacity);
      this.hook ??= createHook({
        // Read where the resource is created: the creator's context on every Node line, with or
        // without AsyncContextFrame (Node 24+), whose ALS does not follow async_hooks' resources.
        init: (_id, _type, _trigger, resource) => {
          const n = this.context.getStore();
          if (n !== undefined && typeof resource === 'object' && resource !== null) (resource as Tagged)[CYCLE_OF] = n;
        },
        before: (id) => this.before(id),
        after: (id) => this.after(id),
      });
      this.hook.enable();
    }
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.tracers -= 1;
      if (this.tracers === 0) {
        this.hook?.disable();
        this.entered.length = 0;
        // Leaves no AsyncLocalStorage hook installed between profiles (Node 20 and 22).
        this.context.disable();
      }
    };
  }

  private before(asyncId: number): void {
    // A resource created before tracing began has no tag: its ALS store then (Node 20 and 22 keep
    // it on the resource; with AsyncContextFrame it is the frame restored around the callback).
    const n = (executionAsyncResource() as Tagged)[CYCLE_OF] ?? this.context.getStore();
    if (n !== undefined) this.entered.push(asyncId, n, monotonicMicros());
  }

  private after(asyncId: number): void {
    const entered = this.entered;
    const top = entered.length - 3;
    if (top >= 0 && entered[top] === asyncId) {
      this.segment(entered[top + 1] ?? 0, entered[top + 2] ?? 0, monotonicMicros());
      entered.length = top;
    }
  }

  private segment(span: number, start: number, end: number): void {
    if (!this.segmentSpans || !this.segmentStarts || !this.segmentEnds) return;
    const slot = this.segmentsWritten++ % this.segmentCapacity;
    this.segmentSpans[slot] = span;
    this.segmentStarts[slot] = start;
    this.segmentEnds[slot] = end;
  }

  /** The spans that overlap [fromMicros, toMicros], and the segments of theirs within it. */
  read(fromMicros: number, toMicros: number): CycleTimelineReading {
    const spans: CycleSpan[] = [];
    const indexOf = new Map<number, number>();
    const count = Math.min(this.opened, this.capacity);
    for (let n = this.opened - count; n < this.opened; n += 1) {
      const slot = n % this.capacity;
      const labels = this.labels[slot];
      const start = this.starts[slot] ?? 0;
      const end = this.ends[slot] ?? 0;
      if (labels === undefined || start > toMicros || end < fromMicros) continue;
      indexOf.set(n, spans.length);
      spans.push({ labels, startMicros: start, endMicros: end === OPEN ? undefined : end });
    }
    const segments: CycleSegment[] = [];
    if (this.segmentSpans && this.segmentStarts && this.segmentEnds) {
      const kept = Math.min(this.segmentsWritten, this.segmentCapacity);
      for (let k = this.segmentsWritten - kept; k < this.segmentsWritten; k += 1) {
        const slot = k % this.segmentCapacity;
        const span = indexOf.get(this.segmentSpans[slot] ?? -1);
        const start = this.segmentStarts[slot] ?? 0;
        const end = this.segmentEnds[slot] ?? 0;
        if (span === undefined || start > toMicros || end < fromMicros) continue;
        // A callback of the cycle's context that runs after it ended (a timer it left) is not the cycle's.
        const spanEnd = spans[span]?.endMicros;
        if (spanEnd !== undefined && start > spanEnd) continue;
        segments.push({ span, startMicros: start, endMicros: end });
      }
    }
    return { spans, segments };
  }
}
