/**
 * The renderer's time slicing and cancellation: it yields to the event loop while it writes a large
 * registry, stops at its next slice once the scrape is abandoned, and the router abandons a scrape
 * that timed out instead of letting it render for nobody.
 */
import express from 'express';
import { Gauge, Registry } from 'prom-client';
import { createMetricsRouter } from '../../../lib/metrics';
import { renderExposition } from '../../../lib/metrics/exposition';
import { listen, open, request } from '../../helpers/http';

function largeRegistry(series: number): Registry {
  const registry = new Registry();
  const gauge = new Gauge({ name: 'objects', help: 'One series per object', labelNames: ['namespace', 'name'], registers: [registry] });
  for (let i = 0; i < series; i += 1) gauge.set({ namespace: `ns-${i % 50}`, name: `object-${i}` }, i / 7);
  return registry;
}

/** How many times the event loop turned while `work` ran. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let running = true;
  const turn = () => {
    turns += 1;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}

describe('time slices', () => {
  it('lets the event loop turn while it writes 50 000 series, and the output is whole', async () => {
    const registry = largeRegistry(50_000);
    const { turns, result } = await turnsDuring(() => renderExposition(registry, { format: 'text', compress: false }));
    expect(turns).toBeGreaterThan(1);
    expect(Buffer.concat(result.body.chunks).toString('utf8')).toBe(await registry.metrics());
  });

  it('stops at its next slice once aborted, rejecting with the reason', async () => {
    const registry = largeRegistry(50_000);
    const controller = new AbortController();
    const reason = new Error('scrape abandoned');
    setImmediate(() => controller.abort(reason));
    await expect(renderExposition(registry, { format: 'text', compress: false, signal: controller.signal })).rejects.toBe(reason);
  });

  it('does not start when already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('too late'));
    await expect(renderExposition(largeRegistry(10), { format: 'openmetrics', compress: true, signal: controller.signal })).rejects.toThrow(
      'too late',
    );
  });
});

describe('a scrape that timed out', () => {
  it('is not rendered once the late collect() settles', async () => {
    const registry = new Registry();
    let release: () => void = () => undefined;
    new Gauge({
      name: 'slow',
      help: 'collect() that settles only when released',
      registers: [registry],
      collect: () => new Promise<void>((resolve) => (release = resolve)),
    });
    let written = 0;
    registry.registerMetric({
      name: 'watched',
      get: async () => ({
        name: 'watched',
        help: 'Counts how often the renderer reads its values',
        type: 'gauge',
        get values() {
          written += 1;
          return [];
        },
      }),
    } as unknown as Gauge);
    const app = express();
    app.use(createMetricsRouter(registry, { scrapeTimeoutMs: 100 }));
    const server = await listen(app);
    try {
      const res = await request(`${server.origin}/metrics`);
      expect(res.status).toBe(503);
      release();
      for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
      expect(written).toBe(0);
    } finally {
      await server.close();
    }
  });
});

describe('sending', () => {
  it('sends a large body whole, and survives a scraper that leaves halfway', async () => {
    const registry = largeRegistry(50_000);
    const app = express();
    app.use(createMetricsRouter(registry, { compression: false }));
    const server = await listen(app);
    try {
      const whole = await request(`${server.origin}/metrics`, { timeoutMs: 30_000 });
      expect(whole.headers['content-length']).toBe(String(whole.body.length));
      expect(whole.text).toBe(await registry.metrics());
      const leaving = await open(`${server.origin}/metrics`, { timeoutMs: 30_000 });
      expect(leaving.statusCode).toBe(200);
      leaving.destroy();
      const next = await request(`${server.origin}/metrics`, { timeoutMs: 30_000 });
      expect(next.status).toBe(200);
      expect(next.body.length).toBe(whole.body.length);
    } finally {
      await server.close();
    }
  });
});

describe('a storage the host replaced in collect()', () => {
  it('leaves that family out and reports it, and serves every other family, in every format', async () => {
    // A fresh registry per format: once replaced, the storage no longer looks like the client's and
    // the next scrape reads the metric through its own get(), as the client would.
    const build = (): Registry => {
      const registry = new Registry();
      new Gauge({ name: 'before', help: 'b', registers: [registry] }).set(1);
      new Gauge({
        name: 'replaced',
        help: 'r',
        registers: [registry],
        collect(this: Gauge) {
          // The client's own series storage, swapped for something else (prom-client 15: hashMap; @prometheus-io/client: store).
          const self = this as unknown as Record<string, unknown>;
          if ('hashMap' in self) self['hashMap'] = 42;
          else self['store'] = new Map([['', { labels: {}, value: 42 }]]);
        },
      });
      new Gauge({ name: 'after', help: 'a', registers: [registry] }).set(2);
      return registry;
    };
    for (const format of ['text', 'openmetrics', 'protobuf'] as const) {
      const { body, failures } = await renderExposition(build(), { format, compress: false });
      const text = Buffer.concat(body.chunks as Buffer[]).toString('latin1');
      expect(failures.map((f) => [f.family, (f.error as Error).message])).toEqual([
        ['replaced', 'the storage of metric "replaced" changed shape during the scrape'],
      ]);
      expect(text).toContain('before');
      expect(text).toContain('after');
      expect(text).not.toContain('replaced');
      if (format === 'text')
        expect(text).toBe('# HELP before b\n# TYPE before gauge\nbefore 1\n\n# HELP after a\n# TYPE after gauge\nafter 2\n');
    }
  });
});
