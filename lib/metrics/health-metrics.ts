import { clientFor } from './client';
import { readEventStat, readProgress, readReadinessGates } from './host-readings';
import type { MetricsStateSource } from './options';
import type { GaugeLike as Gauge, MetricsRegistry } from './shapes';

/** The health helpers' gauges, after the prefix. Not part of the 14 controller families. */
export const HEALTH_METRIC_SUFFIXES = { gate: 'readiness_gate_open', progress: 'progress_last_timestamp_seconds' } as const;

/** The event-watch gauge, after the prefix: watches over HTTP, kept apart from `event_subscribers`. */
export const EVENT_WATCHERS_SUFFIX = 'event_watchers';

/**
 * Registers `<prefix>event_watchers`, read from the state at scrape time. `event_subscribers` keeps
 * its meaning (internal components; a drop means one stopped): someone running curl must not move it.
 */
export function createWatchersGauge(registry: MetricsRegistry, prefix: string, state: MetricsStateSource): readonly [string, Gauge] {
  const name = prefix + EVENT_WATCHERS_SUFFIX;
  const gauge = new (clientFor(registry, 'createControllerMetrics').Gauge)({
    name,
    help: 'Event watches open over HTTP (/debug/vars/events?watch=1)',
    registers: [registry],
    collect() {
      this.set(readEventStat(state, 'watchers'));
    },
  });
  return [name, gauge];
}

/**
 * Registers the readiness-gate and progress gauges, read from the state at scrape time (a gate or
 * activity that disappears, disappears). Returns them with their names, for `remove()`.
 */
export function createHealthGauges(registry: MetricsRegistry, prefix: string, state: MetricsStateSource): Array<readonly [string, Gauge]> {
  const gateName = prefix + HEALTH_METRIC_SUFFIXES.gate;
  const progressName = prefix + HEALTH_METRIC_SUFFIXES.progress;
  const { Gauge: GaugeClass } = clientFor(registry, 'createControllerMetrics');
  const gates = new GaugeClass({
    name: gateName,
    help: 'Readiness gate state: 1 open, 0 closed (readiness fails while any gate is closed)',
    labelNames: ['gate'],
    registers: [registry],
    collect() {
      const gates = readReadinessGates(state);
      this.reset();
      for (const gate of gates) this.set({ gate: gate.name }, gate.open ? 1 : 0);
    },
  });
  const progress = new GaugeClass({
    name: progressName,
    help: 'Unix time in seconds of the last progress of an activity (the liveness watchdog watches it)',
    labelNames: ['activity'],
    registers: [registry],
    collect() {
      const readings = readProgress(state);
      this.reset();
      for (const reading of readings) this.set({ activity: reading.activity }, reading.seconds);
    },
  });
  return [
    [gateName, gates],
    [progressName, progress],
  ];
}
