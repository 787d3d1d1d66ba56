import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';

function get(port: number, path: string, agent: http.Agent): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve({ status: res.statusCode!, bytes, ms: performance.now() - started }));
      })
      .on('error', reject);
  });
}

describe('concurrent heavy reads', () => {
  it('run a few at a time, queue a bounded number, refuse the rest with 503 + Retry-After, and leave probes answering', async () => {
    const state = createIntrospectionState();
    // ~8 MB of state: every dump takes many slices.
    const big = Array.from({ length: 40_000 }, (_, i) => ({
      name: `ingress-${i}`,
      rules: [{ host: `h${i}.example.com`, paths: ['/', '/api', '/static'] }],
      note: 'x'.repeat(120),
    }));
    state.setConfig({ templates: {}, watched_resources: big }, '1');
    const router = createIntrospectionRouter(state, { pprof: false, maxConcurrentReads: 2, maxQueuedReads: 6 });
    const app = express();
    app.use(router);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const port = (server.address() as AddressInfo).port;
    const agent = new http.Agent({ keepAlive: false, maxSockets: 100 });
    try {
      const dumps = Array.from({ length: 40 }, () => get(port, '/debug/vars/config', agent));
      await new Promise((r) => setTimeout(r, 20));
      const probe = await get(port, '/livez', agent);
      const results = await Promise.all(dumps);
      const served = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 503);
      expect(served.length + refused.length).toBe(40);
      expect(served.length).toBeGreaterThanOrEqual(8); // 2 running + 6 queued at the peak, at least
      expect(refused.length).toBeGreaterThan(0);
      expect(new Set(served.map((r) => r.bytes)).size).toBe(1); // every served dump is complete
      expect(probe.status).toBe(200);
      const refusal = await new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve) => {
        // Fill the limiter, then ask once more.
        const holders = Array.from({ length: 8 }, () => get(port, '/debug/vars/config', agent));
        setTimeout(() => {
          http.get({ host: '127.0.0.1', port, path: '/debug/vars/config', agent }, (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (c: string) => (body += c));
            res.on(
              'end',
              () =>
                void Promise.all(holders).then(() => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body })),
            );
          });
        }, 10);
      });
      expect(refusal).toEqual({
        status: 503,
        retryAfter: '1',
        body: JSON.stringify({ error: 'too many variable reads at once (2 running, 6 waiting); try again shortly' }),
      });
    } finally {
      agent.destroy();
      await router.close();
      server.close();
    }
  });
});
