import express from 'express';
import { createHealthRouter } from '../../lib/introspection/health';
import { introspectionStatuses } from '../../lib/introspection/errors';
import { answerErrors } from '../../lib/http/errors';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { closeAllListening, listen, request } from '../helpers/http';

afterEach(closeAllListening);

/** A state past its first configuration, so the built-in `config-loaded` gate is open. */
function configured(): IntrospectionState {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  return state;
}

/** The health router on a real socket, closed after the test: its origin. */
async function serve(state: IntrospectionState, checkTimeoutMs = 200): Promise<string> {
  const app = express();
  app.use(createHealthRouter(state, { checkTimeoutMs }));
  // As the introspection router composes it: handlers throw, one error middleware answers.
  app.use(answerErrors(introspectionStatuses));
  return (await listen(app)).origin;
}

describe('health endpoints', () => {
  it('answers /healthz 200 {"status":"ok"} when healthy', async () => {
    const res = await request(`${await serve(configured())}/healthz`);
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
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
    const origin = await serve(state);
    expect((await request(`${origin}/healthz?verbose`)).json()).toEqual({
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
    const res = await request(`${origin}/healthz`);
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({
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
    expect((await request(`${origin}/healthz?exclude=dataplane`)).status).toBe(200);
  });

  it('treats false, rejections and hangs as failures, bounded by the timeout', async () => {
    const state = configured();
    state.addHealthCheck('false', () => false);
    state.addHealthCheck('rejects', () => Promise.reject(new Error('nope')));
    state.addHealthCheck('hangs', () => new Promise<void>(() => undefined));
    const res = await request(`${await serve(state, 50)}/readyz?verbose`);
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
    const origin = await serve(state);
    const live = await request(`${origin}/livez`);
    expect(live.status).toBe(200);
    expect(live.text).toBe('ok');
    expect(live.headers['content-type']).toMatch(/^text\/plain/);
    expect((await request(`${origin}/livez?verbose`)).text).toBe('[+]ping ok\nlivez check passed\n');
    expect((await request(`${origin}/readyz?verbose`)).text).toBe(
      '[+]ping ok\n[+]shutdown ok\n[+]config-loaded ok\n[+]cache-synced ok\nreadyz check passed\n',
    );
    expect((await request(`${origin}/readyz/cache-synced`)).text).toBe('ok');
    const unknown = await request(`${origin}/livez/cache-synced`);
    expect(unknown.status).toBe(404);
    expect(unknown.json().error).toBe('no livez check named "cache-synced"; known checks: ping');
    expect((await request(`${origin}/readyz?verbose&exclude=nothing`)).text).toContain(
      'warn: some health checks cannot be excluded: no matches for "nothing"',
    );
  });

  it('drains readiness while shutting down but stays live', async () => {
    const state = configured();
    const origin = await serve(state);
    state.setShuttingDown(true, 'SIGTERM received');
    const ready = await request(`${origin}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.text).toContain('[-]shutdown failed: SIGTERM received');
    expect((await request(`${origin}/healthz`)).status).toBe(503);
    expect((await request(`${origin}/livez`)).status).toBe(200);
    expect((await request(`${origin}/readyz/shutdown`)).status).toBe(503);
    state.setShuttingDown(false);
    expect((await request(`${origin}/readyz`)).status).toBe(200);
  });

  it('stops counting a check once its remover is called', async () => {
    const state = configured();
    const remove = state.addHealthCheck('flaky', () => false);
    const origin = await serve(state);
    expect((await request(`${origin}/healthz`)).status).toBe(503);
    remove();
    expect((await request(`${origin}/healthz`)).status).toBe(200);
  });
});

describe('check names a host state chooses', () => {
  const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', '__defineGetter__'];

  it('lists every check of a host state under its own key in /healthz?verbose, even names Object.prototype has', async () => {
    const store = configured();
    // A host's own reader may name its checks as it likes; the store's naming rule is not the router's.
    const state: IntrospectionState = Object.create(store, {
      healthChecks: {
        value: () => NAMES.map((name) => ({ name, check: () => name !== 'valueOf', livez: true, readyz: true })),
      },
    }) as IntrospectionState;
    const origin = await serve(state);
    const res = await request(`${origin}/healthz?verbose`);
    expect(res.status).toBe(503);
    const checks = res.json().checks as Record<string, { status: string }>;
    expect(Object.keys(checks)).toEqual(['ping', 'shutdown', 'config-loaded', ...NAMES]);
    for (const name of NAMES) {
      expect([name, Object.getOwnPropertyDescriptor(checks, name)?.value?.status]).toEqual([name, name === 'valueOf' ? 'failed' : 'ok']);
    }
  });
});
