import os from 'node:os';
import express from 'express';
import { createIntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, request } from '../helpers/http';

async function serve(options: IntrospectionRouterOptions = {}) {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  const router = createIntrospectionRouter(state, { pprof: false, ...options });
  const app = express();
  app.use(router);
  const served = await listen(app);
  return { origin: served.origin, close: async () => (await router.close(), await served.close()) };
}

describe('DNS rebinding protection on /debug', () => {
  it.each([
    ['localhost:8080', 200],
    ['LOCALHOST', 200],
    ['127.0.0.1:8080', 200],
    ['10.244.1.17:8080', 200],
    ['[::1]:8080', 200],
    ['my-controller', 200],
    ['my-controller.kube-system.svc', 200],
    ['my-controller.kube-system.svc.cluster.local:8080', 200],
    ['app.localhost', 200],
    [os.hostname(), 200],
    ['attacker.example.com', 403],
    ['attacker.example.com.', 403],
    ['localhost.attacker.example', 403],
    ['127.0.0.1.nip.io', 403],
  ])('Host %s → %d', async (host, status) => {
    const s = await serve();
    try {
      const res = await request(`${s.origin}/debug/vars/config`, { headers: { Host: host } });
      expect(res.status).toBe(status);
      if (status === 403)
        expect(res.json().error).toMatch(
          /^host ".+" is not allowed for \/debug \(DNS rebinding protection\); add it to the router option allowedHosts$/,
        );
    } finally {
      await s.close();
    }
  });

  it('keeps health endpoints open whatever the Host (probes), takes extra names, and can be turned off', async () => {
    const s = await serve({ allowedHosts: ['debug.example.com', '*.corp.example'] });
    try {
      expect((await request(`${s.origin}/healthz`, { headers: { Host: 'attacker.example.com' } })).status).toBe(200);
      expect((await request(`${s.origin}/debug/vars`, { headers: { Host: 'debug.example.com:443' } })).status).toBe(200);
      expect((await request(`${s.origin}/debug/vars`, { headers: { Host: 'ops.corp.example' } })).status).toBe(200);
      expect((await request(`${s.origin}/debug/vars`, { headers: { Host: 'corp.example.attacker.com' } })).status).toBe(403);
      expect((await request(`${s.origin}/debug/vars/events?watch=1`, { headers: { Host: 'attacker.example.com' } })).status).toBe(403);
    } finally {
      await s.close();
    }
    const off = await serve({ allowedHosts: false });
    try {
      expect((await request(`${off.origin}/debug/vars`, { headers: { Host: 'attacker.example.com' } })).status).toBe(200);
    } finally {
      await off.close();
    }
    expect(() => createIntrospectionRouter(createIntrospectionState(), { pprof: false, allowedHosts: 'localhost' as never })).toThrow(
      'allowedHosts must be an array of host names',
    );
  });
});
