import type { IntrospectionState, ReadinessGate } from '../state/types';
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

const KNOWN_OPTIONS = ['name', 'pollIntervalMs'];

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
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.includes(key))
      throw new TypeError(`waitForCaches: unknown option "${key}"; known options: ${KNOWN_OPTIONS.join(', ')}`);
  }
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  if (!Number.isInteger(pollIntervalMs) || pollIntervalMs < 1)
    throw new TypeError(`waitForCaches: pollIntervalMs must be a positive integer, got ${String(pollIntervalMs)}`);
  const pending = new Map(Object.entries(caches));
  for (const [name, sync] of pending) {
    if (typeof sync !== 'function' && typeof (sync as PromiseLike<unknown> | null)?.then !== 'function') {
      throw new TypeError(`waitForCaches: cache "${name}" must be a promise or a function returning a boolean`);
    }
  }
  const failures = new Map<string, string>();
  const describe = (): string => {
    const waiting = [...pending.keys()].filter((n) => !failures.has(n));
    const parts = [...failures].map(([n, why]) => `cache "${n}" failed to sync: ${why}`);
    if (waiting.length > 0) parts.unshift(`waiting for caches to sync: ${waiting.join(', ')}`);
    return parts.join('; ');
  };

  const gate = state.addReadinessGate(options.name ?? 'caches-synced', describe());
  let resolveSynced!: () => void;
  const synced = new Promise<void>((resolve) => (resolveSynced = resolve));
  let removed = false;
  const timers = new Set<NodeJS.Timeout>();
  const settle = (name: string, ok: boolean, why?: string): void => {
    if (removed || !pending.has(name)) return;
    if (ok) {
      pending.delete(name);
      failures.delete(name);
    } else {
      failures.set(name, (why ?? 'failed').slice(0, 120));
    }
    if (pending.size === 0) {
      gate.open();
      resolveSynced();
    } else {
      gate.close(describe());
    }
  };

  for (const [name, sync] of pending) {
    if (typeof sync === 'function') {
      const poll = async (): Promise<void> => {
        try {
          if ((await sync()) === true) settle(name, true);
        } catch {
          // Polled again at the next tick: a cache that throws while listing has not synced yet.
        }
        if (!removed && pending.has(name)) {
          const timer = setTimeout(() => {
            timers.delete(timer);
            void poll();
          }, pollIntervalMs);
          timer.unref();
          timers.add(timer);
        }
      };
      void poll();
    } else {
      sync.then(
        () => settle(name, true),
        (err: unknown) => settle(name, false, errorMessage(err)),
      );
    }
  }
  if (pending.size === 0) {
    gate.open();
    resolveSynced();
  }

  return {
    name: gate.name,
    get isOpen() {
      return gate.isOpen;
    },
    open: () => gate.open(),
    close: (reason?: string) => gate.close(reason),
    remove() {
      removed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      gate.remove();
    },
    synced,
  };
}
