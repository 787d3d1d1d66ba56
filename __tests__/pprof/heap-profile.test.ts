import { readFileSync } from 'node:fs';
import { v8HeapSampling } from '../helpers/heap-sampling';
import type { V8SamplingHeapNode, V8SamplingHeapProfile } from '../../lib/pprof/v8-shapes';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import * as toPprof from '../../lib/pprof/heap/to-pprof';
import { decodePprof, functionNames, sampleTypes, startPprofServer, totalFor, type PprofServer } from './helpers';
import { releaseRetained, retainForHeapProfile } from './fixtures/workload';

// Small interval so that a few MB give hundreds of samples: the assertions below are then certain,
// not statistical.
const INTERVAL = 16 * 1024;

function selfSizeOf(node: V8SamplingHeapNode, name: string): number {
  const own = node.callFrame.functionName === name ? node.selfSize : 0;
  return node.children.reduce((sum, child) => sum + selfSizeOf(child, name), own);
}

describe('heap profile', () => {
  let pprof: PprofServer;
  beforeEach(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL });
  });
  afterEach(async () => {
    releaseRetained();
    await pprof.close();
    expect(await v8HeapSampling()).toBe(false);
  });

  it('serves the live heap as gzipped pprof in which the retaining function holds bytes', async () => {
    retainForHeapProfile(4);
    const res = await request(`${pprof.base}/heap`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe('attachment; filename="heap.pb.gz"');
    const profile = decodePprof(res.body);
    expect(sampleTypes(profile)).toEqual(['inuse_space/bytes']);
    expect(Number(profile.period)).toBe(INTERVAL);
    expect(functionNames(profile)).toContain('retainForHeapProfile');
    expect(totalFor(profile, 'retainForHeapProfile', 0)).toBeGreaterThan(0);
  });

  it('gc=1 collects garbage first: released objects disappear, retained ones stay', async () => {
    retainForHeapProfile(4);
    const whileRetained = decodePprof((await request(`${pprof.base}/heap?gc=1`)).body);
    const retainedBytes = totalFor(whileRetained, 'retainForHeapProfile', 0);
    expect(retainedBytes).toBeGreaterThan(2 * 1024 * 1024);
    releaseRetained();
    const afterRelease = decodePprof((await request(`${pprof.base}/heap?gc=1`)).body);
    // Without a forced collection in the read itself (the @datadog/pprof reader), V8 can drop the
    // last few samples of collected objects in a later task: at most ~1 % of what was released.
    expect(totalFor(afterRelease, 'retainForHeapProfile', 0)).toBeLessThan(retainedBytes * 0.02);
  });

  it('heap?seconds=N is a delta: bytes retained during the window count, bytes released come out negative', async () => {
    // The window begins once the first snapshot is taken (after a full GC, so not at a fixed time
    // under load): the handler converts it at once, which is the signal waited for.
    const converted = jest.spyOn(toPprof, 'heapStacks');
    const windowBegun = async (): Promise<void> => {
      const calls = converted.mock.calls.length;
      await eventually(() => converted.mock.calls.length > calls, {
        timeoutMs: 20_000,
        intervalMs: 5,
        what: 'the first snapshot of the window',
      });
    };
    const grown = request(`${pprof.base}/heap?seconds=1&gc=1`);
    await windowBegun();
    retainForHeapProfile(4);
    const growth = decodePprof((await grown).body);
    expect(sampleTypes(growth)).toEqual(['inuse_space/bytes']);
    expect(totalFor(growth, 'retainForHeapProfile', 0)).toBeGreaterThan(2 * 1024 * 1024);

    const shrunk = request(`${pprof.base}/heap?seconds=1&gc=1`);
    await windowBegun();
    converted.mockRestore();
    releaseRetained();
    const release = decodePprof((await shrunk).body);
    expect(totalFor(release, 'retainForHeapProfile', 0)).toBeLessThan(-2 * 1024 * 1024);
    const text = (await request(`${pprof.base}/heap?seconds=1&debug=1`)).body.toString();
    expect(text).toMatch(/^heap profile: [+-]?\d+ bytes in use over 1 s/);
  });

  it('a delta heap profile stops when the client leaves', async () => {
    const controller = new AbortController();
    const pending = request(`${pprof.base}/heap?seconds=10`, { signal: controller.signal, timeoutMs: 15_000 }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    await pending;
    const started = Date.now();
    // close() waits for in-flight work: it must not wait out the 10 s window.
    await pprof.close();
    expect(Date.now() - started).toBeLessThan(8000);
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL });
  });

  it('serves the DevTools .heapprofile shape', async () => {
    retainForHeapProfile(2);
    const res = await request(`${pprof.base}/heap?format=heapprofile`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="heap.heapprofile"');
    const profile = res.json<V8SamplingHeapProfile>();
    expect(profile.head.callFrame.functionName).toBe('(root)');
    expect(Array.isArray(profile.head.children)).toBe(true);
    expect(selfSizeOf(profile.head, 'retainForHeapProfile')).toBeGreaterThan(0);
  });

  it('debug=1 answers readable text with the stacks and V8 heap statistics', async () => {
    retainForHeapProfile(2);
    const res = await request(`${pprof.base}/heap?debug=1`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const text = res.body.toString('utf8');
    expect(text).toMatch(/^heap profile: \d+ bytes in use \(estimated\) in \d+ stacks @ sampling interval 16384 bytes\n/);
    expect(text).toMatch(/\n\d+ bytes @ retainForHeapProfile \(.*workload\.js:\d+:\d+\)\n/);
    expect(text).toContain('# v8.getHeapStatistics()');
    expect(text).toMatch(/# used_heap_size = \d+/);
  });
});

describe.each(['@datadog/pprof', 'inspector'] as const)('heap profile read by %s', (heapProfiler) => {
  let pprof: PprofServer;
  beforeEach(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL, heapProfiler });
  });
  afterEach(async () => {
    releaseRetained();
    await pprof.close();
    expect(await v8HeapSampling()).toBe(false);
  });

  it('serves the live heap in both formats and says who read it', async () => {
    retainForHeapProfile(4);
    const pprofAnswer = decodePprof((await request(`${pprof.base}/heap`)).body);
    expect(totalFor(pprofAnswer, 'retainForHeapProfile', 0)).toBeGreaterThan(0);
    const devtools = (await request(`${pprof.base}/heap?format=heapprofile`)).json<V8SamplingHeapProfile>();
    expect(selfSizeOf(devtools.head, 'retainForHeapProfile')).toBeGreaterThan(0);
    // 0-based lines, as DevTools expects, whichever library read the profile.
    const frames: V8SamplingHeapNode[] = [];
    const walk = (node: V8SamplingHeapNode): void => {
      if (node.callFrame.functionName === 'retainForHeapProfile') frames.push(node);
      node.children.forEach(walk);
    };
    walk(devtools.head);
    expect(frames[0]!.callFrame.url).toMatch(/workload\.js$/);
    const fixture = readFileSync(require.resolve('./fixtures/workload.js'), 'utf8').split('\n');
    expect(fixture[frames[0]!.callFrame.lineNumber]).toMatch(/function retainForHeapProfile/);
    expect((await request(`${pprof.base}/?format=json`)).json().heap).toEqual({
      sampling: true,
      intervalBytes: INTERVAL,
      samples: 'live',
      reader: heapProfiler,
      readerReason: `forced by option heapProfiler: '${heapProfiler}'`,
    });
  });

  it('gc=1 really collects first: released objects still sampled by a plain read are gone after it', async () => {
    retainForHeapProfile(4);
    releaseRetained();
    const plain = decodePprof((await request(`${pprof.base}/heap`)).body);
    const collected = decodePprof((await request(`${pprof.base}/heap?gc=1`)).body);
    // ?gc=1 collected what was released (a few samples may linger a task longer: see above).
    expect(totalFor(collected, 'retainForHeapProfile', 0)).toBeLessThan(4 * 1024 * 1024 * 0.02);
    if (heapProfiler === '@datadog/pprof') {
      // Nothing forced a collection between release and the plain read: the garbage was still there.
      expect(totalFor(plain, 'retainForHeapProfile', 0)).toBeGreaterThan(2 * 1024 * 1024);
    } else {
      // The inspector's reader forces a full GC on every read: the plain read already lost it.
      expect(totalFor(plain, 'retainForHeapProfile', 0)).toBeLessThan(4 * 1024 * 1024 * 0.02);
    }
  });
});

describe('allocs profile', () => {
  // Allocates and drops: nothing stays live, so only an allocation profile can show it.
  function churnForAllocsProfile(megabytes: number): number {
    let last = 0;
    for (let i = 0; i < megabytes * 16; i++) last = new Array<number>(8192).fill(i).length;
    return last;
  }

  it("with heapSamples: 'allocations', /allocs shows freed allocations as alloc_space, and /heap says why it is not there", async () => {
    const pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL, heapSamples: 'allocations' });
    try {
      churnForAllocsProfile(8);
      const res = await request(`${pprof.base}/allocs?gc=1`);
      expect(res.status).toBe(200);
      expect(res.headers['content-disposition']).toBe('attachment; filename="allocs.pb.gz"');
      const profile = decodePprof(res.body);
      expect(sampleTypes(profile)).toEqual(['alloc_space/bytes']);
      expect(totalFor(profile, 'churnForAllocsProfile', 0)).toBeGreaterThan(4 * 1024 * 1024);

      const window = request(`${pprof.base}/allocs?seconds=1`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      churnForAllocsProfile(4);
      const delta = decodePprof((await window).body);
      expect(totalFor(delta, 'churnForAllocsProfile', 0)).toBeGreaterThan(2 * 1024 * 1024);
      expect(totalFor(delta, 'churnForAllocsProfile', 0)).toBeLessThan(totalFor(profile, 'churnForAllocsProfile', 0));
      expect((await request(`${pprof.base}/allocs?debug=1`)).body.toString()).toMatch(
        /^allocs profile: \d+ bytes allocated \(estimated\) since sampling started/,
      );

      const heap = await request(`${pprof.base}/heap`);
      expect(heap.status).toBe(404);
      expect(String(heap.json().error)).toMatch(/keeps every allocation .*heapSamples: 'live'/);
      const index = (await request(`${pprof.base}/?format=json`)).json<{ heap: { samples: string } }>();
      expect(index.heap.samples).toBe('allocations');
    } finally {
      await pprof.close();
    }
  });

  it('by default (live samples) /allocs answers 404 saying how to get it', async () => {
    const pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL });
    try {
      const res = await request(`${pprof.base}/allocs`);
      expect(res.status).toBe(404);
      expect(String(res.json().error)).toMatch(/heapSamples: 'allocations'/);
    } finally {
      await pprof.close();
    }
  });
});

describe('heap sampler lifetime', () => {
  it('is shared by routers: the first interval wins and sampling stops with the last close()', async () => {
    const first = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL });
    const second = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: INTERVAL * 4 });
    try {
      const index = (await request(`${second.base}/?format=json`)).json();
      expect(index.heap).toEqual({
        sampling: true,
        intervalBytes: INTERVAL,
        samples: 'live',
        reader: expect.stringMatching(/^(@datadog\/pprof|inspector)$/),
        readerReason: expect.any(String),
      });
      await first.close();
      expect(await v8HeapSampling()).toBe(true);
      const res = await request(`${second.base}/heap`);
      expect(res.status).toBe(200);
      expect(Number(decodePprof(res.body).period)).toBe(INTERVAL);
    } finally {
      await first.close();
      await second.close();
    }
    expect(await v8HeapSampling()).toBe(false);
  });

  it('heapSamplingIntervalBytes: false starts nothing and /heap answers 404 saying why', async () => {
    const pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false });
    try {
      expect(await v8HeapSampling()).toBe(false);
      const res = await request(`${pprof.base}/heap`);
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ error: 'heap profiling is turned off (option heapSamplingIntervalBytes: false)' });
    } finally {
      await pprof.close();
    }
  });
});
