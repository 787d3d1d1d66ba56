/**
 * createKubeAuth: its options, and the requests it lets through a real Express app in front of the
 * metrics and introspection routers, decided by a real kube-apiserver (skipped outside CI when the
 * control plane is not built) under the RBAC of examples/kubernetes/metrics-rbac.yaml. The review
 * API is a small node:https client (client-node is ESM-only; Jest here runs CommonJS) that counts
 * its calls, and is wrapped to be slow, to answer garbage or to fail.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import express from 'express';
import yaml from 'js-yaml';
import { Registry } from 'prom-client';
import type * as k8s from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import * as pkg from '../../lib';
import {
  createKubeAuth,
  KUBE_AUTH_DEFAULTS,
  type KubeAuth,
  type KubeAuthApi,
  type KubeAuthOptions,
  type KubeAuthOutcome,
  type KubeAuthReporter,
  type SubjectAccessReviewLike,
  type TokenReviewLike,
} from '../../lib/kubernetes/kube-auth';
import { createAccessGuard } from '../../lib/http/access-guard';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createKubeAuthMetrics, createMetricsRouter, KUBE_AUTH_METRICS_DEFAULTS } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';
import { describeWithControlPlane, startControlPlane, type ControlPlane, type KubeObject } from '../helpers/control-plane';
import { untilAllowed } from '../helpers/rbac';
import { eventually } from '../helpers/eventually';
import { collector } from '../helpers/gc';
import { closeAllListening, listen, request, requestApp, type HttpResponse, type Listening } from '../helpers/http';
import { prng } from '../helpers/prng';
import { rawRequest } from '../helpers/raw-http';
import { spellings } from '../helpers/spellings';

const MANIFEST = 'examples/kubernetes/metrics-rbac.yaml';
/** The client-node module, as `await import('@kubernetes/client-node')` gives it. */
type ClientNode = typeof k8s;
/** What a loaded 2-core CI machine may add to a bound. */
const SLACK_MS = 1000;

/**
 * Compile-time: client-node's two APIs (the devDependency, 1.x) make the review API as the TSDoc
 * says. The region is docs/security.md's code block.
 */
// #region kube-auth
export function guardedMetricsApp(k8s: ClientNode, kc: k8s.KubeConfig, registry: Registry): express.Express {
  // The controller's ServiceAccount needs system:auth-delegator (examples/kubernetes/metrics-rbac.yaml).
  const authn = kc.makeApiClient(k8s.AuthenticationV1Api);
  const authz = kc.makeApiClient(k8s.AuthorizationV1Api);
  const auth = createKubeAuth(
    {
      createTokenReview: (p) => authn.createTokenReview(p),
      createSubjectAccessReview: (p) => authz.createSubjectAccessReview(p),
    },
    createKubeAuthMetrics(registry), // ctl_auth_requests_total{outcome}
  );
  const app = express();
  app.use(auth); // /healthz, /livez and /readyz pass without a token; everything else needs RBAC
  app.use(createMetricsRouter(registry));
  return app;
}
// #endregion

const noApi: KubeAuthApi = {
  createTokenReview: () => Promise.reject(new Error('unused')),
  createSubjectAccessReview: () => Promise.reject(new Error('unused')),
};

describe('createKubeAuth options', () => {
  /** The option rows below as the call takes them: the API first, the reporter second, the options third. */
  const create = (given: unknown): KubeAuth => {
    if (given === undefined) return createKubeAuth(undefined as never);
    const { api, reporter, ...options } = given as { api?: unknown; reporter?: unknown };
    return createKubeAuth(api as KubeAuthApi, reporter as KubeAuthReporter | undefined, options as KubeAuthOptions);
  };

  it('is exported with its defaults, frozen', () => {
    expect(pkg.createKubeAuth).toBe(createKubeAuth);
    expect(pkg.KUBE_AUTH_DEFAULTS).toBe(KUBE_AUTH_DEFAULTS);
    expect(KUBE_AUTH_DEFAULTS).toEqual({
      alwaysAllow: ['/healthz', '/healthz/*', '/livez', '/livez/*', '/readyz', '/readyz/*'],
      allowedTtlMs: 10_000,
      deniedTtlMs: 2000,
      maxEntries: 10_000,
      maxInFlight: 256,
      timeoutMs: 5000,
    });
    expect(Object.isFrozen(KUBE_AUTH_DEFAULTS)).toBe(true);
    expect(pkg.createKubeAuthMetrics).toBe(createKubeAuthMetrics);
    expect(pkg.KUBE_AUTH_METRICS_DEFAULTS).toBe(KUBE_AUTH_METRICS_DEFAULTS);
    expect(KUBE_AUTH_METRICS_DEFAULTS).toEqual({ prefix: 'ctl_' });
    expect(Object.isFrozen(KUBE_AUTH_METRICS_DEFAULTS)).toBe(true);
  });

  it.each([
    [undefined, /api must be an object with createTokenReview and createSubjectAccessReview .*got undefined/],
    [{}, /api must be an object with createTokenReview and createSubjectAccessReview/],
    [{ api: { createTokenReview() {} } }, /api must be an object with createTokenReview/],
    [{ api: noApi, audiences: [] }, /audiences must name at least one audience/],
    [{ api: noApi, audiences: [''] }, /audiences/],
    [{ api: noApi, alwaysAllow: ['healthz'] }, /alwaysAllow/],
    [{ api: noApi, alwaysAllow: ['/a*b'] }, /alwaysAllow/],
    [{ api: noApi, maxEntries: 0 }, /maxEntries/],
    [{ api: noApi, timeoutMs: 'soon' }, /timeoutMs/],
    [{ api: noApi, reporter: {} }, /reporter must be a KubeAuthReporter \(with reviewed\(outcome\)\)/],
    [{ api: noApi, reporter: new Registry() }, /the second argument is the reporter \(or undefined\), not a registry/],
    [{ api: noApi, metricPrefix: 'x_' }, /option "metricPrefix" moved to the counter's own factory/],
    [{ api: noApi, allowedTTLMs: 5 }, /unknown option "allowedTTLMs" \(did you mean "allowedTtlMs"\?\)/],
  ])('rejects %p', (options, message) => {
    expect(() => create(options)).toThrow(TypeError);
    expect(() => create(options)).toThrow(message);
  });

  it('registers its counter once per registry and prefix, and takes it away on close()', async () => {
    const registry = new Registry();
    const counter = createKubeAuthMetrics(registry);
    const auth = createKubeAuth(noApi, counter);
    expect(counter.name).toBe('ctl_auth_requests_total');
    expect(() => createKubeAuthMetrics(registry)).toThrow(/already has a metric named ctl_auth_requests_total/);
    const text = await registry.metrics();
    for (const outcome of ['allowed', 'unauthenticated', 'forbidden', 'unavailable', 'always_allowed']) {
      expect(text).toContain(`ctl_auth_requests_total{outcome="${outcome}"} 0`);
    }
    const closed = counter.close();
    expect(counter.close()).toBe(closed);
    await closed;
    expect(registry.getSingleMetric('ctl_auth_requests_total')).toBeUndefined();
    void createKubeAuthMetrics(registry).close();
    await auth.close();
  });

  it("checks the counter's registry and options, naming createKubeAuthMetrics", () => {
    expect(() => createKubeAuthMetrics({} as never)).toThrow(
      new TypeError(
        'createKubeAuthMetrics: the first argument must be a Registry of prom-client or @prometheus-io/client, for example new Registry()',
      ),
    );
    expect(() => createKubeAuthMetrics(new Registry(), { prefix: '1x' })).toThrow(
      /^createKubeAuthMetrics: prefix must be a string matching/,
    );
    expect(() => createKubeAuthMetrics(new Registry(), { prefx: 'a_' } as never)).toThrow(
      'createKubeAuthMetrics: unknown option "prefx" (did you mean "prefix"?)',
    );
  });

  it('exposes the counter as createKubeAuth(api, registry) did, byte for byte', async () => {
    const registry = new Registry();
    const auth = createKubeAuth(noApi, createKubeAuthMetrics(registry));
    createKubeAuthMetrics(registry, { prefix: 'x_' });
    const help = 'Requests to the guarded endpoints, by what the TokenReview and SubjectAccessReview decided';
    const family = (prefix: string, counts: Readonly<Record<string, number>> = {}): string =>
      `# HELP ${prefix}auth_requests_total ${help}\n# TYPE ${prefix}auth_requests_total counter\n` +
      ['allowed', 'unauthenticated', 'forbidden', 'unavailable', 'always_allowed']
        .map((outcome) => `${prefix}auth_requests_total{outcome="${outcome}"} ${counts[outcome] ?? 0}\n`)
        .join('');
    // What createKubeAuth(api, registry) and createKubeAuth(api, registry, { metricPrefix: 'x_' }) exposed before the counter moved.
    expect(await registry.metrics()).toBe(`${family('ctl_')}\n${family('x_')}`);
    const app = express().use(auth, (_req: express.Request, res: express.Response) => void res.send('ok'));
    await requestApp(app, '/healthz');
    await requestApp(app, '/metrics');
    await requestApp(app, '/%63');
    expect(await registry.metrics()).toBe(`${family('ctl_', { always_allowed: 1, unauthenticated: 1, forbidden: 1 })}\n${family('x_')}`);
    await auth.close();
  });

  it('reports every outcome to a reporter the host wrote, with no metrics at all; a throw of it changes no answer', async () => {
    const seen: KubeAuthOutcome[] = [];
    const auth = createKubeAuth(noApi, { reviewed: (outcome) => void seen.push(outcome) });
    const app = express().use(auth, (_req: express.Request, res: express.Response) => void res.send('ok'));
    expect((await requestApp(app, '/healthz')).status).toBe(200);
    expect((await requestApp(app, '/metrics')).status).toBe(401);
    expect((await requestApp(app, '/metrics', { headers: { authorization: 'Bearer t' } })).status).toBe(503);
    expect(seen).toEqual(['always_allowed', 'unauthenticated', 'unavailable']);
    expect(auth.stats().outcomes).toMatchObject({ always_allowed: 1, unauthenticated: 1, unavailable: 1 });

    const throwing = createKubeAuth(noApi, {
      reviewed: () => {
        throw new Error('broken reporter');
      },
    });
    const guarded = express().use(throwing, (_req: express.Request, res: express.Response) => void res.send('ok'));
    expect((await requestApp(guarded, '/healthz')).text).toBe('ok');
    expect((await requestApp(guarded, '/metrics')).status).toBe(401);
    await Promise.all([auth.close(), throwing.close()]);
  });

  it('lets through exactly what createAccessGuard does: the probes in their canonical spelling, and a GET of the console page', async () => {
    const state = createIntrospectionState();
    const routers = [createIntrospectionRouter(state, { pprof: false }), createIntrospectionRouter(state, { pprof: false })];
    const kube = createKubeAuth(noApi);
    const token = createAccessGuard({ token: 'a-long-enough-token-1234' })!;
    const apps = [express().use(kube, routers[0]!), express().use(token, routers[1]!)];
    const paths = [
      '/healthz',
      '/livez/ping',
      '/readyz?verbose',
      '/debug/',
      '/debug/console/console.js',
      '/debug/vars',
      '/debug/vars/uptime',
      '/HEALTHZ',
      '/healthz/',
      '/debug/pprof/',
    ];
    for (const path of paths) {
      const [viaKube, viaToken] = await Promise.all(apps.map((app) => requestApp(app, path)));
      // Either passes (any answer of the router) or is refused for want of a credential (401).
      expect({ path, refused: viaKube!.status === 401 }).toEqual({ path, refused: viaToken!.status === 401 });
    }
    expect((await requestApp(apps[0]!, '/debug/')).status).toBe(200);
    expect((await requestApp(apps[0]!, '/debug/vars')).status).toBe(401);
    expect((await requestApp(apps[0]!, '/debug/', { method: 'POST' })).status).toBe(401);
    await Promise.all([kube.close(), ...routers.map((r) => r.close())]);
  });

  it('refuses options where the API or the reporter goes (the 0.1 call shape), a registry, and metricPrefix, with the new shape', () => {
    expect(() => createKubeAuth({ api: noApi, registry: new Registry() } as never)).toThrow(
      new TypeError(
        'createKubeAuth: the first argument is the review API (createTokenReview and createSubjectAccessReview); ' +
          'options come third: createKubeAuth(api, reporter, { audiences })',
      ),
    );
    expect(() => createKubeAuth(noApi, { audiences: ['a'] } as never)).toThrow(
      new TypeError(
        'createKubeAuth: the second argument is the reporter (or undefined); options come third: createKubeAuth(api, reporter, { audiences })',
      ),
    );
    const metricsShape = 'createKubeAuth(api, createKubeAuthMetrics(registry, { prefix }), { audiences })';
    expect(() => createKubeAuth(noApi, new Registry() as never)).toThrow(
      new TypeError(
        `createKubeAuth: the second argument is the reporter (or undefined), not a registry: count in one with ${metricsShape}`,
      ),
    );
    expect(() => createKubeAuth(noApi, undefined, { metricPrefix: 'auth_' } as never)).toThrow(
      new TypeError(`createKubeAuth: option "metricPrefix" moved to the counter's own factory: ${metricsShape}`),
    );
    expect(() => createKubeAuth(noApi, undefined, { audiences: ['a'] })).not.toThrow();
  });
});

/** A review API over node:https with a bearer token, counting its calls. */
interface CountingApi extends KubeAuthApi {
  readonly calls: { tokenReviews: number; subjectAccessReviews: number };
}

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP ${code}`);
  }
}

function reviewApi(plane: ControlPlane, token: string): CountingApi {
  const agent = new https.Agent({ ca: fs.readFileSync(plane.caFile), keepAlive: true, maxSockets: 64 });
  const post = <T>(urlPath: string, body: unknown): Promise<T> =>
    new Promise((resolve, reject) => {
      const payload = JSON.stringify(body);
      const req = https.request(
        `${plane.url}${urlPath}`,
        {
          method: 'POST',
          agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            if ((res.statusCode ?? 0) >= 300) {
              reject(new ApiError(res.statusCode ?? 0, text));
              return;
            }
            try {
              resolve(JSON.parse(text) as T);
            } catch (err) {
              reject(err as Error);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const calls = { tokenReviews: 0, subjectAccessReviews: 0 };
  return {
    calls,
    createTokenReview: ({ body }) => {
      calls.tokenReviews++;
      return post<TokenReviewLike>('/apis/authentication.k8s.io/v1/tokenreviews', body);
    },
    createSubjectAccessReview: ({ body }) => {
      calls.subjectAccessReviews++;
      return post<SubjectAccessReviewLike>('/apis/authorization.k8s.io/v1/subjectaccessreviews', body);
    },
  };
}

function totalCalls(api: CountingApi): number {
  return api.calls.tokenReviews + api.calls.subjectAccessReviews;
}

interface Served {
  readonly origin: string;
  readonly port: number;
  readonly auth: KubeAuth;
  readonly registry: Registry;
}

describeWithControlPlane('createKubeAuth against a real kube-apiserver', () => {
  let plane: ControlPlane;
  /** The controller's ServiceAccount, bound to system:auth-delegator by the manifest. */
  let reviewer: CountingApi;
  const tokens: Record<'prometheus' | 'operator' | 'stranger' | 'undelegated', string> = {
    prometheus: '',
    operator: '',
    stranger: '',
    undelegated: '',
  };
  const auths: KubeAuth[] = [];
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, 'v1');
  const introspection = createIntrospectionRouter(state, { pprof: false });

  async function serve(
    { api = reviewer, ...options }: KubeAuthOptions & { api?: KubeAuthApi } = {},
    listenOptions: Parameters<typeof listen>[1] = {},
  ): Promise<Served> {
    const registry = new Registry();
    const auth = createKubeAuth(api, createKubeAuthMetrics(registry), options);
    auths.push(auth);
    const app = express();
    app.use(auth);
    app.use(createMetricsRouter(registry));
    app.use(introspection);
    const served: Listening = await listen(app, listenOptions);
    return { origin: served.origin, port: served.port, auth, registry };
  }

  const get = (served: Served, urlPath: string, token?: string, method = 'GET'): Promise<HttpResponse> =>
    request(`${served.origin}${urlPath}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });

  beforeAll(async () => {
    plane = await startControlPlane();
    const manifest = yaml.loadAll(fs.readFileSync(path.join(__dirname, '..', '..', MANIFEST), 'utf8')) as KubeObject[];
    await plane.apply(manifest);
    // A reader of /metrics and /debug/*, for operators.
    await plane.apply([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'debug-reader' },
        rules: [{ nonResourceURLs: ['/metrics', '/debug/*'], verbs: ['get'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'operator-debug-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'debug-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'operator', namespace: 'ops' }],
      },
    ]);
    reviewer = reviewApi(plane, await plane.serviceAccountToken('lb-system', 'lb-controller'));
    tokens.prometheus = await plane.serviceAccountToken('monitoring', 'prometheus');
    tokens.operator = await plane.serviceAccountToken('ops', 'operator');
    tokens.stranger = await plane.serviceAccountToken('ops', 'stranger');
    tokens.undelegated = await plane.serviceAccountToken('ops', 'undelegated');
    // RBAC reaches the authorizer through its informers: wait until the bindings are in force.
    await untilAllowed(plane, 'system:serviceaccount:ops:operator', '/debug/vars');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(auths.map((auth) => auth.close()));
    await closeAllListening();
    await introspection.close();
    await plane?.stop();
  });

  it('lets a ServiceAccount allowed by RBAC read /metrics and /debug/vars, refuses the others with the user named', async () => {
    const served = await serve();
    for (const urlPath of ['/metrics', '/debug/vars', '/debug/vars/uptime']) {
      const res = await get(served, urlPath, tokens.operator);
      expect([urlPath, res.status]).toEqual([urlPath, 200]);
    }
    expect((await get(served, '/metrics', tokens.operator, 'HEAD')).status).toBe(200);
    // metrics-rbac.yaml: Prometheus scrapes /metrics, nothing else.
    expect((await get(served, '/metrics', tokens.prometheus)).status).toBe(200);
    const debug = await get(served, '/debug/vars', tokens.prometheus);
    expect(debug.status).toBe(403);
    expect(debug.json()).toEqual({ error: 'forbidden: user "system:serviceaccount:monitoring:prometheus" may not get /debug/vars' });
    const posted = await get(served, '/metrics', tokens.operator, 'POST');
    expect(posted.json()).toEqual({ error: 'forbidden: user "system:serviceaccount:ops:operator" may not post /metrics' });

    const stranger = await get(served, '/metrics?name[]=x', tokens.stranger);
    expect(stranger.status).toBe(403);
    expect(stranger.text).not.toContain(tokens.stranger);
    expect(stranger.json()).toEqual({ error: 'forbidden: user "system:serviceaccount:ops:stranger" may not get /metrics' });

    const garbage = await get(served, '/metrics', 'not-a-token-at-all');
    expect([garbage.status, garbage.json(), garbage.headers['www-authenticate']]).toEqual([401, { error: 'token rejected' }, 'Bearer']);
    const none = await get(served, '/metrics');
    expect([none.status, none.json(), none.headers['www-authenticate']]).toEqual([401, { error: 'no bearer token' }, 'Bearer']);
    expect(none.headers['content-type']).toMatch(/^application\/json/);

    for (const probe of ['/healthz', '/livez', '/readyz', '/readyz?verbose', '/livez/ping']) {
      expect([probe, (await get(served, probe)).status]).toEqual([probe, 200]);
    }
    // A dot segment never rides on a probe's exemption: the target is not canonical, refused before any review.
    expect((await get(served, '/healthz/../metrics')).status).toBe(400);

    const text = await served.registry.metrics();
    expect(text).toMatch(/ctl_auth_requests_total\{outcome="allowed"\} 5/);
    // The dot-segment target's 400 counts as forbidden (refused for its form, before any review).
    expect(text).toMatch(/ctl_auth_requests_total\{outcome="forbidden"\} 4/);
    expect(text).toMatch(/ctl_auth_requests_total\{outcome="unauthenticated"\} 2/);
    expect(text).toMatch(/ctl_auth_requests_total\{outcome="always_allowed"\} 5/);
    expect(served.auth.stats().outcomes).toEqual({ allowed: 5, forbidden: 4, unauthenticated: 2, always_allowed: 5, unavailable: 0 });
  });

  it('serves under RBAC only the spelling that was reviewed: every other spelling is refused or not found', async () => {
    const served = await serve({ allowedTtlMs: 0, deniedTtlMs: 0 });
    const rand = prng(39);
    const answered = async (target: string, token: string): Promise<number> =>
      (await rawRequest(served.port, `GET ${target} HTTP/1.1`, ['Host: localhost', `Authorization: Bearer ${token}`])).status;
    const servedFor = async (target: string, token: string): Promise<string[]> => {
      const ok: string[] = [];
      for (const spelling of spellings(target, rand)) if ((await answered(spelling, token)) === 200) ok.push(spelling);
      return ok;
    };
    // The operator may get /metrics and /debug/*: of all the spellings, only the canonical one is served.
    expect(await servedFor('/debug/vars/uptime', tokens.operator)).toEqual(['/debug/vars/uptime']);
    expect(await servedFor('/metrics', tokens.operator)).toEqual(['/metrics']);
    // Prometheus may get /metrics only: no spelling of a debug path reaches it.
    expect(await servedFor('/debug/vars/uptime', tokens.prometheus)).toEqual([]);
    expect(await servedFor('/debug/vars', tokens.prometheus)).toEqual([]);
    expect(await answered('/DEBUG/VARS', tokens.operator)).toBe(403); // RBAC's paths are case-sensitive
  });

  it('answers 503 naming the API error when the reviewer may not review (no system:auth-delegator)', async () => {
    const served = await serve({ api: reviewApi(plane, tokens.undelegated) });
    const res = await get(served, '/metrics', tokens.operator);
    expect(res.status).toBe(503);
    expect(res.json<{ error: string }>().error).toMatch(/^authorization unavailable: TokenReview failed: HTTP 403\b/);
    expect(res.text).not.toContain(tokens.operator);
  });

  it('works the same with the admin (system:masters) as the reviewer', async () => {
    const admin = reviewApi(plane, plane.adminToken);
    const served = await serve({ api: admin });
    expect((await get(served, '/debug/vars', tokens.operator)).status).toBe(200);
    expect((await get(served, '/debug/vars', tokens.prometheus)).status).toBe(403);
    expect(admin.calls).toEqual({ tokenReviews: 2, subjectAccessReviews: 2 });
  });

  it('asks the API server once per token, verb and path while the decision is cached', async () => {
    const served = await serve();
    const before = totalCalls(reviewer);
    expect((await get(served, '/metrics', tokens.operator)).status).toBe(200);
    expect(totalCalls(reviewer) - before).toBe(2);
    for (let i = 0; i < 5; i++) expect((await get(served, '/metrics', tokens.operator)).status).toBe(200);
    expect((await get(served, '/metrics', tokens.operator, 'HEAD')).status).toBe(200);
    expect(totalCalls(reviewer) - before).toBe(2);
    // A refusal is cached too (for deniedTtlMs), and another path is another decision.
    for (let i = 0; i < 3; i++) expect((await get(served, '/debug/vars', tokens.prometheus)).status).toBe(403);
    expect(totalCalls(reviewer) - before).toBe(4);
    expect(served.auth.stats().entries).toBe(2);
  });

  it('shares one review between 1000 concurrent requests with the same token', async () => {
    const served = await serve({}, { backlog: 2048 });
    const before = { ...reviewer.calls };
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, () =>
        request(`${served.origin}/metrics`, { headers: { authorization: `Bearer ${tokens.operator}` }, timeoutMs: 30_000 }),
      ),
    );
    const elapsed = performance.now() - started;
    expect(answers.every((res) => res.status === 200)).toBe(true);
    expect(reviewer.calls.tokenReviews - before.tokenReviews).toBe(1);
    expect(reviewer.calls.subjectAccessReviews - before.subjectAccessReviews).toBe(1);
    console.log(`kube-auth: 1000 concurrent requests, one token: 2 review calls, ${Math.round(elapsed)} ms`);
  });

  it('keeps at most maxEntries decisions for 10 000 distinct garbage tokens, each reviewed by the API server', async () => {
    const maxEntries = 1000;
    const served = await serve({ maxEntries });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    const before = { ...reviewer.calls };
    const gc = collector();
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < 10_000) {
          const i = next++;
          const res = await request(`${served.origin}/metrics`, {
            agent,
            headers: { authorization: `Bearer garbage-${i}-${'x'.repeat(64)}` },
            timeoutMs: 30_000,
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expect(served.auth.stats().entries).toBeLessThanOrEqual(maxEntries);
        }
      }),
    );
    const elapsed = performance.now() - started;
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc();
    const heapDelta = process.memoryUsage().heapUsed - heapBefore;
    expect(Object.fromEntries(statuses)).toEqual({ 401: 10_000 });
    expect(reviewer.calls.tokenReviews - before.tokenReviews).toBe(10_000);
    expect(reviewer.calls.subjectAccessReviews - before.subjectAccessReviews).toBe(0);
    expect(served.auth.stats()).toMatchObject({ entries: maxEntries, inFlight: 0 });
    // What stays reachable: the 1000 decisions and whatever the app and the agent keep; a few MB at most.
    expect(heapDelta).toBeLessThan(16e6);
    console.log(
      `kube-auth: 10 000 garbage tokens in ${Math.round(elapsed)} ms; ${served.auth.stats().entries} entries kept; heap retained ${(heapDelta / 1e6).toFixed(1)} MB`,
    );
  }, 180_000);

  it('refuses hostile Authorization headers with 401 and without asking the API server', async () => {
    const served = await serve({}, { maxHeaderSize: 256 * 1024 });
    const before = totalCalls(reviewer);
    const cases: Array<[string, string]> = [
      [`Bearer ${'a'.repeat(64 * 1024)}`, 'malformed bearer token'],
      ['Bearer', 'no bearer token'],
      ['bearer   ', 'no bearer token'],
      ['Basic dXNlcjpwYXNzd29yZA==', 'malformed bearer token'],
      ['Bearer two words', 'malformed bearer token'],
      ['Bearer tab\there', 'malformed bearer token'],
      ['Token abc', 'malformed bearer token'],
    ];
    for (const [header, message] of cases) {
      const res = await request(`${served.origin}/metrics`, { headers: { authorization: header } });
      expect([header.slice(0, 40), res.status, res.json(), res.headers['www-authenticate']]).toEqual([
        header.slice(0, 40),
        401,
        { error: message },
        'Bearer',
      ]);
    }
    // Bytes node:http will not send: obs-text reaches the guard, control characters (DEL too) are refused by Node's parser.
    const obsText = await rawRequest(served.port, 'GET /metrics HTTP/1.1', ['Host: x', 'Authorization: Bearer tok\xe9n']);
    expect([obsText.status, JSON.parse(obsText.text)]).toEqual([401, { error: 'malformed bearer token' }]);
    for (const control of ['tok\x7fen', 'tok\x01en', 'tok\x00en']) {
      const res = await rawRequest(served.port, 'GET /metrics HTTP/1.1', ['Host: x', `Authorization: Bearer ${control}`]);
      expect(res.status).toBe(400);
    }
    expect(totalCalls(reviewer)).toBe(before);
  });

  it('answers 503 within timeoutMs when a review is slow, never hangs, and caches no 503', async () => {
    const timeoutMs = 500;
    let delayMs = 3000;
    const slow: CountingApi = {
      calls: reviewer.calls,
      createTokenReview: async (p) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return reviewer.createTokenReview(p);
      },
      createSubjectAccessReview: (p) => reviewer.createSubjectAccessReview(p),
    };
    const served = await serve({ api: slow, timeoutMs });
    const started = performance.now();
    const [res, probe] = await Promise.all([get(served, '/metrics', tokens.operator), get(served, '/readyz')]);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'authorization unavailable: TokenReview failed: TokenReview: no answer within 500 ms' });
    expect(elapsed).toBeLessThan(timeoutMs + SLACK_MS);
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 5);
    expect(probe.status).toBe(200);
    delayMs = 0;
    expect((await get(served, '/metrics', tokens.operator)).status).toBe(200);
    console.log(`kube-auth: slow review answered 503 in ${Math.round(elapsed)} ms (timeoutMs ${timeoutMs})`);
  });

  it.each<[string, Partial<KubeAuthApi>, number, RegExp]>([
    [
      'a TokenReview answered as text',
      { createTokenReview: () => Promise.resolve('<html>' as unknown as TokenReviewLike) },
      503,
      /^authorization unavailable: TokenReview answered without a status$/,
    ],
    [
      'a TokenReview answered null',
      { createTokenReview: () => Promise.resolve(null as unknown as TokenReviewLike) },
      503,
      /without a status/,
    ],
    [
      'an authenticated user with a 1 MB name',
      { createTokenReview: () => Promise.resolve({ spec: {}, status: { authenticated: true, user: { username: 'u'.repeat(1 << 20) } } }) },
      401,
      /^token rejected: its user is missing or exceeds the limits/,
    ],
    [
      'an authenticated user in 100 000 groups',
      {
        createTokenReview: () =>
          Promise.resolve({
            spec: {},
            status: { authenticated: true, user: { username: 'u', groups: Array.from({ length: 100_000 }, (_, i) => `g${i}`) } },
          }),
      },
      401,
      /exceeds the limits/,
    ],
    [
      'an authenticated answer without a user',
      { createTokenReview: () => Promise.resolve({ spec: {}, status: { authenticated: true } }) },
      401,
      /exceeds the limits/,
    ],
    [
      'a SubjectAccessReview without status.allowed',
      {
        createSubjectAccessReview: () =>
          Promise.resolve({ spec: {}, status: { reason: 'x'.repeat(1 << 20) } } as unknown as SubjectAccessReviewLike),
      },
      503,
      /^authorization unavailable: SubjectAccessReview answered without status.allowed$/,
    ],
    [
      'an answer whose getters throw',
      {
        createTokenReview: () =>
          Promise.resolve(
            new Proxy({} as TokenReviewLike, {
              get() {
                throw new Error('boom');
              },
            }),
          ),
      },
      503,
      // Awaiting the answer reads its `then`, which throws: a failed call.
      /^authorization unavailable: TokenReview failed: boom$/,
    ],
    [
      'a 500 with a 1 MB body',
      { createTokenReview: () => Promise.reject(new ApiError(500, 'x'.repeat(1 << 20))) },
      503,
      /^authorization unavailable: TokenReview failed: HTTP 500: x+…$/,
    ],
  ])('answers %s with a clear refusal, no crash', async (_what, override, status, message) => {
    const served = await serve({ api: { ...reviewer, ...override } });
    const res = await get(served, '/metrics', tokens.operator);
    expect(res.status).toBe(status);
    const { error } = res.json<{ error: string }>();
    expect(error).toMatch(message);
    expect(error.length).toBeLessThan(400);
    expect((await get(served, '/healthz')).status).toBe(200);
  });

  it('never echoes the token, even when the API error repeats it', async () => {
    const served = await serve({
      api: { ...reviewer, createTokenReview: ({ body }) => Promise.reject(new Error(`bad token ${body.spec.token ?? ''}`)) },
    });
    const res = await get(served, '/metrics', tokens.operator);
    expect(res.status).toBe(503);
    expect(res.text).not.toContain(tokens.operator);
    expect(res.json()).toEqual({ error: 'authorization unavailable: TokenReview failed: bad token [token]' });
  });

  it('checks the audiences the TokenReview answers when audiences are given', async () => {
    const audience = 'lb-controller-metrics';
    const served = await serve({ audiences: [audience] });
    // A token for the API server is no token for this audience.
    expect((await get(served, '/metrics', tokens.operator)).json()).toEqual({ error: 'token rejected' });
    const bound = await plane.serviceAccountToken('ops', 'operator', [audience]);
    expect((await get(served, '/metrics', bound)).status).toBe(200);
    const lying = await serve({
      audiences: [audience],
      api: {
        ...reviewer,
        createTokenReview: async (p) => {
          const answer = await reviewer.createTokenReview(p);
          return { ...answer, status: { ...answer.status, audiences: ['someone-else'] } };
        },
      },
    });
    expect((await get(lying, '/metrics', bound)).json()).toEqual({ error: 'token rejected: not meant for this audience' });
  });

  it('fails closed with 503 while the API server is down, keeps answering probes, and allows again once it is back', async () => {
    const timeoutMs = 2000;
    const served = await serve({ timeoutMs, allowedTtlMs: 0 });
    expect((await get(served, '/metrics', tokens.operator)).status).toBe(200);
    await plane.stopApiServer();
    try {
      const started = performance.now();
      const res = await get(served, '/metrics', tokens.operator);
      const elapsed = performance.now() - started;
      expect(res.status).toBe(503);
      expect(res.json<{ error: string }>().error).toMatch(/^authorization unavailable: TokenReview failed: /);
      expect(elapsed).toBeLessThan(timeoutMs + SLACK_MS);
      expect((await get(served, '/readyz')).status).toBe(200);
      expect((await get(served, '/livez')).status).toBe(200);
      console.log(`kube-auth: API server down: 503 in ${Math.round(elapsed)} ms (${res.json<{ error: string }>().error})`);
    } finally {
      await plane.startApiServer();
    }
    await eventually(async () => (await get(served, '/metrics', tokens.operator)).status === 200, {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: '200 again once the API server is back',
    });
    expect(served.auth.stats().outcomes.unavailable).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
