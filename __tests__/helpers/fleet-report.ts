/**
 * A replica's report as a fleet view answers it for a healthy follower, for the tests that build
 * reports by hand (the findings, the console's Fleet page): `fields` override any of it.
 */
import type { ReplicaReport } from '../../lib/fleet/report';

export function replicaReport(pod: string, fields: Partial<ReplicaReport> = {}): ReplicaReport {
  return {
    pod,
    address: 'http://10.0.0.1:8080',
    phase: 'Running',
    reachable: true,
    error: null,
    ready: true,
    failing_checks: [],
    leading: false,
    holder: null,
    config_version: '7',
    last_cycle: null,
    cycles: { total: 0, succeeded: 0, failed: 0 },
    uptime_seconds: 60,
    event_subscribers: 2,
    caches_fresh: true,
    certificate_not_after: null,
    read_ms: 3,
    ...fields,
  };
}
