import type { HealthCheckReport, IntrospectionState } from '../state/types';
import { checkStateArgument, describeValue, refuseOptionsInPlace, stringOption } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { apiErrorReason } from './api-error';
import { quoteText } from '../util/cut-text';
import { closeOnce } from '../util/close-once';
import { withTimeout } from '../util/with-timeout';
import type { LeaseApi, LeaseObject } from './lease-api';
import { INT32_MAX, isDate, MAX_IDENTITY_LENGTH, readLeaseRecord, withSpec, type LeaseRecord } from './lease-record';

export type { LeaseApi, LeaseObject, LeaseSpecLike } from './lease-api';

/**
 * Where {@link createLeaseElector} reports leadership, declared here as client-go's `leaderelection`
 * declares its metrics provider: the `ControllerMetrics` of `createControllerMetrics` is one, and a
 * host may write its own.
 */
export interface LeaderReporter {
  /**
   * Leadership changed: `true` when a term starts, `false` when it ends. With `true`,
   * `stillLeading` answers at any later moment whether the term still holds (its renew deadline,
   * read then), so that a reader (a scrape) never says "leading" past the deadline. A throw is
   * recorded as the elector's `lastError`, never thrown into the election.
   */
  setLeader(leading: boolean, stillLeading?: () => boolean): void;
}

/** Options of {@link createLeaseElector}; omitted ones take {@link LEASE_ELECTOR_DEFAULTS}. */
export interface LeaseElectorOptions {
  /** The Lease's namespace. Required. */
  namespace: string;
  /** The Lease's name. Required. */
  name: string;
  /**
   * This replica's identity in the Lease, unique among candidates (the pod name). Required; at
   * most 1024 characters, the longest holder the elector accepts in a Lease.
   */
  identity: string;
  /**
   * How long a candidate waits, after it last saw the lease change, before it takes the lease over
   * from a holder that stopped renewing. Written as `leaseDurationSeconds` (rounded up). Must be
   * greater than `renewDeadlineMs`. Milliseconds; default 15000.
   */
  leaseDurationMs?: number;
  /**
   * How long the leader leads after it last sent a renewal that succeeded: past it, with no other
   * renewal, it no longer leads (at the next read, whatever its timers). Must be greater than
   * `retryPeriodMs` × 1.2. Milliseconds; default 10000.
   */
  renewDeadlineMs?: number;
  /** How often candidates try to acquire and the leader renews (jittered up to × 1.2). Milliseconds; default 2000. */
  retryPeriodMs?: number;
  /**
   * Told of every change of leadership with `setLeader`, when the elector or a read (see
   * {@link LeaseElector.isLeader}) notices it: the `ControllerMetrics` of `createControllerMetrics`,
   * or any {@link LeaderReporter}.
   */
  metrics?: LeaderReporter;
  /**
   * Called when this replica starts leading, with the signal of this term of leadership (as
   * client-go's `OnStartedLeading` gets a context): it aborts the moment the term ends, see
   * {@link LeaseElector.leaderSignal}. Give it to the leader-only work started here. A throw or
   * rejection is recorded as `lastError`.
   */
  onStartedLeading?: (signal: AbortSignal) => void;
  /**
   * Called when this replica stops leading (renew deadline passed, another holder seen, closed),
   * right after the term's signal aborted, by whatever noticed it: the elector's timer, or a read
   * (`isLeader()`, `leaderSignal()`, the variable, the liveness check) that found the renew
   * deadline passed.
   */
  onStoppedLeading?: () => void;
  /** Called when the observed holder changes to another non-empty identity (this replica's included). */
  onNewLeader?: (identity: string) => void;
  /** The `/debug/vars` variable it publishes. Default `leader_election` (the spec's convention: lower case, words joined by `_`). */
  varName?: string;
  /** The liveness check it adds (and removes on `close()`). Default `leader-election`. */
  healthCheckName?: string;
}

/** A running leader election, from {@link createLeaseElector}. */
export interface LeaseElector {
  /**
   * Whether this replica leads now, computed at each call: it holds a term and its last successful
   * renewal was sent no more than `renewDeadlineMs` ago (monotonic clock). A call that finds that
   * deadline passed, as after an event loop stalled longer than it (the elector's own timer has not
   * run yet), ends the term there and then: aborts the term's signal, reports the loss (metrics,
   * event `leader.lost`, `onStoppedLeading`, `lastError`) and answers `false`.
   */
  isLeader(): boolean;
  /**
   * The signal of the current term of leadership, the one `onStartedLeading` got. It aborts when
   * the term ends: renew deadline passed (found by the elector's timer or by a read, synchronously
   * there), another holder in the Lease, `close()`; its `reason` is an `Error` saying why. Its
   * `aborted` and `throwIfAborted()` are reads too: past the renew deadline they abort it first,
   * so a callback that runs after a stalled event loop sees it aborted. When this replica does not
   * lead (checked as {@link LeaseElector.isLeader} does), an aborted signal. Pass it to
   * leader-only work, which stops when leadership does.
   */
  leaderSignal(): AbortSignal;
  /**
   * Runs leader-only work: calls `fn` with the current term's signal and settles as `fn` does,
   * except that once the term ended before `fn` resolved it rejects with the signal's reason, so
   * that a fulfilled promise means the work completed within one term. When this replica does not
   * lead, rejects with that reason without calling `fn`. The elector cannot stop `fn`: `fn` stops
   * when its signal aborts.
   */
  runWhileLeading<T>(fn: (signal: AbortSignal) => T | PromiseLike<T>): Promise<T>;
  /**
   * Stops campaigning and, when this replica leads, stops leading at once (the term's signal
   * aborts before `close()` returns) and releases the Lease (empty holder, 1 s duration) so that
   * another replica takes over at its next retry instead of after a whole lease duration (the
   * release is given `renewDeadlineMs`). Settles within twice `renewDeadlineMs` at the most, even
   * when the Lease API hangs; never rejects. Idempotent: every call answers the same promise. Fits
   * `drain({ close: [elector] })`.
   */
  close(): Promise<void>;
}

/** What the `/debug/vars` variable of a {@link LeaseElector} shows. */
export interface LeaseElectorVariable {
  /** `namespace/name` of the Lease. */
  readonly lease: string;
  /** This replica's identity. */
  readonly identity: string;
  /** Whether this replica leads, as {@link LeaseElector.isLeader} answers at the read. */
  readonly leading: boolean;
  /** The holder in the Lease as last read; empty when nobody holds it. */
  readonly holder: string;
  /** The last non-empty holder observed. */
  readonly observedLeader: string;
  /** `leaseTransitions` as last read. */
  readonly transitions: number;
  /** `leaseDurationSeconds` of the Lease as last read; absent when it had none (a follower then waits its own). */
  readonly holderLeaseDurationSeconds?: number;
  /**
   * While another replica holds the Lease: when its lease runs out unless its record changes
   * before, that is the holder's lease duration after this replica last saw the record change, on
   * this replica's clock, shown as wall time. What a follower waits for (a valid but huge
   * `leaseDurationSeconds`, up to 2147483647 s, shows here as a date decades away).
   */
  readonly holderLeaseExpiresAt?: string;
  /** When this replica last sent a renewal (or acquisition) that succeeded; absent before it ever did. */
  readonly lastRenewal?: string;
  /** The durations it runs with. */
  readonly leaseDurationMs: number;
  /** See {@link LeaseElectorOptions.renewDeadlineMs}. */
  readonly renewDeadlineMs: number;
  /** See {@link LeaseElectorOptions.retryPeriodMs}. */
  readonly retryPeriodMs: number;
  /** Whether the elector was closed. */
  readonly closed: boolean;
  /**
   * The last failure (an API error, an invalid Lease naming its fields, a renew deadline passed
   * during a stall, a callback's throw), cut short; absent when none yet.
   */
  readonly lastError?: string;
}

const WHERE = 'createLeaseElector';
/** client-go's `JitterFactor`: retries wait between the period and 1.2 times it. */
const JITTER_FACTOR = 1.2;
const MAX_DURATION_MS = 3_600_000;
const MAX_ERROR = 200;
const TIMER_TOLERANCE_MS = 2;
/**
 * How late the elector's own timer may run before a renew deadline passed meanwhile is put down to
 * a stalled event loop (a long GC pause, a synchronous call) rather than to the Lease API: more
 * than a busy loop delays a timer.
 */
const STALL_MS = 100;
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

/** A required, non-empty string option of at most `maxLength` characters. */
function requiredString(maxLength?: number): option.OptionEntry<string, undefined> {
  return option.custom(undefined, (i) => {
    const value = stringOption(i.where, i.path, i.value, undefined, 1, undefined, maxLength);
    if (value === undefined) throw new TypeError(`${i.where}: ${i.path} is required (a non-empty string)`);
    return value;
  });
}

/** The options of {@link createLeaseElector}, declared once: kinds, ranges and defaults. */
const LEASE_ELECTOR_SPEC = optionSpec(WHERE, {
  /** Required. */
  namespace: requiredString(),
  /** Required. */
  name: requiredString(),
  /** Required. */
  identity: requiredString(MAX_IDENTITY_LENGTH),
  /** client-go's default: 15 s. */
  leaseDurationMs: option.integer(15_000, { min: 1, max: MAX_DURATION_MS }),
  /** client-go's default: 10 s. */
  renewDeadlineMs: option.integer(10_000, { min: 1, max: MAX_DURATION_MS }),
  /** client-go's default: 2 s. */
  retryPeriodMs: option.integer(2000, { min: 1, max: MAX_DURATION_MS }),
  /** No metrics. */
  metrics: option.custom(undefined, (i) => {
    if (i.value !== undefined && typeof (i.value as Partial<LeaderReporter> | null)?.setLeader !== 'function') {
      throw new TypeError(
        `${i.where}: ${i.path} must be the ControllerMetrics or another LeaderReporter (with setLeader), got ${typeof i.value}`,
      );
    }
    return i.value as LeaderReporter | undefined;
  }),
  /** No callback. */
  onStartedLeading: option.callback<(signal: AbortSignal) => void>('a function taking the signal of the term'),
  /** No callback. */
  onStoppedLeading: option.callback<() => void>('a function'),
  /** No callback. */
  onNewLeader: option.callback<(identity: string) => void>('a function taking the identity'),
  /** The variable `leader_election`. */
  varName: option.string('leader_election', 1),
  /** The check `leader-election`. */
  healthCheckName: option.string('leader-election', 1),
});

/** What the options of {@link createLeaseElector} resolve to when omitted (client-go's durations). Frozen. */
export const LEASE_ELECTOR_DEFAULTS = LEASE_ELECTOR_SPEC.defaults;

/** The options the elector runs with: {@link LeaseElectorOptions} resolved, and the Lease API. */
type ResolvedLeaseElectorOptions = ReturnType<typeof LEASE_ELECTOR_SPEC.resolve> & { readonly api: LeaseApi };

/** The Lease API argument, checked; options given in its place are refused with the call's new shape. */
function checkLeaseApi(api: unknown): LeaseApi {
  refuseOptionsInPlace(WHERE, api, isLeaseApi, ['api', ...LEASE_ELECTOR_SPEC.keys], {
    position: 'second',
    dependency: "the Lease API (client-node's CoordinationV1Api)",
    options: 'third',
    call: 'createLeaseElector(state, api, { namespace, name, identity })',
  });
  if (!isLeaseApi(api)) {
    throw new TypeError(
      `${WHERE}: api must be a Lease API with readNamespacedLease, createNamespacedLease and replaceNamespacedLease (client-node's CoordinationV1Api), got ${describeValue(api)}`,
    );
  }
  return api;
}

/** {@link LeaseElectorOptions} checked, with {@link LEASE_ELECTOR_DEFAULTS} applied. */
function resolveLeaseElectorOptions(api: LeaseApi, options: unknown): ResolvedLeaseElectorOptions {
  if (options === undefined) throw new TypeError(`${WHERE}: options are required (namespace, name, identity)`);
  const resolved = { ...LEASE_ELECTOR_SPEC.resolve(options), api };
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
  if (isDate(value) && !(value instanceof MicroTime)) return new MicroTime(Date.prototype.getTime.call(value));
  return value;
}

/** The HTTP status of a client-node `ApiException` (or anything with a numeric `code`). */
function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

const abortedOf = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get!;

/**
 * Makes `signal` (a term's, made by the elector and not handed out yet) truthful when read: its
 * `aborted` and `throwIfAborted()` run `check` first, which aborts it when the term's renew deadline
 * passed. After a stalled event loop, the first callback that looks at the signal sees it aborted,
 * before the elector's own timer had a chance to run. Everything else is the platform's.
 */
function readTimeSignal(signal: AbortSignal, check: () => void): void {
  Object.defineProperties(signal, {
    aborted: {
      configurable: true,
      get(this: AbortSignal): boolean {
        check();
        return abortedOf.call(this) as boolean;
      },
    },
    throwIfAborted: {
      configurable: true,
      writable: true,
      value(this: AbortSignal): void {
        check();
        AbortSignal.prototype.throwIfAborted.call(this);
      },
    },
  });
}

/**
 * Elects one leader among the replicas of a controller with a `coordination.k8s.io/v1` Lease,
 * with the semantics of client-go's `leaderelection` package, so a Node.js replica can share a
 * Lease with Go ones:
 *
 * - Every `retryPeriodMs` (jittered up to × 1.2) a candidate reads the Lease (creating it when
 *   missing) and takes it when it is free or its holder's record has not changed for the holder's
 *   `leaseDurationSeconds`, measured on this replica's monotonic clock from when it saw the record
 *   change: clocks of other hosts are never compared (a `renewTime` in the future or the past
 *   changes nothing). Writes carry the Lease's resourceVersion, so of two candidates racing, one
 *   gets a 409 and stays a candidate.
 * - Every field of the Lease is checked as the API server stores it (see {@link LeaseSpecLike}): an
 *   invalid Lease is reported in `lastError`, naming the field, and left alone, never taken over
 *   however stale it looks; the candidate keeps reading it every retry period.
 * - The leader renews every `retryPeriodMs`. It leads while its last successful renewal was sent
 *   within `renewDeadlineMs`, computed at every read ({@link LeaseElector.isLeader}, the term's
 *   signal, the variable, the liveness check), so that a replica whose event loop stalled past the
 *   deadline never answers "leading" when it wakes, even before its own timer runs (the first read
 *   or tick also sets the metrics to 0). Past the
 *   deadline (a call that hangs is abandoned there) it stops leading, before any other replica
 *   may take over, and becomes a candidate again; it also stops as soon as it reads another holder.
 * - Each term of leadership has an `AbortSignal` (`onStartedLeading`'s argument,
 *   {@link LeaseElector.leaderSignal}, {@link LeaseElector.runWhileLeading}) that aborts the moment
 *   the term ends, for leader-only work to stop with it, as controller-runtime cancels its context.
 * - `close()` (or `drain({ close: [elector] })`) stops campaigning and releases a held Lease.
 *
 * Each change is reported: `metrics.setLeader`, the callbacks, and the events `leader.elected`,
 * `leader.lost` and `leader.observed` (a new holder). The variable `varName` shows the election
 * as this replica sees it, what a follower waits for included; the liveness check
 * `healthCheckName` fails when a read found the renew deadline passed before the elector's own
 * loop did, until that loop runs again (a loop that is stuck gets the process restarted), as
 * client-go's `HealthzAdaptor` fails a leader that stopped renewing. `close()` removes the check;
 * the variable stays (the state cannot unpublish one) and shows `closed: true`.
 *
 * It starts campaigning at once. Its retry timer keeps the process alive until `close()`, as a
 * running election should; errors never escape its timers: they are recorded in `lastError` and
 * retried.
 *
 * @param state - Where the events, the variable and the liveness check go.
 * @param api - The Lease API: client-node's `CoordinationV1Api`.
 * @throws TypeError on a wrong state or API, or invalid options (an unknown option gets a "did you
 *   mean"; options given second, where the API goes, are refused with the call's new shape).
 */
export function createLeaseElector(state: IntrospectionState, api: LeaseApi, options: LeaseElectorOptions): LeaseElector {
  checkStateArgument(WHERE, state, STATE_METHODS);
  const elector = new Elector(state, resolveLeaseElectorOptions(checkLeaseApi(api), options));
  return {
    isLeader: () => elector.leads(),
    leaderSignal: () => elector.leaderSignal(),
    runWhileLeading: (fn) => elector.runWhileLeading(fn),
    close: elector.close,
  };
}

class Elector {
  /** The running term of leadership: its controller aborts when it ends. */
  private term: AbortController | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  /** The attempt in flight, if any. */
  private attempt: Promise<void> | undefined;
  /** Aborted by close(): the attempt in flight is abandoned. */
  private readonly abandon = new AbortController();
  /** When the elector's own code is due to run next (monotonic ms): its timer, or the deadline of the attempt in flight. */
  private dueAt: number | undefined;
  /** The Lease last read or written, and its record; none while the last one read was invalid. */
  private lease: LeaseObject | undefined;
  private record: LeaseRecord | undefined;
  /** The record last seen, and when it was first seen so (monotonic ms). */
  private observedRecord = '';
  private observedAt = 0;
  private observedLeader = '';
  /** When the last successful acquire or renew was sent: monotonic, and wall clock for the variable. */
  private renewedAt = 0;
  private renewedAtWall: Date | undefined;
  /** A loss a read noticed before the elector's own loop did; cleared when the loop runs. */
  private lostAtRead: { at: number; reason: string } | undefined;
  private lastError: string | undefined;
  private readonly leaseName: string;
  private readonly durationSeconds: number;
  private readonly removeCheck: () => void;
  /** See {@link LeaseElector.close}: bounded by twice `renewDeadlineMs` (the attempt in flight, then the release). */
  readonly close: () => Promise<void>;

  constructor(
    private readonly state: IntrospectionState,
    private readonly o: ResolvedLeaseElectorOptions,
  ) {
    this.leaseName = `${o.namespace}/${o.name}`;
    this.durationSeconds = Math.ceil(o.leaseDurationMs / 1000);
    state.publishVar(o.varName, () => this.variable());
    this.removeCheck = state.addHealthCheck(o.healthCheckName, () => this.health(), { livez: true, readyz: false });
    this.close = closeOnce(2 * o.renewDeadlineMs, () => this.shutDown());
    this.schedule(0);
  }

  /**
   * Whether this replica leads now: a term runs and its last renewal was sent within the renew
   * deadline. A term found past it ends here (see {@link LeaseElector.isLeader}); `byRead` says
   * whether a reader rather than the elector's own loop found it.
   */
  leads(byRead = true): boolean {
    if (this.term === undefined) return false;
    if (performance.now() - this.renewedAt <= this.o.renewDeadlineMs) return true;
    this.expire(byRead);
    return false;
  }

  /** See {@link LeaseElector.leaderSignal}. */
  leaderSignal(): AbortSignal {
    if (this.leads()) return this.term!.signal;
    // A new one each time: listeners a host adds to it are not kept for the elector's lifetime.
    return AbortSignal.abort(new Error(`${this.o.identity} does not lead ${this.leaseName}`));
  }

  /** See {@link LeaseElector.runWhileLeading}. */
  async runWhileLeading<T>(fn: (signal: AbortSignal) => T | PromiseLike<T>): Promise<T> {
    if (typeof fn !== 'function') throw new TypeError(`runWhileLeading(fn) needs a function, got ${describeValue(fn)}`);
    const signal = this.leaderSignal();
    signal.throwIfAborted();
    const result = await fn(signal);
    // Checks the renew deadline: a term past it ends here.
    signal.throwIfAborted();
    return result;
  }

  private variable(): LeaseElectorVariable {
    const leading = this.leads();
    const record = this.record;
    const holder = record?.holder ?? '';
    let expiresAt: string | undefined;
    if (holder !== '' && holder !== this.o.identity) {
      const left = this.observedAt + (record?.durationSeconds ?? this.durationSeconds) * 1000 - performance.now();
      expiresAt = new Date(Date.now() + left).toISOString();
    }
    return {
      lease: this.leaseName,
      identity: this.o.identity,
      leading,
      holder,
      observedLeader: this.observedLeader,
      transitions: record?.transitions ?? 0,
      ...(record?.durationSeconds === undefined ? {} : { holderLeaseDurationSeconds: record.durationSeconds }),
      ...(expiresAt === undefined ? {} : { holderLeaseExpiresAt: expiresAt }),
      ...(this.renewedAtWall === undefined ? {} : { lastRenewal: this.renewedAtWall.toISOString() }),
      leaseDurationMs: this.o.leaseDurationMs,
      renewDeadlineMs: this.o.renewDeadlineMs,
      retryPeriodMs: this.o.retryPeriodMs,
      closed: this.closed,
      ...(this.lastError === undefined ? {} : { lastError: this.lastError }),
    };
  }

  private health(): HealthCheckReport {
    this.leads();
    const lost = this.lostAtRead;
    if (lost !== undefined) {
      const ago = Math.round(performance.now() - lost.at);
      return {
        ok: false,
        detail: `stopped leading ${this.leaseName} ${ago} ms ago, found by a read before the election loop ran: ${lost.reason}`,
      };
    }
    if (this.term !== undefined) return { ok: true, detail: `leads ${this.leaseName}` };
    return { ok: true, detail: this.closed ? 'closed' : `not leading; ${this.observedLeader || 'nobody'} leads` };
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.dueAt = performance.now() + delayMs;
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
   * Ends the term whose renew deadline passed. When the elector's own timer (or the attempt's
   * deadline) was due well before now, the event loop was stalled: that is the reason given, and
   * recorded as `lastError` (an API failure is already there otherwise).
   */
  private expire(byRead: boolean): void {
    const { renewDeadlineMs } = this.o;
    const now = performance.now();
    const late = this.dueAt === undefined ? 0 : now - this.dueAt;
    let reason = `could not renew within ${renewDeadlineMs} ms`;
    if (late > STALL_MS) {
      reason =
        `renew deadline (${renewDeadlineMs} ms) passed while the event loop was stalled for at least ${Math.round(late)} ms ` +
        `(last renewal sent ${Math.round(now - this.renewedAt)} ms ago)`;
      this.recordError(new Error(reason));
    }
    if (byRead) this.lostAtRead = { at: now, reason };
    this.stopLeading(reason);
  }

  /**
   * One acquire-or-renew, bounded; never rejects. The leader's attempt may last until its renew
   * deadline, and a failed one is retried no later than that deadline, where it stops leading (as
   * client-go's renew loop ends when its context expires): a candidate again, it tries to acquire
   * one retry period later.
   */
  private async round(): Promise<void> {
    this.lostAtRead = undefined;
    if (this.term !== undefined && this.renewTimeLeft() <= 0) {
      this.expire(false);
      this.schedule(this.jittered());
      return;
    }
    const budget = this.term === undefined ? this.o.renewDeadlineMs : this.renewTimeLeft() + TIMER_TOLERANCE_MS;
    this.dueAt = performance.now() + budget;
    let sentAt: number | undefined;
    try {
      sentAt = await withTimeout(
        () => this.tryAcquireOrRenew(),
        budget,
        () => new Error(`the Lease API did not answer within ${Math.round(budget)} ms`),
        this.abandon.signal,
      );
    } catch (err) {
      if (!this.closed) this.recordError(err);
    }
    if (this.closed) return;
    this.lostAtRead = undefined;
    if (sentAt !== undefined) this.renewed(sentAt);
    if (this.term !== undefined && sentAt === undefined) {
      const left = this.renewTimeLeft();
      if (left > 0) {
        this.schedule(Math.min(this.jittered(), left + TIMER_TOLERANCE_MS));
        return;
      }
      this.expire(false);
    }
    this.schedule(this.jittered());
  }

  /**
   * A write that made this replica the holder, sent at `sentAt` (monotonic): the lease is its own
   * from then, not from when the answer came (after a stall, that may be long after). An answer
   * that came after the renew deadline counts for nothing: the term ends, or does not start.
   */
  private renewed(sentAt: number): void {
    this.renewedAt = sentAt;
    this.renewedAtWall = new Date(Date.now() - (performance.now() - sentAt));
    if (this.term === undefined) {
      if (performance.now() - sentAt <= this.o.renewDeadlineMs) this.startLeading();
    } else this.leads(false);
  }

  /** Reads and checks the Lease and writes it when this replica may; answers when the write that succeeded was sent. */
  private async tryAcquireOrRenew(): Promise<number | undefined> {
    const { api, namespace, name, identity } = this.o;
    const now = new MicroTime();
    let read: LeaseObject;
    try {
      read = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (statusOf(err) !== 404) throw err;
      return this.create(now);
    }
    if (this.closed) return undefined;
    const record = this.check(read);
    this.observe(read, record);
    const { holder } = record;
    if (holder !== identity) {
      this.stopLeading(
        holder === '' ? 'the Lease was released by another writer' : `the Lease names ${quoteText(holder, 100)} as its holder`,
      );
    }
    if (
      holder !== '' &&
      holder !== identity &&
      this.observedAt + (record.durationSeconds ?? this.durationSeconds) * 1000 > performance.now()
    ) {
      return undefined;
    }
    const renewing = holder === identity;
    const transitions = record.transitions ?? 0;
    const body = withSpec(read, {
      holderIdentity: identity,
      leaseDurationSeconds: this.durationSeconds,
      acquireTime: renewing ? microTime(read.spec?.acquireTime) : now,
      renewTime: now,
      // At int32's maximum the count stays there: the API server stores no more.
      leaseTransitions: renewing ? transitions : Math.min(transitions + 1, INT32_MAX),
    });
    const sentAt = performance.now();
    const replaced = await this.write(() => api.replaceNamespacedLease({ name, namespace, body }));
    if (replaced === undefined || this.closed) return undefined;
    this.observe(replaced, this.check(replaced));
    return sentAt;
  }

  /** Creates the missing Lease, held by this replica; answers when the create was sent. */
  private async create(now: MicroTime): Promise<number | undefined> {
    const { api, namespace, name, identity } = this.o;
    const body: LeaseObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace },
      spec: { holderIdentity: identity, leaseDurationSeconds: this.durationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
    };
    const sentAt = performance.now();
    const created = await this.write(() => api.createNamespacedLease({ namespace, body }));
    if (created === undefined || this.closed) return undefined;
    this.observe(created, this.check(created));
    return sentAt;
  }

  /**
   * The record of a Lease the API answered, checked. An invalid one throws (recorded as
   * `lastError` by the round), and forgets the record observed: once the Lease is valid again, its
   * holder gets a whole lease duration from then.
   */
  private check(lease: unknown): LeaseRecord {
    try {
      return readLeaseRecord(lease, this.o);
    } catch (err) {
      this.observedRecord = '';
      this.lease = undefined;
      this.record = undefined;
      throw err;
    }
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
  private observe(lease: LeaseObject, record: LeaseRecord): void {
    if (this.closed) return;
    this.lease = lease;
    this.record = record;
    if (record.key !== this.observedRecord) {
      this.observedRecord = record.key;
      this.observedAt = performance.now();
    }
    const { holder } = record;
    if (holder !== '' && holder !== this.observedLeader) {
      this.observedLeader = holder;
      this.publish('leader.observed', `${holder} leads ${this.leaseName} (observed by ${this.o.identity})`, holder);
      const { onNewLeader } = this.o;
      if (onNewLeader !== undefined) this.callBack(() => onNewLeader(holder));
    }
  }

  private startLeading(): void {
    const term = new AbortController();
    // Reading the signal checks the renew deadline, as isLeader() does, while its term runs.
    readTimeSignal(term.signal, () => {
      if (this.term === term) this.leads();
    });
    this.term = term;
    // Read at each scrape: a term past its renew deadline ends there.
    this.callBack(() => this.o.metrics?.setLeader(true, () => this.term === term && this.leads()));
    this.publish('leader.elected', `${this.o.identity} became the leader of ${this.leaseName}`, this.o.identity);
    const { onStartedLeading } = this.o;
    if (onStartedLeading !== undefined) this.callBack(() => onStartedLeading(term.signal));
  }

  /** Ends the running term, if any: its signal first, then the metrics, the event and `onStoppedLeading`. */
  private stopLeading(reason: string): void {
    const term = this.term;
    if (term === undefined) return;
    this.term = undefined;
    const summary = `${this.o.identity} stopped leading ${this.leaseName}: ${reason}`;
    term.abort(new Error(summary));
    this.callBack(() => this.o.metrics?.setLeader(false));
    this.publish('leader.lost', summary, this.record?.holder ?? '');
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

  private async shutDown(): Promise<void> {
    const { renewDeadlineMs, identity } = this.o;
    // A term past its renew deadline ends here and has nothing to release.
    const leading = this.leads(false);
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.dueAt = undefined;
    // Leadership ends now, before close() returns; an attempt in flight is abandoned: what it
    // answers no longer counts.
    this.stopLeading('the elector was closed');
    this.abandon.abort(new Error('the elector was closed'));
    await this.attempt;
    this.removeCheck();
    const lease = this.lease;
    if (!leading || lease === undefined || this.record?.holder !== identity) return;
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
   * is valid and still this replica's, released from that copy.
   */
  private async release(held: LeaseObject): Promise<void> {
    const { api, namespace, name, identity } = this.o;
    const free = (lease: LeaseObject): LeaseObject => {
      const now = new MicroTime();
      return withSpec(lease, { holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now });
    };
    try {
      await api.replaceNamespacedLease({ name, namespace, body: free(held) });
    } catch (err) {
      if (statusOf(err) !== 409) throw err;
      const current = await api.readNamespacedLease({ name, namespace });
      if (readLeaseRecord(current, this.o).holder !== identity) return;
      await api.replaceNamespacedLease({ name, namespace, body: free(current) });
    }
  }
}
