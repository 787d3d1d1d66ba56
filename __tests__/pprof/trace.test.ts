import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { startPprofServer, type PprofServer } from './helpers';

interface TraceEvent {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  pid: number;
  tid: number;
}

describe('trace', () => {
  let pprof: PprofServer;
  beforeAll(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', maxProfileSeconds: 5 });
  });
  afterAll(async () => {
    await pprof.close();
  });

  it('records the event loop as Chrome trace event JSON over ?seconds=N', async () => {
    // Some event-loop activity to record: timers and immediates.
    const timer = setInterval(() => setImmediate(() => undefined), 5);
    let res;
    try {
      res = await request(`${pprof.base}/trace?seconds=1`);
    } finally {
      clearInterval(timer);
    }
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="trace.json"');
    const { traceEvents } = res.json<{ traceEvents: TraceEvent[] }>();
    expect(traceEvents.length).toBeGreaterThan(10);
    for (const event of traceEvents) {
      expect(typeof event.name).toBe('string');
      expect(typeof event.ph).toBe('string');
      expect(typeof event.pid).toBe('number');
    }
    const names = new Set(traceEvents.map((e) => e.name));
    expect(names.has('RunTimers') || names.has('CheckImmediate')).toBe(true);
    // The default categories leave out async_hooks (an event per promise).
    expect(traceEvents.some((e) => e.cat.includes('node.async_hooks'))).toBe(false);
  });

  it('traces the categories asked for, and refuses unknown ones', async () => {
    const res = await request(`${pprof.base}/trace?seconds=1&categories=node.async_hooks`);
    expect(res.status).toBe(200);
    const { traceEvents } = res.json<{ traceEvents: TraceEvent[] }>();
    expect(
      traceEvents
        .filter((e) => e.name !== 'process_name' && e.name !== 'thread_name' && e.cat !== '__metadata')
        .every((e) => e.cat.includes('node.async_hooks')),
    ).toBe(true);
    const bad = await request(`${pprof.base}/trace?categories=node.environment,bogus`);
    expect(bad.status).toBe(400);
    expect(String(bad.json().error)).toMatch(/categories.*node\.environment.*got "bogus"/);
    expect((await request(`${pprof.base}/trace?seconds=6`)).status).toBe(400);
  });

  it('runs one at a time (409 with Retry-After), and a client that leaves stops it', async () => {
    const controller = new AbortController();
    const first = request(`${pprof.base}/trace?seconds=5`, { signal: controller.signal, timeoutMs: 10_000 }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await request(`${pprof.base}/trace?seconds=1`);
    expect(second.status).toBe(409);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
    controller.abort();
    await first;
    // Tracing stopped with the client: a new trace starts well before the first one's 5 s.
    const status = await eventually(
      async () => {
        const { status } = await request(`${pprof.base}/trace?seconds=1`);
        return status === 409 ? undefined : status;
      },
      { timeoutMs: 2000, intervalMs: 50, what: 'a new trace to be accepted' },
    );
    expect(status).toBe(200);
  });
});
