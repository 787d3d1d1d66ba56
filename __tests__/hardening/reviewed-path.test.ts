/**
 * Issue 39, class 1: the path createKubeAuth reviews is the path served. An authorizer with deny
 * rules (as webhook authorizers have) allows everything but `/debug/pprof/*` and one variable;
 * every spelling of the denied paths a client can put on the wire (casings, trailing slashes,
 * percent-escapes, fragments, absolute-form targets, dot and empty segments, backslashes, and
 * their combinations) is sent over a real socket, with and without a token, to the package's
 * routers mounted at the root, under a prefix, and to a standalone pprof router a host mounts.
 * None may be answered with the denied data; canonical paths of allowed data still are.
 */
import express from 'express';
import { Registry } from 'prom-client';
import { createKubeAuth, type KubeAuth, type KubeAuthApi, type SubjectAccessReviewLike } from '../../lib/kubernetes/kube-auth';
import { createIntrospectionRouter, type IntrospectionRouter } from '../../lib/introspection/router';
import { createMetricsRouter } from '../../lib/metrics';
import { createPprofRouter, type PprofRouter } from '../../lib/pprof';
import { createIntrospectionState } from '../../lib/state/store';
import { closeAllListening, listen } from '../helpers/http';
import { prng } from '../helpers/prng';
import { spellings } from '../helpers/spellings';
import { rawRequest, type RawResponse } from '../helpers/raw-http';

const TOKEN = 'a-valid-token-for-alice';
const SECRET = 'canary-secret-7f3a9';
const HOST_STATUS = 418;

/** A webhook-style authorizer: allows every path but those its deny rules name (exact, or a prefix ending in `*`). */
function denyingApi(denied: readonly string[], reviewed: string[]): KubeAuthApi {
  const deniedPath = (path: string): boolean => denied.some((d) => (d.endsWith('*') ? path.startsWith(d.slice(0, -1)) : path === d));
  return {
    createTokenReview: ({ body }) =>
      Promise.resolve({
        spec: body.spec,
        status: { authenticated: body.spec.token === TOKEN, user: { username: 'alice', groups: ['ops'] } },
      }),
    createSubjectAccessReview: ({ body }): Promise<SubjectAccessReviewLike> => {
      const path = body.spec.nonResourceAttributes?.path ?? '';
      reviewed.push(path);
      const deny = deniedPath(path);
      return Promise.resolve({ spec: body.spec, status: { allowed: !deny, denied: deny } });
    },
  };
}

/** What a request was answered, and whether it carried denied data. */
function leaked(res: RawResponse, secret: RegExp): boolean {
  return res.status >= 200 && res.status < 300 && (secret.test(res.text) || secret.source === '.');
}

describe('createKubeAuth reviews the path that is served (deny rules, real sockets)', () => {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, 'v1');
  state.publishVar('canary', () => ({ secret: SECRET }));
  state.publishVar('leaderElection', () => ({ secret: SECRET }));
  const routers: Array<IntrospectionRouter | PprofRouter> = [];
  const auths: KubeAuth[] = [];
  const reviewed: string[] = [];

  async function serve(denied: readonly string[], mount: (app: express.Express) => void): Promise<number> {
    const auth = createKubeAuth(denyingApi(denied, reviewed), undefined, { allowedTtlMs: 0, deniedTtlMs: 0 });
    auths.push(auth);
    const app = express();
    app.use(auth);
    mount(app);
    app.use((req: express.Request, res: express.Response) => void res.status(HOST_STATUS).json({ host: req.path }));
    return (await listen(app)).port;
  }

  const send = (port: number, target: string, token = true): Promise<RawResponse> =>
    rawRequest(port, `GET ${target} HTTP/1.1`, ['Host: localhost', ...(token ? [`Authorization: Bearer ${TOKEN}`] : [])]);

  afterAll(async () => {
    for (const auth of auths) await auth.close();
    await closeAllListening();
    for (const router of routers) await router.close();
  });

  /** Sends every spelling of each denied path, with and without the token; returns those answered with data. */
  async function leaks(port: number, deniedPaths: ReadonlyArray<readonly [string, RegExp]>, seed: number): Promise<string[]> {
    const rand = prng(seed);
    const found: string[] = [];
    for (const [path, secret] of deniedPaths) {
      for (const target of spellings(path, rand)) {
        for (const token of [true, false]) {
          let res: RawResponse;
          try {
            res = await send(port, target, token);
          } catch {
            continue; // Node's parser refused the request line outright: nothing served.
          }
          if (leaked(res, secret)) found.push(`${token ? 'token' : 'none'} ${target}: ${res.status} ${res.text.slice(0, 60)}`);
        }
      }
    }
    return found;
  }

  it('serves no spelling of a denied variable or of /debug/pprof/*, the routers mounted at the root', async () => {
    const introspection = createIntrospectionRouter(state);
    routers.push(introspection);
    const registry = new Registry();
    const port = await serve(['/debug/pprof/*', '/debug/vars/canary', '/debug/vars/leaderElection', '/metrics'], (app) => {
      app.use(createMetricsRouter(registry));
      app.use(introspection);
    });
    const found = await leaks(
      port,
      [
        ['/debug/vars/canary', new RegExp(SECRET)],
        ['/debug/vars/leaderElection', new RegExp(SECRET)],
        ['/debug/pprof/cmdline', /./],
        ['/debug/pprof/', /./],
        ['/debug/pprof/goroutine', /./],
        ['/metrics', /./],
      ],
      1,
    );
    expect(found).toEqual([]);
    // Canonical paths of what is allowed are still served, and what was reviewed is what was asked.
    reviewed.length = 0;
    const vars = await send(port, '/debug/vars/config');
    expect([vars.status, reviewed]).toEqual([200, ['/debug/vars/config']]);
    expect((await send(port, '/debug/vars')).status).toBe(200);
    expect((await send(port, '/healthz', false)).status).toBe(200);
    // The index at /debug/pprof is redirected to /debug/pprof/, which is reviewed (and denied) in turn.
    const index = await send(port, '/debug/pprof?debug=1');
    expect([index.status, index.headers['location']]).toEqual([301, 'pprof/?debug=1']);
    expect((await send(port, '/debug/pprof/')).status).toBe(403);
  });

  it('refuses a target that is not canonical with a 400 naming the problem, token or not', async () => {
    const introspection = createIntrospectionRouter(state, { pprof: false });
    routers.push(introspection);
    const port = await serve([], (app) => app.use(introspection));
    const cases: Array<[string, RegExp]> = [
      ['/debug/vars/%63anary', /escapes "c" \(%63\)/],
      ['/debug/vars/canary#x', /has a fragment/],
      ['http://localhost/debug/vars/canary', /absolute-form/],
      ['/debug/vars/./canary', /dot segment/],
      ['/debug//vars', /empty or dot segment/],
      ['/debug\\vars', /characters a path does not hold/],
      ['/debug/vars/%zz', /invalid percent-escape "%zz"/],
      ['/debug/vars/%2Fcanary', /escapes "\/"/],
      ['/debug/vars/%ff', /does not decode to UTF-8/],
      ['/debug/vars/a%00', /control character/],
    ];
    for (const [target, message] of cases) {
      for (const token of [true, false]) {
        const res = await send(port, target, token);
        expect({ target, token, status: res.status, type: res.headers['content-type'] }).toEqual({
          target,
          token,
          status: 400,
          type: expect.stringMatching(/^application\/json/),
        });
        expect(JSON.parse(res.text).error).toMatch(message);
      }
    }
    // A needed escape is fine: reviewed decoded, as the API server reads a path.
    reviewed.length = 0;
    expect((await send(port, '/debug/vars/a%20b')).status).toBe(404);
    expect(reviewed).toEqual(['/debug/vars/a b']);
  });

  it('reviews the folded spelling too, so a router that matches loosely serves nothing denied (prefix mounts, a host pprof router)', async () => {
    const under = createIntrospectionRouter(state);
    const pprof = createPprofRouter();
    routers.push(under, pprof);
    const port = await serve(['/ops/debug/vars/canary', '/ops/debug/pprof/*', '/debug/pprof/*'], (app) => {
      app.use('/ops', under); // the app routes case-insensitively: /OPS matches /ops
      app.use('/debug/pprof', pprof); // a host's own mount of the standalone pprof router
    });
    const found = await leaks(
      port,
      [
        ['/ops/debug/vars/canary', new RegExp(SECRET)],
        ['/ops/debug/pprof/cmdline', /./],
        ['/debug/pprof/cmdline', /./],
        ['/debug/pprof/heap', /./],
      ],
      2,
    );
    expect(found).toEqual([]);
    reviewed.length = 0;
    expect((await send(port, '/OPS/debug/vars/config')).status).toBe(200);
    expect(reviewed).toEqual(['/OPS/debug/vars/config', '/ops/debug/vars/config']);
  });

  it('never lets a spelling that reaches debug data pass as a probe', async () => {
    const introspection = createIntrospectionRouter(state, { pprof: false });
    routers.push(introspection);
    const port = await serve([], (app) => app.use(introspection));
    const targets = [
      '/healthz/../debug/vars/canary',
      '/healthz/%2E%2E/debug/vars/canary',
      '/healthz/..%2Fdebug/vars/canary',
      '/livez/%2e%2e/%2e%2e/debug/vars/canary',
      '/readyz#/../debug/vars/canary',
      'http://localhost/healthz/../debug/vars/canary',
      '/healthz/..\\debug\\vars\\canary',
      '/healthz//../debug/vars/canary',
      '/HEALTHZ/../debug/vars/canary',
      '/healthz/./../debug/vars/canary',
    ];
    for (const target of targets) {
      const res = await send(port, target, false);
      expect({ target, status: res.status, leaked: res.text.includes(SECRET) }).toEqual({
        target,
        status: expect.any(Number),
        leaked: false,
      });
      expect([400, 401]).toContain(res.status);
    }
  });
});
