/** findingsOf: every kind of finding from replica reports, pure, most severe first. */
import { findingsOf, statusOf, type FindingsContext } from '../../lib/fleet/findings';
import type { Finding, ReplicaReport } from '../../lib/fleet/report';
import { replicaReport } from '../helpers/fleet-report';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const CONTEXT: FindingsContext = { nowMs: NOW, staleCycleMs: 600_000, certificateWarningMs: 7 * 86_400_000 };

function replica(pod: string, fields: Partial<ReplicaReport> = {}): ReplicaReport {
  return replicaReport(pod, { holder: 'a', ...fields });
}

function leader(pod: string, fields: Partial<ReplicaReport> = {}): ReplicaReport {
  return replica(pod, {
    leading: true,
    holder: pod,
    last_cycle: {
      outcome: 'succeeded',
      started: new Date(NOW - 5000).toISOString(),
      ended: new Date(NOW - 4000).toISOString(),
      took_ms: 1000,
      correlation_id: 'c',
      failed_phase: null,
    },
    ...fields,
  });
}

const kinds = (findings: readonly Finding[]): string[] => findings.map((f) => `${f.severity}:${f.kind}:${f.replicas.join(',')}`);

describe('findingsOf', () => {
  it('finds nothing in a healthy fleet', () => {
    const findings = findingsOf([leader('a'), replica('b'), replica('c')], CONTEXT);
    expect(findings).toEqual([]);
    expect(statusOf(findings)).toBe('healthy');
  });

  it('finds no leader, and several leaders', () => {
    const none = findingsOf([replica('a', { holder: 'gone' }), replica('b', { holder: 'gone' })], CONTEXT);
    expect(kinds(none)).toEqual(['critical:no_leader:']);
    expect(none[0]!.message).toBe('no replica leads: they name "gone" (a, b) as the holder');
    expect(statusOf(none)).toBe('failing');
    // No replica publishes leader election: nothing to say about it.
    expect(findingsOf([replica('a', { leading: null, holder: null })], CONTEXT)).toEqual([]);
    const two = findingsOf([leader('a'), leader('b', { holder: 'a' })], CONTEXT);
    expect(kinds(two)).toEqual(['critical:several_leaders:a,b']);
    expect(two[0]!.message).toBe('2 replicas say they lead: a and b');
  });

  it('finds replicas that disagree on the holder, and configuration skew against the leader', () => {
    const findings = findingsOf(
      [leader('a', { config_version: '8' }), replica('b', { holder: 'a' }), replica('c', { holder: 'c' })],
      CONTEXT,
    );
    expect(kinds(findings)).toEqual(['warning:holder_disagreement:c', 'warning:config_skew:b,c']);
    expect(findings[0]!.message).toBe('replicas name different holders: "a" (a, b), "c" (c)');
    expect(findings[1]!.message).toBe('replicas run 2 configuration versions: "7" (b, c), "8" (a)');
    expect(statusOf(findings)).toBe('degraded');
  });

  it('finds a replica not ready with its checks, a stale cache, and information for a pod on its way out', () => {
    const findings = findingsOf(
      [
        leader('a'),
        replica('b', {
          ready: false,
          caches_fresh: false,
          failing_checks: [
            { name: 'caches-synced', reason: 'cache "x" may be stale: watch silent' },
            { name: 'dataplane', reason: null },
          ],
        }),
        replica('c', { ready: false, phase: 'Terminating', failing_checks: [{ name: 'shutdown', reason: 'draining' }] }),
      ],
      CONTEXT,
    );
    expect(kinds(findings)).toEqual(['warning:not_ready:b', 'warning:stale_cache:b', 'info:not_ready:c']);
    expect(findings[0]!.message).toBe('b is not ready: "caches-synced": "cache \\"x\\" may be stale: watch silent"; "dataplane"');
    expect(findings[1]!.message).toBe('b\'s informer caches are not fresh: "cache \\"x\\" may be stale: watch silent"');
  });

  it("finds the leader's failed last cycle and a leader with no recent cycle", () => {
    const failed = findingsOf(
      [
        leader('a', {
          last_cycle: {
            outcome: 'failed',
            started: null,
            ended: new Date(NOW - 1000).toISOString(),
            took_ms: 5,
            correlation_id: 'c-9',
            failed_phase: 'deploy',
          },
        }),
      ],
      CONTEXT,
    );
    expect(kinds(failed)).toEqual(['critical:last_cycle_failed:a']);
    expect(failed[0]!.message).toBe('the leader a\'s last cycle failed in "deploy" (correlation id "c-9")');
    const stale = findingsOf(
      [
        leader('a', {
          last_cycle: {
            outcome: 'succeeded',
            started: null,
            ended: new Date(NOW - 720_000).toISOString(),
            took_ms: 5,
            correlation_id: null,
            failed_phase: null,
          },
        }),
      ],
      CONTEXT,
    );
    expect(kinds(stale)).toEqual(['warning:no_recent_cycle:a']);
    expect(stale[0]!.message).toBe('the leader a has finished no cycle for 12m0s (bound 10m0s)');
    const running = findingsOf(
      [
        leader('a', {
          last_cycle: {
            outcome: 'running',
            started: new Date(NOW - 900_000).toISOString(),
            ended: null,
            took_ms: null,
            correlation_id: null,
            failed_phase: null,
          },
        }),
      ],
      CONTEXT,
    );
    expect(running[0]!.message).toBe('the leader a has been running one cycle for 15m0s (bound 10m0s)');
    const never = findingsOf([leader('a', { last_cycle: null, uptime_seconds: 3600 })], CONTEXT);
    expect(never[0]!.message).toBe('the leader a has run no cycle in 1h0m0s of uptime (bound 10m0s)');
    // A follower's old cycle is no finding; neither is a leader that publishes no pipeline.
    expect(findingsOf([leader('a', { last_cycle: null, cycles: null, uptime_seconds: 3600 })], CONTEXT)).toEqual([]);
  });

  it('finds unreachable replicas: a warning each, information while pending, critical when none can be read', () => {
    const some = findingsOf(
      [
        leader('a'),
        replica('b', { reachable: false, error: 'connection refused' }),
        replica('c', { reachable: false, phase: 'Pending', error: 'the pod has no address yet' }),
      ],
      CONTEXT,
    );
    expect(kinds(some)).toEqual(['warning:unreachable:b', 'info:unreachable:c']);
    expect(some[0]!.message).toBe('b could not be read: connection refused');
    expect(some[1]!.message).toBe('c (Pending) could not be read: the pod has no address yet');
    expect(statusOf(some)).toBe('degraded');
    const all = findingsOf([replica('a', { reachable: false, error: 'x' }), replica('b', { reachable: false, error: 'y' })], CONTEXT);
    expect(kinds(all)).toEqual(['critical:unreachable:a', 'critical:unreachable:b']);
  });

  it('finds certificates expiring within the bound, and expired ones', () => {
    const findings = findingsOf(
      [
        leader('a', { certificate_not_after: new Date(NOW + 86_400_000).toISOString() }),
        replica('b', { certificate_not_after: new Date(NOW - 1000).toISOString() }),
        replica('c', { certificate_not_after: new Date(NOW + 30 * 86_400_000).toISOString() }),
      ],
      CONTEXT,
    );
    expect(kinds(findings)).toEqual(['critical:certificate_expiring:b', 'warning:certificate_expiring:a']);
    expect(findings[1]!.message).toBe("a's serving certificate expires in 24h0m0s (2026-06-02T12:00:00.000Z)");
  });

  it('finds fewer event subscribers than the highest count seen before', () => {
    const replicas = [leader('a', { event_subscribers: 1 }), replica('b', { event_subscribers: 4 })];
    expect(findingsOf(replicas, CONTEXT)).toEqual([]);
    const findings = findingsOf(replicas, {
      ...CONTEXT,
      highestSubscribers: new Map([
        ['a', 3],
        ['b', 4],
      ]),
    });
    expect(kinds(findings)).toEqual(['warning:subscribers_dropped:a']);
    expect(findings[0]!.message).toBe('a has 1 event subscribers, 3 before: a component may have stopped');
  });

  it('finds no replicas, and a truncated list', () => {
    expect(kinds(findingsOf([], CONTEXT))).toEqual(['critical:no_replicas:']);
    expect(kinds(findingsOf([leader('a')], { ...CONTEXT, truncated: true, maxReplicas: 1 }))).toEqual(['warning:truncated:']);
    expect(findingsOf([leader('a')], { ...CONTEXT, truncated: true, maxReplicas: 1 })[0]!.message).toBe(
      'more pods match than were read (maxReplicas 1); the rest are not in the report',
    );
  });

  it('orders the findings most severe first, and is pure', () => {
    const replicas = [
      replica('a', { ready: false, failing_checks: [{ name: 'x', reason: null }] }),
      replica('b', { reachable: false, error: 'refused' }),
      leader('c', {
        last_cycle: { outcome: 'failed', started: null, ended: null, took_ms: null, correlation_id: null, failed_phase: null },
      }),
      leader('d'),
    ];
    const first = findingsOf(replicas, { ...CONTEXT, truncated: true });
    expect(first.map((f) => f.severity)).toEqual(
      [...first.map((f) => f.severity)].sort(
        (x, y) => ['critical', 'warning', 'info'].indexOf(x) - ['critical', 'warning', 'info'].indexOf(y),
      ),
    );
    expect(kinds(first).slice(0, 2)).toEqual(['critical:several_leaders:c,d', 'critical:last_cycle_failed:c']);
    expect(findingsOf(replicas, { ...CONTEXT, truncated: true })).toEqual(first);
  });
});
