import { cyclesOf, onlyCycle, summariseCpuProfile, summariseHeapProfile, type FlameNode } from '../../console-page/profile-data';
import type { LabelledCpuProfile } from '../../lib/pprof/cpu/sample-labels';
import type { V8CallFrame, V8CpuProfile, V8SamplingHeapNode } from '../../lib/pprof/v8-shapes';

function frame(functionName: string, lineNumber = 0): V8CallFrame {
  return { functionName, scriptId: '1', url: functionName.startsWith('(') ? '' : 'file:///app/main.js', lineNumber, columnNumber: 0 };
}

// root → main → recurse → recurse → leaf, plus idle and GC at the root.
function cpuProfile(): V8CpuProfile {
  const nodes = [
    { id: 1, callFrame: frame('(root)', -1), hitCount: 0, children: [2, 6, 7] },
    { id: 2, callFrame: frame('main', 1), hitCount: 1, children: [3] },
    { id: 3, callFrame: frame('recurse', 10), hitCount: 2, children: [4] },
    { id: 4, callFrame: frame('recurse', 10), hitCount: 3, children: [5] },
    { id: 5, callFrame: frame('leaf', 20), hitCount: 4, children: [] },
    { id: 6, callFrame: frame('(idle)', -1), hitCount: 50, children: [] },
    { id: 7, callFrame: frame('(garbage collector)', -1), hitCount: 5, children: [] },
  ];
  return { nodes, startTime: 0, endTime: 1, samples: [], timeDeltas: [] };
}

function names(node: FlameNode): string[] {
  return [node.name, ...node.children.flatMap(names)];
}

describe('profile summaries for the console', () => {
  const cpu = summariseCpuProfile(cpuProfile());

  it.each([
    // name prefix, flat, cum
    ['main ', 1, 10],
    ['recurse ', 5, 9], // counted once per stack, not twice for the recursion
    ['leaf ', 4, 4],
    ['(garbage collector)', 5, 5],
  ])('%s: flat %d, cum %d', (name, flat, cum) => {
    const row = cpu.top.find((r) => r.name.startsWith(name));
    expect(row).toEqual({ name: expect.any(String), self: flat, total: cum });
  });

  it('leaves idle out, as pprof does, and names frames with file and line', () => {
    expect(cpu.total).toBe(15);
    expect(names(cpu.tree).some((n) => n.startsWith('(idle)'))).toBe(false);
    expect(cpu.tree.children.map((c) => c.name)).toEqual(['main (/app/main.js:2:1)', '(garbage collector)']);
    expect(cpu.top.map((r) => r.self)).toEqual([...cpu.top.map((r) => r.self)].sort((a, b) => b - a));
  });

  it('keeps a real frame that V8 put at the root', () => {
    const profile = cpuProfile();
    profile.nodes = profile.nodes.filter((n) => n.id !== 1);
    profile.nodes[0]!.children = [3];
    const summary = summariseCpuProfile({ ...profile, nodes: profile.nodes.filter((n) => n.id <= 5) });
    expect(summary.tree.children[0]!.name).toMatch(/^main /);
    expect(summary.total).toBe(10);
  });

  it('walks a deep stack without recursion', () => {
    const depth = 50_000;
    const nodes = Array.from({ length: depth }, (_, i) => ({
      id: i + 1,
      callFrame: frame(i === 0 ? '(root)' : `f${i}`),
      hitCount: i === depth - 1 ? 1 : 0,
      children: i + 1 < depth ? [i + 2] : [],
    }));
    const summary = summariseCpuProfile({ nodes, startTime: 0, endTime: 1, samples: [], timeDeltas: [] });
    expect(summary.total).toBe(1);
    expect(summary.top.find((r) => r.name.startsWith('f1 '))!.total).toBe(1);
  });

  it('summarises a heap profile by self bytes', () => {
    const leaf: V8SamplingHeapNode = { callFrame: frame('alloc', 5), selfSize: 4096, children: [] };
    const head: V8SamplingHeapNode = {
      callFrame: frame('(root)', -1),
      selfSize: 0,
      children: [{ callFrame: frame('main', 1), selfSize: 1024, children: [leaf] }],
    };
    const heap = summariseHeapProfile({ head });
    expect(heap.total).toBe(5120);
    expect(heap.top[0]).toEqual({ name: 'alloc (/app/main.js:6:1)', self: 4096, total: 4096 });
    expect(heap.top[1]).toEqual({ name: 'main (/app/main.js:2:1)', self: 1024, total: 5120 });
  });
});

describe('a CPU profile by reconciliation cycle, for the console', () => {
  // Samples at 10, 20, …, 60 µs: main, main, leaf, leaf, idle, leaf.
  const profile: LabelledCpuProfile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', -1), hitCount: 0, children: [2, 6] },
      { id: 2, callFrame: frame('main', 1), hitCount: 0, children: [5] },
      { id: 5, callFrame: frame('leaf', 20), hitCount: 0, children: [] },
      { id: 6, callFrame: frame('(idle)', -1), hitCount: 0, children: [] },
    ],
    startTime: 0,
    endTime: 60,
    samples: [2, 2, 5, 5, 6, 5],
    timeDeltas: [10, 10, 10, 10, 10, 10],
    cycles: [
      { labels: { correlation_id: 'one', trigger: 'resync' }, startMicros: 5, endMicros: 25 },
      { labels: { correlation_id: 'two', trigger: 'config', controller: 'lb' }, startMicros: 28, endMicros: 65 },
    ],
  };

  it('lists the cycles labelled, most samples first, leaving idle out', () => {
    expect(cyclesOf(profile)).toEqual([
      { id: 'two', trigger: 'lb · config', samples: 3 },
      { id: 'one', trigger: 'resync', samples: 2 },
    ]);
    expect(cyclesOf({ ...profile, cycles: undefined })).toEqual([]);
  });

  it("keeps only one cycle's samples", () => {
    const one = summariseCpuProfile(onlyCycle(profile, 'one'));
    expect(one.total).toBe(2);
    const flat = (summary: typeof one): Array<[string | undefined, number]> =>
      summary.top.filter((r) => r.self > 0).map((r) => [r.name.split(' ')[0], r.self]);
    expect(flat(one)).toEqual([['main', 2]]);
    expect(flat(summariseCpuProfile(onlyCycle(profile, 'two')))).toEqual([['leaf', 3]]);
  });
});
