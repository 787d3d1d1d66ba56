/**
 * A profile's conversion (V8's heap or CPU profile into pprof, its text form, its encoding) stops
 * when the client that asked for it goes away: counted in steps of the slicer, which every
 * conversion loop goes through.
 */
import { createPprofRouter } from '../../lib/pprof';
import * as session from '../../lib/pprof/cpu/session';
import * as sampler from '../../lib/pprof/heap/sampler';
import type { V8CpuProfile, V8CpuProfileNode, V8SamplingHeapNode, V8SamplingHeapProfile } from '../../lib/pprof/v8-shapes';
import * as cooperative from '../../lib/util/cooperative';
import { closingApp, leaveWhen, quietFor } from '../helpers/client-gone';
import { closeAllListening, listen } from '../helpers/http';

afterEach(closeAllListening);

/** Steps of every sliced loop (conversions, encodings) since the test began: work done. */
let steps = 0;
beforeEach(() => {
  steps = 0;
  const ticker = cooperative.cooperativeTicker;
  jest.spyOn(cooperative, 'cooperativeTicker').mockImplementation((...args) => {
    const tick = ticker(...args);
    return () => {
      steps += 1;
      return tick();
    };
  });
});
afterEach(() => jest.restoreAllMocks());

const frame = (i: number): V8SamplingHeapNode['callFrame'] => ({
  functionName: `hostFunction${i}`,
  scriptId: '1',
  url: 'file:///srv/app/host.js',
  lineNumber: i,
  columnNumber: 0,
});

/** A heap profile of `stacks` allocating stacks, each a few frames deep: its conversion takes many slices. */
function largeHeapProfile(stacks: number): V8SamplingHeapProfile {
  const leaf = (i: number): V8SamplingHeapNode => ({ callFrame: frame(i), selfSize: 4096, children: [] });
  const groups: V8SamplingHeapNode[] = [];
  for (let g = 0; g < 100; g++) {
    groups.push({
      callFrame: frame(1_000_000 + g),
      selfSize: 0,
      children: Array.from({ length: stacks / 100 }, (_, i) => leaf(g * (stacks / 100) + i)),
    });
  }
  return { head: { callFrame: { ...frame(0), functionName: '(root)', url: '' }, selfSize: 0, children: groups } };
}

/** A CPU profile of `samples` samples over `functions` functions under the root. */
function largeCpuProfile(samples: number, functions: number): V8CpuProfile {
  const nodes: V8CpuProfileNode[] = [{ id: 1, callFrame: { ...frame(0), functionName: '(root)', url: '' }, hitCount: 0, children: [] }];
  for (let i = 0; i < functions; i++) {
    nodes.push({ id: i + 2, callFrame: frame(i), hitCount: 0 });
    nodes[0]!.children!.push(i + 2);
  }
  return {
    nodes,
    startTime: 0,
    endTime: samples * 1000,
    samples: Array.from({ length: samples }, (_, i) => 2 + (i % functions)),
    timeDeltas: Array.from({ length: samples }, () => 1000),
  };
}

/** The pprof router, its heap sampler answering `heap`, behind an app that counts closes. */
async function serve(
  heap: V8SamplingHeapProfile,
): Promise<{ origin: string; served: ReturnType<typeof closingApp>; close(): Promise<void> }> {
  const acquire = sampler.acquireHeapSampler;
  jest.spyOn(sampler, 'acquireHeapSampler').mockImplementation((...args) => ({ ...acquire(...args), profile: async () => heap }));
  const router = createPprofRouter(undefined, { profiler: 'inspector', heapSamplingIntervalBytes: 64 * 1024 });
  const served = closingApp(router);
  const { origin } = await listen(served.app);
  // The router converts a tiny profile once after creation, to warm the code: not this request's work.
  await quietFor(100);
  return { origin, served, close: () => router.close() };
}

describe('a client that leaves stops the conversion of its profile', () => {
  it.each([
    ['/heap as pprof', '/heap'],
    ['/heap as text (debug=1)', '/heap?debug=1'],
  ])('%s: no step runs after the close', async (_label, path) => {
    const pprof = await serve(largeHeapProfile(200_000));
    try {
      const begun = steps;
      await leaveWhen(`${pprof.origin}${path}`, () => steps > begun + 100, pprof.served);
      const atClose = steps;
      await quietFor(150);
      expect(steps).toBe(atClose);
    } finally {
      await pprof.close();
    }
  });

  it('/profile: converting and encoding the recorded CPU profile stops: no step runs after the close', async () => {
    jest.spyOn(session, 'recordCpuProfile').mockImplementation(async () => ({
      profile: largeCpuProfile(600_000, 50_000),
      startedAtMs: Date.now(),
      samplingIntervalMicros: 1000,
    }));
    const pprof = await serve(largeHeapProfile(100));
    try {
      const begun = steps;
      await leaveWhen(`${pprof.origin}/profile?seconds=1`, () => steps > begun + 100, pprof.served);
      const atClose = steps;
      await quietFor(150);
      expect(steps).toBe(atClose);
    } finally {
      await pprof.close();
    }
  });
});
