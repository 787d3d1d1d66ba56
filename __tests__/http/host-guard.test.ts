import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import express from 'express';
import { createIntrospectionRouter, type IntrospectionRouterOptions } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';

function request(port: number, path: string, host: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    const req = http.request({ host: '127.0.0.1', port, path, agent: false, setHost: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    if (host !== undefined) req.setHeader('Host', host);
    req.on('error', reject);
    req.end();
  });
}

async function serve(options: IntrospectionRouterOptions = {}) {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  const router = createIntrospectionRouter(state, { pprof: false, ...options });
  const app = express();
  app.use(router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { port: (server.address() as AddressInfo).port, close: async () => (await router.close(), server.close()) };
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
      const res = await request(s.port, '/debug/vars/config', host);
      expect(res.status).toBe(status);
      if (status === 403)
        expect(JSON.parse(res.body).error).toMatch(
          /^host ".+" is not allowed for \/debug \(DNS rebinding protection\); add it to the router option allowedHosts$/,
        );
    } finally {
      await s.close();
    }
  });

  it('keeps health endpoints open whatever the Host (probes), takes extra names, and can be turned off', async () => {
    const s = await serve({ allowedHosts: ['debug.example.com', '*.corp.example'] });
    try {
      expect((await request(s.port, '/healthz', 'attacker.example.com')).status).toBe(200);
      expect((await request(s.port, '/debug/vars', 'debug.example.com:443')).status).toBe(200);
      expect((await request(s.port, '/debug/vars', 'ops.corp.example')).status).toBe(200);
      expect((await request(s.port, '/debug/vars', 'corp.example.attacker.com')).status).toBe(403);
      expect((await request(s.port, '/debug/vars/events?watch=1', 'attacker.example.com')).status).toBe(403);
    } finally {
      await s.close();
    }
    const off = await serve({ allowedHosts: false });
    try {
      expect((await request(off.port, '/debug/vars', 'attacker.example.com')).status).toBe(200);
    } finally {
      await off.close();
    }
    expect(() => createIntrospectionRouter(createIntrospectionState(), { pprof: false, allowedHosts: 'localhost' as never })).toThrow(
      'allowedHosts must be an array of host names',
    );
  });
});
