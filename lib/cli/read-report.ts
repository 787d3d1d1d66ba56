/**
 * A fleet report read from a peer, defensively: the JSON of `GET /debug/fleet` is untrusted. Every
 * field is checked for its type and every string cut to a bound; what is missing or of the wrong
 * type becomes null (or the field's empty value), never a throw, and lists are bounded. Only the
 * envelope must hold (`kind: "FleetReport"`, `version: 1`): anything else is not a report.
 */
import type { FailingCheck, Finding, FindingSeverity, FleetReport, ReplicaCycle, ReplicaReport } from '../fleet/report';
import { statusOf } from '../fleet/findings';
import { cutText } from '../util/cut-text';

/** A finding as read: its kind may be one a newer fleet view knows and this doctor does not. */
export type ReadFinding = Omit<Finding, 'kind'> & { readonly kind: string };

/** A fleet report as read from a peer (a {@link FleetReport} whose finding kinds are open). */
export type ReadReport = Omit<FleetReport, 'findings'> & { readonly findings: readonly ReadFinding[] };

/** The longest name kept (a pod's, a holder's, a check's): Kubernetes names are at most 253. */
const MAX_NAME = 253;
/** The longest message or reason kept. */
const MAX_MESSAGE = 1024;
/** The most findings, replicas, replicas per finding and failing checks per replica kept. */
const MAX_ITEMS = 1000;
const MAX_CHECKS = 64;

const SEVERITIES: readonly FindingSeverity[] = ['critical', 'warning', 'info'];
const STATUSES: readonly FleetReport['status'][] = ['healthy', 'degraded', 'failing'];

type Fields = Readonly<Record<string, unknown>>;

function fields(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

function text(value: unknown, max: number): string | null {
  return typeof value === 'string' ? cutText(value, max) : null;
}

function amount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

function flag(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

function list<T>(value: unknown, max: number, read: (item: unknown) => T | undefined): T[] {
  if (!Array.isArray(value)) return [];
  const kept: T[] = [];
  for (const item of value.slice(0, max)) {
    const one = read(item);
    if (one !== undefined) kept.push(one);
  }
  return kept;
}

function readFinding(value: unknown): ReadFinding | undefined {
  const f = fields(value);
  if (f === undefined) return undefined;
  const severity = SEVERITIES.find((s) => s === f['severity']) ?? 'warning';
  return {
    kind: text(f['kind'], 64) ?? 'unknown',
    severity,
    message: text(f['message'], MAX_MESSAGE) ?? '',
    replicas: list(f['replicas'], MAX_ITEMS, (r) => text(r, MAX_NAME) ?? undefined),
  };
}

function readCycle(value: unknown): ReplicaCycle | null {
  const f = fields(value);
  if (f === undefined) return null;
  return {
    outcome: text(f['outcome'], 64) ?? 'unknown',
    started: text(f['started'], 64),
    ended: text(f['ended'], 64),
    took_ms: amount(f['took_ms']),
    correlation_id: text(f['correlation_id'], MAX_NAME),
    failed_phase: text(f['failed_phase'], 64),
  };
}

function readCheck(value: unknown): FailingCheck | undefined {
  const f = fields(value);
  const name = text(f?.['name'], MAX_NAME);
  return name === null ? undefined : { name, reason: text(f?.['reason'], MAX_MESSAGE) };
}

function readCycles(value: unknown): ReplicaReport['cycles'] {
  const f = fields(value);
  const [total, succeeded, failed] = [amount(f?.['total']), amount(f?.['succeeded']), amount(f?.['failed'])];
  return total === null || succeeded === null || failed === null ? null : { total, succeeded, failed };
}

function readReplicaReport(value: unknown): ReplicaReport | undefined {
  const f = fields(value);
  if (f === undefined) return undefined;
  const reachable = flag(f['reachable']) ?? false;
  return {
    pod: text(f['pod'], MAX_NAME) ?? '(unnamed)',
    address: text(f['address'], MAX_NAME),
    phase: text(f['phase'], 64),
    reachable,
    error: text(f['error'], MAX_MESSAGE) ?? (reachable ? null : 'the report gives no reason'),
    ready: flag(f['ready']),
    failing_checks: list(f['failing_checks'], MAX_CHECKS, readCheck),
    leading: flag(f['leading']),
    holder: text(f['holder'], MAX_NAME),
    config_version: text(f['config_version'], MAX_NAME),
    last_cycle: readCycle(f['last_cycle']),
    cycles: readCycles(f['cycles']),
    uptime_seconds: amount(f['uptime_seconds']),
    event_subscribers: amount(f['event_subscribers']),
    caches_fresh: flag(f['caches_fresh']),
    certificate_not_after: text(f['certificate_not_after'], 64),
    read_ms: amount(f['read_ms']) ?? 0,
  };
}

/** Whether a report calls for attention: a finding above `info`, or a status other than `healthy`. */
export function isUnhealthy(report: ReadReport): boolean {
  return report.status !== 'healthy' || report.findings.some((f) => f.severity !== 'info');
}

/**
 * Reads a parsed JSON value as a fleet report; a string says why it is not one (another kind, a
 * version this doctor cannot read).
 */
export function readFleetReport(value: unknown): ReadReport | string {
  const f = fields(value);
  if (f === undefined || f['kind'] !== 'FleetReport') return 'the answer is JSON but not a FleetReport';
  if (f['version'] !== 1) {
    const version = typeof f['version'] === 'number' ? String(f['version']) : 'unknown';
    return `the answer is a FleetReport of version ${version}; this doctor reads version 1: run the doctor of the replica's package version`;
  }
  const findings = list(f['findings'], MAX_ITEMS, readFinding);
  const source = fields(f['source']);
  const namespace = text(source?.['namespace'], MAX_NAME);
  const selector = text(source?.['selector'], MAX_MESSAGE);
  return {
    kind: 'FleetReport',
    version: 1,
    gathered: text(f['gathered'], 64) ?? '',
    took_ms: amount(f['took_ms']) ?? 0,
    observer: text(f['observer'], MAX_NAME),
    source: namespace === null || selector === null ? null : { namespace, selector },
    // statusOf reads the severities only: a kind this doctor does not know changes nothing.
    status: STATUSES.find((s) => s === f['status']) ?? statusOf(findings),
    findings,
    replicas: list(f['replicas'], MAX_ITEMS, readReplicaReport),
  };
}
