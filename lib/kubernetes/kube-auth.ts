import { createHmac, randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { arrayOption, describeValue, refuseOptionsInPlace } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { apiErrorReason } from './api-error';
import { cutText, quoteText } from '../util/cut-text';
import { closeOnce } from '../util/close-once';
import { withTimeout } from '../util/with-timeout';
import { MAX_AUTHORIZATION_LENGTH, readBearerToken } from '../http/bearer';
import { sendError } from '../http/errors';
import { reviewedPath } from '../http/request-path';
import { isPathPattern, PATH_PATTERN_RULE, PROBE_PATHS, unguardedBy } from '../http/unguarded';

/**
 * A user as a TokenReview answers it (`status.user`) and a SubjectAccessReview is asked about:
 * client-node's `V1UserInfo` fits.
 */
export interface UserInfoLike {
  /** The user's name: `system:serviceaccount:<namespace>:<name>` for a ServiceAccount. */
  username?: string;
  /** A unique id of the user. */
  uid?: string;
  /** The groups the user is in. */
  groups?: string[];
  /** Anything else the authenticator said (a ServiceAccount token's pod name, …). */
  extra?: { [key: string]: string[] };
}

/**
 * An `authentication.k8s.io/v1` TokenReview, as sent and as answered: client-node's `V1TokenReview`
 * fits either way.
 */
export interface TokenReviewLike {
  /** `authentication.k8s.io/v1`. */
  apiVersion?: string;
  /** `TokenReview`. */
  kind?: string;
  /** The token to review, and the audiences it must be meant for. */
  spec: {
    /** The bearer token. */
    token?: string;
    /** The audiences the token must be valid for; the API server's own when none. */
    audiences?: string[];
  };
  /** The API server's answer. */
  status?: {
    /** Whether the token is valid. */
    authenticated?: boolean;
    /** Who the token belongs to. */
    user?: UserInfoLike;
    /** The audiences (of those asked) the token is valid for. */
    audiences?: string[];
    /** Why the token could not be reviewed. */
    error?: string;
  };
}

/**
 * A TokenReview as {@link createKubeAuth} sends it: always with the token. client-node 2.x requires
 * `spec.token` in what it sends, 1.x leaves it optional in what it answers.
 */
export interface TokenReviewRequest extends TokenReviewLike {
  /** The token to review, and the audiences it must be meant for. */
  spec: {
    /** The bearer token. */
    token: string;
    /** The audiences the token must be valid for; the API server's own when none. */
    audiences?: string[];
  };
}

/**
 * An `authorization.k8s.io/v1` SubjectAccessReview, as sent and as answered: client-node's
 * `V1SubjectAccessReview` fits either way. This package asks about non-resource URLs only.
 */
export interface SubjectAccessReviewLike {
  /** `authorization.k8s.io/v1`. */
  apiVersion?: string;
  /** `SubjectAccessReview`. */
  kind?: string;
  /** Who asks to do what. */
  spec: {
    /** The user's name. */
    user?: string;
    /** The user's uid. */
    uid?: string;
    /** The user's groups. */
    groups?: string[];
    /** The authenticator's extra information. */
    extra?: { [key: string]: string[] };
    /** The request: its path and verb. */
    nonResourceAttributes?: {
      /** The URL path, without the query. */
      path?: string;
      /** The lower-case HTTP method, HEAD as `get`. */
      verb?: string;
    };
  };
  /** The API server's answer. */
  status?: {
    /** Whether the user may. */
    allowed: boolean;
    /** Whether an authorizer denied explicitly. */
    denied?: boolean;
    /** Why, in the authorizer's words. */
    reason?: string;
    /** Why the review could not be completed. */
    evaluationError?: string;
  };
}

/**
 * The two calls {@link createKubeAuth} makes, written structurally so that this package does not
 * depend on client-node. With client-node (1.x and 2.x, object parameters):
 *
 * ```ts
 * const authn = kc.makeApiClient(k8s.AuthenticationV1Api);
 * const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
 * const api = {
 *   createTokenReview: (p) => authn.createTokenReview(p),
 *   createSubjectAccessReview: (p) => authz.createSubjectAccessReview(p),
 * };
 * ```
 *
 * The controller's ServiceAccount needs the ClusterRole `system:auth-delegator` to create both.
 */
export interface KubeAuthApi {
  /** POST `/apis/authentication.k8s.io/v1/tokenreviews`. */
  createTokenReview(param: { body: TokenReviewRequest }): Promise<TokenReviewLike>;
  /** POST `/apis/authorization.k8s.io/v1/subjectaccessreviews`. */
  createSubjectAccessReview(param: { body: SubjectAccessReviewLike }): Promise<SubjectAccessReviewLike>;
}

/** Options of {@link createKubeAuth}; omitted ones take {@link KUBE_AUTH_DEFAULTS}. */
export interface KubeAuthOptions {
  /**
   * The audiences a token must be meant for (TokenReview `spec.audiences`); the answer's audiences
   * must include one of them. Default: none asked, the API server's own audiences apply.
   */
  audiences?: readonly string[];
  /**
   * Paths answered without a token: exact (`/healthz`) or a prefix ending in `*` (`/healthz/*`).
   * Matched against the request's whole path in canonical form, every spelling of it (as cased,
   * and folded), never one with a `%`. Default: the probes `/healthz`, `/livez`, `/readyz` and their
   * subpaths.
   */
  alwaysAllow?: readonly string[];
  /** How long an allowed decision is reused. Milliseconds; default 10 000. */
  allowedTtlMs?: number;
  /**
   * How long a refusal (401, 403) is reused. Milliseconds; default 2000. An unavailable API server
   * is never cached; a 400 for a path's form needs no review.
   */
  deniedTtlMs?: number;
  /** Decisions kept at most (least recently used go first). Default 10 000. */
  maxEntries?: number;
  /** Decisions being reviewed at most at once; beyond, requests are answered 503. Default 256. */
  maxInFlight?: number;
  /** How long both reviews of one decision may take together before the request is answered 503. Milliseconds; default 5000. */
  timeoutMs?: number;
}

/** What a request came to. */
export type KubeAuthOutcome = 'allowed' | 'unauthenticated' | 'forbidden' | 'unavailable' | 'always_allowed';

/**
 * Where {@link createKubeAuth} reports what each request came to, declared here where it is
 * reported: `createKubeAuthMetrics(registry)` makes one that counts them in
 * `<prefix>auth_requests_total{outcome}`, and a host may write its own.
 */
export interface KubeAuthReporter {
  /**
   * A request came to `outcome`. Called on the request's path: keep it cheap. A throw is ignored
   * (the request is answered all the same).
   */
  reviewed(outcome: KubeAuthOutcome): void;
}

/** Counts of a {@link KubeAuth}, since it was created. */
export interface KubeAuthStats {
  /** Requests by outcome. */
  readonly outcomes: Readonly<Record<KubeAuthOutcome, number>>;
  /** TokenReviews sent. */
  readonly tokenReviews: number;
  /** SubjectAccessReviews sent. */
  readonly subjectAccessReviews: number;
  /** Decisions cached now. */
  readonly entries: number;
  /** Decisions being reviewed now. */
  readonly inFlight: number;
}

/** The middleware of {@link createKubeAuth}, with its counts and its `close()`. */
export interface KubeAuth extends RequestHandler {
  /** Counts since creation. */
  stats(): KubeAuthStats;
  /**
   * Forgets every decision and answers 503 from then on, both before `close()` returns. Reviews
   * in flight settle on their own (within `timeoutMs`) and are not remembered. The reporter is its
   * creator's to close (`createKubeAuthMetrics(...).close()` takes the counter away). The promise
   * settles at once (on a later microtask) and never rejects. Idempotent: every call answers the
   * same promise. Fits `drain({ close: [auth] })`.
   */
  close(): Promise<void>;
}

const WHERE = 'createKubeAuth';
const MAX_MS = 3_600_000;
/** The most of a user's name, uid, group or extra value accepted; a longer one is refused, not cut (cutting would change who is asked about). */
const MAX_USER_TEXT = 1024;
const MAX_GROUPS = 256;
const MAX_EXTRA_KEYS = 64;
const MAX_EXTRA_VALUES = 64;
/** A longer path is refused before any review. */
const MAX_PATH = 8192;
/** The most of a user name or path echoed in a message. */
const MAX_ECHOED = 256;
const MAX_REASON = 200;
const VERBS: Readonly<Record<string, string>> = { GET: 'get', HEAD: 'get', POST: 'post', PUT: 'put', PATCH: 'patch', DELETE: 'delete' };

function isAudience(entry: unknown): entry is string {
  return typeof entry === 'string' && entry !== '' && entry.length <= MAX_USER_TEXT;
}

/** Whether `value` is an object with a function at each of `names`. */
function hasMethods(value: unknown, names: readonly string[]): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const methods = value as Record<string, unknown>;
  return names.every((name) => typeof methods[name] === 'function');
}

function isKubeAuthApi(value: unknown): value is KubeAuthApi {
  return hasMethods(value, ['createTokenReview', 'createSubjectAccessReview']);
}

function isReporter(value: unknown): value is KubeAuthReporter {
  return hasMethods(value, ['reviewed']);
}

/** A metrics registry, given where the reporter goes (the call shape before the reporter). */
function isRegistry(value: unknown): boolean {
  return hasMethods(value, ['getSingleMetric', 'registerMetric']);
}

/** The probes, and their subpaths. */

/** The options of {@link createKubeAuth}, declared once: kinds, ranges and defaults. */
const KUBE_AUTH_SPEC = optionSpec(WHERE, {
  /** None asked: the API server's own audiences. */
  audiences: option.custom(undefined, (i) => {
    const given = arrayOption(i.where, i.path, i.value, undefined, isAudience, `non-empty strings of at most ${MAX_USER_TEXT} characters`);
    if (given !== undefined && given.length === 0)
      throw new TypeError(`${i.where}: ${i.path} must name at least one audience (or be left out)`);
    return given;
  }),
  /** The probes and their subpaths. */
  alwaysAllow: option.array(PROBE_PATHS, isPathPattern, PATH_PATTERN_RULE),
  /** 10 s. */
  allowedTtlMs: option.integer(10_000, { min: 0, max: MAX_MS }),
  /** 2 s. */
  deniedTtlMs: option.integer(2000, { min: 0, max: MAX_MS }),
  /** 10 000 decisions. */
  maxEntries: option.integer(10_000, { min: 1, max: 1_000_000 }),
  /** 256 decisions under review at once. */
  maxInFlight: option.integer(256, { min: 1, max: 100_000 }),
  /** 5 s for both reviews. */
  timeoutMs: option.integer(5000, { min: 1, max: 60_000 }),
});

/** What the options of {@link createKubeAuth} resolve to when omitted. Frozen. */
export const KUBE_AUTH_DEFAULTS = KUBE_AUTH_SPEC.defaults;

/** A decision: pass on, or answer with a status and a message. */
type Decision =
  | { readonly allow: true; readonly always?: true }
  | { readonly allow: false; readonly status: 400 | 401 | 403 | 503; readonly message: string };

interface Entry {
  readonly decision: Decision;
  readonly expires: number;
}

const ALLOW: Decision = { allow: true };

function refuse(status: 400 | 401 | 403 | 503, message: string): Decision {
  return { allow: false, status, message };
}

function unavailable(reason: string): Decision {
  return refuse(503, `authorization unavailable: ${reason}`);
}

function outcomeOf(decision: Decision): KubeAuthOutcome {
  if (decision.allow) return decision.always ? 'always_allowed' : 'allowed';
  // A target refused for its form (400) is refused before any review, as a forbidden one.
  return decision.status === 401 ? 'unauthenticated' : decision.status === 503 ? 'unavailable' : 'forbidden';
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_USER_TEXT;
}

function isTextList(value: unknown, max: number): value is string[] {
  return Array.isArray(value) && value.length <= max && value.every(isText);
}

/**
 * The user of an authenticated TokenReview, checked: strings of bounded length, bounded lists.
 * `undefined` when it exceeds a bound or is not what a TokenReview answers.
 */
function userOf(user: unknown): SubjectAccessReviewLike['spec'] | undefined {
  if (typeof user !== 'object' || user === null) return undefined;
  const { username, uid, groups, extra } = user as Record<string, unknown>;
  if (!isText(username) || username === '') return undefined;
  if (uid !== undefined && !isText(uid)) return undefined;
  if (groups !== undefined && !isTextList(groups, MAX_GROUPS)) return undefined;
  let extras: { [key: string]: string[] } | undefined;
  if (extra !== undefined) {
    if (typeof extra !== 'object' || extra === null || Array.isArray(extra)) return undefined;
    const entries = Object.entries(extra);
    if (entries.length > MAX_EXTRA_KEYS) return undefined;
    extras = {};
    for (const [key, values] of entries) {
      if (!isText(key) || !isTextList(values, MAX_EXTRA_VALUES)) return undefined;
      extras[key] = [...values];
    }
  }
  return {
    user: username,
    ...(uid === undefined ? {} : { uid }),
    ...(groups === undefined ? {} : { groups: [...groups] }),
    ...(extras === undefined ? {} : { extra: extras }),
  };
}

/** The `status` of an answer, or undefined when the answer has none. */
function statusOf(answer: unknown): Record<string, unknown> | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined;
  const status = (answer as { status?: unknown }).status;
  return typeof status === 'object' && status !== null ? (status as Record<string, unknown>) : undefined;
}

/** What the middleware runs with: {@link KubeAuthOptions} resolved, the review API and the reporter. */
type Resolved = ReturnType<typeof KUBE_AUTH_SPEC.resolve> & { readonly api: KubeAuthApi; readonly reporter: KubeAuthReporter | undefined };

/** Every name that makes an object given in the API's or the reporter's place options, the old dependencies and options included. */
const OPTION_KEYS: readonly string[] = ['api', 'registry', 'metricPrefix', ...KUBE_AUTH_SPEC.keys];
const NEW_SHAPE = 'createKubeAuth(api, reporter, { audiences })';
/** The call that counts in a registry, as the migration from a registry (and `metricPrefix`) says it. */
const METRICS_SHAPE = 'createKubeAuth(api, createKubeAuthMetrics(registry, { prefix }), { audiences })';

/** The arguments of {@link createKubeAuth}, checked; options given in the place of the API or the reporter are refused with the call's new shape. */
function resolveKubeAuth(api: unknown, reporter: unknown, options: unknown): Resolved {
  refuseOptionsInPlace(WHERE, api, isKubeAuthApi, OPTION_KEYS, {
    position: 'first',
    dependency: 'the review API (createTokenReview and createSubjectAccessReview)',
    options: 'third',
    call: NEW_SHAPE,
  });
  if (!isKubeAuthApi(api)) {
    throw new TypeError(
      `${WHERE}: api must be an object with createTokenReview and createSubjectAccessReview (client-node's AuthenticationV1Api and AuthorizationV1Api), got ${describeValue(api)}`,
    );
  }
  if (reporter !== undefined) {
    if (isRegistry(reporter)) {
      throw new TypeError(
        `${WHERE}: the second argument is the reporter (or undefined), not a registry: count in one with ${METRICS_SHAPE}`,
      );
    }
    refuseOptionsInPlace(WHERE, reporter, isReporter, OPTION_KEYS, {
      position: 'second',
      dependency: 'the reporter (or undefined)',
      options: 'third',
      call: NEW_SHAPE,
    });
    if (!isReporter(reporter)) {
      throw new TypeError(
        `${WHERE}: reporter must be a KubeAuthReporter (with reviewed(outcome)), for example createKubeAuthMetrics(registry), or undefined; got ${describeValue(reporter)}`,
      );
    }
  }
  if (typeof options === 'object' && options !== null && Object.hasOwn(options, 'metricPrefix')) {
    throw new TypeError(`${WHERE}: option "metricPrefix" moved to the counter's own factory: ${METRICS_SHAPE}`);
  }
  return { ...KUBE_AUTH_SPEC.resolve(options), api, reporter };
}

/** Decisions by key, least recently used first, each until it expires. 503s are never kept. */
class DecisionCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly options: Pick<Resolved, 'allowedTtlMs' | 'deniedTtlMs' | 'maxEntries'>) {}

  get size(): number {
    return this.entries.size;
  }

  remember(key: string, decision: Decision): void {
    if (!decision.allow && decision.status === 503) return;
    const ttl = decision.allow ? this.options.allowedTtlMs : this.options.deniedTtlMs;
    if (ttl === 0) return;
    this.entries.delete(key);
    this.entries.set(key, { decision, expires: performance.now() + ttl });
    while (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  recall(key: string): Decision | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (entry.expires <= performance.now()) return undefined;
    this.entries.set(key, entry);
    return entry.decision;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** The two reviews of one decision, and how many of each were sent. */
class Reviewer {
  tokenReviews = 0;
  subjectAccessReviews = 0;

  constructor(private readonly options: Pick<Resolved, 'api' | 'audiences' | 'timeoutMs'>) {}

  /**
   * Both reviews, within one deadline; never rejects. The token lives in these calls only. The user
   * must be allowed every one of `paths` (the spellings of one request), asked about one by one.
   */
  async review(token: string, verb: string, paths: readonly string[]): Promise<Decision> {
    try {
      const deadline = performance.now() + this.options.timeoutMs;
      const user = await this.authenticate(token, deadline);
      if (typeof user === 'string') return refuse(401, user);
      if ('allow' in user) return user;
      for (const path of paths) {
        const decision = await this.authorize(user, verb, path, deadline);
        if (!decision.allow) return decision;
      }
      return ALLOW;
    } catch (err) {
      if (err instanceof ReviewFailed) {
        // The API server's words, never the token, should it echo what it was sent; replaced before
        // the reason is cut, so that no head of the token is left either.
        const reason = apiErrorReason(err.cause, 4 * MAX_AUTHORIZATION_LENGTH)
          .split(token)
          .join('[token]');
        return unavailable(`${err.what} failed: ${cutText(reason, MAX_REASON)}`);
      }
      // An answer whose getters throw (a Proxy, a host's own client): read as no answer.
      return unavailable('the review answer could not be read');
    }
  }

  private async call<T>(what: string, deadline: number, run: () => Promise<T>): Promise<T> {
    const left = Math.max(1, Math.ceil(deadline - performance.now()));
    try {
      return await withTimeout(run, left, () => new Error(`${what}: no answer within ${this.options.timeoutMs} ms`));
    } catch (err) {
      throw new ReviewFailed(what, err);
    }
  }

  /** The user, a refusal's message, or a 503. */
  private async authenticate(token: string, deadline: number): Promise<SubjectAccessReviewLike['spec'] | string | Decision> {
    const { api, audiences } = this.options;
    this.tokenReviews += 1;
    const answer = await this.call('TokenReview', deadline, () =>
      api.createTokenReview({
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token, ...(audiences === undefined ? {} : { audiences: [...audiences] }) },
        },
      }),
    );
    const status = statusOf(answer);
    if (status === undefined || (status['authenticated'] !== undefined && typeof status['authenticated'] !== 'boolean')) {
      return unavailable('TokenReview answered without a status');
    }
    if (status['authenticated'] !== true) return 'token rejected';
    if (audiences !== undefined) {
      const granted = status['audiences'];
      if (!Array.isArray(granted) || !granted.some((a) => audiences.includes(a as string))) {
        return 'token rejected: not meant for this audience';
      }
    }
    return userOf(status['user']) ?? 'token rejected: its user is missing or exceeds the limits (names and groups)';
  }

  private async authorize(user: SubjectAccessReviewLike['spec'], verb: string, path: string, deadline: number): Promise<Decision> {
    this.subjectAccessReviews += 1;
    const answer = await this.call('SubjectAccessReview', deadline, () =>
      this.options.api.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { ...user, nonResourceAttributes: { path, verb } },
        },
      }),
    );
    const allowed = statusOf(answer)?.['allowed'];
    if (typeof allowed !== 'boolean') return unavailable('SubjectAccessReview answered without status.allowed');
    if (allowed) return ALLOW;
    return refuse(403, `forbidden: user ${quoteText(user.user!, MAX_ECHOED)} may not ${verb} ${cutText(path, MAX_ECHOED)}`);
  }
}

/** A review call that failed or took too long. */
class ReviewFailed extends Error {
  constructor(
    readonly what: string,
    override readonly cause: unknown,
  ) {
    super(what);
  }
}

/** The request's whole path (mount included), without the query. */
function rawPathOf(req: Request): string {
  const url = req.originalUrl ?? req.url;
  const queryAt = url.indexOf('?');
  return queryAt < 0 ? url : url.slice(0, queryAt);
}

/**
 * What a request is before any review: refused for its path, always allowed, or the spellings of
 * its path to review. The path the routers serve is read once: a target that is not canonical is
 * refused, with or without a token, and the rest is reviewed (or always allowed) as every spelling of it.
 */
function readTarget(req: Request, alwaysAllow: readonly string[]): Decision | readonly string[] {
  const raw = rawPathOf(req);
  if (raw.length > MAX_PATH) return refuse(403, `path longer than ${MAX_PATH} characters`);
  const target = reviewedPath(req.originalUrl ?? req.url);
  if ('refused' in target) return refuse(400, target.refused);
  // The probes, and a GET of the console's page: the rule createAccessGuard follows too.
  return unguardedBy(req.method, req.originalUrl ?? req.url, alwaysAllow, req.path) === undefined
    ? target.spellings
    : { allow: true, always: true };
}

/**
 * How many reviews may start in one turn of the event loop. Each start is the host's API client
 * opening a request (often a new TLS connection, whose handshake is synchronous work): a burst of
 * distinct tokens started all at once would be hundreds of them in one turn. The rest start on the
 * next turns, in order.
 */
const REVIEWS_PER_TURN = 8;

/** Runs at most `limit` tasks per turn of the event loop; later ones wait for the next turns, first come first run. */
class TurnLimiter {
  private startedThisTurn = 0;
  private readonly waiting: Array<() => void> = [];
  private turnScheduled = false;

  constructor(private readonly limit: number) {}

  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.startedThisTurn < this.limit && this.waiting.length === 0) {
      this.count();
      return task();
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(() => task().then(resolve, reject));
      this.count(0);
    });
  }

  /** Counts a start in this turn (or none), and makes sure the next turn resets the count and starts the waiting. */
  private count(started = 1): void {
    this.startedThisTurn += started;
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => {
      this.turnScheduled = false;
      this.startedThisTurn = 0;
      while (this.waiting.length > 0 && this.startedThisTurn < this.limit) {
        this.startedThisTurn++;
        this.waiting.shift()!();
      }
      if (this.waiting.length > 0 || this.startedThisTurn > 0) this.count(0);
    });
  }
}

/**
 * Authenticates and authorises requests the Kubernetes way, like controller-runtime's
 * `filters.WithAuthenticationAndAuthorization`: the bearer token is reviewed with a TokenReview,
 * then the user it names is reviewed with a SubjectAccessReview for the request's path and verb
 * as a non-resource URL, so the usual RBAC rule works:
 *
 * ```yaml
 * rules: [{ nonResourceURLs: ['/metrics', '/debug/*'], verbs: ['get'] }]
 * ```
 *
 * Mount it in front of the routers it guards. Answers, as JSON `{"error": …}`: 401 `no bearer
 * token`, `malformed bearer token` or `token rejected` (with `WWW-Authenticate: Bearer`); 403
 * `forbidden: user "…" may not get /metrics`; 503 `authorization unavailable: …` when the API
 * server cannot be reached or answers out of shape within `timeoutMs` (fail closed). The paths of
 * `alwaysAllow` (the probes) pass without a token, and so does a GET of the console's static page
 * (no data: the page asks for a token before it reads any): the rule `createAccessGuard` follows.
 *
 * What is reviewed is what is served. The path is read once, from the request target: a target
 * that is not in canonical form is answered 400 (`request target … has a fragment`, `path … escapes
 * "c" (%63)…`, an absolute-form target, an empty or dot segment, an invalid or needless escape),
 * token or not. The rest is reviewed percent-decoded, as the API server reads a path, and, where it
 * differs, in its folded form too (ASCII lower case, no trailing slash), the path Express's default
 * routing also takes it for: every spelling must be allowed. The package's routers serve only the
 * canonical spelling of their own paths; a host's own routes behind this guard should be created
 * with `express.Router({ caseSensitive: true, strict: true })` when their paths have upper case.
 *
 * Decisions are cached by a keyed hash of the token with the verb and path (the token itself is
 * kept nowhere), allowed ones for `allowedTtlMs`, refusals for `deniedTtlMs`, at most `maxEntries`;
 * concurrent requests with the same token, verb and path share one review.
 *
 * @param api - The TokenReview and SubjectAccessReview calls.
 * @param reporter - Where each request's outcome is reported: `createKubeAuthMetrics(registry)`
 *   counts them in `<prefix>auth_requests_total{outcome}`; `undefined` for nowhere (`stats()`
 *   counts them all the same).
 * @throws TypeError on a wrong API or reporter, or invalid options, naming the option (with a "did
 *   you mean" for a misspelled one); options given in the place of the API or the reporter, a
 *   registry given as the reporter, and the option `metricPrefix` are refused with the call's new
 *   shape.
 */
export function createKubeAuth(api: KubeAuthApi, reporter?: KubeAuthReporter, options?: KubeAuthOptions): KubeAuth {
  const resolved = resolveKubeAuth(api, reporter, options);
  const { alwaysAllow, maxInFlight } = resolved;
  const hashKey = randomBytes(32);
  const cache = new DecisionCache(resolved);
  const reviewer = new Reviewer(resolved);
  const pending = new Map<string, Promise<Decision>>();
  const starts = new TurnLimiter(REVIEWS_PER_TURN);
  const outcomes: Record<KubeAuthOutcome, number> = { allowed: 0, unauthenticated: 0, forbidden: 0, unavailable: 0, always_allowed: 0 };
  let closed = false;

  const answer = (decision: Decision, res: Response, next: NextFunction): void => {
    const outcome = outcomeOf(decision);
    outcomes[outcome] += 1;
    try {
      reporter?.reviewed(outcome);
    } catch {
      // The host's reporter decides nothing: the request is answered all the same.
    }
    if (decision.allow) {
      if (!res.destroyed) next();
      return;
    }
    sendError(res, decision.status, decision.message, decision.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});
  };

  /** The decision for a key: cached, shared with the requests already waiting for it, or reviewed now. */
  const decide = (key: string, token: string, verb: string, paths: readonly string[]): Decision | Promise<Decision> => {
    const known = cache.recall(key) ?? pending.get(key);
    if (known !== undefined) return known;
    if (pending.size >= maxInFlight) return unavailable(`more than ${maxInFlight} reviews in flight`);
    const decided = starts
      .run(() => reviewer.review(token, verb, paths))
      .then((decision) => {
        pending.delete(key);
        if (!closed) cache.remember(key, decision);
        return decision;
      });
    pending.set(key, decided);
    return decided;
  };

  const middleware = function kubeAuth(req: Request, res: Response, next: NextFunction): void {
    const spellings = readTarget(req, alwaysAllow);
    if ('allow' in spellings) {
      answer(spellings, res, next);
      return;
    }
    const bearer = readBearerToken(req.headers.authorization);
    if (closed) {
      answer(unavailable('closed'), res, next);
      return;
    }
    if ('refused' in bearer) {
      answer(refuse(401, bearer.refused), res, next);
      return;
    }
    const verb = VERBS[req.method] ?? req.method.toLowerCase();
    const hmac = createHmac('sha256', hashKey).update(bearer.token).update('\0').update(verb);
    for (const path of spellings) hmac.update('\0').update(path);
    const key = hmac.digest('base64');
    const decision = decide(key, bearer.token, verb, spellings);
    if ('allow' in decision) answer(decision, res, next);
    else decision.then((decided) => answer(decided, res, next)).catch(next);
  };

  return Object.assign(middleware, {
    stats: (): KubeAuthStats => ({
      outcomes: { ...outcomes },
      tokenReviews: reviewer.tokenReviews,
      subjectAccessReviews: reviewer.subjectAccessReviews,
      entries: cache.size,
      inFlight: pending.size,
    }),
    close: closeOnce(0, () => {
      closed = true;
      cache.clear();
    }),
  });
}
