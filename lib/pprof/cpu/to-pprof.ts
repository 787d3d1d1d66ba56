import type { Profile } from 'pprof-format';
import { cooperativeTicker } from '../../util/cooperative';
import { PprofBuilder } from '../pprof-builder';
import type { V8CpuProfile, V8CpuProfileNode } from '../v8-shapes';
import { AMBIGUOUS, labelSamples, type LabelSegment, type LabelSpan, type SampleLabelling } from './sample-labels';

// V8's synthetic frames: the tree root is not a function, and idle time is not CPU time (Go's CPU
// profile only counts on-CPU time, so idle samples would mislead `go tool pprof -top`).
const ROOT = '(root)';
const IDLE = '(idle)';

/** Inputs besides the V8 profile. */
export interface CpuConversion {
  /** Wall-clock start, ms since the epoch. */
  startedAtMs: number;
  /** The sampling interval the profile was recorded with, µs. */
  samplingIntervalMicros: number;
  /** Aborting it (the client went away) stops the conversion at its next yield, rejecting with the reason. */
  signal?: AbortSignal;
  /**
   * Spans whose samples carry their labels (reconciliation cycles, on the profile's clock): see
   * {@link labelSamples}. A comment says how many samples were labelled and how many were left
   * unlabelled because concurrent cycles overlapped outside every segment.
   */
  spans?: readonly LabelSpan[];
  /** The spans' synchronous segments, which place samples where spans overlap. */
  segments?: readonly LabelSegment[];
}

/**
 * Converts a V8 CPU profile to pprof with sample types `samples/count` and `cpu/nanoseconds`.
 * Each sample is charged the time until the next sample (as DevTools does), so totals add up to
 * the profile's duration minus idle time. Loops yield after a few milliseconds of work: a 300 s
 * profile at 1 ms has ~300k samples, which would otherwise hold the event loop for tens of
 * milliseconds.
 */
export async function cpuProfileToPprof(v8: V8CpuProfile, conversion: CpuConversion): Promise<Profile> {
  const tick = cooperativeTicker(5, 8, conversion.signal);
  const byId = new Map<number, V8CpuProfileNode>();
  const parentOf = new Map<number, number>();
  for (const node of v8.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }

  const spans = conversion.spans ?? [];
  const labelling = labelSamples(v8, spans, conversion.segments);
  const { spanOf } = labelling;
  // Samples are grouped by tree node and span: key = node id * (spans + 1) + span index + 1.
  const stride = spans.length + 1;
  const counts = new Map<number, number>();
  const nanos = new Map<number, number>();
  let timestamp = v8.startTime;
  for (let i = 0; i < v8.samples.length; i += 1) {
    timestamp += v8.timeDeltas[i] ?? 0;
    const next = i + 1 < v8.samples.length ? timestamp + (v8.timeDeltas[i + 1] ?? 0) : v8.endTime;
    const id = v8.samples[i] ?? 0;
    const key = id * stride + Math.max(-1, spanOf[i] ?? -1) + 1;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    // V8 occasionally records timestamps slightly out of order; never charge negative time.
    nanos.set(key, (nanos.get(key) ?? 0) + Math.max(0, next - timestamp) * 1000);
    const pause = tick();
    if (pause) await pause;
  }

  const builder = new PprofBuilder();
  // A tree node is one frame at one call site: its location is the same in every stack through it.
  const locationOf = new Map<number, number>();
  const samples = [];
  for (const [key, count] of counts) {
    const id = Math.floor(key / stride);
    const span = spans[(key % stride) - 1];
    const leaf = byId.get(id);
    if (!leaf || leaf.callFrame.functionName === IDLE || leaf.callFrame.functionName === ROOT) continue;
    const locationIds: number[] = [];
    for (let node: V8CpuProfileNode | undefined = leaf; node && node.callFrame.functionName !== ROOT;) {
      let location = locationOf.get(node.id);
      if (location === undefined) {
        location = builder.frameLocation(node.callFrame);
        locationOf.set(node.id, location);
      }
      locationIds.push(location);
      const parent = parentOf.get(node.id);
      node = parent === undefined ? undefined : byId.get(parent);
    }
    const labels = span ? Object.entries(span.labels).map(([k, str]) => ({ key: k, str })) : undefined;
    samples.push({ locationIds, values: [count, Math.round(nanos.get(key) ?? 0)], ...(labels ? { labels } : {}) });
    const pause = tick();
    if (pause) await pause;
  }

  return builder.build({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    samples,
    periodType: { type: 'cpu', unit: 'nanoseconds' },
    period: conversion.samplingIntervalMicros * 1000,
    timeMs: conversion.startedAtMs,
    durationNanos: Math.max(0, v8.endTime - v8.startTime) * 1000,
    ...(spans.length > 0 ? { comments: [labellingComment(v8, labelling)] } : {}),
  });
}

/** What `go tool pprof -comments` says about the labels: on-CPU samples labelled, and left unlabelled for overlapping cycles. */
function labellingComment(v8: V8CpuProfile, { spanOf, bySegmentOf }: SampleLabelling): string {
  const idle = new Set<number>();
  for (const node of v8.nodes) if (node.callFrame.functionName === IDLE || node.callFrame.functionName === ROOT) idle.add(node.id);
  let onCpu = 0;
  let labelled = 0;
  let ambiguous = 0;
  let bySegment = 0;
  for (let i = 0; i < v8.samples.length; i += 1) {
    if (idle.has(v8.samples[i] ?? 0)) continue;
    onCpu += 1;
    const span = spanOf[i] ?? -1;
    bySegment += bySegmentOf[i] ?? 0;
    if (span >= 0) labelled += 1;
    else if (span === AMBIGUOUS) ambiguous += 1;
  }
  return `cycle labels: ${labelled} of ${onCpu} on-CPU samples labelled by reconciliation cycle (${bySegment} placed by the segments of a cycle's own code); ${ambiguous} left unlabelled because concurrent cycles overlapped outside their segments`;
}
