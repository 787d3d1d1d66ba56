// The fleet report: what `GET /debug/fleet` answers, what the doctor prints and what the console's
// fleet page draws. Plain JSON, versioned by `kind`. Everything in it that came from a peer is
// untrusted text: bounded, never markup.

/** How bad a finding is. `critical`: the fleet does not do its job; `warning`: it will not soon. */
export type FindingSeverity = 'critical' | 'warning' | 'info';

/**
 * The kinds of findings, each a question an operator asks first.
 * - `no_leader`: no readable replica leads.
 * - `several_leaders`: more than one replica says it leads.
 * - `holder_disagreement`: replicas name different holders.
 * - `config_skew`: replicas run different configuration versions.
 * - `not_ready`: a replica's readiness fails (the failing checks are named).
 * - `last_cycle_failed`: the leader's last reconciliation cycle failed.
 * - `no_recent_cycle`: the leader finished no cycle for longer than `staleCycleMs`.
 * - `unreachable`: a replica could not be read (the reason is given).
 * - `stale_cache`: a replica's informer caches are not fresh.
 * - `certificate_expiring`: a replica's serving certificate expires within `certificateWarningMs`
 *   (critical when expired).
 * - `subscribers_dropped`: a replica has fewer event subscribers than it had before (the spec's
 *   sign of a stopped component).
 * - `no_replicas`: the selector matches no pod.
 * - `truncated`: more pods match than `maxReplicas`; the rest were not read.
 */
export type FindingKind =
  | 'no_leader'
  | 'several_leaders'
  | 'holder_disagreement'
  | 'config_skew'
  | 'not_ready'
  | 'last_cycle_failed'
  | 'no_recent_cycle'
  | 'unreachable'
  | 'stale_cache'
  | 'certificate_expiring'
  | 'subscribers_dropped'
  | 'no_replicas'
  | 'truncated';

/** One finding: what is wrong, how bad, and which replicas (pod names) it concerns. */
export interface Finding {
  /** What is wrong. */
  readonly kind: FindingKind;
  /** How bad it is. */
  readonly severity: FindingSeverity;
  /** One line for a person, naming the replicas and the values. */
  readonly message: string;
  /** The pods it concerns (empty when it concerns the fleet as a whole). */
  readonly replicas: readonly string[];
}

/** A replica's last reconciliation cycle, from its `pipeline` variable. */
export interface ReplicaCycle {
  /** `succeeded`, `failed`, `running`, or what the replica said (bounded). */
  readonly outcome: string;
  /** When it started (ISO 8601), or null. */
  readonly started: string | null;
  /** When it ended (ISO 8601), or null while running. */
  readonly ended: string | null;
  /** How long it took in milliseconds, or null while running. */
  readonly took_ms: number | null;
  /** Its correlation id, which `/debug/vars/events` and the replica's console know. */
  readonly correlation_id: string | null;
  /** The phase that failed, or null. */
  readonly failed_phase: string | null;
}

/** A readiness or health check that fails on a replica. */
export interface FailingCheck {
  /** The check's name (`caches-synced`, `config-loaded`, …). */
  readonly name: string;
  /** Its reason, when the replica gave one. */
  readonly reason: string | null;
}

/** What one replica said about itself, or why it could not be read. */
export interface ReplicaReport {
  /** The pod's name (for the doctor on a single replica: its URL's host). */
  readonly pod: string;
  /** Where it was read: `http(s)://address:port`, or null when the pod has no address yet. */
  readonly address: string | null;
  /**
   * The pod's phase as the API server reports it (`Running`, `Pending`, …), `Terminating` while the
   * pod is being deleted (as kubectl shows it), or null.
   */
  readonly phase: string | null;
  /** Whether the replica was read; when false, `error` says why and the fields below are null. */
  readonly reachable: boolean;
  /** Why it could not be read (timeout, refused, 401/403, over the byte bound, not JSON, …). */
  readonly error: string | null;
  /** Whether its readiness passes (its `/readyz`), or null when unknown. */
  readonly ready: boolean | null;
  /** The readiness and health checks that fail. */
  readonly failing_checks: readonly FailingCheck[];
  /** Whether it says it leads, or null when it publishes no leader election. */
  readonly leading: boolean | null;
  /** The holder it sees, or null. */
  readonly holder: string | null;
  /** Its configuration version, or null when no configuration is loaded. */
  readonly config_version: string | null;
  /** Its last reconciliation cycle, or null when it has run none (or publishes no pipeline). */
  readonly last_cycle: ReplicaCycle | null;
  /** Its cycle counts since it started, or null. */
  readonly cycles: {
    /** Cycles run. */
    readonly total: number;
    /** Cycles that succeeded. */
    readonly succeeded: number;
    /** Cycles that failed. */
    readonly failed: number;
  } | null;
  /** Seconds since it started, or null. */
  readonly uptime_seconds: number | null;
  /** Its active event subscribers, or null when it does not publish them. */
  readonly event_subscribers: number | null;
  /**
   * Whether its informer caches are fresh (its `caches-synced` check): true when it passes, false
   * when it fails because a cache may be stale (its watch went silent), null when it has no such
   * check or its caches have not synced yet (a `not_ready` then names the check).
   */
  readonly caches_fresh: boolean | null;
  /** When its serving certificate expires (ISO 8601), or null when it serves plain HTTP. */
  readonly certificate_not_after: string | null;
  /** How long reading it took, in milliseconds. */
  readonly read_ms: number;
}

/** What `GET /debug/fleet` answers. */
export interface FleetReport {
  /** `FleetReport`, version 1. */
  readonly kind: 'FleetReport';
  /** The report's version. */
  readonly version: 1;
  /** When it was gathered (ISO 8601). */
  readonly gathered: string;
  /** How long gathering took, in milliseconds. */
  readonly took_ms: number;
  /** The replica that answered (its pod name, or null when unknown). */
  readonly observer: string | null;
  /** The namespace and label selector the replicas were listed with (null for a single replica). */
  readonly source: {
    /** The namespace of the pods. */
    readonly namespace: string;
    /** The Deployment's label selector. */
    readonly selector: string;
  } | null;
  /** `healthy` when there are no findings above `info`. */
  readonly status: 'healthy' | 'degraded' | 'failing';
  /** The findings, most severe first. */
  readonly findings: readonly Finding[];
  /** The replicas, sorted by pod name. */
  readonly replicas: readonly ReplicaReport[];
}
