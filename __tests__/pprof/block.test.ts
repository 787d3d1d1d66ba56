/**
 * The block profile's pprof, as continuous profilers read it: Go's block sample types
 * (contentions/count, delay/nanoseconds), which Grafana Alloy takes differences of, on one sample
 * without labels (a sample's labels are part of its identity), and cumulative values that never go
 * back.
 */
import { delayToPprof, startDelayMonitor, type DelaySummary } from '../../lib/pprof/block';
import { functionNames, sampleTypes, stringAt } from './helpers';

const summary = (count: number, totalDelay: number): DelaySummary => ({
  startedAtMs: Date.now() - 60_000,
  count,
  totalDelay,
  min: 0,
  mean: count > 0 ? Math.round(totalDelay / count) : 0,
  max: 40e6,
  p50: 1e5,
  p90: 1e6,
  p99: 2e7,
  utilization: 0.25,
});

describe('delayToPprof', () => {
  it('holds one unlabelled sample: the measurements as contentions and their total lateness as delay', () => {
    const profile = delayToPprof(summary(6000, 3.5e9));
    expect(sampleTypes(profile)).toEqual(['contentions/count', 'delay/nanoseconds']);
    expect(`${stringAt(profile, profile.periodType!.type)}/${stringAt(profile, profile.periodType!.unit)}`).toBe('contentions/count');
    expect(functionNames(profile)).toEqual(['(event loop delay)']);
    expect(profile.sample).toHaveLength(1);
    expect(profile.sample[0]!.value.map(Number)).toEqual([6000, 3.5e9]);
    expect(profile.sample[0]!.label).toEqual([]);
    const comments = profile.comment.map((i) => stringAt(profile, i));
    expect(comments).toEqual(expect.arrayContaining(['p50=100000ns', 'p99=20000000ns', 'max=40000000ns', 'event_loop_utilization=0.2500']));
    expect(Number(profile.durationNanos)).toBeGreaterThanOrEqual(60e9);
  });

  it('holds no sample before the first measurement, and keeps the sample types', () => {
    const profile = delayToPprof(summary(0, 0));
    expect(profile.sample).toEqual([]);
    expect(sampleTypes(profile)).toEqual(['contentions/count', 'delay/nanoseconds']);
  });
});

describe('startDelayMonitor', () => {
  it('counts and totals cumulatively: neither ever reads less than before', async () => {
    const monitor = startDelayMonitor();
    try {
      let last = monitor.summary();
      for (let i = 0; i < 15; i++) {
        if (i % 3 === 0) {
          const until = performance.now() + 15;
          while (performance.now() < until) {
            // block the event loop
          }
        }
        await new Promise((r) => setTimeout(r, 12));
        const now = monitor.summary();
        expect(now.count).toBeGreaterThanOrEqual(last.count);
        expect(now.totalDelay).toBeGreaterThanOrEqual(last.totalDelay);
        expect(Number.isInteger(now.totalDelay)).toBe(true);
        last = now;
      }
      expect(last.count).toBeGreaterThan(5);
      // The three 15 ms blocks, less the 10 ms the monitor waits anyway for each.
      expect(last.totalDelay).toBeGreaterThan(10e6);
    } finally {
      monitor.close();
    }
  });
});
