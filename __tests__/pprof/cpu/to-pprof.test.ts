import { Profile, type Sample } from 'pprof-format';
import { cpuProfileToPprof } from '../../../lib/pprof/cpu/to-pprof';
import type { V8CallFrame, V8CpuProfile } from '../../../lib/pprof/v8-shapes';
import { functionNames, sampleTypes, stringAt } from '../helpers';

const frame = (functionName: string, url = '', lineNumber = -1, columnNumber = -1): V8CallFrame => ({
  functionName,
  scriptId: '1',
  url,
  lineNumber,
  columnNumber,
});

// (root) → main → { hot, (anonymous) } ; (root) → (idle), (program)
const v8: V8CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), hitCount: 0, children: [2, 5, 6] },
    { id: 2, callFrame: frame('main', 'file:///srv/app.js', 9, 4), hitCount: 1, children: [3, 4] },
    { id: 3, callFrame: frame('hot', 'file:///srv/app.js', 19, 0), hitCount: 2 },
    { id: 4, callFrame: frame('', 'node:internal/timers', 2, 0), hitCount: 1 },
    { id: 5, callFrame: frame('(idle)'), hitCount: 1 },
    { id: 6, callFrame: frame('(program)'), hitCount: 1 },
  ],
  startTime: 1000,
  endTime: 1000 + 100 + 10 + 20 + 30 + 40 + 50 + 60,
  samples: [3, 3, 2, 5, 4, 6],
  // µs since the previous sample; the first is relative to startTime.
  timeDeltas: [100, 10, 20, 30, 40, 50],
};

async function convert(): Promise<Profile> {
  // Encode and decode, so the test sees what a client sees.
  const profile = await cpuProfileToPprof(v8, { startedAtMs: 1_700_000_000_000, samplingIntervalMicros: 1000 });
  return Profile.decode(profile.encode());
}

function nameAt(profile: Profile, locationId: number | bigint): string {
  const location = profile.location.find((l) => l.id === locationId);
  const fn = profile.function.find((f) => f.id === location?.line[0].functionId);
  return fn ? stringAt(profile, fn.name) : '?';
}

function sampleWithLeaf(profile: Profile, leafName: string): Sample {
  const sample = profile.sample.find((s) => nameAt(profile, s.locationId[0]) === leafName);
  if (!sample) throw new Error(`no sample with leaf ${leafName}`);
  return sample;
}

const stackOf = (profile: Profile, leafName: string): string[] =>
  sampleWithLeaf(profile, leafName).locationId.map((id) => nameAt(profile, id));
const valuesOf = (profile: Profile, leafName: string): number[] => sampleWithLeaf(profile, leafName).value.map(Number);

describe('cpuProfileToPprof', () => {
  it('declares Go CPU profile types, period and timing', async () => {
    const profile = await convert();
    expect(sampleTypes(profile)).toEqual(['samples/count', 'cpu/nanoseconds']);
    expect(`${stringAt(profile, profile.periodType?.type ?? 0)}/${stringAt(profile, profile.periodType?.unit ?? 0)}`).toBe(
      'cpu/nanoseconds',
    );
    expect(Number(profile.period)).toBe(1_000_000);
    expect(Number(profile.durationNanos)).toBe(310 * 1000);
    expect(BigInt(profile.timeNanos)).toBe(1_700_000_000_000n * 1_000_000n);
  });

  it('charges each sample the time until the next one and counts samples per stack', async () => {
    const profile = await convert();
    // hot: samples 0 and 1 → deltas 10 and 20 µs; main: sample 2 → 30 µs; (anonymous): sample 4 → 50 µs;
    // (program): last sample → endTime - its timestamp = 60 µs.
    expect(valuesOf(profile, 'hot')).toEqual([2, 30_000]);
    expect(valuesOf(profile, 'main')).toEqual([1, 30_000]);
    expect(valuesOf(profile, '(anonymous)')).toEqual([1, 50_000]);
    expect(valuesOf(profile, '(program)')).toEqual([1, 60_000]);
  });

  it('drops idle samples and the synthetic root, and lists stacks leaf first', async () => {
    const profile = await convert();
    expect(functionNames(profile)).not.toContain('(idle)');
    expect(functionNames(profile)).not.toContain('(root)');
    expect(profile.sample).toHaveLength(4);
    expect(stackOf(profile, 'hot')).toEqual(['hot', 'main']);
  });

  it('turns file URLs into paths and 0-based positions into 1-based lines', async () => {
    const profile = await convert();
    const hot = profile.function.find((f) => stringAt(profile, f.name) === 'hot');
    expect(stringAt(profile, hot?.filename ?? 0)).toBe('/srv/app.js');
    expect(Number(hot?.startLine)).toBe(20);
    const location = profile.location.find((l) => l.line[0].functionId === hot?.id);
    expect(Number(location?.line[0].line)).toBe(20);
    const anonymous = profile.function.find((f) => stringAt(profile, f.name) === '(anonymous)');
    expect(stringAt(profile, anonymous?.filename ?? 0)).toBe('node:internal/timers');
  });

  it('deduplicates functions that appear at several tree nodes', async () => {
    const recursive: V8CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)'), hitCount: 0, children: [2] },
        { id: 2, callFrame: frame('fib', 'file:///a.js', 0, 0), hitCount: 1, children: [3] },
        { id: 3, callFrame: frame('fib', 'file:///a.js', 0, 0), hitCount: 1 },
      ],
      startTime: 0,
      endTime: 20,
      samples: [2, 3],
      timeDeltas: [0, 10],
    };
    const profile = Profile.decode((await cpuProfileToPprof(recursive, { startedAtMs: 0, samplingIntervalMicros: 1000 })).encode());
    expect(profile.function).toHaveLength(1);
    expect(profile.location).toHaveLength(1);
    expect(profile.sample.map((s) => s.locationId.length).sort()).toEqual([1, 2]);
  });
});
