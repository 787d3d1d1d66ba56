import { Counter, Gauge, Registry } from 'prom-client';
import { createMetricsRouter } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { request } from '../helpers/http';
import { startServer, type HardeningServer } from './helpers';
import { collector } from '../helpers/gc';

/*
 * Faults in host code (health checks, variable providers, metric collectors, unserialisable
 * values) fail the one request that met them, with a clear message and in bounded time; every
 * other request keeps being served and the process neither crashes nor logs an unhandled error.
 */

const MEGABYTE = 1024 * 1024;
const never = (): Promise<never> => new Promise<never>(() => undefined);

describe('faults in host code', () => {
  let state: IntrospectionState;
  let server: HardeningServer;
  const registry = new Registry();
  const scrapeErrors: unknown[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
    state = createIntrospectionState({ providerTimeoutMs: 300 });
    state.setConfig({ templates: { 'haproxy.cfg': 'global\n' }, watched_resources: [] }, 'v1');
    server = await startServer(state, {
      router: { healthCheckTimeoutMs: 300 },
      extra: (app) => app.use(createMetricsRouter(registry, { onError: (err) => scrapeErrors.push(err) })),
    });
  });
  afterAll(async () => {
    await server.close();
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  });
  afterEach(() => expect(unhandled).toEqual([]));

  /** Requests that must keep answering 200 while a fault is in progress elsewhere. */
  async function othersStillServed(): Promise<void> {
    const results = await Promise.all(
      ['/debug/vars/config', '/livez/ping', '/debug/vars', '/debug/pprof/goroutine?debug=1'].map((p) => request(`${server.base}${p}`)),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
  }

  describe.each([
    [
      'throws',
      (): boolean => {
        throw new Error('etcd unreachable');
      },
      'etcd unreachable',
    ],
    ['rejects', (): Promise<boolean> => Promise.reject(new Error('informer cache not synced')), 'informer cache not synced'],
    ['rejects-with-a-string', (): Promise<boolean> => Promise.reject('plain reason'), 'plain reason'],
    ['hangs', never, 'timed out after 300 ms'],
    ['reports-false', (): boolean => false, 'check reported unhealthy'],
  ] as const)('a health check that %s', (name, check, message) => {
    it('fails the probes that include it, with its reason, and nothing else', async () => {
      const remove = state.addHealthCheck(name, check, { livez: true, readyz: true });
      try {
        const [healthz, readyz, single] = await Promise.all([
          request(`${server.base}/healthz`),
          request(`${server.base}/readyz?verbose`),
          request(`${server.base}/livez/${name}`),
          othersStillServed(),
        ]);
        expect(healthz.status).toBe(503);
        expect(healthz.json()).toEqual({
          status: 'failed',
          error: `health check failed: ${name}`,
          checks: {
            ping: { status: 'ok' },
            shutdown: { status: 'ok' },
            'config-loaded': { status: 'ok' },
            [name]: { status: 'failed', error: message },
          },
        });
        expect(readyz.status).toBe(503);
        expect(readyz.text).toContain(`[-]${name} failed: ${message}\n`);
        expect(readyz.text).toContain('[+]ping ok\n');
        expect(single.status).toBe(503);
        // Excluding the broken check is the documented escape hatch, and works.
        expect((await request(`${server.base}/readyz?exclude=${name}`)).status).toBe(200);
      } finally {
        remove();
      }
      expect((await request(`${server.base}/healthz`)).status).toBe(200);
    });
  });

  describe.each([
    [
      'throws',
      (): unknown => {
        throw new Error('cache not synced');
      },
      'cache not synced',
    ],
    ['rejects', (): Promise<unknown> => Promise.reject(new Error('upstream answered 502')), 'upstream answered 502'],
    ['hangs', never, 'variable "hangs" did not answer within 300 ms'],
  ] as const)('a variable provider that %s', (name, provider, message) => {
    it('fails reads of that variable only, and the state dump shows the error in its slot', async () => {
      const varName = `provider-${name}`;
      state.publishVar(varName, provider);
      const expected = message.replace('"hangs"', `"${varName}"`);
      const [direct, selected, dump] = await Promise.all([
        request(`${server.base}/debug/vars/${varName}`),
        request(`${server.base}/debug/vars/${varName}?field={.x}`),
        request(`${server.base}/debug/vars/state`),
        othersStillServed(),
      ]);
      expect(direct.status).toBe(500);
      expect(direct.json()).toEqual({ error: expected });
      expect(selected.status).toBe(500);
      expect(dump.status).toBe(200);
      const body = dump.json();
      expect(body[varName]).toEqual({ error: expected });
      expect(body['config']).toMatchObject({ version: 'v1' });
    });
  });

  it('leaves out of a scrape only the family whose collect() throws or rejects, and the next scrape reads it again', async () => {
    // Collectors run in registration order, so the gauge's count tells which scrape this is.
    let scrape = 0;
    new Gauge({
      name: 'flaky_source',
      help: 'Reads a source that fails on the first scrape',
      registers: [registry],
      collect() {
        scrape++;
        if (scrape === 1) throw new Error('source unreachable');
        this.set(7);
      },
    });
    new Counter({
      name: 'flaky_async_total',
      help: 'Async collect that rejects on the second scrape',
      registers: [registry],
      async collect() {
        if (scrape === 2) throw new Error('async source timed out');
      },
    });
    const first = await request(`${server.base}/metrics`);
    expect(first.status).toBe(200);
    expect(first.text).not.toContain('flaky_source');
    expect(first.text).toContain('flaky_async_total 0');
    const second = await request(`${server.base}/metrics`);
    expect(second.status).toBe(200);
    expect(second.text).toContain('flaky_source 7');
    expect(second.text).not.toContain('flaky_async_total');
    const third = await request(`${server.base}/metrics`);
    expect(third.status).toBe(200);
    expect(third.text).toContain('flaky_source 7');
    expect(third.text).toContain('flaky_async_total 0');
    expect(scrapeErrors.map((e) => (e as Error).message)).toEqual([
      'collecting metric "flaky_source" failed: source unreachable',
      'collecting metric "flaky_async_total" failed: async source timed out',
    ]);
    await othersStillServed();
  });

  it('refuses values that getters generate without end, in bounded time and memory, and keeps serving', async () => {
    const endless = (): object => ({
      get next(): object {
        return endless();
      },
    });
    // Two getters per level: 2^40 objects of finite depth, each read building new ones.
    const doubling = (depth: number): object =>
      depth === 0
        ? { leaf: 'x'.repeat(64) }
        : {
            get a(): object {
              return doubling(depth - 1);
            },
            get b(): object {
              return doubling(depth - 1);
            },
          };
    // Variables cannot be withdrawn; they turn plain when this test ends so later dumps see their own faults.
    let generating = true;
    state.publishVar('endless', () => (generating ? { plain: 'fine', lazy: endless() } : null));
    state.publishVar('exploding', () => (generating ? { lazy: doubling(40) } : null));
    // Garbage from earlier tests and from the refused answers would blur the heap comparison.
    const gc = collector();
    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    try {
      for (const path of ['/debug/vars/endless', '/debug/vars/endless?size=1', '/debug/vars/endless?field={.lazy.next}']) {
        const res = await request(`${server.base}${path}`);
        expect(res.status).toBe(500);
        expect(res.json<{ error: string }>().error).toMatch(
          /^\$(\.lazy)?[.next…]*: values produced by getters, toJSON\(\) or Proxies nest deeper than 1000 levels/,
        );
      }
      expect((await request(`${server.base}/debug/vars/endless?field={.plain}`)).json()).toBe('fine');
      // Text output (Go's JSON) is written by the same serializer: the same bounds, and messages, hold there.
      const generated = (): object => ({ toJSON: () => ({ n: generated() }) });
      state.publishVar('endless-tojson', () => (generating ? { t: generated() } : null));
      const viaToJson = await request(`${server.base}/debug/vars/endless-tojson?field=${encodeURIComponent('{.t}')}&output=text`);
      expect(viaToJson.status).toBe(500);
      expect(viaToJson.json<{ error: string }>().error).toMatch(
        /^\$[.n…]*: values produced by getters, toJSON\(\) or Proxies nest deeper than 1000 levels/,
      );
      const viaGetters = await request(`${server.base}/debug/vars/endless?field=${encodeURIComponent('{.lazy}')}&output=text`, {
        timeoutMs: 30_000,
      });
      expect(viaGetters.status).toBe(500);
      expect(viaGetters.json<{ error: string }>().error).toMatch(
        /^\$[.next…]*: values produced by getters, toJSON\(\) or Proxies nest deeper than 1000 levels/,
      );
      // 64 MiB of generated JSON, then the stream is cut: never a complete-looking 200, never endless.
      await expect(request(`${server.base}/debug/vars/exploding`, { timeoutMs: 60_000 })).rejects.toThrow(
        /connection cut mid-response|aborted|socket hang up|ECONNRESET/,
      );
      const size = await request(`${server.base}/debug/vars/exploding?size=1`, { timeoutMs: 60_000 });
      expect(size.status).toBe(500);
      expect(size.json<{ error: string }>().error).toContain('produced more than 67108864 characters of JSON');
      expect((await request(`${server.base}/healthz`)).status).toBe(200);
      // The walk never held more than its bounded stack: what it generated was garbage at once.
      gc();
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * MEGABYTE);
    } finally {
      generating = false;
    }
  });

  it('answers an unserialisable small value with a clear 500, and cuts a large one off where the problem is found', async () => {
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle['self'] = cycle;
    state.publishVar('cycle', () => ({ nested: { cycle } }));
    state.publishVar('bigint', () => ({ generation: 12345678901234567890n }));
    state.publishVar('throwing-getter', () => ({
      get status(): string {
        throw new Error('lazy field failed');
      },
    }));
    // Over a megabyte of good JSON before the cycle: the problem is found after the headers went out.
    const late: Record<string, unknown> = { padding: 'x'.repeat(MEGABYTE), after: {} };
    (late['after'] as Record<string, unknown>)['back'] = late;
    state.publishVar('late-cycle', () => late);
    state.publishVar('late-bigint', () => ({ padding: 'y'.repeat(MEGABYTE), n: 1n }));

    const cycleRes = await request(`${server.base}/debug/vars/cycle`);
    expect(cycleRes.status).toBe(500);
    expect(cycleRes.json<{ error: string }>().error).toMatch(/^\$\.nested\.cycle\.self: cycle/);
    const bigintRes = await request(`${server.base}/debug/vars/bigint`);
    expect(bigintRes.status).toBe(500);
    expect(bigintRes.json<{ error: string }>().error).toMatch(/^\$\.generation: BigInt is not JSON/);
    const getterRes = await request(`${server.base}/debug/vars/throwing-getter`);
    expect(getterRes.status).toBe(500);
    expect(getterRes.json<{ error: string }>().error).toContain('lazy field failed');
    // Selecting around the problem works; selecting into it is the same clear 500.
    expect((await request(`${server.base}/debug/vars/cycle?field={.nested.cycle.name}`)).json()).toBe('loop');
    expect((await request(`${server.base}/debug/vars/cycle?field={.nested}`)).status).toBe(500);

    for (const name of ['late-cycle', 'late-bigint']) {
      // A truncated body must never look like a complete 200: the connection is cut instead.
      await expect(request(`${server.base}/debug/vars/${name}`)).rejects.toThrow(
        /connection cut mid-response|aborted|socket hang up|ECONNRESET/,
      );
    }
    // The whole state holds those variables too; the small cycle comes first and is found before
    // anything is sent, so the dump is a clean 500 naming where it is.
    const dump = await request(`${server.base}/debug/vars/state`);
    expect(dump.status).toBe(500);
    expect(dump.json<{ error: string }>().error).toMatch(/^\$\.cycle\.nested\.cycle\.self: cycle/);
    await othersStillServed();
  });
});
