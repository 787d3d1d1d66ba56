import { createAccessGuard } from '../../lib/http/access-guard';
import net from 'node:net';
import { eventually } from '../helpers/eventually';
import { closeWatchServers, getJson, serve, watch } from '../helpers/event-watch';

afterAll(closeWatchServers);

describe('event queries', () => {
  it('filter by type, type prefix, correlation id and seq', async () => {
    const { state, port } = await serve();
    state.publishEvent('reconciliation.triggered', 'go', { correlationId: 'c1', details: { reason: 'ingress changed' } });
    state.publishEvent('deployment.started', undefined, { correlationId: 'c1' });
    state.publishEvent('deployment.failed', 'lb-pod-1: 503', { correlationId: 'c1', details: { endpoint: 'lb-pod-1' } });
    state.publishEvent('config.validated');
    const byPrefix = await getJson(port, '/debug/vars/events?type=deployment.');
    expect((byPrefix.body as Array<{ seq: number }>).map((e) => e.seq)).toEqual([2, 3]);
    const failed = await getJson(port, '/debug/vars/events?type=deployment.failed&correlation_id=c1');
    expect(failed.body).toEqual([
      {
        seq: 3,
        timestamp: expect.any(String),
        type: 'deployment.failed',
        summary: 'lb-pod-1: 503',
        correlation_id: 'c1',
        details: { endpoint: 'lb-pod-1' },
      },
    ]);
    expect(((await getJson(port, '/debug/vars/events?since=2')).body as Array<{ seq: number }>).map((e) => e.seq)).toEqual([3, 4]);
    expect((await getJson(port, '/debug/vars/events?since=1&limit=1')).body).toEqual([
      expect.objectContaining({ seq: 4, type: 'config.validated', summary: 'config.validated' }),
    ]);
    // Events without correlation id or details keep the spec's shape (plus their seq).
    expect(Object.keys((await getJson(port, '/debug/vars/events?field={[-1]}')).body as object)).toEqual([
      'seq',
      'timestamp',
      'type',
      'summary',
    ]);
  });

  it('answer 400 for event parameters elsewhere or malformed', async () => {
    const { port } = await serve();
    expect(await getJson(port, '/debug/vars/config?type=x')).toEqual({
      status: 400,
      body: { error: 'query parameter "type" applies only to /debug/vars/events' },
    });
    expect((await getJson(port, '/debug/vars/events?since=-1')).status).toBe(400);
    expect((await getJson(port, '/debug/vars/events?watch=yes')).body).toEqual({
      error: 'query parameter "watch" must be 1 or 0, got "yes"',
    });
    expect((await getJson(port, `/debug/vars/events?type=${'x'.repeat(300)}`)).status).toBe(400);
    expect((await getJson(port, '/debug/vars/events?watch=1&field={[0]}')).status).toBe(400);
  });
});

describe('event watch (?watch=1)', () => {
  it('streams matching events live as NDJSON, with heartbeats, and counts the watcher', async () => {
    const { state, port } = await serve({ watch: { heartbeatMs: 100 } });
    state.publishEvent('deployment.old'); // before the watch: not replayed without since
    const w = await watch(port, '/debug/vars/events?watch=1&type=deployment.');
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(w.headers['cache-control']).toBe('no-store');
    expect(state.eventStats().watchers).toBe(1);
    expect(state.eventStats().subscribers).toBe(0);
    state.publishEvent('reconciliation.triggered');
    state.publishEvent('deployment.started', 'to 2 pods', { correlationId: 'c9' });
    await w.until('the deployment event', (t) => t.includes('deployment.started'));
    await w.until('a heartbeat', (t) => t.includes('"heartbeat"'));
    const lines = w.lines();
    expect(lines.filter((l) => !(l as Record<string, unknown>)['heartbeat'])).toEqual([
      { seq: 3, timestamp: expect.any(String), type: 'deployment.started', summary: 'to 2 pods', correlation_id: 'c9' },
    ]);
    w.destroy();
    await w.ended;
    await eventually(() => state.eventStats().watchers === 0, { timeoutMs: 500, what: 'the watcher to be dropped' });
    expect(state.eventStats().watchers).toBe(0);
  });

  it('speaks Server-Sent Events and resumes after Last-Event-ID (or since) without loss', async () => {
    const { state, port } = await serve();
    for (let i = 1; i <= 5; i++) state.publishEvent(`e.${i}`);
    const sse = await watch(port, '/debug/vars/events?watch=1&since=0', { Accept: 'text/event-stream', 'Last-Event-ID': '3' });
    expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await sse.until('the replay', (t) => t.includes('id: 5\n'));
    expect(sse.text()).toMatch(/^id: 4\ndata: \{"seq":4,"timestamp":"[^"]+","type":"e\.4","summary":"e\.4"\}\n\nid: 5\ndata: /);
    state.publishEvent('e.6');
    await sse.until('the live event', (t) => t.includes('id: 6\n'));
    sse.destroy();
    const replay = await watch(port, '/debug/vars/events?watch=1&since=4');
    await replay.until('events after 4', (t) => t.includes('"seq":6'));
    expect(replay.lines().map((l) => (l as { seq: number }).seq)).toEqual([5, 6]);
    replay.destroy();
  });

  it('tells a stalled watcher how many events it missed, and never buffers them all', async () => {
    const { state, port } = await serve({}, { eventCapacity: 50 });
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /debug/vars/events?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 50));
    socket.pause(); // a client that stops reading
    const big = 'x'.repeat(20_000);
    let published = 0;
    // 40 MB of events, published in bursts, while the client reads nothing.
    for (let burst = 0; burst < 20; burst++) {
      for (let i = 0; i < 100; i++, published++) state.publishEvent('load.burst', big);
      await new Promise((r) => setImmediate(r));
    }
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.resume();
    state.publishEvent('load.done');
    await eventually(() => received.includes('load.done'), { timeoutMs: 10_000, intervalMs: 20, what: 'the event after the gap' }).finally(
      () => socket.destroy(),
    );
    expect(received).toContain('load.done');
    const gap = /\{"gap":\{"missed":(\d+),"resume_from":(\d+)\}\}/.exec(received);
    expect(gap).not.toBeNull();
    expect(Number(gap![1])).toBeGreaterThan(0);
    // What reached the client is a small part of what was published: the rest was never queued.
    expect(received.length).toBeLessThan((published * big.length) / 4);
  });

  it('ends every watch on close(), refuses watches beyond maxWatchers, and stays behind the access guard', async () => {
    const served = await serve({ watch: { maxWatchers: 2 } });
    const a = await watch(served.port, '/debug/vars/events?watch=1');
    const b = await watch(served.port, '/debug/vars/events?watch=1');
    const third = await getJson(served.port, '/debug/vars/events?watch=1');
    expect(third).toEqual({ status: 503, body: { error: 'too many event watches open (2); try again later' } });
    await served.router.close();
    await Promise.all([a.ended, b.ended]);
    expect(served.state.eventStats().watchers).toBe(0);

    const guarded = await serve({}, {}, createAccessGuard({ token: 'secret-token-123' }));
    expect((await getJson(guarded.port, '/debug/vars/events?watch=1')).status).toBe(401);
    const ok = await watch(guarded.port, '/debug/vars/events?watch=1', { Authorization: 'Bearer secret-token-123' });
    expect(ok.status).toBe(200);
    ok.destroy();
    const off = await serve({ debug: false });
    expect((await getJson(off.port, '/debug/vars/events?watch=1')).status).toBe(404);
  });
});
