import express from 'express';
import { createIntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { closeAllListening, listen, request } from '../helpers/http';

const routers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(routers.map((r) => r.close()));
});
afterEach(closeAllListening);

function appFor(state: IntrospectionState, options: IntrospectionRouterOptions = {}): express.Express {
  const app = express();
  const router = createIntrospectionRouter(state, { pprof: false, ...options });
  routers.push(router);
  app.use(router);
  app.post('/host-route', (_req, res) => void res.json({ host: true }));
  return app;
}

/** {@link appFor} on a real socket, closed after the test: its origin. */
async function serve(state: IntrospectionState, options: IntrospectionRouterOptions = {}): Promise<string> {
  return (await listen(appFor(state, options))).origin;
}

function loaded(): IntrospectionState {
  const state = createIntrospectionState();
  state.setConfig(
    { templates: { 'haproxy.cfg': 'global\n  maxconn 100\n', 'maps/hosts.map': 'a b\n' }, watched_resources: [{ resource: 'ingresses' }] },
    '42',
  );
  state.setRendered('global\n  maxconn 100\n');
  state.setResourceCounts({ ingresses: 3, services: 5, endpoints: 7, 'lb-pods': 2 });
  state.publishEvent('reconciliation.triggered');
  state.publishEvent('config.validated');
  state.publishEvent('reconciliation.completed');
  return state;
}

describe('negative zero, as kubectl prints it', () => {
  it.each([
    ['a small answer', 1000],
    ['a streamed answer', 0],
  ])('keeps the sign of -0 in JSON and text, in %s', async (_name, atOnceBudgetMs) => {
    const state = createIntrospectionState();
    state.publishVar('zeros', () => ({ x: -0, list: [-0, 0, 1.5], nested: { y: -0 } }));
    const origin = await serve(state, { limits: { atOnceBudgetMs } });
    const whole = await request(`${origin}/debug/vars/zeros`);
    expect(whole.status).toBe(200);
    // At once an answer has a Content-Length; streamed (a budget of 0 streams every body) it has none.
    expect(whole.headers['content-length'] === undefined).toBe(atOnceBudgetMs === 0);
    expect(whole.text).toBe('{"x":-0,"list":[-0,0,1.5],"nested":{"y":-0}}');
    expect((await request(`${origin}/debug/vars/zeros?field={.x}`)).text).toBe('-0');
    expect((await request(`${origin}/debug/vars/zeros?field={.list}`)).text).toBe('[-0,0,1.5]');
    expect((await request(`${origin}/debug/vars/zeros?field={.x}&output=text`)).text).toBe('-0');
    expect((await request(`${origin}/debug/vars/zeros?field={.nested}&output=text`)).text).toBe('{"y":-0}');
    expect((await request(`${origin}/debug/vars/zeros?field={.list[*]}&output=text`)).text).toBe('-0 0 1.5');
    expect((await request(`${origin}/debug/vars/zeros?size=1`)).json()).toEqual({ bytes: Buffer.byteLength(whole.text) });
  });
});

describe('/debug/vars', () => {
  it('lists every variable, custom ones included', async () => {
    const state = loaded();
    state.publishVar('queue_depth', () => 4);
    const res = await request(`${await serve(state)}/debug/vars`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({
      vars: ['config', 'credentials', 'rendered', 'auxfiles', 'resources', 'events', 'state', 'uptime', 'event_counts', 'queue_depth'],
    });
    expect((await request(`${await serve(state)}/debug/vars?field={.vars[-1]}`)).json()).toBe('queue_depth');
  });

  it('answers the spec field selections with JSON types kept', async () => {
    const origin = await serve(loaded());
    expect((await request(`${origin}/debug/vars/config?field={.version}`)).json()).toBe('42');
    expect((await request(`${origin}/debug/vars/config?field=${encodeURIComponent('{.config.templates.haproxy\\.cfg}')}`)).json()).toBe(
      'global\n  maxconn 100\n',
    );
    expect((await request(`${origin}/debug/vars/config?field={.config}`)).json()).toMatchObject({
      watched_resources: [{ resource: 'ingresses' }],
    });
    expect((await request(`${origin}/debug/vars/rendered?field={.size}`)).json()).toBe(21);
    expect((await request(`${origin}/debug/vars/rendered?field={.timestamp}`)).json()).toMatch(/Z$/);
    expect((await request(`${origin}/debug/vars/resources?field={.ingresses}`)).json()).toBe(3);
    expect((await request(`${origin}/debug/vars/events?field={[0]}`)).json()).toMatchObject({ type: 'reconciliation.triggered' });
    expect((await request(`${origin}/debug/vars/events?field={[*].type}`)).json()).toEqual([
      'reconciliation.triggered',
      'config.validated',
      'reconciliation.completed',
    ]);
    expect((await request(`${origin}/debug/vars/state?field={.resources.lb-pods}`)).json()).toBe(2);
  });

  it('prints kubectl text with output=text', async () => {
    const origin = await serve(loaded());
    const res = await request(`${origin}/debug/vars/rendered?field={.config}&output=text`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('global\n  maxconn 100\n');
    const range = await request(`${origin}/debug/vars/events?field=${encodeURIComponent('{range [*]}{.type}{"\\n"}{end}')}&output=text`);
    expect(range.text).toBe('reconciliation.triggered\nconfig.validated\nreconciliation.completed\n');
    expect((await request(`${origin}/debug/vars/events?field=${encodeURIComponent('{range [*]}{.type},{end}')}`)).json()).toBe(
      'reconciliation.triggered,config.validated,reconciliation.completed,',
    );
  });

  it('answers 503 "config not loaded yet" before setConfig, and says so for other empty variables', async () => {
    const origin = await serve(createIntrospectionState());
    const res = await request(`${origin}/debug/vars/config`);
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({ error: 'config not loaded yet' });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect((await request(`${origin}/debug/vars/rendered`)).json()).toEqual({ error: 'rendered config not available yet' });
    expect((await request(`${origin}/debug/vars/events`)).json()).toEqual([]);
  });

  it('answers 404 naming the known variables', async () => {
    const res = await request(`${await serve(loaded())}/debug/vars/nope`);
    expect(res.status).toBe(404);
    expect(res.json().error).toBe(
      'unknown variable "nope"; known variables: config, credentials, rendered, auxfiles, resources, events, state, uptime, event_counts',
    );
  });

  it('answers 500 with the provider message when a custom variable throws, and keeps serving', async () => {
    const state = loaded();
    state.publishVar('broken', () => {
      throw new Error('cache not warmed');
    });
    const origin = await serve(state);
    const res = await request(`${origin}/debug/vars/broken`);
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'cache not warmed' });
    expect((await request(`${origin}/debug/vars/config?field={.version}`)).json()).toBe('42');
  });

  it('maps field errors to 400 and 404 per the contract', async () => {
    const origin = await serve(loaded());
    const parse = await request(`${origin}/debug/vars/config?field={.version`);
    expect(parse.status).toBe(400);
    expect(parse.json().error).toEqual(expect.any(String));
    const missing = await request(`${origin}/debug/vars/config?field={.nope}`);
    expect(missing.status).toBe(404);
    expect(missing.json().error).toMatch(/nope/);
    const dotted = await request(`${origin}/debug/vars/config?field={.config.templates['haproxy.cfg']}`);
    expect(dotted.status).toBe(404);
    expect(dotted.json().error).toMatch(/haproxy\\\.cfg/);
    expect((await request(`${origin}/debug/vars/events?field={[10]}`)).status).toBe(404);
    expect((await request(`${origin}/debug/vars/config?field={.version}&output=yaml`)).status).toBe(400);
    expect((await request(`${origin}/debug/vars/events?limit=abc`)).status).toBe(400);
    expect((await request(`${origin}/debug/vars/config?field=a&field=b`)).status).toBe(400);
  });

  it('answers 405 with Allow for other methods, leaves host routes alone, and HEAD sends headers only', async () => {
    const origin = await serve(loaded());
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await request(`${origin}/debug/vars/config`, { method });
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('GET, HEAD');
      expect(res.json().error).toMatch(/read-only/);
    }
    expect((await request(`${origin}/host-route`, { method: 'POST' })).json()).toEqual({ host: true });
    const head = await request(`${origin}/debug/vars/config`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toHaveLength(0);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });

  it('drops /debug/* but keeps health checks with debug: false', async () => {
    const app = appFor(loaded(), { debug: false });
    app.get('/debug/host-page', (_req, res) => void res.send("the host's own page"));
    const { origin } = await listen(app);
    for (const path of ['/debug/vars', '/debug/vars/config', '/debug/pprof/', '/debug/pprof/heap']) {
      const res = await request(`${origin}${path}`);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        error: 'debug endpoints are disabled (debug: false, the "debug port 0" setting); health endpoints keep answering',
      });
    }
    // Only our own paths answer: the host's /debug routes stay the host's.
    expect((await request(`${origin}/debug/host-page`)).text).toBe("the host's own page");
    expect((await request(`${origin}/healthz`)).json()).toEqual({ status: 'ok' });
  });

  it('leaves every other /debug and /healthz path to the host, whatever the method', async () => {
    const app = appFor(loaded());
    // Registered after our router, as a host adds its own pages.
    app.get('/debug/host-page', (_req, res) => void res.json({ host: 'page' }));
    app.post('/debug/host-action', (_req, res) => void res.json({ host: 'action' }));
    app.delete('/healthz/host-cache', (_req, res) => void res.json({ host: 'cache' }));
    const { origin } = await listen(app);
    expect((await request(`${origin}/debug/host-page`)).json()).toEqual({ host: 'page' });
    expect((await request(`${origin}/debug/host-action`, { method: 'POST' })).json()).toEqual({ host: 'action' });
    expect((await request(`${origin}/healthz/host-cache`, { method: 'DELETE' })).json()).toEqual({ host: 'cache' });
    // Ours stay ours: read-only, JSON errors.
    const post = await request(`${origin}/debug/vars/config`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect((await request(`${origin}/readyz/shutdown`, { method: 'POST' })).status).toBe(405);
    expect((await request(`${origin}/debug/vars/nope`)).status).toBe(404);
    expect((await request(`${origin}/debug/pprof/nope`)).status).toBe(404);
  });

  it('checks router options at creation', () => {
    const state = loaded();
    expect(() => createIntrospectionRouter({} as IntrospectionState)).toThrow(
      'createIntrospectionRouter: the first argument must be the IntrospectionState (from createIntrospectionState()), got an empty object',
    );
    expect(() => createIntrospectionRouter(state, { limits: { atOnceBudgetMs: -1 }, pprof: false })).toThrow(
      'createIntrospectionRouter: limits.atOnceBudgetMs must be an integer from 0 to 1,000, got -1',
    );
    expect(() => createIntrospectionRouter(state, { debug: 'yes' as unknown as boolean })).toThrow('debug must be true or false');
  });

  it('streams large variables with the exact bytes of JSON.stringify', async () => {
    const state = createIntrospectionState();
    const big = Array.from({ length: 20000 }, (_, i) => ({ i, name: `resource-${i}`, labels: { app: 'x', 'tier\u2028': i % 3 } }));
    state.publishVar('big', () => big);
    const res = await request(`${await serve(state, { limits: { atOnceBudgetMs: 0 } })}/debug/vars/big`);
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.text).toBe(JSON.stringify(big));
  });
});

describe('/debug/vars selection size', () => {
  it('bounds multi-valued JSON answers by maxOutputBytes but serves a large singular subtree whole', async () => {
    const state = createIntrospectionState();
    const templates: Record<string, string> = {};
    for (let i = 0; i < 20; i++) templates[`t${i}`] = 'x'.repeat(10_000);
    state.setConfig({ templates, watched_resources: [] }, '1');
    const origin = await serve(state, { limits: { jsonPath: { maxOutputBytes: 50_000 } } });
    const whole = await request(`${origin}/debug/vars/config?field={.config.templates}`);
    expect(whole.status).toBe(200);
    expect(Object.keys(whole.json())).toHaveLength(20);
    const union = await request(`${origin}/debug/vars/config?field={.config['templates','templates','templates']}`);
    expect(union.status).toBe(413);
    expect(union.json().error).toContain('maxOutputBytes');
  });
});

describe('/debug/vars ?size=1', () => {
  const state = loaded();
  // Large enough to be streamed (above the 256 KiB threshold), with multi-byte characters.
  const big = Array.from({ length: 3000 }, (_, i) => ({ name: `backend-${i}`, note: 'ü€😀'.repeat(40), weight: i / 7 }));
  state.publishVar('big', () => ({ big }));

  it.each([
    ['a small variable', '/debug/vars/resources'],
    ['the variable list', '/debug/vars'],
    ['a streamed variable with multi-byte text', '/debug/vars/big'],
    ['state', '/debug/vars/state'],
    ['a field selection', '/debug/vars/big?field={.big[10:20]}'],
    ['a multi-valued selection', '/debug/vars/big?field={.big[*].name}'],
    ['filtered events', '/debug/vars/events?type=reconciliation.&limit=1'],
  ])('gives the exact byte length of the JSON answer: %s', async (_name, url) => {
    const origin = await serve(state);
    const body = await request(`${origin}${url}`);
    expect(body.status).toBe(200);
    const sized = await request(`${origin}${url}${url.includes('?') ? '&' : '?'}size=1`);
    expect(sized.status).toBe(200);
    // state carries a snapshot time and uptime: measure against a body of the same shape.
    if (url.endsWith('/state')) expect(Math.abs(sized.json<{ bytes: number }>().bytes - body.body.length)).toBeLessThan(16);
    else expect(sized.json()).toEqual({ bytes: body.body.length });
  });

  it('refuses what cannot be measured as JSON', async () => {
    const origin = await serve(state);
    const text = await request(`${origin}/debug/vars/resources?field={.ingresses}&output=text&size=1`);
    expect(text.status).toBe(400);
    expect(text.json().error).toMatch(/"size" measures JSON answers/);
    const watch = await request(`${origin}/debug/vars/events?watch=1&size=1`);
    expect(watch.status).toBe(400);
    expect(watch.json().error).toMatch(/"size" do not apply to \?watch=1/);
  });
});

describe('a wall clock (option "now") that goes wrong after creation', () => {
  const NOW_ERROR = /^createIntrospectionState: now\(\) returned (NaN|Infinity|"soon"|undefined); expected milliseconds since the epoch/;

  it.each<[string, unknown]>([
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a string', 'soon'],
    ['undefined', undefined],
  ])('returning %s: uptime and state answer 500 naming the option; every answer that needs no clock still works', async (_label, bad) => {
    let broken = false;
    const state = createIntrospectionState({ now: () => (broken ? (bad as number) : Date.now()) });
    state.setConfig({ templates: {}, watched_resources: [] }, 'v1');
    state.setRendered('global\n');
    state.setResourceCounts({ ingresses: 1 });
    state.setCredentials({ api: { token: 'x' } });
    state.setAuxFiles({ map_files: [{ name: 'hosts.map', path: '/etc/hosts.map' }] });
    state.publishEvent('reconciliation.completed');
    state.recordProgress();
    const origin = await serve(state);
    broken = true;

    for (const name of ['uptime', 'state']) {
      const res = await request(`${origin}/debug/vars/${name}`);
      expect([name, res.status]).toEqual([name, 500]);
      expect(res.json().error).toMatch(NOW_ERROR);
    }
    for (const path of [
      '/debug/vars',
      '/debug/vars/config',
      '/debug/vars/rendered',
      '/debug/vars/resources',
      '/debug/vars/credentials',
      '/debug/vars/auxfiles',
      '/debug/vars/events',
      '/debug/vars/events?field={[0].type}',
      '/healthz',
      '/livez',
      '/readyz',
    ]) {
      const res = await request(`${origin}${path}`);
      expect([path, res.status]).toEqual([path, 200]);
    }
    // Pushes that stamp a time throw at the host's call, naming the option, and change nothing.
    expect(() => state.publishEvent('config.loaded')).toThrow(NOW_ERROR);
    expect(() => state.setRendered('other\n')).toThrow(NOW_ERROR);
    expect(() => state.recordProgress()).toThrow(NOW_ERROR);
    const events = await request(`${origin}/debug/vars/events`);
    expect((events.json() as unknown as Array<{ type: string }>).map((e) => e.type)).toEqual(['reconciliation.completed']);
    expect((await request(`${origin}/debug/vars/rendered`)).json().config).toBe('global\n');

    broken = false;
    expect((await request(`${origin}/debug/vars/uptime`)).status).toBe(200);
  });
});

describe('host-chosen names over /debug/vars', () => {
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', '__defineGetter__'];
  /** An object with each name as an own key (a literal `__proto__:` would set the prototype instead). */
  const keyed = <T>(value: (name: string, i: number) => T): Record<string, T> =>
    Object.fromEntries(NAMES.map((name, i) => [name, value(name, i)]));

  it('serves resource types, credential names and redacted keys named like Object.prototype members as plain keys', async () => {
    const state = createIntrospectionState({ redactKeys: ['__proto__', 'constructor'] });
    state.setResourceCounts(keyed((_, i) => i + 1));
    state.setCredentials(
      JSON.parse('{"__proto__": {"token": "s3cret", "__proto__": ""}, "constructor": "x", "toString": ""}') as Record<string, unknown>,
    );
    state.setConfig(
      JSON.parse(
        '{"templates": {}, "watched_resources": [], "__proto__": "hidden", "nested": {"constructor": "hidden", "toString": "kept"}}',
      ) as never,
      'v1',
    );
    const origin = await serve(state);

    const resources = await request(`${origin}/debug/vars/resources`);
    expect(Object.entries(resources.json())).toEqual(NAMES.map((name, i) => [name, i + 1]));
    expect((await request(`${origin}/debug/vars/resources?field={.__proto__}`)).json()).toBe(1);
    expect((await request(`${origin}/debug/vars/resources?field={.constructor}`)).json()).toBe(2);

    const credentials = (await request(`${origin}/debug/vars/credentials`)).json().credentials as Record<string, unknown>;
    expect(Object.entries(credentials)).toEqual([
      ['__proto__', { set: true, fields_set: ['token'], fields_empty: ['__proto__'] }],
      ['constructor', { set: true }],
      ['toString', { set: false }],
    ]);
    expect(JSON.stringify(credentials)).not.toContain('s3cret');

    const config = (await request(`${origin}/debug/vars/config`)).json().config as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(config, '__proto__')?.value).toBe('[REDACTED]');
    expect(config['nested']).toEqual({ constructor: '[REDACTED]', toString: 'kept' });
    expect(JSON.stringify(config)).not.toContain('hidden');
    expect((await request(`${origin}/debug/vars/config?field={.config.__proto__}`)).json()).toBe('[REDACTED]');
  });

  it('lists every variable in state, whatever its name, and a missing name selects nothing inherited', async () => {
    const state = createIntrospectionState();
    for (const name of NAMES.filter((n) => /^[A-Za-z0-9]/.test(n))) state.publishVar(name, () => `value of ${name}`);
    state.setResourceCounts({ ingresses: 1 });
    const origin = await serve(state);
    const dump = (await request(`${origin}/debug/vars/state`)).json();
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf']) expect(dump[name]).toBe(`value of ${name}`);
    expect((await request(`${origin}/debug/vars/state?field={.valueOf}`)).json()).toBe('value of valueOf');
    expect((await request(`${origin}/debug/vars/resources?field={.toString}`)).status).toBe(404);
    const inherited = await request(`${origin}/debug/vars/events?field={.constructor}`);
    expect(inherited.status).toBe(404);
  });
});
