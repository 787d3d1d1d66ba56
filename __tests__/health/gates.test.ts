import { closeAllListening, listen, request } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';

afterAll(closeIntrospectionApps);
afterEach(closeAllListening);

/** The introspection router on a real socket: its origin. */
const serve = async (state: IntrospectionState): Promise<string> => (await listen(introspectionApp(state))).origin;

const CONFIG = { templates: { 'haproxy.cfg': 'global\n' }, watched_resources: [] };

describe('readiness gates', () => {
  it('hold readiness until the first configuration by default (built-in gate config-loaded)', async () => {
    const state = createIntrospectionState();
    const origin = await serve(state);
    const ready = await request(`${origin}/readyz?verbose`);
    expect(ready.status).toBe(503);
    expect(ready.text).toBe('[+]ping ok\n[+]shutdown ok\n[-]config-loaded failed: not open: config not loaded yet\nreadyz check failed\n');
    expect((await request(`${origin}/readyz/config-loaded`)).status).toBe(503);
    const healthz = await request(`${origin}/healthz`);
    expect(healthz.status).toBe(503);
    expect(healthz.json().error).toBe('health check failed: config-loaded');
    // Liveness never waits for configuration: a replica that has none yet must not be restarted.
    expect((await request(`${origin}/livez`)).status).toBe(200);
    expect((await request(`${origin}/debug/vars/config`)).json()).toEqual({ error: 'config not loaded yet' });

    state.setConfig(CONFIG, '1');
    expect((await request(`${origin}/readyz`)).text).toBe('ok');
    expect((await request(`${origin}/readyz/config-loaded`)).status).toBe(200);
    expect((await request(`${origin}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(state.readinessGates()).toEqual([{ name: 'config-loaded', open: true, reason: '', since: expect.any(String) }]);
  });

  it('can be turned off with waitForConfig: false', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const origin = await serve(state);
    expect((await request(`${origin}/readyz?verbose`)).text).toBe('[+]ping ok\n[+]shutdown ok\nreadyz check passed\n');
    expect(state.readinessGates()).toEqual([]);
    expect(() => createIntrospectionState({ waitForConfig: 'no' as unknown as boolean })).toThrow(
      new TypeError('createIntrospectionState: waitForConfig must be true or false, got "no"'),
    );
  });

  it('named gates hold /readyz and /healthz by name until opened, and can close again', async () => {
    const state = createIntrospectionState();
    state.setConfig(CONFIG, '1');
    const caches = state.addReadinessGate('caches-synced', 'informers listing');
    const leader = state.addReadinessGate('leader-elected-or-standby');
    const origin = await serve(state);
    expect((await request(`${origin}/readyz?verbose`)).text).toBe(
      [
        '[+]ping ok',
        '[+]shutdown ok',
        '[+]config-loaded ok',
        '[-]caches-synced failed: not open: informers listing',
        '[-]leader-elected-or-standby failed: not open: waiting for leader-elected-or-standby',
        'readyz check failed',
        '',
      ].join('\n'),
    );
    expect((await request(`${origin}/healthz`)).json().error).toBe('health check failed: caches-synced, leader-elected-or-standby');
    expect((await request(`${origin}/livez`)).status).toBe(200);

    caches.open();
    expect(caches.isOpen).toBe(true);
    expect((await request(`${origin}/readyz/caches-synced`)).status).toBe(200);
    expect((await request(`${origin}/readyz/leader-elected-or-standby`)).text).toBe(
      '[-]leader-elected-or-standby failed: not open: waiting for leader-elected-or-standby\nreadyz check failed\n',
    );
    leader.open();
    expect((await request(`${origin}/readyz`)).status).toBe(200);

    caches.close('cache resync after watch expired');
    expect((await request(`${origin}/readyz/caches-synced`)).text).toContain(
      '[-]caches-synced failed: not open: cache resync after watch expired',
    );
    caches.remove();
    caches.remove();
    expect((await request(`${origin}/readyz`)).status).toBe(200);
    const unknown = await request(`${origin}/readyz/caches-synced`);
    expect(unknown.status).toBe(404);
    expect(unknown.json().error).toBe(
      'no readyz check named "caches-synced"; known checks: ping, shutdown, config-loaded, leader-elected-or-standby',
    );
    expect((await request(`${origin}/livez/leader-elected-or-standby`)).status).toBe(404);
  });

  it('share one namespace with health checks and reject bad names', () => {
    const state = createIntrospectionState();
    state.addHealthCheck('dataplane', () => true);
    expect(() => state.addReadinessGate('dataplane')).toThrow(
      'addReadinessGate: a check or readiness gate named "dataplane" already exists',
    );
    expect(() => state.addReadinessGate('config-loaded')).toThrow('already exists');
    expect(() => state.addReadinessGate('shutdown')).toThrow('already exists');
    state.addReadinessGate('caches');
    expect(() => state.addHealthCheck('caches', () => true)).toThrow(
      'addHealthCheck: a check or readiness gate named "caches" already exists',
    );
    expect(() => state.addReadinessGate('bad name')).toThrow(TypeError);
    expect(() => state.addReadinessGate('x', 5 as unknown as string)).toThrow('reason must be a string');
  });

  it('cut a long reason to 256 characters, marked', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    state.addReadinessGate('huge', 'x'.repeat(100_000));
    state.setShuttingDown(true, 'y'.repeat(100_000));
    const res = await request(`${await serve(state)}/healthz?verbose`);
    const { checks } = res.json<{ checks: Record<string, { error: string }> }>();
    expect(checks.huge!.error).toBe(`not open: ${'x'.repeat(246)}…`);
    expect(checks.shutdown!.error).toBe(`${'y'.repeat(256)}…`);
  });
});
