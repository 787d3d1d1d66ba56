import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { IntrospectionState } from '../state/types';
import { checkStateArgument } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { withTimeout } from '../util/with-timeout';

/**
 * Anything with a `close()`: every handle of this package a host starts (the introspection and
 * pprof routers, `createLeaseElector`, `createKubeAuth`, `watchServingCertificate`,
 * `createControllerMetrics`, `waitForCaches`, `pipeline.processQueue`, `watchProgress`), whose
 * `close(): Promise<void>` is idempotent, bounded and never rejects, and the host's own objects.
 */
export interface Closable {
  /**
   * Releases what it holds. `drain` waits for it to settle and goes on if it throws or rejects, so
   * one failing target cannot keep the servers open.
   */
  close(): Promise<void> | void;
}

/** Options of {@link drain}; omitted ones take {@link DRAIN_DEFAULTS}. */
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

const MAX_TIMER_MS = 2_147_483_647;

function isClosable(target: unknown): target is Closable {
  return typeof (target as Partial<Closable> | null)?.close === 'function';
}

function isServer(server: unknown): server is Server {
  return isClosable(server) && typeof (server as { closeIdleConnections?: unknown }).closeIdleConnections === 'function';
}

/** The options of {@link drain}, declared once: kinds, ranges and defaults. */
const DRAIN_SPEC = optionSpec('drain', {
  /** Readiness fails for 5 s before anything closes. */
  delayMs: option.integer(5000, { min: 0, max: MAX_TIMER_MS }),
  /** Nothing else to close. */
  close: option.array(Object.freeze([]) as readonly Closable[], isClosable, 'objects with a close() method'),
  /** No servers to close. */
  servers: option.array(Object.freeze([]) as readonly Server[], isServer, 'node:http or node:https servers'),
  /** Requests in flight have 10 s to finish. */
  closeTimeoutMs: option.integer(10_000, { min: 0, max: MAX_TIMER_MS }),
  /** What readiness reports while draining. */
  reason: option.string('draining: shutting down', 1),
});

/** What the options of {@link drain} resolve to when omitted. Frozen. */
export const DRAIN_DEFAULTS = DRAIN_SPEC.defaults;

/** After connections are cut, how long a server's close() may still take before drain goes on without it. */
const SERVER_CLOSE_GRACE_MS = 100;
/** What drain calls on its state. */
const STATE_METHODS = ['setShuttingDown'] as const;
const drains = new WeakMap<IntrospectionState, Promise<void>>();

/** {@link DrainOptions} checked, with {@link DRAIN_DEFAULTS} applied: the options {@link drain} runs with. */
export function resolveDrainOptions(options: DrainOptions): Readonly<Required<DrainOptions>> {
  return DRAIN_SPEC.resolve(options);
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
    let grace: NodeJS.Timeout | undefined;
    const finish = (): void => {
      clearTimeout(cut);
      clearTimeout(grace);
      clearInterval(sweep);
      server.off('request', lastOnConnection);
      resolve();
    };
    // At the deadline every connection the server knows is cut. One it does not track (a socket
    // taken over on 'upgrade') would hold close() open for ever, so drain goes on shortly after.
    const cut = setTimeout(() => {
      server.closeAllConnections();
      grace = setTimeout(finish, SERVER_CLOSE_GRACE_MS);
      grace.unref();
    }, timeoutMs);
    cut.unref();
    server.close(finish);
    // Keep-alive connections with no request in flight would otherwise hold close() open.
    server.closeIdleConnections();
  });
}

/**
 * The graceful shutdown a controller runs on SIGTERM, in one call: readiness fails at once (so
 * Kubernetes takes the pod out of endpoints) while liveness and every endpoint keep answering for
 * `delayMs`; then the `close` targets close (profiles stop, watches end), the servers close, and
 * nothing of ours keeps the event loop alive, so the process can exit on its own. Every step is
 * bounded: after `delayMs`, the targets and the servers have `closeTimeoutMs` together; a target
 * whose `close()` never settles is abandoned then, and connections still open are cut, so the
 * drain settles by `delayMs + closeTimeoutMs` (plus 100 ms for a server holding sockets it does
 * not track). Calling it again checks its options and returns the same drain, which keeps the
 * options it started with.
 *
 * @throws TypeError on invalid options (at the call, before anything changes).
 */
export function drain(state: IntrospectionState, options: DrainOptions = {}): Promise<void> {
  checkStateArgument(DRAIN_SPEC.where, state, STATE_METHODS);
  // Checked on every call, so a typo in a second call is reported even though the first drain runs on.
  const { delayMs, close: targets, servers, closeTimeoutMs, reason } = resolveDrainOptions(options);
  const running = drains.get(state);
  if (running !== undefined) return running;
  state.setShuttingDown(true, reason);
  const done = (async () => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    // One deadline for everything that closes: a target that never settles is abandoned at it, and
    // the servers close beside the targets (a watch ends, its connection turns idle, the sweep takes it).
    await Promise.all([
      ...targets.map((target) => closeTarget(target, closeTimeoutMs)),
      ...servers.map((server) => closeServer(server, closeTimeoutMs)),
    ]);
  })();
  drains.set(state, done);
  return done;
}

/** A close target's `close()`, settled (or abandoned) within `timeoutMs`; its failure is not drain's. */
async function closeTarget(target: Closable, timeoutMs: number): Promise<void> {
  try {
    await withTimeout(
      () => target.close(),
      timeoutMs,
      () => new Error(`close() did not settle within ${timeoutMs} ms`),
    );
  } catch {
    // One failing or hanging target cannot keep the others or the servers open.
  }
}
