import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { addonWarmState, keepAddonWarm, type AddonProfilerLifetime } from '../../../lib/pprof/cpu/addon-warm';
import { createAddonCpuBackend, type V8ProfilerAddon } from '../../../lib/pprof/cpu/addon';
import { ROOT, describeWithAddon, transpileLib } from '../helpers';

const run = promisify(execFile);

/** Records the calls the code makes, in order, as `name(args)`. */
function fakeAddon(failStart = false): AddonProfilerLifetime & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    setProfilesCleanupLimit(limit: number): void {
      calls.push(`setProfilesCleanupLimit(${limit})`);
    },
    startProfiling(name: string, recordSamples: boolean, mode?: 0 | 1): void {
      calls.push(`startProfiling(${name.replace(/-\d+$/, '')}, ${String(recordSamples)}, ${String(mode)})`);
      if (failStart) throw new Error('no profiler in this isolate');
    },
    stopProfiling(name: string): { delete(): void } {
      calls.push(`stopProfiling(${name.replace(/-\d+$/, '')})`);
      return { delete: () => calls.push('delete()') };
    },
  };
}

describe('keepAddonWarm', () => {
  it('creates the profiler eagerly at the first lease and disposes of it at the last release', () => {
    const addon = fakeAddon();
    const first = keepAddonWarm(addon);
    const second = keepAddonWarm(addon);
    expect(addon.calls).toEqual([
      `setProfilesCleanupLimit(${2 ** 31 - 1})`,
      'startProfiling(controller-introspection-warm-up, false, 1)',
      'stopProfiling(controller-introspection-warm-up)',
      'delete()',
    ]);
    expect(addonWarmState()).toEqual({ warm: true });
    first();
    first();
    expect(addon.calls).toHaveLength(4);
    second();
    expect(addon.calls.slice(4)).toEqual([
      'setProfilesCleanupLimit(0)',
      'startProfiling(controller-introspection-dispose, false, 1)',
      'stopProfiling(controller-introspection-dispose)',
      'delete()',
    ]);
    expect(addonWarmState()).toEqual({ warm: false });
  });

  it('never throws when the addon fails, and says why the profiler is not warm', () => {
    const addon = fakeAddon(true);
    const release = keepAddonWarm(addon);
    expect(addonWarmState()).toEqual({ warm: false, error: 'no profiler in this isolate' });
    expect(() => release()).not.toThrow();
  });
});

describeWithAddon('the v8-profiler-next backend', () => {
  it('starts every profile in eager-logging mode and tells the index what a start costs', async () => {
    const calls: string[] = [];
    const addon: V8ProfilerAddon = {
      ...fakeAddon(),
      setGenerateType: (type) => void calls.push(`setGenerateType(${type})`),
      setSamplingInterval: (micros) => void calls.push(`setSamplingInterval(${micros})`),
      startProfiling: (_name, recordSamples, mode) => void calls.push(`startProfiling(${String(recordSamples)}, ${String(mode)})`),
      stopProfiling: () => ({ nodes: [], startTime: 0, endTime: 1, samples: [], timeDeltas: [], delete: () => undefined }),
      profiles: {},
    };
    const backend = createAddonCpuBackend(addon);
    expect(backend.startCost).toMatch(/^no router holds the profiler warm; each start blocks the event loop while V8 walks the heap/);
    const release = backend.keepWarm();
    expect(calls).toEqual(['startProfiling(false, 1)']);
    calls.length = 0;
    expect(backend.startCost).toBe("starting a profile does not block: V8's code log is kept from router creation on (eager logging)");
    const run = await backend.start(2500);
    expect(calls).toEqual(['setSamplingInterval(2500)', 'startProfiling(true, 1)']);
    await run.stop();
    release();
  });
});

// Run with V8_PROFILER_DEBUG set, the addon prints when it creates V8's profiler (and in which
// logging mode) and when it disposes of it; counting those lines shows what a heap walk costs
// would otherwise hide. A control at the end (the addon used bare, lazily) proves the lines count.
const HOST = join(__dirname, '..', 'fixtures', 'addon-warm-host.js');

describeWithAddon('V8 profiler lifetime under a real router (child process, V8_PROFILER_DEBUG)', () => {
  let work: string | undefined;
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('creates one eager profiler for the warm-up and every profile, and disposes of it at close()', async () => {
    work = mkdtempSync(join(tmpdir(), 'pprof-warm-'));
    transpileLib(work);
    const { stdout } = await run(process.execPath, [HOST, join(work, 'lib', 'pprof', 'index.js')], {
      cwd: work,
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), V8_PROFILER_DEBUG: '1', CONTROLLER_INTROSPECTION_PROFILER: '' },
      timeout: 50_000,
    });
    const resultLine = stdout.split('\n').find((line) => line.startsWith('RESULT ')) ?? 'RESULT {}';
    const result = JSON.parse(resultLine.slice('RESULT '.length)) as { statuses: number[]; startCost: string };
    expect(result.statuses).toEqual([200, 200, 200]);
    expect(result.startCost).toMatch(/^starting a profile does not block/);

    const count = (pattern: RegExp): number => stdout.split('\n').filter((line) => pattern.test(line)).length;
    // Router: one profiler, created in eager mode, for the warm-up and three profiles. Control:
    // two bare profiles, each creating (lazily) and disposing of its own profiler.
    expect(count(/^\[thread \d+\] cpuprofiler using loggingMode: 1$/)).toBe(1);
    expect(count(/^\[thread \d+\] cpuprofiler using loggingMode: 0$/)).toBe(2);
    // Kept: after the warm-up and after each of the three profiles.
    expect(count(/^\[thread \d+\] not clear cpuprofiler: /)).toBe(4);
    // Disposed: once by close(), then once per control profile.
    expect(count(/^\[thread \d+\] clear cpuprofiler: /)).toBe(3);
  });
});
