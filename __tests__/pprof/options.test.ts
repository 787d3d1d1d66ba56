import { PROFILER_ENV, resolvePprofOptions, type PprofOptions } from '../../lib/pprof/options';

describe('resolvePprofOptions', () => {
  it('fills in the defaults', () => {
    expect(resolvePprofOptions(undefined, {})).toEqual({
      maxProfileSeconds: 300,
      defaultProfileSeconds: 30,
      cpuSamplingIntervalMicros: 10_000,
      heapSamplingIntervalBytes: 512 * 1024,
      profiler: 'auto',
      profilerSource: 'default',
      keepCodeLog: true,
      heapProfiler: 'auto',
      heapSamples: 'live',
      sourceMaps: false,
      trace: false,
      cmdlineArgs: [],
    });
    expect(resolvePprofOptions({ keepCodeLog: false }, {}).keepCodeLog).toBe(false);
    expect(() => resolvePprofOptions({ keepCodeLog: 'yes' as unknown as boolean }, {})).toThrow(
      'createPprofRouter: keepCodeLog must be true or false, got "yes"',
    );
  });

  it('keeps valid values and allows turning heap sampling off', () => {
    const resolved = resolvePprofOptions(
      { maxProfileSeconds: 60, defaultProfileSeconds: 5, heapSamplingIntervalBytes: false, profiler: 'inspector' },
      {},
    );
    expect(resolved).toMatchObject({
      maxProfileSeconds: 60,
      defaultProfileSeconds: 5,
      heapSamplingIntervalBytes: false,
      profiler: 'inspector',
      profilerSource: 'option',
    });
  });

  it.each([100, 250, 1000, 1_000_000])('accepts a CPU sampling interval of %d µs', (micros) => {
    expect(resolvePprofOptions({ cpuSamplingIntervalMicros: micros }, {}).cpuSamplingIntervalMicros).toBe(micros);
  });

  it('caps the default CPU profile length at the maximum when only the maximum is given', () => {
    expect(resolvePprofOptions({ maxProfileSeconds: 10 }, {}).defaultProfileSeconds).toBe(10);
  });

  it.each<[PprofOptions, RegExp]>([
    [{ maxProfileSeconds: 0 }, /createPprofRouter: maxProfileSeconds must be an integer from 1 to 3,600, got 0/],
    [{ maxProfileSeconds: 2.5 }, /maxProfileSeconds must be an integer/],
    [{ defaultProfileSeconds: 400 }, /createPprofRouter: defaultProfileSeconds must be an integer from 1 to 300, got 400/],
    [
      { cpuSamplingIntervalMicros: 99 },
      /cpuSamplingIntervalMicros must be an integer from 100 to 1,000,000 \(microseconds between CPU samples; 10000 is 100 Hz\), got 99/,
    ],
    [{ cpuSamplingIntervalMicros: 1_000_001 }, /cpuSamplingIntervalMicros must be an integer from 100 to 1,000,000 .*, got 1000001/],
    [{ cpuSamplingIntervalMicros: 1000.5 }, /cpuSamplingIntervalMicros must be an integer .*, got 1000.5/],
    [{ cpuSamplingIntervalMicros: '1000' as unknown as number }, /cpuSamplingIntervalMicros must be an integer .*, got "1000"/],
    [
      { heapSamplingIntervalBytes: -1 },
      /heapSamplingIntervalBytes must be an integer from 1 to 2,147,483,647 \(or false to turn heap sampling off\), got -1/,
    ],
    [{ heapSamplingIntervalBytes: true as unknown as number }, /heapSamplingIntervalBytes/],
    [{ profiler: 'perf' as unknown as 'auto' }, /createPprofRouter: profiler must be one of auto, v8-profiler-next, inspector, got "perf"/],
    [{ seconds: 3 } as unknown as PprofOptions, /createPprofRouter: unknown option "seconds"; known options: /],
  ])('rejects %j with a TypeError saying how to fix it', (options, message) => {
    expect(() => resolvePprofOptions(options, {})).toThrow(TypeError);
    expect(() => resolvePprofOptions(options, {})).toThrow(message);
  });

  it('lets the environment force a backend when the option is unset or auto', () => {
    expect(resolvePprofOptions({}, { [PROFILER_ENV]: 'inspector' })).toMatchObject({ profiler: 'inspector', profilerSource: 'env' });
    expect(resolvePprofOptions({ profiler: 'auto' }, { [PROFILER_ENV]: 'inspector' })).toMatchObject({
      profiler: 'inspector',
      profilerSource: 'env',
    });
  });

  it('prefers an explicit option over the environment', () => {
    expect(resolvePprofOptions({ profiler: 'v8-profiler-next' }, { [PROFILER_ENV]: 'inspector' })).toMatchObject({
      profiler: 'v8-profiler-next',
      profilerSource: 'option',
    });
  });

  it('rejects an unknown environment value', () => {
    expect(() => resolvePprofOptions({}, { [PROFILER_ENV]: 'perf' })).toThrow(
      /CONTROLLER_INTROSPECTION_PROFILER must be one of auto, v8-profiler-next, inspector/,
    );
  });
});
