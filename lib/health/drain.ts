import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { IntrospectionState } from '../state/types';

/** Anything with an async `close()`, such as the introspection router. */
export interface Closable {
  /**
   * Releases what it holds. `drain` waits for it to settle and goes on if it throws or rejects, so
   * one failing target cannot keep the servers open.
   */
  close(): Promise<void> | void;
}

/** Options of {@link drain}. */
export interface DrainOptions {
  /**
   * How long readiness fails while everything keeps serving, before anything closes: the time
   * endpoint controllers and load balancers need to notice. Milliseconds; default 5000.
   */
  delayMs?: number;
  /** Closed after the delay, in parallel: the introspection router (profiles, watches), … */
  close?: readonly Closable[];
  /** HTTP servers closed after the delay: they stop accepting, and idle keep-alive connections end. */
  servers?: readonly Server[];
  /**
   * After the delay, how long requests in flight may finish before their connections are cut.
   * Milliseconds; default 10 000.
   */
  closeTimeoutMs?: number;
  /** What readiness reports while draining. Default `draining: shutting down`. */
  reason?: string;
}

const KNOWN_OPTIONS = ['delayMs', 'close', 'servers', 'closeTimeoutMs', 'reason'];
const drains = new WeakMap<IntrospectionState, Promise<void>>();

function milliseconds(value: unknown, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 2_147_483_647) {
    throw new TypeError(`drain: ${option} must be a non-negative integer number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function closeServer(server: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    // Node keeps serving a keep-alive connection that was busy at close() for as long as its client
    // keeps sending (a Prometheus scraping every second never lets it go idle), so every answer from
    // now on ends its connection, and connections busy now are closed once they turn idle.
    const lastOnConnection = (_req: IncomingMessage, res: ServerResponse): void => {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    };
    server.prependListener('request', lastOnConnection);
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    sweep.unref();
    const cut = setTimeout(() => server.closeAllConnections(), timeoutMs);
    cut.unref();
    server.close(() => {
      clearTimeout(cut);
      clearInterval(sweep);
      server.off('request', lastOnConnection);
      resolve();
    });
    // Keep-alive connections with no request in flight would otherwise hold close() open.
    server.closeIdleConnections();
  });
}

/**
 * The graceful shutdown a controller runs on SIGTERM, in one call: readiness fails at once (so
 * Kubernetes takes the pod out of endpoints) while liveness and every endpoint keep answering for
 * `delayMs`; then the `close` targets close (profiles stop, watches end), the servers close, and
 * nothing of ours keeps the event loop alive, so the process can exit on its own. Calling it again
 * returns the same drain.
 *
 * @throws TypeError on invalid options (at the call, before anything changes).
 */
export function drain(state: IntrospectionState, options: DrainOptions = {}): Promise<void> {
  const running = drains.get(state);
  if (running !== undefined) return running;
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.includes(key)) throw new TypeError(`drain: unknown option "${key}"; known options: ${KNOWN_OPTIONS.join(', ')}`);
  }
  const delayMs = milliseconds(options.delayMs, 5000, 'delayMs');
  const closeTimeoutMs = milliseconds(options.closeTimeoutMs, 10_000, 'closeTimeoutMs');
  const targets = options.close ?? [];
  const servers = options.servers ?? [];
  if (!targets.every((t) => typeof t?.close === 'function')) throw new TypeError('drain: every entry of close must have a close() method');
  if (!servers.every((s) => typeof s?.close === 'function' && typeof s.closeIdleConnections === 'function')) {
    throw new TypeError('drain: servers must be node:http or node:https servers');
  }
  state.setShuttingDown(true, options.reason ?? 'draining: shutting down');
  const done = (async () => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    await Promise.allSettled(targets.map(async (t) => t.close()));
    await Promise.all(servers.map((s) => closeServer(s, closeTimeoutMs)));
  })();
  drains.set(state, done);
  return done;
}
