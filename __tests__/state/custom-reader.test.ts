/**
 * The promise that a host may supply its own state: a small reader written here the way a host
 * would write one over its own caches (it shares no code with `createIntrospectionState`), served
 * by the introspection router and read by the controller metrics, over real sockets.
 */
import express from 'express';
import { Registry } from 'prom-client';
import { createIntrospectionRouter, type IntrospectionRouter, type IntrospectionRouterState } from '../../lib/introspection/router';
import { createControllerMetrics, createMetricsRouter } from '../../lib/metrics';
import {
  UnknownVariableError,
  type ControllerEvent,
  type EventPage,
  type EventQuery,
  type EventReadOptions,
  type EventStats,
  type ProgressRecord,
  type ReadinessGateStatus,
  type ReadVarOptions,
  type RegisteredHealthCheck,
  type VarReading,
} from '../../lib/state/types';
import { eventually } from '../helpers/eventually';
import { listen, request, type Listening } from '../helpers/http';
import { watch } from '../helpers/event-watch';

/** A host's own state: an ingress cache, a short event log, one gate and one check. */
class HostCaches implements IntrospectionRouterState {
  readonly startedAt = new Date();
  readonly ingresses = new Map<string, { host: string }>();
  synced = false;
  informerAlive = true;
  private readonly log: ControllerEvent[] = [];
  private nextSeq = 1;
  private published = 0;
  private readonly wakers = new Set<() => void>();
  private shutdown: string | undefined;
  private lastResync: number | undefined;
  private readonly checks: RegisteredHealthCheck[] = [{ name: 'informer', check: () => this.informerAlive, livez: true, readyz: true }];

  constructor(private readonly capacity: number) {}

  /** The host's own event publishing: the oldest event goes once the log is full. */
  record(type: string, summary = type): void {
    this.log.push({ seq: this.nextSeq++, timestamp: new Date().toISOString(), type, summary });
    if (this.log.length > this.capacity) this.log.shift();
    this.published++;
    // The contract: watches are woken after publishing, never inside it.
    setImmediate(() => this.wakers.forEach((wake) => wake()));
  }

  resynced(): void {
    this.lastResync = Date.now();
  }

  listVars(): string[] {
    return ['ingresses', 'sync', 'events'];
  }

  async readVar(name: string, options: ReadVarOptions = {}): Promise<VarReading> {
    switch (name) {
      case 'ingresses':
        return { ok: true, value: Object.fromEntries(this.ingresses) };
      case 'sync':
        return this.synced ? { ok: true, value: { synced: true } } : { ok: false, reason: 'unavailable', message: 'caches not synced yet' };
      case 'events':
        return { ok: true, value: this.readEvents(options.events ?? {}, options.limit ?? 100).events };
      default:
        throw new UnknownVariableError(name, this.listVars());
    }
  }

  readEvents(query: EventQuery, limit: number, options: EventReadOptions = {}): EventPage {
    const oldestSeq = this.log[0]?.seq ?? this.nextSeq;
    const since = query.since ?? 0;
    const matches = (e: ControllerEvent): boolean =>
      (query.type === undefined || (query.type.endsWith('.') ? e.type.startsWith(query.type) : e.type === query.type)) &&
      (query.correlationId === undefined || e.correlation_id === query.correlationId);
    const after = this.log.filter((e) => e.seq > since);
    if (options.from !== 'oldest') {
      const found = after.filter(matches);
      return { events: limit > 0 ? found.slice(-limit) : [], oldestSeq, nextSeq: this.nextSeq, scannedThrough: this.nextSeq - 1 };
    }
    // Oldest first, examining at most maxScan events and stopping at `limit` matches.
    const events: ControllerEvent[] = [];
    let scannedThrough = Math.max(since, oldestSeq - 1);
    for (const event of after.slice(0, options.maxScan ?? after.length)) {
      if (events.length >= limit) break;
      scannedThrough = event.seq;
      if (matches(event)) events.push(event);
    }
    return { events, oldestSeq, nextSeq: this.nextSeq, scannedThrough };
  }

  watchEvents(wake: () => void): () => void {
    const entry = (): void => wake();
    this.wakers.add(entry);
    return () => this.wakers.delete(entry);
  }

  eventStats(): EventStats {
    return { published: this.published, subscribers: 0, watchers: this.wakers.size };
  }

  healthChecks(): readonly RegisteredHealthCheck[] {
    return this.checks;
  }

  readinessGates(): readonly ReadinessGateStatus[] {
    return [
      { name: 'caches-synced', open: this.synced, reason: this.synced ? '' : 'informers not synced', since: this.startedAt.toISOString() },
    ];
  }

  shutdownReason(): string | undefined {
    return this.shutdown;
  }

  setShuttingDown(shuttingDown: boolean, reason = 'shutting down'): void {
    this.shutdown = shuttingDown ? reason : undefined;
  }

  progress(): readonly ProgressRecord[] {
    if (this.lastResync === undefined) return [];
    return [{ activity: 'resync', at: new Date(this.lastResync).toISOString(), ageMs: Date.now() - this.lastResync, count: 1 }];
  }

  resourceCounts(): Readonly<Record<string, number>> {
    return { ingresses: this.ingresses.size };
  }
}

let host: HostCaches;
let router: IntrospectionRouter;
let server: Listening;

beforeAll(async () => {
  host = new HostCaches(3);
  router = createIntrospectionRouter(host, { pprof: false });
  const registry = new Registry();
  createControllerMetrics(registry, host, { healthMetrics: true });
  const app = express();
  app.use(router);
  app.use(createMetricsRouter(registry));
  server = await listen(app);
});

afterAll(async () => {
  await router.close();
  await server.close();
});

async function get(path: string): Promise<{ status: number; text: string }> {
  const res = await request(`${server.origin}${path}`);
  return { status: res.status, text: res.text };
}

describe('a host-written IntrospectionStateReader', () => {
  it('serves its variables: the listing, one variable, a field, 503 while unavailable, 404 for an unknown name', async () => {
    host.ingresses.set('default/web', { host: 'web.example.com' });
    expect(JSON.parse((await get('/debug/vars')).text)).toEqual({ vars: ['ingresses', 'sync', 'events'] });
    expect(JSON.parse((await get('/debug/vars/ingresses')).text)).toEqual({ 'default/web': { host: 'web.example.com' } });
    expect(await get(`/debug/vars/ingresses?field=${encodeURIComponent("{['default/web'].host}")}&output=text`)).toEqual({
      status: 200,
      text: 'web.example.com',
    });
    expect(await get('/debug/vars/sync')).toEqual({ status: 503, text: '{"error":"caches not synced yet"}' });
    const unknown = await get('/debug/vars/config');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.text)).toEqual({ error: 'unknown variable "config"; known variables: ingresses, sync, events' });
  });

  it('serves its events, filtered, and a watch that its own publishing wakes, with a gap for what its log dropped', async () => {
    host.record('ingress.added', 'default/web');
    host.record('sync.done');
    const events = await get('/debug/vars/events?type=ingress.&limit=5');
    expect(JSON.parse(events.text)).toEqual([expect.objectContaining({ seq: 1, type: 'ingress.added', summary: 'default/web' })]);

    const w = await watch(server.port, '/debug/vars/events?watch=1&since=0');
    expect(w.status).toBe(200);
    await w.until('the replay', (text) => text.includes('"seq":2'));
    await eventually(async () => (await get('/metrics')).text.includes('\nctl_event_watchers 1\n'), { what: 'the watch counted' });
    // Five more in a log of three: the watch, not reading meanwhile, is told what it missed.
    for (let i = 0; i < 5; i++) host.record('ingress.updated', `default/web #${i}`);
    await w.until('the newest event', (text) => text.includes('"seq":7'));
    expect(w.lines().map((line) => (line as { seq?: number }).seq ?? line)).toEqual([
      1,
      2,
      { gap: { missed: 2, resume_from: 5 } },
      5,
      6,
      7,
    ]);
    w.destroy();
    await w.ended;
  });

  it('answers the probes from its own checks and gate', async () => {
    host.synced = false;
    expect((await get('/livez')).status).toBe(200);
    expect(await get('/readyz?verbose')).toEqual({
      status: 503,
      text: '[+]ping ok\n[+]shutdown ok\n[-]caches-synced failed: not open: informers not synced\n[+]informer ok\nreadyz check failed\n',
    });
    host.synced = true;
    expect(await get('/readyz')).toEqual({ status: 200, text: 'ok' });
    expect(JSON.parse((await get('/debug/vars/sync')).text)).toEqual({ synced: true });
    host.informerAlive = false;
    expect((await get('/livez/informer')).status).toBe(503);
    expect(JSON.parse((await get('/healthz')).text)).toMatchObject({ status: 'failed' });
    host.informerAlive = true;
    expect((await get('/healthz')).status).toBe(200);
  });

  it('feeds the controller metrics and the health metrics at scrape time', async () => {
    host.ingresses.set('default/api', { host: 'api.example.com' });
    host.resynced();
    const text = (await get('/metrics')).text;
    expect(text).toContain('\nctl_resource_count{type="ingresses"} 2\n');
    expect(text).toMatch(/\nctl_events_published_total \d+\n/);
    expect(text).toContain('\nctl_readiness_gate_open{gate="caches-synced"} 1\n');
    expect(text).toMatch(/\nctl_progress_last_timestamp_seconds\{activity="resync"\} \d+(\.\d+)?\n/);
  });

  it('is told by close() that the host is shutting down: readiness fails, liveness stays, watches end', async () => {
    const w = await watch(server.port, '/debug/vars/events?watch=1');
    await router.close();
    await w.ended;
    expect(host.shutdownReason()).toBe('shutting down');
    expect(await get('/readyz/shutdown')).toEqual({ status: 503, text: '[-]shutdown failed: shutting down\nreadyz check failed\n' });
    expect((await get('/livez')).status).toBe(200);
  });
});
