import type { ControllerMetrics } from '../metrics/controller-metrics';
import type { IntrospectionState } from '../state/types';
import { checkStateArgument, stringOption } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { apiErrorReason } from '../util/api-error';
import { withTimeout } from '../util/with-timeout';

/**
 * A `coordination.k8s.io/v1` Lease's spec as the elector reads and writes it. Times are
 * MicroTimes: client-node 1.x hands them over as the API server's text, a client that parses them
 * as `Date`s; the elector writes them with six fractional digits, as the API server requires.
 */
export interface LeaseSpecLike {
  /** Who holds the lease; empty or absent when nobody does (a released lease). */
  holderIdentity?: string;
  /** How long, after the holder's last renewal as a candidate observes it, the lease is the holder's. */
  leaseDurationSeconds?: number;
  /** When the current holder acquired the lease. */
  acquireTime?: Date | string;
  /** When the holder last renewed it. */
  renewTime?: Date | string;
  /** How many times the holder changed. */
  leaseTransitions?: number;
}

/**
 * A Lease object as the elector needs it: client-node's `V1Lease` fits. The whole object read is
 * written back (with its `metadata.resourceVersion`), so a replace loses to any write in between.
 */
export interface LeaseObject {
  /** `coordination.k8s.io/v1` when the API server answered it. */
  apiVersion?: string;
  /** `Lease` when the API server answered it. */
  kind?: string;
  /** Its name, namespace and the resourceVersion that guards a replace. */
  metadata?: {
    /** The Lease's name. */
    name?: string;
    /** The Lease's namespace. */
    namespace?: string;
    /** The version a replace must match, or the API server answers 409. */
    resourceVersion?: string;
  };
  /** The election record. */
  spec?: LeaseSpecLike;
}

/**
 * The three calls of client-node's `CoordinationV1Api` (1.x and 2.x: object parameters) the
 * elector makes, written structurally so this package does not depend on client-node:
 * `kc.makeApiClient(k8s.CoordinationV1Api)` fits. A failed call rejects with an error carrying the
 * HTTP status as a numeric `code` (client-node's `ApiException`): 404 on a missing Lease, 409 on a
 * lost race.
 */
export interface LeaseApi {
  /** GET the Lease. */
  readNamespacedLease(param: { name: string; namespace: string }): Promise<LeaseObject>;
  /** POST a new Lease. */
  createNamespacedLease(param: { namespace: string; body: LeaseObject }): Promise<LeaseObject>;
  /** PUT the Lease, guarded by the body's `metadata.resourceVersion`. */
  replaceNamespacedLease(param: { name: string; namespace: string; body: LeaseObject }): Promise<LeaseObject>;
}

/** Options of {@link createLeaseElector}; omitted ones take {@link LEASE_ELECTOR_DEFAULTS}. */
export interface LeaseElectorOptions {
  /** The Lease API: client-node's `CoordinationV1Api`. Required. */
  api: LeaseApi;
  /** The Lease's namespace. Required. */
  namespace: string;
  /** The Lease's name. Required. */
  name: string;
  /** This replica's identity in the Lease, unique among candidates (the pod name). Required. */
  identity: string;
  /**
   * How long a candidate waits, after it last saw the lease change, before it takes the lease over
   * from a holder that stopped renewing. Written as `leaseDurationSeconds` (rounded up). Must be
   * greater than `renewDeadlineMs`. Milliseconds; default 15000.
   */
  leaseDurationMs?: number;
  /**
   * How long the leader keeps trying to renew before it stops leading. Must be greater than
   * `retryPeriodMs` × 1.2. Milliseconds; default 10000.
   */
  renewDeadlineMs?: number;
  /** How often candidates try to acquire and the leader renews (jittered up to × 1.2). Milliseconds; default 2000. */
  retryPeriodMs?: number;
  /** Told of every change of leadership with `setLeader`. */
  metrics?: Pick<ControllerMetrics, 'setLeader'>;
  /** Called when this replica starts leading. A throw or rejection is recorded as `lastError`. */
  onStartedLeading?: () => void;
  /** Called when this replica stops leading (lost, released or closed). */
  onStoppedLeading?: () => void;
  /** Called when the observed holder changes to another non-empty identity (this replica's included). */
  onNewLeader?: (identity: string) => void;
  /** The `/debug/vars` variable it publishes. Default `leaderElection`. */
  varName?: string;
  /** The liveness check it adds (and removes on `close()`). Default `leader-election`. */
  healthCheckName?: string;
}

/** A running leader election, from {@link createLeaseElector}. */
export interface LeaseElector {
  /** Whether this replica leads now. */
  isLeader(): boolean;
  /**
   * Stops campaigning and, when this replica leads, stops leading and releases the Lease (empty
   * holder, 1 s duration) so that another replica takes over at its next retry instead of after a
   * whole lease duration. Settles within about twice `renewDeadlineMs`; never rejects. Idempotent.
   * Fits `drain({ close: [elector] })`.
   */
  close(): Promise<void>;
}

/** What the `/debug/vars` variable of a {@link LeaseElector} shows. */
export interface LeaseElectorVariable {
  /** `namespace/name` of the Lease. */
  readonly lease: string;
  /** This replica's identity. */
  readonly identity: string;
  /** Whether this replica leads. */
  readonly leading: boolean;
  /** The holder in the Lease as last read; empty when nobody holds it. */
  readonly holder: string;
  /** The last non-empty holder observed. */
  readonly observedLeader: string;
  /** `leaseTransitions` as last read. */
  readonly transitions: number;
  /** When this replica last renewed (or acquired) the Lease; absent before it ever did. */
  readonly lastRenewal?: string;
  /** The durations it runs with. */
  readonly leaseDurationMs: number;
  /** See {@link LeaseElectorOptions.renewDeadlineMs}. */
  readonly renewDeadlineMs: number;
  /** See {@link LeaseElectorOptions.retryPeriodMs}. */
  readonly retryPeriodMs: number;
  /** Whether the elector was closed. */
  readonly closed: boolean;
  /** The last failure (an API error, a callback's throw), cut short; absent when none yet. */
  readonly lastError?: string;
}

const WHERE = 'createLeaseElector';
/** client-go's `JitterFactor`: retries wait between the period and 1.2 times it. */
const JITTER_FACTOR = 1.2;
const MAX_DURATION_MS = 3_600_000;
const MAX_ERROR = 200;
const TIMER_TOLERANCE_MS = 2;
const STATE_METHODS = ['publishEvent', 'publishVar', 'addHealthCheck'] as const;

function isLeaseApi(value: unknown): value is LeaseApi {
  const api = value as Partial<Record<keyof LeaseApi, unknown>> | null;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof api?.readNamespacedLease === 'function' &&
    typeof api.createNamespacedLease === 'function' &&
    typeof api.replaceNamespacedLease === 'function'
  );
}

/** A required, non-empty string option. */
function requiredString(): option.OptionEntry<string, undefined> {
  return option.custom(undefined, (i) => {
    const value = stringOption(i.where, i.path, i.value, undefined, 1);
    if (value === undefined) throw new TypeError(`${i.where}: ${i.path} is required (a non-empty string)`);
    return value;
  });
}

/** The options of {@link createLeaseElector}, declared once: kinds, ranges and defaults. */
const LEASE_ELECTOR_SPEC = optionSpec(WHERE, {
  /** Required: client-node's CoordinationV1Api. */
  api: option.custom(undefined, (i) => {
    if (!isLeaseApi(i.value)) {
      throw new TypeError(
        `${i.where}: ${i.path} must be a Lease API with readNamespacedLease, createNamespacedLease and replaceNamespacedLease (client-node's CoordinationV1Api)`,
      );
    }
    return i.value;
  }),
  /** Required. */
  namespace: requiredString(),
  /** Required. */
  name: requiredString(),
  /** Required. */
  identity: requiredString(),
  /** client-go's default: 15 s. */
  leaseDurationMs: option.integer(15_000, { min: 1, max: MAX_DURATION_MS }),
  /** client-go's default: 10 s. */
  renewDeadlineMs: option.integer(10_000, { min: 1, max: MAX_DURATION_MS }),
  /** client-go's default: 2 s. */
  retryPeriodMs: option.integer(2000, { min: 1, max: MAX_DURATION_MS }),
  /** No metrics. */
  metrics: option.custom(undefined, (i) => {
    if (i.value !== undefined && typeof (i.value as Partial<ControllerMetrics> | null)?.setLeader !== 'function') {
      throw new TypeError(`${i.where}: ${i.path} must be the ControllerMetrics (with setLeader), got ${typeof i.value}`);
    }
    return i.value as Pick<ControllerMetrics, 'setLeader'> | undefined;
  }),
  /** No callback. */
  onStartedLeading: option.callback<() => void>('a function'),
  /** No callback. */
  onStoppedLeading: option.callback<() => void>('a function'),
  /** No callback. */
  onNewLeader: option.callback<(identity: string) => void>('a function taking the identity'),
  /** The variable `leaderElection`. */
  varName: option.string('leaderElection', 1),
  /** The check `leader-election`. */
  healthCheckName: option.string('leader-election', 1),
});

/** What the options of {@link createLeaseElector} resolve to when omitted (client-go's durations). Frozen. */
export const LEASE_ELECTOR_DEFAULTS = LEASE_ELECTOR_SPEC.defaults;

type ResolvedLeaseElectorOptions = ReturnType<typeof LEASE_ELECTOR_SPEC.resolve>;

/** {@link LeaseElectorOptions} checked, with {@link LEASE_ELECTOR_DEFAULTS} applied. */
function resolveLeaseElectorOptions(options: unknown): ResolvedLeaseElectorOptions {
  if (options === undefined) throw new TypeError(`${WHERE}: options are required (api, namespace, name, identity)`);
  const resolved = LEASE_ELECTOR_SPEC.resolve(options);
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = resolved;
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new TypeError(`${WHERE}: leaseDurationMs (${leaseDurationMs}) must be greater than renewDeadlineMs (${renewDeadlineMs})`);
  }
  if (renewDeadlineMs <= retryPeriodMs * JITTER_FACTOR) {
    throw new TypeError(
      `${WHERE}: renewDeadlineMs (${renewDeadlineMs}) must be greater than retryPeriodMs × ${JITTER_FACTOR} (${retryPeriodMs * JITTER_FACTOR})`,
    );
  }
  return resolved;
}

/** A MicroTime: a `Date` whose JSON has the six fractional digits the API server requires. */
class MicroTime extends Date {
  override toISOString(): string {
    return `${super.toISOString().slice(0, -1)}000Z`;
  }
}

/** A time read from a Lease, as it is written back: text as read, a `Date` with six digits. */
function microTime(value: Date | string | undefined): Date | string | undefined {
  if (value instanceof Date && !(value instanceof MicroTime)) return new MicroTime(value.getTime());
  return value;
}

function timeText(value: Date | string | undefined): string {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
  return typeof value === 'string' ? value : '';
}

/** The HTTP status of a client-node `ApiException` (or anything with a numeric `code`). */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/**
 * Elects one leader among the replicas of a controller with a `coordination.k8s.io/v1` Lease,
 * with the semantics of client-go's `leaderelection` package, so a Node.js replica can share a
 * Lease with Go ones:
 *
 * - Every `retryPeriodMs` (jittered up to × 1.2) a candidate reads the Lease (creating it when
 *   missing) and takes it when it is free or its holder's record has not changed for the holder's
 *   `leaseDurationSeconds`, measured on this replica's monotonic clock from when it saw the record
 *   change: clocks of other hosts are never compared. Writes carry the Lease's resourceVersion,
 *   so of two candidates racing, one gets a 409 and stays a candidate.
 * - The leader renews every `retryPeriodMs`; when no renewal succeeded for `renewDeadlineMs` (a
 *   call that hangs is abandoned at that deadline) it stops leading, before any other replica may
 *   take over, and becomes a candidate again.
 * - `close()` (or `drain({ close: [elector] })`) stops campaigning and releases a held Lease.
 *
 * Each change is reported: `metrics.setLeader`, the callbacks, and the events `leader.elected`,
 * `leader.lost` and `leader.observed` (a new holder). The variable `varName` shows the election
 * as this replica sees it; the liveness check `healthCheckName` fails when this replica believes
 * it leads but has not renewed for longer than `renewDeadlineMs` (its loop is stuck), as
 * client-go's `HealthzAdaptor` does. `close()` removes the check; the variable stays (the state
 * cannot unpublish one) and shows `closed: true`.
 *
 * It starts campaigning at once. Its retry timer keeps the process alive until `close()`, as a
 * running election should; errors never escape its timers: they are recorded in `lastError` and
 * retried.
 *
 * @throws TypeError on invalid options (an unknown option gets a "did you mean").
 */
export function createLeaseElector(state: IntrospectionState, options: LeaseElectorOptions): LeaseElector {
  checkStateArgument(WHERE, state, STATE_METHODS);
  const elector = new Elector(state, resolveLeaseElectorOptions(options));
  return { isLeader: () => elector.leading, close: () => elector.close() };
}

class Elector {
  leading = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The attempt in flight, if any. */
  private attempt: Promise<void> | undefined;
  private readonly abort = new AbortController();
  /** The Lease as last read or written. */
  private lease: LeaseObject | undefined;
  /** The record last seen, and when it was first seen so (monotonic ms). */
  private observedRecord = '';
  private observedAt = 0;
  private observedLeader = '';
  /** The last successful acquire or renew: monotonic, and wall clock for the variable. */
  private renewedAt = 0;
  private renewedAtWall: Date | undefined;
  private lastError: string | undefined;
  private readonly leaseName: string;
  private readonly durationSeconds: number;
  private readonly removeCheck: () => void;

  constructor(
    private readonly state: IntrospectionState,
    private readonly o: ResolvedLeaseElectorOptions,
  ) {
    this.leaseName = `${o.namespace}/${o.name}`;
    this.durationSeconds = Math.ceil(o.leaseDurationMs / 1000);
    state.publishVar(o.varName, () => this.variable());
    this.removeCheck = state.addHealthCheck(o.healthCheckName, () => this.health(), { livez: true, readyz: false });
    this.schedule(0);
  }

  private variable(): LeaseElectorVariable {
    const spec = this.lease?.spec ?? {};
    return {
      lease: this.leaseName,
      identity: this.o.identity,
      leading: this.leading,
      holder: spec.holderIdentity ?? '',
      observedLeader: this.observedLeader,
      transitions: spec.leaseTransitions ?? 0,
      ...(this.renewedAtWall === undefined ? {} : { lastRenewal: this.renewedAtWall.toISOString() }),
      leaseDurationMs: this.o.leaseDurationMs,
      renewDeadlineMs: this.o.renewDeadlineMs,
      retryPeriodMs: this.o.retryPeriodMs,
      closed: this.closed,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    };
  }

  private health(): { ok: boolean; detail: string } {
    if (!this.leading) return { ok: true, detail: this.closed ? 'closed' : `not leading; ${this.observedLeader || 'nobody'} leads` };
    const age = performance.now() - this.renewedAt;
    if (age > this.o.renewDeadlineMs) {
      return {
        ok: false,
        detail: `leads ${this.leaseName} but last renewed ${Math.round(age)} ms ago (renew deadline ${this.o.renewDeadlineMs} ms)`,
      };
    }
    return { ok: true, detail: `leads ${this.leaseName}` };
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    // Ref'd: a running election keeps the process alive until close().
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.attempt = this.round().finally(() => {
        this.attempt = undefined;
      });
    }, delayMs);
  }

  private jittered(): number {
    return this.o.retryPeriodMs * (1 + Math.random() * (JITTER_FACTOR - 1));
  }

  /** How long the leader has left to renew (monotonic ms); 0 or less once its renew deadline passed. */
  private renewTimeLeft(): number {
    // A timer may fire a millisecond before the clock shows its delay elapsed.
    return this.renewedAt + this.o.renewDeadlineMs - performance.now() - TIMER_TOLERANCE_MS;
  }

  /**
   * One acquire-or-renew, bounded; never rejects. The leader's attempt may last until its renew
   * deadline, and a failed one is retried no later than that deadline, where it stops leading (as
   * client-go's renew loop ends when its context expires): a candidate again, it tries to acquire
   * one retry period later.
   */
  private async round(): Promise<void> {
    const { renewDeadlineMs } = this.o;
    if (this.leading && this.renewTimeLeft() <= 0) {
      this.stopLeading(`could not renew within ${renewDeadlineMs} ms`);
      this.schedule(this.jittered());
      return;
    }
    const budget = this.leading ? this.renewTimeLeft() + TIMER_TOLERANCE_MS : renewDeadlineMs;
    let acquired = false;
    try {
      acquired = await withTimeout(
        () => this.tryAcquireOrRenew(),
        budget,
        () => new Error(`the Lease API did not answer within ${Math.round(budget)} ms`),
        this.abort.signal,
      );
    } catch (err) {
      if (!this.closed) this.recordError(err);
    }
    if (this.closed) return;
    if (acquired) {
      this.renewedAt = performance.now();
      this.renewedAtWall = new Date();
      if (!this.leading) this.startLeading();
      this.schedule(this.jittered());
    } else if (this.leading) {
      const left = this.renewTimeLeft();
      if (left <= 0) {
        this.stopLeading(`could not renew within ${renewDeadlineMs} ms`);
        this.schedule(this.jittered());
      } else this.schedule(Math.min(this.jittered(), left + TIMER_TOLERANCE_MS));
    } else this.schedule(this.jittered());
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { api, namespace, name, identity } = this.o;
    const now = new MicroTime();
    let lease: LeaseObject;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      const body: LeaseObject = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: this.durationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0,
        },
      };
      const created = await this.write(() => api.createNamespacedLease({ namespace, body }));
      if (created === undefined || this.closed) return false;
      this.observe(created);
      return true;
    }
    if (this.closed) return false;
    this.observe(lease);
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const holderDurationMs = (spec.leaseDurationSeconds ?? this.durationSeconds) * 1000;
    if (holder !== '' && holder !== identity && this.observedAt + holderDurationMs > performance.now()) return false;
    const renewing = holder === identity;
    const transitions = spec.leaseTransitions ?? 0;
    const body: LeaseObject = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: identity,
        leaseDurationSeconds: this.durationSeconds,
        acquireTime: renewing ? microTime(spec.acquireTime) : now,
        renewTime: now,
        leaseTransitions: renewing ? transitions : transitions + 1,
      },
    };
    const replaced = await this.write(() => api.replaceNamespacedLease({ name, namespace, body }));
    if (replaced === undefined || this.closed) return false;
    this.observe(replaced);
    return true;
  }

  /** A create or replace; a 409 (another replica wrote first) is a lost round, answered `undefined`. */
  private async write(call: () => Promise<LeaseObject>): Promise<LeaseObject | undefined> {
    try {
      return await call();
    } catch (err) {
      if (statusOf(err) !== 409) throw err;
      this.recordError(err);
      return undefined;
    }
  }

  /** Notes the record read or written; a changed record restarts the holder's lease on this replica's clock. */
  private observe(lease: LeaseObject): void {
    if (this.closed) return;
    this.lease = lease;
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const record = JSON.stringify([
      holder,
      spec.leaseDurationSeconds ?? null,
      timeText(spec.acquireTime),
      timeText(spec.renewTime),
      spec.leaseTransitions ?? null,
    ]);
    if (record !== this.observedRecord) {
      this.observedRecord = record;
      this.observedAt = performance.now();
    }
    if (holder !== '' && holder !== this.observedLeader) {
      this.observedLeader = holder;
      this.publish('leader.observed', `${holder} leads ${this.leaseName} (observed by ${this.o.identity})`, holder);
      const { onNewLeader } = this.o;
      if (onNewLeader !== undefined) this.callBack(() => onNewLeader(holder));
    }
  }

  private startLeading(): void {
    this.leading = true;
    this.o.metrics?.setLeader(true);
    this.publish('leader.elected', `${this.o.identity} became the leader of ${this.leaseName}`, this.o.identity);
    const { onStartedLeading } = this.o;
    if (onStartedLeading !== undefined) this.callBack(onStartedLeading);
  }

  private stopLeading(reason: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.o.metrics?.setLeader(false);
    this.publish('leader.lost', `${this.o.identity} stopped leading ${this.leaseName}: ${reason}`, this.lease?.spec?.holderIdentity ?? '');
    const { onStoppedLeading } = this.o;
    if (onStoppedLeading !== undefined) this.callBack(onStoppedLeading);
  }

  private publish(type: string, summary: string, holder: string): void {
    try {
      this.state.publishEvent(type, summary, { details: { lease: this.leaseName, identity: this.o.identity, holder } });
    } catch (err) {
      this.recordError(err);
    }
  }

  /** A host callback: a throw or a rejection is recorded, never thrown into the election. */
  private callBack(callback: () => unknown): void {
    try {
      const result = callback() as PromiseLike<unknown> | undefined;
      if (typeof result?.then === 'function') result.then(undefined, (err: unknown) => this.recordError(err));
    } catch (err) {
      this.recordError(err);
    }
  }

  private recordError(err: unknown): void {
    this.lastError = apiErrorReason(err, MAX_ERROR);
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const { renewDeadlineMs, identity } = this.o;
    const leading = this.leading;
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    // An attempt in flight is abandoned: what it answers no longer counts.
    this.abort.abort(new Error('the elector was closed'));
    await this.attempt;
    this.stopLeading('released');
    this.removeCheck();
    const lease = this.lease;
    if (!leading || lease === undefined || lease.spec?.holderIdentity !== identity) return;
    try {
      await withTimeout(
        () => this.release(lease),
        renewDeadlineMs,
        () => new Error(`releasing the Lease took longer than ${renewDeadlineMs} ms`),
      );
    } catch (err) {
      // Another replica takes over after the lease duration instead.
      this.recordError(err);
    }
  }

  /**
   * Writes the Lease free: no holder, a 1 s duration, transitions unchanged. A renewal abandoned by
   * close() may have landed meanwhile (a 409 on the copy held): the Lease is read again and, if it
   * is still this replica's, released from that copy.
   */
  private async release(held: LeaseObject): Promise<void> {
    const { api, namespace, name, identity } = this.o;
    const free = (lease: LeaseObject): LeaseObject => {
      const now = new MicroTime();
      return { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now } };
    };
    try {
      await api.replaceNamespacedLease({ name, namespace, body: free(held) });
    } catch (err) {
      if (statusOf(err) !== 409) throw err;
      const current = await api.readNamespacedLease({ name, namespace });
      if (current.spec?.holderIdentity !== identity) return;
      await api.replaceNamespacedLease({ name, namespace, body: free(current) });
    }
  }
}
