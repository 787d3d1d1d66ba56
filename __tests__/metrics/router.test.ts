import { gunzipSync } from 'node:zlib';
import express from 'express';
import { Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import { createControllerMetrics, createMetricsRouter, MetricCollectError } from '../../lib/metrics';
import { family, parseExposition, sampleValue } from './helpers/exposition-parser';
import { listen, request, requestApp, type Listening } from '../helpers/http';
import { metricsApp } from './helpers/server';

const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
/** What the router answers: the format's content type and the name escaping (names are legacy-valid: underscores). */
const TEXT_ANSWER = `${TEXT_CONTENT_TYPE}; escaping=underscores`;
const OPENMETRICS_ANSWER = `${OPENMETRICS_CONTENT_TYPE}; escaping=underscores`;

/**
 * A registry with the controller metrics, driven a little so the output is not all zeros. The
 * leader clock is frozen so two renderings are byte-identical.
 */
function controllerRegistry(): Registry {
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, undefined, { now: () => 1000 });
  metrics.recordReconciliation(0.1, true);
  metrics.setLeader(true);
  return registry;
}

describe('GET /metrics', () => {
  it('serves registry.metrics() with the registry content type, never cached', async () => {
    const registry = controllerRegistry();
    const res = await requestApp(metricsApp(registry), '/metrics', { headers: { 'Accept-Encoding': 'identity' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(TEXT_ANSWER);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    const exposition = parseExposition(res.text);
    expect(exposition.eof).toBe(false);
    expect(family(exposition, 'ctl_reconciliation_total').type).toBe('counter');
    expect(sampleValue(exposition, 'ctl_reconciliation_total')).toBe(1);
    expect(sampleValue(exposition, 'ctl_leader_election_is_leader')).toBe(1);
  });

  it('serves at a configured path and only there', async () => {
    const app = metricsApp(controllerRegistry(), { path: '/internal/prom' });
    expect((await requestApp(app, '/internal/prom')).status).toBe(200);
    expect((await requestApp(app, '/metrics')).status).toBe(404);
  });

  it('works mounted under a prefix', async () => {
    const app = express();
    app.use('/ops', createMetricsRouter(controllerRegistry()));
    const res = await requestApp(app, '/ops/metrics');
    expect(res.status).toBe(200);
    expect(sampleValue(parseExposition(res.text), 'ctl_reconciliation_total')).toBe(1);
  });

  it('validates its options at creation', () => {
    const registry = new Registry();
    expect(() => createMetricsRouter(undefined as unknown as Registry)).toThrow(
      /createMetricsRouter: the first argument must be a Registry/,
    );
    expect(() => createMetricsRouter(registry, { path: 'metrics' })).toThrow(
      new TypeError('createMetricsRouter: path must be a string starting with "/" (for example "/metrics"), got "metrics"'),
    );
    expect(() => createMetricsRouter(registry, { compression: 'gzip' as unknown as boolean })).toThrow(
      new TypeError('createMetricsRouter: compression must be true or false, got "gzip"'),
    );
    expect(() => createMetricsRouter(registry, { onError: 'log' as unknown as () => void })).toThrow(
      new TypeError('createMetricsRouter: onError must be a function (for example (err) => logger.error(err)), got "log"'),
    );
    expect(() => createMetricsRouter(registry, null as unknown as object)).toThrow(/options must be an object/);
  });
});

describe('compression', () => {
  let server: Listening;
  let registry: Registry;
  beforeAll(async () => {
    registry = controllerRegistry();
    const app = express();
    app.use(createMetricsRouter(registry));
    app.use('/plain', createMetricsRouter(registry, { compression: false }));
    server = await listen(app);
  });
  afterAll(() => server.close());

  it('gzips when Accept-Encoding allows gzip, and the body round-trips to the exposition text', async () => {
    const expected = await registry.metrics();
    for (const acceptEncoding of ['gzip', 'deflate, gzip;q=0.5', '*', 'gzip, br']) {
      const res = await request(`${server.origin}/metrics`, { headers: { 'Accept-Encoding': acceptEncoding } });
      expect({ acceptEncoding, status: res.status, encoding: res.headers['content-encoding'] }).toEqual({
        acceptEncoding,
        status: 200,
        encoding: 'gzip',
      });
      expect(res.headers['vary']).toBe('Accept, Accept-Encoding');
      expect(res.headers['content-type']).toBe(TEXT_ANSWER);
      expect(res.headers['content-length']).toBe(String(res.body.length));
      expect(res.body.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      expect(gunzipSync(res.body).toString('utf8')).toBe(expected);
    }
  });

  it('sends identity when gzip is not acceptable or compression is off', async () => {
    const expected = await registry.metrics();
    const cases: Array<[string, Record<string, string>]> = [
      ['/metrics', {}],
      ['/metrics', { 'Accept-Encoding': 'gzip;q=0' }],
      ['/metrics', { 'Accept-Encoding': 'br' }],
      ['/plain/metrics', { 'Accept-Encoding': 'gzip' }],
    ];
    for (const [path, headers] of cases) {
      const res = await request(`${server.origin}${path}`, { headers });
      expect({ path, headers, encoding: res.headers['content-encoding'] }).toEqual({ path, headers, encoding: undefined });
      expect(res.body.toString('utf8')).toBe(expected);
    }
  });
});

describe('exposition format', () => {
  it('serves OpenMetrics with its content type when the registry is an OpenMetrics registry', async () => {
    const registry = new Registry<OpenMetricsContentType>();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const metrics = createControllerMetrics(registry);
    metrics.recordDeployment(0.2, false);
    const app = metricsApp(registry);

    for (let i = 0; i < 2; i += 1) {
      const res = await requestApp(app, '/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(OPENMETRICS_ANSWER);
      const exposition = parseExposition(res.text);
      expect(exposition.eof).toBe(true);
      // OpenMetrics names a counter family without `_total` and its sample with it.
      expect(family(exposition, 'ctl_deployment').type).toBe('counter');
      expect(sampleValue(exposition, 'ctl_deployment_total')).toBe(1);
      expect(sampleValue(exposition, 'ctl_deployment_errors_total')).toBe(1);
      expect(family(exposition, 'ctl_deployment_duration_seconds').type).toBe('histogram');
      expect(family(exposition, 'ctl_resource_count').type).toBe('gauge');
      expect(exposition.families.size).toBe(15);
    }
  });

  it('answers OpenMetrics when the scraper asks for it, without switching the text registry', async () => {
    const registry = controllerRegistry();
    const app = metricsApp(registry);
    const before = await registry.metrics();
    for (let i = 0; i < 2; i += 1) {
      const res = await requestApp(app, '/metrics', {
        headers: { Accept: 'application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5' },
      });
      expect(res.headers['content-type']).toBe(OPENMETRICS_ANSWER);
      expect(family(parseExposition(res.text), 'ctl_reconciliation').type).toBe('counter');
    }
    expect(registry.contentType).toBe(TEXT_CONTENT_TYPE);
    expect(await registry.metrics()).toBe(before);
    expect(family(parseExposition(await registry.metrics()), 'ctl_reconciliation_total').type).toBe('counter');
  });
});

/**
 * Registers `host_cache_entries`, whose collect() answers `failure()` while `failing()` says so,
 * and sets it to `value` otherwise.
 */
function flakyGauge(registry: Registry, failing: () => boolean, failure: () => unknown, value: number): void {
  new Gauge({
    name: 'host_cache_entries',
    help: 'A host metric whose collect can fail',
    registers: [registry],
    collect() {
      if (failing()) return failure() as void;
      this.set(value);
    },
  });
}

describe('failing collect', () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('lb-pod cache unavailable');
      },
    ],
    ['rejects', () => Promise.reject(new Error('lb-pod cache unavailable'))],
  ])('leaves out a family whose collect() %s, serves the rest, reports it, and reads it again next scrape', async (_label, failure) => {
    const registry = controllerRegistry();
    let failing = true;
    flakyGauge(registry, () => failing, failure, 3);
    const errors: unknown[] = [];
    const app = metricsApp(registry, {
      onError: (err) => {
        errors.push(err);
        throw new Error('broken logger');
      },
    });

    for (const format of [TEXT_CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE]) {
      const served = await requestApp(app, '/metrics', { headers: { 'Accept-Encoding': 'gzip', Accept: format } });
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toBe(`${format}; escaping=underscores`);
      const exposition = parseExposition(gunzipSync(served.body).toString('utf8'));
      expect(exposition.families.has('host_cache_entries')).toBe(false);
      expect(sampleValue(exposition, 'ctl_reconciliation_total')).toBe(1);
      expect(exposition.eof).toBe(format === OPENMETRICS_CONTENT_TYPE);
    }
    expect(errors).toHaveLength(2);
    for (const error of errors) {
      expect(error).toBeInstanceOf(MetricCollectError);
      expect(error).toMatchObject({
        family: 'host_cache_entries',
        message: 'collecting metric "host_cache_entries" failed: lb-pod cache unavailable',
        cause: new Error('lb-pod cache unavailable'),
      });
    }

    failing = false;
    const recovered = await requestApp(app, '/metrics');
    expect(recovered.status).toBe(200);
    const exposition = parseExposition(recovered.text);
    expect(sampleValue(exposition, 'host_cache_entries')).toBe(3);
    expect(sampleValue(exposition, 'ctl_reconciliation_total')).toBe(1);
    expect(errors).toHaveLength(2);
  });

  it('serves a valid exposition with every family failing (text ends with its newline, OpenMetrics with # EOF)', async () => {
    const registry = new Registry();
    for (const name of ['first_broken', 'second_broken']) {
      new Gauge({
        name,
        help: 'fails',
        registers: [registry],
        collect() {
          throw new Error(`${name} down`);
        },
      });
    }
    const errors: unknown[] = [];
    const app = metricsApp(registry, { onError: (err) => errors.push(err) });
    const text = await requestApp(app, '/metrics', { headers: { Accept: TEXT_CONTENT_TYPE } });
    expect([text.status, text.text]).toEqual([200, '\n']);
    const om = await requestApp(app, '/metrics', { headers: { Accept: OPENMETRICS_CONTENT_TYPE } });
    expect([om.status, om.text]).toEqual([200, '# EOF\n']);
    expect(errors.map((e) => (e as MetricCollectError).family)).toEqual(['first_broken', 'second_broken', 'first_broken', 'second_broken']);
  });

  it('without onError, warns once per family that starts failing, and again after it recovered', async () => {
    const registry = controllerRegistry();
    let failing = true;
    flakyGauge(
      registry,
      () => failing,
      () => {
        throw new Error('cache down');
      },
      1,
    );
    const warnings: Array<[string, unknown]> = [];
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation(((message: string, options: unknown) => {
      warnings.push([message, options]);
    }) as typeof process.emitWarning);
    try {
      const app = metricsApp(registry);
      for (let i = 0; i < 3; i += 1) expect((await requestApp(app, '/metrics')).status).toBe(200);
      expect(warnings).toEqual([
        ['collecting metric "host_cache_entries" failed: cache down', { type: 'MetricCollectError', code: 'METRIC_COLLECT_FAILED' }],
      ]);
      failing = false;
      expect((await requestApp(app, '/metrics')).status).toBe(200);
      failing = true;
      expect((await requestApp(app, '/metrics')).status).toBe(200);
      expect(warnings).toHaveLength(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('leaves out only the family whose host state callback threw, naming the callback, then recovers', async () => {
    const registry = new Registry();
    let broken = true;
    createControllerMetrics(registry, {
      resourceCounts: () => {
        if (broken) throw new Error('informer not synced');
        return { 'lb-pods': 2 };
      },
      eventStats: () => ({ published: 4, subscribers: 0 }),
    });
    const errors: unknown[] = [];
    const app = metricsApp(registry, { onError: (err) => errors.push(err) });
    const failed = await requestApp(app, '/metrics');
    expect(failed.status).toBe(200);
    const partial = parseExposition(failed.text);
    expect(partial.families.has('ctl_resource_count')).toBe(false);
    expect(sampleValue(partial, 'ctl_events_published_total')).toBe(4);
    expect((errors as Error[]).map((e) => e.message)).toEqual([
      'collecting metric "ctl_resource_count" failed: state.resourceCounts() threw: informer not synced',
    ]);
    broken = false;
    const recovered = await requestApp(app, '/metrics');
    expect(sampleValue(parseExposition(recovered.text), 'ctl_resource_count', { type: 'lb-pods' })).toBe(2);
  });
});

describe('methods', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])('answers %s with 405, Allow: GET, HEAD and a JSON error', async (method) => {
    const server = await listen(metricsApp(controllerRegistry()));
    try {
      const res = await request(`${server.origin}/metrics`, { method });
      expect(res.status).toBe(405);
      expect(res.headers['allow']).toBe('GET, HEAD');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.body.toString('utf8'))).toEqual({
        error: `method ${method} not allowed on /metrics; this endpoint is read-only (use GET or HEAD)`,
      });
    } finally {
      await server.close();
    }
  });

  it('answers HEAD with the headers of a GET and no body', async () => {
    const registry = controllerRegistry();
    const server = await listen(metricsApp(registry));
    try {
      for (const headers of [{}, { 'Accept-Encoding': 'gzip' }] as Record<string, string>[]) {
        const get = await request(`${server.origin}/metrics`, { headers });
        const head = await request(`${server.origin}/metrics`, { method: 'HEAD', headers });
        expect(head.status).toBe(200);
        expect(head.body.length).toBe(0);
        for (const name of ['content-type', 'content-encoding', 'content-length', 'cache-control', 'vary']) {
          expect({ name, value: head.headers[name] }).toEqual({ name, value: get.headers[name] });
        }
        expect(Number(head.headers['content-length'])).toBe(get.body.length);
      }
    } finally {
      await server.close();
    }
  });
});

describe('scrape timeout', () => {
  it('answers 503 while a collect() has not settled, tells onError, does not call it again meanwhile, and the scrape after it settles works', async () => {
    const registry = new Registry();
    let release!: () => void;
    let calls = 0;
    new Gauge({
      name: 'hanging_gauge',
      help: 'collect() whose first call settles only when released',
      registers: [registry],
      collect() {
        calls += 1;
        return calls === 1 ? new Promise<void>((resolve) => (release = resolve)) : undefined;
      },
    });
    const errors: unknown[] = [];
    const app = express();
    app.use(createMetricsRouter(registry, { scrapeTimeoutMs: 200, onError: (err) => errors.push(err) }));
    const started = Date.now();
    const res = await requestApp(app, '/metrics');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({
      error: "collecting metrics timed out after 200 ms (a metric's collect() did not settle; option scrapeTimeoutMs)",
    });
    expect(res.headers['retry-after']).toBe('1');
    expect(errors).toHaveLength(1);
    // Still pending: the next scrape waits on that same collect() (and times out) instead of calling it again.
    expect((await requestApp(app, '/metrics')).status).toBe(503);
    expect(calls).toBe(1);
    release();
    const next = await requestApp(app, '/metrics');
    expect(next.status).toBe(200);
    expect(next.text).toContain('hanging_gauge 0');
    expect(calls).toBe(2);
  });
});
