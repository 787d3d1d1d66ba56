import type { IntrospectionState, ReadinessGate } from '../state/types';
import { checkOptionObject, integerOption } from '../options';
import { errorMessage } from '../util/error-message';

/**
 * How one cache tells that it has synced: a promise that settles when it has (an informer's
 * "synced" promise), or a function polled until it returns `true` (an informer's `hasSynced()`).
 */
export type CacheSync = PromiseLike<unknown> | (() => boolean | PromiseLike<boolean>);

/** Options of {@link waitForCaches}. */
export interface WaitForCachesOptions {
  /** The gate's name. Default `caches-synced`. */
  name?: string;
  /** How often function syncs are polled, in milliseconds. Default 100. */
  pollIntervalMs?: number;
}

/** The gate {@link waitForCaches} returns: a readiness gate that opens by itself. */
export interface CacheSyncGate extends ReadinessGate {
  /** Settles when every cache has synced and the gate opened. Never rejects. */
  readonly synced: Promise<void>;
}

const WHERE = 'waitForCaches';
const KNOWN_OPTIONS = ['name', 'pollIntervalMs'];
// A failure reason longer than this would crowd the other caches out of the readiness message.
const MAX_REASON = 120;

/**
 * Holds readiness with a gate (default `caches-synced`) until every named cache has synced, the
 * way Kubernetes components wait for their informers: readiness reports which caches are still
 * pending (or why one failed), and the gate opens itself when the last one syncs. A sync promise
 * that rejects keeps the gate closed with the error as its reason; a polled function that throws
 * is polled again.
 *
 * @param caches - Cache name → how it tells that it has synced.
 * @throws TypeError on invalid arguments.
 */
export function waitForCaches(
  state: IntrospectionState,
  caches: Readonly<Record<string, CacheSync>>,
  options: WaitForCachesOptions = {},
): CacheSyncGate {
  if (caches === null || typeof caches !== 'object')
    throw new TypeError('waitForCaches: caches must be an object of name → promise or function');
  const checked = checkOptionObject(WHERE, '', options, KNOWN_OPTIONS);
  const pollIntervalMs = integerOption(WHERE, 'pollIntervalMs', checked['pollIntervalMs'], 100, 1, 3_600_000);
  for (const [name, sync] of Object.entries(caches)) {
    if (typeof sync !== 'function' && typeof (sync as PromiseLike<unknown> | null)?.then !== 'function') {
      throw new TypeError(`waitForCaches: cache "${name}" must be a promise or a function returning a boolean`);
    }
  }
  const waiter = new CacheWaiter(state, caches, options.name ?? 'caches-synced', pollIntervalMs);
  const gate = waiter.gate;
  return {
    name: gate.name,
    get isOpen() {
      return gate.isOpen;
    },
    open: () => gate.open(),
    close: (reason?: string) => gate.close(reason),
    remove: () => waiter.remove(),
    synced: waiter.synced,
  };
}

/** The caches still pending and why, kept in the gate's reason until the last one syncs. */
class CacheWaiter {
  readonly gate: ReadinessGate;
  readonly synced: Promise<void>;
  private resolveSynced!: () => void;
  private readonly pending: Map<string, CacheSync>;
  private readonly failures = new Map<string, string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private removed = false;

  constructor(
    state: IntrospectionState,
    caches: Readonly<Record<string, CacheSync>>,
    name: string,
    private readonly pollIntervalMs: number,
  ) {
    this.pending = new Map(Object.entries(caches));
    this.gate = state.addReadinessGate(name, this.describe());
    this.synced = new Promise<void>((resolve) => (this.resolveSynced = resolve));
    for (const [cache, sync] of this.pending) {
      if (typeof sync === 'function') void this.poll(cache, sync);
      else
        sync.then(
          () => this.settle(cache, true),
          (err: unknown) => this.settle(cache, false, errorMessage(err)),
        );
    }
    if (this.pending.size === 0) this.openGate();
  }

  remove(): void {
    this.removed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.gate.remove();
  }

  private describe(): string {
    const waiting = [...this.pending.keys()].filter((n) => !this.failures.has(n));
    const parts = [...this.failures].map(([n, why]) => `cache "${n}" failed to sync: ${why}`);
    if (waiting.length > 0) parts.unshift(`waiting for caches to sync: ${waiting.join(', ')}`);
    return parts.join('; ');
  }

  private openGate(): void {
    this.gate.open();
    this.resolveSynced();
  }

  private settle(name: string, ok: boolean, why?: string): void {
    if (this.removed || !this.pending.has(name)) return;
    if (ok) {
      this.pending.delete(name);
      this.failures.delete(name);
    } else {
      this.failures.set(name, (why ?? 'failed').slice(0, MAX_REASON));
    }
    if (this.pending.size === 0) this.openGate();
    else this.gate.close(this.describe());
  }

  private async poll(name: string, sync: () => boolean | PromiseLike<boolean>): Promise<void> {
    try {
      if ((await sync()) === true) this.settle(name, true);
    } catch {
      // Polled again at the next tick: a cache that throws while listing has not synced yet.
    }
    if (this.removed || !this.pending.has(name)) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.poll(name, sync);
    }, this.pollIntervalMs);
    timer.unref();
    this.timers.add(timer);
  }
}
