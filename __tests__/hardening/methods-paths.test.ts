import { Registry } from 'prom-client';
import { isProfiling } from '../../lib/pprof';
import { createMetricsRouter } from '../../lib/metrics';
import { populatedState } from './fixtures';
import { request } from '../helpers/http';
import { rawRequest } from '../helpers/raw-http';
import { mapConcurrent, startServer, type HardeningServer } from './helpers';

/*
 * Every endpoint is read-only: anything but GET and HEAD is a 405 with `Allow: GET, HEAD`. Odd
 * paths (traversal, encoded separators, NUL, invalid percent-encoding, 10 000-character names,
 * unicode) are a JSON 404 or 400. HEAD answers the headers a GET would, and no body.
 */

const VARIABLES = ['config', 'credentials', 'rendered', 'auxfiles', 'resources', 'events', 'state', 'uptime', 'weird', 'items'];
const PROFILES = ['', 'profile', 'heap', 'allocs', 'goroutine', 'block', 'mutex', 'trace', 'cmdline'];
const ENDPOINTS = [
  '/healthz',
  '/livez',
  '/readyz',
  '/livez/ping',
  '/readyz/shutdown',
  '/debug/vars',
  ...VARIABLES.map((v) => `/debug/vars/${v}`),
  ...PROFILES.map((p) => `/debug/pprof/${p}`),
  '/debug/pprof',
  '/metrics',
];
// CONNECT is left out: Node hands it to the server's 'connect' event, never to a request handler.
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'REPORT'];

describe('methods and paths', () => {
  let server: HardeningServer;
  beforeAll(async () => {
    const registry = new Registry();
    server = await startServer(populatedState(), { extra: (app) => app.use(createMetricsRouter(registry)) });
  });
  afterAll(() => server.close());

  it('answers every method but GET and HEAD with 405, Allow: GET, HEAD and a JSON error, on every endpoint', async () => {
    const cases = ENDPOINTS.flatMap((path) => METHODS.map((method) => ({ path, method })));
    const failures: string[] = [];
    await mapConcurrent(cases, 8, async ({ path, method }) => {
      // A body too, for the methods that usually carry one: it must not be read into anything.
      const res = await request(`${server.base}${path}?field={.version}`, {
        method,
        agent: server.agent,
        headers: { 'Content-Type': 'application/json' },
      });
      const error = res.status === 405 ? res.json<{ error?: unknown }>().error : undefined;
      if (res.status !== 405 || res.headers['allow'] !== 'GET, HEAD' || typeof error !== 'string' || !error.includes(method)) {
        failures.push(`${method} ${path}: ${res.status} allow=${String(res.headers['allow'])} ${res.text.slice(0, 120)}`);
      }
    });
    expect(failures).toEqual([]);
    expect(cases.length).toBe(ENDPOINTS.length * METHODS.length);
  });

  it('answers traversal, encoded separators, NUL, invalid or huge names with a JSON 404 or 400', async () => {
    const odd = [
      '..%2f..%2fetc%2fpasswd',
      '%2e%2e',
      '%2e%2e%2f%2e%2e%2fetc',
      '..%5c..%5cwindows',
      '%2F',
      'config%2f..',
      'config%00',
      '%00',
      'a%00b',
      '%zz',
      '%',
      '%e',
      'config%',
      '%C3%28',
      '%FF%FE',
      '%ED%A0%80',
      '%E2%9C%93',
      '%F0%9F%98%80',
      'caf%C3%A9',
      '%EF%BB%BFconfig',
      'x'.repeat(10_000),
      `${'%41'.repeat(3000)}`,
      'CONFIG',
      'config.',
      '.config',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      '%5F%5Fproto%5F%5F',
      'config;x',
      'config%3Bx',
      "config'",
      'config%22',
      '%3Cscript%3E',
      '..',
      '.',
      '~',
      'config%20',
      '%20config',
    ];
    // Only our own paths answer; the rest of /debug is the host's (tested in __tests__/introspection/vars.test.ts).
    const bases = ['/debug/vars/', '/debug/pprof/', '/livez/', '/readyz/', '/debug/vars/config/'];
    const failures: string[] = [];
    const cases = bases.flatMap((base) => odd.map((name) => `${base}${name}`));
    // ('/debug//vars' is not one of our paths: like any other /debug path, it is left to the host.)
    cases.push('/debug/vars/../../../etc/passwd', '/debug/vars/./config/..', '/debug/vars//config', '/debug/pprof/../vars/x');
    await mapConcurrent(cases, 8, async (path) => {
      const res = await request(`${server.base}${path}`, { agent: server.agent });
      let error: unknown;
      try {
        error = res.json<{ error?: unknown }>().error;
      } catch {
        error = undefined;
      }
      const typed = String(res.headers['content-type']).startsWith('application/json');
      if (![400, 404].includes(res.status) || typeof error !== 'string' || !typed)
        failures.push(`${path.slice(0, 80)}: ${res.status} ${res.text.slice(0, 160)}`);
      else if (res.body.length > 2048) failures.push(`${path.slice(0, 80)}: error body of ${res.body.length} bytes`);
    });
    expect(failures).toEqual([]);
    // What the names resolve to is said plainly, and a listing names only what exists.
    const traversal = (await request(`${server.base}/debug/vars/..%2f..%2fetc%2fpasswd`)).json<{ error: string }>();
    expect(traversal.error).toMatch(/^unknown variable "\.\.\/\.\.\/etc\/passwd"; known variables: config, credentials/);
    const badEncoding = await request(`${server.base}/debug/vars/%zz`);
    expect(badEncoding.status).toBe(400);
    expect(badEncoding.json()).toEqual({ error: expect.stringContaining("Failed to decode param '%zz'") });
    expect(badEncoding.text).not.toMatch(/<html|at \w+ \(/i);
    const long = (await request(`${server.base}/debug/vars/${'x'.repeat(10_000)}`)).json<{ error: string }>();
    expect(long.error.length).toBeLessThan(400);
  });

  it('answers HEAD with the headers of GET and no body, on every endpoint, without recording a profile', async () => {
    for (const path of [
      ...ENDPOINTS,
      '/debug/vars/nope',
      '/debug/pprof/heap?debug=1',
      '/debug/pprof/profile?format=cpuprofile',
      '/debug/vars/config?field={.version}',
    ]) {
      const get =
        path === '/debug/pprof/profile' || path.startsWith('/debug/pprof/profile?') ? undefined : await request(`${server.base}${path}`);
      // Over a bare socket: node:http's client would discard a body sent after a HEAD response.
      const head = await rawRequest(server.port, `HEAD ${path} HTTP/1.1`, [`Host: 127.0.0.1:${server.port}`]);
      expect({ path, afterHeaders: head.afterHeaders }).toEqual({ path, afterHeaders: '' });
      if (get) {
        expect({ path, status: head.status }).toEqual({ path, status: get.status });
        expect({ path, type: head.headers['content-type'] }).toEqual({ path, type: get.headers['content-type'] });
      } else {
        expect({ path, status: head.status }).toEqual({ path, status: 200 });
      }
      expect(isProfiling()).toBe(false);
    }
  });
});
