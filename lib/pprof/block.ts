import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';
import type { Profile } from 'pprof-format';
import { PprofBuilder } from './pprof-builder';

/** Resolution of the delay monitor, ms: Node's default; finer costs more wake-ups. */
const EVENT_LOOP_DELAY_RESOLUTION_MS = 10;

/** Event-loop delay statistics, all durations in nanoseconds. */
export interface DelaySummary {
  /** When monitoring started, ms since the epoch. */
  startedAtMs: number;
  /** Delay measurements since then. */
  count: number;
  /** Smallest, mean and largest delay; 0 when there are no measurements yet. */
  min: number;
  mean: number;
  max: number;
  /** Percentiles (50, 90, 99). */
  p50: number;
  p90: number;
  p99: number;
  /**
   * Total delay beyond the resolution since monitoring started (`count × mean`), never less than an
   * earlier summary's: cumulative, as Go's block profile is, so scrapers can take differences.
   */
  totalDelay: number;
  /**
   * Event-loop utilization since monitoring started (`performance.eventLoopUtilization`): the
   * fraction of time the loop was busy running callbacks, 0 to 1.
   */
  utilization: number;
}

/** A running event-loop delay monitor (Node's analog of Go's block profile). */
export interface DelayMonitor {
  /** Current statistics since creation. */
  summary(): DelaySummary;
  /** Stops the monitor's timer. Idempotent. */
  close(): void;
}

/** Starts `perf_hooks.monitorEventLoopDelay`; its timer does not keep the process alive. */
export function startDelayMonitor(): DelayMonitor {
  const histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  const startedAtMs = Date.now();
  const utilizationAtStart: EventLoopUtilization = performance.eventLoopUtilization();
  // The monitor's timer fires every `resolution` ms; each recorded value is that interval plus the
  // delay, so an idle loop reads ~10 ms. The delay is what exceeds the resolution.
  const resolutionNs = EVENT_LOOP_DELAY_RESOLUTION_MS * 1e6;
  let closed = false;
  // The histogram's mean comes from its buckets (three significant digits), so count × mean can
  // read a few nanoseconds less than a moment before: the total never goes back.
  let totalDelay = 0;
  return {
    summary(): DelaySummary {
      // Before the first measurement Node reports min as 2^63 and mean as NaN; those are not delays.
      const count = histogram.count;
      const value = (n: number): number => (count > 0 && Number.isFinite(n) ? Math.max(0, Math.round(n - resolutionNs)) : 0);
      const mean = value(histogram.mean);
      totalDelay = Math.max(totalDelay, mean * count);
      return {
        startedAtMs,
        count,
        totalDelay,
        min: value(histogram.min),
        mean,
        max: value(histogram.max),
        p50: value(histogram.percentile(50)),
        p90: value(histogram.percentile(90)),
        p99: value(histogram.percentile(99)),
        utilization: performance.eventLoopUtilization(utilizationAtStart).utilization,
      };
    },
    close(): void {
      if (closed) return;
      closed = true;
      histogram.disable();
    },
  };
}

/**
 * pprof shaped like Go's block profile, with its sample types (`contentions/count`,
 * `delay/nanoseconds`) and its cumulative values: one stack, `(event loop delay)`, whose
 * contentions are the monitor's measurements since the router started (each one a wait of the
 * loop's timer to run, late by the loop's work before it) and whose delay is their total lateness
 * beyond the resolution. Both only grow, so a continuous profiler (Grafana Alloy, Parca) takes the
 * difference between two scrapes as Go's. The percentiles are comments (`go tool pprof -comments`),
 * not labels: a sample's labels are part of its identity, and labels that change every scrape would
 * make each scrape a new sample, whose difference with the last is never taken.
 */
export function delayToPprof(summary: DelaySummary): Profile {
  const builder = new PprofBuilder();
  const keys = ['p50', 'p90', 'p99', 'max', 'min', 'mean'] as const;
  return builder.build({
    sampleTypes: [
      { type: 'contentions', unit: 'count' },
      { type: 'delay', unit: 'nanoseconds' },
    ],
    samples:
      summary.count > 0
        ? [{ locationIds: [builder.location('(event loop delay)')], values: [summary.count, Math.round(summary.totalDelay)] }]
        : [],
    periodType: { type: 'contentions', unit: 'count' },
    period: 1,
    timeMs: Date.now(),
    durationNanos: (Date.now() - summary.startedAtMs) * 1_000_000,
    comments: [
      `Node.js analog of the block profile: event-loop delay from perf_hooks.monitorEventLoopDelay (resolution ${EVENT_LOOP_DELAY_RESOLUTION_MS} ms, subtracted: an idle loop reads 0) since ${new Date(summary.startedAtMs).toISOString()}`,
      'contentions = delay measurements (one per wait of the monitor timer), delay = their total lateness beyond the resolution; both cumulative',
      ...keys.map((key) => `${key}=${summary[key]}ns`),
      `event_loop_utilization=${summary.utilization.toFixed(4)}`,
    ],
  });
}

const ms = (nanos: number): string => `${(nanos / 1e6).toFixed(3)}ms`;

/** The `debug=1` text form. */
export function delayText(summary: DelaySummary): string {
  return [
    '--- event loop delay (Node.js analog of the block profile):',
    `# perf_hooks.monitorEventLoopDelay, resolution ${EVENT_LOOP_DELAY_RESOLUTION_MS}ms (subtracted: delay beyond it; an idle loop reads 0), since ${new Date(summary.startedAtMs).toISOString()}`,
    `count=${summary.count}`,
    `total=${ms(summary.totalDelay)}`,
    `min=${ms(summary.min)}`,
    `mean=${ms(summary.mean)}`,
    `p50=${ms(summary.p50)}`,
    `p90=${ms(summary.p90)}`,
    `p99=${ms(summary.p99)}`,
    `max=${ms(summary.max)}`,
    `# performance.eventLoopUtilization: share of time the loop was busy since then`,
    `utilization=${summary.utilization.toFixed(4)}`,
    '',
  ].join('\n');
}
