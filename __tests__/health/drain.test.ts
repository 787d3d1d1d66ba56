import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { drain } from '../../lib/health';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';

function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

describe('drain', () => {
  it('fails readiness at once, keeps serving for the delay, then closes routers and servers, keep-alive clients included', async () => {
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    const router = createIntrospectionRouter(state, { pprof: false });
    let routerClosed = false;
    const closeRouter = router.close.bind(router);
    const app = express();
    app.use(router);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    // A keep-alive client whose idle connection would hold server.close() open forever.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(port, '/readyz', agent)).status).toBe(200);

    const startedAt = performance.now();
    const drained = drain(state, {
      delayMs: 300,
      reason: 'SIGTERM: draining',
      close: [
        {
          close: async () => {
            await closeRouter();
            routerClosed = true;
          },
        },
      ],
      servers: [server],
    });
    expect(drain(state)).toBe(drained);
    const ready = await get(port, '/readyz?verbose', agent);
    expect(ready.status).toBe(503);
    expect(ready.body).toContain('[-]shutdown failed: SIGTERM: draining');
    expect((await get(port, '/livez', agent)).status).toBe(200);
    expect((await get(port, '/debug/vars/config', agent)).status).toBe(200);
    expect(routerClosed).toBe(false);

    await drained;
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(290);
    expect(routerClosed).toBe(true);
    expect(server.listening).toBe(false);
    await expect(get(port, '/livez')).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  });

  it('cuts connections of requests still running after closeTimeoutMs', async () => {
    const state = createIntrospectionState();
    const app = express();
    app.get('/slow', () => undefined); // never answers
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    const pending = get(port, '/slow').catch((err: Error) => err);
    await new Promise((r) => setTimeout(r, 50));
    const startedAt = performance.now();
    await drain(state, { delayMs: 0, closeTimeoutMs: 200, servers: [server] });
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(String(await pending)).toMatch(/socket hang up|ECONNRESET/);
  });

  it('rejects wrong options before changing anything', () => {
    const state = createIntrospectionState();
    expect(() => drain(state, { delay: 5 } as never)).toThrow('drain: unknown option "delay"');
    expect(() => drain(state, { delayMs: -1 })).toThrow('drain: delayMs must be a non-negative integer');
    expect(() => drain(state, { servers: [{}] as never })).toThrow('drain: servers must be node:http or node:https servers');
    expect(state.shutdownReason()).toBeUndefined();
  });
});
