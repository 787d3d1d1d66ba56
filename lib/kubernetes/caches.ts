import type { IntrospectionState, ReadinessGate } from '../state/types';
import { checkStateArgument, integerOption } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { closeOnce } from '../util/close-once';
import { cutText } from '../util/cut-text';
import { apiErrorReason } from './api-error';

/**
 * The part of a `@kubernetes/client-node` informer that {@link waitForCaches} drives. It is
 * written structurally, so this package has no dependency on client-node: what `makeInformer`
 * returns fits, unstarted.
 */
export interface InformerLike {
  /**
   * Lists, then watches. client-node resolves it even when the LIST failed, after calling the
   * error callbacks, so resolution alone is no sign of a synced cache.
   */
  start(): PromiseLike<void>;
  /**
   * Registers a callback. `waitForCaches` registers one for `error`, which client-node calls when
   * the LIST or the watch fails (it then stops), and one for each of `add`, `update`, `delete` and
   * `connect`, what the cache hears from the API server: the freshness check counts each as a
   * sign of life. An informer that refuses those verbs (throws) is not checked for freshness.
   */
  on(verb: string, callback: (arg?: unknown) => void): void;
  /** Unregisters a callback; called by the gate's `close()`. */
  off?(verb: string, callback: (arg?: unknown) => void): void;
  /**
   * Stops the list and watch. Called before a cache whose watch went silent is started again
   * (client-node's informers have it); without it the informer is only started again.
   */
  stop?(): unknown;
}

/**
 * How one cache tells that it has synced:
 * - an informer ({@link InformerLike}), which `waitForCaches` starts itself and counts as synced
 *   only once a start completed without an error;
 * - a promise, counted as synced when it resolves. `informer.start()` is not such a promise:
 *   client-node resolves it after a failed LIST too; pass the informer instead;
 * - a function polled until it returns `true`.
 */
export type CacheSync = InformerLike | PromiseLike<unknown> | (() => boolean | PromiseLike<boolean>);

/** Options of {@link waitForCaches}; omitted ones take {@link CACHE_WAIT_DEFAULTS}. */
export interface WaitForCachesOptions {
  /** The gate's name. Default `caches-synced`. */
  name?: string;
  /** How often function syncs are polled, in milliseconds. Default 100. */
  pollIntervalMs?: number;
  /**
   * The wait before an informer is started again after its LIST or watch failed, in
   * milliseconds. It doubles after each failure in a row, up to `maxRestartBackoffMs`; each wait
   * is drawn between its half and its whole, so replicas do not retry in step. Default 1000.
   */
  restartBackoffMs?: number;
  /**
   * The longest wait between restarts, in milliseconds. An informer that ran this long without
   * an error starts again from `restartBackoffMs`. Default 30000 (or `restartBackoffMs` when that
   * is larger).
   */
  maxRestartBackoffMs?: number;
  /**
   * The freshness bound of an informer's cache, in milliseconds. An informer that heard nothing
   * from the API server for this long (no object added, updated or deleted, no watch opened) is
   * stopped and started again: its watch resumes from the last resourceVersion, so changes a
   * silent watch held back arrive then. A quiet namespace costs one new watch per period, as
   * client-go's reflector re-watches every 5 to 10 minutes. From the moment the silence is noticed
   * until the new watch is open, readiness fails with the reason. Default 300000 (5 minutes).
   */
  watchIdleMs?: number;
}

/** The gate {@link waitForCaches} returns: a readiness gate that opens by itself. */
export interface CacheSyncGate {
  /** The gate's name, as `?verbose` and `/readyz/<name>` show it. */
  readonly name: string;
  /** Whether the gate lets readiness pass now. */
  readonly isOpen: boolean;
  /** Settles when every cache has synced and the gate opened. Never rejects. */
  readonly synced: Promise<void>;
  /**
   * Removes the gate (it no longer holds readiness), stops the restarts, the polls and the
   * freshness check, and unregisters the gate's callbacks from the informers; the informers
   * themselves stay the caller's to stop. Settles at once (on a later microtask); never rejects.
   * Idempotent: every call answers the same promise. Fits `drain({ close: [gate] })`.
   */
  close(): Promise<void>;
}

const WHERE = 'waitForCaches';
const MAX_DELAY_MS = 3_600_000;

/** The options of {@link waitForCaches}, declared once: kinds, ranges and defaults. */
const CACHE_WAIT_SPEC = optionSpec(WHERE, {
  /** The gate's name. */
  name: option.string('caches-synced', 1),
  /** Function syncs are polled every 100 ms. */
  pollIntervalMs: option.integer(100, { min: 1, max: MAX_DELAY_MS }),
  /** A failed informer starts again after 0.5-1 s, doubling after each failure in a row. */
  restartBackoffMs: option.integer(1000, { min: 1, max: MAX_DELAY_MS }),
  /** Up to 30 s between restarts (or `restartBackoffMs` when that is larger). */
  // Its default follows restartBackoffMs: checked once that is known.
  maxRestartBackoffMs: option.later(30_000),
  /** An informer silent for 5 minutes is started again. */
  watchIdleMs: option.integer(300_000, { min: 100, max: MAX_DELAY_MS }),
});

/** What the options of {@link waitForCaches} resolve to when omitted. Frozen. */
export const CACHE_WAIT_DEFAULTS = CACHE_WAIT_SPEC.defaults;

/** What the gate calls on its state. */
const STATE_METHODS = ['addReadinessGate'] as const;
// A failure reason longer than this would crowd the other caches out of the readiness message.
const MAX_REASON = 120;

/** The backoff of informer restarts and their freshness bound, resolved from {@link WaitForCachesOptions}. */
interface Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly idleMs: number;
}

/** {@link WaitForCachesOptions} checked, with {@link CACHE_WAIT_DEFAULTS} applied: the options {@link waitForCaches} runs with. */
export function resolveCacheWaitOptions(options: WaitForCachesOptions): Readonly<Required<WaitForCachesOptions>> {
  const resolved = CACHE_WAIT_SPEC.resolve(options);
  const { restartBackoffMs } = resolved;
  const maxRestartBackoffMs = integerOption(
    WHERE,
    'maxRestartBackoffMs',
    resolved.maxRestartBackoffMs,
    Math.max(CACHE_WAIT_DEFAULTS.maxRestartBackoffMs, restartBackoffMs),
    1,
    MAX_DELAY_MS,
  );
  if (maxRestartBackoffMs < restartBackoffMs) {
    throw new TypeError(`${WHERE}: maxRestartBackoffMs (${maxRestartBackoffMs}) must be at least restartBackoffMs (${restartBackoffMs})`);
  }
  return { ...resolved, maxRestartBackoffMs };
}

/**
 * Holds readiness with a gate (default `caches-synced`) until every named cache has synced, the
 * way Kubernetes components wait for their informers: readiness reports which caches are still
 * pending (or why one failed), and the gate opens itself when the last one syncs.
 *
 * An informer is started here and counts as synced once a `start()` completed with no `error`
 * callback since it began, that is once a LIST succeeded and its watch opened. While it fails,
 * readiness shows the LIST error. After any error it is started again with capped exponential
 * backoff (client-node does not restart a failed informer itself), also after it synced. A
 * synced cache stays synced, as client-go's `HasSynced` does: a watch that breaks later does not
 * fail readiness. Closing the gate (`close()`) removes it and stops the restarts; the informer
 * itself stays the caller's to stop.
 *
 * A sync promise that rejects keeps the gate closed with the error as its reason; a polled
 * function that throws is polled again.
 *
 * @param caches - Cache name → how it tells that it has synced.
 * @throws TypeError on invalid arguments.
 */
export function waitForCaches(
  state: IntrospectionState,
  caches: Readonly<Record<string, CacheSync>>,
  options: WaitForCachesOptions = {},
): CacheSyncGate {
  checkStateArgument(WHERE, state, STATE_METHODS);
  if (caches === null || typeof caches !== 'object')
    throw new TypeError('waitForCaches: caches must be an object of name → informer, promise or function');
  const {
    name,
    pollIntervalMs,
    restartBackoffMs: initialMs,
    maxRestartBackoffMs: maxMs,
    watchIdleMs: idleMs,
  } = resolveCacheWaitOptions(options);
  for (const [name, sync] of Object.entries(caches)) {
    if (typeof sync !== 'function' && !isInformer(sync) && typeof (sync as PromiseLike<unknown> | null)?.then !== 'function') {
      throw new TypeError(
        `waitForCaches: cache "${name}" must be an informer (with start() and on()), a promise or a function returning a boolean`,
      );
    }
  }
  const waiter = new CacheWaiter(state, caches, name, pollIntervalMs, { initialMs, maxMs, idleMs });
  const gate = waiter.gate;
  return {
    name: gate.name,
    get isOpen() {
      return gate.isOpen;
    },
    synced: waiter.synced,
    close: closeOnce(0, () => waiter.stop()),
  };
}

function isInformer(value: unknown): value is InformerLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<InformerLike>).start === 'function' &&
    typeof (value as Partial<InformerLike>).on === 'function'
  );
}

/** What an informer's runner tells the waiter. */
interface SyncReport {
  synced(): void;
  failed(why: string): void;
  /** The synced cache may be out of date: its watch went silent and is being started again. */
  stale(why: string): void;
}

/** How long a watch stopped for silence is given to end before the informer starts again. */
const STOP_GRACE_MS = 200;

/** What an informer tells about the API server that counts as a sign of a live watch. */
const ACTIVITY = ['add', 'update', 'delete', 'connect'] as const;

/**
 * Starts one informer, reports each start as synced or failed, and starts it again after every
 * error, waiting longer after each failure in a row, and when it heard nothing for the freshness
 * bound.
 */
class InformerRunner {
  /** Whether a `start()` is running, and the first error reported since it began. */
  private starting = false;
  private errorSinceStart: { readonly err: unknown } | undefined;
  /** Failures in a row, for the backoff. */
  private failures = 0;
  /** When the last start completed without an error (monotonic ms). */
  private healthySince = 0;
  /** When the informer last heard from the API server, or a start began (monotonic ms). */
  private heardAt = performance.now();
  private timer: NodeJS.Timeout | undefined;
  /** Between a stop for silence and the start after it. */
  private stopping = false;
  private readonly idleTimer: NodeJS.Timeout;
  private stopped = false;
  private readonly onError = (err?: unknown): void => this.errored(err);
  private readonly onActivity = (): void => {
    this.heardAt = performance.now();
  };

  constructor(
    private readonly informer: InformerLike,
    private readonly backoff: Backoff,
    private readonly report: SyncReport,
  ) {
    informer.on('error', this.onError);
    let heard = true;
    try {
      for (const verb of ACTIVITY) informer.on(verb, this.onActivity);
    } catch {
      // An informer without these events gives no sign of life to judge its freshness by.
      heard = false;
    }
    // Checked four times per bound: silence is noticed within 1.25 bounds of the last sign of life.
    this.idleTimer = setInterval(() => heard && this.checkFreshness(), Math.max(25, Math.floor(backoff.idleMs / 4)));
    this.idleTimer.unref();
    this.start();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.idleTimer);
    this.timer = undefined;
    try {
      this.informer.off?.('error', this.onError);
      for (const verb of ACTIVITY) this.informer.off?.(verb, this.onActivity);
    } catch {
      // An informer that cannot unregister keeps calling handlers that now do nothing.
    }
  }

  private start(): void {
    this.starting = true;
    this.errorSinceStart = undefined;
    this.heardAt = performance.now();
    // Started on a later microtask, so a start() that throws synchronously becomes a rejection.
    Promise.resolve()
      .then(() => this.informer.start())
      .then(
        () => this.finished(this.errorSinceStart),
        (err: unknown) => this.finished({ err }),
      );
  }

  /**
   * A synced informer silent for the bound is stopped and started again; a start still waiting
   * for the API server after the bound is reported (client-node cannot abort it: it ends when the
   * connection does).
   */
  private checkFreshness(): void {
    if (this.stopped || this.timer !== undefined || this.healthySince === 0) return;
    const silentMs = performance.now() - this.heardAt;
    if (silentMs < this.backoff.idleMs) return;
    const seconds = Math.round(silentMs / 1000);
    if (this.starting) {
      this.report.stale(`watch silent, restarted, no answer for ${seconds} s`);
      return;
    }
    this.report.stale(`watch silent for ${seconds} s, restarted`);
    try {
      void Promise.resolve(this.informer.stop?.()).catch(() => undefined);
    } catch {
      // A stop that throws: start it again all the same.
    }
    // client-node ends the stopped watch on a later turn, reporting the abort as an error and
    // aborting the informer's request of the moment: started at once, the new watch would be the
    // one aborted. It starts once the old one has ended; errors until then are the stop's own.
    this.stopping = true;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.stopping = false;
      if (!this.stopped) this.start();
    }, STOP_GRACE_MS);
    this.timer.unref();
  }

  private finished(failure: { readonly err: unknown } | undefined): void {
    this.starting = false;
    if (this.stopped) return;
    if (failure === undefined) {
      this.healthySince = performance.now();
      this.heardAt = this.healthySince;
      this.report.synced();
      return;
    }
    this.report.failed(apiErrorReason(failure.err, MAX_REASON));
    this.restartLater();
  }

  private errored(err: unknown): void {
    if (this.stopped || this.stopping) return;
    if (this.starting) {
      // The start that is running decides, once it completes.
      this.errorSinceStart ??= { err };
      return;
    }
    // A watch broke after a good start: client-node has stopped the informer. A run that lasted
    // longer than the longest wait forgets the failures before it.
    if (performance.now() - this.healthySince >= this.backoff.maxMs) this.failures = 0;
    this.restartLater();
  }

  private restartLater(): void {
    if (this.timer !== undefined || this.stopped) return;
    const ceiling = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** Math.min(this.failures, 31));
    this.failures++;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (!this.stopped) this.start();
      },
      ceiling / 2 + Math.random() * (ceiling / 2),
    );
    this.timer.unref();
  }
}

/** The caches still pending and why, kept in the gate's reason until the last one syncs. */
class CacheWaiter {
  readonly gate: ReadinessGate;
  readonly synced: Promise<void>;
  private resolveSynced!: () => void;
  private readonly pending: Map<string, CacheSync>;
  private readonly failures = new Map<string, string>();
  /** Synced caches whose watch went silent, until their restart completes. */
  private readonly stale = new Map<string, string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly runners: InformerRunner[] = [];
  private stopped = false;

  constructor(
    state: IntrospectionState,
    caches: Readonly<Record<string, CacheSync>>,
    name: string,
    private readonly pollIntervalMs: number,
    backoff: Backoff,
  ) {
    this.pending = new Map(Object.entries(caches));
    this.gate = state.addReadinessGate(name, this.describe());
    this.synced = new Promise<void>((resolve) => (this.resolveSynced = resolve));
    try {
      for (const [cache, sync] of this.pending) this.follow(cache, sync, backoff);
    } catch (err) {
      // An informer whose on() throws: no gate may stay behind holding readiness.
      this.stop();
      throw err;
    }
    if (this.pending.size === 0) this.openGate();
  }

  private follow(cache: string, sync: CacheSync, backoff: Backoff): void {
    if (typeof sync === 'function') void this.poll(cache, sync);
    else if (isInformer(sync)) {
      const report: SyncReport = {
        synced: () => this.settle(cache, true),
        failed: (why: string) => this.settle(cache, false, why),
        stale: (why: string) => this.markStale(cache, why),
      };
      this.runners.push(new InformerRunner(sync, backoff, report));
    } else
      sync.then(
        () => this.settle(cache, true),
        (err: unknown) => this.settle(cache, false, apiErrorReason(err, MAX_REASON)),
      );
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const runner of this.runners) runner.stop();
    this.gate.remove();
  }

  private describe(): string {
    const waiting = [...this.pending.keys()].filter((n) => !this.failures.has(n));
    const parts = [...this.failures].map(([n, why]) => `cache "${n}" failed to sync: ${why}`);
    if (waiting.length > 0) parts.unshift(`waiting for caches to sync: ${waiting.join(', ')}`);
    for (const [n, why] of this.stale) parts.push(`cache "${n}" may be stale: ${why}`);
    return parts.join('; ');
  }

  /** A synced cache's watch went silent: readiness fails with the reason until its restart completes. */
  private markStale(name: string, why: string): void {
    if (this.stopped || this.pending.has(name)) return;
    this.stale.set(name, why);
    this.gate.close(this.describe());
  }

  private openGate(): void {
    this.gate.open();
    this.resolveSynced();
  }

  private settle(name: string, ok: boolean, why?: string): void {
    if (this.stopped) return;
    if (this.stale.has(name)) {
      // A restart after silence: it ended the staleness when it completed, or failed like any start.
      if (ok) this.stale.delete(name);
      else this.stale.set(name, cutText(why ?? 'failed', MAX_REASON));
      if (this.pending.size === 0 && this.stale.size === 0) this.gate.open();
      else this.gate.close(this.describe());
      return;
    }
    if (!this.pending.has(name)) return;
    if (ok) {
      this.pending.delete(name);
      this.failures.delete(name);
    } else {
      this.failures.set(name, cutText(why ?? 'failed', MAX_REASON));
    }
    if (this.pending.size === 0 && this.stale.size === 0) this.openGate();
    else this.gate.close(this.describe());
  }

  private async poll(name: string, sync: () => boolean | PromiseLike<boolean>): Promise<void> {
    try {
      if ((await sync()) === true) this.settle(name, true);
    } catch {
      // Polled again at the next tick: a cache that throws while listing has not synced yet.
    }
    if (this.stopped || !this.pending.has(name)) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.poll(name, sync);
    }, this.pollIntervalMs);
    timer.unref();
    this.timers.add(timer);
  }
}
