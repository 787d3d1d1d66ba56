import os from 'node:os';
import express from 'express';
import { createIntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, request } from '../helpers/http';
import { rawRequest } from '../helpers/raw-http';

async function serve(options: IntrospectionRouterOptions = {}) {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  const router = createIntrospectionRouter(state, { pprof: false, ...options });
  const app = express();
  app.use(router);
  const served = await listen(app);
  return { origin: served.origin, port: served.port, close: async () => (await router.close(), await served.close()) };
}

const REFUSED = /^host ".+" is not allowed for \/debug \(DNS rebinding protection\); add it to the router option allowedHosts$/;
const INVALID = /^invalid Host header ".*": .+$/;

/** Allowed by default: IP literals in their one browser spelling, loopback and cluster-internal names. */
const ALLOWED = [
  'localhost',
  'localhost:8080',
  'LOCALHOST',
  'localhost.',
  'LocalHost.:80',
  'localhost:0',
  'localhost:65535',
  '127.0.0.1',
  '127.0.0.1:8080',
  '10.244.1.17:8080',
  '0.0.0.0',
  '255.255.255.255:1',
  '[::1]',
  '[::1]:8080',
  '[::FFFF:127.0.0.1]:1',
  '[fe80::1]',
  '[2001:db8::a:b:c]:443',
  'my-controller',
  'my-controller:8080',
  'my_compose_service',
  'my-controller.kube-system.svc',
  'my-controller.kube-system.svc:8080',
  'app.localhost',
  'a.b.internal',
  `${'a'.repeat(63)}.svc`,
];

/** Well-formed, but a name public DNS or a neighbour's multicast DNS could hand to an attacker. */
const REFUSED_HOSTS = [
  'attacker.example.com',
  'attacker.example.com.',
  'localhost.attacker.example',
  'localhost.evil.com',
  '127.0.0.1.evil.com',
  '127.0.0.1.nip.io',
  'svc.evil.com',
  'internal.evil.com:8080',
  'localhost.local',
  'evil.local',
  'my-laptop.local:8080',
  'my-controller.kube-system.svc.cluster.local',
  'my-controller.kube-system.svc.cluster.local:8080',
  'x.cluster.local.',
];

/** Not `host[:port]` with a strict host: browsers never send these; the answer is a 400. */
const MALFORMED = [
  '[::1]evil.com',
  '[::1].evil.com',
  '[::1]evil.com:80',
  '[::1]:80evil.com',
  '[::1]:',
  '[::1',
  '::1',
  '::1:8080',
  '[::1%25eth0]',
  '[fe80::1%eth0]:80',
  '[v1.x]',
  '[127.0.0.1]',
  '[]',
  '[[::1]]',
  'localhost:',
  'localhost:65536',
  'localhost:99999999',
  'localhost:-1',
  'localhost:+80',
  'localhost:0x50',
  'localhost:80:80',
  'user@localhost',
  'user:pw@localhost:8080',
  'evil.com@localhost',
  '%6cocalhost',
  'local%2ehost',
  'localhost%00',
  'local host',
  'localhost\tx',
  'localhost/evil',
  'localhost\\evil',
  'localhost?x',
  'localhost#x',
  'localhost,evil.com',
  'localhost;evil.com',
  '0x7f.1',
  '0x7f000001',
  '2130706433',
  '127.1',
  '127.0.1',
  '0177.0.0.1',
  '127.000.000.001',
  '127.0.0.01',
  '127.0.0.1.',
  '256.0.0.1',
  '1.2.3.4.5',
  'localhost..',
  '.localhost',
  'a..b.svc',
  '-evil',
  'evil-',
  'evil-.svc',
  `${'a'.repeat(64)}.svc`,
  `${'a.'.repeat(127)}svc`,
  '*.svc',
  'évil',
  '',
];

describe('DNS rebinding protection on /debug, over a real socket with raw Host headers', () => {
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(() => s.close());

  async function get(hostLines: string[], path = '/debug/vars/config'): Promise<{ status: number; error?: string; host: string }> {
    const res = await rawRequest(s.port, `GET ${path} HTTP/1.1`, hostLines);
    const error = res.status === 200 ? undefined : (JSON.parse(res.text) as { error: string }).error;
    return { status: res.status, ...(error === undefined ? {} : { error }), host: hostLines.join(' | ') };
  }

  it('serves IP literals, loopback names, dotless names and *.svc / *.internal', async () => {
    const results = await Promise.all(ALLOWED.map((host) => get([`Host: ${host}`])));
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    expect(results).toHaveLength(ALLOWED.length);
  });

  it("serves this machine's hostname unless it is a .local name", async () => {
    const own = os.hostname();
    const res = await get([`Host: ${own}`]);
    expect(res.status).toBe(own.toLowerCase().replace(/\.$/, '').endsWith('.local') ? 403 : 200);
  });

  it('refuses with 403 names an attacker could rebind: public names and every *.local name (mDNS)', async () => {
    const results = await Promise.all(REFUSED_HOSTS.map((host) => get([`Host: ${host}`])));
    expect(results.filter((r) => r.status !== 403 || !REFUSED.test(r.error ?? ''))).toEqual([]);
    expect(results).toHaveLength(REFUSED_HOSTS.length);
  });

  it('answers 400 to a malformed Host: trailing junk after an IPv6 literal, userinfo, bad ports, non-canonical IPv4, encoding', async () => {
    const results = await Promise.all(MALFORMED.map((host) => get([`Host: ${host}`])));
    expect(results.filter((r) => r.status !== 400 || !INVALID.test(r.error ?? ''))).toEqual([]);
    expect(results).toHaveLength(MALFORMED.length);
    // The message says what a Host must look like.
    expect((await get(['Host: [::1]evil.com'])).error).toBe(
      'invalid Host header "[::1]evil.com": an IPv6 address must be written in brackets, as [::1]',
    );
    expect((await get(['Host: 2130706433'])).error).toBe(
      'invalid Host header "2130706433": an IPv4 address must be written as four decimal numbers, as 127.0.0.1',
    );
    expect((await get(['Host: localhost:65536'])).error).toBe(
      'invalid Host header "localhost:65536": the port must be a number from 0 to 65535',
    );
  });

  it('answers 400 to two Host fields, even when both are allowed, and passes HTTP/1.0 without one', async () => {
    expect((await get(['Host: localhost', 'Host: evil.example.com'])).status).toBe(400);
    expect((await get(['Host: evil.example.com', 'Host: localhost'])).status).toBe(400);
    expect((await get(['Host: localhost', 'host: localhost'])).error).toBe(
      'invalid Host header "localhost": a request carries one Host header',
    );
    const old = await rawRequest(s.port, 'GET /debug/vars/config HTTP/1.0', []);
    expect(old.status).toBe(200);
  });

  it('echoes a short cut of a long name, marked', async () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.example.com`;
    const refused = await get([`Host: ${long}`]);
    expect(refused.status).toBe(403);
    expect(refused.error).toContain(`"${long.slice(0, 64)}…"`);
    const junk = await get([`Host: ${'x'.repeat(5000)}!`]);
    expect(junk.status).toBe(400);
    expect(junk.error!.length).toBeLessThan(200);
  });

  it('guards every casing of /debug, and leaves health endpoints open whatever the Host (probes)', async () => {
    for (const path of ['/DEBUG/vars', '/Debug/Vars/config', '/debug/PPROF/', '/DEBUG/']) {
      expect({ path, status: (await get(['Host: attacker.example.com'], path)).status }).toEqual({ path, status: 403 });
    }
    for (const path of ['/healthz', '/livez', '/readyz']) {
      expect((await rawRequest(s.port, `GET ${path} HTTP/1.1`, ['Host: attacker.example.com'])).status).toBe(200);
      expect((await rawRequest(s.port, `GET ${path} HTTP/1.1`, ['Host: [::1]evil.com'])).status).toBe(200);
    }
  });
});

describe('allowedHosts', () => {
  it('adds exact names and *.suffix patterns, the way to allow a .local name, and can turn the check off', async () => {
    const s = await serve({ allowedHosts: ['debug.example.com', '*.corp.example', 'My-Laptop.local.', '*.cluster.local'] });
    try {
      const status = async (host: string): Promise<number> => (await request(`${s.origin}/debug/vars`, { headers: { Host: host } })).status;
      expect(await status('debug.example.com:443')).toBe(200);
      expect(await status('DEBUG.example.com.')).toBe(200);
      expect(await status('ops.corp.example')).toBe(200);
      expect(await status('a.b.corp.example:8080')).toBe(200);
      expect(await status('corp.example')).toBe(403);
      expect(await status('corp.example.attacker.com')).toBe(403);
      expect(await status('evilcorp.example')).toBe(403);
      expect(await status('my-laptop.local')).toBe(200);
      expect(await status('other-laptop.local')).toBe(403);
      expect(await status('my-controller.kube-system.svc.cluster.local:8080')).toBe(200);
      expect(await status('[::1]debug.example.com')).toBe(400);
      expect(await status('debug.example.com:')).toBe(400);
      expect((await request(`${s.origin}/healthz`, { headers: { Host: 'attacker.example.com' } })).status).toBe(200);
      expect((await request(`${s.origin}/debug/vars/events?watch=1`, { headers: { Host: 'attacker.example.com' } })).status).toBe(403);
    } finally {
      await s.close();
    }
    const off = await serve({ allowedHosts: false });
    try {
      expect((await request(`${off.origin}/debug/vars`, { headers: { Host: 'attacker.example.com' } })).status).toBe(200);
      expect((await rawRequest(off.port, 'GET /debug/vars HTTP/1.1', ['Host: [::1]evil.com'])).status).toBe(200);
    } finally {
      await off.close();
    }
  });

  it.each([
    ['localhost', /allowedHosts must be an array of host names/],
    [[5], /allowedHosts must be an array of host names .* entry 0 is number/],
    [[''], /entry 0 is empty/],
    [
      ['ok.example', 'debug.example.com:443'],
      /allowedHosts\[1\] must be a host name.*without port, got "debug.example.com:443"; did you mean "debug.example.com"\?$/,
    ],
    [['https://debug.example.com/'], /got "https:\/\/debug.example.com\/"; did you mean "debug.example.com"\?$/],
    [[' debug.example.com'], /did you mean "debug.example.com"\?$/],
    [['*'], /allowedHosts\[0\] must be a host name/],
    [['*.'], /allowedHosts\[0\] must be a host name/],
    [['*.*.example'], /allowedHosts\[0\] must be a host name/],
    [['*.127.0.0.1'], /allowedHosts\[0\] must be a host name/],
    [['[::1]evil.com'], /allowedHosts\[0\] must be a host name/],
    [['a b'], /allowedHosts\[0\] must be a host name/],
  ])('refuses %j at creation', (allowedHosts, message) => {
    expect(() =>
      createIntrospectionRouter(createIntrospectionState(), { pprof: false, console: false, allowedHosts: allowedHosts as never }),
    ).toThrow(message);
  });
});
