/**
 * Scrapes nobody waits for: a scraper that leaves stops its scrape (no slice is rendered for it
 * afterwards, whatever it was waiting for), and a scrape given up on a collect() that never settles
 * leaves nothing of itself attached to the host's promise.
 */
import http from 'node:http';
import net from 'node:net';
import { Gauge, Histogram, Registry } from 'prom-client';
import { createMetricsRouter } from '../../lib/metrics';
import { ChunkSink } from '../../lib/metrics/exposition/sink';
import { closingApp, countCallsPerTest, leaveWhen, quietFor } from '../helpers/client-gone';
import { eventually } from '../helpers/eventually';
import { collector } from '../helpers/gc';
import { closeAllListening, listen, request } from '../helpers/http';

afterEach(closeAllListening);

/** Pieces the renderer has written, across every scrape: work done. */
const pieces = countCallsPerTest(ChunkSink.prototype, 'put');
const written = (): number => pieces.count();

/** A registry that takes many slices to render: `series` gauge series and a histogram per 10 of them. */
function largeRegistry(series: number): Registry {
  const registry = new Registry();
  const gauge = new Gauge({ name: 'objects', help: 'one per object', labelNames: ['namespace', 'name'], registers: [registry] });
  for (let i = 0; i < series; i++) gauge.set({ namespace: `team-${i % 40}`, name: `object-${i}` }, i);
  const histogram = new Histogram({ name: 'sync_seconds', help: 'sync', labelNames: ['name'], registers: [registry] });
  for (let i = 0; i < series / 10; i++) histogram.observe({ name: `object-${i}` }, (i % 100) / 100);
  return registry;
}

describe('a scraper that leaves stops its scrape', () => {
  it.each([
    ['text', { Accept: 'text/plain;version=0.0.4', 'Accept-Encoding': 'identity' }],
    ['OpenMetrics, gzip (as Prometheus asks)', { Accept: 'application/openmetrics-text;version=1.0.0', 'Accept-Encoding': 'gzip' }],
  ])('in the middle of rendering, %s: no piece is written after the close', async (_label, headers) => {
    const onError = jest.fn();
    const served = closingApp(createMetricsRouter(largeRegistry(60_000), { onError }));
    const { origin } = await listen(served.app);
    await leaveWhen(`${origin}/metrics`, () => written() > 0, served, headers);
    const atClose = written();
    await quietFor(150);
    expect(written()).toBe(atClose);
    // Rendering stopped early: a whole scrape writes hundreds of thousands of pieces.
    expect(atClose).toBeLessThan(200_000);
    expect(onError).not.toHaveBeenCalled();
  });

  it('while a collect() is pending: once it settles, nothing is rendered for the scraper that left', async () => {
    const registry = largeRegistry(1000);
    let settle!: () => void;
    let collects = 0;
    new Gauge({
      name: 'slow',
      help: 'collect() that waits for the host',
      registers: [registry],
      collect: () => {
        collects += 1;
        return new Promise<void>((resolve) => (settle = resolve));
      },
    });
    const onError = jest.fn();
    const served = closingApp(createMetricsRouter(registry, { onError, scrapeTimeoutMs: 60_000 }));
    const { origin } = await listen(served.app);
    await leaveWhen(`${origin}/metrics`, () => collects > 0, served);
    settle();
    await quietFor(100);
    expect(written()).toBe(0);
    expect(onError).not.toHaveBeenCalled();
  });

  it('before the router runs (the host awaited something first): no collect() and no rendering at all', async () => {
    const registry = largeRegistry(1000);
    const collect = jest.fn();
    new Gauge({ name: 'counted', help: 'counts its collect() calls', registers: [registry], collect });
    const router = createMetricsRouter(registry);
    const served = closingApp(router, 80);
    const { origin } = await listen(served.app);
    await leaveWhen(`${origin}/metrics`, () => served.arrived() > 0, served);
    await quietFor(150);
    expect(collect).not.toHaveBeenCalled();
    expect(written()).toBe(0);

    // The next scraper, who stays, is answered in full.
    const res = await request(`${origin}/metrics`, { headers: { 'Accept-Encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['hang up (destroy)', (socket: net.Socket) => socket.destroy()],
    ['close their side (end)', (socket: net.Socket) => socket.end()],
  ])('twenty scrapers that ask and at once %s: nothing is rendered for them', async (_label, leave) => {
    const served = closingApp(createMetricsRouter(largeRegistry(20_000)));
    const { port } = await listen(served.app);
    // A first scrape, answered: the router now knows its scrapes take many slices.
    expect((await request(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    pieces.reset();
    const before = served.arrived();
    await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise((resolve) => {
            const socket = net.connect(port, '127.0.0.1');
            socket.on('error', () => undefined);
            socket.on('close', resolve);
            socket.write('GET /metrics HTTP/1.1\r\nHost: test\r\nAccept: text/plain;version=0.0.4\r\n\r\n', () => leave(socket));
          }),
      ),
    );
    // Node may drop a request whose connection is gone before it is parsed; every one that reached
    // the router is closed, and none rendered a piece.
    await eventually(() => served.arrived() > before && served.closed() === served.arrived(), {
      what: 'every scrape that arrived to be closed',
    });
    await quietFor(150);
    expect(served.closed()).toBe(served.arrived());
    expect(written()).toBe(0);
  });

  it('ten scrapers leaving at once, mid-render: every scrape stops', async () => {
    const served = closingApp(createMetricsRouter(largeRegistry(30_000)));
    const { origin } = await listen(served.app);
    const agent = new http.Agent({ keepAlive: false, maxSockets: 20 });
    const hangUp = new AbortController();
    const scrapes = Array.from({ length: 10 }, () =>
      request(`${origin}/metrics`, { agent, signal: hangUp.signal }).then(
        () => 'answered',
        () => 'left',
      ),
    );
    await eventually(() => written() > 0, { intervalMs: 1, what: 'rendering to start' });
    hangUp.abort();
    expect(await Promise.all(scrapes)).toEqual(Array.from({ length: 10 }, () => 'left'));
    await eventually(() => served.closed() === 10, { intervalMs: 1, what: 'the server to see all ten leave' });
    const atClose = written();
    await quietFor(150);
    expect(written()).toBe(atClose);
    agent.destroy();
  });
});

describe('scrapes timed out on a collect() that never settles', () => {
  const gc = collector();
  const liveHeap = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };

  it.each([
    ['one promise shared by every scrape (a refresh in flight)', (one: Promise<void>) => () => one],
    ['a fresh promise per call (called once: it is still pending)', () => () => new Promise<void>(() => undefined)],
    [
      'an async collect() awaiting one promise shared by every call (called once: it is still pending)',
      (one: Promise<void>) => async () => {
        await one;
      },
    ],
  ])('leave nothing of themselves attached to it, 1 200 scrapes: %s', async (_label, makeCollect) => {
    const registry = largeRegistry(200);
    new Gauge({
      name: 'hung',
      help: 'collect() that never settles',
      registers: [registry],
      collect: makeCollect(new Promise<void>(() => undefined)),
    });
    const { origin } = await listen(closingApp(createMetricsRouter(registry, { scrapeTimeoutMs: 1 })).app);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
    const scrapeBatch = async (count: number): Promise<void> => {
      for (let done = 0; done < count; done += 20) {
        const statuses = await Promise.all(
          Array.from({ length: 20 }, () =>
            request(`${origin}/metrics`, { agent, headers: { 'Accept-Encoding': 'gzip' } }).then((r) => r.status),
          ),
        );
        expect(new Set(statuses)).toEqual(new Set([503]));
      }
    };
    await scrapeBatch(100);
    const before = liveHeap();
    await scrapeBatch(1200);
    const perScrape = (liveHeap() - before) / 1200;
    agent.destroy();
    // Before: about 9 KB per scrape (its whole rendering, held through the host's promise), for
    // as long as the promise lived; then 1.5 KB for the async collect() (a new call per scrape, each
    // pending on the shared promise). Now: a collect() still pending is not called again.
    expect(perScrape).toBeLessThan(1500);
  });
});
