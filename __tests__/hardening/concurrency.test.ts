import http from 'node:http';
import express from 'express';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, request } from '../helpers/http';

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
    const router = createIntrospectionRouter(state, { pprof: false, limits: { maxConcurrentReads: 2, maxQueuedReads: 6 } });
    const app = express();
    app.use(router);
    const served = await listen(app);
    const agent = new http.Agent({ keepAlive: false, maxSockets: 100 });
    // Queued dumps wait for the ones before them: more than a single request's bound.
    const dump = () => request(`${served.origin}/debug/vars/config`, { agent, timeoutMs: 30_000 });
    try {
      const dumps = Array.from({ length: 40 }, dump);
      await new Promise((r) => setTimeout(r, 20));
      const probe = await request(`${served.origin}/livez`, { agent });
      const results = await Promise.all(dumps);
      const servedDumps = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 503);
      expect(servedDumps.length + refused.length).toBe(40);
      expect(servedDumps.length).toBeGreaterThanOrEqual(8); // 2 running + 6 queued at the peak, at least
      expect(refused.length).toBeGreaterThan(0);
      expect(new Set(servedDumps.map((r) => r.body.length)).size).toBe(1); // every served dump is complete
      expect(probe.status).toBe(200);
      // Fill the limiter, then ask once more.
      const holders = Array.from({ length: 8 }, dump);
      await new Promise((r) => setTimeout(r, 10));
      const refusal = await request(`${served.origin}/debug/vars/config`, { agent });
      await Promise.all(holders);
      expect({ status: refusal.status, retryAfter: refusal.headers['retry-after'], body: refusal.text }).toEqual({
        status: 503,
        retryAfter: '1',
        body: JSON.stringify({ error: 'too many variable reads at once (2 running, 6 waiting); try again shortly' }),
      });
    } finally {
      agent.destroy();
      await router.close();
      await served.close();
    }
  });
});
