import { createPprofRouter, isProfiling } from '../../lib/pprof';
import { PROFILER_ENV } from '../../lib/pprof/options';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { ADDON_LOADS, decodePprof, functionNames, sampleTypes, startPprofServer, stringAt, type PprofServer } from './helpers';

let pprof: PprofServer;
let port: string;
beforeAll(async () => {
  pprof = await startPprofServer({ profiler: 'inspector', maxProfileSeconds: 10, defaultProfileSeconds: 5 });
  port = new URL(pprof.base).port;
});
afterAll(() => pprof.close());

describe('index', () => {
  it('answers HTML by default, with links under the mount point and the backend and why', async () => {
    const res = await request(`${pprof.base}/`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = res.body.toString('utf8');
    for (const href of ['profile?seconds=5', 'heap?debug=1', 'goroutine?debug=1', 'block?debug=1', 'mutex?debug=1']) {
      expect(html).toContain(`href="/debug/pprof/${href}"`);
    }
    expect(html).toContain('CPU profiler: <b>inspector</b> &mdash; forced by option profiler: &#39;inspector&#39;.');
    expect(html).toContain('Node.js analog of goroutines');
    expect(html).toContain(
      'CPU sampling: every 10 ms (100 Hz) (option <code>cpuSamplingIntervalMicros</code>); starts are cheap: V8 walked the heap once, when the router was created',
    );
    expect(html).toContain('CPU profile from V8&#39;s sampling profiler (a sample every 10 ms (100 Hz))');
    expect(html).toContain('go tool pprof http://HOST:PORT/debug/pprof/profile?seconds=5');
  });

  it('is also served without the trailing slash', async () => {
    const res = await request(pprof.base);
    expect(res.status).toBe(200);
    expect(res.body.toString('utf8')).toContain('<h1>/debug/pprof/</h1>');
  });

  it.each([
    ['?format=json', {}],
    ['', { Accept: 'application/json' }],
  ])('answers JSON for %s %j', async (query, headers) => {
    const res = await request(`${pprof.base}/${query}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect((body.profiles as Array<{ name: string }>).map((p) => p.name)).toEqual([
      'profile',
      'heap',
      'allocs',
      'goroutine',
      'block',
      'trace',
      'mutex',
    ]);
    expect(body.profiler).toEqual({
      backend: 'inspector',
      reason: "forced by option profiler: 'inspector'",
      startCost:
        'starts are cheap: V8 walked the heap once, when the router was created, and a low-cost profile kept running since keeps its code log (option keepCodeLog)',
    });
    // @datadog/pprof's prebuilt addon covers every supported Node line: CI must read heap with it.
    expect(body.heap).toEqual({
      sampling: true,
      intervalBytes: 512 * 1024,
      samples: 'live',
      reader: '@datadog/pprof',
      readerReason: '@datadog/pprof loaded',
    });
    expect(body.cpu).toEqual({ defaultSeconds: 5, maxSeconds: 10, samplingIntervalMicros: 10_000, inProgress: false });
  });

  it('rejects an unknown index format', async () => {
    const res = await request(`${pprof.base}/?format=xml`);
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error: 'query parameter "format" must be html or json for the index, got "xml"' });
  });
});

describe('goroutine (active resources)', () => {
  it('answers pprof with one location per resource kind', async () => {
    const res = await request(`${pprof.base}/goroutine`);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="goroutine.pb.gz"');
    const profile = decodePprof(res.body);
    expect(sampleTypes(profile)).toEqual(['resources/count']);
    // The listening server of this very test is an active TCPServerWrap.
    expect(functionNames(profile)).toContain('TCPServerWrap');
    expect(profile.sample.every((s) => s.locationId.length === 1 && Number(s.value[0]) >= 1)).toBe(true);
  });

  it('debug=1 answers counts per kind as text', async () => {
    const res = await request(`${pprof.base}/goroutine?debug=1`);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const text = res.body.toString('utf8');
    expect(text).toMatch(/^active resources profile: total \d+\n/);
    expect(text).toMatch(/\n\d+ @ TCPServerWrap\n/);
    expect(text).not.toContain('# handles');
  });

  it('debug=2 adds every handle Node exposes', async () => {
    const text = (await request(`${pprof.base}/goroutine?debug=2`)).body.toString('utf8');
    expect(text).toContain(`Server listening on 127.0.0.1:${port}`);
    expect(text).toMatch(/# handles \(process\._getActiveHandles\(\)\): \d+/);
    expect(text).toMatch(/Socket 127\.0\.0\.1:\d+ -> 127\.0\.0\.1:\d+/);
  });
});

describe('block (event-loop delay)', () => {
  // The monitor measures once per 10 ms tick; wait until it has measured at least once.
  function blockTextOnceMeasured(): Promise<string> {
    return eventually(
      async () => {
        const text = (await request(`${pprof.base}/block?debug=1`)).text;
        if (!/\ncount=[1-9]/.test(text)) throw new Error(`not measured yet: ${text.slice(0, 200)}`);
        return text;
      },
      { intervalMs: 20, what: 'a first event-loop delay measurement' },
    );
  }

  it('debug=1 answers the delay percentiles since creation as text', async () => {
    const text = await blockTextOnceMeasured();
    expect(text).toMatch(/^--- event loop delay \(Node\.js analog of the block profile\):\n/);
    for (const key of ['min', 'mean', 'p50', 'p90', 'p99', 'max']) expect(text).toMatch(new RegExp(`\\n${key}=\\d+\\.\\d{3}ms\\n`));
    expect(text).toContain('resolution 10ms (subtracted: delay beyond it; an idle loop reads 0)');
    const utilization = Number(/\nutilization=(\d\.\d{4})\n/.exec(text)?.[1]);
    expect(utilization).toBeGreaterThanOrEqual(0);
    expect(utilization).toBeLessThanOrEqual(1);
  });

  it('reports delay net of the monitor resolution: a 60 ms block shows as at least 45 ms, an idle tick as less than the 10 ms resolution', async () => {
    await blockTextOnceMeasured();
    const until = performance.now() + 60;
    while (performance.now() < until) {
      // block the event loop
    }
    await new Promise((r) => setTimeout(r, 30));
    const text = (await request(`${pprof.base}/block?debug=1`)).body.toString('utf8');
    const read = (key: string): number => Number(new RegExp(`\\n${key}=(\\d+\\.\\d{3})ms\\n`).exec(text)?.[1]);
    expect(read('max')).toBeGreaterThanOrEqual(45);
    expect(read('min')).toBeLessThan(10);
  });

  it("answers pprof with Go's block sample types, cumulative values, no labels and the percentiles as comments", async () => {
    await blockTextOnceMeasured();
    const first = decodePprof((await request(`${pprof.base}/block`)).body);
    expect(sampleTypes(first)).toEqual(['contentions/count', 'delay/nanoseconds']);
    expect(functionNames(first)).toEqual(['(event loop delay)']);
    expect(first.sample).toHaveLength(1);
    // No labels: a continuous profiler matches samples by stack and labels to take differences.
    expect(first.sample[0].label).toEqual([]);
    const comments = first.comment.map((i) => stringAt(first, i));
    for (const key of ['p50', 'p90', 'p99', 'max', 'min', 'mean'])
      expect(comments).toContainEqual(expect.stringMatching(new RegExp(`^${key}=\\d+ns$`)));
    const until = performance.now() + 30;
    while (performance.now() < until) {
      // block the event loop
    }
    await new Promise((r) => setTimeout(r, 30));
    const second = decodePprof((await request(`${pprof.base}/block`)).body);
    const [count1, delay1] = first.sample[0].value.map(Number) as [number, number];
    const [count2, delay2] = second.sample[0].value.map(Number) as [number, number];
    expect(count1).toBeGreaterThan(0);
    expect(count2).toBeGreaterThan(count1);
    // The 30 ms block is in the difference (less the 10 ms the monitor expected to wait anyway).
    expect(delay2 - delay1).toBeGreaterThanOrEqual(15e6);
  });
});

describe('mutex', () => {
  it('answers a valid, empty profile', async () => {
    const profile = decodePprof((await request(`${pprof.base}/mutex`)).body);
    expect(sampleTypes(profile)).toEqual(['contentions/count', 'delay/nanoseconds']);
    expect(profile.sample).toHaveLength(0);
  });

  it('debug=1 says there is no mutex contention on Node', async () => {
    const res = await request(`${pprof.base}/mutex?debug=1`);
    expect(res.body.toString('utf8')).toMatch(/^--- mutex:\n# Node\.js has no mutex contention to report/);
  });
});

describe('HTTP contract', () => {
  it.each([
    ['profile?seconds=0', 'query parameter "seconds" must be an integer from 1 to 10, got 0'],
    ['profile?seconds=11', 'query parameter "seconds" must be an integer from 1 to 10, got 11'],
    ['profile?seconds=-1', 'query parameter "seconds" must be an integer from 1 to 10, got "-1"'],
    ['profile?seconds=1.5', 'query parameter "seconds" must be an integer from 1 to 10, got "1.5"'],
    ['profile?seconds=1&seconds=2', 'query parameter "seconds" must be given once, as a plain string'],
    ['profile?format=json', 'query parameter "format" must be one of pprof, cpuprofile for /profile, got "json"'],
    ['heap?debug=3', 'query parameter "debug" must be an integer from 0 to 2, got 3'],
    ['heap?debug=yes', 'query parameter "debug" must be an integer from 0 to 2, got "yes"'],
    ['heap?gc=2', 'query parameter "gc" must be an integer from 0 to 1, got 2'],
    ['heap?format=cpuprofile', 'query parameter "format" must be one of pprof, heapprofile for /heap, got "cpuprofile"'],
    [
      'heap?debug=1&format=pprof',
      'query parameters "debug" and "format" are alternatives for /heap: debug=1 or 2 selects the text form, format selects another one',
    ],
    [
      'goroutine?seconds=5',
      'query parameter "seconds" applies only to /profile, /trace, /heap and /allocs (a delta profile); /goroutine is a snapshot',
    ],
    ['heap?seconds=0', 'query parameter "seconds" must be an integer from 1 to 10, got 0'],
    ['heap?seconds=11', 'query parameter "seconds" must be an integer from 1 to 10, got 11'],
    [
      'heap?seconds=1&format=heapprofile',
      'a delta heap profile (?seconds=) is served as pprof or debug=1 text; heapprofile cannot hold a difference of two profiles',
    ],
    ['goroutine?format=heapprofile', 'query parameter "format" must be one of pprof for /goroutine, got "heapprofile"'],
  ])('answers 400 JSON for %s', async (path, message) => {
    const res = await request(`${pprof.base}/${path}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ error: message });
    expect(isProfiling()).toBe(false);
  });

  it.each(['POST', 'PUT', 'DELETE'])('answers 405 with Allow for %s', async (method) => {
    const res = await request(`${pprof.base}/profile`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(String(res.json().error)).toContain(`method ${method} not allowed`);
  });

  it.each(['threadcreate', 'heap/extra'])('answers 404 naming the available profiles for %s', async (path) => {
    const res = await request(`${pprof.base}/${path}`);
    expect(res.status).toBe(404);
    expect(String(res.json().error)).toContain('available: profile, heap, allocs, goroutine, block, mutex, trace');
  });

  it('answers HEAD /profile with the headers only, without recording anything', async () => {
    const res = await request(`${pprof.base}/profile?seconds=10`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-disposition']).toBe('attachment; filename="profile.pb.gz"');
    expect(res.body).toHaveLength(0);
    expect(isProfiling()).toBe(false);
  });

  it('still validates the query on HEAD', async () => {
    const res = await request(`${pprof.base}/profile?seconds=99`, { method: 'HEAD' });
    expect(res.status).toBe(400);
  });
});

describe('backend selection', () => {
  const saved = process.env[PROFILER_ENV];
  afterEach(() => {
    if (saved === undefined) delete process.env[PROFILER_ENV];
    else process.env[PROFILER_ENV] = saved;
  });

  it('auto picks the native addon when it loads, the inspector (saying why) when it does not', async () => {
    delete process.env[PROFILER_ENV];
    const router = createPprofRouter(undefined, { heapSamplingIntervalBytes: false });
    if (ADDON_LOADS) {
      expect(router.backend).toBe('v8-profiler-next');
      expect(router.backendReason).toBe('native addon v8-profiler-next loaded');
    } else {
      expect(router.backend).toBe('inspector');
      expect(router.backendReason).toMatch(/^v8-profiler-next failed to load \([\s\S]+\); fell back to node:inspector$/);
    }
    await router.close();
  });

  it('the environment variable forces the inspector', async () => {
    process.env[PROFILER_ENV] = 'inspector';
    const router = createPprofRouter(undefined, { heapSamplingIntervalBytes: false });
    expect(router.backend).toBe('inspector');
    expect(router.backendReason).toBe(`forced by ${PROFILER_ENV}=inspector`);
    await router.close();
  });

  it('an invalid option throws at creation', () => {
    expect(() => createPprofRouter(undefined, { maxProfileSeconds: -5 })).toThrow(TypeError);
  });
});
