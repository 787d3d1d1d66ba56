import { Console } from 'node:console';
import { Session } from 'node:inspector/promises';
import { Writable } from 'node:stream';
import { createPprofRouter } from '../../lib/pprof';
import { resolvePprofOptions, type PprofOptions } from '../../lib/pprof/options';
import {
  DEFAULT_TRACE_CATEGORIES,
  MAX_CATEGORY_ITEMS,
  TRACE_CATEGORIES,
  TraceCategoryError,
  isTracing,
  parseTraceCategories,
  traceCategories,
} from '../../lib/pprof/trace';
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

interface TraceBody {
  traceEvents: TraceEvent[];
  truncated?: string;
}

const ALLOWED = `allowed: ${TRACE_CATEGORIES.join(', ')}`;

/** Whether a non-metadata event belongs to one of `categories`. */
function inCategories(event: TraceEvent, categories: readonly string[]): boolean {
  return event.ph === 'M' || event.cat.split(',').some((c) => categories.includes(c));
}

/**
 * Keeps the event loop busy with timers and immediates until the returned function is called, at a
 * bounded rate: every millisecond a chain of 8 immediates (each runs on a turn of its own). A loop
 * that re-arms an immediate as fast as it can records more events the faster the machine is, and
 * passed the default 100 000-event limit within a second on an idle CI machine.
 */
function busyLoop(): () => void {
  const chain = (left: number): void => {
    if (left > 0) setImmediate(() => chain(left - 1));
  };
  const timer = setInterval(() => chain(8), 1);
  return () => clearInterval(timer);
}

describe('trace endpoint, off by default', () => {
  let pprof: PprofServer;
  beforeAll(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false });
  });
  afterAll(() => pprof.close());

  it.each(['', '?seconds=1', '?seconds=999', '?categories=node.async_hooks', '?categories=,,'])(
    'answers /trace%s with a JSON 404 that says how to turn it on, before reading the query',
    async (query) => {
      for (const method of ['GET', 'HEAD']) {
        const res = await request(`${pprof.base}/trace${query}`, { method });
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        if (method === 'GET') {
          expect(String(res.json().error)).toMatch(/^the trace endpoint is off: .*pprof option trace: true/);
        }
      }
      expect(isTracing()).toBe(false);
    },
  );

  it('says so on the index, with the measured cost and how to turn it on', async () => {
    const json = (await request(`${pprof.base}/?format=json`)).json<{ trace: Record<string, unknown> }>();
    expect(json.trace).toEqual({
      enabled: false,
      enable: 'pprof option trace: true (or trace: { maxSeconds, maxEvents, maxBytes })',
      categories: [...TRACE_CATEGORIES],
      defaultCategories: [...DEFAULT_TRACE_CATEGORIES],
      cost: expect.stringMatching(/stall/),
    });
    const html = (await request(`${pprof.base}/`)).text;
    expect(html).toContain('Trace: off (the host turns it on with pprof option trace: true)');
  });
});

describe('trace endpoint, turned on', () => {
  let pprof: PprofServer;
  beforeAll(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false, trace: { maxSeconds: 5 } });
  });
  afterAll(() => pprof.close());

  it('records the event loop as Chrome trace event JSON over ?seconds=N, in the default categories only', async () => {
    const stop = busyLoop();
    let res;
    try {
      res = await request(`${pprof.base}/trace?seconds=1`);
    } finally {
      stop();
    }
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="trace.json"');
    const body = res.json<TraceBody>();
    expect(body.truncated).toBeUndefined();
    const { traceEvents } = body;
    expect(traceEvents.length).toBeGreaterThan(10);
    for (const event of traceEvents) {
      expect(typeof event.name).toBe('string');
      expect(typeof event.ph).toBe('string');
      expect(typeof event.pid).toBe('number');
      expect(typeof event.ts).toBe('number');
    }
    const names = new Set(traceEvents.map((e) => e.name));
    expect(names.has('RunTimers') || names.has('CheckImmediate')).toBe(true);
    expect(traceEvents.filter((e) => !inCategories(e, DEFAULT_TRACE_CATEGORIES))).toEqual([]);
    // Node repeats its metadata with every flush; a trace recorded in many windows keeps one of each.
    const metadata = traceEvents.filter((e) => e.ph === 'M').map((e) => `${e.pid}:${e.tid}:${e.name}`);
    expect(metadata.length).toBeGreaterThan(0);
    expect(new Set(metadata).size).toBe(metadata.length);
  });

  it('traces the categories asked for, trimmed and without duplicates', async () => {
    const res = await request(`${pprof.base}/trace?seconds=1&categories=${encodeURIComponent(' node.console , node.console,v8')}`);
    expect(res.status).toBe(200);
    const { traceEvents } = res.json<TraceBody>();
    expect(traceEvents.filter((e) => !inCategories(e, ['node.console', 'v8']))).toEqual([]);
  });

  it.each([
    ['node.async_hooks', /^query parameter "categories": category "node\.async_hooks" is refused: it records an event per promise/],
    ['NODE.ASYNC_HOOKS', /category "NODE\.ASYNC_HOOKS" is refused/],
    ['%20node.async_hooks%09', /category "node\.async_hooks" is refused/],
    ['node.environment,v8,node.async_hooks', /category "node\.async_hooks" is refused/],
    ['node', /category "node" is refused: it turns on every node\.\* category, node\.async_hooks included/],
    ['node.promises.rejections', /category "node\.promises\.rejections" is refused/],
    ['node.async_hooks.promise', /category "node\.async_hooks\.promise" is refused/],
    ['Node.Environment', /unknown or not allowed category "Node\.Environment" \(names are case-sensitive\)/],
    ['node.fs.sync', /unknown or not allowed category "node\.fs\.sync"/],
    ['disabled-by-default-v8.cpu_profiler', /unknown or not allowed category/],
    ['', /name at least one category/],
    ['%20', /name at least one category/],
    [',', /item 1 is empty/],
    ['node.perf,,v8', /item 2 is empty/],
    ['node.perf,', /item 2 is empty/],
    [Array.from({ length: MAX_CATEGORY_ITEMS + 1 }, () => 'v8').join(','), new RegExp(`at most ${MAX_CATEGORY_ITEMS} categories`)],
    ['x'.repeat(10_000), /unknown or not allowed category "x{64}…"/],
  ])('refuses ?categories=%s with a 400 naming the problem, without tracing', async (categories, message) => {
    const res = await request(`${pprof.base}/trace?seconds=1&categories=${categories}`);
    expect(res.status).toBe(400);
    const error = String(res.json().error);
    expect(error).toMatch(message);
    expect(error.length).toBeLessThan(500);
    expect(isTracing()).toBe(false);
  });

  it('refuses categories given twice or in bracket form', async () => {
    for (const query of ['categories=v8&categories=node.async_hooks', 'categories[]=v8']) {
      const res = await request(`${pprof.base}/trace?${query}`);
      expect(res.status).toBe(400);
      expect(String(res.json().error)).toContain('query parameter "categories" must be given once');
    }
  });

  it('limits ?seconds= to the trace option maxSeconds, not the CPU profile limit', async () => {
    for (const seconds of ['0', '6', '300', 'abc']) {
      const res = await request(`${pprof.base}/trace?seconds=${seconds}`);
      expect(res.status).toBe(400);
      expect(String(res.json().error)).toMatch(/^query parameter "seconds" must be an integer from 1 to 5, got /);
    }
  });

  it('answers HEAD with the headers of a trace, without recording one', async () => {
    const res = await request(`${pprof.base}/trace?seconds=5`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="trace.json"');
    expect(isTracing()).toBe(false);
  });

  it('shows its limits on the index', async () => {
    const json = (await request(`${pprof.base}/?format=json`)).json<{ trace: Record<string, unknown> }>();
    expect(json.trace).toEqual({
      enabled: true,
      inProgress: false,
      maxSeconds: 5,
      maxEvents: 100_000,
      maxBytes: 32 * 1024 * 1024,
      categories: [...TRACE_CATEGORIES],
      defaultCategories: [...DEFAULT_TRACE_CATEGORIES],
      cost: expect.stringMatching(/stall/),
    });
    expect((await request(`${pprof.base}/`)).text).toContain('Trace: on, at most 5 s (?seconds=N, default 1), 100000 events');
  });

  it('runs one at a time (503 with Retry-After), and a client that leaves stops it', async () => {
    const controller = new AbortController();
    const first = request(`${pprof.base}/trace?seconds=5`, { signal: controller.signal, timeoutMs: 10_000 }).catch(() => undefined);
    await eventually(() => isTracing() || undefined, { what: 'the first trace to start' });
    const second = await request(`${pprof.base}/trace?seconds=1`);
    expect(second.status).toBe(503);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(0);
    controller.abort();
    await first;
    // Tracing stopped with the client: a new trace starts well before the first one's 5 s.
    const status = await eventually(
      async () => {
        const { status } = await request(`${pprof.base}/trace?seconds=1`);
        return status === 503 ? undefined : status;
      },
      { timeoutMs: 2000, intervalMs: 50, what: 'a new trace to be accepted' },
    );
    expect(status).toBe(200);
  });

  it('refuses to trace beside another tracer in the process (409), whose events it would carry', async () => {
    const other = new Session();
    other.connect();
    try {
      await other.post('NodeTracing.start', { traceConfig: { includedCategories: ['node.async_hooks'] } });
      const res = await request(`${pprof.base}/trace?seconds=1`);
      expect(res.status).toBe(409);
      expect(String(res.json().error)).toMatch(/^trace events are already being recorded in this process \(categories node\.async_hooks\)/);
    } finally {
      await other.post('NodeTracing.stop');
      other.disconnect();
    }
    expect(isTracing()).toBe(false);
  });

  it('closing the router stops a trace in progress', async () => {
    const own = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false, trace: true });
    const answer = request(`${own.base}/trace?seconds=10`, { timeoutMs: 10_000 }).catch((err: Error) => err);
    await eventually(() => isTracing() || undefined, { what: 'the trace to start' });
    await own.close();
    await answer;
    expect(isTracing()).toBe(false);
  });
});

describe('trace limits', () => {
  it('stops at maxEvents and says so in the answer', async () => {
    const pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false, trace: { maxEvents: 1000 } });
    const stop = busyLoop();
    try {
      const res = await request(`${pprof.base}/trace?seconds=10`, { timeoutMs: 20_000 });
      expect(res.status).toBe(200);
      const body = res.json<TraceBody>();
      expect(body.traceEvents.length).toBeLessThanOrEqual(1000);
      expect(body.truncated).toBe('stopped early: the trace reached its limit of 1000 events (pprof option trace.maxEvents)');
    } finally {
      stop();
      await pprof.close();
    }
  });

  it('stops at maxBytes and says so, the events kept within it', async () => {
    const pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false, trace: { maxBytes: 64 * 1024 } });
    // console.count records an event per call; long labels make large events.
    const counter = new Console(new Writable({ write: (_chunk, _encoding, done: () => void) => done() }));
    let n = 0;
    const timer = setInterval(() => {
      for (let i = 0; i < 20; i++) counter.count(`${'label-'.repeat(100)}${n++ % 50}`);
    }, 2);
    try {
      const res = await request(`${pprof.base}/trace?seconds=10&categories=node.console`, { timeoutMs: 20_000 });
      expect(res.status).toBe(200);
      const body = res.json<TraceBody>();
      expect(body.truncated).toBe('stopped early: the trace reached its limit of 65536 bytes of events (pprof option trace.maxBytes)');
      expect(body.traceEvents.some((e) => e.name.startsWith('count::label-'))).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(body.traceEvents))).toBeLessThanOrEqual(64 * 1024);
    } finally {
      clearInterval(timer);
      await pprof.close();
    }
  });
});

describe('parseTraceCategories', () => {
  const available = TRACE_CATEGORIES.filter((c) => c !== 'node.console');

  it('trims items and merges duplicates, keeping the first order', () => {
    expect(parseTraceCategories(' v8 ,node.perf,v8 ', available)).toEqual(['v8', 'node.perf']);
  });

  it('refuses an allowed category this Node.js does not know', () => {
    expect(() => parseTraceCategories('v8,node.console', available)).toThrow(
      new TraceCategoryError(`category "node.console" is not available in Node.js ${process.version}`),
    );
  });

  it('names the allowed categories in every refusal', () => {
    for (const text of ['node.async_hooks', 'bogus', ',']) {
      expect(() => parseTraceCategories(text, available)).toThrow(ALLOWED);
    }
  });

  it('offers only categories this Node.js knows', async () => {
    const known = await traceCategories();
    for (const category of TRACE_CATEGORIES) expect(known).toContain(category);
  });
});

describe('pprof option trace', () => {
  const resolve = (trace: unknown): unknown => resolvePprofOptions({ trace } as PprofOptions, {}).trace;

  it('is off unless turned on; true takes the default limits, an object its own', () => {
    expect(resolve(undefined)).toBe(false);
    expect(resolve(false)).toBe(false);
    const defaults = { maxSeconds: 10, maxEvents: 100_000, maxBytes: 32 * 1024 * 1024 };
    expect(resolve(true)).toEqual(defaults);
    expect(resolve({})).toEqual(defaults);
    expect(resolve({ maxSeconds: 60, maxEvents: 1000, maxBytes: 65536 })).toEqual({ maxSeconds: 60, maxEvents: 1000, maxBytes: 65536 });
  });

  it.each([
    ['yes', 'createPprofRouter: trace must be true, false or an object of limits { maxSeconds, maxEvents, maxBytes }, got "yes"'],
    [1, 'got 1'],
    [null, 'got null'],
    [[], 'got an array'],
    [{ maxSecs: 5 }, 'createPprofRouter: unknown option "trace.maxSecs" (did you mean "maxSeconds"?); known options of trace'],
    [{ maxEvent: 5000 }, '(did you mean "maxEvents"?)'],
    [{ maxSeconds: 61 }, 'createPprofRouter: trace.maxSeconds must be an integer from 1 to 60, got 61'],
    [{ maxSeconds: 0 }, 'createPprofRouter: trace.maxSeconds must be an integer from 1 to 60, got 0'],
    [{ maxSeconds: 1.5 }, 'createPprofRouter: trace.maxSeconds must be an integer'],
    [{ maxSeconds: '5' }, 'createPprofRouter: trace.maxSeconds must be an integer from 1 to 60, got "5"'],
    [{ maxEvents: 999 }, 'createPprofRouter: trace.maxEvents must be an integer from 1000 to 1,000,000, got 999'],
    [{ maxBytes: 1024 }, 'createPprofRouter: trace.maxBytes must be an integer from 65536 to 268,435,456, got 1024'],
  ])('refuses trace: %j at creation', (trace, message) => {
    expect(() => resolve(trace)).toThrow(message);
    expect(() => createPprofRouter(undefined, { trace } as PprofOptions)).toThrow(message);
  });

  it('suggests the option name for a typo', () => {
    expect(() => resolvePprofOptions({ trcae: true } as PprofOptions, {})).toThrow('(did you mean "trace"?)');
  });
});

describe('trace collection cost', () => {
  // Not a timing assertion: the count of windows shows that a trace is flushed in many small
  // pieces rather than once at the end, which is what keeps each flush short (benchmark 13).
  it('flushes a busy trace in many windows, not once at the end', async () => {
    const pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false, trace: true });
    let stops = 0;
    const post = Session.prototype.post;
    const spy = jest.spyOn(Session.prototype, 'post').mockImplementation(function (this: Session, method: string, params?: object) {
      if (method === 'NodeTracing.stop') stops += 1;
      return (post as (this: Session, method: string, params?: object) => Promise<unknown>).call(this, method, params);
    } as typeof Session.prototype.post);
    const stop = busyLoop();
    try {
      const res = await request(`${pprof.base}/trace?seconds=2`);
      expect(res.status).toBe(200);
      expect(stops).toBeGreaterThan(4);
    } finally {
      stop();
      spy.mockRestore();
      await pprof.close();
    }
  });
});
