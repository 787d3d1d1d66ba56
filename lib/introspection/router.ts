import { Router, type NextFunction, type Request, type Response } from 'express';
import { createAccessGuard, type AccessGuardOptions } from '../http/access-guard';
import { createHostGuard } from '../http/host-guard';
import { answerErrors, HttpError } from '../http/errors';
import { introspectionStatuses } from './errors';
import { readOnly } from '../http/methods';
import { type JsonPathLimits } from '../jsonpath';
import { resolveLimits } from '../jsonpath/limits';
import { createConsoleHandler, isConsolePath } from '../console/router';
import { booleanOption, checkOptionObject, integerOption } from '../options';
import { createPprofRouter, type PprofOptions } from '../pprof';
import type { IntrospectionState, IntrospectionStateReader } from '../state/types';
import { createHealthRouter } from './health';
import { createVarsRouter } from './vars';
import { quoteText } from '../util/cut-text';

/** Options of {@link createIntrospectionRouter}. Checked once, when the router is created. */
export interface IntrospectionRouterOptions {
  /**
   * Serve `/debug/vars` and `/debug/pprof`. Default `true`. `false` is the "debug port 0" setting:
   * the debug endpoints are gone, the health endpoints keep answering.
   */
  debug?: boolean;
  /**
   * Serve the debug console, a page at `/debug/` that shows the controller in a browser (it reads
   * the same public endpoints as curl). Default `true`; always off with `debug: false`.
   */
  console?: boolean;
  /** Options of `/debug/pprof`, or `false` to serve vars without profiling. */
  pprof?: PprofOptions | false;
  /** How long one health check may take before it counts as failed. Default 2000 ms. */
  healthCheckTimeoutMs?: number;
  /**
   * JSON bodies whose serialisation is expected to take longer than this are streamed in time
   * slices; cheaper ones go out at once, as fast as `res.json`. The expectation comes from what
   * native `JSON.stringify` has cost in this process. Milliseconds, 0 to 1000; default 10 (half the
   * 20 ms stall goal: deciding and writing add to it). 0 streams every body.
   */
  atOnceBudgetMs?: number;
  /** JSON bodies above this many bytes are streamed whatever they cost. Default: no such cap. */
  streamThresholdBytes?: number;
  /** Limits of `?field=` templates (length, evaluation steps, output size…). */
  jsonPath?: Partial<JsonPathLimits>;
  /** The largest `?limit=` accepted on `events` and `state`. Default 10 000. */
  maxEventLimit?: number;
  /** How often an idle event watch (`/debug/vars/events?watch=1`) writes a heartbeat. Default 15 000 ms. */
  watchHeartbeatMs?: number;
  /** How many event watches may be open at once; more answer `503` with `Retry-After`. Default 64. */
  maxWatchers?: number;
  /**
   * The most one event watch holds unsent, in bytes (default 256 KiB, at least 64 KiB). A client
   * that stops reading is not written to past it; when it reads again it gets a `gap` record for
   * what the ring overwrote meanwhile. All watches together hold at most `maxWatchers` times this
   * (16 MiB by default) plus a shared 1 MiB of event texts. An event whose JSON is over half of it
   * is watched without its `details` (with `details_error`); `?since=` still reads it whole.
   */
  watchBufferBytes?: number;
  /**
   * How many `/debug/vars/<name>` reads (which may serialise megabytes in slices) run at once.
   * Default 4: with hundreds at once, each round of slices would delay a liveness probe by seconds.
   */
  maxConcurrentReads?: number;
  /** How many more wait their turn; beyond that a read answers `503` with `Retry-After: 1`. Default 64. */
  maxQueuedReads?: number;
  /**
   * Optional guard for `/debug/*` (health endpoints stay open for the kubelet): an allow-list of
   * client addresses/CIDRs and/or a bearer token. Off by default: the endpoints are meant for a port only the cluster reaches.
   */
  access?: AccessGuardOptions;
  /**
   * Extra `Host` names `/debug/*` answers to (exact, or `*.suffix`), or `false` to turn the DNS
   * rebinding check off. IP literals, `localhost`, dotless names, `*.svc` and `*.internal` are
   * always allowed; `*.local` names (`*.cluster.local` too) only when listed here, since multicast
   * DNS lets any neighbour answer them. A malformed `Host` is a `400`.
   */
  allowedHosts?: readonly string[] | false;
}

/**
 * What {@link createIntrospectionRouter} needs of the state: its read side, and `setShuttingDown`
 * for `close()`. An {@link IntrospectionState} is one.
 */
export type IntrospectionRouterState = IntrospectionStateReader & Pick<IntrospectionState, 'setShuttingDown'>;

/** The introspection router: an Express router plus a way to shut it down cleanly. */
export interface IntrospectionRouter extends Router {
  /**
   * Marks the host not ready (so `/readyz` drains traffic), stops heap sampling, any running CPU
   * profile and the event-loop monitor. Leaves no timers or handles behind. Idempotent.
   */
  close(): Promise<void>;
}

const MAX_TIMER_MS = 2_147_483_647;

const ROUTER = 'createIntrospectionRouter';
const ROUTER_OPTIONS = [
  'debug',
  'console',
  'pprof',
  'healthCheckTimeoutMs',
  'atOnceBudgetMs',
  'streamThresholdBytes',
  'jsonPath',
  'maxEventLimit',
  'access',
  'allowedHosts',
  'watchHeartbeatMs',
  'maxWatchers',
  'watchBufferBytes',
  'maxConcurrentReads',
  'maxQueuedReads',
] as const;

/**
 * The paths this router answers (relative to its mount point). Everything else under `/debug` or
 * `/healthz` is the host's: it falls through, whatever the method, to routes registered after us.
 * Case-insensitive like Express's own matching of the mounts below, so `POST /DEBUG/vars` is
 * refused as `POST /debug/vars` is.
 */
const DEBUG_DATA_PATH = /^\/debug\/(vars|pprof)(\/|$)/i;
/** Where the debug data is mounted, with or without `debug`: Express matches both the same way. */
const DEBUG_DATA_MOUNTS = ['/debug/vars', '/debug/pprof'];

function ownsPath(path: string, consolePaths: boolean): boolean {
  return (
    path === '/healthz' || /^\/(livez|readyz)(\/[^/]*)?$/.test(path) || DEBUG_DATA_PATH.test(path) || (consolePaths && isConsolePath(path))
  );
}

function checkState(state: IntrospectionRouterState): void {
  const needed = [
    'listVars',
    'readVar',
    'healthChecks',
    'shutdownReason',
    'readinessGates',
    'readEvents',
    'watchEvents',
    'setShuttingDown',
  ] as const;
  const missing = needed.filter((m) => typeof (state as unknown as Record<string, unknown> | null)?.[m] !== 'function');
  if (missing.length > 0) {
    throw new TypeError(
      `createIntrospectionRouter: the first argument must be an IntrospectionState (missing ${missing.join(', ')}); create one with createIntrospectionState()`,
    );
  }
}

/**
 * Creates the introspection router: `/healthz`, `/livez`, `/readyz`, `/debug/vars[/<name>]` and
 * `/debug/pprof/*`, at those paths. Mount it on the debug port: `app.use(createIntrospectionRouter(state))`.
 * Everything is read through `state`; nothing here writes to it except `close()` marking the host
 * as shutting down.
 */
export function createIntrospectionRouter(state: IntrospectionRouterState, options: IntrospectionRouterOptions = {}): IntrospectionRouter {
  checkState(state);
  checkOptionObject(ROUTER, '', options, ROUTER_OPTIONS);
  const debug = booleanOption(ROUTER, 'debug', options.debug, true);
  const jsonPathLimits: JsonPathLimits = resolveLimits(options.jsonPath, ROUTER, 'jsonPath');

  // The console's paths are ours only when it is served: with debug off they are the host's.
  const consoleOn = booleanOption(ROUTER, 'console', options.console, true) && debug;
  const consoleHandler = consoleOn ? createConsoleHandler() : undefined;

  const router = Router();
  router.use(readOnly((path) => ownsPath(path, consoleOn)));
  router.use(
    createHealthRouter(state, {
      checkTimeoutMs: integerOption(ROUTER, 'healthCheckTimeoutMs', options.healthCheckTimeoutMs, 2000, 1, MAX_TIMER_MS),
    }),
  );

  let pprof: ReturnType<typeof createPprofRouter> | undefined;
  let vars: ReturnType<typeof createVarsRouter> | undefined;
  // The guard is mounted on /debug, so the path it sees has that prefix removed.
  const guard = createAccessGuard(options.access, (req) => consoleOn && isConsolePath(`/debug${req.path}`));
  const hostGuard = createHostGuard(options.allowedHosts);
  if (debug) {
    if (hostGuard) router.use('/debug', hostGuard);
    if (guard) router.use('/debug', guard);
    if (consoleHandler) router.use(consoleHandler);
    vars = createVarsRouter(state, {
      atOnceBudgetMs: integerOption(ROUTER, 'atOnceBudgetMs', options.atOnceBudgetMs, 10, 0, 1000),
      streamThresholdBytes: integerOption(ROUTER, 'streamThresholdBytes', options.streamThresholdBytes, Infinity, 1, 2 ** 31),
      jsonPathLimits,
      maxEventLimit: integerOption(ROUTER, 'maxEventLimit', options.maxEventLimit, 10_000, 1, 1_000_000),
      watchHeartbeatMs: integerOption(ROUTER, 'watchHeartbeatMs', options.watchHeartbeatMs, 15_000, 10, MAX_TIMER_MS),
      maxWatchers: integerOption(ROUTER, 'maxWatchers', options.maxWatchers, 64, 1, 10_000),
      watchBufferBytes: integerOption(ROUTER, 'watchBufferBytes', options.watchBufferBytes, 256 * 1024, 64 * 1024, 64 * 1024 * 1024),
      maxConcurrentReads: integerOption(ROUTER, 'maxConcurrentReads', options.maxConcurrentReads, 4, 1, 1000),
      maxQueuedReads: integerOption(ROUTER, 'maxQueuedReads', options.maxQueuedReads, 64, 0, 100_000),
    });
    router.use(vars.router);
    if (options.pprof !== false) {
      pprof = createPprofRouter(options.pprof ?? {});
      router.use('/debug/pprof', pprof);
    }
    // Below our own prefixes, a path we do not serve is ours to refuse (in JSON).
    router.use('/debug/vars', function unknownVarsPath(req: Request, _res: Response, next: NextFunction): void {
      next(new HttpError(404, `no debug endpoint at ${quoteText(req.originalUrl.split('?')[0]!, 128)}; see /debug/vars and /debug/pprof/`));
    });
  } else {
    // Our own debug paths say why they are gone (in JSON, not the host's HTML 404), matched by
    // Express on the same mounts as when they are served, so every spelling that would reach them
    // (`/DEBUG/Vars`, `/debug/pprof/`) is answered. Any other /debug path, the console's included,
    // stays the host's.
    router.use(DEBUG_DATA_MOUNTS, function debugDisabled(_req: Request, _res: Response, next: NextFunction): void {
      next(new HttpError(404, 'debug endpoints are disabled (debug: false, the "debug port 0" setting); health endpoints keep answering'));
    });
  }

  // Also answers what Express raises before a handler runs (a path segment with invalid
  // percent-encoding such as `/debug/vars/%zz`).
  router.use(answerErrors(introspectionStatuses));

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      state.setShuttingDown(true, 'shutting down');
      vars?.closeWatches();
      await pprof?.close();
    })();
    return closing;
  };
  // Attached as the pprof router attaches its own: a read-only property, not one a later
  // assignment could replace.
  Object.defineProperties(router, { close: { value: close, enumerable: true } });
  return router as IntrospectionRouter;
}
