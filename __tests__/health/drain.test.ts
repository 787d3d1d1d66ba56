import http from 'node:http';
import type { Duplex } from 'node:stream';
import express from 'express';
import { drain } from '../../lib/health';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { eventually } from '../helpers/eventually';
import { closeAllListening, listen, request } from '../helpers/http';

afterAll(closeAllListening);

describe('drain', () => {
  it('fails readiness at once, keeps serving for the delay, then closes routers and servers, keep-alive clients included', async () => {
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    const router = createIntrospectionRouter(state, { pprof: false });
    let routerClosed = false;
    const closeRouter = router.close.bind(router);
    const app = express();
    app.use(router);
    const { server, origin } = await listen(app);
    // A keep-alive client whose idle connection would hold server.close() open forever.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await request(`${origin}/readyz`, { agent })).status).toBe(200);

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
    const ready = await request(`${origin}/readyz?verbose`, { agent });
    expect(ready.status).toBe(503);
    expect(ready.text).toContain('[-]shutdown failed: SIGTERM: draining');
    expect((await request(`${origin}/livez`, { agent })).status).toBe(200);
    expect((await request(`${origin}/debug/vars/config`, { agent })).status).toBe(200);
    expect(routerClosed).toBe(false);

    await drained;
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(290);
    expect(routerClosed).toBe(true);
    expect(server.listening).toBe(false);
    await expect(request(`${origin}/livez`)).rejects.toThrow(/ECONNREFUSED/);
    agent.destroy();
  });

  it('cuts connections of requests still running after closeTimeoutMs', async () => {
    const state = createIntrospectionState();
    const app = express();
    let arrived = false;
    app.get('/slow', () => void (arrived = true)); // never answers
    const { server, origin } = await listen(app);
    const pending = request(`${origin}/slow`).catch((err: Error) => err);
    await eventually(() => arrived, { what: 'the slow request to reach the server' });
    const startedAt = performance.now();
    await drain(state, { delayMs: 0, closeTimeoutMs: 200, servers: [server] });
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expect(String(await pending)).toMatch(/socket hang up|ECONNRESET/);
  });

  it('ends keep-alive connections that were busy at close, even when their client never lets them idle', async () => {
    // A Prometheus scraping every second reuses its connection: Node alone would serve it until
    // closeTimeoutMs cut it, so a SIGTERM'd pod would outlive its grace period.
    const state = createIntrospectionState();
    const app = express();
    let release: (() => void) | undefined;
    app.get('/slow', (_req, res) => void (release = () => res.send('slow')));
    app.get('/fast', (_req, res) => void res.send('fast'));
    const { server, origin } = await listen(app);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const slow = request(`${origin}/slow`, { agent });
    await eventually(() => release !== undefined, { what: 'the slow request to reach the server' });

    const drained = drain(state, { delayMs: 0, closeTimeoutMs: 600_000, servers: [server] });
    let closed = false;
    void drained.then(() => (closed = true));
    await eventually(() => !server.listening, { what: 'the server to stop listening' });
    release!();
    expect((await slow).headers.connection).toBe('keep-alive');
    // The client keeps reusing the connection; the server must end it anyway.
    const answers: (string | undefined)[] = [];
    const client = (async () => {
      while (!closed) {
        const answer = await request(`${origin}/fast`, { agent }).catch(() => undefined);
        if (answer === undefined) break;
        answers.push(answer.headers.connection);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    await eventually(() => closed, { timeoutMs: 20_000, what: 'the drain to finish long before closeTimeoutMs' });
    await client;
    agent.destroy();
    expect(answers.every((c) => c === 'close')).toBe(true);
    expect(server.listening).toBe(false);
  });

  it('rejects wrong options before changing anything', () => {
    const state = createIntrospectionState();
    expect(() => drain(state, { delay: 5 } as never)).toThrow('drain: unknown option "delay" (did you mean "delayMs"?)');
    expect(() => drain(state, { delayMs: -1 })).toThrow('drain: delayMs must be an integer from 0 to 2,147,483,647, got -1');
    expect(() => drain(state, { servers: [{}] as never })).toThrow(
      'drain: servers must be an array of node:http or node:https servers; entry 0 is an object',
    );
    expect(state.shutdownReason()).toBeUndefined();
  });

  describe('every step is bounded by its timeout', () => {
    const never = (): Promise<void> => new Promise<void>(() => undefined);
    const targets: Array<[string, () => Promise<void> | void]> = [
      ['a close() that never settles', never],
      ['a close() that settles long after the deadline', () => new Promise<void>((resolve) => setTimeout(resolve, 5000).unref())],
      [
        'a close() that throws',
        () => {
          throw new Error('broken');
        },
      ],
      ['a close() that rejects', () => Promise.reject(new Error('broken'))],
      ['a close() returning a thenable that never calls back', () => ({ then: () => undefined }) as unknown as Promise<void>],
    ];
    it.each(targets)('%s: the servers still close, and drain settles by the deadline', async (_what, close) => {
      const state = createIntrospectionState();
      const { server, origin } = await listen(express().get('/', (_req, res) => void res.send('ok')));
      let otherClosed = false;
      const startedAt = performance.now();
      await drain(state, {
        delayMs: 0,
        closeTimeoutMs: 300,
        close: [{ close }, { close: () => void (otherClosed = true) }],
        servers: [server],
      });
      const took = performance.now() - startedAt;
      expect(server.listening).toBe(false);
      expect(otherClosed).toBe(true);
      // The deadline is 300 ms; the generous bound only tells a bounded drain from one that waits.
      expect(took).toBeLessThan(2000);
      await expect(request(origin)).rejects.toThrow(/ECONNREFUSED/);
    });

    it('a server holding a socket it does not track (taken on upgrade) does not hold drain open', async () => {
      const state = createIntrospectionState();
      const { server, origin } = await listen((_req, res) => res.end('ok'));
      const held: Duplex[] = [];
      // Keeps the socket: closeAllConnections() does not know it, and close() waits for it.
      server.on('upgrade', (_req, socket: Duplex) => void held.push(socket));
      const client = http.request(`${origin}/`, { headers: { Connection: 'Upgrade', Upgrade: 'websocket' } });
      client.on('error', () => undefined);
      client.end();
      await eventually(() => held.length === 1, { what: 'the upgrade to reach the server' });
      const startedAt = performance.now();
      await drain(state, { delayMs: 0, closeTimeoutMs: 200, servers: [server] });
      expect(performance.now() - startedAt).toBeLessThan(2000);
      expect(server.listening).toBe(false);
      for (const socket of held) socket.destroy();
      client.destroy();
    });
  });

  describe('a second call checks its options too', () => {
    it.each([
      [{ delayMS: 10 }, 'drain: unknown option "delayMS" (did you mean "delayMs"?)'],
      [{ closeTimeoutMs: -5 }, 'drain: closeTimeoutMs must be an integer from 0 to 2,147,483,647, got -5'],
      [{ close: [null] }, 'drain: close must be an array of objects with a close() method; entry 0 is null'],
      ['soon', 'drain: options must be an object (or omitted), got "soon"'],
    ])('%j', async (options, message) => {
      const state = createIntrospectionState();
      const first = drain(state, { delayMs: 0 });
      expect(() => drain(state, options as never)).toThrow(message);
      expect(drain(state, { delayMs: 99 })).toBe(first);
      await first;
      expect(() => drain(state, options as never)).toThrow(message);
    });
  });
});
