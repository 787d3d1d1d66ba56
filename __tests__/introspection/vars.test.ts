import express from 'express';
import request from 'supertest';
import { createIntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';

const routers: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(routers.map((r) => r.close()));
});

function appFor(state: IntrospectionState, options: IntrospectionRouterOptions = {}): express.Express {
  const app = express();
  const router = createIntrospectionRouter(state, { pprof: false, ...options });
  routers.push(router);
  app.use(router);
  app.post('/host-route', (_req, res) => void res.json({ host: true }));
  return app;
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
    ['a small answer', 256 * 1024],
    ['a streamed answer', 1],
  ])('keeps the sign of -0 in JSON and text, in %s', async (_name, streamThresholdBytes) => {
    const state = createIntrospectionState();
    state.publishVar('zeros', () => ({ x: -0, list: [-0, 0, 1.5], nested: { y: -0 } }));
    const app = appFor(state, { streamThresholdBytes });
    const whole = await request(app)
      .get('/debug/vars/zeros')
      .buffer(true)
      .parse((res, done) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => done(null, text));
      });
    expect(whole.status).toBe(200);
    expect(whole.body).toBe('{"x":-0,"list":[-0,0,1.5],"nested":{"y":-0}}');
    expect((await request(app).get('/debug/vars/zeros?field={.x}')).text).toBe('-0');
    expect((await request(app).get('/debug/vars/zeros?field={.list}')).text).toBe('[-0,0,1.5]');
    expect((await request(app).get('/debug/vars/zeros?field={.x}&output=text')).text).toBe('-0');
    expect((await request(app).get('/debug/vars/zeros?field={.nested}&output=text')).text).toBe('{"y":-0}');
    expect((await request(app).get('/debug/vars/zeros?field={.list[*]}&output=text')).text).toBe('-0 0 1.5');
    expect((await request(app).get('/debug/vars/zeros?size=1')).body).toEqual({ bytes: Buffer.byteLength(whole.body as string) });
  });
});

describe('/debug/vars', () => {
  it('lists every variable, custom ones included', async () => {
    const state = loaded();
    state.publishVar('queue_depth', () => 4);
    const res = await request(appFor(state)).get('/debug/vars');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      vars: ['config', 'credentials', 'rendered', 'auxfiles', 'resources', 'events', 'state', 'uptime', 'queue_depth'],
    });
    expect((await request(appFor(state)).get('/debug/vars?field={.vars[-1]}')).body).toBe('queue_depth');
  });

  it('answers the spec field selections with JSON types kept', async () => {
    const app = appFor(loaded());
    expect((await request(app).get('/debug/vars/config?field={.version}')).body).toBe('42');
    expect((await request(app).get('/debug/vars/config').query({ field: '{.config.templates.haproxy\\.cfg}' })).body).toBe(
      'global\n  maxconn 100\n',
    );
    expect((await request(app).get('/debug/vars/config?field={.config}')).body).toMatchObject({
      watched_resources: [{ resource: 'ingresses' }],
    });
    expect((await request(app).get('/debug/vars/rendered?field={.size}')).body).toBe(21);
    expect((await request(app).get('/debug/vars/rendered?field={.timestamp}')).body).toMatch(/Z$/);
    expect((await request(app).get('/debug/vars/resources?field={.ingresses}')).body).toBe(3);
    expect((await request(app).get('/debug/vars/events?field={[0]}')).body).toMatchObject({ type: 'reconciliation.triggered' });
    expect((await request(app).get('/debug/vars/events?field={[*].type}')).body).toEqual([
      'reconciliation.triggered',
      'config.validated',
      'reconciliation.completed',
    ]);
    expect((await request(app).get('/debug/vars/state?field={.resources.lb-pods}')).body).toBe(2);
  });

  it('prints kubectl text with output=text', async () => {
    const app = appFor(loaded());
    const res = await request(app).get('/debug/vars/rendered?field={.config}&output=text');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('global\n  maxconn 100\n');
    const range = await request(app).get('/debug/vars/events').query({ field: '{range [*]}{.type}{"\\n"}{end}', output: 'text' });
    expect(range.text).toBe('reconciliation.triggered\nconfig.validated\nreconciliation.completed\n');
    expect((await request(app).get('/debug/vars/events').query({ field: '{range [*]}{.type},{end}' })).body).toBe(
      'reconciliation.triggered,config.validated,reconciliation.completed,',
    );
  });

  it('answers 503 "config not loaded yet" before setConfig, and says so for other empty variables', async () => {
    const app = appFor(createIntrospectionState());
    const res = await request(app).get('/debug/vars/config');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'config not loaded yet' });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect((await request(app).get('/debug/vars/rendered')).body).toEqual({ error: 'rendered config not available yet' });
    expect((await request(app).get('/debug/vars/events')).body).toEqual([]);
  });

  it('answers 404 naming the known variables', async () => {
    const res = await request(appFor(loaded())).get('/debug/vars/nope');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe(
      'unknown variable "nope"; known variables: config, credentials, rendered, auxfiles, resources, events, state, uptime',
    );
  });

  it('answers 500 with the provider message when a custom variable throws, and keeps serving', async () => {
    const state = loaded();
    state.publishVar('broken', () => {
      throw new Error('cache not warmed');
    });
    const app = appFor(state);
    const res = await request(app).get('/debug/vars/broken');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'cache not warmed' });
    expect((await request(app).get('/debug/vars/config?field={.version}')).body).toBe('42');
  });

  it('maps field errors to 400 and 404 per the contract', async () => {
    const app = appFor(loaded());
    const parse = await request(app).get('/debug/vars/config?field={.version');
    expect(parse.status).toBe(400);
    expect(parse.body.error).toEqual(expect.any(String));
    const missing = await request(app).get('/debug/vars/config?field={.nope}');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatch(/nope/);
    const dotted = await request(app).get("/debug/vars/config?field={.config.templates['haproxy.cfg']}");
    expect(dotted.status).toBe(404);
    expect(dotted.body.error).toMatch(/haproxy\\\.cfg/);
    expect((await request(app).get('/debug/vars/events?field={[10]}')).status).toBe(404);
    expect((await request(app).get('/debug/vars/config?field={.version}&output=yaml')).status).toBe(400);
    expect((await request(app).get('/debug/vars/events?limit=abc')).status).toBe(400);
    expect((await request(app).get('/debug/vars/config?field=a&field=b')).status).toBe(400);
  });

  it('answers 405 with Allow for other methods, leaves host routes alone, and HEAD sends headers only', async () => {
    const app = appFor(loaded());
    for (const method of ['post', 'put', 'delete', 'patch'] as const) {
      const res = await request(app)[method]('/debug/vars/config');
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('GET, HEAD');
      expect(res.body.error).toMatch(/read-only/);
    }
    expect((await request(app).post('/host-route')).body).toEqual({ host: true });
    const head = await request(app).head('/debug/vars/config');
    expect(head.status).toBe(200);
    expect(head.text).toBeUndefined();
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
  });

  it('drops /debug/* but keeps health checks with debug: false', async () => {
    const app = appFor(loaded(), { debug: false });
    app.get('/debug/host-page', (_req, res) => void res.send("the host's own page"));
    for (const path of ['/debug/vars', '/debug/vars/config', '/debug/pprof/', '/debug/pprof/heap']) {
      const res = await request(app).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toEqual({
        error: 'debug endpoints are disabled (debug: false, the "debug port 0" setting); health endpoints keep answering',
      });
    }
    // Only our own paths answer: the host's /debug routes stay the host's.
    expect((await request(app).get('/debug/host-page')).text).toBe("the host's own page");
    expect((await request(app).get('/healthz')).body).toEqual({ status: 'ok' });
  });

  it('leaves every other /debug and /healthz path to the host, whatever the method', async () => {
    const app = appFor(loaded());
    // Registered after our router, as a host adds its own pages.
    app.get('/debug/host-page', (_req, res) => void res.json({ host: 'page' }));
    app.post('/debug/host-action', (_req, res) => void res.json({ host: 'action' }));
    app.delete('/healthz/host-cache', (_req, res) => void res.json({ host: 'cache' }));
    expect((await request(app).get('/debug/host-page')).body).toEqual({ host: 'page' });
    expect((await request(app).post('/debug/host-action')).body).toEqual({ host: 'action' });
    expect((await request(app).delete('/healthz/host-cache')).body).toEqual({ host: 'cache' });
    // Ours stay ours: read-only, JSON errors.
    const post = await request(app).post('/debug/vars/config');
    expect(post.status).toBe(405);
    expect((await request(app).post('/readyz/shutdown')).status).toBe(405);
    expect((await request(app).get('/debug/vars/nope')).status).toBe(404);
    expect((await request(app).get('/debug/pprof/nope')).status).toBe(404);
  });

  it('checks router options at creation', () => {
    const state = loaded();
    expect(() => createIntrospectionRouter({} as IntrospectionState)).toThrow(/must be an IntrospectionState/);
    expect(() => createIntrospectionRouter(state, { streamThresholdBytes: -1, pprof: false })).toThrow(
      'createIntrospectionRouter: streamThresholdBytes must be an integer from 1 to 2,147,483,648, got -1',
    );
    expect(() => createIntrospectionRouter(state, { debug: 'yes' as unknown as boolean })).toThrow('debug must be true or false');
  });

  it('streams large variables with the exact bytes of JSON.stringify', async () => {
    const state = createIntrospectionState();
    const big = Array.from({ length: 20000 }, (_, i) => ({ i, name: `resource-${i}`, labels: { app: 'x', 'tier\u2028': i % 3 } }));
    state.publishVar('big', () => big);
    const res = await request(appFor(state, { streamThresholdBytes: 1024 }))
      .get('/debug/vars/big')
      .buffer(true)
      .parse((r, cb) => {
        let data = '';
        r.setEncoding('utf8');
        r.on('data', (c: string) => (data += c));
        r.on('end', () => cb(null, data));
      });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.body).toBe(JSON.stringify(big));
  });
});

describe('/debug/vars selection size', () => {
  it('bounds multi-valued JSON answers by maxOutputBytes but serves a large singular subtree whole', async () => {
    const state = createIntrospectionState();
    const templates: Record<string, string> = {};
    for (let i = 0; i < 20; i++) templates[`t${i}`] = 'x'.repeat(10_000);
    state.setConfig({ templates, watched_resources: [] }, '1');
    const app = appFor(state, { jsonPath: { maxOutputBytes: 50_000 } });
    const whole = await request(app).get('/debug/vars/config?field={.config.templates}');
    expect(whole.status).toBe(200);
    expect(Object.keys(whole.body as object)).toHaveLength(20);
    const union = await request(app).get(`/debug/vars/config?field={.config['templates','templates','templates']}`);
    expect(union.status).toBe(413);
    expect(union.body.error).toContain('maxOutputBytes');
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
    const app = appFor(state);
    const body = await request(app)
      .get(url)
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(body.status).toBe(200);
    const sized = await request(app).get(`${url}${url.includes('?') ? '&' : '?'}size=1`);
    expect(sized.status).toBe(200);
    // state carries a snapshot time and uptime: measure against a body of the same shape.
    if (url.endsWith('/state')) expect(Math.abs(sized.body.bytes - (body.body as Buffer).length)).toBeLessThan(16);
    else expect(sized.body).toEqual({ bytes: (body.body as Buffer).length });
  });

  it('refuses what cannot be measured as JSON', async () => {
    const app = appFor(state);
    const text = await request(app).get('/debug/vars/resources?field={.ingresses}&output=text&size=1');
    expect(text.status).toBe(400);
    expect(text.body.error).toMatch(/"size" measures JSON answers/);
    const watch = await request(app).get('/debug/vars/events?watch=1&size=1');
    expect(watch.status).toBe(400);
    expect(watch.body.error).toMatch(/"size" do not apply to \?watch=1/);
  });
});
