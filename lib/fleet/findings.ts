// What is wrong with a fleet, from what its replicas said: a pure function, no I/O, no clock of
// its own (the gather's time is given).

import { formatRoundedDuration } from '../util/duration';
import { quoteText } from '../util/cut-text';
import type { Finding, FindingKind, FindingSeverity, ReplicaReport } from './report';

/**
 * The bounds findings are judged by when nobody says otherwise: the fleet view's defaults
 * (`staleCycleMs`, `certificateWarningMs`) and the doctor's for a single replica. Frozen.
 */
export const FINDING_BOUNDS = Object.freeze({
  /** The leader may go 10 minutes without finishing a cycle. */
  staleCycleMs: 600_000,
  /** A serving certificate that expires within 7 days is a finding. */
  certificateWarningMs: 7 * 86_400_000,
});

/** What {@link findingsOf} judges the replicas by, besides the replicas themselves. */
export interface FindingsContext {
  /** The time the fleet was gathered, in milliseconds since the epoch. */
  readonly nowMs: number;
  /** How long the leader may go without finishing a cycle before `no_recent_cycle`. Milliseconds. */
  readonly staleCycleMs: number;
  /** How long before its serving certificate expires a replica gets `certificate_expiring`. Milliseconds. */
  readonly certificateWarningMs: number;
  /** Whether more pods matched than were listed (`truncated`); default false. */
  readonly truncated?: boolean;
  /** The most pods listed, for the `truncated` finding's message. */
  readonly maxReplicas?: number;
  /**
   * The highest event subscriber count each replica (by pod name) had in earlier gathers, for
   * `subscribers_dropped`. The caller keeps it per pod uid, so that a new pod under an old name
   * starts afresh. Default: none known.
   */
  readonly highestSubscribers?: ReadonlyMap<string, number>;
}

/** Most severe first; within a severity, in the order the kinds are listed here. */
const SEVERITY_RANK: Readonly<Record<FindingSeverity, number>> = { critical: 0, warning: 1, info: 2 };
const KIND_ORDER: readonly FindingKind[] = [
  'no_replicas',
  'no_leader',
  'several_leaders',
  'last_cycle_failed',
  'unreachable',
  'not_ready',
  'holder_disagreement',
  'config_skew',
  'no_recent_cycle',
  'stale_cache',
  'certificate_expiring',
  'subscribers_dropped',
  'truncated',
];

/** A value of a peer's quoted in a message. */
function q(text: string): string {
  return quoteText(text, 80);
}

/** `a, b and c`. */
function names(pods: readonly string[]): string {
  if (pods.length <= 1) return pods.join('');
  return `${pods.slice(0, -1).join(', ')} and ${pods[pods.length - 1]}`;
}

/** Whether the replica is on its way out or not yet in: its troubles are information, not a warning. */
function transient(replica: ReplicaReport): boolean {
  return replica.phase === 'Terminating' || replica.phase === 'Pending';
}

/** Values of `key` with the replicas holding each, the most held first (ties by value). */
function groups(replicas: readonly ReplicaReport[], key: (r: ReplicaReport) => string | null): Array<[string, string[]]> {
  const byValue = new Map<string, string[]>();
  for (const replica of replicas) {
    const value = key(replica);
    if (value === null) continue;
    const pods = byValue.get(value);
    if (pods === undefined) byValue.set(value, [replica.pod]);
    else pods.push(replica.pod);
  }
  return [...byValue].sort(([a, pa], [b, pb]) => pb.length - pa.length || (a < b ? -1 : a > b ? 1 : 0));
}

/** `"v1" (a, b), "v2" (c)`. */
function describeGroups(list: Array<[string, string[]]>): string {
  return list.map(([value, pods]) => `${q(value)} (${pods.join(', ')})`).join(', ');
}

/** The leader's findings: its last cycle failed, or none finished for too long. */
function leaderFindings(leader: ReplicaReport, context: FindingsContext, add: (finding: Finding) => void): void {
  const cycle = leader.last_cycle;
  if (cycle?.outcome === 'failed') {
    const phase = cycle.failed_phase === null ? '' : ` in ${q(cycle.failed_phase)}`;
    const id = cycle.correlation_id === null ? '' : ` (correlation id ${q(cycle.correlation_id)})`;
    add({
      kind: 'last_cycle_failed',
      severity: 'critical',
      message: `the leader ${leader.pod}'s last cycle failed${phase}${id}`,
      replicas: [leader.pod],
    });
  }
  const stale = (what: string): void =>
    add({
      kind: 'no_recent_cycle',
      severity: 'warning',
      message: `the leader ${leader.pod} ${what} (bound ${formatRoundedDuration(context.staleCycleMs)})`,
      replicas: [leader.pod],
    });
  if (cycle === null) {
    const uptimeMs = leader.uptime_seconds === null ? null : leader.uptime_seconds * 1000;
    if (leader.cycles !== null && uptimeMs !== null && uptimeMs > context.staleCycleMs)
      stale(`has run no cycle in ${formatRoundedDuration(uptimeMs)} of uptime`);
    return;
  }
  if (cycle.ended === null) {
    const since = cycle.started === null ? NaN : context.nowMs - Date.parse(cycle.started);
    if (since > context.staleCycleMs) stale(`has been running one cycle for ${formatRoundedDuration(since)}`);
    return;
  }
  const since = context.nowMs - Date.parse(cycle.ended);
  if (since > context.staleCycleMs) stale(`has finished no cycle for ${formatRoundedDuration(since)}`);
}

/** The findings about leadership: none, several, or disagreement on the holder. */
function leadershipFindings(readable: readonly ReplicaReport[], add: (finding: Finding) => void): ReplicaReport[] {
  const electing = readable.filter((r) => r.leading !== null || r.holder !== null);
  const leaders = readable.filter((r) => r.leading === true);
  if (electing.length > 0 && leaders.length === 0) {
    const holders = groups(electing, (r) => r.holder);
    const seen = holders.length === 0 ? 'none names a holder' : `they name ${describeGroups(holders)} as the holder`;
    add({ kind: 'no_leader', severity: 'critical', message: `no replica leads: ${seen}`, replicas: [] });
  }
  if (leaders.length > 1) {
    const pods = leaders.map((r) => r.pod);
    add({
      kind: 'several_leaders',
      severity: 'critical',
      message: `${pods.length} replicas say they lead: ${names(pods)}`,
      replicas: pods,
    });
  }
  const holders = groups(readable, (r) => r.holder);
  if (holders.length > 1) {
    add({
      kind: 'holder_disagreement',
      severity: 'warning',
      message: `replicas name different holders: ${describeGroups(holders)}`,
      replicas: holders.slice(1).flatMap(([, pods]) => pods),
    });
  }
  return leaders;
}

/** The findings about configuration versions: replicas off the leader's version (or the most common). */
function skewFindings(readable: readonly ReplicaReport[], leaders: readonly ReplicaReport[], add: (finding: Finding) => void): void {
  const versions = groups(readable, (r) => r.config_version);
  if (versions.length <= 1) return;
  const reference = leaders.length === 1 && leaders[0]!.config_version !== null ? leaders[0]!.config_version : versions[0]![0];
  const off = versions.filter(([version]) => version !== reference).flatMap(([, pods]) => pods);
  add({
    kind: 'config_skew',
    severity: 'warning',
    message: `replicas run ${versions.length} configuration versions: ${describeGroups(versions)}`,
    replicas: off,
  });
}

/** The findings about each replica on its own. */
function replicaFindings(replica: ReplicaReport, allUnreachable: boolean, context: FindingsContext, add: (finding: Finding) => void): void {
  const { pod } = replica;
  if (!replica.reachable) {
    const severity: FindingSeverity = allUnreachable ? 'critical' : transient(replica) ? 'info' : 'warning';
    const phase = transient(replica) ? ` (${replica.phase})` : '';
    add({
      kind: 'unreachable',
      severity,
      message: `${pod}${phase} could not be read: ${replica.error ?? 'unknown reason'}`,
      replicas: [pod],
    });
    return;
  }
  if (replica.ready === false) {
    const checks =
      replica.failing_checks.length === 0
        ? 'no check named'
        : replica.failing_checks.map((c) => (c.reason === null ? q(c.name) : `${q(c.name)}: ${q(c.reason)}`)).join('; ');
    add({
      kind: 'not_ready',
      severity: transient(replica) ? 'info' : 'warning',
      message: `${pod} is not ready: ${checks}`,
      replicas: [pod],
    });
  }
  if (replica.caches_fresh === false) {
    const check = replica.failing_checks.find((c) => c.name === 'caches-synced');
    const why = check?.reason == null ? '' : `: ${q(check.reason)}`;
    add({ kind: 'stale_cache', severity: 'warning', message: `${pod}'s informer caches are not fresh${why}`, replicas: [pod] });
  }
  if (replica.certificate_not_after !== null) {
    const leftMs = Date.parse(replica.certificate_not_after) - context.nowMs;
    if (leftMs <= 0) {
      add({
        kind: 'certificate_expiring',
        severity: 'critical',
        message: `${pod}'s serving certificate expired at ${replica.certificate_not_after}`,
        replicas: [pod],
      });
    } else if (leftMs <= context.certificateWarningMs) {
      add({
        kind: 'certificate_expiring',
        severity: 'warning',
        message: `${pod}'s serving certificate expires in ${formatRoundedDuration(leftMs)} (${replica.certificate_not_after})`,
        replicas: [pod],
      });
    }
  }
  const highest = context.highestSubscribers?.get(pod);
  if (replica.event_subscribers !== null && highest !== undefined && replica.event_subscribers < highest) {
    add({
      kind: 'subscribers_dropped',
      severity: 'warning',
      message: `${pod} has ${replica.event_subscribers} event subscribers, ${highest} before: a component may have stopped`,
      replicas: [pod],
    });
  }
}

/**
 * The findings on a fleet, most severe first (then in a fixed order of kinds, then by pod): every
 * {@link FindingKind} a fleet's replicas can show. Pure: the same replicas and context always give
 * the same findings.
 *
 * - `no_replicas` (critical): nothing listed and nothing cut.
 * - `no_leader` (critical): some readable replica publishes leader election, none leads.
 *   `several_leaders` (critical): more than one says it leads. `holder_disagreement` (warning):
 *   readable replicas name different holders (the replicas off the most named holder).
 * - `config_skew` (warning): more than one configuration version; the replicas concerned are those
 *   off the leader's version (or the most common one without a single leader).
 * - `last_cycle_failed` (critical) and `no_recent_cycle` (warning): the leader's last cycle failed;
 *   it finished none for longer than `staleCycleMs` (or one has run that long, or it has run none
 *   in an uptime that long).
 * - `unreachable`: a warning per replica, information for a `Pending` or `Terminating` pod,
 *   critical for each when no replica could be read.
 * - `not_ready` (warning; information while `Pending` or `Terminating`), with the failing checks
 *   and their reasons. `stale_cache` (warning): `caches_fresh` is false.
 * - `certificate_expiring`: warning within `certificateWarningMs`, critical once expired.
 * - `subscribers_dropped` (warning): fewer event subscribers than the highest count of earlier
 *   gathers (`highestSubscribers`).
 * - `truncated` (warning): more pods matched than were read.
 */
export function findingsOf(replicas: readonly ReplicaReport[], context: FindingsContext): Finding[] {
  const findings: Finding[] = [];
  const add = (finding: Finding): void => void findings.push(finding);
  if (replicas.length === 0 && context.truncated !== true) {
    add({ kind: 'no_replicas', severity: 'critical', message: 'the selector matches no pod', replicas: [] });
  }
  if (context.truncated === true) {
    const bound = context.maxReplicas === undefined ? '' : ` (maxReplicas ${context.maxReplicas})`;
    add({
      kind: 'truncated',
      severity: 'warning',
      message: `more pods match than were read${bound}; the rest are not in the report`,
      replicas: [],
    });
  }
  const readable = replicas.filter((r) => r.reachable);
  const leaders = leadershipFindings(readable, add);
  skewFindings(readable, leaders, add);
  for (const leader of leaders) leaderFindings(leader, context, add);
  const allUnreachable = replicas.length > 0 && readable.length === 0;
  for (const replica of replicas) replicaFindings(replica, allUnreachable, context, add);
  return findings
    .map((finding, index) => ({ finding, index }))
    .sort(
      (a, b) =>
        SEVERITY_RANK[a.finding.severity] - SEVERITY_RANK[b.finding.severity] ||
        KIND_ORDER.indexOf(a.finding.kind) - KIND_ORDER.indexOf(b.finding.kind) ||
        a.index - b.index,
    )
    .map(({ finding }) => finding);
}

/** The fleet's status from its findings: `failing` with a critical one, `degraded` with a warning, else `healthy`. */
export function statusOf(findings: readonly Pick<Finding, 'severity'>[]): 'healthy' | 'degraded' | 'failing' {
  if (findings.some((f) => f.severity === 'critical')) return 'failing';
  if (findings.some((f) => f.severity === 'warning')) return 'degraded';
  return 'healthy';
}
