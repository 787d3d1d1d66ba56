import type { Profile } from 'pprof-format';
import { cooperativeTicker } from '../../util/cooperative';
import { PprofBuilder } from '../pprof-builder';
import type { V8CpuProfile, V8CpuProfileNode } from '../v8-shapes';

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

  const counts = new Map<number, number>();
  const nanos = new Map<number, number>();
  let timestamp = v8.startTime;
  for (let i = 0; i < v8.samples.length; i += 1) {
    timestamp += v8.timeDeltas[i] ?? 0;
    const next = i + 1 < v8.samples.length ? timestamp + (v8.timeDeltas[i + 1] ?? 0) : v8.endTime;
    const id = v8.samples[i];
    counts.set(id, (counts.get(id) ?? 0) + 1);
    // V8 occasionally records timestamps slightly out of order; never charge negative time.
    nanos.set(id, (nanos.get(id) ?? 0) + Math.max(0, next - timestamp) * 1000);
    const pause = tick();
    if (pause) await pause;
  }

  const builder = new PprofBuilder();
  // A tree node is one frame at one call site: its location is the same in every stack through it.
  const locationOf = new Map<number, number>();
  const samples = [];
  for (const [id, count] of counts) {
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
    samples.push({ locationIds, values: [count, Math.round(nanos.get(id) ?? 0)] });
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
  });
}
