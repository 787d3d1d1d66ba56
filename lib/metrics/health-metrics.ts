import { Gauge, type Registry, type RegistryContentType } from 'prom-client';
import type { MetricsStateSource } from './options';

/** The health helpers' gauges, after the prefix. Not part of the 14 controller families. */
export const HEALTH_METRIC_SUFFIXES = { gate: 'readiness_gate_open', progress: 'progress_last_timestamp_seconds' } as const;

/**
 * Registers the readiness-gate and progress gauges, read from the state at scrape time (a gate or
 * activity that disappears, disappears). Returns them with their names, for `remove()`.
 */
export function createHealthGauges(registry: Registry<RegistryContentType>, prefix: string, state: MetricsStateSource): Array<readonly [string, Gauge]> {
  const gateName = prefix + HEALTH_METRIC_SUFFIXES.gate;
  const progressName = prefix + HEALTH_METRIC_SUFFIXES.progress;
  const gates = new Gauge({
    name: gateName,
    help: 'Readiness gate state: 1 open, 0 closed (readiness fails while any gate is closed)',
    labelNames: ['gate'],
    registers: [registry],
    collect() {
      const statuses = state.readinessGates!();
      this.reset();
      for (const gate of statuses) this.set({ gate: gate.name }, gate.open ? 1 : 0);
    },
  });
  const progress = new Gauge({
    name: progressName,
    help: 'Unix time in seconds of the last progress of an activity (the liveness watchdog watches it)',
    labelNames: ['activity'],
    registers: [registry],
    collect() {
      const records = state.progress!();
      this.reset();
      for (const record of records) this.set({ activity: record.activity }, Date.parse(record.at) / 1000);
    },
  });
  return [
    [gateName, gates],
    [progressName, progress],
  ];
}
