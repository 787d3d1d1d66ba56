import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isProfiling } from '../../lib/pprof';
import type { V8CpuProfile } from '../../lib/pprof/v8-shapes';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { PROFILER_BACKENDS, decodePprof, functionNames, sampleTypes, startPprofServer, totalFor, type PprofServer } from './helpers';
import { startBusyLoop } from './fixtures/workload';

const WORKLOAD = join(__dirname, 'fixtures', 'workload.js');
// 0-based, as V8 and DevTools count lines.
const BUSY_LINE = readFileSync(WORKLOAD, 'utf8')
  .split('\n')
  .findIndex((line) => line.startsWith('function busyFibonacciForProfile('));

/** The addon's registry of stopped profiles; every profile we take must be deleted from it. */
function addonRegistry(): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the optional addon, loaded only where its tests run
  return Object.keys((require('v8-profiler-next') as { profiles: Record<string, unknown> }).profiles);
}

/** Starts a CPU profile request and returns a way to hang up on it and its eventual response. */
function startProfileRequest(url: string): { hangUp(): void; response: Promise<number | 'aborted'> } {
  const controller = new AbortController();
  const response = request(url, { signal: controller.signal, timeoutMs: 70_000 }).then(
    (res) => res.status,
    () => 'aborted' as const,
  );
  return { hangUp: () => controller.abort(), response };
}

let stopBusy: () => void;
beforeAll(() => {
  stopBusy = startBusyLoop();
});
afterAll(() => stopBusy());

describe.each(PROFILER_BACKENDS)('CPU profile with the %s backend', (backend) => {
  let pprof: PprofServer;
  beforeEach(async () => {
    // 1 ms: many samples in a 1 s profile, so the busy function shows up even on a loaded machine.
    pprof = await startPprofServer({ profiler: backend, heapSamplingIntervalBytes: false, cpuSamplingIntervalMicros: 1000 });
  });
  afterEach(async () => {
    await pprof.close();
    expect(isProfiling()).toBe(false);
  });

  it('uses the forced backend', () => {
    expect(pprof.router.backend).toBe(backend);
    expect(pprof.router.backendReason).toBe(
      `forced by option profiler: '${backend}'${backend === 'v8-profiler-next' ? '; native addon loaded' : ''}`,
    );
  });

  it('serves a gzipped pprof profile in which the busy function has samples and CPU time', async () => {
    const res = await request(`${pprof.base}/profile?seconds=1`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe('attachment; filename="profile.pb.gz"');
    const profile = decodePprof(res.body);
    expect(sampleTypes(profile)).toEqual(['samples/count', 'cpu/nanoseconds']);
    expect(Number(profile.period)).toBe(1_000_000);
    expect(Number(profile.durationNanos)).toBeGreaterThan(0);
    expect(Number(profile.timeNanos)).toBeGreaterThan(0);
    expect(profile.sample.length).toBeGreaterThan(0);
    expect(functionNames(profile)).toContain('busyFibonacciForProfile');
    expect(totalFor(profile, 'busyFibonacciForProfile', 0)).toBeGreaterThan(0);
    expect(totalFor(profile, 'busyFibonacciForProfile', 1)).toBeGreaterThan(0);
    if (backend === 'v8-profiler-next') expect(addonRegistry()).toEqual([]);
  });

  it('serves the DevTools .cpuprofile shape with 0-based lines and string script ids', async () => {
    const res = await request(`${pprof.base}/profile?seconds=1&format=cpuprofile`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="profile.cpuprofile"');
    const profile = res.json<V8CpuProfile>();
    expect(Object.keys(profile).sort()).toEqual(['endTime', 'nodes', 'samples', 'startTime', 'timeDeltas']);
    expect(profile.samples.length).toBe(profile.timeDeltas.length);
    expect(profile.endTime).toBeGreaterThan(profile.startTime);
    expect(profile.nodes[0].callFrame.functionName).toBe('(root)');
    const busy = profile.nodes.find((n) => n.callFrame.functionName === 'busyFibonacciForProfile');
    expect(busy?.callFrame).toMatchObject({ url: pathToFileURL(WORKLOAD).href, lineNumber: BUSY_LINE });
    expect(typeof busy?.callFrame.scriptId).toBe('string');
    const ids = new Set(profile.nodes.map((n) => n.id));
    expect(profile.samples.every((id) => ids.has(id))).toBe(true);
  });

  it('answers 503 with Retry-After and a JSON body while another CPU profile runs, and the running one stays whole', async () => {
    // Two continuous profilers, or a scraper and an operator: the second is told when to come back.
    const first = request(`${pprof.base}/profile?seconds=3`, { timeoutMs: 15_000 });
    await eventually(isProfiling, { what: 'the profile to start' });
    const second = await request(`${pprof.base}/profile?seconds=14`);
    expect(second.status).toBe(503);
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    expect(String(second.json().error)).toMatch(/already being recorded.*only one runs at a time, retry after it finishes/);
    expect(Number(second.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(second.headers['retry-after'])).toBeLessThanOrEqual(3);
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.headers['content-type']).toBe('application/octet-stream');
    const profile = decodePprof(done.body);
    expect(sampleTypes(profile)).toEqual(['samples/count', 'cpu/nanoseconds']);
    expect(Number(profile.durationNanos)).toBeGreaterThanOrEqual(2.9e9);
  });

  it('stops the profile at once when the client hangs up, leaving nothing behind', async () => {
    const profile = startProfileRequest(`${pprof.base}/profile?seconds=60`);
    await eventually(isProfiling, { what: 'the profile to start' });
    profile.hangUp();
    expect(await profile.response).toBe('aborted');
    // Without the cancel, this would stay true for 60 s.
    await eventually(() => !isProfiling(), { what: 'the profile to stop' });
    if (backend === 'v8-profiler-next') expect(addonRegistry()).toEqual([]);
    const next = await request(`${pprof.base}/profile?seconds=1`);
    expect(next.status).toBe(200);
  });

  it('close() cancels a running profile, answers 503 and refuses later requests', async () => {
    const profile = startProfileRequest(`${pprof.base}/profile?seconds=60`);
    await eventually(isProfiling, { what: 'the profile to start' });
    await pprof.router.close();
    expect(isProfiling()).toBe(false);
    expect(await profile.response).toBe(503);
    const after = await request(`${pprof.base}/goroutine`);
    expect(after.status).toBe(503);
    expect(after.json()).toEqual({ error: 'the pprof router has been closed' });
  });
});

describe.each(PROFILER_BACKENDS)('CPU sampling interval with the %s backend', (backend) => {
  async function profileWith(options: { cpuSamplingIntervalMicros?: number }, format: 'pprof' | 'cpuprofile'): Promise<Buffer> {
    const pprof = await startPprofServer({ profiler: backend, heapSamplingIntervalBytes: false, ...options });
    try {
      const res = await request(`${pprof.base}/profile?seconds=1${format === 'cpuprofile' ? '&format=cpuprofile' : ''}`);
      expect(res.status).toBe(200);
      return res.body;
    } finally {
      await pprof.close();
    }
  }

  it('samples at 100 Hz by default: the pprof period is 10 ms in nanoseconds', async () => {
    const profile = decodePprof(await profileWith({}, 'pprof'));
    expect(sampleTypes(profile)).toEqual(['samples/count', 'cpu/nanoseconds']);
    expect(Number(profile.period)).toBe(10_000_000);
    expect(functionNames(profile)).toContain('busyFibonacciForProfile');
  });

  it('uses cpuSamplingIntervalMicros for the period', async () => {
    const profile = decodePprof(await profileWith({ cpuSamplingIntervalMicros: 2500 }, 'pprof'));
    expect(Number(profile.period)).toBe(2_500_000);
  });

  it('hands the interval to V8: a 1 s profile at 50 ms holds about 20 samples, not the ~1000 of V8s 1 ms default', async () => {
    const profile = JSON.parse((await profileWith({ cpuSamplingIntervalMicros: 50_000 }, 'cpuprofile')).toString('utf8')) as V8CpuProfile;
    // A count, not a time: a loaded machine can only take fewer samples, never more.
    expect(profile.samples.length).toBeGreaterThan(0);
    expect(profile.samples.length).toBeLessThan(100);
  });
});
