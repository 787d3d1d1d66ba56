import express from 'express';
import request from 'supertest';
import { createHealthRouter } from '../../lib/introspection/health';
import { introspectionStatuses } from '../../lib/introspection/errors';
import { answerErrors } from '../../lib/http/errors';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';

/** A state past its first configuration, so the built-in `config-loaded` gate is open. */
function configured(): IntrospectionState {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  return state;
}

function appFor(state: IntrospectionState, checkTimeoutMs = 200): express.Express {
  const app = express();
  app.use(createHealthRouter(state, { checkTimeoutMs }));
  // As the introspection router composes it: handlers throw, one error middleware answers.
  app.use(answerErrors(introspectionStatuses));
  return app;
}

describe('health endpoints', () => {
  it('answers /healthz 200 {"status":"ok"} when healthy', async () => {
    const res = await request(appFor(configured())).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('lists each check with ?verbose and answers 503 with every check state when one fails', async () => {
    const state = configured();
    state.addHealthCheck('informers', () => true);
    let healthy = true;
    state.addHealthCheck('dataplane', () => {
      if (!healthy) throw new Error('dataplane API unreachable');
    });
    const app = appFor(state);
    expect((await request(app).get('/healthz?verbose')).body).toEqual({
      status: 'ok',
      checks: {
        ping: { status: 'ok' },
        shutdown: { status: 'ok' },
        'config-loaded': { status: 'ok' },
        informers: { status: 'ok' },
        dataplane: { status: 'ok' },
      },
    });
    healthy = false;
    const res = await request(app).get('/healthz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'failed',
      error: 'health check failed: dataplane',
      checks: {
        ping: { status: 'ok' },
        shutdown: { status: 'ok' },
        'config-loaded': { status: 'ok' },
        informers: { status: 'ok' },
        dataplane: { status: 'failed', error: 'dataplane API unreachable' },
      },
    });
    expect((await request(app).get('/healthz?exclude=dataplane')).status).toBe(200);
  });

  it('treats false, rejections and hangs as failures, bounded by the timeout', async () => {
    const state = configured();
    state.addHealthCheck('false', () => false);
    state.addHealthCheck('rejects', () => Promise.reject(new Error('nope')));
    state.addHealthCheck('hangs', () => new Promise<void>(() => undefined));
    const res = await request(appFor(state, 50)).get('/readyz?verbose');
    expect(res.status).toBe(503);
    expect(res.text).toBe(
      [
        '[+]ping ok',
        '[+]shutdown ok',
        '[+]config-loaded ok',
        '[-]false failed: check reported unhealthy',
        '[-]rejects failed: nope',
        '[-]hangs failed: timed out after 50 ms',
        'readyz check failed',
        '',
      ].join('\n'),
    );
  });

  it('follows the API server conventions on /livez and /readyz', async () => {
    const state = configured();
    state.addHealthCheck('cache-synced', () => true, { livez: false });
    const app = appFor(state);
    const live = await request(app).get('/livez');
    expect(live.status).toBe(200);
    expect(live.text).toBe('ok');
    expect(live.headers['content-type']).toMatch(/^text\/plain/);
    expect((await request(app).get('/livez?verbose')).text).toBe('[+]ping ok\nlivez check passed\n');
    expect((await request(app).get('/readyz?verbose')).text).toBe(
      '[+]ping ok\n[+]shutdown ok\n[+]config-loaded ok\n[+]cache-synced ok\nreadyz check passed\n',
    );
    expect((await request(app).get('/readyz/cache-synced')).text).toBe('ok');
    const unknown = await request(app).get('/livez/cache-synced');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('no livez check named "cache-synced"; known checks: ping');
    expect((await request(app).get('/readyz?verbose&exclude=nothing')).text).toContain(
      'warn: some health checks cannot be excluded: no matches for "nothing"',
    );
  });

  it('drains readiness while shutting down but stays live', async () => {
    const state = configured();
    const app = appFor(state);
    state.setShuttingDown(true, 'SIGTERM received');
    const ready = await request(app).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.text).toContain('[-]shutdown failed: SIGTERM received');
    expect((await request(app).get('/healthz')).status).toBe(503);
    expect((await request(app).get('/livez')).status).toBe(200);
    expect((await request(app).get('/readyz/shutdown')).status).toBe(503);
    state.setShuttingDown(false);
    expect((await request(app).get('/readyz')).status).toBe(200);
  });

  it('stops counting a check once its remover is called', async () => {
    const state = configured();
    const remove = state.addHealthCheck('flaky', () => false);
    const app = appFor(state);
    expect((await request(app).get('/healthz')).status).toBe(503);
    remove();
    expect((await request(app).get('/healthz')).status).toBe(200);
  });
});
