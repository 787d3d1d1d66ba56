import type { Profile } from 'pprof-format';
import { cooperativeTicker } from '../../util/cooperative';
import { PprofBuilder, fileNameOf, functionNameOf } from '../pprof-builder';
import type { V8CallFrame, V8SamplingHeapNode, V8SamplingHeapProfile } from '../v8-shapes';

// Platform-neutral, like the builder: the debug console's page converts with this code too.

/**
 * What V8's one sampling heap profiler keeps: the samples of `live` objects (Go's `heap`), or of
 * every allocation, freed ones included (Go's `allocs`).
 */
export type HeapSamples = 'live' | 'allocations';

/** Live bytes allocated at one stack. */
export interface HeapStack {
  /** Estimated live bytes allocated by the leaf frame. */
  bytes: number;
  /** Frames, leaf first, without V8's synthetic root. */
  frames: V8CallFrame[];
}

interface Visit {
  node: V8SamplingHeapNode;
  parent: Visit | undefined;
}

/**
 * Flattens the allocation tree into stacks with live bytes. Iterative, so deep trees cannot
 * overflow the call stack, and yielding after a few milliseconds of work so that a big profile
 * does not stall the host; the one unavoidable synchronous step is V8 building the profile itself.
 * Aborting `signal` (the client went away) stops it at its next yield, rejecting with the reason.
 */
export async function heapStacks(profile: V8SamplingHeapProfile, signal?: AbortSignal): Promise<HeapStack[]> {
  const tick = cooperativeTicker(5, 8, signal);
  const stacks: HeapStack[] = [];
  const pending: Visit[] = [{ node: profile.head, parent: undefined }];
  while (pending.length > 0) {
    const visit = pending.pop() as Visit;
    if (visit.node.selfSize > 0 && visit.parent !== undefined) {
      const frames: V8CallFrame[] = [];
      // Stop below the head: it is V8's synthetic "(root)", not a function.
      for (let v: Visit | undefined = visit; v && v.parent !== undefined; v = v.parent) frames.push(v.node.callFrame);
      stacks.push({ bytes: visit.node.selfSize, frames });
    }
    for (const child of visit.node.children) pending.push({ node: child, parent: visit });
    const pause = tick();
    if (pause) await pause;
  }
  return stacks;
}

/**
 * Converts to pprof with the single sample type `inuse_space/bytes`. No object counts: V8 gives
 * each node's bytes already scaled from samples to an estimate, and the protocol exposes no
 * per-node object count, so an `inuse_objects` column would be invented. `signal` stops it as in
 * {@link heapStacks}.
 */
export async function heapProfileToPprof(
  profile: V8SamplingHeapProfile,
  intervalBytes: number,
  samples: HeapSamples = 'live',
  signal?: AbortSignal,
): Promise<Profile> {
  const what = samples === 'live' ? 'live bytes' : 'bytes allocated since sampling started, freed ones included';
  return heapStacksToPprof(
    await heapStacks(profile, signal),
    intervalBytes,
    [`V8 sampling heap profiler, mean sampling interval ${intervalBytes} bytes; values are ${what}, estimated from samples`],
    samples,
    signal,
  );
}

/**
 * Builds an `inuse_space` (live) or `alloc_space` (allocations) profile from stacks: a snapshot's,
 * or a delta's, whose live bytes may be negative. `signal` stops it as in {@link heapStacks}.
 */
export async function heapStacksToPprof(
  stacks: HeapStack[],
  intervalBytes: number,
  comments: string[],
  samples: HeapSamples = 'live',
  signal?: AbortSignal,
): Promise<Profile> {
  const tick = cooperativeTicker(5, 8, signal);
  const builder = new PprofBuilder();
  const built = [];
  for (const stack of stacks) {
    built.push({ locationIds: stack.frames.map((frame) => builder.frameLocation(frame)), values: [stack.bytes] });
    const pause = tick();
    if (pause) await pause;
  }
  return builder.build({
    sampleTypes: [{ type: samples === 'live' ? 'inuse_space' : 'alloc_space', unit: 'bytes' }],
    samples: built,
    periodType: { type: 'space', unit: 'bytes' },
    period: intervalBytes,
    timeMs: Date.now(),
    comments,
  });
}

function stackKey(frames: V8CallFrame[]): string {
  return frames.map((f) => `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`).join('\u0001');
}

/**
 * Go's delta heap profile: what changed per allocating stack between two snapshots, `after` minus
 * `before`. Bytes freed since `before` come out negative, as `go tool pprof` shows them; stacks that
 * did not change are left out.
 */
export function heapDelta(before: HeapStack[], after: HeapStack[]): HeapStack[] {
  const deltas = new Map<string, HeapStack>();
  for (const stack of after) deltas.set(stackKey(stack.frames), { bytes: stack.bytes, frames: stack.frames });
  for (const stack of before) {
    const key = stackKey(stack.frames);
    const found = deltas.get(key);
    if (found) found.bytes -= stack.bytes;
    else deltas.set(key, { bytes: -stack.bytes, frames: stack.frames });
  }
  return [...deltas.values()].filter((s) => s.bytes !== 0);
}

/** One frame as `name (file:line)`, for the text forms. */
export function describeFrame(frame: V8CallFrame): string {
  const file = fileNameOf(frame.url);
  if (!file) return functionNameOf(frame);
  return `${functionNameOf(frame)} (${file}:${frame.lineNumber + 1}:${frame.columnNumber + 1})`;
}
