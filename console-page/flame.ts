import flamegraph from 'd3-flame-graph';
import { select } from 'd3-selection';
import type { Profile } from 'pprof-format';
import type { LabelledCpuProfile } from '../lib/pprof/cpu/sample-labels';
import { cpuProfileToPprof } from '../lib/pprof/cpu/to-pprof';
import { heapProfileToPprof } from '../lib/pprof/heap/to-pprof';
import { encodeProfile } from '../lib/pprof/pprof-builder';
import type { V8SamplingHeapProfile } from '../lib/pprof/v8-shapes';
import type { ProfileSummary } from './profile-data';

/**
 * Draws a flame graph with d3-flame-graph (click a frame to zoom, click the root to zoom out).
 * Hovered frames are described in `details` as text.
 */
export function drawFlameGraph(
  container: HTMLElement,
  summary: ProfileSummary,
  format: (value: number) => string,
  details: HTMLElement,
): void {
  container.replaceChildren();
  const chart = flamegraph()
    .width(Math.max(320, container.clientWidth - 2))
    .cellHeight(18)
    .minFrameSize(1)
    .selfValue(true)
    .sort(true)
    .transitionDuration(250)
    .title('')
    .label((d) => `${d.data.name}: ${format(d.value)} (${summary.total > 0 ? ((100 * d.value) / summary.total).toFixed(1) : '0'}%)`)
    .setDetailsElement(details);
  select(container).datum(summary.tree).call(chart);
}

// The server's encoder, then the browser's gzip where the server uses Node's zlib.
async function gzipped(profile: Profile): Promise<Blob> {
  const encoded = (await encodeProfile(profile)) as Uint8Array<ArrayBuffer>;
  return new Response(new Blob([encoded]).stream().pipeThrough(new CompressionStream('gzip'))).blob();
}

/** The same pprof the server would have sent, converted here by the server's own converter. */
export async function cpuPprof(profile: LabelledCpuProfile, startedAtMs: number, samplingIntervalMicros: number): Promise<Blob> {
  // The cycles the server sent with the profile label its samples, as in the server's own pprof.
  const spans = profile.cycles ?? [];
  const segments = profile.cycleSegments ?? [];
  return gzipped(await cpuProfileToPprof(profile, { startedAtMs, samplingIntervalMicros, spans, segments }));
}

/** The heap profile as pprof (`inuse_space`), by the server's own converter. */
export async function heapPprof(profile: V8SamplingHeapProfile, intervalBytes: number): Promise<Blob> {
  return gzipped(await heapProfileToPprof(profile, intervalBytes));
}
