import type { Profile } from 'pprof-format';
import { labelSamples, AMBIGUOUS, type LabelSpan } from '../../../lib/pprof/cpu/sample-labels';
import { cpuProfileToPprof } from '../../../lib/pprof/cpu/to-pprof';
import type { V8CpuProfile } from '../../../lib/pprof/v8-shapes';
import { CycleTimeline, monotonicMicros } from '../../../lib/state/cycle-spans';
import { createIntrospectionState } from '../../../lib/state/store';
import { createPipeline } from '../../../lib/pipeline';
import { stringAt } from '../helpers';

const frame = (functionName: string): V8CpuProfile['nodes'][number]['callFrame'] => ({
  functionName,
  scriptId: '1',
  url: 'file:///app.js',
  lineNumber: 1,
  columnNumber: 1,
});

/** A profile from t=1000 µs with one sample every 100 µs in `work` (node 2), `idle` ones in (idle). */
function profile(samples: number, idleAt: readonly number[] = []): V8CpuProfile {
  return {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 3] },
      { id: 2, callFrame: frame('work') },
      { id: 3, callFrame: frame('(idle)') },
    ],
    startTime: 1000,
    endTime: 1000 + 100 * samples,
    samples: Array.from({ length: samples }, (_, i) => (idleAt.includes(i) ? 3 : 2)),
    // Sample i at 1100 + 100 i.
    timeDeltas: Array.from({ length: samples }, () => 100),
  } as V8CpuProfile;
}

const span = (id: string, startMicros: number, endMicros?: number): LabelSpan => ({
  labels: { correlation_id: id, trigger: 'resync' },
  startMicros,
  endMicros,
});

function labelsOf(p: Profile): Array<{ labels: Record<string, string>; count: number }> {
  return p.sample.map((s) => ({
    labels: Object.fromEntries(s.label.map((l) => [stringAt(p, l.key), stringAt(p, l.str)])),
    count: Number(s.value[0]),
  }));
}

describe('labelling CPU samples by reconciliation cycle', () => {
  it('places the samples of cycles that follow each other (one worker) by their timestamps', () => {
    // Samples at 1100..2000; a: 1100-1450 (4 samples), b: 1500-1800 (4), none after.
    const { spanOf, labelled, ambiguous } = labelSamples(profile(10), [span('b', 1500, 1800), span('a', 1100, 1450)]);
    expect(Array.from(spanOf)).toEqual([1, 1, 1, 1, 0, 0, 0, 0, -1, -1]);
    expect(labelled).toBe(8);
    expect(ambiguous).toBe(0);
  });

  it('leaves samples where concurrent cycles overlap unlabelled and counts them', () => {
    // a: 1100-1600, b: 1400-2000 (still open at the end): 1400-1600 is both's.
    const spans = [span('a', 1100, 1600), span('b', 1400)];
    const { spanOf, labelled, ambiguous } = labelSamples(profile(10), spans);
    expect(Array.from(spanOf)).toEqual([0, 0, 0, AMBIGUOUS, AMBIGUOUS, AMBIGUOUS, 1, 1, 1, 1]);
    expect(labelled).toBe(7);
    expect(ambiguous).toBe(3);
  });

  it('places samples of overlapping cycles by their segments, and leaves the rest ambiguous', () => {
    const spans = [span('a', 1100, 2000), span('b', 1100, 2000)];
    const segments = [
      { span: 1, startMicros: 1450, endMicros: 1650 },
      { span: 0, startMicros: 1150, endMicros: 1350 },
    ];
    const { spanOf, labelled, bySegment, ambiguous } = labelSamples(profile(10), spans, segments);
    expect(Array.from(spanOf)).toEqual([AMBIGUOUS, 0, 0, AMBIGUOUS, 1, 1, AMBIGUOUS, AMBIGUOUS, AMBIGUOUS, AMBIGUOUS]);
    expect([labelled, bySegment, ambiguous]).toEqual([4, 4, 6]);
  });

  it('converts to pprof with string labels per cycle, a comment saying how many, and no labels without spans', async () => {
    const conversion = { startedAtMs: 0, samplingIntervalMicros: 100 };
    const labelled = await cpuProfileToPprof(profile(10, [9]), { ...conversion, spans: [span('a', 1100, 1450), span('b', 1500, 1850)] });
    const samples = labelsOf(labelled);
    expect(samples).toEqual(
      expect.arrayContaining([
        { labels: { correlation_id: 'a', trigger: 'resync' }, count: 4 },
        { labels: { correlation_id: 'b', trigger: 'resync' }, count: 4 },
        { labels: {}, count: 1 },
      ]),
    );
    expect(samples).toHaveLength(3);
    expect(labelled.comment.map((c) => stringAt(labelled, c))).toEqual([
      "cycle labels: 8 of 9 on-CPU samples labelled by reconciliation cycle (0 placed by the segments of a cycle's own code); 0 left unlabelled because concurrent cycles overlapped outside their segments",
    ]);
    const plain = await cpuProfileToPprof(profile(10), conversion);
    expect(labelsOf(plain)).toEqual([{ labels: {}, count: 10 }]);
    expect(plain.comment).toEqual([]);
  });
});

/** Burns the CPU for `ms` and answers when, on the profile clock. */
function burn(ms: number): [number, number] {
  const start = monotonicMicros();
  while (monotonicMicros() - start < ms * 1000);
  return [start, monotonicMicros()];
}

describe("the state's timeline of cycles", () => {
  it('keeps the last spans of a bounded ring, a running one open', async () => {
    const timeline = new CycleTimeline(2, 8);
    await timeline.run({ correlation_id: 'a' }, async () => undefined);
    await timeline.run({ correlation_id: 'b' }, async () => undefined);
    let release = (): void => undefined;
    const c = timeline.run({ correlation_id: 'c' }, () => new Promise<void>((resolve) => (release = resolve)));
    const reading = timeline.read(0, Number.MAX_SAFE_INTEGER);
    expect(reading.spans.map((s) => [s.labels['correlation_id'], s.endMicros === undefined])).toEqual([
      ['b', false],
      ['c', true],
    ]);
    expect(reading.segments).toEqual([]);
    release();
    await c;
    expect(timeline.read(0, Number.MAX_SAFE_INTEGER).spans[1]?.endMicros).toBeDefined();
  });

  it('notes the synchronous segments of concurrent cycles only while tracing, each in its own cycle', async () => {
    const timeline = new CycleTimeline();
    const busy: Record<string, Array<[number, number]>> = { a: [], b: [] };
    const cycle = (id: 'a' | 'b') => async (): Promise<void> => {
      busy[id].push(burn(3));
      for (let i = 0; i < 3; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        busy[id].push(burn(3));
        await Promise.resolve();
        busy[id].push(burn(1));
      }
    };
    await Promise.all([timeline.run({ correlation_id: 'a' }, cycle('a')), timeline.run({ correlation_id: 'b' }, cycle('b'))]);
    expect(timeline.read(0, Number.MAX_SAFE_INTEGER).segments).toEqual([]);

    busy.a = [];
    busy.b = [];
    const stop = timeline.trace();
    const from = monotonicMicros();
    await Promise.all([timeline.run({ correlation_id: 'a' }, cycle('a')), timeline.run({ correlation_id: 'b' }, cycle('b'))]);
    stop();
    stop();
    const { spans, segments } = timeline.read(from, monotonicMicros());
    expect(spans.map((s) => s.labels['correlation_id'])).toEqual(['a', 'b']);
    for (const [index, id] of [
      [0, 'a'],
      [1, 'b'],
    ] as const) {
      const own = segments.filter((s) => s.span === index);
      // Every stretch of the cycle's own code is inside one of its segments.
      for (const [start, end] of busy[id]) {
        expect(own.some((s) => s.startMicros <= start && end <= s.endMicros)).toBe(true);
      }
    }
    // Off again: a traced-then-stopped timeline notes nothing more.
    const after = monotonicMicros();
    await timeline.run({ correlation_id: 'c' }, cycle('a'));
    expect(timeline.read(after, monotonicMicros()).segments).toEqual([]);
  });

  it('records every pipeline cycle with its correlation id and trigger, on the monotonic clock', async () => {
    const state = createIntrospectionState();
    const pipeline = createPipeline(state);
    const before = monotonicMicros();
    const result = await pipeline.run({ trigger: 'config-change', render: () => 'cfg' });
    const after = monotonicMicros();
    const { spans } = state.cycleTimeline(before, after);
    expect(spans).toHaveLength(1);
    expect(spans[0]?.labels).toEqual({ correlation_id: result.correlationId, trigger: 'config-change' });
    expect(spans[0]?.startMicros).toBeGreaterThanOrEqual(before);
    expect(spans[0]?.endMicros).toBeLessThanOrEqual(after);
  });
});
