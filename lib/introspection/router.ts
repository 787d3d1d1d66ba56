import { Router, type NextFunction, type Request, type Response } from 'express';
import { createHostGuard } from '../http/host-guard';
import { answerErrors, HttpError } from '../http/errors';
import { introspectionStatuses } from './errors';
import { readOnly } from '../http/methods';
import { boundQuery, MAX_QUERY_CHARS } from '../http/query';
import { DEFAULT_JSONPATH_LIMITS, type JsonPathLimits } from '../jsonpath';
import { resolveLimits } from '../jsonpath/limits';
import { createConsoleHandler } from '../console/router';
import { isConsolePagePath } from '../http/unguarded';
import { checkStateArgument } from '../options';
import * as option from '../options/spec';
import { optionSpec, type SameOptions } from '../options/spec';
import { createPprofRouter, PPROF_CLOSE_BOUND_MS, type PprofOptions } from '../pprof';
import { resolvePprofOptions } from '../pprof/options';
import type { IntrospectionState, IntrospectionStateReader } from '../state/types';
import { createHealthRouter } from './health';
import { createVarsRouter, type VarsOptions } from './vars';
import { closeOnce } from '../util/close-once';
import { quoteText } from '../util/cut-text';

/**
 * Options of {@link createIntrospectionRouter}. Checked once, when the router is created; omitted
 * ones take {@link INTROSPECTION_ROUTER_DEFAULTS}.
 */
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
  /** Options of `/debug/pprof`, or `false` to serve vars without profiling. Default `{}` ({@link PPROF_DEFAULTS}). */
  pprof?: PprofOptions | false;
  /**
   * Removed: a guard is middleware the host mounts in front of the router, the same way for both
   * guards: `app.use(createAccessGuard({ allow, token }), createIntrospectionRouter(state))`, or
   * `createKubeAuth(…)` there. Given, it throws with that migration.
   */
  access?: never;
  /**
   * Extra `Host` names `/debug/*` answers to (exact, or `*.suffix`), or `false` to turn the DNS
   * rebinding check off. IP literals, `localhost`, dotless names, `*.svc` and `*.internal` are
   * always allowed; `*.local` names (`*.cluster.local` too) only when listed here, since multicast
   * DNS lets any neighbour answer them. A malformed `Host` is a `400`. Default: none extra.
   */
  allowedHosts?: readonly string[] | false;
  /** How long one health check may take before it counts as failed. Milliseconds; default 2000. */
  healthCheckTimeoutMs?: number;
  /** Event watches (`/debug/vars/events?watch=1`). */
  watch?: IntrospectionWatchOptions;
  /** Load limits: what one request, and all of them together, may cost the host. */
  limits?: IntrospectionLimits;
}

/** Options of the event watches (`/debug/vars/events?watch=1`), {@link IntrospectionRouterOptions.watch}. */
export interface IntrospectionWatchOptions {
  /** How often an idle watch writes a heartbeat. Milliseconds; default 15 000. */
  heartbeatMs?: number;
  /** How many watches may be open at once; more answer `503` with `Retry-After`. Default 64. */
  maxWatchers?: number;
  /**
   * The most one watch holds unsent, in bytes (default 256 KiB, at least 64 KiB). A client that
   * stops reading is not written to past it; when it reads again it gets a `gap` record for what
   * the ring overwrote meanwhile. All watches together hold at most `maxWatchers` times this
   * (16 MiB by default) plus a shared 1 MiB of event texts. An event whose JSON is over half of it
   * is watched without its `details` (with `details_error`); `?since=` still reads it whole.
   */
  bufferBytes?: number;
}

/** The load limits of the router, {@link IntrospectionRouterOptions.limits}. */
export interface IntrospectionLimits {
  /**
   * JSON bodies whose serialisation is expected to take longer than this are streamed in time
   * slices; cheaper ones go out at once, as fast as `res.json`. The expectation comes from what
   * native `JSON.stringify` has cost in this process. Milliseconds, 0 to 1000; default 10 (half the
   * 20 ms stall goal: deciding and writing add to it). 0 streams every body.
   */
  atOnceBudgetMs?: number;
  /** The largest `?limit=` accepted on `events` and `state`. Default 10 000. */
  maxEventLimit?: number;
  /**
   * How many `/debug/vars/<name>` reads (which may serialise megabytes in slices) run at once.
   * Default 4: with hundreds at once, each round of slices would delay a liveness probe by seconds.
   */
  maxConcurrentReads?: number;
  /** How many more wait their turn; beyond that a read answers `503` with `Retry-After: 1`. Default 64. */
  maxQueuedReads?: number;
  /** Limits of `?field=` templates (length, evaluation steps, output size…). Default {@link DEFAULT_JSONPATH_LIMITS}. */
  jsonPath?: Partial<JsonPathLimits>;
}

/**
 * What {@link createIntrospectionRouter} needs of the state: its read side, and `setShuttingDown`
 * for `close()`. An {@link IntrospectionState} is one.
 */
export type IntrospectionRouterState = IntrospectionStateReader & Pick<IntrospectionState, 'setShuttingDown'>;

/** The introspection router: an Express router plus a way to shut it down cleanly. */
export interface IntrospectionRouter extends Router {
  /**
   * Marks the host not ready (so `/readyz` drains traffic) and ends the event watches before it
   * returns; stops heap sampling, any running CPU profile and the event-loop monitor. Leaves no
   * timers or handles behind. Settles once the profiles in flight stopped, within 5 s at the most
   * (the pprof router's bound); never rejects. Idempotent: every call answers the same promise.
   * Fits `drain({ close: [router] })`.
   */
  close(): Promise<void>;
}

const MAX_TIMER_MS = 2_147_483_647;

const ROUTER = 'createIntrospectionRouter';

/** The options of {@link createIntrospectionRouter}, declared once: kinds, ranges and defaults. */
const ROUTER_SPEC = optionSpec(ROUTER, {
  /** `/debug/vars` and `/debug/pprof` are served. */
  debug: option.boolean(true),
  /** The debug console is served (with `debug`). */
  console: option.boolean(true),
  /** Profiling is on, every pprof option at its default ({@link PPROF_DEFAULTS}). */
  // null is a mistake for the pprof options to report, not an omission.
  pprof: option.custom(Object.freeze({}) as PprofOptions | false, ({ value, fallback }) =>
    value === undefined ? fallback : (value as PprofOptions | false),
  ),
  // Removed: throws with the migration, so that a host upgrading is not left unguarded.
  access: option.custom(undefined, ({ where, value }) => {
    if (value === undefined) return undefined;
    throw new TypeError(
      `${where}: option "access" was removed: a guard is middleware mounted in front of the router, ` +
        'app.use(createAccessGuard({ allow, token }), createIntrospectionRouter(state)) (it lets the probes and the console page through as "access" did)',
    );
  }),
  /** No `Host` names beyond those always allowed. */
  // Checked by the host guard, which is created with debug off too.
  allowedHosts: option.custom(Object.freeze([]) as readonly string[], ({ value, fallback }) =>
    value === undefined || value === null ? fallback : (value as readonly string[] | false),
  ),
  /** 2 s per health check. */
  healthCheckTimeoutMs: option.integer(2000, { min: 1, max: MAX_TIMER_MS }),
  /** See {@link IntrospectionWatchOptions}. */
  watch: option.group({
    /** 15 s between heartbeats of an idle watch. */
    heartbeatMs: option.integer(15_000, { min: 10, max: MAX_TIMER_MS }),
    /** 64 watches at once. */
    maxWatchers: option.integer(64, { min: 1, max: 10_000 }),
    /** 256 KiB unsent per watch. */
    bufferBytes: option.integer(256 * 1024, { min: 64 * 1024, max: 64 * 1024 * 1024 }),
  }),
  /** See {@link IntrospectionLimits}. */
  limits: option.group({
    /** Bodies expected to serialise within 10 ms go out at once. */
    atOnceBudgetMs: option.integer(10, { min: 0, max: 1000 }),
    /** `?limit=` up to 10 000. */
    maxEventLimit: option.integer(10_000, { min: 1, max: 1_000_000 }),
    /** 4 variable reads at once. */
    maxConcurrentReads: option.integer(4, { min: 1, max: 1000 }),
    /** 64 more waiting. */
    maxQueuedReads: option.integer(64, { min: 0, max: 100_000 }),
    /** The JSONPath limits of {@link DEFAULT_JSONPATH_LIMITS}. */
    jsonPath: option.custom(DEFAULT_JSONPATH_LIMITS, ({ where, path, value }) =>
      resolveLimits(value as Partial<JsonPathLimits> | undefined, where, path),
    ),
  }),
});

/**
 * What every option of {@link createIntrospectionRouter} resolves to when omitted. Frozen. `access`
 * is absent: without it there is no guard.
 */
export const INTROSPECTION_ROUTER_DEFAULTS = ROUTER_SPEC.defaults;

/** The declaration and {@link IntrospectionRouterOptions} name the same options: one added to either alone is a compile error. */
const optionsMatch: SameOptions<IntrospectionRouterOptions, ReturnType<typeof ROUTER_SPEC.resolve>> = true;
void optionsMatch;

/**
 * {@link IntrospectionRouterOptions} checked once, with {@link INTROSPECTION_ROUTER_DEFAULTS}
 * applied: the declaration's, with `watch` and `limits` gathered into the options of `/debug/vars`.
 */
type ResolvedRouterOptions = Omit<ReturnType<typeof ROUTER_SPEC.resolve>, 'watch' | 'limits'> & {
  readonly vars: Omit<VarsOptions, 'sizeHints'>;
};

/** {@link IntrospectionRouterOptions} checked, with {@link INTROSPECTION_ROUTER_DEFAULTS} applied: the options the router runs with. */
export function resolveRouterOptions(options: IntrospectionRouterOptions): ResolvedRouterOptions {
  const { watch, limits, ...resolved } = ROUTER_SPEC.resolve(options);
  // Checked here, so that messages name this factory (`createIntrospectionRouter: pprof.…`); with
  // debug off too (pprof is then not created), so that turning debug on never reveals a typo. The
  // environment only matters to a running profiler.
  if (resolved.pprof !== false) resolvePprofOptions(resolved.pprof, resolved.debug ? process.env : {}, { where: ROUTER, path: 'pprof' });
  return {
    ...resolved,
    vars: {
      watchHeartbeatMs: watch.heartbeatMs,
      maxWatchers: watch.maxWatchers,
      watchBufferBytes: watch.bufferBytes,
      atOnceBudgetMs: limits.atOnceBudgetMs,
      maxEventLimit: limits.maxEventLimit,
      maxConcurrentReads: limits.maxConcurrentReads,
      maxQueuedReads: limits.maxQueuedReads,
      jsonPathLimits: limits.jsonPath,
    },
  };
}

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
    path === '/healthz' ||
    /^\/(livez|readyz)(\/[^/]*)?$/.test(path) ||
    DEBUG_DATA_PATH.test(path) ||
    (consolePaths && isConsolePagePath(path))
  );
}

/**
 * The pprof router is served only below `/debug/pprof/` spelled so: Express matched the mount
 * case-insensitively, and took `/debug/pprof` for `/debug/pprof/`. Another casing is a JSON 404;
 * `/debug/pprof` is redirected to `/debug/pprof/` (as Go's ServeMux does), so that the index is
 * served at one path only, the one a guard reviews.
 */
function exactPprofMount(req: Request, res: Response, next: NextFunction): void {
  if (!req.baseUrl.endsWith('/debug/pprof')) {
    next(
      new HttpError(
        404,
        `no debug endpoint at ${quoteText(pathOf(req), 128)}; paths are case-sensitive: see /debug/vars and /debug/pprof/`,
      ),
    );
    return;
  }
  const path = pathOf(req);
  if (!path.endsWith('/debug/pprof')) {
    next();
    return;
  }
  // Not res.redirect(): it negotiates a body over the whole Accept header. Relative, so a prefix
  // the host mounted us under is kept; the query goes along as it came.
  res.status(301).setHeader('Location', `pprof/${req.originalUrl.slice(path.length)}`);
  res.end();
}

/** The request's whole path, without the query. Not split('?'): a target of a million `?` would make a million strings. */
function pathOf(req: Request): string {
  const mark = req.originalUrl.indexOf('?');
  return mark < 0 ? req.originalUrl : req.originalUrl.slice(0, mark);
}

/** What the router calls on its state: an {@link IntrospectionRouterState}'s methods. */
const STATE_METHODS = [
  'listVars',
  'readVar',
  'healthChecks',
  'shutdownReason',
  'readinessGates',
  'readEvents',
  'watchEvents',
  'setShuttingDown',
] as const;

/**
 * Creates the introspection router: `/healthz`, `/livez`, `/readyz`, `/debug/vars[/<name>]` and
 * `/debug/pprof/*`, at those paths. Mount it on the debug port: `app.use(createIntrospectionRouter(state))`.
 * Everything is read through `state`; nothing here writes to it except `close()` marking the host
 * as shutting down.
 */
export function createIntrospectionRouter(state: IntrospectionRouterState, options: IntrospectionRouterOptions = {}): IntrospectionRouter {
  checkStateArgument(ROUTER, state, STATE_METHODS);
  const resolved = resolveRouterOptions(options);
  const { debug } = resolved;

  // The console's paths are ours only when it is served: with debug off they are the host's.
  const consoleOn = resolved.console && debug;
  const consoleHandler = consoleOn ? createConsoleHandler() : undefined;

  const router = Router();
  const owned = (path: string): boolean => ownsPath(path, consoleOn);
  // A `?field=` template may be maxTemplateLength UTF-16 units, up to 9 characters each once percent-encoded.
  const { maxTemplateLength } = resolved.vars.jsonPathLimits;
  const templateLimit = `; a ?field= template is at most ${maxTemplateLength} characters (limits.jsonPath.maxTemplateLength)`;
  router.use(boundQuery(Math.max(MAX_QUERY_CHARS, 9 * maxTemplateLength + 1024), owned, templateLimit));
  router.use(readOnly(owned));
  router.use(createHealthRouter(state, { checkTimeoutMs: resolved.healthCheckTimeoutMs }));

  let pprof: ReturnType<typeof createPprofRouter> | undefined;
  let vars: ReturnType<typeof createVarsRouter> | undefined;
  const hostGuard = createHostGuard(resolved.allowedHosts);
  if (debug) {
    if (hostGuard) router.use('/debug', hostGuard);
    if (consoleHandler) router.use(consoleHandler);
    vars = createVarsRouter(state, resolved.vars);
    router.use(vars.router);
    if (resolved.pprof !== false) {
      pprof = createPprofRouter(state, resolved.pprof);
      router.use('/debug/pprof', exactPprofMount, pprof);
    }
    // Below our own prefixes, a path we do not serve is ours to refuse (in JSON).
    router.use('/debug/vars', function unknownVarsPath(req: Request, _res: Response, next: NextFunction): void {
      next(
        new HttpError(
          404,
          `no debug endpoint at ${quoteText(pathOf(req), 128)}; see /debug/vars and /debug/pprof/ (paths are case-sensitive)`,
        ),
      );
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

  const close = closeOnce(PPROF_CLOSE_BOUND_MS, () => {
    state.setShuttingDown(true, 'shutting down');
    vars?.closeWatches();
    return pprof?.close();
  });
  // Attached as the pprof router attaches its own: a read-only property, not one a later
  // assignment could replace.
  Object.defineProperties(router, { close: { value: close, enumerable: true } });
  return router as IntrospectionRouter;
}
