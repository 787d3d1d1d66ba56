import { Profile } from 'pprof-format';
import { heapDelta, heapProfileToPprof, heapStacks, type HeapStack } from '../../../lib/pprof/heap/to-pprof';
import type { V8CallFrame, V8SamplingHeapProfile } from '../../../lib/pprof/v8-shapes';
import { functionNames, sampleTypes, stringAt, totalFor } from '../helpers';

const frame = (functionName: string, lineNumber = -1): V8CallFrame => ({
  functionName,
  scriptId: '1',
  url: 'file:///srv/app.js',
  lineNumber,
  columnNumber: 0,
});

const v8: V8SamplingHeapProfile = {
  head: {
    callFrame: frame('(root)'),
    selfSize: 0,
    id: 1,
    children: [
      {
        callFrame: frame('main', 0),
        selfSize: 100,
        id: 2,
        children: [
          { callFrame: frame('cache', 4), selfSize: 4096, id: 3, children: [] },
          { callFrame: frame('idle', 8), selfSize: 0, id: 4, children: [] },
        ],
      },
    ],
  },
};

describe('heapProfileToPprof', () => {
  it('answers inuse_space/bytes with the sampling interval as the period', async () => {
    const profile = Profile.decode((await heapProfileToPprof(v8, 65536)).encode());
    expect(sampleTypes(profile)).toEqual(['inuse_space/bytes']);
    expect(`${stringAt(profile, profile.periodType?.type ?? 0)}/${stringAt(profile, profile.periodType?.unit ?? 0)}`).toBe('space/bytes');
    expect(Number(profile.period)).toBe(65536);
  });

  it('emits one sample per frame with live bytes, leaf first, without the root', async () => {
    const profile = Profile.decode((await heapProfileToPprof(v8, 65536)).encode());
    expect(profile.sample.map((s) => Number(s.value[0])).sort((a, b) => a - b)).toEqual([100, 4096]);
    expect(functionNames(profile)).not.toContain('(root)');
    expect(totalFor(profile, 'cache', 0)).toBe(4096);
    // main is on both stacks: its own 100 bytes and as the caller of cache.
    expect(totalFor(profile, 'main', 0)).toBe(4196);
  });

  it('flattens deep trees without recursion', async () => {
    let node = { callFrame: frame('leaf', 1), selfSize: 8, children: [] as V8SamplingHeapProfile['head'][] };
    for (let depth = 0; depth < 50_000; depth += 1) node = { callFrame: frame(`f${depth}`, 1), selfSize: 0, children: [node] };
    const stacks = await heapStacks({ head: { callFrame: frame('(root)'), selfSize: 0, children: [node] } });
    expect(stacks).toHaveLength(1);
    expect(stacks[0].frames).toHaveLength(50_001);
    expect(stacks[0].frames[0].functionName).toBe('leaf');
  });
});

describe('heapDelta', () => {
  const stack = (bytes: number, ...names: string[]): HeapStack => ({ bytes, frames: names.map((n) => frame(n, 1)) });

  it.each([
    ['growth at one stack', [stack(100, 'a', 'main')], [stack(300, 'a', 'main')], [[200, 'a,main']]],
    ['a new stack', [], [stack(50, 'b', 'main')], [[50, 'b,main']]],
    ['a released stack is negative', [stack(70, 'c', 'main')], [], [[-70, 'c,main']]],
    ['unchanged stacks are left out', [stack(10, 'd', 'main')], [stack(10, 'd', 'main')], []],
    [
      'the same leaf under other callers stays apart',
      [stack(10, 'e', 'x')],
      [stack(10, 'e', 'y')],
      [
        [10, 'e,y'],
        [-10, 'e,x'],
      ],
    ],
  ])('%s', (_name, before, after, expected) => {
    const delta = heapDelta(before, after).map((s) => [s.bytes, s.frames.map((fr) => fr.functionName).join(',')]);
    expect(delta).toEqual(expected);
  });
});
