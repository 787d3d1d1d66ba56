import { createAccessGuard } from '../../lib/http/access-guard';
import { createIntrospectionState } from '../../lib/state/store';
import { request } from '../helpers/http';
import { startServer, type HardeningServer } from './helpers';

/*
 * The optional guard, mounted the documented way (createIntrospectionRouter(state, { access })),
 * protects all of /debug/* (variables, profiles, even the 404 listing) and leaves the health
 * endpoints open for the kubelet.
 */

const TOKEN = '3c6e0b8a4f3c1d2e5f6a7b8c9d0e1f2a';
const DEBUG_PATHS = [
  '/debug/vars',
  '/debug/vars/config',
  '/debug/vars/state?field={..}',
  '/debug/pprof/',
  '/debug/pprof/goroutine?debug=2',
  '/debug/pprof/heap',
  '/debug/anything',
];
const HEALTH_PATHS = ['/healthz', '/livez', '/readyz', '/livez/ping', '/readyz/shutdown'];

function stateWithConfig(): ReturnType<typeof createIntrospectionState> {
  const state = createIntrospectionState();
  state.setConfig({ templates: { 'haproxy.cfg': 'global\n' }, watched_resources: [] }, 'v1');
  return state;
}

describe('access guard mounted in front of createIntrospectionRouter', () => {
  describe('with a bearer token', () => {
    let server: HardeningServer;
    beforeAll(async () => {
      server = await startServer(stateWithConfig(), { guard: createAccessGuard({ token: TOKEN }) });
    });
    afterAll(() => server.close());

    it('refuses /debug/* without the token, with no detail', async () => {
      for (const path of DEBUG_PATHS) {
        for (const headers of [
          undefined,
          { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
          { Authorization: `Basic ${TOKEN}` },
          { Authorization: `Bearer ${TOKEN} x` },
        ]) {
          const res = await request(`${server.base}${path}`, { headers });
          expect({ path, status: res.status, body: res.json() }).toEqual({ path, status: 401, body: { error: 'unauthorized' } });
          expect(res.headers['www-authenticate']).toBe('Bearer realm="debug"');
        }
        // HEAD is guarded too.
        expect((await request(`${server.base}${path}`, { method: 'HEAD' })).status).toBe(401);
      }
    });

    it('cannot be bypassed by case, dot segments, doubled slashes or encoding', async () => {
      const tricks = [
        '/DEBUG/vars',
        '/Debug/Vars/config',
        '/debug/../debug/vars',
        '//debug/vars',
        '/debug//vars/config',
        '/debug%2fvars',
        '/%64ebug/vars/config',
        '/debug/vars/config;x',
        '/debug/./vars',
        '/debug/vars/config/',
        '/debug/pprof/./heap',
        '/debug/pprof%2fheap',
        '/debug/vars/config?x=/../..',
      ];
      for (const path of tricks) {
        const res = await request(`${server.base}${path}`);
        expect({ path, served: res.status === 200 || res.text.includes('v1') }).toEqual({ path, served: false });
      }
    });

    it('serves /debug/* with the token and the health endpoints without it', async () => {
      for (const path of DEBUG_PATHS.filter((p) => p !== '/debug/anything')) {
        expect({
          path,
          status: (await request(`${server.base}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status,
        }).toEqual({
          path,
          status: 200,
        });
      }
      expect((await request(`${server.base}/debug/anything`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
      for (const path of HEALTH_PATHS)
        expect({ path, status: (await request(`${server.base}${path}`)).status }).toEqual({ path, status: 200 });
    });
  });

  describe('with an allow-list that excludes the client', () => {
    let server: HardeningServer;
    beforeAll(async () => {
      server = await startServer(stateWithConfig(), { guard: createAccessGuard({ allow: ['10.0.0.0/8', 'fd00::/8'] }) });
    });
    afterAll(() => server.close());

    it('answers 403 on /debug/* and serves the health endpoints', async () => {
      for (const path of DEBUG_PATHS) {
        const res = await request(`${server.base}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
        expect({ path, status: res.status, body: res.json() }).toEqual({ path, status: 403, body: { error: 'forbidden' } });
      }
      for (const path of HEALTH_PATHS)
        expect({ path, status: (await request(`${server.base}${path}`)).status }).toEqual({ path, status: 200 });
    });
  });

  describe('with an allow-list that includes the client', () => {
    it('serves /debug/*', async () => {
      const server = await startServer(stateWithConfig(), { guard: createAccessGuard({ allow: ['127.0.0.0/8', '::1'] }) });
      try {
        expect((await request(`${server.base}/debug/vars/config`)).status).toBe(200);
        expect((await request(`${server.base}/debug/pprof/`)).status).toBe(200);
      } finally {
        await server.close();
      }
    });
  });
});

describe('what the access guard lets through: the rule it shares with createKubeAuth', () => {
  let server: HardeningServer;
  beforeAll(async () => {
    // The client (127.0.0.1) is outside the list, and sends no token: only the exemptions pass.
    server = await startServer(stateWithConfig(), { guard: createAccessGuard({ allow: ['10.0.0.0/8'], token: TOKEN }) });
  });
  afterAll(() => server.close());

  it('lets the probes through with neither check, in their canonical spelling only', async () => {
    for (const path of [...HEALTH_PATHS, '/healthz?verbose', '/readyz?verbose=1'])
      expect({ path, status: (await request(`${server.base}${path}`)).status }).toEqual({ path, status: 200 });
    // Other spellings Express would route to a probe, or past it, are guarded like any other path.
    for (const path of [
      '/HEALTHZ',
      '/Readyz',
      '/%68ealthz',
      '/healthz/../debug/vars',
      '/healthz/%2e%2e/debug/vars',
      '//healthz',
      '/livez/./ping',
    ])
      expect({ path, status: (await request(`${server.base}${path}`)).status }).toEqual({ path, status: 403 });
  });

  it('checks the address of the console page, but not the token', async () => {
    const tokenOnly = await startServer(stateWithConfig(), { guard: createAccessGuard({ token: TOKEN }) });
    try {
      expect((await request(`${tokenOnly.base}/debug/`)).status).toBe(200);
      expect((await request(`${tokenOnly.base}/debug/console/console.js`)).status).toBe(200);
      expect((await request(`${tokenOnly.base}/debug/vars`)).status).toBe(401);
      expect((await request(`${tokenOnly.base}/debug/`, { method: 'POST' })).status).toBe(401);
    } finally {
      await tokenOnly.close();
    }
    expect((await request(`${server.base}/debug/`)).status).toBe(403);
  });

  it('takes its own list of paths to let through, which replaces the probes', async () => {
    const custom = await startServer(stateWithConfig(), {
      guard: createAccessGuard({ token: TOKEN, alwaysAllow: ['/debug/vars/uptime'] }),
    });
    try {
      expect((await request(`${custom.base}/debug/vars/uptime`)).status).toBe(200);
      expect((await request(`${custom.base}/healthz`)).status).toBe(401);
    } finally {
      await custom.close();
    }
    expect(() => createAccessGuard({ token: TOKEN, alwaysAllow: ['healthz'] })).toThrow(
      'createAccessGuard: alwaysAllow must be an array of paths starting with "/", optionally ending in "*"',
    );
  });
});

describe('createAccessGuard of 0.1', () => {
  it('refuses the second argument it took then, with what replaced it', () => {
    const legacy = createAccessGuard as unknown as (options: unknown, tokenNotNeeded: unknown) => unknown;
    expect(() => legacy({ token: TOKEN }, () => true)).toThrow(
      "createAccessGuard: takes one argument, its options; the second (which requests need no token) is gone: the console's page is let through by the guards' rule, and other paths by the option alwaysAllow",
    );
  });
});
